//! Kubernetes node labels from a plan: one set per server.
//!
//! Server-level keys (`fabric`, `server`, `switch`, `physical`, `part` or
//! `tier`, `pod`) carry one value per node, so schedulers can use them as
//! topology levels. A server whose sub-nodes sit on more than one switch
//! (a BiGraph spreads a server with more than M sub-nodes over both parts)
//! gets the *set* of switches as its value, names sorted and joined with
//! `.`: two servers share the value only when they use the same switches,
//! so the label never claims a locality the fabric does not have. The
//! per-sub-node keys `sn<i>.switch`, `sn<i>.physical`, `sn<i>.part` (or
//! `.tier`), `sn<i>.nic` and `sn<i>.gpu` say exactly where each GPU/NIC
//! pair is attached.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::k8s_names::{
    LabelFault, MAX_LABEL, MAX_SUBDOMAIN, SubdomainFault, dns_subdomain_fault, label_value_problem,
};
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::plan::{Plan, PlanServer, Tier, Topology};

/// The label prefix used when none is given.
pub const DEFAULT_PREFIX: &str = "topology.eflops.io/";

/// The labels of one server's Kubernetes node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeLabels {
    /// The plan's server name (the node's host name unless a node map says
    /// otherwise).
    pub server: String,
    /// Label key (with prefix) to value.
    pub labels: BTreeMap<String, String>,
}

/// Label names (without prefix) of the server-level keys.
pub mod key {
    /// The plan's name: one value for the whole fabric.
    pub const FABRIC: &str = "fabric";
    /// `bigraph` or `fat-tree`.
    pub const TOPOLOGY: &str = "topology";
    /// The server's name in the plan.
    pub const SERVER: &str = "server";
    /// The switch (or sorted set of switches) carrying the sub-nodes.
    pub const SWITCH: &str = "switch";
    /// The physical switch (or set) those switches live in.
    pub const PHYSICAL: &str = "physical";
    /// BiGraph part: `upper`, `lower` or `upper.lower`.
    pub const PART: &str = "part";
    /// Fat-tree tier of the attaching switches (`leaf` or `edge`).
    pub const TIER: &str = "tier";
    /// Pod (or sorted set of pods) of a 3-tier fat-tree, server group of
    /// a rail-optimized fabric: `pod0`, `pod1`...
    pub const POD: &str = "pod";
    /// Rail of a sub-node's switch in a rail-optimized fabric (per
    /// sub-node only: every server of a group is on every rail): `rail0`...
    pub const RAIL: &str = "rail";
    /// Number of sub-nodes the server carries.
    pub const SUB_NODES: &str = "sub-nodes";
}

/// Where a server's sub-nodes attach, as label values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerPlace {
    /// Index into `plan.servers`.
    pub server: usize,
    /// The `switch` value.
    pub switch: String,
    /// The `physical` value.
    pub physical: String,
    /// The `part` (BiGraph) or `tier` (fat-tree) value.
    pub part: String,
    /// The `pod` value of a 3-tier fat-tree.
    pub pod: Option<String>,
    /// Number of distinct switches the sub-nodes use.
    pub switches: usize,
}

/// Checks a label prefix: a DNS subdomain, with or without the final `/`.
/// Returns it with the `/`.
pub fn check_prefix(prefix: &str) -> Result<String> {
    let name = prefix.strip_suffix('/').unwrap_or(prefix);
    let problem = match dns_subdomain_fault(name) {
        None => None,
        Some(SubdomainFault::Length) if name.is_empty() => Some("is empty".to_string()),
        Some(SubdomainFault::Length) => Some(format!(
            "is {} characters, a DNS subdomain has at most {MAX_SUBDOMAIN}",
            name.len()
        )),
        Some(SubdomainFault::Part(part, fault)) => Some(match fault {
            LabelFault::Empty => "has an empty part between dots".into(),
            LabelFault::TooLong => {
                format!("has a part `{part}` longer than {MAX_LABEL} characters")
            }
            LabelFault::Char(c) => format!("has `{c}` in `{part}`"),
            LabelFault::Hyphen => format!("has a part `{part}` starting or ending with `-`"),
        }),
    };
    match problem {
        None => Ok(format!("{name}/")),
        Some(p) => Err(Error::parameter(
            "prefix",
            format!(
                "`{prefix}` {p}; a label prefix is a DNS subdomain (lowercase letters, digits, `-` and `.`, each dot-separated part starting and ending with a letter or digit, at most 63 characters) and a `/`, e.g. `{DEFAULT_PREFIX}`"
            ),
        )),
    }
}

