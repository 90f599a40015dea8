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
//!   inventory order; for a NIC shared by several GPUs, all of them
//!   (`0,1`), one rank each (see below). CUDA numbers GPUs fastest first
//!   unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`, so check the order against
//!   `nvidia-smi` before relying on it.
//! - `NCCL_IB_HCA`: `=<nic>`, the NIC's RDMA device, matched exactly (a
//!   bare `mlx5_1` would also select `mlx5_10` to `mlx5_19`).
//! - `NCCL_IB_TC`: DSCP << 2.
//! - `NCCL_IB_FIFO_TC`: the same value, so that the receiver's CTS writes
//!   and ACKs carry its own class rather than the sender's (NCCL 2.22.3 and
//!   later; `check-qos` says what older releases do, `marking.rs`).
//! - `UCX_IB_TRAFFIC_CLASS`: the same value, for Open MPI over UCX, which
//!   marks each queue pair with the class of its own rank (UCX 1.22.0).
//! - `NCCL_CROSS_NIC=0` on rail-optimized and HPN plans: NCCL keeps each
//!   channel on one NIC index (one rail) across servers instead of
//!   crossing rails through the spines (NCCL's default, 2, allows it).
//! - `NCCL_IB_GID_INDEX`: the intent's `gid_index` (default 3, the IPv4
//!   RoCEv2 GID of a ConnectX port).
//! - `NCCL_SOCKET_IFNAME`: the NIC's `netdev`, when the inventory gives it.
//! - `NCCL_TOPO_FILE`: [`super::nccl_topo::HOST_PATH`], where the server's
//!   `<server>.nccl-topo.xml` is to be installed, for servers whose PCIe
//!   tree the plan carries (the inventory's `pci_bus`); [`render_hosts`]
//!   writes that file beside the host files ([`super::nccl_topo`]).
//!
//! A dual-port NIC (HPN's two planes) has a second address: `port1` in the
//! JSON, `SLOT<i>_IP1` and `SLOT<i>_GATEWAY1` in the shell file (port 1,
//! cabled to the plane-B ToR, in a subnet of its own). `NCCL_IB_HCA` names
//! the device without a port number, so NCCL uses both of its ports (both
//! planes); `=<nic>:1,<nic>:2` would say the same, with a comma that the
//! provisioner's `rank-env.csv` cannot carry.
//!
//! The shell file sets `SLOT<i>_*` variables and a function,
//! `planner_slot <i>`, that exports slot i's runtime environment; a
//! launcher sources the file and calls it with the rank's local index.
//!
//! Several NICs of a server share a subnet and a gateway (the NICs cabled
//! to one switch). Without more, Linux answers ARP for any of its
//! addresses on any NIC and sends by the first route to the subnet, so a
//! rank's traffic can leave by another sub-node's NIC (issue 32). The
//! shell file's `planner_routing`, run once per boot as root, gives every
//! NIC port a routing table of its own (table 100 + slot, 200 + slot for
//! port 1: the subnet `src` the port's address and the default route via
//! its gateway, both on the port's device) with an `ip rule` that sends
//! traffic from the port's address there (priority 1000 + slot, 1100 +
//! slot), and sets on each device the sysctls that Linux's
//! `Documentation/networking/ip-sysctl.rst` documents for this:
//! `arp_ignore=1` (answer ARP only for an address of the receiving
//! interface), `arp_announce=2` (use the interface's own address as the
//! ARP source) and `rp_filter=2` (loose reverse-path filtering: strict mode
//! drops replies that arrive on one NIC for an address routed by another);
//! the kernel uses the larger of `all` and the device's value for each, so
//! setting the device is enough. The device is the inventory's `netdev`,
//! or else the one that carries the address (`ip -o -4 addr`).
//!
//! A NIC shared by several GPUs carries one rank per GPU (as `planner
//! ranks` counts them): the slot lists its GPUs (`gpu_indices`), and
//! `planner_slot <i> <k>` exports the slot's environment with
//! `CUDA_VISIBLE_DEVICES` narrowed to its k-th GPU (from 0), one visible
//! GPU per process as the provisioner's launchers give it (the process
//! then uses device 0); every rank of the slot shares `NCCL_IB_HCA`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{list, nccl_topo};
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::names::file_stem;
use crate::names::{comment, shell_quote};
use crate::network::{Model, ip};

