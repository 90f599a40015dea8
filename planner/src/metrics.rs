//! Figures of merit of a plan, for `design` reports and `compare`.
//!
//! Bisection bandwidth is the least bandwidth across any cut that splits
//! the sub-nodes in two equal halves. For these structured fabrics it is
//! found exactly by enumerating how many switches of each tier fall on one
//! side (switches of a tier are interchangeable), paying for sub-nodes
//! moved across when the two sides are unequal. Hop counts follow from the
//! structure (a BiGraph path inside one part crosses three switches).

use serde::Serialize;

use crate::design::{largest_bigraph, largest_three_tier, largest_two_tier};
use crate::plan::{CableKind, Plan, PortRole, Tier, Topology};

/// How far a design can grow with the same switch model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    /// What the figure is for (`BiGraph with the VLAN split`, `2-tier`).
    pub design: String,
    /// Largest sub-node count.
    pub sub_nodes: usize,
}

/// Figures of merit of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// `BiGraph 4x16`, `2-tier leaf-spine 1:1`, ...
    pub design: String,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// Sub-nodes.
    pub sub_nodes: usize,
    /// Switches (VLAN halves counted singly).
    pub switches: usize,
    /// Physical switches.
    pub physical_switches: usize,
    /// Inter-switch links.
    pub links: usize,
    /// All physical cables ([`Plan::physical_cables`]: a breakout cable
    /// counts once, however many links its legs carry).
    pub cables: usize,
    /// Cables from switches to sub-nodes.
    pub sub_node_cables: usize,
    /// Direct-attach copper cables.
    pub dac_cables: usize,
    /// Optical cables.
    pub optical_cables: usize,
    /// Transceivers for the optical cables: two per whole cable, one per
    /// cage and one per lane of a breakout cable.
    pub transceivers: usize,
    /// Bisection bandwidth in Gbps.
    pub bisection_gbps: f64,
    /// Bisection over what the sub-nodes can send across it (1 = full).
    pub bisection_ratio: f64,
    /// Most switches a packet crosses between two sub-nodes.
    pub max_switch_hops: usize,
    /// Ports left free for growth.
    pub free_ports: usize,
    /// Largest sizes with the same switch model.
    pub largest: Vec<Growth>,
    /// What one failed physical switch takes away, at worst.
    pub blast_radius: BlastRadius,
}

/// What one failed physical switch takes away: the worst switch for each
/// figure (a VLAN-split switch fails with both halves).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlastRadius {
    /// Most sub-nodes cabled to one physical switch: cut off when it fails.
    pub sub_nodes: usize,
    /// Most servers with a sub-node on one physical switch: each loses a
    /// NIC (a whole group of servers on a rail switch, one NIC each).
    pub servers: usize,
    /// Most inter-switch cables on one physical switch: bandwidth the
    /// others lose.
    pub links: usize,
    /// On a plan of dual-port NICs (HPN): most NIC ports cabled to one
    /// physical switch. Their NICs stay reachable over the other port
    /// (plane), at half their bandwidth; `sub_nodes` counts only the NICs
    /// with no port elsewhere. Absent on other plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_ports: Option<usize>,
}

/// The [`BlastRadius`] of a plan, from its cables.
pub fn blast_radius(plan: &Plan) -> BlastRadius {
    use std::collections::{HashMap, HashSet};
    let mut sub_nodes: HashMap<&str, usize> = HashMap::new();
    // Dual-port NICs: a failed switch cuts off only a NIC with both
    // ports on it.
    let dual = plan.sub_node_list.iter().any(|sn| sn.port1.is_some());
    let mut both_on: HashMap<&str, usize> = HashMap::new();
    if dual {
        let physical: HashMap<&str, &str> = plan
            .switch_list
            .iter()
            .map(|s| (s.name.as_str(), s.physical.as_str()))
            .collect();
        for sn in &plan.sub_node_list {
            let a = physical.get(sn.switch.as_str()).copied();
            let b = match &sn.port1 {
                Some(p) => physical.get(p.switch.as_str()).copied(),
                None => a,
            };
            if let (Some(a), Some(b)) = (a, b)
                && a == b
            {
                *both_on.entry(a).or_default() += 1;
            }
        }
    }
    let mut servers: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut links: HashMap<&str, usize> = HashMap::new();
    for c in &plan.cables {
        match c.kind {
            CableKind::SubNode => {
                *sub_nodes.entry(c.a.as_str()).or_default() += 1;
                servers
                    .entry(c.a.as_str())
                    .or_default()
                    .insert(c.b.as_str());
            }
            CableKind::InterSwitch => {
                *links.entry(c.a.as_str()).or_default() += 1;
                if c.b != c.a {
                    *links.entry(c.b.as_str()).or_default() += 1;
                }
            }
        }
    }
    let ports = sub_nodes.values().copied().max().unwrap_or(0);
    BlastRadius {
        sub_nodes: if dual {
            both_on.values().copied().max().unwrap_or(0)
        } else {
            ports
        },
        servers: servers.values().map(HashSet::len).max().unwrap_or(0),
        links: links.values().copied().max().unwrap_or(0),
        nic_ports: dual.then_some(ports),
    }
}

