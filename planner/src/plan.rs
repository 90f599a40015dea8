//! The plan: a designed fabric that every other command reads back.
//!
//! A plan holds every switch with its part (BiGraph) or tier (fat-tree),
//! every port's role and peer, the cable list and the sub-node to switch
//! attachment. Its JSON form is a stable contract documented in
//! `docs/plan-format.md`; [`Plan::to_json`] and [`Plan::from_json`] are the
//! only code that knows it (TOML is accepted too, for people who prefer it).
//!
//! The plan also carries the QoS and addressing intent ([`Plan::qos`],
//! [`Plan::addressing`]) that `render` and `check-qos` read: the plan is
//! the single source of the switch and host configurations.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::fabric::NvlinkKind;
pub use crate::fabric::{Breakout, CableKind, Media, Part, PortRole, Tier, Topology};
use crate::qos::{Addressing, QosIntent};
use crate::routing::Routing;

mod cables;
mod name;

pub use name::Name;
pub(crate) use name::{interned, interned_table, offer as offer_name};

pub use cables::{
    BreakoutEnd, BreakoutRow, CableRow, CableRuns, Leg, LegRow, PhysicalCable, Run, cable_label,
    peer_port_name,
};

/// Version of the plan format written by this planner.
pub const PLAN_FORMAT_VERSION: u32 = 1;

/// BiGraph design parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BiGraphParams {
    /// Sub-nodes per switch (the most any switch carries).
    pub m: usize,
    /// Number of switches, both parts together.
    pub n: usize,
    /// True when every switch carries exactly `m` sub-nodes.
    pub regular: bool,
}

/// Fat-tree design parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FatTreeParams {
    /// 2 (leaf-spine) or 3 (k-ary fat-tree).
    pub tiers: u8,
    /// Downlink to uplink bandwidth ratio at the leaves (1 = non-blocking).
    pub oversubscription: f64,
    /// Port count `k` of a 3-tier k-ary fat-tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Pods of a 3-tier fat-tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<usize>,
    /// Sub-nodes on the fullest leaf (edge) switch.
    pub sub_nodes_per_leaf: usize,
    /// Uplinks of each leaf (edge) switch.
    pub uplinks_per_leaf: usize,
    /// Parallel links between a leaf and a spine (2 tiers).
    pub links_per_leaf_spine: usize,
}

impl FatTreeParams {
    /// The parameters of a 2-tier leaf-spine (also each rail-optimized or
    /// HPN plane): `d` sub-nodes on the fullest leaf, `u` uplinks per
    /// leaf, `w` links between every leaf and spine.
    pub fn leaf_spine(oversubscription: f64, d: usize, u: usize, w: usize) -> Self {
        Self {
            tiers: 2,
            oversubscription,
            k: None,
            pods: None,
            sub_nodes_per_leaf: d,
            uplinks_per_leaf: u,
            links_per_leaf_spine: w,
        }
    }
}

/// Rail-optimized design parameters, beside the `fat_tree` table that
/// describes the leaf-spine the rail switches (leaves) and spines form.
///
/// Servers are cut into groups of `servers_per_group`; group `g` has one
/// rail switch per NIC index, and server NIC `i` is cabled to rail switch
/// `i` of its group. A rail switch records its group as its `pod` and its
/// NIC index as its `rail`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RailParams {
    /// Rails: NIC indices per server, one rail switch each per group.
    pub rails: usize,
    /// Server groups, each with its own rail switches.
    pub groups: usize,
    /// Servers of the fullest group.
    pub servers_per_group: usize,
}

/// HPN design parameters, beside the `rail` table (rails, segments as
/// groups) and the `fat_tree` table (the 2-tier leaf-spine of each plane).
///
/// Each plane has, per segment, one ToR per rail, and an aggregation tier
/// of its own above every ToR of the plane; the planes share no switch.
/// Every NIC has two ports: port 0 on its rail's ToR of plane 0 (A), port 1
/// on that of plane 1 (B). A switch records its plane as `plane`, a ToR
/// its segment as `pod` and its rail as `rail`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HpnParams {
    /// Planes (2).
    pub planes: usize,
    /// Segments: groups of servers that share their ToRs.
    pub segments: usize,
    /// Servers of the fullest segment.
    pub servers_per_segment: usize,
    /// ToRs per plane (segments × rails).
    pub tors_per_plane: usize,
    /// Aggregation switches per plane.
    pub aggregation_per_plane: usize,
}

