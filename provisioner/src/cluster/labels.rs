//! The plan's topology labels onto Nodes.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde::Serialize;
use serde_json::json;

use planner::checked::CheckedPlan;
use planner::export::labels::{check_prefix, node_labels};
use planner::text::Table;

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
    /// The report for people: a summary line, one row per Node, and the
    /// Nodes of the cluster that the plan does not have.
    pub fn table(&self) -> String {
        let r = self;
        let mut t = Table::new(["node", "server", "change", "added", "updated", "removed"]);
        for n in &r.nodes {
            let change = match (n.change, r.dry_run) {
                (NodeChange::Changed, true) => "would change",
                (c, _) => c.as_str(),
            };
            t.row([
                n.node.clone(),
                n.server.clone(),
                change.to_string(),
                n.added.len().to_string(),
                n.updated.len().to_string(),
                n.removed.len().to_string(),
            ]);
        }
        let mut s = format!(
            "{}: {} {}, {} unchanged, {} missing from the cluster; labels under {}{}\n\n{}",
            r.plan,
            nodes_word(r.count(NodeChange::Changed)),
            if r.dry_run {
                "would change"
            } else {
                "labelled"
            },
            r.count(NodeChange::Unchanged),
            r.count(NodeChange::Missing),
            r.prefix,
            if r.dry_run {
                " (dry run: the API server stored nothing)"
            } else {
                ""
            },
            t.render()
        );
        if !r.not_in_plan.is_empty() {
            s.push_str(&format!(
                "\n{} of the cluster not in the plan (left alone): {}\n",
                nodes_word(r.not_in_plan.len()),
                r.not_in_plan.join(", ")
            ));
        }
        s
    }

    /// Nodes with the given outcome.
    pub fn count(&self, change: NodeChange) -> usize {
        self.nodes.iter().filter(|n| n.change == change).count()
    }
}

/// `1 Node`, `2 Nodes`.
fn nodes_word(n: usize) -> String {
    format!("{n} Node{}", if n == 1 { "" } else { "s" })
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

#[cfg(test)]
mod tests {
    use planner::export::labels::DEFAULT_PREFIX;

    use super::*;

    #[test]
    fn label_table_says_what_changed() {
        let state = |node: &str, change, added: usize| NodeLabelState {
            node: node.to_string(),
            server: node.to_string(),
            change,
            added: (0..added).map(|i| format!("k{i}")).collect(),
            updated: Vec::new(),
            removed: Vec::new(),
        };
        let mut report = LabelReport {
            plan: "eflops-4x16".to_string(),
            prefix: DEFAULT_PREFIX.to_string(),
            dry_run: true,
            nodes: vec![
                state("node01", NodeChange::Changed, 3),
                state("node02", NodeChange::Unchanged, 0),
                state("node03", NodeChange::Missing, 0),
            ],
            not_in_plan: vec!["login1".to_string()],
        };
        assert_eq!(
            report.table(),
            "eflops-4x16: 1 Node would change, 1 unchanged, 1 missing from the cluster; labels under topology.eflops.io/ (dry run: the API server stored nothing)

node    server  change        added  updated  removed
node01  node01  would change  3      0        0
node02  node02  unchanged     0      0        0
node03  node03  missing       0      0        0

1 Node of the cluster not in the plan (left alone): login1
"
        );
        report.dry_run = false;
        report.not_in_plan.clear();
        let text = report.table();
        assert!(
            text.starts_with("eflops-4x16: 1 Node labelled, 1 unchanged"),
            "{text}"
        );
        assert!(
            text.ends_with("node03  node03  missing    0      0        0\n"),
            "{text}"
        );
    }
}
