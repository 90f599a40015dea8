//! The planner's Kueue and Volcano exports checked against the CRDs they
//! are for (`../shared/k8s-crds/` beside the workspace; skipped without
//! it, failed with `TESTS_NO_SKIP=1`: see `testkit::crds`), and the node
//! labels against Kubernetes' label rules. The CEL rules the schema check
//! does not evaluate are checked here by hand, and a rule this test does not
//! know fails it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use planner::checked::CheckedPlan;
use planner::design::design;
use planner::design::shorthand::{self, Shorthand};
use planner::export::k8s_names::{label_value_problem, qualified_name_problem};
use planner::export::{DEFAULT_PREFIX, KueueApi, Target, export_with, node_labels};
use provisioner::schema::CrdSchema;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

use crate::crds;

/// The upstream CRD, or `None` when the test skips (see `crds::text`).
fn crd(test: &str, file: &str, version: &str) -> Option<CrdSchema> {
    let text = crds::text(test, file)?;
    Some(CrdSchema::from_yaml(&text, file, version).unwrap())
}

/// The EFLOPS deployment, a BiGraph whose servers span both parts, a
/// 3-tier fat-tree whose servers span two edge switches, and a leaf-spine.
fn plans() -> Vec<CheckedPlan> {
    let text = std::fs::read_to_string(root().join("examples/data/eflops-4x16.plan.json")).unwrap();
    let mut plans = vec![CheckedPlan::load(&text, "eflops-4x16.plan.json").unwrap()];
    let spread = Shorthand {
        sub_nodes_per_server: Some(8),
        ..Shorthand::default()
    };
    let (inv, opts) = shorthand::bigraph(4, 16, &spread).unwrap();
    plans.push(design(&inv, &opts).unwrap());
    for spec in ["k=4", "tiers=2,sub-nodes=64,ports=16"] {
        let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
        plans.push(design(&inv, &opts).unwrap());
    }
    plans
}

fn objects(plan: &CheckedPlan, target: Target, kind: &str) -> Vec<Value> {
    objects_in(plan, target, KueueApi::default(), kind)
}

fn objects_in(plan: &CheckedPlan, target: Target, api: KueueApi, kind: &str) -> Vec<Value> {
    export_with(plan, target, DEFAULT_PREFIX, api)
        .unwrap()
        .objects
        .unwrap()
        .into_iter()
        .filter(|o| o["kind"] == kind)
        .collect()
}

/// Fails when the CRD has a CEL rule whose message is not in `checked`.
fn cel_rules_are_known(schema: &CrdSchema, checked: &[&str]) {
    for rule in schema.cel_rules() {
        assert!(
            checked.contains(&rule.message.as_str()),
            "{} has a CEL rule this test does not check: {} ({})",
            schema.kind,
            rule.message,
            rule.path
        );
    }
}

