//! The exact model of rank placement: an integer program over the switch
//! of every rank, solved with `good_lp` and its pure-Rust `microlp`
//! solver.
//!
//! # Why switches, not sub-nodes
//!
//! A flow's inter-switch links depend only on the switches of its two
//! ranks, up to ECMP choices; the sub-nodes of one switch are
//! interchangeable. So the model places ranks on switches, and each
//! switch's ranks then take its sub-nodes in port order.
//!
//! # The model
//!
//! With S switches that have usable sub-nodes (capacity `cap[a]`), X ranks
//! and the distinct steps of the schedule (the two halving-doubling steps
//! of one distance have the same flows):
//!
//! - `y[r][a]` binary: rank r is on switch a; `sum_a y[r][a] = 1` and
//!   `sum_r y[r][a] <= cap[a]`;
//! - for every pair {u, v} of ranks that exchange in some step, `z[a][b]`
//!   in [0, 1] stands for the product `y[u][a] y[v][b]`. It is linearised
//!   as a transport: `sum_b z[a][b] = y[u][a]` and `sum_a z[a][b] =
//!   y[v][b]`; with y integral both marginals are unit vectors, which forces
//!   z to be their product, with two constraints per switch instead of
//!   three inequalities per product, and a tighter relaxation. The flow
//!   u -> v runs from a to b and the flow v -> u from b to a;
//! - for every step and ordered pair of switches, the flows between them
//!   take the route of [`Network::switch_paths`];
//! - `W` integer, between the counting lower bound and the heuristic's
//!   worst load; for every step and directed inter-switch link, the flows
//!   on it are at most W. The objective is to minimise W.
//!
//! Where ECMP offers several routes between two switches, the real route
//! depends on the hash of the flow, which the switch placement does not
//! fix. The model comes in two kinds for that ([`Kind`]):
//!
//! - **hash-free**: a pair of ranks may only sit on one switch or on two
//!   switches joined by a single route (on a BiGraph: the two parts, or a
//!   detour that has no alternative). Its tables have the same loads for
//!   every seed, so its optimum is the best such table;
//! - **relaxed**: any placement, and continuous `g[p] >= 0` split the flows
//!   between two switches over their candidate routes (`sum_p g[p]` = the
//!   flows), as if ECMP chose for the model. Every real table is one of its
//!   solutions, so its optimum is a lower bound for all tables.
//!
//! When no two switches with sub-nodes have more than one route, both are
//! the same model and its optimum is exact.
//!
//! # Symmetry
//!
//! Two switches are twins when they have the same part or tier, pod and
//! capacity, and the same usable links to every other switch: exchanging
//! them maps every placement to one with the same loads. Within a class of
//! twins, the smallest rank on each switch increases with the switch
//! (`y[r][a'] <= sum_{r' < r} y[r'][a]` for consecutive twins a, a', which
//! also leaves empty twins last). The halving-doubling steps are unchanged
//! when every rank is XORed with one constant, and a ring's when every
//! rank is rotated, so without a fold rank 0 may also be taken to sit in
//! the first class that holds any rank. A starting table is brought to
//! that form ([`Instance::canonical`]) so that the solver can use it.
//!
//! # Size
//!
//! [`super::optimize::EXACT_MAX_RANKS`] ranks on
//! [`super::optimize::EXACT_MAX_SWITCHES`] switches, ranks times switches
//! at most [`super::optimize::EXACT_MAX_PLACEMENTS`]: at most 64 binary
//! variables and under a thousand continuous ones for the products (8
//! ranks on 8 switches: 12 pairs of 64 products), plus the ECMP splits of
//! the relaxed model. On the test machine the hash-free model settles such
//! jobs in well under a second; the relaxed one, on a leaf-spine where
//! every flow between leaves is hashed, took about ten seconds for 16 ranks
//! on 4 leaves; and 16 ranks on 8 BiGraph switches whose optimum is above
//! the counting bound ran for many minutes, which is why the product is
//! limited.

use good_lp::{
    Expression, ProblemVariables, ResolutionError, Solution, SolverModel, Variable,
    WithInitialSolution, microlp, variable,
};
use rustc_hash::FxHashMap;

use super::schedule::{Schedule, Step};
use super::verify::flow_id;
use crate::error::{Error, Result};
use crate::network::Network;

/// Which model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Pairs of ranks only on one switch or on switches with one route.
    HashFree,
    /// Any placement; ECMP splits chosen by the model.
    Relaxed,
}

