//! Rank mapping for partial, irregular and faulty fabrics: choose which
//! available sub-nodes carry the X ranks of a job, and in which order, so
//! that halving-doubling loads the directed inter-switch links as little as
//! the fabric allows.
//!
//! # What is minimised
//!
//! The cost of a rank table is, first, its worst load: the most flows on
//! one directed inter-switch link in any step, with every flow routed as
//! [`fn@super::verify`] routes it (ECMP hash and seed included) on the fabric
//! without the avoided links and switches; then the number of links that
//! carry that load, summed over the steps.
//!
//! # How
//!
//! [`plan_ranks`] takes, in order:
//!
//! 1. **Algorithm 1** (`algorithm-1`): on a regular BiGraph whose N is a
//!    power of two, with nothing avoided and X a power of two, EFLOPS
//!    Algorithm 1 as [`super::rank_table`] gives it: worst load 1.
//! 2. **The heuristic** (`heuristic`): a few starting tables, scored
//!    exactly in this order until one meets the lower bound: all ranks on
//!    one switch when they fit; Algorithm 1 on the largest regular
//!    sub-fabric (a power of two h of usable switches in each part with the
//!    P'/2h sub-nodes it needs on each, the healthiest and fullest first)
//!    and Algorithm 1 stretched over every usable switch (h the power of two
//!    at or above the larger part, the ranks of missing switches or
//!    sub-nodes moved to the roomiest switches of their part), each tried
//!    with the lower part rotated so that a dead cable falls where no pair
//!    needs it; and the plan order. The extra ranks of a fold go to a free
//!    sub-node on their partner's switch, or else to a switch with a usable
//!    direct link to it that no other fold flow uses yet. Then a tabu
//!    search: take a flow on a link at the worst load and one of its two
//!    ranks, try exchanging it with every other rank and free sub-node (on
//!    small jobs) or with 16 of them (half on its own part or tier), and
//!    make the best exchange even when it is worse, keeping the best table
//!    seen; a rank just moved stays put for a few rounds unless moving it
//!    gives a new best. Exchanges are compared on the cost, then on the
//!    flows above one per link summed over links and steps. A small PRNG
//!    seeded with the request's seed draws the choices, and the budgets
//!    count exchanges, not time: the same request gives the same table on
//!    every machine.
//! 3. **The exact model** (`ilp`, described in `ranks/ilp.rs`): for up to
//!    [`EXACT_MAX_RANKS`] ranks on [`EXACT_MAX_SWITCHES`] switches with
//!    ranks times switches at most [`EXACT_MAX_PLACEMENTS`], an integer
//!    program over the switch of every rank, solved with `microlp` and
//!    started from the heuristic's table: first for tables whose loads no
//!    ECMP seed changes, then, when that does not settle it, with ECMP
//!    choices left to the model, which bounds every table.
//!    [`Solver::Exact`] always runs it (and refuses larger jobs);
//!    [`Solver::Auto`] runs it when the heuristic has not reached the lower
//!    bound, and on jobs where ECMP offers choices only up to half that
//!    size. Its tables are polished by the search, and the best table wins.
//!
//! `hd` and `ring` keep the plain plan order (switch by switch, port order,
//! skipping avoided switches; server by server on a rail-optimized plan,
//! see [`super`]) and are only verified (`plan-order`).
//!
//! Sub-nodes in [`Request::unavailable`] (busy in a cluster) carry no rank
//! while their switches and links still route flows; Algorithm 1 is kept
//! when its table does not need them, and the heuristic works around them
//! otherwise.
//!
//! # The lower bound
//!
//! [`lower_bound`] counts: no flow has to cross a link when all X ranks fit
//! on one switch (bound 0); otherwise some flow crosses in some step (1). In
//! halving-doubling over P' = 2^k core ranks, a switch holding c of them can
//! keep at most c log2(c) of the k P' directed flows of the k distinct steps
//! inside (a set of c corners of a hypercube spans at most (c/2) log2(c) of
//! its edges), and that sum is largest when the fullest switches are filled
//! first. The flows left must cross, each on at least one of the A directed
//! inter-switch links still usable, in some step, so the worst load is at
//! least the crossing flows over k A, rounded up. For one step alone, the
//! pairs that cannot share a switch (beyond the sum over switches of
//! floor(capacity / 2)) give the same kind of bound; the larger one counts.
//! On a rail-optimized plan a flow stays off the inter-switch links only
//! inside a group of servers (inside a server over NVLink or PCIe, or
//! between two NICs of one rail switch), so the groups take the switches'
//! place in both counts: a job that fits in one group has bound 0, one
//! that spans groups at least 1.

