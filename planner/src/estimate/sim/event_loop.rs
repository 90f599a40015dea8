//! The event loop of the event-driven simulator, in three parts:
//! [`EventLoop::setup`] (who waits for whom, the sends ready at time 0,
//! the arrays of flows and links), the loop ([`EventLoop::run`]: every
//! instant's events, flows ending ([`EventLoop::flow_ends`]) before sends
//! starting ([`EventLoop::send_starts`]), then the rates of the components
//! they touched ([`EventLoop::reshare`])), and [`EventLoop::finish`]
//! (every send delivered, the completion time). The model is the parent
//! module's; this file is its arithmetic, in the order the parent's docs
//! give.

use super::events::{Event, GROUP, Groups, start_event, time_bits};
use super::fill::{Filler, is_full, max_min_rates};
use super::{Dependants, FlowRoute, Outcome, Routes, SendTimes, Settings};
use crate::error::{Error, Result};
use crate::estimate::queue::Queue;
use crate::estimate::schedules::{NONE, SendSchedule};

/// A flow in flight.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    send: u32,
    route: FlowRoute,
    rate: f64,
    remaining: f64,
    since: f64,
    version: u32,
}

/// The state of one run of the loop over a schedule.
pub(super) struct EventLoop<'a, R> {
    sched: &'a SendSchedule,
    caps: &'a [f64],
    routes: &'a mut R,
    settings: Settings,
    /// When each send started and was delivered (empty unless asked for).
    start_us: &'a mut [f64],
    delivered_us: &'a mut [f64],
    /// Who waits for whom ([`Dependants`]).
    waiting: Vec<u32>,
    fan_start: Vec<u32>,
    fan: Vec<u32>,
    /// Per send, the latest delivery it waits for.
    ready: Vec<f64>,
    queue: Queue,
    /// Flows in flight by slot, the free slots, the flows on every link.
    slots: Vec<Slot>,
    free: Vec<u32>,
    on: Vec<Vec<u32>>,
    /// The sum of the rates on every link.
    load: Vec<f64>,
    filler: Filler,
    /// Per-instant scratch: touched links, the component's links and
    /// flows.
    touched: Vec<u32>,
    link_mark: Vec<u32>,
    slot_mark: Vec<u32>,
    mark: u32,
    comp_links: Vec<u32>,
    comp_flows: Vec<u32>,
    stack: Vec<u32>,
    new_rate: Vec<f64>,
    /// Per link, the room and the flows of the part being filled, and a
    /// mark for the part's links.
    part_room: Vec<(f64, u32)>,
    seen: Vec<u32>,
    seen_mark: u32,
    /// Sprayed sends: the paths of the send starting, the paths still in
    /// flight per send, and the latest delivery.
    paths: Vec<FlowRoute>,
    parts: Vec<u32>,
    part_at: Vec<f64>,
    end: f64,
    delivered: usize,
    out: Outcome,
    groups: Groups,
    /// The values of the events of the current instant.
    batch: Vec<u64>,
}

