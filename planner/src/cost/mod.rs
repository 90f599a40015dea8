//! Cost: the parts catalog, bills of materials and TCO of plans, and
//! purchase planning (EFLOPS VII-D weighs four NICs per server against the
//! aggregation layer a BiGraph saves; these modules put prices on both).
//!
//! - [`catalog`]: the catalog TOML, checked, with errors naming file, line
//!   and part;
//! - [`bom`]: the bill of materials and TCO of a plan (`planner cost`);
//! - [`power`]: where a plan's watts are drawn, per rack, against each
//!   rack's limit;
//! - [`purchase`]: the cheapest BiGraph or fat-tree for G GPUs, solved as
//!   small integer programs (`planner purchase`);
//! - [`side`]: the designs of `planner compare` priced side by side.
//!
//! Everything here is pure: parsed inputs in, figures out.

pub mod bom;
pub mod catalog;
pub mod power;
pub mod purchase;
pub mod side;
#[cfg(test)]
mod tests;

pub use bom::{
    Bom, BomLine, CableRunCost, PlanCost, cost_plan, money, render_bom, render_plan_cost,
};
pub use catalog::Catalog;
pub use power::{Draws, Power, RackPower, check_rack_power, render_power_line};
pub use purchase::{
    Excluded, FailureRule, Purchase, Request, Want, purchase, render_purchase,
    render_purchase_summary,
};
pub use side::{CostEntry, cost_comparison, render_comparison_costs};
