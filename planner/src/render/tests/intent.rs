//! Addresses, the intent and its overrides, single switches, port names
//! and breakouts.

use super::*;

#[test]
fn addresses_without_inventory_ips_come_from_the_pools() {
    let (inv, opts) =
        crate::design::shorthand::bigraph(2, 4, &crate::design::shorthand::Shorthand::default())
            .unwrap();
    let plan = design(&inv, &opts).unwrap();
    let files = render_hosts(&plan).unwrap();
    let mut ips = BTreeSet::new();
    for (name, text) in files.iter().filter(|(n, _)| n.ends_with(".json")) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        for sn in v["sub_nodes"].as_array().unwrap() {
            let ip = sn["ip"].as_str().unwrap().to_string();
            assert!(ip.starts_with("10.0."), "{name}: {ip}");
            assert!(ip.ends_with("/24"));
            assert!(ips.insert(ip));
            assert!(sn["gateway"].as_str().unwrap().ends_with(".254"));
        }
    }
    assert_eq!(ips.len(), plan.sub_nodes);
    let c = check_qos(&plan);
    assert!(c.ok, "{:?}", c.findings);
    let sonic = &render(&plan, Vendor::Sonic).unwrap()[0].1;
    assert!(
        sonic.contains("10.255.0.0/31"),
        "links come from the link pool"
    );
}

/// The refusal of an address edit: the load's check makes it (from the
/// model `render` builds), naming the file.
fn address_error(edit: impl FnOnce(&mut Plan)) -> String {
    let e = edited(edit).unwrap_err();
    assert!(e.is_bad_input());
    let e = e.to_string();
    assert!(e.starts_with("edited.json: "), "{e}");
    e
}

#[test]
fn address_clashes_are_clear_errors() {
    let e = address_error(|p| p.sub_node_list[1].ip = Some("10.100.1.254/24".into()));
    assert!(e.contains("sub-node node01/sn1"), "{e}");
    assert!(e.contains("is the gateway of 10.100.1.0/24"), "{e}");
    let e = address_error(|p| p.sub_node_list[1].ip = Some("10.100.1.7".into()));
    assert!(e.contains("has no prefix length"), "{e}");
    let e = address_error(|p| p.sub_node_list[4].ip = Some("10.100.1.9/24".into()));
    assert!(
        e.contains("its subnet 10.100.1.0/24 is also on sw01-u"),
        "{e}"
    );
    let e = address_error(|p| p.sub_node_list[1].ip = Some("10.100.1.1/24".into()));
    assert!(e.contains("is also the address of node01/sn0"), "{e}");
    let e = address_error(|p| p.addressing.link_pool = "10.100.0.0/16".into());
    assert!(e.contains("overlaps the link pool"), "{e}");
    let e = address_error(|p| p.addressing.link_pool = "10.255.0.0/27".into());
    assert!(e.contains("holds 16 /31 links, the plan has 64"), "{e}");
}

