//! The lab with a real routing stack: `lab up --routing bgp` runs FRR in every switch namespace, `provisioner push` (vendor frr, transport netns) configures it, verification reads FRR and lldpd, a planted fault rolls back, and a cut cable is routed around by BGP and BFD where static routes blackhole it.
//!
//! These need root and the Debian packages frr, frr-pythontools and
//! lldpd (`.ci/install-deps`): without them they say they skipped, and
//! with `TESTS_NO_SKIP=1` that is a failure. Each test builds its own lab
//! under its own name and state directory; the lab touches only the
//! namespaces and FRR directories it creates.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/skip.rs"]
mod skip;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plan(name: &str) -> PathBuf {
    workspace().join("examples/data").join(name)
}

/// One lab test at a time (FRR and the engine share two cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

struct Lab {
    name: String,
    dir: tempfile::TempDir,
}

impl Lab {
    fn new(name: &str) -> Lab {
        Lab {
            name: name.to_string(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn cmd(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_provisioner"))
            .arg("lab")
            .args(args)
            .args(["--name", &self.name, "--state-dir"])
            .arg(self.dir.path())
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args);
        assert!(
            out.status.success(),
            "lab {args:?}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// The lab's state file (what it built).
    fn state(&self) -> Value {
        let text =
            std::fs::read_to_string(self.dir.path().join(format!("{}.json", self.name))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Everything of this lab on the machine: namespaces and FRR
    /// instance directories.
    fn leftovers(&self) -> Vec<String> {
        let prefix = format!("efl-{}-", self.name);
        let mut found = Vec::new();
        for dir in ["/run/netns", "/etc/frr", "/var/run/frr"] {
            if let Ok(d) = std::fs::read_dir(dir) {
                found.extend(
                    d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .filter(|n| n.starts_with(&prefix))
                        .map(|n| format!("{dir}/{n}")),
                );
            }
        }
        found
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A failed test still removes its lab.
        if !self.leftovers().is_empty() {
            let _ = self.cmd(&["down"]);
        }
    }
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
    let devices = lab.ok(&["devices"]);
    let parsed: toml::Value = toml::from_str(&devices).unwrap();
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

    // A static lab has no devices to push to.
    let status = lab.json(&["status"]);
    assert_eq!(status["routing"], "bgp");

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
