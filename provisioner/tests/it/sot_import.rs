//! `sot import`'s refusals that come from the planner's own check of the
//! inventory it wrote (issue #31): each names the source of truth's object
//! (name and URL) and the field the value came from, never a line of the
//! generated TOML, which the user never sees. The objects are the NetBox
//! test server's EFLOPS 4x16, read by the real client, then one field
//! spoiled as an operator could mistype it.

use std::sync::OnceLock;

use provisioner::sot::import::{Snapshot, fetch, inventory_toml};
use serde_json::{Value, json};

use crate::sot_netbox::import_opts;

/// The EFLOPS objects as `sot import` reads them, once.
pub(crate) fn snapshot() -> Snapshot {
    static S: OnceLock<Snapshot> = OnceLock::new();
    S.get_or_init(|| {
        let served =
            crate::fuzz::sot_served(|_, _, _, _| None, 1, provisioner::sot::Flavor::Netbox)
                .unwrap();
        served
            .rt
            .block_on(fetch(&served.client, &import_opts()))
            .unwrap()
    })
    .clone()
}

/// The first object of `list` for which `pick` holds.
fn first(list: &mut [Value], pick: impl Fn(&Value) -> bool) -> &mut Value {
    list.iter_mut()
        .find(|v| pick(v))
        .expect("the EFLOPS objects hold one")
}

fn kind(v: &Value) -> Option<&str> {
    v["custom_fields"]["topo_kind"].as_str()
}

/// The import's refusal of `snap`: it must name `object` (its name and its
/// URL) and `field`, and no line of the generated TOML (`netbox:12`).
fn refused(snap: &Snapshot, object: &Value, field: &str) -> String {
    refused_one_of(snap, std::slice::from_ref(object), field)
}

/// [`refused`], naming one of `objects`.
fn refused_one_of(snap: &Snapshot, objects: &[Value], field: &str) -> String {
    let e = inventory_toml(snap, &import_opts(), "netbox").expect_err("refused");
    let shown = e.to_string();
    let names = |o: &Value| {
        let (name, url) = (o["name"].as_str().unwrap(), o["url"].as_str().unwrap());
        shown.contains(&format!("{name} ({url})"))
    };
    assert!(
        objects.iter().any(names) && shown.contains(&format!(": {field}: ")),
        "{shown}"
    );
    assert!(
        !shown
            .match_indices("netbox:")
            .any(|(i, m)| shown[i + m.len()..].starts_with(|c: char| c.is_ascii_digit())),
        "a generated line: {shown}"
    );
    assert!(std::error::Error::source(&e).is_none(), "{e:?}");
    shown
}

#[test]
fn sot_import_the_honest_objects_import() {
    inventory_toml(&snapshot(), &import_opts(), "netbox").unwrap();
}

/// A value of the wrong kind for the inventory's type (the TOML reader's
/// refusal, a syntax error at a line): a switch's tier.
#[test]
fn sot_import_a_bad_tier_names_the_switch_and_topo_tier_issue_31() {
    let mut snap = snapshot();
    let sw = first(&mut snap.switches, |_| true);
    sw["custom_fields"]["topo_tier"] = json!("core-ish");
    let sw = sw.clone();
    let shown = refused(&snap, &sw, "custom field topo_tier");
    assert!(shown.contains("device "), "{shown}");
}

/// A number out of range (the checker's refusal): a GPU's lanes, a PCIe
/// switch's generation.
#[test]
fn sot_import_bad_numbers_name_the_item_its_device_and_the_field_issue_31() {
    let mut snap = snapshot();
    let gpu = first(&mut snap.items, |v| kind(v) == Some("gpu"));
    gpu["custom_fields"]["topo_lanes"] = json!(3);
    let gpu = gpu.clone();
    let shown = refused(&snap, &gpu, "custom field topo_lanes");
    assert!(shown.contains("lanes is 3"), "{shown}");

    let mut snap = snapshot();
    let sw = first(&mut snap.items, |v| kind(v) == Some("pcie-switch"));
    sw["custom_fields"]["topo_pcie_gen"] = json!(9);
    let sw = sw.clone();
    refused(&snap, &sw, "custom field topo_pcie_gen");
}

/// A NIC's MAC address comes from its interface: the interface is named.
#[test]
fn sot_import_a_bad_mac_names_the_interface_and_mac_address_issue_31() {
    let mut snap = snapshot();
    let nic = first(&mut snap.items, |v| kind(v) == Some("nic")).clone();
    let device = nic["device"]["id"].clone();
    let port = first(&mut snap.interfaces, |i| {
        i["device"]["id"] == device && i["name"] == nic["name"]
    });
    port["mac_address"] = json!("not-a-mac");
    let port = port.clone();
    refused(&snap, &port, "mac_address");
}

/// A switch's reserved ports and two devices of one name: the device whose
/// field or name is refused.
#[test]
fn sot_import_bad_switch_fields_and_a_twice_used_name_name_the_device_issue_31() {
    let mut snap = snapshot();
    let sw = first(&mut snap.switches, |_| true);
    sw["custom_fields"]["topo_reserved_ports"] = json!("9999");
    let sw = sw.clone();
    refused(&snap, &sw, "custom field topo_reserved_ports");

    let mut snap = snapshot();
    let name = snap.servers[0]["name"].clone();
    snap.servers[1]["name"] = name;
    refused_one_of(&snap, &snap.servers[..2], "name");
}