use std::fmt::Write as _;

use serde::Serialize;

use super::ilp;
use super::schedule::{FoldCost, Phase, Schedule};
use super::verify::{StepLoad, verify_schedule};
use super::{Algorithm, Engine, RankTable, in_order, members, plain_order};
use crate::algorithm::Runs;
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::network::Avoid;
use crate::network::Network;

mod search;
mod starts;

use search::{Cost, Search};

/// Most ranks the exact model takes.
pub const EXACT_MAX_RANKS: usize = 16;

/// Most switches (with sub-nodes to place ranks on) the exact model takes.
pub const EXACT_MAX_SWITCHES: usize = 8;

/// Most ranks times switches (the model's binary variables): proving that
/// no table meets the lower bound takes microlp seconds at this size and
/// can take many minutes at 16 ranks on 8 switches.
pub const EXACT_MAX_PLACEMENTS: usize = 64;

/// How [`plan_ranks`] searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    /// The heuristic, then the exact model when it is small enough and the
    /// heuristic has not reached the lower bound.
    #[default]
    Auto,
    /// The heuristic only.
    Heuristic,
    /// The exact model; refused when it is too big.
    Exact,
}

impl Solver {
    /// Every solver, in the order the help text lists them.
    pub const ALL: [Solver; 3] = [Solver::Auto, Solver::Heuristic, Solver::Exact];

    /// `auto`, `heuristic` or `exact`, as on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Solver::Auto => "auto",
            Solver::Heuristic => "heuristic",
            Solver::Exact => "exact",
        }
    }
}

impl std::str::FromStr for Solver {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Solver::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::parameter(
                    "solver",
                    format!("`{s}` is not a solver; use auto, heuristic or exact"),
                )
            })
    }
}

/// What to map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    /// The allreduce algorithm.
    pub algorithm: Algorithm,
    /// Ranks in the job (default: every sub-node that is not avoided).
    pub ranks: Option<usize>,
    /// Links and switches to keep off.
    pub avoid: Vec<Avoid>,
    /// How to search.
    pub solver: Solver,
    /// The ECMP hash seed the loads are computed with (and the search's
    /// random choices are seeded from).
    pub seed: u64,
    /// Sub-nodes (indexes into `plan.sub_node_list`) that are busy or
    /// otherwise out of use: no rank is placed on them, while their
    /// switches and links still carry traffic. The provisioner fills it
    /// with the sub-nodes of Kubernetes Nodes that are not free.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<usize>,
    /// The engine that runs the allreduce: the table is made for the
    /// schedule it really runs ([`Engine::schedule`]), numbered as it
    /// numbers ranks.
    #[serde(skip_serializing_if = "Engine::is_probe")]
    pub engine: Engine,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            algorithm: Algorithm::Hdrm,
            ranks: None,
            avoid: Vec::new(),
            solver: Solver::Auto,
            seed: 0,
            unavailable: Vec::new(),
            engine: Engine::Probe,
        }
    }
}

impl Request {
    /// True when [`crate::ranks::plan_gpu_ranks_on`] gives `self` and
    /// `other` the same outcome on one plan and network, given that `self`
    /// placed `placed` ranks there: the same request once a rank count left
    /// to the plan (`None`) is read as the `placed` ranks it came to, and
    /// the solver compared only for an algorithm that searches (HDRM's
    /// mapping); a plan-order table is found without one.
    pub fn asks_as(&self, other: &Request, placed: usize) -> bool {
        let searches = |r: &Request| r.algorithm.info().runs == Runs::BiGraphMapping;
        self.algorithm == other.algorithm
            && self.ranks.unwrap_or(placed) == other.ranks.unwrap_or(placed)
            && self.avoid == other.avoid
            && (!searches(self) || self.solver == other.solver)
            && self.seed == other.seed
            && self.unavailable == other.unavailable
            && self.engine == other.engine
    }
}

