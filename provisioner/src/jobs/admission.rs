//! Rank tables computed at admission, for jobs that Kueue's
//! topology-aware scheduling (TAS) places (`[kueue]` in the job file).
//!
//! Followed: Kueue v0.19.2, API `kueue.x-k8s.io/v1beta2`
//! (`apis/kueue/v1beta2/workload_types.go`, `admissioncheck_types.go`,
//! `topology_types.go`, and `site/content/en/docs/concepts/
//! topology_aware_scheduling.md` at the tag v0.19.2).
//!
//! - [`pending`] builds the submission: an Indexed Job, suspended in its
//!   LocalQueue, one pod per whole Node (every GPU of a Node, one pod per
//!   Node by anti-affinity) and no Node affinity of its own: the pod
//!   template carries the PodSet annotations
//!   (`kueue.x-k8s.io/podset-required-topology`, ...) and Kueue chooses
//!   the Nodes. Its ConfigMap holds the job file (`job.toml`) and is
//!   marked `topology.eflops.io/table: pending`; it has no `ranks.csv`,
//!   so a rank pod that started anyway fails in `rank-check`.
//! - [`admit`] is what `provisioner controller` decides for one Workload
//!   whose check is Pending: the Nodes of the Workload's
//!   `status.admission.podSetAssignments[].topologyAssignment` ([`assigned_hosts`])
//!   are checked (every one exists, is bound to a server of the plan and
//!   carries no rank table of another running job), then the ranks are
//!   placed on exactly those Nodes by [`placement::place`] and the
//!   ConfigMap is built by [`manifests::build`], the calls `submit` makes,
//!   over a view that offers only the assigned Nodes. The check becomes
//!   Ready with the worst link load in its message; Retry when the
//!   assignment is stale (a Node gone or taken); Rejected when it can
//!   never be right (a Node outside the plan, a domain of several pods).
//!
//! Kueue assigns the topology at quota reservation for checks that are not
//! ProvisioningRequest or MultiKueue checks (`podSetTopologyRequest` in
//! `pkg/scheduler/flavorassigner/tas_flavorassigner.go`, v0.19.2), so the
//! assignment is there while our check is Pending, and Kueue unsuspends the
//! Job only once every check is Ready.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use planner::checked::CheckedPlan;

use super::job::JobSpec;
use super::labels::PREFIX;
use super::manifests;
use super::placement::{self, Placement};
use super::submit::Submission;
use super::view::{ClusterView, Manifests};
use crate::error::{Error, Result};
use crate::nodes::Node;

/// The `controllerName` of our AdmissionCheck.
pub const CONTROLLER_NAME: &str = "topology.eflops.io/rank-table";

/// The ConfigMap key with the job file, for the controller.
pub const JOB_FILE_KEY: &str = "job.toml";

/// The ConfigMap key with rank 0's address (the Job's `MASTER_ADDR` reads
/// it with `configMapKeyRef`).
pub const MASTER_KEY: &str = "MASTER_ADDR";

/// The annotation of the job's ConfigMap: `pending` until the controller
/// wrote the table, then `ready`.
pub fn table_annotation() -> String {
    format!("{PREFIX}table")
}

/// The label of the Node's host name, the lowest level of the Topology
/// the controller reads.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// The AdmissionCheck `name` whose checks `provisioner controller`
/// answers (`kueue.x-k8s.io/v1beta2`, `spec.controllerName`); a
/// ClusterQueue lists it under `spec.admissionChecksStrategy`.
pub fn admission_check(name: &str) -> std::result::Result<Value, String> {
    if let Some(why) = planner::export::k8s_names::dns_subdomain_problem(name) {
        return Err(format!(
            "`{name}` {why}: name the AdmissionCheck as a DNS subdomain, e.g. eflops-rank-table"
        ));
    }
    Ok(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": { "name": name },
        "spec": { "controllerName": CONTROLLER_NAME },
    }))
}

