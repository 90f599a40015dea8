//! Allreduce performance on a plan: closed-form models, a flow-level
//! simulator and plots.
//!
//! - [`models`]: the α-β(-γ) equations of the papers, as printed;
//! - [`schedules`]: every send of every rank, with chunk sizes and the
//!   receives it waits for;
//! - [`sim`]: the event-driven simulator (max-min fair rates, recomputed
//!   per connected component when a flow starts or ends);
//! - [`fast`]: the step-synchronous screening mode;
//! - [`plot`]: EFLOPS Fig. 12 and Fig. 16 style plots, as SVG or PNG
//!   bytes;
//! - [`params`]: the cost parameters a plan does not give, with defaults.
//!
//! # Algorithms
//!
//! | name | schedule simulated | closed form |
//! |---|---|---|
//! | `ring` | ring in plan order | MG-WFBP Table II ring |
//! | `hd` | halving-doubling in plan order, folded when the rank count is not a power of two | MG-WFBP Table II halving-doubling, per-step α and β, plus the fold |
//! | `hdrm` | halving-doubling on the EFLOPS Algorithm 1 rank table (`planner ranks`'s table when folded) | the same, every step crossing the two parts |
//! | `tree` | binary tree, reduce then broadcast, one chunk | MG-WFBP Table II binary tree with the NIC shared by two children (2β, 2γ) |
//! | `double-tree` | two mirrored binary trees, half the message each, K chunks | C-Cube eq. 3–6 (with γ), K at its whole-number optimum |
//! | `overlapped-tree` | one binary tree, broadcast of chunk c as soon as it is reduced | C-Cube's overlapped step count `2 log P + K` with the NIC carrying three chunks a step |
//! | `blueconnect` | reduce-scatter per level (switch, pod, fabric), recursive for powers of two and ring otherwise, then all-gather back | BlueConnect eq. 6–7 |
//! | `2d` | 2D-torus: ring reduce-scatter under each switch, ring allreduce across switches, ring all-gather | BlueConnect eq. 6 with `T_r` at both levels |
//! | `hitopk` | HiTopKComm Algorithm 2 with nodes = switches | HiTopKComm eq. 7–10 |
//!
//! Every algorithm is simulated at flow level: each has a send-level
//! schedule. The tree schedules are the ones NCCL and C-Cube describe,
//! not measured traces; HiTopKComm's message sizes assume every index is
//! distinct, as its eq. 10 does. `hdrm` at a power-of-two rank count
//! needs a regular BiGraph; the hierarchical algorithms (`blueconnect`,
//! `2d`, `hitopk`) need the same number of ranks under every switch, and
//! `blueconnect` uses a ring at a level whose groups are not a power of
//! two.
//!
//! # Rank counts that are not a power of two
//!
//! `hd` and `hdrm` over X ranks, P' the largest power of two below X, fold
//! as Rabenseifner's algorithm does and as `planner ranks` lays them out
//! ([`crate::ranks::folded_halving_doubling`]): extra rank P' + i sends its
//! whole buffer to core rank i, which reduces it, the P' core ranks run
//! halving-doubling, and core rank i sends the result back. The rank table
//! is the one [`ranks::plan_ranks`] gives for X with its defaults (plan
//! order for `hd`; Algorithm 1 widened by its heuristic for `hdrm`), so a
//! simulation and `planner ranks PLAN --ranks X` describe the same job.
//! The closed form is halving-doubling over P' plus `2(α + nβ) + nγ`
//! ([`models::fold`], the standard analysis of Thakur, Rabenseifner and
//! Gropp), with α and β of the slowest fold pair; the send schedule has a
//! `fold` step first and an `unfold` step last, which `--steps` lists. The EFLOPS server has
//! no path between GPUs but the NICs, so "intra-node" of the hierarchical
//! papers is "under one switch" here, at the NIC's speed.
//!
//! # Trees on one NIC per rank
//!
//! The tree papers give every tree edge its own channel (C-Cube's DGX-1);
//! here each rank has one NIC, so the closed forms charge what goes through
//! it in a step: a binary tree's inner rank receives from, and sends to,
//! two children (MG-WFBP's row with 2β and 2γ); in a double tree a rank is
//! an inner node of one tree and a leaf of the other, so it moves two
//! half-size chunks each way per step, which is C-Cube eq. 3–6 with the
//! NIC's β; the overlapped tree sends a chunk up and two down at once (3β
//! per step, and 2γ for the two children it reduces). The chunk count K
//! is the whole number that minimises the step-count form of each
//! ([`models::pipeline`]), and the simulated schedule uses the same K.
//! HiTopKComm's eq. 9 counts 4 bytes per selected element; the simulated
//! schedule sends the value and its index, 8 bytes.
//!
//! # Parameters from the plan
//!
//! A link's speed is the smaller of its two ends (`nic_gbps` and the
//! switch's `port_gbps` for an access link, the two `port_gbps` between
//! switches), unless `link_gbps` overrides it. A message's latency is
//! `nic_us + alpha_us × (switches on its route)`: 1 under one switch, 2
//! between the parts of a BiGraph, 3 within a part or across a 2-tier
//! fat-tree, 5 across the pods of a 3-tier one. The closed forms take, for
//! each step, the longest route among the pairs the algorithm uses there,
//! and β from the slowest link; where every rank under a switch sends out
//! at once (halving-doubling's long distances, the upper levels of the
//! hierarchical algorithms) β comes from the switch's uplink bandwidth
//! shared by its ranks (`w_i / p_i` of BlueConnect), when that is lower.
//!
//! # When the modes agree
//!
//! With no directed link shared by two flows of a step, and every flow of
//! a step on a route of the same length (or a ring, whose steps are all
//! alike), the event-driven, step-synchronous and closed-form times are the
//! same (to rounding): ring, `hd` and `hdrm` build on the same α + βb terms
//! in all three. The tests check it for ring, HD and HDRM on BiGraphs and
//! for ring on a fat-tree. A folded `hd` or `hdrm` adds one condition for
//! the event-driven mode: the core ranks without an extra partner start
//! halving-doubling at once, and when their sends to a partner arrive
//! while the partner's NIC still receives the fold (bandwidth-bound sizes)
//! the two share that link and the event-driven time comes out a little
//! above the other two (up to 3% for HDRM on the 4x16 BiGraph); at
//! latency-bound sizes the three agree, and the step-synchronous mode and
//! the closed form always do when no link of a step is shared. See [`fast`] for when the step-synchronous mode
//! is exact otherwise, and [`sim`] for how the event-driven mode shares
//! links.
//!
//! # Performance
//!
//! Release build on a shared two-core machine (load 5), one thread per
//! simulation: a ring over 1,024 ranks at 256 MiB (2,046 steps × 1,024
//! flows, 2,095,104 sends) takes 0.16 to 0.22 s step-synchronous and 0.5
//! to 0.7 s event-driven; the EFLOPS Fig. 16 sweep (ring, HD and HDRM on
//! BiGraph and fat-tree, 64 to 1,024 nodes, 256 KiB and 256 MiB, HDRM on
//! the BiGraphs only: 50 simulations) takes 3.1 s event-driven on two
//! threads. The `timing_*` tests, ignored by default, measure these. The
//! pipelined trees are the slow case: at 1,024 ranks and 256 MiB the
//! overlapped tree has 410 chunks and 838,860 sends whose flows share
//! every NIC, so most events water-fill a component of hundreds of flows
//! (2.6 s on a fat-tree, 4.9 s on a BiGraph, against 0.09 s
//! step-synchronous).

