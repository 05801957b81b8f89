//! Codex translation cost: the DESIGN §9 stream (108k characters of text in
//! 4000 chunks) as `codex app-server` sends it (one JSON-RPC notification per
//! delta), from raw stdout lines through JSON parsing, `AppTurn` and the
//! upsert processor; and the same answer as one whole `codex exec --json`
//! `item.completed` line.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hive::event::{Payload, StreamEvent};
use hive::processor::{Processor, ProcessorConfig};
use hive::provider::codex::app_server::{AppTurn, DeltaNote};
use hive::provider::codex::exec::ExecTurn;
use hive::provider::codex::items::Out;
use serde_json::{Value, json};
use tokio::time::Instant;

const CHARS: usize = 108_000;
const CHUNKS: usize = 4000;

fn text() -> String {
    "Some **markdown** with `code` and words, streamed by the model.\n"
        .chars()
        .cycle()
        .take(CHARS)
        .collect()
}

fn app_server_lines() -> Vec<String> {
    let text = text();
    let chars: Vec<char> = text.chars().collect();
    let per = chars.len().div_ceil(CHUNKS);
    let base = json!({"threadId": "th", "turnId": "tu"});
    let with = |extra: Value| {
        let mut v = base.clone();
        if let (Some(m), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        v
    };
    let mut lines = vec![
        json!({"method": "turn/started", "params": {"threadId": "th", "turn": {"id": "tu"}}}),
        json!({"method": "item/started", "params": with(json!({"item": {"type": "agentMessage", "id": "m", "text": ""}}))}),
    ];
    for chunk in chars.chunks(per) {
        let delta: String = chunk.iter().collect();
        lines.push(json!({"method": "item/agentMessage/delta", "params": with(json!({"itemId": "m", "delta": delta}))}));
    }
    lines.push(json!({"method": "item/completed", "params": with(json!({"item": {"type": "agentMessage", "id": "m", "text": text}}))}));
    lines.push(json!({"method": "turn/completed", "params": {"threadId": "th", "turn": {"id": "tu", "status": "completed"}}}));
    lines.into_iter().map(|v| v.to_string()).collect()
}

fn feed(processor: &mut Processor, outs: Vec<Out>, now: Instant) -> usize {
    let mut n = 0;
    for out in outs {
        let payload = match out {
            Out::Event(p) | Out::Finished(p) => p,
            Out::Started => Payload::ResponseStart {
                model_id: "m".into(),
                provider_id: "codex".into(),
            },
            _ => continue,
        };
        n += processor
            .process(&StreamEvent::new("t", "s", payload), now)
            .len();
    }
    n
}

fn bench(c: &mut Criterion) {
    let lines = app_server_lines();
    let bytes: usize = lines.iter().map(String::len).sum();
    println!(
        "app-server stream: {} lines, {} bytes of JSON",
        lines.len(),
        bytes
    );
    // As the provider reads them (deltas into their fields), and every line
    // as a JSON tree (as it read them before).
    for (name, fields) in [
        ("codex app-server 108k chars / 4000 deltas", true),
        (
            "codex app-server 108k chars / 4000 deltas, JSON trees",
            false,
        ),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| {
                let now = Instant::now();
                let mut tr = AppTurn::new();
                let mut processor = Processor::new(ProcessorConfig::default());
                let mut emitted = 0;
                for line in &lines {
                    let outs = match DeltaNote::read(line).filter(|_| fields) {
                        Some(note) => tr.delta_note(&note),
                        None => {
                            let v: Value = serde_json::from_str(line).expect("bench line");
                            let method = v["method"].as_str().unwrap_or_default();
                            tr.notification(method, &v["params"])
                        }
                    };
                    emitted += feed(&mut processor, outs, now);
                }
                black_box(emitted)
            })
        });
    }

    let exec_lines = [
        json!({"type": "thread.started", "thread_id": "th"}).to_string(),
        json!({"type": "turn.started"}).to_string(),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text()}}).to_string(),
        json!({"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}).to_string(),
    ];
    c.bench_function("codex exec 108k chars whole", |b| {
        b.iter(|| {
            let now = Instant::now();
            let mut tr = ExecTurn::new();
            let mut processor = Processor::new(ProcessorConfig::default());
            let mut emitted = 0;
            for line in &exec_lines {
                emitted += feed(&mut processor, tr.line(line), now);
            }
            black_box(emitted)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
