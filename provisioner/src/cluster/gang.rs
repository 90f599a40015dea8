//! `provisioner controller`'s gang failure handling for DRA jobs of bare
//! rank Pods (`[failure] gang = "controller"`): when one rank fails, the
//! other ranks of its job are deleted, and the first failed rank, its Node
//! and its reason are recorded on the job's ConfigMap, which `status`
//! reads.
//!
//! This is the gang for queued DRA jobs over 18 ranks: Kueue v0.19.2
//! admits at most 18 PodSets in a Workload
//! (`apis/kueue/v1beta2/workload_types.go`, `MaxItems=18`), so such a job
//! cannot be one JobSet of a Job per rank, and Kueue's own pod group
//! neither re-creates nor stops the Pods of a group when one fails: with
//! `kueue.x-k8s.io/retriable-in-group: "false"` it marks the group's
//! Workload finished once *every* Pod has ended
//! (`pkg/controller/jobs/pod/pod_controller.go`, `Finished`;
//! `site/content/en/docs/tasks/run/plain_pods.md`, "Termination", at the
//! tag v0.19.2). Deleting the other ranks ends them, and Kueue then frees
//! the quota.
//!
//! Nothing is deleted that submit did not make for the job: a Pod is
//! stopped only if it carries our labels for the job and the gang label,
//! is owned by the job's ConfigMap (the DRA root, by its uid), and is
//! deleted with its uid as a precondition, so a Pod of the same name made
//! since is left alone.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, Preconditions};
use serde::Serialize;
use serde_json::json;

use super::jobs::{INSTANCE_LABEL, is_ours};
use super::retry::{ObjectFailure, retried};
use super::{Result, is_status, list_retried};
use crate::error::Error;
use crate::jobs::labels::{GANG_CONTROLLER, MANAGED_BY, PREFIX, gang_label};

/// The annotations of the job's ConfigMap that record the first failed
/// rank: `failed-rank`, `failed-node`, `failed-reason`, `stopped-at`.
pub(crate) fn failure_annotation(what: &str) -> String {
    format!("{PREFIX}{what}")
}

/// The longest reason recorded (a termination message can be 4096 bytes).
const REASON_MAX: usize = 300;

/// One job stopped as a whole because a rank failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GangStop {
    /// The job's namespace.
    pub namespace: String,
    /// The job.
    pub job: String,
    /// The rank that failed first (its label `topology.eflops.io/rank`).
    pub rank: Option<usize>,
    /// Its pod.
    pub pod: String,
    /// Its Node.
    pub node: Option<String>,
    /// Why it failed.
    pub reason: String,
    /// The other rank Pods deleted in this pass.
    pub deleted: Vec<String>,
}

/// What one gang pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GangPass {
    /// Jobs stopped (or whose last ranks were deleted) in this pass.
    pub stopped: Vec<GangStop>,
    /// Objects whose requests failed; the other jobs were served.
    pub failed: Vec<ObjectFailure>,
}

/// How one rank Pod failed: when (RFC 3339, for the order) and why.
/// `None` for a pod that has not failed, or that is being deleted (a
/// deleted pod did not fail on its own: Kueue's preemption deletes every
/// pod of a group, and so does this controller).
fn failure_of(p: &Pod) -> Option<(Option<String>, String)> {
    if p.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let status = p.status.as_ref()?;
    let never = p
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        .is_none_or(|r| r == "Never");
    let terminated = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten())
        .filter_map(|c| {
            let t = c.state.as_ref()?.terminated.as_ref()?;
            (t.exit_code != 0).then_some((c, t))
        })
        .min_by_key(|(_, t)| t.finished_at.as_ref().map(|f| f.0));
    let failed_phase = status.phase.as_deref() == Some("Failed");
    if let Some((c, t)) = terminated
        && (never || failed_phase)
    {
        let mut reason = format!(
            "container {} {}, exit code {}",
            c.name,
            t.reason.as_deref().unwrap_or("terminated"),
            t.exit_code
        );
        if let Some(m) = t
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            reason.push_str(": ");
            reason.push_str(m);
        }
        let at = t
            .finished_at
            .as_ref()
            .map(|f| f.0.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        return Some((at, bounded(&reason)));
    }
    if !failed_phase {
        return None;
    }
    let reason = match (status.reason.as_deref(), status.message.as_deref()) {
        (Some(r), Some(m)) => format!("pod {r}: {}", m.trim()),
        (Some(r), None) => format!("pod {r}"),
        (None, Some(m)) => format!("pod failed: {}", m.trim()),
        (None, None) => "pod failed".to_string(),
    };
    Some((None, bounded(&reason)))
}

