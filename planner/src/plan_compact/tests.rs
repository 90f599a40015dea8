use super::*;
use crate::design::design;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::Name;

/// Every plan file bundled with the toolkit (examples and golden cases).
pub(super) fn bundled_plans() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    let mut dirs = vec![
        root.join("examples/data"),
        root.join("planner/tests/golden"),
    ];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with("plan.json") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    out.sort();
    out
}

/// Designs of every topology, each with the fields its designer fills.
pub(super) fn designs() -> Vec<Plan> {
    let s = Shorthand::default();
    let specs = [
        shorthand::bigraph(4, 16, &s).unwrap(),
        shorthand::fat_tree("tiers=2,sub-nodes=40,ports=16,oversub=2", &s).unwrap(),
        shorthand::fat_tree("tiers=3,sub-nodes=100,ports=8", &s).unwrap(),
        shorthand::rail_optimized("sub-nodes=64,rails=4,ports=32", &s).unwrap(),
        shorthand::hpn("sub-nodes=128,rails=4,ports=16", &s).unwrap(),
    ];
    specs
        .iter()
        .map(|(inv, opts)| design(inv, opts).unwrap().into_plan())
        .collect()
}

/// JSON -> compact -> JSON gives the bytes the planner writes for the
/// plan (the file's own bytes when the planner wrote it), and the plans
/// are equal. Returns whether the file was the planner's own JSON.
fn round_trips(what: &str, json: &str) -> bool {
    let plan = Plan::from_json(json, what).unwrap();
    let compact = plan.to_compact().unwrap();
    assert!(is_compact(&compact));
    let back = Plan::from_compact(&compact, what).unwrap();
    assert_eq!(back, plan, "{what}");
    let written = plan.to_json().unwrap();
    assert_eq!(back.to_json().unwrap(), written, "{what}: the JSON changed");
    assert_eq!(back.to_compact().unwrap(), compact, "{what}: not stable");
    written == json
}

#[test]
fn every_bundled_plan_round_trips_byte_identical() {
    let plans = bundled_plans();
    assert!(plans.len() >= 10, "found {} plans", plans.len());
    let mut identical = 0;
    for (file, text) in &plans {
        // A few golden plans are hand-written or refusals on purpose; the
        // ones that parse still round-trip.
        if Plan::from_json(text, file).is_ok() && round_trips(file, text) {
            identical += 1;
        }
    }
    // Most bundled plans are the planner's own JSON, and for those the
    // round trip gives the file back byte for byte.
    assert!(
        identical * 2 > plans.len(),
        "{identical} of {}",
        plans.len()
    );
}

#[test]
fn designs_of_every_topology_round_trip_byte_identical() {
    for plan in designs() {
        let json = plan.to_json().unwrap();
        assert!(round_trips(&plan.describe(), &json));
    }
}

/// The compact plan is a third of the JSON or less already at 512
/// sub-nodes (its sub-nodes' unique names are most of it).
#[test]
fn a_compact_plan_is_much_smaller_than_its_json() {
    let (inv, opts) = shorthand::bigraph(16, 32, &Shorthand::default()).unwrap();
    let plan = design(&inv, &opts).unwrap();
    let json = plan.to_json().unwrap().len();
    let compact = plan.to_compact().unwrap().len();
    assert!(
        compact * 5 < json * 2,
        "compact {compact} bytes, JSON {json}"
    );
}

pub(super) fn small() -> Vec<u8> {
    let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
    design(&inv, &opts).unwrap().to_compact().unwrap()
}

/// Rewrites the header's length and checksum for `file`'s body, so that
/// the reader's own checks of the body are what is tested.
pub(super) fn resealed(mut file: Vec<u8>) -> Vec<u8> {
    let body_len = (file.len() - HEADER) as u64;
    let sum = checksum(&file[HEADER..]);
    file[12..20].copy_from_slice(&body_len.to_le_bytes());
    file[20..28].copy_from_slice(&sum.to_le_bytes());
    file
}

pub(super) fn refusal(bytes: &[u8]) -> String {
    match std::panic::catch_unwind(|| Plan::from_compact(bytes, "cut.cplan")) {
        Ok(Ok(_)) => String::new(),
        Ok(Err(e)) => e.to_string(),
        Err(_) => panic!("the reader panicked"),
    }
}

