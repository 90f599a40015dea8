//! The report of a checked rank table: per-step link loads grouped for
//! people, as `planner verify-ranks` prints it.

use std::borrow::Cow;

use serde::Serialize;

use crate::algorithm::RankSchedule;
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::ranks::{Algorithm, Avoid, Engine, Network, Policy, RankTable, Request, StepLoad};
use crate::text::Table;

/// Consecutive steps of one phase with the same loads, for reports: a
/// ring's 2(P-1) steps are alike and read as two rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepGroup {
    /// `reduce-scatter` or `all-gather` (or the fold phases).
    pub phase: crate::ranks::Phase,
    /// First step of the group, from 1 within the phase.
    pub first_step: usize,
    /// Last step of the group.
    pub last_step: usize,
    /// Rank distance (halving-doubling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
    /// Directed flows per step.
    pub flows: usize,
    /// Flows per step that stay inside a server (rail-optimized plans, or
    /// two ranks of one NIC).
    #[serde(default, skip_serializing_if = "crate::ranks::verify::is_zero")]
    pub intra_server_flows: usize,
    /// Of `intra_server_flows`, those between two GPUs of one NVLink or
    /// NVSwitch domain (by the ranks' GPUs); the others go through PCIe.
    #[serde(default, skip_serializing_if = "crate::ranks::verify::is_zero")]
    pub nvlink_flows: usize,
    /// Flows per step counted with another flow between the same two NICs
    /// (one rank per GPU on a shared NIC).
    #[serde(default, skip_serializing_if = "crate::ranks::verify::is_zero")]
    pub shared_nic_flows: usize,
    /// Most flows on one directed inter-switch link.
    pub max_load: usize,
    /// Directed inter-switch links carrying that many.
    pub max_load_links: usize,
    /// With `spray`: the flows' shares on the busiest link (`max_load` is
    /// this rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_share: Option<f64>,
    /// True when a NIC link carries more than one flow.
    pub access_overloaded: bool,
}

/// Groups consecutive alike steps; `nvlink` is every step's
/// [`crate::ranks::gpus::nvlink_flows`].
pub fn group_steps(steps: &[StepLoad], nvlink: &[usize]) -> Vec<StepGroup> {
    let mut out: Vec<StepGroup> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let nvlink_flows = nvlink.get(i).copied().unwrap_or(0);
        if let Some(g) = out.last_mut()
            && g.phase == s.phase
            && g.distance.is_none()
            && s.distance.is_none()
            && g.flows == s.flows
            && g.intra_server_flows == s.intra_server_flows
            && g.nvlink_flows == nvlink_flows
            && g.shared_nic_flows == s.shared_nic_flows
            && g.max_load == s.max_load
            && g.max_load_links == s.max_load_links
            && g.max_share == s.max_share
            && g.access_overloaded == s.access_overloaded
            && g.last_step + 1 == s.step
        {
            g.last_step = s.step;
            continue;
        }
        out.push(StepGroup {
            phase: s.phase,
            first_step: s.step,
            last_step: s.step,
            distance: s.distance,
            flows: s.flows,
            intra_server_flows: s.intra_server_flows,
            nvlink_flows,
            shared_nic_flows: s.shared_nic_flows,
            max_load: s.max_load,
            max_load_links: s.max_load_links,
            max_share: s.max_share,
            access_overloaded: s.access_overloaded,
        });
    }
    out
}

/// Loads of one rank order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderLoads {
    /// `hdrm`, `hd`, `ring`, or the rank file's name.
    pub order: String,
    /// Most flows on one directed inter-switch link over all steps.
    pub worst_load: usize,
    /// With `spray`: the largest share of flows on one link over all
    /// steps (`worst_load` is this rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_share: Option<f64>,
    /// Step groups.
    pub steps: Vec<StepGroup>,
}

/// The result of `planner verify-ranks`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    /// The plan's name.
    pub plan: String,
    /// `BiGraph 4x16`, ...
    pub design: String,
    /// `halving-doubling` or `ring`.
    pub schedule: &'static str,
    /// The engine whose schedule was checked; absent for `probe`.
    #[serde(skip_serializing_if = "Engine::is_probe")]
    pub engine: Engine,
    /// Ranks in the job.
    pub ranks: usize,
    /// The routing policy the flows were routed by: `ecmp`, `dmodk` or
    /// `spray`.
    pub routing: Policy,
    /// The ECMP hash seed (moves only `ecmp` routes).
    pub seed: u64,
    /// The links and switches routed around, as given.
    pub avoid: Vec<Avoid>,
    /// True when no step puts two flows on one directed inter-switch link.
    pub congestion_free: bool,
    /// When the table was searched for: a load no table can beat on this
    /// fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<usize>,
    /// The table checked.
    pub table: OrderLoads,
    /// The same schedule in plan order (what a scheduler does without the
    /// topology), when the table checked is not already that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_order: Option<OrderLoads>,
}

