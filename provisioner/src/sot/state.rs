//! What the source of truth holds of a plan's objects: read from
//! Nautobot in one GraphQL query, from NetBox through its REST lists.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::client::id_of;
use super::client::{Client, Flavor, enum_value, list_of};
use super::desired::{ASN_FIELDS, Desired, mac_key};
use super::error::Result;
use super::query::{query_chunks, query_value};

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
    /// Nautobot's cable types named like the plan's ([`cable_type`]), by
    /// name.
    pub cable_types: BTreeMap<String, Value>,
    /// The device custom fields of [`ASN_FIELDS`] that exist, by key
    /// (Nautobot's `key`, NetBox's `name`); read only for a BGP plan.
    pub custom_fields: BTreeMap<String, Value>,
    /// The plan's racks that exist (at the location), by name.
    pub racks: BTreeMap<String, Value>,
    /// Racks of a plan's name found twice (without `--location`, in two
    /// locations): (name, URL).
    pub rack_twins: Vec<(String, String)>,
    /// The devices standing in the plan's racks (with a position),
    /// reshaped like [`State::devices`]: `rack` `{id, name}`, `position`,
    /// `face`, `device_type` `{model}`.
    pub occupants: Vec<Value>,
    /// Device types by model, with their `u_height`: those of the plan's
    /// switches and of the devices in its racks.
    pub device_types: BTreeMap<String, Value>,
    /// Every object of the lists read, as often as the server listed it:
    /// what the ids a push writes with are checked against
    /// (`push/ids.rs`, issue #31).
    pub listed: Vec<Listed>,
}

/// One object as a list answer gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The push's kind of the object (`interface`, `vlan`, ...).
    pub kind: &'static str,
    /// Its id.
    pub id: String,
    /// Its name (`sw01 Ethernet1/1` for an interface).
    pub name: String,
    /// Its URL, when the answer gave one.
    pub url: Option<String>,
}

/// Every prefix the plan wants: its NIC prefixes, the link pool and the
/// /31s.
fn wanted_prefixes(want: &Desired) -> BTreeSet<&String> {
    want.prefixes
        .iter()
        .chain(&want.link_prefixes)
        .chain(&want.link_parent)
        .collect()
}

/// A device's custom field values: NetBox's `custom_fields`, Nautobot's
/// GraphQL `_custom_field_data` (reshaped to `custom_fields` on read).
pub(super) fn custom_field<'a>(device: &'a Value, key: &str) -> &'a Value {
    device
        .get("custom_fields")
        .and_then(|c| c.get(key))
        .unwrap_or(&Value::Null)
}

/// A cable's ends as both systems hold them: per end, each connector
/// (1-based) with its interface's id (`None` for another kind of
/// termination), and the lanes the cable carries (1 for a plain cable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CableEnds {
    /// The A end's connectors.
    pub a: Vec<(u32, Option<String>)>,
    /// The B end's connectors.
    pub b: Vec<(u32, Option<String>)>,
    /// Lanes: from NetBox's `profile`, Nautobot's `cable_type`.
    pub lanes: u32,
    /// A breakout cable (more connectors on B than on A: NetBox's
    /// `breakout-*` profiles, a Nautobot cable type with more B
    /// connectors), even with a leg left off.
    pub breakout: bool,
}

