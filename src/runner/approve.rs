//! The approval policy in the runner (issue 47): each request the agent
//! raises is decided by the pane's gate before any card is shown. Allowed
//! and denied requests are answered here (a denial's reason is what the
//! model reads); the rest show their card as before. A destructive
//! request's allow on its card shows a second card, which only its own
//! confirm option passes (a console's `y` twice is not a confirmation).
//! Every decision goes to the audit log.

use std::collections::HashMap;

use tokio::time::Instant;

use super::{Decider, PaneEvent, Runner};
use crate::policy::{Action, Subject};
use crate::provider::{
    DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest, ProviderCommand,
};

/// The option of a destructive request's second card that runs it.
pub const CONFIRM_OPTION: &str = "hive-confirm-destructive";
use CONFIRM_OPTION as CONFIRM;
const CONFIRM_SUFFIX: &str = ":confirm";

/// A card the policy showed, until it is answered.
#[derive(Debug)]
pub(super) struct Waiting {
    subject: Subject,
    /// Why it is destructive (it needs a second card), if it is.
    destructive: Option<String>,
    /// The agent's own request id (a second card has one of its own).
    original: String,
    /// When it is denied for want of an answer.
    deadline: Option<Instant>,
    /// The agent's own "always" options (ACP `allow_always`): answered as
    /// hive's allow always, so the vendor keeps no always past the gate.
    always: Vec<String>,
}

#[derive(Debug, Default)]
pub(super) struct Approvals {
    waiting: HashMap<String, Waiting>,
}

impl Approvals {
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.waiting.values().filter_map(|w| w.deadline).min()
    }
}

impl Runner {
    /// A request from the agent: decided by the policy, or shown.
    pub(super) fn permission(&mut self, mut req: PermissionRequest) {
        let Some(policy) = self.policy.as_ref() else {
            return self.emit(PaneEvent::Permission(req));
        };
        let (subject, verdict) = policy.decide(&req);
        let id = req.request_id.clone();
        match verdict.action {
            Action::Allow => {
                policy.record(&id, &subject, "allow", &verdict.by, "");
                self.to_provider(ProviderCommand::Permission {
                    request_id: id,
                    decision: PermissionDecision::AllowOnce,
                });
            }
            Action::Deny => {
                policy.record(&id, &subject, "deny", &verdict.by, &verdict.reason);
                let what = shown(&subject);
                self.to_provider(ProviderCommand::Permission {
                    request_id: id,
                    decision: PermissionDecision::Deny {
                        reason: verdict.reason.clone(),
                    },
                });
                self.notice(DiagnosticLevel::Info, format!("{what}: {}", verdict.reason));
            }
            Action::Ask => {
                policy.record(&id, &subject, "ask", &verdict.by, &verdict.reason);
                let deadline = policy.timeout.map(|t| Instant::now() + t);
                let destructive = verdict.destructive.then(|| verdict.reason.clone());
                if let Some(why) = &destructive {
                    let was = req.description.take().unwrap_or_default();
                    req.description = Some(format!("DESTRUCTIVE ({why}). {was}"));
                }
                let always = req
                    .options
                    .iter()
                    .filter(|o| o.kind == "allow_always")
                    .map(|o| o.option_id.clone())
                    .collect();
                self.approvals.waiting.insert(
                    id.clone(),
                    Waiting {
                        subject,
                        destructive,
                        original: id,
                        deadline,
                        always,
                    },
                );
                self.emit(PaneEvent::Permission(req));
            }
        }
    }

