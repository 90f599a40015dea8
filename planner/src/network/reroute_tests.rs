//! The routes of a failed fabric from the whole fabric's and the entries listed again equal the full rebuild.

use proptest::prelude::*;

use super::super::hpn_tests::hpn_plan;
use super::super::tests::{bgp, bigraph_plan, eflops_plan, fat_tree_plan, rail_plan};
use super::*;
use crate::checked::CheckedPlan;
use crate::failures::single_failures;
use crate::network::Avoid;
use crate::plan::Tier;

/// Small BiGraphs, 2- and 3-tier fat-trees, rail-optimized and HPN
/// plans: `kind` 0 to 4, `size` 0 or 1.
fn small_plan(kind: usize, size: usize) -> CheckedPlan {
    match kind {
        0 => bigraph_plan([2, 4][size], [4, 8][size]),
        1 => fat_tree_plan(
            [
                "tiers=2,sub-nodes=32,ports=16",
                "tiers=2,sub-nodes=16,ports=8",
            ][size],
        ),
        2 => fat_tree_plan(["k=4", "k=6"][size]),
        3 => rail_plan(
            [
                "sub-nodes=32,rails=4,ports=16",
                "sub-nodes=64,rails=2,ports=16",
            ][size],
        ),
        _ => hpn_plan(
            [
                "sub-nodes=32,rails=2,ports=16",
                "sub-nodes=64,rails=2,ports=16",
            ][size],
        ),
    }
}

/// Each scenario of `scenarios` on `plan`: [`RouteIndex::table`] gives
/// every entry (every switch towards every switch) exactly as
/// `Model::routes_on` lists the failed fabric's routes. Returns the
/// entries listed again and the entries the full rebuild lists, summed
/// over the scenarios.
fn rerouted_equals_full(plan: &CheckedPlan, scenarios: &[Vec<Avoid>]) -> (usize, usize) {
    let m = Model::build(plan, plan.source()).unwrap();
    let net = Network::new(plan, plan.source()).unwrap();
    let index = RouteIndex::new(&m, &net);
    let n = m.domains.len();
    let (mut listed, mut full_entries) = (0, 0);
    for failed in scenarios {
        let f = net.clone().into_avoiding(failed).unwrap();
        let full = m.routes_on(&f).unwrap();
        let rerouted = index.reroute(&m, &f).unwrap();
        listed += rerouted.len();
        for (x, routes) in full.iter().enumerate() {
            for t in 0..n {
                let want = routes
                    .iter()
                    .find(|r| r.target == t)
                    .map(|r| r.next_hops.as_slice());
                full_entries += usize::from(want.is_some());
                assert_eq!(
                    index.table(&m, &f, &rerouted, x, t),
                    want,
                    "{} -> {} with {failed:?} failed on {}",
                    m.name(x),
                    m.name(t),
                    plan.name
                );
            }
        }
    }
    (listed, full_entries)
}

/// Every single failure of the bundled EFLOPS plan (a BiGraph of split
/// boxes), and of every small plan of every topology with static routes
/// and with BGP: the tables equal the full rebuild's, and far fewer
/// entries are listed again than the full rebuild lists.
#[test]
fn rerouted_tables_equal_the_full_rebuild() {
    let mut plans = vec![eflops_plan()];
    for kind in 0..5 {
        for size in 0..2 {
            let plan = small_plan(kind, size);
            plans.push(bgp(&plan));
            plans.push(plan);
        }
    }
    for plan in &plans {
        let singles = single_failures(plan).unwrap();
        let (listed, all) = rerouted_equals_full(plan, &singles);
        assert!(listed * 2 < all, "{}: {listed} of {all}", plan.name);
    }
}

/// On a leaf-spine of `L` leaves: a failed leaf lists no entry again, a
/// failed cable `2L - 1`, a failed spine `L(L - 1)`.
#[test]
fn a_leaf_spine_lists_again_what_the_failure_touches() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=16");
    let m = Model::build(&plan, plan.source()).unwrap();
    let net = Network::new(&plan, plan.source()).unwrap();
    let index = RouteIndex::new(&m, &net);
    let leaves = (plan.switch_list.iter())
        .filter(|s| s.part_or_tier == Tier::Leaf)
        .count();
    assert!(leaves > 2);
    let (leaf, spine) = (first_of(&plan, Tier::Leaf), first_of(&plan, Tier::Spine));
    for (failed, listed) in [
        (Avoid::Switch(leaf.clone()), 0),
        (Avoid::Link(format!("{leaf}-{spine}")), 2 * leaves - 1),
        (Avoid::Switch(spine), leaves * (leaves - 1)),
    ] {
        let f = net
            .clone()
            .into_avoiding(std::slice::from_ref(&failed))
            .unwrap();
        assert_eq!(index.reroute(&m, &f).unwrap().len(), listed, "{failed}");
    }
}

/// The name of the first switch of `tier`.
fn first_of(plan: &CheckedPlan, tier: Tier) -> String {
    (plan.switch_list.iter())
        .find(|s| s.part_or_tier == tier)
        .map(|s| s.name.to_string())
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Two single failures at once, chosen at random on a small plan of
    /// any topology, static or BGP: the tables equal the full rebuild's.
    #[test]
    fn rerouted_tables_equal_the_full_rebuild_for_pairs(
        kind in 0usize..5,
        size in 0usize..2,
        with_bgp in any::<bool>(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let plan = small_plan(kind, size);
        let plan = if with_bgp { bgp(&plan) } else { plan };
        let singles = single_failures(&plan).unwrap();
        let mut both = singles[a.index(singles.len())].clone();
        both.extend(singles[b.index(singles.len())].iter().cloned());
        both.dedup();
        rerouted_equals_full(&plan, &[both]);
    }
}
