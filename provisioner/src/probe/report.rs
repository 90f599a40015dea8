//! The probe's results as people read them (a table like nccl-tests') and as programs read them (JSON).

use std::fmt::Write as _;

use serde::Serialize;

/// One rank's report of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// This rank.
    pub rank: usize,
    /// Ranks in the run.
    pub world: usize,
    /// `ring`, `hd` or `hdrm`.
    pub algorithm: &'static str,
    /// Every rank's data address.
    pub addresses: Vec<String>,
    /// Segment size in bytes.
    pub segment: usize,
    /// Warm-up iterations per size.
    pub warmup: usize,
    /// Timed iterations per size.
    pub iters: usize,
    /// One result per size.
    pub results: Vec<SizeResult>,
}

/// The figures of one size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeResult {
    /// Bytes per rank.
    pub bytes: u64,
    /// f32 elements per rank.
    pub count: u64,
    /// `float` (f32).
    #[serde(rename = "type")]
    pub dtype: &'static str,
    /// `sum`.
    pub redop: &'static str,
    /// Microseconds per allreduce: the mean over ranks of each rank's
    /// mean over the timed iterations.
    pub time_us: f64,
    /// Algorithm bandwidth, bytes / time, in Gbps (10^9 bit/s), as every
    /// JSON figure of both crates ([`planner::estimate::bandwidths`]); the
    /// text table prints it in nccl-tests' GB/s.
    pub algbw_gbps: f64,
    /// Bus bandwidth, algbw x 2(n-1)/n, in Gbps.
    pub busbw_gbps: f64,
    /// Wrong elements summed over ranks (the worst checked iteration);
    /// `null` when unchecked.
    pub wrong: Option<u64>,
    /// This rank's own mean time in microseconds.
    pub local_time_us: f64,
    /// This rank's own wrong elements.
    pub local_wrong: Option<u64>,
    /// This rank's steps, each timed as the mean over timed iterations.
    pub steps: Vec<StepTime>,
}

impl SizeResult {
    /// The result of `bytes` over `world` ranks taking `time_us`.
    pub fn new(
        bytes: u64,
        world: usize,
        time_us: f64,
        wrong: Option<u64>,
        local_time_us: f64,
        local_wrong: Option<u64>,
        steps: Vec<StepTime>,
    ) -> Self {
        let (algbw_gbps, busbw_gbps) = planner::estimate::bandwidths(bytes, time_us, world);
        SizeResult {
            bytes,
            count: bytes / 4,
            dtype: "float",
            redop: "sum",
            time_us,
            algbw_gbps,
            busbw_gbps,
            wrong,
            local_time_us,
            local_wrong,
            steps,
        }
    }
}

/// One step of one rank.
#[derive(Debug, Clone, Serialize)]
pub struct StepTime {
    /// `fold`, `reduce-scatter`, `all-gather` or `unfold`.
    pub phase: &'static str,
    /// Position within the phase, from 1.
    pub number: usize,
    /// The peer, if the rank takes part.
    pub partner: Option<usize>,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Mean microseconds.
    pub time_us: f64,
}

/// nccl-tests prints GB/s (10^9 bytes a second); the JSON, like every
/// other figure of both crates, is in Gbps.
const BITS_PER_BYTE: f64 = 8.0;