/// Every Kueue version we write is one the v0.19.2 CRD serves, v1beta2
/// (stored) and v1beta1 (deprecated), and each object validates against
/// that version's schema.
#[test]
fn kueue_topology_satisfies_its_crd() {
    for api in KueueApi::ALL {
        let Some(schema) = crd(
            "kueue_topology_satisfies_its_crd",
            "kueue.x-k8s.io_topologies.yaml",
            api.as_str(),
        ) else {
            return;
        };
        cel_rules_are_known(
            &schema,
            &[
                // An update rule: nothing to check on a new object.
                "field is immutable",
                "must be unique",
                "the kubernetes.io/hostname label can only be used at the lowest level of topology",
            ],
        );
        for plan in plans() {
            let topologies = objects_in(&plan, Target::Kueue, api, "Topology");
            assert_eq!(topologies.len(), 1);
            for t in &topologies {
                assert_eq!(t["apiVersion"], api.api_version());
                assert_eq!(schema.validate(t), Vec::<String>::new(), "{}", plan.name);
                let levels: Vec<&str> = t["spec"]["levels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l["nodeLabel"].as_str().unwrap())
                    .collect();
                let unique: BTreeSet<&str> = levels.iter().copied().collect();
                assert_eq!(unique.len(), levels.len(), "must be unique: {levels:?}");
                let host = levels.iter().position(|l| *l == "kubernetes.io/hostname");
                assert_eq!(host, Some(levels.len() - 1), "hostname lowest: {levels:?}");
            }
        }
    }
}

/// The ResourceFlavor that names the Topology, against Kueue v0.19.2's
/// CRD in both served versions, with its CEL rules checked by hand.
#[test]
fn kueue_resource_flavor_satisfies_its_crd() {
    for api in KueueApi::ALL {
        let Some(schema) = crd(
            "kueue_resource_flavor_satisfies_its_crd",
            "kueue.x-k8s.io_resourceflavors.yaml",
            api.as_str(),
        ) else {
            return;
        };
        let topology_needs_labels = "at least one nodeLabel is required when topology is set";
        cel_rules_are_known(
            &schema,
            &[
                topology_needs_labels,
                // Update rules: nothing to check on a new object.
                "nodeLabels are immutable when topologyName is set",
                "tolerations are immutable when topologyName is set",
                "topologyName is immutable when topologyName is set",
                // Taints and tolerations: we write neither.
                "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
                "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
                "effect must be 'NoExecute' when 'tolerationSeconds' is set",
                "supported toleration values: 'Equal'(default), 'Exists'",
                "a value must be empty when 'operator' is 'Exists'",
            ],
        );
        for plan in plans() {
            let flavors = objects_in(&plan, Target::Kueue, api, "ResourceFlavor");
            let topologies = objects_in(&plan, Target::Kueue, api, "Topology");
            assert_eq!(flavors.len(), 1);
            let f = &flavors[0];
            assert_eq!(f["apiVersion"], api.api_version());
            assert_eq!(schema.validate(f), Vec::<String>::new(), "{}", plan.name);
            // The CEL rule, and the flavor names the exported topology.
            let labels = f["spec"]["nodeLabels"].as_object().unwrap();
            assert!(!labels.is_empty(), "{topology_needs_labels}");
            assert_eq!(f["spec"]["topologyName"], topologies[0]["metadata"]["name"]);
            assert!(f["spec"].get("tolerations").is_none());
            assert!(f["spec"].get("nodeTaints").is_none());
        }
    }
}

#[test]
fn volcano_hypernodes_satisfy_their_crd() {
    let Some(schema) = crd(
        "volcano_hypernodes_satisfy_their_crd",
        "topology.volcano.sh_hypernodes.yaml",
        "v1alpha1",
    ) else {
        return;
    };
    cel_rules_are_known(
        &schema,
        &[
            "Either ExactMatch or RegexMatch or LabelMatch must be specified",
            "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified",
        ],
    );
    for plan in plans() {
        let hypernodes = objects(&plan, Target::Volcano, "HyperNode");
        assert!(!hypernodes.is_empty());
        for h in &hypernodes {
            assert_eq!(
                schema.validate(h),
                Vec::<String>::new(),
                "{}: {h}",
                plan.name
            );
            for m in h["spec"]["members"].as_array().unwrap() {
                let selector = m["selector"].as_object().unwrap();
                let kinds = ["exactMatch", "regexMatch", "labelMatch"]
                    .iter()
                    .filter(|k| selector.contains_key(**k))
                    .count();
                assert_eq!(kinds, 1, "one selector kind: {m}");
                if let Some(labels) = m["selector"]["labelMatch"]["matchLabels"].as_object() {
                    for (k, v) in labels {
                        assert_eq!(qualified_name_problem(k), None, "{k}");
                        assert_eq!(label_value_problem(v.as_str().unwrap()), None, "{v}");
                    }
                }
            }
        }
    }
}

#[test]
fn node_labels_satisfy_kubernetes_rules() {
    for plan in plans() {
        for prefix in [DEFAULT_PREFIX, "gpu.example.com"] {
            for node in node_labels(&plan, prefix).unwrap() {
                for (k, v) in &node.labels {
                    assert_eq!(qualified_name_problem(k), None, "{}: {k}", node.server);
                    assert_eq!(label_value_problem(v), None, "{}: {k}={v}", node.server);
                    assert!(!v.is_empty());
                }
            }
        }
    }
}

/// The shape of a JobSet, written from JobSet's Go API types: its CRD is
/// not in `../shared/k8s-crds/`, so this stands in for the schema check
/// (kubernetes-sigs/jobset v0.12.0, `api/jobset/v1alpha2/jobset_types.go`:
/// field names, types, required fields and enum values; and the webhook's
/// rules in `pkg/webhooks/jobset_webhook.go`). The Job template inside is
/// read with `k8s-openapi`'s batch/v1 `JobTemplateSpec`. The checker
/// ([`jobset::T`], [`jobset::check`]) also stands in for the Workload
/// API's schema (`workload_api.rs`).
pub(crate) mod jobset {
    use serde_json::Value;

    /// A field's type in the Go structs (`json` tags), with `+kubebuilder`
    /// enums and minimums.
    pub(crate) enum T {
        Str,
        Bool,
        /// `int32`, with a `+kubebuilder:validation:Minimum` when given.
        Int32(Option<i64>),
        Enum(&'static [&'static str]),
        /// Fields: name, type, required (no `omitempty` and no
        /// `+optional`).
        Obj(Vec<(&'static str, T, bool)>),
        Arr(Box<T>),
        /// Checked elsewhere (a `batch/v1` JobTemplateSpec, object meta).
        Object,
    }
    use T::*;

    pub(crate) fn arr(t: T) -> T {
        Arr(Box::new(t))
    }

    /// `JobSetSpec` and what it holds.
    pub(super) fn spec() -> T {
        let names = || arr(Str);
        Obj(vec![
            (
                "replicatedJobs",
                arr(Obj(vec![
                    ("name", Str, true),
                    ("groupName", Str, false),
                    ("template", Object, true),
                    ("replicas", Int32(None), false),
                    (
                        "dependsOn",
                        arr(Obj(vec![
                            ("name", Str, true),
                            ("status", Enum(&["Ready", "Complete"]), true),
                        ])),
                        false,
                    ),
                ])),
                false,
            ),
            (
                "network",
                Obj(vec![
                    ("enableDNSHostnames", Bool, false),
                    ("subdomain", Str, false),
                    ("publishNotReadyAddresses", Bool, false),
                ]),
                false,
            ),
            (
                "successPolicy",
                Obj(vec![
                    ("operator", Enum(&["All", "Any"]), true),
                    ("targetReplicatedJobs", names(), false),
                ]),
                false,
            ),
            (
                "failurePolicy",
                Obj(vec![
                    ("maxRestarts", Int32(None), false),
                    (
                        "restartStrategy",
                        Enum(&["Recreate", "BlockingRecreate", "InPlaceRestart"]),
                        false,
                    ),
                    (
                        "rules",
                        arr(Obj(vec![
                            ("name", Str, true),
                            (
                                "action",
                                Enum(&[
                                    "FailJobSet",
                                    "RestartJobSet",
                                    "RestartJobSetAndIgnoreMaxRestarts",
                                    "RestartJob",
                                    "RestartJobAndIgnoreMaxRestarts",
                                ]),
                                true,
                            ),
                            ("onJobFailureReasons", names(), false),
                            ("onJobFailureMessagePatterns", names(), false),
                            ("targetReplicatedJobs", names(), false),
                        ])),
                        false,
                    ),
                ]),
                false,
            ),
            (
                "startupPolicy",
                Obj(vec![(
                    "startupPolicyOrder",
                    Enum(&["AnyOrder", "InOrder"]),
                    true,
                )]),
                false,
            ),
            ("suspend", Bool, false),
            (
                "coordinator",
                Obj(vec![
                    ("replicatedJob", Str, true),
                    ("jobIndex", Int32(None), false),
                    ("podIndex", Int32(None), false),
                ]),
                false,
            ),
            ("managedBy", Str, false),
            ("ttlSecondsAfterFinished", Int32(Some(0)), false),
            ("volumeClaimPolicies", arr(Object), false),
        ])
    }

    /// Every way `v` at `path` departs from `t`.
    pub(crate) fn check(t: &T, v: &Value, path: &str, out: &mut Vec<String>) {
        match (t, v) {
            (Str, Value::String(_)) | (Bool, Value::Bool(_)) | (Object, Value::Object(_)) => {}
            (Int32(min), Value::Number(n)) => match n.as_i64() {
                Some(i) if i32::try_from(i).is_ok() && min.is_none_or(|m| i >= m) => {}
                _ => out.push(format!("{path}: {n} is no int32 in range")),
            },
            (Enum(values), Value::String(s)) if values.contains(&s.as_str()) => {}
            (Enum(values), _) => out.push(format!("{path}: {v} is none of {values:?}")),
            (Obj(fields), Value::Object(m)) => {
                for (k, x) in m {
                    match fields.iter().find(|(name, _, _)| name == k) {
                        Some((_, t, _)) => check(t, x, &format!("{path}.{k}"), out),
                        None => out.push(format!("{path}.{k}: no such field")),
                    }
                }
                for (name, _, required) in fields {
                    if *required && !m.contains_key(*name) {
                        out.push(format!("{path}.{name}: required"));
                    }
                }
            }
            (Arr(t), Value::Array(items)) => {
                for (i, x) in items.iter().enumerate() {
                    check(t, x, &format!("{path}[{i}]"), out);
                }
            }
            _ => out.push(format!("{path}: {v} has the wrong type")),
        }
    }
}

/// Why `v` is not a JobSet that JobSet v0.12.0 accepts: its fields against
/// the Go types ([`jobset::spec`]), each Job template against `k8s-openapi`'s
/// `JobTemplateSpec`, and the webhook's rules (`pkg/webhooks/jobset_webhook.go`):
/// replicated Job names unique, the Job and pod names they make DNS-1035
/// labels (`<jobset>-<replicatedJob>-<index>`, and for an `Indexed` Job
/// `<jobset>-<replicatedJob>-<index>-<podIndex>-abcde`), DNS host names
/// only for `Indexed` Jobs.
pub(crate) fn job_set_problems(v: &Value) -> Vec<String> {
    use k8s_openapi::api::batch::v1::JobTemplateSpec;
    let mut out = Vec::new();
    if v["apiVersion"] != "jobset.x-k8s.io/v1alpha2" || v["kind"] != "JobSet" {
        out.push(format!("apiVersion/kind {} {}", v["apiVersion"], v["kind"]));
    }
    let name = v["metadata"]["name"].as_str().unwrap_or_default();
    jobset::check(&jobset::spec(), &v["spec"], "spec", &mut out);
    let dns1035 = |s: &str| {
        !s.is_empty()
            && s.len() <= 63
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && !s.ends_with('-')
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    let mut seen = BTreeSet::new();
    for (i, r) in v["spec"]["replicatedJobs"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let rname = r["name"].as_str().unwrap_or_default();
        if !seen.insert(rname.to_string()) {
            out.push(format!("spec.replicatedJobs[{i}].name {rname} twice"));
        }
        if let Err(e) = serde_json::from_value::<JobTemplateSpec>(r["template"].clone()) {
            out.push(format!("spec.replicatedJobs[{i}].template: {e}"));
        }
        let replicas = r["replicas"].as_i64().unwrap_or(1);
        let job = format!("{name}-{rname}-{}", replicas - 1);
        if !dns1035(&job) {
            out.push(format!("Job name {job} is no DNS-1035 label"));
        }
        let spec = &r["template"]["spec"];
        let indexed = spec["completionMode"] == "Indexed";
        if let (true, Some(c)) = (indexed, spec["completions"].as_i64()) {
            let pod = format!("{job}-{}-abcde", c - 1);
            if !dns1035(&pod) {
                out.push(format!("pod name {pod} is no DNS-1035 label"));
            }
        }
        if v["spec"]["network"]["enableDNSHostnames"] == true && !indexed {
            out.push(format!(
                "spec.replicatedJobs[{i}]: DNS host names need completionMode Indexed"
            ));
        }
    }
    out
}

/// The structural check fails on what JobSet would refuse, and passes the
/// JobSet of the DRA example.
#[test]
fn the_jobset_check_refuses_what_jobset_refuses() {
    let text =
        std::fs::read_to_string(root().join("provisioner/tests/golden/allreduce-32-dra.yaml"))
            .unwrap();
    let docs: Vec<Value> = text
        .split("\n---\n")
        .map(|d| serde_norway::from_str(d).unwrap())
        .collect();
    let js = docs.iter().find(|d| d["kind"] == "JobSet").unwrap();
    assert_eq!(job_set_problems(js), Vec::<String>::new());
    let edit = |pointer: &str, value: Value| {
        let mut v = js.clone();
        *v.pointer_mut(pointer).unwrap() = value;
        job_set_problems(&v)
    };
    assert_eq!(
        edit(
            "/spec/failurePolicy/restartStrategy",
            Value::from("Sometimes")
        ),
        [
            "spec.failurePolicy.restartStrategy: \"Sometimes\" is none of [\"Recreate\", \"BlockingRecreate\", \"InPlaceRestart\"]"
        ]
    );
    assert_eq!(
        edit(
            "/spec/successPolicy",
            serde_json::json!({ "operatr": "All" })
        ),
        [
            "spec.successPolicy.operatr: no such field",
            "spec.successPolicy.operator: required"
        ]
    );
    assert_eq!(
        edit("/spec/failurePolicy/maxRestarts", Value::from(1u64 << 31)),
        ["spec.failurePolicy.maxRestarts: 2147483648 is no int32 in range"]
    );
    let named = edit("/metadata/name", Value::from("1job"));
    assert_eq!(
        named[..2],
        [
            "Job name 1job-rank-0-0 is no DNS-1035 label",
            "pod name 1job-rank-0-0-0-abcde is no DNS-1035 label"
        ]
    );
    assert_eq!(
        edit("/spec/replicatedJobs/1/name", Value::from("rank-0")),
        ["spec.replicatedJobs[1].name rank-0 twice"]
    );
}
