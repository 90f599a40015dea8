//! The topology invariants of a cabled graph (planned or as built): BiGraph, 2-tier and 3-tier fat-tree, rail-optimized (the leaf-spine of its rail switches).

use super::*;

/// The topology's structural invariants over a set of links.
pub(super) fn topology_invariants(
    idx: &Index<'_>,
    links: &[(usize, usize)],
    loads: &[usize],
    what: &str,
) -> Vec<Finding> {
    let plan = idx.plan;
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let inv = |object: String, message: String, fix: &str| {
        finding("invariant", object, message, fix, None)
    };

    // Connectivity (of each plane of an HPN plan: the planes share no
    // switch and no link).
    if plan.topology == Topology::Hpn {
        out.extend(hpn_planes(plan, links, what));
    } else if sw.len() > 1 {
        let mut uf = UnionFind::<usize>::new(sw.len());
        for &(a, b) in links {
            uf.union(a, b);
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..sw.len() {
            groups.entry(uf.find(i)).or_default().push(i);
        }
        if groups.len() > 1 {
            let mut parts: Vec<Vec<usize>> = groups.into_values().collect();
            parts.sort_by_key(|g| std::cmp::Reverse(g.len()));
            let small: Vec<String> = parts[1..]
                .iter()
                .flatten()
                .take(8)
                .map(|&i| sw[i].name.to_string())
                .collect();
            out.push(inv(
                format!("{what} fabric"),
                format!(
                    "the switches form {} islands; cut off from the largest: {}{}",
                    parts.len(),
                    small.join(", "),
                    if parts[1..].iter().map(Vec::len).sum::<usize>() > 8 {
                        ", ..."
                    } else {
                        ""
                    }
                ),
                "cable the missing inter-switch links",
            ));
        }
    }

    match plan.topology {
        Topology::BiGraph => {
            let uppers: Vec<usize> = (0..sw.len())
                .filter(|&i| sw[i].part_or_tier == Tier::Upper)
                .collect();
            let lowers: Vec<usize> = (0..sw.len())
                .filter(|&i| sw[i].part_or_tier == Tier::Lower)
                .collect();
            for (i, s) in sw.iter().enumerate() {
                if s.part_or_tier.part().is_none() {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!("a BiGraph switch in tier {}", s.part_or_tier.as_str()),
                        "every BiGraph switch is in the upper or the lower part",
                    ));
                }
                let half = uppers.len().max(lowers.len());
                if loads[i] > half && half > 0 {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!(
                            "{} sub-nodes on one switch, more than N/2 = {half}",
                            loads[i]
                        ),
                        "move sub-nodes to switches with fewer (M <= N/2)",
                    ));
                }
            }
            if uppers.len() != lowers.len() {
                out.push(inv(
                    format!("{what} parts"),
                    format!("{} upper and {} lower switches", uppers.len(), lowers.len()),
                    "both parts have N/2 switches",
                ));
            }
            let pos = |list: &[usize]| -> HashMap<usize, usize> {
                list.iter().enumerate().map(|(k, &i)| (i, k)).collect()
            };
            let (up, lo) = (pos(&uppers), pos(&lowers));
            let mut count = vec![0u32; uppers.len() * lowers.len()];
            for &(a, b) in links {
                let (ta, tb) = (sw[a].part_or_tier, sw[b].part_or_tier);
                if ta == tb {
                    out.push(inv(
                        format!("{} - {}", sw[a].name, sw[b].name),
                        format!("a link inside the {} part", ta.as_str()),
                        "links run only between an upper and a lower switch",
                    ));
                    continue;
                }
                let (u, l) = if ta == Tier::Upper { (a, b) } else { (b, a) };
                if let (Some(&i), Some(&j)) = (up.get(&u), lo.get(&l)) {
                    count[i * lowers.len() + j] += 1;
                }
            }
            for (i, &u) in uppers.iter().enumerate() {
                for (j, &l) in lowers.iter().enumerate() {
                    match count[i * lowers.len() + j] {
                        1 => {}
                        0 => out.push(inv(
                            format!("{} - {}", sw[u].name, sw[l].name),
                            "no link between this upper and lower switch".to_string(),
                            "every upper switch has exactly one link to every lower switch",
                        )),
                        c => out.push(inv(
                            format!("{} - {}", sw[u].name, sw[l].name),
                            format!("{c} links between this upper and lower switch"),
                            "every upper switch has exactly one link to every lower switch",
                        )),
                    }
                }
            }
        }
        Topology::FatTree | Topology::RailOptimized | Topology::Hpn => {
            let three = plan.fat_tree.as_ref().is_some_and(|f| f.tiers == 3);
            for (i, s) in sw.iter().enumerate() {
                let access = if three { Tier::Edge } else { Tier::Leaf };
                if loads[i] > 0 && s.part_or_tier != access {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!(
                            "{} sub-nodes on a {} switch",
                            loads[i],
                            s.part_or_tier.as_str()
                        ),
                        if three {
                            "sub-nodes attach to edge switches only"
                        } else {
                            "sub-nodes attach to leaf switches only"
                        },
                    ));
                }
            }
            if three {
                out.extend(three_tier_invariants(plan, links));
            } else if plan.topology == Topology::Hpn {
                // Each plane is a leaf-spine of its own.
                for plane in 0..2 {
                    let within: Vec<(usize, usize)> = links
                        .iter()
                        .copied()
                        .filter(|&(a, b)| sw[a].plane == Some(plane) && sw[b].plane == Some(plane))
                        .collect();
                    out.extend(two_tier_invariants_in(plan, &within, Some(plane)));
                }
            } else {
                out.extend(two_tier_invariants(plan, links));
            }
        }
    }
    out
}

