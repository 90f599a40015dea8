//! Checks a plan's own invariants, and as-built cabling against the plan.
//!
//! [`validate_plan`] checks that a plan is self-consistent (ports, peers,
//! cables and sub-node attachments agree; counts match the lists; servers,
//! sub-nodes, indices, addresses and design parameters agree, see
//! `records.rs`; `render` could build its configurations) and that
//! its topology holds: on a BiGraph exactly one link between every upper
//! and lower switch and none inside a part, M <= N/2 and downlink <= uplink
//! bandwidth; on a fat-tree every leaf wired alike to every spine (2 tiers)
//! or pods and cores wired as a k-ary fat-tree (3 tiers).
//!
//! [`validate_cabling`] compares observed cables (CSV or LLDP, see
//! [`cabling`]) with the plan: missing, extra, crossed and miswired cables
//! (a sub-node on the wrong switch or VLAN half), speed mismatches, devices
//! with no data, and the same topology invariants on the as-built graph.

pub mod cabling;
mod records;

pub(crate) use records::render_refusals;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use petgraph::unionfind::UnionFind;
use serde::Serialize;

use crate::plan::{CableKind, Plan, PortRole, Tier, Topology};
use crate::text::gbps;
use cabling::Observed;

/// One thing wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `missing`, `extra`, `crossed`, `wrong-switch`, `wrong-vlan-half`,
    /// `wrong-port`, `miswired`, `speed-mismatch`, `conflict`,
    /// `unknown-device`, `unknown-port`, `no-data`, `invariant`,
    /// `inconsistent`, `invalid`, `name` (a name breaks the name rule,
    /// [`crate::names`]).
    pub kind: &'static str,
    /// What it is about (`sw01 port 5`, `node03 mlx5_1`).
    pub object: String,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub fix: String,
    /// Where in the cabling input it was seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The result of `planner validate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validation {
    /// The plan's name.
    pub plan: String,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// `BiGraph 4x16`, ...
    pub design: String,
    /// Cabling inputs, empty when only the plan was checked.
    pub cabling: Vec<String>,
    /// Cables in the plan.
    pub planned_cables: usize,
    /// Distinct cables read from the cabling inputs.
    pub observed_cables: usize,
    /// Observed cables that are exactly as planned.
    pub matching_cables: usize,
    /// Everything wrong.
    pub findings: Vec<Finding>,
    /// True when there is no finding.
    pub ok: bool,
}

fn finding(
    kind: &'static str,
    object: impl Into<String>,
    message: impl Into<String>,
    fix: impl Into<String>,
    source: Option<String>,
) -> Finding {
    Finding {
        kind,
        object: object.into(),
        message: message.into(),
        fix: fix.into(),
        source,
    }
}

/// A cable end: a port the plan lists on a physical switch, or a
/// sub-node's NIC. `slot` is the port's position in the switch's port list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum End {
    Port { phys: usize, port: u32, slot: usize },
    Nic { sub_node: usize },
}

/// No peer, in the dense per-end tables.
const NONE: u32 = u32::MAX;

/// Lookups over a plan. Every cable end has a dense id (switch ports in
/// order, then sub-nodes), so per-end tables are plain vectors.
struct Index<'p> {
    plan: &'p Plan,
    vs: HashMap<&'p str, usize>,
    phys_names: Vec<&'p str>,
    phys: HashMap<&'p str, usize>,
    /// Per physical switch: (port, virtual switch) sorted by port.
    owner: Vec<Vec<(u32, usize)>>,
    /// Dense id of each physical switch's first port.
    port_base: Vec<usize>,
    /// Dense id of sub-node 0.
    nic_base: usize,
    servers: HashMap<&'p str, usize>,
    /// Sub-node -> index into `plan.servers`.
    sub_node_server: Vec<usize>,
    /// Normalised MAC -> sub-node.
    macs: HashMap<String, usize>,
}

impl<'p> Index<'p> {
    fn new(plan: &'p Plan, findings: &mut Vec<Finding>) -> Self {
        let mut vs = HashMap::with_capacity_and_hasher(plan.switch_list.len(), Default::default());
        let mut phys_names = Vec::new();
        let mut phys = HashMap::default();
        let mut owner: Vec<Vec<(u32, usize)>> = Vec::new();
        for (i, s) in plan.switch_list.iter().enumerate() {
            if vs.insert(s.name.as_str(), i).is_some() {
                findings.push(finding(
                    "inconsistent",
                    format!("switch {}", s.name),
                    "the name appears twice in switch_list",
                    "design the plan again",
                    None,
                ));
            }
            let p = *phys.entry(s.physical.as_str()).or_insert_with(|| {
                phys_names.push(s.physical.as_str());
                owner.push(Vec::new());
                phys_names.len() - 1
            });
            owner[p].extend(s.ports.iter().map(|port| (port.port, i)));
        }
        for (p, list) in owner.iter_mut().enumerate() {
            list.sort_unstable();
            let before = list.len();
            for w in list.windows(2) {
                if w[0].0 == w[1].0 {
                    findings.push(finding(
                        "inconsistent",
                        format!("{} port {}", phys_names[p], w[0].0),
                        format!(
                            "the port belongs to both {} and {} (port overbooked)",
                            plan.switch_list[w[0].1].name, plan.switch_list[w[1].1].name
                        ),
                        "give each physical port to one switch only",
                        None,
                    ));
                }
            }
            list.dedup_by_key(|x| x.0);
            debug_assert!(list.len() <= before);
        }
        let mut port_base = Vec::with_capacity(owner.len());
        let mut next = 0;
        for list in &owner {
            port_base.push(next);
            next += list.len();
        }
        let servers: HashMap<&str, usize> = plan
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let mut macs = HashMap::default();
        let mut sub_node_server = Vec::with_capacity(plan.sub_node_list.len());
        for (i, sn) in plan.sub_node_list.iter().enumerate() {
            sub_node_server.push(
                servers
                    .get(sn.server.as_str())
                    .copied()
                    .unwrap_or(usize::MAX),
            );
            if let Some(m) = &sn.mac {
                macs.insert(normalise_mac(m), i);
            }
        }
        Self {
            plan,
            vs,
            phys_names,
            phys,
            owner,
            port_base,
            nic_base: next,
            servers,
            sub_node_server,
            macs,
        }
    }

