//! Which sub-nodes carry a job's ranks, and in which order.
//!
//! # Policy: whole Nodes
//!
//! A rank is one sub-node: a GPU and the NIC paired with it, cabled to one
//! switch of the BiGraph. The rank table only keeps halving-doubling free
//! of congestion when every rank runs on the sub-node the table names. A
//! GPU device plugin, though, picks *which* GPUs of a Node a pod gets, and a
//! pod that asks for two of four GPUs may get any two of them, with NICs on
//! other switches than the table assumed. So placement works on whole
//! Nodes:
//!
//! - a Node is **usable** only when it is Ready, not cordoned, offers at
//!   least as many GPUs as the plan gives its server, and no pod holds any
//!   of its GPUs; the sub-nodes of every other Node are unavailable to the
//!   job (busy GPUs cannot be told apart from free ones);
//! - the job's pod on a Node requests **every** GPU the Node offers, so
//!   that no other pod can take one while the job runs, and is told by
//!   environment which local GPUs and NICs are its ranks'
//!   (`CUDA_VISIBLE_DEVICES` with `CUDA_DEVICE_ORDER=PCI_BUS_ID`,
//!   `NCCL_IB_HCA`);
//! - the ranks go where [`planner::ranks::plan_gpu_ranks`] puts them on the
//!   sub-nodes of usable Nodes, with the sub-nodes of other Nodes as
//!   `unavailable`: EFLOPS Algorithm 1 when the whole fabric is free, the
//!   optimiser otherwise. The worst load of a directed inter-switch link is
//!   reported against the lower bound;
//! - a NIC shared by several GPUs (the inventory's `gpus = [...]`) carries
//!   one rank per GPU, consecutive ranks (as `planner ranks` gives them):
//!   each rank sees only its own GPU (`CUDA_VISIBLE_DEVICES`, device 0 in
//!   the process, `LOCAL_RANK=0`, `LOCAL_WORLD_SIZE=1`) and uses the shared
//!   NIC (`NCCL_IB_HCA`); `EFLOPS_LOCAL_RANK` is its position on the Node.
//!   The job's `ranks` counts GPUs.
//!
//! The price: sub-nodes of a used Node that carry no rank stay idle while
//! the job runs (reported in the notes). Counting free GPUs per Node
//! instead would let the job share Nodes, but then the table would name
//! GPUs the job may not get.
//!
//! # Policy: whole servers (`[placement] unit = "server"`)
//!
//! On servers whose GPUs share an NVLink domain, one GPU per process makes
//! NVLink unusable (CUDA peer access needs both GPUs in the process) and
//! spreads a job over many Nodes. The unit is then the server, the
//! default when the plan's servers have an NVLink domain and the job takes
//! whole Nodes:
//!
//! - the job's ranks fill whole servers (a rank count that is not a
//!   multiple of the GPUs per server is refused), the fewest servers:
//!   64 ranks on 8-GPU servers take 8 servers;
//! - the servers' order comes from the rank search over the first GPU's
//!   sub-node of every free server, one rank per server; a server's ranks
//!   are consecutive, in GPU order, so that rank = server position x GPUs
//!   + GPU position, as torchrun numbers them;
//! - every process of a Node sees all the Node's GPUs
//!   (`CUDA_VISIBLE_DEVICES`), `LOCAL_RANK` is its GPU's position among
//!   them and `LOCAL_WORLD_SIZE` the Node's ranks; each rank keeps its
//!   sub-node's NIC (`NCCL_IB_HCA`);
//! - the whole table is verified under the engine's schedule: flows
//!   between two GPUs of one server stay on NVLink, off the fabric.
//!
//! # Policy: DRA sub-nodes (`[placement] mode = "dra"`)
//!
//! With Dynamic Resource Allocation each rank's pod claims exactly the GPU
//! and NIC its sub-node names ([`super::dra`]), so jobs share servers and
//! the unit of placement is the sub-node (a plan whose NICs carry several
//! GPUs is refused: a NIC claimed by one rank's pod cannot be claimed by
//! the other GPUs' ranks; use the whole-Node policy):
//!
//! - a sub-node is **free** when its Node is Ready and not cordoned, the
//!   Node's ResourceSlices carry its GPU and NIC under one PCIe root
//!   ([`super::dra::map_devices`], which refuses a Node whose devices
//!   disagree with the plan), no ResourceClaim holds either device and no
//!   claim template of an earlier submission names it;
//! - the rank search runs with every other sub-node `unavailable`, so a
//!   second job packs into the sub-nodes the first left free;
//! - **packing**: `spread` lets the search choose among all free sub-nodes;
//!   `fill` offers it only the fewest servers that hold enough free
//!   sub-nodes (most free first, then the name), leaving whole servers to
//!   other jobs. Both are searched and reported (servers used, worst link
//!   load, lower bound); the job's choice is placed.
//!
//! # Policy: DRA whole servers (`mode = "dra"`, `unit = "server"`)
//!
//! Whole servers as above, with the devices claimed by DRA: a server is
//! free when its Node is open and every one of its sub-nodes is free (as
//! for DRA sub-nodes); the fewest free servers, ordered and verified by the
//! same table builder as whole Nodes ([`whole_server_table`]); each
//! server's pod claims every GPU and NIC of it in one claim
//! ([`super::dra::server_claim_spec`]). A server with some sub-nodes
//! taken is reported as not usable, naming them and what holds them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use planner::checked::CheckedPlan;
use planner::ranks::{Algorithm, Congestion, RankTable, Request, plan_gpu_ranks, plan_ranks};

