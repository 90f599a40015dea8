//! Per-step link loads of a schedule on a plan: the congestion proof.
//!
//! Every flow of a step is routed ([`Network::route`]) and counted on each
//! directed link it takes. A step is congestion-free on the fabric when no
//! directed inter-switch link carries more than one flow; access links are
//! reported apart, since a rank table that puts two ranks on one NIC (or a
//! schedule where a rank sends twice) overloads them whatever the fabric.
//!
//! On a network that avoids links or switches ([`Network::avoiding`]),
//! flows are routed around them and a rank on an avoided switch is an
//! error.
//!
//! The flow id of the flow from rank s to rank d is `s << 32 | d`, so a
//! flow keeps its UDP source port from one run to the next and the seed
//! alone moves it (see [`crate::network::source_port`]).
//!
//! On a plan whose servers reduce inside ([`Plan::intra_server_groups`]:
//! rail-optimized plans), a flow between two sub-nodes of one server
//! stays inside the server (NVLink or PCIe) and is counted apart
//! (`intra_server_flows`), on no link of the fabric.
//!
//! A table with one rank per GPU on a plan whose NICs carry several GPUs
//! ([`super::gpus`]) puts several ranks on one sub-node (at most one per
//! GPU behind its NIC). A flow between two ranks of one NIC stays inside
//! the server and is counted apart (`intra_server_flows`). The flows of
//! one step between the same two NICs are counted as one NIC flow, routed
//! with the flow id of its first GPU flow (`shared_nic_flows` counts the
//! others): the GPUs behind a NIC share its link, so the loads say how
//! many NICs' traffic a link carries, and "at most one flow per link" means
//! that no directed link carries the traffic of two NIC pairs.
//!
//! Routes follow a routing policy ([`Policy`]): the ECMP hash (the
//! default), D-mod-K, or spraying, under which a flow counts `1 / paths`
//! on each of its equal-cost paths; a step's load is then a share of flows
//! (`max_share`), and `max_load` is that share rounded up. A sprayed
//! flow is counted per link rather than per path ([`Network::flow_spread`]:
//! a link on c of the flow's k paths takes c / k), with the additions
//! made so that every share is the sum listing the paths gives, to the
//! last bit: up to 1,024 paths a flow on an 8,192-GPU HPN fabric are
//! never listed.

use serde::Serialize;

use super::schedule::{Phase, Schedule, Step};
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::network::{CountScratch, Network, Policy, PortSeed, Route, Spread};
use crate::plan::Plan;
use by_rank::RankSide;

mod by_rank;
#[cfg(test)]
mod by_rank_tests;
#[cfg(test)]
mod check_tests;

/// The loads of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepLoad {
    /// Reduce-scatter or all-gather.
    pub phase: Phase,
    /// Position within the phase, from 1.
    pub step: usize,
    /// Rank distance (halving-doubling); absent for ring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
    /// Directed flows in the step.
    pub flows: usize,
    /// Flows that leave their switch.
    pub inter_switch_flows: usize,
    /// Flows between two sub-nodes of one server on a plan whose servers
    /// reduce inside ([`Plan::intra_server_groups`]): they stay off the
    /// fabric and are counted on no link.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub intra_server_flows: usize,
    /// Flows counted with an earlier flow of the step between the same two
    /// NICs (one rank per GPU on a NIC shared by several): they share
    /// that NIC flow's route and add no load.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_nic_flows: usize,
    /// Most flows on one directed inter-switch link (0 when no flow leaves
    /// its switch).
    pub max_load: usize,
    /// Directed inter-switch links that carry `max_load` flows (with
    /// `spray`: `max_share`).
    pub max_load_links: usize,
    /// With `spray`: the flows' shares on the busiest directed
    /// inter-switch link (`max_load` is this rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_share: Option<f64>,
    /// Most flows on one access link (NIC to switch or back).
    pub access_max_load: usize,
    /// Access links that carry `access_max_load` flows.
    pub access_max_load_links: usize,
    /// True when some access link carries more than one flow.
    pub access_overloaded: bool,
}

