//! The direct reader ([`super::direct`]) against serde's, its reference:
//! the same plan from every plan the planner writes, and the same plan or
//! the same refusal from damaged and re-shaped ones.

use proptest::prelude::*;

use super::tests::{bundled_plans, designs, refusal, resealed, small};
use super::*;

/// Both readers' answers for a body: equal plans (and the same JSON
/// written back), or the same refusal at the same offset.
fn same_answer(body: &[u8]) -> std::result::Result<(), String> {
    let direct = decode(body, Decoder::Direct);
    let serde = decode(body, Decoder::Serde);
    match (&direct, &serde) {
        (Ok(a), Ok(b)) if a == b && a.to_json().ok() == b.to_json().ok() => Ok(()),
        (Err(a), Err(b)) if a.at == b.at && a.message == b.message => Ok(()),
        _ => Err(format!(
            "direct {:?}\nserde {:?}",
            direct.as_ref().map(|p| p.to_json().ok()),
            serde.as_ref().map(|p| p.to_json().ok())
        )),
    }
}

/// A reader of `body` past its string table.
fn table(body: &[u8]) -> Reader<'_> {
    let mut r = Reader {
        bytes: body,
        at: 0,
        strings: Cow::Borrowed(&[]),
        depth: 0,
    };
    r.strings().unwrap();
    r
}

/// The plan of `file` read without serde at all, a window of `window`
/// bytes at a time: `None` when it gave up.
fn direct_in(file: &[u8], window: usize) -> Option<Plan> {
    let body = &file[HEADER..];
    direct::plan(&mut &body[..], body.len() as u64, window)
}

/// [`direct_in`] with the window the planner uses.
fn direct_only(file: &[u8]) -> Option<Plan> {
    direct_in(file, WINDOW)
}

/// Every plan the planner writes is read by the direct reader itself
/// (it never hands a plain plan to serde), equal to serde's reading.
#[test]
fn the_direct_reader_reads_every_bundled_plan_and_design_as_serde_does() {
    let mut plans: Vec<(String, Plan)> = bundled_plans()
        .into_iter()
        .filter_map(|(file, text)| Some((file.clone(), Plan::from_json(&text, &file).ok()?)))
        .collect();
    plans.extend(designs().into_iter().map(|p| (p.describe(), p)));
    assert!(plans.len() >= 15, "{} plans", plans.len());
    for (what, plan) in &plans {
        let file = plan.to_compact().unwrap();
        let direct = direct_only(&file).unwrap_or_else(|| panic!("{what}: direct gave up"));
        let serde = decode(&file[HEADER..], Decoder::Serde).unwrap();
        assert_eq!(direct, serde, "{what}");
        assert_eq!(direct, *plan, "{what}");
        assert_eq!(direct.to_json().unwrap(), plan.to_json().unwrap(), "{what}");
        same_answer(&file[HEADER..]).unwrap();
    }
}

/// A body's value as a tree, to re-shape plans the writer would not
/// write: its tags and contents as read (`Neg` and `Str` hold the raw
/// varint, `Float` the bytes).
#[derive(Clone, Debug)]
enum V {
    Null,
    Bool(bool),
    Uint(u64),
    Neg(u64),
    Float([u8; 8]),
    Str(u64),
    /// A string index written a byte longer than the writer does (a zero
    /// byte after a last byte given the continuation bit): the same
    /// number to any reader.
    LongStr(u64),
    Seq(Vec<V>),
    Map(Vec<(V, V)>),
}

fn parse(r: &mut Reader<'_>) -> V {
    let tag = r.bytes[r.at];
    r.at += 1;
    match tag {
        NULL => V::Null,
        FALSE => V::Bool(false),
        TRUE => V::Bool(true),
        UINT => V::Uint(r.varint().unwrap()),
        NEG => V::Neg(r.varint().unwrap()),
        FLOAT => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&r.bytes[r.at..r.at + 8]);
            r.at += 8;
            V::Float(b)
        }
        STR => V::Str(r.varint().unwrap()),
        SEQ => {
            let n = r.count().unwrap();
            V::Seq((0..n).map(|_| parse(r)).collect())
        }
        MAP => {
            let n = r.count().unwrap();
            V::Map((0..n).map(|_| (parse(r), parse(r))).collect())
        }
        t => panic!("tag {t}"),
    }
}

