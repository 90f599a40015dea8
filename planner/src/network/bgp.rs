//! The eBGP model of a plan: per switch its ASN, one session per inter-switch cable, the sub-node subnets it announces and the BFD timers; and the routes BGP will install.
//!
//! Built from the same [`Model`] every renderer reads, so the vendors only
//! format it (`routing = "bgp"`, see [`crate::routing`]).
//!
//! # Speakers and sessions
//!
//! Every plan switch (each VLAN half of a split switch, or a whole switch)
//! is one BGP speaker in its own VRF (`Vrf<vlan>`), with the ASN
//! `asn_base + i` of its position in the plan. Every inter-switch cable is
//! one eBGP session between its two ends' /31 addresses, BFD on it; the
//! loopback cable between the two halves of one box (the BiGraph's
//! `sw01-u` to `sw01-l`) is a session between two VRFs of the same device
//! like any other. The router ID is the speaker's lowest session address
//! (unique in the plan, since /31 link addresses are).
//!
//! One ASN per switch rather than per part or tier: with one ASN for all
//! lower switches, a lower switch would drop every route that crossed an
//! upper switch from another lower switch (its own ASN is in the AS path:
//! loop prevention), so lower-to-lower traffic over the BiGraph's upper
//! part would have no route. RFC 7938 §5.2 gives each ToR its own ASN for
//! the same reason.
//!
//! # Announcements
//!
//! Each speaker announces exactly its sub-node subnets, with `network`
//! statements (no `redistribute connected`: the /31 link subnets stay
//! out of BGP, their ends are connected on both sides).
//!
//! # What BGP installs
//!
//! With unique ASNs the AS-path length of a route is the number of
//! switches it crosses after the speaker, so best-path selection with
//! `maximum-paths` and `bgp bestpath as-path multipath-relax` installs, for
//! each announced prefix, every session whose peer is one hop closer to
//! the announcing switch: the shortest paths of the session graph
//! ([`Bgp::installed`]). The tests hold this equal to
//! [`Network::next_hops`](super::Network::next_hops), the static tables,
//! for BiGraph and 2- and 3-tier fat-trees: on a whole plan, static and BGP
//! routing forward alike.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

use super::addresses::{Model, PortKind};
use crate::error::{Error, Problem, Result};
use crate::plan::Plan;
use crate::qos::Ipv4Prefix;
use crate::routing::Bfd;

/// Most ECMP next hops a speaker is rendered with (`maximum-paths`): the
/// smallest limit among the vendors (EOS and Comware take 128 on their
/// large platforms; FRR as Debian builds it, 64 is the smallest we met).
pub const MAX_PATHS: usize = 64;

/// The eBGP model of a whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bgp {
    /// BFD timers of every session.
    pub bfd: Bfd,
    /// One per plan switch, in plan order.
    pub speakers: Vec<Speaker>,
}

/// A plan switch as a BGP speaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    /// The plan switch's name.
    pub name: String,
    /// Index of its physical switch in the model (plan order of first
    /// appearance).
    pub device: usize,
    /// Its VRF.
    pub vrf: String,
    /// Its ASN.
    pub asn: u32,
    /// Its router ID: the lowest session address, else its first gateway,
    /// else none (a switch without sessions runs no BGP).
    pub router_id: Option<Ipv4Addr>,
    /// One per inter-switch cable of the switch, in port order.
    pub sessions: Vec<Session>,
    /// Its sub-node subnets, sorted.
    pub announced: Vec<Ipv4Prefix>,
    /// `maximum-paths`: its session count, at least 1.
    pub max_paths: usize,
}

/// One eBGP session, on one cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Session {
    /// The local port.
    pub port: u32,
    /// The local /31 address.
    pub local: Ipv4Addr,
    /// The peer's /31 address.
    pub peer: Ipv4Addr,
    /// The peer's ASN.
    pub peer_asn: u32,
    /// The peer speaker (plan switch index).
    pub peer_switch: usize,
    /// The peer's port.
    pub peer_port: u32,
}

/// Per announced prefix, the next-hop addresses installed.
pub type Installed = BTreeMap<Ipv4Prefix, BTreeSet<Ipv4Addr>>;

impl Bgp {
    /// The eBGP model of `plan` (whatever its routing mode); errors name
    /// the plan as `source`.
    pub fn new(plan: &Plan, source: &str) -> Result<Bgp> {
        let m = Model::build(plan, source)?;
        Bgp::of(&m, source)
    }

