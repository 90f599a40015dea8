//! As-built: the source of truth's cables, read as the planner's observed
//! cabling, so `planner::validate::validate_cabling` reports on them what
//! it reports on a CSV or LLDP file (crossed, wrong VLAN half, missing,
//! extra, ...), each finding's source naming the cable's id and URL.

use std::collections::BTreeMap;
use std::sync::Arc;

use planner::validate::cabling::{Observed, Origin};
use serde_json::{Value, json};

use super::client::id_of;
use super::client::{Client, Flavor, list_of};
use super::error::Result;
use super::query::query_value;
use super::state::{CableEnds, cable_ends};

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

/// Nautobot: the cables (with every termination's end and connector, and
/// the cable type's lanes) and the interfaces with their devices, in one
/// GraphQL query; [`observed`] reads the terminations through
/// [`cable_ends`]. An end that is not an interface (a circuit termination,
/// a front port) has no `interface`, so its cable is skipped.
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
         interface {{ id }} }} cable_type {{ name a_connectors b_connectors total_lanes }} }} \
         interfaces{iface_args} {{ id name device {{ id name }} }} }}"
    );
    let data = client
        .graphql(
            &query,
            Value::Object(vars),
            "reading the cables and interfaces",
        )
        .await?;
    let cables = list_of(&data, "cables")
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let id = id_of(&c).unwrap_or_default();
            c["url"] = json!(client.object_url("/api/dcim/cables/", &id));
            c
        })
        .collect();
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

/// (device, interface) of each end, by interface id.
type Names = BTreeMap<String, (String, String)>;

/// A row of a cable: (device, port), (peer, peer port), the B connector.
type LaneRow = ((String, String), (String, String), Option<String>);

/// The rows a cable between interfaces stands for, with the B connector
/// of a breakout cable's leg: a plain cable one row; a breakout cable (one
/// A connector, several B connectors) a row per leg from lane `k - 1` of
/// the cage, named as the planner names lanes (`<cage>s<lane>`,
/// `planner::plan::Breakout::generic_name`, read back by `validate`); a
/// straight cable of L lanes between two cages a row per lane. `None` when
/// an end is not an interface of the devices read, or the shape is none
/// of these.
fn lane_rows(e: &CableEnds, names: &Names) -> Option<Vec<LaneRow>> {
    let name = |x: &Option<String>| x.as_ref().and_then(|i| names.get(i)).cloned();
    let a = match e.a.as_slice() {
        [(1, x)] => name(x)?,
        _ => return None,
    };
    match e.b.as_slice() {
        [] => None,
        [(1, x)] if e.lanes <= 1 && !e.breakout => Some(vec![(a, name(x)?, None)]),
        [(1, x)] if !e.breakout => {
            // A straight cable: lane i to lane i.
            let b = name(x)?;
            Some(
                (0..e.lanes)
                    .map(|l| {
                        (
                            (a.0.clone(), format!("{}s{l}", a.1)),
                            (b.0.clone(), format!("{}s{l}", b.1)),
                            None,
                        )
                    })
                    .collect(),
            )
        }
        legs => legs
            .iter()
            .map(|(k, x)| {
                let lane = k.checked_sub(1)?;
                Some((
                    (a.0.clone(), format!("{}s{lane}", a.1)),
                    name(x)?,
                    Some(format!("B{k}")),
                ))
            })
            .collect(),
    }
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
        let Some(rows) = lane_rows(&cable_ends(c), &iface) else {
            skipped += 1;
            continue;
        };
        for (a, b, connector) in rows {
            let at = connector
                .map(|k| format!(" connector {k}"))
                .unwrap_or_default();
            out.push(Observed {
                device: a.0,
                port: a.1,
                peer: b.0,
                peer_port: b.1,
                gbps: None,
                origin: Origin {
                    file: file.clone(),
                    line: None,
                    detail: Some(format!("cable {id}{label}{at} {url}")),
                },
            });
        }
    }
    (out, skipped)
}