/// The loads of `table` whose ranks run on `gpus` (rank -> GPU), under
/// `engine`'s schedule.
fn loads(
    plan: &CheckedPlan,
    order: String,
    (table, engine): (&RankTable, Engine),
    gpus: &[Option<usize>],
    steps: &[StepLoad],
) -> Result<OrderLoads> {
    let schedule = engine.schedule(table.algorithm, table.ranks.len())?;
    let visit = engine.ring_order(plan, &table.ranks);
    let nvlink = crate::ranks::gpus::nvlink_flows(
        plan,
        &crate::ranks::in_order(&visit, &table.ranks),
        &crate::ranks::in_order(&visit, gpus),
        &schedule,
    );
    Ok(OrderLoads {
        order,
        worst_load: steps.iter().map(|s| s.max_load).max().unwrap_or(0),
        worst_share: steps.iter().filter_map(|s| s.max_share).reduce(f64::max),
        steps: group_steps(steps, &nvlink),
    })
}

/// What [`verify_report`] checks a table against: the engine that runs
/// it, the links and switches out of service, and the routing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checked<'a> {
    /// The engine whose schedule (its fold, its ring order) is routed.
    pub engine: Engine,
    /// Links and switches routed around.
    pub avoid: &'a [Avoid],
    /// ECMP hash seed.
    pub seed: u64,
    /// The routing policy.
    pub routing: Policy,
}

/// A report [`verify_report`] is asked for: the table, what it is called,
/// its ranks' GPUs, how it is checked, and what is known of it already.
#[derive(Debug, Clone)]
pub struct VerifyRequest<'a> {
    /// The table (rank -> sub-node).
    pub table: &'a RankTable,
    /// Its name in the report.
    pub order: String,
    /// Every rank's GPU (rank -> GPU by `gpu_index` numbering, as
    /// [`read_rank_table`] reads it), which decides which flows inside a
    /// server join two GPUs of one NVLink domain; `None`: the k-th rank
    /// on a NIC runs on its k-th GPU ([`crate::ranks::rank_gpus`]).
    pub gpus: Option<&'a [Option<usize>]>,
    /// The engine, avoided links and switches, seed and routing.
    pub how: Checked<'a>,
    /// The table's proof, where it was made already.
    pub known: Known<'a>,
}

impl<'a> VerifyRequest<'a> {
    /// `table`, named `order`, checked as `how` says, with nothing known of
    /// it: its ranks on their NICs' GPUs in order, routed afresh.
    pub fn new(table: &'a RankTable, order: String, how: Checked<'a>) -> Self {
        Self {
            table,
            order,
            gpus: None,
            how,
            known: Known::Nothing,
        }
    }
}

/// What is known of a table's proof before its report.
#[derive(Debug, Clone)]
pub enum Known<'a> {
    /// Nothing: the table is routed.
    Nothing,
    /// The table was made and proved by [`crate::ranks::plan_gpu_ranks`]
    /// (`steps`, its [`Outcome::steps`], asked with the engine, `--avoid`
    /// and seed of the request's `how`), on `net` where given: the route
    /// graph of the plan avoiding `how.avoid` ([`Network::avoiding`]),
    /// else one is built. The steps are the loads
    /// [`crate::ranks::verify_engine`] finds when `how` routes by the ECMP
    /// hash and the engine's ring order keeps the table as it is (the
    /// same ranks, schedule, fabric and seed), and are then taken as they
    /// are instead of being routed a second time; otherwise the table is
    /// routed again.
    Proven {
        /// The route graph the table was made on, if the caller has it.
        net: Option<&'a Network<'a>>,
        /// The table's loads under the ECMP hash.
        steps: Vec<StepLoad>,
    },
    /// [`Known::Proven`] for the table `request` made on `net`
    /// ([`crate::ranks::plan_gpu_ranks_on`]): where the plan order beside
    /// it is what `request` asked already ([`Request::asks_as`]:
    /// `verify-ranks --algorithm hd` or `ring`), the table is taken as the
    /// plan order instead of searching and proving it a second time.
    /// `verify-ranks` builds the route graph once for the search, the
    /// table's proof and the plan order's.
    Searched {
        /// The route graph the table was made on.
        net: &'a Network<'a>,
        /// The request the search answered.
        request: &'a Request,
        /// The table's loads under the ECMP hash, borrowed: a ring's
        /// are one per step (262,142 at 131,072 ranks), and each copy
        /// of them was a fifth of `verify-ranks --algorithm ring`'s
        /// page faults.
        steps: &'a [StepLoad],
    },
}

