//! Binds a plan (from `planner design`) to a Kubernetes cluster.
//!
//! This crate starts with what every later step needs and can check without
//! a cluster: which Kubernetes Node each planned server is, and which
//! GPU-NIC sub-nodes, switch and BiGraph part each Node carries
//! ([`nodes::bind`]). Jobs build on it without touching a cluster:
//! [`job`] reads a job file, [`placement`] puts its ranks on the
//! sub-nodes of free Nodes in HDRM order, [`manifests`] builds the
//! ConfigMap, Service and Indexed Job or MPIJob, and [`submit::prepare`]
//! does all three against a [`view::ClusterView`]. [`rank_check`] is the
//! guard each rank pod runs before it starts.
//! [`schema`] checks generated objects against the openAPIV3Schema of the
//! CustomResourceDefinitions they belong to (MPIJob, Kueue Topology,
//! Volcano HyperNode) before they reach a cluster. [`cluster`] is the one
//! module that talks to the Kubernetes API: it reads Nodes and Pods, labels
//! Nodes, and applies, follows and deletes jobs. [`sot`] is the one module
//! that talks to the operator's source of truth (Nautobot, NetBox).

pub mod cluster;
pub mod dra;
pub mod error;
pub mod job;
pub mod lab;
pub mod manifests;
pub mod nodes;
pub mod placement;
pub mod probe;
pub mod push;
pub mod rank_check;
pub mod schema;
pub mod sot;
pub mod submit;
mod toml_lines;
pub mod view;

pub use error::{Error, Result};
