//! NVUE's object model: the planner's `nv set` commands as the JSON object
//! tree the NVUE REST API takes (`PATCH /nvue_v1/?rev=N`), and trees back
//! as `nv set`-style lines (for diffs).
//!
//! An `nv set` path alternates property names and, below a collection,
//! the key of an entry: `nv set interface swp1 ip address 10.0.0.0/31` is
//! `{"interface": {"swp1": {"ip": {"address": {"10.0.0.0/31": {}}}}}}`.
//! The last word is a key (an entry with no settings, `{}`), the value of
//! the property before it, or the property itself when it is a presence
//! setting (`nv set service lldp` is `{"service": {"lldp": {}}}`). Which
//! properties are collections is NVUE's object model; the table
//! [`COLLECTIONS`] lists the ones the planner renders (a word after one of
//! these paths is a key). Number lists in keys (`dscp 0-25,27-33`,
//! `vlan 101,102`) stand for one entry per number, as the CLI expands
//! them. Values of digits only are JSON numbers, except names
//! ([`TEXT_VALUES`]).
//!
//! The render builds each switch's commands as words ([`super::nvue`]);
//! the script quotes them for `sh` and [`tree`] places them here, so the
//! REST tree is never parsed back from the script.

use serde_json::{Map, Value};

/// Paths (keys written `*`) whose next word is the key of an entry.
const COLLECTIONS: &[&str] = &[
    "interface",
    "interface * ip address",
    "vrf",
    "vrf * router static",
    "vrf * router static * via",
    "vrf * router bgp neighbor",
    "vrf * router bgp peer-group",
    "vrf * router bgp address-family ipv4-unicast network",
    "bridge domain",
    "bridge domain * vlan",
    "qos mapping",
    "qos mapping * dscp",
    "qos traffic-pool",
    "qos traffic-pool * switch-priority",
    "qos pfc",
    "qos pfc * switch-priority",
    "qos congestion-control",
    "qos congestion-control * traffic-class",
    "qos egress-scheduler",
    "qos egress-scheduler * traffic-class",
];

/// Collections whose keys are numbers, where `0-3,5` means 0, 1, 2, 3, 5.
const NUMBERED: &[&str] = &["dscp", "switch-priority", "traffic-class", "vlan"];

/// Paths that are settings without a value (`nv set service lldp`).
const PRESENCE: &[&str] = &[
    "service lldp",
    "system lldp",
    "interface * qos pfc-watchdog",
];

/// Properties whose values stay text even when they are digits.
const TEXT_VALUES: &[&str] = &["hostname", "description"];

/// Most entries one number list may stand for.
const MAX_EXPANDED: u32 = 4096;

/// The tree of a switch's commands, each the words after `nv set`; an
/// error names the command and what NVUE's object model cannot take.
pub(crate) fn tree(commands: &[Vec<String>]) -> Result<Value, String> {
    let mut root = Map::new();
    for words in commands {
        insert(&mut root, words, &mut Vec::new())
            .map_err(|e| format!("`nv set {}`: {e}", words.join(" ")))?;
    }
    Ok(Value::Object(root))
}

/// Inserts one path (the words after `nv set`) below `node`; `shape` is
/// the path so far with keys as `*`.
fn insert(
    node: &mut Map<String, Value>,
    words: &[String],
    shape: &mut Vec<String>,
) -> Result<(), String> {
    let (word, rest) = words.split_first().ok_or("empty path")?;
    let here = shape.join(" ");
    if COLLECTIONS.contains(&here.as_str()) {
        // `word` is a key (or a number list of keys).
        let keys = expand(word, shape.last().map(String::as_str))?;
        for key in keys {
            let child = object_at(node, &key, &here)?;
            if !rest.is_empty() {
                shape.push("*".to_string());
                let r = insert(child, rest, shape);
                shape.pop();
                r?;
            }
        }
        return Ok(());
    }
    shape.push(word.clone());
    let full = shape.join(" ");
    let result = if rest.is_empty() {
        if PRESENCE.contains(&full.as_str()) {
            object_at(node, word, &here).map(|_| ())
        } else {
            Err(format!(
                "`{full}` has no value; NVUE's object model as this converter knows it has no presence setting there"
            ))
        }
    } else if rest.len() == 1
        && !COLLECTIONS.contains(&full.as_str())
        && !PRESENCE.contains(&format!("{full} {}", rest[0]).as_str())
    {
        let value = typed(word, &rest[0]);
        match node.get(word) {
            Some(old) if *old != value => Err(format!("`{full}` is set twice ({old} and {value})")),
            _ => {
                node.insert(word.clone(), value);
                Ok(())
            }
        }
    } else {
        match object_at(node, word, &here) {
            Ok(child) => insert(child, rest, shape),
            Err(e) => Err(e),
        }
    };
    shape.pop();
    result
}

