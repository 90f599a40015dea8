//! Following and removing a submitted job.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, LogParams,
};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde::Serialize;
use serde_json::Value;

use planner::text::Table;

use super::{Error, Result, is_status, list_all};

/// The label every pod of a submission carries, with the job's name.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum JobPhase {
    /// Created, not all pods running yet.
    Pending,
    /// As many pods run as the Job runs at once (`spec.parallelism`), or
    /// the MPIJob says `Running`.
    Running,
    /// Finished successfully.
    Succeeded,
    /// Finished with a failure.
    Failed,
}

impl JobPhase {
    /// The phase's name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobPhase::Pending => "Pending",
            JobPhase::Running => "Running",
            JobPhase::Succeeded => "Succeeded",
            JobPhase::Failed => "Failed",
        }
    }
}

/// A condition of the workload's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobCondition {
    /// E.g. `Complete`, `Failed`, `Running`, `Succeeded`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Machine-readable reason.
    pub reason: Option<String>,
    /// Human-readable message.
    pub message: Option<String>,
}

/// One pod of the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobPod {
    /// Pod name.
    pub name: String,
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    pub phase: String,
    /// The Node it is bound to, once scheduled.
    pub node: Option<String>,
    /// Container restarts, summed.
    pub restarts: u32,
    /// Why a container waits or the pod failed (e.g. `ImagePullBackOff`).
    pub reason: Option<String>,
}

/// A workload (batch/v1 Job or kubeflow.org/v2beta1 MPIJob) and its pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobStatus {
    /// `Job` or `MPIJob`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Where it stands.
    pub phase: JobPhase,
    /// Pods running (for an MPIJob, launcher and workers together).
    pub active: u32,
    /// Pods that succeeded.
    pub succeeded: u32,
    /// Pods that failed.
    pub failed: u32,
    /// The workload's status conditions, as the API returned them.
    pub conditions: Vec<JobCondition>,
    /// Pods labelled `app.kubernetes.io/instance=NAME`, sorted by name.
    pub pods: Vec<JobPod>,
    /// Why its failed pods failed, with their last log lines ([`wait`]
    /// fills it when the job failed; empty otherwise).
    pub failures: Vec<PodFailure>,
}

/// A container that ended the pod with a failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodFailure {
    /// The pod.
    pub pod: String,
    /// The container (an init container such as `rank-check`, or the
    /// ranks' container).
    pub container: String,
    /// The container's reason (`Error`, `OOMKilled`, ...).
    pub reason: Option<String>,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Its termination message.
    pub message: Option<String>,
    /// The rank the pod ran: its `RANK` variable (a DRA rank pod), else
    /// its Indexed Job completion index (whole Nodes: the ranks of its
    /// Node follow from the rank table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// With `rank` from the completion index: true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rank_is_index: bool,
    /// When the container ended (`state.terminated.finishedAt`, RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Its last log lines (at most [`LOG_LINES`]).
    pub log: Vec<String>,
}

/// Log lines [`wait`] reads from each failed container.
pub const LOG_LINES: i64 = 20;

