//! Job files: what an ML engineer submits (`provisioner submit JOB.toml`).
//!
//! ```toml
//! name = "allreduce-32"              # DNS label, at most 40 characters
//! namespace = "default"              # default "default"
//! image = "registry.example.com/nccl-tests:2.23"
//! command = ["/opt/nccl-tests/build/all_reduce_perf"]   # runs once per rank
//! args = ["-b", "8", "-e", "1G", "-f", "2", "-g", "1"]
//! ranks = 32                         # sub-nodes: one GPU and its NIC each
//! algorithm = "hdrm"                 # hdrm (default), hd or ring
//! launcher = "indexed"               # indexed or mpi
//! engine = "nccl"                    # what runs the allreduce: probe, nccl or gloo
//!                                    # (indexed; default probe), openmpi or nccl
//!                                    # (mpi; default openmpi)
//! master_port = 29500                # indexed: MASTER_PORT
//! ssh_port = 2222                    # mpi: the workers' sshd port
//! launcher_image = "..."             # mpi: the launcher's image (default: image)
//! rank_check_image = "..."           # image with `provisioner` (default: image)
//!
//! [resources]
//! gpu = "nvidia.com/gpu"             # the device plugin's resource name
//! cpu = "8"                          # per rank, optional
//! memory = "64Gi"                    # per rank, optional
//! extra = { "rdma/hca_shared_devices_a" = 1 }   # per pod, optional
//!
//! [env]
//! NCCL_DEBUG = "INFO"
//!
//! queue = "team-a"                   # Kueue LocalQueue (optional, top level)
//!
//! [placement]                        # optional
//! mode = "dra"                       # whole-node (default) or dra
//! profile = "nvidia-dranet"          # dra: nvidia-dranet (default) or nvidia-sriov
//! packing = "spread"                 # dra: spread (default) or fill
//! unit = "server"                    # gpu or server: whole servers, every process
//!                                    # sees all GPUs of its server (default: server
//!                                    # on NVLink plans with whole-node, else gpu)
//! gpu = { device_class = "gpu.nvidia.com", driver = "gpu.nvidia.com", attribute = "index", value = "gpu_index" }
//! nic = { device_class = "dranet", driver = "dra.net", attribute = "rdmaDevName", value = "nic" }
//! pair_attribute = "resource.kubernetes.io/pcieRoot"
//!
//! [kueue]                            # optional, with `queue`: Kueue's topology-aware
//!                                    # scheduling chooses the Nodes, the rank table is
//!                                    # written at admission (`provisioner controller`)
//! required_topology = "topology.eflops.io/fabric" # or preferred_topology
//! slice_topology = "topology.eflops.io/switch"    # optional, with slice_size
//! slice_size = 2                     # pods per slice
//!
//! [failure]                          # optional, dra only
//! gang = "jobset"                    # jobset (default): one rank fails, all stop and
//!                                    # restart together; none: bare Pods
//! restarts = 2                       # whole-job restarts before it fails (default 0)
//!
//! [schedule]                         # optional
//! workload_api = "auto"              # auto (default): a scheduling.k8s.io Workload and
//!                                    # PodGroup gang where the cluster serves them;
//!                                    # on: always (refused where it does not); off
//!
//! [pod]                              # optional, every rank pod
//! capabilities = ["SYS_NICE"]        # added to IPC_LOCK
//! shm_size = "16Gi"                  # memory-backed /dev/shm (default: no limit)
//! annotations = { "example.com/team" = "ml" }
//! tolerations = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }]
//! priority_class_name = "training"
//! scheduler_name = "default-scheduler"
//! volumes = [{ name = "data", mount_path = "/data", read_only = true,
//!              source = { persistentVolumeClaim = { claimName = "datasets" } } }]
//! ```
//!
//! The `gpu` and `nic` tables override single keys of the profile
//! ([`super::dra::Profile`]); `[pod]` tolerations and volume sources are
//! Kubernetes objects, written with the API's field names and checked
//! against `k8s-openapi`'s types.
//!
//! [`JobSpec::from_toml`] reads the file into checked values; every problem
//! names its line.

