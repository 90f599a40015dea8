//! The model's assembly: the devices and their ports, the inter-switch
//! links and their /31s, the sub-nodes' addresses, gateways and pool
//! blocks, and the routes; every refusal of [`Model::build`] is found here.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use super::super::avoid::Avoid;
use super::super::graph::RouteGraph;
use super::super::links::Network;
use super::{Device, Domain, Gateway, Host, Model, Port, PortKind, RoutedLink, StaticRoute, ip};
use crate::error::{Error, Problem};
use crate::plan::{CableKind, Plan, PortRole};
use crate::qos::{Ipv4Prefix, QosIntent};

impl<'p> Model<'p> {
    /// The model; with `routes` false the routes are only checked to exist,
    /// not listed; with `avoid` given, on the fabric without those. The
    /// route graph of the whole plan, when the assembly built one (with
    /// nothing to avoid), is put in `graph`.
    pub(super) fn assemble(
        plan: &'p Plan,
        routes: bool,
        avoid: &[Avoid],
        graph: &mut Option<Arc<RouteGraph>>,
    ) -> std::result::Result<Model<'p>, Vec<Problem>> {
        let qos = plan.qos_intent();
        let problems = qos.problems(plan.topology);
        if !problems.is_empty() {
            return Err(problems);
        }
        let (sub_pool, link_pool) = plan.addressing.pools().map_err(|p| vec![p])?;
        let mut b = Builder {
            plan,
            problems: Vec::new(),
        };
        let (devices, domains) = b.devices(&qos);
        for name in qos.switch_mtu.keys() {
            if !devices.iter().any(|d| &d.name == name) {
                b.problem(
                    format!("qos switch_mtu {name}"),
                    format!("{name} is not a physical switch of the plan"),
                    "name a switch of the plan, or remove the entry",
                );
            }
        }
        let mut m = Model {
            plan,
            dscp_map: qos.dscp_map(),
            lossless: qos.lossless_priorities(),
            qos,
            devices,
            domains,
            links: Vec::new(),
            hosts: Vec::new(),
            hosts1: Vec::new(),
        };
        if b.problems.is_empty() {
            b.links(&mut m, link_pool);
        }
        if b.problems.is_empty() {
            b.sub_nodes(&mut m, sub_pool, link_pool);
        }
        if b.problems.is_empty() {
            let net = if avoid.is_empty() {
                RouteGraph::build(plan).map(|built| {
                    let built = Arc::new(built);
                    *graph = Some(Arc::clone(&built));
                    Network::on(plan, "", built)
                })
            } else {
                Network::avoiding(plan, "", avoid).map_err(|e| match e {
                    Error::Invalid { problems, .. } => problems,
                    other => vec![Problem::at(
                        None,
                        "avoid",
                        other.to_string(),
                        "name links and switches of the plan",
                    )],
                })
            };
            match net {
                Ok(net) => {
                    let listed = b.routes(&m, &net, routes);
                    if routes {
                        for (d, r) in m.domains.iter_mut().zip(listed) {
                            d.routes = r;
                        }
                    }
                }
                Err(problems) => b.problems.extend(problems),
            }
        }
        if b.problems.is_empty() {
            Ok(m)
        } else {
            Err(b.problems)
        }
    }

    /// The routes of every domain (index as `domains`) on `net`, a network
    /// of this model's plan that may avoid links and switches: what
    /// [`Model::build_failed`] would give each domain for the same
    /// failures, without building the rest of the model again (the
    /// addresses, ports and hosts do not depend on the routes). The full
    /// rebuild the tests hold `reroute::RouteIndex` equal to.
    #[cfg(test)]
    pub fn routes_on(
        &self,
        net: &Network<'_>,
    ) -> std::result::Result<Vec<Vec<StaticRoute>>, Vec<Problem>> {
        let mut b = Builder {
            plan: self.plan,
            problems: Vec::new(),
        };
        let routes = b.routes(self, net, true);
        if b.problems.is_empty() {
            Ok(routes)
        } else {
            Err(b.problems)
        }
    }
}

struct Builder<'p> {
    plan: &'p Plan,
    problems: Vec<Problem>,
}

impl<'p> Builder<'p> {
    fn problem(&mut self, object: impl Into<String>, message: impl Into<String>, fix: &str) {
        self.problems
            .push(Problem::at(None, object, message, fix.to_string()));
    }

