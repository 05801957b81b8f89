//! A thread's usage so far, from the rollout Codex keeps of it
//! (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`).
//!
//! `codex exec resume` reports the whole thread's usage at each turn's end;
//! a turn's own is the difference to the total before it. After a restart
//! or `/resume` hive has no earlier report, but Codex wrote its running
//! total (`token_count` events) into the rollout: that is the baseline
//! (issue 34 item 8).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::items::usage;
use crate::event::Usage;

/// The newest total a rollout recorded (`event_msg` `token_count`
/// `info.total_token_usage`); `None` when it recorded none.
pub(crate) fn last_total(text: &str) -> Option<Usage> {
    text.lines().rev().find_map(|line| {
        if !line.contains("total_token_usage") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let payload = v.get("payload")?;
        if payload.get("type").and_then(Value::as_str) != Some("token_count") {
            return None;
        }
        payload.get("info")?.get("total_token_usage").map(usage)
    })
}

/// The rollout of `thread` under `home`, if Codex kept one.
fn find(home: &Path, thread: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread}.jsonl");
    let mut dirs = vec![home.join("sessions")];
    // sessions/YYYY/MM/DD: three levels; a bound against a link loop.
    let mut visited = 0;
    while let Some(dir) = dirs.pop() {
        visited += 1;
        if visited > 10_000 {
            return None;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("rollout-") && name.ends_with(&suffix) {
                return Some(path);
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            }
        }
    }
    None
}

/// The usage `thread` had so far, as its rollout under `home` says.
pub(crate) fn thread_total(home: &Path, thread: &str) -> Option<Usage> {
    let text = std::fs::read_to_string(find(home, thread)?).ok()?;
    last_total(&text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const ROLLOUT: &str = include_str!("../../../tests/fixtures/codex/rollout-two-turns.jsonl");

    #[test]
    fn the_newest_total_of_a_real_rollout() {
        // Two turns of 9661 and 9772 input tokens: codex's running total.
        let u = last_total(ROLLOUT).unwrap();
        assert_eq!(u.input_tokens, 19_433);
        assert_eq!(u.output_tokens, 50);
    }

    #[test]
    fn found_by_thread_under_dated_folders() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/11/22");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-11-22T01-34-40-T9.jsonl"), ROLLOUT).unwrap();
        assert_eq!(
            thread_total(home.path(), "T9").unwrap().input_tokens,
            19_433
        );
        assert!(thread_total(home.path(), "T8").is_none());
    }
}
