//! The hive server (issue 29): the process that owns the agents.
//!
//! It runs the runners and providers, the history recorders, the
//! operations host and the socket, and keeps every pane's conversation
//! ([`log`]) so that console clients can come and go: a client attaches,
//! gets a snapshot, then live events ([`clients`]), and may vanish at any
//! moment without any agent noticing. [`daemon`] starts a server in a
//! session of its own, finds the running ones, and stops them.

mod account;
mod approvals;
mod asks;
#[cfg(test)]
mod card_tests;
mod clients;
pub mod daemon;
mod door;
mod forge;
mod forge_console;
mod forge_keep;
mod forge_parts;
mod forge_trigger;
mod forge_types;
mod forge_verbs;
mod forge_watch;
mod handoff;
mod handoff_brief;
mod idle;
pub mod layout;
mod lists;
pub mod log;
mod looking;
mod move_package;
mod moves;
mod notifier;
mod pane;
mod panes;
mod relocate;
mod relocate_back;
mod relocate_in;
mod repos;
mod screens;
mod seen;
mod serve;
mod sizes;
mod starter;
mod teams;
mod viewers;
mod views;
mod worktrees;

pub use serve::run;
