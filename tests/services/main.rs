//! The library's services on real files and processes, without the console:
//! the event schema, registry and config, the history store, worktrees on
//! temporary git repositories, hive's operations, the fuzz regressions.
//!
//! One test binary (see tests/README.md): every `tests/*.rs` would link all
//! of hive's dependencies again.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/mod.rs"]
mod support;

mod conflicts;
mod forge;
mod fuzz_regressions;
mod history;
mod ops;
mod procstat;
mod schema;
mod workspace;
mod worktree;
mod worktree_review;
