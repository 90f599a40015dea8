//! Designs a fabric from an inventory: BiGraph (EFLOPS IV-B), fat-tree
//! (2-tier leaf-spine, 3-tier k-ary) or rail-optimized (rail switches per
//! server group under a spine), producing a [`Plan`].
//!
//! Port use on every switch follows one rule: inter-switch links take the
//! first usable ports, sub-nodes the next ones, the rest stay free for
//! growth. Sub-nodes are attached in inventory order (server by server),
//! spread as evenly as possible over the switches that carry them.
//!
//! The plan also gets the QoS intent: the topology's defaults with the
//! inventory's `[qos]` overrides ([`QosIntent::resolve`]), and the
//! `[addressing]` pools.

mod bigraph;
pub mod counterpart;
mod fattree;
mod hpn;
mod racks;
mod rail;
pub mod shorthand;

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::inventory::{Inventory, SubNodeSpec, SwitchRole};
use crate::plan::{
    Cable, CableKind, Media, Name, PLAN_FORMAT_VERSION, Plan, PlanPort, PlanServer, PlanSubNode,
    PlanSwitch, PortRole, Tier, Topology,
};
use crate::qos::QosIntent;
use crate::routing::RoutingMode;

pub use bigraph::{bigraph_capacity, largest_bigraph};
pub use counterpart::counterpart;
pub use fattree::{largest_three_tier, largest_two_tier, leaf_split};
pub use hpn::dual_port;

/// What to design.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignOptions {
    /// BiGraph, fat-tree or rail-optimized.
    pub topology: Topology,
    /// BiGraph: force the number of switches N.
    pub n: Option<usize>,
    /// BiGraph: force the sub-nodes per switch M.
    pub m: Option<usize>,
    /// Fat-tree: force 2 or 3 tiers (default: 2 when it fits, else 3).
    pub tiers: Option<u8>,
    /// Fat-tree and rail-optimized: leaf (rail switch) downlink to uplink
    /// bandwidth ratio (1 = non-blocking).
    pub oversubscription: f64,
    /// Fat-tree: use only `k` ports of each switch in a 3-tier design.
    pub k: Option<u32>,
    /// Take as many switches of the inventory's models as the design needs,
    /// instead of at most the inventory's counts (used by `compare` and by
    /// the command-line shorthands).
    pub grow_switch_pool: bool,
    /// Static routes or BGP, over the inventory's `[routing] mode`.
    pub routing: Option<RoutingMode>,
}

impl Default for DesignOptions {
    fn default() -> Self {
        Self {
            topology: Topology::BiGraph,
            n: None,
            m: None,
            tiers: None,
            oversubscription: 1.0,
            k: None,
            grow_switch_pool: false,
            routing: None,
        }
    }
}

/// Designs a fabric for every NIC of the inventory. The plan holds each
/// distinct name once ([`crate::plan::interned`]): a switch's name in
/// every port and cable that reaches it is one shared [`Name`].
pub fn design(inv: &Inventory, opts: &DesignOptions) -> Result<CheckedPlan> {
    crate::plan::interned(|| design_named(inv, opts))
}

