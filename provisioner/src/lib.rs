//! Binds a plan (from `planner design`) to real systems: a Kubernetes
//! cluster, the switches, the network between the GPUs, and a lab of
//! network namespaces on one machine. One module per system; the binary
//! (`src/bin/provisioner/`) turns flags into calls of these modules and
//! takes its exit code from [`Error::is_bad_input`].
//!
//! Layers, bottom first: no module imports one above it, which the
//! planner's `tests/it/layers.rs` holds for this crate too (for its
//! top-level modules and for the files of `push/` and `jobs/`).
//!
//! 0. [`probe`]: the collective engine, one rank of an allreduce over TCP
//!    as the planner's schedules say, and the cluster burn-in. [`push`]:
//!    pushes the planner's rendered switch configurations to the switches
//!    (one client per render vendor, chosen by an exhaustive match on
//!    [`planner::render::Vendor`]), with a journal and a confirm timer.
//!    `toml_lines` (private): the lines of keys of a TOML input. [`sot`]:
//!    the one module that talks to the operator's source of truth
//!    (Nautobot, NetBox): inventory import, plan push, as-built cabling.
//! 1. [`lab`]: builds the plan's fabric in network namespaces and runs the
//!    collective engine across it (FRR switches through [`push`]).
//! 2. [`error`]: the one error tree: this crate's own errors, with those of
//!    [`push`], [`probe`], [`lab`] and the planner as variants, and the one
//!    rule for the exit code.
//! 3. [`nodes`]: which Kubernetes Node each planned server is
//!    ([`nodes::bind`]), with the GPU-NIC sub-nodes, switch and BiGraph
//!    part each carries. [`schema`]: checks generated objects against the
//!    openAPIV3Schema of the CustomResourceDefinitions they belong to
//!    (MPIJob, Kueue Topology, Volcano HyperNode) before they reach a
//!    cluster.
//! 4. [`jobs`]: a job from its file to its objects, without a cluster: the
//!    job file, placement of ranks on free sub-nodes in HDRM order (whole
//!    Nodes, or each rank's GPU and NIC with DRA), the ConfigMap, Service
//!    and Indexed Job or MPIJob, and the rank check each rank pod runs
//!    first.
//! 5. [`cluster`]: the one module that talks to the Kubernetes API: it
//!    reads Nodes, Pods and DRA devices, labels Nodes, and applies, follows
//!    and deletes jobs.

pub mod cluster;
pub mod error;
pub mod jobs;
pub mod lab;
pub mod nodes;
pub mod probe;
pub mod push;
pub mod schema;
pub mod sot;
mod toml_lines;

pub use error::{Error, Result};
