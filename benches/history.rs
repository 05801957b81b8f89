//! History load benchmark: a 10k-record session (3 334 turns: user, toolResult,
//! assistant with thinking + tool call + ~1 KB of markdown), then
//! - `open_pane` as the console does it (newest ~400 records),
//! - paging the whole file back with `load_older`,
//! - a full load (`read_all` + items, what `hive history show` does).
//!
//! Each runs in a fresh child process so its peak RSS (VmHWM) is its own.
//!
//! Then the restart with one huge answer in history (issue 15 item 4): a
//! session holding one `HIVE_BENCH_BIG_MB` (default 50) MB markdown answer,
//! restored into the app and drawn: time to the first frame, frames scrolling
//! it (Home, a page down, End), and RSS (after, and peak) per MB of its text.
//!
//! Run: `cargo bench --bench history` (HIVE_BENCH_RECORDS overrides 10 000;
//! HIVE_BENCH_BIG_KIND=code makes the long answer one code block, `tool` a
//! tool call's output before a short answer).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use hive::config::AgentConfig;
use hive::history::assemble::{TurnAssembler, items_from};
use hive::history::record::{Block, Record, Role};
use hive::history::store::{self, SessionWriter};
use hive::history::{self, OpenOptions, PaneState, Store};

const ANSWER: &str = "## Result\n\nThe change touches `src/runner.rs` and `src/history/mod.rs`. \
The runner now hands every event to the recorder before the app sees it, so the history \
is never behind the screen.\n\n| file | lines |\n|---|---|\n| runner.rs | 42 |\n| mod.rs | 17 |\n\n\
```rust\nfn record(&mut self, event: &PaneEvent) {\n    match event {\n        PaneEvent::Upsert(u) => self.upsert(u),\n        _ => {}\n    }\n}\n```\n\n\
Next I would add a test for the torn-line case and measure the load time on a large file. \
Everything else stays as it is; nothing in the UI needs to change for this.\n";

fn rss_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The pane state and the writer of the bench's one session.
fn session(root: &Path) -> SessionWriter {
    let store = Store::at(root);
    let mut state = PaneState {
        agent_id: "bench".into(),
        session: "big".into(),
        ..PaneState::default()
    };
    state.save(&store.state_path("bench")).unwrap();
    SessionWriter::new(store.session_path("bench", "big"))
}

fn generate(root: &Path, records: usize) {
    let mut w = session(root);
    let turns = records.div_ceil(3);
    let mut batch = Vec::new();
    for t in 0..turns {
        let tid = format!("turn_{t:08}");
        let mut u = Record::new(
            "bench",
            "big",
            1_700_000_000_000 + t as i64 * 1000,
            Role::User,
        );
        u.turn_id = Some(tid.clone());
        u.content = vec![Block::Text {
            text: format!("Question number {t}: please look at the runner and explain it."),
        }];
        batch.push(u);
        let mut a = TurnAssembler::new("bench", "big", Some(tid), 0);
        a.thinking(
            "The user wants an explanation. I will read the file first.",
            1,
        );
        let call = format!("call_{t}");
        a.tool_call(
            &call,
            "Read",
            serde_json::json!({"path": "src/runner.rs"}),
            None,
            2,
        );
        a.tool_result(
            &call,
            "Read",
            (&"fn main() {}\n".repeat(20), false),
            None,
            3,
        );
        a.text(ANSWER, 4);
        a.meta.provider = Some("claude".into());
        a.meta.model = Some("claude-opus-5-5".into());
        a.meta.stop_reason = Some("end_turn".into());
        batch.extend(a.finish());
        if batch.len() > 3000 {
            w.append(&batch).unwrap();
            batch.clear();
        }
    }
    w.append(&batch).unwrap();
}

/// One session: a question and a `bytes`-long markdown answer.
fn generate_big(root: &Path, bytes: usize) {
    let mut w = session(root);
    let mut u = Record::new("bench", "big", 1_700_000_000_000, Role::User);
    u.turn_id = Some("turn_0".into());
    u.content = vec![Block::Text {
        text: "Write it all out.".into(),
    }];
    let mut text = String::with_capacity(bytes + ANSWER.len());
    // `HIVE_BENCH_BIG_KIND=code`: the answer is one fenced code block (no
    // markdown boundary inside, so it is laid out as one piece).
    let kind = std::env::var("HIVE_BENCH_BIG_KIND").unwrap_or_default();
    let code = kind == "code";
    let tool = kind == "tool";
    if code {
        text.push_str("```rust\n");
    }
    let mut n = 0;
    while text.len() < bytes {
        if code || tool {
            text.push_str(&format!("fn line_{n}() -> usize {{ {n} }} // numbered\n"));
            n += 1;
        } else {
            text.push_str(ANSWER);
            text.push('\n');
        }
    }
    if code {
        text.push_str("```\n");
    }
    let mut a = TurnAssembler::new("bench", "big", Some("turn_0".into()), 0);
    if tool {
        let input = serde_json::json!({"command": "cat big.rs"});
        a.tool_call("call_0", "Bash", input, None, 1);
        a.tool_result("call_0", "Bash", (&text, false), None, 2);
        a.text(ANSWER, 3);
    } else {
        a.text(&text, 1);
    }
    drop(text);
    let mut batch = vec![u];
    batch.extend(a.finish());
    w.append(&batch).unwrap();
}

