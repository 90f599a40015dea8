//! The burn-in over a real cluster (`provisioner probe --burn-in`): every rank a sub-node of the plan; rounds of disjoint flows that together load every directed inter-switch link once (the lab's rounds, `planner::network::burnin::plan_rounds`), each flow a stream of bytes between two ranks timed by its receiver, and rank 0's report of the cables below a share of their rate.
//!
//! The ranks meet as for an allreduce (the mesh of [`super::transport`],
//! with the data connections the rounds need), start every round together
//! at a barrier, and send rank 0 the rate each measured. A flow whose
//! source or destination sub-node has no rank does not run; links that only
//! such flows would load are left out of the report (its `links` count
//! says how many were loaded). On a BiGraph each flow is one cable in one
//! direction; on a fat-tree its path through the spine is the fabric's
//! ECMP choice, not the planned one, so a slow flow there names its planned
//! path's links as suspects only.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use planner::network::Lab;
use planner::network::burnin::{self, BurnIn, Flow};

use super::Bootstrap;
use super::error::{Error, Result};
use super::transport::{Fingerprint, Mesh, Timeouts};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Seconds each flow runs at its expected rate (the bytes it sends
    /// are that rate times this).
    pub seconds: f64,
    /// Share of the expected rate below which a flow is slow.
    pub threshold: f64,
    /// Most flows at once.
    pub max_flows: usize,
    /// The rate a flow should reach, Gbit/s (`None`: the plan's speed of
    /// the slowest cable on its path; one TCP stream may not reach a
    /// 100 Gbps NIC's rate, so give what one stream reaches on a healthy
    /// pair).
    pub expect_gbps: Option<f64>,
    /// Connect and idle timeouts.
    pub timeouts: Timeouts,
}

