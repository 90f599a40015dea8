//! The simulator's events and their queue keys: a flow's end or a send
//! becoming ready, packed into the monotone radix heap's (time, value),
//! and the [`Groups`] in which lone flows that end together share one
//! entry.

use crate::error::{Error, Result};
use crate::estimate::queue::Queue;

/// An event: a flow draining its last byte (`kind` 0, for slot `id` at
/// `version`) or a send becoming ready (`kind` 1). Times are non-negative,
/// so their bit patterns order like the numbers and serve as the queue's
/// key; the rest packs into the value, ordered by (kind, id, version),
/// which orders the events of one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Event {
    pub(super) time: u64,
    pub(super) kind: u8,
    pub(super) id: u32,
    pub(super) version: u32,
}

impl Event {
    pub(super) fn push(self, queue: &mut Queue) {
        queue.push(self.time, self.value());
    }

    pub(super) fn value(self) -> u64 {
        (u64::from(self.kind) << 63)
            | (u64::from(self.id & 0x7FFF_FFFF) << 32)
            | u64::from(self.version)
    }

    pub(super) fn unpack(time: u64, value: u64) -> Self {
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
pub(super) const GROUP: u32 = 0x7FFF_FFFF;

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
pub(super) struct Groups {
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
    pub(super) fn add(&mut self, ev: Event) {
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
    pub(super) fn flush(&mut self, queue: &mut Queue) {
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
    pub(super) fn expand(&mut self, batch: &mut Vec<u64>) {
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

pub(super) fn time_bits(t: f64) -> Result<u64> {
    time_key(t).ok_or_else(|| Error::Internal(format!("an event at time {t} µs")))
}

/// The queue key of time `t`, µs: its bits when it is finite and not
/// negative (`+ 0.0` turns -0.0 into 0.0, whose bits order correctly).
#[inline(always)]
pub(super) fn time_key(t: f64) -> Option<u64> {
    (t.is_finite() && t >= 0.0).then(|| (t + 0.0).to_bits())
}

pub(super) fn start_event(at: f64, send: usize) -> Result<Event> {
    Ok(Event {
        time: time_bits(at)?,
        kind: 1,
        id: send as u32,
        version: 0,
    })
}
