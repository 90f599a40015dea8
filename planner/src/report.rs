//! Human reports of a plan (`planner design`) and of the cable list.

use std::collections::BTreeMap;

use crate::checked::CheckedPlan;
use crate::metrics::{Metrics, metrics};
use crate::plan::{Plan, PortRole, Tier};
use crate::text::{Table, format_port_list, gbps};

/// Plans with more switches than this get a per-tier summary instead of a
/// row per switch.
const SWITCH_ROWS: usize = 64;

/// The design report for people.
pub fn render_design(plan: &Plan, source: &str) -> String {
    let m = metrics(plan);
    let mut out = format!(
        "{} for {} ({source}): {} sub-nodes on {} servers\n",
        plan.describe(),
        plan.name,
        plan.sub_nodes,
        plan.servers
            .iter()
            .filter(|s| !s.sub_nodes.is_empty())
            .count()
    );
    for n in &plan.notes {
        out.push_str(&format!("  - {n}\n"));
    }
    out.push('\n');
    out.push_str(&figures(&m));
    out.push('\n');
    if plan.switch_list.len() <= SWITCH_ROWS {
        out.push_str(&switch_table(plan));
    } else {
        out.push_str(&tier_table(plan));
        out.push_str(&format!(
            "({} switches: the JSON report or the plan file lists every switch and port)\n",
            plan.switch_list.len()
        ));
    }
    if !plan.warnings.is_empty() {
        out.push_str("\nWarnings:\n");
        for w in &plan.warnings {
            out.push_str(&format!("  - {w}\n"));
        }
    }
    out
}

/// The figures of merit as `name  value` lines.
pub fn figures(m: &Metrics) -> String {
    let mut t = Table::new(["", ""]);
    for (k, v) in metric_rows(m) {
        t.row([k, v]);
    }
    // Drop the empty header line.
    t.render()
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Named figures, in the order reports show them.
pub fn metric_rows(m: &Metrics) -> Vec<(String, String)> {
    let switches = if m.switches == m.physical_switches {
        format!("{}", m.switches)
    } else {
        format!("{} on {} physical", m.switches, m.physical_switches)
    };
    let largest: Vec<String> = m
        .largest
        .iter()
        .map(|g| format!("{} ({})", g.sub_nodes, g.design))
        .collect();
    vec![
        ("design".into(), m.design.clone()),
        ("sub-nodes".into(), m.sub_nodes.to_string()),
        ("switches".into(), switches),
        ("inter-switch links".into(), m.links.to_string()),
        (
            "cables".into(),
            format!(
                "{} ({} to sub-nodes, {} between switches)",
                m.cables,
                m.sub_node_cables,
                m.cables - m.sub_node_cables
            ),
        ),
        (
            "cable media".into(),
            format!(
                "{} DAC, {} optical ({} transceivers)",
                m.dac_cables, m.optical_cables, m.transceivers
            ),
        ),
        (
            "bisection bandwidth".into(),
            format!(
                "{} Gbps ({} of full)",
                gbps(m.bisection_gbps),
                ratio(m.bisection_ratio)
            ),
        ),
        (
            "max switches between sub-nodes".into(),
            m.max_switch_hops.to_string(),
        ),
        ("free ports".into(), m.free_ports.to_string()),
        (
            "largest with this switch model".into(),
            format!("{} sub-nodes", largest.join(" or ")),
        ),
        (
            "one failed switch takes away".into(),
            match m.blast_radius.nic_ports {
                Some(ports) => format!(
                    "up to {} sub-nodes cut off, {ports} NIC ports on {} servers (half their NIC bandwidth, the other plane carries on), or {} of {} inter-switch links",
                    m.blast_radius.sub_nodes, m.blast_radius.servers, m.blast_radius.links, m.links
                ),
                None => format!(
                    "up to {} sub-nodes on {} servers, or {} of {} inter-switch links",
                    m.blast_radius.sub_nodes, m.blast_radius.servers, m.blast_radius.links, m.links
                ),
            },
        ),
    ]
}

fn ratio(r: f64) -> String {
    if (r - 1.0).abs() < 1e-9 {
        "100%".to_string()
    } else {
        format!("{:.0}%", r * 100.0)
    }
}

/// Servers in order, written compactly: `node01`, `node01, node02`,
/// `node01..node08 (8)`.
fn servers_text(servers: &[&str]) -> String {
    match servers.len() {
        0 => "-".to_string(),
        1..=2 => servers.join(", "),
        n => format!("{}..{} ({n})", servers[0], servers[n - 1]),
    }
}

fn switch_table(plan: &Plan) -> String {
    let mut t = Table::new([
        "switch",
        "part/tier",
        "physical",
        "VLAN",
        "ports",
        "links",
        "sub-nodes",
        "free",
        "servers",
    ])
    .right(&[5, 6, 7]);
    for s in &plan.switch_list {
        let ports: Vec<u32> = s.ports.iter().map(|p| p.port).collect();
        let mut servers: Vec<&str> = Vec::new();
        for p in &s.ports {
            if p.role == PortRole::SubNode
                && let Some(peer) = p.peer.as_deref()
                && servers.last() != Some(&peer)
            {
                servers.push(peer);
            }
        }
        let plane = s.plane.map_or(String::new(), |p| {
            format!("plane {} ", if p == 0 { "A" } else { "B" })
        });
        let tier = match (s.rail, s.pod) {
            (Some(rail), Some(segment)) if s.plane.is_some() => {
                format!("{plane}ToR rail {rail} (segment {segment})")
            }
            (_, _) if s.plane.is_some() => format!("{plane}aggregation"),
            (Some(rail), Some(group)) => format!("rail {rail} (group {group})"),
            (_, Some(pod)) => format!("{} (pod {pod})", s.part_or_tier.as_str()),
            _ => s.part_or_tier.as_str().to_string(),
        };
        t.row([
            s.name.to_string(),
            tier,
            s.physical.to_string(),
            s.vlan.map_or("-".to_string(), |v| v.to_string()),
            format_port_list(&ports),
            s.count(PortRole::InterSwitch).to_string(),
            s.count(PortRole::SubNode).to_string(),
            s.count(PortRole::Free).to_string(),
            servers_text(&servers),
        ]);
    }
    t.render()
}

fn tier_table(plan: &Plan) -> String {
    #[derive(Default)]
    struct Row {
        switches: usize,
        ports: (usize, usize),
        links: (usize, usize),
        sub_nodes: (usize, usize),
        free: usize,
    }
    let widen = |r: &mut (usize, usize), v: usize, first: bool| {
        if first {
            *r = (v, v);
        } else {
            r.0 = r.0.min(v);
            r.1 = r.1.max(v);
        }
    };
    let mut rows: BTreeMap<Tier, Row> = BTreeMap::new();
    for s in &plan.switch_list {
        let r = rows.entry(s.part_or_tier).or_default();
        let first = r.switches == 0;
        r.switches += 1;
        widen(&mut r.ports, s.ports.len(), first);
        widen(&mut r.links, s.count(PortRole::InterSwitch), first);
        widen(&mut r.sub_nodes, s.count(PortRole::SubNode), first);
        r.free += s.count(PortRole::Free);
    }
    let span = |(a, b): (usize, usize)| {
        if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        }
    };
    let mut t = Table::new([
        "part/tier",
        "switches",
        "ports each",
        "links each",
        "sub-nodes each",
        "free in all",
    ])
    .right(&[1, 2, 3, 4, 5]);
    for (tier, r) in rows {
        t.row([
            tier.as_str().to_string(),
            r.switches.to_string(),
            span(r.ports),
            span(r.links),
            span(r.sub_nodes),
            r.free.to_string(),
        ]);
    }
    t.render()
}

