//! `sot import`, `sot cabling` and `sot push` on Nautobot's own answers
//! (issue #31), without Nautobot: the answers of a real Nautobot 3.2.7
//! recorded by `sot::record_nautobot_answers_issue_31` (run with
//! `--ignored` after `.ci/nautobot up`) into
//! `tests/data/nautobot-3.2.7/breakout.jsonl`, replayed
//! (`support/nautobot_replay.rs`). The breakout-200g leaf-spine routed
//! with eBGP: GraphQL reads with `terminations`, cable types, `depth`-less
//! nested objects and UUIDs; REST writes of devices' custom fields,
//! interfaces, cables with `terminations`, prefixes, addresses and their
//! assignments. The fuzz target `fuzz_sot_nautobot_cabling_push`
//! (`fuzz.rs`) spoils these answers.
//!
//! The spoiled-write tests at the end run against the real Nautobot
//! instead (`.ci/nautobot up`; they skip without it): a push whose write
//! half-way through a phase is spoiled leaves a state no recording holds,
//! so whether the push after it finishes the job can only be seen on
//! Nautobot itself. One run at a time on a Nautobot: they load, push and
//! delete at a location of their own.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use provisioner::sot::cabling::CablingOptions;
use provisioner::sot::import::ImportOptions;
use provisioner::sot::push::PushOptions;
use provisioner::sot::{Client, Flavor, Limits, Settings, TokenSource};

#[path = "../support/nautobot_replay.rs"]
pub(crate) mod nautobot_replay;

use nautobot_replay::{Exchange, Replay};

/// Where the recording stands in Nautobot.
pub(crate) const LOCATION: &str = "sot-test-record";
/// The recording's plan name (its owner tag `topo-plan-<PLAN>`): apart
/// from the breakout round trip's `breakout-200g`, so that on a Nautobot
/// kept between runs neither counts the other's tagged cables.
pub(crate) const PLAN: &str = "breakout-200g-recorded";
/// Its plan's link pool (apart from the other round trips').
pub(crate) const LINK_POOL: &str = "172.31.252.0/24";
/// The inventory the recording loads.
pub(crate) const INVENTORY: &str = "topologies/breakout-200g.toml";

/// The recording's file.
pub(crate) fn recording_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nautobot-3.2.7/breakout.jsonl")
}

/// The recording, read once.
pub(crate) fn recording() -> &'static [Exchange] {
    static R: std::sync::OnceLock<Vec<Exchange>> = std::sync::OnceLock::new();
    R.get_or_init(|| nautobot_replay::load(&recording_path()))
}

/// The client's limits in the recording and its replays: the campaign's
/// (100 a page, 20 pages, 1 MiB a body, 2 tries) with the client's own
/// four requests in flight (a bulk step's batches depend on the requests
/// in flight, so a replay must send the recording's).
pub(crate) fn limits(timeout: std::time::Duration) -> Limits {
    Limits {
        page_size: 100,
        max_pages: 20,
        max_body: 1 << 20,
        tries: 2,
        backoff: std::time::Duration::from_millis(5),
        timeout,
        concurrency: Limits::default().concurrency,
    }
}

/// A Nautobot client of `url` with `token` (a file) and [`limits`].
pub(crate) fn client_of(url: &str, token: &Path, timeout: std::time::Duration) -> Client {
    Client::new(&Settings {
        flavor: Flavor::Nautobot,
        url: url.to_string(),
        token: TokenSource::File(token.to_path_buf()),
        ca_file: None,
        limits: limits(timeout),
    })
    .expect("a client")
}

pub(crate) fn import_options() -> ImportOptions {
    ImportOptions {
        location: Some(LOCATION.to_string()),
        server_role: "gpu-server".to_string(),
        switch_role: "fabric-switch".to_string(),
        name: Some(PLAN.to_string()),
    }
}

pub(crate) fn cabling_options() -> CablingOptions {
    CablingOptions {
        status: None,
        location: Some(LOCATION.to_string()),
    }
}

pub(crate) fn push_options() -> PushOptions {
    PushOptions {
        location: Some(LOCATION.to_string()),
        switch_role: "fabric-switch".to_string(),
        dry_run: false,
        batch: 100,
    }
}

/// The plan pushed: the imported inventory as a fat-tree routed with eBGP,
/// its /31s from [`LINK_POOL`].
pub(crate) fn plan_of(imported: &planner::inventory::Inventory) -> planner::plan::Plan {
    let topo = planner::design::DesignOptions {
        topology: planner::plan::Topology::FatTree,
        ..planner::design::DesignOptions::default()
    };
    let mut plan = planner::design::design(imported, &topo)
        .expect("the imported breakout inventory designs")
        .plan()
        .clone();
    plan.routing.mode = planner::routing::RoutingMode::Bgp;
    plan.addressing.link_pool = LINK_POOL.to_string();
    plan
}

/// A replay of the recording's `steps`, answering through `spoil`, and a
/// Nautobot client of it with a `timeout`.
pub(crate) struct Replayed {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) url: String,
    pub(crate) client: Client,
    pub(crate) replay: Arc<Mutex<Replay>>,
    _dir: tempfile::TempDir,
}

