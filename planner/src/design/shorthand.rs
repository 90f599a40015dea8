//! Designs without an inventory file, for sweeps: `--bigraph MxN`,
//! `--fat-tree tiers=2,sub-nodes=1024,ports=64` and `--rail-optimized
//! sub-nodes=1024,rails=8,ports=64` build a synthetic inventory of
//! identical servers and switches and the options that design it.
//!
//! Their servers have no intra-server GPU fabric unless `--nvlink
//! nvswitch:3600` ([`parse_nvlink`]) gives every server one NVLink domain
//! over all its GPUs (H100-class: 8 GPUs per server with
//! `--server-sub-nodes 8` or `rails=8`, 3,600 Gbps per GPU and direction).

use super::DesignOptions;
use crate::error::{Error, Result};
use crate::inventory::NvlinkDomain;
use crate::inventory::{
    Attachment, Gpu, Inventory, Nic, PcieSwitch, Server, ServerTemplate, Switch, SwitchRole,
    SwitchTemplate,
};
use crate::limits;
use crate::plan::{NvlinkKind, Topology};

/// Settings shared by the shorthands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shorthand {
    /// Speed of NICs and switch ports in Gbps.
    pub link_gbps: u32,
    /// Ports per switch (default: the smallest power of two that fits).
    pub switch_ports: Option<u32>,
    /// Sub-nodes per server (default: 4 when it divides evenly, else 2 or 1).
    pub sub_nodes_per_server: Option<usize>,
    /// One NVLink/NVSwitch domain over every GPU of each server (none by
    /// default: the GPUs talk through their NICs).
    pub nvlink: Option<NvlinkSpec>,
}

impl Default for Shorthand {
    fn default() -> Self {
        Self {
            link_gbps: 100,
            switch_ports: None,
            sub_nodes_per_server: None,
            nvlink: None,
        }
    }
}

/// The NVLink domain of a shorthand's servers: `nvswitch:3600`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvlinkSpec {
    /// NVSwitch or direct links.
    pub kind: NvlinkKind,
    /// Each GPU's bandwidth into the domain, one direction, in Gbps.
    pub gbps: u32,
}

/// Each GPU's NVLink bandwidth the shorthand takes, in Gbps: the range the
/// inventory's `[[server.nvlink]] gbps` takes (a test holds them equal).
const NVLINK_GBPS: std::ops::RangeInclusive<u32> = 1..=100_000;

/// Parses `KIND:GBPS` (`nvswitch:3600`, `mesh:1200`): the NVLink domain
/// every server of a shorthand gets, with each GPU's bandwidth into it in
/// one direction in Gbps (NVLink 4 on H100: 450 GB/s = 3600).
pub fn parse_nvlink(spec: &str) -> Result<NvlinkSpec> {
    let bad = |why: String| Error::parameter("nvlink", why);
    let (kind, gbps) = spec.split_once(':').ok_or_else(|| {
        bad(format!(
            "`{spec}` is not KIND:GBPS; write e.g. nvswitch:3600 (NVSwitch, 3600 Gbps per GPU) or mesh:1200"
        ))
    })?;
    let kind = match kind.trim() {
        "nvswitch" => NvlinkKind::Nvswitch,
        "mesh" => NvlinkKind::Mesh,
        other => {
            return Err(bad(format!(
                "`{other}` is not an NVLink domain kind; use nvswitch (GPUs joined through NVSwitches) or mesh (direct links)"
            )));
        }
    };
    let gbps = gbps
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|g| NVLINK_GBPS.contains(g))
        .ok_or_else(|| {
            bad(format!(
                "`{}` is not a bandwidth from {} to {} Gbps per GPU and direction (NVLink 4: 3600)",
                gbps.trim(),
                NVLINK_GBPS.start(),
                NVLINK_GBPS.end()
            ))
        })?;
    Ok(NvlinkSpec { kind, gbps })
}

/// Gives every server of a synthetic inventory the NVLink domain of `s`,
/// over all its GPUs; refused for servers of one GPU.
fn add_nvlink(inv: &mut Inventory, s: &Shorthand) -> Result<()> {
    let Some(spec) = s.nvlink else {
        return Ok(());
    };
    for t in &mut inv.server_templates {
        if t.gpus.len() < 2 {
            return Err(Error::parameter(
                "nvlink",
                format!(
                    "the servers have {} GPU, and an NVLink domain joins 2 or more; give the shorthand servers of 8 sub-nodes (rails=8)",
                    t.gpus.len()
                ),
            ));
        }
        t.nvlink = vec![NvlinkDomain {
            name: spec.kind.as_str().to_string(),
            kind: spec.kind,
            gpus: (0..t.gpus.len()).collect(),
            gbps: spec.gbps,
            line: None,
        }];
    }
    Ok(())
}

