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
//!   instant seed a search for the part of the flows in flight whose
//!   rates may change: every flow on a seed link, then every flow on a
//!   *full* link of a flow found, and so on. That part is water-filled
//!   alone, each link offering the room the flows outside the part leave
//!   it. Each round of the water-filling freezes every flow on the links
//!   at the lowest share `room / flows`; the rounds are the distinct
//!   bottleneck levels, a few on fabrics whose links have one or two
//!   speeds. If a flow outside the part runs above the level of a link
//!   the part saturated, it joins the part (with its full links) and the
//!   part is water-filled again.
//!
//! Why the part is enough: an allocation is max-min fair when it fits the
//! links and every flow has a bottleneck, a full link on which no flow
//! runs faster. A flow outside the part has its bottleneck outside it (a
//! full link of a flow inside brings all its flows in), on which nothing
//! changed; it shares only links with room to spare with the part, which
//! the part's flows may fill, and the growing step makes it no faster than
//! the part's flows on any link they fill; the part's own flows get their
//! bottleneck from the water-filling. NCCL's pipelined trees put every
//! rail's trees on the same NICs and spines, so the flows in flight form
//! one connected component of some 15,000 flows at 8,192 GPUs, but the
//! part held by full links is a few dozen. [`Settings::whole`] water-fills
//! every connected component instead, as before; a property test and the
//! plan tests hold the two equal within rounding (a relative 1e-9: the
//! room is computed in another order), with every rate checked.
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
//!
//! # Where it lives
//!
//! - [`event_loop`]: the loop itself, as setup, loop and finish;
//! - [`events`]: the queue's events and the groups of lone flows' ends;
//! - [`fill`]: max-min water-filling;
//! - [`lone`]: the lone pass tried first;
//! - [`deps`]: who waits for whom, with the rendezvous gates.

mod deps;
mod event_loop;
mod events;
mod fill;
mod lone;

use super::schedules::SendSchedule;
use crate::error::Result;
use crate::network::MAX_LINKS;
pub(crate) use deps::Dependants;
#[cfg(doc)]
use deps::gates;
use event_loop::EventLoop;
#[cfg(doc)]
use events::Groups;
pub use fill::max_min_rates;
pub(crate) use lone::{Lone, lone};

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

    /// Told that a send starts in the event loop (once per send, for a
    /// count of progress); nothing by default.
    fn started(&mut self) {}

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
    /// Water-fill the whole connected component of every instant's
    /// changes, not only the part of it held by full links (tests hold
    /// the two equal; see the parent's docs on rates).
    pub whole: bool,
}

/// [`run`] with `settings`; with `times`, also when each send started and
/// was delivered: the lone pass first (unless `settings` say otherwise),
/// and the event loop where it fails.
pub(crate) fn run_with(
    sched: &SendSchedule,
    caps: &[f64],
    routes: &mut impl Routes,
    eager_bytes: u64,
    settings: Settings,
    times: Option<&mut SendTimes>,
) -> Result<Outcome> {
    let mut times = times;
    if !settings.general
        && !settings.check
        && let Some(out) = lone(sched, caps, routes, eager_bytes, times.as_deref_mut())?
    {
        return Ok(out);
    }
    EventLoop::setup(sched, caps, routes, eager_bytes, settings, times)?.run()
}
