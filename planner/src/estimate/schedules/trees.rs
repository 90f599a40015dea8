//! Tree schedules (`tree`, `pipelined-tree`, `double-tree` and the
//! overlapped trees): the binary tree, its mirror, their shapes and the
//! pipelined run of chunks over them.
//!
//! Trees use the in-order binary tree of NCCL (rank r with lowest set bit
//! b has parent `(r ^ b) | 2b`, or `r ^ b` when that is P or more; rank 0
//! is the root and has one child) and its mirror image `r -> P - 1 - r`
//! (shifted by one rank when P is odd) as the second tree of the double
//! tree, so that every rank is an inner node of at most one tree. The
//! message is split into K chunks; a rank sends chunk c to its parent once
//! it has chunk c from every child and its chunk c - 1 has been delivered
//! (one chunk at a time per link, as a pipeline does), and broadcasts the
//! same way. Without overlap the root starts the broadcast only after the
//! last chunk is reduced (C-Cube Fig. 5a); with overlap (the C-Cube
//! overlapped tree, Fig. 5c) chunk c goes down as soon as it is reduced.

use super::builder::Builder;
use super::{NONE, SendSchedule, StepPhase, check_sends, split};
use crate::error::{Error, Result};

/// The in-order binary tree over ranks `0..p`: `parent[r]`, `NONE` for the
/// root (rank 0).
pub(crate) fn btree(p: usize) -> Vec<u32> {
    let mut parent = vec![NONE; p];
    for (r, slot) in parent.iter_mut().enumerate().skip(1) {
        let b = r & r.wrapping_neg();
        let up = (r ^ b) | (b << 1);
        *slot = if up >= p { (r ^ b) as u32 } else { up as u32 };
    }
    parent
}

/// The second tree of the double tree: the mirror image of [`btree`]
/// (`r -> p - 1 - r`) for even p, the tree shifted by one rank for odd p.
pub(crate) fn mirror_tree(p: usize) -> Vec<u32> {
    let a = btree(p);
    (0..p)
        .map(|r| {
            if p.is_multiple_of(2) {
                match a[p - 1 - r] {
                    NONE => NONE,
                    up => (p - 1) as u32 - up,
                }
            } else {
                match a[(r + p - 1) % p] {
                    NONE => NONE,
                    up => ((up as usize + 1) % p) as u32,
                }
            }
        })
        .collect()
}

/// Children, depth and height (leaves 0) of every node of a tree.
pub(crate) struct TreeShape {
    pub children: Vec<Vec<u32>>,
    pub depth: Vec<u32>,
    pub height: Vec<u32>,
    pub root: usize,
}

pub(crate) fn shape(parent: &[u32]) -> Result<TreeShape> {
    let p = parent.len();
    let mut children = vec![Vec::new(); p];
    let mut root = None;
    for (r, &up) in parent.iter().enumerate() {
        if up == NONE {
            root = Some(r);
        } else {
            children[up as usize].push(r as u32);
        }
    }
    let root = root.ok_or_else(|| Error::Internal("a tree without a root".to_string()))?;
    // Depth-first order from the root: parents before children.
    let mut order = Vec::with_capacity(p);
    let mut stack = vec![root as u32];
    let mut depth = vec![0u32; p];
    while let Some(v) = stack.pop() {
        order.push(v);
        for &c in &children[v as usize] {
            depth[c as usize] = depth[v as usize] + 1;
            stack.push(c);
        }
    }
    if order.len() != p {
        return Err(Error::Internal(format!(
            "a tree over {p} ranks reaches only {} of them",
            order.len()
        )));
    }
    let mut height = vec![0u32; p];
    for &v in order.iter().rev() {
        if let Some(up) = parent.get(v as usize).copied().filter(|&u| u != NONE) {
            height[up as usize] = height[up as usize].max(height[v as usize] + 1);
        }
    }
    Ok(TreeShape {
        children,
        depth,
        height,
        root,
    })
}

/// A tree with its shape and the part of the message it carries.
struct TreeJob {
    parent: Vec<u32>,
    shape: TreeShape,
    chunks: Vec<u64>,
    /// `up[v * K + c]`: v's send of chunk c to its parent.
    up: Vec<u32>,
}

/// Pipelined tree allreduce of `n` bytes in `k` chunks per tree over the
/// given trees (one for the binary and overlapped trees, two for the
/// double tree), each tree carrying its share of the message (`split(n,
/// trees)`) in k chunks as equal as whole bytes allow.
pub(crate) fn trees(
    p: usize,
    parents: Vec<Vec<u32>>,
    n: u64,
    k: usize,
    overlap: bool,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let k = k.max(1);
    let chunks = split(n, parents.len())
        .into_iter()
        .map(|share| split(share, k))
        .collect();
    trees_in_chunks(p, parents, chunks, overlap, gamma_us)
}

