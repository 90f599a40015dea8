//! The checked plan: the only plan commands and the provisioner take.
//!
//! A [`CheckedPlan`] is made by [`CheckedPlan::load`] (or
//! [`Plan::check`]), which runs every error-level check of
//! [`crate::validate::validate_plan`] once, or by the designer, whose
//! plans pass the same check (the design property tests hold that). So a
//! function that takes `&CheckedPlan` never meets a server listing a
//! missing sub-node, a header count that disagrees with its list, or any
//! other refusal `planner validate` reports.
//!
//! A checked plan also keeps the plan's route graph
//! ([`crate::network::RouteGraph`]) once it is built: the load check
//! builds it for its address and route proof and hands it on, and
//! [`CheckedPlan::network`] builds it on first use otherwise. Every
//! command that routes on the plan takes its [`Network`] from there, so
//! the graph is built once per plan, not once by the check and again by
//! the command.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Problem, Result};
use crate::network::{Avoid, Network, RouteGraph};
use crate::plan::Plan;

/// At most this many problems of a refused plan are listed in the error;
/// `planner validate` lists them all.
const SHOW_PROBLEMS: usize = 20;

/// A plan that passed the consistency check. It dereferences to [`Plan`];
/// it cannot be changed, so it stays checked.
///
/// Two checked plans are equal when their plans and sources are: the
/// route graph kept beside them is the plan's own, built or not. A clone
/// shares the graph (if built), which is the clone's plan's graph too.
#[derive(Clone)]
pub struct CheckedPlan {
    plan: Plan,
    source: String,
    /// The plan's route graph, once built: by the load check, or by the
    /// first [`CheckedPlan::network`].
    graph: OnceLock<Arc<RouteGraph>>,
}

impl PartialEq for CheckedPlan {
    fn eq(&self, other: &Self) -> bool {
        self.plan == other.plan && self.source == other.source
    }
}

impl fmt::Debug for CheckedPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedPlan")
            .field("plan", &self.plan)
            .field("source", &self.source)
            .field("graph_built", &self.graph.get().is_some())
            .finish()
    }
}

impl CheckedPlan {
    /// Parses a plan (TOML when `file` ends in `.toml`, JSON otherwise,
    /// as [`Plan::parse`]) and checks it. `file` is the path the user
    /// gave; errors name it.
    pub fn load(text: &str, file: &str) -> Result<CheckedPlan> {
        Plan::parse(text, file)?.check(file)
    }

    /// A plan the designer built from `source` (the inventory or
    /// shorthand). Only the designer calls it: its plans pass
    /// [`crate::validate::validate_plan`] by construction, which the
    /// design property tests check for random inventories and shorthands
    /// (`design_checks` in `design/tests.rs` loads every design back).
    pub(crate) fn designed(plan: Plan, source: &str) -> CheckedPlan {
        #[cfg(debug_assertions)]
        if plan.sub_node_list.len() <= 4096 {
            let v = crate::validate::validate_plan(&plan);
            assert!(v.ok, "a design failed its own check: {:#?}", v.findings);
        }
        CheckedPlan {
            plan,
            source: source.to_string(),
            graph: OnceLock::new(),
        }
    }

    /// A plan taken as checked without the check, for unit tests of the
    /// consumers' own defences (a fabric with links cut by hand, a name a
    /// later check refuses). Only tests build it.
    #[cfg(test)]
    pub(crate) fn unchecked_for_tests(plan: Plan) -> CheckedPlan {
        CheckedPlan {
            plan,
            source: "test plan".to_string(),
            graph: OnceLock::new(),
        }
    }

    /// The refusal of this plan for `problems`: an [`Error::Invalid`]
    /// naming the file (or inventory) it came from.
    pub fn refusal(&self, problems: Vec<crate::Problem>) -> crate::Error {
        crate::Error::Invalid {
            file: self.source.clone(),
            what: "plan",
            problems,
        }
    }

    /// Where the plan came from: the file it was read from, or the
    /// inventory it was designed from. Errors about the plan name it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The plan ready for routing on the whole fabric: what
    /// [`Network::new`] of the plan and [`CheckedPlan::source`] gives, on
    /// the route graph this plan keeps (built now if neither the check nor
    /// an earlier call built it). Errors name the plan's source.
    pub fn network(&self) -> Result<Network<'_>> {
        let graph = match self.graph.get() {
            Some(graph) => Arc::clone(graph),
            None => {
                let built = RouteGraph::build(&self.plan).map_err(|p| self.refusal(p))?;
                // Another thread may have set it meanwhile: the same graph.
                Arc::clone(self.graph.get_or_init(|| Arc::new(built)))
            }
        };
        Ok(Network::on(&self.plan, &self.source, graph))
    }

    /// The plan ready for routing around the links and switches of
    /// `avoid`: what [`Network::avoiding`] of the plan and
    /// [`CheckedPlan::source`] gives, on the route graph this plan keeps
    /// ([`CheckedPlan::network`]).
    pub fn network_avoiding(&self, avoid: &[Avoid]) -> Result<Network<'_>> {
        self.network()?.into_avoiding(avoid)
    }

    /// The route graph this plan keeps, if the load check or
    /// [`CheckedPlan::network`] built it; for the tests.
    #[cfg(test)]
    pub(crate) fn kept_graph(&self) -> Option<&Arc<RouteGraph>> {
        self.graph.get()
    }

    /// The plan itself, to change it; the result is unchecked again.
    pub fn into_plan(self) -> Plan {
        self.plan
    }

    /// Sets the QoS intent; `qos` must have passed
    /// [`crate::qos::QosIntent::resolve`], which makes the same checks as
    /// the load. The route graph reads nothing of the intent, so it is
    /// kept.
    pub(crate) fn set_qos(&mut self, qos: crate::qos::QosIntent) {
        debug_assert!(qos.problems(self.plan.topology).is_empty());
        self.plan.qos = Some(qos);
    }
}

impl Deref for CheckedPlan {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.plan
    }
}

impl AsRef<Plan> for CheckedPlan {
    fn as_ref(&self) -> &Plan {
        &self.plan
    }
}

impl Plan {
    /// Runs the consistency check of [`crate::validate::validate_plan`]
    /// and returns the checked plan, or every finding as a problem of
    /// `file` (the path the user gave, not the plan's `name`).
    pub fn check(self, file: &str) -> Result<CheckedPlan> {
        let (v, graph) = crate::validate::validate_plan_keeping_graph(&self);
        if v.ok {
            return Ok(CheckedPlan {
                plan: self,
                source: file.to_string(),
                graph: graph.map_or_else(OnceLock::new, OnceLock::from),
            });
        }
        let total = v.findings.len();
        let mut problems: Vec<Problem> = v
            .findings
            .into_iter()
            .take(SHOW_PROBLEMS)
            .map(|f| Problem::at(None, f.object, f.message, f.fix))
            .collect();
        if total > SHOW_PROBLEMS {
            problems.push(Problem::at(
                None,
                "plan",
                format!("{} more problems", total - SHOW_PROBLEMS),
                format!("`planner validate {file}` lists them all in its JSON report"),
            ));
        }
        Err(Error::Invalid {
            file: file.to_string(),
            what: "plan",
            problems,
        })
    }
}

#[cfg(test)]
mod graph_tests;
#[cfg(test)]
mod tests;
