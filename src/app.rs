//! The console application (issue #3 builds it out).

use std::process::ExitCode;

use crate::cli::Cli;

pub fn run(_cli: &Cli) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the console is not built yet; use `hive run`")
}
