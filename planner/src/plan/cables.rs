//! The plan's cable list: labels, the rows `planner cables` prints, the
//! physical cables (a breakout cable once, with a leg per lane) and where
//! each runs between racks.

use std::collections::HashMap;

use serde::Serialize;

use super::{Breakout, Cable, CableKind, Media, Plan, PlanSwitch};

/// The label of the `i`-th cable (from 0) of a plan: `C0001`, the number
/// `planner cables` shows, printed on both ends.
pub fn cable_label(i: usize) -> String {
    format!("C{:04}", i + 1)
}

/// A cable as `planner cables --format json` lists it: the plan's cable
/// with its label, its ends' racks and the run between them; a breakout
/// cable once, with its cage end and a leg per lane
/// ([`Plan::physical_cables`]).
#[derive(Debug, Clone, Serialize)]
pub struct CableRow<'a> {
    /// The plan's cable (absent for a breakout cable, whose legs are).
    #[serde(flatten)]
    pub cable: Option<&'a Cable>,
    /// [`cable_label`] of the physical cable.
    pub label: String,
    /// Rack of the switch end (the cage end of a breakout cable), when known.
    pub rack: Option<&'a str>,
    /// Rack of the peer end (every leg's, when they share one), when known.
    pub peer_rack: Option<&'a str>,
    /// Lowest rack unit of the switch end, in plans with rack positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Lowest rack unit of the peer end (a breakout cable's legs carry
    /// their own), in plans with rack positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_position: Option<u32>,
    /// [`CableRuns::of`] (the longest of a breakout cable's legs); `""`
    /// when a rack is unknown.
    pub run: Run,
    /// The cage end and legs of a breakout cable.
    #[serde(flatten)]
    pub breakout: Option<BreakoutRow<'a>>,
}

/// The cage end and legs of a breakout cable in `cables --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct BreakoutRow<'a> {
    /// The broken-out physical switch.
    pub switch: &'a str,
    /// The cage (1-based).
    pub cage: u32,
    /// The cage's interface name ([`PlanSwitch::port_name`]'s rule).
    pub cage_name: String,
    /// `2x200G`.
    pub breakout: String,
    /// Speed of the cage end in Gbps.
    pub gbps: u32,
    /// Media: optical when any leg is.
    pub media: Media,
    /// A straight cable between two broken-out cages (every leg a lane to
    /// the same lane of one peer cage), not a breakout cable.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub straight: bool,
    /// A leg per lane, in lane order.
    pub legs: Vec<LegRow<'a>>,
}

/// A leg of a breakout cable: one lane and where it goes.
#[derive(Debug, Clone, Serialize)]
pub struct LegRow<'a> {
    /// The lane's logical port on the broken-out switch.
    pub port: u32,
    /// The lane (0-based).
    pub lane: u32,
    /// The lane's interface name (`swp1s0`).
    pub port_name: String,
    /// The switch or server at the leg's end.
    pub peer: &'a str,
    /// Its port: a switch port's name, or the NIC.
    pub peer_port: String,
    /// Rack of the peer, when known.
    pub peer_rack: Option<&'a str>,
    /// Lowest rack unit of the peer, in plans with rack positions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_position: Option<u32>,
    /// Line rate in Gbps.
    pub gbps: u32,
    /// What it connects.
    pub kind: CableKind,
}

/// The name of a peer's port: a switch's port name from its number (as
/// text), else the text (a NIC).
pub fn peer_port_name(switches: &HashMap<&str, &PlanSwitch>, peer: &str, port: &str) -> String {
    match (switches.get(peer), port.parse::<u32>()) {
        (Some(s), Ok(p)) => s.port_name(p),
        _ => port.to_string(),
    }
}

/// A leg of a breakout cable seen from its cage: (the lane's logical
/// port, the peer, the peer's port number or NIC, the plan cable).
#[derive(Debug, Clone, Copy)]
pub struct Leg<'a> {
    /// The lane's logical port on the broken-out switch.
    pub port: u32,
    /// The switch or server at the other end.
    pub peer: &'a str,
    /// The peer's port: its number as text (a switch) or the NIC.
    pub peer_port: &'a str,
    /// The plan cable.
    pub cable: &'a Cable,
}