#[test]
fn a_truncated_file_is_refused_at_every_length_naming_file_and_offset() {
    let file = small();
    for cut in 0..file.len() {
        let e = refusal(&file[..cut]);
        assert!(e.starts_with("cut.cplan"), "cut at {cut}: {e}");
        assert!(e.contains("byte "), "cut at {cut}: {e}");
    }
    assert!(refusal(&file[..100]).contains("the file is cut or has bytes added"));
    // Cut and resealed: the body's own structure refuses it.
    for cut in (HEADER..file.len()).step_by(7) {
        let e = refusal(&resealed(file[..cut].to_vec()));
        assert!(
            e.starts_with("cut.cplan") && e.contains("byte "),
            "{cut}: {e}"
        );
    }
}

#[test]
fn a_changed_byte_is_refused_by_the_checksum() {
    let file = small();
    for at in (HEADER..file.len()).step_by(5) {
        let mut bad = file.clone();
        bad[at] ^= 0x10;
        let e = refusal(&bad);
        assert!(e.contains("byte 20 (checksum)"), "{at}: {e}");
    }
}

#[test]
fn changed_bytes_behind_a_valid_checksum_are_refused_or_read_never_a_panic() {
    let file = small();
    let mut seen_field = false;
    for at in HEADER..file.len() {
        for x in [0x01u8, 0x80, 0xFF] {
            let mut bad = file.clone();
            bad[at] ^= x;
            let e = refusal(&resealed(bad));
            if !e.is_empty() {
                // The offset, or the plan's own version check.
                assert!(
                    e.contains("cut.cplan: byte ") || e.contains("cut.cplan: format_version: "),
                    "{at}: {e}"
                );
                seen_field |= e.contains("sub_node_list[");
            }
        }
    }
    assert!(seen_field, "no refusal named a field path");
}

#[test]
fn the_signature_and_version_are_checked() {
    let file = small();
    let e = refusal(b"{\"format_version\": 1}");
    assert!(e.contains("signature"), "{e}");
    let mut v2 = file.clone();
    v2[8] = 2;
    let e = refusal(&v2);
    assert!(
        e.contains(
            "byte 8 (version): the compact plan is encoding 2, this planner reads encoding 1"
        ),
        "{e}"
    );
}

#[test]
fn a_field_path_names_where_a_refusal_is() {
    let file = small();
    let plan = Plan::from_compact(&file, "x").unwrap();
    // Replace the first cable's `gbps` value (an unsigned integer) by a
    // string: the derive refuses it, at that field.
    let mut w = Writer::default();
    plan.serialize(&mut w).unwrap();
    let key = w.strings.iter().position(|s| s == "gbps").unwrap() as u8;
    let cables = w.strings.iter().position(|s| s == "cables").unwrap();
    assert!(key < 0x80 && cables < 0x80);
    let mut body_value = w.out.clone();
    // The first `gbps` key after the `cables` key.
    let at_cables = body_value
        .windows(2)
        .position(|p| p == [STR, cables as u8])
        .unwrap();
    let at = at_cables
        + body_value[at_cables..]
            .windows(3)
            .position(|p| p[0] == STR && p[1] == key && p[2] == UINT)
            .unwrap();
    body_value[at + 2] = TRUE;
    body_value.remove(at + 3);
    let mut body = Vec::new();
    varint(&mut body, w.strings.len() as u64);
    for s in &w.strings {
        varint(&mut body, s.len() as u64);
        body.extend_from_slice(s.as_bytes());
    }
    body.extend_from_slice(&body_value);
    let mut bad = file[..HEADER].to_vec();
    bad.extend_from_slice(&body);
    let e = refusal(&resealed(bad));
    assert!(e.contains("(cables[0].gbps)"), "{e}");
    assert!(e.contains("invalid type: boolean `true`"), "{e}");
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    // A plan whose first field is one the plan does not have, so that
    // serde skips its value whatever it holds: nested 10,000 levels.
    let mut body = Vec::new();
    varint(&mut body, 1);
    varint(&mut body, 3);
    body.extend_from_slice(b"zzz");
    body.push(MAP);
    body.extend_from_slice(&1u32.to_le_bytes());
    body.extend_from_slice(&[STR, 0]);
    for _ in 0..10_000 {
        body.push(SEQ);
        body.extend_from_slice(&1u32.to_le_bytes());
    }
    body.push(NULL);
    let mut file = SIGNATURE.to_vec();
    file.extend_from_slice(&COMPACT_VERSION.to_le_bytes());
    file.extend_from_slice(&[0; 16]);
    file.extend_from_slice(&body);
    let e = refusal(&resealed(file));
    assert!(e.contains("nested more than 128 levels deep"), "{e}");
}

