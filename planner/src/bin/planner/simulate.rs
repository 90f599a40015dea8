//! `planner simulate`: allreduce time on a plan (EFLOPS Fig. 12), or on
//! BiGraph and fat-tree plans built per node count (Fig. 16), by the
//! event-driven simulator, the step-synchronous mode or the closed forms.
//!
//! The command is glue: it turns the flags into plans, algorithms, sizes,
//! parameters and options, calls `planner::estimate`, and prints.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::{Args, ValueEnum};

use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::Shorthand;
use planner::estimate::plot::{self, PlotFormat};
use planner::estimate::report::{self, JsonRow, Simulated};
use planner::estimate::{
    self, Algorithm, Estimate, Method, Options, PACKET_PARAMS, PARAMS, Params, ScaleSpec,
    SendProgress,
};
use planner::ranks::FoldCost;

use crate::io::{
    BadInput, Progress, display, link_speed, load_plan, print, print_json, shorthand_source,
};
use crate::output::{self, FileTarget};

/// The sizes of EFLOPS Fig. 12.
const DEFAULT_SIZES: &str = "1KiB..256MiB";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimFormat {
    /// Aligned text for people.
    Table,
    /// JSON rows (see docs/cli.md).
    Json,
    /// CSV with the columns of the JSON rows.
    Csv,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Plan JSON (or TOML) written by `planner design --out`. Several
    /// plans are simulated side by side (one column each in the plot).
    /// With --scale: optional, and only its slowest NIC is used, as the
    /// link speed of the plans the sweep builds.
    #[arg(value_name = "PLAN")]
    plans: Vec<PathBuf>,
    /// Also simulate an M x N BiGraph of identical servers, e.g. 16x32.
    #[arg(long, value_name = "MxN", conflicts_with = "scale")]
    bigraph: Option<String>,
    /// Also simulate a fat-tree, e.g. `tiers=2,sub-nodes=512,ports=64`.
    #[arg(long, value_name = "SPEC", conflicts_with = "scale")]
    fat_tree: Option<String>,
    /// NIC and switch port speed of the plans --bigraph, --fat-tree and
    /// --scale build [default: 100, or with --scale the slowest NIC of
    /// PLAN]. Fractional speeds (9.33) are simulated exactly; the plans
    /// carry them rounded up to whole Gbps.
    #[arg(long, value_name = "GBPS")]
    link_gbps: Option<f64>,
    /// Algorithms, comma-separated, or `all`: ring, hd, hdrm, tree,
    /// pipelined-tree, double-tree, overlapped-tree,
    /// overlapped-double-tree, blueconnect, 2d, two-level, topk-allgather,
    /// ps, hitopk, nccl-ring, nccl-tree. One that
    /// cannot run on a plan's topology (hdrm on a fat-tree) is skipped
    /// there with a note; naming one that runs on none of the plans is an
    /// error (`all` runs what applies and notes the rest). [default:
    /// ring,hd,hdrm]
    #[arg(long, value_name = "LIST")]
    algorithm: Option<String>,
    /// Message sizes: `FROM..TO` (every power of two between) or a
    /// comma-separated list, e.g. `256KiB,256MiB`. Units: B; KB, MB, GB =
    /// 10^3, 10^6, 10^9 bytes (200KB is 200,000 B); KiB, MiB, GiB (or K,
    /// M, G) = 2^10, 2^20, 2^30 bytes.
    #[arg(long, value_name = "SIZES", default_value = DEFAULT_SIZES)]
    size: String,
    /// Ranks in the job (default: every sub-node of the plan, or every GPU
    /// when NICs are shared or NVLink domains given). hd and hdrm
    /// fold a count that is not a power of two onto the largest power of
    /// two below, on the rank table `planner ranks` gives.
    #[arg(long, conflicts_with = "scale")]
    ranks: Option<usize>,
    /// EFLOPS Fig. 16 mode: for every node count (`64..1024` doubling, or
    /// `64,256`), build an M x N BiGraph and a fat-tree of that many
    /// sub-nodes and simulate every algorithm on both.
    #[arg(long, value_name = "NODES")]
    scale: Option<String>,
    /// With --scale: ports of the fat-tree switches (2 tiers while the
    /// sub-nodes fit, k-ary 3 tiers beyond).
    #[arg(long, value_name = "PORTS", default_value_t = 64, requires = "scale")]
    fat_tree_ports: u32,
    /// event (the event-driven max-min fair simulator), fast
    /// (step-synchronous: a barrier after every step, for screening; exact
    /// without contention, otherwise usually slower), packet (packet-level:
    /// switch queues, PFC, ECN and DCQCN, with the --param settings of
    /// docs/packet-sim.md; much slower) or closed-form (the papers'
    /// α-β-γ equations; for hd and the levels of blueconnect and 2d each
    /// step's β is its most loaded link with flows split evenly over
    /// equal-cost paths, so they equal --routing spray; they leave out
    /// ECMP hash collisions, a step's α below its level's longest route,
    /// and steps overlapping; docs/cli.md) [default: event].
    #[arg(long, value_name = "METHOD")]
    method: Option<String>,
    /// Same as --method fast.
    #[arg(long)]
    fast: bool,
    /// ECMP hash seeds 0..N (fat-trees, paths within a BiGraph part): the
    /// time is the median, and the table shows the minimum and maximum.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seeds: usize,
    /// How flows pick among equal-cost paths: ecmp (per-flow hash of the
    /// 5-tuple, seeded by --seeds), dmodk (InfiniBand's D-mod-K: up-port
    /// by the destination index, deterministic) or spray (each flow split
    /// evenly over every equal-cost path, ideal per-packet spraying).
    #[arg(long, value_name = "POLICY", default_value = "ecmp")]
    routing: String,
    /// Cost parameter `name=value`; may repeat, or separate with commas.
    #[arg(long, value_name = "NAME=VALUE", long_help = param_help())]
    param: Vec<String>,
    /// Write a plot here, FILE.svg or FILE.png: latency and bandwidth
    /// against message size (EFLOPS Fig. 12), or with --scale time
    /// against sub-nodes (Fig. 16).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Print the schedule behind each estimate instead (one size only):
    /// per step its phase, flows, largest send, most flows on one link,
    /// longest route latency and time, as the step-synchronous mode sees
    /// it with the first seed; for the trees also the gradient turnaround
    /// of their chunks (first, mean, max), measured in the event-driven
    /// simulation by default and on the step-synchronous timeline with
    /// --fast, --method closed-form or packet; with --method packet also, per
    /// step, when its last send arrived, the deepest switch queue, PFC
    /// pauses and paused time, ECN marks and CNPs of the packet-level run.
    #[arg(long)]
    steps: bool,
    /// Worker threads for the sweep (0: every core). The results do not
    /// depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[arg(long, value_enum, default_value_t = SimFormat::Table)]
    format: SimFormat,
    /// No progress on stderr (it is shown for runs over a second with the
    /// table format, never with --format json or csv).
    #[arg(long)]
    quiet: bool,
}