/// A server's host file: what `planner render --hosts` writes to
/// `<server>.json` (and, as shell variables, to `<server>.env`). The one
/// typed form of a host's environment: the planner serializes it, other
/// crates (the provisioner) read it from [`host_files`] or deserialize a
/// written file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFile {
    /// The server's name.
    pub server: String,
    /// The plan's name.
    pub plan: String,
    /// The plan's design in one line.
    pub design: String,
    /// The server's sub-nodes, in slot order.
    pub sub_nodes: Vec<HostSlot>,
}

/// One sub-node of a server ("slot", its index in the server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSlot {
    /// The sub-node's index in its server.
    pub slot: usize,
    /// The sub-node's id (`node01/sn0`).
    pub sub_node: String,
    /// Its GPU, when it has one (the first of a shared NIC's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Every GPU whose traffic leaves through this NIC when it carries
    /// several, by index among the server's GPUs: one rank each. Empty
    /// for a NIC with one GPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_indices: Vec<usize>,
    /// Its NIC's RDMA device.
    pub nic: String,
    /// Its NIC's network device, when the inventory gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
    /// The NIC's address with its prefix length (`10.0.0.2/31`).
    pub ip: String,
    /// The NIC's gateway.
    pub gateway: String,
    /// The switch it is cabled to.
    pub switch: String,
    /// The switch port it is cabled to.
    pub switch_port: String,
    /// The part or tier of that switch.
    pub part_or_tier: String,
    /// The QoS class it marks.
    pub class: String,
    /// The class's DSCP.
    pub dscp: u8,
    /// The traffic class byte the NIC puts on RoCE packets (DSCP << 2).
    pub traffic_class: u8,
    /// The class's priority.
    pub priority: u8,
    /// Whether the class is lossless.
    pub lossless: bool,
    /// The PFC priorities to enable on the NIC.
    pub pfc_priorities: Vec<u8>,
    /// The DSCP of congestion notification packets.
    pub cnp_dscp: u8,
    /// The priority of congestion notification packets.
    pub cnp_priority: u8,
    /// The collective runtime's environment (`NCCL_IB_HCA`, ...), by
    /// variable name.
    pub env: BTreeMap<String, String>,
    /// The second port of a dual-port NIC (HPN's plane B); absent for a
    /// single-port NIC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port1: Option<HostPort>,
}

/// The second port of a dual-port NIC: its own address, gateway and switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPort {
    /// The port's address with its prefix length.
    pub ip: String,
    /// The port's gateway (on the plane-B ToR).
    pub gateway: String,
    /// The switch it is cabled to.
    pub switch: String,
    /// The switch port it is cabled to.
    pub switch_port: String,
}

/// Renders every server's files, server by server: `<server>.env` and
/// `<server>.json`, and `<server>.nccl-topo.xml` where the plan carries the
/// server's PCIe tree.
pub fn render_hosts(plan: &CheckedPlan) -> Result<Vec<(String, String)>> {
    let files = host_files(plan)?;
    let mut out = Vec::with_capacity(files.len() * 2);
    for (file, server) in files.iter().zip(&plan.servers) {
        let stem = file_stem(&file.server);
        out.push((format!("{stem}.env"), env_file(file)));
        let mut json = serde_json::to_string_pretty(file)
            .map_err(|e| Error::serialize(&format!("the host file of {}", file.server), e))?;
        json.push('\n');
        out.push((format!("{stem}.json"), json));
        if let Some(xml) = nccl_topo::nccl_topology(server, plan.source())? {
            out.push((nccl_topo::file_name(&server.name), xml));
        }
    }
    Ok(out)
}

