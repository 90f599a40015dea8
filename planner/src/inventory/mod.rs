//! Hardware inventory: servers (sockets, PCIe switches, GPUs and NICs in
//! slots), switches (ports, speed, optional VLAN split into two virtual
//! switches), racks and an optional parts catalog.
//!
//! [`Inventory::from_toml`] parses the TOML described in
//! `docs/inventory.md`, expands templates (`count = 16` with a name pattern
//! such as `node{n:02}`) and checks everything it can without designing a
//! network. Every problem found is reported at once, each with its line, the
//! object it concerns and what to change.

mod expand;
mod name_rule;
mod qos_check;
mod raw;
mod routing_check;
mod server_check;
mod switch_check;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::ops::Range;

use toml::Spanned;

use crate::error::{Error, Problem, Result};
pub use crate::fabric::{Breakout, NvlinkKind, Part, SwitchRole};
use crate::qos::{ClassOverride, Ipv4Prefix, QosOverrides};
use crate::routing::Routing;
use crate::text::{self, NamePattern};
use raw::{
    RawAddressing, RawBiPart, RawCatalogPart, RawGpu, RawInventory, RawNic, RawNicAddress,
    RawNvlink, RawPcieSwitch, RawPortList, RawQos, RawRack, RawRole, RawServer, RawSwitch,
    RawVirtual,
};

/// Upper bound on instances of one template; larger counts are typos.
const MAX_COUNT: i64 = 10_000_000;

/// A checked, expanded inventory.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// The inventory's name (from `[inventory] name`, else the file stem).
    pub name: String,
    /// Where it came from, as the user named it (the file path, or the
    /// command-line shorthand): what refusals about it name.
    pub source: String,
    /// Free-form description.
    pub description: Option<String>,
    /// Site name.
    pub site: Option<String>,
    /// Currency of the prices.
    pub currency: Option<String>,
    /// Racks, expanded.
    pub racks: Vec<Rack>,
    /// Server templates as written.
    pub server_templates: Vec<ServerTemplate>,
    /// Every server, expanded from the templates in order.
    pub servers: Vec<Server>,
    /// Switch templates as written.
    pub switch_templates: Vec<SwitchTemplate>,
    /// Every physical switch, expanded from the templates in order.
    pub switches: Vec<Switch>,
    /// Purchasable parts with prices.
    pub catalog: Vec<CatalogPart>,
    /// The `[qos]` and `[addressing]` tables, checked value by value;
    /// `design` resolves them for the topology it builds.
    pub qos: QosOverrides,
    /// The `[routing]` table, checked value by value (defaults: static);
    /// `design` checks the ASNs against the switches it uses.
    pub routing: Routing,
    /// Line of the `[routing]` table.
    pub routing_line: Option<usize>,
}

/// A rack.
#[derive(Debug, Clone, PartialEq)]
pub struct Rack {
    /// Rack name.
    pub name: String,
    /// Site, if given.
    pub site: Option<String>,
    /// Row, if given.
    pub row: Option<String>,
    /// The most power the rack may draw, in kW (its feed or cooling
    /// limit), if given: `planner cost` flags a design that exceeds it.
    pub max_kw: Option<f64>,
    /// Its height in rack units, if given (else
    /// [`crate::plan::DEFAULT_RACK_U`]).
    pub u_height: Option<u32>,
    /// Line of its `[[rack]]` table.
    pub line: Option<usize>,
}

/// The height of a server whose template gives no `u_height`: 2 U
/// (docs/inventory.md, "Rack positions"; an 8-GPU HGX-class chassis is
/// taller, so give it).
pub const DEFAULT_SERVER_U: u32 = 2;

/// The height of a switch whose template gives no `u_height`: 1 U.
pub const DEFAULT_SWITCH_U: u32 = 1;

/// The tallest rack or device the inventory takes, in rack units.
pub const MAX_U: i64 = 100;

/// Where a template's instances stand in their racks, as the inventory
/// gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elevation {
    /// Height of each instance in rack units.
    pub u_height: u32,
    /// The lowest rack unit of the template's first instance in each
    /// rack; the next instances in the same rack stack upwards from it,
    /// one `u_height` apart. `None`: the design's fill rule places them.
    pub position: Option<u32>,
    /// Line of `position` (else of the template), for refusals.
    pub line: Option<usize>,
}

