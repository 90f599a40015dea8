//! NCCL's topology file (`NCCL_TOPO_FILE`) for one server, written from
//! the PCIe tree the plan carries when the inventory gives bus ids
//! (`pci_bus`, docs/inventory.md): for servers whose PCIe layout NCCL
//! cannot read itself, VMs above all, whose virtual PCI tree is flat.
//!
//! Read at NCCL v2.30.7-1 (github.com/NVIDIA/nccl, tag `v2.30.7-1`):
//!
//! - **The parser** (`src/graph/xml.cc`, `xmlGetNode`, `xmlGetValue`,
//!   `xmlLoadSub`) is NCCL's own, not an XML library: between elements it
//!   skips only spaces, `\n` and `\r` (no tabs), an element's attributes
//!   are separated by one space, values are quoted and copied byte for byte
//!   up to the closing quote (no entity is decoded), a value or name has
//!   at most 254 bytes (`MAX_STR_LEN` 255, `src/graph/xml.h`), and `<!--`
//!   comments are skipped. There is no `<?xml?>` declaration: NCCL would
//!   read it as an element and fail at its `?`. So the file is written with
//!   spaces only, one space between attributes, `/>` right after the last
//!   value, and only values that need no escaping (bus ids, numbers, and
//!   names by the name rule, which has no `&<>"'`); [`attr`] escapes all
//!   the same, so the file stays well-formed XML whatever it is given.
//! - **The elements it loads** (`ncclTopoGetXmlFromFile` and the
//!   `ncclTopoXmlLoad*` handlers, xml.cc): `<system version="1">`
//!   (`NCCL_TOPO_XML_VERSION`, a version other than 1 is refused; its
//!   `name` is logged), holding `<cpu>`, holding `<pci>` and `<nic>`; a
//!   `<pci>` holds `<pci>`, `<gpu>`, `<nic>` and `<pcilink>`. [`ELEMENTS`]
//!   lists what this writer uses.
//! - **What each needs** (`src/graph/topo.cc`): `ncclTopoAddCpu` reads
//!   `numaid` (required) and `arch` (required; `vendor`, `familyid` and
//!   `modelid` on x86), `affinity` if present; `ncclTopoAddPci` reads
//!   `class`, `busid`, `link_width` and `link_speed` of every `<pci>`, all
//!   four required. `class` is matched by prefix (`kvDictPciClass`):
//!   `0x060400` a bridge (a PCIe switch), `0x03` a GPU, `0x02` a NIC;
//!   `link_speed` must be one of `kvDictPciGen`'s strings
//!   (`"32.0 GT/s PCIe"`, else NCCL assumes 8 GT/s) and a `link_width` of 0
//!   counts as 16.
//! - **What NCCL fills in itself**: for the GPU of each rank,
//!   `ncclTopoFillGpu` finds the `<pci>` whose `busid` equals the GPU's
//!   (string compare against `int64ToBusId`'s `%04lx:%02lx:%02lx.%01lx`,
//!   `src/misc/utils.cc`), adds `<gpu>` with its NVLinks from NVML, and
//!   walks up the file's parents (`ncclTopoGetXmlFromSys`): attributes the
//!   file gives are kept, missing ones are read from sysfs where the bus id
//!   exists there, and the `<cpu>` it reaches gets `affinity` (from the
//!   NUMA node `numaid`), `arch`, `vendor`, `familyid` and `modelid` from
//!   the running machine (`ncclTopoGetXmlFromCpu`). For each network
//!   device of the plugin, `ncclTopoFillNet` takes the bus id at the end of
//!   the device's sysfs path, finds that `<pci>` in the file, walks up the
//!   same way and adds `<nic><net name dev speed port gdr ...>` from the
//!   plugin's properties. So this file gives the tree, bus ids, classes
//!   and link widths and speeds, and the NUMA node of each socket; the
//!   rest is the machine's. It writes no `<nic>`/`<net>`: NCCL finds a
//!   `<net>` by name and, finding it, skips the walk above, so a socket
//!   holding NICs but not the rank's GPU would keep no `arch` and
//!   `ncclTopoAddCpu` would fail; the net's speed, port and GPUDirect
//!   support then come from the plugin, which reads the real link.
//! - **Devices absent from the machine** are trimmed (`ncclTopoTrimXml`
//!   keeps only branches holding a GPU or network device NCCL uses), so one
//!   file per server holds every GPU and NIC of it.
//!
//! This matches the public files NCCL users ship for VMs (Azure's
//! `topology/ndv4-topo.xml` and `ndv5-topo.xml`, github.com/Azure/
//! azhpc-images): a `<cpu numaid>` per NUMA node, bridges (`0x060400`)
//! nesting `0x0302` GPUs and `0x02` NICs, no `<net>`. It is checked
//! against NCCL's source only: no GPU can be had where this is built.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::plan::{PciKind, PlanPci, PlanServer};

