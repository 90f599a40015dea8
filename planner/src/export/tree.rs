//! The tree every scheduler export is cut from: fabric, then pod (3-tier
//! fat-trees), then physical switch (plans with VLAN-split switches), then
//! switch, then servers. Each level is a server-level node label, so the
//! Kueue levels, Volcano tiers and Slurm switches all agree with the labels.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::plan::{Plan, PlanSubNode};

use super::labels::{ServerPlace, key, server_places};

/// One level of the tree, top-down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// The whole plan.
    Fabric,
    /// A pod of a 3-tier fat-tree.
    Pod,
    /// A physical switch holding VLAN halves.
    Physical,
    /// The switch (or set of switches) a server's sub-nodes attach to.
    Switch,
}

impl Level {
    /// The label name of the level (without prefix), also its name in
    /// Volcano `tierName` and in the `lost` notes.
    pub fn key(self) -> &'static str {
        match self {
            Level::Fabric => key::FABRIC,
            Level::Pod => key::POD,
            Level::Physical => key::PHYSICAL,
            Level::Switch => key::SWITCH,
        }
    }
}

/// A group at one level: its label value, its parent in the level above,
/// and the servers under it (indices into `plan.servers`, plan order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub value: String,
    pub parent: Option<usize>,
    pub servers: Vec<usize>,
}

/// The levels and groups of a plan.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// Levels, top-down; always starts with `Fabric` and ends with `Switch`.
    pub levels: Vec<Level>,
    /// Groups of each level, in order of their first server.
    pub groups: Vec<Vec<Group>>,
    /// Where each server attaches (label values), in plan order.
    pub places: Vec<ServerPlace>,
}

impl Tree {
    /// Builds the tree of a plan. Fails with the error of
    /// [`server_places`] when a name cannot be a label value.
    pub fn of(plan: &Plan) -> Result<Tree> {
        let places = server_places(plan)?;
        if places.is_empty() {
            return Err(Error::Invalid {
                file: format!("plan {}", plan.name),
                what: "plan",
                problems: vec![crate::Problem::at(
                    None,
                    "plan",
                    "has no servers, so there is nothing to export",
                    "design the plan from an inventory with servers",
                )],
            });
        }
        let mut levels = vec![Level::Fabric];
        if places.iter().any(|p| p.pod.is_some()) {
            levels.push(Level::Pod);
        }
        if plan.switch_list.iter().any(|s| s.physical != s.name) {
            levels.push(Level::Physical);
        }
        levels.push(Level::Switch);
        let mut groups: Vec<Vec<Group>> = vec![Vec::new(); levels.len()];
        let mut index: Vec<HashMap<String, usize>> = vec![HashMap::new(); levels.len()];
        for place in &places {
            let mut parent = None;
            for (l, level) in levels.iter().enumerate() {
                let value = match level {
                    Level::Fabric => plan.name.as_str(),
                    Level::Pod => place.pod.as_deref().unwrap_or(""),
                    Level::Physical => place.physical.as_str(),
                    Level::Switch => place.switch.as_str(),
                };
                let at = match index[l].get(value) {
                    Some(&i) => i,
                    None => {
                        index[l].insert(value.to_string(), groups[l].len());
                        groups[l].push(Group {
                            value: value.to_string(),
                            parent,
                            servers: Vec::new(),
                        });
                        groups[l].len() - 1
                    }
                };
                let group = &mut groups[l][at];
                if group.parent != parent {
                    // Every level is a function of the switch set, so this
                    // cannot happen on a plan the designer wrote.
                    return Err(Error::Internal(format!(
                        "{} `{value}` sits under two groups of the level above",
                        level.key()
                    )));
                }
                group.servers.push(place.server);
                parent = Some(at);
            }
        }
        Ok(Tree {
            levels,
            groups,
            places,
        })
    }

    /// The index of the switch level (the last).
    pub fn leaf(&self) -> usize {
        self.levels.len() - 1
    }

    /// The indices of the groups of level `l + 1` whose parent is group
    /// `parent` of level `l`.
    pub fn children(&self, l: usize, parent: usize) -> impl Iterator<Item = usize> + '_ {
        self.groups[l + 1]
            .iter()
            .enumerate()
            .filter(move |(_, g)| g.parent == Some(parent))
            .map(|(i, _)| i)
    }
}

/// The plan as one part or plane sees it: every sub-node mapped by `f`
/// (kept, moved to another switch, or left out with `None`), and the
/// servers left without sub-nodes dropped. Switches are kept as they are.
pub(crate) fn view(plan: &Plan, f: impl Fn(&PlanSubNode) -> Option<PlanSubNode>) -> Plan {
    let mut sub_nodes = Vec::new();
    let mut servers = Vec::new();
    for server in &plan.servers {
        let mut kept = Vec::new();
        for sn in server
            .sub_nodes
            .iter()
            .filter_map(|&i| plan.sub_node_list.get(i))
        {
            if let Some(sn) = f(sn) {
                kept.push(sub_nodes.len());
                sub_nodes.push(sn);
            }
        }
        if !kept.is_empty() {
            let mut s = server.clone();
            s.sub_nodes = kept;
            servers.push(s);
        }
    }
    Plan {
        servers,
        sub_node_list: sub_nodes,
        ..plan.clone()
    }
}
