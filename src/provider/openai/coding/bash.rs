//! The `bash` tool: a command in the agent's cwd, in a process group of its
//! own that hive's exit sweep knows (`process::register_group`), so a
//! timeout, an interrupt (the call's future is dropped) or hive's exit ends
//! everything it started. Its output streams into the tool widget as it
//! comes and the model gets its tail.
//!
//! A child that leaves the group (`setsid`, a double fork) ends with the
//! call too (#53 item 11): the shell hive starts is a child subreaper
//! (Linux), so whatever the command orphans is re-parented to it rather
//! than to init; the command runs in a subshell, and when it is done the
//! shell kills what was re-parented to it ([`WRAPPER`]). A call that is
//! dropped or times out kills the shell's whole process tree, found in
//! /proc, before its group.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio::sync::mpsc;

use crate::exec::{ExecHost, Inner, Resources};

use crate::provider::process::{die_with_parent, register_group, signal_group, unregister_group};

/// How long a command may run when the call names no `timeout_ms`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a call may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(1800);
/// The output tail the model gets.
pub(crate) const MAX_OUTPUT: usize = 32 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashArgs {
    pub command: String,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// The shell script that runs the command (`$1`) in a subshell, then
/// kills what it left re-parented to this shell (as a subreaper) until
/// nothing is left, and exits with the command's status. `read` is a
/// builtin: the loop itself adds no child to the list it reads.
const WRAPPER: &str = r#"( eval "$1" ) </dev/null
s=$?
n=0
while [ "$n" -lt 500 ]; do
  k=
  read -r k </proc/$$/task/$$/children 2>/dev/null
  [ -n "$k" ] || break
  kill -9 $k 2>/dev/null
  n=$((n + 1))
done
exit "$s""#;

/// Kills the group when the call ends, whichever way (drop included):
/// first the shell's whole tree (what left the group is still in it), then
/// the group.
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        kill_tree(self.0);
        signal_group(self.0, libc::SIGKILL);
        unregister_group(self.0);
    }
}

/// The most processes one call's tree is searched for (a fork bomb must
/// not make hive read /proc forever).
const MAX_TREE: usize = 4096;

/// SIGKILLs every descendant of `pid` (its children lists in /proc, Linux).
fn kill_tree(pid: i32) {
    if pid <= 0 {
        return;
    }
    let mut todo = vec![pid];
    let mut found = Vec::new();
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for k in kids
                .split_whitespace()
                .filter_map(|k| k.parse::<i32>().ok())
            {
                if found.len() < MAX_TREE && !found.contains(&k) {
                    found.push(k);
                    todo.push(k);
                }
            }
        }
    }
    for k in found {
        // SAFETY: kill(2) on a descendant of the shell this call started.
        unsafe { libc::kill(k, libc::SIGKILL) };
    }
}

/// Makes the shell a child subreaper: what its command orphans stays in
/// its tree (Linux; elsewhere the group is all there is).
fn subreaper(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Runs the command; `live` gets each piece of output as it arrives.
pub(crate) async fn run(
    cwd: &Path,
    exec: (Option<&ExecHost>, &Resources),
    args: BashArgs,
    live: impl Fn(&str) + Send,
) -> Result<String, String> {
    let timeout = args
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
        .min(MAX_TIMEOUT);
    let mut child = spawn(cwd, &args.command, exec)?;
    let pgid = child.id().map_or(0, |p| p as i32);
    register_group(pgid);
    let _group = Group(pgid);
    let mut rx = output_of(&mut child);
    let mut out = Tail::default();
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let status = loop {
        tokio::select! {
            s = child.wait() => break s.ok(),
            Some(chunk) = rx.recv() => {
                live(&chunk);
                out.push(&chunk);
            }
            () = &mut deadline => {
                kill_tree(pgid);
                signal_group(pgid, libc::SIGKILL);
                return Err(format!(
                    "timed out after {} ms; the command was killed. Output so far:\n{}",
                    timeout.as_millis(),
                    out.text()
                ));
            }
        }
    };
    // The shell is done: what it left running goes, its output is drained.
    signal_group(pgid, libc::SIGKILL);
    // At most half a second: a child that left the group may keep a pipe.
    let drained = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(chunk)) = tokio::time::timeout_at(drained, rx.recv()).await {
        live(&chunk);
        out.push(&chunk);
    }
    match status.and_then(|s| s.code()) {
        Some(0) => Ok(out.text()),
        Some(code) => Err(format!("exit code {code}\n{}", out.text())),
        None => Err(format!(
            "the command was killed by a signal\n{}",
            out.text()
        )),
    }
}

/// bash in its own process group in `cwd`, running `command` under the
/// wrapper; it dies with hive and its orphans come back to it.
/// On the agent's host and under its limits (issue 49), the same bash
/// line wrapped: a sandboxed agent's commands run in its box.
fn spawn(
    cwd: &Path,
    command: &str,
    (host, limits): (Option<&ExecHost>, &Resources),
) -> Result<tokio::process::Child, String> {
    let args = ["-c", WRAPPER, "bash", command].map(str::to_owned);
    let env = Default::default();
    let run = crate::exec::command_line(
        host,
        limits,
        &Inner {
            program: "bash",
            args: &args,
            cwd: Some(cwd),
            env: &env,
            tty: false,
        },
    )
    .map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&run.program);
    cmd.args(&run.args)
        .envs(&run.env)
        .current_dir(run.cwd.as_deref().unwrap_or(cwd))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    subreaper(&mut cmd);
    cmd.spawn()
        .map_err(|e| format!("could not start bash: {e}"))
}

/// The child's stdout and stderr as one stream of chunks, in arrival order;
/// it ends when both pipes close.
fn output_of(child: &mut tokio::process::Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel::<String>(64);
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
    ]
    .into_iter()
    .flatten()
    {
        tokio::spawn(pump(pipe, tx.clone()));
    }
    rx
}

async fn pump(mut pipe: Box<dyn tokio::io::AsyncRead + Send + Unpin>, tx: mpsc::Sender<String>) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0
            || tx
                .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                .await
                .is_err()
        {
            break;
        }
    }
}

/// The last `MAX_OUTPUT` bytes of the output, and whether more came before.
#[derive(Default)]
struct Tail {
    text: String,
    cut: bool,
}

impl Tail {
    fn push(&mut self, chunk: &str) {
        self.text.push_str(chunk);
        if self.text.len() > MAX_OUTPUT {
            let mut from = self.text.len() - MAX_OUTPUT;
            while !self.text.is_char_boundary(from) {
                from += 1;
            }
            self.text.drain(..from);
            self.cut = true;
        }
    }

    fn text(&self) -> String {
        if self.cut {
            format!("[earlier output cut]\n{}", self.text)
        } else {
            self.text.clone()
        }
    }
}