pub(crate) fn replayed(
    steps: &[&str],
    spoil: Option<Arc<nautobot_replay::Spoil>>,
    timeout: std::time::Duration,
) -> Replayed {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut r = Replay::new(recording(), steps, &["push", "push again"]);
    r.spoil = spoil;
    let replay = Arc::new(Mutex::new(r));
    let url = rt.block_on(nautobot_replay::replay(replay.clone()));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let token = dir.path().join("token");
    std::fs::write(&token, "0123456789abcdef0123456789abcdef01234567\n").expect("token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let client = client_of(&url, &token, timeout);
    Replayed {
        rt,
        url,
        client,
        replay,
        _dir: dir,
    }
}

/// The plan of the recording: its import replayed, designed.
pub(crate) fn recorded_plan() -> &'static planner::plan::Plan {
    static P: std::sync::OnceLock<planner::plan::Plan> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        let r = replayed(&["import"], None, std::time::Duration::from_secs(10));
        let opts = import_options();
        let snap = (r.rt)
            .block_on(provisioner::sot::import::fetch(&r.client, &opts))
            .expect("the recorded import reads");
        let toml = provisioner::sot::import::inventory_toml(&snap, &opts, "nautobot")
            .expect("the recorded import is an inventory");
        let inv = planner::inventory::Inventory::from_toml(&toml, "imported.toml")
            .expect("the imported inventory reads");
        plan_of(&inv)
    })
}

/// The honest replay does what the real server did: the import gives the
/// inventory the recording loaded (the same cables and breakouts), the
/// push sends exactly the recorded requests and creates what it created,
/// the second push changes nothing, and `sot cabling` reads every cable
/// the push made, each named by its URL.
#[test]
fn recorded_nautobot_answers_replay_honestly_issue_31() {
    let plan = recorded_plan();
    let original = planner::inventory::Inventory::from_toml(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(INVENTORY),
        )
        .unwrap(),
        "breakout-200g.toml",
    )
    .unwrap();
    let theirs = plan_of(&original);
    assert_eq!(plan.cables, theirs.cables);

    let r = replayed(
        &["push", "push again"],
        None,
        std::time::Duration::from_secs(10),
    );
    let first = (r.rt)
        .block_on(provisioner::sot::push::push(
            &r.client,
            plan,
            &push_options(),
            &mut |_| {},
        ))
        .unwrap();
    assert!(
        first.diff.conflicts.is_empty(),
        "{:?}",
        first.diff.conflicts
    );
    let cables = (first.diff.changes.iter())
        .filter(|c| c.kind == "cable" && c.action == "create")
        .count();
    assert_eq!(cables, 32, "{:?}", first.diff.changes);
    let again = (r.rt)
        .block_on(provisioner::sot::push::push(
            &r.client,
            plan,
            &push_options(),
            &mut |_| {},
        ))
        .unwrap();
    assert!(again.diff.changes.is_empty(), "{:?}", again.diff.changes);
    assert_eq!((again.created, again.updated), (0, 0));
    let log = r.replay.lock().unwrap().log.clone();
    let unrecorded: Vec<_> = log.iter().filter(|x| !x.4).collect();
    assert!(unrecorded.is_empty(), "{unrecorded:?}");
    // The client's four requests in flight did overlap, and every
    // recorded write was made once.
    let most = log.iter().map(|x| x.6).max().unwrap_or(0);
    assert!(most >= 2, "at most {most} request(s) in flight");
    {
        let rp = r.replay.lock().unwrap();
        assert!(rp.again.is_empty(), "{:?}", rp.again);
        assert_eq!(rp.applied.len(), rp.recorded_writes());
        assert_eq!(rp.unrecorded_state, 0);
    }
    let recorded_writes = (recording().iter())
        .filter(|x| x.step == "push" && x.method != "GET" && x.path != "/api/graphql/")
        .count();
    let sent_writes = (log.iter())
        .filter(|x| x.0 != "GET" && x.1 != "/api/graphql/")
        .count();
    assert_eq!(sent_writes, recorded_writes);

    let r = replayed(&["cabling"], None, std::time::Duration::from_secs(10));
    let snap = (r.rt)
        .block_on(provisioner::sot::cabling::fetch(
            &r.client,
            &cabling_options(),
        ))
        .unwrap();
    let (observed, skipped) =
        provisioner::sot::cabling::observed(r.client.base(), &snap, "nautobot");
    assert_eq!(skipped, 0);
    assert_eq!(observed.len(), crate::a_sot::plan_rows(plan).len());
    assert!(
        (observed.iter())
            .all(|o| format!("{o:?}").contains(&format!("{}/api/dcim/cables/", r.url))),
        "{observed:?}"
    );
    let v = planner::validate::validate_cabling(plan, &observed, &["sot".to_string()]);
    assert!(v.ok, "{:?}", v.findings);
}

/// The UUIDs the honest recorded push wrote with.
fn written_ids() -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    fn walk(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::String(s) if s.len() == 36 => {
                out.insert(s.clone());
            }
            serde_json::Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    for x in recording()
        .iter()
        .filter(|x| x.step == "push" && x.method != "GET")
    {
        if x.path != "/api/graphql/" {
            walk(&x.body, &mut out);
        }
    }
    out
}

