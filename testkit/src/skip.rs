//! The one decision about a test that cannot run here (no `shared/` beside
//! the workspace, not root, a package missing): it says it skipped, unless
//! `TESTS_NO_SKIP=1` is set (as `.ci/run` does), which turns the skip into a
//! failure.

use std::io::Write as _;

/// True when `TESTS_NO_SKIP=1`: a test that cannot run fails.
pub fn no_skip() -> bool {
    std::env::var_os("TESTS_NO_SKIP").is_some_and(|v| v == "1")
}

/// Reports that `test` skipped because of `why`, and what would let it
/// run (`fix`); panics (fails the test) with `TESTS_NO_SKIP=1`.
pub fn skipped(test: &str, why: &str, fix: &str) {
    assert!(
        !no_skip(),
        "{test}: {why}; TESTS_NO_SKIP=1 makes a skipped test fail: {fix}"
    );
    // Straight to stderr, past the test harness's capture, so the skip
    // shows in `cargo test` output.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: {why} ({fix}; TESTS_NO_SKIP=1 makes this a failure)"
    );
}
