//! Failure analysis tests: the EFLOPS, fat-tree and HPN plans, and the proof against the full computation.

use super::*;
use crate::design::{DesignOptions, bundled_inventory, design};
use crate::network::Network;
use crate::plan::Topology;

fn request(algorithm: Algorithm, scenarios: Vec<Vec<Avoid>>) -> FailureRequest {
    FailureRequest {
        algorithm,
        ranks: None,
        engine: Engine::Probe,
        seed: 0,
        scenarios,
    }
}

/// EFLOPS 4x16: a physical switch fails as a box, both VLAN halves at
/// once, and takes their 8 sub-nodes (and the job's ranks on them) with
/// it; a cable between two halves doubles the job
/// table's load, and a table searched on what is left is back at the
/// bound; the per-direction proof holds on every failed fabric.
#[test]
fn every_single_failure_of_the_eflops_plan() {
    let plan = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
    let mut seen = Vec::new();
    let r = analyse(&plan, &request(Algorithm::Hdrm, Vec::new()), |i, n, _| {
        seen.push((i, n));
    })
    .unwrap();
    assert_eq!(r.scenarios.len(), 8 + 64);
    assert_eq!(seen.len(), 72);
    assert_eq!(
        (r.job.ranks, r.job.worst_load, r.job.lower_bound),
        (64, 1, 1)
    );
    for s in &r.scenarios {
        assert!(s.qos_ok, "{:?}", s);
        assert_eq!(s.unreachable_pairs, 0, "{:?}", s);
        let best = s.best.as_ref().expect("a table on what is left");
        if s.failed[0].starts_with("switch:") {
            // Both halves of one box, upper then lower.
            let boxed = s.failed[0].trim_end_matches("-u");
            assert_eq!(s.failed, [s.failed[0].clone(), format!("{boxed}-l")]);
            assert_eq!((s.sub_nodes_lost, s.job_ranks_lost), (8, 8), "{:?}", s);
            assert_eq!(s.job_worst_load, None);
            assert_eq!(best.ranks, 56);
        } else {
            assert_eq!((s.sub_nodes_lost, s.job_ranks_lost), (0, 0), "{:?}", s);
            assert_eq!(s.job_worst_load, Some(2), "{:?}", s);
            assert_eq!((best.ranks, best.worst_load, best.lower_bound), (64, 1, 1));
        }
    }
    // Ties go to the first scenario: the first box.
    assert_eq!(r.worst, Some(0));
    let text = render_failures(&r);
    assert!(
        text.contains("Worst single case: switch:sw01-u, switch:sw01-l: 8 sub-nodes lost"),
        "{text}"
    );
}

/// Both spines of a leaf-spine down: the leaves are cut apart, no table
/// is searched, and that is the worst case.
#[test]
fn failing_every_spine_cuts_the_fabric() {
    let opts = DesignOptions {
        topology: Topology::FatTree,
        ..DesignOptions::default()
    };
    let plan = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
    let spines: Vec<Avoid> = plan
        .switch_list
        .iter()
        .filter(|s| s.part_or_tier == crate::plan::Tier::Spine)
        .map(|s| Avoid::Switch(s.name.to_string()))
        .collect();
    assert!(!spines.is_empty());
    let one = vec![spines[0].clone()];
    let r = analyse(
        &plan,
        &request(Algorithm::Hd, vec![one, spines.clone()]),
        |_, _, _| {},
    )
    .unwrap();
    let (first, all) = (&r.scenarios[0], &r.scenarios[1]);
    assert_eq!(first.unreachable_pairs, 0, "{first:?}");
    assert!(first.best.is_some());
    let leaves = plan.switch_list.len() - spines.len();
    assert_eq!(all.unreachable_pairs, leaves * (leaves - 1), "{all:?}");
    assert!(all.best.is_none());
    assert!(all.not_searched.as_deref().unwrap().contains("cut"));
    assert_eq!(r.worst, Some(1));
    assert!(render_failures(&r).contains("it cuts the fabric"));
}

fn worst_of(plan: &CheckedPlan) -> WorstFailure {
    worst_single_failure(plan, Algorithm::Hdrm, Engine::Probe, true)
        .unwrap()
        .expect("a plan with switches has single failures")
}