/// Verifies the request's table step by step on `plan` with the links and
/// switches its `how.avoid` names out of service, for what `how.engine`
/// really runs over the table ([`crate::ranks::verify_engine`]), and the
/// plan order beside it (skipping avoided switches) unless the table is
/// the plan order itself: the same engine's schedule over the ranks in
/// plan order, which is what a launcher that knows nothing of the fabric
/// gives it.
///
/// [`Outcome::steps`]: crate::ranks::Outcome::steps
pub fn verify_report(plan: &CheckedPlan, request: VerifyRequest<'_>) -> Result<VerifyReport> {
    let VerifyRequest {
        table,
        order,
        gpus,
        how,
        known,
    } = request;
    let found;
    let gpus = match gpus {
        Some(gpus) => gpus,
        None => {
            found = crate::ranks::rank_gpus(plan, &table.ranks);
            &found
        }
    };
    let how = &how;
    match known {
        Known::Nothing => {
            check_table(plan, table, gpus)?;
            let schedule = how.engine.schedule(table.algorithm, table.ranks.len())?;
            // One network routes the table and the plan order beside it.
            let net = plan.network_avoiding(how.avoid)?;
            let steps = crate::ranks::verify_scheduled(
                &net,
                plan,
                (table, how.engine, &schedule),
                how.seed,
                how.routing,
            )?;
            verify_report_known(&net, plan, (table, gpus, order), how, &steps, None)
        }
        Known::Proven {
            net: Some(net),
            steps,
        } => {
            let steps = proven_steps(net, plan, table, gpus, how, &steps)?;
            verify_report_known(net, plan, (table, gpus, order), how, &steps, None)
        }
        Known::Proven { net: None, steps } => {
            check_table(plan, table, gpus)?;
            let net = plan.network_avoiding(how.avoid)?;
            let steps = proven_steps(&net, plan, table, gpus, how, &steps)?;
            verify_report_known(&net, plan, (table, gpus, order), how, &steps, None)
        }
        Known::Searched {
            net,
            request,
            steps,
        } => {
            let searched = Searched {
                request,
                table,
                steps,
            };
            let steps = proven_steps(net, plan, table, gpus, how, steps)?;
            verify_report_known(net, plan, (table, gpus, order), how, &steps, Some(searched))
        }
    }
}

/// The loads of `table` as `how` routes it, from `steps`, its loads under
/// the ECMP hash, where they are the same (see [`Known::Proven`]).
fn proven_steps<'s>(
    net: &Network<'_>,
    plan: &CheckedPlan,
    table: &RankTable,
    gpus: &[Option<usize>],
    how: &Checked<'_>,
    steps: &'s [StepLoad],
) -> Result<Cow<'s, [StepLoad]>> {
    crate::ranks::same_network(net, plan, how.avoid)?;
    check_table(plan, table, gpus)?;
    let same = how.routing == Policy::Ecmp
        && (how.engine.ring_order(plan, &table.ranks).iter())
            .enumerate()
            .all(|(i, &r)| i == r);
    if same {
        Ok(Cow::Borrowed(steps))
    } else {
        crate::ranks::verify_engine_on(net, plan, table, how.engine, how.seed, how.routing)
            .map(Cow::Owned)
    }
}

/// A table a search made, with the request it answers and its loads under
/// the ECMP hash.
struct Searched<'r> {
    request: &'r Request,
    table: &'r RankTable,
    steps: &'r [StepLoad],
}

/// Refuses a table with a bad rank, or with a GPU list of another length.
fn check_table(plan: &CheckedPlan, table: &RankTable, gpus: &[Option<usize>]) -> Result<()> {
    crate::ranks::check_ranks(plan, &table.ranks)?;
    if gpus.len() != table.ranks.len() {
        return Err(Error::Internal(format!(
            "{} GPUs given for {} ranks",
            gpus.len(),
            table.ranks.len()
        )));
    }
    Ok(())
}

