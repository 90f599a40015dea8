//! Regression tests of issue #13: every plan a command takes went through
//! the whole check, and the check refuses what a command would refuse or
//! misuse, naming the file the user gave.

use super::*;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::{Plan, Tier};

/// The EFLOPS example plan as the repository ships it.
fn eflops() -> Plan {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/eflops-4x16.plan.json"
    ))
    .unwrap();
    Plan::parse(&text, "eflops.json").unwrap()
}

/// `planner design --bigraph 1x2 --server-sub-nodes 1`.
fn min_plan() -> Plan {
    let s = Shorthand {
        sub_nodes_per_server: Some(1),
        ..Shorthand::default()
    };
    let (inv, opts) = shorthand::bigraph(1, 2, &s).unwrap();
    design(&inv, &opts).unwrap().into_plan()
}

fn fat_tree(spec: &str) -> Plan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap().into_plan()
}

/// Edits `plan`, checks it as `edited.json`, and returns the error text,
/// which must name the file and hold every one of `want`.
fn refused(mut plan: Plan, edit: impl FnOnce(&mut Plan), want: &[&str]) -> String {
    edit(&mut plan);
    let e = plan.check("edited.json").unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    let text = e.to_string();
    assert!(text.starts_with("edited.json: "), "{text}");
    for w in want {
        assert!(text.contains(w), "want `{w}` in:\n{text}");
    }
    text
}

#[test]
fn every_shipped_and_designed_plan_loads() {
    eflops().check("eflops.json").unwrap();
    min_plan().check("min.json").unwrap();
    for spec in [
        "tiers=2,sub-nodes=64,ports=16",
        "tiers=2,sub-nodes=96,ports=16,oversubscription=3",
        "tiers=3,sub-nodes=128,ports=8",
    ] {
        fat_tree(spec).check("ft.json").unwrap();
    }
}

#[test]
fn issue13_2a_server_lists_a_missing_sub_node() {
    refused(
        min_plan(),
        |p| p.servers[0].sub_nodes = vec![0, 2],
        &[
            "server node1: it lists sub-node 2, but sub_node_list holds 2 (0 to 1)",
            "design the plan again, or correct the hand edit",
        ],
    );
}

#[test]
fn issue13_2b_header_count_is_compared_before_any_use() {
    let mut json = min_plan().to_json().unwrap();
    json = json.replace("\"sub_nodes\": 2,", "\"sub_nodes\": 18446744073709551615,");
    let e = CheckedPlan::load(&json, "min.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("min.json: sub_nodes: says 18446744073709551615 but the lists hold 2"),
        "{e}"
    );
}

#[test]
fn issue13_4_server_lists_a_sub_node_twice() {
    refused(
        eflops(),
        |p| p.servers[0].sub_nodes.push(0),
        &["server node01: it lists sub-node 0 (node01/sn0) twice"],
    );
}

#[test]
fn issue13_4_server_lists_a_sub_node_out_of_range() {
    refused(
        eflops(),
        |p| p.servers[3].sub_nodes[1] = 640,
        &["server node04: it lists sub-node 640, but sub_node_list holds 64"],
    );
}

#[test]
fn issue13_4_server_list_disagrees_with_sub_node_server() {
    // node01 takes node02's first sub-node: both lists name it, and its
    // `server` field says node02.
    refused(
        eflops(),
        |p| {
            let i = p.servers[1].sub_nodes[0];
            p.servers[0].sub_nodes[0] = i;
        },
        &[
            "server node01: it lists sub-node 4 (node02/sn0), whose server is node02",
            "sub-node node01/sn0: server node01 does not list it",
        ],
    );
}

#[test]
fn issue13_4_two_nics_with_one_ip() {
    refused(
        eflops(),
        |p| p.sub_node_list[5].ip = p.sub_node_list[4].ip.clone(),
        &["sub-node node02/sn1: its IP address 10.100.2.1 is also the address of node02/sn0"],
    );
}

#[test]
fn issue13_4_duplicate_dscp() {
    refused(
        eflops(),
        |p| {
            let mut q = p.qos_intent();
            q.classes[1].dscp = q.classes[0].dscp;
            p.qos = Some(q);
        },
        &["is also the DSCP of class"],
    );
}

#[test]
fn issue13_4_sub_node_index_disagrees_with_id() {
    refused(
        eflops(),
        |p| p.sub_node_list[2].index = 7,
        &["sub-node node01/sn2: its id does not match its server node01 and index 7"],
    );
}

