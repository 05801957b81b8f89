//! The coding tools of the `openai` agent (issue 35): `read`, `write`,
//! `edit`, `glob`, `grep` and `bash`, plain function tools on every request
//! (hive's own operations stay behind the meta-tools). Unlike a `Toolbox`
//! they know the call they run for: `bash` streams its output into the
//! call's widget, and writes wait for hive's approval card (`approve.rs`).

pub(crate) mod approve;
mod bash;
pub(crate) mod context;
mod files;

use std::path::PathBuf;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::tools::{ToolDef, ToolResult};
use crate::event::{Payload, ToolDisplay};
use crate::provider::EventSink;
use crate::provider::acp::fs::{FsRoot, MissingFile};
use crate::provider::sink::Sink;
pub use approve::PermissionMode;
use approve::{Approvals, Change};

/// The tools' names, as the model calls them.
pub(crate) const NAMES: &[&str] = &["read", "write", "edit", "glob", "grep", "bash"];

/// The call a tool runs for: where its live output goes.
#[derive(Clone)]
pub(crate) struct CallCtx {
    pub turn_id: String,
    pub session_id: String,
    pub item_id: String,
}

pub(crate) struct CodingTools {
    root: FsRoot,
    cwd: PathBuf,
    pub(crate) approvals: Approvals,
    events: EventSink,
    /// The agent's host: `bash` runs there, under the agent's limits
    /// (issue 49).
    exec: Option<crate::exec::ExecHost>,
    limits: crate::exec::Resources,
}

impl CodingTools {
    pub(crate) fn new(cwd: PathBuf, mode: PermissionMode, events: EventSink) -> Self {
        Self {
            root: FsRoot::new(&cwd, MissingFile::Error),
            cwd,
            approvals: Approvals::new(mode),
            events,
            exec: None,
            limits: crate::exec::Resources::default(),
        }
    }

    /// `bash` runs on `exec` (the agent's sandbox or host), under `limits`.
    pub(crate) fn on_host(
        mut self,
        exec: Option<crate::exec::ExecHost>,
        limits: crate::exec::Resources,
    ) -> Self {
        self.exec = exec;
        self.limits = limits;
        self
    }

    pub(crate) fn has(name: &str) -> bool {
        NAMES.contains(&name)
    }

