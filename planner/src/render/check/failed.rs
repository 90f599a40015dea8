//! `check-qos` on many failed fabrics of one plan, each proven from the
//! whole fabric's proof and what the failure changes.
//!
//! [`check_qos_failed`](super::check_qos_failed) builds the configuration
//! model of the failed fabric and walks every flow along every ECMP choice
//! again; a failure analysis does that once per single failure. Only the
//! routes depend on the failure (the ports, addresses, hosts and classes,
//! and so every link-agreement and host finding, are the same), and most
//! of the routes do not change. [`FailedQos`] proves the whole fabric
//! once and then, per failed fabric:
//!
//! 1. It lists again only the route entries the failure can change
//!    ([`RouteIndex::reroute`]: the entries whose routes crossed a failed
//!    cable or switch, with the code the full check routes with); every
//!    other entry is the whole fabric's, indexed once per plan.
//! 2. For each destination switch `t` whose every switch's next hops
//!    towards `t` (those listed again) are a subset of the whole fabric's (a failure that only
//!    removes routes), the walks towards `t` reach only states `(link, t,
//!    DSCP)` the whole fabric's walks reach, each with a subset of its next
//!    hops, so they add only dependencies of the whole fabric's graph and
//!    follow tables without a loop (a subgraph of the whole fabric's, which
//!    are checked loop-free). Nothing is walked for them.
//! 3. The walks towards every other destination (re-routed paths: a
//!    BiGraph's detours) are made as the full check makes them, on tables
//!    checked loop-free, and the dependencies they add, with the whole
//!    fabric's (a superset of the failed fabric's), must have no cycle:
//!    searched only where the added ones run backwards in a topological
//!    order of the whole fabric's acyclic graph.
//!
//! Then the failed fabric's graph has no cycle and no routing loop, and
//! with the whole fabric's check clean it has no finding: the answer the
//! full check gives. Whenever one of these conditions does not hold
//! (the whole fabric has findings, a table towards a re-routed destination
//! loops, the dependencies added close a cycle with the whole fabric's or
//! reach a buffer it never fills, the routes cannot be listed), the full
//! check runs
//! instead, so its findings (the cycle it reports) are the full check's
//! own. `failures::tests` holds the two equal on every single failure of
//! small and medium plans.

use rustc_hash::FxHashMap;

use super::{Graph, QosFinding, check_qos_failed, check_qos_marked, next_hops};
use crate::checked::CheckedPlan;
use crate::network::reroute::{Rerouted, RouteIndex};
use crate::network::{Avoid, Model, Network};
use crate::render::HostMarking;

/// What `check-qos` says of a failed fabric, as the failure analysis
/// reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedQosVerdict {
    /// True when the check finds nothing.
    pub ok: bool,
    /// What it found.
    pub findings: Vec<QosFinding>,
    /// True when the full check ran (the shortcut could not prove it).
    pub full_check: bool,
}

/// The whole fabric's proof, for checking its failed fabrics.
#[derive(Debug)]
pub struct FailedQos<'p> {
    plan: &'p CheckedPlan,
    marking: HostMarking,
    /// The whole fabric's model and its routes' index, when it builds.
    whole: Option<Whole<'p>>,
    /// The whole fabric's proof, when it is clean.
    base: Option<Base>,
}

#[derive(Debug)]
struct Whole<'p> {
    model: Model<'p>,
    /// The whole fabric's routes, indexed for what a failure changes.
    index: RouteIndex,
}

#[derive(Debug)]
struct Base {
    /// Per (directed link, priority) buffer of the whole fabric's graph,
    /// its position in a topological order.
    position: FxHashMap<(usize, u8), u32>,
    /// Per position, the positions its dependencies lead to.
    after: Vec<Vec<u32>>,
}

impl<'p> FailedQos<'p> {
    /// Proves `plan`'s whole fabric with the hosts marking as `marking`
    /// says; without a clean proof every failed fabric gets the full check.
    pub fn new(plan: &'p CheckedPlan, marking: &HostMarking) -> Self {
        let whole = (|| {
            let model = Model::build(plan, plan.source()).ok()?;
            let index = RouteIndex::new(&model, &plan.network().ok()?);
            Some(Whole { model, index })
        })();
        let base = whole
            .as_ref()
            .and_then(|w| Self::base(plan, marking, &w.model));
        Self {
            plan,
            marking: marking.clone(),
            whole,
            base,
        }
    }

