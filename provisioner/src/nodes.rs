//! Plan servers to Kubernetes Node names.
//!
//! By default a server's Node is its host name. A node map (TOML, one
//! `server = "node"` line per server that differs) renames them; servers it
//! does not mention keep their host name. Every Node name must be a valid
//! Kubernetes object name (RFC 1123 subdomain) and no two servers may map
//! to one Node.

use std::collections::BTreeMap;

use serde::Serialize;

use planner::Problem;
use planner::checked::CheckedPlan;

use crate::error::{Error, Result};
use crate::toml_lines::KeyLines;

/// A sub-node as a Node carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSubNode {
    /// `<server>/sn<i>`.
    pub id: String,
    /// GPU paired with the NIC (the first of a shared NIC's).
    pub gpu: Option<String>,
    /// GPUs behind the NIC, one rank each: 1, or every GPU of a NIC the
    /// inventory shares among several (`gpus = [...]`).
    #[serde(skip_serializing_if = "is_one")]
    pub gpus: usize,
    /// NIC.
    pub nic: String,
    /// Switch (VLAN half) the NIC is cabled to.
    pub switch: String,
    /// `upper`, `lower`, or the fat-tree tier.
    pub part_or_tier: String,
}

/// For `skip_serializing_if`: a NIC with one GPU leaves `gpus` out.
fn is_one(n: &usize) -> bool {
    *n == 1
}

/// One Kubernetes Node of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    /// Kubernetes Node name.
    pub node: String,
    /// The plan's server.
    pub server: String,
    /// Where the name came from: `hostname` or `node-map`.
    pub named_by: &'static str,
    /// The sub-nodes it carries.
    pub sub_nodes: Vec<NodeSubNode>,
}

/// A node map as read from TOML: server name to Node name, with lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeMap {
    entries: BTreeMap<String, (String, Option<usize>)>,
    file: String,
}

impl NodeMap {
    /// Parses `server = "node"` lines; `file` names the input in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<NodeMap> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| Error::toml_syntax(text, file, &e))?;
        let lines = KeyLines::parse(text);
        let mut entries = BTreeMap::new();
        let mut problems = Vec::new();
        for (server, value) in table {
            let line = lines.line(&[server.as_str()]);
            match value.as_str() {
                Some(node) => {
                    entries.insert(server, (node.to_string(), line));
                }
                None => problems.push(Problem::at(
                    line,
                    format!("server {server}"),
                    format!("the node name is {}, not a string", value.type_str()),
                    format!("write {server} = \"<node name>\""),
                )),
            }
        }
        if problems.is_empty() {
            Ok(NodeMap {
                entries,
                file: file.to_string(),
            })
        } else {
            Err(Error::Invalid {
                file: file.to_string(),
                problems,
            })
        }
    }
}

/// Index into `plan.sub_node_list` by sub-node id (`node01/sn0`).
pub(crate) fn sub_node_indices(plan: &CheckedPlan) -> BTreeMap<&str, usize> {
    plan.sub_node_list
        .iter()
        .enumerate()
        .map(|(i, sn)| (sn.id.as_str(), i))
        .collect()
}

/// True when `name` is a valid Kubernetes Node name (an RFC 1123
/// subdomain: at most 253 characters of lower-case letters, digits, `-`
/// and `.`, each dot-separated label starting and ending with a letter or
/// digit).
pub(crate) fn is_node_name(name: &str) -> bool {
    planner::export::k8s_names::dns_subdomain_problem(name).is_none()
}

