#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic
//! Issue 14 items 6, 7 and 9, drawn as the console draws them (ratatui's
//! `TestBackend`, insta snapshots): markdown tables in narrow panes,
//! terminal panes scrolled back and in copy mode, and the small things (the
//! deny-reason hint, Ctrl+U, the scroll marker, the model in a narrow title).

use std::sync::{Arc, Mutex};

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;

use hive::app::frame;
use hive::app::state::App;
use hive::event::Origin;
use hive::provider::display::{COMMON, describe};
use hive::provider::{Capabilities, DiagnosticLevel, PermissionRequest, TerminalScreen};
use hive::runner::screen::TermOwner;
use hive::runner::{PaneEvent, RunnerCommand, TurnState};
use hive::upsert::UpsertKind;
use tui_term::vt100;

use crate::support;
use support::console::{Console, ONE_AGENT as ONE, pane_event as ev};

fn console_from(text: &str) -> Console {
    Console::from_config(
        text,
        Capabilities {
            interrupt: true,
            ..Capabilities::default()
        },
    )
}

fn message(item: &str, origin: Origin, text: &str) -> PaneEvent {
    support::console::complete(
        "turn-1",
        item,
        UpsertKind::Message {
            content: text.into(),
            origin,
        },
    )
}

fn render(c: &mut Console, w: u16, h: u16) -> String {
    c.render(w, h)
}

/// The screen, then a map of it: `#` for selected cells (the theme's
/// selection background), `@` for the copy cursor (inverted), `.` else.
fn render_marked(c: &mut Console, w: u16, h: u16) -> String {
    c.pump();
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame(&mut c.app, &mut c.view, f.area(), f.buffer_mut()))
        .unwrap();
    let buf = term.backend().buffer().clone();
    let sel = c.app.theme.selection_bg;
    let mut out = term.backend().to_string();
    for y in 0..h {
        let row: String = (0..w)
            .map(|x| {
                let cell = &buf[(x, y)];
                if cell.modifier.contains(Modifier::REVERSED) {
                    '@'
                } else if cell.bg == sel {
                    '#'
                } else {
                    '.'
                }
            })
            .collect();
        out.push_str(&row);
        out.push('\n');
    }
    out
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typ(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

// ---- item 7: markdown tables laid out to the pane ----

const LONG_CELLS: &str = "Options:\n\n| flag | default | what it does |\n|---|:-:|---|\n| `--fresh` | off | starts every agent on a new session instead of resuming the last one |\n| `--config` | hive.toml | the file with the agents, keys and theme |\n";

const WIDE_CHARS: &str = "| 名前 | 状態 | メモ |\n|---|---|---|\n| 東京 | ✅ 完了 | 日本語のテキストはセルの中で折り返す |\n| Zürich | 🚧 途中 | emoji 🚀 and ASCII mixed in one cell |\n";

fn table_at(md: &str, width: u16) -> String {
    let mut c = console_from(ONE);
    c.app.apply(ev(message("m1", Origin::Agent, md)));
    // The pane's border takes two columns: the text area is `width` wide.
    render(&mut c, width + 2, 30)
}

#[test]
fn tables_with_long_cells_fit_30_50_80_columns() {
    for w in [30, 50, 80] {
        insta::assert_snapshot!(format!("table_long_cells_{w}"), table_at(LONG_CELLS, w));
    }
}

#[test]
fn tables_with_cjk_and_emoji_fit_30_50_80_columns() {
    for w in [30, 50, 80] {
        insta::assert_snapshot!(format!("table_wide_chars_{w}"), table_at(WIDE_CHARS, w));
    }
}

// ---- item 6: terminal panes, scrollback and copy mode ----

const SHELL: &str = r#"
[[agent]]
id = "sh"
name = "shell"
provider = "pty"
"#;

/// A terminal pane whose emulator has printed `lines` numbered lines and
/// a prompt (the pane drawn 40×12: the emulator is 38×10).
fn terminal(lines: usize) -> Console {
    let mut c = console_from(SHELL);
    let mut parser = vt100::Parser::new(10, 38, 1000);
    for i in 1..=lines {
        parser.process(format!("line {i}\r\n").as_bytes());
    }
    parser.process(b"$ ");
    let mut owner = TermOwner::new(TerminalScreen(Arc::new(Mutex::new(parser))));
    c.app.apply(ev(PaneEvent::Attached {
        capabilities: Capabilities::default(),
        terminal: Some(Box::new(owner.update())),
    }));
    c.term = Some(owner);
    c
}

fn shift(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::SHIFT)
}

