//! The status of a JobSet: the ranks of a DRA job as one gang
//! (kubernetes-sigs/jobset v0.12.0, `api/jobset/v1alpha2/jobset_types.go`
//! and `pkg/constants/constants.go`).
//!
//! The JobSet is `Failed` (condition `Failed`, reason `FailedJobs` or
//! `ReachedMaxRestarts`) or `Completed`; while neither, a failed rank makes
//! the controller delete every Job of the attempt and recreate them,
//! counting `status.restarts` up, until `spec.failurePolicy.maxRestarts`
//! (no rules: every failure counts, `status.restartsCountTowardsMax`).
//! Every pod carries its attempt in the label
//! `jobset.sigs.k8s.io/restart-attempt` (`labelAndAnnotateObject` in
//! `pkg/controllers/jobset_controller.go`).

use kube::api::{ApiResource, GroupVersionKind};
use serde_json::Value;

use super::status::{JobPhase, JobPod, JobRestarts, JobStatus, conditions_of, count, is_true};

/// The label with a pod's restart attempt.
pub(super) const RESTART_ATTEMPT_LABEL: &str = "jobset.sigs.k8s.io/restart-attempt";

/// The restart attempt a JobSet's pod belongs to; `None` for other pods.
pub(super) fn attempt_of(p: &k8s_openapi::api::core::v1::Pod) -> Option<u32> {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(RESTART_ATTEMPT_LABEL))
        .and_then(|v| v.parse().ok())
}

/// `jobset.x-k8s.io/v1alpha2` JobSet.
pub(super) fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("jobset.x-k8s.io", "v1alpha2", "JobSet"),
        "jobsets",
    )
}

/// The status of the JobSet `data` with its `pods`:
///
/// - `Failed` when the condition says so, or when a pod of the current
///   attempt failed with no restart left (the controller fails the JobSet
///   next: every rank is needed);
/// - `Succeeded` when the condition `Completed` is true;
/// - `Running` when as many pods of the current attempt run as the JobSet
///   has ranks (one pod per replicated Job and replica);
/// - `Pending` otherwise, also while it restarts.
pub(super) fn status(name: &str, namespace: &str, data: &Value, pods: Vec<JobPod>) -> JobStatus {
    let status = data.get("status").cloned().unwrap_or(Value::Null);
    let conditions = conditions_of(&status);
    let is_true = |t: &str| is_true(&conditions, t);
    let replicated: Vec<&Value> = data
        .pointer("/spec/replicatedJobs")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let ranks: u64 = replicated
        .iter()
        .map(|r| r.get("replicas").and_then(Value::as_u64).unwrap_or(1))
        .sum();
    let max = count(data.pointer("/spec/failurePolicy/maxRestarts"));
    let attempt = count(status.get("restarts"));
    let counted = count(status.get("restartsCountTowardsMax"));
    let current = |p: &&JobPod| p.attempt.is_none_or(|a| a == attempt);
    let of = |phase: &str| {
        pods.iter()
            .filter(current)
            .filter(|p| p.phase == phase)
            .count() as u64
    };
    let phase = if is_true("Failed") || (of("Failed") > 0 && counted >= max) {
        JobPhase::Failed
    } else if is_true("Completed") {
        JobPhase::Succeeded
    } else if ranks > 0 && of("Running") >= ranks {
        JobPhase::Running
    } else {
        JobPhase::Pending
    };
    let jobs: Vec<&Value> = status
        .get("replicatedJobsStatus")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let sum = |f: &str| jobs.iter().map(|r| count(r.get(f))).sum::<u32>();
    JobStatus {
        kind: "JobSet".to_string(),
        name: name.to_string(),
        namespace: namespace.to_string(),
        phase,
        active: sum("active"),
        succeeded: sum("succeeded"),
        failed: sum("failed"),
        conditions,
        pods,
        failures: Vec::new(),
        restarts: Some(JobRestarts { done: attempt, max }),
        rank_table: None,
        stopped: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(phase: &str, attempt: u32) -> JobPod {
        JobPod {
            name: format!("p-{phase}-{attempt}"),
            phase: phase.to_string(),
            node: None,
            restarts: 0,
            reason: None,
            attempt: Some(attempt),
        }
    }

    /// Two ranks, `max` restarts allowed, `restarts` done.
    fn job_set(max: u32, restarts: u32, conditions: Value) -> Value {
        json!({
            "spec": {
                "replicatedJobs": [{ "name": "rank-0", "replicas": 1 }, { "name": "rank-1", "replicas": 1 }],
                "failurePolicy": { "maxRestarts": max },
            },
            "status": {
                "restarts": restarts,
                "restartsCountTowardsMax": restarts,
                "conditions": conditions,
            },
        })
    }

    fn check(data: Value, pods: &[(&str, u32)], want: JobPhase) {
        let listed = pods.iter().map(|&(p, a)| pod(p, a)).collect();
        let s = status("t", "ml", &data, listed);
        assert_eq!(s.phase, want, "{data} {pods:?}");
    }

    #[test]
    fn a_failed_rank_fails_the_gang_only_when_no_restart_is_left() {
        let none = json!([]);
        check(
            job_set(0, 0, none.clone()),
            &[("Running", 0)],
            JobPhase::Pending,
        );
        check(
            job_set(0, 0, none.clone()),
            &[("Running", 0), ("Running", 0)],
            JobPhase::Running,
        );
        // No restart allowed: the first failed rank fails the job.
        check(
            job_set(0, 0, none.clone()),
            &[("Running", 0), ("Failed", 0)],
            JobPhase::Failed,
        );
        // One restart left: the JobSet restarts; the failed pod of
        // attempt 0 is history once attempt 1 runs.
        check(
            job_set(1, 0, none.clone()),
            &[("Running", 0), ("Failed", 0)],
            JobPhase::Pending,
        );
        check(
            job_set(1, 1, none.clone()),
            &[("Failed", 0), ("Running", 1), ("Running", 1)],
            JobPhase::Running,
        );
        check(
            job_set(1, 1, none),
            &[("Running", 1), ("Failed", 1)],
            JobPhase::Failed,
        );
        let cond = |t: &str| json!([{ "type": t, "status": "True", "reason": "r" }]);
        check(job_set(3, 1, cond("Failed")), &[], JobPhase::Failed);
        check(job_set(3, 0, cond("Completed")), &[], JobPhase::Succeeded);
    }
}
