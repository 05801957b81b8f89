//! An agent's last stderr lines, made fit for the one error line a crash
//! gets in its pane (issue 13 item 10): the exit status first, then the
//! stderr lines that say something, each on its own line and once.
//!
//! Everything the agent wrote to stderr is in the log already (target
//! `agent_stderr`); what a pane shows leaves out the noise a provider names
//! (Gemini's colour and YOLO warnings, …), stack frames and repeats.

use std::process::ExitStatus;

/// Stderr lines a crash message shows at most (the newest).
pub(crate) const REPORT_LINES: usize = 6;

/// True for a line of a stack trace: a JavaScript or Rust frame
/// (`    at f (file:1:2)`, `  12: <unknown>`) or a Rust backtrace's header
/// and footer. A Rust agent (Codex) run with `RUST_BACKTRACE` set ends its
/// start-up error with some twenty frames, which would push the error
/// itself out of the report (issue 34 item 4).
fn is_stack_frame(line: &str) -> bool {
    let t = line.trim_start();
    let indented = t.len() < line.len();
    let numbered = t
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (indented && (t.starts_with("at ") || numbered))
        || t.eq_ignore_ascii_case("stack backtrace:")
        || t.starts_with("note: Some details are omitted")
        || t.starts_with("note: run with `RUST_BACKTRACE")
}

/// What node writes for any node-based agent: deprecation warnings and the
/// hint that follows them.
const NODE_NOISE: &[&str] = &["(node:", "(Use `node --trace-"];

/// True when `line` is one of `noise`: lines a provider knows its agent
/// writes on every run (each entry is matched at the start of the line,
/// after leading blanks), or node's own warnings.
pub(crate) fn is_noise(line: &str, noise: &[&str]) -> bool {
    let t = line.trim();
    t.is_empty() || noise.iter().chain(NODE_NOISE).any(|n| t.starts_with(n))
}

/// The stderr lines worth showing, oldest first: noise, stack frames and
/// repeats left out, the newest `REPORT_LINES` kept.
pub(crate) fn telling<'a>(tail: impl IntoIterator<Item = &'a str>, noise: &[&str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for line in tail {
        if is_noise(line, noise) || is_stack_frame(line) {
            continue;
        }
        let line = line.trim_end();
        // A repeat moves to where it was last said.
        out.retain(|l| *l != line);
        out.push(line);
    }
    let skip = out.len().saturating_sub(REPORT_LINES);
    out.split_off(skip)
}

/// "exited with status 1", "killed by signal 9".
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended".into(),
    }
}

/// The report of a process that ended: its exit status, then its telling
/// stderr lines, one per line.
pub(crate) fn report<'a>(
    status: Option<ExitStatus>,
    tail: impl IntoIterator<Item = &'a str>,
    noise: &[&str],
) -> String {
    let mut out = status.map(describe_exit).unwrap_or_else(|| "ended".into());
    for line in telling(tail, noise) {
        out.push('\n');
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    const NOISE: &[&str] = &["YOLO mode is enabled.", "Warning: 256-color"];

    #[test]
    fn status_first_then_each_telling_line_once() {
        let tail = [
            "Warning: 256-color support not detected. Using a terminal …",
            "YOLO mode is enabled. All tool calls will be automatically approved.",
            "YOLO mode is enabled. All tool calls will be automatically approved.",
            "fatal: boom",
            "    at throwErrorIfNotOK (file:///x.js:1:2)",
            "    at async Turn.run (file:///x.js:3:4)",
            "",
            "fatal: boom",
            "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
            "(Use `node --trace-deprecation ...` to show where the warning was created)",
            "exiting  ",
        ];
        let status = ExitStatus::from_raw(1 << 8);
        assert_eq!(
            report(Some(status), tail, NOISE),
            "exited with status 1\nfatal: boom\nexiting"
        );
    }

    #[test]
    fn a_rust_backtrace_leaves_the_error_line() {
        let mut tail = vec![
            "Error: approval_policy = \"untrusted\" is no longer supported".to_owned(),
            String::new(),
            "Stack backtrace:".to_owned(),
        ];
        tail.extend((0..24).map(|i| format!("  {i:>2}: <unknown>")));
        tail.push("             at ./src/main.rs:3:4".to_owned());
        tail.push("note: Some details are omitted, run with `RUST_BACKTRACE=full`".to_owned());
        let status = ExitStatus::from_raw(1 << 8);
        assert_eq!(
            report(Some(status), tail.iter().map(String::as_str), &[]),
            "exited with status 1\nError: approval_policy = \"untrusted\" is no longer supported"
        );
        // A line that merely starts with a number stays.
        assert_eq!(telling(["3: files changed"], &[]), ["3: files changed"]);
    }

    #[test]
    fn only_the_newest_lines_and_no_stderr_is_just_the_status() {
        let lines: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
        let kept = telling(lines.iter().map(String::as_str), &[]);
        assert_eq!(kept.len(), REPORT_LINES);
        assert_eq!(kept.last(), Some(&"line 19"));
        let killed = ExitStatus::from_raw(9);
        assert_eq!(report(Some(killed), [], &[]), "killed by signal 9");
        assert_eq!(report(None, ["   "], &[]), "ended");
    }
}
