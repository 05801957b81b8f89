//! PTY panes (issue #8): the emulator rendered from byte fixtures (insta
//! snapshots), the key-encoding table, resizing, and real children in a
//! pseudo-terminal driven through the `pty` provider.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use hive::config::AgentConfig;
use hive::provider::{
    ProviderCommand, ProviderEvent, ProviderHandle, ProviderSpec, Registry, TerminalScreen,
};
use hive::runner::screen::{ScreenUpdate, capture};
use hive::ui::terminal::{self, KeyModes};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tui_term::vt100;

// ---------------------------------------------------------------- emulator

fn screen_of(rows: u16, cols: u16, chunks: &[&[u8]]) -> TerminalScreen {
    let mut p = vt100::Parser::new(rows, cols, 100);
    for c in chunks {
        p.process(c);
    }
    TerminalScreen(Arc::new(Mutex::new(p)))
}

/// The screen as the runner sends it to the app (the live view).
fn view(screen: &TerminalScreen) -> ScreenUpdate {
    capture(screen, 0)
}

/// Renders into a buffer one cell larger on every side, pre-filled with `#`,
/// so a snapshot also shows that nothing is drawn outside the area.
fn draw(screen: &TerminalScreen, scrollback: usize, focused: bool, w: u16, h: u16) -> Buffer {
    let mut buf = Buffer::filled(
        Rect::new(0, 0, w + 2, h + 2),
        ratatui::buffer::Cell::new("#"),
    );
    let shown = capture(screen, scrollback);
    terminal::render(&shown, focused, Rect::new(1, 1, w, h), &mut buf);
    buf
}

fn snap(name: &str, buf: &Buffer) {
    insta::assert_snapshot!(name, format!("{buf:?}"));
}

#[test]
fn colours_and_attributes() {
    let s = screen_of(4, 24, &[include_bytes!("../fixtures/pty/colours.bin")]);
    snap("colours", &draw(&s, 0, false, 24, 4));
}

#[test]
fn cursor_moves_and_the_focused_cursor() {
    let s = screen_of(6, 12, &[include_bytes!("../fixtures/pty/cursor.bin")]);
    snap("cursor_focused", &draw(&s, 0, true, 12, 6));
    // Unfocused: same text, no inverted cursor cell.
    let unfocused = draw(&s, 0, false, 12, 6);
    let focused = draw(&s, 0, true, 12, 6);
    assert_ne!(unfocused, focused);
    assert_eq!(
        terminal::cursor_position(&view(&s), 0, Rect::new(1, 1, 12, 6)),
        Some(ratatui::layout::Position::new(1 + 7, 1 + 4))
    );
}

#[test]
fn alternate_screen_in_and_out() {
    let enter = include_bytes!("../fixtures/pty/alt_enter.bin");
    let s = screen_of(5, 24, &[enter]);
    assert!(terminal::alternate_screen(&view(&s)));
    snap("alt_inside", &draw(&s, 0, true, 24, 5));
    let s = screen_of(
        5,
        24,
        &[enter, include_bytes!("../fixtures/pty/alt_leave.bin")],
    );
    assert!(!terminal::alternate_screen(&view(&s)));
    snap("alt_after", &draw(&s, 0, true, 24, 5));
}

#[test]
fn long_lines_wrap() {
    let s = screen_of(5, 20, &[include_bytes!("../fixtures/pty/wrap.bin")]);
    snap("wrap", &draw(&s, 0, false, 20, 5));
}

#[test]
fn wide_characters_take_two_cells() {
    let s = screen_of(5, 15, &[include_bytes!("../fixtures/pty/wide.bin")]);
    snap("wide", &draw(&s, 0, false, 15, 5));
    // An area narrower than the screen cuts a wide char rather than spill.
    snap("wide_clipped", &draw(&s, 0, false, 3, 2));
}

