//! The Kubernetes objects of a placed job, as JSON values whose keys come
//! out sorted (deterministic YAML and JSON).
//!
//! # Objects
//!
//! - **ConfigMap `<job>-ranks`**: `ranks.csv` (the rank table with the Node
//!   of every rank: `rank,server,sub_node,gpu,nic,switch,part,node`, what
//!   `provisioner rank-check` reads), `rank-env.csv` (per rank: its Node,
//!   local rank, Open MPI slot and the host configuration's
//!   `CUDA_VISIBLE_DEVICES`, `NCCL_IB_HCA`, `NCCL_IB_TC`,
//!   `NCCL_IB_GID_INDEX`, `NCCL_SOCKET_IFNAME`), an Open MPI `rankfile` and
//!   `hostfile` on Node host names, and the launcher scripts.
//! - **`indexed`**: a headless Service `<job>` and a batch/v1 Job in Indexed
//!   completion mode with one pod per Node.
//! - **`mpi`**: a kubeflow.org/v2beta1 MPIJob; the MPI operator makes its
//!   own headless Service `<job>` for the workers, so none is added.
//!
//! # Pinning pods to Nodes
//!
//! Pods of an Indexed Job, like the workers of an MPIJob, share one
//! template: a template cannot pin completion index i (or worker i) to
//! Node i. So every pod gets required node affinity to the *set* of Nodes
//! the placement chose and required pod anti-affinity on
//! `kubernetes.io/hostname` (one pod of the job per Node); with as many pods
//! as Nodes, every chosen Node gets exactly one. A pod learns its ranks
//! from the Node it landed on (`NODE_NAME` from the Downward API, looked up
//! in `rank-env.csv`), not from its index:
//!
//! - `indexed`: `launch.sh` starts one process per rank of the Node with
//!   `RANK`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `EFLOPS_RANKS` (the Node's
//!   ranks, comma-separated), `CUDA_VISIBLE_DEVICES`, `NCCL_IB_*` of that
//!   rank; when one fails it stops the others and the pod fails. `MASTER_ADDR` is the address of rank 0's
//!   NIC from the plan (its Node name when the plan has no address), so it
//!   does not depend on which index lands where.
//! - `mpi`: each worker writes its Node name to `/var/run/eflops/node`;
//!   the launcher's `mpi-launch.sh` reads it from every worker over ssh,
//!   writes the rankfile from where the workers actually are, and refuses
//!   to start when a worker sits on a Node without ranks or two share one;
//!   `mpirun.sh RANKFILE COMMAND...` then runs mpirun with the generated
//!   launch flags (also with the ConfigMap's own `rankfile`, as the lab
//!   does: docs/lab.md, "Foreign engines").
//!   `rank-env.sh` runs each rank: it compares `OMPI_COMM_WORLD_RANK`'s
//!   Node in the table with the Node it runs on, then exports the rank's
//!   GPU and NIC variables.
//!
//! Pods use the host network: the host configuration's NCCL variables
//! (the RoCE GID index of the NIC's IPv4 address, the NIC's netdev) name
//! the host's interfaces. MPI workers therefore run sshd on `ssh_port`.
//!
//! An init container runs `provisioner rank-check` in every rank pod
//! before the job's container starts, failing the pod (exit 2) when its
//! Node carries no rank of the table.
//!
//! # The job secret
//!
//! Every rank's container (with `mpi`, the launcher's, whose `mpirun`
//! passes it on with `-x`) gets `PROBE_TOKEN` from the key `token` of the
//! Secret `<job>-probe-token` (`env.valueFrom.secretKeyRef`) and
//! `EFLOPS_PROBE_AUTH=required`, so that `provisioner probe` authenticates
//! every peer and refuses to run without the secret. [`token_secret`]
//! builds that Secret from a secret the caller made
//! ([`crate::probe::Secret::generate`]): it is no part of [`build`]'s
//! output, which stays the same for the same inputs and never holds it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::plan::Plan;

use super::job::{JobSpec, Launcher, PlacementMode, Unit};
use super::labels::{MANAGED_BY, PREFIX};
use super::placement::Placement;
use super::view::{ClusterView, Manifests};
use crate::error::{Error, Result};

mod dra;
mod scripts;
pub mod workload;

use dra::build_dra;
use scripts::{launch_sh, mpi_launch_sh, mpirun_sh, rank_env_sh};

/// Where the ConfigMap is mounted in every pod.
pub(crate) const MOUNT: &str = "/etc/eflops";

