//! What a plan wants in the source of truth (pure): its switches, ports,
//! VLANs, cables, prefixes and addresses, and the tag that marks what the
//! plan owns.

use std::collections::{BTreeMap, BTreeSet};

use planner::plan::{CableKind, Plan};

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
}

/// A planned cable between two interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantCable {
    /// (device, interface) of the switch end.
    pub a: (String, String),
    /// (device, interface) of the other end.
    pub b: (String, String),
    /// Its label.
    pub label: String,
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
    /// (address/len, server, interface).
    pub addresses: Vec<(String, String, String)>,
    /// (MAC, server, interface) of the NICs the plan gives a MAC; pushed
    /// to NetBox only, where a MAC address is an object of its own.
    pub macs: Vec<(String, String, String)>,
}

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

/// What `plan` wants.
pub fn desired(plan: &Plan) -> Desired {
    let mut d = Desired {
        tag: owner_tag(&plan.name),
        ..Desired::default()
    };
    let mut port_name: BTreeMap<&str, &planner::plan::PlanSwitch> = BTreeMap::new();
    for s in &plan.switch_list {
        d.switches.insert(s.physical.clone(), s.model.clone());
        port_name.entry(s.physical.as_str()).or_insert(s);
        d.port_kind.insert(
            s.physical.clone(),
            (
                interface_type(s.port_gbps).to_string(),
                u64::from(s.port_gbps) * 1_000_000,
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
            d.ports.push(WantPort {
                device: s.physical.clone(),
                name: s.port_name(p.port),
                vlan: s.vlan,
            });
        }
    }
    let iface = |dev: &str, port: u32| match port_name.get(dev) {
        Some(s) => s.port_name(port),
        None => port.to_string(),
    };
    for c in &plan.cables {
        let a = (c.a.clone(), iface(&c.a, c.a_port));
        let b = if c.kind == CableKind::SubNode {
            d.servers.insert(c.b.clone());
            (c.b.clone(), c.b_port.clone())
        } else {
            let p: u32 = c.b_port.parse().unwrap_or(0);
            (c.b.clone(), iface(&c.b, p))
        };
        d.cables.push(WantCable {
            label: cable_label(&c.a, c.a_port, &c.b, &c.b_port),
            a,
            b,
        });
    }
    for sn in &plan.sub_node_list {
        if let Some(mac) = &sn.mac {
            d.macs
                .push((mac_key(mac), sn.server.clone(), sn.nic.clone()));
        }
        if let Some(ip) = &sn.ip
            && let Some(net) = network(ip)
        {
            d.prefixes.insert(net);
            d.addresses
                .push((ip.clone(), sn.server.clone(), sn.nic.clone()));
        }
    }
    d
}

/// A MAC address compared as NetBox shows it (upper case, colons:
/// `mac_unix_expanded_uppercase` in `netbox/dcim/fields.py`).
pub fn mac_key(mac: &str) -> String {
    mac.trim().to_ascii_uppercase().replace('-', ":")
}
