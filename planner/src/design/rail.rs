//! Rail-optimized designs: the servers are cut into groups, every group has
//! one rail switch per NIC index (server NIC `i` is cabled to rail switch
//! `i` of its group), and a spine tier above every rail switch.
//!
//! The rail switches are the leaves of a 2-tier leaf-spine, so the leaf's
//! split into downlinks and uplinks under the asked oversubscription, the
//! spine count and the leaf-to-spine cabling are the fat-tree's
//! ([`super::fattree`]); only which NIC goes to which leaf differs. Traffic
//! between the same NIC index of two servers of a group crosses one rail
//! switch; everything else goes up to a spine.

use super::fattree::{
    Spec, Tiers, Why, available, link_spines, short, spare_note, spine_shape, take_tier,
};
use super::{DesignOptions, Endpoint, FabricBuilder, Pool, SwitchSlot, even_split};
use crate::error::{Error, Result};
use crate::inventory::Inventory;
use crate::plan::{FatTreeParams, Plan, RailParams, Tier, Topology};
use crate::text::gbps;

pub(super) fn design(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
) -> Result<Plan> {
    let Tiers {
        leaf_tpls,
        leaf,
        spine_tpls,
        spine,
        mut notes,
    } = Tiers::of(inv, "rail-optimized fabric", "rail")?;
    let infeasible = |reason: String, fix: String| Error::Infeasible {
        input: inv.source.clone(),
        topology: "rail-optimized fabric".to_string(),
        reason,
        fix,
    };
    if opts.tiers.is_some_and(|t| t != 2) {
        return Err(Error::parameter(
            "tiers",
            "a rail-optimized fabric here has 2 tiers (rail switches and spines): give 2 tiers, or none"
                .to_string(),
        ));
    }
    let mut plan = build(inv, opts, endpoints, &leaf_tpls, leaf, &spine_tpls, spine)
        .map_err(|(r, f)| infeasible(r, f))?;
    notes.append(&mut plan.notes);
    plan.notes = notes;
    Ok(plan)
}

/// The servers that have NICs, in inventory order, each with its
/// endpoints (indices into `endpoints`).
pub(super) fn servers_of(endpoints: &[Endpoint]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut last = None;
    for (i, e) in endpoints.iter().enumerate() {
        if last != Some(e.server) {
            out.push(Vec::new());
            last = Some(e.server);
        }
        if let Some(s) = out.last_mut() {
            s.push(i);
        }
    }
    out
}

/// How a rail fabric's servers fall into groups and its rail switches
/// into a leaf-spine: rail-optimized, and each plane of HPN.
pub(super) struct Shape {
    /// The fastest NIC (per port), its downlink speed and the leaf-spine
    /// link speed.
    pub nic: u32,
    pub link: u32,
    pub down: f64,
    /// Per server with NICs, its endpoints.
    pub servers: Vec<Vec<usize>>,
    /// NIC indices per server.
    pub rails: usize,
    /// Servers per group (`loads.len()` groups); `g` is the fullest.
    pub loads: Vec<usize>,
    pub g: usize,
    /// Rail switches (`groups × rails`), each with `u` uplinks; spines,
    /// and links between every rail switch and spine.
    pub leaves: usize,
    pub u: usize,
    pub spines: usize,
    pub w: usize,
}

impl Shape {
    /// The shape for `endpoints` on `leaf` and `spine` switches under
    /// oversubscription `o`; `(one, many)` name a rail switch in errors.
    pub(super) fn of(
        endpoints: &[Endpoint],
        leaf: Spec,
        spine: Spec,
        o: f64,
        (one, many): (&str, &str),
    ) -> std::result::Result<Shape, Why> {
        let nic = endpoints.iter().map(|e| e.gbps).max().unwrap_or(0);
        let link = leaf.gbps.min(spine.gbps);
        let down = f64::from(nic.min(leaf.gbps));
        let servers = servers_of(endpoints);
        let rails = endpoints.iter().map(|e| e.index + 1).max().unwrap_or(0);
        // A rail switch carries one NIC (port) of every server of its group.
        let (per_group, _) =
            super::leaf_split(leaf.ports, down, f64::from(link), o).ok_or_else(|| {
                (
                    format!(
                        "a {}-port {one} cannot carry servers and uplinks",
                        leaf.ports
                    ),
                    "use switches with more ports".to_string(),
                )
            })?;
        let groups = servers.len().div_ceil(per_group);
        let loads = even_split(servers.len(), groups);
        let g = loads[0];
        let leaves = groups * rails;
        let (u, spines, w) = spine_shape(leaves, g, down, f64::from(link), o, spine.ports, many)?;
        Ok(Shape {
            nic,
            link,
            down,
            servers,
            rails,
            loads,
            g,
            leaves,
            u,
            spines,
            w,
        })
    }
}

