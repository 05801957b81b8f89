//! The hive server (issue 29): what outlives a console, and what it keeps for the clients that attach.

pub mod log;
