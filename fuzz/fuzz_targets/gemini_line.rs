//! Gemini CLI stream-json: every line through one turn's translator.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::gemini_line(data));
