//! `blueconnect` and `2d`: a reduce-scatter per level of the plan
//! (switch, pod, fabric) and the all-gather back, BlueConnect eq. 6–7
//! (`2d`: rings at every level, eq. 6 with `T_r` at both), streamed from
//! its levels ([`Shape::Levels`]).

use super::{AlgorithmRow, Collective, shaped};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::schedules::{Kind, Shape};
use crate::estimate::{SendSchedule, models};

/// A hierarchical decomposition.
#[derive(Debug)]
pub(super) struct Hierarchical {
    /// Rings at every level (`2d`); otherwise halving-doubling where a
    /// level's groups are a power of two (`blueconnect`).
    ring_only: bool,
}

/// `blueconnect`: recursive for powers of two, ring otherwise, per level.
pub(super) const BLUECONNECT: Hierarchical = Hierarchical { ring_only: false };

/// `2d`: the 2D-torus allreduce, rings at every level.
pub(super) const TWO_D: Hierarchical = Hierarchical { ring_only: true };

/// How a level of `size` ranks per group runs in `blueconnect`
/// (halving-doubling where the groups are a power of two) or `2d`
/// (`ring_only`: rings everywhere).
fn level_kind(ring_only: bool, size: usize) -> Kind {
    if !ring_only && size.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    }
}

/// `blueconnect`'s row of the algorithm table.
pub(super) const BLUECONNECT_ROW: AlgorithmRow = AlgorithmRow {
    description: "reduce-scatter per level (switch, pod, fabric), recursive for powers of two and ring otherwise, then all-gather back",
    closed_form: "BlueConnect eq. 6–7",
    in_order: false,
    colour: [227, 119, 194],
    collective: &BLUECONNECT,
};

/// `2d`'s row of the algorithm table.
pub(super) const TWO_D_ROW: AlgorithmRow = AlgorithmRow {
    description: "2D-torus: ring reduce-scatter under each switch, ring allreduce across switches, ring all-gather",
    closed_form: "BlueConnect eq. 6 with `T_r` at both levels",
    in_order: false,
    colour: [127, 127, 127],
    collective: &TWO_D,
};

impl Collective for Hierarchical {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        // The levels do not depend on the size.
        let lv: &Vec<models::Level> = ctx.cached(|| self.level_costs(ctx))?;
        let g = ctx.params.gamma_us();
        Ok((models::blueconnect(lv, n as f64, g, self.ring_only), 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        shaped(self, ctx, n)
    }

    fn shape(&self, ctx: &Context<'_>) -> Result<Option<Shape>> {
        let ring_only = self.ring_only;
        let levels = ctx.levels(!ring_only)?;
        let levels = levels
            .groups
            .into_iter()
            .map(|groups| {
                let kind = level_kind(ring_only, groups[0].len());
                (groups, kind)
            })
            .collect();
        Ok(Some(Shape::Levels {
            levels,
            labelled: true,
        }))
    }
}

impl Hierarchical {
    /// The levels with their bandwidth: without the tier the level's
    /// steps on their paths, ideally balanced, as the schedule runs them
    /// (`level_w`).
    fn level_costs(&self, ctx: &Context<'_>) -> Result<Vec<models::Level>> {
        let ring_only = self.ring_only;
        let levels = ctx.levels(!ring_only)?;
        let mut lv = Vec::with_capacity(levels.groups.len());
        for (i, groups) in levels.groups.iter().enumerate() {
            let size = groups[0].len();
            let w = if ctx.tier.is_none() {
                ctx.level_w(groups, level_kind(ring_only, size))?.min(ctx.w)
            } else {
                levels.w[i]
            };
            lv.push(models::Level {
                p: size,
                alpha: levels.alpha[i],
                w,
            });
        }
        Ok(lv)
    }
}
