//! Allreduce communication schedules: the steps and the directed flows of
//! each step, between ranks 0..P.
//!
//! - Halving-doubling (EFLOPS V-A2) for P = 2^k ranks: reduce-scatter with
//!   rank distances 1, 2, 4, ..., P/2, then all-gather with P/2, ..., 2, 1.
//!   In a step of distance d, rank r exchanges with r XOR d: two flows per
//!   pair, P flows in all.
//! - Halving-doubling for any X ranks ([`folded_halving_doubling`], the
//!   fold of Rabenseifner's algorithm): with P' the largest power of two
//!   not above X and r = X - P', rank P' + i (i < r) first sends its whole
//!   buffer to rank i (the `fold` step), ranks 0..P' run halving-doubling,
//!   and rank i sends the result back to rank P' + i (the `unfold` step).
//!   See [`FoldCost`] for what the two extra steps cost.
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
    /// The extra ranks of a job that is not a power of two send their
    /// buffers to their partners among the core ranks.
    Fold,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-gather.
    AllGather,
    /// The core ranks send the result back to their extra partners.
    Unfold,
}

impl Phase {
    /// `fold`, `reduce-scatter`, `all-gather` or `unfold`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Fold => "fold",
            Phase::ReduceScatter => "reduce-scatter",
            Phase::AllGather => "all-gather",
            Phase::Unfold => "unfold",
        }
    }
}

/// Who sends to whom in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pattern {
    /// Ranks 0..ranks send to r XOR d (halving-doubling).
    Xor { d: usize, ranks: usize },
    /// Ranks 0..ranks send to (r + 1) mod ranks (ring).
    Next { ranks: usize },
    /// Rank core + i sends to rank i, for i < extra.
    Fold { core: usize, extra: usize },
    /// Rank i sends to rank core + i, for i < extra.
    Unfold { core: usize, extra: usize },
}

/// One step of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Step {
    /// The phase.
    pub phase: Phase,
    /// Position within the phase, from 1.
    pub number: usize,
    /// Rank distance: d for halving-doubling, P' between the partners of
    /// a fold; `None` for ring.
    pub distance: Option<usize>,
    /// Ranks of the whole schedule.
    total: usize,
    pattern: Pattern,
}

impl Step {
    /// The rank that `rank` exchanges with in this step: its peer in
    /// halving-doubling (the flow goes both ways), its successor in a
    /// ring, its partner in a fold or unfold step (where only one of the
    /// two sends). A rank that takes no part in the step is its own peer.
    pub fn peer(&self, rank: usize) -> usize {
        match self.pattern {
            Pattern::Xor { d, ranks } if rank < ranks => rank ^ d,
            Pattern::Next { ranks } if ranks > 0 => (rank + 1) % ranks,
            Pattern::Fold { core, extra } | Pattern::Unfold { core, extra } => {
                if rank >= core && rank < core + extra {
                    rank - core
                } else if rank < extra {
                    rank + core
                } else {
                    rank
                }
            }
            _ => rank,
        }
    }

    /// Number of flows.
    pub fn flow_count(&self) -> usize {
        match self.pattern {
            Pattern::Xor { ranks, .. } | Pattern::Next { ranks } => ranks,
            Pattern::Fold { extra, .. } | Pattern::Unfold { extra, .. } => extra,
        }
    }

    /// Number of ranks of the schedule the step belongs to (a rank table
    /// for it has this many ranks).
    pub fn total_ranks(&self) -> usize {
        self.total
    }

    /// True when `other` has exactly the same flows (the ring's steps all
    /// do; so do the two halving-doubling steps of one distance).
    pub fn same_flows(&self, other: &Step) -> bool {
        self.total == other.total && self.pattern == other.pattern
    }

