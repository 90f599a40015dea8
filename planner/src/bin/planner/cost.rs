//! `planner cost` and `planner purchase`: the catalog file in, bills of
//! materials out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use planner::cost::{self, Catalog, Request, Want};

use crate::Format;
use crate::io::{BadInput, display, load_plan, print, print_json, read};

/// Reads and checks a catalog.
pub fn load_catalog(path: &Path) -> Result<Catalog> {
    let name = display(path);
    let text = read(path)?;
    Ok(Catalog::from_toml(&text, &name)?)
}

#[derive(Debug, Args)]
pub struct CostArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    /// Parts catalog TOML (see examples/data/catalog-example.toml).
    #[arg(long)]
    catalog: PathBuf,
    /// GPUs per server, when servers carry more GPUs than NICs (a
    /// 1-NIC-per-server plan of 4-GPU servers: 4).
    #[arg(long, value_name = "N")]
    gpus_per_server: Option<u32>,
    /// The most power a rack may draw, in kW, for racks without their own
    /// `max_kw` in the inventory; a rack over its limit is flagged and the
    /// command exits 1.
    #[arg(long, value_name = "KW")]
    max_rack_kw: Option<f64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run(args: CostArgs) -> Result<ExitCode> {
    let catalog = load_catalog(&args.catalog)?;
    let plan = load_plan(&args.plan)?;
    if args.gpus_per_server == Some(0) {
        return Err(planner::Error::parameter("gpus-per-server", "give 1 or more").into());
    }
    if let Some(kw) = args.max_rack_kw
        && !(kw.is_finite() && kw > 0.0)
    {
        return Err(planner::Error::parameter(
            "max-rack-kw",
            format!("{kw} is not a power limit above 0; give the racks' limit in kW, e.g. 56"),
        )
        .into());
    }
    let mut c = cost::cost_plan(&plan, &catalog, args.gpus_per_server)?;
    if let Some(kw) = args.max_rack_kw {
        c.limit_racks(kw);
    }
    match args.format {
        Format::Table => print(&cost::render_plan_cost(&c, &catalog, &display(&args.plan)))?,
        Format::Json => print_json(&c)?,
    }
    // Racks over their limit are findings: the report is printed, each is
    // named on stderr, and the exit code says so.
    for r in c.power.racks.iter().filter(|r| r.over_kw().is_some()) {
        eprintln!(
            "rack {}: draws {}, over its {:.1} kW limit by {:.1} kW; move servers or switches to another rack (the inventory's `rack`) or raise its `max_kw`",
            r.rack,
            cost::power::kw(r.watts),
            r.max_kw.unwrap_or_default(),
            r.over_kw().unwrap_or_default()
        );
    }
    Ok(if c.power.over.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TopologyChoice {
    Bigraph,
    FatTree,
    RailOptimized,
    Hpn,
    Any,
}

#[derive(Debug, Args)]
pub struct PurchaseArgs {
    /// GPUs (sub-nodes, one NIC each) to build now; a list (`512,4096`)
    /// or a doubling range (`512..4096`) plans each count and ends with a
    /// summary.
    #[arg(long, value_name = "G")]
    gpus: String,
    /// Parts catalog TOML (see examples/data/catalog-example.toml).
    #[arg(long)]
    catalog: PathBuf,
    /// Topologies to consider; with `any` the runner-up is the cheapest of
    /// the other family (BiGraph against fat-tree and rail-optimized);
    /// rail-optimized needs a catalog server, whose GPUs are the rails.
    #[arg(long, value_enum, default_value_t = TopologyChoice::Any)]
    topology: TopologyChoice,
    /// Sub-nodes the fabric must have room for (default: --gpus).
    #[arg(long, value_name = "G2")]
    growth: Option<u64>,
    /// Most the design may cost, energy included.
    #[arg(long, value_name = "X")]
    budget: Option<f64>,
    /// Allow oversubscription up to R:1 (BiGraph M <= R N/2, leaf downlinks
    /// <= R uplinks); default 1, non-blocking.
    #[arg(long, value_name = "R", default_value_t = 1.0)]
    allow_oversubscription: f64,
    /// The least bisection bandwidth a design may have, in percent of full
    /// bisection (what half the GPUs send at line rate), with the fabric
    /// holding --growth GPUs: 100% asks for full bisection, 50% admits a
    /// BiGraph with M = N/2 (EFLOPS' largest), 0% sets no floor. With
    /// --allow-oversubscription above 1, give it too. [default: 100%]
    #[arg(long, value_name = "PERCENT")]
    min_bisection: Option<String>,
    /// Prove every single switch and cable failure of each design that
    /// could be chosen (on its plan, as `compare --failures`), report each
    /// one's worst, and exclude a design whose worst cuts the fabric or
    /// breaks the QoS proof.
    #[arg(long)]
    failures: bool,
    /// With --failures: also exclude a design one failure of which cuts
    /// off more than N sub-nodes (default: no limit).
    #[arg(long, value_name = "N")]
    max_failure_loss: Option<u64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn run_purchase(args: PurchaseArgs) -> Result<ExitCode> {
    let catalog = load_catalog(&args.catalog)?;
    if let Some(b) = args.budget
        && !(b.is_finite() && b > 0.0)
    {
        return Err(
            planner::Error::parameter("budget", format!("{b} is not an amount above 0")).into(),
        );
    }
    let counts = planner::text::parse_counts(&args.gpus, 1)
        .ok_or_else(|| {
            planner::Error::parameter(
                "gpus",
                format!(
                    "`{}` is not a GPU count; write e.g. 512, 512,4096 or 512..4096",
                    args.gpus
                ),
            )
        })?
        .into_iter()
        .map(|g| g as u64)
        .collect::<Vec<_>>();
    let min_bisection = match &args.min_bisection {
        Some(text) => parse_percent(text).ok_or_else(|| {
            planner::Error::parameter(
                "min-bisection",
                format!("`{text}` is not a percentage from 0% to 100%; write e.g. 100% or 50%"),
            )
        })?,
        // Oversubscribed designs are below full bisection: asking for them
        // under the default floor of 100 % would silently find none.
        None if args.allow_oversubscription > 1.0 => {
            return Err(BadInput(format!(
                "--allow-oversubscription {r} admits designs with 1/{r} of full bisection, but the default --min-bisection of 100% admits none of them; give --min-bisection too, e.g. --min-bisection {}%",
                (100.0 / args.allow_oversubscription).floor(),
                r = args.allow_oversubscription,
            ))
            .into());
        }
        None => 1.0,
    };
    if args.max_failure_loss.is_some() && !args.failures {
        return Err(BadInput(
            "--max-failure-loss limits what a proven failure may cut off; give --failures too"
                .to_string(),
        )
        .into());
    }
    let failures = args.failures.then_some(cost::FailureRule {
        max_sub_nodes_lost: args.max_failure_loss,
    });
    let many = counts.len() > 1;
    let mut plans = Vec::new();
    for gpus in counts {
        let req = Request {
            gpus,
            growth: args.growth,
            topology: match args.topology {
                TopologyChoice::Bigraph => Want::BiGraph,
                TopologyChoice::FatTree => Want::FatTree,
                TopologyChoice::RailOptimized => Want::RailOptimized,
                TopologyChoice::Hpn => Want::Hpn,
                TopologyChoice::Any => Want::Any,
            },
            budget: args.budget,
            oversubscription: args.allow_oversubscription,
            min_bisection,
            failures: failures.clone(),
        };
        let p = match cost::purchase(&catalog, &req) {
            Ok(p) => p,
            Err(e) if many => {
                return Err(anyhow::Error::new(e).context(format!("purchase for {gpus} GPUs")));
            }
            Err(e) => return Err(e.into()),
        };
        plans.push((req, p));
    }
    match (args.format, plans.as_slice()) {
        (Format::Table, [(req, p)]) => print(&cost::render_purchase(p, &catalog, req))?,
        (Format::Json, [(_, p)]) => print_json(p)?,
        (Format::Table, _) => {
            let mut text = String::new();
            for (req, p) in &plans {
                text.push_str(&cost::render_purchase(p, &catalog, req));
                text.push('\n');
            }
            let purchases: Vec<&cost::Purchase> = plans.iter().map(|(_, p)| p).collect();
            text.push_str(&cost::render_purchase_summary(&purchases));
            print(&text)?
        }
        (Format::Json, _) => {
            let purchases: Vec<_> = plans.into_iter().map(|(_, p)| p).collect();
            print_json(&purchases)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A percentage, `50%` or `50`, from 0 to 100, as a share (0.5).
fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().trim_end_matches('%').trim().parse().ok()?;
    (v.is_finite() && (0.0..=100.0).contains(&v)).then_some(v / 100.0)
}

/// The comparison, then its designs priced (`planner compare --catalog`).
pub fn run_compare(
    c: &planner::compare::Comparison,
    catalog: &Catalog,
    source: &str,
    format: Format,
) -> Result<()> {
    let costs = cost::cost_comparison(c, catalog);
    match format {
        Format::Table => {
            let mut text = planner::compare::render_table(c, source);
            text.push_str(&cost::render_comparison_costs(&costs, catalog));
            print(&text)
        }
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                #[serde(flatten)]
                comparison: &'a planner::compare::Comparison,
                costs: Vec<cost::CostEntry>,
            }
            print_json(&Out {
                comparison: c,
                costs,
            })
        }
    }
}
