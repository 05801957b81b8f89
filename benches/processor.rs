//! Processor cost: a 1 MB message streamed as 4-byte deltas (DESIGN §9 target:
//! ≤ 20 ms, copying linear in the input). Prints bytes copied and emissions
//! once, then lets criterion time the whole stream.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hive::event::{FinalItem, ItemType, Origin, Payload, ResponseStatus, StreamEvent};
use hive::processor::{Processor, ProcessorConfig};
use tokio::time::Instant;

const SIZE: usize = 1 << 20;
const DELTA: usize = 4;

fn events() -> Vec<StreamEvent> {
    let text: String = "lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
        .chars()
        .cycle()
        .take(SIZE)
        .collect();
    let mut v = vec![
        StreamEvent::new(
            "t",
            "s",
            Payload::ResponseStart {
                model_id: "m".into(),
                provider_id: "p".into(),
            },
        ),
        StreamEvent::new(
            "t",
            "s",
            Payload::ItemStart {
                item_id: "m1".into(),
                item_type: ItemType::Message,
                initial_content: None,
                name: None,
                call_id: None,
            },
        ),
    ];
    for chunk in text.as_bytes().chunks(DELTA) {
        v.push(StreamEvent::new(
            "t",
            "s",
            Payload::ItemDelta {
                item_id: "m1".into(),
                delta_content: String::from_utf8_lossy(chunk).into_owned(),
            },
        ));
    }
    v.push(StreamEvent::new(
        "t",
        "s",
        Payload::ItemDone {
            item_id: "m1".into(),
            final_item: FinalItem::Message {
                content: text,
                origin: Origin::Agent,
            },
        },
    ));
    v.push(StreamEvent::new(
        "t",
        "s",
        Payload::ResponseDone {
            status: ResponseStatus::Completed,
            finish_reason: None,
            error: None,
            usage: None,
        },
    ));
    v
}

/// Returns the number of emissions.
fn run(events: &[StreamEvent]) -> usize {
    let mut p = Processor::new(ProcessorConfig::default());
    let now = Instant::now();
    let mut emitted = 0;
    for e in events {
        emitted += black_box(p.process(e, now)).len();
    }
    emitted
}

fn bench(c: &mut Criterion) {
    let evs = events();
    let before = hive::text::bytes_copied();
    let started = std::time::Instant::now();
    let emissions = run(&evs);
    let elapsed = started.elapsed();
    let copied = hive::text::bytes_copied() - before;
    eprintln!(
        "processor: {} bytes in {} deltas of {DELTA} B → {emissions} emissions, \
         {copied} bytes copied ({:.2}× input), one pass {:.1} ms",
        SIZE,
        evs.len() - 4,
        copied as f64 / SIZE as f64,
        elapsed.as_secs_f64() * 1000.0
    );
    c.bench_function("processor_1mb_4b_deltas", |b| b.iter(|| run(&evs)));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
