//! Scheduler exports from a plan: Kubernetes node labels (ours, or NVIDIA
//! topograph's vocabulary), a Kueue `Topology`, Volcano `HyperNode`s, Slurm
//! `topology.conf` (tree and block forms) and Slurm `topology.yaml`.
//!
//! - [`labels`]: the node labels every other export refers to;
//! - `tree`: fabric, pod, physical switch and switch as one tree, the
//!   shape of every scheduler format;
//! - `k8s`: the Kueue and Volcano objects;
//! - [`k8s_names`]: Kubernetes name rules (DNS-1123 labels and
//!   subdomains, label keys and values), shared with the provisioner;
//! - `slurm`: `topology.conf` and `topology.yaml`.
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
pub use slurm::{YamlBlock, YamlForm, YamlSwitch, YamlTopology};

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
    /// Slurm `topology.yaml` (Slurm 25.05 and later): several named
    /// topologies.
    SlurmYaml,
    /// Node labels in NVIDIA topograph 1.0's vocabulary
    /// (`fabric.topograph.run/tier-N`, `accelerator.topograph.run/domain`).
    Topograph,
}

impl Target {
    /// Every target, in the order `--to` lists them.
    pub const ALL: [Target; 7] = [
        Target::Labels,
        Target::Kueue,
        Target::Volcano,
        Target::SlurmTree,
        Target::SlurmBlock,
        Target::SlurmYaml,
        Target::Topograph,
    ];

    /// The name as on the command line: `labels`, `kueue`, `volcano`,
    /// `slurm-tree`, `slurm-block`, `slurm-yaml`, `topograph`.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Labels => "labels",
            Target::Kueue => "kueue",
            Target::Volcano => "volcano",
            Target::SlurmTree => "slurm-tree",
            Target::SlurmBlock => "slurm-block",
            Target::SlurmYaml => "slurm-yaml",
            Target::Topograph => "topograph",
        }
    }

    /// True for the `topology.conf` forms, whose text is not YAML.
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
            Target::SlurmYaml => "Slurm topology.yaml",
            Target::Topograph => "node labels (topograph vocabulary)",
        }
    }
}

/// The Kueue API version the `kueue` target writes.
///
/// Kueue removed `v1alpha1` Topology when topology-aware scheduling went
/// beta (v0.14.0); `v1beta2` is served since v0.15.0 and is the stored
/// version of v0.19.2, whose CRDs still serve `v1beta1` as deprecated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KueueApi {
    /// `kueue.x-k8s.io/v1beta2` (Kueue v0.15.0 and later).
    #[default]
    V1beta2,
    /// `kueue.x-k8s.io/v1beta1`, deprecated: for clusters older than
    /// Kueue v0.15.0 (TAS beta from v0.14.0).
    V1beta1,
}

impl KueueApi {
    /// Every version, newest first, as `--kueue-api` lists them.
    pub const ALL: [KueueApi; 2] = [KueueApi::V1beta2, KueueApi::V1beta1];

