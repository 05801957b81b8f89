//! `/move @HOST` on the server (issue 50): a live pane goes on at another
//! host's hive server, at a turn boundary (refused while a turn runs or
//! waits on an approval, as `/handoff` is). Its package
//! (src/server/move_package.rs: the worktree bundle, hive's history and
//! session state, the agent) is made on the blocking pool, copied to the
//! host over its ssh command line and unpacked there by the host's server
//! (`Relocate::Arrive`, src/server/relocate_in.rs), which starts the agent
//! on the moved session. Only once the host answers that it resumed does
//! the pane stop here: it keeps its place in the grid, stopped, with a
//! note saying where it went, and its worktree goes (the branch stays, so
//! the pane can come back onto it). A step that fails leaves the pane
//! where it was, working, and says which step it was.
//!
//! The server that has the `[[host]]` drives both ways: a pane comes back
//! by `hive ctl move host:pane --host local` (src/server/relocate_back.rs).

use serde_json::{Value, json};

use super::clients::ClientId;
use super::door::Reply;
use super::move_package::{self, Leaving};
use super::serve::Server;
use crate::control::hub::Responder;
use crate::control::protocol::{Call, CtlError, ErrorCode};
use crate::protocol::carry::Relocate;
use crate::protocol::verb::Caller;
use crate::remote::carry::HostLink;

/// Who waits for a move's answer.
pub(super) enum Asker {
    /// A console: a notice.
    Console(ClientId),
    /// `hive ctl` (or the server that drives a move).
    Ctl(Responder),
}

impl Asker {
    /// The door's caller as an asker (an operation never moves a pane:
    /// `Caller::may` refuses it first).
    fn of(caller: &Caller, reply: Reply) -> Option<Self> {
        match (caller, reply) {
            (Caller::Console { id, .. }, Reply::Console) => Some(Self::Console(*id)),
            (_, Reply::Ctl { reply, .. }) => Some(Self::Ctl(reply)),
            (_, reply) => {
                reply.refuse("an operation does not move panes");
                None
            }
        }
    }

    pub(super) fn answer(self, s: &mut Server, outcome: Result<Value, CtlError>) {
        match self {
            Self::Ctl(reply) => {
                let _ = reply.send(outcome);
            }
            Self::Console(id) => {
                let text = match &outcome {
                    Ok(v) => v["text"].as_str().unwrap_or("moved").to_owned(),
                    Err(e) => e.message.clone(),
                };
                let notice = crate::protocol::ServerMsg::Notice { text, focus: None };
                s.clients.send(id, &notice);
            }
        }
    }
}

/// A refusal in `/move`'s words.
pub(super) fn refused(why: impl std::fmt::Display) -> CtlError {
    CtlError::new(ErrorCode::InvalidState, format!("/move: {why}"))
}

/// This machine's name, for the note a moved pane shows where it arrives.
pub(super) fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "another host".into())
}

impl Server {
    /// `Verb::Relocate`: one step of a move, whoever asks it.
    pub(super) fn relocate(&mut self, caller: &Caller, step: Relocate, reply: Reply) {
        let Some(asker) = Asker::of(caller, reply) else {
            return;
        };
        match step {
            Relocate::Go { pane, host } => match pane.split_once(':') {
                Some((from, id)) if host == "local" => self.come_back(from, id, asker),
                None if host == "local" => {
                    let e = refused(format!(
                        "`{pane}` runs here already; a pane comes back by the server it moved from: `hive ctl move HOST:{pane} --host local` there"
                    ));
                    asker.answer(self, Err(e));
                }
                _ => self.go(&pane, &host, asker),
            },
            Relocate::Arrive { dir } => self.arrive(dir, asker),
            Relocate::Leave { pane } => self.leave(&pane, asker),
            Relocate::Left { pane, to, abandon } => {
                let outcome = self.moved_off(&pane, &to, abandon);
                asker.answer(self, outcome);
            }
        }
    }

    /// Whether pane `slot` may move now; `Err` says why not.
    pub(super) fn may_move(&self, slot: usize) -> Result<(), CtlError> {
        let r = &self.panes[slot].record;
        let id = r.id();
        if self.moves.moving.contains_key(&slot) {
            return Err(refused(format!("`{id}` is moving already")));
        }
        if r.agent.provider == "pty" {
            return Err(refused(format!("`{id}` is a terminal pane")));
        }
        if r.live.awaiting_approval() {
            return Err(refused(format!(
                "`{id}` waits on an approval: answer it first, then move"
            )));
        }
        if r.live.state.is_busy() {
            return Err(refused(format!(
                "`{id}`'s turn is still running: wait for it or interrupt it, then move"
            )));
        }
        if r.agent.host.is_some() || r.agent.sandbox.is_some() {
            return Err(refused(format!(
                "`{id}` runs on a host or in a sandbox of this config; moving it is not built yet"
            )));
        }
        if !MOVES_ITS_CONVERSATION.contains(&r.agent.provider.as_str()) {
            return Err(refused(format!(
                "moving a `{}` pane is not built yet: its vendor's session stays on this machine (`/handoff` continues the task in another pane)",
                r.agent.provider
            )));
        }
        if self.panes[slot]
            .worktree
            .as_ref()
            .is_some_and(|w| !w.repos.is_empty())
        {
            return Err(refused(format!(
                "`{id}` works in a workspace of several repositories; moving one is not built yet"
            )));
        }
        Ok(())
    }

