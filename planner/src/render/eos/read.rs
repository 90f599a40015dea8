//! Arista EOS (`show running-config` text): indented blocks.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Result;
use crate::render::parse::{
    ParsedConfig, ParsedRoute, View, bgp_of, interface_bfd, members, number, syntax,
};

pub(super) fn read(text: &str, file: &str) -> Result<ParsedConfig> {
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
