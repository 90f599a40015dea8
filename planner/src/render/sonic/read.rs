//! SONiC `config_db.json`: its tables, and frrcfgd's BGP and BFD tables.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::render::parse::{
    ParsedConfig, ParsedRoute, bgp_of, members, number, number_list, small, syntax,
};

type Db = BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>;

pub(super) fn read(text: &str, file: &str) -> Result<ParsedConfig> {
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
