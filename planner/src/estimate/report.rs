//! `planner simulate`'s reports: the tables of estimates (a grid per plan
//! and size, or per topology and size for a scale sweep), the JSON rows,
//! and `--steps`: the schedule behind each estimate as a table, CSV or
//! JSON ([`Schedule`]). The binary turns flags into a [`Simulated`] and
//! prints what these return.

use std::fmt::Write as _;

use serde::Serialize;

use super::{
    Algorithm, Estimate, Method, Options, PacketRun, PacketStep, Params, Policy, Row, StepSummary,
    Turnaround, format_size, packet_steps, steps_and_turnaround,
};
use crate::checked::CheckedPlan;
use crate::error::Result;
use crate::plan::Topology;

/// What `planner simulate` computed, ready to render.
#[derive(Debug, Clone)]
pub struct Simulated {
    /// A scale sweep (plans built per node count) rather than given plans.
    pub scale: bool,
    /// The plans simulated.
    pub plans: Vec<CheckedPlan>,
    /// How tables and notes name each plan.
    pub labels: Vec<String>,
    /// Every estimate with the index of its plan.
    pub estimates: Vec<(usize, Estimate)>,
    /// Notes printed after the tables.
    pub notes: Vec<String>,
}

/// A JSON row: the contract's fields, and the seed range when more than
/// one seed was simulated.
#[derive(Debug, Serialize)]
pub struct JsonRow {
    #[serde(flatten)]
    row: Row,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_min_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_max_us: Option<f64>,
}

impl JsonRow {
    /// The row of `e`.
    pub fn of(e: &Estimate) -> Self {
        let range = e.seeds > 1;
        Self {
            row: e.row(),
            time_min_us: range.then_some(e.time_min_us),
            time_max_us: range.then_some(e.time_max_us),
        }
    }
}

/// How the table footer names a method.
fn method_words(m: Method) -> &'static str {
    match m {
        Method::Event => "event-driven (max-min fair flows)",
        Method::Fast => "step-synchronous (for screening)",
        Method::ClosedForm => "closed form",
        Method::Packet => "packet-level (queues, PFC, ECN, DCQCN)",
    }
}

/// Aligned columns: the first row is the header, the first `left` columns
/// left-aligned, the rest right-aligned.
fn align(rows: &[Vec<String>], left: usize) -> String {
    let Some((head, body)) = rows.split_first() else {
        return String::new();
    };
    let right: Vec<usize> = (left..head.len()).collect();
    let mut t = crate::text::Table::new(head.iter().cloned()).right(&right);
    for r in body {
        t.row(r.iter().cloned());
    }
    t.render()
}

/// One table: rows keyed by `key`, a group of columns per algorithm.
fn grid(
    title: &str,
    row_head: &str,
    keys: &[(String, Vec<Option<&Estimate>>)],
    algorithms: &[Algorithm],
    method: Method,
) -> String {
    let seeds = keys
        .iter()
        .flat_map(|(_, es)| es.iter().flatten())
        .any(|e| e.seeds > 1);
    let closed = method != Method::ClosedForm;
    let mut per_alg = vec!["time µs".to_string()];
    if seeds {
        per_alg.push("min..max µs".to_string());
    }
    if closed {
        per_alg.push("closed µs".to_string());
    }
    per_alg.push("algbw Gbps".to_string());
    per_alg.push("busbw Gbps".to_string());
    let mut head = vec![row_head.to_string()];
    let mut group = vec![String::new()];
    for a in algorithms {
        for (k, h) in per_alg.iter().enumerate() {
            head.push(h.clone());
            group.push(if k + 1 == per_alg.len() {
                a.as_str().to_string()
            } else {
                String::new()
            });
        }
    }
    let mut rows = vec![group, head];
    for (key, es) in keys {
        let mut r = vec![key.clone()];
        for e in es {
            match e {
                Some(e) => {
                    r.push(format!("{:.1}", e.time_us));
                    if seeds {
                        r.push(format!("{:.1}..{:.1}", e.time_min_us, e.time_max_us));
                    }
                    if closed {
                        r.push(format!("{:.1}", e.closed_form_us));
                    }
                    r.push(format!("{:.2}", e.algbw_gbps));
                    r.push(format!("{:.2}", e.busbw_gbps));
                }
                None => r.extend(per_alg.iter().map(|_| "-".to_string())),
            }
        }
        rows.push(r);
    }
    format!("{title}\n{}", align(&rows, 1))
}

