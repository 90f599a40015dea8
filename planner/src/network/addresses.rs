//! The address plan and the configuration model: VLANs, VRFs, ports, addresses, gateways, static routes, and the load check's refusals.
//!
//! The vendor-neutral model of a plan's switch and host configurations,
//! all derived from the plan and nothing else. Every renderer and
//! `check-qos` read this model, so what `check-qos` proves is what the
//! files configure.
//!
//! # VLANs and VRFs
//!
//! Every switch of the plan (a VLAN half of a split switch, or a whole
//! switch) is one VLAN and one VRF named `Vrf<vlan>`: the two halves of one
//! box never route to each other inside the box, which BiGraph needs (they
//! are different switches of the topology). An unsplit switch uses the
//! `[addressing] vlan` (default 100).
//!
//! # Ports
//!
//! Sub-node ports are access ports in their half's VLAN, whose VLAN
//! interface is the sub-nodes' gateway; inter-switch ports are routed /31
//! point-to-point interfaces in the half's VRF; free ports are shut down;
//! reserved ports (management, external uplinks) are left alone.
//!
//! # Addresses
//!
//! - Sub-nodes keep the IP the inventory gives their NIC (with a prefix
//!   length). Each distinct prefix on a switch gets a gateway: the prefix's
//!   last usable address. A NIC using that address, a subnet shared by two
//!   switches, or a subnet overlapping another or the link pool is an error.
//! - A switch with NICs that have no address gets a block of the
//!   `sub_node_pool` (default 10.0.0.0/8): a /24, or larger when the switch
//!   has more than 253 ports, taken in plan order and skipping blocks that
//!   overlap the link pool or an inventory subnet. The NIC on the switch's
//!   i-th port (counting every port the switch owns, from 0) gets the
//!   block's address i+1, so growth never renumbers; the gateway is the
//!   block's last usable address.
//! - A dual-port NIC (HPN) has an address per port: port 0 the one above,
//!   on its plane-A ToR; port 1 always one from the pool block of its
//!   plane-B ToR (the inventory's address is port 0's).
//! - Inter-switch cable k (in the plan's cable order, counting only
//!   inter-switch cables) gets the /31 at `link_pool` + 2k: its `a` end the
//!   even address, its `b` end the odd one.
//!
//! # Routes
//!
//! The plan is the routing: every switch has a static route to every other
//! switch's sub-node subnets (on HPN, every other switch of its plane's), with every equal-cost next hop of the
//! forwarding table [`Network::table`] (the rule is in `tables.rs`), listed
//! in port order. Per-flow routes choose among the same next hops.
//!
//! # Where the code is
//!
//! The model is assembled, and every refusal found, in `assemble.rs`. The
//! load check asks only whether the model would refuse a plan its other
//! checks passed: `quick.rs` (`Model::surely_builds`) answers that
//! without assembling the model when it can (no address given in the
//! plan, peer ports written as plain numbers...), and the model is
//! assembled when it cannot.

use std::net::Ipv4Addr;
use std::sync::Arc;

use super::avoid::Avoid;
use super::graph::RouteGraph;
use super::links::Network;
use crate::error::{Error, Problem, Result};
use crate::plan::{Plan, Tier};
use crate::qos::{Ipv4Prefix, QosIntent};

mod assemble;
mod quick;

/// The model of one plan.
#[derive(Debug)]
pub(crate) struct Model<'p> {
    pub plan: &'p Plan,
    pub qos: QosIntent,
    /// Priority of each DSCP (the same on every switch).
    pub dscp_map: [u8; 64],
    /// Lossless priorities, sorted.
    pub lossless: Vec<u8>,
    /// Physical switches in plan order.
    pub devices: Vec<Device>,
    /// One per plan switch, same index.
    pub domains: Vec<Domain>,
    /// Directed inter-switch links; `2k` and `2k + 1` are the two directions
    /// of inter-switch cable `k`.
    pub links: Vec<RoutedLink>,
    /// One per plan sub-node, same index (its NIC's port 0).
    pub hosts: Vec<Host>,
    /// On a plan of dual-port NICs (HPN), one per plan sub-node for its
    /// NIC's port 1, same index; empty otherwise.
    pub hosts1: Vec<Host>,
}

/// A physical switch.
#[derive(Debug)]
pub(crate) struct Device {
    pub name: String,
    pub model: String,
    /// Its plan switches (one, or the two halves).
    pub domains: Vec<usize>,
    /// Every port of its domains, by port number.
    pub ports: Vec<Port>,
    /// The numbers of `ports`, in their order: a port is found by a
    /// binary search here (2 KiB for 512 ports, in cache) rather than over
    /// the port records (twelve times larger).
    numbers: Vec<u32>,
    pub mtu: u32,
}

/// A plan switch: one VLAN, one VRF.
#[derive(Debug)]
pub(crate) struct Domain {
    pub device: usize,
    pub vlan: u16,
    pub vrf: String,
    /// Sub-node subnets and their gateway addresses.
    pub gateways: Vec<Gateway>,
    pub routes: Vec<StaticRoute>,
}

/// A sub-node subnet on a switch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gateway {
    pub prefix: Ipv4Prefix,
    pub addr: u32,
}

/// A static route with every equal-cost next hop.
#[derive(Debug)]
pub(crate) struct StaticRoute {
    pub prefix: Ipv4Prefix,
    /// The plan switch whose subnet it is.
    pub target: usize,
    /// Directed links out of this switch, by port.
    pub next_hops: Vec<usize>,
}

