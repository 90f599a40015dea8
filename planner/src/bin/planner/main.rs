//! The `planner` command: thin glue between the command line, files and
//! the planner library. Exit codes: 0 success, 2 bad input or a failed
//! check, 1 internal failure.

mod cost;
mod export;
mod failures;
mod io;
mod iteration;
mod output;
mod ranks;
mod render;
mod simulate;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use planner::design::shorthand::Shorthand;
use planner::design::{DesignOptions, design};
use planner::inventory::Inventory;
use planner::plan::Topology;
use planner::{compare, report, servers, validate};

use crate::io::{
    BadInput, display, leave, load_cabling, load_inventory, load_plan, print, print_json,
    read_plan_unchecked,
};

/// Plan topology-aware GPU clusters: check servers, design BiGraph and
/// fat-tree fabrics, compare them and validate cabling.
#[derive(Debug, Parser)]
#[command(name = "planner", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check the congestionless-server rules (EFLOPS IV-A): every GPU has a
    /// NIC under the same PCIe switch, spread evenly over sockets. Exits 2
    /// when a rule fails.
    CheckServers {
        /// Inventory TOML.
        inventory: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Design a BiGraph, fat-tree, rail-optimized or HPN fabric for an
    /// inventory (or a shorthand) and report it; --out saves the plan
    /// other commands read.
    Design(DesignArgs),
    /// BiGraph, fat-tree, rail-optimized and HPN side by side for the same
    /// sub-nodes and switch model.
    Compare {
        #[command(flatten)]
        source: SourceArgs,
        /// Fat-tree leaf oversubscription (1 = non-blocking, 3 = 3:1).
        #[arg(long, default_value_t = 1.0)]
        oversubscription: f64,
        /// Fat-tree tiers: 2 or 3 (default: 2 when it fits).
        #[arg(long)]
        tiers: Option<u8>,
        /// Parts catalog TOML: adds each design's bill of materials and
        /// cost per sub-node and per Gbps of bisection bandwidth.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Prove every single switch and cable failure of each design and
        /// show its worst (sub-nodes lost, fabric cut, QoS proof, best
        /// table on what is left); with --catalog the verdict weighs it.
        #[arg(long)]
        failures: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Write a plan in another form, chosen by --out's extension: JSON,
    /// TOML or the compact plan. The plan is read and checked as every
    /// command reads it, and the file written reads back to the same plan.
    Convert {
        /// Plan: JSON, TOML or compact, as `planner design --out` writes it.
        plan: PathBuf,
        /// Write the plan here: FILE.json (JSON), FILE.toml (TOML) or
        /// FILE.cplan (the compact plan); other extensions are refused.
        #[arg(long, value_name = "PLAN")]
        out: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Check a plan's invariants and, with --cabling, the as-built cabling
    /// against it. Exits 2 on any finding.
    Validate {
        /// Plan JSON (or TOML) written by `planner design --out`.
        plan: PathBuf,
        /// As-built cabling: CSV `switch,port,peer,peer_port[,speed]` or
        /// LLDP JSON (`lldpctl -f json`; the file name is the device name,
        /// or an object of device name to lldpctl output). May repeat.
        #[arg(long)]
        cabling: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Rank table for an allreduce on the plan: HDRM (EFLOPS Algorithm 1),
    /// or plain halving-doubling or ring in plan order.
    Ranks(ranks::RanksArgs),
    /// Route every connection of every allreduce step on the plan and report
    /// the busiest directed link per step, beside the plan-order figures.
    VerifyRanks(ranks::VerifyArgs),
    /// Allreduce time on plans (EFLOPS Fig. 12) or on BiGraphs and
    /// fat-trees per node count (--scale, Fig. 16): flow-level simulation,
    /// closed forms, schedules and plots.
    Simulate(simulate::SimulateArgs),
    /// Switch configurations (one file per physical switch) or, with
    /// --hosts, each server's NCCL/RoCE environment, written into --out.
    Render(render::RenderArgs),
    /// Prove a plan's lossless priorities cannot deadlock and both ends of
    /// every link agree; exits 2 with the cycle or the mismatches.
    CheckQos(render::CheckQosArgs),
    /// Every single switch or cable failure (or the ones given), proven:
    /// sub-nodes lost, switches cut apart, the QoS proof on what is left,
    /// the job's table and the best table on the failed fabric.
    Failures(failures::FailuresArgs),
    /// Scheduler exports from a plan: Kubernetes node labels, a Kueue
    /// Topology, Volcano HyperNodes or a Slurm topology.conf, each with what
    /// the tree translation loses.
    Export(export::ExportArgs),
    /// Bill of materials and TCO of a plan, priced from a parts catalog.
    Cost(cost::CostArgs),
    /// Cheapest BiGraph or fat-tree for a GPU count over a parts catalog
    /// (an integer program), with the runner-up and the binding constraints.
    Purchase(cost::PurchaseArgs),
    /// Training-iteration what-if on a plan: naive, WFBP, single-bucket,
    /// MG-WFBP and C-Cube chaining for a model, with the bucket plan.
    Iteration(iteration::IterationArgs),
    /// Print a plan's cable list (CSV for the people who cable the racks).
    Cables {
        /// Plan JSON (or TOML).
        plan: PathBuf,
        #[arg(long, value_enum, default_value_t = CableFormat::Csv)]
        format: CableFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// JSON for programs (documented in docs/).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CableFormat {
    /// Aligned text.
    Table,
    /// CSV that `validate --cabling` reads back.
    Csv,
    /// JSON.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RoutingArg {
    /// Static routes from the route model's forwarding tables.
    Static,
    /// eBGP on every inter-switch cable, one ASN per switch, BFD, ECMP.
    Bgp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TopologyArg {
    Bigraph,
    FatTree,
    RailOptimized,
    Hpn,
}

/// Where the sub-nodes and switches come from.
#[derive(Debug, Args)]
struct SourceArgs {
    /// Inventory TOML.
    #[arg(required_unless_present_any = ["bigraph", "fat_tree", "rail_optimized", "hpn"])]
    inventory: Option<PathBuf>,
    /// No inventory: an M x N BiGraph of identical servers and switches
    /// (M sub-nodes per switch, N switches), e.g. 16x64.
    #[arg(long, value_name = "MxN", conflicts_with_all = ["inventory", "fat_tree", "rail_optimized", "hpn"])]
    bigraph: Option<String>,
    /// No inventory: a fat-tree, e.g. `tiers=2,sub-nodes=1024,ports=64`,
    /// `tiers=2,sub-nodes=2048,ports=64,oversub=3` or `k=16` (3 tiers).
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["inventory", "bigraph", "rail_optimized", "hpn"])]
    fat_tree: Option<String>,
    /// No inventory: a rail-optimized fabric of servers with one NIC per
    /// rail, e.g. `sub-nodes=1024,rails=8,ports=64` or
    /// `sub-nodes=8192,rails=8,ports=128,oversub=2`.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["inventory", "bigraph", "fat_tree", "hpn"])]
    rail_optimized: Option<String>,
    /// No inventory: an HPN fabric (dual-plane, dual-ToR, rail-optimized)
    /// of servers with one dual-port NIC per rail, each port at
    /// --link-gbps, e.g. `sub-nodes=1024,rails=8,ports=128`.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["inventory", "bigraph", "fat_tree", "rail_optimized"])]
    hpn: Option<String>,
    /// Shorthands: NIC and switch port speed.
    #[arg(long, default_value_t = 100, value_name = "GBPS")]
    link_gbps: u32,
    /// Shorthands: ports per switch (default: the smallest power of two that
    /// fits).
    #[arg(long)]
    switch_ports: Option<u32>,
    /// Shorthands: sub-nodes per server (default 4, or 2 or 1 to divide
    /// evenly).
    #[arg(long)]
    server_sub_nodes: Option<usize>,
    /// Shorthands: one NVLink domain over every GPU of each server, as
    /// KIND:GBPS (each GPU's bandwidth into it, one direction), e.g.
    /// `nvswitch:3600` for H100-class servers (with `--server-sub-nodes 8`
    /// or `rails=8`); default none (GPUs talk through their NICs).
    #[arg(long, value_name = "KIND:GBPS", conflicts_with = "inventory")]
    nvlink: Option<String>,
}

#[derive(Debug, Args)]
struct DesignArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Topology to design from an inventory.
    #[arg(long, value_enum)]
    topology: Option<TopologyArg>,
    /// BiGraph: number of switches N (both parts).
    #[arg(long)]
    n: Option<usize>,
    /// BiGraph: sub-nodes per switch M.
    #[arg(long)]
    m: Option<usize>,
    /// Fat-tree: 2 (leaf-spine) or 3 (k-ary) tiers; default 2 when it fits.
    #[arg(long)]
    tiers: Option<u8>,
    /// Fat-tree and rail-optimized: leaf (rail switch) oversubscription
    /// (1 = non-blocking, 3 = 3:1).
    #[arg(long, default_value_t = 1.0)]
    oversubscription: f64,
    /// Fat-tree: use k ports of each switch for a 3-tier design.
    #[arg(long)]
    k: Option<u32>,
    /// How the switches route: over the inventory's `[routing] mode`
    /// (default static).
    #[arg(long, value_enum)]
    routing: Option<RoutingArg>,
    /// Write the plan here: FILE.json (JSON), FILE.toml (TOML) or
    /// FILE.cplan (the compact plan, read in milliseconds at 100,000
    /// sub-nodes; every command reads it); other extensions are refused. Written together with --cables or not at
    /// all.
    #[arg(long, value_name = "PLAN")]
    out: Option<PathBuf>,
    /// Write the cable list as CSV here (FILE.csv).
    #[arg(long, value_name = "CSV")]
    cables: Option<PathBuf>,
    /// Parts catalog TOML: the power of every rack from the catalog's
    /// watts, held against the racks' `max_kw`; a design that puts a rack
    /// over its limit is refused (docs/cost.md, "Power per rack").
    #[arg(long)]
    catalog: Option<PathBuf>,
    /// With --catalog: keep a design that puts racks over their `max_kw`,
    /// naming each on stderr, instead of refusing it.
    #[arg(long, requires = "catalog")]
    allow_over_power: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Input text in the chain (file names, values) never reaches
            // the terminal raw; the chain's own line breaks stay.
            eprintln!(
                "error: {}",
                planner::error::report(err.as_ref(), &<Cli as clap::CommandFactory>::command())
            );
            let bad = err.downcast_ref::<BadInput>().is_some()
                || err
                    .downcast_ref::<planner::Error>()
                    .is_some_and(planner::Error::is_bad_input);
            ExitCode::from(if bad { 2 } else { 1 })
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::CheckServers { inventory, format } => {
            let (inv, name) = load_inventory(&inventory)?;
            let check = servers::check_servers(&inv);
            match format {
                Format::Table => print(&servers::render_table(&check, &name))?,
                Format::Json => print_json(&check)?,
            }
            Ok(if check.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        Command::Design(args) => run_design(args),
        Command::Convert { plan, out, format } => run_convert(&plan, &out, format),
        Command::Compare {
            source,
            oversubscription,
            tiers,
            catalog,
            failures,
            format,
        } => {
            let catalog = catalog.as_deref().map(cost::load_catalog).transpose()?;
            let (inv, given, name) = load_source(&source)?;
            // A --fat-tree spec's tiers and oversubscription hold here as in
            // design: a spec that cannot be built as asked is refused alike.
            let from_spec = source.fat_tree.is_some();
            let opts = DesignOptions {
                topology: Topology::FatTree,
                tiers: tiers.or(given.tiers.filter(|_| from_spec)),
                oversubscription: if from_spec && oversubscription == 1.0 {
                    given.oversubscription
                } else {
                    oversubscription
                },
                ..DesignOptions::default()
            };
            let mut c = compare::compare(&inv, &opts);
            if failures {
                c.prove_failures()?;
            }
            if from_spec
                && let Some(e) = c
                    .designs
                    .iter()
                    .find(|d| d.topology == Topology::FatTree)
                    .and_then(|d| d.error.as_ref())
            {
                return Err(BadInput(format!("{name}: {e}")).into());
            }
            if let Some(catalog) = &catalog {
                cost::run_compare(&c, catalog, &name, format)?;
            } else {
                match format {
                    Format::Table => print(&compare::render_table(&c, &name))?,
                    Format::Json => print_json(&c)?,
                }
            }
            Ok(if c.any() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        Command::Validate {
            plan,
            cabling,
            format,
        } => {
            let plan_name = display(&plan);
            // The plan and the cabling files parse on two threads: on large
            // fabrics both take a while.
            let (p, observed) = std::thread::scope(|scope| {
                let cabling_files = scope.spawn(|| load_cabling(&cabling));
                let p = read_plan_unchecked(&plan);
                let observed = cabling_files
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("reading the cabling files failed")));
                (p, observed)
            });
            let p = p?;
            let observed = observed?;
            let v = if cabling.is_empty() {
                validate::validate_plan(&p)
            } else {
                let names: Vec<String> = cabling.iter().map(|f| display(f)).collect();
                validate::validate_cabling(&p, &observed, &names)
            };
            match format {
                Format::Table => print(&validate::render_table(&v, &plan_name))?,
                Format::Json => print_json(&v)?,
            }
            let ok = v.ok;
            // The process ends here ([`leave`]).
            leave((p, observed, v));
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        Command::Ranks(args) => ranks::run_ranks(args),
        Command::VerifyRanks(args) => ranks::run_verify(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Render(args) => render::run(args),
        Command::CheckQos(args) => render::run_check_qos(args),
        Command::Failures(args) => failures::run(args),
        Command::Export(args) => export::run(args),
        Command::Cost(args) => cost::run(args),
        Command::Purchase(args) => cost::run_purchase(args),
        Command::Iteration(args) => iteration::run(args),
        Command::Cables { plan, format } => {
            let p = load_plan(&plan)?;
            match format {
                CableFormat::Csv => print(&p.cables_csv())?,
                CableFormat::Table => print(&report::render_cables(&p))?,
                CableFormat::Json => print_json(&p.cable_rows())?,
            }
            // The process ends here ([`leave`]).
            leave(p);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn run_design(args: DesignArgs) -> Result<ExitCode> {
    // The outputs are checked before the design: a bad --out should not
    // cost a long design first.
    let out = args
        .out
        .as_deref()
        .map(|p| output::file_target(p, "--out", &PLAN_FORMS, "a plan"))
        .transpose()?;
    let cables = args
        .cables
        .as_deref()
        .map(|p| output::file_target(p, "--cables", &["csv"], "the cable list"))
        .transpose()?;
    if let (Some(o), Some(c)) = (&out, &cables)
        && output::same_file(o, c)
    {
        return Err(BadInput(format!(
            "--out {} and --cables {} name the same file; give each its own",
            display(o.given()),
            display(c.given())
        ))
        .into());
    }
    let (inv, mut opts, name) = load_source(&args.source)?;
    if let Some(t) = args.topology {
        let wanted = match t {
            TopologyArg::Bigraph => Topology::BiGraph,
            TopologyArg::FatTree => Topology::FatTree,
            TopologyArg::RailOptimized => Topology::RailOptimized,
            TopologyArg::Hpn => Topology::Hpn,
        };
        if args.source.inventory.is_none() && wanted != opts.topology {
            return Err(BadInput(format!(
                "--topology {} does not match the shorthand; use --bigraph for BiGraph, --fat-tree for fat-trees, --rail-optimized for rail-optimized fabrics and --hpn for HPN",
                wanted.as_str()
            ))
            .into());
        }
        opts.topology = wanted;
    }
    if args.n.is_some() {
        opts.n = args.n;
    }
    if args.m.is_some() {
        opts.m = args.m;
    }
    if args.tiers.is_some() {
        opts.tiers = args.tiers;
    }
    if args.k.is_some() {
        opts.k = args.k;
    }
    opts.routing = args.routing.map(|r| match r {
        RoutingArg::Static => planner::routing::RoutingMode::Static,
        RoutingArg::Bgp => planner::routing::RoutingMode::Bgp,
    });
    if (args.source.fat_tree.is_none()
        && args.source.rail_optimized.is_none()
        && args.source.hpn.is_none())
        || args.oversubscription != 1.0
    {
        opts.oversubscription = args.oversubscription;
    }
    let catalog = args
        .catalog
        .as_deref()
        .map(cost::load_catalog)
        .transpose()?;
    let plan = design(&inv, &opts)?;
    // The racks' power, from the catalog's watts: a rack over its limit
    // refuses the design before anything is written.
    let power = catalog
        .as_ref()
        .map(|c| planner::cost::check_rack_power(&plan, &inv, c, args.allow_over_power))
        .transpose()?;
    if let Some(p) = &power {
        for (racks, words) in p.over_groups() {
            eprintln!(
                "warning: {}: {}{words}; kept by --allow-over-power",
                planner::cost::power::name_racks(&racks),
                if racks.len() == 1 { "" } else { "each " }
            );
        }
    }
    // The plan and the cable list are written on two threads into
    // temporaries, then put in place together or not at all.
    let (saved, cables_saved) = std::thread::scope(|scope| {
        let cables = scope.spawn(|| {
            cables
                .as_ref()
                .map(|t| output::stage_file(t, |w| Ok(w.write_all(plan.cables_csv().as_bytes())?)))
                .transpose()
        });
        let saved = out.as_ref().map(|t| stage_plan(&plan, t)).transpose();
        let cables = cables
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("writing the cable list failed")));
        (saved, cables)
    });
    let staged: Vec<output::Staged> = [saved?, cables_saved?].into_iter().flatten().collect();
    output::commit(staged)?;
    match args.format {
        Format::Json => print(&plan.to_json()?)?,
        Format::Table => {
            let mut text = report::render_design(&plan, &name);
            match (&power, &catalog) {
                (Some(p), Some(c)) => text.push_str(&planner::cost::render_power_line(p, &c.name)),
                _ if plan.racks.iter().any(|r| r.max_kw.is_some()) => text.push_str(
                    "racks have power limits (max_kw) that were not checked: add --catalog to hold the design to them\n",
                ),
                _ => {}
            }
            text.push('\n');
            match &args.out {
                Some(out) => text.push_str(&format!("Plan written to {}\n", display(out))),
                None => text.push_str("Plan not saved: add --out plan.json to keep it for validate and later commands\n"),
            }
            if let Some(c) = &args.cables {
                text.push_str(&format!("Cable list written to {}\n", display(c)));
            }
            print(&text)?;
        }
    }
    // See `validate`: no point freeing what the process exit frees.
    std::mem::forget(plan);
    std::mem::forget(inv);
    Ok(ExitCode::SUCCESS)
}

/// The extensions a plan file may have, each its form.
const PLAN_FORMS: [&str; 3] = ["json", "toml", "cplan"];

/// Stages `plan` in the form `t`'s extension names ([`PLAN_FORMS`]; JSON
/// for `.json`).
fn stage_plan(plan: &planner::plan::Plan, t: &output::FileTarget) -> Result<output::Staged> {
    match plan_form(t.given()) {
        "toml" => {
            let text = plan.to_toml()?;
            output::stage_file(t, |w| Ok(w.write_all(text.as_bytes())?))
        }
        "cplan" => {
            let bytes = plan.to_compact()?;
            output::stage_file(t, |w| Ok(w.write_all(&bytes)?))
        }
        _ => output::stage_file(t, |w| Ok(plan.write_json(w)?)),
    }
}

/// The form of a plan file by its extension: `json`, `toml` or `cplan`.
fn plan_form(path: &Path) -> &'static str {
    PLAN_FORMS
        .into_iter()
        .find(|f| path.extension().is_some_and(|e| e.eq_ignore_ascii_case(f)))
        .unwrap_or("json")
}

/// `planner convert`: the checked plan written again in --out's form.
fn run_convert(plan: &Path, out: &Path, format: Format) -> Result<ExitCode> {
    let target = output::file_target(out, "--out", &PLAN_FORMS, "a plan")?;
    let p = load_plan(plan)?;
    let staged = stage_plan(&p, &target)?;
    output::commit(vec![staged])?;
    let form = match plan_form(out) {
        "cplan" => "compact",
        other => other,
    };
    let bytes = std::fs::metadata(out)
        .with_context(|| format!("reading back the size of {}", display(out)))?
        .len();
    match format {
        Format::Json => print_json(&serde_json::json!({
            "plan": p.name,
            "from": display(plan),
            "out": display(out),
            "form": form,
            "bytes": bytes,
        }))?,
        Format::Table => print(&format!(
            "Plan {} ({}) written to {} as {form}, {bytes} bytes\n",
            p.name,
            display(plan),
            display(out)
        ))?,
    }
    Ok(ExitCode::SUCCESS)
}

fn load_source(s: &SourceArgs) -> Result<(Inventory, DesignOptions, String)> {
    let sh = Shorthand {
        link_gbps: s.link_gbps,
        switch_ports: s.switch_ports,
        sub_nodes_per_server: s.server_sub_nodes,
        nvlink: s
            .nvlink
            .as_deref()
            .map(planner::design::shorthand::parse_nvlink)
            .transpose()?,
    };
    if let Some(spec) = &s.rail_optimized {
        let (inv, opts) = planner::design::shorthand::rail_optimized(spec, &sh)?;
        return Ok((inv, opts, format!("--rail-optimized {spec}")));
    }
    if let Some(spec) = &s.hpn {
        let (inv, opts) = planner::design::shorthand::hpn(spec, &sh)?;
        return Ok((inv, opts, format!("--hpn {spec}")));
    }
    if let Some(source) = io::shorthand_source(s.bigraph.as_deref(), s.fat_tree.as_deref(), &sh)? {
        return Ok(source);
    }
    let path = s.inventory.as_ref().ok_or_else(|| {
        BadInput(
            "give an INVENTORY file, or --bigraph MxN, --fat-tree SPEC, --rail-optimized SPEC or --hpn SPEC"
                .into(),
        )
    })?;
    let (inv, name) = load_inventory(path)?;
    Ok((inv, DesignOptions::default(), name))
}
