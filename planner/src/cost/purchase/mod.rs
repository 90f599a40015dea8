//! Purchase planning (`planner purchase`): the cheapest fabric for G GPUs
//! over a parts catalog, as integer programs solved with `good_lp` and its
//! pure-Rust `microlp` solver.
//!
//! # Formulation
//! The port and capacity constraints of a BiGraph (`2 M h >= G2` with
//! `h = N/2` switches per part) and of a leaf-spine (`leaves * d >= G2`)
//! are products of two unknowns. They become linear once the shape is
//! fixed, so the search enumerates shapes and solves one small program per
//! shape:
//!
//! - **BiGraph**, one program per switch model and virtual-switch split
//!   `v`: a binary `w_h` picks the part size `h` among those that can reach
//!   G2 sub-nodes, an integer `m_h <= cap_h * w_h` is M for that `h`
//!   (`cap_h = min(R h, P/v - h)`: M <= N/2 times the allowed
//!   oversubscription R, and M + N/2 ports per virtual switch), and an
//!   integer `phys` counts physical switches (`v * phys >= 2h`). The cost
//!   is the switches plus one optical link per upper-lower pair (`h^2`,
//!   a constant per `w_h`).
//! - **Leaf-spine**, one program per leaf and spine model of the same
//!   speed: a binary `w_d` picks the leaf's downlinks `d` (with `u` uplinks,
//!   `d <= R u`, `d + u <= ports`), integers `l_d <= spine ports * w_d` count
//!   leaves and `s` spines, with `sum d l_d >= G2`, `sum u l_d <= s * spine
//!   ports` and `s <= u` (every leaf reaches every spine).
//! - **One switch**, when a model has G2 ports: no program is needed.
//!
//! NICs, sub-node cables, GPUs and servers depend only on G, the port
//! speed and the topology, so they are added to each shape's cost as a
//! constant: a DAC per GPU to a switch in its rack (BiGraph, fat-tree),
//! the optical link per NIC port to a rail switch, which stands in none
//! of its servers' racks (rail-optimized, HPN; docs/cost.md "Cable
//! media"). The budget
//! is checked on the optimum: a design within it exists exactly when the
//! cheapest one is within it, so it is not a constraint of the programs.

use serde::Serialize;

use super::bom::{Bom, BomBuilder, money};
use super::catalog::{CableModel, Catalog, OpticalLink, SwitchModel};
use crate::error::{Error, Result};
use crate::metrics::{CutShape, bisection_gbps, bisection_ratio};
use crate::plan::Topology;

mod failures;
mod programs;
mod render;

pub(crate) use failures::Shape;
pub use failures::{Excluded, FailureRule};
use programs::{bigraph, leaf_spine};
pub use render::{render_purchase, render_purchase_summary};

/// Which topologies to consider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// BiGraph only.
    BiGraph,
    /// Fat-tree (one switch or leaf-spine) only.
    FatTree,
    /// Rail-optimized only (needs a catalog server: its GPUs are the
    /// rails).
    RailOptimized,
    /// HPN only: two rail-optimized planes, every GPU's NIC with a port
    /// in each (needs a catalog server, as rail-optimized does).
    Hpn,
    /// Every topology; the runner-up is the cheapest design of the other
    /// family (BiGraph against the leaf-spines: fat-tree, rail-optimized
    /// and HPN).
    Any,
}

/// What to buy for.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// GPUs (sub-nodes) to build now.
    pub gpus: u64,
    /// Sub-nodes the fabric must have room for (at least `gpus`).
    pub growth: Option<u64>,
    /// Topologies to consider.
    pub topology: Want,
    /// Most the design may cost (its total, energy included).
    pub budget: Option<f64>,
    /// Allowed oversubscription R (1 = non-blocking): BiGraph M <= R N/2,
    /// leaf downlinks <= R uplinks.
    pub oversubscription: f64,
    /// The least bisection a design may have, as a share of full
    /// bisection (1 = 100 %, 0 = no floor), with the fabric holding
    /// `growth` sub-nodes: [`crate::metrics::bisection_ratio`].
    pub min_bisection: f64,
    /// Prove each candidate's single failures and exclude those the rule
    /// refuses (`--failures`); `None`: failures are not weighed.
    pub failures: Option<FailureRule>,
}

