//! The per-flow walk: at each switch the flow's ECMP hash picks one of that switch's next hops towards the destination.
//!
//! A route is never derived on its own: [`Network::route`] starts at the
//! source's switch and, until it reaches the destination's, asks
//! [`Network::next_hops`] (the forwarding table `render` writes) for the
//! switch's choices and takes the one at [`ecmp_hash`] mod their number.
//! Each step costs one table lookup, so a route costs O(hops) on the whole
//! plan, also at 131,072 sub-nodes.

use std::collections::HashMap;

use super::graph::RouteShape;
use super::hash::{PortSeed, ecmp_hash, sub_node_ip};
use super::links::Network;
use super::tables::NextHops;
use super::{MAX_LINKS, Route};
use crate::error::{Error, Problem, Result};
use crate::plan::Tier;

/// What the ECMP hash of a flow is made from.
#[derive(Debug, Clone, Copy)]
struct FlowKey {
    src: usize,
    dst: usize,
    flow: u64,
    seed: PortSeed,
}

/// How [`Network::walk`] picks among a switch's next hops.
#[derive(Debug, Clone, Copy)]
enum Pick {
    /// The ECMP hash of the flow.
    Hash(FlowKey),
    /// D-mod-K: `divisor` is the product of the upward choice counts so
    /// far.
    DModK { divisor: u64 },
}

/// Most inter-switch hops of a route.
const MAX_HOPS: usize = MAX_LINKS - 2;