impl JobStatus {
    /// The status for people: the summary line, the conditions, the pods,
    /// and each failed container with its last log lines.
    pub fn table(&self) -> String {
        let s = self;
        let mut out = format!("{}\n", s.summary());
        if !s.conditions.is_empty() {
            let mut t = Table::new(["condition", "status", "reason", "message"]);
            for c in &s.conditions {
                t.row([
                    c.type_.clone(),
                    c.status.clone(),
                    c.reason.clone().unwrap_or_default(),
                    c.message.clone().unwrap_or_default(),
                ]);
            }
            out.push('\n');
            out.push_str(&t.render());
        }
        if !s.pods.is_empty() {
            let mut t = Table::new(["pod", "node", "phase", "restarts", "reason"]);
            for p in &s.pods {
                t.row([
                    p.name.clone(),
                    p.node.clone().unwrap_or_else(|| "-".to_string()),
                    p.phase.clone(),
                    p.restarts.to_string(),
                    p.reason.clone().unwrap_or_default(),
                ]);
            }
            out.push('\n');
            out.push_str(&t.render());
        }
        if let Some(f) = s.failures.first() {
            out.push_str(&format!(
                "\nfirst failure: {} (pod {}, container {}{}): {}\n",
                match (f.rank, f.rank_is_index) {
                    (Some(r), false) => format!("rank {r}"),
                    (Some(i), true) => format!("completion index {i}"),
                    (None, _) => "a pod".to_string(),
                },
                f.pod,
                f.container,
                f.finished_at
                    .as_deref()
                    .map(|t| format!(", ended {t}"))
                    .unwrap_or_default(),
                f.reason.as_deref().unwrap_or("no reason"),
            ));
        }
        for f in &s.failures {
            out.push_str(&format!(
                "\npod {} container {} failed: {}{}{}\n",
                f.pod,
                f.container,
                f.reason.as_deref().unwrap_or("no reason"),
                f.exit_code
                    .map(|c| format!(", exit code {c}"))
                    .unwrap_or_default(),
                f.message
                    .as_deref()
                    .map(|m| format!(", {}", m.trim()))
                    .unwrap_or_default(),
            ));
            if !f.log.is_empty() {
                out.push_str(&format!("  last {} log lines:\n", f.log.len()));
                for line in &f.log {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// One line: kind, name, phase, counts and pod phases.
    pub fn summary(&self) -> String {
        let mut phases: std::collections::BTreeMap<&str, usize> = Default::default();
        for p in &self.pods {
            *phases.entry(p.phase.as_str()).or_default() += 1;
        }
        let pods = if phases.is_empty() {
            "no pods yet".to_string()
        } else {
            phases
                .iter()
                .map(|(ph, n)| format!("{n} {ph}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut reasons: Vec<&str> = self
            .pods
            .iter()
            .filter_map(|p| p.reason.as_deref())
            .collect();
        reasons.sort_unstable();
        reasons.dedup();
        let reasons = if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        };
        format!(
            "{} {}/{}: {}; {} active, {} succeeded, {} failed; pods: {pods}{reasons}",
            self.kind,
            self.namespace,
            self.name,
            self.phase.as_str(),
            self.active,
            self.succeeded,
            self.failed
        )
    }
}

/// The ConfigMap that owns the rank Pods of a DRA submission.
fn config_map_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps")
}

/// The workload kinds a submission creates, in the order they are looked
/// up.
fn workload_resources() -> [ApiResource; 2] {
    [
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("batch", "v1", "Job"), "jobs"),
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("kubeflow.org", "v2beta1", "MPIJob"),
            "mpijobs",
        ),
    ]
}

/// The workload of the submission `name`: its Job, or else its MPIJob, or
/// else the ConfigMap `NAME-ranks` of a DRA submission (whose rank Pods
/// are the workload).
async fn workload(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(ApiResource, DynamicObject)> {
    let dra_root = format!("{name}-ranks");
    let candidates = workload_resources()
        .into_iter()
        .map(|ar| (ar, name.to_string()))
        .chain(std::iter::once((config_map_resource(), dra_root)));
    for (ar, object) in candidates {
        let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
        match api.get(&object).await {
            Ok(obj) => {
                if ar.kind == "ConfigMap" && !is_dra_root(&obj) {
                    break;
                }
                return Ok((ar, obj));
            }
            Err(e) if is_status(&e, 404) => {}
            Err(e) => {
                return Err(Error::api(
                    format!("reading {} {namespace}/{object}", ar.kind),
                    e,
                ));
            }
        }
    }
    Err(Error::JobNotFound {
        name: name.to_string(),
        namespace: namespace.to_string(),
    })
}

/// True for the ConfigMap of a DRA submission.
fn is_dra_root(obj: &DynamicObject) -> bool {
    obj.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&crate::jobs::manifests::placement_annotation()))
        .is_some_and(|v| v == "dra")
}

/// Reads the Job, or else the MPIJob, or else the DRA submission, named
/// `name`, and its pods.
///
/// Sends `GET /apis/batch/v1/namespaces/NS/jobs/NAME`, on 404 `GET
/// /apis/kubeflow.org/v2beta1/namespaces/NS/mpijobs/NAME`, on 404 `GET
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
    Ok(status_of(&ar, name, namespace, &obj, pods))
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
    }
}

