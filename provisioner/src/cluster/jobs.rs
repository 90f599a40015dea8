//! Following and removing a submitted job.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams};
use serde::Serialize;
use serde_json::Value;

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
}

impl JobStatus {
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

/// Reads the Job, or else the MPIJob, named `name`, and its pods.
///
/// Sends `GET /apis/batch/v1/namespaces/NS/jobs/NAME`, on 404 `GET
/// /apis/kubeflow.org/v2beta1/namespaces/NS/mpijobs/NAME`, then `GET
/// /api/v1/namespaces/NS/pods?labelSelector=app.kubernetes.io/instance=NAME`.
pub async fn status(client: &kube::Client, namespace: &str, name: &str) -> Result<JobStatus> {
    let mut found = None;
    for ar in workload_resources() {
        let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
        match api.get(name).await {
            Ok(obj) => {
                found = Some((ar, obj));
                break;
            }
            Err(e) if is_status(&e, 404) => {}
            Err(e) => {
                return Err(Error::api(
                    format!("reading {} {namespace}/{name}", ar.kind),
                    e,
                ));
            }
        }
    }
    let Some((ar, obj)) = found else {
        return Err(Error::JobNotFound {
            name: name.to_string(),
            namespace: namespace.to_string(),
        });
    };
    let pods = list_all(
        &Api::<Pod>::namespaced(client.clone(), namespace),
        ListParams::default().labels(&format!("{INSTANCE_LABEL}={name}")),
        "Pods",
    )
    .await?;
    let mut pods: Vec<JobPod> = pods.iter().map(job_pod).collect();
    pods.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(job_status(&ar, name, namespace, &obj.data, pods))
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
    let phase = if is_true("Failed") {
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
    }
}

/// How [`wait`] polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// Give up after this long.
    pub timeout: Duration,
    /// Pause after the first read; it doubles after each read.
    pub first_interval: Duration,
    /// Longest pause between reads.
    pub max_interval: Duration,
}

impl WaitOptions {
    /// Polls after 1 s, 2 s, 4 s, then every 10 s, for at most `timeout`.
    pub fn with_timeout(timeout: Duration) -> WaitOptions {
        WaitOptions {
            timeout,
            first_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(10),
        }
    }
}

/// Reads the job's [`status`] until it is Running, Succeeded or Failed,
/// calling `progress` with each status whose summary differs from the one
/// before (the first one included). Returns the last status; the caller
/// decides what a Failed job means. [`Error::Timeout`] when `timeout`
/// passes first.
pub async fn wait(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    options: &WaitOptions,
    progress: &mut (dyn FnMut(&JobStatus) + Send),
) -> Result<JobStatus> {
    let start = tokio::time::Instant::now();
    let mut interval = options.first_interval;
    let mut last = String::new();
    loop {
        let s = status(client, namespace, name).await?;
        let summary = s.summary();
        if summary != last {
            progress(&s);
            last = summary;
        }
        if s.phase != JobPhase::Pending {
            return Ok(s);
        }
        let elapsed = start.elapsed();
        if elapsed >= options.timeout {
            return Err(Error::Timeout {
                kind: s.kind,
                name: name.to_string(),
                namespace: namespace.to_string(),
                phase: s.phase.as_str().to_string(),
                seconds: options.timeout.as_secs(),
            });
        }
        tokio::time::sleep(interval.min(options.timeout - elapsed)).await;
        interval = (interval * 2).min(options.max_interval);
    }
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
}

/// Deletes the Job, or else the MPIJob, named `name` with foreground
/// propagation: the garbage collector removes its pods and the objects
/// that name it as owner (ConfigMap, Service) first.
///
/// Sends `DELETE /apis/batch/v1/namespaces/NS/jobs/NAME` with the body
/// `{"propagationPolicy":"Foreground"}`, and on 404 the same for `mpijobs`.
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) -> Result<Deleted> {
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
}
