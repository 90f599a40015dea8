//! BiGraph design (EFLOPS IV-B): N switches in an upper and a lower part,
//! one link between every upper and every lower switch, M sub-nodes on each
//! switch, M <= N/2 and downlink bandwidth <= uplink bandwidth.

use super::{DesignOptions, Endpoint, FabricBuilder, PhysSwitch, Pool, even_split};
use crate::error::{Error, Result};
use crate::inventory::{Inventory, Part};
use crate::plan::{BiGraphParams, Plan, Tier, Topology};
use crate::text::gbps;

/// A physical switch, or one VLAN half of it, offered to the design.
struct Half {
    name: String,
    part: Option<Part>,
    vlan: Option<u16>,
    ports: Vec<u32>,
}

/// The shape of one (virtual) switch a template yields.
#[derive(Debug, Clone, Copy)]
struct Shape {
    part: Option<Part>,
    usable: usize,
    port_gbps: u32,
}

fn shapes(inv: &Inventory, t: usize) -> Vec<Shape> {
    let tpl = &inv.switch_templates[t];
    if tpl.is_split() {
        tpl.virtual_switches
            .iter()
            .map(|v| Shape {
                part: Some(v.part),
                usable: v.ports.len(),
                port_gbps: tpl.port_gbps,
            })
            .collect()
    } else {
        vec![Shape {
            part: None,
            usable: tpl.usable_ports().len(),
            port_gbps: tpl.port_gbps,
        }]
    }
}

/// Can a switch of this shape carry M sub-nodes of `nic` Gbps with N/2
/// links to the other part?
fn eligible(s: &Shape, half: usize, m: usize, nic: u32) -> bool {
    let link = nic.min(s.port_gbps) as u64;
    s.usable >= half + m && (m as u64) * link <= (half as u64) * u64::from(s.port_gbps)
}

/// Largest sub-node count of a BiGraph built from switches with `ports`
/// usable ports of `port_gbps`, sub-nodes at `nic` Gbps: `(P, M, N)`.
pub fn largest_bigraph(ports: usize, port_gbps: u32, nic: u32) -> (usize, usize, usize) {
    let mut best = (0, 0, 0);
    let shape = Shape {
        part: None,
        usable: ports,
        port_gbps,
    };
    let mut n = 2;
    while n / 2 < ports {
        let half = n / 2;
        let m = (half..=ports - half)
            .rev()
            .find(|&m| eligible(&shape, half, m, nic))
            .or_else(|| (1..half).rev().find(|&m| eligible(&shape, half, m, nic)))
            .unwrap_or(0);
        if m > 0 && m * n > best.0 {
            best = (m * n, m, n);
        }
        n += 2;
    }
    best
}

/// Sub-nodes a BiGraph of N switches with M per switch holds, and whether
/// it satisfies M <= N/2: a helper for reports and sweeps.
pub fn bigraph_capacity(m: usize, n: usize) -> (usize, bool) {
    (m * n, n.is_multiple_of(2) && m <= n / 2)
}

struct Supply<'a> {
    inv: &'a Inventory,
    grow: bool,
    nic: u32,
}

