//! BGP across the test servers of one fabric, whatever their vendor:
//! sessions, BFD and the routes each switch learns. Written from the
//! protocols and the routing daemons' documentation, not from the push
//! client: each server publishes what its configuration says about BGP
//! ([`BgpConf`]) with its cabling ([`Speaking`]), and reads its sessions
//! and its RIB from what every switch of the fabric published. The
//! vendor's shape of the answer is the server's (switch_servers.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use super::World;

/// One BGP speaker of a switch: a VRF's BGP instance.
#[derive(Clone, Debug, Default)]
pub struct Speaker {
    pub vrf: String,
    /// Its AS (the VRF's own, else the switch's).
    pub asn: u64,
    /// Neighbour address -> configured remote AS.
    pub neighbours: BTreeMap<String, u64>,
    /// Neighbours with BFD turned on.
    pub bfd: BTreeSet<String>,
    /// The prefixes it originates (`network` statements).
    pub networks: Vec<String>,
    /// How many equal paths it installs (eBGP).
    pub max_paths: usize,
    /// Whether paths of equal AS-path length through different
    /// neighbouring ASes count as equal (FRR's `bgp bestpath as-path
    /// multipath-relax`, NVUE's `path-selection multipath aspath-ignore`,
    /// EOS's `bgp bestpath as-path multipath-relax`).
    pub relax: bool,
}

/// What a switch's configuration says about BGP, whatever its vendor:
/// its interface addresses (port, address, prefix length) and its
/// speakers.
#[derive(Clone, Debug, Default)]
pub struct BgpConf {
    pub addresses: Vec<(String, Ipv4Addr, u32)>,
    pub speakers: Vec<Speaker>,
}

/// What one switch tells the rest of its fabric: its BGP configuration,
/// its cabling, and, in a fabric whose cables are dark until both ends
/// are configured, the ports its configuration has.
#[derive(Clone, Debug, Default)]
pub struct Speaking {
    pub conf: BgpConf,
    pub world: World,
    pub configured: Option<BTreeSet<String>>,
}

/// Per switch (hostname), what it published: shared by the servers of
/// one fabric. With none, a configured neighbour never comes up.
pub type SharedBgp = Arc<Mutex<BTreeMap<String, Speaking>>>;

/// The network of `a` with a prefix of `len` bits.
fn network(a: Ipv4Addr, len: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(a) & u32::MAX.checked_shl(32 - len.min(32)).unwrap_or(0))
}

/// True when `a` and `b` share a subnet of `len` bits.
pub fn same_subnet(a: Ipv4Addr, b: Ipv4Addr, len: u32) -> bool {
    network(a, len) == network(b, len) && a != b
}

/// Whether the session of a switch configured as `mine` (in `world`)
/// with neighbour `peer`, configured with `remote_as` while the switch
/// runs `asn` there, is established; if not, FRR's last reset reason and
/// code (`Err(("", 0))` when none applies: the peer never answers).
/// Written from the BGP protocol, not from any client: a session reaches
/// Established only over a link that is up, to a speaker that carries
/// the neighbour address on the cabled port and has this switch's
/// address as its own neighbour; each side checks the AS in the other's
/// OPEN against its configured remote AS and answers a mismatch with a
/// NOTIFICATION "OPEN Message Error / Bad Peer AS" (RFC 4271 section
/// 6.2), so both sides' ASNs must agree. `link_up(port, cabled)` is the
/// port's state; `far(hostname)` the far switch's configuration.
pub fn bgp_session(
    mine: &BgpConf,
    world: &World,
    link_up: &dyn Fn(&str, bool) -> bool,
    far: &dyn Fn(&str) -> Option<BgpConf>,
    (asn, peer, remote_as): (u64, &str, u64),
) -> Result<(), (&'static str, u32)> {
    let Ok(peer_ip) = peer.parse::<Ipv4Addr>() else {
        return Err(("", 0));
    };
    // The port whose subnet holds the neighbour, and this switch's
    // address on it.
    let Some((port, my_ip)) = mine
        .addresses
        .iter()
        .find(|(_, ip, len)| same_subnet(*ip, peer_ip, *len))
        .map(|(p, ip, _)| (p.clone(), *ip))
    else {
        return Err(("Waiting for NHT", 27));
    };
    let cabled = world.interfaces.get(&port).is_some_and(|(up, _)| *up);
    if !link_up(&port, cabled) {
        return Err(("Interface down", 25));
    }
    let Some((far_sw, far_port)) = world.lldp.get(&port) else {
        return Err(("", 0));
    };
    let Some(theirs) = far(far_sw) else {
        return Err(("", 0));
    };
    if !theirs
        .addresses
        .iter()
        .any(|(p, ip, _)| p == far_port && *ip == peer_ip)
    {
        return Err(("", 0));
    }
    let me = my_ip.to_string();
    let Some((their_asn, their_remote)) = theirs
        .speakers
        .iter()
        .find_map(|s| s.neighbours.get(&me).map(|r| (s.asn, *r)))
    else {
        return Err(("", 0));
    };
    if remote_as != their_asn {
        // Its OPEN carries an AS this switch does not expect.
        return Err(("BGP Notification send", 14));
    }
    if their_remote != asn {
        return Err(("BGP Notification received", 13));
    }
    Ok(())
}

