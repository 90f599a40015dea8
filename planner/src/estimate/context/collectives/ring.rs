//! `ring`: the ring in plan order, MG-WFBP Table II's closed form, its
//! schedule streamed from one ring level.

use super::{AlgorithmRow, Collective, shaped};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::schedules::{Kind, Shape};
use crate::estimate::{SendSchedule, models};

/// The ring in plan order.
#[derive(Debug)]
pub(super) struct Ring;

/// `ring`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "ring in plan order",
    closed_form: "MG-WFBP Table II ring",
    in_order: false,
    colour: [31, 119, 180],
    collective: &Ring,
};

impl Collective for Ring {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let p = ctx.ranks();
        let a = ctx.alpha_of((0..p).map(|r| (r, (r + 1) % p)));
        let g = ctx.params.gamma_us();
        Ok((models::ring(p, n as f64, a, ctx.beta0(), g), 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        shaped(self, ctx, n)
    }

    fn shape(&self, ctx: &Context<'_>) -> Result<Option<Shape>> {
        let p = ctx.ranks();
        Ok(Some(Shape::Levels {
            levels: vec![(vec![(0..p as u32).collect()], Kind::Ring)],
            labelled: false,
        }))
    }
}
