//! The trees of MG-WFBP and C-Cube: `tree`, `pipelined-tree`,
//! `double-tree`, `overlapped-tree` and `overlapped-double-tree`, one
//! [`Tree`] row each with what a step costs (the table below), their
//! schedule from [`schedules::trees`].
//!
//! Per step, with chunks of N/K bytes (N/2K per tree for the double
//! trees), a rank moves through its NIC (`channels=fabric`):
//!
//! | algorithm | steps | per step |
//! |---|---|---|
//! | `tree` (K = 1) | `2 log P` | MG-WFBP's row: 2β and 2γ |
//! | `pipelined-tree` | `2(h + K)` | reduce: two chunks in (2β) and their reduction (2γ); broadcast: two out (2β) |
//! | `double-tree` | `2(h + K)` | two half chunks each way (β), the reduction of two halves (γ) in the reduce phase |
//! | `overlapped-tree` | `2h + K` | one chunk up and two down (3β), two reduced (2γ) |
//! | `overlapped-double-tree` | `2h + K` | four half chunks out (2β), two halves reduced (γ) |
//!
//! With `channels=pair` every tree edge is a channel of its own (C-Cube's
//! DGX-1), so a step costs one chunk per channel: β for the single
//! trees (eq. 6 for `pipelined-tree`, eq. 7 for `overlapped-tree`),
//! β/2 for the double trees; the reduction is the same.

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{Channels, SendSchedule, models, schedules};

/// What a step of a tree algorithm costs, in multiples of α, β·N and γ·N.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// One chunk: MG-WFBP's binary tree with `beta` β and `gamma` γ.
    Whole { beta: f64, gamma: f64 },
    /// K chunks at the whole-number optimum of [`models::pipeline`]:
    /// `heights` times the tree height of fixed steps, and per K-step
    /// unit `alpha` α and `beta` β + `gamma` γ.
    Pipelined {
        heights: f64,
        alpha: f64,
        beta: f64,
        gamma: f64,
    },
}

/// A tree algorithm.
#[derive(Debug)]
pub(super) struct Tree {
    /// Two mirrored trees, half the message each (one tree otherwise).
    double: bool,
    /// The broadcast of chunk c starts as soon as it is reduced.
    overlapped: bool,
    /// A step with `channels=fabric`.
    fabric: Step,
    /// A step with `channels=pair`.
    pair: Step,
}

/// `tree`: binary tree, reduce then broadcast, one chunk.
pub(super) const TREE: Tree = Tree {
    double: false,
    overlapped: false,
    fabric: Step::Whole {
        beta: 2.0,
        gamma: 2.0,
    },
    pair: Step::Whole {
        beta: 1.0,
        gamma: 2.0,
    },
};

/// `pipelined-tree`: C-Cube's baseline (Fig. 5a, eq. 3-6).
pub(super) const PIPELINED_TREE: Tree = Tree {
    double: false,
    overlapped: false,
    fabric: Step::Pipelined {
        heights: 1.0,
        alpha: 2.0,
        beta: 4.0,
        gamma: 2.0,
    },
    pair: Step::Pipelined {
        heights: 1.0,
        alpha: 2.0,
        beta: 2.0,
        gamma: 2.0,
    },
};

/// `double-tree`: NCCL's double binary tree, pipelined.
pub(super) const DOUBLE_TREE: Tree = Tree {
    double: true,
    overlapped: false,
    fabric: Step::Pipelined {
        heights: 1.0,
        alpha: 2.0,
        beta: 2.0,
        gamma: 1.0,
    },
    pair: Step::Pipelined {
        heights: 1.0,
        alpha: 2.0,
        beta: 1.0,
        gamma: 1.0,
    },
};

/// `overlapped-tree`: the C-Cube overlapped tree.
pub(super) const OVERLAPPED_TREE: Tree = Tree {
    double: false,
    overlapped: true,
    fabric: Step::Pipelined {
        heights: 2.0,
        alpha: 1.0,
        beta: 3.0,
        gamma: 2.0,
    },
    pair: Step::Pipelined {
        heights: 2.0,
        alpha: 1.0,
        beta: 1.0,
        gamma: 2.0,
    },
};

/// `overlapped-double-tree`: C-Cube Fig. 6d, two mirrored trees, each
/// overlapped.
pub(super) const OVERLAPPED_DOUBLE_TREE: Tree = Tree {
    double: true,
    overlapped: true,
    fabric: Step::Pipelined {
        heights: 2.0,
        alpha: 1.0,
        beta: 2.0,
        gamma: 1.0,
    },
    pair: Step::Pipelined {
        heights: 2.0,
        alpha: 1.0,
        beta: 0.5,
        gamma: 1.0,
    },
};

