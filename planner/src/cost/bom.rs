//! Bills of materials: the parts a design needs, priced from a catalog,
//! and the TCO of a plan (`planner cost`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::catalog::{BreakoutLink, Catalog, OpticalLink};
use super::power::{Draw, Loads, Power, render_power};
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::metrics::metrics;
use crate::plan::{Breakout, Cable, CableRuns, Media, PhysicalCable, Plan, Run, Topology};
use crate::text::Table;

/// One line of a bill of materials. `total_cost` of a [`Bom`] is the sum
/// of `count * unit_price` over its lines (energy is a line too).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BomLine {
    /// The part's name in the catalog (`energy` for the energy line).
    pub part: String,
    /// `switch`, `nic`, `gpu`, `server`, `cable`, `optic` or `energy`.
    pub kind: &'static str,
    /// How many (kWh for energy).
    pub count: u64,
    /// Price of one (of a kWh for energy).
    pub unit_price: f64,
    /// Power draw of one, in watts.
    pub watts: f64,
}

/// A priced bill of materials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bom {
    /// The lines, parts in the order switch, nic, gpu, server, cable,
    /// optic, then energy.
    pub parts: Vec<BomLine>,
    /// Price of the parts.
    pub capex: f64,
    /// Energy cost over the catalog's years (0 without a price per kWh).
    pub energy_cost: f64,
    /// Capex plus energy: the TCO.
    pub total_cost: f64,
}

/// Collects part counts, then prices them.
#[derive(Debug, Default)]
pub(crate) struct BomBuilder {
    counts: BTreeMap<(u8, String), (u64, f64, f64, &'static str)>,
}

impl BomBuilder {
    /// Adds `count` of a part.
    pub fn add(&mut self, kind: &'static str, part: &str, count: u64, price: f64, watts: f64) {
        if count == 0 {
            return;
        }
        let order = match kind {
            "switch" => 0,
            "nic" => 1,
            "gpu" => 2,
            "server" => 3,
            "cable" => 4,
            _ => 5,
        };
        let e = self
            .counts
            .entry((order, part.to_string()))
            .or_insert((0, price, watts, kind));
        e.0 += count;
    }

    /// Adds `count` optical links.
    pub fn add_optical(&mut self, link: &OpticalLink<'_>, count: u64) {
        match link {
            OpticalLink::Aoc(a) => self.add("cable", &a.name, count, a.price, a.watts),
            OpticalLink::Fibre(f, o) => {
                self.add("cable", &f.name, count, f.price, f.watts);
                self.add("optic", &o.name, 2 * count, o.price, o.watts);
            }
        }
    }

    /// The priced bill, with an energy line when the catalog prices energy.
    pub fn finish(self, catalog: &Catalog) -> Bom {
        let mut parts: Vec<BomLine> = self
            .counts
            .into_iter()
            .map(|((_, part), (count, unit_price, watts, kind))| BomLine {
                part,
                kind,
                count,
                unit_price,
                watts,
            })
            .collect();
        let capex: f64 = parts.iter().map(|l| l.count as f64 * l.unit_price).sum();
        let watts: f64 = parts.iter().map(|l| l.count as f64 * l.watts).sum();
        let mut energy_cost = 0.0;
        if let Some(per_kwh) = catalog.price_per_kwh
            && watts > 0.0
        {
            let kwh = catalog.kwh(watts).round() as u64;
            energy_cost = kwh as f64 * per_kwh;
            parts.push(BomLine {
                part: format!("energy ({} years)", catalog.years),
                kind: "energy",
                count: kwh,
                unit_price: per_kwh,
                watts: 0.0,
            });
        }
        Bom {
            parts,
            capex: cents(capex),
            energy_cost: cents(energy_cost),
            total_cost: cents(capex + energy_cost),
        }
    }
}

/// The cost of a plan (`planner cost`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanCost {
    /// The plan's name.
    pub plan: String,
    /// `bigraph` or `fat-tree`.
    pub topology: Topology,
    /// The design (`BiGraph 4x16`).
    pub design: String,
    /// Sub-nodes (GPU-NIC pairs).
    pub sub_nodes: usize,
    /// GPUs priced.
    pub gpus: u64,
    /// Currency of the prices.
    pub currency: String,
    /// The bill of materials.
    pub bom: Bom,
    /// Bisection bandwidth of the plan in Gbps.
    pub bisection_gbps: f64,
    /// Total cost over sub-nodes.
    pub cost_per_sub_node: f64,
    /// Total cost over the bisection bandwidth.
    pub cost_per_bisection_gbps: f64,
    /// The cables by run, media and speed, with the length the catalog
    /// gives that run and the part that prices it.
    pub cable_runs: Vec<CableRunCost>,
    /// The parts' power, in total and per rack.
    pub power: Power,
}