/// The fold of a job whose rank count is not a power of two, and what it
/// costs (see [`FoldCost`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fold {
    /// r = X - P': ranks that hand their buffer to a partner.
    pub extra_ranks: usize,
    /// P': ranks that run halving-doubling.
    pub core_ranks: usize,
    /// Steps the fold adds: 2 (fold and unfold).
    pub extra_steps: usize,
    /// Buffers moved per extra rank by the two fold steps: 2.
    pub fold_buffers: f64,
    /// Buffers moved per core rank by halving-doubling: 2 (1 - 1/P').
    pub core_buffers: f64,
    /// `fold_buffers / core_buffers` = P' / (P' - 1).
    pub bytes_ratio: f64,
    /// The cost in words.
    pub note: String,
}

impl Fold {
    /// The fold of halving-doubling over `x` ranks; `None` for a power of two.
    pub fn of(x: usize) -> Option<Self> {
        FoldCost::of(x).map(|c| Fold {
            extra_ranks: c.extra,
            core_ranks: c.core,
            extra_steps: 2,
            fold_buffers: c.fold_buffers,
            core_buffers: c.core_buffers,
            bytes_ratio: c.ratio(),
            note: c.describe(),
        })
    }
}

/// A step where some directed inter-switch link carries more than one
/// flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Congestion {
    /// The phase.
    pub phase: Phase,
    /// Position within the phase, from 1.
    pub step: usize,
    /// Rank distance; absent for ring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
    /// Most flows on one directed inter-switch link.
    pub max_load: usize,
    /// Links that carry that many.
    pub links: usize,
}

/// The result of [`plan_ranks`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The rank table.
    pub table: RankTable,
    /// The engine whose schedule the table is made for and its loads are
    /// computed with.
    #[serde(skip_serializing_if = "Engine::is_probe")]
    pub engine: Engine,
    /// Where the table comes from: `algorithm-1`, `plan-order`,
    /// `heuristic` or `ilp`.
    pub method: &'static str,
    /// The loads of every step, routed around the avoided links and
    /// switches with the request's seed.
    pub steps: Vec<StepLoad>,
    /// Most flows on one directed inter-switch link over all steps.
    pub worst_load: usize,
    /// A load no table can beat on this fabric: the counting bound of
    /// [`lower_bound`], raised to the exact model's optimum when it ran.
    pub lower_bound: usize,
    /// True when `worst_load` equals `lower_bound`.
    pub optimal: bool,
    /// The fold, when the rank count is not a power of two
    /// (halving-doubling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fold: Option<Fold>,
    /// What was done and why, for people.
    pub notes: Vec<String>,
}

impl Outcome {
    /// The outcome of `table` from its per-step loads `steps`: the worst
    /// load is the most loaded step's, and the table is optimal when that
    /// meets `lower_bound`.
    pub fn from_steps(
        table: RankTable,
        engine: Engine,
        method: &'static str,
        steps: Vec<StepLoad>,
        lower_bound: usize,
        fold: Option<Fold>,
        notes: Vec<String>,
    ) -> Outcome {
        let worst_load = steps.iter().map(|s| s.max_load).max().unwrap_or(0);
        Outcome {
            table,
            engine,
            method,
            steps,
            worst_load,
            lower_bound,
            optimal: worst_load == lower_bound,
            fold,
            notes,
        }
    }

    /// The steps where some directed inter-switch link carries more than
    /// one flow, with how many and on how many links.
    pub fn congested_steps(&self) -> Vec<Congestion> {
        self.steps
            .iter()
            .filter(|s| s.max_load > 1)
            .map(|s| Congestion {
                phase: s.phase,
                step: s.step,
                distance: s.distance,
                max_load: s.max_load,
                links: s.max_load_links,
            })
            .collect()
    }
}

/// Maps the ranks of `request` onto `plan` (see the module documentation).
pub fn plan_ranks(plan: &CheckedPlan, request: &Request) -> Result<Outcome> {
    let net = plan.network_avoiding(&request.avoid)?;
    plan_ranks_on(&net, plan, request)
}

