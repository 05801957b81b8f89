//! Who this console is, for the server's memory of what each console saw
//! and dismissed (`ClientMsg::Identify`, src/server/seen.rs; #46 item 8).
//!
//! As tmux names a client by its terminal, a console is its terminal: the
//! user, the machine, the terminal device and the terminal's session (the
//! shell it was started from). So the same console comes back as itself
//! after a detach and `hive attach`, a reconnect, or a `kill -9` and a
//! restart from the same shell; a console in another terminal (or in a new
//! window that got the same device) is another console. `HIVE_CONSOLE`
//! names it instead, when set (one identity for several terminals, or a
//! script's). A console with no terminal says nothing: each connection of
//! it is a console of its own.
//!
//! A console may also say it only looks (`hive attach --read-only`, issue
//! 47): one console process is one console, so its role is the process's,
//! said on every connection it makes (a reconnect, each server of a grid).

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once, before the console attaches: it only looks.
static READ_ONLY: AtomicBool = AtomicBool::new(false);

/// This console only looks (`hive attach --read-only`): every connection
/// it makes from now on tells its server so (`ClientMsg::ReadOnly`).
pub fn set_read_only() {
    READ_ONLY.store(true, Ordering::Relaxed);
}

/// Whether this console only looks.
pub fn read_only() -> bool {
    READ_ONLY.load(Ordering::Relaxed)
}

/// The variable that names this console, when set.
pub const ENV: &str = "HIVE_CONSOLE";

/// This console's identity, if it has one.
pub fn console_identity() -> Option<String> {
    if let Some(named) = std::env::var(ENV).ok().filter(|v| !v.trim().is_empty()) {
        return Some(named);
    }
    let tty = terminal()?;
    // SAFETY: getuid, getpid and getsid(0) only read this process's ids.
    let (uid, pid, sid) = unsafe { (libc::getuid(), libc::getpid(), libc::getsid(0)) };
    let mut id = format!("{uid}@{}:{tty}", host());
    // Started from a shell: its session outlives this process. A console
    // that leads its own session (a terminal's command) has only the
    // terminal.
    if sid > 0 && sid != pid {
        id.push_str(&format!(":{sid}"));
    }
    Some(id)
}

/// The terminal device of stdin, stdout or stderr.
fn terminal() -> Option<String> {
    let mut buf = [0 as libc::c_char; 256];
    (0..3).find_map(|fd| {
        // SAFETY: ttyname_r writes at most `buf.len()` bytes, NUL-terminated
        // on success, into a buffer we own.
        let ok = unsafe {
            libc::isatty(fd) == 1 && libc::ttyname_r(fd, buf.as_mut_ptr(), buf.len()) == 0
        };
        // SAFETY: on success the buffer holds a NUL-terminated string.
        ok.then(|| {
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        })
    })
}

fn host() -> String {
    let mut buf = [0 as libc::c_char; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into our buffer;
    // the last byte stays NUL whatever it writes.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr(), buf.len() - 1) } == 0;
    if !ok {
        return "localhost".into();
    }
    // SAFETY: NUL-terminated (the last byte was never written).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_a_name() {
        let h = host();
        assert!(!h.is_empty() && !h.chars().any(char::is_control), "{h:?}");
    }
}
