//! The coding agent's system prompt: what it is and where it works (a short
//! environment note), then the project's own instructions, `AGENTS.md` (or
//! `CLAUDE.md`), so a model starts a task knowing the project's rules as
//! the vendor agents do. Read once when the pane starts, through the cwd's
//! confined root (a planted symlink out is not followed).

use std::path::Path;

use crate::provider::acp::fs::{FsRoot, MissingFile};

/// The instructions file read; tried in order.
const PROJECT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md"];
/// The most of it that goes into the prompt.
const MAX_PROJECT_BYTES: usize = 64 * 1024;

/// Said when the agent's config names no `system_prompt`.
const DEFAULT_PROMPT: &str = "You are a coding agent working in a project directory. \
Use the tools: glob and grep to find code, read before you edit, edit with exact unique \
old_text, bash to build and run the tests. Paths are relative to the working directory. \
Make the smallest change that does the task, check it, then say briefly what you did.";

/// The system prompt: the user's own (or the default), the environment,
/// the project's instructions.
pub(crate) fn system_prompt(own: Option<&str>, cwd: &Path) -> String {
    let mut out = own.unwrap_or(DEFAULT_PROMPT).to_owned();
    out.push_str(&format!(
        "\n\nEnvironment: working directory {}; {} ({}); shell bash.",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    ));
    if let Some((name, text)) = project_file(cwd) {
        out.push_str(&format!(
            "\n\nThe project's instructions ({name}):\n\n{text}"
        ));
    }
    out
}

fn project_file(cwd: &Path) -> Option<(&'static str, String)> {
    let root = FsRoot::new(cwd, MissingFile::Error);
    PROJECT_FILES.iter().find_map(|name| {
        let mut text = root.read(name, None, None).ok()?;
        if text.trim().is_empty() {
            return None;
        }
        if text.len() > MAX_PROJECT_BYTES {
            let mut end = MAX_PROJECT_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[cut: the file goes on]");
        }
        Some((*name, text))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_comes_first_then_claude_md() {
        let dir = tempfile::tempdir().unwrap();
        let p = system_prompt(None, dir.path());
        assert!(p.starts_with("You are a coding agent") && !p.contains("instructions ("));
        std::fs::write(dir.path().join("CLAUDE.md"), "use tabs").unwrap();
        assert!(system_prompt(Some("mine"), dir.path()).contains("(CLAUDE.md):\n\nuse tabs"));
        std::fs::write(dir.path().join("AGENTS.md"), "run make test").unwrap();
        let p = system_prompt(Some("mine"), dir.path());
        assert!(
            p.starts_with("mine\n\nEnvironment: working directory"),
            "{p}"
        );
        assert!(p.contains("(AGENTS.md):\n\nrun make test") && !p.contains("use tabs"));
    }
}
