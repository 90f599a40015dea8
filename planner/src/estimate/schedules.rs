//! Send-level schedules: every message of every rank, with its size, the
//! step it belongs to and the messages it waits for.
//!
//! A schedule is a dependency graph of sends between ranks `0..P`. A send
//! may start once every send it depends on has been delivered and the
//! sending rank has spent `delay` on the reduction (γ per byte reduced) or
//! other computation it needs first. Sends are stored in an order where
//! every dependency comes first, in parallel arrays indexed by send id.
//!
//! The families, one module each, build on [`builder`]'s rank programs:
//!
//! - [`ring_hd`]: ring, halving-doubling and its fold, the hierarchical
//!   decompositions (BlueConnect, 2D); these can be streamed ([`Shape`],
//!   [`Sink`]) instead of stored;
//! - [`trees`]: the binary, double and overlapped trees, pipelined in
//!   chunks;
//! - [`nccl`]: NCCL-style rail-aligned rings and chain-and-tree trees;
//! - [`sparse`]: HiTopKComm and the top-k all-gather;
//! - [`baselines`]: the two-level allreduce and the parameter server.
//!
//! A new algorithm's schedule goes into its family's module (or a new
//! one), with one arm in `context::schedule`.
//!
//! Every send also has a step number for the step-synchronous mode; steps
//! hold sends that a synchronous execution would run together.

mod baselines;
mod builder;
mod nccl;
mod ring_hd;
mod sparse;
mod trees;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::limits;
pub(crate) use baselines::{parameter_server, two_level};
#[cfg(test)]
pub(crate) use nccl::nccl_tree_chunks;
pub(crate) use nccl::{
    nccl_rings, nccl_tree_chunk, nccl_tree_depth, nccl_tree_parents, nccl_trees,
};
pub(crate) use ring_hd::{build, stream};
pub use ring_hd::{folded_halving_doubling, halving_doubling, ring};
pub(crate) use sparse::{hitopk, topk_allgather, topk_elements};
pub(crate) use trees::{btree, mirror_tree, shape, trees};

/// No send.
pub(crate) const NONE: u32 = u32::MAX;

/// What the sends of a step do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepPhase {
    /// The extra ranks of a halving-doubling job that is not a power of
    /// two send their whole buffer to their partners among the core ranks.
    Fold,
    /// Reduce-scatter (ring or halving).
    ReduceScatter,
    /// All-gather (ring or doubling).
    AllGather,
    /// Tree reduction towards the root.
    Reduce,
    /// Tree broadcast from the root.
    Broadcast,
    /// Tree reduction and broadcast at once (overlapped tree, or the two
    /// trees of a double tree in different phases).
    ReduceBroadcast,
    /// The core ranks send the reduced buffer back to their extra partners.
    Unfold,
    /// Shards gathered to a master rank (binomial tree).
    Gather,
    /// Shards scattered from a master rank (binomial tree).
    Scatter,
    /// Workers push their gradient shards to the parameter servers.
    Push,
    /// Workers pull the reduced shards back from the servers.
    Pull,
}

impl StepPhase {
    /// The phase as the step table prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            StepPhase::ReduceScatter => "reduce-scatter",
            StepPhase::AllGather => "all-gather",
            StepPhase::Reduce => "reduce",
            StepPhase::Broadcast => "broadcast",
            StepPhase::ReduceBroadcast => "reduce+broadcast",
            StepPhase::Fold => "fold",
            StepPhase::Unfold => "unfold",
            StepPhase::Gather => "gather",
            StepPhase::Scatter => "scatter",
            StepPhase::Push => "push",
            StepPhase::Pull => "pull",
        }
    }
}

/// One step of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepInfo {
    /// What its sends do.
    pub phase: StepPhase,
    /// The topology level of a hierarchical decomposition (0: ranks under
    /// one switch); absent for flat algorithms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
}