/// A solved model.
#[derive(Debug, Clone)]
pub(super) struct Solved {
    /// Rank -> switch position (index into [`Instance::switches`]).
    pub place: Vec<usize>,
    /// The optimal worst load.
    pub optimum: usize,
    /// Variables and constraints of the model.
    pub size: (usize, usize),
}

/// The data both models are built from.
pub(super) struct Instance<'a, 'n> {
    net: &'a Network<'n>,
    avail: &'a [Vec<usize>],
    x: usize,
    /// The switches with sub-nodes, by index into `plan.switch_list`.
    sw: Vec<usize>,
    cap: Vec<usize>,
    /// Pairs of ranks that exchange, first rank below second.
    pairs: Vec<(usize, usize)>,
    /// Per distinct step, every flow as (pair, forward): forward when it
    /// runs from the pair's first rank to its second.
    flows: Vec<Vec<(usize, bool)>>,
    /// Per ordered switch pair `a * n + b`, the routes.
    paths: Vec<Vec<Vec<usize>>>,
    /// Classes of twin switches (positions), ordered by first member.
    classes: Vec<Vec<usize>>,
    /// How ranks may be renumbered without changing any step: XOR (halving-
    /// doubling), rotation (ring), or not at all (fold).
    renumber: Renumber,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renumber {
    Xor,
    Rotate,
    Fixed,
}

impl<'a, 'n> Instance<'a, 'n> {
    /// The model's data for `schedule` on the switches with sub-nodes in
    /// `avail`.
    pub(super) fn new(
        net: &'a Network<'n>,
        avail: &'a [Vec<usize>],
        schedule: &Schedule,
    ) -> Result<Self> {
        let x = schedule.ranks;
        let sw: Vec<usize> = (0..avail.len()).filter(|&s| !avail[s].is_empty()).collect();
        let n = sw.len();
        let cap: Vec<usize> = sw.iter().map(|&s| avail[s].len()).collect();
        let mut steps: Vec<Step> = Vec::new();
        for s in &schedule.steps {
            if !steps.iter().any(|d| d.same_flows(s)) {
                steps.push(*s);
            }
        }
        let mut pair_of: FxHashMap<(usize, usize), usize> = FxHashMap::default();
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut flows: Vec<Vec<(usize, bool)>> = Vec::with_capacity(steps.len());
        for step in &steps {
            let mut here = Vec::with_capacity(step.flow_count());
            for (s, d) in step.flows() {
                if s == d {
                    continue;
                }
                let key = (s.min(d), s.max(d));
                let q = *pair_of.entry(key).or_insert_with(|| {
                    pairs.push(key);
                    pairs.len() - 1
                });
                here.push((q, s < d));
            }
            flows.push(here);
        }
        let mut paths: Vec<Vec<Vec<usize>>> = Vec::with_capacity(n * n);
        for &a in &sw {
            for &b in &sw {
                let p = net.switch_paths(a, b);
                if a != b && p.is_empty() {
                    let plan = net.plan();
                    return Err(Error::parameter(
                        "avoid",
                        format!(
                            "no route from switch {} to switch {} keeps off what is avoided; avoid fewer links, or avoid one of the two switches as well",
                            plan.switch_list[a].name, plan.switch_list[b].name
                        ),
                    ));
                }
                paths.push(p);
            }
        }
        let mut class = vec![usize::MAX; n];
        let mut classes: Vec<Vec<usize>> = Vec::new();
        for a in 0..n {
            if class[a] != usize::MAX {
                continue;
            }
            let members: Vec<usize> = (a..n)
                .filter(|&b| b == a || (class[b] == usize::MAX && twins(net, &sw, &cap, a, b)))
                .collect();
            for &b in &members {
                class[b] = classes.len();
            }
            classes.push(members);
        }
        let renumber = if schedule.fold().is_some() {
            Renumber::Fixed
        } else if schedule.steps.iter().all(|s| s.distance.is_some()) {
            Renumber::Xor
        } else {
            Renumber::Rotate
        };
        Ok(Self {
            net,
            avail,
            x,
            sw,
            cap,
            pairs,
            flows,
            paths,
            classes,
            renumber,
        })
    }

    /// Number of switches in the model.
    pub(super) fn switches(&self) -> usize {
        self.sw.len()
    }