fn encode(v: &V, out: &mut Vec<u8>) {
    match v {
        V::Null => out.push(NULL),
        V::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
        V::Uint(n) => {
            out.push(UINT);
            varint(out, *n);
        }
        V::Neg(n) => {
            out.push(NEG);
            varint(out, *n);
        }
        V::Float(b) => {
            out.push(FLOAT);
            out.extend_from_slice(b);
        }
        V::Str(i) => {
            out.push(STR);
            varint(out, *i);
        }
        V::LongStr(i) => {
            out.push(STR);
            varint(out, *i);
            if let Some(last) = out.last_mut() {
                *last |= 0x80;
            }
            out.push(0);
        }
        V::Seq(items) => {
            out.push(SEQ);
            out.extend_from_slice(&(items.len() as u32).to_le_bytes());
            items.iter().for_each(|i| encode(i, out));
        }
        V::Map(items) => {
            out.push(MAP);
            out.extend_from_slice(&(items.len() as u32).to_le_bytes());
            for (k, v) in items {
                encode(k, out);
                encode(v, out);
            }
        }
    }
}

/// How many maps the tree has.
fn maps(v: &V) -> usize {
    match v {
        V::Seq(items) => items.iter().map(maps).sum(),
        V::Map(items) => 1 + items.iter().map(|(_, v)| maps(v)).sum::<usize>(),
        _ => 0,
    }
}

/// The `n`-th map of the tree, depth first.
fn nth_map<'a>(v: &'a mut V, n: &mut usize) -> Option<&'a mut Vec<(V, V)>> {
    match v {
        V::Seq(items) => items.iter_mut().find_map(|i| nth_map(i, n)),
        V::Map(items) => {
            if *n == 0 {
                return Some(items);
            }
            *n -= 1;
            items.iter_mut().find_map(|(_, v)| nth_map(v, n))
        }
        _ => None,
    }
}

/// Re-shapes one map of the plan `file`: `how` picks what (key order,
/// a field twice or left out, a key the record does not have, a number
/// as a negative-integer tag or out of range, a string another entry,
/// a value null), `which` the map and `pick` the entry and the values.
fn reshaped(file: &[u8], which: usize, how: u8, pick: u64) -> Vec<u8> {
    let body = &file[HEADER..];
    let mut r = table(body);
    let (table, entries) = (r.at, r.strings.len() as u64);
    let mut tree = parse(&mut r);
    let mut n = which % maps(&tree);
    let map = nth_map(&mut tree, &mut n).unwrap();
    if !map.is_empty() {
        let at = pick as usize % map.len();
        match how % 8 {
            0 => map.rotate_left(at),
            1 => map.push(map[at].clone()),
            2 => {
                map.remove(at);
            }
            3 => map.push((V::Str(pick % entries), V::Uint(pick >> 8))),
            4 => {
                if let V::Uint(n) = map[at].1 {
                    map[at].1 = V::Neg(n << 1);
                }
            }
            5 => {
                if let V::Uint(_) = map[at].1 {
                    map[at].1 = V::Uint(pick >> (pick % 64));
                }
            }
            6 => {
                if let V::Str(_) = map[at].1 {
                    map[at].1 = V::Str(pick % (entries + 2));
                }
            }
            _ => map[at].1 = V::Null,
        }
    }
    let mut out = file[..HEADER + table].to_vec();
    encode(&tree, &mut out);
    resealed(out)
}