/// Every server's host file, server by server.
pub fn host_files(plan: &CheckedPlan) -> Result<Vec<HostFile>> {
    let m = Model::build(plan, plan.source())?;
    let rails = matches!(
        plan.topology,
        crate::plan::Topology::RailOptimized | crate::plan::Topology::Hpn
    );
    let mut out = Vec::with_capacity(plan.servers.len());
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
                let visible = if sn.gpu_indices.len() > 1 {
                    let list: Vec<String> =
                        sn.gpu_indices.iter().map(ToString::to_string).collect();
                    list.join(",")
                } else {
                    index.to_string()
                };
                env.insert("CUDA_VISIBLE_DEVICES".to_string(), visible);
            }
            // The device without a port number: NCCL uses all its ports
            // (both planes of a dual-port NIC).
            env.insert("NCCL_IB_HCA".to_string(), format!("={}", sn.nic));
            let tc = (u32::from(class.dscp) << 2).to_string();
            env.insert("NCCL_IB_TC".to_string(), tc.clone());
            // The receiver's CTS writes and ACKs in its own class (NCCL
            // 2.22.3 and later; older releases ignore it and answer in the
            // sender's class, which `check-qos --nccl-version` models).
            env.insert("NCCL_IB_FIFO_TC".to_string(), tc.clone());
            // Open MPI over UCX marks every queue pair of the rank with its
            // own interface's class, ACKs and read responses included
            // (UCX 1.22.0; `check-qos` models it, docs/provisioner.md).
            env.insert("UCX_IB_TRAFFIC_CLASS".to_string(), tc);
            if rails {
                // Rail designs: a channel keeps one rail across servers
                // (NCCL src/graph/search.cc, `NCCL_CROSS_NIC` 0).
                env.insert("NCCL_CROSS_NIC".to_string(), "0".to_string());
            }
            env.insert("NCCL_IB_GID_INDEX".to_string(), m.qos.gid_index.to_string());
            if let Some(nd) = &sn.netdev {
                env.insert("NCCL_SOCKET_IFNAME".to_string(), format!("={nd}"));
            }
            if !server.pci.is_empty() {
                env.insert(
                    "NCCL_TOPO_FILE".to_string(),
                    nccl_topo::HOST_PATH.to_string(),
                );
            }
            let sw = &plan.switch_list[h.domain];
            let port1 = match (&sn.port1, m.hosts1.get(i)) {
                (None, _) => None,
                (Some(a), Some(h1)) => {
                    let sw1 = &plan.switch_list[h1.domain];
                    Some(HostPort {
                        ip: format!("{}/{}", ip(h1.addr), h1.prefix.len),
                        gateway: ip(h1.gateway),
                        switch: sw1.name.to_string(),
                        switch_port: sw1.port_name(a.port),
                    })
                }
                (Some(_), None) => {
                    return Err(Error::Internal(format!(
                        "sub-node {} has a second NIC port without an address",
                        sn.id
                    )));
                }
            };
            slots.push(HostSlot {
                slot: sn.index,
                sub_node: sn.id.to_string(),
                gpu: sn.gpu.as_deref().map(str::to_string),
                gpu_indices: if sn.gpu_indices.len() > 1 {
                    sn.gpu_indices.clone()
                } else {
                    Vec::new()
                },
                nic: sn.nic.to_string(),
                netdev: sn.netdev.as_deref().map(str::to_string),
                ip: format!("{}/{}", ip(h.addr), h.prefix.len),
                gateway: ip(h.gateway),
                switch: sw.name.to_string(),
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
                port1,
            });
        }
        out.push(HostFile {
            server: server.name.to_string(),
            plan: plan.name.clone(),
            design: plan.describe(),
            sub_nodes: slots,
        });
    }
    Ok(out)
}

