//! Route storage: [`PlanRoutes`], the routes of a schedule's sends on the
//! plan under a routing policy, kept once per rank pair (sprayed flows per
//! pair of switches), and the [`Routes`] the simulators read.

use std::collections::HashMap;
use std::sync::Arc;

use super::Context;
use crate::error::Result;
use crate::estimate::schedules::NONE;
use crate::estimate::sim::{FlowRoute, Routes};
use crate::estimate::{Channels, SendProgress, SendSchedule};
use crate::network::{Leg, Policy, Route};
use crate::ranks::verify::flow_id;

/// Routes of a schedule's sends on the plan under a routing policy,
/// cached per source rank (a rank talks to a handful of peers). A sprayed
/// flow's routes between two switches (up to 1,024 a flow on an 8,192-GPU
/// HPN fabric) are kept once per pair of switches and joined to the
/// flow's access links when asked for, the same routes in the same order
/// as [`Network::flow_routes`] lists them.
#[derive(Debug)]
pub(in crate::estimate) struct PlanRoutes<'c> {
    ctx: &'c Context<'c>,
    sched: &'c SendSchedule,
    seed: u64,
    policy: Policy,
    /// With `channels=pair`: the schedule's (tree, sender, receiver)
    /// channels, sorted; channel j is link `base + j`.
    channels: Vec<(u32, u32, u32)>,
    base: usize,
    /// Per source rank: (destination rank, where its paths are).
    cache: Vec<Vec<(u32, Stored)>>,
    /// Per source rank, its entry of `cache` looked up last (destination
    /// `NONE` before the first): most ranks send to the same peer many
    /// times in a row, and this array is dense where `cache` is not.
    last: Vec<(u32, Stored)>,
    pool: Vec<FlowRoute>,
    scratch: Vec<Route>,
    /// Sprayed flows: their legs ([`Network::spray_legs`]) that have
    /// routes, each with its access links and its range of `between`.
    legs: Vec<StoredLeg>,
    leg_scratch: Vec<Leg>,
    /// Per pair of switches, its range of `between`: the routes between
    /// them, inter-switch links only, with the whole route's latency.
    pairs: HashMap<(usize, usize), (u32, u32)>,
    between: Vec<FlowRoute>,
    /// Where the sends started are counted ([`PlanRoutes::counting`]),
    /// how many since the last batch was added there, and how many were.
    sends: Option<Arc<SendProgress>>,
    routed: u64,
    flushed: u64,
}

/// Sends started between two additions to a [`SendProgress`]: an atomic
/// add per batch, not per send.
const BATCH: u64 = 1 << 14;

/// Where the paths of one flow are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// `count` whole routes from `first` in `pool`.
    Pool { first: u32, count: u32 },
    /// A sprayed flow's `count` legs from `first` in `legs`.
    Legs { first: u32, count: u32 },
}

/// One leg of a sprayed flow: its access links in the leg's plane and its
/// routes between the two switches (`count` from `first` in `between`;
/// none when both ends are on one switch, the access links alone).
#[derive(Debug, Clone, Copy)]
struct StoredLeg {
    up: u32,
    down: u32,
    first: u32,
    count: u32,
}

impl<'c> PlanRoutes<'c> {
    pub(in crate::estimate) fn new(
        ctx: &'c Context<'c>,
        sched: &'c SendSchedule,
        seed: u64,
        policy: Policy,
    ) -> Self {
        let channels = if ctx.params.channels == Channels::Pair {
            let mut c: Vec<(u32, u32, u32)> = (0..sched.len())
                .map(|i| (sched.tree_of(i), sched.src[i], sched.dst[i]))
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        } else {
            Vec::new()
        };
        // A streamed schedule comes with no sends: the context's ranks.
        let ranks = ctx.ranks().max(sched.ranks());
        Self {
            ctx,
            sched,
            seed,
            policy,
            channels,
            base: ctx.caps.len(),
            cache: vec![Vec::new(); ranks],
            last: vec![(NONE, Stored::Pool { first: 0, count: 0 }); ranks],
            pool: Vec::new(),
            scratch: Vec::new(),
            legs: Vec::new(),
            leg_scratch: Vec::new(),
            pairs: HashMap::new(),
            between: Vec::new(),
            sends: None,
            routed: 0,
            flushed: 0,
        }
    }

    /// These routes counting into `sends` every send the event loop
    /// starts ([`Routes::started`]), in batches, the rest when they are
    /// dropped (and, with [`PlanRoutes::settle`], the sends of a run that
    /// did not count them).
    pub(in crate::estimate) fn counting(mut self, sends: Option<&Arc<SendProgress>>) -> Self {
        self.sends = sends.cloned();
        self
    }