/// A design of every topology and every bundled plan (breakouts, racks,
/// NVLink and PCIe trees among them), as compact plans.
fn files() -> &'static [Vec<u8>] {
    static FILES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let bundled = bundled_plans()
            .into_iter()
            .filter_map(|(file, text)| Plan::from_json(&text, &file).ok());
        (designs().into_iter().chain(bundled))
            .map(|p| p.to_compact().unwrap())
            .collect()
    })
}

/// The tree with every map key whose table index `pad` picks written a
/// byte longer ([`V::LongStr`]).
fn padded(v: &V, pad: &impl Fn(u64) -> bool) -> V {
    match v {
        V::Seq(items) => V::Seq(items.iter().map(|i| padded(i, pad)).collect()),
        V::Map(items) => V::Map(
            items
                .iter()
                .map(|(k, v)| {
                    let k = match k {
                        V::Str(i) if pad(*i) => V::LongStr(*i),
                        k => k.clone(),
                    };
                    (k, padded(v, pad))
                })
                .collect(),
        ),
        v => v.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Keys written in longer varints than the writer's, some of them
    /// (the direct reader finds a record's fields by their keys' bytes
    /// where the writer's form is there, else by their table index): the
    /// plan serde reads, read by the direct reader itself.
    #[test]
    fn keys_in_longer_varints_read_as_serde_reads_them(
        plan in any::<usize>(), seed in any::<u64>(), every in 1u64..8
    ) {
        let files = files();
        let file = &files[plan % files.len()];
        let mut r = table(&file[HEADER..]);
        let value = r.at;
        let tree = parse(&mut r);
        let pad = |i: u64| i % every == seed % every || (seed >> (i % 64)) & 1 == 1;
        let mut out = file[..HEADER + value].to_vec();
        encode(&padded(&tree, &pad), &mut out);
        let out = resealed(out);
        prop_assert!(direct_only(&out).is_some());
        prop_assert_eq!(same_answer(&out[HEADER..]), Ok(()));
    }

    /// Random re-shapings of the plan's records read as serde reads
    /// them: the same plan, or the same refusal; never a panic.
    #[test]
    fn reshaped_plans_read_as_serde_reads_them(
        plan in any::<usize>(), which in 0usize..10_000, how in 0u8..8, pick in any::<u64>()
    ) {
        let files = files();
        let bad = reshaped(&files[plan % files.len()], which, how, pick);
        prop_assert_eq!(same_answer(&bad[HEADER..]), Ok(()));
        refusal(&bad);
    }

    /// Random bytes changed behind a valid checksum: the same plan or the
    /// same refusal from both readers; never a panic.
    #[test]
    fn corrupted_bytes_read_as_serde_reads_them(
        changes in proptest::collection::vec((any::<usize>(), 1u8..=255), 1..4)
    ) {
        let mut file = small();
        for (at, x) in changes {
            let at = HEADER + at % (file.len() - HEADER);
            file[at] ^= x;
        }
        let file = resealed(file);
        prop_assert_eq!(same_answer(&file[HEADER..]), Ok(()));
        refusal(&file);
    }
}

/// Damaged bodies get serde's refusal, naming the file, the byte, the
/// field and what to do, from the direct reader too.
#[test]
fn damaged_bodies_are_refused_naming_file_byte_field_and_fix() {
    let file = small();
    let body = &file[HEADER..];
    let mut r = table(body);
    let (table, entries) = (r.at, r.strings.len() as u64);
    let tree = parse(&mut r);
    let with = |value: &[u8], tail: &[u8]| {
        let mut out = file[..HEADER + table].to_vec();
        out.extend_from_slice(value);
        out.extend_from_slice(tail);
        resealed(out)
    };
    let mut plain = Vec::new();
    encode(&tree, &mut plain);
    let key = |name: &str| r.strings.iter().position(|s| *s == name).unwrap() as u64;
    // The first sub-node's `port`, as it is written and as given below.
    let mut first_port = Vec::new();
    encode(&V::Str(key("port")), &mut first_port);
    let sub_nodes = {
        let mut k = Vec::new();
        encode(&V::Str(key("sub_node_list")), &mut k);
        plain.windows(k.len()).position(|w| w == k).unwrap()
    };
    let port_at = sub_nodes
        + plain[sub_nodes..]
            .windows(first_port.len() + 1)
            .position(|w| w[..first_port.len()] == first_port[..] && w[first_port.len()] == UINT)
            .unwrap()
        + first_port.len();
    let replaced = |value: &[u8]| {
        let mut v = plain[..port_at].to_vec();
        v.extend_from_slice(value);
        // The port's old value: its tag and a one-byte varint.
        assert!(plain[port_at + 1] < 0x80);
        v.extend_from_slice(&plain[port_at + 2..]);
        v
    };
    let fix = "write the plan again (planner design ... --out plan.cplan), or give its JSON";
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "a varint longer than 64 bits",
            with(
                &replaced(&[
                    UINT, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
                ]),
                b"",
            ),
            "(sub_node_list[0].port): a number is longer than 64 bits".to_string(),
        ),
        (
            "a port past u32",
            with(&replaced(&[UINT, 0x80, 0x80, 0x80, 0x80, 0x10]), b""),
            "(sub_node_list[0].port): invalid value: integer `4294967296`, expected u32"
                .to_string(),
        ),
        (
            "a port given as a string",
            with(&replaced(&[STR, 0]), b""),
            "(sub_node_list[0].port): invalid type: string".to_string(),
        ),
        (
            "a string not in the table",
            with(
                &replaced(&{
                    let mut v = vec![STR];
                    varint(&mut v, entries);
                    v
                }),
                b"",
            ),
            format!(
                "(sub_node_list[0].port): string {entries} is not in the table of {entries} strings"
            ),
        ),
        (
            "trailing bytes",
            with(&plain, &[NULL]),
            "bytes follow the plan's value".to_string(),
        ),
        (
            "a count past the end",
            with(&[MAP, 0xFF, 0xFF, 0xFF, 0x7F], b""),
            "a count of 2147483647 items is more than the 0 bytes left".to_string(),
        ),
        (
            "an index past the table",
            with(&[MAP, 1, 0, 0, 0, STR], &{
                let mut v = Vec::new();
                varint(&mut v, entries + 5);
                v
            }),
            format!(
                "string {} is not in the table of {entries} strings",
                entries + 5
            ),
        ),
    ];
    for (what, bad, says) in cases {
        same_answer(&bad[HEADER..]).unwrap_or_else(|e| panic!("{what}: {e}"));
        let e = refusal(&bad);
        assert!(e.starts_with("cut.cplan"), "{what}: {e}");
        assert!(e.contains(": byte "), "{what}: {e}");
        assert!(e.contains(&says), "{what}: {e}");
        assert!(e.contains(fix), "{what}: {e}");
    }
}