/// Parses `MxN` (M sub-nodes per switch, N switches).
pub fn parse_bigraph(spec: &str) -> Result<(usize, usize)> {
    let bad = || {
        Error::parameter(
            "bigraph",
            format!("`{spec}` is not MxN (M sub-nodes per switch x N switches), e.g. 4x16"),
        )
    };
    let (m, n) = spec.split_once(['x', 'X']).ok_or_else(bad)?;
    let m: usize = m.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if m == 0 || n < 2 || !n.is_multiple_of(2) {
        return Err(Error::parameter(
            "bigraph",
            format!("{m}x{n}: M must be 1 or more and N an even number of 2 or more"),
        ));
    }
    // M sub-nodes take M ports of a switch: bounded before any arithmetic.
    limits::PORTS_PER_SWITCH.check(m as u64).map_err(|e| {
        Error::parameter(
            "bigraph",
            format!("{m}x{n}: M takes a switch port per sub-node: {e}"),
        )
    })?;
    if m > n / 2 {
        return Err(Error::parameter(
            "bigraph",
            format!(
                "{m}x{n}: M <= N/2 is needed ({m} > {}); use at least {} switches",
                n / 2,
                2 * m
            ),
        ));
    }
    // N first: M <= N/2 above keeps M x N within N^2/2, so once N is
    // bounded the product cannot overflow.
    let limit = |e: String| Error::parameter("bigraph", format!("{m}x{n}: {e}"));
    limits::BIGRAPH_N.check(n as u64).map_err(limit)?;
    limits::SUB_NODES
        .check_opt((m as u64).checked_mul(n as u64))
        .map_err(limit)?;
    Ok((m, n))
}

/// A synthetic inventory and options for an M x N BiGraph.
pub fn bigraph(m: usize, n: usize, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let limit = |e: String| Error::parameter("bigraph", format!("{m}x{n}: {e}"));
    limits::BIGRAPH_N.check(n as u64).map_err(limit)?;
    let p = m
        .checked_mul(n)
        .filter(|&p| limits::SUB_NODES.check(p as u64).is_ok())
        .ok_or_else(|| limit(limits::SUB_NODES.refusal(m as u64 * n as u64)))?;
    let needed = (n / 2 + m) as u32;
    let ports = match s.switch_ports {
        Some(ports) if ports < needed => {
            return Err(Error::parameter(
                "switch-ports",
                format!(
                    "{ports} ports cannot carry N/2 + M = {needed} links; use at least {needed}"
                ),
            ));
        }
        Some(ports) => {
            limits::PORTS_PER_SWITCH
                .check(u64::from(ports))
                .map_err(|e| Error::parameter("switch-ports", e))?;
            ports
        }
        None => needed.next_power_of_two().max(8),
    };
    let k = per_server(p, m, s)?;
    let mut inv = synthetic(
        &format!("bigraph-{m}x{n}"),
        p,
        k,
        s.link_gbps,
        &[(n, ports, digits(n))],
    );
    add_nvlink(&mut inv, s)?;
    let opts = DesignOptions {
        topology: Topology::BiGraph,
        n: Some(n),
        m: Some(m),
        ..DesignOptions::default()
    };
    Ok((inv, opts))
}

