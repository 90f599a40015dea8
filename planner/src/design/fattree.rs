//! Fat-tree designs: a 2-tier leaf-spine with a chosen oversubscription,
//! and a 3-tier k-ary fat-tree (k pods of k/2 edge and k/2 aggregation
//! switches, (k/2)^2 cores).

use super::{DesignOptions, Endpoint, FabricBuilder, Pool, SwitchSlot, even_split, templates_for};
use crate::error::{Error, Result};
use crate::inventory::{Inventory, SwitchRole};
use crate::plan::{FatTreeParams, Plan, Tier, Topology};
use crate::text::gbps;

/// Ports and speed of the switches of one tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spec {
    pub ports: usize,
    pub gbps: u32,
}

/// Splits a leaf's ports into sub-node downlinks of `down` Gbps and
/// uplinks of `up` Gbps: the most downlinks `d` such that `d + u <= ports`
/// and `d * down <= oversubscription * u * up`. Returns `(d, u)`.
pub fn leaf_split(ports: usize, down: f64, up: f64, oversub: f64) -> Option<(usize, usize)> {
    (1..ports)
        .rev()
        .map(|d| (d, uplinks_for(d, down, up, oversub)))
        .find(|&(d, u)| d + u <= ports)
}

fn uplinks_for(d: usize, down: f64, up: f64, oversub: f64) -> usize {
    let need = d as f64 * down / (oversub * up);
    (need - 1e-9).ceil().max(1.0) as usize
}

/// Largest sub-node count of a 2-tier leaf-spine: every spine port goes to
/// a different leaf, so at most `spine ports` leaves.
pub fn largest_two_tier(
    leaf_ports: usize,
    spine_ports: usize,
    down: f64,
    up: f64,
    oversub: f64,
) -> usize {
    leaf_split(leaf_ports, down, up, oversub).map_or(0, |(d, _)| d * spine_ports)
}

/// Largest sub-node count of a 3-tier k-ary fat-tree: k^3/4.
pub fn largest_three_tier(k: usize) -> usize {
    let k = k - k % 2;
    k * k * k / 4
}

/// The template group of a tier: the first eligible template and every
/// later eligible one with the same ports and speed.
pub(super) fn tier_templates(
    inv: &Inventory,
    roles: &[SwitchRole],
) -> (Vec<usize>, Option<Spec>, Vec<String>) {
    let eligible = templates_for(inv, roles);
    let Some(&first) = eligible.first() else {
        return (Vec::new(), None, Vec::new());
    };
    let spec_of = |t: usize| Spec {
        ports: inv.switch_templates[t].usable_ports().len(),
        gbps: inv.switch_templates[t].port_gbps,
    };
    let spec = spec_of(first);
    let mut same = Vec::new();
    let mut other = Vec::new();
    for t in eligible {
        if spec_of(t) == spec {
            same.push(t);
        } else {
            other.push(inv.switch_templates[t].pattern.clone());
        }
    }
    (same, Some(spec), other)
}

/// Counts whether `leaves` switches from `a` and then `spines` from `b`
/// (which may share templates with `a`) are in the inventory.
pub(super) fn available(
    inv: &Inventory,
    a: &[usize],
    leaves: usize,
    b: &[usize],
    spines: usize,
) -> (usize, usize) {
    let mut left: Vec<usize> = inv
        .switch_templates
        .iter()
        .map(|t| t.instances.len())
        .collect();
    let mut take = |tpls: &[usize], mut n: usize| {
        let mut got = 0;
        for &t in tpls {
            let k = left[t].min(n);
            left[t] -= k;
            n -= k;
            got += k;
        }
        got
    };
    let l = take(a, leaves);
    let s = take(b, spines);
    (l, s)
}

