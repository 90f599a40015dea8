use super::*;
use crate::inventory::Inventory;
use std::collections::BTreeMap;

fn eflops() -> Inventory {
    super::bundled_inventory("eflops-4x16")
}

#[test]
fn eflops_bigraph_is_4x16() {
    let plan = design(&eflops(), &DesignOptions::default()).unwrap();
    let b = plan.bigraph.as_ref().unwrap();
    assert_eq!((b.m, b.n, b.regular), (4, 16, true));
    assert_eq!(plan.links, 64);
    assert_eq!(plan.switches, 16);
    assert_eq!(plan.physical_switches, 8);
}

#[test]
fn eflops_fat_tree_uses_six_switches() {
    let plan = design(
        &eflops(),
        &DesignOptions {
            topology: crate::plan::Topology::FatTree,
            ..DesignOptions::default()
        },
    )
    .unwrap();
    let f = plan.fat_tree.as_ref().unwrap();
    assert_eq!(
        (
            f.tiers,
            f.sub_nodes_per_leaf,
            f.uplinks_per_leaf,
            f.links_per_leaf_spine
        ),
        (2, 16, 16, 8)
    );
    assert_eq!(plan.switches, 6);
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("spare switches (not needed): sw07, sw08"))
    );
}

/// Runs a design and checks it with the validator; infeasible designs are
/// fine, panics and invalid plans are not.
fn design_checks(
    inv: &crate::inventory::Inventory,
    opts: &DesignOptions,
) -> Option<crate::plan::Plan> {
    match design(inv, opts) {
        Ok(plan) => {
            let v = crate::validate::validate_plan(&plan);
            assert!(v.ok, "{}: {:#?}", plan.describe(), v.findings);
            // Deterministic and round-trips through JSON.
            let json = plan.to_json().unwrap();
            assert_eq!(json, design(inv, opts).unwrap().to_json().unwrap());
            let back = crate::plan::Plan::from_json(&json, "p.json").unwrap();
            assert_eq!(&back, plan.plan());
            // What design returns as checked passes the load's check.
            let loaded = crate::checked::CheckedPlan::load(&json, "p.json").unwrap();
            assert_eq!(loaded.plan(), plan.plan());
            Some(plan.into_plan())
        }
        Err(e) => {
            assert!(e.is_bad_input(), "{e}");
            None
        }
    }
}

