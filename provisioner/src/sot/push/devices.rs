//! The diff's VLANs, switches (created, or their ASN custom fields set)
//! and servers (which must exist).

use serde_json::{Value, json};

use super::*;

pub(super) fn vlans_and_devices(cx: &Cx, d: &mut Diff, refused: &mut Vec<String>) {
    let want = cx.want;
    let st = cx.st;
    let opts = cx.opts;
    let flavor = cx.flavor;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    let mine = |v: &Value| cx.mine(v);
    for (vid, name) in &want.vlans {
        match st.vlans.get(name) {
            Some(v) if !mine(v) => add(
                d,
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
                d,
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
                d,
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
                            d,
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
                            d,
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
            d,
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
}