/// The two tiers of switches of a leaf-spine (or fat-tree) design: the
/// templates and their shape per tier, and the notes on what the design
/// leaves out. `fabric` (`fat-tree`, `rail-optimized`) and `leaf` (`leaf`,
/// `rail`) name it in messages.
pub(super) struct Tiers {
    pub leaf_tpls: Vec<usize>,
    pub leaf: Spec,
    pub spine_tpls: Vec<usize>,
    pub spine: Spec,
    pub notes: Vec<String>,
}

impl Tiers {
    pub(super) fn of(inv: &Inventory, fabric: &str, leaf: &str) -> Result<Tiers> {
        let (leaf_tpls, leaf_spec, leaf_other) = tier_templates(inv, &[SwitchRole::Leaf]);
        let (spine_tpls, spine_spec, spine_other) =
            tier_templates(inv, &[SwitchRole::Spine, SwitchRole::Core]);
        let (Some(leaf_spec), Some(spine)) = (leaf_spec, spine_spec) else {
            return Err(Error::Infeasible {
                input: inv.source.clone(),
                topology: fabric.to_string(),
                reason: format!("no switch template may serve as {leaf} and spine (check `role`)"),
                fix: "add switches with role = \"leaf\" and role = \"spine\", or without a role"
                    .to_string(),
            });
        };
        let mut notes = Vec::new();
        if inv.switch_templates.iter().any(|t| t.is_split()) {
            notes.push(format!(
                "the VLAN split of the switches applies to BiGraph only; the {fabric} uses whole switches"
            ));
        }
        for (tier, other) in [(leaf, &leaf_other), ("spine", &spine_other)] {
            if !other.is_empty() {
                notes.push(format!(
                    "{tier} tier uses one switch model; not used for it: {}",
                    other.join(", ")
                ));
            }
        }
        Ok(Tiers {
            leaf_tpls,
            leaf: leaf_spec,
            spine_tpls,
            spine,
            notes,
        })
    }
}

pub(super) fn design(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
) -> Result<Plan> {
    let p = endpoints.len();
    let nic = endpoints.iter().map(|e| e.gbps).max().unwrap_or(0);
    let Tiers {
        leaf_tpls,
        leaf,
        spine_tpls,
        spine,
        mut notes,
    } = Tiers::of(inv, "fat-tree", "leaf")?;
    let infeasible = |topology: &str, reason: String, fix: String| Error::Infeasible {
        input: inv.source.clone(),
        topology: topology.to_string(),
        reason,
        fix,
    };

    let two = || {
        two_tier(
            inv,
            opts,
            endpoints,
            &leaf_tpls,
            leaf,
            &spine_tpls,
            spine,
            nic,
        )
    };
    let three = || three_tier(inv, opts, endpoints, &leaf_tpls, leaf, &spine_tpls, spine);
    let mut plan = match opts.tiers {
        Some(2) => two().map_err(|(r, f)| infeasible("2-tier leaf-spine", r, f))?,
        Some(3) => three().map_err(|(r, f)| infeasible("3-tier fat-tree", r, f))?,
        Some(t) => {
            return Err(Error::parameter(
                "tiers",
                format!("{t} tiers: choose 2 (leaf-spine) or 3 (k-ary fat-tree)"),
            ));
        }
        None => match two() {
            Ok(plan) => plan,
            Err((r2, _)) => match three() {
                Ok(mut plan) => {
                    plan.notes
                        .insert(0, format!("3 tiers because 2 do not fit: {r2}"));
                    plan
                }
                Err((r3, f3)) => {
                    return Err(infeasible(
                        "fat-tree",
                        format!("neither 2 tiers ({r2}) nor 3 tiers ({r3}) fit {p} sub-nodes"),
                        f3,
                    ));
                }
            },
        },
    };
    notes.append(&mut plan.notes);
    plan.notes = notes;
    Ok(plan)
}

/// Why a shape does not fit, and what to do: the reason and the fix.
pub(super) type Why = (String, String);

