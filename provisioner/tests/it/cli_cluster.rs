//! The `provisioner` binary against a scripted API server on 127.0.0.1,
//! reached through a kubeconfig like any cluster: checks the whole path
//! from flags to requests, output and exit codes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::export::labels::{DEFAULT_PREFIX, node_labels};

use crate::dra;

const PLAN: &str = "examples/data/eflops-4x16.plan.json";

/// Answers each request with the next `(status, body)` of the script and
/// returns `METHOD PATH?QUERY` of every request it served.
/// Stops once the script is spent, or at the first connection after `stop`
/// is set.
fn serve(
    listener: TcpListener,
    script: Vec<(u16, Value)>,
    stop: Arc<AtomicBool>,
) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut script = script.into_iter();
        'conn: while script.len() > 0 {
            let Ok((stream, _)) = listener.accept() else {
                break;
            };
            if stop.load(Ordering::SeqCst) {
                break;
            }
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut out = stream;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    continue 'conn;
                }
                let request = line.trim_end().rsplit_once(' ').map_or("", |r| r.0);
                let mut length = 0usize;
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        length = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                seen.push(request.to_string());
                let Some((status, reply)) = script.next() else {
                    return seen;
                };
                let reply = serde_json::to_vec(&reply).unwrap();
                write!(
                    out,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    reply.len()
                )
                .unwrap();
                out.write_all(&reply).unwrap();
                out.flush().unwrap();
                if script.len() == 0 {
                    return seen;
                }
            }
        }
        seen
    })
}

/// Runs the binary with a kubeconfig for `server` (namespace `ml`).
fn provisioner(port: u16, args: &[&str]) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("prov-cluster-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("kubeconfig");
    std::fs::write(
        &config,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: http://127.0.0.1:{port}
contexts:
- name: fake
  context:
    cluster: fake
    user: me
    namespace: ml
current-context: fake
users:
- name: me
  user: {{}}
"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_provisioner"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env("KUBECONFIG", &config)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", &dir)
        .output()
        .expect("run provisioner");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Runs `args` against `script`; returns the output and the requests.
fn with_server(script: Vec<(u16, Value)>, args: &[&str]) -> (std::process::Output, Vec<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let server = serve(listener, script, Arc::clone(&stop));
    let out = provisioner(port, args);
    // Let the server go if the binary sent fewer requests than scripted.
    stop.store(true, Ordering::SeqCst);
    let _ = std::net::TcpStream::connect(("127.0.0.1", port));
    (out, server.join().unwrap())
}

fn node_list(names_labels: Vec<(String, BTreeMap<String, String>)>) -> Value {
    let items: Vec<Value> = names_labels
        .into_iter()
        .map(|(n, l)| json!({ "metadata": { "name": n, "labels": l } }))
        .collect();
    json!({ "kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": items })
}

fn not_found() -> Value {
    json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "not found", "reason": "NotFound", "code": 404 })
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn label_nodes_with_missing_nodes_writes_nothing_and_exits_2() {
    let nodes = (1..=15)
        .map(|i| (format!("node{i:02}"), BTreeMap::new()))
        .collect();
    let (out, seen) = with_server(
        vec![(200, node_list(nodes))],
        &["label-nodes", PLAN, "--dry-run"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(seen, ["GET /api/v1/nodes?&limit=500"]);
    assert_eq!(
        text(&out.stderr),
        "error: 1 of the plan's 16 servers have no Node in the cluster: node16; fix the node map (`--node-map`), join the nodes, or pass --allow-missing to label the Nodes that exist\n"
    );
}

#[test]
fn label_nodes_again_changes_nothing() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/eflops-4x16.plan.json"
    );
    let plan = CheckedPlan::load(&std::fs::read_to_string(path).unwrap(), path).unwrap();
    let nodes = node_labels(&plan, DEFAULT_PREFIX)
        .unwrap()
        .into_iter()
        .map(|n| (n.server, n.labels))
        .collect();
    let (out, seen) = with_server(vec![(200, node_list(nodes))], &["label-nodes", PLAN]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(seen, ["GET /api/v1/nodes?&limit=500"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "eflops-4x16: 0 Nodes labelled, 16 unchanged, 0 missing from the cluster; labels under topology.eflops.io/\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nnode16  node16  unchanged  0      0        0\n"),
        "{stdout}"
    );
}

#[test]
fn delete_of_a_missing_job_exits_2_in_the_context_namespace() {
    let (out, seen) = with_server(
        vec![
            (404, not_found()),
            (404, not_found()),
            (404, not_found()),
            (404, not_found()),
        ],
        &["delete", "train"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        seen,
        [
            "GET /apis/batch/v1/namespaces/ml/jobs/train",
            "GET /apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/train",
            "GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/train",
            "GET /api/v1/namespaces/ml/configmaps/train-ranks",
        ]
    );
    assert!(
        text(&out.stderr).starts_with(
            "error: no Job, MPIJob, JobSet or DRA submission named train in namespace ml;"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn status_as_json() {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": { "name": "train", "namespace": "team", "labels": {
            "app.kubernetes.io/managed-by": "eflops-provisioner",
            "app.kubernetes.io/instance": "train",
        } },
        "status": { "succeeded": 2, "conditions": [{ "type": "Complete", "status": "True" }] },
    });
    let pods = json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [] });
    let (out, seen) = with_server(
        vec![(200, job), (200, pods)],
        &["status", "train", "-n", "team", "--format", "json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(seen[0], "GET /apis/batch/v1/namespaces/team/jobs/train");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            v["kind"].as_str(),
            v["phase"].as_str(),
            v["succeeded"].as_u64()
        ),
        (Some("Job"), Some("Succeeded"), Some(2))
    );
}

