//! Claude's control protocol inside the stream: permission requests from the CLI and the answers to hive's own requests.

use super::*;

impl Translator {
    pub(super) fn control_request(&mut self, v: &Value, out: &mut Translated) {
        let request_id = str_of(v, "request_id");
        let Some(req) = v.get("request") else {
            return;
        };
        match str_of(req, "subtype") {
            "can_use_tool" if self.draining() => {
                out.replies
                    .push(crate::provider::claude::control::permission_deny(
                        request_id,
                        "The user cancelled this turn.",
                    ));
            }
            "can_use_tool" => {
                let description = req
                    .get("description")
                    .and_then(Value::as_str)
                    .or_else(|| req.get("decision_reason").and_then(Value::as_str))
                    .map(str::to_owned);
                let tool_name = match str_of(req, "tool_name") {
                    "" => str_of(req, "display_name"),
                    n => n,
                };
                out.events
                    .push(ProviderEvent::Permission(PermissionRequest {
                        request_id: request_id.to_owned(),
                        tool_name: tool_name.to_owned(),
                        display: req
                            .get("input")
                            .map(|i| display::describe(i, &display::COMMON)),
                        input: req.get("input").cloned().unwrap_or(Value::Null),
                        description,
                        options: Vec::new(),
                        ..Default::default()
                    }));
            }
            other => {
                out.replies
                    .push(crate::provider::claude::control::control_error(
                        request_id,
                        &format!("hive does not handle `{other}` requests"),
                    ));
            }
        }
    }

    pub(super) fn control_response(&mut self, v: &Value, out: &mut Translated) {
        let Some(resp) = v.get("response") else {
            return;
        };
        if str_of(resp, "subtype") == "error" {
            diagnostic(
                out,
                DiagnosticLevel::Warn,
                format!(
                    "claude refused control request {}: {}",
                    str_of(resp, "request_id"),
                    str_of(resp, "error")
                ),
            );
            return;
        }
        // The `initialize` answer lists the slash commands.
        let names = listed(resp, "commands", "name");
        if !names.is_empty() {
            self.commands = names;
            self.announce(out);
        }
        // ... and the models `/model` can pick (`value` is what `set_model` takes).
        let ids = listed(resp, "models", "value");
        if !ids.is_empty() {
            out.events.push(ProviderEvent::Models(ids));
        }
    }

    // ---- emission --------------------------------------------------------
}

/// The `field` string of each entry of a control response's `response.<list>`.
fn listed(resp: &Value, list: &str, field: &str) -> Vec<String> {
    resp.get("response")
        .and_then(|r| r.get(list))
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e.get(field).and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
