use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::parse::{ParsedConfig, parse};
use super::*;
use crate::design::{DesignOptions, bundled_inventory, bundled_text, design};
use crate::inventory::Inventory;
use crate::plan::{Plan, PortRole, Topology};
use crate::qos::{Ipv4Prefix, QosOverrides};

/// The plan of `examples/data/eflops-4x16.plan.json` (the CLI tests keep
/// that file equal to this design).
fn eflops() -> CheckedPlan {
    design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap()
}

/// EFLOPS with one priority for both parts.
fn eflops_one_priority() -> CheckedPlan {
    let mut inv = bundled_inventory("eflops-4x16");
    inv.qos = QosOverrides {
        per_direction: Some(false),
        ..inv.qos
    };
    design(&inv, &DesignOptions::default()).unwrap()
}

/// EFLOPS with a hand edit, through the load's check.
fn edited(edit: impl FnOnce(&mut Plan)) -> crate::Result<CheckedPlan> {
    let mut plan = eflops().into_plan();
    edit(&mut plan);
    plan.check("edited.json")
}

fn hosts_of(plan: &CheckedPlan, server: &str) -> Vec<(String, String)> {
    render_hosts(plan)
        .unwrap()
        .into_iter()
        .filter(|(n, _)| n.starts_with(&format!("{server}.")))
        .collect()
}

