use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::Tier;

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
        let mut servers: Vec<String> = plan.servers.iter().map(|s| s.name.to_string()).collect();
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
    for &t in Target::ALL {
        let a = export(&plan, t, DEFAULT_PREFIX).unwrap().text(t).unwrap();
        let b = export(&plan, t, DEFAULT_PREFIX).unwrap().text(t).unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("# "), "{a}");
        assert!(a.contains("# - upper-lower adjacency"), "{a}");
    }
}

#[test]
fn bad_prefix_fails_every_target() {
    for &t in Target::ALL {
        let e = export(&eflops(), t, "Bad_Prefix/").unwrap_err();
        assert!(e.to_string().starts_with("prefix: `Bad_Prefix/`"), "{e}");
    }
}

#[test]
fn kueue_objects_are_v1beta2_unless_asked() {
    let plan = eflops();
    let current = export(&plan, Target::Kueue, DEFAULT_PREFIX).unwrap();
    for o in current.objects.as_ref().unwrap() {
        assert_eq!(o["apiVersion"], "kueue.x-k8s.io/v1beta2", "{o}");
    }
    assert!(current.notes.is_empty());
    let old = super::export_with(
        &plan,
        Target::Kueue,
        DEFAULT_PREFIX,
        super::KueueApi::V1beta1,
    )
    .unwrap();
    for o in old.objects.as_ref().unwrap() {
        assert_eq!(o["apiVersion"], "kueue.x-k8s.io/v1beta1", "{o}");
    }
    assert_eq!(old.notes.len(), 1);
    assert!(
        old.text(Target::Kueue)
            .unwrap()
            .contains("# Note: kueue.x-k8s.io/v1beta1 is deprecated")
    );
    // The objects differ in their version only.
    let strip = |e: &super::Export| -> Vec<serde_json::Value> {
        e.objects
            .clone()
            .unwrap()
            .into_iter()
            .map(|mut o| {
                o["apiVersion"] = serde_json::Value::Null;
                o
            })
            .collect()
    };
    assert_eq!(strip(&current), strip(&old));
    // Other targets ignore the Kueue version.
    let v = super::export_with(
        &plan,
        Target::Volcano,
        DEFAULT_PREFIX,
        super::KueueApi::V1beta1,
    )
    .unwrap();
    assert!(v.notes.is_empty());
}

