//! `planner iteration`: the training-iteration what-if on a plan.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::Shorthand;
use planner::estimate::plot::PlotFormat;
use planner::estimate::{Algorithm, Method, Options, Params};
use planner::iteration::{self, Compute, Model, Setup, format, profiles};
use planner::plan::Topology;

use crate::Format;
use crate::io::{
    BadInput, display, link_speed, load_plan, print, print_json, read, shorthand_source,
};
use crate::output;

#[derive(Debug, Args)]
pub struct IterationArgs {
    /// Plan JSON (or TOML) written by `planner design --out`.
    #[arg(required_unless_present_any = ["bigraph", "fat_tree"])]
    plan: Option<PathBuf>,
    /// No plan file: an M x N BiGraph of identical servers, e.g. 8x32.
    #[arg(long, value_name = "MxN", conflicts_with_all = ["plan", "fat_tree"])]
    bigraph: Option<String>,
    /// No plan file: a fat-tree, e.g. `tiers=2,sub-nodes=256,ports=32`.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["plan", "bigraph"])]
    fat_tree: Option<String>,
    /// With --bigraph or --fat-tree: NIC and switch port speed. Fractional
    /// speeds (9.33) are simulated exactly; the plan carries them rounded
    /// up to whole Gbps.
    #[arg(long, default_value_t = 100.0, value_name = "GBPS")]
    link_gbps: f64,
    /// resnet50, vgg16, vgg19, googlenet, googlenet-aux, zfnet,
    /// bert-base, transformer-base, gpt2-small, llama2-7b, llama2-70b, or
    /// a model file (.toml or .csv, see docs/iteration.md).
    #[arg(long)]
    model: String,
    /// Ranks in the job: a count (default: every sub-node, or every GPU
    /// when NICs are shared or NVLink domains given), or a sweep
    /// `8..1024` (doubling) or `64,256`.
    #[arg(long)]
    ranks: Option<String>,
    /// Allreduce algorithms, comma-separated (default: hdrm on a BiGraph,
    /// ring on a fat-tree; hdrm,ring with --compare-topologies).
    #[arg(long)]
    algorithm: Option<String>,
    /// Also build the other topology (a fat-tree for a BiGraph, a BiGraph
    /// for a fat-tree) for the same sub-nodes and link speed, and run
    /// every algorithm on every topology it runs on.
    #[arg(long)]
    compare_topologies: bool,
    /// Samples per GPU per iteration (default 32; scales measured times
    /// from the batch their file gives).
    #[arg(long)]
    batch: Option<u32>,
    /// Sustained throughput of one GPU, TFLOPS. Default: the dense
    /// BF16/FP16 peak of the GPU model the plan's servers name (from the
    /// inventory's `[[server.gpu]] model`; the table and its sources are
    /// in docs/iteration.md, "GPU models"); required when the plan names
    /// none or one the table does not know (shorthands, older plans).
    #[arg(long)]
    gpu_tflops: Option<f64>,
    /// Bytes a gradient value takes (4 for FP32, 2 for FP16).
    #[arg(long, default_value_t = 4)]
    gradient_bytes: u32,
    /// How allreduce times are estimated for the fit: event (the
    /// event-driven flow-level simulator, the default: it models flows
    /// sharing links and pipelined steps), closed-form (instant, but 5-50 %
    /// off for most algorithms where flows share links or trees pipeline:
    /// docs/iteration.md, "Which estimate"),
    /// fast or packet (packet-level, docs/packet-sim.md: every size of the
    /// fit, 4 KiB to the model's gradients, is simulated packet by packet,
    /// seconds to minutes per algorithm on large plans).
    #[arg(long, default_value = "event")]
    method: String,
    /// The allreduce cost `a + b·M` of MG-WFBP eq. 9 instead of the one
    /// fitted to the plan: `a=633.64,b=0.0014` (a in µs, b in µs per byte
    /// of gradients). One rank count; the plan only names the design.
    #[arg(long, value_name = "a=US,b=US_PER_BYTE")]
    comm: Option<String>,
    /// GoogleNet with its two auxiliary classifiers (13.4 M parameters,
    /// as trained and as MG-WFBP counts it); only with --model googlenet.
    #[arg(long)]
    aux_heads: bool,
    /// Cost parameter `name=value` (as `planner simulate --param`). May
    /// repeat.
    #[arg(long, value_name = "NAME=VALUE")]
    param: Vec<String>,
    /// Write the timeline (or, for a sweep, the scaling efficiency) here:
    /// FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn load_model(spec: &str) -> Result<Model> {
    if let Some(m) = Model::built_in(spec) {
        return Ok(m);
    }
    let path = Path::new(spec);
    if !path.exists() {
        return Err(BadInput(format!(
            "--model: `{spec}` is neither a built-in model ({}) nor a file",
            profiles::NAMES.join(", ")
        ))
        .into());
    }
    let text = read(path)?;
    let csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    Ok(format::parse(&text, &display(path), csv)?)
}

fn load_source(args: &IterationArgs) -> Result<CheckedPlan> {
    let s = Shorthand {
        link_gbps: link_speed(args.link_gbps)?.0,
        ..Shorthand::default()
    };
    if let Some((inv, opts, _)) =
        shorthand_source(args.bigraph.as_deref(), args.fat_tree.as_deref(), &s)?
    {
        return Ok(design(&inv, &opts)?);
    }
    let path = args
        .plan
        .as_ref()
        .ok_or_else(|| BadInput("give a PLAN file, or --bigraph MxN, or --fat-tree SPEC".into()))?;
    load_plan(path)
}