/// Golden files: `planner/tests/render/<plan>/<case>/<file>`: the EFLOPS
/// plan for every vendor (static routes, and `<vendor>-bgp` with
/// `routing = "bgp"`), its hosts and `check-qos`, a 3-tier k=4
/// fat-tree with BGP for every vendor (`fat-tree-k4-bgp`), and the host
/// files of servers whose NICs carry several GPUs (`dgx1-v100/hosts`: two
/// GPUs per NIC; `cloud-8x16/hosts`: eight GPUs behind one NIC).
/// `UPDATE_GOLDEN=1` rewrites them; review the diff before committing.
#[test]
fn golden_files() {
    let plan = eflops();
    let eflops_bgp = crate::network::tests::bgp(&plan);
    let fat_tree_bgp = crate::network::tests::bgp(&crate::network::tests::fat_tree_plan("k=4"));
    let mut cases: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for v in Vendor::ALL {
        cases.push((format!("eflops-4x16/{v}"), render(&plan, v).unwrap()));
        cases.push((
            format!("eflops-4x16/{v}-bgp"),
            render(&eflops_bgp, v).unwrap(),
        ));
        cases.push((
            format!("fat-tree-k4-bgp/{v}"),
            render(&fat_tree_bgp, v).unwrap(),
        ));
    }
    cases.push(("eflops-4x16/hosts".to_string(), hosts_of(&plan, "node01")));
    let dgx1 = crate::design::bundled("dgx1-v100", None);
    cases.push(("dgx1-v100/hosts".to_string(), hosts_of(&dgx1, "dgx01")));
    let cloud = crate::design::bundled("cloud-8x16", Some(Topology::FatTree));
    cases.push(("cloud-8x16/hosts".to_string(), hosts_of(&cloud, "vm01")));
    cases.push((
        "eflops-4x16/check-qos".to_string(),
        vec![
            (
                "per-direction.txt".to_string(),
                render_qos_table(&check_qos(&plan)),
            ),
            (
                "one-priority.txt".to_string(),
                render_qos_table(&check_qos(&eflops_one_priority())),
            ),
        ],
    ));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for (case, files) in &cases {
        let dir = root.join(case);
        let wanted: BTreeSet<String> = files.iter().map(|(n, _)| n.clone()).collect();
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if !wanted.contains(&name) {
                    std::fs::remove_file(&p).unwrap();
                }
            }
            for (name, text) in files {
                std::fs::write(dir.join(name), text).unwrap();
            }
            continue;
        }
        let present: BTreeSet<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        if present != wanted {
            failures.push(format!("{case}: files {present:?}, expected {wanted:?}"));
        }
        for (name, text) in files {
            let want = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            if &want != text {
                let line = want
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .map_or(want.lines().count().min(text.lines().count()), |i| i)
                    + 1;
                failures.push(format!("{case}/{name} differs from line {line}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "golden render files differ (UPDATE_GOLDEN=1 rewrites them):\n{}",
        failures.join("\n")
    );
}

#[test]
fn rendering_is_byte_identical_across_runs() {
    let (a, b) = (eflops(), eflops());
    for v in Vendor::ALL {
        assert_eq!(render(&a, v).unwrap(), render(&b, v).unwrap(), "{v}");
    }
    assert_eq!(render_hosts(&a).unwrap(), render_hosts(&b).unwrap());
}

#[test]
fn vendors_parse_and_name_files() {
    for v in Vendor::ALL {
        assert_eq!(v.as_str().parse::<Vendor>().unwrap(), v);
    }
    assert_eq!("H3C".parse::<Vendor>().unwrap(), Vendor::Comware);
    let e = "junos".parse::<Vendor>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "vendor: `junos` is not a vendor; use comware, sonic, eos, nvue or frr"
    );
    assert!(matches!(&e, Error::Parameter { parameter, .. } if parameter == "vendor"));
    assert!(e.is_bad_input());
    assert_eq!(
        Vendor::Sonic.file_name("rack 1/sw01"),
        "rack_1_sw01.config_db.json"
    );
}

/// The registry: names, aliases and file suffixes are unique (a vendor's
/// files are told apart by their suffix), every name and alias parses to
/// its vendor in any case, and the lists derived for the command line
/// hold every vendor once, in registry order.
#[test]
fn registry_names_are_unique() {
    let mut names = BTreeSet::new();
    let mut suffixes = BTreeSet::new();
    for v in Vendor::ALL {
        let imp = v.implementation();
        assert_eq!(imp.name(), imp.name().to_ascii_lowercase(), "{v}");
        for name in std::iter::once(imp.name()).chain(imp.aliases().iter().copied()) {
            assert!(names.insert(name), "{name} names two vendors");
            assert_eq!(Vendor::named(name), Some(v));
            assert_eq!(name.to_ascii_uppercase().parse::<Vendor>().unwrap(), v);
        }
        assert!(suffixes.insert(imp.file_suffix()), "{v}: suffix twice");
        assert!(imp.file_suffix().starts_with('.'), "{v}");
        assert_eq!(v.file_name("sw01"), format!("sw01{}", imp.file_suffix()));
        assert_eq!(v.to_string(), imp.name());
        assert!(!v.title().is_empty() && !imp.gist().is_empty(), "{v}");
        assert!(Vendor::names().contains(v.as_str()), "{v}");
        assert!(
            Vendor::choices().contains(&format!("{v} ({})", imp.gist())),
            "{v}"
        );
    }
    let listed: Vec<&str> = Vendor::ALL.iter().map(|v| v.as_str()).collect();
    let last = listed.len() - 1;
    assert_eq!(
        Vendor::names(),
        format!("{} or {}", listed[..last].join(", "), listed[last])
    );
}

/// Every registered vendor renders every bundled topology, designed as
/// every topology it allows, one file per physical switch named by the vendor, and every port
/// name it writes passes its own interface check (the usual names and the
/// pattern the plan gives).
#[test]
fn every_vendor_renders_every_topology() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../topologies");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let mut patterned: Plan = (*eflops()).clone();
    for s in &mut patterned.switch_list {
        s.port_name = Some("swp{p}".to_string());
    }
    let patterned = CheckedPlan::unchecked_for_tests(patterned);
    // Each topology as every design it allows (fat-tree inventories have
    // too few switches for a BiGraph, some BiGraph ones for a fat-tree).
    let mut plans = Vec::new();
    for f in &files {
        let inv = bundled_inventory(f.trim_end_matches(".toml"));
        let before = plans.len();
        for topology in [Topology::BiGraph, Topology::FatTree] {
            let options = DesignOptions {
                topology,
                ..DesignOptions::default()
            };
            if let Ok(plan) = design(&inv, &options) {
                plans.push((format!("{f} as {topology:?}"), plan));
            }
        }
        assert!(plans.len() > before, "{f} designs as neither topology");
    }
    plans.push(("eflops with port_name swp{p}".to_string(), patterned));
    for (file, plan) in plans {
        let boxes = boxes(&plan);
        for v in Vendor::ALL {
            // A breakout the vendor's syntax is not documented for is
            // refused (breakout_commands_are_rendered_where_documented).
            if let Some(b) = plan.switch_list.iter().find_map(|s| s.breakout)
                && v.implementation().breakout(b).is_err()
            {
                assert!(render(&plan, v).is_err(), "{file} {v}");
                continue;
            }
            let out = render(&plan, v).unwrap_or_else(|e| panic!("{file} {v}: {e}"));
            let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
            let expected: Vec<String> = boxes.iter().map(|(b, _)| v.file_name(b)).collect();
            assert_eq!(names, expected, "{file} {v}");
            assert!(
                out.iter().all(|(_, text)| text.ends_with('\n')),
                "{file} {v}"
            );
            for s in &plan.switch_list {
                for p in &s.ports {
                    let name = v.port_name(s, p.port);
                    assert!(
                        v.accepts_interface(&name),
                        "{file} {v}: {} port {name}",
                        s.name
                    );
                }
            }
        }
    }
}

