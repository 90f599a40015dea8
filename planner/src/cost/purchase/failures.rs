//! `purchase --failures`: each candidate's worst single failure, proven on
//! the plan of its shape, and the floor that excludes candidates.
//!
//! A candidate is a shape from the integer programs, not a plan; its
//! failures are proven on the plan `design` builds for that shape, full (at
//! the shape's capacity; one switch as a leaf with every sub-node and its
//! other ports free), from a synthetic inventory of the candidate's
//! switch model and link speed (the shorthands of `planner design`). The
//! plan is checked to be the shape (its switches per tier and its
//! sub-nodes). A BiGraph of boxes split in two is designed as EFLOPS's
//! VLAN halves ([`shorthand::split_in_two`]), so a box fails whole; a
//! leaf-spine whose spines are of another model than its leaves gets a
//! switch template per tier ([`shorthand::with_spine_model`]). A
//! candidate whose shape `design` does not build as such (a box split
//! into more than two virtual switches, or tiers `design` sizes
//! otherwise) is not proven, and with a failure floor it is excluded for
//! that reason rather than chosen unproven.

use serde::Serialize;

use crate::algorithm::Algorithm;
use crate::checked::CheckedPlan;
use crate::design::{design, shorthand};
use crate::failures::{WorstFailure, worst_single_failure};
use crate::plan::Tier;
use crate::ranks::Engine;

/// The fabric of a candidate, as the programs chose it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// One switch of `ports` ports carries every sub-node.
    OneSwitch { ports: u32 },
    /// A leaf-spine (`rails` 1), rail-optimized fabric (`rails` above 1)
    /// or its HPN form (`planes` 2).
    LeafSpine {
        leaves: u64,
        spines: u64,
        down: u64,
        up: u64,
        leaf_ports: u32,
        spine_ports: u32,
        rails: u64,
        planes: u64,
    },
    /// A BiGraph `m x n` of `ports`-port (virtual) switches, `split` per
    /// box.
    BiGraph {
        m: u64,
        n: u64,
        ports: u32,
        split: u64,
    },
}

/// What weighs failures in a purchase (`--failures`).
#[derive(Debug, Clone, PartialEq)]
pub struct FailureRule {
    /// The most sub-nodes one failure may cut off (`--max-failure-loss`);
    /// `None`: no limit.
    pub max_sub_nodes_lost: Option<u64>,
}

/// A candidate the failure rule excluded, cheapest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    /// The design, as `chosen.design` names it.
    pub design: String,
    /// Its total cost.
    pub total_cost: f64,
    /// Why: what its worst single failure does, or why it was not proven.
    pub reason: String,
}

