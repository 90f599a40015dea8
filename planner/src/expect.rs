//! What a physical switch of a plan should show once configured: its BGP sessions and installed routes per VRF, and its LLDP neighbours and speed per port.
//!
//! The one expectation the switch-push verifier and the lab compare a
//! device against, derived from the same route model (`network`) and vendor
//! table (`render`) as the rendered configuration, so the three cannot
//! disagree:
//!
//! - [`switch`]: for one physical switch and a vendor, an [`Expected`]
//!   (serde, stable field names);
//! - the configuration itself is [`crate::render::render_switch`];
//! - [`fabric`]: for the whole plan, every routed port's /31 address and
//!   every BGP speaker's ASN, vendor-neutral: what a source of truth holds
//!   of the fabric (`provisioner sot push`).
//!
//! Routes are the route model's whatever the routing mode: static plans
//! install the forwarding tables, BGP plans the routes
//! [`Bgp::installed_at`] predicts, which a test holds equal to the tables.
//! Next hops are the peers' /31 addresses.
//!
//! LLDP: on an inter-switch port the peer is the other end's physical
//! switch and its port name in the same vendor's style (a fabric of one
//! vendor); on a sub-node port it is the server and the NIC name the plan
//! gives (what the host's LLDP agent must announce as its port).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::checked::CheckedPlan;
use crate::error::Result;
use crate::network::{Bgp, Model, PortKind, ip};
use crate::plan::Plan;
use crate::render::Vendor;
use crate::routing::{Bfd, RoutingMode};

/// What one physical switch should show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    /// The physical switch (host name).
    pub device: String,
    /// The vendor whose interface names are used (`frr`, `eos`, ...).
    pub vendor: String,
    /// `static` or `bgp`.
    pub routing: RoutingMode,
    /// BFD timers of every session (BGP only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bfd: Option<Bfd>,
    /// One per plan switch on the device (one, or the two VLAN halves), in
    /// plan order.
    pub vrfs: Vec<ExpectedVrf>,
    /// Every cabled port (inter-switch and sub-node), by port number.
    pub ports: Vec<ExpectedPort>,
}

/// One routing instance: a plan switch in its VRF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedVrf {
    /// The VRF name as the vendor configures it (`Vrf101`; `default` for an
    /// unsplit switch on FRR, which routes in the default VRF).
    pub vrf: String,
    /// The plan switch (`sw01-u`).
    pub switch: String,
    /// Its ASN (BGP only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asn: Option<u32>,
    /// Its router ID (BGP only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_id: Option<Ipv4Addr>,
    /// The interface holding its gateways (`Vlan101`; FRR's bridge `br0`
    /// or `br-v101`, which a Linux switch must create).
    pub gateway_interface: String,
    /// Gateway addresses of its sub-node subnets, `a.b.c.d/len`.
    pub gateways: Vec<String>,
    /// The sub-node subnets it announces (BGP only), `a.b.c.d/len`.
    pub announced: Vec<String>,
    /// Established BGP sessions, in port order (empty when static).
    pub sessions: Vec<ExpectedSession>,
    /// Installed routes: per destination prefix (`a.b.c.d/len`), every
    /// equal-cost next-hop address.
    pub routes: BTreeMap<String, BTreeSet<Ipv4Addr>>,
}

/// One BGP session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedSession {
    /// The local interface (in the vendor's naming).
    pub interface: String,
    /// The local /31 address.
    pub local_address: Ipv4Addr,
    /// The peer's address.
    pub peer_address: Ipv4Addr,
    /// The peer's ASN.
    pub peer_asn: u32,
    /// The peer plan switch.
    pub peer: String,
    /// The peer's physical switch (the device a push configures).
    pub peer_device: String,
}

/// One cabled port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedPort {
    /// Port number.
    pub port: u32,
    /// Interface name (the vendor's).
    pub interface: String,
    /// Planned speed, Gbit/s.
    pub gbps: u32,
    /// The neighbour LLDP should report.
    pub lldp: ExpectedNeighbour,
}

