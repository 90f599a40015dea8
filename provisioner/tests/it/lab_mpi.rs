//! Real Open MPI in the lab (issue #32): a tiny MPI allreduce
//! (`tests/data/mpi_allreduce.c`, built with `mpicc`) started by `mpirun`
//! with the files `provisioner submit` wrote for an MPIJob (its ConfigMap's
//! `ranks.csv`, `rank-env.csv`, `rankfile`, `rank-env.sh` and `mpirun.sh`,
//! unmodified), across a lab's namespaces, with the per-link byte counters
//! of `lab measure` set beside what `verify-ranks` predicts for the same
//! table.
//!
//! The plan, `tests/data/bigraph-2x8-1sn.plan.json`, is the 2x8 BiGraph
//! with one sub-node (GPU, NIC, socket) per server: `planner design
//! --bigraph 2x8 --server-sub-nodes 1`. Every Node of the job is then one
//! namespace of the lab, as the rankfile names Nodes, and its one socket
//! is the one socket of this machine. Only the launch agent and
//! `EFLOPS_DIR` come from the lab: `OMPI_MCA_plm_rsh_agent` makes `mpirun`
//! start its daemons with `provisioner lab exec --ssh` where a cluster
//! uses ssh.
//!
//! Needs root, iproute2 and Open MPI (`openmpi-bin`, `libopenmpi-dev`;
//! `.ci/install-deps` installs them): without them these say they
//! skipped, and with `TESTS_NO_SKIP=1` that is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::lab_support::Lab;
use crate::skip;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plan() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/bigraph-2x8-1sn.plan.json")
        .display()
        .to_string()
}

/// Bytes per rank of the measured allreduce.
const BYTES: &str = "4194304";

/// What a test needs: the lock, and the allreduce program built with
/// mpicc; `None` (after saying it skipped) when root or Open MPI is
/// missing.
fn can_run(test: &str) -> Option<(std::sync::MutexGuard<'static, ()>, tempfile::TempDir)> {
    if !provisioner::lab::sys::is_root() {
        skip::skipped(
            test,
            "not root",
            "run the tests as root (a lab makes network namespaces)",
        );
        return None;
    }
    for tool in ["mpirun", "orted", "mpicc", "unshare"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            skip::skipped(
                test,
                &format!("no `{tool}`"),
                "install Open MPI (`.ci/install-deps`: openmpi-bin, libopenmpi-dev) and util-linux",
            );
            return None;
        }
    }
    let guard = crate::lab_support::serial();
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mpi_allreduce.c");
    let out = Command::new("mpicc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(dir.path().join("mpi_allreduce"))
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc {}: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((guard, dir))
}

/// What `provisioner submit --offline` wrote for an MPIJob: the ConfigMap's
/// files (in `files`), and the launcher container's environment and the
/// command it gives `mpi-launch.sh` after `--`.
struct Submitted {
    files: PathBuf,
    env: Vec<(String, String)>,
    command: Vec<String>,
}