/// The NCCL release the file follows.
pub const NCCL_VERSION: &str = "2.30.7";

/// Where `render --hosts`' host environment points `NCCL_TOPO_FILE`: the
/// path docs/provisioner.md tells people to install
/// `<server>.nccl-topo.xml` at on the server.
pub const HOST_PATH: &str = "/etc/eflops/nccl-topo.xml";

/// The file name of a server's topology file beside its host files.
pub fn file_name(server: &str) -> String {
    format!("{}.nccl-topo.xml", crate::names::file_stem(server))
}

/// Every element this writer uses, the attributes it gives each (all of
/// them, every time), and where NCCL v2.30.7-1 (commit 73cf112) reads
/// them: what the tests hold the written files to.
pub const ELEMENTS: &[(&str, &[&str], &str)] = &[
    (
        "system",
        &["version", "name"],
        "src/graph/xml.cc:390 ncclTopoXmlLoadSystem: version must be 1 (line 394), name is logged",
    ),
    (
        "cpu",
        &["numaid"],
        "src/graph/topo.cc:726 ncclTopoAddCpu reads numaid (line 728); affinity, arch, vendor, familyid and modelid come from the machine, src/graph/xml.cc:471 ncclTopoGetXmlFromCpu",
    ),
    (
        "pci",
        &["busid", "class", "link_speed", "link_width"],
        "src/graph/topo.cc:637 ncclTopoAddPci requires class (642), busid (646), link_width (652) and link_speed (653)",
    ),
];

/// Which element may hold which, as NCCL's handlers load them
/// (src/graph/xml.cc:375-403): `system` holds `cpu`, `cpu` holds `pci`,
/// `pci` holds `pci`.
pub const NESTING: &[(&str, &str)] = &[("system", "cpu"), ("cpu", "pci"), ("pci", "pci")];

/// PCI class codes, as sysfs writes them (`/sys/bus/pci/devices/*/class`).
const CLASS_BRIDGE: &str = "0x060400";
/// A 3D controller: NVIDIA's data-centre GPUs (Azure's files say the same).
const CLASS_GPU: &str = "0x030200";
/// An Ethernet controller: the fabric's RoCE NICs (NCCL reads the `0x02`).
const CLASS_NIC: &str = "0x020000";

/// NCCL's `kvDictPciGen` string of a PCIe generation, the form Linux 5.7
/// and later write to `max_link_speed`.
fn link_speed(pcie_gen: u32) -> Option<&'static str> {
    Some(match pcie_gen {
        1 => "2.5 GT/s PCIe",
        2 => "5.0 GT/s PCIe",
        3 => "8.0 GT/s PCIe",
        4 => "16.0 GT/s PCIe",
        5 => "32.0 GT/s PCIe",
        6 => "64.0 GT/s PCIe",
        _ => return None,
    })
}

/// An attribute value escaped for XML. NCCL decodes no entity, so what it
/// is given never needs one (see the module documentation).
fn attr(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            c if c.is_control() => {
                let _ = write!(s, "&#x{:x};", c as u32);
            }
            c => s.push(c),
        }
    }
    s
}

