//! The gate: decides a request against the rules before any card is shown.
//!
//! Order as in Claude Code's rules: a matching `deny` beats `ask`, which
//! beats `allow`; with no rule the preset decides. A shell line is matched
//! per simple command ([`super::shell`]): it is allowed only when every one
//! of its commands is, and a line the reader cannot vouch for is never
//! allowed by a rule. Destructive requests (`rm -rf`, `git push --force`,
//! `git reset --hard`, writes outside the repository) always ask, even under
//! an allow rule or the `yolo` preset.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

use super::shell::{self, Parsed};

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

/// A per-agent preset: what a request no rule matches gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Reads are allowed, everything else asks.
    ReadOnly,
    /// Reads and edits inside the repository are allowed, commands ask.
    #[default]
    Edit,
    /// Everything is allowed but the destructive list.
    Yolo,
}

/// A rule as written in the config or learned from a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSpec {
    pub action: Action,
    /// The tool's name (`Bash`, `Edit`, …) or `*`.
    pub tool: String,
    /// A command pattern: exact words, or a prefix ending in `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A path glob (globset syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A broken rule, reported with the rule's id.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("policy rule {id}: bad path pattern {pattern:?}: {source}")]
    BadPath {
        id: String,
        pattern: String,
        source: globset::Error,
    },
    #[error("policy rule {id}: a rule names a tool")]
    NoTool { id: String },
}

#[derive(Debug, Clone)]
struct Rule {
    id: String,
    spec: RuleSpec,
    path: Option<GlobMatcher>,
}

/// What a request is about, vendor-neutral (built by `subject`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    pub tool: String,
    /// The shell line of a command tool.
    pub command: Option<String>,
    /// The paths a tool reads or writes.
    pub paths: Vec<PathBuf>,
    /// Whether the tool writes (edits, creates, deletes) its paths.
    pub writes: bool,
}

/// The gate's answer, with what decided it (for the card and the audit log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub action: Action,
    /// The rule id, `preset:NAME`, or `destructive`.
    pub by: String,
    /// Why, for the agent (on deny) or the card (on ask).
    pub reason: String,
    /// Set when the request is on the destructive list: the card needs a
    /// second confirmation.
    pub destructive: bool,
}

/// The rules of one agent (global first, then its own) and its preset.
#[derive(Debug, Clone)]
pub struct Gate {
    rules: Vec<Rule>,
    preset: Preset,
    repo: PathBuf,
}

impl Gate {
    /// Builds a gate; `rules` are `(id, spec)`; a broken pattern is an error.
    pub fn new(
        rules: Vec<(String, RuleSpec)>,
        preset: Preset,
        repo: &Path,
    ) -> Result<Self, RuleError> {
        let mut built = Vec::with_capacity(rules.len());
        for (id, spec) in rules {
            if spec.tool.trim().is_empty() {
                return Err(RuleError::NoTool { id });
            }
            let path = match &spec.path {
                Some(p) => Some(
                    Glob::new(p)
                        .map_err(|source| RuleError::BadPath {
                            id: id.clone(),
                            pattern: p.clone(),
                            source,
                        })?
                        .compile_matcher(),
                ),
                None => None,
            };
            built.push(Rule { id, spec, path });
        }
        Ok(Self {
            rules: built,
            preset,
            repo: repo.to_path_buf(),
        })
    }

    /// This gate with `extra` rules after its own (the learned ones).
    pub fn with_rules(&self, extra: Vec<(String, RuleSpec)>) -> Result<Self, RuleError> {
        let more = Self::new(extra, self.preset, &self.repo)?;
        let mut gate = self.clone();
        gate.rules.extend(more.rules);
        Ok(gate)
    }

    /// Decides `subject`.
    pub fn decide(&self, subject: &Subject) -> Verdict {
        let parsed = subject.command.as_deref().map(shell::parse);
        let destructive = self.destructive(subject, parsed.as_ref());
        for action in [Action::Deny, Action::Ask] {
            if let Some(rule) = self.matching(action, subject, parsed.as_ref()) {
                return self.finish(action, rule, destructive);
            }
        }
        if let Some(by) = self.allowed_by(subject, parsed.as_ref()) {
            return self.finish(Action::Allow, &by, destructive);
        }
        let action = match (self.preset, subject.command.is_some(), subject.writes) {
            (Preset::Yolo, _, _) => Action::Allow,
            (_, false, false) => Action::Allow,
            // A write to paths nobody named (an unknown tool) is not "inside".
            (Preset::Edit, false, true)
                if !subject.paths.is_empty() && self.inside_repo(subject) =>
            {
                Action::Allow
            }
            _ => Action::Ask,
        };
        let by = format!("preset:{}", preset_name(self.preset));
        self.finish(action, &by, destructive)
    }

    fn finish(&self, action: Action, by: &str, destructive: Option<&'static str>) -> Verdict {
        match (action, destructive) {
            (Action::Deny, _) => Verdict {
                action,
                by: by.to_string(),
                reason: format!("denied by hive policy ({by})"),
                destructive: destructive.is_some(),
            },
            (_, Some(what)) => Verdict {
                action: Action::Ask,
                by: "destructive".to_string(),
                reason: format!("{what}: needs a second confirmation"),
                destructive: true,
            },
            _ => Verdict {
                action,
                by: by.to_string(),
                reason: String::new(),
                destructive: false,
            },
        }
    }

