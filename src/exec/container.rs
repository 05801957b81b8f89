//! The container kinds, by their documented command lines (no API client,
//! no daemon socket of hive's): docker / podman (`docker exec -i CTR`, one
//! container per pane made with hardened defaults, or one of the user's),
//! devcontainer (`devcontainer up`, `devcontainer exec --workspace-folder
//! WT --`) and kubectl (`kubectl exec -i -n NS POD --`, for a Kubernetes
//! agent-sandbox claim). Values of the agent's environment are passed by
//! name where the engine allows it (`docker exec -e NAME` reads the value
//! from its own environment), so no key sits on a command line.

use std::path::Path;

use super::{Inner, Pane, Step, Wrapped, shell};

/// A container engine with docker's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }
}

/// The pids limit of a container hive makes (agent-deck's hardened default).
pub const PIDS_LIMIT: u32 = 4096;

/// A docker or podman host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub engine: Engine,
    /// `docker`, `podman`, or a path.
    pub program: String,
    /// A container of the user's to run in; none: one per pane, made from
    /// `image` and removed when hive is done with it.
    pub container: Option<String>,
    pub image: Option<String>,
    /// `--network` of a container hive makes (`none`, a named network).
    pub network: Option<String>,
    pub pids_limit: u32,
    /// `--user` of a container hive makes: this machine's uid:gid, so the
    /// worktree's files stay the user's.
    pub user: String,
    /// More `docker run` arguments (limits, mounts), after hive's.
    pub run_args: Vec<String>,
}

impl Container {
    /// The container a pane runs in.
    pub fn name(&self, pane: &Pane) -> String {
        match &self.container {
            Some(c) => c.clone(),
            None => format!("hive-{}", pane.id),
        }
    }

    /// `docker exec -i [-t] [-w CWD] [-e NAME…] CTR program args`.
    pub fn wrap(&self, pane: &Pane, inner: &Inner) -> Wrapped {
        let mut args = vec!["exec".to_owned(), "-i".to_owned()];
        if inner.tty {
            args.push("-t".into());
        }
        if let Some(cwd) = inner.cwd {
            args.extend(["-w".into(), cwd.display().to_string()]);
        }
        for k in inner.env.keys() {
            args.extend(["-e".into(), k.clone()]);
        }
        args.push(self.name(pane));
        args.push(inner.program.to_owned());
        args.extend(inner.args.iter().cloned());
        Wrapped {
            program: self.program.clone(),
            args,
            cwd: None,
            env: inner.env.clone(),
        }
    }

    /// A per-pane container: made unless it exists, then started (a no-op
    /// when it runs). The user's own container: none.
    pub fn create_steps(&self, pane: &Pane, cwd: Option<&Path>) -> Vec<Step> {
        let (None, Some(image)) = (&self.container, &self.image) else {
            return Vec::new();
        };
        let name = self.name(pane);
        let mut run: Vec<String> = vec![
            self.program.clone(),
            "run".into(),
            "-d".into(),
            "--name".into(),
            name.clone(),
            "--init".into(),
            "--cap-drop=ALL".into(),
            "--security-opt=no-new-privileges".into(),
            format!("--pids-limit={}", self.pids_limit),
            "--user".into(),
            self.user.clone(),
            "--label".into(),
            "hive.pane".into(),
        ];
        if let Some(n) = &self.network {
            run.push(format!("--network={n}"));
        }
        if let Some(cwd) = cwd {
            let cwd = cwd.display().to_string();
            run.extend(["-v".into(), format!("{cwd}:{cwd}"), "-w".into(), cwd]);
        }
        // The agent's `memory` / `cpu`, before `run_args` (which may say more).
        run.extend(pane.limits.run_args());
        run.extend(self.run_args.iter().cloned());
        run.extend([image.clone(), "sleep".into(), "infinity".into()]);
        vec![
            Step::unless(
                "create the container",
                vec![
                    self.program.clone(),
                    "container".into(),
                    "inspect".into(),
                    name.clone(),
                ],
                run,
            ),
            Step::new(
                "start the container",
                vec![self.program.clone(), "start".into(), name],
            ),
        ]
    }

    /// A per-pane container goes (`rm -f`); the user's own stays.
    pub fn stop_steps(&self, pane: &Pane) -> Vec<Step> {
        if self.container.is_some() || self.image.is_none() {
            return Vec::new();
        }
        vec![Step::new(
            "remove the container",
            vec![
                self.program.clone(),
                "rm".into(),
                "-f".into(),
                self.name(pane),
            ],
        )]
    }
}

/// A devcontainer host: the worktree's (or cwd's) `.devcontainer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Devcontainer {
    pub program: String,
    /// `--config`, when not the workspace's own.
    pub config: Option<String>,
    /// The engine that runs it, for stopping (the devcontainer CLI has no
    /// `down`): `docker` or `podman`.
    pub engine: String,
}

