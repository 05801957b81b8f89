//! `codex app-server`: every JSON line that parses is fed as a notification
//! (`method` + `params`), as the provider does.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::codex_app_server(data));
