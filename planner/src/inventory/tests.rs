//! Tests of the inventory: parsing, expansion, every check with its line, and the capacity guard.

use super::*;

pub(crate) const MINIMAL: &str = r#"
[[server]]
name = "node{n:02}"
count = 2
sockets = ["cpu0"]

[[server.pcie_switch]]
name = "plx0"
socket = "cpu0"

[[server.gpu]]
pcie_switch = "plx0"
model = "V100"

[[server.nic]]
name = "mlx5_0"
pcie_switch = "plx0"
model = "CX-5"
speed_gbps = 100

[[switch]]
name = "sw{n}"
count = 2
model = "S9850"
ports = 32
port_gbps = 100
"#;

#[test]
fn minimal_inventory_expands() {
    let inv = Inventory::from_toml(MINIMAL, "min.toml").unwrap();
    assert_eq!(inv.name, "min");
    let names: Vec<&str> = inv.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["node01", "node02"]);
    let sw: Vec<&str> = inv.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(sw, ["sw1", "sw2"]);
    assert_eq!(inv.sub_node_count(), 2);
    let t = &inv.server_templates[0];
    assert_eq!(
        t.sub_nodes(),
        vec![SubNodeSpec {
            nic: 0,
            gpu: Some(0)
        }]
    );
    assert_eq!(t.gpus[0].name, "gpu0");
}

/// Parses `input` (the minimal inventory with `edit` applied) and checks
/// the error message contains every `want` fragment.
fn check_err(input: &str, want: &[&str]) {
    let err = Inventory::from_toml(input, "inv.toml")
        .expect_err("the inventory should be rejected")
        .to_string();
    for w in want {
        assert!(err.contains(w), "missing `{w}` in:\n{err}");
    }
}

fn edit(from: &str, to: &str) -> String {
    assert!(MINIMAL.contains(from), "{from}");
    MINIMAL.replacen(from, to, 1)
}

#[test]
fn toml_syntax_errors_give_line_and_column() {
    check_err(&edit("count = 2\n", "count = = 2\n"), &["inv.toml:4:"]);
    check_err("[[server]\n", &["inv.toml:1:"]);
    // Wrong types and typos are reported with their position too.
    check_err(
        &edit("ports = 32", "ports = \"32\""),
        &["inv.toml:25:9:", "expected a whole number"],
    );
    check_err(
        &edit("speed_gbps = 100", "speed = 100"),
        &["inv.toml:", "unknown field `speed`"],
    );
}

#[test]
fn semantic_errors_name_the_object_and_the_fix() {
    // Negative count.
    check_err(
        &edit("count = 2\nsockets", "count = -3\nsockets"),
        &[
            "inv.toml:4:",
            "server template node{n:02}",
            "count is -3",
            "1 or more",
        ],
    );
    // A repeated template without a number in its name.
    check_err(
        &edit("name = \"sw{n}\"", "name = \"sw\""),
        &["switch template sw", "2 instances", "{n:02}"],
    );
    // Duplicate names across templates.
    check_err(
        &format!(
            "{MINIMAL}\n[[switch]]\nname = \"node01\"\nmodel = \"x\"\nports = 8\nport_gbps = 100\n"
        ),
        &["switch node01", "already used at line 2", "duplicate name"],
    );
    // Dangling references.
    check_err(
        &edit(
            "pcie_switch = \"plx0\"\nmodel = \"V100\"",
            "pcie_switch = \"plx9\"\nmodel = \"V100\"",
        ),
        &[
            "inv.toml:12:",
            "GPU gpu0",
            "PCIe switch plx9 is not defined",
            "dangling reference",
            "[plx0]",
        ],
    );
    check_err(
        &edit(
            "socket = \"cpu0\"\n\n[[server.gpu]]",
            "socket = \"cpu7\"\n\n[[server.gpu]]",
        ),
        &["PCIe switch plx0", "socket cpu7", "dangling reference"],
    );
    // A NIC under no PCIe switch.
    check_err(
        &edit(
            "name = \"mlx5_0\"\npcie_switch = \"plx0\"\n",
            "name = \"mlx5_0\"\n",
        ),
        &["NIC mlx5_0", "under no PCIe switch", "set pcie_switch"],
    );
    // Two devices in one slot.
    check_err(
        &format!(
            "{}[[server.nic]]\nname = \"mlx5_1\"\nslot = \"mlx5_0\"\npcie_switch = \"plx0\"\nmodel = \"CX-5\"\nspeed_gbps = 100\n",
            &MINIMAL[..MINIMAL.find("[[switch]]").unwrap()]
        ),
        &["NIC mlx5_1", "slot overbooked"],
    );
}

