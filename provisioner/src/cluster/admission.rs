//! The Kueue AdmissionCheck controller's requests (`provisioner
//! controller`): one pass over the Workloads whose check of ours is
//! Pending, each decided by [`crate::jobs::admission::admit`].
//!
//! Followed: Kueue v0.19.2, `kueue.x-k8s.io/v1beta2`. An admission check
//! controller reports `Active` on its AdmissionChecks
//! (`apis/kueue/v1beta2/admissioncheck_types.go`; Kueue's own
//! ProvisioningRequest controller in
//! `pkg/controller/admissionchecks/provisioning/admissioncheck_reconciler.go`)
//! and sets its entry of the Workload's `status.admissionChecks` (a list
//! keyed by `name`) with a server-side apply of the status subresource
//! (`pkg/workload/patching/patching.go`, `patchStatus`).

use std::collections::BTreeMap;

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use serde::Serialize;
use serde_json::json;

use planner::checked::CheckedPlan;

use super::{Result, list_all, read_view};
use crate::error::Error;
use crate::jobs::admission::{self, CheckState, JOB_FILE_KEY};
use crate::jobs::job::JobSpec;
use crate::jobs::labels::MANAGED_BY;
use crate::nodes::Node;

/// The field manager of the controller's writes (not `submit`'s, whose
/// applies own the rest of the ConfigMap).
pub const CONTROLLER_MANAGER: &str = "eflops-provisioner-controller";

const GROUP: &str = "kueue.x-k8s.io";
const VERSION: &str = "v1beta2";

fn kueue(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, kind), plural)
}

/// What one pass decided for one Workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Admitted {
    /// The Workload's namespace.
    pub namespace: String,
    /// The Workload.
    pub workload: String,
    /// The job (the Workload's owner).
    pub job: String,
    /// The AdmissionCheck.
    pub check: String,
    /// The state written.
    pub state: CheckState,
    /// The message written.
    pub message: String,
    /// With Ready: the worst link load of the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_load: Option<usize>,
}

/// One pass: marks our AdmissionChecks (`spec.controllerName` =
/// [`admission::CONTROLLER_NAME`]) Active, then decides every Workload
/// whose check of ours is Pending and that has a quota reservation
/// (`status.admission`), in namespace and name order: writes the table
/// into the job's ConfigMap before it marks the check Ready.
pub async fn admit_pending(
    client: &kube::Client,
    plan: &CheckedPlan,
    bound: &[Node],
    gpu_resource: &str,
    now: &str,
) -> Result<Vec<Admitted>> {
    let checks_api =
        Api::<DynamicObject>::all_with(client.clone(), &kueue("AdmissionCheck", "admissionchecks"));
    let checks = list_all(&checks_api, ListParams::default(), "Kueue AdmissionChecks").await?;
    let mut ours = Vec::new();
    for c in &checks {
        if c.data["spec"]["controllerName"] != admission::CONTROLLER_NAME {
            continue;
        }
        let Some(name) = c.metadata.name.clone() else {
            continue;
        };
        let active = c.data["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|k| k["type"] == "Active" && k["status"] == "True");
        if !active {
            let body = json!({
                "apiVersion": format!("{GROUP}/{VERSION}"),
                "kind": "AdmissionCheck",
                "metadata": { "name": name },
                "status": { "conditions": [{
                    "type": "Active",
                    "status": "True",
                    "reason": "Active",
                    "message": "provisioner controller writes rank tables at admission",
                    "lastTransitionTime": now,
                }] },
            });
            checks_api
                .patch_status(&name, &params(), &Patch::Apply(&body))
                .await
                .map_err(|e| Error::api(format!("marking AdmissionCheck {name} Active"), e))?;
        }
        ours.push(name);
    }
    if ours.is_empty() {
        return Ok(Vec::new());
    }
    let wl_api = Api::<DynamicObject>::all_with(client.clone(), &kueue("Workload", "workloads"));
    let mut workloads = list_all(&wl_api, ListParams::default(), "Kueue Workloads").await?;
    workloads.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    let pending: Vec<(&DynamicObject, String)> = workloads
        .iter()
        .filter(|w| !w.data["status"]["admission"].is_null())
        .filter_map(|w| {
            w.data["status"]["admissionChecks"]
                .as_array()?
                .iter()
                .find(|c| {
                    c["state"] == "Pending"
                        && c["name"]
                            .as_str()
                            .is_some_and(|n| ours.iter().any(|o| o == n))
                })
                .and_then(|c| c["name"].as_str())
                .map(|n| (w, n.to_string()))
        })
        .collect();
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let view = read_view(client, gpu_resource).await?;
    let cms: Vec<k8s_openapi::api::core::v1::ConfigMap> = list_all(
        &Api::all(client.clone()),
        ListParams::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}")),
        "ConfigMaps",
    )
    .await?;
    // Jobs whose table holds its Nodes: our check Ready (an evicted
    // Workload is back to Pending, its old table no longer counts) and the
    // Workload not Finished.
    let running: Vec<(String, String)> = workloads
        .iter()
        .filter(|w| {
            w.data["status"]["admissionChecks"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["state"] == "Ready"
                        && c["name"]
                            .as_str()
                            .is_some_and(|n| ours.iter().any(|o| o == n))
                })
        })
        .filter(|w| {
            !w.data["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Finished" && c["status"] == "True")
        })
        .filter_map(|w| Some((w.metadata.namespace.clone()?, owner_job(w)?)))
        .collect();
    let mut held: BTreeMap<String, (String, String)> = BTreeMap::new();
    for cm in &cms {
        let (Some(ns), Some(name)) = (&cm.metadata.namespace, &cm.metadata.name) else {
            continue;
        };
        let ready = cm
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(&admission::table_annotation()))
            .is_some_and(|v| v == "ready");
        let job = name.strip_suffix("-ranks").unwrap_or(name);
        if !ready || !running.iter().any(|(n, j)| n == ns && j == job) {
            continue;
        }
        let Some(csv) = cm.data.as_ref().and_then(|d| d.get("ranks.csv")) else {
            continue;
        };
        let file = format!("ConfigMap {ns}/{name} ranks.csv");
        for row in crate::jobs::rank_check::read_table(csv, &file)? {
            held.insert(row.node, (ns.clone(), job.to_string()));
        }
    }

    let mut out = Vec::new();
    for (w, check) in pending {
        let ns = w.metadata.namespace.clone().unwrap_or_default();
        let wl_name = w.metadata.name.clone().unwrap_or_default();
        let job_name = owner_job(w).unwrap_or_default();
        let cm = cms.iter().find(|c| {
            c.metadata.namespace.as_deref() == Some(ns.as_str())
                && c.metadata.name.as_deref() == Some(format!("{job_name}-ranks").as_str())
        });
        let decided = decide(plan, bound, &view, w, &ns, &job_name, cm, &held);
        let (decision, job) = match decided {
            Ok(d) => d,
            Err(message) => (
                admission::Decision {
                    state: CheckState::Rejected,
                    message,
                    config_map: None,
                    placement: None,
                },
                None,
            ),
        };
        if let (Some(cm), Some(job)) = (&decision.config_map, &job) {
            let name = crate::jobs::manifests::config_map_name(job);
            Api::<DynamicObject>::namespaced_with(
                client.clone(),
                &ns,
                &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
            )
            .patch(&name, &params(), &Patch::Apply(cm))
            .await
            .map_err(|e| {
                Error::api(
                    format!("writing the rank table into ConfigMap {ns}/{name}"),
                    e,
                )
            })?;
            for r in decision.placement.iter().flat_map(|p| &p.ranks) {
                held.insert(r.node.clone(), (ns.clone(), job.name.clone()));
            }
        }
        let body = json!({
            "apiVersion": format!("{GROUP}/{VERSION}"),
            "kind": "Workload",
            "metadata": { "name": wl_name, "namespace": ns },
            "status": { "admissionChecks": [{
                "name": check,
                "state": decision.state.as_str(),
                "message": decision.message,
                "lastTransitionTime": now,
            }] },
        });
        Api::<DynamicObject>::namespaced_with(client.clone(), &ns, &kueue("Workload", "workloads"))
            .patch_status(&wl_name, &params(), &Patch::Apply(&body))
            .await
            .map_err(|e| {
                Error::api(
                    format!("setting check {check} of Workload {ns}/{wl_name}"),
                    e,
                )
            })?;
        out.push(Admitted {
            namespace: ns,
            workload: wl_name,
            job: job_name,
            check,
            state: decision.state,
            message: decision.message,
            worst_load: decision.placement.map(|p| p.worst_load),
        });
    }
    Ok(out)
}

