//! Tests of the route model: routes are connected walks over the forwarding tables, ECMP spreads, avoidance, and the hash.

use crate::error::Error;
use proptest::prelude::*;

use super::*;
use crate::checked::CheckedPlan;
use crate::design::shorthand::{self, Shorthand};
use crate::design::{DesignOptions, design};
use crate::plan::Tier;

pub(crate) fn bigraph_plan(m: usize, n: usize) -> CheckedPlan {
    let (inv, opts) = shorthand::bigraph(m, n, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

pub(crate) fn fat_tree_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

/// The plan with `routing` mode `bgp`, checked again.
pub(crate) fn bgp(plan: &CheckedPlan) -> CheckedPlan {
    let mut p: crate::plan::Plan = (**plan).clone();
    p.routing.mode = crate::routing::RoutingMode::Bgp;
    p.check(plan.source()).unwrap()
}

pub(crate) fn eflops_plan() -> CheckedPlan {
    crate::design::bundled("eflops-4x16", None)
}

/// Follows a route and returns the switches it crosses; panics when two
/// consecutive links do not meet.
fn walk(net: &Network<'_>, src: usize, dst: usize, route: &Route) -> Vec<usize> {
    let links = route.links();
    assert_eq!(links[0], net.up_link(src));
    assert_eq!(*links.last().unwrap(), net.down_link(dst));
    let crossed = crossed_from(net, net.switch_of(src).unwrap(), route);
    assert_eq!(crossed.last().copied(), net.switch_of(dst));
    crossed
}

/// The switches a route's inter-switch links cross from switch `at`;
/// panics when two consecutive links do not meet.
pub(crate) fn crossed_from(net: &Network<'_>, mut at: usize, route: &Route) -> Vec<usize> {
    let mut crossed = vec![at];
    for &l in route.inter_switch() {
        assert!(net.inter_switch_links().contains(&l));
        match net.link(l) {
            Some(Link::InterSwitch { from, to, .. }) => {
                assert_eq!(from, at, "{}", net.describe(l));
                at = to;
                crossed.push(at);
            }
            other => panic!("{other:?} in the middle of a route"),
        }
    }
    crossed
}

#[test]
fn routes_are_connected_paths_of_the_expected_length() {
    // BiGraph: 2 links on one switch, 3 across the parts, 4 within a part.
    for plan in [bigraph_plan(4, 16), eflops_plan()] {
        let net = Network::new(&plan, plan.source()).unwrap();
        for src in 0..plan.sub_nodes {
            for dst in 0..plan.sub_nodes {
                let route = net.route(src, dst, 1, 2).unwrap();
                let crossed = walk(&net, src, dst, &route);
                let (a, b) = (&plan.sub_node_list[src], &plan.sub_node_list[dst]);
                let expected = if a.switch == b.switch {
                    2
                } else if a.part_or_tier != b.part_or_tier {
                    3
                } else {
                    4
                };
                assert_eq!(route.links().len(), expected);
                if expected == 4 {
                    assert_ne!(plan.switch_list[crossed[1]].part_or_tier, a.part_or_tier);
                }
            }
        }
    }
    // 2-tier: 2 or 4 links.
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=32");
    let net = Network::new(&plan, plan.source()).unwrap();
    for src in 0..64 {
        for dst in 0..64 {
            let route = net.route(src, dst, 9, 0).unwrap();
            walk(&net, src, dst, &route);
            let same = plan.sub_node_list[src].switch == plan.sub_node_list[dst].switch;
            assert_eq!(route.links().len(), if same { 2 } else { 4 });
        }
    }
    // 3-tier: 2, 4 or 6 links.
    let plan = fat_tree_plan("k=8");
    let net = Network::new(&plan, plan.source()).unwrap();
    let pod = |i: usize| plan.switch_list[net.switch_of(i).unwrap()].pod;
    for src in 0..plan.sub_nodes {
        for dst in (0..plan.sub_nodes).step_by(3) {
            let route = net.route(src, dst, 4, 4).unwrap();
            let crossed = walk(&net, src, dst, &route);
            let expected = if plan.sub_node_list[src].switch == plan.sub_node_list[dst].switch {
                2
            } else if pod(src) == pod(dst) {
                4
            } else {
                6
            };
            assert_eq!(route.links().len(), expected);
            if expected == 6 {
                assert_eq!(plan.switch_list[crossed[2]].part_or_tier, Tier::Core);
            }
        }
    }
}

pub(crate) fn rail_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::rail_optimized(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

/// Rail-optimized: the same NIC index of two servers of a group meets on
/// its rail switch (2 links, one switch); every other pair goes up to a
/// spine and down (4 links), and the forwarding tables derive from the
/// graph as on a leaf-spine.
#[test]
fn rail_paths_stay_on_their_rail_or_cross_a_spine() {
    // 32 servers of 4 NICs on 16-port switches (8 down, 8 up): 4 groups
    // of 8 servers, 16 rail switches, 8 spines.
    let plan = rail_plan("sub-nodes=128,rails=4,ports=16");
    assert_eq!(
        plan.rail.as_ref().map(|r| (r.rails, r.groups)),
        Some((4, 4))
    );
    let net = Network::new(&plan, plan.source()).unwrap();
    let sw = |i: usize| &plan.switch_list[net.switch_of(i).unwrap()];
    let group = |i: usize| sw(i).pod.unwrap();
    let mut one_hop = 0;
    for src in 0..plan.sub_nodes {
        for dst in 0..plan.sub_nodes {
            if src == dst {
                continue;
            }
            let route = net.route(src, dst, 3, 1).unwrap();
            let crossed = walk(&net, src, dst, &route);
            let (a, b) = (&plan.sub_node_list[src], &plan.sub_node_list[dst]);
            assert_eq!(sw(src).rail, Some(a.index), "{}", a.id);
            if a.index == b.index && group(src) == group(dst) {
                assert_eq!(crossed, vec![net.switch_of(src).unwrap()]);
                one_hop += 1;
            } else {
                assert_eq!(route.links().len(), 4, "{} -> {}", a.id, b.id);
                assert_eq!(plan.switch_list[crossed[1]].part_or_tier, Tier::Spine);
            }
        }
    }
    // 4 groups x 4 rails x 8 servers, each to the 7 others of its rail.
    assert_eq!(one_hop, 4 * 4 * 8 * 7);
    check_flows_follow_tables(&net, 4);
}

/// The ECMP choice spreads flows: on a 4x16 BiGraph, flows within a part
/// use every switch of the other part for some seed.
#[test]
fn ecmp_spreads_flows_within_a_bigraph_part() {
    let plan = bigraph_plan(4, 16);
    let net = Network::new(&plan, plan.source()).unwrap();
    let (src, dst) = (0, 8);
    assert_eq!(
        plan.sub_node_list[src].part_or_tier,
        plan.sub_node_list[dst].part_or_tier
    );
    let middles: std::collections::BTreeSet<usize> = (0..256)
        .map(|seed| walk(&net, src, dst, &net.route(src, dst, 0, seed).unwrap())[1])
        .collect();
    assert_eq!(middles.len(), 8);
}

#[test]
fn hash_is_stable() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    assert_eq!(sub_node_ip(1), 0x0A00_0001);
    for seed in 0..64 {
        assert!(source_port(seed * 7, seed) >= 49152);
    }
    // Pinned values: a change here changes every published ECMP result.
    assert_eq!(source_port(0, 0), 55306);
    assert_eq!(
        ecmp_hash(sub_node_ip(0), sub_node_ip(1), 49152, 3),
        5_836_649_935_068_842_209
    );
}

pub(crate) fn tier_names(plan: &CheckedPlan, tier: Tier) -> Vec<String> {
    plan.switch_list
        .iter()
        .filter(|s| s.part_or_tier == tier)
        .map(|s| s.name.to_string())
        .collect()
}

#[test]
fn avoid_parses_and_names_what_is_wrong() {
    assert_eq!(
        "link:sw01-u-sw02-l".parse::<Avoid>().unwrap(),
        Avoid::Link("sw01-u-sw02-l".to_string())
    );
    assert_eq!(
        " Switch: sw03 ".parse::<Avoid>().unwrap(),
        Avoid::Switch("sw03".to_string())
    );
    for (text, why) in [
        ("sw01", "has no kind"),
        (
            "cable:sw01-sw02",
            "has the kind `cable`, not link or switch",
        ),
        ("switch:", "names no switch"),
        ("link:sw01", "does not name two switches joined by -"),
        ("link:-sw01", "does not name two switches joined by -"),
    ] {
        let e = text.parse::<Avoid>().unwrap_err();
        assert!(matches!(e, Error::Parameter { .. }));
        assert_eq!(
            e.to_string(),
            format!(
                "avoid: `{text}` {why}; write link:SW1-SW2 (the cables between two switches) or switch:SW (a switch and its sub-nodes), with switch names as in the plan"
            )
        );
    }
    let a: Avoid = "link:sw1-sw2".parse().unwrap();
    assert_eq!(a.to_string(), "link:sw1-sw2");
    assert_eq!(serde_json::to_string(&a).unwrap(), "\"link:sw1-sw2\"");

    // Names with `-` in them split where both sides are switches.
    let plan = eflops_plan();
    let index = plan.switch_index();
    for (text, a, b) in [
        ("link:sw01-u-sw02-l", "sw01-u", "sw02-l"),
        ("link:sw02-l-sw01-u", "sw02-l", "sw01-u"),
    ] {
        let t = text.parse::<Avoid>().unwrap().resolve(&plan).unwrap();
        assert_eq!(t, Target::Link(index[a], index[b]));
    }
    let net = Network::avoiding(
        &plan,
        plan.source(),
        &["link:sw02-l-sw01-u".parse().unwrap()],
    )
    .unwrap();
    let dead: Vec<String> = net
        .inter_switch_links()
        .filter(|&l| net.is_dead_link(l))
        .map(|l| net.describe(l))
        .collect();
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(
        dead.iter()
            .any(|d| d.starts_with("sw01-u port") && d.ends_with("-> sw02-l"))
    );
    assert!(
        dead.iter()
            .any(|d| d.starts_with("sw02-l port") && d.ends_with("-> sw01-u"))
    );

    let err = |text: &str| {
        let avoid: Avoid = text.parse().unwrap();
        Network::avoiding(&plan, plan.source(), &[avoid])
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("switch:sw99-u"),
        "avoid: switch sw99-u in `switch:sw99-u` is not in the plan eflops-4x16; use a name from its switch list (such as sw01-u)"
    );
    assert!(
        err("link:sw01-u-sw99-l").starts_with("avoid: switch sw99-l in `link:sw01-u-sw99-l`"),
        "{}",
        err("link:sw01-u-sw99-l")
    );
    assert!(err("link:sw99-u-sw01-l").starts_with("avoid: switch sw99-u in"));
    // A split box's physical name: its halves named, and how to fail it.
    assert_eq!(
        err("switch:sw01"),
        "avoid: sw01 in `switch:sw01` is a physical switch of the plan eflops-4x16 split into the virtual switches sw01-u, sw01-l; name them: switch:sw01-u,switch:sw01-l takes the whole box"
    );
    assert!(
        err("link:sw02-u-sw01").ends_with(
            "is a physical switch of the plan eflops-4x16 split into the virtual switches sw01-u, sw01-l; a cable ends on one of them: name that one"
        ),
        "{}",
        err("link:sw02-u-sw01")
    );
    assert_eq!(
        err("link:sw01-u-sw02-u"),
        "avoid: no link between sw01-u and sw02-u in the plan; name two switches that are cabled to each other"
    );
    assert!(err("link:sw01-u-sw01-u").contains("names the switch sw01-u twice"));
}

/// Routes on a 4x16 BiGraph with a dead cable and a switch down: every
/// route is a connected path that keeps off both; a pair whose direct link
/// is dead takes a 3-hop detour; routes the faults leave alone are the
/// plain ones.
#[test]
fn routes_keep_off_avoided_links_and_switches() {
    let plan = bigraph_plan(4, 16);
    let (u, l) = (
        tier_names(&plan, Tier::Upper),
        tier_names(&plan, Tier::Lower),
    );
    let avoid: Vec<Avoid> = vec![
        format!("link:{}-{}", u[0], l[0]).parse().unwrap(),
        Avoid::Switch(u[5].clone()),
    ];
    let net = Network::avoiding(&plan, plan.source(), &avoid).unwrap();
    let plain = Network::new(&plan, plan.source()).unwrap();
    assert!(net.avoids_anything() && !plain.avoids_anything());
    let index = plan.switch_index();
    let (u0, l0, u5) = (
        index[u[0].as_str()],
        index[l[0].as_str()],
        index[u[5].as_str()],
    );
    assert!(net.is_avoided_switch(u5));
    assert_eq!(net.direct_links(u0, l0), 0);
    assert_eq!(plain.direct_links(u0, l0), 1);
    assert_eq!(net.alive_inter_switch_links(), 128 - 2 - 16);
    let mut detours = 0;
    let mut kept = 0;
    for src in 0..plan.sub_nodes {
        for dst in 0..plan.sub_nodes {
            let (a, b) = (net.switch_of(src).unwrap(), net.switch_of(dst).unwrap());
            if a == u5 || b == u5 {
                let e = net.route(src, dst, 3, 1).unwrap_err().to_string();
                assert!(e.contains("which is avoided"), "{e}");
                continue;
            }
            let route = net.route(src, dst, 3, 1).unwrap();
            let crossed = walk(&net, src, dst, &route);
            assert!(!crossed.contains(&u5));
            assert!(route.inter_switch().iter().all(|&k| !net.is_dead_link(k)));
            let tier = |s: usize| plan.switch_list[s].part_or_tier;
            let touched = |s: usize| s == u0 || s == l0;
            if (a, b) == (u0, l0) || (a, b) == (l0, u0) {
                assert_eq!(route.inter_switch().len(), 3);
                detours += 1;
            } else if tier(a) != tier(b) || (tier(a) == Tier::Upper && !touched(a) && !touched(b)) {
                // Direct links, and routes within the upper part between
                // switches the faults leave alone: as without faults.
                assert_eq!(route, plain.route(src, dst, 3, 1).unwrap());
                kept += 1;
            }
        }
    }
    assert_eq!(detours, 2 * 4 * 4);
    assert!(kept > 2000, "{kept}");
}

/// Every route `route` takes is among `switch_paths`, with and without
/// faults, on a BiGraph, a 2-tier leaf-spine and a 3-tier fat-tree; no
/// path uses a dead link.
#[test]
fn switch_paths_cover_every_route() {
    let check = |net: &Network<'_>, step: usize| {
        let plan = net.plan();
        let mut pairs = 0;
        for src in (0..plan.sub_nodes).step_by(step) {
            for dst in (0..plan.sub_nodes).step_by(step + 1) {
                let (a, b) = (net.switch_of(src).unwrap(), net.switch_of(dst).unwrap());
                if a == b || net.is_avoided_switch(a) || net.is_avoided_switch(b) {
                    continue;
                }
                let paths = net.switch_paths(a, b);
                assert!(
                    paths
                        .iter()
                        .all(|p| p.iter().all(|&k| !net.is_dead_link(k)))
                );
                for seed in 0..3 {
                    let route = net.route(src, dst, 7, seed).unwrap();
                    let hops = route.inter_switch().to_vec();
                    assert!(
                        paths.contains(&hops),
                        "{} -> {}",
                        plan.switch_list[a].name,
                        plan.switch_list[b].name
                    );
                }
                assert!(net.reachable(a, b));
                pairs += 1;
            }
        }
        assert!(pairs > 50);
    };
    on_single_plane_fabrics(&check);
}

/// Runs `check` with a sub-node step on a BiGraph, a leaf-spine and a
/// 3-tier fat-tree, whole and with cables and switches avoided.
fn on_single_plane_fabrics(check: &dyn Fn(&Network<'_>, usize)) {
    let plan = bigraph_plan(4, 16);
    let (u, l) = (
        tier_names(&plan, Tier::Upper),
        tier_names(&plan, Tier::Lower),
    );
    check(&Network::new(&plan, plan.source()).unwrap(), 3);
    let avoid: Vec<Avoid> = vec![
        format!("link:{}-{}", u[0], l[0]).parse().unwrap(),
        format!("link:{}-{}", l[3], u[2]).parse().unwrap(),
        Avoid::Switch(l[6].clone()),
    ];
    check(&Network::avoiding(&plan, plan.source(), &avoid).unwrap(), 3);

    let plan = fat_tree_plan("tiers=2,sub-nodes=128,ports=16");
    let (leaves, spines) = (
        tier_names(&plan, Tier::Leaf),
        tier_names(&plan, Tier::Spine),
    );
    check(&Network::new(&plan, plan.source()).unwrap(), 2);
    let avoid: Vec<Avoid> = vec![
        format!("link:{}-{}", leaves[0], spines[0]).parse().unwrap(),
        Avoid::Switch(spines[1].clone()),
    ];
    check(&Network::avoiding(&plan, plan.source(), &avoid).unwrap(), 2);

    let plan = fat_tree_plan("k=8");
    let cores = tier_names(&plan, Tier::Core);
    let aggs = tier_names(&plan, Tier::Aggregation);
    check(&Network::new(&plan, plan.source()).unwrap(), 5);
    let avoid: Vec<Avoid> = vec![
        Avoid::Switch(cores[0].clone()),
        format!("link:{}-{}", aggs[0], cores[1]).parse().unwrap(),
    ];
    check(&Network::avoiding(&plan, plan.source(), &avoid).unwrap(), 5);
}

/// Routes `flows` flows from every sub-node to one sub-node of every other
/// switch and checks each hop against the forwarding tables: every hop is
/// one of the next hops of the switch it leaves towards the destination's
/// switch, and every next hop of a table that some flow consults is taken
/// by some flow (the ECMP members are all reachable). Returns the number of
/// tables checked.
fn check_flows_follow_tables(net: &Network<'_>, flows: u64) -> usize {
    let plan = net.plan();
    let mut first: Vec<Option<usize>> = vec![None; net.switch_count()];
    for i in 0..plan.sub_node_list.len() {
        let s = net.switch_of(i).unwrap();
        if first[s].is_none() && !net.is_avoided_switch(s) {
            first[s] = Some(i);
        }
    }
    // (switch, destination switch) -> next hops taken.
    let mut used: std::collections::BTreeMap<(usize, usize), std::collections::BTreeSet<usize>> =
        std::collections::BTreeMap::new();
    // (switch, destination switch) -> a flow's ends that crossed it.
    let mut via: std::collections::BTreeMap<(usize, usize), (usize, usize)> =
        std::collections::BTreeMap::new();
    for src in 0..plan.sub_node_list.len() {
        let sa = net.switch_of(src).unwrap();
        if net.is_avoided_switch(sa) {
            continue;
        }
        for (sb, dst) in first.iter().enumerate() {
            let Some(dst) = *dst else { continue };
            for flow in 0..flows {
                let route = match net.route(src, dst, flow, 7) {
                    Ok(r) => r,
                    Err(e) => {
                        assert!(!net.reachable(sa, sb), "{e}");
                        break;
                    }
                };
                let crossed = walk(net, src, dst, &route);
                for (&l, &at) in route.inter_switch().iter().zip(&crossed) {
                    let table = net.table(at, sb);
                    assert!(
                        table.contains(&l),
                        "{} is not a next hop of {} towards {}: {:?}",
                        net.describe(l),
                        plan.switch_list[at].name,
                        plan.switch_list[sb].name,
                        table
                    );
                    used.entry((at, sb)).or_default().insert(l);
                    via.entry((at, sb)).or_insert((src, dst));
                }
            }
        }
    }
    // A table some flows consulted but whose next hops they did not all
    // take: more flows of one pair that crossed it, until every next hop
    // is taken (the hash spreads them; 4096 flows leave no member out
    // unless it is unreachable).
    let incomplete: Vec<((usize, usize), (usize, usize))> = via
        .iter()
        .filter(|&(key, _)| used[key].len() < net.table(key.0, key.1).len())
        .map(|(&key, &pair)| (key, pair))
        .collect();
    for ((at, sb), (src, dst)) in incomplete {
        for flow in flows..flows + 4096 {
            let route = net.route(src, dst, flow, 7).unwrap();
            let crossed = walk(net, src, dst, &route);
            for (&l, &x) in route.inter_switch().iter().zip(&crossed) {
                used.entry((x, sb)).or_default().insert(l);
            }
            if used[&(at, sb)].len() == net.table(at, sb).len() {
                break;
            }
        }
    }
    for (&(at, sb), taken) in &used {
        let table: std::collections::BTreeSet<usize> = net.table(at, sb).into_iter().collect();
        assert_eq!(
            taken, &table,
            "flows from {} towards {} leave some next hops unused",
            plan.switch_list[at].name, plan.switch_list[sb].name
        );
    }
    used.len()
}

/// Every bundled topology small enough to route every pair: the flows
/// follow the tables, with and without something avoided.
#[test]
fn flows_follow_the_tables_on_the_bundled_topologies() {
    for file in ["eflops-4x16", "fat-tree-64"] {
        let inv = crate::design::bundled_inventory(file);
        for opts in [
            DesignOptions::default(),
            DesignOptions {
                topology: crate::plan::Topology::FatTree,
                ..DesignOptions::default()
            },
        ] {
            let Ok(plan) = design(&inv, &opts) else {
                continue;
            };
            let net = Network::new(&plan, plan.source()).unwrap();
            assert!(check_flows_follow_tables(&net, 16) > 0, "{file}");
            let (a, b) = first_cable(&plan);
            let avoid = [Avoid::Link(format!("{a}-{b}"))];
            let net = Network::avoiding(&plan, plan.source(), &avoid).unwrap();
            assert!(
                check_flows_follow_tables(&net, 16) > 0,
                "{file} avoiding {a}-{b}"
            );
        }
    }
}

/// The two switches of the plan's first inter-switch cable.
fn first_cable(plan: &CheckedPlan) -> (String, String) {
    let c = plan
        .cables
        .iter()
        .find(|c| c.kind == crate::plan::CableKind::InterSwitch)
        .unwrap();
    let name = |physical: &str, port: u32| {
        plan.switch_list
            .iter()
            .find(|s| s.physical == physical && s.ports.iter().any(|p| p.port == port))
            .unwrap()
            .name
            .to_string()
    };
    (name(&c.a, c.a_port), name(&c.b, c.b_port.parse().unwrap()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// BiGraphs, 2-tier and 3-tier fat-trees of many shapes, with a cable
    /// and a switch avoided or not: every flow follows the tables.
    #[test]
    fn flows_follow_the_tables(
        kind in 0usize..3,
        size in 0usize..3,
        avoid_cable in any::<bool>(),
        avoid_switch in any::<bool>(),
    ) {
        let plan = match kind {
            0 => bigraph_plan([2, 4, 4][size], [4, 8, 16][size]),
            1 => fat_tree_plan(["tiers=2,sub-nodes=32,ports=16", "tiers=2,sub-nodes=64,ports=32", "tiers=2,sub-nodes=128,ports=16"][size]),
            _ => fat_tree_plan(["k=4", "k=4", "k=6"][size]),
        };
        let mut avoid = Vec::new();
        if avoid_cable {
            let (a, b) = first_cable(&plan);
            avoid.push(Avoid::Link(format!("{a}-{b}")));
        }
        if avoid_switch {
            // A switch without sub-nodes where there is one (a spine or a
            // core), else the last switch.
            let s = plan
                .switch_list
                .iter()
                .rev()
                .find(|s| !plan.sub_node_list.iter().any(|sn| sn.switch == s.name))
                .unwrap_or(plan.switch_list.last().unwrap());
            avoid.push(Avoid::Switch(s.name.to_string()));
        }
        let net = Network::avoiding(&plan, plan.source(), &avoid).unwrap();
        prop_assert!(check_flows_follow_tables(&net, 8) > 0);
    }

    /// The seed's share of the source port taken once gives the port of
    /// the 16 bytes hashed in one pass (seed, then flow id), and a route
    /// walked with it is the route of the seed itself.
    #[test]
    fn port_seed_is_the_source_port(seed in any::<u64>(), flow in any::<u64>()) {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&seed.to_be_bytes());
        bytes[8..].copy_from_slice(&flow.to_be_bytes());
        let one_pass = 0xC000 | (hash::fmix64(fnv1a64(&bytes)) & 0x3FFF) as u16;
        prop_assert_eq!(PortSeed::new(seed).port(flow), one_pass);
        prop_assert_eq!(source_port(flow, seed), one_pass);
        let plan = bigraph_plan(4, 8);
        let net = Network::new(&plan, plan.source()).unwrap();
        let (src, dst) = (0, plan.sub_node_list.len() - 1);
        // Written over a route of another flow, as a proof reuses one.
        let mut out = net.route(dst, src, !flow, seed).unwrap();
        net.route_seeded(src, dst, flow, PortSeed::new(seed), &mut out).unwrap();
        prop_assert_eq!(out, net.route(src, dst, flow, seed).unwrap());
    }
}

/// Without faults the tables are those a switch of each kind needs: every
/// next hop leads on, and a table is empty only towards the switch itself.
#[test]
fn tables_lead_to_the_destination() {
    for plan in [
        bigraph_plan(4, 8),
        fat_tree_plan("tiers=2,sub-nodes=64,ports=32"),
        fat_tree_plan("k=4"),
    ] {
        let net = Network::new(&plan, plan.source()).unwrap();
        let access: Vec<usize> = (0..net.switch_count())
            .filter(|&s| {
                plan.sub_node_list
                    .iter()
                    .any(|sn| sn.switch == plan.switch_list[s].name)
            })
            .collect();
        for x in 0..net.switch_count() {
            for &t in &access {
                let table = net.table(x, t);
                assert_eq!(
                    table.is_empty(),
                    x == t,
                    "{} to {}",
                    plan.switch_list[x].name,
                    plan.switch_list[t].name
                );
                for l in table {
                    let (from, to) = net.ends(l).unwrap();
                    assert_eq!(from, x);
                    assert!(to == t || !net.table(to, t).is_empty());
                }
            }
        }
    }
}

/// Every route of every policy is a connected walk over the tables: D-mod-K
/// gives one route, which is one of the routes `switch_paths` lists;
/// spraying gives exactly those routes.
#[test]
fn policies_walk_the_tables() {
    for plan in [
        bigraph_plan(4, 16),
        fat_tree_plan("tiers=2,sub-nodes=128,ports=32"),
        fat_tree_plan("k=8"),
    ] {
        let net = Network::new(&plan, plan.source()).unwrap();
        let mut out = Vec::new();
        for src in (0..plan.sub_nodes).step_by(5) {
            for dst in (0..plan.sub_nodes).step_by(3) {
                let (a, b) = (net.switch_of(src).unwrap(), net.switch_of(dst).unwrap());
                let paths = net.switch_paths(a, b);
                for policy in Policy::ALL {
                    out.clear();
                    net.flow_routes(policy, src, dst, 7, 3, &mut out).unwrap();
                    for r in &out {
                        walk(&net, src, dst, r);
                        if a != b {
                            assert!(paths.contains(&r.inter_switch().to_vec()));
                        }
                    }
                    let expected = if policy == Policy::Spray && a != b {
                        paths.len()
                    } else {
                        1
                    };
                    assert_eq!(out.len(), expected, "{policy} {src}->{dst}");
                }
            }
        }
    }
}

/// D-mod-K on a k=8 fat-tree (4 uplinks per edge, 4 per aggregation
/// switch): the edge takes uplink `d mod 4`, the aggregation switch uplink
/// `(d / 4) mod 4`, so the 16 destinations of one remote pod's residues
/// reach 16 different cores, and the seed plays no part.
#[test]
fn dmodk_takes_the_destination_digits() {
    let plan = fat_tree_plan("k=8");
    let net = Network::new(&plan, plan.source()).unwrap();
    let pod = |i: usize| plan.switch_list[net.switch_of(i).unwrap()].pod;
    let src = 0;
    let mut cores = std::collections::BTreeSet::new();
    for dst in 0..plan.sub_nodes {
        if pod(dst) == pod(src) {
            continue;
        }
        let route = net.route_dmodk(src, dst).unwrap();
        let crossed = walk(&net, src, dst, &route);
        let ups = net.up_of(crossed[0]);
        assert_eq!(net.id(ups[dst % ups.len()].1), route.inter_switch()[0]);
        let agg_ups = net.up_of(crossed[1]);
        assert_eq!(
            net.id(agg_ups[(dst / ups.len()) % agg_ups.len()].1),
            route.inter_switch()[1]
        );
        cores.insert(crossed[2]);
        let mut again = Vec::new();
        net.flow_routes(Policy::DModK, src, dst, 99, 12345, &mut again)
            .unwrap();
        assert_eq!(again, vec![route]);
    }
    assert_eq!(cores.len(), 16);
}

#[test]
fn policies_parse_by_name() {
    for p in Policy::ALL {
        assert_eq!(p.as_str().parse::<Policy>().unwrap(), p);
        assert_eq!(p.as_str().to_uppercase().parse::<Policy>().unwrap(), p);
    }
    assert_eq!("d-mod-k".parse::<Policy>().unwrap(), Policy::DModK);
    let e = "hash".parse::<Policy>().unwrap_err();
    assert!(matches!(e, Error::Parameter { .. }));
    assert!(e.to_string().contains("use ecmp, dmodk or spray"), "{e}");
}

/// The per-link counts of a sprayed flow ([`Network::flow_spread`]) are
/// those of counting its listed routes ([`Network::flow_routes`] under
/// `spray`): the same links, each on as many routes, the same number of
/// routes; and [`Network::switch_path_counts`] counts
/// [`Network::switch_paths`] for every pair of switches. On every kind of
/// fabric, whole and with cables and switches avoided.
#[test]
fn spread_counts_the_sprayed_routes() {
    let check = |net: &Network<'_>, step: usize| {
        let plan = net.plan();
        let n = net.switch_count();
        let mut counted = Vec::new();
        for a in 0..n {
            for b in 0..n {
                let paths = net.switch_paths(a, b);
                let mut by_link = std::collections::BTreeMap::new();
                for l in paths.iter().flatten() {
                    *by_link.entry(*l).or_insert(0u64) += 1;
                }
                counted.clear();
                let routes = net.switch_path_counts(a, b, &mut counted);
                assert_eq!(routes, paths.len() as u64);
                assert_eq!(counted, by_link.into_iter().collect::<Vec<_>>());
                if a != b && !net.is_avoided_switch(a) && !net.is_avoided_switch(b) {
                    assert_eq!(net.reachable(a, b), !paths.is_empty());
                }
            }
        }
        let mut spread = Spread::default();
        let mut routes = Vec::new();
        let mut flows = 0;
        for src in (0..plan.sub_nodes).step_by(step) {
            for dst in (0..plan.sub_nodes).step_by(step + 2) {
                routes.clear();
                let listed = net.flow_routes(Policy::Spray, src, dst, 9, 1, &mut routes);
                let counted = net.flow_spread(src, dst, 9, 1, &mut spread);
                match (listed, counted) {
                    (Ok(()), Ok(())) => {}
                    (Err(a), Err(b)) => {
                        assert_eq!(a.to_string(), b.to_string());
                        continue;
                    }
                    (a, b) => panic!("{src} -> {dst}: {a:?} but {b:?}"),
                }
                let mut by_link = std::collections::BTreeMap::new();
                for r in &routes {
                    for &l in r.links() {
                        *by_link.entry(l).or_insert(0u64) += 1;
                    }
                }
                let mut links = spread.links.clone();
                links.sort_unstable();
                assert_eq!(links, by_link.into_iter().collect::<Vec<_>>());
                assert_eq!(spread.routes, routes.len() as u64);
                let crosses = routes.iter().any(|r| !r.inter_switch().is_empty());
                assert_eq!(spread.crosses, crosses, "{src} -> {dst}");
                flows += 1;
            }
        }
        assert!(flows > 20);
    };
    on_single_plane_fabrics(&check);
    let plan = eflops_plan();
    check(&Network::new(&plan, plan.source()).unwrap(), 1);
    // Parallel links from the spines down.
    let plan = fat_tree_plan("tiers=2,sub-nodes=96,ports=16,oversub=3");
    check(&Network::new(&plan, plan.source()).unwrap(), 2);
    let plan = rail_plan("sub-nodes=128,rails=4,ports=16");
    check(&Network::new(&plan, plan.source()).unwrap(), 3);
    let spines = tier_names(&plan, Tier::Spine);
    let avoid: Vec<Avoid> = vec![Avoid::Switch(spines[0].clone())];
    check(&Network::avoiding(&plan, plan.source(), &avoid).unwrap(), 3);

    let plan = super::hpn_tests::hpn_plan("sub-nodes=128,rails=4,ports=16");
    check(&Network::new(&plan, plan.source()).unwrap(), 3);
    // A plane-A ToR and a plane-B aggregation switch.
    let first = |plane: usize, tier: Tier| {
        let s = plan
            .switch_list
            .iter()
            .find(|s| s.plane == Some(plane) && s.part_or_tier == tier);
        s.unwrap().name.to_string()
    };
    let (tor, agg) = (first(0, Tier::Leaf), first(1, Tier::Spine));
    let avoid: Vec<Avoid> = vec![Avoid::Switch(tor), Avoid::Switch(agg)];
    check(&Network::avoiding(&plan, plan.source(), &avoid).unwrap(), 3);
}

#[test]
fn found_once_next_hops_equal_the_filtered_ones() {
    // The cache of filtered next hops (tables::HopCache) against the same
    // network without it: every table entry and every route alike.
    let check = |net: &Network<'_>, _: usize| {
        let Some(f) = &net.faults else {
            return;
        };
        let mut bare = net.clone();
        if let Some(g) = bare.faults.as_mut() {
            g.hops = tables::HopCache::default();
        }
        assert!(f.hops.rows.len() > 1);
        let switches = net.plan().switch_list.len();
        for at in 0..switches {
            for to in 0..switches {
                assert_eq!(net.table(at, to), bare.table(at, to), "{at} -> {to}");
            }
        }
        let subs = net.plan().sub_node_list.len();
        for (s, d) in (0..subs).flat_map(|s| (0..subs).map(move |d| (s, d))) {
            let (a, b) = (net.route(s, d, 7, 3), bare.route(s, d, 7, 3));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{s} -> {d}");
        }
    };
    on_single_plane_fabrics(&check);
}

/// The single-link table gives, for every pair of switches, the links of
/// the pair's run: the one link where exactly one joins them, the run
/// itself where none or several do (HPN's parallel links down, say).
#[test]
fn single_links_are_the_runs_of_one() {
    let plans = [
        bigraph_plan(4, 16),
        // Four leaves of 8 uplinks on two spines: parallel links.
        fat_tree_plan("tiers=2,sub-nodes=32,ports=16"),
        fat_tree_plan("k=8"),
        super::hpn_tests::hpn_plan("sub-nodes=128,rails=4,ports=16"),
    ];
    let mut kinds = [0usize; 2];
    for plan in &plans {
        let net = Network::new(plan, plan.source()).unwrap();
        let n = net.switch_count();
        assert_eq!(net.graph.single.len(), n * n);
        for a in 0..n {
            for b in 0..n {
                let run: Vec<u32> = net.links_to(a, b).iter().map(|&(_, k)| k).collect();
                let hops = net.direct_hops(a, b);
                let mut got = Vec::new();
                hops.visit(&net, &mut |k| {
                    got.push(k);
                    true
                });
                assert_eq!(got, run, "{} to {}", a, b);
                assert_eq!(hops.len(&net), run.len());
                for (i, &k) in run.iter().enumerate() {
                    assert_eq!(hops.hop(&net, i), Some((k, b)));
                }
                assert_eq!(hops.hop(&net, run.len()), None);
                match hops {
                    NextHops::Single { .. } => kinds[0] += 1,
                    _ if run.len() > 1 => kinds[1] += 1,
                    _ => {}
                }
            }
        }
    }
    // Both kinds were met: single links, and parallel ones.
    assert!(kinds[0] > 0 && kinds[1] > 0, "{kinds:?}");
}
