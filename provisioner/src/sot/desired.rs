//! What a plan wants in the source of truth (pure): its switches, ports,
//! VLANs, cables, prefixes and addresses, and the tag that marks what the
//! plan owns.

use std::collections::{BTreeMap, BTreeSet};

use planner::plan::{Breakout, CableKind, Plan, peer_port_name};

/// What a push needs besides the plan.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The location of switches the push creates.
    pub location: Option<String>,
    /// The role of switches the push creates.
    pub switch_role: String,
    /// Only show the diff.
    pub dry_run: bool,
    /// Objects per bulk request.
    pub batch: usize,
}

/// The tag that marks the plan's objects.
pub fn owner_tag(plan: &str) -> String {
    format!("topo-plan-{plan}")
}

/// The label of a planned cable: `<switch>:<port>><peer>:<peer port>`.
pub fn cable_label(a: &str, a_port: u32, b: &str, b_port: &str) -> String {
    format!("{a}:{a_port}>{b}:{b_port}")
}

/// A switch port the plan sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantPort {
    /// Physical switch.
    pub device: String,
    /// Interface name.
    pub name: String,
    /// The VLAN of its half (access mode), if the switch is split.
    pub vlan: Option<u16>,
    /// A routed inter-switch port (or a cage whose lanes are): no mode, no
    /// VLAN, its /31 address(es) assigned to it.
    pub routed: bool,
}

/// A planned cable between two interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantCable {
    /// (device, interface) of the switch end: the cage of a breakout
    /// cable.
    pub a: (String, String),
    /// (device, interface) of the other end: a breakout cable's first leg.
    pub b: (String, String),
    /// Its label.
    pub label: String,
    /// How a cable from a broken-out cage carries its lanes.
    pub lanes: Option<WantLanes>,
}

/// The lanes of a cable from a broken-out cage (docs/source-of-truth.md,
/// "Breakouts"): one cable whose A end is the cage's interface, and whose
/// B end is either a leg per lane (a breakout cable) or the peer's cage
/// (a straight cable, lane i to lane i).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantLanes {
    /// Lanes of the cage (2, 4 or 8).
    pub lanes: u32,
    /// A breakout cable's legs: (lane from 0, device, interface), in lane
    /// order; empty for a straight cable, whose B end is [`WantCable::b`].
    pub legs: Vec<(u32, String, String)>,
}

impl WantLanes {
    /// True for a straight cable between two broken-out cages.
    pub fn straight(&self) -> bool {
        self.legs.is_empty()
    }
}

/// The label of a cable from a broken-out cage: `leaf01:9>2x200G` for a
/// breakout cable (its cage is named, its legs are its terminations),
/// `leaf01:9>leaf02:3` for a straight one.
pub fn lanes_label(switch: &str, cage: u32, to: &str) -> String {
    format!("{switch}:{cage}>{to}")
}

/// What the plan wants in the source of truth.
#[derive(Debug, Clone, Default)]
pub struct Desired {
    /// The owner tag.
    pub tag: String,
    /// Physical switches and their models.
    pub switches: BTreeMap<String, String>,
    /// Servers the cables end on (they must exist).
    pub servers: BTreeSet<String>,
    /// VLAN id -> name.
    pub vlans: BTreeMap<u16, String>,
    /// Switch ports to configure.
    pub ports: Vec<WantPort>,
    /// Interface type and speed (Kbps) of each switch's ports.
    pub port_kind: BTreeMap<String, (String, u64)>,
    /// Planned cables.
    pub cables: Vec<WantCable>,
    /// Prefixes (network/len) of the NIC addresses.
    pub prefixes: BTreeSet<String>,
    /// (address/len, device, interface): the sub-nodes' NIC addresses, then
    /// the switches' routed /31s.
    pub addresses: Vec<(String, String, String)>,
    /// The pool of the /31 link addresses (`[addressing] link_pool`): the
    /// parent prefix of the /31s, when the plan has routed ports.
    pub link_parent: Option<String>,
    /// The /31 prefix of every inter-switch cable.
    pub link_prefixes: BTreeSet<String>,
    /// The ASN custom fields of each BGP plan's switch ([`ASN_FIELDS`]):
    /// device -> field -> value (a number, a JSON object or null).
    pub asns: BTreeMap<String, BTreeMap<&'static str, serde_json::Value>>,
    /// (MAC, server, interface) of the NICs the plan gives a MAC; pushed
    /// to NetBox only, where a MAC address is an object of its own.
    pub macs: Vec<(String, String, String)>,
    /// The plan's racks: name -> height in rack units.
    pub racks: BTreeMap<String, u32>,
    /// Where the plan stands its physical switches and cabled servers
    /// (those with a rack and a position), by device name.
    pub places: BTreeMap<String, WantPlace>,
    /// What the source of truth cannot hold of this plan, each naming the
    /// object and what to do (the push refuses the plan).
    pub problems: Vec<String>,
}

