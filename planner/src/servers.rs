//! The congestionless-server rules of EFLOPS IV-A.
//!
//! A server is congestionless when every GPU has a NIC under the same PCIe
//! switch (the pair is a *sub-node*, so GPU-NIC traffic never crosses a root
//! port), GPUs and NICs are equal in number, sub-nodes are spread evenly
//! over sockets and root ports, and every sub-node's NIC runs at the same
//! line rate with a PCIe slot wide enough to carry it.
//!
//! Servers made from one template have the same hardware, so the rules are
//! checked once per template and reported for all its servers.
//!
//! Today's servers add a tier EFLOPS does not have. An NVLink/NVSwitch
//! domain carries GPU-to-GPU traffic inside the server without PCIe or a
//! NIC: the report says so per domain ([`TemplateCheck::notes`]), and the
//! sub-node rules still hold for the traffic that leaves the server. A NIC
//! that states its GPUs (`gpus = [...]`, several GPUs per NIC) breaks
//! EFLOPS' one-NIC-per-GPU rule on purpose: those breaks are reported as
//! [`TemplateCheck::accepted`], with the bandwidth per GPU, and do not fail
//! the check.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::inventory::{Attachment, Inventory, NvlinkKind, ServerTemplate};
use crate::text::{Table, gbps};

/// A broken rule with a proposed fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// Rule id: `gpu-without-nic`, `nic-without-gpu`, `device-on-root-port`,
    /// `gpu-nic-count`, `no-sub-nodes`, `sockets-unbalanced`,
    /// `root-ports-unbalanced`, `nic-speed-uneven`, `nic-slot-too-narrow`;
    /// accepted only: `nic-shared` (several GPUs per NIC) and
    /// `nic-gpu-across-pcie` (a stated GPU under another PCIe switch than
    /// its NIC).
    pub rule: &'static str,
    /// What is wrong, naming devices and slots.
    pub message: String,
    /// The proposed change.
    pub fix: String,
}

/// A GPU-NIC pair of a template, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubNodeRow {
    /// Sub-node index within the server (`sn0` is 0).
    pub index: usize,
    /// GPU name, when paired.
    pub gpu: Option<String>,
    /// GPU slot.
    pub gpu_slot: Option<String>,
    /// NIC name.
    pub nic: String,
    /// NIC slot.
    pub nic_slot: String,
    /// PCIe switch, when the NIC is under one.
    pub pcie_switch: Option<String>,
    /// Socket.
    pub socket: String,
    /// Root port.
    pub root_port: String,
    /// NIC line rate.
    pub nic_gbps: u32,
    /// Every GPU whose traffic leaves through this NIC, when the NIC
    /// states them (`gpus = [...]`); empty for a plain GPU-NIC pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
}

/// An NVLink/NVSwitch domain of a template, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvlinkRow {
    /// Domain name.
    pub name: String,
    /// `nvswitch` or `mesh`.
    pub kind: NvlinkKind,
    /// Its GPUs.
    pub gpus: Vec<String>,
    /// Bandwidth per GPU into the domain, one direction, in Gbps.
    pub gbps_per_gpu: u32,
}

/// Upstream bandwidth of a PCIe switch and what hangs below it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PcieUplink {
    /// PCIe switch name.
    pub pcie_switch: String,
    /// Root port.
    pub root_port: String,
    /// Upstream bandwidth in Gbps, when lanes and generation are known.
    pub uplink_gbps: Option<f64>,
    /// GPUs below it.
    pub gpus: usize,
    /// NICs below it.
    pub nics: usize,
}