/// Computes the figures of a plan.
pub fn metrics(plan: &Plan) -> Metrics {
    // Physical cables, as `cables` lists them and `cost` buys them: a
    // breakout cable once, whatever its legs.
    let physical = plan.physical_cables();
    let sub_node_cables = physical.iter().filter(|c| c.to_sub_nodes(plan)).count();
    let optical = physical.iter().filter(|c| !c.is_dac(plan)).count();
    let transceivers = physical.iter().map(|c| c.transceivers(plan)).sum();
    let free_ports = plan
        .switch_list
        .iter()
        .map(|s| s.count(PortRole::Free))
        .sum();
    let nic = plan
        .sub_node_list
        .iter()
        .map(|s| s.nic_gbps)
        .max()
        .unwrap_or(0);
    let port = plan
        .switch_list
        .iter()
        .map(|s| s.port_gbps)
        .max()
        .unwrap_or(0);
    let link = f64::from(nic.min(port));
    let bisection = bisection(plan, link);
    // What the sub-nodes can send: every port of their NICs.
    let nic_ports = if plan.sub_node_list.iter().any(|sn| sn.port1.is_some()) {
        2
    } else {
        1
    };
    Metrics {
        design: plan.describe(),
        topology: plan.topology,
        sub_nodes: plan.sub_nodes,
        switches: plan.switches,
        physical_switches: plan.physical_switches,
        links: plan.links,
        cables: physical.len(),
        sub_node_cables,
        dac_cables: physical.len() - optical,
        optical_cables: optical,
        transceivers,
        bisection_gbps: bisection,
        bisection_ratio: bisection_ratio(bisection, plan.sub_nodes, link, nic_ports),
        max_switch_hops: max_switch_hops(plan),
        free_ports,
        largest: growth(plan, nic),
        blast_radius: blast_radius(plan),
    }
}

/// Switches per tier that carry sub-nodes, and per tier in all.
fn tier_counts(plan: &Plan, tier: Tier) -> (usize, usize) {
    let mut with = 0;
    let mut all = 0;
    for s in &plan.switch_list {
        if s.part_or_tier == tier {
            all += 1;
            if s.ports.iter().any(|p| p.role == PortRole::SubNode) {
                with += 1;
            }
        }
    }
    (with, all)
}

/// Most switches crossed between two sub-nodes.
pub fn max_switch_hops(plan: &Plan) -> usize {
    // Switches carrying sub-nodes, in the fullest plane (a flow stays in
    // one plane of an HPN fabric; other plans have one).
    let mut per_plane: Vec<(Option<usize>, usize)> = Vec::new();
    for s in &plan.switch_list {
        if s.ports.iter().any(|p| p.role == PortRole::SubNode) {
            match per_plane.iter_mut().find(|(p, _)| *p == s.plane) {
                Some((_, n)) => *n += 1,
                None => per_plane.push((s.plane, 1)),
            }
        }
    }
    let carrying = per_plane.iter().map(|&(_, n)| n).max().unwrap_or(0);
    if carrying <= 1 {
        return usize::from(carrying == 1);
    }
    match plan.topology {
        Topology::BiGraph => {
            let (u, _) = tier_counts(plan, Tier::Upper);
            let (l, _) = tier_counts(plan, Tier::Lower);
            // Two switches of one part meet through the other part.
            if u > 1 || l > 1 { 3 } else { 2 }
        }
        Topology::FatTree | Topology::RailOptimized | Topology::Hpn => {
            if plan.fat_tree.as_ref().is_some_and(|f| f.tiers == 3) {
                let mut pods: Vec<usize> = plan
                    .switch_list
                    .iter()
                    .filter(|s| s.ports.iter().any(|p| p.role == PortRole::SubNode))
                    .filter_map(|s| s.pod)
                    .collect();
                pods.sort_unstable();
                pods.dedup();
                if pods.len() > 1 { 5 } else { 3 }
            } else {
                3
            }
        }
    }
}

