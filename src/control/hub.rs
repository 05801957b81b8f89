//! The control socket's side of the server's loop: answers `hive ctl`'s
//! verbs from the pane registry (src/panes/) and turns actions into
//! `RunnerCommand`s.
//!
//! It owns no runner and keeps no copy of a pane: the loop shows it every
//! `PaneUpdate` after the registry took it in, for what only `hive ctl`
//! needs (a `send` waiting for its turn, finished turns' answers for
//! `wait`, the watchers' streams), and hands it each verb with the
//! registry; it hands back the command, which the door sends.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::protocol::{
    Approval, ApprovalEvent, Call, CtlError, ErrorCode, PaneInfo, PaneState, SendResult,
    TurnOutcome, WaitResult,
};
use crate::event::Origin;
use crate::panes::{PaneRecord, Panes, Started};
use crate::protocol::verb::{Verb, WaitFor};
use crate::provider::PermissionDecision;
use crate::runner::mirror::Sends;
use crate::runner::{Decider, PaneEvent, PaneUpdate, RunnerCommand, SubmitMode, TurnState};
use crate::text::SharedText;
use crate::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

/// Finished turns remembered for `wait` after they ended.
const FINISHED_KEPT: usize = 256;

pub(crate) type Responder = oneshot::Sender<Result<Value, CtlError>>;

/// A `watch` stream: its lines, and what the connection has not written
/// yet (the one backpressure rule, src/backlog.rs).
#[derive(Debug, Clone)]
pub struct Watch {
    pub tx: mpsc::UnboundedSender<Arc<str>>,
    pub backlog: Arc<crate::backlog::Backlog>,
}

/// One request on its way from a connection to the app loop.
#[derive(Debug)]
pub struct ControlRequest {
    pub call: Call,
    pub reply: Responder,
    /// `watch` only: where the event lines go (pre-serialized, one per line).
    pub events: Option<Watch>,
}

/// What the hub answers `list` and `status` with, of one pane's record.
fn info(p: &PaneRecord) -> PaneInfo {
    let caps = p.caps().unwrap_or_default();
    PaneInfo {
        id: p.agent.id.clone(),
        name: p.agent.display_name().to_owned(),
        provider: p.agent.provider.clone(),
        model: p.model().map(str::to_owned),
        state: match p.started {
            Started::SettingUp | Started::Starting => PaneState::Starting,
            _ => PaneState::of(p.live.state, p.live.awaiting_approval()),
        },
        approvals: p.live.approvals.iter().map(Approval::from).collect(),
        alive: p.alive(),
        failed: p.failed().map(str::to_owned),
        turn_id: p.live.turn.clone(),
        turns: p.live.turns,
        queue: p.live.queue.clone(),
        can_steer: caps.queue_while_streaming || caps.interrupt,
        can_interrupt: caps.interrupt,
        usage: (&p.usage).into(),
        process: p.process,
        held: p.held.clone(),
        spawned_by: p.parent.clone(),
        repos: p.agent.extra_roots.clone(),
        host: crate::provider::process::details(&p.agent),
    }
}

struct TurnRecord {
    /// The agent's completed messages by item, in order of first completion.
    texts: IndexMap<String, SharedText>,
    /// Set when the turn ended; its `text` is left empty (see `answer`).
    result: Option<WaitResult>,
}

impl TurnRecord {
    /// The finished turn's result with its text: the agent's completed
    /// messages joined by blank lines.
    fn answer(&self) -> Option<WaitResult> {
        let mut result = self.result.clone()?;
        for content in self.texts.values() {
            if !result.text.is_empty() {
                result.text.push_str("\n\n");
            }
            content.with_str(|s| result.text.push_str(s));
        }
        Some(result)
    }
}

pub(crate) struct Hub {
    /// By slot: the `send`s waiting for their message to be bound to a turn.
    sends: Vec<Sends<Responder>>,
    turns: HashMap<String, TurnRecord>,
    finished: VecDeque<String>,
    waiters: HashMap<String, Vec<Responder>>,
    /// `watch` streams, each with what it last got of each open text.
    subscribers: Vec<Subscriber>,
}

