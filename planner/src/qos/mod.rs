//! The QoS and addressing intent: what every switch and host configuration
//! of a plan is rendered from, and what `check-qos` proves deadlock-free.
//!
//! # Classes
//!
//! Hosts mark RoCE traffic with the DSCP of their *class*; switches trust
//! DSCP and map it to a priority (802.1p, traffic class and egress queue
//! are the same number everywhere). A class is lossless when PFC and ECN
//! run on its priority. The defaults follow RoCEv2 practice:
//!
//! | design | class | sourced in | DSCP | priority |
//! |---|---|---|---|---|
//! | BiGraph | `roce-upper` | the upper part | 26 | 3 |
//! | BiGraph | `roce-lower` | the lower part | 34 | 4 |
//! | fat-tree, or BiGraph with `per_direction = false` | `roce` | anywhere | 26 | 3 |
//!
//! Congestion notification packets (CNP) use DSCP 48 on priority 6, a
//! strict-priority queue without PFC. Every other DSCP maps to priority 0,
//! lossy.
//!
//! Why two classes on a BiGraph: a flow between two switches of one part
//! turns in the other part, so with a single lossless priority four such
//! flows can close a loop of buffer dependencies (EFLOPS Fig. 7, Sec. IV-B).
//! Traffic sourced in the upper part only ever waits on an upper-to-lower
//! link followed by a lower-to-upper one, and traffic sourced in the lower
//! part the reverse, so giving each part its own priority leaves every
//! priority's dependency graph without a cycle. `check-qos` proves it on
//! the plan's routes.
//!
//! # The class a sub-node marks
//!
//! A sub-node marks the first class whose `part` is the part of the switch
//! it is cabled to, else the first class without a part. Further classes
//! only add entries to the switches' DSCP map.
//!
//! # Overrides
//!
//! The inventory's optional `[qos]` and `[addressing]` tables override the
//! defaults (`docs/inventory.md`); [`QosIntent::resolve`] applies them for
//! the designed topology and `design` copies the result into the plan.

pub mod rules;

use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::error::Problem;
use crate::fabric::{Part, Topology};

/// Default MTU of switch ports.
pub const DEFAULT_MTU: u32 = 9216;
/// Smallest MTU the intent accepts.
pub const MIN_MTU: u32 = 1500;
/// Largest MTU the intent accepts.
pub const MAX_MTU: u32 = 9216;
/// Default RoCEv2 GID index on the hosts (`NCCL_IB_GID_INDEX`): the IPv4
/// RoCEv2 entry of a ConnectX port whose first address is IPv4.
pub const DEFAULT_GID_INDEX: u8 = 3;

/// Everything the switch and host configurations need to know about QoS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QosIntent {
    /// MTU of every switch port (see `switch_mtu` for exceptions).
    pub mtu: u32,
    /// BiGraph: traffic sourced in the upper and in the lower part uses
    /// different lossless priorities (always false on a fat-tree).
    pub per_direction: bool,
    /// Traffic classes, in order; see the module documentation for which
    /// class a sub-node marks.
    pub classes: Vec<TrafficClass>,
    /// Congestion notification packets.
    pub cnp: Cnp,
    /// ECN marking on the lossless queues.
    pub ecn: Ecn,
    /// PFC watchdog (deadlock detection and recovery) timers.
    pub pfc_watchdog: PfcWatchdog,
    /// RoCEv2 GID index the hosts use (`NCCL_IB_GID_INDEX`).
    pub gid_index: u8,
    /// MTU of the ports of particular physical switches, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub switch_mtu: BTreeMap<String, u32>,
}

/// A traffic class: the DSCP hosts mark and the priority switches give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrafficClass {
    /// Name (`roce-upper`).
    pub name: String,
    /// The BiGraph part whose sub-nodes mark this class; none for a class
    /// any sub-node may mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
    /// DSCP, 0 to 63.
    pub dscp: u8,
    /// Priority (802.1p, traffic class and queue), 0 to 7.
    pub priority: u8,
    /// PFC and ECN run on the priority.
    pub lossless: bool,
}

/// Congestion notification packets: a strict-priority queue without PFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cnp {
    /// DSCP of CNPs, 0 to 63.
    pub dscp: u8,
    /// Their priority, 0 to 7.
    pub priority: u8,
}

