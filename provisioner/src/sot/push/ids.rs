//! The ids a push writes with, checked against what it read before any of
//! them is sent (issue #31): a list answer the client accepted may still
//! be wrong (an object listed twice, one id given to two objects, an id
//! of another kind, a nested reference to an object no list gave), and a
//! write must not be steered by it.
//!
//! Every id a write carries (its own `id`, `device`, `interface`,
//! `untagged_vlan`, `tagged_vlans`, `ip_address`, `rack`, `tags`,
//! `primary_mac_address`, `assigned_object_id` and the cable terminations
//! of both systems) must be the id of exactly one object of the expected
//! kind that a list answer of this read gave once ([`State::listed`]),
//! whose URL, when the answer gave one, is that kind's URL of that id; on
//! Nautobot, whose ids are UUIDs unique across kinds, no object of another
//! kind may have it. The body took the id from the object the push looked
//! up by name, so an id held by one object only is that name's. Otherwise
//! the push stops before the phase's first write with
//! [`SotError::Refused`], naming the object, the field, the id and the
//! URLs involved.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{Change, endpoint};
use crate::sot::client::{Client, Flavor, id_of, list_of};
use crate::sot::error::{Result, SotError};
use crate::sot::query::query_chunks;
use crate::sot::state::{Listed, State};

/// The kind of object each field of a request body names by id.
fn field_kind(field: &str) -> Option<&'static str> {
    Some(match field {
        "device" => "device",
        "interface" | "assigned_object_id" | "termination_a_id" | "termination_b_id" => "interface",
        "untagged_vlan" | "tagged_vlans" => "vlan",
        "ip_address" => "ip-address",
        "rack" => "rack",
        "tags" => "tag",
        "primary_mac_address" => "mac-address",
        _ => return None,
    })
}

