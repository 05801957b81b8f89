//! `hive doctor`'s line for an agent's instruction file (issue 51): which
//! file it is given and through which channel of its vendor, or that the
//! file the config names is not there.

use super::{Check, Level};
use crate::config::AgentConfig;
use crate::provider::instructions::{Instructions, channel};

/// The `instructions` check of `agent` in `cwd`, or none for an agent
/// that names no file in a project that has none.
pub(super) fn check(agent: &AgentConfig, cwd: &std::path::Path) -> Option<Check> {
    let Some(found) = Instructions::of(agent, cwd) else {
        let name = agent.instructions.as_deref()?;
        return Some(
            Check::new(
                "instructions",
                Level::Warn,
                format!("`{name}` is not in {} (or is empty)", cwd.display()),
            )
            .fix("write the file, or fix `instructions` in the config"),
        );
    };
    let size = found.text.len();
    Some(match channel(&agent.provider, &found.name) {
        Ok(how) => Check::new(
            "instructions",
            Level::Ok,
            format!("{} ({size} bytes): {how}", found.name),
        ),
        Err(why) => Check::new(
            "instructions",
            Level::Info,
            format!("{} not given: {why}", found.name),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_says_its_channel_and_a_missing_file_is_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut a = AgentConfig::new("a", "claude");
        assert!(check(&a, dir.path()).is_none());
        std::fs::write(dir.path().join("AGENTS.md"), "run make test").expect("write");
        let c = check(&a, dir.path()).expect("check");
        assert_eq!(c.detail, "AGENTS.md (13 bytes): `--append-system-prompt`");
        a.provider = "codex".into();
        assert_eq!(
            check(&a, dir.path()).expect("check").detail,
            "AGENTS.md (13 bytes): read by Codex itself"
        );
        a.provider = "acp".into();
        let c = check(&a, dir.path()).expect("check");
        assert_eq!(c.level, Level::Info);
        a.instructions = Some("RULES.md".into());
        let c = check(&a, dir.path()).expect("check");
        assert_eq!(c.level, Level::Warn);
        assert!(c.detail.starts_with("`RULES.md` is not in"), "{}", c.detail);
    }
}
