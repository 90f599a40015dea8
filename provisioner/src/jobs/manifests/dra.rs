//! DRA placement's objects: the ConfigMap, one ResourceClaimTemplate per
//! rank, and the ranks as one JobSet (a replicated Job per rank) or, when
//! the job file asks for it, as bare Pods owned by the ConfigMap.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use planner::checked::CheckedPlan;

use super::{
    ENV_COLUMNS, KUEUE_POD_GROUP, KUEUE_POD_GROUP_COUNT, KUEUE_QUEUE, MOUNT, RankRows, Row,
    apply_pod_settings, config_map_name, config_volume, headless_service, job_annotations, labels,
    labels_with, launch_command, metadata, node_affinity, node_name_env, rank_check_container,
    token_env, user_env,
};
use super::{check_config_map_size, nccl_topologies, scripts::launch_sh};
use crate::error::{Error, Result};
use crate::jobs::dra::{
    PlanField, SubNodeDevices, claim_spec, node_annotation, server_claim_spec, sub_node_annotation,
    sub_nodes_annotation,
};
use crate::jobs::job::{Gang, JobSpec, Unit};
use crate::jobs::labels::{GANG_CONTROLLER, PREFIX, gang_label};
use crate::jobs::placement::{PlacedNode, PlacedRank, Placement};
use crate::jobs::view::Manifests;

/// Kueue's annotation of a pod group's Pod: `false` makes Kueue finish the
/// group once every pod has ended (Kueue v0.19.2,
/// `pkg/controller/jobs/pod/constants/constants.go`,
/// `RetriableInGroupAnnotationKey`).
pub(crate) const KUEUE_RETRIABLE_IN_GROUP: &str = "kueue.x-k8s.io/retriable-in-group";

/// The name of rank `rank`'s claim template (and, with bare Pods, of its
/// Pod): `<job>-<rank>`.
pub(crate) fn rank_pod_name(job: &JobSpec, rank: usize) -> String {
    format!("{}-{rank}", job.name)
}

/// The replicated Job of rank `rank` in the job's JobSet: `rank-<rank>`.
pub(crate) fn replicated_job_name(rank: usize) -> String {
    format!("rank-{rank}")
}

/// The claim template (and, with bare Pods, the Pod) of the `k`-th server
/// of a whole-server job (`[placement] unit = "server"`):
/// `<job>-server-<k>`.
pub(crate) fn server_pod_name(job: &JobSpec, k: usize) -> String {
    format!("{}-{}", job.name, server_job_name(k))
}

/// The replicated Job of the `k`-th server in a whole-server job's JobSet:
/// `server-<k>`.
pub(crate) fn server_job_name(k: usize) -> String {
    format!("server-{k}")
}

/// `MASTER_ADDR` of a DRA job: the DNS name of rank 0's pod (the pod of
/// rank 0, or of the first server, which carries rank 0) under the
/// headless Service `<job>`. Bare Pods set `hostname` `<job>-0`
/// themselves; a JobSet's pods are
/// `<jobSet.name>-<replicatedJob.name>-<job-index>-<pod-index>.<subdomain>`
/// (`api/jobset/v1alpha2/jobset_types.go`, `Network.EnableDNSHostnames`,
/// v0.12.0), with the subdomain `<job>` and one Job and pod per rank (or
/// server).
pub(crate) fn master_dns(job: &JobSpec, unit: Unit) -> String {
    let host = match (job.failure.gang, unit) {
        (Gang::JobSet, Unit::Gpu) => format!("{}-{}-0-0", job.name, replicated_job_name(0)),
        (Gang::JobSet, Unit::Server) => format!("{}-{}-0-0", job.name, server_job_name(0)),
        (Gang::None | Gang::Controller, Unit::Gpu) => rank_pod_name(job, 0),
        (Gang::None | Gang::Controller, Unit::Server) => server_pod_name(job, 0),
    };
    format!("{host}.{}.{}.svc", job.name, job.namespace)
}

