//! The forwarding tables: per switch and destination switch, the equal-cost next hops, the one rule every route follows.
//!
//! [`Network::next_hops`] is the only place that says where a switch sends
//! traffic for another switch's sub-nodes. The rendered static routes list
//! its answer for every switch and destination ([`Network::table`]), and a
//! flow's route is a walk that, at every switch, takes one of its answers
//! by the ECMP hash (`flows.rs`), so the two cannot differ.
//!
//! The rule, on the whole plan:
//!
//! - BiGraph, towards a switch of the other part: the direct links;
//!   towards a switch of the same part: the links to switches of the other
//!   part that have a link to the destination (in a designed plan, every
//!   link to the other part).
//! - Fat-tree, up-down: a leaf or edge sends everything up, over all its
//!   uplinks; a spine sends down its links to the destination leaf; an
//!   aggregation switch sends down its links to an edge of its own pod and
//!   everything else up to the cores; a core sends down its links to the
//!   aggregation switches of the destination's pod that have a link to the
//!   destination.
//!
//! On a network that avoids links or switches ([`Network::avoiding`]), a
//! next hop must be alive and lead on: the switch it reaches has a next hop
//! of its own towards the destination, checked to the end of the route.
//! A BiGraph switch whose direct links to a switch of the other part are
//! all dead detours over a switch of the destination's part that can still
//! reach it. The order (upward links in port order, links towards one
//! switch by peer and then port) is the order ECMP numbers the choices in.

use std::sync::OnceLock;

use super::graph::{Canonical, NO_SLOT, RouteShape};
use super::links::{Faults, Network};
use crate::plan::Tier;

/// The most memory [`HopCache`] may take, in the worst case its bound
/// counts: 128 MiB (a 1,024-GPU plan needs under 1 MiB).
const HOP_CACHE_BYTES: usize = 128 << 20;

/// On a network that avoids something, the next hops
/// [`Network::next_hops`] filters, found once per destination switch
/// (on first use, for every switch at once) instead of at every hop of
/// every route: a failure analysis routes the same pairs of switches
/// millions of times. Empty (nothing kept) when the worst case, every
/// destination's row of every switch's hops, would pass
/// [`HOP_CACHE_BYTES`]: a row holds each directed inter-switch link at
/// most once, as the next hop of the switch it leaves.
#[derive(Debug, Clone, Default)]
pub(super) struct HopCache {
    /// Per destination switch, its row once found.
    pub(super) rows: Vec<OnceLock<HopRow>>,
}

/// The filtered next hops of every switch towards one destination:
/// switch `at`'s are `hops[start[at]..start[at + 1]]`, as `(peer, inter
/// index)` in ECMP order.
#[derive(Debug, Clone)]
pub(super) struct HopRow {
    start: Box<[u32]>,
    hops: Box<[(u32, u32)]>,
}

impl HopCache {
    /// A cache for `switches` switches and `inter` directed inter-switch
    /// links, or an empty one past [`HOP_CACHE_BYTES`].
    pub(super) fn new(switches: usize, inter: usize) -> Self {
        let row = (switches + 1) * 4 + inter * 8 + 64;
        if switches.saturating_mul(row) > HOP_CACHE_BYTES {
            return Self::default();
        }
        Self {
            rows: (0..switches).map(|_| OnceLock::new()).collect(),
        }
    }
}

