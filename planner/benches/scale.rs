//! Scale benchmark for `design` and `validate` (issue targets: a
//! 131,072-sub-node BiGraph (N=512, M=256) and a fat-tree of the same size,
//! under 1 s each and under 1 GB peak memory on a 2-core machine).
//!
//! Run: `cargo bench -p planner --bench scale` (add `-- quick` for one
//! round). Each scenario runs in its own child process so that its peak
//! resident memory (VmHWM) is its own. Results go to stdout as a Markdown
//! table for docs/benchmarks.md.

use std::process::Command;
use std::time::{Duration, Instant};

use planner::design::design;
use planner::design::shorthand::{self, Shorthand};
use planner::plan::Plan;
use planner::validate::{cabling, validate_cabling, validate_plan};

const SCENARIOS: [(&str, &str); 2] = [
    ("bigraph", "BiGraph 256x512 (131,072 sub-nodes)"),
    (
        "fat-tree",
        "2-tier leaf-spine, 512-port switches (131,072 sub-nodes)",
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--scenario") {
        let name = &args[pos + 1];
        let rounds: usize = args[pos + 2].parse().unwrap_or(3);
        run_scenario(name, rounds);
        return;
    }
    let rounds = if args.iter().any(|a| a == "quick") {
        1
    } else {
        5
    };
    let exe = std::env::current_exe().expect("bench executable");
    println!("| scenario | phase | best of {rounds} | peak RSS |");
    println!("|---|---|---|---|");
    for (name, _) in SCENARIOS {
        let out = Command::new(&exe)
            .args(["--scenario", name, &rounds.to_string()])
            .output()
            .expect("run scenario");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
}

fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        last = Some(v);
    }
    (best, last.expect("at least one round"))
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn run_scenario(name: &str, rounds: usize) {
    let label = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, l)| *l)
        .expect("known scenario");
    let s = Shorthand::default();
    let (inv, opts) = match name {
        "bigraph" => shorthand::bigraph(256, 512, &s).expect("shorthand"),
        _ => shorthand::fat_tree("tiers=2,sub-nodes=131072,ports=512", &s).expect("shorthand"),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let plan_path = dir.path().join("plan.json");
    let csv_path = dir.path().join("cabling.csv");

    // design: build the plan and write it and its cable list, as
    // `planner design --out plan.json --cables cabling.csv` does.
    let (t_design, plan) = best(rounds, || {
        let plan = design(&inv, &opts).expect("design");
        std::fs::write(&plan_path, plan.to_json().expect("json")).expect("write plan");
        std::fs::write(&csv_path, plan.cables_csv()).expect("write csv");
        plan
    });
    assert_eq!(plan.sub_nodes, 131_072);
    let size = std::fs::metadata(&plan_path).map_or(0, |m| m.len());
    drop(plan);

    // validate: read the plan back and check its invariants, as
    // `planner validate plan.json` does.
    let (t_plan, ok) = best(rounds, || {
        let text = std::fs::read_to_string(&plan_path).expect("read plan");
        let plan = Plan::from_json(&text, "plan.json").expect("parse plan");
        validate_plan(&plan).ok
    });
    assert!(ok);

    // validate --cabling: the same plus every cable of the as-built CSV.
    let (t_cabling, ok) = best(rounds, || {
        let text = std::fs::read_to_string(&plan_path).expect("read plan");
        let plan = Plan::from_json(&text, "plan.json").expect("parse plan");
        let csv = std::fs::read_to_string(&csv_path).expect("read csv");
        let rows = cabling::parse_csv(&csv, "cabling.csv").expect("parse csv");
        validate_cabling(&plan, &rows, &["cabling.csv".to_string()]).ok
    });
    assert!(ok);
    let rss = peak_rss_mib();
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
    println!(
        "| {label} | design + write plan ({:.0} MB) and cable CSV | {} | |",
        size as f64 / 1e6,
        ms(t_design)
    );
    println!("| {label} | validate plan | {} | |", ms(t_plan));
    println!(
        "| {label} | validate plan + cabling CSV | {} | {rss:.0} MiB |",
        ms(t_cabling)
    );
}
