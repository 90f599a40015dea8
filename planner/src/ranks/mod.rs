//! Rank tables for allreduce on a plan, and the per-step proof of which
//! links they load.
//!
//! - [`hdrm`]: EFLOPS Algorithm 1, the rank mapping of HDRM;
//! - [`schedule`]: halving-doubling and ring schedules as steps of flows;
//! - routes come from [`crate::network`], the one route model (ECMP with a
//!   documented 5-tuple hash) on the plan's switches and cables;
//! - [`mod@verify`]: routes every flow of every step and counts the flows on
//!   each directed link;
//! - dead cables and switches down for repair ([`Avoid`]), which
//!   [`Network::avoiding`] routes around;
//! - [`optimize`]: [`plan_ranks`], the rank table for a fabric that
//!   Algorithm 1 does not fit (irregular, partial or faulty, or a job that
//!   is not a power of two): a heuristic, an exact model for small jobs
//!   (`ilp`, with `good_lp` and `microlp`), and a lower bound to say how far
//!   from the best the table can be.
//!
//! A rank table maps rank r to an index into `plan.sub_node_list`:
//!
//! - `hd` and `ring` fill ranks switch by switch in plan order, and within a
//!   switch in port order; on a rail-optimized plan they fill server by
//!   server, and within a server in NIC (rail) order: with R rails (a power
//!   of two) halving-doubling's first log2(R) reduce-scatter steps (and
//!   last all-gather steps) stay inside each server, and the steps between
//!   them join the same NIC index of two servers, one rail each, which
//!   within a group of servers crosses only its rail switch (at most one
//!   flow per link; [`mod@verify`] proves it per step);
//! - `hdrm` places ranks with Algorithm 1 on a regular BiGraph whose N is a
//!   power of two: vector 0 on the upper switches and vector 1 on the lower
//!   ones, each in plan order, and logical group j on the j-th sub-node (in
//!   port order) of every switch. With X ranks and X >= N, the X/N logical
//!   groups take the first X/N sub-nodes of every switch; with X < N, only
//!   the first X/2 switches of each part carry a rank, on their first
//!   sub-node. Either way every step of halving-doubling loads each
//!   directed inter-switch link with at most one flow (see [`hdrm`]);
//! - [`plan_ranks`] gives the same table where Algorithm 1 applies, and
//!   otherwise one chosen for the fabric, with its loads, a lower bound and
//!   the cost of folding a job that is not a power of two;
//! - [`plan_gpu_ranks`] (in [`gpus`]): one rank per GPU on a plan whose
//!   NICs carry several GPUs, [`plan_ranks`]'s table widened so that the
//!   GPUs of one NIC take consecutive ranks (the intra-server steps first,
//!   then the NIC-level schedule); the same as [`plan_ranks`] elsewhere.
//!   [`rank_table`] and [`plan_ranks`] stay one rank per NIC (the
//!   estimates widen their tables themselves, in the same order).
//!
//! Halving-doubling over X ranks that is not a power of two folds the
//! X - P' extra ranks onto P' core ranks ([`folded_halving_doubling`]);
//! [`Algorithm::schedule`] gives that schedule, so [`fn@verify`] checks such
//! tables, while [`rank_table`] keeps refusing them (Algorithm 1 and the
//! plain orders are for powers of two).

pub mod engine;
pub mod format;
pub mod gpus;
pub mod hdrm;
mod ilp;
pub mod optimize;
pub mod schedule;
pub mod verify;

use serde::Serialize;

use crate::algorithm::{Command, RankSchedule, Runs};
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::plan::{Tier, Topology};

pub use crate::network::{Avoid, Link, Network, Policy, Route, Target};
pub use engine::Engine;
pub use gpus::{nic_local_ranks, plan_gpu_ranks, plan_gpu_ranks_on, rank_gpus};
pub use hdrm::{Mapping, algorithm1};
pub use optimize::{
    Congestion, Fold, Outcome, Request, Solver, lower_bound, lower_bound_offered, plan_ranks,
    plan_ranks_on,
};
pub use schedule::{
    FoldCost, FoldStyle, Layout, Phase, Schedule, Step, folded_halving_doubling,
    folded_halving_doubling_as, halving_doubling, ring, ring_backward,
};
pub use verify::{
    StepLoad, check_avoided, check_ranks, step_link_loads, verify_schedule, verify_schedule_routed,
};

