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
//! Each target is one row of the `targets!` table below ([`Row`]): its
//! names, its help, and its writer in one of those modules.
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

/// How a target writes `plan` into an [`Export`]: the plan, its tree, the
/// label prefix (checked) and the Kueue API version (for `kueue`).
type Write = fn(&CheckedPlan, &Tree, &str, KueueApi, &mut Export) -> Result<()>;

/// One row of the export table: what a target is and where its writer is.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The name after `--to` and in JSON's `to`.
    pub name: &'static str,
    /// What the output is, for people (the first line of its text).
    pub describe: &'static str,
    /// What `--to NAME` writes, for the command's help.
    pub help: &'static str,
    /// `topology.conf` text, not YAML.
    pub conf_text: bool,
    /// Writes its own label keys (topograph's): no prefix.
    pub own_keys: bool,
    /// Names groups only (labels), where the others nest them in a tree.
    pub flat: bool,
    /// Carries HPN's plane B (a tree per plane).
    pub planes: bool,
    /// A scheduler's format, which places whole servers.
    pub places_servers: bool,
    write: Write,
    /// What this target loses beyond what every target does, after it.
    lost: fn(&Plan, &Tree) -> Vec<String>,
}

/// Nothing lost beyond what every target loses.
fn nothing_more(_: &Plan, _: &Tree) -> Vec<String> {
    Vec::new()
}

/// Declares [`Target`] and its table from one list of
/// `Variant => Row { .. }` entries: adding an export is its writer in a
/// module of `export/` and one entry here.
macro_rules! targets {
    ($( $(#[$doc:meta])* $variant:ident => $row:expr, )+) => {
        /// What to export.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Target {
            $( $(#[$doc])* $variant, )+
        }

        impl Target {
            /// Every target, in the order `--to` lists them.
            pub const ALL: &'static [Target] = &[$(Target::$variant),+];

            /// The target's row of the table.
            pub const fn row(self) -> &'static Row {
                match self {
                    $( Target::$variant => &$row, )+
                }
            }
        }
    };
}

targets! {
    /// Node labels per server.
    Labels => Row {
        name: "labels",
        describe: "node labels",
        help: "Kubernetes node labels per server",
        conf_text: false,
        own_keys: false,
        flat: true,
        planes: false,
        places_servers: false,
        write: labels::write_labels,
        lost: nothing_more,
    },
    /// A Kueue `Topology` (and the `ResourceFlavor` that uses it).
    Kueue => Row {
        name: "kueue",
        describe: "Kueue Topology",
        help: "Kueue Topology (and its ResourceFlavor)",
        conf_text: false,
        own_keys: false,
        flat: false,
        planes: false,
        places_servers: true,
        write: k8s::write_kueue,
        lost: nothing_more,
    },
    /// Volcano `HyperNode`s.
    Volcano => Row {
        name: "volcano",
        describe: "Volcano HyperNodes",
        help: "Volcano HyperNodes",
        conf_text: false,
        own_keys: false,
        flat: false,
        planes: false,
        places_servers: true,
        write: k8s::write_volcano,
        lost: nothing_more,
    },
    /// Slurm `topology.conf`, `topology/tree`.
    SlurmTree => Row {
        name: "slurm-tree",
        describe: "Slurm topology.conf (tree)",
        help: "Slurm topology.conf, tree form",
        conf_text: true,
        own_keys: false,
        flat: false,
        planes: false,
        places_servers: true,
        write: slurm::write_tree,
        lost: nothing_more,
    },
    /// Slurm `topology.conf`, `topology/block`.
    SlurmBlock => Row {
        name: "slurm-block",
        describe: "Slurm topology.conf (block)",
        help: "Slurm topology.conf, block form",
        conf_text: true,
        own_keys: false,
        flat: false,
        planes: false,
        places_servers: true,
        write: slurm::write_block,
        lost: slurm::block_lost,
    },
    /// Slurm `topology.yaml` (Slurm 25.05 and later): several named
    /// topologies.
    SlurmYaml => Row {
        name: "slurm-yaml",
        describe: "Slurm topology.yaml",
        help: "Slurm topology.yaml (Slurm 25.05 and later): the tree, the blocks, and a tree per BiGraph part or HPN plane",
        conf_text: false,
        own_keys: false,
        flat: false,
        planes: true,
        places_servers: true,
        write: slurm::write_yaml,
        lost: slurm::yaml_lost,
    },
    /// Node labels in NVIDIA topograph 1.0's vocabulary
    /// (`fabric.topograph.run/tier-N`, `accelerator.topograph.run/domain`).
    Topograph => Row {
        name: "topograph",
        describe: "node labels (topograph vocabulary)",
        help: "Kubernetes node labels in NVIDIA topograph 1.0's vocabulary (fabric.topograph.run/tier-N, accelerator.topograph.run/domain)",
        conf_text: false,
        own_keys: true,
        flat: false,
        planes: false,
        places_servers: false,
        write: labels::write_topograph,
        lost: labels::topograph_lost,
    },
}

impl Target {
    /// The target's name: `labels`, `kueue`, `slurm-tree`, ...
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The target named `name`, if any.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.as_str() == name)
    }

    /// True for the `topology.conf` forms, whose text is not YAML.
    pub fn is_slurm(self) -> bool {
        self.row().conf_text
    }

    /// What the output is, for people: `Kueue Topology`, ...
    pub fn describe(self) -> &'static str {
        self.row().describe
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
        prefix: if target.row().own_keys {
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
    (target.row().write)(plan, &tree, &prefix, kueue_api, &mut out)?;
    Ok(out)
}

/// What the translation of `plan` to `target` cannot say.
fn lost(plan: &Plan, tree: &Tree, target: Target) -> Vec<String> {
    let mut lost = Vec::new();
    let levels: Vec<&str> = tree.levels.iter().map(|l| l.key()).collect();
    let shape = levels.join(" > ");
    if plan.topology == Topology::BiGraph {
        let how = if target.row().flat {
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
    if plan.hpn.is_some() && !target.row().planes {
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
    if target.row().places_servers {
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
    lost.extend((target.row().lost)(plan, tree));
    lost
}

#[cfg(test)]
mod tests;
