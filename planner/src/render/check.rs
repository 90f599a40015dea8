//! `check-qos`: proves the plan's lossless priorities cannot deadlock, and
//! that both ends of every link agree.
//!
//! # The buffer-dependency graph
//!
//! A lossless packet waiting in a switch's ingress buffer for link A holds
//! that buffer until the egress link B it leaves on drains; when B's far
//! end pauses it with PFC, A's buffer fills and pauses A's sender in turn.
//! So there is a node per directed inter-switch link and lossless priority
//! (the ingress buffer at the link's far end), and an edge from (A, p) to
//! (B, q) when some flow enters a switch on A in priority p and leaves on B
//! in priority q. PFC can only deadlock along a cycle of this graph
//! (EFLOPS Fig. 7: four flows turning in the other part close one), so a
//! graph without a cycle is the proof.
//!
//! The flows are every route the plan allows: for every switch with
//! sub-nodes and every other switch with sub-nodes, every ECMP choice of
//! the static routes (`model.rs`). A flow's priority is the DSCP its
//! sub-nodes mark (the class of their part) mapped by the receiving
//! switch; a hop whose priority is not lossless at the receiving port adds
//! no node (a lossy buffer drops instead of waiting). Walks are memoised
//! on (link, destination, DSCP), so each link is explored once per
//! destination.
//!
//! # Finding a cycle
//!
//! Tarjan's strongly connected components (petgraph) find whether any
//! cycle exists. In the component holding the lowest-numbered node on a
//! cycle, a breadth-first search from that node finds the shortest cycle
//! through it, reported link by link with a flow that makes each link wait
//! on the next. Nodes are numbered in the order the walk meets them, so the
//! report is the same on every run.
//!
//! # What the hosts mark
//!
//! The flows carry what the hosts' collective engine really marks
//! ([`HostMarking`], `marking.rs`): data in the class of the sending
//! sub-node (or one `NCCL_IB_TC` for every rank), and NCCL's CTS writes and
//! RoCE ACKs, which travel from the receiver back to the sender, in the
//! receiver's class when `NCCL_IB_FIFO_TC` says so and in the *sender's*
//! class otherwise. Those answers are walked from every receiving switch
//! to every sending one, so an older NCCL or a cluster-wide traffic class
//! is proved or refuted like the plan's own marking.
//!
//! # Link agreement
//!
//! Both ends of every inter-switch link must agree on MTU, PFC priorities
//! and the DSCP map, and every sub-node's DSCP must reach its class's
//! priority, lossless or not as the class says, at the switch port it is
//! cabled to.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::checked::CheckedPlan;
use crate::error::Error;
use crate::network::{Avoid, Model, PortKind};
use crate::text::Table;

use super::marking::{FifoTc, HostMarking, UcxTc};

mod failed;

pub use failed::{FailedQos, FailedQosVerdict};

/// The result of `check-qos`.
#[derive(Debug, Clone, Serialize)]
pub struct QosCheck {
    /// The plan's name.
    pub plan: String,
    /// `BiGraph 4x16`, ...
    pub design: String,
    /// The intent's `per_direction`.
    pub per_direction: bool,
    /// The traffic classes and how many sub-nodes mark each.
    pub classes: Vec<ClassRow>,
    /// Static routes on all switches (one per destination subnet).
    pub static_routes: usize,
    /// (source switch, destination switch, DSCP) walks: every pair of
    /// switches with sub-nodes, each along every ECMP choice.
    pub flows: usize,
    /// What the hosts mark, as modelled.
    pub marking: MarkingRow,
    /// Walks of receivers' answers (CTS writes, ACKs) whose class is not
    /// the receiver's own data class, so not already among `flows`.
    pub answer_flows: usize,
    /// One graph summary per lossless priority that carries traffic.
    pub graphs: Vec<PriorityGraph>,
    /// The shortest cycle found, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<DeadlockCycle>,
    /// Inter-switch links whose ends were compared.
    pub links_checked: usize,
    /// Everything wrong: the cycle, link and host disagreements, and
    /// anything that kept the check from running.
    pub findings: Vec<QosFinding>,
    /// True when there are no findings; a command exits non-zero otherwise.
    pub ok: bool,
}