use super::job::{JobSpec, Packing, PlacementMode, Unit};
use super::view::{ClusterView, NodeState};
use crate::error::{Error, Result};
use crate::nodes::Node;

mod dra;
use dra::{place_dra, place_dra_servers};

/// One rank of a placed job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedRank {
    /// Rank, from 0.
    pub rank: usize,
    /// Index into `plan.sub_node_list`.
    pub sub_node: usize,
    /// Kubernetes Node.
    pub node: String,
    /// The plan's server.
    pub server: String,
    /// Sub-node within the server (`sn0`).
    pub slot: String,
    /// Position of the rank among the ranks of its Node, from 0.
    pub local_rank: usize,
}

/// One Node the job uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedNode {
    /// Kubernetes Node.
    pub node: String,
    /// The plan's server.
    pub server: String,
    /// GPUs the job's pod requests there: every GPU the Node offers.
    pub gpus: u32,
    /// The ranks it carries, ascending (one per GPU behind a shared NIC).
    pub ranks: Vec<usize>,
    /// Its sub-nodes that carry no rank of the job (idle while it runs).
    pub idle_sub_nodes: usize,
}

/// A Node the job cannot use, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unusable {
    /// Kubernetes Node name.
    pub node: String,
    /// The plan's server.
    pub server: String,
    /// Why, in words.
    pub reason: String,
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.node == self.server {
            write!(f, "{}: {}", self.node, self.reason)
        } else {
            write!(f, "{} (server {}): {}", self.node, self.server, self.reason)
        }
    }
}

/// Where a job runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    /// The job's name.
    pub job: String,
    /// The rank table (rank -> index into `plan.sub_node_list`).
    pub table: RankTable,
    /// Every rank, in rank order.
    pub ranks: Vec<PlacedRank>,
    /// The Nodes used, in the order of their first rank.
    pub nodes: Vec<PlacedNode>,
    /// Where the table comes from (`algorithm-1`, `heuristic`, `ilp`,
    /// `plan-order`).
    pub method: &'static str,
    /// Most flows on one directed inter-switch link in any step.
    pub worst_load: usize,
    /// A load no table can beat with the free sub-nodes.
    pub lower_bound: usize,
    /// Steps where some link carries more than one flow.
    pub congested_steps: Vec<Congestion>,
    /// Nodes of the plan the job could not use, and why.
    pub unusable: Vec<Unusable>,
    /// What was done and why, for people.
    pub notes: Vec<String>,
    /// With DRA placement: the devices of every rank's sub-node, in rank
    /// order (empty for whole Nodes).
    pub devices: Vec<super::dra::SubNodeDevices>,
    /// With DRA placement: each packing, searched.
    pub packings: Vec<PackingChoice>,
}

