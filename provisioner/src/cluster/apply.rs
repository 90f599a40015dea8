//! A submission's objects into the cluster.

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams,
};
use serde::Serialize;
use serde_json::{Value, json};

use super::{Error, FIELD_MANAGER, Result, is_status};
use crate::jobs::view::Manifests;

/// One object as the API server stored it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedObject {
    /// `group/version`, or `v1` for the core group.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// The uid the API server gave it.
    pub uid: String,
}

/// What [`apply`] stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Namespace of every object.
    pub namespace: String,
    /// The Job or MPIJob.
    pub workload: AppliedObject,
    /// The objects it owns (the job's Secret first, when it has one), in
    /// the order they were applied.
    pub owned: Vec<AppliedObject>,
    /// What the API server changed of what was sent, for people: a
    /// Workload API topology constraint it dropped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// An object's type and name, read from its manifest.
struct Target {
    resource: ApiResource,
    name: String,
}

impl Target {
    fn of(obj: &Value) -> Result<Target> {
        let field = |f: &str| obj.get(f).and_then(Value::as_str).filter(|s| !s.is_empty());
        let kind = field("kind");
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let object = format!(
            "{} {}",
            kind.unwrap_or("object"),
            name.unwrap_or("(unnamed)")
        );
        let bad = |message: &str| Error::BadObject {
            object: object.clone(),
            message: message.to_string(),
        };
        let api_version = field("apiVersion").ok_or_else(|| bad("has no apiVersion"))?;
        let kind = kind.ok_or_else(|| bad("has no kind"))?;
        let name = name.ok_or_else(|| bad("has no metadata.name"))?;
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        Ok(Target {
            resource: ApiResource::from_gvk(&gvk),
            name: name.to_string(),
        })
    }

    fn describe(&self) -> String {
        format!("{} {}", self.resource.kind, self.name)
    }
}

/// What to install for a custom resource the cluster lacks.
fn install_hint(group: &str) -> String {
    if group == "kubeflow.org" {
        "install the Kubeflow MPI Operator, which serves MPIJob kubeflow.org/v2beta1 (`kubectl apply --server-side -f https://raw.githubusercontent.com/kubeflow/mpi-operator/master/deploy/v2beta1/mpi-operator.yaml`), or submit with `launcher = \"indexed\"`".to_string()
    } else if group == "jobset.x-k8s.io" {
        "install JobSet v0.12 or later, which serves JobSet jobset.x-k8s.io/v1alpha2 (`kubectl apply --server-side -f https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml`), or set [failure] gang = \"none\" for bare rank Pods (nothing then stops the other ranks when one fails)".to_string()
    } else if group == "scheduling.k8s.io" {
        format!(
            "the Workload API is built in, not a CRD: it needs {}; or set [schedule] workload_api = \"off\"",
            crate::jobs::manifests::workload::NEEDS
        )
    } else if group == "resource.k8s.io" {
        "Dynamic Resource Allocation (resource.k8s.io/v1) is served from Kubernetes 1.34; upgrade the cluster, or submit with [placement] mode = \"whole-node\"".to_string()
    } else {
        format!("install the CustomResourceDefinition of the {group} API group")
    }
}

/// Applies `manifests` in `namespace` with server-side apply: the job's
/// Secret when it has one (so that its pods find it when they start), the
/// workload, then the Secret again and each owned object with an
/// `ownerReference` to the workload (`controller: false`,
/// `blockOwnerDeletion: true`), so that deleting the workload deletes
/// them. When the workload is refused, the Secret is deleted again.
///
/// Each object is a `PATCH .../namespaces/NS/RESOURCE/NAME?fieldManager=eflops-provisioner&force=true`
/// with content type `application/apply-patch+yaml`. Every object is
/// checked before the first request: one without apiVersion, kind or name,
/// or one that names another namespace, is an error and nothing is sent;
/// one that names no namespace gets `namespace`. A 404 for a custom
/// resource (MPIJob) means its CRD is not installed: [`Error::CrdMissing`]
/// says what to install.
pub async fn apply(
    client: &kube::Client,
    namespace: &str,
    manifests: &Manifests,
) -> Result<Applied> {
    let (target, workload) = prepare(namespace, &manifests.workload)?;
    let owned = manifests
        .owned
        .iter()
        .map(|o| prepare(namespace, o))
        .collect::<Result<Vec<_>>>()?;

    let secret = manifests
        .secret
        .as_ref()
        .map(|s| prepare(namespace, s))
        .transpose()?;

    let params = PatchParams::apply(FIELD_MANAGER).force();
    // The Secret first, so that no pod of the workload starts without it.
    if let Some((target, obj)) = &secret {
        apply_one(client, namespace, target, obj, &params).await?;
    }
    let workload = match apply_one(client, namespace, &target, &workload, &params).await {
        Ok(w) => w,
        Err(e) => {
            return Err(match &secret {
                Some((target, _)) => remove_orphan(client, namespace, target, e).await,
                None => e,
            });
        }
    };
    let owner = json!({
        "apiVersion": workload.api_version,
        "kind": workload.kind,
        "name": workload.name,
        "uid": workload.uid,
        "controller": false,
        "blockOwnerDeletion": true,
    });
    let mut applied = Vec::with_capacity(owned.len() + 1);
    let mut warnings = Vec::new();
    // The Secret again, now owned by the workload like the others.
    for (target, mut obj) in secret.into_iter().chain(owned) {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            let mut refs: Vec<Value> = meta
                .get("ownerReferences")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            refs.retain(|r| r.get("uid") != owner.get("uid"));
            refs.push(owner.clone());
            meta.insert("ownerReferences".to_string(), Value::Array(refs));
        }
        let (object, stored) = apply_stored(client, namespace, &target, &obj, &params).await?;
        if target.resource.group == WORKLOAD_API_GROUP && dropped_constraint(&obj, &stored) {
            warnings.push(format!(
                "the API server dropped schedulingConstraints from {} {namespace}/{}: its feature gate TopologyAwareWorkloadScheduling is off (Kubernetes v1.36 drops a field of a disabled gate on create), so the gang is scheduled without its topology constraint; enable the gate on kube-apiserver and kube-scheduler, or set [schedule] workload_api = \"off\" in the job file",
                target.resource.kind, target.name
            ));
        }
        applied.push(object);
    }
    Ok(Applied {
        namespace: namespace.to_string(),
        workload,
        owned: applied,
        warnings,
    })
}