fn design_named(inv: &Inventory, opts: &DesignOptions) -> Result<CheckedPlan> {
    if !(opts.oversubscription.is_finite() && opts.oversubscription >= 1.0) {
        return Err(Error::parameter(
            "oversubscription",
            format!(
                "{} is not a ratio of 1 or more (1 means non-blocking, 3 means 3:1)",
                opts.oversubscription
            ),
        ));
    }
    let endpoints = endpoints(inv);
    if endpoints.is_empty() {
        return Err(Error::Infeasible {
            input: inv.source.clone(),
            topology: opts.topology.as_str().to_string(),
            reason: "the inventory has no NICs to attach".to_string(),
            fix: "add servers with [[server.nic]] tables".to_string(),
        });
    }
    if inv.switch_templates.is_empty() {
        return Err(Error::Infeasible {
            input: inv.source.clone(),
            topology: opts.topology.as_str().to_string(),
            reason: "the inventory has no switches".to_string(),
            fix: "add a [[switch]] table with the model, ports and port_gbps".to_string(),
        });
    }
    // The QoS intent: the topology's defaults with the inventory's
    // overrides, checked before anything is designed.
    let (qos, qos_notes) =
        QosIntent::resolve(opts.topology, &inv.qos).map_err(|mut problems| {
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            Error::Invalid {
                file: inv.qos.file.clone(),
                what: "inventory",
                problems,
            }
        })?;
    let mut plan = match opts.topology {
        Topology::BiGraph => bigraph::design(inv, opts, &endpoints),
        Topology::FatTree => fattree::design(inv, opts, &endpoints),
        Topology::RailOptimized => rail::design(inv, opts, &endpoints),
        Topology::Hpn => hpn::design(inv, opts, &endpoints),
    }?;
    elevate(inv, &mut plan)?;
    let dual = endpoints.iter().filter(|e| e.ports == 2).count();
    if dual > 0 && opts.topology != Topology::Hpn {
        plan.notes.push(format!(
            "{dual} dual-port NIC{} (`ports = 2`): a {} design cables port 0 only, at {} Gbps; port 1 stays uncabled (an HPN design cables both)",
            if dual == 1 { "" } else { "s" },
            opts.topology.label(),
            endpoints.iter().map(|e| e.gbps).max().unwrap_or(0)
        ));
    }
    plan.qos = Some(qos);
    plan.notes.extend(qos_notes);
    plan.routing = inv.routing;
    if let Some(mode) = opts.routing {
        plan.routing.mode = mode;
    }
    // The ASNs must fit the switches the design made.
    let problems: Vec<crate::Problem> = plan
        .routing
        .problems(plan.switch_list.len())
        .into_iter()
        .map(|p| crate::Problem {
            line: p.line.or(inv.routing_line),
            ..p
        })
        .collect();
    if !problems.is_empty() {
        return Err(Error::Invalid {
            file: inv.source.clone(),
            what: "inventory",
            problems,
        });
    }
    if plan.routing.is_bgp() {
        let r = plan.routing;
        plan.notes.push(format!(
            "routing bgp: eBGP on every inter-switch cable, one ASN per switch ({} to {}), BFD {} ms x {}, ECMP with multipath-relax (docs/routing.md)",
            r.asn(0),
            r.asn(plan.switch_list.len().saturating_sub(1)),
            r.bfd.tx_ms.max(r.bfd.rx_ms),
            r.bfd.multiplier
        ));
    }
    let links = plan
        .cables
        .iter()
        .filter(|c| c.kind == CableKind::InterSwitch)
        .count();
    if let Some(note) = plan.addressing.size_link_pool(links as u64) {
        plan.notes.push(note);
    }
    // Breakouts: a lane may meet a lane of another broken-out switch only
    // over a straight cable, which the designs do not arrange; refused
    // here, naming the first such cable.
    if let Some(f) = crate::validate::breakouts(&plan).into_iter().next() {
        return Err(Error::Infeasible {
            input: inv.source.clone(),
            topology: opts.topology.as_str().to_string(),
            reason: format!("{}: {}", f.object, f.message),
            fix: f.fix,
        });
    }
    // The inventory's addresses may not fit the switches the design puts
    // the NICs on (or its pools the plan): such a plan could not be
    // rendered, so it is no design.
    let problems = crate::validate::render_refusals(&plan);
    if !problems.is_empty() {
        return Err(Error::Invalid {
            file: inv.source.clone(),
            what: "inventory",
            problems,
        });
    }
    Ok(CheckedPlan::designed(plan, &inv.source))
}

/// A NIC to attach, in inventory order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint {
    /// Index into [`Inventory::servers`].
    pub server: usize,
    /// Index of the sub-node within its server.
    pub index: usize,
    /// The NIC and its GPU.
    pub spec: SubNodeSpec,
    /// NIC line rate, per port.
    pub gbps: u32,
    /// Network ports of the NIC (1 or 2).
    pub ports: u32,
}

