//! Binds a plan (from `planner design`) to a Kubernetes cluster.
//!
//! This crate starts with what every later step needs and can check without
//! a cluster: which Kubernetes Node each planned server is, and which
//! GPU-NIC sub-nodes, switch and BiGraph part each Node carries
//! ([`nodes::bind`]). Labels, placement and jobs build on it.
//! [`schema`] checks generated objects against the openAPIV3Schema of the
//! CustomResourceDefinitions they belong to (MPIJob, Kueue Topology,
//! Volcano HyperNode) before they reach a cluster. [`cluster`] is the one
//! module that talks to the Kubernetes API: it reads Nodes and Pods, labels
//! Nodes, and applies, follows and deletes jobs.

pub mod cluster;
pub mod error;
pub mod nodes;
pub mod schema;
pub mod view;

pub use error::{Error, Result};