pub use crate::algorithm::Algorithm;

impl Algorithm {
    /// The schedule of this algorithm over `ranks` ranks: halving-doubling
    /// (folded when `ranks` is not a power of two) or ring; an algorithm
    /// without a [`RankSchedule`] (one `ranks` does not take) is refused.
    pub fn schedule(self, ranks: usize) -> Result<Schedule> {
        match self.info().rank_schedule {
            Some(RankSchedule::HalvingDoubling) => folded_halving_doubling(ranks),
            Some(RankSchedule::Ring) => ring(ranks),
            None => Err(no_rank_schedule(self)),
        }
    }
}

/// The refusal of an algorithm that `ranks` does not take.
fn no_rank_schedule(algorithm: Algorithm) -> Error {
    Error::parameter(
        "algorithm",
        format!(
            "{} has no rank schedule; rank tables are for {}",
            algorithm.as_str(),
            Algorithm::names(Command::Ranks)
        ),
    )
}

/// A rank table: rank r runs on `plan.sub_node_list[ranks[r]]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct RankTable {
    /// The algorithm the order is for.
    pub algorithm: Algorithm,
    /// Rank -> index into `plan.sub_node_list`.
    pub ranks: Vec<usize>,
}

impl RankTable {
    /// The schedule of the table's algorithm over its ranks.
    pub fn schedule(&self) -> Result<Schedule> {
        self.algorithm.schedule(self.ranks.len())
    }
}

/// The rank table of `algorithm` on `plan` for `ranks` ranks (default: every
/// sub-node, or M x N for HDRM).
pub fn rank_table(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
) -> Result<RankTable> {
    rank_table_of(plan, algorithm, ranks, &members(plan)?)
}

/// [`rank_table`] from the plan's [`members`], found already (from a
/// network, [`members_on`]).
pub(crate) fn rank_table_of(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    members: &[Vec<usize>],
) -> Result<RankTable> {
    let Some(kind) = algorithm.info().rank_schedule else {
        return Err(no_rank_schedule(algorithm));
    };
    let table = if algorithm.info().runs == Runs::BiGraphMapping {
        hdrm_order(plan, members, ranks)?
    } else {
        let mut order = plain_order(plan, members);
        let p = order.len();
        let x = ranks.unwrap_or(p);
        match kind {
            RankSchedule::HalvingDoubling => hdrm::check_ranks(x, p)?,
            RankSchedule::Ring if x == 0 || x > p => {
                return Err(Error::parameter(
                    "ranks",
                    format!("{x} ranks: a ring on this plan takes 1 to {p}"),
                ));
            }
            RankSchedule::Ring => {}
        }
        order.truncate(x);
        order
    };
    Ok(RankTable {
        algorithm,
        ranks: table,
    })
}

/// Routes every step of the table's schedule on `plan` (ECMP choices made
/// with `seed`) and reports the loads per step.
pub fn verify(plan: &CheckedPlan, table: &RankTable, seed: u64) -> Result<Vec<StepLoad>> {
    let schedule = table.schedule()?;
    let net = plan.network()?;
    verify_schedule(&net, &table.ranks, &schedule, seed)
}

/// Routes every step of the table's schedule on `plan` around the links
/// and switches in `avoid` (choices made by `policy`, the ECMP hash with
/// `seed`) and reports the
/// loads per step; a rank on an avoided switch is an error.
pub fn verify_avoiding(
    plan: &CheckedPlan,
    table: &RankTable,
    avoid: &[Avoid],
    seed: u64,
    policy: Policy,
) -> Result<Vec<StepLoad>> {
    verify_engine(plan, table, Engine::Probe, avoid, seed, policy)
}

