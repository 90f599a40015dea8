//! Following and removing a submitted job.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, LogParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::Value;

use super::status::{
    GangFailure, JobPhase, JobPod, JobStatus, PodFailure, RankTableStatus, conditions_of, count,
    is_true,
};
use super::{Error, Result, is_status, list_all};

/// The label every pod of a submission carries, with the job's name.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// Log lines [`wait`] reads from each failed container.
pub const LOG_LINES: i64 = 20;

/// The ConfigMap that owns the rank Pods of a DRA submission.
pub(super) fn config_map_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps")
}

/// The workload kinds a submission creates, in the order they are looked
/// up.
pub(super) fn workload_resources() -> [ApiResource; 3] {
    [
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("batch", "v1", "Job"), "jobs"),
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("kubeflow.org", "v2beta1", "MPIJob"),
            "mpijobs",
        ),
        super::jobset::resource(),
    ]
}

/// True when `meta` carries the labels this provisioner gives every object
/// of the job `name` (`app.kubernetes.io/managed-by: eflops-provisioner`,
/// `app.kubernetes.io/instance: NAME`).
pub(super) fn is_ours(meta: &ObjectMeta, name: &str) -> bool {
    meta.labels.as_ref().is_some_and(|l| {
        l.get("app.kubernetes.io/managed-by").map(String::as_str)
            == Some(crate::jobs::labels::MANAGED_BY)
            && l.get(INSTANCE_LABEL).map(String::as_str) == Some(name)
    })
}

/// The workload of the submission `name` that this provisioner made: its
/// Job, or else its MPIJob, or else its JobSet (a DRA job), or else the
/// ConfigMap `NAME-ranks` of a DRA job of bare Pods (whose rank Pods are
/// the workload). An object of one of those names without this
/// provisioner's labels for the job is skipped; when only such objects
/// exist, [`Error::NotOurs`] names them.
pub(super) async fn workload(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(ApiResource, DynamicObject)> {
    let dra_root = format!("{name}-ranks");
    let candidates = workload_resources()
        .into_iter()
        .map(|ar| (ar, name.to_string()))
        .chain(std::iter::once((config_map_resource(), dra_root)));
    let mut foreign = Vec::new();
    for (ar, object) in candidates {
        let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
        match api.get(&object).await {
            Ok(obj) if !is_ours(&obj.metadata, name) => {
                foreign.push(format!("{} {object}", ar.kind));
            }
            // Our ConfigMap of a Job or JobSet: not a root.
            Ok(obj) if ar.kind == "ConfigMap" && !is_dra_root(&obj) => {}
            Ok(obj) => return Ok((ar, obj)),
            Err(e) if is_status(&e, 404) => {}
            Err(e) => {
                return Err(Error::api(
                    format!("reading {} {namespace}/{object}", ar.kind),
                    e,
                ));
            }
        }
    }
    if !foreign.is_empty() {
        return Err(Error::NotOurs {
            objects: foreign.join(", "),
            name: name.to_string(),
            namespace: namespace.to_string(),
        });
    }
    Err(Error::JobNotFound {
        name: name.to_string(),
        namespace: namespace.to_string(),
    })
}

/// True for the ConfigMap that owns the bare rank Pods of a DRA job:
/// annotated `topology.eflops.io/placement: dra` and owned by nothing (a
/// JobSet's ConfigMap is owned by the JobSet).
pub(super) fn is_dra_root(obj: &DynamicObject) -> bool {
    obj.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&crate::jobs::manifests::placement_annotation()))
        .is_some_and(|v| v == "dra")
        && obj
            .metadata
            .owner_references
            .as_ref()
            .is_none_or(Vec::is_empty)
}