/// The tables of estimates: one grid per plan (sizes down, a group of
/// columns per algorithm), or for a scale sweep one per topology and size
/// (node counts down), then a line naming the method.
pub fn table(
    sim: &Simulated,
    algorithms: &[Algorithm],
    sizes: &[u64],
    options: &Options,
) -> String {
    let method = options.method;
    let mut out = String::new();
    let found = |plan: Option<usize>, a: Algorithm, pred: &dyn Fn(&Estimate) -> bool| {
        sim.estimates
            .iter()
            .find(|(i, e)| plan.is_none_or(|p| p == *i) && e.algorithm == a && pred(e))
            .map(|(_, e)| e)
    };
    if sim.scale {
        for t in [Topology::BiGraph, Topology::FatTree] {
            let algs: Vec<Algorithm> = algorithms
                .iter()
                .copied()
                .filter(|a| {
                    sim.estimates
                        .iter()
                        .any(|(_, e)| e.topology == t && e.algorithm == *a)
                })
                .collect();
            if algs.is_empty() {
                continue;
            }
            for &size in sizes {
                let keys: Vec<(String, Vec<Option<&Estimate>>)> = sim
                    .plans
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.topology == t)
                    .map(|(i, p)| {
                        let es = algs
                            .iter()
                            .map(|&a| found(Some(i), a, &|e| e.size_bytes == size))
                            .collect();
                        (format!("{} {}", p.sub_node_list.len(), p.describe()), es)
                    })
                    .collect();
                let name = match t {
                    Topology::BiGraph => "BiGraph",
                    Topology::FatTree => "Fat-tree",
                    Topology::RailOptimized => "Rail-optimized",
                    Topology::Hpn => "HPN",
                };
                out.push_str(&grid(
                    &format!("{name}, {} messages:", format_size(size)),
                    "sub-nodes",
                    &keys,
                    &algs,
                    method,
                ));
                out.push('\n');
            }
        }
    } else {
        for i in 0..sim.plans.len() {
            let mine: Vec<&Estimate> = sim
                .estimates
                .iter()
                .filter(|(p, _)| *p == i)
                .map(|(_, e)| e)
                .collect();
            let Some(first) = mine.first() else { continue };
            let algs: Vec<Algorithm> = algorithms
                .iter()
                .copied()
                .filter(|a| mine.iter().any(|e| e.algorithm == *a))
                .collect();
            let keys: Vec<(String, Vec<Option<&Estimate>>)> = sizes
                .iter()
                .map(|&size| {
                    let es = algs
                        .iter()
                        .map(|&a| found(Some(i), a, &|e| e.size_bytes == size))
                        .collect();
                    (format_size(size), es)
                })
                .collect();
            out.push_str(&grid(
                &format!(
                    "{} ({}), {} rank{}:",
                    sim.labels[i],
                    first.design,
                    first.ranks,
                    if first.ranks == 1 { "" } else { "s" }
                ),
                "size",
                &keys,
                &algs,
                method,
            ));
            out.push('\n');
        }
    }
    let seeds = options.seeds.len();
    let _ = write!(out, "Method: {}", method_words(method));
    if method != Method::ClosedForm && options.routing != Policy::Ecmp {
        let _ = write!(out, ", routing {}", options.routing.describe());
        out.push_str("; closed µs: the closed-form model");
    } else if method != Method::ClosedForm {
        if seeds > 1 {
            let _ = write!(out, ", median of ECMP seeds 0..{}", seeds - 1);
        } else {
            out.push_str(", ECMP seed 0");
        }
        out.push_str("; closed µs: the closed-form model");
    }
    out.push_str(".\n");
    out
}

/// The schedule behind one estimate.
#[derive(Debug, Serialize)]
pub struct Schedule<'a> {
    pub algorithm: Algorithm,
    pub topology: Topology,
    pub plan: &'a str,
    pub design: &'a str,
    pub ranks: usize,
    pub size_bytes: u64,
    pub routing: Policy,
    pub seed: u64,
    /// The estimate's time (its method), µs.
    pub time_us: f64,
    pub method: Method,
    /// The sum of the step times below (step-synchronous), µs.
    pub steps_time_us: f64,
    pub steps: Vec<StepSummary>,
    /// The trees' gradient turnaround: event-driven for the event-driven
    /// method, step-synchronous otherwise (its `timeline` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turnaround: Option<Turnaround>,
    /// With --method packet: the packet-level run's totals and per-step
    /// figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketRun>,
}

