//! The parts catalog: a TOML file of purchasable parts with prices, read
//! into checked [`Catalog`] values whose errors name the file, line and
//! part (see `docs/cost.md` for the format).

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Error, Problem, Result};
use crate::plan::Run;
use crate::text;

/// Hours in a year, for energy over the years of the TCO.
const HOURS_PER_YEAR: f64 = 8760.0;

/// A switch model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwitchModel {
    /// The name, as plans and reports show it.
    pub name: String,
    /// Ports at `gbps`.
    pub ports: u32,
    /// Port speed in Gbps.
    pub gbps: u32,
    /// Price of one switch.
    pub price: f64,
    /// Power draw in watts.
    pub watts: f64,
    /// Most virtual switches (VLAN halves) one switch can be split into;
    /// 1 when it cannot be split.
    pub split: u32,
}

/// A network card (one port per sub-node).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NicModel {
    /// The name.
    pub name: String,
    /// Port speed in Gbps.
    pub gbps: u32,
    /// Price.
    pub price: f64,
    /// Power draw in watts.
    pub watts: f64,
}

/// A GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuModel {
    /// The name.
    pub name: String,
    /// Price.
    pub price: f64,
    /// Power draw in watts.
    pub watts: f64,
}

/// A server chassis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerModel {
    /// The name.
    pub name: String,
    /// GPU slots.
    pub gpus: u32,
    /// NIC slots.
    pub nics: u32,
    /// Price, without GPUs and NICs.
    pub price: f64,
    /// Power draw in watts, without GPUs and NICs.
    pub watts: f64,
}

/// What a cable is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CableKind {
    /// Direct-attach copper: short, within a rack.
    Dac,
    /// Active optical cable, transceivers built in.
    Aoc,
    /// Fibre patch cable: needs a transceiver ([`OpticModel`]) at each end.
    Fibre,
}

impl CableKind {
    /// `dac`, `aoc` or `fibre`.
    pub fn as_str(self) -> &'static str {
        match self {
            CableKind::Dac => "dac",
            CableKind::Aoc => "aoc",
            CableKind::Fibre => "fibre",
        }
    }
}

/// A cable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CableModel {
    /// The name.
    pub name: String,
    /// DAC, AOC or fibre.
    pub kind: CableKind,
    /// Line rate in Gbps.
    pub gbps: u32,
    /// Longest run in metres.
    pub reach_m: f64,
    /// Price.
    pub price: f64,
    /// Power draw in watts (AOCs draw some).
    pub watts: f64,
    /// A breakout cable (`breakout = "2x200G"`): one end of `gbps` into
    /// this many legs of the lane speed, priced once per cable. A fibre
    /// breakout takes one transceiver of `gbps` at the cage and one of
    /// the lane speed per leg.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakout: Option<crate::plan::Breakout>,
}

/// An optical transceiver, two per fibre cable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpticModel {
    /// The name.
    pub name: String,
    /// Line rate in Gbps.
    pub gbps: u32,
    /// Longest run in metres.
    pub reach_m: f64,
    /// Price.
    pub price: f64,
    /// Power draw in watts.
    pub watts: f64,
}

/// A checked parts catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog {
    /// The file's name as the user gave it.
    pub name: String,
    /// Currency of every price (`USD`).
    pub currency: String,
    /// What the prices are (`illustrative`), shown with every report.
    pub note: Option<String>,
    /// Price of a kWh; no energy cost when absent.
    pub price_per_kwh: Option<f64>,
    /// Years of energy counted in the TCO.
    pub years: f64,
    /// Cable run within a rack, in metres (DAC reach needed).
    pub in_rack_m: f64,
    /// Cable run between racks whose rows are not known, in metres
    /// (optical reach needed); what `purchase`, which knows no racks,
    /// prices every optical link at.
    pub between_racks_m: f64,
    /// Cable run between two racks of one row, in metres
    /// (`between_racks_m` when not given).
    pub same_row_m: f64,
    /// Cable run between racks of different rows, in metres
    /// (`between_racks_m` when not given).
    pub between_rows_m: f64,
    /// Switch models.
    pub switches: Vec<SwitchModel>,
    /// NICs.
    pub nics: Vec<NicModel>,
    /// GPUs.
    pub gpus: Vec<GpuModel>,
    /// Server chassis.
    pub servers: Vec<ServerModel>,
    /// Cables.
    pub cables: Vec<CableModel>,
    /// Transceivers.
    pub optics: Vec<OpticModel>,
}