impl<'a, R: Routes> EventLoop<'a, R> {
    /// Setup: who waits for whom (dependencies and rendezvous gates), the
    /// sends that wait for nothing in the queue, and the tails of ranks
    /// with nothing to receive; with `times`, room for each send's start
    /// and delivery.
    pub(super) fn setup(
        sched: &'a SendSchedule,
        caps: &'a [f64],
        routes: &'a mut R,
        eager_bytes: u64,
        settings: Settings,
        times: Option<&'a mut SendTimes>,
    ) -> Result<Self> {
        let n = sched.len();
        let (start_us, delivered_us): (&mut [f64], &mut [f64]) = match times {
            Some(t) => {
                t.start_us = vec![0.0; n];
                t.delivered_us = vec![0.0; n];
                (&mut t.start_us, &mut t.delivered_us)
            }
            None => (&mut [], &mut []),
        };
        let links = caps.len();
        let Dependants {
            waiting,
            fan_start,
            fan,
        } = Dependants::new(sched, eager_bytes);
        let ready: Vec<f64> = vec![0.0; n];

        if n >= 0x7FFF_FFFF {
            return Err(Error::Internal(format!(
                "{n} sends are more than the simulator can number"
            )));
        }
        let mut queue = Queue::default();
        for (i, &w) in waiting.iter().enumerate() {
            if w == 0 {
                start_event(sched.delay_us[i], i)?.push(&mut queue);
            }
        }
        let mut end = 0.0f64;
        // Ranks with nothing to receive still owe their tail.
        for (r, &last) in sched.final_recv.iter().enumerate() {
            if last == NONE {
                end = end.max(sched.tail_us[r]);
            }
        }
        Ok(Self {
            sched,
            caps,
            routes,
            settings,
            start_us,
            delivered_us,
            waiting,
            fan_start,
            fan,
            ready,
            queue,
            slots: Vec::with_capacity(2 * sched.ranks() + 16),
            free: Vec::new(),
            on: vec![Vec::new(); links],
            load: vec![0.0; links],
            filler: Filler::new(links),
            touched: Vec::new(),
            link_mark: vec![0; links],
            slot_mark: Vec::new(),
            mark: 0,
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            stack: Vec::new(),
            new_rate: Vec::new(),
            part_room: Vec::new(),
            seen: Vec::new(),
            seen_mark: 0,
            paths: Vec::new(),
            parts: Vec::new(),
            part_at: Vec::new(),
            end,
            delivered: 0,
            out: Outcome {
                time_us: 0.0,
                max_link_flows: 0,
                events: 0,
                recomputes: 0,
            },
            groups: Groups::default(),
            batch: Vec::new(),
        })
    }

    /// The loop: one instant at a time, until the queue is empty; then
    /// [`Self::finish`].
    pub(super) fn run(mut self) -> Result<Outcome> {
        while let Some(time) = self.queue.pop_min(&mut self.batch) {
            self.instant(time)?;
        }
        self.finish()
    }

    /// Every event at the instant `time` (its bits), including those the
    /// instant itself adds at the same time, then the rates of the
    /// components whose links they touched.
    fn instant(&mut self, time: u64) -> Result<()> {
        self.groups.expand(&mut self.batch);
        let now = f64::from_bits(time);
        self.mark = next_mark(self.mark, &mut self.link_mark, &mut self.slot_mark);
        let batch_mark = self.mark;
        self.touched.clear();
        let mut k = 0;
        loop {
            if k == self.batch.len() {
                self.batch.clear();
                k = 0;
                if !self.queue.pop_same(&mut self.batch) {
                    break;
                }
                self.groups.expand(&mut self.batch);
            }
            let ev = Event::unpack(time, self.batch[k]);
            k += 1;
            match ev.kind {
                0 => self.flow_ends(ev, now, batch_mark)?,
                _ => self.send_starts(ev.id as usize, now, time, batch_mark)?,
            }
        }
        self.groups.flush(&mut self.queue);
        if !self.touched.is_empty() {
            self.reshare(now)?;
        }
        if self.settings.check {
            check_rates(&self.slots, &self.on, self.caps)?;
        }
        Ok(())
    }

    /// The flow of end event `ev` drained its last byte at `now` (a stale
    /// event is dropped): its links are freed, and its send is delivered
    /// once its last path (sprayed) has arrived.
    fn flow_ends(&mut self, ev: Event, now: f64, batch_mark: u32) -> Result<()> {
        let s = ev.id as usize;
        if self.slots[s].version != ev.version || self.slots[s].send == NONE {
            return Ok(());
        }
        self.out.events += 1;
        let slot = self.slots[s];
        // A flow is held back only on a full link; when none of this
        // flow's links was full, its end frees room nobody was waiting
        // for, and no rate changes.
        let full = slot
            .route
            .links()
            .iter()
            .any(|&l| is_full(self.load[l as usize], self.caps[l as usize]));
        for &l in slot.route.links() {
            let li = l as usize;
            let list = &mut self.on[li];
            if let Some(k) = list.iter().position(|&x| x == ev.id) {
                list.swap_remove(k);
            }
            self.load[li] = if list.is_empty() {
                0.0
            } else {
                self.load[li] - slot.rate
            };
            if full && !list.is_empty() && self.link_mark[li] != batch_mark {
                self.link_mark[li] = batch_mark;
                self.touched.push(l);
            }
        }
        self.slots[s].send = NONE;
        self.slots[s].version = self.slots[s].version.wrapping_add(1);
        self.free.push(ev.id);
        let mut at = now + slot.route.latency;
        let send = slot.send as usize;
        if self.parts.get(send).is_some_and(|&k| k > 0) {
            self.parts[send] -= 1;
            self.part_at[send] = self.part_at[send].max(at);
            if self.parts[send] > 0 {
                return Ok(());
            }
            at = self.part_at[send];
        }
        self.deliver(send, at)?;
        self.delivered += 1;
        Ok(())
    }

