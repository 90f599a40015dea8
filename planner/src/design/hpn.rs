//! HPN designs (Alibaba, SIGCOMM 2024): two planes, each a rail-optimized
//! 2-tier leaf-spine of ToRs and an aggregation tier, and dual-port NICs
//! whose port 0 goes to the plane-A ToR of their rail and port 1 to the
//! plane-B ToR of the same rail (dual-ToR).
//!
//! The servers are cut into segments; a segment has, in each plane, one
//! ToR per NIC index (rail), and a ToR carries one port of that NIC of
//! every server of its segment. Each plane's aggregation switches link to
//! every ToR of that plane only, so a flow stays in the plane it enters.
//! The ToR's split into downlinks and uplinks under the asked
//! oversubscription, the aggregation count and the ToR-to-aggregation
//! cabling are the fat-tree's ([`super::fattree`]), per plane; what the
//! planner assumed beyond the paper is in `docs/modern-fabrics.md`, "HPN
//! as we model it".

use super::fattree::{Spec, Tiers, Why, available, link_spines, spare_note, take_tier};
use super::rail::{Shape, take_rails};
use super::{DesignOptions, Endpoint, FabricBuilder, Pool};
use crate::error::{Error, Result};
use crate::inventory::Inventory;
use crate::plan::{FatTreeParams, HpnParams, Plan, RailParams, Tier, Topology};
use crate::text::gbps;

/// Planes of an HPN fabric.
pub(crate) const PLANES: usize = 2;

/// The inventory with every NIC given two ports (`speed_gbps` per port),
/// as HPN cables them: what `compare` and the shorthands design as HPN.
pub fn dual_port(inv: &Inventory) -> Inventory {
    let mut inv = inv.clone();
    for t in &mut inv.server_templates {
        for n in &mut t.nics {
            n.ports = 2;
        }
    }
    inv
}

pub(super) fn design(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
) -> Result<Plan> {
    let infeasible = |reason: String, fix: String| Error::Infeasible {
        input: inv.source.clone(),
        topology: "dual-plane HPN fabric".to_string(),
        reason,
        fix,
    };
    if let Some(e) = endpoints.iter().find(|e| e.ports != 2) {
        let server = &inv.servers[e.server];
        let t = inv.template_of(server);
        let nic = &t.nics[e.spec.nic];
        let at = nic.line.map_or(String::new(), |l| format!(" (line {l})"));
        return Err(infeasible(
            format!(
                "HPN cables every NIC to two ToRs (dual-ToR), but NIC {} of server {} has {} port{}",
                nic.name,
                server.name,
                e.ports,
                if e.ports == 1 { "" } else { "s" }
            ),
            match nic.line {
                Some(_) => format!(
                    "give every [[server.nic]] of the inventory `ports = 2`{at} (speed_gbps is per port), or design another topology"
                ),
                // A shorthand's synthetic inventory has no file to edit.
                None => "use the HPN shorthand, which gives every NIC two ports, or design another topology".to_string(),
            },
        ));
    }
    let tiers = Tiers::of(inv, "dual-plane HPN fabric", "ToR")?;
    if opts.tiers.is_some_and(|t| t != 2) {
        return Err(Error::parameter(
            "tiers",
            "an HPN fabric here has 2 tiers per plane (ToRs and aggregation switches): give 2 tiers, or none"
                .to_string(),
        ));
    }
    let mut plan = build(
        inv,
        opts,
        endpoints,
        (&tiers.leaf_tpls, tiers.leaf),
        (&tiers.spine_tpls, tiers.spine),
    )
    .map_err(|(r, f)| infeasible(r, f))?;
    let mut notes = tiers.notes;
    notes.append(&mut plan.notes);
    plan.notes = notes;
    Ok(plan)
}