#[test]
fn intent_problems_stop_rendering() {
    let e = edited(|plan| {
        let mut q = plan.qos_intent();
        q.classes[1].dscp = 48;
        plan.qos = Some(q);
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("DSCP 48 is also the DSCP of the CNP"), "{e}");
}

#[test]
fn a_plan_without_intent_gets_the_defaults() {
    let plan = edited(|plan| plan.qos = None).unwrap();
    assert_eq!(
        render(&plan, Vendor::Sonic).unwrap(),
        render(&eflops(), Vendor::Sonic).unwrap()
    );
}

#[test]
fn seconds_and_lists() {
    assert_eq!(seconds(200), "0.2");
    assert_eq!(seconds(1000), "1");
    assert_eq!(seconds(50), "0.05");
    assert_eq!(list(&[3, 4]), "3,4");
}

#[test]
fn the_intent_survives_json_and_toml() {
    let plan = eflops_one_priority();
    let json = Plan::from_json(&plan.to_json().unwrap(), "p.json").unwrap();
    assert_eq!(&json, plan.plan());
    let toml = Plan::from_toml(&plan.to_toml().unwrap(), "p.toml").unwrap();
    assert_eq!(&toml, plan.plan());
}

#[test]
fn reserved_ports_are_left_alone_and_unknown_switches_refused() {
    let mut plan = eflops().into_plan();
    let port = plan.switch_list[0]
        .ports
        .iter_mut()
        .find(|p| p.role == PortRole::Free)
        .unwrap();
    port.role = PortRole::Reserved;
    let number = port.port;
    let plan = plan.check("p.json").unwrap();
    let comware = &render(&plan, Vendor::Comware).unwrap()[0].1;
    assert!(!comware.contains(&format!("interface HundredGigE1/0/{number}\n")));
    let sonic = parse(
        Vendor::Sonic,
        &render(&plan, Vendor::Sonic).unwrap()[0].1,
        "x",
    )
    .unwrap();
    assert!(
        !sonic
            .interfaces
            .contains_key(&format!("Ethernet{}", 4 * (number - 1)))
    );
    assert!(check_qos(&plan).ok);

    let mut plan = plan.into_plan();
    let mut q = plan.qos_intent();
    q.switch_mtu.insert("sw99".to_string(), 9000);
    plan.qos = Some(q);
    let e = plan.check("p.json").unwrap_err().to_string();
    assert!(
        e.contains("p.json: qos switch_mtu sw99: sw99 is not a physical switch of the plan"),
        "{e}"
    );
}

#[test]
fn larger_fabrics_render_and_check_quickly() {
    let plan = design(
        &bundled_inventory("bigraph-1024"),
        &DesignOptions::default(),
    )
    .unwrap();
    let start = std::time::Instant::now();
    let c = check_qos(&plan);
    assert!(c.ok, "{:?}", c.findings);
    // 64 switches: every turn in the other part, per priority.
    assert_eq!(c.graphs.len(), 2);
    assert!(c.graphs.iter().all(|g| g.dependencies == 32 * 32 * 31));
    for v in Vendor::ALL {
        assert_eq!(render(&plan, v).unwrap().len(), 32);
    }
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}

fn overrides(text: &str) -> crate::Result<QosOverrides> {
    let switches: Vec<String> = (1..=8).map(|i| format!("sw{i:02}")).collect();
    let names: Vec<&str> = switches.iter().map(String::as_str).collect();
    crate::inventory::qos_overrides_from_toml(text, "o.toml", &names)
}

/// An overrides file applied to a designed plan gives the intent the same
/// `[qos]` table gives at design time.
#[test]
fn overrides_on_a_plan_match_the_inventory_table() {
    let table = "[qos]\nmtu = 9000\ngid_index = 1\n\n[[qos.class]]\nname = \"roce-lower\"\ndscp = 36\npriority = 5\n\n[qos.ecn]\nmin_kb = 200\n\n[qos.pfc_watchdog]\ndetection_ms = 300\n\n[[qos.switch]]\nname = \"sw03\"\nmtu = 9216\n";
    let mut plan = eflops();
    let notes = apply_qos_overrides(&mut plan, &overrides(table).unwrap()).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let text = bundled_text("eflops-4x16") + "\n" + table;
    let inv = Inventory::from_toml(&text, "eflops-4x16.toml").unwrap();
    let designed = design(&inv, &DesignOptions::default()).unwrap();
    assert_eq!(plan.qos, designed.qos);
    let q = plan.qos.as_ref().unwrap();
    assert_eq!(
        (q.mtu, q.gid_index, q.ecn.min_kb, q.ecn.max_kb),
        (9000, 1, 200, 1500)
    );
    assert_eq!(q.switch_mtu.get("sw03"), Some(&9216));
    // Applying nothing new keeps the intent.
    let before = plan.qos.clone();
    apply_qos_overrides(&mut plan, &overrides("[qos]\n").unwrap()).unwrap();
    assert_eq!(plan.qos, before);
}

#[test]
fn overrides_turn_the_split_off_and_on_keeping_added_classes() {
    let mut plan = eflops();
    let off = "[qos]\nper_direction = false\n\n[[qos.class]]\nname = \"storage\"\ndscp = 10\npriority = 1\nlossless = false\n";
    apply_qos_overrides(&mut plan, &overrides(off).unwrap()).unwrap();
    let names = |p: &CheckedPlan| -> Vec<String> {
        p.qos_intent()
            .classes
            .iter()
            .map(|c| c.name.clone())
            .collect()
    };
    assert_eq!(names(&plan), ["roce", "storage"]);
    assert!(!check_qos(&plan).ok);
    let notes = apply_qos_overrides(
        &mut plan,
        &overrides("[qos]\nper_direction = true\n").unwrap(),
    )
    .unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(names(&plan), ["roce-upper", "roce-lower", "storage"]);
    assert!(check_qos(&plan).ok);
    // A change to the other design's class is a note, not an error.
    let notes = apply_qos_overrides(
        &mut plan,
        &overrides("[[qos.class]]\nname = \"roce\"\ndscp = 20\n").unwrap(),
    )
    .unwrap();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("class roce (line 1)"), "{notes:?}");
}