impl Network<'_> {
    /// The route of one flow from sub-node `src` to sub-node `dst`
    /// (indices into `plan.sub_node_list`). `flow` identifies the flow and,
    /// with `seed`, sets its UDP source port (see [`super::source_port`]).
    pub fn route(&self, src: usize, dst: usize, flow: u64, seed: u64) -> Result<Route> {
        let mut r = Route::new();
        self.route_seeded(src, dst, flow, PortSeed::new(seed), &mut r)?;
        Ok(r)
    }

    /// [`Network::route`] written into `out`, with the seed's share of the
    /// hash taken once: for callers that route millions of flows under one
    /// seed (a route built in place is not copied out, a sixth of a
    /// walk's time).
    pub fn route_seeded(
        &self,
        src: usize,
        dst: usize,
        flow: u64,
        seed: PortSeed,
        out: &mut Route,
    ) -> Result<()> {
        let key = FlowKey {
            src,
            dst,
            flow,
            seed,
        };
        self.walk(src, dst, Pick::Hash(key), out)
    }

    /// The route of a flow from sub-node `src` to sub-node `dst` under
    /// D-mod-K (see [`super::policy`]): the l-th upward choice is digit l
    /// of the destination index in the mixed radix of the upward choice
    /// counts, a downward choice among parallel links `dst mod n`.
    pub fn route_dmodk(&self, src: usize, dst: usize) -> Result<Route> {
        let mut r = Route::new();
        self.walk(src, dst, Pick::DModK { divisor: 1 }, &mut r)?;
        Ok(r)
    }

    /// The walk from `src`'s switch to `dst`'s over the tables, each choice
    /// made by `pick`, written into `r`.
    fn walk(&self, src: usize, dst: usize, mut pick: Pick, r: &mut Route) -> Result<()> {
        let n = self.graph.sub_switch.len();
        for (what, sn) in [("source", src), ("destination", dst)] {
            if sn >= n {
                return Err(self.refusal(vec![Problem::at(
                    None,
                    format!("sub-node {sn}"),
                    format!("the {what} of a route is out of range: the plan has {n} sub-nodes"),
                    "route between sub-nodes of the plan",
                )]));
            }
        }
        let plane = self.plane_of(src, dst, &mut pick)?;
        let (sa, sb) = (self.switch_at(plane, src), self.switch_at(plane, dst));
        if self.faults.is_some() {
            for (sn, s) in [(src, sa), (dst, sb)] {
                if self.is_avoided_switch(s) {
                    return Err(Error::parameter(
                        "avoid",
                        format!(
                            "sub-node {} is on switch {}, which is avoided; route between sub-nodes of other switches",
                            self.plan.sub_node_list[sn].id, self.plan.switch_list[s].name
                        ),
                    ));
                }
            }
        }
        // A fresh route, whatever `r` held: equal to the one `route` gives.
        *r = Route::new();
        r.push(self.up_link_in(plane, src));
        let mut at = sa;
        while at != sb {
            if r.len > MAX_HOPS {
                return Err(Error::Internal(format!(
                    "a route from {} to {} is longer than {MAX_HOPS} hops",
                    self.plan.switch_list[sa].name, self.plan.switch_list[sb].name
                )));
            }
            let hops = self.next_hops(at, sb);
            let count = hops.len(self);
            if count == 0 {
                return Err(self.dead_end(hops, at, sa, sb));
            }
            let i = match &mut pick {
                Pick::Hash(key) => self.choose(at, count, key),
                Pick::DModK { divisor } => {
                    let first = hops.hop(self, 0).map_or(at, |(_, to)| to);
                    if self.upward(at, first, sb) {
                        let i = (dst as u64 / *divisor) % count as u64;
                        *divisor = divisor.saturating_mul(count as u64);
                        i as usize
                    } else {
                        dst % count
                    }
                }
            };
            let (k, next) = hops
                .hop(self, i)
                .ok_or_else(|| Error::Internal("ECMP chose past its next hops".to_string()))?;
            r.push(self.id(k));
            at = next;
        }
        r.push(self.down_link_in(plane, dst));
        Ok(())
    }

    /// The switch of port `plane` of sub-node `sn`'s NIC (checked in
    /// range by the caller).
    pub(super) fn switch_at(&self, plane: usize, sn: usize) -> usize {
        if plane == 0 {
            self.graph.sub_switch[sn] as usize
        } else {
            self.graph.sub_switch1[sn] as usize
        }
    }

    /// True when a flow from sub-node `src` to sub-node `dst` has a route:
    /// in some plane on a plan of dual-port NICs (HPN), else between their
    /// switches.
    pub fn nics_reachable(&self, src: usize, dst: usize) -> bool {
        let n = self.graph.sub_switch.len();
        src < n && dst < n && (0..self.planes()).any(|p| self.plane_usable(p, src, dst))
    }

    /// True when a flow from `src` to `dst` can go through plane `plane`:
    /// neither end's switch in it is avoided and one reaches the other.
    pub(super) fn plane_usable(&self, plane: usize, src: usize, dst: usize) -> bool {
        let (sa, sb) = (self.switch_at(plane, src), self.switch_at(plane, dst));
        !self.is_avoided_switch(sa) && !self.is_avoided_switch(sb) && self.reachable(sa, sb)
    }

    /// The plane (NIC port) a flow from `src` to `dst` takes: 0 on a plan
    /// of single-port NICs. On HPN's two planes the host picks one per
    /// flow: under ECMP by the flow's hash salted as no switch is (the
    /// bonded NIC's port choice), under D-mod-K by the destination's
    /// parity (the next upward choice then takes the next digit). A plane
    /// that cannot carry the flow (an avoided ToR, say) leaves the other.
    fn plane_of(&self, src: usize, dst: usize, pick: &mut Pick) -> Result<usize> {
        if self.graph.sub_switch1.is_empty() {
            return Ok(0);
        }
        let first = match pick {
            Pick::Hash(key) => {
                let h = ecmp_hash(
                    sub_node_ip(key.src),
                    sub_node_ip(key.dst),
                    key.seed.port(key.flow),
                    u32::MAX,
                );
                (h & 1) as usize
            }
            Pick::DModK { divisor } => {
                *divisor = 2;
                dst % 2
            }
        };
        if self.faults.is_none() || self.plane_usable(first, src, dst) {
            return Ok(first);
        }
        let other = 1 - first;
        if self.plane_usable(other, src, dst) {
            return Ok(other);
        }
        // Neither plane: the walk in the first reports why.
        Ok(first)
    }

    /// True when a flow from switch `a` can reach switch `b` (always for
    /// `a == b`).
    pub fn reachable(&self, a: usize, b: usize) -> bool {
        if a == b {
            return !self.is_avoided_switch(a);
        }
        if self.faults.is_none() {
            return self.leads_to(a, b, 0);
        }
        // With faults every next hop leads on to `b`.
        !self.next_hops(a, b).is_empty(self)
    }

    /// Every route (as inter-switch link ids) that a flow from a sub-node
    /// on switch `a` to one on switch `b` may take, whatever its ECMP hash:
    /// the choices of [`Network::route`] at every hop, in the order it
    /// considers them. Empty when `a == b` or no route exists.
    pub fn switch_paths(&self, a: usize, b: usize) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        if a == b || a >= self.graph.tier.len() || b >= self.graph.tier.len() {
            return out;
        }
        if self.is_avoided_switch(a) || self.is_avoided_switch(b) {
            return out;
        }
        let mut path = Vec::with_capacity(MAX_LINKS);
        self.paths_from(b, a, &mut path, &mut out);
        out
    }

    /// Extends `path` (the hops so far of a route towards switch `to`, now
    /// at `at`) by every next hop, depth first.
    fn paths_from(&self, to: usize, at: usize, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if at == to {
            out.push(path.clone());
            return;
        }
        if path.len() == MAX_HOPS {
            return;
        }
        let mut next = Vec::new();
        self.next_hops(at, to).visit(self, &mut |k| {
            next.push(k);
            true
        });
        for k in next {
            path.push(self.id(k));
            self.paths_from(to, self.graph.inter[k as usize].to as usize, path, out);
            path.pop();
        }
    }

    /// True when some route of [`Network::switch_paths`] continues from
    /// switch `at`, reached after `hops` inter-switch hops, to switch `to`:
    /// the same walk, stopped at the first route found.
    fn leads_to(&self, at: usize, to: usize, hops: usize) -> bool {
        if at == to {
            return true;
        }
        if hops == MAX_HOPS {
            return false;
        }
        let mut found = false;
        self.next_hops(at, to).visit(self, &mut |k| {
            found = self.leads_to(self.graph.inter[k as usize].to as usize, to, hops + 1);
            !found
        });
        found
    }

    /// How many routes of [`Network::switch_paths`] from switch `a` to
    /// switch `b` take each inter-switch link: appends `(link id, routes)`
    /// to `out` for every link some route takes, in link id order, and
    /// returns the number of routes (0 when `switch_paths` is empty). The
    /// numbers are those of counting `switch_paths(a, b)`, in time
    /// proportional to the links on the routes rather than to the routes
    /// (a leaf-spine's k spines give k routes over 2k links; HPN's 128
    /// uplinks of a ToR and 4 parallel links down give 512 routes over 256
    /// links): with `m(x, h)` the routes' beginnings that reach switch x
    /// after h hops and `n(y, h)` their continuations from switch y after
    /// h hops to `b`, a link from x to y taken as hop h + 1 is on
    /// `m(x, h) · n(y, h + 1)` routes.
    pub fn switch_path_counts(&self, a: usize, b: usize, out: &mut Vec<(usize, u64)>) -> u64 {
        if a == b || a >= self.graph.tier.len() || b >= self.graph.tier.len() {
            return 0;
        }
        if self.is_avoided_switch(a) || self.is_avoided_switch(b) {
            return 0;
        }
        // Per hop count h: the switches reached after h hops with their
        // beginnings m, and the hops taken from them (index of the switch
        // in its layer, inter index, index of the switch reached in the
        // next layer).
        let mut layers: Vec<Vec<(usize, u64)>> = vec![vec![(a, 1)]];
        let mut hops: Vec<Vec<(usize, u32, usize)>> = Vec::with_capacity(MAX_HOPS);
        let mut at_index: HashMap<usize, usize> = HashMap::new();
        for h in 0..MAX_HOPS {
            let mut next: Vec<(usize, u64)> = Vec::new();
            let mut taken = Vec::new();
            at_index.clear();
            for (i, &(x, m)) in layers[h].iter().enumerate() {
                if x == b {
                    continue;
                }
                self.next_hops(x, b).visit(self, &mut |k| {
                    let y = self.graph.inter[k as usize].to as usize;
                    let j = *at_index.entry(y).or_insert_with(|| {
                        next.push((y, 0));
                        next.len() - 1
                    });
                    next[j].1 = next[j].1.saturating_add(m);
                    taken.push((i, k, j));
                    true
                });
            }
            let done = next.is_empty();
            layers.push(next);
            hops.push(taken);
            if done {
                break;
            }
        }
        // Continuations, from the last layer back: `b` ends a route (even
        // after the most hops), any other switch of the last layer none.
        let mut after: Vec<u64> = layers[layers.len() - 1]
            .iter()
            .map(|&(x, _)| u64::from(x == b))
            .collect();
        let start = out.len();
        for h in (0..hops.len()).rev() {
            let mut here: Vec<u64> = layers[h].iter().map(|&(x, _)| u64::from(x == b)).collect();
            for &(i, k, j) in &hops[h] {
                let routes = layers[h][i].1.saturating_mul(after[j]);
                if routes > 0 {
                    out.push((self.id(k), routes));
                }
                here[i] = here[i].saturating_add(after[j]);
            }
            after = here;
        }
        // One entry per link, in id order (a link taken at two hop counts
        // is one entry).
        out[start..].sort_unstable_by_key(|&(l, _)| l);
        let mut w = start;
        for r in start..out.len() {
            if w > start && out[w - 1].0 == out[r].0 {
                out[w - 1].1 = out[w - 1].1.saturating_add(out[r].1);
            } else {
                out[w] = out[r];
                w += 1;
            }
        }
        out.truncate(w);
        after[0]
    }

    /// True when the hop from switch `at` to switch `next`, on a route
    /// towards switch `to`, goes up: to a higher fat-tree tier, or within a
    /// BiGraph part out to the other part.
    fn upward(&self, at: usize, next: usize, to: usize) -> bool {
        let level = |t: Tier| match t {
            Tier::Leaf | Tier::Edge | Tier::Upper | Tier::Lower => 0,
            Tier::Spine | Tier::Aggregation => 1,
            Tier::Core => 2,
        };
        match self.graph.fabric {
            RouteShape::BiGraph => {
                self.graph.tier[at] == self.graph.tier[to]
                    && self.graph.tier[next] != self.graph.tier[at]
            }
            _ => level(self.graph.tier[next]) > level(self.graph.tier[at]),
        }
    }

    /// Index of the chosen next hop among `n` at switch `at`.
    fn choose(&self, at: usize, n: usize, key: &FlowKey) -> usize {
        if n == 1 {
            return 0;
        }
        let h = ecmp_hash(
            sub_node_ip(key.src),
            sub_node_ip(key.dst),
            key.seed.port(key.flow),
            at as u32,
        );
        (h % n as u64) as usize
    }

    /// The error for a route from switch `sa` to switch `sb` that reached
    /// switch `at`, which has no next hop towards `sb`.
    fn dead_end(&self, hops: NextHops<'_>, at: usize, sa: usize, sb: usize) -> Error {
        let name = |s: usize| self.plan.switch_list[s].name.as_str();
        if let Some(f) = &self.faults {
            return Error::parameter(
                "avoid",
                format!(
                    "no route from switch {} to switch {} keeps off {}; avoid fewer links, or avoid one of the two switches as well so that no rank is placed on it",
                    name(sa),
                    name(sb),
                    f.described.join(", ")
                ),
            );
        }
        let why = match hops {
            NextHops::All(_) | NextHops::Part { .. } => {
                "it has no link to the next tier up (or the other part)".to_string()
            }
            NextHops::Run(_) | NextHops::Single { .. } => {
                format!("it has no link to {}", name(sb))
            }
            NextHops::Filtered { .. } if self.graph.fabric == RouteShape::BiGraph => format!(
                "it has no link to a switch of the other part that links to {}",
                name(sb)
            ),
            NextHops::Filtered { .. } => {
                debug_assert_eq!(self.graph.tier[at], Tier::Core);
                format!("it has no link to an aggregation switch above {}", name(sb))
            }
        };
        self.refusal(vec![Problem::at(
            None,
            format!("switch {}", name(at)),
            format!("no route through it: {why}"),
            format!(
                "cable it as a {} needs, or design the plan again",
                self.graph.fabric.name()
            ),
        )])
    }
}
