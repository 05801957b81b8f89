//! ACP: every line through the engine (JSON-RPC framing, session updates,
//! agent requests including fs/*, which become jobs and are not run here).
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::acp_engine(data));
