//! Scheduler exports from a plan: Kubernetes node labels, a Kueue
//! `Topology`, Volcano `HyperNode`s and Slurm `topology.conf` (tree and
//! block forms).
//!
//! Every scheduler format is a tree and a BiGraph is not one: each export
//! comes with the list of what the translation loses.

pub mod labels;

pub use labels::{DEFAULT_PREFIX, NodeLabels, check_prefix, label_value_problem, node_labels};
