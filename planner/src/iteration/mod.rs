//! Training-iteration what-if: how long one S-SGD iteration of a model
//! takes on a plan, with each way of overlapping gradient communication.
//!
//! - [`profiles`]: ResNet-50, VGG-16, GoogleNet and BERT-base from their
//!   layer shapes;
//! - [`format`]: a user's own model as TOML or CSV;
//! - [`strategies`]: naive S-SGD, WFBP, single-bucket (SyncEASGD),
//!   MG-WFBP and C-Cube-style chaining on per-layer times and a linear
//!   allreduce cost;
//! - [`plot`]: the timeline of one iteration per strategy and the scaling
//!   efficiency of a sweep, as SVG or PNG bytes;
//! - `model.rs` the model and the GPU rate, `fit.rs` the allreduce cost
//!   fitted to a plan, `render.rs` the text tables; this file the report
//!   and the sweep that tie them together.
//!
//! # The model
//!
//! A model is its learnable layers, input side first, each with its
//! parameters and its forward and backward work: FLOPs per sample, turned
//! into time at a stated GPU throughput and batch, or times measured at a
//! stated batch. Gradients are `gradient_bytes` (4, FP32) a parameter.
//!
//! The allreduce of `M` bytes costs `T_ar(M) = a + b·M` (MG-WFBP eq. 9).
//! `a` and `b` are fitted, weighted by relative error, to the estimates of
//! [`crate::estimate`] for the chosen algorithm on the plan (closed form by
//! default, or the simulator) at every power of two from 4 KiB to the
//! model's gradient size; ring and halving-doubling are linear in `M`, so
//! their fits are exact, and the pipelined trees' square-root term is
//! folded into the fit (its worst relative error is reported).
//!
//! With `t_f + t_b` the computation of one iteration on one GPU, an
//! iteration takes `t_iter`, the exposed communication is
//! `t_iter − (t_f + t_b)`, the speedup over one GPU is
//! `S(N) = N (t_f + t_b) / t_iter` (weak scaling, MG-WFBP eq. 4) and the
//! scaling efficiency `S(N) / N`.
//!
//! # Strategies
//!
//! | name | communication |
//! |---|---|
//! | `naive` | every layer's allreduce after the backward pass (eq. 3) |
//! | `wfbp` | every layer's allreduce as soon as its gradients are ready (eq. 6–8) |
//! | `single-bucket` | one allreduce of everything after the backward pass (SyncEASGD) |
//! | `mg-wfbp` | the merged-gradient buckets that minimise the iteration, overlapped as WFBP |
//! | `c-cube` | after the backward pass, in forward order, with the next forward pass chained layer by layer (C-Cube III-D) |
//!
//! MG-WFBP's Algorithm 1 (the merge rule of Theorem 1, eq. 27) is greedy
//! and not always optimal: with `t_f = 0`, backward times 2, 1 and 0 for
//! layers 1 to 3, one parameter each, `a = 2` and `b = 1`, it merges layer
//! 3 into 2 (8 time units) where sending layer 3 alone and merging 2 into 1
//! takes 7. Theorem 1's proof compares only the finish of layer l − 1's
//! own allreduce, which is not what counts once l − 1 is merged further.
//! `mg-wfbp` therefore uses an exact dynamic programme
//! ([`strategies::optimal_groups`]) and reports Algorithm 1's iteration
//! beside it.

mod fit;
pub mod format;
mod model;
#[cfg(feature = "plot")]
pub mod plot;
pub mod profiles;
mod render;
pub mod strategies;

use serde::{Serialize, Serializer};

pub use fit::{Fit, fit_allreduce, fit_linear, given_allreduce, in_order};
pub use model::{
    Compute, DEFAULT_BATCH, DEFAULT_TFLOPS, Layer, MIN_TFLOPS, Model, Work, plan_gpu_rate,
};
pub use render::{render_sweep, render_table};
pub use strategies::{Linear, Schedule, Span, Timing};

use crate::checked::CheckedPlan;
use crate::design;
use crate::error::{Error, Result};
use crate::estimate::{Algorithm, Options, Params};
use crate::plan::Topology;

/// A way of scheduling gradient communication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// Allreduce layer by layer after the backward pass.
    Naive,
    /// Wait-free backpropagation, layer by layer.
    Wfbp,
    /// One allreduce after the backward pass (SyncEASGD).
    SingleBucket,
    /// Merged-gradient WFBP, optimal buckets.
    MgWfbp,
    /// C-Cube-style chaining with the next forward pass.
    CCube,
}