impl Plan {
    /// The legs of a breakout cable seen from its cage, in lane order.
    pub fn legs<'a>(&'a self, pc: &PhysicalCable, e: &BreakoutEnd) -> Vec<Leg<'a>> {
        (pc.legs.iter())
            .map(|&k| {
                let c = &self.cables[k];
                let (port, at_b) = self.leg_lane(e, k);
                let (peer, peer_port) = if at_b {
                    (c.a.as_str(), None)
                } else {
                    (c.b.as_str(), Some(c.b_port.as_str()))
                };
                Leg {
                    port,
                    peer,
                    peer_port: peer_port.unwrap_or(""),
                    cable: c,
                }
            })
            .collect()
    }

    /// Each physical switch by name: its first plan switch.
    pub fn physical_switches(&self) -> HashMap<&str, &PlanSwitch> {
        (self.switch_list.iter().rev())
            .map(|s| (s.physical.as_str(), s))
            .collect()
    }

    /// Every physical cable with its label, racks and run, in plan order
    /// ([`Plan::physical_cables`]).
    pub fn cable_rows(&self) -> Vec<CableRow<'_>> {
        let runs = self.cable_runs();
        let switches = self.physical_switches();
        let positions = self.positions();
        (self.physical_cables().iter().enumerate())
            .map(|(i, pc)| {
                let Some(e) = pc.breakout else {
                    let c = &self.cables[pc.legs[0]];
                    let (rack, peer_rack, run) = runs.of(c);
                    return CableRow {
                        cable: Some(c),
                        label: cable_label(i),
                        rack,
                        peer_rack,
                        position: positions.get(c.a.as_str()).copied(),
                        peer_position: positions.get(c.b.as_str()).copied(),
                        run,
                        breakout: None,
                    };
                };
                let s = &self.switch_list[e.switch];
                let legs = self.legs(pc, &e);
                let mut rack = None;
                let mut peer_racks = Vec::new();
                let mut run = Run::InRack;
                let mut media = Media::Dac;
                let rows = (legs.iter())
                    .map(|l| {
                        let (a_rack, b_rack, r) = runs.of(l.cable);
                        let (own, peer_rack) =
                            if l.cable.a == s.physical && l.port == l.cable.a_port {
                                (a_rack, b_rack)
                            } else {
                                (b_rack, a_rack)
                            };
                        rack = rack.or(own);
                        peer_racks.push(peer_rack);
                        run = run.max(r);
                        if l.cable.media == Media::Optical {
                            media = Media::Optical;
                        }
                        let peer_port = if l.peer_port.is_empty() {
                            peer_port_name(&switches, l.peer, &l.cable.a_port.to_string())
                        } else {
                            peer_port_name(&switches, l.peer, l.peer_port)
                        };
                        LegRow {
                            port: l.port,
                            lane: e.breakout.cage_lane(l.port).1,
                            port_name: s.port_name(l.port),
                            peer: l.peer,
                            peer_port,
                            peer_rack,
                            peer_position: positions.get(l.peer).copied(),
                            gbps: l.cable.gbps,
                            kind: l.cable.kind,
                        }
                    })
                    .collect();
                peer_racks.dedup();
                CableRow {
                    cable: None,
                    label: cable_label(i),
                    rack,
                    peer_rack: if peer_racks.len() == 1 {
                        peer_racks[0]
                    } else {
                        None
                    },
                    position: positions.get(s.physical.as_str()).copied(),
                    peer_position: None,
                    run,
                    breakout: Some(BreakoutRow {
                        switch: &s.physical,
                        cage: e.cage,
                        cage_name: Breakout::generic_name(s.port_name.as_deref(), None, e.cage),
                        breakout: e.breakout.describe(),
                        gbps: e.breakout.cage_gbps,
                        media,
                        straight: pc.straight,
                        legs: rows,
                    }),
                }
            })
            .collect()
    }
}

/// Where a cable runs, from its ends' racks ([`CableRuns::of`]): what
/// decides its media and the length `planner cost` prices (the catalog's
/// `in_rack_m`, `same_row_m`, `between_rows_m`, `between_racks_m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Run {
    /// Both ends in one rack.
    InRack,
    /// Two racks of one row.
    SameRow,
    /// Two racks of different rows.
    BetweenRows,
    /// Two racks whose rows are not both known.
    BetweenRacks,
    /// An end's rack is not known.
    Unknown,
}