/// [`verify_avoiding`] for what `engine` really runs over the table: its
/// schedule ([`Engine::schedule`], with its own fold) in the order its
/// ring visits the ranks ([`Engine::ring_order`]).
pub fn verify_engine(
    plan: &CheckedPlan,
    table: &RankTable,
    engine: Engine,
    avoid: &[Avoid],
    seed: u64,
    policy: Policy,
) -> Result<Vec<StepLoad>> {
    let net = plan.network_avoiding(avoid)?;
    verify_engine_on(&net, plan, table, engine, seed, policy)
}

/// [`verify_engine`] on `net`, the network of `plan` that avoids the
/// links and switches to keep off ([`Network::avoiding`]), built once by
/// a caller that routes more on it.
pub fn verify_engine_on(
    net: &Network<'_>,
    plan: &CheckedPlan,
    table: &RankTable,
    engine: Engine,
    seed: u64,
    policy: Policy,
) -> Result<Vec<StepLoad>> {
    let schedule = engine.schedule(table.algorithm, table.ranks.len())?;
    verify_scheduled(net, plan, (table, engine, &schedule), seed, policy)
}

/// [`verify_engine_on`] with the engine's schedule of the table made
/// already ([`Engine::schedule`]).
pub(crate) fn verify_scheduled(
    net: &Network<'_>,
    plan: &CheckedPlan,
    (table, engine, schedule): (&RankTable, Engine, &Schedule),
    seed: u64,
    policy: Policy,
) -> Result<Vec<StepLoad>> {
    if !std::ptr::eq(net.plan(), &**plan) {
        return Err(other_network());
    }
    let order = engine.ring_order(plan, &table.ranks);
    let ranks = in_order(&order, &table.ranks);
    verify::verify_schedule_routed(net, &ranks, schedule, seed, policy)
}

/// Refuses `net` unless it is the network [`Network::avoiding`] builds
/// for `plan` and `avoid`.
pub(crate) fn same_network(net: &Network<'_>, plan: &CheckedPlan, avoid: &[Avoid]) -> Result<()> {
    if net.is_avoiding(plan, avoid) {
        Ok(())
    } else {
        Err(other_network())
    }
}

/// The error for a network built from another plan, or avoiding other
/// links and switches, than the request names: a caller's mistake.
fn other_network() -> Error {
    Error::Internal(
        "a rank table was routed on a network of another plan, or one avoiding other links and switches than asked"
            .to_string(),
    )
}

/// `items` (one per rank) in `order` (a list of ranks).
pub(crate) fn in_order<T: Copy>(order: &[usize], items: &[T]) -> Vec<T> {
    order.iter().map(|&r| items[r]).collect()
}

/// [`members`] of the plan of `net`, whose sub-nodes' switches the
/// network has resolved already: no lookup by name, which at 131,072
/// sub-nodes is a cache miss and a hash of the name per sub-node.
pub(crate) fn members_on(net: &crate::network::Network<'_>) -> Vec<Vec<usize>> {
    let plan = net.plan();
    let mut members = vec![Vec::new(); plan.switch_list.len()];
    for i in 0..plan.sub_node_list.len() {
        if let Some(s) = net.switch_of(i) {
            members[s].push(i);
        }
    }
    for m in &mut members {
        m.sort_by_key(|&i| (plan.sub_node_list[i].port, i));
    }
    members
}

/// The sub-nodes of every switch (indices into `plan.sub_node_list`), in
/// switch order, each switch's in port order.
fn members(plan: &CheckedPlan) -> Result<Vec<Vec<usize>>> {
    let index = plan.switch_index();
    let mut members = vec![Vec::new(); plan.switch_list.len()];
    let mut problems = Vec::new();
    for (i, sn) in plan.sub_node_list.iter().enumerate() {
        match index.get(sn.switch.as_str()) {
            Some(&s) => members[s].push(i),
            None => problems.push(crate::Problem::at(
                None,
                format!("sub-node {}", sn.id),
                format!("its switch {} is not in the plan's switch list", sn.switch),
                "design the plan again",
            )),
        }
    }
    if !problems.is_empty() {
        return Err(plan.refusal(problems));
    }
    for m in &mut members {
        m.sort_by_key(|&i| (plan.sub_node_list[i].port, i));
    }
    Ok(members)
}

