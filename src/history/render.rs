//! Transcripts for people: plain text (`hive history show`) and Markdown
//! (`hive history export --markdown`), rendered from the items a pane would
//! show so both agree with the console.

use std::fmt::Write;

use chrono::SecondsFormat;

use super::record::{Record, Role};
use crate::event::Origin;
use crate::text::SharedText;
use crate::upsert::{Upsert, UpsertKind};

/// Longest tool output printed in full; longer ones are cut (the file keeps all).
const OUTPUT_LIMIT: usize = 4000;

/// An item as both renderers print it, read once from its upsert.
enum Part<'a> {
    Said(Origin, &'a SharedText),
    Thinking(&'a SharedText),
    Tool {
        name: &'a str,
        args: &'a serde_json::Value,
        result: Option<Output<'a>>,
    },
}

/// A tool call's result, cut at `OUTPUT_LIMIT`.
struct Output<'a> {
    text: &'a str,
    cut: bool,
    error: bool,
}

impl<'a> Part<'a> {
    fn of(kind: &'a UpsertKind) -> Self {
        match kind {
            UpsertKind::Message { content, origin } => Part::Said(*origin, content),
            UpsertKind::Thinking { content, .. } => Part::Thinking(content),
            UpsertKind::ToolCall {
                tool_name,
                arguments,
                output,
                output_is_error,
                ..
            } => Part::Tool {
                name: tool_name,
                args: arguments,
                result: output.as_deref().map(|o| Output {
                    text: clip(o),
                    cut: o.len() > OUTPUT_LIMIT,
                    error: *output_is_error == Some(true),
                }),
            },
        }
    }
}

