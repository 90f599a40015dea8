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
//!   efficiency of a sweep, as SVG or PNG bytes.
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

pub mod format;
#[cfg(feature = "plot")]
pub mod plot;
pub mod profiles;
pub mod strategies;

use serde::{Serialize, Serializer};

pub use strategies::{Linear, Schedule, Span, Timing};

use crate::checked::CheckedPlan;
use crate::design;
use crate::error::{Error, Result};
use crate::estimate::{self, Algorithm, Method, Options, Params};
use crate::plan::Topology;

/// How a layer's time is known.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// FLOPs of one sample.
    Flops {
        /// Forward FLOPs.
        forward: f64,
        /// Backward FLOPs.
        backward: f64,
    },
    /// Times measured at the model's batch.
    Measured {
        /// Forward time, µs.
        forward_us: f64,
        /// Backward time, µs.
        backward_us: f64,
    },
}

/// One learnable layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The layer's name.
    pub name: String,
    /// Learnable parameters.
    pub parameters: u64,
    /// Its forward and backward work.
    pub work: Work,
}

/// A model: its learnable layers, input side first.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The model's name.
    pub name: String,
    /// The batch measured times are for.
    pub batch: Option<u32>,
    /// The layers.
    pub layers: Vec<Layer>,
}

/// How fast a GPU computes and what it sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Compute {
    /// Samples per GPU per iteration (default 32; for measured times,
    /// scales them from the model's batch).
    pub batch: Option<u32>,
    /// Sustained throughput of one GPU, TFLOPS.
    pub gpu_tflops: f64,
    /// Bytes a gradient value takes (4 for FP32, 2 for FP16).
    pub gradient_bytes: u32,
    /// Where `gpu_tflops` comes from, when it was not given (see
    /// [`plan_gpu_rate`]); reports print it.
    pub gpu_source: Option<String>,
}

impl Default for Compute {
    fn default() -> Self {
        Self {
            batch: None,
            gpu_tflops: DEFAULT_TFLOPS,
            gradient_bytes: 4,
            gpu_source: None,
        }
    }
}

/// The compute rate of one GPU of `plan`, from the GPU model its servers
/// name ([`crate::plan::PlanServer::gpu_model`]) and the table of
/// [`crate::gpus`]: the dense BF16 peak, with a sentence saying which
/// model, figure and source it is. Servers of several known models give
/// the slowest (a data-parallel step waits for it). A plan whose servers
/// name no model, or one the table does not know, is refused: the rate
/// must then be given (`gpu-tflops`).
pub fn plan_gpu_rate(plan: &crate::plan::Plan) -> Result<(f64, String)> {
    let mut models: Vec<&str> = plan
        .servers
        .iter()
        .filter_map(|s| s.gpu_model.as_deref())
        .collect();
    models.sort_unstable();
    models.dedup();
    let table = crate::gpus::GPUS
        .iter()
        .map(|g| format!("{} {}", g.name, g.dense_tflops))
        .collect::<Vec<_>>()
        .join(", ");
    let give = format!(
        "give the sustained throughput of one GPU in TFLOPS (dense BF16 peaks of the GPU table: {table}; docs/iteration.md, \"GPU models\")"
    );
    if models.is_empty() || plan.servers.iter().any(|s| s.gpu_model.is_none()) {
        return Err(Error::parameter(
            "gpu-tflops",
            format!(
                "plan {}: not every server names one GPU model (a shorthand's servers, mixed GPUs in a server, or a plan written before plans kept the inventory's GPU model), so its compute rate is unknown; {give}",
                crate::names::escape(&plan.name)
            ),
        ));
    }
    let mut known = Vec::new();
    for m in &models {
        match crate::gpus::lookup(m) {
            Some(g) => known.push((m, g)),
            None => {
                return Err(Error::parameter(
                    "gpu-tflops",
                    format!(
                        "plan {}: its GPU model \"{}\" is none of the GPU table's, so its compute rate is unknown; {give}",
                        crate::names::escape(&plan.name),
                        crate::names::escape(m)
                    ),
                ));
            }
        }
    }
    let (model, g) = known
        .iter()
        .min_by(|a, b| a.1.dense_tflops.total_cmp(&b.1.dense_tflops))
        .copied()
        .expect("at least one model");
    let slowest = if known.len() > 1 {
        format!(" (the slowest of the plan's {} GPU models)", known.len())
    } else {
        String::new()
    };
    Ok((
        g.dense_tflops,
        format!(
            "{} TFLOPS per GPU, the dense BF16/FP16 peak of the {} that the plan's GPU model \"{}\" names{slowest} ({}; memory {} TB/s); training sustains less, so a measured rate gives a closer answer",
            g.dense_tflops,
            g.name,
            crate::names::escape(model),
            g.source,
            g.memory_tb_s
        ),
    ))
}

