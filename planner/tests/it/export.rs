//! Tests of `planner export` beyond its golden files: `--out` writes whole
//! files, JSON is machine-readable, bad input exits 2 and writes nothing.

use std::fs;

use crate::{planner, planner_in, root};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";

/// Runs `planner export PLAN ARGS...` in a new empty directory.
fn export_in_temp(args: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let plan = root().join(PLAN);
    let mut all = vec!["export", plan.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = planner_in(dir.path(), &all);
    (dir, out)
}

#[test]
fn out_writes_the_file_and_tells_on_stderr() {
    let (dir, out) = export_in_temp(&["--to", "slurm-tree", "--out", "topology.conf"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("Slurm topology.conf (tree) written to topology.conf\n"),
        "{stderr}"
    );
    let conf = fs::read_to_string(dir.path().join("topology.conf")).unwrap();
    let stdout = planner(&["export", PLAN, "--to", "slurm-tree"]).stdout;
    assert_eq!(conf, String::from_utf8(stdout).unwrap());
    assert!(conf.contains("SwitchName=eflops-4x16 Switches=sw01,"));
}

#[test]
fn bad_input_writes_nothing() {
    let (dir, out) = export_in_temp(&["--to", "kueue", "--prefix", "-x", "--out", "k.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("k.yaml").exists());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary file left"
    );
    let out = planner(&["export", "no/such/plan.json", "--to", "labels"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: cannot read no/such/plan.json"),
        "{stderr}"
    );
}

#[test]
fn json_carries_the_objects_and_what_is_lost() {
    for to in [
        "labels",
        "kueue",
        "volcano",
        "slurm-tree",
        "slurm-block",
        "slurm-yaml",
        "topograph",
    ] {
        let out = planner(&["export", PLAN, "--to", to, "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{to}");
        assert!(
            out.stderr.is_empty(),
            "{to}: JSON mode says everything on stdout"
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["to"], to);
        assert_eq!(v["plan"], "eflops-4x16");
        let prefix = if to == "topograph" {
            ""
        } else {
            "topology.eflops.io/"
        };
        assert_eq!(v["prefix"], prefix);
        let lost = v["lost"].as_array().unwrap();
        assert!(
            lost[0]
                .as_str()
                .unwrap()
                .starts_with("upper-lower adjacency"),
            "{to}"
        );
        let body = ["nodes", "objects", "topology_conf", "topologies"]
            .iter()
            .filter(|k| v.get(**k).is_some())
            .count();
        assert_eq!(body, 1, "{to}");
    }
}

/// The YAML parses back to the objects the JSON form carries.
#[test]
fn yaml_and_json_agree() {
    for to in ["kueue", "volcano"] {
        let yaml = planner(&["export", PLAN, "--to", to]).stdout;
        let json = planner(&["export", PLAN, "--to", to, "--format", "json"]).stdout;
        let objects: Vec<serde_json::Value> = String::from_utf8(yaml)
            .unwrap()
            .split("\n---\n")
            .map(|doc| serde_norway::from_str(doc).unwrap())
            .collect();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(serde_json::Value::from(objects), v["objects"], "{to}");
    }
}

/// The Kueue objects are v1beta2 by default; `--kueue-api v1beta1` writes
/// the deprecated version and says so in the YAML, on stderr and in the
/// JSON, and only `--to kueue` takes the option.
#[test]
fn kueue_api_version_is_chosen_and_deprecation_said() {
    let out = planner(&["export", PLAN, "--to", "kueue"]);
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        yaml.matches("apiVersion: kueue.x-k8s.io/v1beta2").count(),
        2
    );
    assert!(
        !yaml.contains("v1alpha1") && !yaml.contains("v1beta1"),
        "{yaml}"
    );
    assert!(
        !String::from_utf8(out.stderr)
            .unwrap()
            .contains("deprecated")
    );

    let out = planner(&["export", PLAN, "--to", "kueue", "--kueue-api", "v1beta1"]);
    assert_eq!(out.status.code(), Some(0));
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        yaml.matches("apiVersion: kueue.x-k8s.io/v1beta1").count(),
        2
    );
    assert!(
        yaml.contains("# Note: kueue.x-k8s.io/v1beta1 is deprecated"),
        "{yaml}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("note: kueue.x-k8s.io/v1beta1 is deprecated"),
        "{stderr}"
    );

    let out = planner(&[
        "export",
        PLAN,
        "--to",
        "kueue",
        "--kueue-api",
        "v1beta1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["notes"][0].as_str().unwrap().contains("deprecated"));
    let v2: serde_json::Value = serde_json::from_slice(
        &planner(&["export", PLAN, "--to", "kueue", "--format", "json"]).stdout,
    )
    .unwrap();
    assert!(v2.get("notes").is_none(), "no notes key without a note");

    let out = planner(&["export", PLAN, "--to", "volcano", "--kueue-api", "v1beta2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: --kueue-api: only --to kueue writes Kueue objects"),
        "{stderr}"
    );
}
