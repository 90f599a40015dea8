//! The simulator against the closed forms, and max-min fairness.

use super::*;
use crate::network::Policy;

/// Rates checked after every instant, on the plain path (one end event
/// per flow), to compare with the default run.
const CHECKED: sim::Settings = sim::Settings {
    check: true,
    plain: true,
    general: true,
    whole: false,
};

/// Every send eager: the hand-made cases below predate rendezvous.
pub(super) const EAGER: u64 = u64::MAX;

// The simulator against the closed forms.

#[test]
fn hdrm_on_bigraph_is_uncongested_and_equals_the_closed_form() {
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    for size in [1 << 10, 256 << 10, 64 << 20] {
        let event = estimate(
            &plan,
            Algorithm::Hdrm,
            None,
            size,
            &params,
            &opts(Method::Event),
        )
        .unwrap();
        let fast = estimate(
            &plan,
            Algorithm::Hdrm,
            None,
            size,
            &params,
            &opts(Method::Fast),
        )
        .unwrap();
        assert_eq!(event.schedule.as_ref().unwrap().max_link_flows, 1);
        assert_close(event.time_us, event.closed_form_us, "event");
        assert_close(fast.time_us, fast.closed_form_us, "fast");
    }
}

#[test]
fn hd_in_plan_order_is_slower_than_hdrm_on_the_same_bigraph() {
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    let size = 64 << 20;
    let hdrm = estimate(
        &plan,
        Algorithm::Hdrm,
        None,
        size,
        &params,
        &opts(Method::Event),
    )
    .unwrap();
    let hd = estimate(
        &plan,
        Algorithm::Hd,
        None,
        size,
        &params,
        &opts(Method::Event),
    )
    .unwrap();
    assert!(hd.schedule.as_ref().unwrap().max_link_flows > 1);
    assert!(
        hd.time_us > 1.2 * hdrm.time_us,
        "hd {} µs, hdrm {} µs",
        hd.time_us,
        hdrm.time_us
    );
}

/// The first ECMP seed under which no directed link carries two flows of
/// a step of `algorithm`.
fn uncontended_seed(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    size: u64,
    params: &Params,
) -> Option<u64> {
    (0..64).find(|&seed| {
        steps_and_turnaround(
            plan,
            algorithm,
            None,
            size,
            params,
            seed,
            Policy::Ecmp,
            Method::Fast,
        )
        .unwrap()
        .0
        .iter()
        .all(|s| s.max_link_flows <= 1)
    })
}

#[test]
fn without_shared_links_both_modes_equal_the_closed_form() {
    // Every flow of a step pays the same latency when hops are free, so
    // the three agree wherever no link is shared.
    let params = no_hop_latency();
    let cases = [
        (bigraph_plan(4, 16), Algorithm::Ring),
        (bigraph_plan(1, 8), Algorithm::Hd),
        (bigraph_plan(4, 16), Algorithm::Hdrm),
        (
            fat_tree_plan("tiers=2,sub-nodes=64,ports=32"),
            Algorithm::Ring,
        ),
    ];
    for (plan, a) in cases {
        let size = 48 << 20;
        let seed = uncontended_seed(&plan, a, size, &params).unwrap_or_else(|| {
            panic!(
                "{} on {}: every seed shares a link",
                a.as_str(),
                plan.describe()
            )
        });
        for method in [Method::Event, Method::Fast] {
            let o = Options {
                method,
                seeds: vec![seed],
                threads: 1,
                routing: crate::network::Policy::Ecmp,
                sends: None,
            };
            let e = estimate(&plan, a, None, size, &params, &o).unwrap();
            assert_close(
                e.time_us,
                e.closed_form_us,
                &format!(
                    "{} on {} ({})",
                    a.as_str(),
                    plan.describe(),
                    method.as_str()
                ),
            );
        }
    }
}

