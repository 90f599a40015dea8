//! The `provisioner` binary on the bundled EFLOPS plan.

use std::process::Command;

fn provisioner(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run provisioner")
}

#[test]
fn nodes_of_the_eflops_plan() {
    let out = provisioner(&["nodes", "examples/data/eflops-4x16.plan.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("16 nodes for eflops-4x16 (0 named by the node map, 16 by host name)"),
        "{text}"
    );
    assert!(
        text.contains("node01  node01  sn0       gpu0  mlx5_0  sw01-u  upper"),
        "{text}"
    );

    let out = provisioner(&[
        "nodes",
        "examples/data/eflops-4x16.plan.json",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 16);
    assert_eq!(v[1]["sub_nodes"][3]["switch"], "sw01-l");
}

#[test]
fn bad_inputs_exit_2() {
    let out = provisioner(&["nodes", "nope.json"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = std::env::temp_dir().join(format!("prov-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("map.toml");
    std::fs::write(&map, "node99 = \"x\"\n").unwrap();
    let out = provisioner(&[
        "nodes",
        "examples/data/eflops-4x16.plan.json",
        "--node-map",
        map.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("server node99: the plan has no such server")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
