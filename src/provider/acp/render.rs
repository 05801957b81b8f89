//! Text renderings of ACP structures for the transcript: tool call content
//! (text, diffs as unified diff text, terminals), raw tool output, plans as a
//! markdown checklist, and anything unknown as compact JSON; a title without its
//! code span, and the model a response names.

use agent_client_protocol_schema::v1::{
    ContentBlock, Diff, EmbeddedResourceResource, PlanEntry, PlanEntryStatus, ToolCallContent,
};
use serde_json::Value;

/// Longest JSON shown for an update hive does not know.
const GENERIC_MAX_CHARS: usize = 400;

pub(crate) fn content_block(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
        ContentBlock::ResourceLink(l) => format!("[{}]({})", l.name, l.uri),
        ContentBlock::Resource(r) => match &r.resource {
            EmbeddedResourceResource::TextResourceContents(t) => t.text.clone(),
            EmbeddedResourceResource::BlobResourceContents(b) => format!("[resource {}]", b.uri),
            _ => "[resource]".into(),
        },
        _ => "[content]".into(),
    }
}

/// A diff as unified diff text; a missing `oldText` means a new file.
pub(crate) fn diff(d: &Diff) -> String {
    let path = d.path.display().to_string();
    let old = d.old_text.as_deref().unwrap_or("");
    let old_name = if d.old_text.is_some() {
        format!("a/{}", path.trim_start_matches('/'))
    } else {
        "/dev/null".to_owned()
    };
    let new_name = format!("b/{}", path.trim_start_matches('/'));
    let text = similar::TextDiff::from_lines(old, d.new_text.as_str())
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    if text.is_empty() {
        format!("{path}: no changes")
    } else {
        text
    }
}

pub(crate) fn tool_content(content: &[ToolCallContent]) -> String {
    let parts: Vec<String> = content
        .iter()
        .map(|c| match c {
            ToolCallContent::Content(c) => content_block(&c.content),
            ToolCallContent::Diff(d) => diff(d),
            ToolCallContent::Terminal(t) => format!("[terminal {}]", t.terminal_id),
            _ => "[content]".into(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    parts.join("\n")
}

/// Raw tool output when the agent sent no content: a string as is, an object
/// by its usual output fields, anything else as JSON.
pub(crate) fn raw_output(raw: &Value) -> String {
    match raw {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(m) => {
            for key in ["formatted_output", "aggregated_output", "output", "stdout"] {
                if let Some(Value::String(s)) = m.get(key) {
                    return s.clone();
                }
            }
            serde_json::to_string_pretty(raw).unwrap_or_default()
        }
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// A plan as a markdown checklist.
pub(crate) fn plan(entries: &[PlanEntry]) -> String {
    let mut out = String::from("**Plan**\n");
    if entries.is_empty() {
        out.push_str("\n_(empty)_\n");
        return out;
    }
    out.push('\n');
    for e in entries {
        let line = match e.status {
            PlanEntryStatus::Completed => format!("- [x] {}\n", e.content),
            PlanEntryStatus::InProgress => format!("- [ ] {} _(in progress)_\n", e.content),
            _ => format!("- [ ] {}\n", e.content),
        };
        out.push_str(&line);
    }
    out
}

/// Compact JSON, cut to a readable length.
pub(crate) fn generic(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= GENERIC_MAX_CHARS {
        return text;
    }
    let cut: String = text.chars().take(GENERIC_MAX_CHARS).collect();
    format!("{cut}…")
}

/// A title that is one markdown code span (claude-code-acp titles a command
/// `` `ls` ``) is its text: hive shows titles as text, not markdown.
pub(super) fn unquote(title: String) -> String {
    let inner = title
        .strip_prefix('`')
        .and_then(|t| t.strip_suffix('`'))
        .filter(|t| !t.trim().is_empty() && !t.contains('`'));
    match inner {
        Some(t) => t.to_owned(),
        None => title,
    }
}

/// The model that answered, from Gemini's `_meta.quota.model_usage` (the
/// session runs `auto`; the router's small call is also listed, so the one
/// with the most input wins).
pub(super) fn answering_model(result: &Value) -> Option<String> {
    let used = result.pointer("/_meta/quota/model_usage")?.as_array()?;
    used.iter()
        .filter_map(|m| {
            let input = m
                .pointer("/token_count/input_tokens")
                .and_then(Value::as_u64)?;
            Some((input, m.get("model")?.as_str()?))
        })
        .filter(|(input, name)| *input > 0 && !name.is_empty())
        .max_by_key(|(input, _)| *input)
        .map(|(_, name)| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diffs_render_as_unified_diff_text() {
        let d: Diff = serde_json::from_value(json!({
            "path": "/w/a.txt", "oldText": "one\ntwo\n", "newText": "one\nTWO\n"
        }))
        .unwrap();
        let text = diff(&d);
        assert!(text.starts_with("--- a/w/a.txt\n+++ b/w/a.txt\n"), "{text}");
        assert!(text.contains("-two\n+TWO\n"), "{text}");
        let new: Diff =
            serde_json::from_value(json!({"path": "/w/n.txt", "newText": "hi\n"})).unwrap();
        let text = diff(&new);
        assert!(text.starts_with("--- /dev/null\n+++ b/w/n.txt\n"), "{text}");
        assert!(text.contains("+hi\n"), "{text}");
    }

    #[test]
    fn plans_render_as_checklists() {
        let entries: Vec<PlanEntry> = serde_json::from_value(json!([
            {"content": "a", "priority": "high", "status": "completed"},
            {"content": "b", "priority": "medium", "status": "in_progress"},
            {"content": "c", "priority": "low", "status": "pending"}
        ]))
        .unwrap();
        assert_eq!(
            plan(&entries),
            "**Plan**\n\n- [x] a\n- [ ] b _(in progress)_\n- [ ] c\n"
        );
    }

    #[test]
    fn raw_output_prefers_the_output_fields() {
        assert_eq!(raw_output(&json!("made")), "made");
        assert_eq!(
            raw_output(&json!({"stdout": "x", "formatted_output": "made\n"})),
            "made\n"
        );
        assert!(raw_output(&json!({"exit": 1})).contains("\"exit\": 1"));
    }
}
