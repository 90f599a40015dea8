//! The checked plan: the only plan commands and the provisioner take.
//!
//! A [`CheckedPlan`] is made by [`CheckedPlan::load`] (or
//! [`Plan::check`]), which runs every error-level check of
//! [`crate::validate::validate_plan`] once, or by the designer, whose
//! plans pass the same check (the design property tests hold that). So a
//! function that takes `&CheckedPlan` never meets a server listing a
//! missing sub-node, a header count that disagrees with its list, or any
//! other refusal `planner validate` reports.

use std::ops::Deref;

use crate::error::{Error, Problem, Result};
use crate::plan::Plan;

/// At most this many problems of a refused plan are listed in the error;
/// `planner validate` lists them all.
const SHOW_PROBLEMS: usize = 20;

/// A plan that passed the consistency check. It dereferences to [`Plan`];
/// it cannot be changed, so it stays checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPlan {
    plan: Plan,
    source: String,
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

    /// The plan itself, to change it; the result is unchecked again.
    pub fn into_plan(self) -> Plan {
        self.plan
    }

    /// Sets the QoS intent; `qos` must have passed
    /// [`crate::qos::QosIntent::resolve`], which makes the same checks as
    /// the load.
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
        let v = crate::validate::validate_plan(&self);
        if v.ok {
            return Ok(CheckedPlan {
                plan: self,
                source: file.to_string(),
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
mod tests;
