//! Allreduce performance on a plan: closed-form models, a flow-level
//! simulator and plots.
//!
//! - [`models`]: the α-β(-γ) equations of the papers, as printed;
//! - [`schedules`]: every send of every rank, with chunk sizes and the
//!   receives it waits for, one file per algorithm family;
//! - [`sim`]: the event-driven simulator (max-min fair rates, recomputed
//!   per connected component when a flow starts or ends): the event loop
//!   as setup, loop and finish, beside its lone pass;
//! - [`fast`]: the step-synchronous screening mode;
//! - [`packet`]: the packet-level mode;
//! - [`plot`]: EFLOPS Fig. 12 and Fig. 16 style plots, as SVG or PNG
//!   bytes;
//! - [`params`]: the cost parameters a plan does not give, with defaults;
//! - [`context`]: one plan, algorithm and rank table: its geometry, closed
//!   forms, schedule dispatch, route storage, sinks and runs, one file
//!   each;
//! - [`sweep`]: sweeps over sizes, algorithms and scales on threads;
//! - [`report`]: `planner simulate`'s tables, JSON rows and `--steps`;
//! - [`sizes`]: message sizes and node counts as people write them.
//!
//! Each layer imports only the ones above it in this list's order of
//! dependence (schedules, then the simulators, then the context, then the
//! sweeps and the report); `tests/it/layers.rs` holds it.
//!
//! # Algorithms
//!
//! The algorithms, what each simulates, its closed form and where it runs
//! are the table of [`crate::algorithm`] (`ring`, `hd`, `hdrm`, `tree`,
//! `pipelined-tree`, `double-tree`, `overlapped-tree`,
//! `overlapped-double-tree`, `blueconnect`, `2d`, `two-level`,
//! `topk-allgather`, `ps`, `hitopk`);
//! [`context`] holds the closed form and the send schedule of each, one
//! module an algorithm or family (`context/collectives/`).
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
//! is the one [`crate::ranks::plan_ranks`] gives for X with its defaults (plan
//! order for `hd`; Algorithm 1 widened by its heuristic for `hdrm`), so a
//! simulation and `planner ranks PLAN --ranks X` describe the same job.
//! The closed form is halving-doubling over P' plus `2(α + nβ) + nγ`
//! ([`models::fold`], the standard analysis of Thakur, Rabenseifner and
//! Gropp), with α and β of the slowest fold pair; the send schedule has a
//! `fold` step first and an `unfold` step last, which `--steps` lists. The EFLOPS server has
//! no path between GPUs but the NICs, so "intra-node" of the hierarchical
//! papers is "under one switch" here, at the NIC's speed.
//!
//! # Trees on one NIC per rank, or a channel per tree edge
//!
//! The tree papers give every tree edge its own channel (C-Cube's DGX-1,
//! whose NVLinks join the GPUs pairwise). By default
//! (`--param channels=fabric`) each rank has one NIC, so the closed forms
//! charge what goes through it in a step: a binary tree's inner rank
//! receives from, and sends to, two children (MG-WFBP's row with 2β and
//! 2γ; `pipelined-tree` is that tree in K chunks); in a double tree a rank
//! is an inner node of one tree and a leaf of the other, so it moves two
//! half-size chunks each way per step, which is C-Cube eq. 3–6 with the
//! NIC's β; the overlapped tree sends a chunk up and two down at once (3β
//! per step, and 2γ for the two children it reduces), where C-Cube eq. 7
//! has β; the overlapped double tree four half chunks (2β). With
//! `--param channels=pair` (trees only) every (tree, sender, receiver) has
//! a channel of its own at the ranks' link speed with no switch on it, so
//! a step moves one chunk per edge: eq. 6 (2βN) for `pipelined-tree`,
//! eq. 7 (βN) for `overlapped-tree`, and half of each for the double
//! trees; the simulation routes each send over its own channel
//! (`context/collectives/trees.rs` has the table). The chunk count K is the
//! whole number that minimises the step-count form of each
//! ([`models::pipeline`]), and the simulated schedule uses the same K.
//! `simulate --steps` reports the trees' gradient turnaround (C-Cube
//! III-C: a chunk's reduction start to its broadcast at every rank; first,
//! mean and max over the chunks): event-driven (the default method) from
//! when each send's flow started and when it was delivered in the
//! simulation ([`SendSchedule::turnaround_of_sends`]); with `--fast`, and
//! with the closed form and the packet mode, on the step-synchronous
//! timeline ([`SendSchedule::turnaround`]).
//!
//! # Baselines
//!
//! `two-level` is Gloo's and Horovod's hierarchical allreduce as
//! BlueConnect eq. 4 models it (reduce to a master under each switch,
//! allreduce among the masters, broadcast back), with the reduce as a ring
//! reduce-scatter and a binomial gather (`T_r + T_c`) and the broadcast as
//! a binomial scatter and a ring all-gather. `topk-allgather` is the flat
//! sparse allreduce HiTopKComm is measured against: every rank's ρ·d
//! largest elements, as value-index pairs, all-gathered over every rank.
//! `ps` is a sharded parameter server with a server on every rank (push
//! every shard to its server, reduce, pull it back), whose all-to-all
//! sends share each NIC (P - 1 flows) and the switch uplinks.
//! HiTopKComm's eqs. 9 and 10 count 4 bytes per selected element (an FP32
//! value); the closed form here ([`models::hitopk_sent`]) and the simulated
//! schedule both count the element width `gradient_bytes` (4 FP32, 2 FP16)
//! plus a 4-byte index per selected element, and d = bytes / width; both
//! charge γ for the reduce-scatter's reductions and the accumulation of
//! the gathered values, which the paper's equations leave out (with the
//! inter-node all-gather sprayed, so that no link is shared, the closed
//! form and the simulation agree, test
//! `hitopk_closed_form_follows_the_simulation_without_contention`).
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
//! and β from the slowest link. Halving-doubling (`hd`, `hdrm`, their
//! fold) and the levels of `blueconnect` and `2d` on a plan without the
//! intra-server tier take β of a step from the route model: every pair of
//! the step sending at once, each flow split evenly over its equal-cost
//! paths, β is the most flows' worth on one directed link over its
//! capacity (`Context::spread_beta`; a halving-doubling level weights its
//! steps by the bytes each moves). On a BiGraph that is what matters: an
//! upper and a lower switch share one link, so when the M ranks of a
//! switch all talk to one switch of the other part (plan-order HD at a
//! distance of M, a ring across the switches of a level) M flows share it.
//! The switch's uplinks per rank (`w_i / p_i` of BlueConnect, used before
//! and still by the other algorithms) spread them over all N/2 uplinks and
//! left these closed forms 1.4-1.9x below the simulation at 256 MiB.
//!
//! # What the closed forms leave out
//!
//! With ideal balancing they equal the event-driven simulation under
//! `--routing spray` (test
//! `hierarchical_and_plan_order_closed_forms_follow_ideal_balancing_on_a_bigraph`);
//! what still parts them:
//!
//! - **Hash collisions.** Under `ecmp` (the default) a flow takes one
//!   hashed path, and several may land on one spine link; the closed form
//!   assumes the even split. Plan-order HD at 256 MiB on a 4x16 BiGraph:
//!   closed form 59,792 µs, spray 59,792 µs, ECMP seed 0 69,062 µs.
//! - **One α per level.** A hierarchical level's α is its longest route;
//!   the steps of a level whose pairs sit one switch closer (the
//!   cross-part steps of a BiGraph) pay one `alpha_us` less when
//!   simulated.
//! - **Overlap.** Sends below `eager_bytes` do not wait for their
//!   receiver, and a rank starts its next step when its own peers are
//!   done, not when the whole step is; the closed forms add whole steps.
//! - **Everything else on the other algorithms.** Ring, the trees,
//!   `two-level`, `topk-allgather`, `ps` and `hitopk` keep the slowest link
//!   and the uplinks per rank; with the intra-server tier every level is
//!   charged its own bandwidth as [`intra`] gives it.
//!
//! # When the modes agree
//!
//! With no directed link shared by two flows of a step, and every flow of
//! a step on a route of the same length (or a ring, whose steps are all
//! alike), the event-driven, step-synchronous and closed-form times are the
//! same (to rounding): ring, `hd` and `hdrm` build on the same α + βb terms
//! in all three. The tests check it for ring, HD and HDRM on BiGraphs and
//! for ring on a fat-tree. A folded `hd` or `hdrm` agrees too, because
//! sends above the eager limit wait for their receiver (rendezvous, see
//! [`sim`]): a core rank without an extra partner does not start
//! halving-doubling into a partner whose NIC still receives the fold. With
//! every send eager (`--param eager_bytes=all`, the model before issue
//! #19) the two would share that link at bandwidth-bound sizes and the
//! event-driven time came out up to 3% above the other two (HDRM on the
//! 4x16 BiGraph). See [`fast`] for when the step-synchronous mode
//! is exact otherwise, and [`sim`] for how the event-driven mode shares
//! links.
//!
//! # Performance
//!
//! Release build on a two-core machine (load 1.5 to 2, docs/benchmarks.md),
//! one thread per simulation: a ring over 1,024 ranks at 256 MiB (2,046
//! steps × 1,024 flows, 2,095,104 sends) takes 0.13 to 0.21 s
//! step-synchronous and 0.42 to 0.53 s event-driven; the EFLOPS Fig. 16
//! sweep (ring, HD and HDRM on BiGraph and fat-tree, 64 to 1,024 nodes,
//! 256 KiB and 256 MiB, HDRM on the BiGraphs only: 50 simulations) takes
//! 1.7 s event-driven on two threads. With lone flows sharing end events
//! ([`sim`]) the whole `planner simulate` command for that ring took
//! 0.36 to 0.38 s of CPU at best on a machine loaded by other builds,
//! 4 to 7 % under the build before that change: issue #19's 0.1 s and 1 s
//! are not met (docs/benchmarks.md says where the time goes). The
//! `timing_*` tests, ignored by default, measure these. The pipelined trees are the slow case: at 1,024 ranks and 256 MiB the
//! overlapped tree has 410 chunks and 838,860 sends whose flows share
//! every NIC, so most events water-fill a component of hundreds of flows
//! (2.6 s on a fat-tree, 4.9 s on a BiGraph, against 0.09 s
//! step-synchronous). `ps` posts every send of a phase at once: at 1,024
//! ranks, 2,095,104 sends whose flows share each NIC 1,023 ways; `ps`,
//! `topk-allgather` and `two-level` at 256 KiB on a 16x64 BiGraph took 93
//! s together event-driven in a debug build on the shared, loaded machine
//! (not measured in release).

