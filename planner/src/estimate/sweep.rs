//! Sweeps: many estimates over sizes, algorithms and the plans of a scale,
//! on worker threads, in a fixed order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::context::Context;
use super::{Algorithm, Estimate, Options, Params, check_size};
use crate::checked::CheckedPlan;
use crate::design::counterpart;
use crate::error::{Error, Result};
use crate::plan::Topology;

/// One unit of sweep work.
struct Job<'c> {
    ctx: &'c Context<'c>,
    size: u64,
}

impl Job<'_> {
    /// The job's estimate.
    fn run(&self, options: &Options) -> Result<Estimate> {
        self.ctx.estimate(self.size, options)
    }
}

/// The results of a sweep's jobs as they finish, in job order, with the
/// count done for `progress`.
struct Results<'p> {
    slots: Vec<Option<Result<Estimate>>>,
    done: usize,
    progress: &'p mut dyn FnMut(usize, usize),
}

impl<'p> Results<'p> {
    /// Room for `total` jobs; reports `progress(0, total)`.
    fn new(total: usize, progress: &'p mut dyn FnMut(usize, usize)) -> Self {
        progress(0, total);
        Self {
            slots: (0..total).map(|_| None).collect(),
            done: 0,
            progress,
        }
    }

    /// Job `i` finished with `r`.
    fn record(&mut self, i: usize, r: Result<Estimate>) {
        self.slots[i] = Some(r);
        self.done += 1;
        (self.progress)(self.done, self.slots.len());
    }

