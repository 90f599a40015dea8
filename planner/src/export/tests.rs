use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};

pub(super) fn bigraph(m: usize, n: usize, per_server: usize) -> CheckedPlan {
    let sh = Shorthand {
        sub_nodes_per_server: Some(per_server),
        ..Shorthand::default()
    };
    let (inv, opts) = shorthand::bigraph(m, n, &sh).unwrap();
    design(&inv, &opts).unwrap()
}

pub(super) fn fat_tree(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn eflops() -> CheckedPlan {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/eflops-4x16.plan.json"
    ))
    .unwrap();
    CheckedPlan::load(&text, "eflops-4x16.plan.json").unwrap()
}

fn plans() -> Vec<CheckedPlan> {
    vec![
        eflops(),
        bigraph(4, 16, 8),
        fat_tree("k=8"),
        fat_tree("tiers=2,sub-nodes=64,ports=16"),
    ]
}

/// Every level of the Kueue topology is a label of every node, and the
/// last is the host name.
#[test]
fn kueue_levels_are_the_labels() {
    for plan in plans() {
        let e = export(&plan, Target::Kueue, DEFAULT_PREFIX).unwrap();
        let objects = e.objects.unwrap();
        assert_eq!(objects[0]["kind"], "Topology");
        assert_eq!(objects[1]["kind"], "ResourceFlavor");
        assert_eq!(
            objects[1]["spec"]["topologyName"],
            objects[0]["metadata"]["name"]
        );
        let levels: Vec<String> = objects[0]["spec"]["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["nodeLabel"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(levels.last().unwrap(), "kubernetes.io/hostname");
        assert!(levels.len() <= 8);
        let labels = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        for node in &labels {
            for l in &levels[..levels.len() - 1] {
                assert!(node.labels.contains_key(l), "{} lacks {l}", node.server);
            }
        }
    }
}

#[test]
fn kueue_levels_follow_the_plan_shape() {
    let levels = |plan: &CheckedPlan| -> Vec<String> {
        let e = export(plan, Target::Kueue, "x.io").unwrap();
        e.objects.unwrap()[0]["spec"]["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["nodeLabel"].as_str().unwrap().to_string())
            .collect()
    };
    let host = "kubernetes.io/hostname";
    assert_eq!(
        levels(&eflops()),
        ["x.io/fabric", "x.io/physical", "x.io/switch", host]
    );
    assert_eq!(
        levels(&fat_tree("k=8")),
        ["x.io/fabric", "x.io/pod", "x.io/switch", host]
    );
    assert_eq!(
        levels(&bigraph(4, 16, 4)),
        ["x.io/fabric", "x.io/switch", host]
    );
}

/// The tier-1 hypernodes select every server exactly once, by the labels
/// the server carries; every member hypernode exists, and tiers count up to
/// one fabric.
#[test]
fn volcano_hypernodes_cover_every_server_once() {
    for plan in plans() {
        let e = export(&plan, Target::Volcano, DEFAULT_PREFIX).unwrap();
        let objects = e.objects.unwrap();
        let labels = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        let names: BTreeSet<&str> = objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), objects.len(), "names are unique");
        let mut selected = BTreeMap::new();
        let top = objects
            .iter()
            .map(|o| o["spec"]["tier"].as_u64().unwrap())
            .max()
            .unwrap();
        assert_eq!(
            objects.iter().filter(|o| o["spec"]["tier"] == top).count(),
            1,
            "one fabric"
        );
        for o in &objects {
            assert_eq!(o["kind"], "HyperNode");
            for m in o["spec"]["members"].as_array().unwrap() {
                if m["type"] == "Node" {
                    assert_eq!(o["spec"]["tier"], 1);
                    let want = m["selector"]["labelMatch"]["matchLabels"]
                        .as_object()
                        .unwrap();
                    for n in &labels {
                        if want
                            .iter()
                            .all(|(k, v)| n.labels.get(k).map(String::as_str) == v.as_str())
                        {
                            *selected.entry(n.server.clone()).or_insert(0) += 1;
                        }
                    }
                } else {
                    let name = m["selector"]["exactMatch"]["name"].as_str().unwrap();
                    assert!(names.contains(name), "{name}");
                }
            }
        }
        assert_eq!(selected.len(), plan.servers.len(), "{}", plan.name);
        assert!(selected.values().all(|&c| c == 1));
    }
}

