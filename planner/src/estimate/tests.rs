//! Tests of the estimates.

use super::context::{Context, PlanRoutes};
use super::*;
use crate::checked::CheckedPlan;
use crate::design::counterpart::bigraph_shape;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::Topology;

fn bigraph_plan(m: usize, n: usize) -> CheckedPlan {
    let (inv, opts) = shorthand::bigraph(m, n, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn fat_tree_plan(spec: &str) -> CheckedPlan {
    let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap()
}

fn opts(method: Method) -> Options {
    Options {
        method,
        seeds: vec![0],
        threads: 1,
        routing: crate::network::Policy::Ecmp,
        sends: None,
    }
}

/// Relative closeness for sums taken in a different order.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_close(a: f64, b: f64, what: &str) {
    assert!(close(a, b), "{what}: {a} != {b}");
}

fn no_hop_latency() -> Params {
    Params {
        alpha_us: 0.0,
        ..Params::default()
    }
}

mod baselines;
mod c_cube;
mod closed_forms;
mod intra;
mod lone_and_grouped;
mod nccl;
mod nccl_tree;
mod send_schedules;
mod simulator;
mod sweeps;

// Plots.

#[test]
fn plots_render_as_svg_and_png() {
    let plan = bigraph_plan(2, 8);
    let params = Params::default();
    let rows = size_sweep(
        &plan,
        &Algorithm::EFLOPS,
        &parse_sizes("1KiB..1MiB").unwrap(),
        None,
        &params,
        &opts(Method::ClosedForm),
        &mut |_, _| {},
    )
    .unwrap();
    let svg = String::from_utf8(plot::sizes(&rows, plot::PlotFormat::Svg).unwrap()).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("hdrm") && svg.contains("latency") && svg.contains("bandwidth"));
    let png = plot::sizes(&rows, plot::PlotFormat::Png).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let plans = scale_plans(&[16, 32], &ScaleSpec::default()).unwrap();
    let rows = scale_sweep(
        &plans,
        &Algorithm::EFLOPS,
        &[256 << 10, 256 << 20],
        &params,
        &opts(Method::ClosedForm),
        &mut |_, _| {},
    )
    .unwrap();
    let svg = String::from_utf8(plot::scale(&rows, plot::PlotFormat::Svg).unwrap()).unwrap();
    assert!(svg.contains("BiGraph") && svg.contains("fat-tree"));
    assert!(plot::scale(&rows, plot::PlotFormat::Png).unwrap().len() > 1000);
    assert!(plot::sizes(&[], plot::PlotFormat::Svg).is_err());
    assert_eq!(
        plot::PlotFormat::from_path("a.PNG").unwrap(),
        plot::PlotFormat::Png
    );
    assert!(plot::PlotFormat::from_path("a.pdf").is_err());
}

/// Run with `cargo test --release -p planner --lib estimate::tests::timing -- --ignored --nocapture`.
#[test]
#[ignore = "timing; run in release mode"]
fn timing_ring_1024_256mib() {
    let params = Params::default();
    for plan in [
        bigraph_plan(16, 64),
        fat_tree_plan("tiers=2,sub-nodes=1024,ports=64"),
    ] {
        for method in [Method::Fast, Method::Event] {
            let t0 = std::time::Instant::now();
            let e = estimate(
                &plan,
                Algorithm::Ring,
                None,
                256 << 20,
                &params,
                &opts(method),
            )
            .unwrap();
            let took = t0.elapsed();
            println!(
                "ring 1024 256MiB {} {}: {:.1} µs (closed {:.1}), {} sends, took {:?}",
                plan.describe(),
                method.as_str(),
                e.time_us,
                e.closed_form_us,
                e.schedule.as_ref().map_or(0, |s| s.sends),
                took
            );
        }
    }
}

#[test]
#[ignore = "timing; run in release mode"]
fn timing_fig16_sweep() {
    let params = Params::default();
    let nodes = parse_nodes("64..1024").unwrap();
    let t0 = std::time::Instant::now();
    let plans = scale_plans(&nodes, &ScaleSpec::default()).unwrap();
    let built = t0.elapsed();
    let options = Options {
        method: Method::Event,
        seeds: vec![0],
        threads: 2,
        routing: crate::network::Policy::Ecmp,
        sends: None,
    };
    let mut last = (0, 0);
    let rows = scale_sweep(
        &plans,
        &Algorithm::EFLOPS,
        &[256 << 10, 256 << 20],
        &params,
        &options,
        &mut |d, t| last = (d, t),
    )
    .unwrap();
    let took = t0.elapsed();
    for e in &rows {
        println!(
            "{:10} {:5} {:>5} {:>7} {:12.1} µs (closed {:12.1})",
            e.design,
            e.algorithm.as_str(),
            e.ranks,
            format_size(e.size_bytes),
            e.time_us,
            e.closed_form_us
        );
    }
    println!("plans {built:?}, whole sweep {took:?}, progress {last:?}");
}

#[test]
#[ignore = "timing; run in release mode"]
fn timing_every_algorithm_at_1024() {
    let params = Params::default();
    for plan in [
        bigraph_plan(16, 64),
        fat_tree_plan("tiers=2,sub-nodes=1024,ports=64"),
    ] {
        for a in Algorithm::ALL
            .iter()
            .copied()
            .filter(|a| a.runs_on(plan.topology))
        {
            for size in [256 << 10, 256 << 20] {
                for method in [Method::Fast, Method::Event] {
                    let t0 = std::time::Instant::now();
                    let e = estimate(&plan, a, None, size, &params, &opts(method)).unwrap();
                    println!(
                        "{:22} {:16} {:>7} {:5}: {:12.1} µs (closed {:12.1}), K {:4}, {:8} sends, most flows on a link {:3}, took {:?}",
                        plan.describe(),
                        a.as_str(),
                        format_size(size),
                        method.as_str(),
                        e.time_us,
                        e.closed_form_us,
                        e.chunks,
                        e.schedule.as_ref().map_or(0, |s| s.sends),
                        e.schedule.as_ref().map_or(0, |s| s.max_link_flows),
                        t0.elapsed()
                    );
                }
            }
        }
    }
}
