//! Simulator benchmark for `planner simulate` (issue #8 targets, on two
//! cores): a ring over 1,024 sub-nodes at 256 MiB (2,046 steps x 1,024
//! flows) under 1 s step-synchronous (`--fast`) and under 5 s
//! event-driven; the whole EFLOPS Fig. 16 sweep (ring, HD and HDRM on
//! BiGraph and fat-tree, 64 to 1,024 sub-nodes, 256 KiB and 256 MiB)
//! under 10 s event-driven. Issue #19 lowers the event-driven targets
//! to 0.1 s for the ring and 1 s for the sweep (the library sweep
//! `timing_fig16_sweep` measures: plans and simulations on two threads);
//! the target column gives both.
//!
//! Run: `cargo bench -p planner --bench simulate` (add `-- quick` for one
//! round instead of three). The output is Markdown for
//! docs/benchmarks.md, with the machine it ran on.

mod common;
use common::best;

use std::process::Command;
use std::time::Duration;

use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::{self, Shorthand};
use planner::estimate::{
    self, Algorithm, Method, Options, Params, ScaleSpec, parse_nodes, scale_plans,
};

const SIZE_256MIB: u64 = 256 << 20;

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let rounds = if quick { 1 } else { 3 };
    machine();

    let sh = Shorthand::default();
    let bigraph = {
        let (inv, opts) = shorthand::bigraph(16, 64, &sh).expect("BiGraph 16x64");
        design(&inv, &opts).expect("design")
    };
    let fat_tree = {
        let (inv, opts) =
            shorthand::fat_tree("tiers=2,sub-nodes=1024,ports=64", &sh).expect("fat-tree");
        design(&inv, &opts).expect("design")
    };
    let params = Params::default();

    println!("\nOne allreduce, 256 MiB over 1,024 sub-nodes, one thread, best of {rounds}:\n");
    println!("| case | method | simulated time | wall time | target |");
    println!("|---|---|---|---|---|");
    let cases: [(&str, &CheckedPlan, Algorithm); 3] = [
        ("ring, BiGraph 16x64", &bigraph, Algorithm::Ring),
        ("ring, leaf-spine 1,024", &fat_tree, Algorithm::Ring),
        ("hdrm, BiGraph 16x64", &bigraph, Algorithm::Hdrm),
    ];
    for (label, plan, alg) in cases {
        for (method, target) in [
            (Method::Fast, "< 1 s"),
            (Method::Event, "< 0.1 s (#8: < 5 s)"),
        ] {
            let options = Options {
                method,
                seeds: vec![0],
                threads: 1,
                ..Options::default()
            };
            let (t, e) = best(rounds, || {
                estimate::estimate(plan, alg, None, SIZE_256MIB, &params, &options)
                    .expect("estimate")
            });
            let target = if alg == Algorithm::Ring { target } else { "-" };
            println!(
                "| {label} | {} | {:.0} µs | {} | {target} |",
                method.as_str(),
                e.time_us,
                secs(t)
            );
        }
    }

    println!("\nEFLOPS Fig. 16 sweep, event-driven, best of {rounds}:\n");
    println!("| sweep | threads | simulations | wall time | target |");
    println!("|---|---|---|---|---|");
    let nodes = parse_nodes("64..1024").expect("nodes");
    let sizes = [256 << 10, SIZE_256MIB];
    for threads in [2, 1] {
        let options = Options {
            method: Method::Event,
            seeds: vec![0],
            threads,
            ..Options::default()
        };
        let (t, n) = best(rounds, || {
            let plans = scale_plans(&nodes, &ScaleSpec::default()).expect("plans");
            estimate::scale_sweep(
                &plans,
                &Algorithm::EFLOPS,
                &sizes,
                &params,
                &options,
                &mut |_, _| {},
            )
            .expect("sweep")
            .len()
        });
        println!(
            "| plans and simulations, 64..1024 x 256 KiB, 256 MiB | {threads} | {n} | {} | {} |",
            secs(t),
            if threads == 2 {
                "< 1 s (#8: < 10 s)"
            } else {
                "-"
            }
        );
    }

    // The same sweep as a user runs it, end to end.
    let exe = env!("CARGO_BIN_EXE_planner");
    let args = [
        "simulate",
        "--scale",
        "64..1024",
        "--size",
        "256KiB,256MiB",
        "--threads",
        "2",
        "--format",
        "csv",
    ];
    let (t, ()) = best(rounds, || {
        let out = Command::new(exe).args(args).output().expect("run planner");
        assert!(
            out.status.success(),
            "planner {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    println!(
        "| `planner {}` | 2 | 50 | {} | < 10 s |",
        args.join(" "),
        secs(t)
    );
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// The machine, for the record: cores, CPU model and load.
fn machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string());
    println!("Machine: {cores} cores ({cpu}), load average {load} at start.");
}
