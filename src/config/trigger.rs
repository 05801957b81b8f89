//! `[[trigger]]` tables (issue 48, docs/forge.md): work that starts panes
//! by itself, in the server, whether or not a console is attached. Each
//! trigger watches one kind of event — an issue with a label, a failed run
//! on a branch, a cron schedule — runs its gate first (no pane unless it
//! prints something), starts at most one pane per event, and at most
//! `max_panes` open at once.

use serde::{Deserialize, Serialize};

/// What a trigger watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerOn {
    /// Open issues with `label`: one pane per issue, as `/issue N`.
    Label,
    /// Failed workflow runs on `branch`: one pane per run, its failed log
    /// quoted.
    CheckFailed,
    /// `schedule` (cron): one pane per new thing the gate prints.
    Schedule,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerConfig {
    /// Names it, and the panes it starts (`<id>-<issue>`, `<id>-<n>`).
    pub id: String,
    pub on: TriggerOn,
    /// `on = "label"`: the label.
    #[serde(default)]
    pub label: Option<String>,
    /// `on = "check_failed"`: the branch (default `main`).
    #[serde(default)]
    pub branch: Option<String>,
    /// `on = "schedule"`: when, in cron syntax.
    #[serde(default)]
    pub schedule: Option<String>,
    /// How often the forge is asked (label, check_failed); default
    /// `[forge] watch_every_secs`. Failures back off to 8×.
    #[serde(default)]
    pub every_secs: Option<u64>,
    /// The `[[agent]]` whose copy each pane is.
    pub template: String,
    /// A command (`sh -c`, in the template's directory, the event in
    /// `HIVE_EVENT_*` variables) run before any pane: nothing printed,
    /// no pane and no model call.
    #[serde(default)]
    pub gate: Option<String>,
    /// The first message's opening words (`{title}`, `{number}`, `{url}`,
    /// `{branch}` filled in); the event and the gate's output follow,
    /// quoted as untrusted.
    #[serde(default)]
    pub message: Option<String>,
    /// Open panes of this trigger at once, at most.
    #[serde(default = "default_max_panes")]
    pub max_panes: usize,
}

fn default_max_panes() -> usize {
    3
}

impl TriggerConfig {
    /// What is wrong with it, given the config's agent ids.
    pub fn check(&self, agents: &[&str]) -> Result<(), String> {
        let id = &self.id;
        if !super::valid_id(id) || id.len() > 40 {
            return Err(format!(
                "trigger id `{id}` must be 1 to 40 letters, digits, `-` and `_`"
            ));
        }
        if !agents.contains(&self.template.as_str()) {
            return Err(format!(
                "trigger `{id}`: template `{}` is no [[agent]] of this config",
                self.template
            ));
        }
        if self.max_panes == 0 {
            return Err(format!("trigger `{id}`: max_panes must be at least 1"));
        }
        match self.on {
            TriggerOn::Label if self.label.as_deref().is_none_or(str::is_empty) => Err(format!(
                "trigger `{id}`: on = \"label\" needs label = \"…\""
            )),
            TriggerOn::Schedule => match &self.schedule {
                None => Err(format!(
                    "trigger `{id}`: on = \"schedule\" needs schedule = \"…\" (cron)"
                )),
                Some(s) => super::cron::Cron::parse(s)
                    .map(drop)
                    .map_err(|e| format!("trigger `{id}`: {e}")),
            },
            _ => Ok(()),
        }
    }
}

/// Each `[[trigger]]` well formed, its id unique, its template an agent.
pub(super) fn check_all(
    triggers: &[TriggerConfig],
    agents: &[super::AgentConfig],
) -> Result<(), String> {
    let agents: Vec<&str> = agents.iter().map(|a| a.id.as_str()).collect();
    let mut ids = std::collections::HashSet::new();
    for t in triggers {
        t.check(&agents)?;
        if !ids.insert(t.id.as_str()) {
            return Err(format!("trigger id `{}` is used twice", t.id));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn load(extra: &str) -> Result<Config, String> {
        let text = format!("[[agent]]\nid = \"a\"\nprovider = \"claude\"\n{extra}");
        Config::parse(&text, crate::config::ConfigSource::Builtin).map_err(|e| e.to_string())
    }

    #[test]
    fn a_bad_trigger_is_a_config_error_that_says_why() {
        for (extra, says) in [
            (
                "[[trigger]]\nid = \"t\"\non = \"label\"\ntemplate = \"a\"",
                "needs label",
            ),
            (
                "[[trigger]]\nid = \"t\"\non = \"label\"\nlabel = \"x\"\ntemplate = \"zz\"",
                "no [[agent]]",
            ),
            (
                "[[trigger]]\nid = \"t\"\non = \"schedule\"\nschedule = \"* *\"\ntemplate = \"a\"",
                "5 fields",
            ),
            (
                "[[trigger]]\nid = \"t t\"\non = \"check_failed\"\ntemplate = \"a\"",
                "trigger id",
            ),
            (
                "[[trigger]]\nid = \"t\"\non = \"sometimes\"\ntemplate = \"a\"",
                "sometimes",
            ),
        ] {
            let err = load(extra).unwrap_err();
            assert!(err.contains(says), "{extra}: {err}");
        }
        let twice = "[[trigger]]\nid = \"t\"\non = \"check_failed\"\ntemplate = \"a\"\n";
        assert!(
            load(&format!("{twice}{twice}"))
                .unwrap_err()
                .contains("used twice")
        );
        let ok = load("[[trigger]]\nid = \"nightly\"\non = \"schedule\"\nschedule = \"0 3 * * 1-5\"\ntemplate = \"a\"").unwrap();
        assert_eq!(ok.triggers[0].max_panes, 3);
    }
}
