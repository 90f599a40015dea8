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
//! skipping avoided switches) and are only verified (`plan-order`).
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

use std::fmt::Write as _;

use serde::Serialize;

use crate::network::Avoid;
use super::ilp;
use crate::network::Network;
use super::schedule::{FoldCost, Phase, Schedule, Step};
use super::verify::{StepLoad, flow_id, verify_schedule};
use super::{Algorithm, RankTable, hdrm, members, rank_table};
use crate::algorithm::Runs;
use crate::error::{Error, Result};
use crate::plan::{Tier, Topology};
use crate::checked::CheckedPlan;

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
                Error::option(
                    "--solver",
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
        }
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
    fn of(x: usize) -> Option<Self> {
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
    let net = Network::avoiding(plan, plan.source(), &request.avoid)?;
    let mut avail = members(plan)?;
    let mut notes = Vec::new();
    if !request.avoid.is_empty() {
        notes.push(describe_avoided(&net, &request.avoid, &avail));
    }
    for (s, m) in avail.iter_mut().enumerate() {
        if net.is_avoided_switch(s) {
            m.clear();
        }
    }
    if let Some(&bad) = request
        .unavailable
        .iter()
        .find(|&&i| i >= plan.sub_node_list.len())
    {
        return Err(Error::option(
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
            Error::option(
                "--avoid",
                "every switch with sub-nodes is avoided, which leaves no sub-node for a rank; avoid fewer switches",
            )
        } else {
            Error::option(
                "unavailable",
                "every sub-node is unavailable or on an avoided switch, which leaves none for a rank",
            )
        });
    }
    let left = match (request.avoid.is_empty(), request.unavailable.is_empty()) {
        (true, true) => "of the plan",
        (false, true) => "left after --avoid",
        (_, false) => "still available",
    };
    let x = request.ranks.unwrap_or(p);
    if x == 0 {
        return Err(Error::option("--ranks", "0 ranks: use 1 or more"));
    }
    if x > p {
        return Err(Error::option(
            "--ranks",
            format!("{x} ranks do not fit on the {p} sub-nodes {left}; use at most {p}"),
        ));
    }
    let schedule = request.algorithm.schedule(x)?;
    let caps: Vec<usize> = avail.iter().map(Vec::len).collect();
    if net.avoids_anything() {
        check_reachable(&net, &caps)?;
    }
    let counted = lower_bound(&net, &schedule, &caps);
    let fold = schedule.fold().and(Fold::of(x));

    let mut proven = None;
    let (ranks, method) = match request.algorithm.info().runs {
        Runs::Anywhere | Runs::WholeSwitches => {
            let order: Vec<usize> = avail.iter().flatten().copied().take(x).collect();
            (order, "plan-order")
        }
        Runs::BiGraphMapping => {
            let alg1 = if request.avoid.is_empty() && x.is_power_of_two() {
                rank_table(plan, Algorithm::Hdrm, Some(x))
                    .ok()
                    .filter(|t| t.ranks.iter().all(|i| !request.unavailable.contains(i)))
            } else {
                None
            };
            match alg1 {
                Some(t)
                    if request.solver != Solver::Exact
                        || worst_of(&net, &t.ranks, &schedule, request.seed)? <= counted =>
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
                    let found = optimise(&net, &avail, &schedule, counted, request, &mut notes)?;
                    proven = found.proven;
                    (found.ranks, found.method)
                }
            }
        }
    };

    let steps = verify_schedule(&net, &ranks, &schedule, request.seed)?;
    let worst_load = steps.iter().map(|s| s.max_load).max().unwrap_or(0);
    let lower_bound = counted.max(proven.unwrap_or(0));
    if let Some(f) = &fold {
        notes.push(f.note.clone());
    }
    Ok(Outcome {
        table: RankTable {
            algorithm: request.algorithm,
            ranks,
        },
        method,
        steps,
        worst_load,
        lower_bound,
        optimal: worst_load == lower_bound,
        fold,
        notes,
    })
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
    let sub_nodes: usize = switches.iter().map(|&s| members[s].len()).sum();
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
/// other; the error names the first pair that cannot.
fn check_reachable(net: &Network<'_>, caps: &[usize]) -> Result<()> {
    let used: Vec<usize> = (0..caps.len()).filter(|&s| caps[s] > 0).collect();
    for &a in &used {
        for &b in &used {
            if a != b && !net.reachable(a, b) {
                return Err(net_unroutable(net, a, b));
            }
        }
    }
    Ok(())
}

