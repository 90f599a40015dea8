//! The diff's cables: one per planned cable (a cable from a broken-out
//! cage with its lanes); an existing cable on a planned port is as
//! planned, or a conflict.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

pub(super) fn cables(cx: &Cx, d: &mut Diff, refused: &mut Vec<String>) {
    let want = cx.want;
    let st = cx.st;
    let flavor = cx.flavor;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    let mine = |v: &Value| cx.mine(v);
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
                d,
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
                        d,
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
                d,
                "update",
                "cable",
                object,
                format!("tag {}", want.tag),
                url(cv),
                4,
                json!({"id": id_json(id_of(cv)), "tags": [tag]}),
            ),
            other => add(
                d,
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
}
