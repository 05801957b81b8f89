//! The server's one front door (issue 44): every [`Request`] — a console's
//! keys and edits, a `hive ctl` line, an agent's operation — comes in
//! through [`Server::request`], whose one match over [`Verb`]s is the only
//! place a verb becomes runner commands or a change to the panes. The
//! doors differ only in how they are answered ([`Reply`]): a console by a
//! notice, `hive ctl` with its error codes, an operation with its own
//! (`OpError`); the control hub and the operations host keep the
//! bookkeeping of their answers (a `send` waiting for its turn, a message's
//! chain) and hand back the command, which is sent from here.

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::clients::ClientId;
use super::serve::Server;
use crate::control::hub::Responder;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::ops::{HiveRequest, OpError};
use crate::protocol::pane::RunnerCommand;
use crate::protocol::verb::{Caller, Request, Verb};

/// How a request is answered: the door it came in by.
pub(super) enum Reply {
    /// A console (its id is the caller's): a notice for an edit.
    Console,
    /// `hive ctl` (and `watch`'s event stream).
    Ctl {
        reply: Responder,
        events: Option<crate::control::hub::Watch>,
    },
    /// An operation: an agent's tools, or `hive mcp` over the socket.
    Op(oneshot::Sender<Result<Value, OpError>>),
}

impl Reply {
    /// Tells the caller it may not (a console: logged only; what the
    /// door's rule refuses it is told as a notice, `Server::refused`).
    pub(super) fn refuse(self, why: &str) {
        match self {
            Reply::Console => tracing::warn!("a console's request refused: {why}"),
            Reply::Ctl { reply, .. } => {
                let _ = reply.send(Err(CtlError::new(ErrorCode::PermissionDenied, why)));
            }
            Reply::Op(reply) => {
                let _ = reply.send(Err(OpError::new("not_allowed", why)));
            }
        }
    }
}

impl Server {
    /// The one door: `req` as its caller may ask it, answered by `reply`;
    /// `Some(why)` when it stops the server.
    pub(super) fn request(&mut self, req: Request, reply: Reply) -> Option<String> {
        let Request { caller, verb } = req;
        if let Err(why) = caller.may(&verb) {
            match (&caller, reply) {
                (Caller::Console { id, .. }, Reply::Console) => self.refused(*id, &verb, &why.0),
                (_, reply) => reply.refuse(&why.0),
            }
            return None;
        }
        // A console's `/account` key is the same verb `hive ctl account`
        // asks, by the pane's id.
        let verb = match verb {
            Verb::Command {
                pane,
                cmd: RunnerCommand::SwitchAccount(name),
                // No such pane of the console's: nothing to do (and no stop).
            } if matches!(caller, Caller::Console { .. }) => self.console_account(pane, name)?,
            verb => verb,
        };
        match verb {
            Verb::Account { pane, name } => self.account_verb(&caller, pane, name, reply),
            Verb::Command { pane, cmd } => {
                if let (Caller::Console { id, .. }, Some(slot)) =
                    (&caller, self.panes.order.get(pane).copied())
                {
                    self.command(slot, stamped(cmd, &caller), Some(*id));
                }
            }
            Verb::Stop => return Some(self.stopping(&caller, reply)),
            Verb::Server => {
                if let Reply::Ctl { reply, .. } = reply {
                    let _ = reply.send(Ok(self.describe()));
                }
            }
            Verb::Web(verb) => {
                if let Reply::Ctl { reply, .. } = reply {
                    let _ = reply.send(crate::web::answer(self.web.as_ref(), verb));
                }
            }
            Verb::Spawn(args) => {
                let outcome = self.spawn(&caller, args);
                answer_op(reply, outcome);
            }
            // An operation's close: a helper, with its team.
            Verb::Close { pane, .. } if matches!(reply, Reply::Op(_)) => {
                let outcome = self.close_helper(&caller, &pane);
                answer_op(reply, outcome);
            }
            Verb::Forge(ask) => self.forge_verb(&caller, ask, reply),
            Verb::Screen { pane } => self.screen_verb(&pane, reply),
            Verb::Approvals(ask) => self.approvals_verb(ask, reply),
            Verb::Relocate(step) => self.relocate(&caller, step, reply),
            verb @ (Verb::New(_)
            | Verb::Close { .. }
            | Verb::Rename { .. }
            | Verb::Move { .. }
            | Verb::Window { .. }
            | Verb::Handoff(_)
            | Verb::AddRepo { .. }) => self.edit_verb(&caller, verb, reply),
            verb @ (Verb::Send { .. }
            | Verb::Interrupt { .. }
            | Verb::Answer { .. }
            | Verb::Restart { .. }
            | Verb::List
            | Verb::Status { .. }
            | Verb::Read { .. }
            | Verb::History { .. }
            | Verb::Wait { .. }
            | Verb::Watch { .. }) => {
                let asker = caller.clone();
                if let Some((slot, cmd)) = self.pane_verb(caller, verb, reply) {
                    self.command(slot, stamped(cmd, &asker), None);
                }
            }
        }
        None
    }

