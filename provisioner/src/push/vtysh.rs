//! FRRouting's `vtysh ... json` answers read into [`Observed`] parts: BGP
//! sessions, BFD peers and installed routes. SONiC runs FRR in its `bgp`
//! container and Cumulus and the lab run it directly, so one reader serves
//! every client that asks vtysh.
//!
//! Formats (FRR 8 to 10, as `vtysh` prints them; field names from FRR's
//! `bgpd/bgp_vty.c`, `bfdd/bfdd_vty.c` and `zebra/zebra_vty.c`):
//! - `show bgp vrf all summary json`: `{VRF: {"ipv4Unicast": {"peers":
//!   {PEER: {"remoteAs": N, "state": "Established", ...}}}, "ipv6Unicast":
//!   ...}}`; a VRF without BGP is absent;
//! - `show bfd peers json`: `[{"peer": ADDR, "vrf": VRF, "status": "up"},
//!   ...]`;
//! - `show ip route vrf all json`: `{VRF: {PREFIX: [{"prefix": ...,
//!   "installed": true, "nexthops": [{"ip": ADDR, "fib": true, ...}]}]}}`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::device::{BfdPeer, BgpSession, Route};
use super::error::{PushError, Result};

fn bad(command: &str, e: serde_json::Error) -> PushError {
    PushError::Protocol {
        action: format!("reading `{command}`"),
        message: format!("not the JSON FRR prints: {e}"),
    }
}

