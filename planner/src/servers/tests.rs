use super::*;
use crate::inventory::Inventory;

fn check(toml: &str) -> ServerCheck {
    check_servers(&Inventory::from_toml(toml, "t.toml").expect("valid inventory"))
}

fn rules(c: &ServerCheck) -> Vec<&'static str> {
    let mut r: Vec<&'static str> = c
        .templates
        .iter()
        .flat_map(|t| t.violations.iter().map(|v| v.rule))
        .chain(c.inventory_violations.iter().map(|v| v.rule))
        .collect();
    r.sort_unstable();
    r
}

const HEAD: &str = r#"
[[server]]
name = "s{n}"
count = 2
sockets = ["cpu0", "cpu1"]
[[server.pcie_switch]]
name = "plx0"
socket = "cpu0"
lanes = 16
pcie_gen = 3
[[server.pcie_switch]]
name = "plx1"
socket = "cpu1"
lanes = 16
pcie_gen = 3
"#;

fn dev(kind: &str, name: &str, sw: &str) -> String {
    if kind == "gpu" {
        format!("[[server.gpu]]\nname = \"{name}\"\npcie_switch = \"{sw}\"\nmodel = \"V100\"\n")
    } else {
        format!(
            "[[server.nic]]\nname = \"{name}\"\npcie_switch = \"{sw}\"\nmodel = \"CX5\"\nspeed_gbps = 100\n"
        )
    }
}

/// One GPU-NIC pair under each of the two PCIe switches.
fn balanced() -> String {
    format!(
        "{HEAD}{}{}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("nic", "n0", "plx0"),
        dev("gpu", "g1", "plx1"),
        dev("nic", "n1", "plx1")
    )
}

#[test]
fn balanced_pairs_pass() {
    let c = check(&balanced());
    assert!(c.ok, "{:?}", c);
    assert_eq!(c.sub_nodes, 4);
}

#[test]
fn gpu_and_nic_under_different_switches_get_a_move_proposal() {
    let inv = format!(
        "{HEAD}{}{}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("gpu", "g1", "plx0"),
        dev("nic", "n0", "plx0"),
        dev("nic", "n1", "plx1")
    );
    let c = check(&inv);
    // One misplaced NIC is one problem, reported once with its move.
    assert_eq!(rules(&c), ["gpu-without-nic"]);
    let v = &c.templates[0].violations[0];
    assert!(v.message.contains("GPU g1"), "{}", v.message);
    assert!(v.fix.contains("move NIC n1"), "{}", v.fix);
    assert!(v.fix.contains("under plx0"), "{}", v.fix);
}

#[test]
fn fewer_nics_than_gpus() {
    let inv = format!(
        "{HEAD}{}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("gpu", "g1", "plx1"),
        dev("nic", "n0", "plx0")
    );
    let c = check(&inv);
    assert_eq!(rules(&c), ["gpu-nic-count", "gpu-without-nic"]);
    let t = &c.templates[0];
    assert!(
        t.violations[0].fix.contains("add a NIC"),
        "{:?}",
        t.violations
    );
    assert_eq!(t.nic_gbps_per_gpu, Some(50.0));
}

#[test]
fn all_pairs_on_one_socket_are_unbalanced() {
    let inv = format!(
        "{HEAD}{}{}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("nic", "n0", "plx0"),
        dev("gpu", "g1", "plx0"),
        dev("nic", "n1", "plx0")
    );
    let c = check(&inv);
    assert_eq!(rules(&c), ["root-ports-unbalanced", "sockets-unbalanced"]);
    let v = &c.templates[0].violations;
    assert!(
        v.iter().any(|v| v.fix.contains("from cpu0 to cpu1")),
        "{v:?}"
    );
}

