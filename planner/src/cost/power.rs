//! Power per rack: where the watts of a plan's priced parts are drawn,
//! and the racks that draw more than their limit.
//!
//! A server draws its chassis, GPUs and NIC ports; a switch its own
//! watts; a cable half its watts at each end, and a fibre's two optics
//! one at each end. Each is drawn in the rack of its server or switch
//! (the plan's racks, docs/inventory.md "Racks"); what has no rack is
//! counted apart. A rack's limit is its inventory `max_kw`, else the
//! limit `planner cost --max-rack-kw` gives every rack.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::inventory::Inventory;
use crate::plan::Plan;
use crate::text::Table;

use super::catalog::Catalog;

/// The power a plan draws, in total and per rack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Power {
    /// Every priced part's watts.
    pub total_watts: f64,
    /// The racks, in the plan's order; empty when the plan has none.
    pub racks: Vec<RackPower>,
    /// Watts of servers and switches without a rack.
    pub unracked_watts: f64,
    /// Racks over their limit, by name.
    pub over: Vec<String>,
}

/// What draws a rack's power, in watts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Draws {
    /// Servers: chassis, GPUs and NICs.
    pub servers: f64,
    /// Switches.
    pub switches: f64,
    /// Cable ends and optics (an AOC's or DAC's half, a fibre's optic).
    pub cables: f64,
}

/// What a load is drawn by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Draw {
    /// A server's chassis, GPUs or NICs.
    Server,
    /// A switch.
    Switch,
    /// A cable end or optic.
    Cable,
}

/// One rack's draw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RackPower {
    /// Rack name.
    pub rack: String,
    /// A network rack the design made (docs/inventory.md, "Racks").
    pub network: bool,
    /// Servers in it.
    pub servers: usize,
    /// Physical switches in it.
    pub switches: usize,
    /// What it draws, in watts.
    pub watts: f64,
    /// Its watts by what draws them.
    pub draws: Draws,
    /// Its limit in kW, when known.
    pub max_kw: Option<f64>,
}

impl RackPower {
    /// By how many kW it exceeds its limit, if it does.
    pub fn over_kw(&self) -> Option<f64> {
        let max = self.max_kw?;
        let kw = self.watts / 1000.0;
        (kw > max).then_some(kw - max)
    }

    /// What draws it, for messages: `4 servers 36.0 kW, 1 switch 1.2 kW,
    /// cable ends and optics 0.9 kW`.
    pub fn what_draws(&self) -> String {
        let mut parts = Vec::new();
        if self.servers > 0 || self.draws.servers > 0.0 {
            parts.push(format!(
                "{} {} {}",
                self.servers,
                if self.servers == 1 {
                    "server"
                } else {
                    "servers"
                },
                kw(self.draws.servers)
            ));
        }
        if self.switches > 0 || self.draws.switches > 0.0 {
            parts.push(format!(
                "{} {} {}",
                self.switches,
                if self.switches == 1 {
                    "switch"
                } else {
                    "switches"
                },
                kw(self.draws.switches)
            ));
        }
        if self.draws.cables > 0.0 {
            parts.push(format!("cable ends and optics {}", kw(self.draws.cables)));
        }
        parts.join(", ")
    }

    /// `r01 draws 41.2 kW, over its 40.0 kW limit by 1.2 kW (4 servers
    /// 36.0 kW, ...)`, for a rack over its limit.
    pub fn over_words(&self) -> Option<String> {
        let over = self.over_kw()?;
        Some(format!(
            "rack {} draws {}, over its {:.1} kW limit by {over:.1} kW ({})",
            self.rack,
            kw(self.watts),
            self.max_kw.unwrap_or_default(),
            self.what_draws()
        ))
    }
}

impl Power {
    /// The rack that draws most against its limit: the highest share of
    /// its limit among racks with one, else the highest draw.
    pub fn worst_rack(&self) -> Option<&RackPower> {
        let share = |r: &RackPower| r.max_kw.map(|m| r.watts / 1000.0 / m);
        let limited = (self.racks.iter())
            .filter(|r| r.max_kw.is_some())
            .reduce(|a, b| if share(b) > share(a) { b } else { a });
        limited.or_else(|| (self.racks.iter()).reduce(|a, b| if b.watts > a.watts { b } else { a }))
    }