/// The default batch per GPU.
pub const DEFAULT_BATCH: u32 = 32;

/// The smallest `--gpu-tflops` accepted: 1 GFLOPS.
pub const MIN_TFLOPS: f64 = 0.001;

/// The rate [`Compute::default`] assumes, TFLOPS (a V100's FP32 peak,
/// the EFLOPS paper's GPU). The command line never uses it: it takes the
/// rate from the plan's GPU model ([`plan_gpu_rate`]) or the user.
pub const DEFAULT_TFLOPS: f64 = 15.0;

impl Model {
    /// A built-in profile or `None`.
    pub fn built_in(name: &str) -> Option<Model> {
        profiles::built_in(name)
    }

    /// Learnable parameters of every layer.
    pub fn parameters(&self) -> u64 {
        // Saturating: a parsed model stays far below 2^64 (see
        // `limits::LAYER_PARAMS` and `limits::MODEL_LAYERS`).
        self.layers
            .iter()
            .fold(0u64, |sum, l| sum.saturating_add(l.parameters))
    }

    /// True when the layers' times were measured.
    pub fn measured(&self) -> bool {
        self.layers
            .iter()
            .any(|l| matches!(l.work, Work::Measured { .. }))
    }

    /// Per-layer times and gradient sizes.
    pub fn timing(&self, c: &Compute) -> Result<Timing> {
        if !c.gpu_tflops.is_finite() || c.gpu_tflops <= 0.0 {
            return Err(Error::parameter(
                "gpu-tflops",
                format!("{}: give a throughput above 0, e.g. 15", c.gpu_tflops),
            ));
        }
        if c.gpu_tflops < MIN_TFLOPS {
            return Err(Error::parameter(
                "gpu-tflops",
                format!(
                    "{}: below the limit of {MIN_TFLOPS} TFLOPS (1 GFLOPS, slower than any GPU; the times would be meaningless); give e.g. 15",
                    c.gpu_tflops
                ),
            ));
        }
        if c.batch == Some(0) {
            return Err(Error::parameter("batch", "0: give 1 sample or more"));
        }
        if c.gradient_bytes == 0 {
            return Err(Error::parameter("gradient-bytes", "0: give 2 or 4"));
        }
        crate::limits::GRADIENT_BYTES
            .check(u64::from(c.gradient_bytes))
            .map_err(|e| Error::parameter("gradient-bytes", format!("{e}; give 2 or 4")))?;
        let scale = match (self.measured(), c.batch, self.batch) {
            (false, b, _) => f64::from(b.unwrap_or(DEFAULT_BATCH)) / (c.gpu_tflops * 1e6),
            (true, None, _) => 1.0,
            (true, Some(b), Some(m)) => f64::from(b) / f64::from(m),
            (true, Some(_), None) => {
                return Err(Error::parameter(
                    "batch",
                    format!(
                        "model {} gives measured times but not the batch they are for; add `batch = N` to the file or give no batch",
                        self.name
                    ),
                ));
            }
        };
        let (mut forward_us, mut backward_us) = (Vec::new(), Vec::new());
        for l in &self.layers {
            let (f, b) = match l.work {
                Work::Flops { forward, backward } => (forward, backward),
                Work::Measured {
                    forward_us,
                    backward_us,
                } => (forward_us, backward_us),
            };
            forward_us.push(f * scale);
            backward_us.push(b * scale);
        }
        let total: f64 = forward_us.iter().chain(&backward_us).sum();
        if !total.is_finite() {
            return Err(Error::parameter(
                "gpu-tflops",
                format!(
                    "model {}: at {} TFLOPS and this batch one iteration's compute time is not a finite number; give a realistic GPU speed (TFLOPS) and batch",
                    self.name, c.gpu_tflops
                ),
            ));
        }
        let mut bytes = Vec::with_capacity(self.layers.len());
        let mut sum = 0u64;
        for l in &self.layers {
            let b = l
                .parameters
                .checked_mul(u64::from(c.gradient_bytes))
                .and_then(|b| {
                    sum = sum.checked_add(b)?;
                    Some(b)
                })
                .ok_or_else(|| {
                    Error::parameter(
                        "model",
                        format!(
                            "model {} layer {}: the gradients take more than 2^64 bytes ({} parameters of {} bytes); check the layers' `parameters`",
                            self.name, l.name, l.parameters, c.gradient_bytes
                        ),
                    )
                })?;
            bytes.push(b);
        }
        Ok(Timing {
            forward_us,
            backward_us,
            bytes,
        })
    }
}

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