/// The next hops of one switch towards one destination switch, as inter
/// indices (directed inter-switch link `k` has link id `2S + k`), in ECMP
/// order.
#[derive(Debug, Clone, Copy)]
pub enum NextHops<'n> {
    /// Every one of the switch's upward links, as `(peer, inter index)`.
    All(&'n [(u32, u32)]),
    /// Every link of this run of `(peer, inter index)`.
    Run(&'n [(u32, u32)]),
    /// Every one of the switch's upward links on a canonical BiGraph
    /// ([`super::graph::Canonical`]): the i-th is inter index `first + i`
    /// and leads to the i-th switch of part `part`, the other part.
    Part {
        /// The inter index of the first.
        first: u32,
        /// The part they lead to.
        part: u32,
    },
    /// The one link towards a switch ([`Network::direct_hops`]): a run of
    /// one, without reading the run.
    Single {
        /// Its inter index.
        k: u32,
        /// The switch it leads to.
        to: u32,
    },
    /// The ones [`Network::next_hops`] filters out of the switch's links.
    Filtered {
        /// The switch.
        at: usize,
        /// The destination switch.
        to: usize,
    },
}

impl NextHops<'_> {
    /// Calls `visit` with every next hop in ECMP order until it returns
    /// false.
    pub fn visit(&self, net: &Network<'_>, visit: &mut dyn FnMut(u32) -> bool) {
        match *self {
            NextHops::All(run) | NextHops::Run(run) => {
                for &(_, k) in run {
                    if !visit(k) {
                        return;
                    }
                }
            }
            NextHops::Part { first, .. } => {
                for k in (first..).take(self.len(net)) {
                    if !visit(k) {
                        return;
                    }
                }
            }
            NextHops::Single { k, .. } => {
                visit(k);
            }
            NextHops::Filtered { at, to } => net.filtered(at, to, visit),
        }
    }

    /// Number of next hops.
    #[inline]
    pub fn len(&self, net: &Network<'_>) -> usize {
        match *self {
            NextHops::All(run) | NextHops::Run(run) => run.len(),
            NextHops::Part { part, .. } => net.part_members(part).len(),
            NextHops::Single { .. } => 1,
            NextHops::Filtered { .. } => {
                let mut n = 0;
                self.visit(net, &mut |_| {
                    n += 1;
                    true
                });
                n
            }
        }
    }

    /// True when there is no next hop.
    pub fn is_empty(&self, net: &Network<'_>) -> bool {
        match *self {
            NextHops::All(run) | NextHops::Run(run) => run.is_empty(),
            NextHops::Part { part, .. } => net.part_members(part).is_empty(),
            NextHops::Single { .. } => false,
            NextHops::Filtered { .. } => {
                let mut any = false;
                self.visit(net, &mut |_| {
                    any = true;
                    false
                });
                !any
            }
        }
    }

    /// The `i`-th next hop in ECMP order and the switch it leads to:
    /// read from the run itself where the hops are one, so a route's walk
    /// touches no other table.
    #[inline]
    pub fn hop(&self, net: &Network<'_>, i: usize) -> Option<(u32, usize)> {
        match *self {
            NextHops::All(run) | NextHops::Run(run) => run.get(i).map(|&(to, k)| (k, to as usize)),
            NextHops::Part { first, part } => net
                .part_members(part)
                .get(i)
                .map(|&to| (first + i as u32, to as usize)),
            NextHops::Single { k, to } => (i == 0).then_some((k, to as usize)),
            NextHops::Filtered { .. } => self
                .nth(net, i)
                .map(|k| (k, net.graph.inter[k as usize].to as usize)),
        }
    }

    /// The `i`-th next hop in ECMP order.
    pub fn nth(&self, net: &Network<'_>, i: usize) -> Option<u32> {
        match *self {
            NextHops::All(run) | NextHops::Run(run) => run.get(i).map(|&(_, k)| k),
            NextHops::Part { first, part } => {
                (i < net.part_members(part).len()).then(|| first + i as u32)
            }
            NextHops::Single { k, .. } => (i == 0).then_some(k),
            NextHops::Filtered { .. } => {
                let mut seen = 0;
                let mut chosen = None;
                self.visit(net, &mut |k| {
                    if seen == i {
                        chosen = Some(k);
                        return false;
                    }
                    seen += 1;
                    true
                });
                chosen
            }
        }
    }
}

