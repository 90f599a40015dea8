//! Send-level schedules: every message of every rank, with its size, the
//! step it belongs to and the messages it waits for.
//!
//! A schedule is a dependency graph of sends between ranks `0..P`. A send
//! may start once every send it depends on has been delivered and the
//! sending rank has spent `delay` on the reduction (γ per byte reduced) or
//! other computation it needs first. Sends are stored in an order where
//! every dependency comes first, in parallel arrays indexed by send id.
//!
//! - Ring and halving-doubling phases follow the rank's program: each send
//!   of a rank depends on the last message the rank received (the data it
//!   forwards or reduces) and on the rank's own previous send having been
//!   delivered (a rank posts one send at a time, as a send-receive loop
//!   does), and pays the reduction of the received message when the phase
//!   reduces. So rank r sends its next chunk as soon as the chunk it needs
//!   has arrived and its link is free of its last one, with no barrier
//!   across ranks.
//! - Ring over a group of g ranks (EFLOPS V-A1): g - 1 reduce-scatter steps
//!   and g - 1 all-gather steps; in reduce-scatter step s the rank at
//!   position i sends chunk (i - s) mod g of the g chunks of its buffer to
//!   position i + 1.
//! - Halving-doubling over a power-of-two group (EFLOPS V-A2, Rabenseifner):
//!   reduce-scatter with distances 1, 2, ..., g/2, each rank sending the
//!   half of its current segment that its peer keeps, then all-gather with
//!   the distances reversed, each rank sending its whole segment. The
//!   distance order is that of [`crate::ranks::schedule`], which EFLOPS
//!   Algorithm 1 is built for.
//! - Halving-doubling over X ranks that is not a power of two (the fold of
//!   Rabenseifner's algorithm, with the pairing of
//!   [`crate::ranks::folded_halving_doubling`]): with P' the largest power
//!   of two below X, extra rank P' + i (i < X - P') first sends its whole
//!   buffer to core rank i (the `fold` step), which reduces it (γ per byte)
//!   before its first halving-doubling send; ranks 0..P' run
//!   halving-doubling; then core rank i sends the whole reduced buffer back
//!   to rank P' + i (the `unfold` step) once its last all-gather receive
//!   has arrived.
//! - Hierarchical decompositions (BlueConnect, 2D) chain these phases over
//!   the levels of a topology: reduce-scatter at every level from the
//!   lowest, then all-gather from the highest; groups at one level run at
//!   the same time.
//! - Trees use the in-order binary tree of NCCL (rank r with lowest set bit
//!   b has parent `(r ^ b) | 2b`, or `r ^ b` when that is P or more; rank 0
//!   is the root and has one child) and its mirror image `r -> P - 1 - r`
//!   (shifted by one rank when P is odd) as the second tree of the double
//!   tree, so that every rank is an inner node of at most one tree. The
//!   message is split into K chunks; a rank sends chunk c to its parent once
//!   it has chunk c from every child and its chunk c - 1 has been delivered
//!   (one chunk at a time per link, as a pipeline does), and broadcasts the
//!   same way. Without overlap the root starts the broadcast only after the
//!   last chunk is reduced (C-Cube Fig. 5a); with overlap (the C-Cube
//!   overlapped tree, Fig. 5c) chunk c goes down as soon as it is reduced.
//! - NCCL-style rings (`nccl-ring`, [`nccl_rings`]): one ring per NIC of a
//!   server (C of them), each a ring over every rank with 1/C of the
//!   message. Ring c enters a server at the GPU on rail c, visits the
//!   others over the intra-server links, and the last GPU hands the data
//!   back to the GPU on rail c (NCCL's PXN), which sends it on rail c to
//!   the next server: every inter-server hop stays on one rail. Each rank
//!   runs one program per ring (NCCL's channels), and every send waits
//!   for the previous send into the same buffer, so the rendezvous of the
//!   event-driven mode is per channel and adds no wait.
//! - NCCL-style trees (`nccl-tree`, [`nccl_trees`]): per NIC c of a server
//!   two trees over every rank ([`nccl_tree_parents`]), a chain from the
//!   GPU on rail c through the others inside each server and NCCL's double
//!   binary tree ([`btree`] and [`mirror_tree`]) over the servers' rail-c
//!   GPUs, run as the overlapped trees above in NCCL's chunks
//!   ([`nccl_tree_chunk`]), each tree a channel as the rings are.
//!
//! Every send also has a step number for the step-synchronous mode; steps
//! hold sends that a synchronous execution would run together.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::limits;
use crate::ranks::{self, Phase};

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

/// Builds a schedule, keeping each rank's last receive and the computation
/// it owes before its next send. The sends are stored in the schedule, or
/// with a [`Sink`] handed to it one by one (then each step's sends are kept
/// until the next step starts, for the receives).
struct Builder<'a> {
    s: SendSchedule,
    sink: Option<&'a mut dyn Sink>,
    /// Sends made so far.
    made: u32,
    /// With a sink: (receiver, bytes) of the sends since `step_first`.
    recent: Vec<(u32, u64)>,
    step_first: u32,
    bytes_by_0: u64,
    /// Last send delivered to each rank, in program order.
    last_recv: Vec<u32>,
    /// Last send of each rank's program.
    last_send: Vec<u32>,
    /// Computation each rank owes before its next send, µs.
    pending_us: Vec<f64>,
    /// Bytes each rank holds in the current decomposition.
    held: Vec<u64>,
    gamma_us: f64,
}

