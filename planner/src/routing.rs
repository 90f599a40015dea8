//! The routing intent a plan carries: static routes (the default) or eBGP with BFD, and the numbers BGP needs.
//!
//! `routing = "static"` renders the route model's forwarding tables as
//! static routes, as every plan did before this intent existed (a plan or
//! inventory without `[routing]` is static and renders byte-identically).
//! `routing = "bgp"` renders an eBGP session on every inter-switch cable,
//! one private ASN per (virtual) switch, BFD on every session, ECMP over
//! every equal AS-path length (`multipath-relax`), and each switch
//! announcing its sub-node subnets with `network` statements. The BGP
//! model (`network::bgp`) predicts the routes BGP installs; a test holds
//! them equal to the static tables. docs/routing.md explains the choices.
//!
//! # ASNs
//!
//! Plan switch `i` (in `switch_list` order; each VLAN half of a split
//! switch is its own switch) gets `asn_base + i`. The default base,
//! 4,200,000,000, is the start of the RFC 6996 private 4-byte range
//! (4,200,000,000 to 4,294,967,294): the 2-byte private range
//! (64,512 to 65,534) holds 1,023 ASNs, fewer than the switches of a
//! large plan, and every vendor rendered here takes 4-byte ASNs as plain
//! numbers. The whole range `asn_base ..= asn_base + switches - 1` must
//! avoid the reserved ASNs (0, 23456 `AS_TRANS`, the documentation ranges
//! 64,496 to 64,511 and 65,536 to 65,551, 65,535 and 4,294,967,295).
//!
//! # BFD
//!
//! Default 300 ms transmit and receive intervals, detect multiplier 3: a
//! dead link is found within 0.9 s. That is the default of FRR's `bfdd`,
//! Cumulus Linux and EOS, and it survives the lab's shapers, which queue up
//! to 200 ms on a busy link (100 ms x 3 would declare a loaded but healthy
//! link dead). The limits are what every vendor here accepts: intervals of
//! 50 to 999 ms (EOS `bfd interval` takes 50 to 999) and a multiplier of 3
//! to 50 (EOS again; FRR, NVUE and Comware take wider ranges).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::Problem;

/// How the switches route between each other.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RoutingMode {
    /// Static routes from the route model's forwarding tables.
    #[default]
    Static,
    /// eBGP on every inter-switch cable, with BFD and ECMP.
    Bgp,
}

impl RoutingMode {
    /// Every mode, in the order of the documentation.
    pub const ALL: [RoutingMode; 2] = [RoutingMode::Static, RoutingMode::Bgp];

    /// The name in the inventory, the plan and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingMode::Static => "static",
            RoutingMode::Bgp => "bgp",
        }
    }

    /// The mode named `name` (lowercase).
    pub fn named(name: &str) -> Option<RoutingMode> {
        RoutingMode::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

impl fmt::Display for RoutingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// BFD timers of every fabric session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bfd {
    /// Desired minimum transmit interval, ms.
    pub tx_ms: u32,
    /// Required minimum receive interval, ms.
    pub rx_ms: u32,
    /// Missed packets before the session is declared down.
    pub multiplier: u32,
}

impl Default for Bfd {
    fn default() -> Self {
        Self {
            tx_ms: DEFAULT_BFD_MS,
            rx_ms: DEFAULT_BFD_MS,
            multiplier: DEFAULT_BFD_MULTIPLIER,
        }
    }
}

impl Bfd {
    /// How long a dead link takes to be declared down, ms (the peer's
    /// transmit interval, here the same as ours, times the multiplier).
    pub fn detection_ms(&self) -> u32 {
        self.rx_ms.max(self.tx_ms) * self.multiplier
    }
}

/// The routing intent: `[routing]` in the inventory, `routing` in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Routing {
    /// `static` or `bgp`.
    pub mode: RoutingMode,
    /// ASN of the plan's first switch; switch `i` has `asn_base + i`.
    pub asn_base: u32,
    /// BFD timers (BGP only).
    pub bfd: Bfd,
}

impl Default for Routing {
    fn default() -> Self {
        Self {
            mode: RoutingMode::Static,
            asn_base: DEFAULT_ASN_BASE,
            bfd: Bfd::default(),
        }
    }
}

/// The start of the RFC 6996 private 4-byte ASN range.
pub const DEFAULT_ASN_BASE: u32 = 4_200_000_000;
/// Default BFD transmit and receive interval, ms.
pub const DEFAULT_BFD_MS: u32 = 300;
/// Default BFD detect multiplier.
pub const DEFAULT_BFD_MULTIPLIER: u32 = 3;
/// BFD intervals every vendor takes, ms (EOS: 50 to 999).
pub const BFD_MS: std::ops::RangeInclusive<u32> = 50..=999;
/// BFD detect multipliers every vendor takes (EOS: 3 to 50).
pub const BFD_MULTIPLIER: std::ops::RangeInclusive<u32> = 3..=50;
/// The largest ASN a switch may have (4,294,967,295 is reserved).
pub const MAX_ASN: u32 = 4_294_967_294;