/// An optical link: an AOC, or a fibre cable with a transceiver at each
/// end.
#[derive(Debug, Clone, PartialEq)]
pub enum OpticalLink<'c> {
    /// One active optical cable.
    Aoc(&'c CableModel),
    /// A fibre and two transceivers.
    Fibre(&'c CableModel, &'c OpticModel),
}

/// A breakout cable as priced: a DAC or AOC breakout on its own, or a
/// breakout fibre with a transceiver of the cage's speed and one of the
/// lane's speed per leg (the last field: legs).
#[derive(Debug, Clone, PartialEq)]
pub enum BreakoutLink<'c> {
    /// A breakout DAC or AOC.
    Cable(&'c CableModel),
    /// A breakout fibre, the cage's transceiver, the legs' transceiver,
    /// and the number of legs.
    Fibre(&'c CableModel, &'c OpticModel, &'c OpticModel, u32),
}

impl Catalog {
    /// Parses and checks a catalog; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Catalog> {
        let raw: RawCatalog = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        check(raw, text, file)
    }

    /// Parts in the catalog, of every kind.
    pub fn part_count(&self) -> usize {
        self.switches.len()
            + self.nics.len()
            + self.gpus.len()
            + self.servers.len()
            + self.cables.len()
            + self.optics.len()
    }

    /// Energy in kWh of `watts` over the catalog's years.
    pub fn kwh(&self, watts: f64) -> f64 {
        watts / 1000.0 * HOURS_PER_YEAR * self.years
    }

    /// Price plus energy of a part drawing `watts`: what the purchase
    /// model minimises per part.
    pub fn tco(&self, price: f64, watts: f64) -> f64 {
        price + self.kwh(watts) * self.price_per_kwh.unwrap_or(0.0)
    }

    /// The switch model named `name`.
    pub fn switch_named(&self, name: &str) -> Option<&SwitchModel> {
        self.switches.iter().find(|s| s.name == name)
    }

    /// The cheapest switch (over its TCO) with at least `ports` ports at
    /// `gbps`.
    pub fn switch_for(&self, ports: u32, gbps: u32) -> Option<&SwitchModel> {
        cheapest(
            self.switches
                .iter()
                .filter(|s| s.ports >= ports && s.gbps == gbps),
            |s| self.tco(s.price, s.watts),
        )
    }

    /// The cheapest NIC at `gbps`.
    pub fn nic_for(&self, gbps: u32) -> Option<&NicModel> {
        cheapest(self.nics.iter().filter(|n| n.gbps == gbps), |n| {
            self.tco(n.price, n.watts)
        })
    }

    /// The cheapest GPU.
    pub fn gpu(&self) -> Option<&GpuModel> {
        cheapest(self.gpus.iter(), |g| self.tco(g.price, g.watts))
    }

    /// The cheapest way to house `gpus` GPUs, `per_server` to a chassis
    /// (and as many NICs): the chassis and how many of it.
    pub fn servers_for(&self, gpus: u64, per_server: Option<u32>) -> Option<(&ServerModel, u64)> {
        let count = |s: &ServerModel| {
            let per = per_server.unwrap_or(s.gpus).max(1);
            gpus.div_ceil(u64::from(per))
        };
        cheapest(
            self.servers.iter().filter(|s| {
                let per = per_server.unwrap_or(s.gpus);
                s.gpus >= per && s.nics >= per
            }),
            |s| count(s) as f64 * self.tco(s.price, s.watts),
        )
        .map(|s| (s, count(s)))
    }

    /// The cheapest DAC at `gbps` that reaches across a rack.
    pub fn dac_for(&self, gbps: u32) -> Option<&CableModel> {
        cheapest(
            self.cables.iter().filter(|c| {
                c.kind == CableKind::Dac
                    && c.breakout.is_none()
                    && c.gbps == gbps
                    && c.reach_m >= self.in_rack_m
            }),
            |c| self.tco(c.price, c.watts),
        )
    }

    /// The length, in metres, the catalog gives a cable run: `in_rack_m`
    /// within a rack, `same_row_m` and `between_rows_m` between racks of
    /// known rows, `between_racks_m` otherwise (rows or racks unknown).
    pub fn run_m(&self, run: Run) -> f64 {
        match run {
            Run::InRack => self.in_rack_m,
            Run::SameRow => self.same_row_m,
            Run::BetweenRows => self.between_rows_m,
            Run::BetweenRacks | Run::Unknown => self.between_racks_m,
        }
    }

    /// The catalog key that sets [`Catalog::run_m`] for `run`, for
    /// messages.
    pub fn run_key(run: Run) -> &'static str {
        match run {
            Run::InRack => "in_rack_m",
            Run::SameRow => "same_row_m",
            Run::BetweenRows => "between_rows_m",
            Run::BetweenRacks | Run::Unknown => "between_racks_m",
        }
    }

    /// The cheapest optical link at `gbps` that reaches `reach` metres
    /// (`between_racks_m` for a run whose racks are not known).
    pub fn optical_for(&self, gbps: u32, reach: f64) -> Option<OpticalLink<'_>> {
        let aoc = cheapest(
            self.cables.iter().filter(|c| {
                c.kind == CableKind::Aoc
                    && c.breakout.is_none()
                    && c.gbps == gbps
                    && c.reach_m >= reach
            }),
            |c| self.tco(c.price, c.watts),
        );
        let fibre = cheapest(
            self.cables.iter().filter(|c| {
                c.kind == CableKind::Fibre
                    && c.breakout.is_none()
                    && c.gbps >= gbps
                    && c.reach_m >= reach
            }),
            |c| self.tco(c.price, c.watts),
        );
        let optic = cheapest(
            self.optics
                .iter()
                .filter(|o| o.gbps == gbps && o.reach_m >= reach),
            |o| self.tco(o.price, o.watts),
        );
        let fibre = fibre.zip(optic);
        match (aoc, fibre) {
            (Some(a), Some((f, o))) => {
                let with_fibre = self.tco(f.price, f.watts) + 2.0 * self.tco(o.price, o.watts);
                if self.tco(a.price, a.watts) <= with_fibre {
                    Some(OpticalLink::Aoc(a))
                } else {
                    Some(OpticalLink::Fibre(f, o))
                }
            }
            (Some(a), None) => Some(OpticalLink::Aoc(a)),
            (None, Some((f, o))) => Some(OpticalLink::Fibre(f, o)),
            (None, None) => None,
        }
    }

    /// The cheapest breakout cable `b` that reaches `reach` metres: a
    /// breakout DAC when `dac` (within a rack), else a breakout AOC or a
    /// breakout fibre with its transceivers (one of the cage's speed, one
    /// of the lane's per leg), whichever costs less over the TCO years.
    pub fn breakout_for(
        &self,
        b: crate::plan::Breakout,
        dac: bool,
        reach: f64,
    ) -> Option<BreakoutLink<'_>> {
        let of = |kind: CableKind| {
            cheapest(
                self.cables
                    .iter()
                    .filter(|c| c.kind == kind && c.breakout == Some(b) && c.reach_m >= reach),
                |c| self.tco(c.price, c.watts),
            )
        };
        if dac {
            return of(CableKind::Dac).map(BreakoutLink::Cable);
        }
        let optic = |gbps: u32| {
            cheapest(
                self.optics
                    .iter()
                    .filter(|o| o.gbps == gbps && o.reach_m >= reach),
                |o| self.tco(o.price, o.watts),
            )
        };
        let aoc = of(CableKind::Aoc).map(BreakoutLink::Cable);
        let fibre = (of(CableKind::Fibre)
            .zip(optic(b.cage_gbps))
            .zip(optic(b.lane_gbps())))
        .map(|((f, cage), lane)| BreakoutLink::Fibre(f, cage, lane, b.lanes));
        match (aoc, fibre) {
            (Some(a), Some(f)) => Some(if self.breakout_tco(&a) <= self.breakout_tco(&f) {
                a
            } else {
                f
            }),
            (a, f) => a.or(f),
        }
    }

    /// TCO of one breakout cable with its transceivers.
    pub fn breakout_tco(&self, link: &BreakoutLink<'_>) -> f64 {
        match link {
            BreakoutLink::Cable(c) => self.tco(c.price, c.watts),
            BreakoutLink::Fibre(f, cage, lane, n) => {
                self.tco(f.price, f.watts)
                    + self.tco(cage.price, cage.watts)
                    + f64::from(*n) * self.tco(lane.price, lane.watts)
            }
        }
    }

    /// TCO of one optical link.
    pub fn optical_tco(&self, link: &OpticalLink<'_>) -> f64 {
        match link {
            OpticalLink::Aoc(a) => self.tco(a.price, a.watts),
            OpticalLink::Fibre(f, o) => {
                self.tco(f.price, f.watts) + 2.0 * self.tco(o.price, o.watts)
            }
        }
    }
}