/// `s` up to `OUTPUT_LIMIT` bytes, on a character boundary.
fn clip(s: &str) -> &str {
    if s.len() <= OUTPUT_LIMIT {
        return s;
    }
    let mut end = OUTPUT_LIMIT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn args_line(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::Object(m) if m.is_empty() => String::new(),
        serde_json::Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// Plain text: one block per item, thinking and tools included.
pub(crate) fn plain(items: &[Upsert]) -> String {
    let mut out = String::new();
    for u in items {
        let ts = u
            .source_timestamp
            .to_rfc3339_opts(SecondsFormat::Secs, true);
        match Part::of(&u.kind) {
            Part::Said(origin, content) => {
                let who = match origin {
                    Origin::User => "user",
                    Origin::Agent => "assistant",
                    Origin::System => "system",
                };
                let _ = writeln!(out, "── {who} · {ts}");
                content.with_str(|s| out.push_str(s));
                out.push_str("\n\n");
            }
            Part::Thinking(content) => {
                let _ = writeln!(out, "── thinking");
                content.with_str(|s| out.push_str(s));
                out.push_str("\n\n");
            }
            Part::Tool { name, args, result } => {
                let _ = writeln!(out, "── tool {name} {}", args_line(args));
                if let Some(o) = result {
                    let err = if o.error { " (error)" } else { "" };
                    let _ = writeln!(out, "result{err}:");
                    out.push_str(o.text);
                    if o.cut {
                        out.push_str("\n[… output cut]");
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
        }
    }
    out
}

/// Markdown for sharing: headings per speaker, thinking in a `<details>`,
/// tool calls and results in fenced blocks.
pub(crate) fn markdown(title: &str, records: &[Record], items: &[Upsert]) -> String {
    let mut out = format!("# {title}\n\n");
    if let Some(meta) = records
        .iter()
        .rev()
        .find(|r| r.role == Role::Assistant)
        .and_then(|r| r.meta.as_ref())
    {
        let who: Vec<&str> = [meta.provider.as_deref(), meta.model.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        if !who.is_empty() {
            let _ = writeln!(out, "*{}*\n", who.join(" · "));
        }
    }
    for u in items {
        match Part::of(&u.kind) {
            Part::Said(origin, content) => {
                let who = match origin {
                    Origin::User => "## User",
                    Origin::Agent => "## Assistant",
                    Origin::System => "> **Notice**",
                };
                if origin == Origin::System {
                    content.with_str(|s| {
                        let _ = writeln!(out, "{who}: {}\n", s.replace('\n', " "));
                    });
                } else {
                    let _ = writeln!(out, "{who}\n");
                    content.with_str(|s| out.push_str(s.trim_end()));
                    out.push_str("\n\n");
                }
            }
            Part::Thinking(content) => {
                out.push_str("<details><summary>Thinking</summary>\n\n");
                content.with_str(|s| out.push_str(s.trim_end()));
                out.push_str("\n\n</details>\n\n");
            }
            Part::Tool { name, args, result } => {
                let _ = writeln!(out, "**Tool `{name}`**\n");
                if !args_line(args).is_empty() {
                    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
                    let _ = writeln!(out, "```json\n{pretty}\n```\n");
                }
                if let Some(o) = result {
                    let label = if o.error { "Error" } else { "Result" };
                    let fence = if o.text.contains("```") {
                        "````"
                    } else {
                        "```"
                    };
                    let text = o.text.trim_end();
                    let _ = writeln!(out, "{label}:\n\n{fence}\n{text}\n{fence}\n");
                    if o.cut {
                        out.push_str("*(output cut)*\n\n");
                    }
                }
            }
        }
    }
    // Markdown is pasted and viewed anywhere: never with the agent's
    // control characters in it.
    crate::sanitize::neutralize(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, kind: serde_json::Value) -> Upsert {
        let mut v = serde_json::json!({
            "turn_id": "t1",
            "session_id": "s1",
            "item_id": id,
            "source_timestamp": "2026-01-02T03:04:05Z",
            "emitted_at": "2026-01-02T03:04:05Z",
            "status": "complete",
        });
        if let (Some(v), serde_json::Value::Object(k)) = (v.as_object_mut(), kind) {
            v.extend(k);
        }
        serde_json::from_value(v).unwrap()
    }

    /// One item of each kind: a failed call whose output has a fence, and
    /// one whose output is cut inside a two-byte character.
    fn items() -> Vec<Upsert> {
        let long = format!("{}é tail", "x".repeat(OUTPUT_LIMIT - 1));
        vec![
            item(
                "m1",
                serde_json::json!({"type": "message", "origin": "user", "content": "hi"}),
            ),
            item(
                "m2",
                serde_json::json!({"type": "message", "origin": "system", "content": "one\ntwo"}),
            ),
            item(
                "th",
                serde_json::json!({"type": "thinking", "provider_id": "p", "content": "hmm  "}),
            ),
            item(
                "t1",
                serde_json::json!({
                    "type": "tool_call", "tool_name": "Bash", "call_id": "c1",
                    "arguments": {"command": "ls"},
                    "output": "```\nno such file\n", "output_is_error": true,
                }),
            ),
            item(
                "t2",
                serde_json::json!({
                    "type": "tool_call", "tool_name": "Read", "call_id": "c2",
                    "arguments": {}, "output": long,
                }),
            ),
            item(
                "t3",
                serde_json::json!({
                    "type": "tool_call", "tool_name": "Glob", "call_id": "c3", "arguments": null,
                }),
            ),
        ]
    }

    #[test]
    fn plain_prints_every_kind_and_cuts_long_output() {
        let x = "x".repeat(OUTPUT_LIMIT - 1);
        let want = format!(
            "── user · 2026-01-02T03:04:05Z\nhi\n\n\
             ── system · 2026-01-02T03:04:05Z\none\ntwo\n\n\
             ── thinking\nhmm  \n\n\
             ── tool Bash {{\"command\":\"ls\"}}\nresult (error):\n```\nno such file\n\n\n\
             ── tool Read \nresult:\n{x}\n[… output cut]\n\n\
             ── tool Glob \n\n"
        );
        assert_eq!(plain(&items()), want);
    }

    #[test]
    fn markdown_fences_results_and_cuts_long_output() {
        let x = "x".repeat(OUTPUT_LIMIT - 1);
        let want = format!(
            "# T\n\n\
             ## User\n\nhi\n\n\
             > **Notice**: one two\n\n\
             <details><summary>Thinking</summary>\n\nhmm\n\n</details>\n\n\
             **Tool `Bash`**\n\n```json\n{{\n  \"command\": \"ls\"\n}}\n```\n\n\
             Error:\n\n````\n```\nno such file\n````\n\n\
             **Tool `Read`**\n\n\
             Result:\n\n```\n{x}\n```\n\n*(output cut)*\n\n\
             **Tool `Glob`**\n\n"
        );
        assert_eq!(markdown("T", &[], &items()), want);
    }
}
