//! Tests of the QoS intent: defaults, overrides, the checks and the address pools.

use super::*;

#[test]
fn defaults_per_topology() {
    let b = QosIntent::defaults(Topology::BiGraph, true);
    assert_eq!(b.lossless_priorities(), vec![3, 4]);
    assert_eq!(b.class_for(Some(Part::Upper)).unwrap().dscp, 26);
    assert_eq!(b.class_for(Some(Part::Lower)).unwrap().dscp, 34);
    assert!(b.problems(Topology::BiGraph).is_empty());
    let one = QosIntent::defaults(Topology::BiGraph, false);
    assert_eq!(one.class_for(Some(Part::Lower)).unwrap().priority, 3);
    assert!(!one.per_direction);
    let f = QosIntent::defaults(Topology::FatTree, true);
    assert!(!f.per_direction);
    assert_eq!(f.classes.len(), 1);
    assert!(f.problems(Topology::FatTree).is_empty());
    let map = b.dscp_map();
    assert_eq!(
        (map[26], map[34], map[48], map[0], map[27]),
        (3, 4, 6, 0, 0)
    );
}

#[test]
fn overrides_merge_and_report_lines() {
    let o = QosOverrides {
        line: Some(40),
        classes: vec![ClassOverride {
            name: "roce-lower".into(),
            part: None,
            dscp: Some(26),
            priority: None,
            lossless: None,
            line: Some(44),
        }],
        ..QosOverrides::default()
    };
    let problems = QosIntent::resolve(Topology::BiGraph, &o).unwrap_err();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].line, Some(44));
    assert!(problems[0].message.contains("DSCP 26"), "{:?}", problems[0]);

    let o = QosOverrides {
        classes: vec![ClassOverride {
            name: "storage".into(),
            part: Some(None),
            dscp: Some(10),
            priority: Some(1),
            lossless: Some(false),
            line: Some(50),
        }],
        cnp_priority: Some(5),
        ..QosOverrides::default()
    };
    let (q, notes) = QosIntent::resolve(Topology::BiGraph, &o).unwrap();
    assert!(notes.is_empty());
    assert_eq!(q.classes.len(), 3);
    assert_eq!(q.cnp.priority, 5);
    // The upper part still marks its own class, not the extra one.
    assert_eq!(q.class_for(Some(Part::Upper)).unwrap().name, "roce-upper");
}

#[test]
fn bad_values_are_problems() {
    let mut q = QosIntent::defaults(Topology::BiGraph, true);
    q.classes[0].priority = 6;
    q.ecn.min_kb = 2000;
    q.pfc_watchdog.polling_ms = 500;
    let p = q.problems(Topology::BiGraph);
    let text: Vec<String> = p.iter().map(|p| p.message.clone()).collect();
    assert_eq!(p.len(), 3, "{text:?}");
    assert!(text[0].contains("CNP"));
    assert!(text[1].contains("min_kb"));
    assert!(text[2].contains("polling_ms"));
    let mut f = QosIntent::defaults(Topology::BiGraph, true);
    f.classes.truncate(1);
    assert!(
        f.problems(Topology::BiGraph)[0]
            .message
            .contains("lower part have no class")
    );
}

/// Two servers of one sub-node and two switches split in halves: the
/// smallest BiGraph, with a `[qos]` and `[addressing]` table appended.
fn inventory(tables: &str) -> String {
    format!(
        r#"
[[server]]
name = "node{{n:02}}"
count = 4
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
name = "sw{{n}}"
count = 2
model = "S9850"
ports = 8
port_gbps = 100

[[switch.virtual]]
suffix = "u"
ports = "1-4"
vlan = 101

[[switch.virtual]]
suffix = "l"
ports = "5-8"
vlan = 102
{tables}"#
    )
}

pub(crate) fn parse(tables: &str) -> crate::Result<crate::inventory::Inventory> {
    crate::inventory::Inventory::from_toml(&inventory(tables), "inv.toml")
}

