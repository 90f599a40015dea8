//! Dynamic Resource Allocation (`resource.k8s.io/v1`): which devices of a
//! Node are the GPU and the NIC of each plan sub-node, which of them are
//! free, and the ResourceClaimTemplate that asks for exactly one sub-node.
//!
//! # Profiles
//!
//! DRA drivers publish their devices in ResourceSlices, one pool per Node,
//! each device with attributes. Which attribute names a GPU or a NIC is the
//! driver's choice, so a [`Profile`] says, for the GPU and for the NIC,
//! the DeviceClass to request, the driver whose devices those are, the
//! attribute to select on and which field of the plan's sub-node its value
//! comes from, plus the attribute both devices share when they sit under
//! one PCIe root (`resource.kubernetes.io/pcieRoot`, the standard
//! attribute). Shipped profiles:
//!
//! - `nvidia-dranet`: NVIDIA's GPU DRA driver (driver and DeviceClass
//!   `gpu.nvidia.com`, attribute `index`, the GPU's position that
//!   `nvidia-smi` shows, compared with the plan's `gpu_index`) and dranet
//!   (driver `dra.net`, DeviceClass `dranet`, attribute `rdmaDevName`,
//!   compared with the plan's NIC, the RDMA device such as `mlx5_0`);
//! - `nvidia-sriov`: the same GPU driver and the SR-IOV DRA driver
//!   (driver and DeviceClass `sriovnetwork.k8snetworkplumbingwg.io`,
//!   attribute `PFName`, compared with the plan's `netdev`: the claim takes
//!   one virtual function of the sub-node's physical port).
//!
//! A job file overrides single keys (`[placement.gpu]`, `[placement.nic]`,
//! `pair_attribute`). docs/provisioner.md lists the sources.
//!
//! # Mapping devices to sub-nodes
//!
//! [`map_devices`] finds, on every Node of the plan, the device that
//! answers each sub-node's GPU and NIC selector and checks that the two
//! publish the same pair attribute. A Node whose devices disagree with the
//! plan (a GPU missing, two devices answering one selector, the NIC under
//! another PCIe root than its GPU) is refused with the device named: the
//! rank table would promise a pairing the hardware does not have. A Node
//! that publishes no device of either driver is only unusable (the
//! drivers may not run there yet). A sub-node is busy when a ResourceClaim
//! holds its GPU or NIC, or when a ResourceClaimTemplate of another
//! submission (labelled by this provisioner) names it: a claim is only
//! made and allocated when its pod is scheduled, so a job submitted a
//! moment earlier holds its sub-nodes through its templates.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceClaimTemplate, ResourceSlice};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use planner::checked::CheckedPlan;
use planner::plan::PlanSubNode;

use crate::error::{Error, Result};
use crate::nodes::Node;

/// The profile a job uses when its file names none.
pub(crate) const DEFAULT_PROFILE: &str = "nvidia-dranet";

/// The standard attribute of devices under one PCIe root.
pub(crate) const PCIE_ROOT: &str = "resource.kubernetes.io/pcieRoot";

mod profile;

pub use profile::{Attr, DeviceMatch, PlanField, Profile};
pub(crate) use profile::{RawDevice, qualified_attribute_problem};

/// The annotation of a claim template that names its sub-node.
pub(crate) fn sub_node_annotation() -> String {
    format!("{}sub-node", super::labels::PREFIX)
}

/// The annotation of a whole server's claim template (`[placement] unit =
/// "server"`) that names its sub-nodes, separated by commas.
pub(crate) fn sub_nodes_annotation() -> String {
    format!("{}sub-nodes", super::labels::PREFIX)
}

/// The annotation of a claim template that names its Node.
pub(crate) fn node_annotation() -> String {
    format!("{}node", super::labels::PREFIX)
}

/// One device of a ResourceSlice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliceDevice {
    /// The driver.
    pub driver: String,
    /// The pool.
    pub pool: String,
    /// The Node the slice (or the device) belongs to.
    pub node: String,
    /// Device name, unique in its pool.
    pub name: String,
    /// Attributes by qualified name (`domain/name`).
    pub attributes: BTreeMap<String, Attr>,
}

