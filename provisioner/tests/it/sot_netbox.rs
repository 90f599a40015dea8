//! `provisioner sot` against NetBox: the round trip of issue #35 (load the
//! EFLOPS 4x16 inventory, import it back, design, push, push again, plant
//! the cabling faults, read them back) against the NetBox 4.6 test server
//! of `tests/support/netbox_server.rs`, written from NetBox's documentation
//! and source apart from the client. NetBox cannot run here (it is not on
//! PyPI); docs/source-of-truth.md lists what this checks and what not.
//!
//! The loader below writes the inventory the way NetBox's REST API
//! documentation shows (docs/integrations/rest-api.md, v4.6.8), with its
//! own HTTP calls: not through the client under test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use planner::design::DesignOptions;
use planner::inventory::{Attachment, Inventory};
use provisioner::sot::import::ImportOptions;
use provisioner::sot::push::{PushOptions, owner_tag};
use provisioner::sot::{Client, Flavor, Limits, Settings, SotError, TokenSource};
use serde_json::{Value, json};

#[path = "../support/netbox_server.rs"]
pub(crate) mod netbox_server;
use netbox_server::NetBox;

use crate::a_sot::{
    built_cabling, conflict_of, dry_run, objects_of, plan_rows, push_again_changes_nothing,
    push_clean, push_options, racked_design, racked_inventory, rows, same_breakout_design,
    same_findings_as_csv, taller, with_places,
};

pub(crate) const SITE: &str = "eflops-lab";
/// A v2 token (`nbt_<key>.<plaintext>`, NetBox 4.5+) and a v1 token.
const V2_KEY: &str = "k3y0123456";
const V2_PLAIN: &str = "s3cr3tpl41nt3xt0123456789abcdef";
pub(crate) const V1: &str = "0123456789abcdef0123456789abcdef01234567";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Server {
    nb: Arc<Mutex<NetBox>>,
    base: String,
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    v2_file: PathBuf,
    v1_file: PathBuf,
}