fn env_file(f: &HostFile) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {}: sub-node environment from plan {} ({}), rendered by planner.",
        comment(&f.server),
        comment(&f.plan),
        comment(&f.design)
    );
    s.push_str(
        "# Source this file, then run `planner_slot <slot>` in each rank's shell with the\n\
         # rank's local index before it starts: it exports that slot's NCCL variables.\n\
         # CUDA_VISIBLE_DEVICES is the GPU's index in the server's inventory order; check\n\
         # it against nvidia-smi (CUDA_DEVICE_ORDER=PCI_BUS_ID numbers GPUs by bus).\n",
    );
    if f.sub_nodes.iter().any(|x| x.gpu_indices.len() > 1) {
        s.push_str(
            "# A NIC shared by several GPUs carries one rank per GPU: `planner_slot <slot> <k>`\n\
             # exports the slot's variables with CUDA_VISIBLE_DEVICES set to its k-th GPU\n\
             # (from 0; one visible GPU per process, which then uses device 0).\n",
        );
    }
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
        let _ = writeln!(s, "SLOT{i}_SUBNET={}", shell_quote(&subnet(&slot.ip)));
        if let Some(p) = &slot.port1 {
            let _ = writeln!(
                s,
                "# slot {i} port 1: on {} {}",
                comment(&p.switch),
                comment(&p.switch_port)
            );
            let _ = writeln!(s, "SLOT{i}_IP1={}", shell_quote(&p.ip));
            let _ = writeln!(s, "SLOT{i}_GATEWAY1={}", shell_quote(&p.gateway));
            let _ = writeln!(s, "SLOT{i}_SUBNET1={}", shell_quote(&subnet(&p.ip)));
        }
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
        if slot.gpu_indices.len() > 1 {
            // One rank per GPU of a shared NIC: `planner_slot <i> <k>`
            // narrows CUDA_VISIBLE_DEVICES to the k-th.
            let _ = writeln!(s, "    {i}) export {}", vars.join(" "));
            s.push_str("       case \"${2-}\" in\n           \"\") ;;\n");
            for (k, g) in slot.gpu_indices.iter().enumerate() {
                let _ = writeln!(s, "           {k}) CUDA_VISIBLE_DEVICES={g} ;;");
            }
            let _ = writeln!(
                s,
                "           *) echo {} \"$2\" {} >&2; return 1 ;;",
                shell_quote(&format!("{} slot {i} has no GPU", comment(&f.server))),
                shell_quote(&format!(
                    "(GPUs behind its NIC: 0 to {})",
                    slot.gpu_indices.len() - 1
                ))
            );
            s.push_str("       esac ;;\n");
        } else {
            let _ = writeln!(s, "    {i}) export {} ;;", vars.join(" "));
        }
    }
    let slots: Vec<String> = f.sub_nodes.iter().map(|x| x.slot.to_string()).collect();
    let _ = writeln!(
        s,
        "    *) echo {} \"$1\" {} >&2; return 1 ;;",
        shell_quote(&format!("{} has no slot", comment(&f.server))),
        shell_quote(&format!("(slots: {})", slots.join(" ")))
    );
    s.push_str("    esac\n}\n");
    routing(&mut s, f);
    s
}

/// The subnet of `addr/len` (`10.100.1.1/24` -> `10.100.1.0/24`); the text
/// itself when it is not one.
fn subnet(cidr: &str) -> String {
    let Some((addr, len)) = cidr.split_once('/') else {
        return cidr.to_string();
    };
    match (addr.parse::<std::net::Ipv4Addr>(), len.parse::<u32>()) {
        (Ok(a), Ok(l)) if l <= 32 => {
            let mask = if l == 0 { 0 } else { u32::MAX << (32 - l) };
            format!("{}/{l}", std::net::Ipv4Addr::from(u32::from(a) & mask))
        }
        _ => cidr.to_string(),
    }
}

