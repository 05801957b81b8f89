//! `hive ctl approvals` at the server's door (issue 47, docs/control.md):
//! the cards waiting across panes (the registry's, as `status` shows each
//! pane's), the audit log's last decisions, the rules that decide (the
//! config's, each pane's own, the ones learned from `allow always`) and
//! forgetting a learned one. The log and the learned rules are the
//! project's files, shared with its runners (`Starter`).

use serde_json::{Value, json};

use super::door::Reply;
use super::serve::Server;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::protocol::verb::ApprovalsAsk;

/// The most lines `--log` returns at once.
const MOST_LINES: usize = 10_000;

impl Server {
    /// `Verb::Approvals`, answered as `hive ctl` is (a console asks
    /// nothing of it; an agent may not).
    pub(super) fn approvals_verb(&mut self, ask: ApprovalsAsk, reply: Reply) {
        let Reply::Ctl { reply, .. } = reply else {
            return reply.refuse("the approvals are read with `hive ctl approvals`");
        };
        let _ = reply.send(self.approvals_answer(ask));
    }

    fn approvals_answer(&self, ask: ApprovalsAsk) -> Result<Value, CtlError> {
        match ask {
            ApprovalsAsk::Queue => Ok(json!({ "approvals": self.waiting() })),
            ApprovalsAsk::Log { last, pane } => {
                let n = last.clamp(1, MOST_LINES);
                let entries = self.starter.audit().last_of(n, pane.as_deref());
                Ok(json!({ "path": self.starter.audit().path(), "entries": entries }))
            }
            ApprovalsAsk::Rules => Ok(self.rules()),
            ApprovalsAsk::Forget { rule } => {
                let learned = self.starter.learned();
                match learned.forget(&rule) {
                    Ok(true) => Ok(json!({ "forgot": rule })),
                    Ok(false) => Err(CtlError::new(
                        ErrorCode::InvalidState,
                        format!(
                            "no learned rule `{rule}` (`hive ctl approvals --rules` lists them; \
                             a rule of the config goes by editing the config)"
                        ),
                    )),
                    Err(e) => Err(CtlError::new(
                        ErrorCode::Unavailable,
                        format!("{}: {e}", learned.path().display()),
                    )),
                }
            }
        }
    }

    /// Every card waiting, pane by pane in the consoles' order.
    fn waiting(&self) -> Vec<Value> {
        let card = |p: &crate::panes::PaneRecord, r| {
            let mut v = json!(crate::control::protocol::Approval::from(r));
            v["pane"] = json!(p.id());
            v["vendor"] = json!(p.agent.provider);
            v
        };
        self.panes
            .open()
            .flat_map(|p| p.live.approvals.iter().map(move |r| card(p, r)))
            .collect()
    }

    /// The config's rules (once each), each pane's preset and own rules,
    /// and the learned ones.
    fn rules(&self) -> Value {
        let config = &self.starter.config;
        let mut seen = std::collections::HashSet::new();
        let mut rules = Vec::new();
        let mut panes = Vec::new();
        for p in self.panes.open() {
            if !config.has_policy(&p.agent) {
                continue;
            }
            let preset = p.agent.policy.unwrap_or_default();
            panes.push(json!({ "pane": p.id(), "preset": preset }));
            for (id, spec) in config.policy_rules(&p.agent) {
                if seen.insert(id.clone()) {
                    rules.push(json!({ "id": id, "rule": spec }));
                }
            }
        }
        let learned = self.starter.learned();
        json!({
            "panes": panes,
            "rules": rules,
            "learned": learned.rules(),
            "path": learned.path(),
        })
    }
}
