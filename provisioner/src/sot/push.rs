//! Push: the plan's switches, VLANs, switch-port modes and VLANs, planned
//! cables, prefixes and NIC addresses into Nautobot, every object the push
//! creates tagged `topo-plan-<plan>` (the plan owns it).
//!
//! [`desired`] says what the plan wants (pure, `desired.rs`);
//! [`State::read`] reads what the source of truth holds (`state.rs`); [`diff`] compares them (pure): creates,
//! updates of owned (or blank, unclaimed) objects, and conflicts with
//! objects the plan does not own, which are never written. [`push`]
//! applies the diff phase by phase (an object's dependencies first),
//! reading the state again after each phase, with list POSTs and PATCHes
//! (bulk writes); nothing is written when there is a conflict.

use std::collections::BTreeMap;

use futures::{StreamExt as _, TryStreamExt as _};
use planner::plan::Plan;
use serde::Serialize;
use serde_json::{Value, json};

use super::client::id_of;
use super::client::{Client, Flavor};
use super::error::{Result, SotError};
use super::import::id_json;

pub use super::desired::{
    ASN_FIELDS, Desired, PushOptions, WantCable, WantLanes, WantPort, cable_label, desired,
    interface_type, lanes_label, mac_key, owner_tag,
};
pub use super::state::{CableEnds, State, cable_ends, cable_type, netbox_profile};
use super::state::{assigned_interface, custom_field};

mod racks;

/// One difference between the plan and the source of truth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `create`, `update` or `conflict`.
    pub action: &'static str,
    /// `tag`, `custom-field`, `vlan`, `device`, `interface`, `cable`,
    /// `cable-type`, `prefix`, `ip-address`, `ip-assignment`,
    /// `mac-address`.
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
    /// Devices the plan does not own (servers, a switch not tagged as the
    /// plan's) that the source of truth stands elsewhere than the plan:
    /// reported, never moved (action `differs`).
    pub not_moved: Vec<Change>,
}

/// Files a change of the diff by its action: a conflict, a device not
/// moved (`differs`), else a write. The arguments are [`Change`]'s fields,
/// in order.
#[allow(clippy::too_many_arguments)]
fn add(
    d: &mut Diff,
    action: &'static str,
    kind: &'static str,
    object: String,
    detail: String,
    url: Option<String>,
    phase: u8,
    body: Value,
) {
    let c = Change {
        action,
        kind,
        object,
        detail,
        url,
        phase,
        body,
    };
    match action {
        "conflict" => d.conflicts.push(c),
        "differs" => d.not_moved.push(c),
        _ => d.changes.push(c),
    }
}

fn has_tag(v: &Value, tag_id: Option<&str>, tag: &str) -> bool {
    v.get("tags").and_then(Value::as_array).is_some_and(|tags| {
        tags.iter().any(|t| {
            id_of(t).as_deref() == tag_id && tag_id.is_some()
                || t.get("name").and_then(Value::as_str) == Some(tag)
        })
    })
}

/// An interface's mode (`""` for none), untagged VLAN id and whether it
/// has tagged VLANs.
fn port_mode(i: &Value) -> (&str, Option<String>, bool) {
    let mode = i
        .get("mode")
        .and_then(|m| m.get("value").or(Some(m)))
        .and_then(Value::as_str)
        .unwrap_or("");
    let tagged = i
        .get("tagged_vlans")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    (mode, i.get("untagged_vlan").and_then(id_of), tagged)
}

