//! History store, recorder, session state, queue persistence, import, and
//! crash behaviour of the real `hive` binary (issue #5).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use hive::config::AgentConfig;
use hive::event::Origin;
use hive::history::import;
use hive::history::record::{Block, Record, Role};
use hive::history::{self, OpenOptions, PaneState, Store, state, store};
use hive::provider::ProviderSpec;
use hive::provider::import::Format;
use hive::provider::script::ScriptFactory;
use hive::runner::{PaneEvent, PaneUpdate, RunnerCommand, RunnerOptions, SubmitMode, spawn_runner};
use hive::upsert::{TurnEvent, Upsert, UpsertKind, UpsertStatus};
use tokio::sync::mpsc;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(name)
}

fn records(path: &Path) -> Vec<Record> {
    let loaded = store::read_all(path).expect("readable");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.records.into_iter().map(|(_, r)| r).collect()
}

fn opts() -> OpenOptions {
    OpenOptions::default()
}

/// A scripted agent writing its scenario into `dir`.
fn script_agent(dir: &Path, id: &str, scenario: &str) -> AgentConfig {
    let path = dir.join(format!("{id}.toml"));
    std::fs::write(&path, scenario).expect("write scenario");
    let mut a = AgentConfig::new(id, "script");
    a.script = Some(path);
    a
}

const ORDER_SCENARIO: &str = r#"
model = "order-1"
chunk_chars = 4
delay_ms = 5
[[turn]]
[[turn.step]]
text = "Let me look."
[[turn.step]]
thinking = "Which files are there?"
[[turn.step]]
tool = "Bash"
args = { command = "ls" }
output = "a.txt"
duration_ms = 50
[[turn.step]]
tool = "Read"
args = { path = "a.txt" }
output = "no such file"
is_error = true
[[turn.step]]
text = "Done."

[[turn]]
match = "slow"
[[turn.step]]
text = "slowly slowly slowly slowly slowly slowly slowly slowly slowly"
chunk_chars = 1
delay_ms = 100
"#;

/// Runs turns through a real runner + script provider with the pane's
/// recorder, on tokio's paused clock.
struct Pane {
    runner: hive::runner::RunnerHandle,
    rx: mpsc::UnboundedReceiver<PaneUpdate>,
}

impl Pane {
    fn start(agent: &AgentConfig, h: history::PaneHistory) -> Self {
        Self::start_with_queue(agent, h, true)
    }

    /// `restore_queue` false is what `hive run` does: the stored queue is not
    /// handed to the runner.
    fn start_with_queue(agent: &AgentConfig, h: history::PaneHistory, restore_queue: bool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let queue = if restore_queue {
            h.queue.clone()
        } else {
            Vec::new()
        };
        let options = RunnerOptions {
            initial_queue: queue,
            recorder: h.recorder,
            ..RunnerOptions::default()
        };
        let spec = ProviderSpec {
            agent: agent.clone(),
            resume: h.resume,
        };
        let runner = spawn_runner(0, Arc::new(ScriptFactory), spec, options, tx).expect("spawn");
        Self { runner, rx }
    }

    fn submit(&self, text: &str) {
        self.runner.send(RunnerCommand::Submit {
            text: text.into(),
            mode: SubmitMode::Auto,
        });
    }

    async fn until(&mut self, mut f: impl FnMut(&PaneEvent) -> bool) {
        while let Some(u) = self.rx.recv().await {
            if f(&u.event) {
                return;
            }
        }
        panic!("runner stopped");
    }

    async fn turn_end(&mut self) {
        self.until(|e| matches!(e, PaneEvent::Turn(t) if t.is_terminal()))
            .await;
    }

    async fn shutdown(mut self) {
        self.runner.send(RunnerCommand::Shutdown);
        drop(self.runner);
        // The runner task drops its recorder when it ends; wait for that.
        while self.rx.recv().await.is_some() {}
    }
}