fn token_file(dir: &Path, name: &str, token: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, format!("{token}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    f
}

fn start() -> Server {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut nb = NetBox::new();
    nb.v1.push(V1.to_string());
    nb.v2.push((V2_KEY.to_string(), V2_PLAIN.to_string()));
    let nb = Arc::new(Mutex::new(nb));
    let base = rt.block_on(netbox_server::serve(nb.clone()));
    let dir = tempfile::tempdir().unwrap();
    let v2_file = token_file(dir.path(), "v2", &format!("nbt_{V2_KEY}.{V2_PLAIN}"));
    let v1_file = token_file(dir.path(), "v1", V1);
    Server {
        nb,
        base,
        rt,
        _dir: dir,
        v2_file,
        v1_file,
    }
}

impl Server {
    fn client(&self, token: &Path, page_size: usize) -> Client {
        Client::new(&Settings {
            flavor: Flavor::Netbox,
            url: format!("{}/api", self.base),
            token: TokenSource::File(token.to_path_buf()),
            ca_file: None,
            limits: Limits {
                page_size,
                ..Limits::default()
            },
        })
        .unwrap()
    }

    /// One raw request of the loader, as NetBox's REST API documentation
    /// writes them (a v1 token, JSON bodies).
    fn raw(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        self.rt.block_on(async {
            let mut req = reqwest::Client::new()
                .request(method, &url)
                .header("Authorization", format!("Token {V1}"))
                .header("Accept", "application/json");
            if let Some(b) = body {
                req = req.json(&b);
            }
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        })
    }

    /// Creates objects (bulk POST) and returns them; any refusal fails.
    fn post(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.raw(reqwest::Method::POST, path, Some(body));
        assert_eq!(status, 201, "POST {path}: {v}");
        v
    }

    fn get_all(&self, path: &str, query: &str) -> Vec<Value> {
        let (status, v) = self.raw(
            reqwest::Method::GET,
            &format!("{path}?limit=1000&{query}"),
            None,
        );
        assert_eq!(status, 200, "GET {path}?{query}: {v}");
        v["results"].as_array().cloned().unwrap()
    }

    /// Marks the cables connected (one bulk PATCH).
    fn connect(&self, cables: &[Value]) {
        let ids: Vec<Value> = cables
            .iter()
            .map(|x| json!({"id": x["id"], "status": "connected"}))
            .collect();
        let (st, v) = self.raw(
            reqwest::Method::PATCH,
            "/api/dcim/cables/",
            Some(Value::Array(ids)),
        );
        assert_eq!(st, 200, "{v}");
    }

    fn writes(&self) -> usize {
        self.nb.lock().unwrap().log.len()
    }
}

/// The objects of a test server holding the EFLOPS 4x16 inventory (with
/// its MACs), and that inventory: what the fuzz target of issue #31 serves
/// again for each case.
pub(crate) fn loaded_eflops() -> (netbox_server::Db, Inventory) {
    let srv = start();
    let inv = Inventory::from_toml(&inventory_text(), "eflops-4x16.toml").unwrap();
    load(&srv, &inv);
    let db = srv.nb.lock().unwrap().db.clone();
    (db, inv)
}

/// The EFLOPS 4x16 inventory with a MAC address per NIC (NetBox keeps MACs
/// as objects of their own).
fn inventory_text() -> String {
    let text = std::fs::read_to_string(root().join("topologies/eflops-4x16.toml")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(k) = line
            .strip_prefix("ip = \"10.100.{n}.")
            .and_then(|r| r.strip_suffix("/24\""))
        {
            out.push_str(&format!("mac = \"02:00:00:00:{{n:02x}}:0{k}\"\n"));
        }
    }
    out
}

fn slugify(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn iface_type(gbps: u32) -> &'static str {
    match gbps {
        25 => "25gbase-x-sfp28",
        200 => "200gbase-x-qsfp56",
        400 => "400gbase-x-qsfpdd",
        _ => "100gbase-x-qsfp28",
    }
}

/// Loads an inventory into NetBox: custom fields, the site, manufacturer,
/// device types and roles, devices, interfaces, MAC addresses (assigned,
/// then made primary), inventory items (PCIe switches with their GPUs and
/// NICs as children), prefixes and addresses assigned to interfaces.
fn load(srv: &Server, inv: &Inventory) {
    let mut cfs = Vec::new();
    for (name, ty) in [
        ("topo_sockets", "text"),
        ("topo_tier", "text"),
        ("topo_reserved_ports", "text"),
        ("topo_virtual", "json"),
        ("topo_breakout", "text"),
    ] {
        cfs.push(json!({"name": name, "type": ty, "object_types": ["dcim.device"]}));
    }
    for (name, ty) in [
        ("topo_kind", "text"),
        ("topo_socket", "text"),
        ("topo_root_port", "text"),
        ("topo_lanes", "integer"),
        ("topo_pcie_gen", "integer"),
        ("topo_slots", "integer"),
        ("topo_slot", "text"),
        ("topo_memory_gb", "integer"),
        ("topo_speed_gbps", "integer"),
        ("topo_ports", "integer"),
        ("topo_netdev", "text"),
    ] {
        cfs.push(json!({"name": name, "type": ty, "object_types": ["dcim.inventoryitem"]}));
    }
    srv.post("/api/extras/custom-fields/", Value::Array(cfs));
    let site = srv.post(
        "/api/dcim/sites/",
        json!({"name": SITE, "slug": SITE, "status": "active"}),
    )["id"]
        .clone();
    let maker = srv.post(
        "/api/dcim/manufacturers/",
        json!({"name": "Generic", "slug": "generic"}),
    )["id"]
        .clone();
    let mut models: BTreeSet<String> = inv
        .server_templates
        .iter()
        .filter_map(|t| t.model.clone())
        .collect();
    models.extend(inv.switch_templates.iter().map(|t| t.model.clone()));
    let types: Vec<Value> = models
        .iter()
        .map(|m| json!({"manufacturer": maker, "model": m, "slug": slugify(m)}))
        .collect();
    srv.post("/api/dcim/device-types/", Value::Array(types));
    for role in ["gpu-server", "fabric-switch"] {
        srv.post(
            "/api/dcim/device-roles/",
            json!({"name": role, "slug": role}),
        );
    }
    let mut devices = Vec::new();
    for s in &inv.servers {
        let t = &inv.server_templates[s.template];
        devices.push(json!({"name": s.name, "device_type": {"model": t.model}, "role": {"slug": "gpu-server"},
            "site": site, "status": "active", "custom_fields": {"topo_sockets": t.sockets.join(",")}}));
    }
    for s in &inv.switches {
        let t = &inv.switch_templates[s.template];
        let halves: Vec<Value> = t
            .virtual_switches
            .iter()
            .map(|v| json!({"suffix": v.suffix, "ports": v.ports, "vlan": v.vlan, "part": v.part.as_str()}))
            .collect();
        let mut cf = if halves.is_empty() {
            json!({})
        } else {
            json!({"topo_virtual": halves})
        };
        if let Some(r) = t.role {
            cf["topo_tier"] = json!(format!("{r:?}").to_lowercase());
        }
        devices.push(json!({"name": s.name, "device_type": {"model": t.model}, "role": {"slug": "fabric-switch"},
            "site": site, "status": "active", "custom_fields": cf}));
    }
    let devices = srv.post("/api/dcim/devices/", Value::Array(devices));
    let dev_id = |name: &str| {
        devices
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .map(|d| d["id"].clone())
            .unwrap()
    };
    // Interfaces: every switch port, every NIC's port.
    let mut ifaces = Vec::new();
    for s in &inv.switches {
        let t = &inv.switch_templates[s.template];
        for p in 1..=t.ports {
            ifaces.push(json!({"device": dev_id(&s.name), "name": t.port_name(p),
                "type": iface_type(t.port_gbps), "speed": u64::from(t.port_gbps) * 1_000_000}));
        }
    }
    for s in &inv.servers {
        let t = &inv.server_templates[s.template];
        for n in &t.nics {
            ifaces.push(json!({"device": dev_id(&s.name), "name": n.name,
                "type": iface_type(n.speed_gbps), "speed": u64::from(n.speed_gbps) * 1_000_000}));
        }
    }
    let ifaces = srv.post("/api/dcim/interfaces/", Value::Array(ifaces));
    let if_id = |dev: &str, name: &str| {
        let d = dev_id(dev);
        ifaces
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["device"]["id"] == d && i["name"] == name)
            .map(|i| i["id"].clone())
            .unwrap()
    };
    // MACs, prefixes, addresses; inventory items.
    let (mut macs, mut owners, mut ips, mut nets) =
        (Vec::new(), Vec::new(), Vec::new(), BTreeSet::new());
    let mut pcie = Vec::new();
    for s in &inv.servers {
        let t = &inv.server_templates[s.template];
        for (k, n) in t.nics.iter().enumerate() {
            let addr = s.nic_addresses.get(k).cloned().unwrap_or_default();
            let iface = if_id(&s.name, &n.name);
            if let Some(m) = addr.mac {
                macs.push(
                    json!({"mac_address": m, "assigned_object_type": "dcim.interface",
                    "assigned_object_id": iface}),
                );
                owners.push(iface.clone());
            }
            if let Some(ip) = addr.ip {
                let (host, len) = ip.split_once('/').unwrap();
                let o: Vec<&str> = host.split('.').collect();
                nets.insert(format!("{}.{}.{}.0/{len}", o[0], o[1], o[2]));
                ips.push(json!({"address": ip, "status": "active", "assigned_object_type": "dcim.interface",
                    "assigned_object_id": iface}));
            }
        }
        for p in &t.pcie_switches {
            pcie.push(json!({"device": dev_id(&s.name), "name": p.name, "part_id": p.model.clone().unwrap_or_default(),
                "custom_fields": {"topo_kind": "pcie-switch", "topo_socket": t.sockets[p.socket],
                    "topo_root_port": p.root_port, "topo_lanes": p.lanes, "topo_pcie_gen": p.pcie_gen,
                    "topo_slots": p.slots}}));
        }
    }
    let macs = srv.post("/api/dcim/mac-addresses/", Value::Array(macs));
    let primary: Vec<Value> = owners
        .iter()
        .zip(macs.as_array().unwrap())
        .map(|(i, m)| json!({"id": i, "primary_mac_address": m["id"]}))
        .collect();
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        "/api/dcim/interfaces/",
        Some(Value::Array(primary)),
    );
    assert_eq!(st, 200, "{v}");
    let nets: Vec<Value> = nets
        .iter()
        .map(|p| json!({"prefix": p, "status": "active"}))
        .collect();
    srv.post("/api/ipam/prefixes/", Value::Array(nets));
    srv.post("/api/ipam/ip-addresses/", Value::Array(ips));
    let pcie = srv.post("/api/dcim/inventory-items/", Value::Array(pcie));
    let mut children = Vec::new();
    for s in &inv.servers {
        let t = &inv.server_templates[s.template];
        let d = dev_id(&s.name);
        let parent = |a: &Attachment| -> (Value, Value) {
            match a {
                Attachment::PcieSwitch(i) => {
                    let name = &t.pcie_switches[*i].name;
                    let id = pcie
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|p| p["device"]["id"] == d && p["name"] == name.as_str())
                        .map(|p| p["id"].clone())
                        .unwrap();
                    (id, Value::Null)
                }
                Attachment::RootPort(sock) => (Value::Null, json!(t.sockets[*sock])),
            }
        };
        for g in &t.gpus {
            let (p, sock) = parent(&g.attachment);
            children.push(
                json!({"device": d, "parent": p, "name": g.name, "part_id": g.model,
                "custom_fields": {"topo_kind": "gpu", "topo_socket": sock, "topo_slot": g.slot,
                    "topo_lanes": g.lanes, "topo_memory_gb": g.memory_gb}}),
            );
        }
        for n in &t.nics {
            let (p, sock) = parent(&n.attachment);
            children.push(
                json!({"device": d, "parent": p, "name": n.name, "part_id": n.model,
                "custom_fields": {"topo_kind": "nic", "topo_socket": sock, "topo_slot": n.slot,
                    "topo_lanes": n.lanes, "topo_speed_gbps": n.speed_gbps, "topo_ports": n.ports,
                    "topo_netdev": n.netdev}}),
            );
        }
    }
    srv.post("/api/dcim/inventory-items/", Value::Array(children));
}