    /// Number of dense ids.
    fn ends(&self) -> usize {
        self.nic_base + self.plan.sub_node_list.len()
    }

    fn id(&self, e: End) -> usize {
        match e {
            End::Port { phys, slot, .. } => self.port_base[phys] + slot,
            End::Nic { sub_node } => self.nic_base + sub_node,
        }
    }

    fn end(&self, id: usize) -> End {
        if id >= self.nic_base {
            return End::Nic {
                sub_node: id - self.nic_base,
            };
        }
        let phys = self.port_base.partition_point(|&b| b <= id) - 1;
        let slot = id - self.port_base[phys];
        End::Port {
            phys,
            port: self.owner[phys][slot].0,
            slot,
        }
    }

    /// The end for a port number of a physical switch, if the plan lists it.
    fn port(&self, phys: usize, port: u32) -> Option<End> {
        self.owner[phys]
            .binary_search_by_key(&port, |&(p, _)| p)
            .ok()
            .map(|slot| End::Port { phys, port, slot })
    }

    /// The virtual switch owning a port end.
    fn owner_of(&self, e: End) -> Option<usize> {
        match e {
            End::Port { phys, slot, .. } => Some(self.owner[phys][slot].1),
            End::Nic { .. } => None,
        }
    }

    /// The sub-node of a server's NIC.
    fn nic(&self, server: &str, nic: &str) -> Option<usize> {
        let &s = self.servers.get(server)?;
        self.plan.servers[s].sub_nodes.iter().copied().find(|&i| {
            self.plan
                .sub_node_list
                .get(i)
                .is_some_and(|sn| sn.nic == nic || sn.netdev.as_deref() == Some(nic))
        })
    }

    /// Resolves a port text on a physical switch: a number, the interface
    /// name from the switch's `port_name` pattern, or the trailing number.
    fn switch_port(&self, phys: usize, text: &str) -> Option<u32> {
        let text = text.trim();
        if let Ok(n) = text.parse::<u32>() {
            return Some(n);
        }
        if let Some(&(_, vs)) = self.owner[phys].first()
            && let Some(pattern) = &self.plan.switch_list[vs].port_name
            && let Some((pre, post)) = pattern.split_once("{p}")
            && let Some(mid) = text.strip_prefix(pre).and_then(|t| t.strip_suffix(post))
            && let Ok(n) = mid.parse::<u32>()
        {
            return Some(n);
        }
        let digits = text.len() - text.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            text[text.len() - digits..].parse().ok()
        } else {
            None
        }
    }

    /// Resolves a device and port named in the cabling input.
    fn resolve(&self, device: &str, port: &str) -> Result<End, (&'static str, String)> {
        if let Some(&p) = self.phys.get(device) {
            let Some(n) = self.switch_port(p, port) else {
                return Err((
                    "unknown-port",
                    format!("`{port}` is not a port name of switch {device}"),
                ));
            };
            return self.port(p, n).ok_or_else(|| {
                let list: Vec<u32> = self.owner[p].iter().map(|&(x, _)| x).collect();
                (
                    "unknown-port",
                    format!(
                        "port {n} of {device} is not in the plan (the plan uses ports {})",
                        crate::text::format_port_list(&list)
                    ),
                )
            });
        }
        if let Some(&v) = self.vs.get(device) {
            return Err((
                "unknown-device",
                format!(
                    "{device} is a VLAN half; cabling names the physical switch ({})",
                    self.plan.switch_list[v].physical
                ),
            ));
        }
        if let Some(&s) = self.servers.get(device) {
            // LLDP may give "descr|mac"; try every piece.
            for piece in port.split('|') {
                if let Some(i) = self.nic(device, piece.trim()) {
                    return Ok(End::Nic { sub_node: i });
                }
                if let Some(&i) = self.macs.get(&normalise_mac(piece))
                    && self.plan.sub_node_list[i].server == device
                {
                    return Ok(End::Nic { sub_node: i });
                }
            }
            let known: Vec<&str> = self.plan.servers[s]
                .sub_nodes
                .iter()
                .filter_map(|&i| self.plan.sub_node_list.get(i))
                .map(|sn| sn.nic.as_str())
                .collect();
            return Err((
                "unknown-port",
                format!(
                    "server {device} has no NIC `{port}` in the plan (its NICs: {})",
                    known.join(", ")
                ),
            ));
        }
        Err((
            "unknown-device",
            format!("{device} is neither a switch nor a server of the plan"),
        ))
    }

    /// The ends of a planned cable, when both exist in the plan.
    fn cable_ends(&self, c: &crate::plan::Cable) -> Option<(End, End)> {
        let &pa = self.phys.get(c.a.as_str())?;
        let a = self.port(pa, c.a_port)?;
        let b = match c.kind {
            CableKind::InterSwitch => {
                let &pb = self.phys.get(c.b.as_str())?;
                self.port(pb, c.b_port.parse().ok()?)?
            }
            CableKind::SubNode => End::Nic {
                sub_node: self.nic(&c.b, &c.b_port)?,
            },
        };
        Some((a, b))
    }

    /// A person's name for an end: `sw01 port 5 (sw01-u)`, `node03 mlx5_1`.
    fn name(&self, e: End) -> String {
        match e {
            End::Port { phys, port, slot } => {
                let base = format!("{} port {port}", self.phys_names[phys]);
                let vs = self.owner[phys][slot].1;
                if self.plan.switch_list[vs].name != self.phys_names[phys] {
                    format!("{base} ({})", self.plan.switch_list[vs].name)
                } else {
                    base
                }
            }
            End::Nic { sub_node } => {
                let sn = &self.plan.sub_node_list[sub_node];
                format!("{} {}", sn.server, sn.nic)
            }
        }
    }

    /// The device of an end (physical switch or server name).
    fn device(&self, e: End) -> &str {
        match e {
            End::Port { phys, .. } => self.phys_names[phys],
            End::Nic { sub_node } => &self.plan.sub_node_list[sub_node].server,
        }
    }

    /// A dense device id: physical switches, then servers.
    fn device_id(&self, e: End) -> usize {
        match e {
            End::Port { phys, .. } => phys,
            // A sub-node whose server is not in the plan has no device
            // (usize::MAX): lookups with `get` find nothing.
            End::Nic { sub_node } => self
                .phys_names
                .len()
                .saturating_add(self.sub_node_server[sub_node]),
        }
    }

    /// A VLAN half in words: `sw01-u (VLAN 101, upper part)`.
    fn half(&self, vs: usize) -> String {
        let s = &self.plan.switch_list[vs];
        match s.vlan {
            Some(v) => format!("{} (VLAN {v}, {} part)", s.name, s.part_or_tier.as_str()),
            None => s.name.clone(),
        }
    }
}