/// Cables of one run, media and speed, as `planner cost` prices them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CableRunCost {
    /// Where they run (`in_rack` for every DAC; `""` when a rack is not
    /// known).
    pub run: Run,
    /// DAC or optical.
    pub media: Media,
    /// Speed in Gbps.
    pub gbps: u32,
    /// How many.
    pub count: u64,
    /// The length each must reach, from the catalog's `*_m` key of the run.
    pub metres: f64,
    /// The catalog part (`fibre + 2 optic` for a fibre with optics).
    pub part: String,
}

impl PlanCost {
    /// Gives every rack without its own `max_kw` the limit `max_kw`
    /// (`planner cost --max-rack-kw`), and flags the racks over it.
    pub fn limit_racks(&mut self, max_kw: f64) {
        for r in &mut self.power.racks {
            r.max_kw.get_or_insert(max_kw);
        }
        self.power.over = (self.power.racks.iter())
            .filter(|r| r.over_kw().is_some())
            .map(|r| r.rack.clone())
            .collect();
    }
}

/// Prices a plan from a catalog: its physical switches (by model name,
/// else the cheapest model with enough ports at the speed), a NIC per
/// sub-node, a GPU per sub-node (or `gpus_per_server` per server), the
/// servers, and its cables (DAC or the cheapest optical link).
pub fn cost_plan(
    plan: &CheckedPlan,
    catalog: &Catalog,
    gpus_per_server: Option<u32>,
) -> Result<PlanCost> {
    let mut b = BomBuilder::default();
    let mut loads = Loads::default();
    let mut problems = Vec::new();

    // Physical switches: their ports over every virtual switch they carry.
    let mut physical: BTreeMap<&str, (&str, u32, u32)> = BTreeMap::new();
    for s in &plan.switch_list {
        // A broken-out switch is priced by its cages, at the cage's speed.
        let top = s.ports.iter().map(|p| p.port).max().unwrap_or(0);
        let (top, gbps) = match s.breakout {
            Some(b) => (b.cage_lane(top).0, b.cage_gbps),
            None => (top, s.port_gbps),
        };
        let e = physical
            .entry(s.physical.as_str())
            .or_insert((s.model.as_str(), 0, gbps));
        e.1 = e.1.max(top);
    }
    // Switches the catalog cannot price, by what is missing: one problem
    // per missing part, naming its switches.
    let mut unpriced: BTreeMap<(&str, u32, u32), Vec<&str>> = BTreeMap::new();
    for (name, (model, ports, gbps)) in &physical {
        let part = catalog
            .switch_named(model)
            .filter(|m| m.ports >= *ports && m.gbps == *gbps)
            .or_else(|| catalog.switch_for(*ports, *gbps));
        match part {
            Some(m) => {
                b.add("switch", &m.name, 1, m.price, m.watts);
                loads.add(name, Draw::Switch, m.watts);
            }
            None => unpriced
                .entry((model, *ports, *gbps))
                .or_default()
                .push(name),
        }
    }
    for ((model, ports, gbps), names) in unpriced {
        problems.push(Problem::at(
            None,
            format!(
                "{} ({model}, {ports} x {gbps}G)",
                name_some(&names, "switch", "switches")
            ),
            format!(
                "no switch in the catalog named {model:?} or with {ports} ports at {gbps} Gbps"
            ),
            format!("add a [[switch]] with ports >= {ports} and gbps = {gbps} to the catalog"),
        ));
    }

    // NICs, one per sub-node; those the catalog lacks, one problem per
    // speed.
    let mut no_nic: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for s in &plan.sub_node_list {
        match catalog.nic_for(s.nic_gbps) {
            // A dual-port NIC (HPN) is priced as the catalog's NIC at the
            // port speed once per port, as `purchase` prices it.
            Some(n) => {
                let ports = if s.port1.is_some() { 2 } else { 1 };
                b.add("nic", &n.name, ports, n.price, n.watts);
                loads.add(&s.server, Draw::Server, n.watts * ports as f64);
            }
            None => no_nic.entry(s.nic_gbps).or_default().push(&s.id),
        }
    }
    for (gbps, ids) in no_nic {
        problems.push(Problem::at(
            None,
            format!("NICs of {}", name_some(&ids, "sub-node", "sub-nodes")),
            format!("no NIC in the catalog at {gbps} Gbps"),
            format!("add a [[nic]] with gbps = {gbps}"),
        ));
    }

    // GPUs and servers, when the catalog prices them.
    let gpus = match gpus_per_server {
        Some(g) => plan.servers.len() as u64 * u64::from(g),
        None => plan.sub_node_list.len() as u64,
    };
    if let Some(g) = catalog.gpu() {
        b.add("gpu", &g.name, gpus, g.price, g.watts);
        for s in &plan.servers {
            let n = gpus_per_server.map_or(s.sub_nodes.len(), |g| g as usize);
            loads.add(&s.name, Draw::Server, g.watts * n as f64);
        }
    }
    if !catalog.servers.is_empty() {
        let per_server = plan
            .servers
            .iter()
            .map(|s| s.sub_nodes.len() as u32)
            .max()
            .unwrap_or(1)
            .max(gpus_per_server.unwrap_or(0));
        match catalog.servers_for(
            plan.servers.len() as u64 * u64::from(per_server),
            Some(per_server),
        ) {
            Some((s, n)) => {
                b.add("server", &s.name, n, s.price, s.watts);
                // The chassis are spread evenly over the plan's servers.
                let each = s.watts * n as f64 / plan.servers.len().max(1) as f64;
                for server in &plan.servers {
                    loads.add(&server.name, Draw::Server, each);
                }
            }
            None => problems.push(Problem::at(
                None,
                "servers",
                format!("no server in the catalog holds {per_server} GPUs and {per_server} NICs"),
                format!("add a [[server]] with gpus >= {per_server} and nics >= {per_server}"),
            )),
        }
    }

    // Cables by media, speed and run (the run sets the length a cable must
    // reach); each draws half its watts at either end, and a fibre's
    // optics one at each end.
    let runs = plan.cable_runs();
    let mut groups: BTreeMap<(u32, bool, Run), u64> = BTreeMap::new();
    // Breakout cables, each once: by breakout, media and longest run.
    let mut breakouts: BTreeMap<(Breakout, bool, Run), Vec<&PhysicalCable>> = BTreeMap::new();
    let physical_cables = plan.physical_cables();
    for pc in &physical_cables {
        match pc.breakout {
            // Lanes into lanes of one peer cage: a straight cable between
            // two broken-out cages, priced as a whole cable of the cage.
            Some(e) if pc.straight => {
                let c = &plan.cables[pc.legs[0]];
                let (_, dac, run) = cable_group(c, &runs);
                *groups.entry((e.breakout.cage_gbps, dac, run)).or_default() += 1;
            }
            Some(e) => {
                let (dac, run) = breakout_group(plan, &runs, pc);
                breakouts
                    .entry((e.breakout, dac, run))
                    .or_default()
                    .push(pc);
            }
            None => {
                *groups
                    .entry(cable_group(&plan.cables[pc.legs[0]], &runs))
                    .or_default() += 1
            }
        }
    }
    // Watts at each end of a breakout cable's legs: (cage end, leg end).
    let mut breakout_watts: BTreeMap<(Breakout, bool, Run), (f64, f64)> = BTreeMap::new();
    let mut breakout_runs = Vec::new();
    for (&(bo, dac, run), cables) in &breakouts {
        let metres = if dac {
            catalog.in_rack_m
        } else {
            catalog.run_m(run)
        };
        let key = if dac {
            "in_rack_m"
        } else {
            Catalog::run_key(run)
        };
        let count = cables.len() as u64;
        let n = f64::from(bo.lanes);
        match catalog.breakout_for(bo, dac, metres) {
            Some(link) => {
                let (part, cage_w, leg_w) = match link {
                    BreakoutLink::Cable(c) => {
                        b.add("cable", &c.name, count, c.price, c.watts);
                        (c.name.clone(), c.watts / 2.0, c.watts / 2.0 / n)
                    }
                    BreakoutLink::Fibre(f, cage, lane, legs) => {
                        b.add("cable", &f.name, count, f.price, f.watts);
                        b.add("optic", &cage.name, count, cage.price, cage.watts);
                        b.add(
                            "optic",
                            &lane.name,
                            u64::from(legs) * count,
                            lane.price,
                            lane.watts,
                        );
                        (
                            format!("{} + {} + {legs} {}", f.name, cage.name, lane.name),
                            f.watts / 2.0 + cage.watts,
                            f.watts / 2.0 / n + lane.watts,
                        )
                    }
                };
                breakout_watts.insert((bo, dac, run), (cage_w, leg_w));
                breakout_runs.push(CableRunCost {
                    run,
                    media: if dac { Media::Dac } else { Media::Optical },
                    gbps: bo.cage_gbps,
                    count,
                    metres,
                    part: format!("{part} (breakout {})", bo.describe()),
                });
            }
            None => {
                let kind = if dac { "dac" } else { "aoc\" or \"fibre" };
                problems.push(Problem::at(
                    None,
                    format!(
                        "{count} {} breakout cable{} {} at {} Gbps{}",
                        if dac { "DAC" } else { "optical" },
                        if count == 1 { "" } else { "s" },
                        bo.describe(),
                        bo.cage_gbps,
                        if dac { String::new() } else { run_phrase(run) }
                    ),
                    format!(
                        "no {} breakout cable {} in the catalog at {} Gbps reaching {metres} m ({key})",
                        if dac { "DAC" } else { "AOC, or fibre with optics of both speeds," },
                        bo.describe(),
                        bo.cage_gbps,
                    ),
                    format!(
                        "add a [[cable]] with kind = \"{kind}\", gbps = {}, breakout = \"{}\", reach_m >= {metres}{}",
                        bo.cage_gbps,
                        bo.describe(),
                        if dac {
                            String::new()
                        } else {
                            format!(
                                " (a fibre also needs an [[optic]] of {} and of {} Gbps)",
                                bo.cage_gbps,
                                bo.lane_gbps()
                            )
                        }
                    ),
                ));
            }
        }
    }
    let mut end_watts: BTreeMap<(u32, bool, Run), f64> = BTreeMap::new();
    let mut cable_runs = Vec::new();
    for ((gbps, dac, run), count) in groups {
        let metres = catalog.run_m(run);
        let key = Catalog::run_key(run);
        let what = if dac { "DAC" } else { "optical" };
        let part = if dac {
            catalog.dac_for(gbps).map(|c| {
                b.add("cable", &c.name, count, c.price, c.watts);
                end_watts.insert((gbps, dac, run), c.watts / 2.0);
                c.name.clone()
            })
        } else {
            catalog.optical_for(gbps, metres).map(|link| {
                b.add_optical(&link, count);
                let (name, watts) = match link {
                    OpticalLink::Aoc(a) => (a.name.clone(), a.watts / 2.0),
                    OpticalLink::Fibre(f, o) => (
                        format!("{} + 2 {}", f.name, o.name),
                        f.watts / 2.0 + o.watts,
                    ),
                };
                end_watts.insert((gbps, dac, run), watts);
                name
            })
        };
        match part {
            Some(part) => cable_runs.push(CableRunCost {
                run,
                media: if dac { Media::Dac } else { Media::Optical },
                gbps,
                count,
                metres,
                part,
            }),
            None if dac => problems.push(Problem::at(
                None,
                format!("{count} DAC cables at {gbps} Gbps"),
                format!("no DAC in the catalog at {gbps} Gbps reaching {metres} m ({key})"),
                format!("add a [[cable]] with kind = \"dac\", gbps = {gbps}, reach_m >= {metres}"),
            )),
            None => problems.push(Problem::at(
                None,
                format!("{count} {what} cables at {gbps} Gbps{}", run_phrase(run)),
                format!(
                    "no AOC, or fibre with optics, in the catalog at {gbps} Gbps reaching {metres} m ({key})"
                ),
                format!(
                    "add a [[cable]] with kind = \"aoc\", gbps = {gbps}, reach_m >= {metres}, or lower {key} if the runs are shorter"
                ),
            )),
        }
    }
    if !problems.is_empty() {
        return Err(Error::CatalogLacks {
            catalog: catalog.name.clone(),
            plan: plan.source().to_string(),
            problems,
        });
    }
    for pc in &physical_cables {
        match pc.breakout {
            Some(e) if !pc.straight => {
                let (dac, run) = breakout_group(plan, &runs, pc);
                let (cage_w, leg_w) = breakout_watts[&(e.breakout, dac, run)];
                loads.add(&plan.switch_list[e.switch].physical, Draw::Cable, cage_w);
                for l in plan.legs(pc, &e) {
                    loads.add(l.peer, Draw::Cable, leg_w);
                }
            }
            Some(e) => {
                let c = &plan.cables[pc.legs[0]];
                let (_, dac, run) = cable_group(c, &runs);
                let w = end_watts[&(e.breakout.cage_gbps, dac, run)];
                loads.add(&c.a, Draw::Cable, w);
                loads.add(&c.b, Draw::Cable, w);
            }
            None => {
                let c = &plan.cables[pc.legs[0]];
                let w = end_watts[&cable_group(c, &runs)];
                loads.add(&c.a, Draw::Cable, w);
                loads.add(&c.b, Draw::Cable, w);
            }
        }
    }
    cable_runs.extend(breakout_runs);
    let bom = b.finish(catalog);
    let m = metrics(plan);
    Ok(PlanCost {
        plan: plan.name.clone(),
        topology: plan.topology,
        design: m.design,
        sub_nodes: plan.sub_nodes,
        gpus,
        currency: catalog.currency.clone(),
        cost_per_sub_node: cents(bom.total_cost / plan.sub_nodes.max(1) as f64),
        cost_per_bisection_gbps: per_bisection_gbps(bom.total_cost, m.bisection_gbps),
        bisection_gbps: m.bisection_gbps,
        bom,
        cable_runs,
        power: loads.per_rack(plan, None),
    })
}

