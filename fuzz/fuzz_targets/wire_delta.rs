//! Growing text over the socket: wire events through a client's delta
//! decoder, then a server's encoder and a fresh decoder, which must agree.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::wire_delta(data));