pub(crate) fn endpoints(inv: &Inventory) -> Vec<Endpoint> {
    let mut out = Vec::with_capacity(inv.sub_node_count());
    for (si, server) in inv.servers.iter().enumerate() {
        let t = inv.template_of(server);
        for (index, spec) in t.sub_nodes().into_iter().enumerate() {
            out.push(Endpoint {
                server: si,
                index,
                spec,
                gbps: t.nics[spec.nic].speed_gbps,
                ports: t.nics[spec.nic].ports,
            });
        }
    }
    out
}

/// A physical switch taken from the inventory (or made from a template's
/// pattern when the pool may grow).
#[derive(Debug, Clone)]
pub(crate) struct PhysSwitch {
    pub name: String,
    pub template: usize,
    pub rack: Option<String>,
    /// Made from the last template's pattern (the pool grew): every
    /// further switch is another of the same shape.
    pub grown: bool,
}

/// Physical switches available to a design, template by template.
pub(crate) struct Pool<'a> {
    inv: &'a Inventory,
    grow: bool,
    /// Next unused instance per template.
    next: Vec<usize>,
    /// Next instance number per template when growing.
    grow_number: Vec<u64>,
    names: HashSet<String>,
}

impl<'a> Pool<'a> {
    pub fn new(inv: &'a Inventory, grow: bool) -> Self {
        let mut names: HashSet<String> = inv.servers.iter().map(|s| s.name.clone()).collect();
        names.extend(inv.switches.iter().map(|s| s.name.clone()));
        names.extend(inv.racks.iter().map(|r| r.name.clone()));
        Self {
            inv,
            grow,
            next: inv
                .switch_templates
                .iter()
                .map(|t| t.instances.start)
                .collect(),
            grow_number: inv
                .switch_templates
                .iter()
                .map(|t| {
                    t.instances
                        .clone()
                        .map(|i| inv.switches[i].number + 1)
                        .max()
                        .unwrap_or(1)
                })
                .collect(),
            names,
        }
    }

    /// Takes the next switch from the first template of `templates` that has
    /// one left; when growing, makes one more from the last template.
    pub fn take(&mut self, templates: &[usize]) -> Option<PhysSwitch> {
        for &t in templates {
            let tpl = &self.inv.switch_templates[t];
            if self.next[t] < tpl.instances.end {
                let sw = &self.inv.switches[self.next[t]];
                self.next[t] += 1;
                return Some(PhysSwitch {
                    name: sw.name.clone(),
                    template: t,
                    rack: sw.rack.clone(),
                    grown: false,
                });
            }
        }
        if !self.grow {
            return None;
        }
        let &t = templates.last()?;
        let tpl = &self.inv.switch_templates[t];
        let pattern = crate::text::NamePattern::parse(&tpl.pattern).ok()?;
        let rack = tpl
            .rack
            .as_ref()
            .and_then(|r| crate::text::NamePattern::parse(r).ok());
        // The template's first number, from which `{n/K}` groups count.
        let first = tpl
            .instances
            .clone()
            .map(|i| self.inv.switches[i].number)
            .min()
            .unwrap_or(1);
        loop {
            let n = self.grow_number[t];
            self.grow_number[t] += 1;
            // A pattern without a number cannot make more distinct names;
            // fall back to a numbered suffix.
            let name = if pattern.has_placeholder() {
                pattern.render(n, first)
            } else {
                format!("{}-{n}", tpl.pattern)
            };
            if self.names.insert(name.clone()) {
                return Some(PhysSwitch {
                    name,
                    template: t,
                    rack: rack.as_ref().map(|r| r.render(n, first)),
                    grown: true,
                });
            }
        }
    }
}

/// Templates eligible for a fat-tree role, in inventory order.
pub(crate) fn templates_for(inv: &Inventory, roles: &[SwitchRole]) -> Vec<usize> {
    inv.switch_templates
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role.is_none_or(|r| roles.contains(&r)))
        .map(|(i, _)| i)
        .collect()
}

