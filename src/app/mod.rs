//! The console (`hive` with no arguments): one pane per configured agent.
//!
//! `state` holds the model (panes, focus, overlays), `input` turns keys into
//! state changes and runner commands, `tty` owns the terminal. This file
//! wires them to the runners and runs the event loop: redraw only after a
//! change, at most `ui.max_fps` times a second, and sleep when nothing
//! happens. Each `frame` draws the app read-only into the UI's `ViewState`,
//! then the app takes back what the frame measured (`geometry`).

pub(crate) mod attach;
pub(crate) mod attention;
pub mod command;
pub(crate) mod commands;
pub(crate) mod copy;
pub(crate) mod copy_mode;
mod emit;
pub mod fanout;
pub mod geometry;
pub mod inbox;
pub(crate) mod input;
mod layers;
pub(crate) mod mention;
pub mod menu;
pub mod overlay;
pub(crate) mod overview;
pub mod pace;
pub mod pane;
pub(crate) mod pty_input;
pub mod screen;
pub(crate) mod search;
pub mod sessions;
pub(crate) mod slash;
mod snapshot;
pub mod state;
pub mod transcript;
pub(crate) mod tty;
pub mod unread;
pub(crate) mod worktree;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use crossterm::event::{Event, MouseEventKind};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::Config;
use crate::keymap::Keymap;
use crate::provider::{DiagnosticLevel, ProviderSpec, Registry};
use crate::runner::{PaneUpdate, RunnerHandle, RunnerOptions, spawn_runner};
use crate::timer;
use crate::ui;
use crate::ui::ViewState;
use crate::ui::pane::ComposerLook;
use crate::ui::theme::Theme;
use state::App;

pub fn run(config_path: Option<&Path>, fresh: bool) -> anyhow::Result<ExitCode> {
    tty::check_tty()?;
    let mut config = Config::load(config_path, &Registry::builtin())?;
    let _log = init_logging();
    let worktrees = crate::worktree::prepare(&mut config.agents, config.worktrees.root.as_deref());
    tracing::info!(config = %config.source.describe(), agents = config.agents.len(), "console starting");
    let (mut app, warnings) = build_app(&config);
    app.system_clipboard = crate::clipboard::system_tool();
    app.in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    app.history = Some(crate::history::Store::user());
    app.attach_worktrees(&worktrees);
    // The demo, with agents installed: say how to use them instead.
    if let Some(hint) = crate::init::demo_hint(&config, &crate::doctor::Env::current()) {
        app.status = Some((hint, app.now + crate::init::HINT_FOR));
    }
    for w in &warnings {
        tracing::warn!("{w}");
    }
    if let Some(p) = app.panes.first_mut() {
        for w in warnings {
            p.conversation.transcript.notice(DiagnosticLevel::Warn, w);
        }
    }
    let rt = crate::runtime::build()?;
    tty::install_panic_hook();
    let result = rt.block_on(async {
        let (terminal, guard) = tty::setup()?;
        let out = event_loop(&mut app, &config, fresh, terminal).await;
        drop(guard);
        out
    });
    tty::restore();
    rt.shutdown_timeout(Duration::from_millis(300));
    crate::provider::process::kill_all();
    result?;
    tracing::info!("console stopped");
    Ok(ExitCode::SUCCESS)
}

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