#[test]
fn switch_split_errors() {
    let split = |a: &str, b: &str, extra: &str| {
        format!(
            "{MINIMAL}{extra}\n[[switch.virtual]]\nsuffix = \"u\"\nports = \"{a}\"\nvlan = 101\n\n[[switch.virtual]]\nsuffix = \"l\"\nports = \"{b}\"\nvlan = 102\n"
        )
    };
    assert!(Inventory::from_toml(&split("1-16", "17-32", ""), "inv.toml").is_ok());
    check_err(
        &split("1-16", "16-32", ""),
        &[
            "virtual switch l",
            "port 16 also belongs to virtual switch u",
            "port overbooked",
        ],
    );
    check_err(
        &split("1-16", "17-33", ""),
        &["port 33 does not exist on a 32-port switch"],
    );
    check_err(
        &split("1-16", "17-32", "reserved_ports = \"32\"\n"),
        &["port 32 is also reserved", "port overbooked"],
    );
    check_err(
        &split("1-16", "17-32", "").replace("vlan = 102", "vlan = 101"),
        &["both halves use VLAN 101"],
    );
    check_err(
        &split("1-16", "17-32", "").replace("vlan = 102", "vlan = 5000"),
        &["VLAN 5000", "1 and 4094"],
    );
    check_err(
        &split("1-16", "17-32", "")
            .replace("suffix = \"l\"", "suffix = \"l\"\npart = \"upper\"")
            .replace("suffix = \"u\"", "suffix = \"u\"\npart = \"upper\""),
        &["both halves are in the upper part"],
    );
    check_err(
        &split("1-16", "a", ""),
        &["`a` in `a` is not a port number"],
    );
}

