//! The console (`hive` with no arguments): a client of a hive server
//! (src/client/), one pane per pane of the server's snapshot.
//!
//! `state` holds the model (panes, focus, overlays), `input` turns keys into
//! state changes and runner commands, `tty` owns the terminal. This file
//! sends the commands on (to the server, or to runners in this process for
//! the benches and tests) and runs the event loop: redraw only after a
//! change, at most `ui.max_fps` times a second, and sleep when nothing
//! happens. Each `frame` draws the app read-only into the UI's `ViewState`,
//! then the app takes back what the frame measured (`geometry`).

pub(crate) mod attach;
pub(crate) mod attention;
mod best_of;
pub mod command;
pub(crate) mod commands;
pub mod comment;
mod conflicts;
pub mod console;
pub(crate) mod copy;
pub(crate) mod copy_mode;
mod emit;
pub mod fanout;
pub mod forge;
pub mod forge_view;
pub mod geometry;
pub(crate) mod handoff;
pub mod inbox;
pub(crate) mod input;
mod layers;
pub(crate) mod mention;
pub mod menu;
pub mod overlay;
pub(crate) mod overview;
pub mod pace;
pub mod pane;
mod pane_edit;
pub(crate) mod pty_input;
mod read_only;
mod review;
pub mod screen;
pub(crate) mod search;
pub mod sessions;
pub(crate) mod slash;
mod snapshot;
pub mod state;
mod take;
pub mod transcript;
pub(crate) mod tty;
pub mod unread;
mod windows;
pub mod word_diff;
pub(crate) mod worktree;

use std::io::Write;

use crate::config::Config;
use crate::keymap::Keymap;
use crate::protocol::pane::RunnerSink;
use crate::ui;
use crate::ui::ViewState;
use crate::ui::pane::ComposerLook;
use crate::ui::theme::Theme;
use state::App;

/// The app for `config` with its theme and keymap, plus config warnings.
pub fn build_app(config: &Config) -> (App, Vec<String>) {
    let mut dirs = Vec::new();
    if let Some(base) = config.source.base_dir() {
        dirs.push(base.join("themes"));
    }
    if let Some(user) =
        crate::paths::user_config_file().and_then(|p| p.parent().map(|d| d.join("themes")))
    {
        dirs.push(user);
    }
    let (theme, mut warnings) = Theme::load(&config.theme, &dirs);
    let (keymap, kw) = Keymap::from_config(&config.keys);
    warnings.extend(kw);
    (App::new(config, theme, keymap), warnings)
}

/// Where the app's commands go. A command whose outlet is missing stays
/// queued: the terminal's bytes wait for the frame, the others for the loop.
#[derive(Default)]
struct Outlets<'a> {
    runners: Option<&'a dyn RunnerSink>,
    requests: Option<&'a command::ServerRequests>,
    search: Option<&'a crate::search::Searcher>,
    terminal: Option<&'a mut dyn Write>,
}

/// Drains the app's outbox into `out`: the one way out of the app.
fn dispatch(app: &mut App, mut out: Outlets<'_>) -> std::io::Result<()> {
    use command::AppCommand;
    // A read-only console sends nothing the server would refuse.
    app.hold_back_changes();
    let has_terminal = out.terminal.is_some();
    let ready = |c: &AppCommand| match c {
        AppCommand::Runner { .. } | AppCommand::Edit(_) => out.runners.is_some(),
        AppCommand::Git(_)
        | AppCommand::ListFiles { .. }
        | AppCommand::ListSessions { .. }
        | AppCommand::Resume { .. }
        | AppCommand::Mute(_)
        | AppCommand::Forge { .. }
        | AppCommand::Dismiss { .. } => out.requests.is_some(),
        AppCommand::Search(_) => out.search.is_some(),
        AppCommand::Terminal(_) => has_terminal,
        AppCommand::Notify(_) => true,
    };
    for cmd in app.outbox.drain_where(ready) {
        let cmd = match cmd.into_request() {
            Ok(msg) => {
                if let Some(r) = out.requests {
                    r.send(msg);
                }
                continue;
            }
            Err(cmd) => cmd,
        };
        match cmd {
            AppCommand::Runner { pane, cmd } => {
                if let Some(r) = out.runners {
                    r.send_to(pane, cmd);
                }
            }
            AppCommand::Edit(edit) => {
                if let Some(r) = out.runners {
                    r.edit_panes(edit);
                }
            }
            AppCommand::Search(req) => {
                if let Some(s) = out.search {
                    s.send(req);
                }
            }
            AppCommand::Terminal(bytes) => {
                if let Some(t) = out.terminal.as_mut() {
                    t.write_all(bytes.as_bytes())?;
                }
            }
            AppCommand::Notify(argv) => crate::notify::run(argv),
            // Sent above, as the server's messages.
            AppCommand::Git(_)
            | AppCommand::ListFiles { .. }
            | AppCommand::ListSessions { .. }
            | AppCommand::Resume { .. }
            | AppCommand::Mute(_)
            | AppCommand::Forge { .. }
            | AppCommand::Dismiss { .. } => {}
        }
    }
    Ok(())
}

/// One frame inside a synchronized update (DECSET 2026), so terminals that
/// support it never show a half-drawn screen.
/// Then the PTY panes learn their new sizes. Generic over the writer so the
/// stream bench counts exactly the bytes the console writes.
pub fn draw<W: Write>(
    terminal: &mut screen::Screen<W>,
    area: ratatui::layout::Rect,
    app: &mut App,
    view: &mut ViewState,
    runners: &dyn RunnerSink,
) -> anyhow::Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    app.expire_status();
    crossterm::queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(area, |area, buf| {
        frame(app, view, area, buf);
        scroll_regions(view.geometry(), area)
    })?;
    let out = terminal.backend_mut();
    crossterm::queue!(out, EndSynchronizedUpdate)?;
    let to_terminal = Outlets {
        terminal: Some(out),
        ..Outlets::default()
    };
    dispatch(app, to_terminal)?;
    terminal.backend_mut().flush()?;
    app.sync_terminal_sizes();
    app.sync_term_views();
    let to_runners = Outlets {
        runners: Some(runners),
        ..Outlets::default()
    };
    dispatch(app, to_runners)?;
    Ok(())
}

/// Full-width transcripts: their rows may scroll as one (DECSTBM).
fn scroll_regions(
    geometry: &geometry::Geometry,
    area: ratatui::layout::Rect,
) -> Vec<screen::ScrollRegion> {
    geometry
        .panes
        .iter()
        .filter(|g| g.rect.x == area.x && g.rect.width == area.width)
        .map(|g| g.transcript)
        .filter(|r| !r.is_empty())
        .collect()
}

/// One frame: style the composers, draw the app read-only into `buf`
/// (the view keeps what it measured), then let the app take back the
/// geometry (scroll clamping, page size, hit-testing). Tests and benches
/// call this to draw exactly as the console does.
pub fn frame(
    app: &mut App,
    view: &mut ViewState,
    area: ratatui::layout::Rect,
    buf: &mut ratatui::buffer::Buffer,
) {
    let focus = app.focus;
    for (i, p) in app.panes.iter_mut().enumerate() {
        ComposerLook::of(p, i == focus, &app.theme, &app.keymap).apply(&mut p.composer.area);
    }
    ui::render(app, view, area, buf);
    app.observe(view.geometry().clone());
}
