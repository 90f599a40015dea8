//! Fold schedules, rail halving-doubling, sprayed counts and the largest
//! message per step.

use super::*;

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

/// On a rail-optimized plan `hd` fills server by server, NIC by NIC: the
/// first reduce-scatter steps stay inside each server (off the fabric),
/// the steps within a group of servers run per rail over one rail switch
/// with one flow per NIC link and none above it, and only the steps
/// between groups climb to the spines.
#[test]
fn rail_hd_reduces_inside_servers_then_per_rail() {
    // 32 servers of 4 NICs, 4 groups of 8 servers: 32 ranks per group.
    let plan = crate::network::tests::rail_plan("sub-nodes=128,rails=4,ports=16");
    let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
    for (r, &sn) in t.ranks.iter().enumerate() {
        let s = &plan.sub_node_list[sn];
        assert_eq!(
            (s.index, s.server.as_str()),
            (r % 4, plan.servers[r / 4].name.as_str())
        );
    }
    let loads = verify(&plan, &t, 0).unwrap();
    assert_eq!(loads.len(), 14);
    for l in &loads {
        let d = l.distance.unwrap();
        if d < 4 {
            assert_eq!(
                (l.intra_server_flows, l.inter_switch_flows),
                (128, 0),
                "{l:?}"
            );
            assert_eq!((l.max_load, l.access_max_load), (0, 0), "{l:?}");
        } else if d < 32 {
            assert_eq!(
                (l.intra_server_flows, l.inter_switch_flows),
                (0, 0),
                "{l:?}"
            );
            assert_eq!((l.max_load, l.access_max_load), (0, 1), "{l:?}");
        } else {
            assert_eq!(l.inter_switch_flows, 128, "{l:?}");
            assert_eq!(l.access_max_load, 1, "{l:?}");
            assert!(l.max_load >= 1, "{l:?}");
        }
    }
    // Other plans route flows between sub-nodes of one server through the
    // fabric, as before.
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=32");
    let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
    assert!(
        verify(&plan, &t, 0)
            .unwrap()
            .iter()
            .all(|l| l.intra_server_flows == 0)
    );
}

/// HDRM's guarantee carried to rails: on a non-blocking rail-optimized
/// plan the rail order of `hd` loads no directed inter-switch link with
/// more than one flow's worth in any step when flows are sprayed over
/// their equal-cost paths (the ECMP hash alone can collide on the steps
/// between groups).
#[test]
fn rail_hd_sprayed_is_congestion_free() {
    for spec in [
        "sub-nodes=128,rails=4,ports=16",
        "sub-nodes=256,rails=8,ports=32",
        "sub-nodes=512,rails=8,ports=32",
    ] {
        let plan = crate::network::tests::rail_plan(spec);
        let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
        let loads = verify_avoiding(&plan, &t, &[], 0, Policy::Spray).unwrap();
        for l in &loads {
            let share = l.max_share.unwrap();
            assert!(share <= 1.0 + 1e-9, "{spec}: {l:?}");
            assert!(!l.access_overloaded, "{spec}: {l:?}");
        }
        assert!(loads.iter().any(|l| l.inter_switch_flows > 0), "{spec}");
    }
}

/// The counting lower bound on a rail-optimized plan counts groups of
/// servers as switches: 0 for a job inside one group (whose flows need no
/// inter-switch link), at least 1 for one that spans groups, and never
/// above what the rail order reaches.
#[test]
fn rail_lower_bound_counts_groups() {
    // 32 servers of 4 NICs, 4 groups of 8 servers: 32 sub-nodes a group.
    let plan = crate::network::tests::rail_plan("sub-nodes=128,rails=4,ports=16");
    let bound = |x: usize| {
        let request = Request {
            algorithm: Algorithm::Hd,
            ranks: Some(x),
            ..Request::default()
        };
        plan_ranks(&plan, &request).unwrap()
    };
    let inside = bound(32);
    assert_eq!((inside.lower_bound, inside.worst_load), (0, 0));
    assert!(inside.optimal);
    let all = bound(128);
    assert!(all.lower_bound >= 1, "{:?}", all.lower_bound);
    assert!(all.lower_bound <= all.worst_load);
}

/// The loads of one table under every policy, counted as `verify-ranks`
/// counts them (sprayed flows per link, ECMP and D-mod-K flows as `u32`)
/// and with every route listed and counted as an `f64` share (the
/// reference): the same report, every `max_share` to the last bit.
fn check_spray_counts(plan: &CheckedPlan, avoid: &[Avoid], table: &RankTable, seed: u64) {
    let net = Network::avoiding(plan, plan.source(), avoid).unwrap();
    let schedule = table.schedule().unwrap();
    for policy in Policy::ALL {
        let by = |counting: Counting| {
            verify::verify_counted(&net, &table.ranks, &schedule, (seed, policy), counting).unwrap()
        };
        let (per_link, per_route) = (by(Counting::PerLink), by(Counting::PerRoute));
        assert_eq!(
            per_link, per_route,
            "{} avoiding {avoid:?} under {policy:?}",
            plan.name
        );
        assert_eq!(
            serde_json::to_string(&per_link).unwrap(),
            serde_json::to_string(&per_route).unwrap()
        );
    }
}

