//! The event-driven flow-level simulator.
//!
//! # Model
//!
//! Every send of a [`SendSchedule`] becomes a flow over the directed links
//! of its route. A flow starts when every send it depends on has been
//! delivered and its sender has spent its delay (the reduction it owes);
//! it then drains its bytes at a rate that changes over time, and is
//! delivered `latency` after its last byte left (the route latency:
//! `nic_us + alpha_us` per switch crossed). An isolated flow of b bytes on
//! links of speed w therefore takes `latency + b / w`, the α + βb of the
//! closed forms.
//!
//! # Rendezvous
//!
//! MPI libraries send a message below their eager limit at once and the
//! receiver buffers it; a larger one moves only after the receiver has
//! posted its receive (rendezvous). A send of `eager_bytes` or more
//! (`--param eager_bytes`, see [`super::params`]) therefore waits, besides
//! its own dependencies, until its receiver has received everything of its
//! previous receiving step ([`gates`]): an early sender does not start into
//! a receiver still busy with the slow flows of the step before, and does
//! not compete with them. With `eager_bytes=all` every send is eager, the
//! model before issue #19. Without contention the two agree (the receiver
//! is never late where every flow of a step runs at full speed); with it,
//! rendezvous times are lower (tests `rendezvous_*`).
//!
//! # Rates
//!
//! Rates are max-min fair over the links: water-filling raises every
//! flow's rate together until a link is full, freezes the flows on it at
//! that share, and goes on with the rest. Rates change only when a flow
//! starts or ends, and only for the flows connected to it through shared
//! links:
//!
//! - a flow that starts where the room left on each of its links is at
//!   least the rate of every flow already there simply takes that room
//!   (the max-min allocation: it is the largest flow on the link it fills,
//!   and nobody else was held back by a link with room to spare); a flow
//!   on empty links is the common case;
//! - a flow that ends without any of its links having been full frees room
//!   nobody was waiting for, and changes nothing;
//! - otherwise the links of every such flow that started or ended at this
//!   instant seed a breadth-first search over "flow uses link", and the
//!   connected component it finds is water-filled alone. Each round of the
//!   water-filling freezes every flow on the links at the lowest share
//!   `room / flows`; the rounds are the distinct bottleneck levels, a few
//!   on fabrics whose links have one or two speeds.
//!
//! A flow whose rate does not change keeps its predicted end; one whose
//! rate changes is charged its progress so far and gets a new end event
//! (older events are recognised by a version number and dropped). A test
//! mode compares every flow's rate after every instant with a water-filling
//! of all flows in flight.
//!
//! # Events
//!
//! Two kinds: a send becoming ready, and a flow draining its last byte.
//! They wait in a monotone radix heap ([`super::queue`]) keyed by time,
//! which hands out every event of one instant together, ordered by (kind,
//! id); they are all taken before rates are recomputed, so the P flows of
//! a step that start together cost one water-filling, not P. Ties and
//! all arithmetic are deterministic; nothing depends on hash order or the
//! clock.
//!
//! A flow that starts alone on its links does not get a queue entry of
//! its own: the lone flows of an instant that end at the same time share
//! one ([`Groups`]), which the queue hands back as their own end events,
//! in the same order. The results are those of one entry per flow
//! ([`Settings::plain`], which a property test holds equal).
//!
//! Flows and links live in dense arrays indexed by slot and link id; a
//! flow's slot is reused once it ends, so memory follows the flows in
//! flight, not the schedule. The schedule itself (about 40 bytes a send:
//! 2 million sends for a ring of 1,024 ranks) is the largest structure,
//! then [`Dependants`] (about 16 bytes a send) and each send's ready time.
//!
//! # Without contention
//!
//! Where no two flows are ever on one link at the same time (a ring in
//! plan order, HDRM on a BiGraph), every flow runs alone and the loop's
//! result follows from one pass over the sends in index order, [`Lone`],
//! which [`run_with`] tries first and which checks that assumption link by
//! link; it fails at the first shared link, and the loop runs. The
//! estimate streams the schedules made of ring and halving-doubling steps
//! into it without storing them ([`super::schedules::Sink`]): 8 bytes a
//! send instead of the 40 of the stored schedule and the loop's 24.

