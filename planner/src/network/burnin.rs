//! The burn-in's plan and report, pure: rounds of disjoint flows that together put one flow on every directed inter-switch link of a lab description, and the cables whose flows all fell below a share of their expected rate.
//!
//! Rounds are planned from the lab description alone ([`plan_rounds`]):
//! for every directed inter-switch link not yet covered, the shortest
//! path of switches that starts at a switch with sub-nodes, crosses the
//! link and ends at another switch with sub-nodes (on a BiGraph, the
//! cable itself: both its ends have sub-nodes); flows join the first round
//! where none of their links, and neither of their hosts' NIC cables in
//! that direction, is taken. The lab (`provisioner lab run --burn-in`) and
//! the cluster (`provisioner probe --burn-in`) run these rounds and hand
//! the rates to [`report`]: a link is named when every flow that crossed
//! it was slow. On a BiGraph each link is crossed by one flow and a slow
//! flow names exactly its cable; on a multi-hop path a slow flow names all
//! the links it alone crossed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;

use super::lab::Lab;
use crate::error::{Error, Problem, Result};

/// A directed inter-switch link: the switch it leaves and the port.
pub type DirLink = (usize, u32);

/// One flow of the burn-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// Source sub-node (index into the lab's hosts).
    pub src: usize,
    /// Destination sub-node.
    pub dst: usize,
    /// The directed inter-switch links it takes, in order.
    pub path: Vec<DirLink>,
}

/// Plans the rounds of at most `max_flows` flows each: every directed
/// inter-switch link is on the path of one flow (or of more, when a path
/// must cross covered links to reach one that is not).
pub fn plan_rounds(lab: &Lab, max_flows: usize) -> Result<Vec<Vec<Flow>>> {
    let max_flows = max_flows.max(1);
    let n = lab.switches.len();
    // Directed adjacency: (switch) -> [(port, neighbour)].
    let mut out: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
    for c in &lab.cables {
        out[c.a].push((c.a_port, c.b));
        out[c.b].push((c.b_port, c.a));
    }
    for o in &mut out {
        o.sort();
    }
    let mut hosts_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, h) in lab.hosts.iter().enumerate() {
        hosts_of[h.switch].push(i);
    }
    let mut links: Vec<(DirLink, usize)> = Vec::new();
    for (s, o) in out.iter().enumerate() {
        for &(p, to) in o {
            links.push(((s, p), to));
        }
    }
    let mut covered: BTreeSet<DirLink> = BTreeSet::new();
    let mut rounds: Vec<Vec<Flow>> = Vec::new();
    // What each round has taken: directed links, sending and receiving hosts.
    let mut taken: Vec<(BTreeSet<DirLink>, BTreeSet<usize>, BTreeSet<usize>)> = Vec::new();
    for &((x, port), y) in &links {
        if covered.contains(&(x, port)) {
            continue;
        }
        // Head: the nearest switch with hosts that reaches x (x itself
        // when it has hosts), by a path that avoids y.
        let head = nearest(&out, &hosts_of, x, y, true).ok_or_else(|| unreachable(lab, x, y))?;
        let tail = nearest(&out, &hosts_of, y, x, false).ok_or_else(|| unreachable(lab, x, y))?;
        let mut path = head.1.clone();
        path.push((x, port));
        path.extend(tail.1.iter().copied());
        let (hs, ts) = (head.0, tail.0);
        if hs == ts {
            return Err(unreachable(lab, x, y));
        }
        // The first round where the path and a host pair are free.
        let mut placed = false;
        for (r, t) in taken.iter_mut().enumerate() {
            if rounds[r].len() >= max_flows || path.iter().any(|l| t.0.contains(l)) {
                continue;
            }
            let src = hosts_of[hs].iter().copied().find(|h| !t.1.contains(h));
            let dst = hosts_of[ts].iter().copied().find(|h| !t.2.contains(h));
            if let (Some(src), Some(dst)) = (src, dst) {
                t.0.extend(path.iter().copied());
                t.1.insert(src);
                t.2.insert(dst);
                rounds[r].push(Flow {
                    src,
                    dst,
                    path: path.clone(),
                });
                placed = true;
                break;
            }
        }
        if !placed {
            let (src, dst) = (hosts_of[hs][0], hosts_of[ts][0]);
            taken.push((
                path.iter().copied().collect(),
                BTreeSet::from([src]),
                BTreeSet::from([dst]),
            ));
            rounds.push(vec![Flow {
                src,
                dst,
                path: path.clone(),
            }]);
        }
        covered.extend(path);
    }
    Ok(rounds)
}