/// True for the algorithms whose reduced chunks come back in order (the
/// trees), which C-Cube streams into the next forward pass.
pub fn in_order(algorithm: Algorithm) -> bool {
    algorithm.info().in_order
}

/// A fitted allreduce cost on one plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The design in words.
    pub design: String,
    /// Ranks.
    pub ranks: usize,
    /// Start-up cost a, µs.
    pub a_us: f64,
    /// Cost per byte b, µs (shown as the bandwidth it implies).
    pub b_us_per_byte: f64,
    /// `1 / b` in Gbps: the algorithm bandwidth of a large allreduce.
    pub algbw_gbps: f64,
    /// Sizes estimated for the fit.
    pub sizes: usize,
    /// Worst relative error of the fit over those sizes, %.
    pub max_error_pct: f64,
    /// `closed-form`, `event`, `fast` or `packet`: how the estimates
    /// behind the fit were made; absent for a cost given with `--comm`,
    /// which nothing estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<estimate::Method>,
    /// True when `a` and `b` were given (`--comm`), not fitted to the
    /// plan.
    pub given: bool,
    /// Why the fit is to the closed form although the simulator was asked
    /// for: the schedule has more sends than the simulator builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl Fit {
    /// The cost the strategies take.
    pub fn linear(&self) -> Linear {
        Linear {
            a_us: self.a_us,
            b_us_per_byte: self.b_us_per_byte,
        }
    }
}

/// Fits `a + b·x` to `(x, y)` points, minimising the squared relative
/// error; `a` is kept at 0 or more. Returns `(a, b, worst relative error)`.
pub fn fit_linear(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let (mut s, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, y) in points {
        if y <= 0.0 {
            continue;
        }
        let w = 1.0 / (y * y);
        s += w;
        sx += w * x;
        sxx += w * x * x;
        sy += w * y;
        sxy += w * x * y;
    }
    let det = s * sxx - sx * sx;
    let (mut a, mut b) = if det.abs() > 0.0 {
        ((sy * sxx - sx * sxy) / det, (s * sxy - sx * sy) / det)
    } else {
        (0.0, if sxx > 0.0 { sxy / sxx } else { 0.0 })
    };
    if a < 0.0 {
        // Through the origin: b = Σ w x y / Σ w x².
        a = 0.0;
        b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    }
    let worst = points
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(x, y)| ((a + b * x - y) / y).abs())
        .fold(0.0, f64::max);
    (a, b.max(0.0), worst)
}

