//! Everything that talks to the Kubernetes API, and nothing else does.
//!
//! Each function takes a [`kube::Client`]; the binary builds one from the
//! kubeconfig with [`connect`], and tests build one over a fake API server
//! (`tower_test::mock::pair`) and check every request it sends.
//!
//! - [`read_view`] lists Nodes and Pods into the [`ClusterView`] placement
//!   works on; [`read_dra`] adds ResourceSlices, ResourceClaims and the
//!   provisioner's ResourceClaimTemplates for DRA placement.
//! - [`label_nodes`] writes the plan's topology labels onto Nodes with
//!   server-side apply, sending nothing for a Node already labelled.
//! - [`apply`] applies a submission's [`Manifests`]: the workload first,
//!   then the objects it owns with an `ownerReference` to it.
//! - [`status`], [`wait`] and [`delete`] follow and remove a submitted job
//!   (a Job, MPIJob, JobSet or DRA Pods; only what carries this
//!   provisioner's labels for it).
//! - [`workload_api`] asks discovery whether the cluster serves the
//!   Workload API (`scheduling.k8s.io/v1alpha2`) a submission can write.
//! - [`admit_pending`] is one pass of `provisioner controller`, the Kueue
//!   AdmissionCheck controller that writes rank tables at admission;
//!   [`stop_failed_gangs`] its other half, which stops the bare rank Pods
//!   of a DRA job (`[failure] gang = "controller"`) when one fails. Both
//!   try transient failures again ([`retry`]) and report a failed object
//!   without stopping for the others.
//!
//! Every write is a server-side apply under the field manager
//! [`FIELD_MANAGER`], with `force=true`: the provisioner owns the fields it
//! sets, and a field it stops setting is removed by the API server.
//!
//! [`ClusterView`]: crate::jobs::view::ClusterView
//! [`Manifests`]: crate::jobs::view::Manifests

mod admission;
mod apply;
mod delete;
mod discovery;
mod gang;
mod jobs;
mod jobset;
mod labels;
mod read;
pub mod retry;
mod status;

use std::path::PathBuf;

use kube::api::{Api, ListParams, ObjectList};
use serde::de::DeserializeOwned;

pub use crate::error::Error;
pub use admission::{AdmissionPass, Admitted, CONTROLLER_MANAGER, admit_pending};
pub use apply::{Applied, AppliedObject, apply};
pub use delete::{Deleted, delete};
pub use discovery::workload_api;
pub use gang::{GangPass, GangStop, stop_failed_gangs};
pub use jobs::{INSTANCE_LABEL, LOG_LINES, WaitOptions, status, wait};
pub use labels::{LabelOptions, LabelReport, NodeChange, NodeLabelState, label_nodes};
pub use read::{DEFAULT_GPU_RESOURCE, read_dra, read_view};
pub use status::{
    GangFailure, JobCondition, JobPhase, JobPod, JobRestarts, JobStatus, PodFailure,
    RankTableStatus,
};

/// Shorthand for results of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The field manager of every server-side apply the provisioner sends.
pub const FIELD_MANAGER: &str = "eflops-provisioner";

/// Items per page when listing objects.
const PAGE: u32 = 500;

/// True when a cluster configuration can be found: `KUBECONFIG` names at
/// least one file that exists, `~/.kube/config` exists, or the process runs
/// in a pod (`KUBERNETES_SERVICE_HOST` is set).
///
/// It does not read or check the configuration; [`connect`] does.
pub fn kubeconfig_available() -> bool {
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|h| !h.is_empty()) {
        return true;
    }
    if let Some(paths) = std::env::var_os("KUBECONFIG")
        && std::env::split_paths(&paths).any(|p| p.is_file())
    {
        return true;
    }
    home_kubeconfig().is_some_and(|p| p.is_file())
}

fn home_kubeconfig() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".kube").join("config"))
}

/// A client for the cluster the kubeconfig (or the pod's service account)
/// points at.
pub async fn connect() -> Result<kube::Client> {
    if !kubeconfig_available() {
        return Err(Error::Config {
            message: "no kubeconfig found (KUBECONFIG is unset or names no file, ~/.kube/config does not exist, and this is not a pod)".to_string(),
        });
    }
    kube::Client::try_default()
        .await
        .map_err(|e| Error::Config {
            message: format!("the kubeconfig cannot be used: {e}"),
        })
}

/// Lists every object `api` can see, page by page, with the given
/// selectors.
async fn list_all<K>(api: &Api<K>, params: ListParams, what: &str) -> Result<Vec<K>>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    list_pages(api, params, what, false).await
}

/// [`list_all`], each page tried again after a transient failure
/// ([`retry::retried`]): for `provisioner controller`, which runs on.
async fn list_retried<K>(api: &Api<K>, params: ListParams, what: &str) -> Result<Vec<K>>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    list_pages(api, params, what, true).await
}

async fn list_pages<K>(api: &Api<K>, params: ListParams, what: &str, retry: bool) -> Result<Vec<K>>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut items = Vec::new();
    let mut params = params.limit(PAGE);
    loop {
        let page: ObjectList<K> = if retry {
            retry::retried(|| api.list(&params)).await
        } else {
            api.list(&params).await
        }
        .map_err(|e| Error::api(format!("listing {what}"), e))?;
        items.extend(page.items);
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok(items),
        }
    }
}

/// True for an API answer with status `code`.
fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(r) if r.code == code)
}
