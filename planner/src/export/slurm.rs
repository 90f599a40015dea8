//! Slurm's topology files: `topology.conf`, in the tree form
//! (`topology/tree`: one `SwitchName=` line per group, leaves with `Nodes=`,
//! the rest with `Switches=`) and the block form (`topology/block`:
//! `BlockName=` lines and `BlockSizes=`), and `topology.yaml` (Slurm 25.05
//! and later), which names several topologies, each a tree, a block or flat,
//! for partitions to choose with `Topology=`.
//!
//! `topology.yaml` follows topology.yaml(5) of Slurm 25.05 (SchedMD/slurm
//! `doc/man/man5/topology.yaml.5`): a list of topologies whose first key is
//! `topology`, then `cluster_default`, then exactly one of `tree`
//! (`switches`: `switch`, `children`, `nodes`), `block` (`block_sizes`,
//! `blocks`: `block`, `nodes`) or `flat`. `children` and `nodes` are
//! hostlist expressions; a comma-separated list is one.

use std::collections::HashSet;

use serde::Serialize;

use crate::checked::CheckedPlan;
use crate::error::Result;
use crate::plan::{Plan, Topology};

use super::tree::{self, Tree};
use super::{Export, KueueApi};

/// One switch of the tree form: its name and either its servers (a leaf)
/// or the switches below it.
struct TreeSwitch {
    name: String,
    nodes: Vec<String>,
    children: Vec<String>,
}

/// The tree form's switches: the switch level first (with the servers as
/// nodes), then each level above with the groups below it as switches.
fn tree_switches(plan: &Plan, tree: &Tree) -> Vec<TreeSwitch> {
    let names = switch_names(tree);
    let leaf = tree.leaf();
    let mut out = Vec::new();
    for l in (0..tree.levels.len()).rev() {
        for (i, g) in tree.groups[l].iter().enumerate() {
            let (nodes, children) = if l == leaf {
                let nodes = g
                    .servers
                    .iter()
                    .map(|&s| plan.servers[s].name.to_string())
                    .collect();
                (nodes, Vec::new())
            } else {
                let switches = tree
                    .children(l, i)
                    .map(|c| names[l + 1][c].clone())
                    .collect();
                (Vec::new(), switches)
            };
            out.push(TreeSwitch {
                name: names[l][i].clone(),
                nodes,
                children,
            });
        }
    }
    out
}

/// The tree form of `topology.conf`.
pub(crate) fn tree(plan: &Plan, tree: &Tree) -> String {
    let mut out = String::from(
        "# slurm.conf: TopologyPlugin=topology/tree; node names are the plan's server names (NodeName)\n",
    );
    for sw in tree_switches(plan, tree) {
        let children = if sw.children.is_empty() {
            format!("Nodes={}", sw.nodes.join(","))
        } else {
            format!("Switches={}", sw.children.join(","))
        };
        out.push_str(&format!("SwitchName={} {children}\n", sw.name));
    }
    out
}

/// Switch names of every group: its label value, with `-<level>` added when
/// a lower level already uses the name (an unsplit switch in a plan that
/// splits others is its own physical switch).
fn switch_names(tree: &Tree) -> Vec<Vec<String>> {
    let mut used = HashSet::new();
    let mut names = vec![Vec::new(); tree.levels.len()];
    for l in (0..tree.levels.len()).rev() {
        for g in &tree.groups[l] {
            let mut name = g.value.clone();
            if used.contains(&name) {
                name = format!("{}-{}", g.value, tree.levels[l].key());
                let mut n = 2;
                while used.contains(&name) {
                    name = format!("{}-{}{n}", g.value, tree.levels[l].key());
                    n += 1;
                }
            }
            used.insert(name.clone());
            names[l].push(name);
        }
    }
    names
}

/// The level the block form keeps: the one above the switches (physical
/// switch or pod) when there is one below the fabric, else the switches.
pub(crate) fn block_level(tree: &Tree) -> usize {
    if tree.levels.len() > 2 {
        tree.leaf() - 1
    } else {
        tree.leaf()
    }
}

/// The block form's blocks (name and servers) and block sizes: one block
/// per group of [`block_level`], and the sizes from the smallest block's
/// node count doubling while that many blocks exist.
fn blocks(plan: &Plan, tree: &Tree) -> (Vec<(String, Vec<String>)>, Vec<usize>) {
    let groups = &tree.groups[block_level(tree)];
    let blocks = groups
        .iter()
        .map(|g| {
            let nodes = g
                .servers
                .iter()
                .map(|&s| plan.servers[s].name.to_string())
                .collect();
            (g.value.clone(), nodes)
        })
        .collect();
    let base = groups.iter().map(|g| g.servers.len()).min().unwrap_or(1);
    let mut sizes = Vec::new();
    let mut count = 1;
    while count <= groups.len() {
        sizes.push(base * count);
        count *= 2;
    }
    (blocks, sizes)
}

/// The block form of `topology.conf`.
pub(crate) fn block(plan: &Plan, tree: &Tree) -> String {
    let mut out = String::from(
        "# slurm.conf: TopologyPlugin=topology/block; node names are the plan's server names (NodeName)\n",
    );
    let (blocks, sizes) = blocks(plan, tree);
    for (name, nodes) in blocks {
        out.push_str(&format!("BlockName={name} Nodes={}\n", nodes.join(",")));
    }
    let sizes: Vec<String> = sizes.iter().map(usize::to_string).collect();
    out.push_str(&format!("BlockSizes={}\n", sizes.join(",")));
    out
}

