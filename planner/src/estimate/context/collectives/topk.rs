//! `topk-allgather`: top-k selection of ρ of the elements on every rank,
//! one all-gather of the value-index pairs over all ranks (recursive
//! doubling, ring when not a power of two), accumulation; its schedule
//! from [`schedules::topk_allgather`].

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{SendSchedule, models, schedules};

/// Top-k sparsified allreduce by one flat all-gather.
#[derive(Debug)]
pub(super) struct TopKAllGather;

/// `topk-allgather`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "top-k selection of ρ of the elements on every rank, one all-gather of the value-index pairs over all ranks (recursive doubling, ring when not a power of two), accumulation",
    closed_form: "the all-gather's α-β sum over ρ·d value-index pairs, plus selection and accumulation",
    in_order: false,
    colour: [152, 223, 138],
    collective: &TopKAllGather,
};

impl Collective for TopKAllGather {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let p = ctx.ranks();
        let nf = n as f64;
        let g = ctx.params.gamma_us();
        let (b0, b1) = (ctx.beta0(), ctx.beta1());
        let w = ctx.params.gradient_bytes;
        let k = schedules::topk_elements(n, ctx.params.density, w) as f64;
        let wf = f64::from(w);
        let m = k * (wf + models::INDEX_BYTES);
        let steps: Vec<(f64, f64)> = if p.is_power_of_two() {
            (0..p.ilog2())
                .map(|s| {
                    let d = p >> (s + 1);
                    let pairs: Vec<(usize, usize)> = (0..p).map(|r| (r, r ^ d)).collect();
                    let inside = ctx.tier.is_none()
                        && pairs.iter().all(|&(a, b)| ctx.switch[a] == ctx.switch[b]);
                    let beta = match ctx.nvlink_beta(&pairs) {
                        Some(b) => b,
                        None if inside => b0,
                        None => b1,
                    };
                    (ctx.alpha_of(pairs.into_iter()), beta)
                })
                .collect()
        } else {
            vec![(ctx.alpha_of((0..p).map(|r| (r, (r + 1) % p))), b0)]
        };
        let t2 = ctx.params.topk_us() * nf;
        let acc = g * wf * k * p as f64;
        Ok((models::topk_allgather(p, m, &steps, t2, acc), 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        schedules::topk_allgather(
            ctx.ranks(),
            n,
            ctx.params.density,
            ctx.params.gradient_bytes,
            ctx.params.gamma_us(),
            ctx.params.topk_us(),
        )
    }
}
