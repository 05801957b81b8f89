//! Agents behind the runner: each provider's real captures replayed through
//! `support::Replay` (translator + upsert processor) and its fake CLI driven
//! through the runner; the lifecycle scenarios written once and run per
//! provider; the runner and the upsert processor themselves.
//!
//! One test binary (see tests/README.md): every `tests/*.rs` would link all
//! of hive's dependencies again.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

#[path = "../support/mod.rs"]
mod support;

mod accounts;
mod acp;
mod choices;
mod claude;
mod codex;
mod gemini;
mod hosts;
mod lifecycle;
mod limits;
mod openai;
mod openai_coding;
mod pi;
mod policy;
mod processor;
mod runner;
mod sandbox;
mod usage;
