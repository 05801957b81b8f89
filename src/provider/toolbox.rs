//! Tools an agent loop calls in-process: a `Toolbox` offers tool
//! definitions and runs calls. hive's operations (the meta-tools of
//! `crate::ops`) are one toolbox, handed to the providers whose descriptor
//! takes them in-process (`Operations::InProcess`); tests bring their own.
//! Defined here, beside the providers, so that `ops` implements it without
//! naming any one provider.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::config::AgentConfig;

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// `^[a-zA-Z0-9_-]+$`: function names cannot contain dots.
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// The result of one call: text for the model, or an error it can read
/// and react to (a failing tool never ends the turn).
pub type ToolResult = Result<String, String>;

pub trait Toolbox: Send + Sync {
    fn definitions(&self) -> Vec<ToolDef>;
    /// Runs one call. Dropping the future abandons it (the turn was
    /// interrupted).
    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, ToolResult>;
}

/// Builds the toolbox of one agent (`None`: the agent gets no tools).
pub(crate) type ToolboxFactory =
    Arc<dyn Fn(&AgentConfig) -> Option<Arc<dyn Toolbox>> + Send + Sync>;
