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

use super::retry::{ObjectFailure, retried};
use super::{Result, is_status, list_retried, read::read_view_retried};
use crate::error::Error;
use crate::jobs::admission::{self, CheckState, JOB_FILE_KEY};
use crate::jobs::job::JobSpec;
use crate::jobs::labels::{MANAGED_BY, PREFIX};
use crate::nodes::Node;
use k8s_openapi::api::core::v1::ConfigMap;

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

/// What one admission pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AdmissionPass {
    /// The Workloads decided, in namespace and name order.
    pub admitted: Vec<Admitted>,
    /// Objects whose requests failed after their tries; the other
    /// Workloads were served, and the next pass tries these again.
    pub failed: Vec<ObjectFailure>,
    /// Workloads deleted while the pass ran (a 404): nothing to do.
    pub dropped: Vec<String>,
}

/// Tries of the table write when the API server answers 409 (a conflict:
/// the ConfigMap changed under us), each after a fresh read.
const CONFLICT_TRIES: usize = 3;

/// One pass: marks our AdmissionChecks (`spec.controllerName` =
/// [`admission::CONTROLLER_NAME`]) Active, then decides every Workload
/// whose check of ours is Pending and that has a quota reservation
/// (`status.admission`), in namespace and name order: writes the table
/// into the job's ConfigMap before it marks the check Ready.
///
/// Transient failures (429, 5xx, the connection) are tried again with a
/// jittered back-off ([`super::retry`]). A failed list ends the pass
/// (`Err`); a failed write of one object is reported in
/// [`AdmissionPass::failed`] and the other Workloads are served; a 409 on
/// the table write is tried again after a fresh read of the ConfigMap; a
/// Workload deleted meanwhile (404) is dropped.
pub async fn admit_pending(
    client: &kube::Client,
    plan: &CheckedPlan,
    bound: &[Node],
    gpu_resource: &str,
    now: &str,
) -> Result<AdmissionPass> {
    let mut pass = AdmissionPass::default();
    let checks_api =
        Api::<DynamicObject>::all_with(client.clone(), &kueue("AdmissionCheck", "admissionchecks"));
    let checks = list_retried(&checks_api, ListParams::default(), "Kueue AdmissionChecks").await?;
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
            let (pp, patch) = (params(), Patch::Apply(&body));
            if let Err(e) = retried(|| checks_api.patch_status(&name, &pp, &patch)).await {
                // Its Workloads are still ours to decide.
                pass.failed.push(ObjectFailure::new(
                    format!("AdmissionCheck {name}"),
                    &Error::api(format!("marking AdmissionCheck {name} Active"), e),
                ));
            }
        }
        ours.push(name);
    }
    if ours.is_empty() {
        return Ok(pass);
    }
    let wl_api = Api::<DynamicObject>::all_with(client.clone(), &kueue("Workload", "workloads"));
    let mut workloads = list_retried(&wl_api, ListParams::default(), "Kueue Workloads").await?;
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
        return Ok(pass);
    }
    let view = read_view_retried(client, gpu_resource).await?;
    let cms: Vec<ConfigMap> = list_retried(
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
        .filter_map(|w| Some((w.metadata.namespace.clone()?, owner_job(w)?.1)))
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
        match crate::jobs::rank_check::read_table(csv, &file) {
            Ok(rows) => {
                for row in rows {
                    held.insert(row.node, (ns.clone(), job.to_string()));
                }
            }
            // A table that cannot be read holds no Node we can name; the
            // others are still decided.
            Err(e) => pass
                .failed
                .push(ObjectFailure::new(format!("ConfigMap {ns}/{name}"), &e)),
        }
    }

    for (w, check) in pending {
        let ns = w.metadata.namespace.clone().unwrap_or_default();
        let wl_name = w.metadata.name.clone().unwrap_or_default();
        let job_name = owner_job(w).map(|(_, j)| j).unwrap_or_default();
        let cm_name = format!("{job_name}-ranks");
        let mut cm = cms
            .iter()
            .find(|c| {
                c.metadata.namespace.as_deref() == Some(ns.as_str())
                    && c.metadata.name.as_deref() == Some(cm_name.as_str())
            })
            .cloned();
        let mut tries = 0;
        let decision = loop {
            tries += 1;
            let (decision, job) = match decide(plan, bound, &view, w, &ns, cm.as_ref(), &held) {
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
            let (Some(table), Some(job)) = (&decision.config_map, &job) else {
                break Some(decision);
            };
            let object = format!("ConfigMap {ns}/{cm_name}");
            let api = Api::<ConfigMap>::namespaced(client.clone(), &ns);
            let (pp, patch) = (params(), Patch::Apply(table));
            match retried(|| api.patch(&cm_name, &pp, &patch)).await {
                Ok(_) => {
                    for r in decision.placement.iter().flat_map(|p| &p.ranks) {
                        held.insert(r.node.clone(), (ns.clone(), job.name.clone()));
                    }
                    break Some(decision);
                }
                // Changed under us: read it afresh and decide again.
                Err(e) if is_status(&e, 409) && tries < CONFLICT_TRIES => {
                    match retried(|| api.get(&cm_name)).await {
                        Ok(fresh) => cm = Some(fresh),
                        Err(e) if is_status(&e, 404) => {
                            pass.dropped.push(object);
                            break None;
                        }
                        Err(e) => {
                            pass.failed.push(ObjectFailure::new(
                                object.clone(),
                                &Error::api(format!("reading {object} again after a conflict"), e),
                            ));
                            break None;
                        }
                    }
                }
                Err(e) => {
                    pass.failed.push(ObjectFailure::new(
                        object.clone(),
                        &Error::api(format!("writing the rank table into {object}"), e),
                    ));
                    break None;
                }
            }
        };
        let Some(decision) = decision else {
            continue;
        };
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
        let api = Api::<DynamicObject>::namespaced_with(
            client.clone(),
            &ns,
            &kueue("Workload", "workloads"),
        );
        let object = format!("Workload {ns}/{wl_name}");
        let (pp, patch) = (params(), Patch::Apply(&body));
        match retried(|| api.patch_status(&wl_name, &pp, &patch)).await {
            Ok(_) => {}
            Err(e) if is_status(&e, 404) => {
                pass.dropped.push(object);
                continue;
            }
            Err(e) => {
                pass.failed.push(ObjectFailure::new(
                    object,
                    &Error::api(
                        format!("setting check {check} of Workload {ns}/{wl_name}"),
                        e,
                    ),
                ));
                continue;
            }
        }
        pass.admitted.push(Admitted {
            namespace: ns,
            workload: wl_name,
            job: job_name,
            check,
            state: decision.state,
            message: decision.message,
            worst_load: decision.placement.map(|p| p.worst_load),
        });
    }
    Ok(pass)
}