const JOB: &str = "examples/allreduce-32.job.toml";
const PODS_QUERY: &str = "GET /api/v1/pods?&fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed&limit=500";

/// The 16 Nodes of the EFLOPS plan, Ready, four GPUs each.
fn gpu_nodes() -> Value {
    let items: Vec<Value> = (1..=16)
        .map(|i| {
            json!({
                "metadata": { "name": format!("node{i:02}") },
                "spec": {},
                "status": {
                    "allocatable": { "nvidia.com/gpu": "4" },
                    "conditions": [{ "type": "Ready", "status": "True" }],
                },
            })
        })
        .collect();
    json!({ "kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": items })
}

/// One pod holding a GPU on node01.
fn busy_pods() -> Value {
    json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{
        "metadata": { "name": "other", "namespace": "team" },
        "spec": { "nodeName": "node01", "containers": [{ "name": "c", "image": "x",
            "resources": { "requests": { "nvidia.com/gpu": "1" } } }] },
        "status": { "phase": "Running" },
    }] })
}

/// Discovery of a cluster without the Workload API: `scheduling.k8s.io/v1alpha2`
/// is not found, and the group list has `scheduling.k8s.io/v1` only.
fn no_workload_api() -> Vec<(u16, Value)> {
    vec![
        (404, not_found()),
        (
            200,
            json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": "scheduling.k8s.io",
                "versions": [{ "groupVersion": "scheduling.k8s.io/v1", "version": "v1" }],
            }] }),
        ),
    ]
}

/// The requests of [`no_workload_api`].
const NO_WORKLOAD_API: [&str; 2] = ["GET /apis/scheduling.k8s.io/v1alpha2", "GET /apis"];

/// What `submit` of a whole-Node job reads from a cluster without the
/// Workload API: Nodes, pods, then [`no_workload_api`].
const READS_WITHOUT_WORKLOAD_API: [&str; 4] = [
    "GET /api/v1/nodes?&limit=500",
    PODS_QUERY,
    NO_WORKLOAD_API[0],
    NO_WORKLOAD_API[1],
];

/// What the API server returns for an applied object: the object with a
/// uid.
fn stored(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({ "apiVersion": api_version, "kind": kind,
            "metadata": { "name": name, "namespace": "ml", "uid": uid } })
}