/// The ends of a cable read from either system:
/// - NetBox 4.5+ (`netbox/dcim/api/serializers_/cables.py`, v4.6.8):
///   `a_terminations`/`b_terminations`, lists in connector order (a
///   profiled cable numbers its connectors by their place in the list,
///   `Cable.update_terminations` in `netbox/dcim/models/cables.py`), and
///   `profile` ([`profile_lanes`]);
/// - Nautobot 3.2 (GraphQL, `nautobot/dcim/models/cables.py`):
///   `terminations` with `cable_end` and `connector`, and `cable_type`'s
///   `total_lanes`;
/// - the legacy `termination_a_type`/`_id` of one connector per end.
pub fn cable_ends(c: &Value) -> CableEnds {
    let iface = |ty: Option<&str>, id: Option<String>| {
        if ty.is_none_or(|t| t == "dcim.interface") {
            id
        } else {
            None
        }
    };
    let mut e = CableEnds {
        lanes: 1,
        ..CableEnds::default()
    };
    if let Some(ts) = c.get("terminations").and_then(Value::as_array) {
        for t in ts {
            let connector = t.get("connector").and_then(Value::as_u64).unwrap_or(1);
            let id = t.get("interface").and_then(id_of);
            let end = (u32::try_from(connector).unwrap_or(u32::MAX), id);
            match t.get("cable_end").and_then(Value::as_str) {
                Some(x) if x.eq_ignore_ascii_case("a") => e.a.push(end),
                Some(x) if x.eq_ignore_ascii_case("b") => e.b.push(end),
                _ => {}
            }
        }
        e.a.sort();
        e.b.sort();
        let ty = c.get("cable_type");
        let n = |k: &str| ty.and_then(|t| t.get(k)).and_then(Value::as_u64);
        if let Some(n) = n("total_lanes") {
            e.lanes = u32::try_from(n).unwrap_or(1);
        }
        e.breakout = n("b_connectors") > n("a_connectors");
    } else if c.get("termination_a_id").is_some() {
        for (side, out) in [("a", &mut e.a), ("b", &mut e.b)] {
            let ty = c
                .get(format!("termination_{side}_type"))
                .and_then(Value::as_str);
            let id = c.get(format!("termination_{side}_id")).and_then(id_of);
            if id.is_some() {
                out.push((1, iface(ty, id)));
            }
        }
    } else {
        for (side, out) in [("a_terminations", &mut e.a), ("b_terminations", &mut e.b)] {
            for (k, t) in c
                .get(side)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let ty = t.get("object_type").and_then(Value::as_str);
                let id = t.get("object_id").and_then(id_of);
                out.push((u32::try_from(k + 1).unwrap_or(u32::MAX), iface(ty, id)));
            }
        }
        let profile = c
            .get("profile")
            .map(|p| p.get("value").unwrap_or(p))
            .and_then(Value::as_str)
            .unwrap_or("");
        e.lanes = profile_lanes(profile).unwrap_or(1);
        e.breakout = profile.starts_with("breakout-");
    }
    e
}

/// NetBox's cable profile for a cable from a broken-out cage of `lanes`
/// lanes (`CableProfileChoices` in `netbox/dcim/choices.py`, v4.6.8, new
/// in 4.5): a breakout cable is `breakout-1c<L>p-<L>c1p` (one connector of
/// L positions on A, L connectors of one position on B, lane i to B
/// connector i+1: `Breakout1C2Px2C1PCableProfile` and its kin in
/// `netbox/dcim/cable_profiles.py`), a straight one `single-1c<L>p`.
pub fn netbox_profile(lanes: u32, straight: bool) -> String {
    if straight {
        format!("single-1c{lanes}p")
    } else {
        format!("breakout-1c{lanes}p-{lanes}c1p")
    }
}

/// The lanes of a NetBox cable profile: those [`netbox_profile`] writes
/// and the other `single-1c<N>p` and `breakout-1c<N>p-<N>c1p` (not the
/// trunks or the shuffle, which no plan makes).
pub fn profile_lanes(profile: &str) -> Option<u32> {
    if let Some(n) = profile
        .strip_prefix("single-1c")
        .and_then(|r| r.strip_suffix('p'))
    {
        return n.parse().ok();
    }
    let (a, b) = profile.strip_prefix("breakout-1c")?.split_once("p-")?;
    (b.strip_suffix("c1p")? == a).then(|| a.parse().ok())?
}

