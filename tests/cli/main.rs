//! The real `hive` binary as a user or a script runs it (subprocess, pty or a
//! private tmux), with fake agents: `hive run`, `hive ctl`, `hive doctor`,
//! `hive mcp`, `hive worktree`, and the promises of docs/security.md.
//!
//! One test binary (see tests/README.md): every `tests/*.rs` would link all
//! of hive's dependencies again.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/mod.rs"]
mod support;

#[path = "../support/openai_server.rs"]
mod openai_server;

mod ctl;
mod doctor;
mod init;
mod mcp;
mod run;
mod trust;
mod workspace;
mod worktree;
