//! One allreduce iteration over the mesh: each step's send and receive run together, received elements are summed or copied as they arrive, and every step is timed.

use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::schedule::Action;
use super::transport::Mesh;

/// Where a step runs, for errors and hooks.
#[derive(Debug, Clone, Copy)]
pub struct Where<'a> {
    /// The step.
    pub action: &'a Action,
    /// Iteration within the size, from 0 (warm-up included).
    pub iteration: usize,
    /// The message size in bytes.
    pub bytes: u64,
}

impl Where<'_> {
    /// `step reduce-scatter 2 (iteration 3, size 1048576 B)`.
    pub fn describe(&self) -> String {
        format!(
            "step {} (iteration {}, size {} B)",
            self.action.name(),
            self.iteration,
            self.bytes
        )
    }
}

/// Runs `actions` on `buf` once. `times[s]` receives the time of step
/// `s`; `after_step(s)` runs after every step (the step barrier).
#[allow(clippy::too_many_arguments)] // the run's state, borrowed apart
pub fn run_iteration(
    mesh: &Mesh,
    actions: &[Action],
    buf: &mut [f32],
    scratch: &mut Vec<f32>,
    segment: usize,
    iteration: usize,
    times: &mut [Duration],
    after_step: &mut dyn FnMut(usize, &Where) -> Result<()>,
) -> Result<()> {
    let bytes = buf.len() as u64 * 4;
    for (s, action) in actions.iter().enumerate() {
        let at = Where {
            action,
            iteration,
            bytes,
        };
        let describe = || at.describe();
        let start = Instant::now();
        match (&action.send, &action.recv) {
            (None, None) => {}
            (Some((to, range)), None) => mesh.exchange(
                Some((*to, &buf[range.clone()])),
                None,
                scratch,
                segment,
                &describe,
            )?,
            (None, Some((from, range, c))) => mesh.exchange(
                None,
                Some((*from, &mut buf[range.clone()], *c)),
                scratch,
                segment,
                &describe,
            )?,
            (Some((to, sr)), Some((from, rr, c))) => {
                // The ranges of one step never overlap: split the buffer
                // between them.
                let (send, recv): (&[f32], &mut [f32]) = if sr.end <= rr.start {
                    let (a, b) = buf.split_at_mut(rr.start);
                    (&a[sr.clone()], &mut b[..rr.len()])
                } else if rr.end <= sr.start {
                    let (a, b) = buf.split_at_mut(sr.start);
                    (&b[..sr.len()], &mut a[rr.clone()])
                } else {
                    return Err(Error::Internal(format!(
                        "{}: the sent range {sr:?} overlaps the received range {rr:?}",
                        describe()
                    )));
                };
                mesh.exchange(
                    Some((*to, send)),
                    Some((*from, recv, *c)),
                    scratch,
                    segment,
                    &describe,
                )?;
            }
        }
        times[s] += start.elapsed();
        after_step(s, &at)?;
    }
    Ok(())
}
