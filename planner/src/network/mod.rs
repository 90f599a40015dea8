//! The route model of a plan: every route of every flow and every forwarding table, from one derivation.
//!
//! Everything that needs a route reads it here: `verify-ranks` and the
//! rank optimiser (per-flow routes and link loads), `simulate` (the flows
//! of each step), `render` (static routes with every equal-cost next hop,
//! and the addresses, VLANs and VRFs they use), `check-qos` (the
//! buffer-dependency proof over those routes) and the address-plan check
//! `validate` runs on every plan load.
//!
//! - [`graph`]: the route graph, the tables routing reads of a plan
//!   (each sub-node's switch, a dense id per directed link, adjacency),
//!   owned, so the checked plan keeps the one its load check built;
//! - [`links`]: [`Network`], a plan with its route graph and what routes
//!   avoid, and the link ids;
//! - [`tables`]: the one next-hop rule: per switch and destination switch,
//!   the equal-cost next hops in ECMP order. The rendered static routes are
//!   these tables; the per-flow walk chooses among them;
//! - [`flows`]: the per-flow walk: at each switch, the ECMP hash of the
//!   flow picks one of that switch's next hops towards the destination;
//! - [`count`]: the same walks counted per link a batch at a time, for
//!   the proofs that route millions of flows;
//! - [`hash`]: the ECMP hash (FNV-1a 64 and `fmix64` over the RoCEv2
//!   5-tuple and a switch salt);
//! - [`policy`]: the routing policies `ecmp` (the hash, the default),
//!   `dmodk` (InfiniBand's D-mod-K, by destination index) and `spray`
//!   (every equal-cost path, each with an even share of the flow), all
//!   walks over the same tables ([`Network::flow_routes`]);
//! - [`avoid`]: dead cables and switches down for repair, which
//!   [`Network::avoiding`] routes around;
//! - [`addresses`]: the vendor-neutral model of the configurations (VLANs,
//!   VRFs, ports, addresses, gateways and the tables as static routes), and
//!   [`Model::refusals`], the address and route check of every plan load
//!   (which first tries `Model::surely_builds`, a quick proof that the
//!   model would refuse nothing, and assembles the model only without it);
//! - [`reroute`]: the static routes a failure can change, listed again
//!   alone, the rest taken from the whole fabric's (the failure
//!   analysis's QoS proof and cut pairs);
//! - [`bgp`]: the eBGP model (`routing = "bgp"`): per switch its ASN, one
//!   session per inter-switch cable with BFD, the subnets it announces, and
//!   the routes BGP installs ([`Bgp::installed`]), which equal the tables;
//! - [`lab`]: the plan as a lab builds it in network namespaces (the model
//!   above, typed for `provisioner lab`), and the per-flow next hops
//!   ([`Lab::pins`]) that make a kernel forward each flow as routed here;
//! - [`burnin`]: the burn-in's rounds over a lab description (every
//!   directed inter-switch link loaded once) and its report.
//!
//! This module reads only the plan's vocabulary (`plan`, `qos`, `error`),
//! never `checked`, `validate`, `render`, `ranks` or `estimate`: the load
//! check uses it, so it takes a [`Plan`](crate::plan::Plan) and the name of
//! where the plan came from, for its errors.
//!
//! # Links
//!
//! Every directed link has a dense id, so loads are counted in a plain
//! vector. With S sub-nodes:
//!
//! - `0..S`: access link up, from sub-node i's NIC to its switch;
//! - `S..2S`: access link down, from the switch to sub-node i's NIC;
//! - `2S..`: one id per switch port with role `inter_switch`, in switch
//!   order and then port order. The id of port p of switch a is the
//!   direction a to its peer, so each cable has two ids, one from each end,
//!   and parallel cables between the same two switches are distinct links.
//!
//! # Routes
//!
//! - Same switch: the access links only.
//! - BiGraph: between the parts, the direct link (the only one in a designed
//!   plan); within a part, up to a switch of the other part chosen by ECMP
//!   among the source switch's links to switches of the other part that
//!   link to the destination (all of them in a designed plan), then down
//!   its direct link to the destination switch.
//! - 2-tier leaf-spine: up to a spine chosen by ECMP among all the leaf's
//!   uplinks (parallel links to one spine count as separate next hops), then
//!   down one of the spine's links to the destination leaf, chosen by ECMP
//!   too when there are parallel links.
//! - 3-tier fat-tree: within a pod, up to an aggregation switch and down;
//!   between pods, up to an aggregation switch, up to a core, down to an
//!   aggregation switch of the destination pod and down to the edge. Each
//!   upward hop is an ECMP choice among all uplinks; each downward hop
//!   chooses among the links that lead towards the destination.
//!
//! # Avoiding links and switches
//!
//! A network built with [`Network::avoiding`] keeps every route off the
//! avoided cables (both directions, every parallel cable between the two
//! switches) and switches (no route starts, ends or passes there). Each ECMP
//! choice is then made among the next hops that can still carry the flow
//! and lead on to its destination, in the same order and with the same
//! hash as above, so a flow whose choices are untouched keeps its route:
//!
//! - BiGraph between the parts without a usable direct link: a detour of 3
//!   inter-switch hops, to another switch of the destination's part, back
//!   to another switch of the source's part that still has a link to the
//!   destination, and down that link; each hop an ECMP choice;
//! - BiGraph within a part: the intermediate switch is chosen among those
//!   that can still be reached and still reach the destination;
//! - fat-tree: every upward and downward choice skips dead next hops and
//!   next hops that no longer lead to the destination.
//!
//! Two switches that no route joins any more give an error naming them.
//!
//! Every route is a walk over the forwarding tables of [`tables`]: at each
//! switch the flow takes one of the next hops that switch has towards the
//! destination's switch, so what a flow does is what the rendered static
//! routes allow.
//!
//! Per-flow routes follow the plan's structure rather than a general
//! shortest-path search, which keeps routing O(hops) per flow for 131,072
//! sub-nodes; a plan that lacks a link the structure needs gives an error
//! naming it. The ECMP hash is described in [`hash`].