/// The object entry `key` of `node`, made when missing.
fn object_at<'a>(
    node: &'a mut Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    let entry = node
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    match entry {
        Value::Object(m) => Ok(m),
        other => Err(format!(
            "`{at} {key}` is both a value ({other}) and a setting with parts"
        )),
    }
}

/// A value as JSON: digits are a number unless the property is a name.
fn typed(property: &str, value: &str) -> Value {
    if !TEXT_VALUES.contains(&property)
        && !value.is_empty()
        && value.len() < 16
        && value.bytes().all(|b| b.is_ascii_digit())
        && !(value.len() > 1 && value.starts_with('0'))
        && let Ok(n) = value.parse::<u64>()
    {
        return Value::from(n);
    }
    Value::String(value.to_string())
}

/// The keys a key word stands for: a number list below a numbered
/// collection (`0-2,5`: 0, 1, 2, 5), else the word itself.
fn expand(word: &str, collection: Option<&str>) -> Result<Vec<String>, String> {
    let numbered = collection.is_some_and(|c| NUMBERED.contains(&c));
    if !numbered
        || !word
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b',' || b == b'-')
    {
        return Ok(vec![word.to_string()]);
    }
    let mut out = Vec::new();
    for part in word.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
            return Err(format!("`{word}` is not a list of numbers and ranges"));
        };
        if a > b || b - a >= MAX_EXPANDED || out.len() as u32 + (b - a) >= MAX_EXPANDED {
            return Err(format!(
                "`{word}`: the range {part} is reversed or too long"
            ));
        }
        out.extend((a..=b).map(|n| n.to_string()));
    }
    Ok(out)
}

/// The tree as sorted lines of path words, one per leaf: `interface swp1
/// link mtu 9216`; words with spaces or quotes are single-quoted.
pub fn tree_lines(tree: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out.sort();
    out
}

fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                path.push(quote(k));
                walk(child, path, out);
                path.pop();
            }
        }
        Value::Object(_) => {
            if !path.is_empty() {
                out.push(path.join(" "));
            }
        }
        Value::String(s) => out.push(format!("{} {}", path.join(" "), quote(s))),
        other => out.push(format!("{} {other}", path.join(" "))),
    }
}

