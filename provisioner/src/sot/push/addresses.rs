//! The diff's prefixes (the NIC prefixes, the link pool and the /31s),
//! addresses and their assignments, and NetBox's MAC addresses.

use serde_json::{Value, json};

use super::*;

pub(super) fn prefixes(cx: &Cx, d: &mut Diff) {
    let want = cx.want;
    let st = cx.st;
    let flavor = cx.flavor;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    for prefix in &want.prefixes {
        match st.prefixes.get(prefix) {
            Some(_) => d.unchanged += 1,
            None => add(
                d,
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
    // The routed links' prefixes: the link pool as their parent (a
    // container), a /31 per cable under it (a network, the parent
    // Nautobot 3.2.7 requires of an IP address: `IPAddress.clean`,
    // `nautobot/ipam/models.py`). An existing prefix is used whoever made
    // it: a prefix claims no interface.
    let links = want.link_parent.iter().map(|p| (p, 1, "container"));
    for (prefix, phase, ty) in links.chain(want.link_prefixes.iter().map(|p| (p, 2, "network"))) {
        if st.prefixes.contains_key(prefix) {
            d.unchanged += 1;
            continue;
        }
        add(
            d,
            "create",
            "prefix",
            prefix.clone(),
            if ty == "container" {
                "parent of the plan's routed /31s (the link pool)".to_string()
            } else {
                "a routed inter-switch cable".to_string()
            },
            None,
            phase,
            if netbox {
                json!({"prefix": prefix, "status": status(flavor, "Active"), "tags": [tag]})
            } else {
                json!({"prefix": prefix, "status": {"name": "Active"}, "namespace": {"name": "Global"},
                       "type": ty, "tags": [tag]})
            },
        );
    }
}

pub(super) fn addresses(cx: &Cx, d: &mut Diff, refused: &mut Vec<String>) {
    let want = cx.want;
    let st = cx.st;
    let flavor = cx.flavor;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    let mine = |v: &Value| cx.mine(v);
    let iface_id = |k: &(String, String)| cx.st.interfaces.get(k).and_then(id_of);
    // NIC addresses: the address (created when missing, owned) and its
    // assignment to the NIC's interface: on Nautobot an assignment object
    // of its own, on NetBox the address's `assigned_object`.
    // A switch's routed port the push creates has no id before phase 2: its
    // address's body gets it when the state is read again.
    for (addr, server, nic) in &want.addresses {
        let object = format!("{addr} on {server} {nic}");
        let iface = iface_id(&(server.clone(), nic.clone()));
        let planned = want.switches.contains_key(server)
            && want
                .ports
                .iter()
                .any(|p| &p.device == server && &p.name == nic);
        if iface.is_none() && !planned && (netbox || st.devices.contains_key(server)) {
            refused.push(format!(
                "{} {server} has no interface {nic} ({}) for the address {addr}; add it (the NIC's name)",
                if want.switches.contains_key(server) { "switch" } else { "server" },
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
                    d,
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
                        d,
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
                        d,
                        "conflict",
                        "ip-address",
                        object,
                        "the address is assigned to another interface; free it or change the plan's address".to_string(),
                        url(ip),
                        4,
                        Value::Null,
                    ),
                    _ if netbox => add(
                        d,
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
                        d,
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
}

pub(super) fn macs(cx: &Cx, d: &mut Diff, refused: &mut Vec<String>) {
    let want = cx.want;
    let st = cx.st;
    let netbox = cx.netbox;
    let tag = &cx.tag;
    let mine = |v: &Value| cx.mine(v);
    let iface_id = |k: &(String, String)| cx.st.interfaces.get(k).and_then(id_of);
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
                    d,
                    "update",
                    "interface",
                    format!("{server} {nic}"),
                    format!("primary MAC address -> {mac}"),
                    url(iv),
                    4,
                    json!({"id": id_json(Some(iface.clone())), "primary_mac_address": id_json(id_of(m))}),
                ),
                Some(_) => add(
                    d,
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
                d,
                "conflict",
                "mac-address",
                object,
                "the MAC address is assigned to another interface; free it or correct the inventory".to_string(),
                url(m),
                3,
                Value::Null,
            ),
            (None, None) => add(
                d,
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
}