fn normalise_mac(s: &str) -> String {
    s.trim()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Checks a plan's own consistency and topology invariants. Every finding
/// is an error: [`crate::checked::CheckedPlan::load`] refuses a plan with
/// any, so this is the one check every command's plan passed.
pub fn validate_plan(plan: &Plan) -> Validation {
    let mut findings = Vec::new();
    name_rule(plan, &mut findings);
    let idx = Index::new(plan, &mut findings);
    consistency(&idx, &mut findings);
    let (links, loads) = planned_graph(&idx);
    records::records(&idx, &loads, &mut findings);
    if findings.is_empty() {
        records::render_model(plan, &mut findings);
    }
    findings.extend(topology_invariants(&idx, &links, &loads, "plan"));
    findings.extend(bandwidth(&idx));
    result(plan, Vec::new(), 0, 0, findings)
}

fn result(
    plan: &Plan,
    cabling: Vec<String>,
    observed: usize,
    matching: usize,
    findings: Vec<Finding>,
) -> Validation {
    Validation {
        plan: plan.name.clone(),
        topology: plan.topology,
        design: plan.describe(),
        cabling,
        planned_cables: plan.cables.len(),
        observed_cables: observed,
        matching_cables: matching,
        ok: findings.is_empty(),
        findings,
    }
}

/// The names pass: every name of the plan that reaches an output follows
/// the name rule ([`crate::names`]); one `name` finding per bad value.
fn name_rule(plan: &Plan, findings: &mut Vec<Finding>) {
    use crate::names::{check_address, check_model, check_name, check_pattern};
    let mut check =
        |object: String, what: &str, value: &str, rule: fn(&str) -> Result<(), String>| {
            if let Err(e) = rule(value) {
                findings.push(finding(
                    "name",
                    object,
                    format!("{what}: {e}"),
                    format!(
                        "rename it in the inventory and design again: {}",
                        crate::names::RULE
                    ),
                    None,
                ));
            }
        };
    check("plan".to_string(), "name", &plan.name, check_name);
    for s in &plan.switch_list {
        let object = format!("switch {}", s.name);
        check(object.clone(), "name", &s.name, check_name);
        check(object.clone(), "physical", &s.physical, check_name);
        check(object.clone(), "model", &s.model, check_model);
        if let Some(r) = &s.rack {
            check(object.clone(), "rack", r, check_name);
        }
        if let Some(p) = &s.port_name {
            check(object.clone(), "port_name", p, check_pattern);
        }
        // Peers are switch, server or NIC names; a port's peer_port is a
        // port number or a NIC name.
        if let Some(p) = s.ports.iter().find(|p| {
            p.peer.as_deref().is_some_and(|v| check_name(v).is_err())
                || p.peer_port
                    .as_deref()
                    .is_some_and(|v| check_name(v).is_err())
        }) {
            let o = format!("{object} port {}", p.port);
            check(
                o.clone(),
                "peer",
                p.peer.as_deref().unwrap_or("-"),
                check_name,
            );
            check(
                o,
                "peer_port",
                p.peer_port.as_deref().unwrap_or("-"),
                check_name,
            );
        }
    }
    for s in &plan.servers {
        let object = format!("server {}", s.name);
        check(object.clone(), "name", &s.name, check_name);
        if let Some(r) = &s.rack {
            check(object, "rack", r, check_name);
        }
    }
    for sn in &plan.sub_node_list {
        let object = format!("sub-node {}", sn.id);
        check(object.clone(), "id", &sn.id, check_name);
        check(object.clone(), "server", &sn.server, check_name);
        check(object.clone(), "nic", &sn.nic, check_name);
        check(object.clone(), "socket", &sn.socket, check_name);
        check(object.clone(), "switch", &sn.switch, check_name);
        let optional = [
            ("gpu", &sn.gpu),
            ("netdev", &sn.netdev),
            ("pcie_switch", &sn.pcie_switch),
        ];
        for (what, v) in optional {
            if let Some(v) = v {
                check(object.clone(), what, v, check_name);
            }
        }
        for (what, v) in [("mac", &sn.mac), ("ip", &sn.ip)] {
            if let Some(v) = v {
                check(object.clone(), what, v, check_address);
            }
        }
    }
    for c in &plan.cables {
        if [&c.a, &c.b, &c.b_port]
            .iter()
            .any(|v| check_name(v).is_err())
        {
            let object = format!("cable {} port {}", c.a, c.a_port);
            check(object.clone(), "a", &c.a, check_name);
            check(object.clone(), "b", &c.b, check_name);
            check(object, "b_port", &c.b_port, check_name);
        }
    }
    if let Some(q) = &plan.qos {
        for c in &q.classes {
            check(format!("qos class {}", c.name), "name", &c.name, check_name);
        }
    }
}

/// Inter-switch links (virtual switch pairs, once each) and sub-nodes per
/// switch, as the plan's ports say.
fn planned_graph(idx: &Index<'_>) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut links = Vec::new();
    let mut loads = vec![0usize; idx.plan.switch_list.len()];
    for (i, s) in idx.plan.switch_list.iter().enumerate() {
        for p in &s.ports {
            match p.role {
                PortRole::InterSwitch => {
                    if let Some(&j) = p.peer.as_deref().and_then(|n| idx.vs.get(n))
                        && (i, p.port)
                            < (
                                j,
                                p.peer_port
                                    .as_deref()
                                    .and_then(|x| x.parse().ok())
                                    .unwrap_or(0),
                            )
                    {
                        links.push((i, j));
                    }
                }
                PortRole::SubNode => loads[i] += 1,
                PortRole::Free | PortRole::Reserved => {}
            }
        }
    }
    (links, loads)
}

/// Ports, peers, cables, attachments and counts agree with each other.
fn consistency(idx: &Index<'_>, findings: &mut Vec<Finding>) {
    let plan = idx.plan;
    let mut bad = |object: String, message: String| {
        findings.push(finding(
            "inconsistent",
            object,
            message,
            "design the plan again, or correct the hand edit",
            None,
        ));
    };
    // The links the ports describe, per end.
    let mut from_ports = vec![NONE; idx.ends()];
    for s in &plan.switch_list {
        for w in s.ports.windows(2) {
            if w[0].port >= w[1].port {
                bad(
                    format!("switch {}", s.name),
                    format!("ports are not in order or repeat at port {}", w[1].port),
                );
            }
        }
        let me = idx.phys[s.physical.as_str()];
        for p in &s.ports {
            let object = || format!("{} port {}", s.name, p.port);
            let Some(here) = idx.port(me, p.port) else {
                continue;
            };
            match p.role {
                PortRole::InterSwitch => {
                    let (Some(peer), Some(pp)) = (&p.peer, &p.peer_port) else {
                        bad(object(), "inter-switch port without a peer".to_string());
                        continue;
                    };
                    let Some(&j) = idx.vs.get(peer.as_str()) else {
                        bad(object(), format!("peer {peer} is not a switch of the plan"));
                        continue;
                    };
                    let Ok(pp) = pp.parse::<u32>() else {
                        bad(object(), format!("peer port `{pp}` is not a port number"));
                        continue;
                    };
                    let back = plan.switch_list[j]
                        .ports
                        .binary_search_by_key(&pp, |x| x.port)
                        .ok()
                        .map(|k| &plan.switch_list[j].ports[k]);
                    let ok = back.is_some_and(|b| {
                        b.role == PortRole::InterSwitch
                            && b.peer.as_deref() == Some(s.name.as_str())
                            && b.peer_port.as_deref().and_then(|x| x.parse::<u32>().ok())
                                == Some(p.port)
                    });
                    let there = idx.port(idx.phys[plan.switch_list[j].physical.as_str()], pp);
                    match (ok, there) {
                        (true, Some(there)) => from_ports[idx.id(here)] = idx.id(there) as u32,
                        _ => bad(
                            object(),
                            format!("peer {peer} port {pp} does not point back to this port"),
                        ),
                    }
                }
                PortRole::SubNode => {
                    let (Some(server), Some(nic)) = (&p.peer, &p.peer_port) else {
                        bad(object(), "sub-node port without a peer".to_string());
                        continue;
                    };
                    match idx.nic(server, nic) {
                        Some(k) => {
                            let sn = &plan.sub_node_list[k];
                            if sn.switch != s.name || sn.port != p.port {
                                bad(
                                    object(),
                                    format!(
                                        "sub-node {} says it is on {} port {}",
                                        sn.id, sn.switch, sn.port
                                    ),
                                );
                            } else {
                                let nic_end = idx.id(End::Nic { sub_node: k });
                                from_ports[idx.id(here)] = nic_end as u32;
                                from_ports[nic_end] = idx.id(here) as u32;
                            }
                        }
                        None => bad(
                            object(),
                            format!("peer {server} {nic} is not a sub-node of the plan"),
                        ),
                    }
                }
                PortRole::Free | PortRole::Reserved => {
                    if p.peer.is_some() {
                        bad(object(), "a free or reserved port has a peer".to_string());
                    }
                }
            }
        }
    }
    // Every sub-node sits on a port that names it.
    for sn in &plan.sub_node_list {
        let ok = idx.vs.get(sn.switch.as_str()).is_some_and(|&i| {
            let s = &plan.switch_list[i];
            s.part_or_tier == sn.part_or_tier
                && s.ports
                    .binary_search_by_key(&sn.port, |p| p.port)
                    .is_ok_and(|k| {
                        let p = &s.ports[k];
                        p.role == PortRole::SubNode
                            && p.peer.as_deref() == Some(sn.server.as_str())
                            && p.peer_port.as_deref() == Some(sn.nic.as_str())
                    })
        });
        if !ok {
            bad(
                format!("sub-node {}", sn.id),
                format!(
                    "switch {} port {} ({}) does not carry it",
                    sn.switch,
                    sn.port,
                    sn.part_or_tier.as_str()
                ),
            );
        }
        if !idx.servers.contains_key(sn.server.as_str()) {
            bad(
                format!("sub-node {}", sn.id),
                format!("server {} is not in the server list", sn.server),
            );
        }
    }
    // Cables are exactly the links the ports describe.
    let mut from_cables = vec![NONE; idx.ends()];
    for c in &plan.cables {
        let object = || format!("cable {} port {} - {} {}", c.a, c.a_port, c.b, c.b_port);
        match idx.cable_ends(c) {
            Some((a, b)) => {
                let (ia, ib) = (idx.id(a), idx.id(b));
                if from_cables[ia] != NONE || from_cables[ib] != NONE {
                    bad(
                        object(),
                        "an end already has another cable in the list".to_string(),
                    );
                    continue;
                }
                from_cables[ia] = ib as u32;
                from_cables[ib] = ia as u32;
            }
            None => bad(
                object(),
                "an end is not a device or port of the plan".to_string(),
            ),
        }
    }
    for id in 0..idx.ends() {
        let (p, c) = (from_ports[id], from_cables[id]);
        if p == c {
            continue;
        }
        if p != NONE && (p as usize) > id {
            bad(
                format!(
                    "{} - {}",
                    idx.name(idx.end(id)),
                    idx.name(idx.end(p as usize))
                ),
                "the ports are linked but the cable list lacks the cable".to_string(),
            );
        }
        if c != NONE && (c as usize) > id {
            bad(
                format!(
                    "{} - {}",
                    idx.name(idx.end(id)),
                    idx.name(idx.end(c as usize))
                ),
                "the cable list has a cable the ports do not describe".to_string(),
            );
        }
    }
    // Counts.
    let inter = plan
        .cables
        .iter()
        .filter(|c| c.kind == CableKind::InterSwitch)
        .count();
    for (field, stated, actual) in [
        ("sub_nodes", plan.sub_nodes, plan.sub_node_list.len()),
        ("switches", plan.switches, plan.switch_list.len()),
        (
            "physical_switches",
            plan.physical_switches,
            idx.phys_names.len(),
        ),
        ("links", plan.links, inter),
    ] {
        if stated != actual {
            bad(
                field.to_string(),
                format!("says {stated} but the lists hold {actual}"),
            );
        }
    }
    if let Some(b) = &plan.bigraph
        && b.n != plan.switch_list.len()
    {
        bad(
            "bigraph.n".to_string(),
            format!(
                "says N={} but there are {} switches",
                b.n,
                plan.switch_list.len()
            ),
        );
    }
}

/// Downlink bandwidth at most uplink bandwidth on every BiGraph switch and
/// every fat-tree leaf (times the oversubscription).
fn bandwidth(idx: &Index<'_>) -> Vec<Finding> {
    let plan = idx.plan;
    let allowed = plan.fat_tree.as_ref().map_or(1.0, |f| f.oversubscription);
    let nic: HashMap<(&str, u32), u32> = plan
        .sub_node_list
        .iter()
        .map(|s| ((s.switch.as_str(), s.port), s.nic_gbps))
        .collect();
    let mut out = Vec::new();
    for s in &plan.switch_list {
        if !matches!(
            s.part_or_tier,
            Tier::Upper | Tier::Lower | Tier::Leaf | Tier::Edge
        ) {
            continue;
        }
        let mut down = 0u64;
        let mut up = 0u64;
        for p in &s.ports {
            match p.role {
                PortRole::SubNode => {
                    let g = nic
                        .get(&(s.name.as_str(), p.port))
                        .copied()
                        .unwrap_or(s.port_gbps);
                    down += u64::from(g.min(s.port_gbps));
                }
                PortRole::InterSwitch => up += u64::from(s.port_gbps),
                _ => {}
            }
        }
        if down > 0 && up > 0 && down as f64 > allowed * up as f64 + 1e-9 {
            out.push(finding(
                "invariant",
                format!("switch {}", s.name),
                format!(
                    "downlink {} Gbps exceeds {}uplink {} Gbps",
                    down,
                    if allowed > 1.0 {
                        format!("{}x ", gbps(allowed))
                    } else {
                        String::new()
                    },
                    up
                ),
                "move sub-nodes to other switches or add links",
                None,
            ));
        }
    }
    out
}

/// The topology's structural invariants over a set of links.
fn topology_invariants(
    idx: &Index<'_>,
    links: &[(usize, usize)],
    loads: &[usize],
    what: &str,
) -> Vec<Finding> {
    let plan = idx.plan;
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let inv = |object: String, message: String, fix: &str| {
        finding("invariant", object, message, fix, None)
    };

    // Connectivity.
    if sw.len() > 1 {
        let mut uf = UnionFind::<usize>::new(sw.len());
        for &(a, b) in links {
            uf.union(a, b);
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for i in 0..sw.len() {
            groups.entry(uf.find(i)).or_default().push(i);
        }
        if groups.len() > 1 {
            let mut parts: Vec<Vec<usize>> = groups.into_values().collect();
            parts.sort_by_key(|g| std::cmp::Reverse(g.len()));
            let small: Vec<String> = parts[1..]
                .iter()
                .flatten()
                .take(8)
                .map(|&i| sw[i].name.clone())
                .collect();
            out.push(inv(
                format!("{what} fabric"),
                format!(
                    "the switches form {} islands; cut off from the largest: {}{}",
                    parts.len(),
                    small.join(", "),
                    if parts[1..].iter().map(Vec::len).sum::<usize>() > 8 {
                        ", ..."
                    } else {
                        ""
                    }
                ),
                "cable the missing inter-switch links",
            ));
        }
    }

    match plan.topology {
        Topology::BiGraph => {
            let uppers: Vec<usize> = (0..sw.len())
                .filter(|&i| sw[i].part_or_tier == Tier::Upper)
                .collect();
            let lowers: Vec<usize> = (0..sw.len())
                .filter(|&i| sw[i].part_or_tier == Tier::Lower)
                .collect();
            for (i, s) in sw.iter().enumerate() {
                if s.part_or_tier.part().is_none() {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!("a BiGraph switch in tier {}", s.part_or_tier.as_str()),
                        "every BiGraph switch is in the upper or the lower part",
                    ));
                }
                let half = uppers.len().max(lowers.len());
                if loads[i] > half && half > 0 {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!(
                            "{} sub-nodes on one switch, more than N/2 = {half}",
                            loads[i]
                        ),
                        "move sub-nodes to switches with fewer (M <= N/2)",
                    ));
                }
            }
            if uppers.len() != lowers.len() {
                out.push(inv(
                    format!("{what} parts"),
                    format!("{} upper and {} lower switches", uppers.len(), lowers.len()),
                    "both parts have N/2 switches",
                ));
            }
            let pos = |list: &[usize]| -> HashMap<usize, usize> {
                list.iter().enumerate().map(|(k, &i)| (i, k)).collect()
            };
            let (up, lo) = (pos(&uppers), pos(&lowers));
            let mut count = vec![0u32; uppers.len() * lowers.len()];
            for &(a, b) in links {
                let (ta, tb) = (sw[a].part_or_tier, sw[b].part_or_tier);
                if ta == tb {
                    out.push(inv(
                        format!("{} - {}", sw[a].name, sw[b].name),
                        format!("a link inside the {} part", ta.as_str()),
                        "links run only between an upper and a lower switch",
                    ));
                    continue;
                }
                let (u, l) = if ta == Tier::Upper { (a, b) } else { (b, a) };
                if let (Some(&i), Some(&j)) = (up.get(&u), lo.get(&l)) {
                    count[i * lowers.len() + j] += 1;
                }
            }
            for (i, &u) in uppers.iter().enumerate() {
                for (j, &l) in lowers.iter().enumerate() {
                    match count[i * lowers.len() + j] {
                        1 => {}
                        0 => out.push(inv(
                            format!("{} - {}", sw[u].name, sw[l].name),
                            "no link between this upper and lower switch".to_string(),
                            "every upper switch has exactly one link to every lower switch",
                        )),
                        c => out.push(inv(
                            format!("{} - {}", sw[u].name, sw[l].name),
                            format!("{c} links between this upper and lower switch"),
                            "every upper switch has exactly one link to every lower switch",
                        )),
                    }
                }
            }
        }
        Topology::FatTree => {
            let three = plan.fat_tree.as_ref().is_some_and(|f| f.tiers == 3);
            for (i, s) in sw.iter().enumerate() {
                let access = if three { Tier::Edge } else { Tier::Leaf };
                if loads[i] > 0 && s.part_or_tier != access {
                    out.push(inv(
                        format!("switch {}", s.name),
                        format!(
                            "{} sub-nodes on a {} switch",
                            loads[i],
                            s.part_or_tier.as_str()
                        ),
                        if three {
                            "sub-nodes attach to edge switches only"
                        } else {
                            "sub-nodes attach to leaf switches only"
                        },
                    ));
                }
            }
            if three {
                out.extend(three_tier_invariants(plan, links));
            } else {
                out.extend(two_tier_invariants(plan, links));
            }
        }
    }
    out
}

