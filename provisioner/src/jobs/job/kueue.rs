//! The `[kueue]` table: what a job asks of Kueue's topology-aware
//! scheduling.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use planner::export::k8s_names::qualified_name_problem;

use super::{Bad, Launcher, PlacementMode};

/// What a job asks of Kueue's topology-aware scheduling (TAS): the
/// PodSet annotations of Kueue v0.19 (`apis/kueue/v1beta2/topology_types.go`
/// at v0.19.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KueueTopology {
    /// The node label of the topology level every pod must (or should)
    /// share a domain of.
    pub level: String,
    /// `kueue.x-k8s.io/podset-required-topology` when true, else
    /// `kueue.x-k8s.io/podset-preferred-topology`.
    pub required: bool,
    /// `kueue.x-k8s.io/podset-slice-required-topology` and
    /// `kueue.x-k8s.io/podset-slice-size`: each slice of this many pods
    /// in one domain of that level.
    pub slice: Option<(String, u32)>,
}

impl KueueTopology {
    /// The PodSet annotations Kueue reads from the pod template.
    pub fn annotations(&self) -> BTreeMap<&'static str, String> {
        let mut a = BTreeMap::new();
        let key = if self.required {
            "kueue.x-k8s.io/podset-required-topology"
        } else {
            "kueue.x-k8s.io/podset-preferred-topology"
        };
        a.insert(key, self.level.clone());
        if let Some((level, size)) = &self.slice {
            a.insert(
                "kueue.x-k8s.io/podset-slice-required-topology",
                level.clone(),
            );
            a.insert("kueue.x-k8s.io/podset-slice-size", size.to_string());
        }
        a
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKueue {
    #[serde(default)]
    required_topology: Option<String>,
    #[serde(default)]
    preferred_topology: Option<String>,
    #[serde(default)]
    slice_topology: Option<String>,
    #[serde(default)]
    slice_size: Option<i64>,
}

pub(super) fn check_kueue(
    raw: RawKueue,
    queued: bool,
    launcher: Launcher,
    mode: PlacementMode,
    bad: &mut Bad<'_>,
) -> Option<KueueTopology> {
    let before =
        |bad: &mut Bad<'_>, key: &str, what: String, fix: &str| bad(Some("kueue"), key, what, fix);
    let (level, required, key) = match (raw.required_topology, raw.preferred_topology) {
        (Some(l), None) => (l, true, "required_topology"),
        (None, Some(l)) => (l, false, "preferred_topology"),
        (Some(_), Some(_)) => {
            before(
                bad,
                "preferred_topology",
                "both required_topology and preferred_topology are set".to_string(),
                "keep one: Kueue reads one of the two PodSet annotations",
            );
            return None;
        }
        (None, None) => {
            bad(
                None,
                "kueue",
                "[kueue] names no topology level".to_string(),
                "give required_topology or preferred_topology, a node label of the Kueue Topology's levels (e.g. topology.eflops.io/fabric, as planner export --to kueue writes the Topology)",
            );
            return None;
        }
    };
    let mut ok = true;
    let mut label = |bad: &mut Bad<'_>, key: &str, l: &str| {
        if let Some(why) = qualified_name_problem(l) {
            ok = false;
            before(
                bad,
                key,
                format!("`{l}` {why}"),
                "name a node label key of the Kueue Topology's levels",
            );
        }
    };
    label(bad, key, &level);
    let slice = match (raw.slice_topology, raw.slice_size) {
        (None, None) => None,
        (Some(l), Some(n)) => {
            label(bad, "slice_topology", &l);
            match u32::try_from(n) {
                Ok(n) if n > 0 => Some((l, n)),
                _ => {
                    ok = false;
                    before(
                        bad,
                        "slice_size",
                        format!("{n} is not a pod count"),
                        "give the pods of one slice, at least 1",
                    );
                    None
                }
            }
        }
        (Some(_), None) | (None, Some(_)) => {
            ok = false;
            before(
                bad,
                "slice_size",
                "slice_topology and slice_size go together".to_string(),
                "give both (Kueue needs kueue.x-k8s.io/podset-slice-size with the slice level) or neither",
            );
            None
        }
    };
    if !queued {
        ok = false;
        before(
            bad,
            key,
            "[kueue] needs a queue: Kueue only schedules jobs of a LocalQueue".to_string(),
            "add queue = \"NAME\" at the top level",
        );
    }
    if launcher != Launcher::Indexed || mode != PlacementMode::WholeNode {
        ok = false;
        // Kueue v0.19.2 makes a PodSet per MPI replica type
        // (pkg/controller/jobs/mpijob/mpijob_controller.go, `PodSets`).
        let why = if mode == PlacementMode::Dra {
            "a DRA job's claim templates name its sub-nodes' devices when it is submitted, so Kueue cannot move its pods to other Nodes"
        } else {
            "Kueue admits an MPIJob as two PodSets (launcher and workers) and the table is computed for one PodSet of whole Nodes"
        };
        before(
            bad,
            key,
            format!("admission-time rank tables are made for whole-Node Indexed Jobs only: {why}"),
            "use launcher = \"indexed\" and mode = \"whole-node\", or leave out [kueue] to place the job at submit (with queue, Kueue then admits it on the Nodes submit chose, and provisioner controller marks its check Ready)",
        );
    }
    ok.then_some(KueueTopology {
        level,
        required,
        slice,
    })
}
