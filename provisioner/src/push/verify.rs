//! Verification: what a switch reports ([`Observed`]) against what the
//! plan says it must be ([`Expected`]), as mismatches that name the switch,
//! the port and the peer.
//!
//! The expected state comes from the checked plan's cables: every
//! inter-switch port of the physical switch must be up at the cable's
//! speed, with the cable's far end as its LLDP neighbour (system name and
//! port, named as the far switch's vendor names it). Ports to sub-nodes
//! are checked for speed when they are up (a server may be off during a
//! push); they are not required to be up.

use std::collections::BTreeMap;

use planner::checked::CheckedPlan;
use planner::fabric::CableKind;
use planner::plan::PlanSwitch;
use planner::render::Vendor;
use serde::Serialize;

use super::device::Observed;

/// One port the plan cables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpectedPort {
    /// The local interface name (this switch's vendor).
    pub port: String,
    /// Planned speed in Mb/s.
    pub speed_mbps: u64,
    /// The far switch and its interface name, for inter-switch cables.
    pub neighbour: Option<(String, String)>,
}

/// What one physical switch must look like after a push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expected {
    /// The physical switch.
    pub switch: String,
    /// Every cabled port, in port order.
    pub ports: Vec<ExpectedPort>,
}

/// The virtual switch of physical switch `physical` that has `port`, or
/// any of its virtual switches.
fn owner<'p>(plan: &'p CheckedPlan, physical: &str, port: u32) -> Option<&'p PlanSwitch> {
    let mut any = None;
    for s in plan.switch_list.iter().filter(|s| s.physical == physical) {
        if s.ports.iter().any(|p| p.port == port) {
            return Some(s);
        }
        any.get_or_insert(s);
    }
    any
}

/// The expected state of `switch`; `vendor_of` gives each physical
/// switch's vendor (the devices file), for interface names.
pub fn expected(
    plan: &CheckedPlan,
    switch: &str,
    vendor_of: &dyn Fn(&str) -> Option<Vendor>,
) -> Expected {
    let mut ports: BTreeMap<u32, ExpectedPort> = BTreeMap::new();
    let name = |physical: &str, port: u32| -> Option<String> {
        let v = vendor_of(physical)?;
        Some(v.port_name(owner(plan, physical, port)?, port))
    };
    for c in &plan.cables {
        let speed_mbps = u64::from(c.gbps) * 1000;
        match c.kind {
            CableKind::InterSwitch => {
                let Ok(b_port) = c.b_port.parse::<u32>() else {
                    continue;
                };
                let ends = [
                    (&c.a, c.a_port, &c.b, b_port),
                    (&c.b, b_port, &c.a, c.a_port),
                ];
                for (here, hp, there, tp) in ends {
                    if here != switch {
                        continue;
                    }
                    let (Some(local), Some(far)) = (name(here, hp), name(there, tp)) else {
                        continue;
                    };
                    ports.insert(
                        hp,
                        ExpectedPort {
                            port: local,
                            speed_mbps,
                            neighbour: Some((there.clone(), far)),
                        },
                    );
                }
            }
            CableKind::SubNode => {
                if c.a != switch {
                    continue;
                }
                if let Some(local) = name(&c.a, c.a_port) {
                    ports.insert(
                        c.a_port,
                        ExpectedPort {
                            port: local,
                            speed_mbps,
                            neighbour: None,
                        },
                    );
                }
            }
        }
    }
    Expected {
        switch: switch.to_string(),
        ports: ports.into_values().collect(),
    }
}

