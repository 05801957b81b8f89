//! `session/update` notifications → canonical stream payloads.
//!
//! ACP streams message and thought chunks without item boundaries, so an item
//! ends when something else starts (a thought after text, a tool call, a plan)
//! or when the turn ends. Tool calls are keyed by `toolCallId`: the first
//! sighting (a `tool_call`, a `tool_call_update`, or the tool call inside a
//! permission request; agents differ) creates the function call item, later
//! ones update it, and `completed` / `failed` produce its output. A plan is
//! one system message per turn, re-emitted under the same item id whenever it
//! changes, so the UI replaces it in place.

use std::collections::{HashMap, HashSet};

use agent_client_protocol_schema::v1::{
    ContentBlock, PlanEntry, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::render;
use crate::event::{FinalItem, ItemType, Origin, Payload, ToolDisplay, Usage, new_id};
use crate::provider::DiagnosticLevel;
use crate::provider::display::{self, ToolKeys};

/// Argument names in ACP `rawInput`: each agent passes its own tools' input
/// (claude-code-acp Claude Code's, codex-acp Codex's, gemini Gemini CLI's).
pub(crate) const TOOL_KEYS: ToolKeys = ToolKeys {
    summary: &[
        "command",
        "cmd",
        "file_path",
        "absolute_path",
        "path",
        "abs_path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ],
    replace: &[("old_string", "new_string"), ("oldText", "newText")],
    write: &["content"],
    patch: &["diff", "patch"],
};

/// `sessionUpdate` kinds of the stable protocol; anything else is unknown.
const KNOWN_KINDS: &[&str] = &[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
];

/// What one notification turns into.
#[derive(Debug, Clone, PartialEq)]
pub enum Translated {
    Stream(Payload),
    /// The agent's slash commands changed.
    Commands(Vec<String>),
    /// The session's config options as the agent now has them (codex-acp
    /// sends them after `session/set_mode`): the engine keeps them.
    ConfigOptions(Value),
    Diagnostic {
        level: DiagnosticLevel,
        message: String,
    },
}

#[derive(Debug)]
struct OpenText {
    item_id: String,
    content: String,
}

#[derive(Debug, Default)]
struct ToolState {
    item_id: String,
    title: String,
    name: Option<String>,
    kind: Option<ToolKind>,
    status: ToolCallStatus,
    raw_input: Option<Value>,
    raw_output: Option<Value>,
    content: Vec<ToolCallContent>,
    locations: Vec<ToolCallLocation>,
    /// Arguments last emitted, to skip identical re-emissions.
    emitted: Option<(String, Map<String, Value>)>,
    /// Content last shown while the call runs.
    live: String,
    finished: bool,
}

impl ToolState {
    fn display_name(&self) -> String {
        if !self.title.trim().is_empty() {
            return self.title.clone();
        }
        if let Some(name) = &self.name {
            return name.clone();
        }
        match self.kind {
            Some(k) => kind_label(k).to_owned(),
            None => "tool".into(),
        }
    }

    fn arguments(&self) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(name) = &self.name {
            m.insert("tool".into(), json!(name));
        }
        if let Some(k) = self.kind {
            m.insert("kind".into(), json!(kind_label(k)));
        }
        if !self.title.is_empty() {
            m.insert("title".into(), json!(self.title));
        }
        match &self.raw_input {
            Some(Value::Object(o)) if o.is_empty() => {}
            Some(Value::Null) | None => {}
            Some(v) => {
                m.insert("input".into(), v.clone());
            }
        }
        if !self.locations.is_empty() {
            let locs: Vec<Value> = self
                .locations
                .iter()
                .map(|l| match l.line {
                    Some(line) => json!(format!("{}:{line}", l.path.display())),
                    None => json!(l.path.display().to_string()),
                })
                .collect();
            m.insert("locations".into(), Value::Array(locs));
        }
        m
    }

    fn display(&self, name: &str) -> ToolDisplay {
        describe_input(self.raw_input.as_ref(), name)
    }

    /// Takes in what an update (or a permission request) says of the call.
    fn apply(&mut self, f: ToolCallUpdateFields, from_permission: bool) {
        if let Some(t) = f.title.filter(|t| !t.is_empty()) {
            self.title = render::unquote(t);
        }
        if f.name.is_some() {
            self.name = f.name;
        }
        if f.kind.is_some() {
            self.kind = f.kind;
        }
        // A permission request carries the call as it was when asked; the
        // status it shows is not news about the call itself.
        if let Some(s) = f.status.filter(|_| !from_permission) {
            self.status = s;
        }
        if let Some(c) = f.content {
            self.content = c;
        }
        if let Some(l) = f.locations {
            self.locations = l;
        }
        if f.raw_input.is_some() {
            self.raw_input = f.raw_input;
        }
        if f.raw_output.is_some() {
            self.raw_output = f.raw_output;
        }
    }

    /// The content of a running call is its output so far (before it runs,
    /// pending, it describes the call): news when it changed.
    fn live_output(&mut self) -> Option<Payload> {
        if self.status != ToolCallStatus::InProgress {
            return None;
        }
        let live = render::tool_content(&self.content);
        if live.is_empty() || live == self.live {
            return None;
        }
        self.live = live.clone();
        Some(Payload::ToolProgress {
            item_id: self.item_id.clone(),
            display: None,
            output: Some(live),
            output_delta: None,
        })
    }

    fn output(&self) -> String {
        let text = render::tool_content(&self.content);
        if !text.is_empty() {
            return text;
        }
        self.raw_output
            .as_ref()
            .map(render::raw_output)
            .unwrap_or_default()
    }
}

/// How a call reads: the agent's own input described with its argument
/// names (not hive's wrapper around it), without repeating the title the
/// call is named by (codex-acp and claude-code-acp title a command with it).
pub(crate) fn describe_input(input: Option<&Value>, name: &str) -> ToolDisplay {
    let mut d = match input {
        Some(input) => display::describe(input, &TOOL_KEYS),
        None => ToolDisplay::default(),
    };
    let (summary, name) = (d.summary.trim(), name.trim());
    if name.contains(summary) || summary.contains(name) {
        d.summary.clear();
    }
    d
}

pub(crate) fn kind_label(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "execute",
        ToolKind::Think => "think",
        ToolKind::Fetch => "fetch",
        ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

/// Context usage reported by `usage_update`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ContextUsage {
    used: u64,
    size: u64,
    /// The session's cost so far (cumulative, per the ACP schema).
    cost_usd: Option<f64>,
}

/// Per-session translation state; `begin_turn` resets what belongs to a turn.
#[derive(Debug)]
pub struct Translator {
    provider_id: String,
    message: Option<OpenText>,
    thought: Option<OpenText>,
    tools: HashMap<String, ToolState>,
    plan_item: Option<String>,
    usage: Option<ContextUsage>,
    /// The session's cumulative cost at the end of the last turn, so a
    /// turn's own cost is the difference.
    cost_before: Option<f64>,
    /// Tool calls the user refused; they end with a refusal if the agent
    /// never reports them (Gemini does not).
    refused: HashSet<String>,
}

impl Translator {
    pub fn new(provider_id: &str) -> Self {
        Self {
            provider_id: provider_id.to_owned(),
            message: None,
            thought: None,
            tools: HashMap::new(),
            plan_item: None,
            usage: None,
            cost_before: None,
            refused: HashSet::new(),
        }
    }

    pub fn begin_turn(&mut self) {
        self.message = None;
        self.thought = None;
        self.tools.clear();
        self.plan_item = None;
        self.usage = None;
        self.refused.clear();
    }

    /// The user refused the permission for this tool call.
    pub fn refuse(&mut self, tool_call_id: &str) {
        self.refused.insert(tool_call_id.to_owned());
    }

    /// Translates the params of one `session/update` notification.
    pub fn update(&mut self, params: &Value) -> Vec<Translated> {
        let kind = params
            .pointer("/update/sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        // Deserialize from the borrowed value: no copy of the update.
        let notification = match SessionNotification::deserialize(params) {
            Ok(n) => n,
            Err(e) => {
                let update = params.get("update").unwrap_or(params);
                return vec![if KNOWN_KINDS.contains(&kind.as_str()) {
                    Translated::Diagnostic {
                        level: DiagnosticLevel::Warn,
                        message: format!(
                            "malformed `{kind}` update from the agent ({e}): {}",
                            render::generic(update)
                        ),
                    }
                } else {
                    unknown(&kind, update)
                }];
            }
        };
        let mut out = Vec::new();
        match notification.update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                self.chunk(ItemType::Message, &chunk.content, &mut out)
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                self.chunk(ItemType::Reasoning, &chunk.content, &mut out)
            }
            // The user's own words, echoed only while a session is replayed.
            SessionUpdate::UserMessageChunk(_) => {}
            SessionUpdate::ToolCall(call) => self.tool_call(call, &mut out),
            SessionUpdate::ToolCallUpdate(update) => self.tool_update(update, false, &mut out),
            SessionUpdate::Plan(plan) => self.plan(&plan.entries, &mut out),
            SessionUpdate::AvailableCommandsUpdate(u) => out.push(Translated::Commands(
                u.available_commands
                    .iter()
                    .map(|c| c.name.clone())
                    .collect(),
            )),
            SessionUpdate::UsageUpdate(u) => {
                let cost_usd = u
                    .cost
                    .as_ref()
                    .filter(|c| c.currency.eq_ignore_ascii_case("usd"))
                    .map(|c| c.amount);
                self.usage = Some(ContextUsage {
                    used: u.used,
                    size: u.size,
                    cost_usd,
                });
            }
            SessionUpdate::ConfigOptionUpdate(_) => out.push(Translated::ConfigOptions(
                params
                    .pointer("/update/configOptions")
                    .cloned()
                    .unwrap_or_default(),
            )),
            SessionUpdate::CurrentModeUpdate(u) => out.push(Translated::Diagnostic {
                level: DiagnosticLevel::Info,
                message: format!("agent mode is now `{}`", u.current_mode_id),
            }),
            _ => {
                let update = params.get("update").unwrap_or(params);
                out.push(unknown(&kind, update));
            }
        }
        out
    }

    /// The tool call a permission request is about: created if this is its
    /// first sighting (Gemini and Codex ask before announcing the call).
    pub(crate) fn permission_tool(&mut self, call: &ToolCallUpdate) -> Vec<Translated> {
        let mut out = Vec::new();
        self.tool_update(call.clone(), true, &mut out);
        out
    }

    /// Closes the open text items and the refused tool calls the agent left
    /// open; call when the turn ends normally.
    pub fn finish(&mut self) -> Vec<Translated> {
        let mut out = Vec::new();
        self.close_text(&mut out);
        out.extend(self.refusals());
        out
    }

    /// Ends the refused tool calls the agent left open as refused: call when
    /// the turn ends, however it ends (codex-acp cancels the turn when a
    /// command is refused, and never reports the call again).
    pub fn refusals(&mut self) -> Vec<Translated> {
        let mut out = Vec::new();
        let mut refused: Vec<&String> = self.refused.iter().collect();
        refused.sort();
        for id in refused {
            if let Some(tool) = self.tools.get_mut(id).filter(|t| !t.finished) {
                tool.finished = true;
                out.push(Translated::Stream(Payload::tool_output(
                    new_id("out"),
                    id.clone(),
                    "Permission denied by the user.",
                    true,
                )));
            }
        }
        out
    }

    /// A visible system note inside the turn (a refusal, for instance).
    pub fn note(&mut self, text: &str) -> Vec<Translated> {
        let mut out = Vec::new();
        self.close_text(&mut out);
        out.push(Translated::Stream(Payload::ItemDone {
            item_id: new_id("note"),
            final_item: FinalItem::Message {
                content: text.to_owned(),
                origin: Origin::System,
            },
        }));
        out
    }

    /// Usage of the turn: the prompt response's own counts where the agent
    /// sends them (`usage`, or Gemini's `_meta.quota`); the context's size
    /// and window, and the cost, from the last `usage_update`. The context
    /// in use is not the turn's input: without counts, the tokens are
    /// unknown (issue 33: usage you can trust).
    pub fn turn_usage(&mut self, result: &Value) -> Option<Usage> {
        let mut usage = self.counts(result);
        if let Some(ctx) = self.usage {
            let u = usage.get_or_insert_with(Usage::default);
            u.context_tokens = Some(ctx.used);
            u.context_window = Some(ctx.size).filter(|&s| s > 0);
            if let Some(total) = ctx.cost_usd {
                let before = self.cost_before.filter(|&b| b <= total).unwrap_or(0.0);
                u.cost_usd = Some(total - before);
                self.cost_before = Some(total);
            }
        }
        usage
    }

    /// The token counts of a prompt response, where it has them.
    fn counts(&self, result: &Value) -> Option<Usage> {
        let num =
            |v: &Value, keys: &[&str]| keys.iter().find_map(|k| v.get(*k).and_then(Value::as_u64));
        if let Some(u) = result.get("usage").filter(|u| u.is_object()) {
            return Some(Usage {
                input_tokens: num(u, &["inputTokens", "input_tokens"]).unwrap_or(0),
                output_tokens: num(u, &["outputTokens", "output_tokens"]).unwrap_or(0),
                cache_read_input_tokens: num(u, &["cachedReadTokens", "cached_read_tokens"]),
                cache_creation_input_tokens: num(u, &["cachedWriteTokens", "cached_write_tokens"]),
                ..Usage::default()
            });
        }
        if let Some(t) = result.pointer("/_meta/quota/token_count") {
            return Some(Usage {
                input_tokens: num(t, &["input_tokens", "inputTokens"]).unwrap_or(0),
                output_tokens: num(t, &["output_tokens", "outputTokens"]).unwrap_or(0),
                model: render::answering_model(result),
                ..Usage::default()
            });
        }
        None
    }

    fn chunk(&mut self, item_type: ItemType, block: &ContentBlock, out: &mut Vec<Translated>) {
        let text = render::content_block(block);
        // Claude opens every message with an empty chunk; it starts nothing.
        if text.is_empty() {
            return;
        }
        let (slot, other) = match item_type {
            ItemType::Reasoning => (&mut self.thought, &mut self.message),
            _ => (&mut self.message, &mut self.thought),
        };
        if let Some(prev) = other.take() {
            out.push(close(prev, other_type(item_type), &self.provider_id));
        }
        let open = slot.get_or_insert_with(|| {
            let item_id = new_id("item");
            out.push(Translated::Stream(Payload::item_start(
                item_id.clone(),
                item_type,
            )));
            OpenText {
                item_id,
                content: String::new(),
            }
        });
        open.content.push_str(&text);
        out.push(Translated::Stream(Payload::ItemDelta {
            item_id: open.item_id.clone(),
            delta_content: text,
        }));
    }

    fn close_text(&mut self, out: &mut Vec<Translated>) {
        if let Some(t) = self.thought.take() {
            out.push(close(t, ItemType::Reasoning, &self.provider_id));
        }
        if let Some(m) = self.message.take() {
            out.push(close(m, ItemType::Message, &self.provider_id));
        }
    }

    fn tool_call(&mut self, call: ToolCall, out: &mut Vec<Translated>) {
        let mut fields = ToolCallUpdateFields::new()
            .kind(call.kind)
            .status(call.status)
            .title(call.title)
            .content(call.content)
            .locations(call.locations);
        fields.name = call.name;
        fields.raw_input = call.raw_input;
        fields.raw_output = call.raw_output;
        self.tool_update(ToolCallUpdate::new(call.tool_call_id, fields), false, out);
    }

    fn tool_update(
        &mut self,
        update: ToolCallUpdate,
        from_permission: bool,
        out: &mut Vec<Translated>,
    ) {
        let id = update.tool_call_id.to_string();
        if self.tools.get(&id).is_some_and(|t| t.finished) {
            return;
        }
        self.close_text(out);
        let f = update.fields;
        let tool = self.tools.entry(id.clone()).or_insert_with(|| ToolState {
            item_id: new_id("tool"),
            ..ToolState::default()
        });
        let is_new = tool.emitted.is_none();
        tool.apply(f, from_permission);
        let name = tool.display_name();
        let arguments = tool.arguments();
        if is_new {
            out.push(Translated::Stream(Payload::tool_start(
                tool.item_id.clone(),
                name.clone(),
                id.clone(),
            )));
        }
        if tool.emitted.as_ref() != Some(&(name.clone(), arguments.clone())) {
            out.push(Translated::Stream(Payload::ItemDone {
                item_id: tool.item_id.clone(),
                final_item: FinalItem::FunctionCall {
                    display: Some(tool.display(&name)),
                    name: name.clone(),
                    call_id: id.clone(),
                    arguments: arguments.clone(),
                },
            }));
            tool.emitted = Some((name, arguments));
        }
        if !from_permission && let Some(progress) = tool.live_output() {
            out.push(Translated::Stream(progress));
        }
        if matches!(
            tool.status,
            ToolCallStatus::Completed | ToolCallStatus::Failed
        ) {
            tool.finished = true;
            out.push(Translated::Stream(Payload::tool_output(
                new_id("out"),
                id,
                tool.output(),
                tool.status == ToolCallStatus::Failed,
            )));
        }
    }

    fn plan(&mut self, entries: &[PlanEntry], out: &mut Vec<Translated>) {
        self.close_text(out);
        let item_id = self.plan_item.get_or_insert_with(|| new_id("plan")).clone();
        out.push(Translated::Stream(Payload::ItemDone {
            item_id,
            final_item: FinalItem::Message {
                content: render::plan(entries),
                origin: Origin::System,
            },
        }));
    }
}

