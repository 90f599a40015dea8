//! Doc checks (issue #33): the figures README.md and docs/cost.md quote
//! are produced here by the commands they name, on the bundled examples,
//! and each sentence is rebuilt from the command's output and looked up
//! in the page (whitespace and line breaks aside). When a command's
//! answer changes, the test fails and prints the sentence to write.

use std::fs;

use planner::cost::money;
use serde_json::Value;

use crate::{planner, root};

const CATALOG: &str = "examples/data/catalog-example.toml";

/// The page's text with every run of whitespace made one space, as the
/// sentences it is searched for are built.
fn page(path: &str) -> String {
    let text = fs::read_to_string(root().join(path)).expect(path);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Asserts that `page` says `sentence`, naming the page and the command.
fn says(page_text: &str, path: &str, command: &str, sentence: &str) {
    assert!(
        page_text.contains(sentence),
        "{path} no longer says what `planner {command}` prints; write:\n\n{sentence}\n"
    );
}

fn json(args: &[&str]) -> Value {
    let out = planner(args);
    assert!(
        out.status.success(),
        "planner {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// The shape of a design's name: `BiGraph 8x64: 64 x sw-64x100` is `8x64`.
fn shape(design: &Value) -> String {
    let d = design.as_str().unwrap();
    d.trim_start_matches("BiGraph ")
        .split(':')
        .next()
        .unwrap()
        .to_string()
}

/// A percentage as the docs write it: one decimal.
fn pct(share: f64) -> String {
    format!("{:.1}", share * 100.0)
}

#[test]
fn issue33_readme_purchase_figures_are_the_commands() {
    let path = "README.md";
    let text = page(path);
    let command = "purchase --gpus 512,4096 --catalog examples/data/catalog-example.toml";
    let v = json(&[
        "purchase",
        "--gpus",
        "512,4096",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let both = v.as_array().unwrap();
    assert_eq!(both.len(), 2);
    for p in both {
        assert_eq!(p["min_bisection"], 1.0);
        assert_eq!(p["chosen"]["topology"], "fat-tree", "{command}");
        assert_eq!(p["runner_up"]["topology"], "bigraph", "{command}");
        assert!(
            num(&p["chosen"]["cost_per_bisection_gbps"])
                <= num(&p["runner_up"]["cost_per_bisection_gbps"])
        );
    }
    let per = |i: usize, who: &str| money(num(&both[i][who]["cost_per_bisection_gbps"]));
    let sentence = format!(
        "With the example catalog and full bisection, the fat-tree is chosen at 512 and 4,096 GPUs and is cheaper per Gbps of bisection ({} and {} USD per Gbps, against {} and {} for the BiGraphs {} and {}).",
        per(0, "chosen"),
        per(1, "chosen"),
        per(0, "runner_up"),
        per(1, "runner_up"),
        shape(&both[0]["runner_up"]["design"]),
        shape(&both[1]["runner_up"]["design"]),
    );
    says(&text, path, command, &sentence);

    let half = json(&[
        "purchase",
        "--gpus",
        "512",
        "--min-bisection",
        "50%",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let (c, r) = (&half["chosen"], &half["runner_up"]);
    assert_eq!(c["topology"], "bigraph");
    assert_eq!(c["bisection_ratio"], 0.5);
    let sentence = format!(
        "`--min-bisection 50%` admits EFLOPS' M = N/2 BiGraph, which then wins at 512 GPUs on total cost (BiGraph {} at {} USD against {}) with half the bisection ({} USD per Gbps against {}).",
        shape(&c["design"]),
        money(num(&c["total_cost"])),
        money(num(&r["total_cost"])),
        money(num(&c["cost_per_bisection_gbps"])),
        money(num(&r["cost_per_bisection_gbps"])),
    );
    says(
        &text,
        path,
        "purchase --gpus 512 --min-bisection 50%",
        &sentence,
    );
}

#[test]
fn issue33_cost_page_figures_are_the_commands() {
    let path = "docs/cost.md";
    let text = page(path);

    // The paper's TCO comparison: the BiGraph plan against the 1-NIC
    // fat-tree, both priced from the example catalog.
    let bigraph = json(&[
        "cost",
        "examples/data/eflops-4x16.plan.json",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ft = dir.path().join("ft-1nic.json");
    let ft_name = ft.to_str().unwrap();
    let designed = planner(&[
        "design",
        "--fat-tree",
        "tiers=2,sub-nodes=16,ports=16",
        "--server-sub-nodes",
        "1",
        "--out",
        ft_name,
    ]);
    assert!(designed.status.success());
    let fat = json(&[
        "cost",
        ft_name,
        "--catalog",
        CATALOG,
        "--gpus-per-server",
        "4",
        "--format",
        "json",
    ]);
    let capex = |v: &Value| num(&v["bom"]["capex"]);
    let tco = |v: &Value| num(&v["bom"]["total_cost"]);
    let command = "cost ... --catalog examples/data/catalog-example.toml";
    says(
        &text,
        path,
        command,
        &format!(
            "| capex | {} | {} |",
            money(capex(&fat)),
            money(capex(&bigraph))
        ),
    );
    says(
        &text,
        path,
        command,
        &format!(
            "| TCO (5 years at 0.10/kWh) | {} | {} |",
            money(tco(&fat)),
            money(tco(&bigraph))
        ),
    );
    says(
        &text,
        path,
        command,
        &format!(
            "the BiGraph system costs **{} % more** over five years ({} % more capex)",
            pct(tco(&bigraph) / tco(&fat) - 1.0),
            pct(capex(&bigraph) / capex(&fat) - 1.0)
        ),
    );
    says(
        &text,
        path,
        command,
        &format!(
            "{} of capex in our prices",
            money(capex(&bigraph) - capex(&fat))
        ),
    );

    // `purchase --gpus 64 --topology bigraph` beside the plan.
    let p = json(&[
        "purchase",
        "--gpus",
        "64",
        "--topology",
        "bigraph",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let chosen = &p["chosen"];
    let design = chosen["design"].as_str().unwrap();
    assert!(
        design.starts_with("BiGraph 4x16: 8 x sw-32x100, each split into 2"),
        "{design}"
    );
    let plan: Value = serde_json::from_str(
        &fs::read_to_string(root().join("examples/data/eflops-4x16.plan.json")).unwrap(),
    )
    .unwrap();
    let inter_dac = plan["cables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "inter_switch" && c["media"] == "dac")
        .count();
    let inter = plan["cables"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "inter_switch")
        .count();
    says(
        &text,
        path,
        "purchase --gpus 64 --topology bigraph",
        &format!(
            "BiGraph 4x16 on 8 x sw-32x100 split in two, at {} USD: {} more than the plan, because `purchase` knows no racks and buys an optical link for every inter-switch cable, where the inventory's racks make {inter_dac} of the plan's {inter} inter-switch cables DACs.",
            money(num(&chosen["total_cost"])),
            money(num(&chosen["total_cost"]) - tco(&bigraph)),
        ),
    );

    // The same four NICs per server in both designs.
    let cmp = json(&[
        "compare",
        "--bigraph",
        "4x16",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let cost_of = |t: &str| {
        cmp["costs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["topology"] == t)
            .map(|c| num(&c["cost"]["bom"]["total_cost"]))
            .unwrap()
    };
    let switches_of = |t: &str| {
        cmp["designs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["topology"] == t)
            .map(|d| d["metrics"]["switches"].as_u64().unwrap())
            .unwrap()
    };
    says(
        &text,
        path,
        "compare --bigraph 4x16 --catalog examples/data/catalog-example.toml",
        &format!(
            "the BiGraph is {} % dearer than a leaf-spine of 16-port switches, because it needs {} virtual switches where the leaf-spine needs {}.",
            pct(cost_of("bigraph") / cost_of("fat-tree") - 1.0),
            switches_of("bigraph"),
            switches_of("fat-tree")
        ),
    );

    // The JSON example of `purchase --gpus 4096`, and the program count
    // at 16,384 GPUs.
    let p = json(&[
        "purchase",
        "--gpus",
        "4096",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    let c = &p["chosen"];
    let command = "purchase --gpus 4096 --format json";
    for key in [
        "total_cost",
        "capex",
        "energy_cost",
        "bisection_gbps",
        "bisection_ratio",
        "cost_per_gpu",
        "cost_per_bisection_gbps",
    ] {
        says(
            &text,
            path,
            command,
            &format!("\"{key}\": {:?}", num(&c[key])),
        );
    }
    for (key, v) in [
        ("total_cost", &p["runner_up"]["total_cost"]),
        ("cost_difference", &p["runner_up"]["cost_difference"]),
        ("min_bisection", &p["min_bisection"]),
    ] {
        says(&text, path, command, &format!("\"{key}\": {:?}", num(v)));
    }
    says(
        &text,
        path,
        command,
        &format!("\"programs_solved\": {}", p["programs_solved"]),
    );
    let big = json(&[
        "purchase",
        "--gpus",
        "16384",
        "--catalog",
        CATALOG,
        "--format",
        "json",
    ]);
    says(
        &text,
        path,
        "purchase --gpus 16384",
        &format!(
            "16,384 GPUs take {} programs and milliseconds",
            big["programs_solved"]
        ),
    );
}

/// The check itself can fail: a page that says otherwise is caught.
#[test]
fn a_sentence_the_page_does_not_say_is_caught() {
    let text = page("README.md");
    let caught = std::panic::catch_unwind(|| {
        says(
            &text,
            "README.md",
            "purchase",
            "BiGraph is cheaper per Gbps at both 512 and 4,096 GPUs",
        )
    });
    assert!(caught.is_err());
}