/// Where MPI workers write the name of their Node.
pub(crate) const RUN_DIR: &str = "/var/run/eflops";

/// The host configuration's runtime environment of every sub-node, by
/// sub-node id (`node01/sn0`), as `planner render --hosts` writes it.
pub(crate) fn host_env(plan: &CheckedPlan) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let mut out = BTreeMap::new();
    for file in planner::render::host_files(plan)? {
        for slot in file.sub_nodes {
            out.insert(slot.sub_node, slot.env);
        }
    }
    Ok(out)
}

/// NCCL's topology file of every Node of the placement whose server's
/// PCIe tree the plan carries (the inventory's `pci_bus`), keyed
/// `<node>.nccl-topo.xml` as the ConfigMap holds them: the scripts export
/// the rank's Node's file as `NCCL_TOPO_FILE`. Node names are ConfigMap
/// keys already, as [`RankRows::new`] holds them to what a rankfile takes.
pub(super) fn nccl_topologies(
    plan: &CheckedPlan,
    placement: &Placement,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for r in &placement.ranks {
        let key = format!("{}.nccl-topo.xml", r.node);
        if out.contains_key(&key) {
            continue;
        }
        let Some(server) = plan.servers.iter().find(|s| s.name == r.server) else {
            return Err(Error::Manifest {
                job: placement.job.clone(),
                message: format!("the plan has no server {}", r.server),
            });
        };
        let xml = planner::render::nccl_topo::nccl_topology(server, plan.source())?;
        if let Some(xml) = xml {
            out.insert(key, xml);
        }
    }
    Ok(out)
}

/// The most a ConfigMap's data may hold: "The data stored in a ConfigMap
/// cannot exceed 1 MiB" (kubernetes.io/docs/concepts/configuration/configmap).
const CONFIG_MAP_LIMIT: usize = 1 << 20;

/// Refuses a ConfigMap whose data (keys and values) is over
/// [`CONFIG_MAP_LIMIT`], which the API server would reject.
pub(super) fn check_config_map_size(job: &str, config_map: &str, data: &Value) -> Result<()> {
    let Some(map) = data.as_object() else {
        return Ok(());
    };
    let size: usize = map
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size <= CONFIG_MAP_LIMIT {
        return Ok(());
    }
    let topo: usize = (map.iter())
        .filter(|(k, _)| k.ends_with(".nccl-topo.xml"))
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    Err(Error::Manifest {
        job: job.to_string(),
        message: format!(
            "its ConfigMap {config_map} would hold {size} bytes ({topo} of them NCCL topology files), over Kubernetes' limit of 1 MiB ({CONFIG_MAP_LIMIT} bytes) on a ConfigMap's data; run it on fewer servers, or leave pci_bus out of the inventory so that NCCL reads the PCIe tree itself"
        ),
    })
}

/// The labels every object of the job carries.
pub fn labels(job: &JobSpec) -> Value {
    json!({
        "app.kubernetes.io/name": job.name,
        "app.kubernetes.io/instance": job.name,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        format!("{PREFIX}job"): job.name,
    })
}

fn labels_with(job: &JobSpec, role: &str) -> Value {
    let mut l = labels(job);
    l[format!("{PREFIX}role")] = json!(role);
    l
}

fn metadata(job: &JobSpec, name: &str, annotations: Option<Value>) -> Value {
    let mut m = json!({
        "name": name,
        "namespace": job.namespace,
        "labels": labels(job),
    });
    if let Some(a) = annotations {
        m["annotations"] = a;
    }
    m
}

/// The name of the job's ConfigMap.
pub(crate) fn config_map_name(job: &JobSpec) -> String {
    format!("{}-ranks", job.name)
}

