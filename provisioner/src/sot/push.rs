//! Push: the plan's switches, VLANs, switch-port modes and VLANs, planned
//! cables, prefixes and NIC addresses into Nautobot, every object the push
//! creates tagged `topo-plan-<plan>` (the plan owns it).
//!
//! [`desired`] says what the plan wants (pure); [`State::read`] reads what
//! the source of truth holds; [`diff`] compares them (pure): creates,
//! updates of owned (or blank, unclaimed) objects, and conflicts with
//! objects the plan does not own, which are never written. [`push`]
//! applies the diff phase by phase (an object's dependencies first),
//! reading the state again after each phase, with list POSTs and PATCHes
//! (bulk writes); nothing is written when there is a conflict.

use std::collections::{BTreeMap, BTreeSet};

use planner::plan::{CableKind, Plan};
use serde::Serialize;
use serde_json::{Value, json};

use super::client::{Client, Flavor, enum_value, list_of};
use super::error::{Result, SotError};
use super::import::{id_json, id_of, query_chunks, query_value};

/// What a push needs besides the plan.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The location of switches the push creates.
    pub location: Option<String>,
    /// The role of switches the push creates.
    pub switch_role: String,
    /// Only show the diff.
    pub dry_run: bool,
    /// Objects per bulk request.
    pub batch: usize,
}

/// The tag that marks the plan's objects.
pub fn owner_tag(plan: &str) -> String {
    format!("topo-plan-{plan}")
}

/// The label of a planned cable: `<switch>:<port>><peer>:<peer port>`.
pub fn cable_label(a: &str, a_port: u32, b: &str, b_port: &str) -> String {
    format!("{a}:{a_port}>{b}:{b_port}")
}

/// A switch port the plan sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantPort {
    /// Physical switch.
    pub device: String,
    /// Interface name.
    pub name: String,
    /// The VLAN of its half (access mode), if the switch is split.
    pub vlan: Option<u16>,
}

/// A planned cable between two interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantCable {
    /// (device, interface) of the switch end.
    pub a: (String, String),
    /// (device, interface) of the other end.
    pub b: (String, String),
    /// Its label.
    pub label: String,
}

/// What the plan wants in the source of truth.
#[derive(Debug, Clone, Default)]
pub struct Desired {
    /// The owner tag.
    pub tag: String,
    /// Physical switches and their models.
    pub switches: BTreeMap<String, String>,
    /// Servers the cables end on (they must exist).
    pub servers: BTreeSet<String>,
    /// VLAN id -> name.
    pub vlans: BTreeMap<u16, String>,
    /// Switch ports to configure.
    pub ports: Vec<WantPort>,
    /// Interface type and speed (Kbps) of each switch's ports.
    pub port_kind: BTreeMap<String, (String, u64)>,
    /// Planned cables.
    pub cables: Vec<WantCable>,
    /// Prefixes (network/len) of the NIC addresses.
    pub prefixes: BTreeSet<String>,
    /// (address/len, server, interface).
    pub addresses: Vec<(String, String, String)>,
    /// (MAC, server, interface) of the NICs the plan gives a MAC; pushed
    /// to NetBox only, where a MAC address is an object of its own.
    pub macs: Vec<(String, String, String)>,
}

/// Nautobot's interface type for a line rate.
pub fn interface_type(gbps: u32) -> &'static str {
    match gbps {
        1 => "1000base-t",
        10 => "10gbase-x-sfpp",
        25 => "25gbase-x-sfp28",
        40 => "40gbase-x-qsfpp",
        50 => "50gbase-x-sfp28",
        100 => "100gbase-x-qsfp28",
        200 => "200gbase-x-qsfp56",
        400 => "400gbase-x-qsfpdd",
        800 => "800gbase-x-qsfpdd",
        _ => "other",
    }
}

/// The network of an address (`10.100.1.2/24` -> `10.100.1.0/24`).
fn network(addr: &str) -> Option<String> {
    let (ip, len) = addr.split_once('/')?;
    let len: u32 = len.parse().ok()?;
    match ip.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(v4) if len <= 32 => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            Some(format!(
                "{}/{len}",
                std::net::Ipv4Addr::from(u32::from(v4) & mask)
            ))
        }
        std::net::IpAddr::V6(v6) if len <= 128 => {
            let mask = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            Some(format!(
                "{}/{len}",
                std::net::Ipv6Addr::from(u128::from(v6) & mask)
            ))
        }
        _ => None,
    }
}

