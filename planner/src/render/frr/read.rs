//! FRRouting `frr.conf`.

use crate::error::Result;
use crate::render::parse::{ParsedConfig, ParsedRoute, bgp_of, number, syntax};

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
pub(super) fn read(text: &str, file: &str) -> Result<ParsedConfig> {
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