    fn devices(&mut self, qos: &QosIntent) -> (Vec<Device>, Vec<Domain>) {
        let plan = self.plan;
        let mut devices: Vec<Device> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut domains = Vec::with_capacity(plan.switch_list.len());
        for (i, s) in plan.switch_list.iter().enumerate() {
            let d = *index.entry(s.physical.as_str()).or_insert_with(|| {
                devices.push(Device {
                    name: s.physical.to_string(),
                    model: s.model.to_string(),
                    domains: Vec::new(),
                    ports: Vec::new(),
                    numbers: Vec::new(),
                    mtu: qos.mtu_of(&s.physical),
                });
                devices.len() - 1
            });
            let vlan = s.vlan.unwrap_or(plan.addressing.vlan);
            if let Some(&other) = devices[d]
                .domains
                .iter()
                .find(|&&o| domains.get(o).is_some_and(|o: &Domain| o.vlan == vlan))
            {
                self.problem(
                    format!("switch {}", s.name),
                    format!(
                        "VLAN {vlan} is also the VLAN of {} in the same box",
                        plan.switch_list[other].name
                    ),
                    "give the two halves of a split switch different VLANs",
                );
            }
            devices[d].domains.push(i);
            let mtu = devices[d].mtu;
            for (index, p) in s.ports.iter().enumerate() {
                devices[d].ports.push(Port {
                    number: p.port,
                    domain: i,
                    index,
                    kind: match p.role {
                        PortRole::Free => PortKind::Free,
                        PortRole::Reserved => PortKind::Reserved,
                        // Filled in once links and sub-nodes are known.
                        PortRole::InterSwitch | PortRole::SubNode => PortKind::Free,
                    },
                    mtu,
                    gbps: s.port_gbps,
                });
            }
            domains.push(Domain {
                device: d,
                vlan,
                vrf: format!("Vrf{vlan}"),
                gateways: Vec::new(),
                routes: Vec::new(),
            });
        }
        for dev in &mut devices {
            dev.ports.sort_by_key(|p| p.number);
            dev.numbers = dev.ports.iter().map(|p| p.number).collect();
            let dup = dev
                .ports
                .windows(2)
                .find(|w| w[0].number == w[1].number)
                .map(|w| w[0].number);
            if let Some(p) = dup {
                let name = dev.name.clone();
                self.problem(
                    format!("switch {name} port {p}"),
                    "the port belongs to two switches of the plan",
                    "run planner validate on the plan and design it again",
                );
            }
        }
        (devices, domains)
    }