/// The report of `table` (with its ranks' GPUs, named `order`), whose
/// per-step loads are `steps`, with the plan order beside it, routed on
/// `net`; the plan order is `searched`'s table where its request is the
/// plan order's.
fn verify_report_known(
    net: &Network<'_>,
    plan: &CheckedPlan,
    (table, gpus, order): (&RankTable, &[Option<usize>], String),
    how: &Checked<'_>,
    steps: &[StepLoad],
    searched: Option<Searched<'_>>,
) -> Result<VerifyReport> {
    let Checked {
        engine,
        avoid,
        seed,
        ..
    } = *how;
    let ring = table.algorithm.info().rank_schedule == Some(RankSchedule::Ring);
    let plain = if ring { Algorithm::Ring } else { Algorithm::Hd };
    let request = Request {
        algorithm: plain,
        ranks: Some(table.ranks.len()),
        avoid: avoid.to_vec(),
        seed,
        engine,
        ..Request::default()
    };
    // The plan order's table and its loads under the ECMP hash.
    let found;
    let baseline = match searched {
        Some(s) if s.request.asks_as(&request, s.table.ranks.len()) => (s.table, s.steps),
        _ => {
            found = crate::ranks::plan_gpu_ranks_on(net, plan, &request)?;
            (&found.table, &found.steps[..])
        }
    };
    report_beside(net, plan, (table, gpus, order), how, steps, baseline)
}

/// [`verify_report_known`] with the plan order's table and its loads
/// under the ECMP hash found.
fn report_beside(
    net: &Network<'_>,
    plan: &CheckedPlan,
    (table, gpus, order): (&RankTable, &[Option<usize>], String),
    how: &Checked<'_>,
    steps: &[StepLoad],
    (baseline, baseline_steps): (&RankTable, &[StepLoad]),
) -> Result<VerifyReport> {
    let Checked {
        engine,
        avoid,
        seed,
        routing,
    } = *how;
    let ring = table.algorithm.info().rank_schedule == Some(RankSchedule::Ring);
    let plain = if ring { Algorithm::Ring } else { Algorithm::Hd };
    let same_gpus = || crate::ranks::rank_gpus(plan, &baseline.ranks) == gpus;
    let plan_order = if baseline.ranks == table.ranks && same_gpus() {
        None
    } else {
        // The search counts loads under the ECMP hash; another policy
        // routes the plan order again.
        let steps = if routing == Policy::Ecmp {
            Cow::Borrowed(baseline_steps)
        } else {
            Cow::Owned(crate::ranks::verify_engine_on(
                net, plan, baseline, engine, seed, routing,
            )?)
        };
        let order = format!("{} in plan order", plain.as_str());
        let gpus = crate::ranks::rank_gpus(plan, &baseline.ranks);
        Some(loads(plan, order, (baseline, engine), &gpus, &steps)?)
    };
    let table_loads = loads(plan, order, (table, engine), gpus, steps)?;
    Ok(VerifyReport {
        plan: plan.name.clone(),
        design: plan.describe(),
        schedule: if ring { "ring" } else { "halving-doubling" },
        engine,
        ranks: table.ranks.len(),
        routing,
        seed,
        avoid: avoid.to_vec(),
        congestion_free: table_loads.worst_load <= 1,
        lower_bound: None,
        table: table_loads,
        plan_order,
    })
}

fn step_range(g: &StepGroup) -> String {
    if g.first_step == g.last_step {
        g.first_step.to_string()
    } else {
        format!("{}-{}", g.first_step, g.last_step)
    }
}