impl Strategy {
    /// Every strategy, in the order of the tables.
    pub const ALL: [Strategy; 5] = [
        Strategy::Naive,
        Strategy::Wfbp,
        Strategy::SingleBucket,
        Strategy::MgWfbp,
        Strategy::CCube,
    ];

    /// The name in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::Wfbp => "wfbp",
            Strategy::SingleBucket => "single-bucket",
            Strategy::MgWfbp => "mg-wfbp",
            Strategy::CCube => "c-cube",
        }
    }

    /// The schedule of this strategy.
    pub fn schedule(self, t: &Timing, cost: &Linear, in_order: bool) -> Schedule {
        match self {
            Strategy::Naive => strategies::naive(t, cost),
            Strategy::Wfbp => strategies::wfbp(t, cost),
            Strategy::SingleBucket => strategies::single_bucket(t, cost),
            Strategy::MgWfbp => strategies::mg_wfbp(t, cost),
            Strategy::CCube => strategies::c_cube(t, cost, in_order),
        }
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Ranks (default: every sub-node of the first plan).
    pub ranks: Option<usize>,
    /// Allreduce algorithms, each on every plan it runs on.
    pub algorithms: Vec<Algorithm>,
    /// The GPU.
    pub compute: Compute,
    /// Cost parameters of the estimates.
    pub params: Params,
    /// Closed form or simulation.
    pub options: Options,
    /// The allreduce cost `a + b·M` to use instead of fitting one to the
    /// plan (MG-WFBP eq. 9 with the paper's measured a and b).
    pub comm: Option<Linear>,
}

/// One bucket of a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// The bucket's layer nearest the input (its last to be computed in
    /// the backward pass).
    pub first_layer: String,
    /// The bucket's layer nearest the output.
    pub last_layer: String,
    /// Layers in the bucket.
    pub layers: usize,
    /// Parameters.
    pub parameters: u64,
    /// Gradient bytes.
    pub bytes: u64,
    /// When the allreduce starts, ms (from the start of the forward pass;
    /// for `c-cube`, from the start of the backward pass).
    pub start_ms: f64,
    /// When it ends, ms.
    pub end_ms: f64,
}

/// The MG-WFBP plan as frameworks take it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frameworks {
    /// PyTorch DDP `bucket_cap_mb`: of the caps that fill buckets from the
    /// output side and close one at the cap, the one with the shortest
    /// iteration (MiB, as DDP counts).
    pub bucket_cap_mb: f64,
    /// The iteration with that cap, ms.
    pub cap_iteration_ms: f64,
    /// Horovod's `HOROVOD_FUSION_THRESHOLD`, bytes: the same cap.
    pub horovod_fusion_threshold_bytes: u64,
    /// The optimal buckets as lists of layer names, output side first
    /// (for Horovod's `groups` or a DDP communication hook).
    pub boundaries: Vec<Vec<String>>,
}

/// One strategy on one algorithm and plan: the JSON contract's `results`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `naive`, `wfbp`, `single-bucket`, `mg-wfbp` or `c-cube`.
    pub strategy: Strategy,
    /// The allreduce algorithm.
    pub algorithm: Algorithm,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The design in words.
    pub design: String,
    /// Ranks.
    pub ranks: usize,
    /// One iteration, ms.
    pub iteration_ms: f64,
    /// Communication not hidden by computation, ms.
    pub comm_exposed_ms: f64,
    /// Communication, hidden or not, ms.
    pub comm_total_ms: f64,
    /// `S(N)`: throughput over one GPU's.
    pub speedup: f64,
    /// `S(N) / N`.
    pub scaling_efficiency: f64,
    /// The allreduces in the order they run.
    pub buckets: Vec<Bucket>,
    /// `mg-wfbp`: the iteration with Algorithm 1's greedy merges, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm1_iteration_ms: Option<f64>,
    /// `mg-wfbp`: the bucket plan for frameworks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frameworks: Option<Frameworks>,
    /// The schedule behind the row (for the timeline plot).
    #[serde(skip)]
    pub schedule: Schedule,
}