/// Builds every object of `job` placed by `placement` on `plan`; `view`
/// gives the Nodes' addresses (for `MASTER_ADDR`).
pub fn build(
    plan: &CheckedPlan,
    placement: &Placement,
    job: &JobSpec,
    view: &ClusterView,
) -> Result<Manifests> {
    let env = host_env(plan)?;
    if job.placement.mode == PlacementMode::Dra {
        return build_dra(plan, placement, job, &env);
    }
    let gpus: Vec<u32> = placement.nodes.iter().map(|n| n.gpus).collect();
    if gpus.iter().any(|&g| g != gpus[0]) {
        let list: Vec<String> = placement
            .nodes
            .iter()
            .map(|n| format!("{} {}", n.node, n.gpus))
            .collect();
        return Err(Error::Manifest {
            job: job.name.clone(),
            message: format!(
                "the Nodes it uses offer different GPU counts ({}), and its pods share one template that requests every GPU of a Node; place it on Nodes of one kind (fewer ranks, or a plan of one server model)",
                list.join(", ")
            ),
        });
    }
    let unit = super::placement::unit(plan, job);
    let rows = RankRows::new(plan, placement, &env, unit)?;
    let annotations = job_annotations(plan, placement, job);
    let mut data = json!({
        "ranks.csv": rows.ranks_csv(),
        "rank-env.csv": rows.env_csv(),
        "rankfile": rows.rankfile(),
        "hostfile": rows.hostfile(placement),
    });
    let topologies = nccl_topologies(plan, placement)?;
    for (key, xml) in &topologies {
        data[key] = json!(xml);
    }
    let workload = match job.launcher {
        Launcher::Indexed => {
            data["launch.sh"] = json!(launch_sh(!topologies.is_empty()));
            let rank0 = &plan.sub_node_list[placement.table.ranks[0]];
            let master = rows.master_addr(rank0.ip.as_deref(), view);
            indexed_job(job, placement, &master, &annotations)
        }
        Launcher::Mpi => {
            data["mpi-launch.sh"] = json!(mpi_launch_sh(job, placement));
            data["mpirun.sh"] = json!(mpirun_sh(job, placement));
            data["rank-env.sh"] = json!(rank_env_sh(!topologies.is_empty()));
            mpi_job(job, placement, &annotations)
        }
    };
    check_config_map_size(&job.name, &config_map_name(job), &data)?;
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(job, &config_map_name(job), Some(annotations.clone())),
        "data": data,
    });
    let mut owned = vec![config_map];
    if job.launcher == Launcher::Indexed {
        owned.push(headless_service(job));
    }
    Ok(Manifests {
        workload,
        owned,
        secret: None,
    })
}

/// The headless Service `<job>` that gives the job's pods DNS names.
fn headless_service(job: &JobSpec) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(job, &job.name, None),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": true,
            "selector": { format!("{PREFIX}job"): job.name },
        },
    })
}

/// The annotation that marks a DRA submission's ConfigMap (value `dra`),
/// by which `status` and `delete` find it.
pub(crate) fn placement_annotation() -> String {
    format!("{PREFIX}placement")
}

/// The annotation of a DRA submission's ConfigMap with its rank count.
pub(crate) fn ranks_annotation() -> String {
    format!("{PREFIX}ranks")
}

/// The annotations of the workload and the ConfigMap.
fn job_annotations(plan: &Plan, placement: &Placement, job: &JobSpec) -> Value {
    let mut a = json!({
        format!("{PREFIX}plan"): plan.name,
        format!("{PREFIX}algorithm"): job.algorithm.as_str(),
        format!("{PREFIX}engine"): job.engine.as_str(),
        format!("{PREFIX}rank-table-method"): placement.method,
        format!("{PREFIX}worst-link-load"): placement.worst_load.to_string(),
        format!("{PREFIX}lower-bound"): placement.lower_bound.to_string(),
        format!("{PREFIX}nodes"): placement.nodes.len().to_string(),
    });
    if job.placement.mode == PlacementMode::Dra {
        a[placement_annotation()] = json!("dra");
        a[ranks_annotation()] = json!(placement.ranks.len().to_string());
        a[format!("{PREFIX}dra-profile")] = json!(job.placement.profile.name);
    }
    a
}

/// The label that puts a workload in a Kueue LocalQueue.
pub(crate) const KUEUE_QUEUE: &str = "kueue.x-k8s.io/queue-name";
/// Kueue's plain-pod group label and total-count annotation (DRA pods).
pub(crate) const KUEUE_POD_GROUP: &str = "kueue.x-k8s.io/pod-group-name";
/// See [`KUEUE_POD_GROUP`].
pub(crate) const KUEUE_POD_GROUP_COUNT: &str = "kueue.x-k8s.io/pod-group-total-count";

/// Metadata of the workload: with a queue, its Kueue label.
fn workload_metadata(job: &JobSpec, annotations: &Value) -> Value {
    let mut m = metadata(job, &job.name, Some(annotations.clone()));
    if let Some(q) = &job.queue {
        m["labels"][KUEUE_QUEUE] = json!(q);
    }
    m
}

