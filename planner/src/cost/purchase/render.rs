//! A purchase rendered for people: the chosen design, its bill and the runner-up, and the multi-count summary.

use super::{Design, Purchase, Request, percent};
use crate::cost::bom::{Bom, money, render_bom};
use crate::cost::catalog::Catalog;
use crate::text::Table;

/// Renders the purchase for people.
pub fn render_purchase(p: &Purchase, catalog: &Catalog, req: &Request) -> String {
    let cur = &p.currency;
    let g2 = req.growth.unwrap_or(req.gpus);
    let mut out = format!(
        "Cheapest fabric for {} GPUs{} from {}\n",
        req.gpus,
        if g2 > req.gpus {
            format!(" (room for {g2})")
        } else {
            String::new()
        },
        catalog.name
    );
    if let Some(note) = &catalog.note {
        out.push_str(&format!("  - {note}\n"));
    }
    out.push_str(&format!("  - {}\n", floor_words(p.min_bisection, g2)));
    out.push_str(
        "  - power: purchase places no racks, so it weighs total power (the energy line) only; `planner design --catalog` holds the plan to its racks' max_kw\n",
    );
    if p.failures_weighed {
        out.push_str(&format!(
            "  - failures: every single switch and cable failure of each design considered is proven on its plan, full; a design is excluded when one {}\n",
            match p.max_failure_loss {
                Some(n) => format!(
                    "cuts the fabric, breaks the QoS proof or cuts off more than {n} sub-nodes"
                ),
                None => "cuts the fabric or breaks the QoS proof (no limit on the sub-nodes one failure cuts off)".to_string(),
            }
        ));
    }
    let c = &p.chosen;
    out.push_str(&format!(
        "\nChosen: {} ({}), total {} {cur}\n\n",
        c.design,
        c.topology.as_str(),
        money(c.total_cost)
    ));
    out.push_str(&render_bom(&to_bom(c), cur));
    out.push_str(&format!(
        "per GPU {} {cur}; bisection {} Gbps ({}% of full), {} {cur} per Gbps; power {}\n",
        money(c.cost_per_gpu),
        crate::text::gbps(c.bisection_gbps),
        percent(c.bisection_ratio),
        money(c.cost_per_bisection_gbps),
        crate::cost::power::kw(c.power_watts)
    ));
    if let Some(w) = &c.worst_failure {
        out.push_str(&format!("worst single failure: {}\n", w.describe()));
    }
    out.push_str("\nBinding constraints:\n");
    if p.binding_constraints.is_empty() {
        out.push_str("  none: every constraint has slack\n");
    }
    for b in &p.binding_constraints {
        out.push_str(&format!("  - {}: {}\n", b.constraint, b.detail));
    }
    match &p.runner_up {
        Some(r) => {
            let d = &r.design;
            out.push_str(&format!(
                "\nRunner-up: {} ({}), total {} {cur}, {} {cur} more\n\n",
                d.design,
                d.topology.as_str(),
                money(d.total_cost),
                money(r.cost_difference)
            ));
            out.push_str(&render_bom(&to_bom(d), cur));
            let mut t = Table::new(["", "chosen", "runner-up"]).right(&[1, 2]);
            t.row(["topology", c.topology.as_str(), d.topology.as_str()]);
            t.row([
                "total cost".to_string(),
                money(c.total_cost),
                money(d.total_cost),
            ]);
            t.row([
                "per GPU".to_string(),
                money(c.cost_per_gpu),
                money(d.cost_per_gpu),
            ]);
            t.row([
                "bisection Gbps".to_string(),
                crate::text::gbps(c.bisection_gbps),
                crate::text::gbps(d.bisection_gbps),
            ]);
            t.row([
                "share of full bisection".to_string(),
                format!("{}%", percent(c.bisection_ratio)),
                format!("{}%", percent(d.bisection_ratio)),
            ]);
            t.row([
                "per Gbps of bisection".to_string(),
                money(c.cost_per_bisection_gbps),
                money(d.cost_per_bisection_gbps),
            ]);
            t.row([
                "power".to_string(),
                crate::cost::power::kw(c.power_watts),
                crate::cost::power::kw(d.power_watts),
            ]);
            if p.failures_weighed {
                let worst = |d: &Design| match (&d.worst_failure, &d.failures_not_proven) {
                    (Some(w), _) => w.describe(),
                    (None, Some(why)) => format!("not proven: {why}"),
                    (None, None) => "not proven".to_string(),
                };
                t.row(["worst single failure".to_string(), worst(c), worst(d)]);
            }
            out.push('\n');
            out.push_str(&t.render());
            out.push_str(&format!(
                "Cheaper per Gbps of bisection bandwidth: {}\n",
                cheaper_per_gbps(c, d).topology.as_str()
            ));
        }
        None => out.push_str("\nRunner-up: none (no other design fits)\n"),
    }
    if !p.excluded.is_empty() {
        out.push_str("\nExcluded by their single failures (cheapest first):\n");
        for e in &p.excluded {
            out.push_str(&format!(
                "  - {} ({} {cur}): {}\n",
                e.design,
                money(e.total_cost),
                e.reason
            ));
        }
    }
    out.push_str(&format!(
        "\n{} integer programs solved\n",
        p.programs_solved
    ));
    out
}