/// Logs go to `hive.log` in the state directory, never to the terminal.
fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = crate::paths::state_dir();
    crate::private::create_dir(&dir).ok()?;
    crate::private::tighten_tree(&dir);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.join("hive.log"))
        .ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("HIVE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("hive=info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Starts every pane's runner, and the git service for the panes with
/// worktrees; a provider that cannot start shows its error in its pane
/// instead of stopping hive.
fn start_runners(
    app: &mut App,
    config: &Config,
    fresh: bool,
    tx: &mpsc::UnboundedSender<PaneUpdate>,
    ops: &mpsc::UnboundedSender<crate::ops::HiveRequest>,
    socket: Option<&std::path::Path>,
    host: &mut crate::ops::OpsHost,
) -> (Vec<Option<RunnerHandle>>, worktree::GitLink) {
    // Providers that take hive's operations in-process get the host's.
    let registry = Registry::builtin().with_toolbox(crate::ops::meta::toolbox_factory(ops.clone()));
    let mut runners = Vec::new();
    for (i, agent) in config.agents.iter().enumerate() {
        // A pane that failed before starting (no worktree) stays stopped.
        if app
            .panes
            .get(i)
            .is_some_and(|p| p.conversation.failed.is_some())
        {
            runners.push(None);
            continue;
        }
        let mut history = crate::history::open_pane(agent, fresh);
        // `agent.read` sees the turns from before a restart too.
        host.restore(i, &history.items);
        app.restore(i, &mut history);
        let options = RunnerOptions {
            processor: config.processor_config(),
            interrupt_timeout: Duration::from_millis(config.ui.interrupt_timeout_ms),
            stall_after: std::time::Duration::from_secs(config.ui.stall_after_s.max(1)),
            initial_queue: std::mem::take(&mut history.queue),
            recorder: history.recorder.take(),
            live_every: live_every(config),
            background_every: background_every(config),
            focused: i == app.focus,
        };
        let spec = ProviderSpec {
            agent: registry.with_hive_mcp(agent, socket),
            resume: history.resume.take(),
        };
        let started = registry
            .get(&agent.provider)
            .and_then(|factory| spawn_runner(i, factory, spec, options, tx.clone()));
        match started {
            Ok(h) => runners.push(Some(h)),
            Err(e) => {
                tracing::warn!(agent = %agent.id, "cannot start: {e}");
                if let Some(p) = app.panes.get_mut(i) {
                    p.conversation.failed = Some(e.to_string());
                }
                runners.push(None);
            }
        }
    }
    (runners, worktree::GitLink::start(app))
}

/// How often a runner sends its live tail: the display latency less one
/// frame interval (a frame may wait that long for its turn). Zero turns the
/// live tail off (text shows as the gradient batches it).
pub fn live_every(config: &Config) -> Option<Duration> {
    if config.ui.display_latency_ms == 0 {
        return None;
    }
    let frame = Duration::from_secs_f64(1.0 / f64::from(config.ui.max_fps.clamp(1, 240)));
    let every = Duration::from_millis(config.ui.display_latency_ms).saturating_sub(frame);
    Some(every.max(Duration::from_millis(4)))
}

/// How much longer than the focused pane's a background pane's text may
/// wait: its live tail (and reading its agent) runs at this multiple of the
/// live tick, and the console draws it that late (`pace`).
const BACKGROUND_FACTOR: u32 = 4;

/// The live tick of a pane out of focus.
pub fn background_every(config: &Config) -> Option<Duration> {
    live_every(config).map(|every| every * BACKGROUND_FACTOR)
}

/// Where the app's commands go. A command whose outlet is missing stays
/// queued: the terminal's bytes wait for the frame, the others for the loop.
#[derive(Default)]
struct Outlets<'a> {
    runners: Option<&'a [Option<RunnerHandle>]>,
    git: Option<&'a worktree::GitLink>,
    search: Option<&'a crate::search::Searcher>,
    terminal: Option<&'a mut dyn Write>,
}

