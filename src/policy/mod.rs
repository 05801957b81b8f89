//! One approval policy for every vendor (issue 47): the shell reader, the
//! gate that decides a request before any card is shown.

pub mod audit;
pub mod gate;
pub mod learned;
pub mod pane;
pub mod shell;
pub mod subject;

pub use gate::{Action, Gate, Preset, RuleError, RuleSpec, Subject, Verdict};
pub use pane::PanePolicy;
pub use subject::subject;
