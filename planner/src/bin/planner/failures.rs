//! `planner failures`: every single switch or cable failure, proven.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use planner::failures::{FailureRequest, analyse, render_failures};
use planner::network::Avoid;

use crate::Format;
use crate::io::{BadInput, Progress, leave, load_plan, print, print_json};
use crate::ranks::JobArgs;

#[derive(Debug, Args)]
pub struct FailuresArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    #[command(flatten)]
    job: JobArgs,
    /// A failure scenario instead of every single one: `link:SW1-SW2` and
    /// `switch:SW` joined by commas fail together. May repeat (one
    /// scenario each).
    #[arg(long, value_name = "WHAT[,WHAT...]")]
    fail: Vec<String>,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run(args: FailuresArgs) -> Result<ExitCode> {
    let plan = load_plan(&args.plan)?;
    let (algorithm, engine) = args.job.algorithm_and_engine()?;
    let mut scenarios = Vec::with_capacity(args.fail.len());
    for set in &args.fail {
        let failed = set
            .split(',')
            .filter(|w| !w.trim().is_empty())
            .map(|w| {
                w.parse::<Avoid>().map_err(|e| match e {
                    planner::Error::Parameter { message, .. } => {
                        BadInput(format!("--fail {set}: {message}"))
                    }
                    other => BadInput(format!("--fail {set}: {other}")),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if failed.is_empty() {
            return Err(BadInput(format!(
                "--fail `{set}` names nothing; write link:SW1-SW2 or switch:SW"
            ))
            .into());
        }
        scenarios.push(failed);
    }
    let request = FailureRequest {
        algorithm,
        ranks: args.job.ranks,
        engine,
        seed: args.job.seed,
        scenarios,
    };
    let mut progress = Progress::new(
        !args.quiet && args.format == Format::Table,
        "failing",
        "scenarios",
    );
    let report = analyse(&plan, &request, |i, n, what| progress.update(what, i, n));
    progress.finish();
    let report = report.map_err(|e| -> anyhow::Error {
        match e {
            // The failures are this command's --fail, not ranks' --avoid.
            planner::Error::Parameter { parameter, message } if parameter == "avoid" => {
                BadInput(format!("--fail: {message}")).into()
            }
            other => other.into(),
        }
    })?;
    match args.format {
        Format::Table => print(&render_failures(&report))?,
        Format::Json => print_json(&report)?,
    }
    // The process ends here ([`leave`]); the progress ticker was finished.
    leave((plan, report));
    Ok(ExitCode::SUCCESS)
}
