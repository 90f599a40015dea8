//! Import: the source of truth's devices, device types, interfaces,
//! inventory items, custom fields and IP assignments in, an inventory TOML
//! (docs/inventory.md) out. docs/source-of-truth.md has the mapping.
//!
//! [`fetch`] reads the objects (the only part that talks to the server);
//! [`inventory_toml`] turns them into the inventory and refuses, naming
//! the object and its URL, whatever the inventory cannot express.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::client::{Client, Flavor, enum_value, id_of, list_of};
use super::error::{Result, SotError};
use super::query::{query_chunks, query_value};

mod written;

use written::Written;

/// Which devices to read.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Only devices at this location (Nautobot) or site (NetBox).
    pub location: Option<String>,
    /// The device role of GPU servers.
    pub server_role: String,
    /// The device role of fabric switches.
    pub switch_role: String,
    /// The inventory's name (default: the location, else `imported`).
    pub name: Option<String>,
}

/// The objects an import reads, as the API returned them.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Devices of the server role (depth 1).
    pub servers: Vec<Value>,
    /// Devices of the switch role (depth 1).
    pub switches: Vec<Value>,
    /// Interfaces of those devices.
    pub interfaces: Vec<Value>,
    /// Inventory items of those devices.
    pub items: Vec<Value>,
    /// IP-address-to-interface assignments (depth 1).
    pub ip_assignments: Vec<Value>,
}

/// Reads what [`inventory_toml`] needs: from Nautobot in one GraphQL
/// query, from NetBox through its REST lists.
pub async fn fetch(client: &Client, opts: &ImportOptions) -> Result<Snapshot> {
    match client.flavor() {
        Flavor::Nautobot => fetch_graphql(client, opts).await,
        Flavor::Netbox => fetch_rest(client, opts).await,
    }
}

/// The fields of a device an import reads through GraphQL.
const DEVICE_FIELDS: &str = "id name device_type { model } rack { name } _custom_field_data \
    interfaces { id name type speed mgmt_only mac_address ip_addresses { address } } \
    inventory_items { id name part_id parent { id } _custom_field_data }";

/// Nautobot: devices of both roles with their interfaces, addresses and
/// inventory items in one GraphQL query (a REST listing of 320 interfaces
/// took 9.8 s, the query 2.5 s: docs/benchmarks.md), reshaped into the
/// REST objects [`inventory_toml`] reads.
async fn fetch_graphql(client: &Client, opts: &ImportOptions) -> Result<Snapshot> {
    let (loc_var, loc_arg) = if opts.location.is_some() {
        (", $location: [String]", ", location: $location")
    } else {
        ("", "")
    };
    let query = format!(
        "query ($server: [String], $switch: [String]{loc_var}) {{ \
         servers: devices(role: $server{loc_arg}) {{ {DEVICE_FIELDS} }} \
         switches: devices(role: $switch{loc_arg}) {{ {DEVICE_FIELDS} }} }}"
    );
    let data = client
        .graphql(
            &query,
            json!({"server": [opts.server_role], "switch": [opts.switch_role],
                   "location": opts.location.as_ref().map(|l| vec![l])}),
            "reading the devices, interfaces and inventory items",
        )
        .await?;
    let mut snap = Snapshot::default();
    for (role, out) in [
        ("servers", &mut snap.servers),
        ("switches", &mut snap.switches),
    ] {
        for d in list_of(&data, role) {
            let did = id_of(d).unwrap_or_default();
            let dev_ref = json!({"id": did});
            for i in list_of(d, "interfaces") {
                let iid = id_of(i).unwrap_or_default();
                for ip in list_of(i, "ip_addresses") {
                    snap.ip_assignments.push(json!({"interface": {"id": iid},
                        "ip_address": {"address": ip.get("address")}}));
                }
                snap.interfaces.push(json!({
                    "id": iid, "url": client.object_url("/api/dcim/interfaces/", &iid),
                    "device": dev_ref, "name": i.get("name"), "type": enum_value(&i["type"]),
                    "speed": i.get("speed"), "mgmt_only": i.get("mgmt_only"),
                    "mac_address": i.get("mac_address"),
                }));
            }
            for it in list_of(d, "inventory_items") {
                let id = id_of(it).unwrap_or_default();
                snap.items.push(json!({
                    "id": id, "url": client.object_url("/api/dcim/inventory-items/", &id),
                    "device": dev_ref, "name": it.get("name"), "part_id": it.get("part_id"),
                    "parent": it.get("parent"), "custom_fields": it.get("_custom_field_data"),
                }));
            }
            out.push(json!({
                "id": did, "url": client.object_url("/api/dcim/devices/", &did),
                "name": d.get("name"), "device_type": d.get("device_type"), "rack": d.get("rack"),
                "custom_fields": d.get("_custom_field_data"),
            }));
        }
    }
    Ok(snap)
}