/// Where the second port of a dual-port NIC is cabled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanAttachment {
    /// The (virtual) switch.
    pub switch: Name,
    /// The physical port on it.
    pub port: u32,
    /// Part or tier of that switch.
    pub part_or_tier: Tier,
}

/// One port of a switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanPort {
    /// Port number (1-based): the physical port, or on a broken-out switch
    /// ([`PlanSwitch::breakout`]) the logical port, one per lane, numbered
    /// in cage order ([`Breakout::cage_lane`]).
    pub port: u32,
    /// The physical port (cage, 1-based) of a lane of a broken-out switch;
    /// absent on a whole port (and in plans written before breakouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cage: Option<u32>,
    /// The lane (0-based) within [`PlanPort::cage`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// What it is used for.
    pub role: PortRole,
    /// The switch (virtual name) or server at the other end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<Name>,
    /// The physical port number (as text) or NIC name at the other end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_port: Option<Name>,
}

/// A switch of the plan: a physical switch, or one VLAN half of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSwitch {
    /// Name; a VLAN half is `<physical>-<suffix>`.
    pub name: Name,
    /// Part (BiGraph) or tier (fat-tree).
    pub part_or_tier: Tier,
    /// The physical switch it lives in (its own name when not split).
    pub physical: Name,
    /// Switch model.
    pub model: Name,
    /// VLAN of this half, when split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
    /// Pod of a 3-tier fat-tree; server group of a rail switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<usize>,
    /// Rail (the NIC index it carries) of a rail-optimized rail switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<usize>,
    /// Plane (0 = A, 1 = B) of an HPN switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plane: Option<usize>,
    /// Rack, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<Name>,
    /// The lowest rack unit the physical switch occupies in its rack
    /// (1-based, as NetBox's and Nautobot's device `position`, front
    /// face), when its rack is known (absent in plans written before
    /// positions); every VLAN half of a physical switch carries the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Its height in rack units, beside [`PlanSwitch::position`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u_height: Option<u32>,
    /// Speed of the ports in Gbps (of a lane, on a broken-out switch).
    pub port_gbps: u32,
    /// Interface-name pattern with `{p}`, when the inventory gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_name: Option<String>,
    /// How every cage splits into lanes, when the inventory's switch
    /// breaks out (`breakout = "2x200G"`): the ports are then lanes.
    /// Absent for whole ports (and in plans written before breakouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakout: Option<Breakout>,
    /// The ports of this (virtual) switch, in port order.
    pub ports: Vec<PlanPort>,
}

impl PlanRack {
    /// Its height in rack units ([`DEFAULT_RACK_U`] unless given).
    pub fn height(&self) -> u32 {
        self.u_height.unwrap_or(DEFAULT_RACK_U)
    }
}

impl PlanSwitch {
    /// The interface name of a port where no vendor is known
    /// ([`Breakout::generic_name`]: a lane is `<cage name>s<lane>`).
    pub fn port_name(&self, port: u32) -> String {
        Breakout::generic_name(self.port_name.as_deref(), self.breakout, port)
    }

    /// The cage and lane of logical port `port` on a broken-out switch.
    pub fn cage_lane(&self, port: u32) -> Option<(u32, u32)> {
        self.breakout.map(|b| b.cage_lane(port))
    }

    /// Number of ports with the given role.
    pub fn count(&self, role: PortRole) -> usize {
        self.ports.iter().filter(|p| p.role == role).count()
    }
}

