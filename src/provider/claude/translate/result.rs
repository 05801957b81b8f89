//! The end of a Claude turn: the `result` line, its usage and how the turn closes.

use super::*;

impl Translator {
    pub(super) fn result(&mut self, v: &Value, out: &mut Translated) {
        let uuids = answered(v);
        let usage = self.result_usage(v);
        let stop_reason = v
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.stop_reason.take());
        let api_error = self.api_error.take();
        self.current_message = None;
        if self.drained_by(&uuids) {
            return;
        }
        let Some(turn) = self.turn.as_mut() else {
            self.blocks.clear();
            return;
        };
        if !uuids.is_empty() {
            let ours = uuids.iter().any(|u| turn.pending.contains(u));
            if !ours {
                tracing::debug!(?uuids, "claude result for another turn ignored");
                self.blocks.clear();
                return;
            }
            turn.pending.retain(|p| !uuids.contains(p));
        } else {
            // No uuid echo: a result answers everything written so far.
            turn.pending.clear();
        }
        match (&mut turn.usage, usage) {
            (Some(total), Some(u)) => total.accumulate(&u),
            (slot @ None, Some(u)) => *slot = Some(u),
            _ => {}
        }
        let terminal_reason = str_of(v, "terminal_reason");
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let cancelled = terminal_reason.starts_with("aborted") || turn.cancel_requested;
        let more = !turn.pending.is_empty();
        if cancelled {
            self.end_turn(
                out,
                ResponseStatus::Cancelled,
                Some("interrupted".into()),
                None,
            );
        } else if is_error {
            let error = result_error(v, api_error);
            if more {
                // The queued message still runs; show the failure in line.
                self.system_message(out, format!("Claude Code error: {}", error.message));
                self.close_blocks();
            } else {
                self.end_turn(out, ResponseStatus::Error, stop_reason, Some(error));
            }
        } else if more {
            // A steered message Claude queued as its own turn comes next.
            self.finish_open_blocks(out);
        } else {
            self.finish_open_blocks(out);
            self.end_turn(out, ResponseStatus::Completed, stop_reason, None);
        }
    }

    /// While draining a turn hive ended itself: whether this result ends
    /// that turn (and is dropped).
    fn drained_by(&mut self, uuids: &[String]) -> bool {
        if !self.draining() {
            return false;
        }
        let stale = uuids.is_empty() || uuids.iter().any(|u| self.abandoned.contains(u));
        if stale {
            // The end of the turn hive already ended; without a uuid echo
            // the first result after it is taken to be that one.
            if uuids.is_empty() {
                self.abandoned.clear();
            }
            for u in uuids {
                self.abandoned.remove(u);
            }
            self.blocks.clear();
        }
        stale
    }

    /// Usage of one `result`. `total_cost_usd` is cumulative over the process,
    /// so the turn's own cost comes from `model_usage_since_last_result`, or
    /// else from the difference to the previous total.
    pub(super) fn result_usage(&mut self, v: &Value) -> Option<Usage> {
        let total = v.get("total_cost_usd").and_then(Value::as_f64);
        let since: Option<f64> = v
            .get("model_usage_since_last_result")
            .and_then(Value::as_object)
            .map(|models| {
                models
                    .values()
                    .filter_map(|m| m.get("costUSD").and_then(Value::as_f64))
                    .sum()
            });
        let cost = since.or(match (total, self.last_total_cost) {
            (Some(t), Some(prev)) if t >= prev => Some(t - prev),
            (t, _) => t,
        });
        if total.is_some() {
            self.last_total_cost = total;
        }
        let usage = content::usage(v.get("usage")?);
        // The conversation after this turn: the last call's prompt and the
        // turn's answer; the window from `modelUsage` (the largest, as a
        // small helper model may be listed too).
        let context_tokens = self.last_prompt.take().map(|p| p + usage.output_tokens);
        let context_window = v
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|models| {
                models
                    .values()
                    .filter_map(|m| m.get("contextWindow").and_then(Value::as_u64))
                    .max()
            });
        Some(Usage {
            cost_usd: cost,
            context_tokens,
            context_window,
            ..usage
        })
    }

    pub(super) fn finish_open_blocks(&mut self, out: &mut Translated) {
        for pos in 0..self.blocks.len() {
            if !self.blocks[pos].closed {
                self.finalize_streamed(pos, out);
            }
        }
        self.blocks.clear();
    }

    pub(super) fn close_blocks(&mut self) {
        self.blocks.clear();
    }

    pub(super) fn end_turn(
        &mut self,
        out: &mut Translated,
        status: ResponseStatus,
        finish_reason: Option<String>,
        error: Option<ErrorInfo>,
    ) {
        self.bind(out);
        self.blocks.clear();
        let Some(turn) = self.turn.take() else {
            return;
        };
        out.events.push(self.event(
            &turn.turn_id,
            Payload::ResponseDone {
                status,
                finish_reason,
                error,
                usage: turn.usage,
            },
        ));
    }

    // ---- control protocol ------------------------------------------------
}

/// The user messages a `result` answered (`user_message_uuids`, or the
/// older single `user_message_uuid`).
fn answered(v: &Value) -> Vec<String> {
    match v.get("user_message_uuids").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => v
            .get("user_message_uuid")
            .and_then(Value::as_str)
            .map(|u| vec![u.to_owned()])
            .unwrap_or_default(),
    }
}
