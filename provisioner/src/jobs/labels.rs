//! The names every object of a submitted job carries: the prefix of this
//! project's labels and annotations and `app.kubernetes.io/managed-by`.
//! Read by the manifests that set them, the DRA view and the cluster reader
//! that find our objects by them.

/// Prefix of this project's labels and annotations.
pub(crate) const PREFIX: &str = planner::export::labels::DEFAULT_PREFIX;

/// `app.kubernetes.io/managed-by` of every object.
pub(crate) const MANAGED_BY: &str = "eflops-provisioner";

/// The label of the bare rank Pods that `provisioner controller` stops as
/// a whole when one fails (`[failure] gang = "controller"`), with the
/// value [`GANG_CONTROLLER`].
pub(crate) fn gang_label() -> String {
    format!("{PREFIX}gang")
}

/// See [`gang_label`].
pub(crate) const GANG_CONTROLLER: &str = "controller";