/// `table` with its ranks shuffled by `seed` (a fixed Fisher-Yates walk),
/// so that flows run between every kind of switch pair.
fn shuffled(table: &RankTable, seed: u64) -> RankTable {
    let mut ranks = table.ranks.clone();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..ranks.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ranks.swap(i, (x % (i as u64 + 1)) as usize);
    }
    RankTable {
        algorithm: table.algorithm,
        ranks,
    }
}

/// Spraying counted per link equals spraying counted route by route on
/// every fabric: BiGraph (the EFLOPS deployment too), 2-tier leaf-spines
/// (one with parallel links), a 3-tier fat-tree, rail-optimized and HPN,
/// whole and with switches and cables avoided (which leaves flows with 3,
/// 7 or 15 paths, shares whose sums round), for halving-doubling, ring
/// and HDRM in plan order and shuffled.
#[test]
fn spray_counted_per_link_equals_every_route_counted() {
    use crate::network::hpn_tests::hpn_plan;
    use crate::network::tests::rail_plan;
    let switch =
        |plan: &CheckedPlan, tier: Tier, i: usize| Avoid::Switch(tier_names(plan, tier)[i].clone());
    let link = |plan: &CheckedPlan, a: (Tier, usize), b: (Tier, usize)| -> Avoid {
        format!(
            "link:{}-{}",
            tier_names(plan, a.0)[a.1],
            tier_names(plan, b.0)[b.1]
        )
        .parse()
        .unwrap()
    };
    let mut cases: Vec<(CheckedPlan, Vec<Avoid>)> = Vec::new();
    let plan = bigraph_plan(4, 16);
    let avoid = vec![link(&plan, (Tier::Upper, 0), (Tier::Lower, 1))];
    cases.push((plan.clone(), Vec::new()));
    cases.push((plan, avoid));
    cases.push((eflops_plan(), Vec::new()));
    for spec in [
        "tiers=2,sub-nodes=256,ports=32",
        "tiers=2,sub-nodes=96,ports=16,oversub=3",
    ] {
        let plan = fat_tree_plan(spec);
        let mut avoid = vec![link(&plan, (Tier::Leaf, 0), (Tier::Spine, 1))];
        if tier_names(&plan, Tier::Spine).len() > 2 {
            avoid.push(switch(&plan, Tier::Spine, 0));
        }
        cases.push((plan.clone(), Vec::new()));
        cases.push((plan, avoid));
    }
    let plan = fat_tree_plan("k=8");
    let avoid = vec![
        switch(&plan, Tier::Core, 0),
        link(&plan, (Tier::Aggregation, 0), (Tier::Core, 1)),
    ];
    cases.push((plan.clone(), Vec::new()));
    cases.push((plan, avoid));
    for spec in [
        "sub-nodes=128,rails=4,ports=16",
        "sub-nodes=512,rails=8,ports=32",
    ] {
        let plan = rail_plan(spec);
        let avoid = vec![switch(&plan, Tier::Spine, 0)];
        cases.extend([(plan.clone(), Vec::new()), (plan, avoid)]);
        let plan = hpn_plan(spec);
        let avoid = vec![switch(&plan, Tier::Leaf, 0), switch(&plan, Tier::Spine, 1)];
        cases.extend([(plan.clone(), Vec::new()), (plan, avoid)]);
    }
    let mut rounded = 0;
    for (plan, avoid) in &cases {
        let bigraph = plan
            .switch_list
            .iter()
            .any(|s| s.part_or_tier == Tier::Upper);
        for algorithm in [Algorithm::Hd, Algorithm::Ring, Algorithm::Hdrm] {
            if algorithm == Algorithm::Hdrm && !bigraph {
                continue;
            }
            // No avoided switch carries a NIC of its own (an HPN ToR
            // leaves the NIC its other port): the plan order stands.
            let ranks = (algorithm == Algorithm::Hd).then(|| {
                let n = plan.sub_node_list.len();
                1 << n.ilog2()
            });
            let table = rank_table(plan, algorithm, ranks).unwrap();
            for (i, t) in [table.clone(), shuffled(&table, 1), shuffled(&table, 2)]
                .iter()
                .enumerate()
            {
                check_spray_counts(plan, avoid, t, i as u64);
            }
        }
        let net = Network::avoiding(plan, plan.source(), avoid).unwrap();
        let n = net.switch_count();
        let mut counted = Vec::new();
        rounded += (0..n)
            .flat_map(|a| (0..n).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                let routes = net.switch_path_counts(a, b, &mut counted);
                routes > 1 && !routes.is_power_of_two()
            })
            .count();
    }
    // Some switch pairs have a number of paths whose shares round.
    assert!(rounded > 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any table on a leaf-spine with any one cable avoided: spraying
    /// counted per link equals counting every route.
    #[test]
    fn spray_counts_agree_on_any_table(shuffle in 0u64..1_000_000, leaf in 0usize..8, spine in 0usize..8, seed in 0u64..4) {
        let plan = fat_tree_plan("tiers=2,sub-nodes=128,ports=16");
        let avoid: Vec<Avoid> = vec![format!(
            "link:{}-{}",
            tier_names(&plan, Tier::Leaf)[leaf],
            tier_names(&plan, Tier::Spine)[spine]
        )
        .parse()
        .unwrap()];
        let table = rank_table(&plan, Algorithm::Hd, None).unwrap();
        check_spray_counts(&plan, &avoid, &shuffled(&table, shuffle), seed);
    }
}

