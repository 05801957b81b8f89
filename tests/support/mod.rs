//! Harnesses shared by the test binaries (declared once in each binary's
//! `main.rs`, and by `e2e_tmux.rs` and `e2e_real.rs`): the fake-agent driver (a runner or a
//! bare provider over a script from tests/fake, bounded waits, what it saw),
//! process liveness, the replay of captures through a translator and the
//! upsert processor, and runner scenarios shared by fake and real agents.
//!
//! - `driver`: `Pane` (a provider behind a runner) and `Live` (a bare
//!   provider), both a `Watch` over their event channel.
//! - `procs`: pids, process groups, the fakes' JSON-lines records.
//! - `replay`: `Replay`, which a test feeds with its translator's output.
//! - `scenario`: steps written once for the fake and the real Claude CLI.
//! - `git`: temporary git repositories (the worktree tests).
//! - `tmux`: a private tmux server driving the real binary (end-to-end).
//! - `console`: the app drawn on a test backend, keys and pastes fed in.
//! - `sshd`: a real OpenSSH server on 127.0.0.1 for the remote tests.
#![allow(dead_code, unused_imports)] // each test binary uses a different subset

pub mod console;
pub mod driver;
pub mod git;
pub mod procs;
pub mod replay;
pub mod scenario;
pub mod sshd;
pub mod tmux;

pub use driver::*;
pub use procs::*;
pub use replay::{Replay, timeline};
