//! Failure analysis by proof: what each failure of a switch or of the
//! cables between two switches leaves of the fabric.
//!
//! For every scenario (by default every single switch and every pair of
//! cabled switches; or the sets a user names) the fabric is the plan with
//! those links and switches out of service, routed as BGP would route it
//! (or static routes recomputed for it: [`Network::avoiding`], the one
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
use crate::network::{Avoid, Link, Network};
use crate::ranks::{Engine, Request, Solver, plan_ranks, verify_engine};
use crate::render::{HostMarking, check_qos_failed};

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

/// Every single failure of `plan`: each (plan) switch, then each pair
/// of switches joined by cables (all their parallel cables at once), as
/// the route model links them.
pub fn single_failures(plan: &CheckedPlan) -> Result<Vec<Vec<Avoid>>> {
    let net = Network::new(plan, plan.source())?;
    let mut out: Vec<Vec<Avoid>> = plan
        .switch_list
        .iter()
        .map(|s| vec![Avoid::Switch(s.name.clone())])
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
    let marking = HostMarking::default();
    let carrying: std::collections::HashSet<&str> = plan
        .sub_node_list
        .iter()
        .map(|sn| sn.switch.as_str())
        .collect();
    let mut rows = Vec::with_capacity(scenarios.len());
    for (i, failed) in scenarios.iter().enumerate() {
        let names: Vec<String> = failed.iter().map(ToString::to_string).collect();
        progress(i, scenarios.len(), &names.join(","));
        let (lost, unreachable) = cut(plan, failed, &carrying)?;
        let qos = check_qos_failed(plan, &marking, failed);
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
            qos_ok: qos.ok,
            qos_findings: qos
                .findings
                .iter()
                .map(|f| format!("{}: {}", f.kind, f.object))
                .collect(),
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

/// The sub-nodes a failure cuts off and the pairs of live switches with
/// sub-nodes that lost every route (within a plane), on the route model's
/// failed fabric.
#[allow(clippy::type_complexity)]
fn cut(
    plan: &CheckedPlan,
    failed: &[Avoid],
    carrying: &std::collections::HashSet<&str>,
) -> Result<(Vec<usize>, Vec<(usize, usize)>)> {
    let net = Network::avoiding(plan, plan.source(), failed)?;
    let lost: Vec<usize> = (0..plan.sub_node_list.len())
        .filter(|&sn| net.cut_off(sn))
        .collect();
    let hosts: Vec<usize> = (0..plan.switch_list.len())
        .filter(|&s| !net.is_avoided_switch(s))
        .filter(|&s| carrying.contains(plan.switch_list[s].name.as_str()))
        .collect();
    let mut unreachable = Vec::new();
    for &a in &hosts {
        for &b in &hosts {
            if a != b
                && plan.switch_list[a].plane == plan.switch_list[b].plane
                && !net.reachable(a, b)
            {
                unreachable.push((a, b));
            }
        }
    }
    Ok((lost, unreachable))
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
    let carrying: std::collections::HashSet<&str> = plan
        .sub_node_list
        .iter()
        .map(|sn| sn.switch.as_str())
        .collect();
    let marking = HostMarking::default();
    let mut worst: Option<(usize, usize, usize, bool)> = None;
    let key = |&(_, lost, cut, qos): &(usize, usize, usize, bool)| (cut > 0, !qos, lost);
    for (i, failed) in scenarios.iter().enumerate() {
        let (lost, unreachable) = cut(plan, failed, &carrying)?;
        let qos = check_qos_failed(plan, &marking, failed).ok;
        let row = (i, lost.len(), unreachable.len(), qos);
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
mod tests {
    use super::*;
    use crate::design::{DesignOptions, bundled_inventory, design};
    use crate::plan::Topology;

    fn request(algorithm: Algorithm, scenarios: Vec<Vec<Avoid>>) -> FailureRequest {
        FailureRequest {
            algorithm,
            ranks: None,
            engine: Engine::Probe,
            seed: 0,
            scenarios,
        }
    }

    /// EFLOPS 4x16: a switch takes its 4 sub-nodes (and the job's ranks
    /// on them) with it; a cable between two halves doubles the job
    /// table's load, and a table searched on what is left is back at the
    /// bound; the per-direction proof holds on every failed fabric.
    #[test]
    fn every_single_failure_of_the_eflops_plan() {
        let plan = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
        let mut seen = Vec::new();
        let r = analyse(&plan, &request(Algorithm::Hdrm, Vec::new()), |i, n, _| {
            seen.push((i, n));
        })
        .unwrap();
        assert_eq!(r.scenarios.len(), 16 + 64);
        assert_eq!(seen.len(), 80);
        assert_eq!(
            (r.job.ranks, r.job.worst_load, r.job.lower_bound),
            (64, 1, 1)
        );
        for s in &r.scenarios {
            assert!(s.qos_ok, "{:?}", s);
            assert_eq!(s.unreachable_pairs, 0, "{:?}", s);
            let best = s.best.as_ref().expect("a table on what is left");
            if s.failed[0].starts_with("switch:") {
                assert_eq!((s.sub_nodes_lost, s.job_ranks_lost), (4, 4), "{:?}", s);
                assert_eq!(s.job_worst_load, None);
                assert_eq!(best.ranks, 60);
            } else {
                assert_eq!((s.sub_nodes_lost, s.job_ranks_lost), (0, 0), "{:?}", s);
                assert_eq!(s.job_worst_load, Some(2), "{:?}", s);
                assert_eq!((best.ranks, best.worst_load, best.lower_bound), (64, 1, 1));
            }
        }
        // Ties go to the first scenario: the first switch.
        assert_eq!(r.worst, Some(0));
        let text = render_failures(&r);
        assert!(
            text.contains("Worst single case: switch:sw01-u: 4 sub-nodes lost"),
            "{text}"
        );
    }

    /// Both spines of a leaf-spine down: the leaves are cut apart, no table
    /// is searched, and that is the worst case.
    #[test]
    fn failing_every_spine_cuts_the_fabric() {
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let plan = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
        let spines: Vec<Avoid> = plan
            .switch_list
            .iter()
            .filter(|s| s.part_or_tier == crate::plan::Tier::Spine)
            .map(|s| Avoid::Switch(s.name.clone()))
            .collect();
        assert!(!spines.is_empty());
        let one = vec![spines[0].clone()];
        let r = analyse(
            &plan,
            &request(Algorithm::Hd, vec![one, spines.clone()]),
            |_, _, _| {},
        )
        .unwrap();
        let (first, all) = (&r.scenarios[0], &r.scenarios[1]);
        assert_eq!(first.unreachable_pairs, 0, "{first:?}");
        assert!(first.best.is_some());
        let leaves = plan.switch_list.len() - spines.len();
        assert_eq!(all.unreachable_pairs, leaves * (leaves - 1), "{all:?}");
        assert!(all.best.is_none());
        assert!(all.not_searched.as_deref().unwrap().contains("cut"));
        assert_eq!(r.worst, Some(1));
        assert!(render_failures(&r).contains("it cuts the fabric"));
    }

    fn worst_of(plan: &CheckedPlan) -> WorstFailure {
        worst_single_failure(plan, Algorithm::Hdrm, Engine::Probe, true)
            .unwrap()
            .expect("a plan with switches has single failures")
    }

    /// BiGraph 4x16 (EFLOPS): no single failure cuts it; a switch takes
    /// its 4 sub-nodes, a cable none, so the worst is the first switch,
    /// and HDRM on the 60 sub-nodes left is back at load 1.
    #[test]
    fn worst_single_failure_of_a_bigraph() {
        let plan = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
        let w = worst_of(&plan);
        assert_eq!(w.failed, ["switch:sw01-u"]);
        assert_eq!(w.scenarios, 16 + 64);
        assert_eq!(
            (w.sub_nodes_lost, w.unreachable_pairs, w.qos_ok),
            (4, 0, true)
        );
        assert!(!w.cuts_fabric());
        let b = w.best.as_ref().unwrap();
        assert_eq!((b.ranks, b.worst_load, b.lower_bound), (60, 1, 1));
        assert_eq!(
            w.describe(),
            "switch:sw01-u: 4 sub-nodes lost, QoS holds, best table load 1 (bound 1)"
        );
    }

    /// A leaf-spine of 4 leaves (16 sub-nodes each) and 2 spines: a spine
    /// or a leaf-spine cable bundle leaves every leaf reachable, a leaf
    /// takes its 16 sub-nodes: the worst is the first leaf; with one spine
    /// (2 leaves), the spine cuts the two leaves apart (2 directed pairs).
    #[test]
    fn worst_single_failure_of_fat_trees() {
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let plan = design(&bundled_inventory("fat-tree-64"), &opts).unwrap();
        let first_leaf = (plan.switch_list.iter())
            .find(|s| s.part_or_tier == crate::plan::Tier::Leaf)
            .unwrap();
        let w = worst_of(&plan);
        assert_eq!(w.failed, [format!("switch:{}", first_leaf.name)]);
        assert_eq!(w.scenarios, 6 + 4 * 2);
        assert_eq!(
            (w.sub_nodes_lost, w.unreachable_pairs, w.qos_ok),
            (16, 0, true)
        );

        let sh = crate::design::shorthand::Shorthand::default();
        let (inv, opts) =
            crate::design::shorthand::fat_tree("tiers=2,sub-nodes=32,ports=32", &sh).unwrap();
        let plan = design(&inv, &opts).unwrap();
        let spine = (plan.switch_list.iter())
            .find(|s| s.part_or_tier == crate::plan::Tier::Spine)
            .unwrap();
        let w = worst_of(&plan);
        assert_eq!(w.failed, [format!("switch:{}", spine.name)]);
        assert_eq!(w.scenarios, 3 + 2);
        assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (0, 2));
        assert!(w.cuts_fabric() && w.best.is_none());
        assert!(w.describe().contains("FABRIC CUT (2 switch pairs)"));
    }

    /// HPN, 2 planes of 2 rail ToRs under one aggregation switch each:
    /// every NIC has a port in both planes, so no single failure cuts a
    /// sub-node off; the plane-A aggregation switch cuts that plane's two
    /// ToRs apart (2 directed pairs within the plane), the worst.
    #[test]
    fn worst_single_failure_of_hpn() {
        let sh = crate::design::shorthand::Shorthand::default();
        let (inv, opts) =
            crate::design::shorthand::hpn("sub-nodes=16,rails=2,ports=16", &sh).unwrap();
        let plan = design(&inv, &opts).unwrap();
        let agg = (plan.switch_list.iter())
            .find(|s| s.plane == Some(0) && s.part_or_tier == crate::plan::Tier::Spine)
            .unwrap();
        let w = worst_of(&plan);
        assert_eq!(w.failed, [format!("switch:{}", agg.name)]);
        assert_eq!(w.scenarios, 6 + 4);
        assert_eq!((w.sub_nodes_lost, w.unreachable_pairs), (0, 2));
    }
}
