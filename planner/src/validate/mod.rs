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

mod as_built;
mod breakout_limits;
pub mod cabling;
mod invariants;
mod nics;
mod plan_checks;
mod records;
mod refs;

pub use as_built::validate_cabling;
use invariants::topology_invariants;
pub(crate) use plan_checks::breakouts;
use plan_checks::{bandwidth, consistency, name_rule, planned_graph};

pub(crate) use records::render_refusals;

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use petgraph::unionfind::UnionFind;
use serde::Serialize;

use crate::network::RouteGraph;
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
    /// [`crate::names`]), `breakout` (a cage both whole and broken out,
    /// lanes no cable carries, or a cage the switch model gives up for a
    /// breakout), `position` (a device above its rack's top
    /// or overlapping another).
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

/// A cable end: a port the plan lists on a physical switch, or a port of
/// a sub-node's NIC (0, or 1 for the second port of a dual-port NIC).
/// `slot` is the port's position in the switch's port list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum End {
    Port { phys: usize, port: u32, slot: usize },
    Nic { sub_node: usize, port: u8 },
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
    /// Dense id of sub-node 0 (its NIC's port 0); the second ports of
    /// dual-port NICs follow the first ports.
    nic_base: usize,
    /// NIC ports per sub-node: 2 when the plan has dual-port NICs.
    nic_ports: usize,
    /// NIC ports in all: one per sub-node, two for a dual-port NIC.
    nic_port_count: usize,
    /// Some sub-node's NIC has an address in the plan.
    addressed: bool,
    servers: HashMap<&'p str, usize>,
    /// The plan's references as numbers, resolved through the tables
    /// above.
    refs: refs::Refs,
    /// Normalised MAC -> sub-node.
    macs: HashMap<String, usize>,
    /// The servers' NICs, for [`Index::nic_at`].
    nics: nics::Nics<'p>,
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
        let refs = refs::Refs::new(plan, &vs, &phys, &servers);
        // One pass over the sub-nodes for the MACs, the dual-port NICs
        // and whether any NIC has an address.
        let mut macs = HashMap::default();
        let mut second_ports = 0;
        let mut addressed = false;
        for (i, sn) in plan.sub_node_list.iter().enumerate() {
            if let Some(m) = &sn.mac {
                macs.insert(normalise_mac(m), i);
            }
            second_ports += usize::from(sn.port1.is_some());
            addressed |= sn.ip.is_some();
        }
        Self {
            plan,
            vs,
            phys_names,
            phys,
            owner,
            port_base,
            nic_base: next,
            nic_ports: if second_ports > 0 { 2 } else { 1 },
            nic_port_count: plan.sub_node_list.len() + second_ports,
            addressed,
            servers,
            refs,
            macs,
            nics: nics::Nics::new(plan),
        }
    }

    /// Number of dense ids.
    fn ends(&self) -> usize {
        self.nic_base + self.nic_ports * self.plan.sub_node_list.len()
    }

    fn id(&self, e: End) -> usize {
        match e {
            End::Port { phys, slot, .. } => self.port_base[phys] + slot,
            End::Nic { sub_node, port } => {
                self.nic_base + usize::from(port) * self.plan.sub_node_list.len() + sub_node
            }
        }
    }

    fn end(&self, id: usize) -> End {
        if id >= self.nic_base {
            let s = self.plan.sub_node_list.len().max(1);
            let k = id - self.nic_base;
            return End::Nic {
                sub_node: k % s,
                port: (k / s) as u8,
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
        let list = &self.owner[phys];
        slot_of(list.len(), |k| list[k].0, port).map(|slot| End::Port { phys, port, slot })
    }

    /// The virtual switch owning a port end.
    fn owner_of(&self, e: End) -> Option<usize> {
        match e {
            End::Port { phys, slot, .. } => Some(self.owner[phys][slot].1),
            End::Nic { .. } => None,
        }
    }

    /// The sub-node and NIC port of a server's NIC port: its NIC's name or
    /// interface name (port 0), or for a dual-port NIC `<nic>:p0` or
    /// `<nic>:p1`.
    fn nic(&self, server: &str, nic: &str) -> Option<(usize, u8)> {
        self.nic_at(*self.servers.get(server)?, nic)
    }

    /// [`Index::nic`] of the server at index `s` of `plan.servers`: as
    /// [`Index::nic_at_plain`] finds it, from the compact tables when the
    /// name allows.
    fn nic_at(&self, s: usize, nic: &str) -> Option<(usize, u8)> {
        match self.nics.find(s, nic) {
            Some(found) => found,
            None => self.nic_at_plain(s, nic),
        }
    }

    /// [`Index::nic_at`] by reading the server's sub-node records.
    fn nic_at_plain(&self, s: usize, nic: &str) -> Option<(usize, u8)> {
        self.plan.servers[s].sub_nodes.iter().find_map(|&i| {
            let sn = self.plan.sub_node_list.get(i)?;
            if sn.nic == nic || sn.netdev.as_deref() == Some(nic) {
                return Some((i, 0));
            }
            let port = nic.strip_prefix(sn.nic.as_str())?.strip_prefix(":p")?;
            match (port, &sn.port1) {
                ("0", _) => Some((i, 0)),
                ("1", Some(_)) => Some((i, 1)),
                _ => None,
            }
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
            && let Some(b) = self.plan.switch_list[vs].breakout
        {
            return self.lane_port(phys, b, text);
        }
        self.cage_port(phys, text)
    }

    /// The logical port of a lane name on a broken-out switch: the cage's
    /// name (as [`Index::cage_port`] reads it) with the lane as Linux
    /// switches write it (`swp5s1`, `5s1`: from 0) or Comware does
    /// (`...1/0/5:2`: from 1), or EOS's `Ethernet5/5` (the lane's first
    /// electrical lane, [`crate::plan::Breakout::eos_lane`]).
    fn lane_port(&self, phys: usize, b: crate::plan::Breakout, text: &str) -> Option<u32> {
        let split = |sep: char| {
            let (cage, lane) = text.rsplit_once(sep)?;
            Some((cage, lane.parse::<u32>().ok()?))
        };
        let (cage, lane) = if let Some((cage, lane)) = split(':') {
            (self.cage_port(phys, cage)?, lane.checked_sub(1)?)
        } else if let Some((cage, lane)) = split('s') {
            (self.cage_port(phys, cage)?, lane)
        } else if let Some((cage, first)) = split('/') {
            (self.cage_port(phys, cage)?, b.eos_lane_of(first)?)
        } else {
            return None;
        };
        (lane < b.lanes).then(|| b.port(cage, lane))
    }

    /// Resolves the name of a whole port (or a cage): the interface name
    /// from the switch's `port_name` pattern, or the trailing number.
    fn cage_port(&self, phys: usize, text: &str) -> Option<u32> {
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
                if let Some((i, port)) = self.nic(device, piece.trim()) {
                    return Ok(End::Nic { sub_node: i, port });
                }
                if let Some(&i) = self.macs.get(&normalise_mac(piece))
                    && self.plan.sub_node_list[i].server == device
                {
                    return Ok(End::Nic {
                        sub_node: i,
                        port: 0,
                    });
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

    /// The ends of planned cable `k` (`plan.cables[k]`), when both exist
    /// in the plan.
    fn cable_ends(&self, k: usize) -> Option<(End, End)> {
        let c = &self.plan.cables[k];
        let (pa, pb) = self.refs.cable[k];
        let a = self.port(known(pa)?, c.a_port)?;
        let b = match c.kind {
            CableKind::InterSwitch => self.port(known(pb)?, c.b_port.parse().ok()?)?,
            CableKind::SubNode => {
                let (sub_node, port) = self.nic_at(known(pb)?, &c.b_port)?;
                End::Nic { sub_node, port }
            }
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
            End::Nic { sub_node, port } => {
                let sn = &self.plan.sub_node_list[sub_node];
                format!("{} {}", sn.server, sn.port_label(usize::from(port)))
            }
        }
    }

    /// The device of an end (physical switch or server name).
    fn device(&self, e: End) -> &str {
        match e {
            End::Port { phys, .. } => self.phys_names[phys],
            End::Nic { sub_node, .. } => &self.plan.sub_node_list[sub_node].server,
        }
    }

    /// A dense device id: physical switches, then servers.
    fn device_id(&self, e: End) -> usize {
        match e {
            End::Port { phys, .. } => phys,
            // A sub-node whose server is not in the plan has no device
            // (usize::MAX): lookups with `get` find nothing.
            End::Nic { sub_node, .. } => self
                .phys_names
                .len()
                .saturating_add(known(self.refs.sub_server[sub_node]).unwrap_or(usize::MAX)),
        }
    }

    /// A VLAN half in words: `sw01-u (VLAN 101, upper part)`.
    fn half(&self, vs: usize) -> String {
        let s = &self.plan.switch_list[vs];
        match s.vlan {
            Some(v) => format!("{} (VLAN {v}, {} part)", s.name, s.part_or_tier.as_str()),
            None => s.name.to_string(),
        }
    }
}

/// The position of `number` in a list of `len` strictly increasing
/// numbers (`at(k)` the k-th): where it would be if the numbers ran
/// without gaps from the first, as switch ports usually do, else found by
/// a binary search. A strictly increasing list holds each number at most
/// once, so both find the same position.
fn slot_of(len: usize, at: impl Fn(usize) -> u32, number: u32) -> Option<usize> {
    if len == 0 {
        return None;
    }
    if let Some(guess) = number.checked_sub(at(0)).map(|g| g as usize)
        && guess < len
        && at(guess) == number
    {
        return Some(guess);
    }
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match at(mid).cmp(&number) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// A resolved number, or None for [`NONE`].
fn known(n: u32) -> Option<usize> {
    (n != NONE).then_some(n as usize)
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
    check_plan(plan, true)
}

/// [`validate_plan`], and the plan's route graph when the check built it
/// (it does when every check before the render model's passed): the
/// checked plan keeps it, so that routing on the plan does not build it
/// again.
pub(crate) fn validate_plan_keeping_graph(plan: &Plan) -> (Validation, Option<Arc<RouteGraph>>) {
    check_plan_keeping_graph(plan, true)
}

/// [`validate_plan`]; with `quick` false the render model is always
/// assembled for its refusals (tests compare the two).
fn check_plan(plan: &Plan, quick: bool) -> Validation {
    check_plan_keeping_graph(plan, quick).0
}

/// [`check_plan`], and the route graph the check built, if it built one.
fn check_plan_keeping_graph(plan: &Plan, quick: bool) -> (Validation, Option<Arc<RouteGraph>>) {
    let mut findings = Vec::new();
    name_rule(plan, &mut findings);
    plan_checks::racks(plan, &mut findings);
    plan_checks::positions(plan, &mut findings);
    let idx = Index::new(plan, &mut findings);
    consistency(&idx, &mut findings);
    let (links, loads) = planned_graph(&idx);
    records::records(&idx, &loads, &mut findings);
    let mut graph = None;
    if findings.is_empty() {
        graph = records::render_model(&idx, quick, &mut findings);
    }
    findings.extend(topology_invariants(&idx, &links, &loads, "plan"));
    findings.extend(bandwidth(&idx));
    findings.extend(breakouts(plan));
    findings.extend(plan_checks::pci(plan));
    (result(plan, Vec::new(), 0, 0, findings), graph)
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
                "  ... and {} more (the JSON report lists them all)\n",
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
mod fast_tests;
#[cfg(test)]
mod refs_tests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod tests;
