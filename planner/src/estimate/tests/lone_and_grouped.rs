//! The simulator's shortcuts against its event loop: grouped end events
//! ([`sim::Groups`]), the lone pass and streamed schedules give the loop's
//! results, to the bit.

use super::simulator::{EAGER, PathRoutes};
use super::*;
use crate::network::Policy;

/// How a run goes: the default (the lone pass where it applies, grouped
/// end events), the event loop with grouped end events, the event loop
/// with one end event per flow.
const WAYS: [sim::Settings; 3] = [
    sim::Settings {
        check: false,
        plain: false,
        general: false,
    },
    sim::Settings {
        check: false,
        plain: false,
        general: true,
    },
    sim::Settings {
        check: false,
        plain: true,
        general: true,
    },
];

/// The outcome and the bits of every start and delivery time of `sched`,
/// each of the [`WAYS`] (or its error: a cycle of dependencies and gates).
#[allow(clippy::type_complexity)]
fn run_ways(
    sched: &SendSchedule,
    caps: &[f64],
    routes: &mut dyn FnMut() -> PathRoutes,
    eager: u64,
) -> Vec<std::result::Result<(sim::Outcome, Vec<u64>), String>> {
    WAYS.iter()
        .map(|&settings| {
            let mut times = sim::SendTimes::default();
            let o = sim::run_with(
                sched,
                caps,
                &mut routes(),
                eager,
                settings,
                Some(&mut times),
            )
            .map_err(|e| e.to_string())?;
            let bits = times.start_us.iter().chain(&times.delivered_us);
            Ok((o, bits.map(|t| t.to_bits()).collect()))
        })
        .collect()
}

/// A random schedule of `sends` (source, hop, size, dependency bits,
/// paths as (links, latency), delay) over `ranks` ranks, as the property
/// tests draw them.
#[allow(clippy::type_complexity)]
fn random_schedule(
    ranks: u32,
    sends: &[(u32, u32, usize, u32, Vec<(Vec<u32>, usize)>, usize)],
) -> (SendSchedule, Vec<Vec<(Vec<u32>, f64)>>) {
    let sizes = [0u64, 100, 200, 1000];
    let latencies = [0.0, 1.0, 2.5];
    let delays = [0.0, 0.5, 3.0];
    let list: Vec<(u32, u32, u64, Vec<u32>)> = sends
        .iter()
        .enumerate()
        .map(|(i, &(src, hop, size, deps, _, _))| {
            // Up to two earlier sends, chosen by the bits of `deps`.
            let deps: Vec<u32> = (0..i as u32)
                .rev()
                .take(2)
                .filter(|&j| deps & (1 << (j % 2)) != 0)
                .collect();
            (src % ranks, (src + hop) % ranks, sizes[size], deps)
        })
        .collect();
    let by_hand: Vec<(u32, u32, u64, &[u32])> = list
        .iter()
        .map(|(s, d, b, deps)| (*s, *d, *b, deps.as_slice()))
        .collect();
    let mut sched = SendSchedule::by_hand(ranks as usize, &by_hand);
    for (i, s) in sends.iter().enumerate() {
        sched.delay_us[i] = delays[s.5];
    }
    let paths = sends
        .iter()
        .map(|s| {
            s.4.iter()
                .map(|(links, lat)| {
                    let mut links = links.clone();
                    links.dedup();
                    (links, latencies[*lat])
                })
                .collect()
        })
        .collect();
    (sched, paths)
}