#[test]
fn rail_optimized_puts_nic_i_on_rail_i() {
    // The EFLOPS inventory gives each server one /24 for its four NICs,
    // which four rail switches cannot share: refused, naming the NICs.
    let e = design(
        &eflops(),
        &DesignOptions {
            topology: crate::plan::Topology::RailOptimized,
            ..DesignOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("node01/sn1"), "{e}");
    // 16 servers of 4 NICs on 32-port switches: 16 down and 16 up per rail
    // switch, so one group of 16 servers with 4 rail switches, 2 spines.
    let (inv, opts) = crate::design::shorthand::rail_optimized(
        "sub-nodes=64,rails=4,ports=32",
        &crate::design::shorthand::Shorthand::default(),
    )
    .unwrap();
    let plan = design(&inv, &opts).unwrap();
    let r = plan.rail.as_ref().unwrap();
    assert_eq!((r.rails, r.groups, r.servers_per_group), (4, 1, 16));
    let f = plan.fat_tree.as_ref().unwrap();
    assert_eq!((f.sub_nodes_per_leaf, f.uplinks_per_leaf), (16, 16));
    assert_eq!(plan.describe(), "rail-optimized 4 rails x 1 groups 1:1");
    for sn in &plan.sub_node_list {
        let sw = plan
            .switch_list
            .iter()
            .find(|s| s.name == sn.switch)
            .unwrap();
        assert_eq!(sw.rail, Some(sn.index), "{}", sn.id);
    }
    assert!(crate::validate::validate_plan(&plan).ok);
    // A hand edit that moves a NIC to another rail is found.
    let mut moved = plan.plan().clone();
    let other = moved
        .switch_list
        .iter()
        .find(|s| s.rail == Some(1))
        .unwrap()
        .name
        .clone();
    moved.sub_node_list[0].switch = other;
    let v = crate::validate::validate_plan(&moved);
    assert!(
        v.findings
            .iter()
            .any(|f| f.message.contains("the switch of rail 1")),
        "{:#?}",
        v.findings
    );
}

#[test]
fn infeasible_bigraph_says_what_is_missing() {
    // 64 sub-nodes on three split switches: 6 virtual switches of 16 ports.
    let text = super::bundled_text("eflops-4x16").replace(
        "count = 8\nmodel = \"H3C S9850-4C\"",
        "count = 3\nmodel = \"H3C S9850-4C\"",
    );
    let inv = Inventory::from_toml(&text, "small.toml").unwrap();
    let e = design(&inv, &DesignOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least N=12 BiGraph switches with M=6"), "{e}");
    assert!(e.contains("the inventory has 6"), "{e}");
    assert!(e.contains("add at least 6 virtual switches"), "{e}");
    // Forcing M beyond N/2.
    let e = design(
        &eflops(),
        &DesignOptions {
            m: Some(32),
            ..DesignOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("32 sub-nodes per switch need at least 64 switches"),
        "{e}"
    );
}

mod properties {
    use super::*;
    use crate::design::shorthand::{self, Shorthand};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn bigraph_shorthands_are_valid(half in 1usize..=16, m in 1usize..=16, ports in prop::option::of(8u32..=64)) {
            let n = 2 * half;
            prop_assume!(m <= half);
            let s = Shorthand { switch_ports: ports, ..Shorthand::default() };
            let Ok((inv, opts)) = shorthand::bigraph(m, n, &s) else {
                // Only too few ports is refused.
                prop_assert!(ports.is_some_and(|p| (p as usize) < half + m));
                return Ok(());
            };
            let plan = design_checks(&inv, &opts).expect("a valid shorthand designs");
            let b = plan.bigraph.clone().unwrap();
            prop_assert_eq!((b.m, b.n, b.regular), (m, n, true));
            prop_assert_eq!(plan.links, half * half);
            prop_assert_eq!(plan.sub_nodes, m * n);
        }

        #[test]
        fn fat_tree_shorthands_are_valid_or_refused(
            p in 1usize..=700,
            ports in prop::sample::select(vec![8u32, 12, 16, 32, 64]),
            oversub in prop::sample::select(vec![1.0f64, 2.0, 3.0]),
            tiers in 2u8..=3,
        ) {
            let spec = format!("tiers={tiers},sub-nodes={p},ports={ports},oversub={oversub}");
            let s = Shorthand { sub_nodes_per_server: Some(1), ..Shorthand::default() };
            let (inv, opts) = shorthand::fat_tree(&spec, &s).unwrap();
            if let Some(plan) = design_checks(&inv, &opts) {
                prop_assert_eq!(plan.sub_nodes, p);
                let f = plan.fat_tree.clone().unwrap();
                prop_assert_eq!(f.tiers, tiers);
            }
        }

        #[test]
        fn rail_shorthands_are_valid_or_refused(
            servers in 1usize..=96,
            rails in 1usize..=8,
            ports in prop::sample::select(vec![8u32, 16, 32, 64]),
            oversub in prop::sample::select(vec![1.0f64, 2.0, 3.0]),
        ) {
            let spec = format!("sub-nodes={},rails={rails},ports={ports},oversub={oversub}", servers * rails);
            let (inv, opts) = shorthand::rail_optimized(&spec, &Shorthand::default()).unwrap();
            if let Some(plan) = design_checks(&inv, &opts) {
                prop_assert_eq!(plan.sub_nodes, servers * rails);
                let r = plan.rail.clone().unwrap();
                prop_assert_eq!(r.rails, rails);
                // NIC i on rail switch i of the server's group.
                let index = plan.switch_index();
                for sn in &plan.sub_node_list {
                    let sw = &plan.switch_list[index[sn.switch.as_str()]];
                    prop_assert_eq!(sw.rail, Some(sn.index));
                }
            }
        }

        #[test]
        fn inventories_of_any_size_design_or_refuse(
            servers in 1u64..=40,
            per_server in 1usize..=8,
            switches in 1u64..=24,
            ports in prop::sample::select(vec![8u32, 16, 32, 48]),
            split in any::<bool>(),
            topology in prop::sample::select(vec![
                crate::plan::Topology::BiGraph,
                crate::plan::Topology::FatTree,
                crate::plan::Topology::RailOptimized,
            ]),
        ) {
            let mut text = format!("[[server]]\nname = \"s{{n}}\"\ncount = {servers}\nsockets = [\"c0\"]\n[[server.pcie_switch]]\nname = \"p0\"\nsocket = \"c0\"\n");
            for i in 0..per_server {
                text += &format!("[[server.gpu]]\nname = \"g{i}\"\npcie_switch = \"p0\"\nmodel = \"G\"\n[[server.nic]]\nname = \"n{i}\"\npcie_switch = \"p0\"\nmodel = \"N\"\nspeed_gbps = 100\n");
            }
            text += &format!("[[switch]]\nname = \"w{{n}}\"\ncount = {switches}\nmodel = \"S\"\nports = {ports}\nport_gbps = 100\n");
            if split {
                let h = ports / 2;
                text += &format!("[[switch.virtual]]\nsuffix = \"a\"\nports = \"1-{h}\"\nvlan = 10\n[[switch.virtual]]\nsuffix = \"b\"\nports = \"{}-{ports}\"\nvlan = 20\n", h + 1);
            }
            let inv = Inventory::from_toml(&text, "gen.toml").unwrap();
            design_checks(&inv, &DesignOptions { topology, ..DesignOptions::default() });
        }
    }
}

#[test]
fn an_inventory_is_not_read_as_a_plan() {
    let text = super::bundled_text("eflops-4x16");
    for name in ["inv.toml", "inv.json"] {
        match crate::plan::Plan::parse(&text, name) {
            Err(crate::Error::NotAPlan { file }) => assert_eq!(file, name),
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// The 131,072-sub-node BiGraph has 65,536 links, twice the default link
/// pool: design widens the pool, so the plan passes the load check
/// (render's address plan included) and renders.
#[test]
fn issue13_bigraph_256x512_renders() {
    use crate::design::shorthand::{self, Shorthand};
    let (inv, opts) = shorthand::bigraph(256, 512, &Shorthand::default()).unwrap();
    let plan = design(&inv, &opts).unwrap();
    assert_eq!(plan.links, 65_536);
    assert_eq!(plan.addressing.link_pool, "10.254.0.0/15");
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("link_pool 10.254.0.0/15")),
        "{:?}",
        plan.notes
    );
    let files = crate::render::render(&plan, crate::render::Vendor::Sonic).unwrap();
    assert_eq!(files.len(), 512);
}

/// `design --n 12` on the EFLOPS inventory puts servers' NICs on two
/// switches, but the inventory gives each server one /24: such a plan
/// cannot be rendered, so design refuses it, naming the inventory.
#[test]
fn issue13_eflops_forced_n_12_is_refused() {
    let err = design(
        &eflops(),
        &DesignOptions {
            n: Some(12),
            ..DesignOptions::default()
        },
    )
    .unwrap_err();
    assert!(err.is_bad_input());
    let text = err.to_string();
    assert!(text.starts_with("eflops-4x16.toml: "), "{text}");
    let all = format!("{err:#}");
    assert!(
        all.contains("sub-node node02/sn2: its subnet 10.100.2.0/24 is also on sw01-u"),
        "{all}"
    );
}

/// HPN: every NIC's port 0 on its rail's plane-A ToR and port 1 on the
/// plane-B ToR of the same rail and segment; the planes share no switch;
/// the plan validates, and a hand edit that puts both ports in one plane
/// is found.
#[test]
fn hpn_cables_each_nic_to_the_tors_of_both_planes() {
    let (inv, opts) = crate::design::shorthand::hpn(
        "sub-nodes=128,rails=4,ports=16",
        &crate::design::shorthand::Shorthand::default(),
    )
    .unwrap();
    let plan = design(&inv, &opts).unwrap();
    assert_eq!(plan.describe(), "HPN 2 planes x 4 segments x 4 rails 1:1");
    let h = plan.hpn.as_ref().unwrap();
    assert_eq!((h.segments, h.servers_per_segment), (4, 8));
    // 2 planes x (16 ToRs + 8 aggregation switches).
    assert_eq!(plan.switch_list.len(), 48);
    // Every NIC port has a cable: 128 x 2, plus 16 x 8 uplinks per plane.
    assert_eq!(plan.cables.len(), 256 + 2 * 128);
    let index = plan.switch_index();
    for sn in &plan.sub_node_list {
        let p1 = sn.port1.as_ref().unwrap();
        let (a, b) = (
            &plan.switch_list[index[sn.switch.as_str()]],
            &plan.switch_list[index[p1.switch.as_str()]],
        );
        assert_eq!((a.plane, b.plane), (Some(0), Some(1)), "{}", sn.id);
        assert_eq!((a.rail, b.rail), (Some(sn.index), Some(sn.index)));
        assert_eq!(a.pod, b.pod);
    }
    assert!(crate::validate::validate_plan(&plan).ok);
    // The plan round-trips through JSON byte for byte.
    let json = plan.to_json().unwrap();
    let back = crate::plan::Plan::from_json(&json, "hpn.json").unwrap();
    assert_eq!(back.to_json().unwrap(), json);
    // Port 1 moved to a plane-A ToR: refused.
    let mut moved = plan.plan().clone();
    let other = moved
        .switch_list
        .iter()
        .position(|s| s.plane == Some(0) && s.rail == Some(0) && s.pod == Some(1))
        .unwrap();
    let p1 = moved.sub_node_list[0].port1.clone().unwrap();
    let name = moved.switch_list[other].name.clone();
    moved.sub_node_list[0].port1 = Some(crate::plan::PlanAttachment { switch: name, ..p1 });
    let v = crate::validate::validate_plan(&moved);
    assert!(!v.ok);
    assert!(
        v.findings
            .iter()
            .any(|f| f.message.contains("nic0:p1") || f.message.contains("port 1 to plane 1")),
        "{:#?}",
        v.findings
    );
    // The plane check alone: port 0 and port 1 in the same plane.
    let mut same = plan.plan().clone();
    let b = same
        .switch_list
        .iter()
        .position(|s| s.name == p1_switch(&plan))
        .unwrap();
    same.switch_list[b].plane = Some(0);
    let v = crate::validate::validate_plan(&same);
    assert!(
        v.findings
            .iter()
            .any(|f| f.message.contains("port 1 to plane 1")),
        "{:#?}",
        v.findings
    );
}

/// The switch of sub-node 0's NIC port 1.
fn p1_switch(plan: &crate::checked::CheckedPlan) -> String {
    plan.sub_node_list[0]
        .port1
        .as_ref()
        .unwrap()
        .switch
        .to_string()
}

/// HPN needs dual-port NICs: a single-port inventory is refused, naming
/// the NIC and the key to set.
#[test]
fn hpn_refuses_single_port_nics() {
    let (inv, mut opts) = crate::design::shorthand::rail_optimized(
        "sub-nodes=64,rails=8,ports=16",
        &crate::design::shorthand::Shorthand::default(),
    )
    .unwrap();
    opts.topology = crate::plan::Topology::Hpn;
    let e = design(&inv, &opts).unwrap_err().to_string();
    // A shorthand has no file to edit: the fix is the HPN shorthand.
    for want in ["nic0", "node1", "has 1 port", "HPN shorthand"] {
        assert!(e.contains(want), "missing `{want}` in {e}");
    }
    // An inventory file: the key to set, on its line.
    let file = crate::design::bundled_inventory("eflops-4x16");
    let e = design(&file, &opts).unwrap_err().to_string();
    for want in ["has 1 port", "ports = 2", "(line", "per port"] {
        assert!(e.contains(want), "missing `{want}` in {e}");
    }
}

/// An HPN fabric whose servers fit one ToR per plane (one rail, one
/// segment) has no aggregation tier: it validates (the planes share no
/// switch, so two leaves without spines are not a cut fabric), and a flow
/// crosses one switch.
#[test]
fn hpn_with_one_tor_per_plane_needs_no_spines() {
    let (inv, opts) = crate::design::shorthand::hpn(
        "sub-nodes=16,rails=1,ports=32",
        &crate::design::shorthand::Shorthand::default(),
    )
    .unwrap();
    let plan = design(&inv, &opts).unwrap();
    assert_eq!(plan.switch_list.len(), 2);
    assert!(crate::validate::validate_plan(&plan).ok);
    assert_eq!(crate::metrics::max_switch_hops(&plan), 1);
    // The same cut in a single plane is still found: two leaves of one
    // plane and no spine.
    let mut cut = plan.plan().clone();
    cut.switch_list[1].plane = Some(0);
    let v = crate::validate::validate_plan(&cut);
    assert!(
        v.findings
            .iter()
            .any(|f| f.object == "fat_tree.links_per_leaf_spine"),
        "{:#?}",
        v.findings
    );
}

/// The racked 1,024-GPU inventory designed as `topology`, with the
/// inventory text changed by `edit` first.
fn racked(topology: crate::plan::Topology, edit: impl Fn(String) -> String) -> CheckedPlan {
    let text = edit(super::bundled_text("h100-1024-racked"));
    let inv = Inventory::from_toml(&text, "h100-1024-racked.toml").unwrap();
    design(
        &inv,
        &DesignOptions {
            topology,
            ..DesignOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn leaves_stand_in_their_servers_rack_and_spines_in_a_network_rack() {
    let plan = racked(crate::plan::Topology::FatTree, |t| t);
    let rack_of = |name: &str| -> Option<String> {
        (plan
            .servers
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.rack.as_deref().map(str::to_string)))
        .or_else(|| {
            plan.switch_list
                .iter()
                .find(|s| s.physical == name)
                .and_then(|s| s.rack.as_deref().map(str::to_string))
        })
    };
    for s in &plan.switch_list {
        let rack = s.rack.as_deref().expect("every switch placed");
        if s.name.starts_with("spine") {
            // The servers fill two rows: the spines' network rack has none.
            assert_eq!(rack, "network", "{}", s.name);
        } else {
            let servers: BTreeSet<Option<String>> = (s.ports.iter())
                .filter(|p| p.role == crate::plan::PortRole::SubNode)
                .map(|p| rack_of(p.peer.as_deref().unwrap()))
                .collect();
            assert_eq!(
                servers,
                BTreeSet::from([Some(rack.to_string())]),
                "{}",
                s.name
            );
        }
    }
    // One media rule: a server cable to its rack's leaf is a DAC, every
    // leaf-spine cable optical, and nothing was assumed.
    for c in &plan.cables {
        let same = rack_of(&c.a) == rack_of(&c.b);
        assert_eq!(c.media == Media::Dac, same, "{c:?}");
    }
    assert!(plan.cables.iter().any(|c| c.media == Media::Dac));
    assert!(
        !plan.notes.iter().any(|n| n.contains("assumed")),
        "{:?}",
        plan.notes
    );
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "32 switches in their servers' rack, 16 switches in the design's network rack network"
        )),
        "{:?}",
        plan.notes
    );
    // The plan lists the 32 racks with their row and limit, then the
    // design's network rack.
    assert_eq!(plan.racks.len(), 33);
    assert_eq!(plan.racks[0].max_kw, Some(40.0));
    assert_eq!(plan.racks[16].row.as_deref(), Some("b"));
    assert!(plan.racks[32].network && plan.racks[32].name == "network");
}

#[test]
fn rail_switches_stand_in_their_rows_network_rack_with_optical_server_cables() {
    let plan = racked(crate::plan::Topology::RailOptimized, |t| t);
    let mut by_rack: BTreeMap<String, usize> = BTreeMap::new();
    for s in &plan.switch_list {
        *by_rack
            .entry(s.rack.as_deref().unwrap().to_string())
            .or_default() += 1;
    }
    // 4 groups of 32 servers (8 racks each): two groups in row a, two in
    // row b; the spines serve both rows.
    assert_eq!(
        by_rack,
        BTreeMap::from([
            ("network".to_string(), 16),
            ("network-a".to_string(), 16),
            ("network-b".to_string(), 16)
        ])
    );
    assert!(plan.cables.iter().all(|c| c.media == Media::Optical));
}

#[test]
fn a_declared_network_rack_is_used_with_its_limit() {
    // The operator declares the network rack (with its own limit).
    let plan = racked(crate::plan::Topology::FatTree, |t| {
        t.replace(
            "[[rack]]\nname = \"r{n:02}\"\ncount = 16\nrow = \"a\"",
            "[[rack]]\nname = \"network\"\nmax_kw = 20\n\n[[rack]]\nname = \"r{n:02}\"\ncount = 16\nrow = \"a\"",
        )
    });
    let network = plan.racks.iter().find(|r| r.name == "network").unwrap();
    assert!(!network.network);
    assert_eq!(network.max_kw, Some(20.0));
    assert_eq!(plan.racks.len(), 33);
}

#[test]
fn cable_rows_name_their_racks_and_run() {
    let count = |plan: &CheckedPlan| {
        let mut runs: BTreeMap<&'static str, usize> = BTreeMap::new();
        for r in plan.cable_rows() {
            *runs.entry(r.run.as_str()).or_default() += 1;
        }
        runs
    };
    // Leaf-spine: server cables within the rack; leaf to spine between a
    // server rack of row a or b and the network rack of no row.
    let plan = racked(crate::plan::Topology::FatTree, |t| t);
    assert_eq!(
        count(&plan),
        BTreeMap::from([("between_racks", 1024), ("in_rack", 1024)])
    );
    let first = &plan.cable_rows()[0];
    assert_eq!(
        (first.label.as_str(), first.rack, first.peer_rack),
        ("C0001", Some("r01"), Some("network"))
    );
    // Rail-optimized: a rail switch stands in its row's network rack.
    let plan = racked(crate::plan::Topology::RailOptimized, |t| t);
    assert_eq!(
        count(&plan),
        BTreeMap::from([("between_racks", 1024), ("same_row", 1024)])
    );
}

/// The bundled breakout inventory (200G NICs, 400G leaves broken out
/// 2x200G, whole spines) designed as a 2-tier leaf-spine.
fn breakout_plan() -> CheckedPlan {
    bundled("breakout-200g", Some(crate::plan::Topology::FatTree))
}

#[test]
fn breakout_designs_count_lanes_not_cages() {
    let plan = breakout_plan();
    let leaf = plan
        .switch_list
        .iter()
        .find(|s| s.name == "leaf01")
        .unwrap();
    // 16 cages of 400G broken out 2x200G: 32 ports of 200G, 16 to NICs
    // and 16 up, non-blocking.
    assert_eq!((leaf.ports.len(), leaf.port_gbps), (32, 200));
    assert_eq!(leaf.count(crate::plan::PortRole::SubNode), 16);
    assert_eq!(leaf.count(crate::plan::PortRole::InterSwitch), 16);
    let p = &leaf.ports[2];
    assert_eq!((p.port, p.cage, p.lane), (3, Some(2), Some(0)));
    assert_eq!(leaf.port_name(4), "2s1");
    // Spines stay whole: no cage or lane.
    let spine = plan
        .switch_list
        .iter()
        .find(|s| s.name == "spine01")
        .unwrap();
    assert!(spine.breakout.is_none());
    assert!(
        spine
            .ports
            .iter()
            .all(|p| p.cage.is_none() && p.lane.is_none())
    );
    // No "those links run at" warning: the NICs fill their lanes.
    assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
    assert!(crate::validate::validate_plan(&plan).findings.is_empty());
}

#[test]
fn breakout_cables_are_listed_once_with_their_lanes() {
    let plan = breakout_plan();
    let cables = plan.physical_cables();
    // 32 cages in use on the two leaves, each one breakout cable of two
    // legs, for 64 links.
    assert_eq!(plan.cables.len(), 64);
    assert_eq!(cables.len(), 32);
    assert!(
        cables
            .iter()
            .all(|c| c.legs.len() == 2 && c.breakout.is_some())
    );
    let rows = plan.cable_rows();
    let b = rows[0].breakout.as_ref().unwrap();
    assert_eq!(
        (b.switch, b.cage, b.breakout.as_str(), b.gbps),
        ("leaf01", 1, "2x200G", 400)
    );
    let lanes: Vec<&str> = b.legs.iter().map(|l| l.port_name.as_str()).collect();
    assert_eq!(lanes, ["1s0", "1s1"]);
    // The CSV keeps a row per link; the legs of a cable share its label.
    let csv = plan.cables_csv();
    let labels: Vec<&str> = (csv.lines().skip(1))
        .map(|l| l.split(',').nth(8).unwrap())
        .collect();
    assert_eq!(&labels[..4], ["C0001", "C0001", "C0002", "C0002"]);
}

#[test]
fn a_mismatched_nic_names_the_breakout_that_fits() {
    let text = bundled_text("breakout-200g").replace("breakout = \"2x200G\"\n", "");
    let inv = Inventory::from_toml(&text, "b.toml").unwrap();
    let opts = DesignOptions {
        topology: crate::plan::Topology::FatTree,
        grow_switch_pool: true,
        ..DesignOptions::default()
    };
    let plan = design(&inv, &opts).unwrap();
    assert!(
        plan.warnings.iter().any(|w| w
            .contains("200 Gbps NICs are cabled to 400 Gbps switch ports")
            && w.contains("`breakout = \"2x200G\"`")),
        "{:?}",
        plan.warnings
    );
}

#[test]
fn lanes_into_lanes_of_another_broken_out_switch_need_a_straight_cable() {
    let opts = DesignOptions {
        topology: crate::plan::Topology::FatTree,
        ..DesignOptions::default()
    };
    let spines = |with: &str| {
        let text = bundled_text("breakout-200g").replace("port_gbps = 400\nrole = \"spine\"", with);
        Inventory::from_toml(&text, "b.toml").unwrap()
    };
    // Spines broken out alike: the leaf's lanes meet one spine cage lane
    // to lane, a straight cable, which passes.
    let inv = spines("port_gbps = 400\nbreakout = \"2x200G\"\nrole = \"spine\"");
    let plan = design(&inv, &opts).unwrap();
    assert!(crate::validate::breakouts(&plan).is_empty());
    // 800G spines broken out 4x200G: two leaf lanes of a cage land on a
    // 4-lane cage, which no straight cable carries: refused, naming the
    // cable and what to do.
    let inv = spines("port_gbps = 800\nbreakout = \"4x200G\"\nrole = \"spine\"");
    let err = design(&inv, &opts).unwrap_err().to_string();
    assert!(err.contains("cable leaf01 1s0 to spine01 1s0"), "{err}");
    assert!(err.contains("another broken-out switch"), "{err}");
    assert!(
        err.contains("break out only the switches that face the NICs"),
        "{err}"
    );
}

proptest::proptest! {
    /// Whatever the lanes and the design, every lane carries at most one
    /// link, and every cage of a switch is whole or broken out, never
    /// both; the breakout cables cover every link exactly once.
    #[test]
    fn every_lane_is_used_once_and_every_cage_is_whole_or_broken_out(
        lanes in proptest::sample::select(vec![2u32, 4]),
        servers in 2usize..9,
        topology in proptest::sample::select(vec![
            crate::plan::Topology::FatTree,
            crate::plan::Topology::RailOptimized,
        ]),
    ) {
        let text = bundled_text("breakout-200g")
            .replace("count = 8\nmodel = \"4-GPU server\"", &format!("count = {servers}\nmodel = \"4-GPU server\""))
            .replace("speed_gbps = 200", &format!("speed_gbps = {}", 400 / lanes))
            .replace("breakout = \"2x200G\"", &format!("breakout = \"{lanes}x{}G\"", 400 / lanes));
        let inv = Inventory::from_toml(&text, "b.toml").unwrap();
        let opts = DesignOptions { topology, grow_switch_pool: true, ..DesignOptions::default() };
        let Ok(plan) = design(&inv, &opts) else { return Ok(()) };
        let mut used = std::collections::HashSet::new();
        for c in &plan.cables {
            proptest::prop_assert!(used.insert((c.a.clone(), c.a_port)), "lane {} {} twice", c.a, c.a_port);
            if c.kind == crate::plan::CableKind::InterSwitch {
                proptest::prop_assert!(used.insert((c.b.clone(), c.b_port.parse().unwrap())));
            }
        }
        for s in &plan.switch_list {
            for p in &s.ports {
                match s.breakout {
                    Some(b) => proptest::prop_assert_eq!((p.cage, p.lane), (Some(b.cage_lane(p.port).0), Some(b.cage_lane(p.port).1))),
                    None => proptest::prop_assert!(p.cage.is_none() && p.lane.is_none()),
                }
            }
        }
        proptest::prop_assert!(crate::validate::breakouts(&plan).is_empty());
        let mut legs: Vec<usize> = plan.physical_cables().into_iter().flat_map(|c| c.legs).collect();
        legs.sort_unstable();
        proptest::prop_assert_eq!(legs, (0..plan.cables.len()).collect::<Vec<_>>());
    }
}

/// The racked 1,024-GPU inventory: its 8 U servers at U1, U9, U17 and U25
/// of every rack (given), and the fill rule for the switches: a leaf at
/// the top of its servers' rack, the network rack filled from U42 down.
#[test]
fn servers_and_switches_get_rack_positions() {
    let plan = racked(crate::plan::Topology::FatTree, |t| t);
    let servers: Vec<(Option<&str>, Option<u32>, Option<u32>)> = (plan.servers.iter().take(5))
        .map(|s| (s.rack.as_deref(), s.position, s.u_height))
        .collect();
    assert_eq!(
        servers,
        [
            (Some("r01"), Some(1), Some(8)),
            (Some("r01"), Some(9), Some(8)),
            (Some("r01"), Some(17), Some(8)),
            (Some("r01"), Some(25), Some(8)),
            (Some("r02"), Some(1), Some(8)),
        ]
    );
    let in_rack = |rack: &str| -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = (plan.switch_list.iter())
            .filter(|s| s.rack.as_deref() == Some(rack))
            .map(|s| (s.physical.to_string(), s.position.unwrap()))
            .collect();
        v.dedup();
        v
    };
    // One leaf per rack, at the top; the 16 spines from U42 down.
    let r01 = in_rack("r01");
    assert_eq!(r01.len(), 1);
    assert_eq!(r01[0].1, 42);
    let mut spines: Vec<u32> = in_rack("network").iter().map(|s| s.1).collect();
    spines.sort_unstable();
    assert_eq!(spines, (27..=42).collect::<Vec<u32>>());
    assert!(plan.switch_list.iter().all(|s| s.u_height == Some(1)));
    // The cable list carries both ends' positions.
    let csv = plan.cables_csv();
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",position,peer_position"), "{header}");
    assert!(
        csv.lines().any(|l| l.ends_with(",42,1")),
        "a leaf at U42 cabled to a server at U1"
    );
    assert!(crate::validate::validate_plan(&plan).ok);
}

