//! SONiC: a `config_db.json` built with serde (no template), to merge onto
//! the switch's own with `config load` (which keeps the platform's port
//! lanes and aliases).
//!
//! Tables: `DEVICE_METADATA` (hostname), `FEATURE` (lldp enabled), `PORT`
//! (admin status, MTU, speed, description), `VLAN`, `VLAN_MEMBER`
//! (untagged sub-node ports), `VRF`, `VLAN_INTERFACE` and `INTERFACE`
//! (VRF binding and addresses), `STATIC_ROUTE` (`<vrf>|<prefix>` with every
//! next hop and its interface, comma-separated: ECMP), and QoS:
//! `DSCP_TO_TC_MAP` (all 64 DSCPs), `TC_TO_QUEUE_MAP`,
//! `TC_TO_PRIORITY_GROUP_MAP`, `MAP_PFC_PRIORITY_TO_QUEUE`,
//! `PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`, `PORT_QOS_MAP` (the maps and
//! `pfc_enable` on every cabled port), `WRED_PROFILE` with ECN on all
//! colours, `SCHEDULER` and `QUEUE` (ECN on the lossless queues, the CNP
//! queue strict), `PFC_WD` (per port, action drop, and the global poll
//! interval). Maps are referenced by plain name, as SONiC 202205 and later
//! write them. Lossless buffers are left to the buffer manager, which
//! makes priorities 3 and 4 lossless by default; other lossless
//! priorities need lossless buffer priority groups
//! (`config interface buffer priority-group lossless add`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::vendor::{SwitchVendor, number};
use super::{description, list};
use crate::error::{Error, Result};
use crate::network::{Bgp, Model, PortKind, ip};
use crate::plan::Breakout;

/// The reader of what this module writes, for the round-trip tests
/// (`render::parse`).
#[cfg(any(test, feature = "parse"))]
mod read;

/// Name of the QoS maps, scheduler and WRED profile the file defines.
pub const PROFILE: &str = "ROCE";

type Fields = BTreeMap<String, String>;
type Table = BTreeMap<String, Fields>;

fn fields<const N: usize>(pairs: [(&str, String); N]) -> Fields {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// SONiC, in the registry.
pub(super) struct Sonic;

impl SwitchVendor for Sonic {
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig> {
        read::read(text, file)
    }

    fn name(&self) -> &'static str {
        "sonic"
    }

    fn title(&self) -> &'static str {
        "SONiC (config_db.json)"
    }

    fn gist(&self) -> &'static str {
        "config_db.json"
    }

    fn file_suffix(&self) -> &'static str {
        ".config_db.json"
    }

    fn max_description(&self) -> usize {
        255
    }

    /// `Ethernet<4(p-1)>`, or `Ethernet<8(p-1)>` at 400G and up: the
    /// usual platform port tables.
    fn default_port_name(&self, gbps: u32, port: u32) -> String {
        let lanes: u64 = if gbps >= 400 { 8 } else { 4 };
        format!("Ethernet{}", lanes * u64::from(port.saturating_sub(1)))
    }

    fn accepts_pattern(&self, pattern: &str) -> bool {
        pattern.starts_with("Ethernet") && !pattern.contains('/')
    }

    /// SONiC breaks a port out with its Dynamic Port Breakout: the root
    /// port's mode in `BREAKOUT_CFG` (`"Ethernet0": {"brkout_mode":
    /// "2x200G"}`; sonic-net/SONiC `doc/Configuration.md`, section
    /// BREAKOUT_CFG, "introduced as part of Dynamic Port Breakout"). The
    /// root port's name and lane count come from the platform's
    /// `platform.json`, which the plan does not know: they are taken as
    /// the whole-port names' rule has them ([`Breakout::electrical_lanes`]:
    /// 8 lanes at 400G and up, 4 below). A split the cage's lanes cannot
    /// carry evenly is refused.
    fn breakout(&self, b: Breakout) -> std::result::Result<(), String> {
        super::vendor::even_serdes(b)
    }

    /// SONiC's own child port name: `Ethernet` followed by the root port's
    /// number plus the offset of the child's first lane in the root's lane
    /// list (sonic-net/sonic-buildimage `src/sonic-config-engine/
    /// portconfig.py`, `BreakoutCfg.get_config`, read at 0ef2737):
    /// `Ethernet0` and `Ethernet4` for the two 200G children of the 8-lane
    /// port `Ethernet0`.
    fn lane_name(&self, cage: &str, b: Breakout, lane: u32) -> String {
        match (cage
            .strip_prefix("Ethernet")
            .and_then(|n| n.parse::<u64>().ok()))
        .zip(b.electrical_per_lane())
        {
            Some((first, per)) => format!("Ethernet{}", first + u64::from(lane * per)),
            None => format!("{cage}s{lane}"),
        }
    }

    fn accepts_interface(&self, name: &str) -> bool {
        name.strip_prefix("Ethernet").is_some_and(number)
    }

    fn interface_syntax(&self) -> &'static str {
        "`Ethernet` followed by a number (Ethernet0)"
    }

    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String {
        format!("Vlan{}", m.domains[domain].vlan)
    }

    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
        render(m, bgp, device)
    }
}

