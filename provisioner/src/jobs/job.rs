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

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use planner::Problem;
use planner::algorithm::{Algorithm, Command};
use planner::ranks::engine::Engine;

use crate::error::{Error, Result};
use crate::toml_lines::KeyLines;
use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, qualified_name_problem,
};

pub use failure::{FailurePolicy, Gang};

/// Longest job name: `<name>-worker-<index>` and `<name>-ranks` must stay
/// DNS labels (63 characters) and pod host names.
pub(crate) const MAX_NAME: usize = 40;

/// Environment variables the provisioner sets from the rank table and the
/// host configuration (and the probe's job secret, from the job's Secret);
/// a job file may not set them.
pub(crate) const RESERVED_ENV: [&str; 21] = [
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

/// A volume of every rank pod.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodVolume {
    /// Volume name (a DNS label).
    pub name: String,
    /// Where the ranks' container mounts it.
    pub mount_path: String,
    /// Mount it read-only.
    pub read_only: bool,
    /// The Kubernetes volume source (`persistentVolumeClaim = {...}`,
    /// `hostPath = {...}`, ...), as the API writes it.
    pub source: serde_json::Map<String, serde_json::Value>,
}

/// The `[pod]` table, checked: settings of every rank pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PodSettings {
    /// Linux capabilities added to the ranks' container besides `IPC_LOCK`.
    pub capabilities: Vec<String>,
    /// Size limit of the memory-backed `/dev/shm`.
    pub shm_size: Option<Quantity>,
    /// Pod annotations.
    pub annotations: BTreeMap<String, String>,
    /// Pod tolerations, as the API writes them.
    pub tolerations: Vec<serde_json::Value>,
    /// `spec.priorityClassName`.
    pub priority_class_name: Option<String>,
    /// `spec.schedulerName`.
    pub scheduler_name: Option<String>,
    /// Extra volumes.
    pub volumes: Vec<PodVolume>,
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
}

/// What a job asks of Kueue's topology-aware scheduling (TAS): the
/// PodSet annotations of Kueue v0.19 (`apis/kueue/v1beta2/topology_types.go`
/// at v0.19.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KueueTopology {
    /// The node label of the topology level every pod must (or should)
    /// share a domain of.
    pub level: String,
    /// `kueue.x-k8s.io/podset-required-topology` when true, else
    /// `kueue.x-k8s.io/podset-preferred-topology`.
    pub required: bool,
    /// `kueue.x-k8s.io/podset-slice-required-topology` and
    /// `kueue.x-k8s.io/podset-slice-size`: each slice of this many pods
    /// in one domain of that level.
    pub slice: Option<(String, u32)>,
}

impl KueueTopology {
    /// The PodSet annotations Kueue reads from the pod template.
    pub fn annotations(&self) -> BTreeMap<&'static str, String> {
        let mut a = BTreeMap::new();
        let key = if self.required {
            "kueue.x-k8s.io/podset-required-topology"
        } else {
            "kueue.x-k8s.io/podset-preferred-topology"
        };
        a.insert(key, self.level.clone());
        if let Some((level, size)) = &self.slice {
            a.insert(
                "kueue.x-k8s.io/podset-slice-required-topology",
                level.clone(),
            );
            a.insert("kueue.x-k8s.io/podset-slice-size", size.to_string());
        }
        a
    }
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
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKueue {
    #[serde(default)]
    required_topology: Option<String>,
    #[serde(default)]
    preferred_topology: Option<String>,
    #[serde(default)]
    slice_topology: Option<String>,
    #[serde(default)]
    slice_size: Option<i64>,
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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPod {
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    shm_size: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<toml::Table>,
    #[serde(default)]
    priority_class_name: Option<String>,
    #[serde(default)]
    scheduler_name: Option<String>,
    #[serde(default)]
    volumes: Vec<RawVolume>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVolume {
    name: String,
    mount_path: String,
    #[serde(default)]
    read_only: bool,
    source: toml::Table,
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
            "use probe, nccl or gloo (launcher = \"indexed\"), openmpi or nccl (launcher = \"mpi\")",
        );
        return default;
    };
    let fits = match launcher {
        Launcher::Indexed => matches!(engine, Engine::Probe | Engine::Nccl | Engine::Gloo),
        // mpirun.sh runs Open MPI's mpirun; NCCL programs such as
        // nccl-tests are often started by it.
        Launcher::Mpi => matches!(engine, Engine::OpenMpi | Engine::Nccl),
    };
    if !fits {
        let (why, fix) = match launcher {
            Launcher::Indexed => (
                format!(
                    "the indexed launcher starts the ranks itself, without mpirun, so {} cannot run",
                    engine.as_str()
                ),
                "use launcher = \"mpi\" for Open MPI, or engine = \"nccl\", \"gloo\" or \"probe\"",
            ),
            Launcher::Mpi => (
                format!(
                    "the MPI launcher runs Open MPI's mpirun (mpirun.sh), which starts openmpi or nccl programs, not {}",
                    engine.as_str()
                ),
                "use engine = \"openmpi\" or \"nccl\", or launcher = \"indexed\"",
            ),
        };
        bad(None, "engine", why, fix);
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
            },
            &mut bad,
        );
        let kueue = raw
            .kueue
            .and_then(|k| check_kueue(k, queue.is_some(), launcher, placement.mode, &mut bad));
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
    if mode == PlacementMode::Dra && unit == Some(Unit::Server) {
        bad(
            Some("placement"),
            "unit",
            "unit server gives every process all GPUs of its server, and a DRA rank pod claims one GPU and its NIC".to_string(),
            "use mode = \"whole-node\" for whole servers, or unit = \"gpu\"",
        );
    }
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

