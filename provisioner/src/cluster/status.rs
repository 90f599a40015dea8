//! What `status` and `wait` report about a job: its phase, counts,
//! conditions, pods, restarts and failures, and how they are shown.

use serde::Serialize;
use serde_json::Value;

use planner::names::{escape, escape_lines};
use planner::text::Table;

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
    /// A JobSet's pod: the restart attempt it belongs to (its label
    /// `jobset.sigs.k8s.io/restart-attempt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

/// A JobSet's whole-job restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobRestarts {
    /// Restarts so far (`status.restarts`): the current attempt.
    pub done: u32,
    /// Restarts allowed (`spec.failurePolicy.maxRestarts`).
    pub max: u32,
}

/// The job's rank table as its objects say: the annotations
/// `topology.eflops.io/worst-link-load`, `lower-bound` and
/// `rank-table-method` that submit writes on the workload, or that
/// `provisioner controller` writes on the ConfigMap `<job>-ranks` at
/// Kueue's admission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankTableStatus {
    /// `submit`, `admission`, or `pending` (a job Kueue has not admitted:
    /// its table is not made yet).
    pub made: String,
    /// Most flows on one directed inter-switch link in any step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_link_load: Option<usize>,
    /// A load no table can beat with the sub-nodes it had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<usize>,
    /// Where the table comes from (`algorithm-1`, `heuristic`, `ilp`,
    /// `plan-order`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

impl RankTableStatus {
    /// The table that `annotations` describe, made at `made`; `None` when
    /// they name no worst link load.
    pub(super) fn from_annotations(
        annotations: Option<&std::collections::BTreeMap<String, String>>,
        made: &str,
    ) -> Option<RankTableStatus> {
        let a = annotations?;
        let get = |k: &str| a.get(&format!("{}{k}", crate::jobs::labels::PREFIX));
        let number = |k: &str| get(k).and_then(|v| v.parse::<usize>().ok());
        let worst = number("worst-link-load")?;
        Some(RankTableStatus {
            made: made.to_string(),
            worst_link_load: Some(worst),
            lower_bound: number("lower-bound"),
            method: get("rank-table-method").cloned(),
        })
    }

    /// One line for people.
    pub fn line(&self) -> String {
        match self.worst_link_load {
            None => "rank table: pending until Kueue admits the job (provisioner controller writes it then)".to_string(),
            Some(w) => {
                let bound = self
                    .lower_bound
                    .map(|b| format!(", lower bound {b}"))
                    .unwrap_or_default();
                let method = self
                    .method
                    .as_deref()
                    .map(|m| format!(", {m}"))
                    .unwrap_or_default();
                let congestion = if w > 1 { "; congested" } else { "" };
                format!(
                    "rank table: worst link load {w} flow{} per directed inter-switch link{congestion} (made at {}{method}{bound})",
                    if w == 1 { "" } else { "s" },
                    self.made
                )
            }
        }
    }
}

/// A workload (batch/v1 Job, kubeflow.org/v2beta1 MPIJob, jobset.x-k8s.io
/// JobSet, or the bare rank Pods of a DRA job) and its pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobStatus {
    /// `Job`, `MPIJob`, `JobSet` or `Pods`.
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
    /// Why its failed pods failed, with their last log lines ([`super::wait`]
    /// fills it when the job failed; empty otherwise).
    pub failures: Vec<PodFailure>,
    /// A JobSet's restarts so far and allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<JobRestarts>,
    /// Its rank table's worst link load ([`super::status`] and
    /// [`super::wait`] fill it; `None` for a workload that names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_table: Option<RankTableStatus>,
    /// Bare rank Pods that `provisioner controller` stopped as a whole
    /// (`[failure] gang = "controller"`): the first failed rank it
    /// recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<GangFailure>,
}

/// The first failed rank of a gang of bare Pods, as `provisioner
/// controller` recorded it on the job's ConfigMap (the annotations
/// `topology.eflops.io/failed-rank`, `failed-pod`, `failed-node`,
/// `failed-reason`, `stopped-at`) before it deleted the other ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GangFailure {
    /// The rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// Its pod.
    pub pod: String,
    /// Its Node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Why it failed.
    pub reason: String,
    /// When the controller stopped the others (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<String>,
}

