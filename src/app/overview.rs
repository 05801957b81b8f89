//! The overview (`Ctrl+B o`): every pane in one table, for when there are
//! more agents than fit the grid. This file holds what the table reads
//! beyond the pane itself (when each pane entered its state, the
//! selection) and its keys; `ui::overview` draws it.

use crossterm::event::{KeyCode, KeyEvent};

use super::overlay::OverviewSort;
use super::pane::Pane;
use super::state::{App, Overlay};
use super::transcript::EntryKind;
use crate::protocol::event::Origin;
use crate::protocol::upsert::UpsertKind;

/// The running tool (`⚙ Bash ls -la`), else the last line the agent wrote.
pub(crate) fn activity(p: &Pane) -> String {
    if p.is_terminal() {
        return "terminal".into();
    }
    if let Some(e) = &p.conversation.failed {
        return e.clone();
    }
    for e in p.conversation.transcript.entries.iter().rev() {
        match &e.kind {
            EntryKind::Item(u) => match &u.kind {
                UpsertKind::ToolCall {
                    tool_name,
                    arguments,
                    ..
                } if !u.is_final() => {
                    return format!("⚙ {tool_name} {}", super::inbox::summarize_args(arguments));
                }
                UpsertKind::Message { content, origin } if *origin != Origin::System => {
                    // A line with a word in it: an answer's last raw line is
                    // often a lone ``` or a table rule (issue 34 item 13).
                    let last = content.with_str(|s| {
                        s.lines()
                            .rev()
                            .find(|l| l.chars().any(char::is_alphanumeric))
                            .unwrap_or_default()
                            .trim()
                            .to_owned()
                    });
                    let who = if *origin == Origin::User { "› " } else { "" };
                    return format!("{who}{last}");
                }
                _ => {}
            },
            EntryKind::TurnError { message, .. } => return format!("✗ {message}"),
            _ => {}
        }
    }
    String::new()
}

/// The pane that spawned pane `i` (issue 32), if it is open here.
fn parent(panes: &[Pane], i: usize) -> Option<usize> {
    let id = panes[i].parent.as_deref()?;
    panes.iter().position(|p| p.agent.id == id)
}

/// How many spawns deep pane `i` is under panes shown here.
pub(crate) fn depth(panes: &[Pane], i: usize) -> usize {
    let mut depth = 0;
    let mut at = i;
    while let Some(p) = parent(panes, at) {
        depth += 1;
        // A cycle cannot come from a server; a bound all the same.
        if depth > panes.len() {
            break;
        }
        at = p;
    }
    depth
}

/// The panes pane `i` spawned, and theirs (its team without itself).
pub(crate) fn helpers(panes: &[Pane], i: usize) -> Vec<usize> {
    (0..panes.len())
        .filter(|&j| {
            j != i && {
                let mut at = j;
                let mut hops = 0;
                loop {
                    match parent(panes, at) {
                        Some(p) if p == i => break true,
                        Some(p) if hops < panes.len() => {
                            at = p;
                            hops += 1;
                        }
                        _ => break false,
                    }
                }
            }
        })
        .collect()
}

/// Pane order with each pane's helpers right under it (a team tree).
fn tree(panes: &[Pane]) -> Vec<usize> {
    fn visit(panes: &[Pane], i: usize, out: &mut Vec<usize>) {
        if out.contains(&i) {
            return;
        }
        out.push(i);
        for j in 0..panes.len() {
            if parent(panes, j) == Some(i) {
                visit(panes, j, out);
            }
        }
    }
    let mut out = Vec::with_capacity(panes.len());
    for i in 0..panes.len() {
        if parent(panes, i).is_none() {
            visit(panes, i, &mut out);
        }
    }
    // Whatever a cycle left out, in pane order.
    for i in 0..panes.len() {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The pane indices in the overview's row order: by `sort`, the most
/// first, ties (and panes with nothing to sort by) in pane order; by pane,
/// each pane's helpers under it.
pub(crate) fn order(panes: &[Pane], sort: OverviewSort) -> Vec<usize> {
    if sort == OverviewSort::Pane {
        return tree(panes);
    }
    let mut order: Vec<usize> = (0..panes.len()).collect();
    let key = |p: &Pane| -> f64 {
        match sort {
            OverviewSort::Pane => 0.0,
            OverviewSort::Cpu => p.process.map_or(-1.0, |s| s.cpu_percent),
            OverviewSort::Memory => p.process.map_or(-1.0, |s| s.rss_bytes as f64),
            OverviewSort::Cost => p.conversation.usage.cost_usd.unwrap_or(-1.0),
        }
    };
    // Stable: equal keys keep pane order.
    order.sort_by(|&a, &b| key(&panes[b]).total_cmp(&key(&panes[a])));
    order
}

impl App {
    pub(crate) fn open_overview(&mut self) {
        self.overlay = Overlay::Overview;
        let order = order(&self.panes, self.overview.sort);
        self.overview.sel = order.iter().position(|&i| i == self.focus).unwrap_or(0);
    }

    /// ↑/↓ select, `s` sorts by the next column (pane, cpu, memory, cost),
    /// Enter focuses (zoomed when the grid has no room for it), Esc closes.
    pub(super) fn overview_key(&mut self, ev: KeyEvent) {
        let n = self.panes.len();
        let o = &mut self.overview;
        match ev.code {
            KeyCode::Up | KeyCode::Char('k') => o.sel = o.sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => o.sel = (o.sel + 1).min(n.saturating_sub(1)),
            KeyCode::Home => o.sel = 0,
            KeyCode::End => o.sel = n.saturating_sub(1),
            KeyCode::Char('s') => {
                // The selection stays on its pane.
                let pane = order(&self.panes, o.sort).get(o.sel).copied();
                o.sort = o.sort.next();
                let now = order(&self.panes, o.sort);
                o.sel = pane
                    .and_then(|p| now.iter().position(|&i| i == p))
                    .unwrap_or(0);
            }
            KeyCode::Enter => {
                let Some(i) = order(&self.panes, o.sort).get(o.sel).copied() else {
                    self.overlay = Overlay::None;
                    return;
                };
                self.overlay = Overlay::None;
                self.set_focus(i);
                let r = self.geometry.pane(i).rect;
                if r.width < 20 || r.height < 6 {
                    self.zoom = true;
                }
            }
            _ => self.overlay = Overlay::None,
        }
    }
}
