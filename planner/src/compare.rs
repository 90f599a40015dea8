//! BiGraph, fat-tree, rail-optimized and HPN side by side for the same
//! sub-nodes and switch model (`planner compare`). Each topology is
//! designed from the inventory as given, by `design` itself, so a column
//! is shown exactly when `planner design --topology T` builds it (HPN
//! needs dual-port NICs, `ports = 2`); otherwise a line gives `design`'s
//! own refusal.

use serde::Serialize;

use crate::algorithm::Algorithm;
use crate::design::{DesignOptions, counterpart};
use crate::error::Result;
use crate::failures::{WorstFailure, worst_single_failure};
use crate::inventory::Inventory;
use crate::metrics::{Metrics, metrics};
use crate::plan::Topology;
use crate::report::metric_rows;
use crate::text::Table;

/// One column of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// `bigraph`, `fat-tree`, `rail-optimized` or `hpn`.
    pub topology: Topology,
    /// The figures, when a design could be made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Why no design could be made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Physical switches the design uses beyond the inventory's count.
    pub switches_to_add: usize,
    /// The design's notes.
    pub notes: Vec<String>,
    /// Its worst single switch or cable failure, proven
    /// ([`crate::failures::worst_single_failure`]), when it was built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_failure: Option<WorstFailure>,
    /// The plan, for callers that price it (`compare --catalog`).
    #[serde(skip)]
    pub plan: Option<crate::checked::CheckedPlan>,
}

/// The result of `planner compare`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The inventory's name.
    pub inventory: String,
    /// Sub-nodes compared.
    pub sub_nodes: usize,
    /// Physical switches in the inventory.
    pub switches_in_inventory: usize,
    /// BiGraph, then fat-tree, then rail-optimized, then HPN.
    pub designs: Vec<Entry>,
}

impl Comparison {
    /// True when at least one design could be made.
    pub fn any(&self) -> bool {
        self.designs.iter().any(|d| d.metrics.is_some())
    }
}

/// Designs every topology with the inventory's switch models, as many
/// switches as each needs; `fat_tree` sets oversubscription and tiers (the
/// rail-optimized and HPN designs take its oversubscription; they have 2
/// tiers). Every topology designs the inventory as given: what `design`
/// refuses (HPN on single-port NICs) is an entry with `design`'s error.
pub fn compare(inv: &Inventory, fat_tree: &DesignOptions) -> Comparison {
    let have = inv.switches.len();
    let rail = DesignOptions {
        tiers: None,
        ..fat_tree.clone()
    };
    let designs = [
        Topology::BiGraph,
        Topology::FatTree,
        Topology::RailOptimized,
        Topology::Hpn,
    ]
    .into_iter()
    .map(|topology| {
        let opts = match topology {
            Topology::RailOptimized | Topology::Hpn => &rail,
            _ => fat_tree,
        };
        (topology, counterpart::for_inventory(inv, opts, topology))
    })
    .map(|(topology, designed)| match designed {
        Ok(plan) => Entry {
            topology,
            switches_to_add: plan.physical_switches.saturating_sub(have),
            metrics: Some(metrics(&plan)),
            error: None,
            notes: plan.notes.clone(),
            worst_failure: None,
            plan: Some(plan),
        },
        Err(e) => Entry {
            topology,
            metrics: None,
            error: Some(first_lines(&e.to_string(), 4)),
            switches_to_add: 0,
            notes: Vec::new(),
            worst_failure: None,
            plan: None,
        },
    })
    .collect();
    Comparison {
        inventory: inv.name.clone(),
        sub_nodes: inv.sub_node_count(),
        switches_in_inventory: have,
        designs,
    }
}

impl Comparison {
    /// Proves every built design's single failures and keeps its worst
    /// ([`worst_single_failure`]: the HDRM table with the probe's
    /// schedule, as `planner failures` checks by default, searched on what
    /// the worst failure leaves); `compare --failures`.
    pub fn prove_failures(&mut self) -> Result<()> {
        for d in &mut self.designs {
            if let Some(plan) = &d.plan {
                d.worst_failure =
                    worst_single_failure(plan, Algorithm::Hdrm, crate::ranks::Engine::Probe, true)?;
            }
        }
        Ok(())
    }
}

/// The first `n` lines of an error (its summary and first problems), and
/// how many more there are: a design refused for every sub-node should
/// not bury the comparison.
fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= n + 1 {
        return text.to_string();
    }
    format!(
        "{}\n  ... and {} more lines (design this topology alone to see them all)",
        lines[..n].join("\n"),
        lines.len() - n
    )
}

/// Renders the comparison for people: one column per design that could
/// be built, then one line per topology that could not, with `design`'s
/// reason.
pub fn render_table(c: &Comparison, source: &str) -> String {
    let mut out = format!(
        "BiGraph vs fat-tree vs rail-optimized vs HPN for {} ({source}): {} sub-nodes, {} switches in the inventory\n",
        c.inventory, c.sub_nodes, c.switches_in_inventory
    );
    let built: Vec<(&Entry, Vec<(String, String)>)> = c
        .designs
        .iter()
        .filter_map(|d| {
            let m = d.metrics.as_ref()?;
            let mut r = metric_rows(m);
            r.push((
                "switches beyond the inventory".into(),
                d.switches_to_add.to_string(),
            ));
            if let Some(w) = &d.worst_failure {
                r.push(("worst single failure".into(), w.describe()));
            }
            Some((d, r))
        })
        .collect();
    if let Some((_, first)) = built.first() {
        let mut t =
            Table::new(std::iter::once("").chain(built.iter().map(|(d, _)| d.topology.label())));
        for (i, (name, _)) in first.iter().enumerate() {
            t.row(std::iter::once(name.clone()).chain(built.iter().map(|(_, r)| r[i].1.clone())));
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    for d in &c.designs {
        if let Some(e) = &d.error {
            out.push_str(&format!("\n{}: not built: {e}\n", d.topology.label()));
        }
    }
    out
}
