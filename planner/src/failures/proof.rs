//! The proof of one failure: what it cuts and whether the lossless
//! priorities stay deadlock-free, from the whole fabric's work done once.
//!
//! The route model of the whole plan is built once and each failed
//! fabric is that model with the failure's faults added
//! ([`Network::into_avoiding`]: the same faults, checks and tables as
//! [`Network::avoiding`], without reading the plan again). The route
//! entries the failure can change are listed again, the rest taken from
//! the whole fabric's routes ([`FailedQos::reroute`]); the switch pairs it
//! cuts apart are read from those entries, and `check-qos` on the failed
//! fabric is proven from the whole fabric's proof and them ([`FailedQos`],
//! whose module says why that is the full check's answer, and which runs
//! the full check whenever it cannot show it). `tests::the_prover_equals_the_full_computation` holds
//! both equal to the computation from scratch on every single failure.

use std::collections::HashSet;

use crate::checked::CheckedPlan;
use crate::error::Result;
use crate::network::reroute::Rerouted;
use crate::network::{Avoid, Network};
use crate::render::{FailedQos, HostMarking};

/// What one failure does to the fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proof {
    /// Sub-nodes cut off.
    pub lost: Vec<usize>,
    /// Pairs of live switches with sub-nodes (same plane) that lost every
    /// route, `(from, to)`.
    pub unreachable: Vec<(usize, usize)>,
    /// True when `check-qos` finds nothing on the failed fabric.
    pub qos_ok: bool,
    /// What it found, `kind: object` each.
    pub qos_findings: Vec<String>,
}

/// Proves the failures of one plan.
pub(crate) struct Prover<'p> {
    plan: &'p CheckedPlan,
    whole: Network<'p>,
    /// Switches that carry sub-nodes.
    carrying: Vec<bool>,
    /// True when the whole fabric's routes lead to every switch that
    /// carries sub-nodes, so the route entries a failure lists again
    /// ([`FailedQos::reroute`]) hold every pair it cuts.
    cut_from_rerouted: bool,
    pub(super) qos: FailedQos<'p>,
}

impl<'p> Prover<'p> {
    /// The whole fabric's route model and QoS proof of `plan`, with the
    /// hosts marking as `planner render --hosts` sets them up.
    pub(crate) fn new(plan: &'p CheckedPlan) -> Result<Self> {
        let whole = plan.network()?;
        let names: HashSet<&str> = plan
            .sub_node_list
            .iter()
            .map(|sn| sn.switch.as_str())
            .collect();
        let carrying: Vec<bool> = plan
            .switch_list
            .iter()
            .map(|s| names.contains(s.name.as_str()))
            .collect();
        let qos = FailedQos::new(plan, &HostMarking::default());
        let cut_from_rerouted = (carrying.iter().enumerate()).all(|(s, &c)| !c || qos.routes_to(s));
        Ok(Self {
            plan,
            whole,
            carrying,
            cut_from_rerouted,
            qos,
        })
    }

    /// What the failures `failed` (together) do.
    pub(crate) fn prove(&self, failed: &[Avoid]) -> Result<Proof> {
        let net = self.whole.clone().into_avoiding(failed)?;
        let rerouted = self.qos.reroute(&net);
        let listed = rerouted.as_deref().filter(|_| self.cut_from_rerouted);
        let (lost, unreachable) = cut(self.plan, &net, &self.carrying, listed);
        let qos = self.qos.check_rerouted(failed, &net, rerouted.as_deref());
        Ok(Proof {
            lost,
            unreachable,
            qos_ok: qos.ok,
            qos_findings: qos
                .findings
                .iter()
                .map(|f| format!("{}: {}", f.kind, f.object))
                .collect(),
        })
    }
}

/// The sub-nodes a failure cuts off and the pairs of live switches with
/// sub-nodes that lost every route (within a plane), on the route model's
/// failed fabric `net`; `carrying` says which switches have sub-nodes.
/// With `rerouted`, the route entries the failure lists again
/// ([`FailedQos::reroute`], given only when the whole fabric routes to
/// every carrying switch), the pairs are read from those: every other
/// entry is the whole fabric's, which has a route.
#[allow(clippy::type_complexity)]
pub(crate) fn cut(
    plan: &CheckedPlan,
    net: &Network<'_>,
    carrying: &[bool],
    rerouted: Option<&[Rerouted]>,
) -> (Vec<usize>, Vec<(usize, usize)>) {
    let lost: Vec<usize> = (0..plan.sub_node_list.len())
        .filter(|&sn| net.cut_off(sn))
        .collect();
    let same_plane = |a: usize, b: usize| plan.switch_list[a].plane == plan.switch_list[b].plane;
    if let Some(rerouted) = rerouted {
        let mut unreachable: Vec<(usize, usize)> = (rerouted.iter())
            .filter(|r| r.hops.is_empty() && carrying[r.switch] && carrying[r.target])
            .map(|r| (r.switch, r.target))
            .filter(|&(a, b)| same_plane(a, b))
            .collect();
        unreachable.sort_unstable();
        return (lost, unreachable);
    }
    let hosts: Vec<usize> = (0..plan.switch_list.len())
        .filter(|&s| !net.is_avoided_switch(s) && carrying[s])
        .collect();
    let mut unreachable = Vec::new();
    for &a in &hosts {
        for &b in &hosts {
            if a != b && same_plane(a, b) && !net.reachable(a, b) {
                unreachable.push((a, b));
            }
        }
    }
    (lost, unreachable)
}