    /// The racks over their limits, racks that draw alike grouped: each
    /// group's racks (`rack r01`, or `32 racks: r01, r02, r03, r04 and 28
    /// more`) and what each draws (`draws 32.6 kW, over its 30.0 kW limit
    /// by 2.6 kW (4 servers 31.2 kW, ...)`).
    pub fn over_groups(&self) -> Vec<(Vec<&str>, String)> {
        let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
        for r in &self.racks {
            let Some(words) = r.over_words() else {
                continue;
            };
            let words = words
                .trim_start_matches(&format!("rack {} ", r.rack))
                .to_string();
            match groups.iter_mut().find(|(_, w)| *w == words) {
                Some((racks, _)) => racks.push(&r.rack),
                None => groups.push((vec![&r.rack], words)),
            }
        }
        groups
    }

    /// The racks over their limits as inventory problems ([`Power::over_groups`]):
    /// what `design --catalog` refuses. `lines` gives a rack's inventory line.
    pub fn over_problems(&self, lines: &dyn Fn(&str) -> Option<usize>) -> Vec<crate::Problem> {
        (self.over_groups().into_iter())
            .map(|(racks, words)| {
                crate::Problem::at(
                    lines(racks[0]),
                    name_racks(&racks),
                    if racks.len() == 1 { words } else { format!("each {words}") },
                    "move servers to other racks (fewer per rack in the servers' `rack` pattern, e.g. r{n/3}), raise the rack's `max_kw` if its feed and cooling allow, or allow designs over a rack's limit, which keeps the design and flags the rack",
                )
            })
            .collect()
    }
}

/// `rack r01`, or `3 racks: r01, r02, r03`, or the first four of many and
/// how many more.
pub fn name_racks(racks: &[&str]) -> String {
    match racks {
        [one] => format!("rack {one}"),
        _ if racks.len() <= 4 => format!("{} racks: {}", racks.len(), racks.join(", ")),
        _ => format!(
            "{} racks: {} and {} more",
            racks.len(),
            racks[..4].join(", "),
            racks.len() - 4
        ),
    }
}

/// Watts drawn by named servers and physical switches, collected while
/// the parts are priced.
#[derive(Debug, Default)]
pub(crate) struct Loads {
    by_device: HashMap<String, Draws>,
}

impl Loads {
    /// `watts` drawn at the server or physical switch `device` by `what`.
    pub fn add(&mut self, device: &str, what: Draw, watts: f64) {
        if watts != 0.0 {
            let d = self.by_device.entry(device.to_string()).or_default();
            match what {
                Draw::Server => d.servers += watts,
                Draw::Switch => d.switches += watts,
                Draw::Cable => d.cables += watts,
            }
        }
    }

    /// Sums the loads per rack; `default_max_kw` is the limit of racks
    /// the plan gives none.
    pub fn per_rack(&self, plan: &Plan, default_max_kw: Option<f64>) -> Power {
        let mut rack_of: HashMap<&str, &str> = HashMap::new();
        let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for s in &plan.servers {
            if let Some(r) = &s.rack {
                rack_of.insert(&s.name, r);
                counts.entry(r).or_default().0 += 1;
            }
        }
        for s in &plan.switch_list {
            if let Some(r) = &s.rack
                && rack_of.insert(&s.physical, r).is_none()
            {
                counts.entry(r).or_default().1 += 1;
            }
        }
        let mut draws: HashMap<&str, Draws> = HashMap::new();
        let (mut total, mut unracked) = (0.0, 0.0);
        for (device, d) in &self.by_device {
            let w = d.servers + d.switches + d.cables;
            total += w;
            match rack_of.get(device.as_str()) {
                Some(r) => {
                    let e = draws.entry(r).or_default();
                    e.servers += d.servers;
                    e.switches += d.switches;
                    e.cables += d.cables;
                }
                None => unracked += w,
            }
        }
        let racks: Vec<RackPower> = plan
            .racks
            .iter()
            .map(|r| {
                let (servers, switches) = counts.get(r.name.as_str()).copied().unwrap_or_default();
                let d = draws.get(r.name.as_str()).copied().unwrap_or_default();
                RackPower {
                    rack: r.name.clone(),
                    network: r.network,
                    servers,
                    switches,
                    watts: round(d.servers + d.switches + d.cables),
                    draws: Draws {
                        servers: round(d.servers),
                        switches: round(d.switches),
                        cables: round(d.cables),
                    },
                    max_kw: r.max_kw.or(default_max_kw),
                }
            })
            .collect();
        let over = (racks.iter())
            .filter(|r| r.over_kw().is_some())
            .map(|r| r.rack.clone())
            .collect();
        Power {
            total_watts: round(total),
            racks,
            unracked_watts: round(unracked),
            over,
        }
    }
}