impl Supply<'_> {
    /// How many more virtual switches are needed for N/2 uppers and N/2
    /// lowers that can each carry M sub-nodes (0 when there are enough).
    fn missing(&self, half: usize, m: usize) -> usize {
        let (mut up, mut lo, mut free) = (0usize, 0usize, 0usize);
        for (t, tpl) in self.inv.switch_templates.iter().enumerate() {
            let count = tpl.instances.len();
            for s in shapes(self.inv, t) {
                if eligible(&s, half, m, self.nic) {
                    match s.part {
                        Some(Part::Upper) => up += count,
                        Some(Part::Lower) => lo += count,
                        None => free += count,
                    }
                }
            }
        }
        if self.grow {
            let last = self.inv.switch_templates.len() - 1;
            if shapes(self.inv, last)
                .iter()
                .any(|s| eligible(s, half, m, self.nic))
            {
                return 0;
            }
        }
        (half.saturating_sub(up) + half.saturating_sub(lo)).saturating_sub(free)
    }

    /// Virtual switches in the inventory.
    fn available(&self) -> usize {
        self.inv
            .switch_templates
            .iter()
            .enumerate()
            .map(|(t, tpl)| tpl.instances.len() * shapes(self.inv, t).len())
            .sum()
    }

    /// Largest usable port count of any virtual switch.
    fn max_ports(&self) -> usize {
        (0..self.inv.switch_templates.len())
            .flat_map(|t| shapes(self.inv, t))
            .map(|s| s.usable)
            .max()
            .unwrap_or(0)
    }

    fn describe_inventory(&self) -> String {
        let mut parts = Vec::new();
        for tpl in &self.inv.switch_templates {
            let n = tpl.instances.len();
            if tpl.is_split() {
                parts.push(format!(
                    "{n} {} split in two ({} virtual switches of {} ports)",
                    tpl.model,
                    2 * n,
                    tpl.virtual_switches[0].ports.len()
                ));
            } else {
                parts.push(format!(
                    "{n} {} ({} usable ports)",
                    tpl.model,
                    tpl.usable_ports().len()
                ));
            }
        }
        parts.join(", ")
    }
}

/// The preference among feasible (N, M): every switch carrying the same
/// number of sub-nodes, N and M powers of two (what HDRM needs), then the
/// fewest switches.
fn preference(p: usize, n: usize, m: usize) -> (bool, bool, bool, usize) {
    (
        !p.is_multiple_of(n),
        !n.is_power_of_two(),
        !m.is_power_of_two(),
        n,
    )
}

