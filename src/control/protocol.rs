//! The control socket's wire format: line-delimited JSON, one request per
//! line with a caller-chosen `id`, one reply per request carrying the same
//! id, and for `watch` a stream of event lines after the reply.
//!
//! Kept free of sockets and app types so other front ends (the MCP server
//! of issue 16) can speak it too.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Origin;
use crate::protocol::verb::{Role, Verb, WaitFor, WebVerb};
use crate::runner::TurnState;
use crate::upsert::{Output, Upsert, UpsertKind, UpsertStatus};

/// One request line: `{"id": 1, "method": "send", "pane": "demo", "text": "hi"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    #[serde(flatten)]
    pub call: Call,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub enum Call {
    /// Every pane with its state, model and queue.
    List,
    Status {
        pane: String,
    },
    /// Answered once the message is bound to a turn (seed 002: `sendMessage`
    /// returns the canonical turn id), which for a queued message is when
    /// the queue reaches it.
    Send {
        pane: String,
        text: String,
        /// Deliver now (into the running turn, or interrupt and send)
        /// instead of queueing behind it.
        #[serde(default)]
        steer: bool,
    },
    /// Answered when the turn ends.
    Wait {
        turn_id: String,
    },
    Cancel {
        pane: String,
    },
    Restart {
        pane: String,
    },
    /// Answered at once, then every upsert and turn event (of one pane, or
    /// all) follows as an [`EventLine`] until the client hangs up.
    Watch {
        #[serde(default)]
        pane: Option<String>,
    },
    History {
        pane: String,
    },
    /// Allows the approval pane `pane` waits for (the oldest, or
    /// `request_id`); `always`: for the rest of the session.
    Approve {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        #[serde(default)]
        always: bool,
        /// Runs a destructive request: the confirm option of its second
        /// card (docs/policy.md), which a plain allow does not send.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        confirm: bool,
    },
    /// Denies it; `reason` reaches the agent.
    Deny {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A pane made now (issue 32), from a template or a provider; answered
    /// once its runner started (or could not: the pane says why). `pane`
    /// is its id (`id` is the request's).
    New {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        template: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<std::path::PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default)]
        worktree: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repos: Vec<std::path::PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<usize>,
        /// A `[[host]]` to run it on (issue 49).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Ends pane `pane`'s agent and takes it out of the layout (`team`:
    /// with the helpers it spawned).
    Close {
        pane: String,
        #[serde(default)]
        team: bool,
        /// Its worktree and `hive/` branch are removed too.
        #[serde(default)]
        discard: bool,
    },
    Rename {
        pane: String,
        name: String,
    },
    /// To place `to` among the panes, or into window `window` (neither: to
    /// the end).
    Move {
        pane: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<usize>,
    },
    /// The server itself: pid, config, panes, running turns, clients
    /// attached, start time (`hive ls`).
    Server,
    /// Stop every agent and the server (`hive kill`); answered first.
    Kill,
    /// A single-use pairing code for the web client (`hive web pair`).
    WebPair {
        #[serde(default)]
        read_only: bool,
    },
    /// The devices paired with the web client.
    WebDevices,
    /// Unpairs a device and ends its open connections.
    WebRevoke {
        device: String,
    },
    /// One of hive's operations (src/ops: `agents.list`, `agent.send`, …)
    /// as the agent `agent` (its `can_message` and chain limits apply), or
    /// as an outside caller when absent. This is how `hive mcp` reaches
    /// the console. Answered with `{"ok": true, "result": …}` or
    /// `{"ok": false, "error": {code, message}}`: an operation's refusal is
    /// an answer for the model, not a failed request.
    Op {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        op: String,
        #[serde(default)]
        args: Value,
    },
    /// The forge (issue 48): `hive ctl new ID --issue N`, `hive ctl pr
    /// open|status|merge ID`. Answered when the forge's CLI is done.
    Forge(crate::protocol::forge::ForgeAsk),
    /// The approvals across panes, the audit log, the rules (issue 47,
    /// `hive ctl approvals`).
    Approvals(crate::protocol::verb::ApprovalsAsk),
    /// `/handoff` (issue 50): `from`'s work goes on in another pane.
    Handoff(crate::protocol::carry::Handoff),
    /// `/move @HOST` (issue 50): a step of moving a live pane to another
    /// host's server and back (`Go` from `hive ctl move --host`, the rest
    /// between the two servers).
    Relocate(crate::protocol::carry::Relocate),
    /// `/repo add` (issue 52): the repository of `repo` (absolute) joins
    /// pane `pane`'s workspace.
    AddRepo {
        pane: String,
        repo: std::path::PathBuf,
    },
    /// `/account NAME` (issue 51): the pane goes on under account `name`
    /// with its conversation, now or when its turn ends.
    Account {
        pane: String,
        name: String,
    },
}