/// ECN (WRED marking) thresholds of the lossless queues; 1 KB is 1024
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ecn {
    /// Queue depth where marking starts.
    pub min_kb: u32,
    /// Queue depth where every packet is marked.
    pub max_kb: u32,
    /// Marking probability at `max_kb`, in percent.
    pub probability: u8,
}

/// PFC watchdog timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfcWatchdog {
    /// A queue paused this long is declared deadlocked.
    pub detection_ms: u32,
    /// PFC is restored this long after the storm ends.
    pub restoration_ms: u32,
    /// How often queues are polled: at most half of the other two.
    pub polling_ms: u32,
}

/// How sub-nodes and links are addressed when the inventory does not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Addressing {
    /// Pool of sub-node subnets for switches whose NICs have no address in
    /// the inventory: one block per (virtual) switch.
    pub sub_node_pool: String,
    /// Pool of /31 inter-switch link addresses.
    pub link_pool: String,
    /// VLAN of switches that are not split in two (a split switch's halves
    /// keep their inventory VLANs).
    pub vlan: u16,
}

/// The default `link_pool`: 32,768 /31 links.
const DEFAULT_LINK_POOL: Ipv4Prefix = Ipv4Prefix {
    network: 0x0aff_0000,
    len: 16,
};

/// The shortest link pool `design` widens the default to: 10.192.0.0/10,
/// 2,097,152 links, as many as the switch ports of a plan within
/// [`crate::limits::SWITCH_PORTS`] can cable (a test holds the two equal).
const WIDEST_LINK_POOL: u8 = 10;

impl Default for Addressing {
    fn default() -> Self {
        Self {
            sub_node_pool: "10.0.0.0/8".to_string(),
            link_pool: DEFAULT_LINK_POOL.to_string_with_len(),
            vlan: 100,
        }
    }
}

impl Addressing {
    /// Sizes the default link pool for a plan with `links` inter-switch
    /// links: when `link_pool` is the default 10.255.0.0/16 and `links` is
    /// above its 32,768, it becomes the shortest prefix holding them that
    /// still ends at 10.255.255.255 (10.254.0.0/15 for 65,536 links, down to
    /// 10.192.0.0/10). Returns the note saying so; an inventory's own pool is
    /// kept (the design's address check refuses it when too small).
    pub fn size_link_pool(&mut self, links: u64) -> Option<String> {
        let needed = links.saturating_mul(2);
        if self.link_pool != DEFAULT_LINK_POOL.to_string_with_len()
            || needed <= DEFAULT_LINK_POOL.size()
        {
            return None;
        }
        let mut len = DEFAULT_LINK_POOL.len;
        while len > WIDEST_LINK_POOL && Ipv4Prefix::containing(0, len).size() < needed {
            len -= 1;
        }
        let pool = Ipv4Prefix::containing(DEFAULT_LINK_POOL.network, len);
        self.link_pool = pool.to_string_with_len();
        Some(format!(
            "link_pool {pool}: the plan has {links} inter-switch links, more than the 32,768 of the default {DEFAULT_LINK_POOL}"
        ))
    }

    /// The two pools, parsed; errors name the key and what is wrong.
    pub fn pools(&self) -> Result<(Ipv4Prefix, Ipv4Prefix), Problem> {
        let sub = Ipv4Prefix::parse(&self.sub_node_pool).map_err(|e| {
            Problem::at(
                None,
                "addressing sub_node_pool",
                e,
                "write an IPv4 prefix such as 10.0.0.0/8",
            )
        })?;
        let link = Ipv4Prefix::parse(&self.link_pool).map_err(|e| {
            Problem::at(
                None,
                "addressing link_pool",
                e,
                "write an IPv4 prefix such as 10.255.0.0/16",
            )
        })?;
        Ok((sub, link))
    }
}

/// An IPv4 prefix: a network address and a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Prefix {
    /// Network address (host bits zero).
    pub network: u32,
    /// Prefix length, 0 to 32.
    pub len: u8,
}

