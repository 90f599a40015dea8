//! Files and the terminal: reading inputs and printing (outputs are
//! written by `output.rs`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use planner::checked::CheckedPlan;
use planner::design::DesignOptions;
use planner::design::shorthand::{self, Shorthand};
use planner::inventory::Inventory;
use planner::plan::Plan;
use planner::validate::cabling;

/// An error caused by the user's input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// A `--link-gbps` of the commands that build plans from shorthands: the
/// whole Gbps the designed plan carries (plans hold whole Gbps; rounded
/// up), and the exact speed as the `link_gbps` parameter when it is
/// fractional (`9.33`), so the simulation runs the links at it.
pub fn link_speed(gbps: f64) -> Result<(u32, Option<f64>)> {
    if !gbps.is_finite() || gbps <= 0.0 || gbps > f64::from(u32::MAX) {
        return Err(BadInput(format!(
            "--link-gbps {gbps}: give a link speed above 0 Gbps, e.g. 100 or 9.33"
        ))
        .into());
    }
    let whole = gbps.ceil() as u32;
    Ok((whole, (f64::from(whole) != gbps).then_some(gbps)))
}

pub fn display(p: &Path) -> String {
    p.display().to_string()
}

/// Reads an input file: a regular file of at most
/// `planner::input::MAX_INPUT_BYTES` ([`planner::input::read`]).
pub fn read(path: &Path) -> Result<String> {
    planner::input::read(path).map_err(|m| BadInput(m).into())
}

/// The inventory and design options of the `--bigraph MxN` or `--fat-tree
/// SPEC` shorthand given (`--bigraph` first when both are), with the words
/// that name it; `None` when neither is.
pub fn shorthand_source(
    bigraph: Option<&str>,
    fat_tree: Option<&str>,
    s: &Shorthand,
) -> Result<Option<(Inventory, DesignOptions, String)>> {
    if let Some(spec) = bigraph {
        let (m, n) = shorthand::parse_bigraph(spec)?;
        let (inv, opts) = shorthand::bigraph(m, n, s)?;
        return Ok(Some((inv, opts, format!("--bigraph {spec}"))));
    }
    if let Some(spec) = fat_tree {
        let (inv, opts) = shorthand::fat_tree(spec, s)?;
        return Ok(Some((inv, opts, format!("--fat-tree {spec}"))));
    }
    Ok(None)
}

pub fn load_inventory(path: &Path) -> Result<(Inventory, String)> {
    let name = display(path);
    let text = read(path)?;
    Ok((Inventory::from_toml(&text, &name)?, name))
}

/// Reads and checks a plan: every command but `validate` takes only a
/// plan that passed the whole consistency check.
pub fn load_plan(path: &Path) -> Result<CheckedPlan> {
    let name = display(path);
    let text = read(path)?;
    Ok(CheckedPlan::load(&text, &name)?)
}

/// Reads a plan without checking it, for `validate`, which reports what
/// the check finds instead of refusing the plan.
pub fn read_plan_unchecked(path: &Path) -> Result<Plan> {
    let name = display(path);
    let text = read(path)?;
    Ok(Plan::parse(&text, &name)?)
}

/// Reads every cabling file: CSV, or LLDP JSON named after its device.
pub fn load_cabling(files: &[PathBuf]) -> Result<Vec<cabling::Observed>> {
    let mut observed = Vec::new();
    for file in files {
        let name = display(file);
        let text = read(file)?;
        let rows = if is_json(file, &text) {
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("device");
            cabling::parse_lldp(&text, &name, stem)?
        } else {
            cabling::parse_csv(&text, &name)?
        };
        observed.extend(rows);
    }
    Ok(observed)
}

pub fn is_json(path: &Path, text: &str) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("csv") => false,
        _ => text.trim_start().starts_with('{'),
    }
}

pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`planner ... | head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("writing to stdout"),
    }
}

pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("serialising JSON")?;
    text.push('\n');
    print(&text)
}
