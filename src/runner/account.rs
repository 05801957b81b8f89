//! `/account NAME` and `on_limit = "next-account"` (issue 51): a pane
//! moves to another `[[account]]` of its provider with its conversation.
//! At a turn boundary the agent is ended, its session carried into the
//! other account's config home (`provider::vendor_home`: copied, hash
//! checked, the source kept), and started again there on the same session
//! id. The account is recorded as the session's choice only once the copy
//! is in place, so a crash halfway leaves the pane on the account whose
//! home holds the whole conversation.

use std::collections::HashMap;
use std::path::Path;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{Runner, TurnState};
use crate::config::AccountConfig;
use crate::config::OnLimit;
use crate::provider::DiagnosticLevel;
use crate::provider::vendor_home::{self, Carried, CarryError};

/// A pane's accounts: which it runs under, a switch waiting for its turn
/// to end, one in flight, and those a limit holds.
#[derive(Default)]
pub(super) struct Accounts {
    /// The provider's `[[account]]`s, in the config's order.
    list: Vec<AccountConfig>,
    /// The one the agent runs under (`None`: the vendor's default home).
    current: Option<String>,
    /// Asked while a turn ran: made when it ends.
    pending: Option<String>,
    /// The switch whose carry runs now, and the account it goes to.
    in_flight: Option<(String, oneshot::Receiver<Result<Carried, CarryError>>)>,
    /// Accounts that met a limit, until it resets.
    limited: HashMap<String, Instant>,
}

impl Accounts {
    pub(super) fn new(list: Vec<AccountConfig>, current: Option<String>) -> Self {
        Self {
            list,
            current,
            ..Self::default()
        }
    }

    fn named(&self, name: &str) -> Option<&AccountConfig> {
        self.list.iter().find(|a| a.name == name)
    }

    /// The next account after the current one, in the config's order, that
    /// no limit holds now.
    fn next_free(&self, now: Instant) -> Option<String> {
        let at = self
            .current
            .as_ref()
            .and_then(|c| self.list.iter().position(|a| &a.name == c));
        let n = self.list.len();
        let start = at.map_or(0, |i| i + 1);
        (0..n)
            .map(|k| &self.list[(start + k) % n])
            .filter(|a| Some(&a.name) != self.current.as_ref())
            .find(|a| self.limited.get(&a.name).is_none_or(|&until| until <= now))
            .map(|a| a.name.clone())
    }
}

/// Waits for the carry in flight (never, when none is).
pub(super) async fn carried(
    accounts: &mut Accounts,
) -> (
    String,
    Result<Result<Carried, CarryError>, oneshot::error::RecvError>,
) {
    match accounts.in_flight.as_mut() {
        Some((name, rx)) => {
            let result = rx.await;
            let name = name.clone();
            accounts.in_flight = None;
            (name, result)
        }
        None => std::future::pending().await,
    }
}

impl Runner {
    /// `/account NAME` (an empty name lists them).
    pub(super) fn ask_account(&mut self, name: String) {
        let name = name.trim().to_owned();
        let names: Vec<&str> = self.accounts.list.iter().map(|a| a.name.as_str()).collect();
        let current = self
            .accounts
            .current
            .as_deref()
            .unwrap_or("the vendor's default");
        if names.is_empty() {
            return self.notice(
                DiagnosticLevel::Warn,
                format!(
                    "no [[account]] of provider `{}` in the config (docs/config.md)",
                    self.spec.agent.provider
                ),
            );
        }
        if name.is_empty() {
            return self.notice(
                DiagnosticLevel::Info,
                format!(
                    "account: {current}; /account NAME switches to one of: {}",
                    names.join(", ")
                ),
            );
        }
        if self.accounts.named(&name).is_none() {
            return self.notice(
                DiagnosticLevel::Warn,
                format!("no account `{name}`: this pane's are {}", names.join(", ")),
            );
        }
        if self.accounts.current.as_deref() == Some(name.as_str()) {
            return self.notice(DiagnosticLevel::Info, format!("already on account {name}"));
        }
        if self.turn.is_some() || self.accounts.in_flight.is_some() {
            self.accounts.pending = Some(name.clone());
            return self.notice(
                DiagnosticLevel::Info,
                format!("switches to account {name} when this turn ends"),
            );
        }
        self.switch_account(name);
    }

    /// At a turn's end: the switch asked meanwhile. True when one started
    /// (the queue goes on once the agent is back).
    pub(super) fn switch_pending_account(&mut self) -> bool {
        match self.accounts.pending.take() {
            Some(name) => {
                self.switch_account(name);
                true
            }
            None => false,
        }
    }

    /// A limit met under `on_limit = "next-account"`: the current account
    /// is marked held until `until` and the pane moves to the next free
    /// one when the turn ends. False (the queue waits as before) when the
    /// agent waits on limits or every account is held.
    pub(super) fn next_account_on_limit(&mut self, until: Option<Instant>) -> bool {
        if self.spec.agent.on_limit != OnLimit::NextAccount || self.accounts.in_flight.is_some() {
            return false;
        }
        let now = Instant::now();
        if let Some(current) = self.accounts.current.clone() {
            let until = until.unwrap_or(now + std::time::Duration::from_secs(60));
            self.accounts.limited.insert(current, until);
        }
        let Some(next) = self.accounts.next_free(now) else {
            return false;
        };
        self.notice(
            DiagnosticLevel::Warn,
            format!("limit hit: going on under account {next} (on_limit = \"next-account\")"),
        );
        self.accounts.pending = Some(next);
        true
    }

