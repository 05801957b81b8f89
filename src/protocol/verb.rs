//! One front door (issue 44): whatever asks the server for something — a
//! console's keys (`ClientMsg`), `hive ctl` and `hive mcp` (the control
//! socket's `Call`), an agent's operation (`agent.send`, …) — asks it as a
//! [`Request`]: who asks ([`Caller`]) and what ([`Verb`]). Each door only
//! encodes the verb its own way (a console's frames, a ctl JSON line, an
//! operation's name and arguments); the server has one match over verbs
//! (src/server/door.rs), the one place a verb becomes runner commands or a
//! change to the panes. A new verb is one variant here and one arm there.
//!
//! Not on the wire itself: the wire keeps its encodings (the shape
//! fixtures of tests/fixtures/protocol do not change).

use std::time::Duration;

use serde::Deserialize;

use crate::protocol::agent::PermissionDecision;
use crate::protocol::edit::{NewPane, PaneEdit};
use crate::protocol::forge::ForgeAsk;
use crate::protocol::pane::{Decider, RunnerCommand};

/// One request to the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub caller: Caller,
    pub verb: Verb,
}

impl Request {
    pub fn new(caller: Caller, verb: Verb) -> Self {
        Self { caller, verb }
    }
}

/// Who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// An attached console: the server's id for its connection, and
    /// whether it may act or (`ReadOnly`, `hive attach --read-only`) only
    /// look.
    Console { id: u64, role: Role },
    /// `hive ctl`, or `hive mcp` outside any pane (a script): the user.
    Cli,
    /// The agent of pane `id`, through its tools or `hive mcp --agent`.
    Agent(String),
    /// A browser paired with the web client (src/web/): device `id`, which
    /// may act on panes or (`ReadOnly`) only look.
    Device { id: String, role: Role },
}

/// What a paired device or a console may do: a device's pairing (`hive
/// web pair --read-only`), a console's attach (`hive attach --read-only`,
/// for sharing a live pane without control).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Answer approvals, send, queue, interrupt, restart (a console: all
    /// the user may).
    #[default]
    Full,
    /// Look at panes, transcripts and approvals; change nothing.
    ReadOnly,
}

/// What is asked: the union of what consoles, `hive ctl` and agents'
/// operations can ask, one variant per verb. Panes are named by id except
/// in `Command`, a console's key, which names the pane by the console's
/// own numbering.
#[derive(Debug, Clone, PartialEq)]
pub enum Verb {
    /// A runner command from a console's keys, for its pane `pane`.
    Command {
        pane: usize,
        cmd: RunnerCommand,
    },
    /// A message to the pane's agent, queued behind its turn or (`steer`)
    /// delivered now.
    Send {
        pane: String,
        text: String,
        steer: bool,
    },
    /// Ends the pane's running turn.
    Interrupt {
        pane: String,
    },
    /// Answers the approval the pane waits for (the oldest, or
    /// `request_id`).
    Answer {
        pane: String,
        request_id: Option<String>,
        decision: PermissionDecision,
    },
    /// Starts the pane's agent again after it stopped.
    Restart {
        pane: String,
    },
    /// A pane made by the user.
    New(NewPane),
    /// A helper made by an agent (or a script), within its limits.
    Spawn(SpawnArgs),
    /// Ends the pane's agent and takes it out of the layout.
    Close {
        pane: String,
        team: bool,
        discard: bool,
    },
    Rename {
        pane: String,
        name: String,
    },
    /// To place `to` (0-based; past the end: last).
    Move {
        pane: String,
        to: usize,
    },
    /// Into window `window` (1-based).
    Window {
        pane: String,
        window: usize,
    },
    /// The pane's work goes on in another pane (issue 50).
    Handoff(crate::protocol::carry::Handoff),
    /// A step of moving a live pane to another host's server (issue 50).
    Relocate(crate::protocol::carry::Relocate),
    /// A repository joins the pane's workspace (issue 52, `/repo add`).
    AddRepo {
        pane: String,
        repo: std::path::PathBuf,
    },
    /// The pane goes on under another `[[account]]` of its provider, with
    /// its conversation (issue 51): a console's `/account NAME` and
    /// `hive ctl account` alike.
    Account {
        pane: String,
        name: String,
    },
    /// Every pane with its state.
    List,
    Status {
        pane: String,
    },
    /// The pane's recent transcript items.
    Read {
        pane: String,
        last: usize,
        since: Option<String>,
        full: bool,
    },
    /// Where the pane's history is.
    History {
        pane: String,
    },
    /// A terminal pane's screen as text (the web page's text view of a
    /// terminal pane, issue 47).
    Screen {
        pane: String,
    },
    /// The answer to a message or a turn, once it ends (at most `timeout`).
    Wait {
        target: WaitFor,
        timeout: Option<Duration>,
    },
    /// Every upsert and turn event from now on (of one pane, or all).
    Watch {
        pane: Option<String>,
    },
    /// The server itself (`hive ls`).
    Server,
    /// The web client's pairing and devices (`hive web`).
    Web(WebVerb),
    /// Stops every agent and the server.
    Stop,
    /// Issue → pane, pull request, its state, its merge (issue 48).
    Forge(ForgeAsk),
    /// The approvals waiting across panes, the audit log, the learned
    /// rules (issue 47, `hive ctl approvals`).
    Approvals(ApprovalsAsk),
}

