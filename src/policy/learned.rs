//! Rules learned from cards (issue 47): `allow always` on a card adds an
//! allow rule for exactly what was asked (each simple command of its line,
//! or its one path), kept in `approval-rules.json` in the project's state
//! dir (0600) and read by every pane of the project from then on. A
//! destructive request is never learned (its second card has no always),
//! nor a line the shell reader cannot vouch for (no rule could allow it).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::gate::{Action, RuleSpec, Subject};
use super::shell::{self, Parsed};

/// One learned rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    /// `learned.N`, never reused within the file.
    pub id: String,
    #[serde(flatten)]
    pub rule: RuleSpec,
    /// The pane whose card taught it, and when (RFC 3339).
    pub pane: String,
    pub at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    next: u64,
    #[serde(default)]
    rules: Vec<Learned>,
}

/// The project's learned rules.
#[derive(Debug)]
pub struct LearnedRules {
    path: PathBuf,
    lock: Mutex<()>,
}

impl LearnedRules {
    /// `approval-rules.json` in the state dir `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            path: dir.join("approval-rules.json"),
            lock: Mutex::new(()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every learned rule, as the gate takes them (a broken file counts
    /// as none, and is logged).
    pub fn rules(&self) -> Vec<Learned> {
        self.read().rules
    }

    fn read(&self) -> File {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(path = %self.path.display(), "learned approval rules unreadable: {e}");
                File::default()
            }),
            Err(_) => File::default(),
        }
    }

    fn write(&self, file: &File) -> std::io::Result<()> {
        use std::io::Write;
        if let Some(dir) = self.path.parent() {
            crate::private::create_dir(dir)?;
        }
        let text = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
        let tmp = self.path.with_extension("json.tmp");
        let mut opts = crate::private::file_options();
        opts.write(true).create(true).truncate(true);
        let mut f = crate::private::open_own_file(&mut opts, &tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Learns `subject` (asked by `pane`); the ids added, or why nothing
    /// could be learned.
    /// Paths are kept relative to `repo`, as the gate reads them.
    pub fn learn(&self, subject: &Subject, pane: &str, repo: &Path) -> Result<Vec<String>, String> {
        let specs = specs_for(subject, repo)?;
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = self.read();
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let mut ids = Vec::new();
        for rule in specs {
            if file.rules.iter().any(|l| l.rule == rule) {
                continue;
            }
            file.next += 1;
            let id = format!("learned.{}", file.next);
            ids.push(id.clone());
            file.rules.push(Learned {
                id,
                rule,
                pane: pane.to_owned(),
                at: at.clone(),
            });
        }
        self.write(&file).map_err(|e| e.to_string())?;
        Ok(ids)
    }

    /// Removes rule `id`; false when there is none.
    pub fn forget(&self, id: &str) -> std::io::Result<bool> {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut file = self.read();
        let before = file.rules.len();
        file.rules.retain(|l| l.id != id);
        if file.rules.len() == before {
            return Ok(false);
        }
        self.write(&file)?;
        Ok(true)
    }
}

/// The allow rules that cover exactly `subject`.
fn specs_for(subject: &Subject, repo: &Path) -> Result<Vec<RuleSpec>, String> {
    let spec = |command: Option<String>, path: Option<String>| RuleSpec {
        action: Action::Allow,
        tool: subject.tool.clone(),
        command,
        path,
    };
    if let Some(line) = &subject.command {
        return match shell::parse(line) {
            Parsed::Commands(cmds) => {
                Ok(cmds.iter().map(|c| spec(Some(c.join(" ")), None)).collect())
            }
            Parsed::Opaque(why) => Err(format!(
                "not learned: hive cannot read this line ({why}), so no rule may allow it"
            )),
        };
    }
    match subject.paths.as_slice() {
        [one] => Ok(vec![spec(
            None,
            Some(globset::escape(
                &one.strip_prefix(repo).unwrap_or(one).display().to_string(),
            )),
        )]),
        [] => Ok(vec![spec(None, None)]),
        _ => Err("not learned: a rule covers one path; this asks for several".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Gate, Preset};

    fn bash(line: &str) -> Subject {
        Subject {
            tool: "Bash".into(),
            command: Some(line.into()),
            ..Subject::default()
        }
    }

    #[test]
    fn a_learned_rule_allows_that_request_and_no_wider_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = LearnedRules::in_dir(dir.path());
        let ids = store
            .learn(&bash("cargo test --lib"), "a", Path::new("/repo"))
            .unwrap();
        assert_eq!(ids, ["learned.1"]);
        let gate = |store: &LearnedRules| {
            let rules = store.rules().into_iter().map(|l| (l.id, l.rule)).collect();
            Gate::new(rules, Preset::Edit, Path::new("/repo")).unwrap()
        };
        let g = gate(&store);
        let v = g.decide(&bash("cargo test --lib"));
        assert_eq!((v.action, v.by.as_str()), (Action::Allow, "learned.1"));
        assert_eq!(
            g.decide(&bash("cargo test --lib && rm x")).action,
            Action::Ask
        );
        assert_eq!(
            g.decide(&bash("cargo test --lib --release")).action,
            Action::Ask
        );
        // Learned twice: one rule.
        assert!(
            store
                .learn(&bash("cargo test --lib"), "b", Path::new("/repo"))
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .learn(&bash("cat $(x)"), "a", Path::new("/repo"))
                .is_err()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(store.forget("learned.1").unwrap());
        assert!(!store.forget("learned.1").unwrap());
        assert_eq!(
            gate(&store).decide(&bash("cargo test --lib")).action,
            Action::Ask
        );
        // A path with glob characters is that path only.
        let odd = Subject {
            tool: "Edit".into(),
            paths: vec!["/repo/src/[a].rs".into()],
            writes: true,
            ..Subject::default()
        };
        store.learn(&odd, "a", Path::new("/repo")).unwrap();
        let g = gate(&store);
        assert_eq!(g.decide(&odd).action, Action::Allow);
        let other = Subject {
            paths: vec!["/repo/src/a.rs".into()],
            ..odd
        };
        // Not by the learned rule (the preset allows edits inside anyway).
        assert_eq!(g.decide(&other).by, "preset:edit");
    }
}
