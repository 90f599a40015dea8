//! Allreduce communication schedules: the steps and the directed flows of
//! each step, between ranks 0..P.
//!
//! - Halving-doubling (EFLOPS V-A2) for P = 2^k ranks: reduce-scatter with
//!   rank distances 1, 2, 4, ..., P/2, then all-gather with P/2, ..., 2, 1.
//!   In a step of distance d, rank r exchanges with r XOR d: two flows per
//!   pair, P flows in all.
//! - Ring (EFLOPS V-A1): P - 1 reduce-scatter steps and P - 1 all-gather
//!   steps; in every step rank r sends to (r + 1) mod P.
//!
//! A step does not store its flows; [`Step::flows`] computes them, so a
//! schedule of 131,072 ranks stays a few hundred bytes.

use serde::Serialize;

use crate::error::{Error, Result};

/// The phase of an allreduce a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Reduce-scatter.
    ReduceScatter,
    /// All-gather.
    AllGather,
}

impl Phase {
    /// `reduce-scatter` or `all-gather`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::ReduceScatter => "reduce-scatter",
            Phase::AllGather => "all-gather",
        }
    }
}

/// Who a rank sends to in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pattern {
    /// Rank r sends to r XOR d (halving-doubling).
    Xor(usize),
    /// Rank r sends to (r + 1) mod P (ring).
    Next,
}

/// One step of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Step {
    /// The phase.
    pub phase: Phase,
    /// Position within the phase, from 1.
    pub number: usize,
    /// Rank distance (halving-doubling); `None` for ring.
    pub distance: Option<usize>,
    ranks: usize,
    pattern: Pattern,
}

impl Step {
    /// The rank that `rank` sends to in this step.
    pub fn peer(&self, rank: usize) -> usize {
        match self.pattern {
            Pattern::Xor(d) => rank ^ d,
            Pattern::Next => (rank + 1) % self.ranks,
        }
    }

    /// Number of flows: every rank sends exactly one.
    pub fn flow_count(&self) -> usize {
        self.ranks
    }

    /// True when `other` has exactly the same flows (the ring's steps all
    /// do; so do the two halving-doubling steps of one distance).
    pub fn same_flows(&self, other: &Step) -> bool {
        self.ranks == other.ranks && self.pattern == other.pattern
    }

    /// The directed flows `(src_rank, dst_rank)`, by source rank.
    pub fn flows(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.ranks).map(move |r| (r, self.peer(r)))
    }
}

/// A schedule: the steps of one allreduce over `ranks` ranks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// Number of ranks.
    pub ranks: usize,
    /// The steps in order.
    pub steps: Vec<Step>,
}

/// Halving-doubling over `p` ranks (a power of two): 2 log2(p) steps.
pub fn halving_doubling(p: usize) -> Result<Schedule> {
    if p == 0 || !p.is_power_of_two() {
        return Err(Error::option(
            "--ranks",
            format!("{p} ranks: halving-doubling needs a power of two of 1 or more"),
        ));
    }
    let k = p.ilog2() as usize;
    let step = |phase, number, d: usize| Step {
        phase,
        number,
        distance: Some(d),
        ranks: p,
        pattern: Pattern::Xor(d),
    };
    let mut steps = Vec::with_capacity(2 * k);
    for s in 0..k {
        steps.push(step(Phase::ReduceScatter, s + 1, 1 << s));
    }
    for s in 0..k {
        steps.push(step(Phase::AllGather, s + 1, 1 << (k - 1 - s)));
    }
    Ok(Schedule { ranks: p, steps })
}

/// Ring over `p` ranks (1 or more): 2 (p - 1) steps.
pub fn ring(p: usize) -> Result<Schedule> {
    if p == 0 {
        return Err(Error::option("--ranks", "0 ranks: a ring needs 1 or more"));
    }
    let steps = [Phase::ReduceScatter, Phase::AllGather]
        .into_iter()
        .flat_map(|phase| {
            (1..p).map(move |number| Step {
                phase,
                number,
                distance: None,
                ranks: p,
                pattern: Pattern::Next,
            })
        })
        .collect();
    Ok(Schedule { ranks: p, steps })
}
