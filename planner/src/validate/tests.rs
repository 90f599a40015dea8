//! Tests of plan validation and as-built cabling: consistency, topology invariants, CSV and LLDP.

use super::cabling::{parse_csv, parse_lldp};
use super::*;
use crate::design::{DesignOptions, design};
use crate::inventory::Inventory;
use crate::plan::Topology;

pub(super) fn eflops_plan(topology: Topology) -> Plan {
    eflops_checked(topology).into_plan()
}

fn eflops_checked(topology: Topology) -> crate::checked::CheckedPlan {
    let inv = crate::design::bundled_inventory("eflops-4x16");
    design(
        &inv,
        &DesignOptions {
            topology,
            ..DesignOptions::default()
        },
    )
    .unwrap()
}

fn kinds(v: &Validation) -> Vec<&'static str> {
    let mut k: Vec<&'static str> = v.findings.iter().map(|f| f.kind).collect();
    k.sort_unstable();
    k
}

/// Runs the cabling check on the plan's own CSV after `edit`.
fn check_csv(plan: &Plan, edit: impl FnOnce(&mut Vec<String>)) -> Validation {
    let csv = plan.cables_csv();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    edit(&mut lines);
    let rows = parse_csv(&(lines.join("\n") + "\n"), "as-built.csv").unwrap();
    validate_cabling(plan, &rows, &["as-built.csv".to_string()])
}

fn line_of(lines: &[String], prefix: &str) -> usize {
    lines
        .iter()
        .position(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix}"))
}

#[test]
fn designed_plans_validate_clean() {
    for t in [Topology::BiGraph, Topology::FatTree] {
        let plan = eflops_plan(t);
        let v = validate_plan(&plan);
        assert!(v.ok, "{t:?}: {:#?}", v.findings);
        let v = check_csv(&plan, |_| {});
        assert!(v.ok, "{t:?}: {:#?}", v.findings);
        assert_eq!(v.matching_cables, plan.cables.len());
    }
}

#[test]
fn crossed_ports_are_reported_once() {
    let plan = eflops_plan(Topology::BiGraph);
    // sw01 ports 1 and 2 go to sw01-l port 17 and sw02-l port 17.
    let v = check_csv(&plan, |lines| {
        let a = line_of(lines, "sw01,1,");
        let b = line_of(lines, "sw01,2,");
        let pa: Vec<String> = lines[a].split(',').map(str::to_string).collect();
        let pb: Vec<String> = lines[b].split(',').map(str::to_string).collect();
        lines[a] = format!("sw01,1,{},{},{},{}", pa[2], pb[3], pb[4], pb[5]);
        lines[b] = format!("sw01,2,{},{},{},{}", pb[2], pa[3], pa[4], pa[5]);
    });
    assert_eq!(kinds(&v), ["crossed"], "{:#?}", v.findings);
    let f = &v.findings[0];
    assert!(f.object.contains("sw01 port 1"), "{f:?}");
    assert!(f.object.contains("sw01 port 2"), "{f:?}");
    assert!(f.fix.contains("swap"), "{f:?}");
}

