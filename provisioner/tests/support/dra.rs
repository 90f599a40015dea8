//! Described DRA clusters for the tests: the ResourceSlices the drivers
//! publish for a plan's servers, written as their sources show them.

use planner::checked::CheckedPlan;
use serde_json::{Value, json};

/// The ResourceSlices NVIDIA's GPU DRA driver and dranet publish for the
/// plan's servers (one slice per driver and Node, as a `kubectl get -o
/// yaml` List): GPUs with `index` and the NICs with `dra.net/rdmaDevName`,
/// each with `resource.kubernetes.io/pcieRoot` from the sub-node's PCIe
/// switch. `edit` changes a device's attributes before they are written.
pub fn resource_slices(plan: &CheckedPlan, edit: &dyn Fn(&str, &str, &mut Value)) -> Value {
    let mut items = Vec::new();
    for server in &plan.servers {
        let mut gpus = Vec::new();
        let mut nics = Vec::new();
        for &i in &server.sub_nodes {
            let sn = &plan.sub_node_list[i];
            let root = format!(
                "pci0000:{:02x}",
                sn.pcie_switch
                    .as_deref()
                    .and_then(|p| p
                        .trim_start_matches(|c: char| !c.is_ascii_digit())
                        .parse::<u32>()
                        .ok())
                    .unwrap_or(sn.index as u32)
                    * 0x40
            );
            let mut gpu = json!({
                "name": format!("gpu-{}", sn.gpu_index.unwrap()),
                "attributes": {
                    "index": { "int": sn.gpu_index.unwrap() },
                    "productName": { "string": "NVIDIA H100 80GB HBM3" },
                    "resource.kubernetes.io/pcieRoot": { "string": root },
                },
            });
            let name = format!("gpu-{}", sn.gpu_index.unwrap());
            edit(&server.name, &name, &mut gpu);
            let mut nic = json!({
                "name": format!("rdma-{}", sn.nic.replace('_', "-")),
                "attributes": {
                    "dra.net/rdmaDevName": { "string": sn.nic },
                    "dra.net/rdma": { "bool": true },
                    "resource.kubernetes.io/pcieRoot": { "string": root },
                },
            });
            edit(&server.name, &sn.nic, &mut nic);
            if !gpu.is_null() {
                gpus.push(gpu);
            }
            if !nic.is_null() {
                nics.push(nic);
            }
        }
        for (driver, devices) in [("gpu.nvidia.com", gpus), ("dra.net", nics)] {
            items.push(json!({
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": { "name": format!("{}-{driver}", server.name) },
                "spec": {
                    "driver": driver,
                    "nodeName": server.name,
                    "pool": { "name": server.name, "generation": 1, "resourceSliceCount": 1 },
                    "devices": devices,
                },
            }));
        }
    }
    json!({ "apiVersion": "v1", "kind": "List", "items": items })
}
