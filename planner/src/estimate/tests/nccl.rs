//! `nccl-ring`: NCCL-style rail-aligned rings over the intra-server tier
//! (issue 18).

use super::intra::{bundled_as as bundled, spray};
use super::*;
use crate::network::{Network, Policy};
use crate::ranks::Link;
use schedules::nccl_rings;
use sim::Routes;

/// `m` servers of `g` ranks, numbered server by server.
pub(super) fn servers(m: usize, g: usize) -> Vec<Vec<u32>> {
    (0..m)
        .map(|s| (0..g).map(|j| (s * g + j) as u32).collect())
        .collect()
}

/// The `(src, dst, bytes)` of every send of step `k`.
fn step_sends(s: &SendSchedule, k: usize) -> Vec<(usize, usize, u64)> {
    let mut out: Vec<_> = (0..s.len())
        .filter(|&i| s.step_of(i) == k)
        .map(|i| s.send(i))
        .collect();
    out.sort_unstable();
    out
}

/// Per rank, the ranks whose data reaches it: the senders of the sends
/// each send into it (transitively) waits for, its own sender included.
pub(super) fn heard(s: &SendSchedule, p: usize) -> Vec<Vec<bool>> {
    let mut from: Vec<Vec<bool>> = Vec::with_capacity(s.len());
    let mut heard = vec![vec![false; p]; p];
    for i in 0..s.len() {
        let (src, dst, _) = s.send(i);
        let mut seen = vec![false; p];
        seen[src] = true;
        for &d in s.deps(i) {
            for (x, &y) in seen.iter_mut().zip(&from[d as usize]) {
                *x |= y;
            }
        }
        for (h, &y) in heard[dst].iter_mut().zip(&seen) {
            *h |= y;
        }
        from.push(seen);
    }
    heard
}

#[test]
fn two_servers_of_two_gpus_by_hand() {
    // Ring 0 visits 0, 1 | 2, 3; ring 1 visits 1, 0 | 3, 2. Each carries
    // 8 of the 16 bytes in chunks of 2. Leaving a server, the last GPU of
    // the ring hands the chunk to the ring's rail GPU, which sends it on
    // its rail: ring 0 on rail 0 (0 -> 2, 2 -> 0), ring 1 on rail 1.
    let s = nccl_rings(&servers(2, 2), 16, 0.0).unwrap();
    assert_eq!(s.steps().len(), 2 * 2 * 3);
    assert_eq!(
        step_sends(&s, 0),
        [
            (0, 1, 2),
            (0, 1, 2),
            (1, 0, 2),
            (1, 0, 2),
            (2, 3, 2),
            (2, 3, 2),
            (3, 2, 2),
            (3, 2, 2)
        ]
    );
    assert_eq!(
        step_sends(&s, 1),
        [(0, 2, 2), (1, 3, 2), (2, 0, 2), (3, 1, 2)]
    );
    assert_eq!(s.steps()[0].phase, StepPhase::ReduceScatter);
    assert_eq!(s.steps()[11].phase, StepPhase::AllGather);
    // 2 rings x 6 ring steps x (4 sends + 2 rail hops).
    assert_eq!(s.len(), 2 * 6 * 6);
}

#[test]
fn every_rank_hears_from_every_rank_and_rail_hops_stay_on_their_rail() {
    for (m, g) in [(1, 4), (3, 1), (2, 2), (3, 4), (4, 8)] {
        let p = m * g;
        // Divisible by every C·P below: chunks of one size.
        let n = 3 << 20;
        let s = nccl_rings(&servers(m, g), n, 0.0).unwrap();
        let relays = if m > 1 && g > 1 { m } else { 0 };
        assert_eq!(s.len(), g * 2 * (p - 1) * (p + relays), "{m}x{g}");
        for (r, h) in heard(&s, p).iter().enumerate() {
            let missing: Vec<usize> = (0..p).filter(|&q| q != r && !h[q]).collect();
            assert!(
                missing.is_empty() || p == 1,
                "{m}x{g}: rank {r} misses {missing:?}"
            );
        }
        for i in 0..s.len() {
            let (src, dst, bytes) = s.send(i);
            assert!(bytes > 0);
            if src / g == dst / g {
                // Inside a server: to the next GPU (the hand-over too).
                assert_eq!(dst % g, (src + 1) % g, "{m}x{g}: {src} -> {dst}");
            } else {
                // Between servers: the same rail, to the next server.
                assert_eq!(src % g, dst % g, "{m}x{g}: {src} -> {dst}");
                assert_eq!(dst / g, (src / g + 1) % m, "{m}x{g}: {src} -> {dst}");
            }
        }
        // Each of the C = g rings moves one chunk of N/(CP) per rank and
        // ring step, and one more per server over the hand-over.
        let chunk = n / (g * p) as u64;
        let steps = 2 * (p as u64 - 1);
        assert_eq!(
            s.total_bytes(),
            g as u64 * steps * (p + relays) as u64 * chunk
        );
    }
}

#[test]
fn one_gpu_per_server_is_the_plain_ring() {
    let a = nccl_rings(&servers(5, 1), 1000, 0.01).unwrap();
    let b = schedules::ring(5, 1000, 0.01).unwrap();
    assert_eq!(a.len(), b.len());
    for i in 0..a.len() {
        assert_eq!(a.send(i), b.send(i));
        assert_eq!(a.deps(i), b.deps(i));
    }
}