/// What `plan` wants.
pub fn desired(plan: &Plan) -> Desired {
    let mut d = Desired {
        tag: owner_tag(&plan.name),
        ..Desired::default()
    };
    let mut port_name: BTreeMap<&str, &planner::plan::PlanSwitch> = BTreeMap::new();
    for s in &plan.switch_list {
        d.switches.insert(s.physical.clone(), s.model.clone());
        port_name.entry(s.physical.as_str()).or_insert(s);
        d.port_kind.insert(
            s.physical.clone(),
            (
                interface_type(s.port_gbps).to_string(),
                u64::from(s.port_gbps) * 1_000_000,
            ),
        );
        if let Some(v) = s.vlan {
            d.vlans
                .entry(v)
                .or_insert_with(|| format!("{}-vlan{v}", plan.name));
        }
        for p in &s.ports {
            if p.role == planner::plan::PortRole::Free {
                continue;
            }
            d.ports.push(WantPort {
                device: s.physical.clone(),
                name: s.port_name(p.port),
                vlan: s.vlan,
            });
        }
    }
    let iface = |dev: &str, port: u32| match port_name.get(dev) {
        Some(s) => s.port_name(port),
        None => port.to_string(),
    };
    for c in &plan.cables {
        let a = (c.a.clone(), iface(&c.a, c.a_port));
        let b = if c.kind == CableKind::SubNode {
            d.servers.insert(c.b.clone());
            (c.b.clone(), c.b_port.clone())
        } else {
            let p: u32 = c.b_port.parse().unwrap_or(0);
            (c.b.clone(), iface(&c.b, p))
        };
        d.cables.push(WantCable {
            label: cable_label(&c.a, c.a_port, &c.b, &c.b_port),
            a,
            b,
        });
    }
    for sn in &plan.sub_node_list {
        if let Some(mac) = &sn.mac {
            d.macs
                .push((mac_key(mac), sn.server.clone(), sn.nic.clone()));
        }
        if let Some(ip) = &sn.ip
            && let Some(net) = network(ip)
        {
            d.prefixes.insert(net);
            d.addresses
                .push((ip.clone(), sn.server.clone(), sn.nic.clone()));
        }
    }
    d
}

/// What the source of truth holds of the plan's objects.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The owner tag, when it exists.
    pub tag: Option<Value>,
    /// Devices by name.
    pub devices: BTreeMap<String, Value>,
    /// Interfaces by (device name, interface name).
    pub interfaces: BTreeMap<(String, String), Value>,
    /// VLANs named like the plan's, by name.
    pub vlans: BTreeMap<String, Value>,
    /// Cables on the plan's devices' interfaces, by id.
    pub cables: BTreeMap<String, Value>,
    /// Prefixes by prefix.
    pub prefixes: BTreeMap<String, Value>,
    /// IP addresses by address.
    pub addresses: BTreeMap<String, Value>,
    /// Interface ids each IP address id is assigned to.
    pub assigned: BTreeMap<String, BTreeSet<String>>,
    /// NetBox's MAC address objects by address ([`mac_key`]).
    pub macs: BTreeMap<String, Vec<Value>>,
}

/// The GraphQL fields of an object's tags.
const TAGS: &str = "tags { id name }";

impl State {
    /// Reads the objects the desired state names: from Nautobot in one
    /// GraphQL query, from NetBox through its REST lists.
    pub async fn read(client: &Client, want: &Desired) -> Result<State> {
        match client.flavor() {
            Flavor::Nautobot => State::read_graphql(client, want).await,
            Flavor::Netbox => State::read_rest(client, want).await,
        }
    }

