//! The `acp` provider: real captures of claude-code-acp, codex-acp and
//! `gemini --acp` replayed through the engine and the upsert processor
//! (acp/replay.rs), lifecycle tests against a fake ACP agent
//! (acp/live.rs, tests/fake/fake_acp.py), and the engine's timers driven
//! with explicit time (acp/timers.rs).
//!
//! Expected values are derived from the captures themselves (the chunks the
//! agent sent, the options it offered), never typed in by hand.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;
use support::{Replay, alive, fake_command, jsonl, timeline};

use std::collections::{HashMap, VecDeque};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hive::config::AgentConfig;
use hive::event::{FinalItem, Origin, Payload, ResponseStatus};
use hive::provider::acp::AcpFactory;
use hive::provider::acp::engine::{Effect, Engine, EngineConfig};
use hive::provider::{
    DiagnosticLevel, PermissionDecision, PermissionRequest, ProviderCommand, ProviderError,
    ProviderEvent, ProviderFactory, ProviderSpec,
};
use hive::upsert::{TurnEvent, TurnStatus, UpsertStatus};
use serde_json::{Value, json};
use tokio::time::Instant;

const CAPTURE_CWD: &str = "/tmp/hive-lab-work";
const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

#[path = "acp/card.rs"]
mod card;
#[path = "acp/harness.rs"]
mod harness;
#[path = "acp/live.rs"]
mod live;
#[path = "acp/replay.rs"]
mod replays;
#[path = "acp/timers.rs"]
mod timers;

use harness::*;
