//! The history loader: a session file read whole and read backwards in
//! windows (torn lines, garbage, huge records), then assembled into items.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::history_load(data));