impl Tree {
    /// The parent arrays of the algorithm's trees over `p` ranks.
    fn trees(&self, p: usize) -> Vec<Vec<u32>> {
        if self.double {
            vec![schedules::btree(p), schedules::mirror_tree(p)]
        } else {
            vec![schedules::btree(p)]
        }
    }
}

/// `tree`'s row of the algorithm table.
pub(super) const TREE_ROW: AlgorithmRow = AlgorithmRow {
    description: "binary tree, reduce then broadcast, one chunk",
    closed_form: "MG-WFBP Table II binary tree with the NIC shared by two children (2β, 2γ)",
    in_order: true,
    colour: [214, 39, 40],
    collective: &TREE,
};

/// `pipelined-tree`'s row of the algorithm table.
pub(super) const PIPELINED_TREE_ROW: AlgorithmRow = AlgorithmRow {
    description: "one binary tree, K chunks, the broadcast after the last chunk is reduced",
    closed_form: "C-Cube eq. 3–6 (with γ), K at its whole-number optimum; the NIC carries two chunks a step (2β), one per tree edge with channels=pair",
    in_order: true,
    colour: [188, 189, 34],
    collective: &PIPELINED_TREE,
};

/// `double-tree`'s row of the algorithm table.
pub(super) const DOUBLE_TREE_ROW: AlgorithmRow = AlgorithmRow {
    description: "two mirrored binary trees, half the message each, K chunks",
    closed_form: "C-Cube eq. 3–6 (with γ), K at its whole-number optimum",
    in_order: true,
    colour: [148, 103, 189],
    collective: &DOUBLE_TREE,
};

/// `overlapped-tree`'s row of the algorithm table.
pub(super) const OVERLAPPED_TREE_ROW: AlgorithmRow = AlgorithmRow {
    description: "one binary tree, broadcast of chunk c as soon as it is reduced",
    closed_form: "C-Cube eq. 7's step count `2 log P + K`; a step moves one chunk per tree edge (βN, eq. 7) with channels=pair, three chunks through one NIC (3βN) otherwise",
    in_order: true,
    colour: [140, 86, 75],
    collective: &OVERLAPPED_TREE,
};

/// `overlapped-double-tree`'s row of the algorithm table.
pub(super) const OVERLAPPED_DOUBLE_TREE_ROW: AlgorithmRow = AlgorithmRow {
    description: "two mirrored binary trees, half the message each, broadcast of chunk c as soon as it is reduced",
    closed_form: "C-Cube eq. 7's step count `2 log P + K` on half the message per tree; βN/2 with channels=pair, 2βN through one NIC",
    in_order: true,
    colour: [255, 187, 120],
    collective: &OVERLAPPED_DOUBLE_TREE,
};

impl Collective for Tree {
    /// The time over the context's ranks and the chunk count K.
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let p = ctx.ranks();
        let nf = n as f64;
        let max_chunks = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        let g = ctx.params.gamma_us();
        let b = ctx.beta0();
        let pair = ctx.params.channels == Channels::Pair;
        let trees = self.trees(p);
        let a = if pair {
            ctx.params.latency_us(0)
        } else {
            ctx.tree_alpha(&trees)
        };
        let mut h = 0u32;
        for t in &trees {
            let shape = schedules::shape(t)?;
            h = h.max(shape.height[shape.root]);
        }
        let h = f64::from(h);
        // (fixed steps, α per K-step unit, bytes term per K-step unit).
        let (fixed, alpha, bytes) = match if pair { self.pair } else { self.fabric } {
            Step::Whole { beta, gamma } => {
                return Ok((models::binary_tree(p, nf, a, beta * b, gamma * g), 1));
            }
            Step::Pipelined {
                heights,
                alpha,
                beta,
                gamma,
            } => (heights * h, alpha * a, beta * b + gamma * g),
        };
        let best = models::pipeline(fixed, alpha, bytes * nf, max_chunks);
        Ok((best.time_us, best.chunks))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, chunks: usize) -> Result<SendSchedule> {
        let p = ctx.ranks();
        let chunks = match self.fabric {
            Step::Whole { .. } => 1,
            Step::Pipelined { .. } => chunks,
        };
        let g = ctx.params.gamma_us();
        schedules::trees(p, self.trees(p), n, chunks, self.overlapped, g)
    }

    fn pair_channels(&self) -> bool {
        true
    }
}
