//! Tests of the references as numbers (`refs.rs`): they resolve as a
//! search by name does, and the load check finds the same whether a
//! plan's equal names share one allocation or not.

use proptest::prelude::*;
use serde_json::Value;

use super::refs::{Numbers, Passed, Refs};
use super::*;
use crate::plan::Name;

/// The plan of `json` with equal names shared, as a plan file is read.
pub(super) fn shared(json: &str) -> Plan {
    Plan::from_json(json, "plan.json").unwrap()
}

/// The plan of `json` with every name its own allocation, as a plan
/// built by hand is.
fn unshared(json: &str) -> Plan {
    serde_json::from_str(json).unwrap()
}

/// The number a search by name gives: the last switch or server with the
/// name (as a table filled in order keeps it), the first physical switch.
fn by_name(plan: &Plan) -> Refs {
    let last = |names: Vec<&str>, text: &str| {
        names
            .iter()
            .rposition(|n| *n == text)
            .map_or(NONE, |i| i as u32)
    };
    let switches: Vec<&str> = plan.switch_list.iter().map(|s| s.name.as_str()).collect();
    let servers: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
    let mut boxes: Vec<&str> = Vec::new();
    for s in &plan.switch_list {
        if !boxes.contains(&s.physical.as_str()) {
            boxes.push(&s.physical);
        }
    }
    let vs = |t: &str| last(switches.clone(), t);
    let server = |t: &str| last(servers.clone(), t);
    let phys = |t: &str| {
        boxes
            .iter()
            .position(|b| *b == t)
            .map_or(NONE, |i| i as u32)
    };
    let mut port_base = vec![0];
    let mut peer = Vec::new();
    for s in &plan.switch_list {
        for p in &s.ports {
            peer.push(match (p.role, &p.peer) {
                (PortRole::InterSwitch, Some(n)) => vs(n),
                (PortRole::SubNode, Some(n)) => server(n),
                _ => NONE,
            });
        }
        port_base.push(peer.len());
    }
    Refs {
        sub_switch: plan.sub_node_list.iter().map(|sn| vs(&sn.switch)).collect(),
        sub_switch1: (plan.sub_node_list.iter())
            .map(|sn| vs(sn.port1.as_ref().map_or(&sn.switch, |a| &a.switch)))
            .collect(),
        sub_server: plan
            .sub_node_list
            .iter()
            .map(|sn| server(&sn.server))
            .collect(),
        port_base,
        peer,
        cable: (plan.cables.iter())
            .map(|c| {
                let b = match c.kind {
                    CableKind::InterSwitch => phys(&c.b),
                    CableKind::SubNode => server(&c.b),
                };
                (phys(&c.a), b)
            })
            .collect(),
    }
}

fn assert_refs_eq(a: &Refs, b: &Refs) {
    assert_eq!(a.sub_switch, b.sub_switch, "sub-node switches");
    assert_eq!(a.sub_switch1, b.sub_switch1, "sub-node port 1 switches");
    assert_eq!(a.sub_server, b.sub_server, "sub-node servers");
    assert_eq!(a.port_base, b.port_base, "port positions");
    assert_eq!(a.peer, b.peer, "port peers");
    assert_eq!(a.cable, b.cable, "cable ends");
}

/// Every name of the plan that may be a reference or referred to.
pub(super) fn names(v: &Value) -> Vec<String> {
    let mut out = vec!["nowhere".to_string(), "bad name".to_string()];
    let mut add = |x: &Value| {
        if let Some(s) = x.as_str()
            && !out.iter().any(|o| o == s)
        {
            out.push(s.to_string());
        }
    };
    for s in v["switch_list"].as_array().unwrap() {
        add(&s["name"]);
        add(&s["physical"]);
    }
    for s in v["servers"].as_array().unwrap() {
        add(&s["name"]);
    }
    for sn in v["sub_node_list"].as_array().unwrap() {
        add(&sn["nic"]);
    }
    out
}

/// Record `at` (modulo their count) of a list.
pub(super) fn pick(list: &mut Value, at: usize) -> &mut Value {
    let list = list.as_array_mut().unwrap();
    let n = list.len();
    &mut list[at % n]
}

