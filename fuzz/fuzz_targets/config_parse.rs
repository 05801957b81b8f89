//! The config loader: TOML text to a validated `Config` (positions in errors).
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::config_parse(data));
