//! `planner failures`: every single switch or cable failure, proven.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use planner::algorithm::{Algorithm, Command};
use planner::failures::{FailureRequest, analyse, render_failures};
use planner::network::Avoid;
use planner::ranks::Engine;

use crate::Format;
use crate::io::{BadInput, load_plan, print, print_json};

#[derive(Debug, Args)]
pub struct FailuresArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    /// The job's algorithm: hdrm, hd or ring.
    #[arg(long, default_value = "hdrm")]
    algorithm: String,
    /// Ranks in the job (default: as `planner ranks`).
    #[arg(long)]
    ranks: Option<usize>,
    /// The engine that runs the job (probe, openmpi, mpich, nccl, gloo).
    #[arg(long, default_value = "probe")]
    engine: String,
    /// A failure scenario instead of every single one: `link:SW1-SW2` and
    /// `switch:SW` joined by commas fail together. May repeat (one
    /// scenario each).
    #[arg(long, value_name = "WHAT[,WHAT...]")]
    fail: Vec<String>,
    /// ECMP hash seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run(args: FailuresArgs) -> Result<ExitCode> {
    let plan = load_plan(&args.plan)?;
    let algorithm = Algorithm::parse(&args.algorithm, Command::Ranks)?;
    let engine: Engine = args.engine.parse()?;
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
        ranks: args.ranks,
        engine,
        seed: args.seed,
        scenarios,
    };
    let show = !args.quiet && args.format == Format::Table;
    let terminal = std::io::stderr().is_terminal();
    let report = analyse(&plan, &request, |i, n, what| {
        if !show {
            return;
        }
        let line = format!("failures: {}/{n} {what}", i + 1);
        if terminal {
            eprint!("\r{line:<78}");
        } else if i % 25 == 0 {
            eprintln!("{line}");
        }
    })
    .map_err(|e| -> anyhow::Error {
        match e {
            // The failures are this command's --fail, not ranks' --avoid.
            planner::Error::Parameter { parameter, message } if parameter == "avoid" => {
                BadInput(format!("--fail: {message}")).into()
            }
            other => other.into(),
        }
    })?;
    if show && terminal {
        eprint!("\r{}\r", " ".repeat(78));
    }
    match args.format {
        Format::Table => print(&render_failures(&report))?,
        Format::Json => print_json(&report)?,
    }
    Ok(ExitCode::SUCCESS)
}
