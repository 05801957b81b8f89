//! Best-of-N (issue 31 point 5): `/fanout N` (or a digit in the fan-out
//! chooser) asks the server for N fresh copies of the focused agent, each
//! in a worktree and branch of its own, in a new window, with the same
//! model or one each from `--models`; once all are there the fan-out
//! sends them the prompt and the compare view opens. Taking one answer
//! merges its worktree and offers to close the other copies with their
//! worktrees and branches in one step (`app::take`).

use super::command::AppCommand;
use super::overlay::PendingBestOf;
use super::state::{App, Overlay};
use crate::protocol::edit::{NewPane, PaneEdit};

/// How `/fanout` reads its arguments.
const USAGE: &str = "/fanout N [--models M1,M2,…] [prompt]: N (2 to 9) copies of this agent";

impl App {
    /// `/fanout N [--models a,b] [prompt]`.
    pub(crate) fn best_of_command(&mut self, arg: &str) {
        let mut words = arg.split_whitespace();
        let Some(n) = words
            .next()
            .and_then(|w| w.parse::<usize>().ok())
            .filter(|n| (2..=9).contains(n))
        else {
            return self.refuse(USAGE.into());
        };
        let mut rest: Vec<&str> = words.collect();
        let mut models = Vec::new();
        if rest.first() == Some(&"--models") {
            let Some(list) = rest.get(1) else {
                return self.refuse(USAGE.into());
            };
            models = list
                .split(',')
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
                .collect();
            rest.drain(..2);
        }
        let prompt = Some(rest.join(" ")).filter(|p| !p.trim().is_empty());
        self.start_best_of(self.focus, n, &models, prompt);
    }

    /// Asks for `n` copies of pane `pane`'s agent.
    pub(crate) fn start_best_of(
        &mut self,
        pane: usize,
        n: usize,
        models: &[String],
        prompt: Option<String>,
    ) {
        let Some(p) = self.panes.get(pane) else {
            return;
        };
        if p.is_terminal() {
            return self.refuse("best-of-N copies an agent, not a terminal".into());
        }
        let base = p.agent.id.clone();
        let name = p.name().to_owned();
        let window = self.windows().last().copied().unwrap_or(1) + 1;
        let mut ids = Vec::new();
        for k in 1..=n {
            let id = self.unused_id(&format!("{base}-best{k}"), &ids);
            let model = models.get(k - 1).or(models.last()).cloned();
            let new = NewPane {
                id: id.clone(),
                template: Some(base.clone()),
                model,
                worktree: true,
                name: Some(format!("{name} #{k}")),
                window: Some(window),
                ..NewPane::default()
            };
            self.outbox.push(AppCommand::Edit(PaneEdit::New(new)));
            ids.push(id);
        }
        self.set_status(format!("best of {n}: starting {}…", ids.join(", ")));
        self.fanout.pending = Some(PendingBestOf { ids, prompt });
    }

    /// `base`, or `base-2`… that no pane has and `also` does not hold.
    fn unused_id(&self, base: &str, also: &[String]) -> String {
        crate::config::free_id(base, |id| {
            self.panes.iter().any(|p| p.agent.id == id) || also.iter().any(|a| a == id)
        })
    }

    /// The panes changed: once every copy of a pending best-of-N is there,
    /// fan the prompt out to them (or open the prompt for it).
    pub(crate) fn best_of_ready(&mut self) {
        let Some(pending) = self.fanout.pending.clone() else {
            return;
        };
        let found: Option<Vec<usize>> = pending
            .ids
            .iter()
            .map(|id| self.panes.iter().position(|p| &p.agent.id == id))
            .collect();
        let Some(panes) = found else {
            return;
        };
        self.fanout.pending = None;
        self.fanout.best_of = pending.ids;
        let (ready, failed): (Vec<usize>, Vec<usize>) = panes
            .iter()
            .partition(|&&i| super::fanout::can_receive(&self.panes[i]));
        if let Some(&f) = failed.first() {
            let why = self.panes[f]
                .conversation
                .failed
                .clone()
                .unwrap_or_default();
            self.set_status(format!(
                "best of {}: {} of the copies could not start ({why})",
                panes.len(),
                failed.len()
            ));
            if ready.is_empty() {
                return;
            }
        }
        let panes = ready;
        self.fanout.chosen = panes.iter().copied().collect();
        if let Some(&first) = panes.first() {
            self.set_focus(first);
        }
        self.fanout.sel = self.focus;
        self.fanout.prompt = Some(pending.prompt.clone().unwrap_or_default());
        self.overlay = Overlay::FanOut;
        if pending.prompt.is_some() {
            self.fan_out();
        }
    }
}
