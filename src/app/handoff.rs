//! `/handoff <pane>`: the same task goes on in another pane, of any
//! vendor, when this one cannot go on (a weekly cap, a spent budget, a
//! stuck model). hive writes a compact brief from the pane's transcript —
//! every message the user sent, the files its tools touched, where it
//! worked, the last answer — and sends it to the other pane as its next
//! message (issue 33 item 5). The brief is plain text any agent reads.

use serde_json::Value;

use super::pane::Pane;
use super::state::App;
use super::transcript::EntryKind;
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::Origin;
use crate::protocol::pane::{RunnerCommand, SubmitMode};
use crate::protocol::upsert::UpsertKind;

/// The last answer is cut to this many characters.
const ANSWER_CHARS: usize = 4000;
/// A user message is cut to this many characters.
const MESSAGE_CHARS: usize = 1500;

impl App {
    /// `/handoff TARGET`: TARGET is another pane's id, name, number or
    /// provider (the first other pane of it).
    pub(crate) fn handoff(&mut self, arg: &str) {
        let from = self.focus;
        let target = arg.trim();
        if target.is_empty() {
            return self.refuse("/handoff needs a pane: its id, name, number or provider".into());
        }
        let Some(to) = find_pane(&self.panes, from, target) else {
            return self.refuse(format!("/handoff: no other pane `{target}`"));
        };
        let p = &self.panes[to];
        if p.is_terminal() || p.conversation.failed.is_some() {
            let name = p.name().to_owned();
            return self.refuse(format!("/handoff: {name} cannot take a message"));
        }
        let text = brief(&self.panes[from]);
        let to_name = self.panes[to].name().to_owned();
        self.send(
            to,
            RunnerCommand::Submit {
                text,
                mode: SubmitMode::Queue,
            },
        );
        if let Some(p) = self.panes.get_mut(from) {
            p.conversation
                .transcript
                .notice(DiagnosticLevel::Info, format!("handed off to {to_name}"));
        }
        self.set_focus(to);
    }
}

/// Another pane than `from` named by `target`: a number (1-based), an
/// id, a name (any case), else the first pane of that provider.
fn find_pane(panes: &[Pane], from: usize, target: &str) -> Option<usize> {
    let other = |i: &usize| *i != from;
    if let Ok(n) = target.parse::<usize>() {
        return Some(n.checked_sub(1)?).filter(|i| other(i) && *i < panes.len());
    }
    let by = |f: &dyn Fn(&Pane) -> bool| (0..panes.len()).filter(other).find(|&i| f(&panes[i]));
    by(&|p| p.agent.id == target)
        .or_else(|| by(&|p| p.name().eq_ignore_ascii_case(target)))
        .or_else(|| by(&|p| p.agent.provider == target))
}

/// The brief: who handed off, where it worked, what the user asked, the
/// files touched, the last answer.
pub(crate) fn brief(p: &Pane) -> String {
    let mut asked = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut answer = None;
    for e in &p.conversation.transcript.entries {
        let EntryKind::Item(u) = &e.kind else {
            continue;
        };
        match &u.kind {
            UpsertKind::Message { content, origin } if u.is_final() => match origin {
                Origin::User => asked.push(content.to_string()),
                Origin::Agent => answer = Some(content.to_string()),
                Origin::System => {}
            },
            UpsertKind::ToolCall { arguments, .. } => {
                for f in touched(arguments) {
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
            }
            _ => {}
        }
    }
    let model = p.conversation.model.as_deref().unwrap_or("its model");
    let mut out = format!(
        "Hand-off from {} ({}, {model}): continue this task where it stopped.\n",
        p.name(),
        p.agent.provider
    );
    if let Some(w) = &p.worktree {
        out.push_str(&format!(
            "\nIt worked in {} (git worktree, branch {}).\n",
            w.cwd.display(),
            w.branch
        ));
    } else if let Some(cwd) = &p.agent.cwd {
        out.push_str(&format!("\nIt worked in {}.\n", cwd.display()));
    }
    out.push_str("\nThe user asked, in order:\n");
    if asked.is_empty() {
        out.push_str("(nothing yet)\n");
    }
    for (i, m) in asked.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, cut(m, MESSAGE_CHARS)));
    }
    if !files.is_empty() {
        out.push_str("\nFiles its tools touched:\n");
        for f in &files {
            out.push_str(&format!("- {f}\n"));
        }
    }
    if let Some(a) = answer {
        out.push_str(&format!("\nIts last answer:\n{}\n", cut(&a, ANSWER_CHARS)));
    }
    out
}

/// The paths a tool call names (`file_path`, `path`, `filePath`,
/// `notebook_path`, Codex's `changes[].path`).
fn touched(arguments: &Value) -> Vec<String> {
    let Value::Object(map) = arguments else {
        return Vec::new();
    };
    let mut out: Vec<String> = ["file_path", "path", "filePath", "notebook_path"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    if let Some(Value::Array(changes)) = map.get("changes") {
        out.extend(
            changes
                .iter()
                .filter_map(|c| c.get("path").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    out
}

/// `text` cut to `max` characters, saying so.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}… (cut)", &text[..at]),
        None => text.to_owned(),
    }
}
