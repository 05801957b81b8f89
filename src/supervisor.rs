//! The supervisor: what survives a `kill -9` of hive.
//!
//! `hive` starts as a small supervisor that re-executes itself as the real
//! hive (marked by `HIVE_SUPERVISOR_PID`) and waits for it. Both are child
//! subreapers, so an agent's grandchildren — even ones that `setsid` or
//! double-fork — stay below them instead of escaping to init:
//! - the real hive sweeps all its descendants on every exit path
//!   (`provider::process::kill_all`);
//! - when the real hive dies without sweeping (`kill -9`, abort), its
//!   orphans are re-parented to the supervisor, which kills them all and
//!   exits with the same status;
//! - when the supervisor is killed, the real hive gets SIGTERM (parent-death
//!   signal) and quits through its normal, sweeping path.
//!
//! Signals sent to the supervisor with kill(2) are forwarded to the real
//! hive; ones the terminal generates already reach both (same process group)
//! and are not forwarded twice. When the real hive stops (job control), so
//! does the supervisor, so the shell sees the job stop. `HIVE_NO_SUPERVISOR=1`
//! runs hive directly (it is then still a subreaper that sweeps on exit).
//! The real hive reaps the orphans it adopts while it runs
//! (`reap::start_orphan_reaper`); the supervisor's wait loop reaps its own.

use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::provider::reap;

const ENV_PID: &str = "HIVE_SUPERVISOR_PID";
const ENV_OFF: &str = "HIVE_NO_SUPERVISOR";

/// The real hive's pid, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [i32; 8] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGTSTP,
    libc::SIGCONT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Call first thing in `main`. Returns `Some(code)` in the supervisor (the
/// real hive has run and exited; return the code), `None` in the real hive.
pub fn start() -> Option<ExitCode> {
    // A console client owns no agent: the server it attaches to (or starts,
    // in a session of its own) does, and must outlive it, so the client is
    // neither supervised nor a subreaper that would sweep the server away.
    if !cfg!(target_os = "linux") || is_console_client(std::env::args().skip(1)) {
        return None;
    }
    let me = std::process::id();
    // SAFETY: getppid(2) cannot fail.
    let parent = unsafe { libc::getppid() };
    let supervised = std::env::var(ENV_PID)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        == Some(parent);
    if supervised || std::env::var_os(ENV_OFF).is_some() {
        // SAFETY: still single-threaded (nothing has started a thread yet).
        unsafe { std::env::remove_var(ENV_PID) };
        reap::become_subreaper();
        if supervised {
            #[cfg(target_os = "linux")]
            // SAFETY: prctl with integer arguments.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                // The supervisor may have died before the line above.
                if libc::getppid() != parent {
                    libc::raise(libc::SIGTERM);
                }
            }
        }
        // After the parent-death signal is set: that is per thread.
        reap::start_orphan_reaper(crate::provider::process::is_tracked);
        return None;
    }
    match supervise(me) {
        Ok(code) => Some(code),
        Err(e) => {
            // Without a supervisor hive still works, with less protection.
            eprintln!("hive: cannot start the supervisor ({e}); running unsupervised");
            // SAFETY: single-threaded here.
            unsafe { std::env::set_var(ENV_OFF, "1") };
            reap::become_subreaper();
            reap::start_orphan_reaper(crate::provider::process::is_tracked);
            None
        }
    }
}

/// Whether these arguments run the console (`hive`, `hive attach`) or the
/// far end of an ssh link (`hive relay`), which are clients of a server
/// (the relay may start it, and must not sweep it away when the link
/// ends), rather than a command that runs agents itself.
fn is_console_client(mut args: impl Iterator<Item = String>) -> bool {
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => {
                args.next();
            }
            "--fresh" => {}
            a if a.starts_with("--config=") => {}
            "attach" | "relay" => return true,
            _ => return false,
        }
    }
    true
}

fn supervise(me: u32) -> std::io::Result<ExitCode> {
    reap::become_subreaper();
    let exe = std::env::current_exe()?;
    install_forwarding();
    let child = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(ENV_PID, me.to_string())
        .spawn()?;
    let pid = child.id() as i32;
    CHILD.store(pid, Ordering::SeqCst);
    let status = loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to a local.
        let got = unsafe { libc::waitpid(-1, &mut status, libc::WUNTRACED) };
        if got < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break None;
        }
        if got != pid {
            continue; // an orphan re-parented to us; reaped
        }
        if libc::WIFSTOPPED(status) {
            // Job control: stop with it; SIGCONT to the group resumes both.
            // SAFETY: raise(3) on ourselves.
            unsafe { libc::raise(libc::SIGSTOP) };
            continue;
        }
        break Some(status);
    };
    CHILD.store(0, Ordering::SeqCst);
    let killed = reap::sweep_descendants(true);
    if killed > 0 {
        eprintln!("hive: ended {killed} process(es) left behind by the agents");
    }
    drop(child);
    Ok(match status {
        Some(s) if libc::WIFEXITED(s) => ExitCode::from(libc::WEXITSTATUS(s) as u8),
        Some(s) if libc::WIFSIGNALED(s) => {
            let sig = libc::WTERMSIG(s);
            // Die the same way, so the shell reports it as it would have.
            // SAFETY: resetting a disposition and raising on ourselves.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            ExitCode::from(128u8.wrapping_add(sig as u8))
        }
        _ => ExitCode::FAILURE,
    })
}

extern "C" fn forward(sig: i32, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Terminal-generated signals (SI_KERNEL) already reached the real hive,
    // which shares our process group; only kill(2)/sigqueue ones (si_code <= 0)
    // are passed on.
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { info.as_ref().map_or(0, |i| i.si_code) };
    let child = CHILD.load(Ordering::SeqCst);
    // A hangup is different: the kernel sends it to the session leader (us)
    // only, so the real hive hears of a closed terminal from us.
    if (code <= 0 || sig == libc::SIGHUP) && child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(child, sig);
        }
    }
}

fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction with a valid handler and flags.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_console_client;

    fn args(s: &str) -> impl Iterator<Item = String> {
        s.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn only_the_console_and_attach_are_clients() {
        assert!(is_console_client(args("")));
        assert!(is_console_client(args("--config x.toml --fresh")));
        assert!(is_console_client(args("--config=x.toml attach")));
        assert!(is_console_client(args("attach work")));
        assert!(is_console_client(args("relay --start")));
        assert!(!is_console_client(args("serve")));
        assert!(!is_console_client(args("--config x.toml run demo hi")));
        assert!(!is_console_client(args("--config attach serve")));
        assert!(!is_console_client(args("--help")));
    }
}
