//! Hardware inventory: servers (sockets, PCIe switches, GPUs and NICs in
//! slots), switches (ports, speed, optional VLAN split into two virtual
//! switches), racks and an optional parts catalog.
//!
//! [`Inventory::from_toml`] parses the TOML described in
//! `docs/inventory.md`, expands templates (`count = 16` with a name pattern
//! such as `node{n:02}`) and checks everything it can without designing a
//! network. Every problem found is reported at once, each with its line, the
//! object it concerns and what to change.

mod name_rule;
mod raw;

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::ops::Range;

use toml::Spanned;

use crate::error::{Error, Problem, Result};
pub use crate::fabric::{Part, SwitchRole};
use crate::qos::{self, ClassOverride, Ipv4Prefix, QosOverrides};
use crate::text::{self, NamePattern};
use raw::{
    RawAddressing, RawBiPart, RawCatalogPart, RawGpu, RawInventory, RawNic, RawNicAddress,
    RawPcieSwitch, RawPortList, RawQos, RawRack, RawRole, RawServer, RawSwitch, RawVirtual,
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
}

/// A rack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rack {
    /// Rack name.
    pub name: String,
    /// Site, if given.
    pub site: Option<String>,
    /// Row, if given.
    pub row: Option<String>,
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
    /// Line rate in Gbps.
    pub speed_gbps: u32,
    /// Slot width in lanes.
    pub lanes: Option<u32>,
    /// MAC pattern (may number instances with `{n:02x}`).
    pub mac: Option<NamePattern>,
    /// IP pattern (may number instances with `{n}`).
    pub ip: Option<NamePattern>,
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
    /// Number of ports.
    pub ports: u32,
    /// Speed of every port in Gbps.
    pub port_gbps: u32,
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
    /// The switches made from this template.
    pub instances: Range<usize>,
}

