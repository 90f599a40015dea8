//! Scheduler exports from a plan: Kubernetes node labels, a Kueue
//! `Topology`, Volcano `HyperNode`s and Slurm `topology.conf` (tree and
//! block forms).
//!
//! - [`labels`]: the node labels every other export refers to;
//! - `tree`: fabric, pod, physical switch and switch as one tree, the
//!   shape of every scheduler format;
//! - `k8s`: the Kueue and Volcano objects;
//! - [`k8s_names`]: Kubernetes name rules (DNS-1123 labels and
//!   subdomains, label keys and values), shared with the provisioner;
//! - `slurm`: `topology.conf`.
//!
//! Every scheduler format is a tree and a BiGraph is not one: each
//! [`Export`] carries `lost`, what the translation cannot say. The format of
//! `--format json` is documented in `docs/export.md`.

mod k8s;
pub mod k8s_names;
pub mod labels;
mod slurm;
mod tree;

use std::collections::HashSet;

use serde::Serialize;

use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::plan::{Plan, Topology};

pub use k8s_names::{is_valid_key, label_value_problem};
pub use labels::{DEFAULT_PREFIX, NodeLabels, check_prefix, node_labels};

use tree::Tree;

/// What to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Node labels per server.
    Labels,
    /// A Kueue `Topology` (and the `ResourceFlavor` that uses it).
    Kueue,
    /// Volcano `HyperNode`s.
    Volcano,
    /// Slurm `topology.conf`, `topology/tree`.
    SlurmTree,
    /// Slurm `topology.conf`, `topology/block`.
    SlurmBlock,
}

impl Target {
    /// Every target, in the order `--to` lists them.
    pub const ALL: [Target; 5] = [
        Target::Labels,
        Target::Kueue,
        Target::Volcano,
        Target::SlurmTree,
        Target::SlurmBlock,
    ];

    /// The name as on the command line: `labels`, `kueue`, `volcano`,
    /// `slurm-tree`, `slurm-block`.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Labels => "labels",
            Target::Kueue => "kueue",
            Target::Volcano => "volcano",
            Target::SlurmTree => "slurm-tree",
            Target::SlurmBlock => "slurm-block",
        }
    }

    /// True for the Slurm forms, whose text is `topology.conf`, not YAML.
    pub fn is_slurm(self) -> bool {
        matches!(self, Target::SlurmTree | Target::SlurmBlock)
    }

    /// What the output is, for people: `Kueue Topology`, ...
    pub fn describe(self) -> &'static str {
        match self {
            Target::Labels => "node labels",
            Target::Kueue => "Kueue Topology",
            Target::Volcano => "Volcano HyperNodes",
            Target::SlurmTree => "Slurm topology.conf (tree)",
            Target::SlurmBlock => "Slurm topology.conf (block)",
        }
    }
}

/// One export of a plan. Its JSON form is what `--format json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Export {
    /// The target's name (`kueue`, `slurm-tree`, ...).
    pub to: &'static str,
    /// The plan's name.
    pub plan: String,
    /// The label prefix, with its `/`.
    pub prefix: String,
    /// Node labels (`labels`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeLabels>>,
    /// Kubernetes objects (`kueue`, `volcano`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<serde_json::Value>>,
    /// The `topology.conf` text (`slurm-tree`, `slurm-block`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology_conf: Option<String>,
    /// What the translation loses, one sentence each.
    pub lost: Vec<String>,
}

impl Export {
    /// The export as a person or a tool reads it: YAML documents (node
    /// labels, Kubernetes objects) or `topology.conf` text, each starting
    /// with comments that say what it is and what it loses.
    pub fn text(&self, target: Target) -> Result<String> {
        let mut out = format!(
            "# {} for plan {}, written by planner export\n",
            target.describe(),
            self.plan
        );
        if !self.lost.is_empty() {
            out.push_str("# Not expressed here:\n");
            for l in &self.lost {
                out.push_str(&format!("# - {l}\n"));
            }
        }
        if let Some(conf) = &self.topology_conf {
            out.push_str(conf);
        } else if let Some(nodes) = &self.nodes {
            out.push_str(&yaml(nodes)?);
        } else if let Some(objects) = &self.objects {
            for (i, o) in objects.iter().enumerate() {
                if i > 0 {
                    out.push_str("---\n");
                }
                out.push_str(&yaml(o)?);
            }
        }
        Ok(out)
    }
}

fn yaml<T: Serialize>(value: &T) -> Result<String> {
    serde_norway::to_string(value).map_err(|e| Error::serialize("YAML", e))
}

