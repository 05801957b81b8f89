//! What the agent loop can call: a `Toolbox` offers tool definitions and runs
//! calls. hive's operations (the four meta-tools of `crate::ops`) are one
//! toolbox; tests bring their own. The loop never knows what a tool does.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::wire::{FunctionSpec, ToolSpec};
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

impl ToolDef {
    pub(crate) fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function",
            function: FunctionSpec {
                name: self.name.clone(),
                description: self.description.clone(),
                parameters: self.parameters.clone(),
            },
        }
    }
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
pub type ToolboxFactory = Arc<dyn Fn(&AgentConfig) -> Option<Arc<dyn Toolbox>> + Send + Sync>;

/// Several toolboxes as one (hive's meta-tools and the MCP servers'
/// tools): a call goes to the first box that defines its name.
pub struct Stack {
    boxes: Vec<Arc<dyn Toolbox>>,
}

impl Stack {
    pub fn new(boxes: Vec<Arc<dyn Toolbox>>) -> Self {
        Self { boxes }
    }
}

impl Toolbox for Stack {
    fn definitions(&self) -> Vec<ToolDef> {
        let mut seen = std::collections::HashSet::new();
        self.boxes
            .iter()
            .flat_map(|b| b.definitions())
            .filter(|d| seen.insert(d.name.clone()))
            .collect()
    }

    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, ToolResult> {
        match self
            .boxes
            .iter()
            .find(|b| b.definitions().iter().any(|d| d.name == name))
        {
            Some(b) => b.call(name, arguments),
            None => {
                let e = format!("no tool `{name}`");
                Box::pin(async move { Err(e) })
            }
        }
    }
}