    /// A run over these routes ended having made `sends`: what it did not
    /// count as it went (a lone pass, the step-synchronous and packet
    /// modes count nothing; the event loop every send it starts) is
    /// counted when the routes are dropped.
    pub(in crate::estimate) fn settle(&mut self, sends: u64) {
        let counted = self.flushed + self.routed;
        self.routed += sends.saturating_sub(counted);
    }

    /// Routes the flow from rank `s` to rank `d` into `pool` (or, sprayed,
    /// `legs`); returns where.
    fn compute(&mut self, s: usize, d: usize) -> Result<Stored> {
        let t = &self.ctx.table;
        if let Some(tier) = &self.ctx.tier {
            // Inside a server: over NVLink, or through the shared NIC's
            // links (PCIe peer-to-peer at the NIC's speed at most).
            let (links, latency) = match tier.nvlink_route(s, d) {
                Some(links) => (Some(links), self.ctx.params.latency_us(1)),
                None if t[s] == t[d] => (
                    Some([
                        self.ctx.net.up_link(t[s]) as u32,
                        self.ctx.net.down_link(t[d]) as u32,
                    ]),
                    self.ctx.params.latency_us(0),
                ),
                None => (None, 0.0),
            };
            if let Some(links) = links {
                let mut out = FlowRoute {
                    latency,
                    len: 2,
                    ..FlowRoute::default()
                };
                out.links[..2].copy_from_slice(&links);
                self.pool.push(out);
                return Ok(Stored::Pool {
                    first: self.pool.len() as u32 - 1,
                    count: 1,
                });
            }
        }
        if self.policy == Policy::Spray {
            return self.compute_legs(s, d);
        }
        self.scratch.clear();
        self.ctx.net.flow_routes(
            self.policy,
            t[s],
            t[d],
            flow_id(s, d),
            self.seed,
            &mut self.scratch,
        )?;
        let first = self.pool.len() as u32;
        for r in &self.scratch {
            let out = self.flow_route(r.links());
            self.pool.push(out);
        }
        Ok(Stored::Pool {
            first,
            count: self.scratch.len() as u32,
        })
    }

    /// The path over `links` (a whole route: access links and the
    /// switches between) with its latency.
    fn flow_route(&self, links: &[usize]) -> FlowRoute {
        let mut out = FlowRoute {
            latency: self.ctx.params.latency_us(links.len().saturating_sub(1)),
            ..FlowRoute::default()
        };
        for (k, &l) in links.iter().enumerate() {
            out.links[k] = l as u32;
        }
        out.len = links.len() as u8;
        out
    }

    /// A sprayed flow from rank `s` to rank `d`: its legs that have routes
    /// into `legs`, the routes between their switches kept once per pair;
    /// the hashed route into `pool` when no leg has one (as
    /// [`Network::flow_routes`] does).
    fn compute_legs(&mut self, s: usize, d: usize) -> Result<Stored> {
        let t = &self.ctx.table;
        let mut legs = std::mem::take(&mut self.leg_scratch);
        legs.clear();
        let one = self
            .ctx
            .net
            .spray_legs(t[s], t[d], flow_id(s, d), self.seed, &mut legs)?;
        let first = self.legs.len() as u32;
        for leg in &legs {
            let (from, count) = if leg.from == leg.to {
                (0, 0)
            } else {
                match self.between(leg.from, leg.to) {
                    (_, 0) => continue,
                    range => range,
                }
            };
            self.legs.push(StoredLeg {
                up: leg.up as u32,
                down: leg.down as u32,
                first: from,
                count,
            });
        }
        self.leg_scratch = legs;
        let count = self.legs.len() as u32 - first;
        if count > 0 {
            return Ok(Stored::Legs { first, count });
        }
        let out = self.flow_route(one.links());
        self.pool.push(out);
        Ok(Stored::Pool {
            first: self.pool.len() as u32 - 1,
            count: 1,
        })
    }

    /// The range of `between` that holds the routes from switch `a` to
    /// switch `b` ([`Network::switch_paths`], in its order), found there
    /// or routed now.
    fn between(&mut self, a: usize, b: usize) -> (u32, u32) {
        if let Some(&range) = self.pairs.get(&(a, b)) {
            return range;
        }
        let first = self.between.len() as u32;
        for path in self.ctx.net.switch_paths(a, b) {
            let mut out = self.flow_route(&path);
            // The whole route crosses one switch more than its
            // inter-switch links.
            out.latency = self.ctx.params.latency_us(path.len() + 1);
            self.between.push(out);
        }
        let range = (first, self.between.len() as u32 - first);
        self.pairs.insert((a, b), range);
        range
    }

