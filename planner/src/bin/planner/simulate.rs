//! `planner simulate`: allreduce time on a plan (EFLOPS Fig. 12), or on
//! BiGraph and fat-tree plans built per node count (Fig. 16), by the
//! event-driven simulator, the step-synchronous mode or the closed forms.
//!
//! The command is glue: it turns the flags into plans, algorithms, sizes,
//! parameters and options, calls `planner::estimate`, and prints.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;

use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::Shorthand;
use planner::estimate::plot::{self, PlotFormat};
use planner::estimate::{
    self, Algorithm, Estimate, Method, Options, PACKET_PARAMS, PARAMS, PacketRun, PacketStep,
    Params, Policy, Row, ScaleSpec, StepSummary, Turnaround, format_size,
};
use planner::plan::Topology;
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
        progress: !args.quiet && args.format == SimFormat::Table,
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
        if matches!(e.algorithm, Algorithm::Hd | Algorithm::Hdrm) && !counts.contains(&e.ranks) {
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

/// What the command computed, ready to print.
struct Outcome {
    scale: bool,
    plans: Vec<CheckedPlan>,
    /// How tables and notes name each plan (see [`plan_labels`]).
    labels: Vec<String>,
    /// Every estimate with the index of its plan.
    estimates: Vec<(usize, Estimate)>,
    notes: Vec<String>,
}

/// Simulates every plan; with the estimates that finished, the error of
/// the first job that failed (the rest are not started). What the send
/// limit refuses is refused before anything runs.
fn run_sizes(args: &SimulateArgs, cfg: &Config) -> Result<(Outcome, Option<planner::Error>)> {
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
    let mut progress = Progress::new(cfg.progress, "simulating", "estimates");
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
        Outcome {
            scale: false,
            plans,
            labels,
            estimates,
            notes,
        },
        failed,
    ))
}

