//! The `bash` tool: a command in the agent's cwd, in a process group of its
//! own that hive's exit sweep knows (`process::register_group`), so a
//! timeout, an interrupt (the call's future is dropped) or hive's exit ends
//! everything it started. Its output streams into the tool widget as it
//! comes and the model gets its tail.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio::sync::mpsc;

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

/// Kills the group when the call ends, whichever way (drop included).
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        signal_group(self.0, libc::SIGKILL);
        unregister_group(self.0);
    }
}

/// Runs the command; `live` gets each piece of output as it arrives.
pub(crate) async fn run(
    cwd: &Path,
    args: BashArgs,
    live: impl Fn(&str) + Send,
) -> Result<String, String> {
    let timeout = args
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
        .min(MAX_TIMEOUT);
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(&args.command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start bash: {e}"))?;
    let pgid = child.id().map_or(0, |p| p as i32);
    register_group(pgid);
    let _group = Group(pgid);
    let (tx, mut rx) = mpsc::channel::<String>(64);
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
    drop(tx);
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
