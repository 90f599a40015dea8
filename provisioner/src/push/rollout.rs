//! The rollout order: a canary switch alone first, then batches in plan
//! order, so that no batch changes more than a share of any BiGraph part
//! or fat-tree tier at once. Pure: the push runs the batches one after the
//! other (the switches of a batch at the same time) and stops at the first
//! failure.

use std::collections::{BTreeMap, BTreeSet};

use planner::checked::CheckedPlan;
use serde::Serialize;

/// How the rollout is cut.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The switch pushed alone first (default: the first one selected).
    pub canary: Option<String>,
    /// Most switches in one batch.
    pub batch: usize,
    /// Largest share (0 < share <= 1) of the physical switches of a part
    /// or tier in one batch; at least one switch always fits.
    pub max_share: f64,
}

/// The groups (parts or tiers) of each physical switch: those of its
/// virtual switches. A physical switch split into an upper and a lower half
/// belongs to both parts.
pub(crate) fn groups(plan: &CheckedPlan) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut g: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for s in &plan.switch_list {
        g.entry(s.physical.to_string())
            .or_default()
            .insert(s.part_or_tier.as_str());
    }
    g
}

/// One batch of the rollout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Batch {
    /// Switches, in plan order.
    pub switches: Vec<String>,
}

/// A bad policy: the parameter and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PolicyError {
    /// The parameter (`canary`, `batch`, `max-share`).
    pub parameter: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Cuts `selected` (physical switches in plan order) into batches.
