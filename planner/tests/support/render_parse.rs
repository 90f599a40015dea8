//! Test-only readers of rendered switch configurations, shared by the library's unit tests and the integration tests.
//!
//! What a file says about VLANs and their ports, VRFs, interfaces
//! (descriptions, addresses, MTU, PFC), the DSCP map and static routes, in
//! one vendor-neutral form. The library's tests include this file with
//! `#[path]` (and `extern crate self as planner` in test builds), the test
//! binaries as a module of their own; it does not ship in the library.
//!
//! They read what `planner::render::render` writes, line by line (Comware, EOS,
//! NVUE) or as JSON (SONiC), and reject commands they do not know, so a
//! round trip proves the files say what the plan says. They are not
//! general parsers of every configuration a switch can hold.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use planner::error::{Error, Result};
use planner::render::Vendor;

/// What a configuration file says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedConfig {
    /// Host name.
    pub hostname: String,
    /// VLANs by id.
    pub vlans: BTreeMap<u16, ParsedVlan>,
    /// VRF names.
    pub vrfs: BTreeSet<String>,
    /// Physical interfaces by name.
    pub interfaces: BTreeMap<String, ParsedInterface>,
    /// Priority of each DSCP the file maps.
    pub dscp_map: BTreeMap<u8, u8>,
    /// Static routes.
    pub routes: BTreeSet<ParsedRoute>,
    /// BGP instances by VRF (`default` for FRR's default VRF).
    pub bgp: BTreeMap<String, ParsedBgp>,
    /// BFD timers the file sets, `(tx ms, rx ms, multiplier)`, wherever
    /// it sets them (per interface, per neighbour or in a profile).
    pub bfd: BTreeSet<(u32, u32, u32)>,
}

/// A BGP instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedBgp {
    /// Its ASN.
    pub asn: u32,
    /// Router ID.
    pub router_id: Option<String>,
    /// ECMP over paths of equal length through different ASNs.
    pub multipath_relax: bool,
    /// `maximum-paths` (eBGP).
    pub max_paths: Option<u32>,
    /// Announced prefixes, `a.b.c.d/len`.
    pub networks: BTreeSet<String>,
    /// Neighbours by address.
    pub neighbors: BTreeMap<String, ParsedNeighbor>,
}

/// A BGP neighbour.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedNeighbor {
    /// Its ASN.
    pub remote_as: u32,
    /// BFD on the session.
    pub bfd: bool,
    /// Description.
    pub description: String,
}

/// A VLAN.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedVlan {
    /// Its name, where the format has one.
    pub name: Option<String>,
    /// Untagged member ports.
    pub members: BTreeSet<String>,
    /// The VRF of its VLAN interface.
    pub vrf: Option<String>,
    /// The VLAN interface's addresses, `a.b.c.d/len`.
    pub addresses: BTreeSet<String>,
}

/// A physical interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedInterface {
    /// Description.
    pub description: String,
    /// Access VLAN.
    pub access_vlan: Option<u16>,
    /// VRF of a routed port.
    pub vrf: Option<String>,
    /// Address of a routed port, `a.b.c.d/len`.
    pub address: Option<String>,
    /// MTU.
    pub mtu: Option<u32>,
    /// Administratively down.
    pub shutdown: bool,
    /// Classifies by DSCP.
    pub trust_dscp: bool,
    /// PFC priorities.
    pub pfc: BTreeSet<u8>,
    /// BFD timers set on the interface: transmit ms, receive ms,
    /// multiplier.
    pub bfd: [Option<u32>; 3],
}

/// A static route.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ParsedRoute {
    /// VRF.
    pub vrf: String,
    /// Destination, `a.b.c.d/len`.
    pub prefix: String,
    /// Next-hop address.
    pub next_hop: String,
}

/// Reads a rendered configuration of `vendor`; `file` names it in errors.
pub fn parse(vendor: Vendor, text: &str, file: &str) -> Result<ParsedConfig> {
    match vendor {
        Vendor::Comware => comware(text, file),
        Vendor::Sonic => sonic(text, file),
        Vendor::Eos => eos(text, file),
        Vendor::Nvue => nvue(text, file),
        Vendor::Frr => frr(text, file),
    }
}

/// Collects the BFD timers set per interface into [`ParsedConfig::bfd`].
fn interface_bfd(c: &mut ParsedConfig) {
    for i in c.interfaces.values() {
        if let [Some(tx), Some(rx), Some(m)] = i.bfd {
            c.bfd.insert((tx, rx, m));
        }
    }
}

/// The BGP instance of `vrf`, made with `asn` when new.
fn bgp_of<'c>(c: &'c mut ParsedConfig, vrf: &str, asn: u32) -> &'c mut ParsedBgp {
    c.bgp.entry(vrf.to_string()).or_insert_with(|| ParsedBgp {
        asn,
        ..ParsedBgp::default()
    })
}

fn syntax(file: &str, line: usize, message: impl Into<String>) -> Error {
    Error::Syntax {
        file: file.to_string(),
        line,
        column: 1,
        message: message.into(),
    }
}

