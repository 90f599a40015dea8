//! Issue #13: every command loads the plan through the whole check.
//! Hand-edited plans are refused at load with exit code 2, naming the
//! file the user gave; `validate` reports the same; nothing panics.

use std::path::Path;
use std::process::Output;

use planner::plan::Plan;

use crate::{planner, planner_in, root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// The EFLOPS example plan, edited and written to `dir/name`.
fn edited_eflops(dir: &Path, name: &str, edit: impl FnOnce(&mut Plan)) {
    let path = root().join("examples/data/eflops-4x16.plan.json");
    let mut plan = Plan::parse(&std::fs::read_to_string(path).unwrap(), "eflops.json").unwrap();
    edit(&mut plan);
    std::fs::write(dir.join(name), plan.to_json().unwrap()).unwrap();
}

/// Exit code 2, no panic, no internal error, the file and `want` named.
fn user_error(out: &Output, file: &str, want: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("internal error"), "{err}");
    assert!(!err.contains("run planner validate"), "{err}");
    assert!(err.contains(&format!("{file}: ")), "{err}");
    assert!(err.contains(want), "want `{want}` in:\n{err}");
}

/// `validate` refuses too (exit 2) and names the problem.
fn validate_refuses(dir: &Path, file: &str, want: &str) {
    let out = planner_in(dir, &["validate", file]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains(want), "want `{want}` in:\n{report}");
}

#[test]
fn issue13_2a_ranks_on_a_server_listing_a_missing_sub_node() {
    let dir = tempfile::tempdir().unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "design",
            "--bigraph",
            "1x2",
            "--server-sub-nodes",
            "1",
            "--out",
            "min.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = std::fs::read_to_string(dir.path().join("min.json")).unwrap();
    let bad = json.replace(
        r#"{"name": "node1", "sub_nodes": [0], "gpu_model": "GPU"}"#,
        r#"{"name": "node1", "sub_nodes": [0, 2], "gpu_model": "GPU"}"#,
    );
    assert_ne!(bad, json);
    std::fs::write(dir.path().join("min.json"), bad).unwrap();
    let want = "server node1: it lists sub-node 2, but sub_node_list holds 2";
    for format in ["rankfile", "hostfile", "csv", "table"] {
        let out = planner_in(dir.path(), &["ranks", "min.json", "--format", format]);
        user_error(&out, "min.json", want);
    }
    validate_refuses(dir.path(), "min.json", "it lists sub-node 2");
}

#[test]
fn issue13_2b_render_on_a_huge_sub_node_count() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(root().join("examples/data/eflops-4x16.plan.json"))
        .unwrap()
        .replace("\"sub_nodes\": 64,", "\"sub_nodes\": 18446744073709551615,");
    std::fs::write(dir.path().join("big.json"), json).unwrap();
    let want = "sub_nodes: says 18446744073709551615 but the lists hold 64";
    for (args, out_dir) in [
        (
            vec!["render", "big.json", "--vendor", "sonic", "--out", "cfg"],
            "cfg",
        ),
        (
            vec!["render", "big.json", "--hosts", "--out", "hosts"],
            "hosts",
        ),
    ] {
        let out = planner_in(dir.path(), &args);
        user_error(&out, "big.json", want);
        assert!(!dir.path().join(out_dir).exists());
    }
    validate_refuses(dir.path(), "big.json", "says 18446744073709551615");
}