/// A traffic class as the check saw it.
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    /// Class name.
    pub name: String,
    /// `upper`, `lower`, or none for any part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// DSCP.
    pub dscp: u8,
    /// Priority.
    pub priority: u8,
    /// PFC and ECN on its priority.
    pub lossless: bool,
    /// Sub-nodes that mark it.
    pub sub_nodes: usize,
}

/// What the hosts mark, in words, and why.
#[derive(Debug, Clone, Serialize)]
pub struct MarkingRow {
    /// The class data carries.
    pub data: String,
    /// The class a receiver's CTS writes and ACKs carry.
    pub answers: String,
    /// The engine version or variables that decided it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub because: Vec<String>,
}

/// The dependency graph of one priority.
#[derive(Debug, Clone, Serialize)]
pub struct PriorityGraph {
    /// The priority.
    pub priority: u8,
    /// Nodes: directed inter-switch links carrying lossless traffic of it.
    pub buffers: usize,
    /// Edges: a flow entering a switch on one link and leaving on another.
    pub dependencies: usize,
    /// No cycle goes through this priority.
    pub acyclic: bool,
}

/// A cycle of buffer dependencies: each link waits on the next, the last
/// on the first.
#[derive(Debug, Clone, Serialize)]
pub struct DeadlockCycle {
    /// The priorities on the cycle.
    pub priorities: Vec<u8>,
    /// The links in order.
    pub links: Vec<CycleLink>,
}

/// One link of a cycle.
#[derive(Debug, Clone, Serialize)]
pub struct CycleLink {
    /// Sending switch.
    pub from: String,
    /// Its port.
    pub from_port: String,
    /// Receiving switch.
    pub to: String,
    /// Its port.
    pub to_port: String,
    /// Priority of the buffer.
    pub priority: u8,
    /// A flow that enters `to` on this link and leaves on the next one.
    pub flow: String,
}

/// A problem `check-qos` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QosFinding {
    /// `deadlock-cycle`, `mtu-mismatch`, `pfc-mismatch`,
    /// `dscp-map-mismatch`, `host-class`, `host-setting` (a traffic class
    /// every rank is given that is not its class's), `routing-loop` or
    /// `plan` (the configurations cannot be built from the plan).
    pub kind: String,
    /// What it is about.
    pub object: String,
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl QosFinding {
    fn new(kind: &str, object: String, message: String, fix: &str) -> Self {
        Self {
            kind: kind.to_string(),
            object,
            message,
            fix: fix.to_string(),
        }
    }
}

/// Checks a plan's QoS: the dependency graph of every priority, and the
/// ends of every link, with the hosts marking as `render --hosts` and
/// `provisioner submit` set them up.
pub fn check_qos(plan: &CheckedPlan) -> QosCheck {
    check_qos_marked(plan, &HostMarking::default())
}

/// [`check_qos`] with the hosts marking as `marking` says (an NCCL
/// version, a cluster-wide `NCCL_IB_TC`, ...).
pub fn check_qos_marked(plan: &CheckedPlan, marking: &HostMarking) -> QosCheck {
    check_qos_on(plan, marking, &[])
}

/// [`check_qos_marked`] on the fabric left when the links and switches of
/// `failed` fail: the routes keep off them, as BGP (or static routes
/// recomputed for the failure) would.
pub fn check_qos_failed(plan: &CheckedPlan, marking: &HostMarking, failed: &[Avoid]) -> QosCheck {
    check_qos_on(plan, marking, failed)
}

