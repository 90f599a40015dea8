//! Planner for topology-aware GPU clusters.
//!
//! Pure and deterministic: the functions here take parsed inputs and return
//! plans, reports and findings; they read no files and write none (the
//! `planner` binary does that). The same input always gives byte-identical
//! output.
//!
//! - [`inventory`]: the hardware inventory TOML, checked and expanded;
//! - [`servers`]: the congestionless-server rules of EFLOPS IV-A;
//! - [`gpus`]: the GPU models the planner knows, with their data sheets'
//!   throughput and memory bandwidth;
//! - [`design`]: BiGraph and fat-tree designs, producing a [`plan::Plan`];
//! - [`validate`]: plan invariants and as-built cabling checks;
//! - [`compare`]: BiGraph and fat-tree side by side;
//! - [`ranks`]: rank tables (EFLOPS Algorithm 1 for HDRM) and the per-step
//!   link-load proof;
//! - [`qos`]: the QoS and addressing intent a plan carries;
//! - [`routing`]: the routing intent a plan carries (static or eBGP with
//!   BFD, ASNs and timers);
//! - [`network`]: the route model: forwarding tables, per-flow ECMP routes,
//!   the address plan;
//! - [`expect`]: what one physical switch should show once configured (BGP
//!   sessions and routes per VRF, LLDP neighbours and speeds per port);
//! - [`render`]: switch configurations (Comware, SONiC, EOS, NVUE, FRR) and host
//!   files from a plan, and `check-qos`, the proof that its lossless
//!   priorities cannot deadlock.

pub mod algorithm;
pub mod checked;
pub mod compare;
pub mod cost;
pub mod design;
pub mod error;
pub mod estimate;
pub mod expect;
pub mod export;
pub mod fabric;
pub mod failures;
pub mod gpus;
pub mod input;
pub mod inventory;
pub mod iteration;
pub mod limits;
pub mod metrics;
pub mod names;
pub mod network;
pub mod pci;
pub mod plan;
pub mod plan_compact;
mod plan_json;
pub mod qos;
pub mod ranks;
pub mod render;
pub mod report;
pub mod routing;
pub mod servers;
pub mod text;
pub mod validate;
pub mod yaml;

pub use checked::CheckedPlan;
pub use error::{Error, Problem, Result};
