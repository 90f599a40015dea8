//! What an NVUE switch answers to the operational reads verification
//! makes (interfaces with their link and LLDP neighbours, BGP neighbours
//! per VRF, the RIB in either documented shape, the next-hop groups),
//! read into the push's [`Observed`]. The REST session, revisions and
//! confirm exchange that ask for them are `nvue.rs`; these readers are
//! apart from it so that each is tested on the device's JSON alone.

use serde_json::Value;

use super::device::{BfdPeer, BgpSession, Interface, LldpNeighbour, Observed, Route};

/// Mb/s of an NVUE speed (`100G`, `400G`, `25000M`).
fn speed_mbps(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit() && c != '.')?);
    let n: f64 = n.parse().ok()?;
    let f = match unit {
        "G" | "g" | "Gbps" => 1000.0,
        "M" | "m" | "Mbps" => 1.0,
        "T" => 1_000_000.0,
        _ => return None,
    };
    Some((n * f).round() as u64)
}

pub(super) fn obj(v: &Value) -> impl Iterator<Item = (&String, &Value)> {
    v.as_object().into_iter().flatten()
}

/// The operational trees as [`Observed`].
pub(super) fn observed(ifs: &Value, vrfs: &Value) -> Observed {
    let mut o = Observed::default();
    for (name, i) in obj(ifs) {
        let up = match i.pointer("/link/state") {
            Some(Value::Object(m)) => m.contains_key("up"),
            Some(Value::String(s)) => s == "up",
            _ => false,
        };
        let speed = i
            .pointer("/link/speed")
            .and_then(Value::as_str)
            .and_then(speed_mbps);
        o.interfaces.push(Interface {
            name: name.clone(),
            up,
            speed_mbps: speed,
        });
        for (id, n) in obj(i.pointer("/lldp/neighbor").unwrap_or(&Value::Null)) {
            o.lldp.push(LldpNeighbour {
                port: name.clone(),
                system: n
                    .pointer("/chassis/system-name")
                    .and_then(Value::as_str)
                    .unwrap_or(id)
                    .to_string(),
                port_id: n
                    .pointer("/port/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            });
        }
    }
    for (vrf, v) in obj(vrfs) {
        for (peer, n) in obj(v.pointer("/router/bgp/neighbor").unwrap_or(&Value::Null)) {
            o.bgp.push(BgpSession {
                vrf: vrf.clone(),
                peer: peer.clone(),
                remote_as: n
                    .get("remote-as")
                    .and_then(Value::as_u64)
                    .and_then(|a| u32::try_from(a).ok()),
                // The session state: `session-state` from 5.15, where
                // `state` is the neighbour's admin state (`enabled`); `state`
                // before (the 5.15 and 5.11 Troubleshooting-BGP pages).
                established: n
                    .get("session-state")
                    .or_else(|| n.get("state"))
                    .and_then(Value::as_str)
                    == Some("established"),
                // FRR's reset reason (`last-reset-reason`, the 5.15
                // Troubleshooting-BGP page's neighbour view); strings of an
                // answer arrive escaped (http.rs).
                last_reset: n
                    .get("last-reset-reason")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                    .map(str::to_string),
            });
            if let Some(s) = n.pointer("/bfd/status").and_then(Value::as_str) {
                o.bfd.push(BfdPeer {
                    vrf: vrf.clone(),
                    peer: peer.clone(),
                    up: s == "up",
                });
            }
        }
    }
    o.routes = routes(vrfs, None);
    o
}

/// True when a VRF's RIB lists routes as `route-entry` with next-hop
/// groups.
pub(super) fn uses_groups(vrfs: &Value) -> bool {
    obj(vrfs).any(|(_, v)| {
        obj(v.pointer("/router/rib/ipv4/route").unwrap_or(&Value::Null))
            .any(|(_, r)| r.get("route-entry").is_some())
    })
}

/// The IPv4 routes of every VRF, in either documented shape of `nv show
/// vrf <v> router rib ipv4 route`:
///
/// - `route/<prefix>/protocol/<proto>/entry-index/<n>/via/<via>` (the
///   NVUE command reference, RIB.md, "Introduced in Cumulus Linux 5.0.0");
/// - `route/<prefix>/route-entry/<n>/{protocol, nexthop-group-id}` with
///   the next hops in `router nexthop rib <id> resolved-via <via>`
///   (NVUE-API.md of 5.15, "Retrieve View Types"; `groups` is that tree,
///   when read).
pub(super) fn routes(vrfs: &Value, groups: Option<&Value>) -> Vec<Route> {
    let mut out = Vec::new();
    for (vrf, v) in obj(vrfs) {
        for (prefix, r) in obj(v.pointer("/router/rib/ipv4/route").unwrap_or(&Value::Null)) {
            let mut hops: Vec<String> = Vec::new();
            for (_, p) in obj(r.get("protocol").unwrap_or(&Value::Null)) {
                for (_, e) in obj(p.get("entry-index").unwrap_or(&Value::Null)) {
                    hops.extend(obj(e.get("via").unwrap_or(&Value::Null)).map(|(a, _)| a.clone()));
                }
            }
            for (_, e) in obj(r.get("route-entry").unwrap_or(&Value::Null)) {
                let id = match e.get("nexthop-group-id") {
                    Some(Value::Number(n)) => n.to_string(),
                    Some(Value::String(s)) => s.clone(),
                    _ => continue,
                };
                if let Some(g) = groups.and_then(|g| g.get(&id)) {
                    hops.extend(
                        obj(g.get("resolved-via").unwrap_or(&Value::Null)).map(|(a, _)| a.clone()),
                    );
                }
            }
            hops.sort();
            hops.dedup();
            out.push(Route {
                vrf: vrf.clone(),
                prefix: prefix.clone(),
                next_hops: hops,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn speeds_in_mbps() {
        assert_eq!(speed_mbps("100G"), Some(100_000));
        assert_eq!(speed_mbps("25000M"), Some(25_000));
        assert_eq!(speed_mbps("1.6T"), Some(1_600_000));
        assert_eq!(speed_mbps("fast"), None);
    }

    #[test]
    fn operational_trees_are_read() {
        let ifs = json!({
            "swp1": {"link": {"state": {"up": {}}, "speed": "100G"},
                     "lldp": {"neighbor": {"sw02": {"chassis": {"system-name": "sw02"}, "port": {"name": "swp17"}}}}},
            "swp2": {"link": {"state": {"down": {}}}}
        });
        let vrfs = json!({"Vrf101": {"router": {
            "bgp": {"neighbor": {"10.255.0.1": {"state": "established", "remote-as": 65002, "bfd": {"status": "up"}},
                                 "10.255.0.3": {"session-state": "idle", "state": "enabled", "remote-as": 65004,
                                                "last-reset-reason": "BGP Notification received", "last-reset-code": 13}}},
            "rib": {"ipv4": {"route": {"10.100.1.0/24": {"protocol": {"bgp": {"entry-index": {"1": {"via": {"10.255.0.1": {}, "10.255.0.3": {}}}}}}}}}}
        }}});
        let o = observed(&ifs, &vrfs);
        assert_eq!(o.interfaces.len(), 2);
        assert!(o.interfaces[0].up && !o.interfaces[1].up);
        assert_eq!(o.interfaces[0].speed_mbps, Some(100_000));
        assert_eq!(
            o.lldp,
            vec![LldpNeighbour {
                port: "swp1".into(),
                system: "sw02".into(),
                port_id: "swp17".into()
            }]
        );
        assert_eq!(o.bgp[0].remote_as, Some(65002));
        assert!(o.bgp[0].established && o.bfd[0].up);
        // 5.15's detail: `session-state`, with `state` the admin state.
        assert_eq!(o.bgp[1].remote_as, Some(65004));
        assert!(!o.bgp[1].established);
        assert_eq!(
            o.bgp[1].last_reset.as_deref(),
            Some("BGP Notification received")
        );
        assert_eq!(o.routes[0].next_hops, vec!["10.255.0.1", "10.255.0.3"]);
        // The 5.15 shape: next-hop groups.
        let vrfs = json!({"default": {"router": {"rib": {"ipv4": {"route": {"10.100.1.0/24":
            {"route-entry": {"1": {"protocol": "bgp", "nexthop-group-id": 45}}}}}}}}});
        assert!(uses_groups(&vrfs));
        let groups = json!({"45": {"resolved-via": {"10.255.0.3": {}, "10.255.0.1": {}}}});
        assert_eq!(
            routes(&vrfs, Some(&groups))[0].next_hops,
            vec!["10.255.0.1", "10.255.0.3"]
        );
    }
}
