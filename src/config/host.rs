//! One `[[host]]` table: another machine whose hive server this console
//! shows beside the local panes, reached over ssh (docs/remote.md).

use serde::{Deserialize, Serialize};

use crate::remote::target::{Target, TargetError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// What its panes are titled with and `host:agent` addresses it by.
    pub name: String,
    /// `[user@]host[:port]` or `ssh://…`.
    pub ssh: String,
    /// The project directory there (default: the remote user's home).
    #[serde(default)]
    pub path: String,
    /// The ssh command line for this host (`HIVE_SSH` wins, as
    /// `GIT_SSH_COMMAND` does over git's config).
    #[serde(default)]
    pub ssh_command: Option<String>,
}

impl HostConfig {
    pub fn target(&self) -> Result<Target, TargetError> {
        Target::from_host(
            &self.name,
            &self.ssh,
            &self.path,
            self.ssh_command.as_deref(),
        )
    }
}
