//! The static routes a failure changes, listed again alone: the rest of a failed fabric's routes are the whole fabric's.
//!
//! A failure analysis proves hundreds of failed fabrics of one plan, and
//! listing every route of each (as [`Model::build_failed`] does) is 48
//! switches times 32 destinations of 16 next hops per failure on a
//! 1,024-GPU leaf-spine. Most do not change. [`RouteIndex`] indexes the whole fabric's
//! routes once per plan; per failed fabric [`RouteIndex::reroute`] lists
//! again only the entries (switch `x`, destination switch `t`) the failure
//! can change, with the code the full rebuild lists them with
//! ([`Model::hops_on`]), and [`RouteIndex::table`] answers every entry:
//!
//! - none from or to a failed switch (the full rebuild lists none);
//! - the entry listed again, where there is one (none left: no route);
//! - else the whole fabric's.
//!
//! # Which entries can change
//!
//! Towards a destination `t`, the whole fabric's next hops of every
//! switch form `t`'s route graph. On a failed fabric a switch keeps a
//! next hop of its own whole-fabric entry when that link is alive and
//! leads on to `t` (its far end has a next hop of its own, to the end of
//! the route), and takes a detour (a BiGraph's) only when every one of
//! them is dead (`tables.rs`): so an entry whose routes on the whole
//! fabric cross no broken link keeps every next hop and takes none new.
//! A link is broken when its cable failed or it leads into a failed
//! switch (a link out of a failed switch only carries that switch's own
//! routes, which are gone). The entries listed again are, per broken link
//! and destination whose route graph holds it, the link's sending switch
//! and every switch whose routes to `t` reach that one: a walk of `t`'s
//! route graph backwards. On a leaf-spine of `L` leaves a failed leaf
//! lists none again, a failed cable `2L - 1` (its leaf towards every
//! other leaf, its spine and every other leaf towards its leaf: 63 of the
//! 1,504 entries at 1,024 GPUs) and a failed spine the `L(L - 1)` entries
//! of the leaves.
//!
//! `tests::rerouted_tables_equal_the_full_rebuild` and its property test hold
//! [`RouteIndex::table`] equal to `Model::routes_on` for every single
//! failure (and random pairs) of small BiGraphs, 2- and 3-tier fat-trees,
//! rail-optimized and HPN plans, static and BGP.

use super::addresses::Model;
use super::links::Network;
use crate::error::Problem;

/// No entry.
const NONE: u32 = u32::MAX;

/// The whole fabric's routes of a model, indexed to find and answer what
/// a failure changes.
#[derive(Debug)]
pub(crate) struct RouteIndex {
    /// Per switch `x`, `(destination, index into its routes)` of its
    /// first route to each destination, sorted.
    whole: Vec<Vec<(u32, u32)>>,
    /// Per model link, the destinations whose route graph holds it:
    /// `users[user_start[l]..user_start[l + 1]]`.
    user_start: Vec<u32>,
    users: Vec<u32>,
    /// Per destination switch, `(receiving switch, sending switch)` of
    /// every link of its route graph, sorted and without repeats (empty
    /// for switches without sub-nodes).
    into: Vec<Vec<(u32, u32)>>,
    /// Per inter-switch link of the network (by its position among them),
    /// the model link, or [`NONE`].
    model_link: Vec<u32>,
}

/// An entry of a failed fabric's tables listed again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rerouted {
    /// The destination switch.
    pub target: usize,
    /// The switch whose entry it is.
    pub switch: usize,
    /// Its next hops as model links in port order; empty: no route.
    pub hops: Vec<usize>,
}

impl RouteIndex {
    /// The index of `m`'s routes (a model built with its routes listed);
    /// `net` is the network of `m`'s plan.
    pub fn new(m: &Model<'_>, net: &Network<'_>) -> Self {
        let n = m.domains.len();
        let mut whole = Vec::with_capacity(n);
        let mut count = vec![0u32; m.links.len() + 1];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut into: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (x, d) in m.domains.iter().enumerate() {
            let mut firsts: Vec<(u32, u32)> = Vec::new();
            for (i, r) in d.routes.iter().enumerate() {
                // One route per subnet of the destination, in a run with
                // the same next hops.
                if firsts.last().is_some_and(|&(t, _)| t as usize == r.target) {
                    continue;
                }
                firsts.push((r.target as u32, i as u32));
                for &l in &r.next_hops {
                    pairs.push((l as u32, r.target as u32));
                    into[r.target].push((m.links[l].to as u32, x as u32));
                }
            }
            firsts.sort_unstable();
            whole.push(firsts);
        }
        pairs.sort_unstable();
        pairs.dedup();
        for &(l, _) in &pairs {
            count[l as usize + 1] += 1;
        }
        for l in 0..m.links.len() {
            count[l + 1] += count[l];
        }
        for row in &mut into {
            row.sort_unstable();
            row.dedup();
        }
        let inter = net.inter_switch_links();
        let model_link = inter
            .map(|id| m.link_of(net, id).map_or(NONE, |l| l as u32))
            .collect();
        Self {
            whole,
            user_start: count,
            users: pairs.into_iter().map(|(_, t)| t).collect(),
            into,
            model_link,
        }
    }

