//! NVUE trees compared: what a candidate adds to and removes from a
//! device's configuration, as `nv set`-style lines. The trees come from
//! the planner ([`planner::render::nvue_tree`], NVUE's object model) and
//! from the device's REST answers.

use serde_json::{Map, Value};

use planner::render::nvue_tree::quote;
pub use planner::render::nvue_tree::tree_lines;

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
