//! `[[account]]`: a vendor account declared once (issue 51): a name, the
//! provider it is for, and what selects it, the vendor's own config home
//! (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`) and/or variables
//! (an API key). An agent's `account = "work"` starts it under that
//! account: the variables go into its environment (its own `env` wins).
//! They stay in the server: a console gets a `PaneCard`, never an agent's
//! env, and an account's `Debug` names its variables but not their values.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Config;

/// One `[[account]]` table.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountConfig {
    pub name: String,
    /// The provider whose agents may use it (`claude`, `codex`, …).
    pub provider: String,
    /// The vendor's config home (its login, settings, sessions).
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// Variables that select the account (`ANTHROPIC_API_KEY`, …).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl std::fmt::Debug for AccountConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountConfig")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .field("home", &self.home)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The variable naming each vendor's config home, for `home`.
pub fn home_variable(provider: &str) -> Option<&'static str> {
    match provider {
        "claude" => Some("CLAUDE_CONFIG_DIR"),
        "codex" => Some("CODEX_HOME"),
        "gemini" => Some("GEMINI_CLI_HOME"),
        _ => None,
    }
}

impl AccountConfig {
    /// The variables an agent under this account is started with.
    pub fn variables(&self) -> BTreeMap<String, String> {
        let mut out = self.env.clone();
        if let (Some(home), Some(var)) = (&self.home, home_variable(&self.provider)) {
            out.insert(var.to_owned(), home.display().to_string());
        }
        out
    }
}

impl AccountConfig {
    /// Its `home` or `env` as its provider can use them, `~/` the user's
    /// home and a relative home the config's directory.
    fn settle(&mut self, what: &str, base: Option<&std::path::Path>) -> Result<(), String> {
        let a = self;
        match (&a.home, home_variable(&a.provider)) {
            (Some(_), None) => {
                return Err(format!(
                    "{what}: provider `{}` has no config home hive knows; select the account with `env`",
                    a.provider
                ));
            }
            (None, _) if a.env.is_empty() => {
                return Err(format!(
                    "{what} needs `home` (the vendor's config home) or `env`"
                ));
            }
            _ => {}
        }
        // `~/` is the user's home; a relative home, the config's directory.
        if let Some(home) = &a.home {
            let expanded = match home.strip_prefix("~") {
                Ok(rest) => std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(rest))
                    .ok_or_else(|| format!("{what}: `~` in home, and HOME is not set"))?,
                Err(_) => home.clone(),
            };
            a.home = Some(match base {
                Some(b) if expanded.is_relative() => b.join(expanded),
                _ => expanded,
            });
        }
        Ok(())
    }
}

impl Config {
    /// Every `[[account]]` well-formed and of a name of its own per
    /// provider; each agent's `account` one of its provider's; then that
    /// account's variables put in the agent's environment.
    pub(super) fn resolve_accounts(&mut self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        let base = self.source.base_dir().map(std::path::Path::to_owned);
        for a in &mut self.accounts {
            let what = format!("account `{}`", a.name);
            if !super::valid_id(&a.name) {
                return Err(format!(
                    "{what}: a name is 1 to 64 letters, digits, `-` and `_`"
                ));
            }
            if !seen.insert((a.provider.clone(), a.name.clone())) {
                return Err(format!("{what} of `{}` is declared twice", a.provider));
            }
            a.settle(&what, base.as_deref())?;
        }
        for agent in &mut self.agents {
            let Some(name) = &agent.account else {
                continue;
            };
            let account = self
                .accounts
                .iter()
                .find(|a| &a.name == name && a.provider == agent.provider)
                .ok_or_else(|| {
                    let theirs: Vec<&str> = self
                        .accounts
                        .iter()
                        .filter(|a| a.provider == agent.provider)
                        .map(|a| a.name.as_str())
                        .collect();
                    format!(
                        "agent `{}`: no [[account]] `{name}` of provider `{}` ({})",
                        agent.id,
                        agent.provider,
                        if theirs.is_empty() {
                            "it has none".to_owned()
                        } else {
                            format!("it has: {}", theirs.join(", "))
                        }
                    )
                })?;
            for (k, v) in account.variables() {
                agent.env.entry(k).or_insert(v);
            }
        }
        for agent in &self.agents {
            let others = self
                .accounts_of(&agent.provider)
                .filter(|a| agent.account.as_ref() != Some(&a.name))
                .count();
            if agent.on_limit == super::OnLimit::NextAccount && others == 0 {
                return Err(format!(
                    "agent `{}`: on_limit = \"next-account\" needs another [[account]] of provider `{}` to go to",
                    agent.id, agent.provider
                ));
            }
        }
        Ok(())
    }

    /// The accounts of `provider`, in the config's order.
    pub fn accounts_of<'a>(&'a self, provider: &'a str) -> impl Iterator<Item = &'a AccountConfig> {
        self.accounts.iter().filter(move |a| a.provider == provider)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigSource};