/// Each vendor refuses a name outside its syntax and a `port_name` in its
/// style that gives such names, and takes its usual names.
#[test]
fn vendors_check_their_own_port_names() {
    for v in Vendor::ALL {
        let imp = v.implementation();
        for gbps in [1, 10, 25, 100, 200, 400, 800] {
            for port in [1, 2, 17, 64] {
                let name = imp.default_port_name(gbps, port);
                assert!(imp.accepts_interface(&name), "{v} {name}");
                assert!(imp.accepts_pattern(&name), "{v} {name}");
                // Linux takes any word of up to 15 characters (`swp1x`
                // is a name), the switch CLIs only their own shapes.
                let bad: &[&str] = if v == Vendor::Frr {
                    &[" ", ";touch X;", "/", "0123456789ab"]
                } else {
                    &["", "x", "1", " ", ";touch X;"]
                };
                for bad in bad {
                    assert!(!imp.accepts_interface(&format!("{name}{bad}x")), "{v}");
                    assert!(!imp.accepts_interface(&format!("{bad}{name};")), "{v}");
                }
            }
        }
        assert!(!imp.accepts_interface(""), "{v}");
        let mut plan: Plan = (*eflops()).clone();
        let s = &mut plan.switch_list[0];
        let own = imp.default_port_name(s.port_gbps, 1);
        let base = own.trim_end_matches(|c: char| c.is_ascii_digit());
        s.port_name = Some(format!("{base}{{p}};touch X;"));
        let e = render(&CheckedPlan::unchecked_for_tests(plan), v)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("is not a {v} interface name")),
            "{v}: {e}"
        );
        assert!(e.contains(imp.interface_syntax()), "{v}: {e}");
    }
}

/// The switches of each physical switch, in plan order.
fn boxes(plan: &CheckedPlan) -> Vec<(String, Vec<&crate::plan::PlanSwitch>)> {
    let mut out: Vec<(String, Vec<&crate::plan::PlanSwitch>)> = Vec::new();
    for s in &plan.switch_list {
        match out.iter_mut().find(|(p, _)| *p == s.physical) {
            Some((_, v)) => v.push(s),
            None => out.push((s.physical.to_string(), vec![s])),
        }
    }
    out
}

