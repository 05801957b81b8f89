//! What the agent loop can call: the toolboxes (`provider::toolbox`) as
//! Chat Completions tools, several stacked as one. The loop never knows
//! what a tool does.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::wire::{FunctionSpec, ToolSpec};
pub(crate) use crate::provider::toolbox::ToolboxFactory;
pub use crate::provider::toolbox::{ToolDef, ToolResult, Toolbox};

/// A tool as the Chat Completions request lists it.
pub(crate) fn spec(def: &ToolDef) -> ToolSpec {
    ToolSpec {
        kind: "function",
        function: FunctionSpec {
            name: def.name.clone(),
            description: def.description.clone(),
            parameters: def.parameters.clone(),
        },
    }
}

/// Several toolboxes as one (hive's meta-tools and the MCP servers'
/// tools): a call goes to the first box that defines its name.
pub(crate) struct Stack {
    boxes: Vec<Arc<dyn Toolbox>>,
}

impl Stack {
    pub(crate) fn new(boxes: Vec<Arc<dyn Toolbox>>) -> Self {
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