/// A set of names as one label value: sorted, deduplicated, joined with `.`.
/// A value longer than 63 characters keeps its start and ends with a hash
/// of the whole, so distinct sets keep distinct values.
pub(crate) fn set_value<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let set: BTreeSet<&str> = names.into_iter().collect();
    let joined = set.into_iter().collect::<Vec<_>>().join(".");
    shorten(&joined)
}

/// Shortens a value to 63 characters with a hash suffix when needed.
fn shorten(value: &str) -> String {
    if value.len() <= MAX_LABEL {
        return value.to_string();
    }
    // FNV-1a: stable across platforms and releases, unlike std's hasher.
    let hash = crate::network::fnv1a64(value.as_bytes());
    let keep = MAX_LABEL - 9;
    let mut head: String = value.chars().take(keep).collect();
    while head.ends_with(|c: char| !c.is_ascii_alphanumeric()) {
        head.pop();
    }
    format!("{head}-{:08x}", hash as u32)
}

/// The tiers of a server's sub-nodes as one value, in tier order.
fn tier_value(tiers: &BTreeSet<Tier>) -> String {
    tiers
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// The key name of the part or tier: `part` on a BiGraph, `tier` on a
/// fat-tree.
pub(crate) fn part_key(plan: &Plan) -> &'static str {
    match plan.topology {
        Topology::BiGraph => key::PART,
        Topology::FatTree | Topology::RailOptimized | Topology::Hpn => key::TIER,
    }
}

/// Where every server's sub-nodes attach. Names that are not valid label
/// values are reported, each with the object and what to rename.
pub(crate) fn server_places(plan: &Plan) -> Result<Vec<ServerPlace>> {
    let switches = plan.switch_index();
    let mut problems = Vec::new();
    check_value(&mut problems, "plan", "name", &plan.name);
    // Only switches that carry sub-nodes appear in labels.
    let used: BTreeSet<&str> = plan
        .sub_node_list
        .iter()
        .map(|s| s.switch.as_str())
        .collect();
    for sw in plan
        .switch_list
        .iter()
        .filter(|s| used.contains(s.name.as_str()))
    {
        let object = format!("switch {}", sw.name);
        check_value(&mut problems, &object, "name", &sw.name);
        if sw.physical != sw.name {
            check_value(&mut problems, &object, "physical switch name", &sw.physical);
        }
    }
    let mut places = Vec::with_capacity(plan.servers.len());
    for (si, server) in plan.servers.iter().enumerate() {
        let object = format!("server {}", server.name);
        check_value(&mut problems, &object, "name", &server.name);
        let mut names = BTreeSet::new();
        let mut physical = BTreeSet::new();
        let mut tiers = BTreeSet::new();
        let mut pods = BTreeSet::new();
        for sn in sub_nodes(plan, server, &mut problems) {
            names.insert(sn.switch.as_str());
            tiers.insert(sn.part_or_tier);
            match switches.get(sn.switch.as_str()) {
                Some(&k) => {
                    let sw = &plan.switch_list[k];
                    physical.insert(sw.physical.as_str());
                    if let Some(pod) = sw.pod {
                        pods.insert(format!("pod{pod}"));
                    }
                }
                None => problems.push(Problem::at(
                    None,
                    format!("sub-node {}", sn.id),
                    format!(
                        "is attached to switch {}, which the plan does not have",
                        sn.switch
                    ),
                    "design the plan again, or correct its sub_node_list",
                )),
            }
            let object = format!("sub-node {}", sn.id);
            check_value(&mut problems, &object, "NIC name", &sn.nic);
        }
        if names.is_empty() {
            problems.push(Problem::at(
                None,
                object,
                "carries no sub-node",
                "remove the server from the plan, or design the plan again",
            ));
            continue;
        }
        places.push(ServerPlace {
            server: si,
            switches: names.len(),
            switch: set_value(names),
            physical: set_value(physical),
            part: tier_value(&tiers),
            pod: (!pods.is_empty()).then(|| set_value(pods.iter().map(String::as_str))),
        });
    }
    if problems.is_empty() {
        Ok(places)
    } else {
        Err(Error::Invalid {
            file: format!("plan {}", plan.name),
            what: "plan",
            problems,
        })
    }
}

