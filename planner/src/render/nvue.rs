//! NVIDIA Cumulus Linux 5 (NVUE): `templates/nvue.sh`, a shell script of
//! `nv set` commands to review with `nv config diff` and apply with
//! `nv config apply`.
//!
//! What it configures:
//!
//! - `system hostname`, LLDP (`nv set service lldp`; Cumulus Linux 5.15
//!   and later call it `nv set system lldp`);
//! - a VRF per half, the halves' VLANs on the `br_default` bridge;
//! - routed inter-switch ports (`ip vrf`, /31 address), access sub-node
//!   ports (`bridge domain br_default access`), an SVI `vlan<id>` gateway
//!   per half, free ports down (`link state down`), reserved ports left
//!   alone, `link mtu`;
//! - the `default-global` QoS profiles: DSCP trust (`trust l3`) and the
//!   DSCP to switch-priority map, PFC on the lossless priorities with their
//!   own traffic pool, ECN (`congestion-control`) on the lossless traffic
//!   classes, the CNP traffic class in strict priority;
//! - the PFC watchdog on every cabled port, with the polling interval and
//!   the polls before it acts (`robustness`) from the intent's timers;
//! - static routes: `nv set vrf <vrf> router static <prefix> via <hop>`,
//!   one line per next hop (ECMP).
//!
//! It configures PFC and ECN explicitly instead of `nv set qos roce`,
//! which knows a single lossless priority.

use askama::Template;

use super::vendor::{SwitchVendor, number};
use super::{description, list, summary};
use crate::error::{Error, Result};
use crate::names::shell_quote;
use crate::network::{Bgp, Model, PortKind, ip};
use crate::plan::Breakout;

#[derive(Template)]
#[template(path = "nvue.sh", escape = "none")]
/// The template's data.
struct NvueFile {
    summary: String,
    hostname: String,
    vrfs: Vec<String>,
    vlans: String,
    dscp_lines: Vec<String>,
    lossless: String,
    lossy: String,
    ecn_min: u64,
    ecn_max: u64,
    ecn_probability: u8,
    cnp: u8,
    polling: u32,
    robustness: u32,
    /// `nv set interface swpN link breakout 2x`, one per broken-out cage.
    breakouts: Vec<String>,
    interfaces: Vec<Interface>,
    vlan_interfaces: Vec<VlanInterface>,
    routes: Vec<String>,
    /// `routing = "bgp"`: the `nv set router bgp` and per-VRF BGP lines.
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
}

struct VlanInterface {
    vlan: u16,
    vrf: String,
    addresses: Vec<String>,
}

/// Numbers as NVUE lists: `0-25,27-33`.
fn ranges(v: &[u8]) -> String {
    let ports: Vec<u32> = v.iter().map(|&x| u32::from(x)).collect();
    crate::text::format_port_list(&ports)
}

/// NVIDIA Cumulus Linux (NVUE), in the registry.
pub(super) struct Nvue;

impl SwitchVendor for Nvue {
    fn name(&self) -> &'static str {
        "nvue"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["cumulus"]
    }

    fn title(&self) -> &'static str {
        "NVIDIA Cumulus Linux (NVUE)"
    }

    fn gist(&self) -> &'static str {
        "NVIDIA Cumulus Linux `nv set` script"
    }

    fn file_suffix(&self) -> &'static str {
        ".nvue.sh"
    }

    fn max_description(&self) -> usize {
        255
    }

    /// `swp<p>`.
    fn default_port_name(&self, _gbps: u32, port: u32) -> String {
        format!("swp{port}")
    }

    fn accepts_pattern(&self, pattern: &str) -> bool {
        pattern.starts_with("swp")
    }

    /// Cumulus Linux 5 breaks a port out with `nv set interface swp1 link
    /// breakout 2x` (`2x`, `4x` or `8x`) and names the lanes `swp1s0`,
    /// `swp1s1`, ... from 0 (NVIDIA Cumulus Linux user guide 5.x, "Switch
    /// Port Attributes", Breakout Ports; the NVUE command reference of
    /// 5.18, "Profile-Based Configuration": "parent ports swp1 through
    /// swp32 split into sub-interfaces swp1s0 through swp32s3").
    fn breakout(&self, _b: Breakout) -> std::result::Result<(), String> {
        Ok(())
    }

    fn accepts_interface(&self, name: &str) -> bool {
        name.strip_prefix("swp")
            .is_some_and(|rest| match rest.split_once('s') {
                Some((p, b)) => number(p) && number(b),
                None => number(rest),
            })
    }

    fn interface_syntax(&self) -> &'static str {
        "`swp` followed by a number, with an optional `sN` breakout (swp5, swp5s1)"
    }

    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String {
        format!("vlan{}", m.domains[domain].vlan)
    }

    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
        render(m, bgp, device)
    }
}

