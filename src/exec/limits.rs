//! CPU and memory limits per agent (issue 49): `cpu = 1.5` (cores) and
//! `memory = "2G"` on an agent. Like a host kind they are an argv prefix,
//! so every spawn path (structured agents, terminal panes, the built-in
//! agent's `bash`) gets them from the one place that builds its command
//! line (`super::command_line`):
//!
//! - a cgroup through `systemd-run --user --scope` where a systemd user
//!   manager answers: `MemoryMax` (with `MemorySwapMax=0`, so the kernel's
//!   OOM killer ends the tree instead of swapping it) and `CPUQuota` over
//!   the agent's whole process tree;
//! - otherwise `prlimit --data`: an rlimit on each process's data (heap
//!   and private writable mappings, which a JIT's reserved address space
//!   is not, unlike `--as`), inherited by every child but counted per
//!   process; no rlimit bounds CPU *rate*, so `cpu` is not applied there.
//!
//! A per-pane container takes them as `docker run --memory --cpus`; other
//! hosts (ssh, kubectl, devcontainer, a container of the user's) run the
//! agent elsewhere, where a local wrapper would bound only the client, so
//! the limits are said not to apply. What applied is said in the pane's
//! details (`describe`) and the log.

use std::sync::OnceLock;
use std::time::Duration;

use super::{ExecHost, Kind, Wrapped};

/// An agent's limits; none set: nothing wraps its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resources {
    /// Percent of one core (`cpu = 1.5` is 150), as systemd's `CPUQuota`.
    pub cpu: Option<u32>,
    /// Bytes.
    pub memory: Option<u64>,
}

/// How limits are applied on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `systemd-run --user --scope`: a cgroup of the agent's own.
    Cgroup,
    /// `prlimit --data`: per process, memory only.
    Rlimit,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Cgroup => "cgroup",
            Method::Rlimit => "rlimit",
        }
    }
}

/// Where a host leaves the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// This machine (no host, or the bwrap box): a local wrapper.
    Here(Method),
    /// The per-pane container's `docker run` flags.
    Container,
    /// Elsewhere: not applied.
    Elsewhere(&'static str),
}

