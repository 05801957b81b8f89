//! Pi's events around the message: tool execution, retries, compaction, the steering queue and extension UI requests.

use super::*;

impl PiTranslator {
    pub(super) fn tool_start(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let Some(call_id) = str_field(v, "toolCallId").filter(|s| !s.is_empty()) else {
            return;
        };
        let known = self
            .turn
            .as_ref()
            .is_none_or(|t| t.announced.contains_key(call_id));
        if known {
            return;
        }
        self.ensure_started(out);
        let name = str_field(v, "toolName").unwrap_or("tool").to_owned();
        let item_id = new_id("tool");
        if let Some(t) = self.turn.as_mut() {
            t.announced.insert(call_id.to_owned(), item_id.clone());
        }
        self.emit(
            out,
            Payload::tool_start(item_id.clone(), name.clone(), call_id.to_owned()),
        );
        self.emit(
            out,
            Payload::ItemDone {
                item_id,
                final_item: display::function_call(
                    name,
                    call_id,
                    object(v.get("args")),
                    &super::TOOL_KEYS,
                ),
            },
        );
    }

    /// What a running tool printed so far (`partialResult`, the whole
    /// output each time).
    pub(super) fn tool_progress(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let Some(call_id) = str_field(v, "toolCallId") else {
            return;
        };
        let Some(item_id) = self
            .turn
            .as_ref()
            .and_then(|t| t.announced.get(call_id))
            .cloned()
        else {
            return;
        };
        let output = v.get("partialResult").map(result_text).unwrap_or_default();
        if output.is_empty() {
            return;
        }
        self.emit(
            out,
            Payload::ToolProgress {
                item_id,
                display: None,
                output: Some(output),
                output_delta: None,
            },
        );
    }

    pub(super) fn tool_end(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let Some(call_id) = str_field(v, "toolCallId").filter(|s| !s.is_empty()) else {
            return;
        };
        if self.turn.is_none() {
            return;
        }
        self.ensure_started(out);
        let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let output = v.get("result").map(result_text).unwrap_or_default();
        self.emit(
            out,
            Payload::tool_output(new_id("out"), call_id, output, is_error),
        );
    }

    pub(super) fn retry_start(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        if let Some(t) = self.turn.as_mut() {
            t.settling = None;
        }
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let text = format!(
            "Retrying after an error (attempt {}/{}, in {} ms): {}",
            n("attempt"),
            n("maxAttempts"),
            n("delayMs"),
            str_field(v, "errorMessage").unwrap_or("unknown error")
        );
        self.system_message(text, out);
    }

    pub(super) fn retry_end(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        if v.get("success").and_then(Value::as_bool).unwrap_or(false) {
            return;
        }
        let error = str_field(v, "finalError")
            .unwrap_or("retries exhausted")
            .to_owned();
        match self.turn.as_ref() {
            Some(t) if t.cancel_requested => {
                let payload = cancelled();
                self.finish(out, payload);
            }
            Some(_) => self.finish(
                out,
                Payload::ResponseError {
                    error: ErrorInfo::new("pi_error", error),
                },
            ),
            None => out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Warn,
                format!("pi gave up retrying: {error}"),
            )),
        }
    }

    pub(super) fn compaction_start(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        if let Some(t) = self.turn.as_mut() {
            t.settling = None;
        }
        let reason = str_field(v, "reason").unwrap_or("threshold");
        self.system_message(format!("Compacting the conversation ({reason})…"), out);
    }

    pub(super) fn compaction_end(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let aborted = v.get("aborted").and_then(Value::as_bool).unwrap_or(false);
        let will_retry = v.get("willRetry").and_then(Value::as_bool).unwrap_or(false);
        let failed = v.get("result").is_none_or(Value::is_null) && !aborted;
        let text = if aborted {
            "Compaction aborted.".to_owned()
        } else if failed {
            match str_field(v, "errorMessage") {
                Some(e) => format!("Compaction failed: {e}"),
                None => "Compaction failed.".to_owned(),
            }
        } else if will_retry {
            "Compaction finished; retrying the request.".to_owned()
        } else {
            "Compaction finished.".to_owned()
        };
        self.system_message(text, out);
        // An error that compaction was meant to fix stands if no retry follows.
        let errored = self
            .turn
            .as_ref()
            .is_some_and(|t| t.last_stop.as_deref() == Some("error") && !will_retry);
        if errored {
            self.error_stands(out);
        }
    }

    pub(super) fn queue_update(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let len = |k: &str| v.get(k).and_then(Value::as_array).map_or(0, Vec::len);
        let (steering, follow_up) = (len("steering"), len("followUp"));
        let total = steering + follow_up;
        if total > self.queued {
            out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Info,
                format!(
                    "pi holds {steering} steering and {follow_up} follow-up message(s) for its next step"
                ),
            ));
        }
        self.queued = total;
    }

    pub(super) fn ui_request(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let method = str_field(v, "method").unwrap_or_default();
        let title = str_field(v, "title")
            .or_else(|| str_field(v, "message"))
            .unwrap_or_default();
        match method {
            "notify" => out.push(ProviderEvent::diagnostic(
                DiagnosticLevel::Info,
                format!("pi: {}", str_field(v, "message").unwrap_or(title)),
            )),
            "select" | "confirm" | "input" | "editor" => {
                // pi waits for an answer; hive has no dialog for it yet, so the
                // request is cancelled instead of hanging the agent.
                if let Some(id) = str_field(v, "id") {
                    let kind = if str_field(v, "type") == Some("hook_ui_request") {
                        "hook_ui_response"
                    } else {
                        "extension_ui_response"
                    };
                    self.outbox
                        .push(json!({"type": kind, "id": id, "cancelled": true}).to_string());
                }
                out.push(ProviderEvent::diagnostic(
                    DiagnosticLevel::Warn,
                    format!(
                        "pi asked \"{title}\" ({method}); hive cannot answer it and cancelled it"
                    ),
                ));
            }
            _ => {}
        }
    }
}
