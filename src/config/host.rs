//! One `[[host]]` table (docs/hosts.md): a place agents run, reached through
//! the exec transport (issue 49), by its `kind`: `ssh` (the default;
//! another machine, whose hive server this console also shows beside the
//! local panes, docs/remote.md), `bwrap`, `docker`, `podman`,
//! `devcontainer`, `kubectl`. An agent names one with `host = "name"`.
//! And the `[sandbox]` table: the bubblewrap box of `sandbox = "bwrap"`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exec::{Bwrap, Container, Devcontainer, Engine, ExecHost, Kind, Kubectl, Network};
use crate::remote::ssh::{Ssh, SshHost};
use crate::remote::target::{Target, TargetError};

/// The host kinds, as the config spells them.
pub(crate) const KINDS: &[&str] = &[
    "ssh",
    "bwrap",
    "docker",
    "podman",
    "devcontainer",
    "kubectl",
];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// What its panes are titled with and `host:agent` addresses it by.
    pub name: String,
    /// One of [`KINDS`]; `ssh` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// ssh: `[user@]host[:port]` or `ssh://…`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ssh: String,
    /// ssh: the project directory there (default: the remote user's home),
    /// where its agents run too.
    #[serde(default)]
    pub path: String,
    /// ssh: the ssh command line for this host (`HIVE_SSH` wins, as
    /// `GIT_SSH_COMMAND` does over git's config).
    #[serde(default)]
    pub ssh_command: Option<String>,
    /// ssh: the console shows the hive server there (default); `false`:
    /// agents run there, no hive is expected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<bool>,
    /// The engine's program (`bwrap`, `docker`, … or a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// bwrap: `none` (default) or `host`; docker/podman: `--network`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// bwrap: more paths shown read-only / shared read-write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<PathBuf>,
    /// docker/podman: a container of the user's; kubectl: the pod's container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// docker/podman: the image of a container per pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_args: Vec<String>,
    /// devcontainer: `--config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// kubectl: where the pod is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// kubectl: the directory in the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// kubectl: what makes and removes the pod (`kubectl apply -f claim.yaml`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub create: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

/// `[sandbox]`: the bubblewrap box an agent with `sandbox = "bwrap"` runs
/// in, and (`kind`) the default for agents that name none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// `bwrap`: every agent without a `host` or `sandbox` of its own is
    /// boxed; unset or `none`: none is unless it asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

impl SandboxSettings {
    /// The box of `sandbox = "bwrap"`.
    pub fn host(&self) -> Result<ExecHost, String> {
        let b = bwrap(
            self.program.as_deref(),
            self.network.as_deref(),
            &self.read_only,
            &self.read_write,
        )?;
        Ok(ExecHost::new("sandbox", Kind::Bwrap(b)))
    }
}

impl HostConfig {
    /// The kind, `ssh` when unset.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("ssh")
    }

    /// Whether the console shows a hive server there (an ssh host that
    /// does not say `attach = false`).
    pub fn serves(&self) -> bool {
        self.kind() == "ssh" && self.attach != Some(false)
    }

    pub fn target(&self) -> Result<Target, TargetError> {
        Target::from_host(
            &self.name,
            &self.ssh,
            &self.path,
            self.ssh_command.as_deref(),
        )
    }

    /// The host agents run on, or what is wrong with the table.
    pub fn exec(&self) -> Result<ExecHost, String> {
        let need = |v: &Option<String>, key: &str| {
            v.clone()
                .ok_or_else(|| format!("a `{}` host needs `{key}`", self.kind()))
        };
        let program = |default: &str| self.program.clone().unwrap_or_else(|| default.to_owned());
        let kind = match self.kind() {
            "ssh" => {
                let target = self.target().map_err(|e| format!("ssh = {e}"))?;
                let ssh = Ssh::for_target(&target, &crate::paths::socket_dir().join("ssh"))
                    .map_err(|e| e.to_string())?;
                Kind::Ssh(SshHost::new(ssh, target, true))
            }
            "bwrap" => Kind::Bwrap(bwrap(
                self.program.as_deref(),
                self.network.as_deref(),
                &self.read_only,
                &self.read_write,
            )?),
            k @ ("docker" | "podman") => {
                if self.container.is_none() && self.image.is_none() {
                    return Err(format!("a `{k}` host needs `container` or `image`"));
                }
                Kind::Container(Container {
                    engine: if k == "docker" {
                        Engine::Docker
                    } else {
                        Engine::Podman
                    },
                    program: program(k),
                    container: self.container.clone(),
                    image: self.image.clone(),
                    network: self.network.clone(),
                    pids_limit: self
                        .pids_limit
                        .unwrap_or(crate::exec::container::PIDS_LIMIT),
                    user: own_user(),
                    run_args: self.run_args.clone(),
                })
            }
            "devcontainer" => Kind::Devcontainer(Devcontainer {
                program: program("devcontainer"),
                config: self.config.clone(),
                engine: "docker".into(),
            }),
            "kubectl" => Kind::Kubectl(Kubectl {
                program: program("kubectl"),
                context: self.context.clone(),
                namespace: self.namespace.clone().unwrap_or_else(|| "default".into()),
                pod: need(&self.pod, "pod")?,
                container: self.container.clone(),
                workdir: self.workdir.clone(),
                create: self.create.clone(),
                stop: self.stop.clone(),
            }),
            other => {
                return Err(format!("kind `{other}` is not one of {}", KINDS.join(", ")));
            }
        };
        Ok(ExecHost::new(&self.name, kind))
    }
}

/// A bubblewrap box: this user's home hidden, and hive's own runtime,
/// state and data dirs, the user's runtime dir and engines' sockets.
fn bwrap(
    program: Option<&str>,
    network: Option<&str>,
    read_only: &[PathBuf],
    read_write: &[PathBuf],
) -> Result<Bwrap, String> {
    let network = match network {
        None => Network::None,
        Some(n) => {
            Network::parse(n).ok_or_else(|| format!("network = \"{n}\" is not `none` or `host`"))?
        }
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .ok_or("a sandbox needs HOME, to hide it")?;
    let mut hide = vec![
        crate::paths::socket_dir(),
        crate::paths::state_dir(),
        crate::paths::data_dir(),
    ];
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        hide.push(run);
    }
    hide.extend(crate::exec::bwrap::ENGINE_SOCKETS.iter().map(PathBuf::from));
    Ok(Bwrap {
        program: program.unwrap_or("bwrap").to_owned(),
        network,
        home,
        homes: crate::paths::state_dir().join("sandbox"),
        hide,
        read_only: read_only.to_vec(),
        read_write: read_write.to_vec(),
    })
}

/// `uid:gid` of this process: a container's files stay the user's.
fn own_user() -> String {
    // SAFETY: getuid/getgid have no preconditions and cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    format!("{uid}:{gid}")
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
