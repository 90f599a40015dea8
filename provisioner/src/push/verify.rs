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
//!   established, its BFD peer up when the plan runs BFD.
//! - Routes: every planned prefix installed in its VRF with exactly the
//!   planned next hops (other routes, such as connected ones, are not
//!   compared).

use std::collections::BTreeSet;

use planner::checked::CheckedPlan;
use planner::expect::Expected;
use planner::render::Vendor;

use super::device::Observed;
use super::error::{PushError, Result};

/// What physical switch `switch` must show when configured with `vendor`.
pub fn expected(plan: &CheckedPlan, switch: &str, vendor: Vendor) -> Result<Expected> {
    planner::expect::switch(plan, switch, vendor).map_err(|e| PushError::Plan {
        file: plan.source().to_string(),
        source: Box::new(e),
    })
}

/// The mismatches of `seen` against `want`; empty when the switch is as
/// planned. `vendor_of(peer)` is the vendor of physical switch `peer` of
/// the plan (`None` for a server); a peer of this switch's vendor has its
/// port name compared too.
pub fn check(
    want: &Expected,
    seen: &Observed,
    vendor_of: &dyn Fn(&str) -> Option<Vendor>,
) -> Vec<String> {
    let sw = &want.device;
    let mut out = Vec::new();
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
            if !here.is_empty() && !here.iter().any(|n| &n.system == peer) {
                out.push(format!(
                    "{sw} {port}: LLDP neighbour is {}, the plan cables it to {peer} {peer_port}",
                    neighbours(&here)
                ));
            }
            continue;
        };
        if !iface.up {
            out.push(format!(
                "{sw} {port}: down, the plan cables it to {peer} {peer_port}"
            ));
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
        if here.is_empty() {
            out.push(format!(
                "{sw} {port}: no LLDP neighbour, the plan cables it to {peer} {peer_port}"
            ));
        } else if !here
            .iter()
            .any(|n| &n.system == peer && (!compare_port || &n.port_id == peer_port))
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
            match session {
                None => out.push(format!(
                    "{sw} {} (VRF {}): no BGP session with {} {peer}",
                    s.interface, v.vrf, s.peer
                )),
                Some(b) if !b.established => out.push(format!(
                    "{sw} {} (VRF {}): the BGP session with {} {peer} is not established",
                    s.interface, v.vrf, s.peer
                )),
                Some(b) if b.remote_as.is_some_and(|a| a != s.peer_asn) => out.push(format!(
                    "{sw} {} (VRF {}): {} {peer} has AS {}, the plan says {}",
                    s.interface,
                    v.vrf,
                    s.peer,
                    b.remote_as.unwrap_or_default(),
                    s.peer_asn
                )),
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
    out
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
            assert_eq!(check(&want, &good, &nvue), Vec::<String>::new(), "{file}");
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
                check(&want, &o, &vendor_of),
                [format!("sw1 {i}: down, the plan cables it to {peer}")]
            );
            let mut o = good.clone();
            o.lldp
                .iter_mut()
                .find(|x| &x.port == i)
                .expect("lldp")
                .system = "sw9".into();
            assert_eq!(
                check(&want, &o, &vendor_of),
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
                check(&want, &o, &vendor_of)[0]
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
            assert_eq!(check(&want, &o, &vendor_of), Vec::<String>::new());
            // A route with a next hop missing.
            let mut o = good.clone();
            let r = o
                .routes
                .iter_mut()
                .find(|r| r.next_hops.len() > 1)
                .expect("an ECMP route");
            let (vrf, prefix) = (r.vrf.clone(), r.prefix.clone());
            r.next_hops.pop();
            let got = check(&want, &o, &vendor_of);
            assert!(
                got.len() == 1 && got[0].starts_with(&format!("sw1 VRF {vrf}: {prefix} via ")),
                "{got:?}"
            );
            if bgp {
                let mut o = good.clone();
                o.bgp[0].established = false;
                o.bfd[0].up = false;
                let got = check(&want, &o, &vendor_of);
                assert_eq!(got.len(), 2, "{got:?}");
                assert!(
                    got[0].contains("is not established") && got[1].contains("BFD with"),
                    "{got:?}"
                );
            }
        }
    }
}