fn check_qos_on(plan: &CheckedPlan, marking: &HostMarking, failed: &[Avoid]) -> QosCheck {
    let qos = plan.qos_intent();
    let (data, answers) = marking.describe();
    let mut check = QosCheck {
        plan: plan.name.clone(),
        design: plan.describe(),
        per_direction: qos.per_direction,
        classes: qos
            .classes
            .iter()
            .map(|c| ClassRow {
                name: c.name.clone(),
                part: c.part.map(|p| p.as_str().to_string()),
                dscp: c.dscp,
                priority: c.priority,
                lossless: c.lossless,
                sub_nodes: 0,
            })
            .collect(),
        static_routes: 0,
        flows: 0,
        marking: MarkingRow {
            data,
            answers,
            because: marking.because.clone(),
        },
        answer_flows: 0,
        graphs: Vec::new(),
        cycle: None,
        links_checked: 0,
        findings: Vec::new(),
        ok: false,
    };
    let built = if failed.is_empty() {
        Model::build(plan, plan.source())
    } else {
        Model::build_failed(plan, plan.source(), failed)
    };
    let m = match built {
        Ok(m) => m,
        Err(Error::Invalid { problems, .. }) => {
            check.findings = problems
                .into_iter()
                .map(|p| QosFinding {
                    kind: "plan".to_string(),
                    object: p.object,
                    message: p.message,
                    fix: p.fix,
                })
                .collect();
            return check;
        }
        Err(e) => {
            check.findings.push(QosFinding::new(
                "plan",
                plan.name.clone(),
                e.to_string(),
                "design the plan again",
            ));
            return check;
        }
    };
    for h in &m.hosts {
        if let Some(row) = check.classes.get_mut(h.class) {
            row.sub_nodes += 1;
        }
    }
    check.static_routes = m.domains.iter().map(|d| d.routes.len()).sum();
    links_agree(&m, &mut check);
    hosts_agree(&m, &mut check);
    settings_agree(&m, marking, &mut check);
    dependencies(&m, marking, &mut check);
    check.ok = check.findings.is_empty();
    check
}

/// The PFC priorities of a port: the lossless ones on cabled ports. One
/// intent serves every switch, but each end is asked separately so that
/// per-switch QoS would be checked the same way.
fn pfc_of<'m>(m: &'m Model<'_>, kind: PortKind) -> &'m [u8] {
    match kind {
        PortKind::InterSwitch { .. } | PortKind::SubNode { .. } => &m.lossless,
        PortKind::Free | PortKind::Reserved => &[],
    }
}

/// The DSCP map of a device (see [`pfc_of`]).
fn dscp_map_of<'m>(m: &'m Model<'_>, _device: usize) -> &'m [u8; 64] {
    &m.dscp_map
}

fn links_agree(m: &Model<'_>, check: &mut QosCheck) {
    for pair in m.links.chunks(2) {
        let l = pair[0];
        let (da, db) = (m.domains[l.from].device, m.domains[l.to].device);
        let (Some(a), Some(b)) = (m.port(da, l.from_port), m.port(db, l.to_port)) else {
            continue;
        };
        check.links_checked += 1;
        let object = format!(
            "link {} {} - {} {}",
            m.name(l.from),
            m.plan.switch_list[l.from].port_name(l.from_port),
            m.name(l.to),
            m.plan.switch_list[l.to].port_name(l.to_port)
        );
        if a.mtu != b.mtu {
            check.findings.push(QosFinding::new(
                "mtu-mismatch",
                object.clone(),
                format!("MTU {} on one end, {} on the other", a.mtu, b.mtu),
                "give both switches the same MTU ([qos] mtu, [[qos.switch]])",
            ));
        }
        let (pa, pb) = (pfc_of(m, a.kind), pfc_of(m, b.kind));
        if pa != pb {
            check.findings.push(QosFinding::new(
                "pfc-mismatch",
                object.clone(),
                format!(
                    "PFC on priorities [{}] on one end, [{}] on the other",
                    super::list(pa),
                    super::list(pb)
                ),
                "enable PFC on the same priorities at both ends",
            ));
        }
        let (ma, mb) = (dscp_map_of(m, da), dscp_map_of(m, db));
        if let Some(d) = (0..64).find(|&d| ma[d] != mb[d]) {
            check.findings.push(QosFinding::new(
                "dscp-map-mismatch",
                object,
                format!(
                    "DSCP {d} maps to priority {} on one end and {} on the other",
                    ma[d], mb[d]
                ),
                "use one DSCP map on every switch",
            ));
        }
    }
}

fn hosts_agree(m: &Model<'_>, check: &mut QosCheck) {
    for (i, h) in m.hosts.iter().enumerate() {
        let sn = &m.plan.sub_node_list[i];
        let class = &m.qos.classes[h.class];
        let dev = m.domains[h.domain].device;
        let Some(port) = m.port(dev, sn.port) else {
            continue;
        };
        let priority = dscp_map_of(m, dev)[usize::from(class.dscp.min(63))];
        let lossless = pfc_of(m, port.kind).contains(&priority);
        if priority != class.priority || lossless != class.lossless {
            check.findings.push(QosFinding::new(
                "host-class",
                format!("sub-node {}", sn.id),
                format!(
                    "it marks DSCP {} of class {} (priority {}, {}), which {} maps to priority {} ({})",
                    class.dscp,
                    class.name,
                    class.priority,
                    if class.lossless { "lossless" } else { "lossy" },
                    sn.switch,
                    priority,
                    if lossless { "lossless" } else { "lossy" }
                ),
                "make the switch's DSCP map and PFC priorities match the class",
            ));
        }
    }
}

