//! A plan, an algorithm and its rank table, ready for any message size:
//! [`Context`], built once per plan, algorithm and rank count, and the
//! library's entry points ([`estimate`], [`estimates`],
//! [`steps_and_turnaround`], [`send_schedule`], [`packet_steps`]).
//!
//! What a context does lives in one file each:
//!
//! - [`geometry`]: what the plan gives the algorithms: α of a set of rank
//!   pairs, β of a step on its paths, the levels of a hierarchical
//!   decomposition, the ranks of every server;
//! - [`collectives`]: one module per algorithm or family implementing
//!   [`collectives::Collective`] (its closed form, with the equations in
//!   [`super::models`], its send schedule, with the builders in
//!   [`super::schedules`], its streamable shape) and holding the
//!   algorithm's row, and the registry [`collectives::row`], made of
//!   `algorithm.rs`'s list, one line an algorithm;
//! - [`closed_form`]: the closed form's dispatch, and the costs kept
//!   across sizes;
//! - [`schedule`]: the send schedule's dispatch, streamed where it can be;
//! - [`run`]: one estimate: the seeds, the mode and their median;
//! - [`routes`]: the routes of a schedule's sends, stored per rank pair;
//! - [`sinks`]: the streamed schedule's consumers (the lone pass, the
//!   step-synchronous mode).
//!
//! A new algorithm is its module in [`collectives`] (with its row) and
//! its line in `algorithm.rs`'s `algorithm_list!`; the compiler refuses a
//! line without its row.

mod closed_form;
mod collectives;
mod geometry;
mod routes;
mod run;
mod schedule;
mod sinks;

use serde::Serialize;

use super::{
    Algorithm, Channels, Estimate, Method, Options, PacketStats, PacketStep, Params, SendSchedule,
    StepSummary, check_size, fast, intra, packet, params, schedules, sim,
};
use crate::algorithm::RankSchedule;
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::network::{Network, Policy};
use crate::plan::Tier;
use crate::ranks::{self, Link};
pub use collectives::{AlgorithmRow, row as algorithm_row};
pub(super) use routes::PlanRoutes;

/// The rank table the estimates use: `planner ranks`'s for halving-doubling
/// over a rank count that is not a power of two (the table
/// [`ranks::plan_ranks`] chooses for the folded schedule, with its default
/// solver and seed), otherwise [`ranks::rank_table`] (Algorithm 1 for
/// HDRM, plan order for the others, which is what `planner ranks` gives
/// there too). HDRM off a BiGraph keeps `rank_table`'s refusal.
fn rank_order(plan: &CheckedPlan, order: Algorithm, count: Option<usize>) -> Result<Vec<usize>> {
    let x = count.unwrap_or(plan.sub_node_list.len());
    let folds = x > 0 && !x.is_power_of_two();
    let maps = order.info().rank_schedule == Some(RankSchedule::HalvingDoubling)
        && order.runs_on(plan.topology);
    if folds && maps {
        let request = ranks::Request {
            algorithm: order,
            ranks: Some(x),
            ..ranks::Request::default()
        };
        return Ok(ranks::plan_ranks(plan, &request)?.table.ranks);
    }
    Ok(ranks::rank_table(plan, order, count)?.ranks)
}