/// A constraint the chosen design meets with no slack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    /// Which constraint.
    pub constraint: String,
    /// Its figures at the optimum.
    pub detail: String,
}

/// One design with its bill of materials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Design {
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The shape (`BiGraph 16x32 on 16 x sw-32x100 split in 2`).
    pub design: String,
    /// Total cost: capex plus energy; the sum of `count * unit_price`.
    pub total_cost: f64,
    /// The bill of materials.
    pub parts: Vec<BomLine>,
    /// Price of the parts.
    pub capex: f64,
    /// Energy over the catalog's years.
    pub energy_cost: f64,
    /// GPUs built now.
    pub gpus: u64,
    /// Sub-nodes the fabric has room for.
    pub capacity: u64,
    /// Physical switches.
    pub switches: u64,
    /// Port speed in Gbps.
    pub gbps: u32,
    /// Bisection bandwidth of the fabric with all G GPUs, in Gbps.
    pub bisection_gbps: f64,
    /// That bisection as a share of full bisection (1 = 100 %).
    pub bisection_ratio: f64,
    /// Total cost over GPUs.
    pub cost_per_gpu: f64,
    /// Total cost over the bisection bandwidth.
    pub cost_per_bisection_gbps: f64,
    /// What its parts draw, in watts (the catalog's watts, as `planner
    /// cost` sums them): purchase places no racks, so rack limits are held
    /// by `planner design --catalog` on the plan.
    pub power_watts: f64,
    /// Its worst single failure, proven on its plan (`--failures`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_failure: Option<crate::failures::WorstFailure>,
    /// Why its failures could not be proven (`--failures`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures_not_proven: Option<String>,
    #[serde(skip)]
    binding: Vec<Binding>,
    /// The fabric, for building its plan.
    #[serde(skip)]
    shape: Shape,
    /// The share of full bisection with `growth` sub-nodes, which the
    /// floor is held against.
    #[serde(skip)]
    ratio_at_room: f64,
}

/// One bill-of-materials line, as the JSON contract names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BomLine {
    /// Catalog name.
    pub part: String,
    /// `switch`, `nic`, ...
    pub kind: &'static str,
    /// How many.
    pub count: u64,
    /// Price of one.
    pub unit_price: f64,
}

/// The runner-up and how much more it costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunnerUp {
    /// The design.
    #[serde(flatten)]
    pub design: Design,
    /// Its total cost minus the chosen design's.
    pub cost_difference: f64,
}

/// The result of `planner purchase`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Purchase {
    /// The cheapest design.
    pub chosen: Design,
    /// The cheapest design of the other topology (with `any`), else the
    /// next cheapest shape.
    pub runner_up: Option<RunnerUp>,
    /// Constraints the chosen design meets with no slack.
    pub binding_constraints: Vec<Binding>,
    /// Currency of the costs.
    pub currency: String,
    /// The bisection floor every design meets, as a share of full
    /// bisection (`--min-bisection`).
    pub min_bisection: f64,
    /// Integer programs solved.
    pub programs_solved: usize,
    /// The most sub-nodes one failure may cut off (`--max-failure-loss`),
    /// when failures are weighed without that limit: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_failure_loss: Option<u64>,
    /// Candidates cheaper than the chosen design (or than the runner-up)
    /// that the failure rule excluded, cheapest first (`--failures`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    /// True when failures were weighed (`--failures`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failures_weighed: bool,
}