#[tokio::test(start_paused = true)]
async fn recorded_turn_follows_the_assembly_rules() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "order", ORDER_SCENARIO);
    let h = history::open_pane_in(&store, &agent, &opts());
    let session = h.session.clone();
    let mut pane = Pane::start(&agent, h);
    pane.submit("what is here?");
    pane.turn_end().await;
    pane.shutdown().await;

    let recs = records(&store.session_path("order", &session));
    let roles: Vec<Role> = recs.iter().map(|r| r.role).collect();
    // The user record, tool results as records of their own, then one assistant.
    assert_eq!(
        roles,
        [
            Role::User,
            Role::ToolResult,
            Role::ToolResult,
            Role::Assistant
        ]
    );
    for r in &recs {
        assert_eq!(r.kind, "history");
        assert_eq!(r.agent_id, "order");
        assert_eq!(r.session_id, session);
        assert!(r.timestamp > 1_600_000_000_000, "ms timestamp");
        assert_eq!(r.turn_id, recs[0].turn_id);
    }
    assert_eq!(recs[0].text(), "what is here?");
    assert_eq!(recs[1].tool_name.as_deref(), Some("Bash"));
    assert_eq!(recs[1].text(), "a.txt");
    assert_eq!(recs[1].is_error, Some(false));
    assert_eq!(recs[2].tool_name.as_deref(), Some("Read"));
    assert_eq!(recs[2].is_error, Some(true));
    // How long each call ran, as the pane timed it (a delegation's wait
    // reads the same after a restart): Bash's scripted 50 ms.
    let bash_ms = recs[1].duration_ms.expect("Bash timed");
    assert!((50..1_000).contains(&bash_ms), "{bash_ms}");
    let again = history::open_pane_in(&store, &agent, &opts());
    let bash = again
        .items
        .iter()
        .find(|u| matches!(&u.kind, UpsertKind::ToolCall { tool_name, .. } if tool_name == "Bash"))
        .expect("the Bash call restored");
    assert!(again.took.contains(&(bash.item_id.clone(), bash_ms)));

    let a = &recs[3];
    // thinking → tool calls in order → text, although the text began first.
    let kinds: Vec<&str> = a
        .content
        .iter()
        .map(|b| match b {
            Block::Thinking { .. } => "thinking",
            Block::ToolCall { .. } => "toolCall",
            Block::Text { .. } => "text",
            Block::Unknown => "?",
        })
        .collect();
    assert_eq!(kinds, ["thinking", "toolCall", "toolCall", "text"]);
    let Block::ToolCall {
        id,
        name,
        arguments,
        ..
    } = &a.content[1]
    else {
        unreachable!()
    };
    assert_eq!(name, "Bash");
    assert_eq!(arguments["command"], "ls");
    assert_eq!(Some(id), recs[1].tool_call_id.as_ref());
    assert_eq!(
        a.content[3],
        Block::Text {
            text: "Let me look.\n\nDone.".into()
        }
    );
    let meta = a.meta.as_ref().expect("meta on the assistant record");
    assert_eq!(meta.provider.as_deref(), Some("script"));
    assert_eq!(meta.model.as_deref(), Some("order-1"));
    assert!(
        meta.usage
            .as_ref()
            .is_some_and(|u| u.output > 0 && u.total_tokens >= u.output)
    );
    assert!(meta.stop_reason.is_some());
    // Meta lives on the assistant record only.
    assert!(recs[..3].iter().all(|r| r.meta.is_none()));
}

fn kinds(items: &[Upsert]) -> Vec<String> {
    items
        .iter()
        .map(|u| match &u.kind {
            UpsertKind::Message { origin, content } => format!("{origin:?}:{content}"),
            UpsertKind::Thinking { .. } => "thinking".into(),
            UpsertKind::ToolCall {
                tool_name, output, ..
            } => format!("tool:{tool_name}:{}", output.as_deref().unwrap_or("-")),
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_restarted_pane_gets_its_items_and_resume_handle_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "order", ORDER_SCENARIO);
    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.items.is_empty() && h.resume.is_none());
    let session = h.session.clone();
    let mut pane = Pane::start(&agent, h);
    let mut handle = None;
    pane.until(|e| match e {
        PaneEvent::Session(s) => {
            handle = s.resume_handle.clone();
            true
        }
        _ => false,
    })
    .await;
    pane.submit("hello");
    pane.turn_end().await;
    pane.shutdown().await;

    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert_eq!(h.session, session);
    assert!(handle.is_some());
    assert_eq!(h.resume, handle);
    assert!(h.older.is_none());
    assert!(h.items.iter().all(|u| u.status == UpsertStatus::Complete));
    assert_eq!(
        kinds(&h.items),
        // In the order they were shown (issue 13 item 6), not the seed's grouping.
        [
            "User:hello",
            "Agent:Let me look.",
            "thinking",
            "tool:Bash:a.txt",
            "tool:Read:no such file",
            "Agent:Done."
        ]
    );
    let ids: std::collections::HashSet<_> = h.items.iter().map(|u| &u.item_id).collect();
    assert_eq!(ids.len(), h.items.len(), "item ids are unique");

    // The next run continues the same session with the same agent handle.
    let mut pane = Pane::start(&agent, h);
    let mut again = None;
    pane.until(|e| match e {
        PaneEvent::Session(s) => {
            again = s.resume_handle.clone();
            true
        }
        _ => false,
    })
    .await;
    assert_eq!(again, handle);
    pane.submit("more");
    pane.turn_end().await;
    pane.shutdown().await;
    let recs = records(&store.session_path("order", &session));
    assert_eq!(recs.iter().filter(|r| r.role == Role::User).count(), 2);

    // --fresh: a new session, no agent handle, old file kept.
    let h = history::open_pane_in(
        &store,
        &agent,
        &OpenOptions {
            fresh: true,
            ..opts()
        },
    );
    assert_ne!(h.session, session);
    assert!(h.resume.is_none() && h.items.is_empty());
    assert!(store.session_path("order", &session).exists());
    drop(h);
    assert_eq!(
        store.sessions("order").len(),
        1,
        "no file until something is written"
    );
}