#[test]
fn issue13_4_bigraph_m_zero() {
    refused(
        eflops(),
        |p| p.bigraph.as_mut().unwrap().m = 0,
        &["bigraph.m: M is 0"],
    );
    refused(
        eflops(),
        |p| p.bigraph.as_mut().unwrap().m = 3,
        &["bigraph.m: says M=3 but the fullest switch carries 4"],
    );
}

#[test]
fn issue13_4_fat_tree_tiers_other_than_2_or_3() {
    for t in [0, 1, 4] {
        refused(
            fat_tree("tiers=2,sub-nodes=64,ports=16"),
            |p| p.fat_tree.as_mut().unwrap().tiers = t,
            &[&format!(
                "fat_tree.tiers: {t} tiers; a fat-tree has 2 (leaf-spine) or 3 (k-ary)"
            )],
        );
    }
}

#[test]
fn issue13_4_changed_oversubscription() {
    // Raised: the fullest leaf would do with fewer uplinks.
    refused(
        fat_tree("tiers=2,sub-nodes=64,ports=16"),
        |p| p.fat_tree.as_mut().unwrap().oversubscription = 3.0,
        &["fat_tree.oversubscription: 3:1 would let leaf"],
    );
    // Not a ratio.
    refused(
        fat_tree("tiers=2,sub-nodes=64,ports=16"),
        |p| p.fat_tree.as_mut().unwrap().oversubscription = 0.5,
        &["fat_tree.oversubscription: 0.5 is not a ratio of 1 or more"],
    );
    // A 3-tier fat-tree is non-blocking.
    refused(
        fat_tree("tiers=3,sub-nodes=128,ports=8"),
        |p| p.fat_tree.as_mut().unwrap().oversubscription = 2.0,
        &["a 3-tier k-ary fat-tree is non-blocking"],
    );
    // Lowered: the bandwidth check sees the oversubscribed leaves.
    refused(
        fat_tree("tiers=2,sub-nodes=96,ports=16,oversubscription=3"),
        |p| p.fat_tree.as_mut().unwrap().oversubscription = 1.0,
        &["exceeds"],
    );
}

#[test]
fn issue13_4_duplicate_gpu_index() {
    // Every GPU of node01 on index 0: ranks would share one GPU.
    refused(
        eflops(),
        |p| {
            for i in 0..4 {
                p.sub_node_list[i].gpu_index = Some(0);
            }
        },
        &["sub-node node01/sn1: gpu_index 0 is also the index of GPU gpu0 of server node01"],
    );
}

#[test]
fn issue13_4_out_of_range_gpu_and_socket_index() {
    refused(
        eflops(),
        |p| p.sub_node_list[0].gpu_index = Some(usize::MAX),
        &["sub-node node01/sn0: gpu_index 18446744073709551615 is above the limit of 1023"],
    );
    refused(
        eflops(),
        |p| p.sub_node_list[0].socket_index = 64,
        &["sub-node node01/sn0: socket_index 64 is above the limit of 63"],
    );
    refused(
        eflops(),
        |p| p.sub_node_list[0].gpu_index = None,
        &["sub-node node01/sn0: it has a GPU but no gpu_index"],
    );
}

#[test]
fn issue13_4_duplicate_socket_index() {
    // node01/sn2 sits on cpu1; giving it cpu0's index binds it wrongly.
    refused(
        eflops(),
        |p| p.sub_node_list[2].socket_index = 0,
        &["socket_index 0 is also the index of socket cpu0 of server node01"],
    );
}

#[test]
fn issue13_4_header_counts_disagree_with_the_lists() {
    for (field, edit) in [
        (
            "switches",
            (|p: &mut Plan| p.switches += 1) as fn(&mut Plan),
        ),
        ("physical_switches", |p: &mut Plan| p.physical_switches = 0),
        ("links", |p: &mut Plan| p.links = usize::MAX),
        ("bigraph.n", |p: &mut Plan| {
            p.bigraph.as_mut().unwrap().n = 4
        }),
    ] {
        refused(eflops(), edit, &[&format!("{field}: says")]);
    }
    refused(
        fat_tree("tiers=3,sub-nodes=128,ports=8"),
        |p| p.fat_tree.as_mut().unwrap().pods = Some(99),
        &["fat_tree.pods: says 99 but the switches are in"],
    );
}

