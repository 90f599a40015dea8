//! The cluster module against a fake API server: every request is checked
//! (method, path, query, content type, body) and answered from a script.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use http::{Request, Response};
use kube::client::Body;
use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::export::labels::{DEFAULT_PREFIX, node_labels};
use provisioner::cluster::{self, Error, JobPhase, LabelOptions, NodeChange, WaitOptions};
use provisioner::jobs::view::Manifests;

/// One request the client must send, and the answer it gets.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub(crate) method: &'static str,
    /// Path and query, exactly.
    pub(crate) uri: String,
    /// `Content-Type` of the request, when it has a body.
    content_type: Option<&'static str>,
    /// The request body as JSON, when it has one.
    body: Option<Value>,
    pub(crate) status: u16,
    pub(crate) reply: Value,
}

fn get(uri: impl Into<String>, reply: Value) -> Exchange {
    Exchange {
        method: "GET",
        uri: uri.into(),
        content_type: None,
        body: None,
        status: 200,
        reply,
    }
}

fn status_reply(code: u16, message: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "NotFound", "code": code,
    })
}

const APPLY: &str = "application/apply-patch+yaml";
const SSA_QUERY: &str = "force=true&fieldManager=eflops-provisioner";

/// Runs `f` against a client whose API server answers `script`, in order,
/// and checks each request; a request beyond the script fails the client
/// call.
fn run<T, F, Fut>(script: Vec<Exchange>, f: F) -> T
where
    F: FnOnce(kube::Client) -> Fut,
    Fut: Future<Output = T>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let server = tokio::spawn(async move {
            let mut handle = std::pin::pin!(handle);
            for (i, ex) in script.into_iter().enumerate() {
                let (req, send) = handle
                    .next_request()
                    .await
                    .unwrap_or_else(|| panic!("request {i} ({} {}) never came", ex.method, ex.uri));
                let (parts, body) = req.into_parts();
                assert_eq!(
                    (parts.method.as_str(), parts.uri.to_string().as_str()),
                    (ex.method, ex.uri.as_str()),
                    "request {i}"
                );
                let bytes = body.collect_bytes().await.unwrap();
                if let Some(ct) = ex.content_type {
                    assert_eq!(
                        parts.headers.get(http::header::CONTENT_TYPE).unwrap(),
                        ct,
                        "request {i}: {} {}",
                        ex.method,
                        ex.uri
                    );
                }
                match &ex.body {
                    Some(want) => {
                        let got: Value = serde_json::from_slice(&bytes).unwrap();
                        assert_eq!(&got, want, "request {i}: {} {}", ex.method, ex.uri);
                    }
                    None if ex.method == "GET" => assert!(bytes.is_empty(), "request {i}"),
                    None => {}
                }
                // `{"__raw": text}` is sent as it is (a log, or a watch's
                // newline-delimited events); anything else as JSON.
                let bytes = match ex.reply.get("__raw").and_then(Value::as_str) {
                    Some(text) => text.as_bytes().to_vec(),
                    None => serde_json::to_vec(&ex.reply).unwrap(),
                };
                let reply = Response::builder()
                    .status(ex.status)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Body::from(bytes))
                    .unwrap();
                send.send_response(reply);
            }
        });
        let out = tokio::time::timeout(Duration::from_secs(20), f(client))
            .await
            .expect("the client hung");
        if let Err(e) = server.await {
            std::panic::resume_unwind(e.into_panic());
        }
        out
    })
}

fn eflops() -> CheckedPlan {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/data/eflops-4x16.plan.json"
    );
    CheckedPlan::load(&std::fs::read_to_string(path).unwrap(), path).unwrap()
}

fn planned_labels(plan: &CheckedPlan) -> BTreeMap<String, BTreeMap<String, String>> {
    node_labels(plan, DEFAULT_PREFIX)
        .unwrap()
        .into_iter()
        .map(|n| (n.server, n.labels))
        .collect()
}

fn node(name: &str, labels: &BTreeMap<String, String>) -> Value {
    json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": name, "labels": labels } })
}

fn node_list(nodes: Vec<Value>) -> Value {
    json!({ "apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": nodes })
}

fn options(dry_run: bool, allow_missing: bool) -> LabelOptions {
    LabelOptions {
        prefix: DEFAULT_PREFIX.to_string(),
        dry_run,
        allow_missing,
    }
}

#[test]
fn label_nodes_refuses_when_nodes_are_missing() {
    let plan = eflops();
    let mut nodes: Vec<Value> = (1..=14)
        .map(|i| node(&format!("node{i:02}"), &BTreeMap::new()))
        .collect();
    nodes.push(node("login1", &BTreeMap::new()));
    let script = vec![get("/api/v1/nodes?&limit=500", node_list(nodes))];
    let err = run(script, |c| async move {
        cluster::label_nodes(&c, &plan, "eflops.json", None, &options(false, false)).await
    })
    .unwrap_err();
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "2 of the plan's 16 servers have no Node in the cluster: node15, node16; fix the node map (`--node-map`), join the nodes, or pass --allow-missing to label the Nodes that exist"
    );
}

/// The EFLOPS 4x16 plan on a cluster with 14 of its 16 Nodes and one more:
/// node01 is already labelled (no request), node02 has a wrong value and a
/// stale key another manager wrote (apply, then a merge patch removes it),
/// the rest get all their labels.
#[test]
fn label_nodes_on_the_eflops_plan_with_missing_nodes() {
    let plan = eflops();
    let want = planned_labels(&plan);
    // The labels the plan gives node01, spelled out.
    let n1 = &want["node01"];
    assert_eq!(n1["topology.eflops.io/fabric"], "eflops-4x16");
    assert_eq!(n1["topology.eflops.io/sn0.switch"], "sw01-u");
    assert_eq!(n1["topology.eflops.io/sn0.nic"], "mlx5_0");

    let mut stale = want["node02"].clone();
    stale.insert("topology.eflops.io/switch".into(), "wrong".into());
    stale.insert("topology.eflops.io/old".into(), "x".into());
    stale.insert("kubernetes.io/hostname".into(), "node02".into());
    let mut nodes = vec![node("node01", &want["node01"]), node("node02", &stale)];
    for i in 3..=14 {
        nodes.push(node(&format!("node{i:02}"), &BTreeMap::new()));
    }
    nodes.push(node("login1", &BTreeMap::new()));

    let patch = |name: &str, body: Value, reply: Value, ct: &'static str, query: &str| Exchange {
        method: "PATCH",
        uri: format!("/api/v1/nodes/{name}?&dryRun=All&{query}"),
        content_type: Some(ct),
        body: Some(body),
        status: 200,
        reply,
    };
    let mut script = vec![get("/api/v1/nodes?&limit=500", node_list(nodes))];
    // node02: the apply answers with the stale key still there.
    let mut after = want["node02"].clone();
    after.insert("topology.eflops.io/old".into(), "x".into());
    after.insert("kubernetes.io/hostname".into(), "node02".into());
    script.push(patch(
        "node02",
        node("node02", &want["node02"]),
        node("node02", &after),
        APPLY,
        SSA_QUERY,
    ));
    script.push(patch(
        "node02",
        json!({ "metadata": { "labels": { "topology.eflops.io/old": null } } }),
        node("node02", &want["node02"]),
        "application/merge-patch+json",
        "fieldManager=eflops-provisioner",
    ));
    for i in 3..=14 {
        let name = format!("node{i:02}");
        script.push(patch(
            &name,
            node(&name, &want[&name]),
            node(&name, &want[&name]),
            APPLY,
            SSA_QUERY,
        ));
    }
    let report = run(script, |c| async move {
        cluster::label_nodes(&c, &plan, "eflops.json", None, &options(true, true)).await
    })
    .unwrap();
    assert!(report.dry_run);
    assert_eq!(report.prefix, "topology.eflops.io/");
    assert_eq!(report.not_in_plan, ["login1"]);
    assert_eq!(report.count(NodeChange::Unchanged), 1);
    assert_eq!(report.count(NodeChange::Changed), 13);
    assert_eq!(report.count(NodeChange::Missing), 2);
    let n2 = &report.nodes[1];
    assert_eq!(n2.node, "node02");
    assert_eq!(n2.updated, ["topology.eflops.io/switch"]);
    assert_eq!(n2.removed, ["topology.eflops.io/old"]);
    assert!(n2.added.is_empty());
    assert_eq!(report.nodes[2].added.len(), want["node03"].len());
    assert_eq!(
        (report.nodes[15].node.as_str(), report.nodes[15].change),
        ("node16", NodeChange::Missing)
    );
}

#[test]
fn relabelling_a_labelled_cluster_sends_no_patch() {
    let plan = eflops();
    let want = planned_labels(&plan);
    let nodes = want
        .iter()
        .map(|(name, labels)| {
            let mut labels = labels.clone();
            labels.insert("kubernetes.io/hostname".into(), name.clone());
            node(name, &labels)
        })
        .collect();
    let script = vec![get("/api/v1/nodes?&limit=500", node_list(nodes))];
    let report = run(script, |c| async move {
        cluster::label_nodes(&c, &plan, "eflops.json", None, &options(false, false)).await
    })
    .unwrap();
    assert_eq!(report.count(NodeChange::Unchanged), 16);
    assert!(report.not_in_plan.is_empty());
}

fn k8s_node(name: &str, ready: &str, unschedulable: bool, gpus: Option<&str>) -> Value {
    let mut allocatable = json!({ "cpu": "64", "memory": "512Gi" });
    if let Some(g) = gpus {
        allocatable["nvidia.com/gpu"] = json!(g);
    }
    json!({
        "metadata": { "name": name },
        "spec": { "unschedulable": unschedulable },
        "status": {
            "addresses": [
                { "type": "Hostname", "address": name },
                { "type": "InternalIP", "address": format!("192.0.2.{}", name.len()) },
            ],
            "allocatable": allocatable,
            "conditions": [
                { "type": "MemoryPressure", "status": "False" },
                { "type": "Ready", "status": ready },
            ],
        },
    })
}

fn pod(ns: &str, name: &str, node: &str, phase: &str, gpus: &[&str], init: &[&str]) -> Value {
    let containers = |list: &[&str], prefix: &str| -> Vec<Value> {
        list.iter()
            .enumerate()
            .map(|(i, g)| {
                let resources = if g.is_empty() {
                    json!({})
                } else {
                    json!({ "requests": { "nvidia.com/gpu": g }, "limits": { "nvidia.com/gpu": g } })
                };
                json!({ "name": format!("{prefix}{i}"), "image": "x", "resources": resources })
            })
            .collect()
    };
    json!({
        "metadata": { "namespace": ns, "name": name },
        "spec": {
            "nodeName": node,
            "containers": containers(gpus, "c"),
            "initContainers": containers(init, "init"),
        },
        "status": { "phase": phase },
    })
}

/// `read_view`'s requests on a cluster of two pages of Nodes (one not
/// Ready, one cordoned, one without GPUs) and pods in every state.
pub(crate) fn read_view_script() -> Vec<Exchange> {
    let nodes_page1 = json!({
        "kind": "NodeList", "apiVersion": "v1",
        "metadata": { "continue": "page2" },
        "items": [
            k8s_node("node02", "False", false, Some("8")),
            k8s_node("node01", "True", false, Some("8")),
        ],
    });
    let nodes_page2 = node_list(vec![
        k8s_node("node03", "True", true, Some("8")),
        k8s_node("cpu1", "True", false, None),
    ]);
    let pods = json!({
        "kind": "PodList", "apiVersion": "v1", "metadata": {},
        "items": [
            pod("ml", "train-1", "node01", "Running", &["1", "1"], &[]),
            pod("ml", "bigger-init", "node01", "Pending", &["1"], &["4"]),
            pod("ml", "cpu-only", "node01", "Running", &[""], &[]),
            pod("ml", "done", "node01", "Succeeded", &["8"], &[]),
            pod("ml", "elsewhere", "node99", "Running", &["8"], &[]),
            pod("a", "first", "node02", "Running", &["2"], &[]),
        ],
    });
    vec![
        get("/api/v1/nodes?&limit=500", nodes_page1),
        get("/api/v1/nodes?&limit=500&continue=page2", nodes_page2),
        get(
            "/api/v1/pods?&fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed&limit=500",
            pods,
        ),
    ]
}