/// Fits the allreduce cost of `algorithm` over `ranks` ranks of `plan` for
/// messages up to `max_bytes`.
pub fn fit_allreduce(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: usize,
    max_bytes: u64,
    params: &Params,
    options: &Options,
) -> Result<Fit> {
    let mut sizes = vec![4096u64];
    while *sizes.last().unwrap_or(&1) < max_bytes.max(8192) {
        match sizes.last().unwrap_or(&1).checked_mul(2) {
            Some(next) => sizes.push(next),
            None => {
                return Err(Error::parameter(
                    "model",
                    format!(
                        "{max_bytes} bytes of gradients: more than an allreduce can carry; check the layers' `parameters`"
                    ),
                ));
            }
        }
    }
    let mut points = Vec::with_capacity(sizes.len());
    let mut method = options.method;
    // The simulator builds every send of the schedule; where there are too
    // many (a ring over thousands of ranks), the closed form answers, and
    // the fit says so.
    let mut fallback = None;
    let estimates = match estimate::estimates(plan, algorithm, Some(ranks), &sizes, params, options)
    {
        Err(e @ Error::TooManySends { .. }) if options.method != Method::ClosedForm => {
            fallback = Some(format!("fitted to the closed form: {e}"));
            let closed = Options {
                method: Method::ClosedForm,
                ..options.clone()
            };
            estimate::estimates(plan, algorithm, Some(ranks), &sizes, params, &closed)?
        }
        other => other?,
    };
    for (&size, e) in sizes.iter().zip(estimates) {
        method = e.method;
        points.push((size as f64, e.time_us));
    }
    let (a, b, worst) = fit_linear(&points);
    Ok(Fit {
        algorithm,
        topology: plan.topology,
        design: plan.describe(),
        ranks,
        a_us: a,
        b_us_per_byte: b,
        algbw_gbps: if b > 0.0 { 8.0 / (b * 1000.0) } else { 0.0 },
        sizes: sizes.len(),
        max_error_pct: 100.0 * worst,
        method: Some(method),
        given: false,
        fallback,
    })
}

/// The cost `a + b·M` given by the user (`--comm`) for `algorithm` over
/// `ranks` ranks of `plan`: nothing is estimated, the plan only names the
/// design.
pub fn given_allreduce(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: usize,
    cost: Linear,
) -> Fit {
    let b = cost.b_us_per_byte;
    Fit {
        algorithm,
        topology: plan.topology,
        design: plan.describe(),
        ranks,
        a_us: cost.a_us,
        b_us_per_byte: b,
        algbw_gbps: if b > 0.0 { 8.0 / (b * 1000.0) } else { 0.0 },
        sizes: 0,
        max_error_pct: 0.0,
        method: None,
        given: true,
        fallback: None,
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
            "a + b·M holds for one rank count (a and b grow with it), and the sweep has several; give one --ranks with --comm",
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

/// Formats a number of parameters: `25.6 M`.
fn millions(p: u64) -> String {
    format!("{:.1} M", p as f64 / 1e6)
}

/// A byte count in MiB with two decimals.
fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1_048_576.0)
}

