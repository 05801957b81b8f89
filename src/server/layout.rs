//! The session's layout (issue 32): what the user changed about the
//! config's panes while hive ran (panes added, closed, renamed, moved, put
//! in another window), saved beside the project's history as
//! `<data dir>/projects/<key>/layout.json` after every change, and laid over the
//! config when the server starts again. `--fresh` starts from the config
//! and the next change overwrites the file.
//!
//! The config stays the source of what a configured agent is: a config
//! pane is saved by id only, so an edit to its table applies on restart.
//! A pane added at runtime is saved whole. A layout that cannot be read is
//! set aside (`.bad`) with a warning; the config's panes start as written.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::{AgentConfig, Config};
use crate::notify::Mutes;

pub use crate::protocol::snapshot::PANES_PER_WINDOW;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedLayout {
    /// Every pane, in order, by id.
    #[serde(default)]
    pub panes: Vec<SavedPane>,
    /// Config panes the user closed (they stay closed until `--fresh`).
    #[serde(default)]
    pub closed: Vec<String>,
    /// What `/mute` silenced.
    #[serde(default, skip_serializing_if = "Mutes::is_empty")]
    pub mutes: Mutes,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPane {
    pub id: String,
    /// 1-based.
    pub window: usize,
    /// A new title, when the user gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The whole agent, for a pane added at runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<AgentConfig>,
    /// The agent that spawned it (`agent.spawn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Repositories a config pane's workspace took at runtime (`/repo
    /// add`, issue 52), beside the config's `repos` (an added pane's are
    /// in `added`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<std::path::PathBuf>,
}

/// A pane as the server starts it: its agent and its window.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub agent: AgentConfig,
    pub window: usize,
    /// Made at runtime (saved whole), not from the config.
    pub added: bool,
    /// The agent that spawned it, for a helper (`agent.spawn`).
    pub parent: Option<String>,
}

/// Where this server's layout is saved, and the config it is laid over.
pub(crate) struct LayoutFile {
    path: std::path::PathBuf,
}

impl LayoutFile {
    /// The layout of `project` (in its data dir).
    pub(crate) fn of(project: &crate::project::Project) -> Self {
        Self {
            path: project.data_dir().join("layout.json"),
        }
    }

    /// The panes to start: the saved layout over the config, or the
    /// config alone when `fresh`, which is saved at once so that the next
    /// plain start starts from it too (issue 46 item 9: the runtime panes,
    /// closed panes and mutes of before stay gone).
    pub(crate) fn placed(&self, config: &Config, fresh: bool) -> Vec<Placed> {
        if fresh {
            let placed = SavedLayout::default().arrange(&config.agents);
            self.save(&placed, config, &Mutes::default());
            return placed;
        }
        let (saved, why) = SavedLayout::load(&self.path);
        if let Some(why) = why {
            tracing::warn!("{why}");
        }
        saved.arrange(&config.agents)
    }

    /// The mutes saved with the layout (none when `fresh`).
    pub(crate) fn mutes(&self, fresh: bool) -> Mutes {
        if fresh {
            return Mutes::default();
        }
        SavedLayout::load(&self.path).0.mutes
    }

    pub(crate) fn save(&self, panes: &[Placed], config: &Config, mutes: &Mutes) {
        let layout = SavedLayout {
            mutes: mutes.clone(),
            ..SavedLayout::of(panes, &config.agents)
        };
        if let Err(e) = layout.save(&self.path) {
            tracing::warn!("cannot save the layout to {}: {e:#}", self.path.display());
        }
    }
}

