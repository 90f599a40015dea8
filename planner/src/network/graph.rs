//! The route graph of a plan: every sub-node's switch, the inter-switch links with a dense id each, adjacency, tiers and pods.
//!
//! [`RouteGraph`] holds what routing reads of a plan, owned, with no
//! borrow of the plan: a [`Network`](super::Network) is a view of a plan,
//! the name of where it came from, a route graph built from that plan and
//! what routes avoid. So the load check, which builds the graph for its
//! quick proof, can hand it to the checked plan
//! ([`crate::checked::CheckedPlan::network`]), and every command that
//! routes on the plan reuses it instead of building it again.
//!
//! Building the graph checks every sub-node's switch and every
//! inter-switch port's peer; the link ids are those of the module
//! documentation of [`super::links`].

use rustc_hash::FxHashMap;

use crate::error::Problem;
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

/// Largest switch count for which [`RouteGraph`] keeps a dense
/// switch-pair table (8 MiB at this size).
const DENSE_SWITCHES: usize = 1024;

/// No single link, in [`RouteGraph::single`] (a switch with this many links
/// or more has no table).
pub(super) const NO_SLOT: u16 = u16::MAX;

/// Pod value of a switch without one.
pub(super) const NO_POD: u32 = u32::MAX;

/// The tables routing reads of one plan, built by [`RouteGraph::build`]
/// and nothing else: a graph is the graph of the plan it was built from,
/// and a [`Network`](super::Network) pairs it only with that plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteGraph {
    /// The structure routes follow.
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
    /// The designed BiGraph's order, where the plan has it.
    pub(super) canonical: Option<Canonical>,
}

/// A BiGraph whose every switch has, in port order, one inter-switch link
/// to each switch of the other part, in plan order (every designed
/// BiGraph): its links are then known from two small tables. The link from
/// switch a to switch b of the other part is inter index `adj_start[a] +
/// position[b]`, and a's i-th upward link leads to `members[other][i]`,
/// so a route's hops read these (4 KiB at 512 switches, in cache) instead
/// of the single-link table and the upward rows (1.5 MiB read at random
/// at 131,072 sub-nodes); the answers are the same (the property tests of
/// `graph_tests.rs` hold them equal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Canonical {
    /// Per switch, its position among the switches of its part.
    pub(super) position: Vec<u32>,
    /// Per part ([`Canonical::part`]), its switches in plan order.
    pub(super) members: [Vec<u32>; 2],
}

impl Canonical {
    /// The part of a switch of tier `tier`: 0 upper, 1 lower.
    pub(super) fn part(tier: Tier) -> usize {
        usize::from(tier == Tier::Lower)
    }

    /// The canonical order of a BiGraph's links, if every switch's links
    /// (`inter`, numbered per switch from `adj_start`) follow it.
    fn of(tier: &[Tier], inter: &[InterLink], adj_start: &[u32]) -> Option<Self> {
        let mut members = [Vec::new(), Vec::new()];
        let mut position = Vec::with_capacity(tier.len());
        for (s, &t) in tier.iter().enumerate() {
            let part = &mut members[Self::part(t)];
            position.push(part.len() as u32);
            part.push(s as u32);
        }
        let follows = tier.iter().enumerate().all(|(a, &t)| {
            let links = &inter[adj_start[a] as usize..adj_start[a + 1] as usize];
            let other = &members[1 - Self::part(t)];
            links.len() == other.len() && links.iter().zip(other).all(|(l, &b)| l.to == b)
        });
        follows.then_some(Self { position, members })
    }
}

impl RouteGraph {
    /// The graph of `plan`: every sub-node's switch and every
    /// inter-switch port, checking that each such port's peer points back;
    /// or every reason the plan cannot carry routes.
    pub(crate) fn build(plan: &Plan) -> std::result::Result<Self, Vec<Problem>> {
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
        // Every sub-node's switch, and how many NICs have a second port,
        // in one pass over the sub-nodes' records.
        let mut sub_switch = Vec::with_capacity(plan.sub_node_list.len());
        let mut dual = 0;
        for sn in &plan.sub_node_list {
            sub_switch.push(attached(sn, &sn.switch, 0, &mut problems));
            dual += usize::from(sn.port1.is_some());
        }

        // The second ports of dual-port NICs: every NIC has one, or none.
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
        // Per switch, whether its port numbers rise strictly in list
        // order: a number is then at one place only, and where the
        // numbers run without a gap it is found by its offset from the
        // first, without a binary search (131,072 of them at 131,072
        // sub-nodes, each a run of unpredictable branches).
        let mut rising = Vec::with_capacity(switches);
        for s in &plan.switch_list {
            let first = numbers.len();
            base.push(first);
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
            rising.push(numbers[first..].windows(2).all(|w| w[0] < w[1]));
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
                    port_at(ports, rising[b as usize], q).map(|i| from + i)
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

        let canonical = (fabric == RouteShape::BiGraph)
            .then(|| Canonical::of(&tier, &inter, &adj_start))
            .flatten();

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
            canonical,
        })
    }
}

/// Where port number `q` is in a switch's port numbers `ports` (in list
/// order): a binary search, else a scan where the list is out of order.
/// Where `rising` (the numbers rise strictly) and the number sits at its
/// offset from the first (numbers without a gap), that place is taken
/// without the search: it is the only place of `q`, so the one the search
/// finds (the property test `port_at_is_the_search` holds them equal).
fn port_at(ports: &[u32], rising: bool, q: u32) -> Option<usize> {
    let offset = ports.first().map(|&first| q.wrapping_sub(first) as usize);
    offset
        .filter(|&i| rising && ports.get(i) == Some(&q))
        .or_else(|| ports.binary_search(&q).ok())
        .or_else(|| ports.iter().position(|&p| p == q))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::port_at;

    proptest! {
        /// Port numbers with gaps or without, in order or shuffled, with
        /// a number twice or not: `port_at` finds what the binary search
        /// and the scan find, for every number in the list and beside it.
        #[test]
        fn port_at_is_the_search(
            start in 0u32..5,
            steps in proptest::collection::vec(0u32..3, 0..40),
            swap in proptest::option::of((0usize..40, 0usize..40)),
            q in 0u32..120,
        ) {
            let mut ports = Vec::with_capacity(steps.len() + 1);
            let mut n = start;
            ports.push(n);
            for &s in &steps {
                n += s;
                ports.push(n);
            }
            if let Some((i, j)) = swap {
                let len = ports.len();
                ports.swap(i % len, j % len);
            }
            let rising = ports.windows(2).all(|w| w[0] < w[1]);
            let search = |q: u32| ports.binary_search(&q).ok().or_else(|| ports.iter().position(|&p| p == q));
            for q in ports.iter().copied().chain([q, q + 1]) {
                prop_assert_eq!(port_at(&ports, rising, q), search(q));
            }
        }
    }
}