pub(super) fn two_tier_invariants(plan: &Plan, links: &[(usize, usize)]) -> Vec<Finding> {
    two_tier_invariants_in(plan, links, None)
}

/// The leaf-spine invariants over the switches of `plane` (every switch
/// when `None`).
fn two_tier_invariants_in(
    plan: &Plan,
    links: &[(usize, usize)],
    plane: Option<usize>,
) -> Vec<Finding> {
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let leaves: Vec<usize> = (0..sw.len())
        .filter(|&i| sw[i].part_or_tier == Tier::Leaf && sw[i].plane == plane)
        .collect();
    let spines: Vec<usize> = (0..sw.len())
        .filter(|&i| sw[i].part_or_tier == Tier::Spine && sw[i].plane == plane)
        .collect();
    let w = plan.fat_tree.as_ref().map_or(1, |f| f.links_per_leaf_spine) as u32;
    let lpos: HashMap<usize, usize> = leaves.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let spos: HashMap<usize, usize> = spines.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut count = vec![0u32; leaves.len() * spines.len()];
    for &(a, b) in links {
        let (ta, tb) = (sw[a].part_or_tier, sw[b].part_or_tier);
        match (lpos.get(&a), spos.get(&b), lpos.get(&b), spos.get(&a)) {
            (Some(&l), Some(&s), _, _) | (_, _, Some(&l), Some(&s)) => {
                count[l * spines.len() + s] += 1
            }
            _ => out.push(finding(
                "invariant",
                format!("{} - {}", sw[a].name, sw[b].name),
                format!("a {}-{} link", ta.as_str(), tb.as_str()),
                "in a leaf-spine fabric links run only between a leaf and a spine",
                None,
            )),
        }
    }
    for (i, &l) in leaves.iter().enumerate() {
        for (j, &s) in spines.iter().enumerate() {
            let c = count[i * spines.len() + j];
            if c != w {
                out.push(finding(
                    "invariant",
                    format!("{} - {}", sw[l].name, sw[s].name),
                    format!("{c} links between this leaf and spine, the design has {w}"),
                    "every leaf has the same number of links to every spine",
                    None,
                ));
            }
        }
    }
    out
}