use super::queue::Queue;
use super::schedules::{NONE, SendSchedule};
use crate::error::{Error, Result};
use crate::network::MAX_LINKS;

/// The route of one send: its links and its latency.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct FlowRoute {
    pub links: [u32; MAX_LINKS],
    pub len: u8,
    pub latency: f64,
}

impl FlowRoute {
    pub fn links(&self) -> &[u32] {
        &self.links[..self.len as usize]
    }
}

/// Where the routes of a schedule's sends come from.
pub(crate) trait Routes {
    /// The route of send `i` (the first of its paths when it is sprayed).
    fn route(&mut self, i: usize) -> Result<FlowRoute>;

    /// Every path of send `i`, appended to `out`; each carries an even
    /// share of its bytes (packet spraying). One path unless the routing
    /// policy sprays.
    fn paths(&mut self, i: usize, out: &mut Vec<FlowRoute>) -> Result<()> {
        out.push(self.route(i)?);
        Ok(())
    }

    /// The route of send `i` when it has exactly one path, else `None`
    /// (what [`Routes::paths`] gives, without the list).
    fn single(&mut self, i: usize) -> Result<Option<FlowRoute>> {
        let mut out = Vec::new();
        self.paths(i, &mut out)?;
        Ok(match out[..] {
            [route] => Some(route),
            _ => None,
        })
    }
}

/// What a simulation found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    /// Completion time of the allreduce, µs.
    pub time_us: f64,
    /// Most flows on one link at the same time.
    pub max_link_flows: usize,
    /// Events processed (sends started and flows drained).
    pub events: u64,
    /// Water-fillings of a component of more than one flow.
    pub recomputes: u64,
}

/// An event: a flow draining its last byte (`kind` 0, for slot `id` at
/// `version`) or a send becoming ready (`kind` 1). Times are non-negative,
/// so their bit patterns order like the numbers and serve as the queue's
/// key; the rest packs into the value, ordered by (kind, id, version),
/// which orders the events of one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    time: u64,
    kind: u8,
    id: u32,
    version: u32,
}

impl Event {
    fn push(self, queue: &mut Queue) {
        queue.push(self.time, self.value());
    }

    fn value(self) -> u64 {
        (u64::from(self.kind) << 63)
            | (u64::from(self.id & 0x7FFF_FFFF) << 32)
            | u64::from(self.version)
    }

    fn unpack(time: u64, value: u64) -> Self {
        Event {
            time,
            kind: (value >> 63) as u8,
            id: ((value >> 32) & 0x7FFF_FFFF) as u32,
            version: value as u32,
        }
    }
}

/// The slot number that marks a queue entry standing for a group of end
/// events ([`Groups`]); real slots stay below it.
const GROUP: u32 = 0x7FFF_FFFF;

/// End events of lone flows, held together per end time.
///
/// Most flows start alone on their links (every flow of a ring step, and
/// of a halving-doubling step without contention) and, with the same size
/// and speed, end together. Instead of one queue entry each, the flows of
/// an instant that start alone and end at the same time share one entry,
/// a marker (slot [`GROUP`], the group's number as version). When the
/// marker comes out of the queue it is replaced by the members' own end
/// events, and the instant's events are sorted again, so they are handled
/// in exactly the order, and with exactly the arithmetic, of one entry per
/// flow. A member that stops being alone before it ends has its rate
/// changed, which gives it a new version and an end event of its own; its
/// entry in the group is then dropped as stale, as any outdated end event
/// is. So grouping changes the work, never the result (property test
/// `grouped_and_plain_runs_agree`; [`Settings::plain`] turns it off).
#[derive(Debug, Default)]
struct Groups {
    /// Members' packed end events, per group number.
    members: Vec<Vec<u64>>,
    /// Group numbers free for reuse.
    free: Vec<u32>,
    /// The groups being filled at this instant: (end time bits, group).
    open: Vec<(u64, u32)>,
}

