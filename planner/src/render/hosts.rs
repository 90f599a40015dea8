//! Host side: per server, a shell file (`<server>.env`) and a JSON file
//! (`<server>.json`) with what each sub-node needs.
//!
//! Per sub-node ("slot", its index in the server): the NIC's address and
//! gateway, the class it marks (the one of the part of the switch it is
//! cabled to, EFLOPS Sec. VI), its DSCP and the traffic class byte the NIC
//! puts on RoCE packets (DSCP << 2), the PFC priorities to enable on the
//! NIC, and the collective runtime's environment:
//!
//! - `CUDA_VISIBLE_DEVICES`: the GPU's index among the server's GPUs in
//!   inventory order. CUDA numbers GPUs fastest first unless
//!   `CUDA_DEVICE_ORDER=PCI_BUS_ID`, so check the order against
//!   `nvidia-smi` before relying on it.
//! - `NCCL_IB_HCA`: `=<nic>`, the NIC's RDMA device, matched exactly (a
//!   bare `mlx5_1` would also select `mlx5_10` to `mlx5_19`).
//! - `NCCL_IB_TC`: DSCP << 2.
//! - `NCCL_IB_GID_INDEX`: the intent's `gid_index` (default 3, the IPv4
//!   RoCEv2 GID of a ConnectX port).
//! - `NCCL_SOCKET_IFNAME`: the NIC's `netdev`, when the inventory gives it.
//!
//! The shell file sets `SLOT<i>_*` variables and a function,
//! `planner_slot <i>`, that exports slot i's runtime environment; a
//! launcher sources the file and calls it with the rank's local index.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::network::{Model, ip};
use super::{file_stem, list};
use crate::error::{Error, Result};
use crate::names::{comment, shell_quote};
use crate::checked::CheckedPlan;

/// A server's host file, as JSON.
#[derive(Debug, Serialize)]
struct HostFile<'a> {
    server: &'a str,
    plan: &'a str,
    design: String,
    sub_nodes: Vec<Slot>,
}

/// One sub-node of a server.
#[derive(Debug, Serialize)]
struct Slot {
    slot: usize,
    sub_node: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<String>,
    nic: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    netdev: Option<String>,
    ip: String,
    gateway: String,
    switch: String,
    switch_port: String,
    part_or_tier: String,
    class: String,
    dscp: u8,
    traffic_class: u8,
    priority: u8,
    lossless: bool,
    pfc_priorities: Vec<u8>,
    cnp_dscp: u8,
    cnp_priority: u8,
    env: BTreeMap<&'static str, String>,
}

