//! H3C Comware 7 (the S9850-4C of EFLOPS Sec. VI): `templates/comware.cfg`.
//!
//! What it configures:
//!
//! - `sysname`, `lldp global enable`;
//! - a VPN instance (`ip vpn-instance Vrf<vlan>`) and a VLAN per half;
//! - routed inter-switch ports (`port link-mode route`, bound to the VPN
//!   instance, /31 address), access sub-node ports (`port access vlan`,
//!   `stp edged-port`), a `Vlan-interface` gateway per half, free ports shut
//!   down, reserved ports left alone; the intent's MTU is the IP MTU
//!   (`mtu` on routed ports and VLAN interfaces, whose default is 1500) and
//!   `jumboframe enable` admits frames of that MTU plus [`FRAME_OVERHEAD`];
//! - `qos trust dscp`; the `dscp-dot1p` map table with all 64 DSCPs and an
//!   identity `dot1p-lp` table, so priority, 802.1p and queue are one
//!   number;
//! - PFC (`priority-flow-control enable`, `no-drop dot1p` on the lossless
//!   priorities), PFC deadlock detection with automatic recovery (the
//!   Comware PFC watchdog);
//! - a WRED table with ECN on the lossless queues, applied to every cabled
//!   port, and the CNP queue in the strict-priority group of WFQ;
//! - static routes: `ip route-static vpn-instance`, one line per next hop
//!   (ECMP).
//!
//! Units: WRED limits are buffer cells; the intent's KB are converted with
//! [`CELL_BYTES`]. PFC deadlock timers count in units set by the
//! `precision` (high 10 ms, normal 100 ms, low 1 s) and take values 1 to
//! 15, so the renderer picks the finest precision that can express the
//! intent's timers.

use askama::Template;

use super::description;
use super::vendor::{SwitchVendor, digit_groups, number};
use crate::error::{Error, Result};
use crate::names;
use crate::network::{Bgp, Model, PortKind, ip, netmask};

/// The reader of what this module writes, for the round-trip tests
/// (`render::parse`).
#[cfg(any(test, feature = "parse"))]
mod read;

/// Longest `description` of a VPN instance Comware takes.
const VRF_DESCRIPTION: usize = 79;

/// Longest VLAN `name` Comware takes.
const VLAN_NAME: usize = 32;

/// Bytes per buffer cell assumed for WRED limits (Broadcom Trident 3, the
/// S9850's chip family); `display buffer usage` shows a switch's own.
pub const CELL_BYTES: u32 = 256;

/// Bytes a frame carries beyond its IP packet: Ethernet header, VLAN tag
/// and FCS. `jumboframe enable` takes a frame length, `mtu` an IP MTU.
pub const FRAME_OVERHEAD: u32 = 22;

/// Comware interface types by speed, fastest first.
const TYPES: [(u32, &str); 8] = [
    (400, "FourHundredGigE"),
    (200, "TwoHundredGigE"),
    (100, "HundredGigE"),
    (50, "FiftyGigE"),
    (40, "FortyGigE"),
    (25, "Twenty-FiveGigE"),
    (10, "Ten-GigabitEthernet"),
    (1, "GigabitEthernet"),
];

/// H3C Comware 7, in the registry.
pub(super) struct Comware;

impl SwitchVendor for Comware {
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig> {
        read::read(text, file)
    }