/// NetBox: the REST lists of devices (filtered by role and site slug:
/// `DeviceFilterSet.role` and `.site` in `netbox/dcim/filtersets.py`,
/// v4.6.8), then their interfaces, inventory items and IP addresses by
/// `device_id`, so the lists stay bounded with or without a site. NetBox
/// has no IP-to-interface object: an address names its interface in
/// `assigned_object_type`/`assigned_object_id`
/// (`netbox/ipam/api/serializers_/ip.py`), reshaped here into the
/// assignments [`inventory_toml`] reads.
async fn fetch_rest(client: &Client, opts: &ImportOptions) -> Result<Snapshot> {
    let site = opts
        .location
        .as_ref()
        .map(|l| format!("&site={}", query_value(l)))
        .unwrap_or_default();
    let devices = |role: &str| format!("role={}{site}", query_value(role));
    let servers = client
        .list(
            "/api/dcim/devices/",
            &devices(&opts.server_role),
            "reading the server devices",
        )
        .await?;
    let switches = client
        .list(
            "/api/dcim/devices/",
            &devices(&opts.switch_role),
            "reading the switch devices",
        )
        .await?;
    let ids: Vec<String> = servers.iter().chain(&switches).filter_map(id_of).collect();
    let mut snap = Snapshot {
        servers,
        switches,
        ..Snapshot::default()
    };
    for q in query_chunks(ids.iter(), "device_id", 50) {
        snap.interfaces.extend(
            client
                .list("/api/dcim/interfaces/", &q, "reading the interfaces")
                .await?,
        );
        snap.items.extend(
            client
                .list(
                    "/api/dcim/inventory-items/",
                    &q,
                    "reading the inventory items",
                )
                .await?,
        );
        for ip in client
            .list("/api/ipam/ip-addresses/", &q, "reading the IP addresses")
            .await?
        {
            if ip.get("assigned_object_type").and_then(Value::as_str) == Some("dcim.interface") {
                snap.ip_assignments.push(json!({
                    "interface": {"id": ip.get("assigned_object_id")},
                    "ip_address": {"address": ip.get("address")},
                }));
            }
        }
    }
    Ok(snap)
}

/// A string field, or a related object's `name` (or `model`).
fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    match v.get(key)? {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o
            .get("name")
            .or_else(|| o.get("model"))
            .or_else(|| o.get("display"))
            .and_then(Value::as_str),
        _ => None,
    }
}

fn cf<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get("custom_fields")?.get(key).filter(|x| !x.is_null())
}

fn cf_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    cf(v, key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn cf_int(v: &Value, key: &str) -> Option<i64> {
    cf(v, key).and_then(|x| x.as_i64().or_else(|| x.as_str()?.parse().ok()))
}

/// `name (url)` of an object, for refusals.
fn who(v: &Value, kind: &str) -> String {
    let name = text(v, "name")
        .or_else(|| text(v, "display"))
        .unwrap_or("(unnamed)");
    // An answer without a URL still names the object by its id; one
    // without either says so (a broken or hostile server: issue #31).
    let url = match (v.get("url").and_then(Value::as_str), id_of(v)) {
        (Some(u), _) => u.to_string(),
        (None, Some(id)) => format!("id {id}, the server sent no url"),
        (None, None) => "the server sent no id or url".to_string(),
    };
    format!("{kind} {name} ({url})")
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Sorts names so that `gpu2` comes before `gpu10`.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let mut num: Option<u64> = None;
        for c in s.chars() {
            if let Some(d) = c.to_digit(10) {
                num = Some(
                    num.unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(u64::from(d)),
                );
            } else {
                if let Some(n) = num.take() {
                    out.push((std::mem::take(&mut text), n));
                }
                text.push(c);
            }
        }
        out.push((text, num.unwrap_or(0)));
        out
    }
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
}

