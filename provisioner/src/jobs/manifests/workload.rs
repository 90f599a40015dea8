//! The Kubernetes Workload API objects of a job: one gang of its pods.
//!
//! Written from Kubernetes 1.36's API (`k8s.io/api` v0.36.0,
//! `scheduling/v1alpha2/types.go` and `core/v1/types.go`) and the KEPs
//! (kubernetes/enhancements `keps/sig-scheduling/4671-gang-scheduling`,
//! `5732-topology-aware-workload-scheduling`, and
//! `keps/sig-apps/5547-integrate-workload-with-job`):
//!
//! - **Workload `<job>`** (`scheduling.k8s.io/v1alpha2`): one
//!   `podGroupTemplates` entry `ranks` with `schedulingPolicy.gang.minCount`
//!   = the job's pods (all or nothing) and `schedulingConstraints.topology`
//!   = one `key`, the node label of the narrowest level of the plan that
//!   holds every Node of the placement; `controllerRef` names the job's
//!   root object.
//! - **PodGroup `<job>`**: the runtime instance of that template
//!   (`spec.podGroupTemplateRef.workload`), with the same policy and
//!   constraint (the controller copies them: PodGroupSpec's doc comments).
//! - **Every rank pod** carries `spec.schedulingGroup.podGroupName: <job>`,
//!   the field that replaced `workloadRef` in 1.36. A batch/v1 Job whose
//!   template already has it is left alone by the Job controller's own
//!   Workload integration (KEP-5547, `manageNone`: "the pod template
//!   already carries a `schedulingGroup`"), so the two never both make a
//!   gang.
//!
//! The API needs Kubernetes 1.36 with the feature gates `GenericWorkload`
//! and `GangScheduling` (kube-apiserver, kube-scheduler,
//! kube-controller-manager; KEP-4671 "Feature gates merge in v1.37") and
//! `TopologyAwareWorkloadScheduling` for the topology constraint
//! (kube-apiserver, kube-scheduler; KEP-5732 `kep.yaml`), and the alpha
//! API switched on with `--runtime-config=scheduling.k8s.io/v1alpha2=true`.
//! Without `TopologyAwareWorkloadScheduling` the API server refuses the
//! constraint (`+k8s:ifDisabled(TopologyAwareWorkloadScheduling)=+k8s:forbidden`).
//! Kubernetes 1.37 moves the API to `v1beta1` and `v1alpha3`, which this
//! module does not write.
//!
//! Not written for queued jobs (Kueue v0.19.2 neither writes nor reads
//! these objects: its admission decides, see docs/provisioner.md,
//! "Workload API") or MPIJobs (the MPI Operator's templates are not known
//! to keep `spec.schedulingGroup`).
//!
//! There is no CRD for a built-in API: the objects are checked against the
//! Go types above in `tests/it/workload_api.rs`, and only there.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::export::labels::{key, node_labels};

use super::metadata;
use crate::error::{Error, Result};
use crate::jobs::job::{JobSpec, Launcher, WorkloadApiChoice};
use crate::jobs::labels::PREFIX;
use crate::jobs::placement::Placement;
use crate::jobs::view::{ClusterView, Manifests, WorkloadApi};
use planner::Problem;

/// The group and version of the objects.
pub const API_VERSION: &str = "scheduling.k8s.io/v1alpha2";

/// The name of the Workload's one pod group template.
pub const TEMPLATE: &str = "ranks";

/// The node label of one Node (`kubernetes.io/hostname`), the level of a
/// job on one Node.
const HOSTNAME: &str = "kubernetes.io/hostname";

/// What a cluster needs for the objects, for people.
pub const NEEDS: &str = "Kubernetes 1.36 with the feature gates GenericWorkload and GangScheduling (kube-apiserver, kube-scheduler, kube-controller-manager) and TopologyAwareWorkloadScheduling (kube-apiserver, kube-scheduler), and --runtime-config=scheduling.k8s.io/v1alpha2=true on the API server";