    /// The whole fabric's next hops of switch `x` towards switch `t`.
    pub fn whole<'m>(&self, m: &'m Model<'_>, x: usize, t: usize) -> Option<&'m [usize]> {
        let row = self.whole.get(x)?;
        let i = row.binary_search_by_key(&(t as u32), |&(d, _)| d).ok()?;
        Some(m.domains[x].routes[row[i].1 as usize].next_hops.as_slice())
    }

    /// The entries of `net`'s tables (a failed fabric of `m`'s plan) that
    /// its failures can change (see the module documentation), listed
    /// again, sorted by destination and switch; entries from or to a
    /// failed switch are left out. Errors are the problems listing every
    /// route would give (a table entry the model has no link for).
    pub fn reroute(&self, m: &Model<'_>, net: &Network<'_>) -> Result<Vec<Rerouted>, Vec<Problem>> {
        let down = |s: usize| net.is_avoided_switch(s);
        let inter = net.inter_switch_links();
        let mut seeds: Vec<(u32, u32)> = Vec::new();
        for (i, id) in inter.enumerate() {
            if !net.is_dead_link(id) || self.model_link[i] == NONE {
                continue;
            }
            let l = self.model_link[i] as usize;
            let from = m.links[l].from;
            if down(from) {
                continue;
            }
            let users = &self.users[self.user_start[l] as usize..self.user_start[l + 1] as usize];
            for &t in users {
                if !down(t as usize) {
                    seeds.push((t, from as u32));
                }
            }
        }
        seeds.sort_unstable();
        seeds.dedup();
        let mut out = Vec::new();
        let mut problems = Vec::new();
        let mut mark = vec![NONE; m.domains.len()];
        let mut stack: Vec<u32> = Vec::new();
        let mut found: Vec<usize> = Vec::new();
        for group in seeds.chunk_by(|a, b| a.0 == b.0) {
            let t = group[0].0;
            let into = &self.into[t as usize];
            found.clear();
            for &(_, x) in group {
                mark[x as usize] = t;
                stack.push(x);
            }
            while let Some(y) = stack.pop() {
                found.push(y as usize);
                let lo = into.partition_point(|&(to, _)| to < y);
                for &(to, x) in &into[lo..] {
                    if to != y {
                        break;
                    }
                    if mark[x as usize] != t && !down(x as usize) {
                        mark[x as usize] = t;
                        stack.push(x);
                    }
                }
            }
            found.sort_unstable();
            for &x in &found {
                let hops = m.hops_on(net, x, t as usize, &mut problems);
                out.push(Rerouted {
                    target: t as usize,
                    switch: x,
                    hops,
                });
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(problems)
        }
    }

    /// The next hops of switch `x` towards switch `t` on `net`, the failed
    /// fabric whose entries `rerouted` lists again ([`RouteIndex::reroute`]):
    /// what [`Model::build_failed`] lists for that entry, `None` where it
    /// lists no route.
    pub fn table<'a>(
        &self,
        m: &'a Model<'_>,
        net: &Network<'_>,
        rerouted: &'a [Rerouted],
        x: usize,
        t: usize,
    ) -> Option<&'a [usize]> {
        if x == t || net.is_avoided_switch(x) || net.is_avoided_switch(t) {
            return None;
        }
        match rerouted.binary_search_by_key(&(t, x), |r| (r.target, r.switch)) {
            Ok(i) => Some(rerouted[i].hops.as_slice()).filter(|h| !h.is_empty()),
            Err(_) => self.whole(m, x, t),
        }
    }
}

#[cfg(test)]
#[path = "reroute_tests.rs"]
mod tests;