/// One topology of `topology.yaml`. Field order is the file's: Slurm
/// wants `topology` first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct YamlTopology {
    /// The name a partition's `Topology=` uses.
    pub topology: String,
    /// True for the one topology partitions without `Topology=` use.
    pub cluster_default: bool,
    /// What the topology is, and what the plan says about it.
    #[serde(flatten)]
    pub form: YamlForm,
}

/// The plugin of one topology of `topology.yaml`, with its switches or
/// blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum YamlForm {
    /// `topology/tree`.
    Tree {
        /// Every switch, leaves first.
        switches: Vec<YamlSwitch>,
    },
    /// `topology/block`.
    Block {
        /// The base block size, then each power-of-two multiple enforced.
        block_sizes: Vec<usize>,
        /// Every block.
        blocks: Vec<YamlBlock>,
    },
}

/// A switch of a tree topology: a leaf has `nodes`, the others `children`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct YamlSwitch {
    /// The switch's name, at most 64 characters.
    pub switch: String,
    /// The switches below it (a hostlist expression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<String>,
    /// The servers below it (a hostlist expression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
}

/// A block of a block topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct YamlBlock {
    /// The block's name.
    pub block: String,
    /// Its servers (a hostlist expression).
    pub nodes: String,
}

/// The tree form as one `topology.yaml` topology.
pub(crate) fn yaml_tree(plan: &Plan, tree: &Tree, name: String, default: bool) -> YamlTopology {
    let list = |v: Vec<String>| (!v.is_empty()).then(|| v.join(","));
    let switches = tree_switches(plan, tree)
        .into_iter()
        .map(|sw| YamlSwitch {
            switch: sw.name,
            children: list(sw.children),
            nodes: list(sw.nodes),
        })
        .collect();
    YamlTopology {
        topology: name,
        cluster_default: default,
        form: YamlForm::Tree { switches },
    }
}

/// The block form as one `topology.yaml` topology.
pub(crate) fn yaml_block(plan: &Plan, tree: &Tree, name: String) -> YamlTopology {
    let (blocks, block_sizes) = blocks(plan, tree);
    let blocks = blocks
        .into_iter()
        .map(|(block, nodes)| YamlBlock {
            block,
            nodes: nodes.join(","),
        })
        .collect();
    YamlTopology {
        topology: name,
        cluster_default: false,
        form: YamlForm::Block {
            block_sizes,
            blocks,
        },
    }
}

/// `--to slurm-tree`: `topology.conf` in the tree form.
pub(super) fn write_tree(
    plan: &CheckedPlan,
    t: &Tree,
    _: &str,
    _: KueueApi,
    out: &mut Export,
) -> Result<()> {
    out.topology_conf = Some(tree(plan, t));
    Ok(())
}

/// `--to slurm-block`: `topology.conf` in the block form.
pub(super) fn write_block(
    plan: &CheckedPlan,
    t: &Tree,
    _: &str,
    _: KueueApi,
    out: &mut Export,
) -> Result<()> {
    out.topology_conf = Some(block(plan, t));
    Ok(())
}

/// `--to slurm-yaml`: the topologies of `topology.yaml`.
pub(super) fn write_yaml(
    plan: &CheckedPlan,
    t: &Tree,
    _: &str,
    _: KueueApi,
    out: &mut Export,
) -> Result<()> {
    out.topologies = Some(topologies(plan, t)?);
    Ok(())
}

/// The topologies of `topology.yaml`: the whole plan as a tree (the
/// cluster default, as `slurm-tree`) and as blocks (as `slurm-block`), then
/// one tree per BiGraph part (the servers with a sub-node on that part's
/// switches) or per HPN plane (plane B places each NIC by its port 1).
fn topologies(plan: &Plan, tree: &Tree) -> Result<Vec<YamlTopology>> {
    let mut out = vec![
        yaml_tree(plan, tree, plan.name.clone(), true),
        yaml_block(plan, tree, format!("{}-block", plan.name)),
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
        out.push(yaml_tree(&v, &t, name, false));
    }
    Ok(out)
}

/// What the block form cannot say beyond what every export loses.
pub(super) fn block_lost(_: &Plan, tree: &Tree) -> Vec<String> {
    let mut lost = Vec::new();
    let level = block_level(tree);
    lost.push(format!(
        "the block form keeps one level, {}: Slurm merges consecutive blocks (BlockSizes) as if neighbours were closer, which this fabric does not promise",
        tree.levels[level].key()
    ));
    lost
}

/// What `topology.yaml` cannot say beyond what every export loses: its
/// per-part trees, NVLink blocks, and its block form's one level.
pub(super) fn yaml_lost(plan: &Plan, tree: &Tree) -> Vec<String> {
    let mut lost = Vec::new();
    if plan.topology == Topology::BiGraph {
        lost.push(
            "each part's topology is a tree over that part's switches only: a partition that uses it sees no path through the other part".into(),
        );
    }
    lost.push(
        "no block topology for NVLink domains: every NVLink domain of the plan is one server, and Slurm allocates whole nodes, so such blocks would constrain nothing".into(),
    );
    lost.extend(block_lost(plan, tree));
    lost
}