/// Costs of the parts every design of one port speed needs for G GPUs.
#[derive(Clone)]
struct Fixed<'c> {
    /// NICs, GPUs and servers.
    parts: Vec<(&'static str, String, u64, f64, f64)>,
    /// GPUs: one NIC each, and a cable per NIC port.
    gpus: u64,
    /// NIC ports per GPU, each cabled to its switch: 1, or 2 for HPN.
    ports: u64,
    /// The cable from a server to a switch in its rack.
    dac: &'c CableModel,
    /// True when the switches the servers are cabled to are not in their
    /// racks (rail switches, HPN's ToRs): each server cable is then the
    /// optical link between racks, as between switches.
    across_racks: bool,
    /// GPUs (one NIC each) of the catalog server the design buys: the
    /// rails of a rail-optimized fabric; `None` without servers.
    rails: Option<u64>,
    optical_tco: f64,
    optical: OpticalLink<'c>,
}

impl Fixed<'_> {
    /// The parts with `ports` NIC ports per GPU: HPN's dual-port NICs
    /// are priced as two of the catalog's NICs at the port speed (two
    /// network ports), each with its cable to its ToR.
    fn with_ports(&self, ports: u64) -> Self {
        let mut f = self.clone();
        for (kind, _, n, _, _) in &mut f.parts {
            if *kind == "nic" {
                *n *= ports;
            }
        }
        f.ports *= ports;
        f
    }

    /// The parts of a fabric whose servers are cabled to rail switches:
    /// a rail switch takes one NIC of every server of its group, so it
    /// stands in no server's rack and every server cable runs between
    /// racks (the optical link, not a DAC).
    fn on_rails(mut self) -> Self {
        self.across_racks = true;
        self
    }

    /// Adds the server cables, one per NIC port.
    fn add_server_cables(&self, b: &mut BomBuilder) {
        let count = self.gpus * self.ports;
        if self.across_racks {
            b.add_optical(&self.optical, count);
        } else {
            b.add(
                "cable",
                &self.dac.name,
                count,
                self.dac.price,
                self.dac.watts,
            );
        }
    }
}

