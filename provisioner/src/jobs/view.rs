//! What the cluster looks like to placement, and what a submission
//! applies: the seam between the pure side of the provisioner (placement,
//! manifests) and [`crate::cluster`], the I/O that reads and writes the
//! Kubernetes API.

use serde::Serialize;

/// One pod that holds GPUs on a Node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodUse {
    /// Namespace of the pod.
    pub namespace: String,
    /// Name of the pod.
    pub name: String,
    /// GPUs the pod requests (sum over its containers, or its largest init
    /// container when that is more).
    pub gpus: u32,
}

/// One Kubernetes Node as placement sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeState {
    /// Node name.
    pub name: String,
    /// True when the Node's `Ready` condition is `True`.
    pub ready: bool,
    /// True when the Node is cordoned (`spec.unschedulable`).
    pub unschedulable: bool,
    /// GPUs the Node can give to pods (`status.allocatable` of the GPU
    /// resource).
    pub gpu_allocatable: u32,
    /// The Node's `InternalIP` (`status.addresses`), when the API gives
    /// one: where a pod with the host's network listens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The Node's `kubernetes.io/hostname` label, when it has one: the
    /// value Kueue's topology assignments name Nodes by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The Node's `topology.eflops.io/` labels (what `label-nodes`
    /// writes), when they were read from the API; `None` for a view that
    /// did not read them (`--offline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology_labels: Option<std::collections::BTreeMap<String, String>>,
    /// Pods bound to the Node, not yet Succeeded or Failed, that request
    /// GPUs.
    pub pods: Vec<PodUse>,
}

impl NodeState {
    /// GPUs requested by the pods on this Node.
    pub fn gpu_requested(&self) -> u32 {
        self.pods.iter().map(|p| p.gpus).sum()
    }

    /// GPUs still free for a new pod (zero when the Node is not Ready or
    /// cordoned).
    pub fn gpu_free(&self) -> u32 {
        if !self.ready || self.unschedulable {
            return 0;
        }
        self.gpu_allocatable.saturating_sub(self.gpu_requested())
    }
}

/// The Nodes of a cluster, sorted by name, and its DRA devices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterView {
    /// Every Node the API listed.
    pub nodes: Vec<NodeState>,
    /// ResourceSlices, allocated claims and this provisioner's claim
    /// templates (read for `[placement] mode = "dra"` only).
    pub dra: super::dra::DraView,
}

impl ClusterView {
    /// The Node named `name`.
    pub fn node(&self, name: &str) -> Option<&NodeState> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// The objects of one submission, ready for server-side apply.
///
/// `workload` (the Indexed Job or MPIJob; with DRA placement, the ConfigMap)
/// is applied first; every object in `owned` (ConfigMap, Service; with DRA,
/// Service, ResourceClaimTemplates and rank Pods) then gets an
/// `ownerReference` to it, so that deleting the workload deletes them too.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifests {
    /// The batch/v1 Job or kubeflow.org/v2beta1 MPIJob, or the ConfigMap
    /// that owns the rank Pods of a DRA placement.
    pub workload: serde_json::Value,
    /// The objects it owns, in the order they are applied and printed.
    pub owned: Vec<serde_json::Value>,
    /// The Secret with the probe's job secret
    /// ([`super::manifests::token_secret`]), which the rank pods read: it
    /// is applied before the workload (so that no pod starts without
    /// it), then owned by it like the others. Never serialised with the
    /// rest: only [`super::submit::Submission::secret_yaml`] writes it.
    #[serde(skip)]
    pub secret: Option<serde_json::Value>,
}

/// Whether the cluster serves the Workload API objects a submission can
/// write (`scheduling.k8s.io/v1alpha2` `workloads` and `podgroups`, as
/// discovery lists them; [`crate::cluster::workload_api`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum WorkloadApi {
    /// No cluster was asked (offline, or the job file said `off`).
    Unknown,
    /// Discovery lists both resources.
    Served,
    /// Discovery does not list them; `why` says what it answered.
    NotServed {
        /// What discovery answered, for people.
        why: String,
    },
}