/// The check of one server template.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateCheck {
    /// The name pattern.
    pub template: String,
    /// Line of the `[[server]]` table.
    pub line: Option<usize>,
    /// How many servers share this hardware.
    pub servers: usize,
    /// Their names, as a range.
    pub server_names: String,
    /// GPUs per server.
    pub gpus: usize,
    /// NICs per server.
    pub nics: usize,
    /// Sub-nodes per server (GPU-NIC pairs under one PCIe switch).
    pub sub_nodes: Vec<SubNodeRow>,
    /// Sub-nodes per socket.
    pub per_socket: BTreeMap<String, usize>,
    /// PCIe switch uplinks.
    pub pcie_uplinks: Vec<PcieUplink>,
    /// NIC bandwidth per GPU in Gbps (all NICs over all GPUs).
    pub nic_gbps_per_gpu: Option<f64>,
    /// Broken rules.
    pub violations: Vec<Violation>,
    /// NVLink/NVSwitch domains (empty: GPUs talk over PCIe only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink: Vec<NvlinkRow>,
    /// EFLOPS rules the inventory breaks on purpose by stating which GPUs
    /// share a NIC (`gpus = [...]`): each with what EFLOPS would do
    /// instead (`fix`). They do not fail the check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<Violation>,
    /// What the intra-server GPU fabric changes, in sentences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The result of `planner check-servers`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerCheck {
    /// The inventory's name.
    pub inventory: String,
    /// True when every rule passes.
    pub ok: bool,
    /// Servers in the inventory.
    pub servers: usize,
    /// GPUs in the inventory.
    pub gpus: usize,
    /// NICs in the inventory.
    pub nics: usize,
    /// Sub-nodes (paired GPU-NIC) in the inventory.
    pub sub_nodes: usize,
    /// Per template.
    pub templates: Vec<TemplateCheck>,
    /// Rules that span templates (NIC speeds across the inventory).
    pub inventory_violations: Vec<Violation>,
}

impl ServerCheck {
    /// Number of broken rules over all templates and the inventory.
    pub fn violation_count(&self) -> usize {
        self.inventory_violations.len()
            + self
                .templates
                .iter()
                .map(|t| t.violations.len())
                .sum::<usize>()
    }
}

/// Usable bandwidth of one PCIe lane in Gbps, per generation (after line
/// encoding: 8b/10b for gen 1-2, 128b/130b for gen 3-5, FLIT for gen 6).
pub fn pcie_lane_gbps(gen_: u32) -> Option<f64> {
    match gen_ {
        1 => Some(2.0),
        2 => Some(4.0),
        3 => Some(8.0 * 128.0 / 130.0),
        4 => Some(16.0 * 128.0 / 130.0),
        5 => Some(32.0 * 128.0 / 130.0),
        6 => Some(64.0 * 242.0 / 256.0),
        _ => None,
    }
}

/// Checks every server template of the inventory.
pub fn check_servers(inv: &Inventory) -> ServerCheck {
    let templates: Vec<TemplateCheck> = inv
        .server_templates
        .iter()
        .map(|t| check_template(inv, t))
        .collect();

    // NIC speeds across the whole inventory: halving-doubling and ring run
    // in lockstep, so the slowest sub-node sets the pace.
    let mut speeds: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for t in &inv.server_templates {
        for sn in t.sub_nodes() {
            if sn.gpu.is_some() {
                speeds
                    .entry(t.nics[sn.nic].speed_gbps)
                    .or_default()
                    .push(t.pattern.clone());
            }
        }
    }
    let mut inventory_violations = Vec::new();
    if speeds.len() > 1 {
        let (&fastest, _) = speeds.last_key_value().expect("two speeds");
        let list: Vec<String> = speeds
            .iter()
            .map(|(s, ts)| {
                let mut ts = ts.clone();
                ts.dedup();
                format!("{s} Gbps in {}", ts.join(", "))
            })
            .collect();
        inventory_violations.push(Violation {
            rule: "nic-speed-uneven",
            message: format!(
                "sub-node NICs run at different speeds ({}); collectives run at the slowest",
                list.join("; ")
            ),
            fix: format!("use {fastest} Gbps NICs in every sub-node"),
        });
    }

    let mut check = ServerCheck {
        inventory: inv.name.clone(),
        ok: true,
        servers: inv.servers.len(),
        gpus: inv.gpu_count(),
        nics: inv.sub_node_count(),
        sub_nodes: templates
            .iter()
            .map(|t| t.servers * t.sub_nodes.iter().filter(|s| s.gpu.is_some()).count())
            .sum(),
        templates,
        inventory_violations,
    };
    check.ok = check.violation_count() == 0;
    check
}