impl Call {
    /// The verb this line asks for (`hive ctl`'s encoding of the one
    /// request, src/protocol/verb.rs); an `op` is handed back, its
    /// operation read by `ops::parse` as the agent it names.
    #[allow(
        clippy::result_large_err,
        reason = "handed back whole to the caller's next match, never kept or passed on"
    )]
    pub fn into_verb(self) -> Result<Verb, Call> {
        use crate::protocol::agent::PermissionDecision;
        Ok(match self {
            call @ (Self::New { .. }
            | Self::Close { .. }
            | Self::Rename { .. }
            | Self::Move { .. }
            | Self::Handoff(_)
            | Self::Relocate(_)
            | Self::AddRepo { .. }
            | Self::Account { .. }) => return call.into_pane_edit(),
            Self::List => Verb::List,
            Self::Status { pane } => Verb::Status { pane },
            Self::Send { pane, text, steer } => Verb::Send { pane, text, steer },
            Self::Wait { turn_id } => Verb::Wait {
                target: WaitFor::Turn(turn_id),
                timeout: None,
            },
            Self::Cancel { pane } => Verb::Interrupt { pane },
            Self::Restart { pane } => Verb::Restart { pane },
            Self::Watch { pane } => Verb::Watch { pane },
            Self::History { pane } => Verb::History { pane },
            Self::Approve {
                pane,
                request_id,
                always,
                confirm,
            } => Verb::Answer {
                pane,
                request_id,
                decision: if confirm {
                    PermissionDecision::Option {
                        option_id: crate::runner::CONFIRM_OPTION.into(),
                    }
                } else {
                    PermissionDecision::allow(always)
                },
            },
            Self::Deny {
                pane,
                request_id,
                reason,
            } => Verb::Answer {
                pane,
                request_id,
                decision: PermissionDecision::Deny {
                    reason: deny_reason(reason, "hive ctl"),
                },
            },
            Self::Server => Verb::Server,
            Self::Kill => Verb::Stop,
            Self::Forge(ask) => Verb::Forge(ask),
            Self::Approvals(ask) => Verb::Approvals(ask),
            Self::WebPair { read_only } => Verb::Web(WebVerb::Pair {
                role: if read_only {
                    Role::ReadOnly
                } else {
                    Role::Full
                },
            }),
            Self::WebDevices => Verb::Web(WebVerb::Devices),
            Self::WebRevoke { device } => Verb::Web(WebVerb::Revoke { device }),
            op @ Self::Op { .. } => return Err(op),
        })
    }
    /// `into_verb` for the calls that make, change or move a pane.
    #[allow(
        clippy::result_large_err,
        reason = "handed back whole to the caller's next match, never kept or passed on"
    )]
    fn into_pane_edit(self) -> Result<Verb, Call> {
        Ok(match self {
            Self::New {
                pane,
                template,
                provider,
                cwd,
                model,
                worktree,
                repos,
                name,
                window,
                host,
            } => Verb::New(crate::protocol::edit::NewPane {
                id: pane,
                template,
                provider,
                cwd,
                model,
                worktree,
                repos,
                name,
                window,
                host,
            }),
            Self::Close {
                pane,
                team,
                discard,
            } => Verb::Close {
                pane,
                team,
                discard,
            },
            Self::Rename { pane, name } => Verb::Rename { pane, name },
            Self::Move {
                pane,
                window: Some(window),
                ..
            } => Verb::Window { pane, window },
            Self::Move { pane, to, .. } => Verb::Move {
                pane,
                // Neither: to the end.
                to: to.unwrap_or(usize::MAX),
            },
            Self::Handoff(h) => Verb::Handoff(h),
            Self::Relocate(r) => Verb::Relocate(r),
            Self::AddRepo { pane, repo } => Verb::AddRepo { pane, repo },
            Self::Account { pane, name } => Verb::Account { pane, name },
            other => return Err(other),
        })
    }
}

