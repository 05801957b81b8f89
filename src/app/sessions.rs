//! `/resume` and `/clear` in a pane: a picker of the agent's past history
//! sessions (newest first), switching the pane to one (its transcript
//! shown, the agent resumed on its own session when hive kept the handle),
//! and starting a new session while the old one stays listed. The sessions
//! are in the history of the server that runs the pane, here or on another
//! machine: the console asks that server for the list and the switch, and
//! the pane's `Reset` shows the session (src/server/asks.rs).

use chrono::{FixedOffset, Offset, TimeZone};

use super::command::AppCommand;
use super::menu::{Menu, MenuItem, MenuKind};
use super::state::App;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::Usage;
use crate::protocol::history::{SessionSummary, new_session_id, one_line};
use crate::protocol::pane::RunnerCommand;

/// Characters of the first prompt a picker line shows.
const PROMPT_CHARS: usize = 60;

impl App {
    /// Why the focused pane cannot switch sessions now, if it cannot.
    fn session_blocker(&self) -> Option<String> {
        let p = self.focused()?;
        if p.is_terminal() {
            return Some(format!(
                "{} is a terminal pane: it has no sessions",
                p.name()
            ));
        }
        if p.conversation.failed.is_some() {
            return Some(format!("{} is not running", p.name()));
        }
        p.is_busy().then(|| {
            "a turn is running: interrupt it (Esc) or let it finish before switching sessions"
                .to_owned()
        })
    }

    /// The host of the focused pane when it runs on another machine (its
    /// sessions are in that machine's history, which its server reads).
    fn remote_host(&self) -> Option<String> {
        self.focused()?.host.clone()
    }

    /// `/resume`: asks the pane's server for the picker of this agent's
    /// sessions.
    pub(crate) fn open_session_picker(&mut self) {
        if let Some(why) = self.session_blocker() {
            return self.refuse(why);
        }
        let pane = self.focus;
        self.outbox.push(AppCommand::ListSessions { pane });
        if let Some(host) = self.remote_host() {
            self.set_status(format!("asking {host} for the sessions…"));
        }
    }

    /// The sessions of a pane, listed by its server: the picker, if that
    /// pane still has the focus.
    pub fn on_sessions(&mut self, pane: usize, list: Vec<SessionSummary>) {
        if pane == self.focus && self.session_blocker().is_none() {
            self.session_picker(list);
        }
    }

    /// The picker of `list`, or why there is nothing to pick.
    fn session_picker(&mut self, list: Vec<SessionSummary>) {
        let Some(p) = self.focused() else {
            return;
        };
        let current = p.history_session.clone();
        if list.iter().all(|s| Some(&s.session) == current.as_ref()) {
            let name = p.name().to_owned();
            return self.refuse(format!("{name} has no earlier sessions in hive's history"));
        }
        let offset = chrono::Local::now().offset().fix();
        let items = session_items(&list, current.as_deref(), offset);
        self.open_picker(Menu::picker(
            MenuKind::Session,
            "resume a session",
            items,
            current.as_deref(),
        ));
    }

    /// Asks the pane's server to switch it to `session` (`/resume ID` or a
    /// picked entry): the server finds the session and the agent's handle
    /// in its history, and the pane's `Reset` shows it with a line saying
    /// whether the agent continues it.
    pub(crate) fn resume_session(&mut self, session: &str) {
        if let Some(why) = self.session_blocker() {
            return self.refuse(why);
        }
        if self
            .focused()
            .is_some_and(|p| p.history_session.as_deref() == Some(session))
        {
            return self.set_status("already in that session");
        }
        let pane = self.focus;
        let session = session.to_owned();
        self.set_status(match self.remote_host() {
            Some(host) => format!("resuming session {session} on {host}…"),
            None => format!("resuming session {session}…"),
        });
        self.outbox.push(AppCommand::Resume { pane, session });
    }

    /// `/clear`: a new history session and a new agent session; the old
    /// one stays in the `/resume` list.
    pub(crate) fn clear_session(&mut self) {
        if let Some(why) = self.session_blocker() {
            return self.refuse(why);
        }
        let session = new_session_id();
        let key = self.keymap.short(crate::keymap::Action::Resume);
        let focus = self.focus;
        if let Some(p) = self.focused_mut() {
            begin_session(p, &session);
            p.conversation.transcript.notice(
                DiagnosticLevel::Info,
                format!("new session {session} · /resume ({key}) lists the earlier ones"),
            );
        }
        self.send(
            focus,
            RunnerCommand::SwitchSession {
                session,
                resume: None,
            },
        );
    }
}

/// The pane forgets the conversation it showed.
fn begin_session(p: &mut super::pane::Pane, session: &str) {
    p.conversation.transcript.reset();
    p.conversation.usage = Usage::default();
    p.conversation.turns = 0;
    p.scroll = 0;
    p.reveal = None;
    p.highlight = None;
    p.history_session = Some(session.to_owned());
}

/// One picker line per session: when it started (in `offset`'s time), its
/// first prompt; then turns, model, and which one is current.
pub fn session_items(
    list: &[SessionSummary],
    current: Option<&str>,
    offset: FixedOffset,
) -> Vec<MenuItem> {
    list.iter()
        .map(|s| {
            let when = s
                .started
                .and_then(|ms| offset.timestamp_millis_opt(ms).single())
                .map_or_else(
                    || "—".to_owned(),
                    |t| t.format("%Y-%m-%d %H:%M").to_string(),
                );
            let prompt = match one_line(&s.first_prompt, PROMPT_CHARS) {
                p if p.is_empty() => "(no prompt yet)".to_owned(),
                p => p,
            };
            let mut detail = format!("{} turn{}", s.turns, if s.turns == 1 { "" } else { "s" });
            if let Some(m) = &s.model {
                detail.push_str(&format!(" · {m}"));
            }
            if current == Some(s.session.as_str()) {
                detail.push_str(" · current");
            }
            MenuItem::new(format!("{when}  {prompt}"), detail).with_value(s.session.clone())
        })
        .collect()
}
