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
            None => out.push((s.physical.clone(), vec![s])),
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

#[test]
fn hosts_mark_the_dscp_of_their_part() {
    let plan = eflops();
    let files = render_hosts(&plan).unwrap();
    assert_eq!(files.len(), 2 * plan.servers.len());
    // node01 is on sw01-u (upper), node02 on sw01-l (lower).
    let json = |server: &str| -> serde_json::Value {
        let text = &files
            .iter()
            .find(|(n, _)| n == &format!("{server}.json"))
            .unwrap()
            .1;
        serde_json::from_str(text).unwrap()
    };
    let (up, low) = (json("node01"), json("node02"));
    assert_eq!(up["sub_nodes"][0]["dscp"], 26);
    assert_eq!(up["sub_nodes"][0]["env"]["NCCL_IB_TC"], "104");
    assert_eq!(low["sub_nodes"][0]["dscp"], 34);
    assert_eq!(low["sub_nodes"][0]["env"]["NCCL_IB_TC"], "136");
    assert_eq!(low["sub_nodes"][3]["env"]["CUDA_VISIBLE_DEVICES"], "3");
    assert_eq!(low["sub_nodes"][3]["env"]["NCCL_IB_HCA"], "=mlx5_3");
    assert_eq!(low["sub_nodes"][3]["gateway"], "10.100.2.254");
    let env = &files.iter().find(|(n, _)| n == "node02.env").unwrap().1;
    assert!(env.contains("SLOT3_NCCL_IB_GID_INDEX=3\n"));
    assert!(env.contains("    1) export CUDA_VISIBLE_DEVICES=\"$SLOT1_CUDA_VISIBLE_DEVICES\""));
}

#[test]
fn check_qos_proves_per_direction_priorities_deadlock_free() {
    let c = check_qos(&eflops());
    assert!(c.ok, "{:?}", c.findings);
    assert!(c.cycle.is_none());
    assert_eq!(c.flows, 16 * 15);
    assert_eq!(c.links_checked, 64);
    let summary: Vec<(u8, usize, usize, bool)> = c
        .graphs
        .iter()
        .map(|g| (g.priority, g.buffers, g.dependencies, g.acyclic))
        .collect();
    // Every directed link carries each priority; a dependency is a turn
    // in the other part: 8 switches x 8 links in x 7 links out.
    assert_eq!(summary, vec![(3, 128, 448, true), (4, 128, 448, true)]);
    assert_eq!(c.classes[0].sub_nodes, 32);
}

#[test]
fn check_qos_finds_figure_7_with_one_priority() {
    let c = check_qos(&eflops_one_priority());
    assert!(!c.ok);
    let cycle = c.cycle.as_ref().unwrap();
    assert_eq!(cycle.priorities, vec![3]);
    assert_eq!(cycle.links.len(), 4);
    // The loop of Fig. 7: up, down, up, down, each link waiting on the
    // next and the last on the first.
    for (i, l) in cycle.links.iter().enumerate() {
        let next = &cycle.links[(i + 1) % 4];
        assert_eq!(l.to, next.from);
        assert_ne!(l.from.ends_with("-u"), l.to.ends_with("-u"));
        assert!(l.flow.contains("enters"), "{}", l.flow);
    }
    assert_eq!(c.findings.len(), 1);
    assert_eq!(c.findings[0].kind, "deadlock-cycle");
    assert!(c.findings[0].fix.contains("per_direction"));
    let table = render_qos_table(&c);
    assert!(
        table.contains("Deadlock cycle in priority 3 (4 links"),
        "{table}"
    );
}

/// NCCL's receivers answer (CTS writes, ACKs) in the sender's class
/// before 2.22.3: on a BiGraph every answer that crosses the parts takes
/// one inter-switch link, and answers within a part carry that part's
/// class, so the proof still holds and says so.
#[test]
fn check_qos_walks_nccl_answers_in_the_senders_class() {
    let plan = eflops();
    let own = check_qos(&plan);
    assert_eq!(own.answer_flows, 0);
    assert!(render_qos_table(&own).contains("CTS writes and ACKs carry the receiver's own class"));
    let old = HostMarking::for_nccl_version("2.21.5").unwrap();
    let c = check_qos_marked(&plan, &old);
    assert!(c.ok, "{:?}", c.findings);
    // Each of the 16 switches answers the 8 switches of the other part in
    // their class.
    assert_eq!(c.answer_flows, 16 * 8);
    let table = render_qos_table(&c);
    assert!(table.contains("the data sender's class"), "{table}");
    assert!(
        table.contains("NCCL 2.21.5 has no NCCL_IB_FIFO_TC"),
        "{table}"
    );
    assert!(table.contains("(and 128 of receivers' answers)"), "{table}");
}

