//! `hd` and `hdrm`: halving-doubling (on the plan order or on EFLOPS
//! Algorithm 1's rank table; the context's table differs, not the
//! algorithm), folded when the rank count is not a power of two: MG-WFBP
//! Table II with per-step α and β plus the fold, streamed as
//! [`Shape::FoldedHd`].

use super::{AlgorithmRow, Collective, shaped};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::schedules::Shape;
use crate::estimate::{SendSchedule, models};

/// Halving-doubling, folded when the rank count is not a power of two.
#[derive(Debug)]
pub(super) struct HalvingDoubling;

/// `hd`'s row of the algorithm table.
pub(super) const HD_ROW: AlgorithmRow = AlgorithmRow {
    description: "halving-doubling in plan order, folded when the rank count is not a power of two",
    closed_form: "MG-WFBP Table II halving-doubling, per-step α and β, plus the fold",
    in_order: false,
    colour: [255, 127, 14],
    collective: &HalvingDoubling,
};

/// `hdrm`'s row of the algorithm table.
pub(super) const HDRM_ROW: AlgorithmRow = AlgorithmRow {
    description: "halving-doubling on the EFLOPS Algorithm 1 rank table (`planner ranks`'s table when folded)",
    closed_form: "the same as hd, every step crossing the two parts",
    in_order: false,
    colour: [44, 160, 44],
    collective: &HalvingDoubling,
};

impl Collective for HalvingDoubling {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let p = ctx.ranks();
        let nf = n as f64;
        let g = ctx.params.gamma_us();
        // Halving-doubling over the P' core ranks, plus the fold
        // and unfold of the X - P' extra ranks when X is not a
        // power of two (ranks::folded_halving_doubling's pairing).
        let core = 1usize << p.ilog2();
        // (α, β) of every step, then of the fold; they do not
        // depend on the size, so a context computes them once.
        let steps: &Vec<(f64, f64)> =
            ctx.cached(|| step_costs(ctx, core, ctx.beta0(), ctx.beta1()))?;
        let (hd, fold) = steps.split_at(core.ilog2() as usize);
        let mut t = models::halving_doubling_steps(core, nf, hd, g);
        if let Some(&(a, b)) = fold.first() {
            t += models::fold(nf, a, b, g);
        }
        Ok((t, 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        shaped(self, ctx, n)
    }

    fn shape(&self, _ctx: &Context<'_>) -> Result<Option<Shape>> {
        Ok(Some(Shape::FoldedHd))
    }
}

/// (α, β) of each halving-doubling step over the `core` ranks, then of
/// the fold when there are more ranks: β from NVLink inside a domain,
/// from the route model without the tier (`spread_beta`), otherwise
/// `b1`.
fn step_costs(ctx: &Context<'_>, core: usize, b0: f64, b1: f64) -> Result<Vec<(f64, f64)>> {
    let beta_of = |pairs: &[(usize, usize)]| -> Result<f64> {
        Ok(match ctx.nvlink_beta(pairs) {
            Some(b) => b,
            None if ctx.tier.is_none() => ctx.spread_beta(pairs)?.max(b0),
            None => b1,
        })
    };
    let mut steps = Vec::new();
    for s in 0..core.ilog2() {
        let d = 1usize << s;
        let pairs: Vec<(usize, usize)> = (0..core).map(|r| (r, r ^ d)).collect();
        steps.push((ctx.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
    }
    let p = ctx.ranks();
    if core < p {
        let pairs: Vec<(usize, usize)> = (core..p).map(|r| (r, r - core)).collect();
        steps.push((ctx.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
    }
    Ok(steps)
}