/// [`plan_ranks`] on `net`, the network of `plan` avoiding what
/// `request.avoid` names ([`Network::avoiding`]), which a caller that
/// routes more on it builds once: `verify-ranks` routes the table, and
/// the plan order beside it, on one network.
pub fn plan_ranks_on(net: &Network<'_>, plan: &CheckedPlan, request: &Request) -> Result<Outcome> {
    super::same_network(net, plan, &request.avoid)?;
    let members = super::members_on(net);
    let mut avail = members.clone();
    let mut notes = Vec::new();
    if !request.avoid.is_empty() {
        notes.push(describe_avoided(net, &request.avoid, &avail));
    }
    for (s, m) in avail.iter_mut().enumerate() {
        if net.is_avoided_switch(s) {
            // On HPN a NIC whose plane-A ToR is avoided keeps its port 1.
            m.retain(|&sn| !net.cut_off(sn));
        }
    }
    if let Some(&bad) = request
        .unavailable
        .iter()
        .find(|&&i| i >= plan.sub_node_list.len())
    {
        return Err(Error::parameter(
            "unavailable",
            format!(
                "sub-node index {bad} is not in the plan, which has {} sub-nodes",
                plan.sub_node_list.len()
            ),
        ));
    }
    if !request.unavailable.is_empty() {
        let mut busy = request.unavailable.clone();
        busy.sort_unstable();
        busy.dedup();
        notes.push(format!(
            "{} sub-node{} unavailable: no rank is placed on {}",
            busy.len(),
            if busy.len() == 1 { "" } else { "s" },
            if busy.len() == 1 { "it" } else { "them" }
        ));
        for m in &mut avail {
            m.retain(|i| !request.unavailable.contains(i));
        }
    }
    let p: usize = avail.iter().map(Vec::len).sum();
    if p == 0 {
        return Err(if request.unavailable.is_empty() {
            Error::parameter(
                "avoid",
                "every switch with sub-nodes is avoided, which leaves no sub-node for a rank; avoid fewer switches",
            )
        } else {
            Error::parameter(
                "unavailable",
                "every sub-node is unavailable or on an avoided switch, which leaves none for a rank",
            )
        });
    }
    let left = match (request.avoid.is_empty(), request.unavailable.is_empty()) {
        (true, true) => "of the plan",
        (false, true) => "left after the avoided switches",
        (_, false) => "still available",
    };
    let x = request.ranks.unwrap_or(p);
    if x == 0 {
        return Err(Error::parameter("ranks", "0 ranks: use 1 or more"));
    }
    if x > p {
        return Err(Error::parameter(
            "ranks",
            format!("{x} ranks do not fit on the {p} sub-nodes {left}; use at most {p}"),
        ));
    }
    let schedule = request.engine.schedule(request.algorithm, x)?;
    let caps: Vec<usize> = avail.iter().map(Vec::len).collect();
    if net.avoids_anything() {
        check_reachable(net, &avail)?;
    }
    let counted = lower_bound(net, &schedule, &caps);
    let fold = schedule.fold().and(Fold::of(x));

    let mut proven = None;
    let (ranks, method) = match request.algorithm.info().runs {
        Runs::Anywhere | Runs::WholeSwitches | Runs::WholeServers => {
            let mut order = plain_order(plan, &avail);
            order.truncate(x);
            // NCCL's ring visits a server's ranks together: the table
            // says so, in the order NCCL takes.
            let order = in_order(&request.engine.ring_order(plan, &order), &order);
            (order, "plan-order")
        }
        Runs::BiGraphMapping => {
            let alg1 = if request.avoid.is_empty() && x.is_power_of_two() {
                super::rank_table_of(plan, Algorithm::Hdrm, Some(x), &members)
                    .ok()
                    .filter(|t| t.ranks.iter().all(|i| !request.unavailable.contains(i)))
            } else {
                None
            };
            match alg1 {
                Some(t)
                    if request.solver != Solver::Exact
                        || worst_of(net, &t.ranks, &schedule, request.seed)? <= counted =>
                {
                    notes.push(format!(
                        "the BiGraph is regular with N a power of two and nothing is avoided: EFLOPS Algorithm 1 places the {x} ranks"
                    ));
                    if counted == 0 && x > 1 {
                        notes.push(format!(
                            "all {x} ranks would fit on one switch, where no flow crosses a link; Algorithm 1 spreads them over the two parts, one flow per link"
                        ));
                    }
                    (t.ranks, "algorithm-1")
                }
                _ => {
                    let found = optimise(net, &avail, &schedule, counted, request, &mut notes)?;
                    proven = found.proven;
                    (found.ranks, found.method)
                }
            }
        }
    };

    let steps = verify_schedule(net, &ranks, &schedule, request.seed)?;
    let lower_bound = counted.max(proven.unwrap_or(0));
    if let Some(f) = &fold {
        notes.push(f.note.clone());
    }
    if request.engine != Engine::Probe {
        notes.push(format!(
            "made for {}: {}",
            request.engine,
            request.engine.runs()
        ));
    }
    Ok(Outcome::from_steps(
        RankTable {
            algorithm: request.algorithm,
            ranks,
        },
        request.engine,
        method,
        steps,
        lower_bound,
        fold,
        notes,
    ))
}

