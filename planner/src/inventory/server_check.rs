//! Checking server templates: sockets, PCIe switches, GPUs and NICs in their slots, and NIC addresses.

use super::*;

/// A server template's GPUs by name, for the lists that name them.
struct GpuNames<'g> {
    index: BTreeMap<&'g str, usize>,
    gpus: &'g [Gpu],
    /// The number of GPU tables; fewer GPUs means some were refused.
    written: usize,
}

/// A list for a message: the first eight names, then how many more.
fn first_eight(names: &[&str]) -> String {
    let shown = names.iter().take(8).copied().collect::<Vec<_>>().join(", ");
    if names.len() > 8 {
        format!("{shown} and {} more", names.len() - 8)
    } else {
        shown
    }
}

impl Checker {
    pub(super) fn server_template(
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
        let mut gpu_nic: BTreeMap<usize, String> = BTreeMap::new();
        let by_name = GpuNames {
            index: gpus
                .iter()
                .enumerate()
                .map(|(i, g)| (g.name.as_str(), i))
                .collect(),
            gpus: &gpus,
            written: raw.gpu.len(),
        };
        for (i, n) in raw.nic.iter().enumerate() {
            if let Some(mut nic) = self.nic(
                &object,
                n,
                i,
                &sockets,
                &pcie_switches,
                &mut device_names,
                &mut slots,
            ) {
                if let Some(list) = &n.get_ref().gpus {
                    let nic_object = format!("{object} NIC {}", nic.name);
                    match self.gpu_refs(&nic_object, list, &by_name) {
                        Some(g) => nic.gpus = g,
                        None => continue,
                    }
                    for &g in &nic.gpus {
                        if let Some(other) = gpu_nic.insert(g, nic.name.clone()) {
                            self.problem(
                                self.line(list),
                                &nic_object,
                                format!(
                                    "GPU {} is already given to NIC {other}: a GPU's traffic leaves through one NIC",
                                    gpus[g].name
                                ),
                                format!(
                                    "list {} under one NIC only (a NIC with two ports is one NIC)",
                                    gpus[g].name
                                ),
                            );
                        }
                    }
                }
                nics.push(nic);
            }
        }

        // NVLink domains.
        let mut nvlink: Vec<NvlinkDomain> = Vec::new();
        let mut in_domain: BTreeMap<usize, usize> = BTreeMap::new();
        for (i, d) in raw.nvlink.iter().enumerate() {
            if let Some(d) = self.nvlink_domain(&object, d, i, &by_name, &nvlink, &in_domain) {
                for &g in &d.gpus {
                    in_domain.insert(g, nvlink.len());
                }
                nvlink.push(d);
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

        if self.problems.len() == before {
            self.pci_layout(&object, line, &pcie_switches, &gpus, &nics);
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

        let elevation = self.elevation(
            &object,
            raw.u_height.as_ref(),
            raw.position.as_ref(),
            raw.rack.is_some(),
            DEFAULT_SERVER_U,
            line,
        );
        let hardware_errors = self.problems.len() > before;
        let (pattern, numbers) = numbers?;

        // Names first, even when the hardware has problems, so that a
        // duplicate name is reported in the same run.
        let rack_line = raw.rack.as_ref().and_then(|r| self.line(r));
        let first = numbers.start;
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
        let elevation = elevation?;
        let racks_of: Vec<Option<String>> = expanded.iter().map(|(_, _, r)| r.clone()).collect();
        let mut positions = super::expand::stacked(elevation, &racks_of).into_iter();
        let start = servers.len();
        let has_addresses = nics.iter().any(|n| n.mac.is_some() || n.ip.is_some());
        for (n, name, rack) in expanded {
            let mut nic_addresses = Vec::new();
            if has_addresses {
                for (nic, rawnic) in nics.iter().zip(&raw.nic) {
                    let mac = nic.mac.as_ref().map(|p| p.render(n, first));
                    let ip = nic.ip.as_ref().map(|p| p.render(n, first));
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
                position: positions.next().flatten(),
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
            nvlink,
            elevation,
            instances: start..servers.len(),
        })
    }

    /// A device's `pci_bus`, when given and well formed.
    fn pci_bus(&mut self, object: &str, v: Option<&Spanned<String>>) -> Option<String> {
        let v = v?;
        match crate::pci::check_bus_id(v.get_ref()) {
            Ok(()) => Some(v.get_ref().clone()),
            Err(e) => {
                self.problem(
                    self.line(v),
                    object,
                    e,
                    format!("write the device's PCI bus id as {}", crate::pci::FORM),
                );
                None
            }
        }
    }

    /// The bus ids of a template, all together: given for every PCIe
    /// switch, GPU and NIC or for none, each once, and where given, every
    /// link's width and generation known, since NCCL's topology file
    /// (`render --hosts`) needs them all (docs/inventory.md).
    fn pci_layout(
        &mut self,
        object: &str,
        line: Option<usize>,
        pcie_switches: &[PcieSwitch],
        gpus: &[Gpu],
        nics: &[Nic],
    ) {
        let devices: Vec<(String, Option<&String>, Option<usize>)> = pcie_switches
            .iter()
            .map(|p| {
                (
                    format!("PCIe switch {}", p.name),
                    p.pci_bus.as_ref(),
                    p.line,
                )
            })
            .chain(
                gpus.iter()
                    .map(|g| (format!("GPU {}", g.name), g.pci_bus.as_ref(), g.line)),
            )
            .chain(
                nics.iter()
                    .map(|n| (format!("NIC {}", n.name), n.pci_bus.as_ref(), n.line)),
            )
            .collect();
        let given = devices.iter().filter(|d| d.1.is_some()).count();
        if given == 0 {
            return;
        }
        if given < devices.len() {
            let missing: Vec<&str> = devices
                .iter()
                .filter(|d| d.1.is_none())
                .map(|d| d.0.as_str())
                .collect();
            let shown = first_eight(&missing);
            self.problem(
                line,
                object,
                format!(
                    "pci_bus is given for {given} of its {} PCIe switches, GPUs and NICs; missing on {shown}",
                    devices.len()
                ),
                "give every PCIe switch, GPU and NIC of the server its pci_bus, or none: NCCL's topology file needs the whole tree",
            );
            return;
        }
        let mut seen: BTreeMap<&str, (&str, Option<usize>)> = BTreeMap::new();
        for (name, bus, l) in &devices {
            let Some(bus) = bus else { continue };
            if let Some((other, at)) = seen.insert(bus.as_str(), (name.as_str(), *l)) {
                self.problem(
                    *l,
                    format!("{object} {name}"),
                    format!("pci_bus {bus} is already {other}'s (line {})", fmt_line(at)),
                    "give each device of a server its own bus id",
                );
            }
        }
        let mut need = |what: String, l: Option<usize>, field: &str| {
            self.problems.push(Problem::at(
                l,
                format!("{object} {what}"),
                format!("{field} is not given, and NCCL's topology file needs every PCIe link's width and speed"),
                format!("set {field} on it (or on its PCIe switch, which its devices inherit)"),
            ));
        };
        for p in pcie_switches {
            if p.lanes.is_none() {
                need(format!("PCIe switch {}", p.name), p.line, "lanes");
            }
            if p.pcie_gen.is_none() {
                need(format!("PCIe switch {}", p.name), p.line, "pcie_gen");
            }
        }
        let links = gpus
            .iter()
            .map(|g| {
                (
                    format!("GPU {}", g.name),
                    g.attachment,
                    g.lanes,
                    g.pcie_gen,
                    g.line,
                )
            })
            .chain(nics.iter().map(|n| {
                (
                    format!("NIC {}", n.name),
                    n.attachment,
                    n.lanes,
                    n.pcie_gen,
                    n.line,
                )
            }));
        for (what, at, lanes, gen_, l) in links {
            let parent = match at {
                Attachment::PcieSwitch(s) => Some(&pcie_switches[s]),
                Attachment::RootPort(_) => None,
            };
            if lanes.or(parent.and_then(|p| p.lanes)).is_none() {
                need(what.clone(), l, "lanes");
            }
            if gen_.or(parent.and_then(|p| p.pcie_gen)).is_none() {
                need(what, l, "pcie_gen");
            }
        }
    }

    /// Resolves a list of GPU names of this server (a NIC's or an NVLink
    /// domain's `gpus`) into indices, in time linear in the list.
    fn gpu_refs(
        &mut self,
        object: &str,
        list: &Spanned<Vec<Spanned<String>>>,
        by_name: &GpuNames<'_>,
    ) -> Option<Vec<usize>> {
        if list.get_ref().is_empty() {
            self.problem(
                self.line(list),
                object,
                "gpus is an empty list",
                "name the server's GPUs it joins, e.g. gpus = [\"gpu0\", \"gpu1\"], or leave the key out",
            );
            return None;
        }
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        let mut ok = true;
        for name in list.get_ref() {
            match by_name.index.get(name.get_ref().as_str()).copied() {
                Some(i) if !seen.insert(i) => {
                    self.problem(
                        self.line(name),
                        object,
                        format!("GPU {} is listed twice in gpus", name.get_ref()),
                        "list each GPU once",
                    );
                    ok = false;
                }
                Some(i) => out.push(i),
                // A GPU refused for its own reason is not reported again.
                None if by_name.gpus.len() < by_name.written => ok = false,
                None => {
                    let mut known: Vec<&str> = by_name
                        .gpus
                        .iter()
                        .take(16)
                        .map(|g| g.name.as_str())
                        .collect();
                    if by_name.gpus.len() > 16 {
                        known.push("...");
                    }
                    self.problem(
                        self.line(name),
                        object,
                        format!(
                            "GPU {} is not a GPU of this server (dangling reference); its GPUs: [{}]",
                            name.get_ref(),
                            known.join(", ")
                        ),
                        "name GPUs of this [[server]] by their `name` (default gpu0, gpu1, ...)",
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Checks one `[[server.nvlink]]` table.
    fn nvlink_domain(
        &mut self,
        server: &str,
        d: &Spanned<RawNvlink>,
        index: usize,
        by_name: &GpuNames<'_>,
        existing: &[NvlinkDomain],
        in_domain: &BTreeMap<usize, usize>,
    ) -> Option<NvlinkDomain> {
        let gpus = by_name.gpus;
        let raw = d.get_ref();
        let line = self.line(d);
        let name = raw.name.clone().unwrap_or_else(|| format!("nvlink{index}"));
        let object = format!("{server} NVLink domain {name}");
        let mut ok = true;
        if existing.iter().any(|e| e.name == name) {
            self.problem(
                line,
                &object,
                "the name is used twice in this server (duplicate name)",
                "give each NVLink domain its own name",
            );
            ok = false;
        }
        let kind = match raw.kind.get_ref().as_str() {
            "nvswitch" => Some(NvlinkKind::Nvswitch),
            "mesh" => Some(NvlinkKind::Mesh),
            other => {
                self.problem(
                    self.line(&raw.kind),
                    &object,
                    format!("kind `{}` is not an NVLink domain kind", crate::names::escape(other)),
                    "set kind = \"nvswitch\" (GPUs joined through NVSwitches) or \"mesh\" (direct NVLink links between GPUs)",
                );
                None
            }
        };
        let gbps = match (&raw.gbps, &raw.gbytes_per_s) {
            (Some(g), None) => self.number(
                &object,
                "gbps",
                Some(g),
                1..=100_000,
                "set gbps to each GPU's NVLink bandwidth in one direction in Gbps, e.g. 3600 for NVLink 4 (450 GB/s)",
            ),
            (None, Some(g)) => self
                .number(
                    &object,
                    "gbytes_per_s",
                    Some(g),
                    1..=12_500,
                    "set gbytes_per_s to each GPU's NVLink bandwidth in one direction in GB/s, e.g. 450 for NVLink 4",
                )
                .map(|g| g * 8),
            (Some(_), Some(_)) => {
                self.problem(
                    line,
                    &object,
                    "both gbps and gbytes_per_s are set",
                    "give the bandwidth per GPU once: gbps (Gbit/s) or gbytes_per_s (GB/s, x 8)",
                );
                None
            }
            (None, None) => {
                self.problem(
                    line,
                    &object,
                    "the bandwidth per GPU is missing",
                    "set gbps (Gbit/s per GPU, one direction, e.g. 3600) or gbytes_per_s (GB/s, e.g. 450)",
                );
                None
            }
        };
        let members = match &raw.gpus {
            Some(list) => self.gpu_refs(&object, list, by_name),
            None => Some((0..gpus.len()).collect()),
        };
        if let Some(m) = &members {
            if m.len() < 2 {
                self.problem(
                    raw.gpus.as_ref().map_or(line, |l| self.line(l)),
                    &object,
                    format!("the domain joins {} GPU", m.len()),
                    "an NVLink domain joins at least two GPUs: list them in gpus, or remove the table",
                );
                ok = false;
            }
            let gpus_line = raw.gpus.as_ref().map_or(line, |l| self.line(l));
            // One problem per domain already holding some of these GPUs.
            let mut overlap: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
            for &g in m {
                if let Some(&d) = in_domain.get(&g) {
                    overlap.entry(d).or_default().push(gpus[g].name.as_str());
                }
            }
            for (d, names) in overlap {
                let other = &existing[d];
                self.problem(
                    gpus_line,
                    &object,
                    format!(
                        "GPU{} {} {} already in NVLink domain {} (line {})",
                        if names.len() == 1 { "" } else { "s" },
                        first_eight(&names),
                        if names.len() == 1 { "is" } else { "are" },
                        other.name,
                        fmt_line(other.line)
                    ),
                    "put each GPU in one domain (one NVSwitch fabric or one NVLink mesh per group of GPUs)",
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        Some(NvlinkDomain {
            name,
            kind: kind?,
            gpus: members?,
            gbps: u32::try_from(gbps?).ok()?,
            line,
        })
    }

    pub(super) fn pcie_switch(
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
        let pci_bus = self.pci_bus(&object, raw.pci_bus.as_ref());
        Some(PcieSwitch {
            name: raw.name.clone(),
            model: raw.model.clone(),
            socket: socket?,
            root_port: raw.root_port.clone().unwrap_or_else(|| raw.name.clone()),
            lanes,
            pcie_gen,
            slots,
            pci_bus,
            line,
        })
    }

    /// Resolves where a device sits and registers its name and slot.
    pub(super) fn attach(
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
    pub(super) fn gpu(
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
        let pcie_gen = self.small_uint(&object, "pcie_gen", raw.pcie_gen.as_ref(), &[], 1..7);
        let pci_bus = self.pci_bus(&object, raw.pci_bus.as_ref());
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
            pcie_gen,
            pci_bus,
            memory_gb,
            line,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn nic(
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
        let ports = self
            .small_uint(&object, "ports", raw.ports.as_ref(), &[1, 2], 0..0)
            .unwrap_or(1);
        let pcie_gen = self.small_uint(&object, "pcie_gen", raw.pcie_gen.as_ref(), &[], 1..7);
        let pci_bus = self.pci_bus(&object, raw.pci_bus.as_ref());
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
            ports,
            lanes,
            pcie_gen,
            pci_bus,
            mac,
            ip,
            gpus: Vec::new(),
            line,
        })
    }

    pub(super) fn nic_address(
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
}
