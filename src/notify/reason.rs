//! Why a pane needs the user: the attention inbox's entries (src/app/inbox.rs)
//! and the server's notifications (src/server/notifier.rs) are made of the
//! same reasons, told in the same words.

use crate::config::ReasonKind;
use crate::runner::{PaneEvent, TurnState};
use crate::upsert::TurnEvent;

/// Why a pane is in the inbox. `kind()` names it for `[ui]` notify lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// An approval card: the tool and a one-line summary of its arguments.
    Permission {
        request_id: String,
        tool: String,
        args: String,
    },
    TurnFailed(String),
    /// A turn finished while the pane was not focused.
    TurnFinished,
    /// A helper (spawned by the agent `parent`) finished a turn.
    HelperFinished {
        parent: String,
    },
    /// A terminal pane rang the bell.
    Bell,
    /// A terminal pane printed, then went quiet while not focused.
    Idle,
    Exited,
    /// A turn has shown nothing new for a while.
    Stalled,
    /// Posted by another feature (`kind` like "overlap"), with its text.
    Posted {
        kind: String,
        text: String,
    },
}

impl Reason {
    /// What runner event `event` of a pane (a helper of `parent`, if
    /// spawned) tells the user, if anything: the one reading of events
    /// for the console's inbox and the server's notifications.
    pub fn of(event: &PaneEvent, parent: Option<&str>) -> Option<Reason> {
        Some(match event {
            PaneEvent::Permission(req) => Reason::Permission {
                request_id: req.request_id.clone(),
                tool: req.tool_name.clone(),
                args: summarize_args(&req.input),
            },
            PaneEvent::Turn(TurnEvent::TurnComplete { .. }) => match parent {
                Some(p) => Reason::HelperFinished {
                    parent: p.to_owned(),
                },
                None => Reason::TurnFinished,
            },
            PaneEvent::Turn(TurnEvent::TurnError { error_code, .. }) => {
                Reason::TurnFailed(error_code.clone())
            }
            PaneEvent::State(TurnState::Dead) => Reason::Exited,
            PaneEvent::Bell => Reason::Bell,
            PaneEvent::Idle => Reason::Idle,
            PaneEvent::Stalled(Some(_)) => Reason::Stalled,
            _ => return None,
        })
    }

    pub fn kind(&self) -> ReasonKind {
        match self {
            Reason::Permission { .. } => ReasonKind::Permission,
            Reason::TurnFailed(_) => ReasonKind::Failed,
            Reason::TurnFinished => ReasonKind::Finished,
            Reason::HelperFinished { .. } => ReasonKind::Spawned,
            Reason::Bell => ReasonKind::Bell,
            Reason::Idle => ReasonKind::Idle,
            Reason::Exited => ReasonKind::Exited,
            Reason::Stalled => ReasonKind::Stalled,
            Reason::Posted { .. } => ReasonKind::Posted,
        }
    }

    /// One line for the list and for desktop notifications.
    pub fn describe(&self) -> String {
        match self {
            Reason::Permission { tool, args, .. } if args.is_empty() => {
                format!("asks to run {tool}")
            }
            Reason::Permission { tool, args, .. } => format!("asks to run {tool}: {args}"),
            Reason::TurnFailed(e) => format!("turn failed ({e})"),
            Reason::TurnFinished => "turn finished".into(),
            Reason::HelperFinished { parent } => format!("helper of {parent}: turn finished"),
            Reason::Bell => "rang the bell".into(),
            Reason::Idle => "idle after output".into(),
            Reason::Exited => "agent exited".into(),
            Reason::Stalled => "stalled: no progress".into(),
            Reason::Posted { text, .. } => text.clone(),
        }
    }
}

/// Whether the server runs `notify_command` for `kind` (it sees the
/// runner events, and finds idle terminals itself); a feature's post is
/// found by a console, which runs it for it.
pub fn told_by_server(kind: ReasonKind) -> bool {
    kind != ReasonKind::Posted
}

/// `mkdir -p build` for `{"command": "mkdir -p build"}`: the arguments of
/// an approval on one line, the common fields first.
pub(crate) fn summarize_args(input: &serde_json::Value) -> String {
    use serde_json::Value;
    let one = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = match input {
        Value::Object(map) => ["command", "file_path", "path", "url", "pattern"]
            .iter()
            .find_map(|k| map.get(*k).map(one))
            .unwrap_or_else(|| {
                map.iter()
                    .map(|(k, v)| format!("{k}={}", one(v)))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        Value::Null => String::new(),
        other => one(other),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
