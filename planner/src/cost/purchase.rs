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
//! NICs, sub-node cables, GPUs and servers depend only on G and the port
//! speed, so they are added to each shape's cost as a constant. The budget
//! is checked on the optimum: a design within it exists exactly when the
//! cheapest one is within it, so it is not a constraint of the programs.

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
    WithInitialSolution, microlp, variable,
};
use serde::Serialize;

use super::bom::{Bom, BomBuilder, money, render_bom};
use super::catalog::{Catalog, OpticalLink, SwitchModel};
use crate::error::{Error, Result};
use crate::metrics::{CutShape, bisection_gbps};
use crate::plan::Topology;
use crate::text::Table;

/// Which topologies to consider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// BiGraph only.
    BiGraph,
    /// Fat-tree (one switch or leaf-spine) only.
    FatTree,
    /// Both; the runner-up is the cheapest design of the other topology.
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
    pub parts: Vec<Part>,
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
    /// Total cost over GPUs.
    pub cost_per_gpu: f64,
    /// Total cost over the bisection bandwidth.
    pub cost_per_bisection_gbps: f64,
    #[serde(skip)]
    binding: Vec<Binding>,
}

/// One bill-of-materials line, as the JSON contract names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
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
    /// Integer programs solved.
    pub programs_solved: usize,
}

/// Costs of the parts every design of one port speed needs for G GPUs.
struct Fixed<'c> {
    parts: Vec<(&'static str, String, u64, f64, f64)>,
    optical_tco: f64,
    optical: OpticalLink<'c>,
}