/// The Job and ConfigMap of a job that Kueue places: see the module
/// documentation. `text` is the job file, kept in the ConfigMap.
pub fn pending(
    plan: &CheckedPlan,
    bound: &[Node],
    job: &JobSpec,
    text: &str,
) -> Result<Submission> {
    let Some(kueue) = &job.kueue else {
        return Err(Error::Manifest {
            job: job.name.clone(),
            message: "the job file has no [kueue] table".to_string(),
        });
    };
    let pods = pods_of(plan, job)?;
    // The objects of a placement on the first `pods` Nodes of the plan:
    // only their shape is kept (one whole Node per pod); the Nodes are
    // Kueue's to choose.
    let mut view = ClusterView::all_free(bound);
    let first: Vec<&str> = bound.iter().take(pods).map(|n| n.node.as_str()).collect();
    for n in &mut view.nodes {
        n.unschedulable = !first.contains(&n.name.as_str());
    }
    let nominal = super::submit::prepare(plan, bound, job, &view)?;
    let Manifests {
        mut workload,
        owned,
        secret,
    } = nominal.manifests;
    let cm_name = manifests::config_map_name(job);
    let annotations = json!({
        format!("{PREFIX}plan"): plan.name,
        format!("{PREFIX}algorithm"): job.algorithm.as_str(),
        format!("{PREFIX}engine"): job.engine.as_str(),
        table_annotation(): "pending",
    });
    workload["metadata"]["annotations"] = annotations.clone();
    let pod = &mut workload["spec"]["template"];
    if let Some(a) = pod["spec"]["affinity"].as_object_mut() {
        a.remove("nodeAffinity");
    }
    for (k, v) in kueue.annotations() {
        pod["metadata"]["annotations"][k] = json!(v);
    }
    for c in pod["spec"]["containers"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        for e in c["env"].as_array_mut().into_iter().flatten() {
            if e["name"] == MASTER_KEY {
                *e = json!({
                    "name": MASTER_KEY,
                    "valueFrom": { "configMapKeyRef": { "name": cm_name, "key": MASTER_KEY } },
                });
            }
        }
    }
    let owned = owned
        .into_iter()
        .map(|mut o| {
            if o["kind"] == "ConfigMap" {
                o["metadata"]["annotations"] = annotations.clone();
                o["data"] = json!({ JOB_FILE_KEY: text });
            }
            o
        })
        .collect();
    let mut notes = vec![format!(
        "Kueue chooses the {pods} Nodes ({} topology {}{}); `provisioner controller` writes the rank table for them into ConfigMap {}/{cm_name} at admission, and Kueue starts the pods only then",
        if kueue.required {
            "required"
        } else {
            "preferred"
        },
        kueue.level,
        kueue
            .slice
            .as_ref()
            .map(|(l, n)| format!(", slices of {n} pods in one {l}"))
            .unwrap_or_default(),
        job.namespace,
    )];
    notes.extend(
        nominal
            .notes
            .into_iter()
            .filter(|n| n.starts_with("made for ")),
    );
    Ok(Submission {
        placement: nominal.placement,
        manifests: Manifests {
            workload,
            owned,
            secret,
        },
        notes,
        admission: Some(kueue.clone()),
    })
}

/// Pods (whole Nodes) of a job Kueue places: its ranks fill Nodes whose
/// servers all have the same number of GPUs.
fn pods_of(plan: &CheckedPlan, job: &JobSpec) -> Result<usize> {
    let refuse = |message: String| Error::Manifest {
        job: job.name.clone(),
        message,
    };
    let per = match placement::common_gpu_count(&placement::gpus_by_server(plan)) {
        Ok(Some(per)) => per,
        Ok(None) => return Err(refuse("the plan names no GPU on any server".to_string())),
        Err(counts) => {
            return Err(refuse(format!(
                "with [kueue] every pod takes a whole Node and Kueue may choose any, so the plan's servers need one GPU count, and they have {counts}; leave out [kueue] to place the job at submit"
            )));
        }
    };
    if !job.ranks.is_multiple_of(per) {
        return Err(refuse(format!(
            "{} ranks do not fill whole Nodes of {per} GPUs, and with [kueue] every pod takes a whole Node; use a multiple of {per}",
            job.ranks
        )));
    }
    Ok(job.ranks / per)
}

/// The state an admission check reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CheckState {
    /// The table is written: Kueue may start the pods.
    Ready,
    /// The assignment is stale: Kueue should release the quota and
    /// assign again.
    Retry,
    /// The assignment can never carry the job.
    Rejected,
}

impl CheckState {
    /// The name in `status.admissionChecks[].state`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckState::Ready => "Ready",
            CheckState::Retry => "Retry",
            CheckState::Rejected => "Rejected",
        }
    }
}

/// What the controller decided for one Workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The check's new state.
    pub state: CheckState,
    /// Why, for `kubectl describe workload`.
    pub message: String,
    /// With [`CheckState::Ready`]: the ConfigMap to apply (the rank table,
    /// its scripts, rank 0's address), before the check is marked Ready.
    #[serde(skip)]
    pub config_map: Option<Value>,
    /// With [`CheckState::Ready`]: the placement on the assigned Nodes.
    pub placement: Option<Placement>,
}

impl Decision {
    fn not(state: CheckState, message: String) -> Decision {
        Decision {
            state,
            message,
            config_map: None,
            placement: None,
        }
    }
}