/// Exports a plan to a target. `prefix` is the label prefix (see
/// [`check_prefix`]); the labels, the Kueue levels, the Volcano selectors
/// and the Slurm switch names all come from the same values.
pub fn export(plan: &CheckedPlan, target: Target, prefix: &str) -> Result<Export> {
    let prefix = check_prefix(prefix)?;
    let tree = Tree::of(plan)?;
    let mut out = Export {
        to: target.as_str(),
        plan: plan.name.clone(),
        prefix: prefix.clone(),
        nodes: None,
        objects: None,
        topology_conf: None,
        lost: lost(plan, &tree, target),
    };
    match target {
        Target::Labels => out.nodes = Some(node_labels(plan, &prefix)?),
        Target::Kueue => out.objects = Some(k8s::kueue(plan, &tree, &prefix)?),
        Target::Volcano => out.objects = Some(k8s::volcano(plan, &tree, &prefix)?),
        Target::SlurmTree => out.topology_conf = Some(slurm::tree(plan, &tree)),
        Target::SlurmBlock => out.topology_conf = Some(slurm::block(plan, &tree)),
    }
    Ok(out)
}

/// What the translation of `plan` to `target` cannot say.
fn lost(plan: &Plan, tree: &Tree, target: Target) -> Vec<String> {
    let mut lost = Vec::new();
    let levels: Vec<&str> = tree.levels.iter().map(|l| l.key()).collect();
    let shape = levels.join(" > ");
    if plan.topology == Topology::BiGraph {
        let how = if target == Target::Labels {
            format!("labels can only name groups ({})", levels.join(", "))
        } else {
            format!("a tree ({shape}) can only nest groups")
        };
        lost.push(format!(
            "upper-lower adjacency of the BiGraph is not expressible: every upper switch links to every lower switch, but {how}, so switches in different groups look equally far apart whether they are 1 hop apart (different parts) or 2 (same part)"
        ));
    }
    if let Some(f) = &plan.fat_tree {
        lost.push(format!(
            "link counts and the leaf oversubscription ({}:1) are not carried; the tree ({shape}) says only which servers share a switch{}",
            crate::text::gbps(f.oversubscription),
            if f.tiers == 3 { " or a pod" } else { "" }
        ));
    }
    if let Some(r) = &plan.rail {
        lost.push(format!(
            "rails are not a level of servers: every server of a group is on all {} rail switches of it, so the tree ({shape}) groups servers by group (pod); the rail of each NIC is in the sn<i>.rail labels",
            r.rails
        ));
    }
    if plan.hpn.is_some() {
        lost.push(
            "HPN's plane B is not carried: the tree and the sn<i> labels place each NIC by its port 0 (plane A); its port 1 is on the plane-B ToR of the same rail and segment, so plane B groups the servers exactly as plane A does"
                .to_string(),
        );
    }
    let used: HashSet<&str> = plan
        .sub_node_list
        .iter()
        .map(|n| n.switch.as_str())
        .collect();
    let unused: Vec<&str> = plan
        .switch_list
        .iter()
        .filter(|s| !used.contains(s.name.as_str()))
        .map(|s| s.part_or_tier.as_str())
        .collect();
    if !unused.is_empty() {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for t in unused {
            match counts.iter_mut().find(|(n, _)| *n == t) {
                Some((_, c)) => *c += 1,
                None => counts.push((t, 1)),
            }
        }
        let list: Vec<String> = counts.iter().map(|(t, c)| format!("{c} {t}")).collect();
        lost.push(format!(
            "switches that carry no sub-node are left out ({})",
            list.join(", ")
        ));
    }
    let spread: Vec<&labels::ServerPlace> = tree.places.iter().filter(|p| p.switches > 1).collect();
    if let Some(first) = spread.first() {
        let server = &plan.servers[first.server];
        lost.push(format!(
            "{} server{} {} sub-nodes on more than one switch (first: {} on {}); {} switch value is the set of those switches joined with `.`, so it never groups servers that do not share switches, but which sub-node sits where is only in the sn<i>.switch labels",
            spread.len(),
            if spread.len() == 1 { "" } else { "s" },
            if spread.len() == 1 { "has" } else { "have" },
            server.name,
            first.switch,
            if spread.len() == 1 { "its" } else { "their" },
        ));
    }
    if target != Target::Labels {
        lost.push(
            "schedulers place whole servers: which GPU/NIC pair each rank uses is carried by the per-sub-node labels and the rank table, not here".into(),
        );
    }
    lost.push(format!(
        "rank order is not carried{}: the rank table (`planner ranks PLAN`) carries it",
        if plan.topology == Topology::BiGraph {
            " (HDRM needs it to be congestion-free)"
        } else {
            ""
        }
    ));
    if target == Target::SlurmBlock {
        let level = slurm::block_level(tree);
        lost.push(format!(
            "the block form keeps one level, {}: Slurm merges consecutive blocks (BlockSizes) as if neighbours were closer, which this fabric does not promise",
            tree.levels[level].key()
        ));
    }
    lost
}

#[cfg(test)]
mod tests;