#[test]
fn read_view_with_busy_pods_and_a_not_ready_node() {
    let view = run(read_view_script(), |c| async move {
        cluster::read_view(&c, cluster::DEFAULT_GPU_RESOURCE).await
    })
    .unwrap();
    let names: Vec<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["cpu1", "node01", "node02", "node03"]);
    let n1 = view.node("node01").unwrap();
    let pods: Vec<(&str, u32)> = n1.pods.iter().map(|p| (p.name.as_str(), p.gpus)).collect();
    assert_eq!(pods, [("bigger-init", 4), ("train-1", 2)]);
    assert_eq!((n1.gpu_allocatable, n1.gpu_free()), (8, 2));
    // The InternalIP, not the Hostname address (MASTER_ADDR of whole-node
    // jobs without plan addresses).
    assert_eq!(n1.address.as_deref(), Some("192.0.2.6"));
    let n2 = view.node("node02").unwrap();
    assert_eq!((n2.ready, n2.gpu_requested(), n2.gpu_free()), (false, 2, 0));
    let n3 = view.node("node03").unwrap();
    assert_eq!((n3.unschedulable, n3.gpu_free()), (true, 0));
    assert_eq!(view.node("cpu1").unwrap().gpu_allocatable, 0);
}

#[test]
fn read_view_names_a_bad_quantity() {
    let script = vec![
        get(
            "/api/v1/nodes?&limit=500",
            node_list(vec![k8s_node("node01", "True", false, Some("2.5"))]),
        ),
        get(
            "/api/v1/pods?&fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed&limit=500",
            json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [] }),
        ),
    ];
    let err = run(script, |c| async move {
        cluster::read_view(&c, cluster::DEFAULT_GPU_RESOURCE).await
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Node node01: nvidia.com/gpu is `2.5`, not a whole number of devices; check the device plugin or the pod's resources"
    );
}

fn small_manifests() -> Manifests {
    let labels = json!({ "app.kubernetes.io/instance": "train" });
    Manifests {
        workload: json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": { "name": "train", "labels": labels },
            "spec": { "completionMode": "Indexed", "completions": 2, "parallelism": 2,
                      "template": { "spec": { "restartPolicy": "Never",
                          "containers": [{ "name": "main", "image": "pytorch" }] } } },
        }),
        owned: vec![
            json!({ "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": { "name": "train-ranks", "namespace": "ml", "labels": labels },
                    "data": { "ranks.csv": "rank,node\n0,node01\n1,node02\n" } }),
            json!({ "apiVersion": "v1", "kind": "Service",
                    "metadata": { "name": "train", "labels": labels },
                    "spec": { "clusterIP": "None", "selector": labels } }),
        ],
        secret: None,
    }
}

fn with(mut v: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    v.pointer_mut(parent).unwrap()[key] = value;
    v
}

/// A server-side apply of `body` to `uri`, answered with `body` and `uid`.
fn ssa(uri: &str, body: &Value, uid: &str) -> Exchange {
    Exchange {
        method: "PATCH",
        uri: format!("{uri}?&{SSA_QUERY}"),
        content_type: Some(APPLY),
        body: Some(body.clone()),
        status: 200,
        reply: with(body.clone(), "/metadata/uid", json!(uid)),
    }
}

/// The `ownerReferences` that point at the Job `train` with uid `1f0c-uid`.
fn owner_of_train() -> Value {
    json!([{
        "apiVersion": "batch/v1", "kind": "Job", "name": "train",
        "uid": "1f0c-uid", "controller": false, "blockOwnerDeletion": true,
    }])
}

/// The exchanges of applying [`small_manifests`]: the Job's, and its owned
/// objects' with `ownerReferences` to it.
fn small_apply(m: &Manifests) -> (Exchange, Vec<Exchange>) {
    let owner = owner_of_train();
    let job = with(m.workload.clone(), "/metadata/namespace", json!("ml"));
    let cm = with(
        m.owned[0].clone(),
        "/metadata/ownerReferences",
        owner.clone(),
    );
    let svc = with(
        with(m.owned[1].clone(), "/metadata/namespace", json!("ml")),
        "/metadata/ownerReferences",
        owner,
    );
    (
        ssa("/apis/batch/v1/namespaces/ml/jobs/train", &job, "1f0c-uid"),
        vec![
            ssa(
                "/api/v1/namespaces/ml/configmaps/train-ranks",
                &cm,
                "cm-uid",
            ),
            ssa("/api/v1/namespaces/ml/services/train", &svc, "svc-uid"),
        ],
    )
}