    /// Send `i` is ready at `now` (the instant `time`): one flow per path,
    /// each with an even share of the bytes, or delivered after its
    /// latency when it moves nothing.
    fn send_starts(&mut self, i: usize, now: f64, time: u64, batch_mark: u32) -> Result<()> {
        self.out.events += 1;
        self.routes.started();
        if let Some(t) = self.start_us.get_mut(i) {
            *t = now;
        }
        self.paths.clear();
        self.routes.paths(i, &mut self.paths)?;
        let total = self.sched.bytes[i] as f64;
        let Some(&first_path) = self.paths.first() else {
            return Err(Error::Internal(format!("send {i} has no route")));
        };
        if total <= 0.0 || self.paths.iter().all(|r| r.len == 0) {
            let at = now + first_path.latency;
            self.deliver(i, at)?;
            self.delivered += 1;
            return Ok(());
        }
        // A sprayed send is one flow per path, each with an even share of
        // the bytes; it is delivered when the last of them is.
        let count = self.paths.len();
        let bytes = total / count as f64;
        if count > 1 {
            let n = self.sched.len();
            if self.parts.len() < n {
                self.parts.resize(n, 0);
                self.part_at.resize(n, 0.0);
            }
            self.parts[i] = count as u32;
            self.part_at[i] = 0.0;
        }
        for p in 0..count {
            let route = self.paths[p];
            self.flow_starts(i, route, bytes, count, now, time, batch_mark)?;
        }
        Ok(())
    }

