//! The console without a terminal: an `App` fed runner events and keys, drawn
//! on ratatui's `TestBackend` and compared with insta snapshots, one module
//! per feature of the screen.
//!
//! One test binary (see tests/README.md): every `tests/*.rs` would link all
//! of hive's dependencies again.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/mod.rs"]
mod support;

mod across;
mod images;
mod lazy_layout;
mod pane_commands;
mod pane_polish;
mod pty;
mod restore;
mod sessions;
mod terminal_bytes;
mod ui;
mod windows;
mod worktree;
mod worktree_conflicts;
mod worktree_review;
