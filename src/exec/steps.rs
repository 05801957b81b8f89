//! Create and stop steps: short commands of the engine's own (`docker run
//! -d`, `devcontainer up`, `kubectl apply`), run before a pane's first
//! agent and when hive is done. Each has a time limit and its stderr is
//! the error's text, so a missing daemon or cluster is a clear start error
//! in the pane, never a hang.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::{ExecError, ExecHost};

/// How long a create step may take (an image pull, a pod scheduled).
const STEP_LIMIT: Duration = Duration::from_secs(300);
/// How long a stop step may take when hive exits.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// One command of a host's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub what: String,
    /// Run first: its success means the step is done already.
    pub unless: Option<Vec<String>>,
    pub argv: Vec<String>,
}

impl Step {
    pub fn new(what: &str, argv: Vec<String>) -> Self {
        Self {
            what: what.to_owned(),
            unless: None,
            argv,
        }
    }

    pub fn unless(what: &str, probe: Vec<String>, argv: Vec<String>) -> Self {
        Self {
            unless: Some(probe),
            ..Self::new(what, argv)
        }
    }
}

/// Runs `argv` to its end within `limit`: Ok, or what it said.
pub fn run(argv: &[String], limit: Duration) -> Result<(), String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("an empty command line".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    // Read on a thread of its own, so a chatty step never blocks on its pipe.
    let said = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut pipe).take(64 * 1024).read_to_end(&mut buf);
            buf
        })
    });
    let end = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // The whole group: a step's own children keep no pipe open.
                // SAFETY: kill(2) on the group this call started.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!("no answer within {} s", limit.as_secs()));
            }
        }
    };
    if status.success() {
        return Ok(());
    }
    let said = said.and_then(|t| t.join().ok()).unwrap_or_default();
    let said = crate::sanitize::neutralize(String::from_utf8_lossy(&said).trim()).into_owned();
    Err(if said.is_empty() {
        format!("it ended with {status}")
    } else {
        said
    })
}

/// Runs each step whose probe fails.
pub fn run_steps(host: &str, steps: &[Step], limit: Duration) -> Result<(), ExecError> {
    for s in steps {
        if let Some(probe) = &s.unless
            && run(probe, limit).is_ok()
        {
            continue;
        }
        run(&s.argv, limit).map_err(|detail| ExecError::Step {
            host: host.to_owned(),
            what: s.what.clone(),
            argv: s.argv.join(" "),
            detail,
        })?;
    }
    Ok(())
}

/// Hosts made by this process, by host and pane, with their cwd.
type Made = Mutex<HashMap<(String, String), (ExecHost, Option<PathBuf>)>>;

fn made() -> &'static Made {
    static MADE: OnceLock<Made> = OnceLock::new();
    MADE.get_or_init(Default::default)
}

/// The create steps of `host` for its pane, once per hive process (a
/// CLI started per turn does not pay for a probe each turn).
pub fn prepare(host: &ExecHost, cwd: Option<&Path>) -> Result<(), ExecError> {
    let steps = host.create_steps(cwd);
    if steps.is_empty() {
        return Ok(());
    }
    let key = (host.name.clone(), host.pane.id.clone());
    if made().lock().is_ok_and(|m| m.contains_key(&key)) {
        return Ok(());
    }
    run_steps(&host.name, &steps, STEP_LIMIT)?;
    if let Ok(mut m) = made().lock() {
        m.insert(key, (host.clone(), cwd.map(Path::to_owned)));
    }
    Ok(())
}

/// Hosts made for a pane, with its cwd: what their stop steps need.
pub type MadeHosts = Vec<(ExecHost, Option<PathBuf>)>;

/// Runs the stop steps of every host this process made (hive's exit).
pub fn stop_all() {
    let hosts: MadeHosts = made()
        .lock()
        .map(|mut m| m.drain().map(|(_, v)| v).collect())
        .unwrap_or_default();
    stop(hosts);
}

/// Takes pane `id`'s own containers out of the hosts made (its pane
/// closed): `stop` removes them once its agent has stopped. A host that
/// other panes may share (a devcontainer of a directory, a kubectl pod,
/// a container of the user's) stays until hive exits.
pub fn take_pane(id: &str) -> MadeHosts {
    let Ok(mut m) = made().lock() else {
        return Vec::new();
    };
    let keys: Vec<(String, String)> = m
        .iter()
        .filter(|((_, pane), (host, _))| pane == id && host.per_pane())
        .map(|(k, _)| k.clone())
        .collect();
    keys.iter().filter_map(|k| m.remove(k)).collect()
}

/// Runs the stop steps of `hosts` (each within its time limit).
pub fn stop(hosts: MadeHosts) {
    for (host, cwd) in hosts {
        if let Err(e) = run_steps(&host.name, &host.stop_steps(cwd.as_deref()), STOP_LIMIT) {
            tracing::warn!("{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_failing_step_says_what_its_program_said() {
        let steps = [Step::new(
            "create it",
            argv(&[
                "sh",
                "-c",
                "echo 'Cannot connect to the daemon' >&2; exit 1",
            ]),
        )];
        let e = run_steps("box", &steps, Duration::from_secs(30)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "host `box`: create it (`sh -c echo 'Cannot connect to the daemon' >&2; exit 1`) \
             failed: Cannot connect to the daemon"
        );
    }

    #[test]
    fn a_step_whose_probe_succeeds_is_skipped_and_a_hung_one_is_cut() {
        let skipped = [Step::unless("x", argv(&["true"]), argv(&["false"]))];
        assert!(run_steps("box", &skipped, Duration::from_secs(30)).is_ok());
        let hung = [Step::new("wait", argv(&["sleep", "30"]))];
        let e = run_steps("box", &hung, Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("no answer within 0 s"), "{e}");
        let missing = [Step::new("go", argv(&["/nonexistent/engine"]))];
        let e = run_steps("box", &missing, Duration::from_secs(30)).unwrap_err();
        assert!(
            e.to_string()
                .contains("could not start `/nonexistent/engine`"),
            "{e}"
        );
    }
}