#[test]
fn issue13_4_every_command_refuses_what_validate_refuses() {
    let dir = tempfile::tempdir().unwrap();
    type Edit = fn(&mut Plan);
    let cases: [(&str, Edit, &str); 11] = [
        ("twice.json", |p| p.servers[0].sub_nodes.push(0), "twice"),
        (
            "range.json",
            |p| p.servers[3].sub_nodes[1] = 640,
            "it lists sub-node 640",
        ),
        (
            "ip.json",
            |p| p.sub_node_list[5].ip = p.sub_node_list[4].ip.clone(),
            "is also the address of node02/sn0",
        ),
        (
            "dscp.json",
            |p| {
                let mut q = p.qos_intent();
                q.classes[1].dscp = q.classes[0].dscp;
                p.qos = Some(q);
            },
            "is also the DSCP of class",
        ),
        (
            "index.json",
            |p| p.sub_node_list[2].index = 7,
            "its id does not match its server node01 and index 7",
        ),
        ("m.json", |p| p.bigraph.as_mut().unwrap().m = 0, "M is 0"),
        (
            "gpu.json",
            |p| {
                for sn in p.sub_node_list.iter_mut().take(4) {
                    sn.gpu_index = Some(0);
                }
            },
            "gpu_index 0 is also the index of GPU gpu0",
        ),
        (
            "socket.json",
            |p| p.sub_node_list[0].socket_index = 99,
            "socket_index 99 is above the limit",
        ),
        (
            "links.json",
            |p| p.links += 1,
            "says 65 but the lists hold 64",
        ),
        // Render's address plan (issue13_render_address_plan_at_load).
        (
            "gateway.json",
            |p| p.sub_node_list[1].ip = Some("10.100.1.254/24".into()),
            "10.100.1.254 is the gateway of 10.100.1.0/24",
        ),
        (
            "pool.json",
            |p| p.addressing.link_pool = "10.255.0.0/26".into(),
            "10.255.0.0/26 holds 32 /31 links, the plan has 64",
        ),
    ];
    for (file, edit, want) in cases {
        edited_eflops(dir.path(), file, edit);
        validate_refuses(dir.path(), file, want);
        for args in [
            vec!["ranks", file, "--format", "rankfile"],
            vec!["verify-ranks", file, "--algorithm", "hd"],
            vec!["render", file, "--hosts", "--out", "hosts"],
            vec!["render", file, "--vendor", "nvue", "--out", "cfg"],
            vec!["check-qos", file],
            vec!["export", file, "--to", "labels"],
            vec!["cables", file],
            vec!["simulate", file, "--size", "1MiB"],
        ] {
            let out = planner_in(dir.path(), &args);
            user_error(&out, file, want);
        }
    }
}

#[test]
fn issue13_4_fat_tree_parameters_are_checked_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "design",
            "--fat-tree",
            "tiers=2,sub-nodes=64,ports=16",
            "--out",
            "ft.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = std::fs::read_to_string(dir.path().join("ft.json")).unwrap();
    for (tiers, file) in [(0, "t0.json"), (1, "t1.json"), (4, "t4.json")] {
        std::fs::write(
            dir.path().join(file),
            json.replace("\"tiers\": 2,", &format!("\"tiers\": {tiers},")),
        )
        .unwrap();
        let out = planner_in(dir.path(), &["ranks", file]);
        user_error(&out, file, &format!("fat_tree.tiers: {tiers} tiers"));
        validate_refuses(
            dir.path(),
            file,
            "a fat-tree has 2 (leaf-spine) or 3 (k-ary)",
        );
    }
    std::fs::write(
        dir.path().join("over.json"),
        json.replace("\"oversubscription\": 1.0,", "\"oversubscription\": 3.0,"),
    )
    .unwrap();
    let out = planner_in(dir.path(), &["simulate", "over.json", "--size", "1MiB"]);
    user_error(
        &out,
        "over.json",
        "fat_tree.oversubscription: 3:1 would let leaf",
    );
    validate_refuses(dir.path(), "over.json", "one uplink fewer");
}

#[test]
fn issue13_6_render_hosts_on_a_missing_sub_node_is_a_user_error() {
    let dir = tempfile::tempdir().unwrap();
    edited_eflops(dir.path(), "missing.json", |p| {
        p.servers[9].sub_nodes[0] = 999;
    });
    let out = planner_in(
        dir.path(),
        &["render", "missing.json", "--hosts", "--out", "hosts"],
    );
    user_error(
        &out,
        "missing.json",
        "server node10: it lists sub-node 999, but sub_node_list holds 64",
    );
    // The plan's internal name is not how the user knows the file.
    assert!(!text(&out.stderr).contains("eflops-4x16:"));
}

#[test]
fn the_shipped_plan_loads_in_every_command() {
    for args in [
        vec!["validate", "examples/data/eflops-4x16.plan.json"],
        vec!["cables", "examples/data/eflops-4x16.plan.json"],
        vec!["check-qos", "examples/data/eflops-4x16.plan.json"],
    ] {
        let out = planner(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
}
