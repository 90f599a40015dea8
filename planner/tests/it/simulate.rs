//! `planner simulate`: the JSON contract, CSV beside it, the modes agreeing
//! where no link is shared, plots written whole, issue #8's one-command
//! answer and bad input. The tables are golden files (`simulate-*`).

use std::fs;

use serde_json::Value;

use crate::{planner, planner_in, root};

const EFLOPS: &str = "examples/data/eflops-4x16.plan.json";

fn json(args: &[&str]) -> Vec<Value> {
    let out = planner(args);
    assert!(
        out.status.success(),
        "planner {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    v.as_array().expect("a list of rows").clone()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn json_rows_follow_the_contract() {
    let rows = json(&[
        "simulate",
        EFLOPS,
        "--size",
        "1KiB,1MiB,256MiB",
        "--format",
        "json",
    ]);
    assert_eq!(rows.len(), 9, "3 algorithms x 3 sizes");
    let keys = [
        "algorithm",
        "topology",
        "ranks",
        "size_bytes",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
    ];
    for r in &rows {
        let obj = r.as_object().expect("a row is an object");
        let mut got: Vec<&str> = obj.keys().map(String::as_str).collect();
        let mut want = keys.to_vec();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{r}");
        assert_eq!(r["topology"], "bigraph");
        assert_eq!(r["ranks"], 64);
        let size = r["size_bytes"].as_u64().unwrap();
        let (t, algbw, busbw) = (f(r, "time_us"), f(r, "algbw_gbps"), f(r, "busbw_gbps"));
        assert!(t > 0.0, "{r}");
        assert!((algbw - size as f64 * 8.0 / (t * 1000.0)).abs() < 1e-9 * algbw.max(1.0));
        assert!((busbw - algbw * 2.0 * 63.0 / 64.0).abs() < 1e-9 * busbw.max(1.0));
    }
    let order: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["algorithm"].as_str().unwrap(),
                r["size_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("ring", 1024),
            ("ring", 1 << 20),
            ("ring", 256 << 20),
            ("hd", 1024),
            ("hd", 1 << 20),
            ("hd", 256 << 20),
            ("hdrm", 1024),
            ("hdrm", 1 << 20),
            ("hdrm", 256 << 20),
        ]
    );
    // EFLOPS Fig. 12 at 64 sub-nodes: HDRM beats HD in plan order, whose
    // long distances share the BiGraph's links.
    let time = |a: &str, s: u64| {
        rows.iter()
            .find(|r| r["algorithm"] == a && r["size_bytes"] == s)
            .map(|r| f(r, "time_us"))
            .unwrap()
    };
    assert!(time("hdrm", 256 << 20) < time("hd", 256 << 20));
    assert!(time("hdrm", 1024) < time("ring", 1024));
}

#[test]
fn csv_carries_the_json_numbers() {
    let args = ["simulate", EFLOPS, "--size", "4KiB,64MiB"];
    let rows = json(&[&args[..], &["--format", "json"]].concat());
    let out = planner(&[&args[..], &["--format", "csv"]].concat());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("algorithm,topology,ranks,size_bytes,time_us,algbw_gbps,busbw_gbps")
    );
    let body: Vec<&str> = lines.collect();
    assert_eq!(body.len(), rows.len());
    for (line, r) in body.iter().zip(&rows) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], r["algorithm"].as_str().unwrap());
        assert_eq!(cells[1], r["topology"].as_str().unwrap());
        assert_eq!(cells[3].parse::<u64>().unwrap(), r["size_bytes"]);
        assert_eq!(cells[4].parse::<f64>().unwrap(), f(r, "time_us"));
    }
}

