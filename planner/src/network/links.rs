//! A plan ready for routing: the plan, its route graph ([`super::graph`]) shared, what routes avoid, and a dense id per directed link.
//!
//! Every directed link has a dense id, so loads are counted in a plain
//! vector. With S sub-nodes:
//!
//! - `0..S`: access link up, from sub-node i's NIC to its switch;
//! - `S..2S`: access link down, from the switch to sub-node i's NIC;
//! - `2S..2S + I`: one id per switch port with role `inter_switch`, in
//!   switch order and then port order. The id of port p of switch a is the
//!   direction a to its peer, so each cable has two ids, one from each end,
//!   and parallel cables between the same two switches are distinct links;
//! - on a plan of dual-port NICs (HPN) only, `2S + I..3S + I` and
//!   `3S + I..4S + I`: the access links up and down of each NIC's port 1
//!   (plane B); ids `0..2S` are then port 0 (plane A).

use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::Link;
use super::avoid::{Avoid, Target};
use super::graph::RouteGraph;
use crate::error::{Error, Problem, Result};
use crate::plan::{Plan, Tier};

/// A plan ready for routing: the plan, where it came from, its route
/// graph ([`RouteGraph`], shared) and what routes keep off. A clone
/// shares the graph.
#[derive(Debug, Clone)]
pub struct Network<'a> {
    pub(super) plan: &'a Plan,
    /// Where the plan came from, for errors about it.
    pub(super) source: &'a str,
    /// The plan's route graph.
    pub(super) graph: Arc<RouteGraph>,
    /// What routes keep off; `None` routes on the whole plan.
    pub(super) faults: Option<Faults>,
}

/// Switches and cables that routes keep off.
#[derive(Debug, Clone)]
pub(super) struct Faults {
    /// Per switch: avoided.
    pub(super) switch: Vec<bool>,
    /// Per inter index: the cable is avoided.
    pub(super) inter: Vec<bool>,
    /// The `--avoid` values, as typed, for error messages.
    pub(super) described: Vec<String>,
    /// Per switch: not avoided, and every link to and from it usable.
    pub(super) clean: Vec<bool>,
    /// Per switch: an id shared by the switches with the same set of
    /// neighbours.
    pub(super) neighbours: Vec<u32>,
    /// The filtered next hops towards each destination switch, found
    /// once each ([`super::tables::HopCache`]).
    pub(super) hops: super::tables::HopCache,
}

impl<'a> Network<'a> {
    /// Builds the graph of `plan`: every sub-node's switch and every
    /// inter-switch port, checking that each such port's peer points back.
    /// Errors name the plan as `source` (the file it was read from, or the
    /// inventory it was designed from).
    pub fn new(plan: &'a Plan, source: &'a str) -> Result<Self> {
        let graph = RouteGraph::build(plan).map_err(|problems| Error::Invalid {
            file: source.to_string(),
            what: "plan",
            problems,
        })?;
        Ok(Self::on(plan, source, Arc::new(graph)))
    }

    /// The network of `plan` on `graph`, which must be the route graph
    /// [`RouteGraph::build`] built from `plan` itself (the checked plan
    /// keeps the one its check built, `crate::checked`); errors name the
    /// plan as `source`. Nothing is read or built: the view costs nothing.
    pub(crate) fn on(plan: &'a Plan, source: &'a str, graph: Arc<RouteGraph>) -> Self {
        Self {
            plan,
            source,
            graph,
            faults: None,
        }
    }

    /// The route graph this network routes on (for the tests that hold
    /// it equal to, or the same as, another).
    #[cfg(test)]
    pub(crate) fn graph(&self) -> &Arc<RouteGraph> {
        &self.graph
    }

    /// Builds the graph of `plan` as [`Network::new`] does, with routes
    /// that keep off everything in `avoid` (see the module documentation).
    /// With nothing to avoid this is [`Network::new`].
    pub fn avoiding(plan: &'a Plan, source: &'a str, avoid: &[Avoid]) -> Result<Self> {
        Self::new(plan, source)?.into_avoiding(avoid)
    }

