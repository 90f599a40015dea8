//! Flows counted per link in batches: the routes [`Network::route_seeded`] walks, without walking them one at a time.
//!
//! A proof routes millions of flows (4.5 million at 131,072 sub-nodes) and
//! only wants how many take each link. Walked one by one, a flow's route
//! waits on its own ECMP hash (two FNV-1a passes of 8 and 17 bytes, a
//! chain of about 30 dependent multiplications) before it can read the
//! next hop it picks, so the processor has little else to do meanwhile.
//! [`Network::count_ecmp`] takes a batch of flows and walks them side by
//! side, a hop of every flow at a time, each hop in short loops whose
//! iterations do not wait on one another:
//!
//! 1. every flow's switches and its access links; the flows that leave
//!    their switch start walking;
//! 2. per hop, the next hops of every walking flow (the tables' rows),
//!    the single-link table read for all of them first, alone, so that
//!    its cache misses overlap;
//! 3. the choices: for a flow at a switch with several next hops, the
//!    ECMP hash, from the flow's share of it that is the same at every
//!    switch ([`EcmpPrefix`], the source port included), found once;
//! 4. the hops they take, read from the tables' rows, and each hop's load
//!    read once (a count that waits on its cache line holds up every
//!    store after it);
//! 5. the hops counted; the flows that arrived stop.
//!
//! Between the parts of a designed BiGraph a flow has one hop and no
//! choice; within a part, one choice and two hops.
//!
//! [`Network::count_between`] walks flows given as pairs of switches the
//! same way and counts only their inter-switch links: a proof finds each
//! rank's switch once for all its steps and counts the access links per
//! rank itself (`ranks::verify`).
//!
//! The links counted are those of [`Network::route_seeded`], hop for hop
//! (the property test `batched_counts_are_the_walked_routes` holds them
//! equal); a network that avoids something, or has two planes (HPN), is
//! walked flow by flow as before, and so is a batch with a flow the walk
//! refuses, so the error is the walk's own.

use super::hash::{EcmpPrefix, PortSeed, sub_node_ip};
use super::links::Network;
use super::tables::NextHops;
use super::{MAX_LINKS, Route};
use crate::error::{Error, Result};

/// A flow of a batch on its way: where its walk is.
#[derive(Debug, Clone, Copy)]
struct Walker {
    /// Its position in the batch.
    flow: u32,
    /// The switch it is at.
    at: u32,
    /// Its destination's switch.
    to: u32,
    /// Inter-switch hops taken so far.
    hops: u32,
    /// The hash's share of the flow, once a switch gave it a choice.
    prefix: Option<EcmpPrefix>,
}

/// What [`Network::count_ecmp`] reuses from one batch to the next.
#[derive(Debug, Default)]
pub struct CountScratch<'n> {
    walkers: Vec<Walker>,
    /// Per walker, its switch's next hops and how many there are.
    next: Vec<(NextHops<'n>, usize)>,
    /// Per walker, the next hop it takes (inter index) and the switch it
    /// leads to.
    chosen: Vec<(u32, u32)>,
    /// On a canonical BiGraph, the inter indices of every hop of the
    /// batch.
    links: Vec<u32>,
    route: Route,
}

/// Most inter-switch hops of a route.
const MAX_HOPS: u32 = (MAX_LINKS - 2) as u32;

/// The `i`-th of `n` next hops for hash `h`, as [`Network::route`] takes
/// it: `h mod n` (a mask where `n` is a power of two, the same number).
fn pick(h: u64, n: usize) -> usize {
    if n.is_power_of_two() {
        (h & (n as u64 - 1)) as usize
    } else {
        (h % n as u64) as usize
    }
}

/// The one link of every flow between the two parts of a designed BiGraph
/// ([`super::graph::Canonical`]), found from two switches without a walk:
/// the walk takes the link from `a` to `b` (inter index `adj_start[a] +
/// position[b]`) and arrives, with no choice to make. A proof counts such
/// a flow on that link at once ([`Network::cross_links`]).
#[derive(Debug, Clone)]
pub struct CrossLinks {
    /// Per switch: its part (0 or 1), the link id of its first
    /// inter-switch link, and its position in its part.
    switch: Vec<(u32, u32, u32)>,
    /// Per part, its switches in plan order.
    members: [Vec<u32>; 2],
}

