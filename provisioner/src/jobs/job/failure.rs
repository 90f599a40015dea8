//! The `[failure]` table: what happens to a DRA job when one rank fails.
//!
//! ```toml
//! [failure]
//! gang = "jobset"     # default: the ranks run as one JobSet; "controller":
//!                     # bare Pods that `provisioner controller` stops together;
//!                     # "none": bare Pods
//! restarts = 2        # whole-job restarts before the job fails (default 0)
//! ```
//!
//! With `gang = "jobset"` the ranks of a DRA job are one JobSet
//! (jobset.x-k8s.io/v1alpha2, kubernetes-sigs/jobset v0.12.0), one
//! replicated Job per rank: when one rank fails, the JobSet stops every
//! rank and starts them all again, on the same Nodes with the same claim
//! templates and rank table, up to `restarts` times, then fails as a whole
//! (`spec.failurePolicy.maxRestarts`). With `gang = "controller"` the
//! ranks are bare Pods (in a Kueue pod group when queued, which has no
//! limit of 18 PodSets), and `provisioner controller` deletes the other
//! ranks when one fails and records which failed first; nothing re-creates
//! them, so `restarts` is refused. With `gang = "none"` the ranks are bare
//! Pods, and nothing stops the others when one fails.

use serde::{Deserialize, Serialize};

use super::{Bad, PlacementMode, Unit};

/// Most PodSets Kueue admits in one Workload (`apis/kueue/v1beta2/
/// workload_types.go`, `+kubebuilder:validation:MaxItems=18`, Kueue
/// v0.19.2); Kueue's JobSet integration makes one PodSet per replicated Job
/// (`pkg/controller/jobs/jobset/jobset_controller.go`, `PodSets`), so a
/// queued JobSet holds at most this many ranks.
pub(crate) const KUEUE_MAX_POD_SETS: usize = 18;

/// How the ranks of a DRA job fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gang {
    /// One JobSet: a failed rank stops and restarts every rank.
    JobSet,
    /// Bare Pods that `provisioner controller` watches: a failed rank
    /// makes it delete the others (never restarted).
    Controller,
    /// Bare Pods: a failed rank leaves the others running until their
    /// engine times out.
    None,
}

/// The `[failure]` table, checked (DRA jobs; whole-Node Indexed Jobs and
/// MPIJobs fail as a whole with `backoffLimit: 0` and are not restarted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FailurePolicy {
    /// JobSet or bare Pods.
    pub gang: Gang,
    /// Whole-job restarts before the job fails (JobSet
    /// `spec.failurePolicy.maxRestarts`).
    pub restarts: u32,
}

/// The `[failure]` table as TOML gives it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFailure {
    #[serde(default)]
    gang: Option<String>,
    #[serde(default)]
    restarts: Option<i64>,
}

/// What the rest of the job file says that `[failure]` depends on.
pub(super) struct Context<'a> {
    pub name: &'a str,
    pub ranks: usize,
    pub queued: bool,
    pub mode: PlacementMode,
    /// The unit the file names: with `server`, one pod (and replicated
    /// Job) per server, whose count the placement knows.
    pub unit: Option<Unit>,
}

/// Checks `[failure]` against the job's placement, name, ranks and queue.
pub(super) fn check(raw: Option<RawFailure>, cx: &Context<'_>, bad: &mut Bad<'_>) -> FailurePolicy {
    let given = raw.is_some();
    let raw = raw.unwrap_or_default();
    let gang = match raw.gang.as_deref() {
        None | Some("jobset") => Gang::JobSet,
        Some("none") => Gang::None,
        Some("controller") => Gang::Controller,
        Some(g) => {
            bad(
                Some("failure"),
                "gang",
                format!("`{g}` is not a gang failure handling"),
                "use jobset (the ranks stop and restart together), controller (bare Pods that provisioner controller stops together when one fails) or none (bare Pods: nothing stops the others when one fails)",
            );
            Gang::JobSet
        }
    };
    let restarts = match raw.restarts {
        None => 0,
        Some(n) => match u32::try_from(n) {
            // JobSet's maxRestarts is an int32.
            Ok(n) if i32::try_from(n).is_ok() => n,
            _ => {
                bad(
                    Some("failure"),
                    "restarts",
                    format!("{n} is not a restart count"),
                    "use 0 (fail at the first failed rank) or more",
                );
                0
            }
        },
    };
    if cx.mode != PlacementMode::Dra {
        if given {
            let key = if raw.gang.is_some() {
                "gang"
            } else {
                "restarts"
            };
            bad(
                Some("failure"),
                key,
                "[failure] applies to [placement] mode = \"dra\": whole-Node Indexed Jobs and MPIJobs already fail as a whole (backoffLimit 0) and are not restarted".to_string(),
                "remove [failure], or use mode = \"dra\"",
            );
        }
        return FailurePolicy { gang, restarts };
    }
    let servers = cx.unit == Some(Unit::Server);
    if gang != Gang::JobSet && servers {
        bad(
            Some("failure"),
            "gang",
            "unit server runs one pod per server, and bare Pods are counted one per rank (status, Kueue's pod group)".to_string(),
            "leave gang out: the servers run as one JobSet, one Job per server",
        );
    }
    if gang == Gang::None && raw.restarts.is_some() {
        bad(
            Some("failure"),
            "restarts",
            "restarts need gang = \"jobset\": bare Pods are not restarted".to_string(),
            "remove restarts, or set gang = \"jobset\"",
        );
    }
    if gang == Gang::Controller && raw.restarts.is_some_and(|n| n != 0) {
        // Kueue v0.19.2 does not re-create a pod group's failed Pods
        // (site/content/en/docs/tasks/run/plain_pods.md, "Feature
        // limitations"), and the controller does not either.
        bad(
            Some("failure"),
            "restarts",
            "gang = \"controller\" stops every rank when one fails and re-creates none: Kueue's pod group does not re-create failed Pods, and neither does provisioner controller".to_string(),
            "remove restarts (or set 0), or use gang = \"jobset\" (at most 18 ranks in a queue) to restart the job as a whole",
        );
    }
    if gang == Gang::JobSet {
        if !cx.name.starts_with(|c: char| c.is_ascii_lowercase()) {
            bad(
                None,
                "name",
                format!(
                    "`{}` starts with a digit, and the JobSet's Jobs and Pods (<name>-rank-<r>-0) must be DNS-1035 labels, which start with a letter (JobSet v0.12.0's webhook)",
                    cx.name
                ),
                "start the name with a letter",
            );
        }
        // With whole servers the placement counts the servers against it.
        if cx.queued && !servers && cx.ranks > KUEUE_MAX_POD_SETS {
            bad(
                None,
                "queue",
                format!(
                    "Kueue v0.19 admits a JobSet as one Workload with a PodSet per replicated Job, at most {KUEUE_MAX_POD_SETS}, and this job has one replicated Job per rank ({} ranks)",
                    cx.ranks
                ),
                &format!(
                    "ask for at most {KUEUE_MAX_POD_SETS} ranks, submit without a queue, or set [failure] gang = \"controller\" (bare Pods in a Kueue pod group that provisioner controller stops together when one fails)"
                ),
            );
        }
    }
    FailurePolicy { gang, restarts }
}