/// Where the plan stands a device: its rack, its lowest unit (1-based,
/// the devices' `position` on both systems) on the front face, and its
/// height.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantPlace {
    /// Rack name.
    pub rack: String,
    /// The lowest unit it occupies.
    pub position: u32,
    /// Its height in rack units.
    pub u_height: u32,
    /// A switch of the plan (placed by the push); false for a server
    /// (inventory: compared, never moved).
    pub switch: bool,
}

/// The device custom fields the push creates for a BGP plan (key, type):
/// `topo_asn`, the ASN of a switch that is one BGP speaker, and
/// `topo_vrf_asns`, `{"Vrf101": 4200000000, ...}`, of a VLAN-split switch
/// whose halves are speakers of their own in their VRFs (one device, two
/// ASNs). Each switch has one of the two set and the other null.
pub const ASN_FIELDS: [(&str, &str); 2] = [("topo_asn", "integer"), ("topo_vrf_asns", "json")];

/// Nautobot's interface type for a line rate.
pub fn interface_type(gbps: u32) -> &'static str {
    match gbps {
        1 => "1000base-t",
        10 => "10gbase-x-sfpp",
        25 => "25gbase-x-sfp28",
        40 => "40gbase-x-qsfpp",
        50 => "50gbase-x-sfp28",
        100 => "100gbase-x-qsfp28",
        200 => "200gbase-x-qsfp56",
        400 => "400gbase-x-qsfpdd",
        800 => "800gbase-x-qsfpdd",
        _ => "other",
    }
}

/// The network of an address (`10.100.1.2/24` -> `10.100.1.0/24`).
fn network(addr: &str) -> Option<String> {
    let (ip, len) = addr.split_once('/')?;
    let len: u32 = len.parse().ok()?;
    match ip.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(v4) if len <= 32 => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            Some(format!(
                "{}/{len}",
                std::net::Ipv4Addr::from(u32::from(v4) & mask)
            ))
        }
        std::net::IpAddr::V6(v6) if len <= 128 => {
            let mask = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            Some(format!(
                "{}/{len}",
                std::net::Ipv6Addr::from(u128::from(v6) & mask)
            ))
        }
        _ => None,
    }
}