/// Watts to one decimal, so that JSON shows no float noise.
fn round(w: f64) -> f64 {
    (w * 10.0).round() / 10.0
}

/// `12.3 kW`.
pub fn kw(watts: f64) -> String {
    format!("{:.1} kW", watts / 1000.0)
}

/// The power section of `planner cost`'s report.
pub fn render_power(p: &Power) -> String {
    let mut out = format!("power {} in total", kw(p.total_watts));
    if p.racks.is_empty() {
        out.push_str(
            " (the plan has no racks: give the inventory's servers racks for power per rack)\n",
        );
        return out;
    }
    out.push_str(&format!(", {} racks", p.racks.len()));
    if p.unracked_watts > 0.0 {
        out.push_str(&format!(", {} outside any rack", kw(p.unracked_watts)));
    }
    out.push('\n');
    let mut t = Table::new(["rack", "servers", "switches", "power", "limit", "status"])
        .right(&[1, 2, 3, 4]);
    for r in &p.racks {
        t.row([
            if r.network {
                format!("{} (network)", r.rack)
            } else {
                r.rack.clone()
            },
            r.servers.to_string(),
            r.switches.to_string(),
            kw(r.watts),
            r.max_kw
                .map_or_else(|| "-".to_string(), |m| format!("{m:.1} kW")),
            match r.over_kw() {
                Some(over) => format!("OVER by {over:.1} kW"),
                None if r.max_kw.is_some() => "ok".to_string(),
                None => "no limit".to_string(),
            },
        ]);
    }
    out.push_str(&t.render());
    out
}

/// The power of a designed plan from the catalog's watts (the same
/// arithmetic as `planner cost`: [`super::cost_plan`]), held against each
/// rack's `max_kw` (docs/cost.md, "Power per rack"): a rack over its limit
/// is refused with an inventory problem naming the rack, its draw, its
/// limit and what draws it, unless `allow_over` (then the report flags it).
pub fn check_rack_power(
    plan: &CheckedPlan,
    inv: &Inventory,
    catalog: &Catalog,
    allow_over: bool,
) -> Result<Power> {
    let power = super::cost_plan(plan, catalog, None)?.power;
    if allow_over {
        return Ok(power);
    }
    let lines: std::collections::HashMap<&str, Option<usize>> = inv
        .racks
        .iter()
        .map(|r| (r.name.as_str(), r.line))
        .collect();
    let problems = power.over_problems(&|rack| lines.get(rack).copied().flatten());
    if problems.is_empty() {
        Ok(power)
    } else {
        Err(Error::Invalid {
            file: inv.source.clone(),
            what: "inventory",
            problems,
        })
    }
}

/// One line for `design --catalog`: the total, and the rack that draws
/// most against its limit.
pub fn render_power_line(p: &Power, catalog: &str) -> String {
    let mut out = format!(
        "power {} in total (watts from {catalog})",
        kw(p.total_watts)
    );
    if let Some(r) = p.worst_rack() {
        match (r.max_kw, r.over_kw()) {
            (Some(max), Some(over)) => out.push_str(&format!(
                "; rack {} draws {}, OVER its {max:.1} kW limit by {over:.1} kW ({} racks over)",
                r.rack,
                kw(r.watts),
                p.over.len()
            )),
            (Some(max), None) => out.push_str(&format!(
                "; highest rack against its limit: {} at {} of {max:.1} kW",
                r.rack,
                kw(r.watts)
            )),
            (None, _) => out.push_str(&format!(
                "; highest rack: {} at {} (no limit)",
                r.rack,
                kw(r.watts)
            )),
        }
    }
    out.push('\n');
    out
}
