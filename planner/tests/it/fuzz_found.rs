//! Issue #13: what the fuzz campaign over the binaries found after the
//! fixes of the issue were merged (`docs/benchmarks.md`, "Fuzzing"), one
//! regression test each. Every case must be a clean refusal (exit 2, the
//! input named) or a success, never a panic or an internal error.

use std::fs;

use crate::{planner, root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Writes `content` as `name` in a temporary directory and runs the
/// command with `{}` replaced by its path; returns (exit code, stderr).
fn run_on(name: &str, content: &str, args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs::write(&path, content).unwrap();
    let p = path.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "{}" { p } else { a })
        .collect();
    let out = planner(&args);
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("internal error"), "{args:?}: {err}");
    (out.status.code(), err)
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap()
}

#[test]
fn issue13_fuzz_bigraph_m_near_u64_max_is_refused() {
    let out = planner(&["design", "--bigraph", "18446744073709551615x8"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("M takes a switch port per sub-node") && err.contains("limit of 4096"),
        "{err}"
    );
}

#[test]
fn issue13_fuzz_pfc_polling_near_u32_max_is_refused_at_load() {
    let plan = read("examples/data/eflops-4x16.plan.json")
        .replace("\"polling_ms\": 100", "\"polling_ms\": 4294967295");
    let (code, err) = run_on("plan.json", &plan, &["ranks", "{}", "--format", "json"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("polling_ms 4294967295"), "{err}");
}

#[test]
fn issue13_fuzz_cabling_against_a_plan_with_an_unknown_server() {
    // A sub-node naming a server the plan does not list, and a port past
    // the switch: validate reports both, with or without cabling.
    let plan = read("examples/data/eflops-4x16.plan.json").replacen(
        "\"server\": \"node09\", \"index\": 0",
        "\"server\": \"node09x\", \"index\": 0",
        1,
    );
    let cables = root().join("examples/data/eflops-4x16.cables.csv");
    let (code, err) = run_on(
        "plan.json",
        &plan,
        &["validate", "{}", "--cabling", cables.to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn issue13_fuzz_fat_tree_with_a_slow_nic_passes_its_own_check() {
    // One NIC of the template at 3 Gbps: the design sizes leaf uplinks for
    // the fastest NIC, and the plan check reads the ratio the same way.
    let inv = read("topologies/fat-tree-64.toml").replacen("speed_gbps = 100", "speed_gbps = 3", 1);
    let (code, err) = run_on("fat-tree-64.toml", &inv, &["compare", "{}"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn issue13_fuzz_catalog_watts_beyond_floating_point_is_refused() {
    let catalog = read("examples/data/catalog-example.toml").replacen(
        "watts = 700",
        "watts = 1.7976931348623157e308",
        1,
    );
    let (code, err) = run_on(
        "catalog.toml",
        &catalog,
        &["purchase", "--gpus", "512", "--catalog", "{}"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("watts of one part") || err.contains("above the limit"),
        "{err}"
    );
}

#[test]
fn issue13_fuzz_catalog_energy_price_and_ports_are_bounded() {
    let base = read("examples/data/catalog-example.toml");
    for (from, to, word) in [
        (
            "price_per_kwh = 0.10",
            "price_per_kwh = 1.7976931348623157e308",
            "price_per_kwh",
        ),
        ("ports = 32", "ports = 4294967295", "ports per switch"),
    ] {
        assert!(base.contains(from), "{from}");
        let catalog = base.replacen(from, to, 1);
        let (code, err) = run_on(
            "catalog.toml",
            &catalog,
            &["purchase", "--gpus", "512", "--catalog", "{}"],
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(word) && err.contains("catalog.toml:"), "{err}");
    }
}

#[test]
fn issue13_fuzz_compare_stops_growing_switches_that_never_fit() {
    // Seed 4's case 130128: the upper halves of the EFLOPS switches cut
    // to ports 1-10. compare grows the switch pool for its BiGraph, and
    // every grown switch was skipped again, forever (over 60 s); now the
    // BiGraph is refused with the reason and the fat-tree still compares.
    let inv =
        read("topologies/eflops-4x16.toml").replacen("ports = \"1-16\"", "ports = \"1-10\"", 1);
    let start = std::time::Instant::now();
    let (code, err) = run_on("inv.toml", &inv, &["compare", "{}"]);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{err}"
    );
    assert!(matches!(code, Some(0) | Some(2)), "{code:?}: {err}");
}