/// The report for people: a row per step (alike steps merged), the plan
/// order's figures beside, and a verdict.
pub fn render_verify(r: &VerifyReport) -> String {
    let routed = match r.routing {
        Policy::Ecmp => format!("ECMP seed {}", r.seed),
        Policy::DModK => "D-mod-K routing".to_string(),
        Policy::Spray => "packet spraying over every equal-cost path".to_string(),
    };
    let mut out = format!(
        "Per-step link loads of {} ({}) on {} ({}, {} ranks, {routed})\n",
        r.table.order, r.schedule, r.plan, r.design, r.ranks
    );
    if !r.engine.is_probe() {
        out.push_str(&format!(
            "Engine: {}, as it runs over this table: {}\n",
            r.engine,
            r.engine.runs()
        ));
    }
    if !r.avoid.is_empty() {
        let avoided: Vec<String> = r.avoid.iter().map(ToString::to_string).collect();
        out.push_str(&format!("Routed around: {}\n", avoided.join(", ")));
    }
    if let Some(p) = &r.plan_order {
        out.push_str(&format!(
            "Beside it: {}, the order a scheduler fills switch by switch\n",
            p.order
        ));
    }
    if r.routing == Policy::Spray {
        out.push_str("Load: flows' shares on the busiest directed inter-switch link (each flow spread evenly over its paths), and on how many links that happens\n\n");
    } else {
        out.push_str("Load: flows on the busiest directed inter-switch link, and on how many links that happens\n\n");
    }
    let load_text = |g: &StepGroup| match g.max_share {
        Some(share) => format!("{share:.2}"),
        None => g.max_load.to_string(),
    };
    let mut headers = vec!["phase", "step", "distance", "flows", "load", "links"];
    if r.plan_order.is_some() {
        headers.extend(["plan order: load", "links"]);
    }
    let right: Vec<usize> = (1..headers.len()).collect();
    let mut t = Table::new(headers).right(&right);
    // The plan order's groups line up with the table's when the steps
    // match; look them up by phase and step.
    let lookup = |phase: crate::ranks::Phase, step: usize| {
        r.plan_order.as_ref().and_then(|p| {
            p.steps
                .iter()
                .find(|g| g.phase == phase && g.first_step <= step && step <= g.last_step)
        })
    };
    for g in &r.table.steps {
        let mut row = vec![
            g.phase.as_str().to_string(),
            step_range(g),
            g.distance.map_or("-".to_string(), |d| d.to_string()),
            g.flows.to_string(),
            load_text(g),
            g.max_load_links.to_string(),
        ];
        if r.plan_order.is_some() {
            match lookup(g.phase, g.first_step) {
                Some(b) => {
                    row.push(load_text(b));
                    row.push(b.max_load_links.to_string());
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
    let verdict = |o: &OrderLoads| -> String {
        if o.worst_load <= 1 {
            format!(
                "{}: congestion-free, no directed inter-switch link carries more than one flow in any step",
                o.order
            )
        } else {
            let bad: Vec<String> = o
                .steps
                .iter()
                .filter(|g| g.max_load > 1)
                .map(|g| {
                    format!(
                        "{} {} ({} flows)",
                        g.phase.as_str(),
                        step_range(g),
                        load_text(g)
                    )
                })
                .collect();
            let worst = match o.worst_share {
                Some(share) => format!("{share:.2} flows' worth"),
                None => format!("{} flows", o.worst_load),
            };
            format!(
                "{}: congested, up to {worst} share a link; steps {}",
                o.order,
                bad.join(", ")
            )
        }
    };
    out.push_str(&format!("Result: {}\n", verdict(&r.table)));
    if let Some(p) = &r.plan_order {
        out.push_str(&format!("        {}\n", verdict(p)));
    }
    let inside: Vec<String> = r
        .table
        .steps
        .iter()
        .filter(|g| g.intra_server_flows > 0)
        .map(|g| {
            let pcie = g.intra_server_flows - g.nvlink_flows.min(g.intra_server_flows);
            let over = match (g.nvlink_flows, pcie) {
                (0, _) => "PCIe".to_string(),
                (_, 0) => "NVLink".to_string(),
                (nv, pcie) => format!("{nv} NVLink, {pcie} PCIe"),
            };
            format!(
                "{} {} ({} of {}, {over})",
                g.phase.as_str(),
                step_range(g),
                g.intra_server_flows,
                g.flows
            )
        })
        .collect();
    if !inside.is_empty() {
        out.push_str(&format!(
            "Inside servers: flows between two GPUs of one server stay off the fabric and are on no link above, over NVLink when the two GPUs (by their gpu_index) share an NVLink domain and through PCIe otherwise: {}\n",
            inside.join(", ")
        ));
    }
    let shared: Vec<String> = r
        .table
        .steps
        .iter()
        .filter(|g| g.shared_nic_flows > 0)
        .map(|g| {
            format!(
                "{} {} ({} of {})",
                g.phase.as_str(),
                step_range(g),
                g.shared_nic_flows,
                g.flows
            )
        })
        .collect();
    if !shared.is_empty() {
        out.push_str(&format!(
            "Shared NICs: the GPUs behind one NIC send to one NIC together; a step's flows between two NICs are routed and counted as one NIC flow, so a load of 1 means no link carries two NIC pairs' traffic (each GPU gets its share of the NIC): {}\n",
            shared.join(", ")
        ));
    }
    if r.table.steps.iter().any(|g| g.access_overloaded) {
        out.push_str("Warning: some steps put two flows on one NIC link; the rank table or schedule sends twice from one sub-node\n");
    }
    out
}