proptest::proptest! {
    /// Random small schedules (sizes and speeds from short lists, so that
    /// flows often end together and share links, some sprayed, with
    /// latencies, delays and rendezvous) give the same outcome and the
    /// same delivery time of every send, to the bit, with and without
    /// grouping.
    #[test]
    fn grouped_and_plain_runs_agree(
        sends in proptest::collection::vec(
            (0u32..5, 1u32..5, 0usize..4, 0u32..4, proptest::collection::vec((proptest::collection::vec(0u32..6, 1..4), 0usize..3), 1..3), 0usize..3),
            1..40,
        ),
        fast_links in proptest::collection::vec(proptest::bool::ANY, 6),
        rendezvous in proptest::bool::ANY,
    ) {
        let (sched, paths) = random_schedule(5, &sends);
        let caps: Vec<f64> = fast_links.iter().map(|&f| if f { 10.0 } else { 5.0 }).collect();
        let eager = if rendezvous { 150 } else { EAGER };
        let runs = run_ways(&sched, &caps, &mut || PathRoutes(paths.clone()), eager);
        proptest::prop_assert_eq!(&runs[0], &runs[1]);
        proptest::prop_assert_eq!(&runs[1], &runs[2]);
    }

    /// The same over many links and short single paths, where flows often
    /// never share a link and the lone pass gives the result: the three
    /// ways agree to the bit, and the lone pass answers only where the
    /// event loop saw at most one flow on a link.
    #[test]
    fn lone_and_general_runs_agree(
        sends in proptest::collection::vec(
            (0u32..8, 1u32..8, 0usize..4, 0u32..4, proptest::collection::vec((proptest::collection::vec(0u32..40, 1..3), 0usize..3), 1..2), 0usize..3),
            1..40,
        ),
        fast_links in proptest::collection::vec(proptest::bool::ANY, 40),
        rendezvous in proptest::bool::ANY,
        steps_backwards in proptest::bool::ANY,
    ) {
        let (mut sched, paths) = random_schedule(8, &sends);
        if steps_backwards {
            // Indices against the steps: the lone pass takes the gates'
            // lists instead of following the steps.
            let n = sched.step.len() as u32;
            for (i, s) in sched.step.iter_mut().enumerate() {
                *s = n - 1 - i as u32;
            }
        }
        let caps: Vec<f64> = fast_links.iter().map(|&f| if f { 10.0 } else { 5.0 }).collect();
        let eager = if rendezvous { 150 } else { EAGER };
        let runs = run_ways(&sched, &caps, &mut || PathRoutes(paths.clone()), eager);
        proptest::prop_assert_eq!(&runs[0], &runs[1]);
        proptest::prop_assert_eq!(&runs[1], &runs[2]);
        let lone = sim::lone(&sched, &caps, &mut PathRoutes(paths.clone()), eager, None).unwrap();
        match &runs[1] {
            Ok((general, _)) => proptest::prop_assert!(lone.is_none() || general.max_link_flows <= 1),
            Err(_) => proptest::prop_assert!(lone.is_none()),
        }
    }
}

/// On plans: ring, halving-doubling and the pipelined trees (contended)
/// give the same outcome and delivery times with and without grouping,
/// and with and without the lone pass.
#[test]
fn grouped_and_plain_runs_agree_on_plans() {
    let params = Params::default();
    let ft = fat_tree_plan("tiers=2,sub-nodes=32,ports=8");
    let bg = bigraph_plan(2, 8);
    for plan in [&ft, &bg] {
        for a in [
            Algorithm::Ring,
            Algorithm::Hd,
            Algorithm::DoubleTree,
            Algorithm::OverlappedTree,
        ] {
            for size in [64 << 10, 16 << 20] {
                let ctx = Context::new(plan, a, None, &params).unwrap();
                let (_, k) = ctx.closed_form(size).unwrap();
                let sched = ctx.schedule(size, k).unwrap();
                let one = |settings: sim::Settings| {
                    let mut routes = PlanRoutes::new(&ctx, &sched, 1, Policy::Ecmp);
                    let mut at = sim::SendTimes::default();
                    let o = sim::run_with(
                        &sched,
                        &ctx.caps,
                        &mut routes,
                        params.eager_bytes,
                        settings,
                        Some(&mut at),
                    )
                    .unwrap();
                    (o, at)
                };
                let general = one(WAYS[1]);
                assert_eq!(
                    one(WAYS[0]),
                    general,
                    "{} on {}",
                    a.as_str(),
                    plan.describe()
                );
                assert_eq!(
                    one(WAYS[2]),
                    general,
                    "{} on {}",
                    a.as_str(),
                    plan.describe()
                );
            }
        }
    }
}

