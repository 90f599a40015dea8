//! `two-level`: Gloo's two-level allreduce as BlueConnect eq. 4 models
//! it (with γ), α per level; its schedule from
//! [`schedules::two_level`].

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{SendSchedule, models, schedules};

/// Gloo's two-level allreduce.
#[derive(Debug)]
pub(super) struct TwoLevel;

/// `two-level`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "under each switch a ring reduce-scatter and a gather to the master rank, an allreduce among the masters (halving-doubling for a power of two, ring otherwise), then a scatter and a ring all-gather",
    closed_form: "BlueConnect eq. 4 (with γ), α per level",
    in_order: false,
    colour: [174, 199, 232],
    collective: &TwoLevel,
};

impl Collective for TwoLevel {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let nf = n as f64;
        let g = ctx.params.gamma_us();
        let levels = ctx.levels(false)?;
        let p0 = levels.groups[0][0].len();
        let p1 = levels.groups.get(1).map_or(1, |l| l[0].len());
        let alpha1 = levels.alpha.get(1).copied().unwrap_or(levels.alpha[0]);
        // One master per switch: the masters' flows do not share
        // an uplink, so they go at the slowest link's speed.
        let t = models::two_level(
            p0,
            p1,
            nf,
            (levels.alpha[0], alpha1),
            levels.w[0],
            ctx.fabric_w,
        );
        let reduce = |p: usize| g * (p as f64 - 1.0) / p as f64 * nf;
        Ok((t + reduce(p0) + reduce(p1), 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        let levels = ctx.levels(false)?;
        let masters = levels
            .groups
            .get(1)
            .map_or_else(|| vec![0], |l| l[0].clone());
        let g = ctx.params.gamma_us();
        schedules::two_level(ctx.ranks(), &levels.groups[0], &masters, n, g)
    }
}
