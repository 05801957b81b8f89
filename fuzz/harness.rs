//! What each fuzz target does with its input, shared by the cargo-fuzz
//! targets (fuzz_targets/*.rs) and by tests/services/fuzz_regressions.rs, which runs
//! every seed and every kept crash input through the same code in the normal
//! test suite. Nothing here may panic on any input.
#![allow(dead_code)]

use hive::config::{Config, ConfigSource};
use hive::control::protocol::{EventLine, PaneInfo, Reply, Request, WaitResult};
use hive::event::StreamEvent;
use hive::history::{assemble, store};
use hive::lines::{CappedLines, Line, id_in};
use hive::provider::acp::engine::{Engine, EngineConfig};
use hive::provider::claude::translate::Translator;
use hive::provider::codex::app_server::AppTurn;
use hive::provider::codex::exec::ExecTurn;
use hive::provider::gemini::translate::GeminiTurn;
use hive::provider::pi::translate::PiTranslator;
use hive::provider::pty::scan::Scanner;
use hive::wire::delta::{DeltaDecoder, DeltaEncoder, WireEvent};
use hive::wire::frame::{self, FrameReader};
use hive::wire::{ClientMsg, ServerMsg};
use serde_json::Value;

/// ACP: every line through the engine (JSON-RPC framing, session updates,
/// agent requests including fs/*, which become jobs and are not run here).
pub(crate) fn acp_engine(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut engine = Engine::new(EngineConfig::new("fuzz", std::env::temp_dir()));
    engine.start();
    let now = tokio::time::Instant::now();
    for line in text.split('\n') {
        engine.on_line(line, now);
        engine.on_timer(now);
        let _ = engine.drain();
    }
}

/// Claude Code stream-json: every line through the translator, in a turn.
pub(crate) fn claude_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut t = Translator::new(None);
    t.begin_turn("turn-1", vec!["u-1".into()]);
    for line in text.split('\n') {
        let _ = t.line(line);
    }
    let _ = t.force_cancel();
}

/// `codex exec --json`: every line through the turn translator.
pub(crate) fn codex_exec_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut t = ExecTurn::new();
    for line in text.split('\n') {
        let _ = t.line(line);
    }
}

/// `codex app-server`: every JSON line that parses is fed as a notification
/// (`method` + `params`), as the provider does.
pub(crate) fn codex_app_server(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut t = AppTurn::new();
    for line in text.split('\n') {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let method = v.get("method").and_then(Value::as_str).unwrap_or("");
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        let _ = t.notification(method, &params);
    }
}

/// Gemini CLI stream-json: every line through one turn's translator.
pub(crate) fn gemini_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut t = GeminiTurn::new("turn-1", "session-1", None);
    for line in text.split('\n') {
        let _ = t.push_line(line);
    }
    let _ = t.exited("1", "fuzz");
}

/// pi RPC mode: every line through the translator, in a turn.
pub(crate) fn pi_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut t = PiTranslator::new("session-1", None);
    t.begin_turn("turn-1", "p-1", "{}");
    for line in text.split('\n') {
        let _ = t.push_line(line);
        let _ = t.take_outbox();
    }
    let _ = t.end_error("fuzz", "end");
}

/// The canonical event deserializer (`StreamEvent::from_json`), which also
/// builds field-level error messages.
pub(crate) fn stream_event(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(ev) = StreamEvent::from_json(text)
    {
        let again = serde_json::to_string(&ev).expect("an event serializes");
        StreamEvent::from_json(&again).expect("a serialized event parses back");
    }
}

/// The history loader: a session file read whole and read backwards in
/// windows (torn lines, garbage, huge records), then assembled into items.
pub(crate) fn history_load(data: &[u8]) {
    let path = std::env::temp_dir().join(format!("hive-fuzz-{}.jsonl", std::process::id()));
    std::fs::write(&path, data).expect("temp file");
    if let Ok(all) = store::read_all(&path) {
        let _ = assemble::items_from(&all.records);
    }
    let mut end = u64::MAX;
    for _ in 0..8 {
        match store::read_window(&path, end, 2) {
            Ok(w) if w.start > 0 && w.start < end => end = w.start,
            _ => break,
        }
    }
}

/// The config loader: TOML text to a validated `Config` (positions in errors).
pub(crate) fn config_parse(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let source = ConfigSource::File("/fuzz/hive.toml".into());
        if let Err(e) = Config::parse(text, source) {
            let _ = e.to_string();
        }
    }
}

