//! Fan-out and compare (`Ctrl+B f`): choose panes, type one prompt, send
//! it to each through the same path as a typed message (the runner queues
//! or starts it by the pane's state), then compare their final answers with
//! duration, tokens, cost, tools run and files changed, live while they run.
//!
//! A run remembers where its pane's transcript stood when the prompt went
//! out; everything the compare view shows is read back from the transcript
//! after that point, so it follows the turn as it streams and needs no
//! extra events. `ui::compare` draws the chooser and the view.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::commands::{self, Parsed};
use super::overlay::Run;
use super::pane::Pane;
use super::state::{App, Overlay};
use super::transcript::EntryKind;
use super::unread::edited_files;
use crate::protocol::event::{Origin, Usage};
use crate::protocol::pane::{RunnerCommand, SubmitMode};
use crate::protocol::upsert::UpsertKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Waiting in the pane's queue.
    Queued,
    /// Sent, no answer yet, or answering.
    Running,
    Done,
    Interrupted,
    Failed,
}

impl RunState {
    pub fn label(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
        }
    }
}

/// What a run has produced so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub state: RunState,
    /// The last answer of the agent (the error, when the turn failed).
    pub answer: String,
    pub duration: Option<Duration>,
    pub usage: Option<Usage>,
    pub tools: usize,
    pub files: BTreeSet<String>,
}

/// Whether fan-out can send to pane `p` (a conversation that runs).
pub(crate) fn can_receive(p: &Pane) -> bool {
    !p.is_terminal() && p.conversation.failed.is_none()
}

/// Reads `run`'s turn back from its pane: from the prompt's own message
/// (after `run.from`) to the turn's footer or error.
pub fn outcome(p: &Pane, run: &Run, prompt: &str, now: Instant) -> Outcome {
    let mut out = Outcome {
        state: RunState::Running,
        answer: String::new(),
        duration: None,
        usage: None,
        tools: 0,
        files: BTreeSet::new(),
    };
    let entries = p
        .conversation
        .transcript
        .entries
        .get(run.from..)
        .unwrap_or_default();
    let queued = p.pending.queue.iter().any(|q| q.trim() == prompt.trim());
    let start = prompt_start(entries, prompt, queued);
    let Some(start) = start else {
        if queued {
            out.state = RunState::Queued;
        }
        return out;
    };
    for e in &entries[start + 1..] {
        match &e.kind {
            EntryKind::Item(u) => match &u.kind {
                UpsertKind::Message {
                    content,
                    origin: Origin::Agent,
                } => out.answer = content.with_str(str::to_owned),
                UpsertKind::ToolCall {
                    display, arguments, ..
                } => {
                    out.tools += 1;
                    out.files
                        .extend(edited_files(display.as_deref(), arguments));
                }
                _ => {}
            },
            EntryKind::Footer {
                duration,
                usage,
                cancelled,
                ..
            } => {
                out.state = if *cancelled {
                    RunState::Interrupted
                } else {
                    RunState::Done
                };
                out.duration = *duration;
                out.usage = usage.clone();
                return out;
            }
            EntryKind::TurnError { code, message } => {
                out.state = RunState::Failed;
                if out.answer.is_empty() {
                    out.answer = format!("[{code}] {message}");
                }
                return out;
            }
            EntryKind::Notice { .. } => {}
        }
    }
    out.duration = p
        .conversation
        .transcript
        .running_since()
        .map(|t| now.saturating_duration_since(t));
    out
}

/// Where the run's turn starts in `entries`.
fn prompt_start(entries: &[super::transcript::Entry], prompt: &str, queued: bool) -> Option<usize> {
    let user = |e: &super::transcript::Entry| match &e.kind {
        EntryKind::Item(u) => match &u.kind {
            UpsertKind::Message {
                content,
                origin: Origin::User,
            } => Some(content.with_str(|s| s.trim() == prompt.trim())),
            _ => None,
        },
        _ => None,
    };
    // The prompt's own message; unless it waits in the queue, else the
    // first message sent after it (an agent may echo the text changed).
    entries
        .iter()
        .position(|e| user(e) == Some(true))
        .or_else(|| {
            if queued {
                None
            } else {
                entries.iter().position(|e| user(e).is_some())
            }
        })
}

impl App {
    /// Opens the chooser with the focused pane (if it can take a prompt)
    /// chosen.
    pub(crate) fn open_fanout(&mut self) {
        let f = &mut self.fanout;
        f.prompt = None;
        f.sel = self.focus;
        f.chosen
            .retain(|&i| self.panes.get(i).is_some_and(can_receive));
        if f.chosen.is_empty() && self.panes.get(self.focus).is_some_and(can_receive) {
            f.chosen.insert(self.focus);
        }
        self.overlay = Overlay::FanOut;
    }