fn net_unroutable(net: &Network<'_>, a: usize, b: usize) -> Error {
    let plan = net.plan();
    Error::option(
        "--avoid",
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

/// The counting lower bound on the worst load of `schedule` on `net`, with
/// `capacity[s]` sub-nodes usable on switch s (see the module
/// documentation).
pub fn lower_bound(net: &Network<'_>, schedule: &Schedule, capacity: &[usize]) -> usize {
    let x = schedule.ranks;
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
        return Err(Error::option(
            "--solver",
            format!(
                "the exact solver takes up to {EXACT_MAX_RANKS} ranks on up to {EXACT_MAX_SWITCHES} switches with sub-nodes, and ranks times switches up to {EXACT_MAX_PLACEMENTS}; this job has {x} ranks on {switches} switches; use --solver heuristic or auto, or fewer ranks"
            ),
        ));
    }
    let mut search = Search::new(net, avail, schedule, request.seed);
    let start = search.best_start(avail, bound)?;
    notes.push(format!("the heuristic started from {start}"));
    let heuristic = search.improve(bound)?;
    let problem = match request.solver {
        Solver::Exact => Some(ilp::Problem::new(net, avail, schedule)?),
        Solver::Auto if small && heuristic.0 as usize > bound => {
            // Where ECMP offers choices the relaxed model can take seconds
            // even at this size; Auto takes it on half the size only.
            let p = ilp::Problem::new(net, avail, schedule)?;
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

/// Rank of no one.
const NONE: u32 = u32::MAX;

/// The cost of a table: worst load, then links at that load summed over
/// steps.
type Cost = (u32, u64);

/// A small PRNG (SplitMix64): deterministic, seeded by the request.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) % n as u64) as usize
    }
}

/// The tabu search over rank tables, with the loads of every distinct
/// step kept up to date.
pub(super) struct Search<'a, 'n> {
    net: &'a Network<'n>,
    seed: u64,
    /// First inter-switch link id.
    base: usize,
    /// Distinct steps and how many schedule steps each stands for.
    steps: Vec<Step>,
    mult: Vec<u64>,
    /// Rank -> sub-node.
    pub(super) pos: Vec<usize>,
    /// Sub-node -> rank, `NONE` when free.
    owner: Vec<u32>,
    /// Usable sub-nodes that carry no rank; `free_at[sn]` is the index of
    /// `sn` in `free`.
    free: Vec<usize>,
    free_at: Vec<u32>,
    /// Usable sub-nodes.
    usable: Vec<bool>,
    /// Per distinct step: the load of every inter-switch link, how many
    /// links carry each load, and the largest load.
    load: Vec<Vec<u32>>,
    hist: Vec<Vec<u32>>,
    top: Vec<u32>,
    /// Per distinct step: flows above one per link, summed over links.
    excess: Vec<u64>,
    rng: Rng,
}

impl<'a, 'n> Search<'a, 'n> {
    pub(super) fn new(
        net: &'a Network<'n>,
        avail: &[Vec<usize>],
        schedule: &Schedule,
        seed: u64,
    ) -> Self {
        let mut steps: Vec<Step> = Vec::new();
        let mut mult = Vec::new();
        for s in &schedule.steps {
            match steps.iter().position(|d| d.same_flows(s)) {
                Some(i) => mult[i] += 1,
                None => {
                    steps.push(*s);
                    mult.push(1);
                }
            }
        }
        let links = net.inter_switch_links().len();
        let x = schedule.ranks;
        let subs = net.access_links().len() / 2;
        let mut usable = vec![false; subs];
        for &sn in avail.iter().flatten() {
            usable[sn] = true;
        }
        let n = steps.len();
        Self {
            net,
            seed,
            base: net.inter_switch_links().start,
            steps,
            mult,
            pos: vec![0; x],
            owner: vec![NONE; subs],
            free: Vec::new(),
            free_at: vec![NONE; subs],
            usable,
            load: vec![vec![0; links]; n],
            hist: vec![vec![0; x + 2]; n],
            top: vec![0; n],
            excess: vec![0; n],
            rng: Rng(seed ^ 0x6A09_E667_F3BC_C908),
        }
    }

    /// Sets the table and scores it from scratch.
    pub(super) fn load(&mut self, ranks: &[usize]) -> Result<Cost> {
        self.pos = ranks.to_vec();
        self.owner.fill(NONE);
        for (r, &sn) in ranks.iter().enumerate() {
            self.owner[sn] = r as u32;
        }
        self.free.clear();
        self.free_at.fill(NONE);
        for sn in 0..self.usable.len() {
            if self.usable[sn] && self.owner[sn] == NONE {
                self.free_at[sn] = self.free.len() as u32;
                self.free.push(sn);
            }
        }
        for t in 0..self.steps.len() {
            self.load[t].fill(0);
            self.hist[t].fill(0);
            self.hist[t][0] = self.load[t].len() as u32;
            self.top[t] = 0;
            self.excess[t] = 0;
            for i in 0..self.steps[t].flow_count() {
                let (s, d) = self.steps[t].flow(i);
                self.flow(t, s, d, true)?;
            }
        }
        Ok(self.cost())
    }

    /// Adds (or removes) one flow of distinct step `t`.
    fn flow(&mut self, t: usize, s: usize, d: usize, add: bool) -> Result<()> {
        let route = self
            .net
            .route(self.pos[s], self.pos[d], flow_id(s, d), self.seed)?;
        let (load, hist) = (&mut self.load[t], &mut self.hist[t]);
        for &l in route.inter_switch() {
            let l = l - self.base;
            let v = load[l] as usize;
            hist[v] -= 1;
            if add {
                load[l] += 1;
                hist[v + 1] += 1;
                if v as u32 + 1 > self.top[t] {
                    self.top[t] = v as u32 + 1;
                }
                if v >= 1 {
                    self.excess[t] += 1;
                }
            } else {
                load[l] -= 1;
                hist[v - 1] += 1;
                if v as u32 == self.top[t] && hist[v] == 0 {
                    self.top[t] -= 1;
                }
                if v >= 2 {
                    self.excess[t] -= 1;
                }
            }
        }
        Ok(())
    }

    /// The cost of the current table.
    pub(super) fn cost(&self) -> Cost {
        let w = self.top.iter().copied().max().unwrap_or(0);
        if w == 0 {
            return (0, 0);
        }
        let c = (0..self.steps.len())
            .filter(|&t| self.top[t] == w)
            .map(|t| u64::from(self.hist[t][w as usize]) * self.mult[t])
            .sum();
        (w, c)
    }

    /// Moves rank `r` to sub-node `to`; the rank there (if any) takes
    /// `r`'s sub-node. Every flow of either rank is rerouted.
    fn exchange(&mut self, r: usize, to: usize) -> Result<()> {
        let from = self.pos[r];
        let other = self.owner[to];
        let mut touched: Vec<(usize, usize, usize)> = Vec::with_capacity(4 * self.steps.len());
        let mut buf = [(0, 0); 2];
        for t in 0..self.steps.len() {
            for rank in [Some(r), (other != NONE).then_some(other as usize)]
                .into_iter()
                .flatten()
            {
                let n = self.steps[t].flows_of(rank, &mut buf);
                for &(s, d) in &buf[..n] {
                    if !touched.contains(&(t, s, d)) {
                        touched.push((t, s, d));
                    }
                }
            }
        }
        for &(t, s, d) in &touched {
            self.flow(t, s, d, false)?;
        }
        self.pos[r] = to;
        self.owner[to] = r as u32;
        if other == NONE {
            // `to` was free; `from` becomes free in its place.
            let i = self.free_at[to] as usize;
            self.free[i] = from;
            self.free_at[from] = i as u32;
            self.free_at[to] = NONE;
            self.owner[from] = NONE;
        } else {
            self.pos[other as usize] = from;
            self.owner[from] = other;
        }
        for &(t, s, d) in &touched {
            self.flow(t, s, d, true)?;
        }
        Ok(())
    }

    /// A flow of step `t` on a link at load `w`, as (src, dst) ranks.
    fn hot_flow(&mut self, t: usize, w: u32) -> Result<Option<(usize, usize)>> {
        let n = self.steps[t].flow_count();
        if n == 0 {
            return Ok(None);
        }
        let start = self.rng.below(n);
        for i in 0..n {
            let (s, d) = self.steps[t].flow((start + i) % n);
            let route = self
                .net
                .route(self.pos[s], self.pos[d], flow_id(s, d), self.seed)?;
            if route
                .inter_switch()
                .iter()
                .any(|&l| self.load[t][l - self.base] == w)
            {
                return Ok(Some((s, d)));
            }
        }
        Ok(None)
    }

    /// The cost that guides the search: the cost, then the flows above one
    /// per link summed over links and steps, so that of two tables with the
    /// same worst links the one with less overload elsewhere wins.
    fn guide(&self) -> (Cost, u64) {
        let excess = (0..self.steps.len())
            .map(|t| self.excess[t] * self.mult[t])
            .sum();
        (self.cost(), excess)
    }

    /// Tabu search from the current table until the budget is spent, or
    /// the worst load reaches `bound` and a while passes without a better
    /// table; leaves the best table found in `pos` and returns its cost.
    ///
    /// Every round takes a flow on a link at the worst load, one of its two
    /// ranks, and the best exchange of that rank with another rank or a
    /// free sub-node (all of them on small jobs, a sample on large ones,
    /// half of it on switches of the rank's own part or tier). The exchange
    /// is made even when it makes the table worse, but a rank moved in the
    /// last few rounds is not moved again unless that gives the best table
    /// so far: the search walks out of local minima and keeps the best.
    pub(super) fn improve(&mut self, bound: usize) -> Result<Cost> {
        let x = self.pos.len();
        let mut now = self.guide();
        let mut best = now.0;
        let mut best_pos = self.pos.clone();
        if best.0 == 0 || x < 2 {
            return Ok(best);
        }
        // Budgets count exchanges tried, not time, so the result is
        // reproducible: 20,000 plus 50 per rank, but no more than about 8
        // million reroutes in all; and once the worst load is at the
        // bound, 1,000 plus 2 per rank (up to 1,000 ranks) without a
        // better table, or none above 4,096 ranks, where a few thousand
        // random exchanges would barely touch the links at that load.
        let per_rank: usize = self
            .steps
            .iter()
            .map(|s| {
                let mut buf = [(0, 0); 2];
                s.flows_of(0, &mut buf).max(1)
            })
            .sum();
        let budget = (20_000 + 50 * x).min(8_000_000 / (8 * per_rank));
        let patience = if x > 4_096 {
            0
        } else {
            1_000 + 2 * x.min(1_000)
        };
        let everyone = x + self.free.len() <= 64;
        let sample = 16;
        let tenure = (x / 4).clamp(2, 8);
        let mut tabu_until = vec![0usize; x];
        let mut since_best = 0;
        let mut tried = 0;
        let mut round = 0;
        let tier = |net: &Network<'_>, sn: usize| {
            net.switch_of(sn)
                .map(|s| net.plan().switch_list[s].part_or_tier)
        };
        let mut targets: Vec<usize> = Vec::new();
        while tried < budget {
            round += 1;
            if now.0.0 == 0 || (best.0 as usize <= bound && since_best >= patience) {
                break;
            }
            let w = now.0.0;
            let worst: Vec<usize> = (0..self.steps.len())
                .filter(|&t| self.top[t] == w)
                .collect();
            let t = worst[self.rng.below(worst.len())];
            let Some((s, d)) = self.hot_flow(t, w)? else {
                break;
            };
            let r = match (tabu_until[s] > round, tabu_until[d] > round) {
                (false, true) => s,
                (true, false) => d,
                _ if self.rng.below(2) == 0 => s,
                _ => d,
            };
            let from = self.pos[r];
            targets.clear();
            if everyone {
                targets.extend(self.pos.iter().copied().filter(|&sn| sn != from));
                targets.extend(self.free.iter().copied());
            } else {
                let mine = tier(self.net, from);
                let mut guard = 0;
                while targets.len() < sample && guard < 8 * sample {
                    guard += 1;
                    let pool = x + self.free.len();
                    let i = self.rng.below(pool);
                    let sn = if i < x { self.pos[i] } else { self.free[i - x] };
                    if sn == from || targets.contains(&sn) {
                        continue;
                    }
                    // Half the sample from the rank's own part or tier.
                    if targets.len() % 2 == 0 && tier(self.net, sn) != mine {
                        continue;
                    }
                    targets.push(sn);
                }
            }
            let mut pick: Option<((Cost, u64), usize)> = None;
            for &to in &targets {
                let other = self.owner[to];
                self.exchange(r, to)?;
                let g = self.guide();
                tried += 1;
                since_best += 1;
                self.exchange(r, from)?;
                let is_tabu =
                    tabu_until[r] > round || (other != NONE && tabu_until[other as usize] > round);
                if is_tabu && g.0 >= best {
                    continue;
                }
                if pick.is_none_or(|(pg, _)| g < pg) {
                    pick = Some((g, to));
                }
            }
            let Some((g, to)) = pick else { continue };
            let other = self.owner[to];
            self.exchange(r, to)?;
            now = g;
            tabu_until[r] = round + tenure;
            if other != NONE {
                tabu_until[other as usize] = round + tenure;
            }
            if now.0 < best {
                best = now.0;
                best_pos.clone_from(&self.pos);
                since_best = 0;
            }
        }
        if self.pos != best_pos {
            self.load(&best_pos)?;
        }
        Ok(best)
    }

    /// Scores the starting tables and keeps the best; returns its name.
    pub(super) fn best_start(&mut self, avail: &[Vec<usize>], bound: usize) -> Result<String> {
        let x = self.pos.len();
        let mut starts: Vec<(String, Vec<usize>)> = Vec::new();
        let biggest = (0..avail.len())
            .max_by_key(|&s| (avail[s].len(), std::cmp::Reverse(s)))
            .unwrap_or(0);
        if x <= avail.get(biggest).map_or(0, Vec::len) {
            starts.push((
                format!(
                    "all {x} ranks on switch {}",
                    self.net.plan().switch_list[biggest].name
                ),
                avail[biggest][..x].to_vec(),
            ));
        } else {
            let (core, _) = split(x);
            for (name, table) in algorithm1_starts(self.net, avail, core) {
                starts.push((name, table));
            }
            let order: Vec<usize> = avail.iter().flatten().copied().take(core).collect();
            starts.push(("the plan order".to_string(), order));
            for (_, table) in &mut starts {
                place_extras(self.net, avail, table, x);
            }
        }
        // Score the starts in order; one at the lower bound ends the
        // scoring (the later ones are meant for fabrics where the earlier
        // ones fail).
        let mut best: Option<(Cost, usize)> = None;
        let mut loaded = usize::MAX;
        for (i, (_, table)) in starts.iter().enumerate() {
            if table.len() != x {
                continue;
            }
            let c = self.load(table)?;
            loaded = i;
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, i));
            }
            if c.0 as usize <= bound {
                break;
            }
        }
        let Some((_, i)) = best else {
            return Err(Error::Internal(format!(
                "no starting table places {x} ranks"
            )));
        };
        let (name, table) = starts.swap_remove(i);
        if loaded != i {
            self.load(&table)?;
        }
        Ok(name)
    }
}

