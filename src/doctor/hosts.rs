//! `hive doctor` for each `[[host]]` (issue 30): ssh reaches it, it has a
//! hive of this protocol, and that hive's own doctor says whether the
//! agents of the project there can start. What the host says is its
//! output, not ours: sanitized before it is printed.

use std::process::Stdio;

use serde::Serialize;

use super::{Check, Level};
use crate::config::{Config, HostConfig};
use crate::remote::Ssh;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostReport {
    pub name: String,
    /// `ssh://…` as configured.
    pub target: String,
    pub checks: Vec<Check>,
}

impl HostReport {
    pub(crate) fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.level != Level::Fail)
    }
}

/// Every host of `config`, checked at once, then the `[sandbox]` box when
/// an agent runs in it.
pub fn check_hosts(config: &Config) -> Vec<HostReport> {
    let mut reports = check_tables(config);
    let boxed = config.agents.iter().find_map(|a| {
        a.exec
            .as_ref()
            .filter(|h| h.name == "sandbox" && !config.hosts.iter().any(|t| t.name == h.name))
    });
    if let Some(b) = boxed {
        reports.push(HostReport {
            name: b.name.clone(),
            target: "[sandbox]".into(),
            checks: super::exec_hosts::check_exec(b),
        });
    }
    reports
}

fn check_tables(config: &Config) -> Vec<HostReport> {
    std::thread::scope(|s| {
        let handles: Vec<_> = config
            .hosts
            .iter()
            .map(|h| s.spawn(move || check_host(h)))
            .collect();
        handles
            .into_iter()
            .zip(&config.hosts)
            .map(|(h, host)| {
                h.join().unwrap_or_else(|_| HostReport {
                    name: host.name.clone(),
                    target: host.ssh.clone(),
                    checks: vec![Check::new("doctor", Level::Fail, "the check itself failed")],
                })
            })
            .collect()
    })
}

fn check_host(host: &HostConfig) -> HostReport {
    if host.kind() != "ssh" {
        return match host.exec() {
            Ok(exec) => HostReport {
                name: host.name.clone(),
                target: host.kind().to_owned(),
                checks: super::exec_hosts::check_exec(&exec),
            },
            Err(e) => HostReport {
                name: host.name.clone(),
                target: host.kind().to_owned(),
                checks: vec![Check::new("host", Level::Fail, e)],
            },
        };
    }
    let mut report = HostReport {
        name: host.name.clone(),
        target: host.ssh.clone(),
        checks: Vec::new(),
    };
    let target = match host.target() {
        Ok(t) => t,
        Err(e) => {
            report
                .checks
                .push(Check::new("ssh", Level::Fail, e.to_string()));
            return report;
        }
    };
    report.target = target.to_string();
    let ssh = match Ssh::prepared(&target) {
        Ok(s) => s,
        Err(e) => {
            report
                .checks
                .push(Check::new("ssh", Level::Fail, e.to_string()));
            return report;
        }
    };
    let probe = match crate::remote::install::probe(&ssh, &target) {
        Ok(p) => p,
        Err(e) => {
            report
                .checks
                .push(Check::new("ssh", Level::Fail, format!("{e:#}")).fix(
                    "`ssh` to it must work without a password prompt (hive runs it in BatchMode)",
                ));
            return report;
        }
    };
    report.checks.push(Check::new(
        "ssh",
        Level::Ok,
        format!("reached ({})", crate::sanitize::neutralize(&probe.uname)),
    ));
    if !host.serves() {
        // `attach = false`: agents run there; no hive is expected.
        return report;
    }
    let Some(bin) = probe.usable().map(str::to_owned) else {
        report.checks.push(
            Check::new(
                "hive",
                Level::Fail,
                format!(
                    "no hive of protocol {} there",
                    crate::wire::PROTOCOL_VERSION
                ),
            )
            .fix(format!("hive attach --install {target}")),
        );
        return report;
    };
    report.checks.push(Check::new(
        "hive",
        Level::Ok,
        crate::sanitize::neutralize(&bin).into_owned(),
    ));
    report.checks.push(remote_agents(&ssh, &target, &bin));
    report
}

/// The host's own `hive doctor --json` in the project, summed up.
fn remote_agents(ssh: &Ssh, target: &crate::remote::Target, bin: &str) -> Check {
    let cmd = format!(
        "{} && exec {} doctor --json",
        target.cd_command(),
        crate::remote::target::quote(bin)
    );
    let out = ssh
        .command(target, true, &cmd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let report: Option<serde_json::Value> = out
        .ok()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());
    let Some(report) = report else {
        return Check::new("agents", Level::Warn, "its hive doctor gave no report");
    };
    let agents = report["agents"].as_array().cloned().unwrap_or_default();
    let failed: Vec<String> = agents
        .iter()
        .filter(|a| a["can_start"] == false)
        .filter_map(|a| {
            a["id"]
                .as_str()
                .map(|s| crate::sanitize::neutralize(s).into_owned())
        })
        .collect();
    if let Some(e) = report["config"]["error"].as_str() {
        return Check::new(
            "agents",
            Level::Warn,
            format!("its config: {}", crate::sanitize::neutralize(e)),
        );
    }
    if failed.is_empty() {
        Check::new(
            "agents",
            Level::Ok,
            format!("all {} can start there", agents.len()),
        )
    } else {
        Check::new(
            "agents",
            Level::Warn,
            format!(
                "{} of {} cannot start there: {}",
                failed.len(),
                agents.len(),
                failed.join(", ")
            ),
        )
        .fix(format!("run `hive doctor` on {}", target.name))
    }
}