    /// One flow of send `i` (one of its `paths`) starts on `route` with
    /// `bytes`: it takes the room left on its links where that is the
    /// max-min allocation, else its links are touched for [`Self::reshare`].
    #[allow(clippy::too_many_arguments)]
    fn flow_starts(
        &mut self,
        i: usize,
        route: FlowRoute,
        bytes: f64,
        paths: usize,
        now: f64,
        time: u64,
        batch_mark: u32,
    ) -> Result<()> {
        let links = self.caps.len();
        let (caps, slots) = (self.caps, &mut self.slots);
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                if slots.len() >= GROUP as usize {
                    return Err(Error::Internal(format!(
                        "more than {GROUP} flows in flight"
                    )));
                }
                slots.push(Slot {
                    send: NONE,
                    ..Slot::default()
                });
                (slots.len() - 1) as u32
            }
        };
        let slot = &mut slots[s as usize];
        slot.send = i as u32;
        slot.route = route;
        slot.rate = 0.0;
        slot.remaining = bytes;
        slot.since = now;
        slot.version = slot.version.wrapping_add(1);
        for &l in route.links() {
            let li = l as usize;
            if li >= links {
                return Err(Error::Internal(format!(
                    "send {i} is routed over link {l}, beyond the {links} links"
                )));
            }
            self.on[li].push(s);
            self.out.max_link_flows = self.out.max_link_flows.max(self.on[li].len());
        }
        // When the room left on its links is at least the rate of every
        // flow already there, taking all of it is the max-min allocation:
        // the new flow is the largest on the link it fills, and no other
        // flow was held back by a link with room to spare. Otherwise its
        // component is water-filled in `reshare`.
        let (load, on) = (&mut self.load, &self.on);
        let room = route
            .links()
            .iter()
            .map(|&l| caps[l as usize] - load[l as usize])
            .fold(f64::INFINITY, f64::min);
        let fits = room > 0.0
            && !route
                .links()
                .iter()
                .any(|&l| is_full(load[l as usize], caps[l as usize]))
            && route.links().iter().all(|&l| {
                on[l as usize]
                    .iter()
                    .all(|&g| g == s || slots[g as usize].rate <= room * (1.0 + 1e-12))
            });
        if fits {
            let rate = room;
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(Error::Internal(format!(
                    "send {i} got the rate {rate}; every link needs a speed above 0"
                )));
            }
            for &l in route.links() {
                load[l as usize] += rate;
            }
            let slot = &mut slots[s as usize];
            slot.rate = rate;
            let ev = Event {
                time: time_bits(now + bytes / rate)?,
                kind: 0,
                id: s,
                version: slot.version,
            };
            // Alone on its links, it ends with the other lone flows that
            // end then, unless a flow joins it first (then its version
            // moves on).
            let alone = paths == 1 && route.links().iter().all(|&l| on[l as usize].len() == 1);
            if alone && !self.settings.plain && ev.time > time {
                self.groups.add(ev);
            } else {
                ev.push(&mut self.queue);
            }
        } else {
            for &l in route.links() {
                if self.link_mark[l as usize] != batch_mark {
                    self.link_mark[l as usize] = batch_mark;
                    self.touched.push(l);
                }
            }
        }
        Ok(())
    }

    /// The rates around the touched links at `now`: the part of the
    /// flows in flight whose rates may change ([`Self::close`]) is
    /// water-filled in the room the others leave, and grown until no flow
    /// outside it is above the level of a link it saturates; a flow whose
    /// rate changes is charged its progress and gets a new end event. With
    /// [`Settings::whole`], every connected component around them is
    /// water-filled instead, as a breadth-first search over "flow uses
    /// link" finds it.
    fn reshare(&mut self, now: f64) -> Result<()> {
        self.mark = next_mark(self.mark, &mut self.link_mark, &mut self.slot_mark);
        let mark = self.mark;
        if self.slot_mark.len() < self.slots.len() {
            self.slot_mark.resize(self.slots.len(), 0);
        }
        if self.settings.whole {
            return self.reshare_whole(now, mark);
        }
        self.comp_flows.clear();
        self.stack.clear();
        for t in 0..self.touched.len() {
            let l = self.touched[t];
            if self.link_mark[l as usize] != mark {
                self.link_mark[l as usize] = mark;
                self.stack.push(l);
            }
        }
        self.close(mark);
        loop {
            if self.comp_flows.is_empty() {
                return Ok(());
            }
            self.fill_part(mark);
            // A flow outside the part above the level of a link the part
            // saturated would have been held to that level: it joins. The
            // tolerance is the water-filling's own (a relative 1e-12): a
            // looser one (1e-9) left flows a hair above the level, and
            // over millions of sends the hairs moved a result by 0.23 %.
            let grown = self.comp_flows.len();
            for k in 0..self.filler.saturated.len() {
                let (l, level) = self.filler.saturated[k];
                for j in 0..self.on[l as usize].len() {
                    let g = self.on[l as usize][j];
                    let gi = g as usize;
                    if self.slot_mark[gi] != mark && self.slots[gi].rate > level * (1.0 + 1e-12) {
                        self.slot_mark[gi] = mark;
                        self.comp_flows.push(g);
                        self.push_full_links(g, mark);
                    }
                }
            }
            if self.comp_flows.len() == grown {
                break;
            }
            self.close(mark);
        }
        self.apply_rates(now)
    }

    /// The part of the flows in flight whose rates may change, from the
    /// links on `stack`: every flow on them, and every flow on a full link
    /// of a flow found, until no more are found. A flow outside it has
    /// its bottleneck (a full link on which it is the largest) outside it,
    /// which nothing of the part touches, so its rate stays max-min fair;
    /// the part's flows share only links with room to spare with it.
    fn close(&mut self, mark: u32) {
        while let Some(l) = self.stack.pop() {
            for k in 0..self.on[l as usize].len() {
                let f = self.on[l as usize][k];
                if self.slot_mark[f as usize] == mark {
                    continue;
                }
                self.slot_mark[f as usize] = mark;
                self.comp_flows.push(f);
                self.push_full_links(f, mark);
            }
        }
    }

    /// Puts the full links of flow `f` not yet reached on `stack`.
    fn push_full_links(&mut self, f: u32, mark: u32) {
        for &l in self.slots[f as usize].route.links() {
            let li = l as usize;
            if self.link_mark[li] != mark && is_full(self.load[li], self.caps[li]) {
                self.link_mark[li] = mark;
                self.stack.push(l);
            }
        }
    }

    /// Water-fills the part in `comp_flows` (marked `mark`) over every
    /// link of its flows, each with the room the flows outside it leave,
    /// into `new_rate`; the links go to `comp_links`.
    fn fill_part(&mut self, mark: u32) {
        if self.new_rate.len() < self.slots.len() {
            self.new_rate.resize(self.slots.len(), 0.0);
        }
        if self.part_room.len() < self.caps.len() {
            self.part_room.resize(self.caps.len(), (0.0, 0));
            self.seen.resize(self.caps.len(), 0);
        }
        self.seen_mark = next_mark(self.seen_mark, &mut self.seen, &mut []);
        self.comp_links.clear();
        for &f in &self.comp_flows {
            for &l in self.slots[f as usize].route.links() {
                if self.seen[l as usize] != self.seen_mark {
                    self.seen[l as usize] = self.seen_mark;
                    self.comp_links.push(l);
                }
            }
        }
        for &l in &self.comp_links {
            let li = l as usize;
            let (mut outside, mut members) = (0.0, 0u32);
            for &g in &self.on[li] {
                if self.slot_mark[g as usize] == mark {
                    members += 1;
                } else {
                    outside += self.slots[g as usize].rate;
                }
            }
            self.part_room[li] = ((self.caps[li] - outside).max(0.0), members);
        }
        if self.comp_flows.len() > 1 {
            self.out.recomputes += 1;
        }
        let (slots, slot_mark, part_room) = (&self.slots, &self.slot_mark, &self.part_room);
        let rates = &mut self.new_rate;
        self.filler.fill(
            |l| part_room[l as usize],
            &self.comp_links,
            &self.on,
            |f| slot_mark[f as usize] == mark,
            |f| slots[f as usize].route.links(),
            &mut |f, r| rates[f as usize] = r,
        );
    }

    /// The old way ([`Settings::whole`]): each connected component around
    /// the touched links, found by a breadth-first search over "flow uses
    /// link", water-filled alone.
    fn reshare_whole(&mut self, now: f64, mark: u32) -> Result<()> {
        for t in 0..self.touched.len() {
            let seed = self.touched[t];
            if self.link_mark[seed as usize] == mark {
                continue;
            }
            self.comp_links.clear();
            self.comp_flows.clear();
            self.stack.clear();
            self.link_mark[seed as usize] = mark;
            self.stack.push(seed);
            while let Some(l) = self.stack.pop() {
                self.comp_links.push(l);
                for &f in &self.on[l as usize] {
                    if self.slot_mark[f as usize] == mark {
                        continue;
                    }
                    self.slot_mark[f as usize] = mark;
                    self.comp_flows.push(f);
                    for &l2 in self.slots[f as usize].route.links() {
                        if self.link_mark[l2 as usize] != mark {
                            self.link_mark[l2 as usize] = mark;
                            self.stack.push(l2);
                        }
                    }
                }
            }
            if self.comp_flows.is_empty() {
                continue;
            }
            if self.new_rate.len() < self.slots.len() {
                self.new_rate.resize(self.slots.len(), 0.0);
            }
            if self.comp_flows.len() > 1 {
                self.out.recomputes += 1;
            }
            let (caps, on, slots) = (self.caps, &self.on, &self.slots);
            let rates = &mut self.new_rate;
            self.filler.fill(
                |l| (caps[l as usize], on[l as usize].len() as u32),
                &self.comp_links,
                on,
                |_| true,
                |f| slots[f as usize].route.links(),
                &mut |f, r| rates[f as usize] = r,
            );
            self.apply_rates(now)?;
        }
        Ok(())
    }

    /// Moves every flow of `comp_flows` whose rate changed to its new rate
    /// (`new_rate`) and end.
    fn apply_rates(&mut self, now: f64) -> Result<()> {
        for &f in &self.comp_flows {
            let slot = &mut self.slots[f as usize];
            let rate = self.new_rate[f as usize];
            if rate == slot.rate {
                continue;
            }
            if !(rate > 0.0 && rate.is_finite()) {
                return Err(Error::Internal(format!(
                    "send {} got the rate {rate}; every link needs a speed above 0",
                    slot.send
                )));
            }
            slot.remaining = (slot.remaining - slot.rate * (now - slot.since)).max(0.0);
            slot.since = now;
            for &l in slot.route.links() {
                self.load[l as usize] += rate - slot.rate;
            }
            slot.rate = rate;
            slot.version = slot.version.wrapping_add(1);
            let done = now + slot.remaining / rate;
            Event {
                time: time_bits(done)?,
                kind: 0,
                id: f,
                version: slot.version,
            }
            .push(&mut self.queue);
        }
        Ok(())
    }

    /// Send `i` is delivered at `at`: its dependants may become ready.
    fn deliver(&mut self, i: usize, at: f64) -> Result<()> {
        if let Some(d) = self.delivered_us.get_mut(i) {
            *d = at;
        }
        self.end = self.end.max(at);
        let sched = self.sched;
        let dst = sched.dst[i] as usize;
        if sched.final_recv.get(dst) == Some(&(i as u32)) {
            self.end = self.end.max(at + sched.tail_us[dst]);
        }
        for &j in &self.fan[self.fan_start[i] as usize..self.fan_start[i + 1] as usize] {
            let j = j as usize;
            self.ready[j] = self.ready[j].max(at);
            self.waiting[j] -= 1;
            if self.waiting[j] == 0 {
                start_event(self.ready[j] + sched.delay_us[j], j)?.push(&mut self.queue);
            }
        }
        Ok(())
    }

    /// Finish: every send must have been delivered (else the schedule's
    /// dependencies form a cycle); the time is the last delivery or tail.
    fn finish(mut self) -> Result<Outcome> {
        let n = self.sched.len();
        if self.delivered != n {
            return Err(Error::Internal(format!(
                "the simulation delivered {} of {n} sends: the schedule's dependencies form a cycle",
                self.delivered
            )));
        }
        self.out.time_us = self.end;
        Ok(self.out)
    }
}

