//! The `hive.toml` that `hive init` writes: the chosen agents, a shell pane
//! and worktrees, each key with a comment saying what it does, so the file
//! is its own documentation.

use std::fmt::Write as _;

use super::detect::{Cli, OpenAi};

/// One pane the user chose.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Cli(Cli),
    OpenAi(OpenAi),
}

/// What to write.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub agents: Vec<Choice>,
    /// Each agent in its own git worktree.
    pub worktrees: bool,
    /// A terminal pane running the login shell.
    pub shell: bool,
}

/// The file's text. Agent ids are the providers' names (`claude`, …) and
/// the openai sources' ids, unique by construction.
pub fn render(plan: &Plan) -> String {
    let mut s = String::from(
        "# hive's configuration for this project, written by `hive init`.\n\
         # hive reads ./hive.toml when started in this directory; `hive doctor`\n\
         # checks it. Every setting: README.md (Configuration) and docs/.\n\
         \n\
         theme = \"dark\"                 # colours: themes/<name>.toml (dark, light)\n",
    );
    for choice in &plan.agents {
        s.push('\n');
        match choice {
            Choice::Cli(cli) => cli_agent(&mut s, cli, plan.worktrees),
            Choice::OpenAi(o) => openai_agent(&mut s, o, plan.worktrees),
        }
    }
    if plan.shell {
        s.push_str(
            "\n# A terminal pane: your login shell ($SHELL) beside the agents.\n\
             [[agent]]\n\
             id = \"shell\"                   # the pane's id (history, `hive ctl`)\n\
             name = \"Shell\"                 # the pane's title\n\
             provider = \"pty\"               # any interactive program in a terminal; no `command`: the shell\n\
             cwd = \".\"                      # where it starts, relative to where hive starts\n",
        );
    }
    s
}

fn common(s: &mut String, id: &str, name: &str, provider: &str, worktrees: bool) {
    let _ = writeln!(
        s,
        "[[agent]]\n{:<29} # the pane's id: history, `hive run --agent`, `hive ctl` use it",
        format!("id = \"{id}\"")
    );
    let _ = writeln!(s, "{:<29} # the pane's title", format!("name = \"{name}\""));
    let _ = writeln!(
        s,
        "{:<29} # how hive drives it (docs/{provider}.md)",
        format!("provider = \"{provider}\"")
    );
    let _ = writeln!(
        s,
        "{:<29} # where it works, relative to where hive starts",
        "cwd = \".\""
    );
    if worktrees {
        let _ = writeln!(
            s,
            "{:<29} # its own git worktree, .hive/worktrees/{id} on branch hive/{id} (docs/worktrees.md)",
            "worktree = true"
        );
    }
}

fn cli_agent(s: &mut String, cli: &Cli, worktrees: bool) {
    let version = cli.version.as_deref().unwrap_or("version unknown");
    let _ = writeln!(
        s,
        "# {} ({}, {version}); its own model and login apply.",
        cli.label,
        cli.path.as_deref().unwrap_or(cli.provider)
    );
    common(s, cli.provider, cli.label, cli.provider, worktrees);
}

fn openai_agent(s: &mut String, o: &OpenAi, worktrees: bool) {
    let _ = writeln!(
        s,
        "# hive's own agent loop on {}: an OpenAI-compatible endpoint.",
        o.label
    );
    common(s, &o.id, &o.label_short(), "openai", worktrees);
    let _ = writeln!(
        s,
        "{:<29} # the Chat Completions endpoint",
        format!("base_url = \"{}\"", o.base_url)
    );
    let _ = writeln!(
        s,
        "{:<29} # the model to ask (required)",
        format!("model = {}", toml_string(&o.model))
    );
    if let Some(var) = o.api_key_env {
        let _ = writeln!(
            s,
            "{:<29} # the variable holding the key (its value is never written or logged)",
            format!("api_key_env = \"{var}\"")
        );
    }
}

impl OpenAi {
    /// The label without its parenthesis: the pane's title.
    fn label_short(&self) -> String {
        self.label
            .split(" (")
            .next()
            .unwrap_or(&self.label)
            .replace('"', "")
    }
}

/// A TOML basic string (a model id comes from a server).
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}