#[test]
fn apply_sets_owner_references_from_the_workload_uid() {
    let m = small_manifests();
    let (job, owned) = small_apply(&m);
    let mut script = vec![job];
    script.extend(owned);
    let applied = run(
        script,
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .unwrap();
    assert_eq!(applied.workload.uid, "1f0c-uid");
    let owned: Vec<(&str, &str)> = applied
        .owned
        .iter()
        .map(|o| (o.kind.as_str(), o.uid.as_str()))
        .collect();
    assert_eq!(owned, [("ConfigMap", "cm-uid"), ("Service", "svc-uid")]);
}

/// The job's Secret is applied before the workload (while a Secret that a
/// pod's `secretKeyRef` names cannot be fetched, the kubelet does not run
/// the pod and retries; references are required unless marked optional:
/// kubernetes.io/docs/concepts/configuration/secret, "Optional Secrets",
/// v1.34), then again with the workload as its owner, so that the garbage
/// collector deletes it with the workload (kubernetes.io/docs/concepts/
/// architecture/garbage-collection, "Owners and dependents", v1.34).
#[test]
fn apply_puts_the_secret_before_the_workload_then_under_it() {
    let mut m = small_manifests();
    let secret = json!({ "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": "train-probe-token", "namespace": "ml",
                      "labels": { "app.kubernetes.io/instance": "train" } },
        "type": "Opaque", "data": { "token": "MDEyMzQ1Njc4OWFiY2RlZg==" } });
    m.secret = Some(secret.clone());
    let owned_secret = with(
        secret.clone(),
        "/metadata/ownerReferences",
        owner_of_train(),
    );
    let (job, owned) = small_apply(&m);
    let mut script = vec![
        ssa(SECRET_URI, &secret, "s1"),
        job.clone(),
        ssa(SECRET_URI, &owned_secret, "s1"),
    ];
    script.extend(owned);
    let applied = run(
        script,
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .unwrap();
    let owned: Vec<&str> = applied.owned.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(owned, ["Secret", "ConfigMap", "Service"]);

    // A workload the API server refuses takes the Secret with it.
    let mut m = small_manifests();
    m.secret = Some(secret.clone());
    let script = vec![
        ssa(SECRET_URI, &secret, "s1"),
        Exchange {
            status: 422,
            reply: status_reply(422, "Job.batch \"train\" is invalid"),
            ..job
        },
        delete_secret(secret),
    ];
    let err = run(
        script,
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .unwrap_err();
    assert!(err.to_string().contains("applying Job train"), "{err}");
}

#[test]
fn apply_checks_every_object_before_sending_one() {
    let m = small_manifests();
    // The ConfigMap names namespace ml: nothing is sent, not even the Job.
    let err = run(Vec::new(), |c| async move {
        cluster::apply(&c, "other", &m).await
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ConfigMap train-ranks: names namespace ml, but the objects are applied in other"
    );
    let mut m = small_manifests();
    m.owned[1]["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    let err = run(
        Vec::new(),
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Service (unnamed): has no metadata.name");
}

#[test]
fn mpijob_without_its_crd_says_to_install_the_mpi_operator() {
    let workload = json!({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": { "name": "train", "namespace": "ml" },
        "spec": { "slotsPerWorker": 1 },
    });
    let script = vec![Exchange {
        method: "PATCH",
        uri: format!("/apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/train?&{SSA_QUERY}"),
        content_type: Some(APPLY),
        body: Some(workload.clone()),
        status: 404,
        reply: status_reply(404, "the server could not find the requested resource"),
    }];
    let m = Manifests {
        workload,
        owned: small_manifests().owned,
        secret: None,
    };
    let err = run(
        script,
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .unwrap_err();
    assert!(matches!(err, Error::CrdMissing { .. }), "{err:?}");
    assert!(err.is_bad_input());
    let text = err.to_string();
    assert!(
        text.starts_with("the cluster has no mpijobs.kubeflow.org resource (API kubeflow.org/v2beta1 answered 404 when applying MPIJob train); install the Kubeflow MPI Operator"),
        "{text}"
    );
}

fn pod_list(pods: Vec<Value>) -> Value {
    json!({ "kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods })
}

fn job_pod(name: &str, node: Option<&str>, phase: &str, waiting: Option<&str>) -> Value {
    let mut p = json!({
        "metadata": { "name": name, "namespace": "ml" },
        "spec": { "containers": [{ "name": "main", "image": "x" }] },
        "status": { "phase": phase },
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    if let Some(w) = waiting {
        p["status"]["containerStatuses"] = json!([{
            "name": "main", "image": "x", "imageID": "", "ready": false, "restartCount": 2,
            "state": { "waiting": { "reason": w } },
        }]);
    }
    p
}

const PODS_OF_TRAIN: &str =
    "/api/v1/namespaces/ml/pods?&labelSelector=app.kubernetes.io%2Finstance%3Dtrain&limit=500";

/// `status`'s requests for the running MPIJob `ml/train` and its pods.
pub(crate) fn mpijob_status_script() -> Vec<Exchange> {
    let mpijob = json!({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": { "name": "train", "namespace": "ml", "uid": "u1", "labels": ours() },
        "spec": {},
        "status": {
            "conditions": [
                { "type": "Created", "status": "True", "reason": "MPIJobCreated" },
                { "type": "Running", "status": "True", "reason": "MPIJobRunning", "message": "MPIJob ml/train is running." },
            ],
            "replicaStatuses": { "Launcher": { "active": 1 }, "Worker": { "active": 2 } },
        },
    });
    vec![
        Exchange {
            status: 404,
            ..get(
                "/apis/batch/v1/namespaces/ml/jobs/train",
                status_reply(404, "jobs.batch \"train\" not found"),
            )
        },
        get(
            "/apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/train",
            mpijob,
        ),
        get(
            PODS_OF_TRAIN,
            pod_list(vec![
                job_pod("train-worker-1", Some("node02"), "Running", None),
                job_pod("train-launcher", Some("node01"), "Running", None),
                job_pod("train-worker-0", Some("node01"), "Running", None),
            ]),
        ),
    ]
}

#[test]
fn status_of_an_mpijob_with_its_pods() {
    let s = run(mpijob_status_script(), |c| async move {
        cluster::status(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!((s.kind.as_str(), s.phase), ("MPIJob", JobPhase::Running));
    assert_eq!((s.active, s.succeeded, s.failed), (3, 0, 0));
    let pods: Vec<(&str, Option<&str>)> = s
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.node.as_deref()))
        .collect();
    assert_eq!(
        pods,
        [
            ("train-launcher", Some("node01")),
            ("train-worker-0", Some("node01")),
            ("train-worker-1", Some("node02")),
        ]
    );
    assert_eq!(
        s.summary(),
        "MPIJob ml/train: Running; 3 active, 0 succeeded, 0 failed; pods: 3 Running"
    );
}

/// The labels the provisioner gives every object of the job `train`.
fn ours() -> Value {
    json!({
        "app.kubernetes.io/managed-by": "eflops-provisioner",
        "app.kubernetes.io/instance": "train",
    })
}

fn job(active: u32, conditions: Value) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": { "name": "train", "namespace": "ml", "labels": ours() },
        "spec": { "parallelism": 2 },
        "status": { "active": active, "conditions": conditions },
    })
}

/// The watcher's first list of the job's pods.
const LIST_PODS_OF_TRAIN: &str =
    "/api/v1/namespaces/ml/pods?&labelSelector=app.kubernetes.io%2Finstance%3Dtrain&limit=500";
/// The watch that follows it, from the list's resourceVersion.
const WATCH_PODS_OF_TRAIN: &str = "/api/v1/namespaces/ml/pods?&watch=true&timeoutSeconds=290&labelSelector=app.kubernetes.io%2Finstance%3Dtrain&allowWatchBookmarks=true&resourceVersion=10";
const JOB_URI: &str = "/apis/batch/v1/namespaces/ml/jobs/train";

fn listed(pods: Vec<Value>) -> Value {
    with(pod_list(pods), "/metadata/resourceVersion", json!("10"))
}

/// A watch's reply: one JSON event per line.
fn events(list: &[(&str, Value)]) -> Value {
    let mut text = String::new();
    for (i, (kind, object)) in list.iter().enumerate() {
        let mut object = object.clone();
        object["apiVersion"] = json!("v1");
        object["kind"] = json!("Pod");
        object["metadata"]["resourceVersion"] = json!((11 + i).to_string());
        text.push_str(&json!({ "type": kind, "object": object }).to_string());
        text.push('\n');
    }
    json!({ "__raw": text })
}

fn terminated(mut pod: Value, container: &str, code: i32, reason: &str) -> Value {
    pod["status"]["containerStatuses"] = json!([{
        "name": container, "image": "x", "imageID": "", "ready": false, "restartCount": 0,
        "state": { "terminated": { "exitCode": code, "reason": reason, "message": "rank 1 lost its peer" } },
    }]);
    pod
}

/// `wait` for the job `train` against `script` (ten seconds at most), with
/// the summary of every progress report.
fn wait_with_progress(script: Vec<Exchange>) -> (Result<cluster::JobStatus, Error>, Vec<String>) {
    let options = WaitOptions::with_timeout(Duration::from_secs(10));
    run(script, |c| async move {
        let mut lines = Vec::new();
        let r = cluster::wait(&c, "ml", "train", &options, &mut |s| {
            lines.push(s.summary())
        })
        .await;
        (r, lines)
    })
}

#[test]
fn wait_watches_until_the_job_runs() {
    let script = vec![
        get(LIST_PODS_OF_TRAIN, listed(vec![])),
        get(JOB_URI, job(0, json!([]))),
        get(
            WATCH_PODS_OF_TRAIN,
            events(&[
                ("ADDED", job_pod("train-0", Some("node01"), "Running", None)),
                (
                    "ADDED",
                    job_pod("train-1", None, "Pending", Some("ImagePullBackOff")),
                ),
                (
                    "MODIFIED",
                    job_pod("train-1", Some("node02"), "Running", None),
                ),
            ]),
        ),
        get(JOB_URI, job(1, json!([]))),
        get(JOB_URI, job(2, json!([]))),
        get(JOB_URI, job(2, json!([]))),
    ];
    let (result, lines) = wait_with_progress(script);
    assert_eq!(result.unwrap().phase, JobPhase::Running);
    assert_eq!(
        lines,
        [
            "Job ml/train: Pending; 0 active, 0 succeeded, 0 failed; pods: no pods yet",
            "Job ml/train: Pending; 1 active, 0 succeeded, 0 failed; pods: 1 Running",
            "Job ml/train: Pending; 2 active, 0 succeeded, 0 failed; pods: 1 Pending, 1 Running (ImagePullBackOff)",
            "Job ml/train: Running; 2 active, 0 succeeded, 0 failed; pods: 2 Running",
        ]
    );
}

/// Issue 17: a failing pod is reported with its container's reason and
/// last log lines, as soon as the watch sees it fail (before the Job
/// controller writes its Failed condition).
#[test]
fn wait_reports_a_failing_pod_with_its_last_log_lines() {
    let failed = terminated(
        job_pod("train-1", Some("node02"), "Failed", None),
        "main",
        1,
        "Error",
    );
    let script = vec![
        get(
            LIST_PODS_OF_TRAIN,
            listed(vec![
                job_pod("train-0", Some("node01"), "Running", None),
                job_pod("train-1", Some("node02"), "Pending", None),
            ]),
        ),
        get(JOB_URI, job(1, json!([]))),
        get(WATCH_PODS_OF_TRAIN, events(&[("MODIFIED", failed)])),
        get(JOB_URI, job(1, json!([]))),
        get(
            "/api/v1/namespaces/ml/pods/train-1/log?&container=main&tailLines=20",
            json!({ "__raw": "NCCL INFO Bootstrap\nRuntimeError: NCCL error: remote process exited\n" }),
        ),
    ];
    let options = WaitOptions::with_timeout(Duration::from_secs(10));
    let s = run(script, |c| async move {
        cluster::wait(&c, "ml", "train", &options, &mut |_| {}).await
    })
    .unwrap();
    assert_eq!(s.phase, JobPhase::Failed);
    assert_eq!(s.failures.len(), 1, "{:?}", s.failures);
    let f = &s.failures[0];
    assert_eq!(
        (
            f.pod.as_str(),
            f.container.as_str(),
            f.reason.as_deref(),
            f.exit_code,
            f.message.as_deref()
        ),
        (
            "train-1",
            "main",
            Some("Error"),
            Some(1),
            Some("rank 1 lost its peer")
        )
    );
    assert_eq!(
        f.log,
        [
            "NCCL INFO Bootstrap",
            "RuntimeError: NCCL error: remote process exited"
        ]
    );
}

/// #29 item 5: when ranks fail one after the other, the first to end is
/// reported first, with its rank. The pods' side follows the Kubernetes
/// v1.34 API reference: `ContainerStateTerminated.finishedAt` (RFC 3339),
/// and an Indexed Job's pods carry the annotation
/// `batch.kubernetes.io/job-completion-index` ("Jobs", completion mode).
#[test]
fn wait_names_the_first_failed_rank() {
    let ended = |name: &str, index: &str, at: &str, reason: &str| {
        let mut p = terminated(
            job_pod(name, Some("node01"), "Failed", None),
            "main",
            1,
            reason,
        );
        p["metadata"]["annotations"] = json!({ "batch.kubernetes.io/job-completion-index": index });
        p["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] = json!(at);
        p
    };
    // train-0 lost its peer four seconds after train-1 ran out of memory.
    let script = vec![
        get(
            LIST_PODS_OF_TRAIN,
            listed(vec![
                ended("train-0", "0", "2026-11-28T20:00:05Z", "Error"),
                ended("train-1", "1", "2026-11-28T20:00:01Z", "OOMKilled"),
            ]),
        ),
        get(JOB_URI, job(0, json!([]))),
        get(
            "/api/v1/namespaces/ml/pods/train-0/log?&container=main&tailLines=20",
            json!({ "__raw": "peer lost\n" }),
        ),
        get(
            "/api/v1/namespaces/ml/pods/train-1/log?&container=main&tailLines=20",
            json!({ "__raw": "killed\n" }),
        ),
    ];
    let options = WaitOptions::with_timeout(Duration::from_secs(5));
    let s = run(script, |c| async move {
        cluster::wait(&c, "ml", "train", &options, &mut |_| {}).await
    })
    .unwrap();
    assert_eq!(s.phase, JobPhase::Failed);
    let first: Vec<_> = s
        .failures
        .iter()
        .map(|f| (f.pod.as_str(), f.rank, f.rank_is_index, f.reason.as_deref()))
        .collect();
    assert_eq!(
        first,
        [
            ("train-1", Some(1), true, Some("OOMKilled")),
            ("train-0", Some(0), true, Some("Error")),
        ]
    );
    assert!(
        s.table().contains("first failure: completion index 1 (pod train-1, container main, ended 2026-11-28T20:00:01Z): OOMKilled"),
        "{}",
        s.table()
    );
}

#[test]
fn wait_returns_a_failed_job() {
    let script = vec![
        get(LIST_PODS_OF_TRAIN, listed(vec![])),
        get(
            JOB_URI,
            job(
                0,
                json!([{ "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded" }]),
            ),
        ),
    ];
    let options = WaitOptions::with_timeout(Duration::from_secs(5));
    let s = run(script, |c| async move {
        cluster::wait(&c, "ml", "train", &options, &mut |_| {}).await
    })
    .unwrap();
    assert_eq!(s.phase, JobPhase::Failed);
    assert_eq!(
        s.conditions[0].reason.as_deref(),
        Some("BackoffLimitExceeded")
    );
}

#[test]
fn delete_with_foreground_propagation() {
    let stored = with(job(2, json!([])), "/metadata/uid", json!("u9"));
    let script = vec![
        get(JOB_URI, stored.clone()),
        delete_of(&format!("{JOB_URI}?"), "u9", stored),
    ];
    // The Secret went with the Job (the garbage collector follows its
    // ownerReference), so it is not found.
    let mut gone = script.clone();
    gone.push(Exchange {
        status: 404,
        ..get(
            SECRET_URI,
            status_reply(404, "secrets \"train-probe-token\" not found"),
        )
    });
    let d = run(
        gone,
        |c| async move { cluster::delete(&c, "ml", "train").await },
    )
    .unwrap();
    assert_eq!(
        (d.kind.as_str(), d.uid.as_deref(), d.propagation, d.secret),
        ("Job", Some("u9"), "Foreground", None)
    );

    // A Secret applied from --dry-run output has no owner: delete removes
    // it when its labels say it is this job's, and leaves alone one that
    // is not.
    let ours = secret_object(json!({
        "app.kubernetes.io/managed-by": "eflops-provisioner",
        "app.kubernetes.io/instance": "train",
    }));
    let mut orphan = script.clone();
    orphan.extend([get(SECRET_URI, ours.clone()), delete_secret(ours)]);
    let d = run(orphan, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!(d.secret.as_deref(), Some("train-probe-token"));

    let mut foreign = script;
    foreign.push(get(
        SECRET_URI,
        secret_object(json!({ "app.kubernetes.io/instance": "train" })),
    ));
    let d = run(foreign, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!(d.secret, None);
}

const SECRET_URI: &str = "/api/v1/namespaces/ml/secrets/train-probe-token";

/// The foreground `DELETE` of the object found with uid `uid`, answered
/// with `reply`.
fn delete_of(uri: &str, uid: &str, reply: Value) -> Exchange {
    Exchange {
        method: "DELETE",
        uri: uri.to_string(),
        content_type: Some("application/json"),
        body: Some(json!({ "propagationPolicy": "Foreground", "preconditions": { "uid": uid } })),
        status: 200,
        reply,
    }
}

/// A 404 for a `GET` of `uri`.
fn not_found(uri: &str) -> Exchange {
    Exchange {
        status: 404,
        ..get(uri, status_reply(404, "not found"))
    }
}

const MPIJOB_URI: &str = "/apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/train";
const JOBSET_URI: &str = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/train";
const DRA_ROOT_URI: &str = "/api/v1/namespaces/ml/configmaps/train-ranks";

/// The `DELETE` of the Secret (default options: body `{}`), answered with
/// `reply`.
fn delete_secret(reply: Value) -> Exchange {
    Exchange {
        method: "DELETE",
        uri: format!("{SECRET_URI}?"),
        content_type: Some("application/json"),
        body: Some(json!({})),
        status: 200,
        reply,
    }
}

/// A Secret as the API server returns it (core/v1 Secret, `data` base64:
/// kubernetes.io/docs/concepts/configuration/secret, v1.34).
fn secret_object(labels: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": "train-probe-token", "namespace": "ml", "uid": "s1", "labels": labels },
        "type": "Opaque",
        "data": { "token": "MDEyMzQ1Njc4OWFiY2RlZg==" },
    })
}

#[test]
fn delete_of_a_missing_job_names_it() {
    let script = vec![
        not_found(JOB_URI),
        not_found(MPIJOB_URI),
        not_found(JOBSET_URI),
        not_found(DRA_ROOT_URI),
    ];
    let err = run(script, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap_err();
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "no Job, MPIJob, JobSet or DRA submission named train in namespace ml; list them with `kubectl get jobs,mpijobs,jobsets,configmaps -n ml -l app.kubernetes.io/managed-by=eflops-provisioner` or pass -n NAMESPACE"
    );
}

/// The ConfigMap that owns a DRA submission's rank Pods.
fn dra_root() -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "train-ranks", "namespace": "ml", "uid": "u7", "labels": ours(),
            "annotations": { "topology.eflops.io/placement": "dra", "topology.eflops.io/ranks": "2" },
        },
        "data": {},
    })
}

#[test]
fn status_and_delete_of_a_dra_submission() {
    let script = vec![
        not_found(JOB_URI),
        not_found(MPIJOB_URI),
        not_found(JOBSET_URI),
        get(DRA_ROOT_URI, dra_root()),
        get(
            PODS_OF_TRAIN,
            pod_list(vec![
                job_pod("train-0", Some("node01"), "Running", None),
                job_pod("train-1", Some("node01"), "Running", None),
            ]),
        ),
    ];
    let s = run(script, |c| async move {
        cluster::status(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!(
        s.summary(),
        "Pods ml/train: Running; 2 active, 0 succeeded, 0 failed; pods: 2 Running"
    );

    let script = vec![
        not_found(JOB_URI),
        not_found(MPIJOB_URI),
        not_found(JOBSET_URI),
        get(DRA_ROOT_URI, dra_root()),
        delete_of(&format!("{DRA_ROOT_URI}?"), "u7", dra_root()),
        not_found(SECRET_URI),
    ];
    let d = run(script, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!(
        (d.kind.as_str(), d.name.as_str(), d.uid.as_deref()),
        ("ConfigMap", "train-ranks", Some("u7"))
    );
}

/// A DRA job's JobSet (kubernetes-sigs/jobset v0.12.0,
/// `api/jobset/v1alpha2/jobset_types.go`): two ranks, `max` restarts
/// allowed and `restarts` done, with `conditions`; rank 1's Job failed.
fn job_set(max: u32, restarts: u32, conditions: Value) -> Value {
    let rjob = |r: usize| json!({ "name": format!("rank-{r}"), "replicas": 1, "template": { "spec": {} } });
    json!({
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": { "name": "train", "namespace": "ml", "uid": "js1", "labels": ours() },
        "spec": {
            "replicatedJobs": [rjob(0), rjob(1)],
            "failurePolicy": { "maxRestarts": max, "restartStrategy": "BlockingRecreate" },
        },
        "status": {
            "restarts": restarts,
            "restartsCountTowardsMax": restarts,
            "conditions": conditions,
            "replicatedJobsStatus": [
                { "name": "rank-0", "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0 },
                { "name": "rank-1", "ready": 0, "succeeded": 0, "failed": 1, "active": 0, "suspended": 0 },
            ],
        },
    })
}

/// Rank `rank`'s pod of restart attempt `attempt`, as JobSet's controller
/// labels it (`jobset.sigs.k8s.io/restart-attempt`, `labelAndAnnotateObject`
/// in `pkg/controllers/jobset_controller.go`, v0.12.0) and our template
/// sets `RANK`; failed with `reason` at `at` when given.
fn rank_pod(rank: usize, attempt: u32, ended: Option<(&str, &str)>) -> Value {
    let name = format!("train-rank-{rank}-0-0-a{attempt}");
    let mut p = job_pod(&name, Some("node01"), "Running", None);
    p["metadata"]["labels"] = json!({
        "app.kubernetes.io/instance": "train",
        "jobset.sigs.k8s.io/restart-attempt": attempt.to_string(),
    });
    p["spec"]["containers"][0]["env"] = json!([{ "name": "RANK", "value": rank.to_string() }]);
    if let Some((reason, at)) = ended {
        p = terminated(p, "main", 1, reason);
        p["status"]["phase"] = json!("Failed");
        p["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] = json!(at);
    }
    p
}

/// #29 item 5: a rank of a DRA job fails after the JobSet's last restart;
/// `wait` reports the job failed, names the first failed rank of that
/// attempt (not a pod of an earlier attempt) and shows the JobSet's
/// `Failed` condition (reason `ReachedMaxRestarts`, `pkg/constants`
/// v0.12.0) and its restarts.
#[test]
fn a_failed_rank_fails_the_jobset_and_wait_names_it() {
    let failed = json!([{
        "type": "Failed", "status": "True", "reason": "ReachedMaxRestarts",
        "message": "jobset failed due to reaching max number of restarts",
    }]);
    let script = vec![
        get(
            LIST_PODS_OF_TRAIN,
            listed(vec![
                // Attempt 0 failed earlier (rank 0 first); attempt 1 is the
                // last one allowed.
                rank_pod(0, 0, Some(("Error", "2026-11-28T19:00:00Z"))),
                rank_pod(0, 1, None),
                rank_pod(1, 1, Some(("OOMKilled", "2026-11-28T20:00:01Z"))),
            ]),
        ),
        not_found(JOB_URI),
        not_found(MPIJOB_URI),
        get(JOBSET_URI, job_set(1, 1, failed)),
        get(
            "/api/v1/namespaces/ml/pods/train-rank-1-0-0-a1/log?&container=main&tailLines=20",
            json!({ "__raw": "CUDA out of memory\n" }),
        ),
    ];
    let options = WaitOptions::with_timeout(Duration::from_secs(5));
    let s = run(script, |c| async move {
        cluster::wait(&c, "ml", "train", &options, &mut |_| {}).await
    })
    .unwrap();
    assert_eq!((s.kind.as_str(), s.phase), ("JobSet", JobPhase::Failed));
    let failures: Vec<_> = s
        .failures
        .iter()
        .map(|f| (f.pod.as_str(), f.rank, f.rank_is_index, f.reason.as_deref()))
        .collect();
    assert_eq!(
        failures,
        [("train-rank-1-0-0-a1", Some(1), false, Some("OOMKilled"))]
    );
    let table = s.table();
    assert!(
        table.starts_with("JobSet ml/train: Failed; 1 active, 0 succeeded, 1 failed; restarts 1 of 1; pods: 2 Failed, 1 Running (Error, OOMKilled)"),
        "{table}"
    );
    assert!(
        table.contains("ReachedMaxRestarts  jobset failed due to reaching max number of restarts"),
        "{table}"
    );
    assert!(
        table.contains("first failure: rank 1 (pod train-rank-1-0-0-a1, container main, ended 2026-11-28T20:00:01Z): OOMKilled"),
        "{table}"
    );
}

/// With a restart left, a failed rank does not end `wait`: the JobSet
/// stops every rank and starts them again, and `wait` follows the new
/// attempt until it runs.
#[test]
fn a_jobset_with_a_restart_left_runs_again_after_a_failed_rank() {
    let lookup = |restarts: u32| {
        vec![
            not_found(JOB_URI),
            not_found(MPIJOB_URI),
            get(JOBSET_URI, job_set(2, restarts, json!([]))),
        ]
    };
    let mut script = vec![get(
        LIST_PODS_OF_TRAIN,
        listed(vec![
            rank_pod(0, 0, None),
            rank_pod(1, 0, Some(("Error", "2026-11-28T20:00:01Z"))),
        ]),
    )];
    script.extend(lookup(0));
    script.push(get(
        WATCH_PODS_OF_TRAIN,
        events(&[
            ("DELETED", rank_pod(0, 0, None)),
            ("DELETED", rank_pod(1, 0, None)),
            ("ADDED", rank_pod(0, 1, None)),
            ("ADDED", rank_pod(1, 1, None)),
        ]),
    ));
    for _ in 0..4 {
        script.extend(lookup(1));
    }
    let (result, lines) = wait_with_progress(script);
    assert_eq!(result.unwrap().phase, JobPhase::Running);
    assert_eq!(
        lines,
        [
            "JobSet ml/train: Pending; 1 active, 0 succeeded, 1 failed; restarts 0 of 2; pods: 1 Failed, 1 Running (Error)",
            "JobSet ml/train: Pending; 1 active, 0 succeeded, 1 failed; restarts 1 of 2; pods: 1 Failed (Error)",
            "JobSet ml/train: Pending; 1 active, 0 succeeded, 1 failed; restarts 1 of 2; pods: no pods yet",
            "JobSet ml/train: Pending; 1 active, 0 succeeded, 1 failed; restarts 1 of 2; pods: 1 Running",
            "JobSet ml/train: Running; 1 active, 0 succeeded, 1 failed; restarts 1 of 2; pods: 2 Running",
        ]
    );
}

/// `delete` removes only what this provisioner made for the job: a Job of
/// the same name without our labels is left alone, our JobSet is deleted
/// (with its uid as precondition); with only foreign objects, nothing is
/// deleted and the error names them.
#[test]
fn delete_removes_only_our_objects() {
    let foreign = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": { "name": "train", "namespace": "ml", "uid": "f1", "labels": { "app": "someone-else" } },
        "spec": {},
    });
    let script = vec![
        get(JOB_URI, foreign.clone()),
        not_found(MPIJOB_URI),
        get(JOBSET_URI, job_set(0, 0, json!([]))),
        delete_of(&format!("{JOBSET_URI}?"), "js1", job_set(0, 0, json!([]))),
        not_found(SECRET_URI),
    ];
    let d = run(script, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap();
    assert_eq!(
        (d.kind.as_str(), d.name.as_str(), d.uid.as_deref()),
        ("JobSet", "train", Some("js1"))
    );

    let script = vec![
        get(JOB_URI, foreign),
        not_found(MPIJOB_URI),
        not_found(JOBSET_URI),
        not_found(DRA_ROOT_URI),
    ];
    let err = run(script, |c| async move {
        cluster::delete(&c, "ml", "train").await
    })
    .unwrap_err();
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "found Job train in namespace ml, but without the labels app.kubernetes.io/managed-by=eflops-provisioner and app.kubernetes.io/instance=train: not made by this provisioner for the job train, so left alone; check the name, or use kubectl for objects that are not the provisioner's"
    );
}

#[test]
fn forbidden_points_at_the_rbac_doc() {
    let script = vec![Exchange {
        status: 403,
        ..get(
            "/api/v1/nodes?&limit=500",
            json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "nodes is forbidden: User \"alice\" cannot list resource \"nodes\"",
                    "reason": "Forbidden", "code": 403 }),
        )
    }];
    let err = run(script, |c| async move {
        cluster::read_view(&c, cluster::DEFAULT_GPU_RESOURCE).await
    })
    .unwrap_err();
    assert!(err.is_bad_input());
    let text = err.to_string();
    assert!(
        text.starts_with("listing Nodes: nodes is forbidden: User \"alice\" cannot list resource \"nodes\" (403 Forbidden); the user lacks a permission"),
        "{text}"
    );
}

/// Reads the cluster the kubeconfig points at.
#[test]
#[ignore = "needs kubeconfig"]
fn real_cluster_view() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let view = rt
        .block_on(async {
            let client = cluster::connect().await?;
            cluster::read_view(&client, cluster::DEFAULT_GPU_RESOURCE).await
        })
        .unwrap();
    assert!(!view.nodes.is_empty());
}

#[test]
fn wait_gives_up_after_its_timeout() {
    // The watch ends without events; the watcher then cannot reach the
    // API server again and backs off until the timeout.
    let script = vec![
        get(LIST_PODS_OF_TRAIN, listed(vec![])),
        get(JOB_URI, job(0, json!([]))),
        get(WATCH_PODS_OF_TRAIN, events(&[])),
    ];
    let options = WaitOptions::with_timeout(Duration::from_millis(300));
    let mut calls = 0;
    let err = run(script, |c| async move {
        cluster::wait(&c, "ml", "train", &options, &mut |_| calls += 1).await
    })
    .unwrap_err();
    assert!(!err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "Job ml/train is still Pending after 0 s; raise --timeout or look at `provisioner status train -n ml`"
    );
}

/// `read_dra` lists ResourceSlices, ResourceClaims and the provisioner's
/// claim templates (all namespaces) and keeps what placement needs.
/// `read_dra`'s requests: a Node's slice, a slice for every Node, an
/// allocated claim and one of our templates.
pub(crate) fn read_dra_script() -> Vec<Exchange> {
    let slice = json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": { "name": "node01-gpu" },
        "spec": {
            "driver": "gpu.nvidia.com", "nodeName": "node01",
            "pool": { "name": "node01", "generation": 1, "resourceSliceCount": 1 },
            "devices": [{ "name": "gpu-0", "attributes": {
                "index": { "int": 0 },
                "resource.kubernetes.io/pcieRoot": { "string": "pci0000:00" },
            } }],
        },
    });
    // A slice for every Node (network-attached devices) belongs to no Node.
    let shared = json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": { "name": "fabric" },
        "spec": { "driver": "example.com", "allNodes": true,
                  "pool": { "name": "fabric", "generation": 1, "resourceSliceCount": 1 },
                  "devices": [{ "name": "x" }] },
    });
    let claim = json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": { "name": "train-0-sub-node-abcde", "namespace": "ml" },
        "spec": { "devices": {} },
        "status": { "allocation": { "devices": { "results": [
            { "request": "gpu", "driver": "gpu.nvidia.com", "pool": "node01", "device": "gpu-0" },
        ] } } },
    });
    let template = json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": "train-1", "namespace": "ml",
            "labels": { "app.kubernetes.io/managed-by": "eflops-provisioner" },
            "annotations": { "topology.eflops.io/sub-node": "node01/sn1" },
        },
        "spec": { "spec": { "devices": {} } },
    });
    let list = |kind: &str, items: Vec<Value>| json!({ "apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {}, "items": items });
    vec![
        get(
            "/apis/resource.k8s.io/v1/resourceslices?&limit=500",
            list("ResourceSliceList", vec![slice, shared]),
        ),
        get(
            "/apis/resource.k8s.io/v1/resourceclaims?&limit=500",
            list("ResourceClaimList", vec![claim]),
        ),
        get(
            "/apis/resource.k8s.io/v1/resourceclaimtemplates?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner&limit=500",
            list("ResourceClaimTemplateList", vec![template]),
        ),
    ]
}

#[test]
fn read_dra_lists_slices_claims_and_our_templates() {
    let view = run(
        read_dra_script(),
        |c| async move { cluster::read_dra(&c).await },
    )
    .unwrap();
    assert_eq!(view.devices.len(), 1);
    let d = &view.devices[0];
    assert_eq!(
        (
            d.driver.as_str(),
            d.pool.as_str(),
            d.node.as_str(),
            d.name.as_str()
        ),
        ("gpu.nvidia.com", "node01", "node01", "gpu-0")
    );
    // Attributes without a domain are the driver's.
    assert_eq!(
        d.attributes.keys().collect::<Vec<_>>(),
        ["gpu.nvidia.com/index", "resource.kubernetes.io/pcieRoot"]
    );
    assert_eq!(view.allocated.len(), 1);
    assert_eq!(view.allocated[0].claim, "ml/train-0-sub-node-abcde");
    assert_eq!(view.reserved.len(), 1);
    assert_eq!(
        (
            view.reserved[0].sub_node.as_str(),
            view.reserved[0].by.as_str()
        ),
        ("node01/sn1", "ml/train-1")
    );
}

// ---------------------------------------------------------------------
// `provisioner controller`, the Kueue AdmissionCheck controller, against
// the Kueue v0.19.2 API (`kueue.x-k8s.io/v1beta2`). The server's side is
// written from Kueue's sources at the tag v0.19.2, not from our client:
// - a Workload's `status.admission.podSetAssignments[].topologyAssignment`
//   has `levels` (highest first, node label keys) and `slices`, each with
//   `domainCount`, `valuesPerLevel[]` (`universal` or `individual` with
//   `prefix`/`roots`) and `podCounts` (`universal` or `individual`):
//   apis/kueue/v1beta2/workload_types.go, `TopologyAssignment` and its
//   Examples 1-4;
// - the topology is assigned at quota reservation, before the checks of an
//   AdmissionCheck that is neither ProvisioningRequest nor MultiKueue:
//   pkg/scheduler/flavorassigner/tas_flavorassigner.go,
//   `podSetTopologyRequest`;
// - `status.admissionChecks[]` is a map list keyed by `name`, each with
//   `state` (Pending, Ready, Retry, Rejected), `lastTransitionTime` and
//   `message`: workload_types.go, `AdmissionCheckState`;
// - an AdmissionCheck names its controller in `spec.controllerName`, and
//   its controller sets the `Active` condition in `status.conditions`:
//   apis/kueue/v1beta2/admissioncheck_types.go;
// - check controllers write their entry with a server-side apply of the
//   status subresource, forced: pkg/workload/patching/patching.go,
//   `patchStatus` (`c.Status().Patch(ctx, wl, client.Apply, owner,
//   client.ForceOwnership)`); the API server answers an apply with the
//   object (Kubernetes API concepts, "Server-Side Apply", v1.34).
// Checked only this way (no Kueue ran here).

use provisioner::jobs::admission::CheckState;

const NOW: &str = "2026-11-28T20:30:00Z";
const CONTROLLER_SSA: &str = "force=true&fieldManager=eflops-provisioner-controller";
const KUEUE: &str = "/apis/kueue.x-k8s.io/v1beta2";

fn tas_job_text(name: &str) -> String {
    format!(
        r#"name = "{name}"
image = "registry.example.com/train:1"
command = ["python", "train.py"]
ranks = 8
queue = "team-a"

[kueue]
required_topology = "topology.eflops.io/part"
"#
    )
}

fn tas_job(name: &str) -> provisioner::jobs::job::JobSpec {
    provisioner::jobs::job::JobSpec::from_toml(&tas_job_text(name), "tas.toml").unwrap()
}

/// The AdmissionCheck list: one of ours, not yet Active.
fn admission_checks() -> Value {
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheckList", "metadata": {},
        "items": [{
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
            "metadata": { "name": "eflops-rank-table" },
            "spec": { "controllerName": "topology.eflops.io/rank-table" },
        }, {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
            "metadata": { "name": "prov" },
            "spec": { "controllerName": "kueue.x-k8s.io/provisioning-request" },
            "status": { "conditions": [{ "type": "Active", "status": "True", "reason": "Active", "message": "", "lastTransitionTime": NOW }] },
        }],
    })
}

