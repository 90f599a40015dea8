//! The physical graph of a plan: a dense id per directed link, adjacency, tiers and pods, and what routes avoid.
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

use rustc_hash::FxHashMap;

use super::Link;
use super::avoid::{Avoid, Target};
use crate::error::{Error, Problem, Result};
use crate::plan::{Plan, PortRole, Tier, Topology};

/// The structure routes follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RouteShape {
    BiGraph,
    TwoTier,
    ThreeTier,
}

impl RouteShape {
    pub(super) fn name(self) -> &'static str {
        match self {
            RouteShape::BiGraph => "BiGraph",
            RouteShape::TwoTier => "2-tier leaf-spine",
            RouteShape::ThreeTier => "3-tier fat-tree",
        }
    }

    /// The tiers a switch of this fabric may have.
    pub(super) fn allows(self, tier: Tier) -> bool {
        match self {
            RouteShape::BiGraph => matches!(tier, Tier::Upper | Tier::Lower),
            RouteShape::TwoTier => matches!(tier, Tier::Leaf | Tier::Spine),
            RouteShape::ThreeTier => matches!(tier, Tier::Edge | Tier::Aggregation | Tier::Core),
        }
    }

    /// The tier that carries sub-nodes (any part for BiGraph).
    pub(super) fn access(self, tier: Tier) -> bool {
        match self {
            RouteShape::BiGraph => true,
            RouteShape::TwoTier => tier == Tier::Leaf,
            RouteShape::ThreeTier => tier == Tier::Edge,
        }
    }

    /// Whether a link from `from` to `to` is an upward ECMP choice: to the
    /// other part in a BiGraph, to the next tier up in a fat-tree.
    pub(super) fn upward(self, from: Tier, to: Tier) -> bool {
        match self {
            RouteShape::BiGraph => from != to,
            RouteShape::TwoTier => from == Tier::Leaf && to == Tier::Spine,
            RouteShape::ThreeTier => matches!(
                (from, to),
                (Tier::Edge, Tier::Aggregation) | (Tier::Aggregation, Tier::Core)
            ),
        }
    }
}

/// One direction of an inter-switch cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InterLink {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) port: u32,
}

/// Largest switch count for which [`Network`] keeps a dense switch-pair
/// table (8 MiB at this size).
const DENSE_SWITCHES: usize = 1024;

/// No single link, in [`Network::single`] (a switch with this many links
/// or more has no table).
pub(super) const NO_SLOT: u16 = u16::MAX;

/// Pod value of a switch without one.
pub(super) const NO_POD: u32 = u32::MAX;

