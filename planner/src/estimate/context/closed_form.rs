//! The closed form of an algorithm on a context: the dispatch to its
//! [`Collective`](super::collectives::Collective) (the equations in
//! [`crate::estimate::models`], α and β from [`super::geometry`]), and the
//! context's one slot for the costs an algorithm computes at the first
//! size and keeps, as they do not depend on the size.

use std::any::Any;

use super::Context;
use crate::error::{Error, Result};

impl Context<'_> {
    /// The closed-form time of `n` bytes and the chunk count of a
    /// pipelined schedule.
    pub(in crate::estimate) fn closed_form(&self, n: u64) -> Result<(f64, usize)> {
        if self.ranks() <= 1 {
            return Ok((0.0, 1));
        }
        self.collective.closed_form(self, n)
    }

    /// The costs the context's algorithm keeps across sizes: `compute`d
    /// at the first call, the same value after.
    pub(super) fn cached<T: Any + Send + Sync>(
        &self,
        compute: impl FnOnce() -> Result<T>,
    ) -> Result<&T> {
        let kept = match self.costs.get() {
            Some(kept) => kept,
            None => {
                let value: Box<dyn Any + Send + Sync> = Box::new(compute()?);
                self.costs.get_or_init(|| value)
            }
        };
        kept.downcast_ref::<T>().ok_or_else(|| {
            Error::Internal(format!(
                "{} kept costs of another type",
                self.algorithm.as_str()
            ))
        })
    }
}