#[derive(Deserialize)]
struct Family {
    #[serde(default)]
    peers: BTreeMap<String, Peer>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peer {
    #[serde(default)]
    remote_as: Option<serde_json::Value>,
    #[serde(default)]
    state: String,
}

/// Reads `show bgp vrf all summary json`. A peer in several address
/// families is one session; it is established when every family says so.
pub fn bgp_summary(json: &str) -> Result<Vec<BgpSession>> {
    const COMMAND: &str = "show bgp vrf all summary json";
    let vrfs: BTreeMap<String, BTreeMap<String, serde_json::Value>> =
        serde_json::from_str(json).map_err(|e| bad(COMMAND, e))?;
    let mut sessions: BTreeMap<(String, String), BgpSession> = BTreeMap::new();
    for (vrf, families) in vrfs {
        for (name, family) in families {
            // Only address-family objects carry peers; other keys are
            // scalars or unknown objects without them.
            if !family.is_object() || family.get("peers").is_none() {
                continue;
            }
            let family: Family = serde_json::from_value(family).map_err(|e| PushError::Protocol {
                action: format!("reading `{COMMAND}`"),
                message: format!("VRF {vrf} family {name}: {e}"),
            })?;
            for (peer, p) in family.peers {
                let remote_as = p.remote_as.as_ref().and_then(as_number);
                let established = p.state == "Established";
                let entry = sessions
                    .entry((vrf.clone(), peer.clone()))
                    .or_insert(BgpSession {
                        vrf: vrf.clone(),
                        peer,
                        remote_as,
                        established,
                    });
                entry.established &= established;
                if entry.remote_as.is_none() {
                    entry.remote_as = remote_as;
                }
            }
        }
    }
    Ok(sessions.into_values().collect())
}

/// `remoteAs` is a number, or text (`"external"`, or asdot) in some
/// releases; only numbers are kept.
fn as_number(v: &serde_json::Value) -> Option<u32> {
    match v {
        serde_json::Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

#[derive(Deserialize)]
struct Bfd {
    peer: String,
    #[serde(default)]
    vrf: Option<String>,
    #[serde(default)]
    status: String,
}

/// Reads `show bfd peers json`.
pub fn bfd_peers(json: &str) -> Result<Vec<BfdPeer>> {
    let peers: Vec<Bfd> =
        serde_json::from_str(json).map_err(|e| bad("show bfd peers json", e))?;
    Ok(peers
        .into_iter()
        .map(|p| BfdPeer {
            vrf: p.vrf.unwrap_or_else(|| "default".to_string()),
            peer: p.peer,
            up: p.status == "up",
        })
        .collect())
}

#[derive(Deserialize)]
struct RouteEntry {
    #[serde(default)]
    installed: bool,
    #[serde(default)]
    nexthops: Vec<NextHop>,
}

#[derive(Deserialize)]
struct NextHop {
    #[serde(default)]
    ip: Option<String>,
    #[serde(default)]
    fib: bool,
}

/// Reads `show ip route vrf all json`: the installed entry of each prefix
/// with its next hops in the FIB (none for a connected route).
pub fn routes(json: &str) -> Result<Vec<Route>> {
    const COMMAND: &str = "show ip route vrf all json";
    let vrfs: BTreeMap<String, BTreeMap<String, Vec<RouteEntry>>> =
        serde_json::from_str(json).map_err(|e| bad(COMMAND, e))?;
    let mut out = Vec::new();
    for (vrf, prefixes) in vrfs {
        for (prefix, entries) in prefixes {
            for entry in entries.into_iter().filter(|e| e.installed) {
                let next_hops = entry
                    .nexthops
                    .into_iter()
                    .filter(|h| h.fib)
                    .filter_map(|h| h.ip)
                    .collect();
                out.push(Route {
                    vrf: vrf.clone(),
                    prefix: prefix.clone(),
                    next_hops,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shaped as FRR 8.5 prints them (SONiC 202305's bgp container).
    const BGP: &str = r#"{
      "default": {
        "ipv4Unicast": {
          "routerId": "10.1.0.1", "as": 65101, "vrfId": 0, "vrfName": "default",
          "peers": {
            "10.0.0.1": {"hostname": "up01", "remoteAs": 65001, "version": 4,
                         "state": "Established", "peerState": "OK", "pfxRcd": 4},
            "10.0.0.3": {"remoteAs": 65002, "version": 4, "state": "Active",
                         "peerState": "OK"}
          },
          "failedPeers": 1, "totalPeers": 2, "dynamicPeers": 0
        }
      },
      "Vrf10": {
        "ipv4Unicast": {
          "peers": {"Ethernet8": {"remoteAs": "external", "state": "Established",
                                  "idType": "interface"}}
        }
      }
    }"#;

    #[test]
    fn bgp_sessions_per_vrf() {
        let s = bgp_summary(BGP).unwrap();
        assert_eq!(
            s,
            vec![
                BgpSession {
                    vrf: "Vrf10".into(),
                    peer: "Ethernet8".into(),
                    remote_as: None,
                    established: true
                },
                BgpSession {
                    vrf: "default".into(),
                    peer: "10.0.0.1".into(),
                    remote_as: Some(65001),
                    established: true
                },
                BgpSession {
                    vrf: "default".into(),
                    peer: "10.0.0.3".into(),
                    remote_as: Some(65002),
                    established: false
                },
            ]
        );
        assert_eq!(bgp_summary("{}").unwrap(), vec![]);
        assert!(bgp_summary("% BGP instance not found").is_err());
    }

    #[test]
    fn bfd_peers_read() {
        let json = r#"[
          {"multihop": false, "peer": "10.0.0.1", "local": "10.0.0.0", "vrf": "default",
           "interface": "Ethernet0", "id": 1, "remote-id": 7, "status": "up", "uptime": 30},
          {"multihop": false, "peer": "10.0.0.3", "vrf": "Vrf10", "status": "down",
           "downtime": 5, "diagnostic": "control detection time expired"}
        ]"#;
        assert_eq!(
            bfd_peers(json).unwrap(),
            vec![
                BfdPeer {
                    vrf: "default".into(),
                    peer: "10.0.0.1".into(),
                    up: true
                },
                BfdPeer {
                    vrf: "Vrf10".into(),
                    peer: "10.0.0.3".into(),
                    up: false
                },
            ]
        );
    }

    #[test]
    fn installed_routes_with_fib_next_hops() {
        let json = r#"{
          "default": {
            "10.0.0.0/31": [{"prefix": "10.0.0.0/31", "protocol": "connected", "selected": true,
              "installed": true, "nexthops": [{"fib": true, "directlyConnected": true,
              "interfaceName": "Ethernet0", "active": true}]}],
            "192.168.1.0/24": [
              {"prefix": "192.168.1.0/24", "protocol": "bgp", "installed": true,
               "nexthops": [{"ip": "10.0.0.1", "afi": "ipv4", "fib": true, "active": true},
                            {"ip": "10.0.0.3", "afi": "ipv4", "fib": true, "active": true},
                            {"ip": "10.0.0.5", "afi": "ipv4", "active": true}]},
              {"prefix": "192.168.1.0/24", "protocol": "static", "distance": 200,
               "nexthops": [{"ip": "10.0.0.9"}]}]
          },
          "Vrf10": {}
        }"#;
        assert_eq!(
            routes(json).unwrap(),
            vec![
                Route {
                    vrf: "default".into(),
                    prefix: "10.0.0.0/31".into(),
                    next_hops: vec![]
                },
                Route {
                    vrf: "default".into(),
                    prefix: "192.168.1.0/24".into(),
                    next_hops: vec!["10.0.0.1".into(), "10.0.0.3".into()]
                },
            ]
        );
    }
}
