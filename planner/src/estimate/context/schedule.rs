//! The send schedule of an algorithm on a context, dispatched to its
//! [`Collective`](super::collectives::Collective) (built by the family
//! modules of [`crate::estimate::schedules`]); and [`Context::streamed`], the schedules
//! made of ring and halving-doubling steps streamed into the lone pass or
//! the step-synchronous mode without being stored.

use super::sinks::{LoneSink, StepSink};
use super::{Context, PlanRoutes};
use crate::error::Result;
use crate::estimate::schedules::{self, Shape};
use crate::estimate::{Channels, Method, SendSchedule, fast, sim};
use crate::network::Policy;

impl Context<'_> {
    /// The shape of the algorithm's schedule when it is made of ring and
    /// halving-doubling steps (which can be streamed: [`Shape`]).
    fn shape(&self) -> Result<Option<Shape>> {
        self.collective.shape(self)
    }

    /// True when the schedule can be streamed: made of ring and
    /// halving-doubling steps ([`Shape`]), and no pair has a channel of
    /// its own (`channels=pair` reads the whole schedule).
    pub(super) fn streams(&self) -> Result<bool> {
        Ok(self.params.channels != Channels::Pair && self.shape()?.is_some())
    }

    /// The send-level schedule of `n` bytes in `chunks` chunks.
    pub(in crate::estimate) fn schedule(&self, n: u64, chunks: usize) -> Result<SendSchedule> {
        self.collective.schedule(self, n, chunks)
    }

    /// The run of `n` bytes under `seed` and `routing` over the schedule
    /// streamed (never stored), with what is left of the schedule: the
    /// step-synchronous mode ([`fast::Steps`]), or the event-driven mode's
    /// lone pass ([`sim::Lone`]). `None` when the schedule cannot be
    /// streamed (not made of ring and halving-doubling steps, or pairs with
    /// channels of their own), or, event-driven, when flows share a link:
    /// then the mode runs on the stored schedule. The sends routed are
    /// counted into `sends`.
    pub(in crate::estimate) fn streamed(
        &self,
        n: u64,
        seed: u64,
        routing: Policy,
        method: Method,
        sends: Option<&std::sync::Arc<crate::estimate::SendProgress>>,
    ) -> Result<Option<(sim::Outcome, schedules::Streamed)>> {
        if !matches!(method, Method::Event | Method::Fast) || !self.streams()? {
            return Ok(None);
        }
        let Some(shape) = self.shape()? else {
            return Ok(None);
        };
        let no_sends = SendSchedule::default();
        let mut routes = PlanRoutes::new(self, &no_sends, seed, routing).counting(sends);
        let caps = routes.caps();
        let p = self.ranks();
        let g = self.params.gamma_us();
        if method == Method::Fast {
            let mut sink = StepSink {
                steps: fast::Steps::new(caps.len()),
                routes: &mut routes,
                caps: &caps,
                step: None,
                paths: Vec::new(),
                error: None,
            };
            let streamed = schedules::stream(p, &shape, n, g, &mut sink)?;
            if let Some(e) = sink.error {
                return Err(e);
            }
            let mut steps = sink.steps;
            if sink.step.is_some() {
                steps.end_step(&caps, None);
            }
            let o = steps.finish(&streamed.tail_us);
            routes.settle(streamed.sends as u64);
            let out = sim::Outcome {
                time_us: o.time_us,
                max_link_flows: o.max_link_flows,
                events: 0,
                recomputes: 0,
            };
            return Ok(Some((out, streamed)));
        }
        let lone = sim::Lone::new(p, 0, self.params.eager_bytes, false, false, false);
        let mut sink = LoneSink {
            lone,
            routes: &mut routes,
            caps: &caps,
        };
        let streamed = schedules::stream(p, &shape, n, g, &mut sink)?;
        let LoneSink { lone, .. } = sink;
        let run = lone.finish(&streamed.final_recv, &streamed.tail_us);
        if run.is_some() {
            routes.settle(streamed.sends as u64);
        }
        Ok(run.map(|(out, _, _)| (out, streamed)))
    }
}
