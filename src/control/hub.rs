//! The control socket's side of the server's loop: answers requests from
//! what the runners have reported and turns actions into `RunnerCommand`s.
//!
//! It owns no runner. The loop shows it every
//! `PaneUpdate` (so it mirrors each pane's state, queue and turns, and
//! streams them to watchers) and hands it each request; it hands back the
//! command to send, which the loop routes like a key press's.

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
use crate::config::AgentConfig;
use crate::event::Origin;
use crate::protocol::verb::{Verb, WaitFor};
use crate::provider::{Capabilities, PermissionDecision};
use crate::runner::{PaneEvent, PaneUpdate, RunnerCommand, SubmitMode, TurnState, mirror};
use crate::text::SharedText;
use crate::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

/// Finished turns remembered for `wait` after they ended.
const FINISHED_KEPT: usize = 256;

pub(crate) type Responder = oneshot::Sender<Result<Value, CtlError>>;

/// One request on its way from a connection to the app loop.
#[derive(Debug)]
pub struct ControlRequest {
    pub call: Call,
    pub reply: Responder,
    /// `watch` only: where the event lines go (pre-serialized, one per line).
    pub events: Option<mpsc::Sender<Arc<str>>>,
}

/// How a pane's runner came up.
#[derive(Debug, Clone)]
pub enum Started {
    Running(Capabilities),
    Failed(String),
    /// Its worktree's setup runs; the agent starts after it (messages sent
    /// meanwhile wait for it).
    SettingUp,
}

struct PaneMirror {
    agent: AgentConfig,
    started: Started,
    model: Option<String>,
    /// The history session's usage: restored totals, then each turn's end.
    usage: crate::event::Usage,
    process: Option<crate::procstat::ProcessSample>,
    held: Option<crate::runner::hold::Hold>,
    /// Closed at runtime: no call finds it; its slot stays so the others
    /// keep their numbers.
    closed: bool,
    /// The agent that spawned it.
    parent: Option<String>,
    /// State, queue, turn, and the `send`s waiting for their message to be
    /// bound to a turn (the one mirror the operations host keeps too).
    m: mirror::PaneMirror<Responder>,
}

impl PaneMirror {
    fn new(agent: AgentConfig, started: Started) -> Self {
        Self {
            agent,
            started,
            model: None,
            usage: crate::event::Usage::default(),
            process: None,
            held: None,
            closed: false,
            parent: None,
            m: mirror::PaneMirror::default(),
        }
    }

    fn caps(&self) -> Option<Capabilities> {
        match &self.started {
            Started::Running(c) => Some(*c),
            Started::Failed(_) | Started::SettingUp => None,
        }
    }

    fn alive(&self) -> bool {
        self.caps().is_some() && self.m.state != TurnState::Dead
    }

    fn info(&self) -> PaneInfo {
        let caps = self.caps().unwrap_or_default();
        PaneInfo {
            id: self.agent.id.clone(),
            name: self.agent.display_name().to_owned(),
            provider: self.agent.provider.clone(),
            model: self.model.clone().or_else(|| self.agent.model.clone()),
            state: match self.started {
                Started::SettingUp => PaneState::Starting,
                _ => PaneState::of(self.m.state, self.m.awaiting_approval()),
            },
            approvals: self.m.approvals.iter().map(Approval::from).collect(),
            alive: self.alive(),
            failed: match &self.started {
                Started::Failed(e) => Some(e.clone()),
                Started::Running(_) | Started::SettingUp => None,
            },
            turn_id: self.m.turn.clone(),
            turns: self.m.turns,
            queue: self.m.queue.clone(),
            can_steer: caps.queue_while_streaming || caps.interrupt,
            can_interrupt: caps.interrupt,
            usage: (&self.usage).into(),
            process: self.process,
            held: self.held.clone(),
            spawned_by: self.parent.clone(),
        }
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
    panes: Vec<PaneMirror>,
    /// The open panes' slots in the order consoles show them (`list`).
    order: Vec<usize>,
    turns: HashMap<String, TurnRecord>,
    finished: VecDeque<String>,
    waiters: HashMap<String, Vec<Responder>>,
    /// `watch` streams, each with what it last got of each open text.
    subscribers: Vec<Subscriber>,
}

impl Hub {
    /// One mirror per configured agent, in pane order.
    pub(crate) fn new(agents: impl IntoIterator<Item = (AgentConfig, Started)>) -> Self {
        let panes: Vec<PaneMirror> = agents
            .into_iter()
            .map(|(agent, started)| PaneMirror::new(agent, started))
            .collect();
        Self {
            order: (0..panes.len()).collect(),
            panes,
            turns: HashMap::new(),
            finished: VecDeque::new(),
            waiters: HashMap::new(),
            subscribers: Vec::new(),
        }
    }