/// P' and r for X ranks: X = P' + r with P' the largest power of two not
/// above X.
fn split(x: usize) -> (usize, usize) {
    let core = hdrm::prev_power_of_two(x);
    (core, x - core)
}

/// Algorithm 1 on a BiGraph whose parts may have lost switches or
/// sub-nodes, once per rotation of the lower part: the core ranks'
/// sub-nodes, each table with its name.
///
/// Two sizes are tried. The largest regular sub-fabric: the largest power
/// of two h of switches in each part that all have the g = P'/2h sub-nodes
/// Algorithm 1 puts on each (the healthiest and fullest switches first), so
/// that every rank has its place. And the stretched one: h the power of two
/// at or above the larger part, every usable switch in it, and the ranks
/// of a virtual switch that is missing, or beyond a switch's sub-nodes,
/// on the switches of the same part with the most room left (the local
/// search then sorts out what they collide with).
fn algorithm1_starts(
    net: &Network<'_>,
    avail: &[Vec<usize>],
    core: usize,
) -> Vec<(String, Vec<usize>)> {
    let plan = net.plan();
    if plan.topology != Topology::BiGraph || core < 2 {
        return Vec::new();
    }
    // Cables of each switch that cannot be used, to prefer healthy ones.
    let mut dead = vec![0usize; plan.switch_list.len()];
    for l in net.inter_switch_links() {
        if net.is_dead_link(l)
            && let Some((a, _)) = net.ends(l)
        {
            dead[a] += 1;
        }
    }
    let part = |tier: Tier| -> Vec<usize> {
        (0..plan.switch_list.len())
            .filter(|&s| plan.switch_list[s].part_or_tier == tier && !avail[s].is_empty())
            .collect()
    };
    let parts = [part(Tier::Upper), part(Tier::Lower)];
    let (fewest, most) = (
        parts[0].len().min(parts[1].len()),
        parts[0].len().max(parts[1].len()),
    );
    if fewest == 0 {
        return Vec::new();
    }
    let groups = |h: usize| if core <= 2 * h { 1 } else { core / (2 * h) };
    let mut sizes: Vec<(usize, [Vec<usize>; 2])> = Vec::new();
    // The largest regular sub-fabric.
    let mut h = hdrm::prev_power_of_two(fewest);
    while h >= 1 {
        let g = groups(h);
        if g > h {
            break;
        }
        let pick = |switches: &[usize]| -> Option<Vec<usize>> {
            let mut c: Vec<usize> = switches
                .iter()
                .copied()
                .filter(|&s| avail[s].len() >= g)
                .collect();
            if c.len() < h {
                return None;
            }
            c.sort_by_key(|&s| (dead[s], std::cmp::Reverse(avail[s].len()), s));
            c.truncate(h);
            c.sort_unstable();
            Some(c)
        };
        if let (Some(up), Some(lo)) = (pick(&parts[0]), pick(&parts[1])) {
            sizes.push((h, [up, lo]));
            break;
        }
        h /= 2;
    }
    // The stretched one.
    let h = most.next_power_of_two();
    if groups(h) <= h && sizes.first().is_none_or(|(fit, _)| *fit != h) {
        sizes.push((h, parts.clone()));
    }

    let mut out = Vec::new();
    for (h, chosen) in sizes {
        let g = groups(h);
        let Ok(mapping) = hdrm::algorithm1(2 * h, g, core) else {
            continue;
        };
        let rotations = if net.avoids_anything() {
            // Each rotation costs a full scoring; keep large fabrics to a
            // few.
            let work = core.saturating_mul(core.ilog2() as usize).max(1);
            h.min((1 << 22) / work).max(1)
        } else {
            1
        };
        for t in 0..rotations {
            let mut table = vec![usize::MAX; core];
            let mut used = vec![0usize; avail.len()];
            let mut overflow: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
            for (p, (vector, shift)) in [(&mapping.upper, 0), (&mapping.lower, t)]
                .into_iter()
                .enumerate()
            {
                for (k, here) in vector.iter().enumerate() {
                    let at = chosen[p].get((k + shift) % h).copied();
                    for (slot, &r) in here.iter().enumerate() {
                        match at {
                            Some(s) if slot < avail[s].len() => {
                                table[r] = avail[s][slot];
                                used[s] = used[s].max(slot + 1);
                            }
                            _ => overflow[p].push(r),
                        }
                    }
                }
            }
            let mut stuck = false;
            for (p, ranks) in overflow.iter().enumerate() {
                for &r in ranks {
                    let Some(&s) = parts[p]
                        .iter()
                        .filter(|&&s| used[s] < avail[s].len())
                        .max_by_key(|&&s| (avail[s].len() - used[s], std::cmp::Reverse(s)))
                    else {
                        stuck = true;
                        break;
                    };
                    table[r] = avail[s][used[s]];
                    used[s] += 1;
                }
            }
            if stuck || table.contains(&usize::MAX) {
                continue;
            }
            let moved = overflow[0].len() + overflow[1].len();
            let mut name = format!(
                "Algorithm 1 on {h} upper and {h} lower switches, {g} sub-node{} each",
                if g == 1 { "" } else { "s" }
            );
            if moved > 0 {
                let _ = write!(
                    name,
                    ", {moved} rank{} moved where switches or sub-nodes are missing",
                    if moved == 1 { "" } else { "s" }
                );
            }
            if t > 0 {
                let _ = write!(name, ", the lower part rotated by {t}");
            }
            out.push((name, table));
        }
    }
    out
}