impl CrossLinks {
    /// The link id of the one link the route from switch `a` to switch
    /// `b` takes, where they are in different parts; `None` where they
    /// are in one part (or either is out of range).
    #[inline]
    pub fn link(&self, a: u32, b: u32) -> Option<usize> {
        let (&(pa, first, _), &(pb, _, position)) =
            (self.switch.get(a as usize)?, self.switch.get(b as usize)?);
        (pa != pb).then_some(first as usize + position as usize)
    }

    /// True when a flow from switch `a` to switch `b` (in range) makes a
    /// choice on its way, at `a`: they are two switches of one part and
    /// the other part has several. [`CrossLinks::within`] then wants the
    /// flow's ECMP hash at `a`.
    #[inline]
    pub fn chooses(&self, a: u32, b: u32) -> bool {
        let (pa, pb) = (self.switch[a as usize].0, self.switch[b as usize].0);
        a != b && pa == pb && self.members[1 - pa as usize].len() > 1
    }

    /// The two links (link ids) of the route the walk gives a flow from
    /// switch `a` to switch `b`, two switches of one part, whose ECMP
    /// hash at `a` is `hash` (any number where it makes no choice,
    /// [`CrossLinks::chooses`]): up the link the hash picks, then that
    /// switch's one link down to `b`. `None` where the other part has no
    /// switch (the walk's dead end) or `a` and `b` are not two switches
    /// of one part.
    #[inline]
    pub fn within(&self, a: u32, b: u32, hash: u64) -> Option<(u32, u32)> {
        let (&(pa, first, _), &(pb, _, position)) =
            (self.switch.get(a as usize)?, self.switch.get(b as usize)?);
        let other = &self.members[1 - pa as usize];
        if a == b || pa != pb || other.is_empty() {
            return None;
        }
        let i = if other.len() == 1 {
            0
        } else {
            pick(hash, other.len())
        };
        let c = other[i];
        let down = self.switch[c as usize].1 + position;
        Some((first + i as u32, down))
    }
}

