//! Every rendered next hop of every vendor is the route model's: static routes and host gateways read back from the files equal `network`'s tables, and every vendor's BGP (ASNs, neighbours, announced prefixes, multipath, BFD) equals `network::bgp`'s model.

use std::collections::{BTreeMap, BTreeSet};

use super::parse::{ParsedBgp, ParsedNeighbor, parse};
use super::{Vendor, description, render, render_hosts};
use crate::checked::CheckedPlan;
use crate::network::tests::{bgp, bigraph_plan, eflops_plan, fat_tree_plan, rail_plan};
use crate::network::{Bgp, Link, Model, Network, ip};

/// Per physical switch: the set of (VRF, prefix, next-hop address).
type Routes = BTreeMap<String, BTreeSet<(String, String, String)>>;

/// The static routes the route model gives every physical switch: for
/// every plan switch and every other switch with sub-nodes, each subnet of
/// the destination with the address at the far end of every next hop of
/// [`Network::table`].
fn model_routes(plan: &CheckedPlan, vendor: Vendor) -> Routes {
    let net = Network::new(plan, plan.source()).unwrap();
    let m = Model::build(plan, plan.source()).unwrap();
    // The address at the far end of the link leaving `from` by `port`.
    let far: BTreeMap<(usize, u32), u32> = m
        .links
        .iter()
        .map(|l| ((l.from, l.from_port), l.to_addr))
        .collect();
    let mut out = Routes::new();
    for dev in &m.devices {
        let routes = out.entry(dev.name.clone()).or_default();
        for &x in &dev.domains {
            for (t, dom) in m.domains.iter().enumerate() {
                if t == x {
                    continue;
                }
                for id in net.table(x, t) {
                    let Some(Link::InterSwitch { from, port, .. }) = net.link(id) else {
                        panic!("{} is not an inter-switch link", net.describe(id));
                    };
                    assert_eq!(from, x);
                    for g in &dom.gateways {
                        routes.insert((
                            vendor.vrf_name(&m, x),
                            g.prefix.to_string(),
                            ip(far[&(from, port)]),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The static routes in `vendor`'s rendered files, per host name.
fn rendered_routes(plan: &CheckedPlan, vendor: Vendor) -> Routes {
    render(plan, vendor)
        .unwrap()
        .iter()
        .map(|(name, text)| {
            let c = parse(vendor, text, name).unwrap();
            let routes = c
                .routes
                .iter()
                .map(|r| (r.vrf.clone(), r.prefix.clone(), r.next_hop.clone()))
                .collect();
            (c.hostname, routes)
        })
        .collect()
}

fn plans() -> Vec<(&'static str, CheckedPlan)> {
    vec![
        ("eflops-4x16", eflops_plan()),
        ("bigraph 2x4", bigraph_plan(2, 4)),
        ("bigraph 4x8", bigraph_plan(4, 8)),
        ("2-tier", fat_tree_plan("tiers=2,sub-nodes=64,ports=32")),
        ("3-tier k=4", fat_tree_plan("k=4")),
        ("rail-optimized", rail_plan("sub-nodes=32,rails=4,ports=8")),
    ]
}

#[test]
fn every_rendered_next_hop_of_every_vendor_is_the_models() {
    for (what, plan) in plans() {
        for vendor in Vendor::ALL {
            let expected = model_routes(&plan, vendor);
            assert!(
                expected.values().map(BTreeSet::len).sum::<usize>() > 0,
                "{what}: the model has no routes"
            );
            let got = rendered_routes(&plan, vendor);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "{what} {vendor}"
            );
            for (host, routes) in &expected {
                assert_eq!(&got[host], routes, "{what} {vendor} {host}");
            }
        }
    }
}

/// A host's gateway is the first hop of all its traffic: every host file
/// names the gateway of the sub-node's subnet on the switch the route model
/// puts it on.
#[test]
fn every_host_gateway_is_the_models() {
    for (what, plan) in plans() {
        let net = Network::new(&plan, plan.source()).unwrap();
        let m = Model::build(&plan, plan.source()).unwrap();
        let index: BTreeMap<&str, usize> = plan
            .sub_node_list
            .iter()
            .enumerate()
            .map(|(i, sn)| (sn.id.as_str(), i))
            .collect();
        let mut seen = 0;
        for (name, text) in render_hosts(&plan).unwrap() {
            if !name.ends_with(".json") {
                continue;
            }
            let file: serde_json::Value = serde_json::from_str(&text).unwrap();
            for slot in file["sub_nodes"].as_array().unwrap() {
                let i = index[slot["sub_node"].as_str().unwrap()];
                let switch = net.switch_of(i).unwrap();
                let host = &m.hosts[i];
                assert_eq!(host.domain, switch, "{what} {name}");
                let gateway = m.domains[switch]
                    .gateways
                    .iter()
                    .find(|g| g.prefix.contains(host.addr))
                    .unwrap();
                assert_eq!(
                    slot["gateway"].as_str().unwrap(),
                    ip(gateway.addr),
                    "{what} {name}"
                );
                seen += 1;
            }
        }
        assert_eq!(seen, plan.sub_nodes, "{what}");
    }
}

/// Per host name: the BGP instances by VRF and the BFD timers.
type BgpConfigs = BTreeMap<String, (BTreeMap<String, ParsedBgp>, BTreeSet<(u32, u32, u32)>)>;

/// What the BGP model says every vendor's file holds: per physical switch
/// and half with sessions, the half's ASN, router ID, multipath-relax,
/// `maximum-paths`, announced subnets and one neighbour per cable (peer
/// address, peer ASN, BFD, the port's description); and the intent's BFD
/// timers.
fn model_bgp(plan: &CheckedPlan, vendor: Vendor) -> BgpConfigs {
    let m = Model::build(plan, plan.source()).unwrap();
    let b = Bgp::of(&m, plan.source()).unwrap();
    let imp = vendor.implementation();
    let timers = BTreeSet::from([(b.bfd.tx_ms, b.bfd.rx_ms, b.bfd.multiplier)]);
    let mut out = BgpConfigs::new();
    for (device, dev) in m.devices.iter().enumerate() {
        let mut vrfs = BTreeMap::new();
        for (d, s) in b.speakers_of(device) {
            if s.sessions.is_empty() {
                continue;
            }
            let neighbors = s
                .sessions
                .iter()
                .map(|x| {
                    (
                        x.peer.to_string(),
                        ParsedNeighbor {
                            remote_as: x.peer_asn,
                            bfd: true,
                            description: description(&m, imp, device, x.port),
                        },
                    )
                })
                .collect();
            vrfs.insert(
                vendor.vrf_name(&m, d),
                ParsedBgp {
                    asn: s.asn,
                    router_id: s.router_id.map(|r| r.to_string()),
                    multipath_relax: true,
                    max_paths: Some(s.max_paths as u32),
                    networks: s.announced.iter().map(ToString::to_string).collect(),
                    neighbors,
                },
            );
        }
        let bfd = if vrfs.is_empty() {
            BTreeSet::new()
        } else {
            timers.clone()
        };
        out.insert(dev.name.clone(), (vrfs, bfd));
    }
    out
}

/// Every vendor's rendered BGP, read back from its files, is the BGP
/// model's, and a BGP plan renders no static route; on BiGraph (split
/// switches, a session between the two halves of one box), 2-tier and
/// 3-tier plans.
#[test]
fn every_vendors_bgp_is_the_models() {
    for (what, plan) in plans() {
        let plan = bgp(&plan);
        for vendor in Vendor::ALL {
            let expected = model_bgp(&plan, vendor);
            let files = render(&plan, vendor).unwrap();
            assert_eq!(files.len(), expected.len(), "{what} {vendor}");
            let mut sessions = 0;
            for (name, text) in &files {
                let c = parse(vendor, text, name).unwrap();
                assert!(c.routes.is_empty(), "{what} {vendor} {name}: static routes");
                let (vrfs, bfd) = &expected[&c.hostname];
                assert_eq!(&c.bgp, vrfs, "{what} {vendor} {name}");
                assert_eq!(&c.bfd, bfd, "{what} {vendor} {name}");
                sessions += vrfs.values().map(|v| v.neighbors.len()).sum::<usize>();
            }
            assert_eq!(sessions, 2 * plan.links, "{what} {vendor}");
        }
    }
}

/// The model's BGP is the plan's: a static plan renders no BGP at all.
#[test]
fn a_static_plan_renders_no_bgp() {
    let plan = eflops_plan();
    for vendor in Vendor::ALL {
        for (name, text) in render(&plan, vendor).unwrap() {
            let c = parse(vendor, &text, &name).unwrap();
            assert!(c.bgp.is_empty() && c.bfd.is_empty(), "{vendor} {name}");
        }
    }
}
