//! One pane's policy: its gate (the config's rules, the agent's, its
//! preset), its vendor (how its requests read), its directory, the
//! project's audit log and how long a card waits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::audit::{Audit, Entry};
use super::gate::{Gate, Subject, Verdict};
use super::learned::LearnedRules;
use crate::protocol::agent::PermissionRequest;

#[derive(Debug, Clone)]
pub struct PanePolicy {
    /// The pane's agent id.
    pub pane: String,
    /// Its provider's name.
    pub vendor: String,
    pub cwd: PathBuf,
    pub gate: Gate,
    pub audit: Option<Arc<Audit>>,
    /// The project's rules learned from `allow always`.
    pub learned: Option<Arc<LearnedRules>>,
    /// `[approvals] timeout_secs`.
    pub timeout: Option<Duration>,
}

impl PanePolicy {
    /// What `req` is about and the gate's verdict on it.
    pub fn decide(&self, req: &PermissionRequest) -> (Subject, Verdict) {
        let subject = super::subject(&self.vendor, req, &self.cwd);
        let learned: Vec<_> = self
            .learned
            .as_ref()
            .map(|l| l.rules().into_iter().map(|l| (l.id, l.rule)).collect())
            .unwrap_or_default();
        // A learned rule the gate cannot build (a hand-edited file) is
        // left out, with the others kept.
        let verdict = match self.gate.with_rules(learned) {
            Ok(gate) => gate.decide(&subject),
            Err(e) => {
                tracing::warn!("learned approval rules: {e}");
                self.gate.decide(&subject)
            }
        };
        (subject, verdict)
    }

    /// `allow always` on a card: learns an allow rule for `subject`; the
    /// notice for the pane.
    pub fn learn(&self, subject: &Subject) -> Option<String> {
        let learned = self.learned.as_ref()?;
        Some(match learned.learn(subject, &self.pane, &self.cwd) {
            Ok(ids) if ids.is_empty() => "already allowed by a learned rule".into(),
            Ok(ids) => format!(
                "learned {} (kept in {}; remove a rule there to forget it)",
                ids.join(", "),
                learned.path().display()
            ),
            Err(why) => why,
        })
    }

    /// Appends a decision on `req` to the audit log.
    pub fn record(&self, req_id: &str, subject: &Subject, decision: &str, by: &str, reason: &str) {
        let Some(audit) = &self.audit else {
            return;
        };
        audit.record(&Entry {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            pane: self.pane.clone(),
            vendor: self.vendor.clone(),
            request_id: req_id.to_owned(),
            tool: subject.tool.clone(),
            command: subject.command.clone(),
            paths: subject
                .paths
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            decision: decision.to_owned(),
            by: by.to_owned(),
            reason: reason.to_owned(),
        });
    }
}