/// A send-level schedule over ranks `0..ranks` (see the module
/// documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SendSchedule {
    ranks: usize,
    pub(crate) src: Vec<u32>,
    pub(crate) dst: Vec<u32>,
    pub(crate) bytes: Vec<u64>,
    /// Computation the sender does between its dependencies' delivery and
    /// the send, µs.
    pub(crate) delay_us: Vec<f64>,
    pub(crate) step: Vec<u32>,
    pub(crate) dep_start: Vec<u32>,
    pub(crate) deps: Vec<u32>,
    pub(crate) steps: Vec<StepInfo>,
    /// Computation each rank does after its last receive, µs (the
    /// accumulation of HiTopKComm when no all-gather follows it).
    pub(crate) tail_us: Vec<f64>,
    /// The last send each rank receives, or `NONE`.
    pub(crate) final_recv: Vec<u32>,
    /// Per send of a tree schedule, `tree * K + c` for chunk c of the
    /// tree's K; empty for the other schedules.
    pub(crate) chunk: Vec<u32>,
    chunks: usize,
    /// True when every send already waits for the previous send into the
    /// same receive buffer (NCCL's channels, each with its own buffers and
    /// credit: [`nccl_rings`], [`nccl_trees`]), so the event-driven mode's
    /// rendezvous per rank and step does not apply.
    pub(crate) channel_credit: bool,
}

/// The timeline a [`Turnaround`] is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timeline {
    /// The step-synchronous mode's: a chunk's first step starts when the
    /// steps before it have ended, and its last step ends with the step's
    /// slowest flow.
    StepSynchronous,
    /// The event-driven simulation's: a chunk's first send starts when its
    /// flow starts, and it has turned around when its last send is
    /// delivered.
    EventDriven,
}

impl Timeline {
    /// `step-synchronous` or `event-driven`.
    pub fn as_str(self) -> &'static str {
        match self {
            Timeline::StepSynchronous => "step-synchronous",
            Timeline::EventDriven => "event-driven",
        }
    }
}

/// Gradient turnaround of a pipelined tree: for each chunk, the time from
/// the start of its first reduction send to the end of its last broadcast
/// send, when every rank has it (C-Cube III-C defines it for the first
/// chunk), on the [`Timeline`] it names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Turnaround {
    /// The timeline the times are measured on.
    pub timeline: Timeline,
    /// Chunks, over every tree.
    pub chunks: usize,
    /// The first chunk of the first tree (C-Cube's gradient turnaround), µs.
    pub first_us: f64,
    /// Mean over the chunks, µs.
    pub mean_us: f64,
    /// The slowest chunk, µs.
    pub max_us: f64,
}

impl SendSchedule {
    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Number of sends.
    pub fn len(&self) -> usize {
        self.src.len()
    }

    /// True when there is no send (one rank).
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// The steps.
    pub fn steps(&self) -> &[StepInfo] {
        &self.steps
    }

    /// Chunks per tree (pipelined trees), or 1.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// `(src, dst, bytes)` of send `i`.
    pub fn send(&self, i: usize) -> (usize, usize, u64) {
        (self.src[i] as usize, self.dst[i] as usize, self.bytes[i])
    }

    /// The step of send `i`.
    pub fn step_of(&self, i: usize) -> usize {
        self.step[i] as usize
    }

    /// The sends that send `i` waits for.
    pub fn deps(&self, i: usize) -> &[u32] {
        &self.deps[self.dep_start[i] as usize..self.dep_start[i + 1] as usize]
    }

    /// Bytes sent in all, by every rank together.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// The tree that send `i` belongs to (0 outside tree schedules).
    pub fn tree_of(&self, i: usize) -> u32 {
        self.chunk
            .get(i)
            .map_or(0, |&c| c / self.chunks.max(1) as u32)
    }

    /// The gradient turnaround of a tree schedule from the time of every
    /// step (`step_us[s]`, as the step-synchronous mode gives them), or
    /// `None` for a schedule without chunks.
    pub fn turnaround(&self, step_us: &[f64]) -> Option<Turnaround> {
        let mut start = Vec::with_capacity(step_us.len() + 1);
        start.push(0.0);
        for &t in step_us {
            start.push(start.last().copied().unwrap_or(0.0) + t);
        }
        let at = |s: u32| start[(s as usize).min(start.len() - 1)];
        self.chunk_spans(Timeline::StepSynchronous, |i| {
            (at(self.step[i]), at(self.step[i] + 1))
        })
    }