/// For `skip_serializing_if`: a count of 0 is left out of the JSON.
pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// True when sub-nodes `a` and `b` are on one server of `servers` (per
/// sub-node its server, [`Plan::intra_server_groups`]).
pub(crate) fn inside_server(servers: Option<&[u32]>, a: usize, b: usize) -> bool {
    servers.is_some_and(|of| of[a] == of[b] && of[a] != u32::MAX)
}

/// The flow id of the flow from rank `src` to rank `dst`.
pub fn flow_id(src: usize, dst: usize) -> u64 {
    ((src as u64) << 32) | (dst as u64 & 0xFFFF_FFFF)
}

/// Checks a rank table (rank -> index into `plan.sub_node_list`): not
/// empty, every index in range, no sub-node twice (on a NIC shared by
/// several GPUs, no more ranks than it has GPUs). Every bad rank is
/// listed.
pub fn check_ranks(plan: &CheckedPlan, ranks: &[usize]) -> Result<()> {
    check_ranks_of(plan, plan.source(), ranks)
}

/// [`check_ranks`] on a plan that errors name as `source`.
fn check_ranks_of(plan: &Plan, source: &str, ranks: &[usize]) -> Result<()> {
    // A table of distinct sub-nodes in range passes whatever each NIC's
    // GPUs: no sub-node record need be read (at 131,072 ranks they are
    // 35 MB, read at random for a table that scatters its ranks).
    if !ranks.is_empty() && distinct_in_range(plan.sub_node_list.len(), ranks) {
        return Ok(());
    }
    check_each_rank(plan, source, ranks)
}

/// True when every sub-node of `ranks` is below `p` and none comes twice.
fn distinct_in_range(p: usize, ranks: &[usize]) -> bool {
    let mut seen = vec![0u64; p.div_ceil(64)];
    ranks.iter().all(|&sn| {
        let bit = 1u64 << (sn % 64);
        match seen.get_mut(sn / 64) {
            Some(word) if sn < p && *word & bit == 0 => {
                *word |= bit;
                true
            }
            _ => false,
        }
    })
}

