//! The `Account` verb (issue 51): a pane goes on under another
//! `[[account]]` of its provider with its conversation. A console's
//! `/account NAME` (its key, `RunnerCommand::SwitchAccount` for its pane
//! number) and `hive ctl account ID NAME` are the one verb: checked here
//! against the config and the pane, then handed to the pane's runner,
//! which switches at the turn boundary (src/runner/account.rs). A refusal
//! is `hive ctl`'s error (and exit status) or the console's notice.

use serde_json::json;

use super::clients::ClientId;
use super::door::Reply;
use super::serve::Server;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::protocol::ServerMsg;
use crate::protocol::pane::{RunnerCommand, TurnState};
use crate::protocol::verb::{Caller, Verb};
use crate::provider::vendor_home;

/// When an accepted switch happens.
const NOW: &str = "now";
const AFTER_TURN: &str = "when its turn ends";

impl Server {
    /// A console's `/account` key names its pane by the console's own
    /// numbering: the same verb by the pane's id (`None`: no such pane).
    pub(super) fn console_account(&self, pane: usize, name: String) -> Option<Verb> {
        let slot = *self.panes.order.get(pane)?;
        let id = self.panes.record(slot)?.id().to_owned();
        Some(Verb::Account { pane: id, name })
    }

    /// `Verb::Account`: checked, then the pane's runner is told.
    pub(super) fn account_verb(
        &mut self,
        caller: &Caller,
        pane: String,
        name: String,
        reply: Reply,
    ) {
        let console = match caller {
            Caller::Console { id, .. } => Some(*id),
            _ => None,
        };
        // A console's bare `/account` lists them: the runner knows which
        // one the pane is on.
        let checked = match (console, name.trim().is_empty()) {
            (Some(_), true) => self
                .panes
                .find(&pane)
                .map(|slot| (slot, NOW))
                .ok_or_else(|| no_pane(&pane)),
            _ => self.account_check(&pane, name.trim()),
        };
        match (checked, reply) {
            (Ok((slot, when)), reply) => {
                let name = name.trim().to_owned();
                self.command(slot, RunnerCommand::SwitchAccount(name.clone()), console);
                if let Reply::Ctl { reply, .. } = reply {
                    let _ = reply.send(Ok(json!({ "pane": pane, "account": name, "when": when })));
                }
            }
            (Err(e), Reply::Ctl { reply, .. }) => {
                let _ = reply.send(Err(e));
            }
            (Err(e), Reply::Console) => self.tell(console, e.message),
            (Err(e), reply) => reply.refuse(&e.message),
        }
    }

    /// The pane's slot and when it would switch, or why it cannot.
    fn account_check(&self, pane: &str, name: &str) -> Result<(usize, &'static str), CtlError> {
        let slot = self.panes.find(pane).ok_or_else(|| no_pane(pane))?;
        let Some(record) = self.panes.record(slot) else {
            return Err(no_pane(pane));
        };
        let provider = record.agent.provider.as_str();
        let config = &self.starter.config;
        let names: Vec<&str> = config
            .accounts_of(provider)
            .map(|a| a.name.as_str())
            .collect();
        if names.is_empty() {
            return Err(CtlError::new(
                ErrorCode::UnsupportedCliType,
                format!("no [[account]] of provider `{provider}` in the config (docs/config.md)"),
            ));
        }
        let Some(to) = config.accounts_of(provider).find(|a| a.name == name) else {
            return Err(CtlError::new(
                ErrorCode::BadRequest,
                format!(
                    "no account `{name}`: pane `{pane}`'s are {}",
                    names.join(", ")
                ),
            ));
        };
        if let Some(why) = record.failed() {
            return Err(CtlError::new(
                ErrorCode::ProcessCrash,
                format!("pane `{pane}` could not start: {why}"),
            ));
        }
        if record.caps().is_some() && record.live.state == TurnState::Dead {
            return Err(CtlError::new(
                ErrorCode::ProcessCrash,
                format!(
                    "the agent of pane `{pane}` is not running; `hive ctl restart {pane}` starts it"
                ),
            ));
        }
        // A conversation under way goes along only where hive can carry it.
        let moves_home = to.home.is_some()
            || vendor_home::home_of(provider, &to.variables()).is_some_and(|h| {
                vendor_home::home_of(provider, &record.agent.env).is_some_and(|from| from != h)
            });
        if moves_home && record.live.turns > 0 && !vendor_home::carries(provider) {
            return Err(CtlError::new(
                ErrorCode::UnsupportedCliType,
                format!(
                    "hive cannot carry a {provider} conversation to another account: \
                     /clear starts a new one, then /account {name}"
                ),
            ));
        }
        let busy = record.live.busy_turn().is_some();
        Ok((slot, if busy { AFTER_TURN } else { NOW }))
    }

    /// A notice to one console.
    fn tell(&mut self, console: Option<ClientId>, text: String) {
        if let Some(id) = console {
            self.clients
                .send(id, &ServerMsg::Notice { text, focus: None });
        }
    }
}

fn no_pane(pane: &str) -> CtlError {
    CtlError::new(ErrorCode::SessionNotFound, format!("no pane `{pane}`"))
}
