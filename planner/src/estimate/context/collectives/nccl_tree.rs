//! `nccl-tree`: NCCL's double binary trees between servers, a chain over
//! NVLink inside each, one pair of trees per rail, in NCCL's chunks; its
//! schedule from [`schedules::nccl_trees`].

use super::{AlgorithmRow, Collective};
use crate::error::{Error, Result};
use crate::estimate::SendSchedule;
use crate::estimate::context::{Context, PlanRoutes};
use crate::estimate::schedules::{self, NONE};
use crate::network::Policy;

/// NCCL-style double binary trees, one pair per rail.
#[derive(Debug)]
pub(super) struct NcclTree;

/// `nccl-tree`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "NCCL-style double binary trees, one pair per NIC of a server (C = ranks per server), each tree with 1/(2C) of the message in NCCL's chunks: inside a server a chain over NVLink from the GPU of rail c through the others, between servers NCCL's two complementary binary trees over the servers' rail-c GPUs, reduce up and broadcast down at once",
    closed_form: "the first chunk's way up the deepest chain and tree and back down, each hop at its link's share of every tree's flows (NVLink for chain hops, the rail for tree hops), plus K - 1 periods of the most loaded link; α per hop",
    in_order: true,
    colour: [140, 162, 82],
    collective: &NcclTree,
};

impl Collective for NcclTree {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let servers = ctx.server_groups()?;
        let k = chunks(&servers, n);
        Ok((closed_form(ctx, &servers, n as f64, k)?, k))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, chunks: usize) -> Result<SendSchedule> {
        let g = ctx.params.gamma_us();
        schedules::nccl_trees(&ctx.server_groups()?, n, chunks, g)
    }
}

/// The chunks per tree of `nccl-tree` for `n` bytes over `servers`:
/// each tree's part in NCCL's chunks ([`schedules::nccl_tree_chunk`],
/// with NCCL's depth estimate [`schedules::nccl_tree_depth`]).
fn chunks(servers: &[Vec<u32>], n: u64) -> usize {
    let g = servers.first().map_or(1, Vec::len);
    let trees = 2 * g.max(1);
    let depth = schedules::nccl_tree_depth(servers);
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
/// other flows of its wave ([`shared_costs`]) and, going up, the
/// reduction of what the sender's children sent (γ per byte). The
/// other K - 1 chunks follow one period apart, the period the slowest
/// hop with every tree's flows at once (a chain hop its share of the
/// GPU's NVLink links, a tree hop its share of the rail GPU's NIC).
fn closed_form(ctx: &Context<'_>, servers: &[Vec<u32>], nf: f64, k: usize) -> Result<f64> {
    if ctx.ranks() <= 1 {
        return Ok(0.0);
    }
    let parents = schedules::nccl_tree_parents(servers)?;
    let b = nf / (parents.len() * k.max(1)) as f64;
    let gamma = ctx.params.gamma_us() * b;
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
    let costs: &Vec<(f64, f64, f64)> = ctx.cached(|| shared_costs(ctx, &pairs, &wave))?;
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

/// Per pair of ranks, the latency of its flow and its β (µs per byte)
/// when the pairs of its wave (`wave`, one per pair) send at once, and
/// when every pair of `pairs` does: each flow split evenly over its
/// equal-cost paths (`spray`, ideal balancing) on the routes the
/// simulation takes (NVLink links inside a server with the tier), its
/// β the most loaded link on its paths, the link's flows over its
/// capacity.
fn shared_costs(
    ctx: &Context<'_>,
    pairs: &[(usize, usize)],
    wave: &[u32],
) -> Result<Vec<(f64, f64, f64)>> {
    let none = SendSchedule::default();
    let mut routes = PlanRoutes::new(ctx, &none, 0, Policy::Spray);
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
            .map(|&l| load[l as usize] / ctx.caps[l as usize])
            .fold(0.0, f64::max)
    };
    let mut all = vec![0.0f64; ctx.caps.len()];
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
    let mut load = vec![0.0f64; ctx.caps.len()];
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