/// Read a window of a few bytes at a time, so that every record, key,
/// varint, count and serde-read table crosses a refill, every plan is
/// read as with the planner's window: the same plan as serde's.
#[test]
fn a_plan_read_in_small_windows_is_the_plan() {
    let mut files: Vec<(String, Vec<u8>)> = designs()
        .into_iter()
        .map(|p| (p.describe(), p.to_compact().unwrap()))
        .collect();
    files.extend(bundled_plans().into_iter().filter_map(|(file, text)| {
        let plan = Plan::from_json(&text, &file).ok()?;
        Some((file, plan.to_compact().unwrap()))
    }));
    for (what, file) in &files {
        let serde = decode(&file[HEADER..], Decoder::Serde).unwrap();
        // Every size up to 40 bytes for small plans, a few for the rest.
        let sizes: Vec<usize> = if file.len() < 20_000 {
            (1..=40).chain([97, 1000]).collect()
        } else {
            vec![1, 7, 64, 4093]
        };
        for window in sizes {
            let plan = direct_in(file, window)
                .unwrap_or_else(|| panic!("{what}, window {window}: gave up"));
            assert!(plan == serde, "{what}, window {window}");
        }
    }
}

/// A body that ends early (a file cut while the header still gives the
/// whole length) or is cut and resealed is never read as a plan by the
/// windowed reader, at any length and window: reading whole then words
/// the refusal.
#[test]
fn a_cut_body_is_never_a_plan_at_any_length() {
    let file = small();
    let body = &file[HEADER..];
    for cut in 0..body.len() {
        for window in [1, 3, 16, WINDOW] {
            let short = &body[..cut];
            let full = direct::plan(&mut &short[..], body.len() as u64, window);
            assert!(full.is_none(), "cut at {cut}, window {window}");
            let sealed = direct::plan(&mut &short[..], cut as u64, window);
            assert!(
                sealed.is_none(),
                "cut at {cut} and resealed, window {window}"
            );
        }
        same_answer(&resealed(file[..HEADER + cut].to_vec())[HEADER..]).unwrap();
    }
}