/// What `hive ctl approvals` asks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case", deny_unknown_fields)]
pub enum ApprovalsAsk {
    /// Every card waiting for an answer, of every pane.
    Queue,
    /// The audit log's last `last` decisions (of pane `pane`, or all).
    Log {
        last: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pane: Option<String>,
    },
    /// The rules: the config's and those learned from `allow always`.
    Rules,
    /// Removes learned rule `rule`.
    Forget { rule: String },
}

/// What `Wait` waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitFor {
    /// A message sent by an operation (`agent.send`'s `message_id`).
    Message(String),
    /// The caller's last message to this pane.
    Agent(String),
    /// A turn by id (`hive ctl wait`).
    Turn(String),
}

/// What `hive web` asks of the server's web client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebVerb {
    /// A new single-use pairing code (`role`: what the device will be).
    Pair { role: Role },
    /// The paired devices.
    Devices,
    /// Unpairs a device and ends its open connections.
    Revoke { device: String },
}

/// `agent.spawn`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    pub template: Option<String>,
    pub provider: Option<String>,
    pub id: Option<String>,
    pub task: Option<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub worktree: bool,
    pub can_message: Option<Vec<String>>,
}

/// Why a caller may not ask for a verb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Caller {
    /// Who this caller is as the decider of an approval (the audit log's
    /// `by`).
    pub fn decider(&self) -> Decider {
        match self {
            Caller::Console { .. } => Decider::Console,
            Caller::Cli => Decider::Ctl,
            Caller::Agent(id) => Decider::Agent(id.clone()),
            Caller::Device { id, .. } => Decider::Device(id.clone()),
        }
    }

    /// Whether this caller may ask for `verb` at all. The user (a console,
    /// `hive ctl`) may ask for everything; an agent may reach other panes
    /// only through what its operations offer (read, message, wait,
    /// interrupt, answer, spawn a helper, close one), never edit the user's
    /// panes, press a console's keys or stop the server. Which panes it
    /// reaches (`can_message`, its helpers, spawn limits) is checked where
    /// the panes are known (src/ops/host.rs, src/server/teams.rs).
    pub fn may(&self, verb: &Verb) -> Result<(), Refused> {
        let id = match self {
            Caller::Console {
                role: Role::Full, ..
            }
            | Caller::Cli => return Ok(()),
            Caller::Console {
                role: Role::ReadOnly,
                ..
            } => return viewer_may(verb),
            Caller::Device { id, role } => return device_may(id, *role, verb),
            Caller::Agent(id) => id,
        };
        let allowed = match verb {
            Verb::List
            | Verb::Read { .. }
            | Verb::Send { .. }
            | Verb::Wait { .. }
            | Verb::Interrupt { .. }
            | Verb::Answer { .. }
            | Verb::Spawn(_) => true,
            // Its helpers, checked by the team rules; a worktree goes
            // only by the user's word.
            Verb::Close { discard, .. } => !discard,
            Verb::Command { .. }
            | Verb::Restart { .. }
            | Verb::New(_)
            | Verb::Rename { .. }
            | Verb::Move { .. }
            | Verb::Window { .. }
            | Verb::Handoff(_)
            | Verb::Relocate(_)
            // What the agent's checkout holds is the user's word.
            | Verb::AddRepo { .. }
            // Whose login an agent runs under is the user's.
            | Verb::Account { .. }
            | Verb::Status { .. }
            | Verb::History { .. }
            // A terminal is the user's: what it shows may be anything.
            | Verb::Screen { .. }
            | Verb::Watch { .. }
            | Verb::Server
            | Verb::Web(_)
            | Verb::Stop
            // Pushing, opening and merging are the user's word.
            | Verb::Forge(_)
            // The policy is the user's: an agent neither reads the log of
            // what was decided about it nor forgets a rule.
            | Verb::Approvals(_) => false,
        };
        if allowed {
            return Ok(());
        }
        Err(Refused(format!(
            "an agent (`{id}`) may not {}: that is the user's",
            verb.name()
        )))
    }
}