impl Resources {
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.memory.is_none()
    }

    /// `run` under the limits (`run` as it is when none are set or the
    /// host takes them itself).
    pub fn wrap(&self, host: Option<&ExecHost>, run: Wrapped) -> Wrapped {
        match self.place(host) {
            Some(Where::Here(m)) => self.wrap_with(m, run),
            _ => run,
        }
    }

    /// `run` under `method`'s wrapper.
    pub fn wrap_with(&self, method: Method, run: Wrapped) -> Wrapped {
        let prefix = match method {
            Method::Cgroup => self.systemd_run(),
            Method::Rlimit => match self.memory {
                Some(bytes) => vec![
                    "prlimit".to_owned(),
                    format!("--data={bytes}:{bytes}"),
                    "--".to_owned(),
                ],
                // Only a CPU limit, which no rlimit gives: said so.
                None => return run,
            },
        };
        let Some((program, rest)) = prefix.split_first() else {
            return run;
        };
        let mut args = rest.to_vec();
        args.push(run.program);
        args.extend(run.args);
        Wrapped {
            program: program.clone(),
            args,
            ..run
        }
    }

    /// `systemd-run --user --scope …  --`: the scope is this process's
    /// own (systemd-run execs the command in it), so the pid, process
    /// group, cwd and environment hive set stay the agent's.
    fn systemd_run(&self) -> Vec<String> {
        let mut argv: Vec<String> = ["systemd-run", "--user", "--scope", "--quiet", "--collect"]
            .map(str::to_owned)
            .to_vec();
        if let Some(bytes) = self.memory {
            argv.extend([
                "-p".into(),
                format!("MemoryMax={bytes}"),
                "-p".into(),
                "MemorySwapMax=0".into(),
            ]);
        }
        if let Some(percent) = self.cpu {
            argv.extend(["-p".into(), format!("CPUQuota={percent}%")]);
        }
        argv.push("--".into());
        argv
    }

    /// The flags a per-pane container is made with.
    pub fn run_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(bytes) = self.memory {
            // No swap beyond the memory: over it the container's tree is
            // OOM-killed, as the cgroup path's is.
            out.push(format!("--memory={bytes}b"));
            out.push(format!("--memory-swap={bytes}b"));
        }
        if let Some(percent) = self.cpu {
            out.push(format!("--cpus={}", cores(percent)));
        }
        out
    }

    /// The wrapper's program is there (util-linux's `prlimit` is on every
    /// Debian, but not in every image hive's server may run in).
    pub fn check(&self, host: Option<&ExecHost>) -> Result<(), super::ExecError> {
        let program = match self.place(host) {
            Some(Where::Here(Method::Rlimit)) if self.memory.is_some() => "prlimit",
            Some(Where::Here(Method::Cgroup)) => "systemd-run",
            _ => return Ok(()),
        };
        if super::find_program(program).is_none() {
            return Err(super::ExecError::Missing {
                host: "limits".into(),
                kind: "memory and cpu",
                program: program.into(),
                hint: "apt-get install util-linux (or drop the agent's `memory`)",
            });
        }
        Ok(())
    }

    fn place(&self, host: Option<&ExecHost>) -> Option<Where> {
        if self.is_empty() {
            return None;
        }
        Some(match host.map(|h| &h.kind) {
            None | Some(Kind::Bwrap(_)) => Where::Here(method()),
            Some(Kind::Container(c)) if c.container.is_none() && c.image.is_some() => {
                Where::Container
            }
            Some(Kind::Container(_)) => Where::Elsewhere("a container of yours"),
            Some(Kind::Ssh(_)) => Where::Elsewhere("an ssh host"),
            Some(Kind::Devcontainer(_)) => Where::Elsewhere("a devcontainer"),
            Some(Kind::Kubectl(_)) => Where::Elsewhere("a kubectl pod"),
        })
    }

    /// What the pane's details and the log say of the limits: one line
    /// each, naming how it applied (or why not).
    pub fn describe(&self, host: Option<&ExecHost>) -> Vec<String> {
        match self.place(host) {
            None => Vec::new(),
            Some(w) => self.describe_at(w),
        }
    }

    fn describe_at(&self, at: Where) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(bytes) = self.memory {
            let how = match at {
                Where::Here(Method::Cgroup) => {
                    "cgroup (systemd-run --user --scope, MemoryMax: the whole process tree)".into()
                }
                Where::Here(Method::Rlimit) => format!(
                    "rlimit (prlimit --data, each process on its own; {})",
                    NO_CGROUP
                ),
                Where::Container => "the container's (docker run --memory)".into(),
                Where::Elsewhere(what) => format!("not applied: the agent runs on {what}"),
            };
            out.push(format!("memory {}: {how}", size(bytes)));
        }
        if let Some(percent) = self.cpu {
            let how = match at {
                Where::Here(Method::Cgroup) => {
                    format!("cgroup (systemd-run --user --scope, CPUQuota={percent}%)")
                }
                Where::Here(Method::Rlimit) => {
                    format!("not applied: a CPU share needs a cgroup; {NO_CGROUP}")
                }
                Where::Container => "the container's (docker run --cpus)".into(),
                Where::Elsewhere(what) => format!("not applied: the agent runs on {what}"),
            };
            out.push(format!("cpu {} cores: {how}", cores(percent)));
        }
        out
    }

    /// A line for the report of an agent that ended abnormally under a
    /// memory limit: what the limit was and how it bites. `said` is its
    /// last stderr; `status` how it ended.
    pub fn exceeded(
        &self,
        host: Option<&ExecHost>,
        said: &str,
        status: std::process::ExitStatus,
    ) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        if status.success() {
            return None;
        }
        // `docker exec` tells a SIGKILL inside as status 137.
        let signal = status
            .signal()
            .or((status.code() == Some(128 + libc::SIGKILL)).then_some(libc::SIGKILL));
        self.exceeded_at(self.place(host)?, said, signal)
    }

    fn exceeded_at(&self, at: Where, said: &str, signal: Option<i32>) -> Option<String> {
        let bytes = self.memory?;
        let (over, by) = match at {
            // The OOM killer's is a SIGKILL.
            Where::Here(Method::Cgroup) => (signal == Some(libc::SIGKILL), "its cgroup"),
            Where::Container => (signal == Some(libc::SIGKILL), "its container"),
            // A failed allocation: the runtime says so, or dies of it.
            Where::Here(Method::Rlimit) => (
                out_of_memory(said) || matches!(signal, Some(libc::SIGABRT | libc::SIGSEGV)),
                "an rlimit on each process",
            ),
            Where::Elsewhere(_) => (false, ""),
        };
        over.then(|| {
            format!(
                "hive: the agent ran out of memory: it is limited to {} (`memory`, by {by})",
                size(bytes)
            )
        })
    }
}

