//! One estimate on a context: the closed form, then for a simulation every
//! ECMP seed (streamed where the schedule allows, else on the stored
//! schedule, a seed that routes as the last one reusing its time) in the
//! event-driven, step-synchronous or packet mode, and the median.

use super::{Context, PlanRoutes};
use crate::error::{Error, Result};
use crate::estimate::{
    Estimate, Method, Options, PacketStats, ScheduleStats, bandwidths, check_size, fast, packet,
    schedules, sim,
};

impl Context<'_> {
    pub(in crate::estimate) fn estimate(&self, n: u64, options: &Options) -> Result<Estimate> {
        check_size(n)?;
        let (closed, chunks) = self.closed_form(n)?;
        let p = self.ranks();
        let mut est = Estimate {
            algorithm: self.algorithm,
            topology: self.plan.topology,
            plan: self.plan.name.clone(),
            design: self.plan.describe(),
            ranks: p,
            size_bytes: n,
            method: options.method,
            time_us: closed,
            time_min_us: closed,
            time_max_us: closed,
            seeds: 1,
            closed_form_us: closed,
            algbw_gbps: 0.0,
            busbw_gbps: 0.0,
            chunks,
            schedule: None,
            packet: None,
        };
        if options.method != Method::ClosedForm {
            // Only the ECMP hash reads the seed.
            let seeds = options.seeds_run();
            let sends = options.sends.as_ref();
            // The event-driven and step-synchronous modes first stream the
            // schedule of every seed (Context::streamed), which is then
            // never stored; it is built when a seed needs the event loop,
            // or for the other modes.
            // The seeds streamed, and the one whose flows share a link (its
            // lone pass failed: the event loop runs without trying it again).
            let mut streamed = Vec::new();
            let mut shared: Option<u64> = None;
            if matches!(options.method, Method::Event | Method::Fast) {
                for &seed in &seeds {
                    match self.streamed(n, seed, options.routing, options.method, sends)? {
                        Some(run) => streamed.push((seed, run)),
                        None => {
                            shared = Some(seed).filter(|_| self.streams().unwrap_or(false));
                            break;
                        }
                    }
                }
            }
            let mut times = Vec::with_capacity(seeds.len());
            let mut max_link_flows = 0;
            let mut packets: Vec<(f64, PacketStats)> = Vec::new();
            let (steps, sends, bytes_per_rank) = match streamed.first() {
                Some((_, (_, shape))) if streamed.len() == seeds.len() => {
                    for (_, (o, _)) in &streamed {
                        max_link_flows = max_link_flows.max(o.max_link_flows);
                        times.push(o.time_us);
                    }
                    (shape.steps, shape.sends, shape.bytes_sent_by_0)
                }
                _ => {
                    let sched = self.schedule(n, chunks)?;
                    let mut previous: Option<(PlanRoutes<'_>, f64)> = None;
                    // The packet mode's figures per seed, by time.
                    // Built at the first seed: every seed has the same links.
                    let mut fabric: Option<packet::LinkModel> = None;
                    for &seed in &seeds {
                        // A seed streamed before the one that could not be.
                        if let Some((_, (o, _))) = streamed.iter().find(|(s, _)| *s == seed) {
                            max_link_flows = max_link_flows.max(o.max_link_flows);
                            times.push(o.time_us);
                            continue;
                        }
                        let mut routes =
                            PlanRoutes::new(self, &sched, seed, options.routing).counting(sends);
                        // A seed that routes every pair the same way as the
                        // last one gives the same time.
                        if let Some((last, t)) = &previous
                            && last.same_routes(&mut routes)?
                        {
                            times.push(*t);
                            if let Some(last) = packets.last().cloned() {
                                packets.push(last);
                            }
                            continue;
                        }
                        let caps = routes.caps();
                        let (t, flows) = match options.method {
                            Method::Fast => {
                                let o = fast::run(&sched, &caps, &mut routes, false)?;
                                (o.time_us, o.max_link_flows)
                            }
                            Method::Packet => {
                                let fab = match &mut fabric {
                                    Some(f) => f,
                                    None => fabric.insert(self.packet_fabric(&caps)?),
                                };
                                let o =
                                    packet::run(&sched, fab, &mut routes, self.params.eager_bytes)?;
                                packets.push((o.time_us, o.stats));
                                (o.time_us, o.max_link_flows)
                            }
                            _ => {
                                let settings = sim::Settings {
                                    general: shared == Some(seed),
                                    ..sim::Settings::default()
                                };
                                let o = sim::run_with(
                                    &sched,
                                    &caps,
                                    &mut routes,
                                    self.params.eager_bytes,
                                    settings,
                                    None,
                                )?;
                                (o.time_us, o.max_link_flows)
                            }
                        };
                        max_link_flows = max_link_flows.max(flows);
                        times.push(t);
                        routes.settle(sched.len() as u64);
                        previous = Some((routes, t));
                    }
                    (sched.steps().len(), sched.len(), sched.bytes_sent_by(0))
                }
            };
            times.sort_by(f64::total_cmp);
            let k = times.len();
            est.time_us = if k % 2 == 1 {
                times[k / 2]
            } else {
                (times[k / 2 - 1] + times[k / 2]) / 2.0
            };
            packets.sort_by(|a, b| a.0.total_cmp(&b.0));
            est.packet = packets.get(k / 2).map(|(_, s)| s.clone());
            est.time_min_us = times[0];
            est.time_max_us = times[k - 1];
            est.seeds = k;
            est.schedule = Some(ScheduleStats {
                steps,
                sends,
                bytes_per_rank,
                max_link_flows,
            });
        }
        let (algbw, busbw) = bandwidths(n, est.time_us, p);
        est.algbw_gbps = algbw;
        est.busbw_gbps = busbw;
        Ok(est)
    }

    /// Estimates `n` bytes.
    /// Refuses, without building it, a schedule for `n` bytes with more
    /// sends than the simulator builds, naming the algorithm, plan and
    /// size; the closed form needs no schedule.
    /// With the count of the sends (one seed's; from the schedule's shape,
    /// which can be a few above the sends made), or 0 for the closed form.
    pub(in crate::estimate) fn sends_fit(&self, n: u64, options: &Options) -> Result<u64> {
        if options.method == Method::ClosedForm {
            return Ok(0);
        }
        let (_, chunks) = self.closed_form(n)?;
        schedules::sends_fit(|| self.schedule(n, chunks)).map_err(|e| match e {
            Error::TooManySends {
                ranks,
                sends,
                memory,
                limit,
                ..
            } => Error::TooManySends {
                job: Some(format!(
                    "{} on {} at {}",
                    self.algorithm.as_str(),
                    self.plan.name,
                    crate::estimate::format_size(n)
                )),
                ranks,
                sends,
                memory,
                limit,
            },
            other => other,
        })
    }

    /// The plan as the packet-level mode sees it, over the links `caps`
    /// ([`PlanRoutes::caps`]: the plan's, the NVLink links of the
    /// intra-server tier, then any channels of `channels=pair`).
    pub(super) fn packet_fabric(&self, caps: &[f64]) -> Result<packet::LinkModel> {
        let nvlink = self.tier.as_ref().map_or(0, |t| t.caps.len());
        packet::LinkModel::new(
            self.plan,
            &self.net,
            &self.table,
            caps,
            nvlink,
            &self.params,
        )
    }
}
