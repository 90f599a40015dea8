//! `planner cost`: being built for its issue; replace this file.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::io::BadInput;

#[derive(Debug, Args)]
pub struct CostArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run(args: CostArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner cost {}: not built yet",
        args.plan.display()
    ))
    .into())
}

#[derive(Debug, Args)]
pub struct PurchaseArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
}

pub fn run_purchase(args: PurchaseArgs) -> Result<ExitCode> {
    Err(BadInput(format!(
        "planner purchase {}: not built yet",
        args.plan.display()
    ))
    .into())
}