fn unreachable(lab: &Lab, x: usize, y: usize) -> Error {
    Error::Invalid {
        file: lab.name.clone(),
        what: "plan",
        problems: vec![Problem::at(
            None,
            format!("link {}->{}", lab.switches[x].name, lab.switches[y].name),
            "no path from a switch with sub-nodes through it to another switch with sub-nodes: a burn-in cannot load it",
            "cable a switch with sub-nodes to each end, or leave the link out",
        )],
    }
}

/// The nearest switch with hosts from `start` (breadth first, never
/// through `avoid`): backwards (a path from it to `start`) when
/// `backwards`, else forwards. Returns the switch and the directed links
/// of the path in travel order.
fn nearest(
    out: &[Vec<(u32, usize)>],
    hosts_of: &[Vec<usize>],
    start: usize,
    avoid: usize,
    backwards: bool,
) -> Option<(usize, Vec<DirLink>)> {
    if !hosts_of[start].is_empty() {
        return Some((start, Vec::new()));
    }
    // Cables are symmetric, so a path backwards is a path forwards with
    // each link read from its other end.
    let mut prev: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut seen = BTreeSet::from([start, avoid]);
    while let Some(s) = queue.pop_front() {
        for &(port, t) in &out[s] {
            if !seen.insert(t) {
                continue;
            }
            prev.insert(t, (s, port));
            if !hosts_of[t].is_empty() {
                // Walk back to start.
                let mut hops: Vec<(usize, u32, usize)> = Vec::new();
                let mut cur = t;
                while cur != start {
                    let (p, port) = prev[&cur];
                    hops.push((p, port, cur));
                    cur = p;
                }
                hops.reverse();
                let path = if backwards {
                    // Travel from t to start: each hop (p -> cur) taken as
                    // cur -> p, leaving cur by its port towards p.
                    hops.iter()
                        .rev()
                        .map(|&(p, _, cur)| (cur, port_to(out, cur, p)))
                        .collect()
                } else {
                    hops.iter().map(|&(p, port, _)| (p, port)).collect()
                };
                return Some((t, path));
            }
            queue.push_back(t);
        }
    }
    None
}

fn port_to(out: &[Vec<(u32, usize)>], from: usize, to: usize) -> u32 {
    out[from]
        .iter()
        .find(|&&(_, t)| t == to)
        .map_or(0, |&(p, _)| p)
}

/// What the burn-in found for one flow.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// Round, from 0.
    pub round: usize,
    /// Source sub-node id.
    pub src: String,
    /// Destination sub-node id.
    pub dst: String,
    /// The directed inter-switch links, `upper0->lower3`.
    pub links: Vec<String>,
    /// Planned rate of its path, kbit/s.
    pub expected_kbit: u64,
    /// Measured by the receiver, kbit/s.
    pub measured_kbit: u64,
    /// Measured over expected.
    pub ratio: f64,
    /// Below the threshold.
    pub slow: bool,
}

/// The burn-in's report.
#[derive(Debug, Clone, Serialize)]
pub struct BurnIn {
    /// What was burnt in: `lab NAME`, or the plan's name on a cluster.
    pub fabric: String,
    /// Seconds each flow ran.
    pub seconds: f64,
    /// Share of the planned rate below which a flow is slow.
    pub threshold: f64,
    /// Directed inter-switch links loaded.
    pub links: usize,
    /// Rounds.
    pub rounds: usize,
    /// Every flow.
    pub flows: Vec<Measured>,
    /// Cables with a slow direction that no fast flow crossed, as
    /// `A-B` with the slow directions.
    pub slow_cables: Vec<SlowCable>,
}