/// Builds the plan's switches, ports, cables and attachments.
pub(crate) struct FabricBuilder<'a> {
    inv: &'a Inventory,
    switches: Vec<PlanSwitch>,
    /// Physical switch names, in the order they were added.
    physical: Vec<String>,
    /// Physical switch names already in `physical`.
    physical_seen: HashSet<String>,
    cables: Vec<Cable>,
    sub_nodes: Vec<PlanSubNode>,
    /// The media of a NIC's cable when the racks are unknown: DAC to a
    /// switch in the server's rack, optical to a rail switch
    /// ([`FabricBuilder::on_rails`]). Every cable's media is set by
    /// [`racks::place`] when the fabric is finished.
    server_media: Media,
    /// (NIC speed, port speed) pairs seen, for mismatch warnings.
    speed_pairs: BTreeSet<(u32, u32)>,
    /// Each physical switch's template and whether the pool grew it.
    templates: HashMap<String, (usize, bool)>,
}

/// A switch as the builder hands ports out.
#[derive(Debug, Clone)]
pub(crate) struct SwitchSlot {
    /// Index into the plan's switch list.
    pub index: usize,
    /// Usable ports in order.
    pub usable: Vec<u32>,
}

impl<'a> FabricBuilder<'a> {
    pub fn new(inv: &'a Inventory) -> Self {
        Self {
            inv,
            switches: Vec::new(),
            physical: Vec::new(),
            physical_seen: HashSet::new(),
            cables: Vec::new(),
            sub_nodes: Vec::new(),
            server_media: Media::Dac,
            speed_pairs: BTreeSet::new(),
            templates: HashMap::new(),
        }
    }

    /// The builder of a fabric whose servers are cabled to rail switches
    /// (rail-optimized, HPN): a rail switch takes one NIC of every server
    /// of its group, so where the inventory gives no racks it is taken to
    /// stand in none of their racks, and the NIC cables are optical (the
    /// cost model's rule: DAC within a rack, optical between racks).
    pub fn on_rails(mut self) -> Self {
        self.server_media = Media::Optical;
        self
    }

    /// Adds a switch (or a VLAN half). `ports` are the physical ports it
    /// owns; reserved ports of the template are marked as such.
    pub fn add_switch(
        &mut self,
        phys: &PhysSwitch,
        name: String,
        tier: Tier,
        vlan: Option<u16>,
        pod: Option<usize>,
        ports: &[u32],
    ) -> SwitchSlot {
        let t = &self.inv.switch_templates[phys.template];
        if self.physical_seen.insert(phys.name.clone()) {
            self.physical.push(phys.name.clone());
            self.templates
                .insert(phys.name.clone(), (phys.template, phys.grown));
        }
        let plan_ports: Vec<PlanPort> = ports
            .iter()
            .map(|&p| PlanPort {
                port: p,
                cage: t.breakout.map(|b| b.cage_lane(p).0),
                lane: t.breakout.map(|b| b.cage_lane(p).1),
                role: if t.reserved_ports.binary_search(&p).is_ok() {
                    PortRole::Reserved
                } else {
                    PortRole::Free
                },
                peer: None,
                peer_port: None,
            })
            .collect();
        let usable = ports
            .iter()
            .copied()
            .filter(|p| t.reserved_ports.binary_search(p).is_err())
            .collect();
        self.switches.push(PlanSwitch {
            name: name.into(),
            part_or_tier: tier,
            physical: phys.name.as_str().into(),
            model: t.model.as_str().into(),
            vlan,
            pod,
            rail: None,
            plane: None,
            rack: phys.rack.as_deref().map(Name::from),
            position: None,
            u_height: None,
            port_gbps: t.port_gbps,
            port_name: t.port_name.clone(),
            breakout: t.breakout,
            ports: plan_ports,
        });
        SwitchSlot {
            index: self.switches.len() - 1,
            usable,
        }
    }

    /// Marks switch `sw` as the rail switch of NIC index `rail`.
    pub fn set_rail(&mut self, sw: usize, rail: usize) {
        self.switches[sw].rail = Some(rail);
    }

    /// Marks switch `sw` as a switch of HPN plane `plane`.
    pub fn set_plane(&mut self, sw: usize, plane: usize) {
        self.switches[sw].plane = Some(plane);
    }

