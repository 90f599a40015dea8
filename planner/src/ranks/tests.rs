use proptest::prelude::*;

use super::routing::{ecmp_hash, fnv1a64, source_port, sub_node_ip};
use super::*;
use crate::design::shorthand::{self, Shorthand};
use crate::design::{DesignOptions, design};
use crate::inventory::Inventory;
use crate::plan::PortRole;
use crate::ranks::verify_avoiding;

fn bigraph_plan(m: usize, n: usize) -> CheckedPlan {
    let (inv, opts) = shorthand::bigraph(m, n, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn fat_tree_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn eflops_plan() -> CheckedPlan {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/eflops-4x16.toml"
    ))
    .unwrap();
    let inv = Inventory::from_toml(&text, "eflops-4x16.toml").unwrap();
    design(&inv, &DesignOptions::default()).unwrap()
}

/// Where Algorithm 1 puts rank r of X on N switches, worked out by hand
/// (see the proof in `hdrm.rs`): (upper part, switch index in the part,
/// logical group).
fn closed_form(n: usize, x: usize, r: usize) -> (bool, usize, usize) {
    let h = n / 2;
    let (j, b) = if x <= n { (0, r) } else { (r / n, r % n) };
    let i = b / 2;
    let upper = r.count_ones().is_multiple_of(2);
    let pos = if upper { (i + h - j % h) % h } else { i };
    (upper, pos, j)
}

/// (upper part, switch index in the part) of every rank of a mapping.
fn places(m: &Mapping) -> Vec<(bool, usize)> {
    let mut out = vec![(false, usize::MAX); m.ranks()];
    for (part, upper) in [(&m.upper, true), (&m.lower, false)] {
        for (k, here) in part.iter().enumerate() {
            for &r in here {
                assert_eq!(out[r].1, usize::MAX, "rank {r} placed twice");
                out[r] = (upper, k);
            }
        }
    }
    out
}

/// Checks, without a plan, that every halving-doubling pair of X ranks
/// crosses the parts and that no two pairs of a step share an
/// upper-lower switch pair.
fn check_pairs_on_distinct_links(m: &Mapping, x: usize) {
    let at = places(m);
    let h = m.half;
    let mut d = 1;
    while d < x {
        let mut used = vec![false; h * h];
        for r in (0..x).filter(|r| r & d == 0) {
            let (a, b) = (at[r], at[r ^ d]);
            assert_ne!(a.0, b.0, "ranks {r} and {} are in the same part", r ^ d);
            let (u, l) = if a.0 { (a.1, b.1) } else { (b.1, a.1) };
            assert!(
                !used[u * h + l],
                "distance {d}: two pairs on upper {u} - lower {l}"
            );
            used[u * h + l] = true;
        }
        d *= 2;
    }
}

#[test]
fn algorithm1_base_of_eight_ranks() {
    let m = algorithm1(8, 1, 8).unwrap();
    assert_eq!(m.upper, vec![vec![0], vec![3], vec![5], vec![6]]);
    assert_eq!(m.lower, vec![vec![1], vec![2], vec![4], vec![7]]);
}

#[test]
fn algorithm1_with_x_up_to_n_uses_the_base_only() {
    let m = algorithm1(8, 4, 4).unwrap();
    assert_eq!(m.upper, vec![vec![0], vec![3], vec![], vec![]]);
    assert_eq!(m.lower, vec![vec![1], vec![2], vec![], vec![]]);
    let m = algorithm1(8, 4, 1).unwrap();
    assert_eq!(m.upper, vec![vec![0], vec![], vec![], vec![]]);
    assert_eq!(m.ranks(), 1);
    let m = algorithm1(16, 8, 16).unwrap();
    assert_eq!(m.upper[0..4], [vec![0], vec![3], vec![5], vec![6]]);
    assert_eq!(m.upper[4..8], [vec![9], vec![10], vec![12], vec![15]]);
}