/// BiGraph 4x16 (EFLOPS): no single failure cuts it; a box (both VLAN
/// halves) takes its 8 sub-nodes, a cable none, so the worst is the
/// first box.
#[test]
fn worst_single_failure_of_a_bigraph() {
    let plan = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
    let w = worst_of(&plan);
    assert_eq!(w.failed, ["switch:sw01-u", "switch:sw01-l"]);
    assert_eq!(w.scenarios, 8 + 64);
    assert_eq!(
        (w.sub_nodes_lost, w.unreachable_pairs, w.qos_ok),
        (8, 0, true)
    );
    assert!(!w.cuts_fabric());
    let b = w.best.as_ref().unwrap();
    assert_eq!((b.ranks, b.worst_load, b.lower_bound), (56, 1, 1));
    assert_eq!(
        w.describe(),
        "switch:sw01-u, switch:sw01-l: 8 sub-nodes lost, QoS holds, best table load 1 (bound 1)"
    );
}

/// A leaf-spine of 4 leaves (16 sub-nodes each) and 2 spines: a spine
/// or a leaf-spine cable bundle leaves every leaf reachable, a leaf
/// takes its 16 sub-nodes: the worst is the first leaf; with one spine
/// (2 leaves), the spine cuts the two leaves apart (2 directed pairs).
#[test]
fn worst_single_failure_of_fat_trees() {
    let opts = DesignOptions {
        topology: Topology::FatTree,
        ..DesignOptions::default()
    };
    let plan = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
    let first_leaf = (plan.switch_list.iter())
        .find(|s| s.part_or_tier == crate::plan::Tier::Leaf)
        .unwrap();
    let w = worst_of(&plan);
    assert_eq!(w.failed, [format!("switch:{}", first_leaf.name)]);
    assert_eq!(w.scenarios, 6 + 4 * 2);
    assert_eq!(
        (w.sub_nodes_lost, w.unreachable_pairs, w.qos_ok),
        (16, 0, true)
    );

    let sh = crate::design::shorthand::Shorthand::default();
    let (inv, opts) =
        crate::design::shorthand::fat_tree("tiers=2,sub-nodes=32,ports=32", &sh).unwrap();
    let plan = design(&inv, &opts).unwrap();
    let spine = (plan.switch_list.iter())
        .find(|s| s.part_or_tier == crate::plan::Tier::Spine)
        .unwrap();
    let w = worst_of(&plan);
    assert_eq!(w.failed, [format!("switch:{}", spine.name)]);
    assert_eq!(w.scenarios, 3 + 2);
    assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (0, 2));
    assert!(w.cuts_fabric() && w.best.is_none());
    assert!(w.describe().contains("FABRIC CUT (2 switch pairs)"));
}

/// HPN, 2 planes of 2 rail ToRs under one aggregation switch each:
/// every NIC has a port in both planes, so no single failure cuts a
/// sub-node off; the plane-A aggregation switch cuts that plane's two
/// ToRs apart (2 directed pairs within the plane), the worst.
#[test]
fn worst_single_failure_of_hpn() {
    let sh = crate::design::shorthand::Shorthand::default();
    let (inv, opts) = crate::design::shorthand::hpn("sub-nodes=16,rails=2,ports=16", &sh).unwrap();
    let plan = design(&inv, &opts).unwrap();
    let agg = (plan.switch_list.iter())
        .find(|s| s.plane == Some(0) && s.part_or_tier == crate::plan::Tier::Spine)
        .unwrap();
    let w = worst_of(&plan);
    assert_eq!(w.failed, [format!("switch:{}", agg.name)]);
    assert_eq!(w.scenarios, 6 + 4);
    assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (0, 2));
}

/// What a failure does, computed from scratch as `planner failures` did
/// before [`Prover`]: the route model built again for the failure
/// ([`Network::avoiding`]) and `check-qos` run in full on the failed
/// fabric ([`crate::render::check_qos_failed`]).
fn from_scratch(plan: &CheckedPlan, failed: &[Avoid]) -> proof::Proof {
    let net = Network::avoiding(plan, plan.source(), failed).unwrap();
    let names: std::collections::HashSet<&str> = plan
        .sub_node_list
        .iter()
        .map(|sn| sn.switch.as_str())
        .collect();
    let carrying: Vec<bool> = (plan.switch_list.iter())
        .map(|s| names.contains(s.name.as_str()))
        .collect();
    let (lost, unreachable) = proof::cut(plan, &net, &carrying, None);
    let qos = crate::render::check_qos_failed(plan, &crate::render::HostMarking::default(), failed);
    proof::Proof {
        lost,
        unreachable,
        qos_ok: qos.ok,
        qos_findings: (qos.findings.iter())
            .map(|f| format!("{}: {}", f.kind, f.object))
            .collect(),
    }
}