/// [`check_ranks_of`] rank by rank: every bad rank listed.
fn check_each_rank(plan: &Plan, source: &str, ranks: &[usize]) -> Result<()> {
    let p = plan.sub_node_list.len();
    let mut problems = Vec::new();
    if ranks.is_empty() {
        problems.push(Problem::at(
            None,
            "rank table",
            "it has no ranks",
            "give at least one rank",
        ));
    }
    let mut owner = vec![usize::MAX; p];
    // The ranks of each NIC shared by several GPUs, kept only for those
    // (a list per sub-node would be 131,072 of them, made for every
    // proof).
    let mut taken: rustc_hash::FxHashMap<usize, Vec<usize>> = Default::default();
    for (rank, &sn) in ranks.iter().enumerate() {
        if sn >= p {
            problems.push(Problem::at(
                None,
                format!("rank {rank}"),
                format!(
                    "sub-node {sn} is out of range: the plan has {p} sub-nodes (0 to {})",
                    p.saturating_sub(1)
                ),
                format!("use a sub-node index below {p}"),
            ));
        } else if plan.sub_node_list[sn].gpu_count() > 1 {
            let gpus = plan.sub_node_list[sn].gpu_count();
            let taken = taken.entry(sn).or_default();
            if taken.len() == gpus {
                problems.push(Problem::at(
                    None,
                    format!("rank {rank}"),
                    format!(
                        "sub-node {sn} ({}) carries {gpus} GPUs and already runs ranks {}",
                        plan.sub_node_list[sn].id,
                        taken
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    "give the NIC at most one rank per GPU behind it",
                ));
            } else {
                taken.push(rank);
            }
        } else if owner[sn] != usize::MAX {
            problems.push(Problem::at(
                None,
                format!("rank {rank}"),
                format!(
                    "sub-node {sn} ({}) is also rank {}",
                    plan.sub_node_list[sn].id, owner[sn]
                ),
                "give every rank its own sub-node",
            ));
        } else {
            owner[sn] = rank;
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid {
            file: source.to_string(),
            what: "rank table",
            problems,
        })
    }
}

/// Checks that no rank sits on a switch the network avoids; every such
/// rank is listed.
pub fn check_avoided(net: &Network<'_>, ranks: &[usize]) -> Result<()> {
    if !net.avoids_anything() {
        return Ok(());
    }
    let plan = net.plan();
    let problems: Vec<Problem> = ranks
        .iter()
        .enumerate()
        .filter_map(|(rank, &sn)| {
            let s = net.switch_of(sn)?;
            net.cut_off(sn).then(|| {
                Problem::at(
                    None,
                    format!("rank {rank}"),
                    format!(
                        "sub-node {} is on switch {}, which is avoided",
                        plan.sub_node_list[sn].id, plan.switch_list[s].name
                    ),
                    "give the rank a sub-node on another switch",
                )
            })
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid {
            file: net.source().to_string(),
            what: "rank table",
            problems,
        })
    }
}

/// Largest value and how many times it occurs.
#[derive(Debug, Default, Clone, Copy)]
struct Max {
    value: f64,
    count: usize,
}

impl Max {
    /// The load in whole flows: a spread share rounded up (a sum of
    /// shares that is 1 up to rounding stays 1).
    fn flows(self) -> usize {
        (self.value - 1e-9).ceil().max(0.0) as usize
    }
}

/// The largest load and how many links carry it (within rounding); a
/// count of 0 when no link carries anything.
impl Max {
    /// The larger of two maxima over disjoint links (their links counted
    /// together when equal).
    fn with(self, other: Max) -> Max {
        if other.count == 0 || other.value < self.value - 1e-9 {
            self
        } else if self.count == 0 || self.value < other.value - 1e-9 {
            other
        } else {
            Max {
                value: self.value,
                count: self.count + other.count,
            }
        }
    }
}

/// The load of every directed link in one step: whole flows where each
/// flow takes one route (ECMP, D-mod-K), counted as `u32` (half the memory
/// of a share and no division, 4.5 million flows a proof on a
/// 131,072-sub-node plan), and shares of flows under spraying.
enum Loads {
    /// Flows per link.
    Flows(Vec<u32>),
    /// Shares of flows per link.
    Shares(Vec<f64>),
}

impl Loads {
    /// No load on `links` links, counted as `policy` needs; as shares
    /// for every policy when `counting` lists every route (the reference
    /// the tests hold the counts equal to).
    fn new(policy: Policy, counting: Counting, links: usize) -> Self {
        if policy == Policy::Spray || counting != Counting::PerLink {
            Loads::Shares(vec![0.0; links])
        } else {
            Loads::Flows(vec![0; links])
        }
    }

    /// The largest load of the links `range` and how many carry it, as
    /// [`max_of`] gives it for the same loads as shares.
    fn max(&self, range: std::ops::Range<usize>) -> Max {
        match self {
            Loads::Shares(load) => max_of(&load[range]),
            Loads::Flows(load) => max_of_flows(&load[range]),
        }
    }

    /// Every link back to no load.
    fn clear(&mut self) {
        match self {
            Loads::Shares(load) => load.fill(0.0),
            Loads::Flows(load) => load.fill(0),
        }
    }
}

/// [`max_of_flows`] of `loads`, found in the one pass that clears them.
fn take_max_of_flows(loads: &mut [u32]) -> Max {
    let (mut top, mut count) = (0u32, 0usize);
    for v in loads {
        let load = std::mem::take(v);
        if load > top {
            (top, count) = (load, 1);
        } else {
            count += usize::from(load == top);
        }
    }
    Max {
        value: f64::from(top),
        count: if top == 0 { 0 } else { count },
    }
}

/// [`max_of`] of loads in whole flows.
fn max_of_flows(loads: &[u32]) -> Max {
    let top = loads.iter().copied().max().unwrap_or(0);
    let count = if top == 0 {
        0
    } else {
        loads.iter().filter(|&&v| v == top).count()
    };
    Max {
        value: f64::from(top),
        count,
    }
}

fn max_of(loads: &[f64]) -> Max {
    let value = loads.iter().copied().fold(0.0f64, f64::max);
    let count = if value <= 0.0 {
        0
    } else {
        loads.iter().filter(|&&v| v >= value - 1e-9).count()
    };
    Max { value, count }
}

/// Routes every flow of every step of `schedule` over `ranks` (rank ->
/// sub-node) by the ECMP hash and reports the loads per step.
pub fn verify_schedule(
    net: &Network<'_>,
    ranks: &[usize],
    schedule: &Schedule,
    seed: u64,
) -> Result<Vec<StepLoad>> {
    verify_schedule_routed(net, ranks, schedule, seed, Policy::Ecmp)
}

/// [`verify_schedule`] under a routing policy.
pub fn verify_schedule_routed(
    net: &Network<'_>,
    ranks: &[usize],
    schedule: &Schedule,
    seed: u64,
    policy: Policy,
) -> Result<Vec<StepLoad>> {
    verify_counted(net, ranks, schedule, (seed, policy), Counting::PerLink)
}

/// How a sprayed flow's load is counted; both give the same loads, to the
/// last bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counting {
    /// Per link, from the number of its routes that take the link
    /// ([`Network::flow_spread`]): the links of the routes, not the routes
    /// (1,024 per flow on an 8,192-GPU HPN fabric).
    PerLink,
    /// Every route listed ([`Network::flow_routes`]) and counted as a
    /// share in `f64`, as sprayed flows were before [`Counting::PerLink`]
    /// and ECMP and D-mod-K flows before they were counted as `u32`: the
    /// reference the tests hold it equal to.
    #[cfg(test)]
    PerRoute,
}