/// The answer of `planner iteration` (the JSON contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The model's name.
    pub model: String,
    /// Its parameters.
    pub parameters: u64,
    /// Ranks.
    pub ranks: usize,
    /// Learnable layers.
    pub layers: usize,
    /// Samples per GPU (absent for measured times used as given).
    pub batch: Option<u32>,
    /// GPU throughput, TFLOPS (absent for measured times).
    pub gpu_tflops: Option<f64>,
    /// Where that throughput comes from, when the plan's GPU model gave
    /// it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_source: Option<String>,
    /// Gradient bytes of one iteration.
    pub gradient_bytes: u64,
    /// `t_f`, ms.
    pub forward_ms: f64,
    /// `t_b`, ms.
    pub backward_ms: f64,
    /// The fitted allreduce costs.
    pub fits: Vec<Fit>,
    /// One row per algorithm, plan and strategy.
    pub results: Vec<Row>,
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// The rows of one fitted cost.
fn rows(model: &Model, t: &Timing, fit: &Fit) -> Vec<Row> {
    let cost = fit.linear();
    let compute = t.compute();
    let n = fit.ranks as f64;
    Strategy::ALL
        .iter()
        .map(|&strategy| {
            let schedule = strategy.schedule(t, &cost, in_order(fit.algorithm));
            let iter = schedule.iteration_us;
            let eff = if iter > 0.0 { compute / iter } else { 1.0 };
            let buckets = schedule
                .buckets
                .iter()
                .map(|s| Bucket {
                    first_layer: model.layers[s.lo].name.clone(),
                    last_layer: model.layers[s.hi].name.clone(),
                    layers: s.hi - s.lo + 1,
                    parameters: model.layers[s.lo..=s.hi].iter().map(|l| l.parameters).sum(),
                    bytes: t.bytes_of(s.lo, s.hi),
                    start_ms: ms(s.start_us),
                    end_ms: ms(s.end_us),
                })
                .collect();
            let (algorithm1, frameworks) = if strategy == Strategy::MgWfbp {
                let greedy = strategies::algorithm1_groups(t, &cost);
                let g = strategies::run_groups(t, &cost, &greedy, 0.0);
                (
                    Some(ms(g.iteration_us)),
                    Some(frameworks(model, t, &cost, &schedule)),
                )
            } else {
                (None, None)
            };
            Row {
                strategy,
                algorithm: fit.algorithm,
                topology: fit.topology,
                design: fit.design.clone(),
                ranks: fit.ranks,
                iteration_ms: ms(iter),
                comm_exposed_ms: ms((iter - compute).max(0.0)),
                comm_total_ms: ms(schedule.comm_total()),
                speedup: n * eff,
                scaling_efficiency: eff,
                buckets,
                algorithm1_iteration_ms: algorithm1,
                frameworks,
                schedule,
            }
        })
        .collect()
}

/// The framework settings closest to the optimal buckets.
fn frameworks(model: &Model, t: &Timing, cost: &Linear, best: &Schedule) -> Frameworks {
    // Every cap that changes the buckets is the size of some run of
    // consecutive layers.
    let mut caps: Vec<u64> = Vec::new();
    for lo in 0..t.len() {
        let mut sum = 0;
        for hi in lo..t.len() {
            sum += t.bytes[hi];
            if sum > 0 {
                caps.push(sum);
            }
        }
    }
    caps.sort_unstable();
    caps.dedup();
    let run = |cap: u64| strategies::run_groups(t, cost, &strategies::cap_groups(t, cap), 0.0);
    let mut chosen = (f64::INFINITY, 0u64);
    for &cap in caps.iter().rev() {
        let it = run(cap).iteration_us;
        if it < chosen.0 - 1e-9 {
            chosen = (it, cap);
        }
    }
    // Two decimals of MiB, as a person types it, and the iteration that
    // value gives.
    let mib = ((chosen.1 as f64 / 1_048_576.0) * 100.0).round().max(1.0) / 100.0;
    let cap = (mib * 1_048_576.0).round() as u64;
    let boundaries = best
        .buckets
        .iter()
        .map(|s| {
            (s.lo..=s.hi)
                .rev()
                .map(|i| model.layers[i].name.clone())
                .collect()
        })
        .collect();
    Frameworks {
        bucket_cap_mb: mib,
        cap_iteration_ms: ms(run(cap).iteration_us),
        horovod_fusion_threshold_bytes: cap,
        boundaries,
    }
}

/// The plans to compare: `plan`, and its counterpart when `compare`.
pub fn plans(plan: CheckedPlan, compare: bool) -> Result<Vec<CheckedPlan>> {
    let mut out = vec![plan];
    if compare {
        let other = design::counterpart(&out[0])?;
        out.push(other);
    }
    Ok(out)
}

