//! Tests of the render model's refusals in the load check: with the quick
//! proof (`Model::surely_builds`) the findings are exactly those of the
//! whole model (text and order), on bundled plans, every bundled design
//! and plans broken on purpose; and the proof holds on the designs, so the
//! model is not assembled for them.

use proptest::prelude::*;
use serde_json::Value;

use super::refs_tests::{edit, names, pick, shared};
use super::*;
use crate::network::Model;

/// The load check of `plan` with and without the quick proof: the same.
/// Returns the findings and whether the proof held.
fn same_both_ways(plan: &Plan, what: &str) -> (Validation, bool) {
    let quick = check_plan(plan, true);
    let full = check_plan(plan, false);
    assert_eq!(quick, full, "{what}");
    let nic_ports = (plan.sub_node_list.iter())
        .map(|sn| 1 + usize::from(sn.port1.is_some()))
        .sum();
    let addressed = plan.sub_node_list.iter().any(|sn| sn.ip.is_some());
    let held = quick.ok && Model::surely_builds(plan, nic_ports, addressed).is_some();
    if held {
        assert!(
            Model::refusals(plan).is_empty(),
            "{what}: the proof held on a plan the model refuses"
        );
    }
    (quick, held)
}

/// The plan `value` stands for, read as a plan file is.
fn read(value: &Value) -> Plan {
    shared(&value.to_string())
}

/// The eFlops plan as designed (its NICs have the inventory's
/// addresses), and without the addresses (every NIC from a pool block).
fn eflops_values(t: Topology) -> [Value; 2] {
    let given = serde_json::to_value(super::tests::eflops_plan(t)).unwrap();
    let mut pooled = given.clone();
    for sn in pooled["sub_node_list"].as_array_mut().unwrap() {
        sn.as_object_mut().unwrap().remove("ip");
    }
    [given, pooled]
}

/// A change to a plan's JSON.
type Breakage = Box<dyn Fn(&mut Value)>;

/// The first inter-switch port of the plan: (switch, port) positions.
fn first_inter_switch(v: &Value) -> (usize, usize) {
    for (i, s) in v["switch_list"].as_array().unwrap().iter().enumerate() {
        for (k, p) in s["ports"].as_array().unwrap().iter().enumerate() {
            if p["role"] == "inter_switch" {
                return (i, k);
            }
        }
    }
    panic!("no inter-switch port")
}

