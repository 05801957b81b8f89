//! The canonical event deserializer (`StreamEvent::from_json`), which also
//! builds field-level error messages.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::stream_event(data));