/// The Nautobot cable type of a cable from a broken-out cage, as
/// (name, A connectors, B connectors, lanes): a breakout cable `1x<L>
/// breakout` (one trunk connector, L legs: Nautobot 3.2's `CableType`,
/// which wants the trunk on A, `nautobot/dcim/models/cables.py`), a
/// straight one `<L>-lane straight` (one connector each end, L lanes).
pub fn cable_type(lanes: u32, straight: bool) -> (String, u32, u32, u32) {
    if straight {
        (format!("{lanes}-lane straight"), 1, 1, lanes)
    } else {
        (format!("1x{lanes} breakout"), 1, lanes, lanes)
    }
}

/// The GraphQL fields of an object's tags.
const TAGS: &str = "tags { id name }";

/// The GraphQL fields of where a device stands (Nautobot 3.2.7's
/// `Device.rack`, `position`, `face`, `nautobot/dcim/models/devices.py`).
const PLACE: &str = "rack { id name } position face device_type { model }";

impl State {
    /// Notes an object read in a list ([`State::listed`]).
    fn note(&mut self, kind: &'static str, name: &str, v: &Value) {
        if let Some(id) = id_of(v) {
            self.listed.push(Listed {
                kind,
                id,
                name: name.to_string(),
                url: v.get("url").and_then(Value::as_str).map(str::to_string),
            });
        }
    }

