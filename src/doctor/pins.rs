//! The agent versions hive was tested with: read at build time from the
//! `PINNED` table of scripts/install-agents.sh, so the script stays the one
//! place they are written down.

use std::cmp::Ordering;

const INSTALL_SCRIPT: &str = include_str!("../../scripts/install-agents.sh");

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pin {
    pub package: &'static str,
    pub version: &'static str,
}

/// `"<package> <version> <spec>"` lines of the script's `PINNED=( ... )`.
fn pinned() -> impl Iterator<Item = (&'static str, &'static str)> {
    INSTALL_SCRIPT
        .split_once("PINNED=(")
        .and_then(|(_, rest)| rest.split_once("\n)"))
        .map(|(table, _)| table)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut words = l.trim().trim_matches('"').split_whitespace();
            Some((words.next()?, words.next()?))
        })
}

/// The tested version of the program called `name` (a path's file name);
/// the providers' descriptors say which npm package installs it.
pub(super) fn pin_for(name: &str) -> Option<Pin> {
    let package = crate::provider::Registry::builtin().npm_package(name)?;
    let (_, version) = pinned().find(|(pkg, _)| *pkg == package)?;
    Some(Pin { package, version })
}

/// The first `N.N.N` in a `--version` output.
pub(super) fn parse_version(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|w| w.trim_matches('.'))
        .find(|w| {
            let parts: Vec<_> = w.split('.').collect();
            parts.len() >= 3 && parts.iter().all(|p| !p.is_empty())
        })
        .map(str::to_owned)
}

/// Numeric comparison, part by part (`0.10.0` > `0.9.9`).
pub(super) fn compare(a: &str, b: &str) -> Ordering {
    let nums = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    nums(a).cmp(&nums(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_come_from_the_install_script() {
        let claude = pin_for("claude").unwrap();
        assert_eq!(claude.package, "@anthropic-ai/claude-code");
        assert!(INSTALL_SCRIPT.contains(&format!("{}@{}", claude.package, claude.version)));
        let registry = crate::provider::Registry::builtin();
        for npm in registry.descriptors().flat_map(|d| d.npm) {
            let program = npm.program;
            assert!(
                pin_for(program).is_some(),
                "{program} has no pin in the script"
            );
        }
        assert_eq!(pin_for("aider"), None);
    }

    #[test]
    fn versions_parse_and_compare() {
        assert_eq!(
            parse_version("2.1.330 (Claude Code)").as_deref(),
            Some("2.1.330")
        );
        assert_eq!(
            parse_version("codex-cli 0.169.0\n").as_deref(),
            Some("0.169.0")
        );
        assert_eq!(parse_version("v1.2 build 7"), None);
        assert_eq!(compare("0.10.0", "0.9.9"), Ordering::Greater);
        assert_eq!(compare("2.1.330", "2.1.330"), Ordering::Equal);
        assert_eq!(compare("0.100.0", "0.169.0"), Ordering::Less);
    }
}