/// A traffic class every rank is given (`NCCL_IB_TC`, `NCCL_IB_FIFO_TC`)
/// must reach the priority of each rank's class, lossless or not as the
/// class says: otherwise the hosts do not mark what the switches were
/// configured (and the graph proved) for.
fn settings_agree(m: &Model<'_>, marking: &HostMarking, check: &mut QosCheck) {
    let mut given: Vec<(&str, u8, &str)> = Vec::new();
    if let Some(tc) = marking.tc {
        given.push(("NCCL_IB_TC", tc, "data"));
    }
    if let FifoTc::Fixed(tc) = marking.fifo_tc {
        given.push(("NCCL_IB_FIFO_TC", tc, "CTS writes and ACKs"));
    }
    if let UcxTc::Fixed(tc) = marking.ucx {
        given.push((
            "UCX_IB_TRAFFIC_CLASS",
            tc,
            "data, RDMA-read responses and ACKs",
        ));
    }
    for (name, tc, what) in given {
        let dscp = tc >> 2;
        let priority = m.dscp_map[usize::from(dscp)];
        let lossless = m.lossless.contains(&priority);
        for (k, class) in m.qos.classes.iter().enumerate() {
            let ranks = m.hosts.iter().filter(|h| h.class == k).count();
            if ranks == 0 || (priority == class.priority && lossless == class.lossless) {
                continue;
            }
            check.findings.push(QosFinding::new(
                "host-setting",
                format!("{name}={tc}"),
                format!(
                    "the {ranks} sub-nodes of class {} send {what} in DSCP {dscp}, priority {priority} ({}); their class is DSCP {}, priority {} ({})",
                    class.name,
                    if lossless { "lossless" } else { "lossy" },
                    class.dscp,
                    class.priority,
                    if class.lossless { "lossless" } else { "lossy" },
                ),
                "give each rank its class's traffic class (DSCP << 2), as `planner render --hosts` and `provisioner submit` do, instead of one value for every rank",
            ));
        }
    }
}

/// The graph under construction.
pub(super) struct Graph<'m, 'p> {
    m: &'m Model<'p>,
    /// Node per (directed link, priority), numbered as met.
    nodes: FxHashMap<(usize, u8), NodeIndex>,
    keys: Vec<(usize, u8)>,
    graph: DiGraph<(), ()>,
    edges: FxHashSet<(NodeIndex, NodeIndex)>,
    /// The first flow behind each edge: (source, destination, turning
    /// switch, whether it is receivers' answers).
    witness: FxHashMap<(NodeIndex, NodeIndex), (usize, usize, usize, bool)>,
    /// The walks under way carry receivers' answers (CTS writes, ACKs).
    answers: bool,
    seen: FxHashSet<(usize, usize, u8)>,
    /// Per domain: destination -> next-hop links.
    next: Vec<FxHashMap<usize, &'m [usize]>>,
    loops: BTreeSet<(usize, usize)>,
}

impl Graph<'_, '_> {
    fn node(&mut self, link: usize, priority: u8) -> NodeIndex {
        if let Some(&n) = self.nodes.get(&(link, priority)) {
            return n;
        }
        let n = self.graph.add_node(());
        self.nodes.insert((link, priority), n);
        self.keys.push((link, priority));
        n
    }

    /// Follows every route from `at` towards `target`; `prev` is the node
    /// of the link the flow arrived on, when lossless.
    fn walk(
        &mut self,
        at: usize,
        target: usize,
        dscp: u8,
        prev: Option<NodeIndex>,
        source: usize,
        depth: usize,
    ) {
        if at == target {
            return;
        }
        if depth > self.m.domains.len() {
            self.loops.insert((source, target));
            return;
        }
        let Some(hops) = self.next[at].get(&target).copied() else {
            return;
        };
        for &l in hops {
            let link = self.m.links[l];
            let dev = self.m.domains[link.to].device;
            let priority = dscp_map_of(self.m, dev)[usize::from(dscp.min(63))];
            let lossless = self
                .m
                .port(dev, link.to_port)
                .is_some_and(|p| pfc_of(self.m, p.kind).contains(&priority));
            let node = lossless.then(|| self.node(l, priority));
            if let (Some(a), Some(b)) = (prev, node)
                && self.edges.insert((a, b))
            {
                self.graph.add_edge(a, b, ());
                self.witness
                    .insert((a, b), (source, target, at, self.answers));
            }
            if self.seen.insert((l, target, dscp)) {
                self.walk(link.to, target, dscp, node, source, depth + 1);
            }
        }
    }
}

