//! A call of hive's own operations (`hive_call`, through `hive mcp` or the
//! direct agent's toolbox) drawn as what it did, not as its JSON (issue 34
//! item 12): `→ backend: Add POST /login.`, `waited for backend: Done…`,
//! `⏹ interrupted backend`. Known by its arguments (a `calls` list of hive
//! operations), so every agent's way of naming the tool is covered; the
//! results come from its output, where the agent put hive's JSON.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use serde_json::Value;
use std::time::Duration;

use super::cells::CellCtx;
use super::wrap::{Logical, truncate};
use crate::protocol::upsert::{Upsert, UpsertKind, UpsertStatus};

/// Where in an agent's arguments the `calls` list may sit: at the top
/// (Claude, openai), or under the agent's wrapper (ACP's `input`, Codex's
/// `arguments`).
const WRAPPERS: &[&str] = &["input", "arguments", "args"];

/// One operation of the batch and, once the call returned, its result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub(crate) op: String,
    pub(crate) args: Value,
    /// `Ok(result)` or `Err(error message)`; `None` while it runs.
    pub(crate) result: Option<Result<Value, String>>,
}

/// The steps of a hive call, or `None` when the call is another tool.
pub(crate) fn steps(arguments: &Value, output: Option<&str>) -> Option<Vec<Step>> {
    let calls = calls_of(arguments)?;
    let results = output.and_then(results_of).unwrap_or_default();
    let mut out = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let op = c.get("op").and_then(Value::as_str)?;
        let result = results.get(i).map(|r| {
            if r.get("ok").and_then(Value::as_bool) == Some(false) {
                let e = r.pointer("/error/message").and_then(Value::as_str);
                Err(e.unwrap_or("failed").to_owned())
            } else {
                Ok(r.get("result").cloned().unwrap_or(Value::Null))
            }
        });
        out.push(Step {
            op: op.to_owned(),
            args: c.get("args").cloned().unwrap_or(Value::Null),
            result,
        });
    }
    Some(out)
}

fn calls_of(arguments: &Value) -> Option<&Vec<Value>> {
    batch(arguments).or_else(|| WRAPPERS.iter().find_map(|w| batch(arguments.get(*w)?)))
}

/// `v`'s `calls`, when each names one of hive's operations.
fn batch(v: &Value) -> Option<&Vec<Value>> {
    let calls = v.get("calls")?.as_array()?;
    let ops = calls.iter().all(|c| {
        c.get("op")
            .and_then(Value::as_str)
            .is_some_and(|op| op.starts_with("agent") && op.contains('.'))
    });
    (ops && !calls.is_empty()).then_some(calls)
}

/// hive's `[{op, ok, result}]` in a tool's output: the JSON itself, or the
/// text of an MCP result's content (`{content: [{type: text, text}]}`).
fn results_of(output: &str) -> Option<Vec<Value>> {
    let v: Value = serde_json::from_str(output.trim()).ok()?;
    find_results(&v, 0)
}

fn find_results(v: &Value, depth: usize) -> Option<Vec<Value>> {
    if depth > 6 {
        return None;
    }
    match v {
        Value::Array(a) if a.iter().all(|r| r.get("op").is_some()) && !a.is_empty() => {
            Some(a.clone())
        }
        Value::Array(a) => a.iter().find_map(|x| find_results(x, depth + 1)),
        Value::Object(o) => o.values().find_map(|x| find_results(x, depth + 1)),
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|x| find_results(&x, depth + 1)),
        _ => None,
    }
}

/// The first line of `text` with something in it.
fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("?")
}

/// One step as a line of text; a wait that returned says how long it took.
pub(crate) fn describe(step: &Step, took: Option<Duration>) -> String {
    let a = &step.args;
    let failed = |what: String, e: &str| format!("{what}: failed: {}", first_line(e));
    match step.op.as_str() {
        "agent.send" => {
            let what = format!("→ {}", arg(a, "agent"));
            match &step.result {
                Some(Err(e)) => failed(what, e),
                _ => format!("{what}: {}", first_line(arg(a, "text"))),
            }
        }
        "agent.wait" => {
            let whom = a
                .get("agent")
                .or_else(|| a.get("message_id"))
                .and_then(Value::as_str)
                .unwrap_or("the answer");
            match &step.result {
                None => format!("waiting for {whom}…"),
                Some(Err(e)) => failed(format!("waited for {whom}"), e),
                Some(Ok(r)) => {
                    let status = r.get("status").and_then(Value::as_str).unwrap_or("");
                    let text = r.get("text").and_then(Value::as_str).unwrap_or("");
                    let reply = match status {
                        "cancelled" => "its turn was interrupted".to_owned(),
                        "error" => {
                            let e = r.pointer("/error/message").and_then(Value::as_str);
                            format!("its turn failed: {}", first_line(e.unwrap_or("")))
                        }
                        _ if first_line(text).is_empty() => "(no text)".to_owned(),
                        _ => first_line(text).to_owned(),
                    };
                    match took {
                        Some(d) => format!("waited {:.1}s for {whom}: {reply}", d.as_secs_f64()),
                        None => format!("waited for {whom}: {reply}"),
                    }
                }
            }
        }
        "agent.interrupt" => match &step.result {
            Some(Err(e)) => failed(format!("⏹ interrupt {}", arg(a, "agent")), e),
            _ => format!("⏹ interrupted {}", arg(a, "agent")),
        },
        "agent.spawn" => {
            let who = match &step.result {
                Some(Ok(r)) => r.get("agent").and_then(Value::as_str).unwrap_or("a helper"),
                _ => a
                    .get("id")
                    .or_else(|| a.get("template"))
                    .or_else(|| a.get("provider"))
                    .and_then(Value::as_str)
                    .unwrap_or("a helper"),
            };
            let what = format!("+ spawned {who}");
            match (&step.result, a.get("task").and_then(Value::as_str)) {
                (Some(Err(e)), _) => failed(what, e),
                (_, Some(task)) => format!("{what}: {}", first_line(task)),
                _ => what,
            }
        }
        "agent.close" => format!("closed {}", arg(a, "agent")),
        "agent.read" => format!("read {}", arg(a, "agent")),
        "agents.list" => "listed the agents".to_owned(),
        "agent.approve" | "agent.deny" => {
            let verb = if step.op == "agent.approve" {
                "approved"
            } else {
                "denied"
            };
            match &step.result {
                Some(Err(e)) => failed(format!("{verb} for {}", arg(a, "agent")), e),
                _ => format!("{verb} {}'s request", arg(a, "agent")),
            }
        }
        other => other.to_owned(),
    }
}