impl<'a> Builder<'a> {
    fn new(ranks: usize, gamma_us: f64) -> Result<Self> {
        if ranks == 0 || ranks >= NONE as usize {
            return Err(Error::parameter(
                "ranks",
                format!("{ranks} ranks: an allreduce needs 1 to {} ranks", NONE - 1),
            ));
        }
        Ok(Self {
            s: SendSchedule {
                ranks,
                dep_start: vec![0],
                chunks: 1,
                ..SendSchedule::default()
            },
            sink: None,
            made: 0,
            recent: Vec::new(),
            step_first: 0,
            bytes_by_0: 0,
            last_recv: vec![NONE; ranks],
            last_send: vec![NONE; ranks],
            pending_us: vec![0.0; ranks],
            held: vec![0; ranks],
            gamma_us,
        })
    }

    /// A builder that hands its sends to `sink` instead of storing them.
    fn streaming(ranks: usize, gamma_us: f64, sink: &'a mut dyn Sink) -> Result<Self> {
        let mut b = Self::new(ranks, gamma_us)?;
        b.sink = Some(sink);
        Ok(b)
    }

    /// Makes room for `sends` more sends of one or two dependencies.
    fn reserve(&mut self, sends: usize) {
        if self.sink.is_some() {
            return;
        }
        let s = &mut self.s;
        s.src.reserve(sends);
        s.dst.reserve(sends);
        s.bytes.reserve(sends);
        s.delay_us.reserve(sends);
        s.step.reserve(sends);
        s.dep_start.reserve(sends);
        s.deps.reserve(2 * sends);
    }

    /// Makes step `index` exist with `phase`, merging reduce and broadcast.
    fn step(&mut self, index: usize, phase: StepPhase, level: Option<u8>) -> u32 {
        if self.s.steps.len() <= index {
            self.recent.clear();
            self.step_first = self.made;
        }
        while self.s.steps.len() <= index {
            self.s.steps.push(StepInfo { phase, level });
        }
        let info = &mut self.s.steps[index];
        if info.phase != phase {
            info.phase = StepPhase::ReduceBroadcast;
        }
        index as u32
    }

    /// Adds a send with explicit dependencies.
    fn push(&mut self, src: u32, dst: u32, bytes: u64, step: u32, deps: &[u32], delay: f64) -> u32 {
        let id = self.made;
        self.made += 1;
        if src == 0 {
            self.bytes_by_0 += bytes;
        }
        if let Some(sink) = self.sink.as_mut() {
            sink.send(src, dst, bytes, step, deps, delay);
            self.recent.push((dst, bytes));
            return id;
        }
        self.s.src.push(src);
        self.s.dst.push(dst);
        self.s.bytes.push(bytes);
        self.s.delay_us.push(delay);
        self.s.step.push(step);
        for &d in deps.iter().filter(|&&d| d != NONE) {
            debug_assert!(d < id, "a send depends on a later one");
            self.s.deps.push(d);
        }
        self.s.dep_start.push(self.s.deps.len() as u32);
        id
    }

    /// Adds the next send of `src`'s program: it waits for `src`'s last
    /// receive and for `src`'s previous send to be delivered, and pays the
    /// computation `src` owes.
    fn program_send(&mut self, src: u32, dst: u32, bytes: u64, step: u32) -> u32 {
        let r = src as usize;
        let deps = [self.last_recv[r], self.last_send[r]];
        let delay = std::mem::take(&mut self.pending_us[r]);
        let id = self.push(src, dst, bytes, step, &deps, delay);
        self.last_send[r] = id;
        id
    }

    /// Records that send `id` reached `dst`; a reduce-scatter receive owes
    /// its reduction before `dst` sends again.
    fn deliver(&mut self, id: u32, reduce: bool) -> Result<()> {
        let (dst, bytes) = if self.sink.is_some() {
            match self.recent.get(id.wrapping_sub(self.step_first) as usize) {
                Some(&(dst, bytes)) => (dst as usize, bytes),
                None => {
                    return Err(Error::Internal(format!(
                        "send {id} is received after its step, which a streamed schedule cannot look up"
                    )));
                }
            }
        } else {
            (self.s.dst[id as usize] as usize, self.s.bytes[id as usize])
        };
        self.last_recv[dst] = id;
        if reduce {
            self.pending_us[dst] += self.gamma_us * bytes as f64;
        }
        Ok(())
    }

