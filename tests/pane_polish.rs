#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic
//! Issue 14 items 6, 7 and 9, drawn as the console draws them (ratatui's
//! `TestBackend`, insta snapshots): markdown tables in narrow panes,
//! terminal panes scrolled back and in copy mode, and the small things (the
//! deny-reason hint, Ctrl+U, the scroll marker, the model in a narrow title).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use hive::app::state::App;
use hive::app::{build_app, frame};
use hive::config::{Config, ConfigSource};
use hive::event::Origin;
use hive::provider::Capabilities;
use hive::runner::{PaneEvent, PaneUpdate};
use hive::ui::ViewState;
use hive::upsert::{Upsert, UpsertKind, UpsertStatus};

const ONE: &str = r#"
[[agent]]
id = "demo"
name = "Architect"
provider = "script"
model = "demo-1"
"#;

struct Console {
    app: App,
    view: ViewState,
}

fn console_from(text: &str) -> Console {
    let config = Config::parse(text, ConfigSource::Builtin).unwrap();
    let (mut app, warnings) = build_app(&config);
    assert!(warnings.is_empty(), "{warnings:?}");
    app.now = app.started;
    app.apply(ev(PaneEvent::Attached {
        capabilities: Capabilities {
            interrupt: true,
            ..Capabilities::default()
        },
        terminal: None,
    }));
    Console {
        app,
        view: ViewState::default(),
    }
}

fn ev(event: PaneEvent) -> PaneUpdate {
    PaneUpdate { pane: 0, event }
}

fn message(item: &str, origin: Origin, text: &str) -> PaneEvent {
    PaneEvent::Upsert(Upsert {
        turn_id: "turn-1".into(),
        session_id: "s".into(),
        item_id: item.into(),
        source_timestamp: chrono::DateTime::UNIX_EPOCH,
        emitted_at: chrono::DateTime::UNIX_EPOCH,
        status: UpsertStatus::Complete,
        error_code: None,
        error_message: None,
        kind: UpsertKind::Message {
            content: text.into(),
            origin,
        },
    })
}

fn render(c: &mut Console, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame(&mut c.app, &mut c.view, f.area(), f.buffer_mut()))
        .unwrap();
    term.backend().to_string()
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