pub fn run(args: IterationArgs) -> Result<ExitCode> {
    let plot_format = match &args.plot {
        Some(p) => Some(PlotFormat::from_path(&display(p))?),
        None => None,
    };
    let plot_target = match &args.plot {
        Some(p) => Some(output::file_target(p, "--plot", &["svg", "png"], "a plot")?),
        None => None,
    };
    let model = if args.aux_heads {
        match Model::built_in(&args.model) {
            Some(m) if m.name == "googlenet" => Model::built_in("googlenet-aux")
                .ok_or_else(|| BadInput("googlenet-aux is built in".into()))?,
            _ => {
                return Err(BadInput(format!(
                    "--aux-heads: `{}` has no auxiliary heads; it goes with --model googlenet",
                    args.model
                ))
                .into());
            }
        }
    } else {
        load_model(&args.model)?
    };
    let comm = match &args.comm {
        Some(text) => {
            if args.compare_topologies {
                return Err(BadInput(
                    "--comm gives the allreduce cost, so there is nothing to compare between topologies; drop --compare-topologies".into(),
                )
                .into());
            }
            Some(iteration::Linear::parse(text)?)
        }
        None => None,
    };
    let plan = load_source(&args)?;
    let algorithms = match &args.algorithm {
        Some(text) => Algorithm::parse_list(text)?,
        None if args.compare_topologies => vec![Algorithm::Hdrm, Algorithm::Ring],
        None if plan.topology == Topology::BiGraph => vec![Algorithm::Hdrm],
        None => vec![Algorithm::Ring],
    };
    let method: Method = args.method.parse()?;
    // The compute rate: given, else from the plan's GPU model; measured
    // layer times need none.
    let (gpu_tflops, gpu_source) = match args.gpu_tflops {
        Some(t) => (t, None),
        None if model.measured() => (iteration::DEFAULT_TFLOPS, None),
        None => {
            let (t, source) = iteration::plan_gpu_rate(&plan)?;
            (t, Some(source))
        }
    };
    let setup_for = |ranks: Option<usize>| -> Result<Setup> {
        Ok(Setup {
            ranks,
            algorithms: algorithms.clone(),
            compute: Compute {
                batch: args.batch,
                gpu_tflops,
                gradient_bytes: args.gradient_bytes,
                gpu_source: gpu_source.clone(),
            },
            params: {
                let mut p = Params::default().with_overrides(&args.param)?;
                // HiTopKComm counts elements of the model's gradient width.
                if args.param.iter().any(|x| x.contains("gradient_bytes")) {
                    return Err(BadInput(
                        "--param gradient_bytes: iteration takes the gradient width from --gradient-bytes".into(),
                    )
                    .into());
                }
                p.set("gradient_bytes", &args.gradient_bytes.to_string())
                    .map_err(|_| {
                        BadInput(format!(
                            "--gradient-bytes {}: use 1, 2 (FP16, BF16), 4 (FP32) or 8",
                            args.gradient_bytes
                        ))
                    })?;
                // A fractional --link-gbps of a shorthand runs the links at
                // the exact speed.
                if p.link_gbps.is_none() && (args.bigraph.is_some() || args.fat_tree.is_some()) {
                    p.link_gbps = link_speed(args.link_gbps)?.1;
                }
                p
            },
            options: Options {
                method,
                seeds: vec![0],
                threads: 1,
                routing: planner::estimate::Policy::Ecmp,
                sends: None,
            },
            comm,
        })
    };
    let plans = iteration::plans(plan, args.compare_topologies)?;
    let ranks = match &args.ranks {
        Some(text) => iteration::parse_ranks(text)?,
        None => Vec::new(),
    };
    let sweep = ranks.len() > 1 || args.ranks.as_deref().is_some_and(|r| r.contains(".."));
    let mut written = String::new();
    if sweep {
        let s = iteration::sweep(&model, &plans, &ranks, &setup_for(None)?)?;
        if let (Some(target), Some(f)) = (&plot_target, plot_format) {
            let bytes = iteration::plot::scaling(&s, f)?;
            output::commit(vec![output::stage_file(target, |w| {
                Ok(w.write_all(&bytes)?)
            })?])?;
            written = format!(
                "\nScaling efficiency plot written to {}\n",
                display(target.given())
            );
        }
        match args.format {
            Format::Json => print_json(&s)?,
            Format::Table => print(&(iteration::render_sweep(&s) + &written))?,
        }
    } else {
        let r = iteration::report(&model, &plans, &setup_for(ranks.first().copied())?)?;
        if let (Some(target), Some(f)) = (&plot_target, plot_format) {
            let bytes = iteration::plot::timeline(&r, f)?;
            output::commit(vec![output::stage_file(target, |w| {
                Ok(w.write_all(&bytes)?)
            })?])?;
            written = format!("\nTimeline written to {}\n", display(target.given()));
        }
        match args.format {
            Format::Json => print_json(&r)?,
            Format::Table => print(&(iteration::render_table(&r) + &written))?,
        }
    }
    Ok(ExitCode::SUCCESS)
}