fn check_template(inv: &Inventory, t: &ServerTemplate) -> TemplateCheck {
    let mut violations = Vec::new();
    let pairs = t.sub_nodes();

    let rows: Vec<SubNodeRow> = pairs
        .iter()
        .enumerate()
        .map(|(i, sn)| {
            let nic = &t.nics[sn.nic];
            let socket = t.socket_of(nic.attachment);
            let (pcie_switch, root_port) = match nic.attachment {
                Attachment::PcieSwitch(s) => (
                    Some(t.pcie_switches[s].name.clone()),
                    t.pcie_switches[s].root_port.clone(),
                ),
                Attachment::RootPort(_) => (None, format!("{} (direct)", t.sockets[socket])),
            };
            SubNodeRow {
                index: i,
                gpu: sn.gpu.map(|g| t.gpus[g].name.clone()),
                gpu_slot: sn.gpu.map(|g| t.gpus[g].slot.clone()),
                nic: nic.name.clone(),
                nic_slot: nic.slot.clone(),
                pcie_switch,
                socket: t.sockets[socket].clone(),
                root_port,
                nic_gbps: nic.speed_gbps,
                gpus: nic.gpus.iter().map(|&g| t.gpus[g].name.clone()).collect(),
            }
        })
        .collect();
    let mut accepted = Vec::new();
    // GPUs and NICs whose GPU-NIC association the inventory states.
    let stated_gpus: std::collections::BTreeSet<usize> =
        t.nics.iter().flat_map(|n| n.gpus.iter().copied()).collect();
    let stated_gpu = |g: usize| stated_gpus.contains(&g);
    let stated = !stated_gpus.is_empty();

    if t.gpus.is_empty() && t.nics.is_empty() {
        violations.push(Violation {
            rule: "no-sub-nodes",
            message: "the server has no GPU and no NIC".to_string(),
            fix: "add GPU-NIC pairs under its PCIe switches, or remove the template if the servers are not part of the GPU fabric".to_string(),
        });
    }

    // Devices on a root port cannot pair: the GPU-NIC traffic would cross
    // the root complex.
    let devices = t
        .gpus
        .iter()
        .map(|g| ("GPU", "NIC", &g.name, &g.slot, g.attachment))
        .chain(
            t.nics
                .iter()
                .map(|n| ("NIC", "GPU", &n.name, &n.slot, n.attachment)),
        );
    let devices = devices.zip(
        (0..t.gpus.len())
            .map(stated_gpu)
            .chain(t.nics.iter().map(|n| !n.gpus.is_empty())),
    );
    for ((kind, partner, name, slot, attachment), is_stated) in devices {
        if let Attachment::RootPort(s) = attachment {
            let into = if is_stated {
                &mut accepted
            } else {
                &mut violations
            };
            into.push(Violation {
                rule: "device-on-root-port",
                message: format!(
                    "{kind} {name} ({slot}) sits directly on a {} root port, under no PCIe switch, so it cannot share one with a {partner}",
                    t.sockets[s]
                ),
                fix: format!(
                    "move {name} into a slot under a PCIe switch of {} together with a {partner}",
                    t.sockets[s]
                ),
            });
        }
    }

    // Pairing per PCIe switch, with a proposal for every leftover device.
    let mut spare_gpus: Vec<usize> = Vec::new();
    let mut paired_gpus = vec![false; t.gpus.len()];
    for sn in &pairs {
        for g in t.sub_node_gpus(sn) {
            paired_gpus[g] = true;
        }
    }
    for nic in t.nics.iter().filter(|n| !n.gpus.is_empty()) {
        shared_nic(t, nic, &mut accepted);
    }
    for (i, g) in t.gpus.iter().enumerate() {
        if !paired_gpus[i] && matches!(g.attachment, Attachment::PcieSwitch(_)) {
            spare_gpus.push(i);
        }
    }
    let spare_nics: Vec<usize> = pairs
        .iter()
        .filter(|sn| {
            sn.gpu.is_none() && matches!(t.nics[sn.nic].attachment, Attachment::PcieSwitch(_))
        })
        .map(|sn| sn.nic)
        .collect();
    let mut free_nics = spare_nics.clone();
    for &g in &spare_gpus {
        let gpu = &t.gpus[g];
        let Attachment::PcieSwitch(ps) = gpu.attachment else {
            continue;
        };
        let here = &t.pcie_switches[ps].name;
        let fix = if let Some(pos) = free_nics.iter().position(|_| true) {
            let n = free_nics.remove(pos);
            let nic = &t.nics[n];
            format!(
                "move NIC {} ({}, {}) into a free slot under {here} to pair it with {}",
                nic.name,
                nic.slot,
                t.describe_attachment(nic.attachment),
                gpu.name
            )
        } else {
            format!(
                "add a NIC in a free slot under {here}, next to {}",
                gpu.name
            )
        };
        violations.push(Violation {
            rule: "gpu-without-nic",
            message: format!(
                "GPU {} ({}, {}) has no NIC under the same PCIe switch",
                gpu.name,
                gpu.slot,
                t.describe_attachment(gpu.attachment)
            ),
            fix,
        });
    }
    for &n in &free_nics {
        let nic = &t.nics[n];
        let Attachment::PcieSwitch(ps) = nic.attachment else {
            continue;
        };
        violations.push(Violation {
            rule: "nic-without-gpu",
            message: format!(
                "NIC {} ({}, {}) has no GPU under the same PCIe switch",
                nic.name,
                nic.slot,
                t.describe_attachment(nic.attachment)
            ),
            fix: format!(
                "add a GPU in a free slot under {} or remove {}",
                t.pcie_switches[ps].name, nic.name
            ),
        });
    }
    let all_served = paired_gpus.iter().all(|&p| p);
    if t.gpus.len() != t.nics.len() {
        let (more, fewer, diff) = if t.gpus.len() > t.nics.len() {
            ("GPU", "NIC", t.gpus.len() - t.nics.len())
        } else {
            ("NIC", "GPU", t.nics.len() - t.gpus.len())
        };
        let into = if stated && all_served && t.gpus.len() > t.nics.len() {
            &mut accepted
        } else {
            &mut violations
        };
        into.push(Violation {
            rule: "gpu-nic-count",
            message: format!(
                "{} and {}: a congestionless server has one NIC per GPU",
                plural(t.gpus.len(), "GPU"),
                plural(t.nics.len(), "NIC")
            ),
            fix: format!(
                "add {} (or remove {}) so that every GPU has its own NIC",
                plural(diff, fewer),
                plural(diff, more)
            ),
        });
    }

    // Spread over sockets and root ports, counting complete sub-nodes.
    let mut per_socket: BTreeMap<String, usize> =
        t.sockets.iter().map(|s| (s.clone(), 0)).collect();
    let mut per_root: BTreeMap<(String, String), usize> = BTreeMap::new();
    for ps in &t.pcie_switches {
        per_root.insert((t.sockets[ps.socket].clone(), ps.root_port.clone()), 0);
    }
    for sn in &pairs {
        if sn.gpu.is_none() {
            continue;
        }
        let nic = &t.nics[sn.nic];
        let socket = t.socket_of(nic.attachment);
        *per_socket.entry(t.sockets[socket].clone()).or_default() += 1;
        if let Attachment::PcieSwitch(ps) = nic.attachment {
            let p = &t.pcie_switches[ps];
            *per_root
                .entry((t.sockets[p.socket].clone(), p.root_port.clone()))
                .or_default() += 1;
        }
    }
    // With fewer NICs than sockets or root ports, as the inventory states
    // its sharing, the spread cannot be even: a consequence of that choice.
    let spread = [
        unbalanced(
            per_socket.iter().map(|(k, v)| (k.clone(), *v)),
            "sockets-unbalanced",
            "socket",
        ),
        unbalanced(
            per_root
                .iter()
                .map(|((s, r), v)| (format!("{r} ({s})"), *v)),
            "root-ports-unbalanced",
            "root port",
        ),
    ];
    for mut v in spread.into_iter().flatten() {
        if stated {
            v.message
                .push_str(", which follows from the GPU-NIC sharing the inventory states");
            accepted.push(v);
        } else {
            violations.push(v);
        }
    }

    // Speeds inside the server and slot widths.
    let mut speeds: Vec<u32> = pairs
        .iter()
        .filter(|sn| sn.gpu.is_some())
        .map(|sn| t.nics[sn.nic].speed_gbps)
        .collect();
    speeds.sort_unstable();
    speeds.dedup();
    if speeds.len() > 1 {
        let list: Vec<String> = speeds.iter().map(|s| format!("{s}")).collect();
        violations.push(Violation {
            rule: "nic-speed-uneven",
            message: format!(
                "sub-node NICs of one server run at {} Gbps; collectives run at the slowest",
                list.join(", ")
            ),
            fix: format!(
                "use {} Gbps NICs in every sub-node",
                speeds.last().expect("two speeds")
            ),
        });
    }
    for nic in &t.nics {
        let Attachment::PcieSwitch(ps) = nic.attachment else {
            continue;
        };
        let (Some(lanes), Some(lane)) = (
            nic.lanes,
            t.pcie_switches[ps].pcie_gen.and_then(pcie_lane_gbps),
        ) else {
            continue;
        };
        let slot = f64::from(lanes) * lane;
        if slot + 1e-9 < f64::from(nic.speed_gbps) {
            violations.push(Violation {
                rule: "nic-slot-too-narrow",
                message: format!(
                    "NIC {} ({}) runs at {} Gbps but its x{lanes} gen{} slot carries {} Gbps",
                    nic.name,
                    nic.slot,
                    nic.speed_gbps,
                    t.pcie_switches[ps].pcie_gen.unwrap_or(0),
                    gbps(slot)
                ),
                fix: format!(
                    "put {} in a slot with at least {} lanes",
                    nic.name,
                    lanes_needed(f64::from(nic.speed_gbps), lane)
                ),
            });
        }
    }

    let pcie_uplinks = t
        .pcie_switches
        .iter()
        .enumerate()
        .map(|(i, ps)| PcieUplink {
            pcie_switch: ps.name.clone(),
            root_port: ps.root_port.clone(),
            uplink_gbps: match (ps.lanes, ps.pcie_gen.and_then(pcie_lane_gbps)) {
                (Some(l), Some(g)) => Some(f64::from(l) * g),
                _ => None,
            },
            gpus: t
                .gpus
                .iter()
                .filter(|g| g.attachment == Attachment::PcieSwitch(i))
                .count(),
            nics: t
                .nics
                .iter()
                .filter(|n| n.attachment == Attachment::PcieSwitch(i))
                .count(),
        })
        .collect();

    let nic_total: u32 = t.nics.iter().map(|n| n.speed_gbps).sum();
    TemplateCheck {
        template: t.pattern.clone(),
        line: t.line,
        servers: t.instances.len(),
        server_names: t.instance_names(inv),
        gpus: t.gpus.len(),
        nics: t.nics.len(),
        sub_nodes: rows,
        per_socket,
        pcie_uplinks,
        nic_gbps_per_gpu: if t.gpus.is_empty() {
            None
        } else {
            Some(f64::from(nic_total) / t.gpus.len() as f64)
        },
        violations,
        nvlink: t
            .nvlink
            .iter()
            .map(|d| NvlinkRow {
                name: d.name.clone(),
                kind: d.kind,
                gpus: d.gpus.iter().map(|&g| t.gpus[g].name.clone()).collect(),
                gbps_per_gpu: d.gbps,
            })
            .collect(),
        accepted,
        notes: fabric_notes(t),
    }
}

