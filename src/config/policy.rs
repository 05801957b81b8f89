//! The approval policy's settings (issue 47, docs/policy.md): `[[policy]]`
//! rules for every agent, `[[agent.policy_rules]]` for one, an agent's
//! `policy` preset, and `[approvals]`.

use serde::{Deserialize, Serialize};

use super::{AgentConfig, Config};
use crate::policy::{Action, Gate, Preset, RuleSpec};

/// One rule as written: `{ id?, action, tool, command?, path? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// Names the rule in the audit log and in errors; `policy.N` (the
    /// N-th `[[policy]]`) or `AGENT.policy_rules.N` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub action: Action,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl PolicyRule {
    pub fn spec(&self) -> RuleSpec {
        RuleSpec {
            action: self.action,
            tool: self.tool.clone(),
            command: self.command.clone(),
            path: self.path.clone(),
        }
    }
}

/// `[approvals]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSettings {
    /// A card nobody answers in this many seconds is denied, and the agent
    /// told why; unset: it waits.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

impl Config {
    /// The rules that decide `agent`'s requests, with their ids: the
    /// config's `[[policy]]` first, then the agent's own.
    pub fn policy_rules(&self, agent: &AgentConfig) -> Vec<(String, RuleSpec)> {
        let mut rules = self.global_rules();
        rules.extend(own_rules(agent));
        rules
    }

    fn global_rules(&self) -> Vec<(String, RuleSpec)> {
        let id = |i: usize, r: &PolicyRule| r.id.clone().unwrap_or_else(|| format!("policy.{i}"));
        let rules = self.policy.iter().enumerate();
        rules.map(|(i, r)| (id(i + 1, r), r.spec())).collect()
    }

    /// `agent`'s approval policy, when it has one (a preset or a rule),
    /// for an agent working in `cwd`, its decisions logged to `audit` and
    /// its `allow always` kept in `learned`: the server's panes and `hive
    /// run` build theirs here alike.
    pub fn pane_policy(
        &self,
        agent: &AgentConfig,
        cwd: std::path::PathBuf,
        audit: std::sync::Arc<crate::policy::audit::Audit>,
        learned: std::sync::Arc<crate::policy::learned::LearnedRules>,
    ) -> Option<crate::policy::PanePolicy> {
        if !self.has_policy(agent) {
            return None;
        }
        let preset = agent.policy.unwrap_or_default();
        // The config's rules were checked when it loaded.
        let gate = match Gate::new(self.policy_rules(agent), preset, &cwd) {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!(agent = %agent.id, "policy: {e}");
                return None;
            }
        };
        Some(crate::policy::PanePolicy {
            pane: agent.id.clone(),
            vendor: agent.provider.clone(),
            cwd,
            gate,
            audit: Some(audit),
            learned: Some(learned),
            timeout: self
                .approvals
                .timeout_secs
                .map(std::time::Duration::from_secs),
        })
    }

    /// Whether hive's gate decides `agent`'s requests: it has a preset or
    /// a rule applies to it (without either, cards show as they always
    /// did).
    pub fn has_policy(&self, agent: &AgentConfig) -> bool {
        agent.policy.is_some() || !self.policy.is_empty() || !agent.policy_rules.is_empty()
    }

    /// Every agent's rules build (a broken glob or a rule without a tool
    /// is an error naming the rule) and no two rules share an id.
    pub(super) fn check_policy(&self) -> Result<(), String> {
        if let Some(0) = self.approvals.timeout_secs {
            return Err("approvals.timeout_secs must be at least 1".into());
        }
        let mut rules = self.global_rules();
        for a in &self.agents {
            rules.extend(own_rules(a));
        }
        let mut seen = std::collections::HashSet::new();
        for (id, _) in &rules {
            if !seen.insert(id.as_str()) {
                return Err(format!("policy rule id `{id}` is used twice"));
            }
        }
        Gate::new(rules, Preset::default(), std::path::Path::new("/"))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// `agent`'s own `[[agent.policy_rules]]`, with their ids.
fn own_rules(agent: &AgentConfig) -> Vec<(String, RuleSpec)> {
    let id = |i: usize, r: &PolicyRule| {
        r.id.clone()
            .unwrap_or_else(|| format!("{}.policy_rules.{i}", agent.id))
    };
    let rules = agent.policy_rules.iter().enumerate();
    rules.map(|(i, r)| (id(i + 1, r), r.spec())).collect()
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigSource};

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, ConfigSource::Builtin).map_err(|e| e.to_string())
    }

    #[test]
    fn global_and_agent_rules_with_their_ids() {
        let c = parse(
            r#"
[[policy]]
action = "allow"
tool = "Bash"
command = "git status*"
[[policy]]
id = "no-curl"
action = "deny"
tool = "Bash"
command = "curl*"
[approvals]
timeout_secs = 300
[[agent]]
id = "a"
provider = "script"
policy = "read-only"
[[agent.policy_rules]]
action = "allow"
tool = "Edit"
path = "docs/**"
"#,
        )
        .expect("parses");
        let a = c.agent("a").expect("agent");
        assert_eq!(a.policy, Some(crate::policy::Preset::ReadOnly));
        let ids: Vec<String> = c.policy_rules(a).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["policy.1", "no-curl", "a.policy_rules.1"]);
        assert_eq!(c.approvals.timeout_secs, Some(300));
        assert!(c.has_policy(a));
    }

    #[test]
    fn a_broken_rule_is_an_error_that_names_it() {
        let e = parse(
            r#"
[[agent]]
id = "a"
provider = "script"
[[agent.policy_rules]]
action = "allow"
tool = "Edit"
path = "src/[oops"
"#,
        )
        .expect_err("a bad glob");
        assert!(
            e.contains("a.policy_rules.1") && e.contains("src/[oops"),
            "{e}"
        );
        let e = parse("[[policy]]\nid = \"x\"\naction = \"allow\"\ntool = \" \"\n")
            .expect_err("no tool");
        assert!(e.contains("policy rule x"), "{e}");
        let e = parse("[[policy]]\naction = \"maybe\"\ntool = \"Bash\"\n").expect_err("action");
        assert!(e.contains("maybe"), "{e}");
        let e = parse("[[policy]]\naction = \"allow\"\ntool = \"Bash\"\ncmd = \"ls\"\n")
            .expect_err("unknown key");
        assert!(e.contains("cmd"), "{e}");
        let twice = "[[policy]]\nid = \"d\"\naction = \"deny\"\ntool = \"Bash\"\n";
        let e = parse(&format!("{twice}{twice}")).expect_err("an id twice");
        assert!(e.contains("`d` is used twice"), "{e}");
        let e = parse("[[agent]]\nid = \"a\"\nprovider = \"script\"\npolicy = \"lax\"\n")
            .expect_err("preset");
        assert!(e.contains("lax"), "{e}");
    }
}
