//! Behaviours of the command line beyond its printed output.

use std::fs;

use crate::{planner, planner_in, root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

#[test]
fn design_output_is_byte_identical_across_runs() {
    for args in [
        ["design", "topologies/eflops-4x16.toml", "--format", "json"],
        [
            "design",
            "topologies/fat-tree-k16.toml",
            "--topology",
            "fat-tree",
        ],
        [
            "compare",
            "topologies/bigraph-1024.toml",
            "--format",
            "json",
        ],
    ] {
        let a = planner(&args);
        let b = planner(&args);
        assert!(a.status.success(), "{}", text(&a.stderr));
        assert_eq!(a.stdout, b.stdout, "{args:?}");
    }
}

#[test]
fn example_plan_and_cable_list_are_current() {
    // examples/data holds the plan and cable list of the EFLOPS deployment
    // that the README and the golden cases use; they must match what the
    // planner designs today.
    let out = planner(&["design", "topologies/eflops-4x16.toml", "--format", "json"]);
    assert!(out.status.success());
    let plan_path = root().join("examples/data/eflops-4x16.plan.json");
    let cables_path = root().join("examples/data/eflops-4x16.cables.csv");
    let cables = planner(&["cables", "examples/data/eflops-4x16.plan.json"]);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&plan_path, &out.stdout).unwrap();
        fs::write(&cables_path, &cables.stdout).unwrap();
        return;
    }
    assert_eq!(text(&out.stdout), fs::read_to_string(&plan_path).unwrap());
    assert_eq!(
        text(&cables.stdout),
        fs::read_to_string(&cables_path).unwrap()
    );
}

#[test]
fn example_plan_with_pci_bus_ids_is_current() {
    // The plan of the VMs with PCI bus ids that the render-ndv5-vm-hosts
    // golden case renders NCCL topology files from.
    let out = planner(&[
        "design",
        "topologies/ndv5-vm-4.toml",
        "--topology",
        "fat-tree",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan_path = root().join("examples/data/ndv5-vm-4.plan.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&plan_path, &out.stdout).unwrap();
        return;
    }
    assert_eq!(text(&out.stdout), fs::read_to_string(&plan_path).unwrap());
}

#[test]
fn out_files_are_written_whole_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let inv = root().join("topologies/eflops-4x16.toml");
    let inv = inv.to_str().unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "design",
            inv,
            "--out",
            "plan.json",
            "--cables",
            "cables.csv",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Plan written to plan.json"));
    // Nothing but the two files: no temporary left behind.
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["cables.csv", "plan.json"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join("plan.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644, "plan files are readable by others");
    }
    let v = planner_in(
        dir.path(),
        &["validate", "plan.json", "--cabling", "cables.csv"],
    );
    assert!(v.status.success(), "{}", text(&v.stdout));
    // The TOML form reads back too.
    let t = planner_in(dir.path(), &["design", inv, "--out", "plan.toml"]);
    assert!(t.status.success(), "{}", text(&t.stderr));
    let v = planner_in(dir.path(), &["validate", "plan.toml"]);
    assert!(v.status.success(), "{}", text(&v.stdout));
}

#[test]
fn a_failed_design_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = planner_in(
        dir.path(),
        &["design", "--bigraph", "4x16", "--out", "missing/plan.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("directory missing does not exist"));
    let bad = planner_in(
        dir.path(),
        &["design", "--bigraph", "9x16", "--out", "plan.json"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn usage_errors_exit_2() {
    let out = planner(&["design"]);
    assert_eq!(out.status.code(), Some(2));
    let out = planner(&["design", "--bigraph", "4x16", "--fat-tree", "k=4"]);
    assert_eq!(out.status.code(), Some(2));
    let out = planner(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue #33: racks by arithmetic, four servers to a rack in one line
/// (`rack = "r{n/4}"`), and a bad divisor refused with its line.
#[test]
fn issue33_rack_patterns_group_servers() {
    let base = fs::read_to_string(root().join("topologies/fat-tree-64.toml")).unwrap();
    let with_rack = |rack: &str| {
        base.replacen(
            "[[server]]\nname = \"node{n:02}\"\ncount = 16\n",
            &format!(
                "[[rack]]\nname = \"r{{n}}\"\ncount = 4\n\n[[server]]\nname = \"node{{n:02}}\"\ncount = 16\nrack = \"{rack}\"\n"
            ),
            1,
        )
    };
    let good = with_rack("r{n/4}");
    assert_ne!(good, base, "the server template moved");
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("racked.toml"), &good).unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "design",
            "racked.toml",
            "--topology",
            "fat-tree",
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let racks: Vec<(String, String)> = plan["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["rack"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(racks.len(), 16);
    for (i, (name, rack)) in racks.iter().enumerate() {
        assert_eq!(name, &format!("node{:02}", i + 1));
        assert_eq!(rack, &format!("r{}", i / 4 + 1), "{name}");
    }
    fs::write(dir.path().join("bad.toml"), with_rack("r{n/0}")).unwrap();
    let out = planner_in(
        dir.path(),
        &["design", "bad.toml", "--topology", "fat-tree"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let line = with_rack("r{n/0}")
        .lines()
        .position(|l| l == "rack = \"r{n/0}\"")
        .unwrap()
        + 1;
    assert!(err.contains(&format!("bad.toml:{line}: ")), "{err}");
    assert!(err.contains("unknown placeholder `{n/0}`"), "{err}");
}

/// Issue #33 item 2: power per rack against each rack's limit. The racked
/// 1,024-GPU inventory's leaf-spine fits its 40 kW racks; a limit of
/// 30 kW for racks without their own flags the design's network rack
/// alone, naming it on stderr, and the command exits 1 with the report
/// printed.
#[test]
fn issue33_cost_flags_racks_over_their_power_limit() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("racked.json");
    let out = planner(&[
        "design",
        "topologies/h100-1024-racked.toml",
        "--topology",
        "fat-tree",
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cost = |extra: &[&str]| {
        let mut args = vec![
            "cost",
            plan.to_str().unwrap(),
            "--catalog",
            "examples/data/catalog-400g.toml",
        ];
        args.extend_from_slice(extra);
        planner(&args)
    };
    let ok = cost(&[]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let report = text(&ok.stdout);
    assert!(
        report.contains("power 1071.7 kW in total, 33 racks"),
        "{report}"
    );
    assert!(
        report.contains("r01                      4         1  32.6 kW  40.0 kW  ok"),
        "{report}"
    );
    let over = cost(&["--max-rack-kw", "20", "--format", "json"]);
    assert_eq!(over.status.code(), Some(1), "{}", text(&over.stderr));
    let json: serde_json::Value = serde_json::from_slice(&over.stdout).unwrap();
    assert_eq!(json["power"]["over"], serde_json::json!(["network"]));
    assert_eq!(
        text(&over.stderr),
        "rack network: draws 27.8 kW, over its 20.0 kW limit by 7.8 kW; move servers or switches to another rack (the inventory's `rack`) or raise its `max_kw`\n"
    );
    let bad = cost(&["--max-rack-kw", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("--max-rack-kw"),
        "{}",
        text(&bad.stderr)
    );
}
