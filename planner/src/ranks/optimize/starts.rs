//! Starting tables for the search: Algorithm 1 on what is left of a BiGraph, and the extra ranks of a fold placed next to their partners.

use std::fmt::Write as _;

use crate::network::Network;
use crate::plan::{Tier, Topology};
use crate::ranks::hdrm;

/// P' and r for X ranks: X = P' + r with P' the largest power of two not
/// above X.
pub(super) fn split(x: usize) -> (usize, usize) {
    let core = hdrm::prev_power_of_two(x);
    (core, x - core)
}

/// Algorithm 1 on a BiGraph whose parts may have lost switches or
/// sub-nodes, once per rotation of the lower part: the core ranks'
/// sub-nodes, each table with its name.
///
/// Two sizes are tried. The largest regular sub-fabric: the largest power
/// of two h of switches in each part that all have the g = P'/2h sub-nodes
/// Algorithm 1 puts on each (the healthiest and fullest switches first), so
/// that every rank has its place. And the stretched one: h the power of two
/// at or above the larger part, every usable switch in it, and the ranks
/// of a virtual switch that is missing, or beyond a switch's sub-nodes,
/// on the switches of the same part with the most room left (the local
/// search then sorts out what they collide with).
pub(super) fn algorithm1_starts(
    net: &Network<'_>,
    avail: &[Vec<usize>],
    core: usize,
) -> Vec<(String, Vec<usize>)> {
    let plan = net.plan();
    if plan.topology != Topology::BiGraph || core < 2 {
        return Vec::new();
    }
    // Cables of each switch that cannot be used, to prefer healthy ones.
    let mut dead = vec![0usize; plan.switch_list.len()];
    for l in net.inter_switch_links() {
        if net.is_dead_link(l)
            && let Some((a, _)) = net.ends(l)
        {
            dead[a] += 1;
        }
    }
    let part = |tier: Tier| -> Vec<usize> {
        (0..plan.switch_list.len())
            .filter(|&s| plan.switch_list[s].part_or_tier == tier && !avail[s].is_empty())
            .collect()
    };
    let parts = [part(Tier::Upper), part(Tier::Lower)];
    let (fewest, most) = (
        parts[0].len().min(parts[1].len()),
        parts[0].len().max(parts[1].len()),
    );
    if fewest == 0 {
        return Vec::new();
    }
    let groups = |h: usize| if core <= 2 * h { 1 } else { core / (2 * h) };
    let mut sizes: Vec<(usize, [Vec<usize>; 2])> = Vec::new();
    // The largest regular sub-fabric.
    let mut h = hdrm::prev_power_of_two(fewest);
    while h >= 1 {
        let g = groups(h);
        if g > h {
            break;
        }
        let pick = |switches: &[usize]| -> Option<Vec<usize>> {
            let mut c: Vec<usize> = switches
                .iter()
                .copied()
                .filter(|&s| avail[s].len() >= g)
                .collect();
            if c.len() < h {
                return None;
            }
            c.sort_by_key(|&s| (dead[s], std::cmp::Reverse(avail[s].len()), s));
            c.truncate(h);
            c.sort_unstable();
            Some(c)
        };
        if let (Some(up), Some(lo)) = (pick(&parts[0]), pick(&parts[1])) {
            sizes.push((h, [up, lo]));
            break;
        }
        h /= 2;
    }
    // The stretched one.
    let h = most.next_power_of_two();
    if groups(h) <= h && sizes.first().is_none_or(|(fit, _)| *fit != h) {
        sizes.push((h, parts.clone()));
    }

    let mut out = Vec::new();
    for (h, chosen) in sizes {
        let g = groups(h);
        let Ok(mapping) = hdrm::algorithm1(2 * h, g, core) else {
            continue;
        };
        let rotations = if net.avoids_anything() {
            // Each rotation costs a full scoring; keep large fabrics to a
            // few.
            let work = core.saturating_mul(core.ilog2() as usize).max(1);
            h.min((1 << 22) / work).max(1)
        } else {
            1
        };
        for t in 0..rotations {
            let mut table = vec![usize::MAX; core];
            let mut used = vec![0usize; avail.len()];
            let mut overflow: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
            for (p, (vector, shift)) in [(&mapping.upper, 0), (&mapping.lower, t)]
                .into_iter()
                .enumerate()
            {
                for (k, here) in vector.iter().enumerate() {
                    let at = chosen[p].get((k + shift) % h).copied();
                    for (slot, &r) in here.iter().enumerate() {
                        match at {
                            Some(s) if slot < avail[s].len() => {
                                table[r] = avail[s][slot];
                                used[s] = used[s].max(slot + 1);
                            }
                            _ => overflow[p].push(r),
                        }
                    }
                }
            }
            let mut stuck = false;
            for (p, ranks) in overflow.iter().enumerate() {
                for &r in ranks {
                    let Some(&s) = parts[p]
                        .iter()
                        .filter(|&&s| used[s] < avail[s].len())
                        .max_by_key(|&&s| (avail[s].len() - used[s], std::cmp::Reverse(s)))
                    else {
                        stuck = true;
                        break;
                    };
                    table[r] = avail[s][used[s]];
                    used[s] += 1;
                }
            }
            if stuck || table.contains(&usize::MAX) {
                continue;
            }
            let moved = overflow[0].len() + overflow[1].len();
            let mut name = format!(
                "Algorithm 1 on {h} upper and {h} lower switches, {g} sub-node{} each",
                if g == 1 { "" } else { "s" }
            );
            if moved > 0 {
                let _ = write!(
                    name,
                    ", {moved} rank{} moved where switches or sub-nodes are missing",
                    if moved == 1 { "" } else { "s" }
                );
            }
            if t > 0 {
                let _ = write!(name, ", the lower part rotated by {t}");
            }
            out.push((name, table));
        }
    }
    out
}

/// Gives the extra ranks core..x of a fold a sub-node each: a free one on
/// the partner's switch, or else one on a switch with a usable direct link
/// to it that carries the fewest fold flows so far.
pub(super) fn place_extras(
    net: &Network<'_>,
    avail: &[Vec<usize>],
    table: &mut Vec<usize>,
    x: usize,
) {
    let core = table.len();
    if core >= x {
        return;
    }
    let switches = avail.len();
    let mut taken = vec![false; net.access_links().len() / 2];
    for &sn in table.iter() {
        taken[sn] = true;
    }
    // Free sub-nodes per switch, in port order.
    let mut free: Vec<Vec<usize>> = avail
        .iter()
        .map(|m| m.iter().rev().copied().filter(|&sn| !taken[sn]).collect())
        .collect();
    let mut room: Vec<usize> = (0..switches).filter(|&s| !free[s].is_empty()).collect();
    let mut used: rustc_hash::FxHashMap<(usize, usize), usize> = Default::default();
    for i in 0..x - core {
        let Some(home) = net.switch_of(table[i]) else {
            return;
        };
        let s = if !free[home].is_empty() {
            home
        } else {
            room.retain(|&b| !free[b].is_empty());
            let Some(&b) = room.iter().min_by_key(|&&b| {
                let direct = net.direct_links(b, home);
                let n = used.get(&(b, home)).copied().unwrap_or(0);
                (direct == 0, n >= direct.max(1), n, b)
            }) else {
                return;
            };
            *used.entry((b, home)).or_default() += 1;
            b
        };
        if let Some(sn) = free[s].pop() {
            table.push(sn);
        }
    }
}