pub(crate) fn import_opts() -> ImportOptions {
    ImportOptions {
        location: Some(SITE.to_string()),
        server_role: "gpu-server".to_string(),
        switch_role: "fabric-switch".to_string(),
        name: Some("eflops-4x16".to_string()),
    }
}

#[test]
fn netbox_round_trip_import_design_push_push_again_planted_faults_issue_35() {
    let srv = start();
    let text = inventory_text();
    let original = Inventory::from_toml(&text, "eflops-4x16.toml").unwrap();
    load(&srv, &original);
    // Another site with servers and a connected cable of its own: every
    // read must keep to the site (`site=`; NetBox ignores `location=` on
    // cables, and its devices' `location` is another object).
    let other = srv.post(
        "/api/dcim/sites/",
        json!({"name": "other-lab", "slug": "other-lab"}),
    )["id"]
        .clone();
    let strangers = srv.post(
        "/api/dcim/devices/",
        json!([{"name": "stranger01", "device_type": {"model": "2x Xeon Platinum 8163, 2x PEX 9797"},
                "role": {"slug": "gpu-server"}, "site": other},
               {"name": "stranger02", "device_type": {"model": "2x Xeon Platinum 8163, 2x PEX 9797"},
                "role": {"slug": "gpu-server"}, "site": other}]),
    );
    let ports: Vec<Value> = strangers
        .as_array()
        .unwrap()
        .iter()
        .map(|d| json!({"device": d["id"], "name": "mlx5_0", "type": "100gbase-x-qsfp28"}))
        .collect();
    let ports = srv.post("/api/dcim/interfaces/", Value::Array(ports));
    srv.post(
        "/api/dcim/cables/",
        json!({"a_terminations": [{"object_type": "dcim.interface", "object_id": ports[0]["id"]}],
               "b_terminations": [{"object_type": "dcim.interface", "object_id": ports[1]["id"]}]}),
    );
    // A v2 token, and pages of 100 so every list is read over several.
    let c = srv.client(&srv.v2_file, 100);
    let rt = &srv.rt;

    // Import: the inventory read back designs the same fabric, MACs too.
    let opts = import_opts();
    let snap = rt
        .block_on(provisioner::sot::import::fetch(&c, &opts))
        .unwrap();
    let toml = provisioner::sot::import::inventory_toml(&snap, &opts, "netbox").unwrap();
    let imported = Inventory::from_toml(&toml, "imported.toml").unwrap();
    assert_eq!(imported.servers.len(), 16);
    assert_eq!(imported.switches.len(), 8);
    assert_eq!(imported.sub_node_count(), 64);
    assert!(toml.contains("mac = \"02:00:00:00:10:04\""), "{toml}");
    let ours = planner::design::design(&imported, &DesignOptions::default()).unwrap();
    let theirs = planner::design::design(&original, &DesignOptions::default()).unwrap();
    let (ours, theirs) = (ours.plan(), theirs.plan());
    assert_eq!(ours.cables, theirs.cables);
    assert_eq!(ours.switch_list, theirs.switch_list);
    assert_eq!(ours.sub_node_list, theirs.sub_node_list);
    assert!(ours.sub_node_list.iter().all(|s| s.mac.is_some()));

    // Push, then push again: nothing left to do, and not one write sent.
    let popts = push_options(SITE);
    let first = push_clean(rt, &c, ours, &popts, &mut |_| {});
    assert_eq!(
        first.created,
        1 + 2 + 128 + 1 + 64 + 128,
        "the tag, 2 VLANs, 128 cables, the link pool, 64 /31s and their 128 \
         switch addresses (the NICs' addresses, MACs, prefixes were loaded)"
    );
    assert_eq!(
        first.updated,
        8 * 24,
        "every used switch port set (24 of 32): 8 access ports, 16 routed"
    );
    let mark = srv.writes();
    push_again_changes_nothing(rt, &c, ours, &popts);
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "{writes:?}");

    // NetBox holds what was pushed: planned cables with labels and the
    // tag, access ports in their half's VLAN.
    let tag = owner_tag(&ours.name);
    let cables = srv.get_all("/api/dcim/cables/", &format!("site={SITE}"));
    assert_eq!(cables.len(), ours.cables.len());
    assert!(cables.iter().all(|x| x["status"]["value"] == "planned"));
    assert!(cables.iter().all(|x| x["tags"][0]["name"] == tag.as_str()));
    assert!(cables.iter().any(|x| x["label"] == "sw01:9>node01:mlx5_0"));
    let lower = (ours.switch_list.iter())
        .find(|s| s.name == "sw01-l")
        .unwrap();
    let role = |p: u32| (lower.ports.iter()).find(|x| x.port == p).unwrap().role;
    assert_eq!(role(25), planner::plan::PortRole::SubNode);
    let port = srv.get_all(
        "/api/dcim/interfaces/",
        "device=sw01&name=HundredGigE1%2F0%2F25",
    );
    assert_eq!(port[0]["mode"]["value"], "access");
    assert_eq!(port[0]["untagged_vlan"]["vid"], 102);
    // An inter-switch port is routed: no mode, no VLAN, its /31.
    assert_eq!(role(20), planner::plan::PortRole::InterSwitch);
    let port = srv.get_all(
        "/api/dcim/interfaces/",
        "device=sw01&name=HundredGigE1%2F0%2F20",
    );
    assert_eq!(port[0]["mode"]["value"].as_str().unwrap_or(""), "");
    assert!(port[0]["untagged_vlan"].is_null());
    assert!(
        port[0]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tag.as_str())
    );
    let held: Vec<Value> = srv
        .get_all("/api/ipam/ip-addresses/", "")
        .into_iter()
        .filter(|a| a["assigned_object_id"] == port[0]["id"])
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    assert!(held[0]["address"].as_str().unwrap().ends_with("/31"));

    // A MAC the source of truth lost is created again, as its own object,
    // and made the interface's primary MAC; then nothing is left to do.
    let nic = srv.get_all("/api/dcim/interfaces/", "device=node16&name=mlx5_3");
    let mac_id = nic[0]["primary_mac_address"]["id"].as_u64().unwrap();
    let (st, _) = srv.raw(
        reqwest::Method::DELETE,
        &format!("/api/dcim/mac-addresses/{mac_id}/"),
        None,
    );
    assert_eq!(st, 204);
    let fixed = rt
        .block_on(provisioner::sot::push::push(&c, ours, &popts, &mut |_| {}))
        .unwrap();
    assert_eq!((fixed.created, fixed.updated), (1, 1), "{:?}", fixed.diff);
    let nic = srv.get_all("/api/dcim/interfaces/", "device=node16&name=mlx5_3");
    assert_eq!(nic[0]["mac_address"], "02:00:00:00:10:04");
    assert_eq!(
        nic[0]["mac_addresses"][0]["mac_address"],
        "02:00:00:00:10:04"
    );
    let mark = srv.writes();
    let settled = rt
        .block_on(provisioner::sot::push::push(&c, ours, &popts, &mut |_| {}))
        .unwrap();
    assert!(
        settled.diff.changes.is_empty(),
        "{:?}",
        settled.diff.changes
    );
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "{writes:?}");

    // As built: the crew connected everything, with the mistakes of the
    // miswired CSV. Plant them in NetBox.
    srv.connect(&cables);
    let planned = rows(&root().join("examples/data/eflops-4x16.cables.csv"));
    let built = rows(&root().join("examples/data/eflops-4x16.miswired.csv"));
    let gone: Vec<_> = planned.difference(&built).collect();
    let new: Vec<_> = built.difference(&planned).collect();
    let label = |r: &(String, String, String, String)| format!("{}:{}>{}:{}", r.0, r.1, r.2, r.3);
    let doomed: Vec<Value> = cables
        .iter()
        .filter(|x| gone.iter().any(|r| x["label"] == label(r)))
        .map(|x| json!({"id": x["id"]}))
        .collect();
    assert_eq!(doomed.len(), gone.len());
    let (st, v) = srv.raw(
        reqwest::Method::DELETE,
        "/api/dcim/cables/",
        Some(Value::Array(doomed)),
    );
    assert_eq!(st, 204, "{v}");
    let ifaces = srv.get_all("/api/dcim/interfaces/", &format!("site={SITE}"));
    let iface = |dev: &str, port: &str| -> Value {
        let name = if port.chars().all(|ch| ch.is_ascii_digit()) && dev.starts_with("sw") {
            format!("HundredGigE1/0/{port}")
        } else {
            port.to_string()
        };
        ifaces
            .iter()
            .find(|i| i["device"]["name"] == dev && i["name"] == name.as_str())
            .map(|i| i["id"].clone())
            .unwrap_or_else(|| panic!("no interface {dev} {name}"))
    };
    let planted: Vec<Value> = new
        .iter()
        .map(|r| {
            json!({"a_terminations": [{"object_type": "dcim.interface", "object_id": iface(&r.0, &r.1)}],
                   "b_terminations": [{"object_type": "dcim.interface", "object_id": iface(&r.2, &r.3)}],
                   "status": "connected"})
        })
        .collect();
    srv.post("/api/dcim/cables/", Value::Array(planted));

    // The findings from NetBox are those of the CSV (less its speeds: a
    // cable has no line rate), each about a built cable with its URL.
    let observed = built_cabling(rt, &c, SITE, "netbox");
    same_findings_as_csv(
        ours,
        &observed,
        &built,
        &srv.base,
        &["crossed", "missing", "extra", "wrong-vlan-half"],
    );

    // Pushing now meets cables the plan does not own on its ports:
    // conflicts with their URLs, and not one write.
    let mark = srv.writes();
    let blocked = rt
        .block_on(provisioner::sot::push::push(&c, ours, &popts, &mut |_| {}))
        .unwrap();
    assert!(!blocked.diff.conflicts.is_empty());
    assert_eq!((blocked.created, blocked.updated), (0, 0));
    assert!(blocked.diff.conflicts.iter().all(|x| x.url.is_some()));
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "{writes:?}");

    // Import refuses what the inventory cannot express, naming the item
    // and its URL.
    let node01 = srv.get_all("/api/dcim/devices/", "name=node01");
    let fpga = srv.post(
        "/api/dcim/inventory-items/",
        json!({"device": node01[0]["id"], "name": "fpga0", "custom_fields": {"topo_kind": "fpga"}}),
    );
    let snap = rt
        .block_on(provisioner::sot::import::fetch(&c, &opts))
        .unwrap();
    match provisioner::sot::import::inventory_toml(&snap, &opts, "netbox") {
        Err(SotError::Refused { problems, .. }) => {
            let url = fpga["url"].as_str().unwrap();
            assert!(
                problems
                    .iter()
                    .any(|p| p.contains("fpga0") && p.contains(url)),
                "{problems:?}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Breakouts (issue #35 item 4) on NetBox 4.5+: a switch loaded with one
/// interface per lane (`1s0`, `1s1`, ...) imports as `breakout = "2x200G"`;
/// the push gives it its cages and one cable per cage with the profile
/// `breakout-1c2p-2c1p` (the cage on A, a leg per lane on B in lane order);
/// a second push changes nothing; a cage's legs swapped and another's
/// second leg missing are the CSV path's findings, named with the cable's
/// URL and connector.
#[test]
fn netbox_breakout_cables_carry_a_profile_and_lane_faults_are_found_issue_35() {
    let (srv, c, plan) = breakout_loaded();
    let rt = &srv.rt;
    let ours = &plan;

    let popts = push_options(SITE);
    let first = push_clean(rt, &c, ours, &popts, &mut |_| {});
    let made = |kind: &str| {
        (first.diff.changes.iter())
            .filter(|x| x.kind == kind && x.action == "create")
            .count()
    };
    assert_eq!(made("cable"), 32, "a cable per cage");
    assert_eq!(
        made("interface"),
        32,
        "the leaves' cages beside their lanes"
    );
    push_again_changes_nothing(rt, &c, ours, &popts);

    let cables = srv.get_all("/api/dcim/cables/", "");
    assert_eq!(cables.len(), 32);
    for x in &cables {
        assert_eq!(x["profile"]["value"], "breakout-1c2p-2c1p", "{x}");
        assert_eq!(x["a_terminations"].as_array().unwrap().len(), 1, "{x}");
        assert_eq!(x["b_terminations"].as_array().unwrap().len(), 2, "{x}");
    }
    let ifaces = srv.get_all("/api/dcim/interfaces/", "");
    let name_of = |t: &Value| -> (String, String) {
        let i = ifaces.iter().find(|i| i["id"] == t["object_id"]).unwrap();
        (
            i["device"]["name"].as_str().unwrap().to_string(),
            i["name"].as_str().unwrap().to_string(),
        )
    };
    let planned = plan_rows(ours);
    for x in &cables {
        let (sw, cage) = name_of(&x["a_terminations"][0]);
        for (k, t) in x["b_terminations"].as_array().unwrap().iter().enumerate() {
            let (dev, port) = name_of(t);
            let lane = format!("{cage}s{k}");
            assert!(
                planned.contains(&(sw.clone(), lane.clone(), dev.clone(), port.clone()))
                    || planned.contains(&(dev.clone(), port.clone(), sw.clone(), lane.clone())),
                "{sw} {lane} - {dev} {port} is not planned"
            );
        }
    }

    // As built: connected; leaf01's cage 9 with its legs swapped, cage 10
    // without its second leg.
    srv.connect(&cables);
    let by_label = |l: &str| cables.iter().find(|x| x["label"] == l).unwrap().clone();
    let (swapped, short) = (by_label("leaf01:9>2x200G"), by_label("leaf01:10>2x200G"));
    let (st, v) = srv.raw(
        reqwest::Method::DELETE,
        "/api/dcim/cables/",
        Some(json!([{"id": swapped["id"]}, {"id": short["id"]}])),
    );
    assert_eq!(st, 204, "{v}");
    let sb = swapped["b_terminations"].as_array().unwrap();
    let hb = short["b_terminations"].as_array().unwrap();
    let made = srv.post(
        "/api/dcim/cables/",
        json!([
            {"profile": "breakout-1c2p-2c1p", "status": "connected",
             "a_terminations": swapped["a_terminations"], "b_terminations": [sb[1], sb[0]]},
            {"profile": "breakout-1c2p-2c1p", "status": "connected",
             "a_terminations": short["a_terminations"], "b_terminations": [hb[0]]},
        ]),
    );
    let row = |lane: &str, t: &Value| {
        let (dev, port) = name_of(t);
        ("leaf01".to_string(), lane.to_string(), dev, port)
    };
    let mut built = planned.clone();
    for (lane, t) in [("9s0", &sb[0]), ("9s1", &sb[1]), ("10s1", &hb[1])] {
        assert!(built.remove(&row(lane, t)), "{lane} not planned");
    }
    built.insert(row("9s0", &sb[1]));
    built.insert(row("9s1", &sb[0]));
    let observed = built_cabling(rt, &c, SITE, "netbox");
    same_findings_as_csv(ours, &observed, &built, &srv.base, &["crossed", "missing"]);
    let v = planner::validate::validate_cabling(ours, &observed, &["netbox".to_string()]);
    let crossed = v.findings.iter().find(|f| f.kind == "crossed").unwrap();
    let src = crossed.source.as_deref().unwrap_or("");
    assert!(
        src.contains(made[0]["url"].as_str().unwrap()) && src.contains("connector B"),
        "{crossed:?}"
    );

    // A profile that cannot hold the legs is NetBox's refusal.
    let (st, v) = srv.raw(
        reqwest::Method::POST,
        "/api/dcim/cables/",
        Some(
            json!({"profile": "single-1c2p", "a_terminations": short["a_terminations"],
                    "b_terminations": [hb[1], sb[0]]}),
        ),
    );
    assert_eq!(st, 400, "{v}");
    assert!(
        v.to_string().contains(
            "B side of cable has 2 terminations but only 1 are permitted for profile 1C2P"
        ),
        "{v}"
    );
}

/// ETag/If-Match (issue #35 item 5) on NetBox 4.6: the push updates each
/// object alone with the `If-Match` of its ETag; someone else saving an
/// interface between the push's read and its write is a 412, reported as a
/// concurrent edit naming the interface's URL, with every interface
/// written before it whole and none after; a push then finishes the job.
#[test]
fn netbox_push_sends_if_match_and_a_412_mid_push_is_a_concurrent_edit_issue_35() {
    let srv = start();
    let inv = Inventory::from_toml(&inventory_text(), "eflops-4x16.toml").unwrap();
    load(&srv, &inv);
    let c = srv.client(&srv.v2_file, 100);
    let rt = &srv.rt;
    let design = planner::design::design(&inv, &DesignOptions::default()).unwrap();
    let plan = design.plan();
    let popts = push_options(SITE);
    srv.nb.lock().unwrap().edit_after_get = Some("dcim/interfaces".to_string());
    let mark = srv.nb.lock().unwrap().log.len();
    let e = rt
        .block_on(provisioner::sot::push::push(&c, plan, &popts, &mut |_| {}))
        .unwrap_err();
    let SotError::Refused { what, problems } = &e else {
        panic!("expected a concurrent edit, got {e:?}");
    };
    assert!(what.contains("concurrent edit"), "{what}");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("interface sw")
            && problems[0].contains(&format!("{}/api/dcim/interfaces/", srv.base))
            && problems[0].contains("HTTP 412 to If-Match W/\""),
        "{problems:?}"
    );
    {
        let nb = srv.nb.lock().unwrap();
        let patches: Vec<_> = nb.log[mark..]
            .iter()
            .filter(|l| l.method == "PATCH" && l.path.starts_with("/api/dcim/interfaces"))
            .collect();
        assert!(!patches.is_empty());
        assert!(
            patches
                .iter()
                .all(|l| l.path != "/api/dcim/interfaces/" && l.if_match.is_some()),
            "every interface update is one object with If-Match"
        );
        assert_eq!(patches.iter().filter(|l| l.status == 412).count(), 1);
        assert_eq!(patches.last().unwrap().status, 412, "nothing after the 412");
    }
    // Each switch port is either as planned or as it was: none half-written.
    let tag = owner_tag(&plan.name);
    let switches: BTreeSet<&str> = plan
        .switch_list
        .iter()
        .map(|s| s.physical.as_str())
        .collect();
    let mut set = 0;
    for i in srv.get_all("/api/dcim/interfaces/", "") {
        if !switches.contains(i["device"]["name"].as_str().unwrap_or("")) {
            continue;
        }
        let tagged = i["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == tag.as_str());
        let mode = i["mode"]["value"].as_str().unwrap_or("");
        if tagged {
            set += 1;
            // An access port in its half's VLAN, or a routed port.
            let routed = mode.is_empty() && i["untagged_vlan"].is_null();
            assert!(
                routed || (mode == "access" && !i["untagged_vlan"].is_null()),
                "{i}"
            );
        } else {
            assert_eq!(mode, "", "{i}");
            assert!(i["untagged_vlan"].is_null(), "{i}");
        }
    }
    let ok = srv.nb.lock().unwrap().log[mark..]
        .iter()
        .filter(|l| {
            l.method == "PATCH" && l.status == 200 && l.path.starts_with("/api/dcim/interfaces/")
        })
        .count();
    assert_eq!(set, ok, "the interfaces written are those answered 200");

    // Without the other writer the push finishes, and a second has nothing left.
    let done = rt
        .block_on(provisioner::sot::push::push(&c, plan, &popts, &mut |_| {}))
        .unwrap();
    assert!(done.diff.conflicts.is_empty(), "{:?}", done.diff.conflicts);
    push_again_changes_nothing(rt, &c, plan, &popts);
}

/// A push into an empty site creates the switches themselves (site and
/// role by slug), their ports, the NIC addresses assigned to their
/// interfaces and the MACs as objects; an import of a site NetBox does not
/// know is NetBox's refusal, named.
#[test]
fn netbox_push_creates_switches_ports_addresses_and_macs() {
    let srv = start();
    let text = inventory_text();
    let inv = Inventory::from_toml(&text, "eflops-4x16.toml").unwrap();
    let design = planner::design::design(&inv, &DesignOptions::default()).unwrap();
    let plan = design.plan();
    // Only the servers, their NIC interfaces, and the models and roles: no
    // switches, addresses or MACs.
    let site = srv.post("/api/dcim/sites/", json!({"name": SITE, "slug": SITE}))["id"].clone();
    let maker = srv.post(
        "/api/dcim/manufacturers/",
        json!({"name": "G", "slug": "g"}),
    )["id"]
        .clone();
    for (m, slug) in [("srv", "srv"), ("H3C S9850-4C", "h3c")] {
        srv.post(
            "/api/dcim/device-types/",
            json!({"manufacturer": maker, "model": m, "slug": slug}),
        );
    }
    for role in ["gpu-server", "fabric-switch"] {
        srv.post(
            "/api/dcim/device-roles/",
            json!({"name": role, "slug": role}),
        );
    }
    let servers: Vec<Value> = inv
        .servers
        .iter()
        .map(|s| json!({"name": s.name, "device_type": {"model": "srv"}, "role": {"slug": "gpu-server"}, "site": site}))
        .collect();
    let servers = srv.post("/api/dcim/devices/", Value::Array(servers));
    let nics: Vec<Value> = servers
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| {
            (0..4).map(move |k| json!({"device": d["id"], "name": format!("mlx5_{k}"), "type": "100gbase-x-qsfp28"}))
        })
        .collect();
    srv.post("/api/dcim/interfaces/", Value::Array(nics));

    let c = srv.client(&srv.v1_file, 500);
    let popts = PushOptions {
        location: Some(SITE.to_string()),
        switch_role: "fabric-switch".to_string(),
        dry_run: false,
        batch: 250,
    };
    let first = srv
        .rt
        .block_on(provisioner::sot::push::push(&c, plan, &popts, &mut |_| {}))
        .unwrap();
    assert!(
        first.diff.conflicts.is_empty(),
        "{:?}",
        first.diff.conflicts
    );
    let nb = srv.nb.lock().unwrap();
    assert_eq!(nb.objects("dcim/devices").len(), 16 + 8);
    assert_eq!(
        nb.objects("ipam/prefixes").len(),
        16 + 1 + 64,
        "the NICs' prefixes, the link pool, a /31 per inter-switch cable"
    );
    let ips = nb.objects("ipam/ip-addresses");
    assert_eq!(ips.len(), 64 + 128, "the NICs' and both ends of each /31");
    assert!(
        ips.iter()
            .all(|i| i["assigned_object_type"] == "dcim.interface" && i["status"] == "active")
    );
    let macs = nb.objects("dcim/mac-addresses");
    assert_eq!(macs.len(), 64);
    let ifaces = nb.objects("dcim/interfaces");
    let with_primary = ifaces
        .iter()
        .filter(|i| i["primary_mac_address"].is_u64())
        .count();
    assert_eq!(with_primary, 64);
    assert_eq!(
        ifaces.len(),
        64 + 8 * 24,
        "the NICs, and the switch ports the plan uses (24 of 32 each)"
    );
    drop(nb);
    let again = srv
        .rt
        .block_on(provisioner::sot::push::push(&c, plan, &popts, &mut |_| {}))
        .unwrap();
    assert!(again.diff.changes.is_empty(), "{:?}", again.diff.changes);

    // NetBox refuses a site slug it does not know (a validated filter);
    // the client's error carries NetBox's words.
    let e = srv
        .rt
        .block_on(provisioner::sot::import::fetch(
            &c,
            &ImportOptions {
                location: Some("nowhere".to_string()),
                ..import_opts()
            },
        ))
        .unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains("nowhere is not one of the available choices")
            && text.contains("/api/dcim/devices/"),
        "{text}"
    );
}

/// What the test server refuses the way NetBox does, checked on its own:
/// the Nautobot shapes the client must not send.
#[test]
fn netbox_server_refuses_what_netbox_refuses() {
    let srv = start();
    let site = srv.post("/api/dcim/sites/", json!({"name": "s", "slug": "s"}))["id"].clone();
    let check = |path: &str, body: Value, want: &str| {
        let (st, v) = srv.raw(reqwest::Method::POST, path, Some(body));
        assert_eq!(st, 400, "{path}: {v}");
        assert!(v.to_string().contains(want), "{path}: {v}");
    };
    // Statuses by name, as Nautobot writes them.
    check(
        "/api/ipam/vlans/",
        json!({"vid": 5, "name": "v", "status": {"name": "Active"}}),
        "Value must be passed directly",
    );
    check(
        "/api/ipam/vlans/",
        json!({"vid": 5, "name": "v", "status": "Active"}),
        "Active is not a valid choice.",
    );
    // Nautobot's cable terminations are no NetBox fields: a cable without
    // a_/b_terminations.
    check(
        "/api/dcim/cables/",
        json!({"termination_a_type": "dcim.interface", "termination_a_id": 1, "status": "planned"}),
        "Must define A and B terminations",
    );
    // A location where NetBox wants a site.
    let maker = srv.post(
        "/api/dcim/manufacturers/",
        json!({"name": "G", "slug": "g"}),
    )["id"]
        .clone();
    srv.post(
        "/api/dcim/device-types/",
        json!({"manufacturer": maker, "model": "m", "slug": "m"}),
    );
    srv.post("/api/dcim/device-roles/", json!({"name": "r", "slug": "r"}));
    check(
        "/api/dcim/devices/",
        json!({"name": "d", "device_type": {"model": "m"}, "role": {"slug": "r"}, "location": {"name": "s"}}),
        "\"site\":[\"This field is required.\"]",
    );
    check(
        "/api/extras/tags/",
        json!({"name": "t", "content_types": ["dcim.device"]}),
        "\"slug\":[\"This field is required.\"]",
    );
    check(
        "/api/dcim/devices/",
        json!({"name": "d", "device_type": {"model": "m"}, "role": {"slug": "r"}, "site": site,
               "custom_fields": {"topo_nope": 1}}),
        "Custom field 'topo_nope' does not exist",
    );
    // `mac_address` on an interface is read-only since NetBox 4.2: ignored
    // without a word.
    let dev = srv.post(
        "/api/dcim/devices/",
        json!({"name": "d", "device_type": {"model": "m"}, "role": {"slug": "r"}, "site": site}),
    );
    let i = srv.post(
        "/api/dcim/interfaces/",
        json!({"device": dev["id"], "name": "eth0", "type": "100gbase-x-qsfp28", "mac_address": "02:00:00:00:00:01"}),
    );
    assert_eq!(i["mac_address"], Value::Null);
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        &format!("/api/dcim/interfaces/{}/", i["id"]),
        Some(json!({"mac_address": "02:00:00:00:00:01"})),
    );
    assert_eq!((st, v["mac_address"].clone()), (200, Value::Null), "{v}");
    // An untagged VLAN needs a mode.
    let vlan = srv.post("/api/ipam/vlans/", json!({"vid": 7, "name": "v7"}));
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        "/api/dcim/interfaces/",
        Some(json!([{"id": i["id"], "untagged_vlan": vlan["id"]}])),
    );
    assert_eq!(st, 400);
    assert!(
        v.to_string().contains("does not support an untagged vlan"),
        "{v}"
    );
    // Unknown filters are ignored; pages are `limit`/`offset` with `next`.
    let all = srv.get_all("/api/dcim/sites/", "no_such_filter=1&exclude_m2m=false");
    assert_eq!(all.len(), 1);
    let (_, page) = srv.raw(reqwest::Method::GET, "/api/ipam/vlans/?limit=0", None);
    assert_eq!(page["count"], 1);
    assert!(page["next"].is_null() && page["previous"].is_null());
}