    /// Nautobot: one GraphQL query for the tag, the devices with their
    /// interfaces and cables, the VLANs, prefixes and addresses (and the
    /// interfaces each address is assigned to), reshaped into the REST
    /// objects [`diff`] reads. A list the plan does not need is left out
    /// of the query (an empty filter would match every object).
    async fn read_graphql(client: &Client, want: &Desired) -> Result<State> {
        let names: BTreeSet<&String> = want.switches.keys().chain(&want.servers).collect();
        let addresses: Vec<&String> = want.addresses.iter().map(|a| &a.0).collect();
        let vlans: Vec<&String> = want.vlans.values().collect();
        let mut vars = serde_json::Map::new();
        let mut params = vec!["$tag: [String]".to_string()];
        let mut fields = vec!["tags(name: $tag) { id name }".to_string()];
        vars.insert("tag".to_string(), json!([want.tag]));
        let mut wanted = |var: &str, filter: &str, values: Value, body: String| {
            if values.as_array().is_some_and(|a| !a.is_empty()) {
                params.push(format!("${var}: [String]"));
                fields.push(format!("{var}: {filter}: ${var}) {{ {body} }}"));
                vars.insert(var.to_string(), values);
            }
        };
        wanted(
            "devices",
            "devices(name",
            json!(names),
            format!(
                "id name interfaces {{ id name mode untagged_vlan {{ id }} tagged_vlans {{ id }} \
                 {TAGS} cable {{ id label {TAGS} }} }}"
            ),
        );
        wanted(
            "vlans",
            "vlans(name",
            json!(vlans),
            format!("id name vid {TAGS}"),
        );
        wanted(
            "prefixes",
            "prefixes(prefix",
            json!(want.prefixes),
            format!("id prefix {TAGS}"),
        );
        wanted(
            "addresses",
            "ip_addresses(address",
            json!(addresses),
            format!("id address {TAGS} interfaces {{ id }}"),
        );
        let query = format!("query ({}) {{ {} }}", params.join(", "), fields.join(" "));
        let data = client
            .graphql(&query, Value::Object(vars), "reading the plan's objects")
            .await?;
        let with_url = |v: &Value, endpoint: &str| {
            let mut v = v.clone();
            if let (Some(id), Some(o)) = (id_of(&v), v.as_object_mut()) {
                o.insert("url".to_string(), json!(client.object_url(endpoint, &id)));
            }
            v
        };
        let mut st = State {
            tag: list_of(&data, "tags").first().cloned(),
            ..State::default()
        };
        for d in list_of(&data, "devices") {
            let Some(dev) = d.get("name").and_then(Value::as_str) else {
                continue;
            };
            for i in d
                .get("interfaces")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut i = with_url(i, "/api/dcim/interfaces/");
                if let Some(c) = i.get("cable").filter(|c| c.is_object()) {
                    let c = with_url(c, "/api/dcim/cables/");
                    if let Some(id) = id_of(&c) {
                        st.cables.insert(id, c);
                    }
                }
                if let Some(o) = i.as_object_mut() {
                    let mode = enum_value(o.get("mode").unwrap_or(&Value::Null));
                    o.insert("mode".to_string(), mode);
                }
                if let Some(n) = i.get("name").and_then(Value::as_str) {
                    st.interfaces
                        .insert((dev.to_string(), n.to_string()), i.clone());
                }
            }
            let mut d = with_url(d, "/api/dcim/devices/");
            if let Some(o) = d.as_object_mut() {
                o.remove("interfaces");
            }
            st.devices.insert(dev.to_string(), d);
        }
        for v in list_of(&data, "vlans") {
            if let Some(n) = v.get("name").and_then(Value::as_str) {
                st.vlans
                    .insert(n.to_string(), with_url(v, "/api/ipam/vlans/"));
            }
        }
        for p in list_of(&data, "prefixes") {
            if let Some(n) = p.get("prefix").and_then(Value::as_str) {
                st.prefixes
                    .insert(n.to_string(), with_url(p, "/api/ipam/prefixes/"));
            }
        }
        for a in list_of(&data, "addresses") {
            let (Some(n), Some(id)) = (a.get("address").and_then(Value::as_str), id_of(a)) else {
                continue;
            };
            let on: BTreeSet<String> = a
                .get("interfaces")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(id_of)
                .collect();
            if !on.is_empty() {
                st.assigned.insert(id, on);
            }
            st.addresses
                .insert(n.to_string(), with_url(a, "/api/ipam/ip-addresses/"));
        }
        Ok(st)
    }

    /// NetBox: the REST lists, filtered by the names the plan uses
    /// (`netbox/dcim/filtersets.py`, `netbox/ipam/filtersets.py`, v4.6.8:
    /// devices and VLANs by `name`, interfaces by `device` name, cables
    /// by `id`, prefixes by `prefix`, addresses by `address`, MAC
    /// addresses by `mac_address`). An address's interface is its
    /// `assigned_object` (NetBox has no assignment object); MAC addresses
    /// are objects of their own since NetBox 4.2.
    async fn read_rest(client: &Client, want: &Desired) -> Result<State> {
        let mut st = State::default();
        let tags = client
            .list(
                "/api/extras/tags/",
                &format!("name={}", query_value(&want.tag)),
                "reading the owner tag",
            )
            .await?;
        st.tag = tags.into_iter().next();
        let names: BTreeSet<&String> = want.switches.keys().chain(&want.servers).collect();
        let mut id_name = BTreeMap::new();
        for q in query_chunks(names.iter().copied(), "name", 50) {
            for d in client
                .list("/api/dcim/devices/", &q, "reading the devices")
                .await?
            {
                if let (Some(n), Some(id)) = (d.get("name").and_then(Value::as_str), id_of(&d)) {
                    id_name.insert(id, n.to_string());
                    st.devices.insert(n.to_string(), d);
                }
            }
        }
        // Only devices that exist: NetBox refuses (400) a `device=` name it
        // does not know.
        let present: Vec<&String> = names
            .iter()
            .copied()
            .filter(|n| st.devices.contains_key(*n))
            .collect();
        let mut cable_ids = BTreeSet::new();
        for q in query_chunks(present.into_iter(), "device", 20) {
            for i in client
                .list("/api/dcim/interfaces/", &q, "reading the interfaces")
                .await?
            {
                let dev = i
                    .get("device")
                    .and_then(id_of)
                    .and_then(|d| id_name.get(&d).cloned());
                if let (Some(dev), Some(n)) = (dev, i.get("name").and_then(Value::as_str)) {
                    if let Some(c) = i.get("cable").and_then(id_of) {
                        cable_ids.insert(c);
                    }
                    st.interfaces.insert((dev, n.to_string()), i);
                }
            }
        }
        let ids: Vec<String> = cable_ids.into_iter().collect();
        for q in query_chunks(ids.iter(), "id", 50) {
            for c in client
                .list("/api/dcim/cables/", &q, "reading the cables")
                .await?
            {
                if let Some(id) = id_of(&c) {
                    st.cables.insert(id, c);
                }
            }
        }
        let vlan_names: Vec<&String> = want.vlans.values().collect();
        for q in query_chunks(vlan_names.into_iter(), "name", 50) {
            for v in client
                .list("/api/ipam/vlans/", &q, "reading the VLANs")
                .await?
            {
                if let Some(n) = v.get("name").and_then(Value::as_str) {
                    st.vlans.insert(n.to_string(), v);
                }
            }
        }
        for q in query_chunks(want.prefixes.iter(), "prefix", 50) {
            for p in client
                .list("/api/ipam/prefixes/", &q, "reading the prefixes")
                .await?
            {
                if let Some(n) = p.get("prefix").and_then(Value::as_str) {
                    st.prefixes.insert(n.to_string(), p);
                }
            }
        }
        let addrs: Vec<String> = want.addresses.iter().map(|a| a.0.clone()).collect();
        for q in query_chunks(addrs.iter(), "address", 50) {
            for a in client
                .list("/api/ipam/ip-addresses/", &q, "reading the IP addresses")
                .await?
            {
                let Some(n) = a.get("address").and_then(Value::as_str) else {
                    continue;
                };
                if let (Some(ip), Some(i)) = (id_of(&a), assigned_interface(&a)) {
                    st.assigned.entry(ip).or_default().insert(i);
                }
                st.addresses.insert(n.to_string(), a);
            }
        }
        let macs: Vec<String> = want.macs.iter().map(|m| m.0.clone()).collect();
        for q in query_chunks(macs.iter(), "mac_address", 50) {
            for m in client
                .list("/api/dcim/mac-addresses/", &q, "reading the MAC addresses")
                .await?
            {
                if let Some(n) = m.get("mac_address").and_then(Value::as_str) {
                    st.macs.entry(mac_key(n)).or_default().push(m);
                }
            }
        }
        Ok(st)
    }
}

