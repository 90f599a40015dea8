//! Unit tests of the import's pure parts.

use serde_json::{Value, json};

use super::{lane_breakout, split_lane};

/// Interfaces named `names`, each `gbps`.
fn ifaces(names: &[&str], gbps: u64) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"name": n, "speed": gbps * 1_000_000}))
        .collect()
}

fn check(lanes: &[&str], others: &[&str], expect: Result<&str, &str>) {
    let l = ifaces(lanes, 200);
    let o = ifaces(others, 400);
    let got = lane_breakout(&l.iter().collect::<Vec<_>>(), &o.iter().collect::<Vec<_>>());
    match (got, expect) {
        (Ok(b), Ok(e)) => assert_eq!(b, e),
        (Err(m), Err(e)) => assert!(m.contains(e), "{m}"),
        (got, expect) => panic!("{lanes:?} {others:?}: {got:?}, expected {expect:?}"),
    }
}

#[test]
fn lane_names_split_into_cage_and_lane() {
    assert_eq!(split_lane("swp9s1"), Some(("swp9", 1)));
    assert_eq!(split_lane("9s0"), Some(("9", 0)));
    for whole in ["swp9", "HundredGigE1/0/9", "Ethernet9/5", "swps1", "9s"] {
        assert_eq!(split_lane(whole), None, "{whole}");
    }
}

#[test]
fn lanes_read_back_as_a_breakout_only_when_unambiguous() {
    check(&["swp1s0", "swp1s1", "swp2s0", "swp2s1"], &[], Ok("2x200G"));
    // The cages beside their lanes.
    check(&["1s0", "1s1"], &["1"], Ok("2x200G"));
    check(
        &["1s0", "1s1", "1s2", "1s3", "2s0", "2s1", "2s2", "2s3"],
        &[],
        Ok("4x200G"),
    );
    check(
        &["1s0", "1s1", "2s0"],
        &[],
        Err("the cages have {1, 2} lanes"),
    );
    check(
        &["1s0", "1s2"],
        &[],
        Err("cage 1 has lanes {0, 2}, not 0..1"),
    );
    check(
        &["1s0", "1s1"],
        &["mgmt0"],
        Err("interface mgmt0 is neither"),
    );
    let mixed = [
        json!({"name": "1s0", "speed": 200_000_000}),
        json!({"name": "1s1", "speed": 100_000_000}),
    ];
    let m = lane_breakout(&mixed.iter().collect::<Vec<_>>(), &[]).unwrap_err();
    assert!(m.contains("lanes of several speeds"), "{m}");
}
