//! Rendering: pure functions of app state (issue #3 builds it out).

pub mod terminal;