/// An LLDP neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedNeighbour {
    /// Peer system name: a physical switch or a server.
    pub device: String,
    /// Peer port: the switch's interface name or the server's NIC.
    pub port: String,
}

/// What physical switch `physical` of `plan` should show when configured
/// with `vendor`'s files. An unknown switch is a parameter error naming
/// the plan's switches.
pub fn switch(plan: &CheckedPlan, physical: &str, vendor: Vendor) -> Result<Expected> {
    let m = Model::build(plan, plan.source())?;
    let device = crate::render::device_named(plan, &m, physical)?;
    let bgp = if plan.routing.is_bgp() {
        Some(Bgp::of(&m, plan.source())?)
    } else {
        None
    };
    let dev = &m.devices[device];
    let port_name = |domain: usize, port: u32| vendor.port_name(&plan.switch_list[domain], port);
    let mut vrfs = Vec::new();
    for &d in &dev.domains {
        let dom = &m.domains[d];
        let mut v = ExpectedVrf {
            vrf: vendor.vrf_name(&m, d),
            switch: m.name(d).to_string(),
            asn: None,
            router_id: None,
            gateway_interface: vendor.gateway_interface(&m, d),
            gateways: dom
                .gateways
                .iter()
                .map(|g| format!("{}/{}", Ipv4Addr::from(g.addr), g.prefix.len))
                .collect(),
            announced: Vec::new(),
            sessions: Vec::new(),
            routes: BTreeMap::new(),
        };
        match &bgp {
            Some(b) => {
                let s = &b.speakers[d];
                if !s.sessions.is_empty() {
                    v.asn = Some(s.asn);
                    v.router_id = s.router_id;
                    v.announced = s.announced.iter().map(ToString::to_string).collect();
                }
                v.sessions = s
                    .sessions
                    .iter()
                    .map(|x| ExpectedSession {
                        interface: port_name(d, x.port),
                        local_address: x.local,
                        peer_address: x.peer,
                        peer_asn: x.peer_asn,
                        peer: m.name(x.peer_switch).to_string(),
                        peer_device: plan.switch_list[x.peer_switch].physical.to_string(),
                    })
                    .collect();
                v.routes = b
                    .installed_at(d)
                    .into_iter()
                    .map(|(p, hops)| (p.to_string(), hops))
                    .collect();
            }
            None => {
                for r in &dom.routes {
                    v.routes.insert(
                        r.prefix.to_string(),
                        r.next_hops
                            .iter()
                            .map(|&h| Ipv4Addr::from(m.links[h].to_addr))
                            .collect(),
                    );
                }
            }
        }
        vrfs.push(v);
    }
    let mut ports = Vec::new();
    for p in &dev.ports {
        let lldp = match p.kind {
            PortKind::InterSwitch { link } => {
                let l = &m.links[link];
                ExpectedNeighbour {
                    device: plan.switch_list[l.to].physical.to_string(),
                    port: port_name(l.to, l.to_port),
                }
            }
            PortKind::SubNode { sub_node, nic_port } => {
                let sn = &plan.sub_node_list[sub_node];
                ExpectedNeighbour {
                    device: sn.server.to_string(),
                    port: sn.port_label(usize::from(nic_port)),
                }
            }
            PortKind::Free | PortKind::Reserved => continue,
        };
        ports.push(ExpectedPort {
            port: p.number,
            interface: port_name(p.domain, p.number),
            gbps: p.gbps,
            lldp,
        });
    }
    Ok(Expected {
        device: dev.name.clone(),
        vendor: vendor.as_str().to_string(),
        routing: plan.routing.mode,
        bfd: bgp.as_ref().map(|b| b.bfd),
        vrfs,
        ports,
    })
}

/// A routed inter-switch port and its /31 address, the one every vendor's
/// configuration gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutedPort {
    /// The plan switch (a VLAN half, or a whole switch).
    pub switch: String,
    /// Its physical switch.
    pub device: String,
    /// The port number.
    pub port: u32,
    /// Its address, `a.b.c.d/31`.
    pub address: String,
    /// The physical switch at the other end.
    pub peer_device: String,
    /// The port at the other end.
    pub peer_port: u32,
}

