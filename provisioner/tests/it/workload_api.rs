//! The Workload API objects a submission writes (#29 item 4), checked
//! against Kubernetes 1.36's Go types: no CRD exists for a built-in API,
//! so [`workload_problems`] stands in for the schema check
//! (`k8s.io/api` v0.36.0, `scheduling/v1alpha2/types.go`: field names,
//! types, required fields, enums, `+k8s:maxItems`, `+k8s:minimum`,
//! `+k8s:format`, the unions; `core/v1/types.go` `PodSchedulingGroup`), with
//! cases that show it fails on what the API server refuses.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, qualified_name_problem,
};
use provisioner::Error;
use provisioner::jobs::dra::DraView;
use provisioner::jobs::job::JobSpec;
use provisioner::jobs::manifests::workload::{API_VERSION, TEMPLATE};
use provisioner::jobs::submit::{self, Submission};
use provisioner::jobs::view::{ClusterView, WorkloadApi};
use provisioner::nodes;

use crate::crd_exports::jobset::{T, arr, check};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";
const DRA: &str = "examples/allreduce-32-dra.job.toml";
const INDEXED: &str = "examples/allreduce-32.job.toml";

fn read(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `scheduling/v1alpha2` `PodGroupSchedulingPolicy`,
/// `PodGroupSchedulingConstraints`, `PodGroupResourceClaim` and the
/// fields a template and a PodGroup share.
fn shared_fields(policy_required: bool) -> Vec<(&'static str, T, bool)> {
    use T::*;
    vec![
        (
            "schedulingPolicy",
            Obj(vec![
                ("basic", Obj(vec![]), false),
                ("gang", Obj(vec![("minCount", Int32(Some(1)), true)]), false),
            ]),
            policy_required,
        ),
        (
            "schedulingConstraints",
            Obj(vec![(
                "topology",
                arr(Obj(vec![("key", Str, true)])),
                false,
            )]),
            false,
        ),
        (
            "resourceClaims",
            arr(Obj(vec![
                ("name", Str, true),
                ("resourceClaimName", Str, false),
                ("resourceClaimTemplateName", Str, false),
            ])),
            false,
        ),
        ("disruptionMode", Enum(&["Pod", "PodGroup"]), false),
        ("priorityClassName", Str, false),
        ("priority", Int32(None), false),
    ]
}

/// `WorkloadSpec`.
fn workload_spec() -> T {
    use T::*;
    let mut template = vec![("name", Str, true)];
    template.extend(shared_fields(true));
    Obj(vec![
        (
            "controllerRef",
            Obj(vec![
                ("apiGroup", Str, false),
                ("kind", Str, true),
                ("name", Str, true),
            ]),
            false,
        ),
        ("podGroupTemplates", arr(Obj(template)), true),
    ])
}

/// `PodGroupSpec`.
fn pod_group_spec() -> T {
    use T::*;
    let mut fields = vec![(
        "podGroupTemplateRef",
        Obj(vec![(
            "workload",
            Obj(vec![
                ("workloadName", Str, true),
                ("podGroupTemplateName", Str, true),
            ]),
            false,
        )]),
        false,
    )];
    fields.extend(shared_fields(true));
    Obj(fields)
}

/// The rules the types state in markers rather than in field types: one
/// member of each union, `maxItems`, names and label keys in format.
fn markers(spec: &Value, path: &str, out: &mut Vec<String>) {
    let policy = &spec["schedulingPolicy"];
    if let Some(p) = policy.as_object() {
        let members = ["basic", "gang"]
            .iter()
            .filter(|k| p.contains_key(**k))
            .count();
        if members != 1 {
            out.push(format!(
                "{path}.schedulingPolicy: {members} members, exactly one must be set"
            ));
        }
    }
    let topology = spec["schedulingConstraints"]["topology"].as_array();
    if let Some(t) = topology {
        if t.len() > 1 {
            out.push(format!(
                "{path}.schedulingConstraints.topology: {} items, at most 1",
                t.len()
            ));
        }
        for (i, c) in t.iter().enumerate() {
            if let Some(why) = qualified_name_problem(c["key"].as_str().unwrap_or_default()) {
                out.push(format!(
                    "{path}.schedulingConstraints.topology[{i}].key: {why}"
                ));
            }
        }
    }
}

/// Why the Workload and PodGroup in `docs` (with the pods that name the
/// group) are not what Kubernetes 1.36 accepts and what the gang needs:
/// the Go types, their markers, the PodGroup made from the Workload's
/// template with the same policy and constraints, and `minCount` equal to
/// the pods that name the group in `spec.schedulingGroup.podGroupName`.
pub(crate) fn workload_problems(docs: &[&Value]) -> Vec<String> {
    let mut out = Vec::new();
    let find = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["apiVersion"] == API_VERSION)
    };
    let (Some(w), Some(g)) = (find("Workload"), find("PodGroup")) else {
        return vec!["no Workload and PodGroup".to_string()];
    };
    for (o, what) in [(w, "Workload"), (g, "PodGroup")] {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(why) = dns_subdomain_problem(name) {
            out.push(format!("{what} name {name}: {why}"));
        }
    }
    check(&workload_spec(), &w["spec"], "Workload.spec", &mut out);
    check(&pod_group_spec(), &g["spec"], "PodGroup.spec", &mut out);
    let templates = w["spec"]["podGroupTemplates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if templates.is_empty() || templates.len() > 8 {
        out.push(format!(
            "Workload.spec.podGroupTemplates: {} items, 1 to 8",
            templates.len()
        ));
    }
    let mut names = BTreeSet::new();
    for (i, t) in templates.iter().enumerate() {
        let name = t["name"].as_str().unwrap_or_default();
        if let Some(why) = dns_label_problem(name) {
            out.push(format!("Workload.spec.podGroupTemplates[{i}].name: {why}"));
        }
        if !names.insert(name) {
            out.push(format!(
                "Workload.spec.podGroupTemplates[{i}].name {name} twice"
            ));
        }
        markers(
            t,
            &format!("Workload.spec.podGroupTemplates[{i}]"),
            &mut out,
        );
    }
    if let Some(c) = w["spec"]["controllerRef"].as_object() {
        for k in ["kind", "name"] {
            let s = c.get(k).and_then(Value::as_str).unwrap_or_default();
            if s.is_empty() || s == "." || s == ".." || s.contains(['/', '%']) {
                out.push(format!(
                    "Workload.spec.controllerRef.{k} {s:?} is no path segment name"
                ));
            }
        }
    }
    markers(&g["spec"], "PodGroup.spec", &mut out);
    let r = &g["spec"]["podGroupTemplateRef"]["workload"];
    if r["workloadName"] != w["metadata"]["name"] {
        out.push(format!("PodGroup names Workload {}", r["workloadName"]));
    }
    match templates
        .iter()
        .find(|t| t["name"] == r["podGroupTemplateName"])
    {
        None => out.push(format!(
            "PodGroup names template {}, which the Workload lacks",
            r["podGroupTemplateName"]
        )),
        Some(t) => {
            for k in ["schedulingPolicy", "schedulingConstraints"] {
                if t[k] != g["spec"][k] {
                    out.push(format!("PodGroup.spec.{k} differs from its template's"));
                }
            }
        }
    }
    let group = g["metadata"]["name"].as_str().unwrap_or_default();
    let mut pods = 0;
    for d in docs {
        let specs: Vec<&Value> = match d["kind"].as_str() {
            Some("Pod") => vec![&d["spec"]],
            Some("Job") => vec![&d["spec"]["template"]["spec"]],
            Some("JobSet") => d["spec"]["replicatedJobs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| &r["template"]["spec"]["template"]["spec"])
                .collect(),
            _ => vec![],
        };
        let count = match d["kind"].as_str() {
            Some("Job") => d["spec"]["parallelism"].as_i64().unwrap_or(1),
            _ => 1,
        };
        for s in specs {
            match s["schedulingGroup"].as_object() {
                Some(sg)
                    if sg.len() == 1
                        && sg.get("podGroupName").and_then(Value::as_str) == Some(group) =>
                {
                    pods += count
                }
                Some(sg) => out.push(format!(
                    "a pod's spec.schedulingGroup {sg:?} names no PodGroup {group}"
                )),
                None => out.push(format!("a {} pod has no spec.schedulingGroup", d["kind"])),
            }
        }
    }
    let min = g["spec"]["schedulingPolicy"]["gang"]["minCount"].as_i64();
    if min != Some(pods) {
        out.push(format!(
            "gang minCount {min:?}, and {pods} pods name the group"
        ));
    }
    out
}