#[tokio::test(start_paused = true)]
async fn queued_messages_survive_a_crash_and_come_back_unsent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "q", ORDER_SCENARIO);
    let mut pane = Pane::start(&agent, history::open_pane_in(&store, &agent, &opts()));
    pane.submit("go slow");
    pane.until(|e| matches!(e, PaneEvent::Turn(TurnEvent::TurnStarted { .. })))
        .await;
    pane.submit("first queued");
    pane.submit("second queued");
    pane.until(|e| matches!(e, PaneEvent::Queue(q) if q.len() == 2))
        .await;
    // The runner is still mid-turn: what is on disk now is what a crash leaves.
    let state = PaneState::load(&store.state_path("q")).unwrap().unwrap();
    assert_eq!(state.queue, ["first queued", "second queued"]);
    let h = history::open_pane_in(&store, &agent, &opts());
    assert_eq!(h.queue, ["first queued", "second queued"]);
    // Only the user's prompt of the turn in flight is in the history so
    // far: the running pane's checkpoint (#46 item 18) is its own.
    assert_eq!(kinds(&h.items), ["User:go slow"]);
    drop(h);
    pane.shutdown().await;

    // `hive run` (track_queue off) never overwrites the stored queue.
    let run_opts = OpenOptions {
        track_queue: false,
        tail_records: 0,
        ..opts()
    };
    let mut pane = Pane::start_with_queue(
        &agent,
        history::open_pane_in(&store, &agent, &run_opts),
        false,
    );
    pane.submit("hello");
    pane.turn_end().await;
    pane.shutdown().await;
    let h = history::open_pane_in(&store, &agent, &opts());
    assert_eq!(h.queue, ["first queued", "second queued"]);

    // Restored into a runner, the queue is offered, not sent: it waits for
    // DrainQueue, and emptying it is persisted too.
    let mut pane = Pane::start(&agent, h);
    pane.until(|e| matches!(e, PaneEvent::Queue(q) if q.len() == 2))
        .await;
    pane.runner
        .send(RunnerCommand::Queue(hive::runner::QueueEdit::Clear));
    pane.until(|e| matches!(e, PaneEvent::Queue(q) if q.is_empty()))
        .await;
    pane.shutdown().await;
    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.queue.is_empty());
    assert_eq!(
        h.items
            .iter()
            .filter(|u| matches!(
                &u.kind,
                UpsertKind::Message {
                    origin: Origin::User,
                    ..
                }
            ))
            .count(),
        2,
        "nothing was sent from the restored queue"
    );
}

#[tokio::test(start_paused = true)]
async fn quitting_mid_turn_keeps_the_partial_turn_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "quit", ORDER_SCENARIO);
    let h = history::open_pane_in(&store, &agent, &opts());
    let session = h.session.clone();
    let mut pane = Pane::start(&agent, h);
    pane.submit("slow please");
    pane.until(|e| {
        matches!(e, PaneEvent::Upsert(u) if matches!(&u.kind,
            UpsertKind::Message { origin: Origin::Agent, content } if content.len() > 5))
    })
    .await;
    pane.shutdown().await;
    let recs = records(&store.session_path("quit", &session));
    assert_eq!(recs.len(), 2);
    let meta = recs[1].meta.as_ref().unwrap();
    assert_eq!(meta.stop_reason.as_deref(), Some("interrupted"));
    assert!(recs[1].text().starts_with("slowly"));
}

/// Writes `turns` complete turns straight through the assembler.
fn write_turns(path: &Path, agent: &str, session: &str, turns: usize) {
    let mut w = store::SessionWriter::new(path.to_owned());
    for t in 0..turns {
        let tid = format!("t{t}");
        let mut u = Record::new(agent, session, 1_700_000_000_000 + t as i64, Role::User);
        u.turn_id = Some(tid.clone());
        u.content = vec![Block::Text {
            text: format!("question {t}"),
        }];
        let mut a = history::assemble::TurnAssembler::new(agent, session, Some(tid), 0);
        a.thinking("thinking about it", 1);
        a.tool_call(
            &format!("c{t}"),
            "Bash",
            serde_json::json!({"command": "ls"}),
            None,
            2,
        );
        a.tool_result(&format!("c{t}"), "Bash", ("out", false), None, 3);
        a.text(&format!("answer {t}"), 4);
        let mut recs = vec![u];
        recs.extend(a.finish());
        w.append(&recs).unwrap();
    }
}

fn pane_at(store: &Store, agent: &str, session: &str) -> AgentConfig {
    let mut s = PaneState {
        agent_id: agent.into(),
        session: session.into(),
        ..PaneState::default()
    };
    s.save(&store.state_path(agent)).unwrap();
    AgentConfig::new(agent, "script")
}

#[test]
fn a_torn_last_line_is_skipped_and_repaired_before_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let agent = pane_at(&store, "a", "s1");
    let path = store.session_path("a", "s1");
    write_turns(&path, "a", "s1", 2);
    let good = std::fs::read(&path).unwrap();
    // A crash in the middle of a write: half a record, no newline.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"type":"history","agentId":"a","sessionId":"s1","timest"#)
        .unwrap();
    drop(f);

    let h = history::open_pane_in(&store, &agent, &opts());
    assert_eq!(h.warnings.len(), 1, "{:?}", h.warnings);
    assert!(h.warnings[0].contains("torn or corrupt"));
    assert_eq!(
        kinds(&h.items),
        [
            "User:question 0",
            "thinking",
            "tool:Bash:out",
            "Agent:answer 0",
            "User:question 1",
            "thinking",
            "tool:Bash:out",
            "Agent:answer 1"
        ]
    );
    // The next append moves the fragment aside instead of gluing onto it.
    let mut rec = h.recorder.unwrap();
    let user = Upsert {
        turn_id: "t9".into(),
        session_id: "x".into(),
        item_id: "u9".into(),
        source_timestamp: chrono::Utc::now(),
        emitted_at: chrono::Utc::now(),
        status: UpsertStatus::Complete,
        error_code: None,
        error_message: None,
        kind: UpsertKind::Message {
            content: "after the crash".into(),
            origin: Origin::User,
        },
    };
    rec.record(&PaneEvent::Upsert(user));
    drop(rec);
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes.starts_with(&good),
        "nothing before the tear was touched"
    );
    let recs = records(&path);
    assert_eq!(recs.last().unwrap().text(), "after the crash");
    let torn = std::fs::read_to_string(path.with_extension("jsonl.torn")).unwrap();
    assert!(torn.contains("\"timest"));
    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
}