fn params() -> PatchParams {
    PatchParams::apply(CONTROLLER_MANAGER).force()
}

/// The workload kinds whose Workloads our check may be asked about, as
/// Kueue v0.19.2 owns them: a batch/v1 Job, a JobSet
/// (`jobset.x-k8s.io`), an MPIJob (`kubeflow.org`), or, for a pod group,
/// each of its Pods (`pkg/controller/jobs/pod/pod_controller.go`,
/// `ConstructComposableWorkload`: the Workload is named after the group,
/// `workloadName`, and every Pod owns it).
const OWNER_KINDS: [(&str, &str); 4] = [
    ("Job", "batch/v1"),
    ("JobSet", "jobset.x-k8s.io/"),
    ("MPIJob", "kubeflow.org/"),
    ("Pod", "v1"),
];

/// The kind and name of the job a Workload is for: its owner's, or with a
/// pod group (owned by Pods), the group's, which is the Workload's name.
fn owner_job(w: &DynamicObject) -> Option<(String, String)> {
    let o = w.metadata.owner_references.as_ref()?.iter().find(|o| {
        OWNER_KINDS.iter().any(|(kind, api)| {
            o.kind == *kind
                && (o.api_version == *api || (api.ends_with('/') && o.api_version.starts_with(api)))
        })
    })?;
    let name = if o.kind == "Pod" {
        w.metadata.name.clone()?
    } else {
        o.name.clone()
    };
    Some((o.kind.clone(), name))
}