/// Every single failure of `plan`, and pairs of them (every `step`-th
/// pair of switches or cables), proven by [`Prover`] and from scratch:
/// the same sub-nodes lost, the same cut pairs, the same QoS verdict and
/// findings. Returns how many scenarios the QoS shortcut proved without
/// the full check, and how many were compared.
fn prover_agrees(plan: &CheckedPlan, step: usize) -> (usize, usize) {
    let prover = Prover::new(plan).unwrap();
    let singles = single_failures(plan).unwrap();
    let mut scenarios = singles.clone();
    let flat: Vec<Avoid> = singles.into_iter().flatten().collect();
    let mut k = 0;
    for (i, a) in flat.iter().enumerate() {
        for b in &flat[i + 1..] {
            if k % step == 0 {
                scenarios.push(vec![a.clone(), b.clone()]);
            }
            k += 1;
        }
    }
    let mut quick = 0;
    for failed in &scenarios {
        let fast = prover.prove(failed).unwrap();
        assert_eq!(
            fast,
            from_scratch(plan, failed),
            "{failed:?} on {}",
            plan.name
        );
        let net = Network::avoiding(plan, plan.source(), failed).unwrap();
        if !prover.qos.check(failed, &net).full_check {
            quick += 1;
        }
    }
    (quick, scenarios.len())
}

fn shorthand_plan(kind: &str, spec: &str) -> CheckedPlan {
    use crate::design::shorthand as sh;
    let s = sh::Shorthand::default();
    let (inv, opts) = match kind {
        "fat-tree" => sh::fat_tree(spec, &s),
        "rail" => sh::rail_optimized(spec, &s),
        "hpn" => sh::hpn(spec, &s),
        _ => {
            let (m, n) = sh::parse_bigraph(spec).unwrap();
            sh::bigraph(m, n, &s)
        }
    }
    .unwrap();
    design(&inv, &opts).unwrap()
}

/// The prover (the whole fabric's route model cloned per failure, the QoS
/// proof from the whole fabric's) equals the computation from scratch on
/// every single failure and on pairs of failures, of BiGraphs (whose cut
/// cables re-route over detours), leaf-spines, a 3-tier fat-tree,
/// rail-optimized and HPN plans; and the shortcut proves most of them.
#[test]
fn the_prover_equals_the_full_computation() {
    let plans = [
        design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap(),
        shorthand_plan("bigraph", "4x8"),
        shorthand_plan("bigraph", "2x4"),
        shorthand_plan("fat-tree", "tiers=2,sub-nodes=64,ports=16"),
        shorthand_plan("fat-tree", "tiers=3,k=4"),
        shorthand_plan("rail", "sub-nodes=64,rails=4,ports=16"),
        shorthand_plan("hpn", "sub-nodes=32,rails=2,ports=16"),
    ];
    for plan in &plans {
        let (quick, all) = prover_agrees(plan, 7);
        assert!(
            quick * 2 > all,
            "{}: the shortcut proved {quick} of {all} scenarios",
            plan.name
        );
    }
}

/// Without a clean proof of the whole fabric (one priority for both
/// BiGraph parts: EFLOPS Fig. 7's cycle) every failed fabric gets the
/// full check, and the findings are its own.
#[test]
fn a_broken_whole_fabric_takes_the_full_check() {
    let mut plan = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
    let names: Vec<&str> = plan.switch_list.iter().map(|s| s.name.as_str()).collect();
    let off = crate::inventory::qos_overrides_from_toml(
        "[qos]\nper_direction = false\n",
        "o.toml",
        &names,
    )
    .unwrap();
    crate::render::apply_qos_overrides(&mut plan, &off).unwrap();
    let prover = Prover::new(&plan).unwrap();
    assert!(!prover.qos.proves_from_whole());
    for failed in single_failures(&plan).unwrap().iter().step_by(9) {
        let p = prover.prove(failed).unwrap();
        assert!(!p.qos_ok, "{failed:?}");
        assert_eq!(p, from_scratch(&plan, failed), "{failed:?}");
    }
}

/// Medium plans (a 256-sub-node leaf-spine of 32-port switches, and a
/// 512-sub-node BiGraph 16x32): every single failure proven as from
/// scratch.
#[test]
fn the_prover_equals_the_full_computation_on_medium_plans() {
    for plan in [
        shorthand_plan("fat-tree", "tiers=2,sub-nodes=256,ports=32"),
        shorthand_plan("bigraph", "16x32"),
    ] {
        let (quick, all) = prover_agrees(&plan, usize::MAX);
        assert!(quick * 2 > all, "{}: {quick} of {all}", plan.name);
    }
}