#[test]
fn addresses_racks_and_catalog() {
    let inv = Inventory::from_toml(
        &format!(
            "{MINIMAL}\n[[nic_address]]\nserver = \"node02\"\nnic = \"mlx5_0\"\nmac = \"AA:BB:CC:00:00:02\"\nip = \"10.0.0.2/24\"\n"
        ),
        "inv.toml",
    )
    .unwrap();
    assert_eq!(
        inv.servers[1].nic_addresses,
        vec![NicAddress {
            mac: Some("aa:bb:cc:00:00:02".into()),
            ip: Some("10.0.0.2/24".into())
        }]
    );
    check_err(
        &format!("{MINIMAL}\n[[nic_address]]\nserver = \"node09\"\nnic = \"mlx5_0\"\n"),
        &[
            "server node09 is not in the inventory",
            "dangling reference",
        ],
    );
    check_err(
        &format!("{MINIMAL}\n[[nic_address]]\nserver = \"node01\"\nnic = \"eth9\"\n"),
        &["server node01 has no NIC eth9", "[mlx5_0]"],
    );
    check_err(
        &edit("speed_gbps = 100", "speed_gbps = 100\nmac = \"zz:00\""),
        &["MAC `zz:00`"],
    );
    check_err(
        &edit(
            "speed_gbps = 100",
            "speed_gbps = 100\nip = \"10.0.{n}.300\"",
        ),
        &["`10.0.1.300` is not an IP address"],
    );
    check_err(
        &format!(
            "[[rack]]\nname = \"r1\"\n{}",
            edit("count = 2\n", "count = 2\nrack = \"r{n}\"\n")
        ),
        &["server node02", "rack r2 is not declared"],
    );
    check_err(
        &format!("[[rack]]\nname = \"r1\"\nmax_kw = -5\n{MINIMAL}"),
        &["inv.toml:3", "rack r1", "max_kw is -5", "set max_kw"],
    );
    check_err(
        &format!("{MINIMAL}\n[[catalog]]\nname = \"cable\"\nkind = \"rope\"\nprice = 1.0\n"),
        &["catalog part cable", "kind `rope`"],
    );
    check_err(
        &format!("{MINIMAL}\n[[catalog]]\nname = \"x\"\nkind = \"nic\"\nprice = -1.0\n"),
        &["price is -1"],
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let bad = edit("count = 2\nsockets", "count = -1\nsockets").replace("ports = 32", "ports = 0");
    let err = Inventory::from_toml(&bad, "inv.toml").unwrap_err();
    match err {
        crate::Error::Invalid { problems, .. } => assert_eq!(problems.len(), 2, "{problems:?}"),
        other => panic!("{other}"),
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const EFLOPS: &str = include_str!("../../../topologies/eflops-4x16.toml");

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Arbitrary text never panics the parser.
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let _ = Inventory::from_toml(&text, "fuzz.toml");
        }

        /// Arbitrary edits of a real inventory never panic, and every error
        /// names the file.
        #[test]
        fn mutated_inventories_fail_cleanly(
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..6, "[-0-9a-z{}\"=,\\[\\]\n ]{0,8}"), 1..6)
        ) {
            let mut lines: Vec<String> = EFLOPS.lines().map(str::to_string).collect();
            for (at, op, text) in edits {
                let i = at.index(lines.len());
                match op {
                    0 => { lines.remove(i); }
                    1 => { let l = lines[i].clone(); lines.insert(i, l); }
                    2 => lines[i] = text,
                    3 => lines[i].push_str(&text),
                    4 => { lines[i] = lines[i].replace(|c: char| c.is_ascii_digit(), "9"); }
                    _ => { lines[i] = lines[i].replace('=', &text); }
                }
                if lines.is_empty() { lines.push(String::new()); }
            }
            let text = lines.join("\n");
            if let Err(e) = Inventory::from_toml(&text, "fuzz.toml") {
                prop_assert!(e.to_string().starts_with("fuzz.toml"), "{}", e);
            }
        }
    }
}

/// The minimal inventory with a second GPU under the PCIe switch, and
/// `nic_extra` (the NIC's `gpus`) and `extra` (`[[server.nvlink]]` tables)
/// after the NIC: `nic_extra` is line 24, `extra` starts on line 25.
fn shared(nic_extra: &str, extra: &str) -> String {
    let second = "[[server.gpu]]\npcie_switch = \"plx0\"\nmodel = \"V100\"\n\n[[server.nic]]";
    edit("[[server.nic]]", second).replacen(
        "speed_gbps = 100\n",
        &format!("speed_gbps = 100\n{nic_extra}\n{extra}\n"),
        1,
    )
}

