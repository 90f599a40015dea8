//! The lab (`provisioner lab`): builds a plan's fabric in Linux network namespaces on one machine, runs the collective engine across it, and counts per link and per step what crossed.
//!
//! - [`sys`]: the one place that runs `ip` and `tc`, and the checks that
//!   the machine can (root, the tools);
//! - [`state`]: the state file that lists everything a lab made, written
//!   before anything is made;
//! - [`build`]: `up`, `down`, `status`, one cable changed (`degrade`,
//!   `cut`, `restore`) and the pins of a run;
//! - [`run`]: one engine per sub-node inside its namespace, the timed run
//!   and the counted run (link counters read between steps, beside what
//!   `verify-ranks` predicts for the same table and routes);
//! - [`frr`]: FRR instances and lldpd in the switch namespaces of a
//!   BGP lab (`lab up --routing bgp`), configured by `provisioner push`;
//! - [`foreign`]: other engines in the lab: a command in a sub-node's
//!   namespace under its server's host name (`lab exec`), the launch
//!   agent `mpirun` starts its daemons with, and per-link byte counters
//!   around a marked interval of their run (`lab measure`);
//! - [`burnin`]: rounds of disjoint flows that put one flow on every
//!   directed inter-switch link, and the links below their rate.
//!
//! What the lab is built from is `planner::network::Lab`: the same model
//! of addresses and routes every renderer reads, so the lab forwards with
//! the routes `render` writes.

pub mod build;
pub mod burnin;
mod error;
pub mod foreign;
pub mod frr;
pub mod run;
pub mod state;
pub mod sys;
pub mod trust;

pub use error::{Error, Result};

/// The name of switch port `p` in the lab: `swp{p}`, as Cumulus and
/// SONiC-on-Linux name front-panel ports and as the `frr` render names
/// them. Every interface name of a lab switch port comes from here.
pub fn port_name(p: u32) -> String {
    format!("swp{p}")
}

/// The port number of a lab switch interface name (`swp7` -> 7); `None`
/// for any other interface (`lo`, `br0`, a VRF).
pub(crate) fn port_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("swp")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Most rate of one NIC cable by default, kbit/s.
pub(crate) const DEFAULT_RATE_KBIT: u64 = 100_000;

/// What all NIC cables of a lab carry at most by default, kbit/s: two
/// cores forward this through three veth hops per flow and keep up
/// (docs/lab.md, "Rates").
pub(crate) const DEFAULT_BUDGET_KBIT: u64 = 1_600_000;

/// The default rate of the fastest NIC cable for a lab of `hosts`
/// sub-nodes: 100 Mbit/s, or less so that all of them together stay
/// within [`DEFAULT_BUDGET_KBIT`]; at least 1 Mbit/s.
pub fn default_rate(hosts: usize) -> u64 {
    let per = DEFAULT_BUDGET_KBIT / (hosts.max(1) as u64);
    per.clamp(1_000, DEFAULT_RATE_KBIT)
}

/// Parses a rate: `100mbit`, `1gbit`, `500kbit` (also `M`, `G`, `K`
/// suffixes and `bit`), in kbit/s.
pub fn parse_rate(text: &str) -> Result<u64> {
    let t = text.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || {
        Error::parameter(
            "rate",
            format!(
                "`{}`: give a whole number with a unit, such as 100mbit, 1gbit or 500kbit",
                text.escape_debug()
            ),
        )
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    let per = match unit.trim_end_matches("bit").trim_end_matches("bps") {
        "k" => 1,
        "m" => 1_000,
        "g" => 1_000_000,
        _ => return Err(bad()),
    };
    let kbit = n.checked_mul(per).ok_or_else(bad)?;
    if !(8..=100_000_000).contains(&kbit) {
        return Err(Error::parameter(
            "rate",
            format!("{text}: give 8kbit to 100gbit"),
        ));
    }
    Ok(kbit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_rate_keeps_the_machine_out_of_the_measurement() {
        assert_eq!(default_rate(16), 100_000);
        assert_eq!(default_rate(64), 25_000);
        assert_eq!(default_rate(100_000), 1_000);
        assert_eq!(default_rate(0), 100_000);
    }

    #[test]
    fn port_names_round_trip() {
        assert_eq!(port_name(7), "swp7");
        assert_eq!(port_number(&port_name(7)), Some(7));
        assert_eq!(port_number("swp48"), Some(48));
        for other in ["lo", "br0", "swp", "swp1a", "p1", "eth0", "swp+1"] {
            assert_eq!(port_number(other), None, "{other}");
        }
    }

    #[test]
    fn rates_parse_in_kbit() {
        assert_eq!(parse_rate("100mbit").unwrap(), 100_000);
        assert_eq!(parse_rate("1Gbit").unwrap(), 1_000_000);
        assert_eq!(parse_rate("500kbit").unwrap(), 500);
        assert_eq!(parse_rate("20M").unwrap(), 20_000);
        for bad in [
            "", "mbit", "10", "1.5gbit", "10tbit", "-1mbit", "4kbit", "999gbit",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad:?} accepted");
        }
    }
}
