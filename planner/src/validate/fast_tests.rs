//! Tests of the load check's fast paths: a server's NIC found in the
//! compact tables (`nics.rs`) as the plain search finds it, and the load
//! check's findings with names shared or not.

use proptest::prelude::*;
use serde_json::Value;

use super::refs_tests::{edit, names, pick, shared};
use super::*;

/// The texts a NIC search is asked for in the tests: every NIC and
/// interface name of the plan, as a dual-port NIC's ports too, and names
/// no NIC has.
fn nic_texts(plan: &Plan) -> Vec<String> {
    let mut out = vec!["nowhere".to_string(), "a:b".to_string(), String::new()];
    for sn in &plan.sub_node_list {
        for name in [Some(&sn.nic), sn.netdev.as_ref()].into_iter().flatten() {
            for t in [name.to_string(), format!("{name}:p0"), format!("{name}:p1")] {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// The fast paths give what the plain ones do, on `plan`.
fn assert_fast_paths_agree(plan: &Plan) {
    let idx = Index::new(plan, &mut Vec::new());
    let texts = nic_texts(plan);
    for s in 0..plan.servers.len() {
        for t in &texts {
            assert_eq!(
                idx.nic_at(s, t),
                idx.nic_at_plain(s, t),
                "server {s} NIC {t:?}"
            );
        }
    }
}

/// Sets one field of a sub-node (NIC, interface, GPU, gpu_index, socket,
/// socket_index or index) or a server's list of sub-nodes.
fn edit_nic(v: &mut Value, what: u8, at: usize, text: &str, number: usize) {
    let sn = pick(&mut v["sub_node_list"], at);
    match what % 8 {
        0 => sn["nic"] = Value::from(text),
        1 => sn["netdev"] = Value::from(text),
        2 => sn["gpu"] = Value::from(text),
        3 => sn["gpu_index"] = Value::from(number % 4),
        4 => sn["socket"] = Value::from(text),
        5 => sn["socket_index"] = Value::from(number % 3),
        6 => sn["index"] = Value::from(number % 4),
        _ => {
            let server = pick(&mut v["servers"], at);
            let list = server["sub_nodes"].as_array_mut().unwrap();
            // Repeat, drop, or point past the end.
            match number % 3 {
                0 if !list.is_empty() => list.push(list[0].clone()),
                1 if !list.is_empty() => {
                    list.remove(0);
                }
                _ => list.push(Value::from(100_000 + number)),
            }
        }
    }
}

#[test]
fn the_first_listed_nic_of_a_name_is_found() {
    let mut v: Value = serde_json::to_value(super::tests::eflops_plan(Topology::BiGraph)).unwrap();
    // The first sub-node of the first server has the second's NIC name as
    // its interface name: the search finds the first.
    let first = v["servers"][0]["sub_nodes"][0].as_u64().unwrap() as usize;
    let second = v["servers"][0]["sub_nodes"][1].as_u64().unwrap() as usize;
    let nic = v["sub_node_list"][second]["nic"]
        .as_str()
        .unwrap()
        .to_string();
    v["sub_node_list"][first]["netdev"] = Value::from(nic.as_str());
    let plan = shared(&v.to_string());
    let idx = Index::new(&plan, &mut Vec::new());
    assert_eq!(idx.nic_at(0, &nic), Some((first, 0)));
    assert_eq!(idx.nic_at_plain(0, &nic), Some((first, 0)));
    assert_fast_paths_agree(&plan);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On plans broken at random (NIC, interface, GPU and socket names
    /// repeated, indices repeated, servers' lists changed, references
    /// dangling), the fast paths give what the plain ones give, with names
    /// shared or not, and so does the load check.
    #[test]
    fn fast_paths_agree_with_plain_ones(
        fat_tree in any::<bool>(),
        edits in proptest::collection::vec((0u8..17, 0usize..10_000, 0usize..1_000), 1..6),
    ) {
        let t = if fat_tree { Topology::FatTree } else { Topology::BiGraph };
        let mut value: Value = serde_json::to_value(super::tests::eflops_plan(t)).unwrap();
        let mut pool = names(&value);
        pool.extend(["gpu0", "cpu0", "eth0", "x:p1"].map(String::from));
        for (what, at, v) in edits {
            let text = pool[v % pool.len()].clone();
            if what < 9 {
                edit(&mut value, what, at, &text);
            } else {
                edit_nic(&mut value, what - 9, at, &text, v);
            }
        }
        let json = value.to_string();
        let (a, b) = (shared(&json), serde_json::from_str::<Plan>(&json).unwrap());
        assert_fast_paths_agree(&a);
        assert_fast_paths_agree(&b);
        prop_assert_eq!(validate_plan(&a), validate_plan(&b));
    }
}
