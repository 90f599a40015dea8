//! Issue #13: the provisioner reads plans through the planner's whole
//! check. A hand-edited plan is refused before anything is placed, with
//! exit code 2 and the plan file named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";
const JOB: &str = "examples/allreduce-32.job.toml";

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Runs the binary from the workspace root with no cluster in sight.
fn provisioner(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args(args)
        .current_dir(root())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home)
        .output()
        .expect("run provisioner")
}

/// The example plan with `edit` applied to its JSON text, in `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(String) -> String) -> String {
    let json = std::fs::read_to_string(root().join(PLAN)).unwrap();
    let bad = edit(json.clone());
    assert_ne!(bad, json, "the edit changed nothing");
    let path = dir.join(name);
    std::fs::write(&path, bad).unwrap();
    path.display().to_string()
}

/// A fresh directory for one test (removed at the end of the test).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("prov-checked-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn refused(out: &Output, file: &str, want: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "nothing is placed or printed");
    assert!(!err.contains("internal error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(&format!("{file}: ")), "{err}");
    assert!(err.contains(want), "want `{want}` in:\n{err}");
}

#[test]
fn issue13_6_submit_on_a_server_listing_a_missing_sub_node() {
    let dir = TempDir::new("missing");
    let file = edited(dir.path(), "missing.json", |j| {
        j.replace(
            r#"{"name": "node10", "sub_nodes": [36, 37, 38, 39],"#,
            r#"{"name": "node10", "sub_nodes": [36, 37, 38, 99],"#,
        )
    });
    for args in [
        vec!["submit", JOB, "--plan", &file, "--offline"],
        vec!["submit", JOB, "--plan", &file, "--dry-run", "--offline"],
        vec!["nodes", &file],
    ] {
        let out = provisioner(&args, dir.path());
        refused(
            &out,
            &file,
            "server node10: it lists sub-node 99, but sub_node_list holds 64",
        );
    }
}

#[test]
fn issue13_6_submit_on_a_sub_node_no_server_lists() {
    // Ranks used to reach a sub-node of "a server with no Node" and fail
    // with an internal error; now the load names the server and sub-node.
    let dir = TempDir::new("orphan");
    let file = edited(dir.path(), "orphan.json", |j| {
        j.replace(
            r#"{"name": "node10", "sub_nodes": [36, 37, 38, 39],"#,
            r#"{"name": "node10", "sub_nodes": [37, 38, 39],"#,
        )
    });
    let out = provisioner(&["submit", JOB, "--plan", &file, "--offline"], dir.path());
    refused(
        &out,
        &file,
        "sub-node node10/sn0: server node10 does not list it",
    );
}

#[test]
fn issue13_4_submit_with_every_gpu_index_of_node01_zero() {
    let dir = TempDir::new("gpu");
    let file = edited(dir.path(), "gpu.json", |j| {
        let mut out = String::new();
        for line in j.lines() {
            if line.contains(r#""server": "node01""#) {
                let i = line.find(r#""gpu_index": "#).unwrap() + 13;
                let end = i + line[i..].find(',').unwrap();
                out.push_str(&line[..i]);
                out.push('0');
                out.push_str(&line[end..]);
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    });
    let out = provisioner(&["submit", JOB, "--plan", &file, "--offline"], dir.path());
    refused(
        &out,
        &file,
        "gpu_index 0 is also the index of GPU gpu0 of server node01",
    );
}
