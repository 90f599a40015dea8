//! `planner ranks` and `planner verify-ranks`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use planner::algorithm::{Algorithm, Command};
use planner::checked::CheckedPlan;
use planner::ranks::{self, Avoid, Engine, Policy, Request, Solver, format as rank_format};

use crate::Format;
use crate::io::{BadInput, display, leave, load_plan, print, print_json, read};

#[derive(Debug, Args)]
pub struct RanksArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    #[command(flatten)]
    job: JobArgs,
    #[command(flatten)]
    search: SearchArgs,
    #[arg(long, value_enum, default_value_t = RankFormat::Table)]
    format: RankFormat,
}

/// Faulty fabrics and how to search them.
#[derive(Debug, Args)]
struct SearchArgs {
    /// Keep a job off a dead cable or a switch: `link:SW1-SW2` or
    /// `switch:SW` (switch names as in the plan). May repeat.
    #[arg(long, value_name = "WHAT")]
    avoid: Vec<String>,
    /// auto (heuristic, then the exact model on small jobs when the
    /// heuristic misses the lower bound), heuristic, or exact.
    #[arg(long, default_value = "auto")]
    solver: String,
}

/// The job a rank table is made for, as `planner ranks` and `planner
/// failures` take it: its algorithm, rank count, engine and ECMP seed.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// hdrm, hd or ring.
    #[arg(long, default_value = "hdrm")]
    algorithm: String,
    /// Ranks in the job (default: every sub-node not avoided; on a plan
    /// whose NICs carry several GPUs, one rank per GPU, the GPUs of a NIC
    /// consecutive). A count that is not a power of two is folded onto the
    /// largest power of two below.
    #[arg(long)]
    pub ranks: Option<usize>,
    /// The engine that runs the allreduce: probe (provisioner probe, the
    /// planner's own schedule), openmpi (coll/tuned algorithm 6, its fold
    /// in pairs), mpich, nccl or gloo (rings only). The table is made and
    /// numbered for the schedule that engine really runs.
    #[arg(long, default_value = "probe")]
    engine: String,
    /// ECMP hash seed (fat-trees, paths inside a BiGraph part); the rank
    /// search is seeded from it too.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl JobArgs {
    /// The algorithm and engine, checked.
    pub fn algorithm_and_engine(&self) -> Result<(Algorithm, Engine)> {
        let algorithm = Algorithm::parse(&self.algorithm, Command::Ranks)?;
        let engine: Engine = self.engine.parse()?;
        Ok((algorithm, engine))
    }
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
    /// With --algorithm: ranks in the job (one per GPU on a NIC shared by
    /// several, as `planner ranks` counts them).
    #[arg(long, requires = "algorithm")]
    ranks: Option<usize>,
    /// The engine whose schedule is checked: probe, openmpi, mpich, nccl
    /// or gloo (default: the one a JSON rank file names, else probe).
    #[arg(long)]
    engine: Option<String>,
    /// With --algorithm: auto, heuristic or exact (see `planner ranks`).
    #[arg(long, requires = "algorithm", default_value = "auto")]
    solver: String,
    /// Route around a dead cable or a switch: `link:SW1-SW2` or
    /// `switch:SW`. May repeat.
    #[arg(long, value_name = "WHAT")]
    avoid: Vec<String>,
    /// With --ranks-file: the schedule, halving-doubling (hd) or ring
    /// (default: what the JSON names, else hd).
    #[arg(long, requires = "ranks_file")]
    schedule: Option<String>,
    /// ECMP hash seed (fat-trees, paths inside a BiGraph part).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How flows pick among equal-cost paths: ecmp (per-flow hash of the
    /// 5-tuple, seeded), dmodk (InfiniBand's D-mod-K: up-port by the
    /// destination index, deterministic) or spray (each flow split evenly
    /// over every equal-cost path; loads become shares of flows).
    #[arg(long, value_name = "POLICY", default_value = "ecmp")]
    routing: String,
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

impl SearchArgs {
    fn request(&self, job: &JobArgs) -> Result<Request> {
        let (algorithm, engine) = job.algorithm_and_engine()?;
        Ok(Request {
            algorithm,
            ranks: job.ranks,
            avoid: parse_avoid(&self.avoid)?,
            solver: self.solver.parse::<Solver>()?,
            seed: job.seed,
            unavailable: Vec::new(),
            engine,
        })
    }
}

fn parse_avoid(items: &[String]) -> Result<Vec<Avoid>> {
    Ok(items
        .iter()
        .map(|a| a.parse::<Avoid>())
        .collect::<Result<Vec<_>, _>>()?)
}

pub fn run_ranks(args: RanksArgs) -> Result<ExitCode> {
    let p = load_plan(&args.plan)?;
    let request = args.search.request(&args.job)?;
    let outcome = ranks::plan_gpu_ranks(&p, &request)?;
    let table = &outcome.table;
    let text = match args.format {
        RankFormat::Csv => rank_format::to_csv(&p, table),
        RankFormat::Rankfile => rank_format::to_rankfile(&p, table)?,
        RankFormat::Hostfile => rank_format::to_hostfile(&p, table)?,
        RankFormat::Json => {
            let doc = rank_format::RankDocument::new(&p, &request, &outcome);
            let mut s = serde_json::to_string_pretty(&doc).context("serialising JSON")?;
            s.push('\n');
            s
        }
        RankFormat::Table => table_text(&p, &args, &request, &outcome),
    };
    // Files for tools carry no commentary; a congested table still gets a
    // word on stderr, where a pipeline shows it.
    let for_tools = matches!(
        args.format,
        RankFormat::Csv | RankFormat::Rankfile | RankFormat::Hostfile
    );
    if for_tools && outcome.worst_load > 1 {
        eprintln!(
            "warning: this table puts up to {} flows on one directed inter-switch link (lower bound {}); `--format table` says which steps",
            outcome.worst_load, outcome.lower_bound
        );
    }
    print(&text)?;
    // The process ends here ([`leave`]).
    leave((p, outcome, text));
    Ok(ExitCode::SUCCESS)
}