/// The decision for one Workload, or why it cannot be decided (a
/// rejection). `cm` is the job's ConfigMap as read.
///
/// - A job whose ConfigMap is marked `topology.eflops.io/table: pending`
///   (`[kueue]`: a whole-Node Indexed Job) gets its table for the Nodes
///   Kueue assigned ([`admission::admit`]).
/// - A job whose table `submit` made (every other kind submit queues: a
///   whole-Node Indexed Job, an MPIJob, a DRA JobSet or pod group, each
///   pinned to its Nodes) is Ready as it is, unless another running job's
///   admission table holds one of its Nodes (Retry, naming both).
fn decide(
    plan: &CheckedPlan,
    bound: &[Node],
    view: &crate::jobs::view::ClusterView,
    w: &DynamicObject,
    ns: &str,
    cm: Option<&ConfigMap>,
    held: &BTreeMap<String, (String, String)>,
) -> std::result::Result<(admission::Decision, Option<JobSpec>), String> {
    let Some((kind, job_name)) = owner_job(w) else {
        return Err("the Workload is owned by no Job, JobSet, MPIJob or Pod: provisioner controller writes rank tables only for jobs that provisioner submit made".to_string());
    };
    let cm_name = format!("{job_name}-ranks");
    let cm = cm
        .filter(|c| super::jobs::is_ours(&c.metadata, &job_name))
        .ok_or(format!(
            "{kind} {ns}/{job_name} has no ConfigMap {cm_name} of provisioner submit: submit the job with provisioner submit, or take this AdmissionCheck off its ClusterQueue"
        ))?;
    let pending = cm
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(&admission::table_annotation()))
        .is_some_and(|v| v == "pending");
    if !pending {
        return submitted(cm, ns, &kind, &job_name, held).map(|d| (d, None));
    }
    if kind != "Job" {
        return Err(format!(
            "{kind} {ns}/{job_name} waits for a table at admission, which is made for whole-Node Indexed Jobs only"
        ));
    }
    let text = cm
        .data
        .as_ref()
        .and_then(|d| d.get(JOB_FILE_KEY))
        .ok_or(format!(
            "ConfigMap {ns}/{cm_name} with the job file ({JOB_FILE_KEY}) is missing: submit the job with [kueue] in its job file"
        ))?;
    let job = JobSpec::from_toml(text, &format!("ConfigMap {ns}/{cm_name} {JOB_FILE_KEY}"))
        .map_err(|e| e.to_string())?;
    let hosts = admission::assigned_hosts(&w.data["status"]["admission"])?;
    let others: BTreeMap<String, String> = held
        .iter()
        .filter(|(_, (n, j))| !(n == ns && j == &job_name))
        .map(|(node, (n, j))| (node.clone(), format!("{n}/{j}")))
        .collect();
    let decision = admission::admit(plan, bound, &job, view, &hosts, &others);
    Ok((decision, Some(job)))
}

/// The check of a job whose table `submit` made (see [`decide`]).
fn submitted(
    cm: &ConfigMap,
    ns: &str,
    kind: &str,
    job: &str,
    held: &BTreeMap<String, (String, String)>,
) -> std::result::Result<admission::Decision, String> {
    let name = format!("{job}-ranks");
    let csv = cm
        .data
        .as_ref()
        .and_then(|d| d.get("ranks.csv"))
        .ok_or(format!(
            "ConfigMap {ns}/{name} has no ranks.csv: submit the job again"
        ))?;
    let rows =
        crate::jobs::rank_check::read_table(csv, &format!("ConfigMap {ns}/{name} ranks.csv"))
            .map_err(|e| e.to_string())?;
    let mut nodes: Vec<&str> = rows.iter().map(|r| r.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    if let Some((node, (n, j))) = nodes.iter().find_map(|node| {
        held.get(*node)
            .filter(|(n, j)| !(n == ns && j == job))
            .map(|h| (node, h))
    }) {
        return Ok(admission::Decision {
            state: CheckState::Retry,
            message: format!(
                "Node {node} of {kind} {ns}/{job}'s rank table carries ranks of job {n}/{j}, admitted since submit placed this one; it is admitted again once that job is done"
            ),
            config_map: None,
            placement: None,
        });
    }
    let annotations = cm.metadata.annotations.as_ref();
    let load = annotations
        .and_then(|a| a.get(&format!("{PREFIX}worst-link-load")))
        .map(|w| format!(": worst link load {w} flows per directed inter-switch link"))
        .unwrap_or_default();
    Ok(admission::Decision {
        state: CheckState::Ready,
        message: format!(
            "rank table for {} ranks on Nodes {} made at submit, in ConfigMap {ns}/{name}{load}; {kind} {job}'s pods are pinned to those Nodes",
            rows.len(),
            nodes.join(", "),
        ),
        config_map: None,
        placement: None,
    })
}
