//! Routing policies: how a flow is spread over the equal-cost next hops of the forwarding tables.
//!
//! The tables ([`super::tables`]) say which next hops a switch has towards
//! a destination; a policy says which of them a flow takes. All three walk
//! the same tables, so every hop of every policy is a next hop the rendered
//! routes allow.
//!
//! - `ecmp` (the default): at every switch with n next hops the flow takes
//!   number `h mod n`, h the ECMP hash of its RoCEv2 5-tuple and the
//!   switch ([`super::hash`]); the seed moves the UDP source port. This is
//!   what an Ethernet fabric with per-flow hashing does.
//! - `dmodk`: InfiniBand's D-mod-K, deterministic by destination. With d
//!   the destination sub-node's index in the plan (`plan.sub_node_list`,
//!   the order of the LIDs a subnet manager hands out) and the choices
//!   numbered in table order (a switch's uplinks in port order):
//!   - going up (leaf or edge to spine or aggregation, aggregation to core,
//!     and within a BiGraph part the hop to the other part), the l-th
//!     upward choice of the route takes number
//!     `floor(d / (n_1 × ... × n_(l-1))) mod n_l`, where `n_i` is the
//!     number of choices at the i-th upward hop: `d mod n_1` at the leaf,
//!     the next digit of d at the aggregation switch, as in Zahavi et al.,
//!     "Optimized InfiniBand fat-tree routing for shift all-to-all
//!     communication patterns" (2010), D-mod-K;
//!   - going down, where several links lead towards the destination
//!     (parallel cables from a spine to a leaf, or a BiGraph pair of
//!     switches with parallel cables), number `d mod n`, so that the
//!     destinations that shared an uplink's residue keep apart on the way
//!     down.
//!
//!   The seed plays no part. On a non-blocking leaf-spine, halving-doubling
//!   in plan order then loads no directed link twice: the m sources under
//!   a leaf send to m consecutive destinations, whose residues mod m are
//!   distinct (one uplink each), and the flows into a leaf have distinct
//!   residues too (one downlink each).
//! - `spray`: per-packet spraying as ideal balancing: a flow is split
//!   evenly over every route the tables allow between its two switches
//!   ([`Network::switch_paths`]), each carrying `1 / paths` of its bytes.
//!   This is the limit of HPN- or Ultra-Ethernet-style packet spraying with
//!   perfect reordering at the receiver; it ignores the reordering cost and
//!   the queue differences between paths.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use super::Route;
use super::links::Network;
use crate::error::{Error, Result};

/// How a flow picks among the equal-cost next hops (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// Per-flow hash of the 5-tuple (seeded).
    #[default]
    Ecmp,
    /// Deterministic by destination index, InfiniBand's D-mod-K.
    DModK,
    /// Per-packet spraying as ideal balancing over every equal-cost path.
    Spray,
}

impl Policy {
    /// Every policy, in the order the help lists them.
    pub const ALL: [Policy; 3] = [Policy::Ecmp, Policy::DModK, Policy::Spray];

    /// `ecmp`, `dmodk` or `spray`.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Ecmp => "ecmp",
            Policy::DModK => "dmodk",
            Policy::Spray => "spray",
        }
    }

    /// One line for people.
    pub fn describe(self) -> &'static str {
        match self {
            Policy::Ecmp => "per-flow ECMP hash of the RoCEv2 5-tuple (seeded)",
            Policy::DModK => "D-mod-K: up-port by destination index digit, deterministic",
            Policy::Spray => {
                "per-packet spraying, each flow split evenly over every equal-cost path"
            }
        }
    }

    /// True when the seed changes the routes.
    pub fn seeded(self) -> bool {
        self == Policy::Ecmp
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Policy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        Policy::ALL
            .into_iter()
            .find(|p| {
                p.as_str().eq_ignore_ascii_case(t)
                    || (t.eq_ignore_ascii_case("d-mod-k") && *p == Policy::DModK)
            })
            .ok_or_else(|| {
                Error::parameter(
                    "routing",
                    format!("`{s}` is not a routing policy; use ecmp, dmodk or spray"),
                )
            })
    }
}

impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A sprayed flow counted per link rather than per route
/// ([`Network::flow_spread`]): the numbers that counting the routes of
/// [`Network::flow_routes`] under [`Policy::Spray`] gives, without listing
/// the routes (up to 1,024 per flow on an 8,192-GPU HPN fabric).
#[derive(Debug, Default)]
pub struct Spread {
    /// Every link some route of the flow takes, with the number of routes
    /// that take it, access links included; no link twice.
    pub links: Vec<(usize, u64)>,
    /// The number of routes: each carries `1 / routes` of the flow.
    pub routes: u64,
    /// True when some route leaves the source's switch.
    pub crosses: bool,
    /// Per pair of switches the routes between them counted per link
    /// (`routes`, then a range of `counted`): a step's flows between two
    /// switches share them.
    pairs: HashMap<(usize, usize), (u64, usize, usize)>,
    counted: Vec<(usize, u64)>,
    legs: Vec<Leg>,
}

/// One plane of a sprayed flow ([`Network::spray_legs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// The source NIC's access link up in this plane.
    pub up: usize,
    /// The destination NIC's access link down in this plane.
    pub down: usize,
    /// The source's switch in this plane.
    pub from: usize,
    /// The destination's switch in this plane.
    pub to: usize,
}