#[test]
fn nic_on_root_port_and_narrow_slot() {
    let inv = format!(
        "{HEAD}{}{}[[server.nic]]\nname = \"n1\"\nsocket = \"cpu1\"\nmodel = \"CX5\"\nspeed_gbps = 100\n[[server.gpu]]\nname = \"g1\"\npcie_switch = \"plx1\"\nmodel = \"V100\"\n",
        dev("gpu", "g0", "plx0"),
        "[[server.nic]]\nname = \"n0\"\npcie_switch = \"plx0\"\nmodel = \"CX5\"\nspeed_gbps = 100\nlanes = 8\n",
    );
    let c = check(&inv);
    let r = rules(&c);
    assert!(r.contains(&"device-on-root-port"), "{r:?}");
    assert!(r.contains(&"gpu-without-nic"), "{r:?}");
    assert!(r.contains(&"nic-slot-too-narrow"), "{r:?}");
    let narrow = c.templates[0]
        .violations
        .iter()
        .find(|v| v.rule == "nic-slot-too-narrow")
        .unwrap();
    assert!(narrow.message.contains("63 Gbps"), "{}", narrow.message);
    assert!(narrow.fix.contains("16 lanes"), "{}", narrow.fix);
}

#[test]
fn mixed_speeds_across_templates() {
    let one = format!(
        "{HEAD}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("nic", "n0", "plx0")
    )
    .replace("name = \"s{n}\"\ncount = 2", "name = \"a{n}\"\ncount = 1");
    let two = format!(
        "{HEAD}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("nic", "n0", "plx0")
    )
    .replace("name = \"s{n}\"\ncount = 2", "name = \"b{n}\"\ncount = 1")
    .replace("speed_gbps = 100", "speed_gbps = 200");
    let c = check(&format!("{one}{two}"));
    assert!(rules(&c).contains(&"nic-speed-uneven"));
    assert!(!c.ok);
}

fn accepted(c: &ServerCheck) -> Vec<&'static str> {
    let mut r: Vec<&'static str> = c
        .templates
        .iter()
        .flat_map(|t| t.accepted.iter().map(|v| v.rule))
        .collect();
    r.sort_unstable();
    r
}

const NVSWITCH: &str = "[[server.nvlink]]\nname = \"nvs\"\nkind = \"nvswitch\"\ngbps = 3600\n";

#[test]
fn an_nvlink_domain_keeps_the_rules_and_says_what_changes() {
    let c = check(&format!("{}{NVSWITCH}", balanced()));
    assert!(c.ok, "{c:?}");
    let t = &c.templates[0];
    assert!(t.accepted.is_empty());
    assert_eq!(t.nvlink[0].gpus, ["g0", "g1"]);
    assert_eq!(t.nvlink[0].gbps_per_gpu, 3600);
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(
        t.notes[0].contains("crosses neither PCIe nor a NIC"),
        "{}",
        t.notes[0]
    );
    assert!(t.notes[0].contains("36x the fastest NIC"), "{}", t.notes[0]);
    // The rules still hold for the traffic that leaves the server.
    let broken = format!(
        "{HEAD}{}{}{}{NVSWITCH}",
        dev("gpu", "g0", "plx0"),
        dev("gpu", "g1", "plx1"),
        dev("nic", "n0", "plx0")
    );
    assert_eq!(rules(&check(&broken)), ["gpu-nic-count", "gpu-without-nic"]);
}

