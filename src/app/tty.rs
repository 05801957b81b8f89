//! The terminal while hive owns it: raw mode, alternate screen, mouse
//! (buttons and wheel, not every motion), bracketed paste, disambiguated keys
//! where the terminal supports them; and a restore that is safe to call from
//! anywhere (normal exit, error, panic hook, signal), any number of times;
//! suspend (SIGTSTP) and resume (SIGCONT) for job control.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;

use super::screen::Screen;

/// Frames go to a duplicate of stdout's descriptor, not through `Stdout`:
/// its line buffering split every frame holding a newline into two
/// writes (up to the last newline, then the rest on flush), so the
/// terminal read each frame in two parts and hive made twice the calls.
pub(crate) type Writer = BufWriter<std::fs::File>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static KEYBOARD_FLAGS: AtomicBool = AtomicBool::new(false);
/// Asked once at setup: asking again while the event reader runs would race it.
static KEYBOARD_SUPPORTED: AtomicBool = AtomicBool::new(false);

/// Mouse buttons, drag and wheel in SGR encoding; no any-motion tracking,
/// which would wake hive on every pointer move.
pub(crate) const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";
pub(crate) const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1002l\x1b[?1000l";

/// Restores the terminal when dropped.
pub(crate) struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

pub(crate) fn check_tty() -> anyhow::Result<()> {
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        anyhow::bail!(
            "the console needs a terminal on stdin and stdout; for scripts use `hive run --agent ID PROMPT`"
        );
    }
    Ok(())
}

pub(crate) fn setup() -> anyhow::Result<(Screen<Writer>, Guard)> {
    KEYBOARD_SUPPORTED.store(
        crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false),
        Ordering::SeqCst,
    );
    enter()?;
    let guard = Guard;
    let out = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let backend = CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, out));
    let mut screen = Screen::new(backend);
    screen.clear()?;
    Ok((screen, guard))
}

/// The terminal's size now (ratatui's autoresize asked the same each frame).
/// Asked of stdout (checked to be the terminal at startup) with one ioctl:
/// crossterm's `size` opens and closes /dev/tty on every call, three system
/// calls a frame.
pub(crate) fn area() -> Rect {
    let (w, h) = stdout_size()
        .or_else(|| crossterm::terminal::size().ok())
        .unwrap_or((80, 24));
    Rect::new(0, 0, w, h)
}

fn stdout_size() -> Option<(u16, u16)> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0 && size.ws_row > 0).then_some((size.ws_col, size.ws_row))
}

/// Raw mode, alternate screen, paste, mouse and key flags.
fn enter() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        cursor::Hide
    )?;
    out.write_all(MOUSE_ON.as_bytes())?;
    // Lets Ctrl+Enter and Shift+Enter reach hive on terminals that can say so.
    if KEYBOARD_SUPPORTED.load(Ordering::SeqCst) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        KEYBOARD_FLAGS.store(true, Ordering::SeqCst);
    }
    out.flush()
}

/// Job control (SIGTSTP, Ctrl+Z): gives the terminal back to the shell,
/// stops until SIGCONT, then takes it again and redraws everything.
pub(crate) fn suspend(terminal: &mut Screen<Writer>) -> io::Result<()> {
    restore();
    // SAFETY: raise(3) on ourselves; SIGSTOP cannot be caught, so this
    // returns only once the process is continued.
    unsafe {
        libc::raise(libc::SIGSTOP);
    }
    resume(terminal)
}

/// After SIGCONT: the shell may have reset the terminal while hive was
/// stopped (also by a plain SIGSTOP, which hive cannot see coming), so the
/// modes are set again and the whole screen is redrawn.
pub(crate) fn resume(terminal: &mut Screen<Writer>) -> io::Result<()> {
    restore();
    enter()?;
    // Not `terminal.clear()`: it asks the terminal for the cursor position,
    // which races the running event reader. Clear the screen ourselves and
    // make the last frame's buffer blank, so the next draw repaints it all.
    execute!(
        io::stdout(),
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
    )?;
    terminal.forget();
    Ok(())
}

/// Puts the terminal back. Never panics; does nothing the second time.
pub(crate) fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if KEYBOARD_FLAGS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = out.write_all(MOUSE_OFF.as_bytes());
    // Frames leave their last colours set (`app::emit`).
    // Frames leave the scroll margins set too (`app::screen`).
    let _ = out.write_all(b"\x1b[0m\x1b[r");
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// On panic: restore the terminal and end every agent before the message
/// is printed, so the message lands on a sane screen.
pub(crate) fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if crate::contain::panicking_contained() {
            // One pane's emulator: caught, that pane ends, the screen stays.
            tracing::error!("contained panic: {info}");
            return;
        }
        restore();
        // The console owns no agent (the server does): it ends nothing else.
        tracing::error!("panic: {info}");
        previous(info);
    }));
}

/// Terminal input, read by a task of its own and handed over on a channel.
/// Polling crossterm's `EventStream` costs a lock attempt (which spins and
/// yields while its reader thread holds the lock) and a zero-timeout poll of
/// the tty; the loop polls every source each time anything wakes it (about
/// once per agent update), so only this task polls the stream, and only
/// when its reader has seen input. Dropping it stops the reader, as dropping
/// the stream did.
pub(crate) struct Input {
    rx: tokio::sync::mpsc::UnboundedReceiver<io::Result<crossterm::event::Event>>,
    task: tokio::task::JoinHandle<()>,
}

impl Input {
    pub(crate) fn start() -> Self {
        use futures::StreamExt;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut events = crossterm::event::EventStream::new();
            while let Some(ev) = events.next().await {
                let failed = ev.is_err();
                if tx.send(ev).is_err() || failed {
                    break;
                }
            }
        });
        Self { rx, task }
    }

    /// The next input event; `None` once the terminal's input has ended.
    pub(crate) async fn next(&mut self) -> Option<io::Result<crossterm::event::Event>> {
        self.rx.recv().await
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        self.task.abort();
    }
}