/// `planner_routing`: per-port routing tables, rules and ARP sysctls (see
/// the module documentation).
fn routing(s: &mut String, f: &HostFile) {
    s.push_str(
        "# Run `planner_routing` once as root after the NICs have their addresses: every NIC\n\
         # port gets its own routing table and rule, and ARP answers and sends by the NIC\n\
         # that owns the address (arp_ignore=1, arp_announce=2, rp_filter=2 per device).\n\
         planner_route() {\n    \
             # $1 what, $2 netdev or empty, $3 address/len, $4 subnet, $5 gateway, $6 table, $7 rule priority\n    \
             dev=$2\n    \
             [ -n \"$dev\" ] || dev=$(ip -o -4 addr show | awk -v a=\"$3\" '$4 == a { print $2; exit }')\n    \
             if [ -z \"$dev\" ]; then echo \"$1: no interface has $3; give the NIC its address first\" >&2; return 1; fi\n    \
             for k in arp_ignore=1 arp_announce=2 rp_filter=2; do\n        \
                 sysctl -qw \"net.ipv4.conf.$dev.$k\" || return 1\n    \
             done\n    \
             ip route replace \"$4\" dev \"$dev\" src \"${3%/*}\" table \"$6\" || return 1\n    \
             ip route replace default via \"$5\" dev \"$dev\" table \"$6\" || return 1\n    \
             ip rule del priority \"$7\" 2>/dev/null\n    \
             ip rule add from \"${3%/*}\" table \"$6\" priority \"$7\"\n\
         }\n\
         planner_routing() {\n",
    );
    for slot in &f.sub_nodes {
        let i = slot.slot;
        let dev = slot.netdev.as_deref().unwrap_or("");
        let what = shell_quote(&format!("{} slot {i}", comment(&f.server)));
        let _ = writeln!(
            s,
            "    planner_route {what} {} \"$SLOT{i}_IP\" \"$SLOT{i}_SUBNET\" \"$SLOT{i}_GATEWAY\" {} {} || return 1",
            shell_quote(dev),
            100 + i,
            1000 + i
        );
        if slot.port1.is_some() {
            let what = shell_quote(&format!("{} slot {i} port 1", comment(&f.server)));
            // Port 1 of a dual-port NIC has no netdev of its own in the
            // inventory: found by its address.
            let _ = writeln!(
                s,
                "    planner_route {what} '' \"$SLOT{i}_IP1\" \"$SLOT{i}_SUBNET1\" \"$SLOT{i}_GATEWAY1\" {} {} || return 1",
                200 + i,
                1100 + i
            );
        }
    }
    s.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::design;

    fn eflops() -> CheckedPlan {
        crate::design::bundled("eflops-4x16", None)
    }

    /// Every written `<server>.json` reads back as the typed host file it
    /// was written from, so a reader of the files and a caller of
    /// [`host_files`] see one environment.
    #[test]
    fn written_host_files_read_back_as_host_files() {
        let plan = eflops();
        let typed = host_files(&plan).unwrap();
        let written: Vec<HostFile> = render_hosts(&plan)
            .unwrap()
            .into_iter()
            .filter(|(name, _)| name.ends_with(".json"))
            .map(|(_, text)| serde_json::from_str(&text).unwrap())
            .collect();
        assert_eq!(written, typed);
        assert_eq!(typed.len(), plan.servers.len());
        let slot = &typed[0].sub_nodes[0];
        assert_eq!(slot.env["NCCL_IB_HCA"], format!("={}", slot.nic));
        assert_eq!(
            slot.env["NCCL_IB_TC"],
            (u32::from(slot.dscp) << 2).to_string()
        );
        assert!(slot.gpu_indices.is_empty());
    }

    /// A NIC shared by two GPUs (DGX-1-like servers): the slot lists both,
    /// `CUDA_VISIBLE_DEVICES` names both, and `planner_slot <i> <k>` run
    /// by a shell narrows it to the k-th and refuses a GPU the NIC does
    /// not have.
    #[test]
    fn a_shared_nic_has_one_rank_per_gpu() {
        let plan = crate::design::bundled("dgx1-v100", None);
        let files = host_files(&plan).unwrap();
        let slot = &files[0].sub_nodes[1];
        assert_eq!(slot.gpu_indices, vec![2, 3]);
        assert_eq!(slot.env["CUDA_VISIBLE_DEVICES"], "2,3");
        let env = env_file(&files[0]);
        let run = |args: &str| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "{env}\nplanner_slot {args} && echo \"$CUDA_VISIBLE_DEVICES $NCCL_IB_HCA\""
                ))
                .output()
                .unwrap()
        };
        let out = run("1 1");
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "3 =mlx5_1\n");
        let out = run("1");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2,3 =mlx5_1\n");
        let out = run("1 2");
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("slot 1 has no GPU 2 (GPUs behind its NIC: 0 to 1)"),
            "{out:?}"
        );
    }

    /// A dual-port NIC (HPN) gets its second port's address on the
    /// plane-B ToR, in another subnet than port 0's, in the JSON and the
    /// shell file; NCCL is given the device (all its ports).
    #[test]
    fn a_dual_port_nic_gets_both_ports() {
        let (inv, opts) = crate::design::shorthand::hpn(
            "sub-nodes=16,rails=2,ports=16",
            &crate::design::shorthand::Shorthand::default(),
        )
        .unwrap();
        let plan = design(&inv, &opts).unwrap();
        let files = host_files(&plan).unwrap();
        let index = plan.switch_index();
        for f in &files {
            for slot in &f.sub_nodes {
                let p1 = slot.port1.as_ref().expect("a second port");
                let (a, b) = (
                    &plan.switch_list[index[slot.switch.as_str()]],
                    &plan.switch_list[index[p1.switch.as_str()]],
                );
                assert_eq!((a.plane, b.plane), (Some(0), Some(1)), "{}", slot.sub_node);
                assert_ne!(slot.ip, p1.ip);
                assert_ne!(slot.gateway, p1.gateway);
                assert_eq!(slot.env["NCCL_IB_HCA"], format!("={}", slot.nic));
            }
        }
        let rendered = render_hosts(&plan).unwrap();
        let env = &rendered
            .iter()
            .find(|(n, _)| n.ends_with(".env"))
            .unwrap()
            .1;
        let p1 = files[0].sub_nodes[0].port1.as_ref().unwrap();
        assert!(env.contains(&format!("SLOT0_IP1={}", p1.ip)), "{env}");
        assert!(
            env.contains(&format!("SLOT0_GATEWAY1={}", p1.gateway)),
            "{env}"
        );
        // The JSON reads back to the same file.
        let json = &rendered
            .iter()
            .find(|(n, _)| n.ends_with(".json"))
            .unwrap()
            .1;
        let back: HostFile = serde_json::from_str(json).unwrap();
        assert_eq!(back, files[0]);
        // A single-port plan has no second port.
        let one = eflops();
        assert!(host_files(&one).unwrap()[0].sub_nodes[0].port1.is_none());
        assert!(!render_hosts(&one).unwrap()[0].1.contains("_IP1="));
    }

    /// Issue 32, item 4: two NICs of node01 in one /24 with one gateway,
    /// in a network namespace of the test's own (two veth pairs): before
    /// `planner_routing` traffic from the second NIC's address leaves by
    /// the first NIC; after it, by its own, and the ARP sysctls are set on
    /// each device.
    #[test]
    fn planner_routing_sends_by_the_nic_that_owns_the_address() {
        let plan = eflops();
        let mut f = host_files(&plan).unwrap().remove(0);
        f.sub_nodes.truncate(2);
        let (a0, a1) = (f.sub_nodes[0].ip.clone(), f.sub_nodes[1].ip.clone());
        assert_eq!(subnet(&a0), subnet(&a1), "the two NICs share a subnet");
        let env = env_file(&f);
        assert!(env.contains("SLOT1_SUBNET=10.100.1.0/24"), "{env}");
        let ns = format!("planner-routing-{}", std::process::id());
        let sh = |script: &str| {
            std::process::Command::new("ip")
                .args(["netns", "exec", &ns, "sh", "-c", script])
                .output()
                .unwrap()
        };
        let add = std::process::Command::new("ip")
            .args(["netns", "add", &ns])
            .status()
            .unwrap();
        assert!(add.success(), "ip netns add {ns} (the test needs root)");
        let setup = format!(
            "ip link set lo up && ip link add d0 type veth peer name p0 && ip link add d1 type veth peer name p1 && \
             ip addr add {a0} dev d0 && ip addr add {a1} dev d1 && for l in d0 d1 p0 p1; do ip link set $l up || exit 1; done"
        );
        let out = sh(&setup);
        let route_dev = |out: &std::process::Output| {
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            text.split_whitespace()
                .skip_while(|w| *w != "dev")
                .nth(1)
                .map(str::to_string)
                .unwrap_or_default()
        };
        let from1 = format!(
            "ip -4 route get 10.200.0.9 from {}",
            a1.split('/').next().unwrap()
        );
        let before = sh(&format!(
            "ip route add default via 10.100.1.254 dev d0; {from1}"
        ));
        let after = sh(&format!(
            "{env}\nplanner_routing && {from1} && ip rule && ip route show table 101 && \
             sysctl -n net.ipv4.conf.d1.arp_ignore net.ipv4.conf.d1.arp_announce net.ipv4.conf.d1.rp_filter"
        ));
        let again = sh(&format!(
            "{env}\nplanner_routing && ip rule | grep -c 'lookup 10[01]'"
        ));
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &ns])
            .status();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(route_dev(&before), "d0", "{before:?}");
        assert!(after.status.success(), "{after:?}");
        assert_eq!(route_dev(&after), "d1", "{after:?}");
        let text = String::from_utf8_lossy(&after.stdout);
        assert!(text.contains("from 10.100.1.2 lookup 101"), "{text}");
        assert!(text.contains("default via 10.100.1.254 dev d1"), "{text}");
        assert!(text.ends_with("1\n2\n2\n"), "{text}");
        // Run twice, the rules are replaced, not added again.
        assert_eq!(String::from_utf8_lossy(&again.stdout), "2\n", "{again:?}");
    }
}