/// The PTY byte scanner: arbitrary child output, split at every chunk
/// boundary the input chooses, must classify the same as in one piece.
pub(crate) fn pty_scan(data: &[u8]) {
    let Some((&split, bytes)) = data.split_first() else {
        return;
    };
    let mut whole = Vec::new();
    Scanner::default().scan(bytes, &mut whole);
    let at = (split as usize).min(bytes.len());
    let mut s = Scanner::default();
    let mut parts = Vec::new();
    s.scan(&bytes[..at], &mut parts);
    let mut tail = Vec::new();
    s.scan(&bytes[at..], &mut tail);
    parts.extend(tail.into_iter().map(|(off, f)| (off + at, f)));
    assert_eq!(whole, parts);
}

/// The control socket: every line read as the server reads it (capped),
/// parsed as a request, and as the replies and events `hive ctl` reads.
pub(crate) fn control_request(data: &[u8]) {
    for line in capped_lines(data, 4096) {
        let Line::Text(line) = line else { continue };
        let _ = serde_json::from_str::<Request>(&line);
        if let Ok(reply) = serde_json::from_str::<Reply>(&line)
            && let Some(v) = reply.result
        {
            let _ = serde_json::from_value::<PaneInfo>(v.clone());
            let _ = serde_json::from_value::<WaitResult>(v);
        }
        let _ = serde_json::from_str::<EventLine>(&line);
    }
}

/// `hive mcp`: every line read as its stdin pump reads it (capped, an
/// over-long one answered with the id found in its head), parsed as rmcp
/// parses a client's message.
pub(crate) fn mcp_request(data: &[u8]) {
    for line in capped_lines(data, 4096) {
        match line {
            Line::Text(line) => {
                let _ = serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(&line);
            }
            Line::TooLong { head } => {
                let _ = id_in(&head);
            }
        }
    }
}

/// The lines of `data` through [`CappedLines`] with a cap of `max` bytes.
/// A coding-tool call of the `openai` agent: the first line names the
/// tool, the rest is its arguments as a model wrote them.
pub(crate) fn openai_tool_args(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (name, args) = text.split_once('\n').unwrap_or((&text, ""));
    let _ = hive::provider::openai::check_tool_call(name.trim(), args);
}

/// The console protocol's frames as the server and a client read them:
/// the bytes split by the frame reader, each payload decoded as a hello
/// and as each side's messages; a message that decodes re-encodes.
pub(crate) fn wire_frames(data: &[u8]) {
    futures::executor::block_on(async {
        let mut reader = FrameReader::new(data);
        while let Ok(Some(payload)) = reader.next().await {
            let _ = frame::decode_hello(&payload);
            if let Ok(msg) = frame::decode::<ClientMsg>(&payload) {
                let _ = frame::encode(&msg);
            }
            if let Ok(msg) = frame::decode::<ServerMsg>(&payload) {
                let _ = frame::encode(&msg);
            }
        }
    });
}

/// Growing text across the socket: each JSON line a `WireEvent` for a
/// client's decoder (a delta that does not fit is an error, never a
/// panic); each that decodes goes through a server's encoder and a fresh
/// decoder, which must agree.
pub(crate) fn wire_delta(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut client = DeltaDecoder::new();
    let mut server = DeltaEncoder::new();
    let mut peer = DeltaDecoder::new();
    for (n, line) in text.split('\n').enumerate() {
        let Ok(wire) = serde_json::from_str::<WireEvent>(line) else {
            continue;
        };
        let pane = n % 3;
        let Ok(event) = client.decode(pane, wire) else {
            client.reset();
            continue;
        };
        let sent = server.encode(pane, &event);
        let got = peer.decode(pane, sent);
        assert!(got.is_ok(), "the encoder's own delta did not fit: {got:?}");
    }
}

/// vt100 at the tiny sizes a collapsed pane asks for (1×1 to 3×3), through
/// hive's own size clamp (`pty::fit`): the first byte is the size, each
/// 0xFF byte then starts a resize to the size in the byte after it; the
/// screen is read as the runner reads it. vt100 0.16 panics at one row.
pub(crate) fn vt100_tiny(data: &[u8]) {
    use hive::provider::pty::fit;
    let size = |b: u8| fit(u16::from(b & 3), u16::from((b >> 2) & 3));
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let (cols, rows) = size(first);
    let parser = tui_term::vt100::Parser::new(rows, cols, usize::from(first >> 4));
    let screen = hive::provider::TerminalScreen(std::sync::Arc::new(std::sync::Mutex::new(parser)));
    for (i, piece) in rest.split(|&b| b == 0xff).enumerate() {
        let mut p = screen.0.lock().unwrap_or_else(|e| e.into_inner());
        let piece = match piece.split_first() {
            Some((&b, more)) if i > 0 => {
                let (cols, rows) = size(b);
                p.screen_mut().set_size(rows, cols);
                more
            }
            _ => piece,
        };
        p.process(piece);
        drop(p);
        let _ = hive::runner::screen::capture(&screen, usize::from(first >> 4));
    }
}

