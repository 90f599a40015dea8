//! Scale benchmark for `design` and `validate` (issue targets: a
//! 131,072-sub-node BiGraph (N=512, M=256) and a fat-tree of the same size,
//! under 1 s each and under 1 GB peak memory on a 2-core machine; issue
//! #18: design, ranks and verification of an 8,192-GPU rail-optimized
//! fabric under 1 s each).
//!
//! Run: `cargo bench -p planner --bench scale` (add `-- quick` for one
//! round instead of five). Two tables come out, in Markdown for
//! docs/benchmarks.md:
//! - the `planner` binary end to end (what a user waits for), best wall
//!   time and peak resident memory (from GNU time, when installed);
//! - the library phases inside one process, to see where the time goes.

mod common;
use common::best;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use planner::algorithm::{self, Algorithm};
use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::{self, Shorthand};
use planner::plan::Plan;
use planner::ranks::{rank_table, verify};
use planner::validate::{cabling, validate_cabling, validate_plan};

struct Scenario {
    label: &'static str,
    flag: &'static str,
    spec: &'static str,
    /// HDRM on the BiGraph; halving-doubling in plan order on the fat-tree.
    rank_algorithm: &'static str,
    /// A dead cable for the faulty-fabric search, when there is one to
    /// name.
    avoid: Option<&'static str>,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        label: "BiGraph 256x512",
        flag: "--bigraph",
        spec: "256x512",
        rank_algorithm: "hdrm",
        avoid: Some("link:sw001-sw002"),
    },
    Scenario {
        label: "leaf-spine, 512-port switches",
        flag: "--fat-tree",
        spec: "tiers=2,sub-nodes=131072,ports=512",
        rank_algorithm: "hd",
        avoid: None,
    },
    // Issue #18: 8,192 GPUs on 128-port switches, 8 rails (under 1 s each
    // for design, ranks and their verification).
    Scenario {
        label: "rail-optimized 8,192, 128-port switches",
        flag: "--rail-optimized",
        spec: "sub-nodes=8192,rails=8,ports=128",
        rank_algorithm: "hd",
        avoid: None,
    },
];

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let rounds = if quick { 1 } else { 5 };
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = env!("CARGO_BIN_EXE_planner");
    let gnu_time = Path::new("/usr/bin/time").exists();

    println!("Command line, best of {rounds} (131,072 sub-nodes; rail-optimized 8,192):\n");
    println!("| fabric | command | wall time | peak RSS |");
    println!("|---|---|---|---|");
    for s in &SCENARIOS {
        let plan = dir.path().join("plan.json");
        let csv = dir.path().join("cabling.csv");
        let p = plan.to_str().expect("utf-8 path");
        let c = csv.to_str().expect("utf-8 path");
        let alg = s.rank_algorithm;
        let mut runs: Vec<(String, Vec<&str>)> = vec![
            (
                "design --out plan.json --cables cabling.csv".to_string(),
                vec!["design", s.flag, s.spec, "--out", p, "--cables", c],
            ),
            ("validate plan.json".to_string(), vec!["validate", p]),
            (
                "validate plan.json --cabling cabling.csv".to_string(),
                vec!["validate", p, "--cabling", c],
            ),
            (
                format!("ranks plan.json --algorithm {alg} --format csv"),
                vec!["ranks", p, "--algorithm", alg, "--format", "csv"],
            ),
            (
                format!("verify-ranks plan.json --algorithm {alg}"),
                vec!["verify-ranks", p, "--algorithm", alg],
            ),
        ];
        if let Some(avoid) = s.avoid {
            runs.push((
                format!("ranks plan.json --algorithm {alg} --avoid {avoid} --format csv"),
                vec![
                    "ranks",
                    p,
                    "--algorithm",
                    alg,
                    "--avoid",
                    avoid,
                    "--format",
                    "csv",
                ],
            ));
            runs.push((
                format!("verify-ranks plan.json --algorithm {alg} --avoid {avoid}"),
                vec!["verify-ranks", p, "--algorithm", alg, "--avoid", avoid],
            ));
        }
        for (what, args) in runs {
            let (t, rss) = run_cli(exe, &args, rounds, gnu_time);
            println!(
                "| {} | `planner {what}` | {} | {} |",
                s.label,
                ms(t),
                rss.map_or("n/a".to_string(), |kb| format!(
                    "{:.0} MiB",
                    kb as f64 / 1024.0
                ))
            );
        }
    }

    println!("\nLibrary phases in one process, best of {rounds}:\n");
    println!("| fabric | phase | time |");
    println!("|---|---|---|");
    for s in &SCENARIOS {
        phases(s, rounds);
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// Best wall time and the peak RSS (KiB) of that run.
fn run_cli(exe: &str, args: &[&str], rounds: usize, gnu_time: bool) -> (Duration, Option<u64>) {
    let mut best = (Duration::MAX, None);
    for _ in 0..rounds {
        let mut cmd = if gnu_time {
            let mut c = Command::new("/usr/bin/time");
            c.args(["-f", "%M", exe]);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(args);
        let t = Instant::now();
        let out = cmd.output().expect("run planner");
        let elapsed = t.elapsed();
        assert!(
            out.status.success(),
            "planner {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rss = String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<u64>().ok());
        if elapsed < best.0 {
            best = (elapsed, rss);
        }
    }
    best
}

fn phases(s: &Scenario, rounds: usize) {
    let sh = Shorthand::default();
    let (inv, opts) = match s.flag {
        "--bigraph" => {
            let (m, n) = shorthand::parse_bigraph(s.spec).expect("spec");
            shorthand::bigraph(m, n, &sh).expect("shorthand")
        }
        "--rail-optimized" => shorthand::rail_optimized(s.spec, &sh).expect("shorthand"),
        _ => shorthand::fat_tree(s.spec, &sh).expect("shorthand"),
    };
    let (t, plan) = best(rounds, || design(&inv, &opts).expect("design"));
    println!("| {} | design (in memory) | {} |", s.label, ms(t));
    let (t, json) = best(rounds, || plan.to_json().expect("json"));
    println!(
        "| {} | plan to JSON ({:.0} MB) | {} |",
        s.label,
        json.len() as f64 / 1e6,
        ms(t)
    );
    let (t, csv) = best(rounds, || plan.cables_csv());
    println!("| {} | cable list to CSV | {} |", s.label, ms(t));
    let (t, parsed) = best(rounds, || {
        Plan::from_json(&json, "plan.json").expect("parse")
    });
    println!("| {} | plan from JSON | {} |", s.label, ms(t));
    let (t, v) = best(rounds, || validate_plan(&parsed));
    assert!(v.ok);
    println!("| {} | plan invariants | {} |", s.label, ms(t));
    let (t, checked) = best(rounds, || {
        CheckedPlan::load(&json, "plan.json").expect("load")
    });
    println!(
        "| {} | plan load (parse and check, what every command does) | {} |",
        s.label,
        ms(t)
    );
    let (t, rows) = best(rounds, || {
        cabling::parse_csv(&csv, "cabling.csv").expect("csv")
    });
    println!("| {} | cabling CSV parse | {} |", s.label, ms(t));
    let (t, v) = best(rounds, || validate_cabling(&parsed, &rows, &[]));
    assert!(v.ok);
    println!("| {} | cabling against the plan | {} |", s.label, ms(t));
    let alg = Algorithm::parse(s.rank_algorithm, algorithm::Command::Ranks).expect("algorithm");
    let (t, table) = best(rounds, || {
        rank_table(&checked, alg, None).expect("rank table")
    });
    println!(
        "| {} | {} rank table | {} |",
        s.label,
        s.rank_algorithm,
        ms(t)
    );
    let (t, steps) = best(rounds, || verify(&checked, &table, 0).expect("verify"));
    println!(
        "| {} | {} per-step proof ({} steps, worst load {}) | {} |",
        s.label,
        s.rank_algorithm,
        steps.len(),
        steps.iter().map(|x| x.max_load).max().unwrap_or(0),
        ms(t)
    );
}