fn hpn() -> CheckedPlan {
    let (inv, opts) =
        shorthand::hpn("sub-nodes=64,rails=4,ports=16", &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

/// topology.yaml as topology.yaml(5) of Slurm 25.05 describes it: a list
/// whose items start with `topology`, exactly one `cluster_default: true`,
/// each item exactly one of tree/block/flat; tree switches unique, at most
/// 64 characters, leaves with nodes and the rest with children that exist;
/// successive block sizes power-of-two multiples, every block at least the
/// base size; every server in the cluster default.
#[test]
fn slurm_yaml_follows_the_man_page() {
    let mut all = plans();
    all.push(hpn());
    for plan in all {
        let e = export(&plan, Target::SlurmYaml, DEFAULT_PREFIX).unwrap();
        let text = e.text(Target::SlurmYaml).unwrap();
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let items: Vec<&str> = body.lines().filter(|l| l.starts_with("- ")).collect();
        assert!(
            items.iter().all(|l| l.starts_with("- topology: ")),
            "{body}"
        );
        let v: serde_json::Value = serde_norway::from_str(&body).unwrap();
        let list = v.as_array().unwrap();
        assert_eq!(list.len(), items.len());
        let defaults = list.iter().filter(|t| t["cluster_default"] == true).count();
        assert_eq!(defaults, 1, "{}", plan.name);
        let names: BTreeSet<&str> = list
            .iter()
            .map(|t| t["topology"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), list.len(), "unique topology names");
        for t in list {
            let o = t.as_object().unwrap();
            let kinds = ["tree", "block", "flat"]
                .iter()
                .filter(|k| o.contains_key(**k))
                .count();
            assert_eq!(kinds, 1, "{t}");
            if let Some(tree) = o.get("tree") {
                let switches = tree["switches"].as_array().unwrap();
                let names: BTreeSet<&str> = switches
                    .iter()
                    .map(|s| s["switch"].as_str().unwrap())
                    .collect();
                assert_eq!(names.len(), switches.len());
                for s in switches {
                    assert!(s["switch"].as_str().unwrap().len() <= 64);
                    let leaf = s.get("nodes").is_some();
                    assert_ne!(leaf, s.get("children").is_some(), "{s}");
                    if let Some(c) = s["children"].as_str() {
                        assert!(c.split(',').all(|c| names.contains(c)), "{c}");
                    }
                }
            }
            if let Some(block) = o.get("block") {
                let sizes: Vec<u64> = block["block_sizes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_u64().unwrap())
                    .collect();
                for w in sizes.windows(2) {
                    assert!(
                        w[1] % w[0] == 0 && (w[1] / w[0]).is_power_of_two(),
                        "{sizes:?}"
                    );
                }
                for b in block["blocks"].as_array().unwrap() {
                    let n = b["nodes"].as_str().unwrap().split(',').count() as u64;
                    assert!(n >= sizes[0], "{b}");
                }
            }
        }
        let default = list.iter().find(|t| t["cluster_default"] == true).unwrap();
        let mut nodes = BTreeSet::new();
        for s in default["tree"]["switches"].as_array().unwrap() {
            if let Some(n) = s["nodes"].as_str() {
                nodes.extend(n.split(','));
            }
        }
        let servers: BTreeSet<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(nodes, servers, "{}", plan.name);
        // The tree topology is the slurm-tree form.
        let conf = export(&plan, Target::SlurmTree, DEFAULT_PREFIX)
            .unwrap()
            .topology_conf
            .unwrap();
        assert_eq!(
            conf.lines()
                .filter(|l| l.starts_with("SwitchName="))
                .count(),
            default["tree"]["switches"].as_array().unwrap().len()
        );
    }
}

/// One tree per BiGraph part and per HPN plane, each holding only that
/// part's or plane's switches.
#[test]
fn slurm_yaml_has_a_tree_per_part_and_plane() {
    let plan = eflops();
    let e = export(&plan, Target::SlurmYaml, DEFAULT_PREFIX).unwrap();
    let t = e.topologies.unwrap();
    let names: Vec<&str> = t.iter().map(|t| t.topology.as_str()).collect();
    assert_eq!(
        names,
        [
            "eflops-4x16",
            "eflops-4x16-block",
            "eflops-4x16-upper",
            "eflops-4x16-lower"
        ]
    );
    let switches_of = |topology: &YamlTopology| -> BTreeSet<String> {
        match &topology.form {
            YamlForm::Tree { switches } => switches
                .iter()
                .filter(|s| s.nodes.is_some())
                .flat_map(|s| s.switch.split('.').map(str::to_string).collect::<Vec<_>>())
                .collect(),
            YamlForm::Block { .. } => BTreeSet::new(),
        }
    };
    for (topology, tier) in [(&t[2], Tier::Upper), (&t[3], Tier::Lower)] {
        let leaves = switches_of(topology);
        assert!(!leaves.is_empty());
        for name in &leaves {
            let sw = plan.switch_list.iter().find(|s| &s.name == name).unwrap();
            assert_eq!(sw.part_or_tier, tier, "{name}");
        }
    }
    let plan = hpn();
    let e = export(&plan, Target::SlurmYaml, DEFAULT_PREFIX).unwrap();
    let t = e.topologies.unwrap();
    let a = t.iter().find(|t| t.topology.ends_with("-plane-a")).unwrap();
    let b = t.iter().find(|t| t.topology.ends_with("-plane-b")).unwrap();
    let plane = |name: &str| {
        plan.switch_list
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .plane
    };
    assert!(
        switches_of(a).iter().all(|s| plane(s) == Some(0)),
        "{:?}",
        switches_of(a)
    );
    assert!(
        switches_of(b).iter().all(|s| plane(s) == Some(1)),
        "{:?}",
        switches_of(b)
    );
    assert!(
        !e.lost
            .iter()
            .any(|l| l.starts_with("HPN's plane B is not carried"))
    );
}

/// topograph's tiers are the tree's levels from the switch outward, with
/// the same values as our own labels.
#[test]
fn topograph_tiers_match_our_labels() {
    for plan in plans() {
        let ours = node_labels(&plan, DEFAULT_PREFIX).unwrap();
        let e = export(&plan, Target::Topograph, DEFAULT_PREFIX).unwrap();
        assert_eq!(e.prefix, "");
        let theirs = e.nodes.unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o.server, t.server);
            let switch = &o.labels[&format!("{DEFAULT_PREFIX}switch")];
            assert_eq!(&t.labels["fabric.topograph.run/tier-0"], switch);
            let top = t
                .labels
                .keys()
                .filter(|k| k.starts_with("fabric.topograph.run/tier-"))
                .count();
            assert_eq!(
                &t.labels[&format!("fabric.topograph.run/tier-{}", top - 1)],
                &plan.name
            );
            for v in t.labels.values() {
                assert_eq!(label_value_problem(v), None, "{v}");
            }
            if let Some(pod) = o.labels.get(&format!("{DEFAULT_PREFIX}pod")) {
                assert!(t.labels.values().any(|v| v == pod));
            }
        }
    }
}