/// One packing of a DRA placement, as the rank search found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackingChoice {
    /// `spread` or `fill`.
    pub packing: Packing,
    /// Servers that carry a rank.
    pub servers: usize,
    /// Most flows on one directed inter-switch link in any step.
    pub worst_load: usize,
    /// A load no table can beat on the sub-nodes offered.
    pub lower_bound: usize,
    /// True for the packing the job file chose.
    pub chosen: bool,
}

impl ClusterView {
    /// The view of `--offline`: every Node of the plan exists, is Ready,
    /// schedulable and idle, and offers the GPUs the plan gives its server.
    pub fn all_free(bound_nodes: &[Node]) -> ClusterView {
        let mut nodes: Vec<NodeState> = bound_nodes
            .iter()
            .map(|n| NodeState {
                name: n.node.clone(),
                ready: true,
                unschedulable: false,
                gpu_allocatable: plan_gpus(n),
                address: None,
                hostname: None,
                topology_labels: None,
                pods: Vec::new(),
            })
            .collect();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        ClusterView {
            nodes,
            dra: Default::default(),
        }
    }

    /// The Nodes of `bound_nodes` the job can use, with the reason for
    /// each one it cannot (see the module documentation).
    pub(crate) fn usable<'a>(&self, bound_nodes: &'a [Node]) -> (Vec<&'a Node>, Vec<Unusable>) {
        let mut ok = Vec::new();
        let mut not = Vec::new();
        for n in bound_nodes {
            match self.why_unusable(n) {
                None => ok.push(n),
                Some(reason) => not.push(Unusable {
                    node: n.node.clone(),
                    server: n.server.clone(),
                    reason,
                }),
            }
        }
        (ok, not)
    }

    fn why_unusable(&self, n: &Node) -> Option<String> {
        let Some(state) = self.node(&n.node) else {
            return Some(
                "no such Node in the cluster (map the server to its Node with --node-map, or join it)"
                    .to_string(),
            );
        };
        if !state.ready {
            return Some("not Ready".to_string());
        }
        if state.unschedulable {
            return Some("cordoned (spec.unschedulable)".to_string());
        }
        let want = plan_gpus(n);
        if state.gpu_allocatable < want {
            return Some(format!(
                "offers {} GPUs and the plan gives its server {want}; check the GPU device plugin on it",
                state.gpu_allocatable
            ));
        }
        if state.gpu_requested() > 0 {
            let mut pods = state.pods.clone();
            pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            let mut s = format!(
                "busy: {} of {} GPUs held by ",
                state.gpu_requested(),
                state.gpu_allocatable
            );
            for (i, p) in pods.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "pod {}/{} ({} GPUs)", p.namespace, p.name, p.gpus);
            }
            return Some(s);
        }
        None
    }
}

/// GPUs the plan gives a Node's server (every GPU of a shared NIC).
/// The refusal of a job that needs more ranks than `free` sub-nodes
/// (of `total`), naming what holds the others.
fn not_enough(
    plan: &CheckedPlan,
    job: &JobSpec,
    free: usize,
    total: usize,
    unusable: &[Unusable],
) -> Error {
    Error::NotEnough {
        job: job.name.clone(),
        file: job.source.clone(),
        plan: plan.source().to_string(),
        ranks: job.ranks,
        free,
        total,
        busy: unusable.iter().map(ToString::to_string).collect(),
    }
}

fn plan_gpus(n: &Node) -> u32 {
    n.sub_nodes
        .iter()
        .filter(|s| s.gpu.is_some())
        .map(|s| s.gpus)
        .sum::<usize>() as u32
}

