//! The ECMP proof counted by rank: what a proof needs of each rank found once for all its steps.
//!
//! A proof counts every distinct step of a schedule (17 of 131,072 flows
//! each at 131,072 sub-nodes). Counted flow by flow from the rank table,
//! each flow read its two ranks' sub-nodes, their switches and servers,
//! and added to their access links' loads: six reads at random across
//! some 2.5 MiB per flow when the table scatters the ranks (an HDRM
//! table). [`RankSide`] reads each rank's switch (and server) once per
//! proof into arrays in rank order, counts the access loads per rank (with
//! no two ranks on one NIC, a rank's NIC links are its own; a bit per rank
//! and way, since a step's flows are one per rank and way), and hands only
//! the flows that leave their switch to [`Network::count_between`] as pairs
//! of switches. A step's flows go by rank, so every read but the
//! inter-switch hops' is near the last one, and the access links' 1 MiB of
//! loads is neither written, scanned nor cleared.
//!
//! Each rank's share of its flows' ECMP hashes (its address, and the
//! flow id's high half in the source port: [`PortSeed::source`]) is found
//! once per proof too, on the first flow that meets a choice.
//!
//! It applies to ECMP on a network of one plane with nothing avoided and
//! a table with one rank per sub-node; the loads, the maxima and the
//! errors are those of counting flow by flow (the property test
//! `counting_by_rank_is_counting_by_flow` holds them equal).

use std::cell::OnceCell;

use super::{Max, StepCounts, flow_id};
use crate::error::{Error, Result};
use crate::network::{
    CountScratch, CrossLinks, Network, Policy, PortSeed, Route, SourceShare, sub_node_ip,
};
use crate::ranks::schedule::Step;

/// Flows that leave their switch, counted together
/// ([`Network::count_between`]): as many as the flow-by-flow count's
/// batches.
const BATCH: usize = 256;

/// A proof's ranks, found once, and its per-step counts by rank.
pub(super) struct RankSide {
    /// Per rank, its sub-node's switch.
    switch: Vec<u32>,
    /// Per rank, its server where the plan's servers reduce inside
    /// (`u32::MAX` for none).
    server: Option<Vec<u32>>,
    /// Per rank, its share of its flows' hashes, found on first need.
    shares: OnceCell<Vec<SourceShare>>,
    /// On a designed BiGraph, the one link of each flow between its parts,
    /// counted at once instead of walked.
    cross: Option<CrossLinks>,
    /// The step's flows up from the ranks' NICs and down to them.
    up: AccessCount,
    down: AccessCount,
    /// The step's flows that leave their switch, as switches and as ranks.
    switches: Vec<(u32, u32)>,
    flows: Vec<(u32, u32)>,
    /// The links of the step's flows between the parts, not yet counted.
    direct: Vec<u32>,
    /// A batch's hashes, and its links, for [`RankSide::count_within`].
    hashes: Vec<u64>,
    links: Vec<u32>,
}

/// Every rank's share of its flows' hashes under `seed`.
fn source_shares(ranks: &[usize], seed: PortSeed) -> Vec<SourceShare> {
    (ranks.iter().enumerate())
        .map(|(r, &sn)| seed.source(sub_node_ip(sn), r as u32))
        .collect()
}

/// Adds one to `load` on each link of `links` (link ids, in range), each
/// link's load read first in a pass of its own: the reads (a cache miss
/// each at 131,072 sub-nodes) wait on nothing and overlap, where a count
/// that waits on its line would hold up every count after it. Returns how
/// many links were counted, and empties `links`.
fn add_ahead(links: &mut Vec<u32>, load: &mut [u32]) -> usize {
    let touched = (links.iter()).fold(0u32, |t, &l| t ^ load.get(l as usize).copied().unwrap_or(0));
    std::hint::black_box(touched);
    for &l in links.iter() {
        load[l as usize] += 1;
    }
    let n = links.len();
    links.clear();
    n
}

/// One direction of a step's access loads, per rank: a bit for a rank
/// with a flow (a step's flows are one per rank and way in every
/// schedule), and the count of a rank with more beside it. 16 KiB at
/// 131,072 ranks, where a count per rank would be 512 KiB to write, scan
/// and clear per step.
pub(super) struct AccessCount {
    /// Per rank, a flow counted.
    once: Vec<u64>,
    /// Ranks with a flow.
    ranks: usize,
    /// Ranks with more than one flow, and how many.
    more: rustc_hash::FxHashMap<u32, u32>,
}

impl AccessCount {
    pub(super) fn new(ranks: usize) -> Self {
        Self {
            once: vec![0; ranks.div_ceil(64)],
            ranks: 0,
            more: Default::default(),
        }
    }