#[test]
fn submit_reads_the_cluster_places_around_busy_nodes_and_applies() {
    let mut script = vec![(200, gpu_nodes()), (200, busy_pods())];
    script.extend(no_workload_api());
    script.extend([
        (
            200,
            stored("v1", "Secret", "allreduce-32-probe-token", "uid-s"),
        ),
        (200, stored("batch/v1", "Job", "allreduce-32", "uid-job")),
        (
            200,
            stored("v1", "Secret", "allreduce-32-probe-token", "uid-s"),
        ),
        (
            200,
            stored("v1", "ConfigMap", "allreduce-32-ranks", "uid-cm"),
        ),
        (200, stored("v1", "Service", "allreduce-32", "uid-svc")),
    ]);
    let (out, seen) = with_server(script, &["submit", JOB, "--plan", PLAN, "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let apply = "?&force=true&fieldManager=eflops-provisioner";
    assert_eq!(
        seen,
        [
            "GET /api/v1/nodes?&limit=500".to_string(),
            PODS_QUERY.to_string(),
            NO_WORKLOAD_API[0].to_string(),
            NO_WORKLOAD_API[1].to_string(),
            format!("PATCH /api/v1/namespaces/ml/secrets/allreduce-32-probe-token{apply}"),
            format!("PATCH /apis/batch/v1/namespaces/ml/jobs/allreduce-32{apply}"),
            format!("PATCH /api/v1/namespaces/ml/secrets/allreduce-32-probe-token{apply}"),
            format!("PATCH /api/v1/namespaces/ml/configmaps/allreduce-32-ranks{apply}"),
            format!("PATCH /api/v1/namespaces/ml/services/allreduce-32{apply}"),
        ]
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["applied"]["workload"]["uid"], "uid-job");
    assert_eq!(v["applied"]["owned"].as_array().map(Vec::len), Some(3));
    // The job secret is in the request bodies only, never in the output.
    let secret = v["applied"]["owned"][0]["name"].as_str();
    assert_eq!(secret, Some("allreduce-32-probe-token"));
    // node01 holds a GPU of another pod: the placement summary says no rank
    // went there.
    let summary = text(&out.stderr);
    assert!(summary.contains("node01"), "{summary}");
    // No Workload API: left out, and the summary says what it needs.
    assert!(
        summary.contains("does not serve scheduling.k8s.io/v1alpha2 workloads and podgroups (discovery lists scheduling.k8s.io/v1 only); they need Kubernetes 1.36"),
        "{summary}"
    );
}

#[test]
fn submit_dry_run_with_a_cluster_only_reads() {
    let mut script = vec![(200, gpu_nodes()), (200, busy_pods())];
    script.extend(no_workload_api());
    let (out, seen) = with_server(
        script,
        &[
            "submit",
            JOB,
            "--plan",
            PLAN,
            "--dry-run",
            "--format",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(seen, READS_WITHOUT_WORKLOAD_API);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Job")
        .expect("a Job");
    let nodes = job.pointer("/spec/template/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields/0/values").expect("node affinity");
    let nodes: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(nodes.len(), 8, "{nodes:?}");
    assert!(
        !nodes.contains(&"node01"),
        "busy node01 was chosen: {nodes:?}"
    );
}

/// `submit` with `[placement] mode = "dra"` reads ResourceSlices, claims
/// and earlier templates, leaves the sub-node whose GPU a claim holds, and
/// applies the job's Secret, the JobSet (a Job per rank), then the Secret
/// again, the ConfigMap and a claim template per rank, owned by the JobSet.
#[test]
fn submit_with_dra_reads_devices_and_applies_a_claim_per_rank() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/eflops-4x16.plan.json"
    );
    let plan = CheckedPlan::load(&std::fs::read_to_string(path).unwrap(), path).unwrap();
    let job = std::env::temp_dir().join(format!("prov-cli-dra-{}.job.toml", std::process::id()));
    std::fs::write(
        &job,
        "name = \"d\"\nnamespace = \"ml\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 4\n[placement]\nmode = \"dra\"\npacking = \"fill\"\n",
    )
    .unwrap();
    let empty = |kind: &str| json!({ "apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {}, "items": [] });
    let mut claims = empty("ResourceClaimList");
    claims["items"] = json!([{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": { "name": "other", "namespace": "team" },
        "spec": { "devices": {} },
        "status": { "allocation": { "devices": { "results": [
            { "request": "gpu", "driver": "gpu.nvidia.com", "pool": "node01", "device": "gpu-0" },
        ] } } },
    }]);
    let mut script = vec![
        (200, gpu_nodes()),
        (
            200,
            json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [] }),
        ),
        (200, dra::resource_slices(&plan, &|_, _, _| {})),
        (200, claims),
        (200, empty("ResourceClaimTemplateList")),
        // Kubernetes 1.36 with the Workload API (discovery's
        // APIResourceList, as `kubectl get --raw` prints it).
        (
            200,
            json!({ "kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": "scheduling.k8s.io/v1alpha2", "resources": [
                { "name": "podgroups", "singularName": "podgroup", "namespaced": true,
                  "kind": "PodGroup", "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"] },
                { "name": "podgroups/status", "singularName": "", "namespaced": true,
                  "kind": "PodGroup", "verbs": ["get", "patch", "update"] },
                { "name": "workloads", "singularName": "workload", "namespaced": true,
                  "kind": "Workload", "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"] },
            ] }),
        ),
        (200, stored("v1", "Secret", "d-probe-token", "uid-s")),
        (
            200,
            stored("jobset.x-k8s.io/v1alpha2", "JobSet", "d", "uid-js"),
        ),
        (200, stored("v1", "Secret", "d-probe-token", "uid-s")),
        (
            200,
            stored("scheduling.k8s.io/v1alpha2", "Workload", "d", "uid-w"),
        ),
        (
            200,
            stored("scheduling.k8s.io/v1alpha2", "PodGroup", "d", "uid-pg"),
        ),
        (200, stored("v1", "ConfigMap", "d-ranks", "uid-cm")),
    ];
    for r in 0..4 {
        script.push((
            200,
            stored(
                "resource.k8s.io/v1",
                "ResourceClaimTemplate",
                &format!("d-{r}"),
                &format!("uid-t{r}"),
            ),
        ));
    }
    let (out, seen) = with_server(
        script,
        &[
            "submit",
            job.to_str().unwrap(),
            "--plan",
            PLAN,
            "--format",
            "json",
        ],
    );
    let _ = std::fs::remove_file(&job);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let apply = "?&force=true&fieldManager=eflops-provisioner";
    let mut want = vec![
        "GET /api/v1/nodes?&limit=500".to_string(),
        PODS_QUERY.to_string(),
        "GET /apis/resource.k8s.io/v1/resourceslices?&limit=500".to_string(),
        "GET /apis/resource.k8s.io/v1/resourceclaims?&limit=500".to_string(),
        "GET /apis/resource.k8s.io/v1/resourceclaimtemplates?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner&limit=500".to_string(),
        "GET /apis/scheduling.k8s.io/v1alpha2".to_string(),
        format!("PATCH /api/v1/namespaces/ml/secrets/d-probe-token{apply}"),
        format!("PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/d{apply}"),
        format!("PATCH /api/v1/namespaces/ml/secrets/d-probe-token{apply}"),
        format!("PATCH /apis/scheduling.k8s.io/v1alpha2/namespaces/ml/workloads/d{apply}"),
        format!("PATCH /apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/d{apply}"),
        format!("PATCH /api/v1/namespaces/ml/configmaps/d-ranks{apply}"),
    ];
    for r in 0..4 {
        want.push(format!(
            "PATCH /apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates/d-{r}{apply}"
        ));
    }
    assert_eq!(seen, want);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["applied"]["workload"]["kind"], "JobSet");
    assert_eq!(v["applied"]["owned"].as_array().map(Vec::len), Some(8));
    // fill: one server; node01's first GPU is taken, so not node01.
    let summary = text(&out.stderr);
    assert!(summary.contains("job d: 4 ranks on 1 Nodes"), "{summary}");
    assert!(!summary.contains("node01  node01"), "{summary}");
    assert!(
        summary.contains("the 4 pods are one gang: Workload and PodGroup d (scheduling.k8s.io/v1alpha2), minCount 4, every pod in one domain of kubernetes.io/hostname"),
        "{summary}"
    );
}

