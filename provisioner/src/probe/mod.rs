//! The collective engine (`provisioner probe`): runs one rank of an allreduce over TCP (ring, halving-doubling with the fold, HDRM) as the planner's schedules say, times it and checks the data.
//!
//! - [`bootstrap`]: who this rank is and where the others are
//!   (torchrun's `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, a
//!   host file, or a `planner ranks` table with the plan's addresses), and
//!   the size list (`8B..256MiB`);
//! - [`schedule`]: the one adapter to the planner's schedules: what each
//!   rank sends, receives and keeps in each step;
//! - [`auth`]: the job secret and the HMAC challenge on every hello;
//! - [`transport`]: the TCP mesh, set up once and reused, with the
//!   handshake, control messages to rank 0 and timeouts; `exchange`
//!   moves one step's bytes over its sockets;
//! - [`allreduce`]: one iteration over the mesh, step by step;
//! - [`data`]: the exactly summable pattern and the check;
//! - [`report`]: the nccl-tests-like table and the JSON document;
//! - [`stepsync`]: the step barrier's controller on a Unix socket.
//!
//! [`run`] is the whole of one rank's run; a controller (the lab) passes a
//! [`StepHook`] to stop every rank between steps and read counters.

pub mod allreduce;
pub mod auth;
pub mod bootstrap;
pub mod burnin;
pub mod data;
mod error;
mod exchange;
pub mod report;
pub mod schedule;
pub mod stepsync;
pub mod transport;
pub mod wire;

use std::time::Duration;

pub use auth::Secret;
pub use bootstrap::{Bootstrap, parse_bytes, parse_sizes};
pub use error::{Error, Result};
pub use report::{Report, SizeResult, StepTime};
pub use schedule::Algorithm;
pub use transport::{Fingerprint, Mesh, Peers, Timeouts};

use allreduce::Where;

/// Which iterations are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Every iteration, warm-up included.
    Every,
    /// The last iteration of every size.
    Last,
    /// None (`#wrong` shows `-`).
    Off,
}

/// The segment size chosen by measurement on loopback (docs/probe.md).
pub const DEFAULT_SEGMENT: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Message sizes in bytes, each a multiple of 4 (f32).
    pub sizes: Vec<u64>,
    /// Untimed iterations per size.
    pub warmup: usize,
    /// Timed iterations per size.
    pub iters: usize,
    /// Which iterations are checked.
    pub check: Check,
    /// Bytes received before they are summed (a multiple of 4).
    pub segment: usize,
    /// Connect and idle timeouts.
    pub timeouts: Timeouts,
    /// Stop every rank after every step until all have finished it (and
    /// rank 0's hook has run).
    pub step_barrier: bool,
}

/// Where a step of the run is.
#[derive(Debug, Clone)]
pub struct StepPoint {
    /// Index of the size in the size list.
    pub size_index: usize,
    /// Size in bytes.
    pub bytes: u64,
    /// Iteration within the size, from 0, warm-up included.
    pub iteration: usize,
    /// Step index within the iteration, from 0.
    pub step: usize,
    /// `reduce-scatter 2`.
    pub name: String,
    /// The peer of the step, if this rank takes part.
    pub partner: Option<usize>,
}

/// A controller's view of the run. With [`Config::step_barrier`] every
/// rank waits after every step until all ranks have finished it; rank 0
/// calls [`StepHook::between_steps`] while they wait (a lab reads link
/// counters there), then every other rank calls it after the release.
pub trait StepHook {
    /// Runs between steps; an error stops the run on this rank.
    fn between_steps(&mut self, point: &StepPoint) -> std::io::Result<()>;

    /// Sees (and may change) this rank's contribution before an
    /// iteration: for fault injection in tests of the check.
    fn filled(&mut self, _size_index: usize, _iteration: usize, _buf: &mut [f32]) {}
}

/// A hook that does nothing.
#[derive(Debug, Default)]
pub struct NoHook;

impl StepHook for NoHook {
    fn between_steps(&mut self, _point: &StepPoint) -> std::io::Result<()> {
        Ok(())
    }
}

impl Config {
    /// Refuses settings the engine cannot run.
    pub fn check(&self) -> Result<()> {
        if self.sizes.is_empty() {
            return Err(Error::parameter(
                "size",
                "no size: give one, a list or a range such as 8B..256MiB",
            ));
        }
        if self.iters == 0 {
            return Err(Error::parameter("iters", "0 iterations: give 1 or more"));
        }
        if self.segment == 0 || !self.segment.is_multiple_of(4) {
            return Err(Error::parameter(
                "segment",
                format!(
                    "{} B: give a positive multiple of 4 bytes (one f32)",
                    self.segment
                ),
            ));
        }
        Ok(())
    }

    /// The settings every rank must share.
    pub fn fingerprint(&self, world: usize) -> Fingerprint {
        Fingerprint {
            world,
            algorithm: self.algorithm.as_str().to_string(),
            sizes: self.sizes.clone(),
            warmup: self.warmup,
            iters: self.iters,
            step_barrier: self.step_barrier,
        }
    }
}