    /// One more flow on the link of each rank of word `word` whose bit
    /// is set in `bits` (each rank once): what adding their flows one by
    /// one would count.
    fn merge(&mut self, word: usize, bits: u64) {
        if bits == 0 {
            return;
        }
        let old = self.once[word];
        self.ranks += (bits & !old).count_ones() as usize;
        let mut again = bits & old;
        while again != 0 {
            let rank = (word * 64) as u32 + again.trailing_zeros();
            *self.more.entry(rank).or_insert(1) += 1;
            again &= again - 1;
        }
        self.once[word] = old | bits;
    }

    /// The largest load and how many links carry it, as [`super::max_of_flows`]
    /// finds it over the loads per rank.
    pub(super) fn max(&self) -> Max {
        let Some(top) = self.more.values().copied().max() else {
            return Max {
                value: if self.ranks == 0 { 0.0 } else { 1.0 },
                count: self.ranks,
            };
        };
        Max {
            value: f64::from(top),
            count: self.more.values().filter(|&&v| v == top).count(),
        }
    }

    fn clear(&mut self) {
        self.once.fill(0);
        self.ranks = 0;
        self.more.clear();
    }
}

/// The flows of an [`AccessCount`] not yet added, in one word of its
/// bits: a step's flows go by rank, so most of its ranks come one after
/// another, and one word of them is added at once ([`AccessCount::merge`])
/// instead of each rank's bit being read and written back while the last
/// write is still on its way (a chain through memory, a few cycles a
/// flow).
#[derive(Clone, Copy)]
pub(super) struct Pending {
    /// The word (ranks `64 * word..64 * word + 64`).
    word: usize,
    /// Its ranks with a flow not yet added.
    bits: u64,
}

impl Pending {
    /// Nothing pending.
    pub(super) const NONE: Pending = Pending { word: 0, bits: 0 };

    /// One more flow on `rank`'s link, added to `count` when another word
    /// comes or the rank is pending already.
    #[inline(always)]
    pub(super) fn add(&mut self, count: &mut AccessCount, rank: usize) {
        let (word, bit) = (rank / 64, 1u64 << (rank % 64));
        if word != self.word || self.bits & bit != 0 {
            count.merge(self.word, self.bits);
            *self = Pending { word, bits: 0 };
        }
        self.bits |= bit;
    }

    /// Everything pending added to `count`.
    pub(super) fn finish(self, count: &mut AccessCount) {
        count.merge(self.word, self.bits);
    }
}

impl RankSide {
    /// The ranks of `ranks` (checked in range) on `net`, or `None` where
    /// counting by rank does not apply: another policy than ECMP, a
    /// network of two planes or that avoids something, a sub-node with
    /// two ranks (`repeats`), or more ranks than 32 bits number.
    pub(super) fn new(
        net: &Network<'_>,
        ranks: &[usize],
        servers: Option<&[u32]>,
        policy: Policy,
        repeats: bool,
    ) -> Option<Self> {
        if policy != Policy::Ecmp
            || repeats
            || !net.counts_between_switches()
            || ranks.len() > u32::MAX as usize
        {
            return None;
        }
        let switch = ranks
            .iter()
            .map(|&sn| Some(net.switch_of(sn)? as u32))
            .collect::<Option<Vec<_>>>()?;
        let server = servers.map(|of| ranks.iter().map(|&sn| of[sn]).collect());
        Some(Self {
            switch,
            server,
            shares: OnceCell::new(),
            cross: net.cross_links(),
            up: AccessCount::new(ranks.len()),
            down: AccessCount::new(ranks.len()),
            switches: Vec::with_capacity(BATCH),
            flows: Vec::with_capacity(BATCH),
            direct: Vec::with_capacity(BATCH),
            hashes: Vec::with_capacity(BATCH),
            links: Vec::with_capacity(2 * BATCH),
        })
    }