/// One device a ResourceClaim holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Allocated {
    /// The driver.
    pub driver: String,
    /// The pool.
    pub pool: String,
    /// The device.
    pub device: String,
    /// The claim, `namespace/name`.
    pub claim: String,
}

/// A sub-node that a claim template of an earlier submission names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reserved {
    /// The sub-node id (`node01/sn0`).
    pub sub_node: String,
    /// The template, `namespace/name`.
    pub by: String,
}

/// What the cluster's DRA objects say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DraView {
    /// Every device of a Node-local ResourceSlice.
    pub devices: Vec<SliceDevice>,
    /// Every device an allocated ResourceClaim holds.
    pub allocated: Vec<Allocated>,
    /// Sub-nodes named by this provisioner's ResourceClaimTemplates.
    pub reserved: Vec<Reserved>,
}

impl DraView {
    /// The view from ResourceSlices, ResourceClaims and this provisioner's
    /// ResourceClaimTemplates (labelled `app.kubernetes.io/managed-by`).
    /// Slices for all Nodes or a Node selector are left out: their devices
    /// belong to no one Node.
    pub(crate) fn from_objects(
        slices: &[ResourceSlice],
        claims: &[ResourceClaim],
        templates: &[ResourceClaimTemplate],
    ) -> DraView {
        let mut view = DraView::default();
        for s in slices {
            let spec = &s.spec;
            for d in spec.devices.iter().flatten() {
                let Some(node) = d.node_name.as_ref().or(spec.node_name.as_ref()) else {
                    continue;
                };
                let attributes = d
                    .attributes
                    .iter()
                    .flatten()
                    .filter_map(|(k, v)| {
                        let key = if k.contains('/') {
                            k.clone()
                        } else {
                            format!("{}/{k}", spec.driver)
                        };
                        let value = if let Some(i) = v.int {
                            Attr::Int(i)
                        } else if let Some(b) = v.bool {
                            Attr::Bool(b)
                        } else if let Some(s) = &v.string {
                            Attr::Str(s.clone())
                        } else {
                            Attr::Version(v.version.clone()?)
                        };
                        Some((key, value))
                    })
                    .collect();
                view.devices.push(SliceDevice {
                    driver: spec.driver.clone(),
                    pool: spec.pool.name.clone(),
                    node: node.clone(),
                    name: d.name.clone(),
                    attributes,
                });
            }
        }
        for c in claims {
            let name = format!(
                "{}/{}",
                c.metadata.namespace.as_deref().unwrap_or_default(),
                c.metadata.name.as_deref().unwrap_or_default()
            );
            let results = c
                .status
                .as_ref()
                .and_then(|s| s.allocation.as_ref())
                .and_then(|a| a.devices.as_ref())
                .and_then(|d| d.results.as_ref());
            for r in results.into_iter().flatten() {
                view.allocated.push(Allocated {
                    driver: r.driver.clone(),
                    pool: r.pool.clone(),
                    device: r.device.clone(),
                    claim: name.clone(),
                });
            }
        }
        let (one, many) = (sub_node_annotation(), sub_nodes_annotation());
        for t in templates {
            let managed = t
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("app.kubernetes.io/managed-by"))
                .is_some_and(|v| v == super::labels::MANAGED_BY);
            let Some(annotations) = t.metadata.annotations.as_ref().filter(|_| managed) else {
                continue;
            };
            // A rank's template names one sub-node, a server's all of its.
            let named = annotations
                .get(&one)
                .map(String::as_str)
                .into_iter()
                .chain(
                    annotations
                        .get(&many)
                        .into_iter()
                        .flat_map(|v| v.split(',')),
                )
                .map(str::trim)
                .filter(|sn| !sn.is_empty());
            for sn in named {
                view.reserved.push(Reserved {
                    sub_node: sn.to_string(),
                    by: format!(
                        "{}/{}",
                        t.metadata.namespace.as_deref().unwrap_or_default(),
                        t.metadata.name.as_deref().unwrap_or_default()
                    ),
                });
            }
        }
        view
    }

    /// Reads a described cluster: YAML or JSON documents, each an object
    /// or a `List` of objects (`kubectl get resourceslices,resourceclaims
    /// -A -o yaml`, or a submission's `--dry-run` output). ResourceSlices,
    /// ResourceClaims and this provisioner's ResourceClaimTemplates count;
    /// other kinds are skipped. `file` names the input in errors.
    pub fn from_described(text: &str, file: &str) -> Result<DraView> {
        let bad = |message: String| Error::Described {
            file: file.to_string(),
            message,
        };
        let mut slices = Vec::new();
        let mut claims = Vec::new();
        let mut templates = Vec::new();
        let mut items: Vec<(usize, Value)> = Vec::new();
        for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
            let v = Value::deserialize(doc).map_err(|e| bad(format!("document {}: {e}", i + 1)))?;
            if v.is_null() {
                continue;
            }
            if v.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List"))
            {
                for item in v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    items.push((i + 1, item.clone()));
                }
            } else {
                items.push((i + 1, v));
            }
        }
        for (doc, item) in items {
            let kind = item
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let api = item
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let name = item
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("(unnamed)")
                .to_string();
            let typed = |e: serde_json::Error| {
                bad(format!(
                    "document {doc}: {kind} {name} is not a resource.k8s.io/v1 {kind}: {e}"
                ))
            };
            let dra = api == "resource.k8s.io/v1";
            match kind.as_str() {
                "ResourceSlice" | "ResourceClaim" | "ResourceClaimTemplate" if !dra => {
                    return Err(bad(format!(
                        "document {doc}: {kind} {name} has apiVersion `{api}`; write resource.k8s.io/v1 objects (Kubernetes 1.34 or later)"
                    )));
                }
                "ResourceSlice" => slices.push(serde_json::from_value(item).map_err(typed)?),
                "ResourceClaim" => claims.push(serde_json::from_value(item).map_err(typed)?),
                "ResourceClaimTemplate" => {
                    templates.push(serde_json::from_value(item).map_err(typed)?);
                }
                _ => {}
            }
        }
        Ok(DraView::from_objects(&slices, &claims, &templates))
    }
}

