//! The closed form of every algorithm on a context: one `Algorithm::` arm
//! each in [`Context::closed_form`], with the equations in
//! [`crate::estimate::models`] and α and β from [`super::geometry`]; the
//! trees' table and the NCCL-style rings' and trees' forms beside it.
//! Costs that do not depend on the size are computed at the first size
//! and kept in the context.

use super::geometry::level_kind;
use super::{Context, PlanRoutes};
use crate::error::{Error, Result};
use crate::estimate::{Algorithm, Channels, SendSchedule, models, schedules};
use crate::network::Policy;
use schedules::NONE;

impl Context<'_> {
    /// The closed-form time of `n` bytes and the chunk count of a
    /// pipelined tree.
    pub(in crate::estimate) fn closed_form(&self, n: u64) -> Result<(f64, usize)> {
        let p = self.ranks();
        if p <= 1 {
            return Ok((0.0, 1));
        }
        let nf = n as f64;
        let g = self.params.gamma_us();
        let (b0, b1) = (self.beta0(), self.beta1());
        let max_chunks = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        Ok(match self.algorithm {
            Algorithm::Ring => {
                let a = self.alpha_of((0..p).map(|r| (r, (r + 1) % p)));
                (models::ring(p, nf, a, b0, g), 1)
            }
            Algorithm::Hd | Algorithm::Hdrm => {
                // Halving-doubling over the P' core ranks, plus the fold
                // and unfold of the X - P' extra ranks when X is not a
                // power of two (ranks::folded_halving_doubling's pairing).
                let core = 1usize << p.ilog2();
                // (α, β) of every step, then of the fold; they do not
                // depend on the size, so a context computes them once.
                let steps = match self.step_costs.get() {
                    Some(steps) => steps.clone(),
                    None => {
                        let steps = self.hd_step_costs(core, b0, b1)?;
                        self.step_costs.get_or_init(|| steps).clone()
                    }
                };
                let (hd, fold) = steps.split_at(core.ilog2() as usize);
                let mut t = models::halving_doubling_steps(core, nf, hd, g);
                if let Some(&(a, b)) = fold.first() {
                    t += models::fold(nf, a, b, g);
                }
                (t, 1)
            }
            Algorithm::Tree
            | Algorithm::PipelinedTree
            | Algorithm::DoubleTree
            | Algorithm::OverlappedTree
            | Algorithm::OverlappedDoubleTree => self.tree_closed_form(p, nf, max_chunks)?,
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                // The levels do not depend on the size either.
                let lv = match self.level_costs.get() {
                    Some(lv) => lv.clone(),
                    None => {
                        let lv = self.hierarchical_levels(ring_only)?;
                        self.level_costs.get_or_init(|| lv).clone()
                    }
                };
                (models::blueconnect(&lv, nf, g, ring_only), 1)
            }
            Algorithm::TwoLevel => {
                let levels = self.levels(false)?;
                let p0 = levels.groups[0][0].len();
                let p1 = levels.groups.get(1).map_or(1, |l| l[0].len());
                let alpha1 = levels.alpha.get(1).copied().unwrap_or(levels.alpha[0]);
                // One master per switch: the masters' flows do not share
                // an uplink, so they go at the slowest link's speed.
                let t = models::two_level(
                    p0,
                    p1,
                    nf,
                    (levels.alpha[0], alpha1),
                    levels.w[0],
                    self.fabric_w,
                );
                let reduce = |p: usize| g * (p as f64 - 1.0) / p as f64 * nf;
                (t + reduce(p0) + reduce(p1), 1)
            }
            Algorithm::TopKAllGather => {
                let w = self.params.gradient_bytes;
                let k = schedules::topk_elements(n, self.params.density, w) as f64;
                let wf = f64::from(w);
                let m = k * (wf + models::INDEX_BYTES);
                let steps: Vec<(f64, f64)> = if p.is_power_of_two() {
                    (0..p.ilog2())
                        .map(|s| {
                            let d = p >> (s + 1);
                            let pairs: Vec<(usize, usize)> = (0..p).map(|r| (r, r ^ d)).collect();
                            let inside = self.tier.is_none()
                                && pairs.iter().all(|&(a, b)| self.switch[a] == self.switch[b]);
                            let beta = match self.nvlink_beta(&pairs) {
                                Some(b) => b,
                                None if inside => b0,
                                None => b1,
                            };
                            (self.alpha_of(pairs.into_iter()), beta)
                        })
                        .collect()
                } else {
                    vec![(self.alpha_of((0..p).map(|r| (r, (r + 1) % p))), b0)]
                };
                let t2 = self.params.topk_us() * nf;
                let acc = g * wf * k * p as f64;
                (models::topk_allgather(p, m, &steps, t2, acc), 1)
            }
            Algorithm::ParameterServer => {
                let a = self.alpha_of((0..p).flat_map(|r| (0..p).map(move |j| (r, j))));
                // The part of a rank's shards that leaves its switch, for
                // the switch with the fewest ranks.
                let mut on = vec![0usize; self.plan.switch_list.len()];
                for &s in &self.switch {
                    on[s as usize] += 1;
                }
                let fewest = on.iter().copied().filter(|&c| c > 0).min().unwrap_or(p);
                let cross = (p - fewest) as f64 / p as f64 * nf;
                (
                    models::parameter_server(p, nf, a, b0, (cross, 1.0 / self.share), g),
                    1,
                )
            }
            Algorithm::NcclRing => {
                let servers = self.server_groups()?;
                (self.nccl_ring_closed_form(&servers, nf)?, 1)
            }
            Algorithm::NcclTree => {
                let servers = self.server_groups()?;
                let k = Self::nccl_tree_chunks(&servers, n);
                (self.nccl_tree_closed_form(&servers, nf, k)?, k)
            }
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                let gpus = levels.groups[0][0].len();
                let nodes = levels.groups[1][0].len();
                let t2 = self.params.topk_us() * nf / gpus as f64;
                let w = f64::from(self.params.gradient_bytes);
                let t = models::hitopk_sent(
                    nodes,
                    gpus,
                    nf / w,
                    self.params.density,
                    w,
                    (levels.alpha[0], 1.0 / levels.w[0]),
                    (levels.alpha[1], 1.0 / levels.w[1]),
                    t2,
                );
                // The paper has no γ; the schedule reduces the ring
                // reduce-scatter's (g-1)/g of the buffer and accumulates
                // the m gathered sets of ρ·d/g values.
                let (gf, mf) = (gpus as f64, nodes as f64);
                let shard_elements = ((nf / gf) / w).floor();
                let selected = (self.params.density * shard_elements).ceil();
                let reduced = (gf - 1.0) / gf * nf + mf * selected * w;
                (t + g * reduced, 1)
            }
        })
    }

    /// (α, β) of each halving-doubling step over the `core` ranks, then of
    /// the fold when there are more ranks: β from NVLink inside a domain,
    /// from the route model without the tier (`spread_beta`), otherwise
    /// `b1`.
    fn hd_step_costs(&self, core: usize, b0: f64, b1: f64) -> Result<Vec<(f64, f64)>> {
        let beta_of = |pairs: &[(usize, usize)]| -> Result<f64> {
            Ok(match self.nvlink_beta(pairs) {
                Some(b) => b,
                None if self.tier.is_none() => self.spread_beta(pairs)?.max(b0),
                None => b1,
            })
        };
        let mut steps = Vec::new();
        for s in 0..core.ilog2() {
            let d = 1usize << s;
            let pairs: Vec<(usize, usize)> = (0..core).map(|r| (r, r ^ d)).collect();
            steps.push((self.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
        }
        let p = self.ranks();
        if core < p {
            let pairs: Vec<(usize, usize)> = (core..p).map(|r| (r, r - core)).collect();
            steps.push((self.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
        }
        Ok(steps)
    }

    /// The levels of `blueconnect` (`2d` when `ring_only`) with their
    /// bandwidth: without the tier the level's steps on their paths,
    /// ideally balanced, as the schedule runs them (`level_w`).
    fn hierarchical_levels(&self, ring_only: bool) -> Result<Vec<models::Level>> {
        let levels = self.levels(!ring_only)?;
        let mut lv = Vec::with_capacity(levels.groups.len());
        for (i, groups) in levels.groups.iter().enumerate() {
            let size = groups[0].len();
            let w = if self.tier.is_none() {
                self.level_w(groups, level_kind(ring_only, size))?
                    .min(self.w)
            } else {
                levels.w[i]
            };
            lv.push(models::Level {
                p: size,
                alpha: levels.alpha[i],
                w,
            });
        }
        Ok(lv)
    }

    /// The closed form of a tree algorithm over `p` ranks, `nf` bytes:
    /// the time and the chunk count K.
    ///
    /// Per step, with chunks of N/K bytes (N/2K per tree for the double
    /// trees), a rank moves through its NIC (`channels=fabric`):
    ///
    /// | algorithm | steps | per step |
    /// |---|---|---|
    /// | `tree` (K = 1) | `2 log P` | MG-WFBP's row: 2β and 2γ |
    /// | `pipelined-tree` | `2(h + K)` | reduce: two chunks in (2β) and their reduction (2γ); broadcast: two out (2β) |
    /// | `double-tree` | `2(h + K)` | two half chunks each way (β), the reduction of two halves (γ) in the reduce phase |
    /// | `overlapped-tree` | `2h + K` | one chunk up and two down (3β), two reduced (2γ) |
    /// | `overlapped-double-tree` | `2h + K` | four half chunks out (2β), two halves reduced (γ) |
    ///
    /// With `channels=pair` every tree edge is a channel of its own (C-Cube's
    /// DGX-1), so a step costs one chunk per channel: β for the single
    /// trees (eq. 6 for `pipelined-tree`, eq. 7 for `overlapped-tree`),
    /// β/2 for the double trees; the reduction is the same.
    fn tree_closed_form(&self, p: usize, nf: f64, max_chunks: usize) -> Result<(f64, usize)> {
        let g = self.params.gamma_us();
        let b = self.beta0();
        let pair = self.params.channels == Channels::Pair;
        let trees = match self.algorithm {
            Algorithm::DoubleTree | Algorithm::OverlappedDoubleTree => {
                vec![schedules::btree(p), schedules::mirror_tree(p)]
            }
            _ => vec![schedules::btree(p)],
        };
        let a = if pair {
            self.params.latency_us(0)
        } else {
            self.tree_alpha(&trees)
        };
        let mut h = 0u32;
        for t in &trees {
            let shape = schedules::shape(t)?;
            h = h.max(shape.height[shape.root]);
        }
        let h = f64::from(h);
        // (fixed steps, α per K-step unit, bytes term per K-step unit).
        let (fixed, alpha, bytes) = match (self.algorithm, pair) {
            (Algorithm::Tree, false) => {
                return Ok((models::binary_tree(p, nf, a, 2.0 * b, 2.0 * g), 1));
            }
            (Algorithm::Tree, true) => return Ok((models::binary_tree(p, nf, a, b, 2.0 * g), 1)),
            (Algorithm::PipelinedTree, false) => (h, 2.0 * a, 4.0 * b + 2.0 * g),
            (Algorithm::PipelinedTree, true) => (h, 2.0 * a, 2.0 * b + 2.0 * g),
            (Algorithm::DoubleTree, false) => (h, 2.0 * a, 2.0 * b + g),
            (Algorithm::DoubleTree, true) => (h, 2.0 * a, b + g),
            (Algorithm::OverlappedTree, false) => (2.0 * h, a, 3.0 * b + 2.0 * g),
            (Algorithm::OverlappedTree, true) => (2.0 * h, a, b + 2.0 * g),
            (Algorithm::OverlappedDoubleTree, false) => (2.0 * h, a, 2.0 * b + g),
            (Algorithm::OverlappedDoubleTree, true) => (2.0 * h, a, b / 2.0 + g),
            (other, _) => {
                return Err(Error::Internal(format!("{} is not a tree", other.as_str())));
            }
        };
        let best = models::pipeline(fixed, alpha, bytes * nf, max_chunks);
        Ok((best.time_us, best.chunks))
    }

    /// The closed form of `nccl-ring` (see [`schedules::nccl_rings`]) over
    /// the ranks of `servers`, `nf` bytes: C = g rings of `nf / C` bytes
    /// over P = m·g ranks, each ring step moving N/(CP) bytes. An NVLink
    /// hop (α of one switch) carries one flow of every ring on each GPU's
    /// link, `C·N/(CP)` at the NVLink speed; a rail hop one flow of its
    /// ring at the fabric's speed per rank. Each ring step waits for the
    /// slower of the two (the rings and hops run at once), and the first
    /// rail hop waits for the first NVLink hand-over. Without the tier
    /// every hop crosses the fabric, and both cost one step of all the
    /// rings' flows at once on their paths, ideally balanced. γ: a
    /// reduce-scatter step's NVLink hop reduces its N/(CP) bytes first.
    fn nccl_ring_closed_form(&self, servers: &[Vec<u32>], nf: f64) -> Result<f64> {
        let (m, g) = (servers.len(), servers[0].len());
        let p = m * g;
        if p <= 1 {
            return Ok(0.0);
        }
        let (c, pf) = (g as f64, p as f64);
        let b = nf / (c * pf);
        // Rail hops: GPU c of server s to GPU c of server s + 1.
        let rail_pairs = || {
            (0..m).flat_map(move |s| {
                (0..g).map(move |j| (servers[s][j] as usize, servers[(s + 1) % m][j] as usize))
            })
        };
        let (t_in, t_out) = match &self.tier {
            Some(t) => {
                let w0 = if t.all_nvlink {
                    t.nv_w
                } else {
                    self.fabric_w.min(self.share)
                };
                let t_in = self.params.latency_us(1) + c * b / w0;
                let t_out = self.alpha_of(rail_pairs()) + b / self.fabric_w.min(self.share);
                (t_in, t_out)
            }
            None => {
                // Every rank's hop in every ring, and the hand-overs.
                let mut pairs = Vec::with_capacity(p * g + m * g);
                for r in 0..g {
                    for (s, server) in servers.iter().enumerate() {
                        for k in 0..g {
                            let from = server[(r + k) % g] as usize;
                            let to = if k + 1 < g {
                                server[(r + k + 1) % g] as usize
                            } else if m > 1 && g > 1 {
                                pairs.push((server[r] as usize, servers[(s + 1) % m][r] as usize));
                                server[r] as usize
                            } else {
                                servers[(s + 1) % m][r] as usize
                            };
                            pairs.push((from, to));
                        }
                    }
                }
                let beta = self.spread_beta(&pairs)?.max(self.beta0());
                let t = self.alpha_of(pairs.into_iter()) + b * beta;
                (t, t)
            }
        };
        // A reduce-scatter send first reduces what it received (γ), the
        // all-gather's do not; the rail hop forwards without reducing.
        let reduce = self.params.gamma_us() * b;
        let step = |t_in: f64| match (m > 1, g > 1) {
            (true, true) => t_in.max(t_out),
            (false, _) => t_in,
            (true, false) => t_out,
        };
        let first = if m > 1 && g > 1 { t_in } else { 0.0 };
        Ok((pf - 1.0) * (step(t_in + reduce) + step(t_in)) + first)
    }

    /// Per pair of ranks, the latency of its flow and its β (µs per byte)
    /// when the pairs of its wave (`wave`, one per pair) send at once, and
    /// when every pair of `pairs` does: each flow split evenly over its
    /// equal-cost paths (`spray`, ideal balancing) on the routes the
    /// simulation takes (NVLink links inside a server with the tier), its
    /// β the most loaded link on its paths, the link's flows over its
    /// capacity.
    fn shared_costs(&self, pairs: &[(usize, usize)], wave: &[u32]) -> Result<Vec<(f64, f64, f64)>> {
        let none = SendSchedule::default();
        let mut routes = PlanRoutes::new(self, &none, 0, Policy::Spray);
        // Every pair's paths, listed once.
        let mut listed = Vec::new();
        let mut spans = Vec::with_capacity(pairs.len());
        for &(a, b) in pairs {
            let start = listed.len();
            routes.paths_between(a, b as u32, &mut listed)?;
            spans.push(start..listed.len());
        }
        let paths = |i: usize| &listed[spans[i].clone()];
        // The links of pair i with its share of each.
        let add = |load: &mut [f64], i: usize, touched: &mut Vec<u32>| {
            let ps = paths(i);
            for &l in ps.iter().flat_map(|r| r.links()) {
                touched.push(l);
                load[l as usize] += 1.0 / ps.len() as f64;
            }
        };
        let beta = |load: &[f64], i: usize| {
            paths(i)
                .iter()
                .flat_map(|r| r.links())
                .map(|&l| load[l as usize] / self.caps[l as usize])
                .fold(0.0, f64::max)
        };
        let mut all = vec![0.0f64; self.caps.len()];
        let mut touched = Vec::new();
        for i in 0..pairs.len() {
            add(&mut all, i, &mut touched);
        }
        let mut out: Vec<(f64, f64, f64)> = (0..pairs.len())
            .map(|i| {
                let latency = paths(i).iter().map(|r| r.latency).fold(0.0, f64::max);
                (latency, 0.0, beta(&all, i))
            })
            .collect();
        // Wave by wave, one load array cleared after each.
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&i| wave[i]);
        let mut load = vec![0.0f64; self.caps.len()];
        for group in order.chunk_by(|&x, &y| wave[x] == wave[y]) {
            touched.clear();
            for &i in group {
                add(&mut load, i, &mut touched);
            }
            for &i in group {
                out[i].1 = beta(&load, i);
            }
            for &l in &touched {
                load[l as usize] = 0.0;
            }
        }
        Ok(out)
    }

    /// The chunks per tree of `nccl-tree` for `n` bytes over `servers`:
    /// each tree's part in NCCL's chunks ([`schedules::nccl_tree_chunk`],
    /// with NCCL's depth estimate `g - 1 + ⌊log2 m⌋` for m servers of g
    /// ranks).
    fn nccl_tree_chunks(servers: &[Vec<u32>], n: u64) -> usize {
        let (m, g) = (servers.len(), servers.first().map_or(1, Vec::len));
        let trees = 2 * g.max(1);
        let depth = g.saturating_sub(1) + m.max(1).ilog2() as usize;
        let chunk = schedules::nccl_tree_chunk(n, trees, depth);
        let part = n.div_ceil(trees as u64);
        usize::try_from(part.div_ceil(chunk))
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// The closed form of `nccl-tree` (see [`schedules::nccl_trees`]) over
    /// the ranks of `servers`, `nf` bytes in `k` chunks per tree: with
    /// chunks of b = N/(2CK) bytes, every edge of every tree carries one
    /// chunk up and one down at a time. The first chunk of every tree
    /// climbs from the deepest ranks and comes back down to every rank in
    /// waves, as the step-synchronous mode numbers the steps (up: the
    /// senders of one height in every tree at once; down: the receivers of
    /// one depth), each hop costing its latency, b times its β with the
    /// other flows of its wave ([`Self::shared_costs`]) and, going up, the
    /// reduction of what the sender's children sent (γ per byte). The
    /// other K - 1 chunks follow one period apart, the period the slowest
    /// hop with every tree's flows at once (a chain hop its share of the
    /// GPU's NVLink links, a tree hop its share of the rail GPU's NIC).
    fn nccl_tree_closed_form(&self, servers: &[Vec<u32>], nf: f64, k: usize) -> Result<f64> {
        if self.ranks() <= 1 {
            return Ok(0.0);
        }
        let parents = schedules::nccl_tree_parents(servers)?;
        let b = nf / (parents.len() * k.max(1)) as f64;
        let gamma = self.params.gamma_us() * b;
        let mut shapes = Vec::with_capacity(parents.len());
        let (mut pairs, mut wave) = (Vec::new(), Vec::new());
        for parent in &parents {
            let shape = schedules::shape(parent)?;
            for (r, &up) in parent.iter().enumerate().filter(|(_, u)| **u != NONE) {
                pairs.extend([(r, up as usize), (up as usize, r)]);
                wave.extend([2 * shape.height[r], 2 * shape.depth[r] + 1]);
            }
            shapes.push(shape);
        }
        // The routes and their sharing do not depend on the size.
        let costs = match self.tree_costs.get() {
            Some(costs) => costs,
            None => {
                let costs = self.shared_costs(&pairs, &wave)?;
                self.tree_costs.get_or_init(|| costs)
            }
        };
        let mut period = 0.0f64;
        let mut fill = 0.0f64;
        let mut next = costs.iter();
        for (parent, shape) in parents.iter().zip(&shapes) {
            let kids = |v: usize| shape.children[v].len() as f64;
            let mut up_hop = vec![0.0; parent.len()];
            let mut down_hop = vec![0.0; parent.len()];
            for (r, _) in parent.iter().enumerate().filter(|(_, u)| **u != NONE) {
                let (up, down) = match (next.next(), next.next()) {
                    (Some(&u), Some(&d)) => (u, d),
                    _ => return Err(Error::Internal("a tree edge without its cost".to_string())),
                };
                let reduce = gamma * kids(r);
                up_hop[r] = up.0 + b * up.1 + reduce;
                down_hop[r] = down.0 + b * down.1;
                period = period
                    .max(up.0 + b * up.2 + reduce)
                    .max(down.0 + b * down.2);
            }
            // The first chunk: up by height, down by depth.
            let mut order: Vec<usize> = (0..parent.len()).collect();
            order.sort_by_key(|&v| shape.height[v]);
            let mut ready = vec![0.0f64; parent.len()];
            for &v in &order {
                if parent[v] != NONE {
                    let up = parent[v] as usize;
                    ready[up] = ready[up].max(ready[v] + up_hop[v]);
                }
            }
            let root = shape.root;
            ready[root] += gamma * kids(root);
            order.sort_by_key(|&v| shape.depth[v]);
            for &v in &order {
                if parent[v] != NONE {
                    ready[v] = ready[parent[v] as usize] + down_hop[v];
                }
            }
            fill = fill.max(ready.iter().copied().fold(0.0, f64::max));
        }
        Ok(fill + (k.max(1) - 1) as f64 * period)
    }
}