/// Port speed in Gbps from an interface's `speed` (Kbps) or, without
/// one, its type (`100gbase-x-qsfp28`).
fn interface_gbps(i: &Value) -> Option<u64> {
    if let Some(kbps) = i.get("speed").and_then(Value::as_u64).filter(|k| *k > 0) {
        return Some(kbps / 1_000_000).filter(|g| *g > 0);
    }
    let t = match i.get("type")? {
        Value::String(s) => s.as_str(),
        Value::Object(o) => o.get("value")?.as_str()?,
        _ => return None,
    };
    if let Some(i) = t.find("gbase") {
        return t[..i].parse().ok();
    }
    if t.starts_with("1000base") {
        return Some(1);
    }
    None
}

fn is_physical(i: &Value) -> bool {
    let t = match i.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Object(o)) => o.get("value").and_then(Value::as_str).unwrap_or(""),
        _ => "",
    };
    !matches!(t, "virtual" | "lag" | "bridge") && i.get("mgmt_only") != Some(&Value::Bool(true))
}

/// The trailing number of an interface name and the pattern around it
/// (`HundredGigE1/0/7` -> (`HundredGigE1/0/{p}`, 7)).
fn split_port(name: &str) -> Option<(String, u32)> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let (head, num) = name.split_at(name.len() - digits);
    Some((format!("{head}{{p}}"), num.parse().ok()?))
}

/// The cage and lane of a lane's interface name as Linux switches and the
/// planner write it (`swp9s1` -> (`swp9`, 1); `9s0` -> (`9`, 0)): a name
/// ending in a number, `s`, and the lane from 0.
fn split_lane(name: &str) -> Option<(&str, u32)> {
    let (cage, lane) = name.rsplit_once('s')?;
    if lane.is_empty() || !lane.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    cage.ends_with(|c: char| c.is_ascii_digit())
        .then(|| Some((cage, lane.parse().ok()?)))?
}

/// The `breakout` of a switch whose interfaces are lanes (`swp1s0`,
/// `swp1s1`, ...), where it is unambiguous: every cage has the lanes
/// 0..L-1 (L of 2, 4 or 8), all of one speed, and any interface that is
/// not a lane is one of those cages. The error says what is not so.
fn lane_breakout(lanes: &[&Value], others: &[&Value]) -> std::result::Result<String, String> {
    let mut per_cage: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    let mut speeds = BTreeSet::new();
    for l in lanes {
        let n = text(l, "name").unwrap_or("");
        if let Some((cage, lane)) = split_lane(n) {
            per_cage.entry(cage).or_default().insert(lane);
        }
        match interface_gbps(l) {
            Some(g) => speeds.insert(g),
            None => {
                return Err(format!(
                    "lane {n} has no speed and no type with one; set its speed"
                ));
            }
        };
    }
    let counts: BTreeSet<usize> = per_cage.values().map(BTreeSet::len).collect();
    let [l] = counts.iter().copied().collect::<Vec<_>>()[..] else {
        return Err(format!(
            "its interfaces look like lanes of broken-out cages, but the cages have {counts:?} lanes; give every cage the same lanes, or set custom field topo_breakout"
        ));
    };
    let l = u32::try_from(l).unwrap_or(0);
    if let Some((cage, set)) = per_cage.iter().find(|(_, s)| **s != (0..l).collect()) {
        return Err(format!(
            "cage {cage} has lanes {set:?}, not 0..{}; name a cage's lanes from s0, or set custom field topo_breakout",
            l.saturating_sub(1)
        ));
    }
    if let Some(o) = others
        .iter()
        .filter_map(|o| text(o, "name"))
        .find(|n| !per_cage.contains_key(n))
    {
        return Err(format!(
            "interface {o} is neither a lane nor a cage of its lanes; mark it mgmt_only, or set custom field topo_breakout"
        ));
    }
    let [g] = speeds.iter().copied().collect::<Vec<_>>()[..] else {
        return Err(format!(
            "lanes of several speeds ({speeds:?} Gbps); the inventory gives one breakout per switch"
        ));
    };
    Ok(format!("{l}x{g}G"))
}