    /// Ends the agent, carries its session in the background, and starts it
    /// again under `name` when the copy is in place (`account_carried`).
    fn switch_account(&mut self, name: String) {
        let Some(to) = self.accounts.named(&name).cloned() else {
            return;
        };
        let provider = self.spec.agent.provider.clone();
        let session = self
            .spec
            .resume
            .clone()
            .filter(|_| self.capabilities.resume);
        let from_home = vendor_home::home_of(&provider, &self.spec.agent.env);
        let to_home = to
            .home
            .clone()
            .or_else(|| vendor_home::home_of(&provider, &to.variables()));
        if session.is_some() && !vendor_home::carries(&provider) && from_home != to_home {
            return self.notice(
                DiagnosticLevel::Warn,
                format!(
                    "hive cannot carry a {provider} conversation to another account: \
                     /clear starts a new one, then /account {name}"
                ),
            );
        }
        let (tx, rx) = oneshot::channel();
        let agent = self.provider.take();
        self.provider_rx = None;
        self.set_state(TurnState::Starting);
        self.notice(
            DiagnosticLevel::Info,
            format!("switching to account {name}…"),
        );
        tokio::spawn(async move {
            // The agent is gone before its session is read: nothing writes it.
            if let Some(p) = agent {
                p.kill().await;
            }
            let result = match (session, from_home, to_home) {
                (Some(s), Some(from), Some(to)) if from != to => {
                    tokio::task::spawn_blocking(move || {
                        vendor_home::carry(&provider, &s, &from, &to)
                    })
                    .await
                    .unwrap_or_else(|e| {
                        Err(CarryError::Io {
                            what: "carrying the session".into(),
                            source: std::io::Error::other(e.to_string()),
                        })
                    })
                }
                _ => Ok(Carried::Nothing),
            };
            let _ = tx.send(result);
        });
        self.accounts.in_flight = Some((name, rx));
    }

    /// The carry ended: the agent starts again, under the new account if the
    /// conversation is in its home, else under the old one.
    pub(super) fn account_carried(
        &mut self,
        name: String,
        result: Result<Result<Carried, CarryError>, oneshot::error::RecvError>,
    ) {
        let outcome = result.unwrap_or_else(|_| {
            Err(CarryError::Io {
                what: "carrying the session".into(),
                source: std::io::Error::other("the copy's task ended"),
            })
        });
        match outcome {
            Ok(carried) => {
                self.use_account(&name);
                self.keep_choice(|c| c.account = Some(name.clone()));
                let how = match carried {
                    Carried::Nothing => String::new(),
                    Carried::Same(p) => {
                        format!(" (its home held this conversation: {})", shown(&p))
                    }
                    Carried::Copied { to, set_aside } => format!(
                        " (conversation carried to {}{})",
                        shown(&to),
                        set_aside.map_or(String::new(), |a| format!(
                            "; the copy that was there is kept as {}",
                            shown(&a)
                        ))
                    ),
                };
                self.notice(DiagnosticLevel::Info, format!("now on account {name}{how}"));
            }
            Err(e) => self.notice(
                DiagnosticLevel::Error,
                format!("account {name} not used: {e}; the pane stays where its conversation is"),
            ),
        }
        match self.start_provider() {
            Ok(()) => {
                self.set_state(TurnState::Idle);
                if !self.switch_pending_account() {
                    self.drain();
                }
            }
            Err(e) => {
                self.notice(DiagnosticLevel::Error, e.to_string());
                self.set_state(TurnState::Dead);
            }
        }
    }

    /// The agent's environment under account `name`: the old account's
    /// variables out, the new one's in (the user asked for it by name).
    pub(super) fn use_account(&mut self, name: &str) {
        let Some(to) = self.accounts.named(name).cloned() else {
            return;
        };
        if let Some(old) = self
            .accounts
            .current
            .as_deref()
            .and_then(|c| self.accounts.named(c))
        {
            for (k, v) in old.variables() {
                if self.spec.agent.env.get(&k) == Some(&v) {
                    self.spec.agent.env.remove(&k);
                }
            }
        }
        self.spec.agent.env.extend(to.variables());
        self.spec.agent.account = Some(name.to_owned());
        self.accounts.current = Some(name.to_owned());
    }
}

/// A path for a notice: its names come partly from the agent (its session
/// id), so nothing in them reaches the terminal raw.
fn shown(p: &Path) -> String {
    crate::sanitize::neutralize(&p.display().to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> AccountConfig {
        AccountConfig {
            name: name.into(),
            provider: "claude".into(),
            home: Some(format!("/h/{name}").into()),
            env: std::collections::BTreeMap::new(),
        }
    }

    #[test]
    fn the_next_account_is_the_next_in_order_that_no_limit_holds() {
        let now = Instant::now();
        let list = vec![named("a"), named("b"), named("c")];
        let mut accounts = Accounts::new(list, Some("b".into()));
        assert_eq!(accounts.next_free(now).as_deref(), Some("c"));
        accounts
            .limited
            .insert("c".into(), now + std::time::Duration::from_secs(60));
        assert_eq!(accounts.next_free(now).as_deref(), Some("a"));
        accounts
            .limited
            .insert("a".into(), now + std::time::Duration::from_secs(60));
        assert_eq!(accounts.next_free(now), None, "every other one is held");
        // A limit that has reset frees its account again.
        assert_eq!(
            accounts
                .next_free(now + std::time::Duration::from_secs(61))
                .as_deref(),
            Some("c")
        );
        // From the vendor's default home, the first of the list.
        let none = Accounts::new(vec![named("a"), named("b")], None);
        assert_eq!(none.next_free(now).as_deref(), Some("a"));
    }
}
