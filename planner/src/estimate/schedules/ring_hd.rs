//! Ring and halving-doubling schedules, and the hierarchical
//! decompositions made of them (BlueConnect, 2D): the [`Shape`]s that can
//! be streamed to a [`Sink`] as well as stored.
//!
//! Ring over a group of g ranks (EFLOPS V-A1): g - 1 reduce-scatter steps
//! and g - 1 all-gather steps; in reduce-scatter step s the rank at
//! position i sends chunk (i - s) mod g of the g chunks of its buffer to
//! position i + 1.
//!
//! Halving-doubling over a power-of-two group (EFLOPS V-A2, Rabenseifner):
//! reduce-scatter with distances 1, 2, ..., g/2, each rank sending the
//! half of its current segment that its peer keeps, then all-gather with
//! the distances reversed, each rank sending its whole segment. The
//! distance order is that of [`crate::ranks::schedule`], which EFLOPS
//! Algorithm 1 is built for.
//!
//! Halving-doubling over X ranks that is not a power of two (the fold of
//! Rabenseifner's algorithm, with the pairing of
//! [`crate::ranks::folded_halving_doubling`]): with P' the largest power
//! of two below X, extra rank P' + i (i < X - P') first sends its whole
//! buffer to core rank i (the `fold` step), which reduces it (γ per byte)
//! before its first halving-doubling send; ranks 0..P' run
//! halving-doubling; then core rank i sends the whole reduced buffer back
//! to rank P' + i (the `unfold` step) once its last all-gather receive
//! has arrived.
//!
//! Hierarchical decompositions (BlueConnect, 2D) chain these phases over
//! the levels of a topology: reduce-scatter at every level from the
//! lowest, then all-gather from the highest; groups at one level run at
//! the same time.

use super::builder::Builder;
use super::{Kind, SendSchedule, Shape, Sink, Streamed, check_sends};
use crate::error::{Error, Result};
use crate::ranks::{self, Phase};

/// Ring allreduce over `p` ranks, `n` bytes.
pub fn ring(p: usize, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    let group = vec![(0..p as u32).collect::<Vec<u32>>()];
    hierarchical(p, &[(group, Kind::Ring)], n, gamma_us, false)
}

/// Halving-doubling (Rabenseifner) over `p` ranks, a power of two.
pub fn halving_doubling(p: usize, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    if !p.is_power_of_two() {
        return Err(Error::parameter(
            "ranks",
            format!("{p} ranks: halving-doubling needs a power of two"),
        ));
    }
    let group = vec![(0..p as u32).collect::<Vec<u32>>()];
    hierarchical(p, &[(group, Kind::HalvingDoubling)], n, gamma_us, false)
}

/// Halving-doubling over any `x` ranks (1 or more): the steps of
/// [`crate::ranks::folded_halving_doubling`] (plain [`halving_doubling`]
/// when `x` is a power of two, otherwise a fold step, halving-doubling
/// over the largest power of two P' below `x` and an unfold step; see the
/// module documentation), each flow a send.
pub fn folded_halving_doubling(x: usize, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    build(x, &Shape::FoldedHd, n, gamma_us)
}

/// A hierarchical allreduce: reduce-scatter at every level from the first,
/// then all-gather from the last. `levels[i]` holds the groups of level i
/// (every rank in exactly one group per level) and how they reduce;
/// `labelled` numbers the steps' levels.
pub(crate) fn hierarchical(
    p: usize,
    levels: &[(Vec<Vec<u32>>, Kind)],
    n: u64,
    gamma_us: f64,
    labelled: bool,
) -> Result<SendSchedule> {
    let shape = Shape::Levels {
        levels: levels.to_vec(),
        labelled,
    };
    build(p, &shape, n, gamma_us)
}

/// The schedule of `shape` over `p` ranks for `n` bytes, stored.
pub(crate) fn build(p: usize, shape: &Shape, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    let sends = shape_sends(p, shape)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.reserve(sends);
    shape_steps(&mut b, p, shape, n)?;
    b.finish()
}

/// The schedule of `shape` over `p` ranks for `n` bytes, handed to `sink`
/// send by send (the same sends, in the same order, as [`build`] stores).
pub(crate) fn stream(
    p: usize,
    shape: &Shape,
    n: u64,
    gamma_us: f64,
    sink: &mut dyn Sink,
) -> Result<Streamed> {
    sink.reserve(shape_sends(p, shape)?);
    let mut b = Builder::streaming(p, gamma_us, sink)?;
    shape_steps(&mut b, p, shape, n)?;
    Ok(Streamed {
        sends: b.made as usize,
        steps: b.s.steps.len(),
        bytes_sent_by_0: b.bytes_by_0,
        tail_us: b.pending_us,
        final_recv: b.last_recv,
    })
}

/// The sends `shape` makes over `p` ranks, refused (before anything is
/// allocated) beyond the simulator's memory ([`limits::SIMULATOR_MEMORY`]).
fn shape_sends(p: usize, shape: &Shape) -> Result<usize> {
    let sends: u128 = match shape {
        // g - 1 (ring) or log2 g (halving-doubling) steps of p sends each
        // way, at every level.
        Shape::Levels { levels, .. } => levels
            .iter()
            .map(|(groups, kind)| {
                let g = groups.first().map_or(1, Vec::len);
                let steps = match kind {
                    Kind::Ring => g.saturating_sub(1) as u128,
                    Kind::HalvingDoubling => u128::from(g.max(1).ilog2()),
                };
                2 * steps * p as u128
            })
            .sum(),
        Shape::FoldedHd => match ranks::folded_halving_doubling(p)?.fold() {
            Some((core, extra)) => 2 * extra as u128 + 2 * u128::from(core.ilog2()) * core as u128,
            None => 2 * u128::from(p.max(1).ilog2()) * p as u128,
        },
    };
    check_sends(p, sends)?;
    Ok(sends as usize)
}

/// Makes the sends of `shape` over `p` ranks for `n` bytes.
fn shape_steps(b: &mut Builder<'_>, p: usize, shape: &Shape, n: u64) -> Result<()> {
    b.held.fill(n);
    let (levels, labelled) = match shape {
        Shape::Levels { levels, labelled } => (levels, *labelled),
        Shape::FoldedHd => {
            let plan = ranks::folded_halving_doubling(p)?;
            let Some((core, _)) = plan.fold() else {
                let group = vec![(0..p as u32).collect::<Vec<u32>>()];
                b.phase(Kind::HalvingDoubling, &group, true, None)?;
                return b.phase(Kind::HalvingDoubling, &group, false, None);
            };
            let group = vec![(0..core as u32).collect::<Vec<u32>>()];
            for step in &plan.steps {
                match (step.phase, step.distance) {
                    (Phase::Fold | Phase::Unfold, _) => b.pair_step(step, n)?,
                    (Phase::ReduceScatter, Some(d)) => b.hd_step(&group, d, true, None)?,
                    (Phase::AllGather, Some(d)) => b.hd_step(&group, d, false, None)?,
                    (Phase::ReduceScatter | Phase::AllGather, None) => {
                        return Err(Error::Internal(
                            "a halving-doubling step without a rank distance".to_string(),
                        ));
                    }
                }
            }
            return Ok(());
        }
    };
    let label = |i: usize| labelled.then_some(i as u8);
    for (i, (groups, kind)) in levels.iter().enumerate() {
        b.phase(*kind, groups, true, label(i))?;
    }
    for (i, (groups, kind)) in levels.iter().enumerate().rev() {
        b.phase(*kind, groups, false, label(i))?;
    }
    Ok(())
}