fn check_kueue(
    raw: RawKueue,
    queued: bool,
    launcher: Launcher,
    mode: PlacementMode,
    bad: &mut Bad<'_>,
) -> Option<KueueTopology> {
    let before =
        |bad: &mut Bad<'_>, key: &str, what: String, fix: &str| bad(Some("kueue"), key, what, fix);
    let (level, required, key) = match (raw.required_topology, raw.preferred_topology) {
        (Some(l), None) => (l, true, "required_topology"),
        (None, Some(l)) => (l, false, "preferred_topology"),
        (Some(_), Some(_)) => {
            before(
                bad,
                "preferred_topology",
                "both required_topology and preferred_topology are set".to_string(),
                "keep one: Kueue reads one of the two PodSet annotations",
            );
            return None;
        }
        (None, None) => {
            bad(
                None,
                "kueue",
                "[kueue] names no topology level".to_string(),
                "give required_topology or preferred_topology, a node label of the Kueue Topology's levels (e.g. topology.eflops.io/fabric, as planner export --to kueue writes the Topology)",
            );
            return None;
        }
    };
    let mut ok = true;
    let mut label = |bad: &mut Bad<'_>, key: &str, l: &str| {
        if let Some(why) = qualified_name_problem(l) {
            ok = false;
            before(
                bad,
                key,
                format!("`{l}` {why}"),
                "name a node label key of the Kueue Topology's levels",
            );
        }
    };
    label(bad, key, &level);
    let slice = match (raw.slice_topology, raw.slice_size) {
        (None, None) => None,
        (Some(l), Some(n)) => {
            label(bad, "slice_topology", &l);
            match u32::try_from(n) {
                Ok(n) if n > 0 => Some((l, n)),
                _ => {
                    ok = false;
                    before(
                        bad,
                        "slice_size",
                        format!("{n} is not a pod count"),
                        "give the pods of one slice, at least 1",
                    );
                    None
                }
            }
        }
        (Some(_), None) | (None, Some(_)) => {
            ok = false;
            before(
                bad,
                "slice_size",
                "slice_topology and slice_size go together".to_string(),
                "give both (Kueue needs kueue.x-k8s.io/podset-slice-size with the slice level) or neither",
            );
            None
        }
    };
    if !queued {
        ok = false;
        before(
            bad,
            key,
            "[kueue] needs a queue: Kueue only schedules jobs of a LocalQueue".to_string(),
            "add queue = \"NAME\" at the top level",
        );
    }
    if launcher != Launcher::Indexed || mode != PlacementMode::WholeNode {
        ok = false;
        before(
            bad,
            key,
            "admission-time rank tables are made for whole-Node Indexed Jobs only".to_string(),
            "use launcher = \"indexed\" and mode = \"whole-node\", or leave out [kueue] to place the job at submit",
        );
    }
    ok.then_some(KueueTopology {
        level,
        required,
        slice,
    })
}