    fn base(plan: &'p CheckedPlan, marking: &HostMarking, model: &Model<'p>) -> Option<Base> {
        if !check_qos_marked(plan, marking).ok {
            return None;
        }
        let next = next_hops(model);
        let targets: Vec<usize> = (0..model.domains.len())
            .filter(|&d| !model.domains[d].gateways.is_empty())
            .collect();
        if !targets.iter().all(|&t| tables_loop_free(model, &next, t)) {
            return None;
        }
        let mut g = Graph::new(model, next);
        g.walk_flows(marking, None);
        if !g.loops.is_empty() {
            return None;
        }
        let order = petgraph::algo::toposort(&g.graph, None).ok()?;
        let mut at = vec![0u32; order.len()];
        for (i, n) in order.iter().enumerate() {
            at[n.index()] = i as u32;
        }
        let position = order
            .iter()
            .map(|n| (g.keys[n.index()], at[n.index()]))
            .collect();
        let mut after = vec![Vec::new(); order.len()];
        for &(a, b) in &g.edges {
            after[at[a.index()] as usize].push(at[b.index()]);
        }
        Some(Base { position, after })
    }

    /// True when the whole fabric's proof is clean, so failed fabrics can
    /// be proven from it.
    pub fn proves_from_whole(&self) -> bool {
        self.base.is_some()
    }

    /// True when switch `s` has sub-nodes the whole fabric's routes lead
    /// to (so the entries [`FailedQos::reroute`] lists include every
    /// route towards it that a failure removes).
    pub(crate) fn routes_to(&self, s: usize) -> bool {
        self.whole.as_ref().is_some_and(|w| {
            w.model
                .domains
                .get(s)
                .is_some_and(|d| !d.gateways.is_empty())
        })
    }

    /// The route entries of the failed fabric `net` its failures can
    /// change, listed again ([`RouteIndex::reroute`]); every other entry is
    /// the whole fabric's. `None` when the whole fabric's model does not
    /// build or an entry cannot be listed.
    pub(crate) fn reroute(&self, net: &Network<'_>) -> Option<Vec<Rerouted>> {
        let w = self.whole.as_ref()?;
        w.index.reroute(&w.model, net).ok()
    }

    /// `check-qos` on the fabric `net` routes, which avoids `failed`:
    /// what [`check_qos_failed`] finds (its `ok` and findings).
    pub fn check(&self, failed: &[Avoid], net: &Network<'_>) -> FailedQosVerdict {
        self.check_rerouted(failed, net, self.reroute(net).as_deref())
    }

    /// [`FailedQos::check`] with the entries [`FailedQos::reroute`] lists
    /// for `net`, when it lists them.
    pub(crate) fn check_rerouted(
        &self,
        failed: &[Avoid],
        net: &Network<'_>,
        rerouted: Option<&[Rerouted]>,
    ) -> FailedQosVerdict {
        if let (Some(whole), Some(base), Some(rerouted)) = (&self.whole, &self.base, rerouted)
            && self.holds(whole, base, net, rerouted)
        {
            return FailedQosVerdict {
                ok: true,
                findings: Vec::new(),
                full_check: false,
            };
        }
        let full = check_qos_failed(self.plan, &self.marking, failed);
        FailedQosVerdict {
            ok: full.ok,
            findings: full.findings,
            full_check: true,
        }
    }

