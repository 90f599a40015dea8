//! Deterministic routes between sub-nodes on a plan's physical graph.
//!
//! # Links
//!
//! Every directed link has a dense id, so loads are counted in a plain
//! vector. With S sub-nodes:
//!
//! - `0..S`: access link up, from sub-node i's NIC to its switch;
//! - `S..2S`: access link down, from the switch to sub-node i's NIC;
//! - `2S..`: one id per switch port with role `inter_switch`, in switch
//!   order and then port order. The id of port p of switch a is the
//!   direction a to its peer, so each cable has two ids, one from each end,
//!   and parallel cables between the same two switches are distinct links.
//!
//! # Routes
//!
//! - Same switch: the access links only.
//! - BiGraph: between the parts, the direct link (the only one in a designed
//!   plan); within a part, up to a switch of the other part chosen by ECMP
//!   among all the source switch's links to that part, then down its direct
//!   link to the destination switch.
//! - 2-tier leaf-spine: up to a spine chosen by ECMP among all the leaf's
//!   uplinks (parallel links to one spine count as separate next hops), then
//!   down one of the spine's links to the destination leaf, chosen by ECMP
//!   too when there are parallel links.
//! - 3-tier fat-tree: within a pod, up to an aggregation switch and down;
//!   between pods, up to an aggregation switch, up to a core, down to an
//!   aggregation switch of the destination pod and down to the edge. Each
//!   upward hop is an ECMP choice among all uplinks; each downward hop
//!   chooses among the links that lead towards the destination.
//!
//! # Avoiding links and switches
//!
//! A network built with [`Network::avoiding`] keeps every route off the
//! avoided cables (both directions, every parallel cable between the two
//! switches) and switches (no route starts, ends or passes there). Each ECMP
//! choice is then made among the next hops that can still carry the flow
//! and lead on to its destination, in the same order and with the same
//! hash as above, so a flow whose choices are untouched keeps its route:
//!
//! - BiGraph between the parts without a usable direct link: a detour of 3
//!   inter-switch hops, to another switch of the destination's part, back
//!   to another switch of the source's part that still has a link to the
//!   destination, and down that link; each hop an ECMP choice;
//! - BiGraph within a part: the intermediate switch is chosen among those
//!   that can still be reached and still reach the destination;
//! - fat-tree: every upward and downward choice skips dead next hops and
//!   next hops that no longer lead to the destination.
//!
//! Two switches that no route joins any more give an error naming them.
//!
//! Routes follow the plan's structure rather than a general shortest-path
//! search, which keeps routing O(1) per flow for 131,072 sub-nodes; a plan
//! that lacks a link the structure needs gives an error naming it.
//!
//! # ECMP hash
//!
//! A switch with n equal next hops takes the one at `h mod n`, where h is
//! [`ecmp_hash`] of the RoCEv2 5-tuple and the switch's index in the plan:
//!
//! - source and destination IP: `10.0.0.0 + i` for sub-node index i, as a
//!   32-bit number ([`sub_node_ip`]);
//! - protocol 17 (UDP) and destination port 4791 (RoCEv2);
//! - source port: 49152 to 65535 from the flow id and the seed
//!   ([`source_port`]), the way a RoCE NIC derives it from the queue pair;
//! - the switch index as a per-switch salt, so successive tiers do not make
//!   the same choice (hash polarisation).
//!
//! The bytes (all big-endian: source IP, destination IP, protocol, source
//! port, destination port, switch index, 17 bytes) go through FNV-1a 64 and
//! then the MurmurHash3 `fmix64` finaliser, because the low bits of plain
//! FNV-1a depend only on the low bits of the input bytes. Nothing here
//! depends on a process-random hash seed, so results are the same on every
//! run and machine.

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::avoid::{Avoid, Target};
use crate::error::{Error, Problem, Result};
use crate::plan::{PortRole, Tier, Topology};
use crate::checked::CheckedPlan;

/// Most links on a route: up, four inter-switch hops (3-tier fat-tree
/// between pods), down.
pub const MAX_LINKS: usize = 6;

/// IP protocol number of UDP.
pub const UDP: u8 = 17;

/// UDP destination port of RoCEv2.
pub const ROCE_V2_PORT: u16 = 4791;

