//! The exec transport (issue 49): a host kind is an argv prefix that
//! carries an agent's stdio, plus optional create / stop steps. ssh (the
//! remote hosts of issue 30), bubblewrap on this machine, docker / podman,
//! devcontainer and kubectl are kinds of it; every provider's protocol
//! (stream-json, app-server, ACP, pi RPC, a PTY) rides the pipe unchanged,
//! because the transport only rewrites the command line that starts the
//! agent (`ExecHost::wrap`), never what flows over it.
//!
//! This room builds command lines and runs the short create / stop steps;
//! it knows no provider (the files a sandbox seeds into a pane's home are
//! handed in by the provider, `Pane::seed`).

pub mod bwrap;
pub mod command;
pub mod container;
pub mod limits;
pub mod shell;
pub mod steps;

use std::path::{Path, PathBuf};

pub use crate::remote::ssh::SshHost;
pub use bwrap::{Bwrap, Network};
pub use command::{Inner, Wrapped};
pub use container::{Container, Devcontainer, Engine, Kubectl};
pub use limits::Resources;
pub use steps::Step;

/// The kinds of host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Ssh(SshHost),
    Bwrap(Bwrap),
    Container(Container),
    Devcontainer(Devcontainer),
    Kubectl(Kubectl),
}

/// One pane's part in a host: which pane (a per-pane home, a per-pane
/// container are named after it), what of its vendor's home directory
/// a sandbox seeds (paths relative to the home, files only), and its
/// agent's limits (a per-pane container is made with them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pane {
    pub id: String,
    pub seed: Vec<PathBuf>,
    pub limits: Resources,
}

/// A host an agent runs on: a `[[host]]` of the config, or the `sandbox`
/// of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecHost {
    /// The `[[host]]`'s name (`sandbox` for an agent's own sandbox).
    pub name: String,
    pub kind: Kind,
    pub pane: Pane,
}

/// Why an agent cannot be started on its host.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("host `{host}` ({kind}) needs `{program}`, which is not on PATH: {hint}")]
    Missing {
        host: String,
        kind: &'static str,
        program: String,
        hint: &'static str,
    },
    #[error("host `{host}`: {what} (`{argv}`) failed: {detail}")]
    Step {
        host: String,
        what: String,
        argv: String,
        detail: String,
    },
    #[error("host `{host}`: {message}")]
    Invalid { host: String, message: String },
}