/// A read-only console (`hive attach --read-only`) looks: it lists, reads,
/// watches, scrolls a terminal pane back and copies from it; it answers
/// nothing, sends nothing, presses no key into a pane, edits no pane and
/// stops nothing. (Its size is not the pane's either: the door drops its
/// `Resize` quietly, as tmux's `attach -r` ignores a read-only client's
/// size.)
fn viewer_may(verb: &Verb) -> Result<(), Refused> {
    let looks = match verb {
        Verb::Command { cmd, .. } => cmd.only_looks(),
        Verb::List
        | Verb::Status { .. }
        | Verb::Read { .. }
        | Verb::History { .. }
        | Verb::Screen { .. }
        | Verb::Wait { .. }
        | Verb::Watch { .. }
        | Verb::Server
        | Verb::Approvals(ApprovalsAsk::Queue | ApprovalsAsk::Log { .. } | ApprovalsAsk::Rules) => {
            true
        }
        _ => false,
    };
    if looks {
        return Ok(());
    }
    let what = match verb {
        Verb::Command { cmd, .. } => cmd.what_it_does(),
        other => other.name(),
    };
    Err(Refused(read_only_refusal(what)))
}

/// What a read-only console is told when it asks for a change (`what`:
/// the verb in a word), the same words from the server and from the
/// console's own keys.
pub fn read_only_refusal(what: &str) -> String {
    format!("read-only: may not {what}")
}

/// A paired browser looks at panes and (`Full`) answers, sends, queues,
/// interrupts and restarts; it never edits the layout, presses a
/// console's keys, pairs other devices or stops the server: those stay at
/// the user's terminal.
fn device_may(id: &str, role: Role, verb: &Verb) -> Result<(), Refused> {
    let looks = matches!(
        verb,
        Verb::List
            | Verb::Status { .. }
            | Verb::Read { .. }
            | Verb::Screen { .. }
            | Verb::Watch { .. }
            | Verb::Approvals(ApprovalsAsk::Queue | ApprovalsAsk::Log { .. } | ApprovalsAsk::Rules)
    );
    let acts = matches!(
        verb,
        Verb::Send { .. } | Verb::Interrupt { .. } | Verb::Answer { .. } | Verb::Restart { .. }
    );
    if looks || (acts && role == Role::Full) {
        return Ok(());
    }
    let why = if acts {
        "it is paired read-only"
    } else {
        "that is for the user's terminal"
    };
    Err(Refused(format!(
        "a paired device (`{id}`) may not {}: {why}",
        verb.name()
    )))
}