    fn name(&self) -> &'static str {
        "comware"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["h3c"]
    }

    fn title(&self) -> &'static str {
        "H3C Comware 7"
    }

    fn gist(&self) -> &'static str {
        "H3C Comware 7"
    }

    fn file_suffix(&self) -> &'static str {
        ".comware.cfg"
    }

    fn max_description(&self) -> usize {
        255
    }

    /// `HundredGigE1/0/<p>`, the type by the port's speed.
    fn default_port_name(&self, gbps: u32, port: u32) -> String {
        let kind = TYPES
            .iter()
            .find(|(g, _)| gbps >= *g)
            .map_or("GigabitEthernet", |(_, t)| t);
        format!("{kind}1/0/{port}")
    }

    fn accepts_pattern(&self, pattern: &str) -> bool {
        TYPES.iter().any(|(_, t)| pattern.starts_with(t))
    }

    fn accepts_interface(&self, name: &str) -> bool {
        TYPES.iter().any(|(_, t)| {
            name.strip_prefix(t).is_some_and(|rest| {
                let (slots, breakout) = match rest.split_once(':') {
                    Some((s, b)) => (s, Some(b)),
                    None => (rest, None),
                };
                digit_groups(slots, '/') && breakout.is_none_or(number)
            })
        })
    }

    fn interface_syntax(&self) -> &'static str {
        "a Comware interface type (HundredGigE, FortyGigE, ...) followed by numbers separated by `/`, with an optional `:N` breakout (HundredGigE1/0/5)"
    }

    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String {
        format!("Vlan-interface{}", m.domains[domain].vlan)
    }

    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
        render(m, bgp, device)
    }
}

/// Comware's names for queues 0 to 7, which WFQ commands use.
const QUEUE_NAMES: [&str; 8] = ["be", "af1", "af2", "af3", "af4", "ef", "cs6", "cs7"];

#[derive(Template)]
#[template(path = "comware.cfg", escape = "none")]
/// The template's data.
struct ComwareFile {
    hostname: String,
    vrfs: Vec<Named>,
    vlans: Vec<Vlan>,
    dscp_map: Vec<(u8, u8)>,
    lossless: Vec<u8>,
    lossless_list: String,
    wred_low: u32,
    wred_high: u32,
    wred_probability: u8,
    precision: &'static str,
    deadlock_interval: u32,
    deadlock_delay: u32,
    cnp_queue: &'static str,
    interfaces: Vec<Interface>,
    vlan_interfaces: Vec<VlanInterface>,
    routes: Vec<String>,
    /// `routing = "bgp"`: per-interface BFD timers and the BGP instances.
    bgp: Vec<String>,
}

struct Named {
    name: String,
    description: String,
}

struct Vlan {
    id: u16,
    name: String,
}

struct Interface {
    name: String,
    description: String,
    /// `route`, `bridge` or empty (free ports keep their mode).
    mode: &'static str,
    access_vlan: u16,
    vrf: String,
    address: String,
    mtu: u32,
    /// Largest frame: `mtu` plus [`FRAME_OVERHEAD`].
    frame: u32,
    qos: bool,
    edge: bool,
    shutdown: bool,
}

struct VlanInterface {
    vlan: u16,
    vrf: String,
    mtu: u32,
    /// `a.b.c.d mask`, the first primary, the rest `sub`.
    addresses: Vec<String>,
}

