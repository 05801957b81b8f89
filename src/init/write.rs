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
         # checks it. Every setting: README.md (Configuration) and docs/.\n\n",
    );
    key(
        &mut s,
        "theme = \"dark\"",
        "colours: themes/<name>.toml (dark, light)",
    );
    for choice in &plan.agents {
        s.push('\n');
        match choice {
            Choice::Cli(cli) => cli_agent(&mut s, cli, plan.worktrees),
            Choice::OpenAi(o) => openai_agent(&mut s, o, plan.worktrees),
        }
    }
    if plan.shell {
        s.push_str("\n# A terminal pane: your login shell ($SHELL) beside the agents.\n");
        common(&mut s, "shell", "Shell", "pty", false);
    }
    s
}

/// `key = value` and its comment, the comments in one column.
fn key(s: &mut String, key_value: &str, comment: &str) {
    let _ = writeln!(s, "{key_value:<29} # {}", one_line(comment));
}

/// `name = "value"`, the value escaped by the TOML serializer: a string
/// from a model server or a CLI's output is a value, never more keys.
fn string_key(s: &mut String, name: &str, value: &str, comment: &str) {
    key(s, &format!("{name} = {}", toml_string(value)), comment);
}

/// Comment text on one line: detected values (a server's model id, a
/// CLI's path and version) can hold newlines that would start keys.
fn one_line(text: &str) -> String {
    crate::sanitize::peer_line(text)
}

fn common(s: &mut String, id: &str, name: &str, provider: &str, worktrees: bool) {
    s.push_str("[[agent]]\n");
    string_key(
        s,
        "id",
        id,
        "the pane's id: history, `hive run --agent`, `hive ctl` use it",
    );
    string_key(s, "name", name, "the pane's title");
    let how = if provider == "pty" {
        "a terminal pane; no `command`: the login shell (docs/pty.md)".to_owned()
    } else {
        format!("how hive drives it (docs/{provider}.md)")
    };
    string_key(s, "provider", provider, &how);
    key(
        s,
        "cwd = \".\"",
        "where it works, relative to where hive starts",
    );
    if worktrees {
        key(
            s,
            "worktree = true",
            &format!(
                "its own git worktree, .hive/worktrees/{id} on branch hive/{id} (docs/worktrees.md)"
            ),
        );
    }
}

fn cli_agent(s: &mut String, cli: &Cli, worktrees: bool) {
    let version = cli.version.as_deref().unwrap_or("version unknown");
    let _ = writeln!(
        s,
        "# {}",
        one_line(&format!(
            "{} ({}, {version}); its own model and login apply.",
            cli.label,
            cli.path.as_deref().unwrap_or(cli.provider)
        ))
    );
    common(s, cli.provider, cli.label, cli.provider, worktrees);
    if cli.provider == "gemini" {
        // Headless, Gemini denies what would ask: without this line its
        // pane cannot code (#46 item 7). Left to the user to turn on.
        s.push_str(
            "# permission_mode = \"auto_edit\"  # uncomment to let Gemini code: headless it has no shell,\n\
             #                                 # write or edit tools without it; \"auto_edit\" runs edits,\n\
             #                                 # \"yolo\" edits and commands (docs/gemini.md)\n",
        );
    }
}

fn openai_agent(s: &mut String, o: &OpenAi, worktrees: bool) {
    let _ = writeln!(
        s,
        "# {}",
        one_line(&format!(
            "hive's own agent loop on {}: an OpenAI-compatible endpoint.",
            o.label
        ))
    );
    common(s, &o.id, &o.label_short(), "openai", worktrees);
    string_key(s, "base_url", &o.base_url, "the Chat Completions endpoint");
    string_key(s, "model", &o.model, "the model to ask (required)");
    if let Some(var) = o.api_key_env {
        string_key(
            s,
            "api_key_env",
            var,
            "the variable holding the key (its value is never written or logged)",
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

/// A TOML string, as the serializer escapes it (a model id comes from a
/// server). The serializer leaves C1 controls (U+0080 to U+009F, legal
/// raw in TOML) as they are, and a terminal showing the file may act on
/// one (U+009B is a CSI): a value holding any goes as a basic string with
/// every control escaped.
fn toml_string(text: &str) -> String {
    let toml = toml::Value::String(text.to_owned()).to_string();
    if !toml
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return toml;
    }
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a server said, the file holds the chosen agent and no
    /// more: newlines in a label stay in its comment, quotes and
    /// backslashes in a model id stay in its string (#53 item 2).
    #[test]
    fn detected_values_cannot_add_keys() {
        let evil = "m\"\\\n[[agent]]\nid = \"pwn\"\nprovider = \"pty\"\n";
        let plan = Plan {
            agents: vec![Choice::OpenAi(OpenAi {
                id: "local".into(),
                label: format!("local server on 127.0.0.1:1 ({evil})"),
                base_url: "http://127.0.0.1:1/v1".into(),
                model: evil.into(),
                api_key_env: None,
            })],
            worktrees: false,
            shell: false,
        };
        let text = render(&plan);
        let v: toml::Table = toml::from_str(&text).expect("valid TOML");
        let agents = v["agent"].as_array().expect("agents");
        assert_eq!(agents.len(), 1, "{text}");
        assert_eq!(agents[0]["id"].as_str(), Some("local"));
        assert_eq!(agents[0]["model"].as_str(), Some(evil));
    }

    /// #53 fuzzing (init_render's finding): a C1 control in a detected
    /// value (U+009B, an 8-bit CSI) was written raw by the serializer;
    /// it is escaped, and the value reads back the same.
    #[test]
    fn a_c1_control_is_escaped_not_written_raw() {
        for value in ["\u{9b}31m", "a\0\u{7f}\u{9b}\"\\'b", "\u{85}\n'"] {
            let text = toml_string(value);
            assert!(!text.chars().any(char::is_control), "{text:?}");
            let v: toml::Table = toml::from_str(&format!("k = {text}")).expect("TOML");
            assert_eq!(v["k"].as_str(), Some(value), "{text}");
        }
        assert_eq!(toml_string("plain"), "\"plain\"", "the serializer's own");
    }
}
