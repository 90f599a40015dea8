//! What a Comware switch answers to the `display` commands verification
//! reads (interface brief, LLDP neighbours, BGP peers, BFD sessions, the
//! routing table), each read into the push's [`Observed`] parts. The
//! session and commit exchange that asks for them is `comware.rs`; these
//! readers are apart from it so that each can be fuzzed and unit-tested on
//! the device's text alone.
//!
//! [`Observed`]: super::device::Observed

use super::device::{BfdPeer, BgpSession, Interface, LldpNeighbour, Route};
use super::error::{Result, protocol};

/// Comware's short interface names (in `display interface brief`, LLDP and
/// routing tables) and the full names the plan renders. From the H3C
/// command references' interface lists; a prefix not listed is left as the
/// device prints it.
const ABBREVIATIONS: [(&str, &str); 8] = [
    ("FH", "FourHundredGigE"),
    ("TH", "TwoHundredGigE"),
    ("HGE", "HundredGigE"),
    ("FGE", "FortyGigE"),
    ("WGE", "Twenty-FiveGigE"),
    ("XGE", "Ten-GigabitEthernet"),
    ("GE", "GigabitEthernet"),
    ("MGE", "M-GigabitEthernet"),
];

/// `HGE1/0/1` -> `HundredGigE1/0/1`; full names pass through.
pub fn full_interface(name: &str) -> String {
    let split = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (prefix, rest) = name.split_at(split);
    ABBREVIATIONS
        .iter()
        .find(|(short, _)| *short == prefix)
        .map(|(_, long)| format!("{long}{rest}"))
        .unwrap_or_else(|| name.to_string())
}

/// Reads `display lldp neighbor-information list` (H3C Layer 2 - LAN
/// Switching Command Reference, "LLDP commands"):
///
/// ```text
/// Chassis ID : * -- -- Nearest nontpmr bridge neighbor
///              # -- -- Nearest customer bridge neighbor
///              Default -- -- Nearest bridge neighbor
/// System Name          Local Interface Chassis ID      Port ID
/// sw05                 HGE1/0/1        0cda-411d-0001  HundredGigE1/0/64
/// ```
pub fn lldp_list(text: &str) -> Result<Vec<LldpNeighbour>> {
    let mut lines = text.lines();
    if !lines.any(|l| l.trim_start().starts_with("System Name")) {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        return Err(protocol(
            "reading `display lldp neighbor-information list`",
            "no System Name header",
        ));
    }
    let mut out = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let n = f.len();
        out.push(LldpNeighbour {
            port: full_interface(f[n - 3]),
            system: f[..n - 3].join(" "),
            port_id: f[n - 1].to_string(),
        });
    }
    Ok(out)
}

/// Reads `display interface brief` (H3C Interface Command Reference): the
/// route-mode table (no speed column) and the bridge-mode table (`Speed`
/// such as `100G(a)`); `Link` is `UP`, `DOWN` or `ADM`.
///
/// ```text
/// Brief information on interfaces in route mode:
/// Link: ADM - administratively down; Stby - standby
/// Protocol: (s) - spoofing
/// Interface            Link Protocol Primary IP      Description
/// HGE1/0/1             UP   UP       10.255.0.1      to sw05
/// Brief information on interfaces in bridge mode:
/// Link: ADM - administratively down; Stby - standby
/// Speed: (a) - auto
/// Duplex: (a)/A - auto; H - half; F - full
/// Type: A - access; T - trunk; H - hybrid
/// Interface            Link Speed   Duplex Type PVID Description
/// HGE1/0/3             UP   100G(a) F(a)   A    101  node01
/// ```
pub fn interface_brief(text: &str) -> Vec<Interface> {
    let mut out = Vec::new();
    let mut speed_col: Option<usize> = None;
    let mut in_table = false;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first() == Some(&"Interface") && f.get(1) == Some(&"Link") {
            in_table = true;
            speed_col = f.iter().position(|c| *c == "Speed");
            continue;
        }
        if line.starts_with("Brief information") {
            in_table = false;
            continue;
        }
        if !in_table || f.len() < 2 {
            continue;
        }
        let speed_mbps = speed_col
            .and_then(|i| f.get(i))
            .and_then(|s| comware_speed(s));
        out.push(Interface {
            name: full_interface(f[0]),
            up: f[1] == "UP",
            speed_mbps,
        });
    }
    out
}

