//! Failure analysis by proof: what each failure of a switch or of the
//! cables between two switches leaves of the fabric.
//!
//! For every scenario (by default every single switch and every pair of
//! cabled switches; or the sets a user names) the fabric is the plan with
//! those links and switches out of service, routed as BGP would route it
//! (or static routes recomputed for it: [`crate::network::Network::avoiding`], the one
//! route model). Per scenario:
//!
//! - the sub-nodes cut off (every port of their NIC on a failed switch),
//! - the pairs of live switches with sub-nodes that lost every route,
//! - `check-qos` on the failed fabric ([`check_qos_failed`]): whether the
//!   lossless priorities stay free of buffer-dependency cycles on the
//!   routes that are left,
//! - the job's rank table (searched on the whole fabric) verified on what
//!   is left, or the ranks it loses, and
//! - the best table searched on what is left ([`plan_ranks`] with the
//!   failure avoided) with its lower bound.
//!
//! The worst scenario is the one that cuts the fabric (unreachable
//! switches), else breaks the QoS proof, else loses the most sub-nodes,
//! else leaves the highest worst link load for the best table.

use serde::Serialize;

use crate::algorithm::Algorithm;
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::network::{Avoid, Link};
use crate::ranks::{Engine, Request, Solver, plan_ranks, verify_engine};

mod proof;

pub(crate) use proof::Prover;

/// What to analyse.
#[derive(Debug, Clone)]
pub struct FailureRequest {
    /// The allreduce algorithm of the job whose table is checked.
    pub algorithm: Algorithm,
    /// Ranks of the job (default: what `planner ranks` takes by default).
    pub ranks: Option<usize>,
    /// The engine that runs the job's schedule.
    pub engine: Engine,
    /// ECMP hash seed.
    pub seed: u64,
    /// The scenarios, each a set of failures; empty: every single switch
    /// and every pair of cabled switches.
    pub scenarios: Vec<Vec<Avoid>>,
}

/// The analysis of a plan.
#[derive(Debug, Clone, Serialize)]
pub struct FailureReport {
    /// The plan's name.
    pub plan: String,
    /// `BiGraph 4x16`, ...
    pub design: String,
    /// The job's algorithm.
    pub algorithm: Algorithm,
    /// The job's rank table on the whole fabric.
    pub job: Baseline,
    /// One row per scenario, in the order analysed.
    pub scenarios: Vec<Scenario>,
    /// The index in `scenarios` of the worst one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<usize>,
}

/// The job's table on the whole fabric.
#[derive(Debug, Clone, Serialize)]
pub struct Baseline {
    /// Ranks.
    pub ranks: usize,
    /// Most flows on one directed inter-switch link in any step.
    pub worst_load: usize,
    /// A load no table can beat on the whole fabric.
    pub lower_bound: usize,
}

/// What one scenario leaves.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// What failed, as `--fail` takes it.
    pub failed: Vec<String>,
    /// Sub-nodes cut off.
    pub sub_nodes_lost: usize,
    /// Pairs of live switches with sub-nodes that lost every route.
    pub unreachable_pairs: usize,
    /// Up to three of them, `A -> B`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreachable_examples: Vec<String>,
    /// True when `check-qos` finds nothing on the failed fabric.
    pub qos_ok: bool,
    /// What `check-qos` found, `kind: object` each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub qos_findings: Vec<String>,
    /// The job's ranks on cut-off sub-nodes.
    pub job_ranks_lost: usize,
    /// The job's table on what is left (when it lost no rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_worst_load: Option<usize>,
    /// The best table searched on what is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<Best>,
    /// Why no table was searched, when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_searched: Option<String>,
}

/// The best table on a failed fabric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    /// Ranks it places.
    pub ranks: usize,
    /// Most flows on one directed inter-switch link in any step.
    pub worst_load: usize,
    /// A load no table can beat on what is left.
    pub lower_bound: usize,
}

