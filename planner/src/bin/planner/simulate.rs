//! `planner simulate`: being built for its issue; replace this file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::io::BadInput;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run(args: SimulateArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner simulate {}: not built yet",
        args.plan.display()
    ))
    .into())
}