pub(super) fn three_tier_invariants(plan: &Plan, links: &[(usize, usize)]) -> Vec<Finding> {
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let k = plan.fat_tree.as_ref().and_then(|f| f.k).unwrap_or(0) as usize;
    let h = k / 2;
    let mut edge_agg: HashMap<(usize, usize), u32> = HashMap::default();
    let mut core_pod: HashMap<(usize, usize), u32> = HashMap::default();
    let mut agg_cores = vec![0usize; sw.len()];
    let bad = |a: usize, b: usize, why: String| {
        finding(
            "invariant",
            format!("{} - {}", sw[a].name, sw[b].name),
            why,
            "a k-ary fat-tree links edges to the aggregation switches of their pod, and every aggregation switch to k/2 cores",
            None,
        )
    };
    for &(a, b) in links {
        let (x, y) = if sw[a].part_or_tier <= sw[b].part_or_tier {
            (a, b)
        } else {
            (b, a)
        };
        match (sw[x].part_or_tier, sw[y].part_or_tier) {
            (Tier::Edge, Tier::Aggregation) => {
                if sw[x].pod != sw[y].pod {
                    out.push(bad(
                        x,
                        y,
                        "an edge linked to an aggregation switch of another pod".to_string(),
                    ));
                } else {
                    *edge_agg.entry((x, y)).or_default() += 1;
                }
            }
            (Tier::Aggregation, Tier::Core) => {
                agg_cores[x] += 1;
                *core_pod
                    .entry((y, sw[x].pod.unwrap_or(usize::MAX)))
                    .or_default() += 1;
            }
            (ta, tb) => out.push(bad(x, y, format!("a {}-{} link", ta.as_str(), tb.as_str()))),
        }
    }
    let pods: Vec<usize> = {
        let mut p: Vec<usize> = sw.iter().filter_map(|s| s.pod).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    for e in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Edge) {
        for a in (0..sw.len())
            .filter(|&i| sw[i].part_or_tier == Tier::Aggregation && sw[i].pod == sw[e].pod)
        {
            let c = edge_agg.get(&(e, a)).copied().unwrap_or(0);
            if c != 1 {
                out.push(bad(e, a, format!("{c} links between an edge and an aggregation switch of its pod, the design has 1")));
            }
        }
    }
    for a in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Aggregation) {
        if agg_cores[a] != h {
            out.push(finding(
                "invariant",
                format!("switch {}", sw[a].name),
                format!("{} core links, the design has k/2 = {h}", agg_cores[a]),
                "link every aggregation switch to k/2 cores",
                None,
            ));
        }
    }
    for c in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Core) {
        for &p in &pods {
            let n = core_pod.get(&(c, p)).copied().unwrap_or(0);
            if n != 1 {
                out.push(finding(
                    "invariant",
                    format!("switch {}", sw[c].name),
                    format!("{n} links to pod {p}, the design has 1"),
                    "link every core to exactly one aggregation switch of every pod",
                    None,
                ));
            }
        }
    }
    out
}

/// An HPN plan's planes: no link joins two planes, and the switches of
/// each plane form one island.
fn hpn_planes(plan: &Plan, links: &[(usize, usize)], what: &str) -> Vec<Finding> {
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    for &(a, b) in links {
        if sw[a].plane != sw[b].plane {
            out.push(finding(
                "invariant",
                format!("{} - {}", sw[a].name, sw[b].name),
                "a link between the two planes of an HPN fabric".to_string(),
                "the planes share no link: cable every switch only to switches of its own plane",
                None,
            ));
        }
    }
    let mut uf = UnionFind::<usize>::new(sw.len());
    for &(a, b) in links {
        uf.union(a, b);
    }
    for plane in 0..2 {
        let members: Vec<usize> = (0..sw.len())
            .filter(|&i| sw[i].plane == Some(plane))
            .collect();
        let Some(&first) = members.first() else {
            continue;
        };
        let root = uf.find(first);
        let apart: Vec<String> = members
            .iter()
            .filter(|&&i| uf.find(i) != root)
            .take(8)
            .map(|&i| sw[i].name.to_string())
            .collect();
        if !apart.is_empty() {
            out.push(finding(
                "invariant",
                format!("{what} fabric plane {plane}"),
                format!(
                    "the plane's switches form more than one island; cut off from {}: {}",
                    sw[first].name,
                    apart.join(", ")
                ),
                "cable the missing inter-switch links",
                None,
            ));
        }
    }
    out
}
