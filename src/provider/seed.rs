//! What of a vendor's home directory a sandboxed agent gets (issue 49): the
//! files its CLI needs to log in and keep its settings, copied into the
//! pane's own home (`exec::Bwrap::seed`), never a bind of the whole
//! `~/.claude` or `~/.codex` (whose other sessions, history and caches stay
//! out of the box). Paths are relative to the home; files only.

const CLAUDE: &[&str] = &[
    ".claude/.credentials.json",
    ".claude/settings.json",
    ".claude/CLAUDE.md",
    ".claude.json",
];
const CODEX: &[&str] = &[".codex/auth.json", ".codex/config.toml", ".codex/AGENTS.md"];
const GEMINI: &[&str] = &[
    ".gemini/settings.json",
    ".gemini/oauth_creds.json",
    ".gemini/google_accounts.json",
    ".gemini/GEMINI.md",
];
const PI: &[&str] = &[
    ".pi/agent/auth.json",
    ".pi/agent/settings.json",
    ".pi/agent/models.json",
];
/// An ACP agent is one of the vendors' CLIs behind an adapter.
const ACP: &[&str] = &[
    ".claude/.credentials.json",
    ".claude/settings.json",
    ".claude.json",
    ".codex/auth.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".gemini/oauth_creds.json",
    ".gemini/google_accounts.json",
];

/// The files `provider`'s agent needs from the home.
pub(crate) fn files(provider: &str) -> &'static [&'static str] {
    match provider {
        "claude" => CLAUDE,
        "codex" => CODEX,
        "gemini" => GEMINI,
        "pi" => PI,
        "acp" => ACP,
        // A terminal pane, the built-in agent, a script: nothing of a vendor's.
        _ => &[],
    }
}