/// The settings every rank pod shares: `[pod]` of the job file, the
/// memory-backed `/dev/shm`, `IPC_LOCK`.
fn apply_pod_settings(job: &JobSpec, template_meta: &mut Value, spec: &mut Value) {
    let pod = &job.pod;
    if !pod.annotations.is_empty() {
        let a = template_meta
            .as_object_mut()
            .map(|m| m.entry("annotations").or_insert_with(|| json!({})));
        if let Some(a) = a {
            for (k, v) in &pod.annotations {
                a[k] = json!(v);
            }
        }
    }
    if !pod.tolerations.is_empty() {
        spec["tolerations"] = json!(pod.tolerations);
    }
    if let Some(p) = &pod.priority_class_name {
        spec["priorityClassName"] = json!(p);
    }
    if let Some(s) = &pod.scheduler_name {
        spec["schedulerName"] = json!(s);
    }
    let mut shm = json!({ "medium": "Memory" });
    if let Some(size) = &pod.shm_size {
        shm["sizeLimit"] = json!(size.times(1));
    }
    let mut volumes = vec![json!({ "name": "dshm", "emptyDir": shm })];
    let mut mounts = vec![json!({ "name": "dshm", "mountPath": "/dev/shm" })];
    for v in &pod.volumes {
        let mut vol = Value::Object(v.source.clone());
        vol["name"] = json!(v.name);
        volumes.push(vol);
        let mut mount = json!({ "name": v.name, "mountPath": v.mount_path });
        if v.read_only {
            mount["readOnly"] = json!(true);
        }
        mounts.push(mount);
    }
    if let Some(list) = spec["volumes"].as_array_mut() {
        list.extend(volumes);
    }
    let mut caps = vec!["IPC_LOCK".to_string()];
    caps.extend(pod.capabilities.iter().cloned());
    if let Some(c) = spec["containers"].get_mut(0) {
        if let Some(list) = c["volumeMounts"].as_array_mut() {
            list.extend(mounts);
        }
        c["securityContext"] = json!({ "capabilities": { "add": caps } });
    }
}

/// One rank with everything the files need.
struct Row {
    rank: usize,
    server: String,
    slot: String,
    gpu: String,
    nic: String,
    switch: String,
    part: String,
    node: String,
    local_rank: usize,
    /// The rank's GPU by index when its NIC is shared by several GPUs.
    gpu_index: Option<usize>,
    mpi_slot: String,
    env: BTreeMap<String, String>,
}

struct RankRows {
    rows: Vec<Row>,
}

/// The host-configuration variables of `rank-env.csv`, in column order;
/// `LOCAL_RANK` and `LOCAL_WORLD_SIZE` come from the job's unit
/// ([`RankRows::new`]).
const ENV_COLUMNS: [&str; 7] = [
    "CUDA_VISIBLE_DEVICES",
    "NCCL_IB_HCA",
    "NCCL_IB_TC",
    "NCCL_IB_GID_INDEX",
    "NCCL_SOCKET_IFNAME",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
];