/// A server template: the hardware of `count` identical servers.
#[derive(Debug, Clone)]
pub struct ServerTemplate {
    /// The name pattern as written (`node{n:02}`).
    pub pattern: String,
    /// Line of the `[[server]]` table.
    pub line: Option<usize>,
    /// Server model.
    pub model: Option<String>,
    /// CPU socket names.
    pub sockets: Vec<String>,
    /// PCIe switches.
    pub pcie_switches: Vec<PcieSwitch>,
    /// GPUs.
    pub gpus: Vec<Gpu>,
    /// NICs.
    pub nics: Vec<Nic>,
    /// The NVLink/NVSwitch domains joining its GPUs; empty when the GPUs
    /// talk to each other over PCIe only (the EFLOPS server).
    pub nvlink: Vec<NvlinkDomain>,
    /// Height and given position of its servers.
    pub elevation: Elevation,
    /// The servers made from this template (indices into
    /// [`Inventory::servers`]).
    pub instances: Range<usize>,
}

/// A PCIe switch under a CPU socket's root port.
#[derive(Debug, Clone)]
pub struct PcieSwitch {
    /// Name within the server (`plx0`).
    pub name: String,
    /// Model (`PEX 9797`).
    pub model: Option<String>,
    /// Index into [`ServerTemplate::sockets`].
    pub socket: usize,
    /// Root port name; defaults to the switch's own name.
    pub root_port: String,
    /// Upstream link width in lanes.
    pub lanes: Option<u32>,
    /// PCIe generation of the upstream link.
    pub pcie_gen: Option<u32>,
    /// Number of downstream slots.
    pub slots: Option<u32>,
    /// PCI bus id of the switch's upstream port (`0000:05:00.0`), checked
    /// by [`crate::pci::check_bus_id`]: what NCCL's topology file names it
    /// by (`render --hosts`, docs/provisioner.md).
    pub pci_bus: Option<String>,
    /// Line of the table.
    pub line: Option<usize>,
}

/// Where a device sits in the PCIe tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attachment {
    /// In a slot under this PCIe switch (index into
    /// [`ServerTemplate::pcie_switches`]).
    PcieSwitch(usize),
    /// Directly on a root port of this socket (index into
    /// [`ServerTemplate::sockets`]).
    RootPort(usize),
}

/// A GPU.
#[derive(Debug, Clone)]
pub struct Gpu {
    /// Name within the server (`gpu0`).
    pub name: String,
    /// Slot label (`slot1`); the name when not given.
    pub slot: String,
    /// Where it sits.
    pub attachment: Attachment,
    /// Model (`V100-PCIe-32GB`).
    pub model: String,
    /// Slot width in lanes.
    pub lanes: Option<u32>,
    /// PCIe generation of its link, when it differs from its PCIe
    /// switch's or it sits on a root port.
    pub pcie_gen: Option<u32>,
    /// PCI bus id (`0000:07:00.0`), checked by [`crate::pci::check_bus_id`].
    pub pci_bus: Option<String>,
    /// Memory in GB.
    pub memory_gb: Option<u32>,
    /// Line of the table.
    pub line: Option<usize>,
}

/// A NIC (one network port).
#[derive(Debug, Clone)]
pub struct Nic {
    /// Name within the server: the RDMA device name NCCL uses (`mlx5_0`),
    /// or the interface name when the NIC has no RDMA device.
    pub name: String,
    /// Network interface name (`ens1f0np0`), as server-side LLDP reports it.
    pub netdev: Option<String>,
    /// Slot label.
    pub slot: String,
    /// Where it sits.
    pub attachment: Attachment,
    /// Model.
    pub model: String,
    /// Line rate of each network port in Gbps.
    pub speed_gbps: u32,
    /// Network ports: 1, or 2 for a dual-port NIC (HPN's dual-ToR
    /// attachment: port 0 to the plane-A ToR, port 1 to the plane-B ToR).
    /// [`Nic::speed_gbps`] is per port, so the NIC carries
    /// `ports × speed_gbps` in all.
    pub ports: u32,
    /// Slot width in lanes.
    pub lanes: Option<u32>,
    /// PCIe generation of its link, when it differs from its PCIe
    /// switch's or it sits on a root port.
    pub pcie_gen: Option<u32>,
    /// PCI bus id (`0000:08:00.0`), checked by [`crate::pci::check_bus_id`].
    pub pci_bus: Option<String>,
    /// MAC pattern (may number instances with `{n:02x}`).
    pub mac: Option<NamePattern>,
    /// IP pattern (may number instances with `{n}`).
    pub ip: Option<NamePattern>,
    /// The GPUs whose traffic leaves the server through this NIC, as the
    /// inventory states them (`gpus = [...]`, indices into
    /// [`ServerTemplate::gpus`]); empty when the NIC is paired by its PCIe
    /// switch ([`ServerTemplate::sub_nodes`]).
    pub gpus: Vec<usize>,
    /// Line of the table.
    pub line: Option<usize>,
}