    /// The allow rules covering `subject`: a shell line is allowed when
    /// each of its commands is allowed by some rule (ids joined by `+`).
    fn allowed_by(&self, subject: &Subject, parsed: Option<&Parsed>) -> Option<String> {
        let Some(Parsed::Commands(cmds)) = parsed else {
            return self
                .matching(Action::Allow, subject, parsed)
                .map(str::to_string);
        };
        let mut ids: Vec<&str> = Vec::new();
        for c in cmds {
            let one = Parsed::Commands(vec![c.clone()]);
            let id = self.matching(Action::Allow, subject, Some(&one))?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Some(ids.join("+"))
    }

    /// The id of the first rule with `action` that matches `subject`.
    fn matching(&self, action: Action, subject: &Subject, parsed: Option<&Parsed>) -> Option<&str> {
        self.rules
            .iter()
            .filter(|r| r.spec.action == action && tool_matches(&r.spec.tool, &subject.tool))
            .find(|r| self.rule_matches(r, subject, parsed))
            .map(|r| r.id.as_str())
    }

    fn rule_matches(&self, rule: &Rule, subject: &Subject, parsed: Option<&Parsed>) -> bool {
        if let Some(pattern) = &rule.spec.command {
            let Some(line) = subject.command.as_deref() else {
                return false;
            };
            let hit = match parsed {
                Some(Parsed::Commands(cmds)) => {
                    let joined = cmds.iter().map(|c| c.join(" "));
                    if rule.spec.action == Action::Allow {
                        // Every command of the line must be allowed.
                        cmds.iter().all(|c| command_matches(pattern, &c.join(" ")))
                    } else {
                        joined.into_iter().any(|c| command_matches(pattern, &c))
                    }
                }
                // An opaque line: never allowed; deny and ask rules look at
                // the raw text, so `deny Bash(curl*)` still catches it.
                _ => {
                    rule.spec.action != Action::Allow
                        && (command_matches(pattern, line.trim())
                            || line.contains(pattern.trim_end_matches('*')))
                }
            };
            if !hit {
                return false;
            }
        } else if rule.spec.action == Action::Allow && matches!(parsed, Some(Parsed::Opaque(_))) {
            return false;
        }
        if let Some(glob) = &rule.path {
            if subject.paths.is_empty() {
                return false;
            }
            let all_match = |want_all: bool| {
                let mut each = subject
                    .paths
                    .iter()
                    .map(|p| glob.is_match(self.relative(p)));
                if want_all {
                    each.all(|m| m)
                } else {
                    each.any(|m| m)
                }
            };
            return all_match(rule.spec.action == Action::Allow);
        }
        true
    }

    fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.repo).unwrap_or(path)
    }

    fn inside_repo(&self, subject: &Subject) -> bool {
        subject.paths.iter().all(|p| within(&self.repo, p))
    }

    fn destructive(&self, subject: &Subject, parsed: Option<&Parsed>) -> Option<&'static str> {
        if subject.writes && !self.inside_repo(subject) {
            return Some("a write outside the repository");
        }
        match parsed? {
            Parsed::Commands(cmds) => cmds.iter().find_map(|c| destructive_command(c)),
            Parsed::Opaque(_) => {
                let line = subject.command.as_deref().unwrap_or_default();
                let words: Vec<String> = line
                    .split(|c: char| c.is_whitespace() || ";&|()`$".contains(c))
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .collect();
                destructive_command(&words)
            }
        }
    }
}

fn preset_name(p: Preset) -> &'static str {
    match p {
        Preset::ReadOnly => "read-only",
        Preset::Edit => "edit",
        Preset::Yolo => "yolo",
    }
}

fn tool_matches(pattern: &str, tool: &str) -> bool {
    pattern == "*" || pattern.eq_ignore_ascii_case(tool)
}

/// `git status*` is a prefix; anything else is the exact command.
fn command_matches(pattern: &str, command: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => command.starts_with(prefix),
        None => command == pattern,
    }
}

/// Whether `path` (made absolute against `repo`) stays inside `repo`,
/// by its components (`..` climbs out).
fn within(repo: &Path, path: &Path) -> bool {
    let joined = repo.join(path);
    let mut parts: Vec<std::path::Component<'_>> = Vec::new();
    for c in joined.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other),
        }
    }
    parts.iter().collect::<PathBuf>().starts_with(repo)
}

/// The destructive list, looked for anywhere in the words (so `sudo rm -rf`
/// and `env git push -f` count).
fn destructive_command(words: &[String]) -> Option<&'static str> {
    let flag = |w: &str, c: char| w.starts_with('-') && !w.starts_with("--") && w.contains(c);
    for (i, w) in words.iter().enumerate() {
        let rest = &words[i + 1..];
        let base = w.rsplit('/').next().unwrap_or(w);
        if base == "rm" {
            let r = rest
                .iter()
                .any(|a| flag(a, 'r') || flag(a, 'R') || a == "--recursive");
            let f = rest.iter().any(|a| flag(a, 'f') || a == "--force");
            if r && f {
                return Some("rm -rf");
            }
        }
        if base == "git" {
            let sub = rest.iter().find(|a| !a.starts_with('-'));
            match sub.map(String::as_str) {
                Some("push")
                    if rest.iter().any(|a| {
                        a == "-f"
                            || a.starts_with("--force")
                            || (flag(a, 'f') && a.len() <= 4)
                            || a.starts_with('+')
                    }) =>
                {
                    return Some("git push --force");
                }
                Some("reset") if rest.iter().any(|a| a == "--hard") => {
                    return Some("git reset --hard");
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