fn check_list_and_activation() -> Vec<Exchange> {
    let body = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck",
        "metadata": { "name": "eflops-rank-table" },
        "status": { "conditions": [{
            "type": "Active", "status": "True", "reason": "Active",
            "message": "provisioner controller writes rank tables at admission",
            "lastTransitionTime": NOW,
        }] },
    });
    vec![
        get(
            format!("{KUEUE}/admissionchecks?&limit=500"),
            admission_checks(),
        ),
        Exchange {
            method: "PATCH",
            uri: format!("{KUEUE}/admissionchecks/eflops-rank-table/status?&{CONTROLLER_SSA}"),
            content_type: Some(APPLY),
            body: Some(body.clone()),
            status: 200,
            reply: body,
        },
    ]
}

/// A Workload of Job `job` with quota reserved: the topology assignment
/// over `hosts` (one pod each, Example 3's `individual` roots with a
/// common prefix) and our check in `state`.
fn workload(job: &str, hosts: &[&str], state: &str) -> Value {
    let roots: Vec<String> = hosts
        .iter()
        .map(|h| h.trim_start_matches("node").to_string())
        .collect();
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {
            "name": format!("job-{job}-1a2b3"), "namespace": "default",
            "ownerReferences": [{ "apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": format!("{job}-uid"), "controller": true }],
        },
        "spec": { "queueName": "team-a" },
        "status": {
            "admission": {
                "clusterQueue": "cluster-queue",
                "podSetAssignments": [{
                    "name": "main",
                    "flavors": { "nvidia.com/gpu": "tas-flavor" },
                    "count": hosts.len(),
                    "topologyAssignment": {
                        "levels": ["topology.eflops.io/part", "kubernetes.io/hostname"],
                        "slices": [{
                            "domainCount": hosts.len(),
                            "valuesPerLevel": [
                                { "universal": "p0" },
                                { "individual": { "prefix": "node", "roots": roots } },
                            ],
                            "podCounts": { "universal": 1 },
                        }],
                    },
                }],
            },
            "conditions": [{ "type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "", "lastTransitionTime": NOW }],
            "admissionChecks": [{ "name": "eflops-rank-table", "state": state, "message": "", "lastTransitionTime": NOW }],
        },
    })
}

