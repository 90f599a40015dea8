//! Who waits for whom: each send's dependencies and rendezvous gates
//! ([`gates`]), and the reverse lists ([`Dependants`]) the event-driven
//! and packet-level simulators start sends from.

use crate::estimate::schedules::SendSchedule;

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
pub(super) fn gates(sched: &SendSchedule, eager_bytes: u64) -> (Vec<u32>, Vec<u32>) {
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