    /// Twin classes of switches.
    pub(super) fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// True when some two switches of the model have more than one route,
    /// so that the hash-free model does not cover every table.
    pub(super) fn has_choices(&self) -> bool {
        self.paths.iter().any(|p| p.len() > 1)
    }

    /// The switch position of every rank of a table, when every rank is on
    /// a switch of the model.
    pub(super) fn place_of(&self, table: &[usize]) -> Option<Vec<usize>> {
        if table.len() != self.x {
            return None;
        }
        table
            .iter()
            .map(|&sn| {
                let s = self.net.switch_of(sn)?;
                self.sw.iter().position(|&t| t == s)
            })
            .collect()
    }

    /// A table for a placement: each switch's ranks, in rank order, on its
    /// sub-nodes in port order.
    pub(super) fn table(&self, place: &[usize]) -> Result<Vec<usize>> {
        let mut next = vec![0usize; self.sw.len()];
        let mut ranks = Vec::with_capacity(place.len());
        for &a in place {
            let subs = &self.avail[self.sw[a]];
            let Some(&sn) = subs.get(next[a]) else {
                return Err(Error::Internal(format!(
                    "the exact model put more than {} ranks on switch {}",
                    subs.len(),
                    self.net.plan().switch_list[self.sw[a]].name
                )));
            };
            next[a] += 1;
            ranks.push(sn);
        }
        Ok(ranks)
    }

    /// True when every pair of ranks that exchange sits on one switch or
    /// on two switches with a single route.
    pub(super) fn hash_free(&self, place: &[usize]) -> bool {
        let n = self.sw.len();
        self.pairs.iter().all(|&(u, v)| {
            let (a, b) = (place[u], place[v]);
            a == b || (self.paths[a * n + b].len() == 1 && self.paths[b * n + a].len() == 1)
        })
    }

    /// The placement renumbered and with twins reordered so that it meets
    /// the symmetry constraints of the model, with the same loads in the
    /// model.
    pub(super) fn canonical(&self, place: &[usize]) -> Vec<usize> {
        let x = self.x;
        let mut class_of = vec![0usize; self.sw.len()];
        for (j, members) in self.classes.iter().enumerate() {
            for &a in members {
                class_of[a] = j;
            }
        }
        let mut out = place.to_vec();
        if self.renumber != Renumber::Fixed && x > 0 {
            // The smallest rank in the first class that holds any rank
            // becomes rank 0.
            let c = (0..x).min_by_key(|&r| (class_of[place[r]], r)).unwrap_or(0);
            for (r, &a) in place.iter().enumerate() {
                let to = match self.renumber {
                    Renumber::Xor => r ^ c,
                    _ => (r + x - c) % x,
                };
                out[to] = a;
            }
        }
        // Within each class, switches by their smallest rank, empty last.
        let mut first = vec![usize::MAX; self.sw.len()];
        for (r, &a) in out.iter().enumerate() {
            first[a] = first[a].min(r);
        }
        let mut map: Vec<usize> = (0..self.sw.len()).collect();
        for members in &self.classes {
            let mut by_first = members.clone();
            by_first.sort_by_key(|&a| (first[a], a));
            for (i, &a) in by_first.iter().enumerate() {
                map[a] = members[i];
            }
        }
        out.iter().map(|&a| map[a]).collect()
    }

