//! The vt100 emulator at the sizes a collapsed pane asks for (1×1 to 3×3),
//! through hive's size clamp, with resizes mid-stream.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::vt100_tiny(data));