/// What a deny says to the agent: the reason given, or who denied it.
pub(crate) fn deny_reason(reason: Option<String>, by: &str) -> String {
    match reason {
        Some(r) if !r.trim().is_empty() => r,
        _ => format!("denied by the user (through {by})"),
    }
}

/// Seed 002 §6's error codes plus the few a console adds. Each has its own
/// exit code in `hive ctl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Not a request this server understands.
    BadRequest,
    /// No pane with that id (seed: no such session).
    SessionNotFound,
    /// No running or recently finished turn with that id.
    TurnNotFound,
    /// The pane's provider cannot do this (seed: unsupported CLI type).
    UnsupportedCliType,
    /// The pane's agent is not running.
    ProcessCrash,
    /// Not now: nothing to cancel, nothing to restart.
    InvalidState,
    /// The connecting process belongs to another user.
    PermissionDenied,
    /// The hive is shutting down or fell over mid-request.
    Unavailable,
}

impl ErrorCode {
    /// `hive ctl`'s exit status for this error (1 is a failed turn, 2 a
    /// usage error, 9 no hive to talk to).
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            ErrorCode::BadRequest => 2,
            ErrorCode::SessionNotFound => 3,
            ErrorCode::TurnNotFound => 4,
            ErrorCode::UnsupportedCliType => 5,
            ErrorCode::ProcessCrash => 6,
            ErrorCode::InvalidState => 7,
            ErrorCode::PermissionDenied => 8,
            ErrorCode::Unavailable => 9,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct CtlError {
    pub code: ErrorCode,
    pub message: String,
}

impl CtlError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// One reply line: `result` or `error`, never both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The request's id; absent when the request line could not be read.
    pub id: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CtlError>,
}

impl Reply {
    pub fn new(id: Option<u64>, outcome: Result<Value, CtlError>) -> Self {
        match outcome {
            Ok(v) => Self {
                id,
                result: Some(v),
                error: None,
            },
            Err(e) => Self {
                id,
                result: None,
                error: Some(e),
            },
        }
    }
}

/// One streamed event of `watch`: the pane and the upsert or turn event, in
/// exactly the JSON `hive run --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventLine {
    pub pane: String,
    pub event: Output,
}

/// `watch`'s line for an upsert whose text only grew since the item's last
/// line to this watcher: the upsert's JSON with `delta` (the appended text)
/// in place of `content`, so a long answer costs its length once, not once
/// per update (issue 36).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaLine<'a> {
    pub pane: Cow<'a, str>,
    pub event: TextDelta<'a>,
}

/// An upsert of a message or thinking item, minus the text it already sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextDelta<'a> {
    pub turn_id: Cow<'a, str>,
    pub session_id: Cow<'a, str>,
    pub item_id: Cow<'a, str>,
    pub source_timestamp: DateTime<Utc>,
    pub emitted_at: DateTime<Utc>,
    pub status: UpsertStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<Cow<'a, str>>,
    /// `message` or `thinking`, as in the upsert.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    pub delta: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<Cow<'a, str>>,
}

