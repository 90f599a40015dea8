//! Issue #33 item 5: the compact plan (`--out plan.cplan`) is the plan.
//! Every command that reads a plan answers the same from it as from the
//! JSON (text and `--format json`, the file's name aside), `design` writes
//! it by extension, and a cut file is refused naming the file and byte.

use planner::plan::Plan;

use crate::{planner_in, root};

/// The bundled plans every reader is compared on.
const PLANS: &[&str] = &[
    "examples/data/bigraph-2x8.plan.json",
    "examples/data/bigraph-2x8-bgp.plan.json",
    "examples/data/cloud-8x16.plan.json",
    "examples/data/eflops-4x16.plan.json",
    "examples/data/fat-tree-16.plan.json",
    "examples/data/ndv5-vm-4.plan.json",
    "planner/tests/golden/cables-hpn-table/plan.json",
    "planner/tests/golden/cables-rail-optimized-table/plan.json",
    "planner/tests/golden/breakout-200g-cables-table/plan.json",
];

/// stdout, stderr and the exit code of `planner args` in `dir`, with the
/// plan's file name made one, so that the JSON's and the compact plan's
/// outputs compare.
fn answer(dir: &std::path::Path, args: &[&str], file: &str) -> (String, String, Option<i32>) {
    let out = planner_in(dir, args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).replace(file, "PLAN");
    (text(&out.stdout), text(&out.stderr), out.status.code())
}

#[test]
fn issue33_5_every_reader_answers_the_same_from_the_compact_plan() {
    let dir = tempfile::tempdir().unwrap();
    for source in PLANS {
        let text = std::fs::read_to_string(root().join(source)).unwrap();
        let plan = Plan::from_json(&text, source).unwrap();
        std::fs::write(dir.path().join("p.json"), &text).unwrap();
        std::fs::write(dir.path().join("p.cplan"), plan.to_compact().unwrap()).unwrap();
        let commands: &[&[&str]] = &[
            &["validate", "FILE"],
            &["validate", "FILE", "--format", "json"],
            &["verify-ranks", "FILE", "--algorithm", "hdrm"],
            &[
                "verify-ranks",
                "FILE",
                "--algorithm",
                "hd",
                "--format",
                "json",
            ],
            &[
                "verify-ranks",
                "FILE",
                "--algorithm",
                "ring",
                "--routing",
                "spray",
            ],
            &["cables", "FILE", "--format", "json"],
            &[
                "verify-ranks",
                "FILE",
                "--algorithm",
                "hd",
                "--routing",
                "dmodk",
            ],
            &["check-qos", "FILE"],
        ];
        for command in commands {
            let with = |file: &'static str| -> Vec<&str> {
                command
                    .iter()
                    .map(|&a| if a == "FILE" { file } else { a })
                    .collect()
            };
            let json = answer(dir.path(), &with("p.json"), "p.json");
            let compact = answer(dir.path(), &with("p.cplan"), "p.cplan");
            assert_eq!(json, compact, "{source}: planner {}", command.join(" "));
        }
    }
}

#[test]
fn issue33_5_design_writes_the_compact_plan_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for out in ["p.json", "p.cplan"] {
        let o = planner_in(
            d,
            &[
                "design",
                "--bigraph",
                "4x16",
                "--out",
                out,
                "--format",
                "json",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let json = std::fs::read_to_string(d.join("p.json")).unwrap();
    let compact = std::fs::read(d.join("p.cplan")).unwrap();
    assert!(planner::plan_compact::is_compact(&compact));
    let back = Plan::from_compact(&compact, "p.cplan").unwrap();
    assert_eq!(back.to_json().unwrap(), json);
    // The signature decides, not the name: a compact plan named .json
    // still loads.
    std::fs::write(d.join("renamed.json"), &compact).unwrap();
    let o = planner_in(d, &["validate", "renamed.json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A cut file is refused with exit code 2, naming the file and byte.
    std::fs::write(d.join("cut.cplan"), &compact[..compact.len() / 2]).unwrap();
    let o = planner_in(d, &["verify-ranks", "cut.cplan", "--algorithm", "hd"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cut.cplan: byte 12 (length): the header says the body has"),
        "{err}"
    );
}

/// `planner convert` writes a plan in the form --out's extension names and
/// the file reads back to the same plan: every bundled plan to compact and
/// TOML and back to JSON gives the JSON it started from, byte for byte. A
/// plan `validate` refuses is not converted, and nothing is written; an
/// unknown extension is refused before the plan is read.
#[test]
fn issue33_convert_writes_each_form_and_reads_back_the_same_plan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for source in PLANS {
        let text = std::fs::read_to_string(root().join(source)).unwrap();
        std::fs::write(d.join("p.json"), &text).unwrap();
        for (from, to) in [
            ("p.json", "p.cplan"),
            ("p.cplan", "back.json"),
            ("p.json", "p.toml"),
            ("p.toml", "again.json"),
        ] {
            let o = planner_in(d, &["convert", from, "--out", to]);
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "{source}: {from} -> {to}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                out.contains(&format!("({from}) written to {to} as ")),
                "{out}"
            );
        }
        let compact = std::fs::read(d.join("p.cplan")).unwrap();
        assert!(planner::plan_compact::is_compact(&compact), "{source}");
        assert_eq!(
            std::fs::read_to_string(d.join("back.json")).unwrap(),
            text,
            "{source}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("again.json")).unwrap(),
            text,
            "{source}"
        );
    }
    // JSON report.
    let o = planner_in(
        d,
        &["convert", "p.json", "--out", "q.cplan", "--format", "json"],
    );
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["form"], "compact");
    assert_eq!(v["out"], "q.cplan");
    assert_eq!(v["bytes"], std::fs::read(d.join("q.cplan")).unwrap().len());
    // A plan validate refuses: refused, naming the file, nothing written.
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p.json")).unwrap()).unwrap();
    plan["links"] = serde_json::json!(plan["links"].as_u64().unwrap() + 1);
    std::fs::write(d.join("bad.json"), plan.to_string()).unwrap();
    let o = planner_in(d, &["convert", "bad.json", "--out", "bad.cplan"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.json"), "{err}");
    assert!(!d.join("bad.cplan").exists());
    // An extension that is no plan form.
    let o = planner_in(d, &["convert", "p.json", "--out", "p.yaml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--out"), "{err}");
}