impl ExecHost {
    pub fn new(name: &str, kind: Kind) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            pane: Pane::default(),
        }
    }

    /// This host for pane `id`, seeding `seed` (relative to the home).
    pub fn for_pane(&self, id: &str, seed: &[&str]) -> Self {
        let mut h = self.clone();
        h.pane = Pane {
            id: id.to_owned(),
            seed: seed.iter().map(PathBuf::from).collect(),
            limits: Resources::default(),
        };
        h
    }

    /// This host with the pane's agent's limits.
    pub fn with_limits(mut self, limits: Resources) -> Self {
        self.pane.limits = limits;
        self
    }

    /// The kind's name, as the config spells it.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Ssh(_) => "ssh",
            Kind::Bwrap(_) => "bwrap",
            Kind::Container(c) => c.engine.name(),
            Kind::Devcontainer(_) => "devcontainer",
            Kind::Kubectl(_) => "kubectl",
        }
    }

    /// The program that must be on PATH, and what installs it.
    pub fn engine(&self) -> (String, &'static str) {
        match &self.kind {
            Kind::Ssh(s) => (s.program().to_owned(), "apt-get install openssh-client"),
            Kind::Bwrap(b) => (b.program.clone(), "apt-get install bubblewrap"),
            Kind::Container(c) => (
                c.program.clone(),
                match c.engine {
                    Engine::Docker => "install Docker (docker.io) or use kind = \"podman\"",
                    Engine::Podman => "apt-get install podman",
                },
            ),
            Kind::Devcontainer(d) => (
                d.program.clone(),
                "npm install -g @devcontainers/cli, and a container engine",
            ),
            Kind::Kubectl(k) => (k.program.clone(), "install kubectl and a kubeconfig"),
        }
    }

    /// The command line that runs `inner` on this host.
    pub fn wrap(&self, inner: &Inner) -> Result<Wrapped, ExecError> {
        match &self.kind {
            Kind::Ssh(s) => Ok(s.wrap(inner)),
            Kind::Bwrap(b) => b.wrap(&self.name, &self.pane, inner),
            Kind::Container(c) => Ok(c.wrap(&self.pane, inner)),
            Kind::Devcontainer(d) => Ok(d.wrap(inner)),
            Kind::Kubectl(k) => Ok(k.wrap(inner)),
        }
    }

    /// The steps that make the host before its first agent runs: a probe
    /// whose success means "already there", then what creates it.
    pub fn create_steps(&self, cwd: Option<&Path>) -> Vec<Step> {
        match &self.kind {
            Kind::Ssh(_) | Kind::Bwrap(_) => Vec::new(),
            Kind::Container(c) => c.create_steps(&self.pane, cwd),
            Kind::Devcontainer(d) => d.create_steps(cwd),
            Kind::Kubectl(k) => k.create_steps(),
        }
    }

    /// Whether the host is the pane's alone (a container hive made for
    /// it): it goes when its pane closes.
    pub fn per_pane(&self) -> bool {
        matches!(&self.kind, Kind::Container(c) if c.container.is_none() && c.image.is_some())
    }

    /// The steps that take the host down when hive is done with it.
    pub fn stop_steps(&self, cwd: Option<&Path>) -> Vec<Step> {
        match &self.kind {
            Kind::Ssh(_) | Kind::Bwrap(_) => Vec::new(),
            Kind::Container(c) => c.stop_steps(&self.pane),
            Kind::Devcontainer(d) => d.stop_steps(cwd),
            Kind::Kubectl(k) => k.stop_steps(),
        }
    }

    /// What the pane's details say of the host: its kind and, for a
    /// sandbox, what is mounted how.
    pub fn describe(&self, inner: &Inner) -> Vec<String> {
        let mut out = vec![format!("host {} ({})", self.name, self.kind_name())];
        match &self.kind {
            Kind::Bwrap(b) => {
                out.extend(
                    b.mounts(&self.pane, inner.cwd)
                        .iter()
                        .map(|m| m.to_string()),
                );
                out.push(format!("network: {}", b.network.name()));
            }
            Kind::Container(c) => {
                out.push(format!("container {}", c.name(&self.pane)));
                if let (None, Some(image)) = (&c.container, &c.image) {
                    out.push(format!("image {image}"));
                    if let Some(cwd) = inner.cwd {
                        out.push(format!("read-write {} (bind-mounted)", cwd.display()));
                    }
                    out.push(format!(
                        "network: {}",
                        c.network.as_deref().unwrap_or("the engine's default")
                    ));
                }
            }
            _ => {}
        }
        out
    }

    /// Checks the engine is installed and runs the create steps (once per
    /// pane and hive process, `steps::prepare`): a missing engine or a
    /// failing step is a clear error, never a hang (each step has a time
    /// limit).
    pub fn prepare(&self, cwd: Option<&Path>) -> Result<(), ExecError> {
        let (program, hint) = self.engine();
        if find_program(&program).is_none() {
            return Err(ExecError::Missing {
                host: self.name.clone(),
                kind: self.kind_name(),
                program,
                hint,
            });
        }
        if let Kind::Ssh(s) = &self.kind {
            // The master connections' sockets: private, made on first use.
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(s.ssh.control_dir())
                .map_err(|e| ExecError::Invalid {
                    host: self.name.clone(),
                    message: format!("the ssh control dir {}: {e}", s.ssh.control_dir().display()),
                })?;
        }
        steps::prepare(self, cwd)
    }
}

/// The command line that starts `inner` for an agent: on its host (made
/// first, once: `ExecHost::prepare`) and under its limits. Every spawn
/// path goes through here: `AgentProcess::spawn`, the terminal pane, the
/// built-in agent's `bash`.
pub fn command_line(
    host: Option<&ExecHost>,
    limits: &Resources,
    inner: &Inner,
) -> Result<Wrapped, ExecError> {
    let run = match host {
        None => Wrapped {
            program: inner.program.to_owned(),
            args: inner.args.to_vec(),
            cwd: inner.cwd.map(Path::to_owned),
            env: inner.env.clone(),
        },
        Some(h) => {
            h.prepare(inner.cwd)?;
            h.wrap(inner)?
        }
    };
    limits.check(host)?;
    Ok(limits.wrap(host, run))
}

/// `program` as PATH finds it (a path with a `/` as it is).
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
