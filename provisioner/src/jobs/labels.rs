//! The names every object of a submitted job carries: the prefix of this
//! project's labels and annotations and `app.kubernetes.io/managed-by`.
//! Read by the manifests that set them, the DRA view and the cluster reader
//! that find our objects by them.

/// Prefix of this project's labels and annotations.
pub(crate) const PREFIX: &str = planner::export::labels::DEFAULT_PREFIX;

/// `app.kubernetes.io/managed-by` of every object.
pub(crate) const MANAGED_BY: &str = "eflops-provisioner";