    /// Route `j` of a stored leg: its access links around its `j`-th
    /// route between the switches (the access links alone on one switch).
    fn leg_route(&self, leg: &StoredLeg, j: u32) -> FlowRoute {
        if leg.count == 0 {
            let mut out = FlowRoute {
                latency: self.ctx.params.latency_us(1),
                len: 2,
                ..FlowRoute::default()
            };
            out.links[..2].copy_from_slice(&[leg.up, leg.down]);
            return out;
        }
        let inner = &self.between[(leg.first + j) as usize];
        let m = inner.len as usize;
        let mut out = FlowRoute {
            latency: inner.latency,
            len: inner.len + 2,
            ..FlowRoute::default()
        };
        out.links[0] = leg.up;
        out.links[1..=m].copy_from_slice(inner.links());
        out.links[m + 1] = leg.down;
        out
    }

    /// Appends the paths kept at `stored` to `out`.
    fn fill(&self, stored: Stored, out: &mut Vec<FlowRoute>) {
        match stored {
            Stored::Pool { first, count } => {
                out.extend_from_slice(&self.pool[first as usize..(first + count) as usize]);
            }
            Stored::Legs { first, count } => {
                for leg in &self.legs[first as usize..(first + count) as usize] {
                    for j in 0..leg.count.max(1) {
                        out.push(self.leg_route(leg, j));
                    }
                }
            }
        }
    }

    /// The first of the paths kept at `stored`.
    fn first(&self, stored: Stored) -> FlowRoute {
        match stored {
            Stored::Pool { first, .. } => self.pool[first as usize],
            Stored::Legs { first, .. } => self.leg_route(&self.legs[first as usize], 0),
        }
    }

    /// The paths of the flow from rank `s` to rank `d`, cached.
    #[inline]
    fn lookup(&mut self, s: usize, d: u32) -> Result<Stored> {
        if let Some(&(x, stored)) = self.last.get(s)
            && x == d
        {
            return Ok(stored);
        }
        let stored = match self.cache[s].iter().find(|(x, _)| *x == d) {
            Some(&(_, stored)) => stored,
            None => {
                let stored = self.compute(s, d as usize)?;
                self.cache[s].push((d, stored));
                stored
            }
        };
        self.last[s] = (d, stored);
        Ok(stored)
    }

    /// Every path from rank `s` to rank `d`, appended to `out`.
    pub(super) fn paths_between(
        &mut self,
        s: usize,
        d: u32,
        out: &mut Vec<FlowRoute>,
    ) -> Result<()> {
        let stored = self.lookup(s, d)?;
        self.fill(stored, out);
        Ok(())
    }

    /// `f` of the route from rank `s` to rank `d` when the flow has one
    /// path, else of `None` (several paths, or no route: the lone pass
    /// gives up and the event loop reports it); the route is lent, not
    /// copied, when it is stored whole.
    #[inline]
    pub(super) fn with_single<T>(
        &mut self,
        s: usize,
        d: u32,
        f: impl FnOnce(Option<&FlowRoute>) -> T,
    ) -> T {
        match self.lookup(s, d) {
            Ok(Stored::Pool { first, count: 1 }) => f(Some(&self.pool[first as usize])),
            Ok(_) => f(self.single_between(s, d).ok().flatten().as_ref()),
            Err(_) => f(None),
        }
    }

    /// The route from rank `s` to rank `d` when the flow has one path.
    fn single_between(&mut self, s: usize, d: u32) -> Result<Option<FlowRoute>> {
        let stored = self.lookup(s, d)?;
        let single = match stored {
            Stored::Pool { count, .. } => count == 1,
            Stored::Legs { first, count } => count == 1 && self.legs[first as usize].count <= 1,
        };
        Ok(single.then(|| self.first(stored)))
    }

