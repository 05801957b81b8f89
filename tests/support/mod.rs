//! Harnesses shared by the provider test binaries (each `tests/*.rs` that
//! needs them declares `mod support;`): the fake-agent driver (a runner or a
//! bare provider over a script from tests/fake, bounded waits, what it saw),
//! process liveness, and the replay of captures through a translator and the
//! upsert processor.
#![allow(dead_code, unused_imports)] // each test binary uses a different subset

pub mod driver;
pub mod procs;
pub mod replay;
pub mod scenario;

pub use driver::*;
pub use procs::*;
pub use replay::{Replay, timeline};
