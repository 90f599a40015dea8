//! `planner render`: being built for its issue; replace this file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::io::BadInput;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run(args: RenderArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner render {}: not built yet",
        args.plan.display()
    ))
    .into())
}

#[derive(Debug, Args)]
pub struct CheckQosArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run_check_qos(args: CheckQosArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner check-qos {}: not built yet",
        args.plan.display()
    ))
    .into())
}