pub mod fast;
pub mod models;
pub mod params;
#[cfg(feature = "plot")]
pub mod plot;
pub mod schedules;
pub mod sim;

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use serde::{Serialize, Serializer};

use crate::checked::CheckedPlan;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::error::{Error, Problem, Result};
use crate::plan::{Tier, Topology};
use crate::ranks::routing::Network;
use crate::ranks::verify::flow_id;
use crate::ranks::{self, Link};

pub use fast::StepSummary;
pub use params::{PARAMS, ParamDoc, Params};
pub use schedules::{SendSchedule, StepInfo, StepPhase};

use schedules::{Kind, NONE};
use sim::{FlowRoute, Routes};

/// An allreduce algorithm the estimates know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Ring in plan order.
    Ring,
    /// Halving-doubling in plan order.
    Hd,
    /// Halving-doubling on the EFLOPS Algorithm 1 rank table.
    Hdrm,
    /// Binary tree, reduce then broadcast.
    Tree,
    /// NCCL's double binary tree, pipelined.
    DoubleTree,
    /// The C-Cube overlapped tree.
    OverlappedTree,
    /// The BlueConnect topology-aware decomposition.
    BlueConnect,
    /// The 2D-torus (hierarchical) allreduce.
    TwoD,
    /// HiTopKComm, sparsified with density ρ.
    HiTopK,
}

impl Algorithm {
    /// Every algorithm, in the order of the module documentation.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::Ring,
        Algorithm::Hd,
        Algorithm::Hdrm,
        Algorithm::Tree,
        Algorithm::DoubleTree,
        Algorithm::OverlappedTree,
        Algorithm::BlueConnect,
        Algorithm::TwoD,
        Algorithm::HiTopK,
    ];

    /// The three algorithms of EFLOPS Fig. 12 and 16.
    pub const EFLOPS: [Algorithm; 3] = [Algorithm::Ring, Algorithm::Hd, Algorithm::Hdrm];

    /// The name on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Hd => "hd",
            Algorithm::Hdrm => "hdrm",
            Algorithm::Tree => "tree",
            Algorithm::DoubleTree => "double-tree",
            Algorithm::OverlappedTree => "overlapped-tree",
            Algorithm::BlueConnect => "blueconnect",
            Algorithm::TwoD => "2d",
            Algorithm::HiTopK => "hitopk",
        }
    }

    /// True when the algorithm can run on a plan of this topology (HDRM's
    /// rank mapping needs a BiGraph).
    pub fn runs_on(self, topology: Topology) -> bool {
        self != Algorithm::Hdrm || topology == Topology::BiGraph
    }

    /// Parses a comma-separated list (`ring,hd,hdrm`, or `all`).
    pub fn parse_list(text: &str) -> Result<Vec<Algorithm>> {
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item.eq_ignore_ascii_case("all") {
                out.extend(Algorithm::ALL);
            } else {
                out.push(item.parse()?);
            }
        }
        if out.is_empty() {
            return Err(Error::option(
                "--algorithm",
                "no algorithm given; write e.g. ring,hd,hdrm or all",
            ));
        }
        let mut seen = Vec::new();
        out.retain(|a| {
            let new = !seen.contains(a);
            seen.push(*a);
            new
        });
        Ok(out)
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.as_str()).collect();
                Error::option(
                    "--algorithm",
                    format!("`{s}` is not an algorithm; use {}", names.join(", ")),
                )
            })
    }
}