impl Verb {
    /// The verb in a word, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Verb::Command { .. } => "press a console's keys",
            Verb::Send { .. } => "send",
            Verb::Interrupt { .. } => "interrupt",
            Verb::Answer { .. } => "answer an approval",
            Verb::Restart { .. } => "restart a pane",
            Verb::New(_) => "make a pane",
            Verb::Spawn(_) => "spawn",
            Verb::Close { discard: true, .. } => "discard a pane's worktree",
            Verb::Close { .. } => "close a pane",
            Verb::Rename { .. } => "rename a pane",
            Verb::Move { .. } | Verb::Window { .. } => "move a pane",
            Verb::Handoff(_) => "hand a pane's work off",
            Verb::Relocate(_) => "move a pane to another host",
            Verb::AddRepo { .. } => "add a repository to a pane",
            Verb::Account { .. } => "switch a pane's account",
            Verb::List => "list",
            Verb::Status { .. } => "ask a pane's status",
            Verb::Read { .. } => "read",
            Verb::History { .. } => "ask for a pane's history",
            Verb::Screen { .. } => "read a terminal's screen",
            Verb::Wait { .. } => "wait",
            Verb::Watch { .. } => "watch",
            Verb::Server => "ask about the server",
            Verb::Web(_) => "pair or revoke devices",
            Verb::Stop => "stop the server",
            Verb::Forge(_) => "use the forge",
            Verb::Approvals(ApprovalsAsk::Forget { .. }) => "forget an approval rule",
            Verb::Approvals(_) => "look at the approvals",
        }
    }

    /// How long its caller waits for the answer (`None`: as long as it
    /// takes): a wait's own timeout.
    pub fn timeout(&self) -> Option<Duration> {
        match self {
            Verb::Wait { timeout, .. } => *timeout,
            _ => None,
        }
    }

    /// The change to the panes this verb is, if it is one.
    #[allow(
        clippy::result_large_err,
        reason = "handed back whole to the caller's next match, never kept or passed on"
    )]
    pub fn into_edit(self) -> Result<PaneEdit, Verb> {
        Ok(match self {
            Verb::New(new) => PaneEdit::New(new),
            Verb::Close {
                pane,
                team,
                discard,
            } => PaneEdit::Close {
                pane,
                team,
                discard,
            },
            Verb::Rename { pane, name } => PaneEdit::Rename { pane, name },
            Verb::Move { pane, to } => PaneEdit::Move { pane, to },
            Verb::Window { pane, window } => PaneEdit::Window { pane, window },
            Verb::Handoff(h) => PaneEdit::Handoff(h),
            Verb::Relocate(r) => PaneEdit::Relocate(r),
            Verb::AddRepo { pane, repo } => PaneEdit::AddRepo { pane, repo },
            other => return Err(other),
        })
    }
}

impl From<PaneEdit> for Verb {
    fn from(edit: PaneEdit) -> Self {
        match edit {
            PaneEdit::New(new) => Verb::New(new),
            PaneEdit::Close {
                pane,
                team,
                discard,
            } => Verb::Close {
                pane,
                team,
                discard,
            },
            PaneEdit::Rename { pane, name } => Verb::Rename { pane, name },
            PaneEdit::Move { pane, to } => Verb::Move { pane, to },
            PaneEdit::Window { pane, window } => Verb::Window { pane, window },
            PaneEdit::Handoff(h) => Verb::Handoff(h),
            PaneEdit::Relocate(r) => Verb::Relocate(r),
            PaneEdit::AddRepo { pane, repo } => Verb::AddRepo { pane, repo },
        }
    }
}