#[test]
fn ring_on_bigraph_fast_mode_is_exact() {
    // Every step of a ring has the same flows; with the default latencies
    // (routes of 1 to 3 switches) the step-synchronous mode still equals
    // the event-driven one, since each rank's sends form a chain through
    // its own longest route.
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    for size in [1 << 10, 1 << 20, 256 << 20] {
        let event = estimate(
            &plan,
            Algorithm::Ring,
            None,
            size,
            &params,
            &opts(Method::Event),
        )
        .unwrap();
        let fast = estimate(
            &plan,
            Algorithm::Ring,
            None,
            size,
            &params,
            &opts(Method::Fast),
        )
        .unwrap();
        assert_close(fast.time_us, event.time_us, "ring fast against event");
    }
}

#[test]
fn ecmp_seeds_give_a_spread_on_a_fat_tree() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=16");
    let o = Options {
        method: Method::Event,
        seeds: (0..8).collect(),
        threads: 1,
        routing: crate::network::Policy::Ecmp,
        sends: None,
    };
    let e = estimate(&plan, Algorithm::Hd, None, 16 << 20, &Params::default(), &o).unwrap();
    assert_eq!(e.seeds, 8);
    assert!(e.time_min_us < e.time_max_us, "{e:?}");
    assert!(e.time_min_us <= e.time_us && e.time_us <= e.time_max_us);
}

#[test]
fn the_same_input_gives_the_same_output() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=64,ports=16");
    let params = Params::default();
    let o = Options {
        method: Method::Event,
        seeds: vec![0, 1, 2],
        threads: 2,
        routing: crate::network::Policy::Ecmp,
        sends: None,
    };
    let sizes = [1 << 10, 1 << 20];
    let algorithms = [Algorithm::Hd, Algorithm::DoubleTree, Algorithm::TwoD];
    let run = || {
        size_sweep(
            &plan,
            &algorithms,
            &sizes,
            None,
            &params,
            &o,
            &mut |_, _| {},
        )
        .unwrap()
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    // One thread gives what two do.
    let one = size_sweep(
        &plan,
        &algorithms,
        &sizes,
        None,
        &params,
        &Options {
            threads: 1,
            ..o.clone()
        },
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(a, one);
    let svg = |e: &[Estimate]| plot::sizes(e, plot::PlotFormat::Svg).unwrap();
    assert_eq!(svg(&a), svg(&b));
}

// Max-min fairness.

#[test]
fn max_min_rates_by_hand() {
    // Two flows on link 0 get half each; a third on link 1 is unaffected.
    let rates = sim::max_min_rates(&[10.0, 10.0], &[vec![0], vec![0], vec![1]]).unwrap();
    assert_eq!(rates, vec![5.0, 5.0, 10.0]);
    // A flow limited on link 1 leaves the rest of link 0 to the other.
    let rates = sim::max_min_rates(&[10.0, 4.0], &[vec![0, 1], vec![0], vec![1]]).unwrap();
    assert_eq!(rates, vec![2.0, 8.0, 2.0]);
    assert!(sim::max_min_rates(&[1.0], &[vec![3]]).is_err());
}

/// Routes given by hand: `links[i]` for send i, no latency.
struct HandRoutes(Vec<Vec<u32>>);

impl sim::Routes for HandRoutes {
    fn route(&mut self, i: usize) -> Result<sim::FlowRoute> {
        let mut r = sim::FlowRoute::default();
        for (k, &l) in self.0[i].iter().enumerate() {
            r.links[k] = l;
        }
        r.len = self.0[i].len() as u8;
        Ok(r)
    }
}

#[test]
fn simulator_shares_links_fairly_by_hand() {
    // Sends 0 and 1 share link 0 (10 bytes/µs), send 2 has link 1 alone:
    // 100 bytes each take 20, 20 and 10 µs.
    let sched = SendSchedule::by_hand(6, &[(0, 1, 100, &[]), (2, 3, 100, &[]), (4, 5, 100, &[])]);
    let routes = vec![vec![0], vec![0], vec![1]];
    let o = sim::run(
        &sched,
        &[10.0, 10.0],
        &mut HandRoutes(routes.clone()),
        EAGER,
    )
    .unwrap();
    assert_close(o.time_us, 20.0, "shared link");
    assert_eq!(o.max_link_flows, 2);
    // When the shorter of two sharing flows ends, the other speeds up:
    // 50 bytes end at 10 µs, the other 50 bytes of send 0 take 5 more.
    let sched = SendSchedule::by_hand(4, &[(0, 1, 100, &[]), (2, 3, 50, &[])]);
    let o = sim::run(
        &sched,
        &[10.0],
        &mut HandRoutes(vec![vec![0], vec![0]]),
        EAGER,
    )
    .unwrap();
    assert_close(o.time_us, 15.0, "speed-up after an end");
    // A dependent send starts when the one it waits for is delivered.
    let sched = SendSchedule::by_hand(3, &[(0, 1, 100, &[]), (1, 2, 100, &[0])]);
    let o = sim::run(
        &sched,
        &[10.0, 10.0],
        &mut HandRoutes(vec![vec![0], vec![1]]),
        EAGER,
    )
    .unwrap();
    assert_close(o.time_us, 20.0, "dependency");
    // The fast mode counts flows per link the same way here.
    let f = fast::run(
        &sched,
        &[10.0, 10.0],
        &mut HandRoutes(vec![vec![0], vec![1]]),
        true,
    )
    .unwrap();
    assert_close(f.time_us, 20.0, "fast");
}

/// Runs an algorithm with the rates checked against a full water-filling
/// after every instant.
fn check_fairness(plan: &CheckedPlan, a: Algorithm, size: u64, seed: u64) -> sim::Outcome {
    let params = Params::default();
    let ctx = Context::new(plan, a, None, &params).unwrap();
    let (_, k) = ctx.closed_form(size).unwrap();
    let sched = ctx.schedule(size, k).unwrap();
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, crate::network::Policy::Ecmp);
    let checked = sim::run_with(
        &sched,
        &ctx.caps,
        &mut routes,
        params.eager_bytes,
        CHECKED,
        None,
    )
    .unwrap_or_else(|e| panic!("{} on {}: {e}", a.as_str(), plan.describe()));
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, crate::network::Policy::Ecmp);
    let plain = sim::run(&sched, &ctx.caps, &mut routes, params.eager_bytes).unwrap();
    assert_eq!(checked, plain);
    plain
}