const NO_CGROUP: &str = "no systemd user manager answers `systemd-run --user --scope`";

/// What runtimes write when an allocation fails (Python, Node, Rust, glibc).
fn out_of_memory(said: &str) -> bool {
    const SAID: &[&str] = &[
        "MemoryError",
        "out of memory",
        "Cannot allocate memory",
        "memory allocation of",
        "std::bad_alloc",
        "Allocation failed",
    ];
    SAID.iter().any(|s| said.contains(s))
}

/// Percent of one core as cores (150 → 1.5).
fn cores(percent: u32) -> f64 {
    f64::from(percent) / 100.0
}

/// Bytes as the config would write them, in the largest unit they reach
/// (64M, 1.5G).
pub fn size(bytes: u64) -> String {
    const UNITS: &[(u64, &str)] = &[
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    match UNITS.iter().find(|(unit, _)| bytes >= *unit) {
        Some((unit, name)) if bytes.is_multiple_of(*unit) => format!("{}{name}", bytes / unit),
        Some((unit, name)) => format!("{:.1}{name}", bytes as f64 / *unit as f64),
        None => format!("{bytes}B"),
    }
}

/// Parses `memory = "2G"`: binary units (2G = 2 GiB, as docker and
/// systemd read it), at least 16 MiB (less starts no agent).
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let bytes = parse_size::Config::new()
        .with_binary()
        .parse_size(text.trim())
        .map_err(|e| format!("memory = \"{text}\": {e} (write it as \"512M\" or \"2G\")"))?;
    if bytes < 16 << 20 {
        return Err(format!("memory = \"{text}\" is less than 16M"));
    }
    Ok(bytes)
}

/// `cpu = N` (cores) as percent of one core.
pub fn parse_cpu(cores: f64) -> Result<u32, String> {
    if cores.is_finite() && (0.01..=1024.0).contains(&cores) {
        Ok((cores * 100.0).round() as u32)
    } else {
        Err(format!(
            "cpu = {cores}: give cores, between 0.01 and 1024 (1.5: one and a half)"
        ))
    }
}

/// How this machine applies limits: a cgroup when `systemd-run --user
/// --scope` works (tried once per hive process, within 5 s), else rlimits.
/// `HIVE_LIMITS=rlimit` forces the fallback.
pub fn method() -> Method {
    static METHOD: OnceLock<Method> = OnceLock::new();
    *METHOD.get_or_init(|| {
        if std::env::var("HIVE_LIMITS").is_ok_and(|v| v == "rlimit") {
            return Method::Rlimit;
        }
        let probe: Vec<String> = [
            "systemd-run",
            "--user",
            "--scope",
            "--quiet",
            "--collect",
            "-p",
            "MemoryMax=1G",
            "--",
            "true",
        ]
        .map(str::to_owned)
        .to_vec();
        let why = match super::steps::run(&probe, Duration::from_secs(5)) {
            Ok(()) if delegated() => return Method::Cgroup,
            Ok(()) => "the user manager is not given the memory controller".to_owned(),
            Err(why) => why,
        };
        tracing::info!("limits: no cgroup for agents ({why}); rlimits apply");
        Method::Rlimit
    })
}

/// Whether the user manager's cgroup may set memory limits (cgroup v2
/// delegates `memory` to `user@UID.service` by default; a scope's
/// `MemoryMax` without it is accepted and does nothing). No such file (a
/// layout of another kind): trusted.
fn delegated() -> bool {
    // SAFETY: getuid(2) has no failure mode and touches no memory.
    let uid = unsafe { libc::getuid() };
    let path =
        format!("/sys/fs/cgroup/user.slice/user-{uid}.slice/user@{uid}.service/cgroup.controllers");
    std::fs::read_to_string(path).map_or(true, |c| c.split_whitespace().any(|w| w == "memory"))
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