/// One line per purchase of a multi-count `planner purchase`: the chosen
/// design and the runner-up, their totals and cost per Gbps of bisection,
/// and which is cheaper per Gbps.
pub fn render_purchase_summary(purchases: &[&Purchase]) -> String {
    let cur = purchases.first().map_or("", |p| p.currency.as_str());
    let floor = purchases.first().map_or(0.0, |p| p.min_bisection);
    let mut t = Table::new([
        "GPUs",
        "chosen",
        "total",
        "per Gbps",
        "runner-up",
        "total",
        "per Gbps",
        "cheaper per Gbps",
    ])
    .right(&[0, 2, 3, 5, 6]);
    for p in purchases {
        let c = &p.chosen;
        let (r_design, r_total, r_gbps, cheaper) = match &p.runner_up {
            Some(r) => {
                let d = &r.design;
                let cheaper = cheaper_per_gbps(c, d);
                (
                    d.design.clone(),
                    money(d.total_cost),
                    money(d.cost_per_bisection_gbps),
                    cheaper.topology.as_str(),
                )
            }
            None => (
                "none".to_string(),
                "-".into(),
                "-".into(),
                c.topology.as_str(),
            ),
        };
        t.row([
            c.gpus.to_string(),
            c.design.clone(),
            money(c.total_cost),
            money(c.cost_per_bisection_gbps),
            r_design,
            r_total,
            r_gbps,
            cheaper.to_string(),
        ]);
    }
    format!(
        "Summary ({cur}; bisection floor {}% of full):\n\n{}",
        percent(floor),
        t.render()
    )
}

/// The design with the lower cost per Gbps of bisection; the chosen one
/// on a tie. One rule for the report and the summary.
fn cheaper_per_gbps<'a>(chosen: &'a Design, other: &'a Design) -> &'a Design {
    if chosen.cost_per_bisection_gbps <= other.cost_per_bisection_gbps {
        chosen
    } else {
        other
    }
}

/// The floor in words, with the size it is held at.
fn floor_words(floor: f64, room: u64) -> String {
    if floor > 0.0 {
        format!(
            "bisection floor: {}% of full bisection with {room} sub-nodes; designs below it are not considered",
            percent(floor)
        )
    } else {
        "no bisection floor: designs of any bisection are considered".to_string()
    }
}

fn to_bom(d: &Design) -> Bom {
    Bom {
        parts: d
            .parts
            .iter()
            .map(|p| crate::cost::bom::BomLine {
                part: p.part.clone(),
                kind: p.kind,
                count: p.count,
                unit_price: p.unit_price,
                watts: 0.0,
            })
            .collect(),
        capex: d.capex,
        energy_cost: d.energy_cost,
        total_cost: d.total_cost,
    }
}
