//! Where switches stand, and so which cables are DAC and which optical.
//!
//! The inventory may put a switch in a rack (`rack` on its `[[switch]]`
//! table). Where it does not, but gives its servers racks, the design
//! places the switch by one rule (docs/inventory.md, "Racks"):
//!
//! - a switch whose servers all stand in one rack stands in that rack (a
//!   top-of-rack leaf, a BiGraph switch beside its servers);
//! - any other switch (a spine, a rail switch or HPN ToR taking one NIC of
//!   every server of its group, a leaf whose servers fill several racks)
//!   stands in a network rack: `network-<row>` when the racks of its
//!   servers (of every server, for a switch without servers) share one
//!   `row`, else `network`. An inventory rack of that name is used as it
//!   is (so an operator chooses a network rack, and its `max_kw`, by
//!   declaring it); otherwise the design adds it to the plan's racks,
//!   marked as a network rack.
//!
//! A switch with a server whose rack is unknown is left unplaced. Then one
//! media rule holds for every cable ([`media`]): both ends in one rack (or
//! one physical switch) is a DAC, two racks are optical, and an end without
//! a rack takes the design's assumption.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::inventory::Inventory;
use crate::plan::{Cable, CableKind, Media, Name, PlanRack, PlanSwitch};

/// The media of a cable between ends in `a` and `b`: `None` when a rack
/// is unknown (the caller's assumption applies).
pub(crate) fn media(a: Option<&str>, b: Option<&str>) -> Option<Media> {
    match (a, b) {
        (Some(a), Some(b)) if a == b => Some(Media::Dac),
        (Some(_), Some(_)) => Some(Media::Optical),
        _ => None,
    }
}

/// What [`place`] did.
#[derive(Debug, Default)]
pub(crate) struct Placement {
    /// The plan's racks: the inventory's, racks servers or switches name
    /// without declaring them, then the network racks the design made.
    pub racks: Vec<PlanRack>,
    /// A note saying where the design put switches, when it put any.
    pub note: Option<String>,
    /// Some cable's media was assumed (an end without a rack).
    pub defaulted_media: bool,
}

