//! Slurm `topology.conf`: the tree form (`topology/tree`: one
//! `SwitchName=` line per group, leaves with `Nodes=`, the rest with
//! `Switches=`) and the block form (`topology/block`: `BlockName=` lines
//! and `BlockSizes=`).

use std::collections::HashSet;

use crate::plan::Plan;

use super::tree::Tree;

/// The tree form: the switch level first (with the servers as nodes),
/// then each level above with the groups below it as switches.
pub(crate) fn tree(plan: &Plan, tree: &Tree) -> String {
    let names = switch_names(tree);
    let mut out = String::from(
        "# slurm.conf: TopologyPlugin=topology/tree; node names are the plan's server names (NodeName)\n",
    );
    let leaf = tree.leaf();
    for l in (0..tree.levels.len()).rev() {
        for (i, g) in tree.groups[l].iter().enumerate() {
            let children = if l == leaf {
                let nodes: Vec<&str> = g
                    .servers
                    .iter()
                    .map(|&s| plan.servers[s].name.as_str())
                    .collect();
                format!("Nodes={}", nodes.join(","))
            } else {
                let switches: Vec<&str> = tree
                    .children(l, i)
                    .map(|c| names[l + 1][c].as_str())
                    .collect();
                format!("Switches={}", switches.join(","))
            };
            out.push_str(&format!("SwitchName={} {children}\n", names[l][i]));
        }
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

/// The block form: one block per group of [`block_level`], and
/// `BlockSizes` from the smallest block's node count doubling while that
/// many blocks exist.
pub(crate) fn block(plan: &Plan, tree: &Tree) -> String {
    let l = block_level(tree);
    let groups = &tree.groups[l];
    let mut out = String::from(
        "# slurm.conf: TopologyPlugin=topology/block; node names are the plan's server names (NodeName)\n",
    );
    for g in groups {
        let nodes: Vec<&str> = g
            .servers
            .iter()
            .map(|&s| plan.servers[s].name.as_str())
            .collect();
        out.push_str(&format!(
            "BlockName={} Nodes={}\n",
            g.value,
            nodes.join(",")
        ));
    }
    let base = groups.iter().map(|g| g.servers.len()).min().unwrap_or(1);
    let mut sizes = Vec::new();
    let mut blocks = 1;
    while blocks <= groups.len() {
        sizes.push((base * blocks).to_string());
        blocks *= 2;
    }
    out.push_str(&format!("BlockSizes={}\n", sizes.join(",")));
    out
}
