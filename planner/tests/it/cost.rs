//! `planner cost`, `planner purchase` and `planner compare --catalog`:
//! the behaviours a user relies on beyond the golden files.

use crate::planner;

const CATALOG: &str = "examples/data/catalog-example.toml";

fn json(args: &[&str]) -> serde_json::Value {
    let out = planner(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn purchase_json_keeps_the_contract() {
    let v = json(&[
        "purchase",
        "--gpus",
        "512",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    for key in ["topology", "total_cost", "parts"] {
        assert!(v["chosen"].get(key).is_some(), "chosen.{key}");
        assert!(v["runner_up"].get(key).is_some(), "runner_up.{key}");
    }
    assert!(v["binding_constraints"].is_array());
    let parts = v["chosen"]["parts"].as_array().unwrap();
    let sum: f64 = parts
        .iter()
        .map(|p| {
            assert!(p["part"].is_string());
            p["count"].as_f64().unwrap() * p["unit_price"].as_f64().unwrap()
        })
        .sum();
    let total = v["chosen"]["total_cost"].as_f64().unwrap();
    assert!((sum - total).abs() < 0.01, "{sum} vs {total}");
}

/// The issue's "done when": for 512 and 4,096 GPUs, the cheapest BiGraph
/// and fat-tree, their bills, and which is cheaper per Gbps, in one
/// command.
#[test]
fn issue_6_both_topologies_in_one_command() {
    for gpus in ["512", "4096"] {
        let v = json(&[
            "purchase",
            "--gpus",
            gpus,
            "--catalog",
            CATALOG,
            "--format",
            "json",
        ]);
        let mut topologies = [
            v["chosen"]["topology"].as_str().unwrap(),
            v["runner_up"]["topology"].as_str().unwrap(),
        ];
        topologies.sort_unstable();
        assert_eq!(topologies, ["bigraph", "fat-tree"], "{gpus} GPUs");
        assert!(v["chosen"]["cost_per_bisection_gbps"].as_f64().unwrap() > 0.0);
        assert!(v["runner_up"]["cost_difference"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn output_is_deterministic() {
    let args = [
        "purchase",
        "--gpus",
        "4096",
        "--growth",
        "8192",
        "--catalog",
        CATALOG,
    ];
    let a = planner(&args);
    let b = planner(&args);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn bad_inputs_exit_2_without_a_panic() {
    let cases: [&[&str]; 5] = [
        &[
            "cost",
            "examples/data/eflops-4x16.plan.json",
            "--catalog",
            "no-such.toml",
        ],
        &["cost", "no-such-plan.json", "--catalog", CATALOG],
        &["purchase", "--gpus", "0", "--catalog", CATALOG],
        &[
            "purchase",
            "--gpus",
            "64",
            "--budget",
            "-3",
            "--catalog",
            CATALOG,
        ],
        &[
            "purchase",
            "--gpus",
            "64",
            "--allow-oversubscription",
            "0.5",
            "--catalog",
            CATALOG,
        ],
    ];
    for args in cases {
        let out = planner(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn compare_without_catalog_is_unchanged_by_the_flag() {
    let plain = json(&["compare", "--bigraph", "4x16", "--format", "json"]);
    let priced = json(&[
        "compare",
        "--bigraph",
        "4x16",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    assert_eq!(plain["designs"], priced["designs"]);
    // BiGraph, fat-tree, rail-optimized and HPN.
    assert_eq!(priced["costs"].as_array().unwrap().len(), 4);
}
