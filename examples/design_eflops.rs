//! Design the EFLOPS 4x16 deployment with the planner library: check the
//! servers, design a BiGraph and a fat-tree for the same hardware, and
//! compare them.
//!
//! Run from the repository root: `cargo run --release -p examples --example design_eflops`.

use anyhow::{Context as _, Result, bail};
use planner::design::{DesignOptions, design};
use planner::inventory::Inventory;
use planner::metrics::metrics;
use planner::plan::Topology;
use planner::servers::check_servers;
use planner::validate::validate_plan;

fn main() -> Result<()> {
    let path = "topologies/eflops-4x16.toml";
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading {path} (run this from the repository root)"))?;
    let inventory = Inventory::from_toml(&text, path)?;

    let check = check_servers(&inventory);
    println!(
        "{}: {} servers, {} sub-nodes, congestionless: {}",
        inventory.name,
        check.servers,
        check.sub_nodes,
        if check.ok { "yes" } else { "no" }
    );

    for topology in [Topology::BiGraph, Topology::FatTree] {
        let plan = design(
            &inventory,
            &DesignOptions {
                topology,
                ..DesignOptions::default()
            },
        )?;
        // Every plan the planner makes passes its own invariants.
        if !validate_plan(&plan).ok {
            bail!("{} failed its own checks", plan.describe());
        }
        let m = metrics(&plan);
        println!(
            "{:<24} {:>3} switches ({} physical), {:>3} links, bisection {:>5} Gbps, {} switches at most between sub-nodes",
            m.design, m.switches, m.physical_switches, m.links, m.bisection_gbps, m.max_switch_hops
        );
    }
    Ok(())
}