/// A cable the burn-in names.
#[derive(Debug, Clone, Serialize)]
pub struct SlowCable {
    /// `upper0-lower3`.
    pub cable: String,
    /// Its slow directions, `upper0->lower3`.
    pub directions: Vec<String>,
    /// The lowest ratio measured on it.
    pub worst_ratio: f64,
}

/// The planned speed of a flow's path, Gbit/s: its slowest cable, the
/// NIC cables of both ends included.
pub fn path_gbps(lab: &Lab, f: &Flow) -> u32 {
    let cable = |s: usize, p: u32| {
        lab.cables
            .iter()
            .find(|c| (c.a == s && c.a_port == p) || (c.b == s && c.b_port == p))
            .map_or(u32::MAX, |c| c.gbps)
    };
    f.path
        .iter()
        .map(|&(s, p)| cable(s, p))
        .chain([lab.hosts[f.src].gbps, lab.hosts[f.dst].gbps])
        .min()
        .unwrap_or(0)
}

/// The report of a burn-in: every flow of `rounds` with the rate its
/// receiver measured (`rates[round][flow]`, kbit/s; `None` when the flow
/// did not run) beside `expected` (kbit/s), and the cables every flow of
/// one of whose directions was below `threshold` of its expected rate.
pub fn report(
    lab: &Lab,
    name: &str,
    rounds: &[Vec<Flow>],
    rates: &[Vec<Option<u64>>],
    expected: &dyn Fn(&Flow) -> u64,
    seconds: f64,
    threshold: f64,
) -> BurnIn {
    let label = |&(s, p): &DirLink| -> String {
        let peer = lab.switches[s]
            .routed_ports
            .iter()
            .find(|r| r.port == p)
            .map_or("?", |r| lab.switches[r.peer].name.as_str());
        format!("{}->{}", lab.switches[s].name, peer)
    };
    let mut flows = Vec::new();
    for (r, (round, got)) in rounds.iter().zip(rates).enumerate() {
        for (f, kbit) in round.iter().zip(got) {
            let Some(kbit) = *kbit else { continue };
            let expected = expected(f);
            let ratio = if expected > 0 {
                kbit as f64 / expected as f64
            } else {
                0.0
            };
            flows.push(Measured {
                round: r,
                src: lab.hosts[f.src].id.clone(),
                dst: lab.hosts[f.dst].id.clone(),
                links: f.path.iter().map(label).collect(),
                expected_kbit: expected,
                measured_kbit: kbit,
                ratio,
                slow: ratio < threshold,
            });
        }
    }
    // A link is named when every flow over it was slow.
    let mut verdict: BTreeMap<String, (bool, f64)> = BTreeMap::new();
    for f in &flows {
        for l in &f.links {
            let e = verdict.entry(l.clone()).or_insert((true, f64::INFINITY));
            e.0 &= f.slow;
            e.1 = e.1.min(f.ratio);
        }
    }
    let mut by_cable: BTreeMap<String, SlowCable> = BTreeMap::new();
    for cable in &lab.cables {
        let (a, b) = (&lab.switches[cable.a].name, &lab.switches[cable.b].name);
        let name = format!("{a}-{b}");
        for dirn in [format!("{a}->{b}"), format!("{b}->{a}")] {
            if let Some(&(true, ratio)) = verdict.get(&dirn) {
                let e = by_cable.entry(name.clone()).or_insert(SlowCable {
                    cable: name.clone(),
                    directions: Vec::new(),
                    worst_ratio: f64::INFINITY,
                });
                e.directions.push(dirn);
                e.worst_ratio = e.worst_ratio.min(ratio);
            }
        }
    }
    BurnIn {
        fabric: name.to_string(),
        seconds,
        threshold,
        links: verdict.len(),
        rounds: rounds.len(),
        flows,
        slow_cables: by_cable.into_values().collect(),
    }
}

