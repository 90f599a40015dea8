//! Host files and `check-qos`: DSCP per part, NCCL's classes, MTU.

use super::*;

#[test]
fn hosts_mark_the_dscp_of_their_part() {
    let plan = eflops();
    let files = render_hosts(&plan).unwrap();
    assert_eq!(files.len(), 2 * plan.servers.len());
    // node01 is on sw01-u (upper), node02 on sw01-l (lower).
    let json = |server: &str| -> serde_json::Value {
        let text = &files
            .iter()
            .find(|(n, _)| n == &format!("{server}.json"))
            .unwrap()
            .1;
        serde_json::from_str(text).unwrap()
    };
    let (up, low) = (json("node01"), json("node02"));
    assert_eq!(up["sub_nodes"][0]["dscp"], 26);
    assert_eq!(up["sub_nodes"][0]["env"]["NCCL_IB_TC"], "104");
    assert_eq!(low["sub_nodes"][0]["dscp"], 34);
    assert_eq!(low["sub_nodes"][0]["env"]["NCCL_IB_TC"], "136");
    assert_eq!(low["sub_nodes"][3]["env"]["CUDA_VISIBLE_DEVICES"], "3");
    assert_eq!(low["sub_nodes"][3]["env"]["NCCL_IB_HCA"], "=mlx5_3");
    assert_eq!(low["sub_nodes"][3]["gateway"], "10.100.2.254");
    let env = &files.iter().find(|(n, _)| n == "node02.env").unwrap().1;
    assert!(env.contains("SLOT3_NCCL_IB_GID_INDEX=3\n"));
    assert!(env.contains("    1) export CUDA_VISIBLE_DEVICES=\"$SLOT1_CUDA_VISIBLE_DEVICES\""));
}

#[test]
fn check_qos_proves_per_direction_priorities_deadlock_free() {
    let c = check_qos(&eflops());
    assert!(c.ok, "{:?}", c.findings);
    assert!(c.cycle.is_none());
    assert_eq!(c.flows, 16 * 15);
    assert_eq!(c.links_checked, 64);
    let summary: Vec<(u8, usize, usize, bool)> = c
        .graphs
        .iter()
        .map(|g| (g.priority, g.buffers, g.dependencies, g.acyclic))
        .collect();
    // Every directed link carries each priority; a dependency is a turn
    // in the other part: 8 switches x 8 links in x 7 links out.
    assert_eq!(summary, vec![(3, 128, 448, true), (4, 128, 448, true)]);
    assert_eq!(c.classes[0].sub_nodes, 32);
}

#[test]
fn check_qos_finds_figure_7_with_one_priority() {
    let c = check_qos(&eflops_one_priority());
    assert!(!c.ok);
    let cycle = c.cycle.as_ref().unwrap();
    assert_eq!(cycle.priorities, vec![3]);
    assert_eq!(cycle.links.len(), 4);
    // The loop of Fig. 7: up, down, up, down, each link waiting on the
    // next and the last on the first.
    for (i, l) in cycle.links.iter().enumerate() {
        let next = &cycle.links[(i + 1) % 4];
        assert_eq!(l.to, next.from);
        assert_ne!(l.from.ends_with("-u"), l.to.ends_with("-u"));
        assert!(l.flow.contains("enters"), "{}", l.flow);
    }
    assert_eq!(c.findings.len(), 1);
    assert_eq!(c.findings[0].kind, "deadlock-cycle");
    assert!(c.findings[0].fix.contains("per_direction"));
    let table = render_qos_table(&c);
    assert!(
        table.contains("Deadlock cycle in priority 3 (4 links"),
        "{table}"
    );
}

/// NCCL's receivers answer (CTS writes, ACKs) in the sender's class
/// before 2.22.3: on a BiGraph every answer that crosses the parts takes
/// one inter-switch link, and answers within a part carry that part's
/// class, so the proof still holds and says so.
#[test]
fn check_qos_walks_nccl_answers_in_the_senders_class() {
    let plan = eflops();
    let own = check_qos(&plan);
    assert_eq!(own.answer_flows, 0);
    assert!(render_qos_table(&own).contains("CTS writes and ACKs carry the receiver's own class"));
    let old = HostMarking::for_nccl_version("2.21.5").unwrap();
    let c = check_qos_marked(&plan, &old);
    assert!(c.ok, "{:?}", c.findings);
    // Each of the 16 switches answers the 8 switches of the other part in
    // their class.
    assert_eq!(c.answer_flows, 16 * 8);
    let table = render_qos_table(&c);
    assert!(table.contains("the data sender's class"), "{table}");
    assert!(
        table.contains("NCCL 2.21.5 has no NCCL_IB_FIFO_TC"),
        "{table}"
    );
    assert!(table.contains("(and 128 of receivers' answers)"), "{table}");
}