/// Plans the purchase.
pub fn purchase(catalog: &Catalog, req: &Request) -> Result<Purchase> {
    if req.gpus == 0 {
        return Err(Error::parameter("gpus", "give 1 or more GPUs"));
    }
    let g2 = req.growth.unwrap_or(req.gpus);
    if g2 < req.gpus {
        return Err(Error::parameter(
            "growth",
            format!(
                "{g2} is less than the {} GPUs to buy; give the size to grow to",
                req.gpus
            ),
        ));
    }
    let r = req.oversubscription;
    if !(r.is_finite() && r >= 1.0) {
        return Err(Error::parameter(
            "allow-oversubscription",
            format!("{r} is not a ratio of 1 or more (3 means 3:1)"),
        ));
    }
    let floor = req.min_bisection;
    if !(0.0..=1.0).contains(&floor) {
        return Err(Error::parameter(
            "min-bisection",
            format!(
                "{}% is not a share of full bisection; give 0% to 100%",
                percent(floor)
            ),
        ));
    }
    let mut designs: Vec<Design> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut programs = 0;
    let mut speeds: Vec<u32> = catalog.switches.iter().map(|s| s.gbps).collect();
    speeds.sort_unstable();
    speeds.dedup();
    for &gbps in &speeds {
        let Some(fixed) = fixed_parts(catalog, req.gpus, gbps, &mut reasons) else {
            continue;
        };
        let models: Vec<&SwitchModel> =
            catalog.switches.iter().filter(|s| s.gbps == gbps).collect();
        if matches!(req.topology, Want::FatTree | Want::Any) {
            for s in &models {
                if u64::from(s.ports) >= g2 {
                    designs.push(single_switch(catalog, req, g2, s, &fixed));
                }
            }
            for l in &models {
                for s in &models {
                    designs.extend(leaf_spine(
                        catalog,
                        req,
                        g2,
                        l,
                        s,
                        1,
                        &[1],
                        &fixed,
                        &mut programs,
                    )?);
                }
            }
        }
        if matches!(req.topology, Want::RailOptimized | Want::Hpn | Want::Any) {
            let planes: &[u64] = match req.topology {
                Want::RailOptimized => &[1],
                Want::Hpn => &[2],
                _ => &[1, 2],
            };
            match fixed.rails.filter(|&r| r > 1) {
                Some(rails) => {
                    for l in &models {
                        for s in &models {
                            designs.extend(leaf_spine(
                                catalog,
                                req,
                                g2,
                                l,
                                s,
                                rails,
                                planes,
                                &fixed,
                                &mut programs,
                            )?);
                        }
                    }
                }
                None if matches!(req.topology, Want::RailOptimized | Want::Hpn) => reasons.push(
                    format!(
                        "a{} fabric needs a catalog server with more than one GPU (its GPUs are the rails)",
                        if req.topology == Want::Hpn {
                            "n HPN"
                        } else {
                            " rail-optimized"
                        }
                    ),
                ),
                None => {}
            }
        }
        if matches!(req.topology, Want::BiGraph | Want::Any) {
            for s in &models {
                let mut splits = vec![1];
                splits.extend((2..=s.split).step_by(2));
                for v in splits {
                    if let Some(d) = bigraph(catalog, req, g2, s, v, &fixed, &mut programs)? {
                        designs.push(d);
                    }
                }
            }
        }
    }
    let topology_name = match req.topology {
        Want::BiGraph => "BiGraph",
        Want::FatTree => "fat-tree",
        Want::RailOptimized => "rail-optimized",
        Want::Hpn => "HPN",
        Want::Any => "BiGraph, fat-tree, rail-optimized or HPN",
    };
    // The floor, held on every design with the fabric full; the programs
    // only offered shapes that meet it, so this drops nothing they
    // could have replaced.
    designs.retain(|d| d.ratio_at_room >= floor - 1e-9);
    let unfloored = || {
        let without = Request {
            min_bisection: 0.0,
            budget: None,
            ..req.clone()
        };
        purchase(catalog, &without).ok()
    };
    if designs.is_empty()
        && floor > 0.0
        && let Some(unfloored) = unfloored()
    {
        let best = &unfloored.chosen;
        return Err(Error::Infeasible {
            input: catalog.name.clone(),
            topology: format!("{topology_name} for {g2} sub-nodes"),
            reason: format!(
                "no design reaches the bisection floor of {}% of full; the cheapest design without it, {} ({}), has {}% with {g2} sub-nodes",
                percent(floor),
                best.design,
                best.topology.as_str(),
                percent(best.ratio_at_room)
            ),
            fix: "lower the bisection floor, allow other topologies, or add switch models with more ports".into(),
        });
    }
    if designs.is_empty() {
        reasons.dedup();
        let capacity = capacity_reason(catalog, req, g2);
        let fix = if capacity.is_some() {
            "add a switch model with more ports, allow oversubscription, or buy or grow to fewer GPUs"
        } else {
            "add the missing parts to the catalog"
        };
        let mut all: Vec<String> = capacity.into_iter().collect();
        all.extend(reasons);
        if all.is_empty() {
            all.push("no switch model and speed fits every constraint".into());
        }
        let reason = all.join("; ");
        return Err(Error::Infeasible {
            input: catalog.name.clone(),
            topology: format!("{topology_name} for {g2} sub-nodes"),
            reason,
            fix: fix.into(),
        });
    }
    designs.sort_by(|a, b| {
        a.total_cost
            .total_cmp(&b.total_cost)
            .then_with(|| a.switches.cmp(&b.switches))
            .then_with(|| a.design.cmp(&b.design))
    });
    if let Some(budget) = req.budget {
        let cheapest = designs[0].total_cost;
        designs.retain(|d| d.total_cost <= budget + 1e-6);
        if designs.is_empty() {
            return Err(Error::Infeasible {
                input: catalog.name.clone(),
                topology: format!("{topology_name} for {g2} sub-nodes"),
                reason: format!(
                    "the budget of {} {cur} cannot be met: the cheapest design costs {} {cur}",
                    money(budget),
                    money(cheapest),
                    cur = catalog.currency
                ),
                fix: "raise the budget, buy or grow to fewer GPUs, or add cheaper parts".into(),
            });
        }
    }
    let mut weigh = Weigh::new(designs, req.failures.as_ref());
    let Some(c) = weigh.first(|_| true) else {
        return Err(Error::Infeasible {
            input: catalog.name.clone(),
            topology: format!("{topology_name} for {g2} sub-nodes"),
            reason: format!(
                "every design is excluded by its single failures: {}",
                weigh.reasons()
            ),
            fix: "allow more sub-nodes per failure (max-failure-loss), allow other topologies, or add switch models".into(),
        });
    };
    let tiered = weigh.designs[c].topology.is_tiered();
    // The other family: a BiGraph beside a leaf-spine (fat-tree or
    // rail-optimized, the same switches cabled another way), and the
    // reverse.
    let runner = match req.topology {
        Want::Any => weigh
            .first(|d| d.1 != c && d.0.topology.is_tiered() != tiered)
            .or_else(|| weigh.first(|d| d.1 != c)),
        _ => weigh.first(|d| d.1 != c),
    };
    let (chosen, runner, excluded) = weigh.finish(c, runner);
    let runner_up = runner.map(|d| RunnerUp {
        cost_difference: super::bom::cents(d.total_cost - chosen.total_cost),
        design: d,
    });
    let mut binding = chosen.binding.clone();
    // Full bisection cannot be exceeded, so a 100 % floor never has
    // slack: it binds only below that.
    if floor > 0.0 && floor < 1.0 && (chosen.ratio_at_room - floor).abs() < 1e-9 {
        binding.push(Binding {
            constraint: "bisection floor".into(),
            detail: format!(
                "{}% of full bisection with {g2} sub-nodes, the floor",
                percent(floor)
            ),
        });
    }
    if let Some(budget) = req.budget
        && (budget - chosen.total_cost).abs() < 0.5
    {
        binding.push(Binding {
            constraint: "budget".into(),
            detail: format!("{} of {}", money(chosen.total_cost), money(budget)),
        });
    }
    Ok(Purchase {
        chosen,
        runner_up,
        binding_constraints: binding,
        currency: catalog.currency.clone(),
        min_bisection: floor,
        programs_solved: programs,
        max_failure_loss: req.failures.as_ref().and_then(|f| f.max_sub_nodes_lost),
        excluded,
        failures_weighed: req.failures.is_some(),
    })
}

