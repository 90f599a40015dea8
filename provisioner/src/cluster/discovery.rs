//! What the API server serves: the Workload API (`scheduling.k8s.io`).

use super::{Error, Result, is_status};
use crate::jobs::manifests::workload::API_VERSION;
use crate::jobs::view::WorkloadApi;

/// Whether the cluster serves the Workload API objects a submission
/// writes: discovery's `GET /apis/scheduling.k8s.io/v1alpha2` must list
/// both `workloads` and `podgroups`.
///
/// A 404 means the version is not served (Kubernetes before 1.36, or the
/// alpha API not switched on with `--runtime-config`); then `GET
/// /apis` says which versions of the group are, so that a 1.37
/// cluster serving only `v1beta1` is named as such. Any other failure is
/// an error.
pub async fn workload_api(client: &kube::Client) -> Result<WorkloadApi> {
    let resources = match client.list_api_group_resources(API_VERSION).await {
        Ok(list) => list,
        Err(e) if is_status(&e, 404) => {
            return Ok(WorkloadApi::NotServed {
                why: served_versions(client).await?,
            });
        }
        Err(e) => return Err(Error::api(format!("discovering {API_VERSION}"), e)),
    };
    let has = |name: &str| resources.resources.iter().any(|r| r.name == name);
    let missing: Vec<&str> = ["workloads", "podgroups"]
        .into_iter()
        .filter(|r| !has(r))
        .collect();
    Ok(if missing.is_empty() {
        WorkloadApi::Served
    } else {
        WorkloadApi::NotServed {
            why: format!(
                "discovery of {API_VERSION} lists no {} (the GenericWorkload feature gate is off)",
                missing.join(" and ")
            ),
        }
    })
}

/// What discovery's group list (`GET /apis`) says of the
/// `scheduling.k8s.io` group, for people.
async fn served_versions(client: &kube::Client) -> Result<String> {
    let groups = client
        .list_api_groups()
        .await
        .map_err(|e| Error::api("listing the API groups", e))?;
    let versions: Vec<&str> = groups
        .groups
        .iter()
        .filter(|g| g.name == "scheduling.k8s.io")
        .flat_map(|g| g.versions.iter().map(|v| v.group_version.as_str()))
        .collect();
    Ok(if versions.is_empty() {
        "discovery lists no scheduling.k8s.io version".to_string()
    } else {
        format!("discovery lists {} only", versions.join(", "))
    })
}