#[test]
fn a_stated_shared_nic_is_accepted_with_its_bandwidth_per_gpu() {
    let nic = "[[server.nic]]\nname = \"n0\"\npcie_switch = \"plx0\"\nmodel = \"CX5\"\nspeed_gbps = 100\ngpus = [\"g0\", \"g1\"]\n";
    let inv = format!(
        "{HEAD}{}{}{nic}{NVSWITCH}",
        dev("gpu", "g0", "plx0"),
        dev("gpu", "g1", "plx1"),
    );
    let c = check(&inv);
    assert!(c.ok, "{c:?}");
    assert_eq!(rules(&c), Vec::<&str>::new());
    assert_eq!(
        accepted(&c),
        ["gpu-nic-count", "nic-gpu-across-pcie", "nic-shared"]
    );
    let t = &c.templates[0];
    let shared = t.accepted.iter().find(|v| v.rule == "nic-shared").unwrap();
    assert!(
        shared.message.contains("50 Gbps per GPU"),
        "{}",
        shared.message
    );
    let across = t
        .accepted
        .iter()
        .find(|v| v.rule == "nic-gpu-across-pcie")
        .unwrap();
    assert!(
        across.message.contains("GPU g1 reaches NIC n0"),
        "{}",
        across.message
    );
    assert!(
        across.message.contains("link between the sockets"),
        "{}",
        across.message
    );
    assert_eq!(t.sub_nodes[0].gpus, ["g0", "g1"]);
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("share NVLink domain nvs") && n.contains("1/2")),
        "{:?}",
        t.notes
    );
    let text = render_table(&c, "t.toml");
    assert!(text.contains("ACCEPTED nic-shared"), "{text}");
    assert!(
        text.contains("Result: no violation; 3 EFLOPS rules broken on purpose"),
        "{text}"
    );
    assert!(
        text.contains("NVLink domain nvs (nvswitch): g0, g1 at 3600 Gbps per GPU"),
        "{text}"
    );
    // Without NVLink the GPUs share the NIC's PCIe path.
    let c = check(&format!(
        "{HEAD}{}{}{nic}",
        dev("gpu", "g0", "plx0"),
        dev("gpu", "g1", "plx1"),
    ));
    assert!(
        c.templates[0]
            .notes
            .iter()
            .any(|n| n.contains("share its PCIe path")),
        "{:?}",
        c.templates[0].notes
    );
}

#[test]
fn pcie_only_reports_keep_their_json() {
    let inv = format!(
        "{HEAD}{}{}",
        dev("gpu", "g0", "plx0"),
        dev("nic", "n0", "plx0")
    );
    let json = serde_json::to_string(&check(&inv)).unwrap();
    for key in ["nvlink", "accepted", "notes", "\"gpus\":["] {
        assert!(!json.contains(key), "{key} in {json}");
    }
}

/// The bundled servers of issue 18 pass, each with what it states.
#[test]
fn bundled_intra_server_inventories_pass() {
    let bundled = [
        (
            "h100-8x32",
            include_str!("../../../topologies/h100-8x32.toml"),
        ),
        (
            "dgx1-v100",
            include_str!("../../../topologies/dgx1-v100.toml"),
        ),
        (
            "s822lc-48",
            include_str!("../../../topologies/s822lc-48.toml"),
        ),
        (
            "cloud-8x16",
            include_str!("../../../topologies/cloud-8x16.toml"),
        ),
    ];
    for (name, text) in bundled {
        let c = check(text);
        assert!(c.ok, "{name}: {}", render_table(&c, name));
        let t = &c.templates[0];
        assert_eq!(t.nvlink.len(), 1, "{name}");
        let shared = t.accepted.iter().find(|v| v.rule == "nic-shared");
        let (gbps, per_gpu) = match name {
            "h100-8x32" => (3600, None),
            "dgx1-v100" => (1200, Some("50 Gbps per GPU")),
            "s822lc-48" => (320, Some("25 Gbps per GPU")),
            _ => (1200, Some("3.1 Gbps per GPU")),
        };
        assert_eq!(t.nvlink[0].gbps_per_gpu, gbps, "{name}");
        match per_gpu {
            None => assert!(t.accepted.is_empty(), "{name}: {:?}", t.accepted),
            Some(p) => {
                let m = &shared.expect("a shared NIC").message;
                assert!(m.contains(p), "{name}: {m}");
            }
        }
    }
}

#[test]
fn lane_rates() {
    assert_eq!(pcie_lane_gbps(1), Some(2.0));
    assert!((pcie_lane_gbps(3).unwrap() * 16.0 - 126.03).abs() < 0.01);
    assert_eq!(pcie_lane_gbps(9), None);
}