/// Renders one physical switch.
fn render(m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String> {
    let dev = &m.devices[device];
    let q = &m.qos;
    let mut db: BTreeMap<&str, Table> = BTreeMap::new();
    let mut put = |table: &'static str, key: String, f: Fields| {
        db.entry(table).or_default().insert(key, f);
    };
    let mut metadata = fields([("hostname", dev.name.clone())]);
    if let Some(b) = bgp {
        bgp_tables(m, b, device, &mut metadata, &mut put);
    }
    put("DEVICE_METADATA", "localhost".into(), metadata);
    put(
        "FEATURE",
        "lldp".into(),
        fields([("state", "enabled".to_string())]),
    );
    for &d in &dev.domains {
        let dom = &m.domains[d];
        let vlan = format!("Vlan{}", dom.vlan);
        put("VRF", dom.vrf.clone(), Fields::new());
        put(
            "VLAN",
            vlan.clone(),
            fields([
                ("mtu", dev.mtu.to_string()),
                ("vlanid", dom.vlan.to_string()),
            ]),
        );
        if !dom.gateways.is_empty() {
            put(
                "VLAN_INTERFACE",
                vlan.clone(),
                fields([("vrf_name", dom.vrf.clone())]),
            );
            for g in &dom.gateways {
                put(
                    "VLAN_INTERFACE",
                    format!("{vlan}|{}/{}", ip(g.addr), g.prefix.len),
                    Fields::new(),
                );
            }
        }
        for r in dom.routes.iter().filter(|_| bgp.is_none()) {
            let plan_switch = &m.plan.switch_list[d];
            let hops: Vec<String> = r
                .next_hops
                .iter()
                .map(|&h| ip(m.links[h].to_addr))
                .collect();
            let ifs: Vec<String> = r
                .next_hops
                .iter()
                .map(|&h| Sonic.port_name(plan_switch, m.links[h].from_port))
                .collect();
            put(
                "STATIC_ROUTE",
                format!("{}|{}", dom.vrf, r.prefix),
                fields([("nexthop", hops.join(",")), ("ifname", ifs.join(","))]),
            );
        }
    }
    // The broken-out cages of the switch, each once.
    for p in &dev.ports {
        let s = &m.plan.switch_list[p.domain];
        if let Some(b) = s.breakout {
            put(
                "BREAKOUT_CFG",
                Sonic.cage_name(s, b.cage_lane(p.number).0),
                fields([("brkout_mode", b.describe())]),
            );
        }
    }
    let lossless = list(&m.lossless);
    let w = q.pfc_watchdog;
    for p in &dev.ports {
        let dom = &m.domains[p.domain];
        let name = Sonic.port_name(&m.plan.switch_list[p.domain], p.number);
        let desc = description(m, &Sonic, device, p.number);
        let admin = match p.kind {
            PortKind::Reserved => continue,
            PortKind::Free => "down",
            _ => "up",
        };
        put(
            "PORT",
            name.clone(),
            fields([
                ("admin_status", admin.to_string()),
                ("description", desc),
                ("mtu", p.mtu.to_string()),
                ("speed", (u64::from(p.gbps) * 1000).to_string()),
            ]),
        );
        match p.kind {
            PortKind::InterSwitch { link } => {
                put(
                    "INTERFACE",
                    name.clone(),
                    fields([("vrf_name", dom.vrf.clone())]),
                );
                put(
                    "INTERFACE",
                    format!("{name}|{}/31", ip(m.links[link].from_addr)),
                    Fields::new(),
                );
            }
            PortKind::SubNode { .. } => put(
                "VLAN_MEMBER",
                format!("Vlan{}|{name}", dom.vlan),
                fields([("tagging_mode", "untagged".to_string())]),
            ),
            PortKind::Free | PortKind::Reserved => continue,
        }
        let mut qos_map = fields([
            ("dscp_to_tc_map", PROFILE.to_string()),
            ("tc_to_queue_map", PROFILE.to_string()),
            ("tc_to_pg_map", PROFILE.to_string()),
            ("pfc_to_queue_map", PROFILE.to_string()),
            ("pfc_to_pg_map", PROFILE.to_string()),
        ]);
        if !m.lossless.is_empty() {
            qos_map.insert("pfc_enable".to_string(), lossless.clone());
            put(
                "PFC_WD",
                name.clone(),
                fields([
                    ("action", "drop".to_string()),
                    ("detection_time", w.detection_ms.to_string()),
                    ("restoration_time", w.restoration_ms.to_string()),
                ]),
            );
        }
        put("PORT_QOS_MAP", name.clone(), qos_map);
        for &queue in &m.lossless {
            put(
                "QUEUE",
                format!("{name}|{queue}"),
                fields([
                    ("scheduler", format!("{PROFILE}_DWRR")),
                    ("wred_profile", format!("{PROFILE}_LOSSLESS")),
                ]),
            );
        }
        put(
            "QUEUE",
            format!("{name}|{}", q.cnp.priority),
            fields([("scheduler", format!("{PROFILE}_STRICT"))]),
        );
    }
    if !m.lossless.is_empty() {
        put(
            "PFC_WD",
            "GLOBAL".into(),
            fields([("POLL_INTERVAL", w.polling_ms.to_string())]),
        );
    }
    let identity: Fields = (0..8).map(|i| (i.to_string(), i.to_string())).collect();
    put(
        "DSCP_TO_TC_MAP",
        PROFILE.into(),
        (0..64)
            .map(|d| (d.to_string(), m.dscp_map[d].to_string()))
            .collect(),
    );
    put("TC_TO_QUEUE_MAP", PROFILE.into(), identity.clone());
    put("MAP_PFC_PRIORITY_TO_QUEUE", PROFILE.into(), identity);
    put(
        "TC_TO_PRIORITY_GROUP_MAP",
        PROFILE.into(),
        (0u8..8)
            .map(|t| {
                let pg = if m.lossless.contains(&t) { t } else { 0 };
                (t.to_string(), pg.to_string())
            })
            .collect(),
    );
    put(
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        PROFILE.into(),
        m.lossless
            .iter()
            .map(|p| (p.to_string(), p.to_string()))
            .collect(),
    );
    put(
        "SCHEDULER",
        format!("{PROFILE}_DWRR"),
        fields([("type", "DWRR".to_string()), ("weight", "50".to_string())]),
    );
    put(
        "SCHEDULER",
        format!("{PROFILE}_STRICT"),
        fields([("type", "STRICT".to_string())]),
    );
    let (min, max) = (
        (u64::from(q.ecn.min_kb) * 1024).to_string(),
        (u64::from(q.ecn.max_kb) * 1024).to_string(),
    );
    let prob = q.ecn.probability.to_string();
    let mut wred = fields([("ecn", "ecn_all".to_string())]);
    for colour in ["green", "yellow", "red"] {
        wred.insert(format!("wred_{colour}_enable"), "true".to_string());
        wred.insert(format!("{colour}_min_threshold"), min.clone());
        wred.insert(format!("{colour}_max_threshold"), max.clone());
        wred.insert(format!("{colour}_drop_probability"), prob.clone());
    }
    put("WRED_PROFILE", format!("{PROFILE}_LOSSLESS"), wred);

    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| Error::Render {
        device: dev.name.clone(),
        vendor: "SONiC",
        source: e,
    };
    db.serialize(&mut ser).map_err(|e| failed(e.into()))?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| failed(e.into()))
}