    /// The eBGP model of a configuration model.
    pub(crate) fn of(m: &Model<'_>, source: &str) -> Result<Bgp> {
        let routing = m.plan.routing;
        let mut speakers: Vec<Speaker> = m
            .domains
            .iter()
            .enumerate()
            .map(|(i, d)| Speaker {
                name: m.name(i).to_string(),
                device: d.device,
                vrf: d.vrf.clone(),
                asn: routing.asn(i),
                router_id: None,
                sessions: Vec::new(),
                announced: d.gateways.iter().map(|g| g.prefix).collect(),
                max_paths: 1,
            })
            .collect();
        for dev in &m.devices {
            for p in &dev.ports {
                if let PortKind::InterSwitch { link } = p.kind {
                    let l = &m.links[link];
                    speakers[l.from].sessions.push(Session {
                        port: l.from_port,
                        local: Ipv4Addr::from(l.from_addr),
                        peer: Ipv4Addr::from(l.to_addr),
                        peer_asn: routing.asn(l.to),
                        peer_switch: l.to,
                        peer_port: l.to_port,
                    });
                }
            }
        }
        let mut problems = Vec::new();
        for (i, s) in speakers.iter_mut().enumerate() {
            s.announced.sort_unstable();
            s.router_id = s.sessions.iter().map(|x| x.local).min().or_else(|| {
                m.domains[i]
                    .gateways
                    .first()
                    .map(|g| Ipv4Addr::from(g.addr))
            });
            s.max_paths = s.sessions.len().max(1);
            if s.max_paths > MAX_PATHS {
                problems.push(Problem::at(
                    None,
                    format!("switch {}", s.name),
                    format!(
                        "{} BGP sessions, more ECMP next hops than the {MAX_PATHS} every vendor installs",
                        s.sessions.len()
                    ),
                    "route this plan statically (routing mode static)",
                ));
            }
        }
        if !problems.is_empty() {
            return Err(Error::Invalid {
                file: source.to_string(),
                what: "plan",
                problems,
            });
        }
        Ok(Bgp {
            bfd: routing.bfd,
            speakers,
        })
    }

    /// The speakers of physical switch `device`, in plan order.
    pub fn speakers_of(&self, device: usize) -> impl Iterator<Item = (usize, &Speaker)> {
        self.speakers
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.device == device)
    }

    /// Session hops from `from` to every speaker (`usize::MAX` where no
    /// session path leads).
    fn hops_from(&self, from: usize) -> Vec<usize> {
        let mut dist = vec![usize::MAX; self.speakers.len()];
        let mut queue = VecDeque::new();
        dist[from] = 0;
        queue.push_back(from);
        while let Some(x) = queue.pop_front() {
            for s in &self.speakers[x].sessions {
                if dist[s.peer_switch] == usize::MAX {
                    dist[s.peer_switch] = dist[x] + 1;
                    queue.push_back(s.peer_switch);
                }
            }
        }
        dist
    }

    /// What BGP installs on speaker `at`: for every prefix another speaker
    /// announces, the peer addresses of every session whose peer is one
    /// session hop closer to the announcing speaker (equal AS-path length,
    /// the shortest; see the module documentation). A prefix no session
    /// path reaches is absent.
    pub fn installed_at(&self, at: usize) -> Installed {
        let mine = self.hops_from(at);
        // Hops from every distinct peer: the distance from a peer to an
        // origin is the origin's distance to the peer (sessions are both
        // ways).
        let mut from_peer: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for s in &self.speakers[at].sessions {
            from_peer
                .entry(s.peer_switch)
                .or_insert_with(|| self.hops_from(s.peer_switch));
        }
        let mut out = Installed::new();
        for (t, origin) in self.speakers.iter().enumerate() {
            if t == at || origin.announced.is_empty() || mine[t] == usize::MAX {
                continue;
            }
            let hops: BTreeSet<Ipv4Addr> = self.speakers[at]
                .sessions
                .iter()
                .filter(|s| from_peer[&s.peer_switch][t] + 1 == mine[t])
                .map(|s| s.peer)
                .collect();
            for p in &origin.announced {
                out.insert(*p, hops.clone());
            }
        }
        out
    }

    /// [`Bgp::installed_at`] of every speaker, in plan order.
    pub fn installed(&self) -> Vec<Installed> {
        (0..self.speakers.len())
            .map(|i| self.installed_at(i))
            .collect()
    }
}

#[cfg(test)]
#[path = "bgp_tests.rs"]
mod tests;
