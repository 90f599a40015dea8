//! As-built: the source of truth's cables, read as the planner's observed
//! cabling, so `planner::validate::validate_cabling` reports on them what
//! it reports on a CSV or LLDP file (crossed, wrong VLAN half, missing,
//! extra, ...), each finding's source naming the cable's id and URL.

use std::collections::BTreeMap;
use std::sync::Arc;

use planner::validate::cabling::{Observed, Origin};
use serde_json::{Value, json};

use super::client::{Client, Flavor, list_of};
use super::error::Result;
use super::import::{id_of, query_value};

/// Which cables count as built.
#[derive(Debug, Clone)]
pub struct CablingOptions {
    /// Only cables of this status (`connected`); `None` reads every cable.
    pub status: Option<String>,
    /// Only cables at this location (both ends' devices are read from it).
    pub location: Option<String>,
}

/// The cables and interfaces an as-built check reads.
#[derive(Debug, Clone, Default)]
pub struct CableSnapshot {
    /// Cables, as the API returned them.
    pub cables: Vec<Value>,
    /// Interfaces, at least those the cables end on (with their device).
    pub interfaces: Vec<Value>,
    /// Devices (id and name).
    pub devices: Vec<Value>,
}

/// The status filter as the flavour writes it: Nautobot filters statuses
/// by name (`Connected`, and refuses `connected`), NetBox by value
/// (`connected`).
fn status_filter(flavor: Flavor, s: &str) -> String {
    match flavor {
        Flavor::Nautobot => {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        }
        Flavor::Netbox => s.to_lowercase(),
    }
}

/// Reads the cables, interfaces and devices: from Nautobot in one GraphQL
/// query, from NetBox through its REST lists.
pub async fn fetch(client: &Client, opts: &CablingOptions) -> Result<CableSnapshot> {
    match client.flavor() {
        Flavor::Nautobot => fetch_graphql(client, opts).await,
        Flavor::Netbox => fetch_rest(client, opts).await,
    }
}

/// Nautobot: the cables (with each end's connector-1 termination) and the
/// interfaces with their devices, in one GraphQL query, reshaped into the
/// REST cable's `termination_<side>_type`/`_id` that [`observed`] reads.
/// An end that is not an interface (a circuit termination, a front port)
/// gets its termination's id and type `other`, so it is skipped.
async fn fetch_graphql(client: &Client, opts: &CablingOptions) -> Result<CableSnapshot> {
    let mut params = Vec::new();
    let mut cable_args = Vec::new();
    let mut iface_args = "";
    let mut vars = serde_json::Map::new();
    if let Some(s) = &opts.status {
        params.push("$status: [String]");
        cable_args.push("status: $status");
        vars.insert(
            "status".to_string(),
            json!([status_filter(client.flavor(), s)]),
        );
    }
    if let Some(l) = &opts.location {
        params.push("$location: [String]");
        cable_args.push("location: $location");
        iface_args = "(location: $location)";
        vars.insert("location".to_string(), json!([l]));
    }
    let params = if params.is_empty() {
        String::new()
    } else {
        format!("({})", params.join(", "))
    };
    let cable_args = if cable_args.is_empty() {
        String::new()
    } else {
        format!("({})", cable_args.join(", "))
    };
    let query = format!(
        "query {params} {{ cables{cable_args} {{ id label terminations {{ id cable_end connector \
         interface {{ id }} }} }} interfaces{iface_args} {{ id name device {{ id name }} }} }}"
    );
    let data = client
        .graphql(
            &query,
            Value::Object(vars),
            "reading the cables and interfaces",
        )
        .await?;
    let mut cables = Vec::new();
    for c in list_of(&data, "cables") {
        let id = id_of(c).unwrap_or_default();
        let mut out = json!({"id": id, "label": c.get("label"),
                             "url": client.object_url("/api/dcim/cables/", &id)});
        for side in ["a", "b"] {
            let end = c
                .get("terminations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|t| {
                    t.get("cable_end")
                        .and_then(Value::as_str)
                        .is_some_and(|e| e.eq_ignore_ascii_case(side))
                })
                .min_by_key(|t| {
                    t.get("connector")
                        .and_then(Value::as_u64)
                        .unwrap_or(u64::MAX)
                });
            let (ty, tid) = match end {
                Some(t) => match t.get("interface").and_then(id_of) {
                    Some(i) => (json!("dcim.interface"), json!(i)),
                    None => (json!("other"), json!(id_of(t))),
                },
                None => (Value::Null, Value::Null),
            };
            out[format!("termination_{side}_type")] = ty;
            out[format!("termination_{side}_id")] = tid;
        }
        cables.push(out);
    }
    Ok(CableSnapshot {
        cables,
        interfaces: list_of(&data, "interfaces").to_vec(),
        devices: Vec::new(),
    })
}