pub(super) fn design(
    inv: &Inventory,
    opts: &DesignOptions,
    endpoints: &[Endpoint],
) -> Result<Plan> {
    let p = endpoints.len();
    let nic = endpoints.iter().map(|e| e.gbps).max().unwrap_or(0);
    let supply = Supply {
        inv,
        grow: opts.grow_switch_pool,
        nic,
    };
    let infeasible = |reason: String, fix: String| Error::Infeasible {
        input: inv.source.clone(),
        topology: "BiGraph".to_string(),
        reason,
        fix,
    };

    let (n, m) = choose(p, opts, &supply).map_err(|(r, f)| infeasible(r, f))?;
    let half = n / 2;

    // Take switches in inventory order; VLAN halves keep their part, whole
    // switches go to the part with fewer switches so far.
    let all: Vec<usize> = (0..inv.switch_templates.len()).collect();
    let mut pool = Pool::new(inv, opts.grow_switch_pool);
    let mut fabric = FabricBuilder::new(inv);
    let mut chosen: Vec<(super::SwitchSlot, Part)> = Vec::new();
    let (mut ups, mut los) = (0usize, 0usize);
    let mut skipped: Vec<String> = Vec::new();
    let mut unused_halves: Vec<String> = Vec::new();
    while ups < half || los < half {
        let Some(phys) = pool.take(&all) else {
            break;
        };
        let tpl = &inv.switch_templates[phys.template];
        let taken_before = (ups, los);
        let halves: Vec<Half> = if tpl.is_split() {
            tpl.virtual_switches
                .iter()
                .map(|v| Half {
                    name: format!("{}-{}", phys.name, v.suffix),
                    part: Some(v.part),
                    vlan: Some(v.vlan),
                    ports: v.ports.clone(),
                })
                .collect()
        } else {
            vec![Half {
                name: phys.name.clone(),
                part: None,
                vlan: None,
                ports: (1..=tpl.ports).collect(),
            }]
        };
        for Half {
            name,
            part,
            vlan,
            ports,
        } in halves
        {
            let shape = Shape {
                part,
                usable: ports
                    .iter()
                    .filter(|p| tpl.reserved_ports.binary_search(p).is_err())
                    .count(),
                port_gbps: tpl.port_gbps,
            };
            if !eligible(&shape, half, m, nic) {
                skipped.push(name);
                continue;
            }
            let part = match part {
                Some(Part::Upper) if ups < half => Part::Upper,
                Some(Part::Lower) if los < half => Part::Lower,
                Some(_) => {
                    unused_halves.push(name);
                    continue;
                }
                None if ups <= los && ups < half => Part::Upper,
                None if los < half => Part::Lower,
                None if ups < half => Part::Upper,
                None => {
                    unused_halves.push(name);
                    continue;
                }
            };
            match part {
                Part::Upper => ups += 1,
                Part::Lower => los += 1,
            }
            let slot = add(&mut fabric, &phys, name, part, vlan, &ports);
            chosen.push((slot, part));
        }
        // A grown switch that gave neither part a switch will be followed
        // only by more of its kind: stop growing instead of looping.
        if phys.grown && (ups, los) == taken_before {
            break;
        }
    }
    if ups < half || los < half {
        return Err(infeasible(
            format!(
                "{half} upper and {half} lower switches are needed but only {ups} upper and {los} lower could be taken from {}",
                supply.describe_inventory()
            ),
            "add switches, or mark VLAN halves so that both parts get enough".to_string(),
        ));
    }

    // Complete bipartite links: the j-th fabric port of upper i goes to
    // lower j, whose i-th fabric port comes back.
    let uppers: Vec<&super::SwitchSlot> = chosen
        .iter()
        .filter(|(_, p)| *p == Part::Upper)
        .map(|(s, _)| s)
        .collect();
    let lowers: Vec<&super::SwitchSlot> = chosen
        .iter()
        .filter(|(_, p)| *p == Part::Lower)
        .map(|(s, _)| s)
        .collect();
    let mut links = Vec::with_capacity(half * half);
    for (i, u) in uppers.iter().enumerate() {
        for (j, l) in lowers.iter().enumerate() {
            links.push((u.index, u.usable[j], l.index, l.usable[i]));
        }
    }
    for (a, pa, b, pb) in links {
        fabric.link(a, pa, b, pb);
    }

    // Sub-nodes, spread evenly in switch order.
    let loads = even_split(p, n);
    let mut next = 0;
    for ((slot, _), &load) in chosen.iter().zip(&loads) {
        for k in 0..load {
            fabric.attach(slot.index, slot.usable[half + k], &endpoints[next]);
            next += 1;
        }
    }

    let max_load = loads.iter().copied().max().unwrap_or(0);
    let min_load = loads.iter().copied().min().unwrap_or(0);
    let regular = max_load == min_load;
    let port = chosen
        .first()
        .map_or(0, |(s, _)| fabric.switches[s.index].port_gbps);
    let mut notes = vec![format!(
        "BiGraph {max_load}x{n}: {half} upper and {half} lower switches, one link between every upper and every lower switch ({} links); M <= N/2 ({max_load} <= {half}); downlink {} Gbps <= uplink {} Gbps per switch",
        half * half,
        gbps((max_load as u64 * u64::from(nic.min(port))) as f64),
        gbps((half as u64 * u64::from(port)) as f64)
    )];
    notes.push(why(p, n, m, opts));
    let mut warnings = Vec::new();
    if !regular {
        warnings.push(format!(
            "irregular BiGraph: {} switches carry {max_load} sub-nodes and {} carry {min_load}; HDRM (Algorithm 1) needs the same M on every switch",
            loads.iter().filter(|&&l| l == max_load).count(),
            loads.iter().filter(|&&l| l == min_load).count()
        ));
    }
    if !p.is_power_of_two() {
        warnings.push(format!(
            "{p} sub-nodes is not a power of two: halving-doubling over all of them needs a fold step (Rabenseifner)"
        ));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "not used, too few ports for N/2 + M = {}: {}",
            half + m,
            list(&skipped)
        ));
    }
    let mut spare = unused_halves;
    if !opts.grow_switch_pool {
        while let Some(phys) = pool.take(&all) {
            spare.push(phys.name);
        }
    }
    if !spare.is_empty() {
        notes.push(format!("spare switches (not needed): {}", list(&spare)));
    }

    let mut plan = fabric.finish(Topology::BiGraph, notes, warnings);
    plan.bigraph = Some(BiGraphParams {
        m: max_load,
        n,
        regular,
    });
    Ok(plan)
}