    /// The version's name: `v1beta2`, `v1beta1`.
    pub fn as_str(self) -> &'static str {
        match self {
            KueueApi::V1beta2 => "v1beta2",
            KueueApi::V1beta1 => "v1beta1",
        }
    }

    /// The objects' `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            KueueApi::V1beta2 => "kueue.x-k8s.io/v1beta2",
            KueueApi::V1beta1 => "kueue.x-k8s.io/v1beta1",
        }
    }

    /// Why a user should move off this version, if it is deprecated.
    pub fn deprecation(self) -> Option<&'static str> {
        match self {
            KueueApi::V1beta2 => None,
            KueueApi::V1beta1 => Some(
                "kueue.x-k8s.io/v1beta1 is deprecated (Kueue v0.15.0 and later serve v1beta2, which v0.19 stores); use it only for clusters older than Kueue v0.15.0",
            ),
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
    /// The label prefix, with its `/` (empty for `topograph`, whose keys
    /// are topograph's own).
    pub prefix: String,
    /// Node labels (`labels`, `topograph`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeLabels>>,
    /// Kubernetes objects (`kueue`, `volcano`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<serde_json::Value>>,
    /// The `topology.conf` text (`slurm-tree`, `slurm-block`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology_conf: Option<String>,
    /// The topologies of `topology.yaml` (`slurm-yaml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topologies: Option<Vec<YamlTopology>>,
    /// What the translation loses, one sentence each.
    pub lost: Vec<String>,
    /// Notes on the output itself (a deprecated API version), one
    /// sentence each; left out of the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
        for n in &self.notes {
            out.push_str(&format!("# Note: {n}\n"));
        }
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
        } else if let Some(topologies) = &self.topologies {
            out.push_str(&yaml(topologies)?);
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

/// YAML through the one writer that quotes every string a YAML 1.1 or 1.2
/// reader could take for another type ([`crate::yaml`]).
fn yaml<T: Serialize>(value: &T) -> Result<String> {
    crate::yaml::to_string(value).map_err(|e| Error::serialize("YAML", e))
}

/// Exports a plan to a target. `prefix` is the label prefix (see
/// [`check_prefix`]); the labels, the Kueue levels, the Volcano selectors
/// and the Slurm switch names all come from the same values. Kueue objects
/// are written in the current API version, [`KueueApi::V1beta2`].
pub fn export(plan: &CheckedPlan, target: Target, prefix: &str) -> Result<Export> {
    export_with(plan, target, prefix, KueueApi::default())
}

/// [`export`] with the Kueue API version chosen (it matters only for
/// [`Target::Kueue`]).
pub fn export_with(
    plan: &CheckedPlan,
    target: Target,
    prefix: &str,
    kueue_api: KueueApi,
) -> Result<Export> {
    let prefix = check_prefix(prefix)?;
    let tree = Tree::of(plan)?;
    let mut out = Export {
        to: target.as_str(),
        plan: plan.name.clone(),
        prefix: if target == Target::Topograph {
            String::new()
        } else {
            prefix.clone()
        },
        nodes: None,
        objects: None,
        topology_conf: None,
        topologies: None,
        lost: lost(plan, &tree, target),
        notes: Vec::new(),
    };
    match target {
        Target::Labels => out.nodes = Some(node_labels(plan, &prefix)?),
        Target::Kueue => {
            out.objects = Some(k8s::kueue(plan, &tree, &prefix, kueue_api)?);
            out.notes
                .extend(kueue_api.deprecation().map(str::to_string));
        }
        Target::Volcano => out.objects = Some(k8s::volcano(plan, &tree, &prefix)?),
        Target::SlurmTree => out.topology_conf = Some(slurm::tree(plan, &tree)),
        Target::SlurmBlock => out.topology_conf = Some(slurm::block(plan, &tree)),
        Target::SlurmYaml => out.topologies = Some(slurm_yaml(plan, &tree)?),
        Target::Topograph => out.nodes = Some(labels::topograph_labels(plan, &tree)),
    }
    Ok(out)
}

/// The topologies of `topology.yaml`: the whole plan as a tree (the
/// cluster default, as `slurm-tree`) and as blocks (as `slurm-block`), then
/// one tree per BiGraph part (the servers with a sub-node on that part's
/// switches) or per HPN plane (plane B places each NIC by its port 1).
fn slurm_yaml(plan: &Plan, tree: &Tree) -> Result<Vec<YamlTopology>> {
    let mut out = vec![
        slurm::yaml_tree(plan, tree, plan.name.clone(), true),
        slurm::yaml_block(plan, tree, format!("{}-block", plan.name)),
    ];
    let mut views: Vec<(String, Plan)> = Vec::new();
    if plan.topology == Topology::BiGraph {
        for tier in [crate::plan::Tier::Upper, crate::plan::Tier::Lower] {
            let v = tree::view(plan, |sn| (sn.part_or_tier == tier).then(|| sn.clone()));
            views.push((format!("{}-{}", plan.name, tier.as_str()), v));
        }
    }
    if plan.hpn.is_some() {
        views.push((format!("{}-plane-a", plan.name), plan.clone()));
        let b = tree::view(plan, |sn| {
            sn.port1.as_ref().map(|p| crate::plan::PlanSubNode {
                switch: p.switch.clone(),
                port: p.port,
                part_or_tier: p.part_or_tier,
                port1: None,
                ..sn.clone()
            })
        });
        views.push((format!("{}-plane-b", plan.name), b));
    }
    for (name, v) in views {
        if v.servers.is_empty() {
            continue;
        }
        let t = Tree::of(&v)?;
        out.push(slurm::yaml_tree(&v, &t, name, false));
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
    if plan.hpn.is_some() && target != Target::SlurmYaml {
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
    if !matches!(target, Target::Labels | Target::Topograph) {
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
    if target == Target::Topograph {
        lost.push(format!(
            "topograph's vocabulary has tiers only: the tiers are the tree's levels from the switch outward ({}), and a BiGraph part, a fat-tree tier or a rail has no key (the labels export keeps them)",
            tree.levels.iter().rev().map(|l| l.key()).collect::<Vec<_>>().join(", ")
        ));
        lost.push(
            "accelerator.topograph.run/domain is the server for servers with NVLink (every NVLink domain of a plan is one server); topograph's own value is the NVLink clique id, and sub-domain is not written".into(),
        );
    }
    if target == Target::SlurmYaml {
        if plan.topology == Topology::BiGraph {
            lost.push(
                "each part's topology is a tree over that part's switches only: a partition that uses it sees no path through the other part".into(),
            );
        }
        lost.push(
            "no block topology for NVLink domains: every NVLink domain of the plan is one server, and Slurm allocates whole nodes, so such blocks would constrain nothing".into(),
        );
    }
    if matches!(target, Target::SlurmBlock | Target::SlurmYaml) {
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
