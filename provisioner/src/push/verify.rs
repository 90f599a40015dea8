//! Verification: what a switch reports ([`Observed`]) against what the
//! plan says it must show ([`planner::expect::Expected`], the planner's one
//! expectation, shared with the lab), as mismatches that name the switch,
//! the port or VRF, and the peer.
//!
//! - Inter-switch ports: up, at the planned speed, with the cable's far end
//!   as LLDP neighbour (system name; the port name too when the far switch
//!   has the same vendor, since the expectation names ports in this
//!   switch's vendor style).
//! - Sub-node ports: a server may be off during a push, so they need not be
//!   up; when up, the speed must be the plan's, and an LLDP neighbour, when
//!   the server sends one, must be the planned server.
//! - BGP (when the plan routes with BGP): every planned session
//!   configured and established, its BFD peer up when the plan runs BFD.
//! - Routes: every planned prefix installed in its VRF with exactly the
//!   planned next hops (other routes, such as connected ones, are not
//!   compared).
//!
//! A first install meets a fabric whose other switches run no BGP yet: a
//! session to a peer that is not configured cannot come up. With a
//! [`Partial`] view such a session is *pending* instead of a mismatch: its
//! peer has not been verified in this push and the session was not
//! established before the commit (a session that was up before must stay
//! up, so a fault pushed into a running fabric is still caught). While
//! sessions are pending, routes are checked only for what can be seen in
//! part of a fabric: every installed next hop of a planned prefix is the
//! peer of an established session. The push confirms such switches only
//! once the whole fabric passes the full check (see `run`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use planner::checked::CheckedPlan;
use planner::expect::{Expected, ExpectedSession};
use planner::render::Vendor;
use serde::Serialize;

use super::Device;
use super::device::Observed;
use super::device::same_host;
use super::error::{PushError, Result};

/// What physical switch `switch` must show when configured with `vendor`.
pub fn expected(plan: &CheckedPlan, switch: &str, vendor: Vendor) -> Result<Expected> {
    planner::expect::switch(plan, switch, vendor).map_err(|e| PushError::Plan {
        file: plan.source().to_string(),
        source: Box::new(e),
    })
}

/// What the rest of the fabric is known to run while a switch is
/// verified during a push.
#[derive(Debug, Clone, Default)]
pub struct Partial {
    /// Physical switches that run the plan: verified earlier in this push,
    /// or already unchanged.
    pub live: BTreeSet<String>,
    /// This switch's sessions established before the commit, as (VRF, peer
    /// address).
    pub before: BTreeSet<(String, String)>,
    /// The remote AS of each of those sessions: an established session
    /// proves the peer runs that AS (RFC 4271 6.2: a speaker refuses an
    /// OPEN whose AS is not the one it is configured with).
    pub as_before: BTreeMap<(String, String), u32>,
    /// This switch's ports that were up before the commit.
    pub ports_before: BTreeSet<String>,
    /// The push met an unconfigured fabric: routes are checked as in part
    /// of a fabric even where no session of this switch is pending.
    pub first_install: bool,
}

impl Partial {
    /// The ports of `seen` that are up.
    pub fn up(seen: &Observed) -> BTreeSet<String> {
        seen.interfaces
            .iter()
            .filter(|i| i.up)
            .map(|i| i.name.clone())
            .collect()
    }

    /// True when inter-switch port `port` may still be down (or without
    /// an LLDP neighbour): its peer `peer` has not run the plan in this
    /// push and the port was not up before the commit. On a fresh
    /// fabric, swp ports are administratively down until configured, so
    /// a cable to a switch not configured yet stays dark.
    fn port_may_wait(&self, port: &str, peer: &str) -> bool {
        !self.live.contains(peer) && !self.ports_before.contains(port)
    }

    /// The remote AS of the established sessions of `seen` that report
    /// one, by (VRF, peer address).
    pub fn as_established(seen: &Observed) -> BTreeMap<(String, String), u32> {
        seen.bgp
            .iter()
            .filter(|b| b.established)
            .filter_map(|b| Some(((b.vrf.clone(), b.peer.clone()), b.remote_as?)))
            .collect()
    }

    /// The established sessions of `seen`, as (VRF, peer address).
    pub fn established(seen: &Observed) -> BTreeSet<(String, String)> {
        seen.bgp
            .iter()
            .filter(|b| b.established)
            .map(|b| (b.vrf.clone(), b.peer.clone()))
            .collect()
    }