impl GangFailure {
    /// The record in `annotations`; `None` when there is none.
    pub(super) fn from_annotations(
        annotations: Option<&std::collections::BTreeMap<String, String>>,
    ) -> Option<GangFailure> {
        let a = annotations?;
        let get = |k: &str| a.get(&super::gang::failure_annotation(k)).cloned();
        Some(GangFailure {
            reason: get("failed-reason")?,
            rank: get("failed-rank").and_then(|r| r.parse().ok()),
            pod: get("failed-pod").unwrap_or_default(),
            node: get("failed-node"),
            stopped_at: get("stopped-at"),
        })
    }

    /// One line for people.
    pub fn line(&self) -> String {
        format!(
            "stopped by provisioner controller{}: {} (pod {}{}) failed first: {}",
            self.stopped_at
                .as_deref()
                .map(|t| format!(" at {t}"))
                .unwrap_or_default(),
            self.rank
                .map_or_else(|| "a rank".to_string(), |r| format!("rank {r}")),
            self.pod,
            self.node
                .as_deref()
                .map(|n| format!(", Node {n}"))
                .unwrap_or_default(),
            self.reason,
        )
    }
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
    /// A whole-server pod: the server (`server-<k>`, its JobSet
    /// replicated Job).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// A whole-server pod: the ranks of its Node in the rank table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<usize>,
    /// With `rank` from the completion index: true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rank_is_index: bool,
    /// When the container ended (`state.terminated.finishedAt`, RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Its last log lines (at most [`super::LOG_LINES`]).
    pub log: Vec<String>,
}

impl JobStatus {
    /// The status for people: the summary line, the conditions, the pods,
    /// and each failed container with its last log lines. Everything the
    /// API server said (names, reasons, messages, logs) is escaped: no
    /// control character of a pod's reaches the terminal.
    pub fn table(&self) -> String {
        escape_lines(&self.unescaped_table())
    }

    fn unescaped_table(&self) -> String {
        let s = self;
        let mut out = format!("{}\n", s.summary());
        if let Some(t) = &s.rank_table {
            out.push_str(&t.line());
            out.push('\n');
        }
        if let Some(g) = &s.stopped {
            out.push_str(&g.line());
            out.push('\n');
        }
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
                match (&f.server, f.rank, f.rank_is_index) {
                    (Some(server), _, _) if f.ranks.is_empty() => server.clone(),
                    (Some(server), _, _) => format!("{server}, ranks {}", ranges(&f.ranks)),
                    (None, Some(r), false) => format!("rank {r}"),
                    (None, Some(i), true) => format!("completion index {i}"),
                    (None, None, _) => "a pod".to_string(),
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
        let restarts = self
            .restarts
            .map(|r| format!("restarts {} of {}; ", r.done, r.max))
            .unwrap_or_default();
        let line = format!(
            "{} {}/{}: {}; {} active, {} succeeded, {} failed; {restarts}pods: {pods}{reasons}",
            self.kind,
            self.namespace,
            self.name,
            self.phase.as_str(),
            self.active,
            self.succeeded,
            self.failed
        );
        escape(&line)
    }
}

/// Sorted ranks as ranges: `24-31`, `0-3,8-11`, `5`.
pub(super) fn ranges(ranks: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    out.join(",")
}

pub(super) fn count(v: Option<&Value>) -> u32 {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

/// The conditions of a workload's `status`, as the API returned them.
pub(super) fn conditions_of(status: &Value) -> Vec<JobCondition> {
    status
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
        .collect()
}

/// True when `conditions` hold the condition `t` with status `True`.
pub(super) fn is_true(conditions: &[JobCondition], t: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == t && c.status == "True")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranks_as_ranges() {
        for (ranks, want) in [
            (&[24, 25, 26, 27, 28, 29, 30, 31][..], "24-31"),
            (&[0, 1, 2, 3, 8, 9, 10, 11], "0-3,8-11"),
            (&[5], "5"),
            (&[1, 3, 4], "1,3-4"),
            (&[], ""),
        ] {
            assert_eq!(super::ranges(ranks), want, "{ranks:?}");
        }
    }
}