/// NetBox: the REST lists of cables, interfaces and devices, at a site
/// by its slug (`CableFilterSet.site`, `DeviceComponentFilterSet.site`,
/// `DeviceFilterSet.site` in `netbox/dcim/filtersets.py`, v4.6.8; NetBox
/// has no `location=` filter on cables' sites) and cables by their status
/// value (`connected`, lower case: `LinkStatusChoices`).
async fn fetch_rest(client: &Client, opts: &CablingOptions) -> Result<CableSnapshot> {
    let mut q = Vec::new();
    if let Some(s) = &opts.status {
        let s = status_filter(client.flavor(), s);
        q.push(format!("status={}", query_value(&s)));
    }
    let site = opts
        .location
        .as_ref()
        .map(|l| format!("site={}", query_value(l)))
        .unwrap_or_default();
    if !site.is_empty() {
        q.push(site.clone());
    }
    let cables = client
        .list("/api/dcim/cables/", &q.join("&"), "reading the cables")
        .await?;
    let interfaces = client
        .list("/api/dcim/interfaces/", &site, "reading the interfaces")
        .await?;
    let devices = client
        .list("/api/dcim/devices/", &site, "reading the devices")
        .await?;
    Ok(CableSnapshot {
        cables,
        interfaces,
        devices,
    })
}

/// One end of a cable: the interface's id, from Nautobot's
/// `termination_a_id` or NetBox's `a_terminations[0].object_id`.
fn ends(c: &Value) -> Vec<(Option<String>, Option<String>)> {
    // Nautobot 2.x/3.x: termination_a_type/_id (legacy fields, still
    // served by 3.2 beside `terminations`).
    if c.get("termination_a_id").is_some() {
        let t = |side: &str| {
            let ty = c
                .get(format!("termination_{side}_type"))
                .and_then(Value::as_str);
            let id = c.get(format!("termination_{side}_id")).and_then(id_of);
            (ty.map(str::to_string), id)
        };
        return vec![t("a"), t("b")];
    }
    // NetBox 4.x: a_terminations / b_terminations lists.
    ["a_terminations", "b_terminations"]
        .iter()
        .map(|k| {
            let first = c.get(*k).and_then(Value::as_array).and_then(|a| a.first());
            (
                first
                    .and_then(|t| t.get("object_type"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                first.and_then(|t| t.get("object_id")).and_then(id_of),
            )
        })
        .collect()
}

/// The observed cabling of a snapshot: one row per cable between two
/// interfaces. `source` names the input (`nautobot http://...`). Cables
/// to anything but interfaces (circuits, patch panels) are skipped; the
/// count of skipped cables is returned.
pub fn observed(client_base: &str, snap: &CableSnapshot, source: &str) -> (Vec<Observed>, usize) {
    let device_name: BTreeMap<String, &str> = snap
        .devices
        .iter()
        .filter_map(|d| Some((id_of(d)?, d.get("name")?.as_str()?)))
        .collect();
    let iface: BTreeMap<String, (String, String)> = snap
        .interfaces
        .iter()
        .filter_map(|i| {
            let id = id_of(i)?;
            let dev = i.get("device").and_then(|d| {
                d.get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| id_of(d).and_then(|x| device_name.get(&x).map(|s| s.to_string())))
            })?;
            Some((id, (dev, i.get("name")?.as_str()?.to_string())))
        })
        .collect();
    let file: Arc<str> = Arc::from(source);
    let mut out = Vec::with_capacity(snap.cables.len());
    let mut skipped = 0;
    for c in &snap.cables {
        let e = ends(c);
        let is_iface = |t: &Option<String>| t.as_deref().is_none_or(|t| t == "dcim.interface");
        let (Some((ta, Some(a))), Some((tb, Some(b)))) = (e.first(), e.get(1)) else {
            skipped += 1;
            continue;
        };
        let (Some((da, pa)), Some((db, pb))) = (iface.get(a), iface.get(b)) else {
            skipped += 1;
            continue;
        };
        if !is_iface(ta) || !is_iface(tb) {
            skipped += 1;
            continue;
        }
        let id = id_of(c).unwrap_or_default();
        let url = c
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{client_base}/api/dcim/cables/{id}/"));
        let label = c
            .get("label")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())
            .map(|l| format!(" label {l}"))
            .unwrap_or_default();
        out.push(Observed {
            device: da.clone(),
            port: pa.clone(),
            peer: db.clone(),
            peer_port: pb.clone(),
            gbps: None,
            origin: Origin {
                file: file.clone(),
                line: None,
                detail: Some(format!("cable {id}{label} {url}")),
            },
        });
    }
    (out, skipped)
}