mod context;
pub mod fast;
mod intra;
pub use intra::default_ranks;
pub mod models;
pub mod packet;
pub mod params;
#[cfg(feature = "plot")]
pub mod plot;
mod queue;
pub mod report;
pub mod schedules;
pub mod sim;
mod sizes;
mod sweep;

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Serialize, Serializer};

use crate::error::{Error, Result};
use crate::plan::Topology;

pub use context::{
    AlgorithmRow, PacketRun, algorithm_row, estimate, estimates, packet_steps, send_schedule,
    steps_and_turnaround,
};
pub use fast::StepSummary;
pub use packet::{PACKET_PARAMS, PacketParams, PacketStats, PacketStep};
pub use params::{Channels, PARAMS, ParamDoc, Params};
pub use schedules::{SendSchedule, StepInfo, StepPhase, Timeline, Turnaround};
pub use sizes::{SIZE_UNITS, format_size, parse_byte_count, parse_nodes, parse_size, parse_sizes};
pub use sweep::{ScaleSpec, scale_plans, scale_sweep, size_sweep, size_sweep_finished, sweep_fits};

pub use crate::algorithm::Algorithm;
pub use crate::network::Policy;

/// How the time is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// The closed-form model only.
    ClosedForm,
    /// The event-driven flow-level simulator.
    Event,
    /// The step-synchronous mode.
    Fast,
    /// The packet-level simulator ([`packet`]).
    Packet,
}