/// `groups` gives each physical switch's parts or tiers over the whole
/// plan; a group's limit is `max_share` of its switches in the whole plan,
/// rounded down, but at least one.
pub(crate) fn plan_batches(
    selected: &[String],
    groups: &BTreeMap<String, BTreeSet<&'static str>>,
    policy: &Policy,
) -> Result<Vec<Batch>, PolicyError> {
    if policy.batch == 0 {
        return Err(PolicyError {
            parameter: "batch",
            message: "give at least 1".to_string(),
        });
    }
    if !(policy.max_share > 0.0 && policy.max_share <= 1.0) {
        return Err(PolicyError {
            parameter: "max-share",
            message: format!(
                "{} is not a share; give a number above 0 and at most 1, e.g. 0.25",
                policy.max_share
            ),
        });
    }
    let mut rest: Vec<&String> = selected.iter().collect();
    let mut batches = Vec::new();
    if rest.is_empty() {
        return Ok(batches);
    }
    let canary = match &policy.canary {
        Some(c) => match rest.iter().position(|s| *s == c) {
            Some(i) => rest.remove(i),
            None => {
                return Err(PolicyError {
                    parameter: "canary",
                    message: format!(
                        "{c} is not among the switches being pushed ({})",
                        selected.join(", ")
                    ),
                });
            }
        },
        None => rest.remove(0),
    };
    batches.push(Batch {
        switches: vec![canary.clone()],
    });
    let mut size: BTreeMap<&str, usize> = BTreeMap::new();
    for gs in groups.values() {
        for g in gs {
            *size.entry(g).or_default() += 1;
        }
    }
    let limit = |g: &str| -> usize {
        let n = size.get(g).copied().unwrap_or(1);
        ((n as f64 * policy.max_share).floor() as usize).max(1)
    };
    let empty = BTreeSet::new();
    while !rest.is_empty() {
        let mut batch = Vec::new();
        let mut used: BTreeMap<&str, usize> = BTreeMap::new();
        let mut left = Vec::new();
        for s in rest {
            let gs = groups.get(s.as_str()).unwrap_or(&empty);
            let fits = batch.len() < policy.batch
                && gs
                    .iter()
                    .all(|g| used.get(g).copied().unwrap_or(0) < limit(g));
            if fits {
                for g in gs {
                    *used.entry(g).or_default() += 1;
                }
                batch.push(s.clone());
            } else {
                left.push(s);
            }
        }
        batches.push(Batch { switches: batch });
        rest = left;
    }
    Ok(batches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("sw{i:02}")).collect()
    }

    fn split(
        n_upper: usize,
        n_lower: usize,
        both: usize,
    ) -> BTreeMap<String, BTreeSet<&'static str>> {
        let mut g = BTreeMap::new();
        let all = names(n_upper + n_lower + both);
        for (i, s) in all.into_iter().enumerate() {
            let set: BTreeSet<&'static str> = if i < n_upper {
                ["upper"].into()
            } else if i < n_upper + n_lower {
                ["lower"].into()
            } else {
                ["upper", "lower"].into()
            };
            g.insert(s, set);
        }
        g
    }

    fn policy(canary: Option<&str>, batch: usize, share: f64) -> Policy {
        Policy {
            canary: canary.map(str::to_string),
            batch,
            max_share: share,
        }
    }

    fn cut(
        sel: &[String],
        g: &BTreeMap<String, BTreeSet<&'static str>>,
        p: &Policy,
    ) -> Vec<Vec<String>> {
        plan_batches(sel, g, p)
            .expect("policy")
            .into_iter()
            .map(|b| b.switches)
            .collect()
    }

    #[test]
    fn canary_then_shares() {
        // 8 switches, each in both parts (the 4x16 BiGraph): a quarter of 8
        // is 2 at a time.
        let g = split(0, 0, 8);
        let sel = names(8);
        assert_eq!(
            cut(&sel, &g, &policy(Some("sw05"), 8, 0.25)),
            vec![
                vec!["sw05"],
                vec!["sw01", "sw02"],
                vec!["sw03", "sw04"],
                vec!["sw06", "sw07"],
                vec!["sw08"]
            ]
        );
        // 4 upper, 4 lower: half of each part at once, batches of 3.
        let g = split(4, 4, 0);
        assert_eq!(
            cut(&sel, &g, &policy(None, 3, 0.5)),
            vec![
                vec!["sw01"],
                vec!["sw02", "sw03", "sw05"],
                vec!["sw04", "sw06", "sw07"],
                vec!["sw08"]
            ]
        );
        // A tiny share still moves one switch at a time.
        assert_eq!(
            cut(&names(3), &split(3, 0, 0), &policy(None, 10, 0.01)).len(),
            3
        );
    }

    #[test]
    fn bad_policies_name_their_flag() {
        let g = split(2, 2, 0);
        let sel = names(4);
        for (p, flag) in [
            (policy(None, 0, 0.5), "batch"),
            (policy(None, 1, 0.0), "max-share"),
            (policy(None, 1, 1.5), "max-share"),
            (policy(None, 1, f64::NAN), "max-share"),
            (policy(Some("sw09"), 1, 0.5), "canary"),
        ] {
            assert_eq!(plan_batches(&sel, &g, &p).expect_err("bad").parameter, flag);
        }
    }

    proptest! {
        /// Every switch is pushed once, the canary alone first, and no
        /// batch holds more of a group than its limit or more than `batch`.
        #[test]
        fn batches_keep_the_limits(up in 1usize..12, low in 0usize..12, both in 0usize..6,
                                   batch in 1usize..10, share in 0.05f64..1.0, canary in 0usize..30) {
            let g = split(up, low, both);
            let sel: Vec<String> = g.keys().cloned().collect();
            let c = sel[canary % sel.len()].clone();
            let bs = cut(&sel, &g, &policy(Some(&c), batch, share));
            prop_assert_eq!(&bs[0], &vec![c.clone()]);
            let mut seen: Vec<String> = bs.concat();
            seen.sort();
            prop_assert_eq!(&seen, &sel);
            let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
            for gs in g.values() { for x in gs { *sizes.entry(x).or_default() += 1; } }
            for b in &bs[1..] {
                prop_assert!(!b.is_empty() && b.len() <= batch);
                for (grp, n) in &sizes {
                    let limit = ((*n as f64 * share).floor() as usize).max(1);
                    let k = b.iter().filter(|s| g[*s].contains(grp)).count();
                    prop_assert!(k <= limit, "group {} has {} > {} in {:?}", grp, k, limit, b);
                }
            }
        }
    }
}