/// An NVLink or NVSwitch domain: GPUs of one server that exchange data
/// without crossing PCIe or a NIC.
#[derive(Debug, Clone, PartialEq)]
pub struct NvlinkDomain {
    /// Name within the server (`nvswitch`, default `nvlink0`, ...).
    pub name: String,
    /// NVSwitch or direct links.
    pub kind: NvlinkKind,
    /// Its GPUs (indices into [`ServerTemplate::gpus`], inventory order).
    pub gpus: Vec<usize>,
    /// Bandwidth of each GPU into the domain, one direction, in Gbps
    /// (`gbytes_per_s` in the inventory is converted: 1 GB/s = 8 Gbps).
    pub gbps: u32,
    /// Line of the table.
    pub line: Option<usize>,
}

/// One server.
#[derive(Debug, Clone)]
pub struct Server {
    /// Host name.
    pub name: String,
    /// Index into [`Inventory::server_templates`].
    pub template: usize,
    /// Instance number that named it.
    pub number: u64,
    /// Rack, if known.
    pub rack: Option<String>,
    /// Its lowest rack unit, when the inventory gives its template a
    /// `position` ([`Elevation::position`]).
    pub position: Option<u32>,
    /// Per NIC (template order): MAC and IP, when known. Empty when no NIC
    /// of the server has an address.
    pub nic_addresses: Vec<NicAddress>,
}

/// A NIC's addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NicAddress {
    /// MAC address.
    pub mac: Option<String>,
    /// IP address, optionally with a prefix length.
    pub ip: Option<String>,
}

/// A VLAN half of a split switch.
#[derive(Debug, Clone)]
pub struct VirtualSpec {
    /// Appended to the physical name with `-` to name the virtual switch.
    pub suffix: String,
    /// Physical ports of this half.
    pub ports: Vec<u32>,
    /// VLAN id.
    pub vlan: u16,
    /// BiGraph part; when not given the first half is upper.
    pub part: Part,
    /// Line of the table.
    pub line: Option<usize>,
}

/// A switch template.
#[derive(Debug, Clone)]
pub struct SwitchTemplate {
    /// Name pattern as written.
    pub pattern: String,
    /// Line of the `[[switch]]` table.
    pub line: Option<usize>,
    /// Model.
    pub model: String,
    /// Number of (logical) ports: the cages, or their lanes when the
    /// switch breaks out.
    pub ports: u32,
    /// Speed of every (logical) port in Gbps: a lane's when broken out.
    pub port_gbps: u32,
    /// How every cage splits into lanes (`breakout = "2x200G"`); `ports`,
    /// `port_gbps`, `reserved_ports` and the virtual switches' ports are
    /// then counted in lanes ([`Breakout::port`]).
    pub breakout: Option<Breakout>,
    /// Interface-name pattern with `{p}` for the port number.
    pub port_name: Option<String>,
    /// Rack pattern.
    pub rack: Option<String>,
    /// Unit price.
    pub price: Option<f64>,
    /// Fat-tree role reserved for this template.
    pub role: Option<SwitchRole>,
    /// Ports never used by a design (management, external uplinks).
    pub reserved_ports: Vec<u32>,
    /// The two VLAN halves, or empty when the switch is not split.
    pub virtual_switches: Vec<VirtualSpec>,
    /// Height and given position of its switches.
    pub elevation: Elevation,
    /// The switches made from this template.
    pub instances: Range<usize>,
}

impl SwitchTemplate {
    /// The interface name of a port (`HundredGigE1/0/5`), or its number;
    /// a lane's name on a broken-out switch ([`Breakout::generic_name`]).
    pub fn port_name(&self, port: u32) -> String {
        Breakout::generic_name(self.port_name.as_deref(), self.breakout, port)
    }