/// Places the switches the inventory leaves unracked (module docs) and
/// sets every cable's media from the racks; `server_media` and optical
/// are the assumptions for sub-node and inter-switch cables with an end
/// of unknown rack.
pub(crate) fn place(
    inv: &Inventory,
    switches: &mut [PlanSwitch],
    cables: &mut [Cable],
    server_media: Media,
    u_height: &HashMap<String, u32>,
) -> Placement {
    let server_rack: HashMap<&str, Option<&str>> = inv
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.rack.as_deref()))
        .collect();
    let mut phys_rack: BTreeMap<String, Option<String>> = BTreeMap::new();
    for s in switches.iter() {
        let e = phys_rack.entry(s.physical.to_string()).or_default();
        if e.is_none() {
            *e = s.rack.as_deref().map(str::to_string);
        }
    }
    let declared: BTreeMap<&str, &crate::inventory::Rack> =
        inv.racks.iter().map(|r| (r.name.as_str(), r)).collect();
    let racked = !declared.is_empty() || server_rack.values().any(Option::is_some);
    let mut placement = Placement::default();
    let mut made: Vec<PlanRack> = Vec::new();
    if racked {
        // Each unracked physical switch's servers.
        let mut servers_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in cables.iter() {
            if c.kind == CableKind::SubNode {
                servers_of
                    .entry(c.a.as_str())
                    .or_default()
                    .push(c.b.as_str());
            }
        }
        let row_of = |rack: &str| declared.get(rack).and_then(|r| r.row.as_deref());
        let all_rows: BTreeSet<Option<&str>> =
            server_rack.values().flatten().map(|r| row_of(r)).collect();
        let taken: BTreeSet<&str> = (inv.servers.iter().map(|s| s.name.as_str()))
            .chain(inv.switches.iter().map(|s| s.name.as_str()))
            .chain(switches.iter().map(|s| s.name.as_str()))
            .collect();
        let (mut in_own, mut in_network) = (0usize, BTreeMap::<String, usize>::new());
        let mut made_used: HashMap<String, u32> = HashMap::new();
        let unracked: Vec<String> = (phys_rack.iter())
            .filter(|(_, r)| r.is_none())
            .map(|(p, _)| p.clone())
            .collect();
        for phys in unracked {
            let servers = servers_of.get(phys.as_str()).map_or(&[][..], Vec::as_slice);
            let racks: Option<BTreeSet<&str>> = servers
                .iter()
                .map(|s| server_rack.get(s).copied().flatten())
                .collect();
            let Some(racks) = racks else {
                continue; // a server of unknown rack: leave it unplaced
            };
            let rack = if racks.len() == 1 {
                in_own += 1;
                racks.first().unwrap().to_string()
            } else {
                let rows: BTreeSet<Option<&str>> = if racks.is_empty() {
                    all_rows.clone()
                } else {
                    racks.iter().map(|r| row_of(r)).collect()
                };
                let mut name = match rows.iter().next() {
                    Some(Some(row)) if rows.len() == 1 => format!("network-{row}"),
                    _ => "network".to_string(),
                };
                // Names are one name space: never take a server's or a
                // switch's name for a rack.
                while taken.contains(name.as_str()) {
                    name.push_str("-rack");
                }
                // A network rack the design makes holds 42 U of switches;
                // the next ones go to `<name>-2`, `<name>-3`, ...
                if !declared.contains_key(name.as_str()) {
                    let h = u_height.get(&phys).copied().unwrap_or(1);
                    let base = name.clone();
                    let mut k = 1;
                    loop {
                        let used = made_used.entry(name.clone()).or_insert(0);
                        if *used == 0 || *used + h <= crate::plan::DEFAULT_RACK_U {
                            *used += h;
                            break;
                        }
                        k += 1;
                        name = format!("{base}-{k}");
                        while taken.contains(name.as_str()) || declared.contains_key(name.as_str())
                        {
                            name.push_str("-rack");
                        }
                    }
                }
                if !declared.contains_key(name.as_str()) && !made.iter().any(|r| r.name == name) {
                    made.push(PlanRack {
                        name: name.clone(),
                        site: None,
                        row: match rows.iter().next() {
                            Some(Some(row)) if rows.len() == 1 => Some(row.to_string()),
                            _ => None,
                        },
                        max_kw: None,
                        u_height: None,
                        network: true,
                    });
                }
                *in_network.entry(name.clone()).or_default() += 1;
                name
            };
            phys_rack.insert(phys, Some(rack));
        }
        if in_own + in_network.values().sum::<usize>() > 0 {
            let mut parts = Vec::new();
            if in_own > 0 {
                parts.push(format!(
                    "{in_own} {} in {} servers' rack",
                    plural(in_own, "switch", "switches"),
                    if in_own == 1 { "its" } else { "their" }
                ));
            }
            for (rack, n) in &in_network {
                let made_here = made.iter().any(|r| &r.name == rack);
                parts.push(format!(
                    "{n} {} in {}network rack {rack}",
                    plural(*n, "switch", "switches"),
                    if made_here { "the design's " } else { "" }
                ));
            }
            placement.note = Some(format!(
                "switches without a rack in the inventory placed by the design's rule (docs/inventory.md, \"Racks\"): {}",
                parts.join(", ")
            ));
        }
        for s in switches.iter_mut() {
            if s.rack.is_none() {
                s.rack = phys_rack[s.physical.as_str()].as_deref().map(Name::from);
            }
        }
        // The plan's racks: declared, then named but undeclared, then made.
        placement.racks = inv
            .racks
            .iter()
            .map(|r| PlanRack {
                name: r.name.clone(),
                site: r.site.clone(),
                row: r.row.clone(),
                max_kw: r.max_kw,
                u_height: r.u_height,
                network: false,
            })
            .collect();
        let used = (inv.servers.iter().filter_map(|s| s.rack.as_deref()))
            .chain(phys_rack.values().flatten().map(String::as_str));
        let mut seen: BTreeSet<String> = placement.racks.iter().map(|r| r.name.clone()).collect();
        seen.extend(made.iter().map(|r| r.name.clone()));
        for name in used {
            if seen.insert(name.to_string()) {
                placement.racks.push(PlanRack {
                    name: name.to_string(),
                    site: None,
                    row: None,
                    max_kw: None,
                    u_height: None,
                    network: false,
                });
            }
        }
        placement.racks.extend(made);
    }
    for c in cables.iter_mut() {
        let a = phys_rack.get(c.a.as_str()).cloned().flatten();
        let (b, assumed) = match c.kind {
            CableKind::SubNode => (
                server_rack
                    .get(c.b.as_str())
                    .copied()
                    .flatten()
                    .map(str::to_string),
                server_media,
            ),
            CableKind::InterSwitch if c.a == c.b => {
                c.media = Media::Dac;
                continue;
            }
            CableKind::InterSwitch => (
                phys_rack.get(c.b.as_str()).cloned().flatten(),
                Media::Optical,
            ),
        };
        c.media = media(a.as_deref(), b.as_deref()).unwrap_or_else(|| {
            placement.defaulted_media = true;
            assumed
        });
    }
    placement
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// A device to stand in a rack: a server or a physical switch.
#[derive(Debug, Clone)]
pub(crate) struct Device {
    /// `server` or `switch`.
    pub kind: &'static str,
    pub name: String,
    pub rack: String,
    pub u_height: u32,
    /// The position the inventory gives it, if any.
    pub given: Option<u32>,
    /// The inventory line that places or describes it.
    pub line: Option<usize>,
}

