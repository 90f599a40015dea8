//! `planner render` and `planner check-qos` end to end: the files written
//! for the EFLOPS 4x16 plan compared byte for byte with
//! `planner/tests/render/eflops-4x16/`, read back and compared with the
//! plan, the manifest, overrides files, and a directory left as it was
//! when a render fails.
//!
//! `UPDATE_GOLDEN=1 cargo test -p planner --test it render` rewrites the
//! expected files (the library's `render::tests::golden_files` checks the
//! same ones); review the diff before committing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use planner::checked::CheckedPlan;
use planner::plan::PortRole;
use planner::render::Vendor;
use planner::render::parse::{ParsedConfig, ParsedInterface, parse};

use crate::{planner, root};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn eflops() -> CheckedPlan {
    let path = root().join(PLAN);
    CheckedPlan::load(&fs::read_to_string(path).unwrap(), PLAN).unwrap()
}

/// Runs `planner render PLAN <what> --out <dir> --format json [extra]` and
/// returns the manifest; the command must succeed.
fn render_into(dir: &Path, what: &[&str], extra: &[&str]) -> serde_json::Value {
    let out_dir = dir.to_str().unwrap();
    let mut args = vec!["render", PLAN];
    args.extend_from_slice(what);
    args.extend_from_slice(&["--out", out_dir, "--format", "json"]);
    args.extend_from_slice(extra);
    let out = planner(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The files in a directory: name to contents.
fn files_in(dir: &Path) -> BTreeMap<String, String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// The manifest lists exactly the files in the directory, with their
/// sizes; names and digests are all different.
fn check_manifest(m: &serde_json::Value, dir: &Path, files: &BTreeMap<String, String>) {
    let listed = m["files"].as_array().unwrap();
    assert_eq!(listed.len(), files.len(), "no stray or temporary files");
    let mut digests = BTreeSet::new();
    for f in listed {
        let name = f["file"].as_str().unwrap();
        let contents = &files[name];
        assert_eq!(f["bytes"].as_u64().unwrap() as usize, contents.len());
        assert_eq!(
            f["path"].as_str().unwrap(),
            dir.join(name).to_str().unwrap()
        );
        let sha = f["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64);
        assert!(sha.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(digests.insert(sha.to_string()), "{name}: digest twice");
    }
}

fn golden_dir(case: &str) -> std::path::PathBuf {
    root().join("planner/tests/render/eflops-4x16").join(case)
}

/// Compares `files` (only those `keep` selects) with the golden directory
/// of `case`, or rewrites it under `UPDATE_GOLDEN`.
fn compare_with_golden(case: &str, files: &BTreeMap<String, String>, keep: impl Fn(&str) -> bool) {
    compare_with_golden_in(&golden_dir(case), case, files, keep);
}

/// [`compare_with_golden`] with the golden directory `dir`.
fn compare_with_golden_in(
    dir: &Path,
    case: &str,
    files: &BTreeMap<String, String>,
    keep: impl Fn(&str) -> bool,
) {
    let dir = dir.to_path_buf();
    let wanted: BTreeMap<&String, &String> = files.iter().filter(|(n, _)| keep(n)).collect();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::create_dir_all(&dir).unwrap();
        for (name, contents) in &wanted {
            fs::write(dir.join(name), contents).unwrap();
        }
        return;
    }
    let golden = files_in(&dir);
    let names: Vec<&String> = golden.keys().collect();
    assert_eq!(
        names,
        wanted.keys().copied().collect::<Vec<_>>(),
        "{case}: files"
    );
    for (name, contents) in wanted {
        assert!(
            &golden[name] == contents,
            "{case}/{name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it)"
        );
    }
}

#[test]
fn rendered_switch_files_match_the_golden_files() {
    let plan = eflops();
    for v in Vendor::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(v.as_str());
        let m = render_into(&dir, &["--vendor", v.as_str()], &[]);
        assert_eq!(m["target"], v.as_str());
        assert_eq!(m["plan"], "eflops-4x16");
        let files = files_in(&dir);
        check_manifest(&m, &dir, &files);
        // One file per physical switch, each naming its switch.
        assert_eq!(files.len(), 8);
        for f in m["files"].as_array().unwrap() {
            let switch = f["switch"].as_str().unwrap();
            assert_eq!(f["file"].as_str().unwrap(), v.file_name(switch));
            assert!(plan.switch_list.iter().any(|s| s.physical == switch));
        }
        compare_with_golden(v.as_str(), &files, |_| true);
    }
}

/// `planner design --routing bgp` and `planner render` for every vendor
/// give the library's BGP golden files (`eflops-4x16/<vendor>-bgp`), and
/// the plan says `routing` only when it is not the default.
#[test]
fn bgp_plans_render_the_golden_files_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("bgp.json");
    let out = planner(&[
        "design",
        "topologies/eflops-4x16.toml",
        "--routing",
        "bgp",
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = fs::read_to_string(&plan).unwrap();
    assert!(
        json.contains(r#""routing": {"mode": "bgp", "asn_base": 4200000000"#),
        "{json}"
    );
    let static_plan = fs::read_to_string(root().join(PLAN)).unwrap();
    assert!(!static_plan.contains("\"routing\""));
    for v in Vendor::ALL {
        let dir = tmp.path().join(v.as_str());
        let out = planner(&[
            "render",
            plan.to_str().unwrap(),
            "--vendor",
            v.as_str(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{v}: {}", text(&out.stderr));
        compare_with_golden(&format!("{v}-bgp"), &files_in(&dir), |_| true);
    }
}

#[test]
fn rendered_host_files_match_the_golden_files() {
    let plan = eflops();
    let tmp = tempfile::tempdir().unwrap();
    let m = render_into(tmp.path(), &["--hosts"], &[]);
    assert_eq!(m["target"], "hosts");
    let files = files_in(tmp.path());
    check_manifest(&m, tmp.path(), &files);
    assert_eq!(files.len(), 2 * plan.servers.len());
    assert_eq!(m["files"][1]["server"], "node01");
    compare_with_golden("hosts", &files, |n| n.starts_with("node01."));
    // Every sub-node of the plan is in its server's JSON, marking the DSCP
    // of its switch's part.
    for sn in &plan.sub_node_list {
        let json: serde_json::Value =
            serde_json::from_str(&files[&format!("{}.json", sn.server)]).unwrap();
        let slot = &json["sub_nodes"][sn.index];
        assert_eq!(slot["sub_node"], sn.id.as_str());
        let dscp = if sn.switch.ends_with("-u") { 26 } else { 34 };
        assert_eq!(slot["dscp"], dscp, "{}", sn.id);
        assert_eq!(slot["env"]["NCCL_IB_TC"], (dscp << 2).to_string());
    }
}

/// Renders with the CLI, parses every file back and compares it with the
/// plan: host name, each half's VLAN and its member ports, port
/// descriptions naming the peer, PFC priorities, MTU and the DSCP map.
fn round_trip(vendor: Vendor, qos: Option<&str>) -> Vec<ParsedConfig> {
    let plan = eflops();
    let tmp = tempfile::tempdir().unwrap();
    let extra: Vec<&str> = qos.map_or(Vec::new(), |q| vec!["--qos", q]);
    render_into(tmp.path(), &["--vendor", vendor.as_str()], &extra);
    let files = files_in(tmp.path());
    let index = plan.switch_index();
    let mut parsed = Vec::new();
    let physical: BTreeSet<&str> = plan
        .switch_list
        .iter()
        .map(|s| s.physical.as_str())
        .collect();
    for name in physical {
        let file = vendor.file_name(name);
        let c = parse(vendor, &files[&file], &file).unwrap();
        assert_eq!(c.hostname, name);
        for s in plan.switch_list.iter().filter(|s| s.physical == name) {
            let vlan = &c.vlans[&s.vlan.unwrap()];
            let members: BTreeSet<String> = s
                .ports
                .iter()
                .filter(|p| p.role == PortRole::SubNode)
                .map(|p| vendor.port_name(s, p.port))
                .collect();
            assert_eq!(vlan.members, members, "{vendor} {}", s.name);
            for p in s.ports.iter().filter(|p| p.role == PortRole::InterSwitch) {
                let peer = &plan.switch_list[index[p.peer.as_deref().unwrap()]];
                let peer_port: u32 = p.peer_port.as_deref().unwrap().parse().unwrap();
                let i = &c.interfaces[&vendor.port_name(s, p.port)];
                assert_eq!(
                    i.description,
                    format!("to {} {}", peer.name, vendor.port_name(peer, peer_port))
                );
            }
        }
        parsed.push(c);
    }
    assert_eq!(parsed.len(), 8);
    parsed
}

fn cabled_ports(c: &ParsedConfig) -> impl Iterator<Item = &ParsedInterface> {
    c.interfaces.values().filter(|i| !i.shutdown)
}

#[test]
fn every_vendor_round_trips_through_the_cli() {
    // FRR's frr.conf holds no VLANs nor QoS (`Vendor::routing_only`); its
    // files are held to the plan by the library's routes and BGP tests.
    for v in Vendor::ALL.into_iter().filter(|v| !v.routing_only()) {
        for c in round_trip(v, None) {
            assert_eq!(
                (c.dscp_map[&26], c.dscp_map[&34], c.dscp_map[&48]),
                (3, 4, 6)
            );
            for i in cabled_ports(&c) {
                assert_eq!(i.pfc, BTreeSet::from([3, 4]), "{v}");
                assert!(i.trust_dscp);
            }
        }
    }
}

#[test]
fn an_overrides_file_reaches_every_vendors_files() {
    let qos = "planner/tests/golden/check-qos-eflops-one-priority/qos.toml";
    for v in Vendor::ALL.into_iter().filter(|v| !v.routing_only()) {
        for c in round_trip(v, Some(qos)) {
            // One class: DSCP 26 on priority 3 for both parts, DSCP 34 no
            // longer special; MTU 9000 from the file.
            assert_eq!((c.dscp_map[&26], c.dscp_map[&34]), (3, 0), "{v}");
            for i in cabled_ports(&c) {
                assert_eq!(i.pfc, BTreeSet::from([3]), "{v}");
                assert_eq!(i.mtu, Some(9000), "{v}");
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let m = render_into(tmp.path(), &["--hosts"], &["--qos", qos]);
    assert_eq!(m["qos_overrides"], qos);
    let node02: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(tmp.path().join("node02.json")).unwrap()).unwrap();
    assert_eq!(node02["sub_nodes"][0]["env"]["NCCL_IB_TC"], "104");
}

#[test]
fn rendering_twice_replaces_the_files_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let first = render_into(tmp.path(), &["--vendor", "sonic"], &[]);
    let second = render_into(tmp.path(), &["--vendor", "sonic"], &[]);
    assert_eq!(first, second);
    let files = files_in(tmp.path());
    check_manifest(&second, tmp.path(), &files);
    // A file of a switch that left the plan is named, and left alone.
    fs::write(tmp.path().join("sw09.config_db.json"), "{}").unwrap();
    fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let out = planner(&[
        "render",
        PLAN,
        "--vendor",
        "sonic",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("also holds sw09.config_db.json, which this plan does not render"),
        "{err}"
    );
    assert!(!err.contains("notes.txt"), "{err}");
    assert_eq!(
        fs::read_to_string(tmp.path().join("sw09.config_db.json")).unwrap(),
        "{}"
    );
}

#[test]
fn a_failed_render_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.toml");
    fs::write(
        &bad,
        "[qos]\nper_direction = false\n\n[qos.cnp]\npriority = 3\n",
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let out = planner(&[
        "render",
        PLAN,
        "--vendor",
        "eos",
        "--out",
        out_dir.to_str().unwrap(),
        "--qos",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.toml:1: qos class roce: lossless priority 3 is also the CNP's"),
        "{err}"
    );
    assert!(
        !out_dir.exists(),
        "nothing is written when the render fails"
    );

    // --out naming a file is refused and the file is left alone.
    let file = tmp.path().join("plain");
    fs::write(&file, "keep me").unwrap();
    let out = planner(&["render", PLAN, "--hosts", "--out", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is a file, not a directory"));
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn check_qos_exit_codes_follow_the_proof() {
    let ok = planner(&["check-qos", PLAN, "--format", "json"]);
    assert_eq!(ok.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["ok"], true);
    let cycle = planner(&[
        "check-qos",
        PLAN,
        "--qos",
        "planner/tests/golden/check-qos-eflops-one-priority/qos.toml",
        "--format",
        "json",
    ]);
    assert_eq!(cycle.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&cycle.stdout).unwrap();
    assert_eq!(v["cycle"]["links"].as_array().unwrap().len(), 4);
}

/// The breakout plans render every vendor's breakout syntax and lane
/// names; a broken-out switch and a whole one of each vendor are golden
/// files in `planner/tests/render/<plan>/`: the leaf-spine of 200G NICs on
/// 400G leaves broken out 2x200G, and HPN and rail-optimized fabrics whose
/// ToRs or rail switches break out (as HPN and MegaScale cable them).
#[test]
fn issue33_breakout_plans_render_the_golden_files() {
    for (plan, golden, broken_out, whole) in [
        (
            "planner/tests/golden/breakout-200g-cables-table/plan.json",
            "breakout-200g",
            "leaf01.",
            "spine01.",
        ),
        (
            "planner/tests/golden/breakout-hpn-cables-table/plan.json",
            "breakout-hpn",
            "tor1.",
            "agg1.",
        ),
        (
            "planner/tests/golden/breakout-rail-cables-table/plan.json",
            "breakout-rail",
            "rail1.",
            "spine1.",
        ),
    ] {
        for vendor in ["nvue", "eos", "sonic", "frr"] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join(vendor);
            let out = planner(&[
                "render",
                plan,
                "--vendor",
                vendor,
                "--out",
                dir.to_str().unwrap(),
            ]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{golden} {vendor}: {}",
                text(&out.stderr)
            );
            let files = files_in(&dir);
            compare_with_golden_in(
                &root()
                    .join("planner/tests/render")
                    .join(golden)
                    .join(vendor),
                &format!("{golden}/{vendor}"),
                &files,
                |n| n.starts_with(broken_out) || n.starts_with(whole),
            );
        }
    }
}
