//! The racks phase of a push's diff (docs/source-of-truth.md, "Racks"):
//! the plan's racks at the location, and where its physical switches
//! stand (rack, lowest unit, front face). Servers are inventory: where the
//! source of truth stands one otherwise than the plan, that is reported
//! ([`Diff::not_moved`]), never written.
//!
//! The rules are the two systems' own, read at their source:
//! - a device's `position` needs a `rack` and a `face`, and the units it
//!   fills (`position` up to `position + u_height - 1`, the height being
//!   its device type's) must be free: NetBox v4.6.8 `Device.clean`
//!   (`netbox/dcim/models/devices.py`, with `Rack.get_available_units` in
//!   `netbox/dcim/models/racks.py`); Nautobot 3.2.7 `Device.clean`
//!   (`nautobot/dcim/models/devices.py`);
//! - a rack belongs to a site (NetBox) or a location (Nautobot), has a
//!   status and a `u_height` (default 42 on both).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Cx, Diff, add, status, url};
use crate::sot::client::id_of;
use crate::sot::desired::WantPlace;
use crate::sot::query::id_json;
use crate::sot::state::State;

/// A number of units as either system writes it: an integer (Nautobot,
/// a rack's `u_height` on NetBox) or a decimal (NetBox's device
/// `position` and device type `u_height`, `1.0`; a half unit is no whole
/// number and reads as none).
pub fn units(v: Option<&Value>) -> Option<u32> {
    let v = v?;
    let f = v
        .as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))?;
    (f >= 0.0 && f.fract() == 0.0 && f <= f64::from(u32::MAX)).then_some(f as u32)
}

/// Where a device stands: its rack's name and id, and its position (when
/// it has one).
pub fn placed(d: &Value) -> Option<(String, Option<String>, Option<u32>)> {
    let r = d.get("rack").filter(|r| r.is_object())?;
    let name = r.get("name").and_then(Value::as_str)?.to_string();
    Some((name, id_of(r), units(d.get("position"))))
}

fn shown(p: &Option<(String, Option<String>, Option<u32>)>) -> String {
    match p {
        Some((r, _, Some(u))) => format!("rack {r} U{u}"),
        Some((r, _, None)) => format!("rack {r}, no position"),
        None => "no rack".to_string(),
    }
}

/// The height of a device type, by model.
fn type_height(st: &State, model: &str) -> Option<u32> {
    units(st.device_types.get(model)?.get("u_height"))
}