fn number<T: std::str::FromStr>(s: &str, file: &str, line: usize) -> Result<T> {
    s.parse()
        .map_err(|_| syntax(file, line, format!("`{s}` is not a number")))
}

/// `255.255.255.0` as a prefix length.
fn mask_len(mask: &str, file: &str, line: usize) -> Result<u32> {
    let m: std::net::Ipv4Addr = mask
        .parse()
        .map_err(|_| syntax(file, line, format!("`{mask}` is not a netmask")))?;
    let bits = u32::from(m);
    if bits.leading_ones() + bits.trailing_zeros() != 32 {
        return Err(syntax(file, line, format!("`{mask}` is not a netmask")));
    }
    Ok(bits.leading_ones())
}

/// `0-3,5` as numbers.
fn number_list(s: &str, file: &str, line: usize) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for item in s.split(',') {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (number(a, file, line)?, number(b, file, line)?);
                if b < a || b - a > 4096 {
                    return Err(syntax(file, line, format!("bad range `{item}`")));
                }
                out.extend(a..=b);
            }
            None => out.push(number(item, file, line)?),
        }
    }
    Ok(out)
}

fn small(v: u32, file: &str, line: usize) -> Result<u8> {
    u8::try_from(v).map_err(|_| syntax(file, line, format!("{v} is out of range")))
}