/// Message sizes per step, written out for 12 ranks of 1,000 elements:
/// Open MPI exchanges halves (500), the odd rank sends its reduced half
/// (500), halving-doubling over 8 sends 500, 250, 125 and back, the
/// unfold the whole buffer; the planner's fold sends the whole buffer;
/// a ring of 12 sends ceil(1000/12) = 84 per step.
#[test]
fn largest_message_per_step_follows_each_schedule() {
    use crate::ranks::engine::Engine;
    let sizes = |engine: Engine, algorithm: Algorithm| -> Vec<usize> {
        engine
            .schedule(algorithm, 12)
            .unwrap()
            .steps
            .iter()
            .map(|s| s.largest_message(1000))
            .collect()
    };
    assert_eq!(
        sizes(Engine::OpenMpi, Algorithm::Hd),
        [500, 500, 500, 250, 125, 125, 250, 500, 1000]
    );
    assert_eq!(
        sizes(Engine::Probe, Algorithm::Hd),
        [1000, 500, 250, 125, 125, 250, 500, 1000]
    );
    assert_eq!(sizes(Engine::Mpich, Algorithm::Hd)[0], 1000);
    let ring = sizes(Engine::Gloo, Algorithm::Ring);
    assert_eq!(ring.len(), 22);
    assert!(ring.iter().all(|&m| m == 84), "{ring:?}");
}

/// Issue #33: `verify-ranks --algorithm` takes the proof of the table it
/// just made ([`format::Known::Proven`]) instead of routing it a
/// second time; the report is the one routing it again gives, for every
/// engine (NCCL's ring order included), routing policy, and plans with
/// one and several GPUs per server.
#[test]
fn issue33_a_proven_table_reports_as_one_routed_again() {
    let plans = [
        bigraph_plan(4, 8),
        eflops_plan(),
        fat_tree_plan("tiers=2,sub-nodes=64,ports=16"),
        crate::network::tests::rail_plan("sub-nodes=64,rails=4,ports=16"),
    ];
    let mut checked = 0;
    for plan in &plans {
        for algorithm in [Algorithm::Hdrm, Algorithm::Hd, Algorithm::Ring] {
            for engine in Engine::ALL {
                let request = Request {
                    algorithm,
                    engine,
                    seed: 3,
                    ..Request::default()
                };
                // HDRM's mapping runs on BiGraphs only.
                let Ok(outcome) = plan_gpu_ranks(plan, &request) else {
                    continue;
                };
                let gpus = rank_gpus(plan, &outcome.table.ranks);
                for routing in [Policy::Ecmp, Policy::Spray] {
                    let how = format::Checked {
                        engine,
                        avoid: &[],
                        seed: 3,
                        routing,
                    };
                    let order = || "table".to_string();
                    let asked = || format::VerifyRequest {
                        gpus: Some(&gpus),
                        ..format::VerifyRequest::new(&outcome.table, order(), how)
                    };
                    let again = format::verify_report(plan, asked()).unwrap();
                    let steps = outcome.steps.clone();
                    let proven = format::verify_report(
                        plan,
                        format::VerifyRequest {
                            known: format::Known::Proven { net: None, steps },
                            ..asked()
                        },
                    )
                    .unwrap();
                    let what = format!(
                        "{} on {} for {engine} under {routing}",
                        algorithm.as_str(),
                        plan.name
                    );
                    assert_eq!(proven, again, "{what}");
                    checked += 1;
                }
            }
        }
    }
    // Every plan runs hd and ring under every engine and policy; HDRM
    // runs on the BiGraphs.
    assert!(checked >= 4 * 2 * Engine::ALL.len() * 2, "{checked}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `gpu_at` (what `rank_gpus` asks for every rank) is the `k`-th GPU
    /// of `gpus`, for a NIC with one GPU, none, or several listed.
    #[test]
    fn gpu_at_is_the_listed_gpu(
        index in proptest::option::of(0usize..8),
        indices in proptest::collection::vec(0usize..16, 0..4),
        k in 0usize..6,
    ) {
        let mut sn = bigraph_plan(2, 4).sub_node_list[0].clone();
        sn.gpu_index = index;
        sn.gpu_indices = indices;
        prop_assert_eq!(sn.gpu_at(k), sn.gpus().get(k).copied().flatten());
    }
}
