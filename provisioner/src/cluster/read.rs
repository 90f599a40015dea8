//! Nodes and Pods into a [`ClusterView`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceClaimTemplate, ResourceSlice};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{Api, ListParams};

use super::{Error, Result, list_all};
use crate::jobs::dra::DraView;
use crate::jobs::view::{ClusterView, NodeState, PodUse};

/// The GPU resource of the NVIDIA device plugin.
pub const DEFAULT_GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Reads every Node and every Pod bound to a Node that is not finished,
/// and counts the GPUs (`gpu_resource`, e.g. [`DEFAULT_GPU_RESOURCE`]) each
/// Node has and each Pod requests.
///
/// Sends `GET /api/v1/nodes` and `GET /api/v1/pods` (all namespaces) with a
/// field selector that leaves out unscheduled and finished pods, a page of
/// 500 at a time. Pods on Nodes the list did not return are ignored; pods
/// that request no GPU are not listed.
pub async fn read_view(client: &kube::Client, gpu_resource: &str) -> Result<ClusterView> {
    view_of(client, gpu_resource, false).await
}

/// [`read_view`], each page tried again after a transient failure: for
/// `provisioner controller`.
pub(super) async fn read_view_retried(
    client: &kube::Client,
    gpu_resource: &str,
) -> Result<ClusterView> {
    view_of(client, gpu_resource, true).await
}

async fn view_of(client: &kube::Client, gpu_resource: &str, retry: bool) -> Result<ClusterView> {
    let nodes: Vec<Node> = super::list_pages(
        &Api::<Node>::all(client.clone()),
        ListParams::default(),
        "Nodes",
        retry,
    )
    .await?;
    let pods: Vec<Pod> = super::list_pages(
        &Api::<Pod>::all(client.clone()),
        ListParams::default()
            .fields("spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"),
        "Pods",
        retry,
    )
    .await?;

    let mut view: BTreeMap<String, NodeState> = BTreeMap::new();
    for node in &nodes {
        let Some(name) = node.metadata.name.clone() else {
            continue;
        };
        let status = node.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        let unschedulable = node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false);
        let gpu_allocatable = match status
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|a| a.get(gpu_resource))
        {
            Some(q) => count(q, || format!("Node {name}"), gpu_resource)?,
            None => 0,
        };
        let address = status
            .and_then(|s| s.addresses.as_ref())
            .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
            .map(|a| a.address.clone());
        let hostname = node
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(crate::jobs::admission::HOSTNAME_LABEL))
            .cloned();
        let topology_labels = Some(
            node.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| k.starts_with(crate::jobs::labels::PREFIX))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        view.insert(
            name.clone(),
            NodeState {
                name,
                ready,
                unschedulable,
                gpu_allocatable,
                address,
                hostname,
                topology_labels,
                pods: Vec::new(),
            },
        );
    }
    for pod in &pods {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            continue;
        }
        let Some(spec) = &pod.spec else { continue };
        let Some(node) = spec.node_name.as_deref().and_then(|n| view.get_mut(n)) else {
            continue;
        };
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let object = |c: &Container| format!("Pod {namespace}/{name} container {}", c.name);
        let gpus = pod_gpus(
            &spec.containers,
            spec.init_containers.as_deref().unwrap_or_default(),
            gpu_resource,
            &object,
        )?;
        if gpus > 0 {
            node.pods.push(PodUse {
                namespace: namespace.clone(),
                name: name.clone(),
                gpus,
            });
        }
    }
    let mut nodes: Vec<NodeState> = view.into_values().collect();
    for n in &mut nodes {
        n.pods
            .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    }
    Ok(ClusterView {
        nodes,
        dra: Default::default(),
    })
}

/// Reads the cluster's DRA objects: every ResourceSlice, every
/// ResourceClaim (all namespaces) and the ResourceClaimTemplates this
/// provisioner made (all namespaces), into a [`DraView`].
///
/// Sends `GET /apis/resource.k8s.io/v1/resourceslices`, `GET
/// /apis/resource.k8s.io/v1/resourceclaims` and `GET
/// /apis/resource.k8s.io/v1/resourceclaimtemplates?labelSelector=app.kubernetes.io/managed-by=eflops-provisioner`,
/// a page of 500 at a time.
pub async fn read_dra(client: &kube::Client) -> Result<DraView> {
    let slices: Vec<ResourceSlice> = list_all(
        &Api::<ResourceSlice>::all(client.clone()),
        ListParams::default(),
        "ResourceSlices",
    )
    .await?;
    let claims: Vec<ResourceClaim> = list_all(
        &Api::<ResourceClaim>::all(client.clone()),
        ListParams::default(),
        "ResourceClaims",
    )
    .await?;
    let templates: Vec<ResourceClaimTemplate> = list_all(
        &Api::<ResourceClaimTemplate>::all(client.clone()),
        ListParams::default().labels(&format!(
            "app.kubernetes.io/managed-by={}",
            crate::jobs::labels::MANAGED_BY
        )),
        "ResourceClaimTemplates",
    )
    .await?;
    Ok(DraView::from_objects(&slices, &claims, &templates))
}