impl super::ClientMsg {
    /// The verb a console's message asks for; the rest (attach, focus, a
    /// draft, …) is the console's session, not a request (handed back).
    #[allow(
        clippy::result_large_err,
        reason = "handed back whole to the caller's next match, never kept or passed on"
    )]
    pub fn into_verb(self) -> Result<Verb, Self> {
        match self {
            Self::Command { pane, cmd } => Ok(Verb::Command { pane, cmd }),
            Self::Edit(edit) => Ok(edit.into()),
            Self::Stop => Ok(Verb::Stop),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ClientMsg;

    #[test]
    fn an_agent_may_not_stop_the_server_or_edit_the_users_panes() {
        let agent = Caller::Agent("lead".into());
        let refused = |v: Verb| agent.may(&v).unwrap_err().0;
        assert!(refused(Verb::Stop).contains("stop the server"));
        let rename = Verb::Rename {
            pane: "user".into(),
            name: "x".into(),
        };
        assert!(refused(rename.clone()).contains("rename"));
        let discard = Verb::Close {
            pane: "user".into(),
            team: true,
            discard: true,
        };
        assert!(refused(discard.clone()).contains("discard"));
        let keys = Verb::Command {
            pane: 0,
            cmd: RunnerCommand::Restart,
        };
        assert!(agent.may(&keys).is_err());
        assert!(agent.may(&Verb::New(NewPane::default())).is_err());
        let merge = Verb::Forge(ForgeAsk::PrMerge {
            pane: "lead".into(),
            method: None,
            close: None,
        });
        assert!(refused(merge).contains("use the forge"));
        // The user may do all of it.
        for v in [Verb::Stop, rename, discard, keys] {
            assert_eq!(Caller::Cli.may(&v), Ok(()));
            assert_eq!(
                Caller::Console {
                    id: 1,
                    role: Role::Full
                }
                .may(&v),
                Ok(())
            );
        }
        // What its operations offer stays open to the agent.
        let close = Verb::Close {
            pane: "helper".into(),
            team: true,
            discard: false,
        };
        assert_eq!(agent.may(&close), Ok(()));
        assert_eq!(agent.may(&Verb::List), Ok(()));
    }

    #[test]
    fn a_device_looks_and_a_read_only_one_changes_nothing() {
        let full = Caller::Device {
            id: "d1".into(),
            role: Role::Full,
        };
        let viewer = Caller::Device {
            id: "d2".into(),
            role: Role::ReadOnly,
        };
        let answer = Verb::Answer {
            pane: "demo".into(),
            request_id: None,
            decision: PermissionDecision::AllowOnce,
        };
        let send = Verb::Send {
            pane: "demo".into(),
            text: "hi".into(),
            steer: false,
        };
        let watch = Verb::Watch { pane: None };
        for v in [&answer, &send, &watch, &Verb::List] {
            assert_eq!(full.may(v), Ok(()), "{v:?}");
        }
        assert_eq!(viewer.may(&watch), Ok(()));
        assert_eq!(viewer.may(&Verb::List), Ok(()));
        assert!(viewer.may(&answer).unwrap_err().0.contains("read-only"));
        assert!(viewer.may(&send).is_err());
        // Neither pairs devices, edits the layout or stops the server.
        let pair = Verb::Web(WebVerb::Pair { role: Role::Full });
        for v in [pair, Verb::Stop, Verb::New(NewPane::default())] {
            assert!(full.may(&v).unwrap_err().0.contains("terminal"), "{v:?}");
            assert!(viewer.may(&v).is_err());
        }
        let keys = Verb::Command {
            pane: 0,
            cmd: RunnerCommand::Restart,
        };
        assert!(full.may(&keys).is_err());
    }

    /// `hive attach --read-only`: it looks, it changes nothing, and the
    /// refusal names what it asked.
    #[test]
    fn a_read_only_console_looks_and_changes_nothing() {
        use crate::protocol::pane::{Decider, SubmitMode};
        let viewer = Caller::Console {
            id: 7,
            role: Role::ReadOnly,
        };
        let keys = |cmd| Verb::Command { pane: 0, cmd };
        let looks = [
            Verb::List,
            Verb::Watch { pane: None },
            Verb::Approvals(ApprovalsAsk::Queue),
            keys(RunnerCommand::TermView {
                scroll: 5,
                seen: 40,
                hold: true,
            }),
        ];
        for v in &looks {
            assert_eq!(viewer.may(v), Ok(()), "{v:?}");
        }
        let refused = |v: Verb| viewer.may(&v).unwrap_err().0;
        let answer = keys(RunnerCommand::Permission {
            request_id: "r1".into(),
            decision: PermissionDecision::AllowOnce,
            by: Decider::Console,
        });
        assert_eq!(refused(answer), "read-only: may not answer an approval");
        let send = keys(RunnerCommand::Submit {
            text: "hi".into(),
            mode: SubmitMode::Auto,
        });
        assert!(refused(send).ends_with("may not send"));
        assert!(
            refused(keys(RunnerCommand::Input(b"ls\r".to_vec()))).ends_with("type into a pane")
        );
        assert!(
            refused(keys(RunnerCommand::Resize { cols: 80, rows: 24 })).ends_with("size a pane")
        );
        for v in [
            Verb::Stop,
            Verb::New(NewPane::default()),
            Verb::Approvals(ApprovalsAsk::Forget { rule: "r".into() }),
            Verb::Answer {
                pane: "demo".into(),
                request_id: None,
                decision: PermissionDecision::AllowOnce,
            },
        ] {
            assert!(viewer.may(&v).is_err(), "{v:?}");
        }
        // The same console as the user's may do all of it.
        let user = Caller::Console {
            id: 7,
            role: Role::Full,
        };
        assert_eq!(user.may(&Verb::Stop), Ok(()));
    }

    #[test]
    fn a_consoles_edit_is_a_verb_and_its_session_is_not() {
        let close = PaneEdit::Close {
            pane: "a".into(),
            team: false,
            discard: false,
        };
        let verb = ClientMsg::Edit(close.clone()).into_verb().unwrap();
        assert_eq!(verb.into_edit().unwrap(), close);
        assert_eq!(ClientMsg::Stop.into_verb().unwrap(), Verb::Stop);
        assert_eq!(
            ClientMsg::Focus(2).into_verb().unwrap_err(),
            ClientMsg::Focus(2)
        );
        assert!(Verb::List.into_edit().is_err());
    }
}