impl RankRows {
    /// The rows of `placement`. With [`Unit::Gpu`] each rank sees its own
    /// GPU (`CUDA_VISIBLE_DEVICES` one index, `LOCAL_RANK=0`,
    /// `LOCAL_WORLD_SIZE=1`); with [`Unit::Server`] every rank of a Node
    /// sees all the Node's ranks' GPUs in rank order, and `LOCAL_RANK` is
    /// its position among them, as torchrun numbers a node's processes.
    fn new(
        plan: &Plan,
        placement: &Placement,
        env: &BTreeMap<String, BTreeMap<String, String>>,
        unit: Unit,
    ) -> Result<Self> {
        let table: Vec<usize> = placement.ranks.iter().map(|r| r.sub_node).collect();
        // One rank per GPU on a NIC shared by several: each rank sees its
        // own GPU (the host file lists all of the NIC's).
        let gpus = planner::ranks::rank_gpus(plan, &table);
        let mut rows = Vec::with_capacity(placement.ranks.len());
        for (k, r) in placement.ranks.iter().enumerate() {
            let sn = &plan.sub_node_list[r.sub_node];
            let mut env = env
                .get(sn.id.as_str())
                .cloned()
                .ok_or_else(|| Error::Manifest {
                    job: placement.job.clone(),
                    message: format!("the host configuration has no sub-node {}", sn.id),
                })?;
            let shared = sn.gpu_count() > 1;
            if let (true, Some(g)) = (shared, gpus[k]) {
                env.insert("CUDA_VISIBLE_DEVICES".to_string(), g.to_string());
            }
            if let Err(e) = planner::names::check_mpi_host(&r.node) {
                return Err(Error::Manifest {
                    job: placement.job.clone(),
                    message: format!(
                        "Node {}: an Open MPI rankfile and hostfile cannot carry its name: {e}; map the server to a Node whose name has letters, digits, `.`, `-` and `_` only",
                        planner::names::escape(&r.node)
                    ),
                });
            }
            for value in env.values() {
                if value.contains([',', '\n', '\r', '"']) || value.chars().any(char::is_control) {
                    return Err(Error::Manifest {
                        job: placement.job.clone(),
                        message: format!(
                            "the host configuration of sub-node {} has a value with a comma, quote or control character ({}), which rank-env.csv cannot carry; rename the NIC or netdev in the inventory",
                            sn.id,
                            planner::names::escape(value)
                        ),
                    });
                }
            }
            rows.push(Row {
                rank: r.rank,
                server: r.server.clone(),
                slot: r.slot.clone(),
                // The plan names only a shared NIC's first GPU; the
                // others go by `gpu_index`.
                gpu: if shared && gpus[k] != sn.gpu_index {
                    String::new()
                } else {
                    sn.gpu.as_deref().unwrap_or_default().to_string()
                },
                gpu_index: gpus[k].filter(|_| shared),
                nic: sn.nic.to_string(),
                switch: sn.switch.to_string(),
                part: sn.part_or_tier.as_str().to_string(),
                node: r.node.clone(),
                local_rank: r.local_rank,
                mpi_slot: planner::ranks::format::rankfile_slot(sn.socket_index),
                env,
            });
        }
        let mut on_node: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (k, row) in rows.iter().enumerate() {
            on_node.entry(row.node.clone()).or_default().push(k);
        }
        for members in on_node.values() {
            // `:` between the GPUs: rank-env.csv carries no comma inside a
            // field (the scripts split it with awk -F, and read), and the
            // scripts turn it into the commas CUDA_VISIBLE_DEVICES takes.
            let visible = members
                .iter()
                .map(|&k| {
                    rows[k]
                        .env
                        .get("CUDA_VISIBLE_DEVICES")
                        .cloned()
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join(":");
            for (position, &k) in members.iter().enumerate() {
                let (local, size) = match unit {
                    Unit::Gpu => (0, 1),
                    Unit::Server => (position, members.len()),
                };
                let env = &mut rows[k].env;
                if unit == Unit::Server {
                    env.insert("CUDA_VISIBLE_DEVICES".to_string(), visible.clone());
                }
                env.insert("LOCAL_RANK".to_string(), local.to_string());
                env.insert("LOCAL_WORLD_SIZE".to_string(), size.to_string());
            }
        }
        Ok(RankRows { rows })
    }

    /// `ranks.csv` (RFC 4180), read back by `rank_check::read_table`
    /// (which finds columns by name); with one rank per GPU on a shared
    /// NIC, a `gpu_index` column last.
    fn ranks_csv(&self) -> String {
        let per_gpu = self.rows.iter().any(|r| r.gpu_index.is_some());
        let mut header: Vec<String> = [
            "rank", "server", "sub_node", "gpu", "nic", "switch", "part", "node",
        ]
        .map(String::from)
        .to_vec();
        if per_gpu {
            header.push("gpu_index".to_string());
        }
        let records = self.rows.iter().map(|r| {
            let mut record = vec![
                r.rank.to_string(),
                r.server.clone(),
                r.slot.clone(),
                r.gpu.clone(),
                r.nic.clone(),
                r.switch.clone(),
                r.part.clone(),
                r.node.clone(),
            ];
            if per_gpu {
                record.push(r.gpu_index.map(|g| g.to_string()).unwrap_or_default());
            }
            record
        });
        planner::text::write_csv(std::iter::once(header).chain(records))
    }

    /// `rank-env.csv` (RFC 4180). The launch scripts split it with
    /// `awk -F,`, so [`RankRows::new`] refuses values with a comma or
    /// quote: no field is ever quoted.
    fn env_csv(&self) -> String {
        let header = ["rank", "node", "local_rank", "slot"]
            .into_iter()
            .chain(ENV_COLUMNS)
            .map(String::from)
            .collect::<Vec<_>>();
        let records = self.rows.iter().map(|r| {
            [
                r.rank.to_string(),
                r.node.clone(),
                r.local_rank.to_string(),
                r.mpi_slot.clone(),
            ]
            .into_iter()
            .chain(
                ENV_COLUMNS
                    .iter()
                    .map(|c| r.env.get(*c).cloned().unwrap_or_default()),
            )
            .collect::<Vec<_>>()
        });
        planner::text::write_csv(std::iter::once(header).chain(records))
    }

    fn rankfile(&self) -> String {
        let mut s = String::new();
        for r in &self.rows {
            let _ = writeln!(s, "rank {}={} slot={}", r.rank, r.node, r.mpi_slot);
        }
        s
    }

    fn hostfile(&self, placement: &Placement) -> String {
        let mut s = String::new();
        for n in &placement.nodes {
            let _ = writeln!(s, "{} slots={}", n.node, n.ranks.len());
        }
        s
    }

    /// Rank 0's address for `MASTER_ADDR`: its NIC's IPv4 address from the
    /// plan; else its Node's InternalIP as the API reports it (the pods use
    /// the host's network); else (`--offline`) its Node name.
    fn master_addr(&self, plan_ip: Option<&str>, view: &ClusterView) -> String {
        if let Some(ip) = plan_ip {
            return ip.split('/').next().unwrap_or(ip).to_string();
        }
        let node = self
            .rows
            .first()
            .map(|r| r.node.as_str())
            .unwrap_or_default();
        view.node(node)
            .and_then(|n| n.address.clone())
            .unwrap_or_else(|| node.to_string())
    }
}

/// Node affinity to the chosen Nodes and one pod of `role` per Node.
fn affinity(job: &JobSpec, placement: &Placement, role: &str) -> Value {
    let mut names: Vec<&str> = placement.nodes.iter().map(|n| n.node.as_str()).collect();
    names.sort_unstable();
    json!({
        "nodeAffinity": node_affinity(&names),
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {
                    "matchLabels": {
                        format!("{PREFIX}job"): job.name,
                        format!("{PREFIX}role"): role,
                    },
                },
                "topologyKey": "kubernetes.io/hostname",
            }],
        },
    })
}

