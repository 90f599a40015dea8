//! The plan's topology labels onto Nodes.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde::Serialize;
use serde_json::json;

use planner::export::labels::{check_prefix, node_labels};
use planner::checked::CheckedPlan;

use super::{Error, FIELD_MANAGER, Result, list_all};
use crate::nodes::{self, NodeMap};

/// How [`label_nodes`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelOptions {
    /// Label prefix, e.g. [`planner::export::labels::DEFAULT_PREFIX`].
    pub prefix: String,
    /// Send every write with `dryRun=All`: the API server checks and
    /// answers, and stores nothing.
    pub dry_run: bool,
    /// Label the Nodes that exist even when some plan servers have none;
    /// without it such a run is an error and nothing is written.
    pub allow_missing: bool,
}

/// What happened to one Node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeChange {
    /// The Node already had exactly the plan's labels under the prefix:
    /// nothing was sent.
    Unchanged,
    /// The labels were applied (or, with `dry_run`, would be).
    Changed,
    /// The cluster has no such Node: skipped.
    Missing,
}

impl NodeChange {
    /// The word the table prints.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeChange::Unchanged => "unchanged",
            NodeChange::Changed => "changed",
            NodeChange::Missing => "missing",
        }
    }
}

/// One planned server's Node and its labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeLabelState {
    /// Kubernetes Node name.
    pub node: String,
    /// The plan's server.
    pub server: String,
    /// What happened.
    pub change: NodeChange,
    /// Keys the Node did not have.
    pub added: Vec<String>,
    /// Keys whose value changed.
    pub updated: Vec<String>,
    /// Keys under the prefix that the plan no longer sets.
    pub removed: Vec<String>,
}

/// What [`label_nodes`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelReport {
    /// The plan's name.
    pub plan: String,
    /// The label prefix, ending in `/`.
    pub prefix: String,
    /// True when every write was a dry run.
    pub dry_run: bool,
    /// Every planned server, in plan order.
    pub nodes: Vec<NodeLabelState>,
    /// Cluster Nodes that no plan server maps to, sorted; left alone.
    pub not_in_plan: Vec<String>,
}

impl LabelReport {
    /// Nodes with the given outcome.
    pub fn count(&self, change: NodeChange) -> usize {
        self.nodes.iter().filter(|n| n.change == change).count()
    }
}

/// Labels the Node of every plan server with the plan's topology labels
/// (`planner::export::labels::node_labels`).
///
/// Sends `GET /api/v1/nodes`, then for each Node whose labels under the
/// prefix differ from the plan's a server-side apply (`PATCH
/// /api/v1/nodes/NAME?fieldManager=eflops-provisioner&force=true`, content
/// type `application/apply-patch+yaml`) of a Node carrying only those
/// labels. Labels under the prefix the plan no longer sets go away: the API
/// server drops the ones this field manager applied before, and a JSON
/// merge patch removes any left that another manager wrote. A Node already
/// labelled gets no request at all, so running it twice changes nothing.
///
/// Servers without a Node are an [`Error::MissingNodes`] before anything is
/// written, unless `options.allow_missing`.
pub async fn label_nodes(
    client: &kube::Client,
    plan: &CheckedPlan,
    plan_file: &str,
    map: Option<&NodeMap>,
    options: &LabelOptions,
) -> Result<LabelReport> {
    let prefix = check_prefix(&options.prefix)?;
    let bound = nodes::bind(plan, map, plan_file)?;
    let wanted: BTreeMap<String, BTreeMap<String, String>> = node_labels(plan, &prefix)?
        .into_iter()
        .map(|n| (n.server, n.labels))
        .collect();

    let api = Api::<Node>::all(client.clone());
    let cluster: BTreeMap<String, BTreeMap<String, String>> =
        list_all(&api, ListParams::default(), "Nodes")
            .await?
            .into_iter()
            .filter_map(|n| {
                let labels = n.metadata.labels.unwrap_or_default();
                n.metadata.name.map(|name| (name, labels))
            })
            .collect();

    let missing: Vec<(String, String)> = bound
        .iter()
        .filter(|b| !cluster.contains_key(&b.node))
        .map(|b| (b.server.clone(), b.node.clone()))
        .collect();
    if !missing.is_empty() && !options.allow_missing {
        return Err(Error::MissingNodes {
            missing,
            planned: bound.len(),
        });
    }
    let planned: BTreeSet<&str> = bound.iter().map(|b| b.node.as_str()).collect();
    let not_in_plan = cluster
        .keys()
        .filter(|n| !planned.contains(n.as_str()))
        .cloned()
        .collect();

    let mut apply = PatchParams::apply(FIELD_MANAGER).force();
    let mut merge = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    if options.dry_run {
        apply = apply.dry_run();
        merge = merge.dry_run();
    }

    let mut states = Vec::with_capacity(bound.len());
    for b in &bound {
        // node_labels gives every server of the plan its labels.
        let Some(want) = wanted.get(&b.server) else {
            return Err(Error::BadObject {
                object: format!("server {}", b.server),
                message: "the plan gives it no topology labels".to_string(),
            });
        };
        let Some(have) = cluster.get(&b.node) else {
            states.push(NodeLabelState {
                node: b.node.clone(),
                server: b.server.clone(),
                change: NodeChange::Missing,
                added: Vec::new(),
                updated: Vec::new(),
                removed: Vec::new(),
            });
            continue;
        };
        let added: Vec<String> = want
            .keys()
            .filter(|k| !have.contains_key(*k))
            .cloned()
            .collect();
        let updated: Vec<String> = want
            .iter()
            .filter(|(k, v)| have.get(*k).is_some_and(|h| h != *v))
            .map(|(k, _)| k.clone())
            .collect();
        let removed: Vec<String> = have
            .keys()
            .filter(|k| k.starts_with(&prefix) && !want.contains_key(*k))
            .cloned()
            .collect();
        let change = if added.is_empty() && updated.is_empty() && removed.is_empty() {
            NodeChange::Unchanged
        } else {
            let body = json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": { "name": b.node, "labels": want },
            });
            let applied = api
                .patch(&b.node, &apply, &Patch::Apply(&body))
                .await
                .map_err(|e| Error::api(format!("labelling Node {}", b.node), e))?;
            // Labels another field manager wrote stay after the apply.
            let left: BTreeMap<&String, Option<String>> = applied
                .metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| k.starts_with(&prefix) && !want.contains_key(*k))
                .map(|(k, _)| (k, None))
                .collect();
            if !left.is_empty() {
                let body = json!({ "metadata": { "labels": left } });
                api.patch(&b.node, &merge, &Patch::Merge(&body))
                    .await
                    .map_err(|e| {
                        Error::api(format!("removing stale labels from Node {}", b.node), e)
                    })?;
            }
            NodeChange::Changed
        };
        states.push(NodeLabelState {
            node: b.node.clone(),
            server: b.server.clone(),
            change,
            added,
            updated,
            removed,
        });
    }
    Ok(LabelReport {
        plan: plan.name.clone(),
        prefix,
        dry_run: options.dry_run,
        nodes: states,
        not_in_plan,
    })
}