impl Network<'_> {
    /// Adds one to `load` (indexed by link id, [`Network::link_count`]
    /// long) on every link of the route [`Network::route_seeded`] gives
    /// each flow `(source sub-node, destination sub-node, flow id)` of
    /// `flows` under the seed's share `seed`, and returns how many of the
    /// flows leave their switch. On an error the loads are partly added
    /// and the error is the one the walk gives the first flow it refuses.
    pub fn count_ecmp<'n>(
        &'n self,
        flows: &[(usize, usize, u64)],
        seed: PortSeed,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
    ) -> Result<usize> {
        if load.len() < self.link_count() {
            return Err(Error::Internal(format!(
                "{} link loads given for {} links",
                load.len(),
                self.link_count()
            )));
        }
        if self.faults.is_some()
            || !self.graph.sub_switch1.is_empty()
            || flows.len() > u32::MAX as usize
        {
            return self.count_walked(flows, seed, &mut scratch.route, load);
        }
        match self.count_batched(flows, seed, scratch, load) {
            Some(crossing) => Ok(crossing),
            // Something the walk refuses: its error, flow by flow.
            None => match self.count_walked(flows, seed, &mut scratch.route, load) {
                Err(e) => Err(e),
                Ok(_) => Err(Error::Internal(
                    "a batch of flows refused by the batched count was routed by the walk"
                        .to_string(),
                )),
            },
        }
    }

    /// [`Network::count_ecmp`] one flow at a time.
    fn count_walked(
        &self,
        flows: &[(usize, usize, u64)],
        seed: PortSeed,
        route: &mut Route,
        load: &mut [u32],
    ) -> Result<usize> {
        let mut crossing = 0;
        for &(src, dst, flow) in flows {
            self.route_seeded(src, dst, flow, seed, route)?;
            crossing += usize::from(!route.inter_switch().is_empty());
            for &l in route.links() {
                load[l] += 1;
            }
        }
        Ok(crossing)
    }

    /// True when [`Network::count_between`] can count this network's
    /// flows: one plane and nothing avoided.
    pub fn counts_between_switches(&self) -> bool {
        self.faults.is_none() && self.graph.sub_switch1.is_empty()
    }

    /// [`CrossLinks`] of a designed BiGraph with one plane and nothing
    /// avoided (where [`Network::count_between`] counts flows and walks
    /// them over the canonical tables); `None` on any other network. The
    /// links are those the walk takes (the property test
    /// `cross_links_are_the_walked_hop` holds them equal).
    pub fn cross_links(&self) -> Option<CrossLinks> {
        let c = self.graph.canonical.as_ref()?;
        if !self.counts_between_switches() {
            return None;
        }
        let base = 2 * self.graph.sub_switch.len();
        let switch = (self.graph.tier.iter().enumerate())
            .map(|(s, &t)| {
                let first = base + self.graph.adj_start[s] as usize;
                Some((
                    super::graph::Canonical::part(t) as u32,
                    u32::try_from(first).ok()?,
                    c.position[s],
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        // Every link id a pair of switches names is a link.
        (self.link_count() <= u32::MAX as usize).then(|| CrossLinks {
            switch,
            members: c.members.clone(),
        })
    }

    /// Adds one to `load` on every inter-switch link of the route
    /// [`Network::route_seeded`] gives each flow of `flows`, given as
    /// `(source switch, destination switch)` of two different switches;
    /// `prefix(i)` is flow `i`'s share of the ECMP hash, asked only of a
    /// flow that meets a choice. For a caller that counts the access links
    /// itself (a proof counts them per rank). `None`, with the loads
    /// partly added, when the network does not count between switches
    /// ([`Network::counts_between_switches`]), a switch is out of range,
    /// or a flow meets a dead end or a route longer than a route may be:
    /// walking the flows then gives the error.
    pub fn count_between<'n>(
        &'n self,
        flows: &[(u32, u32)],
        prefix: impl Fn(usize) -> EcmpPrefix,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
    ) -> Option<()> {
        let switches = self.graph.tier.len();
        if !self.counts_between_switches()
            || load.len() < self.link_count()
            || flows.len() > u32::MAX as usize
        {
            return None;
        }
        let walkers = &mut scratch.walkers;
        walkers.clear();
        for (i, &(at, to)) in flows.iter().enumerate() {
            if at == to || at as usize >= switches || to as usize >= switches {
                return None;
            }
            walkers.push(Walker {
                flow: i as u32,
                at,
                to,
                hops: 0,
                prefix: None,
            });
        }
        self.walk_batch(scratch, load, |i| prefix(i as usize))
    }

    /// The passes of the module documentation on a network with one
    /// plane and nothing avoided; `None` when a flow is out of range,
    /// meets a dead end or a route longer than a route may be.
    fn count_batched<'n>(
        &'n self,
        flows: &[(usize, usize, u64)],
        seed: PortSeed,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
    ) -> Option<usize> {
        let n = self.graph.sub_switch.len();
        let walkers = &mut scratch.walkers;
        walkers.clear();
        // The ends: access links, and the flows that leave their switch.
        for (i, &(src, dst, _)) in flows.iter().enumerate() {
            let (&sa, &sb) = (
                self.graph.sub_switch.get(src)?,
                self.graph.sub_switch.get(dst)?,
            );
            load[src] += 1;
            load[n + dst] += 1;
            if sa != sb {
                walkers.push(Walker {
                    flow: i as u32,
                    at: sa,
                    to: sb,
                    hops: 0,
                    prefix: None,
                });
            }
        }
        let crossing = walkers.len();
        self.walk_batch(scratch, load, |i| {
            let (src, dst, flow) = flows[i as usize];
            EcmpPrefix::new(sub_node_ip(src), sub_node_ip(dst), seed.port(flow))
        })?;
        Some(crossing)
    }

    /// Walks `scratch.walkers` to their destination switches, a hop of
    /// every walker at a time, adding one to `load` on every inter-switch
    /// link taken; `prefix(flow)` is a walker's share of the hash.
    fn walk_batch<'n>(
        &'n self,
        scratch: &mut CountScratch<'n>,
        load: &mut [u32],
        prefix: impl Fn(u32) -> EcmpPrefix,
    ) -> Option<()> {
        if let Some(c) = &self.graph.canonical {
            return self.walk_canonical(c, scratch, load, prefix);
        }
        let walkers = &mut scratch.walkers;
        // One hop of every walker at a time.
        let switches = self.graph.tier.len();
        while !walkers.is_empty() {
            // The single links' table first, alone: its reads (a cache
            // miss each at 131,072 sub-nodes) wait on nothing but the
            // walkers, so they overlap, and the next hops then find them
            // cached.
            if !self.graph.single.is_empty() {
                let touched = walkers.iter().fold(0u16, |t, w| {
                    let cell = w.at as usize * switches + w.to as usize;
                    t ^ self.graph.single.get(cell).copied().unwrap_or(0)
                });
                std::hint::black_box(touched);
            }
            // The next hops.
            let next = &mut scratch.next;
            next.clear();
            for w in walkers.iter() {
                if w.hops >= MAX_HOPS {
                    return None;
                }
                let hops = self.next_hops(w.at as usize, w.to as usize);
                let count = hops.len(self);
                if count == 0 {
                    return None;
                }
                next.push((hops, count));
            }
            // The choices: the hashes, each walker's independent of the
            // others', kept apart from the reads they pick so that many
            // of those are under way at once.
            let chosen = &mut scratch.chosen;
            chosen.clear();
            for (w, &(_, count)) in walkers.iter_mut().zip(next.iter()) {
                let i = if count == 1 {
                    0
                } else {
                    let prefix = *w.prefix.get_or_insert_with(|| prefix(w.flow));
                    pick(prefix.at(w.at), count)
                };
                chosen.push((i as u32, 0));
            }
            // The hops they take, and each hop's load read once ahead of
            // its count, as the single links' table is above: a count
            // that waits on its line holds up every store after it.
            let mut touched = 0u32;
            for (c, &(hops, _)) in chosen.iter_mut().zip(next.iter()) {
                let (k, to) = hops.hop(self, c.0 as usize)?;
                touched ^= load.get(self.id(k)).copied().unwrap_or(0);
                *c = (k, to as u32);
            }
            std::hint::black_box(touched);
            // The hops counted, and the walkers that arrived leave.
            let mut left = 0;
            for j in 0..walkers.len() {
                let (k, to) = chosen[j];
                load[self.id(k)] += 1;
                let mut w = walkers[j];
                w.at = to;
                w.hops += 1;
                if w.at != w.to {
                    walkers[left] = w;
                    left += 1;
                }
            }
            walkers.truncate(left);
        }
        Some(())
    }

    /// [`Network::walk_batch`] on a canonical BiGraph
    /// ([`super::graph::Canonical`]): a walker towards the other part takes
    /// its one link, a walker within its part takes the upward link its
    /// hash picks and then that switch's one link to the destination, each
    /// hop from [`Network::canonical_hop`], which reads only the canonical
    /// tables; then every hop's load is read ahead of its count, as in the
    /// walk. The hops are the walk's (the property tests of
    /// `graph_tests.rs` hold the counts equal).
    fn walk_canonical(
        &self,
        c: &super::graph::Canonical,
        scratch: &mut CountScratch<'_>,
        load: &mut [u32],
        prefix: impl Fn(u32) -> EcmpPrefix,
    ) -> Option<()> {
        let links = &mut scratch.links;
        links.clear();
        for w in &scratch.walkers {
            let (at, to) = (w.at as usize, w.to as usize);
            let choices = self.canonical_choices(c, at, to);
            let i = if choices <= 1 {
                0
            } else {
                pick(prefix(w.flow).at(w.at), choices)
            };
            let (k, next) = self.canonical_hop(c, at, to, i)?;
            links.push(k);
            if next != w.to {
                let (k, _) = self.canonical_hop(c, next as usize, to, 0)?;
                links.push(k);
            }
        }
        let touched = links
            .iter()
            .fold(0u32, |t, &k| t ^ load.get(self.id(k)).copied().unwrap_or(0));
        std::hint::black_box(touched);
        for &k in links.iter() {
            load[self.id(k)] += 1;
        }
        scratch.walkers.clear();
        Some(())
    }
}