/// A refused token is a 403 (NetBox's TokenAuthentication has no
/// `authenticate_header`), reported as such and never echoed; a v2 token
/// goes as `Bearer`.
#[test]
fn netbox_wrong_token_is_refused_and_never_printed() {
    let srv = start();
    let dir = tempfile::tempdir().unwrap();
    for (name, token) in [
        ("v1", "fedcba9876543210fedcba9876543210fedcba98"),
        ("v2", "nbt_k3y0123456.wrongplaintext0123456789"),
    ] {
        let f = token_file(dir.path(), name, token);
        let c = srv.client(&f, 500);
        let e = srv
            .rt
            .block_on(c.list("/api/dcim/devices/", "", "reading the devices"))
            .unwrap_err();
        let text = format!("{e:#} {e:?}");
        assert!(matches!(e, SotError::Auth { status: 403, .. }), "{text}");
        assert!(text.contains(&format!("Invalid {name} token")), "{text}");
        assert!(
            !text.contains("fedcba9876543210") && !text.contains("wrongplaintext"),
            "the token leaked: {text}"
        );
    }
    for f in [&srv.v1_file, &srv.v2_file] {
        let c = srv.client(f, 500);
        srv.rt
            .block_on(c.list("/api/dcim/devices/", "", "reading the devices"))
            .unwrap();
    }
}

