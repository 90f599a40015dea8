use proptest::prelude::*;

use super::*;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::{PortRole, Tier};
use crate::ranks::{
    folded_halving_doubling, halving_doubling, rank_table, ring, verify, verify_avoiding,
};

fn bigraph_plan(m: usize, n: usize) -> CheckedPlan {
    let (inv, opts) = shorthand::bigraph(m, n, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn eflops_plan() -> CheckedPlan {
    crate::design::bundled("eflops-4x16", None)
}

/// A BiGraph of `n` switches for `servers` servers of `per` sub-nodes:
/// when that is not a multiple of N, the switches carry unequal counts.
fn irregular_plan(servers: usize, per: usize, n: usize) -> CheckedPlan {
    let s = Shorthand {
        sub_nodes_per_server: Some(per),
        ..Shorthand::default()
    };
    let (mut inv, mut opts) = shorthand::bigraph(n / 2, n, &s).unwrap();
    inv.servers.truncate(servers);
    inv.server_templates[0].instances = 0..servers;
    opts.m = None;
    let plan = design(&inv, &opts).unwrap();
    assert!(!plan.bigraph.as_ref().unwrap().regular);
    plan
}

fn fat_tree_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

/// The switch names of one part, in plan order.
fn part(plan: &CheckedPlan, tier: Tier) -> Vec<String> {
    plan.switch_list
        .iter()
        .filter(|s| s.part_or_tier == tier)
        .map(|s| s.name.to_string())
        .collect()
}

fn link(a: &str, b: &str) -> Avoid {
    format!("link:{a}-{b}").parse().unwrap()
}

fn request(x: Option<usize>, avoid: &[Avoid], solver: Solver) -> Request {
    Request {
        ranks: x,
        avoid: avoid.to_vec(),
        solver,
        ..Request::default()
    }
}

/// The counting bound of a request, computed on its own.
fn counting_bound(plan: &CheckedPlan, req: &Request) -> usize {
    let net = Network::avoiding(plan, plan.source(), &req.avoid).unwrap();
    let caps: Vec<usize> = members(plan)
        .unwrap()
        .iter()
        .enumerate()
        .map(|(s, m)| if net.is_avoided_switch(s) { 0 } else { m.len() })
        .collect();
    let x = req.ranks.unwrap_or(caps.iter().sum());
    lower_bound(&net, &req.algorithm.schedule(x).unwrap(), &caps)
}

/// Checks what every outcome must satisfy: a table of distinct sub-nodes
/// off the avoided switches, and the loads `verify` gives.
fn check_outcome(plan: &CheckedPlan, req: &Request, o: &Outcome) {
    let net = Network::avoiding(plan, plan.source(), &req.avoid).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for &sn in &o.table.ranks {
        assert!(seen.insert(sn), "sub-node {sn} twice");
        assert!(!net.is_avoided_switch(net.switch_of(sn).unwrap()));
    }
    assert_eq!(
        o.steps,
        verify_avoiding(
            plan,
            &o.table,
            &req.avoid,
            req.seed,
            crate::network::Policy::Ecmp
        )
        .unwrap()
    );
    let worst = o.steps.iter().map(|s| s.max_load).max().unwrap_or(0);
    assert_eq!(o.worst_load, worst);
    assert!(o.lower_bound <= o.worst_load);
    assert_eq!(o.optimal, o.lower_bound == o.worst_load);
}

/// With nothing avoided, a regular BiGraph whose N is a power of two gets
/// exactly the table of `rank_table`, Algorithm 1: worst load 1, proven by
/// the bound.
#[test]
fn no_fault_bigraph_is_algorithm_1_byte_for_byte() {
    for (plan, x) in [
        (bigraph_plan(4, 16), None),
        (bigraph_plan(4, 16), Some(32)),
        (bigraph_plan(4, 8), Some(8)),
        (bigraph_plan(8, 16), None),
        (eflops_plan(), None),
    ] {
        for solver in Solver::ALL {
            let req = request(x, &[], solver);
            let o = plan_ranks(&plan, &req).unwrap();
            let t = rank_table(&plan, Algorithm::Hdrm, x).unwrap();
            assert_eq!(o.method, "algorithm-1");
            assert_eq!(o.table, t);
            assert_eq!(
                serde_json::to_string(&o.table).unwrap(),
                serde_json::to_string(&t).unwrap()
            );
            assert_eq!((o.worst_load, o.lower_bound, o.optimal), (1, 1, true));
            assert!(o.fold.is_none());
            assert!(o.congested_steps().is_empty());
            check_outcome(&plan, &req, &o);
        }
    }
    // Two ranks fit on one switch, where no flow would cross a link:
    // Algorithm 1 still spreads them, and says so.
    let plan = bigraph_plan(4, 16);
    let o = plan_ranks(&plan, &request(Some(2), &[], Solver::Auto)).unwrap();
    assert_eq!(
        (o.method, o.worst_load, o.lower_bound),
        ("algorithm-1", 1, 0)
    );
    assert!(!o.optimal);
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("would fit on one switch"))
    );
}

