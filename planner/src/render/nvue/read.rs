//! NVIDIA Cumulus Linux NVUE: the rendered script of `nv set` commands.

use std::collections::BTreeSet;

use crate::error::Result;
use crate::render::parse::{
    ParsedConfig, ParsedRoute, bgp_of, interface_bfd, members, number, number_list, small, syntax,
};

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

pub(super) fn read(text: &str, file: &str) -> Result<ParsedConfig> {
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