/// A synthetic inventory and options for a fat-tree given as
/// `tiers=2,sub-nodes=1024,ports=64[,oversub=3]` or `tiers=3,k=16[,sub-nodes=1000]`
/// (`k=16` alone means 3 tiers with k^3/4 sub-nodes).
pub fn fat_tree(spec: &str, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let bad = |msg: String| Error::parameter("fat-tree", msg);
    let mut tiers: Option<u8> = None;
    let mut sub_nodes: Option<usize> = None;
    let mut ports: Option<u32> = None;
    let mut oversub = 1.0;
    for it in items(spec, "fat-tree", "tiers=2,sub-nodes=1024,ports=64 or k=16")? {
        let key = it.key;
        match key {
            "tiers" => {
                tiers = match it.num()? {
                    t @ (2 | 3) => Some(t as u8),
                    t => {
                        return Err(bad(format!(
                            "tiers={t}: a fat-tree here has 2 (leaf-spine) or 3 (k-ary) tiers"
                        )));
                    }
                }
            }
            "sub-nodes" | "sub_nodes" | "subnodes" => sub_nodes = Some(it.num()?),
            "ports" | "k" => {
                if key == "k" && tiers.is_none() {
                    tiers = Some(3);
                }
                let v = it.num()?;
                limits::PORTS_PER_SWITCH
                    .check(v as u64)
                    .map_err(|e| bad(format!("{key}={v}: {e}")))?;
                ports = Some(v as u32);
            }
            "oversub" | "oversubscription" => oversub = it.ratio()?,
            other => {
                return Err(bad(format!(
                    "unknown key `{other}`; keys are tiers, sub-nodes, ports (or k) and oversub"
                )));
            }
        }
    }
    let spec = FatTreeSpec {
        tiers: tiers.unwrap_or(2),
        sub_nodes,
        ports,
        oversubscription: oversub,
    };
    fat_tree_of(&spec, s)
}

/// A fat-tree shorthand, parsed: what `tiers=2,sub-nodes=1024,ports=64`
/// says.
#[derive(Debug, Clone, PartialEq)]
pub struct FatTreeSpec {
    /// 2 (leaf-spine) or 3 (k-ary).
    pub tiers: u8,
    /// Sub-nodes (default: as many as the tiers hold).
    pub sub_nodes: Option<usize>,
    /// Ports per switch (default: the shorthand settings').
    pub ports: Option<u32>,
    /// Oversubscription of a 2-tier fat-tree's leaves (1 for none).
    pub oversubscription: f64,
}

/// A synthetic inventory and options for the fat-tree `spec` describes.
pub fn fat_tree_of(spec: &FatTreeSpec, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let bad = |msg: String| Error::parameter("fat-tree", msg);
    let (tiers, sub_nodes, oversub) = (spec.tiers, spec.sub_nodes, spec.oversubscription);
    if !matches!(tiers, 2 | 3) {
        return Err(bad(format!(
            "tiers={tiers}: a fat-tree here has 2 (leaf-spine) or 3 (k-ary) tiers"
        )));
    }
    let ports = spec.ports.or(s.switch_ports).ok_or_else(|| {
        bad("give the switch port count: ports=64 (or k=16 for 3 tiers)".to_string())
    })?;
    if ports < 2 {
        return Err(bad(format!("{ports} ports: a switch needs 2 or more")));
    }
    limits::PORTS_PER_SWITCH
        .check(u64::from(ports))
        .map_err(|e| bad(format!("ports={ports}: {e}")))?;
    let p = match (sub_nodes, tiers) {
        (Some(p), _) => p,
        (None, 3) => super::largest_three_tier(ports as usize),
        (None, _) => (ports as usize) * (ports as usize) / 2,
    };
    if p == 0 {
        return Err(bad("0 sub-nodes: give sub-nodes=1 or more".to_string()));
    }
    limits::SUB_NODES
        .check(p as u64)
        .map_err(|e| bad(format!("{e}; give sub-nodes= or fewer ports")))?;
    let k = per_server(p, 4, s)?;
    // No switches up front: the design takes as many as it needs, named
    // with enough digits for the largest design of this size.
    let h = (ports / 2) as usize;
    let bound = if tiers == 3 {
        5 * h * h
    } else {
        2 * p.div_ceil(h.max(1)) + ports as usize
    };
    let mut inv = synthetic(
        &format!("fat-tree-{tiers}tier-{p}"),
        p,
        k,
        s.link_gbps,
        &[(0, ports, digits(bound))],
    );
    add_nvlink(&mut inv, s)?;
    let opts = DesignOptions {
        topology: Topology::FatTree,
        tiers: Some(tiers),
        oversubscription: oversub,
        grow_switch_pool: true,
        ..DesignOptions::default()
    };
    Ok((inv, opts))
}