    /// The estimates of the jobs that succeeded, in job order, and the
    /// first job's error, if one failed.
    fn finished(self) -> (Vec<Estimate>, Option<Error>) {
        let mut done = Vec::new();
        let mut failed = None;
        for r in self.slots {
            match r.unwrap_or_else(|| Err(Error::Internal("a sweep job was lost".to_string()))) {
                Ok(e) => done.push(e),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        (done, failed)
    }
}

/// Runs jobs on `threads` workers, reporting each finished job to
/// `progress` on the calling thread; what finished comes back in job
/// order ([`Results::finished`]).
fn run_jobs(
    jobs: &[Job<'_>],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> (Vec<Estimate>, Option<Error>) {
    let total = jobs.len();
    let mut results = Results::new(total, progress);
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
    .clamp(1, total.max(1));
    if threads == 1 {
        for (i, job) in jobs.iter().enumerate() {
            results.record(i, job.run(options));
        }
    } else {
        // Largest first (ranks, then bytes, as a proxy for the sends a
        // job simulates), so the longest simulation does not start last
        // and leave the other threads idle; results keep the jobs' order.
        let mut order: Vec<usize> = (0..total).collect();
        order.sort_by_key(|&i| std::cmp::Reverse((jobs[i].ctx.table.len(), jobs[i].size)));
        let order = &order;
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(usize, Result<Estimate>)>();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || {
                    while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if tx.send((i, jobs[i].run(options))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for (i, r) in rx {
                results.record(i, r);
            }
        });
    }
    results.finished()
}

/// Every context at every size, context by context: the jobs are refused
/// together, before any starts, when one of them has more sends than the
/// simulator builds; then what finished ([`Results::finished`]).
fn sweep(
    contexts: &[Context<'_>],
    sizes: &[u64],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<Estimate>, Option<Error>)> {
    let jobs: Vec<Job<'_>> = contexts
        .iter()
        .flat_map(|ctx| sizes.iter().map(move |&size| Job { ctx, size }))
        .collect();
    let mut sends = 0u64;
    for job in &jobs {
        sends = sends.saturating_add(job.ctx.sends_fit(job.size, options)?);
    }
    if let Some(count) = &options.sends {
        count.add_total(sends.saturating_mul(options.seeds_run().len() as u64));
    }
    Ok(run_jobs(&jobs, options, progress))
}

/// Every estimate of a sweep, or the first job's error.
fn all_or_first_error(finished: (Vec<Estimate>, Option<Error>)) -> Result<Vec<Estimate>> {
    match finished {
        (done, None) => Ok(done),
        (_, Some(e)) => Err(e),
    }
}

/// Refuses a sweep with a size of 0 bytes before any context is built.
fn check_sizes(sizes: &[u64]) -> Result<()> {
    sizes.iter().try_for_each(|&s| check_size(s))
}

/// Estimates every algorithm at every size on one plan (EFLOPS Fig. 12),
/// algorithm by algorithm. `progress(done, total)` is called on the
/// calling thread as jobs finish.
pub fn size_sweep(
    plan: &CheckedPlan,
    algorithms: &[Algorithm],
    sizes: &[u64],
    ranks: Option<usize>,
    params: &Params,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Estimate>> {
    all_or_first_error(size_sweep_finished(
        plan, algorithms, sizes, ranks, params, options, progress,
    )?)
}

/// [`size_sweep`], keeping what finished: the estimates of every job that
/// succeeded (in job order) and the first job's error, if one failed. A
/// job the simulator's memory limit refuses is refused before any starts
/// (`Err`).
pub fn size_sweep_finished(
    plan: &CheckedPlan,
    algorithms: &[Algorithm],
    sizes: &[u64],
    ranks: Option<usize>,
    params: &Params,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<Estimate>, Option<Error>)> {
    check_sizes(sizes)?;
    let contexts = algorithms
        .iter()
        .map(|&a| Context::new(plan, a, ranks, params))
        .collect::<Result<Vec<_>>>()?;
    sweep(&contexts, sizes, options, progress)
}

/// Refuses, before anything is simulated, every algorithm at every size
/// on `plan` whose schedule has more sends than the simulator builds
/// within its memory limit ([`crate::Error::TooManySends`], naming the
/// algorithm, plan and size).
pub fn sweep_fits(
    plan: &CheckedPlan,
    algorithms: &[Algorithm],
    sizes: &[u64],
    ranks: Option<usize>,
    params: &Params,
    options: &Options,
) -> Result<()> {
    for &a in algorithms {
        let ctx = Context::new(plan, a, ranks, params)?;
        for &n in sizes {
            check_size(n)?;
            ctx.sends_fit(n, options)?;
        }
    }
    Ok(())
}

/// How a scale sweep builds its plans.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleSpec {
    /// Speed of NICs and switch ports, Gbps.
    pub link_gbps: u32,
    /// Ports of the fat-tree's switches (2 tiers while the sub-nodes fit,
    /// k-ary 3 tiers beyond).
    pub fat_tree_ports: u32,
    /// The topologies to build, in the order of the plots' panels.
    pub topologies: Vec<Topology>,
}

impl Default for ScaleSpec {
    fn default() -> Self {
        Self {
            link_gbps: 100,
            fat_tree_ports: 64,
            topologies: vec![Topology::BiGraph, Topology::FatTree],
        }
    }
}

/// The plans of a scale sweep: for every node count, one plan per
/// topology of `spec` ([`crate::design::counterpart::fabric`]).
pub fn scale_plans(nodes: &[usize], spec: &ScaleSpec) -> Result<Vec<CheckedPlan>> {
    let mut plans = Vec::new();
    for &count in nodes {
        for &topology in &spec.topologies {
            plans.push(counterpart::fabric(
                topology,
                count,
                spec.link_gbps,
                spec.fat_tree_ports as usize,
            )?);
        }
    }
    Ok(plans)
}

/// Estimates every algorithm at every size on every plan (EFLOPS Fig. 16:
/// the plans of [`scale_plans`]), plan by plan. Algorithms that cannot run
/// on a plan's topology (HDRM on a fat-tree) are left out.
pub fn scale_sweep(
    plans: &[CheckedPlan],
    algorithms: &[Algorithm],
    sizes: &[u64],
    params: &Params,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Estimate>> {
    check_sizes(sizes)?;
    let mut contexts = Vec::new();
    for plan in plans {
        for &a in algorithms.iter().filter(|a| a.runs_on(plan.topology)) {
            contexts.push(Context::new(plan, a, None, params)?);
        }
    }
    all_or_first_error(sweep(&contexts, sizes, options, progress)?)
}