/// One faulty fabric with a known optimum: the exact model proves it, the
/// heuristic reaches it (or stays `gap` above it), and the counting bound
/// does not exceed it.
fn check_optimum(
    plan: &CheckedPlan,
    x: Option<usize>,
    avoid: &[Avoid],
    optimum: usize,
    gap: usize,
) {
    let exact = request(x, avoid, Solver::Exact);
    let o = plan_ranks(plan, &exact).unwrap();
    check_outcome(plan, &exact, &o);
    let what = format!("{} avoiding {avoid:?}, {x:?} ranks", plan.describe());
    assert_eq!(o.method, "ilp", "{what}: {:?}", o.notes);
    assert_eq!((o.worst_load, o.lower_bound), (optimum, optimum), "{what}");
    assert!(o.optimal, "{what}");
    assert!(o.notes.iter().any(|n| n.contains("exact model")), "{what}");
    let heuristic = request(x, avoid, Solver::Heuristic);
    let h = plan_ranks(plan, &heuristic).unwrap();
    check_outcome(plan, &heuristic, &h);
    assert_eq!(h.method, "heuristic");
    assert_eq!(h.worst_load, optimum + gap, "{what}");
    let counted = counting_bound(plan, &exact);
    assert!(counted <= optimum, "{what}: bound {counted}");
    assert_eq!(h.lower_bound, counted, "{what}");
    // Auto runs the exact model exactly when the heuristic misses the
    // bound, and then proves the optimum too.
    let a = plan_ranks(plan, &request(x, avoid, Solver::Auto)).unwrap();
    assert_eq!((a.worst_load, a.optimal), (optimum, true), "{what}");
    assert_eq!(
        a.method,
        if counted == optimum {
            "heuristic"
        } else {
            "ilp"
        }
    );
}

/// A 2x4 BiGraph with one dead upper-lower cable: two uppers, two lowers,
/// three cables left. Every two switches have a single route, so the
/// exact model covers every table: the optimum is 2, one above the
/// counting bound, and the heuristic finds it.
#[test]
fn dead_link_on_a_2x4_bigraph_costs_one_flow() {
    let plan = bigraph_plan(2, 4);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let dead = [link(&u[0], &l[0])];
    check_optimum(&plan, None, &dead, 2, 0);
    assert_eq!(
        counting_bound(&plan, &request(None, &dead, Solver::Auto)),
        1
    );
    let o = plan_ranks(&plan, &request(None, &dead, Solver::Auto)).unwrap();
    let congested = o.congested_steps();
    assert!(!congested.is_empty());
    assert!(congested.iter().all(|c| c.max_load == 2 && c.links >= 1));
    assert_eq!(
        congested.len(),
        o.steps.iter().filter(|s| s.max_load > 1).count()
    );
}

