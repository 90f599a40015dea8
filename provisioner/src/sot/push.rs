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

use planner::plan::Plan;
use serde::Serialize;
use serde_json::{Value, json};

use super::client::{Client, Flavor};
use super::error::{Result, SotError};
use super::import::{id_json, id_of};

pub use super::desired::{
    Desired, PushOptions, WantCable, WantPort, cable_label, desired, interface_type, mac_key,
    owner_tag,
};
pub use super::state::State;
use super::state::assigned_interface;

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
