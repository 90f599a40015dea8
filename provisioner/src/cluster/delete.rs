//! Removing a submitted job: only what this provisioner made for it.

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Preconditions};
use serde::Serialize;

use super::jobs::{is_ours, workload};
use super::{Error, Result, is_status};

/// What [`delete`] removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// `Job`, `MPIJob`, `JobSet`, or `ConfigMap` (the root of a DRA job of
    /// bare Pods).
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// The deleted object's uid, when the API returned the object.
    pub uid: Option<String>,
    /// Always `Foreground`: the workload goes once its pods and owned
    /// objects are gone.
    pub propagation: &'static str,
    /// The job's Secret (`<job>-probe-token`) when it was deleted here: one
    /// applied from `submit --dry-run` output has no owner for the garbage
    /// collector to follow.
    pub secret: Option<String>,
}

/// Deletes the Job, or else the MPIJob, or else the JobSet, or else the DRA
/// submission of bare Pods, named `name`, that this provisioner made (its
/// labels `app.kubernetes.io/managed-by: eflops-provisioner` and
/// `app.kubernetes.io/instance: NAME`), with foreground propagation: the
/// garbage collector removes first its pods (a JobSet's: through its
/// Jobs) and the objects that name it as owner (ConfigMap, Service; with
/// DRA, the claim templates, and the rank Pods whose ResourceClaims go with
/// them). An object of those names without our labels is left alone
/// ([`Error::NotOurs`] when nothing else is found).
///
/// Sends the `GET`s of [`super::status`] until it finds ours, then
/// `DELETE` of it with the body
/// `{"propagationPolicy":"Foreground","preconditions":{"uid":UID}}`, so
/// that an object replaced since the `GET` is not deleted. Then `GET
/// /api/v1/namespaces/NS/secrets/NAME-probe-token` and, when its labels say
/// this provisioner made it for this job, `DELETE` it (a 404 at either step
/// means it is gone already).
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) -> Result<Deleted> {
    let (ar, obj) = workload(client, namespace, name).await?;
    let mut deleted = delete_root(client, namespace, &ar, &obj).await?;
    deleted.secret = delete_secret(client, namespace, name).await?;
    Ok(deleted)
}

/// Deletes `obj`, the workload found, if it is still the object found.
async fn delete_root(
    client: &kube::Client,
    namespace: &str,
    ar: &ApiResource,
    obj: &DynamicObject,
) -> Result<Deleted> {
    let target = obj.metadata.name.clone().unwrap_or_default();
    let uid = obj.metadata.uid.clone();
    let mut params = DeleteParams::foreground();
    if let Some(uid) = &uid {
        params = params.preconditions(Preconditions {
            uid: Some(uid.clone()),
            resource_version: None,
        });
    }
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, ar);
    let done = api
        .delete(&target, &params)
        .await
        .map_err(|e| Error::api(format!("deleting {} {namespace}/{target}", ar.kind), e))?;
    Ok(Deleted {
        kind: ar.kind.clone(),
        name: target,
        namespace: namespace.to_string(),
        uid: done.left().and_then(|o| o.metadata.uid).or(uid),
        propagation: "Foreground",
        secret: None,
    })
}

/// Deletes the job's Secret when this provisioner made it for the job
/// `name` (labels `app.kubernetes.io/managed-by` and
/// `app.kubernetes.io/instance`); a Secret of that name that is not ours is
/// left alone.
async fn delete_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<String>> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Secret"), "secrets");
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &ar);
    let secret = crate::jobs::manifests::token_secret_name(name);
    let ours = match api.get(&secret).await {
        Ok(obj) => is_ours(&obj.metadata, name),
        Err(e) if is_status(&e, 404) => return Ok(None),
        Err(e) => {
            return Err(Error::api(
                format!("reading Secret {namespace}/{secret}"),
                e,
            ));
        }
    };
    if !ours {
        return Ok(None);
    }
    match api.delete(&secret, &DeleteParams::default()).await {
        Ok(_) => Ok(Some(secret)),
        Err(e) if is_status(&e, 404) => Ok(None),
        Err(e) => Err(Error::api(
            format!("deleting Secret {namespace}/{secret}"),
            e,
        )),
    }
}