/// Where spare links exist, one dead cable costs nothing: 8 ranks on a 2x8
/// and on a 4x8 BiGraph, the exact model and the heuristic both reach 1;
/// and so does the heuristic with 16 ranks on the 2x8, where the bound
/// alone proves it.
#[test]
fn dead_link_with_spare_links_keeps_the_optimum_at_one() {
    for (m, n) in [(2, 8), (4, 8)] {
        let plan = bigraph_plan(m, n);
        let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
        check_optimum(&plan, Some(8), &[link(&u[0], &l[0])], 1, 0);
        check_optimum(&plan, Some(8), &[link(&l[1], &u[2])], 1, 0);
    }
    let plan = bigraph_plan(2, 8);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let req = request(Some(16), &[link(&u[0], &l[0])], Solver::Heuristic);
    let o = plan_ranks(&plan, &req).unwrap();
    check_outcome(&plan, &req, &o);
    assert_eq!((o.worst_load, o.lower_bound, o.optimal), (1, 1, true));
    // 16 ranks on 8 switches is beyond the exact solver.
    let e = plan_ranks(&plan, &request(Some(16), &req.avoid, Solver::Exact)).unwrap_err();
    assert!(matches!(e, Error::Parameter { .. }));
    let e = e.to_string();
    assert!(
        e.starts_with("solver: the exact solver takes up to 16 ranks"),
        "{e}"
    );
    assert!(e.contains("this job has 16 ranks on 8 switches"), "{e}");
}

/// A switch down for repair: its sub-nodes and every route through it are
/// out of use; 8 ranks on the 7 switches left of a 2x8 BiGraph still get
/// one flow per link.
#[test]
fn avoided_switch_keeps_the_optimum_at_one() {
    let plan = bigraph_plan(2, 8);
    let u = part(&plan, Tier::Upper);
    let down = [Avoid::Switch(u[1].clone())];
    check_optimum(&plan, Some(8), &down, 1, 0);
    let o = plan_ranks(&plan, &request(None, &down, Solver::Auto)).unwrap();
    assert_eq!(o.table.ranks.len(), 14);
    assert!(
        o.notes[0].contains("1 switch and 2 sub-nodes out of use"),
        "{:?}",
        o.notes
    );
    // And with Algorithm 1's sub-fabric shrunk by a switch on a 16x32.
    let plan = bigraph_plan(16, 32);
    let down = [Avoid::Switch(part(&plan, Tier::Upper)[3].clone())];
    let req = request(None, &down, Solver::Auto);
    let o = plan_ranks(&plan, &req).unwrap();
    check_outcome(&plan, &req, &o);
    assert_eq!(o.table.ranks.len(), 496);
    assert_eq!((o.worst_load, o.optimal), (1, true));
}

/// An irregular BiGraph (some switches carry fewer sub-nodes), which
/// Algorithm 1 refuses: 14 sub-nodes on 8 switches with the exact model,
/// and 60 sub-nodes on 16 switches with the heuristic.
#[test]
fn irregular_bigraph_is_mapped() {
    let plan = irregular_plan(7, 2, 8);
    assert_eq!(plan.sub_nodes, 14);
    assert!(rank_table(&plan, Algorithm::Hdrm, Some(8)).is_err());
    check_optimum(&plan, Some(8), &[], 1, 0);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    check_optimum(&plan, Some(8), &[link(&u[3], &l[3])], 1, 0);

    let plan = irregular_plan(15, 4, 16);
    assert_eq!(plan.sub_nodes, 60);
    for x in [None, Some(32), Some(48)] {
        let req = request(x, &[], Solver::Auto);
        let o = plan_ranks(&plan, &req).unwrap();
        check_outcome(&plan, &req, &o);
        assert_eq!(o.method, "heuristic");
        assert_eq!(
            (o.worst_load, o.lower_bound, o.optimal),
            (1, 1, true),
            "{x:?}"
        );
    }
}