/// The sub-nodes of a server, reporting indices out of range.
fn sub_nodes<'a>(
    plan: &'a Plan,
    server: &PlanServer,
    problems: &mut Vec<Problem>,
) -> Vec<&'a crate::plan::PlanSubNode> {
    let mut out = Vec::with_capacity(server.sub_nodes.len());
    for &i in &server.sub_nodes {
        match plan.sub_node_list.get(i) {
            Some(sn) => out.push(sn),
            None => problems.push(Problem::at(
                None,
                format!("server {}", server.name),
                format!(
                    "lists sub-node {i}, but the plan has {}",
                    plan.sub_node_list.len()
                ),
                "design the plan again, or correct its servers list",
            )),
        }
    }
    out
}

fn check_value(problems: &mut Vec<Problem>, object: &str, what: &str, value: &str) {
    // Kubernetes takes an empty value; a name in the plan is never empty.
    let problem = if value.is_empty() {
        Some("is empty".to_string())
    } else {
        label_value_problem(value)
    };
    if let Some(p) = problem {
        problems.push(Problem::at(
            None,
            object,
            format!("{what} `{value}` cannot be a Kubernetes label value: it {p}"),
            "rename it in the inventory (at most 63 letters, digits, `.`, `_` or `-`, beginning and ending with a letter or digit) and design the plan again",
        ));
    }
}

/// The node labels of every server of the plan, in plan order.
///
/// `prefix` is a DNS subdomain with or without the final `/` (e.g.
/// [`DEFAULT_PREFIX`]); it is checked first. Every value is a valid
/// Kubernetes label value, or the error names the object to rename.
pub fn node_labels(plan: &CheckedPlan, prefix: &str) -> Result<Vec<NodeLabels>> {
    let prefix = check_prefix(prefix)?;
    let places = server_places(plan)?;
    let part_key = part_key(plan);
    let index = plan.switch_index();
    let k = |name: &str| format!("{prefix}{name}");
    let mut out = Vec::with_capacity(places.len());
    for place in &places {
        let server = &plan.servers[place.server];
        let mut labels = BTreeMap::new();
        labels.insert(k(key::FABRIC), plan.name.clone());
        labels.insert(k(key::TOPOLOGY), plan.topology.as_str().to_string());
        labels.insert(k(key::SERVER), server.name.to_string());
        labels.insert(k(key::SWITCH), place.switch.clone());
        labels.insert(k(key::PHYSICAL), place.physical.clone());
        labels.insert(k(part_key), place.part.clone());
        if let Some(pod) = &place.pod {
            labels.insert(k(key::POD), pod.clone());
        }
        labels.insert(k(key::SUB_NODES), server.sub_nodes.len().to_string());
        for &i in &server.sub_nodes {
            let sn = &plan.sub_node_list[i];
            let sk = |what: &str| k(&format!("sn{}.{what}", sn.index));
            labels.insert(sk(key::SWITCH), sn.switch.to_string());
            if let Some(&w) = index.get(sn.switch.as_str()) {
                labels.insert(sk(key::PHYSICAL), plan.switch_list[w].physical.to_string());
            }
            labels.insert(sk(part_key), sn.part_or_tier.as_str().to_string());
            if let Some(rail) = index
                .get(sn.switch.as_str())
                .and_then(|&w| plan.switch_list[w].rail)
            {
                labels.insert(sk(key::RAIL), format!("rail{rail}"));
            }
            labels.insert(sk("nic"), sn.nic.to_string());
            if let Some(g) = sn.gpu_index {
                labels.insert(sk("gpu"), g.to_string());
            }
        }
        out.push(NodeLabels {
            server: server.name.to_string(),
            labels,
        });
    }
    Ok(out)
}

/// NVIDIA topograph 1.0's fabric tier keys: `fabric.topograph.run/tier-N`,
/// tier 0 the switch closest to the node (topograph's README and release
/// notes, August 2026; Kueue and KAI Scheduler read the same keys).
pub const TOPOGRAPH_TIER: &str = "fabric.topograph.run/tier-";
/// topograph 1.0's accelerator (NVLink) domain key.
pub const TOPOGRAPH_DOMAIN: &str = "accelerator.topograph.run/domain";

