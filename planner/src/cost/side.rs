//! `planner compare --catalog`: the designs of a comparison priced side
//! by side. Only designs that were built are priced; the cost table has a
//! column for each one the catalog prices, and the verdict ranks those
//! alone.

use serde::Serialize;

use super::bom::{PlanCost, cost_plan, money, render_bom};
use super::catalog::Catalog;
use crate::compare::Comparison;
use crate::plan::Topology;
use crate::text::Table;

/// One design of a comparison, priced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostEntry {
    /// `bigraph`, `fat-tree`, `rail-optimized` or `hpn`.
    pub topology: Topology,
    /// The cost, when the catalog prices the design.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<PlanCost>,
    /// Why it could not be priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its worst single failure cuts the fabric (`compare --failures`;
    /// the comparison's entry carries the failure itself).
    #[serde(skip)]
    pub cuts_fabric: bool,
}

/// Prices every design of a comparison that was built (those `design`
/// refused have no entry: the comparison says why).
pub fn cost_comparison(c: &Comparison, catalog: &Catalog) -> Vec<CostEntry> {
    c.designs
        .iter()
        .filter_map(|d| {
            let plan = d.plan.as_ref()?;
            Some(match cost_plan(plan, catalog, None) {
                Ok(cost) => CostEntry {
                    topology: d.topology,
                    cost: Some(cost),
                    error: None,
                    cuts_fabric: d.worst_failure.as_ref().is_some_and(|w| w.cuts_fabric()),
                },
                Err(e) => CostEntry {
                    topology: d.topology,
                    cost: None,
                    error: Some(e.to_string()),
                    cuts_fabric: false,
                },
            })
        })
        .collect()
}

/// One figure of a priced design, as text.
type Figure = dyn Fn(&PlanCost) -> String;

/// The costs side by side, one column per priced design, then each bill
/// of materials, and a line for each design the catalog cannot price.
pub fn render_comparison_costs(entries: &[CostEntry], catalog: &Catalog) -> String {
    let cur = &catalog.currency;
    let mut out = format!("\nCost from {}", catalog.name);
    if let Some(note) = &catalog.note {
        out.push_str(&format!(" ({note})"));
    }
    out.push_str(&format!(", in {cur}\n"));
    let priced: Vec<&PlanCost> = entries.iter().filter_map(|e| e.cost.as_ref()).collect();
    let cuts: Vec<Topology> = (entries.iter())
        .filter(|e| e.cuts_fabric)
        .map(|e| e.topology)
        .collect();
    if priced.is_empty() {
        out.push_str("\nno design could be priced\n");
    } else {
        let columns = 1..=priced.len();
        let mut t =
            Table::new(std::iter::once("").chain(priced.iter().map(|c| c.topology.label())))
                .right(&columns.collect::<Vec<_>>());
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
            t.row(std::iter::once(name.to_string()).chain(priced.iter().map(|c| f(c))));
        }
        t.row(
            std::iter::once("power".to_string())
                .chain(priced.iter().map(|c| super::power::kw(c.power.total_watts))),
        );
        // The rack that draws most against its limit (most, without
        // limits), where the plans have racks, and how many are over.
        if priced.iter().any(|c| !c.power.racks.is_empty()) {
            t.row(
                std::iter::once("worst rack".to_string()).chain(priced.iter().map(|c| {
                    match c.power.worst_rack() {
                        Some(r) => {
                            let limit = r.max_kw.map_or(String::new(), |m| format!(" of {m:.1}"));
                            let over = if c.power.over.is_empty() {
                                String::new()
                            } else {
                                format!(", {} OVER limit", c.power.over.len())
                            };
                            format!("{}{limit} ({}){over}", super::power::kw(r.watts), r.rack)
                        }
                        None => "-".to_string(),
                    }
                })),
            );
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    // The verdict (docs/cost.md, "Comparing designs"): a design that
    // puts a rack over its power limit ranks below one that does not, and
    // one whose worst single failure cuts the fabric (`--failures`) below
    // one whose worst failure does not; then the cheapest wins, the first
    // in column order on a tie. A design without bisection has no cost per
    // Gbps to rank.
    let rank = |c: &PlanCost| {
        (
            usize::from(!c.power.over.is_empty()),
            usize::from(cuts.contains(&c.topology)),
        )
    };
    let best = priced.iter().map(|c| rank(c)).min().unwrap_or((0, 0));
    let ranked: Vec<&PlanCost> = priced.iter().copied().filter(|c| rank(c) == best).collect();
    let cheapest = |key: &dyn Fn(&PlanCost) -> f64| {
        ranked
            .iter()
            .copied()
            .filter(|c| key(c) > 0.0)
            .reduce(|a, b| if key(b) < key(a) { b } else { a })
    };
    if priced.len() > 1
        && let (Some(lo), Some(per_gbps)) = (
            cheapest(&|c| c.bom.total_cost),
            cheapest(&|c| c.cost_per_bisection_gbps),
        )
    {
        let more: Vec<String> = ranked
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
        let mut verdict = format!("cheapest: {}", lo.topology.as_str());
        if !more.is_empty() {
            verdict.push_str(&format!("; {}", more.join(", ")));
        }
        verdict.push_str(&format!(
            "; cheapest per Gbps of bisection: {}",
            per_gbps.topology.as_str()
        ));
        let over: Vec<&str> = (priced.iter())
            .filter(|c| !c.power.over.is_empty())
            .map(|c| c.topology.as_str())
            .collect();
        if !over.is_empty() && ranked.iter().all(|r| r.power.over.is_empty()) {
            verdict.push_str(&format!(
                "; ranked below, a rack over its power limit: {}",
                over.join(", ")
            ));
        } else if !over.is_empty() {
            verdict.push_str(&format!(
                "; every design puts a rack over its power limit: {}",
                over.join(", ")
            ));
        }
        let cutting: Vec<&str> = (priced.iter())
            .filter(|c| {
                cuts.contains(&c.topology) && !ranked.iter().any(|r| r.topology == c.topology)
            })
            .map(|c| c.topology.as_str())
            .collect();
        if !cutting.is_empty() {
            verdict.push_str(&format!(
                "; ranked below, a single failure cuts the fabric: {}",
                cutting.join(", ")
            ));
        }
        out.push_str(&verdict);
        out.push('\n');
    }
    for e in entries {
        match (&e.cost, &e.error) {
            (Some(c), _) => {
                out.push_str(&format!("\n{} ({}):\n", e.topology.as_str(), c.design));
                out.push_str(&render_bom(&c.bom, cur));
            }
            (None, Some(err)) => {
                out.push_str(&format!("\n{}: not priced: {err}\n", e.topology.label()));
            }
            (None, None) => {}
        }
    }
    out
}
