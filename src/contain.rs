//! A panic kept to one pane: the terminal emulator (third-party code fed by
//! an untrusted program) runs inside [`contained`], and the panic hooks of
//! the server and the console ask [`panicking_contained`] before they end
//! every agent or touch the terminal. A leaf, so both processes' hooks can
//! ask without importing the providers.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    /// This thread runs the emulator inside [`contained`].
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a panic now is one [`contained`] catches: the panic hooks of the
/// server and the console then neither end every agent nor touch the
/// terminal; the pane alone ends.
pub fn panicking_contained() -> bool {
    CONTAINED.with(Cell::get)
}

/// Runs `f` (the emulator on a child's bytes), a panic caught and told as
/// its message: vt100 is third-party code fed by an untrusted program, and
/// one pane's emulator must not end the server.
pub fn contained<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let outer = CONTAINED.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(outer));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned())
    })
}
