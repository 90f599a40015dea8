//! Issue #13, "Bounds before work" and "One answer per question": sizes
//! that would blow up are refused (exit 2, naming the limit) before any
//! work, and commands agree on what a spec means.

use std::time::{Duration, Instant};

use crate::planner;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// Runs `args`, asserts exit code 2 within seconds and that stderr holds
/// every one of `words`.
fn refused_quickly(args: &[&str], words: &[&str]) {
    let start = Instant::now();
    let out = planner(args);
    let took = start.elapsed();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    // A blow-up takes minutes; 10 s keeps a loaded CI machine from failing it.
    assert!(took < Duration::from_secs(10), "{args:?} took {took:?}");
    for w in words {
        assert!(err.contains(w), "{args:?}: `{w}` missing from {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn issue13_inventory_count_checked_before_expansion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    std::fs::write(
        &path,
        r#"[inventory]
name = "big"

[[server]]
name = "node{n:08}"
count = 10000000
sockets = ["cpu0"]
[[server.gpu]]
model = "H100"
socket = "cpu0"
[[server.nic]]
model = "cx7"
socket = "cpu0"
speed_gbps = 400

[[switch]]
name = "sw{n:02}"
count = 4
model = "x"
ports = 64
port_gbps = 400
"#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    for cmd in ["design", "compare", "check-servers"] {
        refused_quickly(
            &[cmd, p],
            &[
                "big.toml:6",
                "server template node{n:08}",
                "10000000 sub-nodes",
                "limit of 262144",
            ],
        );
    }
}

#[test]
fn issue13_bigraph_shorthand_bounded() {
    for spec in ["2x8192", "1x131072"] {
        refused_quickly(
            &["design", "--bigraph", spec],
            &["--bigraph", spec, "BiGraph switches (N)", "limit of 2048"],
        );
    }
    refused_quickly(
        &[
            "design",
            "--bigraph",
            "4x16",
            "--server-sub-nodes",
            "1000000",
        ],
        &[
            "--server-sub-nodes",
            "1000000 sub-nodes per server",
            "limit of 64",
        ],
    );
}

#[test]
fn issue13_fat_tree_shorthand_bounded() {
    refused_quickly(
        &["design", "--fat-tree", "k=4096"],
        &["--fat-tree", "sub-nodes is above the limit of 262144"],
    );
    refused_quickly(
        &["design", "--fat-tree", "tiers=258,ports=64"],
        &["tiers=258", "2 (leaf-spine) or 3"],
    );
    refused_quickly(
        &[
            "design",
            "--fat-tree",
            "tiers=2,sub-nodes=1024,ports=4294967360",
        ],
        &["ports per switch", "limit of 4096"],
    );
}

#[test]
fn issue13_fat_tree_spec_refused_by_every_command_alike() {
    let spec = "tiers=2,sub-nodes=4096,ports=64";
    for cmd in ["design", "compare"] {
        refused_quickly(
            &[cmd, "--fat-tree", spec],
            &["2-tier leaf-spine", "128 leaves"],
        );
    }
}

#[test]
fn issue13_design_help_fat_tree_examples_work() {
    let help = text(&planner(&["design", "--help"]).stdout);
    let start = help.find("--fat-tree <SPEC>").expect("--fat-tree in help");
    let para = &help[start..start + help[start..].find("\n\n").unwrap_or(400)];
    let examples: Vec<&str> = para.split('`').skip(1).step_by(2).collect();
    assert!(examples.len() >= 3, "{para}");
    for spec in examples {
        for cmd in ["design", "compare"] {
            let out = planner(&[cmd, "--fat-tree", spec]);
            assert!(
                out.status.success(),
                "{cmd} --fat-tree {spec}: {}",
                text(&out.stderr)
            );
        }
    }
}

/// Writes a one-layer-or-more model TOML into `dir` and returns its path.
fn model(dir: &std::path::Path, layers: &str) -> String {
    let path = dir.join("model.toml");
    std::fs::write(&path, format!("name = \"m\"\n{layers}")).unwrap();
    path.to_str().unwrap().to_string()
}

fn iteration(model: &str) -> Vec<String> {
    [
        "iteration",
        "examples/data/eflops-4x16.plan.json",
        "--model",
        model,
        "--ranks",
        "64",
        "--algorithm",
        "hdrm",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn issue13_iteration_layer_parameters_bounded() {
    let dir = tempfile::tempdir().unwrap();
    for params in ["2400000000000000000", "4611686018427387904"] {
        let m = model(
            dir.path(),
            &format!("[[layer]]\nparameters = {params}\nforward_gflops = 1\n"),
        );
        let args = iteration(&m);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused_quickly(
            &args,
            &[
                "model.toml:2",
                "layer layer1",
                "parameters in one layer",
                "limit of 1000000000000",
            ],
        );
    }
}

#[test]
fn issue13_iteration_layer_times_summing_to_infinity_refused() {
    let dir = tempfile::tempdir().unwrap();
    let layer = "[[layer]]\nparameters = 1000\nforward_ms = 1e308\nbackward_ms = 1e308\n";
    let m = model(dir.path(), &layer.repeat(3));
    let args = iteration(&m);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused_quickly(&args, &["forward_ms", "limit of 3600000", "backward_ms"]);
}

#[test]
fn issue13_iteration_tiny_gpu_tflops_refused() {
    let mut args = iteration("resnet50");
    args.extend(["--gpu-tflops", "1e-300"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused_quickly(&args, &["--gpu-tflops", "limit of 0.001 TFLOPS"]);
}

#[test]
fn issue13_simulate_scale_and_ranks_bounded() {
    refused_quickly(
        &[
            "simulate",
            "--scale",
            "8192",
            "--size",
            "1MiB",
            "--algorithm",
            "ring",
        ],
        &[
            "ring on ",
            "8192 ranks",
            "134201344 sends in the schedule",
            "12 GiB of memory in the simulator, above its limit of 4.0 GiB",
            "closed-form",
            "smaller --scale points",
        ],
    );
    refused_quickly(
        &["simulate", "--scale", "1048576", "--size", "1MiB"],
        &[
            "--scale",
            "1048576 sub-nodes in a scale point",
            "limit of 16384",
        ],
    );
}

/// Issue #31: 8,000 repeated `[[server.nic]]` tables are refused in
/// linear time (each problem's line was found by a scan from the start of
/// the file: 18.6 s of CPU).
#[test]
fn issue31_many_nic_tables_refused_in_linear_time() {
    let inventory = crate::root().join("topologies/s822lc-48.toml");
    let text = std::fs::read_to_string(inventory).unwrap();
    let start = text.find("[[server.nic]]").unwrap();
    let end = start + text[start + 1..].find("\n[").unwrap() + 2;
    let many = format!(
        "{}{}{}",
        &text[..end],
        text[start..end].repeat(8000),
        &text[end..]
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nics.toml");
    std::fs::write(&path, many).unwrap();
    refused_quickly(
        &["check-servers", path.to_str().unwrap()],
        &["nics.toml:27", "above the limit of 262144"],
    );
}

/// Issue #31: an input that is not a regular file is refused before it is
/// read (`/dev/zero` grew to 4.2 GB), naming the file.
#[test]
fn issue31_devices_and_fifos_are_not_read() {
    refused_quickly(
        &["check-servers", "/dev/zero"],
        &["cannot read /dev/zero: it is a device, FIFO or socket, not a regular file"],
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    refused_quickly(
        &["validate", fifo.to_str().unwrap()],
        &["fifo: it is a device, FIFO or socket, not a regular file"],
    );
}

/// Issue #31: a plan or inventory nested 100,000 levels (600 KB) is refused
/// before any parser sees it, naming the file, the line and the limit.
#[test]
fn issue31_deep_nesting_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let plan = dir.path().join("deep.json");
    std::fs::write(&plan, "{\"a\":".repeat(n) + "1" + &"}".repeat(n)).unwrap();
    refused_quickly(
        &["cables", plan.to_str().unwrap()],
        &["deep.json: line 1 is nested more than 128 levels deep, the limit for an input file"],
    );
    let inventory = dir.path().join("deep.toml");
    std::fs::write(
        &inventory,
        "[inventory]\nname = \"x\"\nlist = ".to_string() + &"[".repeat(n) + &"]".repeat(n) + "\n",
    )
    .unwrap();
    refused_quickly(
        &["check-servers", inventory.to_str().unwrap()],
        &["deep.toml: line 3 is nested more than 128 levels deep"],
    );
}
