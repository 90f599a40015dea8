//! FRRouting on a Linux switch (what SONiC and Cumulus Linux run underneath): a complete `frr.conf`, for `vtysh -f`, `frr-reload.py` or `/etc/frr/frr.conf`.
//!
//! What it configures:
//!
//! - `frr defaults datacenter`, `hostname`, `service integrated-vtysh-config`,
//!   and `no zebra nexthop kernel enable` (routes carry their next hops
//!   inline: FRR 8.x's zebra can leave a kernel nexthop group short of a
//!   member after a port flaps, seen in the lab with Debian's 8.4.4);
//! - a `vrf <Vrf<vlan>>` block per half when the switch is split in two
//!   VLAN halves; an unsplit switch routes in the default VRF;
//! - `interface swpN` per port: the peer as `description`, the /31 `ip
//!   address` of routed inter-switch ports, `shutdown` on free ports;
//!   reserved ports are left out;
//! - the sub-node gateways as `ip address` on the half's bridge: `br0` on
//!   an unsplit switch, `br-v<vlan>` (at most 8 characters, within Linux's
//!   15) per half of a split one;
//! - `routing = "static"`: the route model's static routes, `ip route
//!   <prefix> <next hop>` one line per ECMP next hop (staticd), inside the
//!   half's `vrf` block on a split switch;
//! - `routing = "bgp"`: per half `router bgp <asn> [vrf <vrf>]` with its
//!   router ID, `bgp bestpath as-path multipath-relax`, one neighbour per
//!   cable (`remote-as`, description, `bfd` with the `fabric` profile), and
//!   `address-family ipv4 unicast` with a `network` per sub-node subnet and
//!   `maximum-paths`; a `bfd` block with the `fabric` profile's timers.
//!
//! What is not FRR's: the kernel devices (the VRF devices, the bridges and
//! which ports they hold, MTU) and QoS. A Linux switch creates those with
//! its own network configuration (the lab with `ip`, Cumulus with
//! ifupdown2, SONiC from `config_db.json`); frr.conf only names them.
//! `frr defaults datacenter` already turns off `ebgp-requires-policy`;
//! the file says `no bgp ebgp-requires-policy` anyway so a
//! `traditional` build does not drop every route.

use std::fmt::Write as _;

use super::vendor::SwitchVendor;
use super::{description, summary};
use crate::error::Result;
use crate::names;
use crate::network::{Bgp, Model, PortKind, ip};

/// The reader of what this module writes, for the round-trip tests
/// (`render::parse`).
#[cfg(any(test, feature = "parse"))]
mod read;

/// The BFD profile every fabric session uses.
pub(crate) const BFD_PROFILE: &str = "fabric";

/// FRRouting, in the registry.
pub(super) struct Frr;

/// The bridge holding the gateways of plan switch `domain`: `br0`, or
/// `br-v<vlan>` per half of a split switch.
pub(crate) fn bridge(m: &Model<'_>, domain: usize) -> String {
    let dom = &m.domains[domain];
    if m.devices[dom.device].domains.len() > 1 {
        format!("br-v{}", dom.vlan)
    } else {
        "br0".to_string()
    }
}

/// True for a Linux interface name the kernel takes (`dev_valid_name`:
/// 1 to 15 bytes, not `.` or `..`, no `/`, `:` or whitespace), narrowed to
/// the name rule's characters so it stays one word in frr.conf.
pub(crate) fn linux_interface(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 15
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+@".contains(c))
}

impl SwitchVendor for Frr {
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig> {
        read::read(text, file)
    }