/// The mismatches of `seen` against `want`; empty when the switch is as
/// planned.
pub fn check(want: &Expected, seen: &Observed) -> Vec<String> {
    let sw = &want.switch;
    let mut out = Vec::new();
    for p in &want.ports {
        let iface = seen.interfaces.iter().find(|i| i.name == p.port);
        let Some(iface) = iface else {
            out.push(format!(
                "{sw} {}: the switch does not report this port",
                p.port
            ));
            continue;
        };
        let Some((peer, peer_port)) = &p.neighbour else {
            // A sub-node port: the speed when it is up.
            if iface.up
                && let Some(s) = iface.speed_mbps
                && s != p.speed_mbps
            {
                out.push(format!(
                    "{sw} {}: runs at {} Mb/s, the plan says {} Mb/s",
                    p.port, s, p.speed_mbps
                ));
            }
            continue;
        };
        if !iface.up {
            out.push(format!(
                "{sw} {}: down, the plan cables it to {peer} {peer_port}",
                p.port
            ));
            continue;
        }
        if let Some(s) = iface.speed_mbps
            && s != p.speed_mbps
        {
            out.push(format!(
                "{sw} {}: runs at {} Mb/s, the plan says {} Mb/s (cable to {peer} {peer_port})",
                p.port, s, p.speed_mbps
            ));
        }
        let here: Vec<_> = seen.lldp.iter().filter(|n| n.port == p.port).collect();
        if here.is_empty() {
            out.push(format!(
                "{sw} {}: no LLDP neighbour, the plan cables it to {peer} {peer_port}",
                p.port
            ));
        } else if !here
            .iter()
            .any(|n| &n.system == peer && &n.port_id == peer_port)
        {
            let got: Vec<String> = here
                .iter()
                .map(|n| format!("{} {}", n.system, n.port_id))
                .collect();
            out.push(format!(
                "{sw} {}: LLDP neighbour is {}, the plan cables it to {peer} {peer_port}",
                p.port,
                got.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::device::{Interface, LldpNeighbour};

    fn want() -> Expected {
        Expected {
            switch: "sw01".into(),
            ports: vec![
                ExpectedPort {
                    port: "swp1".into(),
                    speed_mbps: 100_000,
                    neighbour: Some(("sw02".into(), "swp17".into())),
                },
                ExpectedPort {
                    port: "swp9".into(),
                    speed_mbps: 100_000,
                    neighbour: None,
                },
            ],
        }
    }

    fn seen(
        up1: bool,
        speed1: u64,
        lldp: Option<(&str, &str)>,
        swp9: Option<(bool, u64)>,
    ) -> Observed {
        let mut o = Observed::default();
        o.interfaces.push(Interface {
            name: "swp1".into(),
            up: up1,
            speed_mbps: Some(speed1),
        });
        if let Some((up, s)) = swp9 {
            o.interfaces.push(Interface {
                name: "swp9".into(),
                up,
                speed_mbps: Some(s),
            });
        }
        if let Some((sys, port)) = lldp {
            o.lldp.push(LldpNeighbour {
                port: "swp1".into(),
                system: sys.into(),
                port_id: port.into(),
            });
        }
        o
    }

    #[test]
    fn mismatches_name_port_and_peer() {
        let cases: &[(Observed, &[&str])] = &[
            (
                seen(
                    true,
                    100_000,
                    Some(("sw02", "swp17")),
                    Some((true, 100_000)),
                ),
                &[],
            ),
            (
                seen(true, 100_000, Some(("sw02", "swp17")), Some((false, 0))),
                &[],
            ),
            (
                seen(
                    false,
                    100_000,
                    Some(("sw02", "swp17")),
                    Some((true, 100_000)),
                ),
                &["sw01 swp1: down, the plan cables it to sw02 swp17"],
            ),
            (
                seen(true, 25_000, Some(("sw02", "swp17")), Some((true, 100_000))),
                &["sw01 swp1: runs at 25000 Mb/s, the plan says 100000 Mb/s (cable to sw02 swp17)"],
            ),
            (
                seen(
                    true,
                    100_000,
                    Some(("sw03", "swp17")),
                    Some((true, 100_000)),
                ),
                &["sw01 swp1: LLDP neighbour is sw03 swp17, the plan cables it to sw02 swp17"],
            ),
            (
                seen(true, 100_000, None, Some((true, 100_000))),
                &["sw01 swp1: no LLDP neighbour, the plan cables it to sw02 swp17"],
            ),
            (
                seen(true, 100_000, Some(("sw02", "swp17")), Some((true, 25_000))),
                &["sw01 swp9: runs at 25000 Mb/s, the plan says 100000 Mb/s"],
            ),
            (
                seen(true, 100_000, Some(("sw02", "swp17")), None),
                &["sw01 swp9: the switch does not report this port"],
            ),
        ];
        for (o, want_msgs) in cases {
            assert_eq!(check(&want(), o), *want_msgs, "{o:?}");
        }
    }
}