/// Per domain: destination -> next-hop links, from the model's routes.
pub(super) fn next_hops<'m>(m: &'m Model<'_>) -> Vec<FxHashMap<usize, &'m [usize]>> {
    let mut next: Vec<FxHashMap<usize, &[usize]>> = vec![FxHashMap::default(); m.domains.len()];
    for (d, dom) in m.domains.iter().enumerate() {
        for r in &dom.routes {
            next[d].entry(r.target).or_insert(r.next_hops.as_slice());
        }
    }
    next
}

impl<'m, 'p> Graph<'m, 'p> {
    /// An empty graph over the routes `next` of `m`.
    pub(super) fn new(m: &'m Model<'p>, next: Vec<FxHashMap<usize, &'m [usize]>>) -> Self {
        Graph {
            m,
            nodes: FxHashMap::default(),
            keys: Vec::new(),
            graph: DiGraph::new(),
            edges: FxHashSet::default(),
            witness: FxHashMap::default(),
            seen: FxHashSet::default(),
            next,
            loops: BTreeSet::new(),
            answers: false,
        }
    }

    /// Walks every flow the hosts send (data, then receivers' answers), or
    /// with `only` the flows towards that switch's sub-nodes alone;
    /// returns the walks made, `(data, answers)`.
    pub(super) fn walk_flows(
        &mut self,
        marking: &HostMarking,
        only: Option<usize>,
    ) -> (usize, usize) {
        let m = self.m;
        let (mut flows, mut answer_flows) = (0, 0);
        // The DSCPs of the data sent from each switch.
        let mut marked: Vec<BTreeSet<u8>> = vec![BTreeSet::new(); m.domains.len()];
        for h in &m.hosts {
            let dscp = marking.tc.map_or(m.qos.classes[h.class].dscp, |tc| tc >> 2);
            marked[h.domain].insert(dscp);
            // UCX's data (and everything else it sends) in one class.
            if let UcxTc::Fixed(tc) = marking.ucx {
                marked[h.domain].insert(tc >> 2);
            }
        }
        let targets: Vec<usize> = (0..m.domains.len())
            .filter(|&d| !m.domains[d].gateways.is_empty())
            .collect();
        let wanted = |t: usize| only.is_none_or(|o| o == t);
        self.answers = false;
        for (s, dscps) in marked.iter().enumerate() {
            for &dscp in dscps {
                for &t in &targets {
                    if t != s && wanted(t) {
                        flows += 1;
                        self.walk(s, t, dscp, None, s, 0);
                    }
                }
            }
        }
        // The receivers' answers, from every switch with receivers back to
        // every switch with senders, where their class is not the receiver's
        // own data class (those walks were just made).
        self.answers = true;
        for (t, own) in marked.iter().enumerate() {
            if own.is_empty() {
                continue;
            }
            for (s, sent) in marked.iter().enumerate() {
                if s == t || sent.is_empty() || !targets.contains(&s) || !wanted(s) {
                    continue;
                }
                let mut classes: BTreeSet<u8> = match marking.fifo_tc {
                    FifoTc::OwnClass => BTreeSet::new(),
                    FifoTc::Fixed(tc) => BTreeSet::from([tc >> 2]),
                    FifoTc::Unset => sent.clone(),
                };
                // UCX's read responses and ACKs leave in the responder's UCX
                // class (its own, or the one every rank is given).
                if let UcxTc::Fixed(tc) = marking.ucx {
                    classes.insert(tc >> 2);
                }
                for dscp in classes.difference(own) {
                    answer_flows += 1;
                    self.walk(t, s, *dscp, None, t, 0);
                }
            }
        }
        (flows, answer_flows)
    }
}