/// The interface id a NetBox IP or MAC address is assigned to
/// (`assigned_object_type` `dcim.interface`).
fn assigned_interface(v: &Value) -> Option<String> {
    (v.get("assigned_object_type").and_then(Value::as_str) == Some("dcim.interface"))
        .then(|| v.get("assigned_object_id").and_then(id_of))
        .flatten()
}

/// A MAC address compared as NetBox shows it (upper case, colons:
/// `mac_unix_expanded_uppercase` in `netbox/dcim/fields.py`).
pub fn mac_key(mac: &str) -> String {
    mac.trim().to_ascii_uppercase().replace('-', ":")
}

/// One difference between the plan and the source of truth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `create`, `update` or `conflict`.
    pub action: &'static str,
    /// `tag`, `vlan`, `device`, `interface`, `cable`, `prefix`,
    /// `ip-address`, `ip-assignment`.
    pub kind: &'static str,
    /// The object (`sw01 HundredGigE1/0/9`).
    pub object: String,
    /// What changes, or why it conflicts (and what to do).
    pub detail: String,
    /// The object's URL, when it exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Order of application: dependencies first.
    #[serde(skip)]
    pub phase: u8,
    /// The request body (create) or patch (update with `id`).
    #[serde(skip)]
    pub body: Value,
}

/// The diff of a push.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diff {
    /// Creates and updates, in application order.
    pub changes: Vec<Change>,
    /// Objects the plan does not own that stand in its way.
    pub conflicts: Vec<Change>,
    /// Objects already as planned.
    pub unchanged: usize,
}

fn has_tag(v: &Value, tag_id: Option<&str>, tag: &str) -> bool {
    v.get("tags").and_then(Value::as_array).is_some_and(|tags| {
        tags.iter().any(|t| {
            id_of(t).as_deref() == tag_id && tag_id.is_some()
                || t.get("name").and_then(Value::as_str) == Some(tag)
        })
    })
}

fn url(v: &Value) -> Option<String> {
    v.get("url").and_then(Value::as_str).map(str::to_string)
}

fn tag_ids(v: &Value) -> Vec<Value> {
    v.get("tags")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|t| id_json(id_of(t))).collect())
        .unwrap_or_default()
}

/// A status as the flavour writes it: Nautobot by name (`{"name":
/// "Active"}`), NetBox by its lower-case value (`"active"`: NetBox's
/// `ChoiceField` refuses a dictionary and `Active`,
/// `netbox/netbox/api/fields.py`, v4.6.8).
fn status(flavor: Flavor, name: &str) -> Value {
    match flavor {
        Flavor::Nautobot => json!({"name": name}),
        Flavor::Netbox => json!(name.to_ascii_lowercase()),
    }
}

/// A tag's slug as NetBox requires one: lower case, letters, digits, `-`
/// and `_`.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The endpoint of a change's kind.
fn endpoint(kind: &str) -> &'static str {
    match kind {
        "tag" => "/api/extras/tags/",
        "vlan" => "/api/ipam/vlans/",
        "device" => "/api/dcim/devices/",
        "interface" => "/api/dcim/interfaces/",
        "cable" => "/api/dcim/cables/",
        "prefix" => "/api/ipam/prefixes/",
        "ip-address" => "/api/ipam/ip-addresses/",
        "mac-address" => "/api/dcim/mac-addresses/",
        _ => "/api/ipam/ip-address-to-interface/",
    }
}