/// Required node affinity to the Nodes `names` (`matchFields` on
/// `metadata.name`: the Node name itself, not a label).
fn node_affinity(names: &[&str]) -> Value {
    json!({
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{
                "matchFields": [{
                    "key": "metadata.name",
                    "operator": "In",
                    "values": names,
                }],
            }],
        },
    })
}

/// Requests and limits of one rank pod: every GPU of the Node, and the
/// per-rank CPU and memory times the most ranks a Node carries.
fn resources(job: &JobSpec, placement: &Placement) -> Value {
    let per_node = placement
        .nodes
        .iter()
        .map(|n| n.ranks.len())
        .max()
        .unwrap_or(0);
    let gpus = placement.nodes.first().map_or(0, |n| n.gpus);
    let mut r = serde_json::Map::new();
    r.insert(job.resources.gpu.clone(), json!(gpus.to_string()));
    if let Some(c) = &job.resources.cpu {
        r.insert("cpu".into(), json!(c.times(per_node)));
    }
    if let Some(m) = &job.resources.memory {
        r.insert("memory".into(), json!(m.times(per_node)));
    }
    for (name, count) in &job.resources.extra {
        r.insert(name.clone(), json!(count.to_string()));
    }
    let r = Value::Object(r);
    json!({ "limits": r, "requests": r })
}

/// The name of the Secret of the job named `job`, which holds the probe's
/// job secret.
pub fn token_secret_name(job: &str) -> String {
    format!("{job}-probe-token")
}

/// The key of the job secret in [`token_secret_name`].
pub const TOKEN_KEY: &str = "token";

/// The Secret `<job>-probe-token` holding `secret` under [`TOKEN_KEY`]
/// (`type: Opaque`, `data` base64 as k8s-openapi's `ByteString` writes it:
/// kubernetes.io/docs/concepts/configuration/secret, v1.34).
pub fn token_secret(job: &JobSpec, secret: &crate::probe::Secret) -> Value {
    let data = k8s_openapi::ByteString(secret.expose().to_vec());
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(job, &token_secret_name(&job.name), None),
        "type": "Opaque",
        "data": { TOKEN_KEY: data },
    })
}

