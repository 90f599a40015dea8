//! `planner export`: being built for its issue; replace this file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::io::BadInput;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner export {}: not built yet",
        args.plan.display()
    ))
    .into())
}
