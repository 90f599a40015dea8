//! Arista EOS: `templates/eos.cfg`.
//!
//! What it configures:
//!
//! - `hostname`, `lldp run`;
//! - a VLAN and a VRF (`vrf instance`, `ip routing vrf`) per half;
//! - routed inter-switch ports (`no switchport`, `vrf`, /31 address),
//!   access sub-node ports (`switchport access vlan`, `spanning-tree
//!   portfast`), an `interface Vlan<id>` gateway per half, free ports shut
//!   down, reserved ports left alone, `mtu`;
//! - `qos map dscp ... to traffic-class` for all 64 DSCPs (EOS's default
//!   map sends DSCP 0-7 to traffic class 1; this one sends every DSCP
//!   without a class to 0), and the lossless and CNP traffic classes to
//!   the transmit queue of the same number;
//! - `qos trust dscp` on every cabled port, and a `qos profile` applied to
//!   them (`service-profile`) with `priority-flow-control on` and
//!   `priority ... no-drop` on the lossless priorities, ECN marking
//!   (`random-detect ecn`) on their unicast queues (`uc-tx-queue`, as
//!   Broadcom-based switches name them; Jericho-based ones call them
//!   `tx-queue`) and the CNP queue in strict priority;
//! - the PFC pause watchdog (`priority-flow-control pause watchdog`, timers
//!   in seconds, action drop);
//! - static routes, one `ip route vrf` line per next hop (ECMP).
//!
//! EOS takes an IP MTU of at most [`MAX_MTU`]; a larger intent is capped
//! and the file says so.

use askama::Template;

use super::vendor::{SwitchVendor, digit_groups};
use super::{description, seconds, summary};
use crate::error::{Error, Result};
use crate::names;
use crate::network::{Bgp, Model, PortKind, ip};
use crate::plan::Breakout;

/// The reader of what this module writes, for the round-trip tests
/// (`render::parse`).
#[cfg(any(test, feature = "parse"))]
mod read;

/// Longest VLAN `name` EOS takes.
const VLAN_NAME: usize = 32;

/// The largest interface MTU EOS accepts.
pub const MAX_MTU: u32 = 9214;

#[derive(Template)]
#[template(path = "eos.cfg", escape = "none")]
/// The template's data.
struct EosFile {
    summary: String,
    notes: Vec<String>,
    hostname: String,
    vlans: Vec<(u16, String)>,
    vrfs: Vec<String>,
    dscp_map: Vec<String>,
    lossless: Vec<u8>,
    /// Traffic classes mapped to their own transmit queue: the lossless
    /// ones and the CNP's.
    queues: Vec<u8>,
    ecn_min: u32,
    ecn_max: u32,
    ecn_probability: u8,
    cnp_queue: u8,
    timeout: String,
    polling: String,
    recovery: String,
    interfaces: Vec<Interface>,
    vlan_interfaces: Vec<VlanInterface>,
    routes: Vec<String>,
    /// `routing = "bgp"`: per-interface BFD timers and `router bgp`.
    bgp: Vec<String>,
}

struct Interface {
    name: String,
    description: String,
    /// `routed`, `access` or `free`.
    kind: &'static str,
    access_vlan: u16,
    vrf: String,
    address: String,
    mtu: u32,
    /// `speed 200g-4` on a lane of a broken-out port; empty otherwise.
    speed: String,
}

struct VlanInterface {
    vlan: u16,
    vrf: String,
    mtu: u32,
    addresses: Vec<String>,
}

/// Arista EOS, in the registry.
pub(super) struct Eos;

impl SwitchVendor for Eos {
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig> {
        read::read(text, file)
    }