/// The long help of `--param`, from the parameter table of the library.
fn param_help() -> String {
    let mut text = String::from(
        "Cost parameter `name=value`; may repeat, or separate with commas. \
         Link speeds come from the plan; the rest are defaults:\n",
    );
    for p in &PARAMS {
        let _ = write!(text, "\n  {:<18} {:>6}  {}", p.name, p.default, p.meaning);
    }
    text.push_str("\n\nThe packet-level mode (--method packet) also reads:\n");
    for p in &PACKET_PARAMS {
        let _ = write!(text, "\n  {:<18} {:>10}  {}", p.name, p.default, p.meaning);
    }
    text
}

/// The checked command line.
struct Config {
    algorithms: Vec<Algorithm>,
    /// True when --algorithm named algorithms (not the default list, not
    /// `all`).
    explicit: bool,
    sizes: Vec<u64>,
    params: Params,
    options: Options,
    plot: Option<(FileTarget, PlotFormat)>,
    /// Progress on stderr: table format and no --quiet.
    progress: bool,
}

fn method_of(args: &SimulateArgs) -> Result<Method> {
    let Some(text) = &args.method else {
        return Ok(if args.fast {
            Method::Fast
        } else {
            Method::Event
        });
    };
    let method: Method = text.parse()?;
    if args.fast && method != Method::Fast {
        return Err(BadInput(format!(
            "--fast asks for the step-synchronous mode and --method {} for another; give one of them",
            text.trim()
        ))
        .into());
    }
    Ok(method)
}