fn add(
    fabric: &mut FabricBuilder<'_>,
    phys: &PhysSwitch,
    name: String,
    part: Part,
    vlan: Option<u16>,
    ports: &[u32],
) -> super::SwitchSlot {
    fabric.add_switch(phys, name, Tier::from(part), vlan, None, ports)
}

fn list(names: &[String]) -> String {
    if names.len() <= 6 {
        names.join(", ")
    } else {
        format!(
            "{}, ... {} ({} in all)",
            names[..3].join(", "),
            names[names.len() - 1],
            names.len()
        )
    }
}

fn why(p: usize, n: usize, m: usize, opts: &DesignOptions) -> String {
    match (opts.n, opts.m) {
        (Some(_), Some(_)) => format!("N={n}, M={m} as requested on the command line"),
        (Some(_), None) => format!("N={n} as requested on the command line; M={m} follows"),
        (None, Some(_)) => format!("M={m} as requested on the command line; N={n} follows"),
        _ => {
            let mut reasons = Vec::new();
            if p.is_multiple_of(n) {
                reasons.push("every switch carries the same number of sub-nodes");
            }
            if n.is_power_of_two() && m.is_power_of_two() {
                reasons.push("N and M are powers of two, as HDRM's rank mapping needs");
            }
            reasons.push("fewest switches among such designs");
            format!("N={n}, M={m} chosen: {}", reasons.join("; "))
        }
    }
}

type Why = (String, String);