    fn name(&self) -> &'static str {
        "frr"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["frrouting"]
    }

    fn title(&self) -> &'static str {
        "FRRouting"
    }

    fn gist(&self) -> &'static str {
        "FRRouting frr.conf for a Linux switch"
    }

    fn file_suffix(&self) -> &'static str {
        ".frr.conf"
    }

    fn max_description(&self) -> usize {
        // zebra keeps interface descriptions of any length; 255 keeps the
        // same cut as the other vendors.
        255
    }

    /// `swp<p>`, as Cumulus Linux names front-panel ports (and the lab its
    /// veths).
    fn default_port_name(&self, _gbps: u32, port: u32) -> String {
        format!("swp{port}")
    }

    /// Any pattern without `/`: a `/` marks a switch CLI's name
    /// (`HundredGigE1/0/{p}`, `Ethernet{p}/1`), never a Linux one, so such
    /// plans get `swp<p>`; SONiC's `Ethernet{p}` is its Linux name too.
    fn accepts_pattern(&self, pattern: &str) -> bool {
        !pattern.contains('/')
    }

    /// FRR configures routing only: the breakout itself is the switch
    /// system's (`nv set interface swp1 link breakout 2x` on Cumulus),
    /// and its lanes are plain Linux interfaces, `swp1s0`, `swp1s1`, ...
    /// (the Cumulus names, [`SwitchVendor::lane_name`]'s default).
    fn breakout(&self, _b: crate::plan::Breakout) -> std::result::Result<(), String> {
        Ok(())
    }

    fn accepts_interface(&self, name: &str) -> bool {
        linux_interface(name)
    }

    fn interface_syntax(&self) -> &'static str {
        "a Linux interface name: 1 to 15 characters from letters, digits and `._-+@` (swp5, eth1)"
    }

    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String {
        bridge(m, domain)
    }

    fn routing_only(&self) -> bool {
        true
    }

    fn vrf_name(&self, m: &Model<'_>, domain: usize) -> String {
        let dom = &m.domains[domain];
        if m.devices[dom.device].domains.len() > 1 {
            dom.vrf.clone()
        } else {
            "default".to_string()
        }
    }

    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
        let dev = &m.devices[device];
        let box_ = Router {
            device,
            domains: &dev.domains,
            hostname: &dev.name,
            split: dev.domains.len() > 1,
        };
        Ok(render(m, &box_, bgp))
    }
}

/// What one `frr.conf` configures: a physical switch with its halves in
/// VRFs, or one plan switch on its own in the default VRF.
struct Router<'a> {
    device: usize,
    /// The plan switches it routes for.
    domains: &'a [usize],
    hostname: &'a str,
    /// The halves are VRFs (a split physical switch).
    split: bool,
}

/// The `frr.conf` of plan switch `domain` alone, as its own router in the
/// default VRF with its gateways on `br0`: what a lab that gives every
/// plan switch (each half of a split switch) its own network namespace
/// runs, with no VRF device needed. Its host name is the plan switch's.
pub(crate) fn render_plan_switch(m: &Model<'_>, domain: usize, bgp: Option<&Bgp>) -> String {
    let r = Router {
        device: m.domains[domain].device,
        domains: std::slice::from_ref(&domain),
        hostname: m.name(domain),
        split: false,
    };
    render(m, &r, bgp)
}