#[test]
fn sub_node_on_wrong_half_and_wrong_switch() {
    let plan = eflops_plan(Topology::BiGraph);
    let sn = &plan.sub_node_list[0];
    let (switch, port) = (sn.switch.clone(), sn.port);
    assert_eq!(switch, "sw01-u");
    // Move node01 mlx5_0 from sw01 port 9 to port 29 (free, lower half).
    let v = check_csv(&plan, |lines| {
        let i = line_of(lines, &format!("sw01,{port},"));
        lines[i] = lines[i].replacen(&format!("sw01,{port},"), "sw01,29,", 1);
    });
    assert_eq!(kinds(&v), ["wrong-vlan-half"], "{:#?}", v.findings);
    let f = &v.findings[0];
    assert!(
        f.message.contains("sw01-l (VLAN 102, lower part)"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("sw01-u (VLAN 101, upper part)"),
        "{}",
        f.message
    );
    assert!(f.fix.contains("to sw01 port 9"), "{}", f.fix);
    let v = check_csv(&plan, |lines| {
        let i = line_of(lines, &format!("sw01,{port},"));
        lines[i] = lines[i].replacen(&format!("sw01,{port},"), "sw02,13,", 1);
    });
    assert!(kinds(&v).contains(&"wrong-switch"), "{:#?}", v.findings);
}

#[test]
fn missing_extra_speed_and_unknown() {
    let plan = eflops_plan(Topology::BiGraph);
    let v = check_csv(&plan, |lines| {
        let i = line_of(lines, "sw03,1,");
        lines.remove(i);
        lines.push("sw04,16,16,sw05,16,100,inter_switch,optical".to_string());
        let j = line_of(lines, "sw02,1,");
        let mut f: Vec<String> = lines[j].split(',').map(str::to_string).collect();
        f[5] = "25".to_string();
        lines[j] = f.join(",");
        lines.push("sw09,1,1,sw01,3,,,".to_string());
    });
    let k = kinds(&v);
    for want in ["missing", "extra", "speed-mismatch", "unknown-device"] {
        assert!(k.contains(&want), "{want}: {:#?}", v.findings);
    }
    // The missing cable breaks the complete bipartite graph as built, and
    // the extra one links two upper switches.
    assert!(
        v.findings
            .iter()
            .any(|f| f.kind == "invariant" && f.message.contains("no link")),
        "{:#?}",
        v.findings
    );
    assert!(
        v.findings
            .iter()
            .any(|f| f.kind == "invariant" && f.message.contains("inside the upper part")),
        "{:#?}",
        v.findings
    );
}

#[test]
fn conflicting_rows_and_partial_input() {
    let plan = eflops_plan(Topology::BiGraph);
    let rows = parse_csv("sw01,1,sw01,17\nsw01,1,sw02,17\n", "c.csv").unwrap();
    let v = validate_cabling(&plan, &rows, &["c.csv".to_string()]);
    let k = kinds(&v);
    assert!(k.contains(&"conflict"), "{k:?}");
    assert!(k.contains(&"no-data"), "{k:?}");
    assert!(k.contains(&"missing"), "{k:?}");
}

#[test]
fn lldp_from_both_ends_counts_once() {
    let plan = eflops_plan(Topology::BiGraph);
    let doc = r#"{
      "sw01": {"lldp": {"interface": [
        {"HundredGigE1/0/1": {"chassis": {"sw01": {}}, "port": {"id": {"type": "ifname", "value": "HundredGigE1/0/17"}}}},
        {"HundredGigE1/0/17": {"chassis": {"sw01": {}}, "port": {"id": {"type": "ifname", "value": "HundredGigE1/0/1"}}}}
      ]}}}"#;
    let rows = parse_lldp(doc, "lldp.json", "lldp").unwrap();
    let v = validate_cabling(&plan, &rows, &["lldp.json".to_string()]);
    assert_eq!(v.observed_cables, 1);
    assert_eq!(v.matching_cables, 1);
    assert!(kinds(&v).contains(&"missing"));
}

#[test]
fn hand_edited_plan_is_caught() {
    let mut plan = eflops_plan(Topology::BiGraph);
    // Turn an upper-lower link into an upper-upper one on paper.
    plan.switch_list[0].part_or_tier = crate::plan::Tier::Lower;
    let v = validate_plan(&plan);
    assert!(!v.ok);
    assert!(kinds(&v).contains(&"invariant"), "{:#?}", v.findings);
    assert!(kinds(&v).contains(&"inconsistent"), "{:#?}", v.findings);

    let mut plan = eflops_plan(Topology::BiGraph);
    let last_link = plan
        .cables
        .iter()
        .rposition(|c| c.kind == crate::plan::CableKind::InterSwitch)
        .unwrap();
    plan.cables.remove(last_link);
    plan.links = 63;
    let v = validate_plan(&plan);
    assert_eq!(kinds(&v), ["inconsistent"], "{:#?}", v.findings);
}