    /// Sees one runner event before the app applies it.
    pub(crate) fn observe(&mut self, update: &PaneUpdate) {
        let i = update.pane;
        let Some(p) = self.panes.get_mut(i) else {
            return;
        };
        let bound = p.m.observe(&update.event);
        match &update.event {
            PaneEvent::State(TurnState::Idle) => {
                // A drained message is bound before the pane is idle
                // again; one still waiting was removed from the queue.
                for reply in p.m.take_sends(|s| s.left_queue) {
                    let _ = reply.send(Err(CtlError::new(
                        ErrorCode::InvalidState,
                        format!(
                            "the message was taken out of pane `{}`'s queue before it was sent",
                            p.agent.id
                        ),
                    )));
                }
            }
            PaneEvent::State(TurnState::Dead) => {
                for reply in p.m.take_sends(|_| true) {
                    let _ = reply.send(Err(CtlError::new(
                        ErrorCode::ProcessCrash,
                        format!(
                            "the agent of pane `{}` stopped before the message was sent; \
                             it waits in the pane's queue (`hive ctl restart {}`)",
                            p.agent.id, p.agent.id
                        ),
                    )));
                }
            }
            PaneEvent::Session(info) => {
                if let Some(m) = &info.model {
                    p.model = Some(m.clone());
                }
            }
            PaneEvent::Attached { capabilities, .. } => {
                p.started = Started::Running(*capabilities);
            }
            PaneEvent::Permission(req) => {
                let approval = ApprovalEvent::ApprovalRequested(Approval::from(req));
                self.broadcast_approval(i, approval);
            }
            PaneEvent::PermissionSettled { request_id } => {
                let request_id = request_id.clone();
                self.broadcast_approval(i, ApprovalEvent::ApprovalSettled { request_id });
            }
            PaneEvent::Process(sample) => p.process = *sample,
            PaneEvent::Held(hold) => p.held.clone_from(hold),
            PaneEvent::Upsert(u) => {
                if let Some((reply, turn_id)) = bound {
                    let result = SendResult {
                        pane: self.panes[i].agent.id.clone(),
                        turn_id,
                    };
                    let _ = reply.send(Ok(to_value(&result)));
                }
                self.upsert(u);
                self.broadcast_upsert(i, u);
            }
            PaneEvent::Turn(t) => {
                for s in &mut self.subscribers {
                    // Its items are done; one updated later goes whole.
                    s.sent.turn(i, t);
                }
                self.turn(i, t);
                self.broadcast(i, t);
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

    fn turn(&mut self, i: usize, t: &TurnEvent) {
        let turn_id = t.turn_id().to_owned();
        let p = &mut self.panes[i];
        let (status, error_code, error_message) = match t {
            TurnEvent::TurnStarted { model_id, .. } => {
                if !model_id.is_empty() {
                    p.model = Some(model_id.clone());
                }
                self.record(&turn_id);
                return;
            }
            TurnEvent::TurnComplete { status, usage, .. } => {
                if let Some(u) = usage {
                    p.usage.accumulate(u);
                }
                (
                    match status {
                        TurnStatus::Completed => TurnOutcome::Completed,
                        TurnStatus::Cancelled => TurnOutcome::Cancelled,
                    },
                    None,
                    None,
                )
            }
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
        let pane = p.agent.id.clone();
        let result = WaitResult {
            pane,
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

    /// Answers one verb of `hive ctl`; the command it makes, if any, is
    /// for the server's door (src/server/door.rs) to send.
    #[must_use = "the command is the caller's to send"]
    pub(crate) fn answer(
        &mut self,
        verb: Verb,
        reply: Responder,
        events: Option<mpsc::Sender<Arc<str>>>,
    ) -> Option<(usize, RunnerCommand)> {
        match self.call(verb, reply, events) {
            Ok(cmd) => cmd,
            Err((reply, e)) => {
                let _ = reply.send(Err(e));
                None
            }
        }
    }

    fn find(&self, id: &str) -> Result<usize, CtlError> {
        self.panes
            .iter()
            .position(|p| p.agent.id == id && !p.closed)
            .ok_or_else(|| {
                let ids: Vec<_> = self.live().map(|p| p.agent.id.as_str()).collect();
                CtlError::new(
                    ErrorCode::SessionNotFound,
                    format!("no pane `{id}`; panes: {}", ids.join(", ")),
                )
            })
    }

    fn call(
        &mut self,
        verb: Verb,
        reply: Responder,
        events: Option<mpsc::Sender<Arc<str>>>,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        macro_rules! pane {
            ($id:expr) => {
                match self.find($id) {
                    Ok(i) => i,
                    Err(e) => return Err((reply, e)),
                }
            };
        }
        match verb {
            Verb::List => {
                let panes: Vec<_> = self.live().map(PaneMirror::info).collect();
                let mut total = crate::event::Usage::default();
                for p in self.live() {
                    total.accumulate(&p.usage);
                }
                let usage = super::protocol::UsageInfo::from(&total);
                let _ = reply.send(Ok(json!({ "panes": panes, "usage": usage })));
                Ok(None)
            }
            Verb::Status { pane } => {
                let i = pane!(&pane);
                let _ = reply.send(Ok(to_value(&self.panes[i].info())));
                Ok(None)
            }
            Verb::Send { pane, text, steer } => {
                let i = pane!(&pane);
                self.submit(i, &pane, text, steer, reply)
            }
            Verb::Wait {
                target: WaitFor::Turn(turn_id),
                ..
            } => self.wait(turn_id, reply).map(|()| None),
            Verb::Interrupt { pane } => {
                let i = pane!(&pane);
                let turn_id = match self.cancellable(i, &pane) {
                    Ok(turn_id) => turn_id,
                    Err(e) => return Err((reply, e)),
                };
                let _ = reply.send(Ok(json!({ "pane": pane, "turn_id": turn_id })));
                Ok(Some((i, RunnerCommand::InterruptFrom("hive ctl".into()))))
            }
            Verb::Restart { pane } => {
                let i = pane!(&pane);
                if let Err(e) = self.restartable(i, &pane) {
                    return Err((reply, e));
                }
                let _ = reply.send(Ok(json!({ "pane": pane })));
                Ok(Some((i, RunnerCommand::Restart)))
            }
            Verb::Watch { pane } => {
                let filter = match pane {
                    Some(id) => Some(pane!(&id)),
                    None => None,
                };
                self.watch(filter, events, reply)
            }
            Verb::History { pane } => {
                let i = pane!(&pane);
                let agent = &self.panes[i].agent.id;
                let _ = reply.send(Ok(json!({ "pane": pane, "agent": agent })));
                Ok(None)
            }
            Verb::Answer {
                pane,
                request_id: id,
                decision,
            } => self.answer_approval(pane!(&pane), id.as_deref(), decision, reply),
            // The door answers the rest (edits, the server) itself.
            other => {
                let e = format!("hive ctl does not {} here", other.name());
                Err((reply, CtlError::new(ErrorCode::BadRequest, e)))
            }
        }
    }

    /// `send`: the text goes to pane `i`'s runner; the reply waits in the
    /// pane's pending sends until the runner takes it.
    fn submit(
        &mut self,
        i: usize,
        pane: &str,
        text: String,
        steer: bool,
        reply: Responder,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        if let Err(e) = self.sendable(i, pane, &text, steer) {
            return Err((reply, e));
        }
        let p = &mut self.panes[i];
        p.m.sent(text.clone(), reply);
        let mode = if steer {
            SubmitMode::Steer
        } else {
            SubmitMode::Queue
        };
        Ok(Some((i, RunnerCommand::Submit { text, mode })))
    }

    /// `watch`: the caller's event stream hears every pane, or one.
    fn watch(
        &mut self,
        filter: Option<usize>,
        events: Option<mpsc::Sender<Arc<str>>>,
        reply: Responder,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        let Some(tx) = events else {
            let e = CtlError::new(ErrorCode::BadRequest, "watch needs an event stream");
            return Err((reply, e));
        };
        self.subscribers.push(Subscriber {
            pane: filter,
            tx,
            sent: crate::protocol::delta::TextSent::default(),
        });
        let _ = reply.send(Ok(json!({})));
        Ok(None)
    }

    /// How each pane's runner came up, once they all have (the socket is
    /// bound before, so agents can be told where it is).
    /// Pane `i` continues a history session that had used `totals` over
    /// `turns` finished turns, its agent last on `model` (at start, and
    /// after `/resume`): `list` says so before the next turn.
    pub(crate) fn set_restored(
        &mut self,
        i: usize,
        totals: crate::event::Usage,
        turns: u64,
        model: Option<String>,
    ) {
        if let Some(p) = self.panes.get_mut(i) {
            p.usage = totals;
            p.m.turns = turns;
            if model.is_some() {
                p.model = model;
            }
        }
    }

    pub(crate) fn set_started(&mut self, started: Vec<Started>) {
        for (p, s) in self.panes.iter_mut().zip(started) {
            p.started = s;
        }
    }

    /// Why pane `i` cannot take `text` now (`steer`: mid-turn), if it cannot.
    fn sendable(&self, i: usize, pane: &str, text: &str, steer: bool) -> Result<(), CtlError> {
        let p = &self.panes[i];
        if text.trim().is_empty() {
            return Err(CtlError::new(ErrorCode::BadRequest, "empty message"));
        }
        runnable(p)?;
        let caps = p.caps().unwrap_or_default();
        if steer && !(caps.queue_while_streaming || caps.interrupt) {
            return Err(CtlError::new(
                ErrorCode::UnsupportedCliType,
                format!(
                    "pane `{pane}` ({}) can neither take a message mid-turn nor be \
                     interrupted; send without --steer to queue it",
                    p.agent.provider
                ),
            ));
        }
        Ok(())
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

    /// The turn an interrupt of pane `i` would end.
    fn cancellable(&self, i: usize, pane: &str) -> Result<String, CtlError> {
        let p = &self.panes[i];
        runnable(p)?;
        if !p.caps().is_some_and(|c| c.interrupt) {
            return Err(CtlError::new(
                ErrorCode::UnsupportedCliType,
                format!("pane `{pane}` ({}) cannot be interrupted", p.agent.provider),
            ));
        }
        p.m.turn
            .clone()
            .filter(|_| p.m.state.is_busy())
            .ok_or_else(|| {
                CtlError::new(
                    ErrorCode::InvalidState,
                    format!("pane `{pane}` has no turn running"),
                )
            })
    }

    fn restartable(&self, i: usize, pane: &str) -> Result<(), CtlError> {
        let p = &self.panes[i];
        if let Started::Failed(e) = &p.started {
            return Err(CtlError::new(
                ErrorCode::ProcessCrash,
                format!("pane `{pane}` could not start ({e}); fix its config and start hive again"),
            ));
        }
        if p.m.state != TurnState::Dead {
            return Err(CtlError::new(
                ErrorCode::InvalidState,
                format!("the agent of pane `{pane}` is running; nothing to restart"),
            ));
        }
        Ok(())
    }
}

impl Hub {
    /// `approve` / `deny`: the decision goes to pane `i`'s runner, which
    /// tells every client the approval was settled.
    fn answer_approval(
        &mut self,
        i: usize,
        request_id: Option<&str>,
        decision: PermissionDecision,
        reply: Responder,
    ) -> Result<Option<(usize, RunnerCommand)>, (Responder, CtlError)> {
        let p = &self.panes[i];
        let Some(req) = p.m.approval(request_id) else {
            let id = &p.agent.id;
            let e = match request_id {
                Some(r) => format!("pane `{id}` waits for no approval `{r}`"),
                None => format!("pane `{id}` waits for no approval"),
            };
            return Err((reply, CtlError::new(ErrorCode::InvalidState, e)));
        };
        let request_id = req.request_id.clone();
        let _ = reply.send(Ok(json!({
            "pane": p.agent.id, "request_id": request_id, "tool": req.tool_name,
            "decision": decision_name(&decision),
        })));
        Ok(Some((
            i,
            RunnerCommand::Permission {
                request_id,
                decision,
            },
        )))
    }
}

pub(crate) fn decision_name(d: &PermissionDecision) -> &'static str {
    match d {
        PermissionDecision::AllowOnce => "allow_once",
        PermissionDecision::AllowAlways => "allow_always",
        PermissionDecision::Deny { .. } => "deny",
        PermissionDecision::Option { .. } => "option",
    }
}

/// Errors for a pane whose agent cannot take a message now.
fn runnable(p: &PaneMirror) -> Result<(), CtlError> {
    let id = &p.agent.id;
    match &p.started {
        Started::Failed(e) => Err(CtlError::new(
            ErrorCode::ProcessCrash,
            format!("pane `{id}` could not start: {e}"),
        )),
        Started::Running(_) if p.m.state == TurnState::Dead => Err(CtlError::new(
            ErrorCode::ProcessCrash,
            format!("the agent of pane `{id}` is not running; `hive ctl restart {id}` starts it"),
        )),
        Started::Running(_) | Started::SettingUp => Ok(()),
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