/// The least cut over balanced splits: `x` of `nx` switches of one tier and
/// `y` of `ny` of the other on side A, `links_between(x, y)` links cut,
/// sub-nodes carried by side A computed by `carried(x, y)`; sub-nodes moved
/// across to balance cost `link` each.
fn least_cut(
    nx: usize,
    ny: usize,
    link_gbps: f64,
    sub_link: f64,
    p: usize,
    cut_links: impl Fn(usize, usize) -> f64,
    carried: impl Fn(usize, usize) -> f64,
) -> f64 {
    let half = p as f64 / 2.0;
    let mut best = f64::INFINITY;
    for x in 0..=nx {
        for y in 0..=ny {
            let imbalance = (carried(x, y) - half).abs();
            let cut = cut_links(x, y) * link_gbps + imbalance * sub_link;
            if cut < best {
                best = cut;
            }
        }
    }
    if best.is_finite() { best } else { 0.0 }
}

/// The bisection as a share of full bisection: of what half the
/// sub-nodes can send through all `nic_ports` of their NICs at
/// `link_gbps` each (0 without sub-nodes). The one "% of full" that
/// `design`, `compare` and `purchase` (its `--min-bisection` floor) use.
pub fn bisection_ratio(bisection: f64, sub_nodes: usize, link_gbps: f64, nic_ports: u32) -> f64 {
    let full = sub_nodes as f64 / 2.0 * link_gbps * f64::from(nic_ports);
    if full > 0.0 { bisection / full } else { 0.0 }
}

/// The switch-level shape of a fabric, as far as its bisection depends on
/// it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CutShape {
    /// A BiGraph: `upper` and `lower` switches, every upper switch linked
    /// once to every lower one, sub-nodes spread evenly over all of them.
    BiGraph {
        /// Switches of the upper part.
        upper: usize,
        /// Switches of the lower part.
        lower: usize,
    },
    /// A 2-tier leaf-spine: every leaf linked to every spine by
    /// `links_per_leaf_spine` links (fractional when a leaf's uplinks are
    /// spread unevenly), sub-nodes spread evenly over the leaves.
    LeafSpine {
        /// Leaf switches.
        leaves: usize,
        /// Spine switches.
        spines: usize,
        /// Links between one leaf and one spine.
        links_per_leaf_spine: f64,
    },
    /// A 3-tier fat-tree: `pods`, each linked once to every one of `cores`
    /// core switches, sub-nodes spread evenly over the pods.
    ThreeTier {
        /// Pods.
        pods: usize,
        /// Core switches.
        cores: usize,
    },
    /// HPN: two planes, each a 2-tier leaf-spine of `leaves` ToRs and
    /// `spines` aggregation switches like [`CutShape::LeafSpine`], every
    /// sub-node with one port in each; the planes share no link, so the
    /// bisection is twice one plane's.
    DualPlane {
        /// ToRs per plane.
        leaves: usize,
        /// Aggregation switches per plane.
        spines: usize,
        /// Links between one ToR and one aggregation switch.
        links_per_leaf_spine: f64,
    },
    /// One switch: every sub-node reaches every other through it.
    OneSwitch,
}