/// The breakout-200g inventory loaded into a fresh test server (its
/// switches with an interface per lane), imported (the breakout inferred)
/// and designed as the leaf-spine fat-tree it draws: (server, client,
/// plan).
fn breakout_loaded() -> (Server, Client, planner::plan::Plan) {
    let srv = start();
    let path = root().join("topologies/breakout-200g.toml");
    let inv = Inventory::from_toml(
        &std::fs::read_to_string(&path).unwrap(),
        "breakout-200g.toml",
    )
    .unwrap();
    load(&srv, &inv);
    let c = srv.client(&srv.v2_file, 100);
    let opts = ImportOptions {
        name: Some("breakout-200g".to_string()),
        ..import_opts()
    };
    let snap = srv
        .rt
        .block_on(provisioner::sot::import::fetch(&c, &opts))
        .unwrap();
    let toml = provisioner::sot::import::inventory_toml(&snap, &opts, "netbox").unwrap();
    assert!(toml.contains("breakout = \"2x200G\""), "{toml}");
    let imported = Inventory::from_toml(&toml, "imported.toml").unwrap();
    let plan = same_breakout_design(&imported, &inv);
    (srv, c, plan)
}

/// [`breakout_loaded`], routed with eBGP.
fn routed_leaf_spine() -> (Server, Client, planner::plan::Plan) {
    let (srv, c, mut plan) = breakout_loaded();
    plan.routing.mode = planner::routing::RoutingMode::Bgp;
    (srv, c, plan)
}