#[test]
fn a_corrupt_line_in_the_middle_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let agent = pane_at(&store, "a", "s1");
    let path = store.session_path("a", "s1");
    write_turns(&path, "a", "s1", 1);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"\x00\xffgarbage}\n")
        .unwrap();
    write_turns(&path, "a", "s1", 1);
    let h = history::open_pane_in(&store, &agent, &opts());
    assert_eq!(h.warnings.len(), 1);
    assert_eq!(h.items.len(), 8);
}

#[test]
fn large_histories_load_their_tail_and_page_back_to_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let agent = pane_at(&store, "big", "s");
    let path = store.session_path("big", "s");
    write_turns(&path, "big", "s", 3000);
    let all = history::assemble::items_from(&store::read_all(&path).unwrap().records);
    assert_eq!(all.len(), 3000 * 4);

    let h = history::open_pane_in(
        &store,
        &agent,
        &OpenOptions {
            tail_records: 100,
            ..opts()
        },
    );
    assert!(h.warnings.is_empty());
    // 100 records = 34 whole turns (3 records each), starting at a user record.
    assert_eq!(h.items.len(), 34 * 4);
    assert_eq!(kinds(&h.items[..1]), ["User:question 2966"]);
    let mut loaded = h.items.clone();
    let mut page = h.older;
    let mut pages = 1;
    while let Some(p) = page {
        let (mut older, next, warnings) = history::load_older(&p, 500);
        assert!(warnings.is_empty());
        assert!(!older.is_empty());
        older.append(&mut loaded);
        loaded = older;
        page = next;
        pages += 1;
    }
    assert!(pages > 2);
    assert_eq!(kinds(&loaded), kinds(&all));
    let ids: Vec<_> = loaded.iter().map(|u| &u.item_id).collect();
    let all_ids: Vec<_> = all.iter().map(|u| &u.item_id).collect();
    assert_eq!(ids, all_ids, "paged items have the same ids as a full load");
}

/// A record line far longer than the reader's 256 KB chunks (one long
/// answer) comes back whole, with the records around it.
#[test]
fn an_answer_spanning_many_read_chunks_loads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let agent = pane_at(&store, "long", "s");
    let path = store.session_path("long", "s");
    write_turns(&path, "long", "s", 2);
    let long: String = (0..60_000)
        .map(|i| format!("line {i} of the long answer\n"))
        .collect();
    assert!(long.len() > 1_500_000);
    let mut w = store::SessionWriter::new(path.clone());
    let mut a = history::assemble::TurnAssembler::new("long", "s", Some("t9".into()), 0);
    a.text(&long, 1);
    w.append(&a.finish()).unwrap();
    drop(w);
    write_turns(&path, "long", "s", 1);

    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    let texts: Vec<String> = h
        .items
        .iter()
        .filter_map(|u| u.text().map(|t| t.to_string()))
        .collect();
    assert!(texts.contains(&long), "the long answer is whole");
    assert_eq!(kinds(&h.items[..1]), ["User:question 0"]);
}