/// Chooses (N, M) or explains why none works.
fn choose(
    p: usize,
    opts: &DesignOptions,
    s: &Supply<'_>,
) -> std::result::Result<(usize, usize), Why> {
    let nic = s.nic;
    let avail = s.available();
    let avail_text = if s.grow {
        "as many as needed".to_string()
    } else {
        format!("the inventory has {avail} ({})", s.describe_inventory())
    };
    let max_ports = s.max_ports();

    if let Some(n) = opts.n {
        if n < 2 || n % 2 != 0 {
            return Err((
                format!("N={n} switches cannot form two equal parts"),
                "choose an even N of 2 or more".to_string(),
            ));
        }
        let m = opts.m.unwrap_or_else(|| p.div_ceil(n));
        return check_nm(p, n, m, s).map(|()| (n, m));
    }

    if let Some(m) = opts.m {
        if m == 0 {
            return Err((
                "M=0 sub-nodes per switch".to_string(),
                "choose M of 1 or more".to_string(),
            ));
        }
        let mut n = p.div_ceil(m);
        if n % 2 == 1 {
            n += 1;
        }
        n = n.max(2);
        if m > n / 2 {
            let fit = (1..=m).rev().find(|&mm| {
                let nn = p.div_ceil(mm).next_multiple_of(2).max(2);
                mm <= nn / 2
            });
            return Err((
                format!(
                    "{m} sub-nodes per switch need at least {} switches (M <= N/2), but {p} sub-nodes at {m} per switch fill only {n}",
                    2 * m
                ),
                match fit {
                    Some(f) => format!(
                        "choose M <= {f} for {p} sub-nodes, or leave M out to let the planner choose"
                    ),
                    None => "leave M out to let the planner choose".to_string(),
                },
            ));
        }
        return check_nm(p, n, m, s).map(|()| (n, m));
    }

    // Automatic: every even N that fits, preferred as in `preference`.
    let upper = if s.grow { 2 * max_ports } else { avail };
    let upper = upper.min(p.max(2).next_multiple_of(2));
    let mut best: Option<(usize, usize)> = None;
    let mut n = 2;
    while n <= upper {
        let m = p.div_ceil(n);
        if m <= n / 2 && s.missing(n / 2, m) == 0 {
            let better = match best {
                None => true,
                Some((bn, bm)) => preference(p, n, m) < preference(p, bn, bm),
            };
            if better {
                best = Some((n, m));
            }
        }
        n += 2;
    }
    if let Some(b) = best {
        return Ok(b);
    }

    // Nothing fits: find the smallest design the switch model could make
    // with enough switches, and say what is missing.
    let mut n = 2;
    while n / 2 < max_ports.max(1) && n <= 2 * p.max(1) + 2 {
        let m = p.div_ceil(n);
        let any_shape = (0..s.inv.switch_templates.len())
            .flat_map(|t| shapes(s.inv, t))
            .any(|sh| eligible(&sh, n / 2, m, nic));
        if m <= n / 2 && any_shape {
            let missing = s.missing(n / 2, m);
            return Err((
                format!(
                    "{p} sub-nodes need at least N={n} BiGraph switches with M={m} sub-nodes each (M <= N/2, N/2 + M = {} ports per switch); {avail_text}",
                    n / 2 + m
                ),
                format!(
                    "add at least {missing} virtual switch{} with {} or more ports (a physical switch split in two gives two), or design a fat-tree",
                    if missing == 1 { "" } else { "es" },
                    n / 2 + m
                ),
            ));
        }
        n += 2;
    }
    let port_gbps = s
        .inv
        .switch_templates
        .iter()
        .map(|t| t.port_gbps)
        .max()
        .unwrap_or(0);
    let (pmax, mm, nn) = largest_bigraph(max_ports, port_gbps, nic);
    Err((
        format!(
            "switches with {max_ports} usable ports hold at most {pmax} sub-nodes in a BiGraph ({mm}x{nn}); the inventory has {p}"
        ),
        format!(
            "use switches with more ports (a BiGraph of {p} sub-nodes needs at least {} ports per switch){}, or design a fat-tree",
            min_ports_for(p),
            if s.inv.switch_templates.iter().any(|t| t.is_split()) {
                ", do not split them into VLAN halves"
            } else {
                ""
            }
        ),
    ))
}

/// Fewest ports per switch for a BiGraph of `p` sub-nodes (M = N/2, so
/// N/2 + M = N with N*N/2 >= p).
fn min_ports_for(p: usize) -> usize {
    let mut n = 2;
    while n * n / 2 < p {
        n += 2;
    }
    n
}

fn check_nm(p: usize, n: usize, m: usize, s: &Supply<'_>) -> std::result::Result<(), Why> {
    let half = n / 2;
    if m > half {
        return Err((
            format!(
                "{m} sub-nodes per switch need at least {} switches (M <= N/2); N={n} requested",
                2 * m
            ),
            format!("choose N >= {} or M <= {half}", 2 * m),
        ));
    }
    if m * n < p {
        return Err((
            format!(
                "{m}x{n} holds {} sub-nodes but the inventory has {p}",
                m * n
            ),
            format!("raise N or M so that M x N >= {p}"),
        ));
    }
    let missing = s.missing(half, m);
    if missing > 0 {
        let avail = s.available();
        let eligible_ports = half + m;
        return Err((
            format!(
                "{p} sub-nodes at M={m} per switch need N={n} switches with at least {eligible_ports} usable ports and {}; the inventory has {avail} ({})",
                if m > 0 {
                    "downlink <= uplink bandwidth"
                } else {
                    ""
                },
                s.describe_inventory()
            ),
            format!(
                "add {missing} more virtual switch{} (split physical switches give two each) or lower N",
                if missing == 1 { "" } else { "es" }
            ),
        ));
    }
    Ok(())
}