#[test]
fn overrides_problems_name_the_file_and_line() {
    let mut plan = eflops();
    let e = apply_qos_overrides(
        &mut plan,
        &overrides("[qos]\n\n[[qos.class]]\nname = \"roce-lower\"\ndscp = 26\n").unwrap(),
    )
    .unwrap_err();
    assert!(e.is_bad_input());
    assert!(
        e.to_string().contains(
            "o.toml:3: qos class roce-lower: DSCP 26 is also the DSCP of class roce-upper"
        ),
        "{e}"
    );
    let e = overrides("[qos]\nmtu = 100\n\n[[qos.switch]]\nname = \"sw09\"\nmtu = 9000\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("o.toml: 2 problems in the QoS overrides"),
        "{e}"
    );
    assert!(
        e.contains("o.toml:2: qos: mtu 100 is outside 1500..9216"),
        "{e}"
    );
    assert!(
        e.contains("o.toml:5: qos switch sw09: switch sw09 is not in the plan"),
        "{e}"
    );
    let e = overrides("[addressing]\nvlan = 3\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("o.toml:1:"), "{e}");
    assert!(e.contains("holds only the [qos] table"), "{e}");
    let e = overrides("# nothing\n").unwrap_err().to_string();
    assert!(e.contains("the file has no [qos] table"), "{e}");
    // The plan is unchanged by a failed application.
    assert_eq!(plan.qos, eflops().qos);
}

/// `render_switch` is the file `render` writes for that switch, for every
/// vendor; an unknown switch is a `switch` parameter error.
#[test]
fn render_switch_is_the_switchs_file() {
    let plan = eflops();
    for v in Vendor::ALL {
        let files = render(&plan, v).unwrap();
        let one = super::render_switch(&plan, "sw03", v).unwrap();
        assert_eq!(
            files
                .iter()
                .find(|(n, _)| *n == v.file_name("sw03"))
                .unwrap()
                .1,
            one,
            "{v}"
        );
    }
    let e = super::render_switch(&plan, "sw03-u", Vendor::Frr).unwrap_err();
    assert!(matches!(&e, Error::Parameter { parameter, .. } if parameter == "switch"));
    assert!(
        e.to_string().contains("`sw03-u` is not a physical switch"),
        "{e}"
    );
}

/// A plan switch's own `frr.conf` (a lab namespace per half) is the
/// split switch's file cut to the half: the half's ports and BGP or
/// static routes in the default VRF, gateways on `br0`; it loads in the
/// FRR reader with the model's BGP, and unknown switches are refused.
#[test]
fn a_plan_switch_alone_is_a_default_vrf_frr_router() {
    let plan = crate::network::tests::bgp(&eflops());
    let text = super::render_frr_plan_switch(&plan, "sw01-l").unwrap();
    let c = parse(Vendor::Frr, &text, "sw01-l.frr.conf").unwrap();
    assert_eq!(c.hostname, "sw01-l");
    assert!(c.vrfs.is_empty());
    let bgp = &c.bgp["default"];
    assert_eq!(bgp.asn, plan.routing.asn(1));
    assert_eq!(bgp.neighbors.len(), 8);
    assert_eq!(c.bgp.len(), 1);
    assert_eq!(c.vlans[&0].addresses.len(), 1);
    // Only the lower half's ports (17 to 32).
    assert!(
        c.interfaces
            .keys()
            .all(|n| n["swp".len()..].parse::<u32>().unwrap() > 16)
    );
    let whole = parse(
        Vendor::Frr,
        &super::render_switch(&plan, "sw01", Vendor::Frr).unwrap(),
        "sw01",
    )
    .unwrap();
    assert_eq!(&whole.bgp["Vrf102"], bgp);
    // Static: the half's routes in the default VRF.
    let text = super::render_frr_plan_switch(&eflops(), "sw01-u").unwrap();
    let c = parse(Vendor::Frr, &text, "sw01-u.frr.conf").unwrap();
    // 8 lower switches over their direct link, 7 upper ones over all 8.
    assert_eq!(c.routes.len(), 8 + 7 * 8);
    assert!(c.routes.iter().all(|r| r.vrf == "default"));
    let e = super::render_frr_plan_switch(&plan, "sw01").unwrap_err();
    assert!(e.to_string().contains("`sw01` is not a switch"), "{e}");
}

/// Fuzz seed 12 case 98623: a plan port numbered 4294967295 overflowed
/// SONiC's lane arithmetic (`Ethernet<4(p-1)>`) and panicked the render.
#[test]
fn the_largest_port_number_has_a_name_in_every_vendor() {
    for v in Vendor::ALL {
        let imp = v.implementation();
        for gbps in [100, 400] {
            let name = imp.default_port_name(gbps, u32::MAX);
            assert!(imp.accepts_interface(&name), "{v} {name}");
        }
    }
    let sonic = Vendor::Sonic.implementation();
    assert_eq!(
        sonic.default_port_name(400, u32::MAX),
        "Ethernet34359738352"
    );
}

/// The leaf01 file of the bundled breakout plan, for one vendor.
fn breakout_leaf(vendor: Vendor) -> Result<String> {
    let plan = crate::design::bundled("breakout-200g", Some(crate::plan::Topology::FatTree));
    render_switch(&plan, "leaf01", vendor)
}

#[test]
fn every_vendor_names_lanes_in_its_own_syntax() {
    let plan = crate::design::bundled("breakout-200g", Some(crate::plan::Topology::FatTree));
    let leaf = plan
        .switch_list
        .iter()
        .find(|s| s.name == "leaf01")
        .unwrap();
    // Cage 5 of 400G, 2 x 200G: ports 9 and 10.
    let names = |v: Vendor| [v.port_name(leaf, 9), v.port_name(leaf, 10)];
    assert_eq!(names(Vendor::Nvue), ["swp5s0", "swp5s1"]);
    assert_eq!(names(Vendor::Frr), ["swp5s0", "swp5s1"]);
    assert_eq!(names(Vendor::Eos), ["Ethernet5/1", "Ethernet5/5"]);
    assert_eq!(names(Vendor::Sonic), ["Ethernet32", "Ethernet36"]);
    for v in [Vendor::Nvue, Vendor::Frr, Vendor::Eos, Vendor::Sonic] {
        for p in &leaf.ports {
            assert!(
                v.accepts_interface(&v.port_name(leaf, p.port)),
                "{v:?} {}",
                p.port
            );
        }
    }
}

#[test]
fn breakout_commands_are_rendered_where_documented() {
    let nvue = breakout_leaf(Vendor::Nvue).unwrap();
    assert!(
        nvue.contains("nv set interface swp16 link breakout 2x\n"),
        "{nvue}"
    );
    assert!(
        nvue.contains("nv set interface swp16s1 bridge domain br_default access"),
        "{nvue}"
    );
    assert_eq!(nvue.matches("link breakout").count(), 16);
    let eos = breakout_leaf(Vendor::Eos).unwrap();
    assert!(eos.contains("interface Ethernet16/5\n"), "{eos}");
    assert_eq!(eos.matches("   speed 200g-4\n").count(), 32);
    let sonic: serde_json::Value =
        serde_json::from_str(&breakout_leaf(Vendor::Sonic).unwrap()).unwrap();
    assert_eq!(
        sonic["BREAKOUT_CFG"]["Ethernet120"]["brkout_mode"],
        "2x200G"
    );
    assert_eq!(sonic["BREAKOUT_CFG"].as_object().unwrap().len(), 16);
    assert_eq!(sonic["PORT"]["Ethernet124"]["speed"], "200000");
    let frr = breakout_leaf(Vendor::Frr).unwrap();
    assert!(frr.contains("interface swp1s1\n"), "{frr}");
    // Comware's breakout command for this speed is not documented here:
    // refused, naming the switch and the vendors that render it.
    let err = breakout_leaf(Vendor::Comware).unwrap_err().to_string();
    assert!(
        err.contains("switches leaf01, leaf02: the ports break out 2x200G"),
        "{err}"
    );
    assert!(
        err.contains("render breakouts for sonic, eos, nvue, frr"),
        "{err}"
    );
}
