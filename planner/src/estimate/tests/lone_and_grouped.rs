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
        whole: false,
    },
    sim::Settings {
        check: false,
        plain: false,
        general: true,
        whole: false,
    },
    sim::Settings {
        check: false,
        plain: true,
        general: true,
        whole: false,
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

/// The part of the flows held by full links water-filled (the default),
/// its rates checked after every instant against a water-filling of every
/// flow in flight.
pub(super) const PART_CHECKED: sim::Settings = sim::Settings {
    check: true,
    plain: false,
    general: true,
    whole: false,
};

/// Every connected component around a change water-filled whole.
pub(super) const WHOLE: sim::Settings = sim::Settings {
    check: false,
    plain: false,
    general: true,
    whole: true,
};

/// The outcome and every start and delivery time of `sched` run with
/// `settings` (or its error).
pub(super) fn run_times(
    sched: &SendSchedule,
    caps: &[f64],
    mut routes: impl sim::Routes,
    eager: u64,
    settings: sim::Settings,
) -> std::result::Result<(sim::Outcome, sim::SendTimes), String> {
    let mut times = sim::SendTimes::default();
    let o = sim::run_with(sched, caps, &mut routes, eager, settings, Some(&mut times))
        .map_err(|e| e.to_string())?;
    Ok((o, times))
}

/// Whether two runs agree within rounding (a relative 1e-9 on every time)
/// on everything but the count of water-fillings, else how they differ.
pub(super) fn same_within_rounding(
    a: &(sim::Outcome, sim::SendTimes),
    b: &(sim::Outcome, sim::SendTimes),
) -> std::result::Result<(), String> {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    let (oa, ob) = (&a.0, &b.0);
    if !close(oa.time_us, ob.time_us)
        || oa.max_link_flows != ob.max_link_flows
        || oa.events != ob.events
    {
        return Err(format!("outcomes {oa:?} and {ob:?}"));
    }
    let ta = a.1.start_us.iter().chain(&a.1.delivered_us);
    let tb = b.1.start_us.iter().chain(&b.1.delivered_us);
    if a.1.start_us.len() != b.1.start_us.len() {
        return Err("different numbers of sends".to_string());
    }
    for (k, (&x, &y)) in ta.zip(tb).enumerate() {
        if !close(x, y) {
            return Err(format!(
                "time {k} of the starts then deliveries: {x} and {y} µs"
            ));
        }
    }
    Ok(())
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

    /// Water-filling only the part of the flows held together by full
    /// links (the default) gives what water-filling their whole connected
    /// component gives: the same outcome but for the count of
    /// water-fillings, and every start and delivery time within rounding;
    /// the part's rates are also checked after every instant against a
    /// water-filling of every flow in flight.
    #[test]
    fn part_and_whole_water_filling_agree(
        sends in proptest::collection::vec(
            (0u32..5, 1u32..5, 0usize..4, 0u32..4, proptest::collection::vec((proptest::collection::vec(0u32..6, 1..4), 0usize..3), 1..3), 0usize..3),
            1..40,
        ),
        fast_links in proptest::collection::vec(proptest::bool::ANY, 6),
        rendezvous in proptest::bool::ANY,
    ) {
        let (sched, mut paths) = random_schedule(5, &sends);
        // Real routes cross a link once; the water-filling of every flow
        // the check compares with counts a link twice on a route that
        // crosses it twice, where a flow alone takes its room.
        for (links, _) in paths.iter_mut().flatten() {
            let mut seen = Vec::new();
            links.retain(|l| !seen.contains(l) && { seen.push(*l); true });
        }
        let caps: Vec<f64> = fast_links.iter().map(|&f| if f { 10.0 } else { 5.0 }).collect();
        let eager = if rendezvous { 150 } else { EAGER };
        let part = run_times(&sched, &caps, PathRoutes(paths.clone()), eager, PART_CHECKED);
        let whole = run_times(&sched, &caps, PathRoutes(paths.clone()), eager, WHOLE);
        match (part, whole) {
            (Ok(part), Ok(whole)) => {
                if let Err(e) = same_within_rounding(&part, &whole) {
                    proptest::prop_assert!(false, "{}", e);
                }
            }
            (Err(a), Err(b)) => proptest::prop_assert_eq!(a, b),
            (a, b) => proptest::prop_assert!(false, "part {:?}, whole {:?}", a.map(|x| x.0), b.map(|x| x.0)),
        }
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

/// A flow outside the part that runs a hair (less than a relative 1e-9)
/// above the level of a link the part saturates joins the part: every
/// flow on that link is held to the level, as water-filling the whole
/// component holds it. The part grew only for flows more than 1e-9
/// above, so the one below kept its rate, the part's flow kept the rest,
/// and at 1,024 GPUs and 256 MiB (`nccl-tree`) such hairs, compounded
/// over 4 million sends, moved the result by 0.23 %.
#[test]
fn a_flow_a_hair_above_a_saturated_level_joins_the_part() {
    // Link 0 (A, 0.6 B/µs): h (3 B) and f (103 B), 0.3 each; link 1 (L,
    // 1 B/µs): f and g; link 2 (B, 0.5 + 2e-10): g alone, held there.
    // When h ends at 10 µs, f is the part (A is full, L is not): it fills
    // L, whose level is 0.5 - 2e-10, just under g's rate. Max-min fair is
    // 0.5 each on L, so f's last 100 B take 200 µs.
    let sched = SendSchedule::by_hand(6, &[(0, 1, 3, &[]), (2, 3, 103, &[]), (4, 5, 1000, &[])]);
    let paths = vec![
        vec![(vec![0], 0.0)],
        vec![(vec![0, 1], 0.0)],
        vec![(vec![1, 2], 0.0)],
    ];
    let caps = [0.6, 1.0, 0.5 + 2e-10];
    for settings in [PART_CHECKED, WHOLE] {
        let (_, times) =
            run_times(&sched, &caps, PathRoutes(paths.clone()), EAGER, settings).unwrap();
        let f = times.delivered_us[1];
        assert!(
            (f - 210.0).abs() <= 1e-12 * 210.0,
            "{settings:?}: f delivered at {f} µs, not 210"
        );
    }
}