fn two_tier_invariants(plan: &Plan, links: &[(usize, usize)]) -> Vec<Finding> {
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let leaves: Vec<usize> = (0..sw.len())
        .filter(|&i| sw[i].part_or_tier == Tier::Leaf)
        .collect();
    let spines: Vec<usize> = (0..sw.len())
        .filter(|&i| sw[i].part_or_tier == Tier::Spine)
        .collect();
    let w = plan.fat_tree.as_ref().map_or(1, |f| f.links_per_leaf_spine) as u32;
    let lpos: HashMap<usize, usize> = leaves.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let spos: HashMap<usize, usize> = spines.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut count = vec![0u32; leaves.len() * spines.len()];
    for &(a, b) in links {
        let (ta, tb) = (sw[a].part_or_tier, sw[b].part_or_tier);
        match (lpos.get(&a), spos.get(&b), lpos.get(&b), spos.get(&a)) {
            (Some(&l), Some(&s), _, _) | (_, _, Some(&l), Some(&s)) => {
                count[l * spines.len() + s] += 1
            }
            _ => out.push(finding(
                "invariant",
                format!("{} - {}", sw[a].name, sw[b].name),
                format!("a {}-{} link", ta.as_str(), tb.as_str()),
                "in a leaf-spine fabric links run only between a leaf and a spine",
                None,
            )),
        }
    }
    for (i, &l) in leaves.iter().enumerate() {
        for (j, &s) in spines.iter().enumerate() {
            let c = count[i * spines.len() + j];
            if c != w {
                out.push(finding(
                    "invariant",
                    format!("{} - {}", sw[l].name, sw[s].name),
                    format!("{c} links between this leaf and spine, the design has {w}"),
                    "every leaf has the same number of links to every spine",
                    None,
                ));
            }
        }
    }
    out
}

