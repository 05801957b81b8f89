//! `hive init`'s hive.toml from hostile detected values (issue 53 item 2).
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::init_render(data));