#[test]
fn simulated_rates_stay_max_min_fair() {
    // Contended cases: ECMP collisions on a small fat-tree and a BiGraph,
    // and the pipelined trees whose flows share every NIC.
    let ft = fat_tree_plan("tiers=2,sub-nodes=32,ports=8");
    let bg = bigraph_plan(2, 8);
    for a in [
        Algorithm::Hd,
        Algorithm::DoubleTree,
        Algorithm::OverlappedTree,
        Algorithm::TwoD,
    ] {
        for seed in 0..3 {
            check_fairness(&ft, a, 1 << 20, seed);
        }
        check_fairness(&bg, a, 1 << 20, 0);
    }
}

#[test]
fn small_and_odd_rank_counts() {
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    for ranks in [1usize, 2, 3, 5, 13] {
        for a in [
            Algorithm::Ring,
            Algorithm::Hd,
            Algorithm::Hdrm,
            Algorithm::Tree,
            Algorithm::DoubleTree,
            Algorithm::OverlappedTree,
        ] {
            for method in [Method::ClosedForm, Method::Fast, Method::Event] {
                let e = estimate(&plan, a, Some(ranks), 1000, &params, &opts(method)).unwrap();
                if ranks == 1 {
                    assert_eq!((e.time_us, e.algbw_gbps), (0.0, 0.0), "{e:?}");
                } else {
                    assert!(e.time_us > 0.0 && e.time_us.is_finite(), "{e:?}");
                }
            }
        }
    }
    // Halving-doubling folds any count, up to the plan's sub-nodes.
    assert!(
        estimate(
            &plan,
            Algorithm::Hd,
            Some(65),
            1000,
            &params,
            &opts(Method::Event)
        )
        .is_err()
    );
    assert!(
        estimate(
            &plan,
            Algorithm::Ring,
            None,
            0,
            &params,
            &opts(Method::Event)
        )
        .is_err()
    );
    // A message smaller than the rank count leaves some chunks empty.
    let e = estimate(
        &plan,
        Algorithm::Ring,
        None,
        7,
        &params,
        &opts(Method::Event),
    )
    .unwrap();
    assert!(e.time_us > 0.0);
}

// Routing policies.

