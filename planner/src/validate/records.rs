//! The plan's records agree with each other and with its header: servers
//! and their sub-node lists, sub-node ids, GPU and socket indices,
//! addresses, the design parameters, the QoS intent and the address pools.
//!
//! These are the refusals other commands would otherwise make half-way
//! (or not make at all and misuse the value): `ranks` indexes the sub-node
//! list through the servers' lists, `render --hosts` writes
//! `CUDA_VISIBLE_DEVICES` from `gpu_index`, rankfiles bind to
//! `socket_index`, routing needs 2 or 3 tiers and pods, `render` refuses
//! the QoS intent, the pools and the address plan, and every file writer
//! needs distinct file names. Each check is linear in the plan's size,
//! except the address plan's routes (one reachability test per pair of
//! switches with sub-nodes).

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Finding, Index, finding};
use crate::names::file_stem_of;
use crate::network::RouteGraph;
use crate::plan::{Plan, PortRole, Tier, Topology};

/// The largest `gpu_index` a plan may hold: more GPUs than any server
/// carries, and more than CUDA numbers in one process.
pub const MAX_GPU_INDEX: usize = 1023;

/// The largest `socket_index` a plan may hold (Open MPI rankfiles bind
/// `slot=<socket>:<core>`).
pub const MAX_SOCKET_INDEX: usize = 63;

const FIX: &str = "design the plan again, or correct the hand edit";

/// Every finding about the plan's records (see the module documentation).
pub(super) fn records(idx: &Index<'_>, loads: &[usize], findings: &mut Vec<Finding>) {
    let plan = idx.plan;
    let mut bad = |object: String, message: String| {
        findings.push(finding("inconsistent", object, message, FIX, None));
    };
    servers(idx, &mut bad);
    sub_nodes(plan, &mut bad);
    gpu_fabric(plan, &mut bad);
    parameters(idx, loads, &mut bad);
    for p in plan.qos_intent().problems(plan.topology) {
        findings.push(finding("invalid", p.object, p.message, p.fix, None));
    }
    if let Err(p) = plan.addressing.pools() {
        findings.push(finding("invalid", p.object, p.message, p.fix, None));
    }
    for p in plan.routing.problems(plan.switch_list.len()) {
        findings.push(finding("invalid", p.object, p.message, p.fix, None));
    }
    if let Some(q) = &plan.qos {
        for name in q.switch_mtu.keys() {
            if !idx.phys.contains_key(name.as_str()) {
                findings.push(finding(
                    "invalid",
                    format!("qos switch_mtu {name}"),
                    format!("{name} is not a physical switch of the plan"),
                    "name a switch of the plan, or remove the entry",
                    None,
                ));
            }
        }
    }
    file_names(idx, findings);
}

/// What `render` and `check-qos` refuse beyond the intent: the address
/// plan (every sub-node and link address: prefix lengths, gateways,
/// clashes, one subnet per switch, pools large enough) and a route to every
/// switch's sub-nodes. The problems come from the code `render` builds its
/// model with ([`render_refusals`]), so the two cannot disagree. The model
/// assumes a consistent plan with a valid intent, so this runs only when
/// no other finding was made; and then, with `quick`, only when the quick
/// proof that it refuses nothing (`Model::surely_builds`, which leans on
/// the other checks having passed) fails. Without `quick` (tests) it is
/// always built. Either builds the plan's route graph, which is returned
/// for the checked plan to keep.
pub(super) fn render_model(
    idx: &Index<'_>,
    quick: bool,
    findings: &mut Vec<Finding>,
) -> Option<Arc<RouteGraph>> {
    let plan = idx.plan;
    if quick
        && let Some(graph) =
            crate::network::Model::surely_builds(plan, idx.nic_port_count, idx.addressed)
    {
        return Some(graph);
    }
    let (problems, graph) = crate::network::Model::refusals_keeping(plan);
    for p in problems {
        findings.push(finding("invalid", p.object, p.message, p.fix, None));
    }
    graph
}

/// The problems `render` would refuse a consistent plan for (see
/// [`render_model`]); `design` checks its plans with it too, since the
/// inventory's addresses may not fit the switches a design puts the NICs
/// on.
pub(crate) fn render_refusals(plan: &Plan) -> Vec<crate::Problem> {
    crate::network::Model::refusals(plan)
}