    /// The `last_updated` of an object of a push's `kind` as read, by id
    /// (ids are unique per kind only, on NetBox).
    pub fn last_updated(&self, kind: &str, id: &str) -> Option<String> {
        fn of<'a>(mut m: impl Iterator<Item = &'a Value>, id: &str) -> Option<String> {
            m.find(|v| id_of(v).as_deref() == Some(id))
                .and_then(|v| v.get("last_updated"))
                .and_then(Value::as_str)
                .map(str::to_string)
        }
        match kind {
            "interface" => of(self.interfaces.values(), id),
            "device" => of(self.devices.values(), id),
            "cable" => of(self.cables.values(), id),
            "vlan" => of(self.vlans.values(), id),
            "ip-address" => of(self.addresses.values(), id),
            "mac-address" => of(self.macs.values().flatten(), id),
            _ => None,
        }
    }

    /// Reads the objects the desired state names: from Nautobot in one
    /// GraphQL query, from NetBox through its REST lists. With a
    /// `location` (Nautobot's location name, NetBox's site slug) only the
    /// devices standing there are read: device names are unique per
    /// location on both, so two fabrics may reuse server names.
    pub async fn read(client: &Client, want: &Desired, location: Option<&str>) -> Result<State> {
        match client.flavor() {
            Flavor::Nautobot => State::read_graphql(client, want, location).await,
            Flavor::Netbox => State::read_rest(client, want, location).await,
        }
    }

    /// Nautobot: one GraphQL query for the tag, the devices with their
    /// interfaces and cables, the VLANs, prefixes and addresses (and the
    /// interfaces each address is assigned to), reshaped into the REST
    /// objects [`diff`] reads. A list the plan does not need is left out
    /// of the query (an empty filter would match every object).
    async fn read_graphql(
        client: &Client,
        want: &Desired,
        location: Option<&str>,
    ) -> Result<State> {
        let names: BTreeSet<&String> = want.switches.keys().chain(&want.servers).collect();
        let addresses: Vec<&String> = want.addresses.iter().map(|a| &a.0).collect();
        let vlans: Vec<&String> = want.vlans.values().collect();
        let mut vars = serde_json::Map::new();
        let mut params = vec!["$tag: [String]".to_string()];
        let mut fields =
            vec!["tags(name: $tag) { id name content_types { app_label model } }".to_string()];
        vars.insert("tag".to_string(), json!([want.tag]));
        let mut device_filter = "devices(name".to_string();
        if let Some(l) = location {
            params.push("$location: [String]".to_string());
            vars.insert("location".to_string(), json!([l]));
            device_filter = "devices(location: $location, name".to_string();
        }
        let mut wanted = |var: &str, filter: &str, values: Value, body: String| {
            if values.as_array().is_some_and(|a| !a.is_empty()) {
                params.push(format!("${var}: [String]"));
                fields.push(format!("{var}: {filter}: ${var}) {{ {body} }}"));
                vars.insert(var.to_string(), values);
            }
        };
        wanted(
            "devices",
            &device_filter,
            json!(names),
            format!(
                "id name _custom_field_data {PLACE} interfaces {{ id name mode untagged_vlan {{ id }} tagged_vlans {{ id }} \
                 {TAGS} cable {{ id label {TAGS} terminations {{ cable_end connector interface {{ id }} }} \
                 cable_type {{ name a_connectors b_connectors total_lanes }} }} }}"
            ),
        );
        let types: BTreeSet<String> = want
            .cables
            .iter()
            .filter_map(|c| c.lanes.as_ref())
            .map(|l| cable_type(l.lanes, l.straight()).0)
            .collect();
        wanted(
            "cable_types",
            "cable_types(name",
            json!(types),
            format!("id name a_connectors b_connectors total_lanes {TAGS}"),
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
            json!(wanted_prefixes(want)),
            format!("id prefix {TAGS}"),
        );
        wanted(
            "addresses",
            "ip_addresses(address",
            json!(addresses),
            format!("id address {TAGS} interfaces {{ id }}"),
        );
        let rack_filter = if location.is_some() {
            "racks(location: $location, name"
        } else {
            "racks(name"
        };
        wanted(
            "racks",
            rack_filter,
            json!(want.racks.keys().collect::<Vec<_>>()),
            format!("id name u_height status {{ name }} {TAGS} devices {{ id name {PLACE} }}"),
        );
        wanted(
            "device_types",
            "device_types(model",
            json!(if want.places.is_empty() {
                BTreeSet::new()
            } else {
                want.switches.values().collect::<BTreeSet<_>>()
            }),
            "id model u_height".to_string(),
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
                    st.note("interface", &format!("{dev} {n}"), &i);
                    st.interfaces
                        .insert((dev.to_string(), n.to_string()), i.clone());
                }
            }
            let mut d = with_url(d, "/api/dcim/devices/");
            if let Some(o) = d.as_object_mut() {
                o.remove("interfaces");
                let cf = o.remove("_custom_field_data").unwrap_or(Value::Null);
                o.insert("custom_fields".to_string(), cf);
            }
            st.note("device", dev, &d);
            st.devices.insert(dev.to_string(), d);
        }
        for v in list_of(&data, "vlans") {
            if let Some(n) = v.get("name").and_then(Value::as_str) {
                let v = with_url(v, "/api/ipam/vlans/");
                st.note("vlan", n, &v);
                st.vlans.insert(n.to_string(), v);
            }
        }
        for t in list_of(&data, "cable_types") {
            if let Some(n) = t.get("name").and_then(Value::as_str) {
                let t = with_url(t, "/api/dcim/cable-types/");
                st.note("cable-type", n, &t);
                st.cable_types.insert(n.to_string(), t);
            }
        }
        for p in list_of(&data, "prefixes") {
            if let Some(n) = p.get("prefix").and_then(Value::as_str) {
                let p = with_url(p, "/api/ipam/prefixes/");
                st.note("prefix", n, &p);
                st.prefixes.insert(n.to_string(), p);
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
            let a = with_url(a, "/api/ipam/ip-addresses/");
            st.note("ip-address", n, &a);
            st.addresses.insert(n.to_string(), a);
        }
        for r in list_of(&data, "racks") {
            let r = with_url(r, "/api/dcim/racks/");
            for d in r
                .get("devices")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut d = with_url(d, "/api/dcim/devices/");
                face_value(&mut d);
                if d.get("position").is_some_and(|p| !p.is_null()) {
                    st.occupants.push(d);
                }
            }
            st.add_rack(r);
        }
        for d in st.devices.values_mut() {
            face_value(d);
        }
        let mut models: BTreeSet<String> = want.switches.values().cloned().collect();
        models.extend(st.occupant_models());
        for t in list_of(&data, "device_types") {
            if let Some(m) = t.get("model").and_then(Value::as_str) {
                st.device_types
                    .insert(m.to_string(), with_url(t, "/api/dcim/device-types/"));
            }
        }
        // The occupants' own types (a second query: they are known only
        // now); read only when some are not among the switches'.
        let more: Vec<&String> = models
            .iter()
            .filter(|m| !st.device_types.contains_key(*m))
            .collect();
        if !more.is_empty() && !st.occupants.is_empty() {
            let data = client
                .graphql(
                    "query ($models: [String]) { device_types(model: $models) { id model u_height } }",
                    json!({"models": more}),
                    "reading the device types in the plan's racks",
                )
                .await?;
            for t in list_of(&data, "device_types") {
                if let Some(m) = t.get("model").and_then(Value::as_str) {
                    st.device_types
                        .insert(m.to_string(), with_url(t, "/api/dcim/device-types/"));
                }
            }
        }
        st.custom_fields = read_custom_fields(client, want, "key").await?;
        st.note_tag_fields_cables();
        Ok(st)
    }

    /// NetBox: the REST lists, filtered by the names the plan uses
    /// (`netbox/dcim/filtersets.py`, `netbox/ipam/filtersets.py`, v4.6.8:
    /// devices and VLANs by `name`, interfaces by `device` name, cables
    /// by `id`, prefixes by `prefix`, addresses by `address`, MAC
    /// addresses by `mac_address`). An address's interface is its
    /// `assigned_object` (NetBox has no assignment object); MAC addresses
    /// are objects of their own since NetBox 4.2.
    async fn read_rest(client: &Client, want: &Desired, location: Option<&str>) -> Result<State> {
        let site = location
            .map(|l| format!("&site={}", query_value(l)))
            .unwrap_or_default();
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
                .list(
                    "/api/dcim/devices/",
                    &format!("{q}{site}"),
                    "reading the devices",
                )
                .await?
            {
                if let (Some(n), Some(id)) = (d.get("name").and_then(Value::as_str), id_of(&d)) {
                    id_name.insert(id, n.to_string());
                    st.note("device", n, &d);
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
                .list(
                    "/api/dcim/interfaces/",
                    &format!("{q}{site}"),
                    "reading the interfaces",
                )
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
                    st.note("interface", &format!("{dev} {n}"), &i);
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
                    st.note("vlan", n, &v);
                    st.vlans.insert(n.to_string(), v);
                }
            }
        }
        for q in query_chunks(wanted_prefixes(want).into_iter(), "prefix", 50) {
            for p in client
                .list("/api/ipam/prefixes/", &q, "reading the prefixes")
                .await?
            {
                if let Some(n) = p.get("prefix").and_then(Value::as_str) {
                    st.note("prefix", n, &p);
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
                st.note("ip-address", n, &a);
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
                    st.note("mac-address", n, &m);
                    st.macs.entry(mac_key(n)).or_default().push(m);
                }
            }
        }
        st.read_racks_rest(client, want, &site).await?;
        st.custom_fields = read_custom_fields(client, want, "name").await?;
        st.note_tag_fields_cables();
        Ok(st)
    }

    /// NetBox: the plan's racks at the site (`RackFilterSet`: `name`, and
    /// `site` by slug, `netbox/dcim/filtersets.py` v4.6.8), the devices
    /// standing in them (`DeviceFilterSet.rack_id`), and the device types
    /// of those and of the plan's switches by `model`: a device's brief
    /// `device_type` has no `u_height` (`DeviceTypeSerializer`'s
    /// `brief_fields`, `netbox/dcim/api/serializers_/devicetypes.py`).
    async fn read_racks_rest(&mut self, client: &Client, want: &Desired, site: &str) -> Result<()> {
        let names: Vec<&String> = want.racks.keys().collect();
        let mut ids = Vec::new();
        for q in query_chunks(names.into_iter(), "name", 50) {
            for r in client
                .list(
                    "/api/dcim/racks/",
                    &format!("{q}{site}"),
                    "reading the racks",
                )
                .await?
            {
                ids.extend(id_of(&r));
                self.add_rack(r);
            }
        }
        for q in query_chunks(ids.iter(), "rack_id", 50) {
            for d in client
                .list("/api/dcim/devices/", &q, "reading the devices in the racks")
                .await?
            {
                if d.get("position").is_some_and(|p| !p.is_null()) {
                    let mut d = d;
                    face_value(&mut d);
                    self.occupants.push(d);
                }
            }
        }
        for d in self.devices.values_mut() {
            face_value(d);
        }
        if want.places.is_empty() {
            return Ok(());
        }
        let mut models: BTreeSet<String> = want.switches.values().cloned().collect();
        models.extend(self.occupant_models());
        for q in query_chunks(models.iter(), "model", 50) {
            for t in client
                .list("/api/dcim/device-types/", &q, "reading the device types")
                .await?
            {
                if let Some(m) = t.get("model").and_then(Value::as_str) {
                    self.device_types.insert(m.to_string(), t);
                }
            }
        }
        Ok(())
    }

    /// Keeps a rack read by name; a second of the same name is a twin.
    fn add_rack(&mut self, r: Value) {
        let Some(n) = r.get("name").and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        if let Some(first) = self.racks.get(&n) {
            for x in [first, &r] {
                let u = x.get("url").and_then(Value::as_str).unwrap_or_default();
                self.rack_twins.push((n.clone(), u.to_string()));
            }
        }
        self.note("rack", &n, &r);
        self.racks.insert(n, r);
    }

    /// Notes the owner tag, the custom fields and the cables read (a
    /// cable once: Nautobot's answer gives it under both its ends).
    fn note_tag_fields_cables(&mut self) {
        let mut read: Vec<(&'static str, String, Value)> = Vec::new();
        if let Some(t) = &self.tag {
            let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
            read.push(("tag", name.to_string(), t.clone()));
        }
        for (k, f) in &self.custom_fields {
            read.push(("custom-field", k.clone(), f.clone()));
        }
        for (id, c) in &self.cables {
            read.push(("cable", format!("cable {id}"), c.clone()));
        }
        for (kind, name, v) in read {
            self.note(kind, &name, &v);
        }
    }

    /// The models of the devices in the plan's racks.
    fn occupant_models(&self) -> BTreeSet<String> {
        self.occupants
            .iter()
            .filter_map(|d| d.get("device_type")?.get("model")?.as_str())
            .map(str::to_string)
            .collect()
    }
}

