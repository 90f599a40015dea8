//! The inventory TOML as written by a person: the serde boundary.
//!
//! Every table keeps its span so that semantic errors found later can name
//! the line. Nothing here is checked beyond TOML types; see
//! [`super::Inventory::from_toml`] for the checks.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawInventory {
    pub inventory: Option<RawMeta>,
    #[serde(default)]
    pub rack: Vec<Spanned<RawRack>>,
    #[serde(default)]
    pub server: Vec<Spanned<RawServer>>,
    #[serde(default)]
    pub switch: Vec<Spanned<RawSwitch>>,
    #[serde(default)]
    pub nic_address: Vec<Spanned<RawNicAddress>>,
    #[serde(default)]
    pub catalog: Vec<Spanned<RawCatalogPart>>,
    pub qos: Option<Spanned<RawQos>>,
    pub addressing: Option<Spanned<RawAddressing>>,
    pub routing: Option<Spanned<RawRouting>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMeta {
    pub name: Option<String>,
    pub description: Option<String>,
    pub site: Option<String>,
    pub currency: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRack {
    pub name: Spanned<String>,
    pub count: Option<Spanned<i64>>,
    pub start: Option<Spanned<i64>>,
    pub site: Option<String>,
    pub row: Option<String>,
    pub max_kw: Option<Spanned<f64>>,
    pub u_height: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub name: Spanned<String>,
    pub count: Option<Spanned<i64>>,
    pub start: Option<Spanned<i64>>,
    pub model: Option<String>,
    pub rack: Option<Spanned<String>>,
    pub u_height: Option<Spanned<i64>>,
    pub position: Option<Spanned<i64>>,
    pub sockets: Spanned<Vec<String>>,
    #[serde(default)]
    pub pcie_switch: Vec<Spanned<RawPcieSwitch>>,
    #[serde(default)]
    pub gpu: Vec<Spanned<RawGpu>>,
    #[serde(default)]
    pub nic: Vec<Spanned<RawNic>>,
    #[serde(default)]
    pub nvlink: Vec<Spanned<RawNvlink>>,
}

/// An NVLink or NVSwitch domain of a server: the GPUs it joins and the
/// bandwidth each GPU has into it, in Gbps or in GB/s (exactly one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNvlink {
    pub name: Option<String>,
    pub kind: Spanned<String>,
    pub gpus: Option<Spanned<Vec<Spanned<String>>>>,
    pub gbps: Option<Spanned<i64>>,
    pub gbytes_per_s: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPcieSwitch {
    pub name: String,
    pub model: Option<String>,
    pub socket: Spanned<String>,
    pub root_port: Option<String>,
    pub lanes: Option<Spanned<i64>>,
    pub pcie_gen: Option<Spanned<i64>>,
    pub slots: Option<Spanned<i64>>,
    /// The PCI bus id of the switch's upstream port (`0000:05:00.0`).
    pub pci_bus: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGpu {
    pub name: Option<String>,
    pub slot: Option<String>,
    pub pcie_switch: Option<Spanned<String>>,
    pub socket: Option<Spanned<String>>,
    pub model: String,
    pub lanes: Option<Spanned<i64>>,
    pub pcie_gen: Option<Spanned<i64>>,
    pub memory_gb: Option<Spanned<i64>>,
    /// The GPU's PCI bus id (`0000:07:00.0`).
    pub pci_bus: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNic {
    pub name: Option<String>,
    pub netdev: Option<Spanned<String>>,
    pub slot: Option<String>,
    pub pcie_switch: Option<Spanned<String>>,
    pub socket: Option<Spanned<String>>,
    pub model: String,
    pub speed_gbps: Spanned<i64>,
    /// Network ports of the NIC (1 or 2); `speed_gbps` is per port.
    pub ports: Option<Spanned<i64>>,
    pub lanes: Option<Spanned<i64>>,
    pub pcie_gen: Option<Spanned<i64>>,
    /// The NIC's PCI bus id (`0000:08:00.0`).
    pub pci_bus: Option<Spanned<String>>,
    pub mac: Option<Spanned<String>>,
    pub ip: Option<Spanned<String>>,
    /// The GPUs whose traffic leaves the server through this NIC (several
    /// GPUs per NIC); when absent, the GPU paired under its PCIe switch.
    pub gpus: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawRole {
    Leaf,
    Spine,
    Core,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawBiPart {
    Upper,
    Lower,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawPortList {
    Text(String),
    List(Vec<i64>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSwitch {
    pub name: Spanned<String>,
    pub count: Option<Spanned<i64>>,
    pub start: Option<Spanned<i64>>,
    pub model: String,
    pub ports: Spanned<i64>,
    pub port_gbps: Spanned<i64>,
    pub port_name: Option<Spanned<String>>,
    pub rack: Option<Spanned<String>>,
    pub u_height: Option<Spanned<i64>>,
    pub position: Option<Spanned<i64>>,
    pub price: Option<Spanned<f64>>,
    pub role: Option<RawRole>,
    pub reserved_ports: Option<Spanned<RawPortList>>,
    pub breakout: Option<Spanned<String>>,
    #[serde(default, rename = "virtual")]
    pub virtual_switches: Vec<Spanned<RawVirtual>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVirtual {
    pub suffix: Spanned<String>,
    pub ports: Spanned<RawPortList>,
    pub vlan: Spanned<i64>,
    pub part: Option<RawBiPart>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNicAddress {
    pub server: Spanned<String>,
    pub nic: Spanned<String>,
    pub mac: Option<Spanned<String>>,
    pub ip: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCatalogPart {
    pub name: Spanned<String>,
    pub kind: Spanned<String>,
    pub price: Spanned<f64>,
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQos {
    pub mtu: Option<Spanned<i64>>,
    pub per_direction: Option<bool>,
    pub gid_index: Option<Spanned<i64>>,
    #[serde(default)]
    pub class: Vec<Spanned<RawQosClass>>,
    pub cnp: Option<Spanned<RawCnp>>,
    pub ecn: Option<Spanned<RawEcn>>,
    pub pfc_watchdog: Option<Spanned<RawWatchdog>>,
    #[serde(default)]
    pub switch: Vec<Spanned<RawQosSwitch>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQosClass {
    pub name: Spanned<String>,
    pub part: Option<Spanned<String>>,
    pub dscp: Option<Spanned<i64>>,
    pub priority: Option<Spanned<i64>>,
    pub lossless: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCnp {
    pub dscp: Option<Spanned<i64>>,
    pub priority: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEcn {
    pub min_kb: Option<Spanned<i64>>,
    pub max_kb: Option<Spanned<i64>>,
    pub probability: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWatchdog {
    pub detection_ms: Option<Spanned<i64>>,
    pub restoration_ms: Option<Spanned<i64>>,
    pub polling_ms: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQosSwitch {
    pub name: Spanned<String>,
    pub mtu: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAddressing {
    pub sub_node_pool: Option<Spanned<String>>,
    pub link_pool: Option<Spanned<String>>,
    pub vlan: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRouting {
    pub mode: Option<Spanned<String>>,
    pub asn_base: Option<Spanned<i64>>,
    pub bfd: Option<Spanned<RawBfd>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBfd {
    pub tx_ms: Option<Spanned<i64>>,
    pub rx_ms: Option<Spanned<i64>>,
    pub multiplier: Option<Spanned<i64>>,
}
