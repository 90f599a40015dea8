//! `hitopk`: HiTopKComm Algorithm 2 with nodes = switches, eq. 7–10 plus
//! the reductions the schedule makes; its schedule from
//! [`schedules::hitopk`].

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{SendSchedule, models, schedules};

/// HiTopKComm, sparsified with density ρ.
#[derive(Debug)]
pub(super) struct HiTopK;

/// `hitopk`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "HiTopKComm Algorithm 2 with nodes = switches",
    closed_form: "HiTopKComm eq. 7–10",
    in_order: false,
    colour: [23, 190, 207],
    collective: &HiTopK,
};

impl Collective for HiTopK {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let nf = n as f64;
        let g = ctx.params.gamma_us();
        let levels = ctx.levels(false)?;
        let gpus = levels.groups[0][0].len();
        let nodes = levels.groups[1][0].len();
        let t2 = ctx.params.topk_us() * nf / gpus as f64;
        let w = f64::from(ctx.params.gradient_bytes);
        let t = models::hitopk_sent(
            nodes,
            gpus,
            nf / w,
            ctx.params.density,
            w,
            (levels.alpha[0], 1.0 / levels.w[0]),
            (levels.alpha[1], 1.0 / levels.w[1]),
            t2,
        );
        // The paper has no γ; the schedule reduces the ring
        // reduce-scatter's (g-1)/g of the buffer and accumulates
        // the m gathered sets of ρ·d/g values.
        let (gf, mf) = (gpus as f64, nodes as f64);
        let shard_elements = ((nf / gf) / w).floor();
        let selected = (ctx.params.density * shard_elements).ceil();
        let reduced = (gf - 1.0) / gf * nf + mf * selected * w;
        Ok((t + g * reduced, 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        let levels = ctx.levels(false)?;
        schedules::hitopk(
            ctx.ranks(),
            &levels.groups[0],
            &levels.groups[1],
            n,
            ctx.params.density,
            ctx.params.gradient_bytes,
            ctx.params.gamma_us(),
            ctx.params.topk_us(),
        )
    }
}