/// The recorded push with every read of the plan's objects changed by
/// `spoil` (given the GraphQL `data` and the ids the honest push wrote
/// with), and an empty `data` for any GraphQL query the recording does
/// not hold (the read-back of ids it never gave): the push's error and
/// the writes it sent (method, path, body). Then a second push with
/// honest answers must finish the job exactly (every recorded write made
/// once, no other write).
fn push_on_spoiled_state(
    spoil: impl Fn(&mut serde_json::Value, &std::collections::BTreeSet<String>) + Send + Sync + 'static,
) -> (String, Vec<(String, String, serde_json::Value)>) {
    let written = written_ids();
    let hook: Arc<nautobot_replay::Spoil> = Arc::new(
        move |method: &str, url: &str, status: u16, v: &serde_json::Value| {
            if method != "POST" || !url.ends_with("/api/graphql/") {
                return None;
            }
            if status == 400 {
                return Some((200, br#"{"data": {}}"#.to_vec()));
            }
            // The read of the plan's objects (a read-back by id has no
            // interfaces).
            if !v["data"]["devices"][0]["interfaces"].is_array() {
                return None;
            }
            let mut v = v.clone();
            spoil(&mut v["data"], &written);
            Some((200, v.to_string().into_bytes()))
        },
    );
    let r = replayed(&["push"], Some(hook), std::time::Duration::from_secs(10));
    let e = (r.rt)
        .block_on(provisioner::sot::push::push(
            &r.client,
            recorded_plan(),
            &push_options(),
            &mut |_| {},
        ))
        .expect_err("the spoiled read stops the push")
        .to_string();
    let writes = (r.replay.lock().unwrap().log.iter())
        .filter(|x| x.0 != "GET" && x.1 != "/api/graphql/")
        .map(|x| (x.0.clone(), x.1.clone(), x.5.clone()))
        .collect();
    // The spoiled push stopped before a phase: a second push with honest
    // answers, on what the first left, finishes the job, each recorded
    // write made once and nothing else written.
    let from = {
        let mut rp = r.replay.lock().unwrap();
        assert_eq!(rp.unrecorded_state, 0, "stopped half-way through a phase");
        rp.honest();
        rp.log.len()
    };
    (r.rt)
        .block_on(provisioner::sot::push::push(
            &r.client,
            recorded_plan(),
            &push_options(),
            &mut |_| {},
        ))
        .expect("the honest second push finishes");
    let rp = r.replay.lock().unwrap();
    assert!(rp.again.is_empty(), "made twice: {:?}", rp.again);
    assert_eq!(rp.unrecorded_state, 0);
    assert_eq!(rp.applied.len(), rp.recorded_writes());
    let unrecorded: Vec<_> = (rp.log[from..].iter())
        .filter(|x| nautobot_replay::writes(&x.0, &x.1) && !x.4)
        .collect();
    assert!(unrecorded.is_empty(), "{unrecorded:?}");
    (e, writes)
}

/// The first interface of the answer whose id the honest push wrote with:
/// (device index, interface index, its id).
fn written_interface(
    data: &serde_json::Value,
    written: &std::collections::BTreeSet<String>,
) -> (usize, usize, String) {
    for (d, dev) in data["devices"].as_array().unwrap().iter().enumerate() {
        for (i, iface) in dev["interfaces"].as_array().unwrap().iter().enumerate() {
            let id = iface["id"].as_str().unwrap();
            if written.contains(id) {
                return (d, i, id.to_string());
            }
        }
    }
    panic!("no interface the push wrote with")
}

/// A spoiled read the client accepts must not steer a write, on
/// Nautobot's own answers (issue #31): in the recorded push's reads,
/// an interface the push writes with is given another interface's id
/// (listed twice), a UUID Nautobot does not have (pointing nowhere: the
/// read-back by id finds nothing), or a device's id (another kind). The
/// push stops before any write that carries the spoiled id, naming the
/// interface, the id and its URL.
#[test]
fn sot_push_nautobot_spoiled_ids_steer_no_write_issue_31() {
    use serde_json::json;

    const NOWHERE: &str = "5b0ff1ed-0000-4000-8000-000000000031";
    type Spoiler = fn(&mut serde_json::Value, &std::collections::BTreeSet<String>) -> String;
    let twin: Spoiler = |data, written| {
        let (d, i, id) = written_interface(data, written);
        let other = if i == 0 { 1 } else { 0 };
        data["devices"][d]["interfaces"][other]["id"] = json!(id);
        id
    };
    let nowhere: Spoiler = |data, written| {
        let (d, i, _) = written_interface(data, written);
        data["devices"][d]["interfaces"][i]["id"] = json!(NOWHERE);
        NOWHERE.to_string()
    };
    let device: Spoiler = |data, written| {
        let (d, i, _) = written_interface(data, written);
        let dev = data["devices"][d]["id"].clone();
        data["devices"][d]["interfaces"][i]["id"] = dev.clone();
        dev.as_str().unwrap().to_string()
    };
    for (what, spoil, says) in [
        ("twin", twin, "which the interface list gave to 2 objects"),
        ("nowhere", nowhere, "Nautobot has no interface with this id"),
        ("device", device, "which is the id of "),
    ] {
        let bad = Arc::new(Mutex::new(String::new()));
        let b = bad.clone();
        let (e, writes) = push_on_spoiled_state(move |data, written| {
            *b.lock().unwrap() = spoil(data, written);
        });
        let bad = bad.lock().unwrap().clone();
        assert!(!bad.is_empty(), "{what}: nothing spoiled");
        assert!(
            e.contains(says) && e.contains(&bad) && e.contains("/api/dcim/interfaces/"),
            "{what}: {e}"
        );
        for (m, p, body) in &writes {
            assert!(
                !body.to_string().contains(&bad),
                "{what}: {m} {p} carries {bad}: {body}"
            );
        }
    }
}

// A write spoiled half-way through a phase, then a second push, against
// the real Nautobot (issue #31). The replayed campaign above cannot check
// a second push after a push that stopped inside a phase (the recording
// holds no state for that point); these tests can, because the server is
// Nautobot itself.

/// The spoiled-write test's location: its own, so that it deletes only
/// what it made.
const SPOIL_LOCATION: &str = "sot-test-spoil";
/// Its plan's name: the owner tag `topo-plan-<name>` is this test's alone.
const SPOIL_PLAN: &str = "breakout-200g-spoiled";
/// The inventory it loads: breakout-200g cut down to a quarter of its
/// objects (the same kinds and phases), so that a push takes seconds.
const SPOIL_INVENTORY: &str = "provisioner/tests/data/breakout-200g-mini.toml";
/// Its link pool, apart from the other round trips'.
const SPOIL_LINK_POOL: &str = "172.31.251.0/24";
/// The pushing client's timeout in a case whose answer is held: the
/// answer is held one second longer.
const SPOIL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// Every other client's timeout in these tests. Nautobot's bulk writes
/// and deletes slow down with the machine's load: CI's run of 2026-11-30
/// saw the cleanup's bulk delete of a few dozen addresses pass 30 s while
/// the labs and Open MPI ran beside it, and fail the test though nothing
/// was wrong. Only a held answer needs the short timeout.
const PATIENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// A spoiled answer to a write that never reached Nautobot, by variant.
const NOT_SENT: [(u16, &str); 3] = [
    (500, "<html><body><h1>Server Error (500)</h1></body></html>"),
    (
        400,
        r#"{"detail": "refused", "id": "5b0ff1ed-0000-4000-8000-000000000031"}"#,
    ),
    // A forged success: the client believes the write made.
    (
        200,
        r#"{"id": "5b0ff1ed-0000-4000-8000-000000000031", "url": "http://127.0.0.1:9/api/dcim/cables/5b0ff1ed-0000-4000-8000-000000000031/"}"#,
    ),
];

/// A lost answer to a write Nautobot made, by variant.
fn answer_lost(variant: usize) -> nautobot_replay::Spoiled {
    use nautobot_replay::Spoiled;
    match variant % 4 {
        0 => Spoiled::Replaced(502, "<html><body><h1>502 Bad Gateway</h1></body></html>"),
        1 => Spoiled::Dropped,
        2 => Spoiled::Replaced(201, r#"{"id": "5b0ff1ed-0000-4000-8000-0000"#),
        _ => Spoiled::Held(SPOIL_TIMEOUT + std::time::Duration::from_secs(1)),
    }
}

/// A JSON value as one line, object keys sorted and array items sorted,
/// so that two reads of the same objects compare equal.
fn canon(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let mut items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k:?}: {}", canon(v)))
                .collect();
            items.sort();
            format!("{{{}}}", items.join(", "))
        }
        serde_json::Value::Array(a) => {
            let mut items: Vec<String> = a.iter().map(canon).collect();
            items.sort();
            format!("[{}]", items.join(", "))
        }
        v => v.to_string(),
    }
}