fn other_type(t: ItemType) -> ItemType {
    match t {
        ItemType::Reasoning => ItemType::Message,
        _ => ItemType::Reasoning,
    }
}

fn close(text: OpenText, item_type: ItemType, provider_id: &str) -> Translated {
    let final_item = match item_type {
        ItemType::Reasoning => FinalItem::Reasoning {
            content: text.content,
            provider_id: provider_id.to_owned(),
        },
        _ => FinalItem::Message {
            content: text.content,
            origin: Origin::Agent,
        },
    };
    Translated::Stream(Payload::ItemDone {
        item_id: text.item_id,
        final_item,
    })
}

fn unknown(kind: &str, update: &Value) -> Translated {
    let kind = if kind.is_empty() { "(no kind)" } else { kind };
    Translated::Diagnostic {
        level: DiagnosticLevel::Info,
        message: format!("agent update `{kind}`: {}", render::generic(update)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(u: Value) -> Value {
        json!({"sessionId": "s", "update": u})
    }

    fn payloads(out: &[Translated]) -> Vec<&Payload> {
        out.iter()
            .filter_map(|t| match t {
                Translated::Stream(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn chunks_become_items_that_close_when_something_else_starts() {
        let mut t = Translator::new("acp");
        t.begin_turn();
        let mut out = t.update(&update(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})));
        out.extend(t.update(&update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}))));
        out.extend(t.update(&update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi "}}))));
        out.extend(t.update(&update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "there"}}))));
        out.extend(t.finish());
        let p = payloads(&out);
        assert!(matches!(
            p[0],
            Payload::ItemStart {
                item_type: ItemType::Reasoning,
                ..
            }
        ));
        assert!(
            matches!(p[2], Payload::ItemDone { final_item: FinalItem::Reasoning { content, .. }, .. } if content == "hmm")
        );
        assert!(matches!(
            p[3],
            Payload::ItemStart {
                item_type: ItemType::Message,
                ..
            }
        ));
        assert!(
            matches!(p.last(), Some(Payload::ItemDone { final_item: FinalItem::Message { content, origin: Origin::Agent }, .. }) if content == "Hi there")
        );
        assert_eq!(p.len(), 7);
    }

    #[test]
    fn a_tool_call_announced_twice_is_created_once_and_completed_once() {
        let mut t = Translator::new("acp");
        t.begin_turn();
        let mut out = t.update(&update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Terminal", "kind": "execute", "status": "pending", "rawInput": {}})));
        out.extend(t.update(&update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "`ls`", "kind": "execute", "status": "pending", "rawInput": {"command": "ls"}}))));
        out.extend(t.update(&update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}]}))));
        out.extend(t.update(&update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        )));
        let p = payloads(&out);
        let starts = p
            .iter()
            .filter(|p| matches!(p, Payload::ItemStart { .. }))
            .count();
        assert_eq!(starts, 1);
        let outputs: Vec<_> = p
            .iter()
            .filter_map(|p| match p {
                Payload::ItemDone {
                    final_item:
                        FinalItem::FunctionCallOutput {
                            output,
                            is_error,
                            call_id,
                        },
                    ..
                } => Some((output.clone(), *is_error, call_id.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(outputs, vec![("a.txt".to_owned(), false, "c1".to_owned())]);
        let last_call = p.iter().rev().find_map(|p| match p {
            Payload::ItemDone {
                final_item:
                    FinalItem::FunctionCall {
                        name, arguments, ..
                    },
                ..
            } => Some((name.clone(), arguments.clone())),
            _ => None,
        });
        let (name, args) = last_call.unwrap();
        // The title's code span is its text (issue 34 item 9).
        assert_eq!(name, "ls");
        assert_eq!(args["input"], json!({"command": "ls"}));
    }

    #[test]
    fn unknown_and_malformed_updates_are_reported_not_dropped() {
        let mut t = Translator::new("acp");
        let out = t.update(&update(json!({"sessionUpdate": "brand_new_thing", "x": 1})));
        assert!(
            matches!(&out[..], [Translated::Diagnostic { message, .. }] if message.contains("brand_new_thing"))
        );
        let out = t.update(&update(
            json!({"sessionUpdate": "tool_call", "title": "no id"}),
        ));
        assert!(matches!(
            &out[..],
            [Translated::Diagnostic {
                level: DiagnosticLevel::Warn,
                ..
            }]
        ));
    }

    #[test]
    fn usage_prefers_the_prompt_response() {
        let mut t = Translator::new("acp");
        t.update(&update(
            json!({"sessionUpdate": "usage_update", "used": 9530, "size": 258400}),
        ));
        // The context in use is the context, not the turn's input.
        let u = t.turn_usage(&json!({"stopReason": "end_turn"})).unwrap();
        assert_eq!(u.input_tokens, 0);
        assert_eq!(
            (u.context_tokens, u.context_window),
            (Some(9530), Some(258400))
        );
        let gemini = json!({"stopReason": "end_turn", "_meta": {"quota": {"token_count": {"input_tokens": 12, "output_tokens": 3}}}});
        let u = t.turn_usage(&gemini).unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (12, 3));
    }

    #[test]
    fn a_cumulative_session_cost_is_told_per_turn() {
        let mut t = Translator::new("acp");
        let cost = |used: u64, usd: f64| {
            update(
                json!({"sessionUpdate": "usage_update", "used": used, "size": 1000,
                "cost": {"amount": usd, "currency": "USD"}}),
            )
        };
        t.begin_turn();
        t.update(&cost(100, 0.25));
        let first = t.turn_usage(&json!({"stopReason": "end_turn"})).unwrap();
        t.begin_turn();
        t.update(&cost(300, 0.75));
        let second = t.turn_usage(&json!({"stopReason": "end_turn"})).unwrap();
        assert_eq!(first.cost_usd, Some(0.25));
        assert_eq!(second.cost_usd, Some(0.5));
        assert_eq!(second.context_tokens, Some(300));
    }

    #[test]
    fn content_of_a_running_call_is_its_live_output() {
        let mut t = Translator::new("acp");
        t.begin_turn();
        let text = |s: &str| json!([{"type": "content", "content": {"type": "text", "text": s}}]);
        let mut out = t.update(&update(json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run", "kind": "execute", "status": "pending", "content": text("Run: make")})));
        out.extend(t.update(&update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress", "content": text("cc a.c\n")}))));
        out.extend(t.update(&update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": text("cc a.c\ncc b.c\n")}))));
        out.extend(t.update(&update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": text("done")}))));
        let live: Vec<&str> = payloads(&out)
            .into_iter()
            .filter_map(|p| match p {
                Payload::ToolProgress { output, .. } => output.as_deref(),
                _ => None,
            })
            .collect();
        // Not the pending description, nor the final output (the result).
        assert_eq!(live, ["cc a.c\n", "cc a.c\ncc b.c\n"]);
    }
}