fn check(args: &SimulateArgs) -> Result<Config> {
    if args.plans.is_empty()
        && args.bigraph.is_none()
        && args.fat_tree.is_none()
        && args.scale.is_none()
    {
        return Err(BadInput(
            "nothing to simulate: give a PLAN file (planner design ... --out plan.json), --bigraph MxN, --fat-tree SPEC, or --scale 64..1024 for BiGraphs and fat-trees built per node count".into(),
        )
        .into());
    }
    // `all` asks for what applies: those that run on no plan given are
    // skipped with a note, not refused.
    let explicit = args
        .algorithm
        .as_deref()
        .is_some_and(|a| !a.trim().eq_ignore_ascii_case("all"));
    let algorithms = Algorithm::parse_list(args.algorithm.as_deref().unwrap_or("ring,hd,hdrm"))?;
    let sizes = estimate::parse_sizes(&args.size)?;
    if sizes.is_empty() {
        return Err(BadInput("--size: no size given; write e.g. 1KiB..256MiB".into()).into());
    }
    if args.steps && sizes.len() > 1 {
        return Err(BadInput(format!(
            "--steps prints the schedule of one message size, and --size {} gives {}; give one size, e.g. --size 256MiB",
            args.size,
            sizes.len()
        ))
        .into());
    }
    if args.seeds == 0 {
        return Err(BadInput("--seeds 0: simulate at least 1 ECMP seed".into()).into());
    }
    if args.ranks == Some(0) {
        return Err(BadInput("--ranks 0: a job needs at least 1 rank".into()).into());
    }
    let method = method_of(args)?;
    let mut params = Params::default().with_overrides(&args.param)?;
    // A fractional --link-gbps runs the links at the exact speed; the plans
    // carry whole Gbps.
    if let Some(g) = args.link_gbps {
        let (_, exact) = link_speed(g)?;
        if params.link_gbps.is_none() {
            params.link_gbps = exact;
        }
    }
    let mut options = Options::with_seed_count(method, args.seeds);
    options.threads = args.threads;
    // The simulations count the sends they start for the progress line.
    let progress = !args.quiet && args.format == SimFormat::Table;
    if progress {
        options.sends = Some(Arc::new(SendProgress::default()));
    }
    options.routing = args.routing.parse()?;
    if !options.routing.seeded() && args.seeds > 1 {
        return Err(BadInput(format!(
            "--seeds {}: --routing {} does not hash flows, so every seed routes alike; leave --seeds out",
            args.seeds, options.routing
        ))
        .into());
    }
    let plot = match &args.plot {
        Some(p) => {
            let format = PlotFormat::from_path(&display(p))?;
            Some((
                output::file_target(p, "--plot", &["svg", "png"], "a plot")?,
                format,
            ))
        }
        None => None,
    };
    Ok(Config {
        algorithms,
        explicit,
        sizes,
        params,
        options,
        plot,
        progress,
    })
}

/// The plans of a size sweep (the files, then the shorthands) and how
/// notes and tables name each: its name, or where two plans share one,
/// the name with its file (or its shorthand).
fn load_plans(args: &SimulateArgs) -> Result<(Vec<CheckedPlan>, Vec<String>)> {
    if args.link_gbps.is_some() && args.bigraph.is_none() && args.fat_tree.is_none() {
        return Err(BadInput(
            "--link-gbps sets the speed of the plans --bigraph, --fat-tree and --scale build; for a plan file give --param link_gbps=GBPS".into(),
        )
        .into());
    }
    let mut plans = Vec::new();
    let mut sources = Vec::new();
    for path in &args.plans {
        plans.push(load_plan(path)?);
        sources.push(display(path));
    }
    let s = Shorthand {
        link_gbps: link_speed(args.link_gbps.unwrap_or(100.0))?.0,
        ..Shorthand::default()
    };
    // Both shorthands may be given: one plan each.
    for (bigraph, fat_tree) in [
        (args.bigraph.as_deref(), None),
        (None, args.fat_tree.as_deref()),
    ] {
        if let Some((inv, opts, source)) = shorthand_source(bigraph, fat_tree, &s)? {
            plans.push(design(&inv, &opts)?);
            sources.push(source);
        }
    }
    let labels = plan_labels(&plans, &sources);
    Ok((plans, labels))
}