    /// Solves the model of `kind` with the worst load between `bound` and
    /// `upper`, started from `warm` (a placement that meets the symmetry
    /// constraints) when given. `None` when no placement of that kind has
    /// a worst load of `upper` or less.
    pub(super) fn solve(
        &self,
        kind: Kind,
        bound: usize,
        upper: usize,
        warm: Option<&[usize]>,
        seed: u64,
    ) -> Result<Option<Solved>> {
        let (x, n) = (self.x, self.sw.len());
        // The starting placement with its routes: ECMP as the real hash
        // picks it for the table the placement gives, and its worst load.
        let start = match warm {
            Some(place) if place.len() == x && (kind == Kind::Relaxed || self.hash_free(place)) => {
                Some(self.routed(place, seed)?)
            }
            _ => None,
        };
        let mut upper = upper.max(bound);
        if kind == Kind::Relaxed
            && let Some((_, _, worst)) = &start
        {
            upper = upper.max(*worst);
        }
        let allowed: Vec<bool> = (0..n * n)
            .map(|ab| {
                let (a, b) = (ab / n, ab % n);
                a == b
                    || kind == Kind::Relaxed
                    || (self.paths[ab].len() == 1 && self.paths[b * n + a].len() == 1)
            })
            .collect();

        let mut vars = ProblemVariables::new();
        let y: Vec<Vec<Variable>> = (0..x)
            .map(|_| (0..n).map(|_| vars.add(variable().binary())).collect())
            .collect();
        let z: Vec<Vec<Option<Variable>>> = (0..self.pairs.len())
            .map(|_| {
                (0..n * n)
                    .map(|ab| allowed[ab].then(|| vars.add(variable().min(0).max(1))))
                    .collect()
            })
            .collect();
        let w = vars.add(variable().integer().min(bound as f64).max(upper as f64));
        let mut split: FxHashMap<(usize, usize), Vec<Variable>> = FxHashMap::default();
        let mut split_keys: Vec<(usize, usize)> = Vec::new();
        for t in 0..self.flows.len() {
            for (ab, routes) in self.paths.iter().enumerate() {
                if ab / n != ab % n && allowed[ab] && routes.len() > 1 {
                    let g = routes.iter().map(|_| vars.add(variable().min(0))).collect();
                    split.insert((t, ab), g);
                    split_keys.push((t, ab));
                }
            }
        }
        let variables = vars.len();

        let mut constraints = Vec::new();
        for row in &y {
            let e: Expression = row.iter().copied().sum();
            constraints.push(e.eq(1));
        }
        for (a, &cap) in self.cap.iter().enumerate() {
            let e: Expression = y.iter().map(|row| row[a]).sum();
            constraints.push(e.leq(cap as f64));
        }
        for (q, &(u, v)) in self.pairs.iter().enumerate() {
            for a in 0..n {
                let out: Expression = (0..n).filter_map(|b| z[q][a * n + b]).sum();
                constraints.push(out.eq(y[u][a]));
                let into: Expression = (0..n).filter_map(|b| z[q][b * n + a]).sum();
                constraints.push(into.eq(y[v][a]));
            }
        }
        for (t, here) in self.flows.iter().enumerate() {
            // Flows per ordered switch pair.
            let mut between: Vec<Expression> = (0..n * n).map(|_| Expression::from(0)).collect();
            for &(q, forward) in here {
                for a in 0..n {
                    for b in 0..n {
                        if a == b {
                            continue;
                        }
                        if let Some(v) = z[q][a * n + b] {
                            let ab = if forward { a * n + b } else { b * n + a };
                            between[ab].add_mul(1.0, v);
                        }
                    }
                }
            }
            let mut load: FxHashMap<usize, Expression> = FxHashMap::default();
            let mut order: Vec<usize> = Vec::new();
            let mut add = |link: usize, e: &Expression| {
                load.entry(link)
                    .or_insert_with(|| {
                        order.push(link);
                        Expression::from(0)
                    })
                    .add_mul(1.0, e.clone());
            };
            for (ab, e) in between.into_iter().enumerate() {
                if ab / n == ab % n || !allowed[ab] {
                    continue;
                }
                match split.get(&(t, ab)) {
                    None => {
                        for &l in &self.paths[ab][0] {
                            add(l, &e);
                        }
                    }
                    Some(g) => {
                        let total: Expression = g.iter().copied().sum();
                        constraints.push(total.eq(e));
                        for (p, &gp) in g.iter().enumerate() {
                            let ge = Expression::from(gp);
                            for &l in &self.paths[ab][p] {
                                add(l, &ge);
                            }
                        }
                    }
                }
            }
            for l in order {
                if let Some(e) = load.remove(&l) {
                    constraints.push(e.leq(w));
                }
            }
        }
        for members in &self.classes {
            for pair in members.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                for r in 0..x {
                    let before: Expression = (0..r).map(|s| y[s][a]).sum();
                    constraints.push(Expression::from(y[r][b]).leq(before));
                }
            }
        }
        if self.renumber != Renumber::Fixed {
            for j in 1..self.classes.len() {
                let zero_here: Expression = self.classes[j].iter().map(|&a| y[0][a]).sum();
                for earlier in &self.classes[..j] {
                    let used: Expression = earlier
                        .iter()
                        .flat_map(|&a| (0..x).map(move |r| (r, a)))
                        .map(|(r, a)| y[r][a])
                        .sum();
                    constraints.push(used.leq(x as f64 - x as f64 * zero_here.clone()));
                }
            }
        }