/// Fills VLAN members from access ports.
fn members(c: &mut ParsedConfig) {
    let access: Vec<(u16, String)> = c
        .interfaces
        .iter()
        .filter_map(|(n, i)| i.access_vlan.map(|v| (v, n.clone())))
        .collect();
    for (v, n) in access {
        c.vlans.entry(v).or_default().members.insert(n);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum View {
    Global,
    Interface(String),
    VlanInterface(u16),
    Vlan(u16),
    Vrf,
    DscpMap,
    Other,
    /// A BGP process or instance (its ASN), in a VRF once one is named.
    Bgp(u32, Option<String>),
}

fn comware(text: &str, file: &str) -> Result<ParsedConfig> {
    let mut c = ParsedConfig::default();
    let mut view = View::Global;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        if line.trim() == "#" || line.is_empty() {
            view = View::Global;
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let indented = line.starts_with(' ');
        if !indented {
            view = match words.as_slice() {
                ["interface", name] => match name.strip_prefix("Vlan-interface") {
                    Some(v) => View::VlanInterface(number(v, file, n)?),
                    None => {
                        c.interfaces.entry(name.to_string()).or_default();
                        View::Interface(name.to_string())
                    }
                },
                ["vlan", id] => {
                    let id = number(id, file, n)?;
                    c.vlans.entry(id).or_default();
                    View::Vlan(id)
                }
                ["ip", "vpn-instance", name] => {
                    c.vrfs.insert(name.to_string());
                    View::Vrf
                }
                ["qos", "map-table", "dscp-dot1p"] => View::DscpMap,
                ["qos", "map-table", "dot1p-lp"] | ["qos", "wred", "queue", "table", _] => {
                    View::Other
                }
                ["return"] => View::Global,
                ["bgp", asn] | ["bgp", asn, "instance", _] => {
                    View::Bgp(number(asn, file, n)?, None)
                }
                _ => return Err(syntax(file, n, format!("unknown Comware view `{line}`"))),
            };
            continue;
        }
        match (&view, words.as_slice()) {
            (View::Global, ["sysname", name]) => c.hostname = name.to_string(),
            (View::Global, ["lldp", "global", "enable"]) => {}
            (View::Global, ["priority-flow-control", "deadlock", ..]) => {}
            (View::Global, ["ip", "route-static", "vpn-instance", vrf, net, len, hop]) => {
                let len: u32 = number(len, file, n)?;
                c.routes.insert(ParsedRoute {
                    vrf: vrf.to_string(),
                    prefix: format!("{net}/{len}"),
                    next_hop: hop.to_string(),
                });
            }
            (View::Vlan(id), ["name", name]) => {
                c.vlans.entry(*id).or_default().name = Some(name.to_string());
            }
            (View::Vrf, ["description", ..]) => {}
            (View::DscpMap, ["import", d, "export", p]) => {
                let d: u8 = number(d, file, n)?;
                c.dscp_map.insert(d, number(p, file, n)?);
            }
            (View::Other, _) => {}
            (View::Bgp(asn, _), ["ip", "vpn-instance", vrf]) => {
                bgp_of(&mut c, vrf, *asn);
                view = View::Bgp(*asn, Some(vrf.to_string()));
            }
            (View::Bgp(asn, Some(vrf)), w) => {
                let b = bgp_of(&mut c, vrf, *asn);
                match w {
                    ["router-id", id] => b.router_id = Some(id.to_string()),
                    ["peer", a, "as-number", asn] => {
                        b.neighbors.entry(a.to_string()).or_default().remote_as =
                            number(asn, file, n)?;
                    }
                    ["peer", a, "description", ..] => {
                        let at = line.find("description").unwrap_or(0) + "description".len();
                        b.neighbors.entry(a.to_string()).or_default().description =
                            line[at..].trim().to_string();
                    }
                    ["peer", a, "bfd"] => b.neighbors.entry(a.to_string()).or_default().bfd = true,
                    ["address-family", "ipv4", "unicast"] | ["peer", _, "enable"] => {}
                    ["balance", "as-path-relax"] => b.multipath_relax = true,
                    ["balance", k] => b.max_paths = Some(number(k, file, n)?),
                    ["network", a, len] => {
                        let len: u32 = number(len, file, n)?;
                        b.networks.insert(format!("{a}/{len}"));
                    }
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown BGP command `{}`", line.trim()),
                        ));
                    }
                }
            }
            (View::VlanInterface(_), ["mtu", _]) => {}
            (View::VlanInterface(v), ["ip", "binding", "vpn-instance", vrf]) => {
                c.vlans.entry(*v).or_default().vrf = Some(vrf.to_string());
            }
            (View::VlanInterface(v), ["ip", "address", a, mask, rest @ ..])
                if rest.is_empty() || rest == ["sub"] =>
            {
                let len = mask_len(mask, file, n)?;
                c.vlans
                    .entry(*v)
                    .or_default()
                    .addresses
                    .insert(format!("{a}/{len}"));
            }
            (View::Interface(name), w) => {
                let i = c.interfaces.entry(name.clone()).or_default();
                match w {
                    ["port", "link-mode", _]
                    | ["stp", "edged-port"]
                    | ["qos", "wfq", ..]
                    | ["qos", "wred", "apply", _]
                    | ["priority-flow-control", "enable"]
                    | ["priority-flow-control", "deadlock", "enable"] => {}
                    ["description", ..] => {
                        i.description = line.trim_start()["description".len()..].trim().to_string();
                    }
                    ["ip", "binding", "vpn-instance", vrf] => i.vrf = Some(vrf.to_string()),
                    ["ip", "address", a, mask] => {
                        i.address = Some(format!("{a}/{}", mask_len(mask, file, n)?));
                    }
                    ["port", "access", "vlan", v] => i.access_vlan = Some(number(v, file, n)?),
                    // A frame length: the IP MTU plus the renderer's
                    // overhead, unless `mtu` says otherwise.
                    ["jumboframe", "enable", m] => {
                        let frame: u32 = number(m, file, n)?;
                        let ip = frame.saturating_sub(planner::render::COMWARE_FRAME_OVERHEAD);
                        i.mtu = Some(i.mtu.unwrap_or(ip));
                    }
                    ["mtu", m] => i.mtu = Some(number(m, file, n)?),
                    ["shutdown"] => i.shutdown = true,
                    ["qos", "trust", "dscp"] => i.trust_dscp = true,
                    ["bfd", "min-transmit-interval", v] => i.bfd[0] = Some(number(v, file, n)?),
                    ["bfd", "min-receive-interval", v] => i.bfd[1] = Some(number(v, file, n)?),
                    ["bfd", "detect-multiplier", v] => i.bfd[2] = Some(number(v, file, n)?),
                    ["priority-flow-control", "no-drop", "dot1p", list @ ..] => {
                        for p in list.iter() {
                            i.pfc.insert(number(p, file, n)?);
                        }
                    }
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown interface command `{}`", line.trim()),
                        ));
                    }
                }
            }
            _ => {
                return Err(syntax(
                    file,
                    n,
                    format!("unknown command `{}`", line.trim()),
                ));
            }
        }
    }
    members(&mut c);
    interface_bfd(&mut c);
    Ok(c)
}