/// The topology file of one server, or `None` when the plan carries no
/// PCIe tree for it. `plan_file` names the plan in errors.
pub fn nccl_topology(server: &PlanServer, plan_file: &str) -> Result<Option<String>> {
    if server.pci.is_empty() {
        return Ok(None);
    }
    let bad = |d: &PlanPci, message: String| Error::Invalid {
        file: plan_file.to_string(),
        what: "plan",
        problems: vec![crate::Problem::at(
            None,
            format!("server {} pci {}", server.name, d.name),
            message,
            "design the plan again from the inventory (docs/inventory.md, `pci_bus`)",
        )],
    };
    // Children of each PCIe switch and of each socket, by bus id: NCCL
    // keeps a parent's devices in bus id order when it reads sysfs
    // (xml.cc, ncclTopoGetXmlFromSys, "Issue #820"), and so does this file.
    let mut under_switch: BTreeMap<&str, Vec<&PlanPci>> = BTreeMap::new();
    let mut under_socket: BTreeMap<usize, Vec<&PlanPci>> = BTreeMap::new();
    for d in &server.pci {
        match (&d.parent, d.kind) {
            (Some(p), PciKind::Gpu | PciKind::Nic) => {
                under_switch.entry(p.as_str()).or_default().push(d)
            }
            (None, _) => under_socket.entry(d.socket).or_default().push(d),
            (Some(_), PciKind::PcieSwitch) => {
                return Err(bad(d, "a PCIe switch has a parent".to_string()));
            }
        }
    }
    for list in under_switch.values_mut().chain(under_socket.values_mut()) {
        list.sort_by(|a, b| a.bus.cmp(&b.bus));
    }
    let switches: Vec<&str> = (server.pci.iter())
        .filter(|d| d.kind == PciKind::PcieSwitch)
        .map(|d| d.bus.as_str())
        .collect();
    if let Some((p, list)) = under_switch.iter().find(|(p, _)| !switches.contains(p)) {
        return Err(bad(
            list[0],
            format!("its parent {p} is not a PCIe switch of the server"),
        ));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<!-- NCCL_TOPO_FILE of one server, written by planner render from the plan's PCIe tree (NCCL {NCCL_VERSION}); NCCL fills in the CPUs and network devices from the machine. -->"
    );
    let _ = writeln!(s, "<system version=\"1\" name=\"{}\">", attr(&server.name));
    for (socket, devices) in &under_socket {
        let _ = writeln!(s, "  <cpu numaid=\"{socket}\">");
        for d in devices {
            pci(&mut s, d, 4, &under_switch, &bad)?;
        }
        s.push_str("  </cpu>\n");
    }
    s.push_str("</system>\n");
    Ok(Some(s))
}