/// A line naming what is avoided and what it takes away.
fn describe_avoided(net: &Network<'_>, avoid: &[Avoid], members: &[Vec<usize>]) -> String {
    let plan = net.plan();
    let dead = net
        .inter_switch_links()
        .filter(|&l| net.is_dead_link(l))
        .count();
    let switches: Vec<usize> = (0..plan.switch_list.len())
        .filter(|&s| net.is_avoided_switch(s))
        .collect();
    // On HPN a NIC on an avoided ToR keeps its other plane.
    let sub_nodes: usize = switches
        .iter()
        .map(|&s| members[s].iter().filter(|&&sn| net.cut_off(sn)).count())
        .sum();
    let mut out = format!(
        "keeping off {}: {} of {} directed inter-switch links unusable",
        avoid
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        dead,
        net.inter_switch_links().len()
    );
    if !switches.is_empty() {
        let _ = write!(
            out,
            ", {} switch{} and {sub_nodes} sub-node{} out of use",
            switches.len(),
            if switches.len() == 1 { "" } else { "es" },
            if sub_nodes == 1 { "" } else { "s" }
        );
    }
    out
}

/// Checks that every two switches with sub-nodes can still reach each
/// other (on HPN, that their NICs can, in either plane: the NICs of one
/// ToR share their other plane's ToR too); the error names the first
/// pair that cannot.
fn check_reachable(net: &Network<'_>, members: &[Vec<usize>]) -> Result<()> {
    let used: Vec<usize> = (0..members.len())
        .filter(|&s| !members[s].is_empty())
        .collect();
    for &a in &used {
        for &b in &used {
            let ok = if net.planes() > 1 {
                net.nics_reachable(members[a][0], members[b][0])
            } else {
                net.reachable(a, b)
            };
            if a != b && !ok {
                return Err(net_unroutable(net, a, b));
            }
        }
    }
    Ok(())
}

fn net_unroutable(net: &Network<'_>, a: usize, b: usize) -> Error {
    let plan = net.plan();
    Error::parameter(
        "avoid",
        format!(
            "no route from switch {} to switch {} keeps off what is avoided; avoid fewer links, or avoid one of the two switches as well so that no rank is placed on it",
            plan.switch_list[a].name, plan.switch_list[b].name
        ),
    )
}

/// The worst load of a table.
fn worst_of(net: &Network<'_>, ranks: &[usize], schedule: &Schedule, seed: u64) -> Result<usize> {
    Ok(verify_schedule(net, ranks, schedule, seed)?
        .iter()
        .map(|s| s.max_load)
        .max()
        .unwrap_or(0))
}

/// [`lower_bound`] of `schedule` on `plan` when only the sub-nodes in
/// `offered` (indexes into `plan.sub_node_list`) may carry ranks, each
/// as many as it has GPUs (a NIC shared by several GPUs carries one rank
/// per GPU).
pub fn lower_bound_offered(
    plan: &CheckedPlan,
    schedule: &Schedule,
    offered: &[usize],
) -> Result<usize> {
    let net = plan.network()?;
    let offered: std::collections::BTreeSet<usize> = offered.iter().copied().collect();
    let caps: Vec<usize> = members(plan)?
        .iter()
        .map(|m| {
            m.iter()
                .filter(|i| offered.contains(i))
                .map(|&i| plan.sub_node_list[i].gpu_count())
                .sum()
        })
        .collect();
    Ok(lower_bound(&net, schedule, &caps))
}

