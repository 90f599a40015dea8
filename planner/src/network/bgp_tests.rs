//! BGP installs what the static tables route: for every switch and every other switch's subnet, the predicted ECMP next hops equal `Network::next_hops`.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use super::*;
use crate::checked::CheckedPlan;
use crate::network::tests::{bgp, bigraph_plan, eflops_plan, fat_tree_plan};

/// Per plan switch, the static routes of the model (from
/// [`Network::table`](crate::network::Network::table)) as installed routes.
fn static_routes(plan: &CheckedPlan) -> Vec<Installed> {
    let m = Model::build(plan, plan.source()).unwrap();
    m.domains
        .iter()
        .map(|d| {
            d.routes
                .iter()
                .map(|r| {
                    let hops: BTreeSet<Ipv4Addr> = r
                        .next_hops
                        .iter()
                        .map(|&h| Ipv4Addr::from(m.links[h].to_addr))
                        .collect();
                    (r.prefix, hops)
                })
                .collect()
        })
        .collect()
}

#[test]
fn bgp_installs_the_static_tables() {
    for (what, plan) in [
        ("eflops-4x16", eflops_plan()),
        ("bigraph 2x4", bigraph_plan(2, 4)),
        ("bigraph 4x8", bigraph_plan(4, 8)),
        ("2-tier", fat_tree_plan("tiers=2,sub-nodes=64,ports=32")),
        (
            "2-tier 3:1",
            fat_tree_plan("tiers=2,sub-nodes=96,ports=16,oversubscription=3"),
        ),
        ("3-tier k=4", fat_tree_plan("k=4")),
        ("3-tier k=6", fat_tree_plan("k=6")),
    ] {
        let plan = bgp(&plan);
        let model = Bgp::new(&plan, plan.source()).unwrap();
        let expected = static_routes(&plan);
        let got = model.installed();
        assert_eq!(got.len(), expected.len(), "{what}");
        let mut routes = 0;
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "{what}: {}", plan.switch_list[i].name);
            routes += e.len();
        }
        assert!(routes > 0, "{what}: no routes at all");
    }
}

#[test]
fn every_cable_is_one_session_each_way_with_unique_asns() {
    let plan = bgp(&eflops_plan());
    let model = Bgp::new(&plan, plan.source()).unwrap();
    let asns: BTreeSet<u32> = model.speakers.iter().map(|s| s.asn).collect();
    assert_eq!(asns.len(), plan.switch_list.len());
    let sessions: usize = model.speakers.iter().map(|s| s.sessions.len()).sum();
    assert_eq!(sessions, 2 * plan.links);
    for (i, s) in model.speakers.iter().enumerate() {
        for x in &s.sessions {
            let back = model.speakers[x.peer_switch]
                .sessions
                .iter()
                .find(|y| y.port == x.peer_port)
                .unwrap();
            assert_eq!((back.local, back.peer), (x.peer, x.local));
            assert_eq!(back.peer_asn, s.asn);
            assert_eq!(back.peer_switch, i);
        }
        // The halves of a split switch are speakers of one device in
        // different VRFs.
        assert_eq!(s.router_id, s.sessions.iter().map(|x| x.local).min());
    }
    let sw01: Vec<&str> = model
        .speakers_of(model.speakers[0].device)
        .map(|(_, s)| s.vrf.as_str())
        .collect();
    assert_eq!(sw01.len(), 2);
    assert_ne!(sw01[0], sw01[1]);
}

/// A cut cable changes what BGP installs the way shortest paths do: the
/// prediction is a computation, not a copy of the tables.
#[test]
fn a_missing_session_is_routed_around() {
    let plan = bgp(&bigraph_plan(2, 4));
    let mut model = Bgp::new(&plan, plan.source()).unwrap();
    let before = model.installed_at(0);
    // Drop the first session of switch 0 (both directions).
    let cut = model.speakers[0].sessions.remove(0);
    model.speakers[cut.peer_switch]
        .sessions
        .retain(|s| s.peer_port != cut.port || s.peer_switch != 0);
    let after = model.installed_at(0);
    let peer_prefixes = &model.speakers[cut.peer_switch].announced;
    for p in peer_prefixes {
        assert!(before[p].contains(&cut.peer));
        assert!(!after[p].contains(&cut.peer));
        assert!(!after[p].is_empty(), "a detour remains");
    }
}