/// `100G(a)` -> 100000, `10M` -> 10, `auto` -> None.
fn comware_speed(text: &str) -> Option<u64> {
    let t = text.split('(').next()?;
    if let Some(g) = t.strip_suffix('G') {
        return g.parse::<u64>().ok()?.checked_mul(1000);
    }
    t.strip_suffix('M')?.parse().ok()
}

fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

/// Reads `display bgp peer ipv4 [vpn-instance V]` (H3C Layer 3 - IP Routing
/// Command Reference, "BGP commands"): rows of peer, AS, counters, up/down
/// time and state.
///
/// ```text
///  BGP local router ID: 10.255.0.1
///  Local AS number: 65001
///  Total number of peers: 1                 Peers in established state: 1
///
///   * - Dynamically created peer
///   Peer                    AS  MsgRcvd  MsgSent OutQ PrefRcv Up/Down  State
///
///   10.255.0.80          65101        7       10    0       4 00:05:19 Established
/// ```
pub fn bgp_peers(text: &str, vrf: &str) -> Vec<BgpSession> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let peer = f.first().map(|p| p.trim_start_matches('*'))?;
            if f.len() < 3 || !is_ipv4(peer) {
                return None;
            }
            Some(BgpSession {
                vrf: vrf.to_string(),
                peer: peer.to_string(),
                remote_as: f[1].parse().ok(),
                established: f.last() == Some(&"Established"),
                last_reset: None,
            })
        })
        .collect()
}

/// Reads `display bfd session` (H3C High Availability Command Reference,
/// "BFD commands"). The table names no VPN instance; peers are reported in
/// `default`.
///
/// ```text
///  Total Session Num: 1     Up Session Num: 1     Init Mode: Active
///
///  IPv4 session working in control packet mode:
///
///  LD/RD            SourceAddr      DestAddr        State  Holdtime    Interface
///  513/513          10.255.0.1      10.255.0.80     Up     2297ms      HGE1/0/1
/// ```
pub fn bfd_sessions(text: &str) -> Vec<BfdPeer> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 4 || !f[0].contains('/') || !is_ipv4(f[2]) {
                return None;
            }
            Some(BfdPeer {
                vrf: "default".to_string(),
                peer: f[2].to_string(),
                up: f[3].eq_ignore_ascii_case("up"),
            })
        })
        .collect()
}