fn run_scale(args: &SimulateArgs, cfg: &Config, nodes_text: &str) -> Result<Outcome> {
    let nodes = estimate::parse_nodes(nodes_text)?;
    let spec = ScaleSpec {
        link_gbps: scale_link_gbps(args)?,
        fat_tree_ports: args.fat_tree_ports,
        ..ScaleSpec::default()
    };
    let plans = estimate::scale_plans(&nodes, &spec)?;
    let labels: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
    let (per_plan, notes) = plan_algorithms(&plans, &labels, cfg, Some("the fat-tree plans"))?;
    let mut progress = Progress::new(cfg.progress, "simulating", "estimates");
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
    Ok(Outcome {
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
    outcome: &Outcome,
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
            let mut text = render_table(outcome, cfg);
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

/// The send limit's refusal with what the user can do about it, in the
/// command's flags: the closed form, fewer ranks (given or not), smaller
/// sizes or scale points. Other errors pass unchanged.
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

/// A JSON row: the contract's fields, and the seed range when more than
/// one seed was simulated.
#[derive(Serialize)]
struct JsonRow {
    #[serde(flatten)]
    row: Row,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_min_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_max_us: Option<f64>,
}

impl JsonRow {
    fn of(e: &Estimate) -> Self {
        let range = e.seeds > 1;
        Self {
            row: e.row(),
            time_min_us: range.then_some(e.time_min_us),
            time_max_us: range.then_some(e.time_max_us),
        }
    }
}

fn method_words(m: Method) -> &'static str {
    match m {
        Method::Event => "event-driven (max-min fair flows)",
        Method::Fast => "step-synchronous (--fast, for screening)",
        Method::ClosedForm => "closed form",
        Method::Packet => "packet-level (queues, PFC, ECN, DCQCN)",
    }
}

/// Aligned columns: the first row is the header, the first `left` columns
/// left-aligned, the rest right-aligned.
fn align(rows: &[Vec<String>], left: usize) -> String {
    let Some((head, body)) = rows.split_first() else {
        return String::new();
    };
    let right: Vec<usize> = (left..head.len()).collect();
    let mut t = planner::text::Table::new(head.iter().cloned()).right(&right);
    for r in body {
        t.row(r.iter().cloned());
    }
    t.render()
}

/// One table: rows keyed by `key`, a group of columns per algorithm.
fn grid(
    title: &str,
    row_head: &str,
    keys: &[(String, Vec<Option<&Estimate>>)],
    algorithms: &[Algorithm],
    method: Method,
) -> String {
    let seeds = keys
        .iter()
        .flat_map(|(_, es)| es.iter().flatten())
        .any(|e| e.seeds > 1);
    let closed = method != Method::ClosedForm;
    let mut per_alg = vec!["time µs".to_string()];
    if seeds {
        per_alg.push("min..max µs".to_string());
    }
    if closed {
        per_alg.push("closed µs".to_string());
    }
    per_alg.push("algbw Gbps".to_string());
    let mut head = vec![row_head.to_string()];
    let mut group = vec![String::new()];
    for a in algorithms {
        for (k, h) in per_alg.iter().enumerate() {
            head.push(h.clone());
            group.push(if k + 1 == per_alg.len() {
                a.as_str().to_string()
            } else {
                String::new()
            });
        }
    }
    let mut rows = vec![group, head];
    for (key, es) in keys {
        let mut r = vec![key.clone()];
        for e in es {
            match e {
                Some(e) => {
                    r.push(format!("{:.1}", e.time_us));
                    if seeds {
                        r.push(format!("{:.1}..{:.1}", e.time_min_us, e.time_max_us));
                    }
                    if closed {
                        r.push(format!("{:.1}", e.closed_form_us));
                    }
                    r.push(format!("{:.2}", e.algbw_gbps));
                }
                None => r.extend(per_alg.iter().map(|_| "-".to_string())),
            }
        }
        rows.push(r);
    }
    format!("{title}\n{}", align(&rows, 1))
}

fn render_table(outcome: &Outcome, cfg: &Config) -> String {
    let method = cfg.options.method;
    let mut out = String::new();
    let found = |plan: Option<usize>, a: Algorithm, pred: &dyn Fn(&Estimate) -> bool| {
        outcome
            .estimates
            .iter()
            .find(|(i, e)| plan.is_none_or(|p| p == *i) && e.algorithm == a && pred(e))
            .map(|(_, e)| e)
    };
    if outcome.scale {
        for t in [Topology::BiGraph, Topology::FatTree] {
            let algs: Vec<Algorithm> = cfg
                .algorithms
                .iter()
                .copied()
                .filter(|a| {
                    outcome
                        .estimates
                        .iter()
                        .any(|(_, e)| e.topology == t && e.algorithm == *a)
                })
                .collect();
            if algs.is_empty() {
                continue;
            }
            for &size in &cfg.sizes {
                let keys: Vec<(String, Vec<Option<&Estimate>>)> = outcome
                    .plans
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.topology == t)
                    .map(|(i, p)| {
                        let es = algs
                            .iter()
                            .map(|&a| found(Some(i), a, &|e| e.size_bytes == size))
                            .collect();
                        (format!("{} {}", p.sub_node_list.len(), p.describe()), es)
                    })
                    .collect();
                let name = match t {
                    Topology::BiGraph => "BiGraph",
                    Topology::FatTree => "Fat-tree",
                    Topology::RailOptimized => "Rail-optimized",
                    Topology::Hpn => "HPN",
                };
                out.push_str(&grid(
                    &format!("{name}, {} messages:", format_size(size)),
                    "sub-nodes",
                    &keys,
                    &algs,
                    method,
                ));
                out.push('\n');
            }
        }
    } else {
        for i in 0..outcome.plans.len() {
            let mine: Vec<&Estimate> = outcome
                .estimates
                .iter()
                .filter(|(p, _)| *p == i)
                .map(|(_, e)| e)
                .collect();
            let Some(first) = mine.first() else { continue };
            let algs: Vec<Algorithm> = cfg
                .algorithms
                .iter()
                .copied()
                .filter(|a| mine.iter().any(|e| e.algorithm == *a))
                .collect();
            let keys: Vec<(String, Vec<Option<&Estimate>>)> = cfg
                .sizes
                .iter()
                .map(|&size| {
                    let es = algs
                        .iter()
                        .map(|&a| found(Some(i), a, &|e| e.size_bytes == size))
                        .collect();
                    (format_size(size), es)
                })
                .collect();
            out.push_str(&grid(
                &format!(
                    "{} ({}), {} rank{}:",
                    outcome.labels[i],
                    first.design,
                    first.ranks,
                    if first.ranks == 1 { "" } else { "s" }
                ),
                "size",
                &keys,
                &algs,
                method,
            ));
            out.push('\n');
        }
    }
    let seeds = cfg.options.seeds.len();
    let _ = write!(out, "Method: {}", method_words(method));
    if method != Method::ClosedForm && cfg.options.routing != Policy::Ecmp {
        let _ = write!(out, ", routing {}", cfg.options.routing.describe());
        out.push_str("; closed µs: the closed-form model");
    } else if method != Method::ClosedForm {
        if seeds > 1 {
            let _ = write!(out, ", median of ECMP seeds 0..{}", seeds - 1);
        } else {
            out.push_str(", ECMP seed 0");
        }
        out.push_str("; closed µs: the closed-form model");
    }
    out.push_str(".\n");
    out
}

/// The schedule behind one estimate.
#[derive(Serialize)]
struct Schedule<'a> {
    algorithm: Algorithm,
    topology: Topology,
    plan: &'a str,
    design: &'a str,
    ranks: usize,
    size_bytes: u64,
    routing: Policy,
    seed: u64,
    /// The estimate's time (its method), µs.
    time_us: f64,
    method: Method,
    /// The sum of the step times below (step-synchronous), µs.
    steps_time_us: f64,
    steps: Vec<StepSummary>,
    /// The trees' gradient turnaround: event-driven for the event-driven
    /// method, step-synchronous otherwise (its `timeline` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    turnaround: Option<Turnaround>,
    /// With --method packet: the packet-level run's totals and per-step
    /// figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    packet: Option<PacketRun>,
}

