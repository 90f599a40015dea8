//! The upstream CRDs that manifests are checked against, from
//! `../shared/k8s-crds/` beside the workspace; a missing copy is a skip
//! (a fresh clone has no `shared/`) as [`crate::skip`] decides. Used by the
//! provisioner's integration tests and its schema module's unit tests.

use std::path::PathBuf;

use crate::skip;

/// Where the CRDs are looked for: `shared/k8s-crds` beside the workspace.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/k8s-crds"
    ))
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
            skip::skipped(
                test,
                &format!("{}: {e}", path.display()),
                "put shared/ (with k8s-crds/) beside the workspace",
            );
            None
        }
        Err(e) => panic!("{test}: {}: {e}", path.display()),
    }
}