/// Plans without racks carry no positions, and their cable list keeps its
/// columns.
#[test]
fn unracked_plans_have_no_positions() {
    let plan = design(&eflops(), &DesignOptions::default()).unwrap();
    assert!(
        plan.servers
            .iter()
            .all(|s| s.position.is_none() && s.u_height.is_none())
    );
    assert!(plan.switch_list.iter().all(|s| s.position.is_none()));
    assert!(plan.cables_csv().lines().next().unwrap().ends_with(",run"));
}

/// A rack too small, a given position above the top and two devices in
/// one unit are refused, naming the file, line, rack and devices.
#[test]
fn rack_overflow_and_overlap_are_refused() {
    let refused = |edit: &dyn Fn(String) -> String, want: &[&str]| {
        let text = edit(super::bundled_text("h100-1024-racked"));
        let inv = Inventory::from_toml(&text, "h100-1024-racked.toml").unwrap();
        let opts = DesignOptions {
            topology: crate::plan::Topology::FatTree,
            ..DesignOptions::default()
        };
        let err = design(&inv, &opts).unwrap_err().to_string();
        for w in want {
            assert!(err.contains(w), "missing `{w}` in:\n{err}");
        }
    };
    // 4 x 8 U servers and a leaf do not fit 32 U.
    refused(
        &|t| {
            t.replacen(
                "row = \"a\"\nmax_kw = 40",
                "row = \"a\"\nmax_kw = 40\nu_height = 32",
                1,
            )
        },
        &[
            "h100-1024-racked.toml",
            "rack r01",
            "does not fit: the rack is 32 U high, 32 U taken by 4 servers and 0 switches",
            "give rack r01 a larger u_height",
        ],
    );
    // Servers given U40 reach U47.
    refused(
        &|t| t.replacen("position = 1", "position = 40", 1),
        &[
            "h100-1024-racked.toml:",
            "server h001",
            "at U40 with 8 U it reaches U47, above the top of rack r01 (42 U)",
            "U35 or lower",
        ],
    );
    // A leaf given U25 overlaps the fourth server.
    refused(
        &|t| {
            t.replacen(
                "port_gbps = 400",
                "port_gbps = 400\nrack = \"r{n:02}\"\nposition = 30",
                1,
            )
        },
        &[
            "switch",
            "at U30-U30 of rack r01 it overlaps server h004 at U25-U32",
        ],
    );
}