    /// Flow `i` of the step (`i < flow_count()`), as `(src_rank, dst_rank)`.
    pub fn flow(&self, i: usize) -> (usize, usize) {
        match self.pattern {
            Pattern::Xor { d, .. } => (i, i ^ d),
            Pattern::Next { ranks } => (i, (i + 1) % ranks),
            Pattern::Fold { core, .. } => (core + i, i),
            Pattern::Unfold { core, .. } => (i, core + i),
        }
    }

    /// The directed flows `(src_rank, dst_rank)`, by source rank for
    /// halving-doubling and ring, by core rank for fold and unfold.
    pub fn flows(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.flow_count()).map(move |i| self.flow(i))
    }

    /// The flows of this step that `rank` sends or receives, at most two,
    /// written into `out`; returns how many.
    pub fn flows_of(&self, rank: usize, out: &mut [(usize, usize); 2]) -> usize {
        match self.pattern {
            Pattern::Xor { d, ranks } if rank < ranks => {
                out[0] = (rank, rank ^ d);
                out[1] = (rank ^ d, rank);
                2
            }
            Pattern::Next { ranks } if rank < ranks => {
                out[0] = (rank, (rank + 1) % ranks);
                out[1] = ((rank + ranks - 1) % ranks, rank);
                if out[0] == out[1] { 1 } else { 2 }
            }
            Pattern::Fold { core, extra } | Pattern::Unfold { core, extra } => {
                let (e, c) = if rank >= core && rank < core + extra {
                    (rank, rank - core)
                } else if rank < extra {
                    (rank + core, rank)
                } else {
                    return 0;
                };
                out[0] = if matches!(self.pattern, Pattern::Fold { .. }) {
                    (e, c)
                } else {
                    (c, e)
                };
                1
            }
            _ => 0,
        }
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

impl Schedule {
    /// `(core, extra)` when the schedule folds extra ranks onto core ranks
    /// (halving-doubling over a number of ranks that is not a power of
    /// two); `None` otherwise.
    pub fn fold(&self) -> Option<(usize, usize)> {
        self.steps.iter().find_map(|s| match s.pattern {
            Pattern::Fold { core, extra } => Some((core, extra)),
            _ => None,
        })
    }
}

/// Halving-doubling over `p` ranks (a power of two): 2 log2(p) steps.
pub fn halving_doubling(p: usize) -> Result<Schedule> {
    if p == 0 || !p.is_power_of_two() {
        return Err(Error::parameter(
            "ranks",
            format!("{p} ranks: halving-doubling needs a power of two of 1 or more"),
        ));
    }
    Ok(Schedule {
        ranks: p,
        steps: hd_steps(p, p),
    })
}

/// The halving-doubling steps over ranks 0..p of a schedule of `total`
/// ranks.
fn hd_steps(p: usize, total: usize) -> Vec<Step> {
    let k = p.ilog2() as usize;
    let step = |phase, number, d: usize| Step {
        phase,
        number,
        distance: Some(d),
        total,
        pattern: Pattern::Xor { d, ranks: p },
    };
    let mut steps = Vec::with_capacity(2 * k + 2);
    for s in 0..k {
        steps.push(step(Phase::ReduceScatter, s + 1, 1 << s));
    }
    for s in 0..k {
        steps.push(step(Phase::AllGather, s + 1, 1 << (k - 1 - s)));
    }
    steps
}

/// Halving-doubling over any `x` ranks (1 or more): plain
/// [`halving_doubling`] when `x` is a power of two, otherwise a fold step,
/// halving-doubling over the largest power of two P' below `x`, and an
/// unfold step (2 log2(P') + 2 steps).
pub fn folded_halving_doubling(x: usize) -> Result<Schedule> {
    if x == 0 {
        return Err(Error::parameter(
            "ranks",
            "0 ranks: halving-doubling needs 1 or more",
        ));
    }
    let core = 1usize << x.ilog2();
    if core == x {
        return halving_doubling(x);
    }
    let extra = x - core;
    let mut steps = Vec::with_capacity(2 * core.ilog2() as usize + 2);
    steps.push(Step {
        phase: Phase::Fold,
        number: 1,
        distance: Some(core),
        total: x,
        pattern: Pattern::Fold { core, extra },
    });
    steps.extend(hd_steps(core, x));
    steps.push(Step {
        phase: Phase::Unfold,
        number: 1,
        distance: Some(core),
        total: x,
        pattern: Pattern::Unfold { core, extra },
    });
    Ok(Schedule { ranks: x, steps })
}

/// Ring over `p` ranks (1 or more): 2 (p - 1) steps.
pub fn ring(p: usize) -> Result<Schedule> {
    if p == 0 {
        return Err(Error::parameter("ranks", "0 ranks: a ring needs 1 or more"));
    }
    let steps = [Phase::ReduceScatter, Phase::AllGather]
        .into_iter()
        .flat_map(|phase| {
            (1..p).map(move |number| Step {
                phase,
                number,
                distance: None,
                total: p,
                pattern: Pattern::Next { ranks: p },
            })
        })
        .collect();
    Ok(Schedule { ranks: p, steps })
}

/// What the fold of a job of X ranks costs, in multiples of the buffer B
/// that every rank reduces.
///
/// Halving-doubling over P' ranks moves B/2, B/4, ..., B/P' per rank in
/// reduce-scatter and the same again in all-gather: 2B (1 - 1/P') per core
/// rank in 2 log2(P') steps. The fold step moves the whole buffer B from
/// each extra rank to its partner and the unfold step moves B back: 2B per
/// extra rank in 2 steps, and each of the two steps moves twice as much as
/// the largest halving-doubling step (B/2). A partner core rank therefore
/// moves 2B + 2B (1 - 1/P'), about twice what a rank of a power-of-two job
/// moves, and for large buffers (bandwidth-bound) the allreduce takes about
/// twice as long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoldCost {
    /// P', the ranks that run halving-doubling.
    pub core: usize,
    /// X - P', the ranks folded onto core ranks.
    pub extra: usize,
    /// Buffers moved per extra rank by the two fold steps: 2.
    pub fold_buffers: f64,
    /// Buffers moved per core rank by halving-doubling: 2 (1 - 1/P').
    pub core_buffers: f64,
}

