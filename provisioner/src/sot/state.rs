//! What the source of truth holds of a plan's objects: read from
//! Nautobot in one GraphQL query, from NetBox through its REST lists.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::client::{Client, Flavor, enum_value, list_of};
use super::desired::{Desired, mac_key};
use super::error::Result;
use super::import::{id_of, query_chunks, query_value};

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
pub(super) fn assigned_interface(v: &Value) -> Option<String> {
    (v.get("assigned_object_type").and_then(Value::as_str) == Some("dcim.interface"))
        .then(|| v.get("assigned_object_id").and_then(id_of))
        .flatten()
}