/// A server of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanServer {
    /// Host name.
    pub name: Name,
    /// Rack, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<Name>,
    /// The lowest rack unit the server occupies in its rack (1-based, as
    /// NetBox's and Nautobot's device `position`, front face), when its
    /// rack is known (absent in plans written before positions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Its height in rack units, beside [`PlanServer::position`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u_height: Option<u32>,
    /// Indices into [`Plan::sub_node_list`].
    pub sub_nodes: Vec<usize>,
    /// The inventory's `model` of the server's GPUs, when they share one
    /// (absent without GPUs, with mixed models, and in plans written
    /// before it); `iteration` reads its compute rate from
    /// [`crate::gpus`] by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<Name>,
    /// The intra-server GPU fabric: its NVLink/NVSwitch domains; empty
    /// when the GPUs talk over PCIe only (and in plans written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink: Vec<PlanNvlink>,
    /// The server's PCIe tree with bus ids, PCIe switches first, then GPUs
    /// and NICs in inventory order, when the inventory gives `pci_bus`
    /// (empty otherwise, and in plans written before it): what
    /// `render --hosts` writes NCCL's topology file from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pci: Vec<PlanPci>,
}

/// What a [`PlanPci`] device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PciKind {
    /// A PCIe switch (its upstream port).
    PcieSwitch,
    /// A GPU.
    Gpu,
    /// A NIC.
    Nic,
}

/// One device of a server's PCIe tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanPci {
    /// Its PCI bus id (`0000:0b:00.0`, [`crate::pci::check_bus_id`]).
    pub bus: String,
    /// PCIe switch, GPU or NIC.
    pub kind: PciKind,
    /// Its name in the server (`plx0`, `gpu0`, `mlx5_0`: a NIC's RDMA
    /// device, the name NCCL's network plugin gives it).
    pub name: String,
    /// The CPU socket it hangs from, by position in the server's socket
    /// list: the NUMA node NCCL's topology file gives it.
    pub socket: usize,
    /// The bus id of the PCIe switch it sits under; absent for a PCIe
    /// switch and for a device on a root port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Width of its link, in lanes.
    pub lanes: u32,
    /// PCIe generation of its link.
    pub pcie_gen: u32,
    /// A NIC's line rate per port, in Gbps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<u32>,
}

/// The height of a rack whose inventory gives none: 42 U, the common
/// full-height rack (docs/inventory.md, "Rack positions").
pub const DEFAULT_RACK_U: u32 = 42;

/// A rack of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRack {
    /// Rack name.
    pub name: String,
    /// Site, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Row, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// The most power it may draw, in kW, if given (`planner cost` flags
    /// a plan over it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_kw: Option<f64>,
    /// Its height in rack units, when the inventory gives one; absent
    /// means [`DEFAULT_RACK_U`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u_height: Option<u32>,
    /// A network rack the design made for switches that serve servers of
    /// several racks (spines, rail switches); false for the inventory's
    /// racks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
}

/// An NVLink/NVSwitch domain of a plan's server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanNvlink {
    /// Name within the server.
    pub name: String,
    /// `nvswitch` or `mesh`.
    pub kind: NvlinkKind,
    /// Bandwidth of each GPU into the domain, one direction, in Gbps.
    pub gbps: u32,
    /// Its GPUs, by their position among the server's GPUs in inventory
    /// order (the numbering of [`PlanSubNode::gpu_index`]).
    pub gpu_indices: Vec<usize>,
}