fn params() -> PatchParams {
    PatchParams::apply(CONTROLLER_MANAGER).force()
}

/// The Job that owns a Workload (its `batch/v1` Job owner reference).
fn owner_job(w: &DynamicObject) -> Option<String> {
    w.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.kind == "Job" && o.api_version == "batch/v1")
        .map(|o| o.name.clone())
}

/// The decision for one Workload, or why it cannot be decided (a
/// rejection).
#[allow(clippy::too_many_arguments)]
fn decide(
    plan: &CheckedPlan,
    bound: &[Node],
    view: &crate::jobs::view::ClusterView,
    w: &DynamicObject,
    ns: &str,
    job_name: &str,
    cm: Option<&k8s_openapi::api::core::v1::ConfigMap>,
    held: &BTreeMap<String, (String, String)>,
) -> std::result::Result<(admission::Decision, Option<JobSpec>), String> {
    if job_name.is_empty() {
        return Err("the Workload has no batch/v1 Job owner: only Indexed Jobs written by provisioner submit with [kueue] get rank tables at admission".to_string());
    }
    let cm_name = format!("{job_name}-ranks");
    let text = cm
        .and_then(|c| c.data.as_ref())
        .and_then(|d| d.get(JOB_FILE_KEY))
        .ok_or(format!(
            "ConfigMap {ns}/{cm_name} with the job file ({JOB_FILE_KEY}) is missing: submit the job with [kueue] in its job file"
        ))?;
    let job = JobSpec::from_toml(text, &format!("ConfigMap {ns}/{cm_name} {JOB_FILE_KEY}"))
        .map_err(|e| e.to_string())?;
    let hosts = admission::assigned_hosts(&w.data["status"]["admission"])?;
    let others: BTreeMap<String, String> = held
        .iter()
        .filter(|(_, (n, j))| !(n == ns && j == job_name))
        .map(|(node, (n, j))| (node.clone(), format!("{n}/{j}")))
        .collect();
    let decision = admission::admit(plan, bound, &job, view, &hosts, &others);
    Ok((decision, Some(job)))
}