fn print_steps(args: &SimulateArgs, cfg: &Config, outcome: &Outcome) -> Result<ExitCode> {
    let seed = cfg.options.seeds.first().copied().unwrap_or(0);
    let mut schedules = Vec::new();
    for (i, e) in &outcome.estimates {
        let plan = &outcome.plans[*i];
        let ranks = if outcome.scale { None } else { args.ranks };
        let (steps, turnaround) = estimate::steps_and_turnaround(
            plan,
            e.algorithm,
            ranks,
            e.size_bytes,
            &cfg.params,
            seed,
            cfg.options.routing,
            e.method,
        )?;
        let steps_time_us = steps.iter().map(|s| s.time_us).sum();
        let packet = match e.method {
            Method::Packet => Some(estimate::packet_steps(
                plan,
                e.algorithm,
                ranks,
                e.size_bytes,
                &cfg.params,
                seed,
                cfg.options.routing,
            )?),
            _ => None,
        };
        schedules.push(Schedule {
            algorithm: e.algorithm,
            topology: e.topology,
            plan: &plan.name,
            design: &e.design,
            ranks: e.ranks,
            size_bytes: e.size_bytes,
            routing: cfg.options.routing,
            seed,
            time_us: e.time_us,
            method: e.method,
            steps_time_us,
            steps,
            turnaround,
            packet,
        });
    }
    match args.format {
        SimFormat::Json => {
            notes_to_stderr(&outcome.notes);
            print_json(&schedules)?;
        }
        SimFormat::Csv => {
            notes_to_stderr(&outcome.notes);
            // The packet-level columns come after the others, and only
            // with --method packet.
            let packet = schedules.iter().any(|s| s.packet.is_some());
            let mut out = String::from(
                "algorithm,topology,ranks,size_bytes,step,phase,level,flows,max_bytes,max_link_flows,max_latency_us,time_us",
            );
            if packet {
                out.push_str(",end_us,max_queue_bytes,pfc_pauses,paused_us,ecn_marks,cnps");
            }
            out.push('\n');
            for s in &schedules {
                for st in &s.steps {
                    let _ = write!(
                        out,
                        "{},{},{},{},{},{},{},{},{},{},{},{}",
                        s.algorithm.as_str(),
                        s.topology.as_str(),
                        s.ranks,
                        s.size_bytes,
                        st.step,
                        st.phase.as_str(),
                        st.level.map_or(String::new(), |l| l.to_string()),
                        st.flows,
                        st.max_bytes,
                        st.max_link_flows,
                        st.max_latency_us,
                        st.time_us
                    );
                    if let Some(p) = s.packet.as_ref().and_then(|p| p.steps.get(st.step)) {
                        let _ = write!(
                            out,
                            ",{},{},{},{},{},{}",
                            p.end_us,
                            p.max_queue_bytes,
                            p.pfc_pauses,
                            p.paused_us,
                            p.ecn_marks,
                            p.cnps
                        );
                    } else if packet {
                        out.push_str(",,,,,,");
                    }
                    out.push('\n');
                }
            }
            print(&out)?;
        }
        SimFormat::Table => {
            let mut out = String::new();
            for s in &schedules {
                out.push_str(&render_steps(s));
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

/// True when two steps' packet-level figures (other than when they
/// ended) are the same, or neither has any.
fn same_packet(a: Option<&PacketStep>, b: Option<&PacketStep>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.max_queue_bytes == b.max_queue_bytes
                && a.pfc_pauses == b.pfc_pauses
                && a.paused_us == b.paused_us
                && a.ecn_marks == b.ecn_marks
                && a.cnps == b.cnps
        }
        (None, None) => true,
        _ => false,
    }
}

/// A step table; runs of identical steps share a row.
fn render_steps(s: &Schedule<'_>) -> String {
    let mut out = format!(
        "{} on {} ({}), {} ranks, {}: ",
        s.algorithm.as_str(),
        s.plan,
        s.design,
        s.ranks,
        format_size(s.size_bytes),
    );
    let routed = if s.routing == Policy::Ecmp {
        format!("ECMP seed {}", s.seed)
    } else {
        format!("routing {}", s.routing)
    };
    let _ = match s.method {
        Method::Fast => writeln!(
            out,
            "{:.1} µs step-synchronous over {} steps ({routed})",
            s.time_us,
            s.steps.len(),
        ),
        m => writeln!(
            out,
            "{:.1} µs {}; the {} steps below take {:.1} µs step-synchronous ({routed})",
            s.time_us,
            match m {
                Method::Event => "event-driven",
                Method::Packet => "packet-level",
                _ => "closed form",
            },
            s.steps.len(),
            s.steps_time_us,
        ),
    };
    if let Some(p) = &s.packet {
        let t = &p.stats;
        let _ = writeln!(
            out,
            "Packet-level: {} packets; deepest queue {} B; {} PFC pauses, {:.1} µs paused in all; {} ECN marks, {} CNPs; {} packets over buffer_kib.",
            t.packets,
            t.max_queue_bytes,
            t.pfc_pauses,
            t.paused_us,
            t.ecn_marks,
            t.cnps,
            t.buffer_overruns
        );
    }
    let packet_of = |k: usize| s.packet.as_ref().and_then(|p| p.steps.get(k));
    let levels = s.steps.iter().any(|st| st.level.is_some());
    let mut head = vec!["steps", "phase"];
    if levels {
        head.push("level");
    }
    head.extend([
        "flows",
        "bytes/flow",
        "max flows/link",
        "latency µs",
        "µs/step",
        "total µs",
    ]);
    if s.packet.is_some() {
        head.extend([
            "packet end µs",
            "max queue B",
            "PFC pauses",
            "paused µs",
            "ECN marks",
            "CNPs",
        ]);
    }
    let mut rows = vec![head.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    let same = |a: &StepSummary, b: &StepSummary| {
        a.phase == b.phase
            && a.level == b.level
            && a.flows == b.flows
            && a.max_bytes == b.max_bytes
            && a.max_link_flows == b.max_link_flows
            && a.max_latency_us == b.max_latency_us
            && a.time_us == b.time_us
            && same_packet(packet_of(a.step), packet_of(b.step))
    };
    let mut k = 0;
    while k < s.steps.len() {
        let first = &s.steps[k];
        let mut end = k + 1;
        while end < s.steps.len() && same(first, &s.steps[end]) {
            end += 1;
        }
        let count = end - k;
        let label = if count == 1 {
            first.step.to_string()
        } else {
            format!("{}-{} (x{count})", first.step, s.steps[end - 1].step)
        };
        let mut r = vec![label, first.phase.as_str().to_string()];
        if levels {
            r.push(first.level.map_or("-".to_string(), |l| l.to_string()));
        }
        r.extend([
            first.flows.to_string(),
            first.max_bytes.to_string(),
            first.max_link_flows.to_string(),
            format!("{:.1}", first.max_latency_us),
            format!("{:.2}", first.time_us),
            format!("{:.1}", first.time_us * count as f64),
        ]);
        if s.packet.is_some() {
            // The run's figures are the same for every step of it (its
            // last step's end).
            let (p, last) = (packet_of(first.step), packet_of(s.steps[end - 1].step));
            r.extend(match (p, last) {
                (Some(p), Some(last)) => [
                    format!("{:.1}", last.end_us),
                    p.max_queue_bytes.to_string(),
                    p.pfc_pauses.to_string(),
                    format!("{:.1}", p.paused_us),
                    p.ecn_marks.to_string(),
                    p.cnps.to_string(),
                ],
                _ => std::array::from_fn(|_| "-".to_string()),
            });
        }
        rows.push(r);
        k = end;
    }
    let left = if levels { 3 } else { 2 };
    out.push_str(&align(&rows, left));
    if let Some(t) = &s.turnaround {
        let _ = writeln!(
            out,
            "Gradient turnaround (reduction start to broadcast at every rank, {}) over {} chunks: first {:.1} µs, mean {:.1} µs, max {:.1} µs",
            t.timeline.as_str(),
            t.chunks,
            t.first_us,
            t.mean_us,
            t.max_us
        );
    }
    out
}
