//! Test support that more than one of the workspace's crates uses, in one
//! place instead of `#[path]` includes across crate folders:
//!
//! - [`mutate`]: the fuzz harness's mutations of the bundled inputs (the
//!   planner's and the provisioner's property tests, and the campaign);
//! - [`campaign`]: the fuzz campaign over the real `planner` and
//!   `provisioner` binaries (a short one in the planner's tests, the long
//!   one in `examples/fuzz_campaign.rs`);
//! - [`skip`]: the one rule for a test that cannot run here: it says it
//!   skipped, unless `TESTS_NO_SKIP=1` (as `.ci/run` sets) makes it fail;
//! - [`crds`]: the upstream CRDs that manifests are checked against;
//! - [`ports`]: loopback ports for meshes of ranks, never shared by tests
//!   running at once.
//!
//! It needs only `std`, so it compiles beside the libraries it tests, and
//! it never depends on them: a crate's own unit tests can use it without
//! seeing a second copy of their crate.

pub mod campaign;
pub mod crds;
pub mod mutate;
pub mod ports;
pub mod skip;

#[cfg(test)]
mod tests;