/// The human table of a report.
pub fn render_table(r: &Report) -> String {
    let mut out = format!(
        "{}: {} parameters in {} layers, {} MiB of gradients; {} ranks\n",
        r.model,
        millions(r.parameters),
        r.layers,
        mib(r.gradient_bytes),
        r.ranks
    );
    let per_gpu = match (r.batch, r.gpu_tflops) {
        (Some(b), Some(g)) => format!("batch {b} per GPU at {g} TFLOPS: "),
        (Some(b), None) => format!("measured times at batch {b}: "),
        _ => "measured times: ".to_string(),
    };
    out.push_str(&format!(
        "{per_gpu}forward {:.2} ms, backward {:.2} ms\n",
        r.forward_ms, r.backward_ms
    ));
    if let Some(source) = &r.gpu_source {
        out.push_str(&format!("GPU rate: {source}\n"));
    }
    out.push('\n');
    let mut fits =
        crate::text::Table::new(["algorithm", "design", "a (µs)", "1/b (Gbps)", "fit error"])
            .right(&[2, 3, 4]);
    for f in &r.fits {
        fits.row([
            f.algorithm.as_str().to_string(),
            f.design.clone(),
            format!("{:.1}", f.a_us),
            format!("{:.1}", f.algbw_gbps),
            if f.given {
                "given".to_string()
            } else {
                format!("{:.1}%", f.max_error_pct)
            },
        ]);
    }
    out.push_str(if r.fits.iter().any(|f| f.given) {
        "Allreduce cost a + b·bytes, as given by --comm (MG-WFBP eq. 9):\n"
    } else {
        "Allreduce cost a + b·bytes, fitted to the estimates:\n"
    });
    out.push_str(&fits.render());
    for f in &r.fits {
        if let Some(why) = &f.fallback {
            out.push_str(&format!(
                "  - {} on {}: {why}\n",
                f.algorithm.as_str(),
                f.design
            ));
        }
    }
    out.push('\n');
    let mut t = crate::text::Table::new([
        "algorithm",
        "design",
        "strategy",
        "iteration ms",
        "exposed ms",
        "speedup",
        "efficiency",
        "buckets",
    ])
    .right(&[3, 4, 5, 6, 7]);
    for row in &r.results {
        t.row([
            row.algorithm.as_str().to_string(),
            row.design.clone(),
            row.strategy.as_str().to_string(),
            format!("{:.2}", row.iteration_ms),
            format!("{:.2}", row.comm_exposed_ms),
            format!("{:.1}", row.speedup),
            format!("{:.1}%", 100.0 * row.scaling_efficiency),
            row.buckets.len().to_string(),
        ]);
    }
    out.push_str(&t.render());
    for row in r.results.iter().filter(|x| x.strategy == Strategy::MgWfbp) {
        out.push_str(&format!(
            "\nMG-WFBP buckets, {} on {} (output side first; Algorithm 1's greedy merges give {:.2} ms):\n",
            row.algorithm.as_str(),
            row.design,
            row.algorithm1_iteration_ms.unwrap_or(0.0)
        ));
        let mut b = crate::text::Table::new([
            "bucket", "layers", "from", "to", "MiB", "start ms", "end ms",
        ])
        .right(&[0, 1, 4, 5, 6]);
        for (i, bucket) in row.buckets.iter().enumerate() {
            b.row([
                (i + 1).to_string(),
                bucket.layers.to_string(),
                bucket.last_layer.clone(),
                bucket.first_layer.clone(),
                mib(bucket.bytes),
                format!("{:.2}", bucket.start_ms),
                format!("{:.2}", bucket.end_ms),
            ]);
        }
        out.push_str(&b.render());
        if let Some(f) = &row.frameworks {
            out.push_str(&format!(
                "PyTorch DDP: bucket_cap_mb={} ({:.2} ms an iteration); Horovod: HOROVOD_FUSION_THRESHOLD={}\n",
                f.bucket_cap_mb, f.cap_iteration_ms, f.horovod_fusion_threshold_bytes
            ));
        }
    }
    out
}

/// The human table of a sweep: scaling efficiency, one column per rank
/// count.
pub fn render_sweep(s: &Sweep) -> String {
    let mut headers = vec![
        "topology".to_string(),
        "algorithm".to_string(),
        "strategy".to_string(),
    ];
    headers.extend(s.ranks.iter().map(|r| r.to_string()));
    let right: Vec<usize> = (3..headers.len()).collect();
    let mut t = crate::text::Table::new(headers).right(&right);
    let mut keys: Vec<(Topology, Algorithm, Strategy)> = Vec::new();
    for row in &s.results {
        let k = (row.topology, row.algorithm, row.strategy);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (topology, algorithm, strategy) in keys {
        let mut cells = vec![
            topology.as_str().to_string(),
            algorithm.as_str().to_string(),
            strategy.as_str().to_string(),
        ];
        for &r in &s.ranks {
            let cell = s
                .results
                .iter()
                .find(|x| {
                    x.ranks == r
                        && x.topology == topology
                        && x.algorithm == algorithm
                        && x.strategy == strategy
                })
                .map_or(String::new(), |x| {
                    format!("{:.1}%", 100.0 * x.scaling_efficiency)
                });
            cells.push(cell);
        }
        t.row(cells);
    }
    let rate = s
        .gpu_source
        .as_ref()
        .map_or(String::new(), |g| format!("GPU rate: {g}\n"));
    format!(
        "{}: {} parameters; scaling efficiency by ranks\n{rate}\n{}",
        s.model,
        millions(s.parameters),
        t.render()
    )
}

#[cfg(test)]
mod tests;
