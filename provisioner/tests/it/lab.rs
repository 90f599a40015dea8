//! The lab end to end on this machine's kernel: `provisioner lab up`, runs of ring, hd and HDRM with flows counted per link and step, a degraded cable found by the burn-in, a cut cable, and `lab down` leaving nothing behind.
//!
//! These need root, `ip` and `tc` (iproute2): without root they say they
//! skipped, and with `TESTS_NO_SKIP=1` (as `.ci/run` sets) that is a
//! failure. Each test builds its own lab under its own name and state
//! directory; the lab touches only the namespaces it creates.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::skip;

use crate::lab_support::Lab;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plan(name: &str) -> String {
    workspace()
        .join("examples/data")
        .join(name)
        .display()
        .to_string()
}

/// The lock that runs a lab test alone, when the test can run; else it
/// says it skipped.
fn can_run(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if provisioner::lab::sys::is_root() {
        return Some(crate::lab_support::serial());
    }
    skip::skipped(
        test,
        "not root",
        "run the tests as root (a lab makes network namespaces)",
    );
    None
}

/// Every counted step of a run.
fn steps(run: &Value) -> &Vec<Value> {
    run["steps"].as_array().unwrap()
}

#[test]
fn lab_bigraph_2x8_hdrm_one_flow_per_link_hd_shares_as_predicted_burn_in_names_the_degraded_cable()
{
    let Some(_alone) = can_run("lab_bigraph_2x8") else {
        return;
    };
    let lab = Lab::new("tbig");
    let up = lab.json(&["up", &plan("bigraph-2x8.plan.json"), "--rate", "100mbit"]);
    assert_eq!(up["namespaces"], 24, "{up}");
    assert_eq!(lab.namespaces().len(), 24);

    // A second `up` is refused and changes nothing.
    let again = lab.cmd(&["up", &plan("bigraph-2x8.plan.json")]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already up"));

    // HDRM: every connection a direct cable, one flow per directed link.
    let hdrm = lab.json(&[
        "run",
        "--algorithm",
        "hdrm",
        "--size",
        "256KiB",
        "--count-size",
        "1MiB",
    ]);
    assert_eq!(hdrm["ranks"], 16);
    assert_eq!(hdrm["timed"][0]["wrong"], 0, "{hdrm}");
    assert_eq!(steps(&hdrm).len(), 8);
    for s in steps(&hdrm) {
        assert_eq!(s["mismatches"], 0, "{s}");
        assert_eq!(s["measured_max"], 1, "{s}");
    }

    // HD in plan order: the predicted sharing, link by link.
    let hd = lab.json(&[
        "run",
        "--algorithm",
        "hd",
        "--no-timed",
        "--count-size",
        "1MiB",
    ]);
    assert!(steps(&hd).iter().all(|s| s["mismatches"] == 0), "{hd}");
    let most = steps(&hd)
        .iter()
        .map(|s| s["measured_max"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(most >= 2, "hd in plan order shares no link: {hd}");

    // Ring: one flow per step through a BiGraph's cables.
    let ring = lab.json(&[
        "run",
        "--algorithm",
        "ring",
        "--no-timed",
        "--count-size",
        "1MiB",
    ]);
    assert_eq!(steps(&ring).len(), 30);
    assert!(steps(&ring).iter().all(|s| s["mismatches"] == 0), "{ring}");

    // Twelve ranks (issue #32): the planner's table for a count that is
    // not a power of two, and the engine's fold and unfold steps counted
    // like the others.
    let folded = lab.json(&[
        "run",
        "--algorithm",
        "hdrm",
        "--ranks",
        "12",
        "--no-timed",
        "--count-size",
        "1MiB",
    ]);
    assert_eq!(folded["ranks"], 12);
    assert_eq!(steps(&folded).len(), 8);
    assert_eq!(steps(&folded)[0]["name"], "fold 1", "{folded}");
    assert!(
        steps(&folded).iter().all(|s| s["mismatches"] == 0),
        "{folded}"
    );

    // One cable at a quarter of its rate: the burn-in names it, no other.
    let said = lab.ok(&["degrade", "link:sw1-sw4", "--rate", "25mbit"]);
    assert!(said.contains("sw1-sw4"), "{said}");
    let status = lab.json(&["status"]);
    assert_eq!(status["changed"][0][0], "sw1-sw4", "{status}");
    let burn = lab.json(&["run", "--burn-in", "--seconds", "1.5"]);
    assert_eq!(burn["links"], 32, "{burn}");
    let slow: Vec<&str> = burn["slow_cables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cable"].as_str().unwrap())
        .collect();
    assert_eq!(slow, ["sw1-sw4"], "{burn}");
    lab.ok(&["restore", "link:sw1-sw4"]);

    // A cut cable: static routes blackhole its pairs, and the run fails
    // in bounded time naming a rank.
    lab.ok(&["cut", "link:sw1-sw4"]);
    let cut = lab.cmd(&[
        "run",
        "--algorithm",
        "hdrm",
        "--no-count",
        "--size",
        "64KiB",
        "--timeout",
        "5",
    ]);
    assert_eq!(cut.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&cut.stderr).contains("rank "));
    lab.ok(&["restore", "link:sw1-sw4"]);
    let back = lab.json(&[
        "run",
        "--algorithm",
        "hdrm",
        "--no-count",
        "--size",
        "64KiB",
    ]);
    assert_eq!(back["timed"][0]["wrong"], 0);

    let down = lab.json(&["down"]);
    assert_eq!(down["namespaces"], 24);
    assert!(lab.namespaces().is_empty());
    assert!(
        std::fs::read_dir(lab.dir.path()).unwrap().next().is_none(),
        "state left"
    );
}

#[test]
fn probe_burn_in_over_the_labs_namespaces_names_the_degraded_cable() {
    // The cluster burn-in (`provisioner probe --burn-in`, one process per
    // sub-node with the plan's addresses) run inside the lab's sub-node
    // namespaces, as it would run on the cluster's hosts.
    let Some(_alone) = can_run("probe_burn_in_over_the_lab") else {
        return;
    };
    let lab = Lab::new("tpbi");
    let plan_file = plan("eflops-4x16.plan.json");
    let up = lab.json(&["up", &plan_file]);
    assert_eq!(up["rate_kbit"], 25_000);
    lab.ok(&["degrade", "link:sw03-u-sw05-l", "--rate", "6mbit"]);
    let plan = planner::checked::CheckedPlan::load(
        &std::fs::read_to_string(&plan_file).unwrap(),
        &plan_file,
    )
    .unwrap();
    let table = planner::ranks::rank_table(&plan, planner::ranks::Algorithm::Hd, None).unwrap();
    let ranks = lab.dir.path().join("ranks.csv");
    std::fs::write(&ranks, planner::ranks::format::to_csv(&plan, &table)).unwrap();
    let ranks = ranks.display().to_string();
    let children: Vec<_> = table
        .ranks
        .iter()
        .enumerate()
        .map(|(r, &sub)| {
            Command::new("ip")
                .args(["netns", "exec", &format!("efl-tpbi-h{sub}")])
                .arg(env!("CARGO_BIN_EXE_provisioner"))
                .env("PROBE_TOKEN", "lab-test-job-secret-0123456789")
                .args(["probe", "--burn-in", "--rank", &r.to_string()])
                .args(["--ranks-file", &ranks, "--plan", &plan_file])
                .args([
                    "--seconds",
                    "0.5",
                    "--expect-gbps",
                    "0.025",
                    "--format",
                    "json",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    // Every other rank ends well; rank 0 reports and exits 1 for the
    // slow cable it names.
    for (r, o) in outs.iter().enumerate().skip(1) {
        assert!(
            o.status.success(),
            "rank {r}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(outs[0].status.code(), Some(1));
    assert!(String::from_utf8_lossy(&outs[0].stderr).contains("sw03-u-sw05-l"));
    let report: Value = serde_json::from_slice(&outs[0].stdout).unwrap();
    assert_eq!(report["links"], 128, "{report}");
    let slow: Vec<&str> = report["slow_cables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cable"].as_str().unwrap())
        .collect();
    assert_eq!(slow, ["sw03-u-sw05-l"], "{report}");
    lab.json(&["down"]);
}

#[test]
fn lab_fat_tree_routes_every_flow_where_the_model_hashes_it() {
    let Some(_alone) = can_run("lab_fat_tree") else {
        return;
    };
    let lab = Lab::new("tft");
    lab.json(&["up", &plan("fat-tree-16.plan.json")]);
    for seed in ["0", "3"] {
        let hd = lab.json(&[
            "run",
            "--algorithm",
            "hd",
            "--no-timed",
            "--count-size",
            "1MiB",
            "--seed",
            seed,
        ]);
        assert!(hd["pins"].as_u64().unwrap() > 0, "{hd}");
        assert!(
            steps(&hd).iter().all(|s| s["mismatches"] == 0),
            "seed {seed}: {hd}"
        );
    }
    lab.json(&["down"]);
    assert!(lab.namespaces().is_empty());
}

#[test]
fn lab_down_after_a_killed_run_stops_its_ranks_and_removes_everything() {
    let Some(_alone) = can_run("lab_down_after_kill") else {
        return;
    };
    let lab = Lab::new("tkill");
    lab.json(&["up", &plan("bigraph-2x8.plan.json"), "--rate", "10mbit"]);
    let mut run = Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args([
            "lab",
            "run",
            "--algorithm",
            "ring",
            "--size",
            "64MiB",
            "--name",
            "tkill",
            "--state-dir",
        ])
        .arg(lab.dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until ranks run in the namespaces, then kill the controller.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let host0 = "efl-tkill-h0";
    while std::time::Instant::now() < until {
        let pids = Command::new("ip")
            .args(["netns", "pids", host0])
            .output()
            .unwrap();
        if !pids.stdout.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    run.kill().unwrap();
    run.wait().unwrap();
    // A lab whose `up` was killed half-way (its state says `building`)
    // runs nothing until it is taken down.
    let file = lab.dir.path().join("tkill.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("\"phase\": \"up\"", "\"phase\": \"building\""),
    )
    .unwrap();
    let half = lab.cmd(&["run", "--algorithm", "hd"]);
    assert_eq!(half.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&half.stderr).contains("half-built"));
    let down = lab.json(&["down"]);
    assert_eq!(down["namespaces"], 24);
    assert!(down["processes"].as_u64().unwrap() > 0, "{down}");
    assert!(lab.namespaces().is_empty());
}

#[test]
fn lab_up_refuses_a_namespace_it_did_not_make() {
    let Some(_alone) = can_run("lab_up_leftover") else {
        return;
    };
    let lab = Lab::new("tleft");
    let made = Command::new("ip")
        .args(["netns", "add", "efl-tleft-s3"])
        .status()
        .unwrap();
    assert!(made.success());
    let out = lab.cmd(&["up", &plan("bigraph-2x8.plan.json")]);
    let _ = Command::new("ip")
        .args(["netns", "del", "efl-tleft-s3"])
        .status();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("namespace efl-tleft-s3 exists"), "{err}");
    // Nothing was made, and no state file was written.
    assert!(lab.namespaces().is_empty());
    assert!(std::fs::read_dir(lab.dir.path()).unwrap().next().is_none());
}

#[test]
fn lab_refusals_name_what_to_do() {
    // These need no root: they are refused before anything is made.
    let lab = Lab::new("tbad");
    let cases: &[(&[&str], &str)] = &[
        (&["status"], "no lab tbad is up"),
        (&["run", "--algorithm", "hd"], "no lab tbad is up"),
        (
            &["degrade", "link:a-b", "--rate", "1mbit"],
            "no lab tbad is up",
        ),
    ];
    for (args, want) in cases {
        let out = lab.cmd(args);
        let err = String::from_utf8_lossy(&out.stderr);
        // Without root, the lab says root is missing before it looks for
        // the state of commands that change the machine.
        if !provisioner::lab::sys::is_root() && err.contains("root is missing") {
            assert_eq!(out.status.code(), Some(2));
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let out = lab.cmd(&["up", &plan("bigraph-2x8.plan.json"), "--rate", "fast"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate"));
    let out = Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args(["lab", "status", "--name", "Bad;name"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--name"));
}

/// Issue #31: a state file that names a namespace of someone else, a
/// directory outside the lab's (through `..`) or a namespace with the
/// lab's name that the lab did not make is refused whole, naming it, and
/// nothing is removed or stopped; the lab's own state then takes it down.
#[test]
fn lab_down_removes_only_what_the_lab_made() {
    let Some(_alone) = can_run("lab_down_trust") else {
        return;
    };
    let lab = Lab::new("ttrust");
    lab.json(&["up", &plan("bigraph-2x8.plan.json"), "--rate", "100mbit"]);
    let ip = |args: &[&str]| {
        assert!(
            Command::new("ip").args(args).status().unwrap().success(),
            "ip {args:?}"
        );
    };
    // A decoy namespace with a process in it, and a directory outside the
    // lab's named like one of its FRR directories.
    let decoy = "ttrust-decoy";
    ip(&["netns", "add", decoy]);
    let mut sleeper = Command::new("ip")
        .args(["netns", "exec", decoy, "sleep", "120"])
        .spawn()
        .unwrap();
    let victim = tempfile::tempdir().unwrap();
    let victim_dir = victim.path().join("efl-ttrust-s0");
    std::fs::create_dir(&victim_dir).unwrap();
    let file = lab.dir.path().join("ttrust.json");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let refused = |st: &Value, object: &str, why: &str| {
        std::fs::write(&file, serde_json::to_string_pretty(st).unwrap()).unwrap();
        let out = lab.cmd(&["down"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "the state file {} names {object}, which lab down will not touch: {why}",
                file.display()
            )),
            "{err}"
        );
        assert_eq!(lab.namespaces().len(), 24, "lab down removed something");
    };
    let mut with_decoy = good.clone();
    with_decoy["namespaces"]
        .as_array_mut()
        .unwrap()
        .push(decoy.into());
    refused(
        &with_decoy,
        "namespace ttrust-decoy",
        "it is not one of lab ttrust's namespaces",
    );
    let mut with_escape = good.clone();
    let escape = format!("/etc/frr/../..{}", victim_dir.display());
    with_escape["frr_dirs"] = serde_json::json!([escape]);
    refused(
        &with_escape,
        &format!("directory {escape}"),
        "it has a `.` or `..` component",
    );
    // An impostor under the lab's own name.
    ip(&["netns", "del", "efl-ttrust-h0"]);
    ip(&["netns", "add", "efl-ttrust-h0"]);
    refused(
        &good,
        "namespace efl-ttrust-h0",
        "it does not carry lab ttrust's mark (the alias of its loopback interface is none)",
    );
    // Nothing of the decoy's was touched.
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the decoy's process was stopped"
    );
    assert!(victim_dir.is_dir());
    assert!(Path::new("/run/netns").join(decoy).exists());
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    ip(&["netns", "del", decoy]);
    // The impostor is the test's: it removes it, and the lab goes down.
    ip(&["netns", "del", "efl-ttrust-h0"]);
    std::fs::write(&file, serde_json::to_string_pretty(&good).unwrap()).unwrap();
    let down = lab.json(&["down"]);
    assert_eq!(down["namespaces"], 23);
    assert!(lab.namespaces().is_empty());
}
