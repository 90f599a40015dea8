//! Kueue `Topology` with its `ResourceFlavor` (kueue.x-k8s.io/v1beta2 by
//! default, v1beta1 on request: see [`KueueApi`]), and Volcano
//! `HyperNode`s (topology.volcano.sh/v1alpha1, with `tierName`).
//!
//! The fields follow the CRDs of Kueue v0.19.2
//! (`config/components/crd/bases/kueue.x-k8s.io_{topologies,resourceflavors}.yaml`)
//! and Volcano v1.15.1 (`config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml`);
//! the provisioner's tests validate every object against them.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::plan::Plan;

use super::k8s_names::dns_name;
use super::labels::key;
use super::tree::{Level, Tree};
use super::{Export, KueueApi};

/// The label every node carries with its name; Kueue wants it as the
/// lowest level.
pub(crate) const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Longest Kubernetes object name (a DNS subdomain).
const MAX_NAME: usize = 253;

/// The Kueue `Topology` whose levels are the tree's labels and the host
/// name, and a `ResourceFlavor` that selects the fabric's nodes and names
/// the topology, both in `api`'s version (the two objects' fields are the
/// same in v1beta1 and v1beta2).
pub(crate) fn kueue(plan: &Plan, tree: &Tree, prefix: &str, api: KueueApi) -> Result<Vec<Value>> {
    let api_version = api.api_version();
    let name = object_name(plan, &plan.name, "Topology")?;
    let mut levels: Vec<Value> = tree
        .levels
        .iter()
        .map(|l| json!({ "nodeLabel": format!("{prefix}{}", l.key()) }))
        .collect();
    levels.push(json!({ "nodeLabel": HOSTNAME_LABEL }));
    let fabric = format!("{prefix}{}", key::FABRIC);
    Ok(vec![
        json!({
            "apiVersion": api_version,
            "kind": "Topology",
            "metadata": { "name": name, "labels": { &fabric: plan.name } },
            "spec": { "levels": levels },
        }),
        json!({
            "apiVersion": api_version,
            "kind": "ResourceFlavor",
            "metadata": { "name": name, "labels": { &fabric: plan.name } },
            "spec": {
                "nodeLabels": { &fabric: plan.name },
                "topologyName": name,
            },
        }),
    ])
}

/// One `HyperNode` per group of the tree: tier 1 is the switch level,
/// whose members are the nodes carrying its labels; each tier above has
/// the hypernodes below it as members, up to the fabric.
pub(crate) fn volcano(plan: &Plan, tree: &Tree, prefix: &str) -> Result<Vec<Value>> {
    let fabric_key = format!("{prefix}{}", key::FABRIC);
    // Names first: every group's, checked for collisions.
    let mut names: Vec<Vec<String>> = Vec::with_capacity(tree.levels.len());
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut problems = Vec::new();
    for (l, level) in tree.levels.iter().enumerate() {
        let mut level_names = Vec::with_capacity(tree.groups[l].len());
        for g in &tree.groups[l] {
            let raw = match level {
                Level::Fabric => g.value.clone(),
                _ => format!("{}-{}-{}", plan.name, level.key(), g.value),
            };
            let name = dns_name(&raw);
            let what = format!("{} {}", level.key(), g.value);
            if name.is_empty() || name.len() > MAX_NAME {
                problems.push(Problem::at(
                    None,
                    what.clone(),
                    format!("HyperNode name `{name}` is not a valid object name"),
                    "rename the plan or the switch to letters, digits and `-`",
                ));
            } else if let Some(other) = seen.insert(name.clone(), what.clone()) {
                problems.push(Problem::at(
                    None,
                    what,
                    format!("HyperNode name `{name}` is also the name of {other}"),
                    "rename one of them so that they differ in more than case and punctuation",
                ));
            }
            level_names.push(name);
        }
        names.push(level_names);
    }
    if !problems.is_empty() {
        return Err(Error::Invalid {
            file: format!("plan {}", plan.name),
            what: "plan",
            problems,
        });
    }
    let mut out = Vec::new();
    let top = tree.levels.len();
    for l in (0..top).rev() {
        let level = tree.levels[l];
        for (i, g) in tree.groups[l].iter().enumerate() {
            let members: Vec<Value> = if l == tree.leaf() {
                vec![json!({
                    "type": "Node",
                    "selector": { "labelMatch": { "matchLabels": {
                        &fabric_key: plan.name,
                        format!("{prefix}{}", level.key()): g.value,
                    } } },
                })]
            } else {
                tree.children(l, i)
                    .map(|c| {
                        json!({
                            "type": "HyperNode",
                            "selector": { "exactMatch": { "name": names[l + 1][c] } },
                        })
                    })
                    .collect()
            };
            out.push(json!({
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": { "name": names[l][i], "labels": { &fabric_key: plan.name } },
                "spec": {
                    "tier": top - l,
                    "tierName": level.key(),
                    "members": members,
                },
            }));
        }
    }
    Ok(out)
}

/// The plan's name as a Kubernetes object name.
fn object_name(plan: &Plan, name: &str, kind: &str) -> Result<String> {
    let n = dns_name(name);
    if n.is_empty() || n.len() > MAX_NAME {
        return Err(Error::Invalid {
            file: format!("plan {}", plan.name),
            what: "plan",
            problems: vec![Problem::at(
                None,
                "plan",
                format!("name `{name}` cannot name a {kind}"),
                "rename the inventory to letters, digits and `-` and design the plan again",
            )],
        });
    }
    Ok(n)
}

/// `--to kueue`: the `Topology` and its `ResourceFlavor`, in `api`'s
/// version, noting a deprecated one.
pub(super) fn write_kueue(
    plan: &CheckedPlan,
    tree: &Tree,
    prefix: &str,
    api: KueueApi,
    out: &mut Export,
) -> Result<()> {
    out.objects = Some(kueue(plan, tree, prefix, api)?);
    out.notes.extend(api.deprecation().map(str::to_string));
    Ok(())
}

/// `--to volcano`: the `HyperNode`s.
pub(super) fn write_volcano(
    plan: &CheckedPlan,
    tree: &Tree,
    prefix: &str,
    _: KueueApi,
    out: &mut Export,
) -> Result<()> {
    out.objects = Some(volcano(plan, tree, prefix)?);
    Ok(())
}