/// The plan of `shape` with `gbps` links, or why there is none that is
/// the shape.
pub(crate) fn plan_of(shape: &Shape, gbps: u32) -> Result<CheckedPlan, String> {
    let mut sh = shorthand::Shorthand {
        link_gbps: gbps,
        ..shorthand::Shorthand::default()
    };
    let sub_nodes = match *shape {
        Shape::OneSwitch { ports } => u64::from(ports),
        Shape::LeafSpine { leaves, down, .. } => leaves * down,
        Shape::BiGraph { m, n, .. } => m * n,
    };
    let (inv, opts, want) = match *shape {
        Shape::BiGraph { split, .. } if split > 2 => {
            return Err(format!(
                "a box split into {split} virtual switches is not designed: an inventory splits a switch into two VLAN halves"
            ));
        }
        Shape::BiGraph { m, n, ports, split } => {
            sh.switch_ports = Some(ports);
            let (mut inv, opts) =
                shorthand::bigraph(m as usize, n as usize, &sh).map_err(|e| e.to_string())?;
            // A box of two halves fails whole: `single_failures` fails
            // both at once.
            if split == 2 {
                inv = shorthand::split_in_two(inv).map_err(|e| e.to_string())?;
            }
            (inv, opts, vec![(None, n as usize)])
        }
        Shape::OneSwitch { ports } => {
            // A 2-tier fat-tree of one leaf: `design` keeps half of a
            // leaf's ports for uplinks, so the leaf is given twice the
            // ports, which it leaves free (one switch needs no spine).
            // What a failure does does not depend on free ports.
            let spec = shorthand::FatTreeSpec {
                tiers: 2,
                sub_nodes: Some(ports as usize),
                ports: Some(ports.saturating_mul(2)),
                oversubscription: 1.0,
            };
            let (inv, opts) = shorthand::fat_tree_of(&spec, &sh).map_err(|e| e.to_string())?;
            (
                inv,
                opts,
                vec![(Some(Tier::Leaf), 1), (Some(Tier::Spine), 0)],
            )
        }
        Shape::LeafSpine {
            leaves,
            spines,
            down,
            up,
            leaf_ports,
            spine_ports,
            rails,
            planes,
        } => {
            let sub_nodes = sub_nodes as usize;
            let oversubscription = (down as f64 / up.max(1) as f64).max(1.0);
            let (inv, opts) = if rails > 1 {
                let spec = shorthand::RailSpec {
                    sub_nodes,
                    rails: rails as usize,
                    ports: Some(leaf_ports),
                    oversubscription,
                };
                let (inv, opts) =
                    shorthand::rail_optimized_of(&spec, &sh).map_err(|e| e.to_string())?;
                if planes == 2 {
                    shorthand::as_hpn(inv, opts)
                } else {
                    (inv, opts)
                }
            } else {
                let spec = shorthand::FatTreeSpec {
                    tiers: 2,
                    sub_nodes: Some(sub_nodes),
                    ports: Some(leaf_ports),
                    oversubscription,
                };
                shorthand::fat_tree_of(&spec, &sh).map_err(|e| e.to_string())?
            };
            // Spines of another model than the leaves: the inventory an
            // architect would write, a `[[switch]]` table per tier.
            let inv = if spine_ports == leaf_ports {
                inv
            } else {
                shorthand::with_spine_model(inv, spine_ports).map_err(|e| e.to_string())?
            };
            let k = planes as usize;
            (
                inv,
                opts,
                vec![
                    (Some(Tier::Leaf), k * leaves as usize),
                    (Some(Tier::Spine), k * spines as usize),
                ],
            )
        }
    };
    let plan = design(&inv, &opts).map_err(|e| e.to_string())?;
    if plan.sub_node_list.len() as u64 != sub_nodes {
        return Err(format!(
            "design builds {} sub-nodes for this shape, not {sub_nodes}",
            plan.sub_node_list.len()
        ));
    }
    for (tier, count) in want {
        let got = (plan.switch_list.iter())
            .filter(|s| tier.is_none_or(|t| s.part_or_tier == t))
            .count();
        if got != count {
            return Err(format!(
                "design builds {got} {} for this shape, not {count}",
                tier.map_or("switches", |t| t.as_str())
            ));
        }
    }
    Ok(plan)
}