/// A rail-optimized shorthand, parsed: what
/// `sub-nodes=1024,rails=8,ports=64[,oversub=3]` says.
#[derive(Debug, Clone, PartialEq)]
pub struct RailSpec {
    /// Sub-nodes (NICs with their GPUs), all servers together.
    pub sub_nodes: usize,
    /// NICs per server: one rail each.
    pub rails: usize,
    /// Ports per switch (default: the shorthand settings').
    pub ports: Option<u32>,
    /// Oversubscription of the rail switches (1 for none).
    pub oversubscription: f64,
}

/// A synthetic inventory and options for a rail-optimized fabric given as
/// `sub-nodes=1024,rails=8,ports=64[,oversub=3]`: `sub-nodes / rails`
/// servers of `rails` NICs each.
pub fn rail_optimized(spec: &str, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let bad = |msg: String| Error::parameter("rail-optimized", msg);
    let mut sub_nodes = None;
    let mut rails = None;
    let mut ports = None;
    let mut oversub = 1.0;
    for it in items(spec, "rail-optimized", "sub-nodes=1024,rails=8,ports=64")? {
        let key = it.key;
        match key {
            "sub-nodes" | "sub_nodes" | "subnodes" | "gpus" => sub_nodes = Some(it.num()?),
            "rails" => rails = Some(it.num()?),
            "ports" => {
                let v = it.num()?;
                limits::PORTS_PER_SWITCH
                    .check(v as u64)
                    .map_err(|e| bad(format!("ports={v}: {e}")))?;
                ports = Some(v as u32);
            }
            "oversub" | "oversubscription" => oversub = it.ratio()?,
            other => {
                return Err(bad(format!(
                    "unknown key `{other}`; keys are sub-nodes, rails, ports and oversub"
                )));
            }
        }
    }
    let sub_nodes =
        sub_nodes.ok_or_else(|| bad("give the sub-node count: sub-nodes=1024".to_string()))?;
    let rails = rails.ok_or_else(|| bad("give the NICs per server: rails=8".to_string()))?;
    rail_optimized_of(
        &RailSpec {
            sub_nodes,
            rails,
            ports,
            oversubscription: oversub,
        },
        s,
    )
}

/// A synthetic inventory and options for the rail-optimized fabric `spec`
/// describes.
pub fn rail_optimized_of(spec: &RailSpec, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let bad = |msg: String| Error::parameter("rail-optimized", msg);
    let (p, rails) = (spec.sub_nodes, spec.rails);
    if p == 0 {
        return Err(bad("0 sub-nodes: give sub-nodes=1 or more".to_string()));
    }
    limits::SUB_NODES
        .check(p as u64)
        .map_err(|e| bad(format!("{e}; give fewer sub-nodes")))?;
    if rails == 0 || limits::SERVER_SUB_NODES.check(rails as u64).is_err() {
        return Err(bad(format!(
            "rails={rails}: {}",
            if rails == 0 {
                "a server has 1 NIC or more".to_string()
            } else {
                limits::SERVER_SUB_NODES.refusal(rails as u64)
            }
        )));
    }
    if !p.is_multiple_of(rails) {
        return Err(bad(format!(
            "{rails} rails do not divide {p} sub-nodes evenly; every server has one NIC per rail"
        )));
    }
    let ports = spec
        .ports
        .or(s.switch_ports)
        .ok_or_else(|| bad("give the switch port count: ports=64".to_string()))?;
    if ports < 2 {
        return Err(bad(format!("{ports} ports: a switch needs 2 or more")));
    }
    limits::PORTS_PER_SWITCH
        .check(u64::from(ports))
        .map_err(|e| bad(format!("ports={ports}: {e}")))?;
    let h = (ports / 2) as usize;
    let bound = 2 * p.div_ceil(h.max(1)) + 2 * rails + ports as usize;
    let mut inv = synthetic(
        &format!("rail-optimized-{rails}rails-{p}"),
        p,
        rails,
        s.link_gbps,
        &[(0, ports, digits(bound))],
    );
    add_nvlink(&mut inv, s)?;
    let opts = DesignOptions {
        topology: Topology::RailOptimized,
        tiers: Some(2),
        oversubscription: spec.oversubscription,
        grow_switch_pool: true,
        ..DesignOptions::default()
    };
    Ok((inv, opts))
}

