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

use crate::plan::Plan;
use crate::text::Table;

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
}

/// Watts drawn by named servers and physical switches, collected while
/// the parts are priced.
#[derive(Debug, Default)]
pub(crate) struct Loads {
    by_device: HashMap<String, f64>,
}

impl Loads {
    /// `watts` drawn at the server or physical switch `device`.
    pub fn add(&mut self, device: &str, watts: f64) {
        if watts != 0.0 {
            *self.by_device.entry(device.to_string()).or_default() += watts;
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
        let mut watts: HashMap<&str, f64> = HashMap::new();
        let (mut total, mut unracked) = (0.0, 0.0);
        for (device, w) in &self.by_device {
            total += w;
            match rack_of.get(device.as_str()) {
                Some(r) => *watts.entry(r).or_default() += w,
                None => unracked += w,
            }
        }
        let racks: Vec<RackPower> = plan
            .racks
            .iter()
            .map(|r| {
                let (servers, switches) = counts.get(r.name.as_str()).copied().unwrap_or_default();
                RackPower {
                    rack: r.name.clone(),
                    network: r.network,
                    servers,
                    switches,
                    watts: round(watts.get(r.name.as_str()).copied().unwrap_or(0.0)),
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