/// `PROBE_TOKEN` from the job's Secret and `EFLOPS_PROBE_AUTH=required`.
/// The reference is not optional: while the Secret cannot be fetched, the
/// kubelet does not run the pod (kubernetes.io/docs/concepts/configuration/
/// secret, "Optional Secrets", v1.34).
fn token_env(job: &JobSpec) -> [Value; 2] {
    use crate::probe::auth::{AUTH_ENV, ENV, REQUIRED};
    [
        json!({
            "name": ENV,
            "valueFrom": { "secretKeyRef": { "name": token_secret_name(&job.name), "key": TOKEN_KEY } },
        }),
        json!({ "name": AUTH_ENV, "value": REQUIRED }),
    ]
}

fn node_name_env() -> Value {
    json!({ "name": "NODE_NAME", "valueFrom": { "fieldRef": { "fieldPath": "spec.nodeName" } } })
}

/// What the job's engine needs set for every rank to run the schedule
/// its table was made for, from the engine's row
/// ([`planner::ranks::engine::EngineInfo::env`]): `NCCL_ALGO=Ring` for NCCL (the
/// table is checked for NCCL's ring; its tree, NVLS and CollNet would
/// ignore the order; NCCL 2.30 env.html, "NCCL_ALGO").
fn engine_env(job: &JobSpec) -> &'static [(&'static str, &'static str)] {
    job.engine.info().env
}

/// The engine's variables, then the job file's `[env]`.
fn user_env(job: &JobSpec) -> Vec<Value> {
    engine_env(job)
        .iter()
        .map(|&(k, v)| json!({ "name": k, "value": v }))
        .chain(
            job.env
                .iter()
                .map(|(k, v)| json!({ "name": k, "value": v })),
        )
        .collect()
}

fn config_volume(job: &JobSpec) -> Value {
    json!({
        "name": "eflops-ranks",
        "configMap": { "name": config_map_name(job), "defaultMode": 0o555 },
    })
}

fn rank_check_container(job: &JobSpec) -> Value {
    json!({
        "name": "rank-check",
        "image": job.rank_check_image(),
        "command": ["provisioner", "rank-check", "--table", format!("{MOUNT}/ranks.csv")],
        "env": [node_name_env()],
        "volumeMounts": [{ "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true }],
    })
}

/// `sh launch.sh -- COMMAND`: the command of a pod that starts one
/// process per rank of its Node.
fn launch_command(job: &JobSpec) -> Vec<String> {
    let mut command = vec![
        "sh".to_string(),
        format!("{MOUNT}/launch.sh"),
        "--".to_string(),
    ];
    command.extend(job.command.iter().cloned());
    command
}

fn indexed_job(job: &JobSpec, placement: &Placement, master: &str, annotations: &Value) -> Value {
    let pods = placement.nodes.len();
    let mut env = vec![
        node_name_env(),
        json!({ "name": "WORLD_SIZE", "value": placement.ranks.len().to_string() }),
        json!({ "name": "MASTER_ADDR", "value": master }),
        json!({ "name": "MASTER_PORT", "value": job.master_port.to_string() }),
        json!({ "name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID" }),
    ];
    env.extend(token_env(job));
    env.extend(user_env(job));
    let command = launch_command(job);
    let mut obj = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": workload_metadata(job, annotations),
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels_with(job, "rank") },
                "spec": {
                    "subdomain": job.name,
                    "restartPolicy": "Never",
                    "hostNetwork": true,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "affinity": affinity(job, placement, "rank"),
                    "initContainers": [rank_check_container(job)],
                    "containers": [{
                        "name": "ranks",
                        "image": job.image,
                        "command": command,
                        "args": job.args,
                        "env": env,
                        "resources": resources(job, placement),
                        "volumeMounts": [{ "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true }],
                    }],
                    "volumes": [config_volume(job)],
                },
            },
        },
    });
    if job.queue.is_some() {
        // Kueue admits the Job by unsuspending it once the queue has quota.
        obj["spec"]["suspend"] = json!(true);
    }
    let t = &mut obj["spec"]["template"];
    let (mut meta, mut spec) = (t["metadata"].take(), t["spec"].take());
    apply_pod_settings(job, &mut meta, &mut spec);
    (t["metadata"], t["spec"]) = (meta, spec);
    obj
}

