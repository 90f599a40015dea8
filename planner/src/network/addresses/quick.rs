//! A quick proof that [`Model::refusals`] finds nothing, for the load check.
//!
//! The load check builds the render model only to learn whether `render`
//! would refuse the plan, and only when every other check found nothing
//! (`validate::records::render_model`). Most of what the model refuses is
//! then already excluded by those checks; [`Model::surely_builds`] checks
//! the rest, cheaply, and says true only when the model would refuse
//! nothing. When it says false, the caller assembles the model, so the
//! refusals (their text and order) are always the model's own.
//!
//! Each step of [`Model::assemble`] below, with why it refuses nothing on
//! such a plan (the arguments are held by `validate::render_tests`, which
//! compares the load check's findings with and without this proof on
//! bundled plans, designs and plans broken on purpose):
//!
//! - the QoS intent's problems, the address pools and `switch_mtu`'s
//!   names: `validate::records` reports the same calls'
//!   (`qos_intent().problems`, `addressing.pools()`) and every
//!   `switch_mtu` name that is not a physical switch;
//! - `devices`: two ports of one box with the same number are a finding
//!   of `Index::new` (it sorts the same list, every port of every switch
//!   of one physical name); two halves of one box with the same VLAN are
//!   checked here;
//! - `links`: the link pool's size is checked here, counting the
//!   inter-switch cables by the header's `links` (the consistency check
//!   holds it to the cable list). A cable's ends are a device port each
//!   (consistency resolves them by the same physical names and
//!   `str::parse` of `b_port`, else "an end is not a device or port");
//!   each end is an inter-switch port naming the other end's switch and
//!   port, and every inter-switch port is such an end (consistency's links
//!   from the ports equal the links from the cables). What consistency
//!   does not imply is how the peer port is written: it reads the number
//!   (`05` and `+5` are 5), the model wants it as a plain decimal, so that
//!   is checked here;
//! - `sub_nodes`: a NIC port is on a sub-node port of the switch it names
//!   (consistency: "does not carry it"), and every sub-node port names a
//!   NIC port that is on it ("says ... is on"); with as many NIC ports as
//!   sub-node ports (checked here), each sub-node port then carries
//!   exactly one NIC port. Addresses the inventory gives are checked only
//!   by the model, so a plan with any falls back to it. Without them every
//!   switch with sub-node ports needs a pool block, and the blocks are
//!   taken here by the model's own code ([`pool_blocks`]); an address
//!   from a block is the block's address 1 + the port's position in its
//!   switch, below the gateway (a block holds the ports + 3), and no two
//!   are equal (blocks do not overlap; a port carries one NIC port);
//! - `routes`: the model's test, over the same route graph: a next hop
//!   from every switch towards every other switch of its plane that has
//!   sub-nodes.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::super::graph::RouteGraph;
use super::super::links::Network;
use super::Model;
use super::assemble::{pool_blocks, routes_towards};
use crate::plan::{Plan, PortRole};

impl Model<'_> {
    /// The route graph of `plan`, which the proof builds, when
    /// [`Model::refusals`] of `plan` is surely empty; `plan` must be one
    /// every other check of the load check passed (see the module
    /// documentation), `nic_ports` the number of its sub-nodes' NIC ports
    /// (one each, two for a dual-port NIC) and `addressed` whether any of
    /// them has an address in the plan (the load check's index counts
    /// both in its pass over the sub-nodes). `None` means only that the
    /// model must be assembled to know. The load check hands the graph on
    /// to the checked plan, so that routing on it does not build it again.
    pub(crate) fn surely_builds(
        plan: &Plan,
        nic_ports: usize,
        addressed: bool,
    ) -> Option<Arc<RouteGraph>> {
        let (sub_pool, link_pool) = plan.addressing.pools().ok()?;
        // `devices`: the VLANs of one box.
        let mut vlans = FxHashSet::default();
        vlans.reserve(plan.switch_list.len());
        for s in &plan.switch_list {
            let vlan = s.vlan.unwrap_or(plan.addressing.vlan);
            if !vlans.insert((s.physical.as_str(), vlan)) {
                return None;
            }
        }
        // `links`: the pool holds a /31 per inter-switch cable.
        if (plan.links as u64).saturating_mul(2) > link_pool.size() {
            return None;
        }
        // `sub_nodes`: no address given, one NIC port per sub-node port.
        if addressed {
            return None;
        }
        // Peer ports written as plain numbers; the switches with
        // sub-nodes, which need a pool block and are the routes' targets.
        let mut sub_ports = 0usize;
        let mut needs = vec![false; plan.switch_list.len()];
        for (d, s) in plan.switch_list.iter().enumerate() {
            for p in &s.ports {
                match p.role {
                    PortRole::InterSwitch => {
                        let plain = p.peer_port.as_deref().is_some_and(|q| {
                            q.parse::<u32>()
                                .is_ok_and(|n| crate::text::is_decimal(q, u64::from(n)))
                        });
                        if !plain {
                            return None;
                        }
                    }
                    PortRole::SubNode => {
                        sub_ports += 1;
                        needs[d] = true;
                    }
                    PortRole::Free | PortRole::Reserved => {}
                }
            }
        }
        if sub_ports != nic_ports {
            return None;
        }
        if pool_blocks(plan, &needs, vec![link_pool], sub_pool).is_err() {
            return None;
        }
        // `routes`.
        let graph = Arc::new(RouteGraph::build(plan).ok()?);
        let net = Network::on(plan, "", Arc::clone(&graph));
        let targets: Vec<usize> = (0..needs.len()).filter(|&d| needs[d]).collect();
        let routed = (0..needs.len()).all(|x| {
            targets
                .iter()
                .all(|&t| !routes_towards(plan, x, t) || !net.next_hops(x, t).is_empty(&net))
        });
        routed.then_some(graph)
    }
}