/// Places `job` on the usable Nodes of `view`, or with DRA on its free
/// sub-nodes (see the module documentation). Nothing is returned unless
/// every rank is placed.
pub fn place(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<Placement> {
    match (job.placement.mode, unit(plan, job)) {
        (PlacementMode::WholeNode, Unit::Server) => {
            place_whole_servers(plan, bound_nodes, view, job)
        }
        (PlacementMode::WholeNode, Unit::Gpu) => place_whole_nodes(plan, bound_nodes, view, job),
        (PlacementMode::Dra, Unit::Server) => place_dra_servers(plan, bound_nodes, view, job),
        (PlacementMode::Dra, Unit::Gpu) => place_dra(plan, bound_nodes, view, job),
    }
}

/// The job's unit: the one its file names, else whole servers when the
/// plan's servers have an NVLink domain and the job takes whole Nodes
/// (DRA keeps the sub-node unless the file asks for servers: sharing
/// servers between jobs is what it is chosen for).
pub(crate) fn unit(plan: &CheckedPlan, job: &JobSpec) -> Unit {
    job.placement.unit.unwrap_or(
        if job.placement.mode == PlacementMode::WholeNode
            && plan.servers.iter().any(|s| !s.nvlink.is_empty())
        {
            Unit::Server
        } else {
            Unit::Gpu
        },
    )
}

/// Every server's GPUs in GPU order, each as the sub-node (NIC) its
/// traffic leaves by.
pub(crate) fn gpus_by_server(plan: &CheckedPlan) -> BTreeMap<&str, Vec<usize>> {
    plan.servers
        .iter()
        .map(|s| {
            let mut gpus: Vec<(usize, usize)> = s
                .sub_nodes
                .iter()
                .flat_map(|&i| {
                    plan.sub_node_list[i]
                        .gpus()
                        .into_iter()
                        .flatten()
                        .map(move |g| (g, i))
                })
                .collect();
            gpus.sort_unstable();
            (s.name.as_str(), gpus.into_iter().map(|(_, i)| i).collect())
        })
        .collect()
}

/// The GPU count of every server that has GPUs: `None` when none has
/// one, `Err` with the counts (`4, 8`) when they differ.
pub(crate) fn common_gpu_count(
    by_server: &BTreeMap<&str, Vec<usize>>,
) -> std::result::Result<Option<usize>, String> {
    let sizes: std::collections::BTreeSet<usize> = by_server
        .values()
        .map(Vec::len)
        .filter(|&n| n > 0)
        .collect();
    match sizes.len() {
        0 | 1 => Ok(sizes.first().copied()),
        _ => Err(sizes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")),
    }
}

/// The GPUs per server of a whole-server job: the count every server of
/// the plan shares, of which the job's ranks are a multiple.
fn server_size(job: &JobSpec, by_server: &BTreeMap<&str, Vec<usize>>) -> Result<usize> {
    let refuse = |message: String| Error::Placement {
        job: job.name.clone(),
        source: planner::Error::parameter("ranks", message),
    };
    let per_server = match common_gpu_count(by_server) {
        Ok(Some(n)) => n,
        Ok(None) => {
            return Err(refuse(
                "the plan names no GPU on any server; use unit = \"gpu\" in [placement]"
                    .to_string(),
            ));
        }
        Err(counts) => {
            return Err(refuse(format!(
                "unit server needs servers with the same number of GPUs, and the plan's have {counts}; use unit = \"gpu\" in [placement]"
            )));
        }
    };
    if !job.ranks.is_multiple_of(per_server) {
        return Err(refuse(format!(
            "{} ranks do not fill whole servers of {per_server} GPUs (unit server: every process sees all GPUs of its server); use a multiple of {per_server}, or unit = \"gpu\" in [placement]",
            job.ranks
        )));
    }
    Ok(per_server)
}

/// The rank table of a whole-server job on the servers `free` (each with
/// every GPU free; not enough of them is [`Error::NotEnough`], naming the
/// `unusable` Nodes): their order from the rank search
/// over the first GPU's sub-node of every free server (its rail), one
/// rank per server; a server's ranks consecutive in GPU order, so that
/// rank = server position x GPUs + GPU position, as torchrun numbers them;
/// the whole table verified under the engine's schedule (flows between
/// GPUs of one server stay on NVLink, off the fabric). Also returns how
/// the order was found.
fn whole_server_table(
    plan: &CheckedPlan,
    job: &JobSpec,
    by_server: &BTreeMap<&str, Vec<usize>>,
    free: &[&str],
    per_server: usize,
    unusable: &[Unusable],
) -> Result<(planner::ranks::Outcome, &'static str)> {
    let servers = job.ranks / per_server;
    if free.len() < servers {
        return Err(not_enough(
            plan,
            job,
            free.len() * per_server,
            plan.default_ranks(),
            unusable,
        ));
    }
    let gpus_of = |server: &str| -> &[usize] { by_server.get(server).map_or(&[], Vec::as_slice) };
    let map_err = |source| Error::Placement {
        job: job.name.clone(),
        source,
    };
    let mut offered: Vec<usize> = free
        .iter()
        .filter_map(|s| gpus_of(s).first().copied())
        .collect();
    offered.sort_unstable();
    let unavailable: Vec<usize> = (0..plan.sub_node_list.len())
        .filter(|i| offered.binary_search(i).is_err())
        .collect();
    let order = plan_ranks(
        plan,
        &Request {
            algorithm: job.algorithm,
            ranks: Some(servers),
            unavailable,
            engine: job.engine,
            ..Request::default()
        },
    )
    .map_err(map_err)?;
    let table = RankTable {
        algorithm: job.algorithm,
        ranks: order
            .table
            .ranks
            .iter()
            .flat_map(|&first| gpus_of(&plan.sub_node_list[first].server).iter().copied())
            .collect(),
    };
    let steps = planner::ranks::verify_engine(
        plan,
        &table,
        job.engine,
        &[],
        0,
        planner::ranks::Policy::default(),
    )
    .map_err(map_err)?;
    let schedule = job
        .engine
        .schedule(job.algorithm, table.ranks.len())
        .map_err(map_err)?;
    let whole: Vec<usize> = free.iter().flat_map(|s| gpus_of(s)).copied().collect();
    let lower_bound =
        planner::ranks::lower_bound_offered(plan, &schedule, &whole).map_err(map_err)?;
    let outcome = planner::ranks::Outcome::from_steps(
        table,
        job.engine,
        order.method,
        steps,
        lower_bound,
        schedule.fold().and(planner::ranks::Fold::of(job.ranks)),
        Vec::new(),
    );
    Ok((outcome, order.method))
}

/// The notes of a whole-server placement: `how` the pods get their
/// servers, what every process sees, how the servers were ordered, the
/// load, and the engine.
fn server_notes(
    job: &JobSpec,
    outcome: &planner::ranks::Outcome,
    order_method: &str,
    servers: usize,
    per_server: usize,
    how: &str,
) -> Vec<String> {
    let mut notes = vec![format!(
        "unit server{}: {} ranks on {servers} whole servers of {per_server} GPUs{how}; every process sees all GPUs of its Node (CUDA_VISIBLE_DEVICES), LOCAL_RANK is its GPU's position and LOCAL_WORLD_SIZE {per_server}, as torchrun --nproc_per_node={per_server} sets them, so GPUs of a server reach each other over NVLink",
        if job.placement.unit.is_none() {
            " (the plan's servers have an NVLink domain)"
        } else {
            ""
        },
        job.ranks
    )];
    notes.push(format!(
        "the servers' order comes from the {order_method} rank table over one GPU of each free server; a server's ranks are consecutive in GPU order"
    ));
    notes.push(load_note(job, outcome));
    if job.engine != planner::ranks::Engine::Probe {
        notes.push(format!("made for {}: {}", job.engine, job.engine.runs()));
    }
    notes
}

/// Whole servers (see the module documentation): the fewest servers whose
/// GPUs hold the job's ranks, ordered by the rank search over one GPU of
/// each free server, every server's ranks consecutive in GPU order.
fn place_whole_servers(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<Placement> {
    let by_server = gpus_by_server(plan);
    let per_server = server_size(job, &by_server)?;
    let servers = job.ranks / per_server;
    let (usable, unusable) = view.usable(bound_nodes);
    let free: Vec<&str> = usable
        .into_iter()
        .filter(|n| by_server.get(n.server.as_str()).map(Vec::len) == Some(per_server))
        .map(|n| n.server.as_str())
        .collect();
    let (outcome, order_method) =
        whole_server_table(plan, job, &by_server, &free, per_server, &unusable)?;
    let (ranks, nodes) = assemble(plan, bound_nodes, view, job, &outcome.table)?;
    let notes = server_notes(job, &outcome, order_method, servers, per_server, "");
    finish(
        bound_nodes,
        view,
        job,
        Placed::whole_nodes(outcome, ranks, nodes, unusable, notes),
    )
}

fn place_whole_nodes(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<Placement> {
    let (usable, unusable) = view.usable(bound_nodes);
    let index_of = crate::nodes::sub_node_indices(plan);
    let usable_names: Vec<&str> = usable.iter().map(|n| n.node.as_str()).collect();
    let mut unavailable = Vec::new();
    let mut free = 0;
    let mut total = 0;
    for n in bound_nodes {
        let open = usable_names.contains(&n.node.as_str());
        for sn in &n.sub_nodes {
            let Some(&i) = index_of.get(sn.id.as_str()) else {
                continue;
            };
            // One rank per GPU: a shared NIC offers all of its GPUs.
            let gpus = if sn.gpu.is_some() { sn.gpus } else { 0 };
            total += gpus;
            if open && gpus > 0 {
                free += gpus;
            } else {
                unavailable.push(i);
            }
        }
    }
    if free < job.ranks {
        return Err(not_enough(plan, job, free, total, &unusable));
    }
    unavailable.sort_unstable();
    let request = Request {
        algorithm: job.algorithm,
        ranks: Some(job.ranks),
        unavailable,
        engine: job.engine,
        ..Request::default()
    };
    let outcome = plan_gpu_ranks(plan, &request).map_err(|source| Error::Placement {
        job: job.name.clone(),
        source,
    })?;
    let (ranks, nodes) = assemble(plan, bound_nodes, view, job, &outcome.table)?;

    let mut notes = Vec::new();
    let idle: usize = nodes.iter().map(|n| n.idle_sub_nodes).sum();
    notes.push(format!(
        "{} ranks on {} Nodes ({}); each pod requests every GPU of its Node{}",
        job.ranks,
        nodes.len(),
        method_words(outcome.method),
        if idle > 0 {
            format!(", so {idle} sub-nodes of these Nodes stay idle while the job runs")
        } else {
            String::new()
        }
    ));
    notes.push(load_note(job, &outcome));
    finish(
        bound_nodes,
        view,
        job,
        Placed::whole_nodes(outcome, ranks, nodes, unusable, notes),
    )
}

fn method_words(method: &str) -> String {
    match method {
        "algorithm-1" => "EFLOPS Algorithm 1".to_string(),
        m => format!("rank table by {m}"),
    }
}

fn load_note(job: &JobSpec, outcome: &planner::ranks::Outcome) -> String {
    format!(
        "worst load {} flow{} per directed inter-switch link in any {} step (lower bound {}{})",
        outcome.worst_load,
        if outcome.worst_load == 1 { "" } else { "s" },
        if job.algorithm == Algorithm::Ring {
            "ring"
        } else {
            "halving-doubling"
        },
        outcome.lower_bound,
        if outcome.optimal { ", optimal" } else { "" }
    )
}

/// The placed ranks and Nodes of a rank table.
fn assemble(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
    table: &RankTable,
) -> Result<(Vec<PlacedRank>, Vec<PlacedNode>)> {
    let node_of_server: BTreeMap<&str, &Node> =
        bound_nodes.iter().map(|n| (n.server.as_str(), n)).collect();
    let mut nodes: Vec<PlacedNode> = Vec::new();
    let mut ranks = Vec::with_capacity(table.ranks.len());
    let mut placed = std::collections::BTreeSet::new();
    for (rank, &i) in table.ranks.iter().enumerate() {
        let sn = &plan.sub_node_list[i];
        let node = node_of_server
            .get(sn.server.as_str())
            .ok_or_else(|| Error::Placement {
                job: job.name.clone(),
                source: planner::Error::Internal(format!(
                    "rank {rank} went to sub-node {} of a server with no Node",
                    sn.id
                )),
            })?;
        let at = match nodes.iter().position(|p| p.node == node.node) {
            Some(at) => at,
            None => {
                let gpus = view
                    .node(&node.node)
                    .map_or_else(|| plan_gpus(node), |s| s.gpu_allocatable);
                nodes.push(PlacedNode {
                    node: node.node.clone(),
                    server: node.server.clone(),
                    gpus,
                    ranks: Vec::new(),
                    idle_sub_nodes: node.sub_nodes.len(),
                });
                nodes.len() - 1
            }
        };
        let p = &mut nodes[at];
        ranks.push(PlacedRank {
            rank,
            sub_node: i,
            node: p.node.clone(),
            server: p.server.clone(),
            slot: format!("sn{}", sn.index),
            local_rank: p.ranks.len(),
        });
        // A sub-node's first rank takes it out of the idle ones (a shared
        // NIC carries one rank per GPU).
        if placed.insert(i) {
            p.idle_sub_nodes = p.idle_sub_nodes.saturating_sub(1);
        }
        p.ranks.push(rank);
    }
    Ok((ranks, nodes))
}

/// What each placement path found, before [`finish`] adds the notes on
/// unusable Nodes and Nodes outside the plan.
struct Placed {
    outcome: planner::ranks::Outcome,
    ranks: Vec<PlacedRank>,
    nodes: Vec<PlacedNode>,
    unusable: Vec<Unusable>,
    notes: Vec<String>,
    /// DRA: every rank's devices.
    devices: Vec<super::dra::SubNodeDevices>,
    /// DRA: the packings searched.
    packings: Vec<PackingChoice>,
}

impl Placed {
    /// What a whole-Node path placed: no DRA devices or packings.
    fn whole_nodes(
        outcome: planner::ranks::Outcome,
        ranks: Vec<PlacedRank>,
        nodes: Vec<PlacedNode>,
        unusable: Vec<Unusable>,
        notes: Vec<String>,
    ) -> Self {
        Placed {
            outcome,
            ranks,
            nodes,
            unusable,
            notes,
            devices: Vec::new(),
            packings: Vec::new(),
        }
    }
}

/// The placement of `job` from what a path `placed`: the notes every path
/// shares, then the [`Placement`].
fn finish(
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
    placed: Placed,
) -> Result<Placement> {
    let Placed {
        outcome,
        ranks,
        nodes,
        unusable,
        mut notes,
        devices,
        packings,
    } = placed;
    if !unusable.is_empty() {
        notes.push(format!(
            "{} Nodes of the plan are not usable: {}",
            unusable.len(),
            unusable
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let strangers: Vec<&str> = view
        .nodes
        .iter()
        .filter(|s| !bound_nodes.iter().any(|n| n.node == s.name))
        .map(|s| s.name.as_str())
        .collect();
    if !strangers.is_empty() {
        notes.push(format!(
            "{} Nodes of the cluster are not in the plan and carry no rank: {}",
            strangers.len(),
            strangers.join(", ")
        ));
    }
    notes.extend(outcome.notes.iter().cloned());
    Ok(Placement {
        job: job.name.clone(),
        congested_steps: outcome.congested_steps(),
        table: outcome.table,
        ranks,
        nodes,
        method: outcome.method,
        worst_load: outcome.worst_load,
        lower_bound: outcome.lower_bound,
        unusable,
        notes,
        devices,
        packings,
    })
}

#[cfg(test)]
mod tests;