    /// The gradient turnaround of a tree schedule on the event-driven
    /// timeline, from when each send started (`start_us`) and was
    /// delivered (`delivered_us`), or `None` for a schedule without chunks.
    pub(crate) fn turnaround_of_sends(
        &self,
        start_us: &[f64],
        delivered_us: &[f64],
    ) -> Option<Turnaround> {
        if start_us.len() != self.len() || delivered_us.len() != self.len() {
            return None;
        }
        self.chunk_spans(Timeline::EventDriven, |i| (start_us[i], delivered_us[i]))
    }

    /// Per chunk, the earliest start and the latest end over its sends
    /// (`span(i)` of send i), summed up.
    fn chunk_spans(
        &self,
        timeline: Timeline,
        span: impl Fn(usize) -> (f64, f64),
    ) -> Option<Turnaround> {
        if self.chunk.is_empty() {
            return None;
        }
        let count = self.chunk.iter().max().map_or(0, |&c| c as usize + 1);
        let mut spans = vec![(f64::INFINITY, f64::NEG_INFINITY); count];
        for (i, &c) in self.chunk.iter().enumerate() {
            let (lo, hi) = span(i);
            let e = &mut spans[c as usize];
            *e = (e.0.min(lo), e.1.max(hi));
        }
        let times: Vec<f64> = spans
            .iter()
            .filter(|e| e.0.is_finite())
            .map(|&(lo, hi)| hi - lo)
            .collect();
        let first = *times.first()?;
        Some(Turnaround {
            timeline,
            chunks: times.len(),
            first_us: first,
            mean_us: times.iter().sum::<f64>() / times.len() as f64,
            max_us: times.iter().copied().fold(0.0, f64::max),
        })
    }

    /// Bytes that rank `r` sends.
    pub fn bytes_sent_by(&self, r: usize) -> u64 {
        self.src
            .iter()
            .zip(&self.bytes)
            .filter(|&(&s, _)| s as usize == r)
            .map(|(_, &b)| b)
            .sum()
    }
}

#[cfg(test)]
impl SendSchedule {
    /// A schedule made by hand: `(src, dst, bytes, deps)` per send, every
    /// send in its own step order as given.
    pub(crate) fn by_hand(ranks: usize, sends: &[(u32, u32, u64, &[u32])]) -> Self {
        let mut s = SendSchedule {
            ranks,
            dep_start: vec![0],
            tail_us: vec![0.0; ranks],
            final_recv: vec![NONE; ranks],
            chunks: 1,
            ..SendSchedule::default()
        };
        for (i, &(src, dst, bytes, deps)) in sends.iter().enumerate() {
            s.src.push(src);
            s.dst.push(dst);
            s.bytes.push(bytes);
            s.delay_us.push(0.0);
            s.step.push(i as u32);
            s.steps.push(StepInfo {
                phase: StepPhase::ReduceScatter,
                level: None,
            });
            s.deps.extend_from_slice(deps);
            s.dep_start.push(s.deps.len() as u32);
        }
        s
    }
}

/// Splits `total` bytes into `parts` chunks whose sizes differ by at most
/// one byte, the larger first.
pub(crate) fn split(total: u64, parts: usize) -> Vec<u64> {
    let parts = parts.max(1) as u64;
    (0..parts)
        .map(|i| total / parts + u64::from(i < total % parts))
        .collect()
}

/// How a group reduces at one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Ring.
    Ring,
    /// Halving-doubling (the group size is a power of two).
    HalvingDoubling,
}