/// What Nautobot holds of the test's objects, one line per object, sorted
/// (a duplicate is a line twice): the location's devices and each of
/// their interfaces (custom fields, mode, VLANs, tags, addresses), the
/// location's cables (terminations by device and interface name, type,
/// status, label, tags), the prefixes and addresses in the link pool
/// (tags, the interfaces each is assigned to), the owner tag and the VLANs
/// it tags. Ids and times are left out: they differ between two pushes.
fn held(rt: &tokio::runtime::Runtime, c: &Client) -> Vec<String> {
    use serde_json::json;
    let tag = provisioner::sot::push::owner_tag(SPOIL_PLAN);
    let data = rt
        .block_on(c.graphql(
            "query ($loc: [String], $pool: [String], $tag: [String]) { \
             devices(location: $loc) { name _custom_field_data tags { name } \
             interfaces { name type mode untagged_vlan { vid } tagged_vlans { vid } tags { name } \
             ip_addresses { address } } } \
             cables(location: $loc) { label status { name } tags { name } cable_type { name } \
             terminations { cable_end connector interface { name device { name } } } } \
             prefixes(within_include: $pool) { prefix type tags { name } } \
             ip_addresses(prefix: $pool) { address type tags { name } interfaces { name device { name } } } \
             tags(name: $tag) { name } }",
            json!({"loc": [SPOIL_LOCATION], "pool": [SPOIL_LINK_POOL], "tag": [tag]}),
            "test: reading what the test holds",
        ))
        .expect("the test's objects read");
    let mut lines = Vec::new();
    let list = |k: &str| data[k].as_array().cloned().unwrap_or_default();
    for mut d in list("devices") {
        let name = d["name"].clone();
        // A custom field set back to null is as good as never set.
        if let Some(f) = d["_custom_field_data"].as_object_mut() {
            f.retain(|_, v| !v.is_null());
        }
        for mut i in d["interfaces"].as_array().cloned().unwrap_or_default() {
            i["device"] = name.clone();
            lines.push(format!("interface {}", canon(&i)));
        }
        d.as_object_mut().unwrap().remove("interfaces");
        lines.push(format!("device {}", canon(&d)));
    }
    for (k, what) in [
        ("cables", "cable"),
        ("prefixes", "prefix"),
        ("ip_addresses", "ip-address"),
        ("tags", "tag"),
    ] {
        lines.extend(list(k).iter().map(|v| format!("{what} {}", canon(v))));
    }
    if !list("tags").is_empty() {
        let vlans = tagged_vlans(rt, c, "name vid tags { name }");
        lines.extend(vlans.iter().map(|v| format!("vlan {}", canon(v))));
    }
    lines.sort();
    lines
}

