//! A snapshot from a server on another machine (issue 30), made fit for
//! this console: its panes titled with the host, and no path of that
//! host's file system kept as if it were one of this machine's.

use crate::protocol::snapshot::{PaneSnapshot, Snapshot};
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