/// Takes the sends of a schedule one by one, in index order, as a
/// [`Builder`] makes them, instead of their being stored: the event-driven
/// mode's lone pass ([`super::sim::Lone`]) needs each send once, in that
/// order, and a stored ring of 1,024 ranks is 2 million sends of about
/// 40 bytes.
pub(crate) trait Sink {
    /// The next send: from `src` to `dst`, `bytes`, in `step`, after the
    /// sends `deps` (earlier indices; `NONE` stands for no send) and
    /// `delay_us` of computation.
    fn send(&mut self, src: u32, dst: u32, bytes: u64, step: u32, deps: &[u32], delay_us: f64);

    /// Told before the first send how many will come.
    fn reserve(&mut self, _sends: usize) {}
}

/// What is left of a schedule whose sends went to a [`Sink`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Streamed {
    /// Sends made.
    pub sends: usize,
    /// Steps, as [`SendSchedule::steps`].
    pub steps: usize,
    /// Bytes rank 0 sent, as [`SendSchedule::bytes_sent_by`].
    pub bytes_sent_by_0: u64,
    /// As [`SendSchedule`]'s `tail_us`.
    pub tail_us: Vec<f64>,
    /// As [`SendSchedule`]'s `final_recv`.
    pub final_recv: Vec<u32>,
}

/// The schedules a [`Builder`] can stream to a [`Sink`] as well as store:
/// those made of ring and halving-doubling steps.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// [`hierarchical`]: the groups of every level and how they reduce;
    /// `labelled` numbers the steps' levels.
    Levels {
        levels: Vec<(Vec<Vec<u32>>, Kind)>,
        labelled: bool,
    },
    /// [`folded_halving_doubling`].
    FoldedHd,
}

/// Refuses a schedule of `sends` sends over `p` ranks whose simulation
/// would take more memory than [`limits::SIMULATOR_MEMORY`]
/// ([`limits::SIMULATOR_BYTES_PER_SEND`] a send), before anything is
/// allocated; `sends` is computed from the shape alone (wide enough not to
/// overflow). Under [`sends_fit`] a schedule within the limit stops here
/// too, unbuilt.
fn check_sends(p: usize, sends: u128) -> Result<()> {
    let sends = u64::try_from(sends).unwrap_or(u64::MAX);
    let memory = sends.saturating_mul(limits::SIMULATOR_BYTES_PER_SEND);
    if limits::SIMULATOR_MEMORY.check(memory).is_err() {
        return Err(Error::TooManySends {
            job: None,
            ranks: p,
            sends,
            memory,
            limit: limits::SIMULATOR_MEMORY.max,
        });
    }
    if COUNT_ONLY.get() {
        COUNT.set(sends);
        return Err(Error::Internal(COUNTED.to_string()));
    }
    Ok(())
}

thread_local! {
    /// Set by [`sends_fit`]: builders stop once their sends are counted.
    static COUNT_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The count a builder stopped at under [`sends_fit`].
    static COUNT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The stop of a counted builder under [`sends_fit`].
const COUNTED: &str = "schedule counted, not built";

/// Whether the schedule `build` makes fits the simulator's memory limit,
/// found without building it: every builder checks its send count (from
/// its shape alone) before it allocates, and under this call stops right
/// there.
/// A builder that has no count to check is built and dropped. Gives the
/// count (from the shape, which can be a few above the sends made: a
/// tree's root sends nothing up) or the sends built.
pub(super) fn sends_fit(build: impl FnOnce() -> Result<SendSchedule>) -> Result<u64> {
    COUNT_ONLY.set(true);
    let built = build();
    COUNT_ONLY.set(false);
    match built {
        Err(Error::Internal(m)) if m == COUNTED => Ok(COUNT.get()),
        Err(e) => Err(e),
        Ok(s) => Ok(s.len() as u64),
    }
}

fn check_same_size(groups: &[Vec<u32>]) -> Result<()> {
    let g = groups.first().map_or(0, Vec::len);
    match groups.iter().find(|group| group.len() != g) {
        Some(other) => Err(Error::Internal(format!(
            "groups of one level have {g} and {} ranks",
            other.len()
        ))),
        None => Ok(()),
    }
}