impl Network<'_> {
    /// The equal-cost next hops of switch `at` towards the sub-nodes of
    /// switch `to` (indices into `plan.switch_list`; see the module
    /// documentation). Empty when `at == to`, when either is avoided, or
    /// when no route leads there.
    #[inline(always)]
    pub fn next_hops(&self, at: usize, to: usize) -> NextHops<'_> {
        let switches = self.graph.tier.len();
        if at == to || at >= switches || to >= switches {
            return NextHops::All(&[]);
        }
        if let Some(f) = &self.faults {
            return self.next_hops_avoiding(f, at, to);
        }
        if let Some(c) = &self.graph.canonical {
            return match self.canonical_hop(c, at, to, 0) {
                Some((k, next)) if next as usize == to => NextHops::Single { k, to: next },
                _ => NextHops::Part {
                    first: self.graph.adj_start[at],
                    part: 1 - Canonical::part(self.graph.tier[at]) as u32,
                },
            };
        }
        match (self.graph.fabric, self.graph.tier[at]) {
            (RouteShape::BiGraph, _) if self.graph.tier[at] != self.graph.tier[to] => {
                self.direct_hops(at, to)
            }
            (RouteShape::BiGraph, _) if self.graph.complete[to] => NextHops::All(self.up_of(at)),
            (RouteShape::BiGraph, _) | (RouteShape::ThreeTier, Tier::Core) => {
                NextHops::Filtered { at, to }
            }
            (RouteShape::TwoTier, Tier::Spine) => self.direct_hops(at, to),
            (RouteShape::ThreeTier, Tier::Aggregation)
                if self.graph.pod[at] == self.graph.pod[to] =>
            {
                self.direct_hops(at, to)
            }
            _ => NextHops::All(self.up_of(at)),
        }
    }

    /// [`Network::next_hops`] of two switches in range on a network that
    /// avoids something (kept out of line: a proof on the whole plan
    /// walks millions of hops without it).
    #[inline(never)]
    fn next_hops_avoiding<'s>(&'s self, f: &'s Faults, at: usize, to: usize) -> NextHops<'s> {
        if f.switch[at] || f.switch[to] {
            return NextHops::All(&[]);
        }
        // Between two untouched switches with the same neighbours every
        // upward link is alive and leads on over an alive link: the
        // choices of the whole plan.
        let two_hop = match self.graph.fabric {
            RouteShape::BiGraph => self.graph.tier[at] == self.graph.tier[to],
            RouteShape::TwoTier => self.graph.tier[at] == Tier::Leaf,
            RouteShape::ThreeTier => {
                self.graph.tier[at] == Tier::Edge && self.graph.pod[at] == self.graph.pod[to]
            }
        };
        if two_hop && f.clean[at] && f.clean[to] && f.neighbours[at] == f.neighbours[to] {
            return NextHops::All(self.up_of(at));
        }
        // The filtered hops as a run, found once per destination; none
        // left keeps `Filtered`, whose dead end names why.
        if let Some(row) = f.hops.rows.get(to) {
            let row = row.get_or_init(|| self.hop_row(to));
            let hops = &row.hops[row.start[at] as usize..row.start[at + 1] as usize];
            if !hops.is_empty() {
                return NextHops::Run(hops);
            }
        }
        NextHops::Filtered { at, to }
    }

    /// On a canonical BiGraph ([`super::graph::Canonical`]), how many next
    /// hops switch `at` has towards switch `to` (two different switches):
    /// the one link to a switch of the other part, every upward link
    /// towards a switch of its own part.
    #[inline]
    pub(super) fn canonical_choices(&self, c: &Canonical, at: usize, to: usize) -> usize {
        let tier = &self.graph.tier;
        if tier[at] == tier[to] {
            c.members[1 - Canonical::part(tier[at])].len()
        } else {
            1
        }
    }

    /// On a canonical BiGraph, the `i`-th next hop of switch `at` towards
    /// switch `to` (two different switches) in ECMP order, as its inter
    /// index and the switch it leads to: what [`Network::next_hops`] gives
    /// there, from the canonical tables alone.
    #[inline]
    pub(super) fn canonical_hop(
        &self,
        c: &Canonical,
        at: usize,
        to: usize,
        i: usize,
    ) -> Option<(u32, u32)> {
        let (tier, first) = (&self.graph.tier, self.graph.adj_start[at]);
        if tier[at] == tier[to] {
            let other = &c.members[1 - Canonical::part(tier[at])];
            other.get(i).map(|&next| (first + i as u32, next))
        } else {
            (i == 0).then(|| (first + c.position[to], to as u32))
        }
    }

    /// The switches of part `part` of a canonical BiGraph
    /// ([`super::graph::Canonical`]) in plan order; none on another graph.
    #[inline]
    pub(super) fn part_members(&self, part: u32) -> &[u32] {
        self.graph
            .canonical
            .as_ref()
            .and_then(|c| c.members.get(part as usize))
            .map_or(&[], |m| m.as_slice())
    }

    /// The links from switch `at` to switch `to` as next hops: the one link
    /// from the single-link table where exactly one joins them, else the
    /// run of parallel links (none, or several).
    #[inline]
    pub(super) fn direct_hops(&self, at: usize, to: usize) -> NextHops<'_> {
        match self.graph.single.get(at * self.graph.tier.len() + to) {
            Some(&slot) if slot != NO_SLOT => NextHops::Single {
                k: self.graph.adj_start[at] + u32::from(slot),
                to: to as u32,
            },
            _ => NextHops::Run(self.links_to(at, to)),
        }
    }

    /// The next hops of switch `at` towards switch `to` as directed link
    /// ids, in ECMP order: the forwarding table entry that `render` writes
    /// as static routes.
    pub fn table(&self, at: usize, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.next_hops(at, to).visit(self, &mut |k| {
            out.push(self.id(k));
            true
        });
        out
    }

    /// Every switch's [`Network::filtered`] next hops towards `to`.
    fn hop_row(&self, to: usize) -> HopRow {
        let switches = self.graph.tier.len();
        let mut start = Vec::with_capacity(switches + 1);
        let mut hops = Vec::new();
        for at in 0..switches {
            start.push(hops.len() as u32);
            if at != to {
                self.filtered(at, to, &mut |k| {
                    hops.push((self.graph.inter[k as usize].to, k));
                    true
                });
            }
        }
        start.push(hops.len() as u32);
        HopRow {
            start: start.into(),
            hops: hops.into(),
        }
    }

    /// The next hops [`Network::next_hops`] does not give as a whole run.
    fn filtered(&self, at: usize, to: usize, visit: &mut dyn FnMut(u32) -> bool) {
        let reach = |k: u32| self.graph.inter[k as usize].to as usize;
        let mut each = |ks: &mut dyn Iterator<Item = u32>, keep: &dyn Fn(u32) -> bool| {
            for k in ks {
                if keep(k) && !visit(k) {
                    return;
                }
            }
        };
        let row = &self.graph.adj
            [self.graph.adj_start[at] as usize..self.graph.adj_start[at + 1] as usize];
        let run = |a: usize, b: usize| self.links_to(a, b).iter().map(|&(_, k)| k);
        let ups = self.up_of(at).iter().map(|&(_, k)| k);
        if self.faults.is_none() {
            match self.graph.fabric {
                // Within a part: the switches of the other part that link
                // to the destination.
                RouteShape::BiGraph => each(&mut ups.clone(), &|k| self.has_link(reach(k), to)),
                // A core: the aggregation switches of the destination's pod
                // with a link to it.
                _ => each(&mut row.iter().map(|&(_, k)| k), &|k| {
                    let agg = reach(k);
                    self.graph.tier[agg] == Tier::Aggregation
                        && self.graph.pod[agg] == self.graph.pod[to]
                        && self.has_link(agg, to)
                }),
            }
            return;
        }
        let alive_to = |k: u32| self.alive(k) && self.up_switch(reach(k));
        match (self.graph.fabric, self.graph.tier[at]) {
            (RouteShape::BiGraph, _) if self.graph.tier[at] != self.graph.tier[to] => {
                if self.has_alive(at, to) {
                    each(&mut run(at, to), &|k| self.alive(k));
                } else {
                    // Detour: up to a switch of the destination's part that
                    // has a way back to this part that reaches it.
                    each(&mut ups.clone(), &|k| {
                        let x = reach(k);
                        x != to
                            && alive_to(k)
                            && self
                                .up_of(x)
                                .iter()
                                .any(|&(_, j)| alive_to(j) && self.has_alive(reach(j), to))
                    });
                }
            }
            (RouteShape::BiGraph, _) | (RouteShape::TwoTier, Tier::Leaf) => {
                each(&mut ups.clone(), &|k| {
                    alive_to(k) && self.has_alive(reach(k), to)
                });
            }
            (RouteShape::TwoTier, _) => each(&mut run(at, to), &|k| self.alive(k)),
            (RouteShape::ThreeTier, Tier::Edge) if self.graph.pod[at] == self.graph.pod[to] => {
                each(&mut ups.clone(), &|k| {
                    alive_to(k) && self.has_alive(reach(k), to)
                });
            }
            (RouteShape::ThreeTier, Tier::Edge) => each(&mut ups.clone(), &|k| {
                alive_to(k)
                    && self.up_of(reach(k)).iter().any(|&(_, j)| {
                        self.alive(j) && self.core_leads(reach(j), self.graph.pod[to], to)
                    })
            }),
            (RouteShape::ThreeTier, Tier::Aggregation)
                if self.graph.pod[at] == self.graph.pod[to] =>
            {
                each(&mut run(at, to), &|k| self.alive(k));
            }
            (RouteShape::ThreeTier, Tier::Aggregation) => each(&mut ups.clone(), &|k| {
                self.alive(k) && self.core_leads(reach(k), self.graph.pod[to], to)
            }),
            (RouteShape::ThreeTier, _) => each(&mut row.iter().map(|&(_, k)| k), &|k| {
                let agg = reach(k);
                self.graph.tier[agg] == Tier::Aggregation
                    && self.graph.pod[agg] == self.graph.pod[to]
                    && alive_to(k)
                    && self.has_alive(agg, to)
            }),
        }
    }
}