/// Compares what the plan wants with what the source of truth holds.
/// Objects that depend on ones not created yet are listed without their
/// request body's ids (a dry run shows them; a push creates them in a
/// later phase). Refuses (in `Err`) what the push cannot make: a server
/// the plan cables that does not exist, a switch to create without
/// `--location`. `flavor` shapes the request bodies (statuses, cable
/// terminations, address assignments, MAC addresses).
pub fn diff(want: &Desired, st: &State, opts: &PushOptions, flavor: Flavor) -> Result<Diff> {
    let netbox = flavor == Flavor::Netbox;
    let mut d = Diff::default();
    let mut refused = Vec::new();
    let tag_id = st.tag.as_ref().and_then(id_of);
    let tag = id_json(tag_id.clone());
    let mine = |v: &Value| has_tag(v, tag_id.as_deref(), &want.tag);
    let add = |d: &mut Diff, action, kind, object: String, detail: String, url, phase, body| {
        let c = Change {
            action,
            kind,
            object,
            detail,
            url,
            phase,
            body,
        };
        if action == "conflict" {
            d.conflicts.push(c);
        } else {
            d.changes.push(c);
        }
    };
    match &st.tag {
        Some(_) => d.unchanged += 1,
        None => add(
            &mut d,
            "create",
            "tag",
            want.tag.clone(),
            "marks the objects this plan owns".to_string(),
            None,
            0,
            if netbox {
                // NetBox 4.x: `object_types` (was `content_types`), and a
                // required slug (`netbox/extras/api/serializers_/tags.py`).
                json!({"name": want.tag, "slug": slug(&want.tag), "object_types": [
                    "dcim.device", "dcim.interface", "dcim.cable", "dcim.macaddress",
                    "ipam.vlan", "ipam.prefix", "ipam.ipaddress"
                ]})
            } else {
                json!({"name": want.tag, "content_types": [
                    "dcim.device", "dcim.interface", "dcim.cable", "ipam.vlan", "ipam.prefix", "ipam.ipaddress"
                ]})
            },
        ),
    }
    for (vid, name) in &want.vlans {
        match st.vlans.get(name) {
            Some(v) if !mine(v) => add(
                &mut d,
                "conflict",
                "vlan",
                name.clone(),
                format!(
                    "VLAN {name} exists without tag {}; rename or tag it",
                    want.tag
                ),
                url(v),
                1,
                Value::Null,
            ),
            Some(v) if v.get("vid").and_then(Value::as_u64) != Some(u64::from(*vid)) => add(
                &mut d,
                "update",
                "vlan",
                name.clone(),
                format!("vid -> {vid}"),
                url(v),
                1,
                json!({"id": id_json(id_of(v)), "vid": vid}),
            ),
            Some(_) => d.unchanged += 1,
            None => add(
                &mut d,
                "create",
                "vlan",
                name.clone(),
                format!("vid {vid}"),
                None,
                1,
                json!({"vid": vid, "name": name, "status": status(flavor, "Active"), "tags": [tag]}),
            ),
        }
    }
    for (sw, model) in &want.switches {
        if st.devices.contains_key(sw) {
            d.unchanged += 1;
            continue;
        }
        let Some(loc) = &opts.location else {
            refused.push(format!(
                "switch {sw} is not in the source of truth; give --location to create it (device type {model}, role {})",
                opts.switch_role
            ));
            continue;
        };
        add(
            &mut d,
            "create",
            "device",
            sw.clone(),
            format!("{model} at {loc}, role {}", opts.switch_role),
            None,
            1,
            if netbox {
                // A NetBox device stands at a site, named by its slug like
                // the import's `site=` filter; the role by slug too.
                json!({"name": sw, "device_type": {"model": model}, "role": {"slug": opts.switch_role},
                       "site": {"slug": loc}, "status": status(flavor, "Active"), "tags": [tag]})
            } else {
                json!({"name": sw, "device_type": {"model": model}, "role": {"name": opts.switch_role},
                       "location": {"name": loc}, "status": {"name": "Active"}, "tags": [tag]})
            },
        );
    }
    for s in &want.servers {
        if !st.devices.contains_key(s) {
            refused.push(format!(
                "server {s} is not in the source of truth; load the inventory's servers first (docs/source-of-truth.md)"
            ));
        }
    }
    for prefix in &want.prefixes {
        match st.prefixes.get(prefix) {
            Some(_) => d.unchanged += 1,
            None => add(
                &mut d,
                "create",
                "prefix",
                prefix.clone(),
                "parent of the plan's NIC addresses".to_string(),
                None,
                1,
                if netbox {
                    json!({"prefix": prefix, "status": status(flavor, "Active"), "tags": [tag]})
                } else {
                    json!({"prefix": prefix, "status": {"name": "Active"}, "namespace": {"name": "Global"},
                           "type": "network", "tags": [tag]})
                },
            ),
        }
    }
    // Interfaces: missing switch ports are created on the plan's switches;
    // existing ones are set when owned or blank, else they conflict.
    let dev_id = |n: &str| id_json(st.devices.get(n).and_then(id_of));
    let vlan_id = |vid: u16| {
        want.vlans
            .get(&vid)
            .and_then(|n| st.vlans.get(n))
            .and_then(id_of)
    };
    for p in &want.ports {
        let key = (p.device.clone(), p.name.clone());
        let object = format!("{} {}", p.device, p.name);
        match st.interfaces.get(&key) {
            None => {
                let (ty, speed) = want
                    .port_kind
                    .get(&p.device)
                    .cloned()
                    .unwrap_or(("other".to_string(), 0));
                let mut body = if netbox {
                    // A NetBox interface has no status.
                    json!({"device": dev_id(&p.device), "name": p.name, "type": ty, "speed": speed,
                           "tags": [tag]})
                } else {
                    json!({"device": dev_id(&p.device), "name": p.name, "type": ty, "speed": speed,
                           "status": {"name": "Active"}, "tags": [tag]})
                };
                // Created with its mode and VLAN at once: no update later.
                if let Some(vid) = p.vlan {
                    body["mode"] = json!("access");
                    body["untagged_vlan"] = id_json(vlan_id(vid));
                }
                add(
                    &mut d,
                    "create",
                    "interface",
                    object,
                    ty.to_string(),
                    None,
                    2,
                    body,
                );
            }
            Some(i) => {
                let Some(vid) = p.vlan else {
                    d.unchanged += 1;
                    continue;
                };
                let mode = i
                    .get("mode")
                    .and_then(|m| m.get("value").or(Some(m)))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let untagged = i.get("untagged_vlan").and_then(id_of);
                let want_vlan = vlan_id(vid);
                let tagged = i
                    .get("tagged_vlans")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty());
                let as_planned =
                    mode == "access" && untagged.is_some() && untagged == want_vlan && !tagged;
                if as_planned && mine(i) {
                    d.unchanged += 1;
                    continue;
                }
                let blank = mode.is_empty() && untagged.is_none() && !tagged;
                if !mine(i) && !blank && !as_planned {
                    add(
                        &mut d,
                        "conflict",
                        "interface",
                        object,
                        format!(
                            "mode {mode:?} with other VLANs, not tagged {}: the plan wants access VLAN {vid}; clear it or tag it {} to hand it to the plan",
                            want.tag, want.tag
                        ),
                        url(i),
                        3,
                        Value::Null,
                    );
                    continue;
                }
                let mut tags = tag_ids(i);
                if !mine(i) {
                    tags.push(tag.clone());
                }
                add(
                    &mut d,
                    "update",
                    "interface",
                    object,
                    format!("mode {mode:?} -> access, untagged VLAN {vid}"),
                    url(i),
                    // Before the cables (phase 3): Nautobot 3.2.7 saves an
                    // interface that has no cable yet faster (192 port
                    // updates took 55 s before the cables, 99 s after, one
                    // run each on a busy machine: docs/source-of-truth.md).
                    2,
                    json!({"id": id_json(id_of(i)), "mode": "access", "untagged_vlan": id_json(want_vlan),
                           "tags": tags}),
                );
            }
        }
    }
    // Cables: one per planned cable; an existing cable on either end is
    // as planned (owned, same two ends), or a conflict.
    let iface_id = |k: &(String, String)| st.interfaces.get(k).and_then(id_of);
    for c in &want.cables {
        let object = format!("{} {} - {} {}", c.a.0, c.a.1, c.b.0, c.b.1);
        if st.devices.contains_key(&c.b.0)
            && !want.switches.contains_key(&c.b.0)
            && iface_id(&c.b).is_none()
        {
            refused.push(format!(
                "server {} has no interface {} ({}) for the cable from {} {}; add it (the NIC's name)",
                c.b.0,
                c.b.1,
                st.devices.get(&c.b.0).and_then(url).unwrap_or_default(),
                c.a.0,
                c.a.1
            ));
            continue;
        }
        let (ia, ib) = (iface_id(&c.a), iface_id(&c.b));
        let on = |i: &Option<String>| {
            i.as_ref()
                .and_then(|id| {
                    st.interfaces
                        .values()
                        .find(|x| id_of(x).as_ref() == Some(id))
                })
                .and_then(|x| x.get("cable"))
                .and_then(id_of)
        };
        let (ca, cb) = (on(&ia), on(&ib));
        if ca.is_none() && cb.is_none() {
            add(
                &mut d,
                "create",
                "cable",
                object,
                format!("label {}, status Planned", c.label),
                None,
                3,
                if netbox {
                    // NetBox 4.x: lists of terminations per end
                    // (`netbox/dcim/api/serializers_/cables.py`).
                    json!({"a_terminations": [{"object_type": "dcim.interface", "object_id": id_json(ia)}],
                           "b_terminations": [{"object_type": "dcim.interface", "object_id": id_json(ib)}],
                           "status": status(flavor, "Planned"), "label": c.label, "tags": [tag]})
                } else {
                    json!({"termination_a_type": "dcim.interface", "termination_a_id": ia,
                           "termination_b_type": "dcim.interface", "termination_b_id": ib,
                           "status": {"name": "Planned"}, "label": c.label, "tags": [tag]})
                },
            );
            continue;
        }
        let same = ca.is_some() && ca == cb;
        let cable = ca.as_ref().or(cb.as_ref()).and_then(|id| st.cables.get(id));
        match cable {
            Some(cv) if same && mine(cv) => {
                if cv.get("label").and_then(Value::as_str) == Some(c.label.as_str()) {
                    d.unchanged += 1;
                } else {
                    add(
                        &mut d,
                        "update",
                        "cable",
                        object,
                        format!("label -> {}", c.label),
                        url(cv),
                        3,
                        json!({"id": id_json(id_of(cv)), "label": c.label}),
                    );
                }
            }
            // Nautobot 3.2.7 drops `tags` from a cable create (the
            // terminations path), so a cable the push just made joins the
            // planned ports with the plan's label and no tag: claimed by a
            // PATCH, which keeps them, in a later phase.
            Some(cv)
                if same
                    && cv.get("label").and_then(Value::as_str) == Some(c.label.as_str())
                    && tag_ids(cv).is_empty() =>
            {
                add(
                    &mut d,
                    "update",
                    "cable",
                    object,
                    format!("tag {}", want.tag),
                    url(cv),
                    4,
                    json!({"id": id_json(id_of(cv)), "tags": [tag]}),
                )
            }
            other => add(
                &mut d,
                "conflict",
                "cable",
                object,
                if same {
                    format!(
                        "a cable not tagged {} already joins these ports; tag it to hand it to the plan",
                        want.tag
                    )
                } else {
                    "a port already has a cable to somewhere else; remove it or fix the plan"
                        .to_string()
                },
                other.and_then(url),
                3,
                Value::Null,
            ),
        }
    }
    // NIC addresses: the address (created when missing, owned) and its
    // assignment to the NIC's interface: on Nautobot an assignment object
    // of its own, on NetBox the address's `assigned_object`.
    for (addr, server, nic) in &want.addresses {
        let object = format!("{addr} on {server} {nic}");
        let iface = iface_id(&(server.clone(), nic.clone()));
        if netbox && iface.is_none() {
            refused.push(format!(
                "server {server} has no interface {nic} ({}) for the address {addr}; add it (the NIC's name)",
                st.devices.get(server).and_then(url).unwrap_or_default()
            ));
            continue;
        }
        match st.addresses.get(addr) {
            None => {
                let body = if netbox {
                    json!({"address": addr, "status": status(flavor, "Active"),
                           "assigned_object_type": "dcim.interface",
                           "assigned_object_id": id_json(iface.clone()), "tags": [tag]})
                } else {
                    json!({"address": addr, "status": {"name": "Active"}, "namespace": {"name": "Global"},
                           "type": "host", "tags": [tag]})
                };
                add(
                    &mut d,
                    "create",
                    "ip-address",
                    addr.clone(),
                    format!("for {server} {nic}"),
                    None,
                    3,
                    body,
                );
                if !netbox {
                    add(
                        &mut d,
                        "create",
                        "ip-assignment",
                        object,
                        String::new(),
                        None,
                        4,
                        json!({"ip_address": Value::Null, "interface": iface, "_address": addr}),
                    );
                }
            }
            Some(ip) => {
                let ipid = id_of(ip).unwrap_or_default();
                let on = st.assigned.get(&ipid);
                match (&iface, on) {
                    (Some(i), Some(set)) if set.contains(i) => d.unchanged += 1,
                    (_, Some(set)) if !set.is_empty() && !mine(ip) => add(
                        &mut d,
                        "conflict",
                        "ip-address",
                        object,
                        "the address is assigned to another interface; free it or change the plan's address".to_string(),
                        url(ip),
                        4,
                        Value::Null,
                    ),
                    _ if netbox => add(
                        &mut d,
                        "update",
                        "ip-address",
                        object,
                        format!("assign to {server} {nic}"),
                        url(ip),
                        4,
                        json!({"id": id_json(Some(ipid)), "assigned_object_type": "dcim.interface",
                               "assigned_object_id": id_json(iface.clone())}),
                    ),
                    _ => add(
                        &mut d,
                        "create",
                        "ip-assignment",
                        object,
                        String::new(),
                        url(ip),
                        4,
                        json!({"ip_address": ipid, "interface": iface}),
                    ),
                }
            }
        }
    }
    // MAC addresses (NetBox only: on Nautobot a MAC is a field of the
    // interface, which the inventory's loader sets). Since NetBox 4.2 a MAC
    // is an object assigned to an interface, and the interface's
    // `mac_address` is read-only: that of its `primary_mac_address`
    // (`netbox/dcim/api/serializers_/device_components.py`, v4.6.8). The
    // push creates the MAC assigned to the NIC's interface, then makes it
    // the interface's primary MAC when the interface has none.
    for (mac, server, nic) in want.macs.iter().filter(|_| netbox) {
        let object = format!("{mac} on {server} {nic}");
        let key = (server.clone(), nic.clone());
        let (Some(iface), Some(iv)) = (iface_id(&key), st.interfaces.get(&key)) else {
            refused.push(format!(
                "server {server} has no interface {nic} ({}) for the MAC address {mac}; add it (the NIC's name)",
                st.devices.get(server).and_then(url).unwrap_or_default()
            ));
            continue;
        };
        let objects = st.macs.get(mac).map(Vec::as_slice).unwrap_or(&[]);
        let here = objects
            .iter()
            .find(|m| assigned_interface(m).as_deref() == Some(iface.as_str()));
        let elsewhere = objects
            .iter()
            .find(|m| assigned_interface(m).is_some_and(|i| i != iface) && !mine(m));
        let primary = iv.get("primary_mac_address").and_then(id_of);
        match (here, elsewhere) {
            (Some(m), _) => match &primary {
                Some(p) if Some(p) == id_of(m).as_ref() => d.unchanged += 1,
                None => add(
                    &mut d,
                    "update",
                    "interface",
                    format!("{server} {nic}"),
                    format!("primary MAC address -> {mac}"),
                    url(iv),
                    4,
                    json!({"id": id_json(Some(iface.clone())), "primary_mac_address": id_json(id_of(m))}),
                ),
                Some(_) => add(
                    &mut d,
                    "conflict",
                    "interface",
                    format!("{server} {nic}"),
                    format!(
                        "its primary MAC address is {}, the plan's NIC has {mac}; correct the inventory or the interface",
                        iv.get("mac_address").and_then(Value::as_str).unwrap_or("another")
                    ),
                    url(iv),
                    4,
                    Value::Null,
                ),
            },
            (None, Some(m)) => add(
                &mut d,
                "conflict",
                "mac-address",
                object,
                "the MAC address is assigned to another interface; free it or correct the inventory".to_string(),
                url(m),
                3,
                Value::Null,
            ),
            (None, None) => add(
                &mut d,
                "create",
                "mac-address",
                mac.clone(),
                format!("for {server} {nic}"),
                None,
                3,
                json!({"mac_address": mac, "assigned_object_type": "dcim.interface",
                       "assigned_object_id": id_json(Some(iface.clone())), "tags": [tag]}),
            ),
        }
    }
    if !refused.is_empty() {
        return Err(SotError::Refused {
            what: "the plan cannot be pushed".to_string(),
            problems: refused,
        });
    }
    d.changes.sort_by_key(|c| c.phase);
    Ok(d)
}