/// The MPIJob of `ranks` ranks running the fixture with `algorithm`, as
/// `provisioner submit --offline` writes it, its files in `dir/<job>/`.
fn submit(dir: &Path, job: &str, ranks: usize, algorithm: &str, mark: &Path) -> Submitted {
    let exe = dir.join("mpi_allreduce");
    let file = dir.join(format!("{job}.job.toml"));
    std::fs::write(
        &file,
        format!(
            r#"name = "{job}"
namespace = "lab"
image = "registry.example.com/mpi-allreduce:1"
command = ["{exe}"]
args = ["{BYTES}", "{mark}"]
ranks = {ranks}
algorithm = "{algorithm}"
launcher = "mpi"
ssh_port = 2222

[resources]
gpu = "nvidia.com/gpu"
"#,
            exe = exe.display(),
            mark = mark.display(),
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .arg("submit")
        .arg(&file)
        .args(["--plan", &plan(), "--offline", "--format", "json"])
        .arg("--secret-out")
        .arg(dir.join(format!("{job}.secret.yaml")))
        .current_dir(workspace())
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "submit {job}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = list["items"].as_array().unwrap();
    let map = items
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("a ConfigMap");
    let files = dir.join(job);
    std::fs::create_dir_all(&files).unwrap();
    for (name, text) in map["data"].as_object().unwrap() {
        std::fs::write(files.join(name), text.as_str().unwrap()).unwrap();
    }
    let mpijob = items
        .iter()
        .find(|o| o["kind"] == "MPIJob")
        .expect("an MPIJob");
    let launcher =
        &mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
    // The job's Secret, which the kubelet reads for `secretKeyRef`.
    let secret: Value = serde_norway::from_str(
        &std::fs::read_to_string(dir.join(format!("{job}.secret.yaml"))).unwrap(),
    )
    .unwrap();
    let env = launcher["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = match e.pointer("/valueFrom/secretKeyRef/key") {
                Some(key) => {
                    let data = secret["data"][key.as_str().unwrap()].clone();
                    let bytes: k8s_openapi::ByteString = serde_json::from_value(data).unwrap();
                    String::from_utf8(bytes.0).unwrap()
                }
                None => e["value"].as_str().unwrap().to_string(),
            };
            (e["name"].as_str().unwrap().to_string(), value)
        })
        .collect();
    let words: Vec<String> = launcher["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let after = words
        .iter()
        .position(|w| w == "--")
        .expect("mpi-launch.sh -- COMMAND");
    Submitted {
        files,
        env,
        command: words[after + 1..].to_vec(),
    }
}

/// Rank 0's Node in `rank-env.csv`: where mpirun runs.
fn rank0_node(files: &Path) -> String {
    let text = std::fs::read_to_string(files.join("rank-env.csv")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("0,"))
        .expect("rank 0 in rank-env.csv");
    row.split(',').nth(1).unwrap().to_string()
}

/// `lab measure` of `mpirun.sh rankfile COMMAND` run on rank 0's Node with
/// the launcher's environment, beside verify-ranks for the job's
/// `ranks.csv` and `algorithm`. Besides the launch agent, the lab sets
/// `mpi_yield_when_idle` (16 ranks that poll on two cores would starve
/// the kernel's forwarding; it changes no byte).
fn measure(lab: &Lab, job: &Submitted, algorithm: &str) -> (Output, Value) {
    let files = &job.files;
    let exe = env!("CARGO_BIN_EXE_provisioner");
    let state_dir = lab.dir.path().display().to_string();
    let agent = format!(
        "{exe} lab exec --name {} --state-dir {state_dir} --ssh --",
        lab.name
    );
    let out = Command::new(exe)
        .args([
            "lab",
            "measure",
            "--name",
            &lab.name,
            "--state-dir",
            &state_dir,
        ])
        .arg("--table")
        .arg(files.join("ranks.csv"))
        .args([
            "--algorithm",
            algorithm,
            "--engine",
            "openmpi",
            "--bytes",
            BYTES,
            "--tolerance",
            "0.05",
        ])
        .args(["--format", "json"])
        .args(["--", exe, "lab", "exec", "--name", &lab.name, "--state-dir"])
        .arg(&state_dir)
        .arg(rank0_node(files))
        .args(["--", "sh"])
        .arg(files.join("mpirun.sh"))
        .arg(files.join("rankfile"))
        .args(&job.command)
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        .env("EFLOPS_DIR", files)
        .env("OMPI_MCA_plm_rsh_agent", agent)
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, report)
}