/// The bisection bandwidth of a fabric in Gbps: the least capacity of the
/// links cut when the sub-nodes are split into two halves, taken over every
/// split of the switches (the minimum balanced cut); when a split of
/// switches does not halve the sub-nodes exactly, the sub-nodes moved
/// across cost their own links (`sub_link_gbps` each).
///
/// For an M x N BiGraph (N/2 switches per part, M sub-nodes each), the
/// least cut takes N/4 switches of each part to each side and cuts
/// 2 x (N/4)^2 = N^2/8 links, so the bisection is
/// `min(N^2/8 x port, M x N/2 x sub_link)`, a ratio of `min(1, N/(4M))` to
/// full bisection: 0.5 for M = N/2. The one answer used by `design`,
/// `compare`, `cost` and `purchase`.
pub fn bisection_gbps(
    shape: CutShape,
    sub_nodes: usize,
    port_gbps: f64,
    sub_link_gbps: f64,
) -> f64 {
    let p = sub_nodes;
    match shape {
        CutShape::BiGraph { upper: u, lower: l } => {
            let per_switch = p as f64 / (u + l).max(1) as f64;
            least_cut(
                u,
                l,
                port_gbps,
                sub_link_gbps,
                p,
                |a, b| (a * (l - b) + (u - a) * b) as f64,
                |a, b| (a + b) as f64 * per_switch,
            )
        }
        CutShape::ThreeTier { pods, cores } => {
            let per_pod = p as f64 / pods.max(1) as f64;
            least_cut(
                pods,
                cores,
                port_gbps,
                sub_link_gbps,
                p,
                |a, c| (a * (cores - c) + (pods - a) * c) as f64,
                |a, _| a as f64 * per_pod,
            )
        }
        CutShape::LeafSpine {
            leaves,
            spines,
            links_per_leaf_spine: w,
        } => {
            let per_leaf = p as f64 / leaves.max(1) as f64;
            least_cut(
                leaves,
                spines,
                port_gbps,
                sub_link_gbps,
                p,
                |a, s| (a * (spines - s) + (leaves - a) * s) as f64 * w,
                |a, _| a as f64 * per_leaf,
            )
        }
        CutShape::DualPlane {
            leaves,
            spines,
            links_per_leaf_spine,
        } => {
            let plane = if leaves <= 1 {
                CutShape::OneSwitch
            } else {
                CutShape::LeafSpine {
                    leaves,
                    spines,
                    links_per_leaf_spine,
                }
            };
            2.0 * bisection_gbps(plane, p, port_gbps, sub_link_gbps)
        }
        CutShape::OneSwitch => p as f64 / 2.0 * sub_link_gbps,
    }
}

/// The [`CutShape`] of a plan.
pub fn cut_shape(plan: &Plan) -> CutShape {
    match plan.topology {
        Topology::BiGraph => CutShape::BiGraph {
            upper: tier_counts(plan, Tier::Upper).1,
            lower: tier_counts(plan, Tier::Lower).1,
        },
        Topology::Hpn => {
            let f = plan.fat_tree.as_ref();
            let h = plan.hpn.as_ref();
            CutShape::DualPlane {
                leaves: h.map_or(0, |h| h.tors_per_plane),
                spines: h.map_or(0, |h| h.aggregation_per_plane),
                links_per_leaf_spine: f.map_or(1, |f| f.links_per_leaf_spine) as f64,
            }
        }
        Topology::FatTree | Topology::RailOptimized => {
            let f = plan.fat_tree.as_ref();
            if f.is_some_and(|f| f.tiers == 3) {
                CutShape::ThreeTier {
                    pods: f.and_then(|f| f.pods).unwrap_or(1),
                    cores: tier_counts(plan, Tier::Core).1,
                }
            } else {
                CutShape::LeafSpine {
                    leaves: tier_counts(plan, Tier::Leaf).1,
                    spines: tier_counts(plan, Tier::Spine).1,
                    links_per_leaf_spine: f.map_or(1, |f| f.links_per_leaf_spine) as f64,
                }
            }
        }
    }
}

fn bisection(plan: &Plan, sub_link: f64) -> f64 {
    let port = f64::from(plan.switch_list.first().map_or(0, |s| s.port_gbps));
    bisection_gbps(cut_shape(plan), plan.sub_nodes, port, sub_link)
}