/// Adds the racks' and the placements' changes, conflicts and reports.
pub(super) fn diff(cx: &Cx, d: &mut Diff, refused: &mut Vec<String>) {
    let (want, st, opts, flavor) = (cx.want, cx.st, cx.opts, cx.flavor);
    let netbox = cx.netbox;
    let mine = |v: &Value| cx.mine(v);
    let tag = &cx.tag;
    let twins: BTreeSet<&String> = st.rack_twins.iter().map(|t| &t.0).collect();
    for name in twins {
        let urls: Vec<&str> = (st.rack_twins.iter())
            .filter(|t| &t.0 == name)
            .map(|t| t.1.as_str())
            .collect();
        refused.push(format!(
            "rack {name} is in more than one place ({}); give --location (--site) to say which",
            urls.join(", ")
        ));
    }
    for (name, &height) in &want.racks {
        match st.racks.get(name) {
            None => {
                let Some(loc) = &opts.location else {
                    refused.push(format!(
                        "rack {name} is not in the source of truth; give --location to create it ({height} U)"
                    ));
                    continue;
                };
                // Planned, like the cables: the operator sets it active
                // when it stands; the push never touches the status again.
                let body = if netbox {
                    json!({"name": name, "site": {"slug": loc}, "status": status(flavor, "Planned"),
                           "u_height": height, "tags": [tag]})
                } else {
                    json!({"name": name, "location": {"name": loc}, "status": status(flavor, "Planned"),
                           "u_height": height, "tags": [tag]})
                };
                add(
                    d,
                    "create",
                    "rack",
                    name.clone(),
                    format!("{height} U at {loc}, status Planned"),
                    None,
                    1,
                    body,
                );
            }
            Some(r) => {
                let have = units(r.get("u_height"));
                if have == Some(height) {
                    d.unchanged += 1;
                } else if mine(r) {
                    add(
                        d,
                        "update",
                        "rack",
                        name.clone(),
                        format!("u_height {} -> {height}", have.unwrap_or(0)),
                        url(r),
                        1,
                        json!({"id": id_json(id_of(r)), "u_height": height}),
                    );
                } else {
                    add(
                        d,
                        "conflict",
                        "rack",
                        name.clone(),
                        format!(
                            "is {} U and not tagged {}, the plan's rack {name} is {height} U; give the inventory's rack its u_height, or rename one of them",
                            have.map_or("?".to_string(), |h| h.to_string()),
                            want.tag
                        ),
                        url(r),
                        1,
                        Value::Null,
                    );
                }
            }
        }
    }
    for (dev, p) in &want.places {
        let device = st.devices.get(dev);
        let model = want.switches.get(dev);
        let have = device.and_then(placed);
        let face = device
            .and_then(|x| x.get("face"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let here = have
            .as_ref()
            .is_some_and(|(r, _, u)| r == &p.rack && *u == Some(p.position));
        if !p.switch {
            if device.is_none() {
                continue;
            }
            if here {
                d.unchanged += 1;
            } else {
                add(
                    d,
                    "differs",
                    "device",
                    dev.clone(),
                    format!(
                        "the source of truth has {}, the plan rack {} U{}; not moved (servers are inventory): move it there, or give the inventory its position",
                        shown(&have),
                        p.rack,
                        p.position
                    ),
                    device.and_then(url),
                    2,
                    Value::Null,
                );
            }
            continue;
        }
        // The device type's height is the one both systems check.
        let height = match model.and_then(|m| type_height(st, m)) {
            Some(h) if h != p.u_height => {
                add(
                    d,
                    "conflict",
                    "device-type",
                    model.cloned().unwrap_or_default(),
                    format!(
                        "is {h} U, the plan stands switch {dev} as {} U; give the inventory's switch template u_height = {h}, or correct the device type",
                        p.u_height
                    ),
                    model.and_then(|m| st.device_types.get(m)).and_then(url),
                    2,
                    Value::Null,
                );
                continue;
            }
            _ => p.u_height,
        };
        if here && face == "front" {
            d.unchanged += 1;
            continue;
        }
        if let (Some(x), Some((_, _, Some(_)))) = (device, &have)
            && !mine(x)
        {
            add(
                d,
                "differs",
                "device",
                dev.clone(),
                format!(
                    "the source of truth has {}{}, the plan rack {} U{} front; not moved: it is not tagged {} (move it there, or tag it to hand it to the plan)",
                    shown(&have),
                    if face.is_empty() {
                        String::new()
                    } else {
                        format!(" {face}")
                    },
                    p.rack,
                    p.position,
                    want.tag
                ),
                url(x),
                2,
                Value::Null,
            );
            continue;
        }
        if let Some(o) = occupant(st, dev, p, height) {
            add(
                d,
                "conflict",
                "device",
                format!("{dev} in {} U{}", p.rack, p.position),
                format!(
                    "U{}-U{} are held by device {} ({}), which the plan does not put there; move it, or give the switch another position",
                    p.position,
                    p.position + height - 1,
                    o.get("name").and_then(Value::as_str).unwrap_or("?"),
                    shown(&placed(o))
                ),
                url(o),
                2,
                Value::Null,
            );
            continue;
        }
        let rack = st.racks.get(&p.rack).and_then(id_of);
        add(
            d,
            "update",
            "device",
            dev.clone(),
            format!("{} -> rack {} U{} front", shown(&have), p.rack, p.position),
            device.and_then(url),
            2,
            json!({"id": id_json(device.and_then(id_of)), "rack": id_json(rack),
                   "position": p.position, "face": "front"}),
        );
    }
}

/// A device other than `dev` that fills one of the units the plan gives
/// `dev` in its rack, whatever its face: a full-depth device (the default
/// device type on both systems) fills both faces.
fn occupant<'a>(st: &'a State, dev: &str, p: &WantPlace, height: u32) -> Option<&'a Value> {
    let rack = st.racks.get(&p.rack).and_then(id_of)?;
    let want = p.position..p.position + height;
    st.occupants.iter().find(|o| {
        let Some((_, Some(r), Some(at))) = placed(o) else {
            return false;
        };
        let name = o.get("name").and_then(Value::as_str).unwrap_or("");
        let h = o
            .get("device_type")
            .and_then(|t| t.get("model"))
            .and_then(Value::as_str)
            .and_then(|m| type_height(st, m))
            .unwrap_or(1)
            .max(1);
        r == rack && name != dev && at < want.end && want.start < at + h
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::super::diff;
    use crate::sot::client::Flavor;
    use crate::sot::desired::{Desired, PushOptions, WantPlace};
    use crate::sot::state::State;

    const TAG: &str = "topo-plan-p";

    fn want() -> Desired {
        let mut d = Desired {
            tag: TAG.to_string(),
            ..Desired::default()
        };
        d.switches.insert("leaf01".into(), "SW-64".into());
        d.servers.insert("node01".into());
        d.racks.insert("r01".into(), 42);
        d.racks.insert("net1".into(), 42);
        let at = |rack: &str, position, u_height, switch| WantPlace {
            rack: rack.to_string(),
            position,
            u_height,
            switch,
        };
        d.places.insert("leaf01".into(), at("r01", 42, 1, true));
        d.places.insert("node01".into(), at("r01", 1, 2, false));
        d
    }

    fn opts() -> PushOptions {
        PushOptions {
            location: Some("lab".into()),
            switch_role: "fabric-switch".into(),
            dry_run: true,
            batch: 100,
        }
    }

    fn dev(id: &str, name: &str, rack: Option<(&str, &str)>, pos: Value, tagged: bool) -> Value {
        json!({"id": id, "name": name, "url": format!("http://sot/api/dcim/devices/{id}/"),
               "rack": rack.map(|(i, n)| json!({"id": i, "name": n})), "position": pos,
               "face": if pos.is_null() { "" } else { "front" },
               "device_type": {"model": "SW-64"},
               "tags": if tagged { json!([{"id": "t", "name": TAG}]) } else { json!([]) }})
    }

    /// The source of truth with the tag, rack r01 (42 U, not the plan's),
    /// node01 at U1 and leaf01 unplaced, both untagged.
    fn state() -> State {
        let mut st = State {
            tag: Some(json!({"id": "t", "name": TAG})),
            ..State::default()
        };
        st.racks.insert(
            "r01".into(),
            json!({"id": "r1", "name": "r01", "u_height": 42, "tags": [],
                   "url": "http://sot/api/dcim/racks/r1/"}),
        );
        st.devices.insert(
            "node01".into(),
            dev("n1", "node01", Some(("r1", "r01")), json!(1), false),
        );
        st.devices.insert(
            "leaf01".into(),
            dev("s1", "leaf01", None, Value::Null, false),
        );
        st.device_types
            .insert("SW-64".into(), json!({"model": "SW-64", "u_height": 1.0}));
        st
    }

    fn rack_changes(d: &super::Diff) -> Vec<(&str, &str, String)> {
        (d.changes.iter())
            .filter(|c| matches!(c.kind, "rack" | "device"))
            .map(|c| (c.action, c.kind, c.object.clone()))
            .collect()
    }

    #[test]
    fn a_missing_rack_is_created_and_an_unplaced_switch_placed() {
        let d = diff(&want(), &state(), &opts(), Flavor::Nautobot).unwrap();
        assert_eq!(
            rack_changes(&d),
            vec![
                ("create", "rack", "net1".to_string()),
                ("update", "device", "leaf01".to_string())
            ]
        );
        let place = d.changes.iter().find(|c| c.kind == "device").unwrap();
        assert_eq!(
            place.body,
            json!({"id": "s1", "rack": "r1", "position": 42, "face": "front"})
        );
        let rack = d.changes.iter().find(|c| c.kind == "rack").unwrap();
        assert_eq!(rack.body["status"], json!({"name": "Planned"}));
        assert_eq!(rack.body["location"], json!({"name": "lab"}));
        assert_eq!(rack.body["u_height"], 42);
        assert!(d.conflicts.is_empty() && d.not_moved.is_empty());
        // NetBox: at the site by slug, the status by value.
        let d = diff(&want(), &state(), &opts(), Flavor::Netbox).unwrap();
        let rack = d.changes.iter().find(|c| c.kind == "rack").unwrap();
        assert_eq!(rack.body["status"], "planned");
        assert_eq!(rack.body["site"], json!({"slug": "lab"}));
    }

    #[test]
    fn everything_in_place_changes_nothing() {
        let mut st = state();
        st.racks.insert(
            "net1".into(),
            json!({"id": "r2", "name": "net1", "u_height": 42, "tags": [{"id": "t"}]}),
        );
        st.devices.insert(
            "leaf01".into(),
            dev("s1", "leaf01", Some(("r1", "r01")), json!(42.0), true),
        );
        let d = diff(&want(), &st, &opts(), Flavor::Nautobot).unwrap();
        assert!(rack_changes(&d).is_empty(), "{:?}", d.changes);
        assert!(d.conflicts.is_empty() && d.not_moved.is_empty());
    }

    #[test]
    fn an_occupied_unit_and_a_foreign_rack_are_conflicts_a_moved_server_a_report() {
        let mut st = state();
        // Someone else's 2 U device at U41 holds U42.
        st.occupants.push(
            json!({"id": "x", "name": "pdu-a", "rack": {"id": "r1", "name": "r01"},
                                 "position": 41, "face": "front", "device_type": {"model": "PDU"},
                                 "url": "http://sot/api/dcim/devices/x/"}),
        );
        st.device_types
            .insert("PDU".into(), json!({"model": "PDU", "u_height": 2}));
        // net1 exists, 48 U, not the plan's.
        st.racks.insert(
            "net1".into(),
            json!({"id": "r2", "name": "net1", "u_height": 48, "tags": [],
                   "url": "http://sot/api/dcim/racks/r2/"}),
        );
        // node01 stands at U5.
        st.devices.insert(
            "node01".into(),
            dev("n1", "node01", Some(("r1", "r01")), json!(5), false),
        );
        let d = diff(&want(), &st, &opts(), Flavor::Nautobot).unwrap();
        assert!(rack_changes(&d).is_empty(), "{:?}", d.changes);
        let conflict = |kind: &str| {
            (d.conflicts.iter())
                .find(|c| c.kind == kind)
                .unwrap_or_else(|| panic!("no {kind} conflict: {:?}", d.conflicts))
        };
        let unit = conflict("device");
        assert_eq!(unit.object, "leaf01 in r01 U42");
        assert!(unit.detail.contains("held by device pdu-a (rack r01 U41)"));
        assert_eq!(unit.url.as_deref(), Some("http://sot/api/dcim/devices/x/"));
        let rack = conflict("rack");
        assert!(
            rack.detail.starts_with("is 48 U and not tagged"),
            "{rack:?}"
        );
        assert_eq!(d.not_moved.len(), 1);
        assert_eq!(d.not_moved[0].object, "node01");
        assert!(
            d.not_moved[0]
                .detail
                .contains("has rack r01 U5, the plan rack r01 U1")
        );
    }

    #[test]
    fn an_owned_rack_is_resized_an_owned_switch_moved_a_foreign_placed_one_reported() {
        let mut st = state();
        st.racks.insert(
            "net1".into(),
            json!({"id": "r2", "name": "net1", "u_height": 48, "tags": [{"id": "t"}]}),
        );
        st.devices.insert(
            "leaf01".into(),
            dev("s1", "leaf01", Some(("r1", "r01")), json!(40), true),
        );
        let d = diff(&want(), &st, &opts(), Flavor::Nautobot).unwrap();
        let detail: BTreeMap<&str, &str> = (d.changes.iter())
            .filter(|c| matches!(c.kind, "rack" | "device"))
            .map(|c| (c.object.as_str(), c.detail.as_str()))
            .collect();
        assert_eq!(detail["net1"], "u_height 48 -> 42");
        assert_eq!(detail["leaf01"], "rack r01 U40 -> rack r01 U42 front");
        // The same switch not the plan's stays where it is, reported.
        st.devices.insert(
            "leaf01".into(),
            dev("s1", "leaf01", Some(("r1", "r01")), json!(40), false),
        );
        let d = diff(&want(), &st, &opts(), Flavor::Nautobot).unwrap();
        assert!(d.changes.iter().all(|c| c.kind != "device"));
        assert!(
            (d.not_moved.iter())
                .any(|c| c.object == "leaf01" && c.detail.contains("not tagged topo-plan-p")),
            "{:?}",
            d.not_moved
        );
    }

    #[test]
    fn a_device_type_of_another_height_is_a_conflict_and_no_location_refuses() {
        let mut st = state();
        st.device_types
            .insert("SW-64".into(), json!({"model": "SW-64", "u_height": 2}));
        let d = diff(&want(), &st, &opts(), Flavor::Nautobot).unwrap();
        assert!(
            (d.conflicts.iter()).any(|c| c.kind == "device-type" && c.detail.starts_with("is 2 U")),
            "{:?}",
            d.conflicts
        );
        let e = diff(
            &want(),
            &state(),
            &PushOptions {
                location: None,
                ..opts()
            },
            Flavor::Nautobot,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("the plan cannot be pushed")
                && format!("{e:?}").contains("rack net1 is not in the source of truth"),
            "{e:?}"
        );
    }
}
