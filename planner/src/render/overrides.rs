//! QoS overrides applied to a plan that is already designed: what
//! `planner render --qos FILE` and `planner check-qos --qos FILE` do.
//!
//! The file holds the inventory's `[qos]` table
//! ([`crate::inventory::qos_overrides_from_toml`]). Its values go on top
//! of the plan's own intent, so a plan designed with an inventory `[qos]`
//! table keeps what the file does not change. Changing `per_direction`
//! changes the design's default classes (`roce-upper` and `roce-lower`, or
//! `roce`): the plan's classes of the other design are dropped, classes
//! the user added are kept. The result is checked as the inventory's
//! table is at design time ([`QosIntent::resolve`]).

use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::plan::Topology;
use crate::qos::{ClassOverride, QosIntent, QosOverrides};

/// Applies `o` to the plan's QoS intent; returns notes about overrides
/// that do not apply to this design. Problems name the overrides file and
/// its lines.
pub fn apply_qos_overrides(plan: &mut CheckedPlan, o: &QosOverrides) -> Result<Vec<String>> {
    let base = plan.qos_intent();
    let merged = merge(plan.topology, &base, o);
    match QosIntent::resolve(plan.topology, &merged) {
        Ok((q, notes)) => {
            plan.set_qos(q);
            Ok(notes)
        }
        Err(mut problems) => {
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            Err(Error::Invalid {
                file: o.file.clone(),
                what: "QoS overrides",
                problems,
            })
        }
    }
}

/// The plan's intent as overrides without lines, with the file's values
/// on top.
fn merge(topology: Topology, base: &QosIntent, o: &QosOverrides) -> QosOverrides {
    let per_direction =
        topology == Topology::BiGraph && o.per_direction.unwrap_or(base.per_direction);
    let other_design: &[&str] = if per_direction {
        &["roce"]
    } else {
        &["roce-upper", "roce-lower"]
    };
    let mut classes: Vec<ClassOverride> = base
        .classes
        .iter()
        .filter(|c| !other_design.contains(&c.name.as_str()))
        .map(|c| ClassOverride {
            name: c.name.clone(),
            part: Some(c.part),
            dscp: Some(c.dscp),
            priority: Some(c.priority),
            lossless: Some(c.lossless),
            line: None,
        })
        .collect();
    for c in &o.classes {
        match classes.iter_mut().find(|b| b.name == c.name) {
            Some(b) => {
                b.part = c.part.or(b.part);
                b.dscp = c.dscp.or(b.dscp);
                b.priority = c.priority.or(b.priority);
                b.lossless = c.lossless.or(b.lossless);
                b.line = c.line;
            }
            None => classes.push(c.clone()),
        }
    }
    let mut switch_mtu: Vec<(String, u32, Option<usize>)> = base
        .switch_mtu
        .iter()
        .filter(|(name, _)| !o.switch_mtu.iter().any(|s| &s.0 == *name))
        .map(|(name, mtu)| (name.clone(), *mtu, None))
        .collect();
    switch_mtu.extend(o.switch_mtu.iter().cloned());
    QosOverrides {
        file: o.file.clone(),
        line: o.line,
        mtu: o.mtu.or(Some(base.mtu)),
        per_direction: Some(per_direction),
        gid_index: o.gid_index.or(Some(base.gid_index)),
        classes,
        cnp_dscp: o.cnp_dscp.or(Some(base.cnp.dscp)),
        cnp_priority: o.cnp_priority.or(Some(base.cnp.priority)),
        cnp_line: o.cnp_line,
        ecn: (
            o.ecn.0.or(Some(base.ecn.min_kb)),
            o.ecn.1.or(Some(base.ecn.max_kb)),
            o.ecn.2.or(Some(base.ecn.probability)),
        ),
        ecn_line: o.ecn_line,
        watchdog: (
            o.watchdog.0.or(Some(base.pfc_watchdog.detection_ms)),
            o.watchdog.1.or(Some(base.pfc_watchdog.restoration_ms)),
            o.watchdog.2.or(Some(base.pfc_watchdog.polling_ms)),
        ),
        watchdog_line: o.watchdog_line,
        switch_mtu,
        addressing: o.addressing.clone(),
    }
}