/// The group a breakout cable is priced in: a DAC when every leg is (one
/// rack), else optical reaching the longest run of its legs.
fn breakout_group(plan: &Plan, runs: &CableRuns<'_>, pc: &PhysicalCable) -> (bool, Run) {
    let dac = pc.is_dac(plan);
    let run = if dac {
        Run::InRack
    } else {
        (pc.legs.iter())
            .map(|&k| runs.of(&plan.cables[k]).2)
            .max()
            .unwrap_or(Run::Unknown)
    };
    (dac, run)
}

/// The group a cable is priced in: its speed, whether it is a DAC, and
/// its run (a DAC always reaches `in_rack_m`, whatever its racks).
fn cable_group(c: &Cable, runs: &CableRuns<'_>) -> (u32, bool, Run) {
    let dac = c.media == Media::Dac;
    let run = if dac { Run::InRack } else { runs.of(c).2 };
    (c.gbps, dac, run)
}

/// ` running same_row` for messages; nothing for a run of unknown racks.
fn run_phrase(run: Run) -> String {
    match run {
        Run::Unknown => String::new(),
        _ => format!(" running {}", run.as_str()),
    }
}

/// `switch sw01`, or `3 switches: sw01, sw02, sw03`, or the first few of
/// many and how many more.
fn name_some(names: &[&str], one: &str, many: &str) -> String {
    const SHOWN: usize = 4;
    match names {
        [name] => format!("{one} {name}"),
        _ if names.len() <= SHOWN => format!("{} {many}: {}", names.len(), names.join(", ")),
        _ => format!(
            "{} {many}: {} and {} more",
            names.len(),
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        ),
    }
}