/// A plan, an algorithm and its rank table, ready for any message size.
#[derive(Debug)]
pub(super) struct Context<'a> {
    plan: &'a CheckedPlan,
    algorithm: Algorithm,
    params: Params,
    net: Network<'a>,
    /// Rank -> sub-node.
    pub(super) table: Vec<usize>,
    /// Capacity of every directed link, bytes/µs.
    pub(super) caps: Vec<f64>,
    /// Switch of every rank.
    switch: Vec<u32>,
    /// The intra-server tier (one rank per GPU, NVLink links), when the
    /// plan has one.
    tier: Option<intra::Tier>,
    /// Slowest link a flow of these ranks can take, bytes/µs.
    w: f64,
    /// Slowest fabric link (NIC or inter-switch) of these ranks, bytes/µs
    /// (`w` without the NVLink links).
    fabric_w: f64,
    /// Uplink bandwidth per rank of the most loaded switch, bytes/µs.
    share: f64,
    three_tier: bool,
    /// What the algorithm does: its registered implementation.
    collective: &'static dyn collectives::Collective,
    /// The costs of the closed form that do not depend on the size
    /// (halving-doubling's steps, the hierarchical levels, `nccl-tree`'s
    /// hops), computed at the first size ([`Context::cached`]).
    costs: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        plan: &'a CheckedPlan,
        algorithm: Algorithm,
        ranks: Option<usize>,
        params: &Params,
    ) -> Result<Self> {
        let collective = collectives::of(algorithm);
        if params.channels == Channels::Pair && !collective.pair_channels() {
            return Err(Error::parameter(
                "param",
                format!(
                    "channels=pair gives each tree edge a channel of its own (C-Cube's DGX-1), which {} does not take: use channels=fabric, or {}",
                    algorithm.as_str(),
                    collectives::pair_channel_names()
                ),
            ));
        }
        let net = plan.network()?;
        let (table, tier) = if intra::present(plan) {
            let order = rank_order(plan, algorithm.rank_table(), None)?;
            let (table, tier) = intra::Tier::build(plan, &order, ranks, net.link_count())?;
            (table, Some(tier))
        } else {
            (rank_order(plan, algorithm.rank_table(), ranks)?, None)
        };
        let mut problems = Vec::new();
        let mut caps = Vec::with_capacity(net.link_count());
        for id in 0..net.link_count() {
            let gbps = match net.link(id) {
                Some(Link::Up { sub_node, port } | Link::Down { sub_node, port }) => {
                    let sn = &plan.sub_node_list[sub_node];
                    let port = net
                        .switch_in(usize::from(port), sub_node)
                        .map_or(sn.nic_gbps, |s| plan.switch_list[s].port_gbps);
                    sn.nic_gbps.min(port)
                }
                Some(Link::InterSwitch { from, to, .. }) => plan.switch_list[from]
                    .port_gbps
                    .min(plan.switch_list[to].port_gbps),
                None => 0,
            };
            if gbps == 0 && params.link_gbps.is_none() {
                problems.push(Problem::at(
                    None,
                    net.describe(id),
                    "the link has a speed of 0 Gbps",
                    "set the NIC's speed_gbps and the switch's port_gbps, or give the parameter link_gbps=100",
                ));
            }
            caps.push(params::bytes_per_us(
                params.link_gbps.unwrap_or(f64::from(gbps)),
            ));
        }
        if !problems.is_empty() {
            problems.truncate(10);
            return Err(plan.refusal(problems));
        }
        let switch: Vec<u32> = table
            .iter()
            .map(|&sn| net.switch_of(sn).map_or(0, |s| s as u32))
            .collect();
        let mut on_switch = vec![0usize; plan.switch_list.len()];
        for &s in &switch {
            on_switch[s as usize] += 1;
        }
        let mut w = f64::INFINITY;
        for &sn in &table {
            w = w.min(caps[net.up_link(sn)]).min(caps[net.down_link(sn)]);
        }
        let mut uplink = vec![0.0f64; plan.switch_list.len()];
        let spans = on_switch.iter().filter(|&&c| c > 0).count() > 1;
        for id in net.inter_switch_links() {
            if let Some(Link::InterSwitch { from, .. }) = net.link(id) {
                uplink[from] += caps[id];
                if spans {
                    w = w.min(caps[id]);
                }
            }
        }
        let mut share = if spans {
            (0..plan.switch_list.len())
                .filter(|&s| on_switch[s] > 0)
                .map(|s| uplink[s] / on_switch[s] as f64)
                .fold(f64::INFINITY, f64::min)
        } else {
            f64::INFINITY
        };
        let fabric_w = w;
        if let Some(tier) = &tier {
            // The GPUs sharing a NIC share its links when all of them
            // send off the server at once.
            let mut on_nic = vec![0usize; plan.sub_node_list.len()];
            for &sn in &table {
                on_nic[sn] += 1;
            }
            for (sn, &k) in on_nic.iter().enumerate().filter(|(_, k)| **k > 1) {
                let nic = caps[net.up_link(sn)].min(caps[net.down_link(sn)]);
                share = share.min(nic / k as f64);
            }
            w = w.min(tier.nv_w);
            caps.extend_from_slice(&tier.caps);
        }
        let three_tier = plan
            .switch_list
            .iter()
            .any(|s| matches!(s.part_or_tier, Tier::Edge | Tier::Aggregation | Tier::Core));
        Ok(Self {
            plan,
            algorithm,
            params: params.clone(),
            net,
            table,
            caps,
            switch,
            tier,
            w,
            fabric_w,
            share,
            three_tier,
            collective,
            costs: std::sync::OnceLock::new(),
        })
    }

    fn ranks(&self) -> usize {
        self.table.len()
    }
}