impl DraView {
    /// The devices `--offline` assumes when no cluster is described: on
    /// every Node, the GPU and NIC of each sub-node exactly as the plan
    /// names them, as `profile`'s drivers would publish them (the pair
    /// attribute is the sub-node's PCIe switch), none allocated.
    pub fn from_plan(plan: &CheckedPlan, bound: &[Node], profile: &Profile) -> DraView {
        let mut view = DraView::default();
        for n in bound {
            for sub in &n.sub_nodes {
                let Some(sn) = plan.sub_node_list.iter().find(|s| s.id == sub.id) else {
                    continue;
                };
                let pair = Attr::Str(sn.pcie_switch.as_deref().unwrap_or(&sn.id).to_string());
                for (m, name) in [
                    (&profile.gpu, format!("gpu-{}", sn.index)),
                    (&profile.nic, format!("nic-{}", sn.index)),
                ] {
                    let Some(v) = m.value.value(sn) else { continue };
                    view.devices.push(SliceDevice {
                        driver: m.driver.clone(),
                        pool: n.node.clone(),
                        node: n.node.clone(),
                        name,
                        attributes: BTreeMap::from([
                            (m.qualified(), v),
                            (profile.pair_attribute.clone(), pair.clone()),
                        ]),
                    });
                }
            }
        }
        view
    }

    /// Adds the objects of `other`.
    pub fn extend(&mut self, other: DraView) {
        self.devices.extend(other.devices);
        self.allocated.extend(other.allocated);
        self.reserved.extend(other.reserved);
    }
}

/// One device, as a claim result names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DeviceRef {
    /// The driver.
    pub driver: String,
    /// The pool.
    pub pool: String,
    /// The device.
    pub device: String,
}

impl std::fmt::Display for DeviceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.driver, self.pool, self.device)
    }
}