/// A directed link of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// From the NIC of a sub-node (index into `plan.sub_node_list`) to its
    /// switch.
    Up {
        /// The sub-node.
        sub_node: usize,
    },
    /// From a switch to the NIC of a sub-node.
    Down {
        /// The sub-node.
        sub_node: usize,
    },
    /// From switch `from` out of its port `port` to switch `to` (indices
    /// into `plan.switch_list`).
    InterSwitch {
        /// Sending switch.
        from: usize,
        /// Its port.
        port: u32,
        /// Receiving switch.
        to: usize,
    },
}

/// A route: the directed links a flow takes, in order. The first is the
/// source's access link up, the last the destination's access link down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Route {
    links: [usize; MAX_LINKS],
    len: usize,
}

impl Route {
    fn new() -> Self {
        Self {
            links: [0; MAX_LINKS],
            len: 0,
        }
    }

    fn push(&mut self, link: usize) {
        self.links[self.len] = link;
        self.len += 1;
    }

    /// Every link, access links included.
    pub fn links(&self) -> &[usize] {
        &self.links[..self.len]
    }

    /// The inter-switch links only (empty within one switch).
    pub fn inter_switch(&self) -> &[usize] {
        &self.links[1..self.len - 1]
    }

    /// Number of switches the flow crosses.
    pub fn switches(&self) -> usize {
        self.len - 1
    }
}

/// The structure routes follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fabric {
    BiGraph,
    TwoTier,
    ThreeTier,
}

impl Fabric {
    fn name(self) -> &'static str {
        match self {
            Fabric::BiGraph => "BiGraph",
            Fabric::TwoTier => "2-tier leaf-spine",
            Fabric::ThreeTier => "3-tier fat-tree",
        }
    }

    /// The tiers a switch of this fabric may have.
    fn allows(self, tier: Tier) -> bool {
        match self {
            Fabric::BiGraph => matches!(tier, Tier::Upper | Tier::Lower),
            Fabric::TwoTier => matches!(tier, Tier::Leaf | Tier::Spine),
            Fabric::ThreeTier => matches!(tier, Tier::Edge | Tier::Aggregation | Tier::Core),
        }
    }

    /// The tier that carries sub-nodes (any part for BiGraph).
    fn access(self, tier: Tier) -> bool {
        match self {
            Fabric::BiGraph => true,
            Fabric::TwoTier => tier == Tier::Leaf,
            Fabric::ThreeTier => tier == Tier::Edge,
        }
    }

    /// Whether a link from `from` to `to` is an upward ECMP choice: to the
    /// other part in a BiGraph, to the next tier up in a fat-tree.
    fn upward(self, from: Tier, to: Tier) -> bool {
        match self {
            Fabric::BiGraph => from != to,
            Fabric::TwoTier => from == Tier::Leaf && to == Tier::Spine,
            Fabric::ThreeTier => matches!(
                (from, to),
                (Tier::Edge, Tier::Aggregation) | (Tier::Aggregation, Tier::Core)
            ),
        }
    }
}

/// One direction of an inter-switch cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct InterLink {
    from: u32,
    to: u32,
    port: u32,
}

/// Largest switch count for which [`Network`] keeps a dense switch-pair
/// table (8 MiB at this size).
const DENSE_SWITCHES: usize = 1024;

/// Pod value of a switch without one.
const NO_POD: u32 = u32::MAX;

/// The physical graph of a plan, ready for routing.
#[derive(Debug, Clone)]
pub struct Network<'a> {
    plan: &'a CheckedPlan,
    fabric: Fabric,
    /// Switch of every sub-node.
    sub_switch: Vec<u32>,
    /// Part or tier of every switch.
    tier: Vec<Tier>,
    /// Pod of every switch, or [`NO_POD`].
    pod: Vec<u32>,
    /// Inter-switch links; link id `2S + k` is `inter[k]`.
    inter: Vec<InterLink>,
    /// Per switch, `(peer, inter index)` sorted by peer then index:
    /// `adj[adj_start[a]..adj_start[a + 1]]`.
    adj_start: Vec<u32>,
    adj: Vec<(u32, u32)>,
    /// For up to [`DENSE_SWITCHES`] switches, the links from a to b as
    /// `adj[start..start + len]`, stored at `a * switches + b` as
    /// `start << 32 | len`: one lookup instead of a binary search.
    pairs: Vec<u64>,
    /// Per switch, the inter indices of its upward links, in port order.
    up_start: Vec<u32>,
    up: Vec<u32>,
    /// What routes keep off; `None` routes on the whole plan.
    faults: Option<Faults>,
}