/// Pipelined tree allreduce over the given trees, tree t sending the
/// chunks `chunks[t]` (bytes, in order; every tree the same number of
/// them, a chunk of 0 bytes an empty step that only synchronises).
pub(crate) fn trees_in_chunks(
    p: usize,
    parents: Vec<Vec<u32>>,
    chunks: Vec<Vec<u64>>,
    overlap: bool,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let k = chunks.first().map_or(0, Vec::len);
    if k == 0 || chunks.len() != parents.len() || chunks.iter().any(|c| c.len() != k) {
        return Err(Error::Internal(format!(
            "{} trees given {} lists of chunks, not all of one length above 0",
            parents.len(),
            chunks.len()
        )));
    }
    // Every chunk goes up and down every tree once per non-root rank.
    check_sends(p, 2 * parents.len() as u128 * k as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.s.chunks = k;
    if p == 1 {
        return b.finish();
    }
    let mut jobs = Vec::with_capacity(parents.len());
    for (parent, chunks) in parents.into_iter().zip(chunks) {
        let shape = shape(&parent)?;
        jobs.push(TreeJob {
            parent,
            shape,
            chunks,
            up: vec![NONE; p * k],
        });
    }
    // Reductions: chunk by chunk, children (lower height) first.
    for (t, job) in jobs.iter_mut().enumerate() {
        let mut by_height: Vec<u32> = (0..p as u32)
            .filter(|&v| job.parent[v as usize] != NONE)
            .collect();
        by_height.sort_by_key(|&v| (job.shape.height[v as usize], v));
        for c in 0..k {
            for &v in &by_height {
                let vi = v as usize;
                let mut deps: Vec<u32> = job.shape.children[vi]
                    .iter()
                    .map(|&u| job.up[u as usize * k + c])
                    .collect();
                if c > 0 {
                    deps.push(job.up[vi * k + c - 1]);
                }
                let kids = job.shape.children[vi].len() as f64;
                let step = b.step(job.shape.height[vi] as usize + c, StepPhase::Reduce, None);
                let delay = gamma_us * kids * job.chunks[c] as f64;
                job.up[vi * k + c] = b.push(v, job.parent[vi], job.chunks[c], step, &deps, delay);
                b.s.chunk.push((t * k + c) as u32);
            }
        }
    }
    // Broadcasts: chunk by chunk, parents (lower depth) first.
    for (t, job) in jobs.iter().enumerate() {
        let root = job.shape.root;
        let h = job.shape.height[root] as usize;
        let base = if overlap { h } else { h + k - 1 };
        let mut by_depth: Vec<u32> = (0..p as u32)
            .filter(|&v| !job.shape.children[v as usize].is_empty())
            .collect();
        by_depth.sort_by_key(|&v| (job.shape.depth[v as usize], v));
        // down[(v, child index, c)] of the previous chunk (a binary tree
        // has two children, a server's head in `nccl-tree` three), and
        // the broadcast receive of every rank for the current chunk.
        let mut prev_down: Vec<u32> = vec![NONE; 3 * p];
        let mut recv: Vec<u32> = vec![NONE; p];
        for c in 0..k {
            for &v in &by_depth {
                let vi = v as usize;
                let kids = &job.shape.children[vi];
                let mut deps: Vec<u32> = Vec::with_capacity(kids.len() + 2);
                let mut delay = 0.0;
                if vi == root {
                    deps.extend(kids.iter().map(|&u| job.up[u as usize * k + c]));
                    if !overlap && c == 0 {
                        deps.extend(kids.iter().map(|&u| job.up[u as usize * k + k - 1]));
                    }
                    // The root reduces chunk c from its children before
                    // it goes down. Without overlap it reduced every chunk
                    // as it arrived during the reduction, so only the last
                    // one delays the first broadcast.
                    let reduced = match (overlap, c) {
                        (true, _) => job.chunks[c],
                        (false, 0) => job.chunks[k - 1],
                        (false, _) => 0,
                    };
                    delay = gamma_us * kids.len() as f64 * reduced as f64;
                } else {
                    deps.push(recv[vi]);
                }
                let step = b.step(
                    base + c + job.shape.depth[vi] as usize,
                    StepPhase::Broadcast,
                    None,
                );
                for (x, &u) in kids.iter().enumerate() {
                    let slot = 3 * vi + x.min(2);
                    let mut d = deps.clone();
                    d.push(prev_down[slot]);
                    let id = b.push(v, u, job.chunks[c], step, &d, delay);
                    b.s.chunk.push((t * k + c) as u32);
                    prev_down[slot] = id;
                    recv[u as usize] = id;
                }
            }
        }
    }
    b.finish()
}