fn eos(text: &str, file: &str) -> Result<ParsedConfig> {
    #[derive(Default)]
    struct Profile {
        trust: bool,
        pfc_on: bool,
        pfc: BTreeSet<u8>,
    }
    let mut c = ParsedConfig::default();
    let mut profiles: BTreeMap<String, Profile> = BTreeMap::new();
    let mut uses: BTreeMap<String, String> = BTreeMap::new();
    let mut view = View::Global;
    let mut profile = String::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('!') {
            if !line.starts_with(' ') {
                view = View::Global;
            }
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let depth = line.len() - trimmed.len();
        if depth == 0 {
            view = View::Global;
            match words.as_slice() {
                ["hostname", h] => c.hostname = h.to_string(),
                ["lldp", "run"] | ["end"] => {}
                ["vlan", id] => {
                    let id = number(id, file, n)?;
                    c.vlans.entry(id).or_default();
                    view = View::Vlan(id);
                }
                ["vrf", "instance", v] => {
                    c.vrfs.insert(v.to_string());
                    view = View::Vrf;
                }
                ["ip", "routing", "vrf", v] => {
                    c.vrfs.insert(v.to_string());
                }
                ["qos", "map", "dscp", rest @ ..] => {
                    let Some(pos) = rest.iter().position(|w| *w == "to") else {
                        return Err(syntax(file, n, "`qos map dscp` without `to`"));
                    };
                    let (dscps, tail) = rest.split_at(pos);
                    let ["to", "traffic-class", tc] = tail else {
                        return Err(syntax(file, n, "expected `to traffic-class N`"));
                    };
                    let tc: u8 = number(tc, file, n)?;
                    for d in dscps {
                        c.dscp_map.insert(number(d, file, n)?, tc);
                    }
                }
                ["priority-flow-control", "pause", "watchdog", ..]
                | ["qos", "map", "traffic-class", _, "to", "tx-queue", _] => {}
                ["qos", "profile", name] => {
                    profiles.entry(name.to_string()).or_default();
                    profile = name.to_string();
                    view = View::Other;
                }
                ["interface", name] => {
                    view = match name.strip_prefix("Vlan") {
                        Some(v) if v.chars().all(|c| c.is_ascii_digit()) => {
                            View::VlanInterface(number(v, file, n)?)
                        }
                        _ => {
                            c.interfaces.entry(name.to_string()).or_default();
                            View::Interface(name.to_string())
                        }
                    };
                }
                ["ip", "route", "vrf", vrf, prefix, hop] => {
                    c.routes.insert(ParsedRoute {
                        vrf: vrf.to_string(),
                        prefix: prefix.to_string(),
                        next_hop: hop.to_string(),
                    });
                }
                ["router", "bgp", asn] => view = View::Bgp(number(asn, file, n)?, None),
                _ => return Err(syntax(file, n, format!("unknown EOS command `{trimmed}`"))),
            }
            continue;
        }
        match (&view, words.as_slice()) {
            (View::Vlan(id), ["name", name]) => {
                c.vlans.entry(*id).or_default().name = Some(name.to_string());
            }
            (View::Bgp(asn, _), ["vrf", vrf]) if depth == 3 => {
                bgp_of(&mut c, vrf, *asn);
                view = View::Bgp(*asn, Some(vrf.to_string()));
            }
            (View::Bgp(asn, Some(vrf)), w) => {
                let b = bgp_of(&mut c, vrf, *asn);
                match w {
                    ["local-as", asn] => b.asn = number(asn, file, n)?,
                    ["router-id", id] => b.router_id = Some(id.to_string()),
                    ["bgp", "bestpath", "as-path", "multipath-relax"] => b.multipath_relax = true,
                    ["maximum-paths", k, "ecmp", e] if k == e => {
                        b.max_paths = Some(number(k, file, n)?);
                    }
                    ["neighbor", a, "remote-as", asn] => {
                        b.neighbors.entry(a.to_string()).or_default().remote_as =
                            number(asn, file, n)?;
                    }
                    ["neighbor", a, "description", ..] => {
                        let at = trimmed.find("description").unwrap_or(0) + "description".len();
                        b.neighbors.entry(a.to_string()).or_default().description =
                            trimmed[at..].trim().to_string();
                    }
                    ["neighbor", a, "bfd"] => {
                        b.neighbors.entry(a.to_string()).or_default().bfd = true;
                    }
                    ["network", p] => {
                        b.networks.insert(p.to_string());
                    }
                    _ => {
                        return Err(syntax(file, n, format!("unknown BGP command `{trimmed}`")));
                    }
                }
            }
            (View::Other, w) => {
                let p = profiles.entry(profile.clone()).or_default();
                match w {
                    ["qos", "trust", "dscp"] => p.trust = true,
                    ["priority-flow-control", "on"] => p.pfc_on = true,
                    ["priority-flow-control", "priority", x, "no-drop"] => {
                        p.pfc.insert(number(x, file, n)?);
                    }
                    ["uc-tx-queue", _] | ["random-detect", "ecn", ..] | ["priority", "strict"] => {}
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown qos profile command `{trimmed}`"),
                        ));
                    }
                }
            }
            (View::VlanInterface(v), w) => {
                let vl = c.vlans.entry(*v).or_default();
                match w {
                    ["mtu", _] => {}
                    ["vrf", vrf] => vl.vrf = Some(vrf.to_string()),
                    ["ip", "address", a] | ["ip", "address", a, "secondary"] => {
                        vl.addresses.insert(a.to_string());
                    }
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown VLAN interface command `{trimmed}`"),
                        ));
                    }
                }
            }
            (View::Interface(name), w) => {
                let i = c.interfaces.entry(name.clone()).or_default();
                match w {
                    ["no", "switchport"] | ["spanning-tree", "portfast"] => {}
                    ["qos", "trust", "dscp"] => i.trust_dscp = true,
                    ["description", ..] => {
                        i.description = trimmed["description".len()..].trim().to_string();
                    }
                    ["mtu", m] => i.mtu = Some(number(m, file, n)?),
                    ["vrf", vrf] => i.vrf = Some(vrf.to_string()),
                    ["ip", "address", a] => i.address = Some(a.to_string()),
                    ["switchport", "access", "vlan", v] => {
                        i.access_vlan = Some(number(v, file, n)?);
                    }
                    ["shutdown"] => i.shutdown = true,
                    ["service-profile", p] => {
                        uses.insert(name.clone(), p.to_string());
                    }
                    ["bfd", "interval", tx, "min-rx", rx, "multiplier", m] => {
                        i.bfd = [
                            Some(number(tx, file, n)?),
                            Some(number(rx, file, n)?),
                            Some(number(m, file, n)?),
                        ];
                    }
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown interface command `{trimmed}`"),
                        ));
                    }
                }
            }
            _ => return Err(syntax(file, n, format!("unknown command `{trimmed}`"))),
        }
    }
    for (name, p) in uses {
        let Some(profile) = profiles.get(&p) else {
            return Err(syntax(
                file,
                0,
                format!("interface {name} uses qos profile {p}, which is not defined"),
            ));
        };
        if let Some(i) = c.interfaces.get_mut(&name) {
            i.trust_dscp |= profile.trust;
            if profile.pfc_on {
                i.pfc = profile.pfc.clone();
            }
        }
    }
    members(&mut c);
    interface_bfd(&mut c);
    Ok(c)
}