impl Serialize for Algorithm {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How the time is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// The closed-form model only.
    ClosedForm,
    /// The event-driven flow-level simulator.
    Event,
    /// The step-synchronous mode.
    Fast,
}

impl Method {
    /// `closed-form`, `event` or `fast`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::ClosedForm => "closed-form",
            Method::Event => "event",
            Method::Fast => "fast",
        }
    }
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        [Method::ClosedForm, Method::Event, Method::Fast]
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::option(
                    "--method",
                    format!("`{s}` is not a method; use closed-form, event or fast"),
                )
            })
    }
}

impl Serialize for Method {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// How to estimate: the method, the ECMP seeds and, for sweeps, the
/// threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Closed form, event-driven or step-synchronous.
    pub method: Method,
    /// ECMP hash seeds (as `verify-ranks --seed`); the time is the median
    /// over them, with the minimum and maximum beside it.
    pub seeds: Vec<u64>,
    /// Worker threads for sweeps; 0 takes the machine's parallelism. The
    /// results do not depend on it.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            method: Method::Event,
            seeds: vec![0],
            threads: 0,
        }
    }
}

impl Options {
    /// Options with seeds `0..count`.
    pub fn with_seed_count(method: Method, count: usize) -> Self {
        Self {
            method,
            seeds: (0..count.max(1) as u64).collect(),
            threads: 0,
        }
    }
}

/// The JSON contract of `planner simulate --format json`: one row per
/// algorithm, topology, rank count and size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `ring`, `hd`, `hdrm`, `tree`, `double-tree`, `overlapped-tree`,
    /// `blueconnect`, `2d` or `hitopk`.
    pub algorithm: Algorithm,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// Ranks taking part.
    pub ranks: usize,
    /// Message size in bytes.
    pub size_bytes: u64,
    /// Allreduce time, µs.
    pub time_us: f64,
    /// Algorithm bandwidth: size / time, Gbps.
    pub algbw_gbps: f64,
    /// Bus bandwidth: algbw × 2(P - 1)/P, Gbps (as NCCL's tests report).
    pub busbw_gbps: f64,
}

/// What the simulated schedule looked like.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScheduleStats {
    /// Steps of the schedule.
    pub steps: usize,
    /// Sends of all ranks.
    pub sends: usize,
    /// Bytes rank 0 sends.
    pub bytes_per_rank: u64,
    /// Most flows on one directed link at once (worst seed).
    pub max_link_flows: usize,
}

/// One estimate, with everything behind its [`Row`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The plan's name.
    pub plan: String,
    /// The design in words (`BiGraph 4x16`).
    pub design: String,
    /// Ranks taking part.
    pub ranks: usize,
    /// Message size in bytes.
    pub size_bytes: u64,
    /// How the time was obtained.
    pub method: Method,
    /// The time, µs: the median over the seeds for a simulation.
    pub time_us: f64,
    /// The fastest seed, µs.
    pub time_min_us: f64,
    /// The slowest seed, µs.
    pub time_max_us: f64,
    /// Seeds simulated (1 for the closed form).
    pub seeds: usize,
    /// The closed-form time, µs, for comparison.
    pub closed_form_us: f64,
    /// Algorithm bandwidth at `time_us`, Gbps.
    pub algbw_gbps: f64,
    /// Bus bandwidth at `time_us`, Gbps.
    pub busbw_gbps: f64,
    /// Chunks per tree of a pipelined tree (1 otherwise).
    pub chunks: usize,
    /// The simulated schedule (absent for the closed form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleStats>,
}

impl Estimate {
    /// The JSON-contract row.
    pub fn row(&self) -> Row {
        Row {
            algorithm: self.algorithm,
            topology: self.topology,
            ranks: self.ranks,
            size_bytes: self.size_bytes,
            time_us: self.time_us,
            algbw_gbps: self.algbw_gbps,
            busbw_gbps: self.busbw_gbps,
        }
    }
}

