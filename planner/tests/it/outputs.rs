//! Transactional outputs (issue #13, finding 5): the files of one command
//! land together or not at all, temporaries never outlive a run, and every
//! output-side mistake exits 2 naming the path, with its cause said once.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::{planner, planner_in, root};

const PLAN: &str = "examples/data/eflops-4x16.plan.json";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

fn inventory() -> String {
    root()
        .join("topologies/eflops-4x16.toml")
        .to_string_lossy()
        .to_string()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with(".planner-"))
        .collect()
}

/// Exit 2, the message on stderr, and no cause printed twice.
fn refused(out: &Output, message: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(message), "{err}");
    assert!(!err.contains("failed to persist"), "{err}");
    assert!(err.matches("os error").count() <= 1, "{err}");
}

#[test]
fn issue13_design_kill_leaves_no_temp_file() {
    // A design whose plan takes a while to write; SIGTERM arrives while
    // the process holds an open file in the output directory.
    let dir = tempfile::tempdir().unwrap();
    let mut caught = false;
    for _ in 0..3 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_planner"))
            .args(["design", "--bigraph", "128x256", "--out", "big.json"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let fds = format!("/proc/{}/fd", child.id());
        let start = Instant::now();
        let writing = loop {
            if start.elapsed() > Duration::from_secs(120) {
                break false;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            let open_here = fs::read_dir(&fds)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| fs::read_link(e.path()).is_ok_and(|t| t.starts_with(dir.path())));
            if open_here {
                break true;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        if writing {
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        let _ = child.wait();
        assert_eq!(
            temporaries(dir.path()),
            Vec::<String>::new(),
            "a killed design leaves no temporary file"
        );
        if writing {
            assert!(
                !dir.path().join("big.json").exists(),
                "no plan from a killed design"
            );
            caught = true;
            break;
        }
        let _ = fs::remove_file(dir.path().join("big.json"));
    }
    assert!(caught, "the design was never seen writing its plan");
}

#[test]
fn issue13_stale_temp_file_removed_by_next_run() {
    let dir = tempfile::tempdir().unwrap();
    // A process id above Linux's largest: its run is surely gone.
    let stale = dir.path().join(".planner-4194399-Ab12Cd.tmp");
    fs::write(&stale, "half a plan").unwrap();
    let stale_dir = dir.path().join(".planner-4194398-Ef34Gh.tmp");
    fs::create_dir(&stale_dir).unwrap();
    fs::write(stale_dir.join("sw01.eos.cfg"), "half a config").unwrap();
    let out = planner_in(dir.path(), &["design", &inventory(), "--out", "plan.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!stale.exists() && !stale_dir.exists());
    let err = text(&out.stderr);
    assert!(
        err.contains(
            ".planner-4194399-Ab12Cd.tmp, a temporary left by a planner run that was killed"
        ),
        "{err}"
    );
    assert_eq!(names(dir.path()), ["plan.json"]);
}

#[cfg(unix)]
#[test]
fn issue13_out_symlink_writes_through() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("plans")).unwrap();
    fs::write(dir.path().join("plans/current.json"), "old").unwrap();
    std::os::unix::fs::symlink("plans/current.json", dir.path().join("plan.json")).unwrap();
    // A dangling link is written through too.
    std::os::unix::fs::symlink("plans/cables.csv", dir.path().join("cables.csv")).unwrap();
    let out = planner_in(
        dir.path(),
        &[
            "design",
            &inventory(),
            "--out",
            "plan.json",
            "--cables",
            "cables.csv",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for link in ["plan.json", "cables.csv"] {
        let meta = fs::symlink_metadata(dir.path().join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} stays a link");
    }
    let plan = fs::read_to_string(dir.path().join("plans/current.json")).unwrap();
    assert_eq!(
        plan,
        fs::read_to_string(root().join("examples/data/eflops-4x16.plan.json")).unwrap()
    );
    assert!(dir.path().join("plans/cables.csv").is_file());
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    assert_eq!(temporaries(&dir.path().join("plans")), Vec::<String>::new());
}

#[cfg(unix)]
#[test]
fn issue13_out_fifo_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("plan.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = planner_in(dir.path(), &["design", &inventory(), "--out", "plan.json"]);
    refused(&out, "--out plan.json is a FIFO, not a regular file");
    use std::os::unix::fs::FileTypeExt as _;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // A device is never replaced either, and neither is the directory
    // render writes into.
    let out = planner(&["design", "--bigraph", "4x16", "--out", "/dev/null"]);
    refused(&out, "--out /dev/null is a character device");
    let out = planner(&["render", PLAN, "--hosts", "--out", fifo.to_str().unwrap()]);
    refused(&out, "is a FIFO, not a directory");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn issue13_out_directory_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("plans")).unwrap();
    fs::create_dir(dir.path().join("plan.json")).unwrap();
    for target in ["plans", "plan.json"] {
        let out = planner_in(
            dir.path(),
            &["design", "--bigraph", "4x16", "--out", target],
        );
        refused(
            &out,
            &format!("--out {target} is a directory; give a file name"),
        );
    }
    let out = planner_in(
        dir.path(),
        &["export", PLAN, "--to", "kueue", "--out", "plans"],
    );
    // The plan path is relative to the workspace; the directory check
    // comes first.
    refused(&out, "--out plans is a directory");
    assert_eq!(names(dir.path()), ["plan.json", "plans"]);
}

#[test]
fn issue13_out_extension_mismatch_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&[&str], &str)] = &[
        (
            &["design", "--bigraph", "4x16", "--out", "plan.yaml"],
            "--out plan.yaml: the name ends in .yaml, but a plan is written as .json or .toml",
        ),
        (
            &["design", "--bigraph", "4x16", "--out", "plan"],
            "--out plan: the name has no extension",
        ),
        (
            &["design", "--bigraph", "4x16", "--cables", "cables.json"],
            "--cables cables.json: the name ends in .json, but the cable list is written as .csv",
        ),
        (
            &[
                "design",
                "--bigraph",
                "4x16",
                "--out",
                "p.json",
                "--cables",
                "c.txt",
            ],
            "--cables c.txt",
        ),
    ];
    for (args, message) in cases {
        refused(&planner_in(d, args), message);
    }
    let plan = root().join(PLAN);
    let plan = plan.to_str().unwrap();
    for (args, message) in [
        (
            vec!["export", plan, "--to", "kueue", "--out", "k.json"],
            "--out k.json: the name ends in .json, but YAML is written as .yaml or .yml",
        ),
        (
            vec![
                "export", plan, "--to", "labels", "--format", "json", "--out", "l.yaml",
            ],
            "but --format json is written as .json",
        ),
        (
            vec![
                "export",
                plan,
                "--to",
                "slurm-tree",
                "--out",
                "topology.yaml",
            ],
            "but topology.conf text is written as .conf",
        ),
        (
            vec!["simulate", plan, "--size", "1MiB", "--plot", "fig.pdf"],
            "--plot",
        ),
    ] {
        refused(&planner_in(d, &args), message);
    }
    assert!(names(d).is_empty(), "{:?}", names(d));
    // What the extensions say is what is written.
    let out = planner_in(d, &["design", "--bigraph", "4x16", "--out", "PLAN.TOML"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let toml = fs::read_to_string(d.join("PLAN.TOML")).unwrap();
    assert!(!toml.trim_start().starts_with('{'), "TOML, not JSON");
    let out = planner_in(d, &["export", plan, "--to", "kueue", "--out", "k.yml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn issue13_design_cables_out_pairing() {
    let dir = tempfile::tempdir().unwrap();
    // --out cannot be written: no cable list of that design lands either.
    let out = planner_in(
        dir.path(),
        &[
            "design",
            &inventory(),
            "--cables",
            "cables.csv",
            "--out",
            "missing/plan.json",
        ],
    );
    refused(
        &out,
        "--out missing/plan.json: directory missing does not exist",
    );
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    // The same file for both (through a link) is refused.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("x.json", dir.path().join("x.csv")).unwrap();
        let out = planner_in(
            dir.path(),
            &[
                "design",
                &inventory(),
                "--out",
                "x.json",
                "--cables",
                "x.csv",
            ],
        );
        refused(&out, "--out x.json and --cables x.csv name the same file");
        fs::remove_file(dir.path().join("x.csv")).unwrap();
    }
    // Both land together: the pair always describes one design.
    let out = planner_in(
        dir.path(),
        &[
            "design",
            "--bigraph",
            "4x16",
            "--out",
            "plan.json",
            "--cables",
            "cables.csv",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = planner_in(
        dir.path(),
        &[
            "design",
            "--bigraph",
            "8x16",
            "--out",
            "plan.json",
            "--cables",
            "cables.csv",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = planner_in(
        dir.path(),
        &["validate", "plan.json", "--cabling", "cables.csv"],
    );
    assert!(v.status.success(), "{}", text(&v.stdout));
    assert_eq!(names(dir.path()), ["cables.csv", "plan.json"]);
}

/// Renders EOS configs of the example plan into `dir`.
fn render_eos(dir: &Path) -> Output {
    planner(&[
        "render",
        PLAN,
        "--vendor",
        "eos",
        "--out",
        dir.to_str().unwrap(),
    ])
}

#[test]
fn issue13_render_failure_keeps_old_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    let out = render_eos(&cfg);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let files = names(&cfg);
    assert!(files.len() > 5, "{files:?}");
    for f in &files {
        fs::write(cfg.join(f), "old").unwrap();
    }
    // A directory where the fifth file goes: today's render fails there,
    // and the four before it must not have been replaced.
    fs::remove_file(cfg.join(&files[4])).unwrap();
    fs::create_dir(cfg.join(&files[4])).unwrap();
    let out = render_eos(&cfg);
    refused(
        &out,
        "it is a directory; remove it or render into another --out",
    );
    for f in files.iter().filter(|f| *f != &files[4]) {
        assert_eq!(fs::read_to_string(cfg.join(f)).unwrap(), "old", "{f}");
    }
    assert_eq!(temporaries(tmp.path()), Vec::<String>::new());
}

#[test]
fn issue13_render_swap_keeps_other_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    fs::create_dir(&cfg).unwrap();
    fs::write(cfg.join("notes.txt"), "mine").unwrap();
    fs::create_dir(cfg.join("archive")).unwrap();
    fs::write(cfg.join("archive/sw01.eos.cfg"), "last year").unwrap();
    fs::write(cfg.join("sw01.eos.cfg"), "old").unwrap();
    let out = render_eos(&cfg);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(fs::read_to_string(cfg.join("notes.txt")).unwrap(), "mine");
    assert_eq!(
        fs::read_to_string(cfg.join("archive/sw01.eos.cfg")).unwrap(),
        "last year"
    );
    assert_ne!(fs::read_to_string(cfg.join("sw01.eos.cfg")).unwrap(), "old");
    assert_eq!(names(tmp.path()), ["cfg"], "no temporary directory left");
    // Rendering into the working directory would swap it away.
    let out = planner_in(
        &cfg,
        &[
            "render",
            &root().join(PLAN).to_string_lossy(),
            "--hosts",
            "--out",
            ".",
        ],
    );
    refused(&out, "--out . is the working directory or holds it");
}