/// The schedule behind every estimate of `sim` (`simulate --steps`),
/// step by step as the step-synchronous mode sees it with the first seed of
/// `options`, with the packet-level run for `--method packet`; `ranks` as
/// the estimates were given them (a scale sweep uses every rank).
pub fn schedules<'s>(
    sim: &'s Simulated,
    ranks: Option<usize>,
    params: &Params,
    options: &Options,
) -> Result<Vec<Schedule<'s>>> {
    let seed = options.seeds.first().copied().unwrap_or(0);
    let mut schedules = Vec::new();
    for (i, e) in &sim.estimates {
        let plan = &sim.plans[*i];
        let ranks = if sim.scale { None } else { ranks };
        let (steps, turnaround) = steps_and_turnaround(
            plan,
            e.algorithm,
            ranks,
            e.size_bytes,
            params,
            seed,
            options.routing,
            e.method,
        )?;
        let steps_time_us = steps.iter().map(|s| s.time_us).sum();
        let packet = match e.method {
            Method::Packet => Some(packet_steps(
                plan,
                e.algorithm,
                ranks,
                e.size_bytes,
                params,
                seed,
                options.routing,
            )?),
            _ => None,
        };
        schedules.push(Schedule {
            algorithm: e.algorithm,
            topology: e.topology,
            plan: &plan.name,
            design: &e.design,
            ranks: e.ranks,
            size_bytes: e.size_bytes,
            routing: options.routing,
            seed,
            time_us: e.time_us,
            method: e.method,
            steps_time_us,
            steps,
            turnaround,
            packet,
        });
    }
    Ok(schedules)
}

/// The schedules as CSV: a row per step, the packet-level columns after
/// the others and only when some schedule has them.
pub fn steps_csv(schedules: &[Schedule<'_>]) -> String {
    // The packet-level columns come after the others, and only
    // with --method packet.
    let packet = schedules.iter().any(|s| s.packet.is_some());
    let mut out = String::from(
        "algorithm,topology,ranks,size_bytes,step,phase,level,flows,max_bytes,max_link_flows,max_latency_us,time_us",
    );
    if packet {
        out.push_str(",end_us,max_queue_bytes,pfc_pauses,paused_us,ecn_marks,cnps");
    }
    out.push('\n');
    for s in schedules {
        for st in &s.steps {
            let _ = write!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                s.algorithm.as_str(),
                s.topology.as_str(),
                s.ranks,
                s.size_bytes,
                st.step,
                st.phase.as_str(),
                st.level.map_or(String::new(), |l| l.to_string()),
                st.flows,
                st.max_bytes,
                st.max_link_flows,
                st.max_latency_us,
                st.time_us
            );
            if let Some(p) = s.packet.as_ref().and_then(|p| p.steps.get(st.step)) {
                let _ = write!(
                    out,
                    ",{},{},{},{},{},{}",
                    p.end_us, p.max_queue_bytes, p.pfc_pauses, p.paused_us, p.ecn_marks, p.cnps
                );
            } else if packet {
                out.push_str(",,,,,,");
            }
            out.push('\n');
        }
    }
    out
}

/// True when two steps' packet-level figures (other than when they
/// ended) are the same, or neither has any.
fn same_packet(a: Option<&PacketStep>, b: Option<&PacketStep>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.max_queue_bytes == b.max_queue_bytes
                && a.pfc_pauses == b.pfc_pauses
                && a.paused_us == b.paused_us
                && a.ecn_marks == b.ecn_marks
                && a.cnps == b.cnps
        }
        (None, None) => true,
        _ => false,
    }
}

