//! FRR's own parser accepts every rendered `frr.conf`: the EFLOPS plan
//! (split switches, VRF halves) with static routes and with BGP, and a
//! 3-tier fat-tree with BGP, each designed and rendered by the `planner`
//! binary and checked with `vtysh --dryrun -f` (no daemon is started).
//! Skipped, saying so, when FRR is not installed (`.ci/install-deps`
//! installs it); `TESTS_NO_SKIP=1` makes that a failure.

use std::path::Path;
use std::process::Command;

use crate::skip::skipped;
use crate::{planner, planner_in};

/// `vtysh`, when FRR is installed.
fn vtysh() -> Option<&'static str> {
    ["/usr/bin/vtysh", "/usr/local/bin/vtysh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// Designs `source` (`topology file` or shorthand args) with `routing`,
/// renders it for FRR into `dir` and returns the files.
fn frr_files(dir: &Path, source: &[&str], routing: &str) -> Vec<std::path::PathBuf> {
    let plan = dir.join("plan.json");
    let mut args = vec!["design"];
    args.extend_from_slice(source);
    args.extend_from_slice(&["--routing", routing, "--out", plan.to_str().unwrap()]);
    let out = planner(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg = dir.join("cfg");
    let out = planner_in(
        dir,
        &[
            "render",
            "plan.json",
            "--vendor",
            "frr",
            "--out",
            cfg.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files: Vec<_> = std::fs::read_dir(&cfg)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_frr_conf_loads_in_frrs_parser() {
    let Some(vtysh) = vtysh() else {
        skipped(
            "every_frr_conf_loads_in_frrs_parser",
            "FRR's vtysh is not installed",
            "run .ci/install-deps (Debian package frr)",
        );
        return;
    };
    let cases: [(&[&str], &str); 3] = [
        (&["topologies/eflops-4x16.toml"], "static"),
        (&["topologies/eflops-4x16.toml"], "bgp"),
        (&["--fat-tree", "k=4"], "bgp"),
    ];
    for (source, routing) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let files = frr_files(tmp.path(), source, routing);
        assert!(!files.is_empty());
        for f in files {
            let out = Command::new(vtysh)
                .args(["--dryrun", "-f"])
                .arg(&f)
                .output()
                .expect("run vtysh");
            assert!(
                out.status.success(),
                "{source:?} {routing}: {} does not load: {}{}",
                f.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // The check is a real one: a line FRR does not know fails it.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.conf");
    std::fs::write(
        &bad,
        "router bgp 65000\n neighbor 10.0.0.1 bogus-word\nexit\n",
    )
    .unwrap();
    let out = Command::new(vtysh)
        .args(["--dryrun", "-f"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success(), "vtysh --dryrun accepted a bad line");
}