/// Routes given by hand, several paths per send (a sprayed send), without
/// latency.
fn spray_routes(paths: Vec<Vec<Vec<u32>>>) -> PathRoutes {
    PathRoutes(
        paths
            .into_iter()
            .map(|p| p.into_iter().map(|links| (links, 0.0)).collect())
            .collect(),
    )
}

#[test]
fn a_sprayed_send_is_delivered_with_its_last_part() {
    // Send 0 sprayed over links 0 and 1 (50 bytes each), send 1 on link 1
    // alone: link 0 carries 50 bytes at 10/µs (5 µs); link 1 is shared by
    // 50 + 100 bytes, 5/µs each until the part ends at 10 µs, then send 1
    // alone: 50 bytes more take 5 µs. Send 0 is delivered at 10 µs, send 1
    // at 15; a dependent send on link 0 starts at 10 µs and takes 10.
    let sched = SendSchedule::by_hand(4, &[(0, 1, 100, &[]), (2, 3, 100, &[]), (1, 2, 100, &[0])]);
    let routes = vec![vec![vec![0], vec![1]], vec![vec![1]], vec![vec![0]]];
    let o = sim::run(
        &sched,
        &[10.0, 10.0],
        &mut spray_routes(routes.clone()),
        EAGER,
    )
    .unwrap();
    assert_close(o.time_us, 20.0, "sprayed");
    let checked = sim::run_with(
        &sched,
        &[10.0, 10.0],
        &mut spray_routes(routes.clone()),
        EAGER,
        CHECKED,
        None,
    )
    .unwrap();
    assert_eq!(checked, o);
    // Step-synchronous: step 0 has the sprayed send's parts and send 1;
    // link 1 carries 1.5 flows' worth, so send 1 and the part on it run at
    // 10 / 1.5 per whole flow: 100 bytes in 15 µs. Step 1 takes 10 µs.
    let f = fast::run(&sched, &[10.0, 10.0], &mut spray_routes(routes), true).unwrap();
    assert_close(f.time_us, 25.0, "fast");
}

/// Issue #19: halving-doubling in plan order on a non-blocking leaf-spine
/// meets no shared link under D-mod-K or spraying, so both equal the
/// closed form at 256 MiB, and the ECMP hash's 3 to 7 flows on a spine
/// link make it 10 to 40 % slower.
#[test]
fn hd_on_a_leaf_spine_by_routing_policy() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=256,ports=32");
    let params = Params::default();
    let size = 256 << 20;
    let time = |routing: Policy| {
        let o = Options {
            routing,
            ..opts(Method::Event)
        };
        estimate(&plan, Algorithm::Hd, None, size, &params, &o).unwrap()
    };
    let (ecmp, dmodk, spray) = (time(Policy::Ecmp), time(Policy::DModK), time(Policy::Spray));
    assert_close(dmodk.time_us, dmodk.closed_form_us, "dmodk");
    assert_eq!(dmodk.schedule.as_ref().unwrap().max_link_flows, 1);
    assert_close(spray.time_us, dmodk.time_us, "spray");
    let ratio = ecmp.time_us / dmodk.time_us;
    assert!((1.1..1.4).contains(&ratio), "ecmp / dmodk = {ratio}");
    // The step-synchronous mode sees the same.
    let fast = Options {
        routing: Policy::DModK,
        ..opts(Method::Fast)
    };
    let f = estimate(&plan, Algorithm::Hd, None, size, &params, &fast).unwrap();
    assert_close(f.time_us, dmodk.closed_form_us, "fast dmodk");
}

// Rendezvous.