/// The cages of lanes, one interface per cage with the cage's name and
/// speed (its lanes' speed times their count), for counting ports.
fn lane_cages(lanes: &[&Value]) -> Vec<Value> {
    let mut per_cage: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for l in lanes {
        if let Some((cage, _)) = split_lane(text(l, "name").unwrap_or("")) {
            let e = per_cage.entry(cage).or_default();
            e.0 += 1;
            e.1 = interface_gbps(l).unwrap_or(0);
        }
    }
    per_cage
        .into_iter()
        .map(|(cage, (n, g))| json!({"name": cage, "speed": n * g * 1_000_000}))
        .collect()
}

/// The inventory TOML of a snapshot. Every object the inventory cannot
/// express is refused at once, each naming the object and its URL.
pub fn inventory_toml(snap: &Snapshot, opts: &ImportOptions, source: &str) -> Result<String> {
    let mut problems = Vec::new();
    let mut out = Written::default();
    let name = opts
        .name
        .clone()
        .or_else(|| opts.location.clone())
        .unwrap_or_else(|| "imported".to_string());
    out.from(
        "the import's options",
        "the inventory's name and site (--name, --location)",
    );
    let _ = writeln!(out, "# Imported from {source} by `provisioner sot import`.");
    let _ = writeln!(out, "# The mapping is in docs/source-of-truth.md.\n");
    let _ = writeln!(out, "[inventory]\nname = {}", toml_str(&name));
    let _ = writeln!(
        out,
        "description = {}",
        toml_str(&format!("imported from {source}"))
    );
    if let Some(l) = &opts.location {
        let _ = writeln!(out, "site = {}", toml_str(l));
    }

    let device_id: BTreeMap<String, &Value> = snap
        .servers
        .iter()
        .chain(&snap.switches)
        .filter_map(|d| Some((id_of(d)?, d)))
        .collect();
    let mut by_device: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for i in &snap.interfaces {
        if let Some(d) = i
            .get("device")
            .and_then(id_of)
            .filter(|d| device_id.contains_key(d))
        {
            by_device.entry(d).or_default().push(i);
        }
    }
    let mut items_of: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for it in &snap.items {
        if let Some(d) = it
            .get("device")
            .and_then(id_of)
            .filter(|d| device_id.contains_key(d))
        {
            items_of.entry(d).or_default().push(it);
        }
    }
    let mut ip_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for a in &snap.ip_assignments {
        let (Some(iface), Some(addr)) = (
            a.get("interface").and_then(id_of),
            a.get("ip_address")
                .and_then(|ip| ip.get("address"))
                .and_then(Value::as_str),
        ) else {
            continue;
        };
        ip_of.entry(iface).or_default().push(addr.to_string());
    }

    // Racks: those the devices stand in.
    let racks: BTreeSet<&str> = snap
        .servers
        .iter()
        .chain(&snap.switches)
        .filter_map(|d| text(d, "rack"))
        .collect();
    for r in &racks {
        out.from(&format!("rack {r}"), "the devices' rack");
        let _ = writeln!(out, "\n[[rack]]\nname = {}", toml_str(r));
    }

    let mut servers: Vec<&Value> = snap.servers.iter().collect();
    servers.sort_by(|a, b| natural(text(a, "name").unwrap_or(""), text(b, "name").unwrap_or("")));
    for d in servers {
        server(&mut out, &mut problems, d, &items_of, &by_device, &ip_of);
    }
    let mut switches: Vec<&Value> = snap.switches.iter().collect();
    switches.sort_by(|a, b| natural(text(a, "name").unwrap_or(""), text(b, "name").unwrap_or("")));
    for d in switches {
        switch(&mut out, &mut problems, d, &by_device);
    }
    if snap.servers.is_empty() {
        problems.push(format!(
            "no device of role {} found{}; give --server-role or --location",
            opts.server_role,
            opts.location
                .as_ref()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default()
        ));
    }
    if !problems.is_empty() {
        return Err(SotError::Refused {
            what: format!("importing from {source}: the inventory cannot express"),
            problems,
        });
    }
    planner::inventory::Inventory::from_toml(&out.text, source)
        .map_err(|e| out.refusal(e, source))?;
    Ok(out.text)
}