/// X = 6, 12 and 48 on BiGraphs: the schedule folds the extra ranks onto
/// the core ones in a step of its own before halving-doubling and unfolds
/// them after; the extra ranks sit where those steps congest no link (on
/// their partners' switches when there is room).
#[test]
fn fold_places_the_extra_ranks_without_congestion() {
    for (plan, x, core, fold_load) in [
        (bigraph_plan(2, 8), 6, 4, None),
        (bigraph_plan(4, 16), 6, 4, None),
        (bigraph_plan(4, 8), 12, 8, Some(0)),
        (bigraph_plan(4, 16), 12, 8, Some(0)),
        (bigraph_plan(4, 16), 48, 32, Some(0)),
    ] {
        let req = request(Some(x), &[], Solver::Auto);
        let o = plan_ranks(&plan, &req).unwrap();
        check_outcome(&plan, &req, &o);
        let what = format!("{x} ranks on {}", plan.describe());
        let extra = x - core;
        let k = core.ilog2() as usize;
        // The shape: fold, 2 log2(P') halving-doubling steps, unfold.
        assert_eq!(o.steps.len(), 2 * k + 2, "{what}");
        let (first, last) = (&o.steps[0], &o.steps[2 * k + 1]);
        assert_eq!(
            (first.phase, first.step, first.distance),
            (Phase::Fold, 1, Some(core))
        );
        assert_eq!(
            (last.phase, last.step, last.distance),
            (Phase::Unfold, 1, Some(core))
        );
        assert_eq!((first.flows, last.flows), (extra, extra));
        assert!(o.steps[1..=2 * k].iter().all(|s| s.flows == core));
        // The loads: no link carries two flows, the fold steps as given.
        assert_eq!(o.worst_load, 1, "{what}");
        assert!(first.max_load <= 1 && last.max_load <= 1, "{what}");
        if let Some(f) = fold_load {
            assert_eq!((first.max_load, last.max_load), (f, f), "{what}");
        }
        // The cost.
        let f = o.fold.as_ref().unwrap();
        assert_eq!(
            (f.extra_ranks, f.core_ranks, f.extra_steps),
            (extra, core, 2)
        );
        assert_eq!(f.fold_buffers, 2.0);
        assert!((f.core_buffers - 2.0 * (1.0 - 1.0 / core as f64)).abs() < 1e-12);
        assert!((f.bytes_ratio - core as f64 / (core as f64 - 1.0)).abs() < 1e-12);
        assert!(f.note.starts_with(&format!(
            "{x} ranks is not a power of two: {extra} extra ranks send"
        )));
        assert!(
            f.note
                .contains("twice the largest halving-doubling step (B/2)")
        );
        assert!(o.notes.contains(&f.note));
        // The table's own schedule is the folded one: verify agrees.
        assert_eq!(verify(&plan, &o.table, 0).unwrap(), o.steps);
    }
    // hd and ring verify folded jobs in plan order too.
    let plan = bigraph_plan(4, 16);
    let o = plan_ranks(
        &plan,
        &Request {
            algorithm: Algorithm::Hd,
            ..request(Some(48), &[], Solver::Auto)
        },
    )
    .unwrap();
    assert_eq!(o.method, "plan-order");
    assert_eq!(o.fold.as_ref().map(|f| f.extra_ranks), Some(16));
    assert!(o.worst_load > 1);
}

