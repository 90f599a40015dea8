//! The lone pass ([`Lone`], [`lone`]): the event loop's result one send
//! at a time where no two flows ever share a link, tried before the loop.

use super::deps::gates;
use super::events::time_key;
use super::{FlowRoute, Outcome, Routes, SendTimes};
use crate::error::Result;
use crate::estimate::schedules::{NONE, SendSchedule};

/// The run of `sched` when no two of its flows are ever on one link at
/// the same time, or `None` when some are (then [`run_with`] runs the
/// event loop): [`Lone`] fed every send in index order.
pub(crate) fn lone(
    sched: &SendSchedule,
    caps: &[f64],
    routes: &mut impl Routes,
    eager_bytes: u64,
    times: Option<&mut SendTimes>,
) -> Result<Option<Outcome>> {
    let n = sched.len();
    // A schedule whose indices do not follow its steps needs the gates'
    // lists (see [`Lone`]).
    let sorted = sched.step.windows(2).all(|w| w[0] <= w[1]);
    let (gate_start, gate) = if sorted {
        (Vec::new(), Vec::new())
    } else {
        gates(sched, eager_bytes)
    };
    let gates_of = |i: usize| match gate_start.get(i..i + 2) {
        Some(&[a, b]) => &gate[a as usize..b as usize],
        _ => &[],
    };
    let mut pass = Lone::new(
        sched.ranks(),
        n,
        eager_bytes,
        sched.channel_credit,
        !sorted,
        times.is_some(),
    );
    for i in 0..n {
        let route = routes.single(i).ok().flatten();
        pass.send(
            caps,
            sched.dst[i],
            sched.bytes[i],
            sched.step[i],
            sched.deps(i),
            gates_of(i),
            sched.delay_us[i],
            route.as_ref(),
        );
        if pass.failed {
            return Ok(None);
        }
    }
    Ok(pass
        .finish(&sched.final_recv, &sched.tail_us)
        .map(|(out, starts, delivered)| {
            if let Some(t) = times {
                t.start_us = starts;
                t.delivered_us = delivered;
            }
            out
        }))
}

/// The lone pass: the event loop's result, one send at a time, where no
/// two flows are ever on one link at the same time.
///
/// Every flow then runs alone at the speed of its slowest link, so each
/// send's times follow from its dependencies' by the arithmetic of the
/// event loop: it starts when the last of its dependencies and rendezvous
/// [`gates`] is delivered plus its delay, drains `bytes / rate`, and is
/// delivered `latency` later. Fed the sends in index order (every
/// dependency of a schedule built step by step comes before its send;
/// otherwise the pass fails), it computes them and checks the assumption
/// per link: the flows on a link, in index order, must each start no
/// earlier than the one before ended. Where that holds the flows on every
/// link are disjoint in time, and by induction over the event loop's
/// instants the loop would find every flow alone, at the same times, with
/// the same floating-point operations: the result is the loop's, to the
/// bit (property test `lone_and_general_runs_agree`). A flow ending at the
/// instant another starts on its link is no sharing: the loop takes an
/// instant's ends before its starts. Sprayed sends (several paths of one
/// send share the NIC's link), flows that take no time, a link without
/// speed or out of range and a route that cannot be found fail the pass,
/// and the event loop handles or reports them.
///
/// Rendezvous: a gate's delivery only matters through the latest of a
/// send's waits. When the sends come in step order (a schedule built step
/// by step, and every streamed one: [`super::schedules::Sink`]), the
/// latest delivery into each rank of its latest receiving step and of the
/// one before stand for the gates' lists (the gates a send already waits
/// for change no maximum); otherwise the caller gives the lists.
///
/// The pass costs a route lookup and a few array accesses per send, where
/// the event loop pays two queue events and its per-link lists: a ring of
/// 1,024 ranks (2 million sends, none sharing a link in plan order) takes
/// a fraction of the loop's time, and streamed it stores 8 bytes a send
/// (its delivery) instead of the schedule's 40. A schedule with contention
/// pays the pass up to the first shared link, then the loop.
#[derive(Debug)]
pub(crate) struct Lone {
    eager_bytes: u64,
    /// Sends wait for their receiver (not with NCCL's channels).
    rendezvous: bool,
    /// The caller gives each send's gates; else they follow from the steps.
    lists: bool,
    /// Per rank: its latest receiving step, and the latest delivery into
    /// it in that step and in the one before.
    cur_step: Vec<u32>,
    into_cur: Vec<f64>,
    into_prev: Vec<f64>,
    last_step: u32,
    delivered: Vec<f64>,
    starts: Option<Vec<f64>>,
    /// When the last flow so far (in index order) on each link ends.
    busy_until: Vec<f64>,
    flows: u64,
    /// The last (bytes, rate, bytes / rate): most sends of a step have
    /// the same size and speed.
    last: (f64, f64, f64),
    end: f64,
    /// Some flows shared a link (or the pass cannot tell): the event loop
    /// must run.
    pub failed: bool,
}