/// The counting lower bound on the worst load of `schedule` on `net`, with
/// `capacity[s]` sub-nodes usable on switch s (see the module
/// documentation). On a plan whose servers reduce inside
/// ([`crate::plan::Plan::intra_server_groups`]) a flow can also stay off
/// the fabric inside a server, which the count does not know: the bound
/// is 0 there.
pub fn lower_bound(net: &Network<'_>, schedule: &Schedule, capacity: &[usize]) -> usize {
    let x = schedule.ranks;
    // On a rail-optimized plan a flow stays off the inter-switch links
    // only inside one group of servers (inside a server, or on one rail
    // switch): the groups play the switches' part below.
    let groups = net
        .plan()
        .reduces_in_server()
        .then(|| group_capacity(net.plan(), capacity));
    let capacity = groups.as_deref().unwrap_or(capacity);
    let most = capacity.iter().copied().max().unwrap_or(0);
    if x <= 1 || x <= most {
        return 0;
    }
    let links = net.alive_inter_switch_links();
    if links == 0 {
        return 1;
    }
    let mut bound = 1;
    let core = schedule.fold().map_or(x, |(c, _)| c);
    let is_hd = schedule
        .steps
        .iter()
        .any(|s| matches!(s.phase, Phase::ReduceScatter) && s.distance.is_some());
    if is_hd && core >= 2 {
        let k = core.ilog2() as u64;
        let mut caps: Vec<usize> = capacity.iter().copied().filter(|&c| c > 0).collect();
        caps.sort_unstable_by(|a, b| b.cmp(a));
        // The most directed flows that can stay inside switches, over the k
        // distinct steps: sum of c log2 c with the fullest switches first.
        let mut left = core;
        let mut inside = 0.0f64;
        for &c in &caps {
            let c = c.min(left);
            if c == 0 {
                break;
            }
            inside += c as f64 * (c as f64).log2();
            left -= c;
        }
        let inside = (inside + 1e-9).floor() as u64;
        let total = k * core as u64;
        let crossing = total.saturating_sub(inside);
        let per_link = k * links as u64;
        bound = bound.max(crossing.div_ceil(per_link) as usize);
        // One step alone: pairs beyond what switches can hold two by two.
        let pairs_inside: usize = caps.iter().map(|c| c / 2).sum();
        let crossing_one = 2 * (core / 2).saturating_sub(pairs_inside);
        bound = bound.max(crossing_one.div_ceil(links));
    }
    bound
}

/// The sub-nodes that may take a rank in every group of servers of a
/// rail-optimized plan (the rail switches of one `pod`), from `capacity`
/// per switch; a switch without a group (a spine) counts alone.
fn group_capacity(plan: &crate::plan::Plan, capacity: &[usize]) -> Vec<usize> {
    let mut by_group: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    let mut alone = Vec::new();
    for (sw, &c) in plan.switch_list.iter().zip(capacity) {
        match sw.pod {
            Some(g) => *by_group.entry(g).or_insert(0) += c,
            None => alone.push(c),
        }
    }
    by_group.into_values().chain(alone).collect()
}

/// A table the optimiser found.
struct Found {
    ranks: Vec<usize>,
    method: &'static str,
    /// The exact model's optimum, when it ran: no table does better.
    proven: Option<usize>,
}