/// What a push did.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    /// The plan's name.
    pub plan: String,
    /// The source of truth's URL.
    pub url: String,
    /// The owner tag.
    pub tag: String,
    /// True for --dry-run.
    pub dry_run: bool,
    /// The diff before the push.
    pub diff: Diff,
    /// Objects created.
    pub created: usize,
    /// Objects updated.
    pub updated: usize,
    /// Bulk requests sent.
    pub requests: usize,
}

/// Pushes the plan (or, with `dry_run`, only computes the diff). With
/// conflicts nothing is written. `progress` gets a line per phase.
pub async fn push(
    client: &Client,
    plan: &Plan,
    opts: &PushOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<PushReport> {
    let want = desired(plan);
    let st = State::read(client, &want).await?;
    let first = diff(&want, &st, opts, client.flavor())?;
    let mut report = PushReport {
        plan: plan.name.clone(),
        url: client.base().to_string(),
        tag: want.tag.clone(),
        dry_run: opts.dry_run,
        diff: first.clone(),
        created: 0,
        updated: 0,
        requests: 0,
    };
    if opts.dry_run || !first.conflicts.is_empty() || first.changes.is_empty() {
        return Ok(report);
    }
    let mut current = first;
    // Each round applies the lowest phase left, then reads again, so the
    // next phase's bodies carry the ids just created.
    for _round in 0..8 {
        let Some(phase) = current.changes.iter().map(|c| c.phase).min() else {
            break;
        };
        let now: Vec<&Change> = current
            .changes
            .iter()
            .filter(|c| c.phase == phase)
            .collect();
        let mut by_kind: BTreeMap<(&str, &str), Vec<Value>> = BTreeMap::new();
        for c in &now {
            let mut body = c.body.clone();
            if let Some(o) = body.as_object_mut() {
                o.remove("_address");
            }
            by_kind.entry((c.kind, c.action)).or_default().push(body);
        }
        for ((kind, action), bodies) in by_kind {
            progress(&format!("{action} {} {kind}", bodies.len()));
            let what = format!("{action} {kind} objects");
            // Cables cost Nautobot a path trace each: smaller batches keep
            // every request well inside the timeout. A kind's objects are
            // spread over the client's concurrent requests.
            let cap = if kind == "cable" {
                opts.batch.clamp(1, 50)
            } else {
                opts.batch.max(1)
            };
            let per = cap.min(bodies.len().div_ceil(client.concurrency())).max(1);
            if action == "create" {
                client.create(endpoint(kind), &bodies, per, &what).await?;
                report.created += bodies.len();
            } else {
                client.update(endpoint(kind), &bodies, per, &what).await?;
                report.updated += bodies.len();
            }
            report.requests += bodies.len().div_ceil(per);
        }
        let st = State::read(client, &want).await?;
        let next = diff(&want, &st, opts, client.flavor())?;
        if !next.conflicts.is_empty() {
            return Err(SotError::Refused {
                what:
                    "objects changed under the push (a concurrent edit?); nothing more was written"
                        .to_string(),
                problems: next
                    .conflicts
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {}: {} {}",
                            c.kind,
                            c.object,
                            c.detail,
                            c.url.clone().unwrap_or_default()
                        )
                    })
                    .collect(),
            });
        }
        if next.changes.iter().any(|c| c.phase <= phase) {
            return Err(SotError::Api {
                action: format!("pushing {}", plan.name),
                url: client.url(endpoint(now[0].kind)),
                message: format!(
                    "the server accepted phase {phase}'s writes but reading back shows them missing or different ({} left); check its change log",
                    next.changes.iter().filter(|c| c.phase <= phase).count()
                ),
            });
        }
        current = next;
    }
    Ok(report)
}