impl Method {
    /// `closed-form`, `event`, `fast` or `packet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::ClosedForm => "closed-form",
            Method::Event => "event",
            Method::Fast => "fast",
            Method::Packet => "packet",
        }
    }
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        [
            Method::ClosedForm,
            Method::Event,
            Method::Fast,
            Method::Packet,
        ]
        .into_iter()
        .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
        .ok_or_else(|| {
            Error::parameter(
                "method",
                format!("`{s}` is not a method; use closed-form, event, fast or packet"),
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
    /// How flows pick among equal-cost paths ([`Policy`]): the seeds
    /// matter only for `ecmp`.
    pub routing: Policy,
    /// Where the simulations count the sends they start, for a progress
    /// display on another thread; `None` counts nothing.
    pub sends: Option<Arc<SendProgress>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            method: Method::Event,
            seeds: vec![0],
            threads: 0,
            routing: Policy::Ecmp,
            sends: None,
        }
    }
}

/// How far the simulations of a run are, in sends, read by a progress
/// display on another thread: the sends they start (every send routed in
/// a simulation, in batches) and an upper bound of the sends to come (a
/// sweep adds every job's count from the schedule's shape, one per seed
/// that runs, before any job starts). A seed that routes as the one before
/// it is not simulated again, so `started` can end below `total`.
#[derive(Debug, Default)]
pub struct SendProgress {
    started: AtomicU64,
    total: AtomicU64,
}

impl SendProgress {
    /// Sends started so far.
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// The most sends the run will start, as counted so far.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub(crate) fn add_started(&self, sends: u64) {
        self.started.fetch_add(sends, Ordering::Relaxed);
    }

    pub(crate) fn add_total(&self, sends: u64) {
        self.total.fetch_add(sends, Ordering::Relaxed);
    }
}

/// A counter says nothing about what is estimated: any two compare equal,
/// so options that ask for the same estimates are equal.
impl PartialEq for SendProgress {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SendProgress {}

impl Options {
    /// The seeds an estimate simulates: the first alone when the routing
    /// does not read the seed, seed 0 when none is given.
    pub(crate) fn seeds_run(&self) -> Vec<u64> {
        if self.seeds.is_empty() {
            vec![0]
        } else if !self.routing.seeded() {
            vec![self.seeds[0]]
        } else {
            self.seeds.clone()
        }
    }

    /// Options with seeds `0..count`.
    pub fn with_seed_count(method: Method, count: usize) -> Self {
        Self {
            method,
            seeds: (0..count.max(1) as u64).collect(),
            ..Self::default()
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
    /// Queue, PFC and ECN totals of the packet-level mode (of the median
    /// seed), absent for the other methods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketStats>,
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

pub(crate) fn check_size(n: u64) -> Result<()> {
    if n == 0 {
        Err(Error::parameter(
            "size",
            "0 bytes: give a message size of 1 byte or more",
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
