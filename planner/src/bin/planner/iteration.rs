//! `planner iteration`: being built for its issue; replace this file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::io::BadInput;

#[derive(Debug, Args)]
pub struct IterationArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run(args: IterationArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner iteration {}: not built yet",
        args.plan.display()
    ))
    .into())
}
