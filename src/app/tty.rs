//! The terminal while hive owns it: raw mode, alternate screen, mouse
//! (buttons and wheel, not every motion), bracketed paste, disambiguated keys
//! where the terminal supports them; and a restore that is safe to call from
//! anywhere (normal exit, error, panic hook, signal), any number of times;
//! suspend (SIGTSTP) and resume (SIGCONT) for job control.

use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
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

pub type Writer = BufWriter<Stdout>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static KEYBOARD_FLAGS: AtomicBool = AtomicBool::new(false);
/// Asked once at setup: asking again while the event reader runs would race it.
static KEYBOARD_SUPPORTED: AtomicBool = AtomicBool::new(false);

/// Mouse buttons, drag and wheel in SGR encoding; no any-motion tracking,
/// which would wake hive on every pointer move.
pub const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";
pub const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1002l\x1b[?1000l";

/// Restores the terminal when dropped.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

pub fn check_tty() -> anyhow::Result<()> {
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        anyhow::bail!(
            "the console needs a terminal on stdin and stdout; for scripts use `hive run --agent ID PROMPT`"
        );
    }
    Ok(())
}

pub fn setup() -> anyhow::Result<(Screen<Writer>, Guard)> {
    KEYBOARD_SUPPORTED.store(
        crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false),
        Ordering::SeqCst,
    );
    enter()?;
    let guard = Guard;
    let backend = CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, io::stdout()));
    let mut screen = Screen::new(backend);
    screen.clear()?;
    Ok((screen, guard))
}

/// The terminal's size now (ratatui's autoresize asked the same each frame).
pub fn area() -> Rect {
    let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
    Rect::new(0, 0, w, h)
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
pub fn suspend(terminal: &mut Screen<Writer>) -> io::Result<()> {
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
pub fn resume(terminal: &mut Screen<Writer>) -> io::Result<()> {
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
pub fn restore() {
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
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        crate::provider::process::kill_all();
        tracing::error!("panic: {info}");
        previous(info);
    }));
}
