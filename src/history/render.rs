//! Transcripts for people: plain text (`hive history show`) and Markdown
//! (`hive history export --markdown`), rendered from the items a pane would
//! show so both agree with the console.

use std::fmt::Write;

use chrono::SecondsFormat;

use super::record::{Record, Role};
use crate::event::Origin;
use crate::upsert::{Upsert, UpsertKind};

/// Longest tool output printed in full; longer ones are cut (the file keeps all).
const OUTPUT_LIMIT: usize = 4000;

fn clip(s: &str) -> (&str, bool) {
    if s.len() <= OUTPUT_LIMIT {
        return (s, false);
    }
    let mut end = OUTPUT_LIMIT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

fn args_line(args: &serde_json::Value) -> String {
    match args {
        serde_json::Value::Object(m) if m.is_empty() => String::new(),
        serde_json::Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// Plain text: one block per item, thinking and tools included.
pub fn plain(items: &[Upsert]) -> String {
    let mut out = String::new();
    for u in items {
        let ts = u
            .source_timestamp
            .to_rfc3339_opts(SecondsFormat::Secs, true);
        match &u.kind {
            UpsertKind::Message { content, origin } => {
                let who = match origin {
                    Origin::User => "user",
                    Origin::Agent => "assistant",
                    Origin::System => "system",
                };
                let _ = writeln!(out, "── {who} · {ts}");
                content.with_str(|s| out.push_str(s));
                out.push_str("\n\n");
            }
            UpsertKind::Thinking { content, .. } => {
                let _ = writeln!(out, "── thinking");
                content.with_str(|s| out.push_str(s));
                out.push_str("\n\n");
            }
            UpsertKind::ToolCall {
                tool_name,
                arguments,
                output,
                output_is_error,
                ..
            } => {
                let _ = writeln!(out, "── tool {tool_name} {}", args_line(arguments));
                if let Some(o) = output {
                    let (o, cut) = clip(o);
                    let err = if *output_is_error == Some(true) {
                        " (error)"
                    } else {
                        ""
                    };
                    let _ = writeln!(out, "result{err}:");
                    out.push_str(o);
                    if cut {
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
pub fn markdown(title: &str, records: &[Record], items: &[Upsert]) -> String {
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
        match &u.kind {
            UpsertKind::Message { content, origin } => {
                let who = match origin {
                    Origin::User => "## User",
                    Origin::Agent => "## Assistant",
                    Origin::System => "> **Notice**",
                };
                if *origin == Origin::System {
                    content.with_str(|s| {
                        let _ = writeln!(out, "{who}: {}\n", s.replace('\n', " "));
                    });
                } else {
                    let _ = writeln!(out, "{who}\n");
                    content.with_str(|s| out.push_str(s.trim_end()));
                    out.push_str("\n\n");
                }
            }
            UpsertKind::Thinking { content, .. } => {
                out.push_str("<details><summary>Thinking</summary>\n\n");
                content.with_str(|s| out.push_str(s.trim_end()));
                out.push_str("\n\n</details>\n\n");
            }
            UpsertKind::ToolCall {
                tool_name,
                arguments,
                output,
                output_is_error,
                ..
            } => {
                let _ = writeln!(out, "**Tool `{tool_name}`**\n");
                let args = serde_json::to_string_pretty(arguments).unwrap_or_default();
                if !args_line(arguments).is_empty() {
                    let _ = writeln!(out, "```json\n{args}\n```\n");
                }
                if let Some(o) = output {
                    let (o, cut) = clip(o);
                    let label = if *output_is_error == Some(true) {
                        "Error"
                    } else {
                        "Result"
                    };
                    let fence = if o.contains("```") { "````" } else { "```" };
                    let _ = writeln!(out, "{label}:\n\n{fence}\n{}\n{fence}\n", o.trim_end());
                    if cut {
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