fn list_of(kind: &str, items: Vec<Value>) -> Value {
    json!({ "apiVersion": "v1", "kind": kind, "metadata": {}, "items": items })
}

/// Nodes node01..node16 with 4 GPUs each, `kubernetes.io/hostname` set, as
/// the kubelet labels them; `gone` left out.
fn tas_nodes(gone: &[&str]) -> Value {
    let items = (1..=16)
        .map(|i| format!("node{i:02}"))
        .filter(|n| !gone.contains(&n.as_str()))
        .map(|n| {
            with(
                k8s_node(&n, "True", false, Some("4")),
                "/metadata/labels",
                json!({ "kubernetes.io/hostname": n }),
            )
        })
        .collect();
    list_of("NodeList", items)
}

const ALL_PODS: &str = "/api/v1/pods?&fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed&limit=500";
const OUR_CONFIGMAPS: &str = "/api/v1/configmaps?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner&limit=500";

/// What the cluster reads as, through the client's own reader.
fn tas_view(gone: &[&str]) -> provisioner::jobs::view::ClusterView {
    let nodes = tas_nodes(gone);
    run(
        vec![
            get("/api/v1/nodes?&limit=500", nodes),
            get(ALL_PODS, list_of("PodList", vec![])),
        ],
        |c| async move { cluster::read_view(&c, "nvidia.com/gpu").await.unwrap() },
    )
}

/// The pending ConfigMap `submit` applied for `job`, as the API server
/// lists it (namespace and owner set).
fn pending_config_map(job: &str) -> Value {
    let plan = eflops();
    let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
    let sub =
        provisioner::jobs::admission::pending(&plan, &bound, &tas_job(job), &tas_job_text(job))
            .unwrap();
    let cm = sub
        .manifests
        .owned
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .unwrap()
        .clone();
    with(
        cm,
        "/metadata/ownerReferences",
        json!([{ "apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": format!("{job}-uid") }]),
    )
}

/// A pass's reads: the AdmissionChecks (ours made Active), `workloads`,
/// the Nodes (without `gone`) and Pods, and `config_maps`.
fn pass_reads(workloads: Vec<Value>, gone: &[&str], config_maps: Vec<Value>) -> Vec<Exchange> {
    let mut script = check_list_and_activation();
    script.extend([
        get(
            format!("{KUEUE}/workloads?&limit=500"),
            list_of("WorkloadList", workloads),
        ),
        get("/api/v1/nodes?&limit=500", tas_nodes(gone)),
        get(ALL_PODS, list_of("PodList", vec![])),
        get(OUR_CONFIGMAPS, list_of("ConfigMapList", config_maps)),
    ]);
    script
}

/// The controller's apply of `job`'s ConfigMap, answered with it.
fn table_write(job: &str, cm: &Value) -> Exchange {
    Exchange {
        method: "PATCH",
        uri: format!("/api/v1/namespaces/default/configmaps/{job}-ranks?&{CONTROLLER_SSA}"),
        content_type: Some(APPLY),
        body: Some(cm.clone()),
        status: 200,
        reply: cm.clone(),
    }
}

/// The status apply of our check on `job`'s Workload.
fn check_state(job: &str, state: &str, message: &str) -> Exchange {
    let body = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": { "name": format!("job-{job}-1a2b3"), "namespace": "default" },
        "status": { "admissionChecks": [{
            "name": "eflops-rank-table", "state": state, "message": message, "lastTransitionTime": NOW,
        }] },
    });
    Exchange {
        method: "PATCH",
        uri: format!(
            "{KUEUE}/namespaces/default/workloads/job-{job}-1a2b3/status?&{CONTROLLER_SSA}"
        ),
        content_type: Some(APPLY),
        body: Some(body.clone()),
        status: 200,
        reply: body,
    }
}

/// What the controller decides for `job` on `hosts`, from the pure
/// function; the tests check its table independently.
fn decision(
    job: &str,
    hosts: &[&str],
    held: &[(&str, &str)],
) -> provisioner::jobs::admission::Decision {
    let plan = eflops();
    let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
    let hosts: Vec<(String, u32)> = hosts.iter().map(|h| (h.to_string(), 1)).collect();
    let held = held
        .iter()
        .map(|(n, j)| (n.to_string(), j.to_string()))
        .collect();
    provisioner::jobs::admission::admit(&plan, &bound, &tas_job(job), &tas_view(&[]), &hosts, &held)
}

/// The Nodes of a `ranks.csv`.
fn table_nodes(cm: &Value) -> Vec<(String, String)> {
    let csv = cm["data"]["ranks.csv"].as_str().expect("ranks.csv written");
    provisioner::jobs::rank_check::read_table(csv, "ranks.csv")
        .unwrap()
        .into_iter()
        .map(|r| (r.node, r.sub_node))
        .collect()
}

/// A pass whose every request succeeded: what it decided.
fn pass(script: Vec<Exchange>) -> Vec<cluster::Admitted> {
    let done = pass_with_failures(script);
    assert_eq!(
        (&done.failed, &done.dropped),
        (&vec![], &vec![]),
        "{done:?}"
    );
    done.admitted
}

fn pass_with_failures(script: Vec<Exchange>) -> cluster::AdmissionPass {
    run(script, |c| async move {
        let plan = eflops();
        let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
        cluster::admit_pending(&c, &plan, &bound, "nvidia.com/gpu", NOW)
            .await
            .unwrap()
    })
}

#[test]
fn controller_writes_the_table_for_the_assigned_nodes_then_marks_the_check_ready() {
    // What submit applies: the Job waits for Kueue without Nodes of its own.
    let plan = eflops();
    let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
    let sub =
        provisioner::jobs::admission::pending(&plan, &bound, &tas_job("a"), &tas_job_text("a"))
            .unwrap();
    let job = &sub.manifests.workload;
    assert_eq!(job["spec"]["suspend"], true);
    assert_eq!(job["spec"]["completions"], 2);
    assert_eq!(
        job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "team-a"
    );
    let pod = &job["spec"]["template"];
    assert_eq!(
        pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"],
        "topology.eflops.io/part"
    );
    assert!(pod["spec"]["affinity"]["nodeAffinity"].is_null(), "{pod}");
    assert!(!pod["spec"]["affinity"]["podAntiAffinity"].is_null());
    let master = pod["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "MASTER_ADDR")
        .unwrap();
    assert_eq!(master["valueFrom"]["configMapKeyRef"]["name"], "a-ranks");
    let cm = pending_config_map("a");
    assert_eq!(
        cm["metadata"]["annotations"]["topology.eflops.io/table"],
        "pending"
    );
    assert!(cm["data"]["ranks.csv"].is_null());
    assert!(
        sub.summary().contains("pending until admission"),
        "{}",
        sub.summary()
    );

    // Kueue assigned node01 and node02 (one switch, both parts).
    let d = decision("a", &["node01", "node02"], &[]);
    let written = d.config_map.clone().unwrap();
    let nodes: std::collections::BTreeSet<String> =
        table_nodes(&written).into_iter().map(|(n, _)| n).collect();
    assert_eq!(nodes, ["node01", "node02"].map(String::from).into());
    assert_eq!(table_nodes(&written).len(), 8);
    assert_eq!(
        written["metadata"]["annotations"]["topology.eflops.io/table"],
        "ready"
    );
    assert!(!written["data"]["MASTER_ADDR"].as_str().unwrap().is_empty());
    assert!(d.message.contains("worst link load"), "{}", d.message);

    let mut script = pass_reads(
        vec![workload("a", &["node01", "node02"], "Pending")],
        &[],
        vec![pending_config_map("a")],
    );
    script.push(table_write("a", &written));
    script.push(check_state("a", "Ready", &d.message));
    let done = pass(script);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].state, CheckState::Ready);
    assert_eq!(done[0].worst_load, d.placement.map(|p| p.worst_load));
}