#[allow(clippy::too_many_arguments)]
fn two_tier(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
    leaf_tpls: &[usize],
    leaf: Spec,
    spine_tpls: &[usize],
    spine: Spec,
    nic: u32,
) -> std::result::Result<Plan, Why> {
    let p = endpoints.len();
    let o = opts.oversubscription;
    let link = leaf.gbps.min(spine.gbps);
    let down = f64::from(nic.min(leaf.gbps));
    let (d_max, _) = leaf_split(leaf.ports, down, f64::from(link), o).ok_or_else(|| {
        (
            format!(
                "a {}-port leaf cannot carry sub-nodes and uplinks",
                leaf.ports
            ),
            "use switches with more ports".to_string(),
        )
    })?;
    let leaves = p.div_ceil(d_max);
    let loads = even_split(p, leaves);
    let d = loads[0];
    let (u, spines, w) = spine_shape(leaves, d, down, f64::from(link), o, spine.ports, "leaves")
        .map_err(|(r, f)| (r, format!("{f}, or use 3 tiers")))?;
    if !opts.grow_switch_pool {
        let (l_got, s_got) = available(inv, leaf_tpls, leaves, spine_tpls, spines);
        if l_got < leaves || s_got < spines {
            return Err((
                format!(
                    "{p} sub-nodes need {leaves} leaves ({d} sub-nodes, {u} uplinks each) and {spines} spines; the inventory has {l_got} for leaves and {s_got} for spines after that",
                ),
                format!("add {} switches", (leaves - l_got) + (spines - s_got)),
            ));
        }
    }

    let mut pool = Pool::new(inv, opts.grow_switch_pool);
    let mut fabric = FabricBuilder::new(inv);
    let leaf_slots = take_tier(&mut pool, &mut fabric, leaf_tpls, Tier::Leaf, None, leaves)?;
    let spine_slots = take_tier(
        &mut pool,
        &mut fabric,
        spine_tpls,
        Tier::Spine,
        None,
        spines,
    )?;
    link_spines(&mut fabric, &leaf_slots, &spine_slots, u, w);
    attach_even(&mut fabric, &leaf_slots, u, &loads, endpoints);

    let mut notes = vec![if leaves == 1 {
        format!("one switch carries all {p} sub-nodes: no spines are needed")
    } else {
        format!(
            "2-tier leaf-spine: {leaves} leaves ({d} sub-nodes and {u} uplinks each), {spines} spines, {w} link{} between every leaf and spine; oversubscription {}:1 (downlink {} Gbps, uplink {} Gbps per leaf)",
            if w == 1 { "" } else { "s" },
            gbps(o),
            gbps(d as f64 * down),
            gbps(u as f64 * f64::from(link))
        )
    }];
    notes.extend(spare_note(&mut pool, inv, opts));
    let mut plan = fabric.finish(Topology::FatTree, notes, Vec::new());
    plan.fat_tree = Some(FatTreeParams::leaf_spine(o, d, u, w));
    Ok(plan)
}

/// The spine tier over `leaves` leaves (called `what` in messages) of at
/// most `d` sub-nodes of `down` Gbps each, with uplinks of `up` Gbps and
/// oversubscription `o`: `(u, spines, w)`, the uplinks per leaf, the
/// spines and the parallel links between a leaf and a spine. Every spine
/// takes `w` ports per leaf, so the fewest spines whose ports fit. One
/// leaf needs no spine: `(0, 0, 0)`.
pub(super) fn spine_shape(
    leaves: usize,
    d: usize,
    down: f64,
    up: f64,
    o: f64,
    spine_ports: usize,
    what: &str,
) -> std::result::Result<(usize, usize, usize), Why> {
    if leaves == 1 {
        return Ok((0, 0, 0));
    }
    let u = uplinks_for(d, down, up, o);
    let s = (1..=u)
        .filter(|s| u.is_multiple_of(*s))
        .find(|s| leaves * (u / s) <= spine_ports)
        .ok_or_else(|| {
            (
                format!(
                    "{leaves} {what} need a spine port for each, but spines have {spine_ports} usable ports"
                ),
                format!(
                    "use spines with at least {leaves} ports, allow more oversubscription"
                ),
            )
        })?;
    Ok((u, s, u / s))
}

