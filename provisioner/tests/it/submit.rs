//! `provisioner submit --dry-run --offline` and `provisioner rank-check` on
//! the EFLOPS 4x16 plan: golden manifests for both launchers, every pod on
//! the Node the HDRM rank table names, placement around busy Nodes, the
//! MPIJob against its CRD (skipped without `../shared`, failed then with
//! `TESTS_NO_SKIP=1`: see `testkit::crds`), names and labels against Kubernetes' rules,
//! and the launcher scripts run for real with `sh`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p provisioner --test it submit` rewrites the
//! files under `provisioner/tests/golden/`; review the diff before
//! committing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use planner::checked::CheckedPlan;
use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, label_value_problem, qualified_name_problem,
};
use planner::ranks::{Algorithm, format, rank_table};
use provisioner::jobs::job::JobSpec;
use provisioner::jobs::submit::{self, Submission};
use provisioner::jobs::view::{ClusterView, PodUse};
use provisioner::nodes::{self, NodeMap};
use provisioner::schema::CrdSchema;

use crate::crds;
use crate::dra;

const PLAN: &str = "examples/data/eflops-4x16.plan.json";
const INDEXED: &str = "examples/allreduce-32.job.toml";
const MPI: &str = "examples/allreduce-32-mpi.job.toml";

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn plan() -> CheckedPlan {
    CheckedPlan::load(&read(PLAN), PLAN).unwrap()
}

fn job(path: &str) -> JobSpec {
    JobSpec::from_toml(&read(path), path).unwrap()
}

/// Runs the binary from the workspace root with no kubeconfig in sight.
fn provisioner(args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = std::env::temp_dir().join(format!("prov-submit-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_provisioner"));
    c.args(args)
        .current_dir(root())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("NODE_NAME")
        .env_remove("OMPI_COMM_WORLD_RANK")
        .env_remove("JOB_COMPLETION_INDEX")
        .env("HOME", &home);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run provisioner")
}

fn bound(plan: &CheckedPlan) -> Vec<nodes::Node> {
    nodes::bind(plan, None, PLAN).unwrap()
}

fn offline(plan: &CheckedPlan, job: &JobSpec, map: Option<&NodeMap>) -> Submission {
    let bound = nodes::bind(plan, map, PLAN).unwrap();
    submit::prepare(plan, &bound, job, &ClusterView::all_free(&bound)).unwrap()
}

fn config_file<'a>(sub: &'a Submission, key: &str) -> &'a str {
    sub.manifests.owned[0]["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("ConfigMap has no {key}"))
}