/// The rows of `estimates` as CSV, with the columns of the JSON contract
/// and a header line (RFC 4180, [`crate::text::write_csv`]).
pub fn csv(estimates: &[Estimate]) -> String {
    let header = [
        "algorithm",
        "topology",
        "ranks",
        "size_bytes",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
    ]
    .map(String::from);
    let rows = estimates.iter().map(|e| {
        [
            e.algorithm.as_str().to_string(),
            e.topology.as_str().to_string(),
            e.ranks.to_string(),
            e.size_bytes.to_string(),
            e.time_us.to_string(),
            e.algbw_gbps.to_string(),
            e.busbw_gbps.to_string(),
        ]
    });
    crate::text::write_csv(std::iter::once(header).chain(rows))
}

/// Algorithm and bus bandwidth in Gbps of `size` bytes in `time_us` over
/// `ranks` ranks (0 when the time is 0).
pub fn bandwidths(size: u64, time_us: f64, ranks: usize) -> (f64, f64) {
    if time_us <= 0.0 {
        return (0.0, 0.0);
    }
    let algbw = size as f64 * 8.0 / (time_us * 1000.0);
    let p = ranks.max(1) as f64;
    (algbw, algbw * 2.0 * (p - 1.0) / p)
}

/// The rank table the estimates use: `planner ranks`'s for halving-doubling
/// over a rank count that is not a power of two (the table
/// [`ranks::plan_ranks`] chooses for the folded schedule, with its default
/// solver and seed), otherwise [`ranks::rank_table`] (Algorithm 1 for
/// HDRM, plan order for the others, which is what `planner ranks` gives
/// there too). HDRM off a BiGraph keeps `rank_table`'s refusal.
fn rank_order(
    plan: &CheckedPlan,
    order: ranks::Algorithm,
    count: Option<usize>,
) -> Result<Vec<usize>> {
    let x = count.unwrap_or(plan.sub_node_list.len());
    let folds = x > 0 && !x.is_power_of_two();
    let maps = match order {
        ranks::Algorithm::Hd => true,
        ranks::Algorithm::Hdrm => plan.topology == Topology::BiGraph,
        ranks::Algorithm::Ring => false,
    };
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

/// The levels of a hierarchical decomposition.
#[derive(Debug, Clone)]
struct Levels {
    groups: Vec<Vec<Vec<u32>>>,
    alpha: Vec<f64>,
    w: Vec<f64>,
}

/// A plan, an algorithm and its rank table, ready for any message size.
#[derive(Debug)]
struct Context<'a> {
    plan: &'a CheckedPlan,
    algorithm: Algorithm,
    params: Params,
    net: Network<'a>,
    /// Rank -> sub-node.
    table: Vec<usize>,
    /// Capacity of every directed link, bytes/µs.
    caps: Vec<f64>,
    /// Switch of every rank.
    switch: Vec<u32>,
    /// Slowest link a flow of these ranks can take, bytes/µs.
    w: f64,
    /// Uplink bandwidth per rank of the most loaded switch, bytes/µs.
    share: f64,
    three_tier: bool,
}

