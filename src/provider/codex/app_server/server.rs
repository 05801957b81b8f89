//! What the server starts: turn notifications routed to the running turn, and approval requests turned into permission prompts.

use super::*;

impl AppServer {
    pub(super) async fn notification(&mut self, method: &str, params: &Value) {
        match method {
            "configWarning" => {
                let summary = params.get("summary").and_then(Value::as_str).unwrap_or("");
                self.diagnostic(DiagnosticLevel::Warn, format!("codex config: {summary}"));
                return;
            }
            "deprecationNotice" => {
                let summary = params.get("summary").and_then(Value::as_str).unwrap_or("");
                self.diagnostic(DiagnosticLevel::Info, format!("codex: {summary}"));
                return;
            }
            "mcpServer/startupStatus/updated" => {
                let text = |k: &str| params.get(k).and_then(Value::as_str).unwrap_or("");
                if text("status") == "failed" {
                    self.events.mcp_failed(text("name"), "Codex", text("error"));
                }
                return;
            }
            "thread/started" => {
                if let Some(model) = params.pointer("/thread/model").and_then(Value::as_str)
                    && self.model.is_none()
                {
                    self.model = Some(model.to_owned());
                }
                return;
            }
            _ => {}
        }
        let thread_of = params.get("threadId").and_then(Value::as_str);
        if self.other_thread(thread_of) {
            return;
        }
        if method == "thread/tokenUsage/updated"
            && let Some(total) = params.pointer("/tokenUsage/total")
        {
            self.thread_total = usage(total);
        }
        let turn_of = params
            .get("turnId")
            .and_then(Value::as_str)
            .or_else(|| params.pointer("/turn/id").and_then(Value::as_str));
        if turn_of.is_some_and(|t| self.abandoned.contains(t)) {
            return;
        }
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        if method == "turn/started" {
            turn.tr.set_base(&self.thread_total);
        }
        let outs = turn.tr.notification(method, params);
        let named =
            method == "turn/started" && turn.steers.len() + usize::from(turn.cancel_requested) > 0;
        self.deliver(turn, outs, named).await;
    }

    /// A text delta (`DeltaNote`): as `notification` takes the same line.
    pub(super) async fn delta_note(&mut self, note: &DeltaNote<'_>) {
        let p = &note.params;
        if self.other_thread(p.thread_id.as_deref())
            || p.turn_of().is_some_and(|t| self.abandoned.contains(t))
        {
            return;
        }
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        let outs = turn.tr.delta_note(note);
        self.deliver(turn, outs, false).await;
    }

    /// Sub-agents run in threads of their own; their traffic shows up in
    /// this thread as collab items, not as this turn's events.
    fn other_thread(&self, thread_of: Option<&str>) -> bool {
        matches!((thread_of, self.thread.as_deref()), (Some(theirs), Some(mine)) if theirs != mine)
    }

    /// What the turn's translator made of a notification, sent on; the turn
    /// stays unless it finished.
    async fn deliver(&mut self, mut turn: Turn, outs: Vec<Out>, named: bool) {
        let mut finished = false;
        for out in outs {
            match out {
                Out::Started => self.start_response(&mut turn),
                Out::Event(p) => {
                    self.start_response(&mut turn);
                    self.emit(&turn.hive_id, p);
                }
                Out::Finished(p) => {
                    self.start_response(&mut turn);
                    self.emit(&turn.hive_id, p);
                    finished = true;
                }
                Out::Diagnostic(level, message) => self.diagnostic(level, message),
                Out::Thread { .. } => {}
            }
        }
        if finished {
            return;
        }
        self.turn = Some(turn);
        if named {
            let id = self.turn.as_ref().and_then(|t| t.tr.codex_turn.clone());
            self.turn_named(id).await;
        }
    }

    pub(super) async fn server_request(&mut self, method: String, id: Value, params: Value) {
        let style = match method.as_str() {
            "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" => {
                ApprovalStyle::V2
            }
            "execCommandApproval" | "applyPatchApproval" => ApprovalStyle::V1,
            _ => {
                self.diagnostic(
                    DiagnosticLevel::Info,
                    format!("codex asked `{method}`, which hive does not answer; declined"),
                );
                self.write(json!({"id": id, "error": {"code": -32601, "message": format!("hive does not support `{method}`")}}))
                    .await;
                return;
            }
        };
        let request_id = format!("codex-{}", new_id("approval"));
        let request = self.permission_request(&method, &request_id, &params);
        self.approvals.insert(request_id, (id, style));
        let _ = self.events.send(ProviderEvent::Permission(request));
    }

    pub(super) fn permission_request(
        &self,
        method: &str,
        request_id: &str,
        params: &Value,
    ) -> PermissionRequest {
        let reason = params
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let is_patch = method.contains("ileChange") || method.contains("Patch");
        let item_id = params
            .get("itemId")
            .or_else(|| params.get("callId"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let known = self
            .turn
            .as_ref()
            .and_then(|t| t.tr.items().tool_arguments(item_id))
            .cloned()
            .unwrap_or_default();
        let mut input = serde_json::Map::new();
        if is_patch {
            if let Some(changes) = known.get("changes") {
                input.insert("changes".into(), changes.clone());
            }
            if let Some(root) = params.get("grantRoot").filter(|r| !r.is_null()) {
                input.insert("grant_root".into(), root.clone());
            }
        } else {
            let command = match params.get("command") {
                Some(Value::String(s)) => Some(Value::String(s.clone())),
                Some(Value::Array(parts)) => Some(Value::String(
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                )),
                _ => known.get("command").cloned(),
            };
            if let Some(c) = command {
                input.insert("command".into(), c);
            }
            if let Some(cwd) = params.get("cwd").filter(|c| !c.is_null()) {
                input.insert("cwd".into(), cwd.clone());
            }
        }
        if let Some(r) = &reason {
            input.insert("reason".into(), r.clone().into());
        }
        PermissionRequest {
            request_id: request_id.to_owned(),
            tool_name: if is_patch { "apply_patch" } else { "shell" }.into(),
            display: Some(crate::provider::codex::items::call::display(&input)),
            input: Value::Object(input),
            description: reason,
            options: Vec::new(),
            ..Default::default()
        }
    }

    pub(super) async fn answer(&mut self, request_id: &str, decision: PermissionDecision) {
        let Some((id, style)) = self.approvals.remove(request_id) else {
            self.diagnostic(
                DiagnosticLevel::Warn,
                format!("codex: no pending approval `{request_id}`"),
            );
            return;
        };
        let word = match (style, &decision) {
            (ApprovalStyle::V2, PermissionDecision::AllowOnce) => "accept",
            (ApprovalStyle::V2, PermissionDecision::AllowAlways) => "acceptForSession",
            (ApprovalStyle::V2, PermissionDecision::Deny { .. }) => "decline",
            (ApprovalStyle::V1, PermissionDecision::AllowOnce) => "approved",
            (ApprovalStyle::V1, PermissionDecision::AllowAlways) => "approved_for_session",
            (ApprovalStyle::V1, PermissionDecision::Deny { .. }) => "denied",
            (_, PermissionDecision::Option { option_id }) => option_id.as_str(),
        };
        self.write(json!({"id": id, "result": {"decision": word}}))
            .await;
        // The approval answer has no room for words; the user's reason goes
        // into the running turn instead of being thrown away (issue 13 item 8).
        if let PermissionDecision::Deny { reason } = decision
            && !reason.trim().is_empty()
        {
            self.steer(format!("I declined that request: {}", reason.trim()))
                .await;
        }
    }
}
