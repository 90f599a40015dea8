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
//!   steps; in every step rank r sends to (r + 1) mod P ([`ring`]), or to
//!   (r - 1) mod P as Gloo does ([`ring_backward`]).
//!
//! The fold above is the planner's (and `provisioner probe`'s): the extra
//! ranks are the last ones. The MPI libraries fold in pairs among the
//! first 2r ranks instead ([`super::engine`] cites their sources): a
//! schedule built with a [`Layout`] other than [`Layout::Tail`] keeps the
//! planner's steps over *canonical* ranks (core ranks 0..P', extra rank
//! P' + i partnered with core rank i) and numbers them as the engine does,
//! so [`Step::flow`] gives the engine's own rank numbers; [`Layout::to_engine`]
//! renumbers a table made for the canonical numbering.
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

/// How an engine numbers the ranks of a folded schedule: where canonical
/// core rank i (< P') and extra rank P' + i sit in its rank order. With no
/// fold (a power of two of ranks) every layout is the identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// The planner's: core rank i is rank i, extra rank P' + i is rank
    /// P' + i.
    Tail,
    /// In pairs among the first 2r ranks, the core rank of pair i even: core
    /// rank i < r is rank 2i and its extra partner rank 2i + 1; core rank
    /// i >= r is rank i + r (Open MPI's Rabenseifner allreduce).
    PairsCoreEven,
    /// In pairs, the core rank odd: core rank i < r is rank 2i + 1 and its
    /// extra partner rank 2i; core rank i >= r is rank i + r (MPICH's
    /// reduce-scatter-allgather allreduce).
    PairsCoreOdd,
}

impl Layout {
    /// The parity of the core rank of a pair; `None` for [`Layout::Tail`].
    fn core_parity(self) -> Option<usize> {
        match self {
            Layout::Tail => None,
            Layout::PairsCoreEven => Some(0),
            Layout::PairsCoreOdd => Some(1),
        }
    }

    /// The engine's rank of canonical rank `c` in a schedule of `total`
    /// ranks.
    pub fn engine_rank(self, c: usize, total: usize) -> usize {
        let (core, extra) = split(total);
        let Some(odd) = self.core_parity() else {
            return c;
        };
        if c >= core {
            2 * (c - core) + (1 - odd)
        } else if c < extra {
            2 * c + odd
        } else {
            c + extra
        }
    }

    /// The canonical rank of the engine's rank `e` (the inverse of
    /// [`Layout::engine_rank`]).
    pub fn canonical_rank(self, e: usize, total: usize) -> usize {
        let (core, extra) = split(total);
        let Some(odd) = self.core_parity() else {
            return e;
        };
        if e >= 2 * extra {
            e - extra
        } else if e % 2 == odd {
            e / 2
        } else {
            core + e / 2
        }
    }

    /// A table made for the canonical numbering (rank -> sub-node),
    /// renumbered as the engine numbers ranks.
    pub fn to_engine(self, canonical: &[usize]) -> Vec<usize> {
        let total = canonical.len();
        let mut out = vec![0; total];
        for (c, &sn) in canonical.iter().enumerate() {
            out[self.engine_rank(c, total)] = sn;
        }
        out
    }
}

/// P' and r = X - P' for X ranks (P' the largest power of two not above
/// X; (0, 0) for none).
fn split(total: usize) -> (usize, usize) {
    if total == 0 {
        return (0, 0);
    }
    let core = 1usize << total.ilog2();
    (core, total - core)
}

/// Who sends to whom in a step, in canonical ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Pattern {
    /// Ranks 0..ranks send to r XOR d (halving-doubling).
    Xor { d: usize, ranks: usize },
    /// Ranks 0..ranks send to (r + 1) mod ranks (ring).
    Next { ranks: usize },
    /// Ranks 0..ranks send to (r - 1) mod ranks (Gloo's ring).
    Prev { ranks: usize },
    /// Rank core + i and rank i send to each other, for i < extra (the
    /// first step of Open MPI's fold: each sends half its buffer).
    Exchange { core: usize, extra: usize },
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
    /// Rank distance: d for halving-doubling (between the ranks the
    /// engine renumbers the core ranks to, when it folds in pairs), P'
    /// between the partners of a fold (1 when the engine folds in pairs);
    /// `None` for ring.
    pub distance: Option<usize>,
    /// Ranks of the whole schedule.
    total: usize,
    pattern: Pattern,
    /// How the engine numbers the canonical ranks of `pattern`.
    layout: Layout,
}