/// The candidates in cost order, each proven against the failure rule
/// the first time it is considered (`--failures`), so only the designs
/// that could be chosen are proven.
struct Weigh<'r> {
    designs: Vec<Design>,
    rule: Option<&'r FailureRule>,
    /// Per candidate: `None` not yet proven, else why the rule excludes
    /// it (`Some(None)`: it passes).
    verdicts: Vec<Option<Option<String>>>,
}

impl<'r> Weigh<'r> {
    fn new(designs: Vec<Design>, rule: Option<&'r FailureRule>) -> Self {
        let verdicts = vec![None; designs.len()];
        Self {
            designs,
            rule,
            verdicts,
        }
    }

    /// The cheapest candidate `keep` (given it and its index) admits that
    /// the failure rule passes.
    fn first(&mut self, keep: impl Fn((&Design, usize)) -> bool) -> Option<usize> {
        for i in 0..self.designs.len() {
            if !keep((&self.designs[i], i)) {
                continue;
            }
            let Some(rule) = self.rule else {
                return Some(i);
            };
            if self.verdicts[i].is_none() {
                let d = &mut self.designs[i];
                let verdict = match failures::worst_of(&d.shape, d.gbps) {
                    Ok(w) => {
                        let why = failures::breaks(rule, &w);
                        d.worst_failure = Some(w);
                        why
                    }
                    Err(why) => {
                        d.failures_not_proven = Some(why.clone());
                        Some(format!("its failures could not be proven: {why}"))
                    }
                };
                self.verdicts[i] = Some(verdict);
            }
            if matches!(self.verdicts[i], Some(None)) {
                return Some(i);
            }
        }
        None
    }