    fn links(&mut self, m: &mut Model<'_>, pool: Ipv4Prefix) {
        let plan = self.plan;
        // A cable end's plan switch is the domain of the device port it
        // names (`devices` found no port in two domains).
        let device: rustc_hash::FxHashMap<&str, usize> = plan
            .switch_list
            .iter()
            .zip(&m.domains)
            .map(|(s, d)| (s.physical.as_str(), d.device))
            .collect();
        // The device and position in its port list of a cable end (the
        // cables of one switch follow each other: the last device first).
        let mut last: Option<(&str, usize)> = None;
        let mut end = |devices: &[Device], name: &'p str, port: u32| {
            let d = match last {
                Some((n, d)) if std::ptr::eq(n, name) || n == name => d,
                _ => {
                    let &d = device.get(name)?;
                    last = Some((name, d));
                    d
                }
            };
            let at = devices[d].numbers.binary_search(&port).ok()?;
            Some((d, at))
        };
        let cables: Vec<_> = plan
            .cables
            .iter()
            .filter(|c| c.kind == CableKind::InterSwitch)
            .collect();
        // Per plan port (`first[i] + k` for port k of switch i): a cable
        // ends on it.
        let first = port_offsets(plan);
        let mut cabled = vec![false; first[plan.switch_list.len()]];
        if (cables.len() as u64) * 2 > pool.size() {
            self.problem(
                "addressing link_pool",
                format!(
                    "{} holds {} /31 links, the plan has {}",
                    pool,
                    pool.size() / 2,
                    cables.len()
                ),
                "set [addressing] link_pool to a larger prefix and design again",
            );
            return;
        }
        for (k, c) in cables.iter().enumerate() {
            let b_port: Option<u32> = c.b_port.parse().ok();
            let a_end = end(&m.devices, &c.a, c.a_port);
            let b_end = b_port.and_then(|p| end(&m.devices, &c.b, p));
            let (Some(a_end), Some(b_end), Some(b_port)) = (a_end, b_end, b_port) else {
                self.problem(
                    format!("cable {} port {} to {} {}", c.a, c.a_port, c.b, c.b_port),
                    "an end is not a port of the plan's switches",
                    "run planner validate on the plan and design it again",
                );
                continue;
            };
            let domain = |(d, at): (usize, usize)| m.devices[d].ports[at].domain;
            let (a, b) = (domain(a_end), domain(b_end));
            let base = pool.network + 2 * k as u32;
            let id = m.links.len();
            m.links.push(RoutedLink {
                from: a,
                from_port: c.a_port,
                from_addr: base,
                to: b,
                to_port: b_port,
                to_addr: base + 1,
            });
            m.links.push(RoutedLink {
                from: b,
                from_port: b_port,
                from_addr: base + 1,
                to: a,
                to_port: c.a_port,
                to_addr: base,
            });
            // The end's port is the domain's own (it was found in the
            // domain's device by number).
            for ((dev, at), dom, port, link, peer, peer_port) in [
                (a_end, a, c.a_port, id, b, b_port),
                (b_end, b, b_port, id + 1, a, c.a_port),
            ] {
                let s = &plan.switch_list[dom];
                let q = &mut m.devices[dev].ports[at];
                cabled[first[dom] + q.index] = true;
                let name = &plan.switch_list[peer].name;
                let ok = s.ports.get(q.index).is_some_and(|p| {
                    p.role == PortRole::InterSwitch
                        && p.peer.as_ref().is_some_and(|x| {
                            crate::plan::Name::ptr_eq(x, name) || x.as_str() == name.as_str()
                        })
                        && p.peer_port
                            .as_deref()
                            .is_some_and(|q| crate::text::is_decimal(q, u64::from(peer_port)))
                });
                q.kind = PortKind::InterSwitch { link };
                if !ok {
                    self.problem(
                        format!("switch {} port {port}", s.name),
                        "the cable list and the port's peer disagree",
                        "run planner validate on the plan and design it again",
                    );
                }
            }
        }
        // A number finds one port of a device (`devices` found none twice):
        // the ports cable ends reached are those marked in `cabled`.
        for (i, s) in plan.switch_list.iter().enumerate() {
            for (k, p) in s.ports.iter().enumerate() {
                if p.role != PortRole::InterSwitch {
                    continue;
                }
                if !cabled[first[i] + k] {
                    self.problem(
                        format!("switch {} port {}", s.name, p.port),
                        "an inter-switch port without a cable in the cable list",
                        "run planner validate on the plan and design it again",
                    );
                }
            }
        }
    }

    fn sub_nodes(&mut self, m: &mut Model<'_>, pool: Ipv4Prefix, link_pool: Ipv4Prefix) {
        let plan = self.plan;
        let index: rustc_hash::FxHashMap<&str, usize> = plan
            .switch_list
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        // Where every NIC port is and the address the inventory gives it:
        // every sub-node's port 0, then the port 1 of dual-port NICs.
        let ports = plan
            .sub_node_list
            .iter()
            .enumerate()
            .map(|(i, sn)| (i, 0u8, sn.switch.as_str(), sn.port))
            .chain(plan.sub_node_list.iter().enumerate().filter_map(|(i, sn)| {
                sn.port1
                    .as_ref()
                    .map(|a| (i, 1u8, a.switch.as_str(), a.port))
            }));
        let mut ends: Vec<(usize, u8)> = Vec::with_capacity(plan.sub_nodes);
        let mut given: Vec<Option<(u32, Ipv4Prefix)>> = Vec::with_capacity(plan.sub_nodes);
        let mut domain_of = Vec::with_capacity(plan.sub_nodes);
        // The position of each NIC port's switch port in its switch's list.
        let mut position = Vec::with_capacity(plan.sub_node_list.len());
        // The traffic class of each NIC port's host (index into the
        // intent's classes), from its part: read here, where the sub-node
        // is read anyway, and found once per part, not once per host.
        let class_of = |part: Option<crate::fabric::Part>| {
            m.qos
                .class_for(part)
                .and_then(|c| m.qos.classes.iter().position(|x| x.name == c.name))
                .unwrap_or(0)
        };
        let classes = [
            class_of(None),
            class_of(Some(crate::fabric::Part::Upper)),
            class_of(Some(crate::fabric::Part::Lower)),
        ];
        let mut class = Vec::with_capacity(plan.sub_node_list.len());
        let first = port_offsets(plan);
        let mut placed = vec![false; first[plan.switch_list.len()]];
        for (i, nic_port, switch, port) in ports {
            let sn = &plan.sub_node_list[i];
            class.push(match sn.part_or_tier.part() {
                None => classes[0],
                Some(crate::fabric::Part::Upper) => classes[1],
                Some(crate::fabric::Part::Lower) => classes[2],
            });
            let object = || format!("sub-node {}", sn.id);
            let Some(&d) = index.get(switch) else {
                self.problem(
                    object(),
                    format!("switch {switch} is not in the plan"),
                    "run planner validate on the plan and design it again",
                );
                return;
            };
            domain_of.push(d);
            ends.push((i, nic_port));
            let dev = m.domains[d].device;
            match m.port_mut(dev, port) {
                Some(p) if p.domain == d => {
                    p.kind = PortKind::SubNode {
                        sub_node: i,
                        nic_port,
                    };
                    position.push(p.index);
                    placed[first[d] + p.index] = true;
                }
                _ => {
                    self.problem(
                        object(),
                        format!("port {port} is not a port of {switch}"),
                        "run planner validate on the plan and design it again",
                    );
                    return;
                }
            }
            given.push(match (&sn.ip, nic_port) {
                (None, _) | (_, 1..) => None,
                (Some(text), 0) => match parse_host(text) {
                    Ok(a) => Some(a),
                    Err(e) => {
                        self.problem(
                            format!("sub-node {} NIC {}", sn.id, sn.nic),
                            e,
                            "give the NIC an IPv4 address with its prefix length in the inventory, e.g. 10.100.3.2/24",
                        );
                        None
                    }
                },
            });
        }
        // As `links` marks cabled ports: the plan ports a NIC port was
        // placed on.
        for (d, s) in plan.switch_list.iter().enumerate() {
            for (k, p) in s.ports.iter().enumerate() {
                if p.role == PortRole::SubNode && !placed[first[d] + k] {
                    self.problem(
                        format!("switch {} port {}", s.name, p.port),
                        "a sub-node port without a sub-node",
                        "run planner validate on the plan and design it again",
                    );
                }
            }
        }
        if !self.problems.is_empty() {
            return;
        }

        // Inventory subnets: one switch each, no overlaps.
        let mut subnets: BTreeMap<Ipv4Prefix, usize> = BTreeMap::new();
        for (i, g) in given.iter().enumerate() {
            if let Some((_, p)) = g {
                let d = domain_of[i];
                if let Some(&other) = subnets.get(p)
                    && other != d
                {
                    self.problem(
                        format!("sub-node {}", plan.sub_node_list[ends[i].0].id),
                        format!(
                            "its subnet {p} is also on {}, but it is cabled to {}; a subnet lives on one switch",
                            plan.switch_list[other].name, plan.switch_list[d].name
                        ),
                        "give the NICs on different switches different subnets in the inventory",
                    );
                    continue;
                }
                subnets.insert(*p, d);
            }
        }
        let list: Vec<(Ipv4Prefix, usize)> = subnets.iter().map(|(p, d)| (*p, *d)).collect();
        for (i, (p, d)) in list.iter().enumerate() {
            for (q, e) in &list[i + 1..] {
                if p.overlaps(q) {
                    self.problem(
                        format!("subnet {p} of {}", plan.switch_list[*d].name),
                        format!("it overlaps subnet {q} of {}", plan.switch_list[*e].name),
                        "give the sub-nodes of each switch a subnet of their own in the inventory",
                    );
                }
            }
            if p.overlaps(&link_pool) {
                self.problem(
                    format!("subnet {p} of {}", plan.switch_list[*d].name),
                    format!("it overlaps the link pool {link_pool}"),
                    "set [addressing] link_pool elsewhere, or renumber the NICs",
                );
            }
        }
        if !self.problems.is_empty() {
            return;
        }

        // Pool blocks for switches with NICs that have no address, in
        // switch order.
        let mut needs = vec![false; plan.switch_list.len()];
        for (i, g) in given.iter().enumerate() {
            if g.is_none() {
                needs[domain_of[i]] = true;
            }
        }
        let mut taken: Vec<Ipv4Prefix> = subnets.keys().copied().collect();
        taken.push(link_pool);
        let blocks = match pool_blocks(plan, &needs, taken, pool) {
            Ok(blocks) => blocks,
            Err((d, len)) => {
                self.problem(
                    format!("switch {}", plan.switch_list[d].name),
                    format!("the sub-node pool {pool} has no /{len} left for its sub-nodes"),
                    "set [addressing] sub_node_pool to a larger prefix, or give the NICs addresses in the inventory",
                );
                return;
            }
        };

        // Addresses, gateways and hosts.
        let mut seen: rustc_hash::FxHashMap<u32, usize> =
            rustc_hash::FxHashMap::with_capacity_and_hasher(
                plan.sub_node_list.len(),
                Default::default(),
            );
        for (k, &(i, nic_port)) in ends.iter().enumerate() {
            let sn = &plan.sub_node_list[i];
            let d = domain_of[k];
            let (addr, prefix) = match given[k] {
                Some(a) => a,
                None => {
                    // Every switch with a NIC without an address has a
                    // block (or the pass returned above).
                    let Some(b) = blocks[d] else { continue };
                    (b.network + 1 + position[k] as u32, b)
                }
            };
            let gateway = prefix.last() - 1;
            let object = || format!("sub-node {}", sn.id);
            if addr == prefix.network || addr == prefix.last() {
                self.problem(
                    object(),
                    format!(
                        "{} is the network or broadcast address of {prefix}",
                        ip(addr)
                    ),
                    "give the NIC a host address in the inventory",
                );
                continue;
            }
            if addr == gateway {
                self.problem(
                    object(),
                    format!(
                        "{} is the gateway of {prefix}: the planner gives each subnet's last usable address to the switch",
                        ip(addr)
                    ),
                    "give the NIC another address in the inventory",
                );
                continue;
            }
            if let Some(&other) = seen.get(&addr) {
                self.problem(
                    object(),
                    format!(
                        "{} is also the address of {}",
                        ip(addr),
                        plan.sub_node_list[other].id
                    ),
                    "give every NIC its own address in the inventory",
                );
                continue;
            }
            seen.insert(addr, i);
            let gws = &mut m.domains[d].gateways;
            if !gws.iter().any(|g| g.prefix == prefix) {
                gws.push(Gateway {
                    prefix,
                    addr: gateway,
                });
            }
            let host = Host {
                domain: d,
                addr,
                prefix,
                gateway,
                class: class[k],
            };
            if nic_port == 0 {
                m.hosts.push(host);
            } else {
                m.hosts1.push(host);
            }
        }
        for d in &mut m.domains {
            d.gateways.sort_by_key(|g| g.prefix);
        }
    }

    fn no_route(&mut self, m: &Model<'_>, x: usize, t: usize) {
        self.problem(
            format!("switch {}", m.name(x)),
            format!("no route to the sub-nodes of {}", m.name(t)),
            "cable the switch towards it as its topology needs, or design the plan again",
        );
    }

    /// The routes of every switch: to every other switch with sub-nodes,
    /// the forwarding table of `net`, in port order. With `list` false only
    /// checks that each has a next hop.
    fn routes(&mut self, m: &Model<'_>, net: &Network<'_>, list: bool) -> Vec<Vec<StaticRoute>> {
        let n = m.domains.len();
        let mut all = Vec::with_capacity(if list { n } else { 0 });
        let targets: Vec<usize> = (0..n)
            .filter(|&d| !m.domains[d].gateways.is_empty())
            .collect();
        for x in 0..n {
            let mut routes = Vec::new();
            for &t in &targets {
                if !routes_towards(m.plan, x, t) {
                    continue;
                }
                if net.avoids_anything() {
                    // A failed fabric: no route from or to a failed
                    // switch, and a lost route is a finding, not a
                    // refusal.
                    if net.is_avoided_switch(x) || net.is_avoided_switch(t) {
                        continue;
                    }
                    if net.next_hops(x, t).is_empty(net) {
                        continue;
                    }
                }
                if !list {
                    if net.next_hops(x, t).is_empty(net) {
                        self.no_route(m, x, t);
                    }
                    continue;
                }
                let hops = m.hops_on(net, x, t, &mut self.problems);
                if hops.is_empty() {
                    self.no_route(m, x, t);
                    continue;
                }
                for g in &m.domains[t].gateways {
                    routes.push(StaticRoute {
                        prefix: g.prefix,
                        target: t,
                        next_hops: hops.clone(),
                    });
                }
            }
            if list {
                all.push(routes);
            }
        }
        all
    }
}