/// The registry the hub reads (src/panes/): `X` is the server's part of a
/// slot, which the hub never reads.
type Reg<X> = Panes<X>;

impl Hub {
    pub(crate) fn new() -> Self {
        Self {
            sends: Vec::new(),
            turns: HashMap::new(),
            finished: VecDeque::new(),
            waiters: HashMap::new(),
            subscribers: Vec::new(),
        }
    }

    fn sends_of(&mut self, slot: usize) -> &mut Sends<Responder> {
        if self.sends.len() <= slot {
            self.sends.resize_with(slot + 1, Sends::default);
        }
        &mut self.sends[slot]
    }

    /// Sees one runner event, after the registry did.
    pub(crate) fn observe<X>(&mut self, panes: &Reg<X>, update: &PaneUpdate) {
        let i = update.pane;
        let Some(p) = panes.record(i) else {
            return;
        };
        let id = p.id();
        let bound = self.sends_of(i).observe(&update.event);
        match &update.event {
            PaneEvent::State(TurnState::Idle) => {
                // A drained message is bound before the pane is idle
                // again; one still waiting was removed from the queue.
                for reply in self.sends_of(i).take(|s| s.left_queue) {
                    let _ = reply.send(Err(CtlError::new(
                        ErrorCode::InvalidState,
                        format!(
                            "the message was taken out of pane `{id}`'s queue before it was sent"
                        ),
                    )));
                }
            }
            PaneEvent::State(TurnState::Dead) => {
                for reply in self.sends_of(i).take(|_| true) {
                    let _ = reply.send(Err(CtlError::new(
                        ErrorCode::ProcessCrash,
                        format!(
                            "the agent of pane `{id}` stopped before the message was sent; \
                             it waits in the pane's queue (`hive ctl restart {id}`)"
                        ),
                    )));
                }
            }
            PaneEvent::Permission(req) => {
                let approval = ApprovalEvent::ApprovalRequested(Approval::from(req));
                self.broadcast_approval(id, i, approval);
            }
            PaneEvent::PermissionSettled { request_id } => {
                let request_id = request_id.clone();
                self.broadcast_approval(id, i, ApprovalEvent::ApprovalSettled { request_id });
            }
            PaneEvent::Upsert(u) => {
                if let Some((reply, turn_id)) = bound {
                    let result = SendResult {
                        pane: id.to_owned(),
                        turn_id,
                    };
                    let _ = reply.send(Ok(to_value(&result)));
                }
                self.upsert(u);
                self.broadcast_upsert(id, i, u);
            }
            PaneEvent::Turn(t) => {
                for s in &mut self.subscribers {
                    // Its items are done; one updated later goes whole.
                    s.sent.turn(i, t);
                }
                self.turn(id, t);
                self.broadcast(id, i, t);
            }
            _ => {}
        }
    }

    fn record(&mut self, turn_id: &str) -> &mut TurnRecord {
        self.turns
            .entry(turn_id.to_owned())
            .or_insert_with(|| TurnRecord {
                texts: IndexMap::new(),
                result: None,
            })
    }

    fn upsert(&mut self, u: &Upsert) {
        let UpsertKind::Message { content, origin } = &u.kind else {
            return;
        };
        if u.status != UpsertStatus::Complete {
            return;
        }
        match origin {
            Origin::User => {
                self.record(&u.turn_id);
            }
            Origin::Agent => {
                let record = self.record(&u.turn_id);
                record.texts.insert(u.item_id.clone(), content.clone());
            }
            Origin::System => {}
        }
    }