#[test]
fn scrollback_shows_history_and_is_restored() {
    let mut bytes = Vec::new();
    for i in 0..30 {
        bytes.extend_from_slice(format!("line {i}\r\n").as_bytes());
    }
    let s = screen_of(5, 10, &[&bytes]);
    // 31 lines written (the last one empty) on a 5-row screen.
    assert_eq!(terminal::scrollback_len(&view(&s)), 26);
    snap("scrolled_back_3", &draw(&s, 3, true, 10, 5));
    // More than there is: clamps to the oldest line.
    let top = draw(&s, 1000, false, 10, 5);
    assert_eq!(top[(1, 1)].symbol(), "l");
    assert!(format!("{top:?}").contains("line 0"));
    // Rendering never leaves the shared screen scrolled.
    assert_eq!(s.0.lock().unwrap().screen().scrollback(), 0);
    assert_eq!(
        terminal::cursor_position(&view(&s), 3, Rect::new(0, 0, 10, 5)),
        None
    );
}

#[test]
fn resize_reflows_the_emulator() {
    let s = screen_of(4, 12, &[b"abcdefghij\r\nsecond line"]);
    s.0.lock().unwrap().screen_mut().set_size(3, 6);
    assert_eq!(terminal::size(&view(&s)), (6, 3));
    snap("resized_smaller", &draw(&s, 0, false, 6, 3));
    s.0.lock().unwrap().screen_mut().set_size(5, 16);
    s.0.lock().unwrap().process(b"\r\nafter grow");
    snap("resized_larger", &draw(&s, 0, false, 16, 5));
}

// ------------------------------------------------------------ key encoding

fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

#[test]
fn key_encoding_table() {
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let alt = KeyModifiers::ALT;
    let shift = KeyModifiers::SHIFT;
    let normal = KeyModes::default();
    let app = KeyModes {
        application_cursor: true,
    };
    let table: Vec<(KeyEvent, KeyModes, &[u8])> = vec![
        (key(KeyCode::Char('a'), none), normal, b"a"),
        (key(KeyCode::Char('A'), shift), normal, b"A"),
        (key(KeyCode::Char('é'), none), normal, "é".as_bytes()),
        (key(KeyCode::Char('中'), none), normal, "中".as_bytes()),
        (key(KeyCode::Enter, none), normal, b"\r"),
        (key(KeyCode::Backspace, none), normal, b"\x7f"),
        (key(KeyCode::Backspace, ctrl), normal, b"\x08"),
        (key(KeyCode::Tab, none), normal, b"\t"),
        (key(KeyCode::BackTab, shift), normal, b"\x1b[Z"),
        (key(KeyCode::Esc, none), normal, b"\x1b"),
        (key(KeyCode::Up, none), normal, b"\x1b[A"),
        (key(KeyCode::Down, none), normal, b"\x1b[B"),
        (key(KeyCode::Right, none), normal, b"\x1b[C"),
        (key(KeyCode::Left, none), normal, b"\x1b[D"),
        (key(KeyCode::Up, none), app, b"\x1bOA"),
        (key(KeyCode::Left, none), app, b"\x1bOD"),
        (key(KeyCode::Home, none), normal, b"\x1b[H"),
        (key(KeyCode::End, none), app, b"\x1bOF"),
        (key(KeyCode::Up, ctrl), normal, b"\x1b[1;5A"),
        (key(KeyCode::Right, ctrl), app, b"\x1b[1;5C"),
        (key(KeyCode::Left, shift), normal, b"\x1b[1;2D"),
        (key(KeyCode::Down, alt), normal, b"\x1b[1;3B"),
        (key(KeyCode::Home, ctrl | shift), normal, b"\x1b[1;6H"),
        (key(KeyCode::Insert, none), normal, b"\x1b[2~"),
        (key(KeyCode::Delete, none), normal, b"\x1b[3~"),
        (key(KeyCode::Delete, ctrl), normal, b"\x1b[3;5~"),
        (key(KeyCode::PageUp, none), normal, b"\x1b[5~"),
        (key(KeyCode::PageDown, shift), normal, b"\x1b[6;2~"),
        (key(KeyCode::F(1), none), normal, b"\x1bOP"),
        (key(KeyCode::F(4), none), normal, b"\x1bOS"),
        (key(KeyCode::F(2), shift), normal, b"\x1b[1;2Q"),
        (key(KeyCode::F(5), none), normal, b"\x1b[15~"),
        (key(KeyCode::F(6), none), normal, b"\x1b[17~"),
        (key(KeyCode::F(10), none), normal, b"\x1b[21~"),
        (key(KeyCode::F(11), none), normal, b"\x1b[23~"),
        (key(KeyCode::F(12), ctrl), normal, b"\x1b[24;5~"),
        (key(KeyCode::Char('c'), ctrl), normal, b"\x03"),
        (key(KeyCode::Char('a'), ctrl), normal, b"\x01"),
        (key(KeyCode::Char('z'), ctrl), normal, b"\x1a"),
        (key(KeyCode::Char('D'), ctrl | shift), normal, b"\x04"),
        (key(KeyCode::Char(' '), ctrl), normal, b"\x00"),
        (key(KeyCode::Char('['), ctrl), normal, b"\x1b"),
        (key(KeyCode::Char('\\'), ctrl), normal, b"\x1c"),
        (key(KeyCode::Char(']'), ctrl), normal, b"\x1d"),
        (key(KeyCode::Char('^'), ctrl), normal, b"\x1e"),
        (key(KeyCode::Char('_'), ctrl), normal, b"\x1f"),
        (key(KeyCode::Char('x'), alt), normal, b"\x1bx"),
        (key(KeyCode::Char('x'), alt | ctrl), normal, b"\x1b\x18"),
        (key(KeyCode::Enter, alt), normal, b"\x1b\r"),
        (key(KeyCode::Backspace, alt), normal, b"\x1b\x7f"),
    ];
    for (k, modes, want) in table {
        assert_eq!(
            terminal::encode_key_with(&k, modes).as_deref(),
            Some(want),
            "{k:?} in {modes:?}"
        );
    }
    // No encoding: key releases, keys a terminal does not send.
    let mut release = key(KeyCode::Char('a'), none);
    release.kind = KeyEventKind::Release;
    assert_eq!(terminal::encode_key_with(&release, normal), None);
    assert_eq!(
        terminal::encode_key_with(&key(KeyCode::CapsLock, none), normal),
        None
    );
}