/// Cables every leaf to every spine: leaf i's uplink j (its j-th usable
/// port) goes to spine j / w, which gives leaf i its ports i*w .. i*w + w.
pub(super) fn link_spines(
    fabric: &mut FabricBuilder<'_>,
    leaves: &[SwitchSlot],
    spines: &[SwitchSlot],
    u: usize,
    w: usize,
) {
    for (i, l) in leaves.iter().enumerate() {
        for j in 0..u {
            let s = &spines[j / w];
            fabric.link(l.index, l.usable[j], s.index, s.usable[i * w + j % w]);
        }
    }
}

/// Takes `count` whole switches from `templates` into the fabric as `tier`.
pub(super) fn take_tier(
    pool: &mut Pool<'_>,
    fabric: &mut FabricBuilder<'_>,
    templates: &[usize],
    tier: Tier,
    pod: Option<usize>,
    count: usize,
) -> std::result::Result<Vec<SwitchSlot>, Why> {
    (0..count)
        .map(|_| {
            let phys = pool.take(templates).ok_or_else(short)?;
            let ports: Vec<u32> = (1..=fabric.inv.switch_templates[phys.template].ports).collect();
            Ok(fabric.add_switch(&phys, phys.name.clone(), tier, None, pod, &ports))
        })
        .collect()
}

pub(super) fn short() -> Why {
    (
        "the inventory ran out of switches".to_string(),
        "add switches".to_string(),
    )
}

pub(super) fn spare_note(
    pool: &mut Pool<'_>,
    inv: &Inventory,
    opts: &DesignOptions,
) -> Option<String> {
    if opts.grow_switch_pool {
        return None;
    }
    let all: Vec<usize> = (0..inv.switch_templates.len()).collect();
    let mut spare = Vec::new();
    while let Some(s) = pool.take(&all) {
        spare.push(s.name);
    }
    if spare.is_empty() {
        None
    } else if spare.len() <= 6 {
        Some(format!("spare switches (not needed): {}", spare.join(", ")))
    } else {
        Some(format!(
            "spare switches (not needed): {}, ... {} ({} in all)",
            spare[..3].join(", "),
            spare[spare.len() - 1],
            spare.len()
        ))
    }
}

/// Attaches endpoints in order: `loads[i]` of them on switch i, after its
/// first `skip` usable ports.
fn attach_even(
    fabric: &mut FabricBuilder<'_>,
    slots: &[SwitchSlot],
    skip: usize,
    loads: &[usize],
    endpoints: &[Endpoint],
) {
    let mut next = 0;
    for (slot, &load) in slots.iter().zip(loads) {
        for k in 0..load {
            fabric.attach(slot.index, slot.usable[skip + k], &endpoints[next]);
            next += 1;
        }
    }
}