/// A sub-node (a NIC, with the GPU paired to it) and where it is attached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSubNode {
    /// Global name: `<server>/sn<index>`.
    pub id: Name,
    /// Server.
    pub server: Name,
    /// Index within the server.
    pub index: usize,
    /// GPU paired with the NIC under the same PCIe switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Name>,
    /// The GPU's position among the server's GPUs in inventory order
    /// (0-based), which host files use for `CUDA_VISIBLE_DEVICES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_index: Option<usize>,
    /// Every GPU whose traffic leaves through this NIC when the inventory
    /// gives it several (`gpus = [...]`), by `gpu_index` numbering; the
    /// first is `gpu_index`. Empty for a NIC with one GPU (and in plans
    /// written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_indices: Vec<usize>,
    /// NIC name (RDMA device).
    pub nic: Name,
    /// Network interface name, when the inventory gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<Name>,
    /// NIC line rate in Gbps, per port: a dual-port NIC ([`PlanSubNode::port1`])
    /// carries twice this.
    pub nic_gbps: u32,
    /// CPU socket.
    pub socket: Name,
    /// The socket's position in the server's socket list (0-based), for
    /// CPU binding (`slot=<socket>:<core>` in an Open MPI rankfile).
    #[serde(default)]
    pub socket_index: usize,
    /// PCIe switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_switch: Option<Name>,
    /// MAC address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// The (virtual) switch it is attached to.
    pub switch: Name,
    /// The physical port on that switch.
    pub port: u32,
    /// Part or tier of that switch.
    pub part_or_tier: Tier,
    /// The second port of a dual-port NIC (HPN): `switch` and `port` above
    /// are port 0 (plane A), this is port 1 (plane B). Absent for a
    /// single-port NIC (and in plans written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port1: Option<PlanAttachment>,
}

impl PlanSubNode {
    /// The switch of NIC port `port` (0 or 1): port 0 is
    /// [`PlanSubNode::switch`], port 1 that of [`PlanSubNode::port1`].
    pub fn switch_of_port(&self, port: usize) -> Option<&str> {
        match port {
            0 => Some(self.switch.as_str()),
            1 => self.port1.as_ref().map(|a| a.switch.as_str()),
            _ => None,
        }
    }

    /// The name of NIC port `port` at the end of its cable: the NIC's name
    /// for a single-port NIC, `<nic>:p0` and `<nic>:p1` for a dual-port one.
    pub fn port_label(&self, port: usize) -> String {
        if self.port1.is_some() {
            format!("{}:p{port}", self.nic)
        } else {
            self.nic.to_string()
        }
    }
}

impl PlanSubNode {
    /// The GPUs whose traffic leaves through this NIC, by `gpu_index`
    /// numbering: every GPU of a shared NIC, else its one GPU (`None` when
    /// the plan names no GPU: one rank on the NIC). Never empty.
    pub fn gpus(&self) -> Vec<Option<usize>> {
        if self.gpu_indices.is_empty() {
            vec![self.gpu_index]
        } else {
            self.gpu_indices.iter().map(|&g| Some(g)).collect()
        }
    }

    /// The `k`-th GPU behind the NIC, as `gpus().get(k)` without building
    /// the list (a rank table of 131,072 ranks asks once a rank).
    pub fn gpu_at(&self, k: usize) -> Option<usize> {
        if self.gpu_indices.is_empty() {
            self.gpu_index.filter(|_| k == 0)
        } else {
            self.gpu_indices.get(k).copied()
        }
    }

    /// How many ranks the sub-node carries when every GPU takes one: the
    /// length of [`PlanSubNode::gpus`].
    pub fn gpu_count(&self) -> usize {
        self.gpu_indices.len().max(1)
    }
}

/// One cable. The `a` end is always a physical switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cable {
    /// Physical switch.
    pub a: Name,
    /// Port on it.
    pub a_port: u32,
    /// Physical switch or server.
    pub b: Name,
    /// Port number (switch) or NIC name (server).
    pub b_port: Name,
    /// Line rate in Gbps.
    pub gbps: u32,
    /// What it connects.
    pub kind: CableKind,
    /// Media.
    pub media: Media,
}

