//! A plan's consistency: the name rule, ports, peers, cables and attachments that agree, and downlink against uplink bandwidth.

use super::*;

/// The names pass: every name of the plan that reaches an output follows
/// the name rule ([`crate::names`]); one `name` finding per bad value.
pub(super) fn name_rule(plan: &Plan, findings: &mut Vec<Finding>) {
    use crate::names::{check_address, check_model, check_pattern};
    // Each distinct name is checked about once, however often it is used
    // (every use of a bad one is still reported).
    let mut passed = super::refs::Passed::new();
    let mut check_name = |value: &str| passed.check(value, crate::names::check_name);
    // The object is only named when a value breaks the rule: a plan has a
    // million names, nearly all of them good.
    let mut check = |object: &dyn Fn() -> String,
                     what: &str,
                     value: &str,
                     rule: &mut dyn FnMut(&str) -> Result<(), String>| {
        if let Err(e) = rule(value) {
            findings.push(finding(
                "name",
                object(),
                format!("{what}: {e}"),
                format!(
                    "rename it in the inventory and design again: {}",
                    crate::names::RULE
                ),
                None,
            ));
        }
    };
    check(&|| "plan".to_string(), "name", &plan.name, &mut check_name);
    for s in &plan.switch_list {
        let object = || format!("switch {}", s.name);
        check(&object, "name", &s.name, &mut check_name);
        check(&object, "physical", &s.physical, &mut check_name);
        check(&object, "model", &s.model, &mut check_model);
        if let Some(r) = &s.rack {
            check(&object, "rack", r, &mut check_name);
        }
        if let Some(p) = &s.port_name {
            check(&object, "port_name", p, &mut check_pattern);
        }
        // Peers are switch, server or NIC names; a port's peer_port is a
        // port number or a NIC name.
        if let Some(p) = s.ports.iter().find(|p| {
            p.peer.as_deref().is_some_and(|v| check_name(v).is_err())
                || p.peer_port
                    .as_deref()
                    .is_some_and(|v| check_name(v).is_err())
        }) {
            let o = || format!("{} port {}", object(), p.port);
            check(
                &o,
                "peer",
                p.peer.as_deref().unwrap_or("-"),
                &mut check_name,
            );
            check(
                &o,
                "peer_port",
                p.peer_port.as_deref().unwrap_or("-"),
                &mut check_name,
            );
        }
    }
    for r in &plan.racks {
        check(
            &|| format!("rack {}", r.name),
            "name",
            &r.name,
            &mut check_name,
        );
    }
    for s in &plan.servers {
        let object = || format!("server {}", s.name);
        check(&object, "name", &s.name, &mut check_name);
        if let Some(r) = &s.rack {
            check(&object, "rack", r, &mut check_name);
        }
        for d in &s.nvlink {
            check(&object, "nvlink name", &d.name, &mut check_name);
        }
    }
    for sn in &plan.sub_node_list {
        let object = || format!("sub-node {}", sn.id);
        check(&object, "id", &sn.id, &mut check_name);
        check(&object, "server", &sn.server, &mut check_name);
        check(&object, "nic", &sn.nic, &mut check_name);
        check(&object, "socket", &sn.socket, &mut check_name);
        check(&object, "switch", &sn.switch, &mut check_name);
        let optional = [
            ("gpu", &sn.gpu),
            ("netdev", &sn.netdev),
            ("pcie_switch", &sn.pcie_switch),
        ];
        for (what, v) in optional {
            if let Some(v) = v {
                check(&object, what, v, &mut check_name);
            }
        }
        for (what, v) in [("mac", &sn.mac), ("ip", &sn.ip)] {
            if let Some(v) = v {
                check(&object, what, v, &mut check_address);
            }
        }
    }
    for c in &plan.cables {
        if [&c.a, &c.b, &c.b_port]
            .iter()
            .any(|v| check_name(v).is_err())
        {
            let object = || format!("cable {} port {}", c.a, c.a_port);
            check(&object, "a", &c.a, &mut check_name);
            check(&object, "b", &c.b, &mut check_name);
            check(&object, "b_port", &c.b_port, &mut check_name);
        }
    }
    if let Some(q) = &plan.qos {
        for c in &q.classes {
            check(
                &|| format!("qos class {}", c.name),
                "name",
                &c.name,
                &mut check_name,
            );
        }
    }
}

