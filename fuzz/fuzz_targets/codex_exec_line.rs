//! `codex exec --json`: every line through the turn translator.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::codex_exec_line(data));