/// Reads the Job, or else the MPIJob, or else the JobSet, or else the DRA
/// submission of bare Pods, named `name` and made by this provisioner, and
/// its pods.
///
/// Sends `GET /apis/batch/v1/namespaces/NS/jobs/NAME`, on 404 (or an
/// object without our labels) `GET
/// /apis/kubeflow.org/v2beta1/namespaces/NS/mpijobs/NAME`, then `GET
/// /apis/jobset.x-k8s.io/v1alpha2/namespaces/NS/jobsets/NAME`, then `GET
/// /api/v1/namespaces/NS/configmaps/NAME-ranks` (a DRA submission's
/// ConfigMap, annotated `topology.eflops.io/placement: dra`), then `GET
/// /api/v1/namespaces/NS/pods?labelSelector=app.kubernetes.io/instance=NAME`.
pub async fn status(client: &kube::Client, namespace: &str, name: &str) -> Result<JobStatus> {
    let (ar, obj) = workload(client, namespace, name).await?;
    let pods = list_all(
        &Api::<Pod>::namespaced(client.clone(), namespace),
        ListParams::default().labels(&format!("{INSTANCE_LABEL}={name}")),
        "Pods",
    )
    .await?;
    let mut pods: Vec<JobPod> = pods.iter().map(job_pod).collect();
    pods.sort_by(|a, b| a.name.cmp(&b.name));
    let mut s = status_of(&ar, name, namespace, &obj, pods);
    if let Some(t) = admission_table(client, namespace, name, &obj).await? {
        s.rank_table = Some(t);
    }
    Ok(s)
}

fn job_pod(p: &Pod) -> JobPod {
    let status = p.status.as_ref();
    let containers = status
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let restarts = containers
        .iter()
        .map(|c| u32::try_from(c.restart_count).unwrap_or(0))
        .sum();
    let waiting = status
        .and_then(|s| s.init_container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .chain(containers)
        .find_map(|c| {
            let st = c.state.as_ref()?;
            st.waiting
                .as_ref()
                .and_then(|w| w.reason.clone())
                .filter(|r| r != "ContainerCreating" && r != "PodInitializing")
                .or_else(|| {
                    st.terminated
                        .as_ref()
                        .filter(|t| t.exit_code != 0)
                        .and_then(|t| t.reason.clone())
                })
        });
    JobPod {
        name: p.metadata.name.clone().unwrap_or_default(),
        phase: status
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Unknown".to_string()),
        node: p.spec.as_ref().and_then(|s| s.node_name.clone()),
        restarts,
        reason: waiting.or_else(|| status.and_then(|s| s.reason.clone())),
        attempt: super::jobset::attempt_of(p),
    }
}

/// The status of a DRA submission: its rank Pods are the workload. It
/// fails when one pod fails (every rank is needed), runs when every rank
/// runs or is done, succeeds when every rank succeeded.
fn pods_status(name: &str, namespace: &str, obj: &DynamicObject, pods: Vec<JobPod>) -> JobStatus {
    let ranks = obj
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&crate::jobs::manifests::ranks_annotation()))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(pods.len())
        .max(1);
    let count = |ph: &str| pods.iter().filter(|p| p.phase == ph).count();
    let (running, succeeded, failed) = (count("Running"), count("Succeeded"), count("Failed"));
    let phase = if failed > 0 {
        JobPhase::Failed
    } else if succeeded >= ranks {
        JobPhase::Succeeded
    } else if running > 0 && running + succeeded >= ranks {
        JobPhase::Running
    } else {
        JobPhase::Pending
    };
    let n = |c: usize| u32::try_from(c).unwrap_or(u32::MAX);
    JobStatus {
        kind: "Pods".to_string(),
        name: name.to_string(),
        namespace: namespace.to_string(),
        phase,
        active: n(running),
        succeeded: n(succeeded),
        failed: n(failed),
        conditions: Vec::new(),
        pods,
        failures: Vec::new(),
        restarts: None,
        rank_table: None,
        stopped: None,
    }
}

fn job_status(
    ar: &ApiResource,
    name: &str,
    namespace: &str,
    data: &Value,
    pods: Vec<JobPod>,
) -> JobStatus {
    let status = data.get("status").cloned().unwrap_or(Value::Null);
    let conditions = conditions_of(&status);
    let is_true = |t: &str| is_true(&conditions, t);
    let mpi = ar.kind == "MPIJob";
    let (active, succeeded, failed) = if mpi {
        let replicas: Vec<&Value> = status
            .get("replicaStatuses")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
            .collect();
        let sum = |f: &str| replicas.iter().map(|r| count(r.get(f))).sum::<u32>();
        (sum("active"), sum("succeeded"), sum("failed"))
    } else {
        (
            count(status.get("active")),
            count(status.get("succeeded")),
            count(status.get("failed")),
        )
    };
    // A Job runs once as many pods run as it runs at a time.
    let spec = |f: &str| data.pointer(&format!("/spec/{f}")).and_then(Value::as_u64);
    let parallel = spec("parallelism")
        .unwrap_or(1)
        .min(spec("completions").unwrap_or(u64::MAX))
        .max(1);
    let running = pods.iter().filter(|p| p.phase == "Running").count() as u64;
    let all_running = running >= parallel;
    // Every workload is submitted with backoffLimit 0: a failed pod fails
    // the job, even before the controller writes the condition.
    let pod_failed = pods.iter().any(|p| p.phase == "Failed");
    let phase = if is_true("Failed") || pod_failed {
        JobPhase::Failed
    } else if is_true(if mpi { "Succeeded" } else { "Complete" }) {
        JobPhase::Succeeded
    } else if (mpi && is_true("Running")) || (!mpi && all_running) {
        JobPhase::Running
    } else {
        JobPhase::Pending
    };
    JobStatus {
        kind: ar.kind.clone(),
        name: name.to_string(),
        namespace: namespace.to_string(),
        phase,
        active,
        succeeded,
        failed,
        conditions,
        pods,
        failures: Vec::new(),
        restarts: None,
        rank_table: None,
        stopped: None,
    }
}