/// A path word as [`tree_lines`] writes it: single-quoted for `sh` when
/// it holds anything but letters, digits and `-_./:,+@`.
pub fn quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::design::{DesignOptions, bundled_inventory, design};
    use crate::network::tests::{bgp, fat_tree_plan};
    use crate::render::{Vendor, nvue_trees, render};

    fn check(command: &str, want: Value) {
        let words: Vec<String> = command.split(' ').map(String::from).collect();
        let got = tree(&[words]).unwrap_or_else(|e| panic!("{command}: {e}"));
        assert_eq!(got, want, "{command}");
    }

    #[test]
    fn commands_become_trees() {
        check(
            "system hostname sw01",
            json!({"system": {"hostname": "sw01"}}),
        );
        check(
            "system hostname 0123",
            json!({"system": {"hostname": "0123"}}),
        );
        check("service lldp", json!({"service": {"lldp": {}}}));
        check(
            "interface swp1 ip address 10.255.0.0/31",
            json!({"interface": {"swp1": {"ip": {"address": {"10.255.0.0/31": {}}}}}}),
        );
        check(
            "interface swp1 ip vrf Vrf101",
            json!({"interface": {"swp1": {"ip": {"vrf": "Vrf101"}}}}),
        );
        check(
            "interface swp1 link mtu 9216",
            json!({"interface": {"swp1": {"link": {"mtu": 9216}}}}),
        );
        let d = vec!["interface", "swp9", "description", "node01 mlx5_0 (gpu0)"];
        assert_eq!(
            tree(&[d.into_iter().map(String::from).collect()]).unwrap(),
            json!({"interface": {"swp9": {"description": "node01 mlx5_0 (gpu0)"}}})
        );
        check(
            "interface swp9 qos pfc-watchdog",
            json!({"interface": {"swp9": {"qos": {"pfc-watchdog": {}}}}}),
        );
        check(
            "vrf Vrf101 router static 10.0.1.0/24 via 10.255.0.1",
            json!({"vrf": {"Vrf101": {"router": {"static": {"10.0.1.0/24": {"via": {"10.255.0.1": {}}}}}}}}),
        );
        check(
            "bridge domain br_default vlan 101,102",
            json!({"bridge": {"domain": {"br_default": {"vlan": {"101": {}, "102": {}}}}}}),
        );
        check(
            "qos mapping default-global dscp 0-2,5 switch-priority 0",
            json!({"qos": {"mapping": {"default-global": {"dscp": {
                "0": {"switch-priority": 0}, "1": {"switch-priority": 0},
                "2": {"switch-priority": 0}, "5": {"switch-priority": 0}}}}}}),
        );
        check(
            "qos pfc default-global switch-priority 3,4",
            json!({"qos": {"pfc": {"default-global": {"switch-priority": {"3": {}, "4": {}}}}}}),
        );
    }

    #[test]
    fn commands_nvue_cannot_take_are_named() {
        for (commands, part) in [
            (&["system hostname a", "system hostname b"][..], "set twice"),
            (&["qos pfc x switch-priority 9-3"], "reversed"),
            (&["interface swp1 link"], "has no value"),
            (
                &[
                    "interface swp1 link mtu 9216",
                    "interface swp1 link mtu 9216 x",
                ],
                "both a value",
            ),
        ] {
            let words: Vec<Vec<String>> = commands
                .iter()
                .map(|c| c.split(' ').map(String::from).collect())
                .collect();
            let e = tree(&words).expect_err(commands[0]);
            let last = commands[commands.len() - 1];
            assert!(e.contains(part) && e.contains(last), "{commands:?}: {e}");
        }
    }

    /// The words of one script line as `sh` reads what
    /// [`crate::names::shell_quote`] writes: bare words, and single-quoted
    /// ones with `'\''` for a quote.
    fn sh_words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut cur = String::new();
        let mut in_word = false;
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => {
                    quoted = !quoted;
                    in_word = true;
                }
                '\\' if !quoted => {}
                ' ' if !quoted => {
                    if in_word {
                        words.push(std::mem::take(&mut cur));
                    }
                    in_word = false;
                }
                c => {
                    cur.push(c);
                    in_word = true;
                }
            }
        }
        if in_word {
            words.push(cur);
        }
        words
    }

    /// A script's `nv set` lines as [`tree_lines`] spells them: number
    /// lists below numbered collections expanded, one line per entry.
    fn script_lines(script: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for l in script.lines().filter(|l| l.starts_with("nv set ")) {
            let words = sh_words(l);
            let mut variants = vec![Vec::<String>::new()];
            for (i, w) in words[2..].iter().enumerate() {
                let before = if i > 0 { words[1 + i].as_str() } else { "" };
                let list = NUMBERED.contains(&before)
                    && (w.contains(',') || w.contains('-'))
                    && !(before == "switch-priority" && words.iter().any(|x| x == "dscp"));
                let items = if list {
                    expand(w, Some(before)).expect("list")
                } else {
                    vec![quote(w)]
                };
                variants = variants
                    .into_iter()
                    .flat_map(|v| {
                        items.iter().map(move |x| {
                            let mut v = v.clone();
                            v.push(x.clone());
                            v
                        })
                    })
                    .collect();
            }
            out.extend(variants.into_iter().map(|v| v.join(" ")));
        }
        out
    }

    /// Every switch's tree holds exactly its script's commands: EFLOPS
    /// with static routes and with BGP, and a 3-tier fat-tree with BGP.
    #[test]
    fn trees_hold_exactly_the_scripts_commands() {
        let eflops = design(&bundled_inventory("eflops-4x16"), &DesignOptions::default()).unwrap();
        let mut switches = 0;
        for plan in [bgp(&eflops), eflops, bgp(&fat_tree_plan("k=4"))] {
            let scripts = render(&plan, Vendor::Nvue).unwrap();
            let trees = nvue_trees(&plan).unwrap();
            assert_eq!(scripts.len(), trees.len());
            for ((file, script), (switch, tree)) in scripts.iter().zip(&trees) {
                assert_eq!(*file, Vendor::Nvue.file_name(switch));
                let got: BTreeSet<String> = tree_lines(tree).into_iter().collect();
                assert_eq!(got, script_lines(script), "{file}");
                switches += 1;
            }
        }
        assert!(switches >= 20, "only {switches} switches");
    }
}