/// Runs rank `boot.rank` of the burn-in of `lab` (the plan's), where
/// `sub_nodes[rank]` is each rank's sub-node (index into `lab.hosts`).
/// Rank 0 returns the report; the others return `None`.
pub fn run(boot: &Bootstrap, lab: &Lab, sub_nodes: &[usize], c: &Config) -> Result<Option<BurnIn>> {
    boot.check()?;
    if !(c.seconds > 0.0 && c.seconds <= 600.0) {
        return Err(Error::parameter(
            "seconds",
            "give a time above 0 and up to 600 seconds per flow",
        ));
    }
    if !(c.threshold > 0.0 && c.threshold < 1.0) {
        return Err(Error::parameter(
            "threshold",
            "give a share between 0 and 1, such as 0.7",
        ));
    }
    if let Some(g) = c.expect_gbps
        && !(g > 0.0 && g <= 10_000.0)
    {
        return Err(Error::parameter("expect-gbps", "give 0 to 10000 Gbit/s"));
    }
    if sub_nodes.len() != boot.world {
        return Err(Error::parameter(
            "ranks-file",
            format!(
                "{} sub-nodes for {} ranks: give one sub-node per rank",
                sub_nodes.len(),
                boot.world
            ),
        ));
    }
    if let Some(&bad) = sub_nodes.iter().find(|&&s| s >= lab.hosts.len()) {
        return Err(Error::parameter(
            "ranks-file",
            format!(
                "sub-node {bad} is not in the plan ({} sub-nodes)",
                lab.hosts.len()
            ),
        ));
    }
    let rank_of = |sub: usize| sub_nodes.iter().position(|&s| s == sub);
    // Every rank plans the same rounds and keeps the flows both of whose
    // sub-nodes have a rank.
    let rounds: Vec<Vec<Flow>> = burnin::plan_rounds(lab, c.max_flows)
        .map_err(|e| Error::parameter("plan", format!("{e}")))?
        .into_iter()
        .map(|r| {
            r.into_iter()
                .filter(|f| rank_of(f.src).is_some() && rank_of(f.dst).is_some())
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect();
    let me = boot.rank;
    let mut peers = BTreeSet::new();
    for f in rounds.iter().flatten() {
        let (s, d) = (rank_of(f.src), rank_of(f.dst));
        if s == Some(me) {
            peers.extend(d);
        }
        if d == Some(me) {
            peers.extend(s);
        }
    }
    let expected = |f: &Flow| -> u64 {
        match c.expect_gbps {
            Some(g) => (g * 1e6) as u64,
            None => u64::from(burnin::path_gbps(lab, f)) * 1_000_000,
        }
    };
    let fingerprint = Fingerprint {
        world: boot.world,
        algorithm: "burn-in".to_string(),
        sizes: rounds
            .iter()
            .flatten()
            .map(|f| bytes_of(expected(f), c.seconds))
            .collect(),
        warmup: 0,
        iters: rounds.len(),
        step_barrier: true,
    };
    let mesh = Mesh::establish(
        me,
        &boot.peers,
        &fingerprint,
        &peers,
        boot.secret.as_ref(),
        c.timeouts,
    )?;
    let mut rates: Vec<Vec<Option<u64>>> = Vec::with_capacity(rounds.len());
    for (r, round) in rounds.iter().enumerate() {
        let step = format!("burn-in round {r}");
        mesh.step_barrier(r, &step, &mut || Ok(()))?;
        let mine_out = round.iter().find(|f| rank_of(f.src) == Some(me));
        let mine_in = round.iter().find(|f| rank_of(f.dst) == Some(me));
        let measured = std::thread::scope(|scope| -> Result<Option<u64>> {
            let sender = mine_out.map(|f| {
                let to = rank_of(f.dst).unwrap_or(0);
                let n = bytes_of(expected(f), c.seconds);
                let step = step.clone();
                let mesh = &mesh;
                scope.spawn(move || send(mesh, to, n, &step, c.timeouts.idle))
            });
            let got = match mine_in {
                Some(f) => {
                    let from = rank_of(f.src).unwrap_or(0);
                    let n = bytes_of(expected(f), c.seconds);
                    Some(receive(&mesh, from, n, &step, c.timeouts.idle)?)
                }
                None => None,
            };
            if let Some(h) = sender {
                h.join()
                    .map_err(|_| Error::Internal("a burn-in sender panicked".to_string()))??;
            }
            Ok(got)
        })?;
        // Rank 0 gathers every receiver's rate (kbit/s; -1: none).
        let mut local = vec![-1.0; boot.world];
        local[me] = measured.map_or(-1.0, |k| k as f64);
        let all = mesh.reduce_figures(
            local,
            &|v: &[Vec<f64>]| {
                (0..v[0].len())
                    .map(|i| v.iter().map(|x| x[i]).fold(-1.0, f64::max))
                    .collect()
            },
            &step,
        )?;
        rates.push(
            round
                .iter()
                .map(|f| {
                    let k = rank_of(f.dst).map_or(-1.0, |d| all[d]);
                    (k >= 0.0).then_some(k as u64)
                })
                .collect(),
        );
    }
    if me != 0 {
        return Ok(None);
    }
    Ok(Some(burnin::report(
        lab,
        &lab.name,
        &rounds,
        &rates,
        &expected,
        c.seconds,
        c.threshold,
    )))
}

/// Bytes a flow sends: `seconds` at `kbit`, at least 64 KiB.
fn bytes_of(kbit: u64, seconds: f64) -> u64 {
    ((kbit as f64 * 1000.0 / 8.0 * seconds) as u64).max(64 * 1024)
}

fn send(mesh: &Mesh, to: usize, n: u64, step: &str, idle: Duration) -> Result<()> {
    let link = mesh.link(to, true)?;
    let buf = vec![0u8; 1 << 20];
    let mut left = n;
    let mut stream = link.stream();
    while left > 0 {
        let k = left.min(buf.len() as u64) as usize;
        stream
            .write_all(&buf[..k])
            .map_err(|e| link.failed(e, step, idle))?;
        left -= k as u64;
    }
    Ok(())
}

/// Reads `n` bytes from `from`; the rate from the first to the last byte,
/// kbit/s.
fn receive(mesh: &Mesh, from: usize, n: u64, step: &str, idle: Duration) -> Result<u64> {
    let link = mesh.link(from, false)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut stream = link.stream();
    let mut left = n;
    let mut first: Option<(Instant, u64)> = None;
    let mut last = Instant::now();
    while left > 0 {
        let k = left.min(buf.len() as u64) as usize;
        let got = stream
            .read(&mut buf[..k])
            .map_err(|e| link.failed(e, step, idle))?;
        if got == 0 {
            return Err(link.failed(std::io::ErrorKind::UnexpectedEof.into(), step, idle));
        }
        let now = Instant::now();
        if first.is_none() {
            first = Some((now, got as u64));
        }
        last = now;
        left -= got as u64;
    }
    let (start, head) = first.unwrap_or((last, 0));
    let secs = last.duration_since(start).as_secs_f64();
    Ok(if secs > 0.0 {
        ((n - head) as f64 * 8.0 / 1000.0 / secs) as u64
    } else {
        0
    })
}