/// Splits a shell line into words: single quotes, with `'\''` for a quote.
fn shell_words(line: &str, file: &str, n: usize) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err(syntax(file, n, "unclosed quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(x) => cur.push(x),
                    None => return Err(syntax(file, n, "a line ends in a backslash")),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '"' | '$' | '`' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => {
                return Err(syntax(
                    file,
                    n,
                    format!("`{ch}` outside single quotes; the renderer quotes every word"),
                ));
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn nvue(text: &str, file: &str) -> Result<ParsedConfig> {
    let mut c = ParsedConfig::default();
    let mut trust = false;
    let mut pfc: BTreeSet<u8> = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line == "set -e" {
            continue;
        }
        let words = shell_words(line, file, n)?;
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let Some(cmd) = w.strip_prefix(&["nv", "set"]) else {
            return Err(syntax(
                file,
                n,
                format!("not an `nv set` command: `{line}`"),
            ));
        };
        match cmd {
            ["system", "hostname", h] => c.hostname = h.to_string(),
            ["service", "lldp"] | ["system", "lldp"] => {}
            ["vrf", v, "table", "auto"] => {
                c.vrfs.insert(v.to_string());
            }
            ["vrf", v, "router", "static", prefix, "via", hop] => {
                c.routes.insert(ParsedRoute {
                    vrf: v.to_string(),
                    prefix: prefix.to_string(),
                    next_hop: hop.to_string(),
                });
            }
            ["bridge", "domain", "br_default", "vlan", list] => {
                for v in number_list(list, file, n)? {
                    let v = u16::try_from(v).map_err(|_| syntax(file, n, "bad VLAN id"))?;
                    c.vlans.entry(v).or_default();
                }
            }
            ["qos", "mapping", "default-global", "trust", "l3"] => trust = true,
            [
                "qos",
                "mapping",
                "default-global",
                "dscp",
                list,
                "switch-priority",
                sp,
            ] => {
                let sp: u8 = number(sp, file, n)?;
                for d in number_list(list, file, n)? {
                    c.dscp_map.insert(small(d, file, n)?, sp);
                }
            }
            ["qos", "pfc", "default-global", "switch-priority", list] => {
                for p in number_list(list, file, n)? {
                    pfc.insert(small(p, file, n)?);
                }
            }
            ["qos", "pfc", "default-global", "tx" | "rx", "enable"]
            | ["qos", "traffic-pool", ..]
            | ["qos", "congestion-control", ..]
            | ["qos", "pfc-watchdog", ..]
            | ["qos", "egress-scheduler", ..] => {}
            ["router", "bgp", "enable", "on"]
            | ["router", "bgp", "autonomous-system", _]
            | ["router", "bfd", "enable", "on"] => {}
            ["vrf", v, "router", "bgp", rest @ ..] => {
                let b = bgp_of(&mut c, v, 0);
                match rest {
                    ["enable", "on"] | ["address-family", "ipv4-unicast", "enable", "on"] => {}
                    ["autonomous-system", asn] => b.asn = number(asn, file, n)?,
                    ["router-id", id] => b.router_id = Some(id.to_string()),
                    ["path-selection", "multipath", "aspath-ignore", "on"] => {
                        b.multipath_relax = true;
                    }
                    ["address-family", "ipv4-unicast", "multipaths", "ebgp", k] => {
                        b.max_paths = Some(number(k, file, n)?);
                    }
                    ["address-family", "ipv4-unicast", "network", p] => {
                        b.networks.insert(p.to_string());
                    }
                    ["neighbor", a, what @ ..] => {
                        let nb = b.neighbors.entry(a.to_string()).or_default();
                        match what {
                            ["remote-as", asn] => nb.remote_as = number(asn, file, n)?,
                            ["type", "numbered"] => {}
                            ["description", d] => nb.description = d.to_string(),
                            ["bfd", "enable", "on"] => nb.bfd = true,
                            ["bfd", "detect-multiplier", _]
                            | ["bfd", "min-rx-interval", _]
                            | ["bfd", "min-tx-interval", _] => {
                                let k = if what[1] == "detect-multiplier" {
                                    2
                                } else if what[1] == "min-rx-interval" {
                                    1
                                } else {
                                    0
                                };
                                let i = c.interfaces.entry(format!("neighbor {a}")).or_default();
                                i.bfd[k] = Some(number(what[2], file, n)?);
                            }
                            _ => {
                                return Err(syntax(
                                    file,
                                    n,
                                    format!("unknown BGP neighbour command `{line}`"),
                                ));
                            }
                        }
                    }
                    _ => return Err(syntax(file, n, format!("unknown BGP command `{line}`"))),
                }
            }
            ["interface", name, rest @ ..] if name.starts_with("vlan") => {
                let v: u16 = number(&name["vlan".len()..], file, n)?;
                let vl = c.vlans.entry(v).or_default();
                match rest {
                    ["ip", "vrf", vrf] => vl.vrf = Some(vrf.to_string()),
                    ["ip", "address", a] => {
                        vl.addresses.insert(a.to_string());
                    }
                    _ => return Err(syntax(file, n, format!("unknown SVI command `{line}`"))),
                }
            }
            ["interface", name, rest @ ..] => {
                let i = c.interfaces.entry(name.to_string()).or_default();
                match rest {
                    ["description", d] => i.description = d.to_string(),
                    ["link", "mtu", m] => i.mtu = Some(number(m, file, n)?),
                    ["link", "state", "down"] => i.shutdown = true,
                    ["ip", "vrf", vrf] => i.vrf = Some(vrf.to_string()),
                    ["ip", "address", a] => i.address = Some(a.to_string()),
                    ["bridge", "domain", "br_default", "access", v] => {
                        i.access_vlan = Some(number(v, file, n)?);
                    }
                    ["qos", "pfc-watchdog"] => {}
                    _ => {
                        return Err(syntax(
                            file,
                            n,
                            format!("unknown interface command `{line}`"),
                        ));
                    }
                }
            }
            _ => return Err(syntax(file, n, format!("unknown NVUE command `{line}`"))),
        }
    }
    // Per-neighbour BFD timers were gathered as pseudo-interfaces.
    interface_bfd(&mut c);
    c.interfaces
        .retain(|name, _| !name.starts_with("neighbor "));
    // The default-global profiles apply to every port that is up.
    for i in c.interfaces.values_mut() {
        if !i.shutdown {
            i.trust_dscp = trust;
            i.pfc = pfc.clone();
        }
    }
    members(&mut c);
    Ok(c)
}

type Db = BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>;

fn sonic(text: &str, file: &str) -> Result<ParsedConfig> {
    let db: Db = serde_json::from_str(text).map_err(|e| Error::json(file, &e))?;
    let empty = BTreeMap::new();
    let table = |name: &str| db.get(name).unwrap_or(&empty);
    let mut c = ParsedConfig {
        hostname: table("DEVICE_METADATA")
            .get("localhost")
            .and_then(|f| f.get("hostname"))
            .cloned()
            .unwrap_or_default(),
        ..ParsedConfig::default()
    };
    let vlan_id = |key: &str| -> Result<u16> {
        key.strip_prefix("Vlan")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| syntax(file, 0, format!("`{key}` is not a VLAN name")))
    };
    for key in table("VRF").keys() {
        c.vrfs.insert(key.clone());
    }
    for key in table("VLAN").keys() {
        c.vlans.entry(vlan_id(key)?).or_default();
    }
    for key in table("VLAN_MEMBER").keys() {
        let Some((v, port)) = key.split_once('|') else {
            return Err(syntax(file, 0, format!("VLAN_MEMBER key `{key}`")));
        };
        let v = vlan_id(v)?;
        c.interfaces
            .entry(port.to_string())
            .or_default()
            .access_vlan = Some(v);
    }
    for (key, f) in table("VLAN_INTERFACE") {
        match key.split_once('|') {
            Some((v, addr)) => {
                c.vlans
                    .entry(vlan_id(v)?)
                    .or_default()
                    .addresses
                    .insert(addr.to_string());
            }
            None => c.vlans.entry(vlan_id(key)?).or_default().vrf = f.get("vrf_name").cloned(),
        }
    }
    for (key, f) in table("PORT") {
        let i = c.interfaces.entry(key.clone()).or_default();
        i.description = f.get("description").cloned().unwrap_or_default();
        i.mtu = match f.get("mtu") {
            Some(m) => Some(number(m, file, 0)?),
            None => None,
        };
        i.shutdown = f.get("admin_status").map(String::as_str) == Some("down");
    }
    for (key, f) in table("INTERFACE") {
        match key.split_once('|') {
            Some((port, addr)) => {
                c.interfaces.entry(port.to_string()).or_default().address = Some(addr.to_string());
            }
            None => c.interfaces.entry(key.clone()).or_default().vrf = f.get("vrf_name").cloned(),
        }
    }
    let mut maps: BTreeSet<String> = BTreeSet::new();
    for (key, f) in table("PORT_QOS_MAP") {
        let i = c.interfaces.entry(key.clone()).or_default();
        if let Some(m) = f.get("dscp_to_tc_map") {
            i.trust_dscp = true;
            maps.insert(m.clone());
        }
        if let Some(list) = f.get("pfc_enable") {
            for p in number_list(list, file, 0)? {
                i.pfc.insert(small(p, file, 0)?);
            }
        }
    }
    if let Some(name) = maps.iter().next() {
        let Some(map) = table("DSCP_TO_TC_MAP").get(name) else {
            return Err(syntax(
                file,
                0,
                format!("DSCP_TO_TC_MAP {name} is not defined"),
            ));
        };
        for (d, tc) in map {
            c.dscp_map.insert(number(d, file, 0)?, number(tc, file, 0)?);
        }
    }
    for (key, f) in table("STATIC_ROUTE") {
        let Some((vrf, prefix)) = key.split_once('|') else {
            return Err(syntax(
                file,
                0,
                format!("STATIC_ROUTE key `{key}` has no VRF"),
            ));
        };
        for hop in f.get("nexthop").map_or("", String::as_str).split(',') {
            c.routes.insert(ParsedRoute {
                vrf: vrf.to_string(),
                prefix: prefix.to_string(),
                next_hop: hop.to_string(),
            });
        }
    }
    sonic_bgp(&mut c, &db, file)?;
    members(&mut c);
    Ok(c)
}

/// The BGP and BFD tables of a SONiC `config_db.json` (frrcfgd's).
fn sonic_bgp(c: &mut ParsedConfig, db: &Db, file: &str) -> Result<()> {
    let empty = BTreeMap::new();
    let table = |name: &str| db.get(name).unwrap_or(&empty);
    let field = |f: &BTreeMap<String, String>, k: &str| f.get(k).cloned().unwrap_or_default();
    for (vrf, f) in table("BGP_GLOBALS") {
        let b = bgp_of(c, vrf, number(&field(f, "local_asn"), file, 0)?);
        b.router_id = f.get("router_id").cloned();
        b.multipath_relax = field(f, "load_balance_mp_relax") == "true";
    }
    let split = |key: &str, n: usize| -> Result<Vec<String>> {
        let parts: Vec<String> = key.split('|').map(str::to_string).collect();
        if parts.len() == n {
            Ok(parts)
        } else {
            Err(syntax(file, 0, format!("key `{key}` has not {n} parts")))
        }
    };
    for (key, f) in table("BGP_GLOBALS_AF") {
        let k = split(key, 2)?;
        let b = bgp_of(c, &k[0], 0);
        b.max_paths = Some(number(&field(f, "max_ebgp_paths"), file, 0)?);
    }
    for key in table("BGP_GLOBALS_AF_NETWORK").keys() {
        let k = split(key, 3)?;
        bgp_of(c, &k[0], 0).networks.insert(k[2].clone());
    }
    for (key, f) in table("BGP_NEIGHBOR") {
        let k = split(key, 2)?;
        let nb = bgp_of(c, &k[0], 0)
            .neighbors
            .entry(k[1].clone())
            .or_default();
        nb.remote_as = number(&field(f, "asn"), file, 0)?;
        nb.bfd = field(f, "bfd") == "true";
        nb.description = field(f, "name");
    }
    for f in table("BFD_PEER_SINGLE_HOP").values() {
        c.bfd.insert((
            number(&field(f, "desired-minimum-tx-interval"), file, 0)?,
            number(&field(f, "required-minimum-receive"), file, 0)?,
            number(&field(f, "detection-multiplier"), file, 0)?,
        ));
    }
    Ok(())
}

/// Where an FRR reader is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FrrBlock {
    Top,
    Vrf(String),
    Interface(String),
    Bgp(String),
    BgpAf(String),
    Bfd,
    BfdProfile([Option<u32>; 3]),
}

