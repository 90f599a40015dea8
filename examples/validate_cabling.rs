//! Check an as-built cabling record against a plan with the planner
//! library, and print what a cabling crew should fix.
//!
//! Run from the repository root:
//! `cargo run --release -p examples --example validate_cabling`
//! (or pass a plan and a CSV: `-- PLAN CABLING.csv`).

use anyhow::{Context as _, Result};
use planner::plan::Plan;
use planner::validate::{cabling, validate_cabling};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let plan_path = args
        .first()
        .map_or("examples/data/eflops-4x16.plan.json", String::as_str);
    let csv_path = args
        .get(1)
        .map_or("examples/data/eflops-4x16.miswired.csv", String::as_str);
    let plan = Plan::parse(
        &std::fs::read_to_string(plan_path).with_context(|| format!("reading {plan_path}"))?,
        plan_path,
    )?;
    let rows = cabling::parse_csv(
        &std::fs::read_to_string(csv_path).with_context(|| format!("reading {csv_path}"))?,
        csv_path,
    )?;
    let v = validate_cabling(&plan, &rows, &[csv_path.to_string()]);
    println!(
        "{} of {} planned cables are as planned",
        v.matching_cables, v.planned_cables
    );
    for f in &v.findings {
        println!(
            "- [{}] {}: {}\n  fix: {}",
            f.kind, f.object, f.message, f.fix
        );
    }
    Ok(())
}
