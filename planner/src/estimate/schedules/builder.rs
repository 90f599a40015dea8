//! The rank programs a schedule is built of ([`Builder`]): ring and
//! halving-doubling phases over groups of ranks, the fold's pair steps,
//! and the bookkeeping every family shares (each rank's last receive and
//! last send, steps, the memory limit on sends).
//!
//! Ring and halving-doubling phases follow the rank's program: each send
//! of a rank depends on the last message the rank received (the data it
//! forwards or reduces) and on the rank's own previous send having been
//! delivered (a rank posts one send at a time, as a send-receive loop
//! does), and pays the reduction of the received message when the phase
//! reduces. So rank r sends its next chunk as soon as the chunk it needs
//! has arrived and its link is free of its last one, with no barrier
//! across ranks.

use super::{Kind, NONE, SendSchedule, Sink, StepInfo, StepPhase, check_same_size, split};
use crate::error::{Error, Result};
use crate::ranks::{self, Phase};

/// Builds a schedule, keeping each rank's last receive and the computation
/// it owes before its next send. The sends are stored in the schedule, or
/// with a [`Sink`] handed to it one by one (then each step's sends are kept
/// until the next step starts, for the receives).
pub(super) struct Builder<'a> {
    pub(super) s: SendSchedule,
    pub(super) sink: Option<&'a mut dyn Sink>,
    /// Sends made so far.
    pub(super) made: u32,
    /// With a sink: (receiver, bytes) of the sends since `step_first`.
    pub(super) recent: Vec<(u32, u64)>,
    pub(super) step_first: u32,
    pub(super) bytes_by_0: u64,
    /// Last send delivered to each rank, in program order.
    pub(super) last_recv: Vec<u32>,
    /// Last send of each rank's program.
    pub(super) last_send: Vec<u32>,
    /// Computation each rank owes before its next send, µs.
    pub(super) pending_us: Vec<f64>,
    /// Bytes each rank holds in the current decomposition.
    pub(super) held: Vec<u64>,
    pub(super) gamma_us: f64,
}

impl<'a> Builder<'a> {
    pub(super) fn new(ranks: usize, gamma_us: f64) -> Result<Self> {
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
    pub(super) fn streaming(ranks: usize, gamma_us: f64, sink: &'a mut dyn Sink) -> Result<Self> {
        let mut b = Self::new(ranks, gamma_us)?;
        b.sink = Some(sink);
        Ok(b)
    }

    /// Makes room for `sends` more sends of one or two dependencies.
    pub(super) fn reserve(&mut self, sends: usize) {
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
    pub(super) fn step(&mut self, index: usize, phase: StepPhase, level: Option<u8>) -> u32 {
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
    pub(super) fn push(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        step: u32,
        deps: &[u32],
        delay: f64,
    ) -> u32 {
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
    pub(super) fn program_send(&mut self, src: u32, dst: u32, bytes: u64, step: u32) -> u32 {
        let r = src as usize;
        let deps = [self.last_recv[r], self.last_send[r]];
        let delay = std::mem::take(&mut self.pending_us[r]);
        let id = self.push(src, dst, bytes, step, &deps, delay);
        self.last_send[r] = id;
        id
    }

    /// Records that send `id` reached `dst`; a reduce-scatter receive owes
    /// its reduction before `dst` sends again.
    pub(super) fn deliver(&mut self, id: u32, reduce: bool) -> Result<()> {
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
    pub(super) fn ring_phase(
        &mut self,
        groups: &[Vec<u32>],
        reduce: bool,
        level: Option<u8>,
    ) -> Result<()> {
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
    pub(super) fn hd_phase(
        &mut self,
        groups: &[Vec<u32>],
        reduce: bool,
        level: Option<u8>,
    ) -> Result<()> {
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
    pub(super) fn hd_step(
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
    pub(super) fn pair_step(&mut self, step: &ranks::Step, n: u64) -> Result<()> {
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

    pub(super) fn phase(
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

    pub(super) fn finish(mut self) -> Result<SendSchedule> {
        self.s.tail_us = self.pending_us;
        self.s.final_recv = self.last_recv;
        Ok(self.s)
    }
}