/// The GPUs a pod holds while it runs, as the scheduler counts them: the
/// sum over its containers and sidecars (init containers with
/// `restartPolicy: Always`), or, when more, what an ordinary init container
/// needs together with the sidecars started before it.
fn pod_gpus(
    containers: &[Container],
    init: &[Container],
    resource: &str,
    object: &dyn Fn(&Container) -> String,
) -> Result<u32> {
    let mut sidecars = 0u32;
    let mut init_peak = 0u32;
    for c in init {
        let n = request(c, resource, object)?;
        if c.restart_policy.as_deref() == Some("Always") {
            sidecars = sidecars.saturating_add(n);
        } else {
            init_peak = init_peak.max(sidecars.saturating_add(n));
        }
    }
    let mut sum = sidecars;
    for c in containers {
        sum = sum.saturating_add(request(c, resource, object)?);
    }
    Ok(sum.max(init_peak))
}

/// A container's request of `resource`; for an extended resource the limit
/// stands in for a missing request, as the API server defaults it.
fn request(c: &Container, resource: &str, object: &dyn Fn(&Container) -> String) -> Result<u32> {
    let Some(res) = &c.resources else {
        return Ok(0);
    };
    let q = res
        .requests
        .as_ref()
        .and_then(|r| r.get(resource))
        .or_else(|| res.limits.as_ref().and_then(|l| l.get(resource)));
    match q {
        Some(q) => count(q, || object(c), resource),
        None => Ok(0),
    }
}

/// A quantity of devices: a whole number, possibly written with a decimal
/// SI suffix (`1k`) or in thousandths (`2000m`).
fn count(q: &Quantity, object: impl Fn() -> String, resource: &str) -> Result<u32> {
    parse_count(&q.0).ok_or_else(|| Error::Quantity {
        object: object(),
        resource: resource.to_string(),
        value: q.0.clone(),
    })
}

fn parse_count(s: &str) -> Option<u32> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits);
    let n: u64 = num.parse().ok()?;
    let n = match suffix {
        "" => n,
        "k" => n.checked_mul(1_000)?,
        "M" => n.checked_mul(1_000_000)?,
        "m" if n.is_multiple_of(1000) => n / 1000,
        _ => return None,
    };
    u32::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ResourceRequirements;

    #[test]
    fn counts() {
        for (s, want) in [
            ("8", Some(8)),
            ("0", Some(0)),
            ("1k", Some(1000)),
            ("2000m", Some(2)),
            ("1500m", None),
            ("1.5", None),
            ("", None),
            ("-1", None),
            ("8Gi", None),
            ("99999999999", None),
        ] {
            assert_eq!(parse_count(s), want, "{s}");
        }
    }

    fn container(name: &str, req: Option<&str>, lim: Option<&str>, always: bool) -> Container {
        let map = |v: Option<&str>| {
            v.map(|v| BTreeMap::from([("nvidia.com/gpu".to_string(), Quantity(v.to_string()))]))
        };
        Container {
            name: name.to_string(),
            resources: Some(ResourceRequirements {
                requests: map(req),
                limits: map(lim),
                ..Default::default()
            }),
            restart_policy: always.then(|| "Always".to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn pod_requests() {
        let obj = |c: &Container| c.name.clone();
        let g = |cs: &[Container], init: &[Container]| pod_gpus(cs, init, "nvidia.com/gpu", &obj);
        // Containers add up; a limit stands in for a missing request.
        let cs = [
            container("a", Some("2"), None, false),
            container("b", None, Some("1"), false),
        ];
        assert_eq!(g(&cs, &[]).unwrap(), 3);
        // A larger init container wins.
        assert_eq!(
            g(&cs, &[container("i", Some("4"), None, false)]).unwrap(),
            4
        );
        // A sidecar adds to the containers and to later init containers.
        let init = [
            container("s", Some("1"), None, true),
            container("i", Some("3"), None, false),
        ];
        assert_eq!(g(&cs, &init).unwrap(), 4);
        let e = g(&[container("x", Some("half"), None, false)], &[])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x: nvidia.com/gpu is `half`"), "{e}");
    }
}