/// The status of `obj` (a Job, an MPIJob or a DRA submission's ConfigMap)
/// with `pods`.
fn status_of(
    ar: &ApiResource,
    name: &str,
    namespace: &str,
    obj: &DynamicObject,
    pods: Vec<JobPod>,
) -> JobStatus {
    let mut s = match ar.kind.as_str() {
        "ConfigMap" => {
            let mut s = pods_status(name, namespace, obj, pods);
            s.stopped = GangFailure::from_annotations(obj.metadata.annotations.as_ref());
            s
        }
        "JobSet" => super::jobset::status(name, namespace, &obj.data, pods),
        _ => job_status(ar, name, namespace, &obj.data, pods),
    };
    s.rank_table = RankTableStatus::from_annotations(obj.metadata.annotations.as_ref(), "submit");
    s
}

/// The rank table of a job whose table Kueue's admission makes (its
/// workload annotated `topology.eflops.io/table`): `GET
/// /api/v1/namespaces/NS/configmaps/NAME-ranks`, whose annotations
/// `provisioner controller` writes at admission (`table: ready`); before
/// that, or without the ConfigMap, the table is pending. `None` for a job
/// whose table was made at submit.
async fn admission_table(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    obj: &DynamicObject,
) -> Result<Option<RankTableStatus>> {
    let table = crate::jobs::admission::table_annotation();
    if !obj
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(&table))
    {
        return Ok(None);
    }
    let cm_name = format!("{name}-ranks");
    let api = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(client.clone(), namespace);
    let cm = match api.get(&cm_name).await {
        Ok(cm) => Some(cm),
        Err(e) if is_status(&e, 404) => None,
        Err(e) => {
            return Err(Error::api(
                format!("reading ConfigMap {namespace}/{cm_name}"),
                e,
            ));
        }
    };
    let ready = cm.as_ref().and_then(|cm| {
        let a = cm.metadata.annotations.as_ref()?;
        (a.get(&table).map(String::as_str) == Some("ready") && is_ours(&cm.metadata, name))
            .then_some(a)
    });
    Ok(Some(
        RankTableStatus::from_annotations(ready, "admission").unwrap_or(RankTableStatus {
            made: "pending".to_string(),
            worst_link_load: None,
            lower_bound: None,
            method: None,
        }),
    ))
}

/// How [`wait`] watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// Give up after this long.
    pub timeout: Duration,
}

impl WaitOptions {
    /// Waits at most `timeout`.
    pub fn with_timeout(timeout: Duration) -> WaitOptions {
        WaitOptions { timeout }
    }
}