impl<'a> Context<'a> {
    fn new(
        plan: &'a CheckedPlan,
        algorithm: Algorithm,
        ranks: Option<usize>,
        params: &Params,
    ) -> Result<Self> {
        let order = match algorithm {
            Algorithm::Hdrm => ranks::Algorithm::Hdrm,
            Algorithm::Hd => ranks::Algorithm::Hd,
            _ => ranks::Algorithm::Ring,
        };
        let table = rank_order(plan, order, ranks)?;
        let net = Network::new(plan)?;
        let mut problems = Vec::new();
        let mut caps = Vec::with_capacity(net.link_count());
        for id in 0..net.link_count() {
            let gbps = match net.link(id) {
                Some(Link::Up { sub_node } | Link::Down { sub_node }) => {
                    let sn = &plan.sub_node_list[sub_node];
                    let port = net
                        .switch_of(sub_node)
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
                    "set the NIC's speed_gbps and the switch's port_gbps, or give --param link_gbps=100",
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
        let share = if spans {
            (0..plan.switch_list.len())
                .filter(|&s| on_switch[s] > 0)
                .map(|s| uplink[s] / on_switch[s] as f64)
                .fold(f64::INFINITY, f64::min)
        } else {
            f64::INFINITY
        };
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
            w,
            share,
            three_tier,
        })
    }

    fn ranks(&self) -> usize {
        self.table.len()
    }

    /// Switches on the route between two switches of the plan.
    fn switches_between(&self, a: u32, b: u32) -> usize {
        if a == b {
            return 1;
        }
        let (sa, sb) = (
            &self.plan.switch_list[a as usize],
            &self.plan.switch_list[b as usize],
        );
        match self.plan.topology {
            Topology::BiGraph if sa.part_or_tier != sb.part_or_tier => 2,
            Topology::BiGraph => 3,
            Topology::FatTree if self.three_tier && sa.pod != sb.pod => 5,
            Topology::FatTree => 3,
        }
    }

    /// The latency of the longest route among rank pairs.
    fn alpha_of(&self, pairs: impl Iterator<Item = (usize, usize)>) -> f64 {
        let worst = pairs
            .map(|(a, b)| self.switches_between(self.switch[a], self.switch[b]))
            .max()
            .unwrap_or(1);
        self.params.latency_us(worst)
    }

    fn beta0(&self) -> f64 {
        1.0 / self.w
    }

    fn beta1(&self) -> f64 {
        1.0 / self.w.min(self.share)
    }

    /// Tree edges `(child, parent)` of the given parent arrays.
    fn tree_alpha(&self, trees: &[Vec<u32>]) -> f64 {
        self.alpha_of(trees.iter().flat_map(|t| {
            t.iter()
                .enumerate()
                .filter(|&(_, &up)| up != NONE)
                .map(|(r, &up)| (r, up as usize))
        }))
    }

    /// The levels of a topology-aware decomposition: ranks under one
    /// switch, then (3-tier fat-trees, `deep`) the same position under the
    /// switches of one pod, then across pods; otherwise the same position
    /// under every switch.
    fn levels(&self, deep: bool) -> Result<Levels> {
        let p = self.ranks();
        // Switch groups, in rank order.
        let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut seen = vec![usize::MAX; self.plan.switch_list.len()];
        for r in 0..p {
            let s = self.switch[r];
            match seen[s as usize] {
                usize::MAX => {
                    seen[s as usize] = groups.len();
                    groups.push((s, vec![r as u32]));
                }
                g => groups[g].1.push(r as u32),
            }
        }
        let sizes = groups.iter().map(|g| g.1.len());
        let (lo, hi) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
        if lo != hi {
            return Err(self.irregular(format!(
                "the {p} ranks sit {lo} to {hi} under a switch, and the decomposition needs the same number under every switch"
            ), hi));
        }
        let p0 = hi;
        let mut out = Levels {
            groups: vec![groups.iter().map(|g| g.1.clone()).collect()],
            alpha: vec![self.params.latency_us(1)],
            w: vec![self.w],
        };
        let upper_w = self.w.min(self.share);
        let pods: Vec<Vec<usize>> = if deep && self.three_tier {
            let mut pods: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
            for (k, (s, _)) in groups.iter().enumerate() {
                let pod = self.plan.switch_list[*s as usize].pod;
                match pods.iter_mut().find(|(q, _)| *q == pod) {
                    Some((_, members)) => members.push(k),
                    None => pods.push((pod, vec![k])),
                }
            }
            pods.into_iter().map(|(_, m)| m).collect()
        } else {
            vec![(0..groups.len()).collect()]
        };
        let per_pod = pods[0].len();
        if pods.iter().any(|m| m.len() != per_pod) {
            return Err(self.irregular(
                "the ranks' switches are spread unevenly over the pods, and the decomposition needs the same number in every pod".to_string(),
                p0,
            ));
        }
        // Same position under the switches of a pod.
        let mut level1 = Vec::new();
        for members in &pods {
            for j in 0..p0 {
                level1.push(
                    members
                        .iter()
                        .map(|&k| groups[k].1[j])
                        .collect::<Vec<u32>>(),
                );
            }
        }
        let alpha1 = self.group_alpha(&level1);
        out.groups.push(level1);
        out.alpha.push(alpha1);
        out.w.push(upper_w);
        if pods.len() > 1 {
            let mut level2 = Vec::new();
            for q in 0..per_pod {
                for j in 0..p0 {
                    level2.push(pods.iter().map(|m| groups[m[q]].1[j]).collect::<Vec<u32>>());
                }
            }
            let alpha2 = self.group_alpha(&level2);
            out.groups.push(level2);
            out.alpha.push(alpha2);
            out.w.push(upper_w);
        }
        Ok(out)
    }

    /// The latency of the longest route within any group.
    fn group_alpha(&self, groups: &[Vec<u32>]) -> f64 {
        self.alpha_of(groups.iter().flat_map(|g| {
            let first = g[0] as usize;
            g.iter().map(move |&r| (first, r as usize))
        }))
    }

    fn irregular(&self, reason: String, p0: usize) -> Error {
        Error::Infeasible {
            input: self.plan.source().to_string(),
            topology: format!("{} decomposition", self.algorithm.as_str()),
            reason,
            fix: format!(
                "give a rank count that fills whole switches (a multiple of {})",
                p0.max(1)
            ),
        }
    }

    /// The closed-form time of `n` bytes and the chunk count of a
    /// pipelined tree.
    fn closed_form(&self, n: u64) -> Result<(f64, usize)> {
        let p = self.ranks();
        if p <= 1 {
            return Ok((0.0, 1));
        }
        let nf = n as f64;
        let g = self.params.gamma_us();
        let (b0, b1) = (self.beta0(), self.beta1());
        let max_chunks = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        Ok(match self.algorithm {
            Algorithm::Ring => {
                let a = self.alpha_of((0..p).map(|r| (r, (r + 1) % p)));
                (models::ring(p, nf, a, b0, g), 1)
            }
            Algorithm::Hd | Algorithm::Hdrm => {
                // Halving-doubling over the P' core ranks, plus the fold
                // and unfold of the X - P' extra ranks when X is not a
                // power of two (ranks::folded_halving_doubling's pairing).
                let core = 1usize << p.ilog2();
                // β of the switch's shared uplinks unless every pair is
                // under one switch (or HDRM, whose steps load each link
                // once).
                let beta_of = |pairs: &[(usize, usize)]| {
                    let inside = pairs.iter().all(|&(a, b)| self.switch[a] == self.switch[b]);
                    if inside || self.algorithm == Algorithm::Hdrm {
                        b0
                    } else {
                        b1
                    }
                };
                let steps: Vec<(f64, f64)> = (0..core.ilog2())
                    .map(|s| {
                        let d = 1usize << s;
                        let pairs: Vec<(usize, usize)> = (0..core).map(|r| (r, r ^ d)).collect();
                        (self.alpha_of(pairs.iter().copied()), beta_of(&pairs))
                    })
                    .collect();
                let mut t = models::halving_doubling_steps(core, nf, &steps, g);
                if core < p {
                    let pairs: Vec<(usize, usize)> = (core..p).map(|r| (r, r - core)).collect();
                    let (a, b) = (self.alpha_of(pairs.iter().copied()), beta_of(&pairs));
                    t += models::fold(nf, a, b, g);
                }
                (t, 1)
            }
            Algorithm::Tree => {
                let a = self.tree_alpha(&[schedules::btree(p)]);
                (models::binary_tree(p, nf, a, 2.0 * b0, 2.0 * g), 1)
            }
            Algorithm::DoubleTree => {
                let trees = [schedules::btree(p), schedules::mirror_tree(p)];
                let a = self.tree_alpha(&trees);
                let h = f64::from(schedules::shape(&trees[0])?.height[0]);
                let best = models::pipeline(h, 2.0 * a, (2.0 * b0 + g) * nf, max_chunks);
                (best.time_us, best.chunks)
            }
            Algorithm::OverlappedTree => {
                let tree = schedules::btree(p);
                let a = self.tree_alpha(std::slice::from_ref(&tree));
                let h = f64::from(schedules::shape(&tree)?.height[0]);
                let best = models::pipeline(2.0 * h, a, (3.0 * b0 + 2.0 * g) * nf, max_chunks);
                (best.time_us, best.chunks)
            }
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                let levels = self.levels(!ring_only)?;
                let lv: Vec<models::Level> = (0..levels.groups.len())
                    .map(|i| models::Level {
                        p: levels.groups[i][0].len(),
                        alpha: levels.alpha[i],
                        w: levels.w[i],
                    })
                    .collect();
                (models::blueconnect(&lv, nf, g, ring_only), 1)
            }
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                let gpus = levels.groups[0][0].len();
                let nodes = levels.groups[1][0].len();
                let t2 = self.params.topk_us() * nf / gpus as f64;
                let t = models::hitopk(
                    nodes,
                    gpus,
                    nf / 4.0,
                    self.params.density,
                    (levels.alpha[0], 1.0 / levels.w[0]),
                    (levels.alpha[1], 1.0 / levels.w[1]),
                    t2,
                );
                (t, 1)
            }
        })
    }

    /// The send-level schedule of `n` bytes.
    fn schedule(&self, n: u64, chunks: usize) -> Result<SendSchedule> {
        let p = self.ranks();
        let g = self.params.gamma_us();
        match self.algorithm {
            Algorithm::Ring => schedules::ring(p, n, g),
            Algorithm::Hd | Algorithm::Hdrm => schedules::folded_halving_doubling(p, n, g),
            Algorithm::Tree => schedules::trees(p, vec![schedules::btree(p)], n, 1, false, g),
            Algorithm::DoubleTree => schedules::trees(
                p,
                vec![schedules::btree(p), schedules::mirror_tree(p)],
                n,
                chunks,
                false,
                g,
            ),
            Algorithm::OverlappedTree => {
                schedules::trees(p, vec![schedules::btree(p)], n, chunks, true, g)
            }
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                let levels = self.levels(!ring_only)?;
                let with_kind: Vec<(Vec<Vec<u32>>, Kind)> = levels
                    .groups
                    .into_iter()
                    .map(|groups| {
                        let size = groups[0].len();
                        let kind = if !ring_only && size.is_power_of_two() {
                            Kind::HalvingDoubling
                        } else {
                            Kind::Ring
                        };
                        (groups, kind)
                    })
                    .collect();
                schedules::hierarchical(p, &with_kind, n, g, true)
            }
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                schedules::hitopk(
                    p,
                    &levels.groups[0],
                    &levels.groups[1],
                    n,
                    self.params.density,
                    g,
                    self.params.topk_us(),
                )
            }
        }
    }

    /// Estimates `n` bytes.
    fn estimate(&self, n: u64, options: &Options) -> Result<Estimate> {
        check_size(n)?;
        let (closed, chunks) = self.closed_form(n)?;
        let p = self.ranks();
        let mut est = Estimate {
            algorithm: self.algorithm,
            topology: self.plan.topology,
            plan: self.plan.name.clone(),
            design: self.plan.describe(),
            ranks: p,
            size_bytes: n,
            method: options.method,
            time_us: closed,
            time_min_us: closed,
            time_max_us: closed,
            seeds: 1,
            closed_form_us: closed,
            algbw_gbps: 0.0,
            busbw_gbps: 0.0,
            chunks,
            schedule: None,
        };
        if options.method != Method::ClosedForm {
            let seeds = if options.seeds.is_empty() {
                vec![0]
            } else {
                options.seeds.clone()
            };
            let sched = self.schedule(n, chunks)?;
            let mut times = Vec::with_capacity(seeds.len());
            let mut max_link_flows = 0;
            let mut previous: Option<(PlanRoutes<'_>, f64)> = None;
            for &seed in &seeds {
                let mut routes = PlanRoutes::new(self, &sched, seed);
                // A seed that routes every pair the same way as the last
                // one gives the same time.
                if let Some((last, t)) = &previous
                    && last.same_routes(&mut routes)?
                {
                    times.push(*t);
                    continue;
                }
                let (t, flows) = match options.method {
                    Method::Fast => {
                        let o = fast::run(&sched, &self.caps, &mut routes, false)?;
                        (o.time_us, o.max_link_flows)
                    }
                    _ => {
                        let o = sim::run(&sched, &self.caps, &mut routes)?;
                        (o.time_us, o.max_link_flows)
                    }
                };
                max_link_flows = max_link_flows.max(flows);
                times.push(t);
                previous = Some((routes, t));
            }
            times.sort_by(f64::total_cmp);
            let k = times.len();
            est.time_us = if k % 2 == 1 {
                times[k / 2]
            } else {
                (times[k / 2 - 1] + times[k / 2]) / 2.0
            };
            est.time_min_us = times[0];
            est.time_max_us = times[k - 1];
            est.seeds = k;
            est.schedule = Some(ScheduleStats {
                steps: sched.steps().len(),
                sends: sched.len(),
                bytes_per_rank: sched.bytes_sent_by(0),
                max_link_flows,
            });
        }
        let (algbw, busbw) = bandwidths(n, est.time_us, p);
        est.algbw_gbps = algbw;
        est.busbw_gbps = busbw;
        Ok(est)
    }
}