/// One `<pci>` element and what it nests.
fn pci(
    s: &mut String,
    d: &PlanPci,
    indent: usize,
    under_switch: &BTreeMap<&str, Vec<&PlanPci>>,
    bad: &dyn Fn(&PlanPci, String) -> Error,
) -> Result<()> {
    let class = match d.kind {
        PciKind::PcieSwitch => CLASS_BRIDGE,
        PciKind::Gpu => CLASS_GPU,
        PciKind::Nic => CLASS_NIC,
    };
    let speed = link_speed(d.pcie_gen)
        .ok_or_else(|| bad(d, format!("pcie_gen {} is not 1 to 6", d.pcie_gen)))?;
    let pad = " ".repeat(indent);
    let _ = write!(
        s,
        "{pad}<pci busid=\"{}\" class=\"{class}\" link_speed=\"{speed}\" link_width=\"{}\"",
        attr(&d.bus),
        d.lanes
    );
    match under_switch.get(d.bus.as_str()) {
        Some(children) if d.kind == PciKind::PcieSwitch => {
            s.push_str(">\n");
            for c in children {
                pci(s, c, indent + 2, under_switch, bad)?;
            }
            let _ = writeln!(s, "{pad}</pci>");
        }
        _ => s.push_str("/>\n"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::{bundled, bundled_text};
    use crate::plan::Topology;

    /// `text` with `pci_bus` after the `name = "..."` line of each named
    /// device.
    fn with_bus_ids(text: &str, ids: &[(&str, &str)]) -> String {
        let mut out = text.to_string();
        for (name, bus) in ids {
            let line = format!("name = \"{name}\"\n");
            assert_eq!(out.matches(&line).count(), 1, "{name}");
            out = out.replacen(&line, &format!("{line}pci_bus = \"{bus}\"\n"), 1);
        }
        out
    }

    /// The EFLOPS server (Fig. 4): two sockets, a PEX 9797 each, two
    /// V100 and two ConnectX-5 under each, with bus ids of such a server.
    fn eflops() -> crate::checked::CheckedPlan {
        let text = with_bus_ids(
            &bundled_text("eflops-4x16"),
            &[
                ("plx0", "0000:03:00.0"),
                ("gpu0", "0000:05:00.0"),
                ("gpu1", "0000:06:00.0"),
                ("mlx5_0", "0000:07:00.0"),
                ("mlx5_1", "0000:08:00.0"),
                ("plx1", "0000:83:00.0"),
                ("gpu2", "0000:85:00.0"),
                ("gpu3", "0000:86:00.0"),
                ("mlx5_2", "0000:87:00.0"),
                ("mlx5_3", "0000:88:00.0"),
            ],
        );
        let inv = crate::inventory::Inventory::from_toml(&text, "eflops-4x16.toml").unwrap();
        crate::design::design(&inv, &crate::design::DesignOptions::default()).unwrap()
    }

    #[test]
    fn an_eflops_server_is_two_cpus_with_a_switch_of_four_sub_node_devices_each() {
        let plan = eflops();
        let xml = nccl_topology(&plan.servers[0], "plan.json")
            .unwrap()
            .unwrap();
        let want = r#"<!-- NCCL_TOPO_FILE of one server, written by planner render from the plan's PCIe tree (NCCL 2.30.7); NCCL fills in the CPUs and network devices from the machine. -->
<system version="1" name="node01">
  <cpu numaid="0">
    <pci busid="0000:03:00.0" class="0x060400" link_speed="8.0 GT/s PCIe" link_width="16">
      <pci busid="0000:05:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:06:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:07:00.0" class="0x020000" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:08:00.0" class="0x020000" link_speed="8.0 GT/s PCIe" link_width="16"/>
    </pci>
  </cpu>
  <cpu numaid="1">
    <pci busid="0000:83:00.0" class="0x060400" link_speed="8.0 GT/s PCIe" link_width="16">
      <pci busid="0000:85:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:86:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:87:00.0" class="0x020000" link_speed="8.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:88:00.0" class="0x020000" link_speed="8.0 GT/s PCIe" link_width="16"/>
    </pci>
  </cpu>
</system>
"#;
        assert_eq!(xml, want);
        conforms(&xml);
        // Every server of the template gets the same tree, its own name.
        let last = plan.servers.last().unwrap();
        let other = nccl_topology(last, "plan.json").unwrap().unwrap();
        assert_eq!(other, want.replace("node01", &last.name));
    }

    #[test]
    fn an_nvswitch_vm_pairs_each_gpu_with_its_nic_under_one_bridge() {
        let plan = bundled("ndv5-vm-4", Some(Topology::FatTree));
        let server = &plan.servers[0];
        let xml = nccl_topology(server, "plan.json").unwrap().unwrap();
        conforms(&xml);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let cpus: Vec<_> = doc
            .root_element()
            .children()
            .filter(|n| n.is_element())
            .collect();
        assert_eq!(cpus.len(), 2);
        let mut seen = 0;
        for (numa, cpu) in cpus.iter().enumerate() {
            assert_eq!(cpu.attribute("numaid"), Some(numa.to_string().as_str()));
            let bridges: Vec<_> = cpu.children().filter(|n| n.is_element()).collect();
            assert_eq!(bridges.len(), 4);
            for b in bridges {
                assert_eq!(b.attribute("class"), Some(CLASS_BRIDGE));
                let kids: Vec<_> = b.children().filter(|n| n.is_element()).collect();
                let classes: Vec<_> = kids.iter().filter_map(|k| k.attribute("class")).collect();
                assert_eq!(
                    classes,
                    [CLASS_GPU, CLASS_NIC],
                    "{:?}",
                    b.attribute("busid")
                );
                // The GPU and NIC of one sub-node, as the plan pairs them.
                let bus = |k: &roxmltree::Node<'_, '_>| k.attribute("busid").unwrap().to_string();
                let sn = server
                    .sub_nodes
                    .iter()
                    .map(|&i| &plan.sub_node_list[i])
                    .find(|sn| {
                        let dev = |name: &str| server.pci.iter().find(|d| d.name == name).unwrap();
                        dev(&sn.nic).bus == bus(&kids[1])
                            && sn
                                .gpu
                                .as_deref()
                                .is_some_and(|g| dev(g).bus == bus(&kids[0]))
                    });
                assert!(
                    sn.is_some(),
                    "{}: no sub-node pairs {} and {}",
                    server.name,
                    bus(&kids[0]),
                    bus(&kids[1])
                );
                for k in &kids {
                    assert_eq!(k.attribute("link_speed"), Some("32.0 GT/s PCIe"));
                    assert_eq!(k.attribute("link_width"), Some("16"));
                }
                seen += 1;
            }
        }
        assert_eq!(seen, 8);
    }

    /// `xml` parses with a real XML parser, holds only the elements and
    /// attributes of [`ELEMENTS`], each with all of its attributes, nested
    /// as NCCL loads them ([`NESTING`]), and keeps to what NCCL's own
    /// parser reads (src/graph/xml.cc:38-255): no declaration, spaces only,
    /// one space between attributes, `/>` right after a value, values
    /// under 255 bytes that need no entity, bus ids as NCCL writes them.
    fn conforms(xml: &str) {
        let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        assert_eq!(doc.root_element().tag_name().name(), "system");
        for n in doc.descendants().filter(|n| n.is_element()) {
            let name = n.tag_name().name();
            let (_, attrs, _) = ELEMENTS
                .iter()
                .find(|(e, _, _)| *e == name)
                .unwrap_or_else(|| panic!("element {name} is not one NCCL loads here"));
            let given: Vec<&str> = n.attributes().map(|a| a.name()).collect();
            assert_eq!(&given, attrs, "{name}");
            for a in n.attributes() {
                assert!(a.value().len() < 255, "{name} {}", a.name());
                assert!(
                    !a.value().contains(['&', '<', '>', '"', '\'']),
                    "{}",
                    a.value()
                );
            }
            if let Some(bus) = n.attribute("busid") {
                crate::pci::check_bus_id(bus).unwrap();
            }
            if let Some(parent) = n.parent_element() {
                let pair = (parent.tag_name().name(), name);
                assert!(NESTING.contains(&pair), "{pair:?}");
            }
            if name == "system" {
                assert_eq!(n.attribute("version"), Some("1"));
            }
            if name == "pci" {
                let class = n.attribute("class").unwrap();
                assert!([CLASS_BRIDGE, CLASS_GPU, CLASS_NIC].contains(&class));
                // A bridge holds devices; a device holds nothing here.
                let holds = n.children().any(|c| c.is_element());
                assert_eq!(holds, class == CLASS_BRIDGE, "{:?}", n.attribute("busid"));
                assert!((1..=6).any(|g| link_speed(g) == n.attribute("link_speed")));
            }
        }
        assert!(!xml.starts_with("<?"), "NCCL reads no declaration");
        assert!(!xml.contains('\t'), "NCCL skips no tab between elements");
        assert!(!xml.contains("  =") && !xml.contains("\" />") && !xml.contains("\"  "));
    }

    #[test]
    fn values_are_escaped_and_a_broken_tree_is_refused_naming_the_device() {
        assert_eq!(
            attr("a&b<c>\"d'e\u{1}"),
            "a&amp;b&lt;c&gt;&quot;d&apos;e&#x1;"
        );
        assert_eq!(attr("0000:0b:00.0"), "0000:0b:00.0");
        let mut server = bundled("ndv5-vm-4", Some(Topology::FatTree)).servers[0].clone();
        server.pci[9].parent = Some(server.pci[10].bus.clone());
        let err = nccl_topology(&server, "plan.json").unwrap_err().to_string();
        assert!(err.contains("plan.json"), "{err}");
        assert!(err.contains("server vm01 pci gpu1"), "{err}");
        assert!(err.contains("is not a PCIe switch of the server"), "{err}");
        // No tree, no file.
        server.pci.clear();
        assert_eq!(nccl_topology(&server, "plan.json").unwrap(), None);
    }
}
