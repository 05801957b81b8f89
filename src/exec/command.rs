//! The command line a host wraps, and what it becomes: the leaf of the
//! exec transport, which the ssh kind (src/remote/ssh.rs) shares.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to run inside the host: the command line a provider would have run
/// on this machine.
#[derive(Debug, Clone, Copy)]
pub struct Inner<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// Absolute; the agent's working directory.
    pub cwd: Option<&'a Path>,
    pub env: &'a BTreeMap<String, String>,
    /// A terminal pane (`ssh -tt`, `docker exec -t`).
    pub tty: bool,
}

/// The command line hive runs here instead: the transport's program, its
/// arguments (ending in the inner command), and the local process's
/// working directory and environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wrapped {
    pub program: String,
    pub args: Vec<String>,
    /// The local process's cwd (`None`: hive's own).
    pub cwd: Option<PathBuf>,
    /// Set on the local process (the transport passes them in, by name
    /// where it can, so no value sits on a command line).
    pub env: BTreeMap<String, String>,
}

impl Wrapped {
    /// The whole argv, program first.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}