/// Issue #19: a send above the eager limit waits until its receiver has
/// received its previous step. Send a (0 -> 2, 200 B) is slow; rank 3 gets
/// 10 B from rank 1 at once and must send 100 B to rank 2 (send c), over
/// rank 2's link, which a still uses; rank 2 forwards a to rank 1 (send e)
/// on a link of its own. Eager, c shares the link with a from 1 µs: c ends
/// at 21 µs, a at 30, e at 40. With rendezvous c waits for a (20 µs), then
/// takes 10 µs, and e runs beside it: 30 µs.
#[test]
fn rendezvous_keeps_an_early_sender_off_a_busy_receiver() {
    let sched = SendSchedule::by_hand(
        4,
        &[
            (0, 2, 200, &[]),
            (1, 3, 10, &[]),
            (3, 2, 100, &[1]),
            (2, 1, 100, &[0]),
        ],
    );
    let routes = || HandRoutes(vec![vec![0], vec![1], vec![0], vec![2]]);
    let caps = [10.0, 10.0, 10.0];
    let eager = sim::run(&sched, &caps, &mut routes(), EAGER).unwrap();
    assert_close(eager.time_us, 40.0, "eager");
    let rendezvous = sim::run(&sched, &caps, &mut routes(), 50).unwrap();
    assert_close(rendezvous.time_us, 30.0, "rendezvous");
    assert_eq!(rendezvous.max_link_flows, 1);
    // Below the limit c goes at once, as eager.
    let small = sim::run(&sched, &caps, &mut routes(), 101).unwrap();
    assert_close(small.time_us, 40.0, "c below the eager limit");
    let checked = sim::run_with(&sched, &caps, &mut routes(), 50, CHECKED, None).unwrap();
    assert_eq!(checked, rendezvous);
}

fn with_eager(eager_bytes: u64) -> Params {
    Params {
        eager_bytes,
        ..Params::default()
    }
}

/// Without contention rendezvous changes nothing: HDRM on a BiGraph and a
/// ring, at every size, come out as eager and as the closed form.
#[test]
fn rendezvous_changes_nothing_without_contention() {
    let plan = bigraph_plan(4, 16);
    for a in [Algorithm::Hdrm, Algorithm::Ring] {
        for size in [4 << 10, 1 << 20, 256 << 20] {
            let time = |eager: u64| {
                estimate(
                    &plan,
                    a,
                    None,
                    size,
                    &with_eager(eager),
                    &opts(Method::Event),
                )
                .unwrap()
            };
            let (rdv, eager) = (time(0), time(u64::MAX));
            assert_close(rdv.time_us, eager.time_us, a.as_str());
            if a == Algorithm::Hdrm {
                assert_close(rdv.time_us, rdv.closed_form_us, "hdrm closed form");
            }
        }
    }
}

/// With contention it does: halving-doubling in plan order under the ECMP
/// hash on a leaf-spine at 256 MiB, where early senders would otherwise
/// share the spine links with the previous step's slow flows, is faster
/// with rendezvous (the default eager limit) than all-eager.
#[test]
fn rendezvous_is_faster_under_contention() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=256,ports=32");
    let size = 256 << 20;
    let time = |params: &Params| {
        estimate(
            &plan,
            Algorithm::Hd,
            None,
            size,
            params,
            &opts(Method::Event),
        )
        .unwrap()
        .time_us
    };
    let rdv = time(&Params::default());
    let eager = time(&with_eager(u64::MAX));
    assert!(rdv < eager * 0.99, "rendezvous {rdv} µs, eager {eager} µs");
    // Every algorithm still completes with every send under rendezvous.
    let bigraph = bigraph_plan(4, 16);
    for &a in Algorithm::ALL {
        if !a.runs_on(bigraph.topology) {
            continue;
        }
        let e = estimate(
            &bigraph,
            a,
            None,
            1 << 20,
            &with_eager(0),
            &opts(Method::Event),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", a.as_str()));
        assert!(e.time_us > 0.0);
    }
}

/// Routes given per send as paths of (links, latency).
pub(super) struct PathRoutes(pub(super) Vec<Vec<(Vec<u32>, f64)>>);

impl sim::Routes for PathRoutes {
    fn route(&mut self, i: usize) -> Result<sim::FlowRoute> {
        let mut out = Vec::new();
        self.paths(i, &mut out)?;
        Ok(out[0])
    }

    fn paths(&mut self, i: usize, out: &mut Vec<sim::FlowRoute>) -> Result<()> {
        for (path, latency) in &self.0[i] {
            let mut r = sim::FlowRoute {
                latency: *latency,
                len: path.len() as u8,
                ..sim::FlowRoute::default()
            };
            r.links[..path.len()].copy_from_slice(path);
            out.push(r);
        }
        Ok(())
    }
}