/// The rows of a hive call: `hive` and its first step on the head, each
/// further step under it; `None` for any other tool call.
/// The call's lines; `took` (the whole call's time, when this console saw
/// it run) goes on its last wait, which is what the call waited for.
pub(crate) fn lines(u: &Upsert, took: Option<Duration>, ctx: &CellCtx<'_>) -> Option<Vec<Logical>> {
    let UpsertKind::ToolCall {
        arguments, output, ..
    } = &u.kind
    else {
        return None;
    };
    let steps = steps(arguments, output.as_deref())?;
    let t = ctx.theme;
    let failed = u.status == UpsertStatus::Error;
    let (icon, icon_style) = super::cells::status_icon(u, failed, ctx);
    let style = |s: &Step| {
        Style::new().fg(if matches!(s.result, Some(Err(_))) {
            t.error
        } else {
            t.text
        })
    };
    let last_wait = steps.iter().rposition(|s| s.op == "agent.wait");
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let timed = took.filter(|_| Some(i) == last_wait);
        let text = Span::styled(truncate(&describe(s, timed), 400), style(s));
        out.push(if i == 0 {
            let name = Span::styled(
                "hive  ",
                Style::new().fg(t.tool).add_modifier(Modifier::BOLD),
            );
            Logical::new(vec![name, text]).with_prefix(
                vec![Span::styled(format!("{icon} "), icon_style)],
                vec![Span::raw("  ")],
            )
        } else {
            let lead = if i == 1 { "  ⎿ " } else { "    " };
            Logical::new(vec![text]).with_prefix(
                vec![Span::styled(lead, Style::new().fg(t.border))],
                vec![Span::raw("    ")],
            )
        });
    }
    if let Some(msg) = &u.error_message {
        out.extend(
            msg.lines()
                .map(|l| Logical::raw(format!("    {l}"), Style::new().fg(t.error))),
        );
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn batch() -> Value {
        json!({"calls": [
            {"op": "agent.send", "args": {"agent": "backend", "text": "Add POST /login.\nWith tests."}},
            {"op": "agent.wait", "args": {"agent": "backend"}},
        ]})
    }

    #[test]
    fn a_send_and_wait_read_as_who_asked_whom_for_what() {
        let out = json!([
            {"op": "agent.send", "ok": true, "result": {"message_id": "m1", "queued": false}},
            {"op": "agent.wait", "ok": true, "result": {"status": "completed", "turn_id": "t", "text": "\nDone: POST /login added.\nDetails…"}},
        ]);
        let steps = steps(&batch(), Some(&out.to_string())).unwrap();
        let lines: Vec<String> = steps.iter().map(|s| describe(s, None)).collect();
        assert_eq!(
            lines,
            [
                "→ backend: Add POST /login.",
                "waited for backend: Done: POST /login added."
            ]
        );
        // Timed by the console that saw it run: the wait says how long.
        assert_eq!(
            describe(&steps[1], Some(Duration::from_millis(6_240))),
            "waited 6.2s for backend: Done: POST /login added."
        );
    }

    #[test]
    fn a_running_call_waits_and_wrappers_and_mcp_content_are_read() {
        // ACP puts the input under `input`; no output yet: still waiting.
        let acp = json!({"tool": "hive_call", "input": batch()});
        let steps = steps(&acp, None).unwrap();
        assert_eq!(describe(&steps[1], None), "waiting for backend…");
        // An MCP result's text content holds hive's JSON.
        let inner = json!([
            {"op": "agent.send", "ok": false, "error": {"code": "not_allowed", "message": "architect may not message backend"}},
            {"op": "agent.wait", "ok": true, "result": {"status": "cancelled", "text": ""}},
        ]);
        let mcp = json!({"content": [{"type": "text", "text": inner.to_string()}]});
        let steps = super::steps(&batch(), Some(&mcp.to_string())).unwrap();
        assert_eq!(
            describe(&steps[0], None),
            "→ backend: failed: architect may not message backend"
        );
        assert_eq!(
            describe(&steps[1], None),
            "waited for backend: its turn was interrupted"
        );
    }

    #[test]
    fn a_helper_spawned_with_a_task_reads_as_such() {
        let args = json!({"calls": [{"op": "agent.spawn", "args": {"template": "coder", "task": "Write the tests.\nAll of them."}}]});
        let out = json!([{"op": "agent.spawn", "ok": true, "result": {"agent": "coder-2", "started": true}}]);
        let steps = steps(&args, Some(&out.to_string())).unwrap();
        assert_eq!(
            describe(&steps[0], None),
            "+ spawned coder-2: Write the tests."
        );
    }

    #[test]
    fn other_tools_are_not_taken_for_hive_calls() {
        assert!(steps(&json!({"command": "ls"}), None).is_none());
        assert!(steps(&json!({"calls": [{"op": "rm"}]}), None).is_none());
        assert!(steps(&json!({"calls": []}), None).is_none());
    }
}