#[test]
fn session_state_is_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/a.json");
    let big = |tag: &str| PaneState {
        agent_id: "a".into(),
        session: tag.into(),
        resume: Some(tag.repeat(100)),
        queue: vec![tag.repeat(20_000); 10],
        ..PaneState::default()
    };
    big("one").save(&path).unwrap();
    // A writer rewrites the state over and over while a reader reads it:
    // every read must see one whole state, never a mix or a truncation.
    let writer_path = path.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop_w = Arc::clone(&stop);
    let writer = std::thread::spawn(move || {
        let mut n = 0;
        while !stop_w.load(std::sync::atomic::Ordering::Relaxed) || n < 20 {
            let tag = if n % 2 == 0 { "two" } else { "one" };
            big(tag).save(&writer_path).unwrap();
            n += 1;
        }
        n
    });
    let mut reads = 0;
    for _ in 0..300 {
        let s = PaneState::load(&path).unwrap().unwrap();
        let expected = PaneState {
            updated_at: s.updated_at,
            version: s.version,
            ..big(&s.session)
        };
        assert!(s == expected, "a read saw a mixed or partial state");
        reads += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = writer.join().unwrap();
    assert!(reads == 300 && writes >= 20);
    // No temp files left behind; a stale one from a crash changes nothing.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.json"]);
    std::fs::write(dir.path().join("state/a.json.tmp-999"), b"{\"half").unwrap();
    assert!(PaneState::load(&path).unwrap().is_some());
    // write_atomic refuses cleanly where it cannot write, leaving the old file.
    let before = std::fs::read(&path).unwrap();
    let blocked = dir.path().join("state/a.json/x");
    assert!(state::write_atomic(&blocked, b"{}").is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

/// Issue 13 item 1: a stored resume handle is never offered to another agent
/// program (the provider changed, or ACP now runs another agent); the
/// transcript stays and the pane says why.
#[test]
fn a_resume_handle_is_only_offered_to_the_program_that_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    write_turns(&store.session_path("a", "s1"), "a", "s1", 1);
    let mut gemini = AgentConfig::new("a", "acp");
    gemini.command = vec!["gemini".into(), "--experimental-acp".into()];
    let stored = |provider: &str, key: Option<String>| {
        PaneState {
            agent_id: "a".into(),
            session: "s1".into(),
            resume: Some("handle-1".into()),
            provider: Some(provider.into()),
            resume_key: key,
            ..PaneState::default()
        }
        .save(&store.state_path("a"))
        .unwrap();
    };
    // Made by this very program: offered.
    stored("acp", Some(state::resume_key(&gemini)));
    let h = history::open_pane_in(&store, &gemini, &opts());
    assert_eq!(h.resume.as_deref(), Some("handle-1"));
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    // Another ACP agent: not offered, said so, transcript kept.
    let mut claude_acp = gemini.clone();
    claude_acp.command = vec!["claude-code-acp".into()];
    stored("acp", Some(state::resume_key(&gemini)));
    let h = history::open_pane_in(&store, &claude_acp, &opts());
    assert_eq!(h.resume, None);
    assert_eq!(h.session, "s1");
    assert_eq!(h.items.len(), 4);
    assert!(
        h.warnings.iter().any(|w| w.contains("new agent session")),
        "{:?}",
        h.warnings
    );
    // A state from before the key existed: judged by its provider.
    stored("codex", None);
    let h = history::open_pane_in(&store, &gemini, &opts());
    assert_eq!(h.resume, None);
    stored("acp", None);
    let h = history::open_pane_in(&store, &gemini, &opts());
    assert_eq!(h.resume.as_deref(), Some("handle-1"));
}

#[test]
fn a_corrupt_state_file_falls_back_to_the_newest_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    write_turns(&store.session_path("a", "old"), "a", "old", 1);
    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    std::fs::write(store.state_path("a"), b"{not json").unwrap();
    let h = history::open_pane_in(&store, &AgentConfig::new("a", "script"), &opts());
    assert_eq!(h.session, "old");
    assert_eq!(h.items.len(), 4);
    assert!(h.resume.is_none());
    assert!(!h.warnings.is_empty());
}

// ---- import ---------------------------------------------------------------

fn import_ok(store: &Store, format: Format, name: &str, agent: &str) -> Vec<Record> {
    let r = import::import(store, format, &fixture(name), agent, false).expect("import");
    assert!(!r.already_imported);
    assert_eq!(r.skipped_lines, 0);
    let recs = records(&r.path);
    assert_eq!(recs.len(), r.records);
    // Idempotent: the same file again writes nothing.
    let before = std::fs::read(&r.path).unwrap();
    let again = import::import(store, format, &fixture(name), agent, false).unwrap();
    assert!(again.already_imported);
    assert_eq!(again.session, r.session);
    assert_eq!(std::fs::read(&r.path).unwrap(), before);
    assert_eq!(
        store
            .sessions(agent)
            .iter()
            .filter(|s| s.session == r.session)
            .count(),
        1
    );
    recs
}

fn roles(recs: &[Record]) -> Vec<Role> {
    recs.iter().map(|r| r.role).collect()
}

fn block_kinds(r: &Record) -> Vec<&'static str> {
    r.content
        .iter()
        .map(|b| match b {
            Block::Thinking { .. } => "thinking",
            Block::ToolCall { .. } => "toolCall",
            Block::Text { .. } => "text",
            Block::Unknown => "?",
        })
        .collect()
}

const MOCK_REPLY: &str = "**Mock reply.** This answer comes from `mockllm.py`.\n\n- item one\n- item two\n\n```sh\necho hello\n```\n";

#[test]
fn imports_a_claude_code_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let recs = import_ok(
        &store,
        Format::named("claude").unwrap(),
        "claude-transcript.jsonl",
        "cl",
    );
    use Role::*;
    assert_eq!(roles(&recs), [User, Assistant, User, Assistant]);
    assert_eq!(recs[0].text(), "Remember the codeword PINEAPPLE.");
    assert_eq!(recs[2].text(), "What was the codeword?");
    assert_eq!(recs[1].text(), MOCK_REPLY);
    let meta = recs[1].meta.as_ref().unwrap();
    assert_eq!(meta.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!(meta.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(meta.usage.as_ref().unwrap().input, 12737);
    assert_eq!(
        recs[0].session_id,
        "import-claude-5e551011-0000-4000-8000-00000000cafe"
    );
    assert_eq!(recs[0].timestamp, 1_795_311_240_627);
}

#[test]
fn imports_claude_tool_calls_thinking_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let recs = import_ok(
        &store,
        Format::named("claude").unwrap(),
        "claude-tool-stream.jsonl",
        "cl",
    );
    use Role::*;
    assert_eq!(roles(&recs), [User, ToolResult, Assistant]);
    assert_eq!(
        recs[0].text(),
        "Run a shell command. SCENARIO:tool_then_text"
    );
    assert_eq!(recs[1].tool_name.as_deref(), Some("Bash"));
    assert_eq!(recs[1].text(), "hello-from-tool\n/tmp/hive-lab-work");
    assert_eq!(block_kinds(&recs[2]), ["thinking", "toolCall", "text"]);
    assert_eq!(
        recs[2].content[2],
        Block::Text {
            text: "Let me run a command.\n\nThe command ran. It printed `hello-from-tool` and the working directory.".into()
        }
    );
}

