//! `hive doctor`'s line for an agent's `account` (issue 51): the vendor's
//! config home it runs under, and a warning when that home does not exist
//! yet (nobody has logged in there). Only the home is shown: an account's
//! other variables are keys and tokens.

use super::{Check, Level};
use crate::config::AgentConfig;
use crate::config::account::home_variable;

/// The `account` check of `agent`, or none for an agent with no account.
pub(super) fn check(agent: &AgentConfig) -> Option<Check> {
    let name = agent.account.as_deref()?;
    let home = home_variable(&agent.provider).and_then(|var| Some((var, agent.env.get(var)?)));
    Some(match home {
        Some((var, dir)) if !std::path::Path::new(dir).is_dir() => Check::new(
            "account",
            Level::Warn,
            format!("`{name}`: {var}={dir}, which does not exist"),
        )
        .fix(format!(
            "log in under it once: {var}={dir} {}",
            agent.provider
        )),
        Some((var, dir)) => Check::new("account", Level::Ok, format!("`{name}`: {var}={dir}")),
        None => Check::new(
            "account",
            Level::Ok,
            format!("`{name}` (selected by its variables)"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_is_shown_and_a_missing_one_is_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut a = AgentConfig::new("a", "claude");
        assert!(check(&a).is_none());
        a.account = Some("work".into());
        a.env
            .insert("CLAUDE_CONFIG_DIR".into(), dir.path().display().to_string());
        a.env.insert("ANTHROPIC_API_KEY".into(), "sk-s3cr3t".into());
        let c = check(&a).expect("check");
        assert_eq!(c.level, Level::Ok);
        assert_eq!(
            c.detail,
            format!("`work`: CLAUDE_CONFIG_DIR={}", dir.path().display())
        );
        a.env.insert(
            "CLAUDE_CONFIG_DIR".into(),
            "/nonexistent/claude-work".into(),
        );
        let c = check(&a).expect("check");
        assert_eq!(c.level, Level::Warn);
        assert!(!format!("{c:?}").contains("s3cr3t"));
    }
}