impl Groups {
    /// Holds the end event `ev` (of a flow alone on its links, later than
    /// the current instant) for its group.
    fn add(&mut self, ev: Event) {
        let g = match self.open.iter().find(|&&(t, _)| t == ev.time) {
            Some(&(_, g)) => g,
            None => {
                let g = match self.free.pop() {
                    Some(g) => g,
                    None => {
                        self.members.push(Vec::new());
                        (self.members.len() - 1) as u32
                    }
                };
                self.open.push((ev.time, g));
                g
            }
        };
        self.members[g as usize].push(ev.value());
    }

    /// Puts one marker per group filled at this instant into the queue.
    fn flush(&mut self, queue: &mut Queue) {
        for &(time, g) in &self.open {
            Event {
                time,
                kind: 0,
                id: GROUP,
                version: g,
            }
            .push(queue);
        }
        self.open.clear();
    }

    /// Replaces the markers in `batch` (the sorted values of one instant's
    /// events) by their members, and sorts the batch again.
    fn expand(&mut self, batch: &mut Vec<u64>) {
        let lo = u64::from(GROUP) << 32;
        let first = batch.partition_point(|&v| v < lo);
        let last = batch.partition_point(|&v| v < 1 << 63);
        if first == last {
            return;
        }
        let marks: Vec<u64> = batch.drain(first..last).collect();
        for v in marks {
            let g = v as u32;
            let members = &mut self.members[g as usize];
            batch.append(members);
            self.free.push(g);
        }
        batch.sort_unstable();
    }
}

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

/// Max-min fair rates by water-filling over a set of links and the flows
/// on them. Scratch arrays are indexed by link id and slot and are reused
/// from one call to the next.
#[derive(Debug, Default)]
struct Filler {
    room: Vec<f64>,
    count: Vec<u32>,
    frozen: Vec<u32>,
    stamp: u32,
    active: Vec<u32>,
}

impl Filler {
    fn new(links: usize) -> Self {
        Self {
            room: vec![0.0; links],
            count: vec![0; links],
            ..Self::default()
        }
    }

    /// Sets `rate_out[f]` for every flow `f` of the component made of
    /// `links`, where `on[l]` lists the flows on link l and `route(f)` the
    /// links of flow f.
    ///
    /// Each round finds the lowest share `room / flows` over the links
    /// that still have unfrozen flows, and freezes every flow on every
    /// link at that level (within a relative 1e-12, for rounding). Links
    /// above the level stay above it when flows leave them, so one pass
    /// per level suffices; the rounds are the distinct bottleneck levels,
    /// a handful on fabrics whose links have one or two speeds.
    fn fill<'a>(
        &mut self,
        caps: &[f64],
        links: &[u32],
        on: &[Vec<u32>],
        route: impl Fn(u32) -> &'a [u32],
        rate_out: &mut impl FnMut(u32, f64),
    ) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.frozen.fill(0);
            self.stamp = 1;
        }
        self.active.clear();
        for &l in links {
            let li = l as usize;
            self.room[li] = caps[li];
            self.count[li] = on[li].len() as u32;
            if self.count[li] > 0 {
                self.active.push(l);
            }
        }
        while !self.active.is_empty() {
            let level = self
                .active
                .iter()
                .map(|&l| self.room[l as usize] / f64::from(self.count[l as usize]))
                .fold(f64::INFINITY, f64::min)
                .max(0.0);
            let limit = level + level * 1e-12;
            for k in 0..self.active.len() {
                let li = self.active[k] as usize;
                let count = self.count[li];
                if count == 0 || self.room[li] / f64::from(count) > limit {
                    continue;
                }
                for &f in &on[li] {
                    let fi = f as usize;
                    if self.frozen.len() <= fi {
                        self.frozen.resize(fi + 1, 0);
                    }
                    if self.frozen[fi] == self.stamp {
                        continue;
                    }
                    self.frozen[fi] = self.stamp;
                    rate_out(f, level);
                    for &l2 in route(f) {
                        let l2 = l2 as usize;
                        self.room[l2] = (self.room[l2] - level).max(0.0);
                        self.count[l2] -= 1;
                    }
                }
            }
            let count = &self.count;
            self.active.retain(|&l| count[l as usize] > 0);
        }
    }
}

