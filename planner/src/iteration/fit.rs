//! The linear allreduce cost `a + b·M` fitted to the estimates of a plan
//! (MG-WFBP eq. 9), or given by the user.

use serde::Serialize;

use super::*;
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::estimate::{self, Algorithm, Method, Options, Params};
use crate::plan::Topology;

/// True for the algorithms whose reduced chunks come back in order (the
/// trees), which C-Cube streams into the next forward pass.
pub fn in_order(algorithm: Algorithm) -> bool {
    estimate::algorithm_row(algorithm).in_order
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