#[test]
fn server_side_lldp_matches_netdev_and_mac() {
    // The servers name their NICs' interfaces; LLDP on a server reports the
    // interface, the switch and the switch's port.
    let text = crate::design::bundled_text("eflops-4x16").replace(
        "name = \"mlx5_0\"\n",
        "name = \"mlx5_0\"\nnetdev = \"ens1f0np0\"\nmac = \"02:00:00:00:{n:02x}:00\"\n",
    );
    let inv = Inventory::from_toml(&text, "eflops.toml").unwrap();
    let plan = design(&inv, &DesignOptions::default()).unwrap();
    assert_eq!(plan.sub_node_list[0].netdev.as_deref(), Some("ens1f0np0"));
    let node01 = r#"{"lldp": {"interface": {"ens1f0np0": {"chassis": {"sw01": {}},
        "port": {"id": {"type": "ifname", "value": "HundredGigE1/0/9"}}}}}}"#;
    let mut rows = parse_lldp(node01, "node01.json", "node01").unwrap();
    // And a switch that only sees the MAC of node02's first NIC.
    let sw01 = r#"{"lldp": {"interface": {"HundredGigE1/0/25": {"chassis": {"node02": {}},
        "port": {"id": {"type": "mac", "value": "02:00:00:00:02:00"}}}}}}"#;
    rows.extend(parse_lldp(sw01, "sw01.json", "sw01").unwrap());
    let v = validate_cabling(&plan, &rows, &[]);
    assert_eq!(v.matching_cables, 2, "{:#?}", v.findings);
    assert!(!kinds(&v).contains(&"unknown-port"), "{:#?}", v.findings);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const PLAN: &str = include_str!("../../../examples/data/eflops-4x16.plan.json");
    const CSV: &str = include_str!("../../../examples/data/eflops-4x16.cables.csv");
    const LLDP: &str = include_str!("../../../examples/data/eflops-4x16.lldp.json");

    /// Applies line edits (delete, duplicate, replace, append) to `text`.
    fn mutate(text: &str, edits: &[(prop::sample::Index, u8, String)]) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (at, op, s) in edits {
            if lines.is_empty() {
                lines.push(String::new());
            }
            let i = at.index(lines.len());
            match op {
                0 => {
                    lines.remove(i);
                }
                1 => {
                    let l = lines[i].clone();
                    lines.insert(i, l);
                }
                2 => lines[i] = s.clone(),
                _ => lines[i].push_str(s),
            }
        }
        lines.join("\n")
    }

    fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, String)>> {
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0u8..4,
                "[-0-9a-z,\":{}\\[\\] ]{0,12}",
            ),
            1..5,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A damaged plan is either rejected with its file name, or read and
        /// then validated without a panic.
        #[test]
        fn damaged_plans_never_panic(e in edits()) {
            let text = mutate(PLAN, &e);
            match Plan::from_json(&text, "p.json") {
                Ok(plan) => { let _ = validate_plan(&plan); }
                Err(err) => prop_assert!(err.to_string().starts_with("p.json"), "{}", err),
            }
        }

        /// Damaged cabling files never panic the readers or the comparison.
        #[test]
        fn damaged_cabling_never_panics(e in edits(), lldp in any::<bool>()) {
            let plan: &Plan = &PLAN_PARSED;
            let rows = if lldp {
                parse_lldp(&mutate(LLDP, &e), "l.json", "l")
            } else {
                parse_csv(&mutate(CSV, &e), "c.csv")
            };
            match rows {
                Ok(rows) => { let _ = validate_cabling(plan, &rows, &[]); }
                Err(err) => {
                    let s = err.to_string();
                    prop_assert!(s.starts_with("c.csv") || s.starts_with("l.json"), "{}", s);
                }
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,300}") {
            let _ = Plan::from_json(&text, "p.json");
            let _ = Plan::from_toml(&text, "p.toml");
            let _ = parse_csv(&text, "c.csv");
            let _ = parse_lldp(&text, "l.json", "l");
        }
    }

    static PLAN_PARSED: std::sync::LazyLock<Plan> =
        std::sync::LazyLock::new(|| Plan::from_json(PLAN, "p.json").unwrap());
}

#[test]
fn racks_are_listed_once_with_a_limit_above_zero() {
    let mut plan = crate::design::bundled("h100-1024-racked", Some(Topology::FatTree)).into_plan();
    assert!(validate_plan(&plan).findings.is_empty());
    plan.racks.retain(|r| r.name != "r05");
    plan.racks[0].max_kw = Some(0.0);
    plan.racks.push(plan.racks[1].clone());
    let messages: Vec<String> = (validate_plan(&plan).findings.iter())
        .map(|f| format!("{}: {}", f.object, f.message))
        .collect();
    for want in [
        "server h017: stands in rack r05, which is not in the plan's racks",
        "switch leaf05: stands in rack r05, which is not in the plan's racks",
        "rack r01: max_kw is 0; a rack's power limit is above 0",
        "rack r02: listed twice in the plan's racks",
    ] {
        assert!(
            messages.iter().any(|m| m == want),
            "{want} not in {messages:#?}"
        );
    }
}

fn breakout_plan() -> Plan {
    crate::design::bundled("breakout-200g", Some(Topology::FatTree)).into_plan()
}

#[test]
fn as_built_cabling_may_name_lanes() {
    let plan = breakout_plan();
    // The plan's numbers, Linux lane names, EOS's first-SerDes-lane names
    // and Comware's `:n` all name the same lanes of leaf01.
    let v = check_csv(&plan, |lines| {
        for (port, name) in [
            ("1", "swp1s0"),
            ("2", "Ethernet1/5"),
            ("3", "HundredGigE1/0/2:1"),
            ("4", "2s1"),
        ] {
            let i = line_of(lines, &format!("leaf01,{port},"));
            let mut cols: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            cols[1] = name.to_string();
            lines[i] = cols.join(",");
        }
    });
    assert!(v.ok, "{:#?}", v.findings);
    assert_eq!(v.matching_cables, plan.cables.len());
    // A lane the cage does not have is an unknown port.
    let v = check_csv(&plan, |lines| {
        let i = line_of(lines, "leaf01,1,");
        lines[i] = lines[i].replacen("leaf01,1,", "leaf01,1s2,", 1);
    });
    assert!(kinds(&v).contains(&"unknown-port"), "{:#?}", v.findings);
}

