//! The one place hive runs `git`: explicit argument vectors (never a shell
//! string), a clean environment for the variables that would redirect git,
//! and errors that carry git's own message.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::WorktreeError;

/// A git invocation rooted at one directory.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    dir: PathBuf,
    envs: Vec<(String, String)>,
}

impl Git {
    pub(crate) fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            envs: Vec::new(),
        }
    }

    /// The same directory with one more environment variable (a temporary index).
    pub(crate) fn with_env(&self, key: &str, value: impl AsRef<OsStr>) -> Self {
        let mut g = self.clone();
        g.envs.push((
            key.to_owned(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        g
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.arg("-C").arg(&self.dir);
        // Quiet, deterministic, never interactive.
        c.args(["-c", "core.quotepath=off", "-c", "color.ui=false"]);
        c.args(args);
        for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"] {
            c.env_remove(var);
        }
        c.env("GIT_TERMINAL_PROMPT", "0");
        c.env("GIT_EDITOR", "true");
        c.env("GIT_MERGE_AUTOEDIT", "no");
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        c.stdin(Stdio::null());
        c
    }

    /// Runs git and returns its raw output whatever the exit status.
    pub(crate) fn output(&self, args: &[&str]) -> Result<Output, WorktreeError> {
        self.command(args)
            .output()
            .map_err(|source| WorktreeError::Spawn { source })
    }

    /// Runs git; a non-zero exit is an error with git's stderr.
    pub(crate) fn run(&self, args: &[&str]) -> Result<String, WorktreeError> {
        let out = self.output(args)?;
        check(args, &out)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs git and returns the trimmed first line of its output.
    pub(crate) fn line(&self, args: &[&str]) -> Result<String, WorktreeError> {
        Ok(self
            .run(args)?
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned())
    }

    /// Runs git with `input` on stdin.
    pub(crate) fn run_with_input(
        &self,
        args: &[&str],
        input: &[u8],
    ) -> Result<String, WorktreeError> {
        let mut c = self.command(args);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c
            .spawn()
            .map_err(|source| WorktreeError::Spawn { source })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(input)
                .map_err(|source| WorktreeError::Spawn { source })?;
        }
        let out = child
            .wait_with_output()
            .map_err(|source| WorktreeError::Spawn { source })?;
        check(args, &out)?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// True when git exits 0 (for yes/no questions like "is this a branch?").
    pub(crate) fn succeeds(&self, args: &[&str]) -> bool {
        self.output(args).is_ok_and(|o| o.status.success())
    }
}

fn check(args: &[&str], out: &Output) -> Result<(), WorktreeError> {
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message = if stderr.trim().is_empty() {
        stdout.trim()
    } else {
        stderr.trim()
    };
    Err(WorktreeError::Git {
        command: format!("git {}", args.join(" ")),
        message: message.to_owned(),
    })
}