fn build(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
    (tor_tpls, tor): (&[usize], Spec),
    (agg_tpls, agg): (&[usize], Spec),
) -> std::result::Result<Plan, Why> {
    let o = opts.oversubscription;
    // Each plane is a rail-optimized leaf-spine of ToRs; HPN designs one
    // pod (its core tier between pods is not designed).
    let shape = Shape::of(
        endpoints,
        tor,
        agg,
        o,
        (
            "ToR",
            "ToRs of a plane (HPN's core tier between pods is not designed)",
        ),
    )?;
    let (nic, link, down, rails, g) = (shape.nic, shape.link, shape.down, shape.rails, shape.g);
    let (tors, u, aggs, w) = (shape.leaves, shape.u, shape.spines, shape.w);
    let (servers, loads) = (&shape.servers, &shape.loads);
    let segments = loads.len();
    if !opts.grow_switch_pool {
        let (t_got, a_got) = available(inv, tor_tpls, PLANES * tors, agg_tpls, PLANES * aggs);
        if t_got < PLANES * tors || a_got < PLANES * aggs {
            return Err((
                format!(
                    "{} servers of {rails} dual-port NICs need, in each of {PLANES} planes, {segments} segment{} of {rails} ToRs ({g} servers, {u} uplinks each) and {aggs} aggregation switches: {} ToRs and {} aggregation switches; the inventory has {t_got} for ToRs and {a_got} for aggregation after that",
                    servers.len(),
                    if segments == 1 { "" } else { "s" },
                    PLANES * tors,
                    PLANES * aggs,
                ),
                format!(
                    "add {} switches",
                    (PLANES * tors - t_got) + (PLANES * aggs - a_got)
                ),
            ));
        }
    }

    let mut pool = Pool::new(inv, opts.grow_switch_pool);
    let mut fabric = FabricBuilder::new(inv).on_rails();
    // Per plane: its ToRs segment by segment, rail by rail within a
    // segment, then its aggregation switches.
    let mut planes = Vec::with_capacity(PLANES);
    for plane in 0..PLANES {
        let tor_slots = take_rails(
            &mut pool,
            &mut fabric,
            tor_tpls,
            segments,
            rails,
            Some(plane),
        )?;
        let agg_slots = take_tier(&mut pool, &mut fabric, agg_tpls, Tier::Spine, None, aggs)?;
        for s in &agg_slots {
            fabric.set_plane(s.index, plane);
        }
        link_spines(&mut fabric, &tor_slots, &agg_slots, u, w);
        planes.push(tor_slots);
    }
    // Server k of a segment takes port k (after the uplinks) of its rail's
    // ToR in both planes.
    let mut next = 0;
    for (segment, &load) in loads.iter().enumerate() {
        for k in 0..load {
            for &e in &servers[next] {
                let ep = &endpoints[e];
                let t = segment * rails + ep.index;
                let (a, b) = (&planes[0][t], &planes[1][t]);
                fabric.attach_dual((a.index, a.usable[u + k]), (b.index, b.usable[u + k]), ep);
            }
            next += 1;
        }
    }

    let mut notes = vec![format!(
        "HPN: {PLANES} planes, each with {segments} segment{} of {g} servers x {rails} rail ToR{} ({u} uplinks each) and {aggs} aggregation switch{}, {w} link{} between every ToR and aggregation switch of its plane; every NIC's port 0 on its rail's plane-A ToR, port 1 on the plane-B ToR; oversubscription {}:1 per ToR (downlink {} Gbps, uplink {} Gbps)",
        if segments == 1 { "" } else { "s" },
        if rails == 1 { "" } else { "s" },
        if aggs == 1 { "" } else { "es" },
        if w == 1 { "" } else { "s" },
        gbps(o),
        gbps(g as f64 * down),
        gbps(u as f64 * f64::from(link))
    )];
    notes.push(format!(
        "each NIC carries {} Gbps per port, {} Gbps over both; a flow stays in one plane (ecmp and dmodk pick the plane per flow, spray splits it over both): same rail and segment one hop over a ToR, other pairs over an aggregation switch of the flow's plane",
        nic,
        2 * nic
    ));
    if aggs == 0 {
        notes.push("one ToR per plane carries every server: no aggregation tier".to_string());
    }
    notes.extend(spare_note(&mut pool, inv, opts));
    let mut plan = fabric.finish(Topology::Hpn, notes, Vec::new());
    plan.fat_tree = Some(FatTreeParams::leaf_spine(o, g, u, w));
    plan.rail = Some(RailParams {
        rails,
        groups: segments,
        servers_per_group: g,
    });
    plan.hpn = Some(HpnParams {
        planes: PLANES,
        segments,
        servers_per_segment: g,
        tors_per_plane: tors,
        aggregation_per_plane: aggs,
    });
    Ok(plan)
}
