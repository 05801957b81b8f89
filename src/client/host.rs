//! A snapshot from a server on another machine (issue 30), made fit for
//! this console: its panes titled with the host, and no path of that
//! host's file system kept as if it were one of this machine's.

use crate::protocol::snapshot::{LayoutPane, PaneSnapshot, Snapshot};
use crate::sanitize::neutralize;

/// Relabels what came from `host`.
pub(crate) trait OnHost {
    fn set_host(&mut self, host: &str);
}

impl OnHost for Snapshot {
    fn set_host(&mut self, host: &str) {
        self.server.config_path = None;
        for p in &mut self.panes {
            p.set_host(host);
        }
    }
}

impl OnHost for PaneSnapshot {
    /// Titled `name@host`; its working directory and worktree are paths on
    /// the host, which this console must never open here (a file
    /// completion): the cwd is dropped, and the worktree's paths become
    /// labels (`host:/path`, for a hand-off's text). The worktree itself
    /// stays, so its diff, merge and review are offered: they run on the
    /// host, at its server (src/server/worktrees.rs).
    fn set_host(&mut self, host: &str) {
        let name = self.agent.display_name().to_owned();
        self.agent.name = Some(format!("{name}@{host}"));
        self.agent.cwd = None;
        if let Some(w) = &mut self.worktree {
            let label = |p: &std::path::Path| {
                let text = format!("{host}:{}", p.display());
                std::path::PathBuf::from(neutralize(&text).into_owned())
            };
            w.repo = label(&w.repo);
            w.path = label(&w.path);
            w.cwd = label(&w.cwd);
            w.branch = neutralize(&w.branch).into_owned();
            w.agent_id = neutralize(&w.agent_id).into_owned();
        }
        self.host = Some(host.to_owned());
    }
}

impl OnHost for LayoutPane {
    /// A kept pane is titled as its snapshot was (`name@host`); a new one
    /// is relabelled whole. So a layout change on another machine moves
    /// the panes as a local one does, with no fresh snapshot.
    fn set_host(&mut self, host: &str) {
        match self {
            LayoutPane::Kept { id, name, .. } => {
                let shown = name.as_deref().unwrap_or(id.as_str());
                *name = Some(format!("{shown}@{host}"));
            }
            LayoutPane::New(snapshot) => snapshot.set_host(host),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::snapshot::PaneCard;

    #[test]
    fn a_layout_from_a_host_titles_its_panes_as_their_snapshots_were() {
        let mut snap = PaneSnapshot::empty(PaneCard::new("new", "script"));
        snap.agent.cwd = Some("/far/away".into());
        let mut layout = vec![
            LayoutPane::Kept {
                id: "demo".into(),
                name: None,
                window: 1,
                parent: None,
            },
            LayoutPane::Kept {
                id: "rev".into(),
                name: Some("Reviewer".into()),
                window: 2,
                parent: None,
            },
            LayoutPane::New(Box::new(snap.clone())),
        ];
        for l in &mut layout {
            l.set_host("box");
        }
        snap.set_host("box");
        let names: Vec<Option<String>> = layout
            .iter()
            .map(|l| match l {
                LayoutPane::Kept { name, .. } => name.clone(),
                LayoutPane::New(s) => s.agent.name.clone(),
            })
            .collect();
        assert_eq!(
            names,
            [
                Some("demo@box".to_owned()),
                Some("Reviewer@box".to_owned()),
                Some("new@box".to_owned())
            ]
        );
        assert_eq!(layout[2], LayoutPane::New(Box::new(snap)));
        let LayoutPane::New(s) = &layout[2] else {
            unreachable!()
        };
        assert!(s.agent.cwd.is_none());
    }
}