#[test]
fn nvlink_domains_and_shared_nics_parse() {
    let inv = Inventory::from_toml(
        &shared(
            "gpus = [\"gpu0\", \"gpu1\"]",
            "[[server.nvlink]]\nkind = \"nvswitch\"\ngbytes_per_s = 450\n",
        ),
        "inv.toml",
    )
    .unwrap();
    let t = &inv.server_templates[0];
    assert_eq!(t.nics[0].gpus, [0, 1]);
    let sn = t.sub_nodes();
    assert_eq!(
        sn,
        [SubNodeSpec {
            nic: 0,
            gpu: Some(0)
        }]
    );
    assert_eq!(t.sub_node_gpus(&sn[0]), [0, 1]);
    assert_eq!(t.nvlink.len(), 1);
    let d = &t.nvlink[0];
    assert_eq!(
        (d.name.as_str(), d.kind, d.gbps),
        ("nvlink0", NvlinkKind::Nvswitch, 3600)
    );
    assert_eq!(d.gpus, [0, 1], "every GPU by default");
    assert_eq!(t.nvlink_of(1).map(|d| d.name.as_str()), Some("nvlink0"));
    // Gbps as written.
    let inv = Inventory::from_toml(
        &shared("", "[[server.nvlink]]\nname = \"m\"\nkind = \"mesh\"\ngpus = [\"gpu1\", \"gpu0\"]\ngbps = 1200\n"),
        "inv.toml",
    )
    .unwrap();
    let d = &inv.server_templates[0].nvlink[0];
    assert_eq!(
        (d.kind, d.gbps, d.gpus.clone()),
        (NvlinkKind::Mesh, 1200, vec![1, 0])
    );
}

#[test]
fn pcie_only_inventories_keep_their_pairing() {
    let inv = Inventory::from_toml(MINIMAL, "min.toml").unwrap();
    let t = &inv.server_templates[0];
    assert!(t.nvlink.is_empty() && t.nics.iter().all(|n| n.gpus.is_empty()));
    assert_eq!(t.sub_node_gpus(&t.sub_nodes()[0]), [0]);
}

#[test]
fn stated_gpus_leave_the_pairing_of_the_other_nics() {
    // gpu0 is stated under the second NIC: the first NIC pairs with gpu1.
    let text = shared("", "").replace(
        "speed_gbps = 100\n",
        "speed_gbps = 100\n\n[[server.nic]]\nname = \"mlx5_1\"\npcie_switch = \"plx0\"\nmodel = \"CX-5\"\nspeed_gbps = 100\ngpus = [\"gpu0\"]\n",
    );
    let inv = Inventory::from_toml(&text, "inv.toml").unwrap();
    let sn = inv.server_templates[0].sub_nodes();
    assert_eq!(sn[0].gpu, Some(1));
    assert_eq!(sn[1].gpu, Some(0));
}