fn table_text(
    p: &CheckedPlan,
    args: &RanksArgs,
    request: &Request,
    outcome: &ranks::Outcome,
) -> String {
    let algorithm = request.algorithm.as_str();
    let mut verify = format!(
        "planner verify-ranks {} --algorithm {algorithm} --ranks {}",
        display(&args.plan),
        outcome.table.ranks.len()
    );
    if !request.engine.is_probe() {
        verify.push_str(&format!(" --engine {}", request.engine));
    }
    for a in &request.avoid {
        verify.push_str(&format!(" --avoid {a}"));
    }
    if request.seed != 0 {
        verify.push_str(&format!(" --seed {}", request.seed));
    }
    let engine = if request.engine.is_probe() {
        String::new()
    } else {
        format!(" for {}", request.engine)
    };
    format!(
        "{algorithm} rank table{engine} for {} ({}): {} ranks\n\n{}\n{}Check it step by step: {verify}\n",
        p.name,
        p.describe(),
        outcome.table.ranks.len(),
        rank_format::to_table(p, &outcome.table),
        rank_format::outcome_summary(outcome),
    )
}

pub fn run_verify(args: VerifyArgs) -> Result<ExitCode> {
    let p = load_plan(&args.plan)?;
    let avoid = parse_avoid(&args.avoid)?;
    let routing: Policy = args.routing.parse()?;
    let flag: Option<Engine> = args.engine.as_deref().map(str::parse).transpose()?;
    // With --algorithm, the table comes with its proof under the ECMP hash
    // and the request it answers (`proven`), which the report reuses where
    // it is the same: the table's proof, and with `hd` or `ring` the plan
    // order's search and proof.
    let (table, gpus, order, lower_bound, engine, proven) = match (
        &args.ranks_file,
        &args.algorithm,
    ) {
        (Some(file), _) => {
            let name = display(file);
            let read_back = rank_format::read_rank_table(&read(file)?, &name, &p)?;
            let named = read_back.algorithm;
            let engine = match (flag, read_back.engine) {
                (Some(e), Some(f)) if e != f && args.format == Format::Table => {
                    eprintln!(
                        "warning: {name} was made for {f}; checking what {e} runs over it, as --engine says"
                    );
                    e
                }
                (Some(e), _) => e,
                (None, f) => f.unwrap_or_default(),
            };
            let algorithm = match args.schedule.as_deref() {
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
                    None if engine.rings_only() => Algorithm::Ring,
                    _ => Algorithm::Hd,
                },
            };
            let table = ranks::RankTable {
                algorithm,
                ranks: read_back.ranks,
            };
            (table, read_back.gpus, name, None, engine, None)
        }
        (None, Some(a)) => {
            let algorithm = Algorithm::parse(a, Command::Ranks)?;
            let engine = flag.unwrap_or_default();
            let request = Request {
                algorithm,
                ranks: args.ranks,
                avoid: avoid.clone(),
                solver: args.solver.parse::<Solver>()?,
                seed: args.seed,
                unavailable: Vec::new(),
                engine,
            };
            // One route graph for the search, the table's proof and the
            // plan order's.
            let net = p.network_avoiding(&request.avoid)?;
            let outcome = ranks::plan_gpu_ranks_on(&net, &p, &request)?;
            // A bound is worth quoting only for a table that was searched
            // for; the plan order is what it is.
            let bound = (outcome.method != "plan-order").then_some(outcome.lower_bound);
            let gpus = ranks::rank_gpus(&p, &outcome.table.ranks);
            let order = if engine.is_probe() {
                algorithm.as_str().to_string()
            } else {
                format!("{} for {engine}", algorithm.as_str())
            };
            (
                outcome.table,
                gpus,
                order,
                bound,
                engine,
                Some((outcome.steps, net, request)),
            )
        }
        (None, None) => unreachable!("clap requires --ranks-file or --algorithm"),
    };
    let how = rank_format::Checked {
        engine,
        avoid: &avoid,
        seed: args.seed,
        routing,
    };
    let asked = rank_format::VerifyRequest {
        gpus: Some(&gpus),
        ..rank_format::VerifyRequest::new(&table, order, how)
    };
    let mut report = match &proven {
        Some((steps, net, request)) => rank_format::verify_report(
            &p,
            rank_format::VerifyRequest {
                known: rank_format::Known::Searched {
                    net,
                    request,
                    steps,
                },
                ..asked
            },
        )?,
        None => rank_format::verify_report(&p, asked)?,
    };
    report.lower_bound = lower_bound;
    match args.format {
        Format::Table => {
            let mut text = rank_format::render_verify(&report);
            if let Some(b) = lower_bound.filter(|&b| report.table.worst_load > b.max(1)) {
                text.push_str(&format!(
                    "No table can put fewer than {b} flows on a link here; the search found one with {}\n",
                    report.table.worst_load
                ));
            }
            print(&text)?;
        }
        Format::Json => print_json(&report)?,
    }
    let worst = report.table.worst_load;
    // The process ends here ([`leave`]).
    leave(proven);
    leave((p, report, table, gpus));
    let over = args.max_load.filter(|&m| worst > m);
    if let Some(m) = over {
        eprintln!("error: a step puts {worst} flows on one link, more than --max-load {m}");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