#[test]
fn shift_page_up_scrolls_the_terminal_back_and_a_key_returns() {
    let mut c = terminal(40);
    let live = render(&mut c, 40, 13);
    assert!(
        live.contains("line 40") && !live.contains("line 30 "),
        "{live}"
    );
    c.app.on_key(shift(KeyCode::PageUp));
    let back = render(&mut c, 40, 13);
    insta::assert_snapshot!("terminal_scrolled_back", back);
    assert!(
        back.contains("line 23") && !back.contains("line 40"),
        "{back}"
    );
    // Further back stops at the oldest line; forward comes back down.
    for _ in 0..10 {
        c.app.on_key(shift(KeyCode::PageUp));
    }
    assert!(render(&mut c, 40, 13).contains("line 1 "));
    assert_eq!(c.app.panes[0].terminal.scroll, 31);
    c.app.on_key(shift(KeyCode::PageDown));
    assert_eq!(c.app.panes[0].terminal.scroll, 22);
    // New output does not move a scrolled-back view.
    let before = render(&mut c, 40, 13);
    c.term_output(b"\r\nmore 1\r\nmore 2\r\n$ ");
    assert_eq!(render(&mut c, 40, 13).lines().nth(3), before.lines().nth(3));
    assert_eq!(c.app.panes[0].terminal.scroll, 25);
    // A key for the program snaps back to the live screen.
    c.app.on_key(key(KeyCode::Char('x')));
    assert_eq!(c.app.panes[0].terminal.scroll, 0);
}

