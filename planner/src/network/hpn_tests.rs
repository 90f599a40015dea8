//! Tests of the route model on HPN plans: a flow stays in one plane, the policies pick or split the planes, and one failed ToR leaves the other plane to carry its NICs.

use super::*;
use crate::checked::CheckedPlan;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::Tier;

pub(crate) fn hpn_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::hpn(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

/// The plane a route runs in (from its first link), after checking that
/// its links meet, every switch it crosses is of that plane, and it ends
/// on the destination's NIC port of the same plane.
fn plane_of(net: &Network<'_>, src: usize, dst: usize, route: &Route) -> (usize, Vec<usize>) {
    let plan = net.plan();
    let links = route.links();
    let (plane, sub_node) = match net.link(links[0]) {
        Some(Link::Up { sub_node, port }) => (usize::from(port), sub_node),
        other => panic!("{other:?} starts a route"),
    };
    assert_eq!(sub_node, src);
    assert_eq!(
        net.link(*links.last().unwrap()),
        Some(Link::Down {
            sub_node: dst,
            port: plane as u8
        })
    );
    let crossed = super::tests::crossed_from(net, net.switch_in(plane, src).unwrap(), route);
    assert_eq!(crossed.last().copied(), net.switch_in(plane, dst));
    for &s in &crossed {
        assert_eq!(
            plan.switch_list[s].plane,
            Some(plane),
            "{}",
            plan.switch_list[s].name
        );
    }
    (plane, crossed)
}

/// 32 servers of 4 dual-port NICs on 16-port switches: per plane 4
/// segments of 8 servers with 4 ToRs each (16 ToRs) and 8 aggregation
/// switches. Same rail and segment: one ToR; cross-rail and cross-segment:
/// up to an aggregation switch of the flow's plane and down. ECMP uses both
/// planes.
#[test]
fn hpn_flows_stay_in_one_plane_same_rail_cross_rail_cross_segment() {
    let plan = hpn_plan("sub-nodes=128,rails=4,ports=16");
    let h = plan.hpn.clone().unwrap();
    assert_eq!((h.planes, h.segments, h.tors_per_plane), (2, 4, 16));
    assert_eq!(h.aggregation_per_plane, 8);
    let net = Network::new(&plan, plan.source()).unwrap();
    assert_eq!(net.planes(), 2);
    assert_eq!(net.link_count(), 4 * 128 + net.inter_switch_links().len());
    let sw = |plane: usize, i: usize| &plan.switch_list[net.switch_in(plane, i).unwrap()];
    let mut per_plane = [0usize; 2];
    let (mut same_rail, mut cross_rail, mut cross_segment) = (0, 0, 0);
    for src in 0..plan.sub_nodes {
        for dst in 0..plan.sub_nodes {
            if src == dst {
                continue;
            }
            let route = net.route(src, dst, 5, 1).unwrap();
            let (plane, crossed) = plane_of(&net, src, dst, &route);
            per_plane[plane] += 1;
            let (a, b) = (&plan.sub_node_list[src], &plan.sub_node_list[dst]);
            // Both ports of a NIC are on the ToRs of its rail and segment.
            assert_eq!(sw(0, src).rail, Some(a.index));
            assert_eq!(sw(1, src).rail, Some(a.index));
            assert_eq!(sw(0, src).pod, sw(1, src).pod);
            let same_segment = sw(0, src).pod == sw(0, dst).pod;
            if a.index == b.index && same_segment {
                assert_eq!(crossed.len(), 1, "{} -> {}", a.id, b.id);
                same_rail += 1;
            } else {
                assert_eq!(route.links().len(), 4, "{} -> {}", a.id, b.id);
                assert_eq!(plan.switch_list[crossed[1]].part_or_tier, Tier::Spine);
                if same_segment {
                    cross_rail += 1;
                } else {
                    cross_segment += 1;
                }
            }
        }
    }
    assert_eq!(same_rail, 4 * 4 * 8 * 7);
    assert!(cross_rail > 0 && cross_segment > 0);
    // The hash spreads the flows over both planes, about evenly.
    let all = per_plane[0] + per_plane[1];
    assert!(per_plane.iter().all(|&n| n * 10 > all * 4), "{per_plane:?}");
}

/// D-mod-K takes the plane by the destination's parity; spray splits every
/// flow over both planes and every path in each.
#[test]
fn hpn_dmodk_picks_the_plane_by_destination_and_spray_uses_both() {
    let plan = hpn_plan("sub-nodes=128,rails=4,ports=16");
    let net = Network::new(&plan, plan.source()).unwrap();
    for (src, dst) in [(0, 1), (0, 4), (0, 64), (5, 70), (3, 3 + 32)] {
        let route = net.route_dmodk(src, dst).unwrap();
        let (plane, _) = plane_of(&net, src, dst, &route);
        assert_eq!(plane, dst % 2, "{src} -> {dst}");
    }
    let mut out = Vec::new();
    // Same rail and segment (node 1 and node 2, NIC 0): one route per plane.
    net.flow_routes(Policy::Spray, 0, 4, 0, 1, &mut out)
        .unwrap();
    let planes: Vec<usize> = out.iter().map(|r| plane_of(&net, 0, 4, r).0).collect();
    assert_eq!(planes, vec![0, 1]);
    // Another segment: every aggregation switch of both planes.
    out.clear();
    net.flow_routes(Policy::Spray, 0, 64, 0, 1, &mut out)
        .unwrap();
    let mut by_plane = [0usize; 2];
    for r in &out {
        by_plane[plane_of(&net, 0, 64, r).0] += 1;
    }
    assert_eq!(by_plane, [8, 8]);
}

/// One failed ToR: its NICs keep their other port, so every flow to and
/// from them runs in the other plane, and no route crosses the failed ToR.
#[test]
fn hpn_one_failed_tor_moves_its_flows_to_the_other_plane() {
    let plan = hpn_plan("sub-nodes=128,rails=4,ports=16");
    let tor = net_tor(&plan);
    let net = Network::avoiding(
        &plan,
        plan.source(),
        &[format!("switch:{}", plan.switch_list[tor].name)
            .parse()
            .unwrap()],
    )
    .unwrap();
    let on_tor: Vec<usize> = (0..plan.sub_nodes)
        .filter(|&i| net.switch_in(0, i) == Some(tor))
        .collect();
    assert_eq!(on_tor.len(), 8);
    for policy in Policy::ALL {
        for src in 0..plan.sub_nodes {
            for dst in [0, 4, 17, 64, 127] {
                if src == dst {
                    continue;
                }
                let mut out = Vec::new();
                net.flow_routes(policy, src, dst, 3, 1, &mut out).unwrap();
                for r in &out {
                    let (plane, crossed) = plane_of(&net, src, dst, r);
                    assert!(!crossed.contains(&tor), "{policy} {src} -> {dst}");
                    if on_tor.contains(&src) || on_tor.contains(&dst) {
                        assert_eq!(plane, 1, "{policy} {src} -> {dst}");
                    }
                }
            }
        }
    }
}

/// The plane-A ToR of rail 0 in segment 0.
fn net_tor(plan: &CheckedPlan) -> usize {
    plan.switch_list
        .iter()
        .position(|s| s.plane == Some(0) && s.rail == Some(0) && s.pod == Some(0))
        .unwrap()
}

/// An HPN plan's forwarding tables route inside each plane: the address
/// model (what `render` writes) builds, and has no route between planes.
#[test]
fn hpn_static_routes_stay_in_their_plane() {
    let plan = hpn_plan("sub-nodes=64,rails=8,ports=16");
    let m = Model::build(&plan, plan.source()).unwrap();
    assert_eq!(m.hosts.len(), 64);
    assert_eq!(m.hosts1.len(), 64);
    for (x, d) in m.domains.iter().enumerate() {
        for r in &d.routes {
            assert_eq!(plan.switch_list[r.target].plane, plan.switch_list[x].plane);
        }
    }
    // The two ports of a NIC have addresses in their own ToR's subnet.
    for (h0, h1) in m.hosts.iter().zip(&m.hosts1) {
        assert_ne!(h0.domain, h1.domain);
        assert_ne!(h0.addr, h1.addr);
        assert!(h1.prefix.contains(h1.addr));
    }
}
