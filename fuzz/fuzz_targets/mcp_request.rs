//! `hive mcp`'s requests: stdin lines read with its cap, over-long ones
//! answered by id, the rest parsed as rmcp parses a client's message.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::mcp_request(data));