/// The table: a header with the run's settings, one line per size, and
/// the mean bus bandwidth, like nccl-tests (in its GB/s); with `steps`,
/// each size's steps as comment lines after its row.
pub fn render(r: &Report, steps: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# provisioner probe: allreduce, f32 sum, algorithm {}, {} rank{}, warm-up {}, iterations {}, segment {} B",
        r.algorithm,
        r.world,
        if r.world == 1 { "" } else { "s" },
        r.warmup,
        r.iters,
        r.segment
    );
    let _ = writeln!(
        out,
        "# rank {} of {} at {}",
        r.rank,
        r.world,
        r.addresses.get(r.rank).map_or("-", String::as_str)
    );
    let _ = writeln!(out, "#");
    let _ = writeln!(
        out,
        "#{:>14} {:>13} {:>7} {:>6} {:>11} {:>8} {:>8} {:>7}",
        "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"
    );
    let _ = writeln!(
        out,
        "#{:>14} {:>13} {:>7} {:>6} {:>11} {:>8} {:>8} {:>7}",
        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", ""
    );
    // The units line ends in an empty column: no trailing spaces.
    let units_end = out.trim_end().len();
    out.truncate(units_end);
    out.push('\n');
    for s in &r.results {
        let _ = writeln!(
            out,
            "{:>15} {:>13} {:>7} {:>6} {:>11.2} {:>8.2} {:>8.2} {:>7}",
            s.bytes,
            s.count,
            s.dtype,
            s.redop,
            s.time_us,
            s.algbw_gbps / BITS_PER_BYTE,
            s.busbw_gbps / BITS_PER_BYTE,
            s.wrong.map_or("-".to_string(), |w| w.to_string())
        );
        if steps {
            let _ = writeln!(
                out,
                "#{:>38} {:>8} {:>12} {:>12} {:>11}",
                format!("rank {} step", r.rank),
                "partner",
                "sent(B)",
                "received(B)",
                "time(us)"
            );
            for t in &s.steps {
                let _ = writeln!(
                    out,
                    "#{:>38} {:>8} {:>12} {:>12} {:>11.2}",
                    format!("{} {}", t.phase, t.number),
                    t.partner.map_or("-".to_string(), |p| p.to_string()),
                    t.sent_bytes,
                    t.received_bytes,
                    t.time_us
                );
            }
        }
    }
    let wrong: u64 = r.results.iter().filter_map(|s| s.wrong).sum();
    let checked = r.results.iter().any(|s| s.wrong.is_some());
    let _ = writeln!(
        out,
        "# Wrong elements : {}",
        if checked {
            format!("{wrong} {}", if wrong == 0 { "OK" } else { "FAILED" })
        } else {
            "not checked".to_string()
        }
    );
    let avg = r.results.iter().map(|s| s.busbw_gbps).sum::<f64>()
        / r.results.len().max(1) as f64
        / BITS_PER_BYTE;
    let _ = writeln!(out, "# Avg bus bandwidth : {avg:.3} GB/s");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_bandwidth_follows_the_allreduce_definition() {
        let s = SizeResult::new(1_000_000, 4, 100.0, Some(0), 100.0, Some(0), Vec::new());
        // 10^6 bytes in 100 µs: 10 GB/s, 80 Gbps; 4 ranks: busbw 1.5 x.
        assert!((s.algbw_gbps - 80.0).abs() < 1e-9);
        assert!((s.busbw_gbps - 120.0).abs() < 1e-9);
        assert_eq!(s.count, 250_000);
        assert_eq!(
            SizeResult::new(8, 1, 1.0, None, 1.0, None, Vec::new()).busbw_gbps,
            0.0
        );
    }

    #[test]
    fn the_table_has_one_row_per_size_and_a_verdict() {
        let r = Report {
            rank: 0,
            world: 2,
            algorithm: "ring",
            addresses: vec!["127.0.0.1:1".into(), "127.0.0.1:2".into()],
            segment: 4096,
            warmup: 1,
            iters: 2,
            results: vec![
                SizeResult::new(8, 2, 10.0, Some(0), 10.0, Some(0), Vec::new()),
                SizeResult::new(1024, 2, 20.0, Some(3), 20.0, Some(1), Vec::new()),
            ],
        };
        let t = render(&r, false);
        let rows: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1].split_whitespace().collect::<Vec<_>>(),
            ["1024", "256", "float", "sum", "20.00", "0.05", "0.05", "3"]
        );
        assert!(t.contains("# Wrong elements : 3 FAILED"), "{t}");
    }
}
