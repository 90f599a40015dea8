//! C-Cube's trees: the closed forms against the simulator with a channel
//! per tree edge, its Fig. 12 headline and the gradient turnaround.

use super::*;
use crate::network::Policy;

fn pair(link_gbps: f64) -> Params {
    let mut p = Params {
        link_gbps: Some(link_gbps),
        ..Params::default()
    };
    p.set("channels", "pair").unwrap();
    p
}

const TREES: [Algorithm; 4] = [
    Algorithm::PipelinedTree,
    Algorithm::DoubleTree,
    Algorithm::OverlappedTree,
    Algorithm::OverlappedDoubleTree,
];

#[test]
fn with_a_channel_per_tree_edge_the_simulation_follows_the_closed_form() {
    // No link is shared, so the event-driven time is the closed form up to
    // the pipeline's fill (the closed form counts `h + K` steps a phase
    // where the schedule needs `h + K - 1`, and charges every step the
    // reduction of two children).
    let plan = bigraph_plan(2, 8);
    let params = pair(200.0);
    for a in TREES {
        for size in [1u64 << 20, 64 << 20] {
            let e = estimate(&plan, a, Some(8), size, &params, &opts(Method::Event)).unwrap();
            let ratio = e.time_us / e.closed_form_us;
            assert!(
                (0.85..=1.0001).contains(&ratio),
                "{} at {size} B: event {:.1} µs, closed form {:.1} µs",
                a.as_str(),
                e.time_us,
                e.closed_form_us
            );
            assert_eq!(e.schedule.unwrap().max_link_flows, 1, "{}", a.as_str());
        }
    }
}

#[test]
fn overlapped_double_tree_beats_the_double_tree_as_c_cube_fig_12_says() {
    // C-Cube Fig. 12a: C1 (overlapped double tree) 1.75x faster than B
    // (double tree) at 64 MB and up to 1.8x for larger data, on a DGX-1
    // (8 GPUs, 25 GB/s NVLinks).
    let plan = bigraph_plan(2, 8);
    let params = pair(200.0);
    let time = |a: Algorithm, size: u64, m: Method| {
        estimate(&plan, a, Some(8), size, &params, &opts(m))
            .unwrap()
            .time_us
    };
    for m in [Method::ClosedForm, Method::Event] {
        let r64 = time(Algorithm::DoubleTree, 64 << 20, m)
            / time(Algorithm::OverlappedDoubleTree, 64 << 20, m);
        let r1g = time(Algorithm::DoubleTree, 1 << 30, m)
            / time(Algorithm::OverlappedDoubleTree, 1 << 30, m);
        assert!((1.55..1.9).contains(&r64), "{m:?}: {r64}");
        assert!(r1g > r64 && r1g < 2.0, "{m:?}: {r1g} after {r64}");
        // Eq. 6 against eq. 7: the single overlapped tree halves the
        // pipelined tree's bandwidth term.
        let single = time(Algorithm::PipelinedTree, 1 << 30, m)
            / time(Algorithm::OverlappedTree, 1 << 30, m);
        assert!((1.6..2.0).contains(&single), "{m:?}: {single}");
    }
}

#[test]
fn on_one_nic_per_rank_the_overlapped_tree_loses_to_the_double_tree() {
    // Through one NIC the overlapped tree's inner rank sends three chunks
    // a step (3βN), the double tree two halves (βN per phase): the
    // reversal issue #19 found (0.70x), which is the fabric, not eq. 7.
    let plan = bigraph_plan(2, 8);
    let params = Params::default();
    let t = |a: Algorithm| {
        estimate(&plan, a, None, 64 << 20, &params, &opts(Method::ClosedForm))
            .unwrap()
            .time_us
    };
    let r = t(Algorithm::DoubleTree) / t(Algorithm::OverlappedTree);
    assert!((0.6..0.8).contains(&r), "{r}");
    // The overlapped double tree saves only latency there.
    let r = t(Algorithm::DoubleTree) / t(Algorithm::OverlappedDoubleTree);
    assert!((1.0..1.2).contains(&r), "{r}");
}

#[test]
fn channels_pair_is_refused_off_the_trees() {
    let plan = bigraph_plan(2, 8);
    let e = estimate(
        &plan,
        Algorithm::Ring,
        None,
        1 << 20,
        &pair(100.0),
        &opts(Method::Event),
    )
    .unwrap_err();
    assert!(e.to_string().contains("channels=pair"), "{e}");
    // NCCL's trees take their links from the plan and its NVLink tier.
    let e = estimate(
        &plan,
        Algorithm::NcclTree,
        None,
        1 << 20,
        &pair(100.0),
        &opts(Method::Event),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("which nccl-tree does not take"),
        "{e}"
    );
}