/// Issue 34 item 11: search finds what a terminal pane printed, in its
/// scrollback and on its screen, and Enter scrolls the pane to it. Failed
/// before: no hit (only what was sent to the pane was indexed).
#[test]
fn search_finds_a_terminal_panes_output_and_scrolls_to_it() {
    let mut c = terminal(40);
    let (tx, rx) = std::sync::mpsc::channel();
    let searcher = hive::search::Searcher::spawn(move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    let results = |c: &mut Console| {
        c.pump();
        for r in c.app.outbox.take_search_requests() {
            searcher.send(r);
        }
        while !c.app.search.done {
            let ev = rx.recv_timeout(Duration::from_secs(20)).unwrap();
            c.app.search_event(ev);
        }
    };
    c.app.on_key(ctrl('b'));
    c.app.on_key(key(KeyCode::Char('/')));
    typ(&mut c.app, "line 12");
    results(&mut c);
    let hits: Vec<(usize, &str, &str)> = (c.app.search.hits.iter())
        .map(|h| (h.pane, h.label.as_str(), h.context.as_str()))
        .collect();
    assert!(
        matches!(&hits[..], [(0, "terminal", ctx)] if ctx.contains("line 12")),
        "{hits:?}"
    );
    // The screen's own lines are found too.
    c.app.on_key(key(KeyCode::Backspace));
    c.app.on_key(key(KeyCode::Backspace));
    typ(&mut c.app, "40");
    results(&mut c);
    assert_eq!(c.app.search.hits.len(), 1);
    // Enter scrolls the pane back to the match.
    c.app.on_key(key(KeyCode::Backspace));
    c.app.on_key(key(KeyCode::Backspace));
    typ(&mut c.app, "12");
    results(&mut c);
    c.app.on_key(key(KeyCode::Enter));
    let screen = render(&mut c, 40, 13);
    assert!(screen.contains("line 12 "), "{screen}");
    assert!(!screen.contains("line 40"), "{screen}");
    insta::assert_snapshot!("terminal_search_jumped", screen);
}

#[test]
fn copy_mode_selects_across_scrollback_and_copies() {
    let mut c = terminal(40);
    c.app.on_key(ctrl('b'));
    c.app.on_key(key(KeyCode::Char('[')));
    assert!(
        c.app.panes[0].terminal.copy.is_some(),
        "prefix [ enters copy mode"
    );
    // Keys now move the copy cursor; none reach the program.
    for k in [KeyCode::Up, KeyCode::Up, KeyCode::Up] {
        c.app.on_key(key(k));
    }
    c.app.on_key(key(KeyCode::Char('v')));
    for _ in 0..10 {
        c.app.on_key(key(KeyCode::Up));
    }
    for _ in 0..2 {
        c.app.on_key(key(KeyCode::Right));
    }
    insta::assert_snapshot!(
        "terminal_copy_mode_selection",
        render_marked(&mut c, 40, 13)
    );
    c.app.on_key(key(KeyCode::Char('y')));
    c.pump();
    assert!(
        c.app.panes[0].terminal.copy.is_none(),
        "y copies and leaves"
    );
    assert_eq!(c.app.panes[0].terminal.scroll, 0);
    let osc = c
        .app
        .outbox
        .terminal_writes()
        .last()
        .cloned()
        .unwrap_or_default();
    let copied = osc52_text(osc);
    assert_eq!(
        copied,
        " 28\nline 29\nline 30\nline 31\nline 32\nline 33\nline 34\nline 35\nline 36\nline 37\nlin"
    );
    let status = c.app.status.clone().unwrap().0;
    assert!(status.contains("copied terminal selection"), "{status}");
}

#[test]
fn copy_mode_q_leaves_and_other_keys_stay_out_of_the_program() {
    let mut c = terminal(5);
    c.app.on_key(ctrl('b'));
    c.app.on_key(key(KeyCode::Char('[')));
    c.app.on_key(key(KeyCode::Char('z')));
    c.app.on_key(key(KeyCode::Char('g')));
    assert!(c.app.panes[0].terminal.copy.is_some());
    c.app.on_key(key(KeyCode::Char('q')));
    assert!(c.app.panes[0].terminal.copy.is_none());
    assert_eq!(c.app.panes[0].terminal.scroll, 0);
}

/// The text inside an OSC 52 sequence (`ESC ] 52 ; c ; base64 BEL`, maybe
/// wrapped for tmux).
fn osc52_text(seq: &str) -> String {
    use base64::Engine;
    let start = seq.find(";c;").expect("OSC 52") + 3;
    let end = seq[start..]
        .find(['\x07', '\x1b'])
        .map_or(seq.len(), |i| start + i);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&seq[start..end])
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

// ---- item 9: small things ----

#[test]
fn the_deny_reason_composer_shows_its_own_hint() {
    let mut c = console_from(ONE);
    // A turn runs: the usual hint would say Enter queues.
    c.app.apply(ev(PaneEvent::State(TurnState::Streaming)));
    let args = serde_json::json!({"command": "rm -rf build"});
    c.app.apply(ev(PaneEvent::Permission(PermissionRequest {
        request_id: "p1".into(),
        tool_name: "Bash".into(),
        input: args.clone(),
        display: Some(describe(&args, &COMMON)),
        description: None,
        options: vec![],
        ..Default::default()
    })));
    c.app.on_key(key(KeyCode::Char('n')));
    let s = render(&mut c, 70, 16);
    insta::assert_snapshot!("deny_reason_hint", s);
    assert!(
        s.contains("reason for denying (optional) · Enter denies"),
        "{s}"
    );
    assert!(!s.contains("queues"), "{s}");
}

#[test]
fn ctrl_u_clears_the_draft_line_by_line() {
    let mut c = console_from(ONE);
    typ(&mut c.app, "first");
    c.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typ(&mut c.app, "second");
    c.app
        .on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typ(&mut c.app, "third");
    let text = |c: &Console| c.app.panes[0].composer.text();
    c.app.on_key(ctrl('u'));
    assert_eq!(text(&c), "first\nsecond\n");
    c.app.on_key(ctrl('u'));
    assert_eq!(text(&c), "first\n");
    c.app.on_key(ctrl('u'));
    assert_eq!(text(&c), "");
    assert!(
        c.app.outbox.runner_commands().is_empty(),
        "nothing was sent"
    );
}

#[test]
fn the_lines_below_marker_covers_no_text() {
    let mut c = console_from(ONE);
    for i in 0..40 {
        c.app.apply(ev(message(
            &format!("m{i}"),
            Origin::Agent,
            &format!("message number {i} with a tail that reaches the right edge"),
        )));
    }
    render(&mut c, 60, 16);
    c.app.on_key(key(KeyCode::PageUp));
    let s = render(&mut c, 60, 16);
    insta::assert_snapshot!("scroll_marker_in_separator", s);
    let rows: Vec<&str> = s.lines().collect();
    let marker = rows
        .iter()
        .position(|r| r.contains("lines below"))
        .expect("marker shown");
    assert!(
        rows[marker].contains("──"),
        "the marker sits in the separator: {s}"
    );
    // The row above it is the transcript's last, whole.
    assert!(rows[marker - 1].contains("edge"), "{s}");
}

#[test]
fn the_model_stays_in_a_narrow_title() {
    let mut c = console_from(ONE);
    for (w, expect) in [
        (60, "script · demo-1 · idle"),
        (30, "demo-1 · idle"),
        (22, "demo-1"),
    ] {
        let s = render(&mut c, w, 8);
        let title = s.lines().next().unwrap();
        assert!(title.contains(expect), "{w}: {title}");
    }
    c.app.apply(ev(PaneEvent::State(TurnState::Streaming)));
    let s = render(&mut c, 34, 8);
    insta::assert_snapshot!("narrow_title_streaming", s.lines().next().unwrap());
}

#[test]
fn ctrl_r_is_the_programs_while_it_runs_and_restarts_it_once_it_exited() {
    let mut c = terminal(3);
    c.app.on_key(ctrl('r'));
    assert!(
        matches!(c.app.outbox.runner_commands().as_slice(), [(0, RunnerCommand::Input(b))] if b.as_slice() == [0x12]),
        "{:?}",
        c.app.outbox
    );
    c.app.outbox.clear_runner_commands();
    c.app.apply(ev(PaneEvent::Notice {
        level: DiagnosticLevel::Error,
        text: "agent stopped: exited with status 0".into(),
    }));
    c.app.apply(ev(PaneEvent::State(TurnState::Dead)));
    let s = render(&mut c, 60, 13);
    insta::assert_snapshot!("terminal_exited", s);
    assert!(s.contains("exited with status 0 · Ctrl+R restarts"), "{s}");
    c.app.on_key(ctrl('r'));
    assert!(
        matches!(
            c.app.outbox.runner_commands().as_slice(),
            [(0, RunnerCommand::Restart)]
        ),
        "{:?}",
        c.app.outbox
    );
}

/// Issue 34 item 13: a terminal pane whose session started (its model
/// reads `pty`, as its provider) names the provider once, not "pty · pty".
#[test]
fn terminal_title_names_pty_once() {
    let mut c = terminal(2);
    c.app
        .apply(ev(PaneEvent::Turn(hive::upsert::TurnEvent::TurnStarted {
            turn_id: "t1".into(),
            session_id: "pty-1".into(),
            model_id: "pty".into(),
            provider_id: "pty".into(),
        })));
    let s = render(&mut c, 60, 6);
    let title = s.lines().next().unwrap().to_owned();
    assert!(!title.contains("pty · pty"), "{title}");
    insta::assert_snapshot!("terminal_title_pty_once", title);
}

/// Issue 34 item 9: emoji made of several chars (👩‍💻 with a ZWJ, ❤️ with
/// VS16) take the columns the buffer gives them, so a table cell that wraps
/// them keeps its borders where the other rows have them, and the code
/// block's lines stay inside the pane.
#[test]
fn emoji_sequences_keep_table_borders_in_line() {
    let md = "| who | what |\n|---|---|\n| 👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻 | codes a lot of code |\n| ❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️ | love and more |\n\n```\ncode❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️❤️\n```\n";
    let mut c = console_from(ONE);
    c.app.apply(ev(message("m1", Origin::Agent, md)));
    let (w, h) = (34, 24);
    let screen = render(&mut c, w, h);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame(&mut c.app, &mut c.view, f.area(), f.buffer_mut()))
        .unwrap();
    let buf = term.backend().buffer().clone();
    let row_of = |sym: &str| (0..h).find(|&y| (0..w).any(|x| buf[(x, y)].symbol() == sym));
    let (top, bottom) = (row_of("┌").unwrap(), row_of("└").unwrap());
    let right = (0..w).find(|&x| buf[(x, top)].symbol() == "┐").unwrap();
    let mid = (0..w).find(|&x| buf[(x, top)].symbol() == "┬").unwrap();
    for y in top..=bottom {
        assert!(
            "│┤┘┐".contains(buf[(right, y)].symbol()) && "│┼┴┬".contains(buf[(mid, y)].symbol()),
            "row {y} has its borders out of line:\n{screen}"
        );
    }
    insta::assert_snapshot!("emoji_sequences_table", screen);
}

