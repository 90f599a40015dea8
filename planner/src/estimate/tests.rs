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

mod closed_forms;
mod send_schedules;
mod simulator;
mod sweeps;

// Plots.

/// Inflates a zlib stream of fixed-Huffman and stored blocks (what
/// [`plot::zlib`] writes), to check the PNG encoder.
fn inflate(z: &[u8]) -> Vec<u8> {
    struct In<'a> {
        d: &'a [u8],
        pos: usize,
    }
    impl In<'_> {
        fn bit(&mut self) -> u32 {
            let b = (self.d[self.pos / 8] >> (self.pos % 8)) & 1;
            self.pos += 1;
            u32::from(b)
        }
        fn bits(&mut self, n: u32) -> u32 {
            (0..n).fold(0, |v, i| v | (self.bit() << i))
        }
        fn code(&mut self, n: u32) -> u32 {
            (0..n).fold(0, |v, _| (v << 1) | self.bit())
        }
        fn symbol(&mut self) -> u32 {
            let c = self.code(7);
            if c <= 0x17 {
                return 256 + c;
            }
            let c = (c << 1) | self.bit();
            if (0x30..=0xBF).contains(&c) {
                return c - 0x30;
            }
            if (0xC0..=0xC7).contains(&c) {
                return 280 + c - 0xC0;
            }
            let c = (c << 1) | self.bit();
            144 + c - 0x190
        }
    }
    const LB: [usize; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LE: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DB: [usize; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DE: [u32; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];
    assert_eq!(z[0], 0x78);
    let mut r = In {
        d: &z[2..z.len() - 4],
        pos: 0,
    };
    let mut out = Vec::new();
    loop {
        let last = r.bit();
        let kind = r.bits(2);
        assert_eq!(kind, 1, "only fixed-Huffman blocks are written");
        loop {
            let s = r.symbol();
            match s {
                0..=255 => out.push(s as u8),
                256 => break,
                _ => {
                    let k = (s - 257) as usize;
                    let len = LB[k] + r.bits(LE[k]) as usize;
                    let d = r.code(5) as usize;
                    let dist = DB[d] + r.bits(DE[d]) as usize;
                    for _ in 0..len {
                        out.push(out[out.len() - dist]);
                    }
                }
            }
        }
        if last == 1 {
            break;
        }
    }
    let adler = u32::from_be_bytes(z[z.len() - 4..].try_into().unwrap());
    assert_eq!(adler, plot::adler32(&out));
    out
}

#[test]
fn png_encoder_round_trips() {
    let mut data = Vec::new();
    for i in 0..5000u32 {
        data.push((i % 7) as u8);
        data.extend_from_slice(&[255; 40]);
        data.push((i * 31 % 251) as u8);
    }
    assert_eq!(inflate(&plot::zlib(&data)), data);
    assert_eq!(inflate(&plot::zlib(&[])), Vec::<u8>::new());
    assert_eq!(inflate(&plot::zlib(&[1, 2])), vec![1, 2]);
    // A 3 x 2 image: signature, IHDR, IDAT with the filtered rows, IEND.
    let pixels: Vec<u8> = (0..18).collect();
    let png = plot::png(3, 2, &pixels);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(plot::crc32(b"IEND"), 0xAE42_6082);
    let idat_len = u32::from_be_bytes(png[33..37].try_into().unwrap()) as usize;
    assert_eq!(&png[37..41], b"IDAT");
    let raw = inflate(&png[41..41 + idat_len]);
    assert_eq!(raw, [&[0u8][..], &pixels[..9], &[0], &pixels[9..]].concat());
    assert!(png.ends_with(b"IEND\xAE\x42\x60\x82"));
}

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