#[test]
fn controller_refuses_a_stale_assignment_naming_the_node() {
    // node02 left the cluster after Kueue assigned it.
    let message = "stale topology assignment: Node node02 (kubernetes.io/hostname=node02) is not in the cluster any more; assign again";
    let mut script = pass_reads(
        vec![workload("a", &["node01", "node02"], "Pending")],
        &["node02"],
        vec![pending_config_map("a")],
    );
    script.push(check_state("a", "Retry", message));
    let done = pass(script);
    assert_eq!(done[0].state, CheckState::Retry);
    assert!(done[0].message.contains("node02"));
}

#[test]
fn two_jobs_admitted_one_after_the_other_never_share_a_sub_node() {
    // Job a is admitted on node01 and node02.
    let a = decision("a", &["node01", "node02"], &[]);
    let a_cm = a.config_map.clone().unwrap();
    let admitted_a = workload("a", &["node01", "node02"], "Ready");
    // Kueue then assigns job b node02 (a's) and node03: refused, naming
    // node02 and job a.
    let message =
        "stale topology assignment: Node node02 carries ranks of job default/a; assign again";
    let mut script = pass_reads(
        vec![
            admitted_a.clone(),
            workload("b", &["node02", "node03"], "Pending"),
        ],
        &[],
        vec![a_cm.clone(), pending_config_map("b")],
    );
    script.push(check_state("b", "Retry", message));
    assert_eq!(pass(script)[0].state, CheckState::Retry);

    // Assigned again, node03 and node04: admitted, on other sub-nodes.
    let b = decision(
        "b",
        &["node03", "node04"],
        &[("node01", "default/a"), ("node02", "default/a")],
    );
    let b_cm = b.config_map.clone().unwrap();
    let mut script = pass_reads(
        vec![admitted_a, workload("b", &["node03", "node04"], "Pending")],
        &[],
        vec![a_cm.clone(), pending_config_map("b")],
    );
    script.push(table_write("b", &b_cm));
    script.push(check_state("b", "Ready", &b.message));
    assert_eq!(pass(script)[0].state, CheckState::Ready);
    let a_subs: std::collections::BTreeSet<_> = table_nodes(&a_cm).into_iter().collect();
    let b_subs: std::collections::BTreeSet<_> = table_nodes(&b_cm).into_iter().collect();
    assert_eq!((a_subs.len(), b_subs.len()), (8, 8));
    assert!(a_subs.is_disjoint(&b_subs), "{a_subs:?} {b_subs:?}");
}

/// A table counts only while its check is Ready: Kueue clears an evicted
/// Workload's `status.admission` (pkg/workload/workload.go,
/// `UnsetQuotaReservationWithCondition`) and resets its checks to Pending
/// (pkg/workload/evict/evict.go, `resetChecksOnEviction`; v0.19.2), and
/// its old table frees the Nodes.
#[test]
fn an_evicted_jobs_old_table_holds_no_node() {
    let a_cm = decision("a", &["node01", "node02"], &[])
        .config_map
        .unwrap();
    let evicted_a = with(
        workload("a", &["node01", "node02"], "Pending"),
        "/status/admission",
        Value::Null,
    );
    let b = decision("b", &["node02", "node03"], &[]);
    let mut script = pass_reads(
        vec![evicted_a, workload("b", &["node02", "node03"], "Pending")],
        &[],
        vec![a_cm, pending_config_map("b")],
    );
    script.push(table_write("b", b.config_map.as_ref().unwrap()));
    script.push(check_state("b", "Ready", &b.message));
    assert_eq!(pass(script)[0].state, CheckState::Ready);
}

/// Discovery of the Workload API (#29 item 4): both resources listed is
/// served; a version without `podgroups` (the feature gate off) is not,
/// and says so; a failing API server is an error, not "not served".
#[test]
fn workload_api_discovery() {
    use provisioner::jobs::view::WorkloadApi;
    let list = |names: &[&str]| {
        json!({ "kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "scheduling.k8s.io/v1alpha2",
            "resources": names.iter().map(|n| json!({
                "name": n, "singularName": "", "namespaced": true, "kind": "X", "verbs": ["get"],
            })).collect::<Vec<_>>() })
    };
    let served = run(
        vec![get(
            "/apis/scheduling.k8s.io/v1alpha2",
            list(&["podgroups", "podgroups/status", "workloads"]),
        )],
        |c| async move { cluster::workload_api(&c).await },
    );
    assert_eq!(served.unwrap(), WorkloadApi::Served);
    let half = run(
        vec![get(
            "/apis/scheduling.k8s.io/v1alpha2",
            list(&["workloads"]),
        )],
        |c| async move { cluster::workload_api(&c).await },
    );
    let WorkloadApi::NotServed { why } = half.unwrap() else {
        panic!("served without podgroups");
    };
    assert!(why.contains("lists no podgroups"), "{why}");
    let mut failing = get(
        "/apis/scheduling.k8s.io/v1alpha2",
        status_reply(500, "etcd is down"),
    );
    failing.status = 500;
    let e = run(
        vec![failing],
        |c| async move { cluster::workload_api(&c).await },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("discovering scheduling.k8s.io/v1alpha2"),
        "{e}"
    );
    assert!(!e.is_bad_input());
}

/// `status` shows the worst link load of the rank table (#29): from the
/// workload's annotations for a table made at submit; from the ConfigMap
/// `provisioner controller` wrote at Kueue's admission for a `[kueue]` job
/// (one more `GET`), and "pending" before it.
#[test]
fn status_shows_the_worst_link_load_of_submit_and_admission_tables() {
    let annotated = |a: Value| with(job(2, json!([])), "/metadata/annotations", a);
    let submitted = annotated(json!({
        "topology.eflops.io/worst-link-load": "2",
        "topology.eflops.io/lower-bound": "1",
        "topology.eflops.io/rank-table-method": "heuristic",
    }));
    let s = run(
        vec![
            get(JOB_URI, submitted),
            get(PODS_OF_TRAIN, pod_list(vec![])),
        ],
        |c| async move { cluster::status(&c, "ml", "train").await },
    )
    .unwrap();
    let t = s.rank_table.as_ref().expect("a rank table");
    assert_eq!(
        (t.made.as_str(), t.worst_link_load, t.lower_bound),
        ("submit", Some(2), Some(1))
    );
    assert!(
        s.table().contains("rank table: worst link load 2 flows per directed inter-switch link; congested (made at submit, heuristic, lower bound 1)"),
        "{}",
        s.table()
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["rank_table"]["worst_link_load"], 2);

    // A [kueue] job: its table is on the ConfigMap once admitted.
    let kueue = annotated(json!({ "topology.eflops.io/table": "pending" }));
    const CM: &str = "/api/v1/namespaces/ml/configmaps/train-ranks";
    let cm = |annotations: Value, labels: Value| {
        json!({ "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": "train-ranks", "namespace": "ml", "labels": labels, "annotations": annotations } })
    };
    let admitted = cm(
        json!({ "topology.eflops.io/table": "ready", "topology.eflops.io/worst-link-load": "1",
                "topology.eflops.io/lower-bound": "1", "topology.eflops.io/rank-table-method": "algorithm-1" }),
        ours(),
    );
    let status = |script: Vec<Exchange>| {
        run(script, |c| async move {
            cluster::status(&c, "ml", "train").await
        })
        .unwrap()
    };
    let s = status(vec![
        get(JOB_URI, kueue.clone()),
        get(PODS_OF_TRAIN, pod_list(vec![])),
        get(CM, admitted),
    ]);
    assert!(
        s.table().contains("rank table: worst link load 1 flow per directed inter-switch link (made at admission, algorithm-1, lower bound 1)"),
        "{}",
        s.table()
    );
    // Before admission, and with a ConfigMap of that name that is not ours.
    let not_ours = cm(
        json!({ "topology.eflops.io/table": "ready", "topology.eflops.io/worst-link-load": "1" }),
        json!({ "app": "other" }),
    );
    for reply in [
        Exchange {
            status: 404,
            ..get(CM, status_reply(404, "not found"))
        },
        get(CM, not_ours),
    ] {
        let s = status(vec![
            get(JOB_URI, kueue.clone()),
            get(PODS_OF_TRAIN, pod_list(vec![])),
            reply,
        ]);
        assert_eq!(
            s.rank_table.as_ref().map(|t| t.made.as_str()),
            Some("pending")
        );
        assert!(
            s.table()
                .contains("rank table: pending until Kueue admits the job"),
            "{}",
            s.table()
        );
    }
}

// #29 item 2: the controller survives API errors. A transient failure
// (5xx, 429) is tried again after a short jittered back-off; a 409 on the
// table write is tried again after a fresh read of the ConfigMap; a
// Workload deleted meanwhile (404) is dropped; a refusal of one object
// (403) is reported naming it and the other Workloads are served.

/// `ex` answered first with `code` (a Status of that code), then as
/// scripted.
fn failing_then(code: u16, ex: Exchange) -> Vec<Exchange> {
    let failed = Exchange {
        status: code,
        reply: status_reply(code, "the server could not answer"),
        ..ex.clone()
    };
    vec![failed, ex]
}

#[test]
fn controller_tries_a_500_again_then_succeeds() {
    let d = decision("a", &["node01", "node02"], &[]);
    let mut script = pass_reads(
        vec![workload("a", &["node01", "node02"], "Pending")],
        &[],
        vec![pending_config_map("a")],
    );
    script.extend(failing_then(
        500,
        table_write("a", d.config_map.as_ref().unwrap()),
    ));
    script.extend(failing_then(503, check_state("a", "Ready", &d.message)));
    let done = pass(script);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].state, CheckState::Ready);
}

#[test]
fn controller_reads_the_config_map_afresh_after_a_409() {
    let d = decision("a", &["node01", "node02"], &[]);
    let write = table_write("a", d.config_map.as_ref().unwrap());
    let mut script = pass_reads(
        vec![workload("a", &["node01", "node02"], "Pending")],
        &[],
        vec![pending_config_map("a")],
    );
    script.push(Exchange {
        status: 409,
        reply: status_reply(
            409,
            "Operation cannot be fulfilled on configmaps \"a-ranks\": the object has been modified",
        ),
        ..write.clone()
    });
    script.push(get(
        "/api/v1/namespaces/default/configmaps/a-ranks",
        pending_config_map("a"),
    ));
    script.push(write);
    script.push(check_state("a", "Ready", &d.message));
    assert_eq!(pass(script)[0].state, CheckState::Ready);
}

#[test]
fn controller_drops_a_workload_deleted_meanwhile() {
    let d = decision("a", &["node01", "node02"], &[]);
    let mut script = pass_reads(
        vec![workload("a", &["node01", "node02"], "Pending")],
        &[],
        vec![pending_config_map("a")],
    );
    script.push(table_write("a", d.config_map.as_ref().unwrap()));
    let gone = check_state("a", "Ready", &d.message);
    script.push(Exchange {
        status: 404,
        reply: status_reply(404, "workloads.kueue.x-k8s.io \"job-a-1a2b3\" not found"),
        ..gone
    });
    let done = pass_with_failures(script);
    assert_eq!(done.admitted, vec![]);
    assert_eq!(done.failed, vec![]);
    assert_eq!(done.dropped, ["Workload default/job-a-1a2b3"]);
}