#[test]
fn closed_form_agrees_with_the_simulation_without_latency_or_reduction() {
    // The rings share each GPU's NVLink links, one flow per ring; without
    // α and γ every hop moves at its share and the closed form is exact.
    let params = Params {
        alpha_us: 0.0,
        nic_us: 0.0,
        gamma_ns_per_byte: 0.0,
        ..Params::default()
    };
    let n = 64 << 20;
    for (name, topology) in [
        ("h100-8x32", Topology::RailOptimized),
        ("h100-8x32", Topology::FatTree),
        ("cloud-8x16", Topology::FatTree),
        ("dgx1-v100", Topology::FatTree),
    ] {
        let plan = bundled(name, topology);
        let e = estimate(&plan, Algorithm::NcclRing, None, n, &params, &spray()).unwrap();
        assert!(
            (e.time_us - e.closed_form_us).abs() <= 1e-6 * e.closed_form_us,
            "{name} {topology:?}: simulated {} µs, closed form {} µs",
            e.time_us,
            e.closed_form_us
        );
    }
    // With the default α and γ on the leaf-spine, the rail hop paces
    // every step and the closed form is exact too.
    let plan = bundled("h100-8x32", Topology::FatTree);
    let e = estimate(
        &plan,
        Algorithm::NcclRing,
        None,
        n,
        &Params::default(),
        &spray(),
    )
    .unwrap();
    assert!((e.time_us - e.closed_form_us).abs() <= 1e-6 * e.closed_form_us);
}

/// On the rail-optimized h100-8x32 plan: asserts that `algorithm` at
/// 256 MiB is more than 3 times faster than the flat ring and that no send
/// of its 512 KiB schedule (`nccl-tree`: one chunk of 32 KiB a tree) crosses an inter-switch link under
/// ECMP; returns its sends over NVLink only and through the fabric.
pub(super) fn beats_the_flat_ring_off_the_spines(algorithm: Algorithm) -> (usize, usize) {
    let plan = bundled("h100-8x32", Topology::RailOptimized);
    let params = Params::default();
    let n = 256 << 20;
    let run = |a| estimate(&plan, a, None, n, &params, &opts(Method::Event)).unwrap();
    let (ring, nccl) = (run(Algorithm::Ring), run(algorithm));
    assert_eq!(nccl.ranks, 256);
    assert!(
        nccl.time_us * 3.0 < ring.time_us,
        "{} {} µs, ring {} µs",
        algorithm.as_str(),
        nccl.time_us,
        ring.time_us
    );
    let ctx = Context::new(&plan, algorithm, None, &params).unwrap();
    let net = Network::new(&plan, plan.source()).unwrap();
    let fabric = net.link_count();
    let sched = ctx.schedule(512 << 10, 1).unwrap();
    let mut routes = PlanRoutes::new(&ctx, &sched, 0, Policy::Ecmp);
    let (mut nvlink, mut rail) = (0usize, 0usize);
    for i in 0..sched.len() {
        let route = routes.route(i).unwrap();
        let links = route.links();
        if links.iter().all(|&l| l as usize >= fabric) {
            nvlink += 1;
            continue;
        }
        rail += 1;
        for &l in links {
            assert!(
                !matches!(net.link(l as usize), Some(Link::InterSwitch { .. })),
                "send {i} {:?} crosses {}",
                sched.send(i),
                net.describe(l as usize)
            );
        }
    }
    (nvlink, rail)
}

#[test]
fn on_rails_nccl_ring_beats_the_flat_ring_and_never_climbs_to_a_spine() {
    let (nvlink, rail) = beats_the_flat_ring_off_the_spines(Algorithm::NcclRing);
    // 8 rings x 510 steps: 256 NVLink hops and 32 rail hops each.
    assert_eq!((nvlink, rail), (8 * 510 * 256, 8 * 510 * 32));
}

/// `algorithm` at 1 MiB on a BiGraph of 4 x 8 sub-nodes in servers of 4
/// sub-nodes, without the tier: the event-driven estimate; asserts that
/// 30 ranks (a server split) are refused with the fix named.
pub(super) fn on_servers_of_sub_nodes(algorithm: Algorithm) -> Estimate {
    let plan = bigraph_plan(4, 8);
    let params = Params::default();
    let err = estimate(
        &plan,
        algorithm,
        Some(30),
        1 << 20,
        &params,
        &opts(Method::ClosedForm),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("on every server") && err.contains("multiple of 4"),
        "{err}"
    );
    let e = estimate(
        &plan,
        algorithm,
        None,
        1 << 20,
        &params,
        &opts(Method::Event),
    )
    .unwrap();
    assert!(e.time_us > 0.0 && e.closed_form_us > 0.0, "{e:?}");
    e
}

#[test]
fn without_the_tier_the_rings_follow_the_servers_sub_nodes() {
    // 4 rings over 32 ranks, 62 steps of 32 hops and 8 hand-overs each.
    let e = on_servers_of_sub_nodes(Algorithm::NcclRing);
    assert_eq!(e.schedule.unwrap().sends, 4 * 62 * (32 + 8));
}