/// The accepted breaks of a NIC that states its GPUs: shared by several
/// GPUs (`nic-shared`), and stated GPUs under another PCIe switch
/// (`nic-gpu-across-pcie`).
fn shared_nic(t: &ServerTemplate, nic: &crate::inventory::Nic, accepted: &mut Vec<Violation>) {
    let names: Vec<&str> = nic.gpus.iter().map(|&g| t.gpus[g].name.as_str()).collect();
    let k = nic.gpus.len();
    if k > 1 {
        let per_gpu = f64::from(nic.speed_gbps) / k as f64;
        accepted.push(Violation {
            rule: "nic-shared",
            message: format!(
                "NIC {} ({} Gbps) carries the network traffic of {k} GPUs ({}): {} Gbps per GPU when all send at once",
                nic.name,
                nic.speed_gbps,
                names.join(", "),
                gbps(per_gpu)
            ),
            fix: format!(
                "EFLOPS' congestionless server gives each of the {k} GPUs its own {} Gbps NIC under its PCIe switch",
                nic.speed_gbps
            ),
        });
    }
    let away: Vec<&str> = nic
        .gpus
        .iter()
        .filter(|&&g| {
            t.gpus[g].attachment != nic.attachment
                || !matches!(nic.attachment, Attachment::PcieSwitch(_))
        })
        .map(|&g| t.gpus[g].name.as_str())
        .collect();
    if !away.is_empty() {
        let sockets: std::collections::BTreeSet<usize> = nic
            .gpus
            .iter()
            .map(|&g| t.socket_of(t.gpus[g].attachment))
            .collect();
        let crossing = if sockets.len() > 1 || !sockets.contains(&t.socket_of(nic.attachment)) {
            "root ports and the link between the sockets"
        } else {
            "a root port"
        };
        accepted.push(Violation {
            rule: "nic-gpu-across-pcie",
            message: format!(
                "GPU{} {} reach{} NIC {} ({}) across {crossing}, not under one PCIe switch",
                if away.len() == 1 { "" } else { "s" },
                away.join(", "),
                if away.len() == 1 { "es" } else { "" },
                nic.name,
                t.describe_attachment(nic.attachment)
            ),
            fix: "EFLOPS puts each GPU and its NIC under the same PCIe switch".to_string(),
        });
    }
}