/// Binds every server of the plan to a Node. `plan_file` names the plan in
/// errors about host names.
pub fn bind(plan: &CheckedPlan, map: Option<&NodeMap>, plan_file: &str) -> Result<Vec<Node>> {
    let mut problems_map = Vec::new();
    let mut problems_plan = Vec::new();
    if let Some(map) = map {
        for (server, (_, line)) in &map.entries {
            if !plan.servers.iter().any(|s| &s.name == server) {
                problems_map.push(Problem::at(
                    *line,
                    format!("server {server}"),
                    "the plan has no such server".to_string(),
                    "use the server names of the plan (see `planner design`)".to_string(),
                ));
            }
        }
    }
    let mut nodes = Vec::with_capacity(plan.servers.len());
    let mut taken: BTreeMap<String, String> = BTreeMap::new();
    for s in &plan.servers {
        let (node, named_by, line) = match map.and_then(|m| m.entries.get(s.name.as_str())) {
            Some((node, line)) => (node.clone(), "node-map", *line),
            None => (s.name.to_string(), "hostname", None),
        };
        if !is_node_name(&node) {
            let p = Problem::at(
                line,
                format!("server {}", s.name),
                format!(
                    "`{node}` is not a valid Kubernetes node name (lower-case letters, digits, `-` and `.`)"
                ),
                if named_by == "hostname" {
                    format!("map it with a node map line: {} = \"<node name>\"", s.name)
                } else {
                    "write the node's name as `kubectl get nodes` shows it".to_string()
                },
            );
            if named_by == "hostname" {
                problems_plan.push(p);
            } else {
                problems_map.push(p);
            }
            continue;
        }
        if let Some(other) = taken.insert(node.clone(), s.name.to_string()) {
            problems_map.push(Problem::at(
                line,
                format!("server {}", s.name),
                format!("node {node} is already the node of server {other}"),
                "give every server its own node".to_string(),
            ));
            continue;
        }
        let sub_nodes = s
            .sub_nodes
            .iter()
            .filter_map(|&i| plan.sub_node_list.get(i))
            .map(|sn| NodeSubNode {
                id: sn.id.to_string(),
                gpu: sn.gpu.as_deref().map(str::to_string),
                gpus: sn.gpu_count(),
                nic: sn.nic.to_string(),
                switch: sn.switch.to_string(),
                part_or_tier: sn.part_or_tier.as_str().to_string(),
            })
            .collect();
        nodes.push(Node {
            node,
            server: s.name.to_string(),
            named_by,
            sub_nodes,
        });
    }
    if !problems_map.is_empty() {
        return Err(Error::Invalid {
            file: map.map_or(plan_file.to_string(), |m| m.file.clone()),
            problems: problems_map,
        });
    }
    if !problems_plan.is_empty() {
        return Err(Error::Invalid {
            file: plan_file.to_string(),
            problems: problems_plan,
        });
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use planner::design::shorthand::{self, Shorthand};

    fn plan() -> CheckedPlan {
        let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
        planner::design::design(&inv, &opts).unwrap()
    }

    #[test]
    fn node_names() {
        for ok in ["node1", "gpu-a.rack-3.example.com", "a"] {
            assert!(is_node_name(ok), "{ok}");
        }
        for bad in ["", "Node1", "node_1", "-a", "a-", "a..b", &"x".repeat(64)] {
            assert!(!is_node_name(bad), "{bad}");
        }
    }

    #[test]
    fn hostnames_by_default_and_map_overrides() {
        let plan = plan();
        let nodes = bind(&plan, None, "p.json").unwrap();
        // A 2x4 BiGraph of servers with two sub-nodes each.
        assert_eq!(nodes.len(), 4);
        assert_eq!(nodes[0].node, "node1");
        assert_eq!(nodes[0].sub_nodes.len(), 2);
        let map = NodeMap::from_toml("node2 = \"k8s-b\"\n", "map.toml").unwrap();
        let nodes = bind(&plan, Some(&map), "p.json").unwrap();
        assert_eq!(
            (nodes[1].node.as_str(), nodes[1].named_by),
            ("k8s-b", "node-map")
        );
    }

    #[test]
    fn map_errors_name_the_line() {
        let plan = plan();
        let map = NodeMap::from_toml(
            "node9 = \"x\"\nnode1 = \"Bad_Name\"\nnode2 = \"node2\"\n",
            "map.toml",
        )
        .unwrap();
        let e = bind(&plan, Some(&map), "p.json").unwrap_err().to_string();
        assert!(
            e.contains("map.toml:1: server node9: the plan has no such server"),
            "{e}"
        );
        assert!(
            e.contains("map.toml:2: server node1: `Bad_Name` is not a valid"),
            "{e}"
        );
        let map = NodeMap::from_toml("node1 = \"node2\"\n", "map.toml").unwrap();
        let e = bind(&plan, Some(&map), "p.json").unwrap_err().to_string();
        assert!(
            e.contains("node node2 is already the node of server node1"),
            "{e}"
        );
        let e = NodeMap::from_toml("node1 = 3\n", "map.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("map.toml:1: server node1: the node name is integer"),
            "{e}"
        );
        let e = NodeMap::from_toml("node1 = \n", "map.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("map.toml:1:"), "{e}");
        // A dotted key has a line too (issue 14: the scanner gave none).
        let e = NodeMap::from_toml("node1 = \"a\"\nrack.node2 = \"b\"\n", "map.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("map.toml:2: server rack: the node name is table"),
            "{e}"
        );
    }
}