    /// One ring phase over every group at once (the groups of a level all
    /// have the same size).
    fn ring_phase(&mut self, groups: &[Vec<u32>], reduce: bool, level: Option<u8>) -> Result<()> {
        let g = groups.first().map_or(0, Vec::len);
        if g < 2 {
            return Ok(());
        }
        check_same_size(groups)?;
        let phase = if reduce {
            StepPhase::ReduceScatter
        } else {
            StepPhase::AllGather
        };
        // Chunk sizes: a reduce-scatter splits what the group holds; an
        // all-gather passes on what each position owns.
        let sizes: Vec<Vec<u64>> = groups
            .iter()
            .map(|group| {
                if reduce {
                    split(self.held[group[0] as usize], g)
                } else {
                    // Position i owns chunk (i + 1) mod g.
                    let mut sizes = vec![0; g];
                    for (i, &r) in group.iter().enumerate() {
                        sizes[(i + 1) % g] = self.held[r as usize];
                    }
                    sizes
                }
            })
            .collect();
        let mut ids = Vec::with_capacity(groups.len() * g);
        for s in 0..g - 1 {
            let step = self.step(self.s.steps.len(), phase, level);
            ids.clear();
            // Position i sends chunk (i - s) mod g in a reduce-scatter,
            // (i + 1 - s) mod g in an all-gather, to position i + 1.
            let first = if reduce {
                (g - s % g) % g
            } else {
                (1 + g - s % g) % g
            };
            for (group, sizes) in groups.iter().zip(&sizes) {
                let mut chunk = first;
                for i in 0..g {
                    let next = if i + 1 == g { 0 } else { i + 1 };
                    let id = self.program_send(group[i], group[next], sizes[chunk], step);
                    ids.push(id);
                    chunk = if chunk + 1 == g { 0 } else { chunk + 1 };
                }
            }
            for &id in &ids {
                self.deliver(id, reduce)?;
            }
        }
        for (group, sizes) in groups.iter().zip(&sizes) {
            for (i, &r) in group.iter().enumerate() {
                self.held[r as usize] = if reduce {
                    sizes[(i + 1) % g]
                } else {
                    sizes.iter().sum()
                };
            }
        }
        Ok(())
    }

    /// One halving-doubling phase over every group at once, with the
    /// distances of [`crate::ranks::halving_doubling`] over the group size.
    fn hd_phase(&mut self, groups: &[Vec<u32>], reduce: bool, level: Option<u8>) -> Result<()> {
        let g = groups.first().map_or(0, Vec::len);
        if g < 2 {
            return Ok(());
        }
        check_same_size(groups)?;
        if !g.is_power_of_two() {
            return Err(Error::Internal(format!(
                "halving-doubling over a group of {g} ranks, which is not a power of two"
            )));
        }
        let phase = if reduce {
            Phase::ReduceScatter
        } else {
            Phase::AllGather
        };
        for step in ranks::halving_doubling(g)?.steps {
            if let (true, Some(d)) = (step.phase == phase, step.distance) {
                self.hd_step(groups, d, reduce, level)?;
            }
        }
        Ok(())
    }

    /// One halving-doubling step of rank distance `d` over every group at
    /// once: in a reduce-scatter each rank sends the half of what it holds
    /// that its peer keeps; in an all-gather, all it holds.
    fn hd_step(
        &mut self,
        groups: &[Vec<u32>],
        d: usize,
        reduce: bool,
        level: Option<u8>,
    ) -> Result<()> {
        let g = groups.first().map_or(0, Vec::len);
        // The segment each rank holds: only its length matters.
        let mut seg: Vec<(u64, u64)> = (0..self.s.ranks).map(|r| (0, self.held[r])).collect();
        let mut ids = Vec::with_capacity(groups.len() * g);
        let mut sent = Vec::with_capacity(groups.len() * g);
        let phase = if reduce {
            StepPhase::ReduceScatter
        } else {
            StepPhase::AllGather
        };
        let step = self.step(self.s.steps.len(), phase, level);
        for group in groups {
            for (i, &r) in group.iter().enumerate() {
                let peer = group[i ^ d];
                let bytes = if reduce {
                    let (lo, hi) = seg[r as usize];
                    let mid = lo + (hi - lo) / 2;
                    if i & d == 0 {
                        seg[r as usize] = (lo, mid);
                        hi - mid
                    } else {
                        seg[r as usize] = (mid, hi);
                        mid - lo
                    }
                } else {
                    self.held[r as usize]
                };
                ids.push(self.program_send(r, peer, bytes, step));
                sent.push((peer, bytes));
            }
        }
        for &id in &ids {
            self.deliver(id, reduce)?;
        }
        for &(peer, bytes) in &sent {
            let r = peer as usize;
            if reduce {
                self.held[r] = seg[r].1 - seg[r].0;
            } else {
                self.held[r] += bytes;
            }
        }
        Ok(())
    }

    /// A fold or unfold step of [`crate::ranks::folded_halving_doubling`]:
    /// each of its flows sends everything its source holds (the whole
    /// buffer `n` when folding), and the partner reduces a folded buffer.
    fn pair_step(&mut self, step: &ranks::Step, n: u64) -> Result<()> {
        let (phase, fold) = match step.phase {
            Phase::Fold => (StepPhase::Fold, true),
            _ => (StepPhase::Unfold, false),
        };
        let id = self.step(self.s.steps.len(), phase, None);
        let ids: Vec<u32> = step
            .flows()
            .map(|(src, dst)| {
                let bytes = if fold { n } else { self.held[src] };
                self.program_send(src as u32, dst as u32, bytes, id)
            })
            .collect();
        for id in ids {
            // The partner reduces the extra rank's buffer into its own
            // before it sends in halving-doubling.
            self.deliver(id, fold)?;
        }
        Ok(())
    }