    /// True when `s` (in `vrf`) must be established: its peer runs the
    /// plan, or it was established before the commit.
    fn requires(&self, vrf: &str, s: &ExpectedSession) -> bool {
        self.live.contains(&s.peer_device)
            || self
                .before
                .contains(&(vrf.to_string(), s.peer_address.to_string()))
    }
}

/// The outcome of a verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// What differs from the plan; empty when the switch is as planned.
    pub mismatches: Vec<String>,
    /// Sessions waiting on peers that are not configured yet (only with a
    /// [`Partial`] view).
    pub pending: Vec<String>,
}

impl Verdict {
    /// True when nothing differs and nothing waits.
    pub fn complete(&self) -> bool {
        self.mismatches.is_empty() && self.pending.is_empty()
    }
}

/// The mismatches of `seen` against `want`; empty when the switch is as
/// planned. `vendor_of(peer)` is the vendor of physical switch `peer` of
/// the plan (`None` for a server); a peer of this switch's vendor has its
/// port name compared too. `partial` (during a push) lets sessions to
/// peers not configured yet be pending; `None` requires the whole plan.
pub fn check(
    want: &Expected,
    seen: &Observed,
    vendor_of: &dyn Fn(&str) -> Option<Vendor>,
    partial: Option<&Partial>,
) -> Verdict {
    let sw = &want.device;
    let mut out = Vec::new();
    let mut pending = Vec::new();
    for p in &want.ports {
        let port = &p.interface;
        let peer = &p.lldp.device;
        let peer_port = &p.lldp.port;
        let mbps = u64::from(p.gbps) * 1000;
        let Some(iface) = seen.interfaces.iter().find(|i| &i.name == port) else {
            out.push(format!("{sw} {port}: the switch does not report this port"));
            continue;
        };
        let here: Vec<_> = seen.lldp.iter().filter(|n| &n.port == port).collect();
        let Some(peer_vendor) = vendor_of(peer) else {
            // A sub-node port.
            if iface.up
                && let Some(s) = iface.speed_mbps
                && s != mbps
            {
                out.push(format!(
                    "{sw} {port}: runs at {s} Mb/s, the plan says {mbps} Mb/s ({peer} {peer_port})"
                ));
            }
            if !here.is_empty() && !here.iter().any(|n| same_host(&n.system, peer)) {
                out.push(format!(
                    "{sw} {port}: LLDP neighbour is {}, the plan cables it to {peer} {peer_port}",
                    neighbours(&here)
                ));
            }
            continue;
        };
        let waits = partial.is_some_and(|p| p.port_may_wait(port, peer));
        if !iface.up {
            if waits {
                pending.push(format!(
                    "{sw} {port}: down, waits on {peer} {peer_port}, not configured yet"
                ));
            } else {
                out.push(format!(
                    "{sw} {port}: down, the plan cables it to {peer} {peer_port}"
                ));
            }
            continue;
        }
        if let Some(s) = iface.speed_mbps
            && s != mbps
        {
            out.push(format!(
                "{sw} {port}: runs at {s} Mb/s, the plan says {mbps} Mb/s (cable to {peer} {peer_port})"
            ));
        }
        let compare_port = peer_vendor.as_str() == want.vendor;
        if here.is_empty() && waits {
            pending.push(format!(
                "{sw} {port}: no LLDP neighbour yet, waits on {peer} {peer_port}, not configured yet"
            ));
        } else if here.is_empty() {
            out.push(format!(
                "{sw} {port}: no LLDP neighbour, the plan cables it to {peer} {peer_port}"
            ));
        } else if !here
            .iter()
            .any(|n| same_host(&n.system, peer) && (!compare_port || &n.port_id == peer_port))
        {
            out.push(format!(
                "{sw} {port}: LLDP neighbour is {}, the plan cables it to {peer} {peer_port}",
                neighbours(&here)
            ));
        }
    }
    for v in &want.vrfs {
        for s in &v.sessions {
            let peer = s.peer_address.to_string();
            let session = seen.bgp.iter().find(|b| b.vrf == v.vrf && b.peer == peer);
            // The AS the peer ran its session with before the commit, when
            // the switch now expects another and the session is down: the
            // commit changed the AS on one side only.
            let ran_as = partial
                .and_then(|p| p.as_before.get(&(v.vrf.clone(), peer.clone())))
                .filter(|a| {
                    session.is_some_and(|b| !b.established && b.remote_as.is_some_and(|r| r != **a))
                });
            match session {
                None => out.push(format!(
                    "{sw} {} (VRF {}): no BGP session with {} {peer}",
                    s.interface, v.vrf, s.peer
                )),
                // A wrong AS is named as such, established or not (a
                // session whose AS does not match never comes up, and
                // "not established" would hide why).
                Some(b) if b.remote_as.is_some_and(|a| a != s.peer_asn) => out.push(format!(
                    "{sw} {} (VRF {}): AS mismatch with {} {peer}: the switch has remote AS {}, the plan says {}{}",
                    s.interface,
                    v.vrf,
                    s.peer,
                    b.remote_as.unwrap_or_default(),
                    s.peer_asn,
                    if b.established {
                        ""
                    } else {
                        " (the session is not established)"
                    }
                )),
                Some(b) if ran_as.is_some() => out.push(format!(
                    "{sw} {} (VRF {}): AS mismatch with {} {peer}: the switch now expects remote AS {}, the peer ran this session as AS {} before the commit (the session is not established)",
                    s.interface,
                    v.vrf,
                    s.peer,
                    b.remote_as.unwrap_or_default(),
                    ran_as.copied().unwrap_or_default(),
                )),
                // The peer answered with BGP and one side refused the
                // other: not a peer that runs nothing yet, so not pending,
                // even on a fresh fabric; unless the session ran with the
                // planned AS before the commit, which proves the AS right.
                Some(b)
                    if !b.established
                        && b.last_reset.as_deref().is_some_and(refused)
                        && partial.is_none_or(|p| {
                            p.as_before.get(&(v.vrf.clone(), peer.clone())) != Some(&s.peer_asn)
                        }) =>
                {
                    out.push(format!(
                        "{sw} {} (VRF {}): AS mismatch with {} {peer}, as far as the switch tells: the session was refused with a BGP NOTIFICATION (the switch reports: {}), which an AS that is not the configured one causes (RFC 4271 6.2, Bad Peer AS); the plan gives {} AS {}{}",
                        s.interface,
                        v.vrf,
                        s.peer,
                        b.last_reset.as_deref().unwrap_or_default(),
                        s.peer,
                        s.peer_asn,
                        v.asn
                            .map(|a| format!(" and {sw} AS {a} in this VRF"))
                            .unwrap_or_default(),
                    ));
                }
                Some(b) if !b.established => {
                    if partial.is_some_and(|p| !p.requires(&v.vrf, s)) {
                        pending.push(format!(
                            "{sw} {} (VRF {}): the BGP session with {} {peer} waits on {}, not configured yet",
                            s.interface, v.vrf, s.peer, s.peer_device
                        ));
                        continue;
                    }
                    out.push(format!(
                        "{sw} {} (VRF {}): the BGP session with {} {peer} is not established{}",
                        s.interface,
                        v.vrf,
                        s.peer,
                        b.last_reset
                            .as_ref()
                            .map(|r| format!(" (the switch reports: {r})"))
                            .unwrap_or_default()
                    ));
                }
                Some(_) => {}
            }
            if want.bfd.is_some()
                && !seen
                    .bfd
                    .iter()
                    .any(|b| b.vrf == v.vrf && b.peer == peer && b.up)
            {
                out.push(format!(
                    "{sw} {} (VRF {}): BFD with {} {peer} is not up",
                    s.interface, v.vrf, s.peer
                ));
            }
        }
        if !pending.is_empty() || partial.is_some_and(|p| p.first_install) {
            // Static routes too: a route over a link that waits for its
            // peer may be missing or short of next hops.
            let bgp = !v.sessions.is_empty();
            out.extend(partial_routes(sw, &v.vrf, &v.routes, seen, bgp));
            continue;
        }
        for (prefix, hops) in &v.routes {
            let want_hops: BTreeSet<String> = hops.iter().map(ToString::to_string).collect();
            match seen
                .routes
                .iter()
                .find(|r| r.vrf == v.vrf && &r.prefix == prefix)
            {
                None => out.push(format!("{sw} VRF {}: no route to {prefix}", v.vrf)),
                Some(r) => {
                    let got: BTreeSet<String> = r.next_hops.iter().cloned().collect();
                    if got != want_hops {
                        out.push(format!(
                            "{sw} VRF {}: {prefix} via {}, the plan says via {}",
                            v.vrf,
                            list(&got),
                            list(&want_hops)
                        ));
                    }
                }
            }
        }
    }
    Verdict {
        mismatches: out,
        pending,
    }
}