/// The burn-in as people read it.
pub fn render(b: &BurnIn) -> String {
    use std::fmt::Write as _;

    use crate::text::Table;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: burn-in of {} directed inter-switch links in {} rounds, {} s per flow, slow below {:.0} % of the expected rate",
        b.fabric,
        b.links,
        b.rounds,
        b.seconds,
        b.threshold * 100.0
    );
    let mut t = Table::new([
        "round",
        "from",
        "to",
        "planned (kbit/s)",
        "measured (kbit/s)",
        "ratio",
        "links",
        "",
    ])
    .right(&[0, 3, 4, 5]);
    for f in &b.flows {
        t.row([
            f.round.to_string(),
            f.src.clone(),
            f.dst.clone(),
            f.expected_kbit.to_string(),
            f.measured_kbit.to_string(),
            format!("{:.2}", f.ratio),
            f.links.join(" "),
            if f.slow { "SLOW" } else { "" }.to_string(),
        ]);
    }
    let _ = write!(s, "\n{}", t.render());
    if b.slow_cables.is_empty() {
        let _ = writeln!(
            s,
            "\nevery link carried at least {:.0} % of its planned rate",
            b.threshold * 100.0
        );
    } else {
        let _ = writeln!(s, "\nslow cables:");
        for c in &b.slow_cables {
            let _ = writeln!(
                s,
                "  {} ({}; worst {:.0} % of planned)",
                c.cable,
                c.directions.join(", "),
                c.worst_ratio * 100.0
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::design;
    use crate::design::shorthand::{Shorthand, bigraph, fat_tree};

    fn lab_of(which: &str) -> Lab {
        let (inv, opts) = match which {
            "bigraph" => bigraph(4, 16, &Shorthand::default()).unwrap(),
            "fat-tree-2" => {
                fat_tree("tiers=2,sub-nodes=16,ports=8", &Shorthand::default()).unwrap()
            }
            _ => fat_tree("tiers=3,ports=4", &Shorthand::default()).unwrap(),
        };
        let plan = design(&inv, &opts).unwrap();
        Lab::of(&plan, "p.json").unwrap()
    }

    #[test]
    fn rounds_load_every_directed_link_with_disjoint_flows() {
        for which in ["bigraph", "fat-tree-2", "fat-tree-3"] {
            let lab = lab_of(which);
            for max in [1, 4, 16, 1000] {
                let rounds = plan_rounds(&lab, max).unwrap();
                let mut covered = BTreeSet::new();
                for round in &rounds {
                    assert!(
                        !round.is_empty() && round.len() <= max,
                        "{which}: {}",
                        round.len()
                    );
                    let mut links = BTreeSet::new();
                    let (mut senders, mut receivers) = (BTreeSet::new(), BTreeSet::new());
                    for f in round {
                        assert!(
                            senders.insert(f.src),
                            "{which}: a host sends twice in a round"
                        );
                        assert!(receivers.insert(f.dst), "{which}: a host receives twice");
                        assert_eq!(lab.hosts[f.src].switch, f.path[0].0);
                        for &l in &f.path {
                            assert!(links.insert(l), "{which}: link {l:?} twice in a round");
                            covered.insert(l);
                        }
                        // The path is connected and ends at the destination.
                        let mut at = lab.hosts[f.src].switch;
                        for &(s, p) in &f.path {
                            assert_eq!(s, at);
                            at = lab.switches[s]
                                .routed_ports
                                .iter()
                                .find(|r| r.port == p)
                                .unwrap()
                                .peer;
                        }
                        assert_eq!(at, lab.hosts[f.dst].switch);
                    }
                }
                assert_eq!(
                    covered.len(),
                    2 * lab.cables.len(),
                    "{which}: a link is never loaded"
                );
            }
        }
    }

    #[test]
    fn a_bigraph_burn_in_crosses_each_cable_once_per_direction() {
        let lab = lab_of("bigraph");
        let rounds = plan_rounds(&lab, 16).unwrap();
        let flows: Vec<&Flow> = rounds.iter().flatten().collect();
        assert_eq!(flows.len(), 2 * lab.cables.len());
        assert!(flows.iter().all(|f| f.path.len() == 1));
        assert_eq!(rounds.len(), 8);
    }
}
