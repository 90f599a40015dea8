//! The provisioner's integration tests, one module per system they drive,
//! in one test binary: each binary links the whole Kubernetes, TLS and SSH
//! stack, so thirteen of them cost CI minutes of linking for nothing.
//! Run one part with `cargo test -p provisioner --test it MODULE` (for
//! example `cargo test -p provisioner --test it push_ssh`); the shared test
//! servers and helpers are in `../support/`, included by the modules that
//! use them (those several modules share are declared here, once).

mod checked_plan;
mod cli;
mod cli_cluster;
mod crd_exports;
mod fuzz;
mod fuzz_kube;
mod lab;
mod lab_bgp;
mod lab_mpi;
mod mock_api;
mod probe;
mod probe_burnin;
mod probe_hostile;
mod push;
mod push_ssh;
// libtest starts tests in name order, 16 at a time (.cargo/config.toml). The
// Nautobot round trip takes about four minutes, mostly Nautobot's own
// writes: named to sort first, it starts at once and the other tests run
// beside it instead of after it (docs/benchmarks.md, "The whole of
// `.ci/run`"). `cargo test ... sot` still selects it.
#[path = "sot.rs"]
mod a_sot;
mod sot_import;
mod sot_nautobot;
mod sot_netbox;
mod submit;
mod workload_api;

#[path = "../support/dra.rs"]
mod dra;
#[path = "../support/http_server.rs"]
mod http_server;
#[path = "../support/lab.rs"]
mod lab_support;

use testkit::{crds, skip};
