//! The operator's source of truth (Nautobot, NetBox): the one module that
//! talks to it. [`import`] reads devices, interfaces, inventory items and
//! custom fields into an inventory TOML; [`push`] writes the plan's
//! switches, port VLANs, planned cables, VLANs, prefixes and addresses,
//! tagged as the plan's, idempotently; [`cabling`] reads the cables back
//! as observed cabling for the planner's `validate_cabling`. [`client`]
//! is the HTTP side (token, TLS, pagination, retries). The planner stays
//! pure: it never sees HTTP, only the TOML and the observed cables.
//! docs/source-of-truth.md has the mapping and the commands.

pub mod cabling;
pub mod client;
mod desired;
pub mod error;
pub mod import;
pub mod push;
mod query;
mod state;

pub use client::{Client, Flavor, Limits, Settings, TokenSource};
pub use error::SotError;