/// Inter-switch links (virtual switch pairs, once each) and sub-nodes per
/// switch, as the plan's ports say.
pub(super) fn planned_graph(idx: &Index<'_>) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut links = Vec::new();
    let mut loads = vec![0usize; idx.plan.switch_list.len()];
    for (i, s) in idx.plan.switch_list.iter().enumerate() {
        let peers = &idx.refs.peer[idx.refs.port_base[i]..idx.refs.port_base[i + 1]];
        for (p, &peer) in s.ports.iter().zip(peers) {
            match p.role {
                PortRole::InterSwitch => {
                    if let Some(j) = known(peer)
                        && (i, p.port)
                            < (
                                j,
                                p.peer_port
                                    .as_deref()
                                    .and_then(|x| x.parse().ok())
                                    .unwrap_or(0),
                            )
                    {
                        links.push((i, j));
                    }
                }
                PortRole::SubNode => loads[i] += 1,
                PortRole::Free | PortRole::Reserved => {}
            }
        }
    }
    (links, loads)
}

/// Every port of every switch, in switch and port order, in compact
/// tables: checking that a peer's port points back reads these instead of
/// the plan's port records, which are large and far apart in memory.
struct PortTable<'i> {
    /// Position of each switch's first port; one more entry at the end
    /// (the resolved references' `port_base`).
    base: &'i [usize],
    /// Port numbers.
    number: Vec<u32>,
    /// For an inter-switch port with a peer and a peer port: the switch
    /// its peer names ([`NONE`] when no switch has that name) and the
    /// peer port as a number, if it is one. Other ports: `(NONE, None)`.
    claim: Vec<(u32, Option<u32>)>,
    /// The port's dense end id ([`Index::id`]), or [`NONE`].
    end: Vec<u32>,
    /// Per switch: its port numbers strictly increase (so a number is
    /// found by [`slot_of`]; else by the binary search it always was).
    increasing: Vec<bool>,
}

impl<'i> PortTable<'i> {
    fn new(idx: &'i Index<'_>) -> Self {
        let plan = idx.plan;
        let total = idx.refs.peer.len();
        let mut t = PortTable {
            base: &idx.refs.port_base,
            number: Vec::with_capacity(total),
            claim: Vec::with_capacity(total),
            end: Vec::with_capacity(total),
            increasing: Vec::with_capacity(plan.switch_list.len()),
        };
        for s in &plan.switch_list {
            t.increasing
                .push(s.ports.windows(2).all(|w| w[0].port < w[1].port));
            let me = idx.phys[s.physical.as_str()];
            for p in &s.ports {
                let k = t.number.len();
                t.number.push(p.port);
                t.claim.push(match (p.role, &p.peer, &p.peer_port) {
                    (PortRole::InterSwitch, Some(_), Some(pp)) => {
                        (idx.refs.peer[k], pp.parse::<u32>().ok())
                    }
                    _ => (NONE, None),
                });
                t.end
                    .push(idx.port(me, p.port).map_or(NONE, |e| idx.id(e) as u32));
            }
        }
        t
    }

    /// The port numbers of switch `i`.
    fn numbers(&self, i: usize) -> &[u32] {
        &self.number[self.base[i]..self.base[i + 1]]
    }
}

/// Ports, peers, cables, attachments and counts agree with each other.
/// The plan's racks: listed once each, a limit above 0, and (when the plan
/// lists racks) every rack a server or switch stands in listed.
pub(super) fn racks(plan: &Plan, findings: &mut Vec<Finding>) {
    let mut bad = |object: String, message: String, fix: &str| {
        findings.push(finding("inconsistent", object, message, fix, None));
    };
    let mut listed = std::collections::HashSet::new();
    for r in &plan.racks {
        if !listed.insert(r.name.as_str()) {
            bad(
                format!("rack {}", r.name),
                "listed twice in the plan's racks".to_string(),
                "design the plan again, or correct the hand edit",
            );
        }
        if let Some(kw) = r.max_kw
            && !(kw.is_finite() && kw > 0.0)
        {
            bad(
                format!("rack {}", r.name),
                format!("max_kw is {kw}; a rack's power limit is above 0"),
                "set the inventory's max_kw for the rack and design again",
            );
        }
    }
    if plan.racks.is_empty() {
        return;
    }
    let named = (plan.servers.iter().map(|s| ("server", &s.name, &s.rack))).chain(
        plan.switch_list
            .iter()
            .map(|s| ("switch", &s.name, &s.rack)),
    );
    for (kind, name, rack) in named {
        if let Some(r) = rack
            && !listed.contains(r.as_str())
        {
            bad(
                format!("{kind} {name}"),
                format!("stands in rack {r}, which is not in the plan's racks"),
                "design the plan again, or add the rack to the plan's racks",
            );
        }
    }
}