/// True when a session's last reset reason says a BGP NOTIFICATION went
/// either way: FRR's `peer_down_str` entries "BGP Notification received"
/// and "BGP Notification send" (bgpd/bgp_fsm.c; `PEER_DOWN_NOTIFY_RECEIVED`
/// and `PEER_DOWN_NOTIFY_SEND` of bgpd/bgpd.h), which NVUE reports as the
/// neighbour's `last-reset-reason` (the 5.15 Troubleshooting-BGP page).
/// A session that never came up and was reset so was refused by an OPEN
/// check: the peer runs BGP with this switch as its neighbour, and an AS
/// that is not the configured one is what RFC 4271 6.2 refuses first.
/// EOS names the subcode itself: `Open Message Error/bad AS number` (its
/// peering failure hint, read by the EOS client; RFC 4271's "Bad Peer
/// AS"), so only that OPEN error counts there.
fn refused(reason: &str) -> bool {
    let r = reason.to_ascii_lowercase();
    r == "bgp notification received"
        || r == "bgp notification send"
        || (r.starts_with("open message error") && r.contains("bad as number"))
}

/// Routes in part of a fabric: a planned prefix may be missing or reached
/// over fewer next hops, but every next hop it has must be allowed: with
/// `bgp`, the peer of an established session of its VRF; for static
/// routes, one of the prefix's planned next hops.
fn partial_routes(
    sw: &str,
    vrf: &str,
    planned: &BTreeMap<String, BTreeSet<std::net::Ipv4Addr>>,
    seen: &Observed,
    bgp: bool,
) -> Vec<String> {
    let up: BTreeSet<String> = seen
        .bgp
        .iter()
        .filter(|b| b.vrf == vrf && b.established)
        .map(|b| b.peer.clone())
        .collect();
    let mut out = Vec::new();
    for (prefix, hops) in planned {
        let Some(r) = seen
            .routes
            .iter()
            .find(|r| r.vrf == vrf && &r.prefix == prefix)
        else {
            continue;
        };
        let want: BTreeSet<String> = hops.iter().map(ToString::to_string).collect();
        let allowed = if bgp { &up } else { &want };
        let stray: BTreeSet<String> = r
            .next_hops
            .iter()
            .filter(|h| !allowed.contains(*h))
            .cloned()
            .collect();
        if stray.is_empty() {
            continue;
        }
        out.push(if bgp {
            format!(
                "{sw} VRF {vrf}: {prefix} via {}, which is no established BGP session",
                list(&stray)
            )
        } else {
            format!(
                "{sw} VRF {vrf}: {prefix} via {}, the plan says via {}",
                list(&stray),
                list(&want)
            )
        });
    }
    out
}