/// Restores the big session into the app and draws it as the console does.
fn child_big(root: &Path) {
    let store = Store::at(root);
    let base = rss_kb("VmRSS:");
    let t = Instant::now();
    let h = history::open_pane_in(
        &store,
        &AgentConfig::new("bench", "script"),
        &OpenOptions::default(),
    );
    let loaded = t.elapsed();
    let config = hive::config::Config::parse(
        "[[agent]]\nid = \"bench\"\nprovider = \"script\"\n",
        hive::config::ConfigSource::Builtin,
    )
    .unwrap();
    let (mut app, _) = hive::app::build_app(&config);
    app.restore(0, &mut hive::wire::snapshot::Restored::of(&h));
    drop(h);
    let area = ratatui::layout::Rect::new(0, 0, 160, 48);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    let mut view = hive::ui::ViewState::default();
    hive::app::frame(&mut app, &mut view, area, &mut buf);
    let first = t.elapsed();
    // A long code block's bottom may be drawn plain first: the frames until
    // its highlighting is there.
    // (HIVE_BENCH_SETTLE=0 leaves it out: a 10 MB block takes minutes.)
    let settle = std::env::var("HIVE_BENCH_SETTLE").map_or(true, |v| v != "0");
    let mut catch_up = 0;
    while settle && view.pending() {
        buf.reset();
        hive::app::frame(&mut app, &mut view, area, &mut buf);
        catch_up += 1;
    }
    let settled = t.elapsed();
    buf.reset();
    let t2 = Instant::now();
    hive::app::frame(&mut app, &mut view, area, &mut buf);
    let next = t2.elapsed();
    // Scrolling through it: to the top, a page down from there, to the end.
    let mut scroll_frame = |app: &mut hive::app::state::App, scroll: usize| {
        app.panes[0].scroll = scroll;
        let t = Instant::now();
        hive::app::frame(app, &mut view, area, &mut buf);
        t.elapsed().as_secs_f64() * 1000.0
    };
    let home = scroll_frame(&mut app, usize::MAX / 2);
    let below_top = app.panes[0].scroll.saturating_sub(46);
    let page = scroll_frame(&mut app, below_top);
    let end = scroll_frame(&mut app, 0);
    let text_bytes: usize = app.panes[0]
        .conversation
        .transcript
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            hive::app::transcript::EntryKind::Item(u) => match &u.kind {
                hive::upsert::UpsertKind::ToolCall { output, .. } => {
                    output.as_ref().map(String::len)
                }
                _ => u.text().map(|t| t.len()),
            },
            _ => None,
        })
        .sum();
    let text_mb = text_bytes as f64 / 1e6;
    let rss = rss_kb("VmRSS:").saturating_sub(base) as f64 / 1024.0;
    let peak = rss_kb("VmHWM:").saturating_sub(base) as f64 / 1024.0;
    println!(
        "  big: history loaded {:.0} ms, first frame at {:.0} ms (all drawn after {catch_up} more \
         frames, at {:.0} ms), next frame {:.2} ms; \
         Home {home:.1} ms, a page down {page:.1} ms, End {end:.1} ms; \
         RSS +{rss:.0} MB for {text_mb:.1} MB of text ({:.1}x), peak +{peak:.0} MB ({:.1}x)",
        loaded.as_secs_f64() * 1000.0,
        first.as_secs_f64() * 1000.0,
        settled.as_secs_f64() * 1000.0,
        next.as_secs_f64() * 1000.0,
        rss / text_mb,
        peak / text_mb,
    );
}

fn child(mode: &str, root: &Path) {
    if mode == "big" {
        return child_big(root);
    }
    let store = Store::at(root);
    let agent = AgentConfig::new("bench", "script");
    let base = rss_kb("VmRSS:");
    let t = Instant::now();
    let (items, detail) = match mode {
        "open" => {
            let h = history::open_pane_in(&store, &agent, &OpenOptions::default());
            assert!(h.warnings.is_empty());
            let n = h.items.len();
            (n, format!("older pages: {}", h.older.is_some()))
        }
        "page" => {
            let h = history::open_pane_in(&store, &agent, &OpenOptions::default());
            let mut n = h.items.len();
            let mut page = h.older;
            let mut pages = 1;
            while let Some(p) = page {
                let (older, next, _) = history::load_older(&p, 400);
                n += older.len();
                page = next;
                pages += 1;
            }
            (n, format!("{pages} pages"))
        }
        _ => {
            let loaded = store::read_all(&store.session_path("bench", "big")).unwrap();
            let n = loaded.records.len();
            let items = items_from(&loaded.records);
            (items.len(), format!("{n} records"))
        }
    };
    let took = t.elapsed();
    println!(
        "{mode:>5}: {:>8.2} ms  {items:>6} items ({detail})  RSS {} KB -> peak {} KB",
        took.as_secs_f64() * 1000.0,
        base,
        rss_kb("VmHWM:")
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], Path::new(&args[i + 2]));
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs with no
    // flag: keep that run short.
    let full = args.iter().any(|a| a == "--bench");
    let records: usize = std::env::var("HIVE_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 10_000 } else { 300 });
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    generate(dir.path(), records);
    let size = std::fs::metadata(Store::at(dir.path()).session_path("bench", "big"))
        .unwrap()
        .len();
    println!(
        "history bench: {records} records, {:.1} MB, written in {:.0} ms",
        size as f64 / 1e6,
        t.elapsed().as_secs_f64() * 1000.0
    );
    let exe = std::env::current_exe().unwrap();
    for mode in ["open", "page", "full"] {
        for _ in 0..if full { 3 } else { 1 } {
            let status = Command::new(&exe)
                .args(["--child", mode])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    let mb: usize = std::env::var("HIVE_BENCH_BIG_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 50 } else { 1 });
    let big = tempfile::tempdir().unwrap();
    generate_big(big.path(), mb * 1_000_000);
    println!("restart with one {mb} MB answer in history:");
    for _ in 0..if full { 3 } else { 1 } {
        let status = Command::new(&exe)
            .args(["--child", "big"])
            .arg(big.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}
