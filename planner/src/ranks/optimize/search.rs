//! The tabu search over rank tables: exchanges ranks and free sub-nodes, keeping the loads of every distinct step up to date.

use super::starts::{algorithm1_starts, place_extras, split};
use crate::error::{Error, Result};
use crate::network::Network;
use crate::ranks::schedule::{Layout, Schedule, Step};
use crate::ranks::verify::flow_id;

/// Rank of no one.
const NONE: u32 = u32::MAX;

/// The cost of a table: worst load, then links at that load summed over
/// steps.
pub(super) type Cost = (u32, u64);

/// A small PRNG (SplitMix64): deterministic, seeded by the request.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) % n as u64) as usize
    }
}

/// The tabu search over rank tables, with the loads of every distinct
/// step kept up to date.
pub(super) struct Search<'a, 'n> {
    net: &'a Network<'n>,
    seed: u64,
    /// First inter-switch link id.
    base: usize,
    /// Distinct steps and how many schedule steps each stands for.
    steps: Vec<Step>,
    mult: Vec<u64>,
    /// Rank -> sub-node.
    pub(super) pos: Vec<usize>,
    /// Sub-node -> rank, `NONE` when free.
    owner: Vec<u32>,
    /// Usable sub-nodes that carry no rank; `free_at[sn]` is the index of
    /// `sn` in `free`.
    free: Vec<usize>,
    free_at: Vec<u32>,
    /// Usable sub-nodes.
    usable: Vec<bool>,
    /// Per distinct step: the load of every inter-switch link, how many
    /// links carry each load, and the largest load.
    load: Vec<Vec<u32>>,
    hist: Vec<Vec<u32>>,
    top: Vec<u32>,
    /// Per distinct step: flows above one per link, summed over links.
    excess: Vec<u64>,
    rng: Rng,
    /// How the schedule's engine numbers the ranks of the starting tables,
    /// which are made in the planner's numbering.
    layout: Layout,
}

impl<'a, 'n> Search<'a, 'n> {
    pub(super) fn new(
        net: &'a Network<'n>,
        avail: &[Vec<usize>],
        schedule: &Schedule,
        seed: u64,
    ) -> Self {
        let mut steps: Vec<Step> = Vec::new();
        let mut mult = Vec::new();
        for s in &schedule.steps {
            match steps.iter().position(|d| d.same_flows(s)) {
                Some(i) => mult[i] += 1,
                None => {
                    steps.push(*s);
                    mult.push(1);
                }
            }
        }
        let links = net.inter_switch_links().len();
        let x = schedule.ranks;
        let subs = net.access_links().len() / 2;
        let mut usable = vec![false; subs];
        for &sn in avail.iter().flatten() {
            usable[sn] = true;
        }
        let n = steps.len();
        Self {
            net,
            seed,
            base: net.inter_switch_links().start,
            steps,
            mult,
            pos: vec![0; x],
            owner: vec![NONE; subs],
            free: Vec::new(),
            free_at: vec![NONE; subs],
            usable,
            load: vec![vec![0; links]; n],
            hist: vec![vec![0; x + 2]; n],
            top: vec![0; n],
            excess: vec![0; n],
            rng: Rng(seed ^ 0x6A09_E667_F3BC_C908),
            layout: schedule.layout(),
        }
    }

    /// Sets the table and scores it from scratch.
    pub(super) fn load(&mut self, ranks: &[usize]) -> Result<Cost> {
        self.pos = ranks.to_vec();
        self.owner.fill(NONE);
        for (r, &sn) in ranks.iter().enumerate() {
            self.owner[sn] = r as u32;
        }
        self.free.clear();
        self.free_at.fill(NONE);
        for sn in 0..self.usable.len() {
            if self.usable[sn] && self.owner[sn] == NONE {
                self.free_at[sn] = self.free.len() as u32;
                self.free.push(sn);
            }
        }
        for t in 0..self.steps.len() {
            self.load[t].fill(0);
            self.hist[t].fill(0);
            self.hist[t][0] = self.load[t].len() as u32;
            self.top[t] = 0;
            self.excess[t] = 0;
            for i in 0..self.steps[t].flow_count() {
                let (s, d) = self.steps[t].flow(i);
                self.flow(t, s, d, true)?;
            }
        }
        Ok(self.cost())
    }

    /// Adds (or removes) one flow of distinct step `t`.
    fn flow(&mut self, t: usize, s: usize, d: usize, add: bool) -> Result<()> {
        let route = self
            .net
            .route(self.pos[s], self.pos[d], flow_id(s, d), self.seed)?;
        let (load, hist) = (&mut self.load[t], &mut self.hist[t]);
        for &l in route.inter_switch() {
            let l = l - self.base;
            let v = load[l] as usize;
            hist[v] -= 1;
            if add {
                load[l] += 1;
                hist[v + 1] += 1;
                if v as u32 + 1 > self.top[t] {
                    self.top[t] = v as u32 + 1;
                }
                if v >= 1 {
                    self.excess[t] += 1;
                }
            } else {
                load[l] -= 1;
                hist[v - 1] += 1;
                if v as u32 == self.top[t] && hist[v] == 0 {
                    self.top[t] -= 1;
                }
                if v >= 2 {
                    self.excess[t] -= 1;
                }
            }
        }
        Ok(())
    }