/// The cheapest item by `cost`; ties go to the one listed first.
fn cheapest<'a, T>(items: impl Iterator<Item = &'a T>, cost: impl Fn(&T) -> f64) -> Option<&'a T> {
    let mut best: Option<(&T, f64)> = None;
    for item in items {
        let c = cost(item);
        if best.is_none_or(|(_, b)| c < b) {
            best = Some((item, c));
        }
    }
    best.map(|(item, _)| item)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    currency: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    price_per_kwh: Option<Spanned<f64>>,
    #[serde(default)]
    years: Option<Spanned<f64>>,
    #[serde(default)]
    in_rack_m: Option<Spanned<f64>>,
    #[serde(default)]
    between_racks_m: Option<Spanned<f64>>,
    #[serde(default)]
    same_row_m: Option<Spanned<f64>>,
    #[serde(default)]
    between_rows_m: Option<Spanned<f64>>,
    #[serde(default)]
    switch: Vec<RawPart>,
    #[serde(default)]
    nic: Vec<RawPart>,
    #[serde(default)]
    gpu: Vec<RawPart>,
    #[serde(default)]
    server: Vec<RawPart>,
    #[serde(default)]
    cable: Vec<RawPart>,
    #[serde(default)]
    optic: Vec<RawPart>,
}