/// Node labels in topograph's vocabulary: `tier-0` is the server's switch
/// (or switch set), then each level of the tree outward (physical switch,
/// pod, fabric), so a Kueue or KAI `Topology` over these keys groups nodes
/// as the plan's own labels do; servers with NVLink get their NVLink
/// domain (the server itself). The values are those of [`node_labels`],
/// checked when the tree was built.
pub(crate) fn topograph_labels(plan: &Plan, tree: &super::tree::Tree) -> Vec<NodeLabels> {
    use super::tree::Level;
    tree.places
        .iter()
        .map(|place| {
            let server = &plan.servers[place.server];
            let mut labels = BTreeMap::new();
            for (tier, level) in tree.levels.iter().rev().enumerate() {
                let value = match level {
                    Level::Switch => place.switch.clone(),
                    Level::Physical => place.physical.clone(),
                    Level::Pod => place.pod.clone().unwrap_or_default(),
                    Level::Fabric => plan.name.clone(),
                };
                labels.insert(format!("{TOPOGRAPH_TIER}{tier}"), value);
            }
            if !server.nvlink.is_empty() {
                labels.insert(TOPOGRAPH_DOMAIN.to_string(), server.name.to_string());
            }
            NodeLabels {
                server: server.name.to_string(),
                labels,
            }
        })
        .collect()
}

/// `--to labels`: every server's node labels.
pub(super) fn write_labels(
    plan: &CheckedPlan,
    _: &super::tree::Tree,
    prefix: &str,
    _: super::KueueApi,
    out: &mut super::Export,
) -> Result<()> {
    out.nodes = Some(node_labels(plan, prefix)?);
    Ok(())
}

/// `--to topograph`: every server's node labels in topograph's keys.
pub(super) fn write_topograph(
    plan: &CheckedPlan,
    tree: &super::tree::Tree,
    _: &str,
    _: super::KueueApi,
    out: &mut super::Export,
) -> Result<()> {
    out.nodes = Some(topograph_labels(plan, tree));
    Ok(())
}

