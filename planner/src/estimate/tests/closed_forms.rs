//! The closed forms against the papers' equations, worked by hand.

use super::*;

// Closed forms against the papers' equations, worked by hand.

#[test]
fn mg_wfbp_table2_by_hand() {
    // p = 4, n = 1000 bytes, α = 2 µs, β = 0.01 µs/B, γ = 0.001 µs/B.
    let (p, n, a, b, g) = (4, 1000.0, 2.0, 0.01, 0.001);
    // Ring: 2·3·2 + (2·3/4·0.01 + 3/4·0.001)·1000 = 12 + 15.75.
    assert_close(models::ring(p, n, a, b, g), 27.75, "ring");
    // Recursive doubling: 2·2 + (0.011)·2·1000.
    assert_close(
        models::recursive_doubling(p, n, a, b, g),
        26.0,
        "recursive doubling",
    );
    // Halving-doubling: 2·2·2 + (0.02 - 0.021/4 + 0.001)·1000.
    assert_close(
        models::halving_doubling(p, n, a, b, g),
        23.75,
        "halving-doubling",
    );
    // Binary tree: 2·2·2 + 0.021·2·1000.
    assert_close(models::binary_tree(p, n, a, b, g), 50.0, "binary tree");
    // One α and β per step gives the same halving-doubling.
    assert_close(
        models::halving_doubling_steps(p, n, &[(a, b), (a, b)], g),
        23.75,
        "halving-doubling by steps",
    );
    assert_eq!(models::ring(1, n, a, b, g), 0.0);
}

#[test]
fn blueconnect_equations_by_hand() {
    // Eq. 1: T_c(4, 1200, 3, 10) = 2·3 + 3/4·120; T_r(3, ...) = 2·3 + 2/3·120.
    assert_close(models::t_rc(4, 1200.0, 3.0, 10.0), 96.0, "T_c");
    assert_close(models::t_rc(3, 1200.0, 3.0, 10.0), 86.0, "T_r");
    // Eq. 3: 2·11·(1 + 100/10).
    assert_close(
        models::ring_one_level(12, 1200.0, 1.0, 10.0),
        242.0,
        "eq. 3",
    );
    // Eq. 4: 2T_c(4) + 2T_r(4) + 2T_r(3) = 22 + 24 + 164.
    assert_close(
        models::two_level(4, 3, 1200.0, (1.0, 1.0), 100.0, 10.0),
        210.0,
        "eq. 4",
    );
    // Eq. 6 on Fig. 2 (12 GPUs = 3 x 2 x 2, w = 100, 200, 600 shared by
    // 1, 3 and 6 ranks): 2·10 + 2·(1 + 200/66.7) + 2·(1 + 100/66.7).
    let levels = [
        models::Level {
            p: 3,
            alpha: 1.0,
            w: 100.0,
        },
        models::Level {
            p: 2,
            alpha: 1.0,
            w: 200.0 / 3.0,
        },
        models::Level {
            p: 2,
            alpha: 1.0,
            w: 600.0 / 6.0,
        },
    ];
    assert_close(
        models::blueconnect(&levels, 1200.0, 0.0, false),
        33.0,
        "eq. 6",
    );
    // One level of rings is eq. 3.
    let one = [models::Level {
        p: 12,
        alpha: 1.0,
        w: 10.0,
    }];
    assert_close(
        models::blueconnect(&one, 1200.0, 0.0, true),
        models::ring_one_level(12, 1200.0, 1.0, 10.0),
        "eq. 6 with one level",
    );
}