/// Every part table has these keys; which are required depends on the
/// table, and [`check`] says which are missing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPart {
    name: Spanned<String>,
    price: Option<f64>,
    #[serde(default)]
    watts: Option<f64>,
    #[serde(default)]
    ports: Option<u32>,
    #[serde(default)]
    gbps: Option<u32>,
    #[serde(default)]
    split: Option<u32>,
    #[serde(default)]
    gpus: Option<u32>,
    #[serde(default)]
    nics: Option<u32>,
    #[serde(default)]
    kind: Option<CableKind>,
    #[serde(default)]
    reach_m: Option<f64>,
    #[serde(default)]
    breakout: Option<String>,
}

struct Checker {
    lines: text::LineIndex,
    problems: Vec<Problem>,
}

impl Checker {
    fn line<T>(&self, s: &Spanned<T>) -> Option<usize> {
        Some(self.lines.line(s.span().start))
    }

    fn problem(&mut self, line: Option<usize>, object: &str, message: String, fix: &str) {
        self.problems
            .push(Problem::at(line, object, message, fix.to_string()));
    }

    /// The common checks of a part; returns its name, line, price and watts.
    fn part(&mut self, table: &str, p: &RawPart, names: &mut Vec<String>) -> (String, f64, f64) {
        let line = self.line(&p.name);
        let name = p.name.get_ref().trim().to_string();
        let object = format!("{table} {name:?}");
        if name.is_empty() {
            self.problem(line, table, "name is empty".into(), "give the part a name");
        } else if names.contains(&name) {
            self.problem(
                line,
                &object,
                "the name is used twice".into(),
                "give every part its own name",
            );
        }
        names.push(name.clone());
        let price = match p.price {
            Some(v) => self.amount(line, &object, "price", v, crate::limits::PART_PRICE),
            None => {
                self.problem(
                    line,
                    &object,
                    "price is missing".into(),
                    "add price = <amount in the catalog's currency>",
                );
                0.0
            }
        };
        let watts = p.watts.map_or(0.0, |v| {
            self.amount(line, &object, "watts", v, crate::limits::PART_WATTS)
        });
        (name, price, watts)
    }