/// One CTS class for every rank (a cluster-wide `NCCL_IB_FIFO_TC`): the
/// lower part's answers to each other turn in the upper part in the upper
/// class, which closes EFLOPS Fig. 7's loop with the upper part's data. The
/// data alone is acyclic, so only walking the answers finds it.
#[test]
fn check_qos_refuses_one_answer_class_for_every_rank() {
    let plan = eflops();
    let mut marking = HostMarking::default();
    marking.set_env("NCCL_IB_FIFO_TC=104").unwrap();
    let c = check_qos_marked(&plan, &marking);
    assert!(!c.ok);
    let cycle = c.cycle.as_ref().expect("a cycle");
    assert_eq!(cycle.priorities, vec![3]);
    assert!(
        cycle
            .links
            .iter()
            .any(|l| l.flow.contains("CTS writes and ACKs")),
        "{:?}",
        cycle.links
    );
    let kinds: Vec<&str> = c.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["host-setting", "deadlock-cycle"],
        "{:?}",
        c.findings
    );
    assert_eq!(c.findings[0].object, "NCCL_IB_FIFO_TC=104");
    assert!(
        c.findings[0]
            .message
            .contains("32 sub-nodes of class roce-lower"),
        "{}",
        c.findings[0].message
    );
}

/// A cluster-wide `NCCL_IB_TC` puts every rank's data in one class: the
/// host setting is named, and the one-priority cycle found.
#[test]
fn check_qos_refuses_one_data_class_for_every_rank() {
    let mut marking = HostMarking::default();
    marking.set_env("NCCL_IB_TC=104").unwrap();
    let c = check_qos_marked(&eflops(), &marking);
    assert!(!c.ok);
    let kinds: Vec<&str> = c.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["host-setting", "deadlock-cycle"],
        "{:?}",
        c.findings
    );
    assert!(c.findings[0].fix.contains("render --hosts"));
    // The same value on a fat-tree is its one class: nothing to report.
    let opts = DesignOptions {
        topology: Topology::FatTree,
        ..DesignOptions::default()
    };
    let tree = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
    let mut old = HostMarking::for_nccl_version("2.18.6").unwrap();
    old.set_env("NCCL_IB_TC=104").unwrap();
    let c = check_qos_marked(&tree, &old);
    assert!(c.ok, "{:?}", c.findings);
}

/// Rail designs keep each NCCL channel on one rail (`NCCL_CROSS_NIC=0`);
/// every host gets `NCCL_IB_FIFO_TC` equal to its `NCCL_IB_TC`.
#[test]
fn hosts_of_rail_plans_keep_nccl_on_its_rail() {
    let opts = DesignOptions {
        topology: Topology::RailOptimized,
        ..DesignOptions::default()
    };
    let rails = design(&bundled_inventory("h100-8x32"), &opts).unwrap();
    for plan in [&rails, &eflops()] {
        let rail = plan.topology == Topology::RailOptimized;
        for file in host_files(plan).unwrap() {
            for slot in &file.sub_nodes {
                assert_eq!(slot.env.get("NCCL_IB_FIFO_TC"), slot.env.get("NCCL_IB_TC"));
                assert_eq!(
                    slot.env.get("NCCL_CROSS_NIC").map(String::as_str),
                    rail.then_some("0"),
                    "{}",
                    file.server
                );
            }
        }
    }
}

#[test]
fn check_qos_passes_fat_trees() {
    for file in ["fat-tree-64", "fat-tree-k16"] {
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let plan = design(&bundled_inventory(file), &opts).unwrap();
        let c = check_qos(&plan);
        assert!(c.ok, "{file}: {:?}", c.findings);
        assert_eq!(c.graphs.len(), 1, "{file}");
        for v in Vendor::ALL {
            let files = render(&plan, v).unwrap();
            for (name, text) in &files {
                parse(v, text, name).unwrap();
            }
        }
    }
}

#[test]
fn check_qos_reports_links_whose_ends_disagree_on_mtu() {
    let plan = edited(|plan| {
        let mut q = plan.qos_intent();
        q.switch_mtu.insert("sw03".to_string(), 9000);
        plan.qos = Some(q);
    })
    .unwrap();
    let c = check_qos(&plan);
    assert!(!c.ok);
    let mtu: Vec<&QosFinding> = c
        .findings
        .iter()
        .filter(|f| f.kind == "mtu-mismatch")
        .collect();
    // sw03's halves have 16 links; the one between them stays in the box.
    assert_eq!(mtu.len(), 14, "{:?}", c.findings);
    assert!(mtu[0].message.contains("9000"));
}

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

/// EFLOPS with a hand edit, through the load's check.
fn edited(edit: impl FnOnce(&mut Plan)) -> crate::Result<CheckedPlan> {
    let mut plan = eflops().into_plan();
    edit(&mut plan);
    plan.check("edited.json")
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