fn check_pod(raw: RawPod, bad: &mut Bad<'_>) -> PodSettings {
    let mut capabilities = Vec::new();
    for c in raw.capabilities {
        let name = c.strip_prefix("CAP_").unwrap_or(&c).to_string();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
        if !valid {
            bad(
                Some("pod"),
                "capabilities",
                format!("`{c}` is not a Linux capability name"),
                "write it as capabilities(7) does, without CAP_, e.g. SYS_NICE",
            );
        } else if name != "IPC_LOCK" && !capabilities.contains(&name) {
            capabilities.push(name);
        }
    }
    let shm_size = raw.shm_size.and_then(|q| {
        let parsed = Quantity::parse(&q);
        if parsed.is_none() {
            bad(
                Some("pod"),
                "shm_size",
                format!("`{q}` is not a whole quantity"),
                "write digits and an optional suffix, e.g. 16Gi",
            );
        }
        parsed
    });
    for key in raw.annotations.keys() {
        if let Some(why) = qualified_name_problem(key) {
            bad(
                Some("pod.annotations"),
                key,
                format!("`{key}` {why}"),
                "use a qualified name such as example.com/team",
            );
        }
    }
    let mut tolerations = Vec::new();
    for (i, t) in raw.tolerations.into_iter().enumerate() {
        match k8s_object::<k8s_openapi::api::core::v1::Toleration>(t) {
            Ok(v) => tolerations.push(v),
            Err(e) => bad(
                Some("pod"),
                "tolerations",
                format!("toleration {}: {e}", i + 1),
                "write it as the Kubernetes API does: key, operator (Exists or Equal), value, effect, tolerationSeconds",
            ),
        }
    }
    for (key, value) in [
        ("priority_class_name", raw.priority_class_name.as_deref()),
        ("scheduler_name", raw.scheduler_name.as_deref()),
    ] {
        if let Some(v) = value
            && let Some(why) = dns_subdomain_problem(v)
        {
            bad(
                Some("pod"),
                key,
                format!("`{v}` {why}"),
                "write the name as `kubectl get priorityclasses` or the scheduler's configuration shows it",
            );
        }
    }
    let mut volumes: Vec<PodVolume> = Vec::new();
    for v in raw.volumes {
        let reserved = ["eflops-ranks", "eflops-run", "dshm"];
        if let Some(why) = dns_label_problem(&v.name) {
            bad(
                Some("pod"),
                "volumes",
                format!("volume `{}` {why}", v.name),
                "name it like a Kubernetes object",
            );
            continue;
        }
        if reserved.contains(&v.name.as_str()) || volumes.iter().any(|o| o.name == v.name) {
            bad(
                Some("pod"),
                "volumes",
                format!("volume name `{}` is taken", v.name),
                &format!(
                    "use another name (the provisioner uses {})",
                    reserved.join(", ")
                ),
            );
            continue;
        }
        if !v.mount_path.starts_with('/')
            || [MOUNT_TAKEN, "/dev/shm"]
                .iter()
                .any(|m| v.mount_path.starts_with(m))
        {
            bad(
                Some("pod"),
                "volumes",
                format!(
                    "volume `{}`: mount path `{}` is not an absolute path of its own",
                    v.name, v.mount_path
                ),
                "use an absolute path outside /etc/eflops and /dev/shm",
            );
            continue;
        }
        let mut source = serde_json::Map::new();
        for (k, val) in v.source {
            source.insert(k, toml_to_json(val));
        }
        let mut whole = source.clone();
        whole.insert("name".into(), serde_json::Value::String(v.name.clone()));
        let known = source.len() == 1
            && serde_json::from_value::<k8s_openapi::api::core::v1::Volume>(
                serde_json::Value::Object(whole.clone()),
            )
            .ok()
            .and_then(|vol| serde_json::to_value(vol).ok())
            .is_some_and(|back| back.as_object().map(|o| o.len()) == Some(2));
        if !known {
            bad(
                Some("pod"),
                "volumes",
                format!(
                    "volume `{}`: the source is not one Kubernetes volume source",
                    v.name
                ),
                "give exactly one source as the API writes it, e.g. source = { persistentVolumeClaim = { claimName = \"data\" } }",
            );
            continue;
        }
        volumes.push(PodVolume {
            name: v.name,
            mount_path: v.mount_path,
            read_only: v.read_only,
            source,
        });
    }
    PodSettings {
        capabilities,
        shm_size,
        annotations: raw.annotations,
        tolerations,
        priority_class_name: raw.priority_class_name,
        scheduler_name: raw.scheduler_name,
        volumes,
    }
}

/// Where the job's ConfigMap is mounted (a volume may not mount there).
const MOUNT_TAKEN: &str = "/etc/eflops";

