//! Management kept (issue #30, point 1): what of a switch's configuration
//! the plan owns, what push never touches, and the check that a candidate
//! leaves the access push itself uses in place.
//!
//! NVUE's replace (`DELETE /nvue_v1/?rev=R` then a root `PATCH`) and EOS's
//! (`rollback clean-config` in a session) start from nothing: whatever
//! the candidate lacks is removed. The rendered files configure only what
//! the plan owns, so every candidate is the plan's configuration **plus
//! the device's own configuration of everything the plan does not own**,
//! read from the device just before the load:
//!
//! - NVUE: the plan owns the objects `interface`, `vrf`, `bridge`,
//!   `router` and `qos` ([`NVUE_OWNED`]), and the leaves it sets
//!   elsewhere (`system hostname`, LLDP). Carried from the device: the
//!   management interfaces (`eth0`, `eth1`: NVIDIA's "Replace an Entire
//!   Configuration" example, NVUE-API.md of Cumulus Linux 5.9 and 5.15,
//!   keeps `interface eth0` with its address and `vrf mgmt` in the root
//!   patch), the management VRF with its static default route, and every
//!   other object and leaf the plan does not set (`system` users, AAA,
//!   API service, `service` NTP, syslog, SNMP and DNS, ACLs).
//! - EOS: the plan owns the top-level sections the render writes
//!   (`hostname`, `lldp`, `vlan`, `vrf instance`, `ip routing`, `qos`,
//!   `priority-flow-control`, `interface` other than `Management*`,
//!   `router bgp`, `router bfd`, `ip route`, `route-map`, `ip
//!   prefix-list`, [`eos_owned`]). Carried from the running configuration:
//!   every other section (`username`, `aaa`, `management api
//!   http-commands`, `management ssh`, `ntp`, `logging`, `snmp-server`,
//!   `service routing protocols model`, ...), the `Management*`
//!   interfaces, and every section naming a management interface's VRF
//!   (`vrf instance MGMT`, `ip route vrf MGMT 0.0.0.0/0 ...`).
//!
//! Before anything is loaded, [`nvue_cut`] / [`eos_cut`] compare the
//! device's configuration with the candidate: a candidate that removes or
//! changes the address push talks to (the interface carrying it and that
//! interface's VRF), the API service, or push's own user is refused with
//! those lines named ([`super::PushError::Management`]).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use serde_json::{Map, Value};

use super::nvue_tree;

fn obj(v: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    v.and_then(Value::as_object).into_iter().flatten()
}

/// The address of `a.b.c.d/len` (or a bare address).
fn address_of(prefix: &str) -> Option<IpAddr> {
    prefix.split('/').next()?.parse().ok()
}

// ----------------------------------------------------------------------
// NVUE

/// The top-level NVUE objects the plan owns: the candidate's subtree
/// replaces the device's (a stale VLAN, address or route goes), except
/// the management interfaces and VRFs, which are always the device's.
pub const NVUE_OWNED: &[&str] = &["interface", "vrf", "bridge", "router", "qos"];

/// True for an NVUE management interface (`eth0`; type `eth`).
fn nvue_mgmt_interface(name: &str, v: &Value) -> bool {
    name.starts_with("eth") || v.get("type").and_then(Value::as_str) == Some("eth")
}

/// The management VRFs: `mgmt` and the VRF of every management
/// interface.
fn nvue_mgmt_vrfs(applied: &Value) -> BTreeSet<String> {
    let mut s = BTreeSet::from(["mgmt".to_string()]);
    for (name, i) in obj(applied.get("interface")) {
        if nvue_mgmt_interface(name, i)
            && let Some(v) = i.pointer("/ip/vrf").and_then(Value::as_str)
        {
            s.insert(v.to_string());
        }
    }
    s
}

/// Fills into `slot` what `device` has and `slot` lacks; where both
/// have a leaf, `slot`'s (the plan's) stays.
fn fill_missing(slot: &mut Value, device: &Value) {
    if let (Value::Object(s), Value::Object(d)) = (slot, device) {
        for (k, dv) in d {
            match s.get_mut(k) {
                Some(sv) => fill_missing(sv, dv),
                None => {
                    s.insert(k.clone(), dv.clone());
                }
            }
        }
    }
}

