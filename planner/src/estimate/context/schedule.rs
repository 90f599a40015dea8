//! The send schedule of every algorithm on a context: one `Algorithm::`
//! arm each in [`Context::schedule`], built by the family modules of
//! [`crate::estimate::schedules`]; and [`Context::streamed`], the schedules
//! made of ring and halving-doubling steps streamed into the lone pass or
//! the step-synchronous mode without being stored.

use super::geometry::level_kind;
use super::sinks::{LoneSink, StepSink};
use super::{Context, PlanRoutes};
use crate::error::{Error, Result};
use crate::estimate::schedules::{self, Kind, Shape};
use crate::estimate::{Algorithm, Channels, Method, SendSchedule, fast, sim};
use crate::network::Policy;

impl Context<'_> {
    /// The shape of the algorithm's schedule when it is made of ring and
    /// halving-doubling steps (which can be streamed: [`Shape`]).
    fn shape(&self) -> Result<Option<Shape>> {
        let p = self.ranks();
        Ok(Some(match self.algorithm {
            Algorithm::Ring => Shape::Levels {
                levels: vec![(vec![(0..p as u32).collect()], Kind::Ring)],
                labelled: false,
            },
            Algorithm::Hd | Algorithm::Hdrm => Shape::FoldedHd,
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                let levels = self.levels(!ring_only)?;
                let levels = levels
                    .groups
                    .into_iter()
                    .map(|groups| {
                        let kind = level_kind(ring_only, groups[0].len());
                        (groups, kind)
                    })
                    .collect();
                Shape::Levels {
                    levels,
                    labelled: true,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// True when the schedule can be streamed: made of ring and
    /// halving-doubling steps ([`Shape`]), and no pair has a channel of
    /// its own (`channels=pair` reads the whole schedule).
    pub(super) fn streams(&self) -> Result<bool> {
        Ok(self.params.channels != Channels::Pair && self.shape()?.is_some())
    }

    /// The send-level schedule of `n` bytes.
    pub(in crate::estimate) fn schedule(&self, n: u64, chunks: usize) -> Result<SendSchedule> {
        let p = self.ranks();
        let g = self.params.gamma_us();
        if let Some(shape) = self.shape()? {
            return schedules::build(p, &shape, n, g);
        }
        match self.algorithm {
            Algorithm::Ring
            | Algorithm::Hd
            | Algorithm::Hdrm
            | Algorithm::BlueConnect
            | Algorithm::TwoD => Err(Error::Internal(format!(
                "{} has a shape, built above",
                self.algorithm.as_str()
            ))),
            Algorithm::Tree => schedules::trees(p, vec![schedules::btree(p)], n, 1, false, g),
            Algorithm::PipelinedTree => {
                schedules::trees(p, vec![schedules::btree(p)], n, chunks, false, g)
            }
            Algorithm::DoubleTree | Algorithm::OverlappedDoubleTree => schedules::trees(
                p,
                vec![schedules::btree(p), schedules::mirror_tree(p)],
                n,
                chunks,
                self.algorithm == Algorithm::OverlappedDoubleTree,
                g,
            ),
            Algorithm::OverlappedTree => {
                schedules::trees(p, vec![schedules::btree(p)], n, chunks, true, g)
            }
            Algorithm::TwoLevel => {
                let levels = self.levels(false)?;
                let masters = levels
                    .groups
                    .get(1)
                    .map_or_else(|| vec![0], |l| l[0].clone());
                schedules::two_level(p, &levels.groups[0], &masters, n, g)
            }
            Algorithm::TopKAllGather => schedules::topk_allgather(
                p,
                n,
                self.params.density,
                self.params.gradient_bytes,
                g,
                self.params.topk_us(),
            ),
            Algorithm::ParameterServer => schedules::parameter_server(p, n, g),
            Algorithm::NcclRing => schedules::nccl_rings(&self.server_groups()?, n, g),
            Algorithm::NcclTree => schedules::nccl_trees(&self.server_groups()?, n, chunks, g),
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                schedules::hitopk(
                    p,
                    &levels.groups[0],
                    &levels.groups[1],
                    n,
                    self.params.density,
                    self.params.gradient_bytes,
                    g,
                    self.params.topk_us(),
                )
            }
        }
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