impl SavedLayout {
    /// The layout at `path`: none yet is an empty one; one that cannot be
    /// read is moved aside and said why.
    pub fn load(path: &Path) -> (Self, Option<String>) {
        // Never through a link, never a FIFO or /dev/zero, never gigabytes.
        let bytes = match crate::private::read_own(path, crate::private::MAX_STATE_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Self::default(), None),
            Err(e) => {
                let why = format!("layout {}: {e}; starting from the config", path.display());
                return (Self::default(), Some(why));
            }
        };
        match serde_json::from_slice(&bytes) {
            Ok(layout) => (layout, None),
            Err(e) => {
                let aside = path.with_extension("json.bad");
                let _ = std::fs::rename(path, &aside);
                let why = format!(
                    "layout {} cannot be read ({e}); set aside as {}, starting from the config",
                    path.display(),
                    aside.display()
                );
                (Self::default(), Some(why))
            }
        }
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec_pretty(self)?;
        crate::history::state::write_atomic(path, &bytes)?;
        Ok(())
    }

    /// The config's agents with this layout laid over them: its order and
    /// windows, its titles, its added panes, without the closed ones. A
    /// config pane the layout does not know (added to the file since) goes
    /// last; one the layout knows but the config no longer has is gone.
    pub fn arrange(&self, config: &[AgentConfig]) -> Vec<Placed> {
        let mut out = Vec::new();
        for saved in &self.panes {
            let agent = match (&saved.added, config.iter().find(|a| a.id == saved.id)) {
                // A config agent of the same id wins: the file says what it is.
                (_, Some(a)) => Some((a.clone(), false)),
                (Some(a), None) => Some((a.clone(), true)),
                (None, None) => None,
            };
            let Some((mut agent, added)) = agent else {
                continue;
            };
            if out_has(&out, &agent.id) {
                continue;
            }
            if saved.name.is_some() {
                agent.name.clone_from(&saved.name);
            }
            if !added {
                with_added_repos(&mut agent, &saved.repos);
            }
            out.push(Placed {
                agent,
                window: saved.window.max(1),
                added,
                parent: saved.parent.clone(),
            });
        }
        for agent in config {
            if out_has(&out, &agent.id) || self.closed.contains(&agent.id) {
                continue;
            }
            let window = next_window(&out);
            out.push(Placed {
                agent: agent.clone(),
                window,
                added: false,
                parent: None,
            });
        }
        out
    }

    /// The layout of `panes` as they are now. `config` is the config's
    /// agents: one of them missing from `panes` was closed; a title that
    /// differs from the config's was given by the user.
    pub fn of(panes: &[Placed], config: &[AgentConfig]) -> Self {
        let saved = panes
            .iter()
            .map(|p| {
                let configured = config.iter().find(|a| a.id == p.agent.id);
                let name = match configured {
                    Some(a) if a.name == p.agent.name => None,
                    _ if p.added => None,
                    _ => p.agent.name.clone(),
                };
                let repos = match configured {
                    Some(a) if !p.added => p
                        .agent
                        .repos
                        .iter()
                        .filter(|r| !a.repos.contains(r))
                        .cloned()
                        .collect(),
                    _ => Vec::new(),
                };
                SavedPane {
                    id: p.agent.id.clone(),
                    window: p.window,
                    name,
                    added: p.added.then(|| p.agent.clone()),
                    parent: p.parent.clone(),
                    repos,
                }
            })
            .collect();
        let closed = config
            .iter()
            .filter(|a| !panes.iter().any(|p| p.agent.id == a.id))
            .map(|a| a.id.clone())
            .collect();
        Self {
            panes: saved,
            closed,
            mutes: Mutes::default(),
        }
    }
}

/// A config agent's workspace with the repositories `/repo add` gave it,
/// those the config names since (in that repository, a subdirectory too)
/// left out: one worktree of each. Only for an agent that still has a
/// workspace.
fn with_added_repos(agent: &mut AgentConfig, added: &[std::path::PathBuf]) {
    if agent.repos.is_empty() {
        return;
    }
    let named: Vec<std::path::PathBuf> = agent
        .repos
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect();
    for top in added {
        if !named.iter().any(|n| n.starts_with(top)) {
            agent.repos.push(top.clone());
        }
    }
}

fn out_has(out: &[Placed], id: &str) -> bool {
    out.iter().any(|p| p.agent.id == id)
}