fn growth(plan: &Plan, nic: u32) -> Vec<Growth> {
    let usable = |tier: Tier| -> Option<(usize, u32)> {
        plan.switch_list
            .iter()
            .filter(|s| s.part_or_tier == tier)
            .map(|s| (s.ports.len() - s.count(PortRole::Reserved), s.port_gbps))
            .min()
    };
    let mut out = Vec::new();
    match plan.topology {
        Topology::BiGraph => {
            let Some((ports, gbps)) = usable(Tier::Upper) else {
                return out;
            };
            let split = plan.switch_list.iter().any(|s| s.vlan.is_some());
            let (p, m, n) = largest_bigraph(ports, gbps, nic);
            out.push(Growth {
                design: format!("BiGraph {m}x{n}{}", if split { ", VLAN split" } else { "" }),
                sub_nodes: p,
            });
            if split {
                let (p, m, n) = largest_bigraph(2 * ports, gbps, nic);
                out.push(Growth {
                    design: format!("BiGraph {m}x{n}, unsplit"),
                    sub_nodes: p,
                });
            }
        }
        Topology::FatTree | Topology::RailOptimized | Topology::Hpn => {
            let f = plan.fat_tree.as_ref();
            if f.is_some_and(|f| f.tiers == 3) {
                let k = f.and_then(|f| f.k).unwrap_or(0) as usize;
                out.push(Growth {
                    design: format!("3-tier fat-tree k={k}"),
                    sub_nodes: largest_three_tier(k),
                });
            } else if let Some((leaf, gbps)) = usable(Tier::Leaf) {
                let spine = usable(Tier::Spine).map_or(leaf, |s| s.0);
                let o = f.map_or(1.0, |f| f.oversubscription);
                let down = f64::from(nic.min(gbps));
                out.push(Growth {
                    design: format!(
                        "{} {}:1",
                        match plan.topology {
                            Topology::RailOptimized => "rail-optimized",
                            Topology::Hpn => "HPN (per plane)",
                            _ => "2-tier leaf-spine",
                        },
                        crate::text::gbps(o)
                    ),
                    sub_nodes: largest_two_tier(leaf, spine, down, f64::from(gbps), o),
                });
                out.push(Growth {
                    design: format!("3-tier fat-tree k={}", leaf - leaf % 2),
                    sub_nodes: largest_three_tier(leaf),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::design;
    use crate::design::shorthand::{self, Shorthand};
    use petgraph::graph::UnGraph;

    /// Exact worst-case switch hops between sub-nodes, by BFS.
    fn bfs_hops(plan: &Plan) -> usize {
        let mut g = UnGraph::<(), ()>::new_undirected();
        let nodes: Vec<_> = plan.switch_list.iter().map(|_| g.add_node(())).collect();
        let index = plan.switch_index();
        for (i, s) in plan.switch_list.iter().enumerate() {
            for p in &s.ports {
                if p.role == PortRole::InterSwitch {
                    let j = index[p.peer.as_deref().unwrap()];
                    if i < j {
                        g.add_edge(nodes[i], nodes[j], ());
                    }
                }
            }
        }
        let carrying: Vec<usize> = (0..plan.switch_list.len())
            .filter(|&i| {
                plan.switch_list[i]
                    .ports
                    .iter()
                    .any(|p| p.role == PortRole::SubNode)
            })
            .collect();
        let mut worst = usize::from(!carrying.is_empty());
        for &a in &carrying {
            let dist = petgraph::algo::dijkstra(&g, nodes[a], None, |_| 1usize);
            for &b in &carrying {
                worst = worst.max(dist[&nodes[b]] + 1);
            }
        }
        worst
    }

    fn check(
        inv_opts: (crate::inventory::Inventory, crate::design::DesignOptions),
        hops: usize,
        ratio: f64,
    ) {
        let plan = design(&inv_opts.0, &inv_opts.1).unwrap();
        let m = metrics(&plan);
        assert_eq!(m.max_switch_hops, hops, "{}", m.design);
        assert_eq!(bfs_hops(&plan), hops, "{}", m.design);
        assert!(
            (m.bisection_ratio - ratio).abs() < 1e-9,
            "{}: {}",
            m.design,
            m.bisection_ratio
        );
    }

    #[test]
    fn bigraph_bisection_halves_when_m_is_n_over_2() {
        let s = Shorthand::default();
        // N/(4M): 16/(4*4) = 1, 16/(4*8) = 0.5, 8/(4*1) capped by sub-nodes.
        check(shorthand::bigraph(4, 16, &s).unwrap(), 3, 1.0);
        check(shorthand::bigraph(8, 16, &s).unwrap(), 3, 0.5);
        check(shorthand::bigraph(1, 2, &s).unwrap(), 2, 1.0);
    }

    #[test]
    fn fat_trees_are_full_bisection() {
        let s = Shorthand::default();
        check(
            shorthand::fat_tree("tiers=2,sub-nodes=64,ports=32", &s).unwrap(),
            3,
            1.0,
        );
        check(shorthand::fat_tree("k=8", &s).unwrap(), 5, 1.0);
        check(
            shorthand::fat_tree("tiers=2,sub-nodes=96,ports=32,oversub=3", &s).unwrap(),
            3,
            1.0 / 3.0,
        );
        check(
            shorthand::fat_tree("tiers=2,sub-nodes=8,ports=32", &s).unwrap(),
            1,
            1.0,
        );
    }

    #[test]
    fn growth_figures() {
        let (inv, opts) = shorthand::bigraph(4, 16, &Shorthand::default()).unwrap();
        let m = metrics(&design(&inv, &opts).unwrap());
        // 16-port switches: N=16, M=8.
        assert_eq!(m.largest[0].sub_nodes, 128);
        assert_eq!(m.free_ports, 16 * 4);
    }
}
