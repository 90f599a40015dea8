//! The upstream CRDs that manifests are checked against, from
//! `../shared/k8s-crds/` beside the workspace, and the one decision about
//! a missing copy: the test says it skipped (a fresh clone has no
//! `shared/`), unless `TESTS_NO_SKIP=1` is set (as `.ci/run` does), which
//! turns the skip into a failure. Included by every provisioner test crate
//! that reads a CRD (`#[path]`), so the decision has one home.

use std::io::Write as _;
use std::path::PathBuf;

/// Where the CRDs are looked for: `shared/k8s-crds` beside the workspace.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/k8s-crds"
    ))
}

/// True when `TESTS_NO_SKIP=1`: a test that cannot run fails.
pub fn no_skip() -> bool {
    std::env::var_os("TESTS_NO_SKIP").is_some_and(|v| v == "1")
}

/// The text of the CRD `file` for `test`, or `None` when `shared/` is not
/// beside the workspace: the test then prints that it skipped and returns.
/// Panics (fails the test) with `TESTS_NO_SKIP=1`, or when the file is
/// there but cannot be read.
pub fn text(test: &str, file: &str) -> Option<String> {
    let path = dir().join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let why = format!("{}: {e}", path.display());
            assert!(
                !no_skip(),
                "{test}: {why}; TESTS_NO_SKIP=1 makes a skipped test fail: put shared/ (with k8s-crds/) beside the workspace"
            );
            // Straight to stderr, past the test harness's capture, so the
            // skip shows in `cargo test` output.
            let _ = writeln!(
                std::io::stderr(),
                "skipped {test}: {why} (no shared/ beside the workspace; TESTS_NO_SKIP=1 makes this a failure)"
            );
            None
        }
        Err(e) => panic!("{test}: {}: {e}", path.display()),
    }
}