/// Renders the EFLOPS plan for `vendor`, reads every file back and checks
/// it against the plan itself: host names, VLAN halves and their ports,
/// VRFs and gateways, port descriptions naming the peer, PFC, MTU, the
/// DSCP map, and static routes whose next hops are the right switches.
fn round_trip(vendor: Vendor) {
    let plan = eflops();
    let q = plan.qos_intent();
    let mtu = if vendor == Vendor::Eos { 9214 } else { q.mtu };
    let files = render(&plan, vendor).unwrap();
    let parsed: Vec<ParsedConfig> = files
        .iter()
        .map(|(name, text)| parse(vendor, text, name).unwrap())
        .collect();
    let boxes = boxes(&plan);
    assert_eq!(parsed.len(), boxes.len());
    // Who owns each inter-switch address: (box, VRF).
    let mut owner: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (b, c) in parsed.iter().enumerate() {
        for i in c.interfaces.values() {
            if let (Some(a), Some(vrf)) = (&i.address, &i.vrf) {
                let addr = a.split('/').next().unwrap().to_string();
                assert!(owner.insert(addr, (b, vrf.clone())).is_none(), "{a} twice");
            }
        }
    }
    let half_of = |b: usize, vrf: &str| -> &crate::plan::PlanSwitch {
        boxes[b]
            .1
            .iter()
            .find(|s| format!("Vrf{}", s.vlan.unwrap()) == vrf)
            .unwrap()
    };
    let index = plan.switch_index();
    let gateway = |ip: &str| {
        let (a, len) = ip.split_once('/').unwrap();
        let a: std::net::Ipv4Addr = a.parse().unwrap();
        let p = Ipv4Prefix::containing(u32::from(a), len.parse().unwrap());
        (
            p,
            format!("{}/{}", std::net::Ipv4Addr::from(p.last() - 1), p.len),
        )
    };
    for ((physical, halves), c) in boxes.iter().zip(&parsed) {
        assert_eq!(&c.hostname, physical);
        assert_eq!(c.dscp_map.len(), 64, "{vendor} {physical}");
        for class in &q.classes {
            assert_eq!(c.dscp_map[&class.dscp], class.priority);
        }
        assert_eq!(c.dscp_map[&q.cnp.dscp], q.cnp.priority);
        assert_eq!(c.dscp_map[&0], 0);
        for s in halves {
            let vlan = s.vlan.unwrap();
            let vrf = format!("Vrf{vlan}");
            assert!(c.vrfs.contains(&vrf));
            let v = &c.vlans[&vlan];
            // Vendors that name VLANs name them after the half (the
            // golden files hold which do).
            if let Some(name) = &v.name {
                assert_eq!(name, &s.name, "{vendor}");
            }
            assert_eq!(v.vrf.as_deref(), Some(vrf.as_str()), "{vendor} {}", s.name);
            let members: BTreeSet<String> = s
                .ports
                .iter()
                .filter(|p| p.role == PortRole::SubNode)
                .map(|p| vendor.port_name(s, p.port))
                .collect();
            assert_eq!(v.members, members, "{vendor} {}", s.name);
            let mine: Vec<_> = plan
                .sub_node_list
                .iter()
                .filter(|sn| sn.switch == s.name)
                .collect();
            for sn in &mine {
                let (_, gw) = gateway(sn.ip.as_deref().unwrap());
                assert!(v.addresses.contains(&gw), "{vendor} {} {gw}", s.name);
            }
            for p in &s.ports {
                let name = vendor.port_name(s, p.port);
                let i = &c.interfaces[&name];
                match p.role {
                    PortRole::InterSwitch => {
                        let peer = &plan.switch_list[index[p.peer.as_deref().unwrap()]];
                        let peer_port: u32 = p.peer_port.as_deref().unwrap().parse().unwrap();
                        assert_eq!(
                            i.description,
                            format!("to {} {}", peer.name, vendor.port_name(peer, peer_port))
                        );
                        assert_eq!(i.vrf.as_deref(), Some(vrf.as_str()));
                        assert!(i.address.as_deref().unwrap().ends_with("/31"));
                    }
                    PortRole::SubNode => {
                        let sn = mine.iter().find(|sn| sn.port == p.port).unwrap();
                        assert_eq!(
                            i.description,
                            format!("{} {} ({})", sn.server, sn.nic, sn.gpu.as_deref().unwrap())
                        );
                        assert_eq!(i.access_vlan, Some(vlan));
                    }
                    PortRole::Free => {
                        assert!(i.shutdown, "{vendor} {name}");
                        assert!(i.description.contains("free for growth"));
                        continue;
                    }
                    PortRole::Reserved => unreachable!("EFLOPS reserves no port"),
                }
                assert!(!i.shutdown);
                assert!(i.trust_dscp, "{vendor} {name}");
                assert_eq!(i.pfc, BTreeSet::from([3, 4]), "{vendor} {name}");
                assert_eq!(i.mtu, Some(mtu), "{vendor} {name}");
            }
            // Routes: every other switch's subnet, with next hops on the
            // right switches.
            for t in &plan.switch_list {
                if t.name == s.name {
                    continue;
                }
                let sn = plan
                    .sub_node_list
                    .iter()
                    .find(|x| x.switch == t.name)
                    .unwrap();
                let (prefix, _) = gateway(sn.ip.as_deref().unwrap());
                let prefix = prefix.to_string();
                let hops: Vec<&str> = c
                    .routes
                    .iter()
                    .filter(|r| r.vrf == vrf && r.prefix == prefix)
                    .map(|r| r.next_hop.as_str())
                    .collect();
                let other_part = t.part_or_tier != s.part_or_tier;
                assert_eq!(
                    hops.len(),
                    if other_part { 1 } else { 8 },
                    "{vendor} {} to {}",
                    s.name,
                    t.name
                );
                for h in hops {
                    let (b, hop_vrf) = &owner[h];
                    let via = half_of(*b, hop_vrf);
                    if other_part {
                        assert_eq!(via.name, t.name);
                    } else {
                        assert_ne!(via.part_or_tier, s.part_or_tier);
                    }
                }
            }
        }
    }
}