/// DRA placement: the ConfigMap, one ResourceClaimTemplate per rank and the
/// ranks, either as one JobSet (`[failure] gang = "jobset"`, the
/// default: the workload, owning the ConfigMap and the templates; JobSet
/// makes the headless Service) or as bare Pods (`gang = "none"`: the
/// ConfigMap is the root every other object is owned by, with our headless
/// Service).
pub(super) fn build_dra(
    plan: &CheckedPlan,
    placement: &Placement,
    job: &JobSpec,
    env: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<Manifests> {
    let unit = crate::jobs::placement::unit(plan, job);
    let rows = RankRows::new(plan, placement, env, unit)?;
    let annotations = job_annotations(plan, placement, job);
    let mut data = json!({
        "ranks.csv": rows.ranks_csv(),
        "rank-env.csv": rows.env_csv(),
    });
    // NCCL's topology file of each Node whose server's PCIe tree the plan
    // carries, as the other placements ship it.
    let topologies = nccl_topologies(plan, placement)?;
    for (key, xml) in &topologies {
        data[key] = json!(xml);
    }
    if unit == Unit::Server {
        // A server's pod starts one process per rank, as the whole-Node
        // Indexed Job does; it exports its Node's topology file.
        data["launch.sh"] = json!(launch_sh(!topologies.is_empty()));
    }
    check_config_map_size(&job.name, &config_map_name(job), &data)?;
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(job, &config_map_name(job), Some(annotations.clone())),
        "data": data,
    });
    let world = placement.ranks.len();
    // Rank 0's NIC address, where the driver hands the physical NIC (and
    // its address) to the pod: a program that should move its data over
    // the fabric rather than the pod network meets rank 0 there.
    let rank0_nic = placement
        .table
        .ranks
        .first()
        .and_then(|&i| plan.sub_node_list[i].ip.as_deref())
        .filter(|_| job.placement.profile.nic.value == PlanField::Nic)
        .map(|ip| ip.split('/').next().unwrap_or(ip).to_string());
    let cx = PodContext {
        job,
        world,
        master: master_dns(job, unit),
        rank0_nic,
        topologies: topologies
            .keys()
            .filter_map(|k| k.strip_suffix(".nccl-topo.xml"))
            .map(str::to_string)
            .collect(),
    };
    let manifest_error = |message: String| Error::Manifest {
        job: job.name.clone(),
        message,
    };
    // Per pod: its replicated Job, its name (that of its claim template),
    // labels and annotations, and spec.
    let mut templates = Vec::new();
    let mut pods: Vec<(String, String, Value, Value)> = Vec::new();
    match unit {
        Unit::Gpu => {
            for (r, row) in placement.ranks.iter().zip(&rows.rows) {
                let sn = &plan.sub_node_list[r.sub_node];
                let devices = placement.devices.get(r.rank).ok_or_else(|| {
                    manifest_error(format!("rank {} has no devices in the placement", r.rank))
                })?;
                let spec = claim_spec(&job.placement.profile, sn).map_err(manifest_error)?;
                let name = rank_pod_name(job, r.rank);
                templates.push(claim_template(
                    job,
                    &name,
                    (sub_node_annotation(), sn.id.to_string()),
                    &r.node,
                    std::slice::from_ref(devices),
                    spec,
                ));
                let (meta, spec) = rank_pod(&cx, r, row, &name);
                pods.push((replicated_job_name(r.rank), name, meta, spec));
            }
        }
        Unit::Server => {
            for (k, n) in placement.nodes.iter().enumerate() {
                let mut sub_nodes = Vec::with_capacity(n.ranks.len());
                let mut devices = Vec::with_capacity(n.ranks.len());
                for &r in &n.ranks {
                    let placed = placement.ranks.get(r).ok_or_else(|| {
                        manifest_error(format!("rank {r} of Node {} is not placed", n.node))
                    })?;
                    sub_nodes.push(&plan.sub_node_list[placed.sub_node]);
                    devices.push(placement.devices.get(r).cloned().ok_or_else(|| {
                        manifest_error(format!("rank {r} has no devices in the placement"))
                    })?);
                }
                let spec = server_claim_spec(&job.placement.profile, &sub_nodes)
                    .map_err(manifest_error)?;
                let ids: Vec<&str> = sub_nodes.iter().map(|sn| sn.id.as_str()).collect();
                let name = server_pod_name(job, k);
                templates.push(claim_template(
                    job,
                    &name,
                    (sub_nodes_annotation(), ids.join(",")),
                    &n.node,
                    &devices,
                    spec,
                ));
                let (meta, spec) = server_pod(&cx, n, &name);
                pods.push((server_job_name(k), name, meta, spec));
            }
        }
    }
    match job.failure.gang {
        Gang::JobSet => {
            let mut owned = vec![config_map];
            owned.extend(templates);
            Ok(Manifests {
                workload: job_set(job, &annotations, pods),
                owned,
                secret: None,
            })
        }
        Gang::None | Gang::Controller => {
            let stopped = job.failure.gang == Gang::Controller;
            let mut owned = vec![headless_service(job)];
            owned.extend(templates);
            owned.extend(pods.into_iter().map(|(_, name, mut meta, mut spec)| {
                meta["name"] = json!(name);
                meta["namespace"] = json!(job.namespace);
                if let Some(q) = &job.queue {
                    meta["labels"][KUEUE_QUEUE] = json!(q);
                    meta["labels"][KUEUE_POD_GROUP] = json!(job.name);
                    meta["annotations"][KUEUE_POD_GROUP_COUNT] = json!(world.to_string());
                    if stopped {
                        // Kueue v0.19.2 finishes the group's Workload once
                        // every pod has ended, rather than wait for
                        // replacements (plain_pods.md, "Termination";
                        // pkg/controller/jobs/pod/pod_controller.go,
                        // `Finished`).
                        meta["annotations"][KUEUE_RETRIABLE_IN_GROUP] = json!("false");
                    }
                }
                if stopped {
                    meta["labels"][gang_label()] = json!(GANG_CONTROLLER);
                }
                spec["hostname"] = json!(name);
                spec["subdomain"] = json!(job.name);
                json!({ "apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec })
            }));
            Ok(Manifests {
                workload: config_map,
                owned,
                secret: None,
            })
        }
    }
}

/// A ResourceClaimTemplate `name` with claim `spec`, annotated with the
/// sub-node(s) it holds (`sub_nodes`: the annotation and its value), its
/// Node and the devices found for them.
fn claim_template(
    job: &JobSpec,
    name: &str,
    sub_nodes: (String, String),
    node: &str,
    devices: &[SubNodeDevices],
    spec: Value,
) -> Value {
    let list = |each: &dyn Fn(&SubNodeDevices) -> Vec<String>| {
        devices.iter().flat_map(each).collect::<Vec<_>>().join(", ")
    };
    let mut meta = metadata(job, name, None);
    meta["annotations"] = json!({
        sub_nodes.0: sub_nodes.1,
        node_annotation(): node,
        format!("{PREFIX}gpu"): list(&|d| vec![d.gpu.to_string()]),
        format!("{PREFIX}nic"): list(&|d| d.nics.iter().map(ToString::to_string).collect()),
    });
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": meta,
        "spec": { "spec": spec },
    })
}