/// The physical graph of a plan, ready for routing.
#[derive(Debug, Clone)]
pub struct Network<'a> {
    pub(super) plan: &'a Plan,
    /// Where the plan came from, for errors about it.
    pub(super) source: &'a str,
    pub(super) fabric: RouteShape,
    /// Switch of every sub-node (of its NIC's port 0).
    pub(super) sub_switch: Vec<u32>,
    /// Switch of every sub-node's NIC port 1 on a plan of dual-port NICs
    /// (HPN's plane B); empty otherwise.
    pub(super) sub_switch1: Vec<u32>,
    /// Part or tier of every switch.
    pub(super) tier: Vec<Tier>,
    /// Pod of every switch, or [`NO_POD`].
    pub(super) pod: Vec<u32>,
    /// Inter-switch links; link id `2S + k` is `inter[k]`.
    pub(super) inter: Vec<InterLink>,
    /// Per switch, `(peer, inter index)` sorted by peer then index:
    /// `adj[adj_start[a]..adj_start[a + 1]]`.
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<(u32, u32)>,
    /// For up to [`DENSE_SWITCHES`] switches, the links from a to b as
    /// `adj[start..start + len]`, stored at `a * switches + b` as
    /// `start << 32 | len`: one lookup instead of a binary search.
    pub(super) pairs: Vec<u64>,
    /// For up to [`DENSE_SWITCHES`] switches, where exactly one link goes
    /// from a to b, at `a * switches + b`: its inter index less
    /// `adj_start[a]` (a switch's links are numbered in one run), and
    /// [`NO_SLOT`] where none or several do. A route's hop over the one
    /// link between two switches (every hop between the parts of a designed
    /// BiGraph) reads this table alone, a quarter of `pairs`, instead of
    /// `pairs` and then the adjacency row: at 131,072 sub-nodes two cache
    /// misses a flow become one.
    pub(super) single: Vec<u16>,
    /// Per switch, its upward links as `(peer, inter index)`, in port
    /// order: the peer beside the index, so that a route's hop up reads
    /// where it goes from the row it chose in, not from `inter` (a cache
    /// miss per flow at 131,072 sub-nodes).
    pub(super) up_start: Vec<u32>,
    pub(super) up: Vec<(u32, u32)>,
    /// BiGraph: per switch, true when it has a link to every switch of the
    /// other part, so every upward link of its own part leads to it.
    pub(super) complete: Vec<bool>,
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
        Self::build(plan, source).map_err(|problems| Error::Invalid {
            file: source.to_string(),
            what: "plan",
            problems,
        })
    }

    /// The graph of `plan`, or every reason it cannot carry routes.
    pub(crate) fn build(
        plan: &'a Plan,
        source: &'a str,
    ) -> std::result::Result<Self, Vec<Problem>> {
        let fix = "design the plan again, or correct the port's peer";
        let mut problems = Vec::new();
        let fabric = match plan.topology {
            Topology::BiGraph => RouteShape::BiGraph,
            // A rail-optimized fabric routes as the leaf-spine it is: its
            // rail switches are the leaves.
            // HPN: each plane is a 2-tier leaf-spine of ToRs (leaves) and
            // aggregation switches (spines) with no link to the other.
            Topology::FatTree | Topology::RailOptimized | Topology::Hpn => {
                let tiers = plan.fat_tree.as_ref().map_or_else(
                    || {
                        if plan
                            .switch_list
                            .iter()
                            .any(|s| s.part_or_tier == Tier::Edge)
                        {
                            3
                        } else {
                            2
                        }
                    },
                    |f| f.tiers,
                );
                match tiers {
                    2 => RouteShape::TwoTier,
                    3 => RouteShape::ThreeTier,
                    t => {
                        return Err(vec![Problem::at(
                            None,
                            "fat_tree.tiers",
                            format!("{t} tiers cannot be routed"),
                            "design a 2-tier or 3-tier fat-tree",
                        )]);
                    }
                }
            }
        };
        let switches = plan.switch_list.len();
        if switches >= u32::MAX as usize {
            return Err(vec![Problem::at(
                None,
                "switch_list",
                format!("{switches} switches are more than routing can number"),
                "split the fabric into smaller plans",
            )]);
        }
        let index: FxHashMap<&str, u32> = plan
            .switch_list
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i as u32))
            .collect();
        // A plan read or designed holds each name's text once, so a
        // sub-node's or port's switch is most often the very text of the
        // switch's name: found by its address and length, without hashing
        // and comparing the text (262,144 lookups at 131,072 sub-nodes).
        // Only a switch the text index finds is listed, so both give one
        // answer.
        let by_address: FxHashMap<(usize, usize), u32> = plan
            .switch_list
            .iter()
            .enumerate()
            .filter(|&(i, s)| index.get(s.name.as_str()) == Some(&(i as u32)))
            .map(|(i, s)| ((s.name.as_ptr() as usize, s.name.len()), i as u32))
            .collect();
        let find = |name: &str| -> Option<u32> {
            (by_address
                .get(&(name.as_ptr() as usize, name.len()))
                .copied())
            .or_else(|| index.get(name).copied())
        };

        let tier: Vec<Tier> = plan.switch_list.iter().map(|s| s.part_or_tier).collect();
        let mut pod = Vec::with_capacity(switches);
        for s in &plan.switch_list {
            if !fabric.allows(s.part_or_tier) {
                problems.push(Problem::at(
                    None,
                    format!("switch {}", s.name),
                    format!(
                        "it is a {} switch, which a {} does not have",
                        s.part_or_tier.as_str(),
                        fabric.name()
                    ),
                    "design the plan again",
                ));
            }
            let needs_pod = fabric == RouteShape::ThreeTier
                && matches!(s.part_or_tier, Tier::Edge | Tier::Aggregation);
            match s.pod {
                Some(p) if p < NO_POD as usize => pod.push(p as u32),
                _ if needs_pod => {
                    problems.push(Problem::at(
                        None,
                        format!("switch {}", s.name),
                        format!(
                            "the {} switch has no pod, which 3-tier routing needs",
                            s.part_or_tier.as_str()
                        ),
                        "design the plan again",
                    ));
                    pod.push(NO_POD);
                }
                _ => pod.push(NO_POD),
            }
        }

        // The switch of a NIC port (`port` 0, or 1 of a dual-port NIC),
        // which must be a switch of the plan that carries sub-nodes.
        let attached = |sn: &crate::plan::PlanSubNode,
                        switch: &str,
                        port: usize,
                        problems: &mut Vec<Problem>|
         -> u32 {
            let (it, its) = if port == 0 {
                ("it", "its switch")
            } else {
                ("its port 1", "the switch of its port 1")
            };
            match find(switch) {
                Some(s) => {
                    if !fabric.access(tier[s as usize]) {
                        problems.push(Problem::at(
                            None,
                            format!("sub-node {}", sn.id),
                            format!(
                                "{it} is attached to the {} switch {switch}; a {} carries sub-nodes on its {} switches",
                                tier[s as usize].as_str(),
                                fabric.name(),
                                if fabric == RouteShape::ThreeTier { "edge" } else { "leaf" }
                            ),
                            "design the plan again",
                        ));
                    }
                    s
                }
                None => {
                    problems.push(Problem::at(
                        None,
                        format!("sub-node {}", sn.id),
                        format!("{its} {switch} is not in the plan's switch list"),
                        "design the plan again",
                    ));
                    0
                }
            }
        };
        let mut sub_switch = Vec::with_capacity(plan.sub_node_list.len());
        for sn in &plan.sub_node_list {
            sub_switch.push(attached(sn, &sn.switch, 0, &mut problems));
        }

        // The second ports of dual-port NICs: every NIC has one, or none.
        let dual = plan
            .sub_node_list
            .iter()
            .filter(|sn| sn.port1.is_some())
            .count();
        let mut sub_switch1 = Vec::new();
        if dual > 0 && dual < plan.sub_node_list.len() {
            let single = plan.sub_node_list.iter().find(|sn| sn.port1.is_none());
            problems.push(Problem::at(
                None,
                format!("sub-node {}", single.map_or("", |sn| sn.id.as_str())),
                format!(
                    "{dual} of the plan's {} NICs have a second port (port1) and this one has not; routing takes every NIC with two ports or none",
                    plan.sub_node_list.len()
                ),
                "design the plan again",
            ));
        } else if dual > 0 {
            for (sn, &s0) in plan.sub_node_list.iter().zip(&sub_switch) {
                let Some(a) = &sn.port1 else { continue };
                let s = attached(sn, &a.switch, 1, &mut problems);
                if s == s0 {
                    problems.push(Problem::at(
                        None,
                        format!("sub-node {}", sn.id),
                        format!(
                            "both ports of its NIC are on switch {}; a dual-port NIC's ports go to two switches (the ToRs of two planes)",
                            a.switch
                        ),
                        "design the plan again",
                    ));
                }
                sub_switch1.push(s);
            }
        }

        // Every port's number, and for an inter-switch port the switch its
        // peer names (`u32::MAX` for none) and its peer port as a number:
        // the check that a peer's port leads back reads these compact
        // tables, not the plan's port records far apart in memory.
        let mut base = Vec::with_capacity(switches + 1);
        let mut numbers = Vec::new();
        let mut claims = Vec::new();
        for s in &plan.switch_list {
            base.push(numbers.len());
            for p in &s.ports {
                numbers.push(p.port);
                claims.push(match (p.role, p.peer.as_deref()) {
                    (PortRole::InterSwitch, Some(peer)) => (
                        find(peer).unwrap_or(u32::MAX),
                        p.peer_port
                            .as_deref()
                            .and_then(|q| q.trim().parse::<u32>().ok()),
                    ),
                    _ => (u32::MAX, None),
                });
            }
        }
        base.push(numbers.len());
        let mut inter = Vec::new();
        for (a, s) in plan.switch_list.iter().enumerate() {
            // What a port naming this switch as its peer resolves to.
            let named = find(s.name.as_str()).unwrap_or(u32::MAX);
            for (k, port) in s.ports.iter().enumerate() {
                if port.role != PortRole::InterSwitch {
                    continue;
                }
                let object = || format!("switch {} port {}", s.name, port.port);
                let Some(peer) = port.peer.as_deref() else {
                    problems.push(Problem::at(
                        None,
                        object(),
                        "the inter-switch port has no peer",
                        fix,
                    ));
                    continue;
                };
                let (b, peer_port) = claims[base[a] + k];
                if b == u32::MAX {
                    problems.push(Problem::at(
                        None,
                        object(),
                        format!("its peer {peer} is not a switch of the plan"),
                        fix,
                    ));
                    continue;
                }
                let back = peer_port.and_then(|q| {
                    let from = base[b as usize];
                    let ports = &numbers[from..base[b as usize + 1]];
                    ports
                        .binary_search(&q)
                        .ok()
                        .or_else(|| ports.iter().position(|&p| p == q))
                        .map(|i| from + i)
                });
                // The peer's port names this switch (as the index finds
                // it) and this port.
                let points_back = back.is_some_and(|q| {
                    claims[q].0 != u32::MAX && claims[q] == (named, Some(port.port))
                });
                if !points_back {
                    problems.push(Problem::at(
                        None,
                        object(),
                        format!(
                            "its peer is {peer} port {}, which does not lead back to it",
                            port.peer_port.as_deref().unwrap_or("(none)")
                        ),
                        fix,
                    ));
                    continue;
                }
                inter.push(InterLink {
                    from: a as u32,
                    to: b,
                    port: port.port,
                });
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let total = 2 * (plan.sub_node_list.len() + sub_switch1.len()) + inter.len();
        if total >= u32::MAX as usize {
            return Err(vec![Problem::at(
                None,
                "cables",
                format!("{total} links are more than routing can number"),
                "split the fabric into smaller plans",
            )]);
        }

        // Adjacency and upward links, as compressed rows per switch.
        let mut adj_start = vec![0u32; switches + 1];
        let mut up_start = vec![0u32; switches + 1];
        for l in &inter {
            adj_start[l.from as usize + 1] += 1;
            if fabric.upward(tier[l.from as usize], tier[l.to as usize]) {
                up_start[l.from as usize + 1] += 1;
            }
        }
        for i in 0..switches {
            adj_start[i + 1] += adj_start[i];
            up_start[i + 1] += up_start[i];
        }
        let mut adj = vec![(0u32, 0u32); inter.len()];
        let mut up = vec![(0u32, 0u32); up_start[switches] as usize];
        let mut adj_next = adj_start.clone();
        let mut up_next = up_start.clone();
        for (k, l) in inter.iter().enumerate() {
            let a = l.from as usize;
            adj[adj_next[a] as usize] = (l.to, k as u32);
            adj_next[a] += 1;
            if fabric.upward(tier[a], tier[l.to as usize]) {
                up[up_next[a] as usize] = (l.to, k as u32);
                up_next[a] += 1;
            }
        }
        for a in 0..switches {
            adj[adj_start[a] as usize..adj_start[a + 1] as usize].sort_unstable();
        }
        let mut pairs = Vec::new();
        if switches <= DENSE_SWITCHES {
            pairs = vec![0u64; switches * switches];
            for a in 0..switches {
                for i in adj_start[a] as usize..adj_start[a + 1] as usize {
                    let cell = &mut pairs[a * switches + adj[i].0 as usize];
                    if *cell == 0 {
                        *cell = (i as u64) << 32;
                    }
                    *cell += 1;
                }
            }
        }
        let mut single = Vec::new();
        let narrow = (0..switches).all(|a| adj_start[a + 1] - adj_start[a] < u32::from(NO_SLOT));
        if switches <= DENSE_SWITCHES && narrow {
            single = vec![NO_SLOT; switches * switches];
            for a in 0..switches {
                let first = adj_start[a];
                let row = &adj[first as usize..adj_start[a + 1] as usize];
                for (i, &(b, k)) in row.iter().enumerate() {
                    // The row is sorted by peer: parallel links are
                    // neighbours.
                    let parallel = (i > 0 && row[i - 1].0 == b)
                        || row.get(i + 1).is_some_and(|&(next, _)| next == b);
                    single[a * switches + b as usize] = if parallel {
                        NO_SLOT
                    } else {
                        (k - first) as u16
                    };
                }
            }
        }

        // BiGraph: the switches cabled to every switch of the other part.
        let mut complete = vec![false; switches];
        if fabric == RouteShape::BiGraph {
            let mut parts = [0usize; 2];
            for t in &tier {
                parts[usize::from(*t == Tier::Lower)] += 1;
            }
            for (a, c) in complete.iter_mut().enumerate() {
                let row = &adj[adj_start[a] as usize..adj_start[a + 1] as usize];
                let mut peers = 0;
                let mut last = u32::MAX;
                for &(p, _) in row {
                    if p != last && tier[p as usize] != tier[a] {
                        peers += 1;
                    }
                    last = p;
                }
                *c = peers == parts[usize::from(tier[a] != Tier::Lower)];
            }
        }

        Ok(Self {
            plan,
            source,
            fabric,
            sub_switch,
            sub_switch1,
            tier,
            pod,
            inter,
            adj_start,
            adj,
            pairs,
            single,
            up_start,
            up,
            complete,
            faults: None,
        })
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
        let switches = net.tier.len();
        let mut faults = Faults {
            switch: vec![false; switches],
            inter: vec![false; net.inter.len()],
            described: Vec::with_capacity(avoid.len()),
            clean: Vec::new(),
            neighbours: Vec::new(),
            hops: super::tables::HopCache::new(switches, net.inter.len()),
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
            let row = &net.adj[net.adj_start[a] as usize..net.adj_start[a + 1] as usize];
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
        self.tier.len()
    }

    /// Number of directed inter-switch links that can carry routes.
    pub fn alive_inter_switch_links(&self) -> usize {
        (0..self.inter.len() as u32)
            .filter(|&k| self.alive(k))
            .count()
    }

    /// The switches an inter-switch link id joins, `(from, to)`.
    pub fn ends(&self, id: usize) -> Option<(usize, usize)> {
        let base = 2 * self.sub_switch.len();
        id.checked_sub(base)
            .and_then(|k| self.inter.get(k))
            .map(|l| (l.from as usize, l.to as usize))
    }

    /// Number of links from switch `a` to switch `b` that can carry
    /// routes.
    pub fn direct_links(&self, a: usize, b: usize) -> usize {
        if a >= self.tier.len() || b >= self.tier.len() {
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
        2 * (self.sub_switch.len() + self.sub_switch1.len()) + self.inter.len()
    }

    /// The ids of the access links (up and down) of every NIC's port 0.
    pub fn access_links(&self) -> Range<usize> {
        0..2 * self.sub_switch.len()
    }

    /// The ids of the access links (up and down) of the NICs' port 1 on a
    /// plan of dual-port NICs; empty otherwise.
    pub fn second_port_links(&self) -> Range<usize> {
        let base = 2 * self.sub_switch.len() + self.inter.len();
        base..base + 2 * self.sub_switch1.len()
    }

    /// NIC ports per sub-node the routes use: 2 on a plan of dual-port
    /// NICs (HPN's two planes), else 1.
    pub fn planes(&self) -> usize {
        if self.sub_switch1.is_empty() { 1 } else { 2 }
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
            self.second_port_links().start + self.sub_switch1.len() + sub_node
        }
    }

    /// The switch of port `plane` of sub-node `sub_node`'s NIC.
    pub fn switch_in(&self, plane: usize, sub_node: usize) -> Option<usize> {
        if plane == 0 {
            self.switch_of(sub_node)
        } else {
            self.sub_switch1.get(sub_node).map(|&s| s as usize)
        }
    }

    /// The ids of the directed inter-switch links.
    pub fn inter_switch_links(&self) -> Range<usize> {
        let base = 2 * self.sub_switch.len();
        base..base + self.inter.len()
    }

    /// The access link up from sub-node `sub_node`.
    pub fn up_link(&self, sub_node: usize) -> usize {
        sub_node
    }

    /// The access link down to sub-node `sub_node`.
    pub fn down_link(&self, sub_node: usize) -> usize {
        self.sub_switch.len() + sub_node
    }

    /// The access link down to port `port` of sub-node `sub_node`'s NIC
    /// (port 1 only on a plan of dual-port NICs).
    pub fn down_link_of_port(&self, sub_node: usize, port: u8) -> usize {
        if port == 0 {
            self.down_link(sub_node)
        } else {
            self.second_port_links().start + self.sub_switch1.len() + sub_node
        }
    }

    /// The switch (index into `plan.switch_list`) of a sub-node.
    pub fn switch_of(&self, sub_node: usize) -> Option<usize> {
        self.sub_switch.get(sub_node).map(|&s| s as usize)
    }

    /// What link `id` is.
    pub fn link(&self, id: usize) -> Option<Link> {
        let s = self.sub_switch.len();
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
            let s1 = self.sub_switch1.len();
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
            self.inter.get(id - 2 * s).map(|l| Link::InterSwitch {
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
                let l = &self.inter[k as usize];
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
        &self.up[self.up_start[a] as usize..self.up_start[a + 1] as usize]
    }

    /// True when core `c` is up and has a link that can carry routes to an
    /// aggregation switch of `pod` with such a link to edge `edge`.
    pub(super) fn core_leads(&self, c: usize, pod: u32, edge: usize) -> bool {
        if !self.up_switch(c) {
            return false;
        }
        let row = &self.adj[self.adj_start[c] as usize..self.adj_start[c + 1] as usize];
        row.iter().any(|&(peer, k)| {
            let peer = peer as usize;
            self.tier[peer] == Tier::Aggregation
                && self.pod[peer] == pod
                && self.alive(k)
                && self.up_switch(peer)
                && self.has_alive(peer, edge)
        })
    }

    /// The link id of inter index `k`.
    pub(super) fn id(&self, k: u32) -> usize {
        2 * self.sub_switch.len() + k as usize
    }
    /// The parallel links from switch `a` to switch `b`, as `(peer, inter
    /// index)`.
    pub(super) fn links_to(&self, a: usize, b: usize) -> &[(u32, u32)] {
        if !self.pairs.is_empty() {
            let cell = self.pairs[a * self.tier.len() + b];
            let start = (cell >> 32) as usize;
            return &self.adj[start..start + (cell & 0xFFFF_FFFF) as usize];
        }
        let row = &self.adj[self.adj_start[a] as usize..self.adj_start[a + 1] as usize];
        let lo = row.partition_point(|&(peer, _)| (peer as usize) < b);
        let hi = row.partition_point(|&(peer, _)| (peer as usize) <= b);
        &row[lo..hi]
    }

    pub(super) fn has_link(&self, a: usize, b: usize) -> bool {
        !self.links_to(a, b).is_empty()
    }
}