/// Issue #35: a routed plan's switch addresses and ASNs on NetBox. The
/// dry run lists the link pool, a /31 prefix per inter-switch cable, an
/// address per routed end assigned to its interface (a broken-out leaf
/// cage holds both lanes' /31s), the two ASN custom fields and each
/// switch's ASN; the push writes them, a second push nothing; an address
/// of the plan's assigned elsewhere by someone else, and a switch holding
/// another ASN, are conflicts, and nothing is written.
#[test]
fn netbox_routed_plan_pushes_switch_addresses_and_asns_issue_35() {
    let (srv, c, plan) = routed_leaf_spine();
    let rt = &srv.rt;
    let fabric = planner::expect::fabric(&plan, "plan").unwrap();
    // 2 leaves x 16 lanes up: 32 cables, 64 routed ends.
    assert_eq!(fabric.routed.len(), 64);
    assert_eq!(fabric.speakers.len(), 4);
    let popts = push_options(SITE);
    let mark = srv.writes();
    let dry = rt
        .block_on(provisioner::sot::push::push(
            &c,
            &plan,
            &PushOptions {
                dry_run: true,
                ..popts.clone()
            },
            &mut |_| {},
        ))
        .unwrap();
    let count = |d: &provisioner::sot::push::Diff, kind: &str, action: &str| {
        (d.changes.iter())
            .filter(|x| x.kind == kind && x.action == action)
            .count()
    };
    assert_eq!(
        count(&dry.diff, "prefix", "create"),
        1 + 32,
        "the pool and 32 /31s"
    );
    assert_eq!(count(&dry.diff, "ip-address", "create"), 64);
    assert_eq!(count(&dry.diff, "custom-field", "create"), 2);
    assert_eq!(count(&dry.diff, "device", "update"), 4, "each switch's ASN");
    assert!(
        (dry.diff.changes.iter()).any(|x| x.kind == "prefix"
            && x.object == fabric.link_pool
            && x.detail.contains("link pool")),
        "{:?}",
        dry.diff.changes
    );
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "the dry run wrote: {writes:?}");

    let first = push_clean(rt, &c, &plan, &popts, &mut |_| {});
    assert_eq!(first.diff.changes.len(), dry.diff.changes.len());
    push_again_changes_nothing(rt, &c, &plan, &popts);

    // NetBox holds them: each routed end's address on its interface.
    let ifaces = srv.get_all("/api/dcim/interfaces/", "");
    let ips = srv.get_all("/api/ipam/ip-addresses/", "");
    let tag = owner_tag(&plan.name);
    for r in &fabric.routed {
        let ip = ips
            .iter()
            .find(|a| a["address"] == r.address.as_str())
            .unwrap_or_else(|| panic!("{} missing", r.address));
        assert_eq!(ip["assigned_object_type"], "dcim.interface", "{ip}");
        assert!(
            ip["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == tag.as_str())
        );
        let i = ifaces
            .iter()
            .find(|i| i["id"] == ip["assigned_object_id"])
            .unwrap();
        assert_eq!(i["device"]["name"], r.device.as_str(), "{ip}");
        let s = plan.physical_switches()[r.device.as_str()];
        let want = match s.cage_lane(r.port) {
            Some((cage, _)) => cage.to_string(),
            None => s.port_name(r.port),
        };
        assert!(i["name"].as_str().unwrap().ends_with(&want), "{i} {want}");
        assert_eq!(i["mode"]["value"].as_str().unwrap_or(""), "", "routed: {i}");
    }
    let prefixes = srv.get_all("/api/ipam/prefixes/", "");
    assert!(
        prefixes
            .iter()
            .any(|p| p["prefix"] == fabric.link_pool.as_str())
    );
    for s in &fabric.speakers {
        let d = &srv.get_all("/api/dcim/devices/", &format!("name={}", s.device))[0];
        assert_eq!(d["custom_fields"]["topo_asn"], json!(s.asn), "{d}");
        assert!(d["custom_fields"]["topo_vrf_asns"].is_null(), "{d}");
    }

    // Planted: the first routed address taken by someone else's interface
    // (a server's NIC), and spine01 holding another ASN.
    let victim = &fabric.routed[0].address;
    let old = ips
        .iter()
        .find(|a| a["address"] == victim.as_str())
        .unwrap();
    let (st, v) = srv.raw(
        reqwest::Method::DELETE,
        "/api/ipam/ip-addresses/",
        Some(json!([{"id": old["id"]}])),
    );
    assert_eq!(st, 204, "{v}");
    let nic = srv.get_all("/api/dcim/interfaces/", "device=node01")[0].clone();
    let planted = srv.post(
        "/api/ipam/ip-addresses/",
        json!({"address": victim, "status": "active", "assigned_object_type": "dcim.interface",
               "assigned_object_id": nic["id"]}),
    );
    let spine = srv.get_all("/api/dcim/devices/", "name=spine01")[0].clone();
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        &format!("/api/dcim/devices/{}/", spine["id"]),
        Some(json!({"custom_fields": {"topo_asn": 65000}})),
    );
    assert_eq!(st, 200, "{v}");
    let before = srv.writes();
    let blocked = rt
        .block_on(provisioner::sot::push::push(&c, &plan, &popts, &mut |_| {}))
        .unwrap();
    let conflict = |kind: &str| {
        (blocked.diff.conflicts.iter())
            .find(|x| x.kind == kind)
            .unwrap_or_else(|| panic!("no {kind} conflict: {:?}", blocked.diff.conflicts))
    };
    let a = conflict("ip-address");
    assert!(a.object.starts_with(victim.as_str()), "{a:?}");
    assert_eq!(a.url.as_deref(), planted["url"].as_str(), "{a:?}");
    assert!(a.detail.contains("assigned to another interface"), "{a:?}");
    let d = conflict("device");
    assert_eq!(d.object, "spine01");
    assert!(d.detail.contains("topo_asn 65000"), "{d:?}");
    assert_eq!(d.url.as_deref(), spine["url"].as_str());
    assert_eq!((blocked.created, blocked.updated), (0, 0));
    let writes = srv.nb.lock().unwrap().writes_since(before);
    assert!(writes.is_empty(), "nothing written: {writes:?}");
}