/// The API version of the JobSets we write (kubernetes-sigs/jobset v0.12.0,
/// `api/jobset/v1alpha2`).
pub(crate) const JOBSET_API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";

/// The JobSet of a DRA job: one replicated Job per rank, or per server
/// with `unit = "server"` (`replicas: 1`,
/// `parallelism` and `completions` 1, `backoffLimit: 0`, `Indexed`), each
/// with its rank's pod: its Node, its claim template. Read from
/// `api/jobset/v1alpha2/jobset_types.go` and `pkg/webhooks/jobset_webhook.go`
/// at v0.12.0:
///
/// - `failurePolicy.maxRestarts` = `[failure] restarts`, no rules: a failed
///   Job (a failed rank: `backoffLimit: 0`) triggers `RestartJobSet` while
///   restarts are left, else fails the JobSet; `restartStrategy:
///   BlockingRecreate` deletes every Job and pod of the attempt before any
///   of the next starts, so ranks of two attempts never meet;
/// - `successPolicy: {operator: All}`: it succeeds when every rank did;
/// - `network`: DNS host names under the subdomain `<job>` (the headless
///   Service JobSet makes), published before the pods are ready;
/// - with a queue, Kueue's `kueue.x-k8s.io/queue-name` label and
///   `suspend: true` (Kueue v0.19.2, site/content/en/docs/tasks/run/jobsets.md):
///   Kueue admits the JobSet as one Workload, one PodSet per rank.
fn job_set(job: &JobSpec, annotations: &Value, pods: Vec<(String, String, Value, Value)>) -> Value {
    let mut meta = metadata(job, &job.name, Some(annotations.clone()));
    if let Some(q) = &job.queue {
        meta["labels"][KUEUE_QUEUE] = json!(q);
    }
    let replicated: Vec<Value> = pods
        .into_iter()
        .map(|(replicated, _, meta, spec)| {
            json!({
                "name": replicated,
                "replicas": 1,
                "template": {
                    "metadata": { "labels": labels(job) },
                    "spec": {
                        "completionMode": "Indexed",
                        "completions": 1,
                        "parallelism": 1,
                        "backoffLimit": 0,
                        "template": { "metadata": meta, "spec": spec },
                    },
                },
            })
        })
        .collect();
    let mut spec = json!({
        "replicatedJobs": replicated,
        "network": {
            "enableDNSHostnames": true,
            "subdomain": job.name,
            "publishNotReadyAddresses": true,
        },
        "successPolicy": { "operator": "All" },
        "failurePolicy": {
            "maxRestarts": job.failure.restarts,
            "restartStrategy": "BlockingRecreate",
        },
    });
    if job.queue.is_some() {
        spec["suspend"] = json!(true);
    }
    json!({
        "apiVersion": JOBSET_API_VERSION,
        "kind": "JobSet",
        "metadata": meta,
        "spec": spec,
    })
}

