//! A model as the iteration what-if reads it: its layers, their work,
//! and the GPU rate that turns FLOPs into time.

use super::*;
use crate::error::{Error, Result};

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
