//! Purchase-planning benchmark (issue target: up to 16,384 GPUs over a
//! 20-part catalog in under 10 s).
//!
//! Run: `cargo bench -p planner --bench purchase` (add `-- quick` for one
//! round instead of five). Prints a Markdown table for docs/benchmarks.md
//! and exits 1 when a case takes 10 s or more.

mod common;
use common::best;

use std::process::ExitCode;
use std::time::Duration;

use planner::cost::{Catalog, Request, Want, purchase};

const CATALOG: &str = include_str!("../../examples/data/catalog-example.toml");
const LIMIT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let quick = std::env::args().any(|a| a == "quick");
    let rounds = if quick { 1 } else { 5 };
    let catalog = match Catalog::from_toml(CATALOG, "examples/data/catalog-example.toml") {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let parts = catalog.part_count();
    println!(
        "purchase over examples/data/catalog-example.toml ({parts} parts), best of {rounds}\n"
    );
    println!("| GPUs | growth | topology | programs | best time | chosen |");
    println!("|---:|---:|---|---:|---:|---|");
    let cases: [(u64, Option<u64>, Want, &str); 6] = [
        (512, None, Want::Any, "any"),
        (4096, None, Want::Any, "any"),
        (4096, Some(16_384), Want::Any, "any"),
        (16_384, None, Want::Any, "any"),
        (16_384, None, Want::BiGraph, "bigraph"),
        (16_384, None, Want::FatTree, "fat-tree"),
    ];
    let mut ok = true;
    for (gpus, growth, topology, name) in cases {
        let req = Request {
            gpus,
            growth,
            topology,
            budget: None,
            oversubscription: 1.0,
            min_bisection: 1.0,
            failures: None,
        };
        let (best, last) = best(rounds, || purchase(&catalog, &req));
        let (programs, chosen) = match last {
            Ok(p) => (p.programs_solved, p.chosen.design),
            Err(e) => (0, format!("error: {e}")),
        };
        ok &= best < LIMIT;
        println!(
            "| {gpus} | {} | {name} | {programs} | {:.3} s | {chosen} |",
            growth.map_or_else(|| "-".to_string(), |g| g.to_string()),
            best.as_secs_f64()
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("a case took {} s or more", LIMIT.as_secs());
        ExitCode::FAILURE
    }
}