fn dependencies(m: &Model<'_>, marking: &HostMarking, check: &mut QosCheck) {
    let mut g = Graph::new(m, next_hops(m));
    let (flows, answer_flows) = g.walk_flows(marking, None);
    check.flows += flows;
    check.answer_flows += answer_flows;
    for &(s, t) in &g.loops {
        check.findings.push(QosFinding::new(
            "routing-loop",
            format!("{} to {}", m.name(s), m.name(t)),
            "the static routes loop".to_string(),
            "design the plan again",
        ));
    }

    // Cycles: the lowest-numbered node on any cycle, then the shortest
    // cycle through it.
    let sccs = petgraph::algo::tarjan_scc(&g.graph);
    let on_cycle: Vec<&Vec<NodeIndex>> = sccs
        .iter()
        .filter(|c| c.len() > 1 || g.graph.contains_edge(c[0], c[0]))
        .collect();
    let mut cyclic_priorities: BTreeSet<u8> = BTreeSet::new();
    for c in &on_cycle {
        for n in c.iter() {
            cyclic_priorities.insert(g.keys[n.index()].1);
        }
    }
    let mut priorities: BTreeSet<u8> = g.keys.iter().map(|k| k.1).collect();
    priorities.extend(m.lossless.iter().copied());
    for p in priorities {
        check.graphs.push(PriorityGraph {
            priority: p,
            buffers: g.keys.iter().filter(|k| k.1 == p).count(),
            dependencies: g
                .edges
                .iter()
                .filter(|(a, _)| g.keys[a.index()].1 == p)
                .count(),
            acyclic: !cyclic_priorities.contains(&p),
        });
    }
    let Some(component) = on_cycle
        .iter()
        .min_by_key(|c| c.iter().map(|n| n.index()).min().unwrap_or(usize::MAX))
    else {
        return;
    };
    let members: HashSet<NodeIndex> = component.iter().copied().collect();
    let Some(&start) = component.iter().min_by_key(|n| n.index()) else {
        return;
    };
    let cycle = shortest_cycle(&g.graph, start, &members);
    let mut links = Vec::with_capacity(cycle.len());
    for (i, &n) in cycle.iter().enumerate() {
        let after = cycle[(i + 1) % cycle.len()];
        let (l, priority) = g.keys[n.index()];
        let link = m.links[l];
        let flow = match g.witness.get(&(n, after)) {
            Some(&(s, t, _, false)) => format!(
                "traffic from {} to {} enters {} here and leaves on the next link",
                m.name(s),
                m.name(t),
                m.name(link.to)
            ),
            Some(&(s, t, _, true)) => format!(
                "CTS writes and ACKs from receivers at {} to senders at {} enter {} here and leave on the next link",
                m.name(s),
                m.name(t),
                m.name(link.to)
            ),
            None => String::new(),
        };
        links.push(CycleLink {
            from: m.name(link.from).to_string(),
            from_port: m.plan.switch_list[link.from].port_name(link.from_port),
            to: m.name(link.to).to_string(),
            to_port: m.plan.switch_list[link.to].port_name(link.to_port),
            priority,
            flow,
        });
    }
    let cycle_priorities: BTreeSet<u8> = links.iter().map(|l| l.priority).collect();
    let path: Vec<String> = links
        .iter()
        .map(|l| format!("{} -> {}", l.from, l.to))
        .collect();
    let answers_on_cycle = cycle.iter().enumerate().any(|(i, &n)| {
        let after = cycle[(i + 1) % cycle.len()];
        g.witness.get(&(n, after)).is_some_and(|w| w.3)
    });
    let fix = if matches!(marking.ucx, UcxTc::Fixed(_)) {
        "give each rank its class's traffic class in UCX_IB_TRAFFIC_CLASS (Open MPI over UCX), as `provisioner submit`'s rank-env.sh does"
    } else if marking.tc.is_some() || matches!(marking.fifo_tc, FifoTc::Fixed(_)) {
        "give each rank its class's traffic class in NCCL_IB_TC and NCCL_IB_FIFO_TC, as `planner render --hosts` and `provisioner submit` do"
    } else if answers_on_cycle {
        "give every rank NCCL_IB_FIFO_TC = its NCCL_IB_TC (NCCL 2.22.3 and later), so that receivers answer in their own class"
    } else if m.plan.topology == crate::plan::Topology::BiGraph {
        "give traffic sourced in the upper and the lower part different lossless priorities ([qos] per_direction = true, the default)"
    } else {
        "route up-down only, or give the flows on the cycle different lossless priorities"
    };
    check.findings.push(QosFinding::new(
        "deadlock-cycle",
        format!(
            "priority {}",
            super::list(&cycle_priorities.iter().copied().collect::<Vec<_>>())
        ),
        format!(
            "{} lossless buffers wait on each other in a cycle: {}; PFC can deadlock there",
            links.len(),
            path.join(", ")
        ),
        fix,
    ));
    check.cycle = Some(DeadlockCycle {
        priorities: cycle_priorities.into_iter().collect(),
        links,
    });
}

