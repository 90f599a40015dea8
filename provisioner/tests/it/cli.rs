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

/// The provisioner reads the planner's compact plan as it reads the JSON
/// (`planner::plan_compact::read`, the one reader of both binaries): the
/// same answer from either form, and a compact file cut short refused
/// naming the file.
#[test]
fn a_compact_plan_reads_as_its_json() {
    let json = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/data/eflops-4x16.plan.json"),
    )
    .unwrap();
    let plan = planner::plan::Plan::parse(&json, "eflops-4x16.plan.json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let compact = dir.path().join("eflops.cplan");
    let bytes = plan.to_compact().unwrap();
    std::fs::write(&compact, &bytes).unwrap();
    let from_json = provisioner(&[
        "nodes",
        "examples/data/eflops-4x16.plan.json",
        "--format",
        "json",
    ]);
    let from_compact = provisioner(&["nodes", compact.to_str().unwrap(), "--format", "json"]);
    assert!(
        from_compact.status.success(),
        "{}",
        String::from_utf8_lossy(&from_compact.stderr)
    );
    assert_eq!(from_json.stdout, from_compact.stdout);
    let cut = dir.path().join("cut.cplan");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = provisioner(&["nodes", cut.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cut.cplan"), "{err}");
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

/// Runs the binary with no kubeconfig anywhere it could be found.
fn provisioner_without_cluster(args: &[&str]) -> std::process::Output {
    // A home of its own per call: tests run at once, and one removing a
    // shared home would pull it from under another.
    let home = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home.path())
        .output()
        .expect("run provisioner")
}

#[test]
fn cluster_commands_without_a_kubeconfig_exit_2() {
    for args in [
        &["status", "train"][..],
        &["status", "train", "-n", "ml", "--wait"],
        &["delete", "train"],
        &[
            "label-nodes",
            "examples/data/eflops-4x16.plan.json",
            "--dry-run",
        ],
    ] {
        let out = provisioner_without_cluster(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: cannot reach a Kubernetes cluster: no kubeconfig found")
                && err.contains("point KUBECONFIG at a kubeconfig file"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn label_nodes_checks_its_inputs_before_the_cluster() {
    let out = provisioner_without_cluster(&[
        "label-nodes",
        "examples/data/eflops-4x16.plan.json",
        "--prefix",
        "Bad_Prefix",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --prefix: `Bad_Prefix` has `B`"),
        "{err}"
    );
    let out = provisioner_without_cluster(&["label-nodes", "nope.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read nope.json"));
}

/// Issue 31: every file the provisioner reads goes through the one bounded
/// reader: a YAML nested 100,000 levels (600 KB), a device, a FIFO and a
/// file above 256 MiB are refused at once (exit 2), naming the file and
/// the limit.
#[test]
fn issue31_unbounded_inputs_are_refused_naming_file_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.yaml");
    std::fs::write(&deep, "- ".repeat(100_000) + "x\n").unwrap();
    let fifo = dir.path().join("job.toml");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    let plan = "examples/data/eflops-4x16.plan.json";
    let dra = "examples/allreduce-32-dra.job.toml";
    let cases: [(&[&str], String); 4] = [
        (
            &[
                "submit",
                dra,
                "--plan",
                plan,
                "--cluster",
                deep.to_str().unwrap(),
            ],
            format!(
                "cannot read {}: line 1 is nested more than 128 levels deep, the limit for an input file",
                deep.display()
            ),
        ),
        (
            &["nodes", "/dev/zero"],
            "cannot read /dev/zero: it is a device, FIFO or socket, not a regular file".to_string(),
        ),
        (
            &[
                "submit",
                fifo.to_str().unwrap(),
                "--plan",
                plan,
                "--offline",
            ],
            format!(
                "cannot read {}: it is a device, FIFO or socket, not a regular file",
                fifo.display()
            ),
        ),
        (
            &["nodes", big.to_str().unwrap()],
            format!(
                "cannot read {}: it has 268435457 bytes or more, above the limit of 268435456 bytes (256 MiB)",
                big.display()
            ),
        ),
    ];
    for (args, want) in cases {
        let start = std::time::Instant::now();
        let out = provisioner(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(start.elapsed().as_secs() < 10, "{args:?}");
        assert!(err.contains(&want), "{args:?}: {err}");
    }
}