#[test]
fn bad_gpu_fabrics_are_refused_with_line_and_fix() {
    let domain = |body: &str| shared("", &format!("[[server.nvlink]]\n{body}\n"));
    check_err(
        &domain("kind = \"nvlink\"\ngbps = 100"),
        &[
            "inv.toml:26:",
            "NVLink domain nvlink0",
            "kind `nvlink`",
            "\"nvswitch\"",
        ],
    );
    check_err(
        &domain("kind = \"mesh\""),
        &["bandwidth per GPU is missing", "gbytes_per_s"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\ngbytes_per_s = 12"),
        &["both gbps and gbytes_per_s"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 0"),
        &["gbps 0 is outside 1..100000"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbytes_per_s = 20000"),
        &["gbytes_per_s 20000 is outside 1..12500"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\ngpus = [\"gpu0\", \"gpu7\"]"),
        &["GPU gpu7 is not a GPU of this server (dangling reference); its GPUs: [gpu0, gpu1]"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\ngpus = [\"gpu0\"]"),
        &["joins 1 GPU", "at least two GPUs"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\ngpus = [\"gpu0\", \"gpu0\"]"),
        &["GPU gpu0 is listed twice"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\n[[server.nvlink]]\nkind = \"mesh\"\ngbps = 100"),
        &[
            "NVLink domain nvlink1",
            "GPUs gpu0, gpu1 are already in NVLink domain nvlink0 (line 25)",
        ],
    );
    check_err(
        &domain(
            "name = \"a\"\nkind = \"mesh\"\ngbps = 100\ngpus = [\"gpu0\", \"gpu1\"]\n[[server.nvlink]]\nname = \"a\"\nkind = \"mesh\"\ngbps = 100",
        ),
        &["duplicate name"],
    );
    check_err(
        &domain("kind = \"mesh\"\ngbps = 100\nlinks = 4"),
        &["unknown field `links`"],
    );
    check_err(
        &domain("name = \"nv link\"\nkind = \"mesh\"\ngbps = 100"),
        &["NVLink domain nv link", "name:"],
    );
    // A NIC's gpus.
    check_err(
        &shared("gpus = []", ""),
        &["NIC mlx5_0", "gpus is an empty list"],
    );
    check_err(
        &shared("gpus = [\"gpu3\"]", ""),
        &["inv.toml:24:", "GPU gpu3 is not a GPU of this server"],
    );
    let two = shared("gpus = [\"gpu0\", \"gpu1\"]", "").replace(
        "model = \"CX-5\"\nspeed_gbps = 100\ngpus",
        "model = \"CX-5\"\nspeed_gbps = 100\n\n[[server.nic]]\nname = \"mlx5_1\"\npcie_switch = \"plx0\"\nmodel = \"CX-5\"\nspeed_gbps = 100\ngpus = [\"gpu1\"]\n\n[[server.nic]]\nname = \"mlx5_2\"\npcie_switch = \"plx0\"\nmodel = \"CX-5\"\nspeed_gbps = 100\ngpus",
    );
    check_err(
        &two,
        &["NIC mlx5_2", "GPU gpu1 is already given to NIC mlx5_1"],
    );
}

/// `ports` on a NIC: 1 (the default) or 2 (a dual-port NIC, `speed_gbps`
/// per port); anything else names the NIC's line and the values allowed.
#[test]
fn nic_ports_are_one_or_two() {
    let inv = Inventory::from_toml(MINIMAL, "inv.toml").unwrap();
    assert_eq!(inv.server_templates[0].nics[0].ports, 1);
    let dual = edit("speed_gbps = 100", "speed_gbps = 200\nports = 2");
    let inv = Inventory::from_toml(&dual, "inv.toml").unwrap();
    let nic = &inv.server_templates[0].nics[0];
    assert_eq!((nic.ports, nic.speed_gbps), (2, 200));
    for bad in ["0", "3", "-1"] {
        check_err(
            &edit(
                "speed_gbps = 100",
                &format!("speed_gbps = 100\nports = {bad}"),
            ),
            &[
                "inv.toml:20:",
                "node{n:02} NIC mlx5_0",
                &format!("ports is {bad}"),
                "set ports to one of 1, 2",
            ],
        );
    }
}

/// `MINIMAL` with its switches at 400G and `extra` added to `[[switch]]`.
fn with_breakout(extra: &str) -> String {
    MINIMAL.replace(
        "ports = 32\nport_gbps = 100\n",
        &format!("ports = 32\nport_gbps = 400\n{extra}\n"),
    )
}

#[test]
fn a_broken_out_switch_counts_lanes() {
    let inv = Inventory::from_toml(
        &with_breakout("breakout = \"2x200G\"\nreserved_ports = \"32\""),
        "inv.toml",
    )
    .unwrap();
    let t = &inv.switch_templates[0];
    assert_eq!((t.ports, t.port_gbps), (64, 200));
    assert_eq!(
        t.breakout,
        Some(Breakout {
            lanes: 2,
            cage_gbps: 400
        })
    );
    // The reserved cage brings both its lanes.
    assert_eq!(t.reserved_ports, [63, 64]);
    assert_eq!(t.port_name(3), "2s0");
}

#[test]
fn bad_breakouts_name_the_file_line_switch_and_fix() {
    for (breakout, says) in [
        ("2x100G", "is 200 Gbps in all, but the ports are 400 Gbps"),
        (
            "3x133G",
            "splits a port into 3 lanes; switch systems split into 2, 4 or 8",
        ),
        ("16x25G", "splits a port into 16 lanes"),
        ("two by 200", "is not lanes x speed"),
    ] {
        let text = with_breakout(&format!("breakout = \"{breakout}\""));
        let line = text
            .lines()
            .position(|l| l.starts_with("breakout"))
            .unwrap()
            + 1;
        match Inventory::from_toml(&text, "inv.toml").unwrap_err() {
            crate::Error::Invalid { file, problems, .. } => {
                assert_eq!(file, "inv.toml");
                assert_eq!(problems.len(), 1, "{problems:?}");
                let p = &problems[0];
                assert_eq!(p.line, Some(line), "{breakout}");
                assert_eq!(p.object, "switch template sw{n}");
                assert!(p.message.contains(says), "{breakout}: {}", p.message);
                assert!(p.fix.contains("\"2x200G\""), "{}", p.fix);
            }
            e => panic!("{breakout}: {e}"),
        }
    }
}

/// The minimal inventory with a PCI bus id on each of its devices and the
/// PCIe switch's width and generation, which NCCL's topology file needs.
fn with_buses() -> String {
    let text = MINIMAL
        .replacen(
            "socket = \"cpu0\"\n",
            "socket = \"cpu0\"\nlanes = 16\npcie_gen = 4\npci_bus = \"0000:05:00.0\"\n",
            1,
        )
        .replacen(
            "model = \"V100\"\n",
            "model = \"V100\"\npci_bus = \"0000:07:00.0\"\n",
            1,
        )
        .replacen(
            "speed_gbps = 100\n",
            "speed_gbps = 100\npci_bus = \"0000:08:00.0\"\n",
            1,
        );
    assert_eq!(text.matches("pci_bus").count(), 3);
    text
}

#[test]
fn pci_bus_ids_load_and_reach_the_plan_tree() {
    let inv = Inventory::from_toml(&with_buses(), "inv.toml").unwrap();
    let t = &inv.server_templates[0];
    assert_eq!(t.pcie_switches[0].pci_bus.as_deref(), Some("0000:05:00.0"));
    assert_eq!(t.gpus[0].pci_bus.as_deref(), Some("0000:07:00.0"));
    assert_eq!(t.nics[0].pci_bus.as_deref(), Some("0000:08:00.0"));
    // Without them, nothing is asked for: older inventories load as before.
    let old = Inventory::from_toml(MINIMAL, "inv.toml").unwrap();
    assert!(old.server_templates[0].gpus[0].pci_bus.is_none());
}

/// `edit` applied to [`with_buses`] is refused with one problem on the
/// line holding `at`, about `object`, saying `says`.
fn check_pci(from: &str, to: &str, at: &str, object: &str, says: &str) {
    let base = with_buses();
    assert!(base.contains(from), "{from}");
    let text = base.replacen(from, to, 1);
    let line = text.lines().position(|l| l.contains(at)).unwrap() + 1;
    match Inventory::from_toml(&text, "inv.toml").unwrap_err() {
        crate::Error::Invalid { file, problems, .. } => {
            assert_eq!(file, "inv.toml");
            let p = problems
                .iter()
                .find(|p| p.message.contains(says))
                .unwrap_or_else(|| panic!("no `{says}` in {problems:?}"));
            assert_eq!(p.line, Some(line), "{says}: {p:?}");
            assert_eq!(p.object, object, "{says}");
            assert!(!p.fix.is_empty(), "{says}");
        }
        e => panic!("{to}: {e}"),
    }
}

#[test]
fn bad_pci_bus_ids_name_the_file_line_server_and_device() {
    let gpu = "server template node{n:02} GPU gpu0";
    let nic = "server template node{n:02} NIC mlx5_0";
    // Forms NCCL would read but never match: the form to write instead.
    check_pci(
        "\"0000:07:00.0\"",
        "\"07:00.0\"",
        "07:00.0",
        gpu,
        "write `0000:07:00.0`",
    );
    check_pci(
        "\"0000:08:00.0\"",
        "\"0000:0A:00.0\"",
        "0A:00.0",
        nic,
        "write `0000:0a:00.0`",
    );
    check_pci(
        "\"0000:07:00.0\"",
        "\"00000000:07:00.0\"",
        "00000000",
        gpu,
        "write `0000:07:00.0`",
    );
    check_pci(
        "\"0000:07:00.0\"",
        "\"gpu-bus\"",
        "gpu-bus",
        gpu,
        "is not domain:bus:device.function",
    );
    check_pci(
        "\"0000:07:00.0\"",
        "\"0000:07:00.9\"",
        "07:00.9",
        gpu,
        "function 9",
    );
    // Two devices, one bus id.
    check_pci(
        "\"0000:08:00.0\"",
        "\"0000:07:00.0\"",
        "[[server.nic]]",
        nic,
        "pci_bus 0000:07:00.0 is already GPU gpu0's",
    );
    // All or none: the missing device is named.
    check_pci(
        "pci_bus = \"0000:08:00.0\"\n",
        "",
        "[[server]]",
        "server template node{n:02}",
        "pci_bus is given for 2 of its 3 PCIe switches, GPUs and NICs; missing on NIC mlx5_0",
    );
    // What NCCL's file needs besides the ids.
    check_pci(
        "pcie_gen = 4\n",
        "",
        "[[server.pcie_switch]]",
        "server template node{n:02} PCIe switch plx0",
        "pcie_gen is not given",
    );
    check_pci(
        "pcie_switch = \"plx0\"\nmodel = \"CX-5\"",
        "socket = \"cpu0\"\nmodel = \"CX-5\"",
        "[[server.nic]]",
        nic,
        "lanes is not given",
    );
}

/// `u_height` and `position` (docs/inventory.md, "Rack positions"): each
/// bad value refused with its line and template; a template's instances
/// stack from its position in each rack.
#[test]
fn rack_heights_and_positions() {
    let racked = |server: &str, rack: &str| {
        format!(
            "[[rack]]\nname = \"r{{n}}\"\ncount = 2\n{rack}\n{}",
            edit(
                "count = 2\n",
                &format!("count = 4\nrack = \"r{{n/2}}\"\n{server}")
            )
        )
    };
    check_err(
        &racked("", "u_height = 0"),
        &[
            "inv.toml:4",
            "rack r{n}",
            "u_height is 0",
            "leave it out for 42",
        ],
    );
    check_err(
        &racked("u_height = 101\n", ""),
        &[
            "server template node{n:02}",
            "u_height is 101",
            "leave it out for 2",
        ],
    );
    check_err(
        &racked("position = 0\n", ""),
        &[
            "server template node{n:02}",
            "position is 0",
            "numbered from 1",
        ],
    );
    check_err(
        &edit("count = 2\n", "count = 2\nposition = 3\n"),
        &[
            "inv.toml:5",
            "position is given but the template has no rack",
            "give the template a `rack`",
        ],
    );
    check_err(
        &format!("{MINIMAL}u_height = -1\n"),
        &[
            "switch template sw{n}",
            "u_height is -1",
            "leave it out for 1",
        ],
    );
    let inv = Inventory::from_toml(
        &racked("u_height = 8\nposition = 3\n", "u_height = 48"),
        "inv.toml",
    )
    .unwrap();
    let at: Vec<(Option<&str>, Option<u32>)> = (inv.servers.iter())
        .map(|s| (s.rack.as_deref(), s.position))
        .collect();
    assert_eq!(
        at,
        [
            (Some("r1"), Some(3)),
            (Some("r1"), Some(11)),
            (Some("r2"), Some(3)),
            (Some("r2"), Some(11))
        ]
    );
    assert_eq!(inv.racks[0].u_height, Some(48));
    assert_eq!(inv.server_templates[0].elevation.u_height, 8);
    assert_eq!(inv.switch_templates[0].elevation.u_height, DEFAULT_SWITCH_U);
    assert_eq!(inv.switch_templates[0].elevation.position, None);
}