mod failure;
mod image;
mod kueue;
mod pod;
mod schedule;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use planner::Problem;
use planner::algorithm::{Algorithm, Command};
use planner::ranks::engine::{Engine, EngineInfo};

use crate::error::{Error, Result};
use crate::toml_lines::KeyLines;
use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, qualified_name_problem,
};

pub(crate) use failure::KUEUE_MAX_POD_SETS;
pub use failure::{FailurePolicy, Gang};
pub(crate) use image::image_reference_problem;
pub use kueue::KueueTopology;
use kueue::{RawKueue, check_kueue};
pub use pod::{PodSettings, PodVolume};
use pod::{RawPod, check_pod};
pub use schedule::{Schedule, WorkloadApiChoice};

/// Longest job name: `<name>-worker-<index>` and `<name>-ranks` must stay
/// DNS labels (63 characters) and pod host names.
pub(crate) const MAX_NAME: usize = 40;

/// Environment variables the provisioner sets from the rank table and the
/// host configuration (and the probe's job secret, from the job's Secret);
/// a job file may not set them.
pub(crate) const RESERVED_ENV: [&str; 22] = [
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NCCL_IB_HCA",
    "NCCL_IB_TC",
    "NCCL_IB_FIFO_TC",
    "UCX_IB_TRAFFIC_CLASS",
    "NCCL_ALGO",
    "NCCL_IB_GID_INDEX",
    "NCCL_SOCKET_IFNAME",
    "GLOO_SOCKET_IFNAME",
    "NODE_NAME",
    "EFLOPS_RANKS",
    "EFLOPS_LOCAL_RANK",
    "EFLOPS_RANK0_NIC_ADDR",
    crate::probe::auth::ENV,
    crate::probe::auth::AUTH_ENV,
];

/// How the job's processes are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Launcher {
    /// A batch/v1 Job in Indexed completion mode, one pod per Node, each
    /// starting one process per rank it carries (torchrun/NCCL style).
    Indexed,
    /// A kubeflow.org/v2beta1 MPIJob whose launcher runs `mpirun`.
    Mpi,
}

impl Launcher {
    /// `indexed` or `mpi`, as in the job file.
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::Indexed => "indexed",
            Launcher::Mpi => "mpi",
        }
    }
}

/// A Kubernetes quantity that can be multiplied by a whole number: digits
/// and an optional suffix (`500m`, `8`, `64Gi`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quantity {
    /// The number before the suffix.
    pub value: u64,
    /// `m`, `k`, `M`, `G`, `T`, `P`, `E`, `Ki` .. `Ei`, or empty.
    pub suffix: String,
}

impl Quantity {
    const SUFFIXES: [&'static str; 14] = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];

    /// Parses `<digits><suffix>`; `None` when it is anything else.
    pub fn parse(s: &str) -> Option<Quantity> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let (value, suffix) = s.split_at(digits);
        let value: u64 = value.parse().ok()?;
        Self::SUFFIXES.contains(&suffix).then(|| Quantity {
            value,
            suffix: suffix.to_string(),
        })
    }

    /// `n` times this quantity, as Kubernetes writes it.
    pub fn times(&self, n: usize) -> String {
        format!("{}{}", self.value.saturating_mul(n as u64), self.suffix)
    }
}

/// How ranks are bound to GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementMode {
    /// One pod per Node requesting every GPU of the device plugin
    /// (see [`super::placement`]).
    WholeNode,
    /// One pod per rank whose ResourceClaim names the GPU and NIC of its
    /// sub-node (Dynamic Resource Allocation, see [`super::dra`]).
    Dra,
}

