//! One bounded run of a forge CLI (or of `git push` for it): its own process
//! group, no stdin (nothing can prompt), no pager, no colours, output read
//! up to a cap, and a deadline after which the whole group is killed. A
//! forge call never hangs hive, whatever the network or the CLI does.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::ForgeError;

/// What is kept of a CLI's stdout (a PR's JSON with its comments, a
/// failed log: the caller cuts the log further).
pub const STDOUT_CAP: u64 = 8 * 1024 * 1024;
/// What is kept of its stderr (the error message).
const STDERR_CAP: u64 = 64 * 1024;

/// How a finished run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The exit status (`-1`: ended by a signal).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program args` in `cwd` for at most `timeout`. `Err` only when it
/// could not start or ran out of time; a non-zero exit is the caller's to
/// read.
pub fn run(program: &str, args: &[&str], cwd: &Path, timeout: Duration) -> Result<Ran, ForgeError> {
    run_env(program, args, cwd, timeout, &[])
}

/// [`run`] with `env` set besides (a trigger's gate gets its event so).
pub fn run_env(
    program: &str,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<Ran, ForgeError> {
    let command = describe(program, args);
    let mut cmd = quiet(program, args, cwd);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ForgeError::Missing {
            program: program.to_owned(),
            hint: install_hint(program),
        },
        _ => ForgeError::Failed {
            command: command.clone(),
            message: format!("cannot start it: {e}"),
        },
    })?;
    let read = |r: Option<Box<dyn Read + Send>>, cap: u64| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.by_ref().take(cap).read_to_end(&mut buf);
                // Drain the rest so the child is never blocked on a full
                // pipe; it is not kept.
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        STDOUT_CAP,
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        STDERR_CAP,
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    // The whole group, finished or not: a CLI's helpers (ssh, a credential
    // helper) go too, and their pipes close so the readers end.
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: signalling the process group of our own child.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.wait();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        Some(status) => Ok(Ran {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr,
        }),
        None => Err(ForgeError::Timeout {
            command,
            secs: timeout.as_secs().max(1),
        }),
    }
}

/// The command, unable to wait for a person: no stdin, no prompts,
/// pagers, update checks, colour codes or credential helpers asking; its
/// own process group, so a timeout ends its helpers too.
fn quiet(program: &str, args: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("GH_PROMPT_DISABLED", "1")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("GH_PAGER", "cat")
        .env("PAGER", "cat")
        .env("NO_COLOR", "1")
        .env("CLICOLOR", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .env("SSH_ASKPASS", "true")
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .process_group(0);
    cmd
}

/// `program args…` for messages, each argument cut to a readable length
/// (a PR body is an argument).
pub fn describe(program: &str, args: &[&str]) -> String {
    let mut out = program.to_owned();
    for a in args.iter().take(6) {
        out.push(' ');
        let short: String = a.chars().take(40).collect();
        out.push_str(&short);
        if short.len() < a.len() {
            out.push('…');
        }
    }
    if args.len() > 6 {
        out.push_str(" …");
    }
    crate::sanitize::neutralize(&out).into_owned()
}

fn install_hint(program: &str) -> String {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    match name {
        "gh" => "install the GitHub CLI (https://cli.github.com), run `gh auth login`, \
                 or name it in `[forge] gh = \"/path/to/gh\"`"
            .into(),
        "git" => "install git".into(),
        _ => format!("install `{name}` or name its path in the config's `[forge]` table"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_says_how_to_get_it() {
        let err = run(
            "/nonexistent/gh",
            &["--version"],
            Path::new("/"),
            Duration::from_secs(5),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ForgeError::Missing { .. }), "{err:?}");
        assert!(text.contains("cli.github.com"), "{text}");
    }

    #[test]
    fn a_hung_program_is_stopped_at_its_deadline_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let start = Instant::now();
        let err = run(
            "sh",
            &["-c", &script],
            dir.path(),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(matches!(err, ForgeError::Timeout { .. }), "{err:?}");
        // The background sleep went with its group.
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        // SAFETY: signal 0 only asks whether the process exists.
        while unsafe { libc::kill(pid, 0) } == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the child outlived it");
    }

    #[test]
    fn output_past_the_cap_is_dropped_and_the_run_still_ends() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            "sh",
            &["-c", "head -c 20000000 /dev/zero; echo done >&2; exit 3"],
            dir.path(),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(ran.code, 3);
        assert_eq!(ran.stdout.len() as u64, STDOUT_CAP);
        assert_eq!(ran.stderr.trim(), "done");
    }
}
