//! The PTY byte scanner: arbitrary child output, split at every chunk
//! boundary the input chooses, must classify the same as in one piece.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::pty_scan(data));