#[test]
fn imports_a_codex_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let recs = import_ok(
        &store,
        Format::named("codex").unwrap(),
        "codex-rollout.jsonl",
        "cx",
    );
    use Role::*;
    // Developer instructions and <environment_context> are not user turns.
    assert_eq!(roles(&recs), [User, Assistant, User, Assistant]);
    assert_eq!(recs[0].text(), "Remember the codeword PINEAPPLE.");
    assert_eq!(recs[3].text(), MOCK_REPLY);
    let meta = recs[1].meta.as_ref().unwrap();
    assert_eq!(meta.provider.as_deref(), Some("codex"));
    assert_eq!(meta.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(meta.usage.as_ref().unwrap().input, 9661);
    assert_eq!(meta.stop_reason.as_deref(), Some("completed"));

    let recs = import_ok(
        &store,
        Format::named("codex").unwrap(),
        "codex-rollout-tools.jsonl",
        "cx2",
    );
    assert_eq!(
        roles(&recs),
        [
            User, Assistant, User, Assistant, User, ToolResult, Assistant
        ]
    );
    assert_eq!(recs[5].tool_name.as_deref(), Some("exec_command"));
    assert!(recs[5].text().contains("hello-from-tool"));
    assert_eq!(recs[5].is_error, Some(false));
    assert_eq!(block_kinds(&recs[6]), ["thinking", "toolCall", "text"]);
    let Block::ToolCall { arguments, .. } = &recs[6].content[1] else {
        unreachable!()
    };
    assert_eq!(arguments["cmd"], "echo hello-from-tool && pwd");
}

#[test]
fn imports_a_pi_session_and_can_make_it_current() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let recs = import_ok(
        &store,
        Format::named("pi").unwrap(),
        "pi-session.jsonl",
        "p",
    );
    use Role::*;
    assert_eq!(roles(&recs), [User, Assistant, User, Assistant]);
    let meta = recs[1].meta.as_ref().unwrap();
    assert_eq!(meta.provider.as_deref(), Some("mock"));
    assert_eq!(meta.model.as_deref(), Some("mock-model"));
    assert_eq!(meta.stop_reason.as_deref(), Some("stop"));
    let usage = meta.usage.as_ref().unwrap();
    assert_eq!(
        (usage.input, usage.output, usage.total_tokens),
        (1433, 25, 1458)
    );

    // Several pi assistant messages in one turn merge into one record.
    let recs = import_ok(
        &store,
        Format::named("pi").unwrap(),
        "pi-session-tools.jsonl",
        "p2",
    );
    assert_eq!(roles(&recs), [User, Assistant, User, ToolResult, Assistant]);
    assert_eq!(block_kinds(&recs[1]), ["thinking", "text"]);
    assert_eq!(block_kinds(&recs[4]), ["toolCall", "text"]);
    assert_eq!(
        recs[4].text(),
        "Reading the file.\n\nI read the file; it says hello."
    );
    assert_eq!(recs[3].tool_name.as_deref(), Some("read"));
    assert_eq!(
        recs[4].meta.as_ref().unwrap().usage.as_ref().unwrap().input,
        1434 + 1522
    );

    // --activate: the pane continues the imported session, resuming pi's id.
    let r = import::import(
        &store,
        Format::named("pi").unwrap(),
        &fixture("pi-session.jsonl"),
        "p",
        true,
    )
    .unwrap();
    let h = history::open_pane_in(&store, &AgentConfig::new("p", "pi"), &opts());
    assert_eq!(h.session, r.session);
    assert_eq!(
        h.resume.as_deref(),
        Some("01a200e6-3b2f-7792-ac40-3d03b6b58b49")
    );
    assert_eq!(h.items.len(), 4);
}

#[test]
fn importing_something_else_is_an_error_not_an_empty_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path());
    let err = import::import(
        &store,
        Format::named("pi").unwrap(),
        &fixture("codex-rollout.jsonl"),
        "x",
        false,
    );
    assert!(err.is_err());
    assert!(store.sessions("x").is_empty());
}

// ---- the real binary --------------------------------------------------------

fn hive(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hive"));
    c.env("HIVE_DATA_DIR", data)
        .env("HIVE_STATE_DIR", data.join("logs"))
        .arg("--config")
        .arg(fixture("hive.toml"))
        .current_dir(data);
    c
}

/// The store of the fixture config's project in the data dir `data`, as
/// the binary keeps it (`data/projects/<project>/`).
fn binary_store(data: &Path) -> Store {
    let source = hive::config::ConfigSource::File(fixture("hive.toml"));
    Store::at(hive::project::Project::of(&source).dir_in(data))
}