/// Routes of a schedule's sends on the plan, cached per source rank (a
/// rank talks to a handful of peers).
#[derive(Debug)]
struct PlanRoutes<'c> {
    ctx: &'c Context<'c>,
    sched: &'c SendSchedule,
    seed: u64,
    cache: Vec<Vec<(u32, FlowRoute)>>,
}

impl<'c> PlanRoutes<'c> {
    fn new(ctx: &'c Context<'c>, sched: &'c SendSchedule, seed: u64) -> Self {
        Self {
            ctx,
            sched,
            seed,
            cache: vec![Vec::new(); sched.ranks()],
        }
    }

    fn compute(&self, s: usize, d: usize) -> Result<FlowRoute> {
        let t = &self.ctx.table;
        let r = self.ctx.net.route(t[s], t[d], flow_id(s, d), self.seed)?;
        let mut out = FlowRoute {
            latency: self.ctx.params.latency_us(r.switches()),
            ..FlowRoute::default()
        };
        for (k, &l) in r.links().iter().enumerate() {
            out.links[k] = l as u32;
        }
        out.len = r.links().len() as u8;
        Ok(out)
    }

    /// True when `other` (another seed) routes every pair this one routed
    /// the same way.
    fn same_routes(&self, other: &mut PlanRoutes<'_>) -> Result<bool> {
        for (s, list) in self.cache.iter().enumerate() {
            for &(d, route) in list {
                let theirs = other.compute(s, d as usize)?;
                if theirs != route {
                    return Ok(false);
                }
                other.cache[s].push((d, theirs));
            }
        }
        Ok(true)
    }
}