/// The table of one schedule (`simulate --steps`): runs of identical
/// steps share a row.
pub fn steps_table(s: &Schedule<'_>) -> String {
    let mut out = format!(
        "{} on {} ({}), {} ranks, {}: ",
        s.algorithm.as_str(),
        s.plan,
        s.design,
        s.ranks,
        format_size(s.size_bytes),
    );
    let routed = if s.routing == Policy::Ecmp {
        format!("ECMP seed {}", s.seed)
    } else {
        format!("routing {}", s.routing)
    };
    let _ = match s.method {
        Method::Fast => writeln!(
            out,
            "{:.1} µs step-synchronous over {} steps ({routed})",
            s.time_us,
            s.steps.len(),
        ),
        m => writeln!(
            out,
            "{:.1} µs {}; the {} steps below take {:.1} µs step-synchronous ({routed})",
            s.time_us,
            match m {
                Method::Event => "event-driven",
                Method::Packet => "packet-level",
                _ => "closed form",
            },
            s.steps.len(),
            s.steps_time_us,
        ),
    };
    if let Some(p) = &s.packet {
        let t = &p.stats;
        let _ = writeln!(
            out,
            "Packet-level: {} packets; deepest queue {} B; {} PFC pauses, {:.1} µs paused in all; {} ECN marks, {} CNPs; {} packets over buffer_kib.",
            t.packets,
            t.max_queue_bytes,
            t.pfc_pauses,
            t.paused_us,
            t.ecn_marks,
            t.cnps,
            t.buffer_overruns
        );
    }
    let packet_of = |k: usize| s.packet.as_ref().and_then(|p| p.steps.get(k));
    let levels = s.steps.iter().any(|st| st.level.is_some());
    let mut head = vec!["steps", "phase"];
    if levels {
        head.push("level");
    }
    head.extend([
        "flows",
        "bytes/flow",
        "max flows/link",
        "latency µs",
        "µs/step",
        "total µs",
    ]);
    if s.packet.is_some() {
        head.extend([
            "packet end µs",
            "max queue B",
            "PFC pauses",
            "paused µs",
            "ECN marks",
            "CNPs",
        ]);
    }
    let mut rows = vec![head.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    let same = |a: &StepSummary, b: &StepSummary| {
        a.phase == b.phase
            && a.level == b.level
            && a.flows == b.flows
            && a.max_bytes == b.max_bytes
            && a.max_link_flows == b.max_link_flows
            && a.max_latency_us == b.max_latency_us
            && a.time_us == b.time_us
            && same_packet(packet_of(a.step), packet_of(b.step))
    };
    let mut k = 0;
    while k < s.steps.len() {
        let first = &s.steps[k];
        let mut end = k + 1;
        while end < s.steps.len() && same(first, &s.steps[end]) {
            end += 1;
        }
        let count = end - k;
        let label = if count == 1 {
            first.step.to_string()
        } else {
            format!("{}-{} (x{count})", first.step, s.steps[end - 1].step)
        };
        let mut r = vec![label, first.phase.as_str().to_string()];
        if levels {
            r.push(first.level.map_or("-".to_string(), |l| l.to_string()));
        }
        r.extend([
            first.flows.to_string(),
            first.max_bytes.to_string(),
            first.max_link_flows.to_string(),
            format!("{:.1}", first.max_latency_us),
            format!("{:.2}", first.time_us),
            format!("{:.1}", first.time_us * count as f64),
        ]);
        if s.packet.is_some() {
            // The run's figures are the same for every step of it (its
            // last step's end).
            let (p, last) = (packet_of(first.step), packet_of(s.steps[end - 1].step));
            r.extend(match (p, last) {
                (Some(p), Some(last)) => [
                    format!("{:.1}", last.end_us),
                    p.max_queue_bytes.to_string(),
                    p.pfc_pauses.to_string(),
                    format!("{:.1}", p.paused_us),
                    p.ecn_marks.to_string(),
                    p.cnps.to_string(),
                ],
                _ => std::array::from_fn(|_| "-".to_string()),
            });
        }
        rows.push(r);
        k = end;
    }
    let left = if levels { 3 } else { 2 };
    out.push_str(&align(&rows, left));
    if let Some(t) = &s.turnaround {
        let _ = writeln!(
            out,
            "Gradient turnaround (reduction start to broadcast at every rank, {}) over {} chunks: first {:.1} µs, mean {:.1} µs, max {:.1} µs",
            t.timeline.as_str(),
            t.chunks,
            t.first_us,
            t.mean_us,
            t.max_us
        );
    }
    out
}