#[test]
fn a_cage_both_whole_and_broken_out_is_refused() {
    // A hand edit drops the lane of one port of a broken-out switch.
    let mut plan = breakout_plan();
    let leaf = plan
        .switch_list
        .iter_mut()
        .find(|s| s.name == "leaf01")
        .unwrap();
    leaf.ports[2].cage = None;
    leaf.ports[2].lane = None;
    let v = validate_plan(&plan);
    let f = v
        .findings
        .iter()
        .find(|f| f.kind == "breakout")
        .expect("a breakout finding");
    assert_eq!(f.object, "switch leaf01 port 3");
    assert!(
        f.message
            .contains("whole port on cage 2, which breaks out 2x200G"),
        "{}",
        f.message
    );
    // A whole switch's port that names a lane.
    let mut plan = breakout_plan();
    let spine = plan
        .switch_list
        .iter_mut()
        .find(|s| s.name == "spine01")
        .unwrap();
    spine.ports[0].lane = Some(1);
    let v = validate_plan(&plan);
    assert!(
        v.findings
            .iter()
            .any(|f| f.kind == "breakout" && f.object == "switch spine01 port 1"),
        "{:#?}",
        v.findings
    );
}

#[test]
fn a_plan_without_breakouts_writes_no_lane_fields() {
    let json = eflops_plan(Topology::BiGraph).to_json().unwrap();
    assert!(
        !json.contains("\"cage\"") && !json.contains("\"lane\"") && !json.contains("\"breakout\"")
    );
    // And a broken-out plan reads back as it was written.
    let plan = breakout_plan();
    let back = Plan::from_json(&plan.to_json().unwrap(), "p.json").unwrap();
    assert_eq!(back, plan);
}

/// A NIC port's label is recognised as `port_label` writes it, and
/// nothing else is.
#[test]
fn port_labels_compare_as_written() {
    let plan = crate::network::hpn_tests::hpn_plan("sub-nodes=16,rails=4,ports=16");
    let single = eflops_plan(Topology::BiGraph);
    for sn in plan.sub_node_list.iter().chain(&single.sub_node_list) {
        for port in 0..=2u8 {
            let label = sn.port_label(usize::from(port));
            let others = [
                label.clone(),
                format!("{label}0"),
                format!("{}:p0{port}", sn.nic),
                format!("{}:p+{port}", sn.nic),
                sn.nic.to_string(),
                format!("{}:p", sn.nic),
                String::new(),
            ];
            for text in &others {
                assert_eq!(
                    super::plan_checks::is_port_label(sn, port, text),
                    *text == label,
                    "{} port {port}: {text}",
                    sn.id
                );
            }
        }
    }
}

/// A repeated sub-node id is found the same whether every id is
/// `<server>/sn<index>` (found server by server, by index) or not (a set
/// of every id): once per later use, in sub-node order.
#[test]
fn repeated_sub_node_ids_are_found_either_way() {
    let twice = |plan: &Plan| -> Vec<String> {
        validate_plan(plan)
            .findings
            .into_iter()
            .filter(|f| f.message == "the id appears twice in sub_node_list")
            .map(|f| f.object)
            .collect()
    };
    let mut plan = eflops_plan(Topology::BiGraph);
    assert!(twice(&plan).is_empty());
    // Regular ids: sub-node 1 and 3 take sub-node 0's index (and so id).
    for k in [1, 3] {
        let (id, index) = (
            plan.sub_node_list[0].id.clone(),
            plan.sub_node_list[0].index,
        );
        plan.sub_node_list[k].id = id;
        plan.sub_node_list[k].index = index;
    }
    let regular = twice(&plan);
    let id0 = plan.sub_node_list[0].id.to_string();
    assert_eq!(
        regular,
        [format!("sub-node {id0}"), format!("sub-node {id0}")]
    );
    // One irregular id elsewhere: the set finds the same.
    let last = plan.sub_node_list.len() - 1;
    plan.sub_node_list[last].id = "elsewhere".into();
    assert_eq!(twice(&plan), regular);
    // An irregular id equal to another server's regular one.
    plan.sub_node_list[last].id = plan.sub_node_list[5].id.clone();
    let mut want = regular.clone();
    want.push(format!("sub-node {}", plan.sub_node_list[5].id));
    assert_eq!(twice(&plan), want);
}