    fn name(&self) -> &'static str {
        "eos"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["arista"]
    }

    fn title(&self) -> &'static str {
        "Arista EOS"
    }

    fn gist(&self) -> &'static str {
        "Arista"
    }

    fn file_suffix(&self) -> &'static str {
        ".eos.cfg"
    }

    fn max_description(&self) -> usize {
        240
    }

    /// `Ethernet<p>/1`.
    fn default_port_name(&self, _gbps: u32, port: u32) -> String {
        format!("Ethernet{port}/1")
    }

    fn accepts_pattern(&self, pattern: &str) -> bool {
        pattern.starts_with("Ethernet")
    }

    /// EOS breaks a port out by the speed of its lane interfaces: each
    /// takes `speed <G>g-<SerDes lanes>` (`200g-4` is 200G over 4 of a 400G
    /// port's 8 lanes; batfish/batfish#9929, checked on cEOS-lab 4.35.1F:
    /// `100g-1` "1 of 8 sub-ports", `200g-2` "1 of 4", `400g-4` "1 of 2";
    /// aristanetworks/avd#3118 for `100g-2` on a 400G spine; AMD Instinct
    /// documentation, "RDMA over Converged Ethernet Configuration Guide",
    /// its Arista sample: `Ethernet2/5/1` and `Ethernet2/5/5` with `speed
    /// 200g-4` for 200GbE NICs on a 400G port), and is named
    /// by its first lane: `Ethernet5/1` and `Ethernet5/5` for 2 x 200G
    /// ([`Breakout::first_electrical`]). A split the cage's lanes cannot
    /// carry evenly is refused.
    fn breakout(&self, b: Breakout) -> std::result::Result<(), String> {
        super::vendor::even_serdes(b)
    }

    /// `Ethernet<cage>/<first lane>`.
    fn lane_name(&self, cage: &str, b: Breakout, lane: u32) -> String {
        let base = cage.strip_suffix("/1").unwrap_or(cage);
        match b.first_electrical(lane) {
            Some(first) => format!("{base}/{first}"),
            None => format!("{cage}s{lane}"),
        }
    }

    fn accepts_interface(&self, name: &str) -> bool {
        name.strip_prefix("Ethernet")
            .is_some_and(|n| digit_groups(n, '/'))
    }

    fn interface_syntax(&self) -> &'static str {
        "`Ethernet` followed by numbers separated by `/` (Ethernet5/1)"
    }

    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String {
        format!("Vlan{}", m.domains[domain].vlan)
    }

    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
        render(m, bgp, device)
    }
}

