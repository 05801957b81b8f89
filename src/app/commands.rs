//! Slash commands typed in a composer: hive's own (`/model`, `/effort`,
//! `/copy`…) and the agent's (as it announced them). One table feeds the
//! completion menu, the help overlay and the parser, so a command that
//! neither hive nor the agent knows is refused in the pane instead of being
//! sent to the model as text.

/// hive's own commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HiveCommand {
    Model,
    Effort,
    Account,
    Clear,
    Resume,
    Compact,
    Copy,
    Diff,
    Handoff,
    Mute,
    New,
    Close,
    Rename,
    Move,
    Window,
    Fanout,
    Issue,
    Pr,
    Checks,
    Repo,
    Help,
}

/// (command, name, aliases, argument hint, what it does), in menu order.
pub(crate) const HIVE_COMMANDS: &[(HiveCommand, &str, &[&str], &str, &str)] = &[
    (
        HiveCommand::Model,
        "model",
        &[],
        "[name]",
        "switch the model (picker without a name)",
    ),
    (
        HiveCommand::Effort,
        "effort",
        &["thinking"],
        "[level]",
        "thinking / reasoning effort: off low medium high",
    ),
    (
        HiveCommand::Clear,
        "clear",
        // Not `new`, as Codex has it: `/new` makes a pane (issue 32).
        &[],
        "",
        "start a new session",
    ),
    (
        HiveCommand::Resume,
        "resume",
        &[],
        "",
        "pick one of this agent's past sessions",
    ),
    (
        HiveCommand::Compact,
        "compact",
        &[],
        "",
        "ask the agent to compact its context (where it can)",
    ),
    (
        HiveCommand::Copy,
        "copy",
        &[],
        "[message|code|tool|turn]",
        "copy to the clipboard",
    ),
    (
        HiveCommand::Diff,
        "diff",
        &[],
        "",
        "show the changes in the agent's directory",
    ),
    (HiveCommand::Help, "help", &[], "", "keys and commands"),
    (
        HiveCommand::Handoff,
        "handoff",
        &[],
        "<pane|provider>",
        "continue the task in another pane (sends it a brief)",
    ),
    (
        HiveCommand::Account,
        "account",
        &[],
        "[name]",
        "go on under another [[account]], with the conversation",
    ),
    (
        HiveCommand::New,
        "new",
        &[],
        "[template|provider] [id] [--cwd DIR] [--model M] [--worktree] [--repo DIR]… [--name N] [--host H]",
        "a new pane (no argument: pick a template or a provider)",
    ),
    (
        HiveCommand::Close,
        "close",
        &[],
        "[team]",
        "close this pane (team: with its helpers); the history stays",
    ),
    (
        HiveCommand::Rename,
        "rename",
        &[],
        "<name>",
        "retitle this pane",
    ),
    (
        HiveCommand::Move,
        "move",
        &[],
        "<place>|@host",
        "move this pane to another place (1 is first), or to a host's hive",
    ),
    (
        HiveCommand::Window,
        "window",
        &[],
        "<n|new>",
        "move this pane to window n (or a new one)",
    ),
    (
        HiveCommand::Fanout,
        "fanout",
        &["best-of"],
        "<N> [--models M1,M2] [prompt]",
        "best of N: N copies of this agent, each in its own worktree, one prompt",
    ),
    (
        HiveCommand::Issue,
        "issue",
        &[],
        "<N> [template|provider] [id]",
        "a pane for the forge's issue N, in its own worktree and branch",
    ),
    (
        HiveCommand::Pr,
        "pr",
        &[],
        "[--ready] [--title T] | watch | merge [method]",
        "push this pane's branch and open its pull request (draft)",
    ),
    (
        HiveCommand::Checks,
        "checks",
        &[],
        "",
        "this pane's pull request: checks, reviews, what the watcher sent",
    ),
    (
        HiveCommand::Mute,
        "mute",
        &[],
        "[type]",
        "no bell or notification from this pane, or of one type",
    ),
    (
        HiveCommand::Repo,
        "repo",
        &[],
        "add <dir>",
        "add a repository to this pane's workspace",
    ),
];

/// Effort levels offered by the `/effort` picker (agents take their own
/// names too, typed after `/effort`).
pub(crate) const EFFORT_LEVELS: &[&str] = &["off", "low", "medium", "high"];

/// What a submitted composer text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A message for the agent.
    Text(String),
    /// One of hive's commands with its (trimmed) argument.
    Hive(HiveCommand, String),
    /// A slash command neither hive nor the agent offers.
    Unknown(String),
}