/// Max-min fair rates of `flows` (each a list of link ids) over links of
/// capacity `caps`: the water-filling the simulator runs on each
/// component. Exposed for tests and for callers that want rates alone.
pub fn max_min_rates(caps: &[f64], flows: &[Vec<usize>]) -> Result<Vec<f64>> {
    let mut on: Vec<Vec<u32>> = vec![Vec::new(); caps.len()];
    let mut routes: Vec<Vec<u32>> = Vec::with_capacity(flows.len());
    for (f, links) in flows.iter().enumerate() {
        let mut r = Vec::with_capacity(links.len());
        for &l in links {
            if l >= caps.len() {
                return Err(Error::parameter(
                    "flows",
                    format!(
                        "flow {f} uses link {l}, but there are only {} links",
                        caps.len()
                    ),
                ));
            }
            on[l].push(f as u32);
            r.push(l as u32);
        }
        routes.push(r);
    }
    let used: Vec<u32> = (0..caps.len() as u32)
        .filter(|&l| !on[l as usize].is_empty())
        .collect();
    let mut rates = vec![f64::INFINITY; flows.len()];
    let mut filler = Filler::new(caps.len());
    filler.fill(caps, &used, &on, |f| &routes[f as usize], &mut |f, r| {
        rates[f as usize] = r;
    });
    Ok(rates)
}

/// Runs `sched` event by event over links of capacity `caps` (bytes/µs,
/// indexed by link id) with the routes `routes` gives; sends of
/// `eager_bytes` or more wait for their receiver (see [`gates`];
/// `u64::MAX`: every send eager). The estimate calls [`run_with`], which
/// it tells when the lone pass already failed; the tests call this.
#[cfg(test)]
pub(crate) fn run(
    sched: &SendSchedule,
    caps: &[f64],
    routes: &mut impl Routes,
    eager_bytes: u64,
) -> Result<Outcome> {
    run_with(sched, caps, routes, eager_bytes, Settings::default(), None)
}

/// When each send of a schedule started (its flows' first byte) and was
/// delivered, µs, indexed by send.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SendTimes {
    pub start_us: Vec<f64>,
    pub delivered_us: Vec<f64>,
}

/// How [`run_with`] runs: the defaults are [`run`]'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Compare the rates after every instant with a water-filling of every
    /// flow in flight (tests).
    pub check: bool,
    /// Give every flow an end event of its own: no [`Groups`] (tests hold
    /// the two paths equal).
    pub plain: bool,
    /// Run the event loop even where no two flows would share a link: no
    /// [`lone`] pass (tests hold the two equal).
    pub general: bool,
}

