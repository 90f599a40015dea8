//! The diff's catalogue phases: the owner tag and the ASN custom fields
//! (phase 0), and Nautobot's cable types (phase 1): shared objects the
//! plan's other objects name.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

pub(super) fn tag_and_fields(cx: &Cx, d: &mut Diff) {
    let want = cx.want;
    let st = cx.st;
    let netbox = cx.netbox;
    match &st.tag {
        // A tag of an earlier push may not yet be allowed on racks (both
        // systems refuse a tag on a type it does not list: Nautobot's
        // `content_types`, NetBox's `object_types`, where none means any).
        Some(t) if !want.racks.is_empty() && !tag_allows(t, "dcim.rack", netbox) => {
            let mut types = tag_types(t);
            types.push("dcim.rack".to_string());
            add(
                d,
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
            d,
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
                    d,
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
                    d,
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
}

pub(super) fn cable_types(cx: &Cx, d: &mut Diff) {
    let want = cx.want;
    let st = cx.st;
    let netbox = cx.netbox;
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
                    d,
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
                    d,
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
}