/// Issue 34 item 15: a demo pane, still empty, names the words that show
/// its features (its scenario's `match` words), not only "Type a message".
#[test]
fn demo_pane_offers_the_words_that_show_features() {
    let mut c = console_from(
        "[[agent]]\nid = \"demo\"\nname = \"Architect\"\nprovider = \"script\"\nscript = \"demo:tour\"\n",
    );
    let s = render(&mut c, 70, 14);
    for word in ["slow", "approve", "error", "crash"] {
        assert!(s.contains(word), "{word}:\n{s}");
    }
    insta::assert_snapshot!("demo_pane_try_words", s);
}

/// Issue 46 item 10: a console smaller than the program draws (another
/// console, the latest, sized it 38x10) says so in the pane's border; a
/// bigger one shows the program's area and blank cells past it, no mark.
#[test]
fn a_terminal_shown_smaller_than_it_draws_is_marked_cut() {
    let mut c = terminal(12);
    let small = render(&mut c, 30, 8);
    insta::assert_snapshot!("terminal_cut", small);
    assert!(small.contains("cut 38x10"), "{small}");
    let big = render(&mut c, 60, 14);
    assert!(!big.contains("cut "), "{big}");
    // Past the program's 38 columns and 10 rows the pane is blank.
    let rows: Vec<&str> = big.lines().collect();
    assert!(
        rows[1].contains("line 4") && rows[10].contains("$"),
        "{big}"
    );
    assert!(
        rows[1..12]
            .iter()
            .all(|r| r.chars().skip(40).take(18).all(|ch| ch == ' ')),
        "{big}"
    );
    assert!(
        rows[11..12]
            .iter()
            .all(|r| r.chars().skip(2).take(56).all(|ch| ch == ' ')),
        "{big}"
    );
}
