//! Tests of the count by rank: the same per-step loads as routing every flow of every step one at a time.

use proptest::prelude::*;

use super::by_rank::{AccessCount, Pending, RankSide};
use super::{Counting, StepLoad, verify_counted};
use crate::checked::CheckedPlan;
use crate::network::count_tests::last_avoided;
use crate::network::hpn_tests::hpn_plan;
use crate::network::tests::{bigraph_plan, eflops_plan, fat_tree_plan, rail_plan};
use crate::network::{Network, Policy};
use crate::ranks::Algorithm;

/// A plan of each kind: BiGraphs, EFLOPS's split switches, leaf-spines
/// with one and several links per pair, a 3-tier fat-tree, a
/// rail-optimized fabric (whose servers reduce inside) and HPN's two
/// planes.
fn plan_of(kind: usize) -> CheckedPlan {
    match kind {
        0 => bigraph_plan(4, 8),
        1 => bigraph_plan(2, 4),
        2 => eflops_plan(),
        3 => fat_tree_plan("tiers=2,sub-nodes=64,ports=16"),
        4 => fat_tree_plan("tiers=2,sub-nodes=32,ports=16"),
        5 => fat_tree_plan("k=4"),
        6 => rail_plan("sub-nodes=64,rails=4,ports=16"),
        _ => hpn_plan("sub-nodes=128,rails=4,ports=16"),
    }
}

/// Every step's loads with every flow routed on its own and counted as
/// a share of `f64` ([`Counting::PerRoute`]): the reference.
fn walked(net: &Network<'_>, ranks: &[usize], algorithm: Algorithm, seed: u64) -> Vec<StepLoad> {
    let schedule = algorithm.schedule(ranks.len()).unwrap();
    verify_counted(
        net,
        ranks,
        &schedule,
        (seed, Policy::Ecmp),
        Counting::PerRoute,
    )
    .unwrap()
}

/// `count` distinct sub-nodes of `usable`, in an order drawn from `pick`.
fn table(usable: &[usize], count: usize, pick: &[u32]) -> Vec<usize> {
    let mut left = usable.to_vec();
    let mut out = Vec::with_capacity(count);
    for i in 0..count.min(left.len()) {
        let k = pick.get(i).copied().unwrap_or(0) as usize % left.len();
        out.push(left.swap_remove(k));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Flows on ranks in any order, runs of consecutive ranks and ranks
    /// again among them, added a word at a time ([`Pending`]): the
    /// ranks with a flow, the largest count and how many ranks carry it
    /// are those of counting each flow on its own.
    #[test]
    fn pending_words_count_as_each_flow(
        ranks in 1usize..400,
        runs in proptest::collection::vec((any::<u32>(), 0usize..140, any::<bool>()), 0..12),
    ) {
        let mut flows = Vec::new();
        for &(start, len, random) in &runs {
            for i in 0..len {
                let r = if random { start as usize * (i + 7) } else { start as usize + i };
                flows.push(r % ranks);
            }
        }
        let mut count = AccessCount::new(ranks);
        let mut pending = Pending::NONE;
        for &r in &flows {
            pending.add(&mut count, r);
        }
        pending.finish(&mut count);
        let mut each = vec![0usize; ranks];
        for &r in &flows {
            each[r] += 1;
        }
        let top = each.iter().copied().max().unwrap_or(0);
        let max = count.max();
        prop_assert_eq!(max.value, top as f64);
        let carrying = each.iter().filter(|&&c| c == top && top > 0).count();
        prop_assert_eq!(max.count, carrying);
    }

    /// Random tables (any size, any order) on every kind of fabric, whole
    /// and with a switch avoided, under halving-doubling (folded where
    /// the rank count is no power of two) and ring: the proof's loads,
    /// counted by rank where that applies, are the loads of walking every
    /// flow; and the count by rank is taken exactly where it applies.
    #[test]
    fn counting_by_rank_is_counting_by_flow(
        kind in 0usize..8,
        avoided in any::<bool>(),
        ring in any::<bool>(),
        seed in any::<u64>(),
        count in 1usize..200,
        pick in proptest::collection::vec(any::<u32>(), 200),
    ) {
        let plan = plan_of(kind);
        let (net, usable) = last_avoided(&plan, avoided);
        let ranks = table(&usable, count, &pick);
        let algorithm = if ring { Algorithm::Ring } else { Algorithm::Hd };
        let schedule = algorithm.schedule(ranks.len()).unwrap();
        let servers = plan.intra_server_groups();
        let side = RankSide::new(&net, &ranks, servers.as_deref(), Policy::Ecmp, false);
        prop_assert_eq!(side.is_some(), !avoided && kind != 7);
        let got = verify_counted(&net, &ranks, &schedule, (seed, Policy::Ecmp), Counting::PerLink)
            .unwrap();
        prop_assert_eq!(got, walked(&net, &ranks, algorithm, seed));
    }
}

/// Counting by rank is not taken for another policy or a table with two
/// ranks on one NIC.
#[test]
fn counting_by_rank_only_for_ecmp_and_one_rank_a_nic() {
    let plan = bigraph_plan(4, 8);
    let net = Network::new(&plan, plan.source()).unwrap();
    let ranks: Vec<usize> = (0..plan.sub_node_list.len()).collect();
    assert!(RankSide::new(&net, &ranks, None, Policy::Ecmp, false).is_some());
    for policy in [Policy::DModK, Policy::Spray] {
        assert!(RankSide::new(&net, &ranks, None, policy, false).is_none());
    }
    assert!(RankSide::new(&net, &ranks, None, Policy::Ecmp, true).is_none());
}

/// The whole designed BiGraph in HDRM's order and in plan order, the two
/// proofs `verify-ranks --algorithm hdrm` makes: flows between the parts
/// (one hop) and within a part (a choice by the hash, two hops), counted
/// by rank, as walked.
#[test]
fn counting_by_rank_proves_hdrm_and_plan_order() {
    let plan = bigraph_plan(8, 16);
    let net = Network::new(&plan, plan.source()).unwrap();
    for algorithm in [Algorithm::Hdrm, Algorithm::Hd] {
        let table = crate::ranks::rank_table(&plan, algorithm, None).unwrap();
        let schedule = table.schedule().unwrap();
        for seed in [0, 7] {
            let got = verify_counted(
                &net,
                &table.ranks,
                &schedule,
                (seed, Policy::Ecmp),
                Counting::PerLink,
            )
            .unwrap();
            assert!(got.iter().any(|l| l.inter_switch_flows > 0));
            assert_eq!(got, walked(&net, &table.ranks, table.algorithm, seed));
        }
    }
}