/// What `plan` wants. A broken-out switch holds its cages as interfaces
/// (of the cage's speed), and every cable from a cage is one cable with
/// its lanes ([`WantLanes`]), as `planner cables` lists it.
pub fn desired(plan: &Plan) -> Desired {
    let mut d = Desired {
        tag: owner_tag(&plan.name),
        ..Desired::default()
    };
    let switches = plan.physical_switches();
    // A cage's VLAN: that of its first used lane's half.
    let mut cage_vlan: BTreeMap<(String, u32), (Option<u16>, String)> = BTreeMap::new();
    for s in &plan.switch_list {
        d.switches
            .insert(s.physical.to_string(), s.model.to_string());
        let gbps = s.breakout.map_or(s.port_gbps, |b| b.cage_gbps);
        d.port_kind.insert(
            s.physical.to_string(),
            (
                interface_type(gbps).to_string(),
                u64::from(gbps) * 1_000_000,
            ),
        );
        if let Some(v) = s.vlan {
            d.vlans
                .entry(v)
                .or_insert_with(|| format!("{}-vlan{v}", plan.name));
        }
        for p in &s.ports {
            if p.role == planner::plan::PortRole::Free {
                continue;
            }
            let routed = p.role == planner::plan::PortRole::InterSwitch;
            let vlan = if routed { None } else { s.vlan };
            let Some(b) = s.breakout else {
                d.ports.push(WantPort {
                    device: s.physical.to_string(),
                    name: s.port_name(p.port),
                    vlan,
                    routed,
                });
                continue;
            };
            let cage = b.cage_lane(p.port).0;
            match cage_vlan.get(&(s.physical.to_string(), cage)) {
                None => {
                    cage_vlan.insert((s.physical.to_string(), cage), (s.vlan, s.name.to_string()));
                    d.ports.push(WantPort {
                        device: s.physical.to_string(),
                        name: Breakout::generic_name(s.port_name.as_deref(), None, cage),
                        vlan,
                        routed,
                    });
                }
                Some((v, half)) if *v != s.vlan => d.problems.push(format!(
                    "switch {} cage {cage}: its lanes are in two VLAN halves ({half} and {}); the source of truth holds a cage as one interface with one VLAN, so keep a cage's lanes in one half (the inventory's `virtual` ports)",
                    s.physical, s.name
                )),
                Some(_) => {}
            }
        }
    }
    let iface = |dev: &str, port: u32| match switches.get(dev) {
        Some(s) => s.port_name(port),
        None => port.to_string(),
    };
    for pc in plan.physical_cables() {
        let Some(e) = pc.breakout else {
            let c = &plan.cables[pc.legs[0]];
            let a = (c.a.to_string(), iface(&c.a, c.a_port));
            let b = if c.kind == CableKind::SubNode {
                d.servers.insert(c.b.to_string());
                (c.b.to_string(), c.b_port.to_string())
            } else {
                let p: u32 = c.b_port.parse().unwrap_or(0);
                (c.b.to_string(), iface(&c.b, p))
            };
            d.cables.push(WantCable {
                label: cable_label(&c.a, c.a_port, &c.b, &c.b_port),
                a,
                b,
                lanes: None,
            });
            continue;
        };
        let s = &plan.switch_list[e.switch];
        let cage = (
            s.physical.to_string(),
            Breakout::generic_name(s.port_name.as_deref(), None, e.cage),
        );
        let raw = plan.legs(&pc, &e);
        let legs: Vec<(u32, String, String)> = raw
            .iter()
            .map(|l| {
                if l.cable.kind == CableKind::SubNode {
                    d.servers.insert(l.peer.to_string());
                }
                let port = if l.peer_port.is_empty() {
                    l.cable.a_port.to_string()
                } else {
                    l.peer_port.to_string()
                };
                (
                    e.breakout.cage_lane(l.port).1,
                    l.peer.to_string(),
                    peer_port_name(&switches, l.peer, &port),
                )
            })
            .collect();
        let Some(first) = legs.first().cloned() else {
            continue;
        };
        if pc.straight {
            // The peer's cage: that of the first leg's lane.
            let peer = switches.get(first.1.as_str());
            let port = if raw[0].peer_port.is_empty() {
                raw[0].cable.a_port
            } else {
                raw[0].peer_port.parse().unwrap_or(0)
            };
            let (peer_cage, name) = match peer.and_then(|p| Some((p, p.cage_lane(port)?.0))) {
                Some((p, c)) => (c, Breakout::generic_name(p.port_name.as_deref(), None, c)),
                None => (0, first.2.clone()),
            };
            d.cables.push(WantCable {
                label: lanes_label(&s.physical, e.cage, &format!("{}:{peer_cage}", first.1)),
                a: cage,
                b: (first.1, name),
                lanes: Some(WantLanes {
                    lanes: e.breakout.lanes,
                    legs: Vec::new(),
                }),
            });
        } else {
            d.cables.push(WantCable {
                label: lanes_label(&s.physical, e.cage, &e.breakout.describe()),
                a: cage,
                b: (first.1, first.2),
                lanes: Some(WantLanes {
                    lanes: e.breakout.lanes,
                    legs,
                }),
            });
        }
    }
    for sn in &plan.sub_node_list {
        if let Some(mac) = &sn.mac {
            d.macs
                .push((mac_key(mac), sn.server.to_string(), sn.nic.to_string()));
        }
        if let Some(ip) = &sn.ip
            && let Some(net) = network(ip)
        {
            d.prefixes.insert(net);
            d.addresses
                .push((ip.clone(), sn.server.to_string(), sn.nic.to_string()));
        }
    }
    add_places(&mut d, plan);
    // The switches' side, from the model every renderer reads.
    match planner::expect::fabric(plan, &plan.name) {
        Ok(f) => add_fabric(&mut d, plan, &f),
        Err(e) => d.problems.push(format!(
            "the plan's switch addresses cannot be derived: {e}; run planner validate on the plan"
        )),
    }
    d
}