fn plan() -> CheckedPlan {
    CheckedPlan::load(&read(PLAN), PLAN).unwrap()
}

/// `job` (its text edited by `edit`) submitted offline on the plan, then
/// given the Workload API as `served` says.
fn submitted(
    job: &str,
    edit: &dyn Fn(String) -> String,
    served: &WorkloadApi,
) -> Result<Submission, Box<Error>> {
    submitted_on(job, edit, served, &|_| {})
}

/// As [`submitted`], on the offline view as `tweak` leaves it (the Node
/// labels a cluster would have given).
fn submitted_on(
    job: &str,
    edit: &dyn Fn(String) -> String,
    served: &WorkloadApi,
    tweak: &dyn Fn(&mut ClusterView),
) -> Result<Submission, Box<Error>> {
    let plan = plan();
    let spec = JobSpec::from_toml(&edit(read(job)), job).unwrap();
    let bound = nodes::bind(&plan, None, PLAN).unwrap();
    let mut view = ClusterView::all_free(&bound);
    if job == DRA {
        view.dra
            .extend(DraView::from_plan(&plan, &bound, &spec.placement.profile));
    }
    let mut sub = submit::prepare(&plan, &bound, &spec, &view).unwrap();
    tweak(&mut view);
    sub.schedule(&plan, &spec, served, &view)
        .map_err(Box::new)?;
    Ok(sub)
}