/// Which free sub-nodes a DRA job prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Packing {
    /// Any free sub-node: the rank search chooses among all of them.
    Spread,
    /// The fewest servers: the servers with the most free sub-nodes first.
    Fill,
}

/// What one process of the job sees: one GPU (the sub-node: EFLOPS-style
/// servers, where GPUs talk over their NICs), or every GPU of its server
/// (servers with an NVLink domain, whose GPUs talk over NVLink only when
/// one process sees them all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// One GPU and its NIC per process: `LOCAL_RANK=0`,
    /// `LOCAL_WORLD_SIZE=1`.
    Gpu,
    /// Whole servers: every process of a Node sees all the Node's GPUs
    /// (`LOCAL_RANK` = its GPU's position, `LOCAL_WORLD_SIZE` = the Node's
    /// ranks), as torchrun starts them; the job's ranks fill whole servers.
    /// With DRA, one pod per server claims every GPU and NIC of it.
    Server,
}

impl Unit {
    /// The name in job files.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Gpu => "gpu",
            Unit::Server => "server",
        }
    }
}

/// The `[placement]` table, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacementSpec {
    /// Whole Nodes or DRA.
    pub mode: PlacementMode,
    /// The unit the file asks for; `None`: chosen from the plan (whole
    /// servers when its servers have an NVLink domain and the placement is
    /// whole-node).
    pub unit: Option<Unit>,
    /// Spread or fill (DRA).
    pub packing: Packing,
    /// Device classes and attributes of the cluster's DRA drivers.
    pub profile: super::dra::Profile,
}

/// Resources of the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resources {
    /// The device plugin's GPU resource name.
    pub gpu: String,
    /// CPU per rank.
    pub cpu: Option<Quantity>,
    /// Memory per rank.
    pub memory: Option<Quantity>,
    /// Other resources per pod (an RDMA device plugin's, for instance).
    pub extra: BTreeMap<String, u64>,
}

/// A checked job file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSpec {
    /// Job name: a DNS label of at most [`MAX_NAME`] characters.
    pub name: String,
    /// The job file as the user named it: what refusals about the job name.
    pub source: String,
    /// Namespace.
    pub namespace: String,
    /// Container image of the ranks.
    pub image: String,
    /// The program every rank runs.
    pub command: Vec<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Ranks: one GPU (and its NIC) each; a NIC shared by several GPUs
    /// carries one rank per GPU.
    pub ranks: usize,
    /// The allreduce algorithm whose rank order the table follows.
    pub algorithm: Algorithm,
    /// How the processes are started.
    pub launcher: Launcher,
    /// The collective engine that runs the allreduce: the rank table is
    /// made for the schedule it really runs
    /// ([`planner::ranks::engine`]).
    pub engine: Engine,
    /// Resources.
    pub resources: Resources,
    /// Extra environment of every rank.
    pub env: BTreeMap<String, String>,
    /// `MASTER_PORT` (indexed launcher).
    pub master_port: u16,
    /// Port of the workers' sshd (mpi launcher; the pods use the host
    /// network, where port 22 belongs to the host).
    pub ssh_port: u16,
    /// Image of the MPI launcher (default: `image`).
    pub launcher_image: Option<String>,
    /// Image with the `provisioner` binary for the rank-check init
    /// container (default: `image`).
    pub rank_check_image: Option<String>,
    /// The job file as the user named it.
    pub file: String,
    /// Kueue LocalQueue the job waits in for quota.
    pub queue: Option<String>,
    /// Whole Nodes or DRA, and the DRA profile.
    pub placement: PlacementSpec,
    /// Settings of every rank pod.
    pub pod: PodSettings,
    /// With `[kueue]`: Kueue's topology-aware scheduling chooses the
    /// Nodes, and the rank table is computed at admission.
    pub kueue: Option<KueueTopology>,
    /// What happens when a rank fails (DRA jobs: one JobSet, or bare Pods).
    pub failure: FailurePolicy,
    /// `[schedule]`: whether the pods form a Workload API gang.
    pub schedule: Schedule,
}

