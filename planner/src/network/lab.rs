//! The plan as a lab builds it: every switch, port, cable, address and static route of the one route model, and the per-flow next hops that make a kernel forward each flow where the model's ECMP hash sends it.
//!
//! A lab (`provisioner lab`) builds one network namespace per plan switch
//! (a VLAN half of a split switch is a switch of the plan, so it gets its
//! own namespace) and one per sub-node, joins them with one veth pair per
//! cable and configures what this module describes. Nothing here touches a
//! system: the description is derived from the plan alone, by the same
//! [`Model`] every renderer reads, so the lab forwards with the addresses
//! and routes `render` writes.
//!
//! # What a lab switch is
//!
//! - its access ports join one bridge that holds the switch's gateway
//!   addresses (the VLAN interface of a real switch);
//! - each inter-switch port is a routed /31 with the plan's link address;
//! - one static route per sub-node subnet of every other switch, with every
//!   equal-cost next hop of the forwarding table, as the vendors' static
//!   routes list them.
//!
//! # Pins
//!
//! A kernel hashes ECMP flows with its own function, not the model's. So
//! that a lab forwards each flow of a run where the model says (and so
//! where `verify-ranks` counted it), [`Lab::pins`] lists, for every switch
//! on a flow's route that has more than one next hop towards the flow's
//! destination, the next hop the model's hash chose. The lab installs them
//! as source-and-destination policy routes above the ECMP routes; flows
//! that are not pinned (TCP acknowledgements of a ring's one-way flows, the
//! engine's control messages) take the ECMP routes.

use serde::{Deserialize, Serialize};

use super::addresses::{Model, PortKind, ip};
use super::links::Network;
use super::{Link, Route};
use crate::error::{Problem, Result};
use crate::plan::Plan;

/// A plan as a lab builds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lab {
    /// The plan's name.
    pub name: String,
    /// One per plan switch, in plan order.
    pub switches: Vec<LabSwitch>,
    /// One per plan sub-node, in plan order.
    pub hosts: Vec<LabHost>,
    /// One per inter-switch cable, in the plan's cable order.
    pub cables: Vec<LabCable>,
}

/// A switch of the plan (a VLAN half of a split switch, or a whole one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabSwitch {
    /// The plan switch's name.
    pub name: String,
    /// The physical switch it is (part of).
    pub physical: String,
    /// `upper`, `lower`, `leaf`, `spine`, `edge`, `aggregation` or `core`.
    pub tier: String,
    /// MTU of its ports.
    pub mtu: u32,
    /// Gateway addresses of its sub-node subnets, as `a.b.c.d/len`.
    pub gateways: Vec<String>,
    /// Its access ports (numbers), each cabled to a host.
    pub access_ports: Vec<u32>,
    /// Its routed ports with their addresses.
    pub routed_ports: Vec<LabRoutedPort>,
    /// Static routes to every other switch's sub-node subnets.
    pub routes: Vec<LabRoute>,
}

/// A routed inter-switch port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabRoutedPort {
    /// Port number.
    pub port: u32,
    /// Its address, `a.b.c.d/31`.
    pub address: String,
    /// The neighbour's address on the cable.
    pub peer_address: String,
    /// The neighbour switch (index into [`Lab::switches`]).
    pub peer: usize,
}

/// A static route with every equal-cost next hop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabRoute {
    /// Destination subnet, `a.b.c.d/len`.
    pub prefix: String,
    /// Next hops, in port order.
    pub via: Vec<LabNextHop>,
}

/// One next hop: out of a port to the neighbour's address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabNextHop {
    /// The port it leaves by.
    pub port: u32,
    /// The neighbour's address.
    pub address: String,
}

/// A sub-node as a lab host: one NIC cabled to one switch port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabHost {
    /// The sub-node's id (`node01/sn0`).
    pub id: String,
    /// Its server (`node01`): the system name its LLDP agent announces.
    #[serde(default)]
    pub server: String,
    /// Its NIC's name in the plan (`nic0`): the port its LLDP agent
    /// announces.
    #[serde(default)]
    pub nic: String,
    /// Its switch (index into [`Lab::switches`]).
    pub switch: usize,
    /// The switch port its NIC is cabled to.
    pub port: u32,
    /// Its address, `a.b.c.d`.
    pub address: String,
    /// Its prefix length.
    pub prefix_len: u8,
    /// Its default gateway.
    pub gateway: String,
    /// Speed of its cable: the slower of the NIC and the switch port.
    pub gbps: u32,
    /// MTU of its NIC (the switch's).
    pub mtu: u32,
}