fn on(text: String) -> String {
    format!("{text}\n[schedule]\nworkload_api = \"on\"\n")
}

fn kinds(sub: &Submission) -> Vec<String> {
    sub.documents()
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_dra_jobset_is_one_gang_of_its_ranks_in_one_domain() {
    let sub = submitted(DRA, &on, &WorkloadApi::Unknown).unwrap();
    let docs = sub.documents();
    assert_eq!(workload_problems(&docs), Vec::<String>::new());
    assert_eq!(kinds(&sub)[..3], ["Workload", "PodGroup", "ConfigMap"]);
    let g = docs.iter().find(|d| d["kind"] == "PodGroup").unwrap();
    assert_eq!(
        g["spec"]["schedulingPolicy"],
        json!({ "gang": { "minCount": 32 } })
    );
    // 32 ranks spread over the 16 servers of EFLOPS 4x16: one fabric.
    assert_eq!(
        g["spec"]["schedulingConstraints"],
        json!({ "topology": [{ "key": "topology.eflops.io/fabric" }] })
    );
    let w = docs.iter().find(|d| d["kind"] == "Workload").unwrap();
    assert_eq!(
        w["spec"]["controllerRef"],
        json!({ "apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "allreduce-32-dra" })
    );
    assert_eq!(
        g["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "eflops-provisioner"
    );
    let note = sub.notes.last().unwrap();
    assert!(
        note.contains("minCount 32") && note.contains("TopologyAwareWorkloadScheduling"),
        "{note}"
    );
}

#[test]
fn bare_pods_and_an_indexed_job_carry_the_group_too() {
    let none =
        |t: String| on(t.replace("[placement]", "[failure]\ngang = \"none\"\n\n[placement]"));
    let sub = submitted(DRA, &none, &WorkloadApi::Served).unwrap();
    assert_eq!(workload_problems(&sub.documents()), Vec::<String>::new());
    assert_eq!(sub.manifests.workload["kind"], "ConfigMap");
    assert_eq!(
        sub.manifests.owned[0]["spec"]["controllerRef"],
        json!({ "kind": "ConfigMap", "name": "allreduce-32-dra-ranks" })
    );
    // Indexed: one pod per Node, so the gang is its 16 pods, not the 32
    // ranks.
    let sub = submitted(INDEXED, &on, &WorkloadApi::Served).unwrap();
    assert_eq!(workload_problems(&sub.documents()), Vec::<String>::new());
    assert_eq!(sub.placement.nodes.len(), 16);
    let g = &sub.manifests.owned[1];
    assert_eq!(g["spec"]["schedulingPolicy"]["gang"]["minCount"], 16);
    // With "auto" a serving cluster gets them too.
    let sub = submitted(INDEXED, &|t| t, &WorkloadApi::Served).unwrap();
    assert_eq!(kinds(&sub)[..2], ["Workload", "PodGroup"]);
}

#[test]
fn the_level_is_the_narrowest_that_holds_every_node() {
    // Four ranks packed on one server: one Node.
    let fill = |t: String| {
        on(t.replace("ranks = 32", "ranks = 4")
            .replace("packing = \"spread\"", "packing = \"fill\""))
    };
    let sub = submitted(DRA, &fill, &WorkloadApi::Served).unwrap();
    assert_eq!(
        sub.manifests.owned[1]["spec"]["schedulingConstraints"]["topology"][0]["key"],
        "kubernetes.io/hostname"
    );
    assert_eq!(workload_problems(&sub.documents()), Vec::<String>::new());
}

/// Gives every Node of a view the labels a cluster read: `key` with the
/// value `value` gives it (by the Node's index), none where it gives none.
fn label_all(
    key: &str,
    value: impl Fn(usize) -> Option<&'static str>,
) -> impl Fn(&mut ClusterView) {
    let key = key.to_string();
    move |v: &mut ClusterView| {
        for (i, n) in v.nodes.iter_mut().enumerate() {
            n.topology_labels = Some(
                value(i)
                    .map(|x| (key.clone(), x.to_string()))
                    .into_iter()
                    .collect(),
            );
        }
    }
}

#[test]
fn a_constraint_the_nodes_labels_cannot_meet_is_left_out_and_named() {
    // Offline the labels are unknown and the constraint is the plan's.
    let sub = submitted(DRA, &on, &WorkloadApi::Served).unwrap();
    let key = sub.manifests.owned[1]["spec"]["schedulingConstraints"]["topology"][0]["key"]
        .as_str()
        .expect("a key")
        .to_string();
    assert_ne!(key, "kubernetes.io/hostname");
    let constraint = |sub: &Submission| {
        let w = &sub.manifests.owned[0]["spec"]["podGroupTemplates"][0]["schedulingConstraints"];
        let g = &sub.manifests.owned[1]["spec"]["schedulingConstraints"];
        assert_eq!(w, g);
        g.clone()
    };
    let summary = |sub: &Submission| sub.summary();
    // Read from the cluster and one domain: kept.
    let sub = submitted_on(
        DRA,
        &on,
        &WorkloadApi::Served,
        &label_all(&key, |_| Some("f1")),
    )
    .unwrap();
    assert_eq!(constraint(&sub)["topology"][0]["key"], key.as_str());
    assert_eq!(workload_problems(&sub.documents()), Vec::<String>::new());
    // Nodes never labelled: no constraint, and the summary says why.
    let sub = submitted_on(DRA, &on, &WorkloadApi::Served, &label_all(&key, |_| None)).unwrap();
    assert_eq!(constraint(&sub), Value::Null);
    assert_eq!(
        sub.manifests.owned[1]["spec"]["schedulingPolicy"]["gang"]["minCount"],
        32
    );
    assert_eq!(workload_problems(&sub.documents()), Vec::<String>::new());
    let s = summary(&sub);
    assert!(
        s.contains("with no topology constraint: Node ")
            && s.contains(&format!("lacks the label {key}"))
            && s.contains("run provisioner label-nodes"),
        "{s}"
    );
    // Labels that split the Nodes into two domains: the same.
    let two = label_all(&key, |i| Some(if i % 2 == 0 { "a" } else { "b" }));
    let sub = submitted_on(DRA, &on, &WorkloadApi::Served, &two).unwrap();
    assert_eq!(constraint(&sub), Value::Null);
    let s = summary(&sub);
    assert!(
        s.contains(&format!("the Nodes' {key} labels name 2 domains (a, b)")),
        "{s}"
    );
}

#[test]
fn without_the_api_they_are_left_out_or_refused() {
    let why = WorkloadApi::NotServed {
        why: "discovery lists scheduling.k8s.io/v1 only".to_string(),
    };
    let sub = submitted(DRA, &|t| t, &why).unwrap();
    assert!(
        !kinds(&sub)
            .iter()
            .any(|k| k == "Workload" || k == "PodGroup")
    );
    assert!(sub.documents().iter().all(|d| {
        d.pointer("/spec/replicatedJobs/0/template/spec/template/spec/schedulingGroup")
            .is_none()
    }));
    let note = sub.notes.last().unwrap();
    assert!(
        note.contains("v1 only") && note.contains("Kubernetes 1.36"),
        "{note}"
    );
    // Offline with "auto": left out, and the note says how to get them.
    let sub = submitted(DRA, &|t| t, &WorkloadApi::Unknown).unwrap();
    assert!(!kinds(&sub).iter().any(|k| k == "Workload"));
    assert!(
        sub.notes
            .last()
            .unwrap()
            .contains("\"on\" writes one for Kubernetes 1.36")
    );
    // "on" against a cluster without it: refused, naming the line and the gates.
    let Err(Error::Job { file, problems }) = submitted(DRA, &on, &why).map_err(|e| *e) else {
        panic!("not refused");
    };
    assert_eq!(file, DRA);
    assert_eq!(problems[0].object, "schedule.workload_api");
    assert_eq!(problems[0].line, Some(read(DRA).lines().count() + 3));
    assert!(
        problems[0].fix.contains("GenericWorkload"),
        "{}",
        problems[0].fix
    );
    // "off": nothing, and no note.
    let off = |t: String| format!("{t}\n[schedule]\nworkload_api = \"off\"\n");
    let sub = submitted(DRA, &off, &WorkloadApi::Served).unwrap();
    assert!(!kinds(&sub).iter().any(|k| k == "Workload"));
    assert!(!sub.notes.iter().any(|n| n.contains("Workload API")));
    // Queued: Kueue's admission wins, even where the cluster serves it.
    let queued = |t: String| t.replace("ranks = 32", "ranks = 16\nqueue = \"team-a\"");
    let sub = submitted(DRA, &queued, &WorkloadApi::Served).unwrap();
    assert!(!kinds(&sub).iter().any(|k| k == "Workload"));
    assert!(sub.notes.last().unwrap().contains("Kueue"));
}

/// The check fails on what Kubernetes 1.36 refuses or what breaks the gang.
#[test]
fn the_workload_check_refuses_what_the_api_refuses() {
    let sub = submitted(DRA, &on, &WorkloadApi::Served).unwrap();
    let docs: Vec<Value> = sub.documents().into_iter().cloned().collect();
    let edit = |kind: &str, pointer: &str, value: Value| {
        let mut docs = docs.clone();
        let d = docs.iter_mut().find(|d| d["kind"] == kind).unwrap();
        match d.pointer_mut(pointer) {
            Some(v) => *v = value,
            None => panic!("{kind} has no {pointer}"),
        }
        workload_problems(&docs.iter().collect::<Vec<_>>())
    };
    assert_eq!(
        edit("PodGroup", "/spec/schedulingPolicy/gang/minCount", json!(0)),
        [
            "PodGroup.spec.schedulingPolicy.gang.minCount: 0 is no int32 in range",
            "PodGroup.spec.schedulingPolicy differs from its template's",
            "gang minCount Some(0), and 32 pods name the group",
        ]
    );
    assert_eq!(
        edit(
            "Workload",
            "/spec/podGroupTemplates/0/schedulingPolicy",
            json!({ "basic": {}, "gang": { "minCount": 32 } })
        ),
        [
            "Workload.spec.podGroupTemplates[0].schedulingPolicy: 2 members, exactly one must be set",
            "PodGroup.spec.schedulingPolicy differs from its template's",
        ]
    );
    assert_eq!(
        edit(
            "PodGroup",
            "/spec/podGroupTemplateRef/workload",
            json!({ "workload": "allreduce-32-dra" })
        ),
        [
            "PodGroup.spec.podGroupTemplateRef.workload.workload: no such field",
            "PodGroup.spec.podGroupTemplateRef.workload.workloadName: required",
            "PodGroup.spec.podGroupTemplateRef.workload.podGroupTemplateName: required",
            "PodGroup names Workload null",
            "PodGroup names template null, which the Workload lacks",
        ]
    );
    assert_eq!(
        edit(
            "Workload",
            "/spec/podGroupTemplates/0/schedulingConstraints/topology/0/key",
            json!("not a key!")
        ),
        [
            format!(
                "Workload.spec.podGroupTemplates[0].schedulingConstraints.topology[0].key: {}",
                qualified_name_problem("not a key!").unwrap()
            ),
            "PodGroup.spec.schedulingConstraints differs from its template's".to_string(),
        ]
    );
    assert_eq!(
        edit("Workload", "/spec/podGroupTemplates/0/name", json!("Ranks")),
        [
            format!(
                "Workload.spec.podGroupTemplates[0].name: {}",
                dns_label_problem("Ranks").unwrap()
            ),
            format!("PodGroup names template \"{TEMPLATE}\", which the Workload lacks"),
        ]
    );
    let unnamed = edit(
        "JobSet",
        "/spec/replicatedJobs/3/template/spec/template/spec/schedulingGroup",
        json!({ "podGroupName": "other" }),
    );
    assert_eq!(unnamed.len(), 2, "{unnamed:?}");
    assert!(unnamed[1].contains("31 pods name the group"), "{unnamed:?}");
}
