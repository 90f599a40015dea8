//! Issue 13, finding 1 (injection): names from an inventory or a plan
//! cannot inject anything into an output. Each test is named after the
//! sub-finding it guards; the plans are the EFLOPS example with names
//! changed by hand, as a person editing the JSON would.

use std::fs;

use proptest::prelude::*;

use planner::inventory::Inventory;
use planner::plan::Plan;
use planner::ranks::{self, format as rank_format};
use planner::render::{self, Vendor};
use planner::validate::{cabling, validate_plan};

use crate::{planner, root};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";
const INVENTORY: &str = "topologies/eflops-4x16.toml";

fn eflops() -> Plan {
    let text = fs::read_to_string(root().join(PLAN)).unwrap();
    Plan::from_json(&text, PLAN).unwrap()
}

fn inventory_text() -> String {
    fs::read_to_string(root().join(INVENTORY)).unwrap()
}

/// Renames server `old` everywhere the plan names it.
fn rename_server(plan: &mut Plan, old: &str, new: &str) {
    for s in &mut plan.servers {
        if s.name == old {
            s.name = new.to_string();
        }
    }
    for sn in &mut plan.sub_node_list {
        if sn.server == old {
            sn.server = new.to_string();
            sn.id = format!("{new}/sn{}", sn.index);
        }
    }
    for c in &mut plan.cables {
        if c.b == old {
            c.b = new.to_string();
        }
    }
    for s in &mut plan.switch_list {
        for p in &mut s.ports {
            if p.peer.as_deref() == Some(old) {
                p.peer = Some(new.to_string());
            }
        }
    }
}

fn hdrm_table(plan: &Plan) -> ranks::RankTable {
    ranks::plan_ranks(
        plan,
        &ranks::Request {
            algorithm: ranks::Algorithm::Hdrm,
            ..ranks::Request::default()
        },
    )
    .unwrap()
    .table
}

fn name_findings(plan: &Plan) -> Vec<String> {
    validate_plan(plan)
        .findings
        .iter()
        .filter(|f| f.kind == "name")
        .map(|f| format!("{}: {}", f.object, f.message))
        .collect()
}