/// `workload_api = "on"` against a cluster without the Workload API is
/// refused before anything is applied, naming the job file's line and
/// what to enable (#29 item 4).
#[test]
fn submit_with_the_workload_api_on_refuses_a_cluster_without_it() {
    let job = std::env::temp_dir().join(format!("prov-cli-wl-{}.job.toml", std::process::id()));
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/allreduce-32.job.toml"
    ))
    .unwrap();
    let lines = source.lines().count();
    std::fs::write(
        &job,
        format!("{source}\n[schedule]\nworkload_api = \"on\"\n"),
    )
    .unwrap();
    let mut script = vec![(200, gpu_nodes()), (200, busy_pods())];
    script.extend(no_workload_api());
    let (out, seen) = with_server(script, &["submit", job.to_str().unwrap(), "--plan", PLAN]);
    let _ = std::fs::remove_file(&job);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(seen, READS_WITHOUT_WORKLOAD_API);
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(".job.toml:{}: schedule.workload_api: ", lines + 3)),
        "{err}"
    );
    assert!(
        err.contains("discovery lists scheduling.k8s.io/v1 only")
            && err.contains("--runtime-config=scheduling.k8s.io/v1alpha2=true"),
        "{err}"
    );
}

/// `submit` of a whole-server DRA job (`[placement] unit = "server"`, issue
/// 32) on an NVLink plan: it reads the Nodes, pods and DRA objects, leaves
/// the server one of whose GPUs a claim holds, and applies the Secret, the
/// JobSet (a Job per server), the Secret again, the ConfigMap and one claim
/// template per server, owned by the JobSet: 16 ranks, 2 servers.
#[test]
fn submit_with_dra_whole_servers_applies_a_claim_per_server() {
    let inventory = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/h100-8x32.toml"
    ))
    .unwrap();
    let inv = planner::inventory::Inventory::from_toml(&inventory, "h100-8x32.toml").unwrap();
    let options = planner::design::DesignOptions {
        topology: planner::fabric::Topology::FatTree,
        ..Default::default()
    };
    let plan = planner::design::design(&inv, &options).unwrap();
    let dir = std::env::temp_dir().join(format!("prov-cli-dra-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan_file = dir.join("h100-8x32.plan.json");
    std::fs::write(&plan_file, plan.to_json().unwrap()).unwrap();
    let job = dir.join("s.job.toml");
    std::fs::write(
        &job,
        "name = \"s\"\nnamespace = \"ml\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 16\nalgorithm = \"ring\"\nengine = \"nccl\"\n[placement]\nmode = \"dra\"\nunit = \"server\"\n",
    )
    .unwrap();
    let nodes: Vec<Value> = plan
        .servers
        .iter()
        .map(|s| {
            json!({
                "metadata": { "name": s.name },
                "spec": {},
                "status": {
                    "allocatable": { "nvidia.com/gpu": "8" },
                    "conditions": [{ "type": "Ready", "status": "True" }],
                },
            })
        })
        .collect();
    let empty = |kind: &str| json!({ "apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {}, "items": [] });
    let mut claims = empty("ResourceClaimList");
    claims["items"] = json!([{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": { "name": "other", "namespace": "team" },
        "spec": { "devices": {} },
        "status": { "allocation": { "devices": { "results": [
            { "request": "nic", "driver": "dra.net", "pool": "h01", "device": "rdma-nic5" },
        ] } } },
    }]);
    let mut script = vec![
        (
            200,
            json!({ "kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": nodes }),
        ),
        (
            200,
            json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [] }),
        ),
        (200, dra::resource_slices(&plan, &|_, _, _| {})),
        (200, claims),
        (200, empty("ResourceClaimTemplateList")),
    ];
    // A cluster without the Workload API, then the applies.
    script.extend(no_workload_api());
    script.extend([
        (200, stored("v1", "Secret", "s-probe-token", "uid-s")),
        (
            200,
            stored("jobset.x-k8s.io/v1alpha2", "JobSet", "s", "uid-js"),
        ),
        (200, stored("v1", "Secret", "s-probe-token", "uid-s")),
        (200, stored("v1", "ConfigMap", "s-ranks", "uid-cm")),
    ]);
    for k in 0..2 {
        script.push((
            200,
            stored(
                "resource.k8s.io/v1",
                "ResourceClaimTemplate",
                &format!("s-server-{k}"),
                &format!("uid-t{k}"),
            ),
        ));
    }
    let (out, seen) = with_server(
        script,
        &[
            "submit",
            job.to_str().unwrap(),
            "--plan",
            plan_file.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let apply = "?&force=true&fieldManager=eflops-provisioner";
    let mut want = vec![
        "GET /api/v1/nodes?&limit=500".to_string(),
        PODS_QUERY.to_string(),
        "GET /apis/resource.k8s.io/v1/resourceslices?&limit=500".to_string(),
        "GET /apis/resource.k8s.io/v1/resourceclaims?&limit=500".to_string(),
        "GET /apis/resource.k8s.io/v1/resourceclaimtemplates?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner&limit=500".to_string(),
        NO_WORKLOAD_API[0].to_string(),
        NO_WORKLOAD_API[1].to_string(),
        format!("PATCH /api/v1/namespaces/ml/secrets/s-probe-token{apply}"),
        format!("PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/s{apply}"),
        format!("PATCH /api/v1/namespaces/ml/secrets/s-probe-token{apply}"),
        format!("PATCH /api/v1/namespaces/ml/configmaps/s-ranks{apply}"),
    ];
    for k in 0..2 {
        want.push(format!(
            "PATCH /apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates/s-server-{k}{apply}"
        ));
    }
    assert_eq!(seen, want);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["applied"]["workload"]["kind"], "JobSet");
    assert_eq!(v["applied"]["owned"].as_array().map(Vec::len), Some(4));
    let summary = text(&out.stderr);
    assert!(summary.contains("job s: 16 ranks on 2 Nodes"), "{summary}");
    assert!(!summary.contains("h01     h01"), "{summary}");
    assert!(
        summary.contains("h01 (server h01): unit server needs every sub-node free, and 1 of 8 are taken (h01/sn5: dra.net h01/rdma-nic5 is allocated to ResourceClaim team/other)")
            || summary.contains("h01: unit server needs every sub-node free, and 1 of 8 are taken (h01/sn5: dra.net h01/rdma-nic5 is allocated to ResourceClaim team/other)"),
        "{summary}"
    );
}

/// #29 item 2: `provisioner controller --once` against an API server that
/// keeps failing one list: the list is tried 4 times with a back-off, the
/// failure is one JSON line naming what failed (`event: error`), the gang
/// pass still runs, and the exit code says a request failed.
#[test]
fn controller_once_reports_a_failing_list_and_serves_the_gangs() {
    let busy = json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": "etcdserver: leader changed", "reason": "InternalError", "code": 500 });
    let pods = json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [] });
    let mut script = vec![(500, busy); 4];
    script.push((200, pods));
    let (out, seen) = with_server(
        script,
        &["controller", "--plan", PLAN, "--once", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        seen,
        [
            "GET /apis/kueue.x-k8s.io/v1beta2/admissionchecks?&limit=500",
            "GET /apis/kueue.x-k8s.io/v1beta2/admissionchecks?&limit=500",
            "GET /apis/kueue.x-k8s.io/v1beta2/admissionchecks?&limit=500",
            "GET /apis/kueue.x-k8s.io/v1beta2/admissionchecks?&limit=500",
            "GET /api/v1/pods?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner%2Ctopology.eflops.io%2Fgang%3Dcontroller&limit=500",
        ]
    );
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", text(&out.stdout));
    assert_eq!(lines[0]["event"], "error");
    assert_eq!(lines[0]["object"], "the Kueue admission pass");
    let message = lines[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("listing Kueue AdmissionChecks: etcdserver: leader changed (500"),
        "{message}"
    );
    assert!(
        text(&out.stderr).contains("a request of the pass failed"),
        "{}",
        text(&out.stderr)
    );
}
