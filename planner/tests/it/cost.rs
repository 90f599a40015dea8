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
    // BiGraph, fat-tree and rail-optimized: HPN needs dual-port NICs,
    // which the shorthand's servers do not have.
    let costs: Vec<&str> = priced["costs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["topology"].as_str().unwrap())
        .collect();
    assert_eq!(costs, ["bigraph", "fat-tree", "rail-optimized"]);
}

/// The entry of `topology` in a comparison's JSON.
fn design_of<'a>(v: &'a serde_json::Value, topology: &str) -> &'a serde_json::Value {
    v["designs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["topology"] == topology)
        .unwrap()
}

/// Issue #33: `compare` shows a topology only when `design` builds it
/// from the same inventory, and says why not with `design`'s own
/// message; it prices every column it shows and ranks only those.
#[test]
fn issue33_compare_shows_only_what_design_builds() {
    let inv = "topologies/eflops-4x16.toml";
    let refused = planner(&["design", inv, "--topology", "hpn"]);
    assert_eq!(refused.status.code(), Some(2));
    let why = String::from_utf8_lossy(&refused.stderr)
        .trim_end()
        .trim_start_matches("error: ")
        .to_string();
    assert!(why.contains("1 port"), "{why}");
    let out = planner(&["compare", inv, "--catalog", CATALOG]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("\nHPN: not built: {why}\n")),
        "{text}"
    );
    // No column, no price, no verdict for it.
    let header = text.lines().nth(2).unwrap();
    assert!(
        header.contains("BiGraph") && !header.contains("HPN"),
        "{header}"
    );
    let verdict = text.lines().find(|l| l.starts_with("cheapest:")).unwrap();
    assert!(!verdict.contains("hpn"), "{verdict}");
    let v = json(&["compare", inv, "--catalog", CATALOG, "--format", "json"]);
    let hpn = design_of(&v, "hpn");
    assert_eq!(hpn["error"].as_str().unwrap(), why);
    assert!(hpn.get("metrics").is_none());
    let built: Vec<&serde_json::Value> = v["designs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d.get("metrics").is_some())
        .map(|d| &d["topology"])
        .collect();
    let priced: Vec<&serde_json::Value> = v["costs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["topology"])
        .collect();
    assert_eq!(built, priced);
    // An inventory with dual-port NICs is built as HPN by both.
    let dual = "topologies/hpn-h100-1024.toml";
    assert!(
        planner(&["design", dual, "--topology", "hpn"])
            .status
            .success()
    );
    let v = json(&["compare", dual, "--format", "json"]);
    let hpn = design_of(&v, "hpn");
    assert!(hpn.get("metrics").is_some(), "{hpn}");
}

/// Issue #33: `purchase` holds a bisection floor, 100 % unless told, and
/// says so in `--help` and in its output.
#[test]
fn issue33_purchase_states_its_bisection_floor() {
    let help = planner(&["purchase", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--min-bisection"), "{help}");
    assert!(help.contains("[default: 100%]"), "{help}");
    let out = planner(&["purchase", "--gpus", "512", "--catalog", CATALOG]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bisection floor: 100% of full bisection with 512 sub-nodes"),
        "{text}"
    );
    for floor in ["100%", "50%", "0"] {
        let v = json(&[
            "purchase",
            "--gpus",
            "512",
            "--min-bisection",
            floor,
            "--catalog",
            CATALOG,
            "--format",
            "json",
        ]);
        let want: f64 = floor.trim_end_matches('%').parse::<f64>().unwrap() / 100.0;
        assert_eq!(v["min_bisection"].as_f64().unwrap(), want);
        for d in [&v["chosen"], &v["runner_up"]] {
            assert!(
                d["bisection_ratio"].as_f64().unwrap() >= want,
                "{floor}: {d}"
            );
        }
    }
    let bad = planner(&[
        "purchase",
        "--gpus",
        "512",
        "--min-bisection",
        "150%",
        "--catalog",
        CATALOG,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.starts_with("error: --min-bisection: `150%`"), "{err}");
}
