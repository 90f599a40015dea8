//! Tests of the route graph a checked plan keeps: the load check's graph
//! is the graph [`RouteGraph::build`] gives the plan, every network taken
//! from the checked plan routes on it, and errors still name the file.

use proptest::prelude::*;

use super::*;
use crate::network::hpn_tests::hpn_plan;
use crate::network::tests::{bigraph_plan, eflops_plan, fat_tree_plan, rail_plan};

/// `plan` (designed, so its graph is not built yet) checked again as a
/// file is at load: the check's own graph kept beside it.
fn loaded(plan: CheckedPlan) -> CheckedPlan {
    plan.into_plan().check("loaded.json").unwrap()
}

/// The graph `plan` keeps equals one built afresh from its plan, and
/// every network taken from it routes on that very graph.
fn holds_its_own_graph(plan: &CheckedPlan, what: &str) {
    let kept = Arc::clone(
        plan.kept_graph()
            .unwrap_or_else(|| panic!("{what}: the check kept no route graph")),
    );
    let fresh = RouteGraph::build(plan).unwrap();
    assert!(
        *kept == fresh,
        "{what}: the kept graph differs from a fresh one"
    );
    let net = plan.network().unwrap();
    assert!(Arc::ptr_eq(net.graph(), &kept), "{what}: built again");
    assert_eq!(net.source(), "loaded.json");
    assert!(std::ptr::eq(net.plan(), plan.plan()));
    let avoiding = plan.network_avoiding(&[]).unwrap();
    assert!(Arc::ptr_eq(avoiding.graph(), &kept), "{what}: built again");
}

/// Every link of a network taken from the checked plan is the link
/// [`Network::new`] gives, and so is every forwarding table entry.
fn routes_as_built_afresh(plan: &CheckedPlan, what: &str) {
    let cached = plan.network().unwrap();
    let fresh = Network::new(plan, plan.source()).unwrap();
    assert_eq!(cached.link_count(), fresh.link_count(), "{what}");
    for id in 0..fresh.link_count() {
        assert_eq!(cached.link(id), fresh.link(id), "{what}: link {id}");
    }
    let switches = fresh.switch_count();
    for a in 0..switches {
        for b in 0..switches {
            assert_eq!(cached.table(a, b), fresh.table(a, b), "{what}: {a} -> {b}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// An M x N BiGraph of any size the designer takes (M up to N/2)
    /// keeps, once checked, the graph built afresh from it.
    #[test]
    fn the_checked_bigraph_keeps_its_own_route_graph(half in 1usize..=6, m_pick in 0usize..6) {
        let n = 2 * half;
        let m = 1 + m_pick % half;
        let plan = loaded(bigraph_plan(m, n));
        let what = format!("BiGraph {m}x{n}");
        holds_its_own_graph(&plan, &what);
        routes_as_built_afresh(&plan, &what);
    }

    /// A 2-tier leaf-spine of any size keeps its own graph too.
    #[test]
    fn the_checked_leaf_spine_keeps_its_own_route_graph(sub_nodes in 8usize..=96) {
        let plan = loaded(fat_tree_plan(&format!("tiers=2,sub-nodes={sub_nodes},ports=16")));
        let what = format!("leaf-spine of {sub_nodes}");
        holds_its_own_graph(&plan, &what);
        routes_as_built_afresh(&plan, &what);
    }
}

/// The other fabrics the designer makes: a 3-tier fat-tree, a
/// rail-optimized fabric, HPN's two planes, and EFLOPS (whose NICs have
/// the inventory's addresses, so the check assembles the render model
/// and keeps the graph that assembly built).
#[test]
fn every_kind_of_checked_plan_keeps_its_own_route_graph() {
    for (what, plan) in [
        ("fat-tree k=4", fat_tree_plan("k=4")),
        ("3-tier", fat_tree_plan("tiers=3,sub-nodes=128,ports=8")),
        ("rail", rail_plan("sub-nodes=64,rails=4,ports=16")),
        ("hpn", hpn_plan("sub-nodes=128,rails=4,ports=16")),
        ("eflops", eflops_plan()),
    ] {
        let plan = loaded(plan);
        holds_its_own_graph(&plan, what);
        routes_as_built_afresh(&plan, what);
    }
}

/// A designed plan has no graph until a network is asked of it; the
/// first builds it, the next reuse it, and a clone shares it.
#[test]
fn a_designed_plan_builds_its_graph_once_on_first_use() {
    let plan = bigraph_plan(2, 4);
    assert!(plan.kept_graph().is_none());
    let first = Arc::clone(plan.network().unwrap().graph());
    assert!(Arc::ptr_eq(plan.kept_graph().unwrap(), &first));
    assert!(Arc::ptr_eq(plan.network().unwrap().graph(), &first));
    let clone = plan.clone();
    assert!(Arc::ptr_eq(clone.network().unwrap().graph(), &first));
    assert_eq!(clone, plan);
    assert_eq!(*first, RouteGraph::build(&plan).unwrap());
}

/// Equality is the plan's and the source's: a plan whose graph is built
/// equals the same plan without it, and not the plan under another name.
#[test]
fn equality_ignores_the_kept_graph() {
    let designed = bigraph_plan(2, 4);
    let with_graph = designed
        .clone()
        .into_plan()
        .check(designed.source())
        .unwrap();
    assert!(with_graph.kept_graph().is_some());
    assert!(designed.kept_graph().is_none());
    assert_eq!(with_graph, designed);
    let renamed = designed.clone().into_plan().check("other.json").unwrap();
    assert_ne!(renamed, designed);
}

/// A plan the graph cannot be built from (a peer cut by hand, taken as
/// checked for the test) is refused by [`CheckedPlan::network`] with
/// the error of [`Network::new`], naming the plan's source; nothing is
/// kept, so a second call gives the error again.
#[test]
fn a_graph_that_cannot_be_built_is_refused_naming_the_file() {
    let mut plan = bigraph_plan(2, 4).into_plan();
    let port = plan.switch_list[0]
        .ports
        .iter_mut()
        .find(|p| p.peer.is_some())
        .unwrap();
    port.peer = Some("no-such-switch".into());
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let cached = plan.network().unwrap_err().to_string();
    let fresh = Network::new(&plan, plan.source()).unwrap_err().to_string();
    assert_eq!(cached, fresh);
    assert!(cached.starts_with("test plan: "), "{cached}");
    assert!(cached.contains("no-such-switch"), "{cached}");
    assert!(plan.kept_graph().is_none());
    assert_eq!(plan.network_avoiding(&[]).unwrap_err().to_string(), fresh);
}
