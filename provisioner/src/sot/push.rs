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
//! (bulk writes); nothing is written when there is a conflict, and no
//! phase writes an id its read does not vouch for (`push/ids.rs`).

use std::collections::BTreeMap;

use futures::{StreamExt as _, TryStreamExt as _};
use planner::plan::Plan;
use serde::Serialize;
use serde_json::{Value, json};

use super::client::id_of;
use super::client::{Client, Flavor};
use super::error::{Result, SotError};
use super::query::id_json;

pub use super::desired::{
    ASN_FIELDS, Desired, PushOptions, WantCable, WantLanes, WantPort, cable_label, desired,
    interface_type, lanes_label, mac_key, owner_tag,
};
pub use super::state::{CableEnds, State, cable_ends, cable_type, netbox_profile};
use super::state::{assigned_interface, custom_field};

mod addresses;
mod cables;
mod catalog;
mod devices;
mod ids;
mod ports;
mod racks;

/// What every phase of the diff reads.
struct Cx<'a> {
    want: &'a Desired,
    st: &'a State,
    opts: &'a PushOptions,
    flavor: Flavor,
    netbox: bool,
    /// The owner tag's id, when it exists.
    tag_id: Option<String>,
    /// The same as a request body names it (null before it exists).
    tag: Value,
}

impl Cx<'_> {
    /// Whether the plan owns `v` (it carries the owner tag).
    fn mine(&self, v: &Value) -> bool {
        has_tag(v, self.tag_id.as_deref(), &self.want.tag)
    }
}

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
    let tag_id = st.tag.as_ref().and_then(id_of);
    let cx = Cx {
        want,
        st,
        opts,
        flavor,
        netbox: flavor == Flavor::Netbox,
        tag: id_json(tag_id.clone()),
        tag_id,
    };
    let mut d = Diff::default();
    let mut refused = want.problems.clone();
    catalog::tag_and_fields(&cx, &mut d);
    devices::vlans_and_devices(&cx, &mut d, &mut refused);
    addresses::prefixes(&cx, &mut d);
    ports::ports(&cx, &mut d);
    catalog::cable_types(&cx, &mut d);
    cables::cables(&cx, &mut d, &mut refused);
    addresses::addresses(&cx, &mut d, &mut refused);
    addresses::macs(&cx, &mut d, &mut refused);
    racks::diff(&cx, &mut d, &mut refused);
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
        // No write with an id the read does not vouch for (issue #31).
        ids::check(&now, &st, client.flavor(), &|kind: &str, id: &str| {
            client.url(&format!("{}{id}/", endpoint(kind)))
        })?;
        ids::confirm(&now, &st, client).await?;
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
        let left: Vec<String> = (next.changes.iter())
            .filter(|c| c.phase <= phase)
            .map(|c| format!("{} {}", c.kind, c.object))
            .collect();
        if !left.is_empty() {
            // A write answered as a success that was never made (a proxy
            // or a broken server forging the answer; issue #31).
            let more = if left.len() > 5 { ", ..." } else { "" };
            return Err(SotError::Api {
                action: format!("pushing {}", plan.name),
                url: client.url(endpoint(now[0].kind)),
                message: format!(
                    "the server accepted phase {phase}'s writes but reading back shows them missing or different ({} left: {}{more}); run the push again, which writes what is missing; if the same objects stay missing, check the server's change log",
                    left.len(),
                    left[..left.len().min(5)].join(", ")
                ),
            });
        }
        current = next;
    }
    Ok(report)
}