/// Fig. 10: 32 sub-nodes on a 4x8 BiGraph. Each upper-lower switch pair
/// carries exactly one connection of the first step.
#[test]
fn algorithm1_fig10_4x8() {
    let m = algorithm1(8, 4, 32).unwrap();
    assert_eq!(
        m.upper,
        vec![
            vec![0, 10, 20, 30],
            vec![3, 12, 23, 24],
            vec![5, 15, 17, 27],
            vec![6, 9, 18, 29],
        ]
    );
    assert_eq!(
        m.lower,
        vec![
            vec![1, 8, 16, 25],
            vec![2, 11, 19, 26],
            vec![4, 13, 21, 28],
            vec![7, 14, 22, 31],
        ]
    );
    let at = places(&m);
    let mut count = [[0; 4]; 4];
    for r in (0..32).step_by(2) {
        let (a, b) = (at[r], at[r + 1]);
        assert_ne!(a.0, b.0);
        let (u, l) = if a.0 { (a.1, b.1) } else { (b.1, a.1) };
        count[u][l] += 1;
    }
    assert_eq!(count, [[1; 4]; 4]);

    // The same on a designed 4x8 plan: all 32 directed links carry one flow.
    let plan = bigraph_plan(4, 8);
    let table = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
    let loads = verify(&plan, &table, 0).unwrap();
    assert_eq!(loads.len(), 10);
    let first = &loads[0];
    assert_eq!(
        (first.phase, first.step, first.distance),
        (Phase::ReduceScatter, 1, Some(1))
    );
    assert_eq!((first.max_load, first.max_load_links), (1, 32));
}