/// Compares the rates of the flows in flight with a water-filling of all
/// of them.
fn check_rates(slots: &[Slot], on: &[Vec<u32>], caps: &[f64]) -> Result<()> {
    let live: Vec<usize> = (0..slots.len())
        .filter(|&s| slots[s].send != NONE && on.iter().any(|l| l.contains(&(s as u32))))
        .collect();
    let flows: Vec<Vec<usize>> = live
        .iter()
        .map(|&s| slots[s].route.links().iter().map(|&l| l as usize).collect())
        .collect();
    let rates = max_min_rates(caps, &flows)?;
    for (k, &s) in live.iter().enumerate() {
        let (have, want) = (slots[s].rate, rates[k]);
        if (have - want).abs() > 1e-11 * want.abs().max(1.0) {
            return Err(Error::Internal(format!(
                "send {} runs at {have}, max-min fair is {want}",
                slots[s].send
            )));
        }
    }
    Ok(())
}

/// A fresh marker value for the per-batch marks, clearing them when the
/// counter wraps.
fn next_mark(mark: u32, link_mark: &mut [u32], slot_mark: &mut [u32]) -> u32 {
    match mark.checked_add(1) {
        Some(m) => m,
        None => {
            link_mark.fill(0);
            slot_mark.fill(0);
            1
        }
    }
}