fn check_golden(name: &str, got: &str) {
    let path = root().join("provisioner/tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run UPDATE_GOLDEN=1 cargo test -p provisioner --test it submit",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(got.lines().count()));
        panic!(
            "{name} differs from line {}:\n want: {:?}\n  got: {:?}\n(UPDATE_GOLDEN=1 rewrites it; review the diff)",
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

/// The DRA example's dry-run objects: per rank a claim template and a Pod.
#[test]
fn golden_dra_manifests() {
    offline_golden(DRA_PROBE, PLAN, "allreduce-32-dra");
}

/// `submit JOB --plan PLAN --dry-run --offline` succeeds and prints
/// `<golden>.yaml`, with `<golden>.summary.txt` on stderr.
fn offline_golden(job: &str, plan: &str, golden: &str) {
    let out = provisioner(
        &["submit", job, "--plan", plan, "--dry-run", "--offline"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    check_golden(
        &format!("{golden}.yaml"),
        &String::from_utf8_lossy(&out.stdout),
    );
    check_golden(&format!("{golden}.summary.txt"), &stderr);
}

/// `queue` puts the workload in a Kueue LocalQueue, suspended until
/// Kueue admits it.
#[test]
fn a_queue_suspends_the_workload() {
    for (path, suspend) in [(INDEXED, "/spec/suspend"), (MPI, "/spec/runPolicy/suspend")] {
        let text = read(path).replace("ranks = 32", "ranks = 32\nqueue = \"team-a\"");
        let spec = JobSpec::from_toml(&text, path).unwrap();
        let sub = offline(&plan(), &spec, None);
        let w = &sub.manifests.workload;
        assert_eq!(
            w["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
            "team-a"
        );
        assert_eq!(w.pointer(suspend), Some(&Value::Bool(true)), "{path}");
        let plain = offline(&plan(), &job(path), None);
        assert_eq!(plain.manifests.workload.pointer(suspend), None, "{path}");
    }
}

/// A queued DRA job is one JobSet in the LocalQueue, suspended until Kueue
/// admits it (Kueue v0.19.2's JobSet integration: the queue label on the
/// JobSet, one PodSet per replicated Job); its pods carry no pod-group
/// labels, which are for bare Pods.
#[test]
fn a_queued_dra_job_is_a_suspended_jobset() {
    let text = read(DRA_PROBE).replace("ranks = 32", "ranks = 16\nqueue = \"team-a\"");
    let spec = JobSpec::from_toml(&text, DRA_PROBE).unwrap();
    let plan = plan();
    let bound = nodes::bind(&plan, None, PLAN).unwrap();
    let mut view = ClusterView::all_free(&bound);
    view.dra = provisioner::jobs::dra::DraView::from_plan(&plan, &bound, &spec.placement.profile);
    let sub = submit::prepare(&plan, &bound, &spec, &view).unwrap();
    let w = &sub.manifests.workload;
    assert_eq!(w["kind"], "JobSet");
    assert_eq!(
        w["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "team-a"
    );
    assert_eq!(w["spec"]["suspend"], Value::Bool(true));
    let jobs = w["spec"]["replicatedJobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 16);
    let pod_labels = &jobs[0]["template"]["spec"]["template"]["metadata"]["labels"];
    assert_eq!(pod_labels.get("kueue.x-k8s.io/pod-group-name"), None);
    assert_eq!(
        crate::crd_exports::job_set_problems(w),
        Vec::<String>::new()
    );
}

#[test]
fn golden_manifests_for_both_launchers() {
    for (job, golden) in [(INDEXED, "allreduce-32"), (MPI, "allreduce-32-mpi")] {
        let out = provisioner(&["submit", job, "--plan", PLAN, "--dry-run"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        // No kubeconfig anywhere: --dry-run goes offline and says so.
        assert!(
            stderr.starts_with("provisioner: no kubeconfig found"),
            "{stderr}"
        );
        check_golden(
            &format!("{golden}.yaml"),
            &String::from_utf8_lossy(&out.stdout),
        );
        check_golden(&format!("{golden}.summary.txt"), &stderr);

        let out = provisioner(
            &[
                "submit",
                job,
                "--plan",
                PLAN,
                "--offline",
                "--format",
                "json",
            ],
            &[],
        );
        assert!(out.status.success());
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(list["kind"], "List");
        let kinds: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        if job == INDEXED {
            assert_eq!(kinds, ["ConfigMap", "Service", "Job"]);
        } else {
            assert_eq!(kinds, ["ConfigMap", "MPIJob"]);
        }
    }
}

#[test]
fn two_runs_are_byte_identical() {
    for job in [INDEXED, MPI] {
        for format in ["yaml", "json"] {
            let args = [
                "submit",
                job,
                "--plan",
                PLAN,
                "--offline",
                "--format",
                format,
            ];
            let a = provisioner(&args, &[]);
            let b = provisioner(&args, &[]);
            assert!(a.status.success());
            assert_eq!(a.stdout, b.stdout, "{job} {format}");
            assert_eq!(a.stderr, b.stderr, "{job} {format}");
        }
    }
}

/// Every rank sits on the Node of the server that `planner ranks --ranks
/// 32 --algorithm hdrm` names, and the workload's pods can only go to
/// those Nodes, one each.
#[test]
fn every_pod_node_is_the_hdrm_tables() {
    let plan = plan();
    let table = rank_table(&plan, Algorithm::Hdrm, Some(32)).unwrap();
    let planner_csv = format::to_csv(&plan, &table);
    // The node map renames two servers; the table follows.
    let map =
        NodeMap::from_toml("node01 = \"gpu-a01\"\nnode02 = \"gpu-a02\"\n", "map.toml").unwrap();
    for path in [INDEXED, MPI] {
        for map in [None, Some(&map)] {
            let sub = offline(&plan, &job(path), map);
            assert_eq!(sub.placement.table, table);
            let ranks_csv = config_file(&sub, "ranks.csv");
            let mut chosen = BTreeSet::new();
            for (ours, theirs) in ranks_csv.lines().zip(planner_csv.lines()).skip(1) {
                let (prefix, node) = ours.rsplit_once(',').unwrap();
                assert_eq!(prefix, theirs);
                let server = theirs.split(',').nth(1).unwrap();
                let want = match (map, server) {
                    (Some(_), "node01") => "gpu-a01",
                    (Some(_), "node02") => "gpu-a02",
                    _ => server,
                };
                assert_eq!(node, want, "{ours}");
                chosen.insert(node.to_string());
            }
            assert_eq!(ranks_csv.lines().count(), 33);
            let w = &sub.manifests.workload;
            let template = match path {
                INDEXED => {
                    assert_eq!(w["spec"]["completions"], chosen.len());
                    assert_eq!(w["spec"]["parallelism"], chosen.len());
                    &w["spec"]["template"]
                }
                _ => {
                    let worker = &w["spec"]["mpiReplicaSpecs"]["Worker"];
                    assert_eq!(worker["replicas"], chosen.len());
                    &worker["template"]
                }
            };
            let affinity = &template["spec"]["affinity"];
            let term = &affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0];
            assert_eq!(term["key"], "metadata.name");
            let allowed: BTreeSet<String> = term["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(allowed, chosen);
            let anti =
                &affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
            assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
            // Every pod requests every GPU of its Node.
            let gpus = &template["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"];
            assert_eq!(gpus, "4");
        }
    }
}

/// The plan's cluster with node03 busy, node05 not Ready, node06
/// cordoned, node08 missing, and a CPU Node the plan does not know.
fn busy_view(plan: &CheckedPlan) -> ClusterView {
    let bound = nodes::bind(plan, None, PLAN).unwrap();
    let mut view = ClusterView::all_free(&bound);
    let node = |v: &ClusterView, name: &str| v.nodes.iter().position(|n| n.name == name).unwrap();
    let i = node(&view, "node03");
    view.nodes[i].pods.push(PodUse {
        namespace: "research".into(),
        name: "bert-7".into(),
        gpus: 2,
    });
    let i = node(&view, "node05");
    view.nodes[i].ready = false;
    let i = node(&view, "node06");
    view.nodes[i].unschedulable = true;
    // node08 is not in the cluster at all; a stranger is.
    view.nodes.retain(|n| n.name != "node08");
    view.nodes.push(provisioner::jobs::view::NodeState {
        name: "cpu-01".into(),
        ready: true,
        unschedulable: false,
        gpu_allocatable: 0,
        address: None,
        hostname: None,
        topology_labels: None,
        pods: Vec::new(),
    });
    view
}

#[test]
fn busy_nodes_carry_no_rank_and_the_loads_are_reported() {
    let plan = plan();
    let view = busy_view(&plan);
    let job = job(INDEXED);
    let sub = submit::prepare(&plan, &bound(&plan), &job, &view).unwrap();
    let p = &sub.placement;
    let off = ["node03", "node05", "node06", "node08"];
    assert_eq!(p.ranks.len(), 32);
    assert!(p.ranks.iter().all(|r| !off.contains(&r.node.as_str())));
    let distinct: BTreeSet<usize> = p.table.ranks.iter().copied().collect();
    assert_eq!(distinct.len(), 32);
    assert_ne!(p.method, "algorithm-1");
    assert!(p.lower_bound <= p.worst_load);
    // The table's loads are what the planner's verifier says.
    let steps = planner::ranks::verify(&plan, &p.table, 0).unwrap();
    assert_eq!(
        steps.iter().map(|s| s.max_load).max().unwrap(),
        p.worst_load
    );
    let reasons: Vec<String> = p.unusable.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        [
            "node03: busy: 2 of 4 GPUs held by pod research/bert-7 (2 GPUs)",
            "node05: not Ready",
            "node06: cordoned (spec.unschedulable)",
            "node08: no such Node in the cluster (map the server to its Node with --node-map, or join it)",
        ]
    );
    let notes = sub.notes.join("\n");
    assert!(notes.contains("worst load"), "{notes}");
    assert!(notes.contains("cpu-01"), "{notes}");
    assert!(notes.contains("16 sub-nodes unavailable"), "{notes}");
}

#[test]
fn not_enough_free_sub_nodes_names_what_is_busy() {
    let plan = plan();
    let view = busy_view(&plan);
    let mut job = job(INDEXED);
    job.ranks = 64;
    let e = submit::prepare(&plan, &bound(&plan), &job, &view)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("job allreduce-32 ({}) needs 64 GPUs (one rank each, with its NIC) and only 48 of the plan {} are free: 16 more are needed; nothing was placed", job.source, plan.source())),
        "{e}"
    );
    for want in [
        "node03: busy: 2 of 4 GPUs held by pod research/bert-7",
        "node05: not Ready",
        "node06: cordoned",
        "node08: no such Node in the cluster",
    ] {
        assert!(e.contains(want), "want {want:?} in {e}");
    }
}

#[test]
fn the_mpijob_satisfies_its_crd() {
    let Some(text) = crds::text("the_mpijob_satisfies_its_crd", "kubeflow.org_mpijobs.yaml") else {
        return;
    };
    let crd = CrdSchema::from_yaml(&text, "kubeflow.org_mpijobs.yaml", "v2beta1").unwrap();
    let sub = offline(&plan(), &job(MPI), None);
    assert_eq!(crd.validate(&sub.manifests.workload), Vec::<String>::new());
    // The launcher runs mpirun with Rabenseifner's allreduce, coll/tuned
    // pinned, and the rankfile it wrote.
    let launch = config_file(&sub, "mpi-launch.sh");
    assert!(launch.contains("exec sh \"$dir/mpirun.sh\" \"$rankfile\" \"$@\""));
    let script = config_file(&sub, "mpirun.sh");
    assert!(
        script.contains(
            "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 6"
        )
    );
    assert!(script.contains("--mca coll ^han,hcoll,ucc,acoll,xhc,adapt"));
    assert!(script.contains("--rankfile \"$rankfile\""));
    assert!(script.contains("-x NCCL_DEBUG"));
    // A broken object is caught: the check is not vacuous.
    let mut bad = sub.manifests.workload.clone();
    bad["spec"]["slotsPerWorker"] = "many".into();
    bad["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["hostNetwork"] = "yes".into();
    assert_eq!(crd.validate(&bad).len(), 2, "{:?}", crd.validate(&bad));
}

/// Every object's name, namespace, labels and annotations follow the API
/// server's rules, and every object carries the job's linking labels.
#[test]
fn names_and_labels_are_valid() {
    for path in [INDEXED, MPI, DRA_PROBE, DRA_TRAIN] {
        let plan = plan();
        let spec = job(path);
        let bound = nodes::bind(&plan, None, PLAN).unwrap();
        let mut view = ClusterView::all_free(&bound);
        view.dra =
            provisioner::jobs::dra::DraView::from_plan(&plan, &bound, &spec.placement.profile);
        let sub = submit::prepare(&plan, &bound, &spec, &view).unwrap();
        for doc in sub.documents() {
            let m = &doc["metadata"];
            let name = m["name"].as_str().unwrap();
            assert_eq!(dns_label_problem(name), None, "{name}");
            assert_eq!(dns_label_problem(m["namespace"].as_str().unwrap()), None);
            let mut maps = vec![&m["labels"]];
            let template_labels: Vec<&Value> = [
                "/spec/template/metadata/labels",
                "/spec/mpiReplicaSpecs/Launcher/template/metadata/labels",
                "/spec/mpiReplicaSpecs/Worker/template/metadata/labels",
            ]
            .iter()
            .filter_map(|p| doc.pointer(p))
            .collect();
            maps.extend(template_labels);
            for labels in maps {
                let labels = labels.as_object().unwrap();
                assert_eq!(labels["app.kubernetes.io/instance"], spec.name.as_str());
                assert!(labels.contains_key("app.kubernetes.io/name"));
                assert!(labels.contains_key("topology.eflops.io/job"));
                for (k, v) in labels {
                    assert_eq!(qualified_name_problem(k), None, "{k}");
                    assert_eq!(label_value_problem(v.as_str().unwrap()), None, "{k}={v}");
                }
            }
            for k in m["annotations"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                assert_eq!(qualified_name_problem(k), None, "{k}");
            }
            for key in m["name"].as_str().into_iter() {
                assert_eq!(dns_subdomain_problem(key), None);
            }
        }
    }
}

#[test]
fn job_file_errors_name_file_and_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("prov-submit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.job.toml");
    std::fs::write(
        &bad,
        read(INDEXED)
            .replace("ranks = 32", "ranks = 32\nlauncher_image = \"x\"")
            .replace("name = \"allreduce-32\"", "name = \"All_Reduce\""),
    )
    .unwrap();
    let out = provisioner(
        &["submit", bad.to_str().unwrap(), "--plan", PLAN, "--offline"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    let f = bad.display().to_string();
    assert!(
        e.contains(&format!("{f}: 2 problems in the job file")),
        "{e}"
    );
    assert!(e.contains(&format!("{f}:19: name: `All_Reduce`")), "{e}");
    assert!(
        e.contains(&format!(
            "{f}:27: launcher_image: launcher_image applies to launcher = \"mpi\" only"
        )),
        "{e}"
    );
    assert!(out.stdout.is_empty());

    std::fs::write(
        &bad,
        "name = \"j\"\nranks = 2\nimage = \"i\"\ncommand = [\"c\"]\nflavour = 1\n",
    )
    .unwrap();
    let out = provisioner(
        &["submit", bad.to_str().unwrap(), "--plan", PLAN, "--offline"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains(&format!("{f}:5:1: unknown field `flavour`")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn submitting_without_a_cluster_says_how_to_reach_one() {
    // No kubeconfig: submitting (not a dry run) cannot place without the
    // cluster's Nodes and Pods, and says how to point at a cluster.
    let out = provisioner(&["submit", INDEXED, "--plan", PLAN], &[]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.starts_with("error: cannot reach a Kubernetes cluster: no kubeconfig found"),
        "{e}"
    );
    assert!(e.contains("point KUBECONFIG at a kubeconfig file"), "{e}");
    // A dry run with no kubeconfig places offline, says so, and names a
    // KUBECONFIG that points nowhere.
    let out = provisioner(
        &["submit", INDEXED, "--plan", PLAN, "--dry-run"],
        &[("KUBECONFIG", "/nonexistent/kubeconfig")],
    );
    assert_eq!(out.status.code(), Some(0));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.starts_with("provisioner: no kubeconfig found (KUBECONFIG, ~/.kube/config, in-cluster); KUBECONFIG=/nonexistent/kubeconfig names no file: placing offline"),
        "{e}"
    );
    assert!(!out.stdout.is_empty());
    // --wait needs a submission, not a dry run.
    let out = provisioner(
        &["submit", INDEXED, "--plan", PLAN, "--offline", "--wait"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
}

fn write_config(sub: &Submission, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (k, v) in sub.manifests.owned[0]["data"].as_object().unwrap() {
        std::fs::write(dir.join(k), v.as_str().unwrap()).unwrap();
    }
}

#[test]
fn rank_check_passes_on_its_node_and_fails_elsewhere() {
    let sub = offline(&plan(), &job(INDEXED), None);
    let dir = std::env::temp_dir().join(format!("prov-rankcheck-{}", std::process::id()));
    write_config(&sub, &dir);
    let table = dir.join("ranks.csv");
    let t = table.to_str().unwrap();
    let out = provisioner(
        &["rank-check", "--table", t],
        &[("NODE_NAME", "node01"), ("JOB_COMPLETION_INDEX", "5")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "rank check passed: Node node01 (completion index 5) carries rank 0 on node01 sn0 (gpu0, mlx5_0); rank 18 on node01 sn1 (gpu1, mlx5_1)\n"
    );
    // An MPI rank on the wrong Node.
    let out = provisioner(
        &["rank-check", "--table", t, "--node", "node02"],
        &[("OMPI_COMM_WORLD_RANK", "18")],
    );
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("rank 18 belongs on Node node01 (server node01 sn1, GPU gpu1, NIC mlx5_1) but runs on Node node02"),
        "{e}"
    );
    let out = provisioner(
        &["rank-check", "--table", t, "--format", "json"],
        &[("NODE_NAME", "node02")],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ranks"][0]["rank"], 1);
    // No Node name at all.
    let out = provisioner(&["rank-check", "--table", t], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("set NODE_NAME from the Downward API"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs a script in its own process group, as PID 1 of a container is:
/// `launch.sh` signals its group when a rank fails.
fn sh(script: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    use std::os::unix::process::CommandExt as _;
    let mut c = Command::new("sh");
    c.arg(script).args(args).process_group(0);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run sh")
}

/// The processes of process group `pgid` that have not ended (zombies
/// left out), as `pid (command)`, from `/proc`.
fn group_members(pgid: u32) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let pid = e.ok()?.file_name().into_string().ok()?;
            pid.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid pgrp ...; comm may hold spaces.
            let (head, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let pgrp: u32 = fields.nth(1)?.parse().ok()?;
            let comm = head.split_once('(').map_or("", |(_, c)| c);
            (pgrp == pgid && state != "Z").then(|| format!("{pid} ({comm})"))
        })
        .collect()
}

/// Runs `script` as [`sh`] does (its own process group), with stdout and
/// stderr in files of `dir`, and waits until the script and every process
/// of its group have ended: that they end at all is what a caller checks,
/// not how fast. What still runs after `limit` (generous, for a loaded
/// machine) is killed with its group and fails the test, named. Returns
/// the exit status and stderr.
fn sh_until_group_ends(
    script: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
    limit: std::time::Duration,
) -> (std::process::ExitStatus, String) {
    use std::os::unix::process::CommandExt as _;
    let (out, err) = (dir.join("sh.stdout"), dir.join("sh.stderr"));
    let mut c = Command::new("sh");
    c.arg(script).args(args).process_group(0);
    c.stdout(std::fs::File::create(&out).unwrap());
    c.stderr(std::fs::File::create(&err).unwrap());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("run sh");
    let pgid = child.id();
    let deadline = std::time::Instant::now() + limit;
    let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        pause();
    };
    let mut left = group_members(pgid);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        pause();
        left = group_members(pgid);
    }
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    if status.is_none() || !left.is_empty() {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status();
        let _ = child.wait();
        panic!(
            "{} (exited: {}) left processes of its group running after {limit:?}, killed now: {left:?}; its stderr:\n{stderr}",
            script.display(),
            status.is_some()
        );
    }
    (status.unwrap(), stderr)
}

/// Runs `launch.sh` of the ConfigMap in `dir` as Node `node` with the
/// shell command `cmd` as every rank's program; its lines, sorted.
fn launch_lines(dir: &Path, node: &str, cmd: &str) -> Vec<String> {
    let out = sh(
        &dir.join("launch.sh"),
        &["--", "sh", "-c", cmd],
        &[("EFLOPS_DIR", dir.to_str().unwrap()), ("NODE_NAME", node)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// `launch.sh` starts one process per rank of its Node with that rank's
/// variables; `rank-env.sh` refuses a rank on the wrong Node.
#[test]
fn launcher_scripts_give_each_rank_its_gpu_and_nic() {
    let dir = std::env::temp_dir().join(format!("prov-scripts-{}", std::process::id()));
    let sub = offline(&plan(), &job(INDEXED), None);
    write_config(&sub, &dir);
    let d = dir.to_str().unwrap();
    let lines = launch_lines(
        &dir,
        "node02",
        "echo $RANK/$LOCAL_RANK/$LOCAL_WORLD_SIZE/$EFLOPS_LOCAL_RANK/$EFLOPS_RANKS $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA $NCCL_IB_TC $NCCL_IB_FIFO_TC $NCCL_IB_GID_INDEX",
    );
    // One visible GPU per process, so LOCAL_RANK is 0 for both (issue 17:
    // `torch.cuda.set_device(LOCAL_RANK)` failed for the second rank); the
    // position on the Node is EFLOPS_LOCAL_RANK. NCCL's CTS messages take
    // the rank's own traffic class.
    assert_eq!(
        lines,
        [
            "1/0/1/0/1,16 0 =mlx5_0 136 136 3",
            "16/0/1/1/1,16 1 =mlx5_1 136 136 3"
        ]
    );
    let out = sh(
        &dir.join("launch.sh"),
        &["--", "true"],
        &[("EFLOPS_DIR", d), ("NODE_NAME", "elsewhere")],
    );
    assert_eq!(out.status.code(), Some(2));
    // A failing rank stops the other one (which would wait for its peer
    // forever: here a sleep far longer than the limit) and fails the pod.
    // No clock decides it: the script and every process of its group must
    // end, and the limit only keeps a broken script from hanging the test.
    let (status, e) = sh_until_group_ends(
        &dir.join("launch.sh"),
        &[
            "--",
            "sh",
            "-c",
            "if [ $EFLOPS_LOCAL_RANK = 0 ]; then sleep 3600; else exit 3; fi",
        ],
        &[("EFLOPS_DIR", d), ("NODE_NAME", "node02"), ("TMPDIR", d)],
        &dir,
        std::time::Duration::from_secs(300),
    );
    assert_eq!(status.code(), Some(1), "{e}");
    assert!(e.contains("launch.sh: rank 16 exited with status 3"), "{e}");
    assert!(
        e.contains("launch.sh: a rank failed; stopped the other ranks of node02"),
        "{e}"
    );

    let sub = offline(&plan(), &job(MPI), None);
    write_config(&sub, &dir);
    std::fs::write(dir.join("node"), "node01\n").unwrap();
    let env = |rank: &'static str| {
        [
            ("EFLOPS_DIR", d),
            ("EFLOPS_RUN", d),
            ("OMPI_COMM_WORLD_RANK", rank),
        ]
    };
    let out = sh(
        &dir.join("rank-env.sh"),
        &["sh", "-c", "echo $RANK $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA"],
        &env("18"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "18 1 =mlx5_1\n");
    // Open MPI's traffic on the rank's own NIC (issue #32): verbs and UCX
    // on its RDMA device; the plan names no netdev, so TCP is not narrowed.
    // UCX marks in the rank's own class (node01 is in the upper part,
    // DSCP 26: traffic class 104).
    let out = sh(
        &dir.join("rank-env.sh"),
        &[
            "sh",
            "-c",
            "echo $OMPI_MCA_btl_openib_if_include $UCX_NET_DEVICES ${OMPI_MCA_btl_tcp_if_include-unset} $UCX_IB_TRAFFIC_CLASS",
        ],
        &env("18"),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "mlx5_1 mlx5_1:1 unset 104\n"
    );
    let out = sh(&dir.join("rank-env.sh"), &["true"], &env("1"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("rank 1 belongs on Node node02 but runs on Node node01")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mpi-launch.sh` with `ssh` and `mpirun` stubbed: the workers land on
/// the chosen Nodes in any order, and the rankfile follows them; a worker
/// on a Node without ranks, or two on one Node, stop it with exit 2.
#[test]
fn mpi_launcher_builds_the_rankfile_from_where_workers_landed() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("prov-mpi-{}", std::process::id()));
    let sub = offline(&plan(), &job(MPI), None);
    write_config(&sub, &dir);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // ssh HOST cat FILE: the Node of worker i is word i+1 of $FAKE_NODES.
    let ssh = "#!/bin/sh\nfor a; do case \"$a\" in *-worker-*) host=$a;; esac; done\n\
        i=${host#*-worker-}; i=${i%%.*}\nset -- $FAKE_NODES\nshift \"$i\"\necho \"$1\"\n";
    // mpirun: print the rankfile it was given and the rest of its arguments.
    let mpirun = "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --rankfile ]; then cat \"$2\"; shift; fi\n  shift\n  [ \"${1:-}\" = sh ] && break\ndone\necho \"then: $*\"\n";
    for (name, text) in [("ssh", ssh), ("mpirun", mpirun)] {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let d = dir.to_str().unwrap().to_string();
    let run = |nodes: &str| {
        sh(
            &dir.join("mpi-launch.sh"),
            &["--", "all_reduce_perf", "-g", "1"],
            &[
                ("PATH", path.as_str()),
                ("EFLOPS_DIR", d.as_str()),
                ("TMPDIR", d.as_str()),
                ("FAKE_NODES", nodes),
            ],
        )
    };
    // The scheduler put the workers on the 16 Nodes in reverse order.
    let landed: Vec<String> = (1..=16).rev().map(|i| format!("node{i:02}")).collect();
    let out = run(&landed.join(" "));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table = config_file(&sub, "ranks.csv");
    let mut ranks = 0;
    for line in stdout.lines().filter(|l| l.starts_with("rank ")) {
        // rank R=allreduce-32-mpi-worker-I.allreduce-32-mpi.ml.svc slot=S:C
        let (rank, rest) = line["rank ".len()..].split_once('=').unwrap();
        let worker: usize = rest
            .split("-worker-")
            .nth(1)
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(rest.contains(".allreduce-32-mpi.ml.svc slot=0:"), "{line}");
        let rank: usize = rank.parse().unwrap();
        let node = table
            .lines()
            .nth(rank + 1)
            .unwrap()
            .rsplit(',')
            .next()
            .unwrap();
        assert_eq!(landed[worker], node, "{line}");
        ranks += 1;
    }
    assert_eq!(ranks, 32);
    assert!(
        stdout.contains("then: sh ") && stdout.contains("rank-env.sh all_reduce_perf -g 1"),
        "{stdout}"
    );

    let mut twice = landed.clone();
    twice[1] = twice[0].clone();
    let out = run(&twice.join(" "));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("rank check failed: workers allreduce-32-mpi-worker-0.allreduce-32-mpi.ml.svc and allreduce-32-mpi-worker-1.allreduce-32-mpi.ml.svc both run on Node node16"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut stray = landed.clone();
    stray[3] = "cpu-01".into();
    let out = run(&stray.join(" "));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("runs on Node cpu-01, which carries no rank of this job"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- DRA placement (issue 17) ----

const DRA_PROBE: &str = "examples/allreduce-32-dra.job.toml";
const DRA_TRAIN: &str = "examples/train-32-dra.job.toml";

/// The described cluster of `support/dra.rs` as YAML.
fn resource_slices(plan: &CheckedPlan, edit: &dyn Fn(&str, &str, &mut Value)) -> String {
    serde_norway::to_string(&dra::resource_slices(plan, edit)).unwrap()
}

fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prov-dra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The documents of a `submit` YAML output.
fn documents(yaml: &str) -> Vec<Value> {
    use serde::Deserialize as _;
    serde_norway::Deserializer::from_str(yaml)
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

/// What a DRA submission claims, read back from its objects: per rank,
/// the Node, the GPU index and the NIC its claim template selects.
struct Claimed {
    /// (node, GPU index, NIC) in rank order.
    ranks: Vec<(String, i64, String)>,
    /// Rank -> index into the plan's sub-node list, from ranks.csv.
    table: Vec<usize>,
}

/// Reads a DRA submission's objects back through `k8s-openapi`'s types
/// (the built-in schemas of Kubernetes 1.34; a JobSet through the
/// structural check of `crd_exports::job_set_problems`) and checks how
/// they hang together: every rank's pod (a bare Pod, or the pod template of
/// the JobSet's replicated Job `rank-<r>`) claims its own template, is
/// pinned to the Node the template's annotation names, and the template
/// asks for one GPU and one NIC under one PCIe root.
fn claimed(plan: &CheckedPlan, yaml: &str) -> Claimed {
    use k8s_openapi::api::core::v1::{ConfigMap, Pod, PodTemplateSpec, Service};
    use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
    let docs = documents(yaml);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[0], "ConfigMap");
    let cm: ConfigMap = serde_json::from_value(docs[0].clone()).unwrap();
    let csv = cm.data.unwrap()["ranks.csv"].clone();
    let index_of = |id: &str| plan.sub_node_list.iter().position(|s| s.id == id).unwrap();
    let table: Vec<usize> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            index_of(&format!("{}/{}", f[1], f[2]))
        })
        .collect();
    let cel = regex::Regex::new(
        r#"^device\.attributes\["gpu\.nvidia\.com"\]\.index == (\d+)$|^device\.attributes\["dra\.net"\]\.rdmaDevName == "([^"]+)"$"#,
    )
    .unwrap();
    let mut ranks = Vec::new();
    let mut templates = std::collections::BTreeMap::new();
    // Each rank's pod: its spec, labels, and its name when it is a bare Pod.
    let mut pods = Vec::new();
    for d in &docs[1..] {
        match d["kind"].as_str().unwrap() {
            "Service" => {
                let _: Service = serde_json::from_value(d.clone()).unwrap();
            }
            "Pod" => {
                let p: Pod = serde_json::from_value(d.clone()).unwrap();
                pods.push((p.spec.unwrap(), p.metadata.labels.unwrap(), p.metadata.name));
            }
            "JobSet" => {
                assert_eq!(
                    crate::crd_exports::job_set_problems(d),
                    Vec::<String>::new()
                );
                for (r, rjob) in d["spec"]["replicatedJobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                {
                    assert_eq!(rjob["name"], format!("rank-{r}"));
                    let job = &rjob["template"]["spec"];
                    assert_eq!(
                        (
                            &job["backoffLimit"],
                            &job["completions"],
                            &job["parallelism"]
                        ),
                        (
                            &serde_json::json!(0),
                            &serde_json::json!(1),
                            &serde_json::json!(1)
                        )
                    );
                    let t: PodTemplateSpec =
                        serde_json::from_value(job["template"].clone()).unwrap();
                    let spec = t.spec.unwrap();
                    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
                    pods.push((spec, t.metadata.unwrap().labels.unwrap(), None));
                }
            }
            "ResourceClaimTemplate" => {
                let t: ResourceClaimTemplate = serde_json::from_value(d.clone()).unwrap();
                let name = t.metadata.name.clone().unwrap();
                let node =
                    t.metadata.annotations.as_ref().unwrap()["topology.eflops.io/node"].clone();
                let devices = t.spec.spec.devices.unwrap();
                let constraints = devices.constraints.unwrap();
                assert_eq!(constraints.len(), 1);
                assert_eq!(
                    constraints[0].match_attribute.as_deref(),
                    Some("resource.kubernetes.io/pcieRoot")
                );
                assert_eq!(
                    constraints[0].requests.as_deref(),
                    Some(&["gpu".to_string(), "nic".to_string()][..])
                );
                let mut gpu = None;
                let mut nic = None;
                for r in devices.requests.unwrap() {
                    let exactly = r.exactly.unwrap();
                    assert_eq!(exactly.count, Some(1));
                    let selectors = exactly.selectors.unwrap();
                    let expr = &selectors[0].cel.as_ref().unwrap().expression;
                    let c = cel
                        .captures(expr)
                        .unwrap_or_else(|| panic!("selector {expr}"));
                    match (r.name.as_str(), exactly.device_class_name.as_str()) {
                        ("gpu", "gpu.nvidia.com") => gpu = Some(c[1].parse::<i64>().unwrap()),
                        ("nic", "dranet") => nic = Some(c[2].to_string()),
                        other => panic!("request {other:?}"),
                    }
                }
                templates.insert(name, (node, gpu.unwrap(), nic.unwrap()));
            }
            other => panic!("unexpected {other}"),
        }
    }
    for (spec, labels, pod_name) in pods {
        let claim = &spec.resource_claims.unwrap()[0];
        let template = claim.resource_claim_template_name.clone().unwrap();
        let job = labels["topology.eflops.io/job"].clone();
        assert_eq!(template, format!("{job}-{}", ranks.len()));
        if let Some(name) = &pod_name {
            assert_eq!(&template, name);
        }
        let c = &spec.containers[0];
        let used = &c.resources.as_ref().unwrap().claims.as_ref().unwrap()[0];
        assert_eq!(used.name, claim.name);
        let caps = c
            .security_context
            .as_ref()
            .unwrap()
            .capabilities
            .as_ref()
            .unwrap();
        assert_eq!(caps.add.as_deref().unwrap()[0], "IPC_LOCK");
        let pinned = spec
            .affinity
            .unwrap()
            .node_affinity
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .unwrap()
            .node_selector_terms[0]
            .match_fields
            .as_ref()
            .unwrap()[0]
            .values
            .clone()
            .unwrap();
        let (node, gpu, nic) = templates[&template].clone();
        assert_eq!(pinned, std::slice::from_ref(&node));
        let env: std::collections::BTreeMap<String, String> = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
            .collect();
        assert_eq!(env["RANK"], ranks.len().to_string());
        assert_eq!(env["LOCAL_RANK"], "0");
        let rank0 = match pod_name {
            Some(_) => format!("{job}-0"),
            None => format!("{job}-rank-0-0-0"),
        };
        assert_eq!(env["MASTER_ADDR"], format!("{rank0}.{job}.ml.svc"));
        let rank0_ip = plan.sub_node_list[table[0]].ip.as_deref().unwrap();
        assert_eq!(
            Some(env["EFLOPS_RANK0_NIC_ADDR"].as_str()),
            rank0_ip.split('/').next()
        );
        ranks.push((node, gpu, nic));
    }
    assert_eq!(ranks.len(), table.len());
    // The template of rank r selects exactly the GPU and NIC of the
    // sub-node ranks.csv gives rank r.
    for (r, (node, gpu, nic)) in ranks.iter().enumerate() {
        let sn = &plan.sub_node_list[table[r]];
        assert_eq!(
            (node, *gpu, nic),
            (
                &sn.server.to_string(),
                sn.gpu_index.unwrap() as i64,
                &sn.nic.to_string()
            ),
            "rank {r}"
        );
    }
    Claimed { ranks, table }
}

/// Most flows on one directed inter-switch link in any halving-doubling
/// step of `table`, computed here from the plan's route model.
fn worst_load(plan: &CheckedPlan, table: &[usize]) -> usize {
    let net = planner::ranks::Network::avoiding(plan, plan.source(), &[]).unwrap();
    let t = planner::ranks::RankTable {
        algorithm: Algorithm::Hdrm,
        ranks: table.to_vec(),
    };
    planner::ranks::verify_schedule(&net, table, &t.schedule().unwrap(), 0)
        .unwrap()
        .iter()
        .map(|s| s.max_load)
        .max()
        .unwrap()
}

/// Issue 17, done when: on the EFLOPS 4x16 plan, two 32-rank HDRM jobs
/// submitted one after the other against a described cluster use all 64
/// GPUs, each congestion-free on its own, no device claimed twice; the
/// dry-run manifests show the claims.
#[test]
fn issue17_two_dra_jobs_share_the_cluster_without_sharing_a_device() {
    let plan = plan();
    let slices = write_temp("slices.yaml", &resource_slices(&plan, &|_, _, _| {}));
    let s = slices.to_str().unwrap();
    let out = provisioner(&["submit", DRA_PROBE, "--plan", PLAN, "--cluster", s], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first_yaml = String::from_utf8(out.stdout).unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "job allreduce-32-dra: 32 ranks on 16 Nodes, worst link load 1 (lower bound 1)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first_file = write_temp("first.yaml", &first_yaml);
    let out = provisioner(
        &[
            "submit",
            DRA_TRAIN,
            "--plan",
            PLAN,
            "--cluster",
            s,
            "--cluster",
            first_file.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("job train-32-dra: 32 ranks on 16 Nodes, worst link load 1 (lower bound 1)"),
        "{stderr}"
    );
    assert!(stderr.contains("32 sub-nodes unavailable"), "{stderr}");
    let second_yaml = String::from_utf8(out.stdout).unwrap();

    let first = claimed(&plan, &first_yaml);
    let second = claimed(&plan, &second_yaml);
    let gpus: BTreeSet<(String, i64)> = first
        .ranks
        .iter()
        .chain(&second.ranks)
        .map(|(n, g, _)| (n.clone(), *g))
        .collect();
    let nics: BTreeSet<(String, String)> = first
        .ranks
        .iter()
        .chain(&second.ranks)
        .map(|(n, _, nic)| (n.clone(), nic.clone()))
        .collect();
    assert_eq!(
        (gpus.len(), nics.len()),
        (64, 64),
        "a device is claimed twice, or a GPU is left idle"
    );
    for c in [&first, &second] {
        assert_eq!(c.ranks.len(), 32);
        assert_eq!(worst_load(&plan, &c.table), 1, "{:?}", c.table);
    }
    // The second job waits in its Kueue queue as one pod group.
    let docs = documents(&second_yaml);
    let pod = docs.iter().find(|d| d["kind"] == "Pod").unwrap();
    assert_eq!(
        pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "team-a"
    );
    assert_eq!(
        pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"],
        "train-32-dra"
    );
    assert_eq!(
        pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"],
        "32"
    );

    // A third job finds nothing free, and says who holds the sub-nodes.
    let second_file = write_temp("second.yaml", &second_yaml);
    let out = provisioner(
        &[
            "submit",
            DRA_PROBE,
            "--plan",
            PLAN,
            "--cluster",
            s,
            "--cluster",
            first_file.to_str().unwrap(),
            "--cluster",
            second_file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("needs 32 GPUs (one rank each, with its NIC) and only 0 of the plan"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "node01: every sub-node is taken (node01/sn0: named by ResourceClaimTemplate ml/"
        ),
        "{stderr}"
    );
}

/// A sub-node whose GPU a ResourceClaim holds is left out; a Node whose
/// devices disagree with the plan is refused, naming the device.
#[test]
fn dra_claims_and_devices_that_disagree_with_the_plan() {
    let plan = plan();
    let claim = serde_json::json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": { "name": "other-0-sub-node", "namespace": "research" },
        "spec": { "devices": { "requests": [] } },
        "status": { "allocation": { "devices": { "results": [
            { "request": "gpu", "driver": "gpu.nvidia.com", "pool": "node03", "device": "gpu-1" },
        ] } } },
    });
    let slices = write_temp(
        "claimed-slices.yaml",
        &resource_slices(&plan, &|_, _, _| {}),
    );
    let claims = write_temp("claims.json", &claim.to_string());
    let out = provisioner(
        &[
            "submit",
            DRA_PROBE,
            "--plan",
            PLAN,
            "--cluster",
            slices.to_str().unwrap(),
            "--cluster",
            claims.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let held = v["items"].as_array().unwrap().iter().any(|d| {
        d["kind"] == "ResourceClaimTemplate"
            && d["metadata"]["annotations"]["topology.eflops.io/sub-node"] == "node03/sn1"
    });
    assert!(
        !held,
        "node03/sn1's GPU is allocated to research/other-0-sub-node"
    );

    let other_root = |v: &mut Value| {
        v["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] = "pci0000:c0".into()
    };
    let removed = |v: &mut Value| *v = Value::Null;
    type Edit<'a> = &'a dyn Fn(&mut Value);
    let cases: [(&str, &str, Edit, &str); 2] = [
        (
            "node03",
            "mlx5_1",
            &other_root,
            "Node node03: dra.net node03/rdma-mlx5-1: NIC rdma-mlx5-1 (rdmaDevName mlx5_1) sits under resource.kubernetes.io/pcieRoot pci0000:c0 and GPU gpu-1 (index 1) under pci0000:00, but the plan pairs them as sub-node node03/sn1; fix the inventory's GPU-NIC pairing",
        ),
        (
            "node05",
            "gpu-2",
            &removed,
            "Node node05: GPU gpu.nvidia.com index = 2: the plan puts GPU gpu2 of sub-node node05/sn2 there, and no device of the Node has index 2 (it publishes gpu-0 (index 0), gpu-1 (index 1), gpu-3 (index 3)); fix the inventory or the GPU driver",
        ),
    ];
    for (server, device, edit, want) in cases {
        let text = resource_slices(&plan, &|s, d, v| {
            if s == server && d == device {
                edit(v);
            }
        });
        let path = write_temp(&format!("bad-{server}.yaml"), &text);
        let out = provisioner(
            &[
                "submit",
                DRA_PROBE,
                "--plan",
                PLAN,
                "--cluster",
                path.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(want), "want {want}\nin {stderr}");
    }
}

/// Whole-node pods use the host's network: when the plan gives no NIC
/// addresses, `MASTER_ADDR` is rank 0's Node `InternalIP` as the API
/// reports it, and only `--offline` (no addresses known) falls back to the
/// Node name, which cluster DNS usually cannot resolve.
#[test]
fn master_addr_without_plan_addresses_is_rank0s_node_address() {
    let mut p = plan().into_plan();
    for sn in &mut p.sub_node_list {
        sn.ip = None;
    }
    let plan = p.check(PLAN).unwrap();
    let job = job("examples/allreduce-32.job.toml");
    let bound = bound(&plan);
    let master = |view: &ClusterView| -> (String, String) {
        let sub = submit::prepare(&plan, &bound, &job, view).unwrap();
        let env = &sub.manifests.workload["spec"]["template"]["spec"]["containers"][0]["env"];
        let addr = env
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "MASTER_ADDR")
            .unwrap()["value"]
            .as_str()
            .unwrap()
            .to_string();
        // Rank 0's Node: the first row of the rank table.
        let ranks = config_file(&sub, "ranks.csv");
        let header: Vec<&str> = ranks.lines().next().unwrap().split(',').collect();
        let at = header.iter().position(|h| *h == "node").unwrap();
        let node = ranks.lines().nth(1).unwrap().split(',').nth(at).unwrap();
        (addr, node.to_string())
    };
    let offline = ClusterView::all_free(&bound);
    let (addr, node) = master(&offline);
    assert_eq!(addr, node, "offline: the Node name");
    let mut live = offline.clone();
    for (i, n) in live.nodes.iter_mut().enumerate() {
        n.address = Some(format!("192.0.2.{}", i + 1));
    }
    let (addr, node) = master(&live);
    let want = live.node(&node).unwrap().address.clone().unwrap();
    assert_eq!(addr, want, "rank 0 on {node}");
}

/// A plan whose NICs carry two GPUs each (DGX-1-like servers): one rank
/// per GPU, the two GPUs of a NIC on consecutive ranks; each rank's
/// process sees its own GPU and both use the shared NIC; the pod requests
/// every GPU of its Node; DRA placement is refused with the reason.
#[test]
fn shared_nics_carry_one_rank_per_gpu() {
    let text = read("topologies/dgx1-v100.toml");
    let inv = planner::inventory::Inventory::from_toml(&text, "dgx1-v100.toml").unwrap();
    let plan = planner::design::design(&inv, &planner::design::DesignOptions::default()).unwrap();
    // The DGX-1's GPUs share an NVLink mesh, so whole servers are the
    // default unit; `unit = "gpu"` keeps one GPU per process.
    let spec = "name = \"gpus\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 16\n[placement]\nunit = \"gpu\"\n";
    let job = JobSpec::from_toml(spec, "gpus.job.toml").unwrap();
    let sub = offline(&plan, &job, None);
    let p = &sub.placement;
    assert_eq!(p.ranks.len(), 16);
    assert_eq!(p.worst_load, 1);
    for pair in p.ranks.chunks(2) {
        assert_eq!(pair[0].sub_node, pair[1].sub_node);
    }
    assert!(p.nodes.iter().all(|n| n.gpus == 8), "{:?}", p.nodes);
    let ranks_csv = config_file(&sub, "ranks.csv");
    assert!(
        ranks_csv.starts_with("rank,server,sub_node,gpu,nic,switch,part,node,gpu_index\n"),
        "{ranks_csv}"
    );
    let env_csv = config_file(&sub, "rank-env.csv");
    let rows: Vec<&str> = env_csv.lines().skip(1).take(2).collect();
    assert!(rows[0].contains(",0,=mlx5_0,"), "{env_csv}");
    assert!(rows[1].contains(",1,=mlx5_0,"), "{env_csv}");
    // launch.sh on rank 0's Node: each rank its own GPU, the same NIC.
    let dir = std::env::temp_dir().join(format!("prov-gpus-{}", std::process::id()));
    write_config(&sub, &dir);
    let node = p.ranks[0].node.clone();
    let lines = launch_lines(
        &dir,
        &node,
        "echo $RANK/$LOCAL_RANK/$LOCAL_WORLD_SIZE $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA",
    );
    assert_eq!(lines, ["0/0/1 0 =mlx5_0", "1/0/1 1 =mlx5_0"]);
    // rank-check names the second GPU of the NIC by its index.
    let table = dir.join("ranks.csv");
    let out = provisioner(
        &["rank-check", "--table", table.to_str().unwrap()],
        &[("NODE_NAME", node.as_str())],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("rank 1 on dgx"), "{said}");
    assert!(said.contains(" sn0 (#1, mlx5_0)"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
    // More ranks than GPUs: counted in GPUs.
    let spec = "name = \"gpus\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 256\n";
    let job = JobSpec::from_toml(spec, "gpus.job.toml").unwrap();
    let bound = nodes::bind(&plan, None, PLAN).unwrap();
    let e = submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("needs 256 GPUs (one rank each, with its NIC) and only 128"),
        "{e}"
    );
    // DRA claims a NIC per rank: refused.
    let spec = "name = \"gpus\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 4\n[placement]\nmode = \"dra\"\n";
    let job = JobSpec::from_toml(spec, "gpus.job.toml").unwrap();
    let e = submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound))
        .unwrap_err()
        .to_string();
    assert!(e.contains("NICs shared by several GPUs"), "{e}");
}

/// Servers with an NVLink domain (8 H100-class GPUs on NVSwitch, a NIC per
/// GPU): whole servers are the unit. A 64-rank job takes 8 servers, not 64;
/// every process of a Node sees the Node's 8 GPUs, LOCAL_RANK is its GPU's
/// position and LOCAL_WORLD_SIZE 8 (as `torchrun --nproc_per_node=8` sets
/// them), each rank keeps its own NIC; a rank count that does not fill
/// whole servers is refused with the multiple named.
#[test]
fn nvlink_servers_take_whole_servers_with_every_gpu_visible() {
    let text = read("topologies/h100-8x32.toml");
    let inv = planner::inventory::Inventory::from_toml(&text, "h100-8x32.toml").unwrap();
    let options = planner::design::DesignOptions {
        topology: planner::fabric::Topology::FatTree,
        ..Default::default()
    };
    let plan = planner::design::design(&inv, &options).unwrap();
    let spec = "name = \"llm\"\nimage = \"i\"\ncommand = [\"python\", \"train.py\"]\nranks = 64\nalgorithm = \"ring\"\nengine = \"nccl\"\n";
    let job = JobSpec::from_toml(spec, "llm.job.toml").unwrap();
    let sub = offline(&plan, &job, None);
    // The table is checked for NCCL's ring: NCCL is told to run it.
    let yaml = serde_json::to_string(&sub.manifests.workload).unwrap();
    assert!(
        yaml.contains(r#"{"name":"NCCL_ALGO","value":"Ring"}"#),
        "{yaml}"
    );
    let p = &sub.placement;
    assert_eq!(p.ranks.len(), 64);
    assert_eq!(p.nodes.len(), 8, "{:?}", p.nodes);
    for (i, n) in p.nodes.iter().enumerate() {
        assert_eq!(n.ranks, (8 * i..8 * i + 8).collect::<Vec<_>>(), "{n:?}");
        assert_eq!(n.idle_sub_nodes, 0, "{n:?}");
    }
    assert!(
        p.notes.iter().any(|n| n.starts_with(
            "unit server (the plan's servers have an NVLink domain): 64 ranks on 8 whole servers"
        )),
        "{:#?}",
        p.notes
    );
    assert!(p.worst_load >= p.lower_bound, "{p:?}");
    let dir = std::env::temp_dir().join(format!("prov-nvlink-{}", std::process::id()));
    write_config(&sub, &dir);
    let node = p.ranks[8].node.clone();
    let mut lines = launch_lines(
        &dir,
        &node,
        "echo $RANK/$LOCAL_RANK/$LOCAL_WORLD_SIZE $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA",
    );
    lines.sort_by_key(|l| l.split('/').next().and_then(|r| r.parse::<usize>().ok()));
    let nics: Vec<String> = (8..16)
        .map(|r| {
            let sn = &plan.sub_node_list[p.ranks[r].sub_node];
            sn.nic.to_string()
        })
        .collect();
    assert_eq!(lines.len(), 8, "{lines:?}");
    for (k, line) in lines.iter().enumerate() {
        let want = format!("{}/{k}/8 0,1,2,3,4,5,6,7 ", 8 + k);
        assert!(line.starts_with(&want), "{line} (want {want}...)");
        assert!(
            line.ends_with(&nics[k]),
            "{line}: the NIC of rank {}",
            8 + k
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // 60 ranks do not fill 8-GPU servers.
    let bound = nodes::bind(&plan, None, PLAN).unwrap();
    let job = JobSpec::from_toml(&spec.replace("64", "60"), "llm.job.toml").unwrap();
    let e = submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("60 ranks do not fill whole servers of 8 GPUs") && e.contains("a multiple of 8"),
        "{e}"
    );
}

/// The Secret with the job secret, as the kubelet reads it for a pod's
/// `secretKeyRef` (core/v1 Secret, `data` base64:
/// kubernetes.io/docs/concepts/configuration/secret, v1.34).
fn secret_token(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let secret: Value = serde_norway::from_str(&text).unwrap();
    assert_eq!(
        (&secret["apiVersion"], &secret["kind"], &secret["type"]),
        (
            &Value::from("v1"),
            &Value::from("Secret"),
            &Value::from("Opaque")
        )
    );
    let bytes: k8s_openapi::ByteString =
        serde_json::from_value(secret["data"]["token"].clone()).unwrap();
    String::from_utf8(bytes.0).unwrap()
}

/// Issue 31: every submission makes its own job secret, which only the
/// Secret file holds (mode 0600); every rank container reads it through
/// `secretKeyRef` with `EFLOPS_PROBE_AUTH=required`, and mpirun passes both
/// on to the ranks.
#[test]
fn issue31_the_job_secret_is_in_the_secret_file_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let mut tokens = Vec::new();
    for (i, job) in [INDEXED, MPI, INDEXED].into_iter().enumerate() {
        let file = dir.path().join(format!("secret-{i}.yaml"));
        let out = provisioner(
            &[
                "submit",
                job,
                "--plan",
                PLAN,
                "--offline",
                "--secret-out",
                file.to_str().unwrap(),
            ],
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
        let token = secret_token(&file);
        assert!(
            token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
            "{token}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains(&token) && !stderr.contains(&token));
        assert!(!stdout.contains("kind: Secret"), "{stdout}");
        assert!(stderr.contains("(mode 0600)"), "{stderr}");
        let docs = documents(&stdout);
        let containers: Vec<&Value> = docs
            .iter()
            .flat_map(|d| {
                [
                    "/spec/template/spec/containers/0",
                    "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0",
                ]
                .into_iter()
                .filter_map(|p| d.pointer(p))
            })
            .collect();
        assert_eq!(containers.len(), 1, "{job}");
        let env = containers[0]["env"].as_array().unwrap();
        let name = format!(
            "{}-probe-token",
            if job == INDEXED {
                "allreduce-32"
            } else {
                "allreduce-32-mpi"
            }
        );
        assert!(env.contains(&serde_json::json!({
            "name": "PROBE_TOKEN",
            "valueFrom": { "secretKeyRef": { "name": name, "key": "token" } },
        })));
        assert!(
            env.contains(&serde_json::json!({ "name": "EFLOPS_PROBE_AUTH", "value": "required" }))
        );
        if job == MPI {
            let cm = docs.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
            let mpirun = cm["data"]["mpirun.sh"].as_str().unwrap();
            assert!(
                mpirun.contains("-x PROBE_TOKEN -x EFLOPS_PROBE_AUTH"),
                "{mpirun}"
            );
        }
        tokens.push(token);
    }
    assert!(tokens[0] != tokens[1] && tokens[0] != tokens[2] && tokens[1] != tokens[2]);

    // Without --secret-out the output still holds no Secret, and says how
    // to make it; a submission to a cluster makes it itself.
    let out = provisioner(&["submit", INDEXED, "--plan", PLAN, "--offline"], &[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: the rank pods read PROBE_TOKEN from the Secret allreduce-32-probe-token, which the printed objects leave out"),
        "{stderr}"
    );
    let out = provisioner(
        &["submit", INDEXED, "--plan", PLAN, "--secret-out", "s.yaml"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--secret-out writes the Secret of --dry-run or --offline output")
    );
    // A job file may not set the variables the Secret gives.
    let file = dir.path().join("token.job.toml");
    std::fs::write(
        &file,
        read(INDEXED).replace("[env]\n", "[env]\nPROBE_TOKEN = \"x\"\n"),
    )
    .unwrap();
    let out = provisioner(
        &[
            "submit",
            file.to_str().unwrap(),
            "--plan",
            PLAN,
            "--offline",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("PROBE_TOKEN is set by the provisioner"),
        "{stderr}"
    );
}

/// `[kueue]` through the binary: `submit --offline` prints the pending
/// objects (the Job without Nodes, with Kueue v0.19's PodSet annotation;
/// the ConfigMap with the job file and no table), and `controller
/// --print-admission-check` the AdmissionCheck that names our controller.
#[test]
fn kueue_jobs_wait_for_their_table_and_the_admission_check_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tas.toml");
    std::fs::write(
        &file,
        "name = \"tas\"\nimage = \"registry.example.com/t:1\"\ncommand = [\"python\", \"t.py\"]\nranks = 8\nqueue = \"team-a\"\n[kueue]\npreferred_topology = \"topology.eflops.io/physical\"\n",
    )
    .unwrap();
    let out = provisioner(
        &[
            "submit",
            file.to_str().unwrap(),
            "--plan",
            PLAN,
            "--offline",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rank table pending until admission"),
        "{stderr}"
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = list["items"].as_array().unwrap();
    let job = docs.iter().find(|d| d["kind"] == "Job").unwrap();
    let cm = docs.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    assert_eq!(
        job["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"],
        "topology.eflops.io/physical"
    );
    assert!(job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"].is_null());
    assert!(cm["data"]["job.toml"].as_str().unwrap().contains("[kueue]"));
    assert!(cm["data"]["ranks.csv"].is_null());

    let out = provisioner(
        &[
            "controller",
            "--plan",
            PLAN,
            "--print-admission-check",
            "eflops-rank-table",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ac: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ac["apiVersion"], "kueue.x-k8s.io/v1beta2");
    assert_eq!(
        ac["spec"]["controllerName"],
        "topology.eflops.io/rank-table"
    );
    let out = provisioner(
        &[
            "controller",
            "--plan",
            PLAN,
            "--print-admission-check",
            "Bad Name",
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- DRA whole servers (issue 32) ----

const DRA_SERVER: &str = "examples/train-64-dra-server.job.toml";

/// `topologies/h100-8x32.toml` designed as a leaf-spine: 32 servers of 8
/// H100-class GPUs on NVSwitch, a NIC per GPU.
fn h100() -> CheckedPlan {
    let text = read("topologies/h100-8x32.toml");
    let inv = planner::inventory::Inventory::from_toml(&text, "h100-8x32.toml").unwrap();
    let options = planner::design::DesignOptions {
        topology: planner::fabric::Topology::FatTree,
        ..Default::default()
    };
    planner::design::design(&inv, &options).unwrap()
}

/// The plan as a file for the binary (`planner design --out` writes the
/// same JSON).
fn h100_file(plan: &CheckedPlan) -> PathBuf {
    write_temp("h100-8x32.plan.json", &plan.to_json().unwrap())
}

/// The example's dry-run objects: per server a claim template and a Job
/// of the JobSet.
#[test]
fn golden_dra_server_manifests() {
    let path = h100_file(&h100());
    offline_golden(DRA_SERVER, path.to_str().unwrap(), "train-64-dra-server");
}

/// Issue 32, whole servers under DRA: a 64-GPU job on 8-GPU NVLink
/// servers takes 8 servers. Each server's pod (one replicated Job of the
/// JobSet) claims all 8 GPUs and all 8 NICs of its server, each pair by
/// the attributes a sub-node's claim uses and under one PCIe root; its
/// `launch.sh` starts one process per GPU with torchrun's variables (every
/// GPU visible, LOCAL_RANK its GPU's position, the rank's own NIC); every
/// object passes k8s-openapi's types and the JobSet check. A server with
/// one busy sub-node is not used, and templates of this submission hold
/// its servers for the next one; what cannot work is refused.
#[test]
fn issue32_dra_whole_servers_claim_every_gpu_and_nic() {
    use k8s_openapi::api::batch::v1::JobTemplateSpec;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
    let plan = h100();
    let bound = bound(&plan);
    let spec = job(DRA_SERVER);
    let mut view = ClusterView::all_free(&bound);
    view.dra = provisioner::jobs::dra::DraView::from_described(
        &serde_norway::to_string(&dra::resource_slices(&plan, &|_, _, _| {})).unwrap(),
        "slices.yaml",
    )
    .unwrap();
    let sub = submit::prepare(&plan, &bound, &spec, &view).unwrap();
    let p = &sub.placement;
    assert_eq!(p.ranks.len(), 64);
    assert_eq!(p.nodes.len(), 8, "{:?}", p.nodes);
    for (k, n) in p.nodes.iter().enumerate() {
        assert_eq!(n.ranks, (8 * k..8 * k + 8).collect::<Vec<_>>(), "{n:?}");
        assert_eq!(n.gpus, 8);
    }
    assert!(
        p.notes.iter().any(|n| n.starts_with(
            "unit server: 64 ranks on 8 whole servers of 8 GPUs; each server's pod claims its 8 GPUs and 8 NICs with DRA (nvidia-dranet) in one ResourceClaim"
        )),
        "{:#?}",
        p.notes
    );
    assert!(
        sub.notes
            .iter()
            .any(|n| n.contains("JobSet train-64 (one Job per server)")),
        "{:#?}",
        sub.notes
    );
    let yaml = sub.to_yaml().unwrap();
    let docs = documents(&yaml);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "ResourceClaimTemplate")
            .count(),
        8
    );
    let cm: ConfigMap = serde_json::from_value(docs[0].clone()).unwrap();
    assert!(cm.data.as_ref().unwrap().contains_key("launch.sh"));
    let js = docs.iter().find(|d| d["kind"] == "JobSet").unwrap();
    assert_eq!(
        crate::crd_exports::job_set_problems(js),
        Vec::<String>::new()
    );
    let replicated = js["spec"]["replicatedJobs"].as_array().unwrap();
    assert_eq!(replicated.len(), 8);
    let cel = regex::Regex::new(
        r#"^device\.attributes\["gpu\.nvidia\.com"\]\.index == (\d+)$|^device\.attributes\["dra\.net"\]\.rdmaDevName == "([^"]+)"$"#,
    )
    .unwrap();
    for (k, r) in replicated.iter().enumerate() {
        assert_eq!(r["name"], format!("server-{k}"));
        let t: JobTemplateSpec = serde_json::from_value(r["template"].clone()).unwrap();
        let pod = t.spec.unwrap().template;
        let spec = pod.spec.unwrap();
        let claim = &spec.resource_claims.as_ref().unwrap()[0];
        let template_name = claim.resource_claim_template_name.clone().unwrap();
        assert_eq!(template_name, format!("train-64-server-{k}"));
        let c = &spec.containers[0];
        assert_eq!(
            c.command.as_deref().unwrap()[..4],
            ["sh", "/etc/eflops/launch.sh", "--", "python"].map(String::from)
        );
        let env: std::collections::BTreeMap<String, String> = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
            .collect();
        assert_eq!(env["WORLD_SIZE"], "64");
        assert_eq!(env["MASTER_ADDR"], "train-64-server-0-0-0.train-64.ml.svc");
        assert_eq!(env["NCCL_ALGO"], "Ring");
        assert!(!env.contains_key("RANK") && !env.contains_key("NCCL_IB_HCA"));
        let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
        assert_eq!(limits["cpu"].0, "64");
        // The template: every GPU of the server and its NIC.
        let tdoc = docs
            .iter()
            .find(|d| {
                d["kind"] == "ResourceClaimTemplate" && d["metadata"]["name"] == template_name
            })
            .unwrap();
        let t: ResourceClaimTemplate = serde_json::from_value(tdoc.clone()).unwrap();
        let node = &p.nodes[k];
        assert_eq!(
            t.metadata.annotations.as_ref().unwrap()["topology.eflops.io/node"],
            node.node
        );
        let devices = t.spec.spec.devices.unwrap();
        let requests = devices.requests.unwrap();
        assert_eq!(requests.len(), 16);
        let constraints = devices.constraints.unwrap();
        assert_eq!(constraints.len(), 8);
        for (i, &rank) in node.ranks.iter().enumerate() {
            let sn = &plan.sub_node_list[p.ranks[rank].sub_node];
            let pick = |name: String| {
                let r = requests.iter().find(|r| r.name == name).unwrap();
                let e = r.exactly.as_ref().unwrap();
                assert_eq!(e.count, Some(1));
                let expr = &e.selectors.as_ref().unwrap()[0]
                    .cel
                    .as_ref()
                    .unwrap()
                    .expression;
                cel.captures(expr).unwrap()
            };
            assert_eq!(
                pick(format!("gpu-{i}"))[1].parse::<usize>().unwrap(),
                sn.gpu_index.unwrap()
            );
            assert_eq!(&pick(format!("nic-{i}"))[2], sn.nic.as_str());
            assert_eq!(
                constraints[i].requests.as_deref().unwrap(),
                [format!("gpu-{i}"), format!("nic-{i}")]
            );
            assert_eq!(
                constraints[i].match_attribute.as_deref(),
                Some("resource.kubernetes.io/pcieRoot")
            );
        }
    }
    // launch.sh on the second server: 8 processes, every GPU visible.
    let dir = std::env::temp_dir().join(format!("prov-dra-server-{}", std::process::id()));
    write_config(&sub, &dir);
    let node = p.nodes[1].node.clone();
    let lines = launch_lines(
        &dir,
        &node,
        "echo $RANK/$LOCAL_RANK/$LOCAL_WORLD_SIZE $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA",
    );
    let mut lines = lines;
    lines.sort_by_key(|l| l.split('/').next().and_then(|r| r.parse::<usize>().ok()));
    assert_eq!(lines.len(), 8, "{lines:?}");
    for (k, line) in lines.iter().enumerate() {
        let sn = &plan.sub_node_list[p.ranks[8 + k].sub_node];
        assert_eq!(
            line,
            &format!("{}/{k}/8 0,1,2,3,4,5,6,7 ={}", 8 + k, sn.nic),
            "rank {}",
            8 + k
        );
    }
    let _ = std::fs::remove_dir_all(&dir);

    // A second job packs around this one's templates (each holds its
    // server's 8 sub-nodes), and around a server one of whose GPUs a claim
    // holds: h01's GPU 3 is taken by another team.
    // The first server the first job left.
    let firsts: BTreeSet<&str> = p.nodes.iter().map(|n| n.node.as_str()).collect();
    let other = plan
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .find(|s| !firsts.contains(s))
        .unwrap();
    let busy = format!(
        "apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{ name: other, namespace: team }}
spec: {{ devices: {{}} }}
status: {{ allocation: {{ devices: {{ results: [
  {{ request: gpu, driver: gpu.nvidia.com, pool: {other}, device: gpu-3 }} ] }} }} }}
"
    );
    let mut second_view = ClusterView::all_free(&bound);
    for (text, file) in [
        (resource_slices(&plan, &|_, _, _| {}), "slices.yaml"),
        (yaml.clone(), "first.yaml"),
        (busy, "busy.yaml"),
    ] {
        second_view
            .dra
            .extend(provisioner::jobs::dra::DraView::from_described(&text, file).unwrap());
    }
    let mut second = spec.clone();
    second.name = "second".to_string();
    let q = submit::prepare(&plan, &bound, &second, &second_view)
        .unwrap()
        .placement;
    assert_eq!(q.nodes.len(), 8);
    for n in &q.nodes {
        assert!(
            !firsts.contains(n.node.as_str()) && n.node != other,
            "{} taken twice: {:?}",
            n.node,
            q.nodes
        );
    }
    assert!(
        q.unusable.iter().any(|u| u.node == other
            && u.reason == format!("unit server needs every sub-node free, and 1 of 8 are taken ({other}/sn3: gpu.nvidia.com {other}/gpu-3 is allocated to ResourceClaim team/other)")),
        "{:#?}",
        q.unusable
    );
    assert!(
        q.unusable
            .iter()
            .any(|u| firsts.contains(u.node.as_str())
                && u.reason.starts_with(&format!("unit server needs every sub-node free, and 8 of 8 are taken ({0}/sn0, {0}/sn1, {0}/sn2, {0}/sn3, {0}/sn4, {0}/sn5, {0}/sn6, {0}/sn7: named by ResourceClaimTemplate ml/train-64-server-", u.node))),
        "{:#?}",
        q.unusable
    );

    // What cannot work: ranks that do not fill whole servers, and more
    // servers than are free.
    for (ranks, want) in [
        (60, "60 ranks do not fill whole servers of 8 GPUs"),
        (264, "needs 264 GPUs"),
    ] {
        let mut s = spec.clone();
        s.ranks = ranks;
        let e = submit::prepare(&plan, &bound, &s, &view)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    // A queued JobSet holds at most 18 servers: 19 x 8 ranks are refused.
    let mut s = spec.clone();
    s.ranks = 152;
    s.queue = Some("q".to_string());
    let e = submit::prepare(&plan, &bound, &s, &view)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("at most 18 replicated Jobs, and this job has one per server: 19 servers"),
        "{e}"
    );
}

// ---- Open MPI 5's coll selection (issue 32 item 3) ----

/// Open MPI v5.0.10's `coll` components (`ompi/mca/coll/*/`) that can take
/// `MPI_Allreduce` on an intra-communicator of several processes across
/// nodes, with the default priority each component file registers
/// (`coll_han_component.c` `.han_priority = 35`, `coll_tuned_component.c`
/// `ompi_coll_tuned_priority = 30`, `coll_hcoll_component.c` 90,
/// `coll_ucc_component.c` 10, `coll_adapt_component.c` 0,
/// `coll_basic_component.c` 10, `coll_sm_component.c` 0,
/// `coll_cuda_component.c` 78), and whether it is a wrapper that hands
/// host buffers to the component below it (cuda). The highest priority
/// that answers wins each function (`ompi/mca/coll/base/coll_base_comm_select.c`).
const OMPI_5_0_10_COLL: [(&str, i32, bool); 8] = [
    ("adapt", 0, false),
    ("basic", 10, false),
    ("cuda", 78, true),
    ("han", 35, false),
    ("hcoll", 90, false),
    ("sm", 0, false),
    ("tuned", 30, false),
    ("ucc", 10, false),
];

/// `coll_tuned_allreduce_algorithm`'s enum at v5.0.10 and v4.1.4
/// (`coll_tuned_allreduce_decision.c`, `allreduce_algorithms[]`; the same
/// at both tags); `coll_tuned_use_dynamic_rules` is a bool
/// (`coll_tuned_component.c`, `MCA_BASE_VAR_TYPE_BOOL`).
const TUNED_ALLREDUCE: [(u32, &str); 7] = [
    (0, "ignore"),
    (1, "basic_linear"),
    (2, "nonoverlapping"),
    (3, "recursive_doubling"),
    (4, "ring"),
    (5, "segmented_ring"),
    (6, "rabenseifner"),
];

/// mpirun.sh pins `coll/tuned` on Open MPI 5 as its source declares the
/// parameters: every non-wrapper component that outranks tuned (han, which
/// Open MPI 5 prefers, and hcoll) is excluded, and the algorithm number
/// is the enum's `rabenseifner` (halving-doubling) or `ring`. Excluding a
/// component a build lacks (acoll, xhc: not in v5.0.x) is no error: only
/// an include list is checked for unknown names
/// (`opal/mca/base/mca_base_component_find.c`, `component_find_check` in
/// include mode only, v5.0.10).
#[test]
fn issue32_mpirun_pins_tuned_on_open_mpi_5() {
    for (algorithm, want) in [("hdrm", "rabenseifner"), ("ring", "ring")] {
        let text = read(MPI).replace(
            "algorithm = \"hdrm\"",
            &format!("algorithm = \"{algorithm}\""),
        );
        let spec = JobSpec::from_toml(&text, MPI).unwrap();
        let sub = offline(&plan(), &spec, None);
        let script = config_file(&sub, "mpirun.sh");
        let mca: Vec<(String, String)> = script
            .split("--mca ")
            .skip(1)
            .map(|s| {
                let mut w = s.split_whitespace();
                (w.next().unwrap().to_string(), w.next().unwrap().to_string())
            })
            .collect();
        let get = |name: &str| {
            mca.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no --mca {name} in:\n{script}"))
        };
        let excluded: Vec<&str> = get("coll")
            .strip_prefix('^')
            .expect("an exclusion list")
            .split(',')
            .collect();
        let tuned = OMPI_5_0_10_COLL.iter().find(|c| c.0 == "tuned").unwrap().1;
        for (name, priority, wrapper) in OMPI_5_0_10_COLL {
            let outranks = priority > tuned && !wrapper;
            assert_eq!(
                excluded.contains(&name),
                outranks || ["adapt", "ucc"].contains(&name),
                "{name} (priority {priority}) in {excluded:?}"
            );
        }
        assert!(!excluded.contains(&"tuned"));
        assert!(["1", "true"].contains(&get("coll_tuned_use_dynamic_rules")));
        let n: u32 = get("coll_tuned_allreduce_algorithm").parse().unwrap();
        let named = TUNED_ALLREDUCE.iter().find(|a| a.0 == n).map(|a| a.1);
        assert_eq!(named, Some(want), "{algorithm}");
    }
}

/// A plan of VMs whose inventory gives PCI bus ids
/// (`topologies/ndv5-vm-4.toml`).
const VM_PLAN: &str = "examples/data/ndv5-vm-4.plan.json";

/// Where the plan carries the servers' PCIe trees, the ConfigMap ships each
/// used Node's NCCL topology file, byte for byte what `render --hosts`
/// writes, and both launchers export the rank's own Node's file as
/// `NCCL_TOPO_FILE` (issue #32, item 3).
#[test]
fn issue32_nccl_topology_files_reach_each_ranks_node() {
    let vms = CheckedPlan::load(&read(VM_PLAN), VM_PLAN).unwrap();
    let rendered = planner::render::render_hosts(&vms).unwrap();
    let dir = std::env::temp_dir().join(format!("prov-topo-{}", std::process::id()));
    let d = dir.to_str().unwrap().to_string();
    for path in [INDEXED, MPI] {
        let sub = offline(&vms, &job(path), None);
        let data = sub.manifests.owned[0]["data"].as_object().unwrap();
        let keys: Vec<&String> = data
            .keys()
            .filter(|k| k.ends_with(".nccl-topo.xml"))
            .collect();
        assert_eq!(keys.len(), 4, "{path}: {keys:?}");
        for server in ["vm01", "vm02", "vm03", "vm04"] {
            let name = format!("{server}.nccl-topo.xml");
            let want = &rendered.iter().find(|(n, _)| *n == name).unwrap().1;
            assert_eq!(config_file(&sub, &name), want, "{path} {name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        write_config(&sub, &dir);
        if path == INDEXED {
            let lines = launch_lines(&dir, "vm02", "echo $NCCL_TOPO_FILE");
            assert!(!lines.is_empty());
            for l in &lines {
                assert_eq!(l, &format!("{d}/vm02.nccl-topo.xml"));
            }
        } else {
            let rank = sub
                .placement
                .ranks
                .iter()
                .find(|r| r.node == "vm03")
                .unwrap();
            std::fs::write(dir.join("node"), "vm03\n").unwrap();
            let rank = rank.rank.to_string();
            let out = sh(
                &dir.join("rank-env.sh"),
                &["sh", "-c", "echo $NCCL_TOPO_FILE"],
                &[
                    ("EFLOPS_DIR", &d),
                    ("EFLOPS_RUN", &d),
                    ("OMPI_COMM_WORLD_RANK", &rank),
                ],
            );
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("{d}/vm03.nccl-topo.xml\n")
            );
        }
    }
    // A plan without bus ids ships none, and its scripts say nothing of it.
    let sub = offline(&plan(), &job(INDEXED), None);
    let data = sub.manifests.owned[0]["data"].as_object().unwrap();
    assert!(!data.keys().any(|k| k.contains("nccl-topo")));
    assert!(!config_file(&sub, "launch.sh").contains("NCCL_TOPO_FILE"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// DRA jobs ship NCCL's topology files too: a rank's pod (which runs the
/// program itself) gets `NCCL_TOPO_FILE` naming its Node's file in the
/// mounted ConfigMap; a whole server's pod exports it from `launch.sh`.
#[test]
fn issue32_dra_jobs_ship_each_nodes_nccl_topology() {
    let vms = CheckedPlan::load(&read(VM_PLAN), VM_PLAN).unwrap();
    let rendered = planner::render::render_hosts(&vms).unwrap();
    let shipped = |sub: &Submission| {
        let data = sub.manifests.owned[0]["data"].as_object().unwrap();
        let keys: Vec<&String> = data
            .keys()
            .filter(|k| k.ends_with(".nccl-topo.xml"))
            .collect();
        assert_eq!(keys.len(), 4, "{keys:?}");
        for k in keys {
            let want = &rendered.iter().find(|(n, _)| n == k).unwrap().1;
            assert_eq!(config_file(sub, k), want, "{k}");
        }
    };
    // The DRA drivers publish the VMs' devices.
    let vm_nodes = bound(&vms);
    let mut view = ClusterView::all_free(&vm_nodes);
    view.dra = provisioner::jobs::dra::DraView::from_described(
        &serde_norway::to_string(&dra::resource_slices(&vms, &|_, _, _| {})).unwrap(),
        "slices.yaml",
    )
    .unwrap();
    let dra_submit = |spec: &JobSpec| submit::prepare(&vms, &vm_nodes, spec, &view).unwrap();
    // One pod per rank: the variable of each rank's Node.
    let sub = dra_submit(&job(DRA_PROBE));
    shipped(&sub);
    let jobs = sub.manifests.workload["spec"]["replicatedJobs"]
        .as_array()
        .unwrap();
    assert_eq!(jobs.len(), sub.placement.ranks.len());
    let mut nodes = std::collections::BTreeSet::new();
    for r in &sub.placement.ranks {
        let rjob = &jobs[r.rank];
        assert_eq!(rjob["name"], format!("rank-{}", r.rank));
        let containers = rjob["template"]["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap();
        let rank = containers.iter().find(|c| c["name"] == "rank").unwrap();
        let topo: Vec<&serde_json::Value> = rank["env"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "NCCL_TOPO_FILE")
            .map(|e| &e["value"])
            .collect();
        assert_eq!(
            topo,
            vec![&serde_json::json!(format!(
                "/etc/eflops/{}.nccl-topo.xml",
                r.node
            ))],
            "rank {}",
            r.rank
        );
        nodes.insert(r.node.clone());
    }
    assert_eq!(nodes.len(), 4);
    // One pod per server: launch.sh exports its Node's file.
    let toml = read("examples/train-64-dra-server.job.toml").replace("ranks = 64", "ranks = 32");
    let server = JobSpec::from_toml(&toml, "train-32-dra-server.job.toml").unwrap();
    let sub = dra_submit(&server);
    shipped(&sub);
    let dir = std::env::temp_dir().join(format!("prov-dra-topo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write_config(&sub, &dir);
    let lines = launch_lines(&dir, "vm03", "echo $NCCL_TOPO_FILE");
    assert_eq!(lines.len(), 8, "{lines:?}");
    for l in &lines {
        assert_eq!(l, &format!("{}/vm03.nccl-topo.xml", dir.display()));
    }
    let _ = std::fs::remove_dir_all(&dir);
    // A plan without bus ids: no file and no variable (the DRA golden
    // `allreduce-32-dra.yaml`, unchanged, holds it too).
    let plain = plan();
    let plain_nodes = bound(&plain);
    let mut view = ClusterView::all_free(&plain_nodes);
    view.dra = provisioner::jobs::dra::DraView::from_described(
        &serde_norway::to_string(&dra::resource_slices(&plain, &|_, _, _| {})).unwrap(),
        "slices.yaml",
    )
    .unwrap();
    let sub = submit::prepare(&plain, &plain_nodes, &job(DRA_PROBE), &view).unwrap();
    let text = serde_json::to_string(&(&sub.manifests.workload, &sub.manifests.owned)).unwrap();
    assert!(!text.contains("NCCL_TOPO_FILE") && !text.contains("nccl-topo"));
}