/// Every server is on exactly one leaf switch, and every switch a line
/// names is defined.
#[test]
fn slurm_tree_is_a_tree() {
    for plan in plans() {
        let e = export(&plan, Target::SlurmTree, DEFAULT_PREFIX).unwrap();
        let conf = e.topology_conf.unwrap();
        let mut defined = BTreeSet::new();
        let mut referenced = Vec::new();
        let mut nodes = Vec::new();
        for line in conf.lines().filter(|l| !l.starts_with('#')) {
            let (name, rest) = line.split_once(' ').unwrap();
            assert!(defined.insert(name.strip_prefix("SwitchName=").unwrap().to_string()));
            if let Some(n) = rest.strip_prefix("Nodes=") {
                nodes.extend(n.split(',').map(String::from));
            } else {
                let s = rest.strip_prefix("Switches=").unwrap();
                referenced.extend(s.split(',').map(String::from));
            }
        }
        nodes.sort();
        let mut servers: Vec<String> = plan.servers.iter().map(|s| s.name.clone()).collect();
        servers.sort();
        assert_eq!(nodes, servers);
        for r in &referenced {
            assert!(defined.contains(r), "{r}");
        }
        // All but the fabric are some switch's child.
        assert_eq!(referenced.len() + 1, defined.len());
    }
}

#[test]
fn slurm_blocks() {
    let e = export(&eflops(), Target::SlurmBlock, DEFAULT_PREFIX).unwrap();
    let conf = e.topology_conf.unwrap();
    assert!(
        conf.contains("\nBlockName=sw01 Nodes=node01,node02\n"),
        "{conf}"
    );
    assert!(conf.ends_with("BlockSizes=2,4,8,16\n"), "{conf}");
    let e = export(&fat_tree("k=8"), Target::SlurmBlock, DEFAULT_PREFIX).unwrap();
    let conf = e.topology_conf.unwrap();
    assert_eq!(
        conf.lines().filter(|l| l.starts_with("BlockName=")).count(),
        8
    );
}

#[test]
fn lost_says_what_a_tree_cannot() {
    let e = export(&eflops(), Target::Kueue, DEFAULT_PREFIX).unwrap();
    assert!(e.lost[0].starts_with("upper-lower adjacency of the BiGraph is not expressible"));
    assert!(e.lost.iter().any(|l| l.contains("rank table")));
    let e = export(&bigraph(4, 16, 8), Target::SlurmTree, DEFAULT_PREFIX).unwrap();
    assert!(
        e.lost
            .iter()
            .any(|l| l.starts_with("8 servers have sub-nodes on more than one switch")),
        "{:?}",
        e.lost
    );
    let e = export(&fat_tree("k=8"), Target::Volcano, DEFAULT_PREFIX).unwrap();
    assert!(!e.lost.iter().any(|l| l.contains("adjacency")));
    assert!(
        e.lost.iter().any(|l| l.contains("aggregation")),
        "{:?}",
        e.lost
    );
}

#[test]
fn exports_are_deterministic_and_text_is_commented() {
    let plan = eflops();
    for t in Target::ALL {
        let a = export(&plan, t, DEFAULT_PREFIX).unwrap().text(t).unwrap();
        let b = export(&plan, t, DEFAULT_PREFIX).unwrap().text(t).unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("# "), "{a}");
        assert!(a.contains("# - upper-lower adjacency"), "{a}");
    }
}

#[test]
fn bad_prefix_fails_every_target() {
    for t in Target::ALL {
        let e = export(&eflops(), t, "Bad_Prefix/").unwrap_err();
        assert!(e.to_string().starts_with("prefix: `Bad_Prefix/`"), "{e}");
    }
}