/// With no link shared (ring and HDRM on a BiGraph), the event-driven,
/// step-synchronous and closed-form times agree.
#[test]
fn modes_agree_without_contention() {
    let run = |method: &str| {
        json(&[
            "simulate",
            EFLOPS,
            "--algorithm",
            "ring,hdrm",
            "--size",
            "64KiB,16MiB",
            "--method",
            method,
            "--format",
            "json",
        ])
    };
    let (event, fast, closed) = (run("event"), run("fast"), run("closed-form"));
    for ((e, s), c) in event.iter().zip(&fast).zip(&closed) {
        let (te, ts, tc) = (f(e, "time_us"), f(s, "time_us"), f(c, "time_us"));
        assert!(
            (te - tc).abs() <= 1e-6 * tc,
            "event {te} vs closed {tc}: {e}"
        );
        assert!(
            (ts - tc).abs() <= 1e-6 * tc,
            "fast {ts} vs closed {tc}: {e}"
        );
    }
    // `--fast` is `--method fast`.
    let alias = json(&[
        "simulate",
        EFLOPS,
        "--algorithm",
        "ring,hdrm",
        "--size",
        "64KiB,16MiB",
        "--fast",
        "--format",
        "json",
    ]);
    assert_eq!(alias, fast);
}

#[test]
fn seeds_give_a_range_around_the_median() {
    let rows = json(&[
        "simulate",
        "--fat-tree",
        "tiers=2,sub-nodes=64,ports=16",
        "--algorithm",
        "hd",
        "--size",
        "16MiB",
        "--seeds",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["topology"], "fat-tree");
    let (lo, mid, hi) = (f(r, "time_min_us"), f(r, "time_us"), f(r, "time_max_us"));
    assert!(lo <= mid && mid <= hi, "{r}");
}

#[test]
fn output_does_not_depend_on_threads() {
    let run = |threads: &str| {
        planner(&[
            "simulate",
            "--scale",
            "64,128",
            "--size",
            "256KiB,4MiB",
            "--threads",
            threads,
        ])
    };
    let (one, two) = (run("1"), run("2"));
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert_eq!(one.stdout, two.stdout);
}

/// Issue #8's "done when": 256 MiB on 512 GPUs, BiGraph + HDRM against
/// fat-tree + ring, in one command.
#[test]
fn issue_8_bigraph_hdrm_against_fat_tree_ring_at_512() {
    let rows = json(&[
        "simulate",
        "--scale",
        "512",
        "--size",
        "256MiB",
        "--algorithm",
        "hdrm,ring",
        "--fast",
        "--format",
        "json",
    ]);
    let find = |a: &str, t: &str| {
        rows.iter()
            .find(|r| r["algorithm"] == a && r["topology"] == t)
            .unwrap_or_else(|| panic!("no {a} on {t}"))
    };
    let hdrm = find("hdrm", "bigraph");
    let ring = find("ring", "fat-tree");
    assert_eq!(hdrm["ranks"], 512);
    assert_eq!(ring["ranks"], 512);
    assert!(f(hdrm, "time_us") < f(ring, "time_us"));
    assert!(
        rows.iter()
            .all(|r| !(r["algorithm"] == "hdrm" && r["topology"] == "fat-tree"))
    );
}

#[test]
fn plots_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fig12.svg");
    let out = planner(&[
        "simulate",
        EFLOPS,
        "--size",
        "1KiB..1MiB",
        "--method",
        "closed-form",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..text.len().min(80)]);
    assert!(text.trim_end().ends_with("</svg>"));
    assert!(text.contains("hdrm"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Plot written to"));

    let png = dir.path().join("fig16.png");
    let out = planner(&[
        "simulate",
        "--scale",
        "64,128",
        "--size",
        "256KiB",
        "--fast",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    // Only the two plots: no temporary file left behind.
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["fig12.svg", "fig16.png"]);
}

#[test]
fn a_failed_run_leaves_the_old_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plot.svg");
    fs::write(&svg, "old").unwrap();
    let plan = root().join(EFLOPS);
    let out = planner_in(
        dir.path(),
        &[
            "simulate",
            plan.to_str().unwrap(),
            "--algorithm",
            "ring,nccl",
            "--plot",
            "plot.svg",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read_to_string(&svg).unwrap(), "old");
    let out = planner_in(
        dir.path(),
        &[
            "simulate",
            plan.to_str().unwrap(),
            "--plot",
            "no-such-dir/plot.svg",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-dir"));
}

#[test]
fn steps_sum_to_the_step_synchronous_time() {
    let out = planner(&[
        "simulate",
        EFLOPS,
        "--algorithm",
        "hd",
        "--size",
        "8MiB",
        "--steps",
        "--fast",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v.as_array().unwrap()[0];
    let steps = s["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12, "log2(64) halving and 6 doubling steps");
    let sum: f64 = steps.iter().map(|st| f(st, "time_us")).sum();
    assert!((sum - f(s, "steps_time_us")).abs() < 1e-6 * sum);
    // Without the gamma of the last reduction the sum is the fast time.
    assert!((f(s, "time_us") - sum).abs() < 1e-3 * sum);
    // HD in plan order shares links on the BiGraph at long distances.
    assert!(
        steps
            .iter()
            .any(|st| st["max_link_flows"].as_u64().unwrap() > 1)
    );
}

#[test]
fn packet_steps_report_queues_pauses_and_marks_per_step() {
    let v = json(&[
        "simulate",
        EFLOPS,
        "--algorithm",
        "hd",
        "--size",
        "16MiB",
        "--steps",
        "--method",
        "packet",
        "--format",
        "json",
    ]);
    let s = &v[0];
    assert_eq!(s["method"], "packet");
    let p = &s["packet"];
    let steps = p["steps"].as_array().unwrap();
    assert_eq!(steps.len(), s["steps"].as_array().unwrap().len());
    // The packet run's time is the estimate's, and its last step ends it.
    assert!((f(p, "time_us") - f(s, "time_us")).abs() < 1e-9 * f(s, "time_us"));
    let last = steps.iter().map(|st| f(st, "end_us")).fold(0.0, f64::max);
    assert!(last <= f(s, "time_us") + 1e-9);
    // HD in plan order meets M = 4 flows on one cable at 16 MiB: a queue
    // forms there, deeper than any single packet.
    let stats = &p["stats"];
    assert!(stats["max_queue_bytes"].as_u64().unwrap() > 4096, "{stats}");
    let marks: u64 = steps
        .iter()
        .map(|st| st["ecn_marks"].as_u64().unwrap())
        .sum();
    assert_eq!(marks, stats["ecn_marks"].as_u64().unwrap());
    let pauses: u64 = steps
        .iter()
        .map(|st| st["pfc_pauses"].as_u64().unwrap())
        .sum();
    assert_eq!(pauses, stats["pfc_pauses"].as_u64().unwrap());
}

/// Issue #33: a job the simulator's memory limit refuses (too many sends)
/// is refused before anything runs (no estimate of the algorithms before
/// it is printed, because none ran), naming the algorithm, plan and size,
/// the memory, and the options the user has: `--ranks` as an option to
/// give, not as the flag at fault.
#[test]
fn issue33_send_limit_refused_before_anything_runs() {
    let args = [
        "simulate",
        "--bigraph",
        "64x128",
        "--algorithm",
        "hd,ring",
        "--size",
        "1MiB",
    ];
    let out = planner(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "hd ran first");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ring on bigraph-64x128 at 1MiB: 8192 ranks: "),
        "{err}"
    );
    assert!(err.contains("above its limit of 4.0 GiB"), "{err}");
    assert!(err.contains("--method closed-form"), "{err}");
    assert!(err.contains("--ranks N below 8192"), "{err}");
    assert!(!err.contains("error: --ranks"), "{err}");
    // Given, --ranks is named as given.
    let mut given = args.to_vec();
    given.extend(["--ranks", "6144"]);
    let err = String::from_utf8_lossy(&planner(&given).stderr).to_string();
    assert!(err.contains("fewer than --ranks 6144"), "{err}");
}

/// Runs `planner` with the progress reporter's knobs set to report at
/// once and often.
fn with_fast_progress(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(root())
        .env("PLANNER_PROGRESS_AFTER_MS", "0")
        .env("PLANNER_PROGRESS_EVERY_MS", "1")
        .output()
        .expect("run planner")
}

/// Issue #33: progress on stderr while a simulation runs, off with
/// --quiet and with --format json.
#[test]
fn issue33_progress_on_stderr_unless_quiet_or_json() {
    // Four ECMP seeds make the run four times as long, so the ticker
    // thread gets its turns even on a loaded machine: with one seed it
    // once missed all of them.
    let base = [
        "simulate",
        EFLOPS,
        "--algorithm",
        "ring,hd",
        "--size",
        "1KiB..64MiB",
        "--seeds",
        "4",
    ];
    let out = with_fast_progress(&base);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("simulating ring, hd on eflops-4x16: "),
        "{err}"
    );
    assert!(err.contains(" estimates done, "), "{err}");
    // The sends the simulations started, out of the count made before.
    assert!(err.contains(" sends started, "), "{err}");
    for extra in [&["--quiet"][..], &["--format", "json"][..]] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let out = with_fast_progress(&args);
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("simulating"), "{extra:?}: {err}");
    }
}

/// Issue #33: notes name plans that share a name by their files.
#[test]
fn issue33_notes_tell_plans_of_one_name_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let inv = "topologies/eflops-4x16.toml";
    assert!(planner(&["design", inv, "--out", a]).status.success());
    let ft = planner(&["design", inv, "--topology", "fat-tree", "--out", b]);
    assert!(ft.status.success());
    let out = planner(&[
        "simulate",
        a,
        b,
        "--algorithm",
        "hdrm,ring",
        "--size",
        "1MiB",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("Note: hdrm skipped on eflops-4x16 ({b}):")),
        "{text}"
    );
}

/// Issue #33: `--algorithm all` on a fat-tree runs what applies there and
/// says what it skipped; naming hdrm alone is still refused.
#[test]
fn issue33_algorithm_all_on_a_fat_tree_skips_with_a_note() {
    let base = [
        "simulate",
        "--fat-tree",
        "tiers=2,sub-nodes=16,ports=8",
        "--size",
        "1MiB",
        "--method",
        "closed-form",
        "--algorithm",
    ];
    let mut all = base.to_vec();
    all.push("all");
    let out = planner(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Note: hdrm skipped on fat-tree-2tier-16: its rank mapping needs a BiGraph."),
        "{text}"
    );
    assert!(
        text.contains("nccl-tree") && text.contains("ring"),
        "{text}"
    );
    let mut hdrm = base.to_vec();
    hdrm.push("hdrm");
    assert_eq!(planner(&hdrm).status.code(), Some(2));
}

/// One decimal with thousands separators, as the docs write times.
fn grouped(x: f64) -> String {
    let s = format!("{x:.1}");
    let (int, frac) = s.split_once('.').expect("one decimal");
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}.{frac}")
}

/// docs/packet-sim.md ("Which NIC") quotes HD at 4 MiB on the EFLOPS plan
/// under each NIC preset and with the DCQCN floor changed (issue #33 item
/// 6: the reference check against HPCC's ns-3). The figures are rebuilt
/// here from the commands the page names, and looked up in the page.
#[test]
fn issue33_which_nic_figures_are_the_commands() {
    let page = fs::read_to_string(root().join("docs/packet-sim.md")).unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let time = |param: &str| {
        let rows = json(&[
            "simulate",
            EFLOPS,
            "--algorithm",
            "hd",
            "--size",
            "4MiB",
            "--method",
            "packet",
            "--param",
            param,
            "--format",
            "json",
        ]);
        f(&rows[0], "time_us")
    };
    let connectx = time("nic=connectx");
    let floor_100 = time("nic=connectx,dcqcn_min_mbps=100");
    let floor_1000 = time("nic=connectx,dcqcn_min_mbps=1000");
    let zhu2015 = time("nic=zhu2015");
    let hpcc = time(
        "nic=connectx,dcqcn_min_mbps=1000,dcqcn_rai_mbps=20,dcqcn_rhai_mbps=200,\
         dcqcn_g=0.00390625,dcqcn_bytes=1000000000000",
    );
    for sentence in [
        format!("nothing changed: {} µs;", grouped(connectx)),
        format!("`dcqcn_min_mbps=100`: {} µs;", grouped(floor_100)),
        format!("`dcqcn_min_mbps=1000`: {} µs.", grouped(floor_1000)),
        format!("`zhu2015` gives {} µs.", grouped(zhu2015)),
        format!("it takes {} µs.", grouped(hpcc)),
    ] {
        assert!(
            page.contains(&sentence),
            "docs/packet-sim.md no longer says what `planner simulate` prints; write:\n\n{sentence}\n"
        );
    }
    // What the page concludes from them: the floor, not the rest of the
    // ConnectX settings, makes the case ten times slower.
    assert!(
        connectx > 10.0 * floor_1000,
        "{connectx} against {floor_1000}"
    );
    assert!(
        floor_1000 < 1.25 * zhu2015,
        "{floor_1000} against {zhu2015}"
    );
}