/// The VLANs that carry the test's owner tag (which must exist), with
/// `fields`.
fn tagged_vlans(rt: &tokio::runtime::Runtime, c: &Client, fields: &str) -> Vec<serde_json::Value> {
    let tag = provisioner::sot::push::owner_tag(SPOIL_PLAN);
    let data = rt
        .block_on(c.graphql(
            &format!("query ($tag: [String]) {{ vlans(tags: $tag) {{ {fields} }} }}"),
            serde_json::json!({"tag": [tag]}),
            "test: reading the test's VLANs",
        ))
        .expect("the test's VLANs read");
    data["vlans"].as_array().cloned().unwrap_or_default()
}

/// The lines of `b` not in `a` (`+`) and of `a` not in `b` (`-`), a
/// line counted as often as it comes.
fn differ(a: &[String], b: &[String]) -> Vec<String> {
    fn count(x: &[String]) -> std::collections::BTreeMap<&String, i64> {
        let mut m = std::collections::BTreeMap::new();
        x.iter().for_each(|l| *m.entry(l).or_default() += 1);
        m
    }
    let (ca, cb) = (count(a), count(b));
    let mut out = Vec::new();
    for l in ca
        .keys()
        .chain(cb.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let n = cb.get(l).copied().unwrap_or(0) - ca.get(l).copied().unwrap_or(0);
        let sign = if n > 0 { '+' } else { '-' };
        out.extend((0..n.abs()).map(|_| format!("{sign} {l}")));
    }
    out
}

/// Deletes what the test's pushes made (the cables at its location, the
/// prefixes and addresses of its link pool and the VLANs that carry its
/// owner tag, then the tag) and sets its devices' custom fields back to
/// `fields` (device id to `_custom_field_data`, as loaded). Nothing else
/// is touched.
fn undo_push(
    rt: &tokio::runtime::Runtime,
    c: &Client,
    fields: &std::collections::BTreeMap<String, serde_json::Value>,
) {
    use serde_json::{Value, json};
    let tag = provisioner::sot::push::owner_tag(SPOIL_PLAN);
    // Without the location (a fresh database) there are no devices or
    // cables of it, and a `location` filter naming it is refused.
    let located = location_exists(rt, c);
    let data = rt
        .block_on(c.graphql(
            &format!(
                "query ($pool: [String], $tag: [String]{}) {{ {} \
                 prefixes(within_include: $pool) {{ id tags {{ name }} }} \
                 ip_addresses(prefix: $pool) {{ id tags {{ name }} }} \
                 tags(name: $tag) {{ id }} }}",
                if located { ", $loc: [String]" } else { "" },
                if located {
                    "devices(location: $loc) { id _custom_field_data } \
                     cables(location: $loc) { id tags { name } }"
                } else {
                    ""
                }
            ),
            if located {
                json!({"loc": [SPOIL_LOCATION], "pool": [SPOIL_LINK_POOL], "tag": [tag]})
            } else {
                json!({"pool": [SPOIL_LINK_POOL], "tag": [tag]})
            },
            "test: reading what the push made",
        ))
        .expect("the push's objects read");
    let ours = |v: &Value| (v["tags"].as_array().into_iter().flatten()).any(|t| t["name"] == tag);
    let ids = |k: &str, all: bool| -> Vec<Value> {
        (data[k].as_array().into_iter().flatten())
            .filter(|v| all || ours(v))
            .map(|v| json!({"id": v["id"]}))
            .collect()
    };
    let delete = |path: &str, ids: Vec<Value>| {
        if !ids.is_empty() {
            rt.block_on(c.call(
                reqwest::Method::DELETE,
                path,
                Some(&Value::Array(ids)),
                "test: deleting what the push made",
            ))
            .unwrap_or_else(|e| panic!("deleting at {path}: {e}"));
        }
    };
    delete("/api/dcim/cables/", ids("cables", true));
    delete("/api/ipam/ip-addresses/", ids("ip_addresses", false));
    delete("/api/ipam/prefixes/", ids("prefixes", false));
    let tags = ids("tags", true);
    if !tags.is_empty() {
        let v: Vec<Value> = (tagged_vlans(rt, c, "id").iter())
            .map(|v| json!({"id": v["id"]}))
            .collect();
        delete("/api/ipam/vlans/", v);
    }
    delete("/api/extras/tags/", tags);
    let mut patches = Vec::new();
    for d in data["devices"].as_array().into_iter().flatten() {
        let id = d["id"].as_str().unwrap_or_default();
        let Some(was) = fields.get(id) else { continue };
        let now = &d["_custom_field_data"];
        if now == was {
            continue;
        }
        let mut f = serde_json::Map::new();
        for k in now.as_object().into_iter().flatten().map(|x| x.0) {
            f.insert(k.clone(), was.get(k).cloned().unwrap_or(Value::Null));
        }
        patches.push(json!({"id": id, "custom_fields": f}));
    }
    if !patches.is_empty() {
        rt.block_on(c.update(
            "/api/dcim/devices/",
            &patches,
            100,
            "test: setting the devices' fields back",
        ))
        .expect("the devices' fields set back");
    }
}