/// `text` without control characters, at most [`REASON_MAX`] characters.
fn bounded(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(REASON_MAX)
        .collect();
    if text.chars().count() > REASON_MAX {
        s.push('…');
    }
    s
}

fn label(p: &Pod, key: &str) -> Option<String> {
    p.metadata.labels.as_ref()?.get(key).cloned()
}

fn ended(p: &Pod) -> bool {
    matches!(
        p.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// One pass: lists the rank Pods of every gang this controller stops
/// (labels `app.kubernetes.io/managed-by=eflops-provisioner` and
/// `topology.eflops.io/gang=controller`, all namespaces) and, for each job
/// with a failed rank, records the first failure on its ConfigMap (once)
/// and deletes its other running ranks. A failure of one job's requests
/// is reported in [`GangPass::failed`] and the other jobs are served; only
/// a failed list ends the pass.
pub async fn stop_failed_gangs(client: &kube::Client, now: &str) -> Result<GangPass> {
    let selector = format!(
        "app.kubernetes.io/managed-by={MANAGED_BY},{}={GANG_CONTROLLER}",
        gang_label()
    );
    let all: Api<Pod> = Api::all(client.clone());
    let params = ListParams::default().labels(&selector);
    let pods = list_retried(&all, params, "the gangs' rank Pods").await?;
    let mut jobs: BTreeMap<(String, String), Vec<Pod>> = BTreeMap::new();
    for p in pods {
        let (Some(ns), Some(job)) = (p.metadata.namespace.clone(), label(&p, INSTANCE_LABEL))
        else {
            continue;
        };
        jobs.entry((ns, job)).or_default().push(p);
    }
    let mut pass = GangPass::default();
    for ((ns, job), pods) in jobs {
        if !pods.iter().any(|p| failure_of(p).is_some()) {
            continue;
        }
        match stop(client, &ns, &job, &pods, now).await {
            Ok(Some(s)) => pass.stopped.push(s),
            Ok(None) => {}
            Err((object, e)) => pass.failed.push(ObjectFailure::new(object, &e)),
        }
    }
    Ok(pass)
}

/// Stops job `ns/job` whose `pods` include a failed rank; `None` when
/// there was nothing left to do (recorded before, every other rank ended
/// or deleted). `Err` names the object whose request failed.
async fn stop(
    client: &kube::Client,
    ns: &str,
    job: &str,
    pods: &[Pod],
    now: &str,
) -> std::result::Result<Option<GangStop>, (String, Error)> {
    let root_name = format!("{job}-ranks");
    let root_object = format!("ConfigMap {ns}/{root_name}");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let root = match retried(|| cms.get(&root_name)).await {
        Ok(cm) => cm,
        // The root is gone: the garbage collector deletes what it owned.
        Err(e) if is_status(&e, 404) => return Ok(None),
        Err(e) => {
            return Err((
                root_object.clone(),
                Error::api(format!("reading {root_object}"), e),
            ));
        }
    };
    let Some(uid) = root.metadata.uid.clone() else {
        return Ok(None);
    };
    if !is_ours(&root.metadata, job) {
        return Err((
            root_object.clone(),
            Error::BadObject {
                object: root_object,
                message: format!(
                    "not labelled app.kubernetes.io/managed-by={MANAGED_BY}, app.kubernetes.io/instance={job}: the rank Pods' owner is not this provisioner's, so none of them is stopped; delete the Pods by hand"
                ),
            },
        ));
    }
    // Only Pods of the job, owned by its root.
    let owned: Vec<&Pod> = pods
        .iter()
        .filter(|p| is_ours(&p.metadata, job))
        .filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "ConfigMap" && o.uid == uid)
        })
        .collect();
    let rank_of = |p: &Pod| label(p, &format!("{PREFIX}rank")).and_then(|r| r.parse().ok());
    let Some((first, (_, reason))) = owned
        .iter()
        .filter_map(|p| failure_of(p).map(|f| (*p, f)))
        .min_by(|(a, (at_a, _)), (b, (at_b, _))| {
            (at_a.is_none(), at_a, rank_of(a)).cmp(&(at_b.is_none(), at_b, rank_of(b)))
        })
    else {
        return Ok(None);
    };
    let annotations = root.metadata.annotations.clone().unwrap_or_default();
    let recorded = annotations.contains_key(&failure_annotation("failed-reason"));
    let pod_name = first.metadata.name.clone().unwrap_or_default();
    let node = first.spec.as_ref().and_then(|s| s.node_name.clone());
    let rank: Option<usize> = rank_of(first);
    if !recorded {
        // Recorded before any delete: the cause is named even if a delete
        // fails.
        let mut a = serde_json::Map::new();
        a.insert(failure_annotation("failed-pod"), json!(pod_name));
        a.insert(failure_annotation("failed-reason"), json!(reason));
        a.insert(failure_annotation("stopped-at"), json!(now));
        if let Some(r) = rank {
            a.insert(failure_annotation("failed-rank"), json!(r.to_string()));
        }
        if let Some(n) = &node {
            a.insert(failure_annotation("failed-node"), json!(n));
        }
        let body = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": { "name": root_name, "namespace": ns, "annotations": a },
        });
        let params = PatchParams::apply(super::CONTROLLER_MANAGER).force();
        let patch = Patch::Apply(&body);
        retried(|| cms.patch(&root_name, &params, &patch))
            .await
            .map_err(|e| {
                (
                    root_object.clone(),
                    Error::api(
                        format!("recording the failed rank of job {ns}/{job} on {root_object}"),
                        e,
                    ),
                )
            })?;
    }
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut deleted = Vec::new();
    for p in owned {
        if std::ptr::eq(p, first) || ended(p) || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let (Some(name), Some(pod_uid)) = (p.metadata.name.clone(), p.metadata.uid.clone()) else {
            continue;
        };
        let params = DeleteParams::default().preconditions(Preconditions {
            uid: Some(pod_uid),
            resource_version: None,
        });
        match retried(|| api.delete(&name, &params)).await {
            Ok(_) => deleted.push(name),
            // Gone, or replaced by a Pod of the same name: not ours to stop.
            Err(e) if is_status(&e, 404) || is_status(&e, 409) => {}
            Err(e) => {
                return Err((
                    format!("Pod {ns}/{name}"),
                    Error::api(
                        format!(
                            "deleting Pod {ns}/{name} (rank {}) after rank {} failed",
                            rank_of(p).map_or("?".to_string(), |r| r.to_string()),
                            rank.map_or("?".to_string(), |r| r.to_string())
                        ),
                        e,
                    ),
                ));
            }
        }
    }
    if recorded && deleted.is_empty() {
        return Ok(None);
    }
    Ok(Some(GangStop {
        namespace: ns.to_string(),
        job: job.to_string(),
        rank,
        pod: pod_name,
        node,
        reason,
        deleted,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(v: serde_json::Value) -> Pod {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_failed_rank_is_told_by_its_container_or_its_pod() {
        let exited = pod(json!({
            "metadata": { "name": "t-3" },
            "spec": { "restartPolicy": "Never", "containers": [] },
            "status": { "phase": "Running", "containerStatuses": [{
                "name": "rank", "ready": false, "restartCount": 0, "image": "i", "imageID": "",
                "state": { "terminated": { "exitCode": 1, "reason": "Error", "message": "NCCL timeout\n", "finishedAt": "2026-11-29T09:00:00Z" } },
            }] },
        }));
        assert_eq!(
            failure_of(&exited),
            Some((
                Some("2026-11-29T09:00:00Z".to_string()),
                "container rank Error, exit code 1: NCCL timeout".to_string()
            ))
        );
        let evicted = pod(json!({
            "metadata": { "name": "t-4" },
            "status": { "phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory." },
        }));
        assert_eq!(
            failure_of(&evicted).unwrap().1,
            "pod Evicted: The node was low on resource: memory."
        );
        let running =
            pod(json!({ "metadata": { "name": "t-5" }, "status": { "phase": "Running" } }));
        assert_eq!(failure_of(&running), None);
        // Deleted (by Kueue's preemption, or by us): not a rank failure.
        let deleted = pod(json!({
            "metadata": { "name": "t-6", "deletionTimestamp": "2026-11-29T09:00:01Z" },
            "status": { "phase": "Failed" },
        }));
        assert_eq!(failure_of(&deleted), None);
        let long = "x\u{1b}".repeat(400);
        let b = bounded(&long);
        assert_eq!(b.chars().count(), REASON_MAX + 1);
        assert!(!b.contains('\u{1b}'));
    }
}