/// `hd` and `ring` keep the plan order, without the avoided switches'
/// sub-nodes, and are only verified.
#[test]
fn hd_and_ring_keep_the_plan_order() {
    let plan = bigraph_plan(4, 16);
    let u = part(&plan, Tier::Upper);
    let down = [Avoid::Switch(u[0].clone())];
    let net = Network::avoiding(&plan, plan.source(), &down).unwrap();
    let order: Vec<usize> = members(&plan)
        .unwrap()
        .into_iter()
        .enumerate()
        .filter(|&(s, _)| !net.is_avoided_switch(s))
        .flat_map(|(_, m)| m)
        .collect();
    for algorithm in [Algorithm::Hd, Algorithm::Ring] {
        let req = Request {
            algorithm,
            ..request(Some(32), &down, Solver::Exact)
        };
        let o = plan_ranks(&plan, &req).unwrap();
        check_outcome(&plan, &req, &o);
        assert_eq!(o.method, "plan-order");
        assert_eq!(o.table.ranks, order[..32]);
        assert_eq!(o.table.algorithm, algorithm);
    }
    // Without avoidance, hd is rank_table's hd, and congests at distance 4.
    let o = plan_ranks(
        &plan,
        &Request {
            algorithm: Algorithm::Hd,
            ..Request::default()
        },
    )
    .unwrap();
    assert_eq!(o.table, rank_table(&plan, Algorithm::Hd, None).unwrap());
    let worst = o.congested_steps();
    assert!(
        worst
            .iter()
            .any(|c| c.distance == Some(4) && c.max_load == 4 && c.links == 16)
    );
    assert!(!o.optimal && o.lower_bound == 1);
}

/// The counting bound on small cases worked by hand.
#[test]
fn lower_bound_counts_what_must_cross() {
    let plan = bigraph_plan(4, 16);
    let net = Network::new(&plan, plan.source()).unwrap();
    let caps = vec![4; 16];
    let hd = |x| folded_halving_doubling(x).unwrap();
    // Four ranks fit on one switch.
    assert_eq!(lower_bound(&net, &hd(4), &caps), 0);
    assert_eq!(lower_bound(&net, &hd(1), &caps), 0);
    // More must cross, one flow per link is the most the count gives.
    assert_eq!(lower_bound(&net, &hd(64), &caps), 1);
    assert_eq!(lower_bound(&net, &ring(64).unwrap(), &caps), 1);
    // With only two links left, 64 ranks on 4-sub-node switches send at
    // least (6 * 64 - 16 * 8) / 6 flows across per step on average.
    let mut plan = bigraph_plan(4, 16).into_plan();
    let keep = {
        let s = &plan.switch_list[0];
        let p = s
            .ports
            .iter()
            .find(|p| p.role == PortRole::InterSwitch)
            .unwrap();
        (s.name.clone(), p.peer.clone().unwrap())
    };
    for s in &mut plan.switch_list {
        for p in &mut s.ports {
            let ours = (s.name == keep.0 && p.peer.as_deref() == Some(keep.1.as_str()))
                || (s.name == keep.1 && p.peer.as_deref() == Some(keep.0.as_str()));
            if p.role == PortRole::InterSwitch && !ours {
                p.role = PortRole::Free;
                p.peer = None;
                p.peer_port = None;
            }
        }
    }
    // A fabric cut by hand fails the load's check; the bound is about
    // the network, so the test takes it as it is.
    let plan = CheckedPlan::unchecked_for_tests(plan);
    let net = Network::new(&plan, plan.source()).unwrap();
    assert_eq!(net.alive_inter_switch_links(), 2);
    assert_eq!(
        lower_bound(&net, &hd(64), &caps),
        (6 * 64 - 16 * 8usize).div_ceil(6 * 2)
    );
}

/// The exact model from scratch, without the heuristic's table to start
/// from: the 2x4 optimum of 2.
#[test]
fn exact_model_proves_the_2x4_optimum_from_scratch() {
    let plan = bigraph_plan(2, 4);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let net = Network::avoiding(&plan, plan.source(), &[link(&u[0], &l[0])]).unwrap();
    let avail = members(&plan).unwrap();
    let schedule = halving_doubling(8).unwrap();
    let problem = ilp::Instance::new(&net, &avail, &schedule).unwrap();
    assert!(!problem.has_choices());
    let s = problem
        .solve(ilp::Kind::HashFree, 1, 8, None, 0)
        .unwrap()
        .unwrap();
    assert_eq!(s.optimum, 2);
    // Its table has that worst load for real, for any seed.
    let table = problem.table(&s.place).unwrap();
    for seed in 0..4 {
        let loads = verify_schedule(&net, &table, &schedule, seed).unwrap();
        assert_eq!(loads.iter().map(|l| l.max_load).max(), Some(2));
    }
    // A worst load of 1 is out of reach.
    assert!(
        problem
            .solve(ilp::Kind::Relaxed, 1, 1, None, 0)
            .unwrap()
            .is_none()
    );
    // Canonical forms keep the loads.
    let place = problem.place_of(&table).unwrap();
    let canon = problem.canonical(&place);
    let canon_table = problem.table(&canon).unwrap();
    let worst = |t: &[usize]| {
        verify_schedule(&net, t, &schedule, 0)
            .unwrap()
            .iter()
            .map(|l| l.max_load)
            .max()
    };
    assert_eq!(worst(&canon_table), worst(&table));
}