/// The whole NVUE tree to load: the plan's `plan` with the device's
/// `applied` configuration of everything the plan does not own.
pub fn nvue_candidate(plan: &Value, applied: &Value) -> Value {
    let mut out = match plan {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let vrfs = nvue_mgmt_vrfs(applied);
    for (top, sub) in obj(Some(applied)) {
        let keep = |name: &str, v: &Value| match top.as_str() {
            "interface" => nvue_mgmt_interface(name, v),
            "vrf" => vrfs.contains(name),
            _ => false,
        };
        if NVUE_OWNED.contains(&top.as_str()) {
            for (name, v) in obj(Some(sub)) {
                if keep(name, v) {
                    let coll = out
                        .entry(top.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(m) = coll {
                        let slot = m
                            .entry(name.clone())
                            .or_insert_with(|| Value::Object(Map::new()));
                        fill_missing(slot, v);
                    }
                }
            }
        } else {
            let slot = out
                .entry(top.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            fill_missing(slot, sub);
        }
    }
    Value::Object(out)
}

/// Inserts `v` at `path` of the tree `into`.
fn put(into: &mut Map<String, Value>, path: &[&str], v: &Value) {
    match path {
        [] => {}
        [last] => {
            into.insert((*last).to_string(), v.clone());
        }
        [first, rest @ ..] => {
            let next = into
                .entry((*first).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = next {
                put(m, rest, v);
            }
        }
    }
}

/// The parts of `applied` that push's own access depends on: the
/// interfaces carrying `ip` (every management interface when the
/// address is not known) with their VRFs, `system api`, and push's user
/// `system aaa user <user>`.
fn nvue_access(applied: &Value, ip: Option<IpAddr>, user: &str) -> Value {
    let mut p = Map::new();
    for (name, i) in obj(applied.get("interface")) {
        let carries = match ip {
            Some(ip) => obj(i.pointer("/ip/address")).any(|(a, _)| address_of(a) == Some(ip)),
            None => nvue_mgmt_interface(name, i),
        };
        if !carries {
            continue;
        }
        put(&mut p, &["interface", name], i);
        if let Some(vrf) = i.pointer("/ip/vrf").and_then(Value::as_str)
            && let Some(v) = applied.pointer(&format!("/vrf/{}", pointer_word(vrf)))
        {
            put(&mut p, &["vrf", vrf], v);
        }
    }
    if let Some(api) = applied.pointer("/system/api") {
        put(&mut p, &["system", "api"], api);
    }
    if let Some(u) = applied.pointer(&format!("/system/aaa/user/{}", pointer_word(user))) {
        put(&mut p, &["system", "aaa", "user", user], u);
    }
    Value::Object(p)
}

/// A word for a JSON pointer (`~` and `/` escaped).
fn pointer_word(w: &str) -> String {
    w.replace('~', "~0").replace('/', "~1")
}

/// The lines by which `candidate` removes or changes push's own access
/// on an NVUE switch running `applied`: `- <path>` for what goes, `+
/// <path>` for what the candidate sets instead (and any `system api`
/// setting it adds). Empty when the access stays.
pub fn nvue_cut(applied: &Value, candidate: &Value, ip: Option<IpAddr>, user: &str) -> Vec<String> {
    let access = nvue_access(applied, ip, user);
    let mut lines: Vec<String> = nvue_tree::tree_lines(&nvue_tree::subtract(&access, candidate))
        .into_iter()
        .map(|l| format!("- {l}"))
        .collect();
    // What the candidate sets in the same places instead.
    let mut theirs = Map::new();
    for (top, sub) in obj(Some(&access)) {
        for (name, _) in obj(Some(sub)) {
            if let Some(v) = candidate.get(top).and_then(|t| t.get(name)) {
                put(&mut theirs, &[top, name], v);
            }
        }
    }
    if let Some(api) = candidate.pointer("/system/api") {
        put(&mut theirs, &["system", "api"], api);
    }
    let mine = nvue_tree::subtract(&Value::Object(theirs), applied);
    lines.extend(
        nvue_tree::tree_lines(&mine)
            .into_iter()
            .map(|l| format!("+ {l}")),
    );
    // Only the `+` lines of places the candidate also removes from, or of
    // the API service: adding a second address to eth0 cuts nothing.
    let removed: BTreeSet<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    lines.retain(|l| match l.strip_prefix("+ ") {
        Some(rest) => {
            rest.starts_with("system api")
                || removed.contains(&rest.split(' ').take(2).collect::<Vec<_>>().join(" "))
        }
        None => true,
    });
    lines
}

// ----------------------------------------------------------------------
// EOS

/// One top-level section of an EOS configuration: its first line and the
/// indented lines under it (indentation kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The top-level line (`interface Management1`).
    pub head: String,
    /// The lines under it, as the configuration indents them.
    pub body: Vec<String>,
}

/// The sections of an EOS configuration text (`show running-config`):
/// comments and `!` separators left out, `end` ends it; a `banner`
/// keeps its text up to `EOF`.
pub fn eos_sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut banner = false;
    for raw in text.lines() {
        let line = raw.trim_end();
        if banner {
            if let Some(s) = out.last_mut() {
                s.body.push(line.to_string());
            }
            banner = line.trim() != "EOF";
            continue;
        }
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('!') {
            continue;
        }
        if t == "end" && line == t {
            break;
        }
        if line.starts_with(' ') {
            if let Some(s) = out.last_mut() {
                s.body.push(line.to_string());
            }
            continue;
        }
        banner = t.starts_with("banner ");
        out.push(Section {
            head: line.to_string(),
            body: Vec::new(),
        });
    }
    out
}

/// True for an EOS management interface (`Management1`, `Management1/1`).
fn eos_mgmt_interface(name: &str) -> bool {
    name.starts_with("Management")
}

/// The VRFs of the management interfaces (`vrf MGMT` under `interface
/// Management1`; `vrf forwarding MGMT` on older releases).
fn eos_mgmt_vrfs(sections: &[Section]) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    for sec in sections {
        let w: Vec<&str> = sec.head.split_whitespace().collect();
        if let ["interface", name] = w.as_slice()
            && eos_mgmt_interface(name)
        {
            for l in &sec.body {
                let b: Vec<&str> = l.split_whitespace().collect();
                match b.as_slice() {
                    ["vrf", v] | ["vrf", "forwarding", v] => {
                        s.insert((*v).to_string());
                    }
                    _ => {}
                }
            }
        }
    }
    s
}

/// True for a top-level EOS section the plan owns (see the module
/// documentation); `mgmt_vrfs` are never owned, nor anything naming them.
pub fn eos_owned(head: &str, mgmt_vrfs: &BTreeSet<String>) -> bool {
    let w: Vec<&str> = head.split_whitespace().collect();
    let names_mgmt_vrf = w
        .windows(2)
        .any(|p| matches!(p[0], "vrf" | "instance") && mgmt_vrfs.contains(p[1]));
    if names_mgmt_vrf {
        return false;
    }
    let w: &[&str] = match w.as_slice() {
        ["no", rest @ ..] => rest,
        all => all,
    };
    match w {
        ["interface", name, ..] => !eos_mgmt_interface(name),
        ["hostname", ..]
        | ["lldp", ..]
        | ["vlan", ..]
        | ["vrf", "instance", ..]
        | ["ip", "routing", ..]
        | ["ipv6", "routing", ..]
        | ["qos", ..]
        | ["priority-flow-control", ..]
        | ["router", "bgp", ..]
        | ["router", "bfd", ..]
        | ["ip", "route", ..]
        | ["route-map", ..]
        | ["ip", "prefix-list", ..]
        | ["peer-filter", ..] => true,
        _ => false,
    }
}

/// The lines to load after `rollback clean-config`: the running
/// configuration's sections the plan does not own (in their running
/// order, which EOS prints so that each applies), then the candidate's
/// lines.
pub fn eos_candidate(running: &str, candidate: &[String]) -> Vec<String> {
    let sections = eos_sections(running);
    let vrfs = eos_mgmt_vrfs(&sections);
    let mut out = Vec::new();
    for s in sections.iter().filter(|s| !eos_owned(&s.head, &vrfs)) {
        out.push(s.head.clone());
        out.extend(s.body.iter().cloned());
    }
    out.extend(candidate.iter().cloned());
    out
}

/// Sections by head, bodies of repeated heads merged.
fn by_head(sections: &[Section]) -> BTreeMap<&str, Vec<&str>> {
    let mut m: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in sections {
        m.entry(s.head.as_str())
            .or_default()
            .extend(s.body.iter().map(String::as_str));
    }
    m
}

/// The lines by which the lines `candidate` (what is loaded after
/// `rollback clean-config`) remove or change push's own access on an EOS
/// switch whose running configuration is `running`: the interface
/// carrying `ip` (every `Management*` interface when the address is not
/// known) and the sections naming its VRF, `management api
/// http-commands` (also a `shutdown` the candidate adds there), and the
/// `username <user>` line. Empty when the access stays.
pub fn eos_cut(running: &str, candidate: &[String], ip: Option<IpAddr>, user: &str) -> Vec<String> {
    let run = eos_sections(running);
    let cand = eos_sections(&candidate.join("\n"));
    let theirs = by_head(&cand);
    let mut vrfs = BTreeSet::new();
    let mut protected: Vec<&Section> = Vec::new();
    for s in &run {
        let w: Vec<&str> = s.head.split_whitespace().collect();
        let carries = match (w.as_slice(), ip) {
            (["interface", _], Some(ip)) => s.body.iter().any(|l| {
                let b: Vec<&str> = l.split_whitespace().collect();
                matches!(b.as_slice(), ["ip" | "ipv6", "address", a, ..] if address_of(a) == Some(ip))
            }),
            (["interface", name], None) => eos_mgmt_interface(name),
            _ => false,
        };
        if carries {
            vrfs.extend(eos_mgmt_vrfs(std::slice::from_ref(s)));
            vrfs.extend(s.body.iter().filter_map(|l| {
                let b: Vec<&str> = l.split_whitespace().collect();
                match b.as_slice() {
                    ["vrf", v] | ["vrf", "forwarding", v] => Some((*v).to_string()),
                    _ => None,
                }
            }));
            protected.push(s);
        }
        let api = s.head.starts_with("management api http-commands");
        let me = matches!(w.as_slice(), ["username", u, ..] if *u == user);
        if api || me {
            protected.push(s);
        }
    }
    for s in &run {
        let w: Vec<&str> = s.head.split_whitespace().collect();
        let names = w
            .windows(2)
            .any(|p| matches!(p[0], "vrf" | "instance") && vrfs.contains(p[1]));
        if names && !protected.iter().any(|p| p.head == s.head) {
            protected.push(s);
        }
    }
    let mut lines = Vec::new();
    for s in protected {
        match theirs.get(s.head.as_str()) {
            None => {
                lines.push(format!("- {}", s.head));
                lines.extend(s.body.iter().map(|b| format!("- {b}")));
            }
            Some(body) => {
                let missing: Vec<&String> = s
                    .body
                    .iter()
                    .filter(|b| !body.contains(&b.as_str()))
                    .collect();
                let shut: Vec<&&str> = if s.head.starts_with("management api") {
                    body.iter().filter(|b| b.trim() == "shutdown").collect()
                } else {
                    Vec::new()
                };
                if !missing.is_empty() || !shut.is_empty() {
                    lines.push(format!("  {}", s.head));
                    lines.extend(missing.iter().map(|b| format!("- {b}")));
                    lines.extend(shut.iter().map(|b| format!("+ {b}")));
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An NVUE switch as NVIDIA's "Replace an Entire Configuration"
    /// example shows it (NVUE-API.md, Cumulus Linux 5.9 and 5.15):
    /// `eth0` in `vrf mgmt` with a default route there, plus users, the
    /// API service and NTP.
    fn nvue_device() -> Value {
        json!({
            "system": {"hostname": "sw1", "api": {"state": "enabled", "port": 8765},
                       "aaa": {"user": {"admin": {"role": "system-admin", "hashed-password": "$6$x"}}}},
            "service": {"ntp": {"mgmt": {"server": {"192.0.2.123": {}}}}},
            "interface": {
                "eth0": {"ip": {"address": {"192.168.200.6/24": {}}, "vrf": "mgmt"}, "type": "eth"},
                "swp1": {"link": {"mtu": 1500}, "type": "swp"}
            },
            "vrf": {"mgmt": {"router": {"static": {"0.0.0.0/0": {"address-family": "ipv4-unicast",
                     "via": {"192.168.200.1": {"type": "ipv4-address"}}}}}},
                    "Old": {"table": "auto"}},
            "bridge": {"domain": {"br_default": {"vlan": {"10": {}}}}}
        })
    }

    #[test]
    fn nvue_candidates_carry_management_and_replace_what_the_plan_owns() {
        let plan = json!({
            "system": {"hostname": "sw1"},
            "service": {"lldp": {}},
            "interface": {"swp1": {"link": {"mtu": 9216}}},
            "vrf": {"Vrf101": {"table": "auto"}}
        });
        let got = nvue_candidate(&plan, &nvue_device());
        let d = nvue_device();
        assert_eq!(got["interface"]["eth0"], d["interface"]["eth0"]);
        assert_eq!(got["vrf"]["mgmt"], d["vrf"]["mgmt"]);
        assert_eq!(got["system"]["api"], d["system"]["api"]);
        assert_eq!(got["system"]["aaa"], d["system"]["aaa"]);
        assert_eq!(got["service"]["ntp"], d["service"]["ntp"]);
        assert_eq!(got["service"]["lldp"], json!({}));
        // Owned: the plan's swp1, no stale VRF or bridge.
        assert_eq!(got["interface"]["swp1"], json!({"link": {"mtu": 9216}}));
        assert!(got["vrf"].get("Old").is_none());
        assert!(got.get("bridge").is_none());
        // Nothing of push's access is cut.
        let ip = "192.168.200.6".parse().ok();
        assert_eq!(nvue_cut(&d, &got, ip, "admin"), Vec::<String>::new());
    }

    #[test]
    fn nvue_cuts_are_named() {
        let d = nvue_device();
        // The API on a front-panel port the plan readdresses.
        let mut front = d.clone();
        front["interface"]["swp1"]["ip"] = json!({"address": {"10.0.0.5/24": {}}});
        let plan = json!({"interface": {"swp1": {"ip": {"address": {"10.255.0.0/31": {}}}}}});
        let cand = nvue_candidate(&plan, &front);
        let ip = "10.0.0.5".parse().ok();
        assert_eq!(
            nvue_cut(&front, &cand, ip, "admin"),
            [
                "- interface swp1 ip address 10.0.0.5/24",
                "- interface swp1 link mtu 1500",
                "- interface swp1 type swp",
                "+ interface swp1 ip address 10.255.0.0/31"
            ]
        );
        // A plan that turns the API off.
        let plan = json!({"system": {"api": {"state": "disabled"}}});
        let cand = nvue_candidate(&plan, &d);
        assert_eq!(
            nvue_cut(&d, &cand, "192.168.200.6".parse().ok(), "admin"),
            ["- system api state enabled", "+ system api state disabled"]
        );
    }

    const EOS_RUNNING: &str = "\
! Command: show running-config
! device: sw1 (vEOS-lab, EOS-4.31.2F)
!
no aaa root
!
username admin privilege 15 role network-admin secret sha512 $6$abc
!
hostname sw1
!
spanning-tree mode mstp
!
vlan 10
!
vrf instance MGMT
!
vrf instance Old
!
interface Ethernet1/1
   mtu 1500
!
interface Management1
   vrf MGMT
   ip address 192.168.0.10/24
!
ip routing
no ip routing vrf MGMT
!
ip route vrf MGMT 0.0.0.0/0 192.168.0.1
ip route 10.9.0.0/16 10.255.0.1
!
ntp server vrf MGMT 192.0.2.123
!
management api http-commands
   protocol https
   no shutdown
   !
   vrf MGMT
      no shutdown
!
end
";

    fn lines(s: &[&str]) -> Vec<String> {
        s.iter().map(|l| (*l).to_string()).collect()
    }

    #[test]
    fn eos_candidates_carry_management_and_replace_what_the_plan_owns() {
        let plan = lines(&[
            "hostname sw1",
            "interface Ethernet1/1",
            "   mtu 9214",
            "ip route vrf Vrf101 10.0.1.0/24 10.255.0.1",
        ]);
        let got = eos_candidate(EOS_RUNNING, &plan);
        assert_eq!(
            got,
            lines(&[
                "no aaa root",
                "username admin privilege 15 role network-admin secret sha512 $6$abc",
                "spanning-tree mode mstp",
                "vrf instance MGMT",
                "interface Management1",
                "   vrf MGMT",
                "   ip address 192.168.0.10/24",
                "no ip routing vrf MGMT",
                "ip route vrf MGMT 0.0.0.0/0 192.168.0.1",
                "ntp server vrf MGMT 192.0.2.123",
                "management api http-commands",
                "   protocol https",
                "   no shutdown",
                "   vrf MGMT",
                "      no shutdown",
                "hostname sw1",
                "interface Ethernet1/1",
                "   mtu 9214",
                "ip route vrf Vrf101 10.0.1.0/24 10.255.0.1",
            ])
        );
        let ip = "192.168.0.10".parse().ok();
        assert_eq!(
            eos_cut(EOS_RUNNING, &got, ip, "admin"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn eos_cuts_are_named() {
        let ip = "192.168.0.10".parse().ok();
        // The plan alone (what `rollback clean-config` plus the rendered
        // lines loaded before issue #30).
        let plan = lines(&["hostname sw1", "interface Ethernet1/1", "   mtu 9214"]);
        assert_eq!(
            eos_cut(EOS_RUNNING, &plan, ip, "admin"),
            lines(&[
                "- username admin privilege 15 role network-admin secret sha512 $6$abc",
                "- interface Management1",
                "-    vrf MGMT",
                "-    ip address 192.168.0.10/24",
                "- management api http-commands",
                "-    protocol https",
                "-    no shutdown",
                "-    vrf MGMT",
                "-       no shutdown",
                "- vrf instance MGMT",
                "- no ip routing vrf MGMT",
                "- ip route vrf MGMT 0.0.0.0/0 192.168.0.1",
                "- ntp server vrf MGMT 192.0.2.123",
            ])
        );
        // A plan that shuts the API down.
        let mut c = eos_candidate(EOS_RUNNING, &[]);
        c.extend(lines(&["management api http-commands", "   shutdown"]));
        assert_eq!(
            eos_cut(EOS_RUNNING, &c, ip, "admin"),
            lines(&["  management api http-commands", "+    shutdown"])
        );
        // The API on a front-panel port the plan readdresses.
        let front =
            EOS_RUNNING.replace("   mtu 1500", "   no switchport\n   ip address 10.0.0.5/24");
        let c = eos_candidate(&front, &lines(&["interface Ethernet1/1", "   mtu 9214"]));
        assert_eq!(
            eos_cut(&front, &c, "10.0.0.5".parse().ok(), "admin"),
            lines(&[
                "  interface Ethernet1/1",
                "-    no switchport",
                "-    ip address 10.0.0.5/24"
            ])
        );
    }

    #[test]
    fn eos_sections_keep_banners_and_stop_at_end() {
        let s = eos_sections("banner login\nhello\n  world\nEOF\nhostname a\nend\nhostname b\n");
        assert_eq!(
            s,
            vec![
                Section {
                    head: "banner login".into(),
                    body: vec!["hello".into(), "  world".into(), "EOF".into()]
                },
                Section {
                    head: "hostname a".into(),
                    body: vec![]
                }
            ]
        );
    }
}