/// Server names are unique, every server lists sub-nodes that exist, each
/// once, whose `server` field names it, and every sub-node is listed by
/// its server.
fn servers(idx: &Index<'_>, bad: &mut impl FnMut(String, String)) {
    let plan = idx.plan;
    // The index's table holds every server name once: when it holds as
    // many as there are servers, no name repeats, and no table of the
    // names seen so far is needed to find the repeats.
    let unique = idx.servers.len() == plan.servers.len();
    let mut names: HashMap<&str, usize> = HashMap::default();
    let mut listed_by = vec![usize::MAX; plan.sub_node_list.len()];
    for (k, s) in plan.servers.iter().enumerate() {
        let object = || format!("server {}", s.name);
        if !unique && names.insert(s.name.as_str(), k).is_some() {
            bad(object(), "the name appears twice in servers".to_string());
        }
        if s.sub_nodes.is_empty() {
            bad(
                object(),
                "it lists no sub-node; every server of a plan carries at least one".to_string(),
            );
        }
        for &i in &s.sub_nodes {
            let Some(sn) = plan.sub_node_list.get(i) else {
                bad(
                    object(),
                    format!(
                        "it lists sub-node {i}, but sub_node_list holds {} (0 to {})",
                        plan.sub_node_list.len(),
                        plan.sub_node_list.len().saturating_sub(1)
                    ),
                );
                continue;
            };
            if listed_by[i] == k {
                bad(object(), format!("it lists sub-node {i} ({}) twice", sn.id));
                continue;
            }
            if listed_by[i] != usize::MAX {
                bad(
                    object(),
                    format!(
                        "it lists sub-node {i} ({}), which server {} lists too",
                        sn.id, plan.servers[listed_by[i]].name
                    ),
                );
                continue;
            }
            listed_by[i] = k;
            if sn.server != s.name {
                bad(
                    object(),
                    format!(
                        "it lists sub-node {i} ({}), whose server is {}",
                        sn.id, sn.server
                    ),
                );
            }
        }
    }
    for (i, sn) in plan.sub_node_list.iter().enumerate() {
        if listed_by[i] == usize::MAX && idx.servers.contains_key(sn.server.as_str()) {
            bad(
                format!("sub-node {}", sn.id),
                format!(
                    "server {} does not list it (sub-node {i}) in its sub_nodes",
                    sn.server
                ),
            );
        }
    }
}