/// The worst single failure of `shape` (HDRM table searched on what it
/// leaves, with the probe's schedule, as `compare --failures`), or why it
/// could not be proven.
pub(crate) fn worst_of(shape: &Shape, gbps: u32) -> Result<WorstFailure, String> {
    let plan = plan_of(shape, gbps)?;
    match worst_single_failure(&plan, Algorithm::Hdrm, Engine::Probe, true) {
        Ok(Some(w)) => Ok(w),
        Ok(None) => Err("the plan has no switch to fail".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Why `w` breaks `rule`, if it does: a failure that cuts the fabric or
/// breaks the QoS proof always does; one that cuts off more sub-nodes
/// than the rule allows too.
pub(crate) fn breaks(rule: &FailureRule, w: &WorstFailure) -> Option<String> {
    if w.cuts_fabric() {
        return Some(format!(
            "its worst single failure cuts the fabric: {}",
            w.describe()
        ));
    }
    if !w.qos_ok {
        return Some(format!(
            "its worst single failure breaks the QoS proof: {}",
            w.describe()
        ));
    }
    match rule.max_sub_nodes_lost {
        Some(most) if w.sub_nodes_lost as u64 > most => Some(format!(
            "its worst single failure cuts off {} sub-nodes, more than the {most} a failure may cut off (max-failure-loss): {}",
            w.sub_nodes_lost,
            w.describe()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{Catalog, Request, Want, purchase};

    /// A catalog of 100G parts with switches of `ports` (unsplit).
    fn catalog(switches: &[(u32, u32)]) -> Catalog {
        let mut text = String::from(
            "[[nic]]\nname = \"n\"\ngbps = 100\nprice = 500\n\n[[cable]]\nname = \"d\"\nkind = \"dac\"\ngbps = 100\nreach_m = 3\nprice = 50\n\n[[cable]]\nname = \"a\"\nkind = \"aoc\"\ngbps = 100\nreach_m = 30\nprice = 400\n",
        );
        for (i, (ports, price)) in switches.iter().enumerate() {
            text.push_str(&format!(
                "\n[[switch]]\nname = \"s{i}\"\nports = {ports}\ngbps = 100\nprice = {price}\nsplit = 1\n"
            ));
        }
        Catalog::from_toml(&text, "c.toml").unwrap()
    }

    fn request(gpus: u64, topology: Want, failures: Option<FailureRule>) -> Request {
        Request {
            gpus,
            growth: None,
            topology,
            budget: None,
            oversubscription: 1.0,
            min_bisection: 0.0,
            failures,
        }
    }

    /// The plan of each shape is that shape, and its worst failure is the
    /// one `worst_single_failure` finds on a plan designed by hand the
    /// same way: a BiGraph switch takes its M sub-nodes, a leaf its d,
    /// and a leaf-spine over one spine is cut by that spine.
    #[test]
    fn shapes_are_designed_as_themselves_and_proven() {
        let w = worst_of(
            &Shape::BiGraph {
                m: 4,
                n: 8,
                ports: 8,
                split: 1,
            },
            100,
        )
        .unwrap();
        assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (4, 0));
        assert!(w.qos_ok && w.failed[0].starts_with("switch:"));
        assert_eq!(w.scenarios, 8 + 16);

        let two_spines = Shape::LeafSpine {
            leaves: 4,
            spines: 2,
            down: 8,
            up: 8,
            leaf_ports: 16,
            spine_ports: 16,
            rails: 1,
            planes: 1,
        };
        let plan = plan_of(&two_spines, 100).unwrap();
        assert_eq!((plan.switch_list.len(), plan.sub_node_list.len()), (6, 32));
        let w = worst_of(&two_spines, 100).unwrap();
        assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (8, 0));

        // 2 leaves of 4 down and 4 up over one 8-port spine: that spine cuts them apart.
        let one_spine = Shape::LeafSpine {
            leaves: 2,
            spines: 1,
            down: 4,
            up: 4,
            leaf_ports: 8,
            spine_ports: 8,
            rails: 1,
            planes: 1,
        };
        let w = worst_of(&one_spine, 100).unwrap();
        assert!(w.cuts_fabric(), "{w:?}");
        assert!(
            breaks(
                &FailureRule {
                    max_sub_nodes_lost: None
                },
                &w
            )
            .unwrap()
            .contains("cuts the fabric")
        );

        // Boxes split in two: a box fails whole, both halves and their
        // 2 x 4 sub-nodes at once; the plan is the shape's.
        let bigraph = |split| Shape::BiGraph {
            m: 4,
            n: 8,
            ports: 8,
            split,
        };
        let plan = plan_of(&bigraph(2), 100).unwrap();
        let boxes: std::collections::BTreeSet<&str> = plan
            .switch_list
            .iter()
            .map(|s| s.physical.as_str())
            .collect();
        assert_eq!((plan.switch_list.len(), boxes.len()), (8, 4));
        let split = worst_of(&bigraph(2), 100).unwrap();
        assert_eq!(split.failed.len(), 2, "{split:?}");
        assert_eq!(split.sub_nodes_lost, 8, "{split:?}");
        assert!(!split.cuts_fabric() && split.qos_ok, "{split:?}");
        let whole = worst_of(&bigraph(1), 100).unwrap();
        assert_eq!((whole.failed.len(), whole.sub_nodes_lost), (1, 4));
        let four = worst_of(&bigraph(4), 100).unwrap_err();
        assert!(four.contains("split into 4 virtual switches"), "{four}");
    }

    /// Leaves of one model under spines of another are designed with a
    /// switch template per tier and proven: 4 leaves of 16 ports (8 down,
    /// 8 up) under one 32-port spine; a spine is the worst failure, and it
    /// cuts the fabric. A shape whose spine count `design` does not build
    /// is refused, not proven as something else.
    #[test]
    fn leaves_and_spines_of_two_models_are_proven() {
        let mixed = |spines| Shape::LeafSpine {
            leaves: 4,
            spines,
            down: 8,
            up: 8,
            leaf_ports: 16,
            spine_ports: 32,
            rails: 1,
            planes: 1,
        };
        let plan = plan_of(&mixed(1), 100).unwrap();
        let models: Vec<(&str, usize)> = ["16x100G switch", "32x100G switch"]
            .into_iter()
            .map(|m| {
                let n = (plan.switch_list.iter()).filter(|s| s.model == m).count();
                (m, n)
            })
            .collect();
        assert_eq!(models, [("16x100G switch", 4), ("32x100G switch", 1)]);
        let worst = worst_of(&mixed(1), 100).unwrap();
        assert!(worst.cuts_fabric(), "{worst:?}");
        let e = plan_of(&mixed(3), 100).unwrap_err();
        assert!(e.contains("design builds"), "{e}");
    }

    /// A shape `design` builds otherwise is refused, not proven as
    /// something else: 3 leaves of 8 sub-nodes where design puts 24
    /// sub-nodes on 2 spines it would take, but here with 3 spines.
    #[test]
    fn a_shape_design_builds_otherwise_is_not_proven() {
        let e = plan_of(
            &Shape::LeafSpine {
                leaves: 3,
                spines: 3,
                down: 8,
                up: 8,
                leaf_ports: 16,
                spine_ports: 16,
                rails: 1,
                planes: 1,
            },
            100,
        )
        .unwrap_err();
        assert!(e.contains("design builds"), "{e}");
    }

    /// `purchase --failures`: the chosen design is the cheapest that no
    /// single failure cuts; `--max-failure-loss` excludes designs whose
    /// switches carry more sub-nodes, naming them and why; without
    /// `--failures` the purchase is unchanged.
    #[test]
    fn purchase_weighs_the_worst_single_failure() {
        let c = catalog(&[(16, 1000), (32, 1500)]);
        let plain = purchase(&c, &request(64, Want::Any, None)).unwrap();
        assert!(plain.chosen.worst_failure.is_none() && !plain.failures_weighed);
        assert!(plain.excluded.is_empty());

        let rule = FailureRule {
            max_sub_nodes_lost: None,
        };
        let p = purchase(&c, &request(64, Want::Any, Some(rule))).unwrap();
        assert!(p.failures_weighed);
        let w = p
            .chosen
            .worst_failure
            .as_ref()
            .expect("the chosen design proven");
        assert!(!w.cuts_fabric() && w.qos_ok, "{w:?}");
        assert_eq!(p.chosen.design, plain.chosen.design, "{:?}", p.excluded);

        // No more than 4 sub-nodes per failure: every design whose
        // switches carry more is excluded, cheapest first, with why.
        let strict = FailureRule {
            max_sub_nodes_lost: Some(4),
        };
        // The 16-port BiGraph 4x16 loses 4 sub-nodes per switch; the
        // cheaper leaf-spine of 32-port boxes, a leaf's 16: excluded first.
        let p = purchase(&c, &request(64, Want::Any, Some(strict))).unwrap();
        assert!(
            p.chosen.design.starts_with("BiGraph 4x16"),
            "{}",
            p.chosen.design
        );
        let w = p.chosen.worst_failure.as_ref().unwrap();
        assert_eq!(w.sub_nodes_lost, 4, "{w:?}");
        assert!(
            p.excluded
                .iter()
                .all(|e| e.total_cost <= p.chosen.total_cost + 1e-6)
        );
        assert!(
            p.excluded[0].reason.contains(
                "cuts off 16 sub-nodes, more than the 4 a failure may cut off (max-failure-loss): switch:sw01: 16 sub-nodes lost"
            ),
            "{:?}",
            p.excluded
        );
        let text = crate::cost::render_purchase(&p, &c, &request(64, Want::Any, None));
        assert!(text.contains("Excluded by their single failures"), "{text}");

        // One sub-node per failure is more than any fabric of these
        // switches gives: refused, naming the designs and why.
        let e = purchase(
            &c,
            &request(
                64,
                Want::Any,
                Some(FailureRule {
                    max_sub_nodes_lost: Some(0),
                }),
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("every design is excluded by its single failures"),
            "{e}"
        );
        assert!(
            e.contains("more than the 0 a failure may cut off (max-failure-loss)"),
            "{e}"
        );
    }
}