/// Most counted links [`Spread`] keeps for later flows before it starts
/// again (16 MiB).
/// The tests keep few, so that they forget and count pairs again.
const SPREAD_KEPT: usize = if cfg!(test) { 64 } else { 1 << 20 };

impl Network<'_> {
    /// The routes of one flow from sub-node `src` to sub-node `dst` under
    /// `policy`, appended to `out`; each carries `1 / (routes appended)` of
    /// the flow. One route for `ecmp` and `dmodk`, every equal-cost route
    /// for `spray`. `flow` and `seed` feed the ECMP hash (see
    /// [`Network::route`]).
    pub fn flow_routes(
        &self,
        policy: Policy,
        src: usize,
        dst: usize,
        flow: u64,
        seed: u64,
        out: &mut Vec<Route>,
    ) -> Result<()> {
        match policy {
            Policy::Ecmp => out.push(self.route(src, dst, flow, seed)?),
            Policy::DModK => out.push(self.route_dmodk(src, dst)?),
            Policy::Spray => {
                let mut legs = Vec::new();
                let one = self.spray_legs(src, dst, flow, seed, &mut legs)?;
                let before = out.len();
                for leg in legs {
                    if leg.from == leg.to {
                        let mut r = Route::new();
                        r.push(leg.up);
                        r.push(leg.down);
                        out.push(r);
                        continue;
                    }
                    for path in self.switch_paths(leg.from, leg.to) {
                        let mut r = Route::new();
                        r.push(leg.up);
                        for l in path {
                            r.push(l);
                        }
                        r.push(leg.down);
                        out.push(r);
                    }
                }
                if out.len() == before {
                    out.push(one);
                }
            }
        }
        Ok(())
    }

    /// The routes of [`Network::flow_routes`] under [`Policy::Spray`],
    /// counted per link into `out` (see [`Spread`]): every link with the
    /// number of those routes that take it, and their number. The routes
    /// between two switches are counted once per pair of switches
    /// ([`Network::switch_path_counts`]) and kept in `out` for its later
    /// flows, so a flow costs the links of its routes, not its routes.
    pub fn flow_spread(
        &self,
        src: usize,
        dst: usize,
        flow: u64,
        seed: u64,
        out: &mut Spread,
    ) -> Result<()> {
        let mut legs = std::mem::take(&mut out.legs);
        legs.clear();
        let one = self.spray_legs(src, dst, flow, seed, &mut legs)?;
        out.links.clear();
        out.routes = 0;
        out.crosses = false;
        for leg in &legs {
            let (routes, from, to) = if leg.from == leg.to {
                (1, 0, 0)
            } else {
                self.pair_counts(leg.from, leg.to, out)
            };
            if routes == 0 {
                continue;
            }
            out.links.push((leg.up, routes));
            out.links.extend_from_slice(&out.counted[from..to]);
            out.links.push((leg.down, routes));
            out.routes += routes;
            out.crosses |= leg.from != leg.to;
        }
        out.legs = legs;
        if out.routes == 0 {
            out.links.extend(one.links().iter().map(|&l| (l, 1)));
            out.routes = 1;
            out.crosses = !one.inter_switch().is_empty();
        }
        Ok(())
    }

    /// The legs of a sprayed flow from sub-node `src` to sub-node `dst`,
    /// appended to `out`: one per plane that can carry it (HPN sprays over
    /// both; a plane with an avoided switch at either end is left out),
    /// with its access links there and its two switches. The flow's routes
    /// are, leg by leg, every route of [`Network::switch_paths`] between
    /// the two switches (the access links alone when they are one).
    /// Returns the flow's hashed route ([`Network::route`], which checks
    /// the ends and reports a missing route): the one route of a flow
    /// whose legs have none.
    pub fn spray_legs(
        &self,
        src: usize,
        dst: usize,
        flow: u64,
        seed: u64,
        out: &mut Vec<Leg>,
    ) -> Result<Route> {
        let one = self.route(src, dst, flow, seed)?;
        let planes = self.planes();
        for plane in 0..planes {
            if planes > 1 && !self.plane_usable(plane, src, dst) {
                continue;
            }
            out.push(Leg {
                up: self.up_link_in(plane, src),
                down: self.down_link_in(plane, dst),
                from: self.switch_at(plane, src),
                to: self.switch_at(plane, dst),
            });
        }
        Ok(one)
    }

    /// The routes from switch `a` to switch `b` counted per link, from
    /// `spread`'s pairs or counted now and kept there: their number and
    /// the range of `spread.counted` that holds the counts.
    fn pair_counts(&self, a: usize, b: usize, spread: &mut Spread) -> (u64, usize, usize) {
        if let Some(&kept) = spread.pairs.get(&(a, b)) {
            return kept;
        }
        if spread.counted.len() > SPREAD_KEPT {
            spread.pairs.clear();
            spread.counted.clear();
        }
        let from = spread.counted.len();
        let routes = self.switch_path_counts(a, b, &mut spread.counted);
        let kept = (routes, from, spread.counted.len());
        spread.pairs.insert((a, b), kept);
        kept
    }
}
