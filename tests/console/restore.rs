//! A restart rebuilds the screen the user left (issue 13 item 6): turns of a
//! real capture are shown live in one console and recorded into the history
//! store at the same time; a second console restored from that history must
//! draw the very same buffer — items in the order they came, each turn's
//! footer (model, duration, tokens, cost), the pane's totals and the model
//! in its title.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

use crate::support;
use support::{Replay, timeline};

use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use hive::app::state::App;
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::event::{FinalItem, ItemType, Origin, Payload, StreamEvent};
use hive::history::{self, OpenOptions, Store};
use hive::provider::Capabilities;
use hive::provider::ProviderEvent;
use hive::runner::{PaneEvent, PaneUpdate};
use hive::ui::ViewState;
use hive::upsert::{Output, TurnEvent};

const WIDTH: u16 = 110;
const HEIGHT: u16 = 120;

fn fixture(provider: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(provider)
        .join(format!("{name}.timeline.jsonl"))
}

/// A console with one pane for `provider`, as the app loop builds it.
fn console(provider: &str) -> (App, ViewState) {
    let text = format!("[[agent]]\nid = \"a\"\nname = \"Agent\"\nprovider = \"{provider}\"\n");
    let config = Config::parse(&text, ConfigSource::Builtin).unwrap();
    let (mut app, warnings) = build_app(&config);
    assert!(warnings.is_empty(), "{warnings:?}");
    app.now = app.started;
    app.apply(PaneUpdate {
        pane: 0,
        event: PaneEvent::Attached {
            capabilities: Capabilities {
                interrupt: true,
                ..Capabilities::default()
            },
            terminal: None,
        },
    });
    (app, ViewState::default())
}

fn draw(app: &mut App, view: &mut ViewState) -> ratatui::buffer::Buffer {
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    term.draw(|f| frame(app, view, f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().buffer().clone()
}

/// The user's message of `turn`, as the runner echoes it.
fn user_message(r: &mut Replay, turn: &str, text: &str) {
    let item_id = format!("user_{turn}");
    r.feed(ProviderEvent::Stream(StreamEvent::new(
        turn,
        "s",
        Payload::ItemStart {
            item_id: item_id.clone(),
            item_type: ItemType::Message,
            initial_content: None,
            name: None,
            call_id: None,
        },
    )));
    r.feed(ProviderEvent::Stream(StreamEvent::new(
        turn,
        "s",
        Payload::ItemDone {
            item_id,
            final_item: FinalItem::Message {
                content: text.to_owned(),
                origin: Origin::User,
            },
        },
    )));
}

/// Replays a Claude capture: each user line written to stdin begins a turn
/// (its text echoed as the user's message), stdout goes through the translator.
fn claude(name: &str) -> Replay {
    use hive::provider::claude::translate::Translator;
    let mut tr = Translator::new(None);
    let mut r = Replay::default();
    let mut turns = 0;
    for (dir, line) in timeline(&fixture("claude", name)) {
        match dir.as_str() {
            "in" => {
                let msg: Value = serde_json::from_str(&line).unwrap();
                if msg["request"]["subtype"] == "interrupt" {
                    tr.request_cancel();
                }
                if msg["type"] == "user" {
                    let uuid = msg["uuid"].as_str().unwrap_or("u").to_owned();
                    if !tr.add_message(&uuid) {
                        turns += 1;
                        let turn = format!("turn_{turns}");
                        tr.begin_turn(&turn, vec![uuid]);
                        let text = msg["message"]["content"]
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| msg["message"]["content"][0]["text"].to_string());
                        user_message(&mut r, &turn, &text);
                    }
                }
            }
            "out" => r.feed_all(tr.line(&line).events),
            _ => {}
        }
    }
    r
}

/// Replays a pi RPC capture: each `prompt` written while no turn runs begins
/// one; `get_state` probes are answered the way pi orders them.
fn pi(name: &str) -> Replay {
    use hive::provider::pi::PiTranslator;
    let mut tr = PiTranslator::new("pending", None);
    let mut r = Replay::default();
    let mut turns = 0;
    let mut probe: Option<String> = None;
    let answer = |tr: &mut PiTranslator, probe: &mut Option<String>, r: &mut Replay| {
        if let Some(id) = probe.take() {
            let reply =
                json!({"type": "response", "command": "get_state", "success": true, "id": id});
            r.feed_all(tr.push_line(&reply.to_string()));
        }
    };
    for (dir, line) in timeline(&fixture("pi", name)) {
        match dir.as_str() {
            "in" => {
                answer(&mut tr, &mut probe, &mut r);
                let cmd: Value = serde_json::from_str(&line).unwrap_or_default();
                if cmd["type"] == "prompt" && !tr.has_turn() {
                    turns += 1;
                    let turn = format!("turn_{turns}");
                    user_message(&mut r, &turn, cmd["message"].as_str().unwrap_or_default());
                    tr.begin_turn(&turn, cmd["id"].as_str().unwrap_or("p"), &line);
                }
            }
            "out" => {
                let kind = serde_json::from_str::<Value>(&line).unwrap_or_default()["type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if !kind.starts_with("auto_") {
                    answer(&mut tr, &mut probe, &mut r);
                }
                r.feed_all(tr.push_line(&line));
                for out in tr.take_outbox() {
                    let v: Value = serde_json::from_str(&out).unwrap_or_default();
                    probe = v["id"].as_str().map(str::to_owned);
                }
            }
            _ => {}
        }
    }
    answer(&mut tr, &mut probe, &mut r);
    r
}

/// How long turn `n` (from 0) ran: distinct per turn, so a footer restored
/// from the wrong turn shows.
fn duration(n: usize) -> Duration {
    Duration::from_millis(2_300 + 1_100 * n as u64)
}

/// Shows the replay's outputs live in one console while the history
/// recorder records them, then restores a second console from the store;
/// returns both screens.
async fn live_and_restored(
    provider: &str,
    r: &Replay,
) -> (ratatui::buffer::Buffer, ratatui::buffer::Buffer) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = hive::config::AgentConfig::new("a", provider);
    let mut h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let mut recorder = h.recorder.take().expect("a recorder");

    let (mut live, mut live_view) = console(provider);
    let mut started = live.now;
    let mut turns = 0;
    for out in &r.outputs {
        let event = match out {
            Output::Upsert(u) => PaneEvent::Upsert(u.clone()),
            Output::Turn(t) => {
                match t {
                    TurnEvent::TurnStarted { .. } => started = live.now,
                    _ => {
                        tokio::time::advance(duration(turns)).await;
                        live.now = started + duration(turns);
                        turns += 1;
                    }
                }
                PaneEvent::Turn(t.clone())
            }
        };
        recorder.record(&event);
        live.apply(PaneUpdate { pane: 0, event });
    }
    assert!(turns >= 2, "the capture has two turns or more");
    drop(recorder);
    drop(h);

    let h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    assert!(h.warnings.is_empty(), "{:?}", h.warnings);
    let (mut restored, mut restored_view) = console(provider);
    restored.now = live.now;
    restored.restore(0, &mut hive::wire::snapshot::Restored::of(&h));
    (
        draw(&mut live, &mut live_view),
        draw(&mut restored, &mut restored_view),
    )
}