/// [`verify_schedule_routed`], sprayed flows counted by `counting`.
pub(super) fn verify_counted(
    net: &Network<'_>,
    ranks: &[usize],
    schedule: &Schedule,
    (seed, policy): (u64, Policy),
    counting: Counting,
) -> Result<Vec<StepLoad>> {
    let plan = net.plan();
    if ranks.len() != schedule.ranks {
        return Err(Error::Invalid {
            file: net.source().to_string(),
            what: "rank table",
            problems: vec![Problem::at(
                None,
                "rank table",
                format!(
                    "it has {} ranks but the schedule is for {}",
                    ranks.len(),
                    schedule.ranks
                ),
                "build the schedule for the table's ranks",
            )],
        });
    }
    check_ranks_of(plan, net.source(), ranks)?;
    check_avoided(net, ranks)?;
    let mut load = Loads::new(policy, counting, net.link_count());
    let mut scratch = Scratch::default();
    // Access links: every NIC's port 0, and on HPN the port 1 links after
    // the inter-switch ones.
    let inter_links = net.inter_switch_links();
    let second = net.second_port_links();
    let servers = plan.intra_server_groups();
    // Whether a NIC carries two ranks: found once for every step.
    let repeats = ranks.len() > plan.sub_node_list.len() || has_repeats(plan, ranks);
    // ECMP on one plane with a rank per sub-node: counted by rank.
    let mut by_rank = RankSide::new(net, ranks, servers.as_deref(), policy, repeats)
        .filter(|_| matches!(load, Loads::Flows(_)));
    let mut out: Vec<StepLoad> = Vec::with_capacity(schedule.steps.len());
    // Steps with the same flows have the same routes and loads (a flow's
    // hash depends only on its ranks and the seed), so each distinct step
    // is routed once: log2(P) times for halving-doubling, once for a ring.
    let mut distinct: Vec<usize> = Vec::new();
    for (i, step) in schedule.steps.iter().enumerate() {
        let same = distinct
            .iter()
            .find(|&&j| schedule.steps[j].same_flows(step))
            .map(|&j| out[j].clone());
        let load_of = match same {
            Some(earlier) => earlier,
            None => {
                distinct.push(i);
                let counts = match (&mut by_rank, &mut load) {
                    (Some(side), Loads::Flows(load)) => {
                        side.count_step(net, ranks, step, seed, &mut scratch.count, load)?
                    }
                    _ => count_step(
                        net,
                        ranks,
                        step,
                        (seed, policy, counting),
                        servers.as_deref(),
                        repeats,
                        &mut scratch,
                        &mut load,
                    )?,
                };
                // One pass over every link: a distinct step has about as
                // many flows as there are links. Counted by rank, the
                // access links' loads are the ranks' (a sub-node without
                // a rank carries nothing), and the inter-switch links' are
                // cleared in the pass that finds their maximum.
                let (inter, access) = match (&mut by_rank, &mut load) {
                    (Some(side), Loads::Flows(load)) => {
                        let inter = take_max_of_flows(&mut load[inter_links.clone()]);
                        let access = side.access_max();
                        side.clear();
                        (inter, access)
                    }
                    _ => {
                        let inter = load.max(inter_links.clone());
                        let access = load.max(net.access_links()).with(load.max(second.clone()));
                        load.clear();
                        (inter, access)
                    }
                };
                StepLoad {
                    phase: step.phase,
                    step: step.number,
                    distance: step.distance,
                    flows: step.flow_count(),
                    inter_switch_flows: counts.crossing,
                    intra_server_flows: counts.inside,
                    shared_nic_flows: counts.shared,
                    max_load: inter.flows(),
                    max_load_links: inter.count,
                    max_share: (policy == Policy::Spray).then_some(inter.value),
                    access_max_load: access.flows(),
                    access_max_load_links: access.count,
                    access_overloaded: access.flows() > 1,
                }
            }
        };
        out.push(StepLoad {
            phase: step.phase,
            step: step.number,
            distance: step.distance,
            ..load_of
        });
    }
    Ok(out)
}