/// The window a pane that names none goes to: the last one, or a new one
/// when the last is full.
pub fn next_window(panes: &[Placed]) -> usize {
    let last = panes.iter().map(|p| p.window).max().unwrap_or(1);
    let in_last = panes.iter().filter(|p| p.window == last).count();
    if in_last >= PANES_PER_WINDOW {
        last + 1
    } else {
        last
    }
}

/// Renumbers windows 1, 2, … in order of first appearance, so a window
/// emptied by a close or a move leaves no gap.
pub fn compact_windows(panes: &mut [Placed]) {
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut order: Vec<usize> = panes.iter().map(|p| p.window).collect();
    order.sort_unstable();
    order.dedup();
    for (i, w) in order.into_iter().enumerate() {
        seen.insert(w, i + 1);
    }
    for p in panes {
        p.window = seen.get(&p.window).copied().unwrap_or(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str) -> AgentConfig {
        AgentConfig::new(id, "script")
    }

    #[test]
    fn fresh_replaces_the_saved_layout_for_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = LayoutFile {
            path: dir.path().join("layout.json"),
        };
        let mut config = Config::builtin();
        config.agents = vec![agent("a"), agent("b")];
        // Before: b closed, a helper added, a pane muted.
        let mut placed = file.placed(&config, false);
        placed.retain(|p| p.agent.id != "b");
        placed.push(Placed {
            agent: agent("helper"),
            window: 1,
            added: true,
            parent: Some("a".into()),
        });
        let mut mutes = Mutes::default();
        mutes.apply(&crate::notify::Mute::Pane {
            id: "a".into(),
            on: true,
        });
        file.save(&placed, &config, &mutes);
        assert!(!file.mutes(false).is_empty());

        let fresh = file.placed(&config, true);
        assert_eq!(ids(&fresh), ["a", "b"]);
        // The next plain start is the config's too, without the mutes.
        assert_eq!(ids(&file.placed(&config, false)), ["a", "b"]);
        assert!(file.mutes(false).is_empty());
    }

    fn ids(placed: &[Placed]) -> Vec<&str> {
        placed.iter().map(|p| p.agent.id.as_str()).collect()
    }

    #[test]
    fn no_layout_is_the_config_in_windows_of_nine() {
        let config: Vec<_> = (0..20).map(|i| agent(&format!("a{i}"))).collect();
        let placed = SavedLayout::default().arrange(&config);
        let ids: Vec<_> = placed.iter().map(|p| p.agent.id.as_str()).collect();
        assert_eq!(ids[0], "a0");
        assert_eq!(ids[19], "a19");
        let windows: Vec<_> = placed.iter().map(|p| p.window).collect();
        assert_eq!(windows[8], 1);
        assert_eq!(windows[9], 2);
        assert_eq!(windows[18], 3);
    }

    #[test]
    fn a_saved_layout_round_trips_added_closed_renamed_and_moved_panes() {
        let config = vec![agent("a"), agent("b"), agent("c")];
        let mut placed = SavedLayout::default().arrange(&config);
        // Close b, rename c, add d before a in window 2.
        placed.retain(|p| p.agent.id != "b");
        placed[1].agent.name = Some("Reviewer".into());
        let mut d = agent("d");
        d.model = Some("m1".into());
        placed.insert(
            0,
            Placed {
                agent: d,
                window: 2,
                added: true,
                parent: Some("a".into()),
            },
        );
        let saved = SavedLayout::of(&placed, &config);
        let json = serde_json::to_string(&saved).unwrap();
        let back: SavedLayout = serde_json::from_str(&json).unwrap();
        let again = back.arrange(&config);
        assert_eq!(again, placed);
        assert_eq!(back.closed, vec!["b".to_owned()]);
    }

    #[test]
    fn the_config_wins_over_a_saved_copy_and_new_config_panes_come_last() {
        let saved = SavedLayout {
            panes: vec![
                SavedPane {
                    id: "gone".into(),
                    window: 1,
                    name: None,
                    added: None,
                    parent: None,
                    repos: vec![],
                },
                SavedPane {
                    id: "a".into(),
                    window: 1,
                    name: None,
                    added: Some(agent("a")),
                    parent: None,
                    repos: vec![],
                },
            ],
            closed: vec![],
            mutes: Mutes::default(),
        };
        let mut a = agent("a");
        a.model = Some("from-config".into());
        let placed = saved.arrange(&[a, agent("new")]);
        let ids: Vec<_> = placed.iter().map(|p| p.agent.id.as_str()).collect();
        assert_eq!(ids, ["a", "new"]);
        assert_eq!(placed[0].agent.model.as_deref(), Some("from-config"));
        assert!(!placed[0].added);
    }

    /// Issue 52: a repository `/repo add` gave a config pane's workspace
    /// comes back with it; one the config names since (a subdirectory of
    /// it too) is not added twice.
    #[test]
    fn a_config_panes_added_repository_comes_back_once() {
        let dir = tempfile::tempdir().unwrap();
        let top = |n: &str| {
            let p = dir.path().join(n);
            std::fs::create_dir_all(p.join("src")).unwrap();
            p.canonicalize().unwrap()
        };
        let (api, lib) = (top("api"), top("lib"));
        let mut a = agent("a");
        a.repos = vec![api.clone()];
        let config = vec![a.clone()];
        let mut placed = SavedLayout::default().arrange(&config);
        placed[0].agent.repos.push(lib.clone());
        let saved = SavedLayout::of(&placed, &config);
        assert_eq!(saved.panes[0].repos, vec![lib.clone()]);
        let back: SavedLayout =
            serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
        assert_eq!(
            back.arrange(&config)[0].agent.repos,
            [api.clone(), lib.clone()]
        );
        // The config names lib/src now: one worktree of lib, the config's.
        a.repos.push(lib.join("src"));
        let now = back.arrange(&[a]);
        assert_eq!(now[0].agent.repos, [api, lib.join("src")]);
    }

    #[test]
    fn a_torn_layout_is_set_aside_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(&path, b"{\"panes\": [").unwrap();
        let (layout, why) = SavedLayout::load(&path);
        assert_eq!(layout, SavedLayout::default());
        assert!(why.unwrap().contains("set aside"));
        assert!(dir.path().join("x.json.bad").exists());
        assert!(!path.exists());
    }

    /// Issue 53 item 8: the layout was read with no type or size check
    /// (a link to /dev/zero took the server to gigabytes, a FIFO hung it).
    /// A planted link, FIFO or oversized file is refused, said why, and
    /// the config's layout is used; nothing outside is read or moved.
    #[test]
    fn a_planted_layout_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.json");
        std::fs::write(&outside, br#"{"panes": [{"id": "evil", "window": 1}]}"#).unwrap();
        let path = dir.path().join("x.json");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let (layout, why) = SavedLayout::load(&path);
        assert_eq!(layout, SavedLayout::default(), "read through the link");
        assert!(why.unwrap().contains("symlink"));
        assert!(outside.exists() && path.is_symlink());

        std::fs::remove_file(&path).unwrap();
        let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || tx.send(SavedLayout::load(&p)));
        let (layout, why) = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a FIFO as the layout hung the load");
        assert_eq!(layout, SavedLayout::default());
        assert!(why.unwrap().contains("not a regular file"));

        std::fs::remove_file(&path).unwrap();
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(crate::private::MAX_STATE_BYTES + 1).unwrap();
        let (_, why) = SavedLayout::load(&path);
        assert!(why.unwrap().contains("larger than"));
    }

    #[test]
    fn windows_close_their_gaps() {
        let mut placed: Vec<Placed> = [3, 1, 3, 7]
            .into_iter()
            .enumerate()
            .map(|(i, w)| Placed {
                agent: agent(&format!("p{i}")),
                window: w,
                added: false,
                parent: None,
            })
            .collect();
        compact_windows(&mut placed);
        let windows: Vec<_> = placed.iter().map(|p| p.window).collect();
        assert_eq!(windows, [2, 1, 2, 3]);
    }
}