pub mod addresses;
pub mod avoid;
pub mod bgp;
pub mod burnin;
pub mod count;
#[cfg(test)]
pub(crate) mod count_tests;
pub mod flows;
pub mod graph;
#[cfg(test)]
pub(crate) mod graph_tests;
pub mod hash;
#[cfg(test)]
pub(crate) mod hpn_tests;
pub mod lab;
pub mod links;
pub mod policy;
pub(crate) mod reroute;
pub mod tables;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use addresses::{Model, PortKind, ip, netmask};
pub use avoid::{Avoid, Target};
pub use bgp::{Bgp, Installed, Session, Speaker};
pub use count::{CountScratch, CrossLinks};
pub use graph::RouteGraph;
pub use hash::{EcmpPrefix, PortSeed, SourceShare, ecmp_hash, fnv1a64, source_port, sub_node_ip};
pub use lab::{Lab, Pin};
pub use links::Network;
pub use policy::{Leg, Policy, Spread};
pub use tables::NextHops;

/// Most links on a route: up, four inter-switch hops (3-tier fat-tree
/// between pods), down.
pub const MAX_LINKS: usize = 6;

/// A directed link of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// From the NIC of a sub-node (index into `plan.sub_node_list`) to its
    /// switch.
    Up {
        /// The sub-node.
        sub_node: usize,
        /// The NIC's port: 0, or 1 for the second port of a dual-port NIC.
        port: u8,
    },
    /// From a switch to the NIC of a sub-node.
    Down {
        /// The sub-node.
        sub_node: usize,
        /// The NIC's port: 0, or 1 for the second port of a dual-port NIC.
        port: u8,
    },
    /// From switch `from` out of its port `port` to switch `to` (indices
    /// into `plan.switch_list`).
    InterSwitch {
        /// Sending switch.
        from: usize,
        /// Its port.
        port: u32,
        /// Receiving switch.
        to: usize,
    },
}

/// A route: the directed links a flow takes, in order. The first is the
/// source's access link up, the last the destination's access link down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Route {
    links: [usize; MAX_LINKS],
    len: usize,
}

impl Default for Route {
    /// No link yet: a route to fill ([`Network::route_seeded`]).
    fn default() -> Self {
        Self::new()
    }
}

impl Route {
    fn new() -> Self {
        Self {
            links: [0; MAX_LINKS],
            len: 0,
        }
    }

    fn push(&mut self, link: usize) {
        self.links[self.len] = link;
        self.len += 1;
    }

    /// Every link, access links included.
    pub fn links(&self) -> &[usize] {
        &self.links[..self.len]
    }

    /// The inter-switch links only (empty within one switch).
    pub fn inter_switch(&self) -> &[usize] {
        &self.links[1..self.len - 1]
    }

    /// Number of switches the flow crosses.
    pub fn switches(&self) -> usize {
        self.len - 1
    }
}