#[test]
fn c_cube_equations_by_hand() {
    // P = 8 (log P = 3), N = 10^6 bytes, α = 10 µs, β = 0.001 µs/B.
    let (l, n, a, b) = (3.0, 1e6, 10.0, 0.001);
    // Eq. 4: sqrt(3·1000/10) = sqrt(300).
    let k = models::tree_optimal_chunks(l, n, a, b);
    assert_close(k, 300f64.sqrt(), "eq. 4");
    // Eq. 6: 60 + 2000 + 4·sqrt(30000).
    let t6 = 2060.0 + 4.0 * 30000f64.sqrt();
    assert_close(models::tree_optimal(l, n, a, b), t6, "eq. 6");
    // Eq. 3 and 5 at the optimal K give eq. 6.
    assert_close(models::pipelined_tree(l, n, k, a, b), t6, "eq. 3 at eq. 4");
    // The pipeline form: fixed = log P, a = 2α, b = 2βN.
    let best = models::pipeline(l, 2.0 * a, 2.0 * b * n, 1 << 20);
    assert_close(
        best.continuous_time_us,
        t6,
        "pipeline at the continuous optimum",
    );
    assert_close(best.continuous_chunks, k, "pipeline's optimal K");
    assert!(best.chunks == 17 || best.chunks == 18);
    assert!(best.time_us >= t6);
    // Eq. 7: 60 + 1000 + 3·sqrt(30000).
    let t7 = 1060.0 + 3.0 * 30000f64.sqrt();
    assert_close(models::overlapped_tree_eq7(l, n, a, b), t7, "eq. 7");
    // The overlapped step count 2 log P + K at its best whole K: K = 24 and
    // 25 tie at 30·(10 + 1000/24) = 31·(10 + 40) = 1550, between the
    // continuous 1060 + 2·sqrt(60000) and eq. 7's rounding.
    let over = models::pipeline(2.0 * l, a, b * n, 1 << 20);
    assert_eq!(over.chunks, 24);
    assert_close(over.time_us, 1550.0, "overlapped at K = 24");
    assert_close(
        over.continuous_time_us,
        1060.0 + 2.0 * 60000f64.sqrt(),
        "overlapped continuous",
    );
    assert!(over.continuous_time_us <= over.time_us && over.time_us <= t7);
}

#[test]
fn hitopk_equations_by_hand() {
    // m = 4 nodes of 8 GPUs, d = 10^6 elements, ρ = 0.01, intra (1, 1e-4),
    // inter (5, 1e-3), t2 = 7:
    // t1 = 7 + 4·7·10^6/8·1e-4 = 357; t3 = 5·2 + 4·3·1250·1e-3 = 25;
    // t4 = 3 + 4·7·0.01·10^6·4/8·1e-4 = 17.
    let t = models::hitopk(4, 8, 1e6, 0.01, (1.0, 1e-4), (5.0, 1e-3), 7.0);
    assert_close(t, 357.0 + 7.0 + 25.0 + 17.0, "HiTopKComm");
}

#[test]
fn hdrm_closed_form_matches_eflops_fig16a() {
    // Fig. 16a: HDRM on BiGraph, 256 KiB, 130 µs at 64 nodes and 181 µs at
    // 1,024; the default latencies are calibrated on these two points.
    let params = Params::default();
    for ((m, n), paper) in [((4, 16), 130.0), ((16, 64), 181.0)] {
        let plan = bigraph_plan(m, n);
        let e = estimate(
            &plan,
            Algorithm::Hdrm,
            None,
            256 << 10,
            &params,
            &opts(Method::ClosedForm),
        )
        .unwrap();
        let off = (e.time_us - paper).abs() / paper;
        assert!(
            off < 0.03,
            "{m}x{n}: {} µs against the paper's {paper}",
            e.time_us
        );
    }
}

#[test]
fn hierarchical_and_plan_order_closed_forms_follow_ideal_balancing_on_a_bigraph() {
    // Plan-order halving-doubling and the hierarchical algorithms put the
    // M ranks of a switch on the one link to a switch of the other part
    // (4 flows at 4x16, 8 at 8x32). The closed forms charge each step (or
    // level) the most loaded link with every flow spread evenly over its
    // equal-cost paths, which is what the simulation does under
    // `--routing spray`; they used to charge the switch's uplinks per rank
    // and came out 1.4-1.9x below it at 256 MiB.
    let spray = Options {
        routing: crate::network::Policy::Spray,
        ..opts(Method::Event)
    };
    // A level's α is its longest route (the cross-part steps of a level
    // are one switch shorter), so the hierarchical ones are exact without
    // the switches' latency.
    for (m, n) in [(4, 16), (8, 32)] {
        let plan = bigraph_plan(m, n);
        for (a, params) in [
            (Algorithm::Hd, Params::default()),
            (Algorithm::BlueConnect, no_hop_latency()),
            (Algorithm::TwoD, no_hop_latency()),
        ] {
            for size in [256u64 << 10, 256 << 20] {
                let e = estimate(&plan, a, None, size, &params, &spray).unwrap();
                let off = (e.time_us - e.closed_form_us).abs() / e.time_us;
                assert!(
                    off < 1e-6,
                    "{m}x{n} {} {size}: simulated {} µs, closed form {} µs",
                    a.as_str(),
                    e.time_us,
                    e.closed_form_us
                );
            }
        }
    }
}
