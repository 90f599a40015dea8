//! The planner's NVUE rendering (`nv set` lines) as the JSON object tree
//! the NVUE REST API takes, and trees back as `nv set`-style lines (for
//! diffs).
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

use serde_json::{Map, Value};

/// Paths (keys written `*`) whose next word is the key of an entry.
pub(crate) const COLLECTIONS: &[&str] = &[
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
pub(crate) const PRESENCE: &[&str] = &[
    "service lldp",
    "system lldp",
    "interface * qos pfc-watchdog",
];

/// Properties whose values stay text even when they are digits.
pub(crate) const TEXT_VALUES: &[&str] = &["hostname", "description"];

/// Most entries one number list may stand for.
const MAX_EXPANDED: u32 = 4096;

/// A line the conversion cannot take: 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeError {
    /// 1-based line of the script.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The JSON tree of a rendered NVUE script. Comments, blank lines, the
/// shebang and `set -e` are skipped; every other line must be `nv set`.
pub fn script_to_tree(script: &str) -> Result<Value, TreeError> {
    let mut root = Map::new();
    for (i, raw) in script.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') || t == "set -e" {
            continue;
        }
        let words = split_words(t).map_err(|message| TreeError { line, message })?;
        if words.len() < 3 || words[0] != "nv" || words[1] != "set" {
            return Err(TreeError {
                line,
                message: format!("not an `nv set` command: {t}"),
            });
        }
        insert(&mut root, &words[2..], &mut Vec::new())
            .map_err(|message| TreeError { line, message })?;
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

/// Splits a shell command line into words: single quotes, double quotes
/// and backslash escapes as `sh` takes them (no expansions).
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote".to_string()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("unterminated double quote".to_string()),
                        },
                        Some('$' | '`') => {
                            return Err(
                                "a shell expansion ($ or `) in a double-quoted word".to_string()
                            );
                        }
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote".to_string()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a backslash at the end of the line".to_string()),
                }
            }
            ';' | '&' | '|' | '$' | '`' | '<' | '>' | '(' | ')' => {
                return Err(format!("shell syntax `{c}` outside quotes"));
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
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

fn quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,+@".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// A unified-style diff from the two halves NVUE reports: lines of
/// `removed` (in the running configuration, not in the candidate) with `-`
/// and lines of `added` with `+`; empty when both are empty.
///
/// A `null` leaf is NVUE's "unset" (NVUE-API.md, "Unset a Configuration
/// Change"): it is shown as the `-` of its path, never as `+ ... null`.
pub(crate) fn diff_text(added: &Value, removed: &Value) -> String {
    let mut unset = Vec::new();
    let added = without_nulls(added, &mut Vec::new(), &mut unset);
    let mut minus: Vec<String> = tree_lines(&without_nulls(removed, &mut Vec::new(), &mut unset));
    for u in unset {
        if !minus
            .iter()
            .any(|m| m == &u || m.starts_with(&format!("{u} ")))
        {
            minus.push(u);
        }
    }
    minus.sort();
    minus.dedup();
    let mut s = String::new();
    for l in minus {
        s.push_str("- ");
        s.push_str(&l);
        s.push('\n');
    }
    for l in tree_lines(&added) {
        s.push_str("+ ");
        s.push_str(&l);
        s.push('\n');
    }
    s
}

/// `v` without its `null` leaves; their paths (as [`tree_lines`] spells
/// them) go to `unset`. An object left empty by that is dropped too.
fn without_nulls(v: &Value, path: &mut Vec<String>, unset: &mut Vec<String>) -> Value {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut out = Map::new();
            for (k, child) in m {
                path.push(quote(k));
                if child.is_null() {
                    unset.push(path.join(" "));
                } else {
                    let c = without_nulls(child, path, unset);
                    let emptied = matches!(&c, Value::Object(x) if x.is_empty())
                        && !matches!(child, Value::Object(x) if x.is_empty());
                    if !emptied {
                        out.insert(k.clone(), c);
                    }
                }
                path.pop();
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// What `a` has that `b` has not (or has with another value): the
/// subtree NVUE's `diff` query reports. Entries that are the same are
/// left out; an empty object means no difference.
pub fn subtract(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(am), Value::Object(bm)) => {
            let mut out = Map::new();
            for (k, av) in am {
                match bm.get(k) {
                    None => {
                        out.insert(k.clone(), av.clone());
                    }
                    Some(bv) => {
                        if let (Value::Object(x), Value::Object(_)) = (av, bv)
                            && x.is_empty()
                        {
                            continue;
                        }
                        let d = subtract(av, bv);
                        let empty = matches!(&d, Value::Object(m) if m.is_empty());
                        if !empty {
                            out.insert(k.clone(), d);
                        }
                    }
                }
            }
            Value::Object(out)
        }
        (x, y) if x == y => Value::Object(Map::new()),
        (x, _) => x.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_diff_never_shows_null() {
        // NVUE's diff can carry `null` (unset) leaves: each is a removal.
        let added = json!({"interface": {"swp1": {"link": {"mtu": 9216}}, "swp9": null},
            "router": {"bgp": {"graceful-restart": null}}});
        let removed = json!({"interface": {"swp9": {"link": {"mtu": 1500}}}});
        let d = diff_text(&added, &removed);
        assert!(!d.contains("null"), "{d}");
        assert_eq!(
            d,
            "- interface swp9 link mtu 1500\n- router bgp graceful-restart\n+ interface swp1 link mtu 9216\n"
        );
    }

    fn check(line: &str, want: Value) {
        let got = script_to_tree(line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        assert_eq!(got, want, "{line}");
    }

    #[test]
    fn lines_become_trees() {
        check(
            "nv set system hostname sw01",
            json!({"system": {"hostname": "sw01"}}),
        );
        check(
            "nv set system hostname 0123",
            json!({"system": {"hostname": "0123"}}),
        );
        check("nv set service lldp", json!({"service": {"lldp": {}}}));
        check(
            "nv set interface swp1 ip address 10.255.0.0/31",
            json!({"interface": {"swp1": {"ip": {"address": {"10.255.0.0/31": {}}}}}}),
        );
        check(
            "nv set interface swp1 ip vrf Vrf101",
            json!({"interface": {"swp1": {"ip": {"vrf": "Vrf101"}}}}),
        );
        check(
            "nv set interface swp1 link mtu 9216",
            json!({"interface": {"swp1": {"link": {"mtu": 9216}}}}),
        );
        check(
            "nv set interface swp9 description 'node01 mlx5_0 (gpu0)'",
            json!({"interface": {"swp9": {"description": "node01 mlx5_0 (gpu0)"}}}),
        );
        check(
            "nv set interface swp9 qos pfc-watchdog",
            json!({"interface": {"swp9": {"qos": {"pfc-watchdog": {}}}}}),
        );
        check(
            "nv set vrf Vrf101 router static 10.0.1.0/24 via 10.255.0.1",
            json!({"vrf": {"Vrf101": {"router": {"static": {"10.0.1.0/24": {"via": {"10.255.0.1": {}}}}}}}}),
        );
        check(
            "nv set bridge domain br_default vlan 101,102",
            json!({"bridge": {"domain": {"br_default": {"vlan": {"101": {}, "102": {}}}}}}),
        );
        check(
            "nv set qos mapping default-global dscp 0-2,5 switch-priority 0",
            json!({"qos": {"mapping": {"default-global": {"dscp": {
                "0": {"switch-priority": 0}, "1": {"switch-priority": 0},
                "2": {"switch-priority": 0}, "5": {"switch-priority": 0}}}}}}),
        );
        check(
            "nv set qos pfc default-global switch-priority 3,4",
            json!({"qos": {"pfc": {"default-global": {"switch-priority": {"3": {}, "4": {}}}}}}),
        );
        check(
            "#!/bin/sh\n# comment\nset -e\n\nnv set vrf Vrf101 table auto",
            json!({"vrf": {"Vrf101": {"table": "auto"}}}),
        );
    }

    #[test]
    fn bad_lines_are_named() {
        for (script, line, part) in [
            (
                "nv set system hostname sw01\nrm -rf /",
                2,
                "not an `nv set`",
            ),
            ("nv set interface swp1 description 'open", 1, "unterminated"),
            ("nv set system hostname a; reboot", 1, "shell syntax"),
            (
                "nv set system hostname a\nnv set system hostname b",
                2,
                "set twice",
            ),
            ("nv set qos pfc x switch-priority 9-3", 1, "reversed"),
            ("nv set interface swp1 link", 1, "has no value"),
            (
                "nv set interface swp1 link mtu 9216\nnv set interface swp1 link mtu 9216 x",
                2,
                "both a value",
            ),
        ] {
            let e = script_to_tree(script).expect_err(script);
            assert_eq!(e.line, line, "{script}: {e:?}");
            assert!(e.message.contains(part), "{script}: {e:?}");
        }
    }

    /// Every golden NVUE file converts, and its tree read back as lines
    /// gives every line of the file (number lists expanded).
    #[test]
    fn golden_files_round_trip() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../planner/tests/render/eflops-4x16/nvue");
        let mut files = 0;
        for f in std::fs::read_dir(&dir).expect("golden NVUE files") {
            let path = f.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("read");
            let tree =
                script_to_tree(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            let got: std::collections::BTreeSet<String> = tree_lines(&tree).into_iter().collect();
            let mut want = std::collections::BTreeSet::new();
            for l in text.lines().filter(|l| l.starts_with("nv set ")) {
                let words = split_words(l).expect("words");
                // Expand number lists where the converter does, by hand.
                let mut variants = vec![Vec::<String>::new()];
                for (i, w) in words[2..].iter().enumerate() {
                    let before = if i > 0 { words[2 + i - 1].as_str() } else { "" };
                    let list = NUMBERED.contains(&before)
                        && (w.contains(',') || w.contains('-'))
                        && !(before == "switch-priority" && words.contains(&"dscp".to_string()));
                    let items: Vec<String> = if list {
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
                for v in variants {
                    want.insert(v.join(" "));
                }
            }
            assert_eq!(got, want, "{}", path.display());
            files += 1;
        }
        assert!(files >= 8, "only {files} golden NVUE files");
    }

    #[test]
    fn diffs_name_both_sides() {
        let running = json!({"system": {"hostname": "sw01"}, "interface": {"swp1": {"link": {"mtu": 1500}}, "swp2": {}}});
        let candidate =
            json!({"system": {"hostname": "sw01"}, "interface": {"swp1": {"link": {"mtu": 9216}}}});
        let added = subtract(&candidate, &running);
        let removed = subtract(&running, &candidate);
        assert_eq!(
            diff_text(&added, &removed),
            "- interface swp1 link mtu 1500\n- interface swp2\n+ interface swp1 link mtu 9216\n"
        );
        assert_eq!(
            diff_text(&subtract(&running, &running), &subtract(&running, &running)),
            ""
        );
    }
}