fn succeeded(out: &Output, report: &Value) {
    assert!(
        out.status.success() && report["exit_code"] == 0,
        "{}\n{report:#}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Links that carried bytes of the run.
fn used(report: &Value) -> usize {
    report["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["bytes"].as_u64().unwrap() > 0)
        .count()
}

#[test]
fn open_mpi_runs_the_submitted_hdrm_table_with_one_flow_per_link_and_hd_shares_as_predicted() {
    let test = "open_mpi_runs_the_submitted_hdrm_table";
    let Some((_alone, dir)) = can_run(test) else {
        return;
    };
    let lab = Lab::new("tmpi");
    lab.json(&["up", &plan(), "--rate", "100mbit"]);
    let mark = lab.dir.path().join("tmpi.run").join("mark.sock");

    // The rankfile binds every rank to its socket, never one core.
    let job = submit(dir.path(), "ar16", 16, "hdrm", &mark);
    let rankfile = std::fs::read_to_string(job.files.join("rankfile")).unwrap();
    assert_eq!(rankfile.lines().count(), 16);
    assert!(
        rankfile.lines().all(|l| l.ends_with(" slot=0:*")),
        "{rankfile}"
    );

    // HDRM at 16 ranks: Open MPI's Rabenseifner puts on every directed
    // inter-switch link the bytes verify-ranks predicts, and the
    // prediction has at most one flow per link in every step.
    let (out, hdrm) = measure(&lab, &job, "hdrm");
    succeeded(&out, &hdrm);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"wrong\": 0"), "{stderr}");
    assert_eq!(hdrm["predicted_max_flows"], 1, "{hdrm:#}");
    assert_eq!(hdrm["mismatches"], 0, "{hdrm:#}");
    assert!(used(&hdrm) >= 16, "{hdrm:#}");

    // The same job with hd in plan order: the predicted sharing (two
    // flows on a link in some step), and Open MPI's bytes match it link
    // by link.
    let job = submit(dir.path(), "hd16", 16, "hd", &mark);
    let (out, hd) = measure(&lab, &job, "hd");
    succeeded(&out, &hd);
    assert!(hd["predicted_max_flows"].as_u64().unwrap() >= 2, "{hd:#}");
    assert_eq!(hd["mismatches"], 0, "{hd:#}");
}

/// One message of Open MPI's Rabenseifner allreduce: (step, from rank, to
/// rank, bytes).
type Message = (usize, usize, usize, u64);

/// Open MPI's Rabenseifner allreduce of `count` f32 elements on `p`
/// ranks, message by message, as Open MPI 4.1 runs it
/// (`ompi_coll_base_allreduce_intra_redscat_allgather` in
/// `ompi/mca/coll/base/coll_base_allreduce.c`, v4.1.x; the same in
/// v5.0.x), written here from that source to test the lab against, apart
/// from the planner's schedules:
///
/// - with r = p - p' extra ranks (p' the largest power of two not above
///   p), ranks 0 to 2r - 1 pair up as (2i, 2i+1): each sends the other
///   half its buffer (the even rank the right half), then the odd rank
///   sends its reduced right half to the even one and drops out;
/// - the p' ranks left (the even ones of the pairs, then ranks 2r to p -
///   1, renumbered 0 to p' - 1) run recursive halving with the distance
///   doubling from 1 (the lower rank of a pair keeps the left half), then
///   recursive doubling back;
/// - each even rank of a pair sends the whole result to its odd rank.
fn open_mpi_rabenseifner(p: usize, count: u64) -> Vec<Message> {
    let pof2 = 1usize << p.ilog2();
    let rem = p - pof2;
    let real = |v: usize| if v < rem { 2 * v } else { v + rem };
    let mut out = Vec::new();
    let mut step = 0;
    if rem > 0 {
        let (lhalf, rhalf) = (count / 2, count - count / 2);
        for i in 0..rem {
            out.push((step, 2 * i, 2 * i + 1, rhalf * 4));
            out.push((step, 2 * i + 1, 2 * i, lhalf * 4));
            out.push((step + 1, 2 * i + 1, 2 * i, rhalf * 4));
        }
        step += 2;
    }
    // Window sizes every virtual rank goes through: (sent, kept) per step.
    let steps = pof2.ilog2() as usize;
    let mut windows: Vec<Vec<(u64, u64)>> = vec![Vec::new(); pof2];
    for (v, w) in windows.iter_mut().enumerate() {
        let mut size = count;
        for k in 0..steps {
            let lower = v < (v ^ (1 << k));
            let (send, keep) = if lower {
                (size - size / 2, size / 2)
            } else {
                (size / 2, size - size / 2)
            };
            w.push((send, keep));
            size = keep;
        }
    }
    for k in 0..steps {
        for (v, w) in windows.iter().enumerate() {
            out.push((step + k, real(v), real(v ^ (1 << k)), w[k].0 * 4));
        }
    }
    step += steps;
    for k in (0..steps).rev() {
        for (v, w) in windows.iter().enumerate() {
            // All-gather sends what the rank kept in the same step.
            out.push((
                step + (steps - 1 - k),
                real(v),
                real(v ^ (1 << k)),
                w[k].1 * 4,
            ));
        }
    }
    step += steps;
    for i in 0..rem {
        out.push((step, 2 * i, 2 * i + 1, count * 4));
    }
    out
}

/// Per directed inter-switch link (`a->b`): Open MPI's wire bytes on the
/// table `ranks` (rank -> sub-node), each message routed as the lab pins
/// the flow between its two ranks, and the most messages on the link in
/// one step.
fn open_mpi_links(
    plan: &planner::checked::CheckedPlan,
    ranks: &[usize],
    count: u64,
    wire_factor: f64,
) -> std::collections::BTreeMap<String, (f64, usize)> {
    use planner::network::{Link, Network};
    let net = Network::new(plan, plan.source()).unwrap();
    let name = |id: usize| match net.link(id) {
        Some(Link::InterSwitch { from, to, .. }) => format!(
            "{}->{}",
            plan.switch_list[from].name, plan.switch_list[to].name
        ),
        other => panic!("link {id} is not between switches: {other:?}"),
    };
    let mut per_step: std::collections::BTreeMap<(usize, String), usize> = Default::default();
    let mut links: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for (step, s, d, bytes) in open_mpi_rabenseifner(ranks.len(), count) {
        let flow = planner::ranks::verify::flow_id(s, d);
        let route = net.route(ranks[s], ranks[d], flow, 0).unwrap();
        for &id in route.inter_switch() {
            let link = name(id);
            *per_step.entry((step, link.clone())).or_default() += 1;
            links.entry(link).or_default().0 += bytes as f64 * wire_factor;
        }
    }
    for ((_, link), n) in per_step {
        let entry = links.entry(link).or_default();
        entry.1 = entry.1.max(n);
    }
    links
}

#[test]
fn open_mpi_folds_twelve_ranks_in_pairs_on_the_submitted_table_with_one_flow_per_link() {
    let test = "open_mpi_folds_twelve_ranks";
    let Some((_alone, dir)) = can_run(test) else {
        return;
    };
    let lab = Lab::new("tmpi12");
    lab.json(&["up", &plan(), "--rate", "100mbit"]);
    let mark = lab.dir.path().join("tmpi12.run").join("mark.sock");
    let job = submit(dir.path(), "ar12", 12, "hdrm", &mark);
    let (out, report) = measure(&lab, &job, "hdrm");
    succeeded(&out, &report);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"wrong\": 0"), "{stderr}");

    // What Open MPI did, link by link: the model written from its source
    // (above), routed on the lab's pinned routes, within 5 %.
    let text = std::fs::read_to_string(plan()).unwrap();
    let checked = planner::checked::CheckedPlan::load(&text, &plan()).unwrap();
    let table = std::fs::read_to_string(job.files.join("ranks.csv")).unwrap();
    let (_, ranks) = planner::ranks::format::read_rank_file(&table, "ranks.csv", &checked).unwrap();
    let factor = report["wire_factor"].as_f64().unwrap();
    let count: u64 = BYTES.parse::<u64>().unwrap() / 4;
    let model = open_mpi_links(&checked, &ranks, count, factor);
    let slack = 0.02 * BYTES.parse::<f64>().unwrap() / 2.0 * factor;
    let measured: std::collections::BTreeMap<String, u64> = report["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["link"].as_str().unwrap().to_string(),
                l["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    for link in model.keys().chain(measured.keys()) {
        let want = model.get(link).map_or(0.0, |m| m.0);
        let got = measured.get(link).copied().unwrap_or(0) as f64;
        assert!(
            (got - want).abs() <= 0.05 * want + slack,
            "{link}: Open MPI moved {got} B, its Rabenseifner on this table {want:.0} B\n{report:#}"
        );
    }

    // The table submit wrote is made for Open MPI's fold (the job's
    // engine: openmpi, the MPI launcher's default), so the prediction of
    // `lab measure --engine openmpi` holds link by link and has at most
    // one flow per link in every step, and so does the model written from
    // Open MPI's source above.
    assert_eq!(report["mismatches"], 0, "{report:#}");
    assert_eq!(report["predicted_max_flows"], 1, "{report:#}");
    let shared: Vec<(&String, usize)> = model
        .iter()
        .filter(|(_, (_, most))| *most >= 2)
        .map(|(link, (_, most))| (link, *most))
        .collect();
    assert!(
        shared.is_empty(),
        "Open MPI's schedule on the submitted 12-rank table shares links: {shared:?}\n{model:#?}"
    );
}
