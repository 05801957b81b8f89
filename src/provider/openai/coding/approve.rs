//! Approvals for the coding tools: under `permission_mode` a write, an edit
//! or a command waits for the user's answer on hive's approval card (the
//! `ProviderEvent::Permission` path every provider uses). The answer comes
//! back as a `ProviderCommand::Permission` to the provider task, which hands
//! it here; a denial's reason becomes the tool's result for the model.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::event::{ToolDisplay, new_id};
use crate::provider::sink::Sink;
use crate::provider::{EventSink, PermissionDecision, PermissionRequest, ProviderEvent};

/// Which tool calls wait for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Writes, edits and commands ask.
    #[default]
    Ask,
    /// Writes and edits run; commands ask.
    AutoEdit,
    /// Nothing asks.
    Yolo,
}

/// The kind of change a tool call makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Edit,
    Command,
}

/// The approvals waiting for an answer and the tools allowed for good.
#[derive(Debug, Default)]
pub(crate) struct Approvals {
    mode: PermissionMode,
    pending: Mutex<HashMap<String, oneshot::Sender<PermissionDecision>>>,
    always: Mutex<HashSet<String>>,
}

impl Approvals {
    pub(crate) fn new(mode: PermissionMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    fn needs(&self, tool: &str, change: Change) -> bool {
        let by_mode = match self.mode {
            PermissionMode::Ask => true,
            PermissionMode::AutoEdit => change == Change::Command,
            PermissionMode::Yolo => false,
        };
        by_mode && !self.always.lock().is_ok_and(|a| a.contains(tool))
    }

    /// Waits for the user when the mode says so; `Err` is the model's
    /// answer (denied, with the user's reason).
    pub(crate) async fn check(
        &self,
        events: &EventSink,
        tool: &str,
        change: Change,
        input: &Value,
        (description, display): (String, Option<ToolDisplay>),
    ) -> Result<(), String> {
        if !self.needs(tool, change) {
            return Ok(());
        }
        let request_id = new_id("perm");
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(request_id.clone(), tx);
        }
        events.emit(ProviderEvent::Permission(PermissionRequest {
            request_id: request_id.clone(),
            tool_name: tool.to_owned(),
            input: input.clone(),
            description: Some(description),
            options: Vec::new(),
            display,
            ..Default::default()
        }));
        // Dropped (the turn was interrupted): the request is forgotten.
        let _forget = Forget(self, request_id);
        match rx.await {
            Ok(PermissionDecision::AllowOnce) => Ok(()),
            Ok(PermissionDecision::AllowAlways) => {
                if let Ok(mut a) = self.always.lock() {
                    a.insert(tool.to_owned());
                }
                Ok(())
            }
            Ok(PermissionDecision::Deny { reason }) => Err(denied(tool, &reason)),
            Ok(PermissionDecision::Option { option_id }) if option_id.starts_with("allow") => {
                Ok(())
            }
            Ok(PermissionDecision::Option { .. }) => Err(denied(tool, "")),
            Err(_) => Err(format!("the `{tool}` call got no answer from the user")),
        }
    }

    /// The user's answer to request `request_id`; false when none waits.
    pub(crate) fn answer(&self, request_id: &str, decision: PermissionDecision) -> bool {
        let tx = self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(request_id));
        tx.is_some_and(|tx| tx.send(decision).is_ok())
    }
}

fn denied(tool: &str, reason: &str) -> String {
    if reason.trim().is_empty() {
        format!("the user denied this `{tool}` call")
    } else {
        format!("the user denied this `{tool}` call: {reason}")
    }
}

/// Removes a pending request when its wait ends or is abandoned.
struct Forget<'a>(&'a Approvals, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.pending.lock() {
            p.remove(&self.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_asks_for_its_own_changes() {
        let ask = Approvals::new(PermissionMode::Ask);
        assert!(ask.needs("edit", Change::Edit) && ask.needs("bash", Change::Command));
        let auto = Approvals::new(PermissionMode::AutoEdit);
        assert!(!auto.needs("edit", Change::Edit) && auto.needs("bash", Change::Command));
        let yolo = Approvals::new(PermissionMode::Yolo);
        assert!(!yolo.needs("edit", Change::Edit) && !yolo.needs("bash", Change::Command));
        // Allowed always: that tool asks no more, the others still do.
        ask.always.lock().unwrap().insert("bash".into());
        assert!(!ask.needs("bash", Change::Command) && ask.needs("write", Change::Edit));
    }

    #[test]
    fn the_mode_reads_as_written_in_the_config() {
        let m: PermissionMode = serde_json::from_str("\"auto-edit\"").unwrap();
        assert_eq!(m, PermissionMode::AutoEdit);
        assert!(serde_json::from_str::<PermissionMode>("\"sometimes\"").is_err());
    }
}
