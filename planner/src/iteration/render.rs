//! The iteration report and sweep as text tables.

use super::*;
use crate::estimate::Algorithm;
use crate::plan::Topology;

/// Formats a number of parameters: `25.6 M`.
fn millions(p: u64) -> String {
    format!("{:.1} M", p as f64 / 1e6)
}

/// A byte count in MiB with two decimals.
fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / 1_048_576.0)
}

/// The human table of a report.
pub fn render_table(r: &Report) -> String {
    let mut out = format!(
        "{}: {} parameters in {} layers, {} MiB of gradients; {} ranks\n",
        r.model,
        millions(r.parameters),
        r.layers,
        mib(r.gradient_bytes),
        r.ranks
    );
    let per_gpu = match (r.batch, r.gpu_tflops) {
        (Some(b), Some(g)) => format!("batch {b} per GPU at {g} TFLOPS: "),
        (Some(b), None) => format!("measured times at batch {b}: "),
        _ => "measured times: ".to_string(),
    };
    out.push_str(&format!(
        "{per_gpu}forward {:.2} ms, backward {:.2} ms\n",
        r.forward_ms, r.backward_ms
    ));
    if let Some(source) = &r.gpu_source {
        out.push_str(&format!("GPU rate: {source}\n"));
    }
    out.push('\n');
    let mut fits =
        crate::text::Table::new(["algorithm", "design", "a (µs)", "1/b (Gbps)", "fit error"])
            .right(&[2, 3, 4]);
    for f in &r.fits {
        fits.row([
            f.algorithm.as_str().to_string(),
            f.design.clone(),
            format!("{:.1}", f.a_us),
            format!("{:.1}", f.algbw_gbps),
            if f.given {
                "given".to_string()
            } else {
                format!("{:.1}%", f.max_error_pct)
            },
        ]);
    }
    out.push_str(if r.fits.iter().any(|f| f.given) {
        "Allreduce cost a + b·bytes, as given, not fitted (MG-WFBP eq. 9):\n"
    } else {
        "Allreduce cost a + b·bytes, fitted to the estimates:\n"
    });
    out.push_str(&fits.render());
    for f in &r.fits {
        if let Some(why) = &f.fallback {
            out.push_str(&format!(
                "  - {} on {}: {why}\n",
                f.algorithm.as_str(),
                f.design
            ));
        }
    }
    out.push('\n');
    let mut t = crate::text::Table::new([
        "algorithm",
        "design",
        "strategy",
        "iteration ms",
        "exposed ms",
        "speedup",
        "efficiency",
        "buckets",
    ])
    .right(&[3, 4, 5, 6, 7]);
    for row in &r.results {
        t.row([
            row.algorithm.as_str().to_string(),
            row.design.clone(),
            row.strategy.as_str().to_string(),
            format!("{:.2}", row.iteration_ms),
            format!("{:.2}", row.comm_exposed_ms),
            format!("{:.1}", row.speedup),
            format!("{:.1}%", 100.0 * row.scaling_efficiency),
            row.buckets.len().to_string(),
        ]);
    }
    out.push_str(&t.render());
    for row in r.results.iter().filter(|x| x.strategy == Strategy::MgWfbp) {
        out.push_str(&format!(
            "\nMG-WFBP buckets, {} on {} (output side first; Algorithm 1's greedy merges give {:.2} ms):\n",
            row.algorithm.as_str(),
            row.design,
            row.algorithm1_iteration_ms.unwrap_or(0.0)
        ));
        let mut b = crate::text::Table::new([
            "bucket", "layers", "from", "to", "MiB", "start ms", "end ms",
        ])
        .right(&[0, 1, 4, 5, 6]);
        for (i, bucket) in row.buckets.iter().enumerate() {
            b.row([
                (i + 1).to_string(),
                bucket.layers.to_string(),
                bucket.last_layer.clone(),
                bucket.first_layer.clone(),
                mib(bucket.bytes),
                format!("{:.2}", bucket.start_ms),
                format!("{:.2}", bucket.end_ms),
            ]);
        }
        out.push_str(&b.render());
        if let Some(f) = &row.frameworks {
            out.push_str(&format!(
                "PyTorch DDP: bucket_cap_mb={} ({:.2} ms an iteration); Horovod: HOROVOD_FUSION_THRESHOLD={}\n",
                f.bucket_cap_mb, f.cap_iteration_ms, f.horovod_fusion_threshold_bytes
            ));
        }
    }
    out
}

/// The human table of a sweep: scaling efficiency, one column per rank
/// count.
pub fn render_sweep(s: &Sweep) -> String {
    let mut headers = vec![
        "topology".to_string(),
        "algorithm".to_string(),
        "strategy".to_string(),
    ];
    headers.extend(s.ranks.iter().map(|r| r.to_string()));
    let right: Vec<usize> = (3..headers.len()).collect();
    let mut t = crate::text::Table::new(headers).right(&right);
    let mut keys: Vec<(Topology, Algorithm, Strategy)> = Vec::new();
    for row in &s.results {
        let k = (row.topology, row.algorithm, row.strategy);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (topology, algorithm, strategy) in keys {
        let mut cells = vec![
            topology.as_str().to_string(),
            algorithm.as_str().to_string(),
            strategy.as_str().to_string(),
        ];
        for &r in &s.ranks {
            let cell = s
                .results
                .iter()
                .find(|x| {
                    x.ranks == r
                        && x.topology == topology
                        && x.algorithm == algorithm
                        && x.strategy == strategy
                })
                .map_or(String::new(), |x| {
                    format!("{:.1}%", 100.0 * x.scaling_efficiency)
                });
            cells.push(cell);
        }
        t.row(cells);
    }
    let rate = s
        .gpu_source
        .as_ref()
        .map_or(String::new(), |g| format!("GPU rate: {g}\n"));
    format!(
        "{}: {} parameters; scaling efficiency by ranks\n{rate}\n{}",
        s.model,
        millions(s.parameters),
        t.render()
    )
}