    /// Pane `pane`'s turn event: a turn's end answers whoever waits on it.
    fn turn(&mut self, pane: &str, t: &TurnEvent) {
        let turn_id = t.turn_id().to_owned();
        let (status, error_code, error_message) = match t {
            TurnEvent::TurnStarted { .. } => {
                self.record(&turn_id);
                return;
            }
            TurnEvent::TurnComplete { status, .. } => (
                match status {
                    TurnStatus::Completed => TurnOutcome::Completed,
                    TurnStatus::Cancelled => TurnOutcome::Cancelled,
                },
                None,
                None,
            ),
            TurnEvent::TurnError {
                error_code,
                error_message,
                ..
            } => (
                TurnOutcome::Error,
                Some(error_code.clone()),
                Some(error_message.clone()),
            ),
        };
        let result = WaitResult {
            pane: pane.to_owned(),
            turn_id: turn_id.clone(),
            status,
            // Filled from the record's shared texts when asked for: a copy
            // kept here would hold every finished answer twice.
            text: String::new(),
            error_code,
            error_message,
        };
        let waiters = self.waiters.remove(&turn_id).unwrap_or_default();
        let record = self.record(&turn_id);
        record.result = Some(result);
        if !waiters.is_empty() {
            let answer = to_value(&record.answer());
            for reply in waiters {
                let _ = reply.send(Ok(answer.clone()));
            }
        }
        self.finished.push_back(turn_id);
        while self.finished.len() > FINISHED_KEPT {
            if let Some(old) = self.finished.pop_front() {
                self.turns.remove(&old);
            }
        }
    }

    /// Answers one verb of `hive ctl` from the registry; the command it
    /// makes, if any, is for the server's door (src/server/door.rs) to send.
    #[must_use = "the command is the caller's to send"]
    pub(crate) fn answer<X>(
        &mut self,
        panes: &Reg<X>,
        verb: Verb,
        reply: Responder,
        events: Option<Watch>,
    ) -> Option<(usize, RunnerCommand)> {
        match self.call(panes, verb, reply, events) {
            Ok(cmd) => cmd,
            Err((reply, e)) => {
                let _ = reply.send(Err(e));
                None
            }
        }
    }

    fn call<X>(
        &mut self,
        panes: &Reg<X>,
        verb: Verb,
        reply: Responder,
        events: Option<Watch>,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        macro_rules! pane {
            ($id:expr) => {
                match find(panes, $id) {
                    Ok(i) => (i, &panes[i].record),
                    Err(e) => return Err((reply, e)),
                }
            };
        }
        match verb {
            Verb::List => {
                let _ = reply.send(Ok(list_answer(panes)));
                Ok(None)
            }
            Verb::Status { pane } => {
                let (_, p) = pane!(&pane);
                let _ = reply.send(Ok(to_value(&info(p))));
                Ok(None)
            }
            Verb::Send { pane, text, steer } => {
                let (i, p) = pane!(&pane);
                if let Err(e) = sendable(p, &text, steer) {
                    return Err((reply, e));
                }
                Ok(Some((i, self.submit(i, text, steer, reply))))
            }
            Verb::Wait {
                target: WaitFor::Turn(turn_id),
                ..
            } => self.wait(turn_id, reply).map(|()| None),
            Verb::Interrupt { pane } => {
                let (i, p) = pane!(&pane);
                let turn_id = match cancellable(p) {
                    Ok(turn_id) => turn_id,
                    Err(e) => return Err((reply, e)),
                };
                let _ = reply.send(Ok(json!({ "pane": pane, "turn_id": turn_id })));
                Ok(Some((i, RunnerCommand::InterruptFrom("hive ctl".into()))))
            }
            Verb::Restart { pane } => {
                let (i, p) = pane!(&pane);
                if let Err(e) = restartable(p) {
                    return Err((reply, e));
                }
                let _ = reply.send(Ok(json!({ "pane": pane })));
                Ok(Some((i, RunnerCommand::Restart)))
            }
            Verb::Watch { pane } => {
                let filter = match pane {
                    Some(id) => Some(pane!(&id).0),
                    None => None,
                };
                self.watch(filter, events, reply)
            }
            Verb::History { pane } => {
                let (_, p) = pane!(&pane);
                let _ = reply.send(Ok(json!({ "pane": pane, "agent": p.id() })));
                Ok(None)
            }
            Verb::Answer {
                pane,
                request_id: id,
                decision,
            } => {
                let (i, p) = pane!(&pane);
                answer_approval(i, p, id.as_deref(), decision, reply)
            }
            // The door answers the rest (edits, the server) itself.
            other => {
                let e = format!("hive ctl does not {} here", other.name());
                Err((reply, CtlError::new(ErrorCode::BadRequest, e)))
            }
        }
    }