/// The job file as TOML gives it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    image: String,
    command: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    ranks: i64,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    launcher: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    master_port: Option<i64>,
    #[serde(default)]
    ssh_port: Option<i64>,
    #[serde(default)]
    launcher_image: Option<String>,
    #[serde(default)]
    rank_check_image: Option<String>,
    #[serde(default)]
    resources: Option<RawResources>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    queue: Option<String>,
    #[serde(default)]
    placement: Option<RawPlacement>,
    #[serde(default)]
    pod: Option<RawPod>,
    #[serde(default)]
    kueue: Option<RawKueue>,
    #[serde(default)]
    failure: Option<failure::RawFailure>,
    #[serde(default)]
    schedule: Option<schedule::RawSchedule>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlacement {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    packing: Option<String>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    gpu: Option<super::dra::RawDevice>,
    #[serde(default)]
    nic: Option<super::dra::RawDevice>,
    #[serde(default)]
    pair_attribute: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResources {
    #[serde(default)]
    gpu: Option<String>,
    #[serde(default)]
    cpu: Option<String>,
    #[serde(default)]
    memory: Option<String>,
    #[serde(default)]
    extra: BTreeMap<String, i64>,
}

/// The word of `command` that starts a process group of its own
/// (`torchrun`, `python -m torch.distributed.run` or its older
/// `torch.distributed.launch`), if any.
fn process_starter(command: &[String]) -> Option<&str> {
    let first = command.first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if program == "torchrun" {
        return Some(first);
    }
    command
        .windows(2)
        .find(|w| {
            w[0] == "-m"
                && matches!(
                    w[1].as_str(),
                    "torch.distributed.run" | "torch.distributed.launch"
                )
        })
        .map(|w| w[1].as_str())
}

/// The engines `pick` keeps as a job file writes them, from the engine
/// table (`"probe", "nccl" or "gloo"`).
fn engine_values(pick: impl Fn(&EngineInfo) -> bool) -> String {
    let values: Vec<String> = (Engine::ALL.iter())
        .map(|e| e.info())
        .filter(|i| pick(i))
        .map(|i| format!("\"{}\"", i.name))
        .collect();
    planner::text::or_list(&values)
}

/// The job's engine: the one named, or the launcher's own (`openmpi` for
/// mpirun, the probe for the indexed launcher); an engine the launcher
/// cannot start, or one that does not run the job's algorithm, is a
/// problem of the `engine` key.
fn check_engine(
    name: Option<&str>,
    launcher: Launcher,
    algorithm: Algorithm,
    bad: &mut impl FnMut(Option<&str>, &str, String, &str),
) -> Engine {
    let default = match launcher {
        Launcher::Indexed => Engine::Probe,
        Launcher::Mpi => Engine::OpenMpi,
    };
    let Some(name) = name else {
        return default;
    };
    let Ok(engine) = name.parse::<Engine>() else {
        bad(
            None,
            "engine",
            format!("`{name}` is not an engine"),
            &format!(
                "use {} (launcher = \"indexed\"), {} (launcher = \"mpi\")",
                Engine::names(|e| e.starts_alone),
                Engine::names(|e| e.mpirun)
            ),
        );
        return default;
    };
    let fits = match launcher {
        Launcher::Indexed => engine.info().starts_alone,
        // mpirun.sh runs Open MPI's mpirun.
        Launcher::Mpi => engine.info().mpirun,
    };
    if !fits {
        let (why, fix) = match launcher {
            Launcher::Indexed => (
                format!(
                    "the indexed launcher starts the ranks itself, without mpirun, so {} cannot run",
                    engine.as_str()
                ),
                format!(
                    "use launcher = \"mpi\" for Open MPI, or engine = {}",
                    engine_values(|e| e.starts_alone)
                ),
            ),
            Launcher::Mpi => (
                format!(
                    "the MPI launcher runs Open MPI's mpirun (mpirun.sh), which starts {} programs, not {}",
                    Engine::names(|e| e.mpirun),
                    engine.as_str()
                ),
                format!(
                    "use engine = {}, or launcher = \"indexed\"",
                    engine_values(|e| e.mpirun)
                ),
            ),
        };
        bad(None, "engine", why, &fix);
        return default;
    }
    if engine.rings_only()
        && algorithm.info().rank_schedule == Some(planner::algorithm::RankSchedule::HalvingDoubling)
    {
        bad(
            None,
            "engine",
            format!(
                "{} runs no halving-doubling ({}), and algorithm {} is halving-doubling: the rank table would be made for a schedule that never runs",
                engine.as_str(),
                engine.runs(),
                algorithm.as_str()
            ),
            "set algorithm = \"ring\" (the table for the engine's ring), or use launcher = \"mpi\" with Open MPI for halving-doubling",
        );
    }
    engine
}

impl JobSpec {
    /// Reads a job file; `file` names it in errors. Syntax errors, unknown
    /// keys and values of the wrong type are [`Error::Syntax`] with line and
    /// column; wrong values are [`Error::Job`], one problem per value.
    pub fn from_toml(text: &str, file: &str) -> Result<JobSpec> {
        let raw: RawJob = toml::from_str(text).map_err(|e| Error::toml_syntax(text, file, &e))?;
        let lines = KeyLines::parse(text);
        let mut problems = Vec::new();
        let mut bad = |section: Option<&str>, key: &str, message: String, fix: &str| {
            let mut path: Vec<&str> = section.map(|s| s.split('.').collect()).unwrap_or_default();
            path.push(key);
            problems.push(Problem::at(
                lines.line(&path),
                match section {
                    Some(s) => format!("{s}.{key}"),
                    None => key.to_string(),
                },
                message,
                fix,
            ));
        };

        if let Some(why) = dns_label_problem(&raw.name) {
            bad(
                None,
                "name",
                format!("`{}` {why}", raw.name),
                "name the job like a Kubernetes object, e.g. allreduce-32",
            );
        } else if raw.name.len() > MAX_NAME {
            bad(
                None,
                "name",
                format!(
                    "`{}` has {} characters; pod names such as <name>-worker-<index> must stay within 63",
                    raw.name,
                    raw.name.len()
                ),
                &format!("use at most {MAX_NAME} characters"),
            );
        }
        let namespace = raw.namespace.unwrap_or_else(|| "default".to_string());
        if let Some(why) = dns_label_problem(&namespace) {
            bad(
                None,
                "namespace",
                format!("`{namespace}` {why}"),
                "write the namespace as `kubectl get namespaces` shows it",
            );
        }
        for (key, image) in [
            ("image", Some(&raw.image)),
            ("launcher_image", raw.launcher_image.as_ref()),
            ("rank_check_image", raw.rank_check_image.as_ref()),
        ] {
            if let Some(image) = image
                && let Some(why) = image_reference_problem(image)
            {
                bad(
                    None,
                    key,
                    format!("`{image}` is not an image reference: {why}"),
                    "write [registry[:port]/]repository[:tag][@digest], the repository in lower case (e.g. registry.example.com/team/train:1.0)",
                );
            }
        }
        if raw.command.is_empty() || raw.command[0].is_empty() {
            bad(
                None,
                "command",
                "the command is empty".to_string(),
                "give the program every rank runs, e.g. command = [\"python\", \"train.py\"]",
            );
        }
        if let Some(word) = process_starter(&raw.command) {
            bad(
                None,
                "command",
                format!(
                    "`{word}` starts processes of its own, and the provisioner already starts one process per rank with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set as torchrun sets them: every rank would start --nproc_per_node more"
                ),
                "give the training script itself, e.g. command = [\"python\", \"train.py\"]",
            );
        }
        let ranks = match usize::try_from(raw.ranks) {
            Ok(r) if r > 0 => match planner::limits::SUB_NODES.check(r as u64) {
                Ok(()) => r,
                Err(why) => {
                    bad(
                        None,
                        "ranks",
                        why,
                        "ask for at most one rank per sub-node of the plan",
                    );
                    1
                }
            },
            _ => {
                bad(
                    None,
                    "ranks",
                    format!("{} ranks", raw.ranks),
                    "use 1 or more: one rank per GPU and its NIC",
                );
                1
            }
        };
        let algorithm = match raw.algorithm.as_deref() {
            None => Algorithm::Hdrm,
            Some(a) => Algorithm::parse(a, Command::Ranks).unwrap_or_else(|_| {
                bad(
                    None,
                    "algorithm",
                    format!("`{a}` is not an algorithm"),
                    &format!("use {}", Algorithm::names(Command::Ranks)),
                );
                Algorithm::Hdrm
            }),
        };
        let launcher = match raw.launcher.as_deref() {
            None | Some("indexed") => Launcher::Indexed,
            Some("mpi") => Launcher::Mpi,
            Some(l) => {
                bad(
                    None,
                    "launcher",
                    format!("`{l}` is not a launcher"),
                    "use indexed (a batch/v1 Indexed Job) or mpi (a kubeflow.org MPIJob)",
                );
                Launcher::Indexed
            }
        };
        let engine = check_engine(raw.engine.as_deref(), launcher, algorithm, &mut bad);
        if launcher == Launcher::Indexed {
            for (key, given) in [
                ("launcher_image", raw.launcher_image.is_some()),
                ("ssh_port", raw.ssh_port.is_some()),
            ] {
                if given {
                    bad(
                        None,
                        key,
                        format!("{key} applies to launcher = \"mpi\" only"),
                        "remove it, or set launcher = \"mpi\"",
                    );
                }
            }
        } else if raw.master_port.is_some() {
            bad(
                None,
                "master_port",
                "master_port applies to launcher = \"indexed\" only (mpirun starts the ranks)"
                    .to_string(),
                "remove it, or set launcher = \"indexed\"",
            );
        }
        let mut port = |key: &str, value: Option<i64>, default: u16| match value {
            None => default,
            Some(p) => match u16::try_from(p) {
                Ok(p) if p > 0 => p,
                _ => {
                    bad(
                        None,
                        key,
                        format!("{p} is not a port"),
                        "use a port from 1 to 65535",
                    );
                    default
                }
            },
        };
        let master_port = port("master_port", raw.master_port, 29500);
        let ssh_port = port("ssh_port", raw.ssh_port, 2222);

        let raw_res = raw.resources.unwrap_or(RawResources {
            gpu: None,
            cpu: None,
            memory: None,
            extra: BTreeMap::new(),
        });
        let gpu = raw_res.gpu.unwrap_or_else(|| "nvidia.com/gpu".to_string());
        if let Some(why) = qualified_name_problem(&gpu) {
            bad(
                Some("resources"),
                "gpu",
                format!("`{gpu}` {why}"),
                "use the device plugin's resource name, e.g. nvidia.com/gpu",
            );
        }
        let mut quantity = |key: &str, value: Option<String>, example: &str| {
            value.and_then(|q| {
                let parsed = Quantity::parse(&q);
                if parsed.is_none() {
                    bad(
                        Some("resources"),
                        key,
                        format!("`{q}` is not a whole quantity"),
                        &format!(
                            "write digits and an optional suffix (m, k, M, G, Ki, Mi, Gi, ...), e.g. {example}"
                        ),
                    );
                }
                parsed
            })
        };
        let cpu = quantity("cpu", raw_res.cpu, "8 or 7500m");
        let memory = quantity("memory", raw_res.memory, "64Gi");
        let mut extra = BTreeMap::new();
        for (name, count) in raw_res.extra {
            if let Some(why) = qualified_name_problem(&name) {
                bad(
                    Some("resources.extra"),
                    &name,
                    format!("`{name}` {why}"),
                    "use the device plugin's resource name",
                );
            } else if name == gpu {
                bad(
                    Some("resources.extra"),
                    &name,
                    "the GPU resource is requested by the provisioner (every GPU of the Node)"
                        .to_string(),
                    "remove it from extra",
                );
            }
            match u64::try_from(count) {
                Ok(c) if c > 0 => {
                    extra.insert(name, c);
                }
                _ => bad(
                    Some("resources.extra"),
                    &name,
                    format!("{count} is not a count"),
                    "use 1 or more",
                ),
            }
        }
        for name in raw.env.keys() {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                bad(
                    Some("env"),
                    name,
                    format!("`{name}` is not an environment variable name"),
                    "use letters, digits and `_`, not starting with a digit",
                );
            } else if RESERVED_ENV.contains(&name.as_str()) {
                bad(
                    Some("env"),
                    name,
                    format!(
                        "{name} is set by the provisioner from the rank table and the host configuration"
                    ),
                    "remove it",
                );
            }
        }
        let queue = raw.queue.inspect(|q| {
            if let Some(why) = dns_subdomain_problem(q) {
                bad(
                    None,
                    "queue",
                    format!("`{q}` {why}"),
                    "name the Kueue LocalQueue as `kubectl get localqueues` shows it",
                );
            }
        });
        let placement = check_placement(raw.placement.unwrap_or_default(), &mut bad);
        if placement.mode == PlacementMode::Dra && launcher == Launcher::Mpi {
            bad(
                Some("placement"),
                "mode",
                "placement mode dra runs one pod per rank, and an MPIJob's workers share one template that cannot name each rank's GPU and NIC".to_string(),
                "use launcher = \"indexed\" with mode = \"dra\", or mode = \"whole-node\" with the MPI launcher",
            );
        }
        let pod = check_pod(raw.pod.unwrap_or_default(), &mut bad);
        let failure = failure::check(
            raw.failure,
            &failure::Context {
                name: &raw.name,
                ranks,
                queued: queue.is_some(),
                mode: placement.mode,
                unit: placement.unit,
            },
            &mut bad,
        );
        let kueue = raw
            .kueue
            .and_then(|k| check_kueue(k, queue.is_some(), launcher, placement.mode, &mut bad));
        let schedule = schedule::check(
            raw.schedule,
            &schedule::Context {
                queued: queue.is_some(),
                launcher,
                line: lines.line(&["schedule", "workload_api"]),
            },
            &mut bad,
        );
        if !problems.is_empty() {
            return Err(Error::Job {
                file: file.to_string(),
                problems,
            });
        }
        Ok(JobSpec {
            name: raw.name,
            source: file.to_string(),
            namespace,
            image: raw.image,
            command: raw.command,
            args: raw.args,
            ranks,
            algorithm,
            launcher,
            engine,
            resources: Resources {
                gpu,
                cpu,
                memory,
                extra,
            },
            env: raw.env,
            master_port,
            ssh_port,
            launcher_image: raw.launcher_image,
            rank_check_image: raw.rank_check_image,
            file: file.to_string(),
            queue,
            placement,
            pod,
            kueue,
            failure,
            schedule,
        })
    }

    /// The image of the rank-check init container.
    pub(crate) fn rank_check_image(&self) -> &str {
        self.rank_check_image.as_deref().unwrap_or(&self.image)
    }
}