fn mpi_job(job: &JobSpec, placement: &Placement, annotations: &Value) -> Value {
    let workers = placement.nodes.len();
    let slots = placement
        .nodes
        .iter()
        .map(|n| n.ranks.len())
        .max()
        .unwrap_or(1);
    let mut launcher_cmd = vec![
        "sh".to_string(),
        format!("{MOUNT}/mpi-launch.sh"),
        "--".to_string(),
    ];
    launcher_cmd.extend(job.command.iter().cloned());
    launcher_cmd.extend(job.args.iter().cloned());
    let mut launcher_env = vec![json!({ "name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID" })];
    launcher_env.extend(token_env(job));
    launcher_env.extend(user_env(job));
    let mut worker_env = vec![node_name_env()];
    worker_env.extend(user_env(job));
    let mounts = json!([
        { "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true },
        { "name": "eflops-run", "mountPath": RUN_DIR },
    ]);
    let mut obj = json!({
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": workload_metadata(job, annotations),
        "spec": {
            "slotsPerWorker": slots,
            "mpiImplementation": "OpenMPI",
            "runPolicy": { "cleanPodPolicy": "Running", "backoffLimit": 0 },
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": { "labels": labels_with(job, "launcher") },
                        "spec": {
                            "containers": [{
                                "name": "launcher",
                                "image": job.launcher_image.as_deref().unwrap_or(&job.image),
                                "command": launcher_cmd,
                                "env": launcher_env,
                                "volumeMounts": [{ "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true }],
                            }],
                            "volumes": [config_volume(job)],
                        },
                    },
                },
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": { "labels": labels_with(job, "worker") },
                        "spec": {
                            "hostNetwork": true,
                            "dnsPolicy": "ClusterFirstWithHostNet",
                            "affinity": affinity(job, placement, "worker"),
                            "initContainers": [rank_check_container(job)],
                            "containers": [{
                                "name": "worker",
                                "image": job.image,
                                "command": ["sh", "-c", format!(
                                    "printf '%s\\n' \"$NODE_NAME\" > {RUN_DIR}/node && exec /usr/sbin/sshd -De -p {}",
                                    job.ssh_port
                                )],
                                "env": worker_env,
                                "resources": resources(job, placement),
                                "volumeMounts": mounts,
                            }],
                            "volumes": [config_volume(job), { "name": "eflops-run", "emptyDir": {} }],
                        },
                    },
                },
            },
        },
    });
    if job.queue.is_some() {
        obj["spec"]["runPolicy"]["suspend"] = json!(true);
    }
    let t = &mut obj["spec"]["mpiReplicaSpecs"]["Worker"]["template"];
    let (mut meta, mut spec) = (t["metadata"].take(), t["spec"].take());
    apply_pod_settings(job, &mut meta, &mut spec);
    (t["metadata"], t["spec"]) = (meta, spec);
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_map_over_one_mib_is_refused_naming_the_limit() {
        let xml = "x".repeat(600 * 1024);
        let mut data = json!({ "ranks.csv": "rank\n", "vm01.nccl-topo.xml": xml });
        check_config_map_size("j", "j-ranks", &data).unwrap();
        data["vm02.nccl-topo.xml"] = json!(xml);
        let e = check_config_map_size("j", "j-ranks", &data)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ConfigMap j-ranks would hold 1228850 bytes"),
            "{e}"
        );
        assert!(e.contains("1228836 of them NCCL topology files"), "{e}");
        assert!(e.contains("limit of 1 MiB (1048576 bytes)"), "{e}");
    }

    #[test]
    fn the_topology_lines_land_inside_both_scripts() {
        for script in [launch_sh, rank_env_sh] {
            assert_eq!(script(true).matches("export NCCL_TOPO_FILE=").count(), 1);
            assert_eq!(script(false).matches("NCCL_TOPO_FILE").count(), 0);
        }
        assert!(
            launch_sh(true)
                .contains("\n    topo=\"${EFLOPS_DIR:-/etc/eflops}/$NODE_NAME.nccl-topo.xml\"\n")
        );
        assert!(
            rank_env_sh(true)
                .contains("\ntopo=\"${EFLOPS_DIR:-/etc/eflops}/$node.nccl-topo.xml\"\n")
        );
        // Both scripts give a rank the same environment, from one text.
        for line in [
            "export NCCL_IB_HCA=\"$hca\"",
            "GLOO_SOCKET_IFNAME=\"${ifname#=}\"",
            "CUDA_VISIBLE_DEVICES=\"$cvd\"",
        ] {
            assert!(
                launch_sh(false).contains(line) && rank_env_sh(false).contains(line),
                "{line}"
            );
        }
    }
}