/// Each plan's name, with its source (file or shorthand) where another
/// plan has the same name, so that notes never list one name twice for
/// two plans.
fn plan_labels(plans: &[CheckedPlan], sources: &[String]) -> Vec<String> {
    plans
        .iter()
        .zip(sources)
        .map(|(p, source)| {
            let shared = plans.iter().filter(|o| o.name == p.name).count() > 1;
            if shared && *source != p.name {
                format!("{} ({source})", p.name)
            } else {
                p.name.clone()
            }
        })
        .collect()
}

/// The link speed of a scale sweep.
fn scale_link_gbps(args: &SimulateArgs) -> Result<u32> {
    if let Some(g) = args.link_gbps {
        let (g, _) = link_speed(g)?;
        if !args.plans.is_empty() {
            return Err(BadInput(
                "--scale takes the link speed from PLAN or from --link-gbps; give one of them"
                    .into(),
            )
            .into());
        }
        return Ok(g);
    }
    match args.plans.as_slice() {
        [] => Ok(100),
        [path] => {
            let plan = load_plan(path)?;
            match plan.sub_node_list.iter().map(|s| s.nic_gbps).min() {
                Some(g) if g > 0 => Ok(g),
                _ => Err(BadInput(format!(
                    "{}: the plan has no sub-node with a NIC speed for --scale to use; give --link-gbps",
                    display(path)
                ))
                .into()),
            }
        }
        _ => Err(BadInput(
            "--scale takes at most one PLAN (for its link speed); it builds its own plans".into(),
        )
        .into()),
    }
}

/// A note for every rank count at which hd or hdrm ran folded (not a
/// power of two), in the order the counts first appear.
fn fold_notes(estimates: &[(usize, Estimate)]) -> Vec<String> {
    let mut counts: Vec<usize> = Vec::new();
    for (_, e) in estimates {
        let halving_doubling = e.algorithm.info().rank_schedule
            == Some(planner::algorithm::RankSchedule::HalvingDoubling);
        if halving_doubling && !counts.contains(&e.ranks) {
            counts.push(e.ranks);
        }
    }
    counts
        .into_iter()
        .filter_map(FoldCost::of)
        .map(|f| {
            let x = f.core + f.extra;
            format!(
                "{x} ranks is not a power of two: hd and hdrm fold {} extra rank{} onto the {} core ranks (a fold step before halving-doubling and an unfold step after, as `planner ranks --ranks {x}` lays them out); {} ranks would need no fold",
                f.extra,
                if f.extra == 1 { "" } else { "s" },
                f.core,
                f.core
            )
        })
        .collect()
}

/// Algorithms per plan, the notes on those skipped, and an error for an
/// explicitly named algorithm that runs on none of the plans. `what`
/// names the plans in the notes (`None`: by name).
fn plan_algorithms(
    plans: &[CheckedPlan],
    labels: &[String],
    cfg: &Config,
    what: Option<&str>,
) -> Result<(Vec<Vec<Algorithm>>, Vec<String>)> {
    let mut notes = Vec::new();
    let mut per_plan = vec![Vec::new(); plans.len()];
    for &a in &cfg.algorithms {
        let mut skipped = Vec::new();
        for (i, plan) in plans.iter().enumerate() {
            if a.runs_on(plan.topology) {
                per_plan[i].push(a);
            } else {
                skipped.push(labels[i].as_str());
            }
        }
        if skipped.is_empty() {
            continue;
        }
        let names = skipped.join(", ");
        if skipped.len() == plans.len() && cfg.explicit {
            return Err(BadInput(format!(
                "--algorithm {}: its rank mapping (EFLOPS Algorithm 1) needs a BiGraph, and {names} {}; use ring or hd there, or give a BiGraph plan",
                a.as_str(),
                if skipped.len() == 1 {
                    "is a fat-tree"
                } else {
                    "are fat-trees"
                }
            ))
            .into());
        }
        notes.push(format!(
            "{} skipped on {}: its rank mapping needs a BiGraph",
            a.as_str(),
            what.unwrap_or(&names)
        ));
    }
    if per_plan.iter().all(Vec::is_empty) {
        return Err(BadInput(
            "no algorithm runs on the plans given; add ring or hd to --algorithm".into(),
        )
        .into());
    }
    Ok((per_plan, notes))
}