/// The order `hd` and `ring` fill `members` (the sub-nodes of every
/// switch that may take a rank, [`members`] or fewer): switch by switch;
/// on a rail-optimized plan server by server in plan order, and within a
/// server by its index (NIC order, one rail each).
pub(crate) fn plain_order(plan: &CheckedPlan, members: &[Vec<usize>]) -> Vec<usize> {
    if !plan.reduces_in_server() {
        return members.iter().flatten().copied().collect();
    }
    let mut usable = vec![false; plan.sub_node_list.len()];
    for &i in members.iter().flatten() {
        usable[i] = true;
    }
    let mut out = Vec::with_capacity(plan.sub_node_list.len());
    for server in &plan.servers {
        let mut here: Vec<usize> = server
            .sub_nodes
            .iter()
            .copied()
            .filter(|&i| usable.get(i).copied().unwrap_or(false))
            .collect();
        here.sort_by_key(|&i| (plan.sub_node_list[i].index, i));
        out.extend(here);
    }
    out
}

/// The HDRM rank table: Algorithm 1 placed on the plan's switches.
fn hdrm_order(
    plan: &CheckedPlan,
    members: &[Vec<usize>],
    ranks: Option<usize>,
) -> Result<Vec<usize>> {
    let infeasible = |reason: String, fix: &str| Error::Infeasible {
        input: plan.source().to_string(),
        topology: "rank mapping for HDRM".to_string(),
        reason,
        fix: fix.to_string(),
    };
    if plan.topology != Topology::BiGraph {
        return Err(infeasible(
            format!(
                "the plan is a {}, and Algorithm 1 places ranks on the two parts of a BiGraph",
                plan.describe()
            ),
            "use the hd or ring algorithm on this plan, or design a BiGraph",
        ));
    }
    let Some(b) = plan.bigraph.as_ref() else {
        return Err(infeasible(
            "the BiGraph plan has no `bigraph` parameters (M and N)".to_string(),
            "design the plan again with this planner",
        ));
    };
    let (m, n) = (b.m, b.n);
    let uppers: Vec<usize> = (0..plan.switch_list.len())
        .filter(|&s| plan.switch_list[s].part_or_tier == Tier::Upper)
        .collect();
    let lowers: Vec<usize> = (0..plan.switch_list.len())
        .filter(|&s| plan.switch_list[s].part_or_tier == Tier::Lower)
        .collect();
    let used = || uppers.iter().chain(&lowers).map(|&s| members[s].len());
    let (lo, hi) = (used().min().unwrap_or(0), used().max().unwrap_or(0));
    if !b.regular || lo != hi {
        return Err(infeasible(
            format!(
                "the BiGraph {m}x{n} is irregular: its switches carry {lo} to {hi} sub-nodes, and Algorithm 1 needs the same M on every switch"
            ),
            "design with a sub-node count that is a multiple of N, so that every switch carries M",
        ));
    }
    if uppers.len() != n / 2 || lowers.len() != n / 2 || n % 2 != 0 {
        return Err(infeasible(
            format!(
                "the plan has {} upper and {} lower switches; a BiGraph of N = {n} has N/2 of each",
                uppers.len(),
                lowers.len()
            ),
            "design the plan again with this planner",
        ));
    }
    if hi != m {
        return Err(infeasible(
            format!("the switches carry {hi} sub-nodes each but the plan says M = {m}"),
            "design the plan again with this planner",
        ));
    }
    let x = ranks.unwrap_or(m * n);
    hdrm::check(n, m, x, plan.source())?;
    let mapping = algorithm1(n, m, x)?;
    let mut table = vec![usize::MAX; x];
    for (part, switches) in [(&mapping.upper, &uppers), (&mapping.lower, &lowers)] {
        for (k, here) in part.iter().enumerate() {
            for (slot, &r) in here.iter().enumerate() {
                table[r] = members[switches[k]][slot];
            }
        }
    }
    if let Some(r) = table.iter().position(|&s| s == usize::MAX) {
        return Err(Error::Internal(format!(
            "Algorithm 1 left rank {r} of {x} without a sub-node"
        )));
    }
    Ok(table)
}

#[cfg(test)]
mod tests;
