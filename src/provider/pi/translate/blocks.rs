//! Pi's streamed assistant message: text, thinking and tool-call blocks of `message_update`, closed by `message_end`.

use super::*;

impl PiTranslator {
    /// The assistant message of a `message_start` / `message_end` in a
    /// turn. User messages (prompts, steers) are shown by the host; tool
    /// results arrive as tool_execution_end.
    fn assistant_message<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        let msg = v.get("message")?;
        (str_field(msg, "role") == Some("assistant") && self.turn.is_some()).then_some(msg)
    }

    pub(super) fn message_start(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        if self.assistant_message(v).is_none() {
            return;
        }
        self.ensure_started(out);
        if let Some(t) = self.turn.as_mut() {
            t.blocks.clear();
        }
    }

    pub(super) fn message_update(&mut self, update: Update<'_>, out: &mut Vec<ProviderEvent>) {
        if self.turn.is_none() {
            return;
        }
        let Some(ame) = update.ame else { return };
        self.ensure_started(out);
        let idx = ame.index;
        let block = ame.partial.as_ref().and_then(|p| p.content.get(idx));
        let kind = ame.kind.as_ref();
        let is_end = kind.ends_with("_end");
        match kind {
            "text_start" | "text_delta" | "text_end" | "thinking_start" | "thinking_delta"
            | "thinking_end" => {
                let (block_kind, partial) = if kind.starts_with("text") {
                    (BlockKind::Text, block.and_then(|b| b.text.as_deref()))
                } else {
                    (
                        BlockKind::Thinking,
                        block.and_then(|b| b.thinking.as_deref()),
                    )
                };
                // The freshest full text: `content` on *_end, else the partial
                // block (which may already be ahead of this event's `delta`).
                let full = if is_end {
                    ame.content.as_deref().or(partial)
                } else {
                    partial
                };
                self.text_update(block_kind, idx, is_end, full, ame.delta.as_deref(), out);
            }
            "toolcall_start" | "toolcall_delta" => self.tool_update(
                idx,
                block.and_then(|b| b.id.as_deref()),
                block.and_then(|b| b.name.as_deref()),
                ame.delta.as_deref(),
                out,
            ),
            "toolcall_end" => {
                let call = ame.tool_call.or_else(|| {
                    block.map(|b| json!({"id": b.id.as_deref(), "name": b.name.as_deref()}))
                });
                if let Some(call) = call {
                    self.tool_done(idx, &call, out);
                }
            }
            _ => {}
        }
    }

    pub(super) fn open_block(
        &mut self,
        idx: usize,
        kind: BlockKind,
        name: Option<&str>,
        call_id: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        let Some(t) = self.turn.as_mut() else { return };
        if t.blocks.get(&idx).is_some_and(|b| b.kind == kind) {
            return;
        }
        let item_id = new_id(if kind == BlockKind::Tool {
            "tool"
        } else {
            "item"
        });
        if let Some(c) = call_id {
            t.announced.insert(c.to_owned(), item_id.clone());
        }
        t.blocks.insert(
            idx,
            Block {
                kind,
                item_id: item_id.clone(),
                emitted: String::new(),
                call_id: call_id.map(str::to_owned),
                done: false,
            },
        );
        let item_type = match kind {
            BlockKind::Text => ItemType::Message,
            BlockKind::Thinking => ItemType::Reasoning,
            BlockKind::Tool => ItemType::FunctionCall,
        };
        self.emit(
            out,
            Payload::ItemStart {
                item_id,
                item_type,
                initial_content: None,
                name: name.map(str::to_owned),
                call_id: call_id.map(str::to_owned),
            },
        );
    }

    pub(super) fn text_update(
        &mut self,
        kind: BlockKind,
        idx: usize,
        is_end: bool,
        full: Option<&str>,
        delta: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        self.open_block(idx, kind, None, None, out);
        let Some(t) = self.turn.as_mut() else { return };
        let Some(b) = t.blocks.get_mut(&idx) else {
            return;
        };
        let item_id = b.item_id.clone();
        let delta = match full {
            Some(full) => {
                if full.len() > b.emitted.len() && full.starts_with(b.emitted.as_str()) {
                    let d = full[b.emitted.len()..].to_owned();
                    b.emitted.push_str(&d);
                    Some(d)
                } else {
                    // Equal (nothing new) or rewritten: the final item fixes it.
                    None
                }
            }
            None => delta.filter(|d| !d.is_empty()).map(|d| {
                b.emitted.push_str(d);
                d.to_owned()
            }),
        };
        if let Some(delta_content) = delta {
            self.emit(
                out,
                Payload::ItemDelta {
                    item_id,
                    delta_content,
                },
            );
        }
        if is_end {
            let content = full.map(str::to_owned).unwrap_or_else(|| {
                self.turn
                    .as_ref()
                    .and_then(|t| t.blocks.get(&idx))
                    .map(|b| b.emitted.clone())
                    .unwrap_or_default()
            });
            self.done_text(idx, kind, content, out);
        }
    }

    pub(super) fn done_text(
        &mut self,
        idx: usize,
        kind: BlockKind,
        content: String,
        out: &mut Vec<ProviderEvent>,
    ) {
        let Some(t) = self.turn.as_mut() else { return };
        let Some(b) = t.blocks.get_mut(&idx) else {
            return;
        };
        if b.done {
            return;
        }
        b.done = true;
        let item_id = b.item_id.clone();
        let final_item = if kind == BlockKind::Thinking {
            FinalItem::Reasoning {
                content,
                provider_id: PROVIDER_ID.into(),
            }
        } else {
            FinalItem::Message {
                content,
                origin: Origin::Agent,
            }
        };
        self.emit(
            out,
            Payload::ItemDone {
                item_id,
                final_item,
            },
        );
    }

    pub(super) fn tool_update(
        &mut self,
        idx: usize,
        id: Option<&str>,
        name: Option<&str>,
        delta: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        let opened = self.turn.as_ref().is_some_and(|t| {
            t.blocks
                .get(&idx)
                .is_some_and(|b| b.kind == BlockKind::Tool)
        });
        if !opened {
            match (id.filter(|s| !s.is_empty()), name.filter(|s| !s.is_empty())) {
                (Some(id), Some(name)) => {
                    self.open_block(idx, BlockKind::Tool, Some(name), Some(id), out)
                }
                // Not named yet; the next update or toolcall_end will be.
                _ => return,
            }
        }
        if let Some(delta) = delta.filter(|d| !d.is_empty())
            && let Some(item_id) = self
                .turn
                .as_ref()
                .and_then(|t| t.blocks.get(&idx))
                .map(|b| b.item_id.clone())
        {
            self.emit(
                out,
                Payload::ItemDelta {
                    item_id,
                    delta_content: delta.to_owned(),
                },
            );
        }
    }

    pub(super) fn tool_done(&mut self, idx: usize, call: &Value, out: &mut Vec<ProviderEvent>) {
        let name = str_field(call, "name").unwrap_or("tool").to_owned();
        let call_id = str_field(call, "id").filter(|s| !s.is_empty());
        let opened = self
            .turn
            .as_ref()
            .and_then(|t| t.blocks.get(&idx))
            .filter(|b| b.kind == BlockKind::Tool);
        if opened.is_some_and(|b| b.done) {
            return;
        }
        if opened.is_none() {
            let fallback;
            let id = match call_id {
                Some(id) => id,
                None => {
                    fallback = new_id("call");
                    fallback.as_str()
                }
            };
            self.open_block(idx, BlockKind::Tool, Some(&name), Some(id), out);
        }
        let Some(t) = self.turn.as_mut() else { return };
        let Some(b) = t.blocks.get_mut(&idx) else {
            return;
        };
        b.done = true;
        let item_id = b.item_id.clone();
        let call_id = call_id
            .map(str::to_owned)
            .or_else(|| b.call_id.clone())
            .unwrap_or_default();
        let arguments = object(call.get("arguments"));
        self.emit(
            out,
            Payload::ItemDone {
                item_id,
                final_item: display::function_call(name, call_id, arguments, &super::TOOL_KEYS),
            },
        );
    }

    pub(super) fn message_end(&mut self, v: &Value, out: &mut Vec<ProviderEvent>) {
        let Some(msg) = self.assistant_message(v) else {
            return;
        };
        self.ensure_started(out);
        let stop = str_field(msg, "stopReason").map(str::to_owned);
        let error = str_field(msg, "errorMessage").map(str::to_owned);
        let failed = matches!(stop.as_deref(), Some("error") | Some("aborted"));
        // Blocks never streamed (or not finished) are completed from the
        // final message, unless the call failed: then partial text is marked.
        if let Some(Value::Array(content)) = msg.get("content") {
            for (idx, block) in content.iter().enumerate() {
                let (kind, key) = match str_field(block, "type") {
                    Some("text") => (BlockKind::Text, "text"),
                    Some("thinking") => (BlockKind::Thinking, "thinking"),
                    Some("toolCall") => {
                        if !failed {
                            self.tool_done(idx, block, out);
                        }
                        continue;
                    }
                    _ => continue,
                };
                if failed {
                    continue;
                }
                let text = str_field(block, key).unwrap_or_default().to_owned();
                if text.is_empty() && !self.has_block(idx) {
                    continue;
                }
                self.open_block(idx, kind, None, None, out);
                self.done_text(idx, kind, text, out);
            }
        }
        if failed {
            self.fail_open_blocks(stop.as_deref(), error.as_deref(), out);
        }
        let usage = msg.get("usage").map(usage);
        let model = str_field(msg, "model").map(str::to_owned);
        if let Some(m) = model {
            self.set_session(None, Some(&m), out);
        }
        if let Some(t) = self.turn.as_mut() {
            if let Some(mut u) = usage {
                // Each message is one model call: its prompt and answer
                // are the conversation so far (the latest stands).
                u.context_tokens = Some(u.total_tokens()).filter(|&n| n > 0);
                t.usage.get_or_insert_with(Usage::default).accumulate(&u);
            }
            t.last_stop = stop;
            t.last_error = error;
            t.blocks.clear();
        }
    }

    pub(super) fn has_block(&self, idx: usize) -> bool {
        self.turn
            .as_ref()
            .is_some_and(|t| t.blocks.contains_key(&idx))
    }

    pub(super) fn fail_open_blocks(
        &mut self,
        stop: Option<&str>,
        error: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        let Some(t) = self.turn.as_mut() else { return };
        let open: Vec<String> = t
            .blocks
            .values_mut()
            .filter(|b| !b.done)
            .map(|b| {
                b.done = true;
                b.item_id.clone()
            })
            .collect();
        for item_id in open {
            let payload = if stop == Some("aborted") {
                Payload::ItemCancelled {
                    item_id,
                    reason: Some("aborted".into()),
                }
            } else {
                Payload::ItemError {
                    item_id,
                    error: ErrorInfo::new("pi_error", error.unwrap_or("the model call failed")),
                }
            };
            self.emit(out, payload);
        }
    }
}
