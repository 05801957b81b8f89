//! `/handoff`: the same task goes on in another pane, of any vendor, when
//! this one cannot go on (a weekly cap, a spent budget, a stuck model;
//! issue 33 item 5, issue 50). `/handoff <pane> [shared|branched]` hands
//! it to an open pane, `/handoff new <template|provider> [shared|branched]`
//! to a new one. The pane's server does the work (src/server/handoff.rs):
//! the target works in the source's worktree (`shared`, the default: the
//! source stops) or in a new worktree branched from it with its
//! uncommitted changes (`branched`), and gets a brief of the source's
//! finished turns as its next message. The console names the target by
//! id and refuses early what the server would refuse too.

use super::pane::Pane;
use super::state::App;
use crate::protocol::carry::{Handoff, HandoffTarget, HandoffTree};
use crate::protocol::edit::PaneEdit;

const USAGE: &str =
    "/handoff <pane> [shared|branched] or /handoff new <template|provider> [shared|branched]";

impl App {
    /// `/handoff TARGET [shared|branched]`, `/handoff new WHAT [...]`.
    pub(crate) fn handoff(&mut self, arg: &str) {
        let from = self.focus;
        let mut words: Vec<&str> = arg.split_whitespace().collect();
        let tree = match words.last().and_then(|w| HandoffTree::parse(w)) {
            Some(t) => {
                words.pop();
                t
            }
            None => HandoffTree::Shared,
        };
        let Some(p) = self.panes.get(from) else {
            return;
        };
        if let Some(why) = not_ready(p) {
            return self.refuse(format!("/handoff: {why}"));
        }
        let to = match words[..] {
            ["new", what] => {
                let known = self.templates.iter().any(|a| a.id == what);
                if known {
                    HandoffTarget::New {
                        template: Some(what.to_owned()),
                        provider: None,
                    }
                } else {
                    HandoffTarget::New {
                        template: None,
                        provider: Some(what.to_owned()),
                    }
                }
            }
            [target] => match find_pane(&self.panes, from, target) {
                Some(to) => {
                    let p = &self.panes[to];
                    if p.is_terminal() {
                        let name = p.name().to_owned();
                        return self.refuse(format!("/handoff: {name} cannot take a message"));
                    }
                    if let Some(why) = not_ready(p) {
                        return self.refuse(format!("/handoff: the target {why}"));
                    }
                    HandoffTarget::Pane(p.agent.id.clone())
                }
                None => return self.refuse(format!("/handoff: no other pane `{target}`")),
            },
            _ => return self.refuse(format!("usage: {USAGE}")),
        };
        let handoff = Handoff {
            from: self.panes[from].agent.id.clone(),
            to,
            tree,
        };
        self.outbox
            .push(super::command::AppCommand::Edit(PaneEdit::Handoff(handoff)));
    }
}

/// Why pane `p`'s work cannot be handed on now (the server says the same).
fn not_ready(p: &Pane) -> Option<String> {
    let name = p.name();
    if p.pending.asks() {
        return Some(format!(
            "{name} waits on an approval: answer it first, then hand off"
        ));
    }
    if p.is_busy() {
        return Some(format!(
            "{name}'s turn is still running: wait for it or interrupt it, then hand off"
        ));
    }
    None
}

/// Another pane than `from` named by `target`: a number (1-based), an
/// id, a name (any case), else the first pane of that provider.
fn find_pane(panes: &[Pane], from: usize, target: &str) -> Option<usize> {
    let other = |i: &usize| *i != from;
    if let Ok(n) = target.parse::<usize>() {
        return Some(n.checked_sub(1)?).filter(|i| other(i) && *i < panes.len());
    }
    let by = |f: &dyn Fn(&Pane) -> bool| (0..panes.len()).filter(other).find(|&i| f(&panes[i]));
    by(&|p| p.agent.id == target)
        .or_else(|| by(&|p| p.name().eq_ignore_ascii_case(target)))
        .or_else(|| by(&|p| p.agent.provider == target))
}