/// The devices of one plan sub-node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubNodeDevices {
    /// Index into `plan.sub_node_list`.
    pub sub_node: usize,
    /// The Node.
    pub node: String,
    /// Its GPU.
    pub gpu: DeviceRef,
    /// The NIC devices its selector matches (one, or the virtual
    /// functions of one port).
    pub nics: Vec<DeviceRef>,
    /// The value of the pair attribute both share.
    pub pair: String,
    /// Why it is not free, or `None`.
    pub busy: Option<String>,
}

/// Every sub-node's devices, and the Nodes without any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct DeviceMap {
    /// By index into `plan.sub_node_list`.
    pub sub_nodes: BTreeMap<usize, SubNodeDevices>,
    /// Nodes that publish no device of either driver, and why.
    pub unusable: Vec<(String, String)>,
}

/// Maps the devices of `view` to the sub-nodes of `bound` (see the module
/// documentation). [`Error::DraInventory`] names the first Node whose
/// devices disagree with the plan.
pub(crate) fn map_devices(
    plan: &CheckedPlan,
    bound: &[Node],
    view: &DraView,
    profile: &Profile,
) -> Result<DeviceMap> {
    let index_of = crate::nodes::sub_node_indices(plan);
    let allocated: BTreeMap<DeviceRef, &str> = view
        .allocated
        .iter()
        .map(|a| {
            (
                DeviceRef {
                    driver: a.driver.clone(),
                    pool: a.pool.clone(),
                    device: a.device.clone(),
                },
                a.claim.as_str(),
            )
        })
        .collect();
    let mut map = DeviceMap::default();
    for n in bound {
        let on = |driver: &str| -> Vec<&SliceDevice> {
            view.devices
                .iter()
                .filter(|d| d.driver == driver && d.node == n.node)
                .collect()
        };
        let gpus = on(&profile.gpu.driver);
        let nics = on(&profile.nic.driver);
        if gpus.is_empty() && nics.is_empty() {
            map.unusable.push((
                n.node.clone(),
                format!(
                    "publishes no ResourceSlice device of {} or {} (are the DRA drivers running on it?)",
                    profile.gpu.driver, profile.nic.driver
                ),
            ));
            continue;
        }
        let refuse = |device: String, message: String| Error::DraInventory {
            node: n.node.clone(),
            device,
            message,
        };
        for sub in &n.sub_nodes {
            let Some(&i) = index_of.get(sub.id.as_str()) else {
                continue;
            };
            let sn = &plan.sub_node_list[i];
            if sn.gpu.is_none() {
                continue;
            }
            let want = |m: &DeviceMatch| {
                m.value.value(sn).ok_or_else(|| {
                    refuse(
                        format!("sub-node {}", sn.id),
                        format!(
                            "the plan gives it no {} to compare with {} of driver {}; add it to the inventory or choose another `value` in [placement.{}]",
                            m.value.as_str(),
                            m.qualified(),
                            m.driver,
                            if std::ptr::eq(m, &profile.gpu) { "gpu" } else { "nic" }
                        ),
                    )
                })
            };
            let gpu_value = want(&profile.gpu)?;
            let nic_value = want(&profile.nic)?;
            let matching = |devs: &[&SliceDevice], m: &DeviceMatch, v: &Attr| -> Vec<SliceDevice> {
                let key = m.qualified();
                devs.iter()
                    .filter(|d| d.attributes.get(&key) == Some(v))
                    .map(|d| (*d).clone())
                    .collect()
            };
            let published = |devs: &[&SliceDevice], m: &DeviceMatch| {
                let key = m.qualified();
                let mut list: Vec<String> = devs
                    .iter()
                    .map(|d| match d.attributes.get(&key) {
                        Some(v) => format!("{} ({} {v})", d.name, m.attribute),
                        None => format!("{} (no {})", d.name, m.attribute),
                    })
                    .collect();
                list.sort();
                if list.is_empty() {
                    "none".to_string()
                } else {
                    list.join(", ")
                }
            };
            let gpu = match matching(&gpus, &profile.gpu, &gpu_value).as_slice() {
                [one] => one.clone(),
                [] => {
                    return Err(refuse(
                        format!(
                            "GPU {} {} = {gpu_value}",
                            profile.gpu.driver, profile.gpu.attribute
                        ),
                        format!(
                            "the plan puts GPU {} of sub-node {} there, and no device of the Node has {} {gpu_value} (it publishes {}); fix the inventory or the GPU driver",
                            sn.gpu.as_deref().unwrap_or_default(),
                            sn.id,
                            profile.gpu.attribute,
                            published(&gpus, &profile.gpu)
                        ),
                    ));
                }
                many => {
                    return Err(refuse(
                        format!(
                            "GPU {} {} = {gpu_value}",
                            profile.gpu.driver, profile.gpu.attribute
                        ),
                        format!(
                            "{} devices answer the selector of sub-node {}'s GPU ({}); choose an attribute that names one GPU",
                            many.len(),
                            sn.id,
                            many.iter()
                                .map(|d| d.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            };
            let nic_devices = matching(&nics, &profile.nic, &nic_value);
            if nic_devices.is_empty() {
                return Err(refuse(
                    format!(
                        "NIC {} {} = {nic_value}",
                        profile.nic.driver, profile.nic.attribute
                    ),
                    format!(
                        "the plan puts NIC {} of sub-node {} there, and no device of the Node has {} {nic_value} (it publishes {}); fix the inventory or the NIC driver",
                        sn.nic,
                        sn.id,
                        profile.nic.attribute,
                        published(&nics, &profile.nic)
                    ),
                ));
            }
            let pair_of = |d: &SliceDevice| -> Result<String> {
                match d.attributes.get(&profile.pair_attribute) {
                    Some(v) => Ok(v.to_string()),
                    None => Err(refuse(
                        format!("{} {}/{}", d.driver, d.pool, d.name),
                        format!(
                            "the device publishes no {}, so no claim can ask for it together with its pair of sub-node {}; upgrade the driver or set pair_attribute",
                            profile.pair_attribute, sn.id
                        ),
                    )),
                }
            };
            let pair = pair_of(&gpu)?;
            for nic in &nic_devices {
                let p = pair_of(nic)?;
                if p != pair {
                    return Err(refuse(
                        format!("{} {}/{}", nic.driver, nic.pool, nic.name),
                        format!(
                            "NIC {} ({} {nic_value}) sits under {} {p} and GPU {} ({} {gpu_value}) under {pair}, but the plan pairs them as sub-node {}; fix the inventory's GPU-NIC pairing",
                            nic.name,
                            profile.nic.attribute,
                            profile.pair_attribute,
                            gpu.name,
                            profile.gpu.attribute,
                            sn.id
                        ),
                    ));
                }
            }
            let dref = |d: &SliceDevice| DeviceRef {
                driver: d.driver.clone(),
                pool: d.pool.clone(),
                device: d.name.clone(),
            };
            let gpu_ref = dref(&gpu);
            let nic_refs: Vec<DeviceRef> = nic_devices.iter().map(dref).collect();
            let busy = std::iter::once(&gpu_ref)
                .chain(&nic_refs)
                .find_map(|d| {
                    allocated
                        .get(d)
                        .map(|c| format!("{d} is allocated to ResourceClaim {c}"))
                })
                .or_else(|| {
                    view.reserved.iter().find(|r| r.sub_node == sn.id).map(|r| {
                        format!(
                            "named by ResourceClaimTemplate {} of an earlier submission",
                            r.by
                        )
                    })
                });
            map.sub_nodes.insert(
                i,
                SubNodeDevices {
                    sub_node: i,
                    node: n.node.clone(),
                    gpu: gpu_ref,
                    nics: nic_refs,
                    pair,
                    busy,
                },
            );
        }
    }
    // A device claimed for two sub-nodes would be handed out twice.
    let mut seen = BTreeSet::new();
    for d in map.sub_nodes.values() {
        if !seen.insert(&d.gpu) {
            return Err(Error::DraInventory {
                node: d.node.clone(),
                device: d.gpu.to_string(),
                message: "two sub-nodes of the plan select this GPU; fix the inventory".to_string(),
            });
        }
    }
    Ok(map)
}

/// One request of exactly one device of `m`'s class whose attribute is
/// `sn`'s value, named `name`.
fn device_request(name: &str, m: &DeviceMatch, sn: &PlanSubNode) -> Result<Value, String> {
    let v = m.value.value(sn).ok_or_else(|| {
        format!(
            "the plan gives sub-node {} no {} for the {name} selector ({} of driver {})",
            sn.id,
            m.value.as_str(),
            m.qualified(),
            m.driver
        )
    })?;
    Ok(json!({
        "name": name,
        "exactly": {
            "deviceClassName": m.device_class,
            "allocationMode": "ExactCount",
            "count": 1,
            "selectors": [{ "cel": { "expression": m.cel(&v) } }],
        },
    }))
}

/// The claim spec that asks for the GPU and NIC of every sub-node of
/// `pairs`, each pair `(gpu request, nic request, sub-node)`: two requests
/// of one device each per sub-node, selected by CEL, and per sub-node a
/// `matchAttribute` constraint on the pair attribute.
fn pairs_spec(
    profile: &Profile,
    pairs: &[(String, String, &PlanSubNode)],
) -> Result<Value, String> {
    let mut requests = Vec::with_capacity(2 * pairs.len());
    let mut constraints = Vec::with_capacity(pairs.len());
    for (gpu, nic, sn) in pairs {
        requests.push(device_request(gpu, &profile.gpu, sn)?);
        requests.push(device_request(nic, &profile.nic, sn)?);
        constraints.push(json!({
            "requests": [gpu, nic],
            "matchAttribute": profile.pair_attribute,
        }));
    }
    Ok(json!({ "devices": { "requests": requests, "constraints": constraints } }))
}

/// The claim spec that asks for the GPU and NIC of sub-node `sn`: two
/// requests of one device each, selected by CEL, and a `matchAttribute`
/// constraint on the pair attribute.
pub(crate) fn claim_spec(profile: &Profile, sn: &PlanSubNode) -> Result<Value, String> {
    pairs_spec(profile, &[("gpu".to_string(), "nic".to_string(), sn)])
}

/// Most devices one ResourceClaim is allocated: `AllocationResultsMaxSize
/// = 32` (k8s.io/api `resource/v1/types.go`, Kubernetes 1.34; the number
/// of requests and of constraints is bounded by the same 32).
pub(crate) const CLAIM_MAX_DEVICES: usize = 32;

/// The claim spec of a whole server (`[placement] unit = "server"`): the
/// GPU and NIC of each of its sub-nodes `sub_nodes` (in GPU order), each
/// pair selected as [`claim_spec`] selects one (requests `gpu-<i>` and
/// `nic-<i>`, `i` the GPU's position, and one `matchAttribute` constraint
/// per pair), so the pod gets every GPU and NIC of the server, each NIC
/// under its own GPU's PCIe root. One request for all GPUs (`count: 8` or
/// `allocationMode: All`) with one for all NICs could not say which NIC
/// goes with which GPU: a `matchAttribute` constraint over both requests
/// would ask for one PCIe root for all sixteen devices.
pub(crate) fn server_claim_spec(
    profile: &Profile,
    sub_nodes: &[&PlanSubNode],
) -> Result<Value, String> {
    if 2 * sub_nodes.len() > CLAIM_MAX_DEVICES {
        return Err(format!(
            "a server's claim would ask for {} devices ({} GPUs and their NICs), and a ResourceClaim is allocated at most {CLAIM_MAX_DEVICES} (Kubernetes 1.34)",
            2 * sub_nodes.len(),
            sub_nodes.len()
        ));
    }
    let pairs: Vec<(String, String, &PlanSubNode)> = sub_nodes
        .iter()
        .enumerate()
        .map(|(i, sn)| (format!("gpu-{i}"), format!("nic-{i}"), *sn))
        .collect();
    pairs_spec(profile, &pairs)
}

#[cfg(test)]
mod tests;