    /// A verb about one pane's agent (or all): the hub answers `hive ctl`,
    /// the operations host an operation (after the agents on other hosts
    /// went across); the command either makes is the door's to send.
    fn pane_verb(
        &mut self,
        caller: Caller,
        verb: Verb,
        reply: Reply,
    ) -> Option<(usize, RunnerCommand)> {
        match reply {
            // The web page's transcript: what an operation reads.
            Reply::Ctl { reply, .. } if matches!(verb, Verb::Read { .. }) => {
                self.read_for(caller, verb, reply);
                None
            }
            Reply::Ctl { reply, events } => self.control.answer(&self.panes, verb, reply, events),
            Reply::Op(reply) => {
                let req = HiveRequest {
                    caller,
                    verb,
                    reply,
                };
                let (ops, panes) = (&mut self.ops, &self.panes);
                let gate = |c: &Caller, t: &str, sends: bool| {
                    crate::ops::across::gate(ops, panes, c, t, sends)
                };
                let req = self.across.take(req, gate)?;
                self.ops.handle(req, &self.panes, &self.runners)
            }
            // A console asks its runners by `Command`.
            Reply::Console => None,
        }
    }

    /// `Read` for a door answered as `hive ctl` is: the operations host
    /// keeps the transcripts and answers a read at once.
    fn read_for(&mut self, caller: Caller, verb: Verb, reply: Responder) {
        let (tx, mut rx) = oneshot::channel();
        let req = HiveRequest {
            caller,
            verb,
            reply: tx,
        };
        let _ = self.ops.handle(req, &self.panes, &self.runners);
        let answer = match rx.try_recv() {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(CtlError::new(ErrorCode::InvalidState, e.message)),
            Err(_) => Err(CtlError::new(ErrorCode::Unavailable, "no transcript")),
        };
        let _ = reply.send(answer);
    }

    /// New, close, rename, move: applied, and the asker told how it went.
    fn edit_verb(&mut self, caller: &Caller, verb: Verb, reply: Reply) {
        let Ok(edit) = verb.into_edit() else {
            return;
        };
        match (caller, reply) {
            (Caller::Console { id, .. }, Reply::Console) => self.edit_from(*id, edit),
            (_, Reply::Ctl { reply, .. }) => {
                let outcome = self
                    .edit(edit, None)
                    .map_err(|why| CtlError::new(why.code(), why.to_string()));
                let _ = reply.send(outcome.map(|done| done.json));
            }
            (_, reply) => reply.refuse("an operation does not edit the panes"),
        }
    }

    /// `Stop`: answered first; why the server stops.
    fn stopping(&self, caller: &Caller, reply: Reply) -> String {
        match reply {
            Reply::Ctl { reply, .. } => {
                let _ = reply.send(Ok(json!({ "stopping": true })));
            }
            Reply::Op(reply) => {
                let _ = reply.send(Ok(json!({ "stopping": true })));
            }
            Reply::Console => {}
        }
        match caller {
            Caller::Console { .. } => "stopped from a console".into(),
            Caller::Cli | Caller::Agent(_) | Caller::Device { .. } => "hive kill".into(),
        }
    }