/// A designed fabric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Plan format version ([`PLAN_FORMAT_VERSION`]).
    pub format_version: u32,
    /// The inventory's name.
    pub name: String,
    /// `bigraph`, `fat-tree`, `rail-optimized` or `hpn`.
    pub topology: Topology,
    /// Number of sub-nodes.
    pub sub_nodes: usize,
    /// Number of switches (VLAN halves counted singly).
    pub switches: usize,
    /// Number of physical switches.
    pub physical_switches: usize,
    /// Number of inter-switch links.
    pub links: usize,
    /// BiGraph parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bigraph: Option<BiGraphParams>,
    /// Fat-tree parameters (also the leaf-spine of a rail-optimized plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fat_tree: Option<FatTreeParams>,
    /// Rail-optimized parameters (also the rails and segments of HPN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rail: Option<RailParams>,
    /// HPN parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpn: Option<HpnParams>,
    /// Why the design looks the way it does.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Things a person should look at.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Every switch.
    pub switch_list: Vec<PlanSwitch>,
    /// Every server.
    pub servers: Vec<PlanServer>,
    /// Every sub-node and its attachment.
    pub sub_node_list: Vec<PlanSubNode>,
    /// Every cable.
    pub cables: Vec<Cable>,
    /// The racks servers and switches stand in, when the inventory gives
    /// racks: its `[[rack]]` tables and the network racks the design put
    /// switches in ([`PlanRack::network`]); empty otherwise (and in plans
    /// written before it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub racks: Vec<PlanRack>,
    /// The QoS intent (classes, CNP, ECN, PFC watchdog, MTU) the switch
    /// and host configurations are rendered from; a plan written before it
    /// existed gets the topology's defaults ([`Plan::qos_intent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<QosIntent>,
    /// Address pools and the VLAN of unsplit switches.
    #[serde(default)]
    pub addressing: Addressing,
    /// Static routes or eBGP, ASNs and BFD timers ([`crate::routing`]); a
    /// plan without it routes statically, and a static plan with the
    /// default numbers leaves it out of the file.
    #[serde(default, skip_serializing_if = "Routing::is_default")]
    pub routing: Routing,
}

impl Plan {
    /// True when the plan has an intra-server tier: an NVLink domain or a
    /// NIC shared by several GPUs. Estimates then count one rank per GPU.
    pub fn has_intra_server_tier(&self) -> bool {
        self.servers.iter().any(|s| !s.nvlink.is_empty())
            || self.sub_node_list.iter().any(|sn| sn.gpu_indices.len() > 1)
    }

    /// True when some NIC carries several GPUs: rank tables, host files
    /// and job environments then count one rank per GPU
    /// ([`PlanSubNode::gpus`]) instead of one per sub-node.
    pub fn shares_nics(&self) -> bool {
        self.sub_node_list.iter().any(|sn| sn.gpu_indices.len() > 1)
    }

    /// The ranks of a plan when every GPU takes part: one per GPU with the
    /// intra-server tier, otherwise one per sub-node. The one count
    /// `simulate`, `iteration` and `ranks` share.
    pub fn default_ranks(&self) -> usize {
        self.sub_node_list.iter().map(PlanSubNode::gpu_count).sum()
    }

    /// Writes the plan as JSON: one key per line at the top, one line per
    /// switch port, sub-node and cable (see `docs/plan-format.md`); ends
    /// with a newline.
    pub fn write_json<W: std::io::Write>(&self, mut w: W) -> std::io::Result<()> {
        let mut ser = serde_json::Serializer::with_formatter(
            &mut w,
            crate::plan_json::PlanFormatter::default(),
        );
        self.serialize(&mut ser).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    }

    /// The plan as JSON, as [`Plan::write_json`] writes it.
    pub fn to_json(&self) -> Result<String> {
        let mut buf =
            Vec::with_capacity(96 * (self.cables.len() + self.sub_node_list.len()) + 4096);
        self.write_json(&mut buf)
            .map_err(|e| Error::serialize("the plan", e))?;
        String::from_utf8(buf).map_err(|e| Error::serialize("the plan", e))
    }

