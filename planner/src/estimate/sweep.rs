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

/// Runs jobs on `threads` workers, reporting each finished job to
/// `progress` on the calling thread; results come back in job order, one
/// per job.
fn run_jobs(
    jobs: &[Job<'_>],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<Result<Estimate>> {
    let total = jobs.len();
    progress(0, total);
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    }
    .clamp(1, total.max(1));
    let mut results: Vec<Option<Result<Estimate>>> = (0..total).map(|_| None).collect();
    if threads == 1 {
        for (i, job) in jobs.iter().enumerate() {
            results[i] = Some(job.ctx.estimate(job.size, options));
            progress(i + 1, total);
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
                        let job = &jobs[i];
                        if tx.send((i, job.ctx.estimate(job.size, options))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut done = 0;
            for (i, r) in rx {
                results[i] = Some(r);
                done += 1;
                progress(done, total);
            }
        });
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Internal("a sweep job was lost".to_string()))))
        .collect()
}

/// The jobs of every context at every size, refused together, before any
/// starts, when one of them has more sends than the simulator builds.
fn checked_jobs<'c>(
    contexts: &'c [Context<'c>],
    sizes: &[u64],
    options: &Options,
) -> Result<Vec<Job<'c>>> {
    let jobs: Vec<Job<'_>> = contexts
        .iter()
        .flat_map(|ctx| sizes.iter().map(move |&size| Job { ctx, size }))
        .collect();
    for job in &jobs {
        job.ctx.sends_fit(job.size, options)?;
    }
    Ok(jobs)
}

/// Estimates every context at every size, context by context.
fn every_size(
    contexts: &[Context<'_>],
    sizes: &[u64],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Estimate>> {
    let jobs = checked_jobs(contexts, sizes, options)?;
    run_jobs(&jobs, options, progress).into_iter().collect()
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
    match size_sweep_finished(plan, algorithms, sizes, ranks, params, options, progress)? {
        (done, None) => Ok(done),
        (_, Some(e)) => Err(e),
    }
}

/// [`size_sweep`], keeping what finished: the estimates of every job that
/// succeeded (in job order) and the first job's error, if one failed. A
/// job the send limit refuses is refused before any starts (`Err`).
pub fn size_sweep_finished(
    plan: &CheckedPlan,
    algorithms: &[Algorithm],
    sizes: &[u64],
    ranks: Option<usize>,
    params: &Params,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Vec<Estimate>, Option<Error>)> {
    for &s in sizes {
        check_size(s)?;
    }
    let contexts = algorithms
        .iter()
        .map(|&a| Context::new(plan, a, ranks, params))
        .collect::<Result<Vec<_>>>()?;
    let jobs = checked_jobs(&contexts, sizes, options)?;
    let mut done = Vec::new();
    let mut failed = None;
    for r in run_jobs(&jobs, options, progress) {
        match r {
            Ok(e) => done.push(e),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    Ok((done, failed))
}

/// Refuses, before anything is simulated, every algorithm at every size
/// on `plan` whose schedule has more sends than the simulator builds
/// ([`crate::Error::TooManySends`], naming the algorithm, plan and size).
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
    for &s in sizes {
        check_size(s)?;
    }
    let mut contexts = Vec::new();
    for plan in plans {
        for &a in algorithms.iter().filter(|a| a.runs_on(plan.topology)) {
            contexts.push(Context::new(plan, a, None, params)?);
        }
    }
    every_size(&contexts, sizes, options, progress)
}