fn three_tier(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
    leaf_tpls: &[usize],
    leaf: Spec,
    spine_tpls: &[usize],
    spine: Spec,
) -> std::result::Result<Plan, Why> {
    let p = endpoints.len();
    if (opts.oversubscription - 1.0).abs() > 1e-9 {
        return Err((
            format!(
                "a 3-tier k-ary fat-tree is non-blocking; oversubscription {}:1 was asked",
                gbps(opts.oversubscription)
            ),
            "design it without oversubscription, or with 2 tiers (a leaf-spine takes oversubscription)".to_string(),
        ));
    }
    let k = match opts.k {
        Some(k) => {
            let k = k as usize;
            if k < 2 || !k.is_multiple_of(2) || k > leaf.ports {
                return Err((
                    format!("k={k} is not an even port count of at most {}", leaf.ports),
                    format!(
                        "choose an even k between 2 and {}",
                        leaf.ports - leaf.ports % 2
                    ),
                ));
            }
            k
        }
        None => leaf.ports - leaf.ports % 2,
    };
    if k < 2 {
        return Err((
            "switches with fewer than 2 ports cannot build a fat-tree".to_string(),
            "use bigger switches".to_string(),
        ));
    }
    let h = k / 2;
    let per_pod = h * h;
    let pods = p.div_ceil(per_pod);
    if pods > k {
        return Err((
            format!(
                "a k={k} fat-tree holds at most {} sub-nodes; the inventory has {p}",
                largest_three_tier(k)
            ),
            format!("use switches with at least {} ports", min_k_for(p)),
        ));
    }
    if spine.ports < pods {
        return Err((
            format!(
                "{pods} pods need {pods} ports on every core switch; cores have {}",
                spine.ports
            ),
            "use core switches with more ports".to_string(),
        ));
    }
    let edges = pods * h;
    let cores = h * h;
    if !opts.grow_switch_pool {
        let (l_got, s_got) = available(inv, leaf_tpls, 2 * edges, spine_tpls, cores);
        if l_got < 2 * edges || s_got < cores {
            return Err((
                format!(
                    "{p} sub-nodes on a k={k} fat-tree need {pods} pods ({} edge and aggregation switches) and {cores} cores; the inventory has {l_got} and {s_got}",
                    2 * edges
                ),
                format!("add {} switches", (2 * edges - l_got) + (cores - s_got)),
            ));
        }
    }
    let mut pool = Pool::new(inv, opts.grow_switch_pool);
    let mut fabric = FabricBuilder::new(inv);
    let mut edge_slots = Vec::with_capacity(edges);
    let mut agg_slots = Vec::with_capacity(edges);
    for pod in 0..pods {
        edge_slots.extend(take_tier(
            &mut pool,
            &mut fabric,
            leaf_tpls,
            Tier::Edge,
            Some(pod),
            h,
        )?);
        agg_slots.extend(take_tier(
            &mut pool,
            &mut fabric,
            leaf_tpls,
            Tier::Aggregation,
            Some(pod),
            h,
        )?);
    }
    let core_slots = take_tier(&mut pool, &mut fabric, spine_tpls, Tier::Core, None, cores)?;
    for pod in 0..pods {
        for i in 0..h {
            let e = &edge_slots[pod * h + i];
            for j in 0..h {
                let a = &agg_slots[pod * h + j];
                fabric.link(e.index, e.usable[j], a.index, a.usable[i]);
            }
        }
        for j in 0..h {
            let a = &agg_slots[pod * h + j];
            for c in 0..h {
                let core = &core_slots[j * h + c];
                fabric.link(a.index, a.usable[h + c], core.index, core.usable[pod]);
            }
        }
    }
    let loads = even_split(p, edges);
    attach_even(&mut fabric, &edge_slots, h, &loads, endpoints);
    let mut notes = vec![format!(
        "3-tier k-ary fat-tree, k={k}: {pods} pod{} of {h} edge and {h} aggregation switches, {cores} core switches; non-blocking",
        if pods == 1 { "" } else { "s" }
    )];
    if pods < k {
        notes.push(format!(
            "{pods} of {k} pods built: every core switch has {} ports free for more pods",
            k - pods
        ));
    }
    notes.extend(spare_note(&mut pool, inv, opts));
    let mut plan = fabric.finish(Topology::FatTree, notes, Vec::new());
    plan.fat_tree = Some(FatTreeParams {
        tiers: 3,
        oversubscription: 1.0,
        k: Some(k as u32),
        pods: Some(pods),
        sub_nodes_per_leaf: loads[0],
        uplinks_per_leaf: h,
        links_per_leaf_spine: 1,
    });
    Ok(plan)
}

fn min_k_for(p: usize) -> usize {
    let mut k = 2;
    while largest_three_tier(k) < p {
        k += 2;
    }
    k
}
