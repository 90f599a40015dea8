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