    fn port_mut(&mut self, sw: usize, port: u32) -> &mut PlanPort {
        let s = &mut self.switches[sw];
        let i = s
            .ports
            .binary_search_by_key(&port, |p| p.port)
            .expect("the design only uses ports of the switch");
        &mut s.ports[i]
    }

    /// Cables port `pa` of switch `a` to port `pb` of switch `b`.
    pub fn link(&mut self, a: usize, pa: u32, b: usize, pb: u32) {
        let (a_name, a_phys) = (
            self.switches[a].name.clone(),
            self.switches[a].physical.clone(),
        );
        let (b_name, b_phys) = (
            self.switches[b].name.clone(),
            self.switches[b].physical.clone(),
        );
        let gbps = self.switches[a].port_gbps.min(self.switches[b].port_gbps);
        {
            let p = self.port_mut(a, pa);
            p.role = PortRole::InterSwitch;
            p.peer = Some(b_name);
            p.peer_port = Some(pb.to_string().into());
        }
        {
            let p = self.port_mut(b, pb);
            p.role = PortRole::InterSwitch;
            p.peer = Some(a_name);
            p.peer_port = Some(pa.to_string().into());
        }
        self.cables.push(Cable {
            a: a_phys,
            a_port: pa,
            b: b_phys,
            b_port: pb.to_string().into(),
            gbps,
            kind: CableKind::InterSwitch,
            // Set from the racks by `racks::place` in `finish`.
            media: Media::Optical,
        });
    }

    /// Cables NIC port `label` of endpoint `e` to port `port` of switch
    /// `sw`; returns the switch's name and tier.
    fn cable_nic(&mut self, sw: usize, port: u32, e: &Endpoint, label: String) -> (Name, Tier) {
        let inv = self.inv;
        let server = &inv.servers[e.server];
        let nic = &inv.template_of(server).nics[e.spec.nic];
        let (switch_name, phys, tier, port_gbps) = {
            let s = &self.switches[sw];
            (
                s.name.clone(),
                s.physical.clone(),
                s.part_or_tier,
                s.port_gbps,
            )
        };
        {
            let p = self.port_mut(sw, port);
            p.role = PortRole::SubNode;
            p.peer = Some(server.name.as_str().into());
            p.peer_port = Some(label.as_str().into());
        }
        self.speed_pairs.insert((nic.speed_gbps, port_gbps));
        self.cables.push(Cable {
            a: phys,
            a_port: port,
            b: server.name.as_str().into(),
            b_port: label.into(),
            gbps: port_gbps.min(nic.speed_gbps),
            kind: CableKind::SubNode,
            // Set from the racks by `racks::place` in `finish`.
            media: self.server_media,
        });
        (switch_name, tier)
    }

    /// Attaches both ports of a dual-port endpoint: port 0 to port `port0`
    /// of switch `sw0` (plane A), port 1 to port `port1` of switch `sw1`
    /// (plane B).
    pub fn attach_dual(
        &mut self,
        (sw0, port0): (usize, u32),
        (sw1, port1): (usize, u32),
        e: &Endpoint,
    ) {
        let name = self.inv.template_of(&self.inv.servers[e.server]).nics[e.spec.nic]
            .name
            .clone();
        self.attach_as(sw0, port0, e, format!("{name}:p0"));
        let (switch, part_or_tier) = self.cable_nic(sw1, port1, e, format!("{name}:p1"));
        if let Some(sn) = self.sub_nodes.last_mut() {
            sn.port1 = Some(crate::plan::PlanAttachment {
                switch,
                port: port1,
                part_or_tier,
            });
        }
    }

    /// Attaches an endpoint to port `port` of switch `sw`.
    pub fn attach(&mut self, sw: usize, port: u32, e: &Endpoint) {
        let inv = self.inv;
        let label = inv.template_of(&inv.servers[e.server]).nics[e.spec.nic]
            .name
            .clone();
        self.attach_as(sw, port, e, label);
    }