/// Reads an `frr.conf`. The bridge `br-v<vlan>` is VLAN `<vlan>` and an
/// unsplit switch's `br0` is VLAN 0 (frr.conf does not say which VLAN it
/// serves); routes outside a `vrf` block are in VRF `default`.
fn frr(text: &str, file: &str) -> Result<ParsedConfig> {
    let mut c = ParsedConfig::default();
    let mut block = FrrBlock::Top;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('!') {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let unknown = || syntax(file, n, format!("unknown FRR command `{line}`"));
        let rest_after = |word: &str| {
            let at = line.find(word).unwrap_or(0) + word.len();
            line[at..].trim().to_string()
        };
        match (&mut block, w.as_slice()) {
            (FrrBlock::Top, ["frr", "defaults", "datacenter"])
            | (FrrBlock::Top, ["service", "integrated-vtysh-config"])
            | (FrrBlock::Top, ["no", "zebra", "nexthop", "kernel", "enable"])
            | (FrrBlock::Top, ["end"]) => {}
            (FrrBlock::Top, ["hostname", h]) => c.hostname = h.to_string(),
            (FrrBlock::Top, ["vrf", v]) => {
                c.vrfs.insert(v.to_string());
                block = FrrBlock::Vrf(v.to_string());
            }
            (FrrBlock::Vrf(_), ["exit-vrf"]) => block = FrrBlock::Top,
            (FrrBlock::Top, ["ip", "route", p, hop]) => {
                c.routes.insert(ParsedRoute {
                    vrf: "default".to_string(),
                    prefix: p.to_string(),
                    next_hop: hop.to_string(),
                });
            }
            (FrrBlock::Vrf(v), ["ip", "route", p, hop]) => {
                c.routes.insert(ParsedRoute {
                    vrf: v.clone(),
                    prefix: p.to_string(),
                    next_hop: hop.to_string(),
                });
            }
            (FrrBlock::Top, ["interface", name]) => block = FrrBlock::Interface(name.to_string()),
            (FrrBlock::Interface(name), w) => {
                let vlan = if *name == "br0" {
                    Some(0)
                } else {
                    name.strip_prefix("br-v")
                        .map(|v| number::<u16>(v, file, n))
                        .transpose()?
                };
                match (vlan, w) {
                    (_, ["exit"]) => block = FrrBlock::Top,
                    (Some(v), ["ip", "address", a]) => {
                        c.vlans
                            .entry(v)
                            .or_default()
                            .addresses
                            .insert(a.to_string());
                    }
                    (Some(_), ["description", ..]) => {}
                    (None, ["description", ..]) => {
                        c.interfaces.entry(name.clone()).or_default().description =
                            rest_after("description");
                    }
                    (None, ["ip", "address", a]) => {
                        c.interfaces.entry(name.clone()).or_default().address = Some(a.to_string());
                    }
                    (None, ["shutdown"]) => {
                        c.interfaces.entry(name.clone()).or_default().shutdown = true;
                    }
                    _ => return Err(unknown()),
                }
            }
            (FrrBlock::Top, ["router", "bgp", asn, tail @ ..]) => {
                let vrf = match tail {
                    [] => "default",
                    ["vrf", v] => v,
                    _ => return Err(unknown()),
                };
                bgp_of(&mut c, vrf, number(asn, file, n)?);
                block = FrrBlock::Bgp(vrf.to_string());
            }
            (FrrBlock::Bgp(_), ["exit"]) => block = FrrBlock::Top,
            (FrrBlock::Bgp(v), ["address-family", "ipv4", "unicast"]) => {
                block = FrrBlock::BgpAf(v.clone());
            }
            (FrrBlock::Bgp(v), w) => {
                let b = bgp_of(&mut c, v, 0);
                match w {
                    ["bgp", "router-id", id] => b.router_id = Some(id.to_string()),
                    ["no", "bgp", "ebgp-requires-policy"] => {}
                    ["bgp", "bestpath", "as-path", "multipath-relax"] => b.multipath_relax = true,
                    ["neighbor", a, "remote-as", asn] => {
                        b.neighbors.entry(a.to_string()).or_default().remote_as =
                            number(asn, file, n)?;
                    }
                    ["neighbor", a, "description", ..] => {
                        b.neighbors.entry(a.to_string()).or_default().description =
                            rest_after("description");
                    }
                    ["neighbor", a, "bfd"] => {
                        b.neighbors.entry(a.to_string()).or_default().bfd = true
                    }
                    ["neighbor", _, "bfd", "profile", _] => {}
                    _ => return Err(unknown()),
                }
            }
            (FrrBlock::BgpAf(v), w) => {
                let v = v.clone();
                let b = bgp_of(&mut c, &v, 0);
                match w {
                    ["exit-address-family"] => block = FrrBlock::Bgp(v),
                    ["network", p] => {
                        b.networks.insert(p.to_string());
                    }
                    ["maximum-paths", k] => b.max_paths = Some(number(k, file, n)?),
                    _ => return Err(unknown()),
                }
            }
            (FrrBlock::Top, ["bfd"]) => block = FrrBlock::Bfd,
            (FrrBlock::Bfd, ["exit"]) => block = FrrBlock::Top,
            (FrrBlock::Bfd, ["profile", _]) => block = FrrBlock::BfdProfile([None; 3]),
            (FrrBlock::BfdProfile(t), w) => match w {
                ["transmit-interval", v] => t[0] = Some(number(v, file, n)?),
                ["receive-interval", v] => t[1] = Some(number(v, file, n)?),
                ["detect-multiplier", v] => t[2] = Some(number(v, file, n)?),
                ["exit"] => {
                    if let [Some(tx), Some(rx), Some(m)] = *t {
                        c.bfd.insert((tx, rx, m));
                    }
                    block = FrrBlock::Bfd;
                }
                _ => return Err(unknown()),
            },
            _ => return Err(unknown()),
        }
    }
    if block != FrrBlock::Top {
        return Err(syntax(file, 0, format!("the file ends inside {block:?}")));
    }
    Ok(c)
}
