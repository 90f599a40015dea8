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
