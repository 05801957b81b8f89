//! pi RPC mode: every line through the translator, in a turn.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::pi_line(data));