/// The cable list for people: one row per physical cable; a breakout
/// cable once, its cage and lanes in the port column (`swp1 =
/// swp1s0 swp1s1`), its legs' peers and ports in order.
pub fn render_cables(plan: &CheckedPlan) -> String {
    // Racks and runs are shown when the plan has racks.
    let racked = !plan.racks.is_empty();
    let mut header = vec!["#", "switch", "port", "peer", "peer port", "Gbps", "media"];
    if racked {
        header.extend(["rack", "peer rack", "run"]);
    }
    let mut t = Table::new(header).right(&[0, 5]);
    let switches = plan.physical_switches();
    for r in plan.cable_rows() {
        let mut row = match (&r.cable, &r.breakout) {
            (Some(c), _) => {
                let port = (switches.get(c.a.as_str()))
                    .map_or(c.a_port.to_string(), |s| s.port_name(c.a_port));
                let peer_port = match c.kind {
                    crate::plan::CableKind::InterSwitch => {
                        crate::plan::peer_port_name(&switches, &c.b, &c.b_port)
                    }
                    crate::plan::CableKind::SubNode => c.b_port.to_string(),
                };
                vec![
                    r.label.clone(),
                    c.a.to_string(),
                    port,
                    c.b.to_string(),
                    peer_port,
                    c.gbps.to_string(),
                    c.media.as_str().to_string(),
                ]
            }
            (None, Some(b)) => {
                let lanes: Vec<&str> = b.legs.iter().map(|l| l.port_name.as_str()).collect();
                let mut peers: Vec<&str> = b.legs.iter().map(|l| l.peer).collect();
                peers.dedup();
                let peer_ports: Vec<&str> = b.legs.iter().map(|l| l.peer_port.as_str()).collect();
                vec![
                    r.label.clone(),
                    b.switch.to_string(),
                    format!("{} = {}", b.cage_name, lanes.join(" ")),
                    peers.join(" "),
                    peer_ports.join(" "),
                    format!("{} = {}", b.gbps, b.breakout),
                    if b.straight {
                        format!("{} straight", b.media.as_str())
                    } else {
                        format!("{} breakout", b.media.as_str())
                    },
                ]
            }
            (None, None) => continue,
        };
        if racked {
            row.extend(
                [
                    r.rack.unwrap_or("-"),
                    r.peer_rack.unwrap_or("-"),
                    r.run.as_str(),
                ]
                .map(String::from),
            );
        }
        t.row(row);
    }
    t.render()
}