/// The heuristic, then the exact model as the request's solver says.
fn optimise(
    net: &Network<'_>,
    avail: &[Vec<usize>],
    schedule: &Schedule,
    bound: usize,
    request: &Request,
    notes: &mut Vec<String>,
) -> Result<Found> {
    let x = schedule.ranks;
    let switches = avail.iter().filter(|m| !m.is_empty()).count();
    let small = x <= EXACT_MAX_RANKS
        && switches <= EXACT_MAX_SWITCHES
        && x * switches <= EXACT_MAX_PLACEMENTS;
    if request.solver == Solver::Exact && !small {
        return Err(Error::parameter(
            "solver",
            format!(
                "the exact solver takes up to {EXACT_MAX_RANKS} ranks on up to {EXACT_MAX_SWITCHES} switches with sub-nodes, and ranks times switches up to {EXACT_MAX_PLACEMENTS}; this job has {x} ranks on {switches} switches; use the heuristic or auto solver, or fewer ranks"
            ),
        ));
    }
    let mut search = Search::new(net, avail, schedule, request.seed);
    let start = search.best_start(avail, bound)?;
    notes.push(format!("the heuristic started from {start}"));
    let heuristic = search.improve(bound)?;
    let problem = match request.solver {
        Solver::Exact => Some(ilp::Instance::new(net, avail, schedule)?),
        Solver::Auto if small && heuristic.0 as usize > bound => {
            // Where ECMP offers choices the relaxed model can take seconds
            // even at this size; Auto takes it on half the size only.
            let p = ilp::Instance::new(net, avail, schedule)?;
            (!p.has_choices() || 2 * x * switches <= EXACT_MAX_PLACEMENTS).then_some(p)
        }
        _ => None,
    };
    let Some(problem) = problem else {
        return Ok(Found {
            ranks: search.pos.clone(),
            method: "heuristic",
            proven: None,
        });
    };
    let heuristic_ranks = search.pos.clone();
    let upper = heuristic.0 as usize;
    let warm = problem
        .place_of(&heuristic_ranks)
        .map(|p| problem.canonical(&p));
    let hash_free = problem.solve(
        ilp::Kind::HashFree,
        bound,
        upper,
        warm.as_deref(),
        request.seed,
    )?;
    let size = |s: &ilp::Solved| {
        format!(
            "{} variables, {} constraints, {} ranks on {} switches in {} twin class{}",
            s.size.0,
            s.size.1,
            x,
            problem.switches(),
            problem.class_count(),
            if problem.class_count() == 1 { "" } else { "es" }
        )
    };
    let mut placements: Vec<Vec<usize>> = Vec::new();
    let proven = match &hash_free {
        Some(s) if !problem.has_choices() => {
            notes.push(format!(
                "the exact model ({}) proved a worst load of {} optimal: every two switches have one route, so it covers every table",
                size(s),
                s.optimum
            ));
            placements.push(s.place.clone());
            s.optimum
        }
        Some(s) if s.optimum <= bound => {
            notes.push(format!(
                "the exact model ({}) found a worst load of {} that no ECMP seed changes, and no table does better",
                size(s),
                s.optimum
            ));
            placements.push(s.place.clone());
            s.optimum
        }
        _ => {
            let relaxed_upper = hash_free.as_ref().map_or(upper, |s| s.optimum.min(upper));
            let start = hash_free
                .as_ref()
                .map(|s| s.place.as_slice())
                .or(warm.as_deref());
            let Some(relaxed) = problem.solve(
                ilp::Kind::Relaxed,
                bound,
                relaxed_upper,
                start,
                request.seed,
            )?
            else {
                return Err(Error::Internal(
                    "the relaxed exact model admits no placement, though the heuristic's table is one".to_string(),
                ));
            };
            let best_fixed = match &hash_free {
                Some(s) => format!(
                    "the best table whose loads no ECMP seed changes has a worst load of {}",
                    s.optimum
                ),
                None => format!(
                    "no table whose loads no ECMP seed changes reaches a worst load of {upper}"
                ),
            };
            notes.push(format!(
                "the exact model ({}): {best_fixed}; even with ECMP routing every flow where it helps most, no table does better than {}",
                size(&relaxed),
                relaxed.optimum
            ));
            if let Some(s) = &hash_free {
                placements.push(s.place.clone());
            }
            placements.push(relaxed.place.clone());
            relaxed.optimum
        }
    };
    // The model decides switches only: place each candidate's ranks on its
    // switches' sub-nodes in port order, score them exactly and polish
    // them with the local search; the best table wins, the model's on a
    // tie.
    let mut best: (Cost, Vec<usize>, &'static str) = (heuristic, heuristic_ranks, "heuristic");
    for place in &placements {
        let table = problem.table(place)?;
        search.load(&table)?;
        let cost = search.improve(bound.max(proven))?;
        if cost <= best.0 {
            best = (cost, search.pos.clone(), "ilp");
        }
    }
    if best.2 == "heuristic" {
        notes.push(
            "the heuristic's table is kept: routed for real, the tables of the exact model's placements have a higher worst load or more links at it".to_string(),
        );
    }
    Ok(Found {
        ranks: best.1,
        method: best.2,
        proven: Some(proven),
    })
}

#[cfg(test)]
mod tests;