fn server(
    out: &mut Written,
    problems: &mut Vec<String>,
    d: &Value,
    items_of: &BTreeMap<String, Vec<&Value>>,
    ifaces: &BTreeMap<String, Vec<&Value>>,
    ip_of: &BTreeMap<String, Vec<String>>,
) {
    let Some(name) = text(d, "name") else {
        problems.push(format!(
            "{}: a server device needs a name",
            who(d, "device")
        ));
        return;
    };
    let id = id_of(d).unwrap_or_default();
    let items: Vec<&Value> = items_of
        .get(&id)
        .map(|v| {
            v.iter()
                .copied()
                .filter(|i| cf_str(i, "topo_kind").is_some())
                .collect()
        })
        .unwrap_or_default();
    let item_id: BTreeMap<String, &Value> =
        items.iter().filter_map(|i| Some((id_of(i)?, *i))).collect();
    let mut pcie: Vec<&Value> = Vec::new();
    let mut devices: Vec<(&str, &Value)> = Vec::new();
    for it in &items {
        match cf_str(it, "topo_kind") {
            Some("pcie-switch") => pcie.push(it),
            Some(k @ ("gpu" | "nic")) => devices.push((k, it)),
            Some(other) => problems.push(format!(
                "{}: topo_kind {other:?} is none of pcie-switch, gpu, nic; correct it or clear it (items without topo_kind are ignored)",
                who(it, "inventory item")
            )),
            None => {}
        }
    }
    let mut sockets: Vec<String> = cf_str(d, "topo_sockets")
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        })
        .unwrap_or_default();
    if sockets.is_empty() {
        for it in &items {
            if let Some(s) = cf_str(it, "topo_socket")
                && !sockets.iter().any(|x| x == s)
            {
                sockets.push(s.to_string());
            }
        }
    }
    if sockets.is_empty() {
        problems.push(format!(
            "{}: no CPU sockets: set the device's custom field topo_sockets (e.g. cpu0,cpu1) or topo_socket on its PCIe-switch items",
            who(d, "device")
        ));
        return;
    }
    let list = sockets
        .iter()
        .map(|s| toml_str(s))
        .collect::<Vec<_>>()
        .join(", ");
    let dev = who(d, "device");
    out.device(name, &dev);
    out.from(&dev, "name");
    let _ = writeln!(out, "\n[[server]]\nname = {}", toml_str(name));
    if let Some(m) = text(d, "device_type") {
        out.from(&dev, "device type");
        let _ = writeln!(out, "model = {}", toml_str(m));
    }
    if let Some(r) = text(d, "rack") {
        out.from(&dev, "rack");
        let _ = writeln!(out, "rack = {}", toml_str(r));
    }
    out.from(
        &dev,
        "custom field topo_sockets (or its PCIe-switch items' topo_socket)",
    );
    let _ = writeln!(out, "sockets = [{list}]");
    pcie.sort_by(|a, b| natural(text(a, "name").unwrap_or(""), text(b, "name").unwrap_or("")));
    for p in &pcie {
        if p.get("parent").and_then(id_of).is_some() {
            problems.push(format!(
                "{}: a PCIe switch under another item (a PCIe switch behind a PCIe switch) has no place in the inventory; make it a top-level item",
                who(p, "inventory item")
            ));
            continue;
        }
        let Some(socket) = cf_str(p, "topo_socket") else {
            problems.push(format!(
                "{}: a PCIe switch needs custom field topo_socket (one of {})",
                who(p, "inventory item"),
                sockets.join(", ")
            ));
            continue;
        };
        let item = format!("{} on device {name}", who(p, "inventory item"));
        out.from(&item, "name");
        let _ = writeln!(out, "\n[[server.pcie_switch]]");
        let _ = writeln!(out, "name = {}", toml_str(text(p, "name").unwrap_or("")));
        out.from(&item, "custom field topo_socket");
        let _ = writeln!(out, "socket = {}", toml_str(socket));
        if let Some(m) = text(p, "part_id").filter(|m| !m.is_empty()) {
            out.from(&item, "part_id");
            let _ = writeln!(out, "model = {}", toml_str(m));
        }
        if let Some(r) = cf_str(p, "topo_root_port") {
            out.from(&item, "custom field topo_root_port");
            let _ = writeln!(out, "root_port = {}", toml_str(r));
        }
        for (key, field) in [
            ("lanes", "topo_lanes"),
            ("pcie_gen", "topo_pcie_gen"),
            ("slots", "topo_slots"),
        ] {
            if let Some(v) = cf_int(p, field) {
                out.from(&item, &format!("custom field {field}"));
                let _ = writeln!(out, "{key} = {v}");
            }
        }
    }
    // GPUs first, then NICs, each in name order: the planner pairs them in
    // the order written under each PCIe switch.
    devices.sort_by(|(ka, a), (kb, b)| {
        ka.cmp(kb)
            .then_with(|| natural(text(a, "name").unwrap_or(""), text(b, "name").unwrap_or("")))
    });
    let server_ifaces = ifaces.get(&id);
    for (kind, it) in devices {
        let item_name = text(it, "name").unwrap_or("");
        let under = match it.get("parent").and_then(id_of) {
            Some(pid) => match item_id.get(&pid) {
                Some(parent) if cf_str(parent, "topo_kind") == Some("pcie-switch") => {
                    Some(text(parent, "name").unwrap_or("").to_string())
                }
                _ => {
                    problems.push(format!(
                        "{}: a {kind} must sit under a PCIe-switch item (topo_kind pcie-switch) or directly on a socket (topo_socket, no parent)",
                        who(it, "inventory item")
                    ));
                    continue;
                }
            },
            None => None,
        };
        let socket = cf_str(it, "topo_socket");
        if under.is_none() && socket.is_none() {
            problems.push(format!(
                "{}: a top-level {kind} needs custom field topo_socket, or move it under its PCIe-switch item",
                who(it, "inventory item")
            ));
            continue;
        }
        let Some(model) = text(it, "part_id").filter(|m| !m.is_empty()) else {
            problems.push(format!(
                "{}: the {kind}'s model goes in part_id, which is empty",
                who(it, "inventory item")
            ));
            continue;
        };
        let item = format!("{} on device {name}", who(it, "inventory item"));
        out.from(&item, "name");
        let _ = writeln!(out, "\n[[server.{kind}]]");
        let _ = writeln!(out, "name = {}", toml_str(item_name));
        match (&under, socket) {
            (Some(p), _) => {
                out.from(&item, "parent");
                let _ = writeln!(out, "pcie_switch = {}", toml_str(p));
            }
            (None, Some(s)) => {
                out.from(&item, "custom field topo_socket");
                let _ = writeln!(out, "socket = {}", toml_str(s));
            }
            (None, None) => {}
        }
        out.from(&item, "part_id");
        let _ = writeln!(out, "model = {}", toml_str(model));
        if let Some(s) = cf_str(it, "topo_slot") {
            out.from(&item, "custom field topo_slot");
            let _ = writeln!(out, "slot = {}", toml_str(s));
        }
        if let Some(v) = cf_int(it, "topo_lanes") {
            out.from(&item, "custom field topo_lanes");
            let _ = writeln!(out, "lanes = {v}");
        }
        if kind == "gpu" {
            if let Some(v) = cf_int(it, "topo_memory_gb") {
                out.from(&item, "custom field topo_memory_gb");
                let _ = writeln!(out, "memory_gb = {v}");
            }
            continue;
        }
        // A NIC: its port is the server's interface of the NIC's name (or
        // netdev), which holds the MAC, the speed and the address.
        let netdev = cf_str(it, "topo_netdev");
        let iface = server_ifaces.and_then(|v| {
            v.iter().find(|i| {
                text(i, "name") == Some(item_name)
                    || (netdev.is_some() && text(i, "name") == netdev)
            })
        });
        let speed = match cf_int(it, "topo_speed_gbps").and_then(|s| u64::try_from(s).ok()) {
            Some(s) => {
                out.from(&item, "custom field topo_speed_gbps");
                Some(s)
            }
            None => {
                if let Some(i) = iface {
                    out.from(&who(i, "interface"), "speed (or type)");
                }
                iface.and_then(|i| interface_gbps(i))
            }
        };
        let Some(speed) = speed else {
            problems.push(format!(
                "{}: no line rate: set custom field topo_speed_gbps, or give the server an interface named {item_name} with a speed",
                who(it, "inventory item")
            ));
            continue;
        };
        let _ = writeln!(out, "speed_gbps = {speed}");
        if let Some(v) = cf_int(it, "topo_ports") {
            out.from(&item, "custom field topo_ports");
            let _ = writeln!(out, "ports = {v}");
        }
        if let Some(n) = netdev {
            out.from(&item, "custom field topo_netdev");
            let _ = writeln!(out, "netdev = {}", toml_str(n));
        }
        if let Some(i) = iface {
            let port = format!("{} on device {name}", who(i, "interface"));
            if let Some(mac) = i
                .get("mac_address")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
            {
                out.from(&port, "mac_address");
                let _ = writeln!(out, "mac = {}", toml_str(&mac.to_ascii_lowercase()));
            }
            let ips = id_of(i).and_then(|iid| ip_of.get(&iid));
            match ips.map(Vec::as_slice) {
                None | Some([]) => {}
                Some([one]) => {
                    out.from(&port, "its IP address");
                    let _ = writeln!(out, "ip = {}", toml_str(one));
                }
                Some(more) => problems.push(format!(
                    "{}: {} addresses ({}); the inventory holds one per NIC: keep one",
                    who(i, "interface"),
                    more.len(),
                    more.join(", ")
                )),
            }
        }
    }
}