/// ASNs no switch may have, with why (RFC 7607, RFC 6793, RFC 5398,
/// RFC 7300).
const RESERVED_ASNS: [(u32, u32, &str); 4] = [
    (23_456, 23_456, "AS_TRANS (RFC 6793)"),
    (64_496, 64_511, "reserved for documentation (RFC 5398)"),
    (65_535, 65_535, "reserved (RFC 7300)"),
    (65_536, 65_551, "reserved for documentation (RFC 5398)"),
];

impl Routing {
    /// True for the intent a plan without `routing` has: it is left out of
    /// the plan file, so static plans stay byte-identical.
    pub fn is_default(&self) -> bool {
        *self == Routing::default()
    }

    /// True for BGP.
    pub fn is_bgp(&self) -> bool {
        self.mode == RoutingMode::Bgp
    }

    /// The ASN of plan switch `switch` (see the module documentation).
    /// Checked plans keep it within [`MAX_ASN`]; saturates otherwise.
    pub fn asn(&self, switch: usize) -> u32 {
        u32::try_from(switch)
            .ok()
            .and_then(|s| self.asn_base.checked_add(s))
            .unwrap_or(u32::MAX)
    }

    /// Every reason the intent cannot be rendered for a plan of
    /// `switches` switches; objects are `routing <field>`.
    pub fn problems(&self, switches: usize) -> Vec<Problem> {
        let mut out = Vec::new();
        for (field, v) in [("bfd tx_ms", self.bfd.tx_ms), ("bfd rx_ms", self.bfd.rx_ms)] {
            if !BFD_MS.contains(&v) {
                out.push(Problem::at(
                    None,
                    format!("routing {field}"),
                    format!("{v} ms is outside {}..={} ms", BFD_MS.start(), BFD_MS.end()),
                    "give a BFD interval every vendor takes (default 300)",
                ));
            }
        }
        if !BFD_MULTIPLIER.contains(&self.bfd.multiplier) {
            out.push(Problem::at(
                None,
                "routing bfd multiplier",
                format!(
                    "{} is outside {}..={}",
                    self.bfd.multiplier,
                    BFD_MULTIPLIER.start(),
                    BFD_MULTIPLIER.end()
                ),
                "give a detect multiplier every vendor takes (default 3)",
            ));
        }
        out.extend(self.asn_problem(switches));
        out
    }