    /// Ports a design may use: all but the reserved ones.
    pub fn usable_ports(&self) -> Vec<u32> {
        (1..=self.ports)
            .filter(|p| self.reserved_ports.binary_search(p).is_err())
            .collect()
    }

    /// True when the template splits each switch into two virtual switches.
    pub fn is_split(&self) -> bool {
        !self.virtual_switches.is_empty()
    }
}

/// One physical switch.
#[derive(Debug, Clone)]
pub struct Switch {
    /// Name.
    pub name: String,
    /// Index into [`Inventory::switch_templates`].
    pub template: usize,
    /// Instance number.
    pub number: u64,
    /// Rack, if known.
    pub rack: Option<String>,
    /// Its lowest rack unit, when the inventory gives its template a
    /// `position` ([`Elevation::position`]).
    pub position: Option<u32>,
}

/// A purchasable part.
#[derive(Debug, Clone)]
pub struct CatalogPart {
    /// Part name.
    pub name: String,
    /// Kind: `switch`, `nic`, `gpu`, `server`, `cable`, `optic`, `other`.
    pub kind: String,
    /// Unit price.
    pub price: f64,
    /// Description.
    pub description: Option<String>,
}

/// Kinds of catalog parts the planner knows.
pub const PART_KINDS: [&str; 7] = ["switch", "nic", "gpu", "server", "cable", "optic", "other"];

/// A sub-node: a NIC of a server template with the GPU paired to it under
/// the same PCIe switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubNodeSpec {
    /// Index into [`ServerTemplate::nics`].
    pub nic: usize,
    /// Index into [`ServerTemplate::gpus`], when a GPU shares the NIC's PCIe
    /// switch.
    pub gpu: Option<usize>,
}

impl ServerTemplate {
    /// Pairs GPUs with NICs under the same PCIe switch, in declaration
    /// order. Every NIC is a network endpoint; a NIC with no GPU beside it
    /// has `gpu: None`. A NIC that states its GPUs (`gpus = [...]`) carries
    /// the first of them here ([`ServerTemplate::sub_node_gpus`] has them
    /// all), and its GPUs are left out of the pairing of the other NICs.
    pub fn sub_nodes(&self) -> Vec<SubNodeSpec> {
        let claimed: BTreeSet<usize> = self.nics.iter().flat_map(|n| n.gpus.clone()).collect();
        let mut gpus_by_switch: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, g) in self.gpus.iter().enumerate() {
            if let Attachment::PcieSwitch(s) = g.attachment
                && !claimed.contains(&i)
            {
                gpus_by_switch.entry(s).or_default().push(i);
            }
        }
        let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
        self.nics
            .iter()
            .enumerate()
            .map(|(i, nic)| {
                if let Some(&first) = nic.gpus.first() {
                    return SubNodeSpec {
                        nic: i,
                        gpu: Some(first),
                    };
                }
                let gpu = match nic.attachment {
                    Attachment::PcieSwitch(s) => {
                        let next = taken.entry(s).or_insert(0);
                        let gpu = gpus_by_switch.get(&s).and_then(|g| g.get(*next)).copied();
                        *next += 1;
                        gpu
                    }
                    Attachment::RootPort(_) => None,
                };
                SubNodeSpec { nic: i, gpu }
            })
            .collect()
    }

    /// Every GPU of a sub-node: the NIC's stated `gpus`, else its paired
    /// GPU, else none.
    pub fn sub_node_gpus(&self, sn: &SubNodeSpec) -> Vec<usize> {
        let stated = &self.nics[sn.nic].gpus;
        if stated.is_empty() {
            sn.gpu.into_iter().collect()
        } else {
            stated.clone()
        }
    }

    /// The GPUs of a NIC that states several (`gpus = [...]`) as the plan
    /// carries them (`gpu_indices`); empty for a NIC with one GPU or none.
    pub fn shared_gpus(&self, sn: &SubNodeSpec) -> Vec<usize> {
        let gpus = self.sub_node_gpus(sn);
        if gpus.len() > 1 { gpus } else { Vec::new() }
    }

    /// The NVLink domain a GPU belongs to, if any.
    pub fn nvlink_of(&self, gpu: usize) -> Option<&NvlinkDomain> {
        self.nvlink.iter().find(|d| d.gpus.contains(&gpu))
    }

    /// Where a device attachment sits, for people: `plx0 (cpu0)` or
    /// `cpu1 root port`.
    pub fn describe_attachment(&self, a: Attachment) -> String {
        match a {
            Attachment::PcieSwitch(s) => {
                let sw = &self.pcie_switches[s];
                format!("{} ({})", sw.name, self.sockets[sw.socket])
            }
            Attachment::RootPort(s) => format!("{} root port", self.sockets[s]),
        }
    }

    /// The socket a device attachment belongs to.
    pub fn socket_of(&self, a: Attachment) -> usize {
        match a {
            Attachment::PcieSwitch(s) => self.pcie_switches[s].socket,
            Attachment::RootPort(s) => s,
        }
    }

    /// The servers of this template as a person reads them: `node01..node16`.
    pub fn instance_names(&self, inv: &Inventory) -> String {
        let r = &self.instances;
        match r.len() {
            0 => String::new(),
            1 => inv.servers[r.start].name.clone(),
            _ => format!(
                "{}..{}",
                inv.servers[r.start].name,
                inv.servers[r.end - 1].name
            ),
        }
    }
}