/// Observes `dev` until it shows no mismatch against `want` (pending
/// sessions may remain) or `until`, at most once a second: BGP takes
/// seconds to bring sessions up and to install every next hop after a
/// commit, and LLDP to see a neighbour. `vendors` gives every physical
/// switch's vendor (see [`check`]). Returns the last observation's verdict.
pub async fn settle(
    until: Instant,
    dev: &mut impl Device,
    want: &Expected,
    vendors: &BTreeMap<String, Vendor>,
    partial: Option<&Partial>,
) -> Result<Verdict> {
    settle_every(until, Duration::from_secs(1), dev, &|seen| {
        check(want, seen, &|p| vendors.get(p).copied(), partial)
    })
    .await
}

async fn settle_every(
    until: Instant,
    every: Duration,
    dev: &mut impl Device,
    check: &(dyn Fn(&Observed) -> Verdict + Sync),
) -> Result<Verdict> {
    loop {
        let seen = dev.observe().await?;
        let verdict = check(&seen);
        if verdict.mismatches.is_empty() || Instant::now() + every > until {
            return Ok(verdict);
        }
        tokio::time::sleep(every).await;
    }
}

fn neighbours(here: &[&super::device::LldpNeighbour]) -> String {
    here.iter()
        .map(|n| format!("{} {}", n.system, n.port_id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(s: &BTreeSet<String>) -> String {
    if s.is_empty() {
        "nothing".to_string()
    } else {
        s.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::device::{BgpSession, Interface, LldpNeighbour, Route};

    /// The BiGraph 2x8 example, routed statically or by BGP.
    fn plan(bgp: bool) -> CheckedPlan {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/data/bigraph-2x8.plan.json");
        let text = std::fs::read_to_string(&path).expect("plan");
        let mut p = CheckedPlan::load(&text, "bigraph-2x8.plan.json")
            .expect("plan loads")
            .into_plan();
        if bgp {
            p.routing.mode = planner::routing::RoutingMode::Bgp;
        }
        p.check("bigraph-2x8.plan.json").expect("plan checks")
    }

    /// What a switch configured as planned reports.
    fn as_planned(want: &Expected) -> Observed {
        let mut o = Observed::default();
        for p in &want.ports {
            o.interfaces.push(Interface {
                name: p.interface.clone(),
                up: true,
                speed_mbps: Some(u64::from(p.gbps) * 1000),
            });
            o.lldp.push(LldpNeighbour {
                port: p.interface.clone(),
                system: p.lldp.device.clone(),
                port_id: p.lldp.port.clone(),
            });
        }
        for v in &want.vrfs {
            for s in &v.sessions {
                o.bgp.push(BgpSession {
                    vrf: v.vrf.clone(),
                    peer: s.peer_address.to_string(),
                    remote_as: Some(s.peer_asn),
                    established: true,
                    last_reset: None,
                });
                o.bfd.push(crate::push::device::BfdPeer {
                    vrf: v.vrf.clone(),
                    peer: s.peer_address.to_string(),
                    up: true,
                });
            }
            for (prefix, hops) in &v.routes {
                o.routes.push(Route {
                    vrf: v.vrf.clone(),
                    prefix: prefix.clone(),
                    next_hops: hops.iter().map(ToString::to_string).collect(),
                });
            }
        }
        o
    }

    fn nvue(_: &str) -> Option<Vendor> {
        Vendor::named("nvue")
    }

    #[test]
    fn a_switch_as_planned_passes_and_each_fault_is_named() {
        for bgp in [false, true] {
            let file = if bgp { "bgp" } else { "static" };
            let p = plan(bgp);
            let want = expected(&p, "sw1", Vendor::named("nvue").expect("nvue")).expect("expected");
            let good = as_planned(&want);
            assert_eq!(
                check(&want, &good, &nvue, None).mismatches,
                Vec::<String>::new(),
                "{file}"
            );
            let vendor_of = |s: &str| if s.starts_with("sw") { nvue(s) } else { None };
            let inter = want
                .ports
                .iter()
                .find(|x| x.lldp.device.starts_with("sw"))
                .expect("an inter-switch port");
            let i = &inter.interface;
            let peer = format!("{} {}", inter.lldp.device, inter.lldp.port);
            let mut o = good.clone();
            o.interfaces
                .iter_mut()
                .find(|x| &x.name == i)
                .expect("port")
                .up = false;
            assert_eq!(
                check(&want, &o, &vendor_of, None).mismatches,
                [format!("sw1 {i}: down, the plan cables it to {peer}")]
            );
            let mut o = good.clone();
            o.lldp
                .iter_mut()
                .find(|x| &x.port == i)
                .expect("lldp")
                .system = "sw9".into();
            assert_eq!(
                check(&want, &o, &vendor_of, None).mismatches,
                [format!(
                    "sw1 {i}: LLDP neighbour is sw9 {}, the plan cables it to {peer}",
                    inter.lldp.port
                )]
            );
            let mut o = good.clone();
            o.interfaces
                .iter_mut()
                .find(|x| &x.name == i)
                .expect("port")
                .speed_mbps = Some(25_000);
            assert!(
                check(&want, &o, &vendor_of, None).mismatches[0]
                    .contains("runs at 25000 Mb/s, the plan says 100000 Mb/s")
            );
            // A server port that is down is no fault.
            let access = want
                .ports
                .iter()
                .find(|x| !x.lldp.device.starts_with("sw"))
                .expect("access");
            let mut o = good.clone();
            o.interfaces
                .iter_mut()
                .find(|x| x.name == access.interface)
                .expect("port")
                .up = false;
            assert_eq!(
                check(&want, &o, &vendor_of, None).mismatches,
                Vec::<String>::new()
            );
            // A route with a next hop missing.
            let mut o = good.clone();
            let r = o
                .routes
                .iter_mut()
                .find(|r| r.next_hops.len() > 1)
                .expect("an ECMP route");
            let (vrf, prefix) = (r.vrf.clone(), r.prefix.clone());
            r.next_hops.pop();
            let got = check(&want, &o, &vendor_of, None).mismatches;
            assert!(
                got.len() == 1 && got[0].starts_with(&format!("sw1 VRF {vrf}: {prefix} via ")),
                "{got:?}"
            );
            // A neighbour that reports its domain name is the planned
            // switch (`sw4.fabric.example.net` is `sw4`).
            let mut o = good.clone();
            for n in &mut o.lldp {
                n.system = format!("{}.fabric.example.net", n.system);
            }
            assert_eq!(
                check(&want, &o, &vendor_of, None).mismatches,
                Vec::<String>::new()
            );
            if bgp {
                // A wrong peer AS is named as an AS mismatch, once, even
                // though the session cannot come up.
                let mut o = good.clone();
                o.bgp[0].established = false;
                let planned = o.bgp[0].remote_as.expect("as");
                o.bgp[0].remote_as = Some(planned + 1000);
                let got = check(&want, &o, &vendor_of, None).mismatches;
                assert_eq!(got.len(), 1, "{got:?}");
                assert!(
                    got[0].contains(&format!(
                        "AS mismatch with {} {}: the switch has remote AS {}, the plan says {planned} (the session is not established)",
                        want.vrfs[0].sessions[0].peer,
                        o.bgp[0].peer,
                        planned + 1000
                    )),
                    "{got:?}"
                );
                let mut o = good.clone();
                o.bgp[0].established = false;
                o.bfd[0].up = false;
                let got = check(&want, &o, &vendor_of, None).mismatches;
                assert_eq!(got.len(), 2, "{got:?}");
                assert!(
                    got[0].contains("is not established") && got[1].contains("BFD with"),
                    "{got:?}"
                );
            }
        }
    }

    /// A fresh fabric: a cable to a switch not configured yet is dark.
    #[test]
    fn dark_ports_wait_for_unconfigured_peers_but_not_in_a_running_fabric() {
        let p = plan(false);
        let want = expected(&p, "sw1", Vendor::named("nvue").expect("nvue")).expect("expected");
        let inter = want
            .ports
            .iter()
            .find(|x| x.lldp.device.starts_with("sw"))
            .expect("an inter-switch port");
        let mut o = as_planned(&want);
        o.interfaces
            .iter_mut()
            .find(|x| x.name == inter.interface)
            .expect("port")
            .up = false;
        o.lldp.retain(|n| n.port != inter.interface);
        let vendor_of = |s: &str| if s.starts_with("sw") { nvue(s) } else { None };
        // Its peer is not configured yet and the port was dark before.
        let fresh = Partial::default();
        let v = check(&want, &o, &vendor_of, Some(&fresh));
        assert_eq!(v.mismatches, Vec::<String>::new());
        assert_eq!(
            v.pending,
            [format!(
                "sw1 {}: down, waits on {} {}, not configured yet",
                inter.interface, inter.lldp.device, inter.lldp.port
            )]
        );
        // Up before the commit (a running fabric), or the peer verified
        // in this push: a fault.
        for partial in [
            Partial {
                ports_before: [inter.interface.clone()].into(),
                ..Partial::default()
            },
            Partial {
                live: [inter.lldp.device.clone()].into(),
                ..Partial::default()
            },
        ] {
            let v = check(&want, &o, &vendor_of, Some(&partial));
            assert_eq!(
                v.mismatches,
                [format!(
                    "sw1 {}: down, the plan cables it to {} {}",
                    inter.interface, inter.lldp.device, inter.lldp.port
                )]
            );
        }
    }

    /// A first install: the switch's peers run no BGP yet.
    #[test]
    fn a_session_refused_with_a_notification_is_an_as_mismatch_even_on_a_fresh_fabric() {
        let p = plan(true);
        let want = expected(&p, "sw1", Vendor::named("nvue").expect("nvue")).expect("expected");
        let s = &want.vrfs[0].sessions[0];
        let mut o = as_planned(&want);
        let session = o
            .bgp
            .iter_mut()
            .find(|b| b.peer == s.peer_address.to_string())
            .expect("session");
        session.established = false;
        // A fresh fabric: no peer verified, nothing up before the commit.
        let fresh = Partial {
            first_install: true,
            ..Partial::default()
        };
        for (reason, fault) in [
            (None, false),
            (Some("Interface down"), false),
            (Some("BGP Notification send"), true),
            (Some("BGP Notification received"), true),
            // EOS's hint (the EANTC 2025 capture of EOS 4.33.1.1F); other
            // reasons (made up here) are no AS mismatch.
            (Some("Open Message Error/bad AS number"), true),
            (Some("Open Message Error/bad BGP identifier"), false),
            (Some("Hold Timer Expired Error/None"), false),
        ] {
            let mut o = o.clone();
            o.bgp
                .iter_mut()
                .find(|b| b.peer == s.peer_address.to_string())
                .expect("session")
                .last_reset = reason.map(str::to_string);
            let v = check(&want, &o, &nvue, Some(&fresh));
            let named = v.mismatches.iter().any(|m| {
                m.contains(&format!("AS mismatch with {} {}", s.peer, s.peer_address))
                    && m.contains(&format!("the plan gives {} AS {}", s.peer, s.peer_asn))
            });
            assert_eq!(named, fault, "{reason:?}: {v:?}");
            let waits = v.pending.iter().any(|m| m.contains("waits on"));
            assert_eq!(waits, !fault, "{reason:?}: {v:?}");
        }
    }

    #[test]
    fn sessions_to_unconfigured_peers_are_pending_and_faults_still_named() {
        let p = plan(true);
        let want = expected(&p, "sw1", Vendor::named("nvue").expect("nvue")).expect("expected");
        let good = as_planned(&want);
        let vrf = want.vrfs[0].vrf.clone();
        let first = want.vrfs[0].sessions[0].clone();
        // Configured, nothing established, nothing learnt.
        let mut alone = good.clone();
        alone.bgp.iter_mut().for_each(|b| b.established = false);
        alone.bfd.iter_mut().for_each(|b| b.up = false);
        alone.routes.clear();
        let fresh = Partial::default();
        let v = check(&want, &alone, &nvue, Some(&fresh));
        assert_eq!(v.mismatches, Vec::<String>::new());
        assert_eq!(v.pending.len(), want.vrfs[0].sessions.len());
        assert!(
            v.pending[0].contains(&format!(
                "waits on {}, not configured yet",
                first.peer_device
            )),
            "{:?}",
            v.pending
        );
        // Without the partial view every session is a mismatch.
        assert_eq!(
            check(&want, &alone, &nvue, None).mismatches.len(),
            2 * want.vrfs[0].sessions.len() + want.vrfs[0].routes.len()
        );
        // A session that was up before the commit must still be up.
        let before = Partial {
            before: [(vrf.clone(), first.peer_address.to_string())].into(),
            ..Partial::default()
        };
        let v = check(&want, &alone, &nvue, Some(&before));
        assert_eq!(v.mismatches.len(), 2, "{:?}", v.mismatches);
        assert!(v.mismatches[0].contains("is not established"));
        assert!(v.mismatches[1].contains("BFD with"));
        // Up before with another remote AS (a plan whose ASNs are not
        // the fabric's): an AS mismatch naming both ASNs; the same AS
        // before and after is only "not established".
        let ran = first.peer_asn + 1000;
        let changed = Partial {
            before: [(vrf.clone(), first.peer_address.to_string())].into(),
            as_before: [((vrf.clone(), first.peer_address.to_string()), ran)].into(),
            ..Partial::default()
        };
        let v = check(&want, &alone, &nvue, Some(&changed));
        assert_eq!(
            v.mismatches[0],
            format!(
                "sw1 {} (VRF {vrf}): AS mismatch with {} {}: the switch now expects remote AS {}, the peer ran this session as AS {ran} before the commit (the session is not established)",
                first.interface, first.peer, first.peer_address, first.peer_asn
            ),
            "{:?}",
            v.mismatches
        );
        let same = Partial {
            as_before: [(
                (vrf.clone(), first.peer_address.to_string()),
                first.peer_asn,
            )]
            .into(),
            ..changed
        };
        let v = check(&want, &alone, &nvue, Some(&same));
        assert!(v.mismatches[0].ends_with("is not established"), "{v:?}");
        // The device's own reason, when it gives one.
        let mut told = alone.clone();
        told.bgp[0].last_reset = Some("BGP Notification received".into());
        let v = check(&want, &told, &nvue, Some(&same));
        assert!(
            v.mismatches[0]
                .ends_with("is not established (the switch reports: BGP Notification received)"),
            "{v:?}"
        );
        // So must a session to a peer verified earlier in the push.
        let live = Partial {
            live: [first.peer_device.clone()].into(),
            ..Partial::default()
        };
        assert_eq!(check(&want, &alone, &nvue, Some(&live)).mismatches.len(), 2);
        // A session the candidate lacks is never pending.
        let mut missing = alone.clone();
        missing.bgp.remove(0);
        let v = check(&want, &missing, &nvue, Some(&fresh));
        assert!(v.mismatches[0].contains("no BGP session with"), "{v:?}");
        // A route over a session that is not up is a fault.
        let mut stray = alone.clone();
        let (prefix, hops) = want.vrfs[0].routes.iter().next().expect("a route");
        stray.routes.push(Route {
            vrf: vrf.clone(),
            prefix: prefix.clone(),
            next_hops: vec![hops.iter().next().expect("a hop").to_string()],
        });
        let v = check(&want, &stray, &nvue, Some(&fresh));
        assert_eq!(v.mismatches.len(), 1, "{v:?}");
        assert!(v.mismatches[0].contains("which is no established BGP session"));
        // Once the fabric is up the partial view finds nothing to forgive.
        let v = check(&want, &good, &nvue, Some(&fresh));
        assert!(v.complete(), "{v:?}");
    }

    /// A device that only counts how often it was observed.
    struct Counter(std::sync::atomic::AtomicUsize);

    impl Device for Counter {
        async fn identity(&mut self) -> Result<crate::push::device::Identity> {
            unreachable!("settle only observes")
        }
        async fn load(&mut self, _: &str) -> Result<String> {
            unreachable!("settle only observes")
        }
        async fn discard(&mut self) -> Result<()> {
            unreachable!("settle only observes")
        }
        async fn prepare(&mut self) -> Result<String> {
            unreachable!("settle only observes")
        }
        fn native_timer(&self) -> bool {
            unreachable!("settle only observes")
        }
        async fn commit(&mut self, _: Duration) -> Result<crate::push::device::Commit> {
            unreachable!("settle only observes")
        }
        async fn observe(&mut self) -> Result<Observed> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(Observed::default())
        }
        async fn confirm(&mut self) -> Result<()> {
            unreachable!("settle only observes")
        }
        async fn rollback(&mut self, _: &str) -> Result<()> {
            unreachable!("settle only observes")
        }
    }

    #[tokio::test]
    async fn settle_observes_until_the_check_passes_or_the_time_is_up() {
        use std::sync::atomic::Ordering::SeqCst;
        let mut dev = Counter(0.into());
        let reads = |d: &Counter| d.0.load(SeqCst);
        let third = std::sync::atomic::AtomicUsize::new(0);
        let passes_third = |_: &Observed| Verdict {
            mismatches: if third.fetch_add(1, SeqCst) < 2 {
                vec!["not yet".to_string()]
            } else {
                Vec::new()
            },
            pending: vec!["may stay".to_string()],
        };
        let until = Instant::now() + Duration::from_secs(5);
        let v = settle_every(until, Duration::from_millis(10), &mut dev, &passes_third)
            .await
            .expect("settles");
        assert!(v.mismatches.is_empty());
        assert_eq!(reads(&dev), 3);
        // Out of time: the last verdict, after one read.
        let mut dev = Counter(0.into());
        let never = |_: &Observed| Verdict {
            mismatches: vec!["never".to_string()],
            pending: Vec::new(),
        };
        let v = settle_every(Instant::now(), Duration::from_millis(10), &mut dev, &never)
            .await
            .expect("returns");
        assert_eq!((v.mismatches.len(), reads(&dev)), (1, 1));
    }
}