    /// The cost of the current table.
    pub(super) fn cost(&self) -> Cost {
        let w = self.top.iter().copied().max().unwrap_or(0);
        if w == 0 {
            return (0, 0);
        }
        let c = (0..self.steps.len())
            .filter(|&t| self.top[t] == w)
            .map(|t| u64::from(self.hist[t][w as usize]) * self.mult[t])
            .sum();
        (w, c)
    }

    /// Moves rank `r` to sub-node `to`; the rank there (if any) takes
    /// `r`'s sub-node. Every flow of either rank is rerouted.
    fn exchange(&mut self, r: usize, to: usize) -> Result<()> {
        let from = self.pos[r];
        let other = self.owner[to];
        let mut touched: Vec<(usize, usize, usize)> = Vec::with_capacity(4 * self.steps.len());
        let mut buf = [(0, 0); 2];
        for t in 0..self.steps.len() {
            for rank in [Some(r), (other != NONE).then_some(other as usize)]
                .into_iter()
                .flatten()
            {
                let n = self.steps[t].flows_of(rank, &mut buf);
                for &(s, d) in &buf[..n] {
                    if !touched.contains(&(t, s, d)) {
                        touched.push((t, s, d));
                    }
                }
            }
        }
        for &(t, s, d) in &touched {
            self.flow(t, s, d, false)?;
        }
        self.pos[r] = to;
        self.owner[to] = r as u32;
        if other == NONE {
            // `to` was free; `from` becomes free in its place.
            let i = self.free_at[to] as usize;
            self.free[i] = from;
            self.free_at[from] = i as u32;
            self.free_at[to] = NONE;
            self.owner[from] = NONE;
        } else {
            self.pos[other as usize] = from;
            self.owner[from] = other;
        }
        for &(t, s, d) in &touched {
            self.flow(t, s, d, true)?;
        }
        Ok(())
    }

    /// A flow of step `t` on a link at load `w`, as (src, dst) ranks.
    fn hot_flow(&mut self, t: usize, w: u32) -> Result<Option<(usize, usize)>> {
        let n = self.steps[t].flow_count();
        if n == 0 {
            return Ok(None);
        }
        let start = self.rng.below(n);
        for i in 0..n {
            let (s, d) = self.steps[t].flow((start + i) % n);
            let route = self
                .net
                .route(self.pos[s], self.pos[d], flow_id(s, d), self.seed)?;
            if route
                .inter_switch()
                .iter()
                .any(|&l| self.load[t][l - self.base] == w)
            {
                return Ok(Some((s, d)));
            }
        }
        Ok(None)
    }

    /// The cost that guides the search: the cost, then the flows above one
    /// per link summed over links and steps, so that of two tables with the
    /// same worst links the one with less overload elsewhere wins.
    fn guide(&self) -> (Cost, u64) {
        let excess = (0..self.steps.len())
            .map(|t| self.excess[t] * self.mult[t])
            .sum();
        (self.cost(), excess)
    }