/// Hand edits that put two devices in one unit, or above the rack, are
/// `position` findings of `validate`.
#[test]
fn validate_finds_overlapping_positions() {
    let mut plan = racked(crate::plan::Topology::FatTree, |t| t).into_plan();
    plan.servers[1].position = Some(5);
    plan.servers[2].position = Some(40);
    let v = crate::validate::validate_plan(&plan);
    let found: Vec<String> = (v.findings.iter())
        .filter(|f| f.kind == "position")
        .map(|f| format!("{}: {}", f.object, f.message))
        .collect();
    assert_eq!(
        found,
        [
            "server h002: at U5-U12 of rack r01 it overlaps server h001 at U1-U8",
            "server h003: at U40 with 8 U it reaches U47, above the top of rack r01 (42 U)",
        ]
    );
}

mod positions_proptest {
    use super::super::racks::{Device, elevate};
    use crate::plan::PlanRack;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the heights and given positions, a fill that succeeds
        /// puts every device inside its rack with no two sharing a unit,
        /// keeps given positions, and a refusal names a rack or device.
        #[test]
        fn fills_never_overlap(
            rack_u in 4u32..48,
            devs in proptest::collection::vec((0usize..3, 1u32..9, proptest::option::of(1u32..48), any::<bool>()), 1..24),
        ) {
            let racks: Vec<PlanRack> = (0..3).map(|i| PlanRack {
                name: format!("r{i}"), site: None, row: None, max_kw: None,
                u_height: Some(rack_u), network: false,
            }).collect();
            let devices: Vec<Device> = devs.iter().enumerate().map(|(i, &(r, h, given, server))| Device {
                kind: if server { "server" } else { "switch" },
                name: format!("d{i}"),
                rack: format!("r{r}"),
                u_height: h,
                given,
                line: None,
            }).collect();
            match elevate(&devices, &racks) {
                Ok(at) => {
                    let mut used = std::collections::HashSet::new();
                    for (d, &p) in devices.iter().zip(&at) {
                        prop_assert!(p >= 1 && p + d.u_height - 1 <= rack_u);
                        if let Some(g) = d.given { prop_assert_eq!(g, p); }
                        for u in p..p + d.u_height {
                            prop_assert!(used.insert((d.rack.clone(), u)), "unit {} of {} twice", u, d.rack);
                        }
                    }
                }
                Err(problems) => {
                    prop_assert!(!problems.is_empty());
                    for p in problems {
                        prop_assert!(p.object.starts_with("rack r") || p.object.starts_with("server d") || p.object.starts_with("switch d"));
                    }
                }
            }
        }
    }
}

/// A network rack the design makes holds 42 U: sixteen 3 U spines fill
/// `network` with 14 and put 2 in `network-2`.
#[test]
fn a_full_network_rack_continues_in_the_next() {
    let plan = racked(crate::plan::Topology::FatTree, |t| {
        t.replace("role = \"spine\"", "role = \"spine\"\nu_height = 3")
    });
    let mut by_rack: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for s in plan
        .switch_list
        .iter()
        .filter(|s| seen.insert(s.physical.clone()))
    {
        if s.u_height == Some(3) {
            by_rack
                .entry(s.rack.as_deref().unwrap().to_string())
                .or_default()
                .push(s.position.unwrap());
        }
    }
    assert_eq!(by_rack["network"].len(), 14);
    assert_eq!(by_rack["network-2"], [40, 37]);
    assert!(
        plan.racks
            .iter()
            .any(|r| r.name == "network-2" && r.network)
    );
}
