//! hive: a terminal console for running several AI coding agents side by side.
//!
//! Data flows one way (DESIGN §1): `provider` tasks drive agents and emit
//! canonical `event`s; the `runner` feeds them through the upsert `processor`
//! and sends `PaneEvent`s to the app, which renders them.

pub mod app;
pub mod backlog;
pub mod budget;
pub mod cli;
pub mod client;
pub(crate) mod clipboard;
pub mod config;
pub mod contain;
pub mod control;
pub mod doctor;
pub mod exec;
pub(crate) mod files;
pub mod forge;
pub(crate) mod heap;
pub mod history;
pub mod init;
pub mod keymap;
pub mod lines;
pub(crate) mod log;
pub mod notify;
pub mod ops;
pub mod panes;
pub(crate) mod paths;
pub mod policy;
pub(crate) mod private;
pub mod processor;
pub mod procstat;
pub mod project;
pub mod protocol;
pub mod provider;
pub mod remote;
pub mod runner;
pub mod runtime;
pub(crate) mod sanitize;
pub mod search;
pub mod server;
pub mod supervisor;
pub mod theme;
pub mod timer;
pub mod ui;
pub(crate) mod web;
pub mod worktree;

// The protocol room's modules at their old paths, for code that still
// names them there (issue 44 moves the boundary into `protocol`).
pub use protocol as wire;
pub use protocol::{event, image, text, upsert};