/// Fits every algorithm on every plan it runs on (HDRM on BiGraphs only
/// when there is more than one plan).
fn fits(plans: &[CheckedPlan], model_bytes: u64, ranks: usize, setup: &Setup) -> Result<Vec<Fit>> {
    let mut out = Vec::new();
    for plan in plans {
        for &a in &setup.algorithms {
            if plans.len() > 1 && !a.runs_on(plan.topology) {
                continue;
            }
            if let Some(cost) = setup.comm {
                out.push(given_allreduce(plan, a, ranks, cost));
                continue;
            }
            out.push(fit_allreduce(
                plan,
                a,
                ranks,
                model_bytes,
                &setup.params,
                &setup.options,
            )?);
        }
    }
    if out.is_empty() {
        return Err(Error::parameter(
            "algorithm",
            "no algorithm given runs on these plans; add ring",
        ));
    }
    Ok(out)
}

fn default_ranks(plans: &[CheckedPlan], setup: &Setup) -> usize {
    setup.ranks.unwrap_or_else(|| {
        plans
            .first()
            .map_or(1, |p| crate::estimate::default_ranks(p))
    })
}

/// The what-if of `model` on `plans` (see [`plans`]).
pub fn report(model: &Model, plans: &[CheckedPlan], setup: &Setup) -> Result<Report> {
    let t = model.timing(&setup.compute)?;
    let total: u64 = t.bytes.iter().sum();
    let ranks = default_ranks(plans, setup);
    let fits = fits(plans, total, ranks, setup)?;
    let results = fits.iter().flat_map(|f| rows(model, &t, f)).collect();
    let measured = model.measured();
    Ok(Report {
        model: model.name.clone(),
        parameters: model.parameters(),
        ranks,
        layers: model.layers.len(),
        batch: if measured {
            setup.compute.batch.or(model.batch)
        } else {
            Some(setup.compute.batch.unwrap_or(DEFAULT_BATCH))
        },
        gpu_tflops: (!measured).then_some(setup.compute.gpu_tflops),
        gpu_source: setup.compute.gpu_source.clone().filter(|_| !measured),
        gradient_bytes: total,
        forward_ms: ms(t.forward_total()),
        backward_ms: ms(t.backward_total()),
        fits,
        results,
    })
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// Ranks.
    pub ranks: usize,
    /// The allreduce algorithm.
    pub algorithm: Algorithm,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The strategy.
    pub strategy: Strategy,
    /// One iteration, ms.
    pub iteration_ms: f64,
    /// Exposed communication, ms.
    pub comm_exposed_ms: f64,
    /// `S(N)`.
    pub speedup: f64,
    /// `S(N) / N`.
    pub scaling_efficiency: f64,
}

/// A sweep over rank counts (the JSON of `--ranks A..B`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The model's name.
    pub model: String,
    /// Its parameters.
    pub parameters: u64,
    /// The rank counts.
    pub ranks: Vec<usize>,
    /// Where the GPU throughput comes from, when the plan's GPU model
    /// gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_source: Option<String>,
    /// Every point.
    pub results: Vec<SweepRow>,
}

/// The scaling efficiency of every strategy, algorithm and plan at each
/// rank count.
pub fn sweep(
    model: &Model,
    plans: &[CheckedPlan],
    ranks: &[usize],
    setup: &Setup,
) -> Result<Sweep> {
    if setup.comm.is_some() && ranks.len() > 1 {
        return Err(Error::parameter(
            "comm",
            "a + b·M holds for one rank count (a and b grow with it), and the sweep has several; give one rank count",
        ));
    }
    let t = model.timing(&setup.compute)?;
    let total: u64 = t.bytes.iter().sum();
    let mut results = Vec::new();
    for &r in ranks {
        for fit in fits(plans, total, r, setup)? {
            for row in rows(model, &t, &fit) {
                results.push(SweepRow {
                    ranks: r,
                    algorithm: row.algorithm,
                    topology: row.topology,
                    strategy: row.strategy,
                    iteration_ms: row.iteration_ms,
                    comm_exposed_ms: row.comm_exposed_ms,
                    speedup: row.speedup,
                    scaling_efficiency: row.scaling_efficiency,
                });
            }
        }
    }
    Ok(Sweep {
        model: model.name.clone(),
        parameters: model.parameters(),
        ranks: ranks.to_vec(),
        gpu_source: setup
            .compute
            .gpu_source
            .clone()
            .filter(|_| !model.measured()),
        results,
    })
}

/// Parses `--ranks`: one count, `FROM..TO` (doubling) or a list.
pub fn parse_ranks(text: &str) -> Result<Vec<usize>> {
    crate::text::parse_counts(text, 1).ok_or_else(|| {
        Error::parameter(
            "ranks",
            format!("`{text}` is not a rank count or range; write e.g. 64, 8..1024 or 64,256"),
        )
    })
}

#[cfg(test)]
mod tests;