    /// Tabu search from the current table until the budget is spent, or
    /// the worst load reaches `bound` and a while passes without a better
    /// table; leaves the best table found in `pos` and returns its cost.
    ///
    /// Every round takes a flow on a link at the worst load, one of its two
    /// ranks, and the best exchange of that rank with another rank or a
    /// free sub-node (all of them on small jobs, a sample on large ones,
    /// half of it on switches of the rank's own part or tier). The exchange
    /// is made even when it makes the table worse, but a rank moved in the
    /// last few rounds is not moved again unless that gives the best table
    /// so far: the search walks out of local minima and keeps the best.
    pub(super) fn improve(&mut self, bound: usize) -> Result<Cost> {
        let x = self.pos.len();
        let mut now = self.guide();
        let mut best = now.0;
        let mut best_pos = self.pos.clone();
        if best.0 == 0 || x < 2 {
            return Ok(best);
        }
        // Budgets count exchanges tried, not time, so the result is
        // reproducible: 20,000 plus 50 per rank, but no more than about 8
        // million reroutes in all; and once the worst load is at the
        // bound, 1,000 plus 2 per rank (up to 1,000 ranks) without a
        // better table, or none above 4,096 ranks, where a few thousand
        // random exchanges would barely touch the links at that load.
        let per_rank: usize = self
            .steps
            .iter()
            .map(|s| {
                let mut buf = [(0, 0); 2];
                s.flows_of(0, &mut buf).max(1)
            })
            .sum();
        let budget = (20_000 + 50 * x).min(8_000_000 / (8 * per_rank));
        let patience = if x > 4_096 {
            0
        } else {
            1_000 + 2 * x.min(1_000)
        };
        let everyone = x + self.free.len() <= 64;
        let sample = 16;
        let tenure = (x / 4).clamp(2, 8);
        let mut tabu_until = vec![0usize; x];
        let mut since_best = 0;
        let mut tried = 0;
        let mut round = 0;
        let tier = |net: &Network<'_>, sn: usize| {
            net.switch_of(sn)
                .map(|s| net.plan().switch_list[s].part_or_tier)
        };
        let mut targets: Vec<usize> = Vec::new();
        while tried < budget {
            round += 1;
            if now.0.0 == 0 || (best.0 as usize <= bound && since_best >= patience) {
                break;
            }
            let w = now.0.0;
            let worst: Vec<usize> = (0..self.steps.len())
                .filter(|&t| self.top[t] == w)
                .collect();
            let t = worst[self.rng.below(worst.len())];
            let Some((s, d)) = self.hot_flow(t, w)? else {
                break;
            };
            let r = match (tabu_until[s] > round, tabu_until[d] > round) {
                (false, true) => s,
                (true, false) => d,
                _ if self.rng.below(2) == 0 => s,
                _ => d,
            };
            let from = self.pos[r];
            targets.clear();
            if everyone {
                targets.extend(self.pos.iter().copied().filter(|&sn| sn != from));
                targets.extend(self.free.iter().copied());
            } else {
                let mine = tier(self.net, from);
                let mut guard = 0;
                while targets.len() < sample && guard < 8 * sample {
                    guard += 1;
                    let pool = x + self.free.len();
                    let i = self.rng.below(pool);
                    let sn = if i < x { self.pos[i] } else { self.free[i - x] };
                    if sn == from || targets.contains(&sn) {
                        continue;
                    }
                    // Half the sample from the rank's own part or tier.
                    if targets.len().is_multiple_of(2) && tier(self.net, sn) != mine {
                        continue;
                    }
                    targets.push(sn);
                }
            }
            let mut pick: Option<((Cost, u64), usize)> = None;
            for &to in &targets {
                let other = self.owner[to];
                self.exchange(r, to)?;
                let g = self.guide();
                tried += 1;
                since_best += 1;
                self.exchange(r, from)?;
                let is_tabu =
                    tabu_until[r] > round || (other != NONE && tabu_until[other as usize] > round);
                if is_tabu && g.0 >= best {
                    continue;
                }
                if pick.is_none_or(|(pg, _)| g < pg) {
                    pick = Some((g, to));
                }
            }
            let Some((g, to)) = pick else { continue };
            let other = self.owner[to];
            self.exchange(r, to)?;
            now = g;
            tabu_until[r] = round + tenure;
            if other != NONE {
                tabu_until[other as usize] = round + tenure;
            }
            if now.0 < best {
                best = now.0;
                best_pos.clone_from(&self.pos);
                since_best = 0;
            }
        }
        if self.pos != best_pos {
            self.load(&best_pos)?;
        }
        Ok(best)
    }

    /// Scores the starting tables and keeps the best; returns its name.
    pub(super) fn best_start(&mut self, avail: &[Vec<usize>], bound: usize) -> Result<String> {
        let x = self.pos.len();
        let mut starts: Vec<(String, Vec<usize>)> = Vec::new();
        let biggest = (0..avail.len())
            .max_by_key(|&s| (avail[s].len(), std::cmp::Reverse(s)))
            .unwrap_or(0);
        if x <= avail.get(biggest).map_or(0, Vec::len) {
            starts.push((
                format!(
                    "all {x} ranks on switch {}",
                    self.net.plan().switch_list[biggest].name
                ),
                avail[biggest][..x].to_vec(),
            ));
        } else {
            let (core, _) = split(x);
            for (name, table) in algorithm1_starts(self.net, avail, core) {
                starts.push((name, table));
            }
            let order: Vec<usize> = avail.iter().flatten().copied().take(core).collect();
            starts.push(("the plan order".to_string(), order));
            for (_, table) in &mut starts {
                place_extras(self.net, avail, table, x);
                if table.len() == x {
                    *table = self.layout.to_engine(table);
                }
            }
        }
        // Score the starts in order; one at the lower bound ends the
        // scoring (the later ones are meant for fabrics where the earlier
        // ones fail).
        let mut best: Option<(Cost, usize)> = None;
        let mut loaded = usize::MAX;
        for (i, (_, table)) in starts.iter().enumerate() {
            if table.len() != x {
                continue;
            }
            let c = self.load(table)?;
            loaded = i;
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, i));
            }
            if c.0 as usize <= bound {
                break;
            }
        }
        let Some((_, i)) = best else {
            return Err(Error::Internal(format!(
                "no starting table places {x} ranks"
            )));
        };
        let (name, table) = starts.swap_remove(i);
        if loaded != i {
            self.load(&table)?;
        }
        Ok(name)
    }
}