fn three_tier_invariants(plan: &Plan, links: &[(usize, usize)]) -> Vec<Finding> {
    let sw = &plan.switch_list;
    let mut out = Vec::new();
    let k = plan.fat_tree.as_ref().and_then(|f| f.k).unwrap_or(0) as usize;
    let h = k / 2;
    let mut edge_agg: HashMap<(usize, usize), u32> = HashMap::default();
    let mut core_pod: HashMap<(usize, usize), u32> = HashMap::default();
    let mut agg_cores = vec![0usize; sw.len()];
    let bad = |a: usize, b: usize, why: String| {
        finding(
            "invariant",
            format!("{} - {}", sw[a].name, sw[b].name),
            why,
            "a k-ary fat-tree links edges to the aggregation switches of their pod, and every aggregation switch to k/2 cores",
            None,
        )
    };
    for &(a, b) in links {
        let (x, y) = if sw[a].part_or_tier <= sw[b].part_or_tier {
            (a, b)
        } else {
            (b, a)
        };
        match (sw[x].part_or_tier, sw[y].part_or_tier) {
            (Tier::Edge, Tier::Aggregation) => {
                if sw[x].pod != sw[y].pod {
                    out.push(bad(
                        x,
                        y,
                        "an edge linked to an aggregation switch of another pod".to_string(),
                    ));
                } else {
                    *edge_agg.entry((x, y)).or_default() += 1;
                }
            }
            (Tier::Aggregation, Tier::Core) => {
                agg_cores[x] += 1;
                *core_pod
                    .entry((y, sw[x].pod.unwrap_or(usize::MAX)))
                    .or_default() += 1;
            }
            (ta, tb) => out.push(bad(x, y, format!("a {}-{} link", ta.as_str(), tb.as_str()))),
        }
    }
    let pods: Vec<usize> = {
        let mut p: Vec<usize> = sw.iter().filter_map(|s| s.pod).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    for e in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Edge) {
        for a in (0..sw.len())
            .filter(|&i| sw[i].part_or_tier == Tier::Aggregation && sw[i].pod == sw[e].pod)
        {
            let c = edge_agg.get(&(e, a)).copied().unwrap_or(0);
            if c != 1 {
                out.push(bad(e, a, format!("{c} links between an edge and an aggregation switch of its pod, the design has 1")));
            }
        }
    }
    for a in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Aggregation) {
        if agg_cores[a] != h {
            out.push(finding(
                "invariant",
                format!("switch {}", sw[a].name),
                format!("{} core links, the design has k/2 = {h}", agg_cores[a]),
                "link every aggregation switch to k/2 cores",
                None,
            ));
        }
    }
    for c in (0..sw.len()).filter(|&i| sw[i].part_or_tier == Tier::Core) {
        for &p in &pods {
            let n = core_pod.get(&(c, p)).copied().unwrap_or(0);
            if n != 1 {
                out.push(finding(
                    "invariant",
                    format!("switch {}", sw[c].name),
                    format!("{n} links to pod {p}, the design has 1"),
                    "link every core to exactly one aggregation switch of every pod",
                    None,
                ));
            }
        }
    }
    out
}