    const ACCOUNTS: &str = r#"
[[account]]
name = "work"
provider = "claude"
home = "/srv/claude-work"

[[account]]
name = "work"
provider = "codex"
home = "/srv/codex-work"

[[account]]
name = "api"
provider = "openai"
env = { OPENAI_API_KEY = "sk-s3cr3t" }
"#;

    fn parse(agents: &str) -> Result<Config, String> {
        Config::parse(&format!("{ACCOUNTS}\n{agents}"), ConfigSource::Builtin)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_agents_account_selects_the_vendors_home_or_variables() {
        let config = parse(
            "[[agent]]\nid = \"cc\"\nprovider = \"claude\"\naccount = \"work\"\n\
             [[agent]]\nid = \"cx\"\nprovider = \"codex\"\naccount = \"work\"\n\
             [[agent]]\nid = \"own\"\nprovider = \"claude\"\naccount = \"work\"\nenv = { CLAUDE_CONFIG_DIR = \"/mine\" }\n\
             [[agent]]\nid = \"o\"\nprovider = \"openai\"\naccount = \"api\"\n\
             [[agent]]\nid = \"none\"\nprovider = \"claude\"\n",
        )
        .expect("valid");
        let env = |id: &str| config.agent(id).expect("agent").env.clone();
        assert_eq!(env("cc")["CLAUDE_CONFIG_DIR"], "/srv/claude-work");
        assert_eq!(env("cx")["CODEX_HOME"], "/srv/codex-work");
        assert_eq!(env("own")["CLAUDE_CONFIG_DIR"], "/mine");
        assert_eq!(env("o")["OPENAI_API_KEY"], "sk-s3cr3t");
        assert!(env("none").is_empty());
        assert_eq!(config.accounts_of("claude").count(), 1);
        // A console's card of the pane has no account variable.
        let card = format!("{:?}", config.agent("o").expect("agent").card());
        assert!(!card.contains("s3cr3t"), "{card}");
        let shown = format!("{:?}", config.accounts);
        assert!(
            shown.contains("OPENAI_API_KEY") && !shown.contains("s3cr3t"),
            "{shown}"
        );
    }

    #[test]
    fn a_wrong_account_is_a_config_error_that_says_which() {
        let e = parse("[[agent]]\nid = \"g\"\nprovider = \"gemini\"\naccount = \"work\"\n")
            .expect_err("no gemini account");
        assert!(
            e.contains("agent `g`: no [[account]] `work` of provider `gemini` (it has none)"),
            "{e}"
        );
        let e = parse("[[agent]]\nid = \"c\"\nprovider = \"claude\"\naccount = \"home\"\n")
            .expect_err("unknown");
        assert!(e.contains("(it has: work)"), "{e}");
        for (table, want) in [
            (
                "name = \"a\"\nprovider = \"pi\"\nhome = \"/x\"",
                "has no config home hive knows",
            ),
            ("name = \"a\"\nprovider = \"claude\"", "needs `home`"),
            (
                "name = \"a b\"\nprovider = \"claude\"\nhome = \"/x\"",
                "a name is 1 to 64",
            ),
        ] {
            let e = Config::parse(&format!("[[account]]\n{table}\n"), ConfigSource::Builtin)
                .expect_err(table)
                .to_string();
            assert!(e.contains(want), "{table}: {e}");
        }
        let twice = "[[account]]\nname = \"a\"\nprovider = \"claude\"\nhome = \"/x\"\n";
        let e = Config::parse(&format!("{twice}{twice}"), ConfigSource::Builtin)
            .expect_err("twice")
            .to_string();
        assert!(e.contains("declared twice"), "{e}");
    }

    #[test]
    fn next_account_needs_another_account_to_go_to() {
        // ACCOUNTS has one claude account, `work`: from it, nowhere to go.
        let e = parse(
            "[[agent]]\nid = \"c\"\nprovider = \"claude\"\naccount = \"work\"\non_limit = \"next-account\"\n",
        )
        .expect_err("nowhere to go");
        assert!(
            e.contains("needs another [[account]] of provider `claude`"),
            "{e}"
        );
        // From the vendor's default home, `work` is another one.
        let config =
            parse("[[agent]]\nid = \"c\"\nprovider = \"claude\"\non_limit = \"next-account\"\n")
                .expect("work to go to");
        assert_eq!(
            config.agents[0].on_limit,
            crate::config::OnLimit::NextAccount
        );
        let e = parse("[[agent]]\nid = \"c\"\nprovider = \"claude\"\non_limit = \"sometimes\"\n")
            .expect_err("unknown value");
        assert!(
            e.contains("on_limit") || e.contains("unknown variant"),
            "{e}"
        );
    }
}
