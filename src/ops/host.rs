//! The server's handler of hive's operations. It lives on the server's loop
//! and reads each pane from the registry (src/panes/); it keeps only what
//! operations need: `observe` sees every pane update (the items of each
//! pane for `agent.read`, which turn answers which message) and `handle`
//! answers a `HiveRequest` with the registry, handing the server's door (src/server/door.rs) the
//! runner command it makes, which the door sends: it commands no runner
//! itself. It never blocks: `agent.wait` parks a oneshot until the turn
//! ends.
//!
//! Safety (docs/operations.md): an agent reaches only the panes its
//! `can_message` lists; a message carries the chain of agents that led to
//! it, and a chain that comes back to one of its own agents, or grows past
//! `MAX_DEPTH`, is refused; each agent may send at most `RATE_LIMIT`
//! messages per `RATE_WINDOW`.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Caller, HiveRequest, OpError, Verb, WaitFor};
use crate::control::protocol::{Approval, PaneState};
use crate::event::Origin;
use crate::panes::Panes;
use crate::provider::PermissionDecision;
use crate::runner::mirror::Sends;
use crate::runner::{Decider, PaneEvent, PaneUpdate, RunnerCommand, RunnerHandle, SubmitMode};
use crate::text::SharedText;
use crate::upsert::{TurnEvent, TurnStatus, Upsert, UpsertKind};

/// Agents in one chain of messages (A → B → C is depth 3).
pub(crate) const MAX_DEPTH: usize = 4;
pub(crate) const RATE_LIMIT: usize = 20;
pub(crate) const RATE_WINDOW: Duration = Duration::from_secs(60);
/// Items kept per pane for `agent.read`.
const KEEP_ITEMS: usize = 400;

type Reply = oneshot::Sender<Result<Value, OpError>>;

/// One transcript item: its latest state.
#[derive(Debug, Clone)]
struct Item {
    turn_id: String,
    kind: UpsertKind,
    /// Loaded from hive's history (a turn from before this start).
    restored: bool,
}

impl Item {
    /// As `agent.read` returns it; `None` when `full` is off and the item
    /// is not a message.
    fn to_json(&self, item_id: &str, full: bool) -> Option<Value> {
        let (kind, text, tool) = match &self.kind {
            UpsertKind::Message { content, origin } => (
                if *origin == Origin::User {
                    "user"
                } else {
                    "agent"
                },
                content.to_string(),
                None,
            ),
            UpsertKind::Thinking { content, .. } if full => ("thinking", content.to_string(), None),
            UpsertKind::ToolCall {
                tool_name,
                arguments,
                output,
                ..
            } if full => (
                "tool",
                match output {
                    Some(o) => format!("{arguments}\n→ {o}"),
                    None => arguments.to_string(),
                },
                Some(tool_name),
            ),
            _ => return None,
        };
        let mut v =
            json!({"item_id": item_id, "turn_id": self.turn_id, "kind": kind, "text": text});
        if let Some(t) = tool {
            v["tool"] = json!(t);
        }
        if self.restored {
            v["restored"] = json!(true);
        }
        Some(v)
    }
}

/// What only operations keep of a pane (the rest is its record in the
/// registry, src/panes/).
#[derive(Default)]
struct Pane {
    /// The messages sent here whose turn has not started yet, by id.
    sends: Sends<String>,
    items: IndexMap<String, Item>,
    /// The newest agent text of each running turn.
    texts: HashMap<String, SharedText>,
}

struct Message {
    pane: usize,
    sender: Caller,
    chain: Vec<String>,
    turn: Option<String>,
    outcome: Option<Value>,
    waiters: Vec<Reply>,
}

#[derive(Default)]
pub struct OpsHost {
    panes: Vec<Pane>,
    messages: HashMap<String, Message>,
    /// (caller id, pane) → the caller's last message there.
    last_sent: HashMap<(String, usize), String>,
    /// (pane, turn) → the agents whose messages led to that turn.
    chains: HashMap<(usize, String), Vec<String>>,
    sent_at: HashMap<String, VecDeque<Instant>>,
    next: u64,
}

impl Pane {
    /// Keeps an item's latest state (the newest `KEEP_ITEMS` items).
    fn keep(&mut self, u: &Upsert, restored: bool) {
        self.items.insert(
            u.item_id.clone(),
            Item {
                turn_id: u.turn_id.clone(),
                kind: u.kind.clone(),
                restored,
            },
        );
        if self.items.len() > KEEP_ITEMS {
            self.items.shift_remove_index(0);
        }
    }
}

