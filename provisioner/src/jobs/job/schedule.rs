//! The `[schedule]` table: whether the job's pods form a gang of the
//! Kubernetes Workload API (`scheduling.k8s.io/v1alpha2` Workload and
//! PodGroup, Kubernetes 1.36; see [`crate::jobs::manifests::workload`]).
//!
//! ```toml
//! [schedule]
//! workload_api = "auto"   # default: where the cluster serves it; "on": always
//!                         # (refused against a cluster that does not); "off": never
//! ```

use serde::{Deserialize, Serialize};

use super::{Bad, Launcher};

/// Whether to write the Workload API objects of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadApiChoice {
    /// Where the cluster serves `scheduling.k8s.io/v1alpha2` workloads and
    /// podgroups; never offline.
    Auto,
    /// Always; a submission to a cluster that does not serve them is
    /// refused.
    On,
    /// Never.
    Off,
}

/// The `[schedule]` table, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// `workload_api`.
    pub workload_api: WorkloadApiChoice,
    /// The line of `workload_api` in the job file, when it is given: what
    /// a refusal at submit names.
    #[serde(skip)]
    pub line: Option<usize>,
}

/// The `[schedule]` table as TOML gives it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSchedule {
    #[serde(default)]
    workload_api: Option<String>,
}

/// What the rest of the job file says that `[schedule]` depends on.
pub(super) struct Context {
    pub queued: bool,
    pub launcher: Launcher,
    /// The line of `workload_api`, when given.
    pub line: Option<usize>,
}

/// Checks `[schedule]`: `on` is refused for a queued job (Kueue decides
/// admission and topology, and v0.19.2 knows nothing of the Workload
/// API: the two would fight) and for the MPI launcher (its pod templates
/// are not known to carry `spec.schedulingGroup`).
pub(super) fn check(raw: Option<RawSchedule>, cx: &Context, bad: &mut Bad<'_>) -> Schedule {
    let raw = raw.unwrap_or_default();
    let choice = match raw.workload_api.as_deref() {
        None | Some("auto") => WorkloadApiChoice::Auto,
        Some("on") => WorkloadApiChoice::On,
        Some("off") => WorkloadApiChoice::Off,
        Some(v) => {
            bad(
                Some("schedule"),
                "workload_api",
                format!("`{v}` is not a Workload API choice"),
                "use auto (where the cluster serves scheduling.k8s.io/v1alpha2), on (always) or off (never)",
            );
            WorkloadApiChoice::Auto
        }
    };
    if choice == WorkloadApiChoice::On {
        if cx.queued {
            bad(
                Some("schedule"),
                "workload_api",
                "a queued job is Kueue's to admit and place: Kueue v0.19 neither writes nor reads scheduling.k8s.io Workloads and PodGroups, and a gang with a topology constraint beside Kueue's admission would decide the same pods twice".to_string(),
                "remove queue to schedule the job as a Workload API gang, or set workload_api = \"auto\" or \"off\" (Kueue's admission wins)",
            );
        }
        if cx.launcher == Launcher::Mpi {
            bad(
                Some("schedule"),
                "workload_api",
                "the MPI Operator's pod templates are not known to carry spec.schedulingGroup (checked for batch/v1 Jobs, JobSet v0.12.0 and Pods only)".to_string(),
                "use launcher = \"indexed\", or set workload_api = \"auto\" or \"off\"",
            );
        }
    }
    Schedule {
        workload_api: choice,
        line: cx.line,
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::jobs::job::{JobSpec, WorkloadApiChoice};

    const BASE: &str = "name = \"j\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 4\n";

    /// The choice of `extra` appended to a minimal job, or its problems as
    /// `line: key: message`.
    fn check(extra: &str) -> Result<(WorkloadApiChoice, Option<usize>), Vec<String>> {
        match JobSpec::from_toml(&format!("{BASE}{extra}"), "j.toml") {
            Ok(j) => Ok((j.schedule.workload_api, j.schedule.line)),
            Err(Error::Job { problems, .. }) => Err(problems
                .iter()
                .map(|p| format!("{:?}: {}: {}", p.line, p.object, p.message))
                .collect()),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn the_workload_api_key_reads_and_refuses_what_cannot_be() {
        assert_eq!(check(""), Ok((WorkloadApiChoice::Auto, None)));
        assert_eq!(
            check("[schedule]\nworkload_api = \"on\"\n"),
            Ok((WorkloadApiChoice::On, Some(6)))
        );
        assert_eq!(
            check("[schedule]\nworkload_api = \"off\"\n"),
            Ok((WorkloadApiChoice::Off, Some(6)))
        );
        let bad = check("[schedule]\nworkload_api = \"yes\"\n").unwrap_err();
        assert_eq!(bad.len(), 1);
        assert!(
            bad[0].starts_with("Some(6): schedule.workload_api: `yes` is not"),
            "{bad:?}"
        );
        // Kueue's admission and a Workload API gang would decide the same
        // pods twice.
        let queued = check("queue = \"q\"\n[schedule]\nworkload_api = \"on\"\n").unwrap_err();
        assert!(queued[0].contains("Kueue v0.19"), "{queued:?}");
        assert!(queued[0].starts_with("Some(7): "), "{queued:?}");
        assert_eq!(
            check("queue = \"q\"\n[schedule]\nworkload_api = \"auto\"\n").map(|c| c.0),
            Ok(WorkloadApiChoice::Auto)
        );
        let mpi = check("launcher = \"mpi\"\n[schedule]\nworkload_api = \"on\"\n").unwrap_err();
        assert!(mpi[0].contains("MPI Operator"), "{mpi:?}");
        let unknown =
            JobSpec::from_toml(&format!("{BASE}[schedule]\nworkload = \"on\"\n"), "j.toml");
        assert!(matches!(unknown, Err(Error::Syntax { line: 6, .. })));
    }
}