/// What the template's intra-server GPU fabric changes, for people.
fn fabric_notes(t: &ServerTemplate) -> Vec<String> {
    let mut notes = Vec::new();
    let nic_max = t.nics.iter().map(|n| n.speed_gbps).max();
    for d in &t.nvlink {
        let names: Vec<&str> = d.gpus.iter().map(|&g| t.gpus[g].name.as_str()).collect();
        let ratio = nic_max
            .filter(|&n| n > 0)
            .map(|n| {
                format!(
                    " ({}x the fastest NIC's {n} Gbps)",
                    gbps(f64::from(d.gbps) / f64::from(n))
                )
            })
            .unwrap_or_default();
        let how = match d.kind {
            NvlinkKind::Nvswitch => {
                "through NVSwitches, every GPU at full bandwidth to every other"
            }
            NvlinkKind::Mesh => {
                "over direct links, which a ring over the links uses at full bandwidth (GPUs without a direct link relay through another GPU)"
            }
        };
        notes.push(format!(
            "NVLink domain {} joins {} {how}, at {} Gbps per GPU in each direction{ratio}: GPU-to-GPU traffic inside it crosses neither PCIe nor a NIC, so the intra-server step of a hierarchical allreduce leaves the sub-node rules' paths idle; the rules above still hold for the traffic that leaves the server",
            d.name,
            names.join(", "),
            d.gbps
        ));
    }
    // The domain of each GPU, for the checks below.
    let mut domain_of: Vec<Option<usize>> = vec![None; t.gpus.len()];
    for (i, d) in t.nvlink.iter().enumerate() {
        for &g in &d.gpus {
            domain_of[g] = Some(i);
        }
    }
    if !t.nvlink.is_empty() {
        let outside: Vec<&str> = (0..t.gpus.len())
            .filter(|&g| domain_of[g].is_none())
            .map(|g| t.gpus[g].name.as_str())
            .collect();
        if !outside.is_empty() {
            notes.push(format!(
                "{} in no NVLink domain: {} the other GPUs over PCIe",
                outside.join(", "),
                if outside.len() == 1 {
                    "it reaches"
                } else {
                    "they reach"
                }
            ));
        }
    }
    for nic in t.nics.iter().filter(|n| n.gpus.len() > 1) {
        let first = domain_of[nic.gpus[0]];
        let in_one = first
            .filter(|_| nic.gpus.iter().all(|&g| domain_of[g] == first))
            .map(|d| &t.nvlink[d]);
        notes.push(match in_one {
            Some(d) => format!(
                "the {} GPUs of NIC {} share NVLink domain {}: a hierarchical allreduce reduces among them over NVLink first and sends 1/{} of the data per GPU through the NIC",
                nic.gpus.len(),
                nic.name,
                d.name,
                nic.gpus.len()
            ),
            None => format!(
                "the {} GPUs of NIC {} share its PCIe path and its {} Gbps: without NVLink their exchange inside the server runs over PCIe",
                nic.gpus.len(),
                nic.name,
                nic.speed_gbps
            ),
        });
    }
    notes
}