/// Every use of a switch's name in a plan read back (its own entry, the
/// cables and port peers that reach it, the sub-nodes on it) is one
/// shared allocation, from the compact plan and from the JSON alike, and
/// from the design that made it.
#[test]
fn a_read_plan_holds_each_name_once() {
    let (inv, opts) = shorthand::bigraph(4, 8, &Shorthand::default()).unwrap();
    let designed = design(&inv, &opts).unwrap().into_plan();
    let compact = designed.to_compact().unwrap();
    let json = designed.to_json().unwrap();
    let read = [
        ("designed", designed.clone()),
        ("compact", Plan::from_compact(&compact, "p.cplan").unwrap()),
        ("json", Plan::from_json(&json, "p.json").unwrap()),
        (
            "toml",
            Plan::from_toml(&designed.to_toml().unwrap(), "p.toml").unwrap(),
        ),
    ];
    for (how, plan) in &read {
        assert_eq!(plan, &designed, "{how}");
        let mut uses = 0;
        for s in &plan.switch_list {
            let name = &s.name;
            let same = |other: &Name| {
                assert_eq!(other, name, "{how}");
                assert!(Name::ptr_eq(other, name), "{how}: {other} is a copy");
            };
            same(&s.physical);
            for c in plan.cables.iter().filter(|c| c.a == *name || c.b == *name) {
                same(if c.a == *name { &c.a } else { &c.b });
                uses += 1;
            }
            for p in plan.switch_list.iter().flat_map(|s| &s.ports) {
                if let Some(peer) = p.peer.as_ref().filter(|p| *p == name) {
                    same(peer);
                    uses += 1;
                }
            }
            for sn in plan.sub_node_list.iter().filter(|sn| sn.switch == *name) {
                same(&sn.switch);
                uses += 1;
            }
        }
        // Each inter-switch cable names two switches, in the cable and in
        // both ports' peers; each sub-node cable one, in the cable and the
        // sub-node.
        let inter = (plan.cables.iter())
            .filter(|c| c.kind == crate::plan::CableKind::InterSwitch)
            .count();
        let to_nics = plan.cables.len() - inter;
        assert_eq!(uses, 4 * inter + 2 * to_nics, "{how}");
        // A NIC's name and a server's name are shared the same way.
        let (first, last) = (&plan.sub_node_list[0], &plan.sub_node_list[4]);
        assert!(Name::ptr_eq(&first.nic, &last.nic), "{how}");
        assert!(Name::ptr_eq(&first.server, &plan.servers[0].name), "{how}");
    }
}

proptest::proptest! {
    /// Any text a name may hold goes through the compact plan and the JSON
    /// and comes back equal, in a field of each kind.
    #[test]
    fn any_name_round_trips_through_every_format(text in ".{0,24}") {
        let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
        let mut plan = design(&inv, &opts).unwrap().into_plan();
        plan.cables[0].b_port = text.as_str().into();
        plan.switch_list[0].ports[0].peer = Some(text.clone().into());
        plan.sub_node_list[0].nic = Name::new(&text);
        let back = Plan::from_compact(&plan.to_compact().unwrap(), "p.cplan").unwrap();
        proptest::prop_assert_eq!(&back, &plan);
        proptest::prop_assert_eq!(&*back.cables[0].b_port, text.as_str());
        let back = Plan::from_json(&plan.to_json().unwrap(), "p.json").unwrap();
        proptest::prop_assert_eq!(&back, &plan);
        proptest::prop_assert_eq!(back.sub_node_list[0].nic.as_str(), text.as_str());
    }
}