/// Adds the fabric's routed /31s (their parent, prefixes and addresses on
/// the switch interfaces) and, for a BGP plan, the switches' ASN custom
/// fields. A broken-out cage holds its lanes' /31s: the source of truth
/// holds the cage as one interface (docs/source-of-truth.md, "Routed
/// plans").
pub fn add_fabric(d: &mut Desired, plan: &Plan, fabric: &planner::expect::FabricAddresses) {
    let switches = plan.physical_switches();
    for r in &fabric.routed {
        let name = match switches.get(r.device.as_str()) {
            Some(s) => match (s.breakout, s.cage_lane(r.port)) {
                (Some(_), Some((cage, _))) => {
                    Breakout::generic_name(s.port_name.as_deref(), None, cage)
                }
                _ => s.port_name(r.port),
            },
            None => r.port.to_string(),
        };
        if let Some(net) = network(&r.address) {
            d.link_prefixes.insert(net);
        }
        d.addresses
            .push((r.address.clone(), r.device.clone(), name));
    }
    if !fabric.routed.is_empty() {
        d.link_parent = Some(fabric.link_pool.clone());
    }
    let mut by_device: BTreeMap<&str, Vec<&planner::expect::SpeakerAsn>> = BTreeMap::new();
    for s in &fabric.speakers {
        by_device.entry(s.device.as_str()).or_default().push(s);
    }
    for (device, speakers) in by_device {
        let split = plan
            .switch_list
            .iter()
            .filter(|s| s.physical == device)
            .count()
            > 1;
        let mut fields = BTreeMap::new();
        if split {
            let vrfs: serde_json::Map<String, serde_json::Value> = speakers
                .iter()
                .map(|s| (s.vrf.clone(), serde_json::json!(s.asn)))
                .collect();
            fields.insert(ASN_FIELDS[0].0, serde_json::Value::Null);
            fields.insert(ASN_FIELDS[1].0, serde_json::Value::Object(vrfs));
        } else {
            fields.insert(ASN_FIELDS[0].0, serde_json::json!(speakers[0].asn));
            fields.insert(ASN_FIELDS[1].0, serde_json::Value::Null);
        }
        d.asns.insert(device.to_string(), fields);
    }
}