    /// A part's `key` (price or watts): finite, 0 or more, and within
    /// `limit`; 0 after a problem.
    fn amount(
        &mut self,
        line: Option<usize>,
        object: &str,
        key: &str,
        v: f64,
        limit: crate::limits::Limit,
    ) -> f64 {
        if !v.is_finite() || v < 0.0 {
            self.problem(
                line,
                object,
                format!("{key} is {v}"),
                &format!("set {key} to 0 or more"),
            );
            0.0
        } else if v > limit.max as f64 {
            self.problem(
                line,
                object,
                format!(
                    "{key} is {v}, above the limit of {} ({})",
                    limit.max, limit.why
                ),
                &format!("give the {key} of one part"),
            );
            0.0
        } else {
            v
        }
    }

    /// A required whole number of at least 1.
    fn count(&mut self, p: &RawPart, table: &str, key: &str, v: Option<u32>, fix: &str) -> u32 {
        let line = self.line(&p.name);
        let object = format!("{table} {:?}", p.name.get_ref().trim());
        match v {
            Some(v) if v >= 1 => v,
            Some(v) => {
                self.problem(line, &object, format!("{key} is {v}"), fix);
                1
            }
            None => {
                self.problem(line, &object, format!("{key} is missing"), fix);
                1
            }
        }
    }

    /// Keys a table does not use.
    fn unused(&mut self, p: &RawPart, table: &str, keys: &[(&str, bool)]) {
        let line = self.line(&p.name);
        let object = format!("{table} {:?}", p.name.get_ref().trim());
        for (key, present) in keys {
            if *present {
                self.problem(
                    line,
                    &object,
                    format!("{key} does not apply to a {table}"),
                    "remove it",
                );
            }
        }
    }

    fn reach(&mut self, p: &RawPart, table: &str) -> f64 {
        let line = self.line(&p.name);
        let object = format!("{table} {:?}", p.name.get_ref().trim());
        match p.reach_m {
            Some(v) if v.is_finite() && v > 0.0 => v,
            Some(v) => {
                self.problem(
                    line,
                    &object,
                    format!("reach_m is {v}"),
                    "set reach_m to the longest run in metres",
                );
                0.0
            }
            None => {
                self.problem(
                    line,
                    &object,
                    "reach_m is missing".into(),
                    "add reach_m = <longest run in metres>",
                );
                0.0
            }
        }
    }

    fn positive(&mut self, v: Option<&Spanned<f64>>, key: &str, default: f64, zero: bool) -> f64 {
        match v {
            None => default,
            Some(s) => {
                let x = *s.get_ref();
                // An energy price or a period beyond any real one only
                // pushes the purchase program's costs out of floating point.
                let most = if key == "years" { 100.0 } else { 1000.0 };
                if x.is_finite() && (x > 0.0 || zero && x == 0.0) && x <= most {
                    x
                } else if x.is_finite() && x > most {
                    let line = self.line(s);
                    self.problem(
                        line,
                        "catalog",
                        format!("{key} is {x}, above {most}"),
                        &format!("set {key} to at most {most}"),
                    );
                    default
                } else {
                    let line = self.line(s);
                    let bound = if zero { "0 or more" } else { "more than 0" };
                    self.problem(
                        line,
                        "catalog",
                        format!("{key} is {x}"),
                        &format!("set {key} to {bound}"),
                    );
                    default
                }
            }
        }
    }
}