/// An inter-switch cable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabCable {
    /// One end (index into [`Lab::switches`]) and its port.
    pub a: usize,
    /// Port of `a`.
    pub a_port: u32,
    /// The other end.
    pub b: usize,
    /// Port of `b`.
    pub b_port: u32,
    /// Speed of the cable: the slower of its two ports.
    pub gbps: u32,
    /// The route model's id of the direction `a` to `b` (see
    /// [`Network::link`]).
    pub link_ab: usize,
    /// The route model's id of the direction `b` to `a`.
    pub link_ba: usize,
}

/// A flow's next hop at one switch, as the model's hash chose it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pin {
    /// The switch that chooses (index into [`Lab::switches`]).
    pub switch: usize,
    /// Source address of the flow.
    pub source: String,
    /// Destination address of the flow.
    pub destination: String,
    /// The port the flow leaves by.
    pub port: u32,
    /// The neighbour's address on that port.
    pub via: String,
}

impl Lab {
    /// The lab of `plan` (named `source` in errors): the model `render`
    /// uses, with every route listed.
    pub fn of(plan: &Plan, source: &str) -> Result<Lab> {
        if let Some(sn) = plan.sub_node_list.iter().find(|sn| sn.port1.is_some()) {
            return Err(crate::Error::Invalid {
                file: source.to_string(),
                what: "plan",
                problems: vec![Problem::at(
                    None,
                    format!("sub-node {} NIC {}", sn.id, sn.nic),
                    "the lab builds one port per NIC, and this plan's NICs have two (an HPN plan's two planes)",
                    "build the lab from the same servers designed with one port per NIC (for example `planner design INVENTORY --topology rail-optimized`)",
                )],
            });
        }
        let m = Model::build(plan, source)?;
        let net = Network::new(plan, source)?;
        let mut switches: Vec<LabSwitch> = Vec::with_capacity(m.domains.len());
        for (d, dom) in m.domains.iter().enumerate() {
            let dev = &m.devices[dom.device];
            let mut access_ports = Vec::new();
            let mut routed_ports = Vec::new();
            for p in dev.ports.iter().filter(|p| p.domain == d) {
                match p.kind {
                    PortKind::SubNode { .. } => access_ports.push(p.number),
                    PortKind::InterSwitch { link } => {
                        let l = &m.links[link];
                        routed_ports.push(LabRoutedPort {
                            port: p.number,
                            address: format!("{}/31", ip(l.from_addr)),
                            peer_address: ip(l.to_addr),
                            peer: l.to,
                        });
                    }
                    PortKind::Free | PortKind::Reserved => {}
                }
            }
            let routes = dom
                .routes
                .iter()
                .map(|r| LabRoute {
                    prefix: r.prefix.to_string(),
                    via: r
                        .next_hops
                        .iter()
                        .map(|&h| LabNextHop {
                            port: m.links[h].from_port,
                            address: ip(m.links[h].to_addr),
                        })
                        .collect(),
                })
                .collect();
            switches.push(LabSwitch {
                name: m.name(d).to_string(),
                physical: dev.name.clone(),
                tier: m.tier(d).as_str().to_string(),
                mtu: dev.mtu,
                gateways: dom
                    .gateways
                    .iter()
                    .map(|g| format!("{}/{}", ip(g.addr), g.prefix.len))
                    .collect(),
                access_ports,
                routed_ports,
                routes,
            });
        }
        let hosts = m
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let sn = &plan.sub_node_list[i];
                let dev = m.domains[h.domain].device;
                let port_gbps = m.port(dev, sn.port).map_or(sn.nic_gbps, |p| p.gbps);
                LabHost {
                    id: sn.id.to_string(),
                    server: sn.server.to_string(),
                    nic: sn.nic.to_string(),
                    switch: h.domain,
                    port: sn.port,
                    address: ip(h.addr),
                    prefix_len: h.prefix.len,
                    gateway: ip(h.gateway),
                    gbps: sn.nic_gbps.min(port_gbps),
                    mtu: m.devices[dev].mtu,
                }
            })
            .collect();
        // The route model's id of every inter-switch port.
        let mut link_of = rustc_hash::FxHashMap::default();
        for id in net.inter_switch_links() {
            if let Some(Link::InterSwitch { from, port, .. }) = net.link(id) {
                link_of.insert((from, port), id);
            }
        }
        let mut cables = Vec::with_capacity(m.links.len() / 2);
        let mut problems = Vec::new();
        for pair in m.links.chunks(2) {
            let [ab, ba] = pair else { continue };
            let gbps = [(ab.from, ab.from_port), (ab.to, ab.to_port)]
                .iter()
                .filter_map(|&(d, p)| m.port(m.domains[d].device, p).map(|p| p.gbps))
                .min()
                .unwrap_or(0);
            match (
                link_of.get(&(ab.from, ab.from_port)),
                link_of.get(&(ba.from, ba.from_port)),
            ) {
                (Some(&link_ab), Some(&link_ba)) => cables.push(LabCable {
                    a: ab.from,
                    a_port: ab.from_port,
                    b: ab.to,
                    b_port: ab.to_port,
                    gbps,
                    link_ab,
                    link_ba,
                }),
                _ => problems.push(Problem::at(
                    None,
                    format!(
                        "cable {} port {} to {} port {}",
                        m.name(ab.from),
                        ab.from_port,
                        m.name(ab.to),
                        ab.to_port
                    ),
                    "the route model has no link for it",
                    "run planner validate on the plan and design it again",
                )),
            }
        }
        if !problems.is_empty() {
            return Err(crate::Error::Invalid {
                file: source.to_string(),
                what: "plan",
                problems,
            });
        }
        Ok(Lab {
            name: plan.name.clone(),
            switches,
            hosts,
            cables,
        })
    }

    /// The pins that make a lab forward every flow of `flows` where the
    /// route model's hash sends it: each flow is `(source sub-node,
    /// destination sub-node, flow id)` (see `ranks::flow_id`), routed with
    /// `seed` as `verify-ranks` routes it. A flow is pinned at each switch
    /// of its route that has more than one next hop towards its
    /// destination. Sorted and without repeats.
    pub fn pins(
        &self,
        net: &Network<'_>,
        flows: &[(usize, usize, u64)],
        seed: u64,
    ) -> Result<Vec<Pin>> {
        let mut pins = Vec::new();
        for &(src, dst, flow) in flows {
            let route: Route = net.route(src, dst, flow, seed)?;
            let Some(dst_switch) = net.switch_of(dst) else {
                continue;
            };
            for &id in route.inter_switch() {
                let Some(Link::InterSwitch { from, port, .. }) = net.link(id) else {
                    continue;
                };
                if net.next_hops(from, dst_switch).len(net) < 2 {
                    continue;
                }
                let Some(via) = self.switches[from]
                    .routed_ports
                    .iter()
                    .find(|p| p.port == port)
                else {
                    continue;
                };
                pins.push(Pin {
                    switch: from,
                    source: self.hosts[src].address.clone(),
                    destination: self.hosts[dst].address.clone(),
                    port,
                    via: via.peer_address.clone(),
                });
            }
        }
        pins.sort();
        pins.dedup();
        Ok(pins)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::design::design;
    use crate::design::shorthand::{Shorthand, bigraph, fat_tree};
    use crate::ranks::verify::flow_id;
    use crate::ranks::{Algorithm, rank_table};

    fn plan_of(which: &str) -> crate::CheckedPlan {
        let (inv, opts) = match which {
            "bigraph" => bigraph(2, 8, &Shorthand::default()).unwrap(),
            _ => fat_tree("tiers=2,sub-nodes=16,ports=8", &Shorthand::default()).unwrap(),
        };
        design(&inv, &opts).unwrap()
    }

    /// Forwards a packet from `src` to `dst` through the lab as a kernel
    /// would (a pin first, else the only next hop of the route to the
    /// destination's subnet) and returns the (switch, port) of every hop.
    fn forward(lab: &Lab, pins: &[Pin], src: usize, dst: usize) -> Vec<(usize, u32)> {
        let (s, d) = (&lab.hosts[src], &lab.hosts[dst]);
        let mut at = s.switch;
        let mut hops = Vec::new();
        while at != d.switch {
            let pin = pins
                .iter()
                .find(|p| p.switch == at && p.source == s.address && p.destination == d.address);
            let port = match pin {
                Some(p) => p.port,
                None => {
                    let addr = u32::from(d.address.parse::<std::net::Ipv4Addr>().unwrap());
                    let route = lab.switches[at]
                        .routes
                        .iter()
                        .find(|r| {
                            let p = Ipv4Prefix::parse(&r.prefix).unwrap();
                            addr & p.mask() == p.network
                        })
                        .expect("a route to every other switch's subnet");
                    assert_eq!(
                        route.via.len(),
                        1,
                        "an ECMP choice at {} for {} -> {} is not pinned",
                        lab.switches[at].name,
                        s.id,
                        d.id
                    );
                    route.via[0].port
                }
            };
            hops.push((at, port));
            at = lab.switches[at]
                .routed_ports
                .iter()
                .find(|p| p.port == port)
                .unwrap()
                .peer;
            assert!(hops.len() < 8, "a forwarding loop");
        }
        hops
    }

    use crate::qos::Ipv4Prefix;

    #[test]
    fn the_lab_has_every_switch_host_and_cable_of_the_plan() {
        let plan = plan_of("bigraph");
        let lab = Lab::of(&plan, "b.json").unwrap();
        assert_eq!(lab.switches.len(), plan.switch_list.len());
        assert_eq!(lab.hosts.len(), plan.sub_node_list.len());
        assert_eq!(lab.cables.len(), 16);
        for s in &lab.switches {
            assert!(!s.gateways.is_empty(), "{} has no gateway", s.name);
            assert_eq!(s.routed_ports.len(), 4);
            // A route to every other switch's subnet.
            assert_eq!(s.routes.len(), 7);
        }
        // Every routed port's peer holds the peer address on the same cable.
        for (i, s) in lab.switches.iter().enumerate() {
            for p in &s.routed_ports {
                let back = lab.switches[p.peer].routed_ports.iter().find(|q| {
                    q.peer == i && q.address.starts_with(&format!("{}/", p.peer_address))
                });
                assert!(back.is_some(), "{} port {} has no peer end", s.name, p.port);
            }
        }
        // Hosts are on their switch's subnet, with its gateway.
        for h in &lab.hosts {
            let gw = &lab.switches[h.switch].gateways;
            assert!(gw.iter().any(|g| g.starts_with(&format!("{}/", h.gateway))));
        }
    }

    #[test]
    fn pinned_lab_forwarding_is_the_route_model() {
        for which in ["bigraph", "fat-tree"] {
            let plan = plan_of(which);
            let lab = Lab::of(&plan, "p.json").unwrap();
            let net = Network::new(&plan, "p.json").unwrap();
            for alg in [Algorithm::Hd, Algorithm::Ring] {
                let table = rank_table(&plan, alg, None).unwrap();
                let schedule = table.schedule().unwrap();
                let mut flows = Vec::new();
                for step in &schedule.steps {
                    for (s, d) in step.flows() {
                        flows.push((table.ranks[s], table.ranks[d], flow_id(s, d)));
                    }
                }
                flows.sort();
                flows.dedup();
                for seed in [0, 7] {
                    let pins = lab.pins(&net, &flows, seed).unwrap();
                    // One choice per (switch, flow): never two ports.
                    let mut choice: HashMap<(usize, &str, &str), u32> = HashMap::new();
                    for p in &pins {
                        let old = choice.insert((p.switch, &p.source, &p.destination), p.port);
                        assert!(old.is_none() || old == Some(p.port));
                    }
                    for &(src, dst, flow) in &flows {
                        let route = net.route(src, dst, flow, seed).unwrap();
                        let want: Vec<(usize, u32)> = route
                            .inter_switch()
                            .iter()
                            .map(|&id| match net.link(id) {
                                Some(Link::InterSwitch { from, port, .. }) => (from, port),
                                other => panic!("not an inter-switch link: {other:?}"),
                            })
                            .collect();
                        assert_eq!(
                            forward(&lab, &pins, src, dst),
                            want,
                            "{which} {alg:?} seed {seed}: {} -> {}",
                            lab.hosts[src].id,
                            lab.hosts[dst].id
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_fat_tree_lab_needs_pins_for_its_ecmp_choices() {
        let plan = plan_of("fat-tree");
        let lab = Lab::of(&plan, "f.json").unwrap();
        let net = Network::new(&plan, "f.json").unwrap();
        // A leaf-to-leaf flow crosses a choice of uplinks.
        let (a, b) = (0, lab.hosts.len() - 1);
        let pins = lab.pins(&net, &[(a, b, 1)], 0).unwrap();
        assert!(!pins.is_empty());
        assert!(
            lab.switches
                .iter()
                .any(|s| s.routes.iter().any(|r| r.via.len() > 1))
        );
    }

    /// The lab has one port per NIC: an HPN plan (dual-port NICs) is
    /// refused with the NIC named and what to design instead, before any
    /// namespace exists.
    #[test]
    fn a_dual_port_plan_is_refused() {
        let (inv, opts) =
            crate::design::shorthand::hpn("sub-nodes=8,rails=2,ports=8", &Shorthand::default())
                .unwrap();
        let plan = design(&inv, &opts).unwrap();
        let e = Lab::of(&plan, "hpn.json").unwrap_err().to_string();
        for want in ["hpn.json", "NIC", "two", "rail-optimized"] {
            assert!(e.contains(want), "missing `{want}` in {e}");
        }
    }
}