/// One CTS class for every rank (a cluster-wide `NCCL_IB_FIFO_TC`): the
/// lower part's answers to each other turn in the upper part in the upper
/// class, which closes EFLOPS Fig. 7's loop with the upper part's data. The
/// data alone is acyclic, so only walking the answers finds it.
#[test]
fn check_qos_refuses_one_answer_class_for_every_rank() {
    let plan = eflops();
    let mut marking = HostMarking::default();
    marking.set_env("NCCL_IB_FIFO_TC=104").unwrap();
    let c = check_qos_marked(&plan, &marking);
    assert!(!c.ok);
    let cycle = c.cycle.as_ref().expect("a cycle");
    assert_eq!(cycle.priorities, vec![3]);
    assert!(
        cycle
            .links
            .iter()
            .any(|l| l.flow.contains("CTS writes and ACKs")),
        "{:?}",
        cycle.links
    );
    let kinds: Vec<&str> = c.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["host-setting", "deadlock-cycle"],
        "{:?}",
        c.findings
    );
    assert_eq!(c.findings[0].object, "NCCL_IB_FIFO_TC=104");
    assert!(
        c.findings[0]
            .message
            .contains("32 sub-nodes of class roce-lower"),
        "{}",
        c.findings[0].message
    );
}

/// A cluster-wide `NCCL_IB_TC` puts every rank's data in one class: the
/// host setting is named, and the one-priority cycle found.
#[test]
fn check_qos_refuses_one_data_class_for_every_rank() {
    let mut marking = HostMarking::default();
    marking.set_env("NCCL_IB_TC=104").unwrap();
    let c = check_qos_marked(&eflops(), &marking);
    assert!(!c.ok);
    let kinds: Vec<&str> = c.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["host-setting", "deadlock-cycle"],
        "{:?}",
        c.findings
    );
    assert!(c.findings[0].fix.contains("render --hosts"));
    // The same value on a fat-tree is its one class: nothing to report.
    let opts = DesignOptions {
        topology: Topology::FatTree,
        ..DesignOptions::default()
    };
    let tree = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
    let mut old = HostMarking::for_nccl_version("2.18.6").unwrap();
    old.set_env("NCCL_IB_TC=104").unwrap();
    let c = check_qos_marked(&tree, &old);
    assert!(c.ok, "{:?}", c.findings);
}

/// Rail designs keep each NCCL channel on one rail (`NCCL_CROSS_NIC=0`);
/// every host gets `NCCL_IB_FIFO_TC` equal to its `NCCL_IB_TC`.
#[test]
fn hosts_of_rail_plans_keep_nccl_on_its_rail() {
    let opts = DesignOptions {
        topology: Topology::RailOptimized,
        ..DesignOptions::default()
    };
    let rails = design(&bundled_inventory("h100-8x32"), &opts).unwrap();
    for plan in [&rails, &eflops()] {
        let rail = plan.topology == Topology::RailOptimized;
        for file in host_files(plan).unwrap() {
            for slot in &file.sub_nodes {
                assert_eq!(slot.env.get("NCCL_IB_FIFO_TC"), slot.env.get("NCCL_IB_TC"));
                assert_eq!(
                    slot.env.get("NCCL_CROSS_NIC").map(String::as_str),
                    rail.then_some("0"),
                    "{}",
                    file.server
                );
            }
        }
    }
}

#[test]
fn check_qos_passes_fat_trees() {
    for file in ["fat-tree-64", "fat-tree-k16"] {
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let plan = design(&bundled_inventory(file), &opts).unwrap();
        let c = check_qos(&plan);
        assert!(c.ok, "{file}: {:?}", c.findings);
        assert_eq!(c.graphs.len(), 1, "{file}");
        for v in Vendor::ALL {
            let files = render(&plan, v).unwrap();
            for (name, text) in &files {
                parse(v, text, name).unwrap();
            }
        }
    }
}

#[test]
fn check_qos_reports_links_whose_ends_disagree_on_mtu() {
    let plan = edited(|plan| {
        let mut q = plan.qos_intent();
        q.switch_mtu.insert("sw03".to_string(), 9000);
        plan.qos = Some(q);
    })
    .unwrap();
    let c = check_qos(&plan);
    assert!(!c.ok);
    let mtu: Vec<&QosFinding> = c
        .findings
        .iter()
        .filter(|f| f.kind == "mtu-mismatch")
        .collect();
    // sw03's halves have 16 links; the one between them stays in the box.
    assert_eq!(mtu.len(), 14, "{:?}", c.findings);
    assert!(mtu[0].message.contains("9000"));
}