/// Gives every racked device its lowest rack unit (docs/inventory.md,
/// "Rack positions"): positions the inventory gives first, then, rack by
/// rack, the other servers from U1 upwards in inventory order (each at the
/// lowest free units of its height), then the other switches from the top
/// of the rack downwards in plan order (the highest free units). A rack's
/// height is its `u_height`, else [`crate::plan::DEFAULT_RACK_U`]. Returns
/// the positions in `devices`' order, or a problem per device that
/// overlaps another or does not fit.
pub(crate) fn elevate(
    devices: &[Device],
    racks: &[PlanRack],
) -> std::result::Result<Vec<u32>, Vec<crate::Problem>> {
    let heights: HashMap<&str, u32> = racks
        .iter()
        .map(|r| (r.name.as_str(), r.height()))
        .collect();
    let mut by_rack: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, d) in devices.iter().enumerate() {
        by_rack.entry(d.rack.as_str()).or_default().push(i);
    }
    let mut at = vec![0u32; devices.len()];
    let mut problems = Vec::new();
    for (rack, members) in by_rack {
        let height = heights
            .get(rack)
            .copied()
            .unwrap_or(crate::plan::DEFAULT_RACK_U);
        // Which device holds each unit (index u - 1).
        let mut units: Vec<Option<usize>> = vec![None; height as usize];
        let full = |units: &[Option<usize>]| {
            let (mut servers, mut switches) = (BTreeSet::new(), BTreeSet::new());
            for &i in units.iter().flatten() {
                if devices[i].kind == "server" {
                    servers.insert(i);
                } else {
                    switches.insert(i);
                }
            }
            format!(
                "{} U taken by {} {} and {} {}",
                units.iter().filter(|u| u.is_some()).count(),
                servers.len(),
                plural(servers.len(), "server", "servers"),
                switches.len(),
                plural(switches.len(), "switch", "switches")
            )
        };
        for &i in members.iter().filter(|&&i| devices[i].given.is_some()) {
            let d = &devices[i];
            let pos = d.given.unwrap_or(1);
            let top = pos + d.u_height - 1;
            if top > height {
                problems.push(crate::Problem::at(
                    d.line,
                    format!("{} {}", d.kind, d.name),
                    format!(
                        "at U{pos} with {} U it reaches U{top}, above the top of rack {rack} ({height} U)",
                        d.u_height
                    ),
                    format!(
                        "give it a position of U{} or lower, or give rack {rack} a larger u_height",
                        (height + 1).saturating_sub(d.u_height).max(1)
                    ),
                ));
                continue;
            }
            let span = (pos - 1) as usize..top as usize;
            if let Some(&Some(j)) = units[span.clone()].iter().find(|u| u.is_some()) {
                let o = &devices[j];
                problems.push(crate::Problem::at(
                    d.line,
                    format!("{} {}", d.kind, d.name),
                    format!(
                        "at U{pos}-U{top} of rack {rack} it overlaps {} {} at U{}-U{}",
                        o.kind,
                        o.name,
                        at[j],
                        at[j] + o.u_height - 1
                    ),
                    "give one of them another position (positions stack by u_height: the template's first instance in a rack at `position`, the next ones above it)",
                ));
                continue;
            }
            units[span].iter_mut().for_each(|u| *u = Some(i));
            at[i] = pos;
        }
        let servers = members
            .iter()
            .filter(|&&i| devices[i].given.is_none() && devices[i].kind == "server");
        let switches = members
            .iter()
            .filter(|&&i| devices[i].given.is_none() && devices[i].kind != "server");
        for (&i, from_top) in servers
            .map(|i| (i, false))
            .chain(switches.map(|i| (i, true)))
        {
            let d = &devices[i];
            let h = d.u_height as usize;
            let fits = |lo: usize| units[lo..lo + h].iter().all(Option::is_none);
            let mut starts = 0..(units.len() + 1).saturating_sub(h);
            let free = if from_top {
                starts.rev().find(|&lo| fits(lo))
            } else {
                starts.find(|&lo| fits(lo))
            };
            match free {
                Some(lo) => {
                    units[lo..lo + h].iter_mut().for_each(|u| *u = Some(i));
                    at[i] = lo as u32 + 1;
                }
                None => problems.push(crate::Problem::at(
                    d.line,
                    format!("rack {rack}"),
                    format!(
                        "{} {} ({} U) does not fit: the rack is {height} U high, {}",
                        d.kind,
                        d.name,
                        d.u_height,
                        full(&units)
                    ),
                    format!(
                        "give rack {rack} a larger u_height, put fewer devices in it (the {}'s rack), or give the {} template its real u_height",
                        d.kind, d.kind
                    ),
                )),
            }
        }
    }
    if problems.is_empty() {
        Ok(at)
    } else {
        Err(problems)
    }
}