/// The node label of the narrowest level of the plan that holds every
/// Node of `placement`: `kubernetes.io/hostname` for one Node, else the
/// first of the server-level labels `switch`, `physical`, `pod` and
/// `fabric` (as `provisioner label-nodes` writes them, the levels of the
/// Kueue Topology `planner export --to kueue` writes) whose value all its
/// servers share.
pub fn topology_key(plan: &CheckedPlan, placement: &Placement) -> Result<String> {
    let servers: BTreeSet<&str> = placement.nodes.iter().map(|n| n.server.as_str()).collect();
    if placement.nodes.len() == 1 {
        return Ok(HOSTNAME.to_string());
    }
    let labels = node_labels(plan, PREFIX)?;
    let used: Vec<_> = labels
        .iter()
        .filter(|l| servers.contains(l.server.as_str()))
        .collect();
    for level in [key::SWITCH, key::PHYSICAL, key::POD, key::FABRIC] {
        let k = format!("{PREFIX}{level}");
        let values: BTreeSet<Option<&String>> = used.iter().map(|l| l.labels.get(&k)).collect();
        if values.len() == 1 && values.iter().all(Option::is_some) {
            return Ok(k);
        }
    }
    // Every server carries the fabric label with the plan's one name.
    Ok(format!("{PREFIX}{}", key::FABRIC))
}

/// Calls `f` on every rank pod's spec of `m`, and returns how many pods
/// they make; `None` for a workload whose pods this module does not
/// write into (an MPIJob).
fn rank_pod_specs(m: &mut Manifests, f: &mut dyn FnMut(&mut Value)) -> Option<u64> {
    let kind = m.workload["kind"].as_str().unwrap_or_default().to_string();
    match kind.as_str() {
        "Job" => {
            let pods = m.workload["spec"]["parallelism"].as_u64().unwrap_or(1);
            f(&mut m.workload["spec"]["template"]["spec"]);
            Some(pods)
        }
        "JobSet" => {
            let mut pods = 0;
            let jobs = m.workload["spec"]["replicatedJobs"].as_array_mut()?;
            for r in jobs {
                let replicas = r["replicas"].as_u64().unwrap_or(1);
                let parallelism = r["template"]["spec"]["parallelism"].as_u64().unwrap_or(1);
                pods += replicas * parallelism;
                f(&mut r["template"]["spec"]["template"]["spec"]);
            }
            Some(pods)
        }
        "ConfigMap" => {
            let mut pods = 0;
            for o in m.owned.iter_mut().filter(|o| o["kind"] == "Pod") {
                pods += 1;
                f(&mut o["spec"]);
            }
            Some(pods)
        }
        _ => None,
    }
}