impl Lone {
    /// A pass over `ranks` ranks, about `sends` sends (room reserved);
    /// `lists`: the caller gives the gates; `starts`: keep start times.
    pub(crate) fn new(
        ranks: usize,
        sends: usize,
        eager_bytes: u64,
        channel_credit: bool,
        lists: bool,
        starts: bool,
    ) -> Self {
        let tracked = if lists { 0 } else { ranks };
        Self {
            eager_bytes,
            rendezvous: !channel_credit,
            lists,
            cur_step: vec![u32::MAX; tracked],
            into_cur: vec![0.0; tracked],
            into_prev: vec![0.0; tracked],
            last_step: 0,
            delivered: Vec::with_capacity(sends),
            starts: starts.then(|| Vec::with_capacity(sends)),
            busy_until: Vec::new(),
            flows: 0,
            last: (f64::NAN, f64::NAN, f64::NAN),
            end: 0.0,
            failed: false,
        }
    }

    /// Makes room for `sends` more sends.
    pub(crate) fn reserve(&mut self, sends: usize) {
        self.delivered.reserve(sends);
        if let Some(s) = &mut self.starts {
            s.reserve(sends);
        }
    }

    /// The next send, to `dst`, over `route` (`None`: sprayed or not
    /// found), on links of capacity `caps`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn send(
        &mut self,
        caps: &[f64],
        dst: u32,
        bytes: u64,
        step: u32,
        deps: &[u32],
        gates: &[u32],
        delay_us: f64,
        route: Option<&FlowRoute>,
    ) {
        if self.failed {
            return;
        }
        // The send's start and delivery, or `None` when the pass fails.
        let mut times = || -> Option<(f64, f64)> {
            let mut ready = 0.0f64;
            for &d in deps.iter().chain(gates) {
                // `NONE`: no dependency (a streamed send's first).
                if d != NONE {
                    ready = ready.max(*self.delivered.get(d as usize)?);
                }
            }
            if !self.lists {
                let d = dst as usize;
                if step < self.last_step || d >= self.cur_step.len() {
                    return None;
                }
                self.last_step = step;
                if self.cur_step[d] != step {
                    self.into_prev[d] = self.into_cur[d];
                    self.into_cur[d] = 0.0;
                    self.cur_step[d] = step;
                }
                if self.rendezvous && bytes >= self.eager_bytes {
                    ready = ready.max(self.into_prev[d]);
                }
            }
            let now = f64::from_bits(time_key(ready + delay_us)?);
            let route = route?;
            let total = bytes as f64;
            if total <= 0.0 || route.len == 0 {
                return Some((now, now + route.latency));
            }
            if self.busy_until.len() < caps.len() {
                self.busy_until.resize(caps.len(), 0.0);
            }
            let mut rate = f64::INFINITY;
            for &l in route.links() {
                match (caps.get(l as usize), self.busy_until.get_mut(l as usize)) {
                    (Some(&cap), Some(busy)) if cap > 0.0 && now >= *busy => {
                        rate = rate.min(cap);
                        // Until its end is known: a route that crosses a
                        // link twice shares it with itself.
                        *busy = f64::INFINITY;
                    }
                    _ => return None,
                }
            }
            if !rate.is_finite() {
                return None;
            }
            if total != self.last.0 || rate != self.last.1 {
                self.last = (total, rate, total / rate);
            }
            let done = f64::from_bits(time_key(now + self.last.2)?);
            if done <= now {
                return None;
            }
            for &l in route.links() {
                self.busy_until[l as usize] = done;
            }
            self.flows += 1;
            Some((now, done + route.latency))
        };
        match times() {
            Some((now, at)) => {
                self.delivered.push(at);
                if let Some(s) = &mut self.starts {
                    s.push(now);
                }
                self.end = self.end.max(at);
                if !self.lists {
                    let d = dst as usize;
                    self.into_cur[d] = self.into_cur[d].max(at);
                }
            }
            None => self.failed = true,
        }
    }

    /// The outcome, start times (empty unless kept) and delivery times,
    /// once every send is in; `final_recv` and `tail_us` as in
    /// [`SendSchedule`]. `None` when the pass failed.
    pub(crate) fn finish(
        self,
        final_recv: &[u32],
        tail_us: &[f64],
    ) -> Option<(Outcome, Vec<f64>, Vec<f64>)> {
        if self.failed {
            return None;
        }
        let mut end = self.end;
        for (r, &last) in final_recv.iter().enumerate() {
            let tail = tail_us.get(r).copied().unwrap_or(0.0);
            if last == NONE {
                end = end.max(tail);
            } else {
                end = end.max(self.delivered.get(last as usize)? + tail);
            }
        }
        let n = self.delivered.len() as u64;
        let out = Outcome {
            time_us: end,
            max_link_flows: usize::from(self.flows > 0),
            events: n + self.flows,
            recomputes: 0,
        };
        Some((out, self.starts.unwrap_or_default(), self.delivered))
    }
}