impl<'a> TextDelta<'a> {
    /// `u` (a message or thinking item) with the text from byte `from` on.
    pub fn of(u: &'a Upsert, text: &'a str, from: usize) -> Option<Self> {
        let (kind, origin, provider_id) = match &u.kind {
            UpsertKind::Message { origin, .. } => ("message", Some(*origin), None),
            UpsertKind::Thinking { provider_id, .. } => {
                ("thinking", None, Some(Cow::Borrowed(provider_id.as_str())))
            }
            UpsertKind::ToolCall { .. } => return None,
        };
        Some(Self {
            turn_id: Cow::Borrowed(&u.turn_id),
            session_id: Cow::Borrowed(&u.session_id),
            item_id: Cow::Borrowed(&u.item_id),
            source_timestamp: u.source_timestamp,
            emitted_at: u.emitted_at,
            status: u.status,
            error_code: u.error_code.as_deref().map(Cow::Borrowed),
            error_message: u.error_message.as_deref().map(Cow::Borrowed),
            kind: Cow::Borrowed(kind),
            delta: Cow::Borrowed(text.get(from..)?),
            origin,
            provider_id,
        })
    }
}

/// A pane as `list` and `status` report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneInfo {
    pub id: String,
    pub name: String,
    pub provider: String,
    #[serde(default)]
    pub model: Option<String>,
    pub state: PaneState,
    /// The approvals the agent waits for, oldest first (`hive ctl approve`
    /// answers the first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Approval>,
    /// The agent's process runs (seed 002 `isAlive`).
    pub alive: bool,
    /// Why the provider could not start, when it could not.
    #[serde(default)]
    pub failed: Option<String>,
    /// The turn in flight.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Turns finished since hive started.
    pub turns: u64,
    pub queue: Vec<String>,
    pub can_steer: bool,
    pub can_interrupt: bool,
    /// What the pane's history session has used so far (restored turns
    /// included).
    #[serde(default)]
    pub usage: UsageInfo,
    /// The agent's process tree as last sampled (`cpu_percent`,
    /// `rss_bytes`, `processes`); null for an agent without a process.
    #[serde(default)]
    pub process: Option<crate::procstat::ProcessSample>,
    /// The queue waits for the vendor's limit to reset (`kind`, `until`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<crate::runner::hold::Hold>,
    /// The agent that spawned it (`agent.spawn`, issue 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawned_by: Option<String>,
    /// A workspace's worktrees, one per repository (issue 52).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<std::path::PathBuf>,
    /// Where and how its agent runs (issue 49): the host and what is
    /// mounted how, the limits and how they apply, the idle stop; one line
    /// each (`provider::process::details`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<String>,
}

/// A pane's state as scripts see it: the runner's, or `awaiting_approval`
/// while a turn cannot go on until someone answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaneState {
    Idle,
    Starting,
    Streaming,
    Cancelling,
    Dead,
    AwaitingApproval,
}

impl PaneState {
    pub fn of(state: TurnState, awaiting_approval: bool) -> Self {
        match state {
            _ if awaiting_approval => PaneState::AwaitingApproval,
            TurnState::Idle => PaneState::Idle,
            TurnState::Starting => PaneState::Starting,
            TurnState::Streaming => PaneState::Streaming,
            TurnState::Cancelling => PaneState::Cancelling,
            TurnState::Dead => PaneState::Dead,
        }
    }
}

/// One approval request as `status`, `list` and `watch` show it: the
/// tool and its arguments as the agent sent them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub request_id: String,
    pub tool: String,
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A destructive request's second card: only its confirm runs it
    /// (`hive ctl approve PANE --confirm`, docs/policy.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
}

