//! `ps`: a sharded parameter server with a server on every rank (push
//! shard j to rank j, reduce, pull it back); its schedule from
//! [`schedules::parameter_server`].

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{SendSchedule, models, schedules};

/// A sharded parameter server, a server on every rank.
#[derive(Debug)]
pub(super) struct ParameterServer;

/// `ps`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "sharded parameter server with a server on every rank: every rank pushes shard j to rank j, server j reduces, every rank pulls shard j back",
    closed_form: "2α + 2·max((P-1)/P·Nβ, bytes leaving the switch / uplink share) + (P-1)/P·Nγ",
    in_order: false,
    colour: [255, 152, 150],
    collective: &ParameterServer,
};

impl Collective for ParameterServer {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let p = ctx.ranks();
        let nf = n as f64;
        let g = ctx.params.gamma_us();
        let a = ctx.alpha_of((0..p).flat_map(|r| (0..p).map(move |j| (r, j))));
        // The part of a rank's shards that leaves its switch, for
        // the switch with the fewest ranks.
        let mut on = vec![0usize; ctx.plan.switch_list.len()];
        for &s in &ctx.switch {
            on[s as usize] += 1;
        }
        let fewest = on.iter().copied().filter(|&c| c > 0).min().unwrap_or(p);
        let cross = (p - fewest) as f64 / p as f64 * nf;
        Ok((
            models::parameter_server(p, nf, a, ctx.beta0(), (cross, 1.0 / ctx.share), g),
            1,
        ))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        schedules::parameter_server(ctx.ranks(), n, ctx.params.gamma_us())
    }
}