/// Compares observed cabling with the plan, once the plan passes its own
/// check ([`validate_plan`]; its findings are returned instead otherwise).
pub fn validate_cabling(plan: &Plan, observed: &[Observed], sources: &[String]) -> Validation {
    // Cabling is compared only with a plan that passes its own check: a
    // hand-edited, inconsistent plan is reported as `validate PLAN` reports
    // it (validate is the strictest reader, with or without cabling).
    let own = validate_plan(plan);
    if !own.ok {
        return own;
    }
    let mut findings = Vec::new();
    let idx = Index::new(plan, &mut findings);
    let n = idx.ends();

    // Planned peer and cable of every end.
    let mut expected = vec![NONE; n];
    let mut cable_of = vec![NONE; n];
    let mut planned: Vec<(End, End)> = Vec::with_capacity(plan.cables.len());
    for (k, c) in plan.cables.iter().enumerate() {
        if let Some((a, b)) = idx.cable_ends(c) {
            expected[idx.id(a)] = idx.id(b) as u32;
            expected[idx.id(b)] = idx.id(a) as u32;
            cable_of[idx.id(a)] = k as u32;
            cable_of[idx.id(b)] = k as u32;
            planned.push((a, b));
        }
    }
    let expected_of = |e: End| -> Option<End> {
        let p = expected[idx.id(e)];
        (p != NONE).then(|| idx.end(p as usize))
    };

    // Observed cables, each once, with conflicts reported.
    struct Seen<'o> {
        a: End,
        b: End,
        gbps: Option<f64>,
        source: &'o cabling::Origin,
    }
    let mut cables: Vec<Seen> = Vec::with_capacity(observed.len());
    let mut seen = vec![NONE; n];
    let mut reporting = vec![false; idx.phys_names.len() + plan.servers.len()];
    for o in observed {
        let a = idx.resolve(&o.device, &o.port);
        let b = idx.resolve(&o.peer, &o.peer_port);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err((kind, msg)), _) => {
                findings.push(finding(
                    kind,
                    format!("{} {}", o.device, o.port),
                    msg,
                    "fix the name or cable it as planned",
                    Some(o.origin.to_string()),
                ));
                continue;
            }
            (_, Err((kind, msg))) => {
                findings.push(finding(
                    kind,
                    format!("{} {}", o.peer, o.peer_port),
                    msg,
                    "fix the name or cable it as planned",
                    Some(o.origin.to_string()),
                ));
                continue;
            }
        };
        if let Some(r) = reporting.get_mut(idx.device_id(a)) {
            *r = true;
        }
        if a == b {
            findings.push(finding(
                "miswired",
                idx.name(a),
                "the port is cabled to itself",
                "remove the cable",
                Some(o.origin.to_string()),
            ));
            continue;
        }
        let (ia, ib) = (idx.id(a), idx.id(b));
        let k_a = seen[ia];
        if k_a != NONE {
            let prev = &cables[k_a as usize];
            if (prev.a == a && prev.b == b) || (prev.a == b && prev.b == a) {
                // The same cable seen from its other end.
                if let (Some(x), Some(y)) = (prev.gbps, o.gbps)
                    && (x - y).abs() > 1e-6
                {
                    findings.push(finding(
                        "speed-mismatch",
                        format!("{} - {}", idx.name(a), idx.name(b)),
                        format!("the two ends report {} and {} Gbps", gbps(x), gbps(y)),
                        "check the port speed settings at both ends",
                        Some(format!("{}, {}", prev.source, o.origin)),
                    ));
                }
                continue;
            }
        }
        let mut conflict = false;
        for (e, other) in [(a, b), (b, a)] {
            let k = seen[idx.id(e)];
            if k != NONE {
                let prev = &cables[k as usize];
                let prev_peer = if prev.a == e { prev.b } else { prev.a };
                findings.push(finding(
                    "conflict",
                    idx.name(e),
                    format!(
                        "reported connected to {} ({}) and to {} ({})",
                        idx.name(prev_peer),
                        prev.source,
                        idx.name(other),
                        o.origin
                    ),
                    "a port holds one cable: correct the cabling record",
                    Some(o.origin.to_string()),
                ));
                conflict = true;
            }
        }
        if conflict {
            continue;
        }
        let k = cables.len() as u32;
        cables.push(Seen {
            a,
            b,
            gbps: o.gbps,
            source: &o.origin,
        });
        seen[ia] = k;
        seen[ib] = k;
    }
    let observed_peer = |e: End| -> Option<End> {
        let k = seen[idx.id(e)];
        (k != NONE).then(|| {
            let c = &cables[k as usize];
            if c.a == e { c.b } else { c.a }
        })
    };

    // Classify every observed cable.
    let mut matching = 0;
    let mut handled = vec![false; cables.len()];
    for k in 0..cables.len() {
        if handled[k] {
            continue;
        }
        let Seen {
            a,
            b,
            gbps: speed,
            source,
        } = &cables[k];
        let (a, b) = (*a, *b);
        let exp_a = expected_of(a);
        let exp_b = expected_of(b);
        if exp_a == Some(b) {
            matching += 1;
            let planned_gbps = plan.cables[cable_of[idx.id(a)] as usize].gbps;
            if let (Some(s), p) = (speed, planned_gbps)
                && (s - f64::from(p)).abs() > 1e-6
            {
                findings.push(finding(
                    "speed-mismatch",
                    format!("{} - {}", idx.name(a), idx.name(b)),
                    format!("runs at {} Gbps, the plan expects {p} Gbps", gbps(*s)),
                    "check the cable, the optics and the port speed setting",
                    Some(source.to_string()),
                ));
            }
            continue;
        }
        // Crossed: the planned peers of a and b are cabled to each other.
        if let (Some(pa), Some(pb)) = (exp_a, exp_b)
            && observed_peer(pb) == Some(pa)
        {
            let other = seen[idx.id(pa)] as usize;
            handled[other] = true;
            let (x, y) = if idx.device(a) == idx.device(pb) {
                (a, pb)
            } else {
                (b, pa)
            };
            findings.push(finding(
                "crossed",
                format!("{} and {}", idx.name(x), idx.name(y)),
                format!(
                    "two cables are swapped: {} goes to {} and {} to {}; the plan has {} - {} and {} - {}",
                    idx.name(a),
                    idx.name(b),
                    idx.name(pb),
                    idx.name(pa),
                    idx.name(a),
                    idx.name(pa),
                    idx.name(pb),
                    idx.name(b)
                ),
                format!("swap the cables in {} and {}", idx.name(x), idx.name(y)),
                Some(format!("{}, {}", source, cables[other].source)),
            ));
            continue;
        }
        findings.push(classify(&idx, a, b, exp_a, exp_b, &source.to_string()));
    }

    // Planned cables nobody reported, on devices that reported.
    let mut silent: BTreeMap<&str, usize> = BTreeMap::new();
    for &(a, b) in &planned {
        if seen[idx.id(a)] != NONE || seen[idx.id(b)] != NONE {
            continue;
        }
        let reported = |e| reporting.get(idx.device_id(e)).copied().unwrap_or(false);
        if reported(a) || reported(b) {
            findings.push(finding(
                "missing",
                format!("{} - {}", idx.name(a), idx.name(b)),
                "the planned cable is not there".to_string(),
                format!("cable {} to {}", idx.name(a), idx.name(b)),
                None,
            ));
        } else {
            *silent.entry(idx.device(a)).or_default() += 1;
        }
    }
    for (device, n) in silent {
        findings.push(finding(
            "no-data",
            format!("switch {device}"),
            format!("the cabling input says nothing about it ({n} planned cables unchecked)"),
            "add its cabling (CSV rows or its LLDP neighbours)",
            None,
        ));
    }

    // The as-built graph must still be the topology.
    let mut links = Vec::new();
    let mut loads = vec![0usize; plan.switch_list.len()];
    for c in &cables {
        match (idx.owner_of(c.a), idx.owner_of(c.b)) {
            (Some(x), Some(y)) => links.push((x, y)),
            (Some(x), None) | (None, Some(x)) => loads[x] += 1,
            (None, None) => {}
        }
    }
    if !cables.is_empty() && findings.iter().all(|f| f.kind != "no-data") {
        for mut f in topology_invariants(&idx, &links, &loads, "as-built") {
            f.message = format!("as built: {}", f.message);
            findings.push(f);
        }
    }
    result(plan, sources.to_vec(), cables.len(), matching, findings)
}