/// Deletes the Secret applied before a workload the API server refused
/// (`refused`), so that no job secret outlives its submission; the error to
/// report is the refusal, which names the Secret to delete by hand when
/// the delete fails too.
async fn remove_orphan(
    client: &kube::Client,
    namespace: &str,
    target: &Target,
    refused: Error,
) -> Error {
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, &target.resource);
    match api.delete(&target.name, &DeleteParams::default()).await {
        Ok(_) => refused,
        Err(e) => Error::Orphaned {
            refused: Box::new(refused),
            secret: target.describe(),
            name: target.name.clone(),
            namespace: namespace.to_string(),
            why: e.to_string(),
        },
    }
}

/// The object's target, and the object with its namespace set.
fn prepare(namespace: &str, obj: &Value) -> Result<(Target, Value)> {
    let target = Target::of(obj)?;
    let mut obj = obj.clone();
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return Err(Error::BadObject {
            object: target.describe(),
            message: "has no metadata".to_string(),
        });
    };
    match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) if ns != namespace => Err(Error::BadObject {
            object: target.describe(),
            message: format!("names namespace {ns}, but the objects are applied in {namespace}"),
        }),
        Some(_) => Ok((target, obj)),
        None => {
            meta.insert("namespace".to_string(), Value::from(namespace));
            Ok((target, obj))
        }
    }
}

/// The API group of the Workload API objects (`Workload`, `PodGroup`).
const WORKLOAD_API_GROUP: &str = "scheduling.k8s.io";

/// True when `sent` (a Workload or PodGroup) has a topology constraint
/// (`spec.schedulingConstraints`, or the first pod group template's) and
/// `stored`, the API server's answer, has none: Kubernetes v1.36 drops the
/// field on create when TopologyAwareWorkloadScheduling is off
/// (`pkg/registry/scheduling/workload/strategy_test.go`, "drops field with
/// SchedulingConstraints set and TAS disabled"; the PodGroup strategy's
/// `dropDisabledSchedulingConstraintsFields`) rather than refuse it.
fn dropped_constraint(sent: &Value, stored: &Value) -> bool {
    [
        "/spec/schedulingConstraints",
        "/spec/podGroupTemplates/0/schedulingConstraints",
    ]
    .iter()
    .any(|p| {
        sent.pointer(p).is_some_and(|v| !v.is_null())
            && stored.pointer(p).is_none_or(Value::is_null)
    })
}

async fn apply_one(
    client: &kube::Client,
    namespace: &str,
    target: &Target,
    obj: &Value,
    params: &PatchParams,
) -> Result<AppliedObject> {
    apply_stored(client, namespace, target, obj, params)
        .await
        .map(|(o, _)| o)
}

/// [`apply_one`], with the object as the API server stored it.
async fn apply_stored(
    client: &kube::Client,
    namespace: &str,
    target: &Target,
    obj: &Value,
    params: &PatchParams,
) -> Result<(AppliedObject, Value)> {
    let ar = &target.resource;
    let api = Api::<DynamicObject>::namespaced_with(client.clone(), namespace, ar);
    let stored = api
        .patch(&target.name, params, &Patch::Apply(obj))
        .await
        .map_err(|e| {
            let custom = !matches!(ar.group.as_str(), "" | "batch" | "apps");
            let namespace_missing =
                matches!(&e, kube::Error::Api(r) if r.message.starts_with("namespaces "));
            if ar.group == WORKLOAD_API_GROUP && is_status(&e, 422) {
                // A field of a disabled gate is dropped on create; a 422
                // is a spec the cluster's API server does not accept.
                Error::WorkloadApiInvalid {
                    object: target.describe(),
                    namespace: namespace.to_string(),
                    message: match &e {
                        kube::Error::Api(r) => r.message.clone(),
                        other => other.to_string(),
                    },
                    needs: crate::jobs::manifests::workload::NEEDS,
                }
            } else if custom && is_status(&e, 404) && !namespace_missing {
                Error::CrdMissing {
                    kind: ar.kind.clone(),
                    name: target.name.clone(),
                    resource: format!("{}.{}", ar.plural, ar.group),
                    api_version: ar.api_version.clone(),
                    hint: install_hint(&ar.group),
                }
            } else {
                Error::api(
                    format!("applying {} in namespace {namespace}", target.describe()),
                    e,
                )
            }
        })?;
    let uid = stored
        .metadata
        .uid
        .clone()
        .ok_or_else(|| Error::BadObject {
            object: target.describe(),
            message: "the API server returned it without a uid".to_string(),
        })?;
    Ok((
        AppliedObject {
            api_version: ar.api_version.clone(),
            kind: ar.kind.clone(),
            name: target.name.clone(),
            uid,
        },
        stored.data,
    ))
}