/// A device's `face` as a bare lower-case value: NetBox's `{"value":
/// "front", ...}`, Nautobot GraphQL's enum name (`FRONT`).
fn face_value(d: &mut Value) {
    if let Some(o) = d.as_object_mut() {
        let f = o.get("face").cloned().unwrap_or(Value::Null);
        let f = f.get("value").cloned().unwrap_or(f);
        o.insert("face".to_string(), enum_value(&f));
    }
}

/// The definitions of the ASN custom fields, by `key` (Nautobot: its
/// custom-field filter set has no `key` filter, `nautobot/extras/filters.py`
/// 3.2.7, so the list is read whole; it holds a few dozen fields) or `name`
/// (NetBox, `netbox/extras/filtersets.py` v4.6.8 filters by `name`). Read
/// only when the plan has ASNs.
async fn read_custom_fields(
    client: &Client,
    want: &Desired,
    key: &str,
) -> Result<BTreeMap<String, Value>> {
    if want.asns.is_empty() {
        return Ok(BTreeMap::new());
    }
    let query = if key == "name" {
        ASN_FIELDS
            .iter()
            .map(|(k, _)| format!("name={k}"))
            .collect::<Vec<_>>()
            .join("&")
    } else {
        String::new()
    };
    let mut out = BTreeMap::new();
    for f in client
        .list(
            "/api/extras/custom-fields/",
            &query,
            "reading the custom fields",
        )
        .await?
    {
        if let Some(k) = f.get(key).and_then(Value::as_str)
            && ASN_FIELDS.iter().any(|(n, _)| *n == k)
        {
            out.insert(k.to_string(), f);
        }
    }
    Ok(out)
}

