//! DRA placement's objects: the ConfigMap, one ResourceClaimTemplate per
//! rank, and the ranks as one JobSet (a replicated Job per rank) or, when
//! the job file asks for it, as bare Pods owned by the ConfigMap.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;

use super::{
    ENV_COLUMNS, KUEUE_POD_GROUP, KUEUE_POD_GROUP_COUNT, KUEUE_QUEUE, MOUNT, RankRows, Row,
    apply_pod_settings, config_map_name, config_volume, headless_service, job_annotations, labels,
    labels_with, metadata, node_affinity, node_name_env, rank_check_container, token_env, user_env,
};
use crate::error::{Error, Result};
use crate::jobs::dra::{PlanField, claim_spec, node_annotation, sub_node_annotation};
use crate::jobs::job::{Gang, JobSpec, Unit};
use crate::jobs::labels::PREFIX;
use crate::jobs::placement::{PlacedRank, Placement};
use crate::jobs::view::Manifests;

/// The name of rank `rank`'s claim template (and, with bare Pods, of its
/// Pod): `<job>-<rank>`.
pub(crate) fn rank_pod_name(job: &JobSpec, rank: usize) -> String {
    format!("{}-{rank}", job.name)
}

/// The replicated Job of rank `rank` in the job's JobSet: `rank-<rank>`.
pub(crate) fn replicated_job_name(rank: usize) -> String {
    format!("rank-{rank}")
}

