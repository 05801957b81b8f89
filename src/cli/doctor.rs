//! `hive doctor [--json]`: checks the config and that every agent can
//! start; exits 1 when one cannot.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;

use super::Cli;
use crate::config::Config;
use crate::doctor::{self, Env, Report, render};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn doctor(cli: &Cli, args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let report = match Config::load(cli.config.as_deref(), &crate::provider::Registry::builtin()) {
        Ok(config) => {
            let (_, warnings) = crate::app::build_app(&config);
            doctor::diagnose(&config, warnings, &Env::current())
        }
        Err(e) => {
            let source = cli
                .config
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(search order: ./hive.toml, user config)".into());
            Report::config_error(source, e.to_string())
        }
    };
    let text = if args.json {
        render::json(&report)
    } else {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        render::text(&report, colour)
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", text.trim_end())?;
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