    /// What pane `slot` leaves with, taken on the loop.
    pub(super) fn leaving(&self, slot: usize) -> Leaving {
        let pane = &self.panes[slot];
        Leaving {
            agent: pane.placed.agent.clone(),
            from: this_host(),
            store: self.starter.store.clone(),
            worktree: pane.worktree.clone(),
        }
    }

    /// Pane `pane` goes to `[[host]]` `host`.
    fn go(&mut self, pane: &str, host: &str, asker: Asker) {
        let checked = self
            .open_slot(pane)
            .map_err(|e| CtlError::new(e.code(), e.to_string()))
            .and_then(|slot| self.may_move(slot).map(|()| slot))
            .and_then(|slot| self.host_target(host).map(|t| (slot, t)));
        let (slot, target) = match checked {
            Ok(x) => x,
            Err(e) => return asker.answer(self, Err(e)),
        };
        self.moves.moving.insert(slot, host.to_owned());
        let leaving = self.leaving(slot);
        let turns = self.panes[slot].record.live.turns;
        let id = pane.to_owned();
        let host = host.to_owned();
        self.moves.spawn(move || {
            let outcome = carry_out(&leaving, &target, &id);
            Box::new(move |s: &mut Server| s.went(slot, turns, &host, outcome, asker))
        });
    }

    /// The `[[host]]` `name` whose hive server a pane can move to.
    pub(super) fn host_target(&self, name: &str) -> Result<crate::remote::Target, CtlError> {
        let host = self
            .starter
            .config
            .hosts
            .iter()
            .find(|h| h.name == name && h.serves())
            .ok_or_else(|| {
                refused(format!(
                    "no [[host]] `{name}` with a hive server in this config"
                ))
            })?;
        host.target().map_err(|e| refused(format!("{name}: {e}")))
    }

    /// The host answered (or a step failed): the pane stops here once it
    /// runs there, unless it started a turn meanwhile.
    fn went(
        &mut self,
        slot: usize,
        turns: u64,
        host: &str,
        outcome: Result<(Value, HostLink), String>,
        asker: Asker,
    ) {
        self.moves.moving.remove(&slot);
        let id = self.panes[slot].record.id().to_owned();
        let (there, link) = match outcome {
            Ok(x) => x,
            Err(why) => {
                let text = format!("/move to {host} failed: {why}; the pane stays here");
                self.panes[slot].log.note(text.clone());
                self.reset_pane(slot, None);
                return asker.answer(self, Err(CtlError::new(ErrorCode::Unavailable, text)));
            }
        };
        let r = &self.panes[slot].record;
        if r.live.state.is_busy() || r.live.turns != turns {
            // Two copies must not both go on: the one there goes.
            let undo = Call::Relocate(Relocate::Left {
                pane: id.clone(),
                to: String::new(),
                abandon: true,
            });
            self.moves.spawn(move || {
                let _ = link.call(undo);
                Box::new(|_: &mut Server| {})
            });
            let text = format!(
                "/move to {host} abandoned: `{id}` started a turn while it moved; the pane stays here"
            );
            return asker.answer(self, Err(CtlError::new(ErrorCode::InvalidState, text)));
        }
        let to = format!("{id}@{host}");
        let _ = self.moved_off(&id, host, false);
        let text = format!("moved {id} to {host}: it goes on there as {to}");
        let mut json = json!({"pane": id, "host": host, "text": text});
        if let Some(w) = there.get("worktree") {
            json["worktree"] = w.clone();
        }
        asker.answer(self, Ok(json));
    }
}

/// The providers whose whole conversation is hive's history, so the
/// package carries it (the vendors' own sessions are the next step).
pub(super) const MOVES_ITS_CONVERSATION: &[&str] = &["openai", "script"];

/// The blocking part of a move out: pack, reach the host, copy, arrive.
/// `Err` names the step that failed; nothing here changes the pane.
fn carry_out(
    leaving: &Leaving,
    target: &crate::remote::Target,
    id: &str,
) -> Result<(Value, HostLink), String> {
    let dir = package_dir(id)?;
    let result = (|| {
        move_package::pack(leaving, &dir)?;
        let link = HostLink::open(target).map_err(|e| format!("reaching {}: {e}", target.name))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let remote = link
            .send_dir(&dir, &name)
            .map_err(|e| format!("copying to {}: {e}", target.name))?;
        let arrive = Call::Relocate(Relocate::Arrive {
            dir: remote.clone(),
        });
        let answer = link.call(arrive);
        link.remove_dir(&remote);
        let answer = answer.map_err(|e| format!("starting it on {}: {e}", target.name))?;
        Ok((answer, link))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A new private directory for one package, in hive's runtime dir.
pub(super) fn package_dir(id: &str) -> Result<std::path::PathBuf, String> {
    let dir = crate::control::socket_dir().join("moves").join(format!(
        "{}-{}",
        crate::history::store::safe_name(id),
        uuid::Uuid::new_v4().simple()
    ));
    crate::private::create_dir(&dir).map_err(|e| format!("packing: {}: {e}", dir.display()))?;
    Ok(dir)
}
