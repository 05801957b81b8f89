//! The console protocol's frames: any bytes through the frame reader, each
//! payload decoded as a hello and as each side's messages.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::wire_frames(data));