    fn phase(
        &mut self,
        kind: Kind,
        groups: &[Vec<u32>],
        reduce: bool,
        level: Option<u8>,
    ) -> Result<()> {
        match kind {
            Kind::Ring => self.ring_phase(groups, reduce, level),
            Kind::HalvingDoubling => self.hd_phase(groups, reduce, level),
        }
    }

    fn finish(mut self) -> Result<SendSchedule> {
        self.s.tail_us = self.pending_us;
        self.s.final_recv = self.last_recv;
        Ok(self.s)
    }
}

/// Refuses a schedule of more than [`limits::SIMULATED_SENDS`] sends over
/// `p` ranks before anything is allocated; `sends` is computed from the
/// shape alone (wide enough not to overflow). Under [`sends_fit`] a
/// schedule within the limit stops here too, unbuilt.
fn check_sends(p: usize, sends: u128) -> Result<()> {
    let sends = u64::try_from(sends).unwrap_or(u64::MAX);
    if limits::SIMULATED_SENDS.check(sends).is_err() {
        return Err(Error::TooManySends {
            job: None,
            ranks: p,
            sends,
            limit: limits::SIMULATED_SENDS.max,
        });
    }
    if COUNT_ONLY.get() {
        return Err(Error::Internal(COUNTED.to_string()));
    }
    Ok(())
}