/// On fat-trees every flow between leaves is hashed: the relaxed model
/// gives the bound, and the heuristic's table is verified.
#[test]
fn fat_tree_jobs_are_mapped_and_bounded() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=16,ports=8");
    let spine = part(&plan, Tier::Spine)[0].clone();
    let leaf = part(&plan, Tier::Leaf)[0].clone();
    for avoid in [vec![], vec![link(&leaf, &spine)]] {
        let req = request(Some(8), &avoid, Solver::Exact);
        let o = plan_ranks(&plan, &req).unwrap();
        check_outcome(&plan, &req, &o);
        assert!(o.notes.iter().any(|n| n.contains("exact model")));
    }
    let plan = fat_tree_plan("k=8");
    let core = part(&plan, Tier::Core)[0].clone();
    let req = request(None, &[Avoid::Switch(core)], Solver::Auto);
    let o = plan_ranks(&plan, &req).unwrap();
    check_outcome(&plan, &req, &o);
    assert_eq!(o.method, "heuristic");
    assert_eq!(o.table.ranks.len(), 128);
}

#[test]
fn requests_are_checked() {
    let plan = bigraph_plan(2, 8);
    let u = part(&plan, Tier::Upper);
    let down = [Avoid::Switch(u[0].clone())];
    let e = plan_ranks(&plan, &request(Some(15), &down, Solver::Auto))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "ranks: 15 ranks do not fit on the 14 sub-nodes left after the avoided switches; use at most 14"
    );
    let e = plan_ranks(&plan, &request(Some(0), &[], Solver::Auto)).unwrap_err();
    assert_eq!(e.to_string(), "ranks: 0 ranks: use 1 or more");
    let e = plan_ranks(
        &plan,
        &request(None, &[Avoid::Switch("sw99".into())], Solver::Auto),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("avoid: switch sw99 in `switch:sw99` is not in the plan"),
        "{e}"
    );
    // Two dead cables that cut a switch off.
    let plan = bigraph_plan(2, 4);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let cut = [link(&u[0], &l[0]), link(&u[0], &l[1])];
    let e = plan_ranks(&plan, &request(None, &cut, Solver::Auto))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("avoid: no route from switch {}", u[0])),
        "{e}"
    );
    // Avoiding the cut-off switch as well leaves a fabric to map on.
    let mut both = cut.to_vec();
    both.push(Avoid::Switch(u[0].clone()));
    let o = plan_ranks(&plan, &request(None, &both, Solver::Auto)).unwrap();
    assert_eq!(o.table.ranks.len(), 6);

    assert_eq!("EXACT".parse::<Solver>().unwrap(), Solver::Exact);
    for s in Solver::ALL {
        assert_eq!(s.as_str().parse::<Solver>().unwrap(), s);
    }
    assert_eq!(
        "best".parse::<Solver>().unwrap_err().to_string(),
        "solver: `best` is not a solver; use auto, heuristic or exact"
    );
}

