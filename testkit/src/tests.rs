//! The workspace keeps to this crate: no test (or source) file reaches into
//! another crate's folder with `#[path]`.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// The `#[path = "..."]` targets in `text`, with their line numbers.
fn path_attributes(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("#[path")
            && let Some(start) = rest.find('"')
            && let Some(len) = rest[start + 1..].find('"')
        {
            out.push((i + 1, rest[start + 1..start + 1 + len].to_string()));
        }
    }
    out
}

/// `path` with `.` and `..` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The problem with `file`'s (relative to the workspace root) `#[path]`
/// include of `target`, if it leaves the crate folder `file` is in.
fn crossing(file: &Path, line: usize, target: &str) -> Option<String> {
    let included = normalize(&file.parent().unwrap_or(Path::new("")).join(target));
    let home = file.components().next();
    (included.components().next() != home).then(|| {
        format!(
            "{}:{line}: `#[path = \"{target}\"]` includes {} from another crate's folder; \
             put what both crates need in testkit/ and depend on it",
            file.display(),
            included.display()
        )
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn a_path_include_that_leaves_its_crate_is_named() {
    let text = "mod a;\n#[path = \"../support/x.rs\"]\nmod x;\n  #[path = \"../../../other/y.rs\"]\nmod y;\n";
    assert_eq!(
        path_attributes(text),
        [
            (2, "../support/x.rs".to_string()),
            (4, "../../../other/y.rs".to_string())
        ]
    );
    let file = Path::new("planner/tests/it/main.rs");
    assert_eq!(crossing(file, 2, "../support/x.rs"), None);
    assert_eq!(crossing(file, 2, "sibling_tests.rs"), None);
    let e = crossing(file, 4, "../../../provisioner/tests/support/skip.rs").unwrap();
    assert!(
        e.starts_with("planner/tests/it/main.rs:4:")
            && e.contains("provisioner/tests/support/skip.rs"),
        "{e}"
    );
}

#[test]
fn no_path_include_crosses_crate_folders() {
    let root = crate::mutate::root();
    let mut problems = Vec::new();
    let mut members = 0;
    for entry in fs::read_dir(&root).expect("the workspace root") {
        let dir = entry.expect("a directory entry").path();
        if !dir.join("Cargo.toml").is_file() {
            continue;
        }
        members += 1;
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for file in files {
            let text =
                fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let rel = file.strip_prefix(&root).expect("under the root");
            for (line, target) in path_attributes(&text) {
                problems.extend(crossing(rel, line, &target));
            }
        }
    }
    assert!(
        members >= 4,
        "only {members} crate folders under {}",
        root.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
