//! DCQCN's reaction point: the rate of one sending flow (Zhu et al.,
//! "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015,
//! Sec. 3, with the knobs NVIDIA ConnectX NICs add; their defaults and
//! sources are in [`crate::estimate::PacketParams::connectx`]).
//!
//! A flow starts at line rate with α = 1. On a congestion notification
//! (CNP) it remembers its rate as the target (`rt = rc`), cuts the current
//! rate to `rc (1 - α/2)` and raises α to `(1 - g) α + g`. Without CNPs, α
//! decays by `(1 - g)` every α period (ConnectX: 1 µs; the paper used the
//! rate timer's 55 µs), and the rate recovers in steps
//! driven by a timer (every T µs) and a byte counter (every B bytes sent):
//! while both have fired fewer than F times since the cut, fast recovery
//! moves `rc` halfway to `rt`; once one of them has fired F times the
//! target also rises by R_AI per step (additive increase), and once both
//! have, by i R_HAI (hyper increase, i the steps beyond F). The flow stops
//! counting when it is back at line rate.
//!
//! The paper sets the target to the current rate on every cut. ConnectX by
//! default (`CLAMP_TGT_RATE` 0, `CLAMP_TGT_RATE_AFTER_TIME_INC` 1) does so
//! only when the rate rose, by the timer or the byte counter, since the
//! last cut: a cut straight after another keeps the earlier target, so
//! recovery aims at the rate before the first of them
//! (`dcqcn_clamp_target`). Not modelled: ConnectX's
//! `RATE_REDUCE_MONITOR_PERIOD` (at most one cut per 4 µs; the receiver's
//! CNP spacing, 4 µs per flow by default, already keeps cuts that far
//! apart on one path).
//!
//! Timers are applied lazily, when the flow next sends or receives a CNP:
//! the rate a packet is paced at is the one in force when the packet
//! before it left, as a hardware rate limiter does. Times are integer
//! picoseconds.

/// The constants of the reaction point, in the units the engine uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Config {
    /// α gain.
    pub g: f64,
    /// α update period, ps.
    pub alpha_ps: u64,
    /// Rate-increase timer period, ps.
    pub timer_ps: u64,
    /// Byte counter, bytes.
    pub bytes: u64,
    /// Additive increase, bytes/µs.
    pub rai: f64,
    /// Hyper increase, bytes/µs.
    pub rhai: f64,
    /// Fast-recovery steps.
    pub f: u32,
    /// Lowest rate, bytes/µs.
    pub min_rate: f64,
    /// Every cut sets the target to the current rate (the paper's rule);
    /// otherwise only a cut that follows a rate increase does, and a cut
    /// straight after another keeps the target (ConnectX's default:
    /// `CLAMP_TGT_RATE` 0, `CLAMP_TGT_RATE_AFTER_TIME_INC` 1).
    pub clamp_target: bool,
}

/// The rate state of one flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rate {
    /// Current rate, bytes/µs.
    pub rc: f64,
    /// Target rate, bytes/µs.
    rt: f64,
    /// Line rate, bytes/µs.
    line: f64,
    alpha: f64,
    /// When α last decayed, ps.
    alpha_at: u64,
    /// When the rate was last cut, ps.
    cut_at: u64,
    timer_n: u64,
    byte_n: u64,
    /// Bytes sent since the byte counter last fired.
    sent: u64,
    /// Recovering from a cut (timers running).
    recovering: bool,
    /// The rate rose since the last cut.
    increased: bool,
}

impl Rate {
    /// A flow at line rate `line` (bytes/µs), started at `now`.
    pub fn new(line: f64, now: u64) -> Self {
        Self {
            rc: line,
            rt: line,
            line,
            alpha: 1.0,
            alpha_at: now,
            cut_at: now,
            timer_n: 0,
            byte_n: 0,
            sent: 0,
            recovering: false,
            increased: false,
        }
    }

    /// Below line rate.
    pub fn limited(&self) -> bool {
        self.rc < self.line
    }

    /// A CNP reached the sender at `now`.
    pub fn on_cnp(&mut self, now: u64, c: &Config) {
        self.catch_up(now, c);
        if c.clamp_target || self.increased || !self.recovering {
            self.rt = self.rc;
        }
        self.increased = false;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(c.min_rate.min(self.line));
        self.alpha = (1.0 - c.g) * self.alpha + c.g;
        self.alpha_at = now;
        self.cut_at = now;
        self.timer_n = 0;
        self.byte_n = 0;
        self.sent = 0;
        self.recovering = true;
    }

    /// The flow sent `bytes` at `now`.
    pub fn on_sent(&mut self, now: u64, bytes: u64, c: &Config) {
        self.catch_up(now, c);
        if !self.recovering {
            return;
        }
        self.sent += bytes;
        while self.recovering && self.sent >= c.bytes {
            self.sent -= c.bytes;
            self.byte_n += 1;
            self.increase(c);
        }
    }

