//! The console's loop (issue 29): a client of a hive server. It draws the
//! app, turns keys into app changes and runner commands (sent to the
//! server), and applies what the server sends: live events, a fresh
//! snapshot, a pane reset by another client, a goodbye. Redraws only after
//! a change, at most `ui.max_fps` times a second, and sleeps when nothing
//! happens.
//!
//! The client owns only one person's view (focus, zoom, scroll, overlays,
//! its terminal size); it tells the server its focus (runners of panes no
//! client looks at stream on the slower background tick) and its
//! composers' drafts (kept for the next attach).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use crossterm::event::{Event, MouseEventKind};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::state::App;
use super::{Outlets, build_app, command, dispatch, draw, pace, screen, tty};
use crate::client::{Connection, FromServer, Sender};
use crate::config::Config;
use crate::protocol::ClientMsg;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::pane::PaneUpdate;
use crate::protocol::snapshot::Snapshot;
use crate::timer;
use crate::ui;
use crate::ui::ViewState;

/// How long a console waits for the server it stopped to go.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// How a console session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The user detached (or the terminal went away): the agents run on.
    Detached,
    /// The user stopped the server and every agent.
    Stopped,
    /// The server stopped (another console or `hive kill` stopped it), and why.
    ServerStopped(String),
    /// The connection to the server broke, and why.
    Lost(String),
}