impl SwitchTemplate {
    /// The interface name of a port (`HundredGigE1/0/5`), or its number.
    pub fn port_name(&self, port: u32) -> String {
        match &self.port_name {
            Some(p) => p.replace("{p}", &port.to_string()),
            None => port.to_string(),
        }
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
    /// has `gpu: None`.
    pub fn sub_nodes(&self) -> Vec<SubNodeSpec> {
        let mut gpus_by_switch: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, g) in self.gpus.iter().enumerate() {
            if let Attachment::PcieSwitch(s) = g.attachment {
                gpus_by_switch.entry(s).or_default().push(i);
            }
        }
        let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
        self.nics
            .iter()
            .enumerate()
            .map(|(i, nic)| {
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
            text,
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
        text,
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

/// The TOML syntax mapping, kept here for the modules that still call it
/// by this name; [`Error::toml`] is its one home.
pub(crate) fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> Error {
    Error::toml(file, text, e)
}

struct Checker<'a> {
    text: &'a str,
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

impl Checker<'_> {
    fn line<T>(&self, s: &Spanned<T>) -> Option<usize> {
        Some(text::line_of(self.text, s.span().start))
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

    fn inventory(&mut self, raw: RawInventory, file: &str) -> Inventory {
        let within_limits = self.capacity(&raw);
        self.names(&raw, file);
        let meta = raw.inventory;
        let name = meta
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_else(|| file_stem(file));
        let mut names = NameRegistry::default();
        if !within_limits {
            return Inventory {
                name,
                source: file.to_string(),
                description: None,
                site: None,
                currency: None,
                racks: Vec::new(),
                server_templates: Vec::new(),
                servers: Vec::new(),
                switch_templates: Vec::new(),
                switches: Vec::new(),
                catalog: Vec::new(),
                qos: QosOverrides::default(),
            };
        }

        let mut racks = Vec::new();
        for r in &raw.rack {
            self.racks(r, &mut racks, &mut names);
        }
        let rack_names: BTreeSet<String> = racks.iter().map(|r: &Rack| r.name.clone()).collect();

        let mut server_templates = Vec::new();
        let mut servers = Vec::new();
        for s in &raw.server {
            if let Some(t) = self.server_template(s, &mut servers, &rack_names, &mut names) {
                server_templates.push(t);
            }
        }

        let mut switch_templates = Vec::new();
        let mut switches = Vec::new();
        for s in &raw.switch {
            if let Some(t) = self.switch_template(s, &mut switches, &rack_names, &mut names) {
                switch_templates.push(t);
            }
        }
        for (i, t) in switch_templates.iter_mut().enumerate() {
            for sw in &mut switches[t.instances.clone()] {
                sw.template = i;
            }
        }
        for (i, t) in server_templates.iter().enumerate() {
            for s in &mut servers[t.instances.clone()] {
                s.template = i;
            }
        }

        // Virtual switch names must not collide with any other name.
        for t in &switch_templates {
            for sw in &switches[t.instances.clone()] {
                for v in &t.virtual_switches {
                    let vname = format!("{}-{}", sw.name, v.suffix);
                    if let Some(prev) = names.insert(&vname, v.line) {
                        self.problem(
                            v.line,
                            format!("virtual switch {vname}"),
                            format!("the name is already used at line {}", fmt_line(prev)),
                            "change the suffix or the switch name pattern",
                        );
                    }
                }
            }
        }

        for a in &raw.nic_address {
            self.nic_address(a, &server_templates, &mut servers);
        }

        let mut catalog = Vec::new();
        let mut part_names = BTreeSet::new();
        for p in &raw.catalog {
            self.catalog_part(p, &mut catalog, &mut part_names);
        }

        let mut qos = QosOverrides {
            file: file.to_string(),
            ..QosOverrides::default()
        };
        if let Some(q) = &raw.qos {
            let known = KnownSwitches {
                names: switches.iter().map(|s| s.name.as_str()).collect(),
                source: "inventory",
                fix: "name a physical switch generated by a [[switch]] template",
            };
            self.qos(q, &known, &mut qos);
        }
        if let Some(a) = &raw.addressing {
            self.addressing(a, &mut qos);
        }

        Inventory {
            name,
            source: file.to_string(),
            description: meta.as_ref().and_then(|m| m.description.clone()),
            site: meta.as_ref().and_then(|m| m.site.clone()),
            currency: meta.as_ref().and_then(|m| m.currency.clone()),
            racks,
            server_templates,
            servers,
            switch_templates,
            switches,
            catalog,
            qos,
        }
    }

    /// Checks the sizes the templates' counts add up to against
    /// [`crate::limits`] before any template is expanded, so that a typo
    /// such as `count = 10000000` is refused at once; false after a problem.
    /// Counts out of range are left to [`Checker::template_numbers`].
    fn capacity(&mut self, raw: &RawInventory) -> bool {
        use crate::limits::{Limit, RACKS, SERVERS, SUB_NODES, SWITCH_PORTS, SWITCHES};
        /// A running total and the template that took it over its limit.
        struct Total {
            limit: Limit,
            sum: u64,
            culprit: Option<(String, Option<usize>)>,
        }
        impl Total {
            fn add(&mut self, n: u64, object: &str, line: Option<usize>) {
                self.sum = self.sum.saturating_add(n);
                if self.sum > self.limit.max && self.culprit.is_none() {
                    self.culprit = Some((object.to_string(), line));
                }
            }
        }
        let total = |limit| Total {
            limit,
            sum: 0,
            culprit: None,
        };
        let [
            mut racks,
            mut servers,
            mut sub_nodes,
            mut switches,
            mut ports,
        ] = [RACKS, SERVERS, SUB_NODES, SWITCHES, SWITCH_PORTS].map(total);
        let count = |c: Option<&Spanned<i64>>| -> u64 {
            c.map_or(1, |c| (*c.get_ref()).clamp(0, MAX_COUNT) as u64)
        };
        for r in &raw.rack {
            let r = r.get_ref();
            let line = self.count_line(&r.count, &r.name);
            let object = format!("rack {}", r.name.get_ref());
            racks.add(count(r.count.as_ref()), &object, line);
        }
        for s in &raw.server {
            let s = s.get_ref();
            let line = self.count_line(&s.count, &s.name);
            let object = format!("server template {}", s.name.get_ref());
            let n = count(s.count.as_ref());
            servers.add(n, &object, line);
            sub_nodes.add(n.saturating_mul(s.nic.len() as u64), &object, line);
        }
        for s in &raw.switch {
            let s = s.get_ref();
            let line = self.count_line(&s.count, &s.name);
            let object = format!("switch template {}", s.name.get_ref());
            let n = count(s.count.as_ref());
            switches.add(n, &object, line);
            let per = (*s.ports.get_ref()).max(0) as u64;
            ports.add(n.saturating_mul(per), &object, line);
        }
        let mut ok = true;
        for t in [racks, servers, sub_nodes, switches, ports] {
            if let Some((object, line)) = t.culprit {
                ok = false;
                self.problem(
                    line,
                    object,
                    format!(
                        "the counts add up to {} {}, above the limit of {} ({}; checked before expanding any template)",
                        t.sum, t.limit.what, t.limit.max, t.limit.why
                    ),
                    "check count for a typo, or split the site into several inventories",
                );
            }
        }
        ok
    }

    /// Checks `count` and `start` and the name pattern of a template;
    /// returns the pattern and the instance numbers.
    fn template_numbers(
        &mut self,
        object: &str,
        name: &Spanned<String>,
        count: Option<&Spanned<i64>>,
        start: Option<&Spanned<i64>>,
    ) -> Option<(NamePattern, Range<u64>)> {
        let name_line = self.line(name);
        let pattern = match NamePattern::parse(name.get_ref()) {
            Ok(p) => p,
            Err(e) => {
                self.problem(name_line, object, e, "");
                return None;
            }
        };
        if name.get_ref().trim().is_empty() {
            self.problem(name_line, object, "the name is empty", "give it a name");
            return None;
        }
        let n = match count {
            None => 1,
            Some(c) => {
                let v = *c.get_ref();
                if !(1..=MAX_COUNT).contains(&v) {
                    let why = if v < 0 {
                        format!("count is {v}, a negative number")
                    } else if v == 0 {
                        "count is 0".to_string()
                    } else {
                        format!("count is {v}, more than {MAX_COUNT}")
                    };
                    self.problem(
                        self.line(c),
                        object,
                        why,
                        "set count to how many of them there are, 1 or more (remove the table to have none)",
                    );
                    return None;
                }
                v as u64
            }
        };
        let first = match start {
            None => 1,
            Some(s) => {
                let v = *s.get_ref();
                if !(0..=i64::from(u32::MAX)).contains(&v) {
                    self.problem(
                        self.line(s),
                        object,
                        format!("start is {v}"),
                        "set start to the first instance number, 0 or more",
                    );
                    return None;
                }
                v as u64
            }
        };
        if n > 1 && !pattern.has_placeholder() {
            self.problem(
                name_line,
                object,
                format!(
                    "{n} instances but the name `{}` has no number in it",
                    name.get_ref()
                ),
                format!(
                    "add a placeholder such as `{}{{n:02}}` so each one gets its own name",
                    name.get_ref()
                ),
            );
            return None;
        }
        Some((pattern, first..first + n))
    }

    /// Names the instances of a server or switch template, registers the
    /// names and checks their racks; `None` after a problem.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        kind: &str,
        pattern: &NamePattern,
        numbers: Range<u64>,
        line: Option<usize>,
        rack_pattern: Option<&NamePattern>,
        rack_line: Option<usize>,
        racks: &BTreeSet<String>,
        names: &mut NameRegistry,
    ) -> Option<Vec<(u64, String, Option<String>)>> {
        let mut out = Vec::with_capacity(numbers.end.saturating_sub(numbers.start) as usize);
        for n in numbers {
            let name = pattern.render(n);
            if let Some(prev) = names.insert(&name, line) {
                self.problem(
                    line,
                    format!("{kind} {name}"),
                    format!(
                        "the name is already used at line {} (duplicate name)",
                        fmt_line(prev)
                    ),
                    "give every rack, server and switch its own name (change the pattern or `start`)",
                );
                return None;
            }
            let rack = rack_pattern.map(|p| p.render(n));
            if let Some(r) = &rack
                && !racks.is_empty()
                && !racks.contains(r)
            {
                self.problem(
                    rack_line,
                    format!("{kind} {name}"),
                    format!("rack {r} is not declared (dangling reference)"),
                    format!("declare it in a [[rack]] table or fix the {kind}'s rack pattern"),
                );
                return None;
            }
            out.push((n, name, rack));
        }
        Some(out)
    }

    fn racks(&mut self, r: &Spanned<RawRack>, racks: &mut Vec<Rack>, names: &mut NameRegistry) {
        let raw = r.get_ref();
        let object = format!("rack {}", raw.name.get_ref());
        let Some((pattern, numbers)) =
            self.template_numbers(&object, &raw.name, raw.count.as_ref(), raw.start.as_ref())
        else {
            return;
        };
        let line = self.line(r);
        for n in numbers {
            let name = pattern.render(n);
            if let Some(prev) = names.insert(&name, line) {
                self.problem(
                    line,
                    format!("rack {name}"),
                    format!("the name is already used at line {}", fmt_line(prev)),
                    "give every rack, server and switch its own name",
                );
                return;
            }
            racks.push(Rack {
                name,
                site: raw.site.clone(),
                row: raw.row.clone(),
            });
        }
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

    fn server_template(
        &mut self,
        s: &Spanned<RawServer>,
        servers: &mut Vec<Server>,
        racks: &BTreeSet<String>,
        names: &mut NameRegistry,
    ) -> Option<ServerTemplate> {
        let raw = s.get_ref();
        let line = self.line(s);
        let object = format!("server template {}", raw.name.get_ref());
        let before = self.problems.len();
        let numbers =
            self.template_numbers(&object, &raw.name, raw.count.as_ref(), raw.start.as_ref());

        // Sockets.
        let sockets = raw.sockets.get_ref().clone();
        if sockets.is_empty() {
            self.problem(
                self.line(&raw.sockets),
                &object,
                "no CPU sockets",
                "list the sockets, e.g. sockets = [\"cpu0\", \"cpu1\"]",
            );
        }
        let mut seen = BTreeSet::new();
        for sk in &sockets {
            if !seen.insert(sk.as_str()) {
                self.problem(
                    self.line(&raw.sockets),
                    &object,
                    format!("socket {sk} is listed twice"),
                    "give each socket its own name",
                );
            }
        }

        // PCIe switches.
        let mut pcie_switches = Vec::new();
        for p in &raw.pcie_switch {
            if let Some(ps) = self.pcie_switch(&object, p, &sockets, &pcie_switches) {
                pcie_switches.push(ps);
            }
        }

        // Devices share one name space and one slot space per server.
        let mut device_names: BTreeMap<String, Option<usize>> = BTreeMap::new();
        let mut slots: BTreeMap<String, Option<usize>> = BTreeMap::new();
        let mut gpus = Vec::new();
        for (i, g) in raw.gpu.iter().enumerate() {
            if let Some(gpu) = self.gpu(
                &object,
                g,
                i,
                &sockets,
                &pcie_switches,
                &mut device_names,
                &mut slots,
            ) {
                gpus.push(gpu);
            }
        }
        let mut nics = Vec::new();
        for (i, n) in raw.nic.iter().enumerate() {
            if let Some(nic) = self.nic(
                &object,
                n,
                i,
                &sockets,
                &pcie_switches,
                &mut device_names,
                &mut slots,
            ) {
                nics.push(nic);
            }
        }

        // Slots per PCIe switch.
        for (i, ps) in pcie_switches.iter().enumerate() {
            if let Some(max) = ps.slots {
                let used = gpus
                    .iter()
                    .map(|g: &Gpu| g.attachment)
                    .chain(nics.iter().map(|n: &Nic| n.attachment))
                    .filter(|a| *a == Attachment::PcieSwitch(i))
                    .count();
                if used > max as usize {
                    self.problem(
                        ps.line,
                        format!("{object} PCIe switch {}", ps.name),
                        format!("{used} devices in {max} slots (overbooked)"),
                        "raise slots to the switch's real downstream slot count or move devices to another PCIe switch",
                    );
                }
            }
        }

        let rack_pattern = match &raw.rack {
            None => None,
            Some(r) => match NamePattern::parse(r.get_ref()) {
                Ok(p) => Some(p),
                Err(e) => {
                    self.problem(self.line(r), &object, e, "");
                    None
                }
            },
        };

        let hardware_errors = self.problems.len() > before;
        let (pattern, numbers) = numbers?;

        // Names first, even when the hardware has problems, so that a
        // duplicate name is reported in the same run.
        let rack_line = raw.rack.as_ref().and_then(|r| self.line(r));
        let expanded = self.expand(
            "server",
            &pattern,
            numbers,
            line,
            rack_pattern.as_ref(),
            rack_line,
            racks,
            names,
        )?;
        if hardware_errors {
            return None;
        }
        let start = servers.len();
        let has_addresses = nics.iter().any(|n| n.mac.is_some() || n.ip.is_some());
        for (n, name, rack) in expanded {
            let mut nic_addresses = Vec::new();
            if has_addresses {
                for (nic, rawnic) in nics.iter().zip(&raw.nic) {
                    let mac = nic.mac.as_ref().map(|p| p.render(n));
                    let ip = nic.ip.as_ref().map(|p| p.render(n));
                    if let Some(m) = &mac
                        && !is_mac(m)
                    {
                        self.problem(
                            rawnic.get_ref().mac.as_ref().and_then(|m| self.line(m)),
                            format!("server {name} NIC {}", nic.name),
                            format!("MAC `{m}` is not six hexadecimal bytes"),
                            "write it as aa:bb:cc:dd:ee:ff (use {n:02x} to number servers)",
                        );
                        return None;
                    }
                    if let Some(a) = &ip
                        && let Err(e) = check_ip(a)
                    {
                        self.problem(
                            rawnic.get_ref().ip.as_ref().and_then(|m| self.line(m)),
                            format!("server {name} NIC {}", nic.name),
                            e,
                            "write an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.{n}.1/24",
                        );
                        return None;
                    }
                    nic_addresses.push(NicAddress { mac, ip });
                }
            }
            servers.push(Server {
                name,
                template: 0,
                number: n,
                rack,
                nic_addresses,
            });
        }
        Some(ServerTemplate {
            pattern: raw.name.get_ref().clone(),
            line,
            model: raw.model.clone(),
            sockets,
            pcie_switches,
            gpus,
            nics,
            instances: start..servers.len(),
        })
    }

    fn pcie_switch(
        &mut self,
        server: &str,
        p: &Spanned<RawPcieSwitch>,
        sockets: &[String],
        existing: &[PcieSwitch],
    ) -> Option<PcieSwitch> {
        let raw = p.get_ref();
        let line = self.line(p);
        let object = format!("{server} PCIe switch {}", raw.name);
        if existing.iter().any(|e| e.name == raw.name) {
            self.problem(
                line,
                &object,
                "the name is used twice in this server (duplicate name)",
                "give each PCIe switch its own name",
            );
            return None;
        }
        let socket = sockets.iter().position(|s| s == raw.socket.get_ref());
        if socket.is_none() {
            self.problem(
                self.line(&raw.socket),
                &object,
                format!(
                    "socket {} is not one of this server's sockets [{}] (dangling reference)",
                    raw.socket.get_ref(),
                    sockets.join(", ")
                ),
                "name one of the sockets listed in `sockets`",
            );
        }
        let lanes = self.small_uint(
            &object,
            "lanes",
            raw.lanes.as_ref(),
            &[1, 2, 4, 8, 16, 32],
            0..0,
        );
        let pcie_gen = self.small_uint(&object, "pcie_gen", raw.pcie_gen.as_ref(), &[], 1..7);
        let slots = self.small_uint(&object, "slots", raw.slots.as_ref(), &[], 1..257);
        Some(PcieSwitch {
            name: raw.name.clone(),
            model: raw.model.clone(),
            socket: socket?,
            root_port: raw.root_port.clone().unwrap_or_else(|| raw.name.clone()),
            lanes,
            pcie_gen,
            slots,
            line,
        })
    }

    /// Resolves where a device sits and registers its name and slot.
    fn attach(
        &mut self,
        server: &str,
        d: DeviceRef<'_>,
        sockets: &[String],
        pcie_switches: &[PcieSwitch],
        device_names: &mut BTreeMap<String, Option<usize>>,
        slots: &mut BTreeMap<String, Option<usize>>,
    ) -> Option<Attachment> {
        let object = format!("{server} {} {}", d.kind, d.name);
        let mut ok = true;
        if let Some(prev) = device_names.insert(d.name.to_string(), d.line) {
            self.problem(
                d.line,
                &object,
                format!(
                    "the name is already used at line {} in this server (duplicate name)",
                    fmt_line(prev)
                ),
                "give every GPU and NIC of a server its own name",
            );
            ok = false;
        }
        if let Some(prev) = slots.insert(d.slot.to_string(), d.line) {
            self.problem(
                d.line,
                &object,
                format!(
                    "slot {} already holds the device at line {} (slot overbooked)",
                    d.slot,
                    fmt_line(prev)
                ),
                "put each device in its own slot",
            );
            ok = false;
        }
        let attachment = match (d.pcie_switch, d.socket) {
            (Some(p), None) => match pcie_switches.iter().position(|s| &s.name == p.get_ref()) {
                Some(i) => Some(Attachment::PcieSwitch(i)),
                None => {
                    let known: Vec<&str> = pcie_switches.iter().map(|s| s.name.as_str()).collect();
                    self.problem(
                        self.line(p),
                        &object,
                        format!(
                            "PCIe switch {} is not defined in this server (dangling reference); defined: [{}]",
                            p.get_ref(),
                            known.join(", ")
                        ),
                        "add a [[server.pcie_switch]] with that name or fix the reference",
                    );
                    None
                }
            },
            (None, Some(s)) => match sockets.iter().position(|x| x == s.get_ref()) {
                Some(i) => Some(Attachment::RootPort(i)),
                None => {
                    self.problem(
                        self.line(s),
                        &object,
                        format!(
                            "socket {} is not one of this server's sockets (dangling reference)",
                            s.get_ref()
                        ),
                        "name one of the sockets listed in `sockets`",
                    );
                    None
                }
            },
            (None, None) => {
                self.problem(
                    d.line,
                    &object,
                    "it is under no PCIe switch",
                    "set pcie_switch = \"<name>\" (or socket = \"<name>\" if it sits directly on a CPU root port)",
                );
                None
            }
            (Some(_), Some(_)) => {
                self.problem(
                    d.line,
                    &object,
                    "both pcie_switch and socket are set",
                    "set pcie_switch for a device under a PCIe switch, or socket for one directly on a root port, not both",
                );
                None
            }
        };
        if ok { attachment } else { None }
    }

    #[allow(clippy::too_many_arguments)]
    fn gpu(
        &mut self,
        server: &str,
        g: &Spanned<RawGpu>,
        index: usize,
        sockets: &[String],
        pcie_switches: &[PcieSwitch],
        device_names: &mut BTreeMap<String, Option<usize>>,
        slots: &mut BTreeMap<String, Option<usize>>,
    ) -> Option<Gpu> {
        let raw = g.get_ref();
        let line = self.line(g);
        let name = raw.name.clone().unwrap_or_else(|| format!("gpu{index}"));
        let slot = raw.slot.clone().unwrap_or_else(|| name.clone());
        let object = format!("{server} GPU {name}");
        let lanes = self.small_uint(
            &object,
            "lanes",
            raw.lanes.as_ref(),
            &[1, 2, 4, 8, 16, 32],
            0..0,
        );
        let memory_gb = self.small_uint(
            &object,
            "memory_gb",
            raw.memory_gb.as_ref(),
            &[],
            1..100_000,
        );
        let attachment = self.attach(
            server,
            DeviceRef {
                name: &name,
                kind: "GPU",
                slot: &slot,
                pcie_switch: raw.pcie_switch.as_ref(),
                socket: raw.socket.as_ref(),
                line,
            },
            sockets,
            pcie_switches,
            device_names,
            slots,
        )?;
        Some(Gpu {
            name,
            slot,
            attachment,
            model: raw.model.clone(),
            lanes,
            memory_gb,
            line,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn nic(
        &mut self,
        server: &str,
        n: &Spanned<RawNic>,
        index: usize,
        sockets: &[String],
        pcie_switches: &[PcieSwitch],
        device_names: &mut BTreeMap<String, Option<usize>>,
        slots: &mut BTreeMap<String, Option<usize>>,
    ) -> Option<Nic> {
        let raw = n.get_ref();
        let line = self.line(n);
        let name = raw.name.clone().unwrap_or_else(|| format!("nic{index}"));
        let slot = raw.slot.clone().unwrap_or_else(|| name.clone());
        let object = format!("{server} NIC {name}");
        let speed = *raw.speed_gbps.get_ref();
        let speed_ok = (1..=100_000).contains(&speed);
        if !speed_ok {
            self.problem(
                self.line(&raw.speed_gbps),
                &object,
                format!("speed_gbps is {speed}"),
                "set the NIC's line rate in Gbps, e.g. 100",
            );
        }
        let lanes = self.small_uint(
            &object,
            "lanes",
            raw.lanes.as_ref(),
            &[1, 2, 4, 8, 16, 32],
            0..0,
        );
        if let Some(nd) = &raw.netdev
            && let Some(prev) = device_names.get(nd.get_ref())
        {
            self.problem(
                self.line(nd),
                &object,
                format!(
                    "netdev {} is already a device name at line {} in this server",
                    nd.get_ref(),
                    fmt_line(*prev)
                ),
                "give every NIC its own interface name",
            );
        }
        let mac = self.pattern(&object, raw.mac.as_ref());
        let ip = self.pattern(&object, raw.ip.as_ref());
        let attachment = self.attach(
            server,
            DeviceRef {
                name: &name,
                kind: "NIC",
                slot: &slot,
                pcie_switch: raw.pcie_switch.as_ref(),
                socket: raw.socket.as_ref(),
                line,
            },
            sockets,
            pcie_switches,
            device_names,
            slots,
        )?;
        if !speed_ok {
            return None;
        }
        if let Some(nd) = &raw.netdev {
            device_names.insert(nd.get_ref().clone(), self.line(nd));
        }
        Some(Nic {
            name,
            netdev: raw.netdev.as_ref().map(|n| n.get_ref().clone()),
            slot,
            attachment,
            model: raw.model.clone(),
            speed_gbps: speed as u32,
            lanes,
            mac,
            ip,
            line,
        })
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

    fn port_list(
        &mut self,
        object: &str,
        field: &str,
        v: &Spanned<RawPortList>,
    ) -> Option<Vec<u32>> {
        let parsed = match v.get_ref() {
            RawPortList::Text(t) => text::parse_port_list(t),
            RawPortList::List(l) => {
                let mut out = Vec::new();
                let mut err = None;
                for &p in l {
                    if !(1..=i64::from(u32::MAX)).contains(&p) {
                        err = Some(format!("port {p}: ports are numbered from 1"));
                        break;
                    }
                    out.push(p as u32);
                }
                match err {
                    Some(e) => Err(e),
                    None => {
                        out.sort_unstable();
                        let n = out.len();
                        out.dedup();
                        if out.len() == n {
                            Ok(out)
                        } else {
                            Err("the list names some ports more than once".to_string())
                        }
                    }
                }
            }
        };
        match parsed {
            Ok(p) => Some(p),
            Err(e) => {
                self.problem(self.line(v), object, format!("{field}: {e}"), "");
                None
            }
        }
    }

    fn switch_template(
        &mut self,
        s: &Spanned<RawSwitch>,
        switches: &mut Vec<Switch>,
        racks: &BTreeSet<String>,
        names: &mut NameRegistry,
    ) -> Option<SwitchTemplate> {
        let raw = s.get_ref();
        let line = self.line(s);
        let object = format!("switch template {}", raw.name.get_ref());
        let before = self.problems.len();
        let numbers =
            self.template_numbers(&object, &raw.name, raw.count.as_ref(), raw.start.as_ref());

        let ports = *raw.ports.get_ref();
        if !(1..=4096).contains(&ports) {
            self.problem(
                self.line(&raw.ports),
                &object,
                format!("ports is {ports}"),
                "set ports to the switch's port count (1 to 4096)",
            );
        }
        let port_gbps = *raw.port_gbps.get_ref();
        if !(1..=100_000).contains(&port_gbps) {
            self.problem(
                self.line(&raw.port_gbps),
                &object,
                format!("port_gbps is {port_gbps}"),
                "set the speed of the ports in Gbps, e.g. 100",
            );
        }
        let ports = ports.clamp(0, 4096) as u32;
        if let Some(p) = &raw.port_name
            && !p.get_ref().contains("{p}")
        {
            self.problem(
                self.line(p),
                &object,
                format!(
                    "port_name `{}` has no {{p}} for the port number",
                    p.get_ref()
                ),
                "write it like \"HundredGigE1/0/{p}\" or \"Ethernet{p}\"",
            );
        }
        if let Some(p) = &raw.price
            && !(p.get_ref().is_finite() && *p.get_ref() >= 0.0)
        {
            self.problem(
                self.line(p),
                &object,
                format!("price is {}", p.get_ref()),
                "set a price of 0 or more",
            );
        }
        let reserved = match &raw.reserved_ports {
            None => Vec::new(),
            Some(r) => self
                .port_list(&object, "reserved_ports", r)
                .unwrap_or_default(),
        };
        if let Some(&p) = reserved.iter().find(|&&p| p > ports)
            && let Some(r) = &raw.reserved_ports
        {
            self.problem(
                self.line(r),
                &object,
                format!("reserved port {p} does not exist on a {ports}-port switch"),
                "reserve ports between 1 and the port count",
            );
        }
        let virtual_switches = self.virtual_switches(&object, raw, ports, &reserved);

        let rack_pattern = match &raw.rack {
            None => None,
            Some(r) => match NamePattern::parse(r.get_ref()) {
                Ok(p) => Some(p),
                Err(e) => {
                    self.problem(self.line(r), &object, e, "");
                    None
                }
            },
        };
        let switch_errors = self.problems.len() > before;
        let (pattern, numbers) = numbers?;
        let rack_line = raw.rack.as_ref().and_then(|r| self.line(r));
        let expanded = self.expand(
            "switch",
            &pattern,
            numbers,
            line,
            rack_pattern.as_ref(),
            rack_line,
            racks,
            names,
        )?;
        let start = switches.len();
        switches.extend(expanded.into_iter().map(|(number, name, rack)| Switch {
            name,
            template: 0,
            number,
            rack,
        }));
        if switch_errors {
            switches.truncate(start);
            return None;
        }
        Some(SwitchTemplate {
            pattern: raw.name.get_ref().clone(),
            line,
            model: raw.model.clone(),
            ports,
            port_gbps: port_gbps as u32,
            port_name: raw.port_name.as_ref().map(|p| p.get_ref().clone()),
            rack: raw.rack.as_ref().map(|r| r.get_ref().clone()),
            price: raw.price.as_ref().map(|p| *p.get_ref()),
            role: raw.role.map(|r| match r {
                RawRole::Leaf => SwitchRole::Leaf,
                RawRole::Spine => SwitchRole::Spine,
                RawRole::Core => SwitchRole::Core,
            }),
            reserved_ports: reserved,
            virtual_switches,
            instances: start..switches.len(),
        })
    }

    fn virtual_switches(
        &mut self,
        object: &str,
        raw: &RawSwitch,
        ports: u32,
        reserved: &[u32],
    ) -> Vec<VirtualSpec> {
        let halves: &[Spanned<RawVirtual>] = &raw.virtual_switches;
        if halves.is_empty() {
            return Vec::new();
        }
        if halves.len() != 2 {
            self.problem(
                self.line(&halves[0]),
                object,
                format!(
                    "{} virtual switches; a split switch has exactly two halves, one per BiGraph part",
                    halves.len()
                ),
                "declare two [[switch.virtual]] tables or none",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut owner: BTreeMap<u32, String> = BTreeMap::new();
        for h in halves {
            let v = h.get_ref();
            let line = self.line(h);
            let suffix = v.suffix.get_ref().trim().to_string();
            let vobject = format!("{object} virtual switch {suffix}");
            if suffix.is_empty() || suffix.contains(char::is_whitespace) {
                self.problem(
                    self.line(&v.suffix),
                    &vobject,
                    "the suffix is empty or has spaces",
                    "use a short suffix such as \"u\" or \"a\"",
                );
                continue;
            }
            let vlan = *v.vlan.get_ref();
            if !(1..=4094).contains(&vlan) {
                self.problem(
                    self.line(&v.vlan),
                    &vobject,
                    format!("VLAN {vlan} is not a usable VLAN id"),
                    "use a VLAN id between 1 and 4094",
                );
                continue;
            }
            let Some(list) = self.port_list(&vobject, "ports", &v.ports) else {
                continue;
            };
            let mut bad = false;
            for &p in &list {
                if p > ports {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!("port {p} does not exist on a {ports}-port switch"),
                        "list ports between 1 and the port count",
                    );
                    bad = true;
                    break;
                }
                if reserved.binary_search(&p).is_ok() {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!("port {p} is also reserved (port overbooked)"),
                        "take reserved ports out of the half's port list",
                    );
                    bad = true;
                    break;
                }
                if let Some(other) = owner.insert(p, suffix.clone()) {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!(
                            "port {p} also belongs to virtual switch {other} (port overbooked)"
                        ),
                        "give each port to one half only",
                    );
                    bad = true;
                    break;
                }
            }
            if list.is_empty() {
                self.problem(
                    self.line(&v.ports),
                    &vobject,
                    "no ports",
                    "list the ports of this half, e.g. ports = \"1-16\"",
                );
                bad = true;
            }
            if bad {
                continue;
            }
            out.push(VirtualSpec {
                suffix,
                ports: list,
                vlan: vlan as u16,
                part: match v.part {
                    Some(RawBiPart::Upper) => Part::Upper,
                    Some(RawBiPart::Lower) => Part::Lower,
                    None => Part::Upper,
                },
                line,
            });
        }
        if out.len() != 2 {
            return Vec::new();
        }
        // Parts: explicit ones win; a missing one is the other's opposite;
        // neither given: first upper, second lower.
        let given: Vec<Option<RawBiPart>> = halves.iter().map(|h| h.get_ref().part).collect();
        match (given[0], given[1]) {
            (None, None) => {
                out[0].part = Part::Upper;
                out[1].part = Part::Lower;
            }
            (Some(_), None) => out[1].part = out[0].part.other(),
            (None, Some(_)) => out[0].part = out[1].part.other(),
            (Some(a), Some(b)) if a == b => {
                self.problem(
                    out[1].line,
                    format!("{object} virtual switch {}", out[1].suffix),
                    format!("both halves are in the {} part", out[0].part.as_str()),
                    "put one half in the upper part and the other in the lower part",
                );
                return Vec::new();
            }
            _ => {}
        }
        if out[0].suffix == out[1].suffix {
            self.problem(
                out[1].line,
                format!("{object} virtual switch {}", out[1].suffix),
                "both halves have the same suffix",
                "give the halves different suffixes",
            );
            return Vec::new();
        }
        if out[0].vlan == out[1].vlan {
            self.problem(
                out[1].line,
                format!("{object} virtual switch {}", out[1].suffix),
                format!("both halves use VLAN {}", out[0].vlan),
                "give each half its own VLAN id",
            );
            return Vec::new();
        }
        out
    }

    fn nic_address(
        &mut self,
        a: &Spanned<RawNicAddress>,
        templates: &[ServerTemplate],
        servers: &mut [Server],
    ) {
        let raw = a.get_ref();
        let line = self.line(a);
        let object = format!(
            "nic_address for {} {}",
            raw.server.get_ref(),
            raw.nic.get_ref()
        );
        let Some(si) = servers.iter().position(|s| &s.name == raw.server.get_ref()) else {
            self.problem(
                self.line(&raw.server),
                &object,
                format!(
                    "server {} is not in the inventory (dangling reference)",
                    raw.server.get_ref()
                ),
                "name a server generated by a [[server]] template",
            );
            return;
        };
        let t = &templates[servers[si].template];
        let Some(ni) = t.nics.iter().position(|n| &n.name == raw.nic.get_ref()) else {
            let known: Vec<&str> = t.nics.iter().map(|n| n.name.as_str()).collect();
            self.problem(
                self.line(&raw.nic),
                &object,
                format!(
                    "server {} has no NIC {} (dangling reference); its NICs: [{}]",
                    raw.server.get_ref(),
                    raw.nic.get_ref(),
                    known.join(", ")
                ),
                "name one of the server's NICs",
            );
            return;
        };
        if let Some(m) = &raw.mac
            && !is_mac(m.get_ref())
        {
            self.problem(
                self.line(m),
                &object,
                format!("MAC `{}` is not six hexadecimal bytes", m.get_ref()),
                "write it as aa:bb:cc:dd:ee:ff",
            );
            return;
        }
        if let Some(ip) = &raw.ip
            && let Err(e) = check_ip(ip.get_ref())
        {
            self.problem(
                self.line(ip),
                &object,
                e,
                "write an IPv4 or IPv6 address with an optional /prefix",
            );
            return;
        }
        let server = &mut servers[si];
        if server.nic_addresses.is_empty() {
            server.nic_addresses = vec![NicAddress::default(); t.nics.len()];
        }
        let slot = &mut server.nic_addresses[ni];
        if let Some(m) = &raw.mac {
            slot.mac = Some(m.get_ref().to_ascii_lowercase());
        }
        if let Some(ip) = &raw.ip {
            slot.ip = Some(ip.get_ref().clone());
        }
        let _ = line;
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

    /// The `[qos]` table: every value in range, names that exist, and the
    /// consistency the overrides show on their own; conflicts with a
    /// topology's defaults are found when `design` resolves the intent.
    fn qos(&mut self, q: &Spanned<RawQos>, switches: &KnownSwitches<'_>, out: &mut QosOverrides) {
        let raw = q.get_ref();
        out.line = self.line(q);
        let mtu_range = i64::from(qos::MIN_MTU)..=i64::from(qos::MAX_MTU);
        out.mtu = self
            .number(
                "qos",
                "mtu",
                raw.mtu.as_ref(),
                mtu_range.clone(),
                "set mtu to the switch ports' MTU, e.g. 9216",
            )
            .map(|m| m as u32);
        out.per_direction = raw.per_direction;
        out.gid_index = self
            .number(
                "qos",
                "gid_index",
                raw.gid_index.as_ref(),
                0..=255,
                "set the RoCEv2 GID index of the NICs, usually 3",
            )
            .map(|g| g as u8);
        let mut dscps: BTreeMap<i64, String> = BTreeMap::new();
        for c in &raw.class {
            let v = c.get_ref();
            let line = self.line(c);
            let name = v.name.get_ref().trim().to_string();
            let object = format!("qos class {name}");
            if name.is_empty() {
                self.problem(
                    line,
                    "qos class",
                    "the name is empty",
                    "give the class a name",
                );
                continue;
            }
            if out.classes.iter().any(|o| o.name == name) {
                self.problem(
                    line,
                    &object,
                    "the class is given twice",
                    "merge the two [[qos.class]] tables",
                );
                continue;
            }
            let part = match v.part.as_ref().map(|p| (p, p.get_ref().as_str())) {
                None => None,
                Some((_, "upper")) => Some(Some(Part::Upper)),
                Some((_, "lower")) => Some(Some(Part::Lower)),
                Some((_, "any")) => Some(None),
                Some((p, other)) => {
                    self.problem(
                        self.line(p),
                        &object,
                        format!("part `{other}` is not known"),
                        "use \"upper\", \"lower\" or \"any\"",
                    );
                    None
                }
            };
            let dscp = self.number(
                &object,
                "dscp",
                v.dscp.as_ref(),
                0..=63,
                "set dscp between 0 and 63",
            );
            if let (Some(d), Some(sp)) = (dscp, v.dscp.as_ref())
                && let Some(other) = dscps.insert(d, name.clone())
            {
                self.problem(
                    self.line(sp),
                    &object,
                    format!("DSCP {d} is also the DSCP of class {other}"),
                    "give every class its own DSCP",
                );
            }
            let priority = self.number(
                &object,
                "priority",
                v.priority.as_ref(),
                0..=7,
                "set priority between 0 and 7",
            );
            out.classes.push(ClassOverride {
                name,
                part,
                dscp: dscp.map(|d| d as u8),
                priority: priority.map(|p| p as u8),
                lossless: v.lossless,
                line,
            });
        }
        if let Some(c) = &raw.cnp {
            let v = c.get_ref();
            out.cnp_line = self.line(c);
            out.cnp_dscp = self
                .number(
                    "qos cnp",
                    "dscp",
                    v.dscp.as_ref(),
                    0..=63,
                    "set dscp between 0 and 63",
                )
                .map(|d| d as u8);
            out.cnp_priority = self
                .number(
                    "qos cnp",
                    "priority",
                    v.priority.as_ref(),
                    0..=7,
                    "set priority between 0 and 7",
                )
                .map(|p| p as u8);
            if let Some(d) = out.cnp_dscp
                && let Some(other) = dscps.get(&i64::from(d))
            {
                self.problem(
                    out.cnp_line,
                    "qos cnp",
                    format!("DSCP {d} is also the DSCP of class {other}"),
                    "give the CNP its own DSCP",
                );
            }
            if let Some(p) = out.cnp_priority
                && let Some(c) = out
                    .classes
                    .iter()
                    .find(|c| c.priority == Some(p) && c.lossless != Some(false))
            {
                let (name, line) = (c.name.clone(), c.line);
                self.problem(
                    line,
                    format!("qos class {name}"),
                    format!("lossless priority {p} is also the CNP's strict-priority queue"),
                    "give lossless classes a priority other than the CNP's",
                );
            }
        }
        if let Some(e) = &raw.ecn {
            let v = e.get_ref();
            out.ecn_line = self.line(e);
            let fix = "give the queue depth in KB (1024 bytes), e.g. 150";
            let min = self.number("qos ecn", "min_kb", v.min_kb.as_ref(), 1..=1_000_000, fix);
            let max = self.number("qos ecn", "max_kb", v.max_kb.as_ref(), 1..=1_000_000, fix);
            let probability = self.number(
                "qos ecn",
                "probability",
                v.probability.as_ref(),
                1..=100,
                "set the marking probability in percent",
            );
            if let (Some(a), Some(b)) = (min, max)
                && a >= b
            {
                self.problem(
                    out.ecn_line,
                    "qos ecn",
                    format!("min_kb {a} is not below max_kb {b}"),
                    "set min_kb below max_kb, e.g. 150 and 1500",
                );
            }
            out.ecn = (
                min.map(|x| x as u32),
                max.map(|x| x as u32),
                probability.map(|x| x as u8),
            );
        }
        if let Some(w) = &raw.pfc_watchdog {
            let v = w.get_ref();
            out.watchdog_line = self.line(w);
            let fix = "give the timer in milliseconds (10 to 60000)";
            let get = |c: &mut Self, key: &str, x: Option<&Spanned<i64>>| {
                c.number("qos pfc_watchdog", key, x, 10..=60_000, fix)
                    .map(|x| x as u32)
            };
            out.watchdog = (
                get(self, "detection_ms", v.detection_ms.as_ref()),
                get(self, "restoration_ms", v.restoration_ms.as_ref()),
                get(self, "polling_ms", v.polling_ms.as_ref()),
            );
        }
        for sw in &raw.switch {
            let v = sw.get_ref();
            let line = self.line(sw);
            let name = v.name.get_ref().clone();
            let object = format!("qos switch {name}");
            if !switches.names.contains(&name.as_str()) {
                self.problem(
                    self.line(&v.name),
                    &object,
                    format!(
                        "switch {name} is not in the {} (dangling reference)",
                        switches.source
                    ),
                    switches.fix,
                );
                continue;
            }
            if out.switch_mtu.iter().any(|s| s.0 == name) {
                self.problem(
                    line,
                    &object,
                    "the switch is given twice",
                    "keep one [[qos.switch]] table per switch",
                );
                continue;
            }
            if let Some(m) = self.number(
                &object,
                "mtu",
                Some(&v.mtu),
                mtu_range.clone(),
                "set the MTU of the switch's ports, e.g. 9216",
            ) {
                out.switch_mtu.push((name, m as u32, line));
            }
        }
    }

    /// The `[addressing]` table.
    fn addressing(&mut self, a: &Spanned<RawAddressing>, out: &mut QosOverrides) {
        let raw = a.get_ref();
        for (key, value, max_len, target) in [
            ("sub_node_pool", raw.sub_node_pool.as_ref(), 30u8, 0),
            ("link_pool", raw.link_pool.as_ref(), 31u8, 1),
        ] {
            let Some(v) = value else { continue };
            match Ipv4Prefix::parse(v.get_ref()) {
                Ok(p) if p.len <= max_len => {
                    let s = p.to_string_with_len();
                    if target == 0 {
                        out.addressing.sub_node_pool = s;
                    } else {
                        out.addressing.link_pool = s;
                    }
                }
                Ok(p) => self.problem(
                    self.line(v),
                    "addressing",
                    format!("{key} {p} is too small"),
                    format!("give a prefix of length {max_len} or shorter"),
                ),
                Err(e) => self.problem(
                    self.line(v),
                    "addressing",
                    format!("{key}: {e}"),
                    "write an IPv4 prefix such as 10.0.0.0/8",
                ),
            }
        }
        if let Some(v) = self.number(
            "addressing",
            "vlan",
            raw.vlan.as_ref(),
            1..=4094,
            "use a VLAN id between 1 and 4094",
        ) {
            out.addressing.vlan = v as u16;
        }
    }

    fn catalog_part(
        &mut self,
        p: &Spanned<RawCatalogPart>,
        catalog: &mut Vec<CatalogPart>,
        names: &mut BTreeSet<String>,
    ) {
        let raw = p.get_ref();
        let object = format!("catalog part {}", raw.name.get_ref());
        if !names.insert(raw.name.get_ref().clone()) {
            self.problem(
                self.line(&raw.name),
                &object,
                "the name is used twice in the catalog (duplicate name)",
                "give every part its own name",
            );
            return;
        }
        let kind = raw.kind.get_ref().as_str();
        if !PART_KINDS.contains(&kind) {
            self.problem(
                self.line(&raw.kind),
                &object,
                format!("kind `{kind}` is not known"),
                format!("use one of {}", PART_KINDS.join(", ")),
            );
            return;
        }
        let price = *raw.price.get_ref();
        if !(price.is_finite() && price >= 0.0) {
            self.problem(
                self.line(&raw.price),
                &object,
                format!("price is {price}"),
                "set a price of 0 or more",
            );
            return;
        }
        catalog.push(CatalogPart {
            name: raw.name.get_ref().clone(),
            kind: kind.to_string(),
            price,
            description: raw.description.clone(),
        });
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