impl Devcontainer {
    fn workspace(&self, cwd: Option<&Path>) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(cwd) = cwd {
            args.extend(["--workspace-folder".into(), cwd.display().to_string()]);
        }
        if let Some(c) = &self.config {
            args.extend(["--config".into(), c.clone()]);
        }
        args
    }

    /// `devcontainer exec --workspace-folder WT [--remote-env K=V…] -- program args`.
    pub fn wrap(&self, inner: &Inner) -> Wrapped {
        let mut args = vec!["exec".to_owned()];
        args.extend(self.workspace(inner.cwd));
        // The CLI takes no variable by name: values cross on its command line.
        for (k, v) in inner.env {
            args.extend(["--remote-env".into(), format!("{k}={v}")]);
        }
        args.push("--".into());
        args.push(inner.program.to_owned());
        args.extend(inner.args.iter().cloned());
        Wrapped {
            program: self.program.clone(),
            args,
            cwd: inner.cwd.map(Path::to_owned),
            env: Default::default(),
        }
    }

    /// `devcontainer up` (it returns at once when the container runs).
    pub fn create_steps(&self, cwd: Option<&Path>) -> Vec<Step> {
        let mut argv = vec![self.program.clone(), "up".into()];
        argv.extend(self.workspace(cwd));
        vec![Step::new("bring the devcontainer up", argv)]
    }

    /// Removes the containers the CLI labelled with the workspace.
    pub fn stop_steps(&self, cwd: Option<&Path>) -> Vec<Step> {
        let Some(cwd) = cwd else {
            return Vec::new();
        };
        vec![Step::new(
            "remove the devcontainer",
            vec![
                "sh".into(),
                "-c".into(),
                "ids=$(\"$1\" ps -aq --filter label=devcontainer.local_folder=\"$2\") && \
                 { [ -z \"$ids\" ] || \"$1\" rm -f $ids; }"
                    .into(),
                "sh".into(),
                self.engine.clone(),
                cwd.display().to_string(),
            ],
        )]
    }
}

/// A pod, as `kubectl exec` reaches it (an agent-sandbox claim's pod).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kubectl {
    pub program: String,
    pub context: Option<String>,
    pub namespace: String,
    pub pod: String,
    pub container: Option<String>,
    /// The directory in the pod the agent runs in (a path here means
    /// nothing there).
    pub workdir: Option<String>,
    /// Makes the pod (`kubectl apply -f claim.yaml`); hive then waits for
    /// it to be Ready.
    pub create: Vec<String>,
    /// Takes it down (`kubectl delete -f claim.yaml`).
    pub stop: Vec<String>,
}

impl Kubectl {
    fn lead(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(c) = &self.context {
            args.extend(["--context".into(), c.clone()]);
        }
        args
    }

    /// `kubectl exec -i [-t] -n NS POD [-c CTR] -- sh -c 'cd DIR && exec env … program args'`.
    pub fn wrap(&self, inner: &Inner) -> Wrapped {
        let mut args = self.lead();
        args.extend(["exec".into(), "-i".into()]);
        if inner.tty {
            args.push("-t".into());
        }
        args.extend(["-n".into(), self.namespace.clone(), self.pod.clone()]);
        if let Some(c) = &self.container {
            args.extend(["-c".into(), c.clone()]);
        }
        args.push("--".into());
        let exec = shell::exec_line(inner.program, inner.args, inner.env);
        let line = match &self.workdir {
            Some(dir) => shell::in_dir(&format!("cd {}", crate::remote::target::quote(dir)), &exec),
            None => exec,
        };
        args.extend(["sh".into(), "-c".into(), line]);
        Wrapped {
            program: self.program.clone(),
            args,
            cwd: None,
            env: Default::default(),
        }
    }

    pub fn create_steps(&self) -> Vec<Step> {
        if self.create.is_empty() {
            return Vec::new();
        }
        let mut wait = vec![self.program.clone()];
        wait.extend(self.lead());
        wait.extend(
            [
                "wait",
                "--for=condition=Ready",
                "--timeout=120s",
                "-n",
                &self.namespace,
                &format!("pod/{}", self.pod),
            ]
            .map(str::to_owned),
        );
        vec![
            Step::new("create the pod", self.create.clone()),
            Step::new("wait for the pod", wait),
        ]
    }

    pub fn stop_steps(&self) -> Vec<Step> {
        if self.stop.is_empty() {
            return Vec::new();
        }
        vec![Step::new("remove the pod", self.stop.clone())]
    }
}

#[cfg(test)]
#[path = "container_tests.rs"]
mod tests;
