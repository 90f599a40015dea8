//! DRA placement's objects: the ConfigMap that owns them, the headless
//! Service, one ResourceClaimTemplate and one Pod per rank.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;

use super::{
    ENV_COLUMNS, KUEUE_POD_GROUP, KUEUE_POD_GROUP_COUNT, KUEUE_QUEUE, MOUNT, RankRows, Row,
    apply_pod_settings, config_map_name, config_volume, headless_service, job_annotations,
    labels_with, metadata, node_affinity, node_name_env, rank_check_container, token_env, user_env,
};
use crate::error::{Error, Result};
use crate::jobs::dra::{PlanField, claim_spec, node_annotation, sub_node_annotation};
use crate::jobs::job::{JobSpec, Unit};
use crate::jobs::labels::PREFIX;
use crate::jobs::placement::{PlacedRank, Placement};
use crate::jobs::view::Manifests;

/// The name of rank `rank`'s pod and claim template: `<job>-<rank>`.
pub(crate) fn rank_pod_name(job: &JobSpec, rank: usize) -> String {
    format!("{}-{rank}", job.name)
}

/// `MASTER_ADDR` of a DRA job: the headless Service's DNS name of rank
/// 0's pod.
pub(crate) fn master_dns(job: &JobSpec) -> String {
    format!(
        "{}.{}.{}.svc",
        rank_pod_name(job, 0),
        job.name,
        job.namespace
    )
}

/// DRA placement: the ConfigMap (the root every other object is owned
/// by), the headless Service, one ResourceClaimTemplate and one Pod per
/// rank.
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
        "metadata": metadata(job, &config_map_name(job), Some(annotations)),
        "data": {
            "ranks.csv": rows.ranks_csv(),
            "rank-env.csv": rows.env_csv(),
        },
    });
    let mut owned = vec![headless_service(job)];
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
        owned.push(json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": template_meta,
            "spec": { "spec": spec },
        }));
        pods.push(rank_pod(job, r, row, &name, world, rank0_nic.as_deref()));
    }
    owned.extend(pods);
    Ok(Manifests {
        workload: config_map,
        owned,
        secret: None,
    })
}

fn rank_pod(
    job: &JobSpec,
    r: &PlacedRank,
    row: &Row,
    name: &str,
    world: usize,
    rank0_nic: Option<&str>,
) -> Value {
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
    let mut meta = json!({ "name": name, "namespace": job.namespace, "labels": labels });
    if let Some(q) = &job.queue {
        meta["labels"][KUEUE_QUEUE] = json!(q);
        meta["labels"][KUEUE_POD_GROUP] = json!(job.name);
        meta["annotations"] = json!({ KUEUE_POD_GROUP_COUNT: world.to_string() });
    }
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
        "hostname": name,
        "subdomain": job.name,
        "restartPolicy": "Never",
        "affinity": { "nodeAffinity": node_affinity(&[r.node.as_str()]) },
        "resourceClaims": [{ "name": "sub-node", "resourceClaimTemplateName": name }],
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
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
    })
}