/// Gives the extra ranks core..x of a fold a sub-node each: a free one on
/// the partner's switch, or else one on a switch with a usable direct link
/// to it that carries the fewest fold flows so far.
fn place_extras(net: &Network<'_>, avail: &[Vec<usize>], table: &mut Vec<usize>, x: usize) {
    let core = table.len();
    if core >= x {
        return;
    }
    let switches = avail.len();
    let mut taken = vec![false; net.access_links().len() / 2];
    for &sn in table.iter() {
        taken[sn] = true;
    }
    // Free sub-nodes per switch, in port order.
    let mut free: Vec<Vec<usize>> = avail
        .iter()
        .map(|m| m.iter().rev().copied().filter(|&sn| !taken[sn]).collect())
        .collect();
    let mut room: Vec<usize> = (0..switches).filter(|&s| !free[s].is_empty()).collect();
    let mut used: rustc_hash::FxHashMap<(usize, usize), usize> = Default::default();
    for i in 0..x - core {
        let Some(home) = net.switch_of(table[i]) else {
            return;
        };
        let s = if !free[home].is_empty() {
            home
        } else {
            room.retain(|&b| !free[b].is_empty());
            let Some(&b) = room.iter().min_by_key(|&&b| {
                let direct = net.direct_links(b, home);
                let n = used.get(&(b, home)).copied().unwrap_or(0);
                (direct == 0, n >= direct.max(1), n, b)
            }) else {
                return;
            };
            *used.entry((b, home)).or_default() += 1;
            b
        };
        if let Some(sn) = free[s].pop() {
            table.push(sn);
        }
    }
}

#[cfg(test)]
mod tests;