/// Sets one name field of the plan `v` to `value`: `what` picks the kind
/// of field, `at` the record (modulo their count).
pub(super) fn edit(v: &mut Value, what: u8, at: usize, value: &str) {
    let (record, field) = match what % 9 {
        0 => (pick(&mut v["sub_node_list"], at), "switch"),
        1 => (pick(&mut v["sub_node_list"], at), "server"),
        2 => (pick(&mut v["sub_node_list"], at), "nic"),
        3 => (pick(&mut v["switch_list"], at), "name"),
        4 => (pick(&mut v["switch_list"], at), "physical"),
        5 => (pick(&mut v["servers"], at), "name"),
        6 => (pick(&mut v["cables"], at), "a"),
        7 => (pick(&mut v["cables"], at), "b"),
        _ => {
            let s = pick(&mut v["switch_list"], at);
            let port = pick(&mut s["ports"], at / 7);
            (port, "peer")
        }
    };
    record[field] = Value::String(value.to_string());
}

#[test]
fn names_shared_or_not_give_the_same_findings() {
    for t in [Topology::BiGraph, Topology::FatTree] {
        let json = super::tests::eflops_plan(t).to_json().unwrap();
        let (a, b) = (shared(&json), unshared(&json));
        // The two really differ in how they hold names.
        let (sn, s) = (&a.sub_node_list[0], &a.switch_list);
        let on = s.iter().find(|s| s.name == sn.switch).unwrap();
        assert!(
            Name::ptr_eq(&sn.switch, &on.name),
            "{t:?}: read names are shared"
        );
        let (sn, s) = (&b.sub_node_list[0], &b.switch_list);
        let on = s.iter().find(|s| s.name == sn.switch).unwrap();
        assert!(
            !Name::ptr_eq(&sn.switch, &on.name),
            "{t:?}: parsed names are not"
        );
        let v = validate_plan(&a);
        assert!(v.ok, "{t:?}: {:#?}", v.findings);
        assert_eq!(v, validate_plan(&b), "{t:?}");
        // And broken alike: a dangling switch, a duplicate server.
        let mut value: Value = serde_json::from_str(&json).unwrap();
        edit(&mut value, 0, 3, "nowhere");
        let first = value["servers"][0]["name"].as_str().unwrap().to_string();
        edit(&mut value, 5, 1, &first);
        let json = value.to_string();
        let v = validate_plan(&shared(&json));
        assert!(!v.ok, "{t:?}");
        assert_eq!(v, validate_plan(&unshared(&json)), "{t:?}");
    }
}

#[test]
fn numbers_and_passed_names_do_not_depend_on_sharing() {
    let (a, b) = (Name::new("sw1"), Name::new("sw1"));
    let mut numbers = Numbers::default();
    assert_eq!(numbers.of(&a), 0);
    assert_eq!(numbers.of(&b), 0, "equal texts, two allocations");
    assert_eq!(numbers.of("sw2"), 1);
    assert_eq!(numbers.of(&a), 0);
    assert_eq!(numbers.len(), 2);
    let mut passed = Passed::new();
    let bad = Name::new("bad name");
    for _ in 0..2 {
        assert!(passed.check(&a, crate::names::check_name).is_ok());
        assert!(passed.check(&bad, crate::names::check_name).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On plans broken at random (names dangling, repeated or bad), the
    /// numbers are those a search by name finds, and the load check finds
    /// the same with names shared or not.
    #[test]
    fn numbers_resolve_as_names_do(
        fat_tree in any::<bool>(),
        edits in proptest::collection::vec((0u8..9, 0usize..10_000, 0usize..1_000), 1..5),
    ) {
        let t = if fat_tree { Topology::FatTree } else { Topology::BiGraph };
        let mut value: Value = serde_json::to_value(super::tests::eflops_plan(t)).unwrap();
        let pool = names(&value);
        for (what, at, v) in edits {
            let text = pool[v % pool.len()].clone();
            edit(&mut value, what, at, &text);
        }
        let json = value.to_string();
        for plan in [shared(&json), unshared(&json)] {
            let idx = Index::new(&plan, &mut Vec::new());
            assert_refs_eq(&idx.refs, &by_name(&plan));
        }
        prop_assert_eq!(validate_plan(&shared(&json)), validate_plan(&unshared(&json)));
    }
}