impl Ipv4Prefix {
    /// Parses `a.b.c.d/len` whose host bits are zero.
    pub fn parse(s: &str) -> Result<Ipv4Prefix, String> {
        let (addr, len) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` has no /length"))?;
        let addr: Ipv4Addr = addr
            .parse()
            .map_err(|_| format!("`{s}` is not an IPv4 prefix"))?;
        let len: u8 = match len.parse() {
            Ok(l) if l <= 32 => l,
            _ => return Err(format!("`{s}` has a bad prefix length (0 to 32)")),
        };
        let p = Ipv4Prefix::containing(u32::from(addr), len);
        if p.network != u32::from(addr) {
            return Err(format!(
                "`{s}` has host bits set; the network is {}",
                p.to_string_with_len()
            ));
        }
        Ok(p)
    }

    /// The prefix of length `len` that holds `addr`.
    pub fn containing(addr: u32, len: u8) -> Ipv4Prefix {
        Ipv4Prefix {
            network: addr & Self::mask_of(len),
            len,
        }
    }

    fn mask_of(len: u8) -> u32 {
        if len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(len))
        }
    }

    /// The netmask as a number.
    pub fn mask(&self) -> u32 {
        Self::mask_of(self.len)
    }

    /// Number of addresses.
    pub fn size(&self) -> u64 {
        1u64 << (32 - u32::from(self.len))
    }

    /// The last address (broadcast).
    pub fn last(&self) -> u32 {
        self.network | !self.mask()
    }

    /// True when `addr` is inside.
    pub fn contains(&self, addr: u32) -> bool {
        addr & self.mask() == self.network
    }

    /// True when the two prefixes share an address.
    pub fn overlaps(&self, other: &Ipv4Prefix) -> bool {
        self.contains(other.network) || other.contains(self.network)
    }

    /// `10.0.0.0/8`.
    pub fn to_string_with_len(&self) -> String {
        format!("{}/{}", Ipv4Addr::from(self.network), self.len)
    }
}

impl fmt::Display for Ipv4Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.network), self.len)
    }
}

/// The inventory's `[qos]` and `[addressing]` tables, checked value by
/// value; [`QosIntent::resolve`] merges them with a topology's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosOverrides {
    /// The inventory file, for errors found when resolving.
    pub file: String,
    /// Line of the `[qos]` table.
    pub line: Option<usize>,
    /// `mtu`.
    pub mtu: Option<u32>,
    /// `per_direction`.
    pub per_direction: Option<bool>,
    /// `gid_index`.
    pub gid_index: Option<u8>,
    /// `[[qos.class]]` tables in order.
    pub classes: Vec<ClassOverride>,
    /// `[qos.cnp]`.
    pub cnp_dscp: Option<u8>,
    /// `[qos.cnp]`.
    pub cnp_priority: Option<u8>,
    /// Line of `[qos.cnp]`.
    pub cnp_line: Option<usize>,
    /// `[qos.ecn]`: min_kb, max_kb, probability.
    pub ecn: (Option<u32>, Option<u32>, Option<u8>),
    /// Line of `[qos.ecn]`.
    pub ecn_line: Option<usize>,
    /// `[qos.pfc_watchdog]`: detection_ms, restoration_ms, polling_ms.
    pub watchdog: (Option<u32>, Option<u32>, Option<u32>),
    /// Line of `[qos.pfc_watchdog]`.
    pub watchdog_line: Option<usize>,
    /// `[[qos.switch]]`: physical switch, MTU, line.
    pub switch_mtu: Vec<(String, u32, Option<usize>)>,
    /// `[addressing]`, with defaults for keys not given.
    pub addressing: Addressing,
}

/// One `[[qos.class]]` table: a default class to change (by name) or a new
/// class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassOverride {
    /// Class name.
    pub name: String,
    /// `part`: `Some(None)` for `"any"`.
    pub part: Option<Option<Part>>,
    /// `dscp`.
    pub dscp: Option<u8>,
    /// `priority`.
    pub priority: Option<u8>,
    /// `lossless`.
    pub lossless: Option<bool>,
    /// Line of the table.
    pub line: Option<usize>,
}

/// What a problem of the intent is about, to find its line in the
/// inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    General,
    Class(String),
    Cnp,
    Ecn,
    Watchdog,
    Switch(String),
}

impl QosIntent {
    /// The defaults for a topology (module documentation).
    pub fn defaults(topology: Topology, per_direction: bool) -> QosIntent {
        let classes = match topology {
            Topology::BiGraph if per_direction => vec![
                TrafficClass {
                    name: "roce-upper".to_string(),
                    part: Some(Part::Upper),
                    dscp: 26,
                    priority: 3,
                    lossless: true,
                },
                TrafficClass {
                    name: "roce-lower".to_string(),
                    part: Some(Part::Lower),
                    dscp: 34,
                    priority: 4,
                    lossless: true,
                },
            ],
            _ => vec![TrafficClass {
                name: "roce".to_string(),
                part: None,
                dscp: 26,
                priority: 3,
                lossless: true,
            }],
        };
        QosIntent {
            mtu: DEFAULT_MTU,
            per_direction: topology == Topology::BiGraph && per_direction,
            classes,
            cnp: Cnp {
                dscp: 48,
                priority: 6,
            },
            ecn: Ecn {
                min_kb: 150,
                max_kb: 1500,
                probability: 100,
            },
            pfc_watchdog: PfcWatchdog {
                detection_ms: 200,
                restoration_ms: 400,
                polling_ms: 100,
            },
            gid_index: DEFAULT_GID_INDEX,
            switch_mtu: BTreeMap::new(),
        }
    }

    /// Merges the inventory's overrides with the defaults of `topology`
    /// and checks the result; problems carry the inventory lines. Changes
    /// to the default classes of another design (`roce-upper` and
    /// `roce-lower` on a fat-tree, `roce` on a per-direction BiGraph) do
    /// not apply and come back as notes, so one inventory can be designed
    /// (and compared) both ways.
    pub fn resolve(
        topology: Topology,
        o: &QosOverrides,
    ) -> Result<(QosIntent, Vec<String>), Vec<Problem>> {
        let mut q = QosIntent::defaults(topology, o.per_direction.unwrap_or(true));
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        let foreign: &[&str] = if q.per_direction {
            &["roce"]
        } else {
            &["roce-upper", "roce-lower"]
        };
        if let Some(m) = o.mtu {
            q.mtu = m;
        }
        if let Some(g) = o.gid_index {
            q.gid_index = g;
        }
        for c in &o.classes {
            if foreign.contains(&c.name.as_str()) {
                notes.push(format!(
                    "[qos] class {} (line {}) changes a default class of another design and does not apply to this {}",
                    c.name,
                    c.line.map_or("?".to_string(), |l| l.to_string()),
                    if topology == Topology::BiGraph {
                        "BiGraph with per-direction classes"
                    } else {
                        topology.as_str()
                    }
                ));
                continue;
            }
            match q.classes.iter_mut().find(|d| d.name == c.name) {
                Some(d) => {
                    if let Some(p) = c.part {
                        d.part = p;
                    }
                    if let Some(v) = c.dscp {
                        d.dscp = v;
                    }
                    if let Some(v) = c.priority {
                        d.priority = v;
                    }
                    if let Some(v) = c.lossless {
                        d.lossless = v;
                    }
                }
                None => match (c.dscp, c.priority) {
                    (Some(dscp), Some(priority)) => q.classes.push(TrafficClass {
                        name: c.name.clone(),
                        part: c.part.flatten(),
                        dscp,
                        priority,
                        lossless: c.lossless.unwrap_or(true),
                    }),
                    _ => {
                        let defaults: Vec<&str> =
                            q.classes.iter().map(|d| d.name.as_str()).collect();
                        problems.push(Problem::at(
                            c.line,
                            format!("qos class {}", c.name),
                            format!(
                                "this design has no default class {} (its classes: {})",
                                c.name,
                                defaults.join(", ")
                            ),
                            "give dscp and priority to add a class, or name a default class to change it",
                        ));
                    }
                },
            }
        }
        if let Some(v) = o.cnp_dscp {
            q.cnp.dscp = v;
        }
        if let Some(v) = o.cnp_priority {
            q.cnp.priority = v;
        }
        if let Some(v) = o.ecn.0 {
            q.ecn.min_kb = v;
        }
        if let Some(v) = o.ecn.1 {
            q.ecn.max_kb = v;
        }
        if let Some(v) = o.ecn.2 {
            q.ecn.probability = v;
        }
        if let Some(v) = o.watchdog.0 {
            q.pfc_watchdog.detection_ms = v;
        }
        if let Some(v) = o.watchdog.1 {
            q.pfc_watchdog.restoration_ms = v;
        }
        if let Some(v) = o.watchdog.2 {
            q.pfc_watchdog.polling_ms = v;
        }
        for (name, mtu, _) in &o.switch_mtu {
            q.switch_mtu.insert(name.clone(), *mtu);
        }
        for (subject, mut p) in q.check(topology) {
            p.line = match &subject {
                Subject::Class(name) => o
                    .classes
                    .iter()
                    .find(|c| &c.name == name)
                    .and_then(|c| c.line)
                    .or(o.line),
                Subject::Cnp => o.cnp_line.or(o.line),
                Subject::Ecn => o.ecn_line.or(o.line),
                Subject::Watchdog => o.watchdog_line.or(o.line),
                Subject::Switch(name) => o
                    .switch_mtu
                    .iter()
                    .find(|s| &s.0 == name)
                    .and_then(|s| s.2)
                    .or(o.line),
                Subject::General => o.line,
            };
            problems.push(p);
        }
        if problems.is_empty() {
            Ok((q, notes))
        } else {
            Err(problems)
        }
    }

    /// Everything wrong with the intent for `topology` (a hand-edited plan
    /// can hold anything); empty when it can be rendered.
    pub fn problems(&self, topology: Topology) -> Vec<Problem> {
        self.check(topology).into_iter().map(|(_, p)| p).collect()
    }

    fn check(&self, topology: Topology) -> Vec<(Subject, Problem)> {
        let mut out = Vec::new();
        let mut push = |s: Subject, object: String, message: String, fix: &str| {
            out.push((s, Problem::at(None, object, message, fix)));
        };
        if let Err(v) = rules::MTU.check("mtu", i64::from(self.mtu)) {
            push(Subject::General, "qos".to_string(), v.message, v.fix);
        }
        for (name, mtu) in &self.switch_mtu {
            if let Err(v) = rules::SWITCH_MTU.check("mtu", i64::from(*mtu)) {
                push(
                    Subject::Switch(name.clone()),
                    format!("qos switch {name}"),
                    v.message,
                    v.fix,
                );
            }
        }
        if self.classes.is_empty() {
            push(
                Subject::General,
                "qos".to_string(),
                "there are no traffic classes".to_string(),
                "keep the default classes or add a [[qos.class]] table",
            );
        }
        let mut names: BTreeMap<&str, ()> = BTreeMap::new();
        let mut dscps: BTreeMap<u8, String> = BTreeMap::new();
        if self.cnp.dscp <= 63 {
            dscps.insert(self.cnp.dscp, "the CNP".to_string());
        }
        for c in &self.classes {
            let subject = Subject::Class(c.name.clone());
            let object = format!("qos class {}", c.name);
            if c.name.trim().is_empty() {
                push(
                    subject.clone(),
                    object.clone(),
                    "the name is empty".to_string(),
                    "give the class a name",
                );
            }
            if names.insert(&c.name, ()).is_some() {
                push(
                    subject.clone(),
                    object.clone(),
                    "two classes have this name".to_string(),
                    "give every class its own name",
                );
            }
            if let Err(v) = rules::DSCP.check("dscp", i64::from(c.dscp)) {
                push(subject.clone(), object.clone(), v.message, v.fix);
            } else if let Some(other) = dscps.insert(c.dscp, format!("class {}", c.name)) {
                let v = rules::shared_dscp(i64::from(c.dscp), &other);
                push(subject.clone(), object.clone(), v.message, v.fix);
            }
            if let Err(v) = rules::PRIORITY.check("priority", i64::from(c.priority)) {
                push(subject.clone(), object.clone(), v.message, v.fix);
            }
            if c.lossless && c.priority == self.cnp.priority {
                let v = rules::lossless_on_cnp(i64::from(c.priority));
                push(subject.clone(), object.clone(), v.message, v.fix);
            }
            if !c.lossless
                && let Some(l) = self
                    .classes
                    .iter()
                    .find(|l| l.lossless && l.priority == c.priority)
            {
                push(
                    subject.clone(),
                    object.clone(),
                    format!(
                        "the class is lossy but priority {} is lossless for class {}",
                        c.priority, l.name
                    ),
                    "PFC runs per priority: give lossy and lossless classes different priorities",
                );
            }
            if topology.is_tiered() && c.part.is_some() {
                push(
                    subject.clone(),
                    object.clone(),
                    format!(
                        "the class is for a BiGraph part, but a {} has no parts",
                        topology.as_str()
                    ),
                    "remove `part` (or set it to \"any\")",
                );
            }
        }
        if let Err(v) = rules::DSCP.check("dscp", i64::from(self.cnp.dscp)) {
            push(Subject::Cnp, "qos cnp".to_string(), v.message, v.fix);
        }
        if let Err(v) = rules::PRIORITY.check("priority", i64::from(self.cnp.priority)) {
            push(Subject::Cnp, "qos cnp".to_string(), v.message, v.fix);
        }
        let parts: &[Option<Part>] = match topology {
            Topology::BiGraph => &[Some(Part::Upper), Some(Part::Lower)],
            Topology::FatTree | Topology::RailOptimized | Topology::Hpn => &[None],
        };
        for &part in parts {
            if self.class_for(part).is_none() {
                let whose = part.map_or("sub-nodes".to_string(), |p| {
                    format!("sub-nodes in the {} part", p.as_str())
                });
                push(
                    Subject::General,
                    "qos".to_string(),
                    format!("{whose} have no class to mark"),
                    "add a class for them, or one without a part",
                );
            }
        }
        let e = self.ecn;
        let ecn = [
            rules::ECN_KB.check("min_kb", i64::from(e.min_kb)).err(),
            rules::ECN_KB.check("max_kb", i64::from(e.max_kb)).err(),
            rules::ecn_order(i64::from(e.min_kb), i64::from(e.max_kb)),
            rules::ECN_PROBABILITY
                .check("probability", i64::from(e.probability))
                .err(),
        ];
        for v in ecn.into_iter().flatten() {
            push(Subject::Ecn, "qos ecn".to_string(), v.message, v.fix);
        }
        let w = self.pfc_watchdog;
        for (key, v) in [
            ("detection_ms", w.detection_ms),
            ("restoration_ms", w.restoration_ms),
            ("polling_ms", w.polling_ms),
        ] {
            if let Err(v) = rules::WATCHDOG_MS.check(key, i64::from(v)) {
                push(
                    Subject::Watchdog,
                    "qos pfc_watchdog".to_string(),
                    v.message,
                    v.fix,
                );
            }
        }
        if 2 * u64::from(w.polling_ms) > u64::from(w.detection_ms.min(w.restoration_ms)) {
            push(
                Subject::Watchdog,
                "qos pfc_watchdog".to_string(),
                format!(
                    "polling_ms {} is more than half of detection_ms {} or restoration_ms {}",
                    w.polling_ms, w.detection_ms, w.restoration_ms
                ),
                "poll at least twice per detection and restoration period (EOS requires it)",
            );
        }
        out
    }

    /// The class a sub-node on a switch of `part` marks (none on a
    /// fat-tree).
    pub fn class_for(&self, part: Option<Part>) -> Option<&TrafficClass> {
        part.and_then(|p| self.classes.iter().find(|c| c.part == Some(p)))
            .or_else(|| self.classes.iter().find(|c| c.part.is_none()))
    }

    /// The lossless priorities, sorted.
    pub fn lossless_priorities(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self
            .classes
            .iter()
            .filter(|c| c.lossless)
            .map(|c| c.priority)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The priority of every DSCP: the classes', the CNP's, else 0.
    pub fn dscp_map(&self) -> [u8; 64] {
        let mut map = [0u8; 64];
        if let Some(m) = map.get_mut(usize::from(self.cnp.dscp)) {
            *m = self.cnp.priority;
        }
        for c in &self.classes {
            if let Some(m) = map.get_mut(usize::from(c.dscp)) {
                *m = c.priority;
            }
        }
        map
    }

    /// The MTU of the ports of a physical switch.
    pub fn mtu_of(&self, physical: &str) -> u32 {
        self.switch_mtu.get(physical).copied().unwrap_or(self.mtu)
    }
}

#[cfg(test)]
pub(crate) mod tests;