impl Routes for PlanRoutes<'_> {
    fn route(&mut self, i: usize) -> Result<FlowRoute> {
        let (s, d) = (self.sched.src[i] as usize, self.sched.dst[i]);
        if let Some(&(_, r)) = self.cache[s].iter().find(|(x, _)| *x == d) {
            return Ok(r);
        }
        let r = self.compute(s, d as usize)?;
        self.cache[s].push((d, r));
        Ok(r)
    }
}

fn check_size(n: u64) -> Result<()> {
    if n == 0 {
        Err(Error::option(
            "--size",
            "0 bytes: give a message size of 1 byte or more",
        ))
    } else {
        Ok(())
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

/// The schedule behind an estimate, step by step as the step-synchronous
/// mode sees it with ECMP seed `seed`: phase, flows, bytes, the most flows
/// on one link and the step's time.
pub fn steps(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    seed: u64,
) -> Result<Vec<StepSummary>> {
    check_size(size_bytes)?;
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    let (_, chunks) = ctx.closed_form(size_bytes)?;
    let sched = ctx.schedule(size_bytes, chunks)?;
    let mut routes = PlanRoutes::new(&ctx, &sched, seed);
    Ok(fast::run(&sched, &ctx.caps, &mut routes, true)?.steps)
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
    check_size(size_bytes)?;
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    let (_, chunks) = ctx.closed_form(size_bytes)?;
    ctx.schedule(size_bytes, chunks)
}

/// One unit of sweep work.
struct Job<'c> {
    ctx: &'c Context<'c>,
    size: u64,
}

/// Runs jobs on `threads` workers, reporting each finished job to
/// `progress` on the calling thread; results come back in job order.
fn run_jobs(
    jobs: &[Job<'_>],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Estimate>> {
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
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(usize, Result<Estimate>)>();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
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
    for &s in sizes {
        check_size(s)?;
    }
    let contexts = algorithms
        .iter()
        .map(|&a| Context::new(plan, a, ranks, params))
        .collect::<Result<Vec<_>>>()?;
    let jobs: Vec<Job<'_>> = contexts
        .iter()
        .flat_map(|ctx| sizes.iter().map(move |&size| Job { ctx, size }))
        .collect();
    run_jobs(&jobs, options, progress)
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

/// The M x N BiGraph for `nodes` sub-nodes: N the smallest power of two
/// with `nodes` a multiple of N and M = nodes / N <= N / 2 (4 x 16 for 64,
/// 16 x 64 for 1,024).
pub fn bigraph_shape(nodes: usize) -> Result<(usize, usize)> {
    let mut n = 2usize;
    while n <= 1 << 24 {
        if nodes.is_multiple_of(n) && nodes / n <= n / 2 && nodes / n >= 1 {
            return Ok((nodes / n, n));
        }
        n *= 2;
    }
    Err(Error::option(
        "--scale",
        format!(
            "{nodes} sub-nodes: no M x N BiGraph with N a power of two fits; use a multiple of a power of two, such as 64 or 1024"
        ),
    ))
}

/// The plans of a scale sweep: for every node count, one plan per
/// topology of `spec`, built with the command-line shorthands.
pub fn scale_plans(nodes: &[usize], spec: &ScaleSpec) -> Result<Vec<CheckedPlan>> {
    let s = Shorthand {
        link_gbps: spec.link_gbps,
        ..Shorthand::default()
    };
    let mut plans = Vec::new();
    for &count in nodes {
        for &topology in &spec.topologies {
            let (inv, opts) = match topology {
                Topology::BiGraph => {
                    let (m, n) = bigraph_shape(count)?;
                    shorthand::bigraph(m, n, &s)?
                }
                Topology::FatTree => {
                    let k = spec.fat_tree_ports as usize;
                    let text = if count <= k * k / 2 {
                        format!("tiers=2,sub-nodes={count},ports={k}")
                    } else {
                        format!("tiers=3,k={k},sub-nodes={count}")
                    };
                    shorthand::fat_tree(&text, &s)?
                }
            };
            plans.push(design(&inv, &opts)?);
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
    let jobs: Vec<Job<'_>> = contexts
        .iter()
        .flat_map(|ctx| sizes.iter().map(move |&size| Job { ctx, size }))
        .collect();
    run_jobs(&jobs, options, progress)
}

/// Parses a message size: a whole number of bytes with an optional unit,
/// `B`, `KiB`, `MiB`, `GiB` (or `K`, `M`, `G`, also powers of 1024).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::option(
            "--size",
            format!("`{text}` is not a size; write e.g. 4096, 256KiB or 16MiB"),
        )
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let value: u64 = digits.parse().map_err(|_| bad())?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(bad()),
    };
    let size = value.checked_mul(1u64 << shift).ok_or_else(bad)?;
    check_size(size)?;
    Ok(size)
}

/// Parses sizes: `FROM..TO` (every power of two from FROM to TO, FROM a
/// power of two) or a comma-separated list.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (parse_size(from)?, parse_size(to)?);
        if from > to || !from.is_power_of_two() {
            return Err(Error::option(
                "--size",
                format!(
                    "`{text}`: a range goes from a power of two up to a larger size, e.g. 1KiB..256MiB"
                ),
            ));
        }
        let mut out = Vec::new();
        let mut s = from;
        while s <= to {
            out.push(s);
            match s.checked_mul(2) {
                Some(next) => s = next,
                None => break,
            }
        }
        return Ok(out);
    }
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_size)
        .collect()
}

/// Parses node counts: `FROM..TO` (doubling) or a comma-separated list,
/// each at least 2.
pub fn parse_nodes(text: &str) -> Result<Vec<usize>> {
    let nodes = crate::text::parse_counts(text, 2).ok_or_else(|| {
        Error::option(
            "--scale",
            format!("`{text}` is not a node count or range; write e.g. 64..1024 or 64,256"),
        )
    })?;
    for &n in &nodes {
        crate::limits::SCALE_NODES
            .check(n as u64)
            .map_err(|e| Error::option("--scale", format!("`{text}`: {e}")))?;
    }
    Ok(nodes)
}

/// A size as people write it: `256KiB`, `16MiB`, `1000B`.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests;