/// Every rendered file of `vendor` joined, for line checks.
fn rendered(plan: &Plan, vendor: Vendor) -> String {
    render::render(plan, vendor)
        .unwrap()
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

#[test]
fn issue13_nvue_header_newline() {
    let mut plan = eflops();
    plan.name = "eflops\ntouch /tmp/pwned".to_string();
    plan.switch_list[0].model = "SN2100\nreboot".to_string();
    assert!(!name_findings(&plan).is_empty());
    // Defence in depth: even unchecked, no name escapes the comment.
    let text = rendered(&plan, Vendor::Nvue);
    for line in text.lines() {
        assert!(
            !line.starts_with("touch") && !line.starts_with("reboot"),
            "a name escaped the header comment: {line}"
        );
    }
    assert!(text.contains("eflops\\ntouch /tmp/pwned"));
}

#[test]
fn issue13_nvue_port_name_injection() {
    let mut plan = eflops();
    for s in &mut plan.switch_list {
        s.port_name = Some("swp{p};touch X;".to_string());
    }
    let findings = name_findings(&plan);
    assert!(
        findings.iter().any(|f| f.contains("port_name")),
        "{findings:?}"
    );
    let e = render::render(&plan, Vendor::Nvue).unwrap_err().to_string();
    assert!(e.contains("switch sw01-u port 1"), "{e}");
    assert!(e.contains("`swp1;touch X;`"), "{e}");
    assert!(e.contains("nvue takes `swp` followed by a number"), "{e}");
    // The vendor syntax holds for the other vendors too.
    for s in &mut plan.switch_list {
        s.port_name = Some("Ethernet{p}/1 x".to_string());
    }
    let e = render::render(&plan, Vendor::Eos).unwrap_err().to_string();
    assert!(e.contains("is not a eos interface name"), "{e}");
    // A good pattern renders quoted-or-bare single words.
    let plan = eflops();
    for line in rendered(&plan, Vendor::Nvue).lines() {
        if let Some(rest) = line.strip_prefix("nv set interface ") {
            let word = rest.split(' ').next().unwrap();
            assert!(
                Vendor::Nvue.accepts_interface(word) || word.starts_with("vlan"),
                "{line}"
            );
        }
    }
}

#[test]
fn issue13_env_comment_newline() {
    let mut plan = eflops();
    rename_server(&mut plan, "node01", "node01\nrm -rf /");
    plan.name = "eflops\necho pwned".to_string();
    assert!(!name_findings(&plan).is_empty());
    let files = render::render_hosts(&plan).unwrap();
    let env = files
        .iter()
        .find(|(name, _)| name.ends_with(".env") && name.starts_with("node01"))
        .map(|(_, text)| text)
        .unwrap();
    for line in env.lines() {
        assert!(
            !line.starts_with("rm ") && !line.starts_with("echo pwned"),
            "a name escaped a comment: {line}"
        );
    }
    assert!(
        env.contains("# node01\\nrm -rf /: sub-node environment"),
        "{env}"
    );
}

#[test]
fn issue13_comware_eos_description_newline() {
    let plan = eflops();
    let count = |text: &str| text.lines().filter(|l| l.trim() == "shutdown").count();
    let before = [
        count(&rendered(&plan, Vendor::Comware)),
        count(&rendered(&plan, Vendor::Eos)),
    ];
    let mut bad = plan.clone();
    for sn in &mut bad.sub_node_list {
        if sn.nic == "mlx5_0" {
            sn.nic = "mlx5_0\nshutdown".to_string();
        }
    }
    assert!(!name_findings(&bad).is_empty());
    let after = [
        count(&rendered(&bad, Vendor::Comware)),
        count(&rendered(&bad, Vendor::Eos)),
    ];
    assert_eq!(before, after, "a NIC name added `shutdown` lines");
    let comware = rendered(&bad, Vendor::Comware);
    assert!(comware.contains("mlx5_0\\nshutdown"), "{comware}");
    // Descriptions stay within the vendor's length.
    let mut long = plan.clone();
    for sn in &mut long.sub_node_list {
        sn.nic = "n".repeat(400);
    }
    for vendor in [Vendor::Comware, Vendor::Eos] {
        for line in rendered(&long, vendor).lines() {
            if let Some(d) = line.trim().strip_prefix("description ") {
                assert!(d.len() <= vendor.max_description(), "{vendor}: {line}");
            }
        }
    }
}

#[test]
fn issue13_rankfile_extra_line() {
    let mut plan = eflops();
    rename_server(&mut plan, "node01", "node01\nrank 99=evil slot=0:0");
    assert!(!name_findings(&plan).is_empty());
    let table = hdrm_table(&eflops());
    for e in [
        rank_format::to_rankfile(&plan, &table).unwrap_err(),
        rank_format::to_hostfile(&plan, &table).unwrap_err(),
    ] {
        let e = e.to_string();
        assert!(e.contains("server node01\\nrank 99=evil"), "{e}");
        assert!(e.contains("cannot carry it"), "{e}");
        assert!(!e.contains('\n') || e.lines().all(|l| !l.starts_with("rank 99")));
    }
    let mut at = eflops();
    rename_server(&mut at, "node01", "user@node01");
    assert!(rank_format::to_hostfile(&at, &table).is_err());
    assert!(rank_format::to_rankfile(&eflops(), &table).is_ok());
}

#[test]
fn issue13_ranks_csv_gpu_comma() {
    let mut plan = eflops();
    for sn in &mut plan.sub_node_list {
        if sn.gpu.as_deref() == Some("gpu0") {
            sn.gpu = Some("gpu,0".to_string());
        }
    }
    assert!(!name_findings(&plan).is_empty());
    let table = hdrm_table(&plan);
    let csv = rank_format::to_csv(&plan, &table);
    for r in planner::text::read_csv(&csv, "r.csv").unwrap() {
        assert_eq!(r.fields.len(), 7, "line {}: {:?}", r.line, r.fields);
    }
    assert!(csv.contains("\"gpu,0\""));
    let (_, back) = rank_format::read_rank_file(&csv, "r.csv", &plan).unwrap();
    assert_eq!(back, table.ranks);
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
    let mut plan = eflops();
    rename_server(&mut plan, "node01", "node01 x");
    let path = dir.path().join("hand.json");
    fs::write(&path, plan.to_json().unwrap()).unwrap();
    let out = planner(&["validate", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("the name `node01 x` has a space"),
        "{stdout}"
    );
}

/// A name made of any characters, often ones the rule refuses.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9._:+@/-]{0,12}",
        "[ -~]{1,12}",
        "\\PC{1,8}",
        ".{1,8}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A name is refused at load, or it round-trips unchanged through
    /// every CSV writer and reader: cables CSV and the cabling reader,
    /// the ranks CSV and the rank-file reader.
    #[test]
    fn issue13_names_refused_or_round_trip_through_csv(
        server in any_name(),
        gpu in any_name(),
        nic in any_name(),
    ) {
        let refused = [&server, &gpu, &nic]
            .iter()
            .any(|n| planner::names::check_name(n).is_err());
        // The inventory numbers its servers: the name is the prefix.
        let refused_at_load = planner::names::check_pattern(&format!("{server}{{n:02}}")).is_err()
            || [&gpu, &nic].iter().any(|n| planner::names::check_name(n).is_err());
        let inv = with_server_name(&format!("{server}{{n:02}}"))
            .replacen("name = \"gpu0\"", &format!("name = {}", toml_string(&gpu)), 1)
            .replacen("name = \"mlx5_0\"", &format!("name = {}", toml_string(&nic)), 1);
        let loaded = Inventory::from_toml(&inv, "inv.toml");
        if refused_at_load {
            prop_assert!(loaded.is_err());
        }
        let mut plan = eflops();
        rename_server(&mut plan, "node01", &server);
        for sn in &mut plan.sub_node_list {
            if sn.gpu.as_deref() == Some("gpu0") {
                sn.gpu = Some(gpu.clone());
            }
        }
        prop_assert_eq!(name_findings(&plan).is_empty(), planner::names::check_name(&server).is_ok() && planner::names::check_name(&gpu).is_ok());
        if refused {
            return Ok(());
        }
        for sn in &mut plan.sub_node_list {
            if sn.nic == "mlx5_0" {
                sn.nic = nic.clone();
            }
        }
        for c in &mut plan.cables {
            if c.b_port == "mlx5_0" {
                c.b_port = nic.clone();
            }
        }
        // Cables: every cable reads back as written.
        let rows = cabling::parse_csv(&plan.cables_csv(), "c.csv").unwrap();
        prop_assert_eq!(rows.len(), plan.cables.len());
        for (r, c) in rows.iter().zip(&plan.cables) {
            prop_assert_eq!(&r.device, &c.a);
            prop_assert_eq!(&r.peer, &c.b);
            prop_assert_eq!(&r.peer_port, &c.b_port);
        }
        // Ranks: the CSV reads back to the same table, every cell intact.
        let table = hdrm_table(&plan);
        let csv = rank_format::to_csv(&plan, &table);
        let (_, back) = rank_format::read_rank_file(&csv, "r.csv", &plan).unwrap();
        prop_assert_eq!(&back, &table.ranks);
        let records = planner::text::read_csv(&csv, "r.csv").unwrap();
        for (rec, row) in records[1..].iter().zip(rank_format::rows(&plan, &table)) {
            prop_assert_eq!(&rec.fields[1], &row.server);
            prop_assert_eq!(&rec.fields[3], &row.gpu.unwrap_or_default());
            prop_assert_eq!(&rec.fields[4], &row.nic);
        }
    }
}