/// What topograph's vocabulary cannot say beyond what every export loses.
pub(super) fn topograph_lost(_: &Plan, tree: &super::tree::Tree) -> Vec<String> {
    let mut lost = Vec::new();
    lost.push(format!(
        "topograph's vocabulary has tiers only: the tiers are the tree's levels from the switch outward ({}), and a BiGraph part, a fat-tree tier or a rail has no key (the labels export keeps them)",
        tree.levels.iter().rev().map(|l| l.key()).collect::<Vec<_>>().join(", ")
    ));
    lost.push(
        "accelerator.topograph.run/domain is the server for servers with NVLink (every NVLink domain of a plan is one server); topograph's own value is the NVLink clique id, and sub-domain is not written".into(),
    );
    lost
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::export::k8s_names::is_valid_key;
    use crate::export::tests::{bigraph, fat_tree};

    fn get<'a>(n: &'a NodeLabels, name: &str) -> &'a str {
        n.labels
            .get(&format!("{DEFAULT_PREFIX}{name}"))
            .map_or("", String::as_str)
    }

    #[test]
    fn prefixes() {
        for (prefix, want) in [
            ("topology.eflops.io/", Some("topology.eflops.io/")),
            ("topology.eflops.io", Some("topology.eflops.io/")),
            ("a", Some("a/")),
            ("Topology.io/", None),
            ("topo_logy.io/", None),
            ("-a.io/", None),
            ("a..io/", None),
            ("/", None),
            ("", None),
        ] {
            assert_eq!(check_prefix(prefix).ok().as_deref(), want, "{prefix}");
        }
        let e = check_prefix("Topo.io").unwrap_err().to_string();
        assert!(e.starts_with("prefix: `Topo.io` has `T` in `Topo`;"), "{e}");
        assert!(check_prefix(&format!("{}.io", "a".repeat(64))).is_err());
        assert!(check_prefix(&"a.".repeat(127)).is_err());
    }

    #[test]
    fn long_sets_keep_distinct_hashed_values() {
        let a: Vec<String> = (0..12).map(|i| format!("switch{i:03}")).collect();
        let b: Vec<String> = (1..13).map(|i| format!("switch{i:03}")).collect();
        let va = set_value(a.iter().map(String::as_str));
        let vb = set_value(b.iter().map(String::as_str));
        assert_ne!(va, vb);
        for v in [&va, &vb] {
            assert_eq!(label_value_problem(v), None, "{v}");
            assert_eq!(v.len(), 63);
        }
        assert_eq!(set_value(["b", "a", "b"]), "a.b");
    }

    #[test]
    fn eflops_style_servers_sit_on_one_switch() {
        let plan = bigraph(4, 16, 4);
        let labels = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        assert_eq!(labels.len(), plan.servers.len());
        let first = &labels[0];
        assert_eq!(first.server, plan.servers[0].name);
        assert_eq!(get(first, "fabric"), plan.name);
        assert_eq!(get(first, "topology"), "bigraph");
        assert_eq!(get(first, "switch"), plan.sub_node_list[0].switch);
        assert_eq!(get(first, "part"), "upper");
        assert_eq!(get(first, "sub-nodes"), "4");
        assert_eq!(get(first, "sn3.switch"), plan.sub_node_list[3].switch);
        assert_eq!(get(first, "sn3.nic"), plan.sub_node_list[3].nic);
        assert_eq!(get(first, "sn3.part"), "upper");
        assert_eq!(get(first, "tier"), "");
        assert_eq!(get(first, "pod"), "");
    }

    #[test]
    fn servers_spread_over_both_parts_get_the_set() {
        let plan = bigraph(4, 16, 8);
        let labels = node_labels(&plan, "example.com").unwrap();
        let n = &labels[0];
        let k = |s: &str| n.labels[&format!("example.com/{s}")].clone();
        let (a, b) = (&plan.sub_node_list[0], &plan.sub_node_list[7]);
        assert_ne!(a.switch, b.switch);
        assert_eq!(
            k("switch"),
            set_value([a.switch.as_str(), b.switch.as_str()])
        );
        assert_eq!(k("part"), "upper.lower");
        assert_eq!(k("sn0.part"), "upper");
        assert_eq!(k("sn7.part"), "lower");
        assert_eq!(k("sn7.switch"), b.switch);
        // No two servers share a switch set here, so no label says they do.
        let sets: BTreeSet<String> = labels
            .iter()
            .map(|l| l.labels["example.com/switch"].clone())
            .collect();
        assert_eq!(sets.len(), labels.len());
    }

    #[test]
    fn fat_trees_label_tier_and_pod() {
        let plan = fat_tree("k=8");
        let labels = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        let n = &labels[0];
        assert_eq!(get(n, "tier"), "edge");
        assert_eq!(get(n, "sn0.tier"), "edge");
        assert_eq!(get(n, "pod"), "pod0");
        assert_eq!(get(n, "part"), "");
        let plan = fat_tree("tiers=2,sub-nodes=64,ports=16");
        let labels = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        assert_eq!(get(&labels[0], "tier"), "leaf");
        assert_eq!(get(&labels[0], "pod"), "");
    }

    #[test]
    fn bad_names_are_named() {
        let mut plan = bigraph(4, 16, 4).into_plan();
        plan.servers[1].name = "node 02".into();
        plan.sub_node_list[0].nic = "x".repeat(70).into();
        let plan = CheckedPlan::unchecked_for_tests(plan);
        let e = node_labels(&plan, DEFAULT_PREFIX).unwrap_err();
        assert!(e.is_bad_input());
        let text = e.to_string();
        assert!(
            text.contains(
                "server node 02: name `node 02` cannot be a Kubernetes label value: it has ` `"
            ),
            "{text}"
        );
        assert!(text.contains("is 70 characters"), "{text}");
        assert!(text.contains("rename it in the inventory"), "{text}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any plan the designer makes gives labels Kubernetes accepts, and
        /// every sub-node's attachment is in its server's labels.
        #[test]
        fn labels_of_any_plan_are_valid(
            m_log in 0u32..4,
            n_log in 2u32..6,
            per_server_log in 0u32..4,
            prefix in "[a-z][a-z0-9]{0,8}(\\.[a-z][a-z0-9-]{0,6}[a-z0-9]){0,2}",
        ) {
            let (m, n) = (1usize << m_log, 1usize << n_log);
            prop_assume!(m <= n / 2);
            let per_server = 1usize << per_server_log;
            let sh = crate::design::shorthand::Shorthand { sub_nodes_per_server: Some(per_server), ..Default::default() };
            let Ok((inv, opts)) = crate::design::shorthand::bigraph(m, n, &sh) else { return Ok(()) };
            let Ok(plan) = crate::design::design(&inv, &opts) else { return Ok(()) };
            let labels = node_labels(&plan, &prefix).unwrap();
            prop_assert_eq!(labels.len(), plan.servers.len());
            let with = |name: &str| format!("{prefix}/{name}");
            for (node, server) in labels.iter().zip(&plan.servers) {
                for (k, v) in &node.labels {
                    prop_assert!(is_valid_key(k), "key {}", k);
                    prop_assert!(k.starts_with(&with("")));
                    prop_assert_eq!(label_value_problem(v), None, "{}={}", k, v);
                }
                for &i in &server.sub_nodes {
                    let sn = &plan.sub_node_list[i];
                    let key = with(&format!("sn{}.switch", sn.index));
                    prop_assert_eq!(node.labels.get(&key).map(String::as_str), Some(&*sn.switch));
                    let set = &node.labels[&with("switch")];
                    prop_assert!(set.contains(&*sn.switch) || set.len() == 63);
                }
            }
        }
    }
}