    /// The plan as TOML.
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::serialize("the plan", e))
    }

    /// Parses a plan written as JSON.
    pub fn from_json(text: &str, file: &str) -> Result<Plan> {
        let plan: Plan =
            interned(|| serde_json::from_str(text)).map_err(|e| Error::json(file, &e))?;
        plan.check_version(file)?;
        Ok(plan)
    }

    /// Parses a plan written as TOML.
    pub fn from_toml(text: &str, file: &str) -> Result<Plan> {
        let plan: Plan =
            interned(|| toml::from_str(text)).map_err(|e| Error::toml(file, text, &e))?;
        plan.check_version(file)?;
        Ok(plan)
    }

    /// Parses a plan, TOML when `file` ends in `.toml`, JSON otherwise. An
    /// inventory is refused with [`Error::NotAPlan`].
    pub fn parse(text: &str, file: &str) -> Result<Plan> {
        let parsed = if file.ends_with(".toml") {
            Plan::from_toml(text, file)
        } else {
            Plan::from_json(text, file)
        };
        // An inventory where a plan belongs: say which command makes the
        // plan (looked for only once parsing failed, so a large plan is
        // not scanned twice).
        parsed.map_err(|e| {
            if text.lines().any(|l| l.trim() == "[inventory]") {
                Error::NotAPlan {
                    file: file.to_string(),
                }
            } else {
                e
            }
        })
    }

    pub(crate) fn check_version(&self, file: &str) -> Result<()> {
        if self.format_version == PLAN_FORMAT_VERSION {
            Ok(())
        } else {
            Err(Error::Invalid {
                file: file.to_string(),
                what: "plan",
                problems: vec![crate::Problem::at(
                    None,
                    "format_version",
                    format!(
                        "the plan is format {}, this planner reads format {PLAN_FORMAT_VERSION}",
                        self.format_version
                    ),
                    "design the plan again with this planner",
                )],
            })
        }
    }

    /// The QoS intent: [`Plan::qos`], or the topology's defaults for a
    /// plan that has none.
    pub fn qos_intent(&self) -> QosIntent {
        self.qos
            .clone()
            .unwrap_or_else(|| QosIntent::defaults(self.topology, true))
    }

    /// True when flows between two sub-nodes of one server stay inside the
    /// server ([`Plan::intra_server_groups`]): rail-optimized and HPN
    /// plans.
    pub fn reduces_in_server(&self) -> bool {
        self.topology.has_rails()
    }

    /// Per sub-node, its server (position in [`Plan::servers`]) when flows
    /// between two sub-nodes of one server stay inside the server instead
    /// of crossing the fabric: on a rail-optimized plan, whose servers
    /// reach their own GPUs without the NIC (each NIC is on another rail).
    /// `None` on other plans, where such a flow goes through the NIC and
    /// the switch.
    pub fn intra_server_groups(&self) -> Option<Vec<u32>> {
        if !self.reduces_in_server() {
            return None;
        }
        let mut of = vec![u32::MAX; self.sub_node_list.len()];
        for (k, s) in self.servers.iter().enumerate() {
            for &i in &s.sub_nodes {
                if let Some(slot) = of.get_mut(i) {
                    *slot = k as u32;
                }
            }
        }
        Some(of)
    }

    /// An index from switch names to positions in [`Plan::switch_list`].
    pub fn switch_index(&self) -> HashMap<&str, usize> {
        self.switch_list
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect()
    }

    /// The plan's physical switches (boxes), in the order of their first
    /// virtual switch, each with the positions in [`Plan::switch_list`] of
    /// the virtual switches it holds, in plan order: one for a switch that
    /// is not split, its VLAN halves for one that is (EFLOPS). A box fails
    /// as a whole: one power supply, ASIC and management plane.
    pub fn boxes(&self) -> Vec<(&str, Vec<usize>)> {
        let mut out: Vec<(&str, Vec<usize>)> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for (i, s) in self.switch_list.iter().enumerate() {
            match at.get(s.physical.as_str()) {
                Some(&b) => out[b].1.push(i),
                None => {
                    at.insert(s.physical.as_str(), out.len());
                    out.push((s.physical.as_str(), vec![i]));
                }
            }
        }
        out
    }

    /// The cable list as CSV (RFC 4180) for the people who cable the
    /// racks. The columns `switch,port,peer,peer_port,speed` are what
    /// `planner validate --cabling` reads, so an as-built record can start
    /// from this file.
    pub fn cables_csv(&self) -> String {
        let names: HashMap<&str, &PlanSwitch> = self
            .switch_list
            .iter()
            .map(|s| (s.physical.as_str(), s))
            .collect();
        let header = [
            "switch",
            "port",
            "port_name",
            "peer",
            "peer_port",
            "speed",
            "kind",
            "media",
            "label",
            "rack",
            "peer_rack",
            "run",
        ]
        .map(String::from);
        // Plans with rack positions add each end's lowest rack unit.
        let positions = self.positions();
        let header: Vec<String> = if positions.is_empty() {
            header.to_vec()
        } else {
            (header.into_iter())
                .chain(["position", "peer_position"].map(String::from))
                .collect()
        };
        let at = |name: &str| positions.get(name).map_or(String::new(), u32::to_string);
        let runs = self.cable_runs();
        // A breakout cable's legs share its label.
        let mut label_of = vec![0; self.cables.len()];
        for (i, pc) in self.physical_cables().iter().enumerate() {
            for &k in &pc.legs {
                label_of[k] = i;
            }
        }
        let records = self.cables.iter().enumerate().map(|(k, c)| {
            let i = label_of[k];
            let (rack, peer_rack, run) = runs.of(c);
            let port_name = names
                .get(c.a.as_str())
                .map_or(c.a_port.to_string(), |s| s.port_name(c.a_port));
            let kind = match c.kind {
                CableKind::InterSwitch => "inter_switch",
                CableKind::SubNode => "sub_node",
            };
            let mut record = vec![
                c.a.to_string(),
                c.a_port.to_string(),
                port_name,
                c.b.to_string(),
                c.b_port.to_string(),
                c.gbps.to_string(),
                kind.to_string(),
                c.media.as_str().to_string(),
                cable_label(i),
                rack.unwrap_or_default().to_string(),
                peer_rack.unwrap_or_default().to_string(),
                run.as_str().to_string(),
            ];
            if !positions.is_empty() {
                record.push(at(&c.a));
                record.push(at(&c.b));
            }
            record
        });
        crate::text::write_csv(std::iter::once(header).chain(records))
    }

    /// The lowest rack unit of every server and physical switch that has
    /// one, by name (empty for plans without rack positions).
    pub fn positions(&self) -> HashMap<&str, u32> {
        let mut out: HashMap<&str, u32> = HashMap::new();
        for s in &self.servers {
            if let Some(p) = s.position {
                out.insert(&s.name, p);
            }
        }
        for s in &self.switch_list {
            if let Some(p) = s.position {
                out.entry(&s.physical).or_insert(p);
            }
        }
        out
    }

    /// One-line description of the design: `BiGraph 4x16`,
    /// `2-tier leaf-spine 1:1`, `3-tier fat-tree k=16`,
    /// `rail-optimized 8 rails x 4 groups 1:1`,
    /// `HPN 2 planes x 4 segments x 8 rails 1:1`.
    pub fn describe(&self) -> String {
        match (&self.bigraph, &self.fat_tree) {
            (Some(b), _) => format!("BiGraph {}x{}", b.m, b.n),
            (_, Some(f)) if self.topology == Topology::RailOptimized => format!(
                "rail-optimized {} rails x {} groups {}:1",
                self.rail.as_ref().map_or(0, |r| r.rails),
                self.rail.as_ref().map_or(0, |r| r.groups),
                crate::text::gbps(f.oversubscription)
            ),
            (_, Some(f)) if self.topology == Topology::Hpn => {
                let segments = self.hpn.as_ref().map_or(0, |h| h.segments);
                format!(
                    "HPN {} planes x {segments} segment{} x {} rails {}:1",
                    self.hpn.as_ref().map_or(0, |h| h.planes),
                    if segments == 1 { "" } else { "s" },
                    self.rail.as_ref().map_or(0, |r| r.rails),
                    crate::text::gbps(f.oversubscription)
                )
            }
            (_, Some(f)) if f.tiers == 2 => format!(
                "2-tier leaf-spine {}:1",
                crate::text::gbps(f.oversubscription)
            ),
            (_, Some(f)) => format!("3-tier fat-tree k={}", f.k.unwrap_or(0)),
            _ => self.topology.as_str().to_string(),
        }
    }
}