impl Step {
    /// The rank that `rank` exchanges with in this step: its peer in
    /// halving-doubling (the flow goes both ways), its successor in a
    /// ring, its partner in a fold or unfold step (where only one of the
    /// two sends). A rank that takes no part in the step is its own peer.
    pub fn peer(&self, rank: usize) -> usize {
        let c = self.layout.canonical_rank(rank, self.total);
        let peer = match self.pattern {
            Pattern::Xor { d, ranks } if c < ranks => c ^ d,
            Pattern::Next { ranks } if ranks > 0 => (c + 1) % ranks,
            Pattern::Prev { ranks } if ranks > 0 => (c + ranks - 1) % ranks,
            Pattern::Fold { core, extra }
            | Pattern::Unfold { core, extra }
            | Pattern::Exchange { core, extra } => {
                if c >= core && c < core + extra {
                    c - core
                } else if c < extra {
                    c + core
                } else {
                    c
                }
            }
            _ => c,
        };
        self.layout.engine_rank(peer, self.total)
    }

    /// Number of flows.
    pub fn flow_count(&self) -> usize {
        match self.pattern {
            Pattern::Xor { ranks, .. } | Pattern::Next { ranks } | Pattern::Prev { ranks } => ranks,
            Pattern::Fold { extra, .. } | Pattern::Unfold { extra, .. } => extra,
            Pattern::Exchange { extra, .. } => 2 * extra,
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
        self.total == other.total && self.pattern == other.pattern && self.layout == other.layout
    }

    /// How the engine numbers this step's ranks.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The largest message, in elements, that one flow of this step
    /// carries when every rank reduces `count` elements: halving-doubling
    /// halves the window in each reduce-scatter step (count/2, count/4,
    /// ...) and sends it back growing in all-gather; a ring moves one
    /// of its `ranks` chunks per step; the planner's and MPICH's fold and
    /// every unfold move the whole buffer, Open MPI's two fold steps half
    /// of it each (see [`super::engine`]).
    pub fn largest_message(&self, count: usize) -> usize {
        let half = count.div_ceil(2);
        match self.pattern {
            Pattern::Xor { ranks, .. } => {
                let k = ranks.max(1).ilog2() as usize;
                let halvings = match self.phase {
                    Phase::AllGather => k + 1 - self.number,
                    _ => self.number,
                };
                count.div_ceil(1usize << halvings.min(usize::BITS as usize - 1))
            }
            Pattern::Next { ranks } | Pattern::Prev { ranks } => count.div_ceil(ranks.max(1)),
            Pattern::Exchange { .. } => half,
            Pattern::Fold { .. } if self.layout == Layout::PairsCoreEven => half,
            Pattern::Fold { .. } | Pattern::Unfold { .. } => count,
        }
    }

    /// Flow `i` of the step (`i < flow_count()`), as `(src_rank, dst_rank)`
    /// in the engine's rank numbers.
    #[inline]
    pub fn flow(&self, i: usize) -> (usize, usize) {
        let (s, d) = self.canonical_flow(i);
        (
            self.layout.engine_rank(s, self.total),
            self.layout.engine_rank(d, self.total),
        )
    }

    /// Flow `i` in canonical ranks.
    fn canonical_flow(&self, i: usize) -> (usize, usize) {
        match self.pattern {
            Pattern::Xor { d, .. } => (i, i ^ d),
            Pattern::Next { ranks } => (i, (i + 1) % ranks),
            Pattern::Prev { ranks } => (i, (i + ranks - 1) % ranks),
            Pattern::Fold { core, .. } => (core + i, i),
            Pattern::Unfold { core, .. } => (i, core + i),
            Pattern::Exchange { core, .. } if i.is_multiple_of(2) => (core + i / 2, i / 2),
            Pattern::Exchange { core, .. } => (i / 2, core + i / 2),
        }
    }

    /// The directed flows `(src_rank, dst_rank)`, by source rank for
    /// halving-doubling and ring, by core rank for fold and unfold.
    pub fn flows(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        // Halving-doubling over a power of two of ranks, every layout the
        // identity there: `(i, i ^ d)` without the general case's
        // renumbering, as a proof counts 131,072 flows a step.
        let xor = match self.pattern {
            Pattern::Xor { d, .. } if self.total.is_power_of_two() => Some(d),
            _ => None,
        };
        (0..self.flow_count()).map(move |i| match xor {
            Some(d) => (i, i ^ d),
            None => self.flow(i),
        })
    }

    /// The flows of this step that `rank` sends or receives, at most two,
    /// written into `out`; returns how many.
    pub fn flows_of(&self, rank: usize, out: &mut [(usize, usize); 2]) -> usize {
        let c = self.layout.canonical_rank(rank, self.total);
        let n = self.canonical_flows_of(c, out);
        for f in &mut out[..n] {
            *f = (
                self.layout.engine_rank(f.0, self.total),
                self.layout.engine_rank(f.1, self.total),
            );
        }
        n
    }

    /// [`Step::flows_of`] in canonical ranks.
    fn canonical_flows_of(&self, rank: usize, out: &mut [(usize, usize); 2]) -> usize {
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
            Pattern::Prev { ranks } if rank < ranks => {
                out[0] = (rank, (rank + ranks - 1) % ranks);
                out[1] = ((rank + 1) % ranks, rank);
                if out[0] == out[1] { 1 } else { 2 }
            }
            Pattern::Fold { core, extra }
            | Pattern::Unfold { core, extra }
            | Pattern::Exchange { core, extra } => {
                let (e, c) = if rank >= core && rank < core + extra {
                    (rank, rank - core)
                } else if rank < extra {
                    (rank + core, rank)
                } else {
                    return 0;
                };
                match self.pattern {
                    Pattern::Fold { .. } => out[0] = (e, c),
                    Pattern::Unfold { .. } => out[0] = (c, e),
                    _ => {
                        out[0] = (e, c);
                        out[1] = (c, e);
                        return 2;
                    }
                }
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

    /// How the engine the schedule is for numbers its ranks.
    pub fn layout(&self) -> Layout {
        self.steps.first().map_or(Layout::Tail, |s| s.layout)
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
        steps: hd_steps(p, p, Layout::Tail),
    })
}

/// The halving-doubling steps over ranks 0..p of a schedule of `total`
/// ranks.
fn hd_steps(p: usize, total: usize, layout: Layout) -> Vec<Step> {
    let k = p.ilog2() as usize;
    let step = |phase, number, d: usize| Step {
        phase,
        number,
        distance: Some(d),
        total,
        pattern: Pattern::Xor { d, ranks: p },
        layout,
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
    folded_halving_doubling_as(x, FoldStyle::Planner)
}

/// How an implementation of halving-doubling folds a rank count that is
/// not a power of two (the sources are cited in [`super::engine`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FoldStyle {
    /// The planner's and `provisioner probe`'s: extra rank P' + i sends its
    /// buffer to rank i, and rank i sends the result back.
    Planner,
    /// Open MPI's Rabenseifner allreduce: ranks 2i and 2i + 1 (i < r)
    /// exchange half their buffers, the odd rank sends its reduced half to
    /// the even one, the even ranks and ranks 2r.. run halving-doubling,
    /// and the even rank sends the result to the odd one.
    OpenMpi,
    /// MPICH's reduce-scatter-allgather allreduce: rank 2i (i < r) sends
    /// its buffer to rank 2i + 1, the odd ranks and ranks 2r.. run
    /// halving-doubling, and the odd rank sends the result back.
    Mpich,
}

/// Halving-doubling over any `x` ranks folded as `style` folds, in that
/// implementation's rank numbers: the same steps as
/// [`folded_halving_doubling`] between the same canonical ranks, plus the
/// exchange step Open MPI's fold begins with.
pub fn folded_halving_doubling_as(x: usize, style: FoldStyle) -> Result<Schedule> {
    if x == 0 {
        return Err(Error::parameter(
            "ranks",
            "0 ranks: halving-doubling needs 1 or more",
        ));
    }
    let (core, extra) = split(x);
    if extra == 0 {
        return halving_doubling(x);
    }
    let layout = match style {
        FoldStyle::Planner => Layout::Tail,
        FoldStyle::OpenMpi => Layout::PairsCoreEven,
        FoldStyle::Mpich => Layout::PairsCoreOdd,
    };
    // The partners of a fold are P' apart in the planner's numbering and
    // neighbours (2i, 2i + 1) in the MPI libraries'.
    let apart = if layout == Layout::Tail { core } else { 1 };
    let step = |phase, number, pattern| Step {
        phase,
        number,
        distance: Some(apart),
        total: x,
        pattern,
        layout,
    };
    let mut steps = Vec::with_capacity(2 * core.ilog2() as usize + 3);
    if style == FoldStyle::OpenMpi {
        steps.push(step(Phase::Fold, 1, Pattern::Exchange { core, extra }));
    }
    let number = steps.len() + 1;
    steps.push(step(Phase::Fold, number, Pattern::Fold { core, extra }));
    steps.extend(hd_steps(core, x, layout));
    steps.push(step(Phase::Unfold, 1, Pattern::Unfold { core, extra }));
    Ok(Schedule { ranks: x, steps })
}

/// Ring over `p` ranks (1 or more): 2 (p - 1) steps.
pub fn ring(p: usize) -> Result<Schedule> {
    ring_with(p, Pattern::Next { ranks: p })
}

/// Ring over `p` ranks in which rank r sends to (r - 1) mod p, as Gloo's
/// ring allreduce does (see [`super::engine`]): 2 (p - 1) steps.
pub fn ring_backward(p: usize) -> Result<Schedule> {
    ring_with(p, Pattern::Prev { ranks: p })
}

fn ring_with(p: usize, pattern: Pattern) -> Result<Schedule> {
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
                pattern,
                layout: Layout::Tail,
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