fn text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[tokio::test(start_paused = true)]
async fn claude_turns_restore_to_the_screen_they_had_live() {
    let mut r = claude("two_turns");
    let later = [
        ("turn_3", "tool_bash"),
        ("turn_4", "two_tools"),
        ("turn_5", "error_429_once"),
        ("turn_6", "interrupt_text"),
        ("turn_7", "error_400"),
    ];
    for (turn, name) in later {
        let more = claude(name);
        // Later captures as later turns of the same pane.
        for out in more.outputs {
            r.outputs.push(rename_turn(out, turn));
        }
    }
    let (live, restored) = live_and_restored("claude", &r).await;
    assert_eq!(text(&restored), text(&live));
    assert_eq!(restored, live, "same cells, same styles");
    insta::assert_snapshot!("restore_claude", text(&restored));
}

#[tokio::test(start_paused = true)]
async fn pi_turns_restore_to_the_screen_they_had_live() {
    let r = pi("rpc_prompt");
    let (live, restored) = live_and_restored("pi", &r).await;
    assert_eq!(text(&restored), text(&live));
    assert_eq!(restored, live, "same cells, same styles");
    insta::assert_snapshot!("restore_pi", text(&restored));
}

/// `out` as part of turn `turn` (captures each number their turns from 1).
fn rename_turn(out: Output, turn: &str) -> Output {
    match out {
        Output::Upsert(mut u) => {
            u.turn_id = turn.to_owned();
            u.item_id = format!("{turn}/{}", u.item_id);
            Output::Upsert(u)
        }
        Output::Turn(t) => {
            let mut v = serde_json::to_value(&t).unwrap();
            v["turn_id"] = turn.into();
            Output::Turn(serde_json::from_value(v).unwrap())
        }
    }
}

/// A live tail shows a text item before its first upsert; a tool call that
/// starts meanwhile comes after it on screen, and after a restart too.
#[tokio::test(start_paused = true)]
async fn an_item_first_shown_by_its_live_tail_keeps_its_place() {
    use hive::upsert::{UpsertKind, UpsertStatus};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("data"));
    let agent = hive::config::AgentConfig::new("a", "claude");
    let mut h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let mut recorder = h.recorder.take().expect("a recorder");
    let up = |id: &str, status, kind| support::console::upsert("t1", id, status, kind);
    let text = |t: &str| UpsertKind::Message {
        content: t.into(),
        origin: Origin::Agent,
    };
    let tool = UpsertKind::ToolCall {
        tool_name: "Bash".into(),
        arguments: json!({"command": "ls"}),
        call_id: "c1".into(),
        output: Some("a.txt".into()),
        output_is_error: Some(false),
        display: None,
    };
    recorder.shown(&up("m1", UpsertStatus::Update, text("Let me")));
    for event in [
        PaneEvent::Upsert(up("tool", UpsertStatus::Complete, tool)),
        PaneEvent::Upsert(up("m1", UpsertStatus::Complete, text("Let me look."))),
        support::console::completed("t1"),
    ] {
        recorder.record(&event);
    }
    drop(recorder);
    let h = history::open_pane_in(&store, &agent, &OpenOptions::default());
    let shown: Vec<String> = h
        .items
        .iter()
        .map(|u| match &u.kind {
            UpsertKind::Message { content, .. } => content.to_string(),
            UpsertKind::ToolCall { tool_name, .. } => tool_name.clone(),
            UpsertKind::Thinking { .. } => "thinking".into(),
        })
        .collect();
    assert_eq!(shown, ["Let me look.", "Bash"]);
}