        // The starting placement, in full: microlp ignores a partial or
        // infeasible one.
        let mut initial: Vec<(Variable, f64)> = Vec::new();
        if let Some((place, taken, worst)) = &start {
            let worst = *worst;
            if (bound..=upper).contains(&worst) {
                for (row, &at) in y.iter().zip(place.iter()) {
                    for (a, &var) in row.iter().enumerate() {
                        initial.push((var, f64::from(at == a)));
                    }
                }
                for (zq, &(u, v)) in z.iter().zip(&self.pairs) {
                    for (ab, var) in zq.iter().enumerate() {
                        if let Some(var) = *var {
                            initial.push((var, f64::from(place[u] * n + place[v] == ab)));
                        }
                    }
                }
                for key in &split_keys {
                    for (p, &g) in split[key].iter().enumerate() {
                        let n = taken.get(&(key.0, key.1, p)).copied().unwrap_or(0);
                        initial.push((g, n as f64));
                    }
                }
                initial.push((w, worst as f64));
            }
        }

        let count = constraints.len();
        let mut model = vars.minimise(w).using(microlp);
        for c in constraints {
            model.add_constraint(c);
        }
        if !initial.is_empty() {
            model = model.with_initial_solution(initial);
        }
        let solution = match model.solve() {
            Ok(s) => s,
            Err(ResolutionError::Infeasible) => return Ok(None),
            Err(e) => {
                return Err(Error::failed(
                    format!("solving the exact model ({variables} variables, {count} constraints)"),
                    e,
                ));
            }
        };
        let optimum = solution.value(w).round().max(0.0) as usize;
        let place: Vec<usize> = y
            .iter()
            .map(|row| {
                (0..n)
                    .max_by(|&a, &b| solution.value(row[a]).total_cmp(&solution.value(row[b])))
                    .unwrap_or(0)
            })
            .collect();
        Ok(Some(Solved {
            place,
            optimum,
            size: (variables, count),
        }))
    }

    /// Routes the table of a placement with the real hash: how many flows
    /// of each step take each route between two switches with several,
    /// keyed by (step, switch pair, route), and the worst load.
    #[allow(clippy::type_complexity)]
    fn routed(
        &self,
        place: &[usize],
        seed: u64,
    ) -> Result<(Vec<usize>, FxHashMap<(usize, usize, usize), usize>, usize)> {
        let n = self.sw.len();
        let table = self.table(place)?;
        let mut taken: FxHashMap<(usize, usize, usize), usize> = FxHashMap::default();
        let mut worst = 0;
        let mut load: FxHashMap<usize, usize> = FxHashMap::default();
        for (t, here) in self.flows.iter().enumerate() {
            load.clear();
            for &(q, forward) in here {
                let (u, v) = self.pairs[q];
                let (s, d) = if forward { (u, v) } else { (v, u) };
                let ab = place[s] * n + place[d];
                if place[s] == place[d] {
                    continue;
                }
                let route = self.net.route(table[s], table[d], flow_id(s, d), seed)?;
                let links = route.inter_switch();
                if self.paths[ab].len() > 1
                    && let Some(p) = self.paths[ab].iter().position(|p| p == links)
                {
                    *taken.entry((t, ab, p)).or_default() += 1;
                }
                for &l in links {
                    let e = load.entry(l).or_default();
                    *e += 1;
                    worst = worst.max(*e);
                }
            }
        }
        Ok((place.to_vec(), taken, worst))
    }
}

/// True when switches `sw[a]` and `sw[b]` can be exchanged without
/// changing any load in the model: same tier, pod and capacity, and the
/// same usable links to every other switch.
fn twins(net: &Network<'_>, sw: &[usize], cap: &[usize], a: usize, b: usize) -> bool {
    let plan = net.plan();
    let (sa, sb) = (sw[a], sw[b]);
    let (ta, tb) = (&plan.switch_list[sa], &plan.switch_list[sb]);
    if ta.part_or_tier != tb.part_or_tier || ta.pod != tb.pod || cap[a] != cap[b] {
        return false;
    }
    if net.direct_links(sa, sb) != net.direct_links(sb, sa) {
        return false;
    }
    (0..net.switch_count())
        .filter(|&c| c != sa && c != sb)
        .all(|c| {
            net.direct_links(sa, c) == net.direct_links(sb, c)
                && net.direct_links(c, sa) == net.direct_links(c, sb)
        })
}
