//! The consumers of a streamed schedule ([`schedules::Sink`]): the
//! event-driven mode's lone pass ([`LoneSink`]) and the step-synchronous
//! mode ([`StepSink`]), each routing a send by its ranks as it comes.

use super::PlanRoutes;
use crate::error::Error;
use crate::estimate::sim::FlowRoute;
use crate::estimate::{fast, schedules, sim};

/// The lone pass as a [`schedules::Sink`]: each streamed send routed by
/// its ranks.
pub(super) struct LoneSink<'r, 'c> {
    pub(super) lone: sim::Lone,
    pub(super) routes: &'r mut PlanRoutes<'c>,
    pub(super) caps: &'r [f64],
}

impl schedules::Sink for LoneSink<'_, '_> {
    fn send(&mut self, src: u32, dst: u32, bytes: u64, step: u32, deps: &[u32], delay_us: f64) {
        if self.lone.failed {
            return;
        }
        let (lone, caps) = (&mut self.lone, self.caps);
        self.routes.with_single(src as usize, dst, |route| {
            lone.send(caps, dst, bytes, step, deps, &[], delay_us, route);
        });
    }

    fn reserve(&mut self, sends: usize) {
        self.lone.reserve(sends);
    }
}

/// The step-synchronous mode as a [`schedules::Sink`]: each streamed send
/// routed by its ranks, a step ended when the next begins.
pub(super) struct StepSink<'r, 'c> {
    pub(super) steps: fast::Steps,
    pub(super) routes: &'r mut PlanRoutes<'c>,
    pub(super) caps: &'r [f64],
    /// The current step.
    pub(super) step: Option<u32>,
    pub(super) paths: Vec<FlowRoute>,
    /// The first route that could not be found, or a step out of order.
    pub(super) error: Option<Error>,
}

impl schedules::Sink for StepSink<'_, '_> {
    fn send(&mut self, src: u32, dst: u32, bytes: u64, step: u32, _deps: &[u32], delay_us: f64) {
        if self.error.is_some() {
            return;
        }
        match self.step {
            Some(s) if s > step => {
                self.error = Some(Error::Internal(format!(
                    "a streamed schedule went back from step {s} to step {step}"
                )));
                return;
            }
            Some(s) if s < step => self.steps.end_step(self.caps, None),
            _ => {}
        }
        self.step = Some(step);
        self.paths.clear();
        match self
            .routes
            .paths_between(src as usize, dst, &mut self.paths)
        {
            Ok(()) => self.steps.add(bytes, delay_us, &self.paths),
            Err(e) => self.error = Some(e),
        }
    }
}