fn count(v: Option<&Value>) -> u32 {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
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
    let conditions: Vec<JobCondition> = status
        .get("conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |f: &str| c.get(f).and_then(Value::as_str).map(str::to_string);
            JobCondition {
                type_: s("type").unwrap_or_default(),
                status: s("status").unwrap_or_default(),
                reason: s("reason"),
                message: s("message"),
            }
        })
        .collect();
    let is_true = |t: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == t && c.status == "True")
    };
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
    if ar.kind == "ConfigMap" {
        pods_status(name, namespace, obj, pods)
    } else {
        job_status(ar, name, namespace, &obj.data, pods)
    }
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
            s.failures = failures(client, namespace, pods.values()).await?;
        }
        if s.phase != JobPhase::Pending {
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
    for p in pods {
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
            let (rank, rank_is_index) = rank_of(p);
            out.push(PodFailure {
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

/// What [`delete`] removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// `Job` or `MPIJob`.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// The deleted object's uid, when the API returned the object.
    pub uid: Option<String>,
    /// Always `Foreground`: the workload goes once its pods and owned
    /// objects are gone.
    pub propagation: &'static str,
    /// The job's Secret (`<job>-probe-token`) when it was deleted here: one
    /// applied from `submit --dry-run` output has no owner for the garbage
    /// collector to follow.
    pub secret: Option<String>,
}

/// Deletes the Job, or else the MPIJob, or else the DRA submission, named
/// `name` with foreground propagation: the garbage collector removes its
/// pods and the objects that name it as owner (ConfigMap, Service; with
/// DRA, the Service, claim templates and rank Pods, whose ResourceClaims
/// go with them) first.
///
/// Sends `DELETE /apis/batch/v1/namespaces/NS/jobs/NAME` with the body
/// `{"propagationPolicy":"Foreground"}`, on 404 the same for `mpijobs`,
/// and on 404 `GET` and `DELETE` of the ConfigMap `NAME-ranks` when it is
/// a DRA submission's. Then `GET /api/v1/namespaces/NS/secrets/NAME-probe-token`
/// and, when its labels say this provisioner made it for this job,
/// `DELETE` it (a 404 at either step means it is gone already).
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) -> Result<Deleted> {
    let mut deleted = delete_root(client, namespace, name).await?;
    deleted.secret = delete_secret(client, namespace, name).await?;
    Ok(deleted)
}

/// Deletes the job's Secret when this provisioner made it for the job
/// `name` (labels `app.kubernetes.io/managed-by` and
/// `app.kubernetes.io/instance`); a Secret of that name that is not ours is
/// left alone.
async fn delete_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<String>> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Secret"), "secrets");
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
    let secret = crate::jobs::manifests::token_secret_name(name);
    let ours = match api.get(&secret).await {
        Ok(obj) => obj.metadata.labels.as_ref().is_some_and(|l| {
            l.get("app.kubernetes.io/managed-by").map(String::as_str)
                == Some(crate::jobs::labels::MANAGED_BY)
                && l.get(INSTANCE_LABEL).map(String::as_str) == Some(name)
        }),
        Err(e) if is_status(&e, 404) => return Ok(None),
        Err(e) => {
            return Err(Error::api(
                format!("reading Secret {namespace}/{secret}"),
                e,
            ));
        }
    };
    if !ours {
        return Ok(None);
    }
    match api.delete(&secret, &DeleteParams::default()).await {
        Ok(_) => Ok(Some(secret)),
        Err(e) if is_status(&e, 404) => Ok(None),
        Err(e) => Err(Error::api(
            format!("deleting Secret {namespace}/{secret}"),
            e,
        )),
    }
}

/// Deletes the workload or the DRA root.
async fn delete_root(client: &kube::Client, namespace: &str, name: &str) -> Result<Deleted> {
    for ar in workload_resources() {
        let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
        match api.delete(name, &DeleteParams::foreground()).await {
            Ok(done) => {
                return Ok(Deleted {
                    kind: ar.kind,
                    name: name.to_string(),
                    namespace: namespace.to_string(),
                    uid: done.left().and_then(|o| o.metadata.uid),
                    propagation: "Foreground",
                    secret: None,
                });
            }
            Err(e) if is_status(&e, 404) => {}
            Err(e) => {
                return Err(Error::api(
                    format!("deleting {} {namespace}/{name}", ar.kind),
                    e,
                ));
            }
        }
    }
    let ar = config_map_resource();
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
    let root = format!("{name}-ranks");
    match api.get(&root).await {
        Ok(obj) if is_dra_root(&obj) => {
            let done = api
                .delete(&root, &DeleteParams::foreground())
                .await
                .map_err(|e| Error::api(format!("deleting ConfigMap {namespace}/{root}"), e))?;
            return Ok(Deleted {
                kind: "ConfigMap".to_string(),
                name: root,
                namespace: namespace.to_string(),
                uid: done.left().and_then(|o| o.metadata.uid),
                propagation: "Foreground",
                secret: None,
            });
        }
        Ok(_) => {}
        Err(e) if is_status(&e, 404) => {}
        Err(e) => {
            return Err(Error::api(
                format!("reading ConfigMap {namespace}/{root}"),
                e,
            ));
        }
    }
    Err(Error::JobNotFound {
        name: name.to_string(),
        namespace: namespace.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(phase: &str) -> JobPod {
        JobPod {
            name: format!("p-{phase}"),
            phase: phase.to_string(),
            node: None,
            restarts: 0,
            reason: None,
        }
    }

    #[test]
    fn phases() {
        let [job, mpi] = workload_resources();
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
            pods: vec![JobPod {
                name: "train-0".to_string(),
                phase: "Pending".to_string(),
                node: None,
                restarts: 0,
                reason: Some("Unschedulable".to_string()),
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