impl Run {
    /// The name `planner cables` prints (`in_rack`, `same_row`,
    /// `between_rows`, `between_racks`; empty when unknown).
    pub fn as_str(self) -> &'static str {
        match self {
            Run::InRack => "in_rack",
            Run::SameRow => "same_row",
            Run::BetweenRows => "between_rows",
            Run::BetweenRacks => "between_racks",
            Run::Unknown => "",
        }
    }
}

impl Serialize for Run {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The racks of a plan's cable ends ([`Plan::cable_runs`]).
#[derive(Debug)]
pub struct CableRuns<'a> {
    rack_of: HashMap<&'a str, &'a str>,
    row_of: HashMap<&'a str, Option<&'a str>>,
}

impl<'a> CableRuns<'a> {
    /// The racks of a cable's ends and the run between them: `in_rack`
    /// (a DAC's reach), `same_row` or `between_rows` when the racks' rows
    /// are known, `between_racks` when they are not, and empty when an
    /// end's rack is unknown.
    pub fn of(&self, c: &Cable) -> (Option<&'a str>, Option<&'a str>, Run) {
        let a = self.rack_of.get(c.a.as_str()).copied();
        let b = self.rack_of.get(c.b.as_str()).copied();
        let run = match (a, b) {
            (Some(a), Some(b)) if a == b => Run::InRack,
            (Some(a), Some(b)) => match (
                self.row_of.get(a).copied().flatten(),
                self.row_of.get(b).copied().flatten(),
            ) {
                (Some(ra), Some(rb)) if ra == rb => Run::SameRow,
                (Some(_), Some(_)) => Run::BetweenRows,
                _ => Run::BetweenRacks,
            },
            _ => Run::Unknown,
        };
        (a, b, run)
    }
}

/// A physical cable: one plan cable (a link), or a breakout cable whose
/// legs are the links of one broken-out cage ([`Plan::physical_cables`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicalCable {
    /// Its links, positions in [`Plan::cables`], in lane order.
    pub legs: Vec<usize>,
    /// The broken-out end of a breakout cable; `None` for a whole cable.
    pub breakout: Option<BreakoutEnd>,
    /// True when every leg ends on a lane of another broken-out switch: a
    /// straight cable between two broken-out cages, lane i to lane i
    /// (validation refuses any other lane-to-lane link), bought as a
    /// whole cable of the cage's speed.
    pub straight: bool,
}

impl PhysicalCable {
    /// A DAC when every leg is one (all in one rack); else optical.
    pub fn is_dac(&self, plan: &Plan) -> bool {
        (self.legs.iter()).all(|&k| plan.cables[k].media == Media::Dac)
    }

    /// True for a cable to sub-nodes (NIC ports), false between switches.
    pub fn to_sub_nodes(&self, plan: &Plan) -> bool {
        (self.legs.first()).is_some_and(|&k| plan.cables[k].kind == CableKind::SubNode)
    }

    /// The transceivers an optical cable takes, as `cost` buys them with
    /// a fibre: one at each end of a whole or straight cable; one of the
    /// cage's speed and one per lane of a breakout cable (every leg is
    /// made, used or not). None for a DAC.
    pub fn transceivers(&self, plan: &Plan) -> usize {
        match self.breakout {
            _ if self.is_dac(plan) => 0,
            Some(e) if !self.straight => 1 + e.breakout.lanes as usize,
            _ => 2,
        }
    }
}

/// The cage end of a breakout cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakoutEnd {
    /// Position of the broken-out switch (its first plan switch) in
    /// [`Plan::switch_list`].
    pub switch: usize,
    /// The cage (1-based).
    pub cage: u32,
    /// How the cage breaks out.
    pub breakout: Breakout,
}