    /// True when the failed fabric's graph is proven acyclic and free of
    /// routing loops from the whole fabric's (see the module docs); false
    /// when the full check must decide.
    fn holds(
        &self,
        whole: &Whole<'p>,
        base: &Base,
        net: &Network<'_>,
        rerouted: &[Rerouted],
    ) -> bool {
        let m = &whole.model;
        // Per link, the entry listed again that last marked it as a next
        // hop of the whole fabric.
        let mut stamp = vec![usize::MAX; m.links.len()];
        let mut changed: Vec<usize> = Vec::new();
        for (i, r) in rerouted.iter().enumerate() {
            if changed.last() == Some(&r.target) || r.hops.is_empty() {
                continue;
            }
            let before = whole.index.whole(m, r.switch, r.target).unwrap_or(&[]);
            if r.hops.as_slice() == before {
                continue;
            }
            for &l in before {
                stamp[l] = i;
            }
            if r.hops.iter().any(|&l| stamp[l] != i) {
                changed.push(r.target);
            }
        }
        if changed.is_empty() {
            return true;
        }
        // The failed fabric's tables towards the changed destinations (the
        // walks towards them read no other).
        let switches = m.domains.len();
        let mut failed: Vec<FxHashMap<usize, &[usize]>> = vec![FxHashMap::default(); switches];
        for &t in &changed {
            for (x, row) in failed.iter_mut().enumerate() {
                if let Some(hops) = whole.index.table(m, net, rerouted, x, t) {
                    row.insert(t, hops);
                }
            }
        }
        if !changed.iter().all(|&t| tables_loop_free(m, &failed, t)) {
            return false;
        }
        let mut g = Graph::new(m, failed);
        for &t in &changed {
            g.walk_flows(&self.marking, Some(t));
        }
        if !g.loops.is_empty() {
            return false;
        }
        // The re-routed walks' dependencies, as positions of the whole
        // fabric's order; a buffer it never fills leaves it to the full
        // check.
        let mut added = Vec::with_capacity(g.edges.len());
        for &(a, b) in &g.edges {
            match (
                base.position.get(&g.keys[a.index()]),
                base.position.get(&g.keys[b.index()]),
            ) {
                (Some(&pa), Some(&pb)) => added.push((pa, pb)),
                _ => return false,
            }
        }
        acyclic_with(&base.after, &mut added)
    }
}

/// True when the whole fabric's dependencies (`after`, by position in a
/// topological order) with `added` have no cycle: a superset of the
/// failed fabric's dependencies, so then neither has the failed fabric.
///
/// A cycle must hold a dependency that runs backwards in the order (all
/// of them are in `added`), and its last node in the order is the tail of
/// one, so only the nodes up to the last such tail are searched (Kahn's
/// algorithm on that part).
fn acyclic_with(after: &[Vec<u32>], added: &mut [(u32, u32)]) -> bool {
    let Some(last) = added.iter().filter(|(a, b)| a >= b).map(|&(a, _)| a).max() else {
        return true;
    };
    let n = last as usize + 1;
    added.sort_unstable();
    // Where each node's added dependencies start in `added`.
    let mut start = vec![0u32; n + 1];
    for &(a, _) in added.iter() {
        if (a as usize) < n {
            start[a as usize + 1] += 1;
        }
    }
    for a in 0..n {
        start[a + 1] += start[a];
    }
    let extra = |a: u32| {
        let (lo, hi) = (start[a as usize] as usize, start[a as usize + 1] as usize);
        added[lo..hi].iter().map(|&(_, b)| b)
    };
    let mut indegree = vec![0u32; n];
    for (a, next) in after.iter().enumerate().take(n) {
        for b in next.iter().copied().chain(extra(a as u32)) {
            if (b as usize) < n {
                indegree[b as usize] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&a| indegree[a] == 0).collect();
    let mut done = 0;
    while let Some(a) = ready.pop() {
        done += 1;
        for b in after[a].iter().copied().chain(extra(a as u32)) {
            let b = b as usize;
            if b < n {
                indegree[b] -= 1;
                if indegree[b] == 0 {
                    ready.push(b);
                }
            }
        }
    }
    done == n
}

/// True when the next hops towards switch `t` (`next[x][t]` for every
/// switch `x`) never lead a route back to a switch it has left.
fn tables_loop_free(m: &Model<'_>, next: &[FxHashMap<usize, &[usize]>], t: usize) -> bool {
    // 0: not visited, 1: on the current path, 2: done.
    let mut state = vec![0u8; next.len()];
    for start in 0..next.len() {
        if state[start] != 0 {
            continue;
        }
        // Iterative depth-first search: (switch, next hop index).
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (x, ref mut i)) = stack.last_mut() {
            let hops = next[x].get(&t).copied().unwrap_or(&[]);
            if let Some(&l) = hops.get(*i) {
                *i += 1;
                let y = m.links[l].to;
                match state[y] {
                    0 => {
                        state[y] = 1;
                        stack.push((y, 0));
                    }
                    1 => return false,
                    _ => {}
                }
            } else {
                state[x] = 2;
                stack.pop();
            }
        }
    }
    true
}