impl From<&crate::provider::PermissionRequest> for Approval {
    fn from(r: &crate::provider::PermissionRequest) -> Self {
        let confirm = crate::runner::CONFIRM_OPTION;
        Self {
            request_id: r.request_id.clone(),
            tool: r.tool_name.clone(),
            arguments: r.input.clone(),
            description: r.description.clone(),
            confirm: r.options.iter().any(|o| o.option_id == confirm),
        }
    }
}

/// `watch`'s line when a pane starts waiting for an approval
/// (`approval_requested`, with the request) or one was answered
/// (`approval_settled`, by any client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalLine {
    pub pane: String,
    pub approval: ApprovalEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalEvent {
    ApprovalRequested(Approval),
    ApprovalSettled { request_id: String },
}

/// Token and cost totals as `status` and `list` report them
/// (docs/usage.md): `cost_usd` is null when the agent reported no cost and
/// `[prices]` has none for its model; `cost_estimated` when it comes from
/// `[prices]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageInfo {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub cost_estimated: bool,
}

impl From<&crate::event::Usage> for UsageInfo {
    fn from(u: &crate::event::Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_input_tokens,
            cache_write_tokens: u.cache_creation_input_tokens,
            cost_usd: u.cost_usd,
            cost_estimated: u.cost_estimated && u.cost_usd.is_some(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SendResult {
    pub pane: String,
    pub turn_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Completed,
    Cancelled,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitResult {
    pub pane: String,
    pub turn_id: String,
    pub status: TurnOutcome,
    /// The agent's completed messages of the turn, joined by blank lines.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_as_documented() {
        let r: Request =
            serde_json::from_str(r#"{"id":7,"method":"send","pane":"demo","text":"hi"}"#).unwrap();
        assert_eq!(
            r,
            Request {
                id: 7,
                call: Call::Send {
                    pane: "demo".into(),
                    text: "hi".into(),
                    steer: false
                }
            }
        );
        let r: Request = serde_json::from_str(r#"{"id":1,"method":"watch"}"#).unwrap();
        assert_eq!(r.call, Call::Watch { pane: None });
        assert!(serde_json::from_str::<Request>(r#"{"id":1,"method":"explode"}"#).is_err());
        assert!(
            serde_json::from_str::<Request>(r#"{"id":1,"method":"status","pan":"x"}"#).is_err()
        );
        let r: Request = serde_json::from_str(
            r#"{"id":2,"method":"op","agent":"arch","op":"agent.send","args":{"agent":"b","text":"x"}}"#,
        )
        .unwrap();
        assert_eq!(
            r.call,
            Call::Op {
                agent: Some("arch".into()),
                op: "agent.send".into(),
                args: serde_json::json!({"agent": "b", "text": "x"}),
            }
        );
    }

    #[test]
    fn a_forge_request_is_one_line_with_its_ask() {
        use crate::protocol::forge::ForgeAsk;
        let line =
            r#"{"id":3,"method":"forge","ask":"issue","pane":"fix","number":7,"template":"echo"}"#;
        let r: Request = serde_json::from_str(line).unwrap();
        let ask = ForgeAsk::Issue {
            pane: "fix".into(),
            number: 7,
            template: Some("echo".into()),
            provider: None,
            cwd: None,
            model: None,
            window: None,
        };
        assert_eq!(r.call, Call::Forge(ask.clone()));
        let back: Request = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(r.call.into_verb().unwrap(), Verb::Forge(ask));
        let bad = r#"{"id":3,"method":"forge","ask":"pr_merge","pane":"x","force":true}"#;
        assert!(serde_json::from_str::<Request>(bad).is_err());
    }

    #[test]
    fn errors_carry_seed_codes() {
        let reply = Reply::new(
            Some(3),
            Err(CtlError::new(ErrorCode::SessionNotFound, "no pane `x`")),
        );
        assert_eq!(
            serde_json::to_string(&reply).unwrap(),
            r#"{"id":3,"error":{"code":"SESSION_NOT_FOUND","message":"no pane `x`"}}"#
        );
    }
}