/// Simulates every plan; with the estimates that finished, the error of
/// the first job that failed (the rest are not started). What the send
/// limit refuses is refused before anything runs.
fn run_sizes(args: &SimulateArgs, cfg: &Config) -> Result<(Simulated, Option<planner::Error>)> {
    let (plans, labels) = load_plans(args)?;
    let (per_plan, notes) = plan_algorithms(&plans, &labels, cfg, None)?;
    // One plan checks its own jobs before starting them; with several,
    // every plan's are checked before the first starts.
    if plans.len() > 1 {
        for (plan, algs) in plans.iter().zip(&per_plan) {
            estimate::sweep_fits(
                plan,
                algs,
                &cfg.sizes,
                args.ranks,
                &cfg.params,
                &cfg.options,
            )?;
        }
    }
    let total: usize = per_plan.iter().map(|a| a.len() * cfg.sizes.len()).sum();
    let mut progress = Progress::new(cfg.progress, "simulating", "estimates")
        .with_sends(cfg.options.sends.clone());
    let mut estimates = Vec::new();
    let mut failed = None;
    let mut offset = 0;
    for (i, plan) in plans.iter().enumerate() {
        if per_plan[i].is_empty() {
            continue;
        }
        let what = format!(
            "{} on {}",
            per_plan[i]
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            labels[i]
        );
        let (got, error) = match estimate::size_sweep_finished(
            plan,
            &per_plan[i],
            &cfg.sizes,
            args.ranks,
            &cfg.params,
            &cfg.options,
            &mut |done, _| progress.update(&what, offset + done, total),
        ) {
            Ok(r) => r,
            // Nothing of this plan ran; what earlier plans finished is kept.
            Err(e) if !estimates.is_empty() => (Vec::new(), Some(e)),
            Err(e) => return Err(e.into()),
        };
        offset += per_plan[i].len() * cfg.sizes.len();
        estimates.extend(got.into_iter().map(|e| (i, e)));
        if error.is_some() {
            failed = error;
            break;
        }
    }
    progress.finish();
    let mut notes = notes;
    notes.extend(fold_notes(&estimates));
    Ok((
        Simulated {
            scale: false,
            plans,
            labels,
            estimates,
            notes,
        },
        failed,
    ))
}

fn run_scale(args: &SimulateArgs, cfg: &Config, nodes_text: &str) -> Result<Simulated> {
    let nodes = estimate::parse_nodes(nodes_text)?;
    let spec = ScaleSpec {
        link_gbps: scale_link_gbps(args)?,
        fat_tree_ports: args.fat_tree_ports,
        ..ScaleSpec::default()
    };
    let plans = estimate::scale_plans(&nodes, &spec)?;
    let labels: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
    let (per_plan, notes) = plan_algorithms(&plans, &labels, cfg, Some("the fat-tree plans"))?;
    let mut progress = Progress::new(cfg.progress, "simulating", "estimates")
        .with_sends(cfg.options.sends.clone());
    let what = format!("--scale {nodes_text}");
    let got = estimate::scale_sweep(
        &plans,
        &cfg.algorithms,
        &cfg.sizes,
        &cfg.params,
        &cfg.options,
        &mut |done, total| progress.update(&what, done, total),
    );
    progress.finish();
    let got = got?;
    // scale_sweep goes plan by plan, algorithm by algorithm, size by size,
    // leaving out what cannot run: the same order as `per_plan`.
    let mut index = Vec::with_capacity(got.len());
    for (i, algs) in per_plan.iter().enumerate() {
        for _ in 0..algs.len() * cfg.sizes.len() {
            index.push(i);
        }
    }
    if index.len() != got.len() {
        anyhow::bail!(
            "the scale sweep returned {} estimates for {} jobs",
            got.len(),
            index.len()
        );
    }
    let estimates: Vec<(usize, Estimate)> = index.into_iter().zip(got).collect();
    let mut notes = notes;
    notes.extend(fold_notes(&estimates));
    Ok(Simulated {
        scale: true,
        plans,
        labels,
        estimates,
        notes,
    })
}