    /// An answer to a card (`RunnerCommand::Permission`).
    pub(super) fn answer(
        &mut self,
        request_id: String,
        decision: PermissionDecision,
        by: &Decider,
    ) {
        let Some(w) = self.approvals.waiting.remove(&request_id) else {
            // Not the policy's card (no policy, or already settled).
            self.to_provider(ProviderCommand::Permission {
                request_id: request_id.clone(),
                decision,
            });
            return self.emit(PaneEvent::PermissionSettled { request_id });
        };
        let decision = match decision {
            PermissionDecision::Option { option_id } if w.always.contains(&option_id) => {
                PermissionDecision::AllowAlways
            }
            d => d,
        };
        let allows = is_allow(&decision);
        let second = request_id.ends_with(CONFIRM_SUFFIX);
        if allows && w.destructive.is_some() && !second {
            return self.second_card(request_id, w, by);
        }
        if allows && second && !confirmed(&decision) {
            self.notice(
                DiagnosticLevel::Warn,
                "a destructive request needs its own confirm option on the second card",
            );
            self.approvals.waiting.insert(request_id, w);
            return;
        }
        let (word, reason) = match &decision {
            PermissionDecision::AllowAlways => ("allow_always", String::new()),
            PermissionDecision::Deny { reason } => ("deny", reason.clone()),
            d if is_allow(d) => ("allow", String::new()),
            _ => ("deny", String::new()),
        };
        let mut learned = None;
        if let Some(p) = &self.policy {
            p.record(&w.original, &w.subject, word, &by.audit_name(), &reason);
            if matches!(decision, PermissionDecision::AllowAlways) {
                learned = p.learn(&w.subject);
            }
        }
        if let Some(text) = learned {
            self.notice(DiagnosticLevel::Info, text);
        }
        // The vendor keeps no "always" of its own (it would allow the
        // tool for good, past the gate); a confirm is an allow once.
        let decision = match decision {
            PermissionDecision::AllowAlways => PermissionDecision::AllowOnce,
            PermissionDecision::Option { option_id } if option_id == CONFIRM => {
                PermissionDecision::AllowOnce
            }
            _ if second && !allows => PermissionDecision::Deny {
                reason: if reason.is_empty() {
                    "the user did not confirm it".into()
                } else {
                    reason
                },
            },
            d => d,
        };
        self.to_provider(ProviderCommand::Permission {
            request_id: w.original,
            decision,
        });
        self.emit(PaneEvent::PermissionSettled { request_id });
    }

    /// The first card of a destructive request was allowed (by `by`): it
    /// goes, and a second one, with a confirm option of its own, shows.
    fn second_card(&mut self, first: String, w: Waiting, by: &Decider) {
        self.emit(PaneEvent::PermissionSettled {
            request_id: first.clone(),
        });
        let why = w.destructive.clone().unwrap_or_default();
        let id = format!("{first}{CONFIRM_SUFFIX}");
        if let Some(p) = &self.policy {
            p.record(&w.original, &w.subject, "confirm", &by.audit_name(), &why);
        }
        let card = PermissionRequest {
            request_id: id.clone(),
            tool_name: w.subject.tool.clone(),
            input: serde_json::json!({ "command": w.subject.command, "paths": w.subject.paths }),
            description: Some(format!(
                "Second confirmation: {} is destructive ({why}). Option 2 runs it.",
                shown(&w.subject)
            )),
            options: vec![
                PermissionOption {
                    option_id: "reject".into(),
                    label: "No, do not run it".into(),
                    kind: "reject_once".into(),
                },
                PermissionOption {
                    option_id: CONFIRM.into(),
                    label: "Yes, I am sure".into(),
                    kind: "allow_once".into(),
                },
            ],
            ..PermissionRequest::default()
        };
        let w = Waiting {
            always: Vec::new(),
            ..w
        };
        self.approvals.waiting.insert(id, w);
        self.emit(PaneEvent::Permission(card));
    }

    /// Cards past `[approvals] timeout_secs`: denied, with why.
    pub(super) fn approvals_expired(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .approvals
            .waiting
            .iter()
            .filter(|(_, w)| w.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            let Some(w) = self.approvals.waiting.remove(&id) else {
                continue;
            };
            let secs = self
                .policy
                .as_ref()
                .and_then(|p| p.timeout)
                .map_or(0, |t| t.as_secs());
            let reason = format!(
                "nobody answered the approval within {secs} s (hive's [approvals] timeout)"
            );
            if let Some(p) = &self.policy {
                p.record(&w.original, &w.subject, "deny", "timeout", &reason);
            }
            self.to_provider(ProviderCommand::Permission {
                request_id: w.original,
                decision: PermissionDecision::Deny {
                    reason: reason.clone(),
                },
            });
            self.emit(PaneEvent::PermissionSettled { request_id: id });
            self.notice(DiagnosticLevel::Info, reason);
        }
    }
}

fn is_allow(d: &PermissionDecision) -> bool {
    match d {
        PermissionDecision::AllowOnce | PermissionDecision::AllowAlways => true,
        PermissionDecision::Deny { .. } => false,
        PermissionDecision::Option { option_id } => {
            option_id == CONFIRM || !option_id.starts_with("reject")
        }
    }
}

/// A second card's allow: its confirm option only (a console's `y` sends
/// the plain allow, which is refused).
fn confirmed(d: &PermissionDecision) -> bool {
    matches!(d, PermissionDecision::Option { option_id } if option_id == CONFIRM)
}

fn shown(s: &Subject) -> String {
    match &s.command {
        Some(c) => format!("`{c}`"),
        None => {
            let paths: Vec<String> = s.paths.iter().map(|p| p.display().to_string()).collect();
            format!("{} {}", s.tool, paths.join(", "))
        }
    }
}