/// The load of every directed link (indexed by link id, see
/// [`Network::link`]) in one step.
pub fn step_link_loads(
    net: &Network<'_>,
    ranks: &[usize],
    step: &Step,
    seed: u64,
) -> Result<Vec<u32>> {
    check_ranks_of(net.plan(), net.source(), ranks)?;
    if step.total_ranks() != ranks.len() {
        return Err(Error::Invalid {
            file: net.source().to_string(),
            what: "rank table",
            problems: vec![Problem::at(
                None,
                "rank table",
                format!(
                    "it has {} ranks but the step is for {}",
                    ranks.len(),
                    step.total_ranks()
                ),
                "build the step for the table's ranks",
            )],
        });
    }
    check_avoided(net, ranks)?;
    let mut load = vec![0u32; net.link_count()];
    let servers = net.plan().intra_server_groups();
    for (s, d) in step.flows() {
        if ranks[s] == ranks[d] || inside_server(servers.as_deref(), ranks[s], ranks[d]) {
            continue;
        }
        let route = net.route(ranks[s], ranks[d], flow_id(s, d), seed)?;
        for &l in route.links() {
            load[l] += 1;
        }
    }
    Ok(load)
}

/// What routing a step's flows reuses: the routes of one flow, the ECMP
/// flows waiting to be counted a batch at a time, and the sprayed flows'
/// routes counted per pair of switches.
#[derive(Default)]
struct Scratch<'n> {
    /// The route of a D-mod-K flow.
    route: Route,
    /// ECMP flows as `(source sub-node, destination sub-node, flow id)`,
    /// up to [`BATCH`], for [`Network::count_ecmp`].
    batch: Vec<(usize, usize, u64)>,
    count: CountScratch<'n>,
    routes: Vec<Route>,
    spread: Spread,
}

/// ECMP flows counted together ([`Network::count_ecmp`]): enough for its
/// passes to overlap many flows' hashes, few enough to stay in L1.
const BATCH: usize = 256;

/// The flows of one step by where they went.
struct StepCounts {
    /// Routed flows that leave their switch.
    crossing: usize,
    /// Flows that stay inside a server (or a NIC).
    inside: usize,
    /// Flows counted with an earlier flow between the same two NICs.
    shared: usize,
}

