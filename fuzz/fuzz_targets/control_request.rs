//! The control socket's wire format: request lines read with the server's
//! cap, requests, replies and `watch` events parsed.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::control_request(data));
