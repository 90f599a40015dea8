//! The diff's switch ports: created, set to access with their half's
//! VLAN, or routed; taken over when blank; a conflict otherwise.

use serde_json::{Value, json};

use super::*;

pub(super) fn ports(cx: &Cx, d: &mut Diff) {
    let want = cx.want;
    let st = cx.st;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    let mine = |v: &Value| cx.mine(v);
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
                    d,
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
                        d,
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
                    add(d, "update", "interface", object, detail, url(i), 2, body);
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
                        d,
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
                    d,
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
}
