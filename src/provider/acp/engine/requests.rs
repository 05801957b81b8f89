//! Requests and notifications from the agent: `session/update`,
//! `session/request_permission` (and hive's answers), the confined
//! `fs/*_text_file` methods (handed out as jobs, see fs.rs), and method-not-found for everything else.

use agent_client_protocol_schema::v1::{
    PermissionOptionKind, ReadTextFileRequest, RequestPermissionRequest, WriteTextFileRequest,
};
use serde_json::{Value, json};

use super::{Effect, Engine, PendingPermission, Phase};
use crate::provider::acp::client::{self, INVALID_PARAMS, METHOD_NOT_FOUND};
use crate::provider::acp::fs::{FsJob, FsOp};
use crate::provider::acp::render;
use crate::provider::acp::translate::{Translated, kind_label};
use crate::provider::{
    DiagnosticLevel, PermissionDecision, PermissionOption, PermissionRequest, ProviderEvent,
};

impl Engine {
    pub(super) fn on_notification(&mut self, method: &str, params: Value) {
        if method != "session/update" {
            tracing::debug!(method, "notification ignored");
            return;
        }
        if self.phase == Phase::Opening && self.cfg.resume.is_some() {
            // History replayed by session/load; hive shows its own copy.
            let kind = params
                .pointer("/update/sessionUpdate")
                .and_then(Value::as_str);
            if kind != Some("available_commands_update") {
                self.replayed += 1;
                return;
            }
        }
        let out = self.translator.update(&params);
        match self.turn.as_ref().map(|t| t.turn_id.clone()) {
            Some(turn_id) => self.translated(&turn_id, out),
            None => {
                // Between turns only session-level news matters; stray
                // chunks (late output of a turn hive already ended) are dropped.
                for t in out {
                    match t {
                        Translated::Stream(_) => {
                            tracing::debug!("update outside a turn dropped")
                        }
                        other => self.translated("", vec![other]),
                    }
                }
            }
        }
    }

    pub(super) fn on_request(&mut self, id: Value, method: &str, params: Value) {
        match method {
            "session/request_permission" => self.permission_request(id, params),
            "fs/read_text_file" => {
                if let Some(req) = self.params::<ReadTextFileRequest>(&id, params) {
                    let op = FsOp::Read {
                        path: req.path.display().to_string(),
                        line: req.line,
                        limit: req.limit,
                    };
                    self.file_job(id, op);
                }
            }
            "fs/write_text_file" => {
                if let Some(req) = self.params::<WriteTextFileRequest>(&id, params) {
                    let op = FsOp::Write {
                        path: req.path.display().to_string(),
                        content: req.content,
                    };
                    self.file_job(id, op);
                }
            }
            other => {
                self.write(client::error_response(
                    &id,
                    METHOD_NOT_FOUND,
                    &format!("method not found: {other}"),
                ));
            }
        }
    }

    /// A request's params as `T`, or `None` once the agent was told they
    /// are invalid.
    fn params<T: serde::de::DeserializeOwned>(&mut self, id: &Value, params: Value) -> Option<T> {
        match serde_json::from_value(params) {
            Ok(p) => Some(p),
            Err(e) => {
                self.write(client::error_response(id, INVALID_PARAMS, &e.to_string()));
                None
            }
        }
    }

    /// File I/O blocks, so it leaves the engine as a job for the blocking pool.
    fn file_job(&mut self, id: Value, op: FsOp) {
        let job = FsJob::new(id, self.fs.clone(), op);
        self.effects.push(Effect::File(job));
    }