#[test]
fn overlap_shortens_the_gradient_turnaround() {
    let plan = bigraph_plan(2, 8);
    let params = pair(200.0);
    let s = send_schedule(
        &plan,
        Algorithm::OverlappedDoubleTree,
        Some(8),
        64 << 20,
        &params,
    )
    .unwrap();
    // Without the barrier, later chunks queue behind earlier ones on a
    // channel (12% above the first in this case).
    for (method, timeline, spread) in [
        (Method::Fast, Timeline::StepSynchronous, 1.05),
        (Method::Event, Timeline::EventDriven, 1.2),
    ] {
        let turn = |a: Algorithm| {
            steps_and_turnaround(
                &plan,
                a,
                Some(8),
                64 << 20,
                &params,
                0,
                Policy::Ecmp,
                method,
            )
            .unwrap()
            .1
            .unwrap()
        };
        let b = turn(Algorithm::DoubleTree);
        let c1 = turn(Algorithm::OverlappedDoubleTree);
        assert_eq!((b.timeline, c1.timeline), (timeline, timeline));
        assert!(b.first_us > 5.0 * c1.first_us, "{b:?} {c1:?}");
        assert!(c1.first_us <= c1.mean_us && c1.mean_us <= c1.max_us);
        // Every chunk of the overlapped tree turns around in 2h + 1 steps
        // (the first ones in shorter steps: the broadcast has not started).
        assert!(c1.max_us < spread * c1.first_us, "{c1:?}");
        assert_eq!(c1.chunks, 2 * s.chunks());
    }
    // Ring has no chunks to turn around.
    let (_, none) = steps_and_turnaround(
        &plan,
        Algorithm::Ring,
        None,
        1 << 20,
        &Params::default(),
        0,
        Policy::Ecmp,
        Method::Event,
    )
    .unwrap();
    assert!(none.is_none());
}

#[test]
fn turnaround_by_hand() {
    // Two chunks over steps 0-2 and 1-3 with step times 1, 2, 3, 4.
    let (none, first, second): (&[u32], &[u32], &[u32]) = (&[], &[0], &[1]);
    let mut s = SendSchedule::by_hand(
        2,
        &[
            (0, 1, 1, none),
            (0, 1, 1, none),
            (1, 0, 1, first),
            (1, 0, 1, second),
        ],
    );
    s.chunk = vec![0, 1, 0, 1];
    s.step = vec![0, 1, 2, 3];
    let t = s.turnaround(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(
        (t.timeline, t.chunks, t.first_us, t.mean_us, t.max_us),
        (Timeline::StepSynchronous, 2, 6.0, 7.5, 9.0)
    );
    // Event-driven: chunk 0 starts at 0 (send 0) and is delivered at 7
    // (send 2); chunk 1 starts at 2 (send 1) and is delivered at 5.
    let t = s
        .turnaround_of_sends(&[0.0, 2.0, 4.0, 3.0], &[1.0, 3.0, 7.0, 5.0])
        .unwrap();
    assert_eq!(
        (t.timeline, t.chunks, t.first_us, t.mean_us, t.max_us),
        (Timeline::EventDriven, 2, 7.0, 5.0, 7.0)
    );
    // Times of another schedule's sends give none.
    assert!(s.turnaround_of_sends(&[0.0], &[1.0]).is_none());
}

/// The event-driven turnaround comes from the simulation's own times: on
/// two ranks, one chunk, 1 MiB at 100 Gbps, a chunk goes up in one send and
/// comes back in another, each `latency + bytes / w`, with the reduction
/// between them.
#[test]
fn event_driven_turnaround_follows_the_simulation() {
    let plan = bigraph_plan(2, 8);
    let params = pair(100.0);
    let (_, t) = steps_and_turnaround(
        &plan,
        Algorithm::Tree,
        Some(2),
        1 << 20,
        &params,
        0,
        Policy::Ecmp,
        Method::Event,
    )
    .unwrap();
    let t = t.unwrap();
    let e = estimate(
        &plan,
        Algorithm::Tree,
        Some(2),
        1 << 20,
        &params,
        &opts(Method::Event),
    )
    .unwrap();
    // One chunk: from the first send's start to the last delivery, which
    // is the whole allreduce.
    assert_eq!((t.timeline, t.chunks), (Timeline::EventDriven, 1));
    assert_eq!(t.first_us, e.time_us);
}