/// Reads a submitted text. `agent` holds the agent's announced commands
/// (with or without their leading slash). `//x` sends `/x` as text.
pub(crate) fn parse(text: &str, agent: &[String]) -> Parsed {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Parsed::Text(format!("/{rest}"));
    }
    let Some(name) = command_word(trimmed) else {
        return Parsed::Text(text.to_owned());
    };
    let arg = trimmed[1 + name.len()..].trim().to_owned();
    let agent_has = agent_offers(agent, name);
    match lookup(name) {
        // The agent's own /compact is the one that compacts.
        Some(HiveCommand::Compact) if agent_has => Parsed::Text(text.to_owned()),
        Some(cmd) => Parsed::Hive(cmd, arg),
        None if agent_has => Parsed::Text(text.to_owned()),
        None => Parsed::Unknown(name.to_owned()),
    }
}

/// The agent announced `/name`.
pub(crate) fn agent_offers(agent: &[String], name: &str) -> bool {
    agent.iter().any(|c| c.trim_start_matches('/') == name)
}

/// `/word…` where the word looks like a command name (not a path such as
/// `/usr/bin`).
fn command_word(text: &str) -> Option<&str> {
    let body = text.strip_prefix('/')?;
    let end = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
    let word = &body[..end];
    let ok = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    ok.then_some(word)
}

pub(crate) fn lookup(name: &str) -> Option<HiveCommand> {
    HIVE_COMMANDS
        .iter()
        .find(|(_, n, aliases, _, _)| *n == name || aliases.contains(&name))
        .map(|c| c.0)
}

/// One entry of the completion menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The command name without its slash.
    pub name: String,
    pub hint: String,
    pub about: String,
    /// The agent's own command (not hive's).
    pub agent: bool,
}

/// Commands starting with `word` (hive's first, then the agent's that hive
/// does not shadow), for the menu.
pub(crate) fn candidates(word: &str, agent: &[String]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = HIVE_COMMANDS
        .iter()
        .filter(|(_, n, aliases, _, _)| {
            n.starts_with(word) || aliases.iter().any(|a| a.starts_with(word))
        })
        .map(|(_, n, _, hint, about)| Candidate {
            name: (*n).to_owned(),
            hint: (*hint).to_owned(),
            about: (*about).to_owned(),
            agent: false,
        })
        .collect();
    for c in agent {
        let name = c.trim_start_matches('/');
        if name.starts_with(word) && !out.iter().any(|o| o.name == name) {
            out.push(Candidate {
                name: name.to_owned(),
                hint: String::new(),
                about: "the agent's command".into(),
                agent: true,
            });
        }
    }
    out
}

/// The word being completed when the composer holds just `/word`.
pub(crate) fn completing(text: &str) -> Option<&str> {
    let body = text.strip_prefix('/')?;
    if body.contains(char::is_whitespace) || body.starts_with('/') {
        return None;
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> Vec<String> {
        vec!["/compact".into(), "review".into(), "model".into()]
    }

    #[test]
    fn hive_commands_win_except_the_agents_compact() {
        assert_eq!(
            parse("/model gpt-5.4", &agent()),
            Parsed::Hive(HiveCommand::Model, "gpt-5.4".into())
        );
        assert_eq!(
            parse("/thinking high", &[]),
            Parsed::Hive(HiveCommand::Effort, "high".into())
        );
        assert_eq!(parse("/compact", &agent()), Parsed::Text("/compact".into()));
        assert_eq!(
            parse("/compact", &[]),
            Parsed::Hive(HiveCommand::Compact, String::new())
        );
    }

    #[test]
    fn agent_commands_go_as_text_and_unknown_ones_are_refused() {
        assert_eq!(
            parse("/review this", &agent()),
            Parsed::Text("/review this".into())
        );
        assert_eq!(parse("/nope", &agent()), Parsed::Unknown("nope".into()));
        assert_eq!(parse("//nope", &agent()), Parsed::Text("/nope".into()));
        assert_eq!(
            parse("/usr/bin is a path", &[]),
            Parsed::Text("/usr/bin is a path".into())
        );
        assert_eq!(parse("hello", &[]), Parsed::Text("hello".into()));
    }

    #[test]
    fn candidates_list_hive_then_agent_without_duplicates() {
        let names: Vec<String> = candidates("", &agent())
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names.iter().filter(|n| *n == "model").count(), 1);
        assert_eq!(names.first().map(String::as_str), Some("model"));
        assert_eq!(names.last().map(String::as_str), Some("review"));
        let c = candidates("co", &agent());
        assert_eq!(
            c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["compact", "copy"]
        );
        assert!(candidates("zz", &agent()).is_empty());
        assert_eq!(completing("/mo"), Some("mo"));
        assert_eq!(completing("/model x"), None);
        assert_eq!(completing("hi"), None);
    }
}