impl Inventory {
    /// Parses and checks an inventory. `file` names the input in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Inventory> {
        let raw: RawInventory = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let mut c = Checker {
            lines: text::LineIndex::new(text),
            problems: Vec::new(),
        };
        let inv = c.inventory(raw, file);
        if c.problems.is_empty() {
            Ok(inv)
        } else {
            c.problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            Err(Error::Invalid {
                file: file.to_string(),
                what: "inventory",
                problems: c.problems,
            })
        }
    }

    /// The template a server was made from.
    pub fn template_of(&self, server: &Server) -> &ServerTemplate {
        &self.server_templates[server.template]
    }

    /// The template a switch was made from.
    pub fn switch_template_of(&self, switch: &Switch) -> &SwitchTemplate {
        &self.switch_templates[switch.template]
    }

    /// Total number of sub-nodes (network-attached NICs) over all servers.
    pub fn sub_node_count(&self) -> usize {
        self.server_templates
            .iter()
            .map(|t| t.nics.len() * t.instances.len())
            .sum()
    }

    /// Total number of GPUs.
    pub fn gpu_count(&self) -> usize {
        self.server_templates
            .iter()
            .map(|t| t.gpus.len() * t.instances.len())
            .sum()
    }
}

/// A QoS overrides file: the inventory's `[qos]` table on its own.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQosFile {
    qos: Option<Spanned<RawQos>>,
}

/// Parses and checks a QoS overrides file, a TOML file with the
/// inventory's `[qos]` table (`docs/inventory.md`) and nothing else, for a
/// plan whose physical switches are `switches` (what `[[qos.switch]]` may
/// name). Problems carry the file's lines, as the inventory's do.
pub fn qos_overrides_from_toml(text: &str, file: &str, switches: &[&str]) -> Result<QosOverrides> {
    let raw: RawQosFile = toml::from_str(text).map_err(|e| match Error::toml(file, text, &e) {
        // A table other than `[qos]` at the top.
        Error::Syntax {
            file,
            line,
            column,
            message,
        } if message.ends_with("expected `qos`") => Error::Syntax {
            file,
            line,
            column,
            message: format!(
                "{message}: an overrides file holds only the [qos] table (addresses and VLANs come from the inventory when the plan is designed)"
            ),
        },
        other => other,
    })?;
    let mut c = Checker {
        lines: text::LineIndex::new(text),
        problems: Vec::new(),
    };
    let mut out = QosOverrides {
        file: file.to_string(),
        ..QosOverrides::default()
    };
    match &raw.qos {
        Some(q) => {
            c.qos_names(q);
            let known = KnownSwitches {
                names: switches.to_vec(),
                source: "plan",
                fix: "name a physical switch of the plan",
            };
            c.qos(q, &known, &mut out);
        }
        None => c.problem(
            None,
            "qos",
            "the file has no [qos] table",
            "write the overrides under [qos], [[qos.class]], [qos.cnp], [qos.ecn], [qos.pfc_watchdog] or [[qos.switch]]",
        ),
    }
    if c.problems.is_empty() {
        Ok(out)
    } else {
        c.problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
        Err(Error::Invalid {
            file: file.to_string(),
            what: "QoS overrides",
            problems: c.problems,
        })
    }
}