#[test]
fn issue13_4_what_routing_and_render_refuse_is_refused_at_load() {
    // 3-tier routing needs a pod on every edge switch.
    refused(
        fat_tree("tiers=3,sub-nodes=128,ports=8"),
        |p| {
            let s = p
                .switch_list
                .iter_mut()
                .find(|s| s.part_or_tier == Tier::Edge)
                .unwrap();
            s.pod = None;
        },
        &["the edge switch has no pod, which 3-tier routing needs"],
    );
    // Render's address plan: a gateway address on a NIC.
    refused(
        eflops(),
        |p| p.sub_node_list[1].ip = Some("10.100.1.254/24".into()),
        &["sub-node node01/sn1", "is the gateway of 10.100.1.0/24"],
    );
    // Export refuses a server with no sub-node.
    refused(
        eflops(),
        |p| {
            p.servers.push(crate::plan::PlanServer {
                name: "node99".into(),
                rack: None,
                position: None,
                u_height: None,
                sub_nodes: Vec::new(),
                gpu_model: None,
                nvlink: Vec::new(),
                pci: Vec::new(),
            })
        },
        &["server node99: it lists no sub-node"],
    );
    // Two switches whose configuration files would overwrite each other
    // (a rename by hand leaves the cables behind too; the file names are
    // among the findings).
    let mut p = eflops();
    for s in p.switch_list.iter_mut() {
        if s.physical == "sw02" {
            s.physical = "sw+01".into();
        } else if s.physical == "sw03" {
            s.physical = "sw_01".into();
        }
    }
    let v = crate::validate::validate_plan(&p);
    assert!(
        v.findings.iter().any(|f| f.object == "switch sw_01"
            && f.message == "its file name sw_01 is also the file name of switch sw+01"),
        "{:#?}",
        v.findings
    );
}

#[test]
fn issue13_6_errors_name_the_file_not_the_plan_name() {
    let text = refused(
        eflops(),
        |p| p.servers[0].sub_nodes[0] = 1000,
        &["edited.json: server node01"],
    );
    assert!(!text.contains("eflops-4x16:"), "{text}");
    assert!(!text.contains("run planner validate"), "{text}");
}

#[test]
fn issue13_6_a_server_without_its_sub_nodes_cannot_reach_placement() {
    // Placement mapped ranks to servers through the sub-node's `server`
    // field and failed with an internal error when no server listed it:
    // the load refuses such a plan.
    refused(
        eflops(),
        |p| {
            p.servers[9].sub_nodes.clear();
        },
        &[
            "server node10: it lists no sub-node",
            "sub-node node10/sn0: server node10 does not list it",
        ],
    );
}

#[test]
fn many_problems_are_cut_short_with_the_command_that_lists_them() {
    let text = refused(
        eflops(),
        |p| {
            for sn in &mut p.sub_node_list {
                sn.index += 100;
            }
        },
        &["more problems; `planner validate edited.json` lists them all in its JSON report"],
    );
    assert_eq!(text.lines().count(), 1 + SHOW_PROBLEMS + 1, "{text}");
}

#[test]
fn qos_overrides_keep_a_plan_checked() {
    let mut plan = eflops().check("eflops.json").unwrap();
    let mut q = plan.qos_intent();
    q.mtu = 9000;
    plan.set_qos(q);
    crate::validate::validate_plan(&plan)
        .ok
        .then_some(())
        .unwrap();
    assert_eq!(plan.source(), "eflops.json");
}

/// The DGX-1-like bundled inventory designed as its BiGraph: NVLink
/// domains on the servers and two GPUs per sub-node.
fn dgx1() -> Plan {
    let text = include_str!("../../../topologies/dgx1-v100.toml");
    let inv = crate::inventory::Inventory::from_toml(text, "dgx1-v100.toml").unwrap();
    design(&inv, &crate::design::DesignOptions::default())
        .unwrap()
        .into_plan()
}