impl OpsHost {
    /// The items of a pane's earlier turns, loaded from hive's history
    /// before its runner starts.
    pub fn restore(&mut self, pane: usize, items: &[Upsert]) {
        let p = self.pane_mut(pane);
        for u in items {
            p.keep(u, true);
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// Pane `slot`'s part, made when first needed (slots are the
    /// registry's; a pane added at runtime takes the next).
    fn pane_mut(&mut self, slot: usize) -> &mut Pane {
        if self.panes.len() <= slot {
            self.panes.resize_with(slot + 1, Pane::default);
        }
        &mut self.panes[slot]
    }

    /// Pane `slot` was closed: nothing finds it any more, and whoever waits
    /// on a message there is told.
    pub fn close(&mut self, slot: usize, id: &str) {
        let p = self.pane_mut(slot);
        p.items.clear();
        p.texts.clear();
        for msg in self.messages.values_mut().filter(|m| m.pane == slot) {
            let outcome = json!({"status": "error", "turn_id": msg.turn, "text": "",
                "error": {"code": "closed", "message": format!("pane `{id}` was closed")}});
            for w in msg.waiters.drain(..) {
                let _ = w.send(Ok(outcome.clone()));
            }
            msg.outcome.get_or_insert(outcome);
        }
    }

    /// Sees one pane update (call it for every update, before or after
    /// the app applies it).
    pub fn observe(&mut self, update: &PaneUpdate) {
        let index = update.pane;
        self.pane_mut(index);
        let pane = &mut self.panes[index];
        if let Some((id, turn_id)) = pane.sends.observe(&update.event)
            && let Some(msg) = self.messages.get_mut(&id)
        {
            self.chains
                .insert((index, turn_id.clone()), msg.chain.clone());
            msg.turn = Some(turn_id);
        }
        match &update.event {
            PaneEvent::Upsert(u) => {
                // Text is shared, not copied: a streaming item is updated
                // many times and only read on demand.
                if let UpsertKind::Message {
                    content,
                    origin: Origin::Agent,
                } = &u.kind
                {
                    pane.texts.insert(u.turn_id.clone(), content.clone());
                }
                pane.keep(u, false);
            }
            PaneEvent::Turn(t) => match t {
                TurnEvent::TurnStarted { .. } => {}
                TurnEvent::TurnComplete {
                    turn_id, status, ..
                } => {
                    let text = pane.texts.remove(turn_id).unwrap_or_default().to_string();
                    let status = match status {
                        TurnStatus::Completed => "completed",
                        TurnStatus::Cancelled => "cancelled",
                    };
                    let outcome = json!({"status": status, "turn_id": turn_id, "text": text});
                    self.turn_ended(index, turn_id, outcome);
                }
                TurnEvent::TurnError {
                    turn_id,
                    error_code,
                    error_message,
                    ..
                } => {
                    let text = pane.texts.remove(turn_id).unwrap_or_default().to_string();
                    let outcome = json!({"status": "error", "turn_id": turn_id, "text": text,
                        "error": {"code": error_code, "message": error_message}});
                    self.turn_ended(index, turn_id, outcome);
                }
            },
            _ => {}
        }
    }

    fn turn_ended(&mut self, pane: usize, turn_id: &str, outcome: Value) {
        self.chains.remove(&(pane, turn_id.to_owned()));
        for msg in self.messages.values_mut() {
            if msg.pane == pane && msg.turn.as_deref() == Some(turn_id) {
                for w in msg.waiters.drain(..) {
                    let _ = w.send(Ok(outcome.clone()));
                }
                msg.outcome = Some(outcome.clone());
            }
        }
    }

    /// Answers one request; the runner command it makes (pane, command)
    /// is for the server's door to send. `runners[i]` is pane i's runner,
    /// there or not.
    #[must_use = "the command is the caller's to send"]
    pub fn handle<X>(
        &mut self,
        req: HiveRequest,
        panes: &Panes<X>,
        runners: &[Option<RunnerHandle>],
    ) -> Option<(usize, RunnerCommand)> {
        let HiveRequest {
            caller,
            verb,
            reply,
        } = req;
        let result = match verb {
            Verb::List => Ok((list(panes, &caller), None)),
            Verb::Read {
                pane,
                last,
                since,
                full,
            } => target(panes, &caller, &pane, false)
                .map(|i| (self.read(i, last, since.as_deref(), full), None)),
            Verb::Send { pane, text, steer } => {
                self.send(panes, &caller, &pane, &text, steer, runners)
            }
            Verb::Wait { target, .. } => match self.wait(panes, &caller, target) {
                Ok(Waiting::Done(outcome)) => Ok((outcome, None)),
                Ok(Waiting::Pending(id)) => {
                    self.park(&id, reply);
                    return None;
                }
                Err(e) => Err(e),
            },
            Verb::Interrupt { pane } => target(panes, &caller, &pane, true).and_then(|i| {
                let busy = panes[i].record.live.state.is_busy();
                let who = format!("{} via hive", caller_name(panes, &caller));
                runner(runners, i)?;
                Ok((
                    json!({"interrupted": busy}),
                    Some((i, RunnerCommand::InterruptFrom(who))),
                ))
            }),
            Verb::Answer {
                pane,
                request_id,
                decision,
            } => approver(panes, &caller, &pane)
                .and_then(|i| answer(panes, &caller, i, request_id.as_deref(), decision, runners)),
            other => Err(OpError::new(
                "unavailable",
                format!("hive's operations do not {}", other.name()),
            )),
        };
        match result {
            Ok((value, cmd)) => {
                let _ = reply.send(Ok(value));
                cmd
            }
            Err(e) => {
                let _ = reply.send(Err(e));
                None
            }
        }
    }

    fn read(&self, pane: usize, last: usize, since: Option<&str>, full: bool) -> Value {
        let Some(Pane { items, .. }) = self.panes.get(pane) else {
            return Value::Array(Vec::new());
        };
        let start = since
            .and_then(|s| items.get_index_of(s).map(|i| i + 1))
            .unwrap_or(0);
        let picked: Vec<Value> = items
            .iter()
            .skip(start)
            .filter_map(|(id, it)| it.to_json(id, full))
            .collect();
        let from = picked.len().saturating_sub(last);
        Value::Array(picked[from..].to_vec())
    }

    fn send<X>(
        &mut self,
        panes: &Panes<X>,
        caller: &Caller,
        agent: &str,
        text: &str,
        steer: bool,
        runners: &[Option<RunnerHandle>],
    ) -> Result<(Value, Option<(usize, RunnerCommand)>), OpError> {
        let target = target(panes, caller, agent, true)?;
        let runner = runner(runners, target)?;
        let (chain, header) = match caller {
            Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => {
                (Vec::new(), String::new())
            }
            Caller::Agent(id) => self.chain_from(panes, id, agent)?,
        };
        self.next += 1;
        let message_id = format!("m{}", self.next);
        let header = if header.is_empty() {
            format!("[message via hive, {message_id}]")
        } else {
            header
        };
        let mode = if steer {
            SubmitMode::Steer
        } else {
            SubmitMode::Queue
        };
        if runner.is_closed() {
            return Err(OpError::new(
                "unavailable",
                format!("pane `{agent}` is not running"),
            ));
        }
        let cmd = RunnerCommand::Submit {
            text: format!("{header}\n{text}"),
            mode,
        };
        let queued = !steer && panes[target].record.live.state.is_busy();
        self.pane_mut(target)
            .sends
            .sent(format!("{header}\n{text}"), message_id.clone());
        // Callers outside any pane (`hive mcp` without `--agent`, a
        // script) share one key: send-then-wait works for them too.
        let key = match caller {
            Caller::Agent(id) => id.clone(),
            Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => String::new(),
        };
        self.last_sent.insert((key, target), message_id.clone());
        self.messages.insert(
            message_id.clone(),
            Message {
                pane: target,
                sender: caller.clone(),
                chain,
                turn: None,
                outcome: None,
                waiters: Vec::new(),
            },
        );
        Ok((
            json!({"message_id": message_id, "queued": queued}),
            Some((target, cmd)),
        ))
    }

    /// An agent sends: the chain of agents waiting on each other grows by
    /// the sender (refused when it loops or grows too deep), and the
    /// message says who sent it.
    fn chain_from<X>(
        &mut self,
        panes: &Panes<X>,
        id: &str,
        agent: &str,
    ) -> Result<(Vec<String>, String), OpError> {
        let from = panes.find(id).map_or_else(
            || id.to_owned(),
            |i| panes[i].record.agent.display_name().to_owned(),
        );
        let mut chain = panes
            .find(id)
            .and_then(|i| {
                let turn = panes[i].record.live.turn.clone()?;
                self.chains.get(&(i, turn)).cloned()
            })
            .unwrap_or_default();
        chain.push(id.to_owned());
        if chain.iter().any(|c| c == agent) {
            let path = format!("{} → {agent}", chain.join(" → "));
            return Err(OpError::new(
                "message_loop",
                format!("refused: {path} comes back to an agent that is waiting on this chain"),
            ));
        }
        if chain.len() >= MAX_DEPTH {
            return Err(OpError::new(
                "too_deep",
                format!(
                    "refused: a chain of {} agents reached the limit ({MAX_DEPTH})",
                    chain.len() + 1
                ),
            ));
        }
        self.rate(id)?;
        let header = format!("[message from {from} ({id}) via hive, m{}]", self.next + 1);
        Ok((chain, header))
    }

    /// Counts a message of `caller` against its rate limit.
    pub(crate) fn rate(&mut self, caller: &str) -> Result<(), OpError> {
        let now = Instant::now();
        let sent = self.sent_at.entry(caller.to_owned()).or_default();
        while sent
            .front()
            .is_some_and(|t| now.duration_since(*t) > RATE_WINDOW)
        {
            sent.pop_front();
        }
        if sent.len() >= RATE_LIMIT {
            return Err(OpError::new(
                "rate_limited",
                format!(
                    "at most {RATE_LIMIT} messages per {} s",
                    RATE_WINDOW.as_secs()
                ),
            ));
        }
        sent.push_back(now);
        Ok(())
    }

    /// The outcome if the message's turn has ended, else the message to
    /// wait on.
    fn wait<X>(
        &self,
        panes: &Panes<X>,
        caller: &Caller,
        target: WaitFor,
    ) -> Result<Waiting, OpError> {
        let id = match target {
            WaitFor::Message(m) => m,
            WaitFor::Agent(agent) => {
                let pane = self::target(panes, caller, &agent, false)?;
                let key = match caller {
                    Caller::Agent(id) => id.clone(),
                    Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => String::new(),
                };
                self.last_sent.get(&(key, pane)).cloned().ok_or_else(|| {
                    OpError::new("no_message", format!("you have sent nothing to `{agent}`"))
                })?
            }
            WaitFor::Turn(turn) => {
                return Err(OpError::new(
                    "unknown_message",
                    format!("an operation waits for a message, not turn `{turn}`"),
                ));
            }
        };
        let msg = self
            .messages
            .get(&id)
            .ok_or_else(|| OpError::new("unknown_message", format!("no message `{id}`")))?;
        if matches!(caller, Caller::Agent(_)) && msg.sender != *caller {
            return Err(OpError::new(
                "not_allowed",
                format!("message `{id}` is not yours"),
            ));
        }
        Ok(match &msg.outcome {
            Some(o) => Waiting::Done(o.clone()),
            None => Waiting::Pending(id),
        })
    }

    fn park(&mut self, id: &str, reply: Reply) {
        if let Some(msg) = self.messages.get_mut(id) {
            // Waiters that gave up (timed out) are dropped here.
            msg.waiters.retain(|w| !w.is_closed());
            msg.waiters.push(reply);
        }
    }
}

enum Waiting {
    Done(Value),
    Pending(String),
}

fn runner(runners: &[Option<RunnerHandle>], i: usize) -> Result<&RunnerHandle, OpError> {
    runners
        .get(i)
        .and_then(Option::as_ref)
        .ok_or_else(|| OpError::new("unavailable", "that pane's agent could not start"))
}

/// `agents.list`: the open panes as `caller` sees them.
fn list<X>(panes: &Panes<X>, caller: &Caller) -> Value {
    let list: Vec<Value> = panes
        .open()
        .map(|p| {
            let state = PaneState::of(p.live.state, p.live.awaiting_approval());
            let mut v = json!({"id": p.id(), "name": p.agent.display_name(),
                   "provider": p.agent.provider, "model": p.model(), "state": state,
                   "queue": p.live.queue.len(), "can_message": allowed(panes, caller, p.id())});
            if let Some(parent) = &p.parent {
                v["spawned_by"] = json!(parent);
            }
            if !p.live.approvals.is_empty() {
                let approvals: Vec<Approval> =
                    p.live.approvals.iter().map(Approval::from).collect();
                v["approvals"] = json!(approvals);
            }
            v
        })
        .collect();
    Value::Array(list)
}

/// `agent.approve` / `agent.deny` of pane `i` (the caller may reach it).
fn answer<X>(
    panes: &Panes<X>,
    caller: &Caller,
    i: usize,
    request_id: Option<&str>,
    decision: PermissionDecision,
    runners: &[Option<RunnerHandle>],
) -> Result<(Value, Option<(usize, RunnerCommand)>), OpError> {
    let p = &panes[i].record;
    let req = p.approval(request_id).ok_or_else(|| {
        OpError::new(
            "no_approval",
            format!(
                "`{}` waits for no approval{}",
                p.id(),
                match request_id {
                    Some(r) => format!(" `{r}`"),
                    None => String::new(),
                }
            ),
        )
    })?;
    may_decide(panes, caller, p.id(), req, &decision)?;
    let out = json!({"request_id": req.request_id, "tool": req.tool_name,
                     "decision": crate::control::hub::decision_name(&decision)});
    runner(runners, i)?;
    let cmd = RunnerCommand::Permission {
        request_id: req.request_id.clone(),
        decision,
        by: Decider::Unknown,
    };
    Ok((out, Some((i, cmd))))
}

/// An agent approves for its helper only what it runs itself without
/// asking (#53 item 3); it may always deny.
fn may_decide<X>(
    panes: &Panes<X>,
    caller: &Caller,
    helper: &str,
    req: &crate::provider::PermissionRequest,
    decision: &PermissionDecision,
) -> Result<(), OpError> {
    let Caller::Agent(id) = caller else {
        return Ok(());
    };
    if matches!(decision, PermissionDecision::Deny { .. }) {
        return Ok(());
    }
    let autonomy = panes.find(id).map_or(super::autonomy::Autonomy::Asks, |i| {
        super::autonomy::Autonomy::of(&panes[i].record.agent)
    });
    if autonomy.may_approve(req) {
        return Ok(());
    }
    Err(OpError::new(
        "not_allowed",
        format!(
            "`{id}` would itself ask the user before `{}`, so it cannot approve it for \
             `{helper}`: the user answers that card (agent.deny is allowed)",
            crate::sanitize::peer_line(&req.tool_name)
        ),
    ))
}

/// Whether the open pane `id` was spawned by `parent`.
pub(crate) fn is_child<X>(panes: &Panes<X>, id: &str, parent: &str) -> bool {
    panes
        .find(id)
        .is_some_and(|i| panes[i].record.parent.as_deref() == Some(parent))
}

/// Whether `caller` may act on `target` (its `can_message` names it, or it
/// spawned it).
pub(crate) fn allowed<X>(panes: &Panes<X>, caller: &Caller, target: &str) -> bool {
    match caller {
        Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => true,
        Caller::Agent(id) => {
            id != target
                && (is_child(panes, target, id)
                    || panes.find(id).is_some_and(|i| {
                        panes[i]
                            .record
                            .agent
                            .can_message
                            .iter()
                            .any(|t| t == target)
                    }))
        }
    }
}

/// The pane whose approval `caller` may answer: an agent only those of the
/// panes it spawned (issue 32); a script any.
fn approver<X>(panes: &Panes<X>, caller: &Caller, agent: &str) -> Result<usize, OpError> {
    let i = target(panes, caller, agent, true)?;
    match caller {
        Caller::Agent(id) if !is_child(panes, agent, id) => Err(OpError::new(
            "not_allowed",
            format!("an agent answers approvals only of the panes it spawned, not `{agent}`"),
        )),
        _ => Ok(i),
    }
}

/// Whether `caller` may reach some agent on `host` (waiting on a message it
/// sent there).
pub(crate) fn reaches_host<X>(panes: &Panes<X>, caller: &Caller, host: &str) -> bool {
    match caller {
        Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => true,
        Caller::Agent(id) => panes.find(id).is_some_and(|i| {
            panes[i]
                .record
                .agent
                .can_message
                .iter()
                .any(|t| t.split_once(':').is_some_and(|(h, _)| h == host))
        }),
    }
}

/// The pane `agent`, if it exists and the caller may reach it (reading its
/// own pane is always allowed).
fn target<X>(panes: &Panes<X>, caller: &Caller, agent: &str, act: bool) -> Result<usize, OpError> {
    let i = panes.find(agent).ok_or_else(|| {
        OpError::new(
            "unknown_agent",
            format!("no pane `{agent}`; panes: {}", panes.ids()),
        )
    })?;
    let own = matches!(caller, Caller::Agent(id) if id == agent);
    if (own && !act) || allowed(panes, caller, agent) {
        return Ok(i);
    }
    Err(OpError::new(
        "not_allowed",
        format!("this agent may not reach `{agent}` (add it to `can_message` in hive's config)"),
    ))
}

/// How a pane names the caller: `Architect (architect)`, or a caller
/// outside any pane.
fn caller_name<X>(panes: &Panes<X>, caller: &Caller) -> String {
    match caller {
        Caller::Agent(id) => match panes.find(id) {
            Some(i) => format!("{} ({id})", panes[i].record.agent.display_name()),
            None => id.clone(),
        },
        Caller::Cli | Caller::Console { .. } | Caller::Device { .. } => {
            "a caller outside hive's panes".into()
        }
    }
}