/// Explains one observed cable that is not in the plan.
fn classify(
    idx: &Index<'_>,
    a: End,
    b: End,
    exp_a: Option<End>,
    exp_b: Option<End>,
    source: &str,
) -> Finding {
    let src = Some(source.to_string());
    // A sub-node cable: name the NIC and where the plan wants it.
    let nic_port = match (a, b) {
        (End::Nic { .. }, End::Port { .. }) => Some((a, b, exp_a)),
        (End::Port { .. }, End::Nic { .. }) => Some((b, a, exp_b)),
        _ => None,
    };
    if let Some((nic, port, Some(planned))) = nic_port
        && let (
            End::Port {
                phys: pp,
                port: pport,
                ..
            },
            End::Port {
                phys: op,
                port: oport,
                ..
            },
        ) = (planned, port)
    {
        let planned_vs = idx.owner_of(planned);
        let seen_vs = idx.owner_of(port);
        let fix = format!(
            "move the cable from {} to {}",
            idx.name(port),
            idx.name(planned)
        );
        if pp != op {
            return finding(
                "wrong-switch",
                idx.name(nic),
                format!(
                    "cabled to {}; the plan puts it on {}",
                    idx.name(port),
                    idx.name(planned)
                ),
                fix,
                src,
            );
        }
        if planned_vs != seen_vs {
            return finding(
                "wrong-vlan-half",
                idx.name(nic),
                format!(
                    "cabled to {} port {oport}, which is in {}; the plan puts it in {} on port {pport}",
                    idx.phys_names[op],
                    seen_vs.map_or("no VLAN half".to_string(), |v| idx.half(v)),
                    planned_vs.map_or("no VLAN half".to_string(), |v| idx.half(v)),
                ),
                fix,
                src,
            );
        }
        return finding(
            "wrong-port",
            idx.name(nic),
            format!(
                "cabled to {} port {oport} instead of port {pport} (same switch; port descriptions and configs expect {pport})",
                idx.phys_names[op]
            ),
            fix,
            src,
        );
    }
    match (exp_a, exp_b) {
        (None, None) => finding(
            "extra",
            format!("{} - {}", idx.name(a), idx.name(b)),
            "a cable the plan does not have (both ports are free in the plan)".to_string(),
            "remove it, or design the plan again if it is meant to be there",
            src,
        ),
        _ => {
            let mut planned = Vec::new();
            if let Some(p) = exp_a {
                planned.push(format!("{} - {}", idx.name(a), idx.name(p)));
            }
            if let Some(p) = exp_b {
                planned.push(format!("{} - {}", idx.name(b), idx.name(p)));
            }
            let fix = match exp_a.or(exp_b) {
                Some(_) => format!("recable as planned: {}", planned.join(" and ")),
                None => "remove it".to_string(),
            };
            finding(
                "miswired",
                format!("{} - {}", idx.name(a), idx.name(b)),
                format!("not in the plan; the plan has {}", planned.join(" and ")),
                fix,
                src,
            )
        }
    }
}