/// A synthetic inventory and options for an HPN fabric given as
/// `sub-nodes=1024,rails=8,ports=128[,oversub=1]`, the keys of
/// [`rail_optimized`]: `sub-nodes / rails` servers of `rails` dual-port
/// NICs, each port at the shorthand's link speed (`--link-gbps 200` gives
/// HPN's 2 x 200 Gbps NICs).
pub fn hpn(spec: &str, s: &Shorthand) -> Result<(Inventory, DesignOptions)> {
    let (inv, opts) = rail_optimized(spec, s).map_err(|e| match e {
        Error::Parameter { message, .. } => Error::parameter("hpn", message),
        other => other,
    })?;
    Ok(as_hpn(inv, opts))
}

/// The HPN counterpart of a rail-optimized shorthand's inventory and
/// options: the same servers with dual-port NICs, designed as HPN.
pub fn as_hpn(inv: Inventory, mut opts: DesignOptions) -> (Inventory, DesignOptions) {
    let mut inv = super::dual_port(&inv);
    if let Some(rest) = inv.name.strip_prefix("rail-optimized-") {
        inv.name = format!("hpn-{rest}");
    }
    opts.topology = Topology::Hpn;
    (inv, opts)
}

/// A leaf-spine shorthand's inventory with spines of another model: its
/// one switch template becomes the leaves' (`role = "leaf"`), and a second
/// template of `spine_ports` ports at the same speed, named `spine{n}`,
/// serves the spine tier (`role = "spine"`), as an inventory written with
/// two `[[switch]]` tables would. Neither template has switches up front:
/// the design takes as many of each as it needs.
pub fn with_spine_model(mut inv: Inventory, spine_ports: u32) -> Result<Inventory> {
    let bad = |why: String| Error::parameter("spine model", why);
    let [leaf] = inv.switch_templates.as_mut_slice() else {
        return Err(bad(format!(
            "{} has {} switch templates; a leaf-spine shorthand's single template takes the leaves",
            inv.name,
            inv.switch_templates.len()
        )));
    };
    if !leaf.instances.is_empty() || leaf.is_split() || leaf.breakout.is_some() {
        return Err(bad(format!(
            "{}: its switch template {} is not a shorthand's growing pool of whole switches",
            inv.name, leaf.pattern
        )));
    }
    limits::PORTS_PER_SWITCH
        .check(u64::from(spine_ports))
        .map_err(|e| bad(format!("{spine_ports} spine ports: {e}")))?;
    leaf.role = Some(SwitchRole::Leaf);
    let mut spine = leaf.clone();
    spine.pattern = format!("spine{}", leaf.pattern.trim_start_matches("sw"));
    spine.model = format!("{spine_ports}x{}G switch", spine.port_gbps);
    spine.ports = spine_ports;
    spine.role = Some(SwitchRole::Spine);
    inv.switch_templates.push(spine);
    Ok(inv)
}

/// A BiGraph shorthand's inventory with its virtual switches made the
/// VLAN halves of boxes of twice the ports, as EFLOPS splits its
/// S9850-4C: box `k` holds the `k`-th upper and the `k`-th lower switch
/// (ports `1..=P` and `P+1..=2P`, VLANs 101 and 102). A BiGraph's two
/// parts have as many switches each, so the `n` switches become `n / 2`
/// boxes; an odd `n` is refused.
pub fn split_in_two(mut inv: Inventory) -> Result<Inventory> {
    let bad = |why: String| Error::parameter("bigraph", why);
    let [t] = inv.switch_templates.as_mut_slice() else {
        return Err(bad(format!(
            "{} has {} switch templates; a BiGraph shorthand's single template is split",
            inv.name,
            inv.switch_templates.len()
        )));
    };
    let n = t.instances.len();
    if n % 2 == 1 || t.is_split() {
        return Err(bad(format!(
            "{}: {n} switches cannot be halves of boxes; a box holds one upper and one lower switch",
            inv.name
        )));
    }
    let ports = t.ports;
    let whole = ports
        .checked_mul(2)
        .filter(|&p| limits::PORTS_PER_SWITCH.check(u64::from(p)).is_ok())
        .ok_or_else(|| {
            bad(format!(
                "two halves of {ports} ports exceed the ports of one switch ({})",
                limits::PORTS_PER_SWITCH.refusal(u64::from(ports) * 2)
            ))
        })?;
    let half = |suffix: &str, first: u32, vlan: u16, part: crate::fabric::Part| {
        crate::inventory::VirtualSpec {
            suffix: suffix.to_string(),
            ports: (first..first + ports).collect(),
            vlan,
            part,
            line: None,
        }
    };
    t.model = format!("{whole}x{}G switch", t.port_gbps);
    t.ports = whole;
    t.virtual_switches = vec![
        half("u", 1, 101, crate::fabric::Part::Upper),
        half("l", ports + 1, 102, crate::fabric::Part::Lower),
    ];
    t.instances = t.instances.start..t.instances.start + n / 2;
    inv.switches.truncate(t.instances.end);
    Ok(inv)
}