    /// Chooser: ↑/↓ move, Space toggles, `a` all conversation panes (again:
    /// none), Enter types the prompt, `c` the last compare, Esc closes.
    /// Prompt: type, Enter sends to every chosen pane, Esc back.
    pub(super) fn fanout_key(&mut self, ev: KeyEvent) {
        let n = self.panes.len();
        if let Some(prompt) = self.fanout.prompt.as_mut() {
            match ev.code {
                KeyCode::Enter if ev.modifiers.contains(KeyModifiers::ALT) => prompt.push('\n'),
                KeyCode::Enter => self.fan_out(),
                KeyCode::Esc => self.fanout.prompt = None,
                KeyCode::Backspace => {
                    prompt.pop();
                }
                KeyCode::Char(c)
                    if !ev
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    prompt.push(c)
                }
                _ => {}
            }
            return;
        }
        let f = &mut self.fanout;
        match ev.code {
            KeyCode::Up | KeyCode::Char('k') => f.sel = f.sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => f.sel = (f.sel + 1).min(n.saturating_sub(1)),
            KeyCode::Char(' ') => {
                let i = f.sel;
                if self.panes.get(i).is_some_and(can_receive) && !f.chosen.remove(&i) {
                    f.chosen.insert(i);
                }
            }
            KeyCode::Char('a') => {
                let all: BTreeSet<usize> =
                    (0..n).filter(|&i| can_receive(&self.panes[i])).collect();
                f.chosen = if f.chosen == all {
                    BTreeSet::new()
                } else {
                    all
                };
            }
            KeyCode::Enter if !f.chosen.is_empty() => f.prompt = Some(String::new()),
            // A digit: best of that many copies of the selected agent.
            KeyCode::Char(d @ '2'..='9') => {
                let sel = f.sel;
                self.overlay = Overlay::None;
                self.start_best_of(sel, d as usize - '0' as usize, &[], None);
            }
            KeyCode::Enter => self.set_status("fan-out: choose panes with Space (a: all)"),
            KeyCode::Char('c') if !f.runs.is_empty() => self.overlay = Overlay::Compare,
            _ => self.overlay = Overlay::None,
        }
    }

    /// Sends the prompt to every chosen pane and opens the compare view.
    pub(super) fn fan_out(&mut self) {
        let text = self.fanout.prompt.take().unwrap_or_default();
        if text.trim().is_empty() {
            self.fanout.prompt = Some(text);
            return;
        }
        let mut runs = Vec::new();
        let mut skipped = Vec::new();
        for i in self.fanout.chosen.clone() {
            let Some(p) = self.panes.get(i) else {
                continue;
            };
            match commands::parse(&text, &p.conversation.commands) {
                Parsed::Text(body) => {
                    runs.push(Run {
                        pane: i,
                        from: p.conversation.transcript.len(),
                        sent_at: self.now,
                    });
                    self.submit_text(i, body, SubmitMode::Auto);
                }
                _ => skipped.push(p.name().to_owned()),
            }
        }
        if !skipped.is_empty() {
            self.set_status(format!(
                "fan-out sends text, not hive commands: not sent to {}",
                skipped.join(", ")
            ));
        }
        if runs.is_empty() {
            self.overlay = Overlay::None;
            return;
        }
        // The prompt as the panes will echo it (`//x` is sent as `/x`).
        self.fanout.sent = match commands::parse(&text, &[]) {
            Parsed::Text(body) => body,
            _ => text,
        };
        self.fanout.runs = runs;
        self.fanout.compare_sel = 0;
        self.fanout.scroll = 0;
        self.overlay = Overlay::Compare;
    }

    /// A message for pane `i`, as if typed there: the runner queues or
    /// starts it by the pane's state.
    pub(super) fn submit_text(&mut self, i: usize, text: String, mode: SubmitMode) {
        if let Some(p) = self.panes.get_mut(i) {
            p.scroll = 0;
            p.attention.digest = None;
        }
        self.send(i, RunnerCommand::Submit { text, mode });
    }

    /// Compare: ←/→ (Tab) select, ↑/↓ scroll, Enter opens the pane, `f` a
    /// new fan-out, `t` take the selected answer and `d` mark differences
    /// (`app::take`), Esc closes.
    pub(super) fn compare_key(&mut self, ev: KeyEvent) {
        if self.take_key(ev) {
            return;
        }
        let f = &mut self.fanout;
        let n = f.runs.len();
        match ev.code {
            KeyCode::Left | KeyCode::Char('h') | KeyCode::BackTab => {
                f.compare_sel = f.compare_sel.saturating_sub(1)
            }
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Tab => {
                f.compare_sel = (f.compare_sel + 1).min(n.saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => f.scroll = f.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => f.scroll = f.scroll.saturating_add(1),
            KeyCode::PageUp => f.scroll = f.scroll.saturating_sub(10),
            KeyCode::PageDown => f.scroll = f.scroll.saturating_add(10),
            KeyCode::Enter => {
                let pane = f.runs.get(f.compare_sel).map(|r| r.pane);
                self.overlay = Overlay::None;
                if let Some(i) = pane {
                    self.set_focus(i);
                }
            }
            KeyCode::Char('f') => self.open_fanout(),
            _ => self.overlay = Overlay::None,
        }
    }
}