/// Ids follow `<server>/sn<index>` and are unique; GPU and socket indices
/// are present with a GPU, unique per server, in range and agree with the
/// names; no two NICs share an IP or MAC address.
fn sub_nodes(plan: &Plan, bad: &mut impl FnMut(String, String)) {
    let n = plan.sub_node_list.len();
    let clashes = Clashes::new(plan);
    // When every id is `<server>/sn<index>`, two ids are equal exactly
    // when their servers and indices are (the text after the server is
    // `/sn` and digits, so the id's one `/` past the server's ends it):
    // an id seen before is then a sub-node before it on the same server
    // with the same index, which the clashes found server by server,
    // without a set of every id.
    let mut ids: HashSet<&str> = if clashes.regular_ids {
        HashSet::default()
    } else {
        HashSet::with_capacity_and_hasher(n, Default::default())
    };
    let mut ips: HashMap<&str, &str> = HashMap::default();
    let mut macs: HashMap<String, &str> = HashMap::default();
    for (i, sn) in plan.sub_node_list.iter().enumerate() {
        let object = || format!("sub-node {}", sn.id);
        if !clashes.regular_ids && !id_is(&sn.id, &sn.server, sn.index) {
            let want = format!("{}/sn{}", sn.server, sn.index);
            bad(
                object(),
                format!(
                    "its id does not match its server {} and index {} (the id would be {want})",
                    sn.server, sn.index
                ),
            );
        }
        let twice = if clashes.regular_ids {
            clashes.of(i)[4] != super::NONE
        } else {
            !ids.insert(sn.id.as_str())
        };
        if twice {
            bad(
                object(),
                "the id appears twice in sub_node_list".to_string(),
            );
        }
        let server = sn.server.as_str();
        let [
            gpu_other,
            gpu_index_other,
            socket_other,
            socket_index_other,
            _,
        ] = clashes
            .of(i)
            .map(|o| super::known(o).map(|o| &plan.sub_node_list[o]));
        match (&sn.gpu, sn.gpu_index) {
            (Some(_), None) => bad(
                object(),
                "it has a GPU but no gpu_index (host files set CUDA_VISIBLE_DEVICES from it)"
                    .to_string(),
            ),
            (None, Some(g)) => bad(object(), format!("it has gpu_index {g} but no GPU")),
            (Some(gpu), Some(g)) => {
                if g > MAX_GPU_INDEX {
                    bad(
                        object(),
                        format!("gpu_index {g} is above the limit of {MAX_GPU_INDEX}"),
                    );
                } else if let Some(other) = gpu_other.and_then(|o| o.gpu.as_ref())
                    && other != gpu
                {
                    bad(
                        object(),
                        format!(
                            "gpu_index {g} is also the index of GPU {other} of server {server}"
                        ),
                    );
                }
                if let Some(other) = gpu_index_other.and_then(|o| o.gpu_index)
                    && other != g
                {
                    bad(
                        object(),
                        format!("GPU {gpu} of server {server} has gpu_index {other} and {g}"),
                    );
                }
            }
            (None, None) => {}
        }
        let s = sn.socket_index;
        if s > MAX_SOCKET_INDEX {
            bad(
                object(),
                format!("socket_index {s} is above the limit of {MAX_SOCKET_INDEX}"),
            );
        } else if let Some(other) = socket_other.map(|o| &o.socket)
            && *other != sn.socket
        {
            bad(
                object(),
                format!("socket_index {s} is also the index of socket {other} of server {server}"),
            );
        }
        if let Some(other) = socket_index_other.map(|o| o.socket_index)
            && other != s
        {
            bad(
                object(),
                format!(
                    "socket {} of server {server} has socket_index {other} and {s}",
                    sn.socket
                ),
            );
        }
        if let Some(ip) = &sn.ip {
            let addr = ip.split('/').next().unwrap_or("").trim();
            if let Some(other) = ips.insert(addr, sn.id.as_str()) {
                bad(
                    object(),
                    format!("its IP address {addr} is also the address of {other}"),
                );
            }
        }
        if let Some(mac) = &sn.mac {
            let m = super::normalise_mac(mac);
            if !m.is_empty()
                && let Some(other) = macs.insert(m, sn.id.as_str())
            {
                bad(
                    object(),
                    format!("its MAC address {mac} is also the address of {other}"),
                );
            }
        }
    }
}

/// For every sub-node, the sub-node before it (the latest) of the same
/// server with the same gpu_index, GPU, socket_index and socket: the one
/// whose GPU, index, socket or index it must agree with. Found server by
/// server, in small tables that stay in cache, instead of four tables as
/// large as the plan keyed by server and index.
struct Clashes {
    /// Per sub-node: (gpu_index, GPU, socket_index, socket, index)
    /// clashes, each a sub-node or [`super::NONE`].
    before: Vec<[u32; 5]>,
    /// Every sub-node's id is `<server>/sn<index>` ([`id_is`]).
    regular_ids: bool,
}

