use proptest::strategy::Strategy as _;
use proptest::{prop_assert, proptest};

use super::strategies::{
    self, Linear, Timing, algorithm1_groups, cap_groups, optimal_groups, run_groups,
};
use super::*;
use crate::estimate;

/// A timing with no forward time from backward times and parameter
/// counts (one byte a parameter), layer 1 first.
fn timing(tb: &[f64], bytes: &[u64]) -> Timing {
    Timing {
        forward_us: vec![0.0; tb.len()],
        backward_us: tb.to_vec(),
        bytes: bytes.to_vec(),
    }
}

fn cost(a: f64, b: f64) -> Linear {
    Linear {
        a_us: a,
        b_us_per_byte: b,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn wfbp_case_1_hides_everything_but_layer_1() {
    // Every t_c(l) <= t_b(l - 1): eq. 11, t_iter = t_f + t_b + t_c(1).
    let mut t = timing(&[4.0, 3.0, 3.0, 2.0], &[2, 2, 2, 1]);
    t.forward_us = vec![1.0; 4];
    let c = cost(1.0, 1.0);
    let s = strategies::wfbp(&t, &c);
    assert!(close(s.iteration_us, 4.0 + 12.0 + c.time(2)));
}

#[test]
fn wfbp_case_2_catches_up() {
    // Layer 4's allreduce outlasts layer 3's backward step, but layers 4
    // and 3 together fit in layers 3 and 2: eq. 12, the same as case 1.
    let t = timing(&[2.0, 4.0, 1.0, 1.0], &[1, 1, 1, 1]);
    let c = cost(0.5, 1.0);
    assert!(c.time(1) > t.backward_us[2]);
    let s = strategies::wfbp(&t, &c);
    assert!(close(s.iteration_us, 8.0 + c.time(1)));
}

#[test]
fn wfbp_case_3_is_communication_bound() {
    // From layer C = L down, communication never catches up: eq. 13,
    // t_iter = t_f + t_b(L) + Σ_l t_c(l) when every allreduce outlasts the
    // backward step it overlaps.
    let t = timing(&[1.0, 1.0, 1.0, 1.0], &[1, 1, 1, 1]);
    let c = cost(2.0, 1.0);
    let s = strategies::wfbp(&t, &c);
    assert!(close(s.iteration_us, 1.0 + 4.0 * c.time(1)));
    // MG-WFBP merges and does better.
    assert!(strategies::mg_wfbp(&t, &c).iteration_us < s.iteration_us);
}

#[test]
fn merge_condition_of_theorem_1() {
    // Two layers: layer 2 is merged into layer 1 exactly when
    // τ_b(0) − τ_c(2) < a, τ_b(0) being the end of the backward pass and
    // τ_c(2) the end of layer 2's backward step.
    for (tb1, a, merged) in [(1.0, 2.0, true), (3.0, 2.0, false), (1.999, 2.0, true)] {
        let t = timing(&[tb1, 1.0], &[5, 5]);
        let groups = algorithm1_groups(&t, &cost(a, 0.1));
        assert_eq!(groups.len() == 1, merged, "t_b(1) = {tb1}, a = {a}");
    }
}

#[test]
fn algorithm_1_is_not_always_optimal() {
    // The counterexample of the module documentation.
    let t = timing(&[2.0, 1.0, 0.0], &[1, 1, 1]);
    let c = cost(2.0, 1.0);
    let greedy = algorithm1_groups(&t, &c);
    assert_eq!(greedy, vec![(1, 2), (0, 0)]);
    assert!(close(run_groups(&t, &c, &greedy, 0.0).iteration_us, 8.0));
    let best = optimal_groups(&t, &c);
    assert_eq!(best, vec![(2, 2), (0, 1)]);
    assert!(close(run_groups(&t, &c, &best, 0.0).iteration_us, 7.0));
}

#[test]
fn naive_and_single_bucket_follow_their_equations() {
    let mut t = timing(&[1.0, 2.0, 3.0], &[10, 20, 30]);
    t.forward_us = vec![1.0, 1.0, 1.0];
    let c = cost(5.0, 0.5);
    let compute = 9.0;
    let naive = strategies::naive(&t, &c);
    assert!(close(naive.iteration_us, compute + 3.0 * 5.0 + 0.5 * 60.0));
    let single = strategies::single_bucket(&t, &c);
    assert!(close(single.iteration_us, compute + 5.0 + 0.5 * 60.0));
    assert_eq!(single.buckets.len(), 1);
}

#[test]
fn c_cube_chains_the_next_forward_pass() {
    // Streaming: layer 1 (1 byte) is back at t_b + a + b, and its forward
    // step runs while layer 2's gradients are still on the network.
    let mut t = timing(&[1.0, 1.0], &[1, 9]);
    t.forward_us = vec![5.0, 1.0];
    let c = cost(1.0, 1.0);
    let s = strategies::c_cube(&t, &c, true);
    assert!(close(s.forward[0].0, 2.0 + 2.0));
    // Layer 2 is back at 2 + 1 + 10 = 13; its forward ends at 14.
    assert!(close(s.iteration_us, 14.0));
    // Without in-order completion the groups are separate allreduces;
    // the result is never worse than one allreduce then the forward pass.
    let b = strategies::c_cube(&t, &c, false);
    assert!(b.iteration_us <= 2.0 + c.time(10) + 6.0 + 1e-9);
}

#[test]
fn cap_groups_close_at_the_cap() {
    let t = timing(&[1.0; 5], &[4, 1, 1, 3, 2]);
    assert_eq!(cap_groups(&t, 4), vec![(3, 4), (0, 2)]);
    assert_eq!(
        cap_groups(&t, 1),
        vec![(4, 4), (3, 3), (2, 2), (1, 1), (0, 0)]
    );
    assert_eq!(cap_groups(&t, 100), vec![(0, 4)]);
}

#[test]
fn profiles_match_published_parameter_counts() {
    let count = |n: &str| Model::built_in(n).unwrap().parameters();
    assert_eq!(count("resnet50"), 25_557_032);
    assert_eq!(count("vgg16"), 138_357_544);
    assert_eq!(count("googlenet"), 6_998_552);
    assert_eq!(count("bert-base"), 109_482_240);
    assert_eq!(count("googlenet-aux"), 13_378_280);
    assert_eq!(count("vgg19"), 143_667_240);
    assert_eq!(count("zfnet"), 62_357_608);
    assert_eq!(count("transformer-base"), 63_082_496);
    assert_eq!(count("gpt2-small"), 124_439_808);
    // The released Llama 2 checkpoints' totals.
    assert_eq!(count("llama2-7b"), 6_738_415_616);
    assert_eq!(count("llama2-70b"), 68_976_648_192);
    // Within 5% of the totals usually quoted: MG-WFBP's "about 13
    // millions" for GoogleNet with its heads, VGG's Table 2 (144 M),
    // AlexNet without groups (62.4 M) for ZFNet, the Transformer's Table 3
    // (65 M), GPT-2's released 124 M.
    for (n, quoted) in [
        ("resnet50", 25.5e6),
        ("vgg16", 138e6),
        ("googlenet", 6.8e6),
        ("bert-base", 110e6),
        ("googlenet-aux", 13e6),
        ("vgg19", 144e6),
        ("zfnet", 62.4e6),
        ("transformer-base", 65e6),
        ("gpt2-small", 124e6),
        ("llama2-7b", 7e9),
        ("llama2-70b", 70e9),
    ] {
        let p = count(n) as f64;
        assert!((p - quoted).abs() / quoted < 0.05, "{n}: {p}");
    }
}

/// Issue #19: GoogleNet's auxiliary heads, by their formula and where
/// they sit.
#[test]
fn googlenet_aux_heads_follow_their_modules() {
    // Two heads of 1x1 conv (cin·128 + 128), fc 2048 -> 1024 and
    // classifier 1024 -> 1000, after 4a (cin 512) and 4d (528).
    let head = |cin: u64| cin * 128 + 128 + 2048 * 1024 + 1024 + 1024 * 1000 + 1000;
    let aux = Model::built_in("googlenet-aux").unwrap();
    assert_eq!(aux.parameters(), 6_998_552 + head(512) + head(528));
    let names: Vec<&str> = aux.layers.iter().map(|l| l.name.as_str()).collect();
    let at = |x: &str| names.iter().position(|n| *n == x).unwrap();
    assert_eq!(at("loss1/conv"), at("inception_4a/pool_proj") + 1);
    assert_eq!(at("loss2/classifier"), at("inception_4d/pool_proj") + 3);
    for name in profiles::NAMES {
        assert!(Model::built_in(name).is_some(), "{name}");
    }
}

#[test]
fn given_comm_replaces_the_fitted_cost() {
    let c = Linear::parse("a=633.64, b=0.0014").unwrap();
    assert_eq!((c.a_us, c.b_us_per_byte), (633.64, 0.0014));
    for bad in ["a=1", "a=1,b=x", "a=1,b=-2", "a=1,b=2,c=3", "a 1"] {
        let e = Linear::parse(bad).unwrap_err();
        assert!(e.to_string().starts_with("comm: "), "{bad}: {e}");
    }
}

#[test]
fn a_packet_level_fit_follows_the_event_driven_one_plus_store_and_forward() {
    // HDRM on a 2x8 BiGraph loads every link once per step, so a
    // packet-level run is the event-driven one plus, per step, a packet
    // stored and forwarded at each of its two switches: a few µs more at
    // every size, the same bandwidth.
    use crate::design::design;
    use crate::design::shorthand::{self, Shorthand};
    let (inv, opts) = shorthand::bigraph(2, 8, &Shorthand::default()).unwrap();
    let plan = design(&inv, &opts).unwrap();
    let fit = |method| {
        let options = Options {
            method,
            threads: 1,
            ..Options::default()
        };
        fit_allreduce(
            &plan,
            Algorithm::Hdrm,
            16,
            1 << 20,
            &Params::default(),
            &options,
        )
        .unwrap()
    };
    let (event, packet) = (fit(estimate::Method::Event), fit(estimate::Method::Packet));
    assert_eq!(packet.method, Some(estimate::Method::Packet));
    assert_eq!(packet.sizes, event.sizes);
    // At most 8 steps of 2 x 4096 B at 12,500 B/µs more at any size;
    // below 64 KiB a step's chunk is less than a packet, so the extra
    // grows with the size up to there and the fit's b takes some of it.
    let most = 8.0 * 2.0 * 4096.0 / 12_500.0;
    assert!(
        packet.a_us <= event.a_us + most,
        "{} vs {}",
        packet.a_us,
        event.a_us
    );
    assert!(packet.max_error_pct < 10.0, "{}", packet.max_error_pct);
    let ratio = packet.b_us_per_byte / event.b_us_per_byte;
    assert!((1.0..1.05).contains(&ratio), "{ratio}");
}

#[test]
fn profiles_have_the_documented_shapes() {
    let layers = |n: &str| Model::built_in(n).unwrap().layers.len();
    assert_eq!(layers("resnet50"), 107);
    assert_eq!(layers("vgg16"), 16);
    assert_eq!(layers("googlenet"), 58);
    assert_eq!(layers("bert-base"), 101);
    assert_eq!(layers("googlenet-aux"), 64);
    assert_eq!(layers("zfnet"), 8);
    assert_eq!(layers("vgg19"), 19);
    assert_eq!(layers("transformer-base"), 127);
    assert_eq!(layers("gpt2-small"), 75);
    assert_eq!(layers("llama2-7b"), 1 + 32 * 9 + 2);
    assert_eq!(layers("llama2-70b"), 1 + 80 * 9 + 2);
    let gflops = |n: &str| {
        Model::built_in(n)
            .unwrap()
            .layers
            .iter()
            .map(|l| match l.work {
                Work::Flops { forward, .. } => forward,
                Work::Measured { .. } => 0.0,
            })
            .sum::<f64>()
            / 1e9
    };
    for (n, want) in [
        ("resnet50", 8.2),
        ("vgg16", 31.0),
        ("googlenet", 3.2),
        ("bert-base", 22.4),
        ("googlenet-aux", 3.2),
        ("zfnet", 2.34),
        ("vgg19", 39.28),
        ("transformer-base", 16.76),
        ("gpt2-small", 292.86),
        ("llama2-7b", 63_023.43),
        ("llama2-70b", 607_395.45),
    ] {
        let g = gflops(n);
        assert!((g - want).abs() < 0.1, "{n}: {g:.2} GFLOPs");
    }
}

#[test]
fn user_model_toml_and_csv() {
    let toml = "name = \"tiny\"\nbatch = 16\n[[layer]]\nname = \"a\"\nparameters = 10\nforward_ms = 1\nbackward_ms = 2\n[[layer]]\nname = \"b\"\nparameters = 20\nforward_ms = 0.5\nbackward_ms = 1\n";
    let m = format::parse(toml, "tiny.toml", false).unwrap();
    assert_eq!(m.parameters(), 30);
    let t = m
        .timing(&Compute {
            batch: Some(32),
            ..Compute::default()
        })
        .unwrap();
    assert!(close(t.forward_us[0], 2000.0));
    let csv = "# batch = 16\nname,parameters,forward_gflops\na,10,1\nb,20,2\n";
    let m = format::parse(csv, "tiny.csv", true).unwrap();
    assert_eq!(m.name, "tiny");
    assert_eq!(m.layers.len(), 2);
}

#[test]
fn user_model_errors_name_the_line() {
    let toml = "[[layer]]\nname = \"a\"\nparameters = 10\n\n[[layer]]\nname = \"b\"\nparameters = 5\nforward_ms = 1\n";
    let e = format::parse(toml, "m.toml", false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("m.toml:1: layer a: has neither"), "{e}");
    assert!(e.contains("m.toml:5: layer b: gives only one"), "{e}");
    let csv = "name,parameters,forward_ms,backward_ms\na,x,1,2\n";
    let e = format::parse(csv, "m.csv", true).unwrap_err().to_string();
    assert!(e.contains("m.csv:2: column parameters"), "{e}");
    let e = format::parse("name,params\n", "m.csv", true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("column `params`"), "{e}");
}

#[test]
fn fit_is_exact_on_a_line() {
    let pts: Vec<(f64, f64)> = [1e3, 1e4, 1e5, 1e6]
        .iter()
        .map(|&x| (x, 7.0 + 0.01 * x))
        .collect();
    let (a, b, worst) = fit_linear(&pts);
    assert!(close(a, 7.0) && close(b, 0.01) && worst < 1e-9);
}

#[test]
fn parse_ranks_forms() {
    assert_eq!(parse_ranks("64").unwrap(), vec![64]);
    assert_eq!(parse_ranks("8..64").unwrap(), vec![8, 16, 32, 64]);
    assert_eq!(parse_ranks("8,24").unwrap(), vec![8, 24]);
    assert!(parse_ranks("64..8").is_err());
    assert!(parse_ranks("x").is_err());
}

fn profile() -> impl proptest::strategy::Strategy<Value = (Timing, Linear)> {
    (1usize..9)
        .prop_flat_map(|l| {
            (
                proptest::collection::vec(0.0f64..10.0, l),
                proptest::collection::vec(0.0f64..10.0, l),
                proptest::collection::vec(0u64..1000, l),
                0.0f64..20.0,
                0.0f64..0.05,
            )
        })
        .prop_map(|(tf, tb, bytes, a, b)| {
            (
                Timing {
                    forward_us: tf,
                    backward_us: tb,
                    bytes,
                },
                cost(a, b),
            )
        })
}

/// Every way of cutting `l` layers into contiguous groups, output side
/// first.
fn all_groupings(l: usize) -> Vec<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for mask in 0u32..(1 << (l - 1)) {
        let mut groups = Vec::new();
        let mut hi = l - 1;
        for i in (1..l).rev() {
            if mask & (1 << (i - 1)) != 0 {
                groups.push((i, hi));
                hi = i - 1;
            }
        }
        groups.push((0, hi));
        out.push(groups);
    }
    out
}

proptest! {
    #[test]
    fn mg_wfbp_is_never_worse((t, c) in profile()) {
        let mg = strategies::mg_wfbp(&t, &c).iteration_us;
        let tol = 1e-9 * (1.0 + mg);
        prop_assert!(mg <= strategies::wfbp(&t, &c).iteration_us + tol);
        prop_assert!(mg <= strategies::single_bucket(&t, &c).iteration_us + tol);
        prop_assert!(mg <= strategies::naive(&t, &c).iteration_us + tol);
        let greedy = run_groups(&t, &c, &algorithm1_groups(&t, &c), 0.0).iteration_us;
        prop_assert!(mg <= greedy + tol);
    }

    #[test]
    fn mg_wfbp_is_optimal((t, c) in profile()) {
        let mg = strategies::mg_wfbp(&t, &c).iteration_us;
        let best = all_groupings(t.len())
            .iter()
            .map(|g| run_groups(&t, &c, g, 0.0).iteration_us)
            .fold(f64::INFINITY, f64::min);
        prop_assert!((mg - best).abs() <= 1e-9 * (1.0 + best));
    }

    #[test]
    fn c_cube_is_never_worse_than_one_allreduce_then_forward((t, c) in profile()) {
        let single = strategies::single_bucket(&t, &c).iteration_us;
        for in_order in [false, true] {
            let s = strategies::c_cube(&t, &c, in_order);
            prop_assert!(s.iteration_us <= single + 1e-9 * (1.0 + single));
            prop_assert!(s.iteration_us + 1e-9 >= t.compute());
        }
    }
}