/// Whether the test's location exists yet (not on a fresh database, where
/// Nautobot's GraphQL refuses a `location` filter that names it).
fn location_exists(rt: &tokio::runtime::Runtime, c: &Client) -> bool {
    let v = rt
        .block_on(c.graphql(
            "query ($loc: [String]) { locations(name: $loc) { id } }",
            serde_json::json!({"loc": [SPOIL_LOCATION]}),
            "test: finding the test's location",
        ))
        .expect("the locations read");
    v["locations"].as_array().is_some_and(|a| !a.is_empty())
}

/// The test's location made afresh: what an earlier run left (the push's
/// objects, then the location's cables and devices, all the test's own)
/// deleted, the breakout-200g inventory loaded there by the example
/// loader. Returns the devices' custom fields as loaded (by id).
fn fresh_location(
    rt: &tokio::runtime::Runtime,
    url: &str,
    token: &Path,
    c: &Client,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    use serde_json::{Value, json};
    undo_push(rt, c, &Default::default());
    let devices = |c: &Client| {
        rt.block_on(c.graphql(
            "query ($loc: [String]) { devices(location: $loc) { id _custom_field_data } }",
            json!({"loc": [SPOIL_LOCATION]}),
            "test: reading the location's devices",
        ))
        .expect("the location's devices read")["devices"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let old = if location_exists(rt, c) {
        devices(c)
    } else {
        Vec::new()
    };
    let ids: Vec<Value> = (old.iter()).map(|d| json!({"id": d["id"]})).collect();
    if !ids.is_empty() {
        rt.block_on(c.call(
            reqwest::Method::DELETE,
            "/api/dcim/devices/",
            Some(&Value::Array(ids)),
            "test: deleting the location's devices",
        ))
        .expect("the location's devices deleted");
    }
    let inventory = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(SPOIL_INVENTORY);
    crate::a_sot::load_at(url, token, SPOIL_LOCATION, &[inventory.to_str().unwrap()]);
    (devices(c).iter())
        .map(|d| {
            (
                d["id"].as_str().unwrap_or_default().to_string(),
                d["_custom_field_data"].clone(),
            )
        })
        .collect()
}

/// A push of `plan` through a spoiling proxy in front of the real
/// Nautobot, the write `target` spoiled as `how` says (none for an honest
/// push): the push's outcome and the proxy's state.
fn push_through(
    rt: &tokio::runtime::Runtime,
    upstream: &str,
    token: &Path,
    plan: &planner::plan::Plan,
    target: Option<(usize, usize)>,
    how: nautobot_replay::Spoiled,
) -> (
    Result<provisioner::sot::push::PushReport, String>,
    Arc<Mutex<nautobot_replay::Spoiler>>,
    Client,
) {
    let sp = Arc::new(Mutex::new(nautobot_replay::Spoiler::new(upstream)));
    let timeout = match how {
        nautobot_replay::Spoiled::Held(_) => SPOIL_TIMEOUT,
        _ => PATIENT_TIMEOUT,
    };
    {
        let mut s = sp.lock().unwrap();
        s.target = target;
        s.how = how;
    }
    let proxy = rt.block_on(nautobot_replay::spoiling(sp.clone()));
    let c = client_of(&proxy, token, timeout);
    let out = rt
        .block_on(provisioner::sot::push::push(
            &c,
            plan,
            &spoil_push_options(),
            &mut |_| {},
        ))
        .map_err(|e| e.to_string());
    (out, sp, c)
}

fn spoil_push_options() -> PushOptions {
    PushOptions {
        location: Some(SPOIL_LOCATION.to_string()),
        ..push_options()
    }
}

/// The cabling `sot cabling` reads at the test's location, against the
/// plan: the findings (none when it is cabled as planned).
fn cabling_findings(
    rt: &tokio::runtime::Runtime,
    c: &Client,
    plan: &planner::plan::Plan,
) -> Vec<String> {
    let snap = rt
        .block_on(provisioner::sot::cabling::fetch(
            c,
            &CablingOptions {
                status: None,
                location: Some(SPOIL_LOCATION.to_string()),
            },
        ))
        .expect("the cabling reads");
    let (observed, skipped) = provisioner::sot::cabling::observed(c.base(), &snap, "nautobot");
    let v = planner::validate::validate_cabling(plan, &observed, &["sot".to_string()]);
    let mut out: Vec<String> = v.findings.iter().map(|f| format!("{f:?}")).collect();
    if skipped > 0 {
        out.push(format!("{skipped} cable(s) skipped"));
    }
    out
}

/// A phase's writes in a few words: how many, of which endpoints.
fn phase_of(writes: &[String]) -> String {
    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    for w in writes {
        *kinds.entry(w.split('?').next().unwrap_or(w)).or_default() += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    format!("{} write(s): {}", writes.len(), kinds.join(", "))
}

/// One spoiled write: (phase, index of the write in it, how).
type SpoilCase = (usize, usize, nautobot_replay::Spoiled);

/// The cases of every phase that writes in several requests: its first,
/// middle and last write, each spoiled both ways (the variants of each way
/// taken in turn). `phases` are the writes of an honest push, by phase.
fn spoil_cases(phases: &[Vec<String>]) -> Vec<SpoilCase> {
    let mut out = Vec::new();
    for (p, writes) in phases.iter().enumerate().filter(|(_, w)| w.len() >= 2) {
        let n = writes.len();
        let mut at = vec![0, n / 2, n - 1];
        at.dedup();
        for (j, &k) in at.iter().enumerate() {
            let (status, body) = NOT_SENT[(p + j) % NOT_SENT.len()];
            out.push((p, k, nautobot_replay::Spoiled::NotSent(status, body)));
            out.push((p, k, answer_lost(p + j)));
        }
    }
    out
}

/// Runs the spoiled-write cases `pick` selects (given all of them) on the
/// real Nautobot; each case's failure, and how many ran.
fn spoiled_writes_on_nautobot(
    test: &str,
    pick: impl Fn(&[Vec<String>], &[SpoilCase]) -> Vec<SpoilCase>,
) -> Option<(usize, Vec<String>)> {
    let (url, token) = crate::a_sot::nautobot(test)?;
    let started = std::time::Instant::now();
    let rt = crate::a_sot::rt();
    let direct = client_of(&url, &token, PATIENT_TIMEOUT);
    let upstream = url
        .trim_end_matches('/')
        .trim_end_matches("/api")
        .to_string();
    let fields = fresh_location(&rt, &url, &token, &direct);
    let loaded = held(&rt, &direct);
    let opts = ImportOptions {
        location: Some(SPOIL_LOCATION.to_string()),
        name: Some(SPOIL_PLAN.to_string()),
        ..import_options()
    };
    let snap = rt
        .block_on(provisioner::sot::import::fetch(&direct, &opts))
        .unwrap();
    let toml = provisioner::sot::import::inventory_toml(&snap, &opts, "nautobot").unwrap();
    let inv = planner::inventory::Inventory::from_toml(&toml, "imported.toml").unwrap();
    let mut plan = plan_of(&inv);
    plan.name = SPOIL_PLAN.to_string();
    plan.addressing.link_pool = SPOIL_LINK_POOL.to_string();
    eprintln!("{test}: loaded in {:.1} s", started.elapsed().as_secs_f64());

    // The honest push: its writes by phase, and what it leaves.
    let t = std::time::Instant::now();
    let (honest, sp, _) = push_through(
        &rt,
        &upstream,
        &token,
        &plan,
        None,
        nautobot_replay::Spoiled::Dropped,
    );
    let honest = honest.expect("the honest push");
    assert!(
        honest.diff.conflicts.is_empty(),
        "{:?}",
        honest.diff.conflicts
    );
    let phases = sp.lock().unwrap().phases.clone();
    let want = held(&rt, &direct);
    assert_eq!(cabling_findings(&rt, &direct, &plan), Vec::<String>::new());
    undo_push(&rt, &direct, &fields);
    assert_eq!(differ(&loaded, &held(&rt, &direct)), Vec::<String>::new());
    eprintln!(
        "{test}: the honest push in {:.1} s: {}",
        t.elapsed().as_secs_f64(),
        (phases.iter().enumerate())
            .map(|(p, w)| format!("phase {p}: {}", phase_of(w)))
            .collect::<Vec<_>>()
            .join("; ")
    );

    let cases = pick(&phases, &spoil_cases(&phases));
    assert!(
        !cases.is_empty(),
        "no phase writes in several requests: {phases:?}"
    );
    let mut failures = Vec::new();
    for (p, k, how) in &cases {
        let t = std::time::Instant::now();
        let case = format!(
            "write {} of phase {p} ({}), {how:?}",
            k + 1,
            phase_of(&phases[*p])
        );
        let (first, sp, c) =
            push_through(&rt, &upstream, &token, &plan, Some((*p, *k)), how.clone());
        let mut wrong = Vec::new();
        let spoiled = sp.lock().unwrap().spoiled.clone();
        if spoiled.is_none() {
            wrong.push("the write was never sent".to_string());
        }
        let first = match first {
            Ok(_) => {
                wrong.push("the spoiled push reported success".to_string());
                String::new()
            }
            Err(e) => e,
        };
        // Every error but a refusal (which carries the server's reason)
        // says what to do: push again.
        if !first.is_empty()
            && !matches!(how, nautobot_replay::Spoiled::NotSent(400, _))
            && !first.contains("run the push again")
        {
            wrong.push(format!(
                "the first push's error does not say to push again: {first}"
            ));
        }
        // A write the client gave up on is made whole before the second
        // push reads, as it would be by the time a user pushes again.
        let idle = std::time::Instant::now();
        while sp.lock().unwrap().upstream_in_flight > 0
            && idle.elapsed() < std::time::Duration::from_secs(120)
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        match rt.block_on(provisioner::sot::push::push(
            &c,
            &plan,
            &spoil_push_options(),
            &mut |_| {},
        )) {
            Ok(r) if !r.diff.conflicts.is_empty() => wrong.push(format!(
                "the second push met conflicts: {:?}",
                r.diff.conflicts
            )),
            Ok(_) => {}
            Err(e) => wrong.push(format!("the second push failed: {e}")),
        }
        let dry = rt.block_on(provisioner::sot::push::push(
            &direct,
            &plan,
            &PushOptions {
                dry_run: true,
                ..spoil_push_options()
            },
            &mut |_| {},
        ));
        match dry {
            Ok(d) if !d.diff.changes.is_empty() || !d.diff.conflicts.is_empty() => {
                wrong.push(format!(
                    "a push after it would still write: {:?} {:?}",
                    d.diff.changes, d.diff.conflicts
                ))
            }
            Ok(_) => {}
            Err(e) => wrong.push(format!("the dry run after it failed: {e}")),
        }
        let d = differ(&want, &held(&rt, &direct));
        if !d.is_empty() {
            wrong.push(format!(
                "Nautobot holds other than after an honest push:\n  {}",
                d.join("\n  ")
            ));
        }
        let findings = cabling_findings(&rt, &direct, &plan);
        if !findings.is_empty() {
            wrong.push(format!("sot cabling finds {findings:?}"));
        }
        undo_push(&rt, &direct, &fields);
        let left = differ(&loaded, &held(&rt, &direct));
        assert!(left.is_empty(), "{case}: undoing the push left {left:?}");
        eprintln!(
            "{test}: {case}: {} in {:.1} s; spoiled {}; the first push said: {first}",
            if wrong.is_empty() {
                "recovered"
            } else {
                "FAILED"
            },
            t.elapsed().as_secs_f64(),
            spoiled.as_deref().unwrap_or("nothing")
        );
        if !wrong.is_empty() {
            failures.push(format!("{case}: {}", wrong.join("; ")));
        }
    }
    eprintln!(
        "{test}: {} case(s), {} failure(s), {:.0} s in all",
        cases.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    Some((cases.len(), failures))
}

/// CI's share of the spoiled-write cases on the real Nautobot (issue
/// #31): in the phase with the most write requests (the cables, one
/// request each), its middle write is made by Nautobot and its answer
/// lost (the connection closed), and in the last phase of several
/// requests, its last write never reaches Nautobot and a 500 comes back.
/// After each, an honest second push with the same plan and options must
/// succeed, and Nautobot must then hold exactly what an honest push
/// leaves (every object once), with `sot cabling` finding nothing.
/// Skips without Nautobot (fails with TESTS_NO_SKIP=1).
#[test]
fn sot_push_nautobot_spoiled_write_then_second_push_issue_31() {
    let test = "sot_nautobot::spoiled_write_then_second_push";
    let Some((_, failures)) = spoiled_writes_on_nautobot(test, |phases, _| {
        use nautobot_replay::Spoiled;
        let n = |p: usize| phases[p].len();
        let most = (0..phases.len()).max_by_key(|p| n(*p));
        let last = (0..phases.len()).filter(|p| n(*p) >= 2).max();
        let (status, page) = NOT_SENT[0];
        (most.map(|p| (p, n(p) / 2, Spoiled::Dropped)).into_iter())
            .chain(last.map(|p| (p, n(p) - 1, Spoiled::NotSent(status, page))))
            .collect()
    }) else {
        return;
    };
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every spoiled-write case on the real Nautobot (issue #31): each phase
/// of several write requests, at its first, middle and last write, spoiled
/// both ways (not sent: a 500 page, a refusal, a forged success; made and
/// its answer lost: a 502 page, the connection closed, a broken body, an
/// answer held past the client's timeout). Ignored: 24 cases, 25 minutes
/// on the loaded 2-core VM (docs/benchmarks.md); `cargo test -p
/// provisioner --test it spoiled_write_every -- --ignored` after
/// `.ci/nautobot up`.
#[test]
#[ignore = "every position: minutes against the real Nautobot; run after `.ci/nautobot up`"]
fn sot_push_nautobot_spoiled_write_every_position_issue_31() {
    let test = "sot_nautobot::spoiled_write_every_position";
    let Some((_, failures)) = spoiled_writes_on_nautobot(test, |_, all| all.to_vec()) else {
        return;
    };
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