/// Drains the app's outbox into `out`: the one way out of the app.
fn dispatch(app: &mut App, mut out: Outlets<'_>) -> std::io::Result<()> {
    use command::AppCommand;
    let has_terminal = out.terminal.is_some();
    let ready = |c: &AppCommand| match c {
        AppCommand::Runner { .. } => out.runners.is_some(),
        AppCommand::Git(_) => out.git.is_some(),
        AppCommand::Search(_) => out.search.is_some(),
        AppCommand::Terminal(_) => has_terminal,
    };
    for cmd in app.outbox.drain_where(ready) {
        match cmd {
            AppCommand::Runner { pane, cmd } => {
                match out
                    .runners
                    .and_then(|r| r.get(pane))
                    .and_then(Option::as_ref)
                {
                    Some(r) => {
                        r.send(cmd);
                    }
                    None => tracing::debug!(pane, "command for a pane without a runner dropped"),
                }
            }
            AppCommand::Git(req) => {
                if let Some(g) = out.git {
                    g.send(req);
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
        }
    }
    Ok(())
}

async fn event_loop(
    app: &mut App,
    config: &Config,
    fresh: bool,
    mut terminal: screen::Screen<tty::Writer>,
) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let mut ops = crate::ops::OpsHost::new(&config.agents);
    ui::highlight::warm_up();
    // The control socket (`hive ctl`, `hive mcp`) is bound first so agents
    // with `hive_tools` are told where it is; it sees every runner update
    // and sends commands through the outbox, like a key press.
    let mut control = crate::control::Host::start(config, ops_tx.clone());
    let (runners, git) =
        start_runners(app, config, fresh, &tx, &ops_tx, control.socket(), &mut ops);
    let registry = Registry::builtin();
    for (i, text) in control.failure_notices(&config.agents, |a| registry.wants_hive_mcp(a)) {
        if let Some(p) = app.panes.get_mut(i) {
            p.conversation
                .transcript
                .notice(crate::provider::DiagnosticLevel::Warn, text);
        }
    }
    let (search_tx, search_rx) = mpsc::unbounded_channel();
    let searcher = crate::search::Searcher::spawn(move |ev| {
        let _ = search_tx.send(ev);
    })
    .context("search worker")?;
    let started = runners.iter().zip(&app.panes).map(|(r, p)| match r {
        Some(h) => crate::control::Started::Running(h.capabilities),
        None => crate::control::Started::Failed(p.conversation.failed.clone().unwrap_or_default()),
    });
    control.set_started(started.collect());
    let (wake, woken) = wake_channel();
    app.wake = Some(wake);
    let mut wiring = Wiring {
        rx,
        ops_rx,
        ops,
        control,
        focused: app.focus,
        runners,
        git,
        searcher,
        search_rx,
        woken,
    };
    wiring.run(app, config, &mut terminal).await?;
    // Give runners a moment to end their agents' process groups cleanly
    // (bounded: the exit path's kill_all sweeps whatever is left).
    let stops = futures::future::join_all(wiring.runners.iter().flatten().map(|r| r.shutdown()));
    let _ = tokio::time::timeout(Duration::from_millis(150), stops).await;
    Ok(())
}

/// What the event loop listens to and talks to, once everything started.
struct Wiring {
    rx: mpsc::UnboundedReceiver<PaneUpdate>,
    ops_rx: mpsc::UnboundedReceiver<crate::ops::HiveRequest>,
    ops: crate::ops::OpsHost,
    control: crate::control::Host,
    /// The pane the runners were last told has the focus.
    focused: usize,
    runners: Vec<Option<RunnerHandle>>,
    git: worktree::GitLink,
    searcher: crate::search::Searcher,
    search_rx: mpsc::UnboundedReceiver<crate::search::SearchEvent>,
    woken: Woken,
}

impl Wiring {
    /// Sends what the app queued for the runners, the git service and the
    /// search worker (the terminal's bytes wait for the next frame).
    fn flush(&mut self, app: &mut App) {
        app.now = Instant::now().into_std();
        let out = Outlets {
            runners: Some(&self.runners),
            git: Some(&self.git),
            search: Some(&self.searcher),
            terminal: None,
        };
        // Without a terminal outlet nothing writes, so nothing can fail.
        let _ = dispatch(app, out);
        if app.focus != self.focused {
            for (pane, focused) in [(self.focused, false), (app.focus, true)] {
                if let Some(r) = self.runners.get(pane).and_then(Option::as_ref) {
                    r.send(crate::runner::RunnerCommand::Focused(focused));
                }
            }
            self.focused = app.focus;
        }
    }

    /// Background work woke the loop: lower the flag, look at the files.
    fn woken(&mut self, app: &mut App, pace: &mut pace::Pace) {
        self.woken
            .1
            .store(false, std::sync::atomic::Ordering::Release);
        if app.tick_files() {
            pace.soon();
        }
    }

    /// Redraws when paced, then waits for whatever comes first, until the
    /// app quits, the terminal goes away or a quit signal arrives.
    async fn run(
        &mut self,
        app: &mut App,
        config: &Config,
        terminal: &mut screen::Screen<tty::Writer>,
    ) -> anyhow::Result<()> {
        let mut events = tty::Input::start();
        let mut signals = Signals::new()?;
        let spin_every = ui::SPIN_EVERY;
        let mut view = ViewState::default();
        let mut pace = pace::Pace::new(config, Instant::now().into_std());
        pace.soon();
        let mut last_draw = Instant::now();
        loop {
            self.flush(app);
            if app.quit {
                break;
            }
            let now = Instant::now();
            if pace.ready(now.into_std()) {
                app.now = now.into_std();
                draw(terminal, tty::area(), app, &mut view, &self.runners)?;
                pace.drawn(now.into_std());
                last_draw = now;
                if view.pending() {
                    // A long code block's highlighting moves on a step a frame.
                    pace.soon();
                }
            }
            let frame_at = pace.due().map(Instant::from_std);
            let tick_at = (frame_at.is_none() && app.animating()).then_some(last_draw + spin_every);
            let status_at = status_deadline(app);
            tokio::select! {
                ev = events.next() => match ev {
                    Some(Ok(ev)) => {
                        if handle_event(app, ev) {
                            pace.input(Instant::now().into_std());
                        }
                    }
                    Some(Err(e)) => {
                        tracing::error!("terminal input: {e}");
                        break;
                    }
                    None => break,
                },
                Some(update) = self.rx.recv() => {
                    apply_updates(app, update, &mut self.rx, &mut pace, &mut self.ops, &mut self.control);
                }
                Some(req) = self.ops_rx.recv() => self.ops.handle(req, &self.runners),
                Some(ev) = self.search_rx.recv() => {
                    app.search_event(ev);
                    pace.soon();
                }
                Some(()) = self.woken.0.recv() => self.woken(app, &mut pace),
                Some(req) = self.control.next() => {
                    if let Some((pane, cmd)) = self.control.handle(req) {
                        app.send(pane, cmd);
                    }
                }
                wake = self.git.next(app.overlap_check_at) => if app.on_git(wake) { pace.soon() },
                sig = signals.next() => if on_signal(sig, terminal, &mut pace)? {
                    break;
                },
                _ = timer::sleep_until(frame_at) => {}
                _ = timer::sleep_until(tick_at) => pace.soon(),
                _ = timer::sleep_until(status_at) => status_due(app, &mut pace),
            }
        }
        Ok(())
    }
}

/// A quit, suspend or resume signal; true when hive should quit.
fn on_signal(
    sig: Sig,
    terminal: &mut screen::Screen<tty::Writer>,
    pace: &mut pace::Pace,
) -> anyhow::Result<bool> {
    match sig {
        Sig::Quit(name) => {
            tracing::info!("{name}: quitting");
            return Ok(true);
        }
        Sig::Suspend => tty::suspend(terminal)?,
        Sig::Resume => tty::resume(terminal)?,
    }
    pace.soon();
    Ok(false)
}

/// The status line's time is up or the inbox watch has a check due.
fn status_due(app: &mut App, pace: &mut pace::Pace) {
    app.now = Instant::now().into_std();
    if app.expire_status() | app.watch_inbox() {
        pace.soon();
    }
}

/// Takes a runner update and every one already queued behind it: each
/// paces the next frame and is seen by the ops and control hosts before
/// the app applies it.
fn apply_updates(
    app: &mut App,
    first: PaneUpdate,
    rx: &mut mpsc::UnboundedReceiver<PaneUpdate>,
    pace: &mut pace::Pace,
    ops: &mut crate::ops::OpsHost,
    control: &mut crate::control::Host,
) {
    app.now = Instant::now().into_std();
    let mut apply = |update: PaneUpdate| {
        pace.update(&update, app.focus, app.now);
        ops.observe(&update);
        control.observe(&update);
        app.apply(update);
    };
    apply(first);
    while let Ok(update) = rx.try_recv() {
        apply(update);
    }
}

/// The process signals the console answers.
enum Sig {
    /// SIGTERM, SIGHUP or SIGINT (kill -INT; Ctrl+C is a key in raw mode):
    /// quit cleanly.
    Quit(&'static str),
    /// SIGTSTP: job control, `tty::suspend`.
    Suspend,
    /// SIGCONT: job control, `tty::resume`.
    Resume,
}

struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    tstp: tokio::signal::unix::Signal,
    cont: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate()).context("SIGTERM handler")?,
            hup: signal(SignalKind::hangup()).context("SIGHUP handler")?,
            int: signal(SignalKind::interrupt()).context("SIGINT handler")?,
            tstp: signal(SignalKind::from_raw(libc::SIGTSTP)).context("SIGTSTP handler")?,
            cont: signal(SignalKind::from_raw(libc::SIGCONT)).context("SIGCONT handler")?,
        })
    }

    async fn next(&mut self) -> Sig {
        tokio::select! {
            _ = self.term.recv() => Sig::Quit("SIGTERM"),
            _ = self.hup.recv() => Sig::Quit("SIGHUP"),
            _ = self.int.recv() => Sig::Quit("SIGINT"),
            _ = self.tstp.recv() => Sig::Suspend,
            _ = self.cont.recv() => Sig::Resume,
        }
    }
}

