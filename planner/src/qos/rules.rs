//! The QoS rules: the range of every number of the intent and the conflicts between classes, in one place.
//!
//! The inventory's `[qos]` checks (each problem with its line) and the
//! checks of a resolved or hand-edited intent ([`super::QosIntent::problems`])
//! both read these; each rule returns what is wrong and what to change,
//! and the caller adds the line and the object it knows.

use super::{MAX_MTU, MIN_MTU};

/// A broken rule: what is wrong and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub fix: &'static str,
}

/// The values a number of the intent may take, with the fix when it is
/// outside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Smallest value allowed.
    pub min: i64,
    /// Largest value allowed.
    pub max: i64,
    /// What to change when the value is outside.
    pub fix: &'static str,
}

impl Range {
    /// `value` if it is within the range, else `key value is outside
    /// min..max` with the fix.
    pub fn check(&self, key: &str, value: i64) -> Result<i64, Violation> {
        if (self.min..=self.max).contains(&value) {
            Ok(value)
        } else {
            Err(Violation {
                message: format!("{key} {value} is outside {}..{}", self.min, self.max),
                fix: self.fix,
            })
        }
    }
}

/// The MTU of every port (`[qos] mtu`).
pub const MTU: Range = Range {
    min: MIN_MTU as i64,
    max: MAX_MTU as i64,
    fix: "set mtu to the switch ports' MTU, e.g. 9216",
};

/// The MTU of one switch's ports (`[[qos.switch]] mtu`).
pub const SWITCH_MTU: Range = Range {
    fix: "set the MTU of the switch's ports, e.g. 9216",
    ..MTU
};

/// The RoCEv2 GID index of the NICs.
pub const GID_INDEX: Range = Range {
    min: 0,
    max: 255,
    fix: "set the RoCEv2 GID index of the NICs, usually 3",
};

/// A DSCP (6 bits).
pub const DSCP: Range = Range {
    min: 0,
    max: 63,
    fix: "set dscp between 0 and 63",
};

/// An 802.1p priority, traffic class and egress queue (3 bits).
pub const PRIORITY: Range = Range {
    min: 0,
    max: 7,
    fix: "set priority between 0 and 7",
};

/// An ECN marking threshold in KB (`min_kb`, `max_kb`).
pub const ECN_KB: Range = Range {
    min: 1,
    max: 1_000_000,
    fix: "give the queue depth in KB (1024 bytes), e.g. 150",
};

/// The ECN marking probability in percent.
pub const ECN_PROBABILITY: Range = Range {
    min: 1,
    max: 100,
    fix: "set the marking probability in percent",
};

/// A PFC watchdog timer in milliseconds.
pub const WATCHDOG_MS: Range = Range {
    min: 10,
    max: 60_000,
    fix: "give the timer in milliseconds (10 to 60000)",
};

/// Two owners of one DSCP: `other` is the first owner as a person names it
/// (`class roce-upper`, `the CNP`).
pub fn shared_dscp(dscp: i64, other: &str) -> Violation {
    Violation {
        message: format!("DSCP {dscp} is also the DSCP of {other}"),
        fix: "give every class and the CNP their own DSCP",
    }
}

/// A lossless class on the CNP's priority, which is a strict-priority
/// queue without PFC.
pub fn lossless_on_cnp(priority: i64) -> Violation {
    Violation {
        message: format!("lossless priority {priority} is also the CNP's strict-priority queue"),
        fix: "give lossless classes a priority other than the CNP's",
    }
}

/// ECN marks between two thresholds, so `min_kb` must be below `max_kb`.
pub fn ecn_order(min_kb: i64, max_kb: i64) -> Option<Violation> {
    (min_kb >= max_kb).then(|| Violation {
        message: format!("min_kb {min_kb} is not below max_kb {max_kb}"),
        fix: "set min_kb below max_kb, e.g. 150 and 1500",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_take_their_ends_and_name_the_key() {
        assert_eq!(DSCP.check("dscp", 63), Ok(63));
        assert_eq!(DSCP.check("dscp", 0), Ok(0));
        let v = DSCP.check("dscp", 64).unwrap_err();
        assert_eq!(v.message, "dscp 64 is outside 0..63");
        assert_eq!(v.fix, "set dscp between 0 and 63");
        assert_eq!(
            SWITCH_MTU.check("mtu", 1499).unwrap_err().message,
            "mtu 1499 is outside 1500..9216"
        );
        assert!(WATCHDOG_MS.check("polling_ms", 9).is_err());
    }

    #[test]
    fn conflicts() {
        assert_eq!(ecn_order(150, 1500), None);
        assert!(ecn_order(1500, 1500).is_some());
        assert_eq!(
            shared_dscp(26, "class a").message,
            "DSCP 26 is also the DSCP of class a"
        );
        assert!(lossless_on_cnp(6).message.contains("priority 6"));
    }
}