/// One `key=value` of a shorthand spec, as written.
struct Item<'a> {
    /// The flag it belongs to, for errors (`fat-tree`).
    flag: &'static str,
    item: &'a str,
    key: &'a str,
    value: &'a str,
}

impl Item<'_> {
    /// The value as a whole number.
    fn num(&self) -> Result<usize> {
        self.value.parse::<usize>().map_err(|_| {
            Error::parameter(
                self.flag,
                format!("`{}` in `{}` is not a whole number", self.value, self.item),
            )
        })
    }

    /// The value as a ratio (`3` for 3:1).
    fn ratio(&self) -> Result<f64> {
        self.value
            .parse::<f64>()
            .map_err(|_| Error::parameter(self.flag, format!("`{}` is not a ratio", self.value)))
    }
}

/// The `key=value` items of a comma-separated spec for `flag`; `example`
/// is what the error shows when an item has no `=`.
fn items<'a>(spec: &'a str, flag: &'static str, example: &str) -> Result<Vec<Item<'a>>> {
    spec.split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(|item| {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                Error::parameter(
                    flag,
                    format!("`{item}` is not key=value; write e.g. {example}"),
                )
            })?;
            Ok(Item {
                flag,
                item,
                key: key.trim(),
                value: value.trim(),
            })
        })
        .collect()
}

/// Sub-nodes per server: the user's choice, or 4, 2 or 1, whichever
/// divides both the total and the per-switch count.
fn per_server(p: usize, per_switch: usize, s: &Shorthand) -> Result<usize> {
    match s.sub_nodes_per_server {
        Some(k) if limits::SERVER_SUB_NODES.check(k as u64).is_err() => Err(Error::parameter(
            "server-sub-nodes",
            limits::SERVER_SUB_NODES.refusal(k as u64),
        )),
        Some(k) if k == 0 || !p.is_multiple_of(k) => Err(Error::parameter(
            "server-sub-nodes",
            format!("{k} does not divide {p} sub-nodes evenly"),
        )),
        Some(k) => Ok(k),
        None => Ok([4, 2, 1]
            .into_iter()
            .find(|k| p.is_multiple_of(*k) && per_switch.is_multiple_of(*k))
            .unwrap_or(1)),
    }
}

fn digits(n: usize) -> usize {
    n.max(1).to_string().len()
}