/// The BGP tables of one switch, for FRR's management framework
/// (`frrcfgd`, sonic-buildimage `src/sonic-frr-mgmt-framework/frrcfgd/
/// frrcfgd.py`), which SONiC runs when `DEVICE_METADATA` says
/// `docker_routing_config_mode: unified` and
/// `frr_mgmt_framework_config: true`; the default `bgpcfgd` knows no VRF
/// BGP instances nor `network` statements. Per half (its VRF):
///
/// - `BGP_GLOBALS|<vrf>`: `local_asn`, `router_id`,
///   `load_balance_mp_relax` (`bgp bestpath as-path multipath-relax`);
/// - `BGP_GLOBALS_AF|<vrf>|ipv4_unicast`: `max_ebgp_paths`
///   (`maximum-paths`);
/// - `BGP_GLOBALS_AF_NETWORK|<vrf>|ipv4_unicast|<prefix>` per subnet
///   (`network`);
/// - `BGP_NEIGHBOR|<vrf>|<peer>`: `asn`, `name` (description),
///   `admin_status`, `bfd` (`neighbor bfd`); `BGP_NEIGHBOR_AF|<vrf>|<peer>|
///   ipv4_unicast` `admin_status` (`activate`);
/// - `BFD_PEER_SINGLE_HOP|<peer>|<port>|<vrf>|<local>`: the timers
///   (`desired-minimum-tx-interval`, `required-minimum-receive`,
///   `detection-multiplier`).
///
/// `DEVICE_METADATA` `bgp_asn` is the first half's ASN (the classic
/// field; each VRF's own is its `local_asn`).
fn bgp_tables(
    m: &Model<'_>,
    bgp: &Bgp,
    device: usize,
    metadata: &mut Fields,
    put: &mut impl FnMut(&'static str, String, Fields),
) {
    let b = bgp.bfd;
    let mut first = true;
    for (d, s) in bgp.routed_of(device) {
        if first {
            metadata.insert("bgp_asn".to_string(), s.asn.to_string());
            metadata.insert(
                "docker_routing_config_mode".to_string(),
                "unified".to_string(),
            );
            metadata.insert("frr_mgmt_framework_config".to_string(), "true".to_string());
            first = false;
        }
        let mut globals = fields([
            ("local_asn", s.asn.to_string()),
            ("load_balance_mp_relax", "true".to_string()),
        ]);
        if let Some(id) = s.router_id {
            globals.insert("router_id".to_string(), id.to_string());
        }
        put("BGP_GLOBALS", s.vrf.clone(), globals);
        put(
            "BGP_GLOBALS_AF",
            format!("{}|ipv4_unicast", s.vrf),
            fields([("max_ebgp_paths", s.max_paths.to_string())]),
        );
        for p in &s.announced {
            put(
                "BGP_GLOBALS_AF_NETWORK",
                format!("{}|ipv4_unicast|{p}", s.vrf),
                Fields::new(),
            );
        }
        for x in &s.sessions {
            put(
                "BGP_NEIGHBOR",
                format!("{}|{}", s.vrf, x.peer),
                fields([
                    ("admin_status", "up".to_string()),
                    ("asn", x.peer_asn.to_string()),
                    ("bfd", "true".to_string()),
                    ("name", description(m, &Sonic, device, x.port)),
                ]),
            );
            put(
                "BGP_NEIGHBOR_AF",
                format!("{}|{}|ipv4_unicast", s.vrf, x.peer),
                fields([("admin_status", "true".to_string())]),
            );
            put(
                "BFD_PEER_SINGLE_HOP",
                format!(
                    "{}|{}|{}|{}",
                    x.peer,
                    Sonic.port_name(&m.plan.switch_list[d], x.port),
                    s.vrf,
                    x.local
                ),
                fields([
                    ("desired-minimum-tx-interval", b.tx_ms.to_string()),
                    ("detection-multiplier", b.multiplier.to_string()),
                    ("required-minimum-receive", b.rx_ms.to_string()),
                ]),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child names SONiC's Dynamic Port Breakout gives, worked by hand
    /// from `portconfig.py`'s `BreakoutCfg.get_config` (sonic-buildimage
    /// 0ef2737): `interface_name = "Ethernet" + str(base + lane_id)`,
    /// `lane_id` advancing by `num_assigned_lanes // num_ports` (the root
    /// port's whole lane list when the mode gives no `(n)`).
    #[test]
    fn lane_names_are_sonics_child_ports() {
        let b = |lanes, cage_gbps| Breakout { lanes, cage_gbps };
        let cases: [(&str, Breakout, [&str; 2], Option<&str>); 5] = [
            // 8 lanes, "2x200G": lane_id 0 and 4.
            ("Ethernet32", b(2, 400), ["Ethernet32", "Ethernet36"], None),
            // 8 lanes, "4x100G": 0, 2, 4, 6.
            (
                "Ethernet0",
                b(4, 400),
                ["Ethernet0", "Ethernet2"],
                Some("Ethernet6"),
            ),
            // 8 lanes, "8x50G": one each.
            (
                "Ethernet8",
                b(8, 400),
                ["Ethernet8", "Ethernet9"],
                Some("Ethernet15"),
            ),
            // 4 lanes (a 100G root), "4x25G": one each.
            (
                "Ethernet4",
                b(4, 100),
                ["Ethernet4", "Ethernet5"],
                Some("Ethernet7"),
            ),
            // 4 lanes, "2x50G": 0 and 2.
            ("Ethernet12", b(2, 100), ["Ethernet12", "Ethernet14"], None),
        ];
        for (root, mode, first_two, last) in cases {
            let got: Vec<String> = (0..mode.lanes)
                .map(|l| Sonic.lane_name(root, mode, l))
                .collect();
            assert_eq!(got[..2], first_two, "{root} {mode:?}");
            if let Some(last) = last {
                assert_eq!(
                    got.last().map(String::as_str),
                    Some(last),
                    "{root} {mode:?}"
                );
            }
        }
    }
}