/// [`vt100_tiny`]'s input through hive's own feeder (`pty::pump::Feeder`,
/// which contains an emulator panic to its pane): why the emulator failed,
/// if it did. The screen is read after every piece either way.
pub(crate) fn vt100_tiny_contained(data: &[u8]) -> Option<String> {
    use hive::provider::pty::fit;
    use hive::provider::pty::pump::Feeder;
    let size = |b: u8| fit(u16::from(b & 3), u16::from((b >> 2) & 3));
    let (&first, rest) = data.split_first()?;
    let (cols, rows) = size(first);
    let parser = tui_term::vt100::Parser::new(rows, cols, usize::from(first >> 4));
    let screen = hive::provider::TerminalScreen(std::sync::Arc::new(std::sync::Mutex::new(parser)));
    let mut feeder = Feeder::new(screen.clone());
    for (i, piece) in rest.split(|&b| b == 0xff).enumerate() {
        let piece = match piece.split_first() {
            Some((&b, more)) if i > 0 => {
                let (cols, rows) = size(b);
                let mut p = screen.0.lock().unwrap_or_else(|e| e.into_inner());
                p.screen_mut().set_size(rows, cols);
                more
            }
            _ => piece,
        };
        let fed = feeder.feed(piece);
        let _ = hive::runner::screen::capture(&screen, 0);
        if fed.failed.is_some() {
            return fed.failed;
        }
    }
    None
}

/// hive's own state files as the server reads them at start: the bytes as
/// `layouts/<server>.json` (laid over a config's agents) and as
/// `state/<agent>.json`, through the same size-capped, no-follow reader.
pub(crate) fn state_files(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("hive-fuzz-state-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("state.json");
    std::fs::write(&path, data).expect("temp file");
    if let Ok(Some(mut state)) = hive::history::state::PaneState::load(&path) {
        let _ = state.save(&path);
    }
    let (layout, _) = hive::server::layout::SavedLayout::load(&path);
    let agents = [
        hive::config::AgentConfig::new("a", "claude"),
        hive::config::AgentConfig::new("b", "pty"),
    ];
    let _ = layout.arrange(&agents);
}

/// `hive init`'s rendering of what it detected (issue 53 item 2: a model
/// server's id once wrote hive.toml): the bytes cut at 0xFF into a model
/// id, a server label, a CLI's version, path and auth words. Whatever they
/// hold, the file is TOML with exactly the chosen agents, each value as it
/// was detected, and no raw control character but a tab reaches it.
pub(crate) fn init_render(data: &[u8]) {
    use hive::init::{Choice, Cli, Plan, detect::OpenAi};
    let mut parts = data
        .split(|&b| b == 0xFF)
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let mut next = || parts.next().unwrap_or_default();
    let (model, label, version, path, auth) = (next(), next(), next(), next(), next());
    let cli = Cli {
        provider: "claude",
        label: "Claude Code",
        path: Some(path),
        install: None,
        version: Some(version),
        logged_in: true,
        auth,
        can_start: true,
    };
    let plan = Plan {
        agents: vec![
            Choice::Cli(cli),
            Choice::OpenAi(OpenAi {
                id: "local".into(),
                label,
                base_url: "http://127.0.0.1:11434/v1".into(),
                model: model.clone(),
                api_key_env: None,
            }),
        ],
        worktrees: data.first().is_some_and(|b| b & 1 == 1),
        shell: true,
    };
    let text = hive::init::render(&plan);
    // A tab is TOML's own whitespace, legal raw in a string; nothing else
    // that a terminal would act on may be written.
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "a raw control character in hive.toml"
    );
    let table: toml::Table = toml::from_str(&text).expect("hive init wrote TOML");
    let agents = table["agent"].as_array().expect("agents");
    let ids: Vec<&str> = agents.iter().filter_map(|a| a["id"].as_str()).collect();
    assert_eq!(ids, ["claude", "local", "shell"], "{text}");
    assert_eq!(agents[1]["model"].as_str(), Some(model.as_str()), "{text}");
}

fn capped_lines(data: &[u8], max: usize) -> Vec<Line> {
    let mut lines = CappedLines::new(data, max);
    let mut out = Vec::new();
    futures::executor::block_on(async {
        while let Ok(Some(l)) = lines.next().await {
            out.push(l);
        }
    });
    out
}