#[test]
fn a_403_on_one_workload_does_not_stop_the_others() {
    let a = decision("a", &["node01", "node02"], &[]);
    let b = decision("b", &["node03", "node04"], &[]);
    let mut script = pass_reads(
        vec![
            workload("a", &["node01", "node02"], "Pending"),
            workload("b", &["node03", "node04"], "Pending"),
        ],
        &[],
        vec![pending_config_map("a"), pending_config_map("b")],
    );
    script.push(Exchange {
        status: 403,
        reply: status_reply(403, "configmaps \"a-ranks\" is forbidden"),
        ..table_write("a", a.config_map.as_ref().unwrap())
    });
    script.push(table_write("b", b.config_map.as_ref().unwrap()));
    script.push(check_state("b", "Ready", &b.message));
    let done = pass_with_failures(script);
    assert_eq!(done.admitted.len(), 1);
    assert_eq!(
        (done.admitted[0].job.as_str(), done.admitted[0].state),
        ("b", CheckState::Ready)
    );
    assert_eq!(done.failed.len(), 1);
    assert_eq!(done.failed[0].object, "ConfigMap default/a-ranks");
    assert!(
        done.failed[0]
            .message
            .contains("writing the rank table into ConfigMap default/a-ranks: configmaps \"a-ranks\" is forbidden (403"),
        "{:?}",
        done.failed
    );
}

/// A failed list after its tries ends the pass with the error (the
/// binary waits and runs the pass again).
#[test]
fn a_list_that_keeps_failing_ends_the_pass_naming_it() {
    let list = get(
        format!("{KUEUE}/admissionchecks?&limit=500"),
        admission_checks(),
    );
    let failed = Exchange {
        status: 500,
        reply: status_reply(500, "etcdserver: request timed out"),
        ..list
    };
    let e = run(vec![failed; 4], |c| async move {
        let plan = eflops();
        let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
        cluster::admit_pending(&c, &plan, &bound, "nvidia.com/gpu", NOW).await
    })
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("listing Kueue AdmissionChecks: etcdserver: request timed out (500"),
        "{e}"
    );
}

// #29 item 3: the check of our AdmissionCheck on a Workload of every kind
// `submit` can queue. Only whole-Node Indexed Jobs with `[kueue]` get their
// table at admission (the job file refuses `[kueue]` otherwise, naming the
// line); every other queued kind was placed at submit and pinned to its
// Nodes, so its check is Ready as it is, unless a job admitted since holds
// one of its Nodes.

/// The ConfigMap `submit` applies for `text` placed offline on the eflops
/// plan, as the API server lists it in namespace `default`.
fn submitted_config_map(text: &str) -> (Value, provisioner::jobs::submit::Submission) {
    use provisioner::jobs::{dra::DraView, job::JobSpec, submit, view::ClusterView};
    let plan = eflops();
    let bound = provisioner::nodes::bind(&plan, None, "eflops").unwrap();
    let job = JobSpec::from_toml(text, "job.toml").unwrap();
    let mut view = ClusterView::all_free(&bound);
    view.dra = DraView::from_plan(&plan, &bound, &job.placement.profile);
    let sub = submit::prepare(&plan, &bound, &job, &view).unwrap();
    let cm = sub
        .documents()
        .into_iter()
        .find(|o| o["kind"] == "ConfigMap")
        .unwrap()
        .clone();
    (cm, sub)
}

/// A Workload for `name` owned as Kueue v0.19.2 owns it for `kind`.
fn workload_of(kind: &str, api_version: &str, name: &str, owner: &str) -> Value {
    let w = workload("x", &["node01"], "Pending");
    let w = with(
        w,
        "/metadata/ownerReferences",
        json!([{ "apiVersion": api_version, "kind": kind, "name": owner, "uid": "o-uid", "controller": true }]),
    );
    with(w, "/metadata/name", json!(name))
}

fn check_state_of(workload: &str, state: &str, message: &str) -> Exchange {
    let mut ex = check_state("x", state, message);
    ex.uri = format!("{KUEUE}/namespaces/default/workloads/{workload}/status?&{CONTROLLER_SSA}");
    let body = with(ex.body.take().unwrap(), "/metadata/name", json!(workload));
    ex.body = Some(body.clone());
    ex.reply = body;
    ex
}

#[test]
fn controller_marks_ready_every_kind_submit_queues_with_its_table() {
    let base = |name: &str, extra: &str| {
        format!(
            "name = \"{name}\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 8\nqueue = \"team-a\"\nnamespace = \"default\"\n{extra}"
        )
    };
    let cases = [
        // (owner kind, owner apiVersion, Workload name, owner name, job file)
        ("Job", "batch/v1", "job-idx-1", "idx", base("idx", "")),
        (
            "MPIJob",
            "kubeflow.org/v2beta1",
            "mpijob-mpi-1",
            "mpi",
            base("mpi", "launcher = \"mpi\"\n"),
        ),
        (
            "JobSet",
            "jobset.x-k8s.io/v1alpha2",
            "jobset-js-1",
            "js",
            base("js", "[placement]\nmode = \"dra\"\n"),
        ),
        // A pod group: owned by each of its Pods, named after the group.
        (
            "Pod",
            "v1",
            "grp",
            "grp-0",
            base(
                "grp",
                "[placement]\nmode = \"dra\"\n[failure]\ngang = \"controller\"\n",
            ),
        ),
    ];
    for (kind, api, wl, owner, text) in cases {
        let (cm, sub) = submitted_config_map(&text);
        let nodes: std::collections::BTreeSet<&str> = sub
            .placement
            .ranks
            .iter()
            .map(|r| r.node.as_str())
            .collect();
        let message = format!(
            "rank table for 8 ranks on Nodes {} made at submit, in ConfigMap default/{}-ranks: worst link load {} flows per directed inter-switch link; {kind} {}'s pods are pinned to those Nodes",
            nodes.into_iter().collect::<Vec<_>>().join(", "),
            cm["metadata"]["labels"]["app.kubernetes.io/instance"]
                .as_str()
                .unwrap(),
            sub.placement.worst_load,
            cm["metadata"]["labels"]["app.kubernetes.io/instance"]
                .as_str()
                .unwrap(),
        );
        let mut script = pass_reads(vec![workload_of(kind, api, wl, owner)], &[], vec![cm]);
        script.push(check_state_of(wl, "Ready", &message));
        let done = pass(script);
        assert_eq!(
            done[0].state,
            CheckState::Ready,
            "{kind}: {}",
            done[0].message
        );
        assert_eq!(done[0].job, if kind == "Pod" { wl } else { owner });
    }
    // A Workload of a job that submit did not make is rejected, naming why.
    let message = "JobSet default/other has no ConfigMap other-ranks of provisioner submit: submit the job with provisioner submit, or take this AdmissionCheck off its ClusterQueue";
    let mut script = pass_reads(
        vec![workload_of(
            "JobSet",
            "jobset.x-k8s.io/v1alpha2",
            "jobset-other-1",
            "other",
        )],
        &[],
        vec![],
    );
    script.push(check_state_of("jobset-other-1", "Rejected", message));
    assert_eq!(pass(script)[0].state, CheckState::Rejected);
}

/// `[kueue]` with a DRA job or an MPIJob is refused at submit, naming the
/// line and why.
#[test]
fn kueue_tables_for_other_kinds_are_refused_at_submit_with_the_reason() {
    let base = "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 8\nqueue = \"q\"\n";
    for (extra, why) in [
        (
            "[placement]\nmode = \"dra\"\n",
            "a DRA job's claim templates name its sub-nodes' devices when it is submitted",
        ),
        (
            "launcher = \"mpi\"\n",
            "Kueue admits an MPIJob as two PodSets (launcher and workers)",
        ),
    ] {
        let text =
            format!("{base}{extra}[kueue]\nrequired_topology = \"topology.eflops.io/part\"\n");
        let e = provisioner::jobs::job::JobSpec::from_toml(&text, "j.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kueue.required_topology: admission-time rank tables are made for whole-Node Indexed Jobs only: "),
            "{e}"
        );
        assert!(e.contains(why), "{e}");
        assert!(e.contains("j.toml:"), "{e}");
    }
}

// #29 item 1: the gang of a DRA job of bare Pods (`[failure] gang =
// "controller"`, the gang of queued DRA jobs over Kueue's 18 PodSets). When
// a rank fails, `provisioner controller` records the first failed rank on
// the job's ConfigMap and deletes the other running ranks, each with its
// uid as a precondition, and only Pods owned by that ConfigMap.

const GANG_PODS: &str = "/api/v1/pods?&labelSelector=app.kubernetes.io%2Fmanaged-by%3Deflops-provisioner%2Ctopology.eflops.io%2Fgang%3Dcontroller&limit=500";
const GANG_ROOT: &str = "/api/v1/namespaces/ml/configmaps/g-ranks";

fn gang_labels(rank: usize) -> Value {
    json!({
        "app.kubernetes.io/managed-by": "eflops-provisioner",
        "app.kubernetes.io/instance": "g",
        "topology.eflops.io/gang": "controller",
        "topology.eflops.io/rank": rank.to_string(),
        "topology.eflops.io/role": "rank",
    })
}

/// Rank `rank`'s bare Pod of job `g`, owned by the ConfigMap `owner_uid`,
/// in `phase`; with `exit` its container ended with that code at `at`.
fn gang_pod(rank: usize, owner_uid: &str, phase: &str, exit: Option<(i32, &str)>) -> Value {
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("g-{rank}"), "namespace": "ml", "uid": format!("p{rank}"),
            "labels": gang_labels(rank),
            "ownerReferences": [{ "apiVersion": "v1", "kind": "ConfigMap", "name": "g-ranks", "uid": owner_uid, "controller": false }],
        },
        "spec": { "restartPolicy": "Never", "nodeName": format!("node{:02}", rank + 1), "containers": [{ "name": "rank", "image": "x" }] },
        "status": { "phase": phase },
    });
    if let Some((code, at)) = exit {
        p["status"]["containerStatuses"] = json!([{
            "name": "rank", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
            "state": { "terminated": { "exitCode": code, "reason": "Error", "message": "NCCL WARN socket closed", "finishedAt": at } },
        }]);
    }
    p
}

fn gang_root(annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "g-ranks", "namespace": "ml", "uid": "root-uid",
            "labels": { "app.kubernetes.io/managed-by": "eflops-provisioner", "app.kubernetes.io/instance": "g" },
            "annotations": annotations,
        },
        "data": {},
    })
}

fn gang_delete(rank: usize, status: u16) -> Exchange {
    Exchange {
        method: "DELETE",
        uri: format!("/api/v1/namespaces/ml/pods/g-{rank}?"),
        content_type: Some("application/json"),
        body: Some(json!({ "preconditions": { "uid": format!("p{rank}") } })),
        status,
        reply: if status == 200 {
            gang_pod(rank, "root-uid", "Running", None)
        } else {
            status_reply(status, "gone")
        },
    }
}

fn gang_pass(script: Vec<Exchange>) -> cluster::GangPass {
    run(script, |c| async move {
        cluster::stop_failed_gangs(&c, NOW).await.unwrap()
    })
}

/// What the controller writes on `g`'s ConfigMap when rank 2 failed first.
fn failed_gang_record() -> Value {
    json!({
        "topology.eflops.io/failed-pod": "g-2",
        "topology.eflops.io/failed-rank": "2",
        "topology.eflops.io/failed-node": "node03",
        "topology.eflops.io/failed-reason": "container rank Error, exit code 1: NCCL WARN socket closed",
        "topology.eflops.io/stopped-at": NOW,
    })
}

/// One controller pass over the gang `g`: rank 2 failed first, ranks 0
/// and 3 still run (3 is deleted meanwhile), and a stranger's Pod.
pub(crate) fn failed_gang_script() -> Vec<Exchange> {
    let record = failed_gang_record();
    let mut stranger = gang_pod(4, "someone-else", "Running", None);
    stranger["metadata"]["name"] = json!("g-4");
    let pods = pod_list(vec![
        gang_pod(0, "root-uid", "Running", None),
        // Rank 1 failed after rank 2 (it lost its peer): rank 2 is first.
        gang_pod(1, "root-uid", "Failed", Some((1, "2026-11-28T20:00:09Z"))),
        gang_pod(2, "root-uid", "Failed", Some((1, "2026-11-28T20:00:02Z"))),
        gang_pod(3, "root-uid", "Running", None),
        // Not owned by the job's ConfigMap: never deleted.
        stranger,
    ]);
    let record_body = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "g-ranks", "namespace": "ml", "annotations": record },
    });
    vec![
        get(GANG_PODS, pods),
        get(
            GANG_ROOT,
            gang_root(json!({ "topology.eflops.io/placement": "dra" })),
        ),
        Exchange {
            method: "PATCH",
            uri: format!("{GANG_ROOT}?&{CONTROLLER_SSA}"),
            content_type: Some(APPLY),
            body: Some(record_body.clone()),
            status: 200,
            reply: gang_root(record.clone()),
        },
        gang_delete(0, 200),
        // Rank 3 was deleted meanwhile: nothing to do.
        gang_delete(3, 404),
    ]
}