/// Runs rank `boot.rank` of the allreduce: sets up the mesh, runs every
/// size (warm-up, then timed iterations), checks the data and gathers the
/// figures of all ranks on every rank.
pub fn run(boot: &Bootstrap, config: &Config, hook: &mut dyn StepHook) -> Result<Report> {
    config.check()?;
    boot.check()?;
    let (rank, world) = (boot.rank, boot.world);
    let peers = schedule::peers(config.algorithm, world, rank)?;
    let mesh = Mesh::establish(
        rank,
        &boot.peers,
        &config.fingerprint(world),
        &peers,
        boot.secret.as_ref(),
        config.timeouts,
    )?;
    run_on(&mesh, config, hook)
}

/// Runs every size on an established mesh.
pub fn run_on(mesh: &Mesh, config: &Config, hook: &mut dyn StepHook) -> Result<Report> {
    let (rank, world) = (mesh.rank, mesh.world);
    let expected = data::Expected::new(world);
    let most = config.sizes.iter().copied().max().unwrap_or(0) as usize / 4;
    let mut buf = vec![0f32; most];
    let mut scratch = vec![0f32; config.segment / 4];
    let mut results = Vec::with_capacity(config.sizes.len());
    let mut pattern_iteration = 0u64;
    for (size_index, &bytes) in config.sizes.iter().enumerate() {
        let count = (bytes / 4) as usize;
        let buf = &mut buf[..count];
        let actions = schedule::actions(config.algorithm, world, rank, count)?;
        let mut times = vec![Duration::ZERO; actions.len()];
        let mut warm = vec![Duration::ZERO; actions.len()];
        let mut total = Duration::ZERO;
        let mut wrong: Option<u64> = None;
        let rounds = config.warmup + config.iters;
        for iteration in 0..rounds {
            let checked = match config.check {
                Check::Every => true,
                Check::Last => iteration + 1 == rounds,
                Check::Off => false,
            };
            // The data are filled before the first iteration of a size and
            // before every checked one; the others reduce the previous
            // result again, back to back, as nccl-tests does.
            if iteration == 0 || checked {
                pattern_iteration += 1;
                data::fill(buf, rank, pattern_iteration);
                hook.filled(size_index, iteration, buf);
                // Ranks leave the fill together, so that no rank's time
                // counts another's fill.
                let step = format!("the barrier before iteration {iteration} of size {bytes} B");
                mesh.reduce_figures(Vec::new(), &|_| Vec::new(), &step)?;
            }
            let timed = iteration >= config.warmup;
            let step_times = if timed { &mut times } else { &mut warm };
            let before: Duration = step_times.iter().sum();
            let mut after_step = |s: usize, at: &Where| -> Result<()> {
                if !config.step_barrier {
                    return Ok(());
                }
                let point = StepPoint {
                    size_index,
                    bytes,
                    iteration,
                    step: s,
                    name: at.action.name(),
                    partner: at.action.partner(),
                };
                let describe = at.describe();
                mesh.step_barrier(s, &describe, &mut || {
                    hook.between_steps(&point).map_err(|source| Error::Hook {
                        step: describe.clone(),
                        source,
                    })
                })
            };
            allreduce::run_iteration(
                mesh,
                &actions,
                buf,
                &mut scratch,
                config.segment / 4,
                iteration,
                step_times,
                &mut after_step,
            )?;
            if timed {
                total += step_times.iter().sum::<Duration>() - before;
            }
            if checked {
                let w = expected.wrong(buf, pattern_iteration);
                wrong = Some(wrong.map_or(w, |x| x.max(w)));
            }
        }
        let iters = config.iters as f64;
        let local_us = total.as_secs_f64() * 1e6 / iters;
        let step = format!("the gathering of the results of size {bytes} B");
        let global = mesh.reduce_figures(
            vec![local_us, wrong.map_or(-1.0, |w| w as f64)],
            &|all| {
                let time = all.iter().map(|v| v[0]).sum::<f64>() / all.len() as f64;
                let wrong = if all.iter().any(|v| v[1] < 0.0) {
                    -1.0
                } else {
                    all.iter().map(|v| v[1]).sum()
                };
                vec![time, wrong]
            },
            &step,
        )?;
        let steps = actions
            .iter()
            .zip(&times)
            .map(|(a, t)| StepTime {
                phase: a.phase.as_str(),
                number: a.number,
                partner: a.partner(),
                sent_bytes: a.send.as_ref().map_or(0, |s| s.1.len() as u64 * 4),
                received_bytes: a.recv.as_ref().map_or(0, |r| r.1.len() as u64 * 4),
                time_us: t.as_secs_f64() * 1e6 / iters,
            })
            .collect();
        results.push(SizeResult::new(
            bytes,
            world,
            global[0],
            (global[1] >= 0.0).then_some(global[1] as u64),
            local_us,
            wrong,
            steps,
        ));
    }
    Ok(Report {
        rank,
        world,
        algorithm: config.algorithm.as_str(),
        addresses: mesh.addresses.clone(),
        segment: config.segment,
        warmup: config.warmup,
        iters: config.iters,
        results,
    })
}