/// Runs the console on `conn`, starting from the server's `snapshot`, until
/// the user detaches or stops, or the server goes away.
pub fn run(
    rt: &tokio::runtime::Runtime,
    config: &Config,
    conn: Connection,
    snapshot: Snapshot,
) -> anyhow::Result<Ended> {
    let (mut app, warnings) = build_app(config);
    app.system_clipboard = crate::clipboard::system_tool();
    app.in_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    app.read_only = crate::client::identity::read_only();
    let loading = std::time::Instant::now();
    app.load_snapshot(snapshot, false);
    tracing::info!(ms = loading.elapsed().as_millis() as u64, "snapshot loaded");
    // The demo, with agents installed: say how to use them instead.
    if let Some(hint) = crate::init::demo_hint(config, &crate::doctor::Env::current()) {
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
    tty::install_panic_hook();
    let result = rt.block_on(async {
        let (terminal, guard) = tty::setup()?;
        let out = event_loop(&mut app, config, conn, terminal).await;
        drop(guard);
        out
    });
    tty::restore();
    result
}

/// What `hive` prints once the terminal is back, and its exit code.
/// What the console says as it ends; `again` is the command that attaches
/// to the same servers (`Endpoint::attach_command`).
/// `stopped` says what a stop did (`Endpoint::stop_line`).
pub fn report(ended: &Ended, server: &str, again: &str, stopped: &str) -> ExitCode {
    match ended {
        Ended::Detached => {
            println!("[detached from {server}: the agents keep working; `{again}` comes back]");
            ExitCode::SUCCESS
        }
        Ended::Stopped => {
            println!("[{stopped}]");
            ExitCode::SUCCESS
        }
        // The server's words (a remote one's too): never raw.
        Ended::ServerStopped(why) => {
            println!("[{}]", crate::sanitize::neutralize(why));
            ExitCode::SUCCESS
        }
        Ended::Lost(why) => {
            eprintln!(
                "hive: lost the server {server}: {}",
                crate::sanitize::neutralize(why)
            );
            ExitCode::FAILURE
        }
    }
}

async fn event_loop(
    app: &mut App,
    config: &Config,
    conn: Connection,
    mut terminal: screen::Screen<tty::Writer>,
) -> anyhow::Result<Ended> {
    ui::highlight::warm_up();
    let (search_tx, search_rx) = mpsc::unbounded_channel();
    let searcher = crate::search::Searcher::spawn(move |ev| {
        let _ = search_tx.send(ev);
    })
    .context("search worker")?;
    let (wake, woken) = wake_channel();
    app.wake = Some(wake);
    let Connection {
        sender,
        incoming,
        writer,
    } = conn;
    let requests = command::ServerRequests::new(sender.clone());
    let mut wiring = Wiring {
        incoming,
        sender,
        focused: None,
        drafts: vec![String::new(); app.panes.len()],
        typed: false,
        requests,
        searcher,
        search_rx,
        woken,
    };
    for (i, p) in app.panes.iter().enumerate() {
        wiring.drafts[i] = p.composer.text();
    }
    let ended = wiring.run(app, config, &mut terminal).await?;
    match &ended {
        Ended::Detached => wiring.sender.send(&ClientMsg::Detach),
        Ended::Stopped => {
            wiring.sender.send(&ClientMsg::Stop);
            // Back at the prompt only once the server has ended its agents
            // and gone, so a `hive` right after starts a new one.
            let gone = async {
                while let Some(msg) = wiring.incoming.recv().await {
                    if matches!(msg, FromServer::Lost(_)) {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(STOP_WAIT, gone).await;
        }
        Ended::ServerStopped(_) | Ended::Lost(_) => {}
    }
    drop(wiring);
    // The last words reach the server before the socket closes.
    let _ = tokio::time::timeout(Duration::from_millis(500), writer).await;
    Ok(ended)
}

/// What the loop listens to and talks to.
struct Wiring {
    /// What the server says; each message's bytes are given back to its
    /// link's budget as it is taken (src/client/inflight.rs).
    incoming: crate::client::Inbox,
    sender: Sender,
    /// The pane the server was last told this client looks at.
    focused: Option<usize>,
    /// Each pane's composer text as the server last heard it.
    drafts: Vec<String>,
    /// A key or a paste came in since the drafts were compared.
    typed: bool,
    /// Git, file and session requests for the server.
    requests: command::ServerRequests,
    searcher: crate::search::Searcher,
    search_rx: mpsc::UnboundedReceiver<crate::search::SearchEvent>,
    woken: Woken,
}

impl Wiring {
    /// Sends what the app queued for the server, the git service and the
    /// search worker (the terminal's bytes wait for the next frame), the
    /// focus when it moved and the drafts that changed.
    fn flush(&mut self, app: &mut App) {
        app.now = Instant::now().into_std();
        let out = Outlets {
            runners: Some(&self.sender),
            requests: Some(&self.requests),
            search: Some(&self.searcher),
            terminal: None,
        };
        // Without a terminal outlet nothing writes, so nothing can fail.
        let _ = dispatch(app, out);
        if self.focused != Some(app.focus) {
            self.sender.send(&ClientMsg::Focus(app.focus));
            self.focused = Some(app.focus);
        }
        if std::mem::take(&mut self.typed) {
            self.send_drafts(app);
        }
    }

    /// Tells the server each composer text that changed since it last heard.
    fn send_drafts(&mut self, app: &App) {
        self.drafts.resize(app.panes.len(), String::new());
        for (i, p) in app.panes.iter().enumerate() {
            let text = p.composer.text();
            if self.drafts[i] != text {
                self.sender.send(&ClientMsg::Draft {
                    pane: i,
                    text: text.clone(),
                });
                self.drafts[i] = text;
            }
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

    /// A message from the server; `Some` when the session is over.
    fn on_server(
        &mut self,
        app: &mut App,
        msg: FromServer,
        pace: &mut pace::Pace,
    ) -> Option<Ended> {
        app.now = Instant::now().into_std();
        match msg {
            FromServer::Update(update) => {
                apply_update(app, update, pace);
                // Take whatever else is queued before drawing.
                while let Ok(more) = self.incoming.try_recv() {
                    if let Some(ended) = self.on_server(app, more, pace) {
                        return Some(ended);
                    }
                }
            }
            FromServer::Snapshot(snap) => {
                app.load_snapshot(*snap, true);
                self.drafts = app.panes.iter().map(|p| p.composer.text()).collect();
                pace.soon();
            }
            FromServer::Layout(panes) => {
                if !app.relayout(panes) {
                    self.sender.send(&ClientMsg::Resync);
                }
                self.drafts = app.panes.iter().map(|p| p.composer.text()).collect();
                pace.soon();
            }
            FromServer::Reset { pane, snapshot } => {
                app.reset_pane(pane, *snapshot);
                pace.soon();
            }
            FromServer::Bye(why) => return Some(Ended::ServerStopped(why)),
            FromServer::Lost(why) => return Some(Ended::Lost(why)),
            FromServer::Link(state) => {
                on_link(app, state);
                pace.soon();
            }
            FromServer::Worktree(ev) => {
                app.on_worktree(ev);
                pace.soon();
            }
            FromServer::Files { pane, paths, .. } => {
                if app.on_files(pane, paths) {
                    pace.soon();
                }
            }
            FromServer::Sessions { pane, list } => {
                app.on_sessions(pane, list);
                pace.soon();
            }
            FromServer::Forge { pane, news } => {
                app.on_forge(pane, news);
                pace.soon();
            }
            FromServer::Heard { seq, panes } => app.heard(seq, panes),
            FromServer::Mutes { mutes, panes } => {
                app.set_mutes(&mutes, panes.as_deref());
                pace.soon();
            }
            FromServer::NotSent(why) => {
                app.status = Some((why, app.now + NOTICE_FOR));
                pace.soon();
            }
            FromServer::Notice { text, focus } => {
                if let Some(pane) = focus.filter(|&p| p < app.panes.len()) {
                    app.set_focus(pane);
                }
                app.status = Some((text, app.now + NOTICE_FOR));
                pace.soon();
            }
        }
        None
    }

    /// Redraws when paced, then waits for whatever comes first, until the
    /// user leaves, the terminal goes away, a signal arrives or the server
    /// ends.
    async fn run(
        &mut self,
        app: &mut App,
        config: &Config,
        terminal: &mut screen::Screen<tty::Writer>,
    ) -> anyhow::Result<Ended> {
        let mut events = tty::Input::start();
        let mut signals = Signals::new()?;
        let spin_every = ui::SPIN_EVERY;
        let mut view = ViewState::default();
        let mut pace = pace::Pace::new(config, Instant::now().into_std());
        pace.soon();
        let mut last_draw = Instant::now();
        loop {
            self.flush(app);
            match app.leave {
                Some(super::state::Leave::Detach) => return Ok(Ended::Detached),
                Some(super::state::Leave::Stop) => return Ok(Ended::Stopped),
                None => {}
            }
            let now = Instant::now();
            if pace.ready(now.into_std()) {
                app.now = now.into_std();
                draw(terminal, tty::area(), app, &mut view, &self.sender)?;
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
                        self.typed |= matches!(ev, Event::Key(_) | Event::Paste(_));
                        if handle_event(app, ev) {
                            pace.input(Instant::now().into_std());
                        }
                    }
                    Some(Err(e)) => {
                        tracing::error!("terminal input: {e}");
                        return Ok(Ended::Detached);
                    }
                    None => return Ok(Ended::Detached),
                },
                Some(msg) = self.incoming.recv() => {
                    if let Some(ended) = self.on_server(app, msg, &mut pace) {
                        return Ok(ended);
                    }
                }
                Some(ev) = self.search_rx.recv() => {
                    app.search_event(ev);
                    pace.soon();
                }
                Some(()) = self.woken.0.recv() => self.woken(app, &mut pace),
                _ = crate::timer::sleep_until(app.overlap_check_at.map(Instant::from_std)) => app.due_overlap_check(),
                sig = signals.next() => if on_signal(sig, terminal, &mut pace)? {
                    return Ok(Ended::Detached);
                },
                _ = timer::sleep_until(frame_at) => {}
                _ = timer::sleep_until(tick_at) => pace.soon(),
                _ = timer::sleep_until(status_at) => status_due(app, &mut pace),
            }
        }
    }
}

/// A remote server's link went down (the status bar says so until it is
/// back) or came back (a fresh snapshot follows).
fn on_link(app: &mut App, state: crate::client::LinkState) {
    use crate::client::LinkState;
    match state {
        LinkState::Reconnecting { host, attempt, why } => {
            let why = why.lines().next().unwrap_or("");
            app.link = Some(format!(
                "{host}: link lost ({why}), reconnecting (try {attempt})"
            ));
        }
        LinkState::Up { host } => {
            app.link = None;
            app.status = Some((format!("{host}: reconnected"), app.now + NOTICE_FOR));
        }
    }
}

/// How long a link notice stays in the status bar.
const NOTICE_FOR: Duration = Duration::from_secs(4);

/// One runner event from the server: it paces the next frame, then the app
/// applies it.
fn apply_update(app: &mut App, update: PaneUpdate, pace: &mut pace::Pace) {
    if app.shows(update.pane) {
        pace.update(&update, app.focus, app.now);
    } else {
        pace.unseen(&update, app.now);
    }
    app.apply(update);
}

fn on_signal(
    sig: Sig,
    terminal: &mut screen::Screen<tty::Writer>,
    pace: &mut pace::Pace,
) -> anyhow::Result<bool> {
    match sig {
        Sig::Quit(name) => {
            tracing::info!("{name}: detaching");
            return Ok(true);
        }
        Sig::Suspend => tty::suspend(terminal)?,
        Sig::Resume => tty::resume(terminal)?,
    }
    pace.soon();
    Ok(false)
}

/// The status line's time is up.
fn status_due(app: &mut App, pace: &mut pace::Pace) {
    app.now = Instant::now().into_std();
    if app.expire_status() {
        pace.soon();
    }
}

/// The process signals the console answers.
enum Sig {
    /// SIGTERM, SIGHUP (the terminal closed) or SIGINT (kill -INT; Ctrl+C
    /// is a key in raw mode): detach cleanly; the agents keep working.
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

/// When the status line goes away.
fn status_deadline(app: &App) -> Option<Instant> {
    let (_, until) = app.status.as_ref()?;
    Some(Instant::from_std(*until))
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