/// The interface id a NetBox IP or MAC address is assigned to
/// (`assigned_object_type` `dcim.interface`).
pub(super) fn assigned_interface(v: &Value) -> Option<String> {
    (v.get("assigned_object_type").and_then(Value::as_str) == Some("dcim.interface"))
        .then(|| v.get("assigned_object_id").and_then(id_of))
        .flatten()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{cable_ends, cable_type, netbox_profile, profile_lanes};

    #[test]
    fn profiles_and_cable_types_name_their_lanes() {
        for (lanes, straight, profile) in [
            (2, false, "breakout-1c2p-2c1p"),
            (4, false, "breakout-1c4p-4c1p"),
            (8, false, "breakout-1c8p-8c1p"),
            (2, true, "single-1c2p"),
            (8, true, "single-1c8p"),
        ] {
            assert_eq!(netbox_profile(lanes, straight), profile);
            assert_eq!(profile_lanes(profile), Some(lanes));
        }
        for other in [
            "",
            "trunk-2c4p",
            "breakout-2c4p-8c1p-shuffle",
            "breakout-1c2p-4c1p",
        ] {
            assert_eq!(profile_lanes(other), None, "{other}");
        }
        assert_eq!(cable_type(4, false), ("1x4 breakout".to_string(), 1, 4, 4));
        assert_eq!(
            cable_type(2, true),
            ("2-lane straight".to_string(), 1, 1, 2)
        );
    }

    #[test]
    fn both_systems_cable_ends_read_alike() {
        // NetBox: connectors by place in the lists, lanes from the profile.
        let nb = cable_ends(&json!({
            "profile": {"value": "breakout-1c2p-2c1p", "label": "1C2P:2C1P breakout"},
            "a_terminations": [{"object_type": "dcim.interface", "object_id": 7}],
            "b_terminations": [{"object_type": "dcim.interface", "object_id": 8},
                               {"object_type": "dcim.frontport", "object_id": 9}]}));
        // Nautobot: terminations with their end and connector, the type's
        // lanes; a leg left off is no termination.
        let nau = cable_ends(&json!({
            "cable_type": {"name": "1x2 breakout", "a_connectors": 1, "b_connectors": 2, "total_lanes": 2},
            "terminations": [
                {"cable_end": "B", "connector": 2, "interface": null},
                {"cable_end": "A", "connector": 1, "interface": {"id": "7"}},
                {"cable_end": "B", "connector": 1, "interface": {"id": "8"}}]}));
        for e in [&nb, &nau] {
            assert_eq!(e.a, vec![(1, Some("7".to_string()))]);
            assert_eq!(e.b, vec![(1, Some("8".to_string())), (2, None)]);
            assert_eq!((e.lanes, e.breakout), (2, true));
        }
        let plain = cable_ends(
            &json!({"termination_a_type": "dcim.interface", "termination_a_id": "1",
                                       "termination_b_type": "circuits.circuittermination",
                                       "termination_b_id": "2"}),
        );
        assert_eq!(plain.b, vec![(1, None)]);
        assert_eq!((plain.lanes, plain.breakout), (1, false));
    }
}