    /// Counts the flows of `step` over `ranks` under `seed`: the access
    /// loads per rank, the inter-switch loads into `load` (indexed by link
    /// id). The same counts as the flow-by-flow count.
    pub(super) fn count_step<'n>(
        &mut self,
        net: &'n Network<'_>,
        ranks: &[usize],
        step: &Step,
        seed: u64,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
    ) -> Result<StepCounts> {
        let mut counts = StepCounts {
            crossing: 0,
            inside: 0,
            shared: 0,
        };
        let port_seed = PortSeed::new(seed);
        self.switches.clear();
        self.flows.clear();
        let (mut up, mut down) = (Pending::NONE, Pending::NONE);
        // Every link id of `cross` is in `load` when it is as long as the
        // network has links.
        let direct = load.len() >= net.link_count();
        for (s, d) in step.flows() {
            // One rank per sub-node: two ranks share one only when they
            // are one.
            let inside = s == d
                || (self.server.as_ref()).is_some_and(|of| of[s] == of[d] && of[s] != u32::MAX);
            if inside {
                counts.inside += 1;
                continue;
            }
            up.add(&mut self.up, s);
            down.add(&mut self.down, d);
            let (sa, sb) = (self.switch[s], self.switch[d]);
            if sa != sb {
                // Between the parts of a designed BiGraph: the one link.
                if let Some(l) = (self.cross.as_ref())
                    .filter(|_| direct)
                    .and_then(|c| c.link(sa, sb))
                {
                    self.direct.push(l as u32);
                    if self.direct.len() == BATCH {
                        counts.crossing += add_ahead(&mut self.direct, load);
                    }
                    continue;
                }
                self.switches.push((sa, sb));
                self.flows.push((s as u32, d as u32));
                if self.switches.len() == BATCH {
                    counts.crossing += self.count_batch(net, ranks, port_seed, scratch, load)?;
                }
            }
        }
        up.finish(&mut self.up);
        down.finish(&mut self.down);
        counts.crossing += add_ahead(&mut self.direct, load);
        if !self.switches.is_empty() {
            counts.crossing += self.count_batch(net, ranks, port_seed, scratch, load)?;
        }
        Ok(counts)
    }

    /// The batch's routes counted, the batch emptied; the error of the
    /// first flow the walk refuses.
    fn count_batch<'n>(
        &mut self,
        net: &'n Network<'_>,
        ranks: &[usize],
        seed: PortSeed,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
    ) -> Result<usize> {
        if load.len() >= net.link_count() && self.count_within(ranks, seed, load).is_some() {
            let crossing = self.switches.len();
            self.switches.clear();
            self.flows.clear();
            return Ok(crossing);
        }
        let (flows, shares) = (&self.flows, &self.shares);
        let prefix = |i: usize| {
            let (s, d) = flows[i];
            let shares = shares.get_or_init(|| source_shares(ranks, seed));
            shares[s as usize].prefix(sub_node_ip(ranks[d as usize]), d)
        };
        if net
            .count_between(&self.switches, prefix, scratch, load)
            .is_none()
        {
            // The walk's own error, flow by flow.
            let mut route = Route::default();
            for &(s, d) in flows {
                let (s, d) = (s as usize, d as usize);
                net.route_seeded(ranks[s], ranks[d], flow_id(s, d), seed, &mut route)?;
            }
            return Err(Error::Internal(
                "a batch of flows refused by the count by rank was routed by the walk".to_string(),
            ));
        }
        let crossing = self.switches.len();
        self.switches.clear();
        self.flows.clear();
        Ok(crossing)
    }

    /// On a designed BiGraph ([`RankSide::cross`]), the batch's flows
    /// within a part counted from their hashes at their first switch
    /// ([`CrossLinks::within`]): every hash of the batch in one pass (each
    /// independent of the others, so that many are under way at once),
    /// then their links, then the links counted ([`add_ahead`]). `None`,
    /// with nothing counted, where the network is another or a flow is
    /// not one [`CrossLinks::within`] routes: the walk counts the batch.
    fn count_within(&mut self, ranks: &[usize], seed: PortSeed, load: &mut [u32]) -> Option<()> {
        let cross = self.cross.as_ref()?;
        let shares = self.shares.get_or_init(|| source_shares(ranks, seed));
        self.hashes.clear();
        for (&(s, d), &(sa, sb)) in self.flows.iter().zip(&self.switches) {
            let hash = if cross.chooses(sa, sb) {
                let dst = sub_node_ip(ranks[d as usize]);
                shares[s as usize].prefix(dst, d).at(sa)
            } else {
                0
            };
            self.hashes.push(hash);
        }
        self.links.clear();
        for (&(sa, sb), &hash) in self.switches.iter().zip(&self.hashes) {
            let (up, down) = cross.within(sa, sb, hash)?;
            self.links.push(up);
            self.links.push(down);
        }
        add_ahead(&mut self.links, load);
        Some(())
    }

    /// The largest access load of the step and how many links carry it.
    pub(super) fn access_max(&self) -> Max {
        self.up.max().with(self.down.max())
    }

    /// Every rank's access loads back to none.
    pub(super) fn clear(&mut self) {
        self.up.clear();
        self.down.clear();
    }
}