impl Plan {
    /// The physical cables in the order of their first link: a link with
    /// no lane end is a cable of its own; the links of one broken-out cage
    /// are one breakout cable (one cage end, a leg per lane). A link
    /// between lanes of two broken-out switches (which validation only
    /// lets through when straight: lane i to lane i of one cage) is one
    /// cable per cage pair, counted from its `a` end. For a plan without
    /// breakouts this is one cable per link, in plan order.
    pub fn physical_cables(&self) -> Vec<PhysicalCable> {
        // No broken-out switch: one cable per link, without the lookups
        // (design's summary counts these on every plan, 131,072-sub-node
        // ones too).
        if self.switch_list.iter().all(|s| s.breakout.is_none()) {
            return (0..self.cables.len())
                .map(|k| PhysicalCable {
                    legs: vec![k],
                    breakout: None,
                    straight: false,
                })
                .collect();
        }
        let of: HashMap<&str, usize> = (self.switch_list.iter().enumerate())
            .rev()
            .map(|(i, s)| (s.physical.as_str(), i))
            .collect();
        let lane_end = |name: &str, port: u32| {
            let &i = of.get(name)?;
            let b = self.switch_list[i].breakout?;
            Some((i, b.cage_lane(port).0, b))
        };
        let mut out: Vec<PhysicalCable> = Vec::with_capacity(self.cables.len());
        let mut cage_cable: HashMap<(usize, u32), usize> = HashMap::new();
        for (k, c) in self.cables.iter().enumerate() {
            let b_end = match c.kind {
                CableKind::InterSwitch => {
                    c.b_port.parse::<u32>().ok().and_then(|p| lane_end(&c.b, p))
                }
                CableKind::SubNode => None,
            };
            let end = match (lane_end(&c.a, c.a_port), b_end) {
                (Some((sw, cage, b)), _) => Some((sw, cage, b)),
                (None, Some((sw, cage, b))) => Some((sw, cage, b)),
                (None, None) => None,
            };
            match end {
                None => out.push(PhysicalCable {
                    legs: vec![k],
                    breakout: None,
                    straight: false,
                }),
                Some((switch, cage, breakout)) => {
                    let at = *cage_cable.entry((switch, cage)).or_insert_with(|| {
                        out.push(PhysicalCable {
                            legs: Vec::new(),
                            breakout: Some(BreakoutEnd {
                                switch,
                                cage,
                                breakout,
                            }),
                            straight: false,
                        });
                        out.len() - 1
                    });
                    out[at].legs.push(k);
                }
            }
        }
        // Legs in lane order; straight when every leg meets a lane.
        for pc in &mut out {
            if let Some(e) = pc.breakout {
                pc.legs.sort_by_key(|&k| self.leg_lane(&e, k).0);
                pc.straight = self.legs(pc, &e).iter().all(|l| {
                    l.cable.kind == CableKind::InterSwitch
                        && of
                            .get(l.peer)
                            .is_some_and(|&i| self.switch_list[i].breakout.is_some())
                });
            }
        }
        out
    }

    /// The lane end of leg `k` (a position in [`Plan::cables`]) of the
    /// breakout cable at `e`: its logical port on the broken-out switch,
    /// and whether that is the cable's `b` end (the link was made from the
    /// other side).
    pub fn leg_lane(&self, e: &BreakoutEnd, k: usize) -> (u32, bool) {
        let c = &self.cables[k];
        let s = &self.switch_list[e.switch];
        let on_cage = |port: u32| e.breakout.cage_lane(port).0 == e.cage;
        if c.a == s.physical && on_cage(c.a_port) {
            return (c.a_port, false);
        }
        match c.b_port.parse::<u32>() {
            Ok(p) if c.kind == CableKind::InterSwitch && c.b == s.physical && on_cage(p) => {
                (p, true)
            }
            _ => (c.a_port, false),
        }
    }
}

impl Plan {
    /// Where the cables run: each end's rack and the run between them
    /// ([`CableRuns::of`]).
    pub fn cable_runs(&self) -> CableRuns<'_> {
        let mut rack_of: HashMap<&str, &str> = HashMap::new();
        for s in &self.servers {
            if let Some(r) = &s.rack {
                rack_of.insert(&s.name, r);
            }
        }
        for s in &self.switch_list {
            if let Some(r) = &s.rack {
                rack_of.entry(&s.physical).or_insert(r);
            }
        }
        CableRuns {
            rack_of,
            row_of: (self.racks.iter())
                .map(|r| (r.name.as_str(), r.row.as_deref()))
                .collect(),
        }
    }
}
