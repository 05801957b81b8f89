//! hive's own state files (a layout, a pane's state) as the server reads
//! them at start, through the size-capped, no-follow reader.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::state_files(data));