fn check(raw: RawCatalog, text: &str, file: &str) -> Result<Catalog> {
    let mut c = Checker {
        lines: text::LineIndex::new(text),
        problems: Vec::new(),
    };
    let mut names = Vec::new();
    let price_per_kwh = raw
        .price_per_kwh
        .as_ref()
        .map(|_| c.positive(raw.price_per_kwh.as_ref(), "price_per_kwh", 0.0, true));
    let years = c.positive(raw.years.as_ref(), "years", 5.0, false);
    let in_rack_m = c.positive(raw.in_rack_m.as_ref(), "in_rack_m", 3.0, false);
    let between_racks_m = c.positive(raw.between_racks_m.as_ref(), "between_racks_m", 30.0, false);
    let same_row_m = c.positive(
        raw.same_row_m.as_ref(),
        "same_row_m",
        between_racks_m,
        false,
    );
    let between_rows_m = c.positive(
        raw.between_rows_m.as_ref(),
        "between_rows_m",
        between_racks_m,
        false,
    );

    let mut switches = Vec::new();
    for p in &raw.switch {
        let (name, price, watts) = c.part("switch", p, &mut names);
        let mut ports = c.count(p, "switch", "ports", p.ports, "set ports to the port count");
        if let Err(why) = crate::limits::PORTS_PER_SWITCH.check(u64::from(ports)) {
            let line = c.line(&p.name);
            let object = format!("switch {:?}", p.name.get_ref().trim());
            c.problem(
                line,
                &object,
                why,
                "set ports to the port count of one switch",
            );
            ports = 1;
        }
        let gbps = c.count(p, "switch", "gbps", p.gbps, "set gbps to the port speed");
        let split = p.split.unwrap_or(1);
        if split == 0 || split > ports / 2 && split > 1 || split > 2 && split % 2 == 1 {
            c.problem(
                c.line(&p.name),
                &format!("switch {name:?}"),
                format!("split is {split}"),
                "set split to 1 (no virtual switches) or an even number of at most half the ports",
            );
        }
        c.unused(
            p,
            "switch",
            &[
                ("gpus", p.gpus.is_some()),
                ("nics", p.nics.is_some()),
                ("kind", p.kind.is_some()),
                ("breakout", p.breakout.is_some()),
                ("reach_m", p.reach_m.is_some()),
            ],
        );
        switches.push(SwitchModel {
            name,
            ports,
            gbps,
            price,
            watts,
            split: split.max(1),
        });
    }
    let mut nics = Vec::new();
    for p in &raw.nic {
        let (name, price, watts) = c.part("nic", p, &mut names);
        let gbps = c.count(p, "nic", "gbps", p.gbps, "set gbps to the port speed");
        c.unused(
            p,
            "nic",
            &[
                ("ports", p.ports.is_some()),
                ("split", p.split.is_some()),
                ("gpus", p.gpus.is_some()),
                ("nics", p.nics.is_some()),
                ("kind", p.kind.is_some()),
                ("breakout", p.breakout.is_some()),
                ("reach_m", p.reach_m.is_some()),
            ],
        );
        nics.push(NicModel {
            name,
            gbps,
            price,
            watts,
        });
    }
    let mut gpus = Vec::new();
    for p in &raw.gpu {
        let (name, price, watts) = c.part("gpu", p, &mut names);
        c.unused(
            p,
            "gpu",
            &[
                ("ports", p.ports.is_some()),
                ("gbps", p.gbps.is_some()),
                ("split", p.split.is_some()),
                ("gpus", p.gpus.is_some()),
                ("nics", p.nics.is_some()),
                ("kind", p.kind.is_some()),
                ("breakout", p.breakout.is_some()),
                ("reach_m", p.reach_m.is_some()),
            ],
        );
        gpus.push(GpuModel { name, price, watts });
    }
    let mut servers = Vec::new();
    for p in &raw.server {
        let (name, price, watts) = c.part("server", p, &mut names);
        let g = c.count(p, "server", "gpus", p.gpus, "set gpus to the GPU slots");
        let n = c.count(p, "server", "nics", p.nics, "set nics to the NIC slots");
        c.unused(
            p,
            "server",
            &[
                ("ports", p.ports.is_some()),
                ("gbps", p.gbps.is_some()),
                ("split", p.split.is_some()),
                ("kind", p.kind.is_some()),
                ("breakout", p.breakout.is_some()),
                ("reach_m", p.reach_m.is_some()),
            ],
        );
        servers.push(ServerModel {
            name,
            gpus: g,
            nics: n,
            price,
            watts,
        });
    }
    let mut cables = Vec::new();
    for p in &raw.cable {
        let (name, price, watts) = c.part("cable", p, &mut names);
        let gbps = c.count(p, "cable", "gbps", p.gbps, "set gbps to the line rate");
        let reach_m = c.reach(p, "cable");
        let kind = p.kind.unwrap_or_else(|| {
            c.problem(
                c.line(&p.name),
                &format!("cable {name:?}"),
                "kind is missing".into(),
                "add kind = \"dac\", \"aoc\" or \"fibre\"",
            );
            CableKind::Dac
        });
        c.unused(
            p,
            "cable",
            &[
                ("ports", p.ports.is_some()),
                ("split", p.split.is_some()),
                ("gpus", p.gpus.is_some()),
                ("nics", p.nics.is_some()),
            ],
        );
        let breakout = p.breakout.as_ref().and_then(|text| {
            match crate::plan::Breakout::parse(text, gbps) {
                Ok(b) => Some(b),
                Err(e) => {
                    c.problem(
                        c.line(&p.name),
                        &format!("cable {name:?}"),
                        e,
                        "write breakout as lanes x lane speed that make up the cable's gbps, such as breakout = \"2x200G\" with gbps = 400",
                    );
                    None
                }
            }
        });
        cables.push(CableModel {
            name,
            kind,
            gbps,
            reach_m,
            price,
            watts,
            breakout,
        });
    }
    let mut optics = Vec::new();
    for p in &raw.optic {
        let (name, price, watts) = c.part("optic", p, &mut names);
        let gbps = c.count(p, "optic", "gbps", p.gbps, "set gbps to the line rate");
        let reach_m = c.reach(p, "optic");
        c.unused(
            p,
            "optic",
            &[
                ("ports", p.ports.is_some()),
                ("split", p.split.is_some()),
                ("gpus", p.gpus.is_some()),
                ("nics", p.nics.is_some()),
                ("kind", p.kind.is_some()),
                ("breakout", p.breakout.is_some()),
            ],
        );
        optics.push(OpticModel {
            name,
            gbps,
            reach_m,
            price,
            watts,
        });
    }
    if switches.is_empty() {
        c.problem(
            None,
            "catalog",
            "there is no switch".into(),
            "add a [[switch]] table with name, ports, gbps and price",
        );
    }
    if !c.problems.is_empty() {
        return Err(Error::Invalid {
            file: file.to_string(),
            what: "catalog",
            problems: c.problems,
        });
    }
    Ok(Catalog {
        name: file.to_string(),
        currency: raw.currency.unwrap_or_else(|| "USD".into()),
        note: raw.note,
        price_per_kwh,
        years,
        in_rack_m,
        between_racks_m,
        same_row_m,
        between_rows_m,
        switches,
        nics,
        gpus,
        servers,
        cables,
        optics,
    })
}
