//! A submission prepared without touching the cluster: place the job on
//! the free Nodes the plan's servers are bound to, build its objects.
//!
//! The caller binds the plan once ([`nodes::bind`], checking the node map
//! before any request); the online path then reads a [`ClusterView`] from
//! the API, calls [`prepare`] and applies [`Submission::manifests`];
//! `--offline` passes [`ClusterView::all_free`] instead.

use serde::Serialize;
use serde_json::Value;

use planner::checked::CheckedPlan;

use super::job::JobSpec;
use super::manifests;
use super::placement::{self, Placement};
use super::view::{ClusterView, Manifests, WorkloadApi};
use crate::error::Result;
#[cfg(doc)]
use crate::nodes;
use crate::nodes::Node;

/// Everything a submission creates, and how it was decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Submission {
    /// Where every rank runs.
    pub placement: Placement,
    /// The objects to apply.
    pub manifests: Manifests,
    /// What was done and why, for people.
    pub notes: Vec<String>,
    /// With `[kueue]`: the topology Kueue is asked for; the placement is
    /// then only the shape of the job (its Nodes are Kueue's to choose,
    /// see [`super::admission::pending`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<super::job::KueueTopology>,
}

impl Submission {
    /// The objects in the order a reader (or `kubectl apply -f`) takes
    /// them: ConfigMap, Service, then the workload (with DRA placement,
    /// the ConfigMap that owns them all, the Service, then each rank's
    /// claim template and Pod).
    pub fn documents(&self) -> Vec<&Value> {
        let workload = std::iter::once(&self.manifests.workload);
        if self.manifests.workload.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
            workload.chain(&self.manifests.owned).collect()
        } else {
            self.manifests.owned.iter().chain(workload).collect()
        }
    }

    /// The objects as multi-document YAML, written by the one writer that
    /// quotes every string a YAML 1.1 or 1.2 reader could take for another
    /// type ([`planner::yaml`]).
    pub fn to_yaml(&self) -> Result<String, serde_norway::Error> {
        let mut out = String::new();
        for doc in self.documents() {
            out.push_str("---\n");
            out.push_str(&planner::yaml::to_string(doc)?);
        }
        Ok(out)
    }

    /// The submission with the Secret that holds `secret`, the probe's job
    /// secret every rank pod reads as `PROBE_TOKEN`
    /// ([`manifests::token_secret`]); [`Submission::documents`] and
    /// [`Submission::to_yaml`] leave it out, [`Submission::secret_yaml`]
    /// writes it.
    pub fn with_secret(mut self, job: &JobSpec, secret: &crate::probe::Secret) -> Submission {
        self.manifests.secret = Some(manifests::token_secret(job, secret));
        self
    }

    /// The Secret as one YAML document, for a file only its owner can
    /// read; `None` without [`Submission::with_secret`].
    pub fn secret_yaml(&self) -> Option<Result<String, serde_norway::Error>> {
        let s = self.manifests.secret.as_ref()?;
        Some(planner::yaml::to_string(s).map(|y| format!("---\n{y}")))
    }

    /// Adds the Workload API gang of `job` ([`manifests::workload`]) as
    /// its `[schedule]` and the cluster (`served`) call for, with its note.
    pub fn schedule(
        &mut self,
        plan: &CheckedPlan,
        job: &JobSpec,
        served: &WorkloadApi,
        view: &ClusterView,
    ) -> Result<()> {
        let note = manifests::workload::schedule(
            plan,
            &self.placement,
            job,
            served,
            view,
            &mut self.manifests,
        )?;
        self.notes.extend(note);
        Ok(())
    }

    /// A few lines for people: the Nodes, their ranks, the loads.
    pub fn summary(&self) -> String {
        let p = &self.placement;
        if self.admission.is_some() {
            let mut s = format!(
                "job {}: {} ranks on {} whole Nodes that Kueue chooses; rank table pending until admission\n",
                p.job,
                p.ranks.len(),
                p.nodes.len()
            );
            for n in &self.notes {
                s.push_str("note: ");
                s.push_str(n);
                s.push('\n');
            }
            return s;
        }
        let mut t = planner::text::Table::new(["node", "server", "GPUs", "ranks"]).right(&[2]);
        for n in &p.nodes {
            t.row([
                n.node.clone(),
                n.server.clone(),
                n.gpus.to_string(),
                n.ranks
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ]);
        }
        let mut s = format!(
            "job {}: {} ranks on {} Nodes, worst link load {} (lower bound {})\n\n{}",
            p.job,
            p.ranks.len(),
            p.nodes.len(),
            p.worst_load,
            p.lower_bound,
            t.render()
        );
        for n in &self.notes {
            s.push_str("note: ");
            s.push_str(n);
            s.push('\n');
        }
        s
    }
}

/// Places `job` on the free sub-nodes of `view` among the Nodes `bound`
/// ([`nodes::bind`] of `plan`), and builds its objects. Nothing is
/// returned unless the whole job is placed.
pub fn prepare(
    plan: &CheckedPlan,
    bound: &[Node],
    job: &JobSpec,
    view: &ClusterView,
) -> Result<Submission> {
    let placement = placement::place(plan, bound, view, job)?;
    let manifests = manifests::build(plan, &placement, job, view)?;
    let mut notes = placement.notes.clone();
    if job.launcher == super::job::Launcher::Mpi {
        notes.push(format!(
            "the MPI operator creates the workers' headless Service {}; the launcher builds the rankfile from the Nodes the workers land on and checks it against ranks.csv",
            job.name
        ));
    }
    if job.placement.mode == super::job::PlacementMode::Dra {
        let per = match placement::unit(plan, job) {
            super::job::Unit::Gpu => "rank",
            super::job::Unit::Server => "server",
        };
        notes.push(match job.failure.gang {
            super::job::Gang::JobSet if job.failure.restarts == 0 => format!(
                "the ranks run as JobSet {} (one Job per {per}): when one rank fails every rank stops and the job fails ([failure] restarts = 0)",
                job.name
            ),
            super::job::Gang::JobSet => format!(
                "the ranks run as JobSet {} (one Job per {per}): when one rank fails every rank stops, and the job restarts as a whole on the same sub-nodes with the same rank table, at most {} times ([failure] restarts), then fails",
                job.name, job.failure.restarts
            ),
            super::job::Gang::Controller => format!(
                "the ranks run as bare Pods ([failure] gang = \"controller\"){}: when one rank fails, provisioner controller (which must run) deletes the others and records the first failed rank on ConfigMap {}/{}; nothing restarts them",
                if job.queue.is_some() { " in one Kueue pod group" } else { "" },
                job.namespace,
                manifests::config_map_name(job),
            ),
            super::job::Gang::None => "the ranks run as bare Pods ([failure] gang = \"none\"): when one rank fails, nothing stops the others".to_string(),
        });
    }
    Ok(Submission {
        placement,
        manifests,
        notes,
        admission: None,
    })
}