/// Plans the purchase.
pub fn purchase(catalog: &Catalog, req: &Request) -> Result<Purchase> {
    if req.gpus == 0 {
        return Err(Error::option("--gpus", "give 1 or more GPUs"));
    }
    let g2 = req.growth.unwrap_or(req.gpus);
    if g2 < req.gpus {
        return Err(Error::option(
            "--growth",
            format!(
                "{g2} is less than --gpus {}; give the size to grow to",
                req.gpus
            ),
        ));
    }
    let r = req.oversubscription;
    if !(r.is_finite() && r >= 1.0) {
        return Err(Error::option(
            "--allow-oversubscription",
            format!("{r} is not a ratio of 1 or more (3 means 3:1)"),
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
        if req.topology != Want::BiGraph {
            for s in &models {
                if u64::from(s.ports) >= g2 {
                    designs.push(single_switch(catalog, req, g2, s, &fixed));
                }
            }
            for l in &models {
                for s in &models {
                    if let Some(d) = leaf_spine(catalog, req, g2, l, s, &fixed, &mut programs)? {
                        designs.push(d);
                    }
                }
            }
        }
        if req.topology != Want::FatTree {
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
        Want::Any => "BiGraph or fat-tree",
    };
    if designs.is_empty() {
        reasons.dedup();
        let capacity = capacity_reason(catalog, req, g2);
        let fix = if capacity.is_some() {
            "add a switch model with more ports, allow oversubscription, or lower --gpus/--growth"
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
                fix: "raise --budget, lower --gpus or --growth, or add cheaper parts".into(),
            });
        }
    }
    let mut designs = designs.into_iter();
    let chosen = designs.next().expect("at least one design");
    let rest: Vec<Design> = designs.collect();
    let runner = match req.topology {
        Want::Any => rest
            .iter()
            .find(|d| d.topology != chosen.topology)
            .or_else(|| rest.first()),
        _ => rest.first(),
    };
    let runner_up = runner.map(|d| RunnerUp {
        cost_difference: super::bom::cents(d.total_cost - chosen.total_cost),
        design: d.clone(),
    });
    let mut binding = chosen.binding.clone();
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
        programs_solved: programs,
    })
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
    if req.topology != Want::FatTree && best_bg.0 < g2 {
        parts.push(format!(
            "the largest BiGraph from the catalog has {} sub-nodes ({}; M <= N/2 and M + N/2 ports per switch)",
            best_bg.0, best_bg.1
        ));
    }
    if req.topology != Want::BiGraph && best_ft.0 < g2 {
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
    let Some(optical) = catalog.optical_for(gbps) else {
        reasons.push(format!(
            "no optical link at {gbps} Gbps for the {gbps} Gbps switches"
        ));
        return None;
    };
    let mut parts = vec![
        ("nic", nic.name.clone(), gpus, nic.price, nic.watts),
        ("cable", dac.name.clone(), gpus, dac.price, dac.watts),
    ];
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
    Some(Fixed {
        parts,
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
) -> Design {
    let mut b = BomBuilder::default();
    for (s, n) in switches {
        b.add("switch", &s.name, *n, s.price, s.watts);
    }
    for (kind, name, n, price, watts) in &fixed.parts {
        b.add(kind, name, *n, *price, *watts);
    }
    b.add_optical(&fixed.optical, links);
    let bom: Bom = b.finish(catalog);
    // The same minimum balanced cut as `design` and `compare` report.
    let link = f64::from(gbps);
    let bisection = bisection_gbps(shape, req.gpus as usize, link, link);
    let cents = super::bom::cents;
    Design {
        topology,
        design,
        total_cost: bom.total_cost,
        parts: bom
            .parts
            .iter()
            .map(|l| Part {
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
        cost_per_bisection_gbps: cents(bom.total_cost / bisection),
        bisection_gbps: bisection,
        binding,
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
    )
}

/// Solves a program that picks one shape with the binaries `w`, starting
/// from `initial`; returns the picked shape and the values of `read`, or
/// `None` when it is infeasible.
#[allow(clippy::too_many_arguments)]
fn solve_choice(
    vars: ProblemVariables,
    objective: Expression,
    constraints: Vec<Constraint>,
    initial: Vec<(Variable, f64)>,
    w: &[Variable],
    read: &[Variable],
    what: &str,
    solved: &mut usize,
) -> Result<Option<(usize, Vec<f64>)>> {
    let mut model = vars.minimise(objective).using(microlp);
    for c in constraints {
        model.add_constraint(c);
    }
    let model = model.with_initial_solution(initial);
    *solved += 1;
    let solution = match model.solve() {
        Ok(s) => s,
        Err(ResolutionError::Infeasible) => return Ok(None),
        Err(e) => {
            return Err(Error::Internal(format!(
                "the {what} program did not solve: {e}"
            )));
        }
    };
    let pick = (0..w.len())
        .max_by(|&a, &b| solution.value(w[a]).total_cmp(&solution.value(w[b])))
        .unwrap_or(0);
    Ok(Some((
        pick,
        read.iter().map(|&v| solution.value(v)).collect(),
    )))
}

/// The cheapest leaf-spine with leaves `l` and spines `s`.
fn leaf_spine(
    catalog: &Catalog,
    req: &Request,
    g2: u64,
    l: &SwitchModel,
    s: &SwitchModel,
    fixed: &Fixed<'_>,
    solved: &mut usize,
) -> Result<Option<Design>> {
    let r = req.oversubscription;
    let pl = u64::from(l.ports);
    let ps = u64::from(s.ports);
    // Leaf shapes (d down, u up), the most downlinks for each u; with at
    // most ps leaves, d must reach g2 / ps.
    let mut shapes: Vec<(u64, u64)> = Vec::new();
    for u in 1..pl {
        let d = (pl - u).min((r * u as f64 + 1e-9).floor() as u64);
        if d == 0 || shapes.last().is_some_and(|&(pd, _)| pd >= d) {
            continue;
        }
        // The fewest leaves, and the spines they need, must fit.
        let need = g2.div_ceil(d);
        if need > ps || (need * u).div_ceil(ps) > u {
            continue;
        }
        shapes.push((d, u));
    }
    if shapes.is_empty() {
        return Ok(None);
    }
    let leaf_cost = catalog.tco(l.price, l.watts);
    let spine_cost = catalog.tco(s.price, s.watts);
    // A shape's cheapest fabric has the fewest leaves and the spines they
    // need (more leaves only add leaves and uplinks), so only the shapes
    // tied for the cheapest can win: the program gets those alone, which
    // keeps the work linear in the port count.
    let alone = |&(d, u): &(u64, u64)| {
        let n = g2.div_ceil(d);
        let sp = (n * u).div_ceil(ps).max(1);
        n as f64 * (leaf_cost + u as f64 * fixed.optical_tco) + sp as f64 * spine_cost
    };
    keep_cheapest(&mut shapes, alone);
    // The best shape with the fewest leaves starts the search, so that
    // branch and bound prunes from the first node.
    let start = (0..shapes.len())
        .map(|i| {
            let (d, u) = shapes[i];
            let n = g2.div_ceil(d);
            let sp = (n * u).div_ceil(ps).max(1);
            let cost =
                n as f64 * (leaf_cost + u as f64 * fixed.optical_tco) + sp as f64 * spine_cost;
            (i, n, sp, cost)
        })
        .min_by(|a, b| a.3.total_cmp(&b.3))
        .expect("at least one shape");
    let mut vars = ProblemVariables::new();
    let w: Vec<_> = shapes
        .iter()
        .map(|_| vars.add(variable().binary()))
        .collect();
    let leaves: Vec<_> = shapes
        .iter()
        .map(|_| vars.add(variable().integer().min(0).max(ps as f64)))
        .collect();
    // At most one spine per uplink of a leaf (`spines <= max_u` below);
    // not bounded by the spine's ports, which bound the leaves.
    let spines = vars.add(variable().integer().min(1).max(pl as f64));
    let mut objective = Expression::from(spines) * spine_cost;
    let mut one = Expression::from(0.0);
    let mut cap = Expression::from(0.0);
    let mut uplinks = Expression::from(0.0);
    let mut max_u = Expression::from(0.0);
    for (i, &(d, u)) in shapes.iter().enumerate() {
        objective += leaves[i] * (leaf_cost + u as f64 * fixed.optical_tco);
        one += w[i];
        cap += leaves[i] * d as f64;
        uplinks += leaves[i] * u as f64;
        max_u += w[i] * u as f64;
    }
    let mut constraints = vec![
        one.eq(1.0),
        cap.geq(g2 as f64),
        uplinks.leq(Expression::from(spines) * ps as f64),
        Expression::from(spines).leq(max_u),
    ];
    let mut initial = vec![(spines, start.2 as f64)];
    for (i, &(d, _)) in shapes.iter().enumerate() {
        // A chosen shape has at least the leaves it needs alone: this keeps
        // the relaxation close to the integer optimum.
        let need = g2.div_ceil(d) as f64;
        constraints.push((leaves[i] - w[i] * ps as f64).leq(0.0));
        constraints.push((leaves[i] - w[i] * need).geq(0.0));
        let on = i == start.0;
        initial.push((w[i], if on { 1.0 } else { 0.0 }));
        initial.push((leaves[i], if on { start.1 as f64 } else { 0.0 }));
    }
    let Some((pick, values)) = solve_choice(
        vars,
        objective,
        constraints,
        initial,
        &w,
        &std::iter::once(spines)
            .chain(leaves.iter().copied())
            .collect::<Vec<_>>(),
        "leaf-spine",
        solved,
    )?
    else {
        return Ok(None);
    };
    let (d, u) = shapes[pick];
    let n_leaves = values[1 + pick].round() as u64;
    let n_spines = values[0].round() as u64;
    let mut binding = Vec::new();
    if n_leaves * d == g2 {
        binding.push(Binding {
            constraint: "capacity".into(),
            detail: format!("{n_leaves} leaves x {d} sub-nodes = {g2} sub-nodes"),
        });
    }
    if d + u == pl {
        binding.push(Binding {
            constraint: "leaf ports".into(),
            detail: format!("{d} down + {u} up = {pl} ports of {}", l.name),
        });
    }
    if n_leaves * u == n_spines * ps {
        binding.push(Binding {
            constraint: "spine ports".into(),
            detail: format!("{n_leaves} leaves x {u} uplinks = {n_spines} spines x {ps} ports"),
        });
    }
    if d as f64 >= r * u as f64 - 1e-9 {
        binding.push(Binding {
            constraint: "oversubscription".into(),
            detail: format!("{d} down <= {r} x {u} up per leaf"),
        });
    }
    let ratio = d as f64 / u as f64;
    let design = if l.name == s.name {
        format!(
            "leaf-spine {}:1: {n_leaves} leaves + {n_spines} spines of {}, {d} sub-nodes and {u} uplinks per leaf",
            fmt_ratio(ratio.max(1.0)),
            l.name
        )
    } else {
        format!(
            "leaf-spine {}:1: {n_leaves} x {} leaves + {n_spines} x {} spines, {d} sub-nodes and {u} uplinks per leaf",
            fmt_ratio(ratio.max(1.0)),
            l.name,
            s.name
        )
    };
    let switches: Vec<(&SwitchModel, u64)> = if l.name == s.name {
        vec![(l, n_leaves + n_spines)]
    } else {
        vec![(l, n_leaves), (s, n_spines)]
    };
    Ok(Some(finish(
        catalog,
        req,
        Topology::FatTree,
        design,
        &switches,
        n_leaves * u,
        fixed,
        n_leaves * d,
        l.gbps,
        CutShape::LeafSpine {
            leaves: n_leaves as usize,
            spines: n_spines as usize,
            links_per_leaf_spine: u as f64 / n_spines.max(1) as f64,
        },
        binding,
    )))
}

/// The cheapest BiGraph of switch model `s` split into `v` virtual
/// switches.
fn bigraph(
    catalog: &Catalog,
    req: &Request,
    g2: u64,
    s: &SwitchModel,
    v: u32,
    fixed: &Fixed<'_>,
    solved: &mut usize,
) -> Result<Option<Design>> {
    let r = req.oversubscription;
    let pv = u64::from(s.ports / v);
    let v64 = u64::from(v);
    // Part sizes h = N/2 that can carry g2 sub-nodes, with their largest M.
    // Only N = 2h a power of two: HDRM (EFLOPS Algorithm 1) runs
    // congestion-free on those alone, as `planner ranks` and `simulate`
    // require.
    let mut shapes: Vec<(u64, u64)> = std::iter::successors(Some(1u64), |h| h.checked_mul(2))
        .take_while(|&h| h < pv)
        .filter_map(|h| {
            let cap = ((r * h as f64 + 1e-9).floor() as u64).min(pv - h);
            (cap >= 1 && 2 * h * cap >= g2).then_some((h, cap))
        })
        .collect();
    if shapes.is_empty() {
        return Ok(None);
    }
    // A part size's cheapest fabric is its physical switches and h^2
    // links, whatever M: only the shapes tied for the cheapest can win.
    let switch_tco = catalog.tco(s.price, s.watts);
    keep_cheapest(&mut shapes, |&(h, _)| {
        (2 * h).div_ceil(v64) as f64 * switch_tco + (h * h) as f64 * fixed.optical_tco
    });
    let mut vars = ProblemVariables::new();
    let w: Vec<_> = shapes
        .iter()
        .map(|_| vars.add(variable().binary()))
        .collect();
    let m: Vec<_> = shapes
        .iter()
        .map(|&(_, cap)| vars.add(variable().integer().min(0).max(cap as f64)))
        .collect();
    let max_phys = (2 * pv).div_ceil(v64);
    let phys = vars.add(variable().integer().min(1).max(max_phys as f64));
    let switch_cost = catalog.tco(s.price, s.watts);
    let mut objective = Expression::from(phys) * switch_cost;
    let mut one = Expression::from(0.0);
    let mut cap = Expression::from(0.0);
    let mut halves = Expression::from(0.0);
    for (i, &(h, _)) in shapes.iter().enumerate() {
        objective += w[i] * ((h * h) as f64 * fixed.optical_tco);
        one += w[i];
        cap += m[i] * (2 * h) as f64;
        halves += w[i] * (2 * h) as f64;
    }
    let mut constraints = vec![
        one.eq(1.0),
        cap.geq(g2 as f64),
        (Expression::from(phys) * v as f64).geq(halves),
    ];
    // The best part size alone starts the search, so that branch and bound
    // prunes from the first node.
    let start = (0..shapes.len())
        .map(|i| {
            let h = shapes[i].0;
            let p = (2 * h).div_ceil(v64);
            (
                i,
                p,
                p as f64 * switch_cost + (h * h) as f64 * fixed.optical_tco,
            )
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .expect("at least one shape");
    let mut initial = vec![(phys, start.1 as f64)];
    for (i, &(h, c)) in shapes.iter().enumerate() {
        // A chosen part size has at least the M it needs: this keeps the
        // relaxation close to the integer optimum.
        let need = g2.div_ceil(2 * h) as f64;
        constraints.push((m[i] - w[i] * c as f64).leq(0.0));
        constraints.push((m[i] - w[i] * need).geq(0.0));
        let on = i == start.0;
        initial.push((w[i], if on { 1.0 } else { 0.0 }));
        initial.push((m[i], if on { need } else { 0.0 }));
    }
    let Some((pick, values)) = solve_choice(
        vars,
        objective,
        constraints,
        initial,
        &w,
        &[phys],
        "BiGraph",
        solved,
    )?
    else {
        return Ok(None);
    };
    let (h, cap_h) = shapes[pick];
    // The smallest M that carries g2: the program only needs one that fits.
    let mm = g2.div_ceil(2 * h).min(cap_h);
    let n = 2 * h;
    let n_phys = values[0].round() as u64;
    let mut binding = Vec::new();
    if 2 * h * mm == g2 {
        binding.push(Binding {
            constraint: "capacity".into(),
            detail: format!("M x N = {mm} x {n} = {g2} sub-nodes"),
        });
    }
    if mm + h == pv {
        binding.push(Binding {
            constraint: "switch ports".into(),
            detail: format!("M + N/2 = {mm} + {h} = {pv} ports per virtual switch"),
        });
    }
    if mm as f64 >= r * h as f64 - 1e-9 {
        binding.push(Binding {
            constraint: if r > 1.0 {
                "oversubscription".into()
            } else {
                "M <= N/2".into()
            },
            detail: format!("M = {mm}, N/2 = {h}"),
        });
    }
    if binding.is_empty() && h > 1 {
        // No slack to spare in whole switches: say what stops N/2 - 1.
        let h1 = h - 1;
        let by_ratio = (r * h1 as f64 + 1e-9).floor() as u64;
        let (name, m1) = if by_ratio <= pv - h1 {
            (
                if r > 1.0 {
                    "oversubscription"
                } else {
                    "M <= N/2"
                },
                by_ratio,
            )
        } else {
            ("switch ports", pv - h1)
        };
        binding.push(Binding {
            constraint: name.into(),
            detail: format!(
                "with N/2 = {h1}, M could be at most {m1}: {} sub-nodes < {g2}",
                2 * h1 * m1
            ),
        });
    }
    let split = if v > 1 {
        format!(", each split into {v} virtual switches of {pv} ports")
    } else {
        String::new()
    };
    Ok(Some(finish(
        catalog,
        req,
        Topology::BiGraph,
        format!("BiGraph {mm}x{n}: {n_phys} x {}{split}", s.name),
        &[(s, n_phys)],
        h * h,
        fixed,
        n * mm,
        s.gbps,
        CutShape::BiGraph {
            upper: h as usize,
            lower: h as usize,
        },
        binding,
    )))
}

/// Keeps the shapes whose cost on their own is the least (ties kept, in
/// their order), so that the program chooses among those alone.
fn keep_cheapest<T>(shapes: &mut Vec<T>, cost: impl Fn(&T) -> f64) {
    let best = shapes.iter().map(&cost).fold(f64::INFINITY, f64::min);
    shapes.retain(|s| cost(s) <= best + 1e-6 * best.abs().max(1.0));
}

fn fmt_ratio(r: f64) -> String {
    let s = format!("{r:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

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
    let c = &p.chosen;
    out.push_str(&format!(
        "\nChosen: {} ({}), total {} {cur}\n\n",
        c.design,
        c.topology.as_str(),
        money(c.total_cost)
    ));
    out.push_str(&render_bom(&to_bom(c), cur));
    out.push_str(&format!(
        "per GPU {} {cur}; bisection {} Gbps, {} {cur} per Gbps\n",
        money(c.cost_per_gpu),
        crate::text::gbps(c.bisection_gbps),
        money(c.cost_per_bisection_gbps)
    ));
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
                "per Gbps of bisection".to_string(),
                money(c.cost_per_bisection_gbps),
                money(d.cost_per_bisection_gbps),
            ]);
            out.push('\n');
            out.push_str(&t.render());
            let cheaper = if c.cost_per_bisection_gbps <= d.cost_per_bisection_gbps {
                c
            } else {
                d
            };
            out.push_str(&format!(
                "Cheaper per Gbps of bisection bandwidth: {}\n",
                cheaper.topology.as_str()
            ));
        }
        None => out.push_str("\nRunner-up: none (no other design fits)\n"),
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
                let cheaper = if c.cost_per_bisection_gbps <= d.cost_per_bisection_gbps {
                    c
                } else {
                    d
                };
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
    format!("Summary ({cur}):\n\n{}", t.render())
}

fn to_bom(d: &Design) -> Bom {
    Bom {
        parts: d
            .parts
            .iter()
            .map(|p| super::bom::BomLine {
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