#[test]
fn key_encoding_follows_the_childs_cursor_mode() {
    let s = screen_of(4, 10, &[b"\x1b[?1h"]);
    let up = key(KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(
        terminal::encode_key(&up, &view(&s)).as_deref(),
        Some(&b"\x1bOA"[..])
    );
    s.0.lock().unwrap().process(b"\x1b[?1l");
    assert_eq!(
        terminal::encode_key(&up, &view(&s)).as_deref(),
        Some(&b"\x1b[A"[..])
    );
}

#[test]
fn paste_is_bracketed_only_when_asked() {
    let s = screen_of(4, 10, &[]);
    assert_eq!(terminal::encode_paste("a\nb", &view(&s)), b"a\rb".to_vec());
    s.0.lock().unwrap().process(b"\x1b[?2004h");
    assert_eq!(
        terminal::encode_paste("ls\r\nx\x1b[201~rm", &view(&s)),
        b"\x1b[200~ls\rxrm\x1b[201~".to_vec()
    );
}

#[test]
fn mouse_goes_to_the_child_only_when_it_asked() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    };
    let s = screen_of(4, 10, &[]);
    assert!(!terminal::wants_mouse(&view(&s)));
    assert_eq!(terminal::encode_mouse(&wheel, 2, 3, &view(&s)), None);
    s.0.lock().unwrap().process(b"\x1b[?1000h\x1b[?1006h");
    assert!(terminal::wants_mouse(&view(&s)));
    assert_eq!(
        terminal::encode_mouse(&wheel, 2, 3, &view(&s)),
        Some(b"\x1b[<64;3;4M".to_vec())
    );
    s.0.lock().unwrap().process(b"\x1b[?1006l");
    assert_eq!(
        terminal::encode_mouse(&wheel, 2, 3, &view(&s)),
        Some(vec![0x1b, b'[', b'M', 64 + 32, 3 + 32, 4 + 32])
    );
}

// ------------------------------------------------------------- real PTYs

// A hang guard, not a speed target: generous for a loaded machine.
const PATIENCE: Duration = Duration::from_secs(30);

struct Pane {
    handle: Option<ProviderHandle>,
    screen: TerminalScreen,
    events: hive::provider::EventReceiver,
}