/// Renders one physical switch.
fn render(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
    let dev = &m.devices[device];
    let q = &m.qos;
    let cells = |kb: u32| (u64::from(kb) * 1024).div_ceil(u64::from(CELL_BYTES)) as u32;
    let w = q.pfc_watchdog;
    let (precision, unit) = [("high", 10u32), ("normal", 100), ("low", 1000)]
        .into_iter()
        .find(|(_, u)| w.detection_ms.max(w.restoration_ms).div_ceil(*u) <= 15)
        .unwrap_or(("low", 1000));
    let timer = |ms: u32| ms.div_ceil(unit).clamp(1, 15);

    let mut interfaces = Vec::new();
    for p in &dev.ports {
        let dom = &m.domains[p.domain];
        let name = Comware.port_name(&m.plan.switch_list[p.domain], p.number);
        let mut i = Interface {
            name,
            description: description(m, &Comware, device, p.number),
            mode: "",
            access_vlan: dom.vlan,
            vrf: dom.vrf.clone(),
            address: String::new(),
            mtu: p.mtu,
            frame: p.mtu + FRAME_OVERHEAD,
            qos: false,
            edge: false,
            shutdown: false,
        };
        match p.kind {
            PortKind::InterSwitch { link } => {
                let l = &m.links[link];
                i.mode = "route";
                i.address = format!("{} 255.255.255.254", ip(l.from_addr));
                i.qos = true;
            }
            PortKind::SubNode { .. } => {
                i.mode = "bridge";
                i.qos = true;
                i.edge = true;
            }
            PortKind::Free => i.shutdown = true,
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
                mtu: dev.mtu,
                addresses: dom
                    .gateways
                    .iter()
                    .map(|g| format!("{} {}", ip(g.addr), netmask(&g.prefix)))
                    .collect(),
            });
        }
        for r in dom.routes.iter().filter(|_| bgp.is_none()) {
            for &h in &r.next_hops {
                routes.push(format!(
                    "ip route-static vpn-instance {} {} {} {}",
                    dom.vrf,
                    ip(r.prefix.network),
                    r.prefix.len,
                    ip(m.links[h].to_addr)
                ));
            }
        }
    }
    let t = ComwareFile {
        hostname: names::comment(&dev.name),
        vrfs: dev
            .domains
            .iter()
            .map(|&d| Named {
                name: m.domains[d].vrf.clone(),
                description: names::description(m.name(d), VRF_DESCRIPTION),
            })
            .collect(),
        vlans: dev
            .domains
            .iter()
            .map(|&d| Vlan {
                id: m.domains[d].vlan,
                name: names::description(m.name(d), VLAN_NAME),
            })
            .collect(),
        dscp_map: (0u8..64).map(|d| (d, m.dscp_map[usize::from(d)])).collect(),
        lossless: m.lossless.clone(),
        lossless_list: m
            .lossless
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(" "),
        wred_low: cells(q.ecn.min_kb),
        wred_high: cells(q.ecn.max_kb),
        wred_probability: q.ecn.probability,
        precision,
        deadlock_interval: timer(w.detection_ms),
        deadlock_delay: timer(w.restoration_ms),
        cnp_queue: QUEUE_NAMES[usize::from(q.cnp.priority.min(7))],
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
            vendor: "Comware",
            source: Box::new(e),
        })
}

/// The BGP part of one switch: BFD timers on every routed port (Comware
/// sets them in interface view), then per half a BGP instance with its own
/// ASN (`bgp <asn> instance <vrf>` on a split switch, the default instance
/// otherwise) holding the half's VPN instance: router ID, peers with BFD,
/// and the IPv4 unicast family with `balance`, `balance as-path-relax`
/// (ECMP across peers of different ASNs) and a `network` per subnet.
fn bgp_lines(m: &Model<'_>, bgp: &Bgp, device: usize) -> Vec<String> {
    let b = bgp.bfd;
    let mut out = Vec::new();
    let split = m.devices[device].domains.len() > 1;
    for (d, s) in bgp.speakers_of(device) {
        for x in &s.sessions {
            out.push(format!(
                "interface {}",
                Comware.port_name(&m.plan.switch_list[d], x.port)
            ));
            out.push(format!(" bfd min-transmit-interval {}", b.tx_ms));
            out.push(format!(" bfd min-receive-interval {}", b.rx_ms));
            out.push(format!(" bfd detect-multiplier {}", b.multiplier));
            out.push("#".to_string());
        }
    }
    for (_, s) in bgp.routed_of(device) {
        if split {
            out.push(format!("bgp {} instance {}", s.asn, s.vrf));
        } else {
            out.push(format!("bgp {}", s.asn));
        }
        out.push(format!(" ip vpn-instance {}", s.vrf));
        if let Some(id) = s.router_id {
            out.push(format!("  router-id {id}"));
        }
        for x in &s.sessions {
            out.push(format!("  peer {} as-number {}", x.peer, x.peer_asn));
            out.push(format!(
                "  peer {} description {}",
                x.peer,
                description(m, &Comware, device, x.port)
            ));
            out.push(format!("  peer {} bfd", x.peer));
        }
        out.push("  address-family ipv4 unicast".to_string());
        out.push(format!("   balance {}", s.max_paths));
        out.push("   balance as-path-relax".to_string());
        for p in &s.announced {
            out.push(format!("   network {} {}", ip(p.network), p.len));
        }
        for x in &s.sessions {
            out.push(format!("   peer {} enable", x.peer));
        }
        out.push("#".to_string());
    }
    out
}
