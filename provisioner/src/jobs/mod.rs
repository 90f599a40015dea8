//! Submitting a job, without touching a cluster: [`job`] reads a job file,
//! [`placement`] puts its ranks on the sub-nodes of free Nodes in HDRM
//! order (whole Nodes, or with [`dra`] exactly the GPU and NIC of each
//! sub-node), [`manifests`] builds the ConfigMap, Service and Indexed Job,
//! MPIJob, or for DRA the claim templates and a JobSet of one Job per rank
//! (bare rank Pods on request), and [`submit::prepare`] does all three against
//! a [`view::ClusterView`], what the cluster holds. [`rank_check`] is the
//! guard each rank pod runs before it starts; [`labels`] the names every
//! object carries.
//!
//! Layers, bottom first (held by the planner's `tests/it/layers.rs`):
//! `labels`; `dra`; `job`, `view`; `placement`; `manifests`; `submit`;
//! `admission` (Kueue's admission: [`admission::pending`] and
//! [`admission::admit`]).
//! `rank_check` stands alone.

pub mod admission;
pub mod dra;
pub mod job;
pub mod labels;
pub mod manifests;
pub mod placement;
pub mod rank_check;
pub mod submit;
pub mod view;
