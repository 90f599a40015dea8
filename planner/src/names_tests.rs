//! Issue 13, finding 1 (injection), the writers' side: names from an inventory or a plan
//! cannot inject anything into an output. Each test is named after the
//! sub-finding it guards; the plans are the EFLOPS example with names
//! changed by hand, as a person editing the JSON would.

use std::fs;
use std::path::PathBuf;

use proptest::prelude::*;

use crate::checked::CheckedPlan;
use crate::inventory::Inventory;
use crate::plan::Plan;
use crate::ranks::{self, format as rank_format};
use crate::render::{self, Vendor};
use crate::validate::{cabling, validate_plan};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The plan as a writer sees it, without the load check: these tests
/// hold the writers' own defences (quoting, escaping, refusals) for a
/// plan whose names the check would refuse.
fn unchecked(plan: &Plan) -> CheckedPlan {
    CheckedPlan::unchecked_for_tests(plan.clone())
}

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
            s.name = new.into();
        }
    }
    for sn in &mut plan.sub_node_list {
        if sn.server == old {
            sn.server = new.into();
            sn.id = format!("{new}/sn{}", sn.index).into();
        }
    }
    for c in &mut plan.cables {
        if c.b == old {
            c.b = new.into();
        }
    }
    for s in &mut plan.switch_list {
        for p in &mut s.ports {
            if p.peer.as_deref() == Some(old) {
                p.peer = Some(new.into());
            }
        }
    }
}

fn hdrm_table(plan: &Plan) -> ranks::RankTable {
    ranks::plan_ranks(
        &unchecked(plan),
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
    render::render(&unchecked(plan), vendor)
        .unwrap()
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

#[test]
fn issue13_nvue_header_newline() {
    let mut plan = eflops();
    plan.name = "eflops\ntouch /tmp/pwned".to_string();
    plan.switch_list[0].model = "SN2100\nreboot".into();
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
    let e = render::render(&unchecked(&plan), Vendor::Nvue)
        .unwrap_err()
        .to_string();
    assert!(e.contains("switch sw01-u port 1"), "{e}");
    assert!(e.contains("`swp1;touch X;`"), "{e}");
    assert!(e.contains("nvue takes `swp` followed by a number"), "{e}");
    // The vendor syntax holds for the other vendors too.
    for s in &mut plan.switch_list {
        s.port_name = Some("Ethernet{p}/1 x".to_string());
    }
    let e = render::render(&unchecked(&plan), Vendor::Eos)
        .unwrap_err()
        .to_string();
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
    let files = render::render_hosts(&unchecked(&plan)).unwrap();
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
            sn.nic = "mlx5_0\nshutdown".into();
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
        sn.nic = "n".repeat(400).into();
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
        rank_format::to_rankfile(&unchecked(&plan), &table).unwrap_err(),
        rank_format::to_hostfile(&unchecked(&plan), &table).unwrap_err(),
    ] {
        let e = e.to_string();
        assert!(e.contains("server node01\\nrank 99=evil"), "{e}");
        assert!(e.contains("cannot carry it"), "{e}");
        assert!(!e.contains('\n') || e.lines().all(|l| !l.starts_with("rank 99")));
    }
    let mut at = eflops();
    rename_server(&mut at, "node01", "user@node01");
    assert!(rank_format::to_hostfile(&unchecked(&at), &table).is_err());
    assert!(rank_format::to_rankfile(&unchecked(&eflops()), &table).is_ok());
}

#[test]
fn issue13_ranks_csv_gpu_comma() {
    let mut plan = eflops();
    for sn in &mut plan.sub_node_list {
        if sn.gpu.as_deref() == Some("gpu0") {
            sn.gpu = Some("gpu,0".into());
        }
    }
    assert!(!name_findings(&plan).is_empty());
    let table = hdrm_table(&plan);
    let csv = rank_format::to_csv(&unchecked(&plan), &table);
    for r in crate::text::read_csv(&csv, "r.csv").unwrap() {
        assert_eq!(r.fields.len(), 7, "line {}: {:?}", r.line, r.fields);
    }
    assert!(csv.contains("\"gpu,0\""));
    let (_, back) = rank_format::read_rank_file(&csv, "r.csv", &unchecked(&plan)).unwrap();
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
            .any(|n| crate::names::check_name(n).is_err());
        // The inventory numbers its servers: the name is the prefix.
        let refused_at_load = crate::names::check_pattern(&format!("{server}{{n:02}}")).is_err()
            || [&gpu, &nic].iter().any(|n| crate::names::check_name(n).is_err());
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
                sn.gpu = Some(gpu.as_str().into());
            }
        }
        prop_assert_eq!(name_findings(&plan).is_empty(), crate::names::check_name(&server).is_ok() && crate::names::check_name(&gpu).is_ok());
        if refused {
            return Ok(());
        }
        for sn in &mut plan.sub_node_list {
            if sn.nic == "mlx5_0" {
                sn.nic = nic.as_str().into();
            }
        }
        for c in &mut plan.cables {
            if c.b_port == "mlx5_0" {
                c.b_port = nic.as_str().into();
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
        let csv = rank_format::to_csv(&unchecked(&plan), &table);
        let (_, back) = rank_format::read_rank_file(&csv, "r.csv", &unchecked(&plan)).unwrap();
        prop_assert_eq!(&back, &table.ranks);
        let records = crate::text::read_csv(&csv, "r.csv").unwrap();
        for (rec, row) in records[1..].iter().zip(rank_format::rows(&unchecked(&plan), &table)) {
            prop_assert_eq!(&rec.fields[1], &row.server);
            prop_assert_eq!(&rec.fields[3], &row.gpu.unwrap_or_default());
            prop_assert_eq!(&rec.fields[4], &row.nic);
        }
    }
}