#[test]
fn bundled_plans_and_designs_give_the_models_refusals() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/examples/data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".plan.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let plan = Plan::from_json(&text, "plan.json").unwrap();
        same_both_ways(&plan, &path.display().to_string());
    }
    let mut names: Vec<String> = std::fs::read_dir(format!("{root}/topologies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    names.sort();
    let mut proved = 0;
    for name in &names {
        let inv = crate::design::bundled_inventory(name);
        for t in [
            Topology::BiGraph,
            Topology::FatTree,
            Topology::RailOptimized,
            Topology::Hpn,
        ] {
            let opts = crate::design::DesignOptions {
                topology: t,
                ..Default::default()
            };
            let Ok(plan) = crate::design::design(&inv, &opts) else {
                continue;
            };
            let (v, held) = same_both_ways(&plan, &format!("{name} {t:?}"));
            assert!(v.ok, "{name} {t:?}: {:#?}", v.findings);
            // A design whose NICs have no given address is proved without
            // the model.
            if plan.sub_node_list.iter().all(|sn| sn.ip.is_none()) {
                assert!(held, "{name} {t:?}: the proof failed on a design");
                proved += 1;
            }
        }
    }
    assert!(proved >= 10, "only {proved} designs proved");
}

#[test]
fn plans_broken_on_purpose_give_the_models_refusals() {
    for t in [Topology::BiGraph, Topology::FatTree] {
        let [given, pooled] = eflops_values(t);
        let (v, held) = same_both_ways(&read(&pooled), "pooled");
        assert!(v.ok && held, "{t:?}: {:#?}", v.findings);
        let (v, held) = same_both_ways(&read(&given), "given");
        assert!(v.ok && !held, "{t:?}: addresses given go to the model");
        let (si, pk) = first_inter_switch(&pooled);
        let breakages: Vec<(&str, Breakage)> = vec![
            (
                "peer port 05",
                Box::new(move |v| {
                    let p = &mut v["switch_list"][si]["ports"][pk]["peer_port"];
                    *p = Value::String(format!("0{}", p.as_str().unwrap()));
                }),
            ),
            (
                "peer port +5",
                Box::new(move |v| {
                    let p = &mut v["switch_list"][si]["ports"][pk]["peer_port"];
                    *p = Value::String(format!("+{}", p.as_str().unwrap()));
                }),
            ),
            (
                "VLAN of a box twice",
                Box::new(|v| {
                    let list = v["switch_list"].as_array_mut().unwrap();
                    let first = list[0]["physical"].clone();
                    if let Some(k) = (1..list.len()).find(|&k| list[k]["physical"] == first) {
                        list[k]["vlan"] = list[0]["vlan"].clone();
                    } else {
                        list[0]["vlan"] = Value::from(100);
                    }
                }),
            ),
            (
                "link pool too small",
                Box::new(|v| v["addressing"]["link_pool"] = Value::from("10.255.255.0/29")),
            ),
            (
                "sub-node pool too small",
                Box::new(|v| v["addressing"]["sub_node_pool"] = Value::from("10.0.0.0/23")),
            ),
            (
                "pools overlapping",
                Box::new(|v| v["addressing"]["sub_node_pool"] = Value::from("10.255.0.0/16")),
            ),
            (
                "an address given",
                Box::new(|v| v["sub_node_list"][3]["ip"] = Value::from("10.200.0.7/24")),
            ),
            (
                "an address twice",
                Box::new(|v| {
                    v["sub_node_list"][3]["ip"] = Value::from("10.200.0.7/24");
                    v["sub_node_list"][4]["ip"] = Value::from("10.200.0.7/24");
                }),
            ),
            (
                "an address in the pool's first block",
                Box::new(|v| v["sub_node_list"][5]["ip"] = Value::from("10.0.0.1/24")),
            ),
            (
                "a gateway",
                Box::new(|v| v["sub_node_list"][3]["ip"] = Value::from("10.200.0.254/24")),
            ),
            (
                "no prefix",
                Box::new(|v| v["sub_node_list"][3]["ip"] = Value::from("10.200.0.7")),
            ),
            (
                "IPv6",
                Box::new(|v| v["sub_node_list"][3]["ip"] = Value::from("fd00::7/64")),
            ),
            (
                "a NIC name twice in a server",
                Box::new(|v| v["sub_node_list"][1]["nic"] = v["sub_node_list"][0]["nic"].clone()),
            ),
            (
                "a QoS MTU for no switch",
                Box::new(|v| {
                    if let Some(q) = v["qos"].as_object_mut() {
                        q.insert("switch_mtu".into(), serde_json::json!({"nowhere": 9000}));
                    }
                }),
            ),
        ];
        for base in [&pooled, &given] {
            for (what, breakage) in &breakages {
                let mut v = base.clone();
                breakage(&mut v);
                let Ok(plan) = Plan::from_json(&v.to_string(), "plan.json") else {
                    continue;
                };
                same_both_ways(&plan, &format!("{t:?} {what}"));
            }
        }
        // The breakages the model alone refuses are refused, and not
        // proved (a peer port `+5` breaks the name rule first).
        for what in ["peer port 05", "link pool too small"] {
            let (_, breakage) = breakages.iter().find(|(w, _)| *w == what).unwrap();
            let mut v = pooled.clone();
            breakage(&mut v);
            let (found, held) = same_both_ways(&read(&v), what);
            assert!(!held, "{t:?} {what}");
            assert!(
                found.findings.iter().any(|f| f.kind == "invalid"),
                "{t:?} {what}: {:#?}",
                found.findings
            );
        }
    }
}

/// Sets a field the render model reads, which most other checks do not:
/// a peer port's text, an address, a VLAN, a pool.
fn edit_address(v: &mut Value, what: u8, at: usize, n: usize) {
    let texts = ["05", "+5", "5", " 5", "0", "x"];
    let ips = [
        "10.200.0.7/24",
        "10.200.0.254/24",
        "10.200.0.0/24",
        "10.0.0.1/24",
        "10.255.0.1/24",
        "10.200.0.7",
        "fd00::7/64",
        "10.201.0.9/16",
    ];
    match what % 5 {
        0 => {
            let s = pick(&mut v["switch_list"], at);
            let p = pick(&mut s["ports"], at / 7);
            if p["role"] == "inter_switch" {
                let text = texts[n % texts.len()];
                let number = p["peer_port"].as_str().unwrap_or("1").to_string();
                p["peer_port"] = Value::from(match text {
                    "05" => format!("0{number}"),
                    "+5" => format!("+{number}"),
                    "5" => number,
                    " 5" => format!(" {number}"),
                    other => other.to_string(),
                });
            }
        }
        1 => pick(&mut v["sub_node_list"], at)["ip"] = Value::from(ips[n % ips.len()]),
        2 => pick(&mut v["switch_list"], at)["vlan"] = Value::from(100 + (n % 3) as u64),
        3 => {
            let pools = [
                "10.0.0.0/8",
                "10.0.0.0/22",
                "10.255.0.0/24",
                "10.255.255.0/29",
            ];
            let field = if n.is_multiple_of(2) {
                "sub_node_pool"
            } else {
                "link_pool"
            };
            v["addressing"][field] = Value::from(pools[(n / 2) % pools.len()]);
        }
        _ => {
            pick(&mut v["sub_node_list"], at)
                .as_object_mut()
                .unwrap()
                .remove("ip");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On plans broken at random (the render model's fields, and now and
    /// then a name as `refs_tests` breaks them), the load check's
    /// findings are the same with the quick proof as with the whole model.
    #[test]
    fn random_breakages_give_the_models_refusals(
        fat_tree in any::<bool>(),
        pooled in any::<bool>(),
        edits in proptest::collection::vec((0u8..6, 0u8..9, 0usize..10_000, 0usize..1_000), 1..4),
    ) {
        let t = if fat_tree { Topology::FatTree } else { Topology::BiGraph };
        let [given, pooled_value] = eflops_values(t);
        let mut value = if pooled { pooled_value } else { given };
        let pool = names(&value);
        for (kind, what, at, n) in edits {
            if kind == 0 {
                let text = pool[n % pool.len()].clone();
                edit(&mut value, what, at, &text);
            } else {
                edit_address(&mut value, what, at, n);
            }
        }
        if let Ok(plan) = Plan::from_json(&value.to_string(), "plan.json") {
            prop_assert_eq!(check_plan(&plan, true), check_plan(&plan, false));
        }
    }
}
