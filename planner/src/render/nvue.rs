//! NVIDIA Cumulus Linux 5 (NVUE): `<switch>.nvue.sh`, a shell script of
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

use super::vendor::{SwitchVendor, number};
use super::{description, list, summary};
use crate::error::{Error, Result};
use crate::names::shell_quote;
use crate::network::{Bgp, Model, PortKind, ip};
use crate::plan::Breakout;

/// The reader of what this module writes, for the round-trip tests
/// (`render::parse`).
#[cfg(any(test, feature = "parse"))]
mod read;

/// Numbers as NVUE lists: `0-25,27-33`.
fn ranges(v: &[u8]) -> String {
    let ports: Vec<u32> = v.iter().map(|&x| u32::from(x)).collect();
    crate::text::format_port_list(&ports)
}

/// NVIDIA Cumulus Linux (NVUE), in the registry.
pub(super) struct Nvue;

impl SwitchVendor for Nvue {
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig> {
        read::read(text, file)
    }

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

/// Renders one physical switch: the header, then every command of
/// [`commands`] as `nv set` with its words quoted for `sh`.
fn render(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
    let mut out = format!("#!/bin/sh\n# {}\n{HEADER}set -e\n", summary(m, device));
    for words in commands(m, bgp, device) {
        out.push_str("nv set");
        for w in &words {
            out.push(' ');
            out.push_str(&shell_quote(w));
        }
        out.push('\n');
    }
    Ok(out)
}

/// The script's comment under the summary.
const HEADER: &str = "\
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
";

/// One physical switch's configuration as the JSON tree NVUE's REST API
/// takes (`PATCH /nvue_v1/?rev=N`): the same commands as the script,
/// placed by NVUE's object model ([`super::nvue_tree`]).
pub(crate) fn tree(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<serde_json::Value> {
    super::nvue_tree::tree(&commands(m, bgp, device)).map_err(|message| Error::Render {
        device: m.devices[device].name.clone(),
        vendor: "NVUE",
        source: message.into(),
    })
}

/// Words as owned strings: `w!["qos", "pfc", lossless]`.
macro_rules! w {
    ($($x:expr),* $(,)?) => { vec![$(String::from($x)),*] };
}

/// One physical switch's `nv set` commands, each as its words after `nv
/// set`, unquoted, in the order the script runs them.
fn commands(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Vec<Vec<String>> {
    let dev = &m.devices[device];
    let q = &m.qos;
    let mut out: Vec<Vec<String>> = Vec::new();
    out.push(w!["system", "hostname", dev.name.as_str()]);
    out.push(w!["service", "lldp"]);
    for &d in &dev.domains {
        out.push(w!["vrf", m.domains[d].vrf.as_str(), "table", "auto"]);
    }
    let mut vlans: Vec<u16> = dev.domains.iter().map(|&d| m.domains[d].vlan).collect();
    vlans.sort_unstable();
    let vlans: Vec<String> = vlans.iter().map(u16::to_string).collect();
    out.push(w![
        "bridge",
        "domain",
        "br_default",
        "vlan",
        vlans.join(",")
    ]);
    out.push(w!["qos", "mapping", "default-global", "trust", "l3"]);
    // The DSCP map: every DSCP of priority 0 in one command, then the others.
    for sp in 0u8..8 {
        let dscps: Vec<u8> = (0u8..64)
            .filter(|&d| m.dscp_map[usize::from(d)] == sp)
            .collect();
        if !dscps.is_empty() {
            out.push(w![
                "qos",
                "mapping",
                "default-global",
                "dscp",
                ranges(&dscps),
                "switch-priority",
                sp.to_string()
            ]);
        }
    }
    let lossless = list(&m.lossless);
    let w = q.pfc_watchdog;
    if !m.lossless.is_empty() {
        let lossy: Vec<u8> = (0u8..8).filter(|p| !m.lossless.contains(p)).collect();
        let pool = |name: &str, priorities: String| {
            [
                w!["qos", "traffic-pool", name, "memory-percent", "50"],
                w!["qos", "traffic-pool", name, "switch-priority", priorities],
            ]
        };
        out.extend(pool("default-lossy", ranges(&lossy)));
        out.extend(pool("default-lossless", lossless.clone()));
        out.push(w![
            "qos",
            "pfc",
            "default-global",
            "switch-priority",
            lossless.as_str()
        ]);
        out.push(w!["qos", "pfc", "default-global", "tx", "enable"]);
        out.push(w!["qos", "pfc", "default-global", "rx", "enable"]);
        let cc = w![
            "qos",
            "congestion-control",
            "default-global",
            "traffic-class",
            lossless.as_str()
        ];
        let with = |rest: Vec<String>| [cc.clone(), rest].concat();
        out.push(with(w!["ecn", "enable"]));
        out.push(with(w![
            "min-threshold",
            (u64::from(q.ecn.min_kb) * 1024).to_string()
        ]));
        out.push(with(w![
            "max-threshold",
            (u64::from(q.ecn.max_kb) * 1024).to_string()
        ]));
        out.push(with(w!["probability", q.ecn.probability.to_string()]));
        out.push(w![
            "qos",
            "pfc-watchdog",
            "polling-interval",
            w.polling_ms.to_string()
        ]);
        let robustness = w.detection_ms.div_ceil(w.polling_ms.max(1)).max(1);
        out.push(w![
            "qos",
            "pfc-watchdog",
            "robustness",
            robustness.to_string()
        ]);
    }
    out.push(w![
        "qos",
        "egress-scheduler",
        "default-global",
        "traffic-class",
        q.cnp.priority.to_string(),
        "mode",
        "strict"
    ]);
    for p in &dev.ports {
        let s = &m.plan.switch_list[p.domain];
        if let Some(b) = s.breakout {
            let cage = Nvue.cage_name(s, b.cage_lane(p.number).0);
            let line = w![
                "interface",
                cage,
                "link",
                "breakout",
                format!("{}x", b.lanes)
            ];
            if out.last() != Some(&line) {
                out.push(line);
            }
        }
    }
    for p in &dev.ports {
        let dom = &m.domains[p.domain];
        let name = Nvue.port_name(&m.plan.switch_list[p.domain], p.number);
        let set = |rest: Vec<String>| [w!["interface", name.as_str()], rest].concat();
        if matches!(p.kind, PortKind::Reserved) {
            continue;
        }
        out.push(set(w![
            "description",
            description(m, &Nvue, device, p.number)
        ]));
        match p.kind {
            PortKind::Free => out.push(set(w!["link", "state", "down"])),
            PortKind::InterSwitch { link } => {
                out.push(set(w!["link", "mtu", p.mtu.to_string()]));
                out.push(set(w!["ip", "vrf", dom.vrf.as_str()]));
                let address = format!("{}/31", ip(m.links[link].from_addr));
                out.push(set(w!["ip", "address", address]));
            }
            PortKind::SubNode { .. } => {
                out.push(set(w!["link", "mtu", p.mtu.to_string()]));
                let vlan = dom.vlan.to_string();
                out.push(set(w!["bridge", "domain", "br_default", "access", vlan]));
            }
            PortKind::Reserved => {}
        }
        if !matches!(p.kind, PortKind::Free) && !m.lossless.is_empty() {
            out.push(set(w!["qos", "pfc-watchdog"]));
        }
    }
    for &d in &dev.domains {
        let dom = &m.domains[d];
        if !dom.gateways.is_empty() {
            let svi = format!("vlan{}", dom.vlan);
            out.push(w!["interface", svi.as_str(), "ip", "vrf", dom.vrf.as_str()]);
            for g in &dom.gateways {
                let a = format!("{}/{}", ip(g.addr), g.prefix.len);
                out.push(w!["interface", svi.as_str(), "ip", "address", a]);
            }
        }
    }
    if bgp.is_none() {
        for &d in &dev.domains {
            let dom = &m.domains[d];
            for r in &dom.routes {
                for &h in &r.next_hops {
                    out.push(w![
                        "vrf",
                        dom.vrf.as_str(),
                        "router",
                        "static",
                        r.prefix.to_string(),
                        "via",
                        ip(m.links[h].to_addr).to_string()
                    ]);
                }
            }
        }
    }
    if let Some(b) = bgp {
        out.extend(bgp_commands(m, b, device));
    }
    out
}

/// The BGP part of one switch: BGP on, the global ASN (the first half's;
/// NVUE wants one), then per half its VRF's own ASN, router ID,
/// `path-selection multipath aspath-ignore` (FRR's `bgp bestpath as-path
/// multipath-relax`), eBGP `multipaths`, a `network` per subnet and one
/// numbered neighbour per cable with BFD and the intent's timers.
fn bgp_commands(m: &Model<'_>, bgp: &Bgp, device: usize) -> Vec<Vec<String>> {
    let b = bgp.bfd;
    let mut out = Vec::new();
    let speakers: Vec<_> = bgp.routed_of(device).collect();
    let Some((_, first)) = speakers.first() else {
        return out;
    };
    out.push(w!["router", "bgp", "enable", "on"]);
    out.push(w![
        "router",
        "bgp",
        "autonomous-system",
        first.asn.to_string()
    ]);
    out.push(w!["router", "bfd", "enable", "on"]);
    for (_, s) in &speakers {
        let v = |rest: Vec<String>| [w!["vrf", s.vrf.as_str(), "router", "bgp"], rest].concat();
        out.push(v(w!["enable", "on"]));
        out.push(v(w!["autonomous-system", s.asn.to_string()]));
        if let Some(id) = s.router_id {
            out.push(v(w!["router-id", id.to_string()]));
        }
        out.push(v(w!["path-selection", "multipath", "aspath-ignore", "on"]));
        out.push(v(w!["address-family", "ipv4-unicast", "enable", "on"]));
        let paths = s.max_paths.to_string();
        out.push(v(w![
            "address-family",
            "ipv4-unicast",
            "multipaths",
            "ebgp",
            paths
        ]));
        for p in &s.announced {
            out.push(v(w![
                "address-family",
                "ipv4-unicast",
                "network",
                p.to_string()
            ]));
        }
        for x in &s.sessions {
            let peer = x.peer.to_string();
            let n = |rest: Vec<String>| v([w!["neighbor", peer.as_str()], rest].concat());
            out.push(n(w!["remote-as", x.peer_asn.to_string()]));
            out.push(n(w!["type", "numbered"]));
            out.push(n(w!["description", description(m, &Nvue, device, x.port)]));
            out.push(n(w!["bfd", "enable", "on"]));
            out.push(n(w!["bfd", "detect-multiplier", b.multiplier.to_string()]));
            out.push(n(w!["bfd", "min-rx-interval", b.rx_ms.to_string()]));
            out.push(n(w!["bfd", "min-tx-interval", b.tx_ms.to_string()]));
        }
    }
    out
}