/// Watches the job's pods until the job is Running, Succeeded or Failed,
/// calling `progress` with each status whose summary differs from the one
/// before (the first one included). Returns the last status; when the job
/// failed, [`JobStatus::failures`] says which containers failed, why, and
/// their last [`LOG_LINES`] log lines. The caller decides what a Failed
/// job means. [`Error::Timeout`] when `timeout` passes first.
///
/// A `kube::runtime::watcher` on `GET /api/v1/namespaces/NS/pods` with the
/// label selector `app.kubernetes.io/instance=NAME` (a list, then a watch
/// from its resourceVersion) drives it: after the initial list and after
/// every pod event, the workload is read again (`GET` as in [`status`]),
/// since its conditions follow its pods. Then, for each failed container,
/// `GET /api/v1/namespaces/NS/pods/POD/log?container=C&tailLines=20`.
pub async fn wait(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    options: &WaitOptions,
    progress: &mut (dyn FnMut(&JobStatus) + Send),
) -> Result<JobStatus> {
    let deadline = tokio::time::Instant::now() + options.timeout;
    let api = Api::<Pod>::namespaced(client.clone(), namespace);
    let config = watcher::Config::default().labels(&format!("{INSTANCE_LABEL}={name}"));
    let mut events = std::pin::pin!(watcher(api, config).default_backoff());
    let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
    let mut listing: Option<BTreeMap<String, Pod>> = None;
    let mut last = String::new();
    let mut phase = "Pending".to_string();
    let mut kind = "Job".to_string();
    loop {
        let event = match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(Ok(event))) => event,
            // The watcher backs off and tries again after a failure; only
            // a refusal the user must fix ends the wait.
            Ok(Some(Err(e))) => {
                if refused(&e) {
                    return Err(Error::Watch {
                        what: format!("the pods of {namespace}/{name}"),
                        message: e.to_string(),
                    });
                }
                continue;
            }
            Ok(None) | Err(_) => {
                return Err(Error::Timeout {
                    kind,
                    name: name.to_string(),
                    namespace: namespace.to_string(),
                    phase,
                    seconds: options.timeout.as_secs(),
                });
            }
        };
        let key = |p: &Pod| p.metadata.name.clone().unwrap_or_default();
        match event {
            watcher::Event::Init => {
                listing = Some(BTreeMap::new());
                continue;
            }
            watcher::Event::InitApply(p) => {
                if let Some(l) = listing.as_mut() {
                    l.insert(key(&p), p);
                }
                continue;
            }
            watcher::Event::InitDone => pods = listing.take().unwrap_or_default(),
            watcher::Event::Apply(p) => {
                pods.insert(key(&p), p);
            }
            watcher::Event::Delete(p) => {
                pods.remove(&key(&p));
            }
        }
        let (ar, obj) = workload(client, namespace, name).await?;
        let listed: Vec<JobPod> = pods.values().map(job_pod).collect();
        let mut s = status_of(&ar, name, namespace, &obj, listed);
        kind = s.kind.clone();
        phase = s.phase.as_str().to_string();
        let summary = s.summary();
        if summary != last {
            progress(&s);
            last = summary;
        }
        if s.phase == JobPhase::Failed {
            // A JobSet's earlier attempts failed before this one: the
            // first failure of the attempt that failed the job is the one
            // to report.
            let attempt = s.restarts.map(|r| r.done);
            let current = pods.values().filter(|p| {
                attempt.is_none() || super::jobset::attempt_of(p).is_none_or(|a| Some(a) == attempt)
            });
            s.failures = failures(client, namespace, current).await?;
        }
        if s.phase != JobPhase::Pending {
            if let Some(t) = admission_table(client, namespace, name, &obj).await? {
                s.rank_table = Some(t);
            }
            return Ok(s);
        }
    }
}

/// True for a watch failure that trying again cannot cure (401, 403).
fn refused(e: &watcher::Error) -> bool {
    let code = match e {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => match e {
            kube::Error::Api(r) => Some(r.code),
            _ => None,
        },
        watcher::Error::WatchError(r) => Some(r.code),
        _ => None,
    };
    matches!(code, Some(401 | 403))
}