    pub(super) fn permission_request(&mut self, id: Value, params: Value) {
        let Some(req) = self.params::<RequestPermissionRequest>(&id, params) else {
            return;
        };
        let active = self
            .turn
            .as_ref()
            .filter(|t| t.cancel_deadline.is_none())
            .map(|t| t.turn_id.clone());
        let Some(turn_id) = active else {
            // Nobody is there to ask: the turn is over or being cancelled.
            self.write(client::response(
                &id,
                json!({"outcome": {"outcome": "cancelled"}}),
            ));
            return;
        };
        let out = self.translator.permission_tool(&req.tool_call);
        self.translated(&turn_id, out);
        self.permission_seq += 1;
        let request_id = format!("acp-perm-{}", self.permission_seq);
        let options: Vec<PermissionOption> = req
            .options
            .iter()
            .map(|o| PermissionOption {
                option_id: o.option_id.to_string(),
                label: o.name.clone(),
                kind: option_kind(o.kind).to_owned(),
            })
            .collect();
        let f = &req.tool_call.fields;
        let tool_name = f
            .title
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| f.name.clone())
            .or_else(|| f.kind.map(|k| kind_label(k).to_owned()))
            .unwrap_or_else(|| "tool".into());
        let description = f
            .content
            .as_deref()
            .map(render::tool_content)
            .filter(|d| !d.is_empty());
        let input = f.raw_input.clone().unwrap_or_else(|| json!({}));
        let locations = f
            .locations
            .iter()
            .flatten()
            .map(|l| l.path.display().to_string())
            .collect();
        let display = crate::provider::acp::translate::describe_input(Some(&input), &tool_name);
        self.permissions.insert(
            request_id.clone(),
            PendingPermission {
                rpc_id: id,
                tool_call_id: req.tool_call.tool_call_id.to_string(),
                tool_name: tool_name.clone(),
                options: options.clone(),
            },
        );
        self.effects
            .push(Effect::Emit(Box::new(ProviderEvent::Permission(
                PermissionRequest {
                    request_id,
                    tool_name,
                    display: Some(display),
                    input,
                    description,
                    options,
                    kind: f.kind.map(|k| kind_label(k).to_owned()),
                    locations,
                },
            ))));
    }

    pub(super) fn answer_permission(&mut self, request_id: &str, decision: PermissionDecision) {
        let Some(p) = self.permissions.remove(request_id) else {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("no pending permission request `{request_id}`"),
            );
            return;
        };
        let by_kind = |kinds: &[&str]| {
            kinds.iter().find_map(|k| {
                p.options
                    .iter()
                    .find(|o| o.kind == *k)
                    .map(|o| o.option_id.clone())
            })
        };
        let chosen = match decision {
            PermissionDecision::Option { option_id } => Some(option_id),
            PermissionDecision::AllowOnce => by_kind(&["allow_once", "allow_always"]),
            PermissionDecision::AllowAlways => by_kind(&["allow_always", "allow_once"]),
            PermissionDecision::Deny { reason } => {
                self.keep_deny_reason(&p.tool_name, &reason);
                by_kind(&["reject_once", "reject_always"])
            }
        };
        let refused = chosen.as_ref().is_none_or(|id| {
            p.options
                .iter()
                .any(|o| o.option_id == *id && o.kind.starts_with("reject"))
        });
        if refused {
            self.translator.refuse(&p.tool_call_id);
        }
        let outcome = match chosen {
            Some(option_id) => json!({"outcome": "selected", "optionId": option_id}),
            None => json!({"outcome": "cancelled"}),
        };
        self.write(client::response(&p.rpc_id, json!({ "outcome": outcome })));
    }

    /// ACP answers a permission with an option id only (`RequestPermission
    /// Response` has no reason field, v1 or v2): the user's reason goes to
    /// the agent as the first words of the next prompt, and the pane says so.
    fn keep_deny_reason(&mut self, tool: &str, reason: &str) {
        let reason = reason.trim();
        if reason.is_empty() {
            return;
        }
        self.deny_reasons
            .push(format!("I declined your request to use {tool}: {reason}"));
        self.diagnostic(
            DiagnosticLevel::Info,
            "ACP has no place for a refusal's reason: it goes to the agent with your next message"
                .into(),
        );
    }

    pub(super) fn cancel_permissions(&mut self) {
        let pending: Vec<PendingPermission> = self.permissions.drain().map(|(_, p)| p).collect();
        for p in pending {
            self.write(client::response(
                &p.rpc_id,
                json!({"outcome": {"outcome": "cancelled"}}),
            ));
        }
    }
}

fn option_kind(kind: PermissionOptionKind) -> &'static str {
    match kind {
        PermissionOptionKind::AllowOnce => "allow_once",
        PermissionOptionKind::AllowAlways => "allow_always",
        PermissionOptionKind::RejectOnce => "reject_once",
        PermissionOptionKind::RejectAlways => "reject_always",
        _ => "other",
    }
}
