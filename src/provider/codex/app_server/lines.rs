//! Reading the server: each stdout line dispatched, and the answers to hive's own requests (thread start/resume, turn start).

use super::*;
use crate::provider::json::object_line;

impl AppServer {
    pub(super) async fn message(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(note) = DeltaNote::read(trimmed) {
            return self.delta_note(&note).await;
        }
        let mut msg = match object_line("codex app-server", trimmed) {
            Ok(v) => v,
            Err(warning) => {
                self.diagnostic(DiagnosticLevel::Warn, warning);
                return;
            }
        };
        // Params are moved out, not copied: deltas arrive by the thousand.
        let params = msg
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|v| !v.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                self.server_request(method.to_owned(), id.clone(), params)
                    .await
            }
            (Some(method), None) => self.notification(method, &params).await,
            (None, Some(id)) => self.response(id.as_i64(), &msg).await,
            (None, None) => self.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "codex app-server: message is neither request, response nor notification: {}",
                    excerpt(trimmed)
                ),
            ),
        }
    }

    pub(super) async fn response(&mut self, id: Option<i64>, msg: &Value) {
        let Some(purpose) = id.and_then(|id| self.requests.remove(&id)) else {
            tracing::debug!("codex app-server: response to an unknown request: {msg}");
            return;
        };
        let error = msg.get("error").map(|e| {
            e.get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| e.to_string())
        });
        let result = msg.get("result").cloned().unwrap_or(Value::Null);
        match (purpose, error) {
            (Request::Initialize, None) => self.initialized().await,
            (Request::Initialize | Request::ThreadStart, Some(e)) => {
                self.diagnostic(
                    DiagnosticLevel::Error,
                    format!("codex app-server refused to start a thread: {e}"),
                );
                self.fail_queued(&e);
            }
            (Request::ThreadStart | Request::ThreadResume(_), None) => {
                self.thread_ready(&result).await
            }
            (Request::ThreadResume(thread), Some(e)) => {
                let notice = format!(
                    "Codex thread {thread} could not be resumed; continuing in a new thread."
                );
                self.diagnostic(DiagnosticLevel::Warn, format!("{notice} ({e})"));
                self.stale_notice = Some(notice);
                self.thread_start().await;
            }
            (Request::TurnStart(hive_id), None) => self.turn_started(&hive_id, &result).await,
            (Request::TurnStart(hive_id), Some(e)) => {
                if self.turn.as_ref().is_some_and(|t| t.hive_id == hive_id)
                    && let Some(turn) = self.turn.take()
                {
                    self.emit(
                        &turn.hive_id,
                        Payload::ResponseError {
                            error: ErrorInfo::new("turn_start_failed", e),
                        },
                    );
                }
            }
            (Request::Interrupt, Some(e)) => {
                tracing::debug!("codex app-server: turn/interrupt failed: {e}");
            }
            (Request::Steer(text), Some(e)) => self.diagnostic(
                DiagnosticLevel::Warn,
                format!("codex did not take the message mid-turn ({e}); not delivered: {text}"),
            ),
            (Request::Interrupt | Request::Steer(_), None) => {}
            (Request::ModelList(so_far), None) => self.models_listed(so_far, &result).await,
            (Request::ModelList(so_far), Some(e)) => {
                tracing::debug!("codex app-server: model/list failed: {e}");
                if so_far.is_empty() {
                    self.configured_models();
                } else {
                    let _ = self.events.send(ProviderEvent::Models(so_far));
                }
            }
        }
    }

    /// The server answered `initialize`: resume the pane's thread or start one.
    async fn initialized(&mut self) {
        self.write(json!({"method": "initialized", "params": {}}))
            .await;
        let Some(thread) = self.resume.clone() else {
            return self.thread_start().await;
        };
        let mut params = self.settings.thread_params();
        params.insert("threadId".into(), thread.clone().into());
        // hive shows its own history; the server's copy of past turns is not
        // needed (and deprecated in full).
        params.insert("excludeTurns".into(), true.into());
        self.request(
            Request::ThreadResume(thread),
            "thread/resume",
            Value::Object(params),
        )
        .await;
    }

    /// `turn/start` answered with the server's turn id.
    async fn turn_started(&mut self, hive_id: &str, result: &Value) {
        let codex_turn = result
            .pointer("/turn/id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if self.turn.as_ref().is_some_and(|t| t.hive_id == hive_id) {
            self.turn_named(codex_turn).await;
        } else if let Some(codex_turn) = codex_turn {
            // hive gave up on this turn before the server named it.
            self.abandoned.insert(codex_turn.clone());
            self.send_interrupt(codex_turn).await;
        }
    }

    pub(super) async fn thread_start(&mut self) {
        let params = Value::Object(self.settings.thread_params());
        self.request(Request::ThreadStart, "thread/start", params)
            .await;
    }

    pub(super) async fn thread_ready(&mut self, result: &Value) {
        let Some(id) = result.pointer("/thread/id").and_then(Value::as_str) else {
            self.diagnostic(
                DiagnosticLevel::Error,
                format!(
                    "codex app-server: thread response without an id: {}",
                    excerpt(&result.to_string())
                ),
            );
            return;
        };
        self.thread = Some(id.to_owned());
        self.model = result
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.settings.model.clone());
        self.startup = None;
        announce(&self.events, self.thread.as_deref(), self.model.as_deref());
        if let Some((turn_id, text)) = self.queued.take() {
            self.start_turn(turn_id, text).await;
        }
        self.list_models().await;
    }

    pub(super) fn fail_queued(&mut self, message: &str) {
        if let Some((turn_id, _)) = self.queued.take() {
            self.emit(
                &turn_id,
                Payload::ResponseError {
                    error: ErrorInfo::new("thread_unavailable", message.to_owned()),
                },
            );
        }
    }

    /// The server named the running turn: deliver what waited for its id.
    pub(super) async fn turn_named(&mut self, codex_turn: Option<String>) {
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        if turn.tr.codex_turn.is_none() {
            turn.tr.codex_turn = codex_turn;
        }
        turn.tr.set_base(&self.thread_total);
        self.start_response(&mut turn);
        let steers = std::mem::take(&mut turn.steers);
        let interrupt = std::mem::take(&mut turn.cancel_requested);
        let id = turn.tr.codex_turn.clone();
        self.turn = Some(turn);
        if let Some(codex_turn) = id {
            for text in steers {
                self.send_steer(codex_turn.clone(), text).await;
            }
            if interrupt {
                self.send_interrupt(codex_turn).await;
            }
        }
    }
}