    /// Applies the timer periods that ended by `now`.
    pub fn catch_up(&mut self, now: u64, c: &Config) {
        let periods = now.saturating_sub(self.alpha_at) / c.alpha_ps;
        if periods > 0 {
            self.alpha *= (1.0 - c.g).powi(periods.min(i32::MAX as u64) as i32);
            self.alpha_at += periods * c.alpha_ps;
        }
        if self.recovering {
            let due = now.saturating_sub(self.cut_at) / c.timer_ps;
            while self.recovering && self.timer_n < due {
                self.timer_n += 1;
                self.increase(c);
            }
        }
    }

    fn increase(&mut self, c: &Config) {
        let f = u64::from(c.f);
        let (hi, lo) = (self.timer_n.max(self.byte_n), self.timer_n.min(self.byte_n));
        if hi >= f && lo >= f {
            self.rt += (lo - f + 1) as f64 * c.rhai;
        } else if hi >= f {
            self.rt += c.rai;
        }
        self.rt = self.rt.min(self.line);
        self.rc = (self.rt + self.rc) / 2.0;
        self.increased = true;
        if self.rc >= self.line * (1.0 - 1e-9) {
            self.rc = self.line;
            self.rt = self.line;
            self.recovering = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            g: 1.0 / 256.0,
            alpha_ps: 55_000_000,
            timer_ps: 55_000_000,
            bytes: 10_000_000,
            rai: 5.0,
            rhai: 50.0,
            f: 5,
            min_rate: 12.5,
            clamp_target: true,
        }
    }

    #[test]
    fn without_clamping_a_cut_straight_after_another_keeps_the_target() {
        let c = Config {
            clamp_target: false,
            ..config()
        };
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        r.on_cnp(1, &c);
        // Two cuts, no increase between: the target is still line rate,
        // so the first step goes halfway back to it.
        r.catch_up(c.timer_ps + 1, &c);
        // α is still 1 at the second cut ((1 - g) + g), so it halves again.
        let cut = 3_125.0;
        assert!((r.rc - (12_500.0 + cut) / 2.0).abs() < 1e-6, "{}", r.rc);
        // With a step between, the next cut clamps the target.
        let before = r.rc;
        r.on_cnp(c.timer_ps + 2, &c);
        r.catch_up(2 * c.timer_ps + 2, &c);
        assert!(r.rc < before, "{} vs {before}", r.rc);
    }

    #[test]
    fn a_cnp_halves_the_rate_at_first_and_alpha_moves_towards_one() {
        let c = config();
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        // α = 1 at the start: the first cut halves the rate.
        assert_eq!(r.rc, 6_250.0);
        assert!(r.limited());
        // α stays 1 after the update ((1 - g) + g) and decays by (1 - g)
        // per period without CNPs.
        r.catch_up(2 * c.timer_ps, &c);
        assert!((r.alpha - (1.0 - c.g).powi(2)).abs() < 1e-12);
    }

    #[test]
    fn alpha_decays_on_its_own_period_apart_from_the_rate_timer() {
        // ConnectX: α every 1 µs, the rate timer every 300 µs.
        let c = Config {
            alpha_ps: 1_000_000,
            timer_ps: 300_000_000,
            ..config()
        };
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        r.catch_up(100_000_000, &c);
        // 100 α periods, no rate step yet.
        assert!((r.alpha - (1.0 - c.g).powi(100)).abs() < 1e-12);
        assert_eq!(r.rc, 6_250.0);
        r.catch_up(300_000_000, &c);
        assert_eq!(r.rc, (12_500.0 + 6_250.0) / 2.0);
    }

    #[test]
    fn fast_recovery_halves_the_gap_to_the_target_per_period() {
        let c = config();
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        r.catch_up(c.timer_ps, &c);
        assert_eq!(r.rc, (12_500.0 + 6_250.0) / 2.0);
        r.catch_up(3 * c.timer_ps, &c);
        // Three periods: the gap of 6,250 halved three times.
        assert!((r.rc - (12_500.0 - 6_250.0 / 8.0)).abs() < 1e-9);
    }

    #[test]
    fn the_rate_returns_to_line_rate_and_stops_counting() {
        let c = config();
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        r.on_cnp(1, &c);
        r.catch_up(5_000 * c.timer_ps, &c);
        assert_eq!(r.rc, 12_500.0);
        assert!(!r.limited());
    }

    #[test]
    fn the_byte_counter_also_drives_recovery() {
        let c = config();
        let mut r = Rate::new(12_500.0, 0);
        r.on_cnp(0, &c);
        r.on_sent(1, c.bytes, &c);
        assert_eq!(r.rc, (12_500.0 + 6_250.0) / 2.0);
    }

    #[test]
    fn the_rate_never_drops_below_the_floor() {
        let c = config();
        let mut r = Rate::new(12_500.0, 0);
        for t in 0..100 {
            r.on_cnp(t, &c);
        }
        assert_eq!(r.rc, c.min_rate);
    }
}