fn agent(command: &[&str]) -> AgentConfig {
    let mut a = AgentConfig::new("term", "pty");
    a.command = command.iter().map(|s| s.to_string()).collect();
    a.env = BTreeMap::from([
        ("PS1".to_string(), "$ ".to_string()),
        ("ENV".to_string(), "/dev/null".to_string()),
    ]);
    a
}

fn start(agent: AgentConfig) -> Pane {
    let factory = Registry::builtin().get("pty").expect("pty is registered");
    assert_eq!(factory.capabilities(&agent), Default::default());
    let (tx, rx) = hive::provider::channel::channel();
    let handle = factory
        .spawn(
            ProviderSpec {
                agent,
                resume: None,
            },
            tx,
        )
        .expect("spawn");
    let screen = handle
        .terminal
        .clone()
        .expect("a pty pane exposes its screen");
    Pane {
        handle: Some(handle),
        screen,
        events: rx,
    }
}

impl Pane {
    fn send(&self, cmd: ProviderCommand) {
        assert!(self.handle.as_ref().expect("running").send(cmd));
    }

    fn type_line(&self, line: &str) {
        self.send(ProviderCommand::Input(format!("{line}\r").into_bytes()));
    }

    fn contents(&self) -> String {
        self.screen.0.lock().unwrap().screen().contents()
    }

    /// Polls the screen until `pred` holds; fails with the screen otherwise.
    async fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let text = self.contents();
            if pred(&text) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "waiting for {what}; screen:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Collects events until `Exited`.
    async fn wait_exit(&mut self) -> (Option<i32>, String, Vec<ProviderEvent>) {
        let mut seen = Vec::new();
        loop {
            let ev = tokio::time::timeout(PATIENCE, self.events.recv())
                .await
                .expect("child exits in time")
                .expect("an Exited event before the channel closes");
            if let ProviderEvent::Exited { code, message } = ev {
                return (code, message, seen);
            }
            seen.push(ev);
        }
    }
}

fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l.trim_end() == line)
}

#[tokio::test]
async fn shell_echo_hi() {
    let mut pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.type_line("echo hi");
    let text = pane.wait_screen("hi", |t| has_line(t, "hi")).await;
    assert!(text.contains("$ echo hi"), "{text}");
    // The screen change was announced.
    let ev = tokio::time::timeout(PATIENCE, pane.events.recv()).await;
    assert!(matches!(ev, Ok(Some(ProviderEvent::TerminalUpdated))));
    pane.type_line("exit 0");
    let (code, message, _) = pane.wait_exit().await;
    assert_eq!(code, Some(0));
    assert_eq!(message, "exited with status 0");
}

#[tokio::test]
async fn child_exit_reports_its_code_and_last_output() {
    let mut pane = start(agent(&["sh", "-c", "echo bye; exit 3"]));
    let (code, message, events) = pane.wait_exit().await;
    assert_eq!(code, Some(3));
    assert_eq!(message, "exited with status 3");
    assert!(has_line(&pane.contents(), "bye"), "{}", pane.contents());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ProviderEvent::TerminalUpdated))
    );
}

#[tokio::test]
async fn alternate_screen_round_trip_through_a_real_child() {
    let pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.type_line("echo before");
    pane.wait_screen("before", |t| has_line(t, "before")).await;
    pane.type_line(r"printf '\033[?1049h\033[H\033[2JALT-SCREEN'; read x; printf '\033[?1049l'");
    pane.wait_screen("alternate screen", |t| t.starts_with("ALT-SCREEN"))
        .await;
    assert!(terminal::alternate_screen(&view(&pane.screen)));
    assert_eq!(terminal::scrollback_len(&view(&pane.screen)), 0);
    pane.type_line("");
    let text = pane
        .wait_screen("main screen", |t| {
            !t.lines().any(|l| l.starts_with("ALT-SCREEN")) && has_line(t, "before")
        })
        .await;
    assert!(!terminal::alternate_screen(&view(&pane.screen)), "{text}");
}