    /// A checked `send`: its turn is awaited for the caller, the text
    /// queued or steered in.
    fn submit(&mut self, i: usize, text: String, steer: bool, reply: Responder) -> RunnerCommand {
        self.sends_of(i).sent(text.clone(), reply);
        let mode = if steer {
            SubmitMode::Steer
        } else {
            SubmitMode::Queue
        };
        RunnerCommand::Submit { text, mode }
    }

    /// `watch`: the caller's event stream hears every pane, or one.
    fn watch(
        &mut self,
        filter: Option<usize>,
        events: Option<Watch>,
        reply: Responder,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        let Some(tx) = events else {
            let e = CtlError::new(ErrorCode::BadRequest, "watch needs an event stream");
            return Err((reply, e));
        };
        self.subscribers.push(Subscriber {
            pane: filter,
            watch: tx,
            sent: crate::protocol::delta::TextSent::default(),
            missed: 0,
            fresh: false,
        });
        let _ = reply.send(Ok(json!({})));
        Ok(None)
    }

    /// Answers at once for a finished turn, later for a running one.
    fn wait(&mut self, turn_id: String, reply: Responder) -> Result<(), (Responder, CtlError)> {
        match self.turns.get(&turn_id) {
            Some(
                record @ TurnRecord {
                    result: Some(_), ..
                },
            ) => {
                let _ = reply.send(Ok(to_value(&record.answer())));
            }
            Some(_) => self.waiters.entry(turn_id).or_default().push(reply),
            None => {
                return Err((
                    reply,
                    CtlError::new(
                        ErrorCode::TurnNotFound,
                        format!("no turn `{turn_id}` is running or finished recently in this hive"),
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `list`'s answer: every open pane and their usage summed.
fn list_answer<X>(panes: &Reg<X>) -> Value {
    let list: Vec<_> = panes.open().map(info).collect();
    let mut total = crate::event::Usage::default();
    for p in panes.open() {
        total.accumulate(&p.usage);
    }
    let usage = super::protocol::UsageInfo::from(&total);
    json!({ "panes": list, "usage": usage })
}

/// The open pane `id`'s slot.
fn find<X>(panes: &Reg<X>, id: &str) -> Result<usize, CtlError> {
    panes.find(id).ok_or_else(|| {
        CtlError::new(
            ErrorCode::SessionNotFound,
            format!("no pane `{id}`; panes: {}", panes.ids()),
        )
    })
}

/// Why pane `p` cannot take `text` now (`steer`: mid-turn), if it cannot.
fn sendable(p: &PaneRecord, text: &str, steer: bool) -> Result<(), CtlError> {
    if text.trim().is_empty() {
        return Err(CtlError::new(ErrorCode::BadRequest, "empty message"));
    }
    runnable(p)?;
    let caps = p.caps().unwrap_or_default();
    if steer && !(caps.queue_while_streaming || caps.interrupt) {
        return Err(CtlError::new(
            ErrorCode::UnsupportedCliType,
            format!(
                "pane `{}` ({}) can neither take a message mid-turn nor be \
                 interrupted; send without --steer to queue it",
                p.id(),
                p.agent.provider
            ),
        ));
    }
    Ok(())
}

/// The turn an interrupt of pane `p` would end.
fn cancellable(p: &PaneRecord) -> Result<String, CtlError> {
    runnable(p)?;
    let pane = p.id();
    if !p.caps().is_some_and(|c| c.interrupt) {
        return Err(CtlError::new(
            ErrorCode::UnsupportedCliType,
            format!("pane `{pane}` ({}) cannot be interrupted", p.agent.provider),
        ));
    }
    p.live.busy_turn().map(str::to_owned).ok_or_else(|| {
        CtlError::new(
            ErrorCode::InvalidState,
            format!("pane `{pane}` has no turn running"),
        )
    })
}

fn restartable(p: &PaneRecord) -> Result<(), CtlError> {
    let pane = p.id();
    if let Started::Failed(e) = &p.started {
        return Err(CtlError::new(
            ErrorCode::ProcessCrash,
            format!("pane `{pane}` could not start ({e}); fix its config and start hive again"),
        ));
    }
    if p.live.state != TurnState::Dead {
        return Err(CtlError::new(
            ErrorCode::InvalidState,
            format!("the agent of pane `{pane}` is running; nothing to restart"),
        ));
    }
    Ok(())
}

/// `approve` / `deny`: the decision goes to pane `i`'s runner, which
/// tells every client the approval was settled.
fn answer_approval(
    i: usize,
    p: &PaneRecord,
    request_id: Option<&str>,
    decision: PermissionDecision,
    reply: Responder,
) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
    let Some(req) = p.approval(request_id) else {
        let id = p.id();
        let e = match request_id {
            Some(r) => format!("pane `{id}` waits for no approval `{r}`"),
            None => format!("pane `{id}` waits for no approval"),
        };
        return Err((reply, CtlError::new(ErrorCode::InvalidState, e)));
    };
    if let Err(e) = offered(req, &decision) {
        return Err((reply, CtlError::new(ErrorCode::InvalidState, e)));
    }
    let request_id = req.request_id.clone();
    let _ = reply.send(Ok(json!({
        "pane": p.id(), "request_id": request_id, "tool": req.tool_name,
        "decision": decision_name(&decision),
    })));
    Ok(Some((
        i,
        RunnerCommand::Permission {
            request_id,
            decision,
            by: Decider::Unknown,
        },
    )))
}

/// Whether the card `req` can take `decision`: an option it offers, and
/// on a destructive request's second card only its confirm (a plain
/// allow there would be refused by the runner, after `ctl` said "done").
fn offered(
    req: &crate::provider::PermissionRequest,
    decision: &PermissionDecision,
) -> Result<(), String> {
    let confirm = crate::runner::CONFIRM_OPTION;
    let second = req.options.iter().any(|o| o.option_id == confirm);
    match decision {
        PermissionDecision::Option { option_id }
            if !req.options.iter().any(|o| o.option_id == *option_id) =>
        {
            Err(if option_id == confirm {
                format!(
                    "`{}` is not a destructive request's second card: approve it without --confirm",
                    req.request_id
                )
            } else {
                format!("`{}` offers no option `{option_id}`", req.request_id)
            })
        }
        PermissionDecision::AllowOnce | PermissionDecision::AllowAlways if second => Err(format!(
            "`{}` is a destructive request's second card: `--confirm` runs it",
            req.request_id
        )),
        _ => Ok(()),
    }
}

pub(crate) fn decision_name(d: &PermissionDecision) -> &'static str {
    match d {
        PermissionDecision::Option { option_id } if option_id == crate::runner::CONFIRM_OPTION => {
            "confirm"
        }
        PermissionDecision::AllowOnce => "allow_once",
        PermissionDecision::AllowAlways => "allow_always",
        PermissionDecision::Deny { .. } => "deny",
        PermissionDecision::Option { .. } => "option",
    }
}

/// Errors for a pane whose agent cannot take a message now.
fn runnable(p: &PaneRecord) -> Result<(), CtlError> {
    let id = p.id();
    match &p.started {
        Started::Failed(e) => Err(CtlError::new(
            ErrorCode::ProcessCrash,
            format!("pane `{id}` could not start: {e}"),
        )),
        Started::Running(_) if p.live.state == TurnState::Dead => Err(CtlError::new(
            ErrorCode::ProcessCrash,
            format!("the agent of pane `{id}` is not running; `hive ctl restart {id}` starts it"),
        )),
        Started::Starting | Started::Running(_) | Started::SettingUp => Ok(()),
    }
}

/// One event line, or `None` (logged) if it cannot be written.
fn serialized<T: Serialize>(line: &T) -> Option<Arc<str>> {
    match serde_json::to_string(line) {
        Ok(s) => Some(s.into()),
        Err(e) => {
            tracing::warn!("control: cannot serialize an event: {e}");
            None
        }
    }
}

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[path = "hub_panes.rs"]
mod panes;
#[path = "hub_watch.rs"]
mod watch;
use watch::Subscriber;

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