/// Renders one physical switch.
fn render(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
    let dev = &m.devices[device];
    let q = &m.qos;
    let mut notes = Vec::new();
    let mtu = dev.mtu.min(MAX_MTU);
    if dev.mtu > MAX_MTU {
        notes.push(format!(
            "The plan's MTU {} is above EOS's largest, {MAX_MTU}: ports use {MAX_MTU}.",
            dev.mtu
        ));
    }
    let mut interfaces = Vec::new();
    for p in &dev.ports {
        let dom = &m.domains[p.domain];
        let mut i = Interface {
            name: Eos.port_name(&m.plan.switch_list[p.domain], p.number),
            description: description(m, &Eos, device, p.number),
            kind: "free",
            access_vlan: dom.vlan,
            vrf: dom.vrf.clone(),
            address: String::new(),
            mtu: p.mtu.min(MAX_MTU),
            speed: (m.plan.switch_list[p.domain].breakout)
                .and_then(|b| Some(format!("{}g-{}", b.lane_gbps(), b.electrical_per_lane()?)))
                .unwrap_or_default(),
        };
        match p.kind {
            PortKind::InterSwitch { link } => {
                i.kind = "routed";
                i.address = format!("{}/31", ip(m.links[link].from_addr));
            }
            PortKind::SubNode { .. } => i.kind = "access",
            PortKind::Free => {}
            PortKind::Reserved => continue,
        }
        interfaces.push(i);
    }
    let mut vlan_interfaces = Vec::new();
    let mut routes = Vec::new();
    for &d in &dev.domains {
        let dom = &m.domains[d];
        if !dom.gateways.is_empty() {
            vlan_interfaces.push(VlanInterface {
                vlan: dom.vlan,
                vrf: dom.vrf.clone(),
                mtu,
                addresses: dom
                    .gateways
                    .iter()
                    .map(|g| format!("{}/{}", ip(g.addr), g.prefix.len))
                    .collect(),
            });
        }
        for r in dom.routes.iter().filter(|_| bgp.is_none()) {
            for &h in &r.next_hops {
                routes.push(format!(
                    "ip route vrf {} {} {}",
                    dom.vrf,
                    r.prefix,
                    ip(m.links[h].to_addr)
                ));
            }
        }
    }
    // DSCPs per traffic class, at most eight to a command.
    let mut dscp_map = Vec::new();
    for tc in 0u8..8 {
        let dscps: Vec<String> = (0u8..64)
            .filter(|&d| m.dscp_map[usize::from(d)] == tc)
            .map(|d| d.to_string())
            .collect();
        for chunk in dscps.chunks(8) {
            dscp_map.push(format!(
                "qos map dscp {} to traffic-class {tc}",
                chunk.join(" ")
            ));
        }
    }
    let mut queues = m.lossless.clone();
    queues.push(q.cnp.priority);
    queues.sort_unstable();
    queues.dedup();
    let w = q.pfc_watchdog;
    let t = EosFile {
        summary: summary(m, device),
        notes,
        hostname: names::comment(&dev.name),
        vlans: dev
            .domains
            .iter()
            .map(|&d| (m.domains[d].vlan, names::description(m.name(d), VLAN_NAME)))
            .collect(),
        vrfs: dev
            .domains
            .iter()
            .map(|&d| m.domains[d].vrf.clone())
            .collect(),
        dscp_map,
        lossless: m.lossless.clone(),
        queues,
        ecn_min: q.ecn.min_kb,
        ecn_max: q.ecn.max_kb,
        ecn_probability: q.ecn.probability,
        cnp_queue: q.cnp.priority,
        timeout: seconds(w.detection_ms),
        polling: seconds(w.polling_ms),
        recovery: seconds(w.restoration_ms),
        interfaces,
        vlan_interfaces,
        routes,
        bgp: bgp.map_or_else(Vec::new, |b| bgp_lines(m, b, device)),
    };
    // Askama drops the template's last newline; files end with one.
    t.render()
        .map(|text| text + "\n")
        .map_err(|e| Error::Render {
            device: dev.name.clone(),
            vendor: "EOS",
            source: Box::new(e),
        })
}

/// The BGP part of one switch: BFD timers on every routed port, then one
/// `router bgp` (EOS runs one BGP process) with a `vrf` section per half.
/// The process takes the first half's ASN; the other half's section sets
/// its own with `local-as`, so each half is its own AS as the model says.
fn bgp_lines(m: &Model<'_>, bgp: &Bgp, device: usize) -> Vec<String> {
    let b = bgp.bfd;
    let mut out = Vec::new();
    let speakers: Vec<_> = bgp.routed_of(device).collect();
    let Some((_, first)) = speakers.first() else {
        return out;
    };
    for (d, s) in &speakers {
        for x in &s.sessions {
            out.push(format!(
                "interface {}",
                Eos.port_name(&m.plan.switch_list[*d], x.port)
            ));
            out.push(format!(
                "   bfd interval {} min-rx {} multiplier {}",
                b.tx_ms, b.rx_ms, b.multiplier
            ));
            out.push("!".to_string());
        }
    }
    out.push(format!("router bgp {}", first.asn));
    for (_, s) in &speakers {
        out.push(format!("   vrf {}", s.vrf));
        if s.asn != first.asn {
            out.push(format!("      local-as {}", s.asn));
        }
        if let Some(id) = s.router_id {
            out.push(format!("      router-id {id}"));
        }
        out.push("      bgp bestpath as-path multipath-relax".to_string());
        out.push(format!(
            "      maximum-paths {} ecmp {}",
            s.max_paths, s.max_paths
        ));
        for x in &s.sessions {
            out.push(format!(
                "      neighbor {} remote-as {}",
                x.peer, x.peer_asn
            ));
            out.push(format!(
                "      neighbor {} description {}",
                x.peer,
                description(m, &Eos, device, x.port)
            ));
            out.push(format!("      neighbor {} bfd", x.peer));
        }
        for p in &s.announced {
            out.push(format!("      network {p}"));
        }
    }
    out
}