/// A port.
#[derive(Debug)]
pub(crate) struct Port {
    pub number: u32,
    pub domain: usize,
    /// Its position in its plan switch's `ports`.
    pub index: usize,
    pub kind: PortKind,
    pub mtu: u32,
    pub gbps: u32,
}

/// What a port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PortKind {
    /// Routed; `link` is the directed link that leaves through it.
    InterSwitch {
        link: usize,
    },
    /// Access port of a sub-node (index into the plan's sub-nodes), for
    /// port `nic_port` of its NIC (0, or 1 on a dual-port NIC).
    SubNode {
        sub_node: usize,
        nic_port: u8,
    },
    Free,
    Reserved,
}

/// A directed inter-switch link.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoutedLink {
    pub from: usize,
    pub from_port: u32,
    pub from_addr: u32,
    pub to: usize,
    pub to_port: u32,
    pub to_addr: u32,
}

/// A sub-node as its host sees the network.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Host {
    pub domain: usize,
    pub addr: u32,
    pub prefix: Ipv4Prefix,
    pub gateway: u32,
    /// Index into the intent's classes.
    pub class: usize,
}

/// `10.0.0.1`.
pub(crate) fn ip(addr: u32) -> String {
    Ipv4Addr::from(addr).to_string()
}

/// `255.255.255.0`.
pub(crate) fn netmask(p: &Ipv4Prefix) -> String {
    ip(p.mask())
}

impl<'p> Model<'p> {
    /// Builds the model, or every reason it cannot be built; errors name
    /// the plan as `source`.
    pub fn build(plan: &'p Plan, source: &str) -> Result<Model<'p>> {
        Self::assemble(plan, true, &[], &mut None).map_err(|problems| Error::Invalid {
            file: source.to_string(),
            what: "plan",
            problems,
        })
    }

    /// Every reason [`Model::build`] would refuse the plan, found by the
    /// same code but without the routes' next-hop lists (a 131,072-sub-node
    /// BiGraph has 33 million of them): the load check and `design` run
    /// this, so they refuse exactly what `render` refuses.
    pub fn refusals(plan: &Plan) -> Vec<Problem> {
        Self::refusals_keeping(plan).0
    }

    /// [`Model::refusals`], and the route graph of the whole plan when
    /// the assembly built it: the load check hands it on to the checked
    /// plan.
    pub(crate) fn refusals_keeping(plan: &Plan) -> (Vec<Problem>, Option<Arc<RouteGraph>>) {
        let mut graph = None;
        match Model::assemble(plan, false, &[], &mut graph) {
            Ok(_) => (Vec::new(), graph),
            Err(problems) => (problems, graph),
        }
    }

    /// The model of the fabric left when the links and switches of `avoid`
    /// fail: routes keep off them (as BGP, or static routes recomputed,
    /// would), switches have no route to a failed switch's sub-nodes, and
    /// a pair of live switches that lost every route has none instead of
    /// refusing the plan (the failure analysis counts such pairs from the
    /// network).
    pub fn build_failed(plan: &'p Plan, source: &str, avoid: &[Avoid]) -> Result<Model<'p>> {
        Self::assemble(plan, true, avoid, &mut None).map_err(|problems| Error::Invalid {
            file: source.to_string(),
            what: "plan",
            problems,
        })
    }

    /// The model link of network link `id` (a network of this model's
    /// plan), when it is an inter-switch link the model routes over.
    pub fn link_of(&self, net: &Network<'_>, id: usize) -> Option<usize> {
        net.link(id).and_then(|l| match l {
            super::Link::InterSwitch { from, port, .. } => self
                .port(self.domains[from].device, port)
                .and_then(|p| match p.kind {
                    PortKind::InterSwitch { link } => Some(link),
                    _ => None,
                }),
            _ => None,
        })
    }

    /// The next hops of switch `x`'s static route towards switch `t`'s
    /// subnets on `net` (a network of this model's plan): its forwarding
    /// table as model links, in port order. A table entry the model has no
    /// link for is a problem pushed on `problems` (and left out).
    pub fn hops_on(
        &self,
        net: &Network<'_>,
        x: usize,
        t: usize,
        problems: &mut Vec<Problem>,
    ) -> Vec<usize> {
        let mut hops = Vec::new();
        for id in net.table(x, t) {
            match self.link_of(net, id) {
                Some(link) => hops.push(link),
                None => problems.push(Problem::at(
                    None,
                    format!("switch {} link {}", self.name(x), net.describe(id)),
                    "the routing graph and the cable list disagree",
                    "run planner validate on the plan and design it again".to_string(),
                )),
            }
        }
        hops.sort_by_key(|&id| self.links[id].from_port);
        hops
    }

    /// The port of a device by number.
    pub fn port(&self, device: usize, number: u32) -> Option<&Port> {
        let d = &self.devices[device];
        d.numbers.binary_search(&number).ok().map(|i| &d.ports[i])
    }

    /// The port of a device by number, to change.
    fn port_mut(&mut self, device: usize, number: u32) -> Option<&mut Port> {
        let d = &mut self.devices[device];
        d.numbers
            .binary_search(&number)
            .ok()
            .map(|i| &mut d.ports[i])
    }

    /// The plan switch's name.
    pub fn name(&self, domain: usize) -> &str {
        &self.plan.switch_list[domain].name
    }

    /// The part or tier of a plan switch.
    pub fn tier(&self, domain: usize) -> Tier {
        self.plan.switch_list[domain].part_or_tier
    }
}
