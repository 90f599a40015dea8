//! Tests of rank tables: Algorithm 1, schedules, rank-table checks and the per-step link loads.

use proptest::prelude::*;

use super::*;
use crate::network::tests::{bigraph_plan, eflops_plan, fat_tree_plan, tier_names};
use crate::plan::PortRole;
use crate::ranks::verify::Counting;
use crate::ranks::verify_avoiding;

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
        "ranks: 24 ranks is not a power of two, which halving-doubling needs; use 16 or 32"
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
            let net = Network::new(&plan, plan.source()).unwrap();
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

/// Issue #19: on a non-blocking leaf-spine, halving-doubling in plan
/// order loads no directed link twice under D-mod-K, while the ECMP hash
/// puts 3 or more flows on one spine link in every step that leaves the
/// leaves (3 to 7 over seeds 0 to 2 on these two fabrics; the issue saw 3
/// to 6); spraying spreads each flow so that no link carries more than
/// one flow's worth.
#[test]
fn hd_in_plan_order_on_a_leaf_spine_by_routing_policy() {
    for spec in [
        "tiers=2,sub-nodes=1024,ports=64",
        "tiers=2,sub-nodes=256,ports=32",
    ] {
        let plan = fat_tree_plan(spec);
        let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
        let by =
            |policy: Policy, seed: u64| verify_avoiding(&plan, &table, &[], seed, policy).unwrap();
        let dmodk = by(Policy::DModK, 0);
        assert!(dmodk.iter().all(|l| l.max_load <= 1), "{spec}: {dmodk:?}");
        // The steps that leave the leaves load every directed uplink and
        // downlink once.
        let crossing: Vec<&StepLoad> = dmodk.iter().filter(|l| l.max_load == 1).collect();
        assert!(!crossing.is_empty());
        for l in &crossing {
            assert_eq!(l.max_load_links, 2 * l.inter_switch_flows, "{spec}");
        }
        assert_eq!(by(Policy::DModK, 7), dmodk, "the seed moves nothing");
        for seed in 0..3 {
            let ecmp = by(Policy::Ecmp, seed);
            for (e, d) in ecmp.iter().zip(&dmodk) {
                if d.max_load == 1 {
                    assert!((3..=7).contains(&e.max_load), "{spec} seed {seed}: {e:?}");
                }
            }
        }
        let spray = by(Policy::Spray, 0);
        for (s, d) in spray.iter().zip(&dmodk) {
            let share = s.max_share.unwrap();
            assert!(share <= 1.0 + 1e-9, "{spec}: {s:?}");
            assert_eq!(s.max_load, d.max_load);
        }
    }
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
        "ranks: 48 ranks is not a power of two, which halving-doubling needs; use 32 or 64"
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
    let net = Network::new(&plan, plan.source()).unwrap();
    assert!(verify_schedule(&net, &[0, 1], &halving_doubling(4).unwrap(), 0).is_err());
}

#[test]
fn algorithms_parse_and_print() {
    for a in Algorithm::accepted(Command::Ranks) {
        assert_eq!(Algorithm::parse(a.as_str(), Command::Ranks).unwrap(), a);
    }
    assert_eq!(
        Algorithm::parse("HDRM", Command::Ranks).unwrap(),
        Algorithm::Hdrm
    );
    let e = Algorithm::parse("tree", Command::Ranks)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "algorithm: `tree` is not an algorithm; use hdrm, hd or ring"
    );
    let json = serde_json::to_string(&StepLoad {
        phase: Phase::AllGather,
        step: 2,
        distance: None,
        flows: 4,
        inter_switch_flows: 4,
        intra_server_flows: 0,
        shared_nic_flows: 0,
        max_load: 1,
        max_load_links: 4,
        max_share: None,
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
    port.peer_port = Some("999".into());
    let e = plan.clone().check("p.json").unwrap_err().to_string();
    assert!(e.contains("does not point back to this port"), "{e}");
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let e = Network::new(&plan, plan.source()).unwrap_err().to_string();
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
    let net = Network::new(&plan, plan.source()).unwrap();
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
    let net = Network::avoiding(&plan, plan.source(), &avoid).unwrap();
    let index = plan.switch_index();
    let (s0, s1, l0) = (
        index[spines[0].as_str()],
        index[spines[1].as_str()],
        index[leaves[0].as_str()],
    );
    let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
    let loads = verify_avoiding(&plan, &table, &avoid, 0, crate::network::Policy::Ecmp).unwrap();
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

/// Issue #33: the sub-nodes of every switch read from the network
/// (`members_on`, what the search takes) are those found by name
/// (`members`), in the same order, on every kind of fabric.
#[test]
fn members_from_the_network_are_members_by_name() {
    let plans = [
        bigraph_plan(4, 16),
        eflops_plan(),
        fat_tree_plan("tiers=2,sub-nodes=96,ports=16,oversub=3"),
        fat_tree_plan("k=8"),
        crate::network::tests::rail_plan("sub-nodes=128,rails=4,ports=16"),
        crate::network::hpn_tests::hpn_plan("sub-nodes=128,rails=4,ports=16"),
    ];
    for plan in &plans {
        let net = Network::avoiding(plan, plan.source(), &[]).unwrap();
        let by_name = members(plan).unwrap();
        assert!(by_name.iter().any(|m| m.len() > 1), "{}", plan.name);
        assert_eq!(members_on(&net), by_name, "{}", plan.name);
    }
}

mod fold_rail;

/// Every step's flows, as a proof iterates them ([`Step::flows`], which
/// takes `(i, i ^ d)` at once for halving-doubling over a power of two),
/// are its flows one by one ([`Step::flow`]), for every engine's schedule
/// (its fold and its numbering) of 1 to 70 ranks and at 128, 256 and 1,024.
#[test]
fn a_steps_flows_are_its_flows_one_by_one() {
    let mut counts: Vec<usize> = (1..=70).collect();
    counts.extend([128, 256, 1024]);
    for engine in Engine::ALL {
        for algorithm in [Algorithm::Hd, Algorithm::Ring] {
            for &x in &counts {
                let Ok(schedule) = engine.schedule(algorithm, x) else {
                    continue;
                };
                for step in &schedule.steps {
                    let each: Vec<(usize, usize)> =
                        (0..step.flow_count()).map(|i| step.flow(i)).collect();
                    assert_eq!(
                        step.flows().collect::<Vec<_>>(),
                        each,
                        "{engine} {x} {step:?}"
                    );
                }
            }
        }
    }
}