/// Reads `display ip routing-table [vpn-instance V]` (H3C Layer 3 - IP
/// Routing Command Reference): one row per route; further ECMP next hops
/// of the same destination follow on rows without a destination. `Direct`
/// routes have no next hop of their own.
///
/// ```text
/// Destinations : 13        Routes : 14
///
/// Destination/Mask   Proto   Pre Cost        NextHop         Interface
/// 10.255.0.0/31      Direct  0   0           10.255.0.1      HGE1/0/1
/// 10.100.16.0/24     Static  60  0           10.255.0.80     HGE1/0/1
///                    Static  60  0           10.255.0.96     HGE1/0/2
/// ```
pub fn routing_table(text: &str, vrf: &str) -> Vec<Route> {
    let mut out: Vec<Route> = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.first() == Some(&"Destination/Mask") {
            in_table = true;
            continue;
        }
        if !in_table || f.len() < 5 {
            continue;
        }
        let continued = line.starts_with(char::is_whitespace);
        let (proto, hop) = if continued {
            (f[0], f[3])
        } else {
            (f[1], f[4])
        };
        let direct = proto == "Direct";
        if !continued {
            if !f[0].contains('/') {
                continue;
            }
            out.push(Route {
                vrf: vrf.to_string(),
                prefix: f[0].to_string(),
                next_hops: Vec::new(),
            });
        }
        if let Some(r) = out.last_mut()
            && !direct
            && is_ipv4(hop)
        {
            r.next_hops.push(hop.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_expand() {
        assert_eq!(full_interface("HGE1/0/1"), "HundredGigE1/0/1");
        assert_eq!(full_interface("WGE1/0/2"), "Twenty-FiveGigE1/0/2");
        assert_eq!(full_interface("HundredGigE1/0/1"), "HundredGigE1/0/1");
        assert_eq!(full_interface("Vlan101"), "Vlan101");
    }

    #[test]
    fn lldp_rows() {
        let text = "Chassis ID : * -- -- Nearest nontpmr bridge neighbor\n             # -- -- Nearest customer bridge neighbor\n             Default -- -- Nearest bridge neighbor\n\nSystem Name          Local Interface Chassis ID      Port ID\nsw05                 HGE1/0/1        0cda-411d-0001  HundredGigE1/0/64\n";
        assert_eq!(
            lldp_list(text).unwrap(),
            vec![LldpNeighbour {
                port: "HundredGigE1/0/1".into(),
                system: "sw05".into(),
                port_id: "HundredGigE1/0/64".into()
            }]
        );
        assert!(lldp_list("").unwrap().is_empty());
        assert!(lldp_list("% Unrecognized command").is_err());
    }

    #[test]
    fn interface_rows() {
        let text = "Brief information on interfaces in route mode:\nLink: ADM - administratively down; Stby - standby\nProtocol: (s) - spoofing\nInterface            Link Protocol Primary IP      Description\nHGE1/0/1             UP   UP       10.255.0.1      to sw05\nHGE1/0/2             ADM  DOWN     --              --\n\nBrief information on interfaces in bridge mode:\nLink: ADM - administratively down; Stby - standby\nSpeed: (a) - auto\nDuplex: (a)/A - auto; H - half; F - full\nType: A - access; T - trunk; H - hybrid\nInterface            Link Speed   Duplex Type PVID Description\nHGE1/0/3             UP   100G(a) F(a)   A    101  node01 mlx5_0\n";
        assert_eq!(
            interface_brief(text),
            vec![
                Interface {
                    name: "HundredGigE1/0/1".into(),
                    up: true,
                    speed_mbps: None
                },
                Interface {
                    name: "HundredGigE1/0/2".into(),
                    up: false,
                    speed_mbps: None
                },
                Interface {
                    name: "HundredGigE1/0/3".into(),
                    up: true,
                    speed_mbps: Some(100_000)
                },
            ]
        );
    }

    #[test]
    fn bgp_bfd_and_routes() {
        let bgp = " BGP local router ID: 10.255.0.1\n Local AS number: 65001\n Total number of peers: 2                 Peers in established state: 1\n\n  * - Dynamically created peer\n  Peer                    AS  MsgRcvd  MsgSent OutQ PrefRcv Up/Down  State\n\n  10.255.0.80          65101        7       10    0       4 00:05:19 Established\n  10.255.0.96          65102        0        0    0       0 00:00:09 Active\n";
        let s = bgp_peers(bgp, "Vrf101");
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0],
            BgpSession {
                vrf: "Vrf101".into(),
                peer: "10.255.0.80".into(),
                remote_as: Some(65101),
                established: true,
                last_reset: None
            }
        );
        assert!(!s[1].established);
        let bfd = " Total Session Num: 1     Up Session Num: 1     Init Mode: Active\n\n IPv4 session working in control packet mode:\n\n LD/RD            SourceAddr      DestAddr        State  Holdtime    Interface\n 513/513          10.255.0.1      10.255.0.80     Up     2297ms      HGE1/0/1\n";
        assert_eq!(
            bfd_sessions(bfd),
            vec![BfdPeer {
                vrf: "default".into(),
                peer: "10.255.0.80".into(),
                up: true
            }]
        );
        let table = "Destinations : 2        Routes : 3\n\nDestination/Mask   Proto   Pre Cost        NextHop         Interface\n10.255.0.0/31      Direct  0   0           10.255.0.1      HGE1/0/1\n10.100.16.0/24     Static  60  0           10.255.0.80     HGE1/0/1\n                   Static  60  0           10.255.0.96     HGE1/0/2\n";
        assert_eq!(
            routing_table(table, "Vrf101"),
            vec![
                Route {
                    vrf: "Vrf101".into(),
                    prefix: "10.255.0.0/31".into(),
                    next_hops: vec![]
                },
                Route {
                    vrf: "Vrf101".into(),
                    prefix: "10.100.16.0/24".into(),
                    next_hops: vec!["10.255.0.80".into(), "10.255.0.96".into()]
                },
            ]
        );
    }
}