/// `MASTER_ADDR` of a DRA job: the DNS name of rank 0's pod under the
/// headless Service `<job>`. Bare Pods set `hostname` `<job>-0`
/// themselves; a JobSet's pods are
/// `<jobSet.name>-<replicatedJob.name>-<job-index>-<pod-index>.<subdomain>`
/// (`api/jobset/v1alpha2/jobset_types.go`, `Network.EnableDNSHostnames`,
/// v0.12.0), with the subdomain `<job>` and one Job and pod per rank.
pub(crate) fn master_dns(job: &JobSpec) -> String {
    let host = match job.failure.gang {
        Gang::JobSet => format!("{}-{}-0-0", job.name, replicated_job_name(0)),
        Gang::None => rank_pod_name(job, 0),
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
    let rows = RankRows::new(plan, placement, env, Unit::Gpu)?;
    let annotations = job_annotations(plan, placement, job);
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(job, &config_map_name(job), Some(annotations.clone())),
        "data": {
            "ranks.csv": rows.ranks_csv(),
            "rank-env.csv": rows.env_csv(),
        },
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
    let mut templates = Vec::with_capacity(world);
    let mut pods = Vec::with_capacity(world);
    for (r, row) in placement.ranks.iter().zip(&rows.rows) {
        let sn = &plan.sub_node_list[r.sub_node];
        let devices = placement
            .devices
            .get(r.rank)
            .ok_or_else(|| Error::Manifest {
                job: job.name.clone(),
                message: format!("rank {} has no devices in the placement", r.rank),
            })?;
        let spec = claim_spec(&job.placement.profile, sn).map_err(|message| Error::Manifest {
            job: job.name.clone(),
            message,
        })?;
        let name = rank_pod_name(job, r.rank);
        let mut template_meta = metadata(job, &name, None);
        template_meta["annotations"] = json!({
            sub_node_annotation(): sn.id,
            node_annotation(): r.node,
            format!("{PREFIX}gpu"): devices.gpu.to_string(),
            format!("{PREFIX}nic"): devices.nics.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        });
        templates.push(json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": template_meta,
            "spec": { "spec": spec },
        }));
        pods.push(rank_pod(job, r, row, &name, world, rank0_nic.as_deref()));
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
        Gang::None => {
            let mut owned = vec![headless_service(job)];
            owned.extend(templates);
            owned.extend(pods.into_iter().map(|(rank, mut meta, mut spec)| {
                let name = rank_pod_name(job, rank);
                meta["name"] = json!(name);
                meta["namespace"] = json!(job.namespace);
                if let Some(q) = &job.queue {
                    meta["labels"][KUEUE_QUEUE] = json!(q);
                    meta["labels"][KUEUE_POD_GROUP] = json!(job.name);
                    meta["annotations"][KUEUE_POD_GROUP_COUNT] = json!(world.to_string());
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

/// The API version of the JobSets we write (kubernetes-sigs/jobset v0.12.0,
/// `api/jobset/v1alpha2`).
pub(crate) const JOBSET_API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";

/// The JobSet of a DRA job: one replicated Job per rank (`replicas: 1`,
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
fn job_set(job: &JobSpec, annotations: &Value, pods: Vec<(usize, Value, Value)>) -> Value {
    let mut meta = metadata(job, &job.name, Some(annotations.clone()));
    if let Some(q) = &job.queue {
        meta["labels"][KUEUE_QUEUE] = json!(q);
    }
    let replicated: Vec<Value> = pods
        .into_iter()
        .map(|(rank, meta, spec)| {
            json!({
                "name": replicated_job_name(rank),
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

/// Rank `r`'s pod: its labels and annotations, and its spec (pinned to
/// its Node, claiming its template `claim`), without name or host name.
fn rank_pod(
    job: &JobSpec,
    r: &PlacedRank,
    row: &Row,
    claim: &str,
    world: usize,
    rank0_nic: Option<&str>,
) -> (usize, Value, Value) {
    let mut env = vec![
        node_name_env(),
        json!({ "name": "RANK", "value": r.rank.to_string() }),
        json!({ "name": "WORLD_SIZE", "value": world.to_string() }),
        json!({ "name": "LOCAL_RANK", "value": "0" }),
        json!({ "name": "LOCAL_WORLD_SIZE", "value": "1" }),
        json!({ "name": "MASTER_ADDR", "value": master_dns(job) }),
        json!({ "name": "MASTER_PORT", "value": job.master_port.to_string() }),
    ];
    if let Some(ip) = rank0_nic {
        env.push(json!({ "name": "EFLOPS_RANK0_NIC_ADDR", "value": ip }));
    }
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
    env.extend(token_env(job));
    env.extend(user_env(job));
    let mut labels = labels_with(job, "rank");
    labels[format!("{PREFIX}rank")] = json!(r.rank.to_string());
    let mut meta = json!({ "labels": labels });
    let mut resources = serde_json::Map::new();
    if let Some(c) = &job.resources.cpu {
        resources.insert("cpu".into(), json!(c.times(1)));
    }
    if let Some(m) = &job.resources.memory {
        resources.insert("memory".into(), json!(m.times(1)));
    }
    for (k, v) in &job.resources.extra {
        resources.insert(k.clone(), json!(v.to_string()));
    }
    let mut container_resources = json!({ "claims": [{ "name": "sub-node" }] });
    if !resources.is_empty() {
        container_resources["limits"] = Value::Object(resources.clone());
        container_resources["requests"] = Value::Object(resources);
    }
    let mut check = rank_check_container(job);
    if let Some(c) = check["command"].as_array_mut() {
        c.extend([json!("--rank"), json!(r.rank.to_string())]);
    }
    let mut spec = json!({
        "restartPolicy": "Never",
        "affinity": { "nodeAffinity": node_affinity(&[r.node.as_str()]) },
        "resourceClaims": [{ "name": "sub-node", "resourceClaimTemplateName": claim }],
        "initContainers": [check],
        "containers": [{
            "name": "rank",
            "image": job.image,
            "command": job.command,
            "args": job.args,
            "env": env,
            "resources": container_resources,
            "volumeMounts": [{ "name": "eflops-ranks", "mountPath": MOUNT, "readOnly": true }],
        }],
        "volumes": [config_volume(job)],
    });
    apply_pod_settings(job, &mut meta, &mut spec);
    (r.rank, meta, spec)
}