/// [`run`] with `settings`; with `times`, also when each send started and
/// was delivered.
pub(crate) fn run_with(
    sched: &SendSchedule,
    caps: &[f64],
    routes: &mut impl Routes,
    eager_bytes: u64,
    settings: Settings,
    times: Option<&mut SendTimes>,
) -> Result<Outcome> {
    let check = settings.check;
    let n = sched.len();
    let mut times = times;
    if !settings.general
        && !check
        && let Some(out) = lone(sched, caps, routes, eager_bytes, times.as_deref_mut())?
    {
        return Ok(out);
    }
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
        mut waiting,
        fan_start,
        fan,
    } = Dependants::new(sched, eager_bytes);
    let mut ready: Vec<f64> = vec![0.0; n];

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

    let mut slots: Vec<Slot> = Vec::with_capacity(2 * sched.ranks() + 16);
    let mut free: Vec<u32> = Vec::new();
    let mut on: Vec<Vec<u32>> = vec![Vec::new(); links];
    // The sum of the rates on every link.
    let mut load: Vec<f64> = vec![0.0; links];
    let mut filler = Filler::new(links);
    // Per-batch scratch: touched links, the component's links and flows.
    let mut touched: Vec<u32> = Vec::new();
    let mut link_mark: Vec<u32> = vec![0; links];
    let mut slot_mark: Vec<u32> = Vec::new();
    let mut mark: u32 = 0;
    let mut comp_links: Vec<u32> = Vec::new();
    let mut comp_flows: Vec<u32> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    let mut new_rate: Vec<f64> = Vec::new();
    // Sprayed sends: paths still in flight, and the latest delivery.
    let mut paths: Vec<FlowRoute> = Vec::new();
    let mut parts: Vec<u32> = Vec::new();
    let mut part_at: Vec<f64> = Vec::new();

    let mut end = 0.0f64;
    // Ranks with nothing to receive still owe their tail.
    for (r, &last) in sched.final_recv.iter().enumerate() {
        if last == NONE {
            end = end.max(sched.tail_us[r]);
        }
    }
    let mut delivered = 0usize;
    let mut out = Outcome {
        time_us: 0.0,
        max_link_flows: 0,
        events: 0,
        recomputes: 0,
    };

    let mut groups = Groups::default();
    let mut batch: Vec<u64> = Vec::new();
    while let Some(time) = queue.pop_min(&mut batch) {
        groups.expand(&mut batch);
        let now = f64::from_bits(time);
        mark = next_mark(mark, &mut link_mark, &mut slot_mark);
        let batch_mark = mark;
        touched.clear();
        // Every event at this instant, including those the batch itself
        // adds at the same time.
        let mut k = 0;
        loop {
            if k == batch.len() {
                batch.clear();
                k = 0;
                if !queue.pop_same(&mut batch) {
                    break;
                }
                groups.expand(&mut batch);
            }
            let ev = Event::unpack(time, batch[k]);
            k += 1;
            match ev.kind {
                0 => {
                    let s = ev.id as usize;
                    if slots[s].version != ev.version || slots[s].send == NONE {
                        continue;
                    }
                    out.events += 1;
                    let slot = slots[s];
                    // A flow is held back only on a full link; when none of
                    // this flow's links was full, its end frees room nobody
                    // was waiting for, and no rate changes.
                    let full = slot
                        .route
                        .links()
                        .iter()
                        .any(|&l| is_full(load[l as usize], caps[l as usize]));
                    for &l in slot.route.links() {
                        let li = l as usize;
                        let list = &mut on[li];
                        if let Some(k) = list.iter().position(|&x| x == ev.id) {
                            list.swap_remove(k);
                        }
                        load[li] = if list.is_empty() {
                            0.0
                        } else {
                            load[li] - slot.rate
                        };
                        if full && !list.is_empty() && link_mark[li] != batch_mark {
                            link_mark[li] = batch_mark;
                            touched.push(l);
                        }
                    }
                    slots[s].send = NONE;
                    slots[s].version = slots[s].version.wrapping_add(1);
                    free.push(ev.id);
                    let mut at = now + slot.route.latency;
                    let send = slot.send as usize;
                    if parts.get(send).is_some_and(|&k| k > 0) {
                        parts[send] -= 1;
                        part_at[send] = part_at[send].max(at);
                        if parts[send] > 0 {
                            continue;
                        }
                        at = part_at[send];
                    }
                    deliver(
                        sched,
                        slot.send as usize,
                        at,
                        &mut end,
                        &fan_start,
                        &fan,
                        &mut waiting,
                        &mut ready,
                        &mut queue,
                        delivered_us,
                    )?;
                    delivered += 1;
                }
                _ => {
                    out.events += 1;
                    let i = ev.id as usize;
                    if let Some(t) = start_us.get_mut(i) {
                        *t = now;
                    }
                    paths.clear();
                    routes.paths(i, &mut paths)?;
                    let total = sched.bytes[i] as f64;
                    let Some(&first_path) = paths.first() else {
                        return Err(Error::Internal(format!("send {i} has no route")));
                    };
                    if total <= 0.0 || paths.iter().all(|r| r.len == 0) {
                        let at = now + first_path.latency;
                        deliver(
                            sched,
                            i,
                            at,
                            &mut end,
                            &fan_start,
                            &fan,
                            &mut waiting,
                            &mut ready,
                            &mut queue,
                            delivered_us,
                        )?;
                        delivered += 1;
                        continue;
                    }
                    // A sprayed send is one flow per path, each with an
                    // even share of the bytes; it is delivered when the
                    // last of them is.
                    let bytes = total / paths.len() as f64;
                    if paths.len() > 1 {
                        if parts.len() < n {
                            parts.resize(n, 0);
                            part_at.resize(n, 0.0);
                        }
                        parts[i] = paths.len() as u32;
                        part_at[i] = 0.0;
                    }
                    for &route in &paths {
                        let s = match free.pop() {
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
                            on[li].push(s);
                            out.max_link_flows = out.max_link_flows.max(on[li].len());
                        }
                        // When the room left on its links is at least the rate
                        // of every flow already there, taking all of it is the
                        // max-min allocation: the new flow is the largest on
                        // the link it fills, and no other flow was held back by
                        // a link with room to spare. Otherwise its component is
                        // water-filled below.
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
                                on[l as usize].iter().all(|&g| {
                                    g == s || slots[g as usize].rate <= room * (1.0 + 1e-12)
                                })
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
                            // Alone on its links, it ends with the other
                            // lone flows that end then, unless a flow joins
                            // it first (then its version moves on).
                            let alone = paths.len() == 1
                                && route.links().iter().all(|&l| on[l as usize].len() == 1);
                            if alone && !settings.plain && ev.time > time {
                                groups.add(ev);
                            } else {
                                ev.push(&mut queue);
                            }
                        } else {
                            for &l in route.links() {
                                if link_mark[l as usize] != batch_mark {
                                    link_mark[l as usize] = batch_mark;
                                    touched.push(l);
                                }
                            }
                        }
                    }
                }
            }
        }
        groups.flush(&mut queue);
        if touched.is_empty() {
            if check {
                check_rates(&slots, &on, caps)?;
            }
            continue;
        }
        // The components around the touched links.
        mark = next_mark(mark, &mut link_mark, &mut slot_mark);
        if slot_mark.len() < slots.len() {
            slot_mark.resize(slots.len(), 0);
        }
        for &seed in &touched {
            if link_mark[seed as usize] == mark {
                continue;
            }
            comp_links.clear();
            comp_flows.clear();
            stack.clear();
            link_mark[seed as usize] = mark;
            stack.push(seed);
            while let Some(l) = stack.pop() {
                comp_links.push(l);
                for &f in &on[l as usize] {
                    if slot_mark[f as usize] == mark {
                        continue;
                    }
                    slot_mark[f as usize] = mark;
                    comp_flows.push(f);
                    for &l2 in slots[f as usize].route.links() {
                        if link_mark[l2 as usize] != mark {
                            link_mark[l2 as usize] = mark;
                            stack.push(l2);
                        }
                    }
                }
            }
            if comp_flows.is_empty() {
                continue;
            }
            if new_rate.len() < slots.len() {
                new_rate.resize(slots.len(), 0.0);
            }
            if comp_flows.len() == 1 {
                let f = comp_flows[0] as usize;
                new_rate[f] = slots[f]
                    .route
                    .links()
                    .iter()
                    .map(|&l| caps[l as usize])
                    .fold(f64::INFINITY, f64::min);
            } else {
                out.recomputes += 1;
                let slots_ref = &slots;
                let rates = &mut new_rate;
                filler.fill(
                    caps,
                    &comp_links,
                    &on,
                    |f| slots_ref[f as usize].route.links(),
                    &mut |f, r| rates[f as usize] = r,
                );
            }
            for &f in &comp_flows {
                let slot = &mut slots[f as usize];
                let rate = new_rate[f as usize];
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
                    load[l as usize] += rate - slot.rate;
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
                .push(&mut queue);
            }
        }
        if check {
            check_rates(&slots, &on, caps)?;
        }
    }
    if delivered != n {
        return Err(Error::Internal(format!(
            "the simulation delivered {delivered} of {n} sends: the schedule's dependencies form a cycle"
        )));
    }
    out.time_us = end;
    Ok(out)
}

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