    /// Why `asn_base ..= asn_base + switches - 1` is not a range of usable
    /// ASNs, if it is not.
    fn asn_problem(&self, switches: usize) -> Option<Problem> {
        let fix = "set [routing] asn_base to a private range with room for every switch, e.g. 4200000000 (RFC 6996)";
        let first = u64::from(self.asn_base);
        let last = first + (switches.max(1) as u64) - 1;
        if first == 0 {
            return Some(Problem::at(
                None,
                "routing asn_base",
                "ASN 0 is reserved (RFC 7607)",
                fix,
            ));
        }
        if last > u64::from(MAX_ASN) {
            return Some(Problem::at(
                None,
                "routing asn_base",
                format!(
                    "the plan's {switches} switches need ASNs {first} to {last}, past the largest ASN {MAX_ASN}"
                ),
                fix,
            ));
        }
        RESERVED_ASNS
            .iter()
            .find(|(lo, hi, _)| u64::from(*lo) <= last && first <= u64::from(*hi))
            .map(|(lo, hi, why)| {
                let asns = if lo == hi {
                    format!("ASN {lo}")
                } else {
                    format!("ASNs {lo} to {hi}")
                };
                Problem::at(
                    None,
                    "routing asn_base",
                    format!(
                        "the plan's {switches} switches get ASNs {first} to {last}, which hold {asns}, {why}"
                    ),
                    fix,
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(r: Routing, switches: usize) -> Vec<String> {
        r.problems(switches)
            .into_iter()
            .map(|p| format!("{}: {}", p.object, p.message))
            .collect()
    }

    #[test]
    fn defaults_pass_and_are_static() {
        let r = Routing::default();
        assert!(r.is_default() && !r.is_bgp());
        assert!(check(r, 100_000).is_empty());
        assert_eq!(r.asn(3), 4_200_000_003);
        assert_eq!(r.bfd.detection_ms(), 900);
    }

    #[test]
    fn bad_numbers_name_their_field() {
        let r = Routing {
            mode: RoutingMode::Bgp,
            asn_base: 65_500,
            bfd: Bfd {
                tx_ms: 10,
                rx_ms: 1000,
                multiplier: 2,
            },
        };
        assert_eq!(
            check(r, 40),
            [
                "routing bfd tx_ms: 10 ms is outside 50..=999 ms",
                "routing bfd rx_ms: 1000 ms is outside 50..=999 ms",
                "routing bfd multiplier: 2 is outside 3..=50",
                "routing asn_base: the plan's 40 switches get ASNs 65500 to 65539, which hold ASN 65535, reserved (RFC 7300)",
            ]
        );
        let r = Routing {
            asn_base: MAX_ASN - 2,
            ..Routing::default()
        };
        assert_eq!(
            check(r, 4),
            [
                "routing asn_base: the plan's 4 switches need ASNs 4294967292 to 4294967295, past the largest ASN 4294967294"
            ]
        );
        assert_eq!(check(r, 3), Vec::<String>::new());
        let r = Routing {
            asn_base: 0,
            ..Routing::default()
        };
        assert_eq!(
            check(r, 1),
            ["routing asn_base: ASN 0 is reserved (RFC 7607)"]
        );
        let r = Routing {
            asn_base: 64_512,
            ..Routing::default()
        };
        assert!(check(r, 1023).is_empty());
    }

    /// The inventory's `[routing]` table: each bad value with its line;
    /// good values reach the plan, `--routing` overrides the mode, and
    /// the ASN range is checked against the switches the design made.
    #[test]
    fn the_inventory_table_reaches_the_plan_with_lines_for_its_problems() {
        use crate::design::{DesignOptions, design};
        use crate::qos::tests::parse;
        let err = parse(
            "\n[routing]\nmode = \"ospf\"\nasn_base = 0\n[routing.bfd]\ntx_ms = 20\nmultiplier = 99\n",
        )
        .unwrap_err()
        .to_string();
        for want in [
            "inv.toml:39: routing: mode `ospf` is not a routing mode",
            "inv.toml:40: routing: asn_base 0 is outside 1..4294967294",
            "inv.toml:42: routing bfd: tx_ms 20 is outside 50..999",
            "inv.toml:43: routing bfd: multiplier 99 is outside 3..50",
        ] {
            assert!(err.contains(want), "missing `{want}` in:\n{err}");
        }
        let inv =
            parse("\n[routing]\nmode = \"bgp\"\nasn_base = 64512\n[routing.bfd]\nrx_ms = 500\n")
                .unwrap();
        let plan = design(&inv, &DesignOptions::default()).unwrap();
        assert!(plan.routing.is_bgp());
        assert_eq!((plan.routing.asn(1), plan.routing.bfd.rx_ms), (64513, 500));
        let opts = DesignOptions {
            routing: Some(RoutingMode::Static),
            ..DesignOptions::default()
        };
        assert!(!design(&inv, &opts).unwrap().routing.is_bgp());
        // 4 switches from 65533 reach the reserved 65535.
        let inv = parse("\n[routing]\nasn_base = 65533\n").unwrap();
        let err = design(&inv, &DesignOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "inv.toml:38: routing asn_base: the plan's 4 switches get ASNs 65533 to 65536"
            ),
            "{err}"
        );
    }

    /// A hand-edited plan with a bad intent is refused at load, naming
    /// the file and the field; a plan written before the intent loads as
    /// static.
    #[test]
    fn a_plan_load_names_the_file_and_field() {
        let plan = crate::network::tests::eflops_plan();
        let mut json: serde_json::Value = serde_json::from_str(&plan.to_json().unwrap()).unwrap();
        assert!(json.get("routing").is_none());
        let old = crate::CheckedPlan::load(&json.to_string(), "old.json").unwrap();
        assert_eq!(old.routing, Routing::default());
        json["routing"] = serde_json::json!({"mode": "bgp", "bfd": {"multiplier": 1}});
        let err = crate::CheckedPlan::load(&json.to_string(), "edited.json")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("edited.json:"), "{err}");
        assert!(
            err.contains("routing bfd multiplier: 1 is outside 3..=50"),
            "{err}"
        );
        json["routing"] = serde_json::json!({"mode": "rip"});
        let err = crate::CheckedPlan::load(&json.to_string(), "edited.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("edited.json") && err.contains("rip"), "{err}");
    }

    #[test]
    fn a_plan_without_routing_reads_as_static() {
        let r: Routing = serde_json::from_str("{}").unwrap();
        assert_eq!(r, Routing::default());
        let r: Routing =
            serde_json::from_str(r#"{"mode": "bgp", "bfd": {"multiplier": 5}}"#).unwrap();
        assert!(r.is_bgp());
        assert_eq!(r.bfd.multiplier, 5);
        assert_eq!(r.bfd.tx_ms, 300);
    }
}