    /// Attaches an endpoint's NIC (port 0, cabled as `label`) to port
    /// `port` of switch `sw`.
    fn attach_as(&mut self, sw: usize, port: u32, e: &Endpoint, label: String) {
        let inv = self.inv;
        let server = &inv.servers[e.server];
        let t = inv.template_of(server);
        let nic = &t.nics[e.spec.nic];
        let (switch_name, tier) = self.cable_nic(sw, port, e, label);
        let addr = server.nic_addresses.get(e.spec.nic);
        let pcie_switch = match nic.attachment {
            crate::inventory::Attachment::PcieSwitch(i) => {
                Some(t.pcie_switches[i].name.as_str().into())
            }
            crate::inventory::Attachment::RootPort(_) => None,
        };
        self.sub_nodes.push(PlanSubNode {
            id: format!("{}/sn{}", server.name, e.index).into(),
            server: server.name.as_str().into(),
            index: e.index,
            gpu: e.spec.gpu.map(|g| t.gpus[g].name.as_str().into()),
            gpu_index: e.spec.gpu,
            gpu_indices: t.shared_gpus(&e.spec),
            nic: nic.name.as_str().into(),
            netdev: nic.netdev.as_deref().map(Name::from),
            nic_gbps: nic.speed_gbps,
            socket: t.sockets[t.socket_of(nic.attachment)].as_str().into(),
            socket_index: t.socket_of(nic.attachment),
            pcie_switch,
            mac: addr.and_then(|a| a.mac.clone()),
            ip: addr.and_then(|a| a.ip.clone()),
            switch: switch_name,
            port,
            part_or_tier: tier,
            port1: None,
        });
    }

    /// Finishes the plan.
    pub fn finish(
        mut self,
        topology: Topology,
        mut notes: Vec<String>,
        mut warnings: Vec<String>,
    ) -> Plan {
        let inv = self.inv;
        let heights: HashMap<String, u32> = (self.templates.iter())
            .map(|(name, &(t, _))| (name.clone(), inv.switch_templates[t].elevation.u_height))
            .collect();
        let placed = racks::place(
            inv,
            &mut self.switches,
            &mut self.cables,
            self.server_media,
            &heights,
        );
        notes.extend(placed.note);
        // Sub-nodes in inventory order (server, then index within it).
        let order: HashMap<&str, usize> = inv
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let mut sub_nodes = self.sub_nodes;
        sub_nodes.sort_by_key(|s| (order[s.server.as_str()], s.index));
        let mut servers: Vec<PlanServer> = inv
            .servers
            .iter()
            .map(|s| PlanServer {
                name: s.name.as_str().into(),
                rack: s.rack.as_deref().map(Name::from),
                position: None,
                u_height: None,
                sub_nodes: Vec::new(),
                gpu_model: {
                    let gpus = &inv.template_of(s).gpus;
                    gpus.first()
                        .filter(|g| gpus.iter().all(|o| o.model == g.model))
                        .map(|g| g.model.as_str().into())
                },
                nvlink: (inv.template_of(s).nvlink.iter())
                    .map(|d| crate::plan::PlanNvlink {
                        name: d.name.clone(),
                        kind: d.kind,
                        gbps: d.gbps,
                        gpu_indices: d.gpus.clone(),
                    })
                    .collect(),
                pci: plan_pci(inv.template_of(s)),
            })
            .collect();
        for (i, sn) in sub_nodes.iter().enumerate() {
            servers[order[sn.server.as_str()]].sub_nodes.push(i);
        }
        let links = self
            .cables
            .iter()
            .filter(|c| c.kind == CableKind::InterSwitch)
            .count();
        if placed.defaulted_media {
            notes.push(if self.server_media == Media::Optical {
                "cable media assumed where racks are unknown: sub-node cables optical (a rail switch takes one NIC of every server of its group, so it stands in none of their racks), inter-switch cables optical"
                    .to_string()
            } else {
                "cable media assumed where racks are unknown: sub-node cables DAC, inter-switch cables optical"
                    .to_string()
            });
        }
        for &(nic, port) in &self.speed_pairs {
            if nic != port {
                // Breakouts are the inventory's choice, never the design's:
                // a breakout cable is a part to buy and a cage setting to
                // push, so the design says where one would fit.
                let hint = match nic.checked_div(port).filter(|_| nic > port) {
                    _ if port > nic
                        && port.is_multiple_of(nic)
                        && crate::fabric::Breakout::LANES.contains(&(port / nic)) =>
                    {
                        format!(
                            "; `breakout = \"{}x{nic}G\"` on the [[switch]] splits each port into {} {nic} Gbps ports (docs/inventory.md)",
                            port / nic,
                            port / nic
                        )
                    }
                    _ => String::new(),
                };
                warnings.push(format!(
                    "{nic} Gbps NICs are cabled to {port} Gbps switch ports; those links run at {} Gbps{hint}",
                    nic.min(port)
                ));
            }
        }
        Plan {
            format_version: PLAN_FORMAT_VERSION,
            name: inv.name.clone(),
            topology,
            sub_nodes: sub_nodes.len(),
            switches: self.switches.len(),
            physical_switches: self.physical.len(),
            links,
            bigraph: None,
            fat_tree: None,
            rail: None,
            hpn: None,
            notes,
            warnings,
            switch_list: self.switches,
            servers,
            sub_node_list: sub_nodes,
            cables: self.cables,
            racks: placed.racks,
            qos: None,
            addressing: inv.qos.addressing.clone(),
            routing: crate::routing::Routing::default(),
        }
    }
}