/// The schedule streamed into the lone pass (never stored) gives the
/// event loop's outcome on the stored schedule, to the bit, and the same
/// schedule figures; where flows share a link it declines. Streamed into
/// the step-synchronous mode, it gives that mode's time on the stored
/// schedule. Ring, HD, HDRM, BlueConnect and 2D on a BiGraph, a fat-tree
/// and an NVLink server plan, under two ECMP seeds, D-mod-K and spraying,
/// with rendezvous and every send eager.
#[test]
fn streamed_lone_pass_equals_the_event_loop_on_the_stored_schedule() {
    let plans = [
        bigraph_plan(4, 16),
        fat_tree_plan("tiers=2,sub-nodes=32,ports=8"),
        crate::design::bundled("h100-8x32", Some(crate::plan::Topology::RailOptimized)),
    ];
    let mut lone_runs = 0;
    for plan in &plans {
        for a in [
            Algorithm::Ring,
            Algorithm::Hd,
            Algorithm::Hdrm,
            Algorithm::BlueConnect,
            Algorithm::TwoD,
        ] {
            for eager in [Params::default().eager_bytes, EAGER] {
                let params = Params {
                    eager_bytes: eager,
                    ..Params::default()
                };
                let Ok(ctx) = Context::new(plan, a, None, &params) else {
                    continue;
                };
                for size in [64 << 10, 16 << 20] {
                    for (seed, policy) in [
                        (0, Policy::Ecmp),
                        (1, Policy::Ecmp),
                        (0, Policy::DModK),
                        (0, Policy::Spray),
                    ] {
                        let what = format!(
                            "{} on {}, {size} B, seed {seed}, {policy:?}, eager {eager}",
                            a.as_str(),
                            plan.describe()
                        );
                        let (_, k) = ctx.closed_form(size).unwrap();
                        let sched = ctx.schedule(size, k).unwrap();
                        // The step-synchronous mode, streamed and stored.
                        let mut routes = PlanRoutes::new(&ctx, &sched, seed, policy);
                        let fast = fast::run(&sched, &ctx.caps, &mut routes, false).unwrap();
                        let (out, streamed) = ctx
                            .streamed(size, seed, policy, Method::Fast, None)
                            .unwrap()
                            .unwrap();
                        assert_eq!(out.time_us.to_bits(), fast.time_us.to_bits(), "{what}");
                        assert_eq!(out.max_link_flows, fast.max_link_flows, "{what}");
                        assert_eq!(streamed.sends, sched.len(), "{what}");
                        let mut routes = PlanRoutes::new(&ctx, &sched, seed, policy);
                        let general =
                            sim::run_with(&sched, &ctx.caps, &mut routes, eager, WAYS[1], None)
                                .unwrap();
                        match ctx
                            .streamed(size, seed, policy, Method::Event, None)
                            .unwrap()
                        {
                            Some((out, streamed)) => {
                                lone_runs += 1;
                                assert_eq!(out, general, "{what}");
                                assert_eq!(streamed.sends, sched.len(), "{what}");
                                assert_eq!(streamed.steps, sched.steps().len(), "{what}");
                                assert_eq!(
                                    streamed.bytes_sent_by_0,
                                    sched.bytes_sent_by(0),
                                    "{what}"
                                );
                                assert_eq!(streamed.final_recv, sched.final_recv, "{what}");
                                assert_eq!(streamed.tail_us, sched.tail_us, "{what}");
                            }
                            None => assert!(
                                general.max_link_flows > 1 || sched.is_empty(),
                                "{what}: declined without sharing"
                            ),
                        }
                    }
                }
            }
        }
    }
    assert!(lone_runs >= 20, "only {lone_runs} runs took the lone pass");
}