    /// True when `other` (another seed) routes every pair this one routed
    /// the same way.
    pub(super) fn same_routes(&self, other: &mut PlanRoutes<'_>) -> Result<bool> {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        for (s, list) in self.cache.iter().enumerate() {
            for &(d, stored) in list {
                mine.clear();
                theirs.clear();
                self.fill(stored, &mut mine);
                let kept = other.lookup(s, d)?;
                other.fill(kept, &mut theirs);
                if mine != theirs {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

impl<'c> PlanRoutes<'c> {
    /// The link capacities the routes index: the plan's links, then with
    /// `channels=pair` one channel per (tree, sender, receiver) at the
    /// ranks' link speed.
    pub(in crate::estimate) fn caps(&self) -> std::borrow::Cow<'c, [f64]> {
        if self.channels.is_empty() {
            return std::borrow::Cow::Borrowed(&self.ctx.caps);
        }
        let mut caps = self.ctx.caps.clone();
        caps.resize(self.base + self.channels.len(), self.ctx.w);
        std::borrow::Cow::Owned(caps)
    }

    /// The channel of send `i` under `channels=pair`.
    fn channel(&self, i: usize) -> Option<FlowRoute> {
        if self.channels.is_empty() {
            return None;
        }
        let key = (self.sched.tree_of(i), self.sched.src[i], self.sched.dst[i]);
        let j = self.channels.binary_search(&key).ok()?;
        let mut out = FlowRoute {
            latency: self.ctx.params.latency_us(0),
            len: 1,
            ..FlowRoute::default()
        };
        out.links[0] = (self.base + j) as u32;
        Some(out)
    }
}

impl Drop for PlanRoutes<'_> {
    fn drop(&mut self) {
        if let Some(sends) = &self.sends {
            sends.add_started(self.routed);
        }
    }
}

impl Routes for PlanRoutes<'_> {
    fn started(&mut self) {
        self.routed += 1;
        if self.routed == BATCH {
            if let Some(sends) = &self.sends {
                sends.add_started(BATCH);
            }
            self.flushed += BATCH;
            self.routed = 0;
        }
    }

    fn route(&mut self, i: usize) -> Result<FlowRoute> {
        if let Some(r) = self.channel(i) {
            return Ok(r);
        }
        let (s, d) = (self.sched.src[i] as usize, self.sched.dst[i]);
        let stored = self.lookup(s, d)?;
        Ok(self.first(stored))
    }

    fn paths(&mut self, i: usize, out: &mut Vec<FlowRoute>) -> Result<()> {
        if let Some(r) = self.channel(i) {
            out.push(r);
            return Ok(());
        }
        self.paths_between(self.sched.src[i] as usize, self.sched.dst[i], out)
    }

    fn single(&mut self, i: usize) -> Result<Option<FlowRoute>> {
        if let Some(r) = self.channel(i) {
            return Ok(Some(r));
        }
        self.single_between(self.sched.src[i] as usize, self.sched.dst[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::{Algorithm, Params};
    use crate::network::hpn_tests::hpn_plan;
    use crate::network::tests::{bigraph_plan, fat_tree_plan, rail_plan};

    /// A sprayed send's paths from [`PlanRoutes`] (kept per pair of
    /// switches and joined to the access links) are
    /// [`Network::flow_routes`]'s, in its order and with the latency of
    /// each route's length, on every kind of fabric.
    #[test]
    fn sprayed_paths_are_the_route_models() {
        let params = Params::default();
        for plan in [
            bigraph_plan(4, 16),
            fat_tree_plan("tiers=2,sub-nodes=96,ports=16,oversub=3"),
            fat_tree_plan("k=8"),
            rail_plan("sub-nodes=128,rails=4,ports=16"),
            hpn_plan("sub-nodes=128,rails=4,ports=16"),
        ] {
            let mut sprayed = 0;
            for algorithm in [Algorithm::Hd, Algorithm::Ring] {
                let ranks = Some(1 << plan.sub_node_list.len().ilog2());
                let ctx = Context::new(&plan, algorithm, ranks, &params).unwrap();
                let (_, chunks) = ctx.closed_form(1 << 20).unwrap();
                let sched = ctx.schedule(1 << 20, chunks).unwrap();
                let mut routes = PlanRoutes::new(&ctx, &sched, 3, Policy::Spray);
                let (mut got, mut listed) = (Vec::new(), Vec::new());
                for i in 0..sched.len() {
                    let (s, d) = (sched.src[i] as usize, sched.dst[i] as usize);
                    got.clear();
                    routes.paths(i, &mut got).unwrap();
                    assert_eq!(routes.route(i).unwrap(), got[0]);
                    listed.clear();
                    let t = &ctx.table;
                    ctx.net
                        .flow_routes(Policy::Spray, t[s], t[d], flow_id(s, d), 3, &mut listed)
                        .unwrap();
                    let want: Vec<FlowRoute> = listed
                        .iter()
                        .map(|r| {
                            let mut w = FlowRoute {
                                latency: params.latency_us(r.switches()),
                                len: r.links().len() as u8,
                                ..FlowRoute::default()
                            };
                            for (k, &l) in r.links().iter().enumerate() {
                                w.links[k] = l as u32;
                            }
                            w
                        })
                        .collect();
                    assert_eq!(got, want, "{}: send {i}, {s} -> {d}", plan.name);
                    sprayed += usize::from(want.len() > 1);
                }
            }
            assert!(sprayed > 0, "{}", plan.name);
        }
    }
}