/// Total cost over bisection bandwidth, rounded to cents: the one cost
/// per Gbps of bisection that `cost`, `compare --catalog` and `purchase`
/// report, each with the bisection of `metrics::bisection_gbps`. 0 for a
/// fabric without bisection (one sub-node), which no verdict ranks.
pub fn per_bisection_gbps(total_cost: f64, bisection_gbps: f64) -> f64 {
    if bisection_gbps > 0.0 {
        cents(total_cost / bisection_gbps)
    } else {
        0.0
    }
}

/// An amount rounded to cents, so that JSON shows no float noise.
pub(crate) fn cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// An amount of money, rounded to whole units, with thousands separators
/// (`1,234,567`); amounts under 100 keep two decimals.
pub fn money(v: f64) -> String {
    if v.abs() < 100.0 && v.fract() != 0.0 {
        return format!("{v:.2}");
    }
    let whole = v.round() as i64;
    let digits = whole.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if whole < 0 { format!("-{out}") } else { out }
}

/// The bill of materials as a table.
pub fn render_bom(bom: &Bom, currency: &str) -> String {
    let mut t = Table::new(["part", "kind", "count", "unit price", "total"]).right(&[2, 3, 4]);
    for l in &bom.parts {
        t.row([
            l.part.clone(),
            l.kind.to_string(),
            money(l.count as f64),
            money(l.unit_price),
            money(l.count as f64 * l.unit_price),
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!(
        "capex {} {currency}, energy {} {currency}, total (TCO) {} {currency}\n",
        money(bom.capex),
        money(bom.energy_cost),
        money(bom.total_cost)
    ));
    out
}

/// Renders a plan's cost for people.
pub fn render_plan_cost(c: &PlanCost, catalog: &Catalog, plan_file: &str) -> String {
    let mut out = format!(
        "Cost of {} ({plan_file}): {}, {} sub-nodes, {} GPUs, prices from {}\n",
        c.plan, c.design, c.sub_nodes, c.gpus, catalog.name
    );
    if let Some(note) = &catalog.note {
        out.push_str(&format!("  - {note}\n"));
    }
    out.push('\n');
    out.push_str(&render_bom(&c.bom, &c.currency));
    out.push_str(&format!(
        "per sub-node {} {cur}; bisection {} Gbps, {} {cur} per Gbps\n",
        money(c.cost_per_sub_node),
        crate::text::gbps(c.bisection_gbps),
        money(c.cost_per_bisection_gbps),
        cur = c.currency
    ));
    out.push_str(&render_cable_runs(&c.cable_runs));
    out.push_str(&render_power(&c.power));
    out
}

/// The cables by run: how many, how long each must be, and the metres in
/// total, per run, media and speed.
fn render_cable_runs(runs: &[CableRunCost]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut t = Table::new([
        "run", "media", "speed", "cables", "length", "metres", "part",
    ])
    .right(&[3, 4, 5]);
    for r in runs {
        t.row([
            match r.run {
                Run::Unknown => "racks unknown".to_string(),
                run => run.as_str().to_string(),
            },
            r.media.as_str().to_string(),
            format!("{}G", r.gbps),
            money(r.count as f64),
            format!("{} m", r.metres),
            money(r.count as f64 * r.metres),
            r.part.clone(),
        ]);
    }
    format!(
        "\nCable runs (lengths from the catalog's *_m keys):\n{}",
        t.render()
    )
}
