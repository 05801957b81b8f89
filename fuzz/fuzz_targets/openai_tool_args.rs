//! The `openai` agent's coding-tool calls: a tool name and the arguments a
//! model wrote, parsed, displayed and (for `edit`) applied to a sample.
#![no_main]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::openai_tool_args(data));