/// The shortest cycle through `start` inside `members`, as its nodes in
/// order, starting with `start`.
fn shortest_cycle(
    graph: &DiGraph<(), ()>,
    start: NodeIndex,
    members: &HashSet<NodeIndex>,
) -> Vec<NodeIndex> {
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    let mut visited: HashSet<NodeIndex> = HashSet::from([start]);
    while let Some(n) = queue.pop_front() {
        let mut succ: Vec<NodeIndex> = graph.neighbors(n).collect();
        succ.sort_unstable();
        for s in succ {
            if s == start {
                let mut path = vec![n];
                let mut at = n;
                while at != start {
                    at = parent[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if members.contains(&s) && visited.insert(s) {
                parent.insert(s, n);
                queue.push_back(s);
            }
        }
    }
    vec![start]
}

/// The check for people.
pub fn render_qos_table(c: &QosCheck) -> String {
    let mut out = format!(
        "check-qos {} ({}): per-direction priorities {}\n\n",
        c.plan,
        c.design,
        if c.per_direction { "on" } else { "off" }
    );
    let mut t = Table::new(["class", "part", "DSCP", "priority", "lossless", "sub-nodes"])
        .right(&[2, 3, 5]);
    for k in &c.classes {
        t.row([
            k.name.clone(),
            k.part.clone().unwrap_or_else(|| "any".to_string()),
            k.dscp.to_string(),
            k.priority.to_string(),
            if k.lossless { "yes" } else { "no" }.to_string(),
            k.sub_nodes.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out.push_str(&format!(
        "\nData carries {}; CTS writes and ACKs carry {}.\n",
        c.marking.data, c.marking.answers
    ));
    if !c.marking.because.is_empty() {
        out.push_str(&format!(
            "Modelled from: {}.\n",
            c.marking.because.join(", ")
        ));
    }
    if !c.graphs.is_empty() {
        out.push('\n');
        let mut t = Table::new(["priority", "buffers", "dependencies", "cycle"]).right(&[0, 1, 2]);
        for g in &c.graphs {
            t.row([
                g.priority.to_string(),
                g.buffers.to_string(),
                g.dependencies.to_string(),
                if g.acyclic { "none" } else { "YES" }.to_string(),
            ]);
        }
        out.push_str(&t.render());
        let answers = if c.answer_flows == 0 {
            String::new()
        } else {
            format!(" (and {} of receivers' answers)", c.answer_flows)
        };
        out.push_str(&format!(
            "\n{} static routes, {} flows{answers} walked along every ECMP choice, {} links compared end to end.\n",
            c.static_routes, c.flows, c.links_checked
        ));
    }
    if let Some(cycle) = &c.cycle {
        out.push_str(&format!(
            "\nDeadlock cycle in priority {} ({} links, each waiting on the next):\n",
            super::list(&cycle.priorities),
            cycle.links.len()
        ));
        let mut t = Table::new(["from", "port", "to", "port", "priority", "why"]).right(&[4]);
        for l in &cycle.links {
            t.row([
                l.from.clone(),
                l.from_port.clone(),
                l.to.clone(),
                l.to_port.clone(),
                l.priority.to_string(),
                l.flow.clone(),
            ]);
        }
        out.push_str(&t.render());
    }
    if c.findings.is_empty() {
        out.push_str(
            "\nOK: no lossless priority has a buffer-dependency cycle, so PFC cannot deadlock on these routes; every link's ends agree.\n",
        );
    } else {
        out.push_str(&format!("\n{} finding(s):\n", c.findings.len()));
        for f in &c.findings {
            out.push_str(&format!(
                "  {}: {}: {}; {}\n",
                f.kind, f.object, f.message, f.fix
            ));
        }
    }
    out
}
