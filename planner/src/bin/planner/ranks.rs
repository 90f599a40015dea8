//! `planner ranks` and `planner verify-ranks`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use planner::ranks::{self, Algorithm, format as rank_format};

use crate::Format;
use crate::io::{BadInput, display, load_plan, print, print_json, read};

#[derive(Debug, Args)]
pub struct RanksArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    /// hdrm, hd or ring.
    #[arg(long, default_value = "hdrm")]
    algorithm: String,
    /// Ranks in the job (a power of two for hdrm and hd; default: every
    /// sub-node).
    #[arg(long)]
    ranks: Option<usize>,
    #[arg(long, value_enum, default_value_t = RankFormat::Table)]
    format: RankFormat,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    /// A rank table from `planner ranks --format csv|json`.
    #[arg(
        long,
        conflicts_with = "algorithm",
        required_unless_present = "algorithm"
    )]
    ranks_file: Option<PathBuf>,
    /// Build the table: hdrm, hd or ring.
    #[arg(long)]
    algorithm: Option<String>,
    /// With --algorithm: ranks in the job.
    #[arg(long, requires = "algorithm")]
    ranks: Option<usize>,
    /// With --ranks-file: the schedule, halving-doubling (hd) or ring
    /// (default: what the JSON names, else hd).
    #[arg(long, requires = "ranks_file")]
    schedule: Option<String>,
    /// ECMP hash seed (fat-trees, paths inside a BiGraph part).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Exit 2 when a step puts more than this many flows on one link.
    #[arg(long)]
    max_load: Option<usize>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RankFormat {
    /// Aligned text.
    Table,
    /// JSON: {"plan", "algorithm", "ranks": [{"rank", "server", "sub_node", "gpu", "nic", "switch", "part"}]}.
    Json,
    /// CSV with the header rank,server,sub_node,gpu,nic,switch,part.
    Csv,
    /// Open MPI rankfile: rank N=host slot=socket:core.
    Rankfile,
    /// Open MPI hostfile: host slots=N.
    Hostfile,
}

pub fn run_ranks(args: RanksArgs) -> Result<ExitCode> {
    let RanksArgs {
        plan,
        algorithm,
        ranks: x,
        format,
    } = args;
    {
        let p = load_plan(&plan)?;
        let algorithm: Algorithm = algorithm.parse()?;
        let table = ranks::rank_table(&p, algorithm, x)?;
        let text = match format {
            RankFormat::Csv => rank_format::to_csv(&p, &table),
            RankFormat::Rankfile => rank_format::to_rankfile(&p, &table),
            RankFormat::Hostfile => rank_format::to_hostfile(&p, &table),
            RankFormat::Json => {
                let doc = rank_format::RankDocument {
                    plan: &p.name,
                    algorithm,
                    ranks: rank_format::rows(&p, &table),
                };
                let mut s = serde_json::to_string_pretty(&doc).context("serialising JSON")?;
                s.push('\n');
                s
            }
            RankFormat::Table => format!(
                "{} rank table for {} ({}): {} ranks\n\n{}\nCheck it step by step: planner verify-ranks {} --algorithm {}\n",
                algorithm.as_str(),
                p.name,
                p.describe(),
                table.ranks.len(),
                rank_format::to_table(&p, &table),
                display(&plan),
                algorithm.as_str()
            ),
        };
        print(&text)?;
        Ok(ExitCode::SUCCESS)
    }
}

pub fn run_verify(args: VerifyArgs) -> Result<ExitCode> {
    let VerifyArgs {
        plan,
        ranks_file,
        algorithm,
        ranks: x,
        schedule,
        seed,
        max_load,
        format,
    } = args;
    {
        let p = load_plan(&plan)?;
        let (table, order) = match (&ranks_file, &algorithm) {
            (Some(file), _) => {
                let name = display(file);
                let (named, order) = rank_format::read_rank_file(&read(file)?, &name, &p)?;
                let algorithm = match schedule.as_deref() {
                    Some("hd" | "halving-doubling") => Algorithm::Hd,
                    Some("ring") => Algorithm::Ring,
                    Some(other) => {
                        return Err(BadInput(format!(
                                "--schedule: `{other}` is not a schedule; use hd (halving-doubling) or ring"
                            ))
                            .into());
                    }
                    None => match named {
                        Some(Algorithm::Ring) => Algorithm::Ring,
                        _ => Algorithm::Hd,
                    },
                };
                (
                    ranks::RankTable {
                        algorithm,
                        ranks: order,
                    },
                    name,
                )
            }
            (None, Some(a)) => {
                let a: Algorithm = a.parse()?;
                (ranks::rank_table(&p, a, x)?, a.as_str().to_string())
            }
            (None, None) => unreachable!("clap requires --ranks-file or --algorithm"),
        };
        let report = rank_format::verify_report(&p, &table, order, seed)?;
        match format {
            Format::Table => print(&rank_format::render_verify(&report))?,
            Format::Json => print_json(&report)?,
        }
        let over = max_load.is_some_and(|m| report.table.worst_load > m);
        if over {
            eprintln!(
                "error: a step puts {} flows on one link, more than --max-load {}",
                report.table.worst_load,
                max_load.unwrap_or(0)
            );
        }
        Ok(if over {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        })
    }
}