#[test]
fn kill_9_mid_turn_keeps_what_the_turn_had_shown_and_says_it_was_cut() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let out = hive(&data)
        .args(["run", "--agent", "slowpoke", "first question"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = binary_store(&data);
    let state1 = PaneState::load(&store.state_path("slowpoke"))
        .unwrap()
        .unwrap();
    assert!(state1.resume.is_some());

    // A crash of hive itself: killed under a supervisor (src/supervisor.rs),
    // hive would get SIGTERM and save the partial turn.
    let mut child = hive(&data)
        .args(["run", "--agent", "slowpoke", "--json", "go slow now"])
        .env("HIVE_NO_SUPERVISOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait until the slow answer is visibly streaming, then SIGKILL.
    loop {
        let line = lines.next().expect("hive ended before streaming").unwrap();
        if line.contains("SLOWTEXT") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let agent = AgentConfig::new("slowpoke", "script");
    let h = history::open_pane_in(&store, &agent, &opts());
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    assert_eq!(h.session, state1.session);
    assert_eq!(h.resume, state1.resume);
    let kinds = kinds(&h.items);
    assert_eq!(
        kinds[..5],
        [
            "User:first question",
            "thinking",
            "tool:Bash:a.txt\nb.txt",
            "Agent:Two files: a.txt and b.txt. You said: first question",
            "User:go slow now",
        ]
    );
    // What the killed turn had shown is kept (#46 item 18: it used to be
    // lost), and the pane says the turn was cut.
    assert!(
        kinds.iter().any(|k| k.starts_with("Agent:SLOWTEXT")),
        "{kinds:?}"
    );
    assert!(
        kinds
            .last()
            .is_some_and(|k| k.starts_with("System:turn cut")),
        "{kinds:?}"
    );
    drop(h);

    // The next run continues the same history session and agent session.
    let out = hive(&data)
        .args(["run", "--agent", "slowpoke", "third"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let state3 = PaneState::load(&store.state_path("slowpoke"))
        .unwrap()
        .unwrap();
    assert_eq!(
        (state3.session, state3.resume),
        (state1.session.clone(), state1.resume.clone())
    );
    let recs = records(&store.session_path("slowpoke", &state1.session));
    let users: Vec<String> = recs
        .iter()
        .filter(|r| r.role == Role::User)
        .map(Record::text)
        .collect();
    assert_eq!(users, ["first question", "go slow now", "third"]);
    // The cut turn's answer so far is one of them.
    assert_eq!(recs.iter().filter(|r| r.role == Role::Assistant).count(), 3);

    // The commands read the same store.
    let show = hive(&data)
        .args(["history", "show", "slowpoke"])
        .output()
        .unwrap();
    let show = String::from_utf8(show.stdout).unwrap();
    assert!(show.contains("first question") && show.contains("── tool Bash"));
    let md = hive(&data)
        .args(["history", "export", "--markdown", &state1.session])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("## User\n\nthird") && md.contains("<details><summary>Thinking"));
    let list = hive(&data).args(["history", "list"]).output().unwrap();
    assert!(
        String::from_utf8(list.stdout)
            .unwrap()
            .contains("* slowpoke")
    );

    // --fresh starts over; the old session stays listed.
    let out = hive(&data)
        .args(["--fresh", "run", "--agent", "slowpoke", "new start"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let state4 = PaneState::load(&store.state_path("slowpoke"))
        .unwrap()
        .unwrap();
    assert_ne!(state4.session, state1.session);
    assert!(state4.resume.is_some());
    assert_ne!(state4.resume, state1.resume);
    assert_eq!(store.sessions("slowpoke").len(), 2);
}

#[test]
fn hive_import_is_idempotent_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let run = |args: &[&str]| {
        let out = hive(data).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let path = fixture("codex-rollout.jsonl");
    let path = path.to_str().unwrap();
    assert!(run(&["import", "codex", path, "--agent", "cx"]).contains("imported 4 records"));
    assert!(run(&["import", "codex", path, "--agent", "cx"]).contains("already imported"));
    assert_eq!(binary_store(data).sessions("cx").len(), 1);
    assert!(run(&["history", "show", "cx"]).contains("What was the codeword?"));
}

/// Issue 12 item 11: a failed append is shown in the pane, once, with its
/// reason. The failure here: the session file is a symlink to /dev/full,
/// which the writer refuses to open (issue 36: no-follow, regular files
/// only); before that refusal it was the full disk's ENOSPC.
#[tokio::test(start_paused = true)]
async fn a_failed_history_write_is_shown_in_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "full", ORDER_SCENARIO);
    let h = history::open_pane_in(&store, &agent, &opts());
    let path = store.session_path("full", &h.session);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let mut pane = Pane::start(&agent, h);
    let mut notices = Vec::new();
    for text in ["what is here?", "again"] {
        pane.submit(text);
        pane.until(|e| {
            if let PaneEvent::HistoryNotSaved(reason) = e {
                notices.push(format!("history not saved: {reason}"));
            }
            matches!(e, PaneEvent::Turn(t) if t.is_terminal())
        })
        .await;
    }
    pane.shutdown().await;
    let failures: Vec<&String> = notices
        .iter()
        .filter(|n| n.starts_with("history not saved: "))
        .collect();
    assert_eq!(failures.len(), 1, "{notices:#?}");
    assert!(failures[0].contains("a symlink"), "{}", failures[0]);
}

// ---- importers read like the live translators --------------------------------

/// Writes `lines` as a transcript and imports it.
fn import_lines(format: Format, lines: &[serde_json::Value]) -> Vec<Record> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, body).unwrap();
    let store = Store::at(dir.path().join("store"));
    let r = import::import(&store, format, &path, "a", false).expect("import");
    records(&r.path)
}

/// The tool result's output the translator emits for one line.
fn live_output(events: &[hive::provider::ProviderEvent]) -> (String, bool) {
    events
        .iter()
        .find_map(|e| match e {
            hive::provider::ProviderEvent::Stream(s) => match &s.payload {
                hive::event::Payload::ItemDone {
                    final_item:
                        hive::event::FinalItem::FunctionCallOutput {
                            output, is_error, ..
                        },
                    ..
                } => Some((output.clone(), *is_error)),
                _ => None,
            },
            _ => None,
        })
        .expect("a tool output")
}

#[test]
fn imported_claude_tool_results_and_usage_read_as_the_live_translator_reads_them() {
    use serde_json::json;
    let result = json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
        "content": [{"type": "text", "text": "see"}, {"type": "image", "source": {}}]});
    let line = |kind: &str, ts: &str, message: serde_json::Value| json!({"type": kind, "sessionId": "s-img", "timestamp": ts, "message": message});
    let recs = import_lines(
        Format::named("claude").unwrap(),
        &[
            line(
                "user",
                "2026-11-20T10:00:00Z",
                json!({"role": "user", "content": "Look."}),
            ),
            line(
                "assistant",
                "2026-11-20T10:00:01Z",
                json!({"id": "msg_1", "role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.png"}}],
                    "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 5}}),
            ),
            line(
                "user",
                "2026-11-20T10:00:02Z",
                json!({"role": "user", "content": [result]}),
            ),
        ],
    );
    assert_eq!(
        roles(&recs),
        [Role::User, Role::ToolResult, Role::Assistant]
    );
    // A non-text block shows as its type, as it does live.
    assert_eq!(recs[1].text(), "see\n[image]");
    assert_eq!(recs[1].is_error, Some(true));
    assert_eq!(recs[1].tool_name.as_deref(), Some("Read"));
    let usage = recs[2].meta.as_ref().unwrap().usage.as_ref().unwrap();
    assert_eq!((usage.cache_read, usage.total_tokens), (Some(5), 17));

    let mut tr = hive::provider::claude::translate::Translator::new(None);
    tr.begin_turn("t", vec!["u".into()]);
    tr.line(r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#);
    let live = tr.line(&json!({"type": "user", "message": {"content": [result]}}).to_string());
    assert_eq!(
        live_output(&live.events),
        (recs[1].text(), true),
        "import and live translation differ"
    );
}