/// `1 NIC`, `2 NICs`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn lanes_needed(gbps: f64, lane: f64) -> u32 {
    [1u32, 2, 4, 8, 16, 32]
        .into_iter()
        .find(|&l| f64::from(l) * lane + 1e-9 >= gbps)
        .unwrap_or(32)
}

/// A violation when the counts differ by more than one.
fn unbalanced(
    counts: impl Iterator<Item = (String, usize)>,
    rule: &'static str,
    what: &str,
) -> Option<Violation> {
    let counts: Vec<(String, usize)> = counts.collect();
    if counts.len() < 2 {
        return None;
    }
    let (max_name, max) = counts.iter().max_by_key(|(_, c)| *c)?.clone();
    let (min_name, min) = counts.iter().min_by_key(|(_, c)| *c)?.clone();
    if max - min <= 1 {
        return None;
    }
    let list: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
    let total: usize = counts.iter().map(|(_, c)| c).sum();
    let even = total / counts.len();
    Some(Violation {
        rule,
        message: if min == 0 {
            format!(
                "sub-nodes per {what} are uneven: {}; {min_name} carries none, so {max_name} carries all the host traffic",
                list.join(", ")
            )
        } else {
            format!(
                "sub-nodes per {what} are uneven: {}; {max_name} carries {:.1} times the host traffic of {min_name}",
                list.join(", "),
                max as f64 / min as f64
            )
        },
        fix: format!(
            "move {} from {max_name} to {min_name} (about {even} per {what})",
            plural((max - min) / 2, "GPU-NIC pair")
        ),
    })
}

