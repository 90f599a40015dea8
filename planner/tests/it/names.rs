//! Issue 13, finding 1 (injection): names are refused where they enter
//! (`check-servers`, `design`, `validate`); the writers' own defences are
//! tested in the library (`planner/src/names_tests.rs`).

use std::fs;

use planner::inventory::Inventory;

use crate::{planner, root};

const INVENTORY: &str = "topologies/eflops-4x16.toml";

fn inventory_text() -> String {
    fs::read_to_string(root().join(INVENTORY)).unwrap()
}

/// An inventory line with `name` replaced, for the refusal tests.
fn with_server_name(name: &str) -> String {
    inventory_text().replacen(
        "name = \"node{n:02}\"",
        &format!("name = {}", toml_string(name)),
        1,
    )
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[test]
fn issue13_names_refused_by_check_servers_design_validate() {
    // The library: every refusal has the line and the object.
    let bad = with_server_name("node{n:02}\nrank 99=evil slot=0:0");
    let e = Inventory::from_toml(&bad, "inv.toml").unwrap_err();
    let text = e.to_string();
    assert!(e.is_bad_input());
    assert!(
        text.contains("inv.toml:") && text.contains("server template node{n:02}\\nrank 99"),
        "{text}"
    );
    assert!(
        !text.contains("\nrank 99"),
        "control characters printed raw: {text}"
    );
    for (field, from, to) in [
        (
            "port_name",
            "port_name = \"HundredGigE1/0/{p}\"",
            "port_name = \"swp{p};touch X;\"",
        ),
        (
            "model",
            "model = \"H3C S9850-4C\"",
            "model = \"S9850\\nshutdown\"",
        ),
        ("name", "name = \"mlx5_0\"", "name = \"mlx5_0\\nshutdown\""),
        ("name", "name = \"gpu0\"", "name = \"gpu,0\""),
        (
            "name",
            "name = \"eflops-4x16\"",
            "name = \"eflops'; rm -rf /\"",
        ),
    ] {
        let text = inventory_text();
        assert!(text.contains(from), "{from}");
        let e = Inventory::from_toml(&text.replacen(from, to, 1), "inv.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("{field}: the ")), "{to}: {e}");
        assert!(e.contains("docs/inventory.md"), "{e}");
    }

    // The binary: check-servers, design and validate exit 2 and print
    // the name escaped.
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("bad.toml");
    fs::write(&inv, &bad).unwrap();
    let inv = inv.to_str().unwrap();
    let plan_out = dir.path().join("p.json");
    for args in [
        vec!["check-servers", inv],
        vec!["design", inv, "--out", plan_out.to_str().unwrap()],
        vec!["compare", inv],
    ] {
        let out = planner(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("node{n:02}\\nrank 99=evil"), "{args:?}: {err}");
        assert!(!plan_out.exists());
    }
    // A person renames server node01 by hand everywhere in the plan.
    let plan = fs::read_to_string(root().join("examples/data/eflops-4x16.plan.json")).unwrap();
    let path = dir.path().join("hand.json");
    fs::write(&path, plan.replace("node01", "node01 x")).unwrap();
    let out = planner(&["validate", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("the name `node01 x` has a space"),
        "{stdout}"
    );
}