/// Rack positions (docs/inventory.md, "Rack positions"): a position comes
/// with a height and a rack, lies within the rack's height, and no two
/// devices (servers, physical switches) of a rack share a unit; one
/// `position` finding per device at fault, naming the other.
pub(super) fn positions(plan: &Plan, findings: &mut Vec<Finding>) {
    let mut bad = |object: String, message: String, fix: &str| {
        findings.push(finding("position", object, message, fix, None));
    };
    let heights: HashMap<&str, u32> = (plan.racks.iter())
        .map(|r| (r.name.as_str(), r.height()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let devices = (plan.servers.iter())
        .map(|s| ("server", s.name.as_str(), &s.rack, s.position, s.u_height))
        .chain(
            (plan.switch_list.iter())
                .filter(|s| seen.insert(s.physical.as_str()))
                .map(|s| {
                    (
                        "switch",
                        s.physical.as_str(),
                        &s.rack,
                        s.position,
                        s.u_height,
                    )
                }),
        );
    // Per rack, each unit's occupant: kind, name, position and height.
    type Occupant<'p> = Option<(&'static str, &'p str, u32, u32)>;
    let mut units: HashMap<&str, Vec<Occupant<'_>>> = HashMap::default();
    for (kind, name, rack, position, u_height) in devices {
        let (pos, h) = match (position, u_height) {
            (None, None) => continue,
            (Some(p), Some(h)) if p >= 1 && h >= 1 => (p, h),
            _ => {
                bad(
                    format!("{kind} {name}"),
                    format!(
                        "position {position:?} and u_height {u_height:?}: a position needs a height, both 1 or more"
                    ),
                    "design the plan again, or correct the hand edit",
                );
                continue;
            }
        };
        let Some(rack) = rack else {
            bad(
                format!("{kind} {name}"),
                format!("has position U{pos} but no rack"),
                "design the plan again, or give it a rack",
            );
            continue;
        };
        let height = heights
            .get(rack.as_str())
            .copied()
            .unwrap_or(crate::plan::DEFAULT_RACK_U);
        let top = pos.saturating_add(h - 1);
        if top > height {
            bad(
                format!("{kind} {name}"),
                format!(
                    "at U{pos} with {h} U it reaches U{top}, above the top of rack {rack} ({height} U)"
                ),
                "give it a lower position, or the rack a larger u_height in the inventory, and design again",
            );
            continue;
        }
        let grid = units
            .entry(rack.as_str())
            .or_insert_with(|| vec![None; height as usize]);
        let span = (pos - 1) as usize..top as usize;
        if let Some(&Some((ok, on, op, oh))) = grid[span.clone()].iter().find(|u| u.is_some()) {
            bad(
                format!("{kind} {name}"),
                format!(
                    "at U{pos}-U{top} of rack {rack} it overlaps {ok} {on} at U{op}-U{}",
                    op + oh - 1
                ),
                "give one of them another position in the inventory and design again, or correct the hand edit",
            );
            continue;
        }
        grid[span]
            .iter_mut()
            .for_each(|u| *u = Some((kind, name, pos, h)));
    }
}

pub(super) fn consistency(idx: &Index<'_>, findings: &mut Vec<Finding>) {
    let plan = idx.plan;
    let mut bad = |object: String, message: String| {
        findings.push(finding(
            "inconsistent",
            object,
            message,
            "design the plan again, or correct the hand edit",
            None,
        ));
    };
    let table = PortTable::new(idx);
    // The links the ports describe, per end.
    let mut from_ports = vec![NONE; idx.ends()];
    // Sub-nodes whose port names them back, as the sub-node pass below
    // would find: that pass skips them.
    let subs = plan.sub_node_list.len();
    let mut carried = vec![false; idx.nic_ports * subs];
    for (i, s) in plan.switch_list.iter().enumerate() {
        let mut in_order = true;
        for w in s.ports.windows(2) {
            if w[0].port >= w[1].port {
                in_order = false;
                bad(
                    format!("switch {}", s.name),
                    format!("ports are not in order or repeat at port {}", w[1].port),
                );
            }
        }
        // What a port naming this switch as its peer resolves to.
        let named = idx.vs.get(s.name.as_str()).copied();
        let named_u32 = named.map_or(NONE, |v| v as u32);
        let base = table.base[i];
        for (k, p) in s.ports.iter().enumerate() {
            let object = || format!("{} port {}", s.name, p.port);
            let here = table.end[base + k];
            if here == NONE {
                continue;
            }
            match p.role {
                PortRole::InterSwitch => {
                    let (Some(peer), Some(pp)) = (&p.peer, &p.peer_port) else {
                        bad(object(), "inter-switch port without a peer".to_string());
                        continue;
                    };
                    let (j, pp_number) = table.claim[base + k];
                    if j == NONE {
                        bad(object(), format!("peer {peer} is not a switch of the plan"));
                        continue;
                    }
                    let Some(pp) = pp_number else {
                        bad(object(), format!("peer port `{pp}` is not a port number"));
                        continue;
                    };
                    // The peer's port, which must be an inter-switch port
                    // naming this switch and port.
                    let j = j as usize;
                    let numbers = table.numbers(j);
                    let back = if table.increasing[j] {
                        slot_of(numbers.len(), |k| numbers[k], pp)
                    } else {
                        numbers.binary_search(&pp).ok()
                    }
                    .map(|b| table.base[j] + b);
                    match back.filter(|&b| table.claim[b] == (named_u32, Some(p.port))) {
                        Some(b) => from_ports[here as usize] = table.end[b],
                        None => bad(
                            object(),
                            format!("peer {peer} port {pp} does not point back to this port"),
                        ),
                    }
                }
                PortRole::SubNode => {
                    let (Some(server), Some(nic)) = (&p.peer, &p.peer_port) else {
                        bad(object(), "sub-node port without a peer".to_string());
                        continue;
                    };
                    let peer = idx.refs.peer[base + k];
                    match known(peer).and_then(|server| idx.nic_at(server, nic)) {
                        Some((k, nic_port)) => {
                            let sn = &plan.sub_node_list[k];
                            let (sw, sw_port, tier) = attachment(sn, nic_port);
                            // Names compared as numbers: `named` is this
                            // switch's name resolved like the sub-node's.
                            if idx.refs.attached(k, nic_port) != named_u32 || sw_port != p.port {
                                bad(
                                    object(),
                                    format!(
                                        "sub-node {} says {} is on {sw} port {sw_port}",
                                        sn.id,
                                        sn.port_label(usize::from(nic_port))
                                    ),
                                );
                            } else {
                                let nic_end = idx.id(End::Nic {
                                    sub_node: k,
                                    port: nic_port,
                                });
                                from_ports[here as usize] = nic_end as u32;
                                from_ports[nic_end] = here;
                                // The sub-node pass would look this switch
                                // up by name and this port up by number,
                                // and find this port naming the sub-node.
                                carried[usize::from(nic_port) * subs + k] = named == Some(i)
                                    && in_order
                                    && tier == s.part_or_tier
                                    && idx.refs.sub_server[k] == peer
                                    && is_port_label(sn, nic_port, nic);
                            }
                        }
                        None => bad(
                            object(),
                            format!("peer {server} {nic} is not a sub-node of the plan"),
                        ),
                    }
                }
                PortRole::Free | PortRole::Reserved => {
                    if p.peer.is_some() {
                        bad(object(), "a free or reserved port has a peer".to_string());
                    }
                }
            }
        }
    }
    // Every sub-node (every port of its NIC) sits on a port that names it.
    let nic_ports = plan.sub_node_list.iter().enumerate().flat_map(|(k, sn)| {
        let ports: u8 = if sn.port1.is_some() { 2 } else { 1 };
        (0..ports).map(move |port| (k, sn, port))
    });
    for (k, sn, nic_port) in nic_ports {
        if carried[usize::from(nic_port) * subs + k] {
            continue;
        }
        let (sw, sw_port, tier) = attachment(sn, nic_port);
        let label = sn.port_label(usize::from(nic_port));
        let ok = known(idx.refs.attached(k, nic_port)).is_some_and(|i| {
            let s = &plan.switch_list[i];
            s.part_or_tier == tier
                && s.ports
                    .binary_search_by_key(&sw_port, |p| p.port)
                    .is_ok_and(|k| {
                        let p = &s.ports[k];
                        p.role == PortRole::SubNode
                            && p.peer.as_deref() == Some(sn.server.as_str())
                            && p.peer_port.as_deref() == Some(label.as_str())
                    })
        });
        if !ok {
            bad(
                format!("sub-node {}", sn.id),
                if nic_port == 0 {
                    format!(
                        "switch {sw} port {sw_port} ({}) does not carry it",
                        tier.as_str()
                    )
                } else {
                    format!(
                        "switch {sw} port {sw_port} ({}) does not carry its NIC's port {nic_port}",
                        tier.as_str()
                    )
                },
            );
        }
        if nic_port == 0 && idx.refs.sub_server[k] == NONE {
            bad(
                format!("sub-node {}", sn.id),
                format!("server {} is not in the server list", sn.server),
            );
        }
    }
    // Cables are exactly the links the ports describe.
    let mut from_cables = vec![NONE; idx.ends()];
    for (k, c) in plan.cables.iter().enumerate() {
        let object = || format!("cable {} port {} - {} {}", c.a, c.a_port, c.b, c.b_port);
        match idx.cable_ends(k) {
            Some((a, b)) => {
                let (ia, ib) = (idx.id(a), idx.id(b));
                if from_cables[ia] != NONE || from_cables[ib] != NONE {
                    bad(
                        object(),
                        "an end already has another cable in the list".to_string(),
                    );
                    continue;
                }
                from_cables[ia] = ib as u32;
                from_cables[ib] = ia as u32;
            }
            None => bad(
                object(),
                "an end is not a device or port of the plan".to_string(),
            ),
        }
    }
    for id in 0..idx.ends() {
        let (p, c) = (from_ports[id], from_cables[id]);
        if p == c {
            continue;
        }
        if p != NONE && (p as usize) > id {
            bad(
                format!(
                    "{} - {}",
                    idx.name(idx.end(id)),
                    idx.name(idx.end(p as usize))
                ),
                "the ports are linked but the cable list lacks the cable".to_string(),
            );
        }
        if c != NONE && (c as usize) > id {
            bad(
                format!(
                    "{} - {}",
                    idx.name(idx.end(id)),
                    idx.name(idx.end(c as usize))
                ),
                "the cable list has a cable the ports do not describe".to_string(),
            );
        }
    }
    // Counts.
    let inter = plan
        .cables
        .iter()
        .filter(|c| c.kind == CableKind::InterSwitch)
        .count();
    for (field, stated, actual) in [
        ("sub_nodes", plan.sub_nodes, plan.sub_node_list.len()),
        ("switches", plan.switches, plan.switch_list.len()),
        (
            "physical_switches",
            plan.physical_switches,
            idx.phys_names.len(),
        ),
        ("links", plan.links, inter),
    ] {
        if stated != actual {
            bad(
                field.to_string(),
                format!("says {stated} but the lists hold {actual}"),
            );
        }
    }
    if let Some(b) = &plan.bigraph
        && b.n != plan.switch_list.len()
    {
        bad(
            "bigraph.n".to_string(),
            format!(
                "says N={} but there are {} switches",
                b.n,
                plan.switch_list.len()
            ),
        );
    }
}

/// Downlink bandwidth at most uplink bandwidth on every BiGraph switch and
/// every fat-tree leaf (times the oversubscription).
pub(super) fn bandwidth(idx: &Index<'_>) -> Vec<Finding> {
    let plan = idx.plan;
    let allowed = plan.fat_tree.as_ref().map_or(1.0, |f| f.oversubscription);
    // Keyed by the switch as the name index finds it: a sub-node on a
    // switch name the plan lacks is on no switch checked here. When names
    // are unique and every switch's port numbers strictly increase, a
    // (switch, port number) is one position of the plan's ports, so the
    // table is a vector by position (the last sub-node on a port wins,
    // as in the map); otherwise a map by switch and number.
    let dense = idx.vs.len() == plan.switch_list.len()
        && (plan.switch_list.iter()).all(|s| s.ports.windows(2).all(|w| w[0].port < w[1].port));
    let base = &idx.refs.port_base;
    let mut at_port: Vec<Option<u32>> = Vec::new();
    let mut nic: HashMap<(usize, u32), u32> = HashMap::default();
    let on = (plan.sub_node_list.iter())
        .zip(&idx.refs.sub_switch)
        .filter_map(|(s, &v)| Some((known(v)?, s)));
    if dense {
        at_port = vec![None; base[plan.switch_list.len()]];
        for (v, s) in on {
            let ports = &plan.switch_list[v].ports;
            if let Some(k) = slot_of(ports.len(), |k| ports[k].port, s.port) {
                at_port[base[v] + k] = Some(s.nic_gbps);
            }
        }
    } else {
        nic.extend(on.map(|(v, s)| ((v, s.port), s.nic_gbps)));
    }
    let mut out = Vec::new();
    for (i, s) in plan.switch_list.iter().enumerate() {
        if !matches!(
            s.part_or_tier,
            Tier::Upper | Tier::Lower | Tier::Leaf | Tier::Edge
        ) {
            continue;
        }
        let named = idx.vs.get(s.name.as_str()).copied();
        let mut down = 0u64;
        let mut up = 0u64;
        for (k, p) in s.ports.iter().enumerate() {
            match p.role {
                PortRole::SubNode => {
                    let g = if dense {
                        at_port[base[i] + k]
                    } else {
                        named.and_then(|v| nic.get(&(v, p.port)).copied())
                    }
                    .unwrap_or(s.port_gbps);
                    down += u64::from(g.min(s.port_gbps));
                }
                PortRole::InterSwitch => up += u64::from(s.port_gbps),
                _ => {}
            }
        }
        if down > 0 && up > 0 && down as f64 > allowed * up as f64 + 1e-9 {
            out.push(finding(
                "invariant",
                format!("switch {}", s.name),
                format!(
                    "downlink {} Gbps exceeds {}uplink {} Gbps",
                    down,
                    if allowed > 1.0 {
                        format!("{}x ", gbps(allowed))
                    } else {
                        String::new()
                    },
                    up
                ),
                "move sub-nodes to other switches or add links",
                None,
            ));
        }
    }
    out
}

/// True when `text` is the sub-node's [`port_label`] for port `nic_port`
/// of its NIC, compared without writing the label (a string made and
/// freed per sub-node, 131,072 of them in a large plan).
///
/// [`port_label`]: crate::plan::PlanSubNode::port_label
pub(super) fn is_port_label(sn: &crate::plan::PlanSubNode, nic_port: u8, text: &str) -> bool {
    if sn.port1.is_some() {
        text.strip_prefix(sn.nic.as_str())
            .and_then(|rest| rest.strip_prefix(":p"))
            .is_some_and(|digits| crate::text::is_decimal(digits, u64::from(nic_port)))
    } else {
        text == sn.nic.as_str()
    }
}

/// Where port `nic_port` of a sub-node's NIC is cabled: switch, port and
/// the switch's part or tier (port 1 of a single-port NIC: port 0's).
fn attachment(sn: &crate::plan::PlanSubNode, nic_port: u8) -> (&str, u32, Tier) {
    match (&sn.port1, nic_port) {
        (Some(a), 1) => (a.switch.as_str(), a.port, a.part_or_tier),
        _ => (sn.switch.as_str(), sn.port, sn.part_or_tier),
    }
}

/// The breakout pass ([`crate::plan::Breakout`]): a broken-out switch's
/// breakout is one the systems offer and matches its port speed; every
/// port of it names the cage and lane its number stands for, and no port
/// of a whole switch names one (a whole-port link and a lane on one cage);
/// the VLAN halves of one physical switch break out alike; and a lane
/// cabled to a lane of another broken-out switch runs over a straight
/// cable ([`straight_lanes`]). One `breakout` finding per problem.
pub(crate) fn breakouts(plan: &Plan) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut bad = |object: String, message: String, fix: &str| {
        findings.push(finding("breakout", object, message, fix, None));
    };
    let redesign =
        "design the plan again from the inventory's `breakout`, or correct the hand edit";
    let mut of_physical: HashMap<&str, (Option<crate::plan::Breakout>, &str)> = HashMap::default();
    for s in &plan.switch_list {
        let object = format!("switch {}", s.name);
        if let Some((other, name)) = of_physical.insert(&s.physical, (s.breakout, &s.name))
            && other != s.breakout
        {
            bad(
                object.clone(),
                format!(
                    "breaks out {} but {name}, a half of the same physical switch {}, breaks out {}",
                    s.breakout.map_or("no port".to_string(), |b| b.describe()),
                    s.physical,
                    other.map_or("no port".to_string(), |b| b.describe())
                ),
                redesign,
            );
        }
        match s.breakout {
            Some(b) => {
                if !crate::plan::Breakout::LANES.contains(&b.lanes)
                    || u64::from(b.lanes) * u64::from(s.port_gbps) != u64::from(b.cage_gbps)
                {
                    bad(
                        object.clone(),
                        format!(
                            "breakout {} lanes of {} Gbps does not split its {} Gbps ports (lanes are 2, 4 or 8 of port_gbps each)",
                            b.lanes, s.port_gbps, b.cage_gbps
                        ),
                        redesign,
                    );
                    continue;
                }
                if let Some(p) = (s.ports.iter()).find(|p| {
                    (p.cage, p.lane) != (Some(b.cage_lane(p.port).0), Some(b.cage_lane(p.port).1))
                }) {
                    let (cage, lane) = b.cage_lane(p.port);
                    bad(
                        format!("{object} port {}", p.port),
                        match (p.cage, p.lane) {
                            (Some(c), Some(l)) => format!(
                                "names cage {c} lane {l}, but port {} of a {} switch is cage {cage} lane {lane}",
                                p.port,
                                b.describe()
                            ),
                            _ => format!(
                                "is a whole port on cage {cage}, which breaks out {}: a cage is whole or broken out, never both",
                                b.describe()
                            ),
                        },
                        redesign,
                    );
                }
            }
            None => {
                if let Some(p) = s
                    .ports
                    .iter()
                    .find(|p| p.cage.is_some() || p.lane.is_some())
                {
                    bad(
                        format!("{object} port {}", p.port),
                        format!(
                            "names a cage and lane ({}/{}) but the switch does not break out: a cage is whole or broken out, never both",
                            p.cage.map_or("-".to_string(), |c| c.to_string()),
                            p.lane.map_or("-".to_string(), |l| l.to_string())
                        ),
                        redesign,
                    );
                }
            }
        }
    }
    for (object, message) in super::breakout_limits::disabled_cages_used(plan) {
        bad(
            object,
            message,
            "break out into fewer lanes (2x, or 4x on the SN4700, SN5400 and SN5600), or choose a switch model that breaks out every cage (for 4x: the SN3700, SN3700C, SN2201, SN2010 or SN2100)",
        );
    }
    for (object, message) in straight_lanes(plan) {
        bad(
            object,
            message,
            "break out only the switches that face the NICs (give the spines a [[switch]] table without `breakout`), or cable all lanes of a cage to one cage of the peer, lane to the same lane",
        );
    }
    findings
}

/// Inter-switch links from a lane to a lane of another broken-out switch
/// that a straight cable cannot carry: a cable joins one cage to one cage,
/// so every lane of a cage must reach the same lane of one peer cage.
/// (A lane to a whole port is a breakout cable's leg, always fine.) Each
/// as (object, message).
pub(crate) fn straight_lanes(plan: &Plan) -> Vec<(String, String)> {
    let of: HashMap<&str, &crate::plan::PlanSwitch> = plan
        .switch_list
        .iter()
        .map(|s| (s.physical.as_str(), s))
        .collect();
    // (switch, cage) -> the first (peer, peer cage) a lane of it reached.
    let mut cage_peer: HashMap<(&str, u32), (&str, u32)> = HashMap::default();
    let mut out = Vec::new();
    for c in plan
        .cables
        .iter()
        .filter(|c| c.kind == CableKind::InterSwitch)
    {
        let (Some(a), Some(b)) = (of.get(c.a.as_str()), of.get(c.b.as_str())) else {
            continue;
        };
        let (Some(ba), Some(bb), Ok(bp)) = (a.breakout, b.breakout, c.b_port.parse::<u32>()) else {
            continue;
        };
        let ((ca, la), (cb, lb)) = (ba.cage_lane(c.a_port), bb.cage_lane(bp));
        let object = format!(
            "cable {} {} to {} {}",
            c.a,
            a.port_name(c.a_port),
            c.b,
            b.port_name(bp)
        );
        if la != lb || ba.lanes != bb.lanes {
            out.push((
                object,
                format!(
                    "lane {la} of cage {ca} ({}) is cabled to lane {lb} of cage {cb} ({}) of another broken-out switch: no straight cable carries that",
                    ba.describe(),
                    bb.describe()
                ),
            ));
            continue;
        }
        for (from, to) in [
            ((a.physical.as_str(), ca), (b.physical.as_str(), cb)),
            ((b.physical.as_str(), cb), (a.physical.as_str(), ca)),
        ] {
            let first = *cage_peer.entry(from).or_insert(to);
            if first != to {
                out.push((
                    object.clone(),
                    format!(
                        "cage {} of {} has lanes cabled to cage {} of {} and to cage {} of {}: one cable joins one cage to one cage",
                        from.1, from.0, first.1, first.0, to.1, to.0
                    ),
                ));
                break;
            }
        }
    }
    out
}

/// Each server's PCIe tree (`pci`, what NCCL's topology file is written
/// from): bus ids in the form NCCL matches ([`crate::pci`]), each once in
/// its server, names by the name rule, parents that are PCIe switches of
/// the server, and links a PCIe link can have. One `pci` finding each.
pub(crate) fn pci(plan: &Plan) -> Vec<Finding> {
    use crate::plan::PciKind;
    let mut out = Vec::new();
    let fix = "design the plan again from the inventory (docs/inventory.md, `pci_bus`)";
    for s in plan.servers.iter().filter(|s| !s.pci.is_empty()) {
        let mut seen: HashMap<&str, &str> = HashMap::default();
        let switches: Vec<&str> = (s.pci.iter())
            .filter(|d| d.kind == PciKind::PcieSwitch)
            .map(|d| d.bus.as_str())
            .collect();
        for d in &s.pci {
            let object = format!("server {} pci {}", s.name, d.name);
            let mut bad = |message: String| {
                out.push(finding("pci", object.clone(), message, fix, None));
            };
            if let Err(e) = crate::names::check_name(&d.name) {
                bad(format!("name: {e}"));
            }
            if let Err(e) = crate::pci::check_bus_id(&d.bus) {
                bad(e);
            } else if let Some(other) = seen.insert(d.bus.as_str(), d.name.as_str()) {
                bad(format!("bus id {} is also {other}'s", d.bus));
            }
            match (&d.parent, d.kind) {
                (Some(_), PciKind::PcieSwitch) => bad(
                    "a PCIe switch has a parent: the plan nests switches only under sockets".into(),
                ),
                (Some(p), _) if !switches.contains(&p.as_str()) => bad(format!(
                    "its parent {} is not a PCIe switch of the server",
                    crate::names::escape(p)
                )),
                _ => {}
            }
            if ![1, 2, 4, 8, 16, 32].contains(&d.lanes) {
                bad(format!("lanes is {}, not 1, 2, 4, 8, 16 or 32", d.lanes));
            }
            if !(1..=6).contains(&d.pcie_gen) {
                bad(format!("pcie_gen is {}, not 1 to 6", d.pcie_gen));
            }
            if (d.kind == PciKind::Nic) != d.gbps.is_some() {
                bad("gbps is given for NICs and only for NICs".into());
            }
        }
    }
    out
}