/// Who waits for whom: per send the number of sends it still waits for
/// (its schedule dependencies and its rendezvous [`gates`]), and the
/// reverse lists, the sends each one releases. The event-driven and the
/// packet-level simulators both start a send from these.
pub(crate) struct Dependants {
    /// Sends each send still waits for.
    pub waiting: Vec<u32>,
    /// Start of each send's dependants in `fan` (one more entry than sends).
    pub fan_start: Vec<u32>,
    /// The dependants of every send, send by send.
    pub fan: Vec<u32>,
}

impl Dependants {
    /// The dependencies of `sched` with sends of `eager_bytes` or more
    /// waiting for their receiver.
    pub(crate) fn new(sched: &SendSchedule, eager_bytes: u64) -> Self {
        let n = sched.len();
        let (gate_start, gate) = gates(sched, eager_bytes);
        // No gates at all: an empty start list.
        let gates_of = |i: usize| match gate_start.get(i..i + 2) {
            Some(&[a, b]) => &gate[a as usize..b as usize],
            _ => &[],
        };
        let mut waiting: Vec<u32> = vec![0; n];
        // Counts, then the end of each send's list, then (filled from the
        // back, in decreasing order of dependant) its start.
        let mut fan_start: Vec<u32> = vec![0; n + 1];
        for (i, wait) in waiting.iter_mut().enumerate() {
            let deps = sched.deps(i);
            *wait = (deps.len() + gates_of(i).len()) as u32;
            for &d in deps.iter().chain(gates_of(i)) {
                fan_start[d as usize] += 1;
            }
        }
        let mut total = 0u32;
        for x in &mut fan_start[..n] {
            total += *x;
            *x = total;
        }
        fan_start[n] = total;
        let mut fan: Vec<u32> = vec![0; total as usize];
        for i in (0..n).rev() {
            for &d in sched.deps(i).iter().chain(gates_of(i)) {
                let at = &mut fan_start[d as usize];
                *at -= 1;
                fan[*at as usize] = i as u32;
            }
        }
        Self {
            waiting,
            fan_start,
            fan,
        }
    }
}

