//! `planner compare --catalog`: the two designs of a comparison priced
//! side by side.

use serde::Serialize;

use super::bom::{PlanCost, cost_plan, money, render_bom};
use super::catalog::Catalog;
use crate::compare::Comparison;
use crate::plan::Topology;
use crate::text::Table;

/// One design of a comparison, priced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostEntry {
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The cost, when the design exists and the catalog prices it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<PlanCost>,
    /// Why it could not be priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Prices every design of a comparison.
pub fn cost_comparison(c: &Comparison, catalog: &Catalog) -> Vec<CostEntry> {
    c.designs
        .iter()
        .map(|d| match &d.plan {
            Some(plan) => match cost_plan(plan, catalog, None) {
                Ok(cost) => CostEntry {
                    topology: d.topology,
                    cost: Some(cost),
                    error: None,
                },
                Err(e) => CostEntry {
                    topology: d.topology,
                    cost: None,
                    error: Some(e.to_string()),
                },
            },
            None => CostEntry {
                topology: d.topology,
                cost: None,
                error: Some("no design".into()),
            },
        })
        .collect()
}

/// One figure of a priced design, as text.
type Figure = dyn Fn(&PlanCost) -> String;

/// The costs side by side, then each bill of materials.
pub fn render_comparison_costs(entries: &[CostEntry], catalog: &Catalog) -> String {
    let cur = &catalog.currency;
    let mut out = format!("\nCost from {}", catalog.name);
    if let Some(note) = &catalog.note {
        out.push_str(&format!(" ({note})"));
    }
    out.push_str(&format!(", in {cur}\n\n"));
    let mut t = Table::new(["", "BiGraph", "fat-tree", "rail-optimized"]).right(&[1, 2, 3]);
    let cell = |i: usize, f: &dyn Fn(&PlanCost) -> String| {
        entries
            .get(i)
            .and_then(|e| e.cost.as_ref())
            .map_or_else(|| "-".to_string(), f)
    };
    let rows: [(&str, &Figure); 6] = [
        ("capex", &|c| money(c.bom.capex)),
        ("energy", &|c| money(c.bom.energy_cost)),
        ("total (TCO)", &|c| money(c.bom.total_cost)),
        ("per sub-node", &|c| money(c.cost_per_sub_node)),
        ("bisection Gbps", &|c| crate::text::gbps(c.bisection_gbps)),
        ("per Gbps of bisection", &|c| {
            money(c.cost_per_bisection_gbps)
        }),
    ];
    for (name, f) in rows {
        t.row([name.to_string(), cell(0, f), cell(1, f), cell(2, f)]);
    }
    out.push_str(&t.render());
    let priced: Vec<&PlanCost> = entries.iter().filter_map(|e| e.cost.as_ref()).collect();
    // The first of the cheapest wins a tie, in column order.
    let cheapest = |key: &dyn Fn(&PlanCost) -> f64| {
        priced
            .iter()
            .copied()
            .reduce(|a, b| if key(b) < key(a) { b } else { a })
    };
    if priced.len() > 1
        && let (Some(lo), Some(per_gbps)) = (
            cheapest(&|c| c.bom.total_cost),
            cheapest(&|c| c.cost_per_bisection_gbps),
        )
    {
        let more: Vec<String> = priced
            .iter()
            .filter(|c| c.topology != lo.topology)
            .map(|c| {
                format!(
                    "{} costs {:.1}% more",
                    c.topology.as_str(),
                    (c.bom.total_cost / lo.bom.total_cost - 1.0) * 100.0
                )
            })
            .collect();
        out.push_str(&format!(
            "cheapest: {}; {}; cheapest per Gbps of bisection: {}\n",
            lo.topology.as_str(),
            more.join(", "),
            per_gbps.topology.as_str()
        ));
    }
    for e in entries {
        match (&e.cost, &e.error) {
            (Some(c), _) => {
                out.push_str(&format!("\n{} ({}):\n", e.topology.as_str(), c.design));
                out.push_str(&render_bom(&c.bom, cur));
            }
            (None, Some(err)) => {
                out.push_str(&format!("\n{}: not priced: {err}\n", e.topology.as_str()));
            }
            (None, None) => {}
        }
    }
    out
}