#[test]
fn issue18_the_intra_server_tier_is_carried_and_read_back() {
    let plan = dgx1();
    let s = &plan.servers[0];
    assert_eq!(s.nvlink.len(), 1);
    assert_eq!(s.nvlink[0].kind, crate::fabric::NvlinkKind::Mesh);
    assert_eq!(s.nvlink[0].gbps, 1200);
    assert_eq!(s.nvlink[0].gpu_indices, (0..8).collect::<Vec<_>>());
    let sn = &plan.sub_node_list[1];
    assert_eq!(
        (sn.gpu_index, sn.gpu_indices.clone()),
        (Some(2), vec![2, 3])
    );
    let json = plan.to_json().unwrap();
    // One line per sub-node and per NVLink domain.
    assert!(
        json.contains("\"gpu_index\": 2, \"gpu_indices\": [2, 3], \"nic\": \"mlx5_1\""),
        "{json}"
    );
    assert!(json.contains("\n      {\"name\": \"cube-mesh\", \"kind\": \"mesh\", \"gbps\": 1200, \"gpu_indices\": [0, 1, 2, 3, 4, 5, 6, 7]}\n"), "{json}");
    let back = CheckedPlan::load(&json, "dgx1.json").unwrap();
    assert_eq!(*back, plan);
    // A PCIe-only plan writes neither key.
    let eflops = eflops().to_json().unwrap();
    assert!(!eflops.contains("nvlink") && !eflops.contains("gpu_indices"));
}

#[test]
fn issue18_bad_intra_server_tiers_are_refused() {
    refused(
        dgx1(),
        |p| p.sub_node_list[0].gpu_indices = vec![1, 0],
        &["sub-node dgx01/sn0: gpu_indices starts with 1 but gpu_index is Some(0)"],
    );
    refused(
        dgx1(),
        |p| p.sub_node_list[1].gpu_indices = vec![2, 1],
        &["sub-node dgx01/sn1: GPU index 1 of server dgx01 is also listed by dgx01/sn0"],
    );
    refused(
        dgx1(),
        |p| p.sub_node_list[0].gpu_indices = vec![0],
        &["gpu_indices lists one GPU"],
    );
    refused(
        dgx1(),
        |p| p.sub_node_list[0].gpu_indices = vec![0, 5000],
        &["gpu_indices holds 5000, above the limit of 1023"],
    );
    refused(
        dgx1(),
        |p| p.servers[0].nvlink[0].gbps = 0,
        &["server dgx01 NVLink domain cube-mesh: gbps 0 is outside 1..100000"],
    );
    refused(
        dgx1(),
        |p| p.servers[0].nvlink[0].gpu_indices = vec![3],
        &["it joins 1 GPU; a domain joins two or more"],
    );
    refused(
        dgx1(),
        |p| {
            let d = p.servers[0].nvlink[0].clone();
            p.servers[0].nvlink.push(d);
        },
        &[
            "the name appears twice in the server's nvlink list",
            "GPU index 0 is also in domain cube-mesh",
        ],
    );
    refused(
        dgx1(),
        |p| p.servers[0].nvlink[0].name = "cube mesh".to_string(),
        &["server dgx01", "nvlink name"],
    );
}

/// The plan of `topologies/ndv5-vm-4.toml`, whose servers carry their PCIe
/// tree with bus ids.
fn ndv5() -> Plan {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/ndv5-vm-4.plan.json"
    ))
    .unwrap();
    Plan::parse(&text, "ndv5.json").unwrap()
}

#[test]
fn a_bad_pcie_tree_is_refused_naming_the_server_and_device() {
    assert!(!ndv5().servers[0].pci.is_empty());
    ndv5().check("ndv5.json").unwrap();
    refused(
        ndv5(),
        |p| p.servers[0].pci[8].bus = "0001:00:00.0 ".into(),
        &["server vm01 pci gpu0", "is not domain:bus:device.function"],
    );
    refused(
        ndv5(),
        |p| p.servers[1].pci[9].bus = p.servers[1].pci[8].bus.clone(),
        &["server vm02 pci gpu1", "bus id 0001:00:00.0 is also gpu0's"],
    );
    refused(
        ndv5(),
        |p| p.servers[0].pci[16].parent = Some("0001:00:00.0".into()),
        &[
            "server vm01 pci mlx5_ib0",
            "its parent 0001:00:00.0 is not a PCIe switch",
        ],
    );
    refused(
        ndv5(),
        |p| p.servers[0].pci[0].pcie_gen = 7,
        &["server vm01 pci plx0", "pcie_gen is 7, not 1 to 6"],
    );
    refused(
        ndv5(),
        |p| p.servers[0].pci[8].gbps = Some(400),
        &[
            "server vm01 pci gpu0",
            "gbps is given for NICs and only for NICs",
        ],
    );
}