/// The fabric as its switches published it.
pub struct Fabric<'a>(pub &'a BTreeMap<String, Speaking>);

impl Fabric<'_> {
    /// True when `port` of `sw` is up: cabled up and, in a dark fabric,
    /// configured at both ends.
    pub fn link_up(&self, sw: &str, port: &str) -> bool {
        let Some(me) = self.0.get(sw) else {
            return false;
        };
        if !me.world.interfaces.get(port).is_some_and(|(up, _)| *up) {
            return false;
        }
        let Some(mine) = &me.configured else {
            return true;
        };
        if !mine.contains(port) {
            return false;
        }
        match me.world.lldp.get(port) {
            Some((peer, peer_port)) => self
                .0
                .get(peer)
                .and_then(|s| s.configured.as_ref())
                .is_some_and(|c| c.contains(peer_port)),
            None => true,
        }
    }

    /// [`bgp_session`] of `sw`'s speaker `s` with neighbour `peer`, as
    /// the fabric published it.
    pub fn session(&self, sw: &str, s: &Speaker, peer: &str) -> Result<(), (&'static str, u32)> {
        let Some(me) = self.0.get(sw) else {
            return Err(("", 0));
        };
        let Some(remote_as) = s.neighbours.get(peer) else {
            return Err(("", 0));
        };
        bgp_session(
            &me.conf,
            &me.world,
            &|port, _| self.link_up(sw, port),
            &|far| self.0.get(far).map(|x| x.conf.clone()),
            (s.asn, peer, *remote_as),
        )
    }

    /// The far end of `sw`'s neighbour `peer`: the switch, the index of
    /// its speaker that has `sw`'s address as a neighbour, and that
    /// address.
    fn far_end(&self, sw: &str, peer: &str) -> Option<(String, usize, String)> {
        let me = self.0.get(sw)?;
        let peer_ip: Ipv4Addr = peer.parse().ok()?;
        let (port, my_ip, _) = me
            .conf
            .addresses
            .iter()
            .find(|(_, ip, len)| same_subnet(*ip, peer_ip, *len))?;
        let (far_sw, _) = me.world.lldp.get(port)?;
        let theirs = self.0.get(far_sw)?;
        let me = my_ip.to_string();
        let i = theirs
            .conf
            .speakers
            .iter()
            .position(|s| s.neighbours.contains_key(&me))?;
        Some((far_sw.clone(), i, me))
    }

    /// True when the session is established seen from both ends (each
    /// side's port up, each side's OPEN accepted by the other).
    pub fn established(&self, sw: &str, s: &Speaker, peer: &str) -> bool {
        let Some((far_sw, i, me)) = self.far_end(sw, peer) else {
            return false;
        };
        let theirs = &self.0[&far_sw].conf.speakers[i];
        self.session(sw, s, peer).is_ok() && self.session(&far_sw, theirs, &me).is_ok()
    }

    /// True when the BFD session of `sw`'s speaker `s` with `peer` is up:
    /// both ends run BFD for each other (BGP registers the peer with BFD
    /// on either end, FRR's `neighbor ... bfd`) over a link that is up at
    /// both ends; a single-hop BFD session (RFC 5881) needs no BGP
    /// session, but each end must have asked for it (RFC 5880 section
    /// 6.1: a session comes up only when both systems send control
    /// packets).
    pub fn bfd_up(&self, sw: &str, s: &Speaker, peer: &str) -> bool {
        let Some((far_sw, i, me)) = self.far_end(sw, peer) else {
            return false;
        };
        let theirs = &self.0[&far_sw].conf.speakers[i];
        let port = |x: &str, p: &str| {
            let ip: Ipv4Addr = p.parse().ok()?;
            self.0
                .get(x)?
                .conf
                .addresses
                .iter()
                .find(|(_, a, len)| same_subnet(*a, ip, *len))
                .map(|(port, _, _)| port.clone())
        };
        s.bfd.contains(peer)
            && theirs.bfd.contains(&me)
            && port(sw, peer).is_some_and(|p| self.link_up(sw, &p))
            && port(&far_sw, &me).is_some_and(|p| self.link_up(&far_sw, &p))
    }

    /// The BGP routes `sw` installs: per (VRF, prefix), its next hops.
    ///
    /// A path-vector computation as RFC 4271 describes it, over the
    /// sessions established in the fabric:
    /// - a speaker originates a `network` prefix only when a connected
    ///   route of it exists (an interface address in exactly that
    ///   subnet: the FRR user guide's `bgp network import-check`, "the
    ///   underlying network must exist in the RIB");
    /// - eBGP prepends the sender's AS and sets the next hop to the
    ///   sender's address on the session (section 5.1.3);
    /// - a route whose AS path holds the receiver's own AS is dropped
    ///   (section 9.1.2, loop detection);
    /// - the best path is the one with the shortest AS path (section
    ///   9.1.2.2 b; nothing else differs between these speakers), and
    ///   it is the one advertised onwards;
    /// - multipath installs up to `max_paths` paths equal to the best:
    ///   of the same AS-path length through any neighbouring AS with
    ///   `relax`, of the very same AS path without it (the FRR user
    ///   guide, `bgp bestpath as-path multipath-relax`: "Without the
    ///   knob, the entire AS_PATH must match for multipath
    ///   computation").
    ///
    /// A prefix `sw` originates itself is connected there, not a BGP
    /// route, and is not listed.
    pub fn rib(&self, sw: &str) -> BTreeMap<(String, String), BTreeSet<String>> {
        // Every speaker of the fabric, its origins, and its sessions that
        // are established (to the far speaker, with the next hop).
        let mut nodes: Vec<(&str, &Speaker)> = Vec::new();
        for (x, s) in self.0 {
            for sp in &s.conf.speakers {
                nodes.push((x.as_str(), sp));
            }
        }
        let index = |x: &str, i: usize| {
            let sp = &self.0[x].conf.speakers[i];
            nodes
                .iter()
                .position(|(y, s)| *y == x && std::ptr::eq(*s, sp))
        };
        let mut edges: Vec<Vec<(usize, String)>> = vec![Vec::new(); nodes.len()];
        let mut origins: Vec<BTreeSet<String>> = vec![BTreeSet::new(); nodes.len()];
        for (n, (x, s)) in nodes.iter().enumerate() {
            for peer in s.neighbours.keys() {
                if !self.established(x, s, peer) {
                    continue;
                }
                if let Some((far_sw, i, _)) = self.far_end(x, peer)
                    && let Some(m) = index(&far_sw, i)
                {
                    edges[n].push((m, peer.clone()));
                }
            }
            let conf = &self.0[*x].conf;
            for p in &s.networks {
                let Some((net, len)) = p.split_once('/') else {
                    continue;
                };
                let (Ok(net), Ok(len)) = (net.parse::<Ipv4Addr>(), len.parse::<u32>()) else {
                    continue;
                };
                if conf
                    .addresses
                    .iter()
                    .any(|(_, a, l)| *l == len && network(*a, len) == net)
                {
                    origins[n].insert(p.clone());
                }
            }
        }
        // Best paths, round by round until nothing changes (at most one
        // round per speaker: a shortest AS path has no more hops).
        let mut best: Vec<BTreeMap<String, Vec<u64>>> = origins
            .iter()
            .map(|o| o.iter().map(|p| (p.clone(), Vec::new())).collect())
            .collect();
        for _ in 0..=nodes.len() {
            let mut next = best.clone();
            for (n, (_, s)) in nodes.iter().enumerate() {
                for (m, _) in &edges[n] {
                    let their_as = nodes[*m].1.asn;
                    for (p, path) in &best[*m] {
                        if origins[n].contains(p) || path.contains(&s.asn) || their_as == s.asn {
                            continue;
                        }
                        let mut cand = vec![their_as];
                        cand.extend(path);
                        let better = match next[n].get(p) {
                            None => true,
                            Some(old) => (cand.len(), &cand) < (old.len(), old),
                        };
                        if better {
                            next[n].insert(p.clone(), cand);
                        }
                    }
                }
            }
            if next == best {
                break;
            }
            best = next;
        }
        // What `sw` installs: every path equal to the best, up to the
        // speaker's limit.
        let mut out = BTreeMap::new();
        for (n, (x, s)) in nodes.iter().enumerate() {
            if *x != sw {
                continue;
            }
            for (p, chosen) in &best[n] {
                if origins[n].contains(p) {
                    continue;
                }
                let mut hops: Vec<String> = Vec::new();
                for (m, hop) in &edges[n] {
                    let Some(path) = best[*m].get(p) else {
                        continue;
                    };
                    if path.contains(&s.asn) {
                        continue;
                    }
                    let mut cand = vec![nodes[*m].1.asn];
                    cand.extend(path);
                    let equal = if s.relax {
                        cand.len() == chosen.len()
                    } else {
                        &cand == chosen
                    };
                    if equal {
                        hops.push(hop.clone());
                    }
                }
                hops.sort();
                hops.truncate(s.max_paths.max(1));
                out.insert((s.vrf.clone(), p.clone()), hops.into_iter().collect());
            }
        }
        out
    }
}