#[test]
fn imported_pi_tool_results_read_as_the_live_translator_reads_them() {
    use serde_json::json;
    let content = json!([{"type": "text", "text": "line one\n"}, {"type": "text", "text": "line two"},
        {"type": "image", "data": ""}]);
    let recs = import_lines(
        Format::named("pi").unwrap(),
        &[
            json!({"type": "session", "id": "s-pi"}),
            json!({"type": "message", "timestamp": 1, "message": {"role": "user", "content": "Read it."}}),
            json!({"type": "message", "timestamp": 2, "message": {"role": "assistant", "content": [
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]}}),
            json!({"type": "message", "timestamp": 3, "message": {"role": "toolResult",
                "toolCallId": "c1", "toolName": "read", "content": content, "isError": false}}),
        ],
    );
    assert_eq!(
        roles(&recs),
        [Role::User, Role::ToolResult, Role::Assistant]
    );
    assert_eq!(recs[1].text(), "line one\nline two[image]");

    let mut tr = hive::provider::pi::PiTranslator::new("s", Some("m"));
    tr.begin_turn("t", "p1", "");
    let live = tr.push_line(
        &json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "read",
            "result": {"content": content}, "isError": false})
        .to_string(),
    );
    assert_eq!(live_output(&live), (recs[1].text(), false));
}

#[test]
fn fresh_starts_with_the_configs_model_and_effort_not_a_stale_choice() {
    // Issue 46 item 9: after `--fresh` the config's `model`/`effort` win;
    // the old session keeps its choice for `/resume`.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = script_agent(dir.path(), "pick", ORDER_SCENARIO);
    let chosen = hive::runner::Chosen {
        model: Some("stale-model".into()),
        effort: Some("high".into()),
        account: None,
    };
    PaneState {
        agent_id: "pick".into(),
        session: "old-session".into(),
        chosen: chosen.clone(),
        ..PaneState::default()
    }
    .save(&store.state_path("pick"))
    .unwrap();
    let fresh = OpenOptions {
        fresh: true,
        ..opts()
    };
    let h = history::open_pane_in(&store, &agent, &fresh);
    assert_ne!(h.session, "old-session");
    drop(h);
    let state = PaneState::load(&store.state_path("pick")).unwrap().unwrap();
    assert!(state.chosen.is_empty(), "{:?}", state.chosen);
    assert_eq!(state.past["old-session"].chosen, chosen);
    // The next plain start continues the fresh session, still without it.
    let h = history::open_pane_in(&store, &agent, &opts());
    drop(h);
    let state = PaneState::load(&store.state_path("pick")).unwrap().unwrap();
    assert!(state.chosen.is_empty(), "{:?}", state.chosen);
}
