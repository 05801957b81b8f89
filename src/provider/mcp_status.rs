//! An MCP server the agent could not start, as each vendor says it (issue
//! 51): a warning in the pane, once per server. Claude Code lists failed
//! servers in its `init` (claude/translate); the others say it in a
//! notification or on stderr, read here:
//! - Codex (`app-server`): `mcpServer/startupStatus/updated` with status
//!   `failed` and the error (codex/app_server/server.rs);
//! - Codex core, in any of its front ends: ``MCP client for `NAME` failed
//!   to start: WHY`` (or ``… timed out after N seconds``), the message of
//!   `mcp_init_error_display`, logged on stderr;
//! - codex-acp: its stderr WARN of the `McpStartupComplete` event it does
//!   not route, a Rust `Debug` line holding
//!   `McpStartupFailure { server: "NAME", error: "WHY" }`;
//! - Gemini CLI, headless and `--acp`: `[MCP error] Error during discovery
//!   for MCP server 'NAME': WHY` on stderr.
//!
//! What the agent wrote is untrusted: names and reasons are neutralized and
//! cut short before they reach a pane.

use std::collections::HashSet;
use std::sync::Mutex;

/// The longest reason a warning quotes.
const WHY_CHARS: usize = 200;

/// The servers a pane has been warned of: each once, whoever said it
/// (Codex says a failure in a notification and on stderr).
#[derive(Debug, Default)]
pub(crate) struct Warned(Mutex<HashSet<String>>);

impl Warned {
    /// True the first time `name` is given.
    pub(crate) fn first(&self, name: &str) -> bool {
        self.0
            .lock()
            .map(|mut seen| seen.insert(name.to_owned()))
            .unwrap_or(true)
    }
}

/// The pane's warning for server `name`, which `vendor` says did not start
/// because of `why` (empty: no reason given).
pub(crate) fn warning(name: &str, vendor: &str, why: &str) -> String {
    let name = crate::sanitize::neutralize(name);
    let why = one_line(why);
    if why.is_empty() {
        format!("MCP server `{name}` did not start ({vendor} says it failed)")
    } else {
        format!("MCP server `{name}` did not start ({vendor}: {why})")
    }
}

/// `why` neutralized, on one line, at most `WHY_CHARS` characters.
fn one_line(why: &str) -> String {
    let flat: String = why.split_whitespace().collect::<Vec<_>>().join(" ");
    let clean = crate::sanitize::neutralize(&flat);
    let mut out: String = clean.chars().take(WHY_CHARS).collect();
    if clean.chars().count() > WHY_CHARS {
        out.push('…');
    }
    out
}

/// Every server a stderr line says did not start: `(name, vendor, why)`.
pub(crate) fn failed_in_stderr(line: &str) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    // codex-acp's Debug line names each failure; its `error` holds the
    // core message too, which the name's dedup then drops.
    let mut rest = line;
    while let Some(at) = rest.find("McpStartupFailure { server: \"") {
        rest = &rest[at + "McpStartupFailure { server: \"".len()..];
        let Some((name, after)) = rest.split_once('"') else {
            break;
        };
        let why = after
            .strip_prefix(", error: \"")
            .map(debug_string)
            .unwrap_or_default();
        out.push((name.to_owned(), "Codex", why));
        rest = after;
    }
    let marker = "MCP client for `";
    let mut rest = line;
    while let Some(at) = rest.find(marker) {
        rest = &rest[at + marker.len()..];
        let Some((name, after)) = rest.split_once('`') else {
            break;
        };
        let why = if let Some(why) = after.strip_prefix(" failed to start: ") {
            why.split("\", ").next().unwrap_or(why)
        } else if after.starts_with(" timed out after ") {
            after.trim_start().split(". ").next().unwrap_or(after)
        } else {
            continue;
        };
        out.push((name.to_owned(), "Codex", why.to_owned()));
    }
    let gemini = "Error during discovery for MCP server '";
    if let Some(at) = line.find(gemini) {
        let rest = &line[at + gemini.len()..];
        if let Some((name, after)) = rest.split_once("': ") {
            // The message, without the stack that may follow on the line.
            let why = after.split(" McpError:").next().unwrap_or(after);
            out.push((name.to_owned(), "Gemini CLI", why.to_owned()));
        }
    }
    let mut seen = HashSet::new();
    out.retain(|(name, _, _)| seen.insert(name.clone()));
    out
}

/// A Rust `Debug` string's text up to its closing quote, escapes undone
/// (`\"` and `\\`; the rest kept as written).
fn debug_string(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push(' '),
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines as each vendor writes them (tests/fixtures/mcp/).
    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/mcp/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn failed(text: &str) -> Vec<(String, &'static str, String)> {
        text.lines().flat_map(failed_in_stderr).collect()
    }

    #[test]
    fn codex_acp_reports_each_failed_server_once_with_its_reason() {
        let got = failed(&fixture("codex-acp-failed.stderr.txt"));
        assert_eq!(
            got,
            [(
                "files".to_owned(),
                "Codex",
                "MCP client for `files` failed to start: handshaking with MCP server failed: connection closed: initialize response".to_owned()
            )]
        );
        // The capture of a run with no server failing says nothing.
        assert!(failed(&fixture("codex-acp-ok.stderr.txt")).is_empty());
    }

    #[test]
    fn codex_core_and_gemini_lines_name_the_server() {
        let got = failed(&fixture("gemini-failed.stderr.txt"));
        assert_eq!(
            got,
            [(
                "files".to_owned(),
                "Gemini CLI",
                "MCP error -32000: Connection closed".to_owned()
            )]
        );
        let line = "2026-12-02T10:00:00Z ERROR codex_core::mcp: MCP client for `docs` timed out after 10 seconds. Add or adjust `startup_timeout_sec` in your config.toml:";
        assert_eq!(
            failed_in_stderr(line),
            [(
                "docs".to_owned(),
                "Codex",
                "timed out after 10 seconds".to_owned()
            )]
        );
        assert!(failed_in_stderr("MCP client for `x` started").is_empty());
        assert!(failed_in_stderr("Ripgrep is not available.").is_empty());
    }

    /// A hostile agent's stderr cannot put escapes or a flood into a pane.
    #[test]
    fn the_warning_is_one_clean_short_line() {
        let line = format!(
            "Error during discovery for MCP server 'evil\x1b]0;pwned\x07': boom\x1b[2J{}",
            "x".repeat(5000)
        );
        let (name, vendor, why) = failed_in_stderr(&line).remove(0);
        let w = warning(&name, vendor, &why);
        assert!(!w.contains('\x1b') && !w.contains('\x07'), "{w:?}");
        assert!(w.chars().count() < WHY_CHARS + 80, "{}", w.len());
        assert!(w.starts_with("MCP server `evil"), "{w}");
        let warned = Warned::default();
        assert!(warned.first("files"));
        assert!(!warned.first("files"));
        assert!(warned.first("docs"));
    }
}