/// The pool block of every switch of `needs` (a switch with NICs that
/// have no address), taken from `pool` in switch order: a /24, or larger
/// when the switch has more than 253 ports, skipping blocks that overlap
/// one of `taken` (the inventory's subnets and the link pool). Else the
/// first switch without a block and the prefix length it needed.
pub(super) fn pool_blocks(
    plan: &Plan,
    needs: &[bool],
    mut taken: Vec<Ipv4Prefix>,
    pool: Ipv4Prefix,
) -> std::result::Result<Vec<Option<Ipv4Prefix>>, (usize, u8)> {
    let mut cursor = u64::from(pool.network);
    let end = u64::from(pool.network) + pool.size();
    let mut blocks: Vec<Option<Ipv4Prefix>> = vec![None; plan.switch_list.len()];
    for d in (0..needs.len()).filter(|&d| needs[d]) {
        let ports = plan.switch_list[d].ports.len() as u64;
        let mut len = 24u8;
        while (1u64 << (32 - u32::from(len))) < ports + 3 && len > 1 {
            len -= 1;
        }
        let size = 1u64 << (32 - u32::from(len));
        let block = loop {
            cursor = cursor.div_ceil(size) * size;
            if cursor + size > end {
                break None;
            }
            let b = Ipv4Prefix {
                network: cursor as u32,
                len,
            };
            if taken.iter().any(|t| t.overlaps(&b)) {
                cursor += size;
                continue;
            }
            cursor += size;
            break Some(b);
        };
        match block {
            Some(b) => {
                taken.push(b);
                blocks[d] = Some(b);
            }
            None => return Err((d, len)),
        }
    }
    Ok(blocks)
}