/// Reports a problem: table (dotted), key, what is wrong, what to do.
type Bad<'a> = dyn FnMut(Option<&str>, &str, String, &str) + 'a;

fn check_placement(raw: RawPlacement, bad: &mut Bad<'_>) -> PlacementSpec {
    let mode = match raw.mode.as_deref() {
        None | Some("whole-node") => PlacementMode::WholeNode,
        Some("dra") => PlacementMode::Dra,
        Some(m) => {
            bad(
                Some("placement"),
                "mode",
                format!("`{m}` is not a placement mode"),
                "use whole-node (device plugin, one pod per Node) or dra (one pod per rank with a ResourceClaim)",
            );
            PlacementMode::WholeNode
        }
    };
    let packing = match raw.packing.as_deref() {
        None | Some("spread") => Packing::Spread,
        Some("fill") => Packing::Fill,
        Some(p) => {
            bad(
                Some("placement"),
                "packing",
                format!("`{p}` is not a packing"),
                "use spread (any free sub-node) or fill (fewest servers)",
            );
            Packing::Spread
        }
    };
    let unit = match raw.unit.as_deref() {
        None => None,
        Some("gpu") => Some(Unit::Gpu),
        Some("server") => Some(Unit::Server),
        Some(u) => {
            bad(
                Some("placement"),
                "unit",
                format!("`{u}` is not a unit"),
                "use gpu (one GPU and its NIC per process) or server (every process sees all GPUs of its server, for NVLink)",
            );
            None
        }
    };
    let name = raw
        .profile
        .as_deref()
        .unwrap_or(super::dra::DEFAULT_PROFILE);
    let mut profile = match super::dra::Profile::named(name) {
        Some(p) => p,
        None => {
            bad(
                Some("placement"),
                "profile",
                format!("`{name}` is not a cluster profile"),
                &format!("use {}", super::dra::Profile::names().join(" or ")),
            );
            super::dra::Profile::named(super::dra::DEFAULT_PROFILE)
                .unwrap_or_else(super::dra::Profile::nvidia_dranet)
        }
    };
    for (key, over, dev) in [
        ("gpu", raw.gpu, &mut profile.gpu),
        ("nic", raw.nic, &mut profile.nic),
    ] {
        if let Some(over) = over {
            for (field, message, fix) in dev.override_with(over, key) {
                bad(Some(&format!("placement.{key}")), field, message, fix);
            }
        }
    }
    if let Some(a) = raw.pair_attribute {
        if let Some(why) = super::dra::qualified_attribute_problem(&a) {
            bad(
                Some("placement"),
                "pair_attribute",
                format!("`{a}` {why}"),
                "use a qualified attribute both drivers publish, e.g. resource.kubernetes.io/pcieRoot",
            );
        }
        profile.pair_attribute = a;
    }
    // A whole server under DRA runs launch.sh, which sets each rank's
    // NCCL_IB_HCA and NCCL_SOCKET_IFNAME from the plan's names: they hold
    // in the pod only when the driver hands over the physical NIC.
    if mode == PlacementMode::Dra
        && unit == Some(Unit::Server)
        && profile.nic.value != super::dra::PlanField::Nic
    {
        bad(
            Some("placement"),
            "unit",
            format!(
                "unit server sets each rank's NCCL_IB_HCA to its NIC's RDMA device as the plan names it, and profile {} selects NICs by {}: its virtual functions get names of their own in the pod",
                profile.name,
                profile.nic.value.as_str()
            ),
            "use profile = \"nvidia-dranet\" (the physical NIC, with its names), or unit = \"gpu\" (NCCL then finds the one NIC of the pod by itself)",
        );
    }
    if mode == PlacementMode::WholeNode {
        let given: Vec<&str> = [
            ("profile", raw.profile.is_some()),
            ("packing", raw.packing.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, g)| g.then_some(k))
        .collect();
        for key in given {
            bad(
                Some("placement"),
                key,
                format!("{key} applies to mode = \"dra\" only"),
                "remove it, or set mode = \"dra\"",
            );
        }
    }
    PlacementSpec {
        mode,
        unit,
        packing,
        profile,
    }
}

#[cfg(test)]
mod tests;