    pub(crate) fn definitions() -> Vec<ToolDef> {
        let def = |name: &str, description: &str, parameters: Value| ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
        };
        let path = json!({"type": "string", "description": "relative to the working directory"});
        vec![
            def(
                "read",
                "Read lines of a text file. offset: first line (1-based); limit: how many lines (default 2000).",
                json!({"type": "object", "properties": {"path": path, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, "required": ["path"]}),
            ),
            def(
                "write",
                "Write a whole file (created with its directories, or replaced).",
                json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"]}),
            ),
            def(
                "edit",
                "Replace exact text in a file. Each old_text must occur exactly once; the edits apply all or none.",
                json!({"type": "object", "properties": {"path": path, "edits": {"type": "array", "items": {"type": "object", "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}}, "required": ["old_text", "new_text"]}}}, "required": ["path", "edits"]}),
            ),
            def(
                "glob",
                "List files matching a glob (e.g. `**/*.rs`), skipping what .gitignore ignores.",
                json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": path}, "required": ["pattern"]}),
            ),
            def(
                "grep",
                "Search file lines with a regular expression; `glob` narrows the files. Skips what .gitignore ignores.",
                json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": path, "glob": {"type": "string"}}, "required": ["pattern"]}),
            ),
            def(
                "bash",
                "Run a bash command in the working directory; returns its output (the last 32 KiB). timeout_ms defaults to 120000.",
                json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout_ms": {"type": "integer"}}, "required": ["command"]}),
            ),
        ]
    }

    /// Runs one call. Errors (bad arguments, a missing file, a denial)
    /// are the model's to read; dropping the future abandons the call and
    /// kills a running command.
    pub(crate) async fn call(self: Arc<Self>, name: &str, args: Value, ctx: CallCtx) -> ToolResult {
        match name {
            "read" => self.blocking(args, files::read).await,
            "glob" => self.blocking(args, files::glob).await,
            "grep" => self.blocking(args, files::grep).await,
            "write" => {
                let a: files::WriteArgs = parse(args.clone())?;
                // A path the confinement refuses is refused before asking.
                self.blocking_parsed(a.path.clone(), files::confined)
                    .await?;
                let what = format!("write {} ({} bytes)", a.path, a.content.len());
                self.approve(name, Change::Edit, &args, what).await?;
                self.blocking_parsed(a, files::write).await
            }
            "edit" => {
                let a: files::EditArgs = parse(args.clone())?;
                self.blocking_parsed(a.path.clone(), files::confined)
                    .await?;
                let what = format!("edit {} ({} replacement(s))", a.path, a.edits.len());
                self.approve(name, Change::Edit, &args, what).await?;
                self.blocking_parsed(a, files::edit).await
            }
            "bash" => {
                let a: bash::BashArgs = parse(args.clone())?;
                let what = format!("run `{}`", a.command);
                self.approve(name, Change::Command, &args, what).await?;
                let events = self.events.clone();
                let live = move |chunk: &str| {
                    events.stream(
                        &ctx.turn_id,
                        &ctx.session_id,
                        Payload::ToolProgress {
                            item_id: ctx.item_id.clone(),
                            display: None,
                            output: None,
                            output_delta: Some(chunk.to_owned()),
                        },
                    );
                };
                bash::run(&self.cwd, (self.exec.as_ref(), &self.limits), a, live).await
            }
            other => Err(format!("no tool `{other}`")),
        }
    }

    async fn approve(
        &self,
        tool: &str,
        change: Change,
        input: &Value,
        what: String,
    ) -> Result<(), String> {
        let shown = input.as_object().and_then(|m| display(tool, m));
        self.approvals
            .check(&self.events, tool, change, input, (what, shown))
            .await
    }

    async fn blocking<A: DeserializeOwned + Send + 'static>(
        &self,
        args: Value,
        f: fn(&FsRoot, A) -> Result<String, String>,
    ) -> ToolResult {
        self.blocking_parsed(parse(args)?, f).await
    }

    /// File I/O runs on the blocking pool, never on the async workers.
    async fn blocking_parsed<A: Send + 'static>(
        &self,
        args: A,
        f: fn(&FsRoot, A) -> Result<String, String>,
    ) -> ToolResult {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || f(&root, args))
            .await
            .map_err(|e| format!("the tool failed: {e}"))?
    }
}

/// How a coding tool's call reads in its widget and on the approval card:
/// the path, pattern or command, and what an edit or a write changes.
pub(crate) fn display(name: &str, args: &Map<String, Value>) -> Option<ToolDisplay> {
    if !CodingTools::has(name) {
        return None;
    }
    let s = |k: &str| args.get(k).and_then(Value::as_str);
    let summary = s("command")
        .or_else(|| s("path").filter(|_| name != "glob" && name != "grep"))
        .or_else(|| s("pattern"))
        .unwrap_or_default();
    let summary = summary.lines().next().unwrap_or_default().to_owned();
    fn marked(text: &str, mark: char) -> impl Iterator<Item = String> + '_ {
        text.lines().map(move |l| format!("{mark}{l}"))
    }
    let diff = match name {
        "write" => s("content").map(|c| marked(c, '+').collect::<Vec<_>>().join("\n")),
        "edit" => args.get("edits").and_then(Value::as_array).map(|edits| {
            let mut lines = Vec::new();
            for e in edits {
                let part = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
                lines.extend(marked(part("old_text"), '-'));
                lines.extend(marked(part("new_text"), '+'));
            }
            lines.join("\n")
        }),
        _ => None,
    };
    Some(ToolDisplay { summary, diff })
}

/// Everything a call's arguments go through before any I/O — the JSON,
/// the typed arguments, the display, an edit's replacements (on a sample
/// text), a glob, a regex — for the fuzz target (`fuzz/harness.rs`).
pub(crate) fn check(name: &str, arguments: &str) -> Result<(), String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args: Value = serde_json::from_str(text).map_err(|e| format!("bad JSON: {e}"))?;
    if let Some(m) = args.as_object() {
        let _ = display(name, m);
    }
    match name {
        "read" => parse::<files::ReadArgs>(args).map(drop),
        "write" => parse::<files::WriteArgs>(args).map(drop),
        "edit" => {
            let a: files::EditArgs = parse(args)?;
            files::apply_edits("fn main() {\n    a a\n}\n", &a.path, &a.edits).map(drop)
        }
        "glob" => {
            let a: files::GlobArgs = parse(args)?;
            let mut o = ignore::overrides::OverrideBuilder::new("/");
            o.add(&a.pattern).map_err(|e| e.to_string())?;
            o.build().map(drop).map_err(|e| e.to_string())
        }
        "grep" => {
            let a: files::GrepArgs = parse(args)?;
            regex::Regex::new(&a.pattern)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        "bash" => parse::<bash::BashArgs>(args).map(drop),
        other => Err(format!("no tool `{other}`")),
    }
}

/// A call's arguments, or what is wrong with them (for the model).
pub(crate) fn parse<A: DeserializeOwned>(args: Value) -> Result<A, String> {
    serde_json::from_value(args).map_err(|e| format!("bad arguments: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_parses_as_a_call_would() {
        assert!(
            check(
                "edit",
                r#"{"path": "f", "edits": [{"old_text": "fn main", "new_text": "x"}]}"#
            )
            .is_ok()
        );
        assert!(
            check(
                "edit",
                r#"{"path": "f", "edits": [{"old_text": "a", "new_text": "x"}]}"#
            )
            .is_err()
        );
        assert!(check("read", r#"{"file": "f"}"#).is_err());
        assert!(check("grep", r#"{"pattern": "("}"#).is_err());
        assert!(check("glob", r#"{"pattern": "**/*.rs"}"#).is_ok());
        assert!(check("bash", "").is_err());
        assert!(check("nope", "{}").is_err());
    }
}