#[test]
fn qos_table_values_are_checked_with_lines() {
    let err = parse(
        r#"
[qos]
mtu = 100
gid_index = 300

[[qos.class]]
name = "roce-upper"
part = "middle"
dscp = 70

[[qos.class]]
name = "storage"
dscp = 10
priority = 6

[qos.cnp]
priority = 6

[qos.ecn]
min_kb = 2000
max_kb = 1000

[qos.pfc_watchdog]
polling_ms = 5

[[qos.switch]]
name = "sw9"
mtu = 9000

[addressing]
link_pool = "10.255.0.1/16"
vlan = 0
"#,
    )
    .unwrap_err()
    .to_string();
    // The tables start at line 37 of the inventory.
    for want in [
        "inv.toml:39: qos: mtu 100 is outside 1500..9216",
        "inv.toml:40: qos: gid_index 300 is outside 0..255",
        "inv.toml:44: qos class roce-upper: part `middle` is not known",
        "inv.toml:45: qos class roce-upper: dscp 70 is outside 0..63",
        "inv.toml:47: qos class storage: lossless priority 6 is also the CNP's strict-priority queue",
        "qos ecn: min_kb 2000 is not below max_kb 1000",
        "qos pfc_watchdog: polling_ms 5 is outside 10..60000",
        "inv.toml:63: qos switch sw9: switch sw9 is not in the inventory",
        "inv.toml:67: addressing: link_pool: `10.255.0.1/16` has host bits set",
        "inv.toml:68: addressing: vlan 0 is outside 1..4094",
    ] {
        assert!(err.contains(want), "missing `{want}` in:\n{err}");
    }
}

#[test]
fn design_resolves_the_table_for_its_topology() {
    use crate::design::{DesignOptions, design};
    let inv = parse("\n[qos]\nper_direction = false\n[addressing]\nvlan = 7\n").unwrap();
    let plan = design(&inv, &DesignOptions::default()).unwrap();
    let q = plan.qos.as_ref().unwrap();
    assert!(!q.per_direction);
    assert_eq!(q.classes.len(), 1);
    assert_eq!(plan.addressing.vlan, 7);

    // A class sharing the other default class's DSCP is found when the
    // defaults are known, with the class's line.
    let inv = parse("\n[[qos.class]]\nname = \"roce-lower\"\ndscp = 26\n").unwrap();
    let err = design(&inv, &DesignOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "inv.toml:38: qos class roce-lower: DSCP 26 is also the DSCP of class roce-upper"
        ),
        "{err}"
    );
    // The same class means nothing to a fat-tree, which says so.
    let opts = DesignOptions {
        topology: Topology::FatTree,
        grow_switch_pool: true,
        ..DesignOptions::default()
    };
    let plan = design(&inv, &opts).unwrap();
    assert_eq!(plan.qos.as_ref().unwrap().classes[0].dscp, 26);
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "[qos] class roce-lower (line 38) changes a default class of another design"
        )),
        "{:?}",
        plan.notes
    );
    // A class that is no design's default needs its DSCP and priority.
    let inv = parse("\n[[qos.class]]\nname = \"bulk\"\ndscp = 10\n").unwrap();
    let err = design(&inv, &DesignOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("inv.toml:38: qos class bulk: this design has no default class bulk"),
        "{err}"
    );
}

#[test]
fn prefixes() {
    let p = Ipv4Prefix::parse("10.0.0.0/8").unwrap();
    assert_eq!(p.size(), 1 << 24);
    assert!(p.contains(u32::from(Ipv4Addr::new(10, 255, 0, 1))));
    assert!(p.overlaps(&Ipv4Prefix::parse("10.255.0.0/16").unwrap()));
    assert!(
        Ipv4Prefix::parse("10.0.0.1/8")
            .unwrap_err()
            .contains("host bits")
    );
    assert!(Ipv4Prefix::parse("10.0.0.0").is_err());
    assert_eq!(
        Ipv4Prefix::containing(0x0a64_0101, 24).to_string(),
        "10.100.1.0/24"
    );
}

#[test]
fn issue13_default_link_pool_sized_for_the_plan() {
    let mut a = Addressing::default();
    assert_eq!(a.size_link_pool(32_768), None);
    assert_eq!(a.link_pool, "10.255.0.0/16");
    // The 131,072-sub-node BiGraph 256x512: 65,536 links.
    let note = a.size_link_pool(65_536).unwrap();
    assert_eq!(a.link_pool, "10.254.0.0/15");
    assert!(note.contains("65536 inter-switch links"), "{note}");
    // The widest covers every link the switch-port limit allows.
    let mut a = Addressing::default();
    a.size_link_pool(crate::limits::SWITCH_PORTS.max / 2);
    assert_eq!(a.link_pool, "10.192.0.0/10");
    let widest = Ipv4Prefix::parse(&a.link_pool).unwrap();
    assert!(widest.size() >= crate::limits::SWITCH_PORTS.max);
    // An inventory's own pool is kept.
    let mut a = Addressing {
        link_pool: "192.168.0.0/24".into(),
        ..Addressing::default()
    };
    assert_eq!(a.size_link_pool(1000), None);
    assert_eq!(a.link_pool, "192.168.0.0/24");
}