    /// A console's request (its keys, an edit, stop).
    pub(super) fn console_request(&mut self, id: ClientId, verb: Verb) -> Option<String> {
        let caller = self.console_caller(id);
        self.request(Request::new(caller, verb), Reply::Console)
    }

    /// An agent's operation, from its in-process tools or from `hive mcp`
    /// over the socket (`Call::Op`).
    pub(super) fn on_op(&mut self, req: HiveRequest) {
        let HiveRequest {
            caller,
            verb,
            reply,
        } = req;
        // An operation does not stop the server (`may` refuses agents;
        // a script's `op` has no stop).
        let _ = self.request(Request::new(caller, verb), Reply::Op(reply));
    }

    /// A request from the web page, as its paired device.
    pub(super) fn on_web(&mut self, req: crate::web::WebRequest) {
        let crate::web::WebRequest {
            caller,
            verb,
            reply,
            events,
        } = req;
        // A device may not stop the server (`may` refuses it).
        let _ = self.request(Request::new(caller, verb), Reply::Ctl { reply, events });
    }

    /// A control request; `Some(why)` when it stops the server.
    pub(super) fn on_control(
        &mut self,
        req: crate::control::hub::ControlRequest,
    ) -> Option<String> {
        let crate::control::hub::ControlRequest {
            call,
            reply,
            events,
        } = req;
        match call.into_verb() {
            Ok(verb) => self.request(
                Request::new(Caller::Cli, verb),
                Reply::Ctl { reply, events },
            ),
            Err(crate::control::protocol::Call::Op { agent, op, args }) => {
                // Run here, on this pass of the loop (issue 44: it used to
                // go round the ops channel for a second one).
                if let Some(op) = crate::ops::remote::request(agent, &op, args, reply) {
                    self.on_op(op);
                }
                None
            }
            Err(_) => None,
        }
    }
}

/// `cmd` as `caller` gave it, in the server's words, never the client's:
/// who answered a card (the audit log's `by`), who interrupted a turn (a
/// paired device through the hub, which names `hive ctl`).
fn stamped(cmd: RunnerCommand, caller: &Caller) -> RunnerCommand {
    match (cmd, caller) {
        (RunnerCommand::InterruptFrom(_), Caller::Device { id, .. }) => {
            RunnerCommand::InterruptFrom(format!("the web page (device {id})"))
        }
        (cmd, caller) => cmd.decided_by(caller.decider()),
    }
}