#[test]
fn comware_round_trip_matches_the_plan() {
    round_trip(Vendor::Comware);
}

#[test]
fn sonic_round_trip_matches_the_plan() {
    round_trip(Vendor::Sonic);
}

#[test]
fn eos_round_trip_matches_the_plan() {
    round_trip(Vendor::Eos);
}

#[test]
fn nvue_round_trip_matches_the_plan() {
    round_trip(Vendor::Nvue);
}

#[test]
fn parsers_reject_what_they_do_not_know() {
    let plan = eflops();
    for v in Vendor::ALL {
        let (name, text) = &render(&plan, v).unwrap()[0];
        let broken = match v {
            Vendor::Sonic => text.replacen("\"PORT\"", "\"PORT\": 1, \"X\"", 1),
            Vendor::Nvue => format!("{text}nv set interface swp1 frobnicate on\n"),
            _ => text
                .replacen("hostname", "hostnmae", 1)
                .replacen("sysname", "sysnmae", 1),
        };
        assert!(parse(v, &broken, name).is_err(), "{v}");
    }
}

#[test]
fn descriptions_name_peers_in_the_vendors_words() {
    let plan = eflops();
    let comware = &render(&plan, Vendor::Comware).unwrap()[0].1;
    assert!(comware.contains(" description to sw02-l HundredGigE1/0/17\n"));
    assert!(comware.contains(" description node01 mlx5_0 (gpu0)\n"));
    assert!(comware.contains(" description free for growth in sw01-u\n"));
    let nvue = &render(&plan, Vendor::Nvue).unwrap()[0].1;
    assert!(nvue.contains("nv set interface swp1 description 'to sw01-l swp17'\n"));
    let sonic = &render(&plan, Vendor::Sonic).unwrap()[0].1;
    assert!(sonic.contains("\"description\": \"to sw02-l Ethernet64\""));
    let eos = &render(&plan, Vendor::Eos).unwrap()[0].1;
    assert!(eos.contains("   description to sw02-l Ethernet17/1\n"));
    assert!(eos.contains("EOS's largest, 9214"));
}
mod intent;
mod qos;
