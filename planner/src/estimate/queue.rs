//! The simulator's event queue: a monotone radix heap.
//!
//! A discrete-event simulation never schedules an event before the one it
//! is handling, so its queue only ever needs keys at or above the last key
//! taken out. A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
//! algorithms for the shortest path problem", J. ACM 37(2), 1990) uses
//! that: an entry sits in the bucket of the highest bit in which its key
//! differs from the last key taken, so a push is one `leading_zeros` and a
//! `Vec::push`, and an entry moves to a lower bucket at most 64 times in
//! its life. A binary heap pays `log n` comparisons per push and pop
//! instead; in the event-driven simulator, where the events of one instant
//! come and go by the thousand (every flow of a ring step starts and ends
//! together), the binary heap was a third of the run time.
//!
//! Keys are the bit patterns of non-negative `f64` times, which order like
//! the numbers. Entries with the same key are taken together, as one
//! instant, in increasing order of their values, so the order of events at
//! one instant does not depend on when they were pushed.

/// Entries `(key, value)`; see the module documentation.
#[derive(Debug)]
pub(crate) struct Queue {
    /// The last key taken out (0 before the first).
    last: u64,
    /// Bucket `b > 0` holds keys whose highest bit differing from `last`
    /// is bit `b - 1`; bucket 0 holds keys equal to `last`.
    buckets: Vec<Vec<(u64, u64)>>,
    len: usize,
}

impl Default for Queue {
    fn default() -> Self {
        Self {
            last: 0,
            buckets: vec![Vec::new(); 65],
            len: 0,
        }
    }
}

impl Queue {
    fn bucket(&self, key: u64) -> usize {
        (64 - (key ^ self.last).leading_zeros()) as usize
    }

    /// Adds an entry. `key` must not be below the last key taken out;
    /// a lower key is clamped to it (debug builds assert).
    pub fn push(&mut self, key: u64, value: u64) {
        debug_assert!(key >= self.last, "an event before the current instant");
        let key = key.max(self.last);
        let b = self.bucket(key);
        self.buckets[b].push((key, value));
        self.len += 1;
    }

    /// Number of entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Takes every entry with the smallest key, appending their values to
    /// `out` in increasing order, and returns that key; `None` when empty.
    pub fn pop_min(&mut self, out: &mut Vec<u64>) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let b = (1..self.buckets.len()).find(|&b| !self.buckets[b].is_empty())?;
            let moved = std::mem::take(&mut self.buckets[b]);
            self.last = moved.iter().map(|&(k, _)| k).min()?;
            for &(k, v) in &moved {
                let nb = self.bucket(k);
                debug_assert!(nb < b);
                self.buckets[nb].push((k, v));
            }
            // Give the emptied bucket its allocation back.
            let mut moved = moved;
            moved.clear();
            self.buckets[b] = moved;
        }
        let key = self.last;
        self.take_current(out);
        Some(key)
    }

    /// Takes the entries pushed at the key last returned by [`pop_min`]
    /// since then, appending their values to `out` in increasing order;
    /// false when there are none.
    ///
    /// [`pop_min`]: Queue::pop_min
    pub fn pop_same(&mut self, out: &mut Vec<u64>) -> bool {
        if self.buckets[0].is_empty() {
            return false;
        }
        self.take_current(out);
        true
    }

    fn take_current(&mut self, out: &mut Vec<u64>) {
        let start = out.len();
        let current = &mut self.buckets[0];
        self.len -= current.len();
        out.extend(current.drain(..).map(|(_, v)| v));
        out[start..].sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn takes_one_instant_at_a_time_in_value_order() {
        let mut q = Queue::default();
        for (k, v) in [(5, 3), (2, 9), (5, 1), (9, 0), (2, 4)] {
            q.push(k, v);
        }
        let mut out = Vec::new();
        assert_eq!(q.pop_min(&mut out), Some(2));
        assert_eq!(out, [4, 9]);
        q.push(2, 1);
        out.clear();
        assert!(q.pop_same(&mut out));
        assert_eq!(out, [1]);
        assert!(!q.pop_same(&mut out));
        out.clear();
        assert_eq!(q.pop_min(&mut out), Some(5));
        assert_eq!(out, [1, 3]);
        q.push(7, 2);
        out.clear();
        assert_eq!(q.pop_min(&mut out), Some(7));
        assert_eq!(q.pop_min(&mut out), Some(9));
        assert_eq!(out, [2, 0]);
        assert_eq!(q.pop_min(&mut out), None);
        assert_eq!(q.len(), 0);
    }

    proptest! {
        /// Against a sorted list: any interleaving of pushes (never below
        /// the current instant) and pops gives the same instants and the
        /// same values in the same order.
        #[test]
        fn matches_a_sorted_list(ops in prop::collection::vec((0u64..1 << 20, 0u64..64, any::<bool>()), 1..300)) {
            let mut q = Queue::default();
            let mut model: Vec<(u64, u64)> = Vec::new();
            let mut now = 0u64;
            for (delta, value, pop) in ops {
                if pop {
                    let mut out = Vec::new();
                    let got = q.pop_min(&mut out);
                    model.sort_unstable();
                    let want = model.first().map(|&(k, _)| k);
                    prop_assert_eq!(got, want);
                    if let Some(k) = want {
                        now = k;
                        let values: Vec<u64> = model.iter().filter(|&&(x, _)| x == k).map(|&(_, v)| v).collect();
                        model.retain(|&(x, _)| x != k);
                        prop_assert_eq!(out, values);
                    }
                } else {
                    // Small deltas make ties common.
                    let key = now + delta % 8 * (delta >> 3);
                    q.push(key, value);
                    model.push((key, value));
                }
            }
        }
    }
}