#[test]
fn outcome_serialises_for_the_cli() {
    let plan = bigraph_plan(2, 4);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let o = plan_ranks(
        &plan,
        &request(Some(6), &[link(&u[0], &l[0])], Solver::Auto),
    )
    .unwrap();
    let json = serde_json::to_value(&o).unwrap();
    let text = serde_json::to_string(&o).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    let keys = [
        "table",
        "method",
        "steps",
        "worst_load",
        "lower_bound",
        "optimal",
        "fold",
        "notes",
    ];
    assert!(keys.windows(2).all(|k| at(k[0]) < at(k[1])), "{text}");
    assert_eq!(json.as_object().unwrap().len(), keys.len());
    assert_eq!(json["table"]["algorithm"], "hdrm");
    assert_eq!(json["steps"][0]["phase"], "fold");
    assert_eq!(json["fold"]["extra_ranks"], 2);
    let c = serde_json::to_string(&Congestion {
        phase: Phase::AllGather,
        step: 1,
        distance: Some(2),
        max_load: 3,
        links: 4,
    })
    .unwrap();
    assert_eq!(
        c,
        r#"{"phase":"all-gather","step":1,"distance":2,"max_load":3,"links":4}"#
    );
    // The same request gives the same outcome.
    let again = plan_ranks(
        &plan,
        &request(Some(6), &[link(&u[0], &l[0])], Solver::Auto),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&o).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// On small BiGraphs with random dead cables, avoided switches, rank
    /// counts and seeds, the heuristic's table is a permutation of usable
    /// sub-nodes, and the cost it keeps while searching is the one
    /// `verify` computes for the table it returns.
    #[test]
    fn heuristic_tables_are_permutations_with_verified_loads(
        shape in 0usize..4,
        cuts in proptest::collection::vec((0usize..8, 0usize..8), 0..3),
        down in proptest::option::of(0usize..16),
        share in 1usize..=16,
        seed in 0u64..1_000,
    ) {
        let (m, n) = [(2, 4), (2, 8), (4, 8), (3, 8)][shape];
        let plan = bigraph_plan(m, n);
        let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
        let mut avoid: Vec<Avoid> = cuts
            .iter()
            .map(|&(a, b)| link(&u[a % u.len()], &l[b % l.len()]))
            .collect();
        if let Some(s) = down {
            avoid.push(Avoid::Switch(plan.switch_list[s % n].name.to_string()));
        }
        let net = Network::avoiding(&plan, plan.source(), &avoid).unwrap();
        let mut avail = members(&plan).unwrap();
        for (s, here) in avail.iter_mut().enumerate() {
            if net.is_avoided_switch(s) {
                here.clear();
            }
        }
        let caps: Vec<usize> = avail.iter().map(Vec::len).collect();
        let usable: usize = caps.iter().sum();
        let x = (usable * share).div_ceil(16).max(1);
        let req = Request { ranks: Some(x), avoid: avoid.clone(), solver: Solver::Heuristic, seed, ..Request::default() };
        match plan_ranks(&plan, &req) {
            Ok(o) => {
                check_outcome(&plan, &req, &o);
                prop_assert_eq!(o.table.ranks.len(), x);
                let schedule = Algorithm::Hdrm.schedule(x).unwrap();
                let bound = lower_bound(&net, &schedule, &caps);
                prop_assert_eq!(o.lower_bound, bound);
                // The search's own bookkeeping against verify.
                let mut search = Search::new(&net, &avail, &schedule, seed);
                search.best_start(&avail, bound).unwrap();
                let cost = search.improve(bound).unwrap();
                let steps = verify_schedule(&net, &search.pos, &schedule, seed).unwrap();
                let w = steps.iter().map(|s| s.max_load).max().unwrap_or(0);
                let c: usize = steps.iter().filter(|s| w > 0 && s.max_load == w).map(|s| s.max_load_links).sum();
                prop_assert_eq!((cost.0 as usize, cost.1 as usize), (w, c));
                if o.method == "heuristic" {
                    prop_assert_eq!(&search.pos, &o.table.ranks);
                }
            }
            Err(e) => {
                // Only a fabric cut in two may refuse.
                let e = e.to_string();
                prop_assert!(e.starts_with("avoid: no route from switch"), "{}", e);
            }
        }
    }
}