/// Renders every server's files, server by server: `<server>.env` and
/// `<server>.json`.
pub fn render_hosts(plan: &CheckedPlan) -> Result<Vec<(String, String)>> {
    let m = Model::build(plan, plan.source())?;
    let mut out = Vec::with_capacity(plan.servers.len() * 2);
    for server in &plan.servers {
        let mut slots = Vec::with_capacity(server.sub_nodes.len());
        for &i in &server.sub_nodes {
            let sn = plan.sub_node_list.get(i).ok_or_else(|| {
                Error::Internal(format!("server {} lists a missing sub-node", server.name))
            })?;
            let h = &m.hosts[i];
            let class = &m.qos.classes[h.class];
            let mut env = BTreeMap::new();
            if sn.gpu.is_some() {
                let index = sn.gpu_index.ok_or_else(|| Error::Invalid {
                    file: plan.source().to_string(),
                    what: "plan",
                    problems: vec![crate::Problem::at(
                        None,
                        format!("sub-node {}", sn.id),
                        "the plan does not give its GPU's index",
                        "design the plan again with this planner",
                    )],
                })?;
                env.insert("CUDA_VISIBLE_DEVICES", index.to_string());
            }
            env.insert("NCCL_IB_HCA", format!("={}", sn.nic));
            env.insert("NCCL_IB_TC", (u32::from(class.dscp) << 2).to_string());
            env.insert("NCCL_IB_GID_INDEX", m.qos.gid_index.to_string());
            if let Some(nd) = &sn.netdev {
                env.insert("NCCL_SOCKET_IFNAME", format!("={nd}"));
            }
            let sw = &plan.switch_list[h.domain];
            slots.push(Slot {
                slot: sn.index,
                sub_node: sn.id.clone(),
                gpu: sn.gpu.clone(),
                nic: sn.nic.clone(),
                netdev: sn.netdev.clone(),
                ip: format!("{}/{}", ip(h.addr), h.prefix.len),
                gateway: ip(h.gateway),
                switch: sw.name.clone(),
                switch_port: sw.port_name(sn.port),
                part_or_tier: sn.part_or_tier.as_str().to_string(),
                class: class.name.clone(),
                dscp: class.dscp,
                traffic_class: class.dscp << 2,
                priority: class.priority,
                lossless: class.lossless,
                pfc_priorities: m.lossless.clone(),
                cnp_dscp: m.qos.cnp.dscp,
                cnp_priority: m.qos.cnp.priority,
                env,
            });
        }
        let file = HostFile {
            server: &server.name,
            plan: &plan.name,
            design: plan.describe(),
            sub_nodes: slots,
        };
        let stem = file_stem(&server.name);
        out.push((format!("{stem}.env"), env_file(&file)));
        let mut json = serde_json::to_string_pretty(&file)
            .map_err(|e| Error::Internal(format!("host file of {}: {e}", server.name)))?;
        json.push('\n');
        out.push((format!("{stem}.json"), json));
    }
    Ok(out)
}

fn env_file(f: &HostFile<'_>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {}: sub-node environment from plan {} ({}), rendered by planner.",
        comment(f.server),
        comment(f.plan),
        comment(&f.design)
    );
    s.push_str(
        "# Source this file, then run `planner_slot <slot>` in each rank's shell with the\n\
         # rank's local index before it starts: it exports that slot's NCCL variables.\n\
         # CUDA_VISIBLE_DEVICES is the GPU's index in the server's inventory order; check\n\
         # it against nvidia-smi (CUDA_DEVICE_ORDER=PCI_BUS_ID numbers GPUs by bus).\n",
    );
    let _ = writeln!(s, "PLANNER_SLOTS={}", f.sub_nodes.len());
    for slot in &f.sub_nodes {
        let i = slot.slot;
        let _ = writeln!(
            s,
            "# slot {i}: {} on {} {} ({}), class {}",
            comment(&slot.sub_node),
            comment(&slot.switch),
            comment(&slot.switch_port),
            slot.part_or_tier,
            comment(&slot.class)
        );
        let _ = writeln!(s, "SLOT{i}_IP={}", shell_quote(&slot.ip));
        let _ = writeln!(s, "SLOT{i}_GATEWAY={}", shell_quote(&slot.gateway));
        let _ = writeln!(s, "SLOT{i}_DSCP={}", slot.dscp);
        let _ = writeln!(s, "SLOT{i}_PRIORITY={}", slot.priority);
        let _ = writeln!(s, "SLOT{i}_PFC_PRIORITIES={}", list(&slot.pfc_priorities));
        for (k, v) in &slot.env {
            let _ = writeln!(s, "SLOT{i}_{k}={}", shell_quote(v));
        }
    }
    s.push_str("planner_slot() {\n    case \"$1\" in\n");
    for slot in &f.sub_nodes {
        let i = slot.slot;
        let vars: Vec<String> = slot
            .env
            .keys()
            .map(|k| format!("{k}=\"$SLOT{i}_{k}\""))
            .collect();
        let _ = writeln!(s, "    {i}) export {} ;;", vars.join(" "));
    }
    let slots: Vec<String> = f.sub_nodes.iter().map(|x| x.slot.to_string()).collect();
    let _ = writeln!(
        s,
        "    *) echo {} \"$1\" {} >&2; return 1 ;;",
        shell_quote(&format!("{} has no slot", comment(f.server))),
        shell_quote(&format!("(slots: {})", slots.join(" ")))
    );
    s.push_str("    esac\n}\n");
    s
}