thread_local! {
    /// Set by [`sends_fit`]: builders stop once their sends are counted.
    static COUNT_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The stop of a counted builder under [`sends_fit`].
const COUNTED: &str = "schedule counted, not built";

/// Whether the schedule `build` makes fits the send limit, found without
/// building it: every builder checks its send count (from its shape
/// alone) before it allocates, and under this call stops right there.
/// A builder that has no count to check is built and dropped.
pub(super) fn sends_fit(build: impl FnOnce() -> Result<SendSchedule>) -> Result<()> {
    COUNT_ONLY.set(true);
    let built = build();
    COUNT_ONLY.set(false);
    match built {
        Err(Error::Internal(m)) if m == COUNTED => Ok(()),
        Err(e) => Err(e),
        Ok(_) => Ok(()),
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
/// allocated) beyond [`limits::SIMULATED_SENDS`].
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

/// HiTopKComm (Algorithm 2) with `rows` the GPUs of each node (the
/// intra-node groups) and `cols` the j-th GPU of every node: a ring
/// reduce-scatter in every row (eq. 7), top-k selection of ρ·d/n elements,
/// an all-gather in every column of the selected values and their indices
/// (`w` + 4 bytes per element, `w` the gradient's element width), their
/// accumulation, and an all-gather in every row of the accumulated shard,
/// sent as value-index pairs (ρ·m of the shard's elements) while that is
/// smaller than the dense shard, dense otherwise, as
/// [`super::models::hitopk_sent`] counts them (at
/// most the whole shard). The all-gathers are recursive doubling when the
/// group is a power of two (the `α log m` of eq. 9 and `α log n` of
/// eq. 10), ring otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) fn hitopk(
    p: usize,
    rows: &[Vec<u32>],
    cols: &[Vec<u32>],
    n: u64,
    density: f64,
    element_bytes: u32,
    gamma_us: f64,
    topk_us: f64,
) -> Result<SendSchedule> {
    let (w, pair) = element_and_pair_bytes(element_bytes);
    let kind = |groups: &[Vec<u32>]| {
        if groups.first().is_some_and(|g| g.len().is_power_of_two()) {
            Kind::HalvingDoubling
        } else {
            Kind::Ring
        }
    };
    // A ring reduce-scatter and all-gather over the rows and an
    // all-gather over the columns, each at most g - 1 or m - 1 steps of p
    // sends.
    let (g, m) = (
        rows.first().map_or(1, Vec::len) as u128,
        cols.first().map_or(1, Vec::len) as u128,
    );
    check_sends(p, (2 * g + m) * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.held.fill(n);
    b.ring_phase(rows, true, Some(0))?;
    let m = cols.first().map_or(1, Vec::len);
    let g = rows.first().map_or(1, Vec::len).max(1);
    for r in 0..p {
        let shard = b.held[r];
        // Top-k selection over the shard, then k = ρ·(shard / w) elements
        // of w + 4 bytes (value and index) to gather.
        b.pending_us[r] += topk_us * shard as f64;
        let k = (density * (shard / w) as f64).ceil() as u64;
        b.held[r] = pair * k;
    }
    b.phase(kind(cols), cols, false, Some(1))?;
    for r in 0..p {
        let shard = n / g as u64;
        // Accumulating the m sets of k values into the shard.
        b.pending_us[r] += gamma_us * (b.held[r] / pair * w) as f64;
        let elements = (density * m as f64 * (shard / w) as f64).ceil() as u64;
        b.held[r] = (elements * pair).min(shard);
    }
    b.phase(kind(rows), rows, false, Some(0))?;
    b.finish()
}

/// Gloo's two-level allreduce (BlueConnect eq. 4): in every group (the
/// ranks under one switch, `groups`, the first of each its master) a ring
/// reduce-scatter and a binomial gather of the shards to the master (the
/// reduce, `T_r + T_c`); an allreduce among the masters (`masters`),
/// halving-doubling when their count is a power of two and ring otherwise;
/// then a binomial scatter from the master and a ring all-gather in every
/// group (the broadcast, `T_c + T_r`).
pub(crate) fn two_level(
    p: usize,
    groups: &[Vec<u32>],
    masters: &[u32],
    n: u64,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let g = groups.first().map_or(1, Vec::len).max(1);
    let m = masters.len().max(1);
    check_sends(p, 4 * p as u128 * g as u128 + 2 * m as u128 * m as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.held.fill(n);
    b.ring_phase(groups, true, Some(0))?;
    // Position i owns chunk (i + 1) mod g of `split(n, g)` after the
    // reduce-scatter.
    let sizes = split(n, g);
    let owned = |i: usize| sizes[(i + 1) % g];
    let rounds = g.next_power_of_two().trailing_zeros() as usize;
    // Gather: in round k, position i with i mod 2^(k+1) = 2^k sends the
    // shards of positions i..i + 2^k to i - 2^k.
    for k in 0..rounds {
        let d = 1usize << k;
        let step = b.step(b.s.steps.len(), StepPhase::Gather, Some(0));
        let mut ids = Vec::new();
        for group in groups {
            for i in (d..g).step_by(2 * d) {
                let bytes: u64 = (i..(i + d).min(g)).map(owned).sum();
                ids.push(b.program_send(group[i], group[i - d], bytes, step));
            }
        }
        for id in ids {
            b.deliver(id, false)?;
        }
    }
    let kind = if m.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    };
    let top = vec![masters.to_vec()];
    for &r in masters {
        b.held[r as usize] = n;
    }
    b.phase(kind, &top, true, Some(1))?;
    b.phase(kind, &top, false, Some(1))?;
    // Scatter: the gather's rounds backwards.
    for k in (0..rounds).rev() {
        let d = 1usize << k;
        let step = b.step(b.s.steps.len(), StepPhase::Scatter, Some(0));
        let mut ids = Vec::new();
        for group in groups {
            for i in (d..g).step_by(2 * d) {
                let bytes: u64 = (i..(i + d).min(g)).map(owned).sum();
                ids.push(b.program_send(group[i - d], group[i], bytes, step));
            }
        }
        for id in ids {
            b.deliver(id, false)?;
        }
    }
    for group in groups {
        for (i, &r) in group.iter().enumerate() {
            b.held[r as usize] = owned(i);
        }
    }
    b.ring_phase(groups, false, Some(0))?;
    b.finish()
}

/// Top-k sparse allreduce by one flat all-gather (the baseline HiTopKComm
/// improves on): every rank selects `k = ⌈ρ·n/w⌉` of its `n/w` elements of
/// `w` bytes (the top-k selection costs `topk_us` a byte of the whole
/// buffer), all-gathers them as value-index pairs (`w + 4` bytes each),
/// by recursive doubling when `p` is a power of two and ring otherwise,
/// and accumulates the `p·k` pairs (γ per value byte).
pub(crate) fn topk_allgather(
    p: usize,
    n: u64,
    density: f64,
    element_bytes: u32,
    gamma_us: f64,
    topk_us: f64,
) -> Result<SendSchedule> {
    let (w, pair) = element_and_pair_bytes(element_bytes);
    check_sends(p, p as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    let k = topk_elements(n, density, element_bytes);
    for r in 0..p {
        b.pending_us[r] += topk_us * n as f64;
        b.held[r] = pair * k;
    }
    let kind = if p.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    };
    b.phase(kind, &[(0..p as u32).collect()], false, None)?;
    for r in 0..p {
        b.pending_us[r] += gamma_us * (w * k * p as u64) as f64;
    }
    b.finish()
}

/// The bytes of a gradient element of `element_bytes` (at least 1), and
/// of a selected element sent with its index.
fn element_and_pair_bytes(element_bytes: u32) -> (u64, u64) {
    let w = u64::from(element_bytes.max(1));
    (w, w + super::models::INDEX_BYTES as u64)
}

/// The elements a top-k selection keeps of `n` bytes of `element_bytes`
/// wide elements at density ρ: `⌈ρ·n/w⌉`.
pub(crate) fn topk_elements(n: u64, density: f64, element_bytes: u32) -> u64 {
    (density * (n / u64::from(element_bytes.max(1))) as f64).ceil() as u64
}

/// A sharded parameter server with a server on every rank (colocated, as
/// BytePS and ps-lite run one server per worker machine): rank j holds
/// shard j of `split(n, p)`. Every rank pushes shard j to rank j, all at
/// once; server j reduces the p - 1 pushes it receives (γ a byte) and then
/// every worker pulls its copy of shard j, all at once.
pub(crate) fn parameter_server(p: usize, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    check_sends(p, 2 * p as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    if p == 1 {
        return b.finish();
    }
    let shards = split(n, p);
    let push = b.step(0, StepPhase::Push, None);
    let mut into: Vec<Vec<u32>> = vec![Vec::with_capacity(p - 1); p];
    for r in 0..p {
        for (j, incoming) in into.iter_mut().enumerate() {
            if j != r {
                incoming.push(b.push(r as u32, j as u32, shards[j], push, &[], 0.0));
            }
        }
    }
    let pull = b.step(1, StepPhase::Pull, None);
    let mut last = vec![NONE; p];
    for (j, incoming) in into.iter().enumerate() {
        let reduce = gamma_us * ((p - 1) as u64 * shards[j]) as f64;
        for (r, slot) in last.iter_mut().enumerate() {
            if r != j {
                *slot = b.push(j as u32, r as u32, shards[j], pull, incoming, reduce);
            }
        }
    }
    b.last_recv = last;
    b.finish()
}

/// The in-order binary tree over ranks `0..p`: `parent[r]`, `NONE` for the
/// root (rank 0).
pub(crate) fn btree(p: usize) -> Vec<u32> {
    let mut parent = vec![NONE; p];
    for (r, slot) in parent.iter_mut().enumerate().skip(1) {
        let b = r & r.wrapping_neg();
        let up = (r ^ b) | (b << 1);
        *slot = if up >= p { (r ^ b) as u32 } else { up as u32 };
    }
    parent
}

/// The second tree of the double tree: the mirror image of [`btree`]
/// (`r -> p - 1 - r`) for even p, the tree shifted by one rank for odd p.
pub(crate) fn mirror_tree(p: usize) -> Vec<u32> {
    let a = btree(p);
    (0..p)
        .map(|r| {
            if p.is_multiple_of(2) {
                match a[p - 1 - r] {
                    NONE => NONE,
                    up => (p - 1) as u32 - up,
                }
            } else {
                match a[(r + p - 1) % p] {
                    NONE => NONE,
                    up => ((up as usize + 1) % p) as u32,
                }
            }
        })
        .collect()
}

/// Children, depth and height (leaves 0) of every node of a tree.
pub(crate) struct TreeShape {
    pub children: Vec<Vec<u32>>,
    pub depth: Vec<u32>,
    pub height: Vec<u32>,
    pub root: usize,
}

pub(crate) fn shape(parent: &[u32]) -> Result<TreeShape> {
    let p = parent.len();
    let mut children = vec![Vec::new(); p];
    let mut root = None;
    for (r, &up) in parent.iter().enumerate() {
        if up == NONE {
            root = Some(r);
        } else {
            children[up as usize].push(r as u32);
        }
    }
    let root = root.ok_or_else(|| Error::Internal("a tree without a root".to_string()))?;
    // Depth-first order from the root: parents before children.
    let mut order = Vec::with_capacity(p);
    let mut stack = vec![root as u32];
    let mut depth = vec![0u32; p];
    while let Some(v) = stack.pop() {
        order.push(v);
        for &c in &children[v as usize] {
            depth[c as usize] = depth[v as usize] + 1;
            stack.push(c);
        }
    }
    if order.len() != p {
        return Err(Error::Internal(format!(
            "a tree over {p} ranks reaches only {} of them",
            order.len()
        )));
    }
    let mut height = vec![0u32; p];
    for &v in order.iter().rev() {
        if let Some(up) = parent.get(v as usize).copied().filter(|&u| u != NONE) {
            height[up as usize] = height[up as usize].max(height[v as usize] + 1);
        }
    }
    Ok(TreeShape {
        children,
        depth,
        height,
        root,
    })
}

/// A tree with its shape and the part of the message it carries.
struct TreeJob {
    parent: Vec<u32>,
    shape: TreeShape,
    chunks: Vec<u64>,
    /// `up[v * K + c]`: v's send of chunk c to its parent.
    up: Vec<u32>,
}

/// Pipelined tree allreduce of `n` bytes in `k` chunks per tree over the
/// given trees (one for the binary and overlapped trees, two for the
/// double tree, each carrying its share of the message).
pub(crate) fn trees(
    p: usize,
    parents: Vec<Vec<u32>>,
    n: u64,
    k: usize,
    overlap: bool,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let k = k.max(1);
    // Every chunk goes up and down every tree once per non-root rank.
    check_sends(p, 2 * parents.len() as u128 * k as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.s.chunks = k;
    if p == 1 {
        return b.finish();
    }
    let shares = split(n, parents.len());
    let mut jobs = Vec::with_capacity(parents.len());
    for (parent, share) in parents.into_iter().zip(shares) {
        let shape = shape(&parent)?;
        jobs.push(TreeJob {
            parent,
            shape,
            chunks: split(share, k),
            up: vec![NONE; p * k],
        });
    }
    // Reductions: chunk by chunk, children (lower height) first.
    for (t, job) in jobs.iter_mut().enumerate() {
        let mut by_height: Vec<u32> = (0..p as u32)
            .filter(|&v| job.parent[v as usize] != NONE)
            .collect();
        by_height.sort_by_key(|&v| (job.shape.height[v as usize], v));
        for c in 0..k {
            for &v in &by_height {
                let vi = v as usize;
                let mut deps: Vec<u32> = job.shape.children[vi]
                    .iter()
                    .map(|&u| job.up[u as usize * k + c])
                    .collect();
                if c > 0 {
                    deps.push(job.up[vi * k + c - 1]);
                }
                let kids = job.shape.children[vi].len() as f64;
                let step = b.step(job.shape.height[vi] as usize + c, StepPhase::Reduce, None);
                let delay = gamma_us * kids * job.chunks[c] as f64;
                job.up[vi * k + c] = b.push(v, job.parent[vi], job.chunks[c], step, &deps, delay);
                b.s.chunk.push((t * k + c) as u32);
            }
        }
    }
    // Broadcasts: chunk by chunk, parents (lower depth) first.
    for (t, job) in jobs.iter().enumerate() {
        let root = job.shape.root;
        let h = job.shape.height[root] as usize;
        let base = if overlap { h } else { h + k - 1 };
        let mut by_depth: Vec<u32> = (0..p as u32)
            .filter(|&v| !job.shape.children[v as usize].is_empty())
            .collect();
        by_depth.sort_by_key(|&v| (job.shape.depth[v as usize], v));
        // down[(v, child index, c)] of the previous chunk (a binary tree
        // has two children, a server's head in `nccl-tree` three), and
        // the broadcast receive of every rank for the current chunk.
        let mut prev_down: Vec<u32> = vec![NONE; 3 * p];
        let mut recv: Vec<u32> = vec![NONE; p];
        for c in 0..k {
            for &v in &by_depth {
                let vi = v as usize;
                let kids = &job.shape.children[vi];
                let mut deps: Vec<u32> = Vec::with_capacity(kids.len() + 2);
                let mut delay = 0.0;
                if vi == root {
                    deps.extend(kids.iter().map(|&u| job.up[u as usize * k + c]));
                    if !overlap && c == 0 {
                        deps.extend(kids.iter().map(|&u| job.up[u as usize * k + k - 1]));
                    }
                    // The root reduces chunk c from its children before
                    // it goes down. Without overlap it reduced every chunk
                    // as it arrived during the reduction, so only the last
                    // one delays the first broadcast.
                    let reduced = match (overlap, c) {
                        (true, _) => job.chunks[c],
                        (false, 0) => job.chunks[k - 1],
                        (false, _) => 0,
                    };
                    delay = gamma_us * kids.len() as f64 * reduced as f64;
                } else {
                    deps.push(recv[vi]);
                }
                let step = b.step(
                    base + c + job.shape.depth[vi] as usize,
                    StepPhase::Broadcast,
                    None,
                );
                for (x, &u) in kids.iter().enumerate() {
                    let slot = 3 * vi + x.min(2);
                    let mut d = deps.clone();
                    d.push(prev_down[slot]);
                    let id = b.push(v, u, job.chunks[c], step, &d, delay);
                    b.s.chunk.push((t * k + c) as u32);
                    prev_down[slot] = id;
                    recv[u as usize] = id;
                }
            }
        }
    }
    b.finish()
}

/// NCCL-style rail-aligned rings over `servers` (the ranks of every
/// server, all of one size g, position j of a server being the GPU on its
/// NIC of rail j), `n` bytes: C = g rings, ring c carrying part c of
/// `split(n, C)`, each a ring allreduce over all P ranks. Ring c visits
/// server s from its GPU c through the others in position order
/// (c, c + 1, ..., c - 1 mod g) over the intra-server links; the last GPU
/// hands the data back to GPU c over NVLink (NCCL's PXN), which sends it
/// through its NIC, on rail c, to GPU c of server s + 1. The hand-over is
/// a relay: it forwards what it receives without reducing it, and posts
/// one forward at a time per ring. The rings run at once, each rank
/// following one program per ring (NCCL's channels), so a rank's sends of
/// different rings do not wait for each other. With one server the rings
/// close inside it and there is no relay; with one GPU per server
/// (g = 1) this is [`ring`] over the servers in order.
///
/// Steps: ring step t of every ring is step 2t, its relays step 2t + 1
/// (step t when there is no relay).
pub(crate) fn nccl_rings(servers: &[Vec<u32>], n: u64, gamma_us: f64) -> Result<SendSchedule> {
    let m = servers.len();
    let g = servers.first().map_or(0, Vec::len);
    check_same_size(servers)?;
    let p = m * g;
    let relays = m > 1 && g > 1;
    let ring_steps = 2 * p.saturating_sub(1) as u128;
    let per_step = p as u128 + if relays { m as u128 } else { 0 };
    check_sends(p, g as u128 * ring_steps * per_step)?;
    let mut b = Builder::new(p, gamma_us)?;
    // A ring send waits for its sender's previous one on the ring, the
    // hand-over for the last GPU's previous hand-over and the rail hop for
    // the previous rail hop: each the previous send into its buffer.
    b.s.channel_credit = true;
    if p == 1 {
        return b.finish();
    }
    let mut final_recv = vec![NONE; p];
    for (c, share) in split(n, g).into_iter().enumerate() {
        // Ring c in position order: rank of position i.
        let order: Vec<u32> = (0..p).map(|i| servers[i / g][(c + i % g) % g]).collect();
        let chunks = split(share, p);
        let mut last_recv = vec![NONE; p];
        let mut last_send = vec![NONE; p];
        let mut pending = vec![0.0f64; p];
        let mut relay_last = vec![NONE; m];
        let mut ids = Vec::with_capacity(p);
        for t in 0..2 * (p - 1) {
            let reduce = t < p - 1;
            let s = if reduce { t } else { t - (p - 1) };
            let phase = if reduce {
                StepPhase::ReduceScatter
            } else {
                StepPhase::AllGather
            };
            let (at, relay_at) = if relays { (2 * t, 2 * t + 1) } else { (t, t) };
            let step = b.step(at, phase, None);
            let relay_step = b.step(relay_at, phase, None);
            ids.clear();
            for i in 0..p {
                let chunk = if reduce {
                    (i + p - s % p) % p
                } else {
                    (i + 1 + p - s % p) % p
                };
                let bytes = chunks[chunk];
                let next = (i + 1) % p;
                let delay = std::mem::take(&mut pending[i]);
                let deps = [last_recv[i], last_send[i]];
                let leaves = relays && next.is_multiple_of(g);
                let dst = if leaves {
                    order[i - (g - 1)]
                } else {
                    order[next]
                };
                let mut id = b.push(order[i], dst, bytes, step, &deps, delay);
                last_send[i] = id;
                if leaves {
                    // GPU c of this server forwards it on rail c.
                    let server = i / g;
                    let deps = [id, relay_last[server]];
                    id = b.push(dst, order[next], bytes, relay_step, &deps, 0.0);
                    relay_last[server] = id;
                }
                ids.push((next, id, bytes));
            }
            for &(next, id, bytes) in &ids {
                last_recv[next] = id;
                if reduce {
                    pending[next] += gamma_us * bytes as f64;
                }
            }
        }
        for (i, &id) in last_recv.iter().enumerate() {
            final_recv[order[i] as usize] = id;
        }
    }
    b.last_recv = final_recv;
    b.finish()
}

/// NCCL's default pipeline chunk of a tree: its Simple protocol's buffer
/// of 4 MiB (`NCCL_BUFFSIZE`) over its 8 steps (`NCCL_STEPS`), one step a
/// chunk for the tree.
pub(crate) const NCCL_TREE_CHUNK: u64 = 512 << 10;

/// The chunk size NCCL's tree uses for `n` bytes over `trees` trees
/// (channels) of depth `depth` (NCCL's `nRanks/nNodes - 1 + log2(nNodes)`):
/// [`NCCL_TREE_CHUNK`], halved while the message holds fewer than 8·depth
/// chunks per tree and the chunk is above 128 KiB, then fewer than
/// 4·depth above 64 KiB, then fewer than depth above 32 KiB (NCCL's
/// `enqueue.cc` for the tree's up-down pattern).
pub(crate) fn nccl_tree_chunk(n: u64, trees: usize, depth: usize) -> u64 {
    let per_tree = |chunk: u64| n / (trees.max(1) as u64 * chunk);
    let mut chunk = NCCL_TREE_CHUNK;
    for (times, floor) in [(8, 128 << 10), (4, 64 << 10), (1, 32 << 10)] {
        while per_tree(chunk) < (times * depth) as u64 && chunk > floor {
            chunk /= 2;
        }
    }
    chunk
}

/// The trees of `nccl-tree` over `servers` (the ranks of every server,
/// all of one size g, position j of a server being the GPU on its NIC of
/// rail j), as parent arrays over all ranks: for every rail c, two trees
/// (2c and 2c + 1). Inside every server both are the chain from GPU c
/// through c + 1, ..., c - 1 (mod g), each GPU's parent the one before it
/// (NCCL's tree inside a node); between servers GPU c of a server has as
/// parent GPU c of the server's parent in [`btree`] (tree 2c) or
/// [`mirror_tree`] (tree 2c + 1) over the servers: NCCL's double binary
/// tree, both trees entering and leaving a server at GPU c, so every
/// inter-server edge of rail c's trees joins two NICs of rail c.
pub(crate) fn nccl_tree_parents(servers: &[Vec<u32>]) -> Result<Vec<Vec<u32>>> {
    check_same_size(servers)?;
    let m = servers.len();
    let g = servers.first().map_or(0, Vec::len);
    let p = m * g;
    let between = [btree(m), mirror_tree(m)];
    let mut out = Vec::with_capacity(2 * g);
    for c in 0..g {
        for tree in &between {
            let mut parent = vec![NONE; p];
            for (s, server) in servers.iter().enumerate() {
                for i in 1..g {
                    parent[server[(c + i) % g] as usize] = server[(c + i - 1) % g];
                }
                if tree[s] != NONE {
                    parent[server[c] as usize] = servers[tree[s] as usize][c];
                }
            }
            out.push(parent);
        }
    }
    Ok(out)
}

/// `nccl-tree`: the trees of [`nccl_tree_parents`], each carrying part t
/// of `split(n, 2C)` in `k` chunks, pipelined with the broadcast of chunk
/// c as soon as the root has reduced it ([`trees`] with overlap: NCCL's
/// tree kernel runs the reduction and the broadcast at once). Each tree is
/// a channel of its own with its buffers and credit, and every send
/// already waits for the previous send into its buffer (a child's chunk
/// c - 1 up, a parent's chunk c - 1 down to that child), so the
/// event-driven mode's rendezvous per rank and step does not apply.
pub(crate) fn nccl_trees(
    servers: &[Vec<u32>],
    n: u64,
    k: usize,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let p = servers.len() * servers.first().map_or(0, Vec::len);
    let mut s = trees(p, nccl_tree_parents(servers)?, n, k, true, gamma_us)?;
    s.channel_credit = true;
    Ok(s)
}