/// Every single failure of `plan`: each physical switch, then each pair
/// of (plan) switches joined by cables (all their parallel cables at
/// once), as the route model links them.
///
/// A physical switch split by VLAN into virtual switches (EFLOPS's
/// halves) fails as one box: its scenario fails every virtual switch it
/// holds at once, in plan order, since one power supply, ASIC and
/// management plane carry them all. Boxes come in the order of their
/// first virtual switch.
pub fn single_failures(plan: &CheckedPlan) -> Result<Vec<Vec<Avoid>>> {
    let net = plan.network()?;
    let mut out: Vec<Vec<Avoid>> = (plan.boxes().into_iter())
        .map(|(_, held)| {
            (held.into_iter())
                .map(|i| Avoid::Switch(plan.switch_list[i].name.to_string()))
                .collect()
        })
        .collect();
    let mut pairs: Vec<(usize, usize)> = net
        .inter_switch_links()
        .filter_map(|id| match net.link(id) {
            Some(Link::InterSwitch { from, to, .. }) => Some((from.min(to), from.max(to))),
            _ => None,
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    out.extend(pairs.into_iter().map(|(a, b)| {
        vec![Avoid::Link(format!(
            "{}-{}",
            plan.switch_list[a].name, plan.switch_list[b].name
        ))]
    }));
    Ok(out)
}

/// Analyses every scenario of `request`; `progress` is called before each
/// one with its index, the count and its name.
pub fn analyse(
    plan: &CheckedPlan,
    request: &FailureRequest,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<FailureReport> {
    let whole = plan_ranks(
        plan,
        &Request {
            algorithm: request.algorithm,
            ranks: request.ranks,
            seed: request.seed,
            engine: request.engine,
            ..Request::default()
        },
    )?;
    let job = Baseline {
        ranks: whole.table.ranks.len(),
        worst_load: whole.worst_load,
        lower_bound: whole.lower_bound,
    };
    let scenarios = if request.scenarios.is_empty() {
        single_failures(plan)?
    } else {
        request.scenarios.clone()
    };
    let prover = Prover::new(plan)?;
    let mut rows = Vec::with_capacity(scenarios.len());
    for (i, failed) in scenarios.iter().enumerate() {
        let names: Vec<String> = failed.iter().map(ToString::to_string).collect();
        progress(i, scenarios.len(), &names.join(","));
        let proof::Proof {
            lost,
            unreachable,
            qos_ok,
            qos_findings,
        } = prover.prove(failed)?;
        let job_ranks_lost = whole
            .table
            .ranks
            .iter()
            .filter(|r| lost.contains(r))
            .count();
        let job_worst_load = if job_ranks_lost == 0 && unreachable.is_empty() {
            let steps = verify_engine(
                plan,
                &whole.table,
                request.engine,
                failed,
                request.seed,
                crate::network::Policy::default(),
            )?;
            Some(steps.iter().map(|s| s.max_load).max().unwrap_or(0))
        } else {
            None
        };
        let (best, not_searched) = if !unreachable.is_empty() {
            (
                None,
                Some("the fabric is cut: no table reaches every rank".to_string()),
            )
        } else {
            let left = plan.sub_node_list.len() - lost.len();
            let ranks = request.ranks.map(|x| x.min(left));
            best_on(
                plan,
                &Request {
                    algorithm: request.algorithm,
                    ranks,
                    avoid: failed.clone(),
                    solver: Solver::Heuristic,
                    seed: request.seed,
                    engine: request.engine,
                    ..Request::default()
                },
            )?
        };
        rows.push(Scenario {
            failed: names,
            sub_nodes_lost: lost.len(),
            unreachable_pairs: unreachable.len(),
            unreachable_examples: unreachable
                .iter()
                .take(3)
                .map(|&(a, b)| {
                    format!(
                        "{} -> {}",
                        plan.switch_list[a].name, plan.switch_list[b].name
                    )
                })
                .collect(),
            qos_ok,
            qos_findings,
            job_ranks_lost,
            job_worst_load,
            best,
            not_searched,
        });
    }
    let worst = rows
        .iter()
        .enumerate()
        .max_by_key(|(i, r)| {
            (
                r.unreachable_pairs > 0,
                !r.qos_ok,
                r.sub_nodes_lost,
                r.best.as_ref().map_or(0, |b| b.worst_load),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(i, _)| i);
    Ok(FailureReport {
        plan: plan.name.clone(),
        design: plan.describe(),
        algorithm: request.algorithm,
        job,
        scenarios: rows,
        worst,
    })
}

/// The best table `request` finds on what its failures leave, or why none
/// was searched (a refused request).
fn best_on(plan: &CheckedPlan, request: &Request) -> Result<(Option<Best>, Option<String>)> {
    match plan_ranks(plan, request) {
        Ok(o) => Ok((
            Some(Best {
                ranks: o.table.ranks.len(),
                worst_load: o.worst_load,
                lower_bound: o.lower_bound,
            }),
            None,
        )),
        Err(e @ (Error::Parameter { .. } | Error::Invalid { .. })) => {
            Ok((None, Some(e.to_string())))
        }
        Err(e) => Err(e),
    }
}

/// A plan's worst single failure, as `compare --failures` weighs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstFailure {
    /// What fails, as `--fail` takes it.
    pub failed: Vec<String>,
    /// Single failures proven (every switch, every cabled pair).
    pub scenarios: usize,
    /// Sub-nodes it cuts off.
    pub sub_nodes_lost: usize,
    /// Pairs of live switches with sub-nodes that lost every route.
    pub unreachable_pairs: usize,
    /// True when `check-qos` finds nothing on what is left.
    pub qos_ok: bool,
    /// The best table searched on what is left (HDRM, the probe's
    /// schedule), when the fabric is not cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<Best>,
    /// Why no table was searched, when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_searched: Option<String>,
}

impl WorstFailure {
    /// True when live sub-nodes lose each other: the fabric is cut.
    pub fn cuts_fabric(&self) -> bool {
        self.unreachable_pairs > 0
    }

    /// `switch:leaf01: 32 sub-nodes lost, QoS holds, best table load 2
    /// (bound 1)`.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "{}: {} sub-nodes lost",
            self.failed.join(", "),
            self.sub_nodes_lost
        );
        if self.cuts_fabric() {
            out.push_str(&format!(
                ", FABRIC CUT ({} switch pairs)",
                self.unreachable_pairs
            ));
        }
        out.push_str(if self.qos_ok {
            ", QoS holds"
        } else {
            ", QoS BROKEN"
        });
        if let Some(b) = &self.best {
            out.push_str(&format!(
                ", best table load {} (bound {})",
                b.worst_load, b.lower_bound
            ));
        }
        out
    }
}

/// The worst single failure of `plan`, for `compare` and `purchase`:
/// every single failure ([`single_failures`]) proven on the route model
/// for what it cuts (sub-nodes lost, switch pairs cut apart) and for
/// `check-qos`; the worst is the one that cuts the fabric, else breaks
/// the QoS proof, else loses the most sub-nodes, the first in
/// [`single_failures`]' order on a tie (so no table search is needed to
/// rank them); the best `algorithm` table is then searched on what it
/// leaves, with `engine`'s schedule, when it does not cut the fabric and
/// `tables` is set. `planner failures` ranks ties by that table too.
pub fn worst_single_failure(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    engine: Engine,
    tables: bool,
) -> Result<Option<WorstFailure>> {
    let scenarios = single_failures(plan)?;
    let prover = Prover::new(plan)?;
    let mut worst: Option<(usize, usize, usize, bool)> = None;
    let key = |&(_, lost, cut, qos): &(usize, usize, usize, bool)| (cut > 0, !qos, lost);
    for (i, failed) in scenarios.iter().enumerate() {
        let p = prover.prove(failed)?;
        let row = (i, p.lost.len(), p.unreachable.len(), p.qos_ok);
        if worst.as_ref().is_none_or(|w| key(&row) > key(w)) {
            worst = Some(row);
        }
    }
    let Some((i, lost, unreachable, qos_ok)) = worst else {
        return Ok(None);
    };
    let failed = &scenarios[i];
    let (best, not_searched) = if unreachable > 0 {
        (
            None,
            Some("the fabric is cut: no table reaches every rank".to_string()),
        )
    } else if !tables {
        (None, Some("tables not searched".to_string()))
    } else {
        best_on(
            plan,
            &Request {
                algorithm,
                avoid: failed.clone(),
                solver: Solver::Heuristic,
                engine,
                ..Request::default()
            },
        )?
    };
    Ok(Some(WorstFailure {
        failed: failed.iter().map(ToString::to_string).collect(),
        scenarios: scenarios.len(),
        sub_nodes_lost: lost,
        unreachable_pairs: unreachable,
        qos_ok,
        best,
        not_searched,
    }))
}

/// The analysis for people.
pub fn render_failures(r: &FailureReport) -> String {
    let mut out = format!(
        "failures of {} ({}): the {} job's table ({} ranks, worst load {}, lower bound {} on the whole fabric)\n\n",
        r.plan,
        r.design,
        r.algorithm.as_str(),
        r.job.ranks,
        r.job.worst_load,
        r.job.lower_bound
    );
    let mut t = crate::text::Table::new([
        "failed",
        "sub-nodes lost",
        "cut pairs",
        "QoS proof",
        "job table",
        "best table",
    ])
    .right(&[1, 2]);
    for s in &r.scenarios {
        let job = match s.job_worst_load {
            Some(w) => format!("load {w}"),
            None if s.job_ranks_lost > 0 => format!("loses {} ranks", s.job_ranks_lost),
            None => "cut".to_string(),
        };
        let best = match &s.best {
            Some(b) => format!(
                "{} ranks, load {} (bound {})",
                b.ranks, b.worst_load, b.lower_bound
            ),
            None => "none".to_string(),
        };
        t.row([
            s.failed.join(", "),
            s.sub_nodes_lost.to_string(),
            s.unreachable_pairs.to_string(),
            if s.qos_ok {
                "holds".to_string()
            } else {
                format!("BROKEN ({})", s.qos_findings.join("; "))
            },
            job,
            best,
        ]);
    }
    out.push_str(&t.render());
    if let Some(w) = r.worst {
        let s = &r.scenarios[w];
        out.push_str(&format!("\nWorst single case: {}", s.failed.join(", ")));
        if s.unreachable_pairs > 0 {
            out.push_str(&format!(
                ": it cuts the fabric ({} pairs of switches, e.g. {})",
                s.unreachable_pairs,
                s.unreachable_examples.join(", ")
            ));
        } else if !s.qos_ok {
            out.push_str(": the lossless priorities can deadlock on what is left");
        } else {
            out.push_str(&format!(": {} sub-nodes lost", s.sub_nodes_lost));
            if let Some(b) = &s.best {
                out.push_str(&format!(
                    ", the best table on what is left has worst load {} (bound {})",
                    b.worst_load, b.lower_bound
                ));
            }
        }
        out.push_str(".\n");
    }
    for s in &r.scenarios {
        if let Some(why) = &s.not_searched {
            out.push_str(&format!("note: {}: {why}\n", s.failed.join(", ")));
        }
    }
    out
}

#[cfg(test)]
mod tests;
