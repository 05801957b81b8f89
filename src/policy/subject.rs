//! What an approval request is about, vendor-neutral: each provider's
//! `PermissionRequest` (its tool's name and raw input, as the agent sent
//! them) made into a [`Subject`] the gate decides.
//!
//! Tool names are Claude Code's (`Bash`, `Read`, `Edit`, `Write`, `Glob`,
//! `Grep`, `WebFetch`, …), so one rule covers every vendor: Codex's `shell`
//! and an ACP `execute` call are `Bash`, an `apply_patch` and an ACP `edit`
//! are `Edit`, the built-in agent's `bash`/`read`/`write`/`edit` are theirs.
//! A tool whose effect cannot be told (an MCP tool, a web fetch, a name
//! never seen) keeps its name and counts as a write to unknown paths: no
//! preset but `yolo` lets it through without a rule, so a new tool is
//! asked about, never waved through as a read.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::gate::Subject;
use super::shell::{self, Parsed};
use crate::protocol::agent::PermissionRequest;

/// The subject of `req`, raised by the provider named `provider` for an
/// agent working in `cwd` (relative paths are its).
pub fn subject(provider: &str, req: &PermissionRequest, cwd: &Path) -> Subject {
    let input = &req.input;
    let mut s = match provider {
        "codex" => codex(&req.tool_name, input),
        "acp" => acp(req),
        "openai" => builtin(&req.tool_name, input),
        // Claude Code, and the script provider whose scenarios (the demo's
        // `approve`) name Claude's tools.
        _ => claude(&req.tool_name, input),
    };
    s.paths = s.paths.iter().map(|p| absolute(cwd, p)).collect();
    s.command = s.command.map(|c| unwrap_shell(&c));
    s
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A command given as a string or as argv (joined, each word quoted when
/// it needs it, so the reader sees the same words).
fn command_of(v: &Value) -> Option<String> {
    match v.get("command")? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<String> = parts
                .iter()
                .map(|p| quote(p.as_str().unwrap_or_default()))
                .collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        _ => None,
    }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn command(tool: &str, line: String) -> Subject {
    Subject {
        tool: tool.to_owned(),
        command: Some(line),
        ..Subject::default()
    }
}

fn files(tool: &str, paths: Vec<PathBuf>, writes: bool) -> Subject {
    Subject {
        tool: tool.to_owned(),
        command: None,
        paths,
        writes,
    }
}

/// A tool hive cannot read the effect of (see the module doc).
fn unknown(tool: &str, paths: Vec<PathBuf>) -> Subject {
    files(tool, paths, true)
}

fn path_keys(v: &Value, keys: &[&str]) -> Vec<PathBuf> {
    keys.iter()
        .filter_map(|k| text(v, k))
        .map(PathBuf::from)
        .collect()
}

/// Claude Code's `can_use_tool` input (and the script provider's steps).
fn claude(tool: &str, input: &Value) -> Subject {
    let paths = || path_keys(input, &["file_path", "notebook_path", "path"]);
    match tool {
        "Bash" => match command_of(input) {
            Some(line) => command("Bash", line),
            None => unknown(tool, Vec::new()),
        },
        "Read" | "Glob" | "Grep" | "LS" | "NotebookRead" | "TodoWrite" => {
            files(tool, paths(), false)
        }
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
            let p = paths();
            if p.is_empty() {
                unknown(tool, p)
            } else {
                files(tool, p, true)
            }
        }
        _ => unknown(tool, paths()),
    }
}

/// Codex app-server's approvals, as its provider raises them: `shell`
/// (`command`, `cwd`) and `apply_patch` (`changes`: a list of `{path}` or
/// a map keyed by path; `grant_root`: a directory it asks to write under).
fn codex(tool: &str, input: &Value) -> Subject {
    match tool {
        "shell" => match command_of(input) {
            Some(line) => command("Bash", line),
            None => unknown(tool, Vec::new()),
        },
        "apply_patch" => {
            let mut paths = changed_paths(input.get("changes"));
            paths.extend(path_keys(input, &["grant_root"]));
            if paths.is_empty() {
                unknown("Edit", paths)
            } else {
                files("Edit", paths, true)
            }
        }
        _ => unknown(tool, Vec::new()),
    }
}

/// The paths of a change set: `[{path}]` or `{path: change}`.
fn changed_paths(changes: Option<&Value>) -> Vec<PathBuf> {
    match changes {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|c| text(c, "path"))
            .map(PathBuf::from)
            .collect(),
        Some(Value::Object(map)) => map.keys().map(PathBuf::from).collect(),
        _ => Vec::new(),
    }
}

/// An ACP `session/request_permission` tool call: its `kind` says what it
/// does, `locations` where; the title is free text (Gemini puts the
/// command there, Claude's adapter the command in backticks).
fn acp(req: &PermissionRequest) -> Subject {
    let input = &req.input;
    let mut paths: Vec<PathBuf> = req.locations.iter().map(PathBuf::from).collect();
    for p in changed_paths(input.get("changes"))
        .into_iter()
        .chain(path_keys(input, &["file_path", "path", "abs_path"]))
    {
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    let line = || {
        command_of(input).or_else(|| {
            let t = req.tool_name.trim();
            let t = t
                .strip_prefix('`')
                .and_then(|t| t.strip_suffix('`'))
                .unwrap_or(t);
            (!t.is_empty()).then(|| t.to_owned())
        })
    };
    match req.kind.as_deref() {
        Some("execute") => match line() {
            Some(l) => command("Bash", l),
            None => unknown("Bash", paths),
        },
        Some("read") => files("Read", paths, false),
        Some("search") => files("Grep", paths, false),
        Some("edit" | "delete" | "move") => files("Edit", paths, true),
        Some("fetch") => unknown("WebFetch", paths),
        // No kind (Claude's adapter): its input says what it is.
        _ if command_of(input).is_some() => command("Bash", command_of(input).unwrap_or_default()),
        _ => unknown(&req.tool_name, paths),
    }
}

/// The built-in agent's coding tools (`provider::openai::coding`).
fn builtin(tool: &str, input: &Value) -> Subject {
    let paths = path_keys(input, &["path"]);
    match tool {
        "bash" => match command_of(input) {
            Some(line) => command("Bash", line),
            None => unknown(tool, Vec::new()),
        },
        "read" => files("Read", paths, false),
        "glob" => files("Glob", paths, false),
        "grep" => files("Grep", paths, false),
        "write" if !paths.is_empty() => files("Write", paths, true),
        "edit" if !paths.is_empty() => files("Edit", paths, true),
        _ => unknown(tool, paths),
    }
}

/// `bash -lc 'script'` (how Codex wraps every command) is the script: the
/// rules are about what runs, not the shell that runs it.
fn unwrap_shell(line: &str) -> String {
    let Parsed::Commands(cmds) = shell::parse(line) else {
        return line.to_owned();
    };
    match cmds.as_slice() {
        [words] if words.len() == 3 => {
            let sh = words[0].rsplit('/').next().unwrap_or_default();
            let flag = words[1].as_str();
            let is_shell = matches!(sh, "bash" | "sh" | "zsh" | "dash");
            let is_c = flag.starts_with('-') && flag.ends_with('c') && !flag.starts_with("--");
            if is_shell && is_c {
                words[2].clone()
            } else {
                line.to_owned()
            }
        }
        _ => line.to_owned(),
    }
}

/// `path` against `cwd`, with `.` and `..` taken out by its components
/// (no file system access: the file may not exist yet).
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[path = "subject_tests.rs"]
mod tests;