impl FoldCost {
    /// The cost of folding `x` ranks; `None` when `x` is a power of two
    /// (or 0) and nothing is folded.
    pub fn of(x: usize) -> Option<Self> {
        if x == 0 || x.is_power_of_two() {
            return None;
        }
        let core = 1usize << x.ilog2();
        Some(Self {
            core,
            extra: x - core,
            fold_buffers: 2.0,
            core_buffers: 2.0 * (1.0 - 1.0 / core as f64),
        })
    }

    /// Bytes moved per extra rank by the fold steps over bytes moved per
    /// core rank by halving-doubling: P' / (P' - 1).
    pub fn ratio(&self) -> f64 {
        self.fold_buffers / self.core_buffers
    }

    /// The cost in words.
    pub fn describe(&self) -> String {
        let (p, r) = (self.core, self.extra);
        let x = p + r;
        let sends = if r == 1 {
            "1 extra rank sends its".to_string()
        } else {
            format!("{r} extra ranks send their")
        };
        format!(
            "{x} ranks is not a power of two: {sends} whole buffer B to a partner among the {p} core ranks (fold), the core ranks run halving-doubling, and the partners send the result back (unfold); \
             these 2 extra steps move B each, twice the largest halving-doubling step (B/2), and together {fold:.2}B per extra rank, {ratio:.2} times the {core:.2}B a core rank moves in the {steps} halving-doubling steps, \
             so a partner moves about twice as much as in a power-of-two job and large allreduces take about twice as long; a job of {p} ranks would need no fold",
            fold = self.fold_buffers,
            ratio = self.ratio(),
            core = self.core_buffers,
            steps = 2 * p.ilog2(),
        )
    }
}