/// The failed containers of `pods` (init containers first), with their
/// last log lines, the first to end first (`finishedAt`; then by pod):
/// when one rank fails the others usually fail after it, losing their
/// peer, so the first is the cause.
async fn failures(
    client: &kube::Client,
    namespace: &str,
    pods: impl Iterator<Item = &Pod>,
) -> Result<Vec<PodFailure>> {
    let api = Api::<Pod>::namespaced(client.clone(), namespace);
    let mut out = Vec::new();
    // Node -> its ranks, from the job's ranks.csv, read once when a
    // whole-server pod failed.
    let mut tables: BTreeMap<String, BTreeMap<String, Vec<usize>>> = BTreeMap::new();
    for p in pods {
        let server = server_of(p);
        let mut ranks = Vec::new();
        if server.is_some()
            && let (Some(job), Some(node)) = (
                p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(INSTANCE_LABEL)),
                p.spec.as_ref().and_then(|s| s.node_name.as_ref()),
            )
        {
            if !tables.contains_key(job) {
                let table = node_ranks(client, namespace, job).await?;
                tables.insert(job.clone(), table);
            }
            ranks = tables[job].get(node).cloned().unwrap_or_default();
        }
        let pod = p.metadata.name.clone().unwrap_or_default();
        let status = p.status.as_ref();
        let all = status
            .and_then(|s| s.init_container_statuses.as_deref())
            .unwrap_or_default()
            .iter()
            .chain(
                status
                    .and_then(|s| s.container_statuses.as_deref())
                    .unwrap_or_default(),
            );
        for c in all {
            let Some(t) = c.state.as_ref().and_then(|st| st.terminated.as_ref()) else {
                continue;
            };
            if t.exit_code == 0 {
                continue;
            }
            let params = LogParams {
                container: Some(c.name.clone()),
                tail_lines: Some(LOG_LINES),
                ..LogParams::default()
            };
            let log = match api.logs(&pod, &params).await {
                Ok(text) => text.lines().map(str::to_string).collect(),
                Err(e) => vec![format!("(no log: {e})")],
            };
            let (rank, rank_is_index) = if server.is_some() {
                (None, false)
            } else {
                rank_of(p)
            };
            out.push(PodFailure {
                server: server.clone(),
                ranks: ranks.clone(),
                pod: pod.clone(),
                container: c.name.clone(),
                reason: t.reason.clone(),
                exit_code: Some(t.exit_code),
                message: t.message.clone(),
                rank,
                rank_is_index,
                finished_at: t
                    .finished_at
                    .as_ref()
                    .map(|f| f.0.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                log,
            });
        }
    }
    // RFC 3339 in UTC with whole seconds sorts as text.
    out.sort_by(|a, b| {
        (a.finished_at.is_none(), &a.finished_at, &a.pod).cmp(&(
            b.finished_at.is_none(),
            &b.finished_at,
            &b.pod,
        ))
    });
    Ok(out)
}

/// The server a whole-server DRA pod runs (its label
/// `topology.eflops.io/role: server`): its JobSet replicated Job
/// (`jobset.sigs.k8s.io/replicatedjob-name`, `server-<k>`, which JobSet
/// v0.12.0 sets on every pod, `labelAndAnnotateObject` in
/// `pkg/controllers/jobset_controller.go`), else the pod's name.
fn server_of(p: &Pod) -> Option<String> {
    let labels = p.metadata.labels.as_ref()?;
    if labels
        .get(&format!("{}role", crate::jobs::labels::PREFIX))
        .map(String::as_str)
        != Some("server")
    {
        return None;
    }
    labels
        .get("jobset.sigs.k8s.io/replicatedjob-name")
        .or(p.metadata.name.as_ref())
        .cloned()
}

/// The ranks of each Node in job `job`'s rank table (`ranks.csv` of its
/// ConfigMap `JOB-ranks`), sorted; empty when the ConfigMap or its table
/// is gone.
async fn node_ranks(
    client: &kube::Client,
    namespace: &str,
    job: &str,
) -> Result<BTreeMap<String, Vec<usize>>> {
    let name = format!("{job}-ranks");
    let api = Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(client.clone(), namespace);
    let cm = match api.get(&name).await {
        Ok(cm) => cm,
        Err(e) if is_status(&e, 404) => return Ok(BTreeMap::new()),
        Err(e) => {
            return Err(Error::api(
                format!("reading ConfigMap {namespace}/{name}"),
                e,
            ));
        }
    };
    let Some(csv) = cm.data.as_ref().and_then(|d| d.get("ranks.csv")) else {
        return Ok(BTreeMap::new());
    };
    let rows = crate::jobs::rank_check::read_table(
        csv,
        &format!("ConfigMap {namespace}/{name} ranks.csv"),
    )?;
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for r in rows {
        out.entry(r.node).or_default().push(r.rank);
    }
    for ranks in out.values_mut() {
        ranks.sort_unstable();
    }
    Ok(out)
}

