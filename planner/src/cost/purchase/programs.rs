//! The integer programs of a purchase: the cheapest leaf-spine and BiGraph per switch model, solved with `microlp`.

use good_lp::{
    Constraint, Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
    WithInitialSolution, microlp, variable,
};

use super::{Binding, Design, Fixed, Request, Shape, finish, fmt_ratio};
use crate::cost::catalog::{Catalog, SwitchModel};
use crate::error::{Error, Result};
use crate::metrics::{CutShape, bisection_gbps, bisection_ratio};
use crate::plan::Topology;

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
            return Err(Error::failed(format!("solving the {what} program"), e));
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

/// The cheapest leaf-spine with leaves `l` and spines `s`; with `rails`
/// above 1, the cheapest rail-optimized fabric of servers with that many
/// NICs: its leaves are rail switches, `rails` per group of servers, so
/// the leaf count is a multiple of `rails` (an integer `groups` per shape,
/// `leaves = rails * groups`) and each carries one NIC of every server of
/// its group.
///
/// One design per entry of `planes`: 1 is the fabric itself, 2 its HPN
/// form (rails only): two such fabrics, one per plane, every GPU's NIC
/// with a port in each. The cheapest HPN is the cheapest plane twice, so
/// both come from the one program.
#[allow(clippy::too_many_arguments)]
pub(super) fn leaf_spine(
    catalog: &Catalog,
    req: &Request,
    g2: u64,
    l: &SwitchModel,
    s: &SwitchModel,
    rails: u64,
    planes: &[u64],
    fixed: &Fixed<'_>,
    solved: &mut usize,
) -> Result<Vec<Design>> {
    let r = req.oversubscription;
    // A leaf with d downlinks and u uplinks gives at most u/d of full
    // bisection: the floor caps d/u as the oversubscription does.
    let most = if req.min_bisection > 0.0 {
        r.min(1.0 / req.min_bisection)
    } else {
        r
    };
    let pl = u64::from(l.ports);
    let ps = u64::from(s.ports);
    let rails = rails.max(1);
    // The fewest leaves of `d` sub-nodes each: with rails, `rails` rail
    // switches per group of `d` servers.
    let fewest = |d: u64| rails * g2.div_ceil(rails).div_ceil(d);
    // Leaf shapes (d down, u up), the most downlinks for each u; with at
    // most ps leaves, d must reach g2 / ps.
    let mut shapes: Vec<(u64, u64)> = Vec::new();
    for u in 1..pl {
        let d = (pl - u).min((most * u as f64 + 1e-9).floor() as u64);
        if d == 0 || shapes.last().is_some_and(|&(pd, _)| pd >= d) {
            continue;
        }
        // The fewest leaves, and the spines they need, must fit.
        let need = fewest(d);
        if need > ps || (need * u).div_ceil(ps) > u {
            continue;
        }
        shapes.push((d, u));
    }
    if shapes.is_empty() {
        return Ok(Vec::new());
    }
    let leaf_cost = catalog.tco(l.price, l.watts);
    let spine_cost = catalog.tco(s.price, s.watts);
    // A shape's cheapest fabric has the fewest leaves and the spines they
    // need (more leaves only add leaves and uplinks), so only the shapes
    // tied for the cheapest can win: the program gets those alone, which
    // keeps the work linear in the port count.
    let alone = |&(d, u): &(u64, u64)| {
        let n = fewest(d);
        let sp = (n * u).div_ceil(ps).max(1);
        n as f64 * (leaf_cost + u as f64 * fixed.optical_tco) + sp as f64 * spine_cost
    };
    keep_cheapest(&mut shapes, alone);
    // The best shape with the fewest leaves starts the search, so that
    // branch and bound prunes from the first node.
    let start = (0..shapes.len())
        .map(|i| {
            let (d, u) = shapes[i];
            let n = fewest(d);
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
    let groups: Vec<_> = if rails > 1 {
        shapes
            .iter()
            .map(|_| vars.add(variable().integer().min(0).max(ps as f64)))
            .collect()
    } else {
        Vec::new()
    };
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
    // Every server whole: with rails, `rails` sub-nodes per server.
    let room = rails * g2.div_ceil(rails);
    let mut constraints = vec![
        one.eq(1.0),
        cap.geq(room as f64),
        uplinks.leq(Expression::from(spines) * ps as f64),
        Expression::from(spines).leq(max_u),
    ];
    let mut initial = vec![(spines, start.2 as f64)];
    // Whole groups: a rail switch per rail in each, every server of a
    // group on all of them (`d` servers per group at most).
    for (i, &g) in groups.iter().enumerate() {
        constraints.push((leaves[i] - g * rails as f64).eq(0.0));
        let on = i == start.0;
        initial.push((g, if on { (start.1 / rails) as f64 } else { 0.0 }));
    }
    for (i, &(d, _)) in shapes.iter().enumerate() {
        // A chosen shape has at least the leaves it needs alone: this keeps
        // the relaxation close to the integer optimum.
        let need = fewest(d) as f64;
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
        return Ok(Vec::new());
    };
    let (d, u) = shapes[pick];
    let n_leaves = values[1 + pick].round() as u64;
    let n_spines = values[0].round() as u64;
    // One leaf needs no spine: the leaf model alone, as one switch (which
    // `purchase` offers for every model with the ports), costs less and
    // is what `design` builds for it.
    if n_leaves == 1 && rails == 1 {
        return Ok(Vec::new());
    }
    let mut binding = Vec::new();
    if n_leaves * d == room {
        binding.push(Binding {
            constraint: "capacity".into(),
            detail: format!("{n_leaves} leaves x {d} sub-nodes = {room} sub-nodes"),
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
    let (kind, leaf) = if rails > 1 {
        (
            format!(
                "rail-optimized {} rails x {} groups",
                rails,
                n_leaves / rails
            ),
            ("rail switch", "rail switches"),
        )
    } else {
        ("leaf-spine".to_string(), ("leaf", "leaves"))
    };
    let (leaf, leaves_word) = leaf;
    let design = if l.name == s.name {
        format!(
            "{kind} {}:1: {n_leaves} {leaves_word} + {n_spines} spines of {}, {d} sub-nodes and {u} uplinks per {leaf}",
            fmt_ratio(ratio.max(1.0)),
            l.name
        )
    } else {
        format!(
            "{kind} {}:1: {n_leaves} x {} {leaves_word} + {n_spines} x {} spines, {d} sub-nodes and {u} uplinks per {leaf}",
            fmt_ratio(ratio.max(1.0)),
            l.name,
            s.name
        )
    };
    let mut out = Vec::new();
    for &k in planes {
        let hpn = k == 2 && rails > 1;
        let switches: Vec<(&SwitchModel, u64)> = if l.name == s.name {
            vec![(l, k * (n_leaves + n_spines))]
        } else {
            vec![(l, k * n_leaves), (s, k * n_spines)]
        };
        let (leaves, spines) = (n_leaves as usize, n_spines as usize);
        let links_per_leaf_spine = u as f64 / n_spines.max(1) as f64;
        out.push(finish(
            catalog,
            req,
            match (hpn, rails > 1) {
                (true, _) => Topology::Hpn,
                (false, true) => Topology::RailOptimized,
                (false, false) => Topology::FatTree,
            },
            if hpn {
                format!(
                    "HPN 2 planes of {}, each GPU's NIC with a port in both",
                    design.replacen("rail-optimized ", "", 1)
                )
            } else {
                design.clone()
            },
            &switches,
            k * n_leaves * u,
            &if rails > 1 {
                fixed.with_ports(k).on_rails()
            } else {
                fixed.with_ports(k)
            },
            n_leaves * d,
            l.gbps,
            if hpn {
                CutShape::DualPlane {
                    leaves,
                    spines,
                    links_per_leaf_spine,
                }
            } else {
                CutShape::LeafSpine {
                    leaves,
                    spines,
                    links_per_leaf_spine,
                }
            },
            binding.clone(),
            Shape::LeafSpine {
                leaves: n_leaves,
                spines: n_spines,
                down: d,
                up: u,
                leaf_ports: l.ports,
                spine_ports: s.ports,
                rails,
                planes: k,
            },
        ));
    }
    Ok(out)
}

/// The cheapest BiGraph of switch model `s` split into `v` virtual
/// switches.
pub(super) fn bigraph(
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
        // The bisection floor: a BiGraph's least cut is N^2/8 links
        // whatever M, so it depends on the part size alone.
        .filter(|&(h, _)| {
            let shape = CutShape::BiGraph {
                upper: h as usize,
                lower: h as usize,
            };
            let room = g2 as usize;
            bisection_ratio(bisection_gbps(shape, room, 1.0, 1.0), room, 1.0, 1)
                >= req.min_bisection - 1e-9
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
        Shape::BiGraph {
            m: mm,
            n,
            ports: pv as u32,
            split: u64::from(v),
        },
    )))
}

/// Keeps the shapes whose cost on their own is the least (ties kept, in
/// their order), so that the program chooses among those alone.
fn keep_cheapest<T>(shapes: &mut Vec<T>, cost: impl Fn(&T) -> f64) {
    let best = shapes.iter().map(&cost).fold(f64::INFINITY, f64::min);
    shapes.retain(|s| cost(s) <= best + 1e-6 * best.abs().max(1.0));
}