/// Adds the flows of one step to `load` under `policy` (a flow spread
/// over k paths adds `1 / k` on each), except those between two ranks of
/// one sub-node or two sub-nodes of one server of `servers` (per
/// sub-node, its server, when the servers reduce inside) and those
/// between two NICs that an earlier flow of the step already joins (one
/// rank per GPU on a shared NIC, see the module documentation); `repeats`
/// says whether any sub-node carries two ranks ([`has_repeats`]).
#[allow(clippy::too_many_arguments)]
fn count_step<'n>(
    net: &'n Network<'_>,
    ranks: &[usize],
    step: &Step,
    (seed, policy, counting): (u64, Policy, Counting),
    servers: Option<&[u32]>,
    repeats: bool,
    scratch: &mut Scratch<'n>,
    load: &mut Loads,
) -> Result<StepCounts> {
    let port_seed = PortSeed::new(seed);
    let mut counts = StepCounts {
        crossing: 0,
        inside: 0,
        shared: 0,
    };
    // NIC pairs already routed in this step; only tables with several
    // ranks on one NIC can repeat one.
    let mut routed = std::collections::HashSet::new();
    scratch.batch.clear();
    // While every sprayed flow's share is a power of two, the loads are
    // exact sums and a link's share is added once per flow.
    let mut exact = true;
    for (s, d) in step.flows() {
        if ranks[s] == ranks[d] || inside_server(servers, ranks[s], ranks[d]) {
            counts.inside += 1;
            continue;
        }
        if repeats && !routed.insert((ranks[s], ranks[d])) {
            counts.shared += 1;
            continue;
        }
        let (src, dst, flow) = (ranks[s], ranks[d], flow_id(s, d));
        let load = match load {
            Loads::Flows(load) if policy != Policy::DModK => {
                // One route a flow, as `flow_routes` gives it for ECMP,
                // counted a batch at a time.
                scratch.batch.push((src, dst, flow));
                if scratch.batch.len() == BATCH {
                    counts.crossing +=
                        net.count_ecmp(&scratch.batch, port_seed, &mut scratch.count, load)?;
                    scratch.batch.clear();
                }
                continue;
            }
            Loads::Flows(load) => {
                // One route a flow, as `flow_routes` gives it for D-mod-K.
                let route = &mut scratch.route;
                *route = net.route_dmodk(src, dst)?;
                counts.crossing += usize::from(!route.inter_switch().is_empty());
                for &l in route.links() {
                    load[l] += 1;
                }
                continue;
            }
            Loads::Shares(load) => load,
        };
        if policy == Policy::Spray && counting == Counting::PerLink {
            net.flow_spread(src, dst, flow, seed, &mut scratch.spread)?;
            let spread = &scratch.spread;
            counts.crossing += usize::from(spread.crosses);
            exact &= exact_share(spread.routes);
            let share = 1.0 / spread.routes as f64;
            for &(l, routes) in &spread.links {
                add_share(&mut load[l], share, routes, exact);
            }
            continue;
        }
        scratch.routes.clear();
        net.flow_routes(policy, src, dst, flow, seed, &mut scratch.routes)?;
        if scratch.routes.iter().any(|r| !r.inter_switch().is_empty()) {
            counts.crossing += 1;
        }
        let share = 1.0 / scratch.routes.len() as f64;
        for route in &scratch.routes {
            for &l in route.links() {
                load[l] += share;
            }
        }
    }
    if let Loads::Flows(load) = load
        && !scratch.batch.is_empty()
    {
        counts.crossing += net.count_ecmp(&scratch.batch, port_seed, &mut scratch.count, load)?;
        scratch.batch.clear();
    }
    Ok(counts)
}

/// True when `1 / routes` and every sum of such shares over a step is
/// exact in `f64`: a power of two up to 2^20 routes (each link's load is
/// then a multiple of 2^-20 below 2^32 flows, within 53 bits).
fn exact_share(routes: u64) -> bool {
    routes.is_power_of_two() && routes <= 1 << 20
}

/// Adds a flow's `share` taken by `routes` of its routes to a link's
/// `load`: the sum the routes counted one by one give, which is `routes ×
/// share` at once while every share of the step so far is `exact`
/// ([`exact_share`]), and otherwise (a flow over 3 or 6 paths, say) is
/// summed one route at a time, so that the rounding is the same.
fn add_share(load: &mut f64, share: f64, routes: u64, exact: bool) {
    if exact || routes == 1 {
        *load += routes as f64 * share;
    } else {
        for _ in 0..routes {
            *load += share;
        }
    }
}

/// True when some sub-node of `plan` carries two ranks of `ranks` (checked
/// in range by [`check_ranks_of`]; one out of range counts as a repeat,
/// which only makes the step count it once).
fn has_repeats(plan: &Plan, ranks: &[usize]) -> bool {
    !distinct_in_range(plan.sub_node_list.len(), ranks)
}