proptest! {
    /// The checksum taken over a body in pieces, as it is read, is the
    /// checksum of the whole body.
    #[test]
    fn a_checksum_in_pieces_is_the_whole_checksum(
        body in proptest::collection::vec(any::<u8>(), 0..100),
        cuts in proptest::collection::vec(0usize..100, 0..6),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut sum = Checksum::default();
        let mut from = 0;
        for c in cuts.into_iter().chain([body.len()]) {
            sum.add(&body[from..c]);
            from = c;
        }
        prop_assert_eq!(sum.finish(), checksum(&body));
    }
}

/// What the planner binary reads: a plan file decoded as it is read is
/// the plan the whole file gives, and a damaged file either is left to
/// the whole read (which words the refusal) or gets the same answer.
#[test]
fn a_file_read_as_it_is_read_is_the_file_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.cplan");
    let whole = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let streamed = read_streamed(&path, "plan.cplan").map(|r| r.map_err(|e| e.to_string()));
        let read = read(&path).and_then(|contents| {
            Plan::from_file(&contents, "plan.cplan").map_err(|e| e.to_string())
        });
        (streamed, read)
    };
    let mut plans = designs();
    plans.extend(
        bundled_plans()
            .into_iter()
            .filter_map(|(file, text)| Plan::from_json(&text, &file).ok()),
    );
    for plan in &plans {
        let (streamed, read) = whole(&plan.to_compact().unwrap());
        let what = plan.describe();
        let streamed = streamed.unwrap_or_else(|| panic!("{what}: not read as it is read"));
        assert!(streamed.as_ref().ok() == read.as_ref().ok(), "{what}");
        assert_eq!(streamed.unwrap(), *plan, "{what}");
    }
    // Damaged: cut, lengthened, changed bytes (with and without the
    // checksum resealed), another version; a JSON plan is left alone.
    let file = small();
    let mut damaged: Vec<Vec<u8>> = (0..file.len()).map(|cut| file[..cut].to_vec()).collect();
    damaged.extend((HEADER..file.len()).map(|cut| resealed(file[..cut].to_vec())));
    let mut longer = file.clone();
    longer.push(0);
    damaged.push(longer.clone());
    damaged.push(resealed(longer));
    for at in 0..file.len() {
        let mut bad = file.clone();
        bad[at] ^= 0x41;
        damaged.push(bad.clone());
        if at >= HEADER {
            damaged.push(resealed(bad));
        }
    }
    let plan = Plan::from_compact(&file, "plan.cplan").unwrap();
    let mut version = plan.clone();
    version.format_version += 1;
    damaged.push(version.to_compact().unwrap());
    damaged.push(plan.to_json().unwrap().into_bytes());
    let mut refused = 0;
    for (n, bad) in damaged.iter().enumerate() {
        let (streamed, read) = whole(bad);
        refused += usize::from(read.is_err());
        if let Some(streamed) = streamed {
            assert_eq!(streamed, read, "damaged file {n}");
        }
    }
    assert!(refused > file.len(), "{refused} refused");
}