/// Takes the rail switches of `groups` groups of `rails` rails, group by
/// group and rail by rail within a group, each marked with its rail, its
/// group as pod and, for an HPN plane, its plane.
pub(super) fn take_rails(
    pool: &mut Pool<'_>,
    fabric: &mut FabricBuilder<'_>,
    templates: &[usize],
    groups: usize,
    rails: usize,
    plane: Option<usize>,
) -> std::result::Result<Vec<SwitchSlot>, Why> {
    let mut slots = Vec::with_capacity(groups * rails);
    for group in 0..groups {
        for rail in 0..rails {
            let slot = take_tier(pool, fabric, templates, Tier::Leaf, Some(group), 1)?
                .pop()
                .ok_or_else(short)?;
            fabric.set_rail(slot.index, rail);
            if let Some(p) = plane {
                fabric.set_plane(slot.index, p);
            }
            slots.push(slot);
        }
    }
    Ok(slots)
}

fn build(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
    leaf_tpls: &[usize],
    leaf: Spec,
    spine_tpls: &[usize],
    spine: Spec,
) -> std::result::Result<Plan, Why> {
    let o = opts.oversubscription;
    let shape = Shape::of(endpoints, leaf, spine, o, ("rail switch", "rail switches"))?;
    let (link, down, rails, g) = (shape.link, shape.down, shape.rails, shape.g);
    let (leaves, u, spines, w) = (shape.leaves, shape.u, shape.spines, shape.w);
    let (servers, loads) = (&shape.servers, &shape.loads);
    let groups = loads.len();
    if !opts.grow_switch_pool {
        let (l_got, s_got) = available(inv, leaf_tpls, leaves, spine_tpls, spines);
        if l_got < leaves || s_got < spines {
            return Err((
                format!(
                    "{} servers of {rails} NICs need {groups} group{} of {rails} rail switches ({g} servers, {u} uplinks each) and {spines} spines; the inventory has {l_got} for rail switches and {s_got} for spines after that",
                    servers.len(),
                    if groups == 1 { "" } else { "s" },
                ),
                format!("add {} switches", (leaves - l_got) + (spines - s_got)),
            ));
        }
    }

    let mut pool = Pool::new(inv, opts.grow_switch_pool);
    let mut fabric = FabricBuilder::new(inv).on_rails();
    // Rail switches group by group, rail by rail within a group.
    let rail_slots = take_rails(&mut pool, &mut fabric, leaf_tpls, groups, rails, None)?;
    let spine_slots = take_tier(
        &mut pool,
        &mut fabric,
        spine_tpls,
        Tier::Spine,
        None,
        spines,
    )?;
    link_spines(&mut fabric, &rail_slots, &spine_slots, u, w);
    // Server k of a group takes port k (after the uplinks) of every rail
    // switch of the group that it has a NIC for.
    let mut next = 0;
    let mut fullest = 0;
    let mut carried = vec![0usize; leaves];
    for (group, &load) in loads.iter().enumerate() {
        for k in 0..load {
            for &e in &servers[next] {
                let ep = &endpoints[e];
                let leaf_index = group * rails + ep.index;
                let slot = &rail_slots[leaf_index];
                fabric.attach(slot.index, slot.usable[u + k], ep);
                carried[leaf_index] += 1;
                fullest = fullest.max(carried[leaf_index]);
            }
            next += 1;
        }
    }

    let mut notes = vec![if leaves == 1 {
        format!(
            "one rail switch carries all {} servers: no spines are needed",
            servers.len()
        )
    } else {
        format!(
            "rail-optimized: {groups} group{} of {g} servers, {rails} rail switch{} per group (server NIC i to rail switch i of its group, {u} uplinks each), {spines} spines, {w} link{} between every rail switch and spine; oversubscription {}:1 (downlink {} Gbps, uplink {} Gbps per rail switch)",
            if groups == 1 { "" } else { "s" },
            if rails == 1 { "" } else { "es" },
            if w == 1 { "" } else { "s" },
            gbps(o),
            gbps(g as f64 * down),
            gbps(u as f64 * f64::from(link))
        )
    }];
    notes.push(
        "same NIC index within a group: one hop over its rail switch; other pairs go over a spine"
            .to_string(),
    );
    notes.extend(spare_note(&mut pool, inv, opts));
    let mut plan = fabric.finish(Topology::RailOptimized, notes, Vec::new());
    plan.fat_tree = Some(FatTreeParams::leaf_spine(o, fullest, u, w));
    plan.rail = Some(RailParams {
        rails,
        groups,
        servers_per_group: g,
    });
    Ok(plan)
}