pub fn run(args: SimulateArgs) -> Result<ExitCode> {
    let cfg = check(&args)?;
    let (outcome, failed) = match &args.scale {
        Some(nodes) => (
            run_scale(&args, &cfg, nodes).map_err(|e| sends_advice(e, &args))?,
            None,
        ),
        None => run_sizes(&args, &cfg).map_err(|e| sends_advice(e, &args))?,
    };
    // Nothing finished (or --steps, which prints schedules of all or
    // none): the failure alone.
    if let Some(e) = failed {
        if args.steps || outcome.estimates.is_empty() {
            return Err(e.into());
        }
        return print_outcome(&args, &cfg, &outcome, Some(e));
    }
    if args.steps {
        return print_steps(&args, &cfg, &outcome);
    }
    print_outcome(&args, &cfg, &outcome, None)
}

/// Prints the estimates (table, JSON or CSV) and the plot; ends with
/// `failed`, when a later job failed, after what finished is printed.
fn print_outcome(
    args: &SimulateArgs,
    cfg: &Config,
    outcome: &Simulated,
    failed: Option<planner::Error>,
) -> Result<ExitCode> {
    let list: Vec<Estimate> = outcome.estimates.iter().map(|(_, e)| e.clone()).collect();
    let mut written = String::new();
    if let Some((path, format)) = &cfg.plot {
        let bytes = if outcome.scale {
            plot::scale(&list, *format)?
        } else {
            plot::sizes(&list, *format)?
        };
        output::commit(vec![output::stage_file(
            path,
            |w| Ok(w.write_all(&bytes)?),
        )?])?;
        written = format!("Plot written to {}\n", display(path.given()));
    }
    match args.format {
        SimFormat::Table => {
            let mut text = report::table(outcome, &cfg.algorithms, &cfg.sizes, &cfg.options);
            for n in &outcome.notes {
                let _ = writeln!(text, "Note: {n}.");
            }
            if !written.is_empty() {
                text.push('\n');
                text.push_str(&written);
            }
            print(&text)?;
        }
        SimFormat::Json => {
            notes_to_stderr(&outcome.notes);
            let rows: Vec<JsonRow> = list.iter().map(JsonRow::of).collect();
            print_json(&rows)?;
        }
        SimFormat::Csv => {
            notes_to_stderr(&outcome.notes);
            print(&estimate::csv(&list))?;
        }
    }
    // What finished is printed above; the failure ends the command.
    match failed {
        Some(e) => Err(anyhow::Error::new(e).context(format!(
            "simulation stopped after {} estimate{} (printed above); the rest were not run",
            list.len(),
            if list.len() == 1 { "" } else { "s" }
        ))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The simulator's memory refusal (too many sends) with what the user can
/// do about it, in the command's flags: the closed form, fewer ranks
/// (given or not), smaller sizes or scale points. Other errors pass unchanged.
fn sends_advice(e: anyhow::Error, args: &SimulateArgs) -> anyhow::Error {
    let Some(planner::Error::TooManySends { ranks, .. }) = e.downcast_ref::<planner::Error>()
    else {
        return e;
    };
    let fewer = match (&args.scale, args.ranks) {
        (Some(_), _) => "smaller --scale points".to_string(),
        (None, Some(r)) => format!("fewer than --ranks {r}"),
        (None, None) => format!(
            "part of the job with --ranks N below {ranks} (by default every GPU of the plan is a rank)"
        ),
    };
    let text = format!(
        "{e}; nothing was simulated. Estimate it with --method closed-form (no schedule is built), or simulate {fewer}, or smaller --size (a pipelined tree sends one chunk per step, more for larger messages)"
    );
    BadInput(text).into()
}

fn notes_to_stderr(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

fn print_steps(args: &SimulateArgs, cfg: &Config, outcome: &Simulated) -> Result<ExitCode> {
    let schedules = report::schedules(outcome, args.ranks, &cfg.params, &cfg.options)?;
    match args.format {
        SimFormat::Json => {
            notes_to_stderr(&outcome.notes);
            print_json(&schedules)?;
        }
        SimFormat::Csv => {
            notes_to_stderr(&outcome.notes);
            print(&report::steps_csv(&schedules))?;
        }
        SimFormat::Table => {
            let mut out = String::new();
            for s in &schedules {
                out.push_str(&report::steps_table(s));
                out.push('\n');
            }
            for n in &outcome.notes {
                let _ = writeln!(out, "Note: {n}.");
            }
            print(&out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