/// An operation's outcome to its caller (another door has no such verb).
fn answer_op(reply: Reply, outcome: Result<Value, OpError>) {
    match reply {
        Reply::Op(reply) => {
            let _ = reply.send(outcome);
        }
        other => other.refuse("that is an operation of agents"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::protocol::ClientMsg;
    use crate::protocol::agent::PermissionDecision;
    use crate::protocol::edit::PaneEdit;
    use crate::protocol::verb::Verb;

    /// A `hive ctl` JSON line's verb.
    fn ctl(line: &str) -> Verb {
        let req: crate::control::protocol::Request = serde_json::from_str(line).unwrap();
        req.call.into_verb().unwrap()
    }

    fn op(name: &str, args: serde_json::Value) -> Verb {
        crate::ops::parse(name, args).unwrap()
    }

    /// Who answered is the caller the door knows, whatever the command
    /// said: a console's own claim is overwritten; a device's interrupt
    /// names the page, not `hive ctl`.
    #[test]
    fn the_door_stamps_the_decider_and_the_interrupter() {
        use crate::protocol::pane::{Decider, RunnerCommand};
        use crate::protocol::verb::{Caller, Role};
        let answer = |by| RunnerCommand::Permission {
            request_id: "r".into(),
            decision: PermissionDecision::AllowOnce,
            by,
        };
        let phone = Caller::Device {
            id: "d1".into(),
            role: Role::Full,
        };
        let cases = [
            (
                Caller::Console {
                    id: 3,
                    role: Role::Full,
                },
                "console",
            ),
            (Caller::Cli, "ctl"),
            (phone.clone(), "device:d1"),
            (Caller::Agent("lead".into()), "agent:lead"),
        ];
        for (caller, name) in cases {
            // A client claiming to be someone else is not believed.
            let claimed = answer(Decider::Agent("forged".into()));
            let RunnerCommand::Permission { by, .. } = super::stamped(claimed, &caller) else {
                panic!()
            };
            assert_eq!(by.audit_name(), name);
        }
        let from_page = super::stamped(RunnerCommand::InterruptFrom("hive ctl".into()), &phone);
        assert_eq!(
            from_page,
            RunnerCommand::InterruptFrom("the web page (device d1)".into())
        );
        let from_ctl = super::stamped(
            RunnerCommand::InterruptFrom("hive ctl".into()),
            &Caller::Cli,
        );
        assert_eq!(from_ctl, RunnerCommand::InterruptFrom("hive ctl".into()));
    }

    /// Three encodings, one request: what a console, a ctl line and an
    /// operation ask for alike is one verb.
    #[test]
    fn a_console_a_ctl_line_and_an_operation_ask_the_same_verb() {
        let close = Verb::Close {
            pane: "h".into(),
            team: true,
            discard: false,
        };
        let edit = PaneEdit::Close {
            pane: "h".into(),
            team: true,
            discard: false,
        };
        assert_eq!(ClientMsg::Edit(edit).into_verb().unwrap(), close);
        assert_eq!(
            ctl(r#"{"id":1,"method":"close","pane":"h","team":true}"#),
            close
        );
        assert_eq!(op("agent.close", json!({"agent": "h"})), close);

        let send = Verb::Send {
            pane: "b".into(),
            text: "hi".into(),
            steer: true,
        };
        let line = r#"{"id":2,"method":"send","pane":"b","text":"hi","steer":true}"#;
        assert_eq!(ctl(line), send);
        let args = json!({"agent": "b", "text": "hi", "steer": true});
        assert_eq!(op("agent.send", args), send);

        let interrupt = Verb::Interrupt { pane: "b".into() };
        assert_eq!(ctl(r#"{"id":3,"method":"cancel","pane":"b"}"#), interrupt);
        assert_eq!(op("agent.interrupt", json!({"agent": "b"})), interrupt);

        let approve = Verb::Answer {
            pane: "b".into(),
            request_id: Some("r1".into()),
            decision: PermissionDecision::AllowAlways,
        };
        let line = r#"{"id":4,"method":"approve","pane":"b","request_id":"r1","always":true}"#;
        assert_eq!(ctl(line), approve);
        let args = json!({"agent": "b", "request_id": "r1", "always": true});
        assert_eq!(op("agent.approve", args), approve);

        let deny = Verb::Answer {
            pane: "b".into(),
            request_id: None,
            decision: PermissionDecision::Deny {
                reason: "not that file".into(),
            },
        };
        let line = r#"{"id":5,"method":"deny","pane":"b","reason":"not that file"}"#;
        assert_eq!(ctl(line), deny);
        let args = json!({"agent": "b", "reason": "not that file"});
        assert_eq!(op("agent.deny", args), deny);

        assert_eq!(ctl(r#"{"id":6,"method":"list"}"#), Verb::List);
        assert_eq!(op("agents.list", json!({})), Verb::List);
        assert_eq!(ctl(r#"{"id":7,"method":"kill"}"#), Verb::Stop);
        // `/account` and `hive ctl account`: one verb, which only the user asks.
        let account = Verb::Account {
            pane: "cl".into(),
            name: "work".into(),
        };
        assert_eq!(
            ctl(r#"{"id":8,"method":"account","pane":"cl","name":"work"}"#),
            account
        );
        let agent = crate::protocol::verb::Caller::Agent("cl".into());
        assert!(agent.may(&account).is_err());
        assert_eq!(ClientMsg::Stop.into_verb().unwrap(), Verb::Stop);
    }
}