/// A choice as either system shows it: `{"value": "integer", "label":
/// ...}` or the bare value.
fn enum_text(v: Option<&Value>) -> &str {
    v.map(|t| t.get("value").unwrap_or(t))
        .and_then(Value::as_str)
        .unwrap_or("")
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

/// The object types a tag may be applied to, as `app.model`: NetBox's
/// `object_types`, Nautobot's `content_types` (REST strings, or GraphQL's
/// `{app_label, model}`).
fn tag_types(t: &Value) -> Vec<String> {
    let list = t.get("object_types").or_else(|| t.get("content_types"));
    (list.and_then(Value::as_array).into_iter().flatten())
        .filter_map(|x| match x {
            Value::String(s) => Some(s.clone()),
            o => Some(format!(
                "{}.{}",
                o.get("app_label")?.as_str()?,
                o.get("model")?.as_str()?
            )),
        })
        .collect()
}

/// Whether a tag may be applied to objects of `ty`; on NetBox a tag
/// listing no types may be applied to any
/// (`netbox/extras/models/tags.py`, v4.6.8).
fn tag_allows(t: &Value, ty: &str, netbox: bool) -> bool {
    let types = tag_types(t);
    types.iter().any(|x| x == ty) || (netbox && types.is_empty())
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
        "cable-type" => "/api/dcim/cable-types/",
        "prefix" => "/api/ipam/prefixes/",
        "ip-address" => "/api/ipam/ip-addresses/",
        "mac-address" => "/api/dcim/mac-addresses/",
        "custom-field" => "/api/extras/custom-fields/",
        "rack" => "/api/dcim/racks/",
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
    refused.extend(want.problems.iter().cloned());
    let tag = id_json(tag_id.clone());
    let mine = |v: &Value| has_tag(v, tag_id.as_deref(), &want.tag);
    match &st.tag {
        // A tag of an earlier push may not yet be allowed on racks (both
        // systems refuse a tag on a type it does not list: Nautobot's
        // `content_types`, NetBox's `object_types`, where none means any).
        Some(t) if !want.racks.is_empty() && !tag_allows(t, "dcim.rack", netbox) => {
            let mut types = tag_types(t);
            types.push("dcim.rack".to_string());
            add(
                &mut d,
                "update",
                "tag",
                want.tag.clone(),
                "allowed on racks too".to_string(),
                url(t),
                0,
                json!({"id": id_json(id_of(t)), if netbox { "object_types" } else { "content_types" }: types}),
            );
        }
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
                    "dcim.device", "dcim.interface", "dcim.cable", "dcim.macaddress", "dcim.rack",
                    "ipam.vlan", "ipam.prefix", "ipam.ipaddress"
                ]})
            } else {
                json!({"name": want.tag, "content_types": [
                    "dcim.device", "dcim.interface", "dcim.cable", "dcim.rack", "ipam.vlan", "ipam.prefix",
                    "ipam.ipaddress"
                ]})
            },
        ),
    }
    // The ASN custom fields (a BGP plan's): catalogue objects like the
    // cable types, untagged, used whoever made them when their type is
    // right. Nautobot 3.2.7 drops unknown keys of `custom_fields` without a
    // word (`CustomFieldsDataField.to_internal_value`,
    // `nautobot/extras/api/customfields.py`), so they come first.
    if !want.asns.is_empty() {
        for (key, ty) in ASN_FIELDS {
            match st.custom_fields.get(key) {
                Some(f) if enum_text(f.get("type")) == ty => d.unchanged += 1,
                Some(f) => add(
                    &mut d,
                    "conflict",
                    "custom-field",
                    key.to_string(),
                    format!(
                        "is of type {:?}, the plan's ASNs want {ty}; change its type or delete it",
                        enum_text(f.get("type"))
                    ),
                    url(f),
                    0,
                    Value::Null,
                ),
                None => add(
                    &mut d,
                    "create",
                    "custom-field",
                    key.to_string(),
                    format!("{ty} on devices, the switches' BGP ASNs"),
                    None,
                    0,
                    if netbox {
                        // `netbox/extras/api/serializers_/customfields.py`,
                        // v4.6.8: `name`, `type`, `object_types`.
                        json!({"name": key, "type": ty, "object_types": ["dcim.device"],
                               "description": "BGP ASN of a switch (docs/source-of-truth.md)"})
                    } else {
                        // `nautobot/extras/api/serializers.py` 3.2.7:
                        // `key`, `label`, `type`, `content_types`.
                        json!({"key": key, "label": key, "type": ty, "content_types": ["dcim.device"],
                               "description": "BGP ASN of a switch (docs/source-of-truth.md)"})
                    },
                ),
            }
        }
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
        let asn = want.asns.get(sw).map(|f| {
            f.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<serde_json::Map<_, _>>()
        });
        if let Some(dev) = st.devices.get(sw) {
            match &asn {
                Some(f) if f.iter().any(|(k, v)| custom_field(dev, k) != v) => {
                    let unset = f.keys().all(|k| custom_field(dev, k).is_null());
                    let shown = |m: &dyn Fn(&str) -> Value| {
                        f.keys()
                            .map(|k| format!("{k} {}", m(k)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let have = shown(&|k| custom_field(dev, k).clone());
                    let wanted = shown(&|k| f[k].clone());
                    if mine(dev) || unset {
                        add(
                            &mut d,
                            "update",
                            "device",
                            sw.clone(),
                            format!("{have} -> {wanted}"),
                            url(dev),
                            1,
                            json!({"id": id_json(id_of(dev)), "custom_fields": f}),
                        );
                    } else {
                        add(
                            &mut d,
                            "conflict",
                            "device",
                            sw.clone(),
                            format!(
                                "holds {have}, not tagged {}: the plan's BGP wants {wanted}; clear the fields or tag the device {} to hand them to the plan",
                                want.tag, want.tag
                            ),
                            url(dev),
                            1,
                            Value::Null,
                        );
                    }
                }
                _ => d.unchanged += 1,
            }
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
            {
                let mut body = if netbox {
                    // A NetBox device stands at a site, named by its slug
                    // like the import's `site=` filter; the role by slug too.
                    json!({"name": sw, "device_type": {"model": model}, "role": {"slug": opts.switch_role},
                           "site": {"slug": loc}, "status": status(flavor, "Active"), "tags": [tag]})
                } else {
                    json!({"name": sw, "device_type": {"model": model}, "role": {"name": opts.switch_role},
                           "location": {"name": loc}, "status": {"name": "Active"}, "tags": [tag]})
                };
                if let Some(f) = asn {
                    body["custom_fields"] = Value::Object(f);
                }
                body
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
    // The routed links' prefixes: the link pool as their parent (a
    // container), a /31 per cable under it (a network, the parent
    // Nautobot 3.2.7 requires of an IP address: `IPAddress.clean`,
    // `nautobot/ipam/models.py`). An existing prefix is used whoever made
    // it: a prefix claims no interface.
    let links = want.link_parent.iter().map(|p| (p, 1, "container"));
    for (prefix, phase, ty) in links.chain(want.link_prefixes.iter().map(|p| (p, 2, "network"))) {
        if st.prefixes.contains_key(prefix) {
            d.unchanged += 1;
            continue;
        }
        add(
            &mut d,
            "create",
            "prefix",
            prefix.clone(),
            if ty == "container" {
                "parent of the plan's routed /31s (the link pool)".to_string()
            } else {
                "a routed inter-switch cable".to_string()
            },
            None,
            phase,
            if netbox {
                json!({"prefix": prefix, "status": status(flavor, "Active"), "tags": [tag]})
            } else {
                json!({"prefix": prefix, "status": {"name": "Active"}, "namespace": {"name": "Global"},
                       "type": ty, "tags": [tag]})
            },
        );
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
            Some(i) if p.routed => {
                let (mode, untagged, tagged) = port_mode(i);
                let blank = mode.is_empty() && untagged.is_none() && !tagged;
                if blank && mine(i) {
                    d.unchanged += 1;
                } else if !mine(i) && !blank {
                    add(
                        &mut d,
                        "conflict",
                        "interface",
                        object,
                        format!(
                            "mode {mode:?} with VLANs, not tagged {}: the plan wants a routed port (no mode, its /31); clear it or tag it {} to hand it to the plan",
                            want.tag, want.tag
                        ),
                        url(i),
                        2,
                        Value::Null,
                    );
                } else {
                    let mut tags = tag_ids(i);
                    let mut body = json!({"id": id_json(id_of(i))});
                    let detail = if blank {
                        tags.push(tag.clone());
                        "routed port taken over (tagged)".to_string()
                    } else {
                        body["mode"] = json!("");
                        body["untagged_vlan"] = Value::Null;
                        body["tagged_vlans"] = json!([]);
                        format!("mode {mode:?} -> routed (no mode, no VLAN)")
                    };
                    body["tags"] = Value::Array(tags);
                    add(
                        &mut d,
                        "update",
                        "interface",
                        object,
                        detail,
                        url(i),
                        2,
                        body,
                    );
                }
            }
            Some(i) => {
                let Some(vid) = p.vlan else {
                    d.unchanged += 1;
                    continue;
                };
                let (mode, untagged, tagged) = port_mode(i);
                let want_vlan = vlan_id(vid);
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
    // Nautobot's cable types of the cables from broken-out cages: shared
    // catalogue objects like device types, used whoever made them when
    // their connectors and lanes are right.
    if !netbox {
        let types: BTreeMap<String, (u32, u32, u32)> = want
            .cables
            .iter()
            .filter_map(|c| c.lanes.as_ref())
            .map(|l| {
                let (n, a, b, lanes) = cable_type(l.lanes, l.straight());
                (n, (a, b, lanes))
            })
            .collect();
        for (name, (a, b, lanes)) in types {
            let have = st.cable_types.get(&name);
            let shape = |t: &Value| {
                ["a_connectors", "b_connectors", "total_lanes"]
                    .map(|k| t.get(k).and_then(Value::as_u64).unwrap_or(0))
            };
            match have {
                Some(t) if shape(t) == [a, b, lanes].map(u64::from) => d.unchanged += 1,
                Some(t) => add(
                    &mut d,
                    "conflict",
                    "cable-type",
                    name.clone(),
                    format!(
                        "has {:?} (A connectors, B connectors, lanes), the plan's cables want {:?}; rename that cable type",
                        shape(t),
                        [a, b, lanes]
                    ),
                    url(t),
                    1,
                    Value::Null,
                ),
                None => add(
                    &mut d,
                    "create",
                    "cable-type",
                    name.clone(),
                    format!("{a} A connector(s), {b} B connector(s), {lanes} lanes"),
                    None,
                    1,
                    // Untagged, like the device types: a catalogue
                    // object other plans use too.
                    json!({"name": name, "a_connectors": a, "b_connectors": b, "total_lanes": lanes,
                           "description": "a cable from a broken-out cage (docs/source-of-truth.md)"}),
                ),
            }
        }
    }
    // Cables: one per planned cable; an existing cable on either end is
    // as planned (owned, the same ends on the same connectors, the same
    // lanes), or a conflict.
    let iface_id = |k: &(String, String)| st.interfaces.get(k).and_then(id_of);
    let by_id: BTreeMap<String, &Value> = st
        .interfaces
        .values()
        .filter_map(|x| Some((id_of(x)?, x)))
        .collect();
    for c in &want.cables {
        let object = format!("{} {} - {} {}", c.a.0, c.a.1, c.b.0, c.b.1);
        let breakout = c.lanes.as_ref().is_some_and(|l| !l.straight());
        // The B end's connectors: a leg per lane, else the one peer.
        let b_ends: Vec<(u32, (String, String))> = match &c.lanes {
            Some(l) if !l.straight() => l
                .legs
                .iter()
                .map(|(lane, dev, i)| (lane + 1, (dev.clone(), i.clone())))
                .collect(),
            _ => vec![(1, c.b.clone())],
        };
        let missing: Vec<&(String, String)> = b_ends
            .iter()
            .map(|(_, e)| e)
            .filter(|e| {
                st.devices.contains_key(&e.0)
                    && !want.switches.contains_key(&e.0)
                    && iface_id(e).is_none()
            })
            .collect();
        if !missing.is_empty() {
            for e in missing {
                refused.push(format!(
                    "server {} has no interface {} ({}) for the cable from {} {}; add it (the NIC's name)",
                    e.0,
                    e.1,
                    st.devices.get(&e.0).and_then(url).unwrap_or_default(),
                    c.a.0,
                    c.a.1
                ));
            }
            continue;
        }
        if netbox
            && b_ends
                .iter()
                .enumerate()
                .any(|(k, (n, _))| *n as usize != k + 1)
        {
            refused.push(format!(
                "cable {} ({object}): NetBox numbers a profiled cable's B connectors by their place in b_terminations, so a cage whose lane {} is unused cannot be written; use its lanes from the first, or the CSV path",
                c.label,
                b_ends.iter().enumerate().find(|(k, (n, _))| *n as usize != k + 1).map_or(0, |(k, _)| k)
            ));
            continue;
        }
        let ia = iface_id(&c.a);
        let ibs: Vec<(u32, Option<String>)> =
            b_ends.iter().map(|(n, e)| (*n, iface_id(e))).collect();
        let lanes = c.lanes.as_ref().map_or(1, |l| l.lanes);
        let on = |i: &Option<String>| {
            i.as_ref()
                .and_then(|id| by_id.get(id))
                .and_then(|x| x.get("cable"))
                .and_then(id_of)
        };
        let on_ends: Vec<Option<String>> = std::iter::once(on(&ia))
            .chain(ibs.iter().map(|(_, i)| on(i)))
            .collect();
        let body = || {
            if netbox {
                // NetBox 4.x: lists of terminations per end
                // (`netbox/dcim/api/serializers_/cables.py`), in connector
                // order, with the profile of a cable from a cage.
                let t = |i: &Option<String>| json!({"object_type": "dcim.interface", "object_id": id_json(i.clone())});
                let mut b = json!({"a_terminations": [t(&ia)],
                       "b_terminations": ibs.iter().map(|(_, i)| t(i)).collect::<Vec<_>>(),
                       "status": status(flavor, "Planned"), "label": c.label, "tags": [tag]});
                if let Some(l) = &c.lanes {
                    b["profile"] = json!(netbox_profile(l.lanes, l.straight()));
                }
                b
            } else if let Some(l) = &c.lanes {
                // Nautobot 3.2: `terminations` keyed by end and connector
                // (`a1`, `b2`) and the cable type that numbers them
                // (its "Breakout Cables" guide, REST API).
                let mut t = serde_json::Map::new();
                t.insert(
                    "a1".to_string(),
                    json!({"object_type": "dcim.interface", "id": ia}),
                );
                for (n, i) in &ibs {
                    t.insert(
                        format!("b{n}"),
                        json!({"object_type": "dcim.interface", "id": i}),
                    );
                }
                json!({"cable_type": {"name": cable_type(l.lanes, l.straight()).0},
                       "terminations": t, "status": {"name": "Planned"}, "label": c.label, "tags": [tag]})
            } else {
                json!({"termination_a_type": "dcim.interface", "termination_a_id": ia,
                       "termination_b_type": "dcim.interface", "termination_b_id": ibs[0].1,
                       "status": {"name": "Planned"}, "label": c.label, "tags": [tag]})
            }
        };
        if on_ends.iter().all(Option::is_none) {
            let what = match &c.lanes {
                Some(l) if !l.straight() => format!(", {} legs", ibs.len()),
                Some(l) => format!(", {} lanes", l.lanes),
                None => String::new(),
            };
            add(
                &mut d,
                "create",
                "cable",
                object,
                format!("label {}, status Planned{what}", c.label),
                None,
                3,
                body(),
            );
            continue;
        }
        let one = on_ends[0]
            .clone()
            .filter(|x| on_ends.iter().all(|o| o.as_ref() == Some(x)));
        let cable = on_ends
            .iter()
            .flatten()
            .next()
            .and_then(|id| st.cables.get(id));
        let ends = cable.map(cable_ends).unwrap_or_default();
        let want_a = vec![(1, ia.clone())];
        let joined = one.is_some()
            && ((ends.a == want_a && ends.b == ibs)
                || (c.lanes.is_none() && ends.b == want_a && ends.a == ibs));
        let same = joined && ends.lanes.max(1) == lanes;
        let labelled =
            cable.and_then(|cv| cv.get("label")).and_then(Value::as_str) == Some(c.label.as_str());
        match cable {
            Some(cv) if same && mine(cv) => {
                if labelled {
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
            Some(cv) if same && labelled && tag_ids(cv).is_empty() => add(
                &mut d,
                "update",
                "cable",
                object,
                format!("tag {}", want.tag),
                url(cv),
                4,
                json!({"id": id_json(id_of(cv)), "tags": [tag]}),
            ),
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
                } else if joined {
                    format!(
                        "the cable joining these ports carries {} lane(s), the plan's {lanes}; set its {} or remove it",
                        ends.lanes,
                        if netbox { "profile" } else { "cable type" }
                    )
                } else if one.is_some() && breakout {
                    "a cable joins these ports on other connectors (legs swapped?); fix its terminations or remove it".to_string()
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
    // A switch's routed port the push creates has no id before phase 2: its
    // address's body gets it when the state is read again.
    for (addr, server, nic) in &want.addresses {
        let object = format!("{addr} on {server} {nic}");
        let iface = iface_id(&(server.clone(), nic.clone()));
        let planned = want.switches.contains_key(server)
            && want
                .ports
                .iter()
                .any(|p| &p.device == server && &p.name == nic);
        if iface.is_none() && !planned && (netbox || st.devices.contains_key(server)) {
            refused.push(format!(
                "{} {server} has no interface {nic} ({}) for the address {addr}; add it (the NIC's name)",
                if want.switches.contains_key(server) { "switch" } else { "server" },
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
    racks::diff(
        want,
        st,
        opts,
        flavor,
        tag_id.as_deref(),
        &mut d,
        &mut refused,
    );
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
    let mut st = State::read(client, &want, opts.location.as_deref()).await?;
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
        // Each update's object name, for a concurrent edit's message.
        let names: BTreeMap<(&str, String), &str> = now
            .iter()
            .filter_map(|c| Some(((c.kind, id_of(&c.body)?), c.object.as_str())))
            .collect();
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
            if action == "create" && bodies.iter().any(|b| b.get("terminations").is_some()) {
                // Nautobot 3.2.7 reads a cable's `terminations` (`a1`, `b2`)
                // from the request's own `initial_data` in
                // `CableSerializer.validate` (`nautobot/dcim/api/
                // serializers.py`), which a list POST does not give each
                // object: a bulk create drops them without a word. So
                // cables with lanes are created one request each.
                let n = bodies.len();
                let what = &what;
                futures::stream::iter(
                    bodies
                        .iter()
                        .map(|b| client.call(reqwest::Method::POST, endpoint(kind), Some(b), what)),
                )
                .buffered(client.concurrency().max(1))
                .try_collect::<Vec<Value>>()
                .await?;
                report.created += n;
                report.requests += n;
                continue;
            } else if action == "create" {
                client.create(endpoint(kind), &bodies, per, &what).await?;
                report.created += bodies.len();
            } else if client.flavor() == Flavor::Netbox {
                // NetBox 4.6+: one PATCH per object with If-Match, the
                // concurrent edit refused (`Client::update_if_match`).
                let items: Vec<(Value, Option<String>, String)> = bodies
                    .into_iter()
                    .map(|b| {
                        let id = id_of(&b).unwrap_or_default();
                        let seen = st.last_updated(kind, &id);
                        let name = names.get(&(kind, id)).map_or(kind, |n| n).to_string();
                        (b, seen, format!("{kind} {name}"))
                    })
                    .collect();
                report.updated += client
                    .update_if_match(endpoint(kind), &items, &what)
                    .await?;
                report.requests += 2 * items.len();
                continue;
            } else {
                client.update(endpoint(kind), &bodies, per, &what).await?;
                report.updated += bodies.len();
            }
            report.requests += bodies.len().div_ceil(per);
        }
        st = State::read(client, &want, opts.location.as_deref()).await?;
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