/// A BGP speaker: a plan switch with sessions, in its VRF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpeakerAsn {
    /// The plan switch.
    pub switch: String,
    /// Its physical switch.
    pub device: String,
    /// Its VRF (vendor-neutral, `Vrf<vlan>`).
    pub vrf: String,
    /// Its ASN.
    pub asn: u32,
}

/// The fabric's addresses and ASNs, vendor-neutral.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FabricAddresses {
    /// The pool the /31 link addresses come from (`[addressing]
    /// link_pool`), `a.b.c.d/len`.
    pub link_pool: String,
    /// Every routed port, in physical switch order and then port order.
    pub routed: Vec<RoutedPort>,
    /// Every plan switch that speaks BGP (a BGP plan's switches with
    /// sessions), in plan order; empty for a statically routed plan.
    pub speakers: Vec<SpeakerAsn>,
}

/// The addresses of `plan`'s routed ports and the ASNs of its speakers,
/// from the model every renderer reads (so a source of truth holds what
/// the configurations set). Errors name the plan as `source`. The plan has
/// no loopback addresses: a speaker's router ID is its lowest session
/// address ([`crate::network::bgp`]).
pub fn fabric(plan: &Plan, source: &str) -> Result<FabricAddresses> {
    let m = Model::build(plan, source)?;
    let link_pool = plan
        .addressing
        .pools()
        .map_err(|p| crate::Error::Invalid {
            file: source.to_string(),
            what: "plan",
            problems: vec![p],
        })?
        .1
        .to_string();
    let mut routed = Vec::new();
    for dev in &m.devices {
        for p in &dev.ports {
            if let PortKind::InterSwitch { link } = p.kind {
                let l = &m.links[link];
                routed.push(RoutedPort {
                    switch: m.name(p.domain).to_string(),
                    device: dev.name.clone(),
                    port: p.number,
                    address: format!("{}/31", ip(l.from_addr)),
                    peer_device: plan.switch_list[l.to].physical.to_string(),
                    peer_port: l.to_port,
                });
            }
        }
    }
    let mut speakers = Vec::new();
    if plan.routing.is_bgp() {
        let bgp = Bgp::of(&m, source)?;
        for (d, s) in bgp.speakers.iter().enumerate() {
            if !s.sessions.is_empty() {
                speakers.push(SpeakerAsn {
                    switch: s.name.clone(),
                    device: plan.switch_list[d].physical.to_string(),
                    vrf: s.vrf.clone(),
                    asn: s.asn,
                });
            }
        }
    }
    Ok(FabricAddresses {
        link_pool,
        routed,
        speakers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::tests::{bgp, eflops_plan};

    #[test]
    fn the_fabric_holds_every_routed_ports_address_and_speakers_asn() {
        let plan = bgp(&eflops_plan());
        let f = fabric(&plan, "eflops.plan.json").unwrap();
        let e = switch(&plan, "sw01", Vendor::Comware).unwrap();
        // What `fabric` says of sw01 is what the switch should show.
        let mine: Vec<&RoutedPort> = f.routed.iter().filter(|r| r.device == "sw01").collect();
        let sessions: Vec<&ExpectedSession> = e.vrfs.iter().flat_map(|v| &v.sessions).collect();
        assert_eq!(mine.len(), sessions.len());
        for s in sessions {
            let port: u32 = s.interface.rsplit('/').next().unwrap().parse().unwrap();
            let r = mine.iter().find(|r| r.port == port).unwrap();
            assert_eq!(r.address, format!("{}/31", s.local_address));
            assert_eq!(r.peer_device, s.peer_device);
        }
        // Both ends of every cable, each address once.
        let addrs: BTreeSet<&str> = f.routed.iter().map(|r| r.address.as_str()).collect();
        assert_eq!(addrs.len(), f.routed.len());
        assert_eq!(f.routed.len() % 2, 0);
        // A speaker per VRF with sessions, the ASN the configuration sets.
        assert_eq!(f.speakers.len(), plan.switch_list.len());
        let up = f.speakers.iter().find(|s| s.switch == "sw01-u").unwrap();
        assert_eq!((up.device.as_str(), up.vrf.as_str()), ("sw01", "Vrf101"));
        assert_eq!(Some(up.asn), e.vrfs[0].asn);
        assert_eq!(f.link_pool, plan.addressing.pools().unwrap().1.to_string());
        // A static plan has the same addresses and no speakers.
        let static_plan = eflops_plan();
        let s = fabric(&static_plan, "eflops.plan.json").unwrap();
        assert_eq!(s.routed, f.routed);
        assert!(s.speakers.is_empty());
    }

    #[test]
    fn a_split_switch_has_two_vrfs_with_sessions_routes_and_neighbours() {
        let plan = bgp(&eflops_plan());
        let e = switch(&plan, "sw01", Vendor::Comware).unwrap();
        assert_eq!(e.routing, RoutingMode::Bgp);
        assert_eq!(e.vrfs.len(), 2);
        let upper = &e.vrfs[0];
        assert_eq!(upper.switch, "sw01-u");
        // Every upper half peers with the 8 lower switches and reaches the
        // other 15 switches' subnets.
        assert_eq!(upper.sessions.len(), 8);
        assert_eq!(upper.routes.len(), 15);
        assert_eq!(upper.sessions[0].interface, "HundredGigE1/0/1");
        assert_eq!(upper.sessions[0].peer, "sw01-l");
        assert_eq!(upper.sessions[0].peer_device, "sw01");
        assert_eq!(upper.asn, Some(plan.routing.asn(0)));
        assert_eq!(upper.gateway_interface, "Vlan-interface101");
        let frr = switch(&plan, "sw01", Vendor::Frr).unwrap();
        assert_eq!(frr.vrfs[1].gateway_interface, "br-v102");
        assert_eq!(frr.vrfs[1].vrf, "Vrf102");
        let p1 = e.ports.iter().find(|p| p.port == 1).unwrap();
        assert_eq!(p1.lldp.device, "sw01");
        assert_eq!(p1.lldp.port, "HundredGigE1/0/17");
        assert_eq!(p1.gbps, 100);
        // The JSON form reads back.
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Expected>(&text).unwrap(), e);
    }

    #[test]
    fn static_and_bgp_expect_the_same_routes() {
        let plan = eflops_plan();
        for sw in ["sw01", "sw05"] {
            let s = switch(&plan, sw, Vendor::Nvue).unwrap();
            let b = switch(&bgp(&plan), sw, Vendor::Nvue).unwrap();
            assert!(
                s.vrfs
                    .iter()
                    .all(|v| v.sessions.is_empty() && v.asn.is_none())
            );
            assert_eq!(s.ports, b.ports);
            for (x, y) in s.vrfs.iter().zip(&b.vrfs) {
                assert_eq!(x.routes, y.routes, "{sw} {}", x.vrf);
            }
        }
    }

    /// An unsplit switch on FRR routes in the default VRF with its gateways
    /// on `br0`; its routes are the BGP prediction.
    #[test]
    fn an_unsplit_frr_switch_routes_in_the_default_vrf() {
        let plan = bgp(&crate::network::tests::fat_tree_plan("k=4"));
        let e = switch(&plan, "sw01", Vendor::Frr).unwrap();
        assert_eq!(e.vrfs.len(), 1);
        let v = &e.vrfs[0];
        assert_eq!(
            (v.vrf.as_str(), v.gateway_interface.as_str()),
            ("default", "br0")
        );
        assert_eq!(v.sessions.len(), 2);
        assert_eq!(v.sessions[0].interface, "swp1");
        // Every other edge switch's subnet (7 of them) over both uplinks.
        assert_eq!(v.routes.len(), 7);
        assert!(v.routes.values().all(|hops| hops.len() == 2));
        assert_eq!(e.bfd.unwrap().multiplier, 3);
    }

    #[test]
    fn an_unknown_switch_is_a_parameter_error() {
        let e = switch(&eflops_plan(), "sw99", Vendor::Eos).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`sw99` is not a physical switch"), "{text}");
        assert!(text.contains("sw01, sw02"), "{text}");
    }
}
