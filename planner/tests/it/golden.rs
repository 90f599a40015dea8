//! Golden files: every directory under `planner/tests/golden/` is a case
//! with `args` (one argument per line), the expected `stdout`, and when
//! they are not empty or zero, `stderr` and the exit `code`. Inputs a case
//! needs sit in its directory and are named from the workspace root.
//!
//! `UPDATE_GOLDEN=1 cargo test -p planner --test it` rewrites the expected
//! files; review the diff before committing. `GOLDEN_ONLY=prefix` limits a
//! run (checking or rewriting) to the cases whose names start with it.

use std::fs;
use std::path::Path;

use crate::{planner, root};

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

#[test]
fn golden_cases() {
    let dir = root().join("planner/tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .expect("golden directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("args").is_file())
        .collect();
    let only = std::env::var("GOLDEN_ONLY").unwrap_or_default();
    cases.sort();
    assert!(cases.len() >= 20, "only {} golden cases", cases.len());
    cases.retain(|c| c.file_name().unwrap().to_string_lossy().starts_with(&only));
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let args_text = read(&case.join("args")).unwrap();
        let args: Vec<&str> = args_text.lines().filter(|l| !l.is_empty()).collect();
        let out = planner(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let code = out.status.code().unwrap_or(-1);
        if update {
            fs::write(case.join("stdout"), &stdout).unwrap();
            let _ = fs::remove_file(case.join("stderr"));
            let _ = fs::remove_file(case.join("code"));
            if !stderr.is_empty() {
                fs::write(case.join("stderr"), &stderr).unwrap();
            }
            if code != 0 {
                fs::write(case.join("code"), format!("{code}\n")).unwrap();
            }
            continue;
        }
        let want_stdout = read(&case.join("stdout")).unwrap_or_default();
        let want_stderr = read(&case.join("stderr")).unwrap_or_default();
        let want_code: i32 = read(&case.join("code")).map_or(0, |c| c.trim().parse().unwrap());
        if stdout != want_stdout {
            failures.push(format!(
                "{name}: stdout differs\n{}",
                first_difference(&want_stdout, &stdout)
            ));
        }
        if stderr != want_stderr {
            failures.push(format!(
                "{name}: stderr differs\n{}",
                first_difference(&want_stderr, &stderr)
            ));
        }
        if code != want_code {
            failures.push(format!("{name}: exit code {code}, expected {want_code}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) failed (UPDATE_GOLDEN=1 rewrites them):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i).copied(), g.get(i).copied());
        if a != b {
            return format!(
                "  line {}:\n  - {}\n  + {}",
                i + 1,
                a.unwrap_or("<end>"),
                b.unwrap_or("<end>")
            );
        }
    }
    String::new()
}
