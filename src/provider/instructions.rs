//! The project's instructions, given once (issue 51): `instructions =
//! "AGENTS.md"` in the config (or an agent's table), else the first of
//! `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` the agent's directory has. Each
//! vendor gets it the way it reads instructions, and no file is written
//! into the user's repository:
//! - Claude Code reads `CLAUDE.md` itself; another file's text goes to
//!   `--append-system-prompt` (claude/mod.rs);
//! - Codex reads `AGENTS.md` itself; another file's text goes to its
//!   `developer_instructions` setting (codex/settings.rs);
//! - Gemini CLI is told the file's name in `context.fileName` of the
//!   system-defaults settings layer hive already writes, and finds it
//!   itself (gemini/mod.rs);
//! - the built-in agent puts the text in its system prompt
//!   (openai/coding/context.rs);
//! - ACP has no channel for it (`session/new` takes none): the agent behind
//!   reads its own file; pi reads `AGENTS.md` / `CLAUDE.md` itself.
//!
//! The file is read through the cwd's confined root (a planted symlink out
//! is not followed) and cut at 64 KiB.

use std::path::Path;

use crate::config::AgentConfig;
use crate::provider::acp::fs::{FsRoot, MissingFile};

/// Tried in order when the config names no file.
pub(crate) const PROJECT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "GEMINI.md"];
/// The most of it handed on.
const MAX_BYTES: usize = 64 * 1024;

/// The instruction file an agent is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Instructions {
    /// As the config names it, relative to the agent's directory.
    pub name: String,
    pub text: String,
}

impl Instructions {
    /// `agent`'s, in `cwd`: the file it names (none when missing or
    /// empty), else the first of `PROJECT_FILES` there.
    pub(crate) fn of(agent: &AgentConfig, cwd: &Path) -> Option<Self> {
        let root = FsRoot::new(cwd, MissingFile::Error);
        let read = |name: &str| {
            let mut text = root.read(name, None, None).ok()?;
            if text.trim().is_empty() {
                return None;
            }
            if text.len() > MAX_BYTES {
                let mut end = MAX_BYTES;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                text.push_str("\n[cut: the file goes on]");
            }
            Some(Self {
                name: name.to_owned(),
                text,
            })
        };
        match &agent.instructions {
            Some(name) => read(name),
            None => PROJECT_FILES.iter().find_map(|n| read(n)),
        }
    }

    /// `agent`'s, in its working directory.
    pub(crate) fn for_agent(agent: &AgentConfig) -> Option<Self> {
        let cwd = super::process::working_dir(agent).ok()?;
        Self::of(agent, &cwd)
    }

    /// Unless the vendor reads `own` itself: the text to hand it.
    pub(crate) fn unless_read_as(self, own: &str) -> Option<Self> {
        (self.name != own).then_some(self)
    }

    /// `prompt` (the agent's `system_prompt`), then these instructions.
    pub(crate) fn after(&self, prompt: Option<&str>) -> String {
        let head = prompt.map(|p| format!("{p}\n\n")).unwrap_or_default();
        format!(
            "{head}The project's instructions ({}):\n\n{}",
            self.name, self.text
        )
    }
}

/// How `provider` is given the file `name` (`hive doctor` says it), or
/// why it is not.
pub(crate) fn channel(provider: &str, name: &str) -> Result<&'static str, &'static str> {
    let own = |file: &str, read: &'static str, given: &'static str| {
        Ok(if name == file { read } else { given })
    };
    match provider {
        "claude" => own(
            "CLAUDE.md",
            "read by Claude Code itself",
            "`--append-system-prompt`",
        ),
        "codex" => own(
            "AGENTS.md",
            "read by Codex itself",
            "Codex's developer instructions",
        ),
        "gemini" => own(
            "GEMINI.md",
            "read by Gemini CLI itself",
            "`context.fileName` of the system-defaults settings (Gemini CLI reads it)",
        ),
        "openai" => Ok("the built-in agent's system prompt"),
        "pi" if matches!(name, "AGENTS.md" | "CLAUDE.md") => Ok("read by pi itself"),
        "pi" => Err("pi reads only AGENTS.md / CLAUDE.md"),
        "acp" => Err("ACP has no channel for instructions: the agent reads its own file"),
        _ => Err("this provider takes no instructions"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_file_else_the_first_the_project_has() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut a = AgentConfig::new("a", "claude");
        assert_eq!(Instructions::of(&a, dir.path()), None);
        std::fs::write(dir.path().join("GEMINI.md"), "g").expect("write");
        std::fs::write(dir.path().join("CLAUDE.md"), "c").expect("write");
        let got = Instructions::of(&a, dir.path()).expect("found");
        assert_eq!((got.name.as_str(), got.text.as_str()), ("CLAUDE.md", "c"));
        a.instructions = Some("docs/RULES.md".into());
        assert_eq!(Instructions::of(&a, dir.path()), None);
        std::fs::create_dir(dir.path().join("docs")).expect("mkdir");
        std::fs::write(dir.path().join("docs/RULES.md"), "tabs").expect("write");
        let got = Instructions::of(&a, dir.path()).expect("found");
        assert_eq!(
            got.after(Some("Be brief.")),
            "Be brief.\n\nThe project's instructions (docs/RULES.md):\n\ntabs"
        );
        assert!(got.clone().unless_read_as("CLAUDE.md").is_some());
        assert!(got.unless_read_as("docs/RULES.md").is_none());
    }

    /// A repository's planted link out of it is not read.
    #[test]
    fn a_symlink_out_of_the_directory_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "key").expect("write");
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("AGENTS.md"))
            .expect("link");
        let a = AgentConfig::new("a", "codex");
        assert_eq!(Instructions::of(&a, dir.path()), None);
    }
}