/// The Workload and PodGroup of `job`: a gang of `pods`, in one domain of
/// `topology` when given, created for `root` (the job's root object).
pub fn objects(job: &JobSpec, root: &Value, pods: i32, topology: Option<&str>) -> [Value; 2] {
    let policy = json!({ "gang": { "minCount": pods } });
    let (group, _) = root["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .rsplit_once('/')
        .unwrap_or_default();
    let mut controller = json!({
        "kind": root["kind"],
        "name": root["metadata"]["name"],
    });
    if !group.is_empty() {
        controller["apiGroup"] = json!(group);
    }
    let mut workload = json!({
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": metadata(job, &job.name, None),
        "spec": {
            "controllerRef": controller,
            "podGroupTemplates": [{
                "name": TEMPLATE,
                "schedulingPolicy": policy,
            }],
        },
    });
    let mut group = json!({
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": metadata(job, &job.name, None),
        "spec": {
            "podGroupTemplateRef": {
                "workload": { "workloadName": job.name, "podGroupTemplateName": TEMPLATE },
            },
            "schedulingPolicy": policy,
        },
    });
    if let Some(key) = topology {
        let constraints = json!({ "topology": [{ "key": key }] });
        workload["spec"]["podGroupTemplates"][0]["schedulingConstraints"] = constraints.clone();
        group["spec"]["schedulingConstraints"] = constraints;
    }
    [workload, group]
}

/// True when [`schedule`] reads what the cluster serves for `job`: the
/// job file does not say `off`, and the job is neither queued nor an
/// MPIJob. Only then does a submission ask discovery.
pub fn asks_cluster(job: &JobSpec) -> bool {
    job.schedule.workload_api != WorkloadApiChoice::Off
        && job.queue.is_none()
        && job.launcher != Launcher::Mpi
}

/// Adds the Workload API gang to `manifests` when `job`'s `[schedule]`
/// and what the cluster serves (`served`) call for it, and returns the
/// note for the summary (`None` when the job file said `off`).
///
/// With `workload_api = "on"`, a cluster whose discovery does not list
/// the resources is refused ([`Error::Job`], naming the key's line and
/// what to enable); offline, `auto` leaves them out and says how to get
/// them.
pub fn schedule(
    plan: &CheckedPlan,
    placement: &Placement,
    job: &JobSpec,
    served: &WorkloadApi,
    view: &ClusterView,
    manifests: &mut Manifests,
) -> Result<Option<String>> {
    let choice = job.schedule.workload_api;
    if choice == WorkloadApiChoice::Off {
        return Ok(None);
    }
    if job.queue.is_some() {
        return Ok(Some(format!(
            "no Workload API gang: the job waits in Kueue queue {}, and Kueue's admission decides when and where its pods start (Kueue v0.19 knows no scheduling.k8s.io Workloads; docs/provisioner.md, \"Workload API\")",
            job.queue.as_deref().unwrap_or_default()
        )));
    }
    if job.launcher == Launcher::Mpi {
        return Ok(Some(
            "no Workload API gang for an MPIJob: the MPI Operator's pod templates are not known to keep spec.schedulingGroup".to_string(),
        ));
    }
    match (served, choice) {
        (WorkloadApi::Unknown, WorkloadApiChoice::Auto) => {
            return Ok(Some(format!(
                "no Workload API gang: no cluster was asked ([schedule] workload_api = \"auto\"); \"on\" writes one for Kubernetes 1.36 ({API_VERSION}; docs/provisioner.md, \"Workload API\")"
            )));
        }
        (WorkloadApi::NotServed { why }, WorkloadApiChoice::Auto) => {
            return Ok(Some(format!(
                "no Workload API gang: the cluster does not serve {API_VERSION} workloads and podgroups ({why}); they need {NEEDS}"
            )));
        }
        (WorkloadApi::NotServed { why }, WorkloadApiChoice::On) => {
            return Err(Error::Job {
                file: job.file.clone(),
                problems: vec![Problem::at(
                    job.schedule.line,
                    "schedule.workload_api",
                    format!(
                        "\"on\" asks for a {API_VERSION} Workload and PodGroup, and the cluster does not serve them ({why})"
                    ),
                    format!("enable them ({NEEDS}), or set workload_api = \"auto\" or \"off\""),
                )],
            });
        }
        _ => {}
    }
    let topology = topology_key(plan, placement)?;
    let pods = rank_pod_specs(manifests, &mut |spec| {
        spec["schedulingGroup"] = json!({ "podGroupName": job.name });
    })
    .ok_or_else(|| Error::Manifest {
        job: job.name.clone(),
        message: "its workload has no rank pods this provisioner writes a schedulingGroup into"
            .to_string(),
    })?;
    let min = i32::try_from(pods)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| Error::Manifest {
            job: job.name.clone(),
            message: format!("{pods} pods cannot be a gang's minCount (an int32 of at least 1)"),
        })?;
    let missing = unlabelled(view, placement, &topology);
    let [workload, group] = objects(
        job,
        &manifests.workload,
        min,
        missing.is_empty().then_some(topology.as_str()),
    );
    manifests.owned.splice(0..0, [workload, group]);
    if !missing.is_empty() {
        return Ok(Some(format!(
            "the {min} pods are one gang: Workload and PodGroup {} ({API_VERSION}), minCount {min}, with no topology constraint: {}, so a constraint on {topology} could never be met (run provisioner label-nodes, then submit again for one); this needs {NEEDS}",
            job.name,
            missing.join("; ")
        )));
    }
    Ok(Some(format!(
        "the {min} pods are one gang: Workload and PodGroup {} ({API_VERSION}), minCount {min}, every pod in one domain of {topology} (a label provisioner label-nodes writes); this needs {NEEDS}",
        job.name
    )))
}

/// Why the placed Nodes cannot meet a constraint on `key`, as read from
/// the cluster: each Node without the label, or the values when they are
/// not one domain. Empty when they can, when the key is the host name
/// (one Node), or when the view did not read labels (`--offline`).
fn unlabelled(view: &ClusterView, placement: &Placement, key: &str) -> Vec<String> {
    if key == HOSTNAME {
        return Vec::new();
    }
    let mut lacking = Vec::new();
    let mut values = BTreeSet::new();
    for n in &placement.nodes {
        let Some(labels) = view.node(&n.node).and_then(|s| s.topology_labels.as_ref()) else {
            continue;
        };
        match labels.get(key) {
            Some(v) => {
                values.insert(v.as_str());
            }
            None => lacking.push(n.node.as_str()),
        }
    }
    let mut out = Vec::new();
    if !lacking.is_empty() {
        out.push(format!("Node {} lacks the label {key}", lacking.join(", ")));
    }
    if values.len() > 1 {
        let v: Vec<&str> = values.into_iter().collect();
        out.push(format!(
            "the Nodes' {key} labels name {} domains ({}), not the plan's one",
            v.len(),
            v.join(", ")
        ));
    }
    out
}
