//! The coding agent's system prompt: what it is and where it works (a short
//! environment note), then the project's own instructions, `AGENTS.md` (or
//! `CLAUDE.md`), so a model starts a task knowing the project's rules as
//! the vendor agents do. Read once when the pane starts, through the cwd's
//! confined root (a planted symlink out is not followed).

use std::path::Path;

use crate::config::AgentConfig;
use crate::provider::instructions::Instructions;

/// Said when the agent's config names no `system_prompt`.
const DEFAULT_PROMPT: &str = "You are a coding agent working in a project directory. \
Use the tools: glob and grep to find code, read before you edit, edit with exact unique \
old_text, bash to build and run the tests. Paths are relative to the working directory. \
Make the smallest change that does the task, check it, then say briefly what you did.";

/// The system prompt: the user's own (or the default), the environment,
/// the project's instructions (the config's `instructions`, else what the
/// project has: `provider::instructions`).
pub(crate) fn system_prompt(own: Option<&str>, agent: &AgentConfig, cwd: &Path) -> String {
    let mut out = own.unwrap_or(DEFAULT_PROMPT).to_owned();
    out.push_str(&format!(
        "\n\nEnvironment: working directory {}; {} ({}); shell bash.",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    ));
    match Instructions::of(agent, cwd) {
        Some(i) => i.after(Some(&out)),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_comes_first_then_claude_md() {
        let dir = tempfile::tempdir().unwrap();
        let a = AgentConfig::new("a", "openai");
        let system_prompt = |own, cwd| system_prompt(own, &a, cwd);
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

    /// Issue 51: the config's `instructions` names the file, whatever else
    /// the project has.
    #[test]
    fn the_configs_instructions_file_is_the_one_given() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "run make test").unwrap();
        std::fs::write(dir.path().join("RULES.md"), "no unwrap").unwrap();
        let mut a = AgentConfig::new("a", "openai");
        a.instructions = Some("RULES.md".into());
        let p = system_prompt(None, &a, dir.path());
        assert!(
            p.ends_with("The project's instructions (RULES.md):\n\nno unwrap"),
            "{p}"
        );
        assert!(!p.contains("run make test"), "{p}");
    }
}