    /// This network (built on the whole plan) with routes that keep off
    /// everything in `avoid`: what [`Network::avoiding`] builds, without
    /// reading the plan again, so that a failure analysis builds the graph
    /// once and clones it per scenario.
    pub fn into_avoiding(mut self, avoid: &[Avoid]) -> Result<Self> {
        if avoid.is_empty() {
            return Ok(self);
        }
        if let Some(f) = &self.faults {
            return Err(Error::parameter(
                "avoid",
                format!(
                    "the network already avoids {}; build it from the whole plan to avoid {}",
                    f.described.join(", "),
                    avoid
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let plan = self.plan;
        let net = &mut self;
        let switches = net.graph.tier.len();
        let mut faults = Faults {
            switch: vec![false; switches],
            inter: vec![false; net.graph.inter.len()],
            described: Vec::with_capacity(avoid.len()),
            clean: Vec::new(),
            neighbours: Vec::new(),
            hops: super::tables::HopCache::new(switches, net.graph.inter.len()),
        };
        for a in avoid {
            match a.resolve(plan)? {
                Target::Switch(s) => faults.switch[s] = true,
                Target::Link(x, y) => {
                    let mut found = false;
                    for (from, to) in [(x, y), (y, x)] {
                        for &(_, k) in net.links_to(from, to) {
                            faults.inter[k as usize] = true;
                            found = true;
                        }
                    }
                    if !found {
                        return Err(Error::parameter(
                            "avoid",
                            format!(
                                "no link between {} and {} in the plan; name two switches that are cabled to each other",
                                plan.switch_list[x].name, plan.switch_list[y].name
                            ),
                        ));
                    }
                }
            }
            faults.described.push(a.to_string());
        }
        net.faults = Some(faults);
        // Which switches the faults leave untouched, and which share their
        // neighbours: between two such switches a route has exactly the
        // choices it has without faults, and takes the fast path.
        let mut ids: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
        let mut clean = Vec::with_capacity(switches);
        let mut neighbours = Vec::with_capacity(switches);
        for a in 0..switches {
            let row = &net.graph.adj
                [net.graph.adj_start[a] as usize..net.graph.adj_start[a + 1] as usize];
            clean.push(!net.is_avoided_switch(a) && row.iter().all(|&(_, k)| net.alive(k)));
            let mut peers: Vec<u32> = row.iter().map(|&(p, _)| p).collect();
            peers.dedup();
            let next = ids.len() as u32;
            neighbours.push(*ids.entry(peers).or_insert(next));
        }
        if let Some(f) = net.faults.as_mut() {
            f.clean = clean;
            f.neighbours = neighbours;
        }
        Ok(self)
    }

    /// True when routes keep off some link or switch.
    pub fn avoids_anything(&self) -> bool {
        self.faults.is_some()
    }

    /// True when this is the network [`Network::avoiding`] builds for
    /// `plan` and `avoid`: built from `plan` itself, keeping off exactly
    /// what `avoid` names, in its order. Functions that take a network a
    /// caller built once for several uses (`plan_ranks_on`, say) check
    /// it with this.
    pub fn is_avoiding(&self, plan: &Plan, avoid: &[Avoid]) -> bool {
        let described = self.faults.as_ref().map_or(&[][..], |f| &f.described[..]);
        std::ptr::eq(self.plan, plan)
            && described.len() == avoid.len()
            && described
                .iter()
                .zip(avoid)
                .all(|(d, a)| *d == a.to_string())
    }

    /// True when switch `s` is avoided: no rank may sit on it and no route
    /// crosses it.
    pub fn is_avoided_switch(&self, s: usize) -> bool {
        self.faults
            .as_ref()
            .is_some_and(|f| f.switch.get(s).copied().unwrap_or(false))
    }

    /// True when sub-node `sn` can carry no flow: the switch of every port
    /// of its NIC is avoided (one switch; on HPN, both planes' ToRs).
    pub fn cut_off(&self, sn: usize) -> bool {
        (0..self.planes()).all(|plane| {
            self.switch_in(plane, sn)
                .is_none_or(|s| self.is_avoided_switch(s))
        })
    }

    /// True when directed link `id` carries no route: an avoided cable, or
    /// one that ends on an avoided switch. Access links are never dead
    /// (their sub-nodes are simply not used).
    pub fn is_dead_link(&self, id: usize) -> bool {
        let inter = self.inter_switch_links();
        inter.contains(&id) && !self.alive((id - inter.start) as u32)
    }

    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.graph.tier.len()
    }

    /// Number of directed inter-switch links that can carry routes.
    pub fn alive_inter_switch_links(&self) -> usize {
        (0..self.graph.inter.len() as u32)
            .filter(|&k| self.alive(k))
            .count()
    }

    /// The switches an inter-switch link id joins, `(from, to)`.
    pub fn ends(&self, id: usize) -> Option<(usize, usize)> {
        let base = 2 * self.graph.sub_switch.len();
        id.checked_sub(base)
            .and_then(|k| self.graph.inter.get(k))
            .map(|l| (l.from as usize, l.to as usize))
    }

    /// Number of links from switch `a` to switch `b` that can carry
    /// routes.
    pub fn direct_links(&self, a: usize, b: usize) -> usize {
        if a >= self.graph.tier.len() || b >= self.graph.tier.len() {
            return 0;
        }
        self.links_to(a, b)
            .iter()
            .filter(|&&(_, k)| self.alive(k))
            .count()
    }

    /// The plan this network was built from.
    pub fn plan(&self) -> &'a Plan {
        self.plan
    }

    /// Where the plan came from, as its errors name it.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// The error refusing the plan for `problems`.
    pub(super) fn refusal(&self, problems: Vec<Problem>) -> Error {
        Error::Invalid {
            file: self.source.to_string(),
            what: "plan",
            problems,
        }
    }

    /// Number of directed links, access links included.
    pub fn link_count(&self) -> usize {
        2 * (self.graph.sub_switch.len() + self.graph.sub_switch1.len()) + self.graph.inter.len()
    }

    /// The ids of the access links (up and down) of every NIC's port 0.
    pub fn access_links(&self) -> Range<usize> {
        0..2 * self.graph.sub_switch.len()
    }

    /// The ids of the access links (up and down) of the NICs' port 1 on a
    /// plan of dual-port NICs; empty otherwise.
    pub fn second_port_links(&self) -> Range<usize> {
        let base = 2 * self.graph.sub_switch.len() + self.graph.inter.len();
        base..base + 2 * self.graph.sub_switch1.len()
    }

    /// NIC ports per sub-node the routes use: 2 on a plan of dual-port
    /// NICs (HPN's two planes), else 1.
    pub fn planes(&self) -> usize {
        if self.graph.sub_switch1.is_empty() {
            1
        } else {
            2
        }
    }

    /// The access link up from port `plane` of sub-node `sub_node`'s NIC.
    pub(super) fn up_link_in(&self, plane: usize, sub_node: usize) -> usize {
        if plane == 0 {
            self.up_link(sub_node)
        } else {
            self.second_port_links().start + sub_node
        }
    }

    /// The access link down to port `plane` of sub-node `sub_node`'s NIC.
    pub(super) fn down_link_in(&self, plane: usize, sub_node: usize) -> usize {
        if plane == 0 {
            self.down_link(sub_node)
        } else {
            self.second_port_links().start + self.graph.sub_switch1.len() + sub_node
        }
    }

    /// The switch of port `plane` of sub-node `sub_node`'s NIC.
    pub fn switch_in(&self, plane: usize, sub_node: usize) -> Option<usize> {
        if plane == 0 {
            self.switch_of(sub_node)
        } else {
            self.graph.sub_switch1.get(sub_node).map(|&s| s as usize)
        }
    }

    /// The ids of the directed inter-switch links.
    pub fn inter_switch_links(&self) -> Range<usize> {
        let base = 2 * self.graph.sub_switch.len();
        base..base + self.graph.inter.len()
    }

    /// The access link up from sub-node `sub_node`.
    pub fn up_link(&self, sub_node: usize) -> usize {
        sub_node
    }

    /// The access link down to sub-node `sub_node`.
    pub fn down_link(&self, sub_node: usize) -> usize {
        self.graph.sub_switch.len() + sub_node
    }

    /// The access link down to port `port` of sub-node `sub_node`'s NIC
    /// (port 1 only on a plan of dual-port NICs).
    pub fn down_link_of_port(&self, sub_node: usize, port: u8) -> usize {
        if port == 0 {
            self.down_link(sub_node)
        } else {
            self.second_port_links().start + self.graph.sub_switch1.len() + sub_node
        }
    }

    /// The switch (index into `plan.switch_list`) of a sub-node.
    pub fn switch_of(&self, sub_node: usize) -> Option<usize> {
        self.graph.sub_switch.get(sub_node).map(|&s| s as usize)
    }

    /// What link `id` is.
    pub fn link(&self, id: usize) -> Option<Link> {
        let s = self.graph.sub_switch.len();
        let second = self.second_port_links();
        if id < s {
            Some(Link::Up {
                sub_node: id,
                port: 0,
            })
        } else if id < 2 * s {
            Some(Link::Down {
                sub_node: id - s,
                port: 0,
            })
        } else if second.contains(&id) {
            let k = id - second.start;
            let s1 = self.graph.sub_switch1.len();
            Some(if k < s1 {
                Link::Up {
                    sub_node: k,
                    port: 1,
                }
            } else {
                Link::Down {
                    sub_node: k - s1,
                    port: 1,
                }
            })
        } else {
            self.graph.inter.get(id - 2 * s).map(|l| Link::InterSwitch {
                from: l.from as usize,
                port: l.port,
                to: l.to as usize,
            })
        }
    }

    /// Link `id` as a person reads it: `node01/sn0 -> sw01`,
    /// `sw01 port 3 -> sw09`.
    pub fn describe(&self, id: usize) -> String {
        let p = self.plan;
        let port_of = |sub_node: usize, port: u8| {
            let sn = &p.sub_node_list[sub_node];
            let switch = sn.switch_of_port(usize::from(port)).unwrap_or(&sn.switch);
            let id = if sn.port1.is_some() {
                format!("{}:p{port}", sn.id)
            } else {
                sn.id.to_string()
            };
            (id, switch.to_string())
        };
        match self.link(id) {
            Some(Link::Up { sub_node, port }) => {
                let (sn, switch) = port_of(sub_node, port);
                format!("{sn} -> {switch}")
            }
            Some(Link::Down { sub_node, port }) => {
                let (sn, switch) = port_of(sub_node, port);
                format!("{switch} -> {sn}")
            }
            Some(Link::InterSwitch { from, port, to }) => format!(
                "{} port {port} -> {}",
                p.switch_list[from].name, p.switch_list[to].name
            ),
            None => format!("link {id} (not in the network)"),
        }
    }
    /// True when inter link `k` can carry routes.
    pub(super) fn alive(&self, k: u32) -> bool {
        match &self.faults {
            None => true,
            Some(f) => {
                let l = &self.graph.inter[k as usize];
                !f.inter[k as usize] && !f.switch[l.from as usize] && !f.switch[l.to as usize]
            }
        }
    }

    /// True when some link from `a` to `b` can carry routes.
    pub(super) fn has_alive(&self, a: usize, b: usize) -> bool {
        self.links_to(a, b).iter().any(|&(_, k)| self.alive(k))
    }

    /// True when switch `s` is not avoided.
    pub(super) fn up_switch(&self, s: usize) -> bool {
        !self.is_avoided_switch(s)
    }

    /// The upward links of switch `a`, as `(peer, inter index)`.
    pub(super) fn up_of(&self, a: usize) -> &[(u32, u32)] {
        &self.graph.up[self.graph.up_start[a] as usize..self.graph.up_start[a + 1] as usize]
    }

    /// True when core `c` is up and has a link that can carry routes to an
    /// aggregation switch of `pod` with such a link to edge `edge`.
    pub(super) fn core_leads(&self, c: usize, pod: u32, edge: usize) -> bool {
        if !self.up_switch(c) {
            return false;
        }
        let row =
            &self.graph.adj[self.graph.adj_start[c] as usize..self.graph.adj_start[c + 1] as usize];
        row.iter().any(|&(peer, k)| {
            let peer = peer as usize;
            self.graph.tier[peer] == Tier::Aggregation
                && self.graph.pod[peer] == pod
                && self.alive(k)
                && self.up_switch(peer)
                && self.has_alive(peer, edge)
        })
    }

    /// The link id of inter index `k`.
    pub(super) fn id(&self, k: u32) -> usize {
        2 * self.graph.sub_switch.len() + k as usize
    }
    /// The parallel links from switch `a` to switch `b`, as `(peer, inter
    /// index)`.
    pub(super) fn links_to(&self, a: usize, b: usize) -> &[(u32, u32)] {
        if !self.graph.pairs.is_empty() {
            let cell = self.graph.pairs[a * self.graph.tier.len() + b];
            let start = (cell >> 32) as usize;
            return &self.graph.adj[start..start + (cell & 0xFFFF_FFFF) as usize];
        }
        let row =
            &self.graph.adj[self.graph.adj_start[a] as usize..self.graph.adj_start[a + 1] as usize];
        let lo = row.partition_point(|&(peer, _)| (peer as usize) < b);
        let hi = row.partition_point(|&(peer, _)| (peer as usize) <= b);
        &row[lo..hi]
    }

    pub(super) fn has_link(&self, a: usize, b: usize) -> bool {
        !self.links_to(a, b).is_empty()
    }
}