impl Clashes {
    fn new(plan: &Plan) -> Self {
        use super::NONE;
        let list = &plan.sub_node_list;
        // Sub-nodes grouped by server name (equal texts, one group), each
        // group in plan order: a counting sort on the servers' numbers.
        let mut numbers = super::refs::Numbers::default();
        let key: Vec<u32> = list.iter().map(|sn| numbers.of(&sn.server)).collect();
        let mut start = vec![0usize; numbers.len() + 1];
        for &k in &key {
            start[k as usize + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut order = vec![0u32; list.len()];
        let mut next = start.clone();
        for (i, &k) in key.iter().enumerate() {
            order[next[k as usize]] = i as u32;
            next[k as usize] += 1;
        }
        let mut before = vec![[NONE; 5]; list.len()];
        let mut regular_ids = true;
        let mut index_of: HashMap<usize, u32> = HashMap::default();
        // The latest sub-node of the group by gpu_index, GPU name,
        // socket_index and socket name, as the checks record them.
        let mut gpu_of: HashMap<usize, u32> = HashMap::default();
        let mut gpu_index_of: HashMap<&str, u32> = HashMap::default();
        let mut socket_of: HashMap<usize, u32> = HashMap::default();
        let mut socket_index_of: HashMap<&str, u32> = HashMap::default();
        for group in start.windows(2) {
            gpu_of.clear();
            gpu_index_of.clear();
            socket_of.clear();
            socket_index_of.clear();
            index_of.clear();
            for &i in &order[group[0]..group[1]] {
                let sn = &list[i as usize];
                let b = &mut before[i as usize];
                regular_ids &= id_is(&sn.id, &sn.server, sn.index);
                b[4] = index_of.insert(sn.index, i).unwrap_or(NONE);
                if let (Some(gpu), Some(g)) = (&sn.gpu, sn.gpu_index) {
                    if g <= MAX_GPU_INDEX {
                        b[0] = gpu_of.insert(g, i).unwrap_or(NONE);
                    }
                    b[1] = gpu_index_of.insert(gpu.as_str(), i).unwrap_or(NONE);
                }
                if sn.socket_index <= MAX_SOCKET_INDEX {
                    b[2] = socket_of.insert(sn.socket_index, i).unwrap_or(NONE);
                }
                b[3] = socket_index_of
                    .insert(sn.socket.as_str(), i)
                    .unwrap_or(NONE);
            }
        }
        Clashes {
            before,
            regular_ids,
        }
    }

    fn of(&self, sub_node: usize) -> [u32; 5] {
        self.before[sub_node]
    }
}

/// The intra-server tier: a sub-node's `gpu_indices` (two or more, the
/// first its `gpu_index`, each GPU of a server in one sub-node) and each
/// server's NVLink domains (unique names, a bandwidth in range, two or
/// more GPUs in range, each GPU in one domain).
fn gpu_fabric(plan: &Plan, bad: &mut impl FnMut(String, String)) {
    let mut owner: HashMap<(&str, usize), &str> = HashMap::default();
    for sn in plan
        .sub_node_list
        .iter()
        .filter(|s| !s.gpu_indices.is_empty())
    {
        let object = || format!("sub-node {}", sn.id);
        let g = &sn.gpu_indices;
        if g.len() < 2 {
            bad(
                object(),
                "gpu_indices lists one GPU; a NIC with one GPU has only gpu_index".to_string(),
            );
        }
        if sn.gpu_index != Some(g[0]) {
            bad(
                object(),
                format!(
                    "gpu_indices starts with {} but gpu_index is {:?}",
                    g[0], sn.gpu_index
                ),
            );
        }
        for &i in g {
            if i > MAX_GPU_INDEX {
                bad(
                    object(),
                    format!("gpu_indices holds {i}, above the limit of {MAX_GPU_INDEX}"),
                );
            } else if let Some(other) = owner.insert((sn.server.as_str(), i), sn.id.as_str()) {
                bad(
                    object(),
                    format!(
                        "GPU index {i} of server {} is also listed by {other}",
                        sn.server
                    ),
                );
            }
        }
    }
    for s in &plan.servers {
        let mut names: HashSet<&str> = HashSet::default();
        let mut domain_of: HashMap<usize, &str> = HashMap::default();
        for d in &s.nvlink {
            let object = || format!("server {} NVLink domain {}", s.name, d.name);
            if !names.insert(d.name.as_str()) {
                bad(
                    object(),
                    "the name appears twice in the server's nvlink list".to_string(),
                );
            }
            if !(1..=100_000).contains(&d.gbps) {
                bad(object(), format!("gbps {} is outside 1..100000", d.gbps));
            }
            if d.gpu_indices.len() < 2 {
                bad(
                    object(),
                    format!(
                        "it joins {} GPU; a domain joins two or more",
                        d.gpu_indices.len()
                    ),
                );
            }
            for &i in &d.gpu_indices {
                if i > MAX_GPU_INDEX {
                    bad(
                        object(),
                        format!("gpu_indices holds {i}, above the limit of {MAX_GPU_INDEX}"),
                    );
                } else if let Some(other) = domain_of.insert(i, d.name.as_str()) {
                    bad(object(), format!("GPU index {i} is also in domain {other}"));
                }
            }
        }
    }
}

/// True when `id` is `<server>/sn<index>`, compared without writing it.
fn id_is(id: &str, server: &str, index: usize) -> bool {
    id.strip_prefix(server)
        .and_then(|rest| rest.strip_prefix("/sn"))
        .is_some_and(|digits| crate::text::is_decimal(digits, index as u64))
}

/// The topology's parameters are present, in range and describe the
/// switches as they are.
fn parameters(idx: &Index<'_>, loads: &[usize], bad: &mut impl FnMut(String, String)) {
    let plan = idx.plan;
    let sw = &plan.switch_list;
    match (plan.topology, &plan.bigraph, &plan.fat_tree) {
        (Topology::BiGraph, Some(b), None) => {
            let most = loads.iter().copied().max().unwrap_or(0);
            if b.m == 0 {
                bad(
                    "bigraph.m".to_string(),
                    "M is 0; a BiGraph switch carries at least one sub-node".to_string(),
                );
            } else if b.m != most {
                bad(
                    "bigraph.m".to_string(),
                    format!("says M={} but the fullest switch carries {most}", b.m),
                );
            }
            let regular = !loads.is_empty() && loads.iter().all(|&l| l == most);
            if b.regular != regular {
                bad(
                    "bigraph.regular".to_string(),
                    format!(
                        "says {} but {}",
                        b.regular,
                        if regular {
                            "every switch carries M sub-nodes"
                        } else {
                            "some switches carry fewer than M sub-nodes"
                        }
                    ),
                );
            }
        }
        (Topology::FatTree | Topology::RailOptimized | Topology::Hpn, None, Some(f)) => {
            if plan.topology.has_rails() {
                if f.tiers != 2 {
                    bad(
                        "fat_tree.tiers".to_string(),
                        format!(
                            "{} tiers; a {} fabric has 2 (rail switches and spines)",
                            f.tiers,
                            plan.topology.label()
                        ),
                    );
                    return;
                }
                rail(plan, bad);
                if plan.topology == Topology::Hpn {
                    hpn(plan, bad);
                }
            } else if plan.rail.is_some() {
                bad(
                    "rail".to_string(),
                    "a fat-tree plan has no rail table".to_string(),
                );
            }
            if !(f.tiers == 2 || f.tiers == 3) {
                bad(
                    "fat_tree.tiers".to_string(),
                    format!(
                        "{} tiers; a fat-tree has 2 (leaf-spine) or 3 (k-ary)",
                        f.tiers
                    ),
                );
                return;
            }
            let access = if f.tiers == 3 { Tier::Edge } else { Tier::Leaf };
            let leaves: Vec<usize> = (0..sw.len())
                .filter(|&i| sw[i].part_or_tier == access)
                .collect();
            let most = leaves.iter().map(|&i| loads[i]).max().unwrap_or(0);
            if f.sub_nodes_per_leaf != most {
                bad(
                    "fat_tree.sub_nodes_per_leaf".to_string(),
                    format!(
                        "says {} but the fullest {} switch carries {most}",
                        f.sub_nodes_per_leaf,
                        access.as_str()
                    ),
                );
            }
            let uplinks = leaves
                .iter()
                .map(|&i| sw[i].count(PortRole::InterSwitch))
                .max()
                .unwrap_or(0);
            if f.uplinks_per_leaf != uplinks {
                bad(
                    "fat_tree.uplinks_per_leaf".to_string(),
                    format!(
                        "says {} but the {} switches have {uplinks}",
                        f.uplinks_per_leaf,
                        access.as_str()
                    ),
                );
            }
            oversubscription(idx, f.oversubscription, &leaves, loads, bad);
            if f.tiers == 2 {
                if f.k.is_some() || f.pods.is_some() {
                    bad(
                        "fat_tree".to_string(),
                        "a 2-tier leaf-spine has no k and no pods".to_string(),
                    );
                }
                // The planes of an HPN fabric share no switch: leaves need
                // spines only when a plane has more than one.
                let mut per_plane = HashMap::default();
                for &i in &leaves {
                    *per_plane.entry(sw[i].plane).or_insert(0usize) += 1;
                }
                if per_plane.values().any(|&n| n > 1) && f.links_per_leaf_spine == 0 {
                    bad(
                        "fat_tree.links_per_leaf_spine".to_string(),
                        "0 links between a leaf and a spine, with more than one leaf in a plane"
                            .to_string(),
                    );
                }
            } else {
                three_tier(plan, bad);
            }
        }
        (Topology::BiGraph, _, _) => bad(
            "bigraph".to_string(),
            "a BiGraph plan has a bigraph table and no fat_tree table".to_string(),
        ),
        (Topology::FatTree, _, _) => bad(
            "fat_tree".to_string(),
            "a fat-tree plan has a fat_tree table and no bigraph table".to_string(),
        ),
        (Topology::RailOptimized, _, _) => bad(
            "fat_tree".to_string(),
            "a rail-optimized plan has a fat_tree and a rail table and no bigraph table"
                .to_string(),
        ),
        (Topology::Hpn, _, _) => bad(
            "fat_tree".to_string(),
            "an HPN plan has a fat_tree, a rail and an hpn table and no bigraph table".to_string(),
        ),
    }
    if plan.topology != Topology::Hpn && plan.hpn.is_some() {
        bad(
            "hpn".to_string(),
            format!("a {} plan has no hpn table", plan.topology.label()),
        );
    }
    if plan.topology != Topology::Hpn
        && let Some(sn) = plan.sub_node_list.iter().find(|sn| sn.port1.is_some())
    {
        bad(
            format!("sub-node {}", sn.id),
            format!(
                "its NIC has a second port (port1), which only an HPN plan cables; this is a {} plan",
                plan.topology.label()
            ),
        );
    }
    if plan.topology == Topology::BiGraph && plan.rail.is_some() {
        bad(
            "rail".to_string(),
            "a BiGraph plan has no rail table".to_string(),
        );
    }
}

/// The rail table matches the rail switches, and every sub-node sits on
/// the rail switch of its index in its server's group: NIC i of a server
/// on rail switch i, all NICs of a server in one group.
fn rail(plan: &Plan, bad: &mut impl FnMut(String, String)) {
    let Some(r) = &plan.rail else {
        bad(
            "rail".to_string(),
            "a rail-optimized plan has a rail table (rails, groups, servers_per_group)".to_string(),
        );
        return;
    };
    let sw = &plan.switch_list;
    let rail_switches = sw.iter().filter(|s| s.rail.is_some()).count();
    let planes = plan.hpn.as_ref().map_or(1, |h| h.planes);
    if rail_switches != r.rails * r.groups * planes {
        bad(
            "rail".to_string(),
            if planes == 1 {
                format!(
                    "says {} rails x {} groups, but the plan has {rail_switches} rail switches",
                    r.rails, r.groups
                )
            } else {
                format!(
                    "says {} rails x {} segments in each of {planes} planes, but the plan has {rail_switches} ToRs",
                    r.rails, r.groups
                )
            },
        );
    }
    for s in sw {
        let is_leaf = s.part_or_tier == Tier::Leaf;
        match (is_leaf, s.rail, s.pod) {
            (true, Some(rail), Some(group)) if rail < r.rails && group < r.groups => {}
            (true, _, _) => bad(
                format!("switch {}", s.name),
                format!(
                    "a rail switch needs a rail below {} and a group (pod) below {}",
                    r.rails, r.groups
                ),
            ),
            (false, None, _) => {}
            (false, Some(_), _) => bad(
                format!("switch {}", s.name),
                format!("a {} switch has no rail", s.part_or_tier.as_str()),
            ),
        }
    }
    let index = plan.switch_index();
    for server in &plan.servers {
        let mut group = None;
        for &i in &server.sub_nodes {
            let Some(sn) = plan.sub_node_list.get(i) else {
                continue;
            };
            let Some(s) = index.get(sn.switch.as_str()).map(|&k| &sw[k]) else {
                continue;
            };
            if s.rail.is_some_and(|rail| rail != sn.index) {
                bad(
                    format!("sub-node {}", sn.id),
                    format!(
                        "NIC index {} is on {}, the switch of rail {}",
                        sn.index,
                        s.name,
                        s.rail.unwrap_or(0)
                    ),
                );
            }
            match group {
                None => group = s.pod,
                Some(g) if s.pod != Some(g) => bad(
                    format!("server {}", server.name),
                    format!(
                        "its NICs are on rail switches of more than one group ({} is in group {})",
                        s.name,
                        s.pod.map_or("none".to_string(), |p| p.to_string())
                    ),
                ),
                Some(_) => {}
            }
        }
    }
}

/// The HPN table matches the switches, and every dual-port NIC has port 0
/// on a ToR of plane 0 and port 1 on the ToR of the same rail and segment
/// in plane 1: two different ToRs of the two planes.
fn hpn(plan: &Plan, bad: &mut impl FnMut(String, String)) {
    let Some(h) = &plan.hpn else {
        bad(
            "hpn".to_string(),
            "an HPN plan has an hpn table (planes, segments, servers_per_segment, tors_per_plane, aggregation_per_plane)".to_string(),
        );
        return;
    };
    if h.planes != 2 {
        bad(
            "hpn.planes".to_string(),
            format!("says {} planes; HPN has 2", h.planes),
        );
        return;
    }
    let sw = &plan.switch_list;
    for plane in 0..h.planes {
        for (tier, stated, what) in [
            (Tier::Leaf, h.tors_per_plane, "tors_per_plane"),
            (
                Tier::Spine,
                h.aggregation_per_plane,
                "aggregation_per_plane",
            ),
        ] {
            let n = sw
                .iter()
                .filter(|s| s.part_or_tier == tier && s.plane == Some(plane))
                .count();
            if n != stated {
                bad(
                    format!("hpn.{what}"),
                    format!("says {stated} but plane {plane} has {n}"),
                );
            }
        }
    }
    if let Some(s) = sw.iter().find(|s| s.plane.is_none_or(|p| p >= h.planes)) {
        bad(
            format!("switch {}", s.name),
            format!(
                "an HPN switch is in plane 0 or 1, this one in {:?}",
                s.plane
            ),
        );
    }
    let index = plan.switch_index();
    let of = |name: &str| index.get(name).map(|&k| &sw[k]);
    for sn in &plan.sub_node_list {
        let object = || format!("sub-node {}", sn.id);
        let Some(p1) = &sn.port1 else {
            bad(
                object(),
                "its NIC has one port; every NIC of an HPN plan has two, on the ToRs of both planes"
                    .to_string(),
            );
            continue;
        };
        let (Some(a), Some(b)) = (of(&sn.switch), of(&p1.switch)) else {
            continue;
        };
        if a.plane != Some(0) || b.plane != Some(1) {
            bad(
                object(),
                format!(
                    "its NIC's port 0 is on {} (plane {}) and port 1 on {} (plane {}); port 0 goes to plane 0, port 1 to plane 1",
                    a.name,
                    a.plane.map_or("none".to_string(), |p| p.to_string()),
                    b.name,
                    b.plane.map_or("none".to_string(), |p| p.to_string())
                ),
            );
        } else if a.rail != b.rail || a.pod != b.pod {
            bad(
                object(),
                format!(
                    "its NIC's ports are on {} and {}, which are not the two ToRs of one rail and segment",
                    a.name, b.name
                ),
            );
        }
    }
}

/// The oversubscription is what the design asked for: at least 1, 1 on a
/// 3-tier fat-tree, and on a leaf-spine no larger than the fullest leaf
/// needs. The design gives a leaf of d sub-nodes the fewest uplinks u with
/// `d * down <= o * u * up`, so a ratio that would let the fullest leaf do
/// with one uplink fewer is a hand edit: it would hide an oversubscribed
/// leaf from the bandwidth check. (Lowering it shows up there.)
fn oversubscription(
    idx: &Index<'_>,
    o: f64,
    leaves: &[usize],
    loads: &[usize],
    bad: &mut impl FnMut(String, String),
) {
    let plan = idx.plan;
    let object = || "fat_tree.oversubscription".to_string();
    if !o.is_finite() || o < 1.0 {
        bad(
            object(),
            format!("{o} is not a ratio of 1 or more (1 is non-blocking)"),
        );
        return;
    }
    if plan.fat_tree.as_ref().is_some_and(|f| f.tiers == 3) {
        if (o - 1.0).abs() > 1e-9 {
            bad(
                object(),
                format!("{o}:1, but a 3-tier k-ary fat-tree is non-blocking (1)"),
            );
        }
        return;
    }
    let most = leaves.iter().map(|&i| loads[i]).max().unwrap_or(0);
    let Some(&i) = leaves.iter().find(|&&i| loads[i] == most && most > 0) else {
        return;
    };
    let s = &plan.switch_list[i];
    // The design sizes every leaf's uplinks for the fastest NIC of the
    // fabric (`design::fattree`), so the check does too.
    let nic = plan
        .sub_node_list
        .iter()
        .map(|sn| sn.nic_gbps)
        .max()
        .unwrap_or(s.port_gbps);
    let mut down = 0.0;
    let mut uplinks = Vec::new();
    let peers = &idx.refs.peer[idx.refs.port_base[i]..idx.refs.port_base[i + 1]];
    for (p, &peer) in s.ports.iter().zip(peers) {
        match p.role {
            PortRole::SubNode => down += f64::from(nic.min(s.port_gbps)),
            PortRole::InterSwitch => {
                let peer =
                    super::known(peer).map_or(s.port_gbps, |j| plan.switch_list[j].port_gbps);
                uplinks.push(f64::from(s.port_gbps.min(peer)));
            }
            PortRole::Free | PortRole::Reserved => {}
        }
    }
    if uplinks.len() < 2 {
        return;
    }
    let link = uplinks.iter().copied().fold(f64::INFINITY, f64::min);
    let one_fewer = (uplinks.len() - 1) as f64 * link;
    if down <= o * one_fewer - 1e-9 {
        bad(
            object(),
            format!(
                "{}:1 would let leaf {} carry its {} Gbps on one uplink fewer than it has; the design's ratio is lower",
                crate::text::gbps(o),
                s.name,
                crate::text::gbps(down)
            ),
        );
    }
}

/// A 3-tier fat-tree has an even k, its pod count, and a pod on every
/// edge and aggregation switch (routing needs them).
fn three_tier(plan: &Plan, bad: &mut impl FnMut(String, String)) {
    let Some(f) = &plan.fat_tree else { return };
    match f.k {
        Some(k) if k >= 2 && k % 2 == 0 => {}
        Some(k) => bad(
            "fat_tree.k".to_string(),
            format!("k={k}; a k-ary fat-tree has an even k of 2 or more"),
        ),
        None => bad(
            "fat_tree.k".to_string(),
            "a 3-tier fat-tree gives its port count k".to_string(),
        ),
    }
    let mut pods: Vec<usize> = Vec::new();
    // The scheduler exports nest switches in physical switches in pods.
    let mut pod_of_box: HashMap<&str, (Option<usize>, &str)> = HashMap::default();
    for s in &plan.switch_list {
        if let Some((pod, other)) = pod_of_box.insert(s.physical.as_str(), (s.pod, &s.name))
            && pod != s.pod
        {
            bad(
                format!("switch {}", s.name),
                format!(
                    "it is in pod {} but {other}, in the same physical switch {}, is in pod {}",
                    s.pod.map_or("none".to_string(), |p| p.to_string()),
                    s.physical,
                    pod.map_or("none".to_string(), |p| p.to_string())
                ),
            );
        }
        match (s.part_or_tier, s.pod) {
            (Tier::Edge | Tier::Aggregation, Some(p)) => pods.push(p),
            (Tier::Edge | Tier::Aggregation, None) => bad(
                format!("switch {}", s.name),
                format!(
                    "the {} switch has no pod, which 3-tier routing needs",
                    s.part_or_tier.as_str()
                ),
            ),
            _ => {}
        }
    }
    pods.sort_unstable();
    pods.dedup();
    if f.pods != Some(pods.len()) {
        bad(
            "fat_tree.pods".to_string(),
            format!(
                "says {} but the switches are in {} pods",
                f.pods.map_or("nothing".to_string(), |p| p.to_string()),
                pods.len()
            ),
        );
    }
}

/// `render` writes one file per physical switch and two per server, named
/// by [`crate::names::file_stem`]: two switches (or two servers) whose names give one
/// stem would overwrite each other.
fn file_names(idx: &Index<'_>, findings: &mut Vec<Finding>) {
    // A name that is its own stem shares a stem only with an equal name,
    // which is no finding: when every name is, none can be found.
    let own_stem =
        |name: &str| matches!(file_stem_of(name), std::borrow::Cow::Borrowed(stem) if stem == name);
    if (idx.phys_names.iter().copied())
        .chain(idx.plan.servers.iter().map(|s| s.name.as_str()))
        .all(own_stem)
    {
        return;
    }
    // (kind, stem) -> the name that had it last.
    let mut stems: HashMap<(&str, std::borrow::Cow<'_, str>), &str> = HashMap::default();
    let devices = idx
        .phys_names
        .iter()
        .map(|n| ("switch", *n))
        .chain(idx.plan.servers.iter().map(|s| ("server", s.name.as_str())));
    for (kind, name) in devices {
        let stem = file_stem_of(name);
        if let Some(other) = stems.insert((kind, stem.clone()), name)
            && other != name
        {
            findings.push(finding(
                "invalid",
                format!("{kind} {name}"),
                format!("its file name {stem} is also the file name of {kind} {other}"),
                "give devices names that differ in letters and digits, and design the plan again",
                None,
            ));
        }
    }
}
