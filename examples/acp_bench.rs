//! Throughput of the ACP engine: a DESIGN §9-sized stream (108k chars of
//! markdown in 4000 `agent_message_chunk`s) and 500 tool calls, each pushed
//! through `Engine::on_line` and the upsert processor, as the provider task
//! does. Run: `cargo run --release --example acp_bench`.

use std::time::Instant as StdInstant;

use hive::processor::{Processor, ProcessorConfig};
use hive::provider::ProviderEvent;
use hive::provider::acp::engine::{Effect, Engine, EngineConfig};
use hive::provider::{ProviderCommand, acp::client::parse_line};
use serde_json::{Value, json};
use tokio::time::Instant;

fn update(u: Value) -> String {
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": u}})
        .to_string()
}

/// An engine with an open session and a turn in flight; returns the prompt's id.
fn ready(cwd: &std::path::Path) -> (Engine, Value) {
    let mut e = Engine::new(EngineConfig::new("bench", cwd.to_path_buf()));
    e.start();
    e.drain();
    let now = Instant::now();
    e.on_line(
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        now,
    );
    e.on_line(
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        now,
    );
    e.on_command(
        ProviderCommand::Send {
            turn_id: "t1".into(),
            text: "go".into(),
        },
        now,
    );
    let prompt_id = e
        .drain()
        .into_iter()
        .find_map(|fx| match fx {
            Effect::Write(l) => parse_line(&l).ok().and_then(|m| match m {
                hive::provider::acp::client::Incoming::Request { id, method, .. }
                    if method == "session/prompt" =>
                {
                    Some(id)
                }
                _ => None,
            }),
            _ => None,
        })
        .unwrap_or(json!(2));
    (e, prompt_id)
}

fn run(lines: &[String], label: &str, chars: usize) {
    let dir = std::env::temp_dir();
    let (mut engine, prompt_id) = ready(&dir);
    let mut processor = Processor::new(ProcessorConfig::default());
    let end = json!({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
        .to_string();
    let started = StdInstant::now();
    let mut upserts = 0usize;
    for line in lines.iter().chain(std::iter::once(&end)) {
        let now = Instant::now();
        engine.on_line(line, now);
        for fx in engine.drain() {
            if let Effect::Emit(ev) = fx
                && let ProviderEvent::Stream(se) = *ev
            {
                upserts += processor.process(&se, now).len();
            }
        }
    }
    let took = started.elapsed();
    println!(
        "{label}: {} lines, {chars} chars in {:.2} ms ({:.2} µs/line), {upserts} processor outputs",
        lines.len(),
        took.as_secs_f64() * 1e3,
        took.as_secs_f64() * 1e6 / lines.len() as f64
    );
}

fn main() {
    let piece = "Some **markdown** text, `code` and a [link](x). ";
    let mut text_lines = Vec::new();
    let mut chars = 0;
    for i in 0..4000 {
        let chunk: String = piece.chars().cycle().skip(i % 7).take(27).collect();
        chars += chunk.chars().count();
        text_lines.push(update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": chunk}}),
        ));
    }
    run(&text_lines, "text stream", chars);

    let mut tool_lines = Vec::new();
    for i in 0..500 {
        let id = format!("call-{i}");
        tool_lines.push(update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "`ls -la`", "kind": "execute", "status": "in_progress", "rawInput": {"command": "ls -la"}})));
        tool_lines.push(update(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "content": [{"type": "diff", "path": "/w/a.rs", "oldText": "fn a() {}\nfn b() {}\n", "newText": "fn a() {}\nfn c() {}\n"}]})));
    }
    run(&tool_lines, "tool calls (diffs)", 0);
}
