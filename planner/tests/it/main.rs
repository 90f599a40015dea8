//! Integration tests of the `planner` binary (one test crate, as ripgrep
//! does): golden files for every command and the behaviours a user relies
//! on (exit codes, atomic writes, determinism).

mod bounds;
mod checked;
mod cli;
mod compact;
mod cost;
mod docs;
mod export;
mod frr;
mod fuzz;
mod fuzz_found;
mod golden;
mod iteration;
mod layers;
mod names;
mod outputs;
mod render;
mod simulate;

use std::path::{Path, PathBuf};
use std::process::Output;

use testkit::skip;

/// The workspace root: commands run there so paths in outputs are short.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Runs `planner` with `args` in `dir`.
pub fn planner_in(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(dir)
        // Progress lines start after a second; on a loaded machine a
        // golden case may take longer and would print one. Tests of the
        // progress output run the binary themselves (simulate.rs).
        .env("PLANNER_PROGRESS_AFTER_MS", "3600000")
        .output()
        .expect("run planner")
}

/// Runs `planner` with `args` in the workspace root.
pub fn planner(args: &[&str]) -> Output {
    planner_in(&root(), args)
}