/// Renders the check for people.
pub fn render_table(check: &ServerCheck, file: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Congestionless-server check (EFLOPS IV-A) of {file}\n{} servers, {} GPUs, {} NICs, {} sub-nodes (GPU-NIC pairs under one PCIe switch)\n",
        check.servers, check.gpus, check.nics, check.sub_nodes
    ));
    for t in &check.templates {
        out.push('\n');
        let line = t.line.map(|l| format!(", line {l}")).unwrap_or_default();
        out.push_str(&format!(
            "Server template {}{line}: {} server{} ({})\n",
            t.template,
            t.servers,
            if t.servers == 1 { "" } else { "s" },
            t.server_names
        ));
        let mut table = Table::new([
            "sub-node",
            "GPU",
            "NIC",
            "PCIe switch",
            "socket",
            "root port",
            "NIC Gbps",
        ])
        .right(&[6]);
        for r in &t.sub_nodes {
            table.row([
                format!("sn{}", r.index),
                match (&r.gpu, &r.gpu_slot) {
                    _ if r.gpus.len() > 1 => r.gpus.join(","),
                    (Some(g), Some(s)) => format!("{g} ({s})"),
                    _ => "-".to_string(),
                },
                format!("{} ({})", r.nic, r.nic_slot),
                r.pcie_switch.clone().unwrap_or_else(|| "-".to_string()),
                r.socket.clone(),
                r.root_port.clone(),
                r.nic_gbps.to_string(),
            ]);
        }
        for line in table.render().lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        let sockets: Vec<String> = t
            .per_socket
            .iter()
            .map(|(s, c)| format!("{s} {c}"))
            .collect();
        out.push_str(&format!("  sub-nodes per socket: {}\n", sockets.join(", ")));
        let uplinks: Vec<String> = t
            .pcie_uplinks
            .iter()
            .map(|u| {
                let bw = u
                    .uplink_gbps
                    .map_or("? Gbps".to_string(), |g| format!("{} Gbps", gbps(g)));
                format!("{} {bw} for {} GPU + {} NIC", u.pcie_switch, u.gpus, u.nics)
            })
            .collect();
        if !uplinks.is_empty() {
            out.push_str(&format!("  PCIe switch uplinks: {}\n", uplinks.join("; ")));
        }
        if let Some(g) = t.nic_gbps_per_gpu {
            out.push_str(&format!("  NIC bandwidth per GPU: {} Gbps\n", gbps(g)));
        }
        for d in &t.nvlink {
            out.push_str(&format!(
                "  NVLink domain {} ({}): {} at {} Gbps per GPU\n",
                d.name,
                d.kind.as_str(),
                d.gpus.join(", "),
                d.gbps_per_gpu
            ));
        }
        if t.violations.is_empty() && t.accepted.is_empty() {
            out.push_str("  ok: every GPU has its own NIC under the same PCIe switch, spread evenly over sockets and root ports\n");
        } else if t.violations.is_empty() {
            out.push_str("  ok: the EFLOPS rules hold except where the inventory states its GPU-NIC sharing (accepted below)\n");
        }
        for v in &t.violations {
            out.push_str(&format!(
                "  VIOLATION {}: {}\n    fix: {}\n",
                v.rule, v.message, v.fix
            ));
        }
        for v in &t.accepted {
            out.push_str(&format!(
                "  ACCEPTED {}: {}\n    EFLOPS instead: {}\n",
                v.rule, v.message, v.fix
            ));
        }
        for n in &t.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
    }
    if !check.inventory_violations.is_empty() {
        out.push_str("\nAcross the inventory:\n");
        for v in &check.inventory_violations {
            out.push_str(&format!(
                "  VIOLATION {}: {}\n    fix: {}\n",
                v.rule, v.message, v.fix
            ));
        }
    }
    out.push('\n');
    let n = check.violation_count();
    let accepted: usize = check.templates.iter().map(|t| t.accepted.len()).sum();
    if n == 0 && accepted == 0 {
        out.push_str("Result: every server is congestionless\n");
    } else if n == 0 {
        out.push_str(&format!(
            "Result: no violation; {accepted} EFLOPS rule{} broken on purpose as the inventory states (ACCEPTED above)\n",
            if accepted == 1 { "" } else { "s" }
        ));
    } else {
        let bad: Vec<String> = check
            .templates
            .iter()
            .filter(|t| !t.violations.is_empty())
            .map(|t| t.server_names.clone())
            .collect();
        let scope = if bad.is_empty() {
            String::new()
        } else {
            format!(" (servers {})", bad.join(", "))
        };
        out.push_str(&format!(
            "Result: {n} violation{}{scope}\n",
            if n == 1 { "" } else { "s" }
        ));
    }
    out
}

#[cfg(test)]
mod tests;
