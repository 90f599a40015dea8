//! What every benchmark program shares.

use std::time::{Duration, Instant};

/// Runs `f` `rounds` times (at least once) and returns the best wall time
/// and the last result.
pub fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        last = Some(v);
    }
    (best, last.expect("at least one round"))
}