#[test]
fn algorithm1_refuses_what_it_cannot_map() {
    let e = algorithm1(12, 4, 32).unwrap_err().to_string();
    assert!(e.contains("N = 12 switches is not a power of two"), "{e}");
    assert!(e.contains("8 or 16"), "{e}");
    let e = algorithm1(8, 5, 32).unwrap_err().to_string();
    assert!(
        e.contains("M = 5 sub-nodes per switch is not between 1 and N/2 = 4"),
        "{e}"
    );
    let e = algorithm1(8, 4, 24).unwrap_err().to_string();
    assert_eq!(
        e,
        "--ranks: 24 ranks is not a power of two, which halving-doubling needs; use 16 or 32"
    );
    let e = algorithm1(8, 4, 64).unwrap_err().to_string();
    assert!(
        e.contains("64 ranks do not fit on 32 sub-nodes; use at most 32"),
        "{e}"
    );
    assert!(algorithm1(8, 4, 0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Algorithm 1 as written agrees with the closed form of the proof, and
    /// every halving-doubling step gets a distinct link per pair, up to
    /// N = 1024.
    #[test]
    fn algorithm1_matches_the_proof(
        (n, m, x) in (1u32..=10)
            .prop_flat_map(|log_n| {
                let n = 1usize << log_n;
                (Just(n), 1..=n / 2)
            })
            .prop_flat_map(|(n, m)| (Just(n), Just(m), 0..=(m * n).ilog2()))
            .prop_map(|(n, m, log_x)| (n, m, 1usize << log_x))
    ) {
        let mapping = algorithm1(n, m, x).unwrap();
        prop_assert_eq!(mapping.ranks(), x);
        for (part, upper) in [(&mapping.upper, true), (&mapping.lower, false)] {
            for (k, here) in part.iter().enumerate() {
                for (slot, &r) in here.iter().enumerate() {
                    prop_assert_eq!(closed_form(n, x, r), (upper, k, slot));
                }
            }
        }
        check_pairs_on_distinct_links(&mapping, x);
    }
}

/// Every power-of-two N from 2 to 64, every M from 1 to N/2, every
/// power-of-two X up to M x N: the HDRM table is a permutation of distinct
/// sub-nodes and every halving-doubling step loads each directed
/// inter-switch link with exactly one flow or none.
#[test]
fn hdrm_is_congestion_free_on_every_bigraph_up_to_64_switches() {
    let mut cases = 0;
    for log_n in 1..=6 {
        let n = 1usize << log_n;
        for m in 1..=n / 2 {
            let plan = bigraph_plan(m, n);
            let net = Network::new(&plan).unwrap();
            let mut x = 1;
            while x <= m * n {
                let table = rank_table(&plan, Algorithm::Hdrm, Some(x)).unwrap();
                assert_eq!(table.ranks.len(), x);
                check_ranks(&plan, &table.ranks).unwrap();
                let loads =
                    verify_schedule(&net, &table.ranks, &halving_doubling(x).unwrap(), 3).unwrap();
                assert_eq!(loads.len(), 2 * x.ilog2() as usize);
                for l in &loads {
                    let what = format!("{m}x{n}, X={x}: {l:?}");
                    assert_eq!(l.max_load, 1, "{what}");
                    assert_eq!(l.inter_switch_flows, x, "{what}");
                    assert_eq!(l.max_load_links, x, "{what}");
                    assert_eq!(l.access_max_load, 1, "{what}");
                    assert!(!l.access_overloaded, "{what}");
                }
                cases += 1;
                x *= 2;
            }
        }
    }
    assert_eq!(cases, 543);
}

/// With X < M x N the ranks take the first X/N sub-nodes (port order) of
/// every switch, or the first sub-node of the first X/2 switches of each
/// part.
#[test]
fn hdrm_with_fewer_ranks_takes_the_first_sub_nodes() {
    let plan = bigraph_plan(4, 16);
    let table = rank_table(&plan, Algorithm::Hdrm, Some(32)).unwrap();
    let mut per_switch = std::collections::BTreeMap::<&str, Vec<u32>>::new();
    for &s in &table.ranks {
        let sn = &plan.sub_node_list[s];
        per_switch.entry(&sn.switch).or_default().push(sn.port);
    }
    assert_eq!(per_switch.len(), 16);
    for (switch, mut ports) in per_switch {
        ports.sort_unstable();
        let first: Vec<u32> = plan
            .sub_node_list
            .iter()
            .filter(|sn| sn.switch == switch)
            .map(|sn| sn.port)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .take(2)
            .collect();
        assert_eq!(ports, first, "{switch}");
    }
    let table = rank_table(&plan, Algorithm::Hdrm, Some(8)).unwrap();
    let switches: std::collections::BTreeSet<&str> = table
        .ranks
        .iter()
        .map(|&s| plan.sub_node_list[s].switch.as_str())
        .collect();
    let first_four = |tier: Tier| {
        plan.switch_list
            .iter()
            .filter(move |s| s.part_or_tier == tier)
            .take(4)
            .map(|s| s.name.as_str())
    };
    let expected: std::collections::BTreeSet<&str> = first_four(Tier::Upper)
        .chain(first_four(Tier::Lower))
        .collect();
    assert_eq!(switches, expected);
}

/// The plain plan order on a 4x16 BiGraph puts four pairs on one link at
/// distance 4, so the HDRM proof above is not vacuous.
#[test]
fn hd_in_plan_order_congests_a_4x16_bigraph() {
    let plan = bigraph_plan(4, 16);
    let hd = verify(&plan, &rank_table(&plan, Algorithm::Hd, None).unwrap(), 0).unwrap();
    let d4 = hd.iter().find(|l| l.distance == Some(4)).unwrap();
    assert_eq!((d4.max_load, d4.max_load_links), (4, 16));
    assert!(hd.iter().filter(|l| l.max_load > 1).count() >= 4);
    // Within a switch no inter-switch link is used.
    let d1 = &hd[0];
    assert_eq!((d1.inter_switch_flows, d1.max_load), (0, 0));
    let hdrm = verify(&plan, &rank_table(&plan, Algorithm::Hdrm, None).unwrap(), 0).unwrap();
    assert!(hdrm.iter().all(|l| l.max_load == 1));
}

#[test]
fn hdrm_on_the_eflops_deployment() {
    let plan = eflops_plan();
    let table = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
    assert_eq!(table.ranks.len(), 64);
    let part = |r: usize| plan.sub_node_list[table.ranks[r]].part_or_tier;
    assert_eq!(part(0), Tier::Upper);
    assert_eq!(part(1), Tier::Lower);
    assert_eq!(part(3), Tier::Upper);
    let loads = verify(&plan, &table, 1).unwrap();
    assert_eq!(loads.len(), 12);
    assert!(
        loads
            .iter()
            .all(|l| l.max_load == 1 && l.max_load_links == 64)
    );
}

#[test]
fn ring_steps_on_a_bigraph_are_alike() {
    for plan in [bigraph_plan(4, 16), eflops_plan()] {
        let table = rank_table(&plan, Algorithm::Ring, None).unwrap();
        let loads = verify(&plan, &table, 5).unwrap();
        assert_eq!(loads.len(), 2 * 63);
        let shape = |l: &StepLoad| {
            (
                l.flows,
                l.inter_switch_flows,
                l.max_load,
                l.max_load_links,
                l.access_max_load,
                l.access_overloaded,
            )
        };
        assert!(loads.iter().all(|l| shape(l) == shape(&loads[0])));
        assert!(loads.iter().all(|l| l.distance.is_none()));
        assert_eq!(loads[62].step, 63);
        assert_eq!(loads[63].phase, Phase::AllGather);
        assert_eq!(loads[63].step, 1);
        // One flow leaves each switch, to the next switch in plan order.
        assert_eq!(shape(&loads[0]), (64, 16, 1, 16, 1, false));
    }
}

#[test]
fn schedules_have_the_published_shape() {
    let hd = halving_doubling(8).unwrap();
    let d: Vec<_> = hd
        .steps
        .iter()
        .map(|s| (s.phase, s.number, s.distance))
        .collect();
    assert_eq!(
        d,
        vec![
            (Phase::ReduceScatter, 1, Some(1)),
            (Phase::ReduceScatter, 2, Some(2)),
            (Phase::ReduceScatter, 3, Some(4)),
            (Phase::AllGather, 1, Some(4)),
            (Phase::AllGather, 2, Some(2)),
            (Phase::AllGather, 3, Some(1)),
        ]
    );
    let flows: Vec<_> = hd.steps[1].flows().collect();
    assert_eq!(
        flows,
        vec![
            (0, 2),
            (1, 3),
            (2, 0),
            (3, 1),
            (4, 6),
            (5, 7),
            (6, 4),
            (7, 5)
        ]
    );
    assert!(halving_doubling(1).unwrap().steps.is_empty());
    assert!(halving_doubling(6).is_err());
    assert!(halving_doubling(0).is_err());

    let r = ring(4).unwrap();
    assert_eq!(r.steps.len(), 6);
    assert!(r.steps.iter().all(|s| s.distance.is_none()));
    assert_eq!(
        r.steps[5].flows().collect::<Vec<_>>(),
        vec![(0, 1), (1, 2), (2, 3), (3, 0)]
    );
    assert_eq!(
        r.steps
            .iter()
            .map(|s| (s.phase, s.number))
            .collect::<Vec<_>>(),
        vec![
            (Phase::ReduceScatter, 1),
            (Phase::ReduceScatter, 2),
            (Phase::ReduceScatter, 3),
            (Phase::AllGather, 1),
            (Phase::AllGather, 2),
            (Phase::AllGather, 3),
        ]
    );
    assert!(ring(1).unwrap().steps.is_empty());
    assert!(ring(0).is_err());
    assert_eq!(Algorithm::Ring.schedule(5).unwrap().steps.len(), 8);
}

/// On a 2-tier leaf-spine with 8 parallel links per leaf-spine pair, the
/// 16 flows from one leaf to the next share 16 uplinks by hash: some seed
/// collides. The same seed always gives the same loads.
#[test]
fn fat_tree_ecmp_collides_and_is_deterministic() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=32");
    let f = plan.fat_tree.as_ref().unwrap();
    assert_eq!((f.uplinks_per_leaf, f.links_per_leaf_spine), (16, 8));
    let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
    let runs: Vec<Vec<StepLoad>> = (0..16)
        .map(|seed| verify(&plan, &table, seed).unwrap())
        .collect();
    assert!(runs.iter().flatten().any(|l| l.max_load > 1));
    assert_eq!(runs[7], verify(&plan, &table, 7).unwrap());
    // Several seeds give a distribution, not one outcome.
    let worst: std::collections::BTreeSet<(usize, usize)> = runs
        .iter()
        .map(|r| {
            let d16 = r.iter().find(|l| l.distance == Some(16)).unwrap();
            (d16.max_load, d16.max_load_links)
        })
        .collect();
    assert!(worst.len() > 1, "{worst:?}");
    // Access links are never shared: each rank sends and receives once.
    assert!(runs.iter().flatten().all(|l| !l.access_overloaded));

    // A 3-tier k=8 fat-tree routes all its steps too.
    let plan = fat_tree_plan("k=8");
    let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
    let loads = verify(&plan, &table, 0).unwrap();
    assert_eq!(loads.len(), 14);
    assert!(loads.iter().all(|l| l.access_max_load == 1));
    assert_eq!(loads, verify(&plan, &table, 0).unwrap());
}

/// Follows a route and returns the switches it crosses; panics when two
/// consecutive links do not meet.
fn walk(net: &Network<'_>, src: usize, dst: usize, route: &Route) -> Vec<usize> {
    let links = route.links();
    assert_eq!(links[0], net.up_link(src));
    assert_eq!(*links.last().unwrap(), net.down_link(dst));
    let mut at = net.switch_of(src).unwrap();
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
    assert_eq!(Some(at), net.switch_of(dst));
    crossed
}

#[test]
fn routes_are_connected_paths_of_the_expected_length() {
    // BiGraph: 2 links on one switch, 3 across the parts, 4 within a part.
    for plan in [bigraph_plan(4, 16), eflops_plan()] {
        let net = Network::new(&plan).unwrap();
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
    let net = Network::new(&plan).unwrap();
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
    let net = Network::new(&plan).unwrap();
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

/// The ECMP choice spreads flows: on a 4x16 BiGraph, flows within a part
/// use every switch of the other part for some seed.
#[test]
fn ecmp_spreads_flows_within_a_bigraph_part() {
    let plan = bigraph_plan(4, 16);
    let net = Network::new(&plan).unwrap();
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

#[test]
fn hdrm_refuses_plans_it_cannot_map() {
    let e = rank_table(
        &fat_tree_plan("tiers=2,sub-nodes=64,ports=32"),
        Algorithm::Hdrm,
        None,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Infeasible { .. }));
    let e = e.to_string();
    assert!(e.contains("the plan is a 2-tier leaf-spine 1:1"), "{e}");
    assert!(e.contains("use the hd or ring algorithm"), "{e}");

    let e = rank_table(&bigraph_plan(4, 12), Algorithm::Hdrm, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("N = 12 switches is not a power of two"), "{e}");

    // Marked irregular by hand: the load refuses the plan (the header
    // disagrees with the switches); rank_table's own defence stays.
    let mut plan = bigraph_plan(4, 16).into_plan();
    plan.bigraph.as_mut().unwrap().regular = false;
    let e = plan.clone().check("p.json").unwrap_err().to_string();
    assert!(e.contains("p.json: bigraph.regular: says false"), "{e}");
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let e = rank_table(&plan, Algorithm::Hdrm, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the BiGraph 4x16 is irregular"), "{e}");

    // A plan edited by hand: one sub-node fewer, still marked regular.
    let mut plan = bigraph_plan(4, 16).into_plan();
    plan.sub_node_list.pop();
    let e = plan.clone().check("p.json").unwrap_err().to_string();
    assert!(
        e.contains("sub_nodes: says 64 but the lists hold 63"),
        "{e}"
    );
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let e = rank_table(&plan, Algorithm::Hdrm, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("carry 3 to 4 sub-nodes"), "{e}");

    let plan = bigraph_plan(4, 16);
    let e = rank_table(&plan, Algorithm::Hdrm, Some(48)).unwrap_err();
    assert!(matches!(e, Error::Parameter { .. }));
    assert_eq!(
        e.to_string(),
        "--ranks: 48 ranks is not a power of two, which halving-doubling needs; use 32 or 64"
    );
    let e = rank_table(&plan, Algorithm::Hdrm, Some(128))
        .unwrap_err()
        .to_string();
    assert!(e.contains("128 ranks do not fit on 64 sub-nodes"), "{e}");
    assert!(rank_table(&plan, Algorithm::Hd, Some(48)).is_err());
    assert!(rank_table(&plan, Algorithm::Ring, Some(0)).is_err());
    assert!(rank_table(&plan, Algorithm::Ring, Some(65)).is_err());
    assert_eq!(
        rank_table(&plan, Algorithm::Ring, Some(48))
            .unwrap()
            .ranks
            .len(),
        48
    );
}

#[test]
fn bad_rank_tables_name_the_rank() {
    let plan = bigraph_plan(2, 4);
    assert!(check_ranks(&plan, &[0, 1, 2, 3]).is_ok());
    let e = check_ranks(&plan, &[0, 99, 0, 3]).unwrap_err();
    assert!(matches!(
        e,
        Error::Invalid {
            what: "rank table",
            ..
        }
    ));
    let e = e.to_string();
    assert!(e.contains("2 problems in the rank table"), "{e}");
    assert!(
        e.contains("rank 1: sub-node 99 is out of range: the plan has 8 sub-nodes (0 to 7)"),
        "{e}"
    );
    assert!(
        e.contains("rank 2: sub-node 0 (node1/sn0) is also rank 0"),
        "{e}"
    );
    assert!(check_ranks(&plan, &[]).is_err());
    let table = RankTable {
        algorithm: Algorithm::Hd,
        ranks: vec![0, 1, 1, 2],
    };
    assert!(verify(&plan, &table, 0).is_err());
    let net = Network::new(&plan).unwrap();
    assert!(verify_schedule(&net, &[0, 1], &halving_doubling(4).unwrap(), 0).is_err());
}

#[test]
fn algorithms_parse_and_print() {
    for a in Algorithm::ALL {
        assert_eq!(a.as_str().parse::<Algorithm>().unwrap(), a);
    }
    assert_eq!("HDRM".parse::<Algorithm>().unwrap(), Algorithm::Hdrm);
    let e = "tree".parse::<Algorithm>().unwrap_err().to_string();
    assert_eq!(
        e,
        "--algorithm: `tree` is not an algorithm; use hdrm, hd or ring"
    );
    let json = serde_json::to_string(&StepLoad {
        phase: Phase::AllGather,
        step: 2,
        distance: None,
        flows: 4,
        inter_switch_flows: 4,
        max_load: 1,
        max_load_links: 4,
        access_max_load: 1,
        access_max_load_links: 8,
        access_overloaded: false,
    })
    .unwrap();
    assert!(
        json.starts_with("{\"phase\":\"all-gather\",\"step\":2,\"flows\":4"),
        "{json}"
    );
}

#[test]
fn broken_cabling_is_named() {
    // A port whose peer does not point back.
    let mut plan = bigraph_plan(2, 4).into_plan();
    let port = plan.switch_list[0]
        .ports
        .iter_mut()
        .find(|p| p.role == PortRole::InterSwitch)
        .unwrap();
    port.peer_port = Some("999".to_string());
    let e = plan.clone().check("p.json").unwrap_err().to_string();
    assert!(e.contains("does not point back to this port"), "{e}");
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let e = Network::new(&plan).unwrap_err().to_string();
    assert!(e.contains("does not lead back"), "{e}");

    // A missing cable: HDRM needs it, and the error names the switch
    // (the load refuses such a plan; the routing's defence stays).
    let mut plan = bigraph_plan(2, 4).into_plan();
    let (peer, peer_port) = {
        let port = plan.switch_list[0]
            .ports
            .iter_mut()
            .find(|p| p.role == PortRole::InterSwitch)
            .unwrap();
        port.role = PortRole::Free;
        (port.peer.take().unwrap(), port.peer_port.take().unwrap())
    };
    let b = plan.switch_index()[peer.as_str()];
    let back = plan.switch_list[b]
        .ports
        .iter_mut()
        .find(|p| p.port.to_string() == peer_port)
        .unwrap();
    back.role = PortRole::Free;
    back.peer = None;
    back.peer_port = None;
    assert!(plan.clone().check("p.json").is_err());
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let table = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
    let e = verify(&plan, &table, 0).unwrap_err().to_string();
    assert!(
        e.contains(&format!("no route through it: it has no link to {peer}")),
        "{e}"
    );
}

/// Rank table and the full per-step proof for 131,072 sub-nodes (256 x
/// 512). Run with `cargo test --release -p planner --lib ranks::tests::scale
/// -- --ignored --nocapture`.
#[test]
#[ignore = "timing; run in release mode"]
fn scale_131072_sub_nodes() {
    let plan = bigraph_plan(256, 512);
    assert_eq!(plan.sub_nodes, 131_072);
    let start = std::time::Instant::now();
    let table = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
    let t_table = start.elapsed();
    let net = Network::new(&plan).unwrap();
    let t_net = start.elapsed();
    let loads = verify_schedule(&net, &table.ranks, &table.schedule().unwrap(), 0).unwrap();
    let total = start.elapsed();
    assert_eq!(loads.len(), 34);
    assert!(
        loads
            .iter()
            .all(|l| l.max_load == 1 && l.max_load_links == 131_072)
    );
    // Every step routed on its own, without sharing the loads of steps
    // with the same flows.
    let each = std::time::Instant::now();
    for step in &table.schedule().unwrap().steps {
        let load = step_link_loads(&net, &table.ranks, step, 0).unwrap();
        assert_eq!(load[net.inter_switch_links()].iter().max(), Some(&1));
    }
    let each = each.elapsed();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "every step routed on its own: {:.1} ms for 34 steps",
        ms(each)
    );
    println!(
        "131,072 sub-nodes: rank table {:.1} ms, network {:.1} ms, 34 steps {:.1} ms, total {:.1} ms",
        ms(t_table),
        ms(t_net - t_table),
        ms(total - t_net),
        ms(total)
    );
    if !cfg!(debug_assertions) {
        assert!(total.as_secs_f64() < 1.0, "{total:?}");
    }
}

/// The switch names of one part or tier, in plan order.
fn tier_names(plan: &CheckedPlan, tier: Tier) -> Vec<String> {
    plan.switch_list
        .iter()
        .filter(|s| s.part_or_tier == tier)
        .map(|s| s.name.clone())
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
                "--avoid: `{text}` {why}; write link:SW1-SW2 (the cables between two switches) or switch:SW (a switch and its sub-nodes), with switch names as in the plan"
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
    let net = Network::avoiding(&plan, &["link:sw02-l-sw01-u".parse().unwrap()]).unwrap();
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
        Network::avoiding(&plan, &[avoid]).unwrap_err().to_string()
    };
    assert_eq!(
        err("switch:sw99-u"),
        "--avoid: switch sw99-u in `switch:sw99-u` is not in the plan eflops-4x16; use a name from its switch list (such as sw01-u)"
    );
    assert!(
        err("link:sw01-u-sw99-l").starts_with("--avoid: switch sw99-l in `link:sw01-u-sw99-l`"),
        "{}",
        err("link:sw01-u-sw99-l")
    );
    assert!(err("link:sw99-u-sw01-l").starts_with("--avoid: switch sw99-u in"));
    assert_eq!(
        err("link:sw01-u-sw02-u"),
        "--avoid: no link between sw01-u and sw02-u in the plan; name two switches that are cabled to each other"
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
    let net = Network::avoiding(&plan, &avoid).unwrap();
    let plain = Network::new(&plan).unwrap();
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
    let plan = bigraph_plan(4, 16);
    let (u, l) = (
        tier_names(&plan, Tier::Upper),
        tier_names(&plan, Tier::Lower),
    );
    check(&Network::new(&plan).unwrap(), 3);
    let avoid: Vec<Avoid> = vec![
        format!("link:{}-{}", u[0], l[0]).parse().unwrap(),
        format!("link:{}-{}", l[3], u[2]).parse().unwrap(),
        Avoid::Switch(l[6].clone()),
    ];
    check(&Network::avoiding(&plan, &avoid).unwrap(), 3);

    let plan = fat_tree_plan("tiers=2,sub-nodes=128,ports=16");
    let (leaves, spines) = (
        tier_names(&plan, Tier::Leaf),
        tier_names(&plan, Tier::Spine),
    );
    check(&Network::new(&plan).unwrap(), 2);
    let avoid: Vec<Avoid> = vec![
        format!("link:{}-{}", leaves[0], spines[0]).parse().unwrap(),
        Avoid::Switch(spines[1].clone()),
    ];
    check(&Network::avoiding(&plan, &avoid).unwrap(), 2);

    let plan = fat_tree_plan("k=8");
    let cores = tier_names(&plan, Tier::Core);
    let aggs = tier_names(&plan, Tier::Aggregation);
    check(&Network::new(&plan).unwrap(), 5);
    let avoid: Vec<Avoid> = vec![
        Avoid::Switch(cores[0].clone()),
        format!("link:{}-{}", aggs[0], cores[1]).parse().unwrap(),
    ];
    check(&Network::avoiding(&plan, &avoid).unwrap(), 5);
}

/// Fat-tree ECMP skips dead next hops: with a spine down and a leaf's
/// cables to another spine dead, no flow touches them, and flows keep
/// spreading over the spines left.
#[test]
fn fat_tree_ecmp_skips_dead_next_hops() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=128,ports=16");
    let (leaves, spines) = (
        tier_names(&plan, Tier::Leaf),
        tier_names(&plan, Tier::Spine),
    );
    assert!(spines.len() >= 3);
    let avoid: Vec<Avoid> = vec![
        Avoid::Switch(spines[0].clone()),
        format!("link:{}-{}", leaves[0], spines[1]).parse().unwrap(),
    ];
    let net = Network::avoiding(&plan, &avoid).unwrap();
    let index = plan.switch_index();
    let (s0, s1, l0) = (
        index[spines[0].as_str()],
        index[spines[1].as_str()],
        index[leaves[0].as_str()],
    );
    let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
    let loads = verify_avoiding(&plan, &table, &avoid, 0).unwrap();
    assert_eq!(loads.len(), 14);
    let mut middles = std::collections::BTreeSet::new();
    for step in &table.schedule().unwrap().steps {
        let load = step_link_loads(&net, &table.ranks, step, 0).unwrap();
        for k in net.inter_switch_links() {
            if load[k] > 0 {
                let (a, b) = net.ends(k).unwrap();
                assert!(a != s0 && b != s0);
                assert!(!((a, b) == (l0, s1) || (a, b) == (s1, l0)));
                middles.insert(if plan.switch_list[a].part_or_tier == Tier::Spine {
                    a
                } else {
                    b
                });
            }
        }
    }
    assert_eq!(middles.len(), spines.len() - 1);
}

#[test]
fn fold_schedules_have_the_rabenseifner_shape() {
    let s = folded_halving_doubling(6).unwrap();
    assert_eq!((s.ranks, s.fold()), (6, Some((4, 2))));
    let shape: Vec<_> = s
        .steps
        .iter()
        .map(|t| (t.phase, t.number, t.distance, t.flow_count()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (Phase::Fold, 1, Some(4), 2),
            (Phase::ReduceScatter, 1, Some(1), 4),
            (Phase::ReduceScatter, 2, Some(2), 4),
            (Phase::AllGather, 1, Some(2), 4),
            (Phase::AllGather, 2, Some(1), 4),
            (Phase::Unfold, 1, Some(4), 2),
        ]
    );
    assert_eq!(s.steps[0].flows().collect::<Vec<_>>(), vec![(4, 0), (5, 1)]);
    assert_eq!(s.steps[5].flows().collect::<Vec<_>>(), vec![(0, 4), (1, 5)]);
    assert_eq!(
        s.steps[2].flows().collect::<Vec<_>>(),
        vec![(0, 2), (1, 3), (2, 0), (3, 1)]
    );
    assert!(s.steps.iter().all(|t| t.total_ranks() == 6));
    assert_eq!(
        (s.steps[0].peer(4), s.steps[0].peer(1), s.steps[0].peer(3)),
        (0, 5, 3)
    );
    let mut buf = [(0, 0); 2];
    assert_eq!(s.steps[0].flows_of(5, &mut buf), 1);
    assert_eq!(buf[0], (5, 1));
    assert_eq!(s.steps[5].flows_of(1, &mut buf), 1);
    assert_eq!(buf[0], (1, 5));
    assert_eq!(s.steps[0].flows_of(3, &mut buf), 0);
    assert_eq!(s.steps[1].flows_of(5, &mut buf), 0);
    assert_eq!(s.steps[1].flows_of(2, &mut buf), 2);
    assert_eq!(buf, [(2, 3), (3, 2)]);
    assert!(!s.steps[0].same_flows(&s.steps[5]));
    assert!(s.steps[1].same_flows(&s.steps[4]));

    // A power of two is plain halving-doubling; 0 is refused.
    assert_eq!(
        folded_halving_doubling(8).unwrap(),
        halving_doubling(8).unwrap()
    );
    assert!(folded_halving_doubling(8).unwrap().fold().is_none());
    assert!(folded_halving_doubling(0).is_err());
    assert_eq!(Algorithm::Hd.schedule(48).unwrap().steps.len(), 12);
    assert_eq!(Algorithm::Hdrm.schedule(12).unwrap().fold(), Some((8, 4)));

    // What the fold costs.
    for (x, core, extra) in [(6, 4, 2), (12, 8, 4), (48, 32, 16)] {
        let c = FoldCost::of(x).unwrap();
        assert_eq!((c.core, c.extra, c.fold_buffers), (core, extra, 2.0));
        let p = core as f64;
        assert!((c.core_buffers - 2.0 * (p - 1.0) / p).abs() < 1e-12);
        assert!((c.ratio() - p / (p - 1.0)).abs() < 1e-12);
    }
    assert!(FoldCost::of(64).is_none() && FoldCost::of(0).is_none());
    assert_eq!(
        FoldCost::of(6).unwrap().describe(),
        "6 ranks is not a power of two: 2 extra ranks send their whole buffer B to a partner among the 4 core ranks (fold), the core ranks run halving-doubling, and the partners send the result back (unfold); these 2 extra steps move B each, twice the largest halving-doubling step (B/2), and together 2.00B per extra rank, 1.33 times the 1.50B a core rank moves in the 4 halving-doubling steps, so a partner moves about twice as much as in a power-of-two job and large allreduces take about twice as long; a job of 4 ranks would need no fold"
    );
    assert!(
        FoldCost::of(5)
            .unwrap()
            .describe()
            .contains(": 1 extra rank sends its whole buffer")
    );

    // A folded table verifies on a plan: the fold steps are phases of
    // their own.
    let plan = bigraph_plan(4, 16);
    let table = rank_table(&plan, Algorithm::Ring, Some(48)).unwrap();
    let table = RankTable {
        algorithm: Algorithm::Hd,
        ranks: table.ranks,
    };
    let loads = verify(&plan, &table, 0).unwrap();
    assert_eq!(loads.len(), 12);
    assert_eq!((loads[0].phase, loads[0].flows), (Phase::Fold, 16));
    assert_eq!((loads[11].phase, loads[11].flows), (Phase::Unfold, 16));
    assert_eq!(
        serde_json::to_value(&loads[0]).unwrap()["phase"],
        serde_json::json!("fold")
    );
}