fn switch(
    out: &mut Written,
    problems: &mut Vec<String>,
    d: &Value,
    ifaces: &BTreeMap<String, Vec<&Value>>,
) {
    let Some(name) = text(d, "name") else {
        problems.push(format!(
            "{}: a switch device needs a name",
            who(d, "device")
        ));
        return;
    };
    let Some(model) = text(d, "device_type") else {
        problems.push(format!("{}: no device type", who(d, "device")));
        return;
    };
    let id = id_of(d).unwrap_or_default();
    let ports: Vec<&Value> = ifaces
        .get(&id)
        .map(|v| v.iter().copied().filter(|i| is_physical(i)).collect())
        .unwrap_or_default();
    if ports.is_empty() {
        problems.push(format!(
            "{}: no physical interfaces; give the switch its ports (the device type's interface templates do)",
            who(d, "device")
        ));
        return;
    }
    // Lanes of broken-out cages (`swp9s0`): read back as the cages'
    // `breakout`, or left beside the cages when `topo_breakout` says it.
    let (lanes, ports): (Vec<&Value>, Vec<&Value>) = ports
        .into_iter()
        .partition(|p| split_lane(text(p, "name").unwrap_or("")).is_some());
    let breakout = match cf_str(d, "topo_breakout") {
        Some(b) => Some(b.to_string()),
        None if lanes.is_empty() => None,
        None => match lane_breakout(&lanes, &ports) {
            Ok(b) => Some(b),
            Err(e) => {
                problems.push(format!("{}: {e}", who(d, "device")));
                return;
            }
        },
    };
    let mut pattern: Option<String> = None;
    let mut numbers = BTreeSet::new();
    let mut speeds = BTreeSet::new();
    let before = problems.len();
    let cages = lane_cages(&lanes);
    for p in ports.iter().copied().chain(cages.iter()) {
        let iname = text(p, "name").unwrap_or("");
        match split_port(iname) {
            Some((pat, n)) => {
                match &pattern {
                    None => pattern = Some(pat),
                    Some(have) if *have != pat => problems.push(format!(
                        "{}: its name does not follow {have} like the other ports of {name}; the inventory numbers ports with one pattern (mark others mgmt_only)",
                        who(p, "interface")
                    )),
                    Some(_) => {}
                }
                numbers.insert(n);
            }
            None => problems.push(format!(
                "{}: a switch port name must end in its number; mark it mgmt_only if it is not a fabric port",
                who(p, "interface")
            )),
        }
        match interface_gbps(p) {
            Some(g) => {
                speeds.insert(g);
            }
            None => problems.push(format!(
                "{}: no speed and no type with one; set its speed",
                who(p, "interface")
            )),
        }
    }
    if problems.len() > before {
        return;
    }
    let count = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
    if numbers.first() != Some(&1) || numbers.last() != Some(&count) {
        problems.push(format!(
            "{}: ports numbered {}..{} with gaps; the inventory numbers ports 1..N",
            who(d, "device"),
            numbers.first().unwrap_or(&0),
            numbers.last().unwrap_or(&0)
        ));
        return;
    }
    if speeds.len() != 1 {
        problems.push(format!(
            "{}: ports of several speeds ({:?} Gbps); the inventory gives one port speed per switch",
            who(d, "device"),
            speeds
        ));
        return;
    }
    let gbps = speeds.first().copied().unwrap_or(0);
    let dev = who(d, "device");
    out.device(name, &dev);
    out.from(&dev, "name");
    let _ = writeln!(out, "\n[[switch]]\nname = {}", toml_str(name));
    out.from(&dev, "device type");
    let _ = writeln!(out, "model = {}", toml_str(model));
    out.from(&dev, "its physical interfaces (numbers and speeds)");
    let _ = writeln!(out, "ports = {count}\nport_gbps = {gbps}");
    if let Some(b) = &breakout {
        out.from(
            &dev,
            "custom field topo_breakout (or its lane interfaces, swp1s0)",
        );
        let _ = writeln!(out, "breakout = {}", toml_str(b));
    }
    if let Some(p) = &pattern {
        out.from(&dev, "its interface names");
        let _ = writeln!(out, "port_name = {}", toml_str(p));
    }
    if let Some(r) = text(d, "rack") {
        out.from(&dev, "rack");
        let _ = writeln!(out, "rack = {}", toml_str(r));
    }
    if let Some(t) = cf_str(d, "topo_tier") {
        out.from(&dev, "custom field topo_tier");
        let _ = writeln!(out, "role = {}", toml_str(t));
    }
    if let Some(r) = cf_str(d, "topo_reserved_ports") {
        out.from(&dev, "custom field topo_reserved_ports");
        let _ = writeln!(out, "reserved_ports = {}", toml_str(r));
    }
    out.from(&dev, "custom field topo_virtual");
    if let Some(v) = cf(d, "topo_virtual") {
        let Some(halves) = v.as_array() else {
            problems.push(format!(
                "{}: custom field topo_virtual must be a JSON list of {{suffix, ports, vlan, part}}",
                who(d, "device")
            ));
            return;
        };
        for h in halves {
            let suffix = h.get("suffix").and_then(Value::as_str);
            let vlan = h.get("vlan").and_then(Value::as_u64);
            let ports = h.get("ports");
            let (Some(suffix), Some(vlan), Some(ports)) = (suffix, vlan, ports) else {
                problems.push(format!(
                    "{}: each topo_virtual entry needs suffix, ports and vlan: {h}",
                    who(d, "device")
                ));
                return;
            };
            let ports = match ports {
                Value::String(s) => toml_str(s),
                Value::Array(a) => match a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>() {
                    Some(numbers) => format!(
                        "[{}]",
                        numbers
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    // Refused here, naming the device: the inventory's
                    // reader would name a line of the generated TOML.
                    None => {
                        problems.push(format!(
                            "{}: topo_virtual ports {ports} must be whole port numbers",
                            who(d, "device")
                        ));
                        return;
                    }
                },
                other => {
                    problems.push(format!(
                        "{}: topo_virtual ports {other} is neither a range string nor a list",
                        who(d, "device")
                    ));
                    return;
                }
            };
            let _ = writeln!(out, "\n[[switch.virtual]]\nsuffix = {}", toml_str(suffix));
            let _ = writeln!(out, "ports = {ports}\nvlan = {vlan}");
            if let Some(p) = h.get("part").and_then(Value::as_str) {
                let _ = writeln!(out, "part = {}", toml_str(p));
            }
        }
    }
}

#[cfg(test)]
mod tests;
