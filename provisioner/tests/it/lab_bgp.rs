//! The lab with a real routing stack: `lab up --routing bgp` runs FRR in every switch namespace, `provisioner push` (vendor frr, transport netns) configures it, verification reads FRR and lldpd, a planted fault rolls back, and a cut cable is routed around by BGP and BFD where static routes blackhole it.
//!
//! These need root and the Debian packages frr, frr-pythontools and
//! lldpd (`.ci/install-deps`): without them they say they skipped, and
//! with `TESTS_NO_SKIP=1` that is a failure. Each test builds its own lab
//! under its own name and state directory; the lab touches only the
//! namespaces and FRR directories it creates.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::skip;

use crate::lab_support::Lab;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plan(name: &str) -> PathBuf {
    workspace().join("examples/data").join(name)
}

/// The lock that runs a BGP lab test alone, when the test can run; else
/// it says it skipped.
fn can_run(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !provisioner::lab::sys::is_root() {
        skip::skipped(
            test,
            "not root",
            "run the tests as root (a lab makes network namespaces)",
        );
        return None;
    }
    if let Err(e) = provisioner::lab::frr::check() {
        skip::skipped(test, &e.to_string(), "run .ci/install-deps");
        return None;
    }
    Some(crate::lab_support::serial())
}

/// `vtysh` in a lab switch (its namespace and its zebra's host name).
fn vtysh(ns: &str, command: &str) -> String {
    let pid = std::fs::read_to_string(format!("/var/run/frr/{ns}/zebra.pid")).unwrap();
    let out = Command::new("nsenter")
        .arg(format!("--target={}", pid.trim()))
        .args(["--net", "--uts", "--", "vtysh", "-N", ns, "-c", command])
        .output()
        .unwrap();
    assert!(out.status.success(), "vtysh {command}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The kernel's route to `prefix` in namespace `ns`: its next-hop
/// addresses (empty when it has none).
fn next_hops(ns: &str, prefix: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["-j", "-n", ns, "route", "show", prefix])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let mut hops = Vec::new();
    for r in v.as_array().into_iter().flatten() {
        if let Some(g) = r["gateway"].as_str() {
            hops.push(g.to_string());
        }
        for h in r["nexthops"].as_array().into_iter().flatten() {
            if let Some(g) = h["gateway"].as_str() {
                hops.push(g.to_string());
            }
        }
    }
    hops.sort();
    hops
}

#[test]
fn a_bgp_lab_runs_frr_per_physical_switch_and_leaves_nothing() {
    let Some(_alone) = can_run("a_bgp_lab_runs_frr_per_physical_switch_and_leaves_nothing") else {
        return;
    };
    let lab = Lab::new("tbgpa");
    let file = plan("bigraph-2x8.plan.json");
    let up = lab.json(&["up", file.to_str().unwrap(), "--routing", "bgp"]);
    assert_eq!(up["routing"], "bgp", "{up}");
    assert_eq!(up["switches"], 8, "{up}");
    assert_eq!(up["namespaces"], 24, "{up}");

    // One devices entry per physical switch, in the namespace FRR runs.
    let devices_text = lab.ok(&["devices"]);
    let parsed: toml::Value = toml::from_str(&devices_text).unwrap();
    let list = parsed["device"].as_array().unwrap();
    assert_eq!(list.len(), 8);
    let st = lab.state();
    for (j, d) in list.iter().enumerate() {
        assert_eq!(d["vendor"].as_str(), Some("frr"));
        assert_eq!(d["transport"].as_str(), Some("netns"));
        let ns = d["netns"].as_str().unwrap();
        assert_eq!(ns, format!("efl-tbgpa-p{j}"));
        // FRR answers with the physical switch's host name, a minimal
        // configuration and no routes but the connected ones.
        let version = vtysh(ns, "show version");
        let name = st["lab"]["switches"][j]["physical"].as_str().unwrap();
        assert!(version.contains(&format!("({name})")), "{version}");
        assert!(!vtysh(ns, "show running-config").contains("router bgp"));
        let sw = &st["lab"]["switches"][j];
        for r in sw["routes"].as_array().unwrap() {
            let prefix = r["prefix"].as_str().unwrap();
            assert!(
                next_hops(ns, prefix).is_empty(),
                "{ns} {prefix} routed before push"
            );
        }
        // Ports are swp<p>.
        let links = Command::new("ip")
            .args(["-j", "-n", ns, "link", "show"])
            .output()
            .unwrap();
        let links: Value = serde_json::from_slice(&links.stdout).unwrap();
        let names: Vec<&str> = links
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|l| l["ifname"].as_str())
            .collect();
        for p in sw["routed_ports"].as_array().unwrap() {
            let want = format!("swp{}", p["port"]);
            assert!(names.contains(&want.as_str()), "{ns}: {names:?}");
        }
    }

    let status = lab.json(&["status"]);
    assert_eq!(status["routing"], "bgp");

    // A first install onto this fabric that runs no BGP. One switch alone
    // cannot verify (its peers run no BGP): it goes back to what it ran,
    // and the error says to push the peers with it.
    let work = tempfile::tempdir().unwrap();
    let devices = work.path().join("devices.toml");
    std::fs::write(&devices, &devices_text).unwrap();
    let bgp_plan = plan("bigraph-2x8-bgp.plan.json");
    let args = |journal: &str| {
        vec![
            bgp_plan.to_str().unwrap().to_string(),
            "--devices".to_string(),
            devices.to_str().unwrap().to_string(),
            "--journal".to_string(),
            work.path().join(journal).to_str().unwrap().to_string(),
        ]
    };
    let mut alone = args("alone.json");
    alone.extend(["--switch", "sw1", "--settle", "3s"].map(String::from));
    let alone: Vec<&str> = alone.iter().map(String::as_str).collect();
    let (code, report, err) = push(work.path(), &alone);
    assert_eq!(code, Some(2), "{err}\n{report}");
    assert_eq!(
        phases(&report),
        [("sw1".to_string(), "rolled-back".to_string())],
        "{report}"
    );
    assert!(
        err.contains("its peers sw2, sw4, sw6, sw8 were not part of this push"),
        "{err}"
    );
    assert!(!vtysh("efl-tbgpa-p0", "show running-config").contains("router bgp"));

    // The whole fabric: each switch verified as far as the fabric runs,
    // then all checked in full and confirmed.
    let all = args("all.json");
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let (code, report, err) = push(work.path(), &all);
    assert_eq!(code, Some(0), "{err}\n{report}");
    for s in report["switches"].as_array().unwrap() {
        assert_eq!(s["phase"], "confirmed", "{s}");
        assert_eq!(s["mismatches"], serde_json::json!([]), "{s}");
        assert_eq!(s["waits_for_fabric"], true, "{s}");
    }
    // The canary met only peers without BGP.
    let canary = &report["switches"][0];
    assert!(
        canary["pending"].is_null(),
        "pending sessions are cleared once the fabric checked: {canary}"
    );
    for (j, sw) in st["lab"]["switches"].as_array().unwrap().iter().enumerate() {
        let ns = format!("efl-tbgpa-p{j}");
        for r in sw["routes"].as_array().unwrap() {
            let mut want: Vec<String> = r["via"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["address"].as_str().unwrap().to_string())
                .collect();
            want.sort();
            let prefix = r["prefix"].as_str().unwrap();
            assert_eq!(next_hops(&ns, prefix), want, "{ns} {prefix}");
        }
    }

    let down = lab.json(&["down"]);
    assert_eq!(down["namespaces"], 24);
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_bgp_lab_refuses_split_switches_and_a_static_lab_has_no_devices() {
    let Some(_alone) = can_run("a_bgp_lab_refuses_split_switches") else {
        return;
    };
    let lab = Lab::new("tbgpb");
    let split = plan("eflops-4x16.plan.json");
    let out = lab.cmd(&["up", split.to_str().unwrap(), "--routing", "bgp"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sw01-u") && err.contains("VRF"), "{err}");
    assert!(lab.leftovers().is_empty());

    // A static lab has no FRR: `lab devices` says how to get one.
    lab.ok(&["up", plan("bigraph-2x8.plan.json").to_str().unwrap()]);
    let out = lab.cmd(&["devices"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--routing bgp"));
    lab.ok(&["down"]);
    assert!(lab.leftovers().is_empty());
}

/// `provisioner push ARGS --format json` from the test's directory; the
/// report and the exit code.
fn push(dir: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .arg("push")
        .args(args)
        .args(["--format", "json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report, stderr)
}

/// A copy of the BGP BiGraph 2x8 plan with `edit` applied to its routing
/// intent, written as `name` in `dir`.
fn changed_plan(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(plan("bigraph-2x8-bgp.plan.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    edit(&mut v["routing"]);
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    file
}

#[test]
fn the_bgp_example_plan_is_the_static_one_routed_by_bgp() {
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(plan(name)).unwrap()).unwrap()
    };
    let mut bgp = read("bigraph-2x8-bgp.plan.json");
    let routing = bgp.as_object_mut().unwrap().remove("routing").unwrap();
    assert_eq!(routing["mode"], "bgp");
    assert_eq!(bgp, read("bigraph-2x8.plan.json"));
    let text = std::fs::read_to_string(plan("bigraph-2x8-bgp.plan.json")).unwrap();
    let checked = planner::checked::CheckedPlan::load(&text, "bigraph-2x8-bgp").unwrap();
    assert!(checked.routing.is_bgp());
}

fn phases(report: &Value) -> Vec<(String, String)> {
    report["switches"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|s| {
            (
                s["switch"].as_str().unwrap_or_default().to_string(),
                s["phase"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn push_configures_frr_verifies_rolls_back_a_fault_and_bgp_routes_around_a_cut_cable() {
    let Some(_alone) = can_run("push_configures_frr_in_the_lab") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let running = plan("bigraph-2x8-bgp.plan.json");
    // The fabric runs the plan (its first install); the operator then
    // changes the BFD timers to 100 ms and pushes.
    let good = changed_plan(work.path(), "fast-bfd.plan.json", |r| {
        r["bfd"]["tx_ms"] = 100.into();
        r["bfd"]["rx_ms"] = 100.into();
    });
    let lab = Lab::new("tbgpe");
    let up = lab.json(&["up", running.to_str().unwrap(), "--preload-config"]);
    assert_eq!(
        up["routing"], "bgp",
        "the plan's intent is the default: {up}"
    );
    let devices = work.path().join("devices.toml");
    lab.ok(&["devices", "--out", devices.to_str().unwrap()]);
    let st = lab.state();
    let switches = st["lab"]["switches"].as_array().unwrap().clone();
    let ns = |i: usize| format!("efl-tbgpe-p{i}");
    let journal = work.path().join("journal.json");
    let common = [
        good.to_str().unwrap(),
        "--devices",
        devices.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ];

    // The plan the fabric runs: no change anywhere.
    let mut args = common.to_vec();
    args[0] = running.to_str().unwrap();
    args.push("--dry-run");
    let (code, same, err) = push(work.path(), &args);
    assert_eq!(code, Some(0), "{err}\n{same}");
    for (sw, phase) in phases(&same) {
        assert_eq!(phase, "unchanged", "{sw}: {same}");
    }

    // Dry run of the change: every switch has a diff, nothing is
    // committed.
    let mut args = common.to_vec();
    args.extend(["--dry-run", "--show-diff"]);
    let (code, dry, err) = push(work.path(), &args);
    assert_eq!(code, Some(0), "{err}\n{dry}");
    for s in dry["switches"].as_array().unwrap() {
        assert_eq!(s["phase"], "loaded", "{s}");
        assert!(s["diff_lines"].as_u64().unwrap() > 0, "{s}");
        assert!(
            s["diff"]
                .as_str()
                .unwrap()
                .contains("+  transmit-interval 100"),
            "{s}"
        );
    }
    for i in 0..switches.len() {
        assert!(!vtysh(&ns(i), "show running-config").contains("transmit-interval 100"));
    }

    // The push: commit, verify, confirm, every switch.
    let start = Instant::now();
    let (code, pushed, err) = push(work.path(), &common);
    let took = start.elapsed();
    assert_eq!(code, Some(0), "{err}\n{pushed}");
    for (sw, phase) in phases(&pushed) {
        assert_eq!(phase, "confirmed", "{sw}: {pushed}");
    }
    eprintln!("push of 8 FRR switches with verification: {took:?}");
    // Saved: the instance's frr.conf is what runs.
    let saved = std::fs::read_to_string("/etc/frr/efl-tbgpe-p0/frr.conf").unwrap();
    assert!(saved.contains("transmit-interval 100"), "{saved}");

    // The kernel's routes are the route model's, in every switch.
    // The first switch and prefix whose kernel route is not the model's.
    let route_off_plan = || -> Option<String> {
        for (i, sw) in switches.iter().enumerate() {
            for r in sw["routes"].as_array().unwrap() {
                let prefix = r["prefix"].as_str().unwrap();
                let mut want: Vec<String> = r["via"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| h["address"].as_str().unwrap().to_string())
                    .collect();
                want.sort();
                let got = next_hops(&ns(i), prefix);
                if got != want {
                    return Some(format!("{} {prefix}: via {got:?}, planned {want:?}", ns(i)));
                }
            }
        }
        None
    };
    // Routes as planned, within `limit` (BGP converging after a change).
    let routes_as_planned = |limit: Duration| {
        let start = Instant::now();
        loop {
            match route_off_plan() {
                None => return,
                Some(off) if start.elapsed() > limit => panic!("{off}"),
                Some(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    };
    routes_as_planned(Duration::ZERO);

    // Every sub-node reaches every other: the collective engine runs.
    let hdrm = |lab: &Lab| {
        lab.json(&[
            "run",
            "--algorithm",
            "hdrm",
            "--no-count",
            "--size",
            "64KiB",
            "--timeout",
            "10",
        ])
    };
    assert_eq!(hdrm(&lab)["timed"][0]["wrong"], 0);
    // Pins are static routing's.
    let pinned = lab.cmd(&["run", "--ecmp", "model", "--no-count", "--size", "64KiB"]);
    assert_eq!(pinned.status.code(), Some(2));

    // The same plan again: no diff, nothing committed.
    let (code, again, err) = push(work.path(), &common);
    assert_eq!(code, Some(0), "{err}\n{again}");
    for (sw, phase) in phases(&again) {
        assert_eq!(phase, "unchanged", "{sw}: {again}");
    }

    // A planted fault: sw1 rendered from a plan whose ASNs are not the
    // fabric's (every neighbour's remote-as wrong). Verification sees its
    // sessions down, sw1 goes back to its previous configuration, and the
    // engine runs as before.
    let bad = changed_plan(work.path(), "wrong-asn.plan.json", |r| {
        r["asn_base"] = 4_200_001_000u32.into();
    });
    let bad_journal = work.path().join("bad-journal.json");
    let (code, faulty, err) = push(
        work.path(),
        &[
            bad.to_str().unwrap(),
            "--devices",
            devices.to_str().unwrap(),
            "--journal",
            bad_journal.to_str().unwrap(),
            "--switch",
            "sw1",
            // Sessions with a wrong peer AS never come up: a short settle
            // keeps the test from waiting out the default 30 s (FRR
            // brings correct sessions up within a few seconds here).
            "--settle",
            "5s",
        ],
    );
    assert_ne!(code, Some(0), "a faulty push succeeded: {faulty}");
    assert_eq!(
        phases(&faulty),
        [("sw1".to_string(), "rolled-back".to_string())],
        "{err}\n{faulty}"
    );
    assert!(
        err.contains("verification") || faulty.to_string().contains("verification"),
        "{err}"
    );
    let running = vtysh(&ns(0), "show running-config");
    assert!(running.contains("router bgp 4200000000"), "{running}");
    // The rollback re-established sw1's sessions: the fabric routes as
    // planned and the engine runs.
    routes_as_planned(Duration::from_secs(30));
    assert_eq!(hdrm(&lab)["timed"][0]["wrong"], 0);

    // A cut cable: BGP takes it out of every other switch's routes within
    // a second (static routing blackholes it: tests/it/lab.rs), and the
    // engine's flows that used it complete over the other paths.
    let index = |name: &str| switches.iter().position(|s| s["name"] == name).unwrap();
    let (sw1, sw4) = (index("sw1"), index("sw4"));
    let target = switches[sw4]["gateways"][0].as_str().unwrap();
    let subnet = {
        let (addr, len) = target.split_once('/').unwrap();
        let a: std::net::Ipv4Addr = addr.parse().unwrap();
        let len: u32 = len.parse().unwrap();
        let mask = u32::MAX << (32 - len);
        format!("{}/{len}", std::net::Ipv4Addr::from(u32::from(a) & mask))
    };
    // The switches that reach sw4 through sw1, and sw1's address there.
    let watch: Vec<(usize, String)> = switches
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != sw4 && i != sw1)
        .filter_map(|(i, s)| {
            let port = s["routed_ports"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["peer"] == sw1)?;
            let via = port["peer_address"].as_str().unwrap().to_string();
            next_hops(&ns(i), &subnet)
                .contains(&via)
                .then_some((i, via))
        })
        .collect();
    assert!(!watch.is_empty(), "no switch routes {subnet} through sw1");
    let port = switches[sw1]["routed_ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["peer"] == sw4)
        .unwrap()["port"]
        .clone();
    let port_up = || {
        let link = Command::new("ip")
            .args(["-n", &ns(sw1), "link", "show", "dev", &format!("swp{port}")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&link.stdout).contains("state UP")
    };
    // Cuts sw1-sw4 as `how` says and returns when every switch stopped
    // routing sw4's subnet through sw1; the engine then runs over the
    // other paths, and the cable comes back.
    let cut = |how: &[&str], what: &str| {
        let cut_at = Instant::now();
        let mut args = vec!["cut", "link:sw1-sw4"];
        args.extend_from_slice(how);
        lab.ok(&args);
        assert_eq!(port_up(), !how.is_empty(), "{what}: sw1's port to sw4");
        let silent: &[&str] = if how.is_empty() { &[] } else { &["sw1-sw4"] };
        let status = lab.json(&["status"]);
        assert_eq!(
            status["silent"],
            serde_json::json!(silent),
            "{what}: {status}"
        );
        let mut moved = Duration::ZERO;
        for (i, via) in &watch {
            while next_hops(&ns(*i), &subnet).contains(via) {
                assert!(
                    cut_at.elapsed() < Duration::from_secs(5),
                    "{} still routes {subnet} via sw1 ({via}) after {what}",
                    ns(*i)
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            moved = moved.max(cut_at.elapsed());
        }
        eprintln!("routes off sw1-sw4 at every switch {moved:?} after {what}");
        assert!(moved < Duration::from_secs(1), "{what}: {moved:?}");
        let after = hdrm(&lab);
        assert_eq!(after["timed"][0]["wrong"], 0, "{what}: {after}");
        lab.ok(&["restore", "link:sw1-sw4"]);
        routes_as_planned(Duration::from_secs(30));
    };
    // A cable pulled: both ports go down, BGP drops the session at once.
    cut(&[], "a cut");
    // A silent failure: the cable stays up and drops every frame, so no
    // port goes down; BFD (100 ms x 3 since the push) notices.
    cut(&["--silent"], "a silent cut");
    let status = lab.json(&["status"]);
    assert_eq!(status["silent"], serde_json::json!([]), "{status}");

    let down = lab.json(&["down"]);
    assert_eq!(down["namespaces"], 24);
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}