/// A wake-up from background work: calls collapse into one message until
/// the loop has taken it (and lowered the flag).
type Woken = (
    mpsc::UnboundedReceiver<()>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
);

fn wake_channel() -> (crate::files::Wake, Woken) {
    let (tx, rx) = mpsc::unbounded_channel();
    let pending = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&pending);
    let wake: crate::files::Wake = std::sync::Arc::new(move || {
        if !flag.swap(true, std::sync::atomic::Ordering::AcqRel) {
            let _ = tx.send(());
        }
    });
    (wake, (rx, pending))
}

/// When the status line goes away or the inbox watch has a check due.
fn status_deadline(app: &App) -> Option<Instant> {
    let status = app.status.as_ref().map(|(_, until)| *until);
    [status, app.inbox_deadline()]
        .into_iter()
        .flatten()
        .min()
        .map(Instant::from_std)
}

/// Applies one terminal event; false when nothing visible changed.
fn handle_event(app: &mut App, ev: Event) -> bool {
    match ev {
        Event::Key(k) => app.on_key(k),
        Event::Paste(text) => app.on_paste(&text),
        Event::Mouse(m) => {
            if matches!(
                m.kind,
                MouseEventKind::Moved | MouseEventKind::Drag(_) | MouseEventKind::Up(_)
            ) {
                return false;
            }
            app.on_mouse(m);
        }
        Event::Resize(..) => {}
        Event::FocusGained | Event::FocusLost => return false,
    }
    true
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
    runners: &[Option<RunnerHandle>],
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