/// Estimates one allreduce of `size_bytes` with `algorithm` on `plan`,
/// over `ranks` ranks (default: every sub-node, M x N for HDRM).
pub fn estimate(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    options: &Options,
) -> Result<Estimate> {
    Context::new(plan, algorithm, ranks, params)?.estimate(size_bytes, options)
}

/// [`estimate`] for several sizes: the rank table, the network and the
/// link capacities are built once (a rank search on a large plan costs
/// more than the estimates themselves).
pub fn estimates(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    sizes: &[u64],
    params: &Params,
    options: &Options,
) -> Result<Vec<Estimate>> {
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    sizes.iter().map(|&n| ctx.estimate(n, options)).collect()
}

/// The context and send schedule of one allreduce of `size_bytes`.
fn prepare<'a>(
    plan: &'a CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
) -> Result<(Context<'a>, SendSchedule)> {
    check_size(size_bytes)?;
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    let (_, chunks) = ctx.closed_form(size_bytes)?;
    let sched = ctx.schedule(size_bytes, chunks)?;
    Ok((ctx, sched))
}

/// The schedule behind an estimate, step by step as the step-synchronous
/// mode sees it with ECMP seed `seed` under `routing`: phase, flows, bytes,
/// the most flows on one link and the step's time; and for the trees the
/// gradient turnaround of their chunks. With `method` event-driven the
/// turnaround is measured on the event-driven simulation's timeline (when
/// each send started and was delivered, [`SendSchedule::turnaround_of_sends`]);
/// otherwise on the step-synchronous one ([`SendSchedule::turnaround`]).
#[allow(clippy::too_many_arguments)]
pub fn steps_and_turnaround(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    seed: u64,
    routing: Policy,
    method: Method,
) -> Result<(Vec<StepSummary>, Option<schedules::Turnaround>)> {
    let (ctx, sched) = prepare(plan, algorithm, ranks, size_bytes, params)?;
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
    let caps = routes.caps();
    let steps = fast::run(&sched, &caps, &mut routes, true)?.steps;
    // Only the trees' sends belong to chunks.
    let turnaround = if !sched.chunk.is_empty() {
        match method {
            Method::Event => {
                let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
                let mut times = sim::SendTimes::default();
                sim::run_with(
                    &sched,
                    &caps,
                    &mut routes,
                    params.eager_bytes,
                    sim::Settings::default(),
                    Some(&mut times),
                )?;
                sched.turnaround_of_sends(&times.start_us, &times.delivered_us)
            }
            _ => {
                let times: Vec<f64> = steps.iter().map(|s| s.time_us).collect();
                sched.turnaround(&times)
            }
        }
    } else {
        None
    };
    Ok((steps, turnaround))
}

/// The send-level schedule of an algorithm on a plan (for callers that
/// want every send).
pub fn send_schedule(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
) -> Result<SendSchedule> {
    Ok(prepare(plan, algorithm, ranks, size_bytes, params)?.1)
}

/// A packet-level run of one allreduce: its time and per-step queue, PFC
/// and ECN figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketRun {
    /// The allreduce time, µs.
    pub time_us: f64,
    /// Totals.
    pub stats: PacketStats,
    /// Per step of the schedule.
    pub steps: Vec<PacketStep>,
}

/// The packet-level run behind `simulate --method packet --steps`, with
/// ECMP seed `seed` under `routing`.
pub fn packet_steps(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    seed: u64,
    routing: Policy,
) -> Result<PacketRun> {
    let (ctx, sched) = prepare(plan, algorithm, ranks, size_bytes, params)?;
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
    let fab = ctx.packet_fabric(&routes.caps())?;
    let o = packet::run(&sched, &fab, &mut routes, params.eager_bytes)?;
    Ok(PacketRun {
        time_us: o.time_us,
        stats: o.stats,
        steps: o.steps,
    })
}