fn toml_to_json(v: toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => s.into(),
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
        }
        toml::Value::Boolean(b) => b.into(),
        toml::Value::Datetime(d) => d.to_string().into(),
        toml::Value::Array(a) => a.into_iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => t
            .into_iter()
            .map(|(k, v)| (k, toml_to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// A TOML table as the Kubernetes object `T`, back as JSON: fields `T`
/// does not know are an error (the API would drop them).
fn k8s_object<T>(t: toml::Table) -> std::result::Result<serde_json::Value, String>
where
    T: serde::de::DeserializeOwned + Serialize,
{
    let given = toml_to_json(toml::Value::Table(t));
    let typed: T = serde_json::from_value(given.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(typed).map_err(|e| e.to_string())?;
    if let (Some(g), Some(b)) = (given.as_object(), back.as_object()) {
        let unknown: Vec<&String> = g.keys().filter(|k| !b.contains_key(*k)).collect();
        if !unknown.is_empty() {
            return Err(format!(
                "unknown field{} {}",
                if unknown.len() == 1 { "" } else { "s" },
                unknown
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(back)
}

/// Why `s` is not a container image reference, by the grammar of
/// github.com/distribution/reference (v0.5.0, the grammar at the top of
/// `reference.go`, with the patterns of `regexp.go`):
///
/// ```text
/// reference        := name [ ":" tag ] [ "@" digest ]
/// name             := [domain '/'] remote-name       (at most 255 characters)
/// domain           := host [':' port-number]
/// host             := domain-name | '[' IPv6address ']'
/// domain-name      := domain-component ['.' domain-component]*
/// domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
/// remote-name      := path-component ['/' path-component]*
/// path-component   := /[a-z0-9]+/ [separator /[a-z0-9]+/]*
/// separator        := /[_.]|__|[-]+/
/// tag              := /[\w][\w.-]{0,127}/
/// digest           := /[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}/
/// ```
pub(crate) fn image_reference_problem(s: &str) -> Option<String> {
    use std::sync::LazyLock;
    static REFERENCE: LazyLock<regex::Regex> = LazyLock::new(|| {
        let alnum = "[a-z0-9]+";
        let path = format!("{alnum}(?:(?:[_.]|__|-+){alnum})*");
        let component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        let host = format!(r"(?:{component}(?:\.{component})*|\[[a-fA-F0-9:]+\])");
        let domain = format!("{host}(?::[0-9]+)?");
        let name = format!("(?:{domain}/)?{path}(?:/{path})*");
        let tag = r"[\w][\w.-]{0,127}";
        let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
        regex::Regex::new(&format!("^({name})(?::{tag})?(?:@{digest})?$"))
            .unwrap_or_else(|e| unreachable!("the reference grammar is a valid regex: {e}"))
    });
    if s.is_empty() {
        return Some("it is empty".to_string());
    }
    let Some(m) = REFERENCE.captures(s) else {
        let name = s.split(['@']).next().unwrap_or(s);
        let path = name.rsplit_once('/').map_or(name, |(_, p)| p);
        let why = if s.chars().any(char::is_whitespace) {
            "it holds white space"
        } else if path
            .split(':')
            .next()
            .unwrap_or(path)
            .chars()
            .any(|c| c.is_ascii_uppercase())
            || name
                .split('/')
                .skip(1)
                .any(|c| c.chars().any(|c| c.is_ascii_uppercase()))
        {
            "a repository name is lower case only (the registry may have capitals)"
        } else {
            "it does not follow the reference grammar"
        };
        return Some(why.to_string());
    };
    let name = m.get(1).map_or("", |n| n.as_str());
    (name.len() > 255).then(|| format!("its name has {} characters, above 255", name.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Image references by github.com/distribution/reference's grammar
    /// (v0.5.0 `reference.go`).
    #[test]
    fn image_references_follow_the_distribution_grammar() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for good in [
            "nccl-tests:2.23".to_string(),
            "registry.example.com/team/train:1.0".to_string(),
            "localhost:5000/a/b_c__d--e.f".to_string(),
            "REG.example.com/img".to_string(),
            "[::1]:5000/img:tag".to_string(),
            format!("img@{digest}"),
            format!("r.io/img:v1@{digest}"),
            format!("a:{}", "t".repeat(128)),
        ] {
            assert_eq!(image_reference_problem(&good), None, "{good}");
        }
        for (bad, why) in [
            ("", "it is empty"),
            ("REG/IMG", "lower case only"),
            ("reg/IMG:1", "lower case only"),
            ("registry.example.com/Team/img", "lower case only"),
            ("img:", "grammar"),
            ("img:tag:more", "grammar"),
            ("img with space", "white space"),
            ("-img", "grammar"),
            ("img__-x", "grammar"),
            ("img@sha256:abc", "grammar"),
        ] {
            let got = image_reference_problem(bad).unwrap_or_default();
            assert!(got.contains(why), "{bad:?}: {got}");
        }
        assert!(image_reference_problem(&("a:".to_string() + &"t".repeat(129))).is_some());
        let long = format!("r.io/{}", "a".repeat(251));
        assert!(
            image_reference_problem(&long)
                .unwrap()
                .contains("above 255")
        );
    }

    const GOOD: &str = r#"name = "allreduce-32"
image = "nccl-tests:2.23"
command = ["all_reduce_perf"]
args = ["-b", "8"]
ranks = 32

[resources]
cpu = "8"
memory = "64Gi"
extra = { "rdma/hca" = 1 }

[env]
NCCL_DEBUG = "INFO"
"#;

    #[test]
    fn the_mpi_launcher_runs_open_mpi_unless_the_file_names_nccl() {
        let mpi = GOOD.replace("ranks = 32", "ranks = 32\nlauncher = \"mpi\"");
        let j = JobSpec::from_toml(&mpi, "j.toml").unwrap();
        assert_eq!(j.engine, Engine::OpenMpi);
        let nccl = mpi.replace(
            "ranks = 32",
            "ranks = 32\nengine = \"nccl\"\nalgorithm = \"ring\"",
        );
        let j = JobSpec::from_toml(&nccl, "j.toml").unwrap();
        assert_eq!((j.engine, j.algorithm), (Engine::Nccl, Algorithm::Ring));
    }

    #[test]
    fn a_good_file_with_defaults() {
        let j = JobSpec::from_toml(GOOD, "j.toml").unwrap();
        assert_eq!(j.name, "allreduce-32");
        assert_eq!(j.namespace, "default");
        assert_eq!(j.algorithm, Algorithm::Hdrm);
        assert_eq!(j.launcher, Launcher::Indexed);
        assert_eq!(j.engine, Engine::Probe);
        assert_eq!(j.resources.gpu, "nvidia.com/gpu");
        assert_eq!(j.resources.cpu.as_ref().unwrap().times(2), "16");
        assert_eq!(j.resources.memory.as_ref().unwrap().times(3), "192Gi");
        assert_eq!(j.resources.extra["rdma/hca"], 1);
        assert_eq!((j.master_port, j.ssh_port), (29500, 2222));
        assert_eq!(j.rank_check_image(), "nccl-tests:2.23");
    }

    /// One case per mistake: what to replace in a good file, with what,
    /// and what the error must say.
    #[test]
    fn mistakes_name_file_and_line() {
        let long = "a".repeat(41);
        for (from, to, want) in [
            (
                "ranks = 32",
                "ranks = 32\ncolour = 1",
                "j.toml:6:1: unknown field `colour`",
            ),
            (
                "ranks = 32",
                "ranks = \"32\"",
                "j.toml:5:9: invalid type: string \"32\", expected a whole number",
            ),
            (
                "allreduce-32",
                "AllReduce",
                "j.toml:1: name: `AllReduce` must be 1 to 63 lower-case",
            ),
            (
                "allreduce-32",
                long.as_str(),
                "j.toml:1: name: `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` has 41 characters",
            ),
            (
                "ranks = 32",
                "ranks = 0",
                "j.toml:5: ranks: 0 ranks; use 1 or more",
            ),
            (
                "ranks = 32",
                "ranks = 32\nalgorithm = \"tree\"",
                "j.toml:6: algorithm: `tree` is not an algorithm; use hdrm, hd or ring",
            ),
            (
                "ranks = 32",
                "ranks = 32\nlauncher = \"slurm\"",
                "j.toml:6: launcher: `slurm` is not a launcher",
            ),
            (
                "command = [\"all_reduce_perf\"]",
                "command = [\"/usr/local/bin/torchrun\", \"--nproc_per_node=8\", \"train.py\"]",
                "j.toml:3: command: `/usr/local/bin/torchrun` starts processes of its own",
            ),
            (
                "command = [\"all_reduce_perf\"]",
                "command = [\"python3\", \"-m\", \"torch.distributed.run\", \"train.py\"]",
                "j.toml:3: command: `torch.distributed.run` starts processes of its own",
            ),
            (
                "ranks = 32",
                "ranks = 32\nengine = \"horovod\"",
                "j.toml:6: engine: `horovod` is not an engine; use probe, nccl or gloo",
            ),
            (
                "ranks = 32",
                "ranks = 32\nengine = \"openmpi\"",
                "j.toml:6: engine: the indexed launcher starts the ranks itself, without mpirun, so openmpi cannot run; use launcher = \"mpi\"",
            ),
            (
                "ranks = 32",
                "ranks = 32\nlauncher = \"mpi\"\nengine = \"gloo\"",
                "j.toml:7: engine: the MPI launcher runs Open MPI's mpirun (mpirun.sh), which starts openmpi or nccl programs, not gloo",
            ),
            (
                "ranks = 32",
                "ranks = 32\nengine = \"nccl\"",
                "j.toml:6: engine: nccl runs no halving-doubling (NCCL 2.30 ring",
            ),
            (
                "ranks = 32",
                "ranks = 32\nssh_port = 22",
                "j.toml:6: ssh_port: ssh_port applies to launcher = \"mpi\" only",
            ),
            (
                "ranks = 32",
                "ranks = 32\nlauncher = \"mpi\"\nmaster_port = 1",
                "j.toml:7: master_port: master_port applies to launcher = \"indexed\" only",
            ),
            (
                "\"8\"",
                "\"1.5\"",
                "j.toml:8: resources.cpu: `1.5` is not a whole quantity",
            ),
            (
                "NCCL_DEBUG",
                "CUDA_VISIBLE_DEVICES",
                "j.toml:13: env.CUDA_VISIBLE_DEVICES: CUDA_VISIBLE_DEVICES is set by the provisioner",
            ),
            (
                "[\"all_reduce_perf\"]",
                "[]",
                "j.toml:3: command: the command is empty",
            ),
            (
                "\"rdma/hca\" = 1",
                "\"rdma/hca\" = 0",
                "j.toml:10: resources.extra.rdma/hca: 0 is not a count",
            ),
            (
                "[resources]",
                "[resources]\ngpu = \"Bad Name\"",
                "j.toml:8: resources.gpu: `Bad Name`",
            ),
        ] {
            let text = GOOD.replace(from, to);
            let e = JobSpec::from_toml(&text, "j.toml").unwrap_err().to_string();
            assert!(e.contains(want), "want {want:?} in:\n{e}");
        }
        // Every problem is listed, not only the first.
        let e = JobSpec::from_toml(
            &GOOD
                .replace("allreduce-32", "x_y")
                .replace("ranks = 32", "ranks = -1"),
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("j.toml: 2 problems in the job file"), "{e}");
    }

    /// Issue 14: the line scanner found only `key = ` lines under a
    /// `[table]` header, so a problem on a dotted key or in an inline
    /// table had no line; the parser's spans find every spelling.
    #[test]
    fn issue14_dotted_keys_and_inline_tables_name_their_line() {
        let head = "name = \"allreduce-32\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 32\n";
        for (tail, want) in [
            (
                "resources.gpu = \"Bad Name\"\n",
                "j.toml:5: resources.gpu: `Bad Name`",
            ),
            (
                "resources.extra.\"rdma/hca\" = -1\n",
                "j.toml:5: resources.extra.rdma/hca: -1 is not a count",
            ),
            (
                "resources = { cpu = \"8\",\n  memory = \"lots\" }\n",
                "j.toml:6: resources.memory: `lots` is not a whole quantity",
            ),
            (
                "[resources]\nextra = { \"a\" = 1, \"rdma/hca\" = 0 }\n",
                "j.toml:6: resources.extra.rdma/hca: 0 is not a count",
            ),
            ("env.\"1X\" = \"v\"\n", "j.toml:5: env.1X: `1X` is not"),
        ] {
            let e = JobSpec::from_toml(&format!("{head}{tail}"), "j.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "want {want:?} in:\n{e}");
        }
    }

    const DRA: &str = r#"name = "train"
image = "i"
command = ["c"]
ranks = 8
queue = "team-a"

[placement]
mode = "dra"
profile = "nvidia-sriov"
packing = "fill"
nic = { attribute = "resource.kubernetes.io/pciBusID", value = "netdev" }

[pod]
capabilities = ["CAP_SYS_NICE", "IPC_LOCK"]
shm_size = "16Gi"
annotations = { "example.com/team" = "ml" }
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }]
priority_class_name = "training"
scheduler_name = "default-scheduler"
volumes = [{ name = "data", mount_path = "/data", read_only = true, source = { persistentVolumeClaim = { claimName = "datasets" } } }]
"#;

    #[test]
    fn placement_pod_and_queue() {
        let j = JobSpec::from_toml(DRA, "j.toml").unwrap();
        assert_eq!(j.queue.as_deref(), Some("team-a"));
        assert_eq!(j.placement.mode, PlacementMode::Dra);
        assert_eq!(j.placement.packing, Packing::Fill);
        let p = &j.placement.profile;
        assert_eq!(p.name, "nvidia-sriov");
        assert_eq!(p.gpu.device_class, "gpu.nvidia.com");
        assert_eq!(p.nic.driver, "sriovnetwork.k8snetworkplumbingwg.io");
        assert_eq!(p.nic.attribute, "resource.kubernetes.io/pciBusID");
        assert_eq!(p.nic.value, crate::jobs::dra::PlanField::Netdev);
        // IPC_LOCK is always added; CAP_ is dropped.
        assert_eq!(j.pod.capabilities, ["SYS_NICE"]);
        assert_eq!(j.pod.shm_size.as_ref().unwrap().times(1), "16Gi");
        assert_eq!(
            j.pod.tolerations,
            [
                serde_json::json!({ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" })
            ]
        );
        assert_eq!(
            j.pod.volumes[0].source["persistentVolumeClaim"]["claimName"],
            "datasets"
        );
        // Defaults: whole Nodes, no queue, nothing in [pod].
        let g = JobSpec::from_toml(GOOD, "j.toml").unwrap();
        assert_eq!(g.placement.mode, PlacementMode::WholeNode);
        assert_eq!(g.placement.profile.name, crate::jobs::dra::DEFAULT_PROFILE);
        assert_eq!(
            (g.queue.as_ref(), g.pod.clone()),
            (None, PodSettings::default())
        );
    }

    /// One case per mistake in the DRA file.
    #[test]
    fn placement_and_pod_mistakes_name_their_line() {
        for (from, to, want) in [
            (
                "mode = \"dra\"",
                "mode = \"gang\"",
                "j.toml:8: placement.mode: `gang` is not a placement mode",
            ),
            (
                "\"nvidia-sriov\"",
                "\"amd\"",
                "j.toml:9: placement.profile: `amd` is not a cluster profile; use nvidia-dranet or nvidia-sriov",
            ),
            (
                "\"fill\"",
                "\"pack\"",
                "j.toml:10: placement.packing: `pack` is not a packing",
            ),
            (
                "value = \"netdev\"",
                "value = \"gpu_index\"",
                "j.toml:11: placement.nic.value: `gpu_index` is not a field of the nic; use nic or netdev",
            ),
            (
                "resource.kubernetes.io/pciBusID",
                "a b",
                "j.toml:11: placement.nic.attribute: `a b` is not a device attribute name",
            ),
            (
                "\"CAP_SYS_NICE\"",
                "\"sys nice\"",
                "j.toml:14: pod.capabilities: `sys nice` is not a Linux capability name",
            ),
            (
                "\"16Gi\"",
                "\"lots\"",
                "j.toml:15: pod.shm_size: `lots` is not a whole quantity",
            ),
            (
                "operator = \"Exists\"",
                "operatr = \"Exists\"",
                "j.toml:17: pod.tolerations: toleration 1: unknown field `operatr`",
            ),
            (
                "persistentVolumeClaim",
                "persistentVolume",
                "j.toml:20: pod.volumes: volume `data`: the source is not one Kubernetes volume source",
            ),
            (
                "mount_path = \"/data\"",
                "mount_path = \"/etc/eflops/x\"",
                "j.toml:20: pod.volumes: volume `data`: mount path `/etc/eflops/x`",
            ),
            (
                "name = \"data\"",
                "name = \"dshm\"",
                "j.toml:20: pod.volumes: volume name `dshm` is taken",
            ),
            (
                "queue = \"team-a\"",
                "queue = \"Team A\"",
                "j.toml:5: queue: `Team A`",
            ),
            (
                "ranks = 8",
                "ranks = 8\nlauncher = \"mpi\"",
                "placement.mode: placement mode dra runs one pod per rank",
            ),
        ] {
            let text = DRA.replace(from, to);
            assert_ne!(text, DRA, "{from}");
            let e = JobSpec::from_toml(&text, "j.toml").unwrap_err().to_string();
            assert!(e.contains(want), "want {want:?} in:\n{e}");
        }
        let e = JobSpec::from_toml(
            &GOOD.replace("[env]", "[placement]\npacking = \"fill\"\n[env]"),
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("placement.packing: packing applies to mode = \"dra\" only"),
            "{e}"
        );
    }

    #[test]
    fn quantities() {
        assert_eq!(Quantity::parse("500m").unwrap().times(4), "2000m");
        assert_eq!(Quantity::parse("8").unwrap().times(2), "16");
        for bad in ["", "1.5", "8x", "Gi", "-1"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }

    /// `[kueue]`: Kueue v0.19's PodSet annotations, and every refusal
    /// names its key.
    #[test]
    fn kueue_topology_keys() {
        let base = "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 8\nqueue = \"team-a\"\n[kueue]\n";
        let j = JobSpec::from_toml(
            &format!("{base}required_topology = \"topology.eflops.io/part\"\nslice_topology = \"topology.eflops.io/switch\"\nslice_size = 2\n"),
            "j.toml",
        )
        .unwrap();
        let a = j.kueue.unwrap().annotations();
        assert_eq!(
            a["kueue.x-k8s.io/podset-required-topology"],
            "topology.eflops.io/part"
        );
        assert_eq!(
            a["kueue.x-k8s.io/podset-slice-required-topology"],
            "topology.eflops.io/switch"
        );
        assert_eq!(a["kueue.x-k8s.io/podset-slice-size"], "2");
        let j = JobSpec::from_toml(&format!("{base}preferred_topology = \"rack\"\n"), "j.toml")
            .unwrap();
        assert_eq!(
            j.kueue.unwrap().annotations()["kueue.x-k8s.io/podset-preferred-topology"],
            "rack"
        );
        for (tail, want) in [
            ("", "j.toml:6: kueue: [kueue] names no topology level"),
            (
                "required_topology = \"a\"\npreferred_topology = \"b\"\n",
                "j.toml:8: kueue.preferred_topology: both",
            ),
            (
                "required_topology = \"a\"\nslice_size = 2\n",
                "kueue.slice_size: slice_topology and slice_size go together",
            ),
            (
                "required_topology = \"a\"\nslice_topology = \"b\"\nslice_size = 0\n",
                "kueue.slice_size: 0 is not a pod count",
            ),
            (
                "required_topology = \"a b\"\n",
                "j.toml:7: kueue.required_topology: `a b`",
            ),
        ] {
            let e = JobSpec::from_toml(&format!("{base}{tail}"), "j.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "want {want:?} in:\n{e}");
        }
        let e = JobSpec::from_toml(
            &format!("{base}required_topology = \"a\"\n").replace("queue = \"team-a\"\n", ""),
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("[kueue] needs a queue"), "{e}");
        let e = JobSpec::from_toml(
            &format!("{base}required_topology = \"a\"\n")
                .replace("ranks = 8", "ranks = 8\nlauncher = \"mpi\""),
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("whole-Node Indexed Jobs only"), "{e}");
    }

    /// `[failure]`: a DRA job is one JobSet by default, restarted as a
    /// whole `restarts` times; bare Pods only when asked; refused where it
    /// cannot hold.
    #[test]
    fn failure_keys() {
        let base = "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 4\n[placement]\nmode = \"dra\"\n";
        let spec = |text: &str| JobSpec::from_toml(text, "j.toml").unwrap().failure;
        let jobset = |restarts| FailurePolicy {
            gang: Gang::JobSet,
            restarts,
        };
        assert_eq!(spec(base), jobset(0));
        assert_eq!(spec(&format!("{base}[failure]\nrestarts = 3\n")), jobset(3));
        assert_eq!(
            spec(&format!("{base}[failure]\ngang = \"none\"\n")).gang,
            Gang::None
        );
        // 18 ranks fit one Kueue Workload; more fit as bare Pods.
        let queued =
            |ranks: usize| base.replace("ranks = 4", &format!("ranks = {ranks}\nqueue = \"q\""));
        assert_eq!(spec(&queued(18)), jobset(0));
        assert_eq!(
            spec(&format!("{}[failure]\ngang = \"none\"\n", queued(19))).gang,
            Gang::None
        );
        let err = |text: &str| JobSpec::from_toml(text, "j.toml").unwrap_err().to_string();
        for (text, want) in [
            (
                format!("{base}[failure]\ngang = \"none\"\nrestarts = 1\n"),
                "j.toml:9: failure.restarts: restarts need gang = \"jobset\"",
            ),
            (
                format!("{base}[failure]\nrestarts = -1\n"),
                "j.toml:8: failure.restarts: -1 is not a restart count",
            ),
            (
                format!("{base}[failure]\ngang = \"all\"\n"),
                "j.toml:8: failure.gang: `all` is not a gang failure handling",
            ),
            (
                base.replace("[placement]\nmode = \"dra\"\n", "[failure]\nrestarts = 1\n"),
                "j.toml:6: failure.restarts: [failure] applies to [placement] mode = \"dra\"",
            ),
            (
                base.replace("name = \"t\"", "name = \"1t\""),
                "j.toml:1: name: `1t` starts with a digit",
            ),
            (
                queued(19),
                "j.toml:5: queue: Kueue v0.19 admits a JobSet as one Workload with a PodSet per replicated Job, at most 18",
            ),
        ] {
            assert!(err(&text).contains(want), "{}", err(&text));
        }
    }
}