    /// Every exclusion so far, `design: why`.
    fn reasons(&self) -> String {
        self.excluded()
            .iter()
            .map(|e| format!("{}: {}", e.design, e.reason))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn excluded(&self) -> Vec<Excluded> {
        (self.designs.iter().zip(&self.verdicts))
            .filter_map(|(d, v)| match v {
                Some(Some(why)) => Some(Excluded {
                    design: d.design.clone(),
                    total_cost: d.total_cost,
                    reason: why.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The chosen design, the runner-up and the exclusions.
    fn finish(
        self,
        chosen: usize,
        runner: Option<usize>,
    ) -> (Design, Option<Design>, Vec<Excluded>) {
        let excluded = self.excluded();
        let mut all: Vec<Option<Design>> = self.designs.into_iter().map(Some).collect();
        let chosen = all[chosen].take().expect("a candidate index");
        let runner = runner.and_then(|r| all[r].take());
        (chosen, runner, excluded)
    }
}

/// The largest sizes the catalog's switches reach, when they fall short
/// of `g2`.
fn capacity_reason(catalog: &Catalog, req: &Request, g2: u64) -> Option<String> {
    let r = req.oversubscription;
    let mut best_bg = (0u64, String::new());
    let mut best_ft = (0u64, String::new());
    for s in &catalog.switches {
        let p = u64::from(s.ports);
        if p > best_ft.0 {
            best_ft = (p, format!("one {}", s.name));
        }
        // Leaf-spine: p leaves of d down and u up ports, d <= R u.
        let u = ((p as f64) / (1.0 + r)).ceil() as u64;
        let d = p.saturating_sub(u).min((r * u as f64) as u64);
        if p * d > best_ft.0 {
            best_ft = (p * d, format!("leaf-spine of {}", s.name));
        }
        for v in [1u64, u64::from(s.split)] {
            let pv = p / v.max(1);
            for h in 1..pv {
                let cap = ((r * h as f64) as u64).min(pv - h);
                if 2 * h * cap > best_bg.0 {
                    best_bg = (2 * h * cap, format!("{} split {v}", s.name));
                }
            }
        }
    }
    let mut parts = Vec::new();
    if matches!(req.topology, Want::BiGraph | Want::Any) && best_bg.0 < g2 {
        parts.push(format!(
            "the largest BiGraph from the catalog has {} sub-nodes ({}; M <= N/2 and M + N/2 ports per switch)",
            best_bg.0, best_bg.1
        ));
    }
    if req.topology != Want::BiGraph && best_ft.0 < g2 {
        // A rail-optimized fabric is a leaf-spine whose leaves are rail
        // switches: the same largest size.
        parts.push(format!(
            "the largest fat-tree has {} sub-nodes ({}; 2 tiers at most)",
            best_ft.0, best_ft.1
        ));
    }
    (!parts.is_empty()).then(|| format!("port counts cannot be met: {} < {g2}", parts.join(", ")))
}

/// NICs, sub-node cables, GPUs and servers for `gpus` at `gbps`, and the
/// optical link between switches; `None` (with the reason) when the
/// catalog lacks a NIC or cable at that speed.
fn fixed_parts<'c>(
    catalog: &'c Catalog,
    gpus: u64,
    gbps: u32,
    reasons: &mut Vec<String>,
) -> Option<Fixed<'c>> {
    let Some(nic) = catalog.nic_for(gbps) else {
        reasons.push(format!(
            "no NIC at {gbps} Gbps for the {gbps} Gbps switches"
        ));
        return None;
    };
    let Some(dac) = catalog.dac_for(gbps) else {
        reasons.push(format!(
            "no DAC at {gbps} Gbps for the {gbps} Gbps switches"
        ));
        return None;
    };
    let Some(optical) = catalog.optical_for(gbps, catalog.between_racks_m) else {
        reasons.push(format!(
            "no optical link at {gbps} Gbps for the {gbps} Gbps switches"
        ));
        return None;
    };
    let mut parts = vec![("nic", nic.name.clone(), gpus, nic.price, nic.watts)];
    if let Some(g) = catalog.gpu() {
        parts.push(("gpu", g.name.clone(), gpus, g.price, g.watts));
    }
    if !catalog.servers.is_empty() {
        let Some((s, n)) = catalog.servers_for(gpus, None) else {
            reasons
                .push("no server has a NIC slot for every GPU slot (one NIC per GPU)".to_string());
            return None;
        };
        parts.push(("server", s.name.clone(), n, s.price, s.watts));
    }
    let optical_tco = catalog.optical_tco(&optical);
    let rails = catalog
        .servers_for(gpus, None)
        .map(|(s, _)| u64::from(s.gpus));
    Some(Fixed {
        parts,
        gpus,
        ports: 1,
        dac,
        across_racks: false,
        rails,
        optical_tco,
        optical,
    })
}

/// Builds a design's bill from switch counts and optical links.
#[allow(clippy::too_many_arguments)]
fn finish(
    catalog: &Catalog,
    req: &Request,
    topology: Topology,
    design: String,
    switches: &[(&SwitchModel, u64)],
    links: u64,
    fixed: &Fixed<'_>,
    capacity: u64,
    gbps: u32,
    shape: CutShape,
    binding: Vec<Binding>,
    fabric: Shape,
) -> Design {
    let mut b = BomBuilder::default();
    for (s, n) in switches {
        b.add("switch", &s.name, *n, s.price, s.watts);
    }
    for (kind, name, n, price, watts) in &fixed.parts {
        b.add(kind, name, *n, *price, *watts);
    }
    fixed.add_server_cables(&mut b);
    b.add_optical(&fixed.optical, links);
    let bom: Bom = b.finish(catalog);
    // The same minimum balanced cut as `design` and `compare` report.
    let link = f64::from(gbps);
    let bisection = bisection_gbps(shape, req.gpus as usize, link, link);
    let ports = u32::try_from(fixed.ports).unwrap_or(u32::MAX);
    let room = req.growth.unwrap_or(req.gpus).max(req.gpus) as usize;
    let ratio_at_room = bisection_ratio(bisection_gbps(shape, room, link, link), room, link, ports);
    let cents = super::bom::cents;
    Design {
        topology,
        design,
        total_cost: bom.total_cost,
        parts: bom
            .parts
            .iter()
            .map(|l| BomLine {
                part: l.part.clone(),
                kind: l.kind,
                count: l.count,
                unit_price: l.unit_price,
            })
            .collect(),
        capex: bom.capex,
        energy_cost: bom.energy_cost,
        gpus: req.gpus,
        capacity,
        switches: switches.iter().map(|(_, n)| n).sum(),
        gbps,
        cost_per_gpu: cents(bom.total_cost / req.gpus as f64),
        cost_per_bisection_gbps: super::bom::per_bisection_gbps(bom.total_cost, bisection),
        bisection_gbps: bisection,
        bisection_ratio: bisection_ratio(bisection, req.gpus as usize, link, ports),
        power_watts: (bom
            .parts
            .iter()
            .map(|l| l.count as f64 * l.watts)
            .sum::<f64>()
            * 10.0)
            .round()
            / 10.0,
        worst_failure: None,
        failures_not_proven: None,
        binding,
        shape: fabric,
        ratio_at_room,
    }
}

fn single_switch(
    catalog: &Catalog,
    req: &Request,
    g2: u64,
    s: &SwitchModel,
    fixed: &Fixed<'_>,
) -> Design {
    let mut binding = Vec::new();
    if u64::from(s.ports) == g2 {
        binding.push(Binding {
            constraint: "switch ports".into(),
            detail: format!("{g2} sub-nodes on {} ports", s.ports),
        });
    }
    finish(
        catalog,
        req,
        Topology::FatTree,
        format!("one switch: 1 x {}", s.name),
        &[(s, 1)],
        0,
        fixed,
        u64::from(s.ports),
        s.gbps,
        CutShape::OneSwitch,
        binding,
        Shape::OneSwitch { ports: s.ports },
    )
}

/// A share as a percentage without needless decimals: 1 is `100`, 0.5
/// is `50`, 0.125 is `12.5`.
pub(crate) fn percent(share: f64) -> String {
    fmt_ratio(share * 100.0)
}

fn fmt_ratio(r: f64) -> String {
    let s = format!("{r:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
