//! `planner iteration`: the JSON contract, the one-command answer of issue
//! #5, plots and bad input.

use crate::{planner, planner_in};

fn json(args: &[&str]) -> serde_json::Value {
    json_in(&crate::root(), args)
}

/// Runs `planner` with `args` in `dir` and reads its JSON output.
fn json_in(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let out = planner_in(dir, args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

#[test]
fn json_contract() {
    let v = json(&[
        "iteration",
        "--gpu-tflops",
        "15",
        "examples/data/eflops-4x16.plan.json",
        "--model",
        "resnet50",
        "--ranks",
        "64",
        "--algorithm",
        "hdrm",
        "--format",
        "json",
    ]);
    assert_eq!(v["model"], "resnet50");
    assert_eq!(v["parameters"], 25_557_032);
    assert_eq!(v["ranks"], 64);
    let results = v["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["naive", "wfbp", "single-bucket", "mg-wfbp", "c-cube"]
    );
    for r in results {
        for key in ["iteration_ms", "comm_exposed_ms", "scaling_efficiency"] {
            assert!(r[key].is_f64(), "{key} in {r}");
        }
        assert!(r["buckets"].is_array());
        let eff = r["scaling_efficiency"].as_f64().unwrap();
        assert!(eff > 0.0 && eff <= 1.0);
    }
    let mg = &results[3];
    assert!(mg["frameworks"]["bucket_cap_mb"].as_f64().unwrap() > 0.0);
    assert!(
        mg["frameworks"]["horovod_fusion_threshold_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// Issue #5's "done when": BERT-base on 256 GPUs, BiGraph + HDRM against
/// fat-tree + ring, and the buckets, from one command.
#[test]
fn issue_5_bert_base_on_256_gpus_in_one_command() {
    let v = json(&[
        "iteration",
        "--gpu-tflops",
        "15",
        "--bigraph",
        "8x32",
        "--model",
        "bert-base",
        "--ranks",
        "256",
        "--algorithm",
        "hdrm,ring",
        "--compare-topologies",
        "--format",
        "json",
    ]);
    let results = v["results"].as_array().unwrap();
    let find = |topology: &str, algorithm: &str| {
        results
            .iter()
            .find(|r| {
                r["topology"] == topology
                    && r["algorithm"] == algorithm
                    && r["strategy"] == "mg-wfbp"
            })
            .unwrap_or_else(|| panic!("no mg-wfbp row for {algorithm} on {topology}"))
    };
    let bigraph = find("bigraph", "hdrm");
    let fat_tree = find("fat-tree", "ring");
    assert!(
        bigraph["scaling_efficiency"].as_f64().unwrap()
            > fat_tree["scaling_efficiency"].as_f64().unwrap()
    );
    assert!(!bigraph["buckets"].as_array().unwrap().is_empty());
    assert!(
        results
            .iter()
            .all(|r| !(r["topology"] == "fat-tree" && r["algorithm"] == "hdrm"))
    );
}

#[test]
fn timeline_and_sweep_plots() {
    let dir = tempfile::tempdir().unwrap();
    let plan = crate::root().join("examples/data/eflops-4x16.plan.json");
    let plan = plan.to_str().unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "iteration",
            "--gpu-tflops",
            "15",
            plan,
            "--model",
            "googlenet",
            "--plot",
            "timeline.svg",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(dir.path().join("timeline.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("mg-wfbp network"));
    let out = planner_in(
        dir.path(),
        &[
            "iteration",
            "--gpu-tflops",
            "15",
            plan,
            "--model",
            "googlenet",
            "--ranks",
            "8..64",
            "--plot",
            "sweep.svg",
        ],
    );
    assert!(out.status.success());
    let svg = std::fs::read_to_string(dir.path().join("sweep.svg")).unwrap();
    assert!(svg.contains("scaling efficiency"));
}

#[test]
fn bad_plot_name_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let plan = crate::root().join("examples/data/eflops-4x16.plan.json");
    let out = planner_in(
        dir.path(),
        &[
            "iteration",
            "--gpu-tflops",
            "15",
            plan.to_str().unwrap(),
            "--model",
            "vgg16",
            "--plot",
            "timeline.pdf",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--plot"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn same_input_same_output() {
    let args = [
        "iteration",
        "--gpu-tflops",
        "15",
        "examples/data/eflops-4x16.plan.json",
        "--model",
        "bert-base",
        "--algorithm",
        "ring,double-tree",
        "--format",
        "json",
    ];
    assert_eq!(planner(&args).stdout, planner(&args).stdout);
}

/// `--method packet` fits the allreduce cost to packet-level runs, on a
/// plan with the intra-server tier too (one rank per GPU; issue 19).
#[test]
fn packet_level_fit_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("small.csv"),
        "name,parameters,forward_gflops\nconv,65536,0.5\nfc,196608,0.1\n",
    )
    .unwrap();
    let plan = crate::root().join("examples/data/cloud-8x16.plan.json");
    let run = |method: &str| {
        json_in(
            dir.path(),
            &[
                "iteration",
                "--gpu-tflops",
                "15",
                plan.to_str().unwrap(),
                "--model",
                "small.csv",
                "--algorithm",
                "2d",
                "--method",
                method,
                "--format",
                "json",
            ],
        )
    };
    let (event, packet) = (run("event"), run("packet"));
    let fit = &packet["fits"][0];
    assert_eq!(fit["method"], "packet");
    assert_eq!(fit["ranks"], 128);
    assert_eq!(fit["sizes"], event["fits"][0]["sizes"]);
    assert!(fit["a_us"].as_f64().unwrap() > 0.0);
    assert!(fit["algbw_gbps"].as_f64().unwrap() > 0.0);
    let results = packet["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    assert!(
        results
            .iter()
            .all(|r| r["iteration_ms"].as_f64().unwrap() > 0.0)
    );
}

/// Issue #33: `iteration` takes its compute rate from the GPU model the
/// inventory names (H100 SXM: 989.5 TFLOPS dense BF16), says which figure
/// and source it used, and without a known model asks for the rate.
#[test]
fn issue33_the_compute_rate_comes_from_the_plans_gpu_model() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("h100.json");
    let plan = plan.to_str().unwrap();
    let designed = planner(&[
        "design",
        "topologies/h100-8x32.toml",
        "--topology",
        "fat-tree",
        "--out",
        plan,
    ]);
    assert!(designed.status.success());
    let h100 = planner::gpus::lookup("H100-SXM5-80GB").unwrap();
    let v = json(&[
        "iteration",
        plan,
        "--model",
        "bert-base",
        "--format",
        "json",
    ]);
    assert_eq!(v["gpu_tflops"].as_f64().unwrap(), h100.dense_tflops);
    let source = v["gpu_source"].as_str().unwrap();
    assert!(source.contains("H100 SXM"), "{source}");
    assert!(source.contains("\"H100-SXM5-80GB\""), "{source}");
    assert!(source.contains(h100.source), "{source}");
    // Given, the rate wins and no source is claimed.
    let v = json(&[
        "iteration",
        plan,
        "--model",
        "bert-base",
        "--gpu-tflops",
        "400",
        "--format",
        "json",
    ]);
    assert_eq!(v["gpu_tflops"].as_f64().unwrap(), 400.0);
    assert!(v.get("gpu_source").is_none());
    // A shorthand's servers name no known model: the flag is required, by
    // name, with the table's figures.
    let out = planner(&["iteration", "--bigraph", "4x8", "--model", "bert-base"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: --gpu-tflops: plan "), "{err}");
    assert!(err.contains("H100 SXM 989.5"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Issue #33 item 6, the figures of docs/iteration.md "Which estimate":
/// the event-driven simulator is the default, the closed forms agree with
/// it for the ring and HDRM on the EFLOPS plan and are optimistic for the
/// double binary tree, plain halving-doubling and BlueConnect.
#[test]
fn issue33_iteration_fits_to_the_event_driven_simulator_by_default() {
    let algbw = |algorithm: &str, method: Option<&str>| -> (f64, String) {
        let mut args = vec![
            "iteration",
            "examples/data/eflops-4x16.plan.json",
            "--model",
            "resnet50",
            "--gpu-tflops",
            "15",
            "--algorithm",
            algorithm,
            "--format",
            "json",
        ];
        if let Some(m) = method {
            args.extend(["--method", m]);
        }
        let v = json(&args);
        let fit = &v["fits"][0];
        let gbps = (fit["algbw_gbps"].as_f64().unwrap() * 10.0).round() / 10.0;
        (gbps, fit["method"].as_str().unwrap().to_string())
    };
    for (algorithm, closed, event) in [
        ("ring", 49.3, 49.3),
        ("hdrm", 49.3, 49.3),
        ("double-tree", 34.9, 27.3),
        ("hd", 36.0, 31.3),
        ("blueconnect", 36.0, 31.3),
    ] {
        assert_eq!(
            algbw(algorithm, None),
            (event, "event".to_string()),
            "{algorithm}"
        );
        assert_eq!(
            algbw(algorithm, Some("closed-form")),
            (closed, "closed-form".to_string()),
            "{algorithm}"
        );
    }
    // Where the simulator cannot build the schedule (a ring over 8,192
    // ranks), the closed form answers and the fit says why.
    let v = json(&[
        "iteration",
        "--fat-tree",
        "tiers=3,sub-nodes=8192,ports=64",
        "--model",
        "resnet50",
        "--gpu-tflops",
        "100",
        "--format",
        "json",
    ]);
    let fit = &v["fits"][0];
    assert_eq!(fit["method"], "closed-form");
    let why = fit["fallback"].as_str().unwrap();
    assert!(
        why.starts_with("fitted to the closed form: 8192 ranks: "),
        "{why}"
    );
    // 134,201,344 sends at 96 bytes a send: 12.0 GiB, above 4 GiB.
    assert!(
        why.contains("134201344 sends in the schedule would take about 12 GiB of memory in the simulator, above its limit of 4.0 GiB"),
        "{why}"
    );
}
