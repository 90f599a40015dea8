//! Comware 7 (`display current-configuration` text): views opened by
//! `interface`, `vlan`, `bgp` and closed by `#`.

use crate::error::Result;
use crate::render::parse::{
    ParsedConfig, ParsedRoute, View, bgp_of, interface_bfd, mask_len, members, number, syntax,
};

pub(super) fn read(text: &str, file: &str) -> Result<ParsedConfig> {
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
                        let ip = frame.saturating_sub(crate::render::COMWARE_FRAME_OVERHEAD);
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