/// Rack positions (issue #35 item 4) on NetBox: the breakout fabric loaded
/// without racks, plus the operator's rack r1 (42 U, not the plan's), and
/// the plan standing it in the racked inventory's racks. The dry run lists
/// racks r2 and network-a to create at the site (status planned, 42 U),
/// each switch's rack, position and face, and every server NetBox holds
/// without a rack as not moved, and writes nothing; the push writes them,
/// a second push nothing. Then someone else's device in leaf01's unit
/// (leaf01 taken out of it) and a plan whose r2 is 48 U are conflicts
/// naming their URLs, and nothing is written.
#[test]
fn netbox_racked_plan_pushes_racks_and_switch_positions_issue_35() {
    let (srv, c, mut plan) = breakout_loaded();
    let rt = &srv.rt;
    with_places(&mut plan, &racked_design(&racked_inventory().1));
    let site = srv.get_all("/api/dcim/sites/", &format!("slug={SITE}"))[0]["id"].clone();
    srv.post(
        "/api/dcim/racks/",
        json!({"name": "r1", "site": site, "status": "active"}),
    );
    let popts = push_options(SITE);
    let mark = srv.writes();
    let dry = dry_run(rt, &c, &plan, &popts);
    let of = objects_of;
    assert_eq!(of(&dry.diff, "rack", "create"), ["network-a", "r2"]);
    assert_eq!(
        of(&dry.diff, "device", "update"),
        ["leaf01", "leaf02", "spine01", "spine02"]
    );
    assert_eq!(dry.diff.not_moved.len(), 8, "{:?}", dry.diff.not_moved);
    assert!(
        (dry.diff.not_moved.iter()).all(|x| x.detail.contains("has no rack, the plan rack r")),
        "{:?}",
        dry.diff.not_moved
    );
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "the dry run wrote: {writes:?}");
    let first = push_clean(rt, &c, &plan, &popts, &mut |_| {});
    assert_eq!(first.diff.not_moved.len(), 8);
    push_again_changes_nothing(rt, &c, &plan, &popts);

    // NetBox holds them.
    let tag = owner_tag(&plan.name);
    let racks = srv.get_all("/api/dcim/racks/", "");
    let rack = |n: &str| (racks.iter()).find(|r| r["name"] == n).unwrap().clone();
    for n in ["r2", "network-a"] {
        let r = rack(n);
        assert_eq!(r["status"]["value"], "planned", "{r}");
        assert_eq!(r["u_height"], 42, "{r}");
        assert_eq!(r["tags"][0]["name"], tag.as_str(), "{r}");
    }
    assert_eq!(
        rack("r1")["tags"],
        json!([]),
        "the operator's rack is left as it is"
    );
    let device = |n: &str| srv.get_all("/api/dcim/devices/", &format!("name={n}"))[0].clone();
    for s in &plan.switch_list {
        let d = device(&s.name);
        assert_eq!(d["rack"]["name"], s.rack.as_deref().unwrap(), "{d}");
        assert_eq!(d["position"], json!(f64::from(s.position.unwrap())), "{d}");
        assert_eq!(d["face"]["value"], "front", "{d}");
    }
    assert!(device("node01")["rack"].is_null(), "servers are not moved");

    // Planted: leaf01 out of its unit and someone else's device in it; the
    // plan's r2 made 48 U.
    let leaf = device("leaf01");
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        "/api/dcim/devices/",
        Some(json!([{"id": leaf["id"], "rack": null, "position": null, "face": ""}])),
    );
    assert_eq!(st, 200, "{v}");
    let pdu = srv.post(
        "/api/dcim/devices/",
        json!({"name": "pdu-a", "device_type": {"model": "sw-16x400"}, "role": {"slug": "fabric-switch"},
               "site": site, "rack": rack("r1")["id"], "position": 42, "face": "front"}),
    );
    // The plan's own r2 made taller is an update; the operator's r1 made
    // taller is a conflict.
    let taller = taller(&plan, &["r1", "r2"]);
    let mark = srv.writes();
    let blocked = rt
        .block_on(provisioner::sot::push::push(
            &c,
            &taller,
            &popts,
            &mut |_| {},
        ))
        .unwrap();
    let conflict = |kind: &str| conflict_of(&blocked.diff, kind);
    let unit = conflict("device");
    assert_eq!(unit.object, "leaf01 in r1 U42");
    assert!(
        unit.detail.contains("held by device pdu-a (rack r1 U42)"),
        "{unit:?}"
    );
    assert_eq!(
        unit.url.as_ref(),
        pdu["url"].as_str().map(str::to_string).as_ref()
    );
    let r1 = conflict("rack");
    assert_eq!(r1.object, "r1");
    assert!(r1.detail.starts_with("is 42 U and not tagged"), "{r1:?}");
    assert!(
        of(&blocked.diff, "rack", "update") == ["r2"],
        "{:?}",
        blocked.diff.changes
    );
    assert_eq!((blocked.created, blocked.updated), (0, 0));
    let writes = srv.nb.lock().unwrap().writes_since(mark);
    assert!(writes.is_empty(), "a push with conflicts wrote: {writes:?}");
    // NetBox itself refuses a device in an occupied unit.
    let (st, v) = srv.raw(
        reqwest::Method::PATCH,
        "/api/dcim/devices/",
        Some(
            json!([{"id": leaf["id"], "rack": rack("r1")["id"], "position": 42, "face": "front"}]),
        ),
    );
    assert_eq!(st, 400, "{v}");
    assert!(v.to_string().contains("U42 is already occupied"), "{v}");
}