/// Renders one router.
fn render(m: &Model<'_>, r: &Router<'_>, bgp: Option<&Bgp>) -> String {
    let device = r.device;
    let dev = &m.devices[device];
    let split = r.split;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "! {}", summary(m, device));
    let _ = writeln!(
        w,
        "! FRRouting configuration rendered by planner (frr.conf). The VRF devices, the\n\
         ! bridges and their ports, MTU and QoS are the kernel's: create them before\n\
         ! loading this file (see docs/switch-configs.md)."
    );
    let _ = writeln!(w, "frr defaults datacenter");
    let _ = writeln!(w, "hostname {}", names::comment(r.hostname));
    let _ = writeln!(w, "service integrated-vtysh-config");
    let _ = writeln!(
        w,
        "! Next hops inline in each route, not kernel nexthop groups: zebra 8.x can\n\
         ! leave a group short of a member after a port flaps (FRR issues 14481,\n\
         ! 15505).\n\
         no zebra nexthop kernel enable"
    );
    let _ = writeln!(w, "!");
    // Static routes of a domain, one line per next hop.
    let statics = |w: &mut String, d: usize, indent: &str| {
        if bgp.is_some() {
            return;
        }
        for r in &m.domains[d].routes {
            for &h in &r.next_hops {
                let _ = writeln!(
                    w,
                    "{indent}ip route {} {}",
                    r.prefix,
                    ip(m.links[h].to_addr)
                );
            }
        }
    };
    if split {
        for &d in r.domains {
            let _ = writeln!(w, "vrf {}", m.domains[d].vrf);
            statics(w, d, " ");
            let _ = writeln!(w, "exit-vrf");
            let _ = writeln!(w, "!");
        }
    }
    for p in dev.ports.iter().filter(|p| r.domains.contains(&p.domain)) {
        let name = Frr.port_name(&m.plan.switch_list[p.domain], p.number);
        let text = description(m, &Frr, device, p.number);
        match p.kind {
            PortKind::Reserved => continue,
            PortKind::InterSwitch { link } => {
                let _ = writeln!(w, "interface {name}");
                let _ = writeln!(w, " description {text}");
                let _ = writeln!(w, " ip address {}/31", ip(m.links[link].from_addr));
            }
            PortKind::SubNode { .. } => {
                let _ = writeln!(w, "interface {name}");
                let _ = writeln!(w, " description {text}");
            }
            PortKind::Free => {
                let _ = writeln!(w, "interface {name}");
                let _ = writeln!(w, " description {text}");
                let _ = writeln!(w, " shutdown");
            }
        }
        let _ = writeln!(w, "exit");
        let _ = writeln!(w, "!");
    }
    for &d in r.domains {
        let dom = &m.domains[d];
        if dom.gateways.is_empty() {
            continue;
        }
        let name = if split {
            bridge(m, d)
        } else {
            "br0".to_string()
        };
        let _ = writeln!(w, "interface {name}");
        let _ = writeln!(
            w,
            " description {}",
            names::description(&format!("sub-nodes of {}", m.name(d)), 255)
        );
        for g in &dom.gateways {
            let _ = writeln!(w, " ip address {}/{}", ip(g.addr), g.prefix.len);
        }
        let _ = writeln!(w, "exit");
        let _ = writeln!(w, "!");
    }
    if !split {
        for &d in r.domains {
            let before = w.len();
            statics(w, d, "");
            if w.len() > before {
                let _ = writeln!(w, "!");
            }
        }
    }
    if let Some(bgp) = bgp {
        let mut any = false;
        for (_, s) in bgp.routed_of(device).filter(|(d, _)| r.domains.contains(d)) {
            any = true;
            let vrf = if split {
                format!(" vrf {}", s.vrf)
            } else {
                String::new()
            };
            let _ = writeln!(w, "router bgp {}{vrf}", s.asn);
            if let Some(id) = s.router_id {
                let _ = writeln!(w, " bgp router-id {id}");
            }
            let _ = writeln!(w, " no bgp ebgp-requires-policy");
            let _ = writeln!(w, " bgp bestpath as-path multipath-relax");
            for x in &s.sessions {
                let _ = writeln!(w, " neighbor {} remote-as {}", x.peer, x.peer_asn);
                let _ = writeln!(
                    w,
                    " neighbor {} description {}",
                    x.peer,
                    description(m, &Frr, device, x.port)
                );
                let _ = writeln!(w, " neighbor {} bfd", x.peer);
                let _ = writeln!(w, " neighbor {} bfd profile {BFD_PROFILE}", x.peer);
            }
            let _ = writeln!(w, " !");
            let _ = writeln!(w, " address-family ipv4 unicast");
            for p in &s.announced {
                let _ = writeln!(w, "  network {p}");
            }
            let _ = writeln!(w, "  maximum-paths {}", s.max_paths);
            let _ = writeln!(w, " exit-address-family");
            let _ = writeln!(w, "exit");
            let _ = writeln!(w, "!");
        }
        if any {
            let b = bgp.bfd;
            let _ = writeln!(w, "bfd");
            let _ = writeln!(w, " profile {BFD_PROFILE}");
            let _ = writeln!(w, "  detect-multiplier {}", b.multiplier);
            let _ = writeln!(w, "  receive-interval {}", b.rx_ms);
            let _ = writeln!(w, "  transmit-interval {}", b.tx_ms);
            let _ = writeln!(w, " exit");
            let _ = writeln!(w, " !");
            let _ = writeln!(w, "exit");
            let _ = writeln!(w, "!");
        }
    }
    let _ = writeln!(w, "end");
    out
}
