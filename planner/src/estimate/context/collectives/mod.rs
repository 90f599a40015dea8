//! One module per allreduce algorithm (or family), each implementing
//! [`Collective`]: what the estimate needs of an algorithm, its closed form
//! on a [`Context`], its send schedule, the shape a ring or
//! halving-doubling schedule streams from, and whether `channels=pair`
//! applies; and each holding the algorithm's [`AlgorithmRow`] (what it
//! simulates, its closed form, whether its chunks come back in order, its
//! plot colour, its implementation), a `ROW` const (`<NAME>_ROW` in a
//! family module).
//!
//! The registry [`row`] is made of `algorithm.rs`'s `algorithm_list!`,
//! whose line for an algorithm names its row here (`ring::ROW`): the one
//! `match` on [`Algorithm`] in `estimate/` (a test in `tests/it/layers.rs`
//! holds that no other code of `estimate/` names a variant), without a
//! catch-all, so a line whose row is missing does not compile.
//!
//! A new algorithm is its module here (its `mod` line below) implementing
//! [`Collective`], with its `ROW` (its builder beside it, or in a family
//! file of [`crate::estimate::schedules`] when several algorithms share
//! it), and its one line in `algorithm_list!`.

mod hd;
mod hierarchical;
mod hitopk;
mod nccl_ring;
mod nccl_tree;
mod ps;
mod ring;
mod topk;
mod trees;
mod two_level;

use super::Context;
use crate::error::{Error, Result};
use crate::estimate::schedules::{self, Shape};
use crate::estimate::{Algorithm, SendSchedule};

/// What the estimate needs of one allreduce algorithm.
pub(super) trait Collective: std::fmt::Debug + Sync {
    /// The closed-form time of `n` bytes over the context's ranks (more
    /// than one), µs, and the chunk count of a pipelined schedule (1
    /// otherwise), which [`Collective::schedule`] is given.
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)>;

    /// The send schedule of `n` bytes in `chunks` chunks.
    fn schedule(&self, ctx: &Context<'_>, n: u64, chunks: usize) -> Result<SendSchedule>;

    /// The schedule's [`Shape`] when it is made of ring and
    /// halving-doubling steps, which can be streamed without being stored;
    /// `None` (the default) when it cannot.
    fn shape(&self, _ctx: &Context<'_>) -> Result<Option<Shape>> {
        Ok(None)
    }

    /// True when `channels=pair` (C-Cube's channel per tree edge) applies:
    /// the pipelined trees.
    fn pair_channels(&self) -> bool {
        false
    }
}

/// What the estimate alone reads of an algorithm, beside its
/// implementation: its row, in its module (what every layer reads is its
/// [`crate::algorithm::Info`], on its line of `algorithm_list!`).
#[derive(Debug)]
pub struct AlgorithmRow {
    /// What is simulated, in words.
    pub description: &'static str,
    /// The closed form the estimates use.
    pub closed_form: &'static str,
    /// True when the reduced chunks come back in order (the trees), which
    /// C-Cube streams into the next forward pass.
    pub in_order: bool,
    /// The colour of its series in plots, RGB.
    pub colour: [u8; 3],
    /// What the algorithm does.
    pub(super) collective: &'static dyn Collective,
}

/// Makes the registry [`row`] from `algorithm_list!`: one arm a line.
macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident => $info:expr, $row:path; )+) => {
        /// The registry: every algorithm's row, with its implementation.
        pub fn row(algorithm: Algorithm) -> &'static AlgorithmRow {
            match algorithm {
                $( Algorithm::$variant => &$row, )+
            }
        }
    };
}

crate::algorithm::algorithm_list!(registry);

/// The implementation of an algorithm, from its row.
pub(super) fn of(algorithm: Algorithm) -> &'static dyn Collective {
    row(algorithm).collective
}

/// The names of the algorithms `channels=pair` applies to, as a message
/// lists them (`a, b or c`).
pub(super) fn pair_channel_names() -> String {
    let names: Vec<&str> = Algorithm::ALL
        .iter()
        .filter(|a| of(**a).pair_channels())
        .map(|a| a.as_str())
        .collect();
    crate::text::or_list(&names)
}

/// The send schedule of an algorithm with a [`Shape`], built from it.
fn shaped(collective: &dyn Collective, ctx: &Context<'_>, n: u64) -> Result<SendSchedule> {
    match collective.shape(ctx)? {
        Some(shape) => schedules::build(ctx.ranks(), &shape, n, ctx.params.gamma_us()),
        None => Err(Error::Internal(format!(
            "{} has no shape to build its schedule from",
            ctx.algorithm.as_str()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::RankSchedule;
    use crate::design::design;
    use crate::design::shorthand::{self, Shorthand};
    use crate::estimate::{Channels, Params};

    /// Every algorithm has its row and implementation, every row its own
    /// plot colour, and the row, the line and the implementation agree:
    /// the algorithms whose chunks come back in order (`in_order`) are the
    /// ones whose schedule is made of chunks; `channels=pair` is taken by
    /// chunked ones only; the rank schedule `ranks` verifies is the shape
    /// the estimate streams.
    #[test]
    fn every_algorithm_is_registered_and_agrees_with_its_row() {
        let (inv, opts) = shorthand::bigraph(4, 16, &Shorthand::default()).unwrap();
        let plan = design(&inv, &opts).unwrap();
        let params = Params::default();
        for (i, &a) in Algorithm::ALL.iter().enumerate() {
            let info = a.info();
            let row = row(a);
            for &b in &Algorithm::ALL[i + 1..] {
                assert_ne!(row.colour, super::row(b).colour, "{a:?} and {b:?}");
            }
            let ctx = Context::new(&plan, a, None, &params).unwrap();
            let (t, chunks) = ctx.closed_form(1 << 20).unwrap();
            assert!(t > 0.0 && t.is_finite(), "{a:?}: {t}");
            let sched = ctx.schedule(1 << 20, chunks).unwrap();
            assert_eq!(!sched.chunk.is_empty(), row.in_order, "{a:?}");
            let collective = of(a);
            assert!(!collective.pair_channels() || row.in_order, "{a:?}");
            let shape = collective.shape(&ctx).unwrap();
            match info.rank_schedule {
                Some(RankSchedule::HalvingDoubling) => {
                    assert!(matches!(shape, Some(Shape::FoldedHd)), "{a:?}");
                }
                Some(RankSchedule::Ring) => assert!(
                    matches!(&shape, Some(Shape::Levels { levels, .. }) if levels.len() == 1),
                    "{a:?}"
                ),
                None => {}
            }
            if shape.is_some() {
                assert!(!row.in_order, "{a:?}");
            }
            let pair = Params {
                channels: Channels::Pair,
                ..Params::default()
            };
            assert_eq!(
                Context::new(&plan, a, None, &pair).is_ok(),
                collective.pair_channels(),
                "{a:?}"
            );
        }
        assert_eq!(
            pair_channel_names(),
            "tree, pipelined-tree, double-tree, overlapped-tree or overlapped-double-tree"
        );
    }
}