/// The object a change's own `id` names: the change's kind (an
/// address's assignment on NetBox is a PATCH of the address).
fn own_kind(kind: &'static str) -> &'static str {
    match kind {
        "ip-assignment" => "ip-address",
        k => k,
    }
}

/// (field, id, expected kind) of every id a request body carries.
fn carried(kind: &'static str, body: &Value) -> Vec<(String, String, &'static str)> {
    let mut out = Vec::new();
    let Some(o) = body.as_object() else {
        return out;
    };
    for (k, v) in o {
        if k == "id" {
            out.extend(id_of(v).map(|id| (k.clone(), id, own_kind(kind))));
        } else if let Some(want) = field_kind(k) {
            match v {
                Value::Array(a) => {
                    out.extend(a.iter().filter_map(id_of).map(|id| (k.clone(), id, want)));
                }
                v => out.extend(id_of(v).map(|id| (k.clone(), id, want))),
            }
        } else if k == "a_terminations" || k == "b_terminations" {
            // NetBox: `{object_type, object_id}` per connector.
            for t in v.as_array().into_iter().flatten() {
                out.extend(
                    (t.get("object_id").and_then(id_of)).map(|id| (k.clone(), id, "interface")),
                );
            }
        } else if k == "terminations" {
            // Nautobot: `{"a1": {object_type, id}, ...}`.
            for (end, t) in v.as_object().into_iter().flatten() {
                out.extend(
                    (t.get("id").and_then(id_of))
                        .map(|id| (format!("terminations.{end}"), id, "interface")),
                );
            }
        }
    }
    out
}

/// What is wrong with the objects listed under an id: `None` when exactly
/// one object of `kind` was listed once with it, at its own URL.
fn wrong(
    kind: &str,
    id: &str,
    seen: &[&Listed],
    flavor: Flavor,
    client_url: &dyn Fn(&str, &str) -> String,
) -> Option<String> {
    let mine: Vec<&&Listed> = seen.iter().filter(|l| l.kind == kind).collect();
    let at = |l: &Listed| {
        format!(
            "{} {} ({})",
            l.kind,
            l.name,
            l.url.clone().unwrap_or_else(|| client_url(l.kind, &l.id))
        )
    };
    if mine.is_empty() {
        return Some(match seen.first() {
            Some(other) => format!(
                "which is the id of {}, of another kind than {kind}",
                at(other)
            ),
            None => {
                format!("which no list the push read gave as a {kind} (an id pointing nowhere)")
            }
        });
    }
    if mine.len() > 1 {
        let names: Vec<String> = mine.iter().map(|l| at(l)).collect();
        return Some(if mine.iter().all(|l| l.name == mine[0].name) {
            format!(
                "which the {kind} list gave {} times: {}",
                mine.len(),
                names.join(", ")
            )
        } else {
            format!(
                "which the {kind} list gave to {} objects: {}",
                mine.len(),
                names.join(", ")
            )
        });
    }
    let one = mine[0];
    let own = format!("{}{id}/", endpoint(kind));
    if let Some(u) = &one.url
        && !u.ends_with(&own)
    {
        return Some(format!(
            "which the {kind} list gave to {} at {u}, not at its own URL ...{own}",
            one.name
        ));
    }
    if flavor == Flavor::Nautobot
        && let Some(other) = seen.iter().find(|l| l.kind != kind)
    {
        return Some(format!(
            "which is the id of {} as well as of {}",
            at(other),
            at(one)
        ));
    }
    None
}

/// Checks the ids of `changes` (one phase's writes) against `st`; the
/// problems, each naming the change's object and URL, the field and the
/// id, stop the push before any of them is sent. `client_url` gives an
/// object's URL from its kind and id (Nautobot's GraphQL answers carry
/// none).
pub(super) fn check(
    changes: &[&Change],
    st: &State,
    flavor: Flavor,
    client_url: &dyn Fn(&str, &str) -> String,
) -> Result<()> {
    let mut by_id: BTreeMap<&str, Vec<&Listed>> = BTreeMap::new();
    for l in &st.listed {
        by_id.entry(l.id.as_str()).or_default().push(l);
    }
    let mut problems = Vec::new();
    for c in changes {
        for (field, id, kind) in carried(c.kind, &c.body) {
            let seen = by_id.get(id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            // NetBox numbers each kind apart: only its own kind counts.
            let seen: Vec<&Listed> = match flavor {
                Flavor::Netbox => seen.iter().copied().filter(|l| l.kind == kind).collect(),
                Flavor::Nautobot => seen.to_vec(),
            };
            if let Some(why) = wrong(kind, &id, &seen, flavor, client_url) {
                let url = c
                    .url
                    .clone()
                    .unwrap_or_else(|| client_url(c.kind, "").trim_end_matches('/').to_string());
                problems.push(format!(
                    "{} {} {} ({url}): its {field} is {id}, {why}; read it again or correct the source of truth, then push again",
                    c.action, c.kind, c.object
                ));
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(SotError::Refused {
        what: format!(
            "the ids the push would write with do not match what it read: {} problem(s); nothing of this step was written",
            problems.len()
        ),
        problems,
    })
}

/// Nautobot's GraphQL list of a kind and the fields that make its name
/// as [`State::listed`] holds it; `None` for kinds a write never names.
fn graphql_of(kind: &str) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        "device" => ("devices", "name"),
        "interface" => ("interfaces", "name device { name }"),
        "vlan" => ("vlans", "name"),
        "ip-address" => ("ip_addresses", "address"),
        "prefix" => ("prefixes", "prefix"),
        "rack" => ("racks", "name"),
        "tag" => ("tags", "name"),
        "cable" => ("cables", ""),
        "cable-type" => ("cable_types", "name"),
        _ => return None,
    })
}

/// Whether the ids of `kind` are read back on `flavor`: on NetBox, the
/// kinds a write names whose REST list takes the `id` filter.
fn reads_back(flavor: Flavor, kind: &str) -> bool {
    match flavor {
        Flavor::Nautobot => graphql_of(kind).is_some(),
        Flavor::Netbox => matches!(
            kind,
            "device"
                | "interface"
                | "vlan"
                | "ip-address"
                | "prefix"
                | "rack"
                | "tag"
                | "cable"
                | "mac-address"
        ),
    }
}

/// The name of an object read back, as [`State::listed`] names it.
fn read_back_name(kind: &str, v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "interface" => format!(
            "{} {}",
            v.get("device")
                .and_then(|d| d.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default(),
            s("name")
        ),
        "ip-address" => s("address").to_string(),
        "prefix" => s("prefix").to_string(),
        "mac-address" => s("mac_address").to_string(),
        "cable" => format!("cable {}", id_of(v).unwrap_or_default()),
        _ => s("name").to_string(),
    }
}

/// One read-back request: the URL asked, the kind, the ids asked and the
/// objects answered.
struct Asked {
    url: String,
    kind: &'static str,
    ids: Vec<String>,
    back: Vec<Value>,
}

/// Nautobot: every kind's ids in one GraphQL query (every Nautobot filter
/// set filters by `id`: `BaseFilterSet.get_fields` in
/// `nautobot/core/filters.py`, 3.2.7, and GraphQL's list fields take the
/// filter set's filters, `generate_list_search_parameters` in
/// `nautobot/core/graphql/generators.py`).
async fn read_back_graphql(
    wanted: &BTreeMap<&'static str, BTreeSet<String>>,
    client: &Client,
) -> Result<Vec<Asked>> {
    let mut params = Vec::new();
    let mut fields = Vec::new();
    let mut vars = serde_json::Map::new();
    for (kind, ids) in wanted {
        let Some((list, name)) = graphql_of(kind) else {
            continue;
        };
        let var = list.to_string();
        params.push(format!("${var}: [String]"));
        fields.push(format!("{var}: {list}(id: ${var}) {{ id {name} }}"));
        vars.insert(var, json!(ids));
    }
    let query = format!("query ({}) {{ {} }}", params.join(", "), fields.join(" "));
    let data = client
        .graphql(
            &query,
            Value::Object(vars),
            "reading back the objects the push writes with",
        )
        .await?;
    let url = client.url("/api/graphql/");
    Ok((wanted.iter())
        .filter_map(|(kind, ids)| {
            let (list, _) = graphql_of(kind)?;
            Some(Asked {
                url: url.clone(),
                kind,
                ids: ids.iter().cloned().collect(),
                back: list_of(&data, list).to_vec(),
            })
        })
        .collect())
}

/// NetBox: each kind's REST list filtered by `id`, several values ORed
/// (`?id=3&id=7`). Every NetBox filter set lists `id` in its
/// `Meta.fields`, and `BaseFilterSet` (`netbox/netbox/filtersets.py`,
/// v4.6.8) makes a numeric model field a `MultiValueNumberFilter`
/// (`FILTER_DEFAULTS`); several values of one filter are ORed
/// (docs/reference/filtering.md). `brief=true` asks for the brief
/// objects (`BaseViewSet.initialize_request`,
/// `netbox/netbox/api/viewsets/__init__.py`). The ids go in requests of
/// at most [`MAX_QUERY`](crate::sot::query::MAX_QUERY) bytes of filters (gunicorn's request-line
/// limit).
async fn read_back_rest(
    wanted: &BTreeMap<&'static str, BTreeSet<String>>,
    client: &Client,
) -> Result<Vec<Asked>> {
    let mut out = Vec::new();
    for (kind, ids) in wanted {
        for q in query_chunks(ids.iter(), "id", usize::MAX) {
            let query = format!("brief=true&{q}");
            let back = client
                .list(
                    endpoint(kind),
                    &query,
                    "reading back the objects the push writes with",
                )
                .await?;
            out.push(Asked {
                url: client.url(&format!("{}?{query}", endpoint(kind))),
                kind,
                ids: q
                    .split('&')
                    .map(|p| p.trim_start_matches("id=").to_string())
                    .collect(),
                back,
            });
        }
    }
    Ok(out)
}

/// What is wrong with one read-back answer: every id asked must come
/// back once, as an object of its kind (on NetBox, at its own URL) with
/// the name the push read it by, and nothing else may come back.
fn read_back_problems(a: &Asked, st: &State, flavor: Flavor, client: &Client) -> Vec<String> {
    let server = match flavor {
        Flavor::Nautobot => "Nautobot",
        Flavor::Netbox => "NetBox",
    };
    let kind = a.kind;
    let own = |id: &str| format!("{}{id}/", endpoint(kind));
    let mut problems = Vec::new();
    for id in &a.ids {
        let read = st.listed.iter().find(|l| l.kind == kind && &l.id == id);
        let read_name = read.map_or("?", |l| l.name.as_str());
        let url = client.url(&own(id));
        let found: Vec<&Value> = (a.back.iter())
            .filter(|v| id_of(v).as_deref() == Some(id.as_str()))
            .collect();
        let why = match found.as_slice() {
            [] => Some(format!(
                "{server} has no {kind} with this id (the list gave it to {read_name})"
            )),
            [one] => {
                let name = read_back_name(kind, one);
                match one.get("url").and_then(Value::as_str) {
                    Some(u) if !u.ends_with(&own(id)) => Some(format!(
                        "{server} answered it at {u}, not at its own URL ...{} (the list gave it to {read_name})",
                        own(id)
                    )),
                    _ => (name != read_name)
                        .then(|| format!("the list gave it to {read_name}, but it is {name}")),
                }
            }
            more => Some(format!("{server} gave it {} times", more.len())),
        };
        if let Some(why) = why {
            problems.push(format!(
                "{kind} {read_name} {id} ({url}): {why}; read back with {}; read it again or correct the source of truth, then push again",
                a.url
            ));
        }
    }
    for v in &a.back {
        let id = id_of(v).unwrap_or_else(|| "(no id)".to_string());
        if !a.ids.contains(&id) {
            problems.push(format!(
                "{kind} {} {id}: {server} answered it, but the push did not ask for it; read back with {}; check the server, then push again",
                read_back_name(kind, v),
                a.url
            ));
        }
    }
    problems
}

/// The ids `changes` carry, read back from the server by `id`
/// ([`read_back_graphql`] on Nautobot: one query; [`read_back_rest`] on
/// NetBox: a list request per kind and [`MAX_QUERY`](crate::sot::query::MAX_QUERY) bytes of ids): each
/// must come back once, as an object of its kind with the name the push
/// read it by, and no other object may come back. A list answer that
/// gave an object an id pointing nowhere, or another object's, and a
/// read-back answer that lost, added or changed an object, stop the push
/// here, before the phase writes, naming the object, the id and the URL
/// asked. Called after [`check`].
pub(super) async fn confirm(changes: &[&Change], st: &State, client: &Client) -> Result<()> {
    let flavor = client.flavor();
    let mut wanted: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for c in changes {
        for (_, id, kind) in carried(c.kind, &c.body) {
            if reads_back(flavor, kind) {
                wanted.entry(kind).or_default().insert(id);
            }
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    let asked = match flavor {
        Flavor::Nautobot => read_back_graphql(&wanted, client).await?,
        Flavor::Netbox => read_back_rest(&wanted, client).await?,
    };
    let problems: Vec<String> = (asked.iter())
        .flat_map(|a| read_back_problems(a, st, flavor, client))
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(SotError::Refused {
        what: format!(
            "the objects the push would write with are not what it read: {} problem(s); nothing of this step was written",
            problems.len()
        ),
        problems,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn listed(kind: &'static str, id: &str, name: &str, url: Option<&str>) -> Listed {
        Listed {
            kind,
            id: id.to_string(),
            name: name.to_string(),
            url: url.map(str::to_string),
        }
    }

    fn change(kind: &'static str, body: Value) -> Change {
        Change {
            action: "update",
            kind,
            object: "sw01 Ethernet1".to_string(),
            detail: String::new(),
            url: Some("http://sot/api/dcim/interfaces/7/".to_string()),
            phase: 2,
            body,
        }
    }

    fn url(kind: &str, id: &str) -> String {
        format!("http://sot{}{id}/", endpoint(kind))
    }

    fn checked(st: &State, c: &Change, flavor: Flavor) -> std::result::Result<(), String> {
        check(&[c], st, flavor, &url).map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn ids_read_once_of_their_kind_pass_and_others_are_refused() {
        let mut st = State {
            listed: vec![
                listed(
                    "interface",
                    "7",
                    "sw01 Ethernet1",
                    Some("http://sot/api/dcim/interfaces/7/"),
                ),
                listed("vlan", "3", "storage", Some("http://sot/api/ipam/vlans/3/")),
            ],
            ..State::default()
        };
        let good = change(
            "interface",
            json!({"id": 7, "untagged_vlan": 3, "mode": "access"}),
        );
        assert!(checked(&st, &good, Flavor::Netbox).is_ok());
        // An id no list gave.
        let nowhere = change("interface", json!({"id": 7, "untagged_vlan": 99}));
        let e = checked(&st, &nowhere, Flavor::Netbox).unwrap_err();
        assert!(e.contains("update interface sw01 Ethernet1 (http://sot/api/dcim/interfaces/7/): its untagged_vlan is 99, which no list the push read gave as a vlan"), "{e}");
        // The same id listed twice, for two interfaces.
        st.listed.push(listed(
            "interface",
            "7",
            "sw01 Ethernet2",
            Some("http://sot/api/dcim/interfaces/7/"),
        ));
        let e = checked(&st, &good, Flavor::Netbox).unwrap_err();
        assert!(e.contains("its id is 7, which the interface list gave to 2 objects: interface sw01 Ethernet1 (http://sot/api/dcim/interfaces/7/), interface sw01 Ethernet2"), "{e}");
        // A URL of another object.
        st.listed.pop();
        st.listed[0].url = Some("http://sot/api/ipam/vlans/7/".to_string());
        let e = checked(&st, &good, Flavor::Netbox).unwrap_err();
        assert!(
            e.contains("not at its own URL .../api/dcim/interfaces/7/"),
            "{e}"
        );
    }

    #[test]
    fn a_nautobot_id_of_another_kind_and_cable_terminations_are_refused() {
        let (i, v) = (
            "7a1e4c52-0000-4000-8000-000000000001",
            "7a1e4c52-0000-4000-8000-000000000002",
        );
        let mut st = State {
            listed: vec![
                listed("interface", i, "sw01 Ethernet1", None),
                listed("vlan", v, "storage", None),
            ],
            ..State::default()
        };
        let cable = |b: &str| {
            change(
                "cable",
                json!({"terminations": {"a1": {"object_type": "dcim.interface", "id": i},
                                                     "b1": {"object_type": "dcim.interface", "id": b}},
                                   "status": {"name": "Planned"}}),
            )
        };
        let e = checked(&st, &cable(v), Flavor::Nautobot).unwrap_err();
        assert!(e.contains(&format!("its terminations.b1 is {v}, which is the id of vlan storage (http://sot/api/ipam/vlans/{v}/), of another kind than interface")), "{e}");
        // The same UUID listed as an interface and as a VLAN.
        st.listed.push(listed("vlan", i, "backend", None));
        let e = checked(&st, &cable(i), Flavor::Nautobot).unwrap_err();
        assert!(e.contains("which is the id of vlan backend"), "{e}");
        st.listed.pop();
        st.listed.push(listed(
            "interface",
            v.replace("02", "03").as_str(),
            "sw01 Ethernet2",
            None,
        ));
        let b = v.replace("02", "03");
        assert!(checked(&st, &cable(&b), Flavor::Nautobot).is_ok());
        // Listed twice (the same object): refused, naming both.
        st.listed
            .push(listed("interface", &b, "sw01 Ethernet2", None));
        let e = checked(&st, &cable(&b), Flavor::Nautobot).unwrap_err();
        assert!(e.contains("which the interface list gave 2 times"), "{e}");
        // NetBox's `a_terminations` and `assigned_object_id` too.
        let nb = State {
            listed: vec![listed(
                "interface",
                "5",
                "n1 eth0",
                Some("http://sot/api/dcim/interfaces/5/"),
            )],
            ..State::default()
        };
        let c = change(
            "cable",
            json!({"a_terminations": [{"object_type": "dcim.interface", "object_id": 5}],
                                       "b_terminations": [{"object_type": "dcim.interface", "object_id": 6}]}),
        );
        let e = checked(&nb, &c, Flavor::Netbox).unwrap_err();
        assert!(e.contains("its b_terminations is 6, which no list"), "{e}");
        let m = change(
            "mac-address",
            json!({"mac_address": "00:11:22:33:44:55", "assigned_object_id": 5, "tags": [null]}),
        );
        assert!(checked(&nb, &m, Flavor::Netbox).is_ok());
    }
}