/// Switches and cables that routes keep off.
#[derive(Debug, Clone)]
struct Faults {
    /// Per switch: avoided.
    switch: Vec<bool>,
    /// Per inter index: the cable is avoided.
    inter: Vec<bool>,
    /// The `--avoid` values, as typed, for error messages.
    described: Vec<String>,
    /// Per switch: not avoided, and every link to and from it usable.
    clean: Vec<bool>,
    /// Per switch: an id shared by the switches with the same set of
    /// neighbours.
    neighbours: Vec<u32>,
}

impl<'a> Network<'a> {
    /// Builds the graph of `plan`: every sub-node's switch and every
    /// inter-switch port, checking that each such port's peer points back.
    pub fn new(plan: &'a CheckedPlan) -> Result<Self> {
        let fix = "design the plan again, or correct the port's peer";
        let mut problems = Vec::new();
        let fabric = match plan.topology {
            Topology::BiGraph => Fabric::BiGraph,
            Topology::FatTree => {
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
                    2 => Fabric::TwoTier,
                    3 => Fabric::ThreeTier,
                    t => {
                        return Err(plan.refusal(vec![Problem::at(
                            None,
                            "fat_tree.tiers",
                            format!("{t} tiers cannot be routed"),
                            "design a 2-tier or 3-tier fat-tree",
                        )]));
                    }
                }
            }
        };
        let switches = plan.switch_list.len();
        if switches >= u32::MAX as usize {
            return Err(Error::Internal(format!(
                "{switches} switches are more than routing can number"
            )));
        }
        let index: FxHashMap<&str, u32> = plan
            .switch_list
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i as u32))
            .collect();

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
            let needs_pod = fabric == Fabric::ThreeTier
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

        let mut sub_switch = Vec::with_capacity(plan.sub_node_list.len());
        for sn in &plan.sub_node_list {
            match index.get(sn.switch.as_str()) {
                Some(&s) => {
                    if !fabric.access(tier[s as usize]) {
                        problems.push(Problem::at(
                            None,
                            format!("sub-node {}", sn.id),
                            format!(
                                "it is attached to the {} switch {}; a {} carries sub-nodes on its {} switches",
                                tier[s as usize].as_str(),
                                sn.switch,
                                fabric.name(),
                                if fabric == Fabric::ThreeTier { "edge" } else { "leaf" }
                            ),
                            "design the plan again",
                        ));
                    }
                    sub_switch.push(s);
                }
                None => {
                    problems.push(Problem::at(
                        None,
                        format!("sub-node {}", sn.id),
                        format!("its switch {} is not in the plan's switch list", sn.switch),
                        "design the plan again",
                    ));
                    sub_switch.push(0);
                }
            }
        }

        let mut inter = Vec::new();
        for (a, s) in plan.switch_list.iter().enumerate() {
            for port in s.ports.iter().filter(|p| p.role == PortRole::InterSwitch) {
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
                let Some(&b) = index.get(peer) else {
                    problems.push(Problem::at(
                        None,
                        object(),
                        format!("its peer {peer} is not a switch of the plan"),
                        fix,
                    ));
                    continue;
                };
                let back = port
                    .peer_port
                    .as_deref()
                    .and_then(|q| q.trim().parse::<u32>().ok())
                    .and_then(|q| {
                        let ports = &plan.switch_list[b as usize].ports;
                        ports
                            .binary_search_by_key(&q, |p| p.port)
                            .ok()
                            .map(|i| &ports[i])
                            .or_else(|| ports.iter().find(|p| p.port == q))
                    });
                let points_back = back.is_some_and(|q| {
                    q.role == PortRole::InterSwitch
                        && q.peer.as_deref() == Some(s.name.as_str())
                        && q.peer_port
                            .as_deref()
                            .and_then(|pp| pp.trim().parse::<u32>().ok())
                            == Some(port.port)
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
            return Err(plan.refusal(problems));
        }
        let total = 2 * plan.sub_node_list.len() + inter.len();
        if total >= u32::MAX as usize {
            return Err(Error::Internal(format!(
                "{total} links are more than routing can number"
            )));
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
        let mut up = vec![0u32; up_start[switches] as usize];
        let mut adj_next = adj_start.clone();
        let mut up_next = up_start.clone();
        for (k, l) in inter.iter().enumerate() {
            let a = l.from as usize;
            adj[adj_next[a] as usize] = (l.to, k as u32);
            adj_next[a] += 1;
            if fabric.upward(tier[a], tier[l.to as usize]) {
                up[up_next[a] as usize] = k as u32;
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

        Ok(Self {
            plan,
            fabric,
            sub_switch,
            tier,
            pod,
            inter,
            adj_start,
            adj,
            pairs,
            up_start,
            up,
            faults: None,
        })
    }

    /// Builds the graph of `plan` as [`Network::new`] does, with routes
    /// that keep off everything in `avoid` (see the module documentation).
    /// With nothing to avoid this is [`Network::new`].
    pub fn avoiding(plan: &'a CheckedPlan, avoid: &[Avoid]) -> Result<Self> {
        let mut net = Self::new(plan)?;
        if avoid.is_empty() {
            return Ok(net);
        }
        let switches = net.tier.len();
        let mut faults = Faults {
            switch: vec![false; switches],
            inter: vec![false; net.inter.len()],
            described: Vec::with_capacity(avoid.len()),
            clean: Vec::new(),
            neighbours: Vec::new(),
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
                        return Err(Error::option(
                            "--avoid",
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
        Ok(net)
    }

    /// True when routes keep off some link or switch.
    pub fn avoids_anything(&self) -> bool {
        self.faults.is_some()
    }

    /// True when switch `s` is avoided: no rank may sit on it and no route
    /// crosses it.
    pub fn is_avoided_switch(&self, s: usize) -> bool {
        self.faults
            .as_ref()
            .is_some_and(|f| f.switch.get(s).copied().unwrap_or(false))
    }

    /// True when directed link `id` carries no route: an avoided cable, or
    /// one that ends on an avoided switch. Access links are never dead
    /// (their sub-nodes are simply not used).
    pub fn is_dead_link(&self, id: usize) -> bool {
        let base = 2 * self.sub_switch.len();
        id >= base && id < self.link_count() && !self.alive((id - base) as u32)
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

    /// True when a flow from switch `a` can reach switch `b` (always for
    /// `a == b`).
    pub fn reachable(&self, a: usize, b: usize) -> bool {
        if a == b {
            return !self.is_avoided_switch(a);
        }
        if self.faults.is_none() {
            return !self.switch_paths(a, b).is_empty();
        }
        if self.is_avoided_switch(a) || self.is_avoided_switch(b) {
            return false;
        }
        let shape = self.shape(a, b);
        let mut any = false;
        self.candidates(shape, 0, a, a, b, &mut |_| {
            any = true;
            false
        });
        any
    }

    /// Every route (as inter-switch link ids) that a flow from a sub-node
    /// on switch `a` to one on switch `b` may take, whatever its ECMP hash:
    /// the choices of [`Network::route`] at every hop, in the order it
    /// considers them. Empty when `a == b` or no route exists.
    pub fn switch_paths(&self, a: usize, b: usize) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        if a == b || a >= self.tier.len() || b >= self.tier.len() {
            return out;
        }
        if self.is_avoided_switch(a) || self.is_avoided_switch(b) {
            return out;
        }
        let shape = self.shape(a, b);
        let mut path = Vec::with_capacity(MAX_LINKS);
        self.paths_from(shape, (a, b), a, &mut path, &mut out);
        out
    }

    /// Extends `path` (the hops so far of a route of `shape` between the
    /// switches `ends`, now at `at`) by every candidate, depth first.
    fn paths_from(
        &self,
        shape: Shape,
        ends: (usize, usize),
        at: usize,
        path: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        let (sa, sb) = ends;
        let hop = path.len();
        if hop == shape.hops() {
            if at == sb {
                out.push(path.clone());
            }
            return;
        }
        let mut next = Vec::new();
        self.candidates(shape, hop, at, sa, sb, &mut |k| {
            next.push(k);
            true
        });
        for k in next {
            path.push(self.id(k));
            self.paths_from(shape, ends, self.inter[k as usize].to as usize, path, out);
            path.pop();
        }
    }

    /// The plan this network was built from.
    pub fn plan(&self) -> &'a CheckedPlan {
        self.plan
    }

    /// Number of directed links, access links included.
    pub fn link_count(&self) -> usize {
        2 * self.sub_switch.len() + self.inter.len()
    }

    /// The ids of the access links (up and down).
    pub fn access_links(&self) -> Range<usize> {
        0..2 * self.sub_switch.len()
    }

    /// The ids of the directed inter-switch links.
    pub fn inter_switch_links(&self) -> Range<usize> {
        2 * self.sub_switch.len()..self.link_count()
    }

    /// The access link up from sub-node `sub_node`.
    pub fn up_link(&self, sub_node: usize) -> usize {
        sub_node
    }

    /// The access link down to sub-node `sub_node`.
    pub fn down_link(&self, sub_node: usize) -> usize {
        self.sub_switch.len() + sub_node
    }

    /// The switch (index into `plan.switch_list`) of a sub-node.
    pub fn switch_of(&self, sub_node: usize) -> Option<usize> {
        self.sub_switch.get(sub_node).map(|&s| s as usize)
    }

    /// What link `id` is.
    pub fn link(&self, id: usize) -> Option<Link> {
        let s = self.sub_switch.len();
        if id < s {
            Some(Link::Up { sub_node: id })
        } else if id < 2 * s {
            Some(Link::Down { sub_node: id - s })
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
        match self.link(id) {
            Some(Link::Up { sub_node }) => {
                let sn = &p.sub_node_list[sub_node];
                format!("{} -> {}", sn.id, sn.switch)
            }
            Some(Link::Down { sub_node }) => {
                let sn = &p.sub_node_list[sub_node];
                format!("{} -> {}", sn.switch, sn.id)
            }
            Some(Link::InterSwitch { from, port, to }) => format!(
                "{} port {port} -> {}",
                p.switch_list[from].name, p.switch_list[to].name
            ),
            None => format!("link {id} (not in the network)"),
        }
    }

    /// The route of one flow from sub-node `src` to sub-node `dst`
    /// (indices into `plan.sub_node_list`). `flow` identifies the flow and,
    /// with `seed`, sets its UDP source port (see [`source_port`]).
    pub fn route(&self, src: usize, dst: usize, flow: u64, seed: u64) -> Result<Route> {
        let n = self.sub_switch.len();
        for (what, sn) in [("source", src), ("destination", dst)] {
            if sn >= n {
                return Err(self.plan.refusal(vec![Problem::at(
                    None,
                    format!("sub-node {sn}"),
                    format!("the {what} of a route is out of range: the plan has {n} sub-nodes"),
                    "route between sub-nodes of the plan",
                )]));
            }
        }
        let key = FlowKey {
            src,
            dst,
            flow,
            seed,
        };
        let (sa, sb) = (self.sub_switch[src] as usize, self.sub_switch[dst] as usize);
        let mut r = Route::new();
        r.push(self.up_link(src));
        if self.faults.is_some() {
            for (sn, s) in [(src, sa), (dst, sb)] {
                if self.is_avoided_switch(s) {
                    return Err(Error::option(
                        "--avoid",
                        format!(
                            "sub-node {} is on switch {}, which is avoided; route between sub-nodes of other switches",
                            self.plan.sub_node_list[sn].id, self.plan.switch_list[s].name
                        ),
                    ));
                }
            }
            if sa != sb {
                self.route_avoiding(sa, sb, &key, &mut r)?;
            }
        } else if sa != sb {
            match self.fabric {
                Fabric::BiGraph if self.tier[sa] != self.tier[sb] => {
                    r.push(self.between(sa, sb, &key)?);
                }
                Fabric::BiGraph | Fabric::TwoTier => {
                    let l1 = self.upward(sa, &key)?;
                    r.push(l1);
                    r.push(self.between(self.to(l1), sb, &key)?);
                }
                Fabric::ThreeTier if self.pod[sa] == self.pod[sb] => {
                    let l1 = self.upward(sa, &key)?;
                    r.push(l1);
                    r.push(self.between(self.to(l1), sb, &key)?);
                }
                Fabric::ThreeTier => {
                    let l1 = self.upward(sa, &key)?;
                    let l2 = self.upward(self.to(l1), &key)?;
                    let l3 = self.down_to_pod(self.to(l2), self.pod[sb], sb, &key)?;
                    let l4 = self.between(self.to(l3), sb, &key)?;
                    for l in [l1, l2, l3, l4] {
                        r.push(l);
                    }
                }
            }
        }
        r.push(self.down_link(dst));
        Ok(r)
    }

    /// The inter-switch hops of a route from switch `sa` to switch `sb`
    /// (different, neither avoided) that keeps off the faults.
    fn route_avoiding(&self, sa: usize, sb: usize, key: &FlowKey, r: &mut Route) -> Result<()> {
        let shape = self.shape(sa, sb);
        if shape == Shape::TwoHop
            && let Some(f) = &self.faults
            && f.clean[sa]
            && f.clean[sb]
            && f.neighbours[sa] == f.neighbours[sb]
        {
            // Every upward link of sa is usable and leads to sb, over a
            // usable link: the choices are those of the plain route.
            let l1 = self.upward(sa, key)?;
            r.push(l1);
            r.push(self.between(self.to(l1), sb, key)?);
            return Ok(());
        }
        let mut at = sa;
        for hop in 0..shape.hops() {
            let mut n = 0;
            self.candidates(shape, hop, at, sa, sb, &mut |_| {
                n += 1;
                true
            });
            if n == 0 {
                return Err(self.unroutable(sa, sb));
            }
            let pick = self.choose(at, n, key);
            let mut seen = 0;
            let mut chosen = None;
            self.candidates(shape, hop, at, sa, sb, &mut |k| {
                if seen == pick {
                    chosen = Some(k);
                    return false;
                }
                seen += 1;
                true
            });
            let k = chosen
                .ok_or_else(|| Error::Internal("ECMP chose past its candidates".to_string()))?;
            r.push(self.id(k));
            at = self.inter[k as usize].to as usize;
        }
        if at != sb {
            return Err(Error::Internal(format!(
                "a route from {} ended at {} instead of {}",
                self.plan.switch_list[sa].name,
                self.plan.switch_list[at].name,
                self.plan.switch_list[sb].name
            )));
        }
        Ok(())
    }

    /// The error for two switches that no route joins.
    fn unroutable(&self, a: usize, b: usize) -> Error {
        let avoided = self
            .faults
            .as_ref()
            .map(|f| f.described.join(", "))
            .unwrap_or_default();
        Error::option(
            "--avoid",
            format!(
                "no route from switch {} to switch {} keeps off {avoided}; avoid fewer links, or avoid one of the two switches as well so that no rank is placed on it",
                self.plan.switch_list[a].name, self.plan.switch_list[b].name
            ),
        )
    }

    /// True when inter link `k` can carry routes.
    fn alive(&self, k: u32) -> bool {
        match &self.faults {
            None => true,
            Some(f) => {
                let l = &self.inter[k as usize];
                !f.inter[k as usize] && !f.switch[l.from as usize] && !f.switch[l.to as usize]
            }
        }
    }

    /// True when some link from `a` to `b` can carry routes.
    fn has_alive(&self, a: usize, b: usize) -> bool {
        self.links_to(a, b).iter().any(|&(_, k)| self.alive(k))
    }

    /// True when switch `s` is not avoided.
    fn up_switch(&self, s: usize) -> bool {
        !self.is_avoided_switch(s)
    }

    /// The shape of a route between two different switches.
    fn shape(&self, sa: usize, sb: usize) -> Shape {
        match self.fabric {
            Fabric::BiGraph if self.tier[sa] != self.tier[sb] => {
                if self.faults.is_none() || self.has_alive(sa, sb) {
                    Shape::Direct
                } else {
                    Shape::Detour
                }
            }
            Fabric::ThreeTier if self.pod[sa] != self.pod[sb] => Shape::FourHop,
            _ => Shape::TwoHop,
        }
    }

    /// Calls `visit` with the inter index of every candidate for hop `hop`
    /// of a route of `shape` from `sa` to `sb`, now at switch `at`, in the
    /// order ECMP numbers them, until `visit` returns false. Without
    /// faults these are exactly the choices of the plain routes; with
    /// faults, only links that can carry routes and that lead on to `sb`.
    fn candidates(
        &self,
        shape: Shape,
        hop: usize,
        at: usize,
        sa: usize,
        sb: usize,
        visit: &mut dyn FnMut(u32) -> bool,
    ) {
        let faulty = self.faults.is_some();
        let ups = &self.up[self.up_start[at] as usize..self.up_start[at + 1] as usize];
        let row = &self.adj[self.adj_start[at] as usize..self.adj_start[at + 1] as usize];
        let to = |k: u32| self.inter[k as usize].to as usize;
        // A link to `sb` itself.
        let direct = |visit: &mut dyn FnMut(u32) -> bool| {
            for &(_, k) in self.links_to(at, sb) {
                if self.alive(k) && !visit(k) {
                    return;
                }
            }
        };
        match (shape, hop) {
            (Shape::Direct, _) => direct(visit),
            (Shape::TwoHop, 0) => {
                for &k in ups {
                    let x = to(k);
                    let leads =
                        !faulty || (self.alive(k) && self.up_switch(x) && self.has_alive(x, sb));
                    if leads && !visit(k) {
                        return;
                    }
                }
            }
            (Shape::TwoHop, _) | (Shape::Detour, 2) | (Shape::FourHop, 3) => direct(visit),
            (Shape::Detour, 0) => {
                // Up to the other part (sb's part), to a switch that has a
                // way back to sa's part that reaches sb.
                for &k in ups {
                    let x = to(k);
                    if x == sb || !self.alive(k) || !self.up_switch(x) {
                        continue;
                    }
                    let xrow =
                        &self.adj[self.adj_start[x] as usize..self.adj_start[x + 1] as usize];
                    let leads = xrow.iter().any(|&(y, j)| {
                        let y = y as usize;
                        y != sa
                            && self.tier[y] == self.tier[sa]
                            && self.alive(j)
                            && self.up_switch(y)
                            && self.has_alive(y, sb)
                    });
                    if leads && !visit(k) {
                        return;
                    }
                }
            }
            (Shape::Detour, _) => {
                for &(y, k) in row {
                    let y = y as usize;
                    if y != sa
                        && self.tier[y] == self.tier[sa]
                        && self.alive(k)
                        && self.up_switch(y)
                        && self.has_alive(y, sb)
                        && !visit(k)
                    {
                        return;
                    }
                }
            }
            (Shape::FourHop, 0) => {
                for &k in ups {
                    let agg = to(k);
                    let leads = !faulty
                        || (self.alive(k)
                            && self.up_switch(agg)
                            && self.up_of(agg).iter().any(|&j| {
                                self.alive(j) && self.core_leads(to(j), self.pod[sb], sb)
                            }));
                    if leads && !visit(k) {
                        return;
                    }
                }
            }
            (Shape::FourHop, 1) => {
                for &k in ups {
                    if (!faulty || (self.alive(k) && self.core_leads(to(k), self.pod[sb], sb)))
                        && !visit(k)
                    {
                        return;
                    }
                }
            }
            (Shape::FourHop, _) => {
                for &(peer, k) in row {
                    let peer = peer as usize;
                    if self.tier[peer] == Tier::Aggregation
                        && self.pod[peer] == self.pod[sb]
                        && self.alive(k)
                        && self.up_switch(peer)
                        && (if faulty {
                            self.has_alive(peer, sb)
                        } else {
                            self.has_link(peer, sb)
                        })
                        && !visit(k)
                    {
                        return;
                    }
                }
            }
        }
    }

    /// The upward links of switch `a`.
    fn up_of(&self, a: usize) -> &[u32] {
        &self.up[self.up_start[a] as usize..self.up_start[a + 1] as usize]
    }

    /// True when core `c` is up and has a link that can carry routes to an
    /// aggregation switch of `pod` with such a link to edge `edge`.
    fn core_leads(&self, c: usize, pod: u32, edge: usize) -> bool {
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

    /// The switch an inter-switch link id leads to.
    fn to(&self, id: usize) -> usize {
        self.inter[id - 2 * self.sub_switch.len()].to as usize
    }

    /// The link id of inter index `k`.
    fn id(&self, k: u32) -> usize {
        2 * self.sub_switch.len() + k as usize
    }

    /// An ECMP choice among the upward links of switch `a`.
    fn upward(&self, a: usize, key: &FlowKey) -> Result<usize> {
        let ups = &self.up[self.up_start[a] as usize..self.up_start[a + 1] as usize];
        if ups.is_empty() {
            return Err(self.no_route(a, "it has no link to the next tier up (or the other part)"));
        }
        Ok(self.id(ups[self.choose(a, ups.len(), key)]))
    }

    /// An ECMP choice among the parallel links from switch `a` to switch `b`.
    fn between(&self, a: usize, b: usize, key: &FlowKey) -> Result<usize> {
        let links = self.links_to(a, b);
        if links.is_empty() {
            return Err(self.no_route(
                a,
                &format!("it has no link to {}", self.plan.switch_list[b].name),
            ));
        }
        Ok(self.id(links[self.choose(a, links.len(), key)].1))
    }

    /// An ECMP choice among the links from core `c` to aggregation switches
    /// of pod `pod` that have a link to edge `edge`.
    fn down_to_pod(&self, c: usize, pod: u32, edge: usize, key: &FlowKey) -> Result<usize> {
        let row = &self.adj[self.adj_start[c] as usize..self.adj_start[c + 1] as usize];
        let leads = |&&(peer, _): &&(u32, u32)| {
            let peer = peer as usize;
            self.tier[peer] == Tier::Aggregation
                && self.pod[peer] == pod
                && self.has_link(peer, edge)
        };
        let count = row.iter().filter(leads).count();
        if count == 0 {
            return Err(self.no_route(
                c,
                &format!(
                    "it has no link to an aggregation switch above {}",
                    self.plan.switch_list[edge].name
                ),
            ));
        }
        let pick = self.choose(c, count, key);
        row.iter()
            .filter(leads)
            .nth(pick)
            .map(|&(_, k)| self.id(k))
            .ok_or_else(|| Error::Internal("ECMP chose past its candidates".to_string()))
    }

    /// The parallel links from switch `a` to switch `b`, as `(peer, inter
    /// index)`.
    fn links_to(&self, a: usize, b: usize) -> &[(u32, u32)] {
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

    fn has_link(&self, a: usize, b: usize) -> bool {
        !self.links_to(a, b).is_empty()
    }

    /// Index of the chosen next hop among `n` at switch `at`.
    fn choose(&self, at: usize, n: usize, key: &FlowKey) -> usize {
        if n == 1 {
            return 0;
        }
        let h = ecmp_hash(
            sub_node_ip(key.src),
            sub_node_ip(key.dst),
            source_port(key.flow, key.seed),
            at as u32,
        );
        (h % n as u64) as usize
    }

    fn no_route(&self, at: usize, why: &str) -> Error {
        self.plan.refusal(vec![Problem::at(
            None,
            format!("switch {}", self.plan.switch_list[at].name),
            format!("no route through it: {why}"),
            format!(
                "cable it as a {} needs, or design the plan again",
                self.fabric.name()
            ),
        )])
    }
}

/// How a route between two different switches is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// BiGraph, between the parts: the direct link.
    Direct,
    /// BiGraph, between the parts when no direct link can be used: to
    /// another switch of the destination's part, back to another switch of
    /// the source's part, then to the destination.
    Detour,
    /// Up one hop and down to the destination: within a BiGraph part, or
    /// between leaves (edges of one pod) of a fat-tree.
    TwoHop,
    /// 3-tier fat-tree between pods: edge, aggregation, core, aggregation,
    /// edge.
    FourHop,
}

impl Shape {
    fn hops(self) -> usize {
        match self {
            Shape::Direct => 1,
            Shape::TwoHop => 2,
            Shape::Detour => 3,
            Shape::FourHop => 4,
        }
    }
}

/// What the ECMP hash of a flow is made from.
#[derive(Debug, Clone, Copy)]
struct FlowKey {
    src: usize,
    dst: usize,
    flow: u64,
    seed: u64,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// The MurmurHash3 64-bit finaliser: every input bit affects every output
/// bit.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// The IPv4 address a sub-node is given for hashing: `10.0.0.0` plus its
/// index, as a 32-bit number.
pub fn sub_node_ip(index: usize) -> u32 {
    0x0A00_0000u32.wrapping_add(index as u32)
}

/// The UDP source port of a flow: 49152 plus the low 14 bits of the hash
/// of the seed and the flow id (8 bytes each, big-endian).
pub fn source_port(flow: u64, seed: u64) -> u16 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&seed.to_be_bytes());
    bytes[8..].copy_from_slice(&flow.to_be_bytes());
    0xC000 | (fmix64(fnv1a64(&bytes)) & 0x3FFF) as u16
}

/// The ECMP hash of a RoCEv2 flow at switch `switch` (see the module
/// documentation for the byte layout).
pub fn ecmp_hash(src_ip: u32, dst_ip: u32, src_port: u16, switch: u32) -> u64 {
    let mut bytes = [0u8; 17];
    bytes[0..4].copy_from_slice(&src_ip.to_be_bytes());
    bytes[4..8].copy_from_slice(&dst_ip.to_be_bytes());
    bytes[8] = UDP;
    bytes[9..11].copy_from_slice(&src_port.to_be_bytes());
    bytes[11..13].copy_from_slice(&ROCE_V2_PORT.to_be_bytes());
    bytes[13..17].copy_from_slice(&switch.to_be_bytes());
    fmix64(fnv1a64(&bytes))
}