/// The rendezvous gates of every send, as (start per send, gates): a send
/// of `eager_bytes` or more to rank d of step k starts only once d has
/// received everything of its previous receiving step (the sends to d of
/// the largest step below k that has any), i.e. once d has finished that
/// step and posted the receive for this one. Gates the send already waits
/// for are left out, so a ring, whose sends forward what they received,
/// gets none. A send below `eager_bytes` has no gate: it goes as soon as
/// its sender is ready, and the receiver buffers it. Both lists are empty
/// when no send has a gate.
fn gates(sched: &SendSchedule, eager_bytes: u64) -> (Vec<u32>, Vec<u32>) {
    let n = sched.len();
    // Rendezvous per channel: every send already waits for the previous
    // send into its buffer.
    if sched.channel_credit || !sched.bytes.iter().any(|&b| b >= eager_bytes) {
        return (Vec::new(), Vec::new());
    }
    // One pass over the sends in step order (the index order of a schedule
    // built step by step), keeping per rank the sends into it of its
    // latest receiving step and of the one before.
    let sorted = sched.step.windows(2).all(|w| w[0] <= w[1]);
    let order: Option<Vec<u32>> = (!sorted).then(|| {
        let mut o: Vec<u32> = (0..n as u32).collect();
        o.sort_by_key(|&i| sched.step[i as usize]);
        o
    });
    let ranks = sched.ranks();
    let mut cur_step = vec![u32::MAX; ranks];
    let mut into_cur: Vec<Vec<u32>> = vec![Vec::new(); ranks];
    let mut into_prev: Vec<Vec<u32>> = vec![Vec::new(); ranks];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for k in 0..n {
        let i = order.as_ref().map_or(k, |o| o[k] as usize);
        let d = sched.dst[i] as usize;
        let step = sched.step[i];
        if cur_step[d] != step {
            std::mem::swap(&mut into_prev[d], &mut into_cur[d]);
            into_cur[d].clear();
            cur_step[d] = step;
        }
        if sched.bytes[i] >= eager_bytes {
            let deps = sched.deps(i);
            // Latest first, as the chains of the first version ran.
            for &j in into_prev[d].iter().rev() {
                if !deps.contains(&j) {
                    pairs.push((i as u32, j));
                }
            }
        }
        into_cur[d].push(i as u32);
    }
    if pairs.is_empty() {
        // No send waits for a receiver it does not already wait for (a
        // ring): nothing to store per send.
        return (Vec::new(), Vec::new());
    }
    let mut start = vec![0u32; n + 1];
    for &(i, _) in &pairs {
        start[i as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut gate = vec![0u32; pairs.len()];
    let mut next = start.clone();
    for &(i, j) in &pairs {
        gate[next[i as usize] as usize] = j;
        next[i as usize] += 1;
    }
    (start, gate)
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
        if (have - want).abs() > 1e-9 * want.abs().max(1.0) {
            return Err(Error::Internal(format!(
                "send {} runs at {have}, max-min fair is {want}",
                slots[s].send
            )));
        }
    }
    Ok(())
}

/// True when a link carrying `load` of its `cap` has no room left (within
/// rounding).
fn is_full(load: f64, cap: f64) -> bool {
    load >= cap * (1.0 - 1e-9)
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

fn time_bits(t: f64) -> Result<u64> {
    time_key(t).ok_or_else(|| Error::Internal(format!("an event at time {t} µs")))
}

/// The queue key of time `t`, µs: its bits when it is finite and not
/// negative (`+ 0.0` turns -0.0 into 0.0, whose bits order correctly).
#[inline(always)]
fn time_key(t: f64) -> Option<u64> {
    (t.is_finite() && t >= 0.0).then(|| (t + 0.0).to_bits())
}

fn start_event(at: f64, send: usize) -> Result<Event> {
    Ok(Event {
        time: time_bits(at)?,
        kind: 1,
        id: send as u32,
        version: 0,
    })
}

/// Send `i` is delivered at `at`: its dependants may become ready.
#[allow(clippy::too_many_arguments)]
fn deliver(
    sched: &SendSchedule,
    i: usize,
    at: f64,
    end: &mut f64,
    fan_start: &[u32],
    fan: &[u32],
    waiting: &mut [u32],
    ready: &mut [f64],
    queue: &mut Queue,
    delivered_us: &mut [f64],
) -> Result<()> {
    if let Some(d) = delivered_us.get_mut(i) {
        *d = at;
    }
    *end = end.max(at);
    let dst = sched.dst[i] as usize;
    if sched.final_recv.get(dst) == Some(&(i as u32)) {
        *end = end.max(at + sched.tail_us[dst]);
    }
    for &j in &fan[fan_start[i] as usize..fan_start[i + 1] as usize] {
        let j = j as usize;
        ready[j] = ready[j].max(at);
        waiting[j] -= 1;
        if waiting[j] == 0 {
            start_event(ready[j] + sched.delay_us[j], j)?.push(queue);
        }
    }
    Ok(())
}