/// The host names and pod counts of a Workload's topology assignments,
/// read from `status.admission` (v1beta2: `podSetAssignments[].
/// topologyAssignment` with `levels` and `slices`, each slice with
/// `domainCount`, `valuesPerLevel[]` (`universal`, or `individual` with
/// `prefix`, `suffix`, `roots`) and `podCounts` (`universal` or
/// `individual`)). The lowest level must be `kubernetes.io/hostname`.
/// `Err` says what is wrong.
pub fn assigned_hosts(admission: &Value) -> std::result::Result<Vec<(String, u32)>, String> {
    let mut hosts = Vec::new();
    let sets = admission["podSetAssignments"]
        .as_array()
        .ok_or("status.admission has no podSetAssignments")?;
    for (p, set) in sets.iter().enumerate() {
        let ta = &set["topologyAssignment"];
        if ta.is_null() {
            return Err(format!(
                "podSetAssignments[{p}] has no topologyAssignment: the ClusterQueue's ResourceFlavor needs a topologyName (Kueue TAS)"
            ));
        }
        let levels: Vec<&str> = ta["levels"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(last) = levels.len().checked_sub(1) else {
            return Err(format!(
                "podSetAssignments[{p}].topologyAssignment has no levels"
            ));
        };
        if levels[last] != HOSTNAME_LABEL {
            return Err(format!(
                "the Topology's lowest level is {}, and the rank table needs Nodes: add {HOSTNAME_LABEL} as the Topology's last level",
                levels[last]
            ));
        }
        for (s, slice) in ta["slices"].as_array().into_iter().flatten().enumerate() {
            let at = format!("podSetAssignments[{p}].topologyAssignment.slices[{s}]");
            let count = slice["domainCount"]
                .as_u64()
                .ok_or(format!("{at} has no domainCount"))? as usize;
            let values = &slice["valuesPerLevel"][last];
            let names: Vec<String> = if let Some(u) = values["universal"].as_str() {
                vec![u.to_string(); count]
            } else {
                let ind = &values["individual"];
                let (pre, suf) = (
                    ind["prefix"].as_str().unwrap_or(""),
                    ind["suffix"].as_str().unwrap_or(""),
                );
                ind["roots"]
                    .as_array()
                    .ok_or(format!(
                        "{at}.valuesPerLevel[{last}] has neither universal nor individual"
                    ))?
                    .iter()
                    .map(|r| r.as_str().map(|r| format!("{pre}{r}{suf}")))
                    .collect::<Option<_>>()
                    .ok_or(format!("{at}: a root is not a string"))?
            };
            let counts: Vec<u32> = if let Some(u) = slice["podCounts"]["universal"].as_u64() {
                vec![u as u32; count]
            } else {
                slice["podCounts"]["individual"]
                    .as_array()
                    .ok_or(format!(
                        "{at}.podCounts has neither universal nor individual"
                    ))?
                    .iter()
                    .map(|c| c.as_u64().map(|c| c as u32))
                    .collect::<Option<_>>()
                    .ok_or(format!("{at}.podCounts: a count is not a number"))?
            };
            if names.len() != count || counts.len() != count {
                return Err(format!("{at}: domainCount {count} and its values disagree"));
            }
            hosts.extend(names.into_iter().zip(counts));
        }
    }
    Ok(hosts)
}

/// Decides one Workload (see the module documentation): `hosts` from
/// [`assigned_hosts`], `view` the cluster as read, `held` the Nodes that
/// carry the rank table of another job not finished (Node -> job).
pub fn admit(
    plan: &CheckedPlan,
    bound: &[Node],
    job: &JobSpec,
    view: &ClusterView,
    hosts: &[(String, u32)],
    held: &BTreeMap<String, String>,
) -> Decision {
    let want = match pods_of(plan, job) {
        Ok(p) => p,
        Err(e) => return Decision::not(CheckState::Rejected, e.to_string()),
    };
    let mut nodes: Vec<String> = Vec::new();
    for (host, pods) in hosts {
        let Some(state) = view
            .nodes
            .iter()
            .find(|n| n.hostname.as_deref() == Some(host.as_str()))
            .or_else(|| view.node(host))
        else {
            return Decision::not(
                CheckState::Retry,
                format!(
                    "stale topology assignment: Node {host} ({HOSTNAME_LABEL}={host}) is not in the cluster any more; assign again"
                ),
            );
        };
        let node = &state.name;
        if !bound.iter().any(|b| &b.node == node) {
            return Decision::not(
                CheckState::Rejected,
                format!(
                    "Node {node} is not bound to a server of plan {}: restrict the TAS ResourceFlavor's nodeLabels to the plan's Nodes (provisioner label)",
                    plan.name
                ),
            );
        }
        if *pods != 1 {
            return Decision::not(
                CheckState::Rejected,
                format!(
                    "Kueue assigned {pods} pods to Node {node}, and every pod of this job takes a whole Node: request the Node's GPUs in the pod (resources.gpu) so that one pod fills a Node"
                ),
            );
        }
        if let Some(other) = held.get(node) {
            return Decision::not(
                CheckState::Retry,
                format!(
                    "stale topology assignment: Node {node} carries ranks of job {other}; assign again"
                ),
            );
        }
        nodes.push(node.clone());
    }
    if nodes.len() != want {
        return Decision::not(
            CheckState::Rejected,
            format!(
                "Kueue assigned {} Nodes and the job needs {want} (one per pod)",
                nodes.len()
            ),
        );
    }
    // The same placement and objects as `submit`, on a view that offers
    // only the assigned Nodes.
    let mut only = view.clone();
    for n in &mut only.nodes {
        if !nodes.contains(&n.name) {
            n.unschedulable = true;
        }
    }
    let built = placement::place(plan, bound, &only, job)
        .and_then(|p| manifests::build(plan, &p, job, &only).map(|m| (p, m)));
    let (placement, built) = match built {
        Ok(b) => b,
        Err(e) => return Decision::not(CheckState::Retry, e.to_string()),
    };
    let master = built.workload["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == MASTER_KEY)
        .and_then(|e| e["value"].as_str())
        .unwrap_or_default()
        .to_string();
    let Some(mut cm) = built.owned.into_iter().find(|o| o["kind"] == "ConfigMap") else {
        return Decision::not(
            CheckState::Retry,
            "no ConfigMap was built for the job".to_string(),
        );
    };
    cm["metadata"]["annotations"][table_annotation()] = json!("ready");
    cm["data"][MASTER_KEY] = json!(master);
    let mut names = nodes.clone();
    names.sort_unstable();
    let congestion = if placement.worst_load > 1 {
        format!(
            "; congested: a congestion-free table has 1 flow per link{}",
            if placement.lower_bound > 1 {
                ", and no table on these Nodes can have fewer than the lower bound"
            } else {
                ", which these Nodes allow and this table does not reach"
            }
        )
    } else {
        String::new()
    };
    Decision {
        state: CheckState::Ready,
        message: format!(
            "rank table for {} ranks on Nodes {} ({}, made for {}) in ConfigMap {}/{}: worst link load {} flows per directed inter-switch link (lower bound {}){congestion}",
            placement.ranks.len(),
            names.join(", "),
            placement.method,
            job.engine,
            job.namespace,
            manifests::config_map_name(job),
            placement.worst_load,
            placement.lower_bound,
        ),
        config_map: Some(cm),
        placement: Some(placement),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes of `TopologyAssignment` in Kueue v0.19.2's
    /// `apis/kueue/v1beta2/workload_types.go` (its Examples 1-4):
    /// universal and individual values, prefixes, per-domain counts.
    #[test]
    fn assigned_hosts_reads_every_slice_form() {
        let admission = serde_json::json!({ "podSetAssignments": [{
            "name": "main",
            "topologyAssignment": {
                "levels": ["cloud.com/block", "kubernetes.io/hostname"],
                "slices": [
                    { "domainCount": 2,
                      "valuesPerLevel": [{ "universal": "b1" },
                                         { "individual": { "prefix": "block-1-node-", "roots": ["1", "2"] } }],
                      "podCounts": { "individual": [1, 2] } },
                    { "domainCount": 1,
                      "valuesPerLevel": [{ "universal": "b2" }, { "universal": "n9" }],
                      "podCounts": { "universal": 1 } },
                    { "domainCount": 1,
                      "valuesPerLevel": [{ "universal": "b3" },
                                         { "individual": { "suffix": "-x", "roots": ["n7"] } }],
                      "podCounts": { "universal": 3 } },
                ],
            },
        }] });
        assert_eq!(
            assigned_hosts(&admission).unwrap(),
            vec![
                ("block-1-node-1".to_string(), 1),
                ("block-1-node-2".to_string(), 2),
                ("n9".to_string(), 1),
                ("n7-x".to_string(), 3),
            ]
        );
        let rack_only = serde_json::json!({ "podSetAssignments": [{ "topologyAssignment": {
            "levels": ["cloud.com/rack"],
            "slices": [{ "domainCount": 1, "valuesPerLevel": [{ "universal": "r1" }], "podCounts": { "universal": 2 } }],
        } }] });
        let e = assigned_hosts(&rack_only).unwrap_err();
        assert!(
            e.contains("add kubernetes.io/hostname as the Topology's last level"),
            "{e}"
        );
        let none = serde_json::json!({ "podSetAssignments": [{ "name": "main" }] });
        assert!(
            assigned_hosts(&none)
                .unwrap_err()
                .contains("has no topologyAssignment")
        );
        let short = serde_json::json!({ "podSetAssignments": [{ "topologyAssignment": {
            "levels": ["kubernetes.io/hostname"],
            "slices": [{ "domainCount": 2, "valuesPerLevel": [{ "individual": { "roots": ["a"] } }], "podCounts": { "universal": 1 } }],
        } }] });
        assert!(
            assigned_hosts(&short)
                .unwrap_err()
                .contains("domainCount 2 and its values disagree")
        );
    }

    fn plan() -> CheckedPlan {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/data/eflops-4x16.plan.json"
        );
        CheckedPlan::load(&std::fs::read_to_string(path).unwrap(), path).unwrap()
    }

    fn job() -> JobSpec {
        JobSpec::from_toml(
            "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 8\nqueue = \"q\"\n[kueue]\nrequired_topology = \"rack\"\n",
            "t.toml",
        )
        .unwrap()
    }

    /// Refusals that can never become right are Rejected, naming the Node.
    #[test]
    fn admit_rejects_nodes_outside_the_plan_and_shared_nodes() {
        let plan = plan();
        let bound = crate::nodes::bind(&plan, None, "p").unwrap();
        let mut view = ClusterView::all_free(&bound);
        let mut stranger = view.nodes[0].clone();
        stranger.name = "cpu-01".to_string();
        view.nodes.push(stranger);
        let on = |h: &[(&str, u32)]| -> Decision {
            let hosts: Vec<(String, u32)> = h.iter().map(|(n, c)| (n.to_string(), *c)).collect();
            admit(&plan, &bound, &job(), &view, &hosts, &BTreeMap::new())
        };
        let d = on(&[("node01", 1), ("cpu-01", 1)]);
        assert_eq!(d.state, CheckState::Rejected);
        assert!(
            d.message
                .starts_with("Node cpu-01 is not bound to a server of plan"),
            "{}",
            d.message
        );
        let d = on(&[("node01", 2)]);
        assert_eq!(d.state, CheckState::Rejected);
        assert!(d.message.contains("2 pods to Node node01"), "{}", d.message);
        let d = on(&[("node01", 1)]);
        assert_eq!(d.state, CheckState::Rejected);
        assert!(
            d.message.contains("assigned 1 Nodes and the job needs 2"),
            "{}",
            d.message
        );
        // Ready on two Nodes of one switch: every rank there, the load said.
        let d = on(&[("node01", 1), ("node02", 1)]);
        assert_eq!(d.state, CheckState::Ready, "{}", d.message);
        let p = d.placement.unwrap();
        assert!(
            p.ranks
                .iter()
                .all(|r| r.node == "node01" || r.node == "node02")
        );
        assert!(
            d.message
                .contains(&format!("worst link load {}", p.worst_load))
        );
    }

    /// Assigned Nodes that do not get a congestion-free table: the check
    /// still admits the job, and says so with the worst link load.
    #[test]
    fn a_congested_table_is_said_with_its_worst_link_load() {
        let plan = plan();
        let bound = crate::nodes::bind(&plan, None, "p").unwrap();
        let view = ClusterView::all_free(&bound);
        // Plain halving-doubling (no rank search) on the 8 upper servers.
        let job = JobSpec::from_toml(
            "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 32\nalgorithm = \"hd\"\nqueue = \"q\"\n[kueue]\nrequired_topology = \"rack\"\n",
            "t.toml",
        )
        .unwrap();
        let hosts: Vec<(String, u32)> = (0..8)
            .map(|i| (format!("node{:02}", 2 * i + 1), 1))
            .collect();
        let d = admit(&plan, &bound, &job, &view, &hosts, &BTreeMap::new());
        assert_eq!(d.state, CheckState::Ready, "{}", d.message);
        let worst = d.placement.as_ref().unwrap().worst_load;
        assert!(worst > 1, "{}", d.message);
        assert!(
            d.message
                .contains(&format!("worst link load {worst} flows")),
            "{}",
            d.message
        );
        assert!(
            d.message
                .contains("; congested: a congestion-free table has 1 flow per link"),
            "{}",
            d.message
        );
        let cm = d.config_map.unwrap();
        assert_eq!(
            cm["metadata"]["annotations"]["topology.eflops.io/worst-link-load"],
            worst.to_string()
        );
    }
}