/// A pod's rank: the `RANK` value of its first container (DRA rank pods
/// set it), else its completion index (the annotation
/// `batch.kubernetes.io/job-completion-index` of an Indexed Job's pods,
/// Kubernetes v1.34 "Jobs: completion mode"), marked as an index.
fn rank_of(p: &Pod) -> (Option<usize>, bool) {
    let env_rank = p
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.env.as_ref())
        .and_then(|env| env.iter().find(|e| e.name == "RANK"))
        .and_then(|e| e.value.as_deref())
        .and_then(|v| v.parse().ok());
    if env_rank.is_some() {
        return (env_rank, false);
    }
    let index = p
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("batch.kubernetes.io/job-completion-index"))
        .and_then(|v| v.parse().ok());
    (index, index.is_some())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::status::JobCondition;
    use super::*;

    fn pod(phase: &str) -> JobPod {
        JobPod {
            name: format!("p-{phase}"),
            phase: phase.to_string(),
            node: None,
            restarts: 0,
            reason: None,
            attempt: None,
        }
    }

    #[test]
    fn phases() {
        let [job, mpi, _] = workload_resources();
        let check = |ar: &ApiResource, data: Value, pods: &[&str], want: JobPhase| {
            let pods = pods.iter().map(|p| pod(p)).collect();
            let s = job_status(ar, "j", "ns", &data, pods);
            assert_eq!(s.phase, want, "{} {data}", ar.kind);
        };
        let par2 = json!({ "spec": { "parallelism": 2, "completions": 4 } });
        check(&job, par2.clone(), &["Running"], JobPhase::Pending);
        check(
            &job,
            par2.clone(),
            &["Running", "Running"],
            JobPhase::Running,
        );
        check(&job, json!({}), &["Running"], JobPhase::Running);
        check(&job, json!({}), &[], JobPhase::Pending);
        let cond =
            |t: &str, s: &str| json!({ "status": { "conditions": [{ "type": t, "status": s }] } });
        check(&job, cond("Complete", "True"), &[], JobPhase::Succeeded);
        check(&job, cond("Failed", "True"), &["Running"], JobPhase::Failed);
        check(&job, cond("Complete", "False"), &[], JobPhase::Pending);
        // An MPIJob runs when the operator says so, whatever its pods do.
        check(&mpi, cond("Running", "True"), &[], JobPhase::Running);
        check(&mpi, json!({}), &["Running"], JobPhase::Pending);
        check(&mpi, cond("Succeeded", "True"), &[], JobPhase::Succeeded);
    }

    #[test]
    fn status_table_lists_conditions_and_pods() {
        let s = JobStatus {
            kind: "Job".to_string(),
            name: "train".to_string(),
            namespace: "ml".to_string(),
            phase: JobPhase::Pending,
            active: 1,
            succeeded: 0,
            failed: 0,
            conditions: vec![JobCondition {
                type_: "Suspended".to_string(),
                status: "False".to_string(),
                reason: Some("JobResumed".to_string()),
                message: None,
            }],
            failures: Vec::new(),
            restarts: None,
            rank_table: None,
            stopped: None,
            pods: vec![JobPod {
                name: "train-0".to_string(),
                phase: "Pending".to_string(),
                node: None,
                restarts: 0,
                reason: Some("Unschedulable".to_string()),
                attempt: None,
            }],
        };
        assert_eq!(
            s.table(),
            "Job ml/train: Pending; 1 active, 0 succeeded, 0 failed; pods: 1 Pending (Unschedulable)

condition  status  reason      message
Suspended  False   JobResumed

pod      node  phase    restarts  reason
train-0  -     Pending  0         Unschedulable
"
        );
    }

    /// A DRA rank pod names its rank in `RANK`; an Indexed Job's pod has
    /// only its completion index.
    #[test]
    fn rank_of_a_dra_pod_and_an_indexed_pod() {
        let pod = |v: serde_json::Value| -> Pod { serde_json::from_value(v).unwrap() };
        let dra = pod(serde_json::json!({
            "metadata": { "name": "t-rank-5" },
            "spec": { "containers": [{ "name": "rank", "env": [{ "name": "WORLD_SIZE", "value": "8" }, { "name": "RANK", "value": "5" }] }] },
        }));
        assert_eq!(rank_of(&dra), (Some(5), false));
        let indexed = pod(serde_json::json!({
            "metadata": { "name": "t-2", "annotations": { "batch.kubernetes.io/job-completion-index": "2" } },
            "spec": { "containers": [{ "name": "ranks" }] },
        }));
        assert_eq!(rank_of(&indexed), (Some(2), true));
        let bare = pod(
            serde_json::json!({ "metadata": { "name": "x" }, "spec": { "containers": [{ "name": "c" }] } }),
        );
        assert_eq!(rank_of(&bare), (None, false));
    }
}