#[test]
fn a_failed_rank_stops_its_gang_and_status_names_it() {
    let record = failed_gang_record();
    let script = failed_gang_script();
    let done = gang_pass(script);
    assert_eq!(done.failed, vec![]);
    assert_eq!(
        done.stopped,
        vec![cluster::GangStop {
            namespace: "ml".to_string(),
            job: "g".to_string(),
            rank: Some(2),
            pod: "g-2".to_string(),
            node: Some("node03".to_string()),
            reason: "container rank Error, exit code 1: NCCL WARN socket closed".to_string(),
            deleted: vec!["g-0".to_string()],
        }]
    );

    // The next pass finds it recorded and every other rank ended or being
    // deleted: no request but the reads.
    let mut deleting = gang_pod(0, "root-uid", "Running", None);
    deleting["metadata"]["deletionTimestamp"] = json!(NOW);
    let script = vec![
        get(
            GANG_PODS,
            pod_list(vec![
                deleting,
                gang_pod(2, "root-uid", "Failed", Some((1, "2026-11-28T20:00:02Z"))),
            ]),
        ),
        get(GANG_ROOT, gang_root(record.clone())),
    ];
    assert_eq!(gang_pass(script), cluster::GangPass::default());

    // `status` (and so `status --wait`) names the first failed rank.
    let mut root = gang_root(record);
    root["metadata"]["annotations"]["topology.eflops.io/placement"] = json!("dra");
    root["metadata"]["annotations"]["topology.eflops.io/ranks"] = json!("4");
    let script = vec![
        not_found("/apis/batch/v1/namespaces/ml/jobs/g"),
        not_found("/apis/kubeflow.org/v2beta1/namespaces/ml/mpijobs/g"),
        not_found("/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/g"),
        get(GANG_ROOT, root),
        get(
            "/api/v1/namespaces/ml/pods?&labelSelector=app.kubernetes.io%2Finstance%3Dg&limit=500",
            pod_list(vec![gang_pod(
                2,
                "root-uid",
                "Failed",
                Some((1, "2026-11-28T20:00:02Z")),
            )]),
        ),
    ];
    let s = run(
        script,
        |c| async move { cluster::status(&c, "ml", "g").await },
    )
    .unwrap();
    assert_eq!(s.phase, JobPhase::Failed);
    let stopped = s.stopped.as_ref().unwrap();
    assert_eq!(
        (stopped.rank, stopped.node.as_deref()),
        (Some(2), Some("node03"))
    );
    assert!(
        s.table().contains(&format!(
            "stopped by provisioner controller at {NOW}: rank 2 (pod g-2, Node node03) failed first: container rank Error, exit code 1: NCCL WARN socket closed"
        )),
        "{}",
        s.table()
    );
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["stopped"]["rank"], 2);
}

/// One gang's refusal (its ConfigMap forbidden) is reported naming it, and
/// the next gang is still stopped; a root that is not ours stops nothing.
#[test]
fn a_gang_whose_config_map_cannot_be_read_does_not_stop_the_others() {
    let mut other = gang_pod(1, "root-uid", "Failed", Some((137, "2026-11-28T20:00:02Z")));
    other["metadata"]["namespace"] = json!("team");
    let pods = pod_list(vec![
        other,
        gang_pod(0, "root-uid", "Running", None),
        gang_pod(1, "root-uid", "Failed", Some((1, "2026-11-28T20:00:02Z"))),
    ]);
    let forbidden = Exchange {
        status: 403,
        ..get(
            "/api/v1/namespaces/ml/configmaps/g-ranks",
            status_reply(403, "configmaps \"g-ranks\" is forbidden"),
        )
    };
    let mut foreign = gang_root(json!({}));
    foreign["metadata"]["namespace"] = json!("team");
    foreign["metadata"]["labels"] = json!({ "app": "mine" });
    let script = vec![
        get(GANG_PODS, pods),
        forbidden,
        get("/api/v1/namespaces/team/configmaps/g-ranks", foreign),
    ];
    let done = gang_pass(script);
    assert_eq!(done.stopped, vec![]);
    let objects: Vec<&str> = done.failed.iter().map(|f| f.object.as_str()).collect();
    assert_eq!(objects, ["ConfigMap ml/g-ranks", "ConfigMap team/g-ranks"]);
    assert!(done.failed[0].message.contains("(403"), "{:?}", done.failed);
    assert!(
        done.failed[1].message.contains("none of them is stopped"),
        "{:?}",
        done.failed
    );
}

/// What submit writes for `gang = "controller"`: bare Pods labelled for
/// the controller, in a Kueue pod group that Kueue finishes once every pod
/// has ended (`retriable-in-group: "false"`), queued beyond Kueue's 18
/// PodSets; `restarts` refused, naming the line.
#[test]
fn a_queued_dra_job_over_18_ranks_is_a_gang_the_controller_stops() {
    let text = "name = \"big\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 24\nqueue = \"team-a\"\nnamespace = \"default\"\n[placement]\nmode = \"dra\"\n[failure]\ngang = \"controller\"\n";
    let (_, sub) = submitted_config_map(text);
    let pods: Vec<&Value> = sub
        .manifests
        .owned
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .collect();
    assert_eq!(pods.len(), 24);
    for p in &pods {
        let m = &p["metadata"];
        assert_eq!(m["labels"]["topology.eflops.io/gang"], "controller", "{m}");
        assert_eq!(m["labels"]["kueue.x-k8s.io/pod-group-name"], "big");
        assert_eq!(
            m["annotations"]["kueue.x-k8s.io/pod-group-total-count"],
            "24"
        );
        assert_eq!(
            m["annotations"]["kueue.x-k8s.io/retriable-in-group"],
            "false"
        );
        assert_eq!(p["spec"]["restartPolicy"], "Never");
    }
    assert!(
        sub.notes
            .iter()
            .any(|n| n.contains("provisioner controller (which must run) deletes the others")),
        "{:?}",
        sub.notes
    );
    // gang = "none" stays bare Pods that nothing stops.
    let (_, none) = submitted_config_map(&text.replace("controller", "none"));
    let pod = none
        .manifests
        .owned
        .iter()
        .find(|o| o["kind"] == "Pod")
        .unwrap();
    assert!(
        pod["metadata"]["labels"]
            .get("topology.eflops.io/gang")
            .is_none()
    );
    assert!(
        pod["metadata"]["annotations"]
            .get("kueue.x-k8s.io/retriable-in-group")
            .is_none()
    );

    let e =
        provisioner::jobs::job::JobSpec::from_toml(&format!("{text}restarts = 2\n"), "big.toml")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("big.toml:11: failure.restarts: gang = \"controller\" stops every rank when one fails and re-creates none"),
        "{e}"
    );
    let e = provisioner::jobs::job::JobSpec::from_toml(
        &text.replace("[failure]\ngang = \"controller\"\n", ""),
        "big.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("or set [failure] gang = \"controller\""), "{e}");
}

// #29 item 4: a failed whole-server pod is named by its server and the
// ranks of its Node, not by its completion index (every replicated Job of
// the JobSet has one completion, index 0).

#[test]
fn wait_names_a_failed_server_and_its_ranks() {
    let mut pod = job_pod("train-server-1-0-0-x", Some("node02"), "Failed", None);
    pod["metadata"]["labels"] = json!({
        "app.kubernetes.io/managed-by": "eflops-provisioner",
        "app.kubernetes.io/instance": "train",
        "topology.eflops.io/role": "server",
        "jobset.sigs.k8s.io/replicatedjob-name": "server-1",
    });
    pod["metadata"]["annotations"] = json!({ "batch.kubernetes.io/job-completion-index": "0" });
    let pod = terminated(pod, "ranks", 1, "Error");
    let mut csv = "rank,server,sub_node,gpu,nic,switch,part,node\n".to_string();
    for r in 0..16 {
        let node = if r < 8 { "node01" } else { "node02" };
        csv.push_str(&format!("{r},s{},sn{r},g{r},n{r},sw,0,{node}\n", r / 8));
    }
    let failed = json!([{ "type": "Failed", "status": "True", "reason": "FailedJobs", "message": "jobset failed" }]);
    let mut root = dra_root();
    root["data"] = json!({ "ranks.csv": csv });
    let script = vec![
        get(LIST_PODS_OF_TRAIN, listed(vec![pod])),
        not_found(JOB_URI),
        not_found(MPIJOB_URI),
        get(JOBSET_URI, job_set(0, 0, failed)),
        get(DRA_ROOT_URI, root),
        get(
            "/api/v1/namespaces/ml/pods/train-server-1-0-0-x/log?&container=ranks&tailLines=20",
            json!({ "__raw": "rank 9: NCCL error\n" }),
        ),
    ];
    let s = wait_with_progress(script).0.unwrap();
    let f = &s.failures[0];
    assert_eq!(
        (
            f.server.as_deref(),
            f.ranks.clone(),
            f.rank,
            f.rank_is_index
        ),
        (Some("server-1"), (8..16).collect::<Vec<_>>(), None, false)
    );
    assert!(
        s.table().contains(
            "first failure: server-1, ranks 8-15 (pod train-server-1-0-0-x, container ranks): Error"
        ),
        "{}",
        s.table()
    );
}

// #29 item 5: the Workload API on a cluster whose gates do not serve what
// submit wrote. Kubernetes v1.36 drops a topology constraint on create when
// TopologyAwareWorkloadScheduling is off (pkg/registry/scheduling/workload/
// strategy_test.go, "drops field with SchedulingConstraints set and TAS
// disabled"), which apply reports as a warning; a spec it refuses as
// invalid (422, e.g. changing the immutable constraint of an existing
// PodGroup) is an error naming the gates and the job file's key.

fn with_pod_group() -> (Manifests, Value) {
    let mut m = small_manifests();
    let group = json!({
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": { "name": "train", "namespace": "ml", "labels": { "app.kubernetes.io/instance": "train" } },
        "spec": {
            "schedulingPolicy": { "gang": { "minCount": 2 } },
            "schedulingConstraints": { "topology": [{ "key": "topology.eflops.io/switch" }] },
        },
    });
    m.owned.push(group.clone());
    (
        m,
        with(group, "/metadata/ownerReferences", owner_of_train()),
    )
}

const PODGROUP_URI: &str = "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/train";

/// Applies [`small_manifests`] with a PodGroup, whose apply is answered as
/// `answer` makes it (from the object itself, with a uid).
fn apply_with_pod_group(
    answer: impl FnOnce(&mut Exchange),
) -> Result<cluster::Applied, Box<Error>> {
    let (m, group) = with_pod_group();
    let (job, owned) = small_apply(&m);
    let mut pod_group = ssa(PODGROUP_URI, &group, "pg-uid");
    answer(&mut pod_group);
    let mut script = vec![job];
    script.extend(owned);
    script.push(pod_group);
    run(
        script,
        |c| async move { cluster::apply(&c, "ml", &m).await },
    )
    .map_err(Box::new)
}

#[test]
fn a_422_on_the_workload_api_names_the_gates_and_the_key() {
    let e = apply_with_pod_group(|refused| {
        refused.status = 422;
        refused.reply = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "PodGroup.scheduling.k8s.io \"train\" is invalid: spec.schedulingConstraints: Invalid value: \"object\": field is immutable",
            "reason": "Invalid", "code": 422,
        });
    })
    .unwrap_err();
    assert!(e.is_bad_input());
    let text = e.to_string();
    for want in [
        "applying PodGroup train in namespace ml: the API server refused it as invalid (PodGroup.scheduling.k8s.io \"train\" is invalid: spec.schedulingConstraints",
        "GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling",
        "[schedule] workload_api = \"off\"",
    ] {
        assert!(text.contains(want), "{want:?} in {text}");
    }
}

#[test]
fn a_dropped_topology_constraint_is_a_warning_naming_the_gate() {
    let a = apply_with_pod_group(|dropped| {
        dropped.reply["spec"]
            .as_object_mut()
            .unwrap()
            .remove("schedulingConstraints");
    })
    .unwrap();
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert!(
        a.warnings[0].starts_with("the API server dropped schedulingConstraints from PodGroup ml/train: its feature gate TopologyAwareWorkloadScheduling is off"),
        "{}",
        a.warnings[0]
    );
    // Kept: no warning.
    let a = apply_with_pod_group(|_| {}).unwrap();
    assert_eq!(a.warnings, Vec::<String>::new());
}
