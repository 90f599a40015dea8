//! The other fabric for the same sub-nodes: the fat-tree for a BiGraph's
//! and the BiGraph for a fat-tree's, from a plan, a count or an inventory.

use super::shorthand::{self, FatTreeSpec, RailSpec, Shorthand};
use super::{DesignOptions, design};
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::inventory::Inventory;
use crate::plan::Topology;

/// The M x N BiGraph for `nodes` sub-nodes: N the smallest power of two
/// with `nodes` a multiple of N and M = nodes / N <= N / 2 (4 x 16 for 64,
/// 16 x 64 for 1,024).
pub fn bigraph_shape(nodes: usize) -> Result<(usize, usize)> {
    let mut n = 2usize;
    while n <= 1 << 24 {
        if nodes.is_multiple_of(n) && nodes / n <= n / 2 && nodes / n >= 1 {
            return Ok((nodes / n, n));
        }
        n *= 2;
    }
    Err(Error::parameter(
        "scale",
        format!(
            "{nodes} sub-nodes: no M x N BiGraph with N a power of two fits; use a multiple of a power of two, such as 64 or 1024"
        ),
    ))
}

/// A synthetic fabric of `topology` for `nodes` identical sub-nodes at
/// `link_gbps`: the BiGraph of [`bigraph_shape`], a non-blocking
/// fat-tree of `ports`-port switches, 2 tiers while they hold the
/// sub-nodes (`nodes <= ports²/2`) and k-ary 3 tiers beyond, or a
/// non-blocking rail-optimized fabric of `ports`-port switches with 8
/// rails (4, 2 or 1 when 8 does not divide `nodes`), or its HPN
/// counterpart (the same servers with dual-port NICs, `link_gbps` per
/// port).
pub fn fabric(
    topology: Topology,
    nodes: usize,
    link_gbps: u32,
    ports: usize,
) -> Result<CheckedPlan> {
    let s = Shorthand {
        link_gbps,
        ..Shorthand::default()
    };
    let (inv, opts) = match topology {
        Topology::BiGraph => {
            let (m, n) = bigraph_shape(nodes)?;
            shorthand::bigraph(m, n, &s)?
        }
        Topology::FatTree => {
            let tiers = if nodes <= ports * ports / 2 { 2 } else { 3 };
            let spec = FatTreeSpec {
                tiers,
                sub_nodes: Some(nodes),
                ports: Some(u32::try_from(ports).unwrap_or(u32::MAX)),
                oversubscription: 1.0,
            };
            shorthand::fat_tree_of(&spec, &s)?
        }
        Topology::RailOptimized | Topology::Hpn => {
            let rails = [8, 4, 2, 1]
                .into_iter()
                .find(|r| nodes.is_multiple_of(*r))
                .unwrap_or(1);
            let spec = RailSpec {
                sub_nodes: nodes,
                rails,
                ports: Some(u32::try_from(ports).unwrap_or(u32::MAX)),
                oversubscription: 1.0,
            };
            let (inv, opts) = shorthand::rail_optimized_of(&spec, &s)?;
            if topology == Topology::Hpn {
                shorthand::as_hpn(inv, opts)
            } else {
                (inv, opts)
            }
        }
    };
    design(&inv, &opts)
}

/// The plan of the other topology for `plan`'s sub-nodes and link speed
/// (its fastest NIC): a non-blocking fat-tree for a BiGraph (2 tiers of
/// switches with the plan's port count, 3 tiers when 2 do not hold them,
/// and 2 tiers of larger switches, a power of two of ports, when 3 do not
/// either), the M x N BiGraph of [`bigraph_shape`] for a fat-tree.
pub fn counterpart(plan: &CheckedPlan) -> Result<CheckedPlan> {
    let count = plan.sub_node_list.len();
    let link_gbps = plan
        .sub_node_list
        .iter()
        .map(|s| s.nic_gbps)
        .max()
        .unwrap_or(100)
        .max(1);
    match plan.topology {
        Topology::BiGraph => {
            let mut ports = plan
                .switch_list
                .iter()
                .map(|sw| sw.ports.len())
                .max()
                .unwrap_or(64)
                .max(4);
            if count > ports * ports * ports / 4 {
                ports = ports.next_power_of_two();
                while count > ports * ports / 2 {
                    ports *= 2;
                }
            }
            fabric(Topology::FatTree, count, link_gbps, ports)
        }
        Topology::FatTree | Topology::RailOptimized | Topology::Hpn => {
            fabric(Topology::BiGraph, count, link_gbps, 0)
        }
    }
}

/// Designs `inv` as `topology` with `opts` otherwise (oversubscription
/// and tiers of a fat-tree), taking as many switches of the inventory's
/// models as the design needs and choosing a BiGraph's M and N itself:
/// how `compare` puts the two topologies side by side.
pub fn for_inventory(
    inv: &Inventory,
    opts: &DesignOptions,
    topology: Topology,
) -> Result<CheckedPlan> {
    let opts = DesignOptions {
        topology,
        grow_switch_pool: true,
        n: None,
        m: None,
        ..opts.clone()
    };
    design(inv, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan the shorthand text `spec` designs.
    fn from_text(spec: &str) -> CheckedPlan {
        let (inv, opts) = shorthand::fat_tree(spec, &Shorthand::default()).unwrap();
        design(&inv, &opts).unwrap()
    }

    #[test]
    fn fabric_is_what_the_shorthand_text_designs() {
        let two = fabric(Topology::FatTree, 64, 100, 16).unwrap();
        assert_eq!(two, from_text("tiers=2,sub-nodes=64,ports=16"));
        let three = fabric(Topology::FatTree, 200, 100, 16).unwrap();
        assert_eq!(three, from_text("tiers=3,k=16,sub-nodes=200"));
        let (inv, opts) = shorthand::bigraph(4, 16, &Shorthand::default()).unwrap();
        let bigraph = fabric(Topology::BiGraph, 64, 100, 0).unwrap();
        assert_eq!(bigraph, design(&inv, &opts).unwrap());
    }

    #[test]
    fn counterparts_swap_the_topology_and_keep_the_sub_nodes() {
        let (inv, opts) = shorthand::bigraph(4, 16, &Shorthand::default()).unwrap();
        let bigraph = design(&inv, &opts).unwrap();
        let fat_tree = counterpart(&bigraph).unwrap();
        assert_eq!(fat_tree.topology, Topology::FatTree);
        assert_eq!(fat_tree.sub_node_list.len(), 64);
        let back = counterpart(&fat_tree).unwrap();
        assert_eq!(back.topology, Topology::BiGraph);
        assert_eq!(back, bigraph);
        // 64 sub-nodes fit 2 tiers of the BiGraph's switches.
        let ports = bigraph.switch_list.iter().map(|s| s.ports.len()).max();
        let spec = format!("tiers=2,sub-nodes=64,ports={}", ports.unwrap());
        assert_eq!(fat_tree, from_text(&spec));
    }

    #[test]
    fn a_count_without_a_bigraph_shape_is_refused() {
        assert_eq!(bigraph_shape(64).unwrap(), (4, 16));
        assert_eq!(bigraph_shape(1024).unwrap(), (16, 64));
        let e = bigraph_shape(63).unwrap_err().to_string();
        assert!(e.starts_with("scale: 63 sub-nodes"), "{e}");
    }
}
