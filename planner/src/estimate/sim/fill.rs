//! Max-min fair rates by water-filling: the [`Filler`] the event loop runs
//! on each component, and [`max_min_rates`] for callers that want rates
//! alone.

use crate::error::{Error, Result};

/// Max-min fair rates by water-filling over a set of links and the flows
/// on them. Scratch arrays are indexed by link id and slot and are reused
/// from one call to the next.
#[derive(Debug, Default)]
pub(super) struct Filler {
    room: Vec<f64>,
    count: Vec<u32>,
    frozen: Vec<u32>,
    stamp: u32,
    active: Vec<u32>,
    /// The links the last [`Filler::fill`] saturated, each with the level
    /// at which it froze its members.
    pub(super) saturated: Vec<(u32, f64)>,
}

impl Filler {
    pub(super) fn new(links: usize) -> Self {
        Self {
            room: vec![0.0; links],
            count: vec![0; links],
            ..Self::default()
        }
    }

    /// Sets `rate_out[f]` for every member flow `f` on `links`, where
    /// `on[l]` lists the flows on link l, `member(f)` says whether flow f
    /// is to be filled, `route(f)` gives its links (all of them in
    /// `links`), and `init(l)` gives the room link l has for the members
    /// and how many members are on it. A whole component is every flow on
    /// its links with the links' capacities; a part of one
    /// ([`super::event_loop`]) has the room its other flows leave.
    ///
    /// Each round finds the lowest share `room / flows` over the links
    /// that still have unfrozen members, and freezes every member on every
    /// link at that level (within a relative 1e-12, for rounding). Links
    /// above the level stay above it when flows leave them, so one pass
    /// per level suffices; the rounds are the distinct bottleneck levels,
    /// a handful on fabrics whose links have one or two speeds. The links
    /// that froze members, with their level, are left in
    /// [`Filler::saturated`].
    pub(super) fn fill<'a>(
        &mut self,
        init: impl Fn(u32) -> (f64, u32),
        links: &[u32],
        on: &[Vec<u32>],
        member: impl Fn(u32) -> bool,
        route: impl Fn(u32) -> &'a [u32],
        rate_out: &mut impl FnMut(u32, f64),
    ) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.frozen.fill(0);
            self.stamp = 1;
        }
        self.active.clear();
        self.saturated.clear();
        for &l in links {
            let li = l as usize;
            (self.room[li], self.count[li]) = init(l);
            if self.count[li] > 0 {
                self.active.push(l);
            }
        }
        while !self.active.is_empty() {
            let level = self
                .active
                .iter()
                .map(|&l| self.room[l as usize] / f64::from(self.count[l as usize]))
                .fold(f64::INFINITY, f64::min)
                .max(0.0);
            let limit = level + level * 1e-12;
            for k in 0..self.active.len() {
                let li = self.active[k] as usize;
                let count = self.count[li];
                if count == 0 || self.room[li] / f64::from(count) > limit {
                    continue;
                }
                self.saturated.push((li as u32, level));
                for &f in &on[li] {
                    let fi = f as usize;
                    if self.frozen.len() <= fi {
                        self.frozen.resize(fi + 1, 0);
                    }
                    if self.frozen[fi] == self.stamp || !member(f) {
                        continue;
                    }
                    self.frozen[fi] = self.stamp;
                    rate_out(f, level);
                    for &l2 in route(f) {
                        let l2 = l2 as usize;
                        self.room[l2] = (self.room[l2] - level).max(0.0);
                        self.count[l2] -= 1;
                    }
                }
            }
            let count = &self.count;
            self.active.retain(|&l| count[l as usize] > 0);
        }
    }
}

/// Max-min fair rates of `flows` (each a list of link ids) over links of
/// capacity `caps`: the water-filling the simulator runs on each
/// component. Exposed for tests and for callers that want rates alone.
pub fn max_min_rates(caps: &[f64], flows: &[Vec<usize>]) -> Result<Vec<f64>> {
    let mut on: Vec<Vec<u32>> = vec![Vec::new(); caps.len()];
    let mut routes: Vec<Vec<u32>> = Vec::with_capacity(flows.len());
    for (f, links) in flows.iter().enumerate() {
        let mut r = Vec::with_capacity(links.len());
        for &l in links {
            if l >= caps.len() {
                return Err(Error::parameter(
                    "flows",
                    format!(
                        "flow {f} uses link {l}, but there are only {} links",
                        caps.len()
                    ),
                ));
            }
            on[l].push(f as u32);
            r.push(l as u32);
        }
        routes.push(r);
    }
    let used: Vec<u32> = (0..caps.len() as u32)
        .filter(|&l| !on[l as usize].is_empty())
        .collect();
    let mut rates = vec![f64::INFINITY; flows.len()];
    let mut filler = Filler::new(caps.len());
    filler.fill(
        |l| (caps[l as usize], on[l as usize].len() as u32),
        &used,
        &on,
        |_| true,
        |f| &routes[f as usize],
        &mut |f, r| rates[f as usize] = r,
    );
    Ok(rates)
}

/// True when a link carrying `load` of its `cap` has no room left (within
/// rounding).
pub(super) fn is_full(load: f64, cap: f64) -> bool {
    load >= cap * (1.0 - 1e-9)
}
