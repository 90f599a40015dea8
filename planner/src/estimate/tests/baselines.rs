//! Gloo's two-level allreduce, the flat top-k all-gather and the
//! parameter server: closed form against the simulation without
//! contention, and their bytes.

use super::*;

/// The event-driven and step-synchronous times of `a` against its closed
/// form, where no directed link carries two flows of a step.
fn agree(plan: &CheckedPlan, a: Algorithm, ranks: Option<usize>, params: &Params, tol: f64) {
    for size in [64u64 << 10, 16 << 20] {
        for m in [Method::Event, Method::Fast] {
            let e = estimate(plan, a, ranks, size, params, &opts(m)).unwrap();
            let r = e.time_us / e.closed_form_us;
            assert!(
                (r - 1.0).abs() <= tol,
                "{} {m:?} at {size} B on {}: {:.2} µs against the closed form's {:.2} µs",
                a.as_str(),
                plan.describe(),
                e.time_us,
                e.closed_form_us
            );
        }
    }
}

#[test]
fn two_level_follows_blueconnect_eq_4() {
    // 4 ranks under each of 4 leaves; the 4 masters, one a leaf, run
    // halving-doubling among themselves, one flow up each leaf. The
    // schedule charges a gather sender's last reduce-scatter reduction
    // after it has received its subtree's shards (where a rank would have
    // reduced while waiting), up to log2(p0) - 1 extra γ·N/p0 that the
    // closed form does not count.
    let plan = fat_tree_plan("tiers=2,sub-nodes=16,ports=8");
    agree(&plan, Algorithm::TwoLevel, None, &no_hop_latency(), 0.01);
    agree(
        &plan,
        Algorithm::TwoLevel,
        None,
        &Params {
            gamma_ns_per_byte: 0.0,
            ..no_hop_latency()
        },
        1e-6,
    );
    let plan = bigraph_plan(4, 16);
    let s = send_schedule(
        &plan,
        Algorithm::TwoLevel,
        None,
        1 << 20,
        &Params::default(),
    )
    .unwrap();
    // Ring reduce-scatter and all-gather (3 steps each), gather and
    // scatter (2 rounds each) under a switch; 2·4 halving-doubling steps
    // among the masters.
    assert_eq!(s.steps().len(), 3 + 2 + 8 + 2 + 3);
    assert_eq!(s.steps()[3].phase, StepPhase::Gather);
    // A master sends its shard up the ring, nothing in the gather, the
    // halving-doubling's 2·(15/16) of the buffer, and the scatter's three
    // quarters.
    let n = 1u64 << 20;
    assert_eq!(
        s.bytes_sent_by(0),
        3 * n / 4 + 2 * (n - n / 16) + 3 * n / 4 + 3 * n / 4
    );
    // A non-master at position 1 only sends its ring share and one shard.
    assert_eq!(s.bytes_sent_by(1), 3 * n / 4 + n / 4 + 3 * n / 4);
}

#[test]
fn topk_allgather_sends_value_index_pairs_to_everyone() {
    // Eight ranks under one leaf: no link carries two flows of a step.
    let plan = fat_tree_plan("tiers=2,sub-nodes=8,ports=16");
    let params = Params {
        density: 0.01,
        ..no_hop_latency()
    };
    agree(&plan, Algorithm::TopKAllGather, None, &params, 1e-6);
    let n = 1u64 << 20;
    for w in [4u32, 2] {
        let params = Params {
            gradient_bytes: w,
            ..params.clone()
        };
        let s = send_schedule(&plan, Algorithm::TopKAllGather, None, n, &params).unwrap();
        let k = (0.01 * (n / u64::from(w)) as f64).ceil() as u64;
        // Recursive doubling: every rank sends 1 + 2 + 4 = 7 blocks of
        // k pairs.
        assert_eq!(s.bytes_sent_by(0), 7 * k * (u64::from(w) + 4), "w = {w}");
    }
    // Odd rank counts all-gather by ring.
    let s = send_schedule(&plan, Algorithm::TopKAllGather, Some(6), n, &params).unwrap();
    assert_eq!(s.steps().len(), 5);
    agree(&plan, Algorithm::TopKAllGather, Some(6), &params, 1e-6);
}

#[test]
fn parameter_server_pushes_and_pulls_every_shard() {
    // Under one leaf every NIC carries its seven pushes (and pulls) at a
    // seventh of its speed each, which is the closed form's (P-1)/P·Nβ.
    let plan = fat_tree_plan("tiers=2,sub-nodes=8,ports=16");
    agree(
        &plan,
        Algorithm::ParameterServer,
        None,
        &no_hop_latency(),
        1e-6,
    );
    let n = 8u64 << 20;
    let s = send_schedule(
        &plan,
        Algorithm::ParameterServer,
        None,
        n,
        &Params::default(),
    )
    .unwrap();
    assert_eq!(s.len(), 2 * 8 * 7);
    assert_eq!(s.steps().len(), 2);
    assert_eq!(s.bytes_sent_by(3), 2 * 7 * n / 8);
}

#[test]
fn the_new_algorithms_refuse_what_they_cannot_run() {
    let plan = bigraph_plan(4, 16);
    let e = estimate(
        &plan,
        Algorithm::TwoLevel,
        Some(6),
        1 << 20,
        &Params::default(),
        &opts(Method::ClosedForm),
    );
    assert!(matches!(e, Err(Error::Infeasible { .. })), "{e:?}");
}

/// Issue #19: HiTopKComm's closed form and its simulation agree in time,
/// not only in bytes, for FP32 and FP16, where no link is shared (four
/// ranks under each of four leaves, the inter-node all-gather sprayed
/// over the spines).
#[test]
fn hitopk_closed_form_follows_the_simulation_without_contention() {
    let plan = fat_tree_plan("tiers=2,sub-nodes=16,ports=8");
    for w in [4u32, 2] {
        let params = Params {
            gradient_bytes: w,
            ..no_hop_latency()
        };
        for size in [64u64 << 10, 16 << 20] {
            for m in [Method::Event, Method::Fast] {
                let options = Options {
                    routing: crate::network::Policy::Spray,
                    ..opts(m)
                };
                let e = estimate(&plan, Algorithm::HiTopK, None, size, &params, &options).unwrap();
                assert!(
                    (e.time_us / e.closed_form_us - 1.0).abs() < 1e-3,
                    "w = {w}, {size} B, {m:?}: {} against {}",
                    e.time_us,
                    e.closed_form_us
                );
            }
        }
    }
}