/// The physical switches a `[[qos.switch]]` table may name, and what to say
/// when it names another.
struct KnownSwitches<'s> {
    names: Vec<&'s str>,
    /// `inventory` or `plan`.
    source: &'static str,
    fix: &'static str,
}

struct Checker {
    lines: text::LineIndex,
    problems: Vec<Problem>,
}

/// Things a device table says about where it sits.
struct DeviceRef<'r> {
    name: &'r str,
    kind: &'static str,
    slot: &'r str,
    pcie_switch: Option<&'r Spanned<String>>,
    socket: Option<&'r Spanned<String>>,
    line: Option<usize>,
}

impl Checker {
    fn line<T>(&self, s: &Spanned<T>) -> Option<usize> {
        Some(self.lines.line(s.span().start))
    }

    /// The line of a template's `count`, else of its `name`.
    fn count_line<T>(&self, count: &Option<Spanned<i64>>, name: &Spanned<T>) -> Option<usize> {
        count.as_ref().map_or(self.line(name), |c| self.line(c))
    }

    fn problem(
        &mut self,
        line: Option<usize>,
        object: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problems.push(Problem::at(line, object, message, fix));
    }

    fn small_uint(
        &mut self,
        object: &str,
        field: &str,
        v: Option<&Spanned<i64>>,
        allowed: &[i64],
        range: Range<i64>,
    ) -> Option<u32> {
        let v = v?;
        let x = *v.get_ref();
        let ok = if allowed.is_empty() {
            range.contains(&x)
        } else {
            allowed.contains(&x)
        };
        if ok {
            Some(x as u32)
        } else {
            let fix = if allowed.is_empty() {
                format!(
                    "set {field} between {} and {}",
                    range.start,
                    range.end.saturating_sub(1)
                )
            } else {
                let list: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
                format!("set {field} to one of {}", list.join(", "))
            };
            self.problem(self.line(v), object, format!("{field} is {x}"), fix);
            None
        }
    }

    fn pattern(&mut self, object: &str, v: Option<&Spanned<String>>) -> Option<NamePattern> {
        let v = v?;
        match NamePattern::parse(v.get_ref()) {
            Ok(p) => Some(p),
            Err(e) => {
                self.problem(self.line(v), object, e, "");
                None
            }
        }
    }

    /// A whole number from a table, within `range`; a problem otherwise.
    fn number(
        &mut self,
        object: &str,
        key: &str,
        v: Option<&Spanned<i64>>,
        range: std::ops::RangeInclusive<i64>,
        fix: &str,
    ) -> Option<i64> {
        let v = v?;
        let x = *v.get_ref();
        if range.contains(&x) {
            Some(x)
        } else {
            self.problem(
                self.line(v),
                object,
                format!("{key} {x} is outside {}..{}", range.start(), range.end()),
                fix,
            );
            None
        }
    }
}

/// Names of racks, servers and switches share one name space because
/// cabling files refer to devices by name alone.
#[derive(Default)]
struct NameRegistry {
    names: BTreeMap<String, Option<usize>>,
}

impl NameRegistry {
    /// Registers a name; returns the line of the earlier holder if taken.
    fn insert(&mut self, name: &str, line: Option<usize>) -> Option<Option<usize>> {
        if let Some(prev) = self.names.get(name) {
            return Some(*prev);
        }
        self.names.insert(name.to_string(), line);
        None
    }
}

fn fmt_line(l: Option<usize>) -> String {
    l.map_or_else(|| "?".to_string(), |l| l.to_string())
}

fn file_stem(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("inventory")
        .to_string()
}

fn is_mac(s: &str) -> bool {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn check_ip(s: &str) -> std::result::Result<(), String> {
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let ip: IpAddr = addr
        .parse()
        .map_err(|_| format!("`{s}` is not an IP address"))?;
    if let Some(p) = prefix {
        let max = if ip.is_ipv4() { 32 } else { 128 };
        match p.parse::<u8>() {
            Ok(n) if n <= max => {}
            _ => return Err(format!("`{s}` has a bad prefix length (0 to {max})")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