/// Sets every racked server's and switch's position and height
/// ([`racks::elevate`]); refuses a rack that overflows or two devices
/// that overlap, naming them and the inventory's lines. A switch the
/// design adds beyond the inventory's count takes the height of the last
/// template of its model (the pool grows from the last template).
fn elevate(inv: &Inventory, plan: &mut Plan) -> Result<()> {
    let mut devices = Vec::new();
    let mut server_of = Vec::new();
    for (i, (s, p)) in inv.servers.iter().zip(plan.servers.iter()).enumerate() {
        if let Some(rack) = &p.rack {
            let e = inv.template_of(s).elevation;
            devices.push(racks::Device {
                kind: "server",
                name: s.name.clone(),
                rack: rack.to_string(),
                u_height: e.u_height,
                given: s.position,
                line: e.line,
            });
            server_of.push(i);
        }
    }
    let in_inventory: HashMap<&str, &crate::inventory::Switch> =
        inv.switches.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut switch_of: Vec<String> = Vec::new();
    for s in &plan.switch_list {
        let Some(rack) = &s.rack else { continue };
        if !seen.insert(s.physical.as_str()) {
            continue;
        }
        let (template, given) = match in_inventory.get(s.physical.as_str()) {
            Some(sw) => (Some(sw.template), sw.position),
            None => (
                inv.switch_templates
                    .iter()
                    .rposition(|t| t.model == s.model),
                None,
            ),
        };
        let e = template.map(|t| inv.switch_templates[t].elevation);
        devices.push(racks::Device {
            kind: "switch",
            name: s.physical.to_string(),
            rack: rack.to_string(),
            u_height: e.map_or(crate::inventory::DEFAULT_SWITCH_U, |e| e.u_height),
            given,
            line: e.and_then(|e| e.line),
        });
        switch_of.push(s.physical.to_string());
    }
    if devices.is_empty() {
        return Ok(());
    }
    let at = racks::elevate(&devices, &plan.racks).map_err(|mut problems| {
        problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
        Error::Invalid {
            file: inv.source.clone(),
            what: "inventory",
            problems,
        }
    })?;
    for (k, &i) in server_of.iter().enumerate() {
        plan.servers[i].position = Some(at[k]);
        plan.servers[i].u_height = Some(devices[k].u_height);
    }
    let n = server_of.len();
    let switch_pos: HashMap<&str, (u32, u32)> = (switch_of.iter().enumerate())
        .map(|(k, name)| (name.as_str(), (at[n + k], devices[n + k].u_height)))
        .collect();
    for s in &mut plan.switch_list {
        if let Some(&(pos, h)) = switch_pos.get(s.physical.as_str()) {
            s.position = Some(pos);
            s.u_height = Some(h);
        }
    }
    Ok(())
}