/// Switch `x` has a route towards switch `t`'s subnets: another switch,
/// of the same plane (HPN's planes route apart: a switch has routes to the
/// subnets of its own plane's ToRs only).
pub(super) fn routes_towards(plan: &Plan, x: usize, t: usize) -> bool {
    t != x && plan.switch_list[t].plane == plan.switch_list[x].plane
}

/// Where each plan switch's ports start in a list of every switch's ports
/// in plan order; one more entry, the total, at the end.
fn port_offsets(plan: &Plan) -> Vec<usize> {
    let mut first = Vec::with_capacity(plan.switch_list.len() + 1);
    let mut next = 0;
    for s in &plan.switch_list {
        first.push(next);
        next += s.ports.len();
    }
    first.push(next);
    first
}

/// Parses a NIC address from the plan: IPv4 with a prefix length that
/// leaves room for a gateway.
fn parse_host(text: &str) -> std::result::Result<(u32, Ipv4Prefix), String> {
    let Some((addr, len)) = text.split_once('/') else {
        return Err(format!(
            "IP {text} has no prefix length, so its subnet and gateway are unknown"
        ));
    };
    let addr: Ipv4Addr = match addr.parse::<IpAddr>() {
        Ok(IpAddr::V4(a)) => a,
        Ok(IpAddr::V6(_)) => {
            return Err(format!(
                "IP {text} is IPv6; rendered configurations address sub-nodes with IPv4"
            ));
        }
        Err(_) => return Err(format!("`{text}` is not an IP address")),
    };
    let len: u8 = match len.parse() {
        Ok(l) if l <= 30 => l,
        _ => {
            return Err(format!(
                "IP {text}: a subnet needs a prefix length of 30 or less to hold a gateway"
            ));
        }
    };
    let a = u32::from(addr);
    Ok((a, Ipv4Prefix::containing(a, len)))
}