/// Builds `p / k` identical servers of `k` GPU-NIC pairs (spread over two
/// sockets when `k` is even) and the given switches.
fn synthetic(
    name: &str,
    p: usize,
    k: usize,
    gbps: u32,
    switches: &[(usize, u32, usize)],
) -> Inventory {
    let servers_n = p / k;
    let sockets: Vec<String> = if k.is_multiple_of(2) {
        vec!["cpu0".into(), "cpu1".into()]
    } else {
        vec!["cpu0".into()]
    };
    let pcie_switches: Vec<PcieSwitch> = sockets
        .iter()
        .enumerate()
        .map(|(i, _)| PcieSwitch {
            name: format!("plx{i}"),
            model: None,
            socket: i,
            root_port: format!("plx{i}"),
            lanes: None,
            pcie_gen: None,
            slots: None,
            pci_bus: None,
            line: None,
        })
        .collect();
    let per_switch = k / sockets.len();
    let mut gpus = Vec::new();
    let mut nics = Vec::new();
    for i in 0..k {
        let ps = (i / per_switch).min(sockets.len() - 1);
        gpus.push(Gpu {
            name: format!("gpu{i}"),
            slot: format!("slot{}", 2 * i + 1),
            attachment: Attachment::PcieSwitch(ps),
            model: "GPU".to_string(),
            lanes: None,
            pcie_gen: None,
            pci_bus: None,
            memory_gb: None,
            line: None,
        });
        nics.push(Nic {
            name: format!("nic{i}"),
            netdev: None,
            slot: format!("slot{}", 2 * i + 2),
            attachment: Attachment::PcieSwitch(ps),
            model: format!("{gbps}G NIC"),
            speed_gbps: gbps,
            lanes: None,
            pcie_gen: None,
            pci_bus: None,
            mac: None,
            ip: None,
            gpus: Vec::new(),
            ports: 1,
            line: None,
        });
    }
    let width = digits(servers_n);
    let servers: Vec<Server> = (1..=servers_n as u64)
        .map(|n| Server {
            name: format!("node{n:0width$}"),
            template: 0,
            number: n,
            rack: None,
            position: None,
            nic_addresses: Vec::new(),
        })
        .collect();
    let mut switch_templates = Vec::new();
    let mut all_switches = Vec::new();
    for (t, &(count, ports, width)) in switches.iter().enumerate() {
        let start = all_switches.len();
        for n in 1..=count as u64 {
            all_switches.push(Switch {
                name: format!("sw{n:0width$}"),
                template: t,
                number: n,
                rack: None,
                position: None,
            });
        }
        switch_templates.push(SwitchTemplate {
            pattern: format!("sw{{n:0{width}}}"),
            line: None,
            model: format!("{ports}x{gbps}G switch"),
            ports,
            port_gbps: gbps,
            breakout: None,
            port_name: None,
            rack: None,
            price: None,
            role: None,
            reserved_ports: Vec::new(),
            virtual_switches: Vec::new(),
            elevation: crate::inventory::Elevation {
                u_height: crate::inventory::DEFAULT_SWITCH_U,
                position: None,
                line: None,
            },
            instances: start..all_switches.len(),
        });
    }
    Inventory {
        name: name.to_string(),
        source: name.to_string(),
        description: Some("synthetic inventory from a command-line shorthand".to_string()),
        site: None,
        currency: None,
        racks: Vec::new(),
        server_templates: vec![ServerTemplate {
            pattern: format!("node{{n:0{width}}}"),
            line: None,
            model: None,
            sockets,
            pcie_switches,
            gpus,
            nics,
            nvlink: Vec::new(),
            elevation: crate::inventory::Elevation {
                u_height: crate::inventory::DEFAULT_SERVER_U,
                position: None,
                line: None,
            },
            instances: 0..servers.len(),
        }],
        servers,
        switch_templates,
        switches: all_switches,
        catalog: Vec::new(),
        qos: crate::qos::QosOverrides::default(),
        routing: crate::routing::Routing::default(),
        routing_line: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigraph_specs() {
        assert_eq!(parse_bigraph("4x16").unwrap(), (4, 16));
        assert_eq!(parse_bigraph("256X512").unwrap(), (256, 512));
        for bad in ["4", "ax16", "4x15", "0x16", "9x16", "4x0"] {
            assert!(parse_bigraph(bad).is_err(), "{bad}");
        }
        let e = parse_bigraph("9x16").unwrap_err().to_string();
        assert!(e.contains("M <= N/2"), "{e}");
    }

    /// A second switch model for the spines: the leaves' template gets
    /// `role = "leaf"`, a growing `spine{n}` template of the other port
    /// count the spine role; an inventory that is not a leaf-spine
    /// shorthand's one growing template is refused, naming it.
    #[test]
    fn a_spine_model_is_a_second_template_with_the_spine_role() {
        let spec = FatTreeSpec {
            tiers: 2,
            sub_nodes: Some(32),
            ports: Some(16),
            oversubscription: 1.0,
        };
        let (inv, _) = fat_tree_of(&spec, &Shorthand::default()).unwrap();
        let inv = with_spine_model(inv, 32).unwrap();
        let t: Vec<(Option<SwitchRole>, u32, &str, usize)> = (inv.switch_templates.iter())
            .map(|t| (t.role, t.ports, t.pattern.as_str(), t.instances.len()))
            .collect();
        assert_eq!(
            t,
            [
                (Some(SwitchRole::Leaf), 16, "sw{n:02}", 0),
                (Some(SwitchRole::Spine), 32, "spine{n:02}", 0)
            ]
        );
        let e = with_spine_model(inv, 32).unwrap_err().to_string();
        assert!(e.contains("2 switch templates"), "{e}");
        let (bg, _) = bigraph(4, 16, &Shorthand::default()).unwrap();
        let e = with_spine_model(bg, 32).unwrap_err().to_string();
        assert!(e.contains("not a shorthand's growing pool"), "{e}");
    }

    #[test]
    fn bigraph_inventory_has_the_right_size() {
        let (inv, opts) = bigraph(4, 16, &Shorthand::default()).unwrap();
        assert_eq!(inv.sub_node_count(), 64);
        assert_eq!(inv.servers.len(), 16);
        assert_eq!(inv.switches.len(), 16);
        assert_eq!(inv.switch_templates[0].ports, 16);
        assert_eq!((opts.m, opts.n), (Some(4), Some(16)));
        let e = bigraph(
            4,
            16,
            &Shorthand {
                switch_ports: Some(8),
                ..Shorthand::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at least 12"), "{e}");
    }

    #[test]
    fn fat_tree_specs() {
        let (inv, opts) = fat_tree("k=16", &Shorthand::default()).unwrap();
        assert_eq!(inv.sub_node_count(), 1024);
        assert_eq!(opts.tiers, Some(3));
        let (inv, opts) = fat_tree(
            "tiers=2,sub-nodes=1024,ports=64,oversub=3",
            &Shorthand::default(),
        )
        .unwrap();
        assert_eq!(inv.sub_node_count(), 1024);
        assert_eq!(opts.oversubscription, 3.0);
        for bad in ["tiers=2", "k=x", "foo=1", "k16"] {
            assert!(fat_tree(bad, &Shorthand::default()).is_err(), "{bad}");
        }
    }

    #[test]
    fn rail_specs() {
        let (inv, opts) = rail_optimized(
            "sub-nodes=1024,rails=8,ports=64,oversub=2",
            &Shorthand::default(),
        )
        .unwrap();
        assert_eq!(inv.sub_node_count(), 1024);
        assert_eq!(inv.servers.len(), 128);
        assert_eq!(opts.topology, Topology::RailOptimized);
        assert_eq!(opts.oversubscription, 2.0);
        for bad in [
            "rails=8,ports=64",
            "sub-nodes=1024,ports=64",
            "sub-nodes=1020,rails=8,ports=64",
            "sub-nodes=1024,rails=8",
            "sub-nodes=1024,rails=0,ports=64",
            "sub-nodes=1024,rails=8,ports=64,k=3",
        ] {
            assert!(rail_optimized(bad, &Shorthand::default()).is_err(), "{bad}");
        }
    }

    /// `--nvlink` gives every server one domain over its GPUs; the plan
    /// carries it and estimates count one rank per GPU with NVLink links.
    #[test]
    fn nvlink_option() {
        let s = Shorthand {
            link_gbps: 400,
            nvlink: Some(parse_nvlink("nvswitch:3600").unwrap()),
            ..Shorthand::default()
        };
        let (inv, opts) = rail_optimized("sub-nodes=64,rails=8,ports=16", &s).unwrap();
        let d = &inv.server_templates[0].nvlink[0];
        assert_eq!(
            (d.kind, d.gbps, d.gpus.len()),
            (NvlinkKind::Nvswitch, 3600, 8)
        );
        let plan = crate::design::design(&inv, &opts).unwrap();
        assert!(plan.servers.iter().all(|s| s.nvlink.len() == 1));
        assert!(plan.has_intra_server_tier());
        let s1 = Shorthand {
            sub_nodes_per_server: Some(1),
            ..s.clone()
        };
        let e = fat_tree("tiers=2,sub-nodes=64,ports=16", &s1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("an NVLink domain joins 2 or more"), "{e}");
        for bad in ["nvswitch", "nvlink:3600", "mesh:0", "mesh:100001", "mesh:x"] {
            assert!(parse_nvlink(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_nvlink("mesh:1200").unwrap().kind, NvlinkKind::Mesh);
    }

    /// The shorthand takes the NVLink bandwidths an inventory takes.
    #[test]
    fn nvlink_range_is_the_inventorys() {
        let text = crate::design::bundled_text("h100-8x32");
        let with = |gbps: u32| {
            let t = text.replace("gbytes_per_s = 450", &format!("gbps = {gbps}"));
            Inventory::from_toml(&t, "h100.toml").is_ok()
        };
        for g in [*NVLINK_GBPS.start(), *NVLINK_GBPS.end()] {
            assert!(with(g), "{g}");
        }
        assert!(!with(NVLINK_GBPS.end() + 1));
        assert!(!with(NVLINK_GBPS.start() - 1));
    }
}