/// Renders one physical switch.
fn render(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
    let dev = &m.devices[device];
    let q = &m.qos;
    let mut breakouts = Vec::new();
    for p in &dev.ports {
        let s = &m.plan.switch_list[p.domain];
        if let Some(b) = s.breakout {
            let line = format!(
                "nv set interface {} link breakout {}x",
                shell_quote(&Nvue.cage_name(s, b.cage_lane(p.number).0)),
                b.lanes
            );
            if breakouts.last() != Some(&line) {
                breakouts.push(line);
            }
        }
    }
    let mut interfaces = Vec::new();
    for p in &dev.ports {
        let dom = &m.domains[p.domain];
        let mut i = Interface {
            name: shell_quote(&Nvue.port_name(&m.plan.switch_list[p.domain], p.number)),
            description: shell_quote(&description(m, &Nvue, device, p.number)),
            kind: "free",
            access_vlan: dom.vlan,
            vrf: dom.vrf.clone(),
            address: String::new(),
            mtu: p.mtu,
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
                    "nv set vrf {} router static {} via {}",
                    dom.vrf,
                    r.prefix,
                    ip(m.links[h].to_addr)
                ));
            }
        }
    }
    // The DSCP map: every DSCP of priority 0 in one line, then the others.
    let mut dscp_lines = Vec::new();
    for sp in 0u8..8 {
        let dscps: Vec<u8> = (0u8..64)
            .filter(|&d| m.dscp_map[usize::from(d)] == sp)
            .collect();
        if !dscps.is_empty() {
            dscp_lines.push(format!(
                "nv set qos mapping default-global dscp {} switch-priority {sp}",
                ranges(&dscps)
            ));
        }
    }
    let lossy: Vec<u8> = (0u8..8).filter(|p| !m.lossless.contains(p)).collect();
    let mut vlans: Vec<u16> = dev.domains.iter().map(|&d| m.domains[d].vlan).collect();
    vlans.sort_unstable();
    let w = q.pfc_watchdog;
    let t = NvueFile {
        summary: summary(m, device),
        hostname: shell_quote(&dev.name),
        vrfs: dev
            .domains
            .iter()
            .map(|&d| m.domains[d].vrf.clone())
            .collect(),
        vlans: vlans
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(","),
        dscp_lines,
        lossless: list(&m.lossless),
        lossy: ranges(&lossy),
        ecn_min: u64::from(q.ecn.min_kb) * 1024,
        ecn_max: u64::from(q.ecn.max_kb) * 1024,
        ecn_probability: q.ecn.probability,
        cnp: q.cnp.priority,
        polling: w.polling_ms,
        robustness: w.detection_ms.div_ceil(w.polling_ms.max(1)).max(1),
        breakouts,
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
            vendor: "NVUE",
            source: Box::new(e),
        })
}

/// The BGP part of one switch: BGP on, the global ASN (the first half's;
/// NVUE wants one), then per half its VRF's own ASN, router ID,
/// `path-selection multipath aspath-ignore` (FRR's `bgp bestpath as-path
/// multipath-relax`), eBGP `multipaths`, a `network` per subnet and one
/// numbered neighbour per cable with BFD and the intent's timers.
fn bgp_lines(m: &Model<'_>, bgp: &Bgp, device: usize) -> Vec<String> {
    let b = bgp.bfd;
    let mut out = Vec::new();
    let speakers: Vec<_> = bgp.routed_of(device).collect();
    let Some((_, first)) = speakers.first() else {
        return out;
    };
    out.push("nv set router bgp enable on".to_string());
    out.push(format!("nv set router bgp autonomous-system {}", first.asn));
    out.push("nv set router bfd enable on".to_string());
    for (_, s) in &speakers {
        let v = format!("nv set vrf {} router bgp", s.vrf);
        out.push(format!("{v} enable on"));
        out.push(format!("{v} autonomous-system {}", s.asn));
        if let Some(id) = s.router_id {
            out.push(format!("{v} router-id {id}"));
        }
        out.push(format!("{v} path-selection multipath aspath-ignore on"));
        out.push(format!("{v} address-family ipv4-unicast enable on"));
        out.push(format!(
            "{v} address-family ipv4-unicast multipaths ebgp {}",
            s.max_paths
        ));
        for p in &s.announced {
            out.push(format!("{v} address-family ipv4-unicast network {p}"));
        }
        for x in &s.sessions {
            let n = format!("{v} neighbor {}", x.peer);
            out.push(format!("{n} remote-as {}", x.peer_asn));
            out.push(format!("{n} type numbered"));
            out.push(format!(
                "{n} description {}",
                shell_quote(&description(m, &Nvue, device, x.port))
            ));
            out.push(format!("{n} bfd enable on"));
            out.push(format!("{n} bfd detect-multiplier {}", b.multiplier));
            out.push(format!("{n} bfd min-rx-interval {}", b.rx_ms));
            out.push(format!("{n} bfd min-tx-interval {}", b.tx_ms));
        }
    }
    out
}