/// At most this many findings of one kind are printed for people.
const SHOW_PER_KIND: usize = 25;

/// Renders a validation for people.
pub fn render_table(v: &Validation, plan_file: &str) -> String {
    let mut out = format!(
        "Validation of {plan_file}: {} ({}, {} planned cables)\n",
        v.plan, v.design, v.planned_cables
    );
    if v.cabling.is_empty() {
        out.push_str("Checked: the plan's own consistency and topology invariants\n");
    } else {
        out.push_str(&format!(
            "Cabling: {} ({} cables read, {} as planned)\n",
            v.cabling.join(", "),
            v.observed_cables,
            v.matching_cables
        ));
    }
    if v.ok {
        out.push_str("\nResult: no findings\n");
        return out;
    }
    let mut by_kind: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in &v.findings {
        by_kind.entry(f.kind).or_default().push(f);
    }
    for (kind, list) in &by_kind {
        out.push_str(&format!("\n{kind} ({}):\n", list.len()));
        for f in list.iter().take(SHOW_PER_KIND) {
            match &f.source {
                Some(src) => out.push_str(&format!("  {}  [{src}]\n", f.object)),
                None => out.push_str(&format!("  {}\n", f.object)),
            }
            out.push_str(&format!("    {}\n    fix: {}\n", f.message, f.fix));
        }
        if list.len() > SHOW_PER_KIND {
            out.push_str(&format!(
                "  ... and {} more (--format json lists them all)\n",
                list.len() - SHOW_PER_KIND
            ));
        }
    }
    let summary: Vec<String> = by_kind
        .iter()
        .map(|(k, l)| format!("{} {k}", l.len()))
        .collect();
    out.push_str(&format!(
        "\nResult: {} finding{} ({})\n",
        v.findings.len(),
        if v.findings.len() == 1 { "" } else { "s" },
        summary.join(", ")
    ));
    out
}

#[cfg(test)]
mod tests;