#[tokio::test]
async fn resize_reaches_the_child() {
    let pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.type_line("stty size");
    pane.wait_screen("initial size", |t| has_line(t, "24 80"))
        .await;
    pane.send(ProviderCommand::Resize {
        cols: 100,
        rows: 30,
    });
    pane.type_line("stty size");
    pane.wait_screen("new size", |t| has_line(t, "30 100"))
        .await;
    assert_eq!(terminal::size(&view(&pane.screen)), (100, 30));
    // A zero-sized pane (collapsed layout) must not break the emulator: it
    // gets the smallest size the emulator survives.
    pane.send(ProviderCommand::Resize { cols: 0, rows: 0 });
    pane.type_line("stty size");
    wait_size(&pane, (2, 2)).await;
    pane.send(ProviderCommand::Resize { cols: 40, rows: 5 });
    pane.type_line("stty size");
    pane.wait_screen("40x5", |t| has_line(t, "5 40")).await;
}

/// Polls until the emulator has `size` (cols, rows).
async fn wait_size(pane: &Pane, size: (u16, u16)) {
    let deadline = Instant::now() + PATIENCE;
    while terminal::size(&view(&pane.screen)) != size {
        assert!(
            Instant::now() < deadline,
            "size {:?}, not {size:?}",
            terminal::size(&view(&pane.screen))
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Issue 53 item 5: a pane one row tall panicked the server's pty reader
/// (vt100 0.16 `col_wrap`) at the first wrapped line, and the panic ended
/// every agent. The pane gets two rows; the child sees them and runs on.
#[tokio::test]
async fn a_one_row_pane_survives_wrapped_lines() {
    let pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.send(ProviderCommand::Resize { cols: 10, rows: 1 });
    wait_size(&pane, (10, 2)).await;
    // The echo of this line wraps, then its output does.
    pane.type_line("printf '%s\\n' aaaaaaaaaaaaaaaaaaaaaaaaa; stty size");
    pane.wait_screen("the child's size", |t| has_line(t, "2 10"))
        .await;
}

/// Issue 53 item 6: `Resize` had no upper bound (3000 × 3000 took the
/// server to 868 MB); the emulator and the child get the cap.
#[tokio::test]
async fn a_huge_resize_is_capped() {
    let pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.send(ProviderCommand::Resize {
        cols: 3000,
        rows: 3000,
    });
    let cap = (hive::provider::pty::MAX_COLS, hive::provider::pty::MAX_ROWS);
    wait_size(&pane, cap).await;
    pane.type_line("stty size");
    pane.wait_screen("the capped size", |t| {
        has_line(t, &format!("{} {}", cap.1, cap.0))
    })
    .await;
}

#[tokio::test]
async fn cursor_position_query_is_answered() {
    // A raw-mode program that asks where the cursor is and prints the answer.
    let script = r#"
import os, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"abc\x1b[6n")
r = b""
while not r.endswith(b"R"):
    r += os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, old)
print("\r\nREPLY=" + r[1:].decode())
"#;
    let mut pane = start(agent(&["python3", "-c", script]));
    let (code, _, _) = pane.wait_exit().await;
    assert_eq!(code, Some(0));
    assert!(
        has_line(&pane.contents(), "REPLY=[1;4R"),
        "{}",
        pane.contents()
    );
}

#[tokio::test]
async fn bell_is_reported() {
    let mut pane = start(agent(&["sh", "-c", r"printf 'ding\007'; sleep 0.2"]));
    let (_, _, events) = pane.wait_exit().await;
    assert!(
        events.iter().any(|e| matches!(e, ProviderEvent::Bell)),
        "{events:?}"
    );
}

#[tokio::test]
async fn updates_are_coalesced_to_frames() {
    let mut pane = start(agent(&[
        "sh",
        "-c",
        "i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done",
    ]));
    let started = Instant::now();
    let (code, _, events) = pane.wait_exit().await;
    let elapsed = started.elapsed();
    assert_eq!(code, Some(0));
    let updates = events
        .iter()
        .filter(|e| matches!(e, ProviderEvent::TerminalUpdated))
        .count();
    // At most one per 16 ms frame (+ the first and the final flush).
    let frames = (elapsed.as_millis() / 16) as usize + 2;
    assert!(updates >= 1);
    assert!(updates <= frames, "{updates} updates in {elapsed:?}");
    assert!(has_line(&pane.contents(), "line 2999"));
}

#[tokio::test]
async fn kill_ends_the_whole_session() {
    let mut pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    // A background job lands in a process group of its own.
    pane.type_line("sleep 1000 & echo JOB=$! SH=$$");
    // The typed line itself shows `JOB=$!`: wait for the numbers.
    let text = pane
        .wait_screen("pids", |t| {
            t.split_whitespace().any(|w| {
                w.strip_prefix("SH=")
                    .is_some_and(|v| v.parse::<i32>().is_ok())
            })
        })
        .await;
    let pids: Vec<i32> = text
        .split_whitespace()
        .filter_map(|w| w.split_once('=').and_then(|(_, v)| v.parse().ok()))
        .collect();
    assert_eq!(pids.len(), 2, "{text}");
    pane.handle.take().expect("running").kill().await;
    for pid in pids {
        let deadline = Instant::now() + PATIENCE;
        while alive(pid) {
            assert!(Instant::now() < deadline, "pid {pid} survived the kill");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Running (not a zombie awaiting its reaper).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[tokio::test]
async fn send_types_the_line_and_ends_the_turn() {
    let mut pane = start(agent(&["sh"]));
    pane.wait_screen("the prompt", |t| t.contains("$ ")).await;
    pane.send(ProviderCommand::Send {
        turn_id: "t1".into(),
        text: "echo typed".into(),
    });
    pane.wait_screen("typed", |t| has_line(t, "typed")).await;
    let mut statuses = Vec::new();
    while statuses.len() < 2 {
        match tokio::time::timeout(PATIENCE, pane.events.recv()).await {
            Ok(Some(ProviderEvent::Stream(ev))) => {
                assert_eq!(ev.turn_id, "t1");
                statuses.push(ev.payload);
            }
            Ok(Some(_)) => {}
            other => panic!("no turn events: {other:?}"),
        }
    }
    assert!(matches!(
        statuses[0],
        hive::event::Payload::ResponseStart { .. }
    ));
    assert!(matches!(
        statuses[1],
        hive::event::Payload::ResponseDone { .. }
    ));
}

#[tokio::test]
async fn runner_attaches_the_screen_marks_exit_dead_and_restarts() {
    use hive::runner::{PaneEvent, RunnerCommand, RunnerOptions, TurnState, spawn_runner};
    let factory = Registry::builtin().get("pty").expect("pty is registered");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let runner = spawn_runner(
        0,
        factory,
        ProviderSpec {
            agent: agent(&["sh", "-c", "echo started; read x; exit 3"]),
            resume: None,
        },
        RunnerOptions::default(),
        tx,
    )
    .expect("runner");
    let mut attached = 0;
    let mut notices = Vec::new();
    loop {
        let ev = tokio::time::timeout(PATIENCE, rx.recv())
            .await
            .expect("runner events")
            .expect("runner alive")
            .event;
        match ev {
            PaneEvent::Attached { terminal, .. } => {
                assert!(terminal.is_some());
                attached += 1;
                // Answer `read` so the child exits with its code.
                runner.send(RunnerCommand::Input(b"\r".to_vec()));
            }
            PaneEvent::Notice { text, .. } => notices.push(text),
            PaneEvent::State(TurnState::Dead) if attached == 1 => {
                runner.send(RunnerCommand::Restart);
            }
            PaneEvent::State(TurnState::Dead) => break,
            _ => {}
        }
    }
    assert_eq!(attached, 2, "restart respawns the pane");
    assert!(
        notices.iter().any(|n| n.contains("exited with status 3")),
        "{notices:?}"
    );
}

#[tokio::test]
async fn less_uses_the_alternate_screen_and_quits() {
    if !std::path::Path::new("/usr/bin/less").exists() {
        eprintln!("less not installed; skipped");
        return;
    }
    let mut a = agent(&["less", "Cargo.toml"]);
    a.env.insert("LESS".into(), String::new());
    let mut pane = start(a);
    pane.wait_screen("less showing the file", |t| t.contains("[package]"))
        .await;
    assert!(terminal::alternate_screen(&view(&pane.screen)));
    pane.send(ProviderCommand::Input(b"q".to_vec()));
    let (code, _, _) = pane.wait_exit().await;
    assert_eq!(code, Some(0));
    assert!(!terminal::alternate_screen(&view(&pane.screen)));
}