/// Adds the plan's racks and where it stands its physical switches and
/// the servers it cables (docs/source-of-truth.md, "Racks").
pub fn add_places(d: &mut Desired, plan: &Plan) {
    for r in &plan.racks {
        d.racks.insert(r.name.clone(), r.height());
    }
    for s in &plan.switch_list {
        if let (Some(rack), Some(position)) = (&s.rack, s.position) {
            d.places
                .entry(s.physical.to_string())
                .or_insert_with(|| WantPlace {
                    rack: rack.to_string(),
                    position,
                    u_height: s.u_height.unwrap_or(planner::inventory::DEFAULT_SWITCH_U),
                    switch: true,
                });
        }
    }
    for s in plan
        .servers
        .iter()
        .filter(|s| d.servers.contains(s.name.as_str()))
    {
        if let (Some(rack), Some(position)) = (&s.rack, s.position) {
            d.places.insert(
                s.name.to_string(),
                WantPlace {
                    rack: rack.to_string(),
                    position,
                    u_height: s.u_height.unwrap_or(planner::inventory::DEFAULT_SERVER_U),
                    switch: false,
                },
            );
        }
    }
    for (name, p) in &d.places {
        if !d.racks.contains_key(&p.rack) {
            d.problems.push(format!(
                "{} {name} stands in rack {}, which is not among the plan's racks; design the plan again (planner design)",
                if p.switch { "switch" } else { "server" },
                p.rack
            ));
        }
    }
}

/// A MAC address compared as NetBox shows it (upper case, colons:
/// `mac_unix_expanded_uppercase` in `netbox/dcim/fields.py`).
pub fn mac_key(mac: &str) -> String {
    mac.trim().to_ascii_uppercase().replace('-', ":")
}

#[cfg(test)]
mod tests {
    use planner::design::{DesignOptions, design};
    use planner::inventory::Inventory;
    use planner::plan::{Plan, Topology};

    use super::desired;

    fn breakout_plan() -> Plan {
        let text = include_str!("../../../topologies/breakout-200g.toml");
        let inv = Inventory::from_toml(text, "breakout-200g.toml").unwrap();
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        design(&inv, &opts).unwrap().plan().clone()
    }

    #[test]
    fn a_broken_out_cage_is_one_interface_and_one_cable_with_its_legs() {
        let plan = breakout_plan();
        let d = desired(&plan);
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        // 2 leaves x 16 cages, one cable each, both lanes used.
        assert_eq!(d.cables.len(), 32);
        for c in &d.cables {
            let l = c.lanes.as_ref().expect("a cable from a cage");
            assert_eq!((l.lanes, l.legs.len()), (2, 2), "{c:?}");
            assert_eq!(l.legs[0].0, 0);
            assert_eq!((&l.legs[0].1, &l.legs[0].2), (&c.b.0, &c.b.1));
            assert!(c.label.ends_with(">2x200G"), "{}", c.label);
        }
        let leaf_ports: Vec<&str> = (d.ports.iter())
            .filter(|p| p.device == "leaf01")
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(leaf_ports.len(), 16, "{leaf_ports:?}");
        assert!(leaf_ports.iter().all(|p| !p.contains('s')));
        assert_eq!(d.port_kind["leaf01"].0, "400gbase-x-qsfpdd");
        assert_eq!(d.port_kind["leaf01"].1, 400_000_000);
    }

    #[test]
    fn a_cage_with_lanes_in_two_vlan_halves_is_refused_naming_it() {
        let mut plan = breakout_plan();
        let i = (plan.switch_list.iter())
            .position(|s| s.name == "leaf01")
            .unwrap();
        let mut half = plan.switch_list[i].clone();
        plan.switch_list[i].vlan = Some(10);
        half.name = "leaf01-b".into();
        half.vlan = Some(20);
        // Lane 1 of leaf01's first cage moves to the other half.
        half.ports = vec![plan.switch_list[i].ports.remove(1)];
        plan.switch_list.push(half);
        let d = desired(&plan);
        assert!(
            d.problems.iter().any(|p| p.contains("switch leaf01 cage 1")
                && p.contains("two VLAN halves (leaf01 and leaf01-b)")),
            "{:?}",
            d.problems
        );
    }
}
