//! Tests of the canonical BiGraph's tables ([`super::graph::Canonical`]): the next hops, routes and counts read from them are those of the single-link table and the upward rows.

use std::sync::Arc;

use proptest::prelude::*;

use super::count_tests::{plan_of, switch_pairs};
use super::hash::{EcmpPrefix, PortSeed, sub_node_ip};
use super::tables::NextHops;
use super::tests::bigraph_plan;
use super::{CountScratch, Network, Route, RouteGraph};
use crate::checked::CheckedPlan;

/// The network of `plan`, and the same network on its graph without the
/// canonical tables, as a graph that does not follow them is routed.
fn with_and_without(plan: &CheckedPlan) -> (Network<'_>, Network<'_>) {
    let net = Network::new(plan, plan.source()).unwrap();
    let mut graph = (**net.graph()).clone();
    graph.canonical = None;
    let plain = Network::on(plan, plan.source(), Arc::new(graph));
    (net, plain)
}

/// Every next hop of every switch towards every other, read from the
/// canonical tables, is the one of the tables without them, hop for hop;
/// every designed BiGraph has them, and no other fabric.
#[test]
fn canonical_next_hops_are_the_tables_next_hops() {
    let mut canonical = 0;
    for kind in 0..7 {
        let plan = plan_of(kind);
        let (net, plain) = with_and_without(&plan);
        let bigraph = plan.topology == crate::plan::Topology::BiGraph;
        assert_eq!(net.graph().canonical.is_some(), bigraph, "kind {kind}");
        for a in 0..net.switch_count() {
            for b in 0..net.switch_count() {
                let (got, want) = (net.next_hops(a, b), plain.next_hops(a, b));
                canonical += usize::from(matches!(got, NextHops::Part { .. }));
                let what = format!("kind {kind}: {a} -> {b}");
                assert_eq!(net.table(a, b), plain.table(a, b), "{what}");
                assert_eq!(got.len(&net), want.len(&plain), "{what}");
                assert_eq!(got.is_empty(&net), want.is_empty(&plain), "{what}");
                for i in 0..=want.len(&plain) {
                    assert_eq!(got.hop(&net, i), want.hop(&plain, i), "{what}, hop {i}");
                    assert_eq!(got.nth(&net, i), want.nth(&plain, i), "{what}, hop {i}");
                }
            }
        }
    }
    assert!(canonical > 0);
}

/// A BiGraph whose ports are not in the designed order (two inter-switch
/// ports of one switch swapped in its port list) has no canonical tables,
/// and routes as its tables say.
#[test]
fn a_bigraph_out_of_order_is_not_canonical() {
    let mut plan = bigraph_plan(2, 8).into_plan();
    let ports = &mut plan.switch_list[0].ports;
    let inter: Vec<usize> = (0..ports.len())
        .filter(|&i| ports[i].role == crate::plan::PortRole::InterSwitch)
        .collect();
    let (x, y) = (inter[0], inter[1]);
    let (px, py) = (ports[x].port, ports[y].port);
    ports.swap(x, y);
    ports[x].port = px;
    ports[y].port = py;
    // The peers' ports now lead back to the swapped numbers.
    let me = plan.switch_list[0].name.clone();
    for (port, number) in [(x, px), (y, py)] {
        let peer = plan.switch_list[0].ports[port].peer.clone().unwrap();
        let back = plan.switch_list[0].ports[port].peer_port.clone().unwrap();
        let s = plan
            .switch_list
            .iter()
            .position(|s| s.name == peer)
            .unwrap();
        let q = plan.switch_list[s]
            .ports
            .iter_mut()
            .find(|q| q.port.to_string() == back.as_ref() && q.peer.as_ref() == Some(&me))
            .unwrap();
        q.peer_port = Some(number.to_string().into());
    }
    let graph = RouteGraph::build(&plan).unwrap();
    assert!(graph.canonical.is_none());
    let designed = RouteGraph::build(&bigraph_plan(2, 8)).unwrap();
    assert!(designed.canonical.is_some());
}

proptest! {
    /// Random flows on every kind of fabric take the same route with the
    /// canonical tables as without, and count the same between switches.
    #[test]
    fn canonical_tables_route_as_the_tables(
        kind in 0usize..7,
        seed in any::<u64>(),
        picks in proptest::collection::vec((any::<u32>(), any::<u32>(), any::<u64>()), 1..200),
    ) {
        let plan = plan_of(kind);
        let (net, plain) = with_and_without(&plan);
        let n = plan.sub_node_list.len();
        let port = PortSeed::new(seed);
        let (mut a, mut b) = (Route::default(), Route::default());
        let flows: Vec<(usize, usize, u64)> =
            picks.iter().map(|&(s, d, f)| (s as usize % n, d as usize % n, f)).collect();
        for &(s, d, f) in &flows {
            let got = net.route_seeded(s, d, f, port, &mut a).map_err(|e| e.to_string());
            let want = plain.route_seeded(s, d, f, port, &mut b).map_err(|e| e.to_string());
            prop_assert_eq!(got, want);
            prop_assert_eq!(a, b);
        }
        if net.counts_between_switches() {
            let crossing: Vec<(usize, usize, u64)> = flows
                .iter()
                .copied()
                .filter(|&(s, d, _)| net.switch_of(s) != net.switch_of(d))
                .collect();
            let pairs = switch_pairs(&net, &crossing);
            let prefix = |i: usize| {
                let (s, d, f) = crossing[i];
                EcmpPrefix::new(sub_node_ip(s), sub_node_ip(d), port.port(f))
            };
            let (mut got, mut want) = (vec![0u32; net.link_count()], vec![0u32; net.link_count()]);
            prop_assert!(net.count_between(&pairs, prefix, &mut CountScratch::default(), &mut got).is_some());
            prop_assert!(plain.count_between(&pairs, prefix, &mut CountScratch::default(), &mut want).is_some());
            prop_assert_eq!(got, want);
        }
    }
}

/// On every kind of fabric, whole and with a switch avoided, the one link
/// [`Network::cross_links`] names for two switches is the route the walk
/// gives any flow between their sub-nodes: one inter-switch hop, that
/// link; and there are such links only on a designed BiGraph with nothing
/// avoided.
#[test]
fn cross_links_are_the_walked_hop() {
    for kind in 0..7 {
        let plan = plan_of(kind);
        for avoided in [false, true] {
            let (net, _) = super::count_tests::last_avoided(&plan, avoided);
            let Some(cross) = net.cross_links() else {
                assert!(avoided || kind > 1, "kind {kind}");
                continue;
            };
            assert!(!avoided && kind <= 1, "kind {kind}");
            let n = plan.sub_node_list.len();
            let switches = plan.switch_list.len() as u32;
            let mut route = Route::default();
            let mut found = 0;
            for s in 0..n {
                for d in (0..n).step_by(3) {
                    let (a, b) = (net.switch_of(s).unwrap(), net.switch_of(d).unwrap());
                    let Some(l) = cross.link(a as u32, b as u32) else {
                        continue;
                    };
                    found += 1;
                    for seed in [0, 9] {
                        let flow = (s as u64) << 32 | d as u64;
                        (net.route_seeded(s, d, flow, PortSeed::new(seed), &mut route)).unwrap();
                        assert_eq!(route.inter_switch().len(), 1, "{s} -> {d}");
                        assert_eq!(route.links()[1], l, "{s} -> {d}");
                    }
                }
            }
            assert!(found > 0);
            assert_eq!(cross.link(0, switches), None);
            assert_eq!(cross.link(switches, 0), None);
        }
    }
}