/// The one container of a DRA pod.
struct Container {
    /// `rank` (a rank's pod) or `ranks` (a server's).
    name: &'static str,
    command: Vec<String>,
    env: Vec<Value>,
    /// Ranks it runs: `[resources]` cpu and memory are per rank.
    ranks: usize,
}

/// What every pod of a DRA job shares.
struct PodContext<'a> {
    job: &'a JobSpec,
    /// `WORLD_SIZE`.
    world: usize,
    /// `MASTER_ADDR`: rank 0's pod ([`master_dns`]).
    master: String,
    /// `EFLOPS_RANK0_NIC_ADDR`, where the driver hands over the NIC.
    rank0_nic: Option<String>,
    /// The Nodes whose NCCL topology file the ConfigMap holds.
    topologies: BTreeSet<String>,
}

impl PodContext<'_> {
    /// The variables every pod of the job gets: `first`, `WORLD_SIZE`,
    /// `local`, `MASTER_ADDR`, `MASTER_PORT`, `EFLOPS_RANK0_NIC_ADDR`.
    fn env(&self, first: Vec<Value>, local: Vec<Value>) -> Vec<Value> {
        let job = self.job;
        let mut env = first;
        env.push(json!({ "name": "WORLD_SIZE", "value": self.world.to_string() }));
        env.extend(local);
        env.extend([
            json!({ "name": "MASTER_ADDR", "value": self.master }),
            json!({ "name": "MASTER_PORT", "value": job.master_port.to_string() }),
        ]);
        if let Some(ip) = &self.rank0_nic {
            env.push(json!({ "name": "EFLOPS_RANK0_NIC_ADDR", "value": ip }));
        }
        env
    }

    /// A pod spec pinned to `node`, claiming `claim` (`(name in the pod,
    /// template)`) in its one container `c`, with the rank-check init
    /// container `check`, then the job's `[pod]` settings.
    fn pod(
        &self,
        labels: Value,
        node: &str,
        (claim_name, claim): (&str, &str),
        check: Value,
        c: Container,
    ) -> (Value, Value) {
        let job = self.job;
        let mut meta = json!({ "labels": labels });
        let mut resources = serde_json::Map::new();
        if let Some(cpu) = &job.resources.cpu {
            resources.insert("cpu".into(), json!(cpu.times(c.ranks)));
        }
        if let Some(m) = &job.resources.memory {
            resources.insert("memory".into(), json!(m.times(c.ranks)));
        }
        for (k, v) in &job.resources.extra {
            resources.insert(k.clone(), json!(v.to_string()));
        }
        let mut container_resources = json!({ "claims": [{ "name": claim_name }] });
        if !resources.is_empty() {
            container_resources["limits"] = Value::Object(resources.clone());
            container_resources["requests"] = Value::Object(resources);
        }
        let mut spec = json!({
            "restartPolicy": "Never",
            "affinity": { "nodeAffinity": node_affinity(&[node]) },
            "resourceClaims": [{ "name": claim_name, "resourceClaimTemplateName": claim }],
            "initContainers": [check],
            "containers": [{
                "name": c.name,
                "image": job.image,
                "command": c.command,
                "args": job.args,
                "env": c.env,
                "resources": container_resources,
                "volumeMounts": [{ "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true }],
            }],
            "volumes": [config_volume(job)],
        });
        apply_pod_settings(job, &mut meta, &mut spec);
        (meta, spec)
    }
}

/// Rank `r`'s pod: its labels and annotations, and its spec (pinned to
/// its Node, claiming its template `claim`), without name or host name.
fn rank_pod(cx: &PodContext<'_>, r: &PlacedRank, row: &Row, claim: &str) -> (Value, Value) {
    let job = cx.job;
    let mut env = cx.env(
        vec![
            node_name_env(),
            json!({ "name": "RANK", "value": r.rank.to_string() }),
        ],
        vec![
            json!({ "name": "LOCAL_RANK", "value": "0" }),
            json!({ "name": "LOCAL_WORLD_SIZE", "value": "1" }),
        ],
    );
    // The NIC's variables (NCCL_IB_HCA to NCCL_SOCKET_IFNAME) from the
    // host configuration hold inside the pod
    // when the driver hands over the physical device (dranet keeps its
    // RDMA device and netdev names); a virtual function gets names of its
    // own, which NCCL then finds by itself.
    if job.placement.profile.nic.value == PlanField::Nic {
        for c in &ENV_COLUMNS[1..5] {
            if let Some(v) = row.env.get(*c).filter(|v| !v.is_empty()) {
                env.push(json!({ "name": c, "value": v }));
                if *c == "NCCL_IB_TC" {
                    // NCCL's CTS messages with the rank's own class.
                    env.push(json!({ "name": "NCCL_IB_FIFO_TC", "value": v }));
                }
                if *c == "NCCL_SOCKET_IFNAME" {
                    // Gloo takes a plain interface name (NCCL's leading
                    // `=` means "exactly this one").
                    let name = v.strip_prefix('=').unwrap_or(v);
                    env.push(json!({ "name": "GLOO_SOCKET_IFNAME", "value": name }));
                }
            }
        }
    }
    // A rank's pod runs the program itself: the Node's topology file is
    // its variable (a server's pod exports it in launch.sh).
    if cx.topologies.contains(&r.node) {
        env.push(json!({
            "name": "NCCL_TOPO_FILE",
            "value": format!("{MOUNT}/{}.nccl-topo.xml", r.node),
        }));
    }
    env.extend(token_env(job));
    env.extend(user_env(job));
    let mut labels = labels_with(job, "rank");
    labels[format!("{PREFIX}rank")] = json!(r.rank.to_string());
    let mut check = rank_check_container(job);
    if let Some(c) = check["command"].as_array_mut() {
        c.extend([json!("--rank"), json!(r.rank.to_string())]);
    }
    cx.pod(
        labels,
        &r.node,
        ("sub-node", claim),
        check,
        Container {
            name: "rank",
            command: job.command.clone(),
            env,
            ranks: 1,
        },
    )
}

/// The pod of a whole server `n` (`unit = "server"`): it claims every GPU
/// and NIC of the server (template `claim`) and runs `launch.sh`, which
/// starts one process per rank of the Node with its `RANK`,
/// `LOCAL_RANK` (its GPU's position), `LOCAL_WORLD_SIZE`,
/// `CUDA_VISIBLE_DEVICES` (every GPU of the server: the claim holds them
/// all, so the container numbers them as the host does) and its NIC's
/// `NCCL_IB_*` from `rank-env.csv`, as the whole-Node Indexed Job does.
fn server_pod(cx: &PodContext<'_>, n: &PlacedNode, claim: &str) -> (Value, Value) {
    let job = cx.job;
    let mut env = cx.env(vec![node_name_env()], Vec::new());
    env.push(json!({ "name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID" }));
    env.extend(token_env(job));
    env.extend(user_env(job));
    let command = launch_command(job);
    let mut labels = labels_with(job, "server");
    labels[format!("{PREFIX}first-rank")] =
        json!(n.ranks.first().copied().unwrap_or_default().to_string());
    cx.pod(
        labels,
        &n.node,
        ("server", claim),
        rank_check_container(job),
        Container {
            name: "ranks",
            command,
            env,
            ranks: n.ranks.len(),
        },
    )
}