/// Spreads `total` items over `bins` as evenly as possible: the first
/// `total % bins` bins get one more.
pub(crate) fn even_split(total: usize, bins: usize) -> Vec<usize> {
    if bins == 0 {
        return Vec::new();
    }
    let q = total / bins;
    let r = total % bins;
    (0..bins).map(|i| q + usize::from(i < r)).collect()
}

#[cfg(test)]
mod tests;

/// The text of the bundled inventory `topologies/NAME.toml`, for tests
/// that change it before reading it.
#[cfg(test)]
pub(crate) fn bundled_text(name: &str) -> String {
    let path = format!("{}/../topologies/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The bundled inventory `topologies/NAME.toml`, read and checked: the
/// one inventory loader the unit tests of every module share.
#[cfg(test)]
pub(crate) fn bundled_inventory(name: &str) -> Inventory {
    Inventory::from_toml(&bundled_text(name), &format!("{name}.toml")).unwrap()
}

/// The bundled inventory `topologies/NAME.toml` designed as `topology`
/// (the designer's default when `None`): the one loader of designed plans
/// the unit tests of every module share.
#[cfg(test)]
pub(crate) fn bundled(name: &str, topology: Option<Topology>) -> CheckedPlan {
    let inv = bundled_inventory(name);
    let mut opts = DesignOptions::default();
    if let Some(t) = topology {
        opts.topology = t;
    }
    design(&inv, &opts).unwrap()
}

/// A server template's PCIe tree as the plan carries it: empty unless the
/// inventory gives every device its `pci_bus` (which the inventory's
/// checks hold all-or-none, with every link's width and generation).
fn plan_pci(t: &crate::inventory::ServerTemplate) -> Vec<crate::plan::PlanPci> {
    use crate::inventory::Attachment;
    use crate::plan::{PciKind, PlanPci};
    let switch_bus = |a: Attachment| match a {
        Attachment::PcieSwitch(s) => t.pcie_switches[s].pci_bus.clone(),
        Attachment::RootPort(_) => None,
    };
    let switch_of = |a: Attachment| match a {
        Attachment::PcieSwitch(s) => Some(&t.pcie_switches[s]),
        Attachment::RootPort(_) => None,
    };
    let mut out = Vec::new();
    for p in &t.pcie_switches {
        let (Some(bus), Some(lanes), Some(pcie_gen)) = (&p.pci_bus, p.lanes, p.pcie_gen) else {
            return Vec::new();
        };
        out.push(PlanPci {
            bus: bus.clone(),
            kind: PciKind::PcieSwitch,
            name: p.name.clone(),
            socket: p.socket,
            parent: None,
            lanes,
            pcie_gen,
            gbps: None,
        });
    }
    let devices = (t.gpus.iter())
        .map(|g| {
            (
                PciKind::Gpu,
                &g.name,
                &g.pci_bus,
                g.attachment,
                g.lanes,
                g.pcie_gen,
                None,
            )
        })
        .chain(t.nics.iter().map(|n| {
            let gbps = Some(n.speed_gbps);
            (
                PciKind::Nic,
                &n.name,
                &n.pci_bus,
                n.attachment,
                n.lanes,
                n.pcie_gen,
                gbps,
            )
        }));
    for (kind, name, bus, at, lanes, pcie_gen, gbps) in devices {
        let sw = switch_of(at);
        let (Some(bus), Some(lanes), Some(pcie_gen)) = (
            bus,
            lanes.or(sw.and_then(|p| p.lanes)),
            pcie_gen.or(sw.and_then(|p| p.pcie_gen)),
        ) else {
            return Vec::new();
        };
        out.push(PlanPci {
            bus: bus.clone(),
            kind,
            name: name.clone(),
            socket: t.socket_of(at),
            parent: switch_bus(at),
            lanes,
            pcie_gen,
            gbps,
        });
    }
    out
}