/// A 16x32 BiGraph (512 sub-nodes) with one dead cable, and the 131,072
/// sub-node BiGraph with a folded job. Run with `cargo test -p planner
/// --lib ranks::optimize::tests::timing -- --ignored --nocapture`.
#[test]
#[ignore = "timing"]
fn timing_16x32_with_a_dead_link() {
    let plan = bigraph_plan(16, 32);
    let (u, l) = (part(&plan, Tier::Upper), part(&plan, Tier::Lower));
    let dead = [link(&u[0], &l[0])];
    for x in [None, Some(500), Some(256)] {
        let req = request(x, &dead, Solver::Auto);
        let start = std::time::Instant::now();
        let o = plan_ranks(&plan, &req).unwrap();
        let took = start.elapsed();
        check_outcome(&plan, &req, &o);
        println!(
            "16x32, one dead cable, {} ranks: {} in {:.0} ms, worst load {}, bound {}, {} congested steps",
            o.table.ranks.len(),
            o.method,
            took.as_secs_f64() * 1e3,
            o.worst_load,
            o.lower_bound,
            o.congested_steps().len()
        );
        assert!(took.as_secs_f64() < 5.0, "{took:?}");
    }
    let plan = bigraph_plan(256, 512);
    for x in [131_072, 131_071, 100_000] {
        let req = request(Some(x), &[], Solver::Heuristic);
        let start = std::time::Instant::now();
        let o = plan_ranks(&plan, &req).unwrap();
        let took = start.elapsed();
        println!(
            "256x512, no fault, {x} ranks: {} in {:.0} ms, worst load {}",
            o.method,
            took.as_secs_f64() * 1e3,
            o.worst_load
        );
        assert_eq!(o.worst_load, 1);
    }
}

/// Unavailable sub-nodes (busy in the cluster) carry no rank; a table that
/// fits around them keeps worst load 1 where the fabric allows, and asking
/// for more ranks than are left names what is still available.
#[test]
fn unavailable_sub_nodes_carry_no_rank() {
    let plan = eflops_plan();
    // Every sub-node of the first two servers is busy.
    let busy: Vec<usize> = plan.servers[..2]
        .iter()
        .flat_map(|s| s.sub_nodes.iter().copied())
        .collect();
    let req = Request {
        unavailable: busy.clone(),
        ..request(Some(32), &[], Solver::Auto)
    };
    let o = plan_ranks(&plan, &req).unwrap();
    check_outcome(&plan, &req, &o);
    assert!(o.table.ranks.iter().all(|i| !busy.contains(i)));
    assert_ne!(o.method, "algorithm-1");
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("8 sub-nodes unavailable"))
    );
    assert_eq!(o.worst_load, o.lower_bound, "{:?}", o.notes);
    // Busy sub-nodes that Algorithm 1 does not use leave its table as it is.
    let alg1 = rank_table(&plan, Algorithm::Hdrm, Some(32)).unwrap();
    let idle: Vec<usize> = (0..plan.sub_node_list.len())
        .filter(|i| !alg1.ranks.contains(i))
        .collect();
    let req = Request {
        unavailable: idle,
        ..request(Some(32), &[], Solver::Auto)
    };
    let o = plan_ranks(&plan, &req).unwrap();
    assert_eq!((o.method, &o.table), ("algorithm-1", &alg1));
    // Too few left.
    let req = Request {
        unavailable: (0..40).collect(),
        ..request(Some(32), &[], Solver::Auto)
    };
    let e = plan_ranks(&plan, &req).unwrap_err().to_string();
    assert!(
        e.contains("do not fit on the 24 sub-nodes still available"),
        "{e}"
    );
    let req = Request {
        unavailable: vec![plan.sub_node_list.len()],
        ..Request::default()
    };
    let e = plan_ranks(&plan, &req).unwrap_err().to_string();
    assert!(e.contains("sub-node index 64 is not in the plan"), "{e}");
}
