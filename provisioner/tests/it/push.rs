//! `provisioner push` end to end against the test servers (NVUE REST and
//! eAPI on loopback over TLS, tests/support/switch_servers.rs): the binary
//! runs as a user runs it, the servers log every request, and each
//! scenario asserts the exact requests, the outcome on the device, the
//! exit code, and that the password appears in no output and not in the
//! journal.

#[path = "../support/switch_servers.rs"]
pub(crate) mod servers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use planner::checked::CheckedPlan;
use planner::fabric::CableKind;
use planner::render::Vendor;
use serde_json::{Value, json};

use provisioner::push::nvue_tree;
use servers::{EosState, NvueState, Tls, World};

/// An NVUE switch before any push: its management only (the test
/// server's documented management configuration, on 127.0.0.1).
fn nvue_initial(sw: &str) -> Value {
    servers::nvue_management(sw, USER, "127.0.0.1")
}

/// An EOS switch's running configuration before any push.
fn eos_initial(sw: &str) -> Vec<String> {
    servers::eos_management(sw, USER, "127.0.0.1")
}

/// The planner's NVUE tree of switch `sw`: what a push loads.
fn nvue_tree_of(plan: &CheckedPlan, sw: &str) -> Value {
    planner::render::nvue_trees(plan)
        .expect("NVUE trees")
        .into_iter()
        .find(|(name, _)| name == sw)
        .expect("the switch")
        .1
}

/// Drops from `v` every leaf whose `nv set` line (as the script spells
/// it, number lists one entry at a time) `drop` holds, and every object
/// left empty by that; true when `v` itself goes.
fn prune(v: &mut Value, path: &mut Vec<String>, drop: &dyn Fn(&str) -> bool) -> bool {
    match v {
        Value::Object(m) if !m.is_empty() => {
            m.retain(|k, child| {
                path.push(k.clone());
                let gone = prune(child, path, drop);
                path.pop();
                !gone
            });
            m.is_empty()
        }
        Value::Object(_) => drop(&format!("nv set {}", path.join(" "))),
        Value::String(x) => drop(&format!("nv set {} {x}", path.join(" "))),
        other => drop(&format!("nv set {} {other}", path.join(" "))),
    }
}

/// Checks that `applied` is the plan's `want` plus the management of
/// `before`, each whole: every leaf of `want` is applied, every
/// management leaf of `before` stays as it was, and nothing else is
/// there (the hostname is the plan's).
fn assert_plan_and_management(applied: &Value, want: &Value, before: &Value) {
    let lines = |v: &Value| -> std::collections::BTreeSet<String> {
        nvue_tree::tree_lines(v).into_iter().collect()
    };
    let got = lines(applied);
    let plan = lines(want);
    let kept: std::collections::BTreeSet<String> = lines(before)
        .into_iter()
        .filter(|l| !l.starts_with("system hostname "))
        .collect();
    let missing: Vec<&String> = plan.union(&kept).filter(|l| !got.contains(*l)).collect();
    let extra: Vec<&String> = got
        .iter()
        .filter(|l| !plan.contains(*l) && !kept.contains(*l))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
}

const PASSWORD: &str = "s3cr3t-Pa55word-never-shown";
const USER: &str = "admin";

fn plan_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/data")
        .join(name)
}

/// The world of every switch of `plan`: its hostname, every cabled port up
/// at the cable's speed, and the far end of every inter-switch cable as
/// its LLDP neighbour, named by each end's vendor.
fn worlds(plan: &CheckedPlan, vendor_of: &dyn Fn(&str) -> Vendor) -> BTreeMap<String, World> {
    let mut w: BTreeMap<String, World> = BTreeMap::new();
    let port_name = |sw: &str, port: u32| {
        let s = plan
            .switch_list
            .iter()
            .find(|s| s.physical == sw && s.ports.iter().any(|p| p.port == port))
            .expect("port of the plan");
        vendor_of(sw).port_name(s, port)
    };
    for s in &plan.switch_list {
        w.entry(s.physical.to_string()).or_default().hostname = s.physical.to_string();
    }
    for c in &plan.cables {
        let speed = u64::from(c.gbps) * 1000;
        let a = port_name(&c.a, c.a_port);
        w.get_mut(c.a.as_str())
            .expect("a")
            .interfaces
            .insert(a.clone(), (true, speed));
        if c.kind == CableKind::InterSwitch {
            let bp: u32 = c.b_port.parse().expect("switch port");
            let b = port_name(&c.b, bp);
            w.get_mut(c.b.as_str())
                .expect("b")
                .interfaces
                .insert(b.clone(), (true, speed));
            w.get_mut(c.a.as_str())
                .expect("a")
                .lldp
                .insert(a.clone(), (c.b.to_string(), b.clone()));
            (w.get_mut(c.b.as_str()).expect("b").lldp).insert(b, (c.a.to_string(), a));
        }
    }
    w
}

/// A fabric of test servers for a plan, and the files of a push.
struct Fabric {
    rt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    tls: Tls,
    plan: PathBuf,
    checked: CheckedPlan,
    vendors: BTreeMap<String, Vendor>,
    addrs: BTreeMap<String, std::net::SocketAddr>,
    nvue: BTreeMap<String, Arc<Mutex<NvueState>>>,
    eos: BTreeMap<String, Arc<Mutex<EosState>>>,
}

impl Fabric {
    /// Servers for every switch of `plan`, with the vendor `vendor(switch)`;
    /// `tweak` changes a switch's world or server before it starts.
    fn new(
        plan: &str,
        vendor: impl Fn(&str) -> Vendor,
        tweak: impl Fn(&str, &mut World),
    ) -> Fabric {
        Fabric::at(plan_file(plan), vendor, tweak)
    }

    /// The same for a plan file anywhere.
    fn at(
        plan: PathBuf,
        vendor: impl Fn(&str) -> Vendor,
        tweak: impl Fn(&str, &mut World),
    ) -> Fabric {
        Fabric::with_tls(plan, vendor, tweak, Tls::new())
    }

    /// The same with the servers' certificate given.
    fn with_tls(
        plan: PathBuf,
        vendor: impl Fn(&str) -> Vendor,
        tweak: impl Fn(&str, &mut World),
        tls: Tls,
    ) -> Fabric {
        let text = std::fs::read_to_string(&plan).expect("plan");
        let checked = CheckedPlan::load(&text, &plan.display().to_string()).expect("plan loads");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let mut vendors = BTreeMap::new();
        for s in &checked.switch_list {
            vendors.insert(s.physical.to_string(), vendor(&s.physical));
        }
        let vv = vendors.clone();
        let worlds = worlds(&checked, &|s| vv[s]);
        let mut f = Fabric {
            rt,
            dir: tempfile::tempdir().expect("tempdir"),
            tls,
            plan,
            checked,
            vendors,
            addrs: BTreeMap::new(),
            nvue: BTreeMap::new(),
            eos: BTreeMap::new(),
        };
        for (sw, mut world) in worlds {
            tweak(&sw, &mut world);
            let v = f.vendors[&sw];
            if v.as_str() == "nvue" {
                let st = NvueState::new(world, USER, PASSWORD, nvue_initial(&sw));
                let (addr, st) = f.rt.block_on(servers::nvue(&f.tls, st));
                f.addrs.insert(sw.clone(), addr);
                f.nvue.insert(sw, st);
            } else {
                let st = EosState::new(world, USER, PASSWORD, eos_initial(&sw));
                let (addr, st) = f.rt.block_on(servers::eos(&f.tls, st));
                f.addrs.insert(sw.clone(), addr);
                f.eos.insert(sw, st);
            }
        }
        std::fs::write(f.dir.path().join("ca.pem"), &f.tls.ca_pem).expect("ca");
        f.write_devices(|_| String::new());
        f
    }

    fn nvue(&self, sw: &str) -> std::sync::MutexGuard<'_, NvueState> {
        self.nvue[sw].lock().expect("state")
    }

    fn eos(&self, sw: &str) -> std::sync::MutexGuard<'_, EosState> {
        self.eos[sw].lock().expect("state")
    }

    /// Writes devices.toml: one entry per switch, plus `extra(switch)`
    /// lines in it.
    fn write_devices(&self, extra: impl Fn(&str) -> String) {
        let mut s = String::new();
        for (sw, addr) in &self.addrs {
            s += &format!(
                "[[device]]\nswitch = \"{sw}\"\nvendor = \"{}\"\ntransport = \"https\"\naddress = \"{addr}\"\nuser = \"{USER}\"\npassword_env = \"EFL_TEST_PASSWORD\"\nca_file = \"ca.pem\"\n{}\n",
                self.vendors[sw],
                extra(sw)
            );
        }
        std::fs::write(self.dir.path().join("devices.toml"), s).expect("devices");
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_provisioner"));
        c.current_dir(self.dir.path())
            .env("EFL_TEST_PASSWORD", PASSWORD)
            .args(args);
        c
    }

    /// Runs `provisioner push PLAN --devices devices.toml ARGS`; checks
    /// that the password shows nowhere.
    fn push(&self, args: &[&str]) -> Run {
        self.push_timer("60s", args)
    }

    /// A push with another confirm timer.
    fn push_timer(&self, timer: &str, args: &[&str]) -> Run {
        let plan = self.plan.display().to_string();
        let mut all = vec![
            "push",
            plan.as_str(),
            "--devices",
            "devices.toml",
            "--confirm-timer",
            timer,
            // The test servers answer at once: a mismatch is final.
            "--settle",
            "0s",
        ];
        all.extend_from_slice(args);
        self.run(&all)
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("provisioner runs");
        let r = Run::from(out);
        assert!(
            !r.stdout.contains(PASSWORD) && !r.stderr.contains(PASSWORD),
            "password printed: {r:?}"
        );
        for entry in std::fs::read_dir(self.dir.path()).expect("dir") {
            let p = entry.expect("entry").path();
            if p.file_name().is_some_and(|n| n == "pw") {
                continue; // the password file itself
            }
            if let Ok(text) = std::fs::read_to_string(&p) {
                assert!(!text.contains(PASSWORD), "password in {}", p.display());
            }
        }
        r
    }

    fn journal(&self) -> Value {
        let text =
            std::fs::read_to_string(self.dir.path().join("push-journal.json")).expect("journal");
        serde_json::from_str(&text).expect("journal JSON")
    }

    fn phase(&self, sw: &str) -> String {
        let j = self.journal();
        j["switches"]
            .as_array()
            .expect("switches")
            .iter()
            .find(|r| r["switch"] == sw)
            .map(|r| r["phase"].as_str().expect("phase").to_string())
            .expect("switch in the journal")
    }

    /// Every server at `release` (NVUE's `build`, EOS's `show version`).
    fn at_release(&self, release: &str) {
        for sw in self.nvue.keys() {
            self.nvue(sw).release = release.into();
        }
        for sw in self.eos.keys() {
            self.eos(sw).version = release.into();
        }
    }

    /// Cables dark until both their ends are configured (a first
    /// install; see `NvueState::fabric` and `EosState::fabric`).
    fn dark(&self) {
        let shared = Arc::new(Mutex::new(BTreeMap::new()));
        for sw in self.nvue.keys() {
            self.nvue(sw).fabric = Some(shared.clone());
            self.nvue(sw).publish();
        }
        for sw in self.eos.keys() {
            self.eos(sw).fabric = Some(shared.clone());
            self.eos(sw).publish();
        }
    }

    /// The servers share their BGP: sessions, BFD and learned routes
    /// (tests/support/fabric_bgp.rs).
    fn share_bgp(&self) {
        let shared: servers::SharedBgp = Arc::new(Mutex::new(BTreeMap::new()));
        for sw in self.nvue.keys() {
            self.nvue(sw).bgp = Some(shared.clone());
        }
        for sw in self.eos.keys() {
            self.eos(sw).bgp = Some(shared.clone());
        }
        for sw in self.nvue.keys() {
            self.nvue(sw).publish();
        }
        for sw in self.eos.keys() {
            self.eos(sw).publish();
        }
    }

    /// Every switch runs the plan already, with its management (the
    /// rendered lines, but the top-level lines or sections for which
    /// `older(switch, line)` holds: a switch that runs an older plan).
    /// From NVUE 5.15 LLDP is `nv set system lldp` (5.15's New and
    /// Changed NVUE Commands). Returns what each switch runs.
    fn run_plan(&self, older: impl Fn(&str, &str) -> bool) -> BTreeMap<String, Running> {
        self.run_plan_of(&self.checked, older)
    }

    /// [`Fabric::run_plan`] with another plan than the push's.
    fn run_plan_of(
        &self,
        plan: &CheckedPlan,
        older: impl Fn(&str, &str) -> bool,
    ) -> BTreeMap<String, Running> {
        let mut out = BTreeMap::new();
        for sw in self.vendors.keys() {
            let candidate = self.candidate_of(plan, sw);
            if let Some(st) = self.nvue.get(sw) {
                let mut st = st.lock().expect("state");
                let mut want = nvue_tree_of(plan, sw);
                prune(&mut want, &mut Vec::new(), &|l: &str| older(sw, l));
                if st.release.starts_with("5.15")
                    && let Some(service) = want.get_mut("service").and_then(Value::as_object_mut)
                    && service.remove("lldp").is_some()
                {
                    if service.is_empty() {
                        want.as_object_mut().expect("tree").remove("service");
                    }
                    want["system"]["lldp"] = json!({"state": "enabled"});
                }
                let mut tree = nvue_initial(sw);
                servers::merge(&mut tree, &want);
                st.revisions.get_mut(&1).expect("revision 1").tree = tree.clone();
                st.publish();
                out.insert(sw.clone(), Running::Nvue(tree));
            } else {
                let mut lines = eos_initial(sw);
                let mut skip = false;
                for l in candidate.lines() {
                    if l.starts_with('!') || l.starts_with("hostname ") {
                        continue;
                    }
                    if !l.starts_with(' ') {
                        skip = older(sw, l);
                    }
                    if !skip {
                        lines.push(l.to_string());
                    }
                }
                let mut st = self.eos(sw);
                st.running = lines.clone();
                st.startup = lines.clone();
                st.publish();
                out.insert(sw.clone(), Running::Eos(lines));
            }
        }
        out
    }

    /// What `sw` runs now.
    fn running(&self, sw: &str) -> Running {
        match self.nvue.get(sw) {
            Some(st) => Running::Nvue(st.lock().expect("state").applied_tree()),
            None => Running::Eos(self.eos(sw).running_config()),
        }
    }

    /// The BGP routes `sw`'s server has installed, as (VRF, prefix) ->
    /// next hops, read through its own answer (NVUE's RIB in the 5.9
    /// shape, EOS's `show ip route vrf all`).
    fn bgp_routes(&self, sw: &str) -> BTreeMap<(String, String), Vec<String>> {
        let mut out = BTreeMap::new();
        if let Some(st) = self.nvue.get(sw) {
            let mut st = st.lock().expect("state");
            let release = std::mem::replace(&mut st.release, "5.9.1".into());
            let reply = st.handle(&req("GET", "/nvue_v1/vrf?rev=operational", Value::Null));
            st.release = release;
            let servers::Reply::Json(200, vrfs) = reply else {
                panic!("{sw}: no VRFs");
            };
            for (vrf, v) in vrfs.as_object().expect("vrfs") {
                for (prefix, r) in v
                    .pointer("/router/rib/ipv4/route")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    if let Some(e) = r.pointer("/protocol/bgp/entry-index/1/via") {
                        let hops = e.as_object().expect("via").keys().cloned().collect();
                        out.insert((vrf.clone(), prefix.clone()), hops);
                    }
                }
            }
        } else {
            let reply = self.eos(sw).handle(&req(
                "POST",
                "/command-api",
                json!({"jsonrpc": "2.0", "method": "runCmds", "id": 1,
                       "params": {"version": 1, "cmds": ["enable", "show ip route vrf all"], "format": "json"}}),
            ));
            let servers::Reply::Json(200, v) = reply else {
                panic!("{sw}: no routes");
            };
            for (vrf, v) in v["result"][1]["vrfs"].as_object().expect("vrfs") {
                for (prefix, r) in v["routes"].as_object().expect("routes") {
                    if r["routeType"] == "eBGP" {
                        let hops = r["vias"]
                            .as_array()
                            .expect("vias")
                            .iter()
                            .map(|h| h["nexthopAddr"].as_str().expect("hop").to_string())
                            .collect();
                        out.insert((vrf.clone(), prefix.clone()), hops);
                    }
                }
            }
        }
        out
    }

    /// The rendered candidate of `sw` for its vendor.
    fn candidate(&self, sw: &str) -> String {
        self.candidate_of(&self.checked, sw)
    }

    /// The candidate of `sw` rendered from `plan`.
    fn candidate_of(&self, plan: &CheckedPlan, sw: &str) -> String {
        let v = self.vendors[sw];
        planner::render::render(plan, v)
            .expect("render")
            .into_iter()
            .find(|(n, _)| *n == v.file_name(sw))
            .expect("file")
            .1
    }
}

/// What a switch runs: an NVUE applied tree or EOS running lines.
#[derive(Debug, Clone, PartialEq)]
enum Running {
    Nvue(Value),
    Eos(Vec<String>),
}

#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

fn all_nvue(_: &str) -> Vendor {
    Vendor::named("nvue").expect("nvue")
}

fn all_eos(_: &str) -> Vendor {
    Vendor::named("eos").expect("eos")
}

fn none(_: &str, _: &mut World) {}

/// The requests of one NVUE (5.9) push that commits revision 2 over
/// revision 1 with a 60 s timer, verifies (the plan's VRF object by
/// object) and confirms in the form of the server's reading: `confirm`
/// answered `{"state":"confirm_yes"}` (gpncfg), `ays` by a second apply
/// (nv-config-manager).
fn nvue_commit_sequence_in(reading: servers::ConfirmReading) -> Vec<String> {
    let confirm = match reading {
        servers::ConfirmReading::ConfirmState => {
            r#"PATCH /nvue_v1/revision/2 {"state":"confirm_yes"}"#
        }
        servers::ConfirmReading::AysPrompt => {
            r#"PATCH /nvue_v1/revision/2 {"auto-prompt":{"ays":"ays_yes"},"state":"apply"}"#
        }
    };
    [
        "GET /nvue_v1/system?rev=operational",
        "GET /nvue_v1/?rev=applied&filled=false",
        "POST /nvue_v1/revision",
        "DELETE /nvue_v1/?rev=2",
        "PATCH /nvue_v1/?rev=2 <tree>",
        "GET /nvue_v1/?rev=2&diff=applied&filled=false",
        "GET /nvue_v1/?rev=applied&diff=2&filled=false",
        // What runs before the commit (ports up, sessions established).
        "GET /nvue_v1/interface?rev=operational",
        "GET /nvue_v1/vrf/Vrf100/router/bgp/neighbor?rev=operational",
        "GET /nvue_v1/vrf/Vrf100/router/rib/ipv4/route?rev=operational",
        "GET /nvue_v1/revision",
        r#"PATCH /nvue_v1/revision/2 {"auto-prompt":{"ays":"ays_yes","confirm":"confirm_yes"},"state":"apply","state-controls":{"confirm":60}}"#,
        "GET /nvue_v1/revision/2",
        "GET /nvue_v1/revision/2",
        "GET /nvue_v1/interface?rev=operational",
        "GET /nvue_v1/vrf/Vrf100/router/bgp/neighbor?rev=operational",
        "GET /nvue_v1/vrf/Vrf100/router/rib/ipv4/route?rev=operational",
        "GET /nvue_v1/revision/2",
        confirm,
        "GET /nvue_v1/revision/2",
        "GET /nvue_v1/revision/2",
        r#"PATCH /nvue_v1/revision/applied {"auto-prompt":{"ays":"ays_yes"},"state":"save"}"#,
    ]
    .map(str::to_string)
    .to_vec()
}

fn nvue_commit_sequence() -> Vec<String> {
    nvue_commit_sequence_in(servers::ConfirmReading::ConfirmState)
}

/// The NVUE test server answers one verification read from one moment of
/// its fabric (docs/switch-push.md: the tests' choice under `--settle
/// 0s`, not NVUE behaviour): a peer that configures its ports after sw1's
/// operational interface read does not show in sw1's VRF read that
/// follows, and does in the next verification read, once a request that
/// is not an operational read has ended the first.
#[test]
fn nvue_test_server_answers_a_verification_read_from_one_moment() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.dark();
    f.run_plan(|_, _| false);
    let shared = f.nvue("sw1").fabric.clone().expect("a dark fabric");
    let everyone = shared.lock().unwrap().clone();
    for (sw, ports) in shared.lock().unwrap().iter_mut() {
        if sw != "sw1" {
            ports.clear();
        }
    }
    let get = |uri: &str| {
        let reply = f.nvue("sw1").handle(&servers::Req {
            method: "GET".into(),
            uri: uri.into(),
            auth: Some((USER.into(), PASSWORD.into())),
            authorization: None,
            body: Value::Null,
            delayed: false,
        });
        match reply {
            servers::Reply::Json(200, v) => v,
            _ => panic!("GET {uri}: no JSON answer"),
        }
    };
    let links = get("/nvue_v1/interface?rev=operational");
    assert!(
        links.to_string().contains("\"down\""),
        "the peers are dark: {links}"
    );
    let vrfs = "/nvue_v1/vrf?rev=operational";
    let dark = get(vrfs);
    *shared.lock().unwrap() = everyone;
    assert_eq!(get(vrfs), dark, "the same verification read moved on");
    get("/nvue_v1/system");
    get("/nvue_v1/interface?rev=operational");
    assert_ne!(get(vrfs), dark, "the next verification read sees the peers");
}

#[test]
fn nvue_push_commits_verifies_confirms_and_a_second_push_changes_nothing() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let r = f.push(&[
        "--format",
        "json",
        "--canary",
        "sw3",
        "--batch",
        "2",
        "--max-share",
        "0.5",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let report: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(report["outcome"], "done");
    assert_eq!(report["batches"][0], json!(["sw3"]));
    for s in report["switches"].as_array().expect("switches") {
        assert_eq!(s["phase"], "confirmed", "{s}");
        assert_eq!(s["mismatches"], json!([]), "{s}");
    }
    // No batch holds more than half of a part (4 switches each).
    for b in report["batches"].as_array().expect("batches") {
        assert!(b.as_array().expect("batch").len() <= 2, "{b}");
    }
    assert_eq!(f.nvue("sw3").log, nvue_commit_sequence());
    for sw in f.nvue.keys() {
        let want = nvue_tree_of(&f.checked, sw);
        let mut st = f.nvue(sw);
        let applied = st.applied_tree();
        assert_plan_and_management(&applied, &want, &nvue_initial(sw));
        assert_eq!(st.saved.as_ref(), Some(&applied), "{sw} saved");
        st.log.clear();
    }
    // The same plan again: a diff of nothing, no commit.
    let r = f.push(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("unchanged"), "{}", r.stdout);
    assert!(!r.stdout.contains("confirmed"), "{}", r.stdout);
    assert_eq!(
        f.nvue("sw5").log,
        [
            "GET /nvue_v1/system?rev=operational",
            "GET /nvue_v1/?rev=applied&filled=false",
            "POST /nvue_v1/revision",
            "DELETE /nvue_v1/?rev=3",
            "PATCH /nvue_v1/?rev=3 <tree>",
            "GET /nvue_v1/?rev=3&diff=applied&filled=false",
            "GET /nvue_v1/?rev=applied&diff=3&filled=false",
            "DELETE /nvue_v1/revision/3",
        ]
    );
    let st = f.run(&["push", "status"]);
    assert_eq!(st.code, 0, "{st:?}");
    let missing = f.run(&["push", "status", "--journal", "no-such-journal.json"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing
            .stderr
            .contains("journal no-such-journal.json: cannot read it"),
        "{}",
        missing.stderr
    );
    assert!(st.stdout.contains("unchanged"), "{}", st.stdout);
}

#[test]
fn dry_run_shows_the_diff_and_commits_nothing() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let r = f.push(&[
        "--dry-run",
        "--show-diff",
        "--switch",
        "sw1",
        "--switch",
        "sw2",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("(dry run)") && r.stdout.contains("loaded"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("diff of sw1 (- running, + candidate):"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("+ interface swp1 link mtu 9216"),
        "{}",
        r.stdout
    );
    let log = f.nvue("sw1").log.clone();
    assert_eq!(
        log.last().map(String::as_str),
        Some("DELETE /nvue_v1/revision/2")
    );
    assert!(
        !log.iter().any(|l| l.contains("\"state\":\"apply\"")),
        "{log:?}"
    );
    assert_eq!(f.nvue("sw1").applied_tree(), nvue_initial("sw1"));
    assert!(f.nvue("sw4").log.is_empty(), "sw4 was not selected");
}

#[test]
fn eos_push_uses_a_configure_session_with_a_commit_timer() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    let r = f.push(&["--switch", "sw2"]);
    assert_eq!(r.code, 0, "{r:?}");
    let candidate = f.candidate("sw2");
    let plan_lines = candidate
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('!') && l.trim() != "end")
        .count();
    // The candidate carries the running management (every line of it but
    // the hostname, which is the plan's).
    let lines = plan_lines + eos_initial("sw2").len() - 1;
    let sha = planner::text::sha256_hex(candidate.as_bytes());
    let s = provisioner::push::run::session_name(&sha);
    let want: Vec<String> = vec![
        "POST /command-api [json] enable | show hostname | show version".to_string(),
        "POST /command-api [json] enable | show configuration sessions detail".to_string(),
        "POST /command-api [text] enable | show running-config".to_string(),
        format!("POST /command-api [json] enable | configure session {s} | rollback clean-config | <{lines} lines> | end"),
        format!("POST /command-api [text] enable | show session-config named {s} diffs"),
        // What runs before the commit.
        "POST /command-api [json] enable | show lldp neighbors | show interfaces status | show ip bgp summary vrf all | show bfd peers | show ip route vrf all".to_string(),
        "POST /command-api [json] enable | show lldp neighbors | show interfaces status | show bfd peers | show ip route vrf all".to_string(),
        format!("POST /command-api [json] enable | copy running-config flash:{s}.cfg"),
        format!("POST /command-api [json] enable | configure session {s} commit timer 00:01:00"),
        "POST /command-api [json] enable | show lldp neighbors | show interfaces status | show ip bgp summary vrf all | show bfd peers | show ip route vrf all".to_string(),
        // A static plan: the switch runs no BGP and refuses the summary
        // ("BGP inactive"); the state is read again without it, and the
        // push goes on (no refused candidate).
        "POST /command-api [json] enable | show lldp neighbors | show interfaces status | show bfd peers | show ip route vrf all".to_string(),
        "POST /command-api [json] enable | show configuration sessions detail".to_string(),
        format!("POST /command-api [json] enable | configure session {s} commit"),
        "POST /command-api [json] enable | write memory".to_string(),
    ];
    let mut st = f.eos("sw2");
    assert_eq!(st.log, want);
    let running = st.running_config();
    assert_eq!(running.len(), lines);
    // Every management section is there, byte for byte.
    let now = servers::eos_sections(&running);
    for sec in servers::eos_sections(&eos_initial("sw2")) {
        if !sec.0.starts_with("hostname ") {
            assert!(now.contains(&sec), "{sec:?} lost: {running:?}");
        }
    }
    assert_eq!(st.startup, running);
    assert!(st.sessions.is_empty());
    drop(st);
    assert_eq!(f.phase("sw2"), "confirmed");
    f.eos("sw2").log.clear();
    let again = f.push(&["--switch", "sw2"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(f.phase("sw2"), "unchanged");
    let log = f.eos("sw2").log.clone();
    assert_eq!(
        log.last(),
        Some(&format!(
            "POST /command-api [json] enable | configure session {s} abort"
        ))
    );
    assert!(!log.iter().any(|l| l.contains("commit")), "{log:?}");
}

#[test]
fn refused_login_stops_the_rollout() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.nvue("sw1").password = "another".into();
    let r = f.push(&["--canary", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("refused the login of user admin"),
        "{}",
        r.stderr
    );
    assert_eq!(f.phase("sw1"), "failed");
    assert_eq!(f.phase("sw2"), "pending");
    assert!(f.nvue("sw2").log.is_empty(), "the rollout went on");
    assert_eq!(f.nvue("sw1").log, ["GET /nvue_v1/system?rev=operational"]);
}

#[test]
fn a_lock_held_by_someone_else_is_named() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    {
        // Someone applied revision 2 with a confirm timer and has not
        // confirmed yet.
        let mut st = f.nvue("sw1");
        let tree = st.applied_tree();
        let mut rev = st.revisions[&1].clone();
        rev.state = "confirm".into();
        rev.tree = tree;
        st.revisions.insert(2, rev);
        st.confirm = Some((2, std::time::Instant::now() + Duration::from_secs(600), 1));
    }
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "is locked by revision 2 (someone else's, waiting for its confirm in state confirm)"
        ),
        "{}",
        r.stderr
    );
    let log = f.nvue("sw1").log.clone();
    assert_eq!(
        log.last().map(String::as_str),
        Some("DELETE /nvue_v1/revision/3"),
        "{log:?}"
    );
    // Nothing was applied or answered: revision 2 still waits.
    assert!(
        !log.iter()
            .any(|l| l.starts_with("PATCH /nvue_v1/revision/")),
        "{log:?}"
    );

    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.eos("sw1").sessions.insert(
        "ops-change".into(),
        servers::Session {
            lines: vec![],
            state: "pendingCommitTimer".into(),
            deadline: Some(std::time::Instant::now() + Duration::from_secs(600)),
            before: vec![],
        },
    );
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("locked by configure session ops-change (pendingCommitTimer, EOS 4.31.2F)"),
        "{}",
        r.stderr
    );
    assert_eq!(f.eos("sw1").running_config(), eos_initial("sw1"));
}

#[test]
fn a_rejected_candidate_shows_the_devices_message() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.nvue("sw1").max_mtu = 9000;
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("rejected the candidate: revision 2 is invalid: interface swp1: link mtu 9216 is above this platform's 9000"), "{}", r.stderr);
    assert_eq!(f.nvue("sw1").applied_tree(), nvue_initial("sw1"));

    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.eos("sw1").refuse = Some("mtu 9214".into());
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("'   mtu 9214' failed: invalid command (Invalid input (at token 1: '9214'))"),
        "{}",
        r.stderr
    );
    let mut st = f.eos("sw1");
    assert_eq!(st.running_config(), eos_initial("sw1"));
    assert!(
        st.log.last().expect("log").ends_with("abort"),
        "{:?}",
        st.log
    );
}

#[test]
fn a_connection_dropped_mid_commit_leaves_the_previous_config() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.nvue("sw1").drop_on_commit = true;
    let r = f.push_timer("3s", &["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("connection lost"), "{}", r.stderr);
    // The commit may have been applied: the journal keeps the switch
    // `committing`, with its rollback point, for `push rollback`.
    assert_eq!(f.phase("sw1"), "committing");
    // Nobody confirms: the device's own timer takes it back.
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(f.nvue("sw1").applied_tree(), nvue_initial("sw1"));

    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.eos("sw1").drop_on_commit = true;
    let r = f.push_timer("3s", &["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_ne!(
        f.eos("sw1").running_config(),
        eos_initial("sw1"),
        "committed before the drop"
    );
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(f.eos("sw1").running_config(), eos_initial("sw1"));
}

#[test]
fn an_expired_confirm_timer_is_reported_and_the_device_rolled_back() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.nvue("sw1").stall_confirm = true;
    let r = f.push_timer("8s", &["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("the confirm timer expired before the commit was confirmed"),
        "{}",
        r.stderr
    );
    assert_eq!(f.phase("sw1"), "rolled-back");
    assert_eq!(f.nvue("sw1").applied_tree(), nvue_initial("sw1"));

    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.eos("sw1").stall_confirm = true;
    let r = f.push_timer("8s", &["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("the confirm timer expired"),
        "{}",
        r.stderr
    );
    assert_eq!(f.phase("sw1"), "rolled-back");
    assert_eq!(f.eos("sw1").running_config(), eos_initial("sw1"));
}

#[test]
fn a_failed_verification_rolls_back_and_names_port_and_peer() {
    // sw1's swp2 is cabled to the wrong switch.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, |sw, w| {
        if sw == "sw1" {
            w.lldp.insert("swp2".into(), ("sw8".into(), "swp3".into()));
        }
    });
    let r = f.push(&["--canary", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stdout.contains(
            "mismatch: sw1 swp2: LLDP neighbour is sw8 swp3, the plan cables it to sw4 swp1"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("verification failed: 1 mismatch"),
        "{}",
        r.stderr
    );
    // Each mismatch is printed once, not again in every error line.
    let both = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(
        both.matches("LLDP neighbour is sw8 swp3").count(),
        1,
        "{both}"
    );
    assert_eq!(f.phase("sw1"), "rolled-back");
    assert_eq!(f.phase("sw2"), "pending");
    let mut st = f.nvue("sw1");
    assert_eq!(st.applied_tree(), nvue_initial("sw1"));
    // The rollback answers the waiting revision "no" (the device goes
    // back at once) and applies nothing of its own.
    let cancel = r#"PATCH /nvue_v1/revision/2 {"state":"confirm_no"}"#;
    assert!(st.log.iter().any(|l| l == cancel), "{:?}", st.log);
    assert!(
        !st.log
            .iter()
            .any(|l| l.starts_with("PATCH /nvue_v1/revision/1")),
        "{:?}",
        st.log
    );
    assert_eq!(st.revisions[&2].state, "confirm_fail");
    assert!(st.confirm.is_none(), "a revision still waits");
    // The rollback is saved: a reboot keeps it.
    assert_eq!(st.saved, Some(nvue_initial("sw1")));
}

#[test]
fn a_device_that_is_another_switch_is_refused() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, |sw, w| {
        if sw == "sw1" {
            w.hostname = "sw9".into();
        }
    });
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("the device says it is sw9 (serial JPE00000001), not sw1"),
        "{}",
        r.stderr
    );
    assert_eq!(
        f.eos("sw1").log,
        ["POST /command-api [json] enable | show hostname | show version"]
    );
}

#[test]
fn the_watchdog_rolls_back_after_the_push_dies() {
    // EOS with the push's own timer (native_timer = false): the push is
    // killed while verifying; its watchdog still rolls back.
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.write_devices(|_| "native_timer = false".to_string());
    f.eos("sw1").observe_delay = Duration::from_secs(60);
    let plan = f.plan.display().to_string();
    let mut child = f
        .command(&[
            "push",
            &plan,
            "--devices",
            "devices.toml",
            "--switch",
            "sw1",
            "--confirm-timer",
            "4s",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("push starts");
    let start = std::time::Instant::now();
    while !(f.dir.path().join("push-journal.json").exists() && f.phase("sw1") == "committed") {
        assert!(start.elapsed() < Duration::from_secs(20), "no commit");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_ne!(f.eos("sw1").running_config(), eos_initial("sw1"));
    child.kill().expect("kill the push");
    child.wait().expect("wait");
    while f.phase("sw1") != "rolled-back" {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the watchdog did not roll back"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(f.eos("sw1").running_config(), eos_initial("sw1"));
    let j = f.journal();
    let err = j["switches"][0]["error"]
        .as_str()
        .expect("error")
        .to_string();
    assert!(
        err.contains("the watchdog rolled back to flash:efl-push-"),
        "{err}"
    );
    let log = f.eos("sw1").log.clone();
    let tail: Vec<&str> = log.iter().rev().take(1).map(String::as_str).collect();
    assert!(
        tail[0].contains("| configure replace flash:efl-push-"),
        "{log:?}"
    );
    // Nothing waits any more: status shows it, a new push may start.
    let st = f.run(&["push", "status", "--format", "json"]);
    assert_eq!(st.code, 0, "{st:?}");
}

#[test]
fn no_confirm_then_push_confirm_or_push_rollback() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let r = f.push(&["--switch", "sw1", "--switch", "sw2", "--no-confirm"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(f.phase("sw1"), "verified");
    // A new push refuses while commits wait.
    let again = f.push(&[]);
    assert_eq!(again.code, 2, "{again:?}");
    assert!(
        again
            .stderr
            .contains("left sw1, sw2 committed but not confirmed"),
        "{}",
        again.stderr
    );
    let c = f.run(&["push", "confirm", "--switch", "sw1"]);
    assert_eq!(c.code, 0, "{c:?}");
    assert_eq!(f.phase("sw1"), "confirmed");
    let rb = f.run(&["push", "rollback", "--format", "json"]);
    assert_eq!(rb.code, 0, "{rb:?}");
    let acts: Value = serde_json::from_str(&rb.stdout).expect("json");
    assert_eq!(acts.as_array().expect("list").len(), 2, "{acts}");
    for sw in ["sw1", "sw2"] {
        assert_eq!(f.phase(sw), "rolled-back");
        assert_eq!(f.nvue(sw).applied_tree(), nvue_initial(sw));
    }
}

/// Runs a push with a devices file and returns the error output.
fn devices_error(f: &Fabric, devices: &str) -> Run {
    std::fs::write(f.dir.path().join("devices.toml"), devices).expect("devices");
    let r = f.push(&["--dry-run"]);
    assert_eq!(r.code, 2, "{r:?}");
    r
}

#[test]
fn devices_file_errors_name_file_line_and_switch() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let good = std::fs::read_to_string(f.dir.path().join("devices.toml")).expect("devices");
    // Missing switch: sw8's entry removed.
    let cut = good.find("[[device]]\nswitch = \"sw8\"").expect("sw8");
    let end = good[cut + 1..]
        .find("[[device]]")
        .map_or(good.len(), |e| cut + 1 + e);
    let missing = format!("{}{}", &good[..cut], &good[end..]);
    let r = devices_error(&f, &missing);
    assert!(
        r.stderr
            .contains("devices.toml: the devices file does not fit the plan"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("switch sw8 of the plan has no [[device]] entry"),
        "{}",
        r.stderr
    );
    // Extra switch.
    let extra = format!(
        "{good}[[device]]\nswitch = \"sw99\"\nvendor = \"nvue\"\naddress = \"127.0.0.1:1\"\nuser = \"a\"\npassword_env = \"EFL_TEST_PASSWORD\"\n"
    );
    let r = devices_error(&f, &extra);
    let line = extra
        .lines()
        .position(|l| l == "switch = \"sw99\"")
        .expect("line")
        + 1;
    assert!(
        r.stderr
            .contains(&format!("line {line}: switch sw99 is not in the plan")),
        "{}",
        r.stderr
    );
    // Wrong vendor, and a vendor over the wrong transport.
    let r = devices_error(
        &f,
        &good.replacen("vendor = \"nvue\"", "vendor = \"junos\"", 1),
    );
    assert!(
        r.stderr
            .contains("line 3: switch sw1: vendor `junos` is unknown"),
        "{}",
        r.stderr
    );
    let r = devices_error(
        &f,
        &good.replacen("transport = \"https\"", "transport = \"ssh\"", 1),
    );
    assert!(
        r.stderr
            .contains("line 4: switch sw1: vendor nvue is not reached over ssh"),
        "{}",
        r.stderr
    );
    // A bad line.
    let r = devices_error(&f, &good.replacen("user = \"admin\"", "user = admin", 1));
    assert!(r.stderr.contains("devices.toml:6:"), "{}", r.stderr);
    // A password file others may read.
    let pw = f.dir.path().join("pw");
    std::fs::write(&pw, PASSWORD).expect("pw");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let r = devices_error(
        &f,
        &good.replacen(
            "password_env = \"EFL_TEST_PASSWORD\"",
            "password_file = \"pw\"",
            1,
        ),
    );
    assert!(
        r.stderr.contains("line 7: switch sw1: password_file")
            && r.stderr
                .contains("may be read by others (mode 0644); run `chmod 600"),
        "{}",
        r.stderr
    );
    // The same file with mode 0600 works (and is never printed).
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::write(
        f.dir.path().join("devices.toml"),
        good.replacen(
            "password_env = \"EFL_TEST_PASSWORD\"",
            "password_file = \"pw\"",
            1,
        ),
    )
    .expect("devices");
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    // An unset password variable.
    let r = devices_error(
        &f,
        &good.replacen("EFL_TEST_PASSWORD", "EFL_NOT_SET_ANYWHERE", 1),
    );
    assert!(
        r.stderr
            .contains("the environment variable EFL_NOT_SET_ANYWHERE (password_env) is not set"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_vendor_that_does_not_fit_the_plans_port_names_is_refused() {
    // The plan names sw1's ports the EOS way; the devices file says nvue.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&f.plan).expect("plan")).expect("json");
    for s in plan["switch_list"].as_array_mut().expect("switches") {
        s["port_name"] = json!("Ethernet{p}/1");
    }
    let path = f.dir.path().join("eos-named.plan.json");
    std::fs::write(&path, serde_json::to_string(&plan).expect("json")).expect("plan");
    let r = f.run(&[
        "push",
        &path.display().to_string(),
        "--devices",
        "devices.toml",
        "--dry-run",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("switch sw1: vendor nvue does not match the plan, which names its ports `Ethernet{p}/1` (eos style)"), "{}", r.stderr);
}

#[test]
fn tls_is_verified_unless_turned_off_with_a_warning() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    // Without the CA the certificate is refused.
    let good = std::fs::read_to_string(f.dir.path().join("devices.toml")).expect("devices");
    std::fs::write(
        f.dir.path().join("devices.toml"),
        good.replace("ca_file = \"ca.pem\"\n", ""),
    )
    .expect("devices");
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("cannot reach 127.0.0.1:"), "{}", r.stderr);
    std::fs::write(
        f.dir.path().join("devices.toml"),
        good.replace("ca_file = \"ca.pem\"\n", "tls_verify = false\n"),
    )
    .expect("devices");
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("warning: switch sw1: TLS certificate check is OFF"),
        "{}",
        r.stderr
    );
}

/// A dry run against 128 test-server switches (docs/benchmarks.md): a
/// BiGraph 2x128 (128 physical switches, 64 cables each) designed here,
/// odd switches NVUE, even ones EOS. Run by hand on a quiet machine:
/// `cargo test --release -p provisioner --test it push -- --ignored
/// dry_run_of_128 --nocapture`.
#[test]
#[ignore = "benchmark: run by hand on a quiet machine"]
fn dry_run_of_128_switches() {
    let (inv, opts) = planner::design::shorthand::bigraph(
        2,
        128,
        &planner::design::shorthand::Shorthand::default(),
    )
    .expect("shorthand");
    let plan = planner::design::design(&inv, &opts).expect("design");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bigraph-2x128.plan.json");
    std::fs::write(&path, plan.plan().to_json().expect("json")).expect("plan");
    let f = Fabric::at(
        path,
        |s| {
            let n: u32 = s
                .trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .unwrap_or(0);
            if n.is_multiple_of(2) {
                all_eos(s)
            } else {
                all_nvue(s)
            }
        },
        none,
    );
    assert_eq!(f.addrs.len(), 128);
    let one = std::time::Instant::now();
    let r = f.push(&["--dry-run", "--switch", "sw001"]);
    assert_eq!(r.code, 0, "{r:?}");
    eprintln!(
        "dry run of one switch of the 128: {:.2} s",
        one.elapsed().as_secs_f64()
    );
    let start = std::time::Instant::now();
    let r = f.push(&["--dry-run", "--batch", "128", "--max-share", "1"]);
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.matches(" loaded ").count(), 128, "{}", r.stdout);
    eprintln!("dry run of 128 switches (64 NVUE, 64 EOS): {secs:.2} s");
    assert!(secs < 10.0, "{secs} s");
}

#[test]
fn management_is_kept_and_a_candidate_that_cuts_it_is_refused() {
    // NVUE: the dry run's diff removes no management line.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let r = f.push(&["--dry-run", "--show-diff", "--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    for gone in [
        "- interface eth0",
        "- vrf mgmt",
        "- system aaa",
        "- service ntp",
        "- service syslog",
    ] {
        assert!(!r.stdout.contains(gone), "{gone}: {}", r.stdout);
    }
    assert!(
        r.stdout.contains("- system hostname sw1") || !r.stdout.contains("- system"),
        "{}",
        r.stdout
    );
    // The API reached on a front-panel port the plan readdresses (NVUE-API.md,
    // "Access the NVUE REST API from a Front Panel Port"): refused before
    // any revision is made.
    {
        let mut st = f.nvue("sw1");
        let mut t = st.revisions[&1].tree.clone();
        t["interface"]["eth0"]["ip"]["address"] = json!({"192.0.2.10/24": {}});
        t["interface"]["swp1"] = json!({"ip": {"address": {"127.0.0.1/8": {}}}, "type": "swp"});
        st.revisions.get_mut(&1).expect("rev 1").tree = t;
        st.log.clear();
    }
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("would cut the management access push uses")
            && r.stderr.contains("- interface swp1 ip address 127.0.0.1/8"),
        "{}",
        r.stderr
    );
    assert!(
        !f.nvue("sw1").log.iter().any(|l| l.starts_with("POST")),
        "{:?}",
        f.nvue("sw1").log
    );

    // EOS: the same.
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    let r = f.push(&["--dry-run", "--show-diff", "--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    for l in eos_initial("sw1")
        .iter()
        .filter(|l| !l.starts_with("hostname"))
    {
        assert!(
            !r.stdout.contains(&format!("-{l}\n")),
            "{l} removed: {}",
            r.stdout
        );
    }
    let port = f
        .candidate("sw1")
        .lines()
        .find(|l| l.starts_with("interface Ethernet"))
        .expect("a port")
        .to_string();
    {
        let mut st = f.eos("sw1");
        let mut run: Vec<String> = st
            .running
            .iter()
            .map(|l| l.replace("   ip address 127.0.0.1/8", "   ip address 192.0.2.10/8"))
            .collect();
        run.extend([
            port.clone(),
            "   no switchport".into(),
            "   ip address 127.0.0.1/8".into(),
        ]);
        st.running = run.clone();
        st.startup = run;
        st.log.clear();
    }
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("would cut the management access push uses")
            && r.stderr.contains(&format!("  {port}"))
            && r.stderr.contains("-    ip address 127.0.0.1/8"),
        "{}",
        r.stderr
    );
    assert!(
        !f.eos("sw1")
            .log
            .iter()
            .any(|l| l.contains("configure session")),
        "{:?}",
        f.eos("sw1").log
    );
}

/// A request to a test server, as the tests send it by hand.
fn req(method: &str, uri: &str, body: Value) -> servers::Req {
    servers::Req {
        method: method.into(),
        uri: uri.into(),
        auth: Some((USER.into(), PASSWORD.into())),
        authorization: None,
        body,
        delayed: false,
    }
}

#[test]
fn test_servers_go_dark_when_management_is_removed_until_their_timer_runs_out() {
    // NVUE: the plan's tree alone (what push loaded before issue #30),
    // applied with a 2 s confirm timer.
    let world = World {
        hostname: "sw1".into(),
        ..World::default()
    };
    let mut st = NvueState::new(world.clone(), USER, PASSWORD, nvue_initial("sw1"));
    assert_eq!(st.access(), servers::Access::Open);
    assert!(matches!(
        st.handle(&req("POST", "/nvue_v1/revision", Value::Null)),
        servers::Reply::Json(200, _)
    ));
    st.handle(&req("DELETE", "/nvue_v1/?rev=2", Value::Null));
    st.handle(&req(
        "PATCH",
        "/nvue_v1/?rev=2",
        json!({"system": {"hostname": "sw1"}}),
    ));
    let apply = json!({"state": "apply", "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_yes"},
        "state-controls": {"confirm": 2}});
    st.handle(&req("PATCH", "/nvue_v1/revision/2", apply));
    assert_eq!(st.access(), servers::Access::Dark);
    assert!(matches!(
        st.handle(&req("GET", "/nvue_v1/revision/2", Value::Null)),
        servers::Reply::Drop
    ));
    std::thread::sleep(Duration::from_millis(2100));
    assert!(matches!(
        st.handle(&req("GET", "/nvue_v1/revision/2", Value::Null)),
        servers::Reply::Json(200, _)
    ));
    assert_eq!(st.applied_tree(), nvue_initial("sw1"));

    // EOS: `rollback clean-config` and the plan's lines only.
    let mut st = EosState::new(world, USER, PASSWORD, eos_initial("sw1"));
    let run = |st: &mut EosState, cmds: &[&str]| {
        st.handle(&req(
            "POST",
            "/command-api",
            json!({"jsonrpc": "2.0", "method": "runCmds", "id": 1,
                   "params": {"version": 1, "cmds": cmds, "format": "json"}}),
        ))
    };
    run(
        &mut st,
        &[
            "enable",
            "configure session s1",
            "rollback clean-config",
            "hostname sw1",
            "end",
        ],
    );
    run(
        &mut st,
        &["enable", "configure session s1 commit timer 00:00:02"],
    );
    assert_eq!(st.access(), servers::Access::Dark);
    assert!(matches!(
        run(&mut st, &["enable", "show hostname"]),
        servers::Reply::Drop
    ));
    std::thread::sleep(Duration::from_millis(2100));
    assert!(matches!(
        run(&mut st, &["enable", "show hostname"]),
        servers::Reply::Json(200, _)
    ));
    assert_eq!(st.running_config(), eos_initial("sw1"));
}

#[test]
fn eos_4_32_session_shape_confirms_and_locks() {
    // EOS 4.32 reports a pending commit timer only at the top level.
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    for sw in f.eos.keys() {
        f.eos(sw).version = "4.32.1F".into();
    }
    let r = f.push(&["--switch", "sw2"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(f.phase("sw2"), "confirmed");
    assert!(f.eos("sw2").sessions.is_empty());
    // Another session waiting on its timer, 4.32 shape: a lock.
    f.eos("sw1").sessions.insert(
        "ops-change".into(),
        servers::Session {
            lines: eos_initial("sw1"),
            state: "pendingCommitTimer".into(),
            deadline: Some(std::time::Instant::now() + Duration::from_secs(600)),
            before: eos_initial("sw1"),
        },
    );
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("locked by configure session ops-change (commit timer expires at")
            && r.stderr.contains("EOS 4.32.1F"),
        "{}",
        r.stderr
    );
    // --no-confirm, then `push confirm` finds the timer in the 4.32 shape.
    let r = f.push(&["--switch", "sw3", "--no-confirm"]);
    assert_eq!(r.code, 0, "{r:?}");
    let c = f.run(&["push", "confirm"]);
    assert_eq!(c.code, 0, "{c:?}");
    assert_eq!(f.phase("sw3"), "confirmed");
    assert!(f.eos("sw3").sessions.is_empty());
}

/// Starts `provisioner push --switch sw1` with `timer` and kills it once sw1's
/// commit has reached the device (its answer is held back by the server).
fn kill_mid_commit(f: &Fabric, timer: &str) {
    f.eos("sw1").commit_reply_delay = Duration::from_secs(60);
    let plan = f.plan.display().to_string();
    let mut child = f
        .command(&[
            "push",
            &plan,
            "--devices",
            "devices.toml",
            "--switch",
            "sw1",
            "--confirm-timer",
            timer,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("push starts");
    let start = std::time::Instant::now();
    while f.eos("sw1").running_config() == eos_initial("sw1") {
        assert!(start.elapsed() < Duration::from_secs(30), "no commit");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The journal said so before the commit request went out.
    assert_eq!(f.phase("sw1"), "committing");
    child.kill().expect("kill the push");
    child.wait().expect("wait");
    f.eos("sw1").commit_reply_delay = Duration::ZERO;
}

#[test]
fn a_push_killed_mid_commit_leaves_a_journal_that_rollback_and_confirm_act_on() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    kill_mid_commit(&f, "120s");
    let st = f.run(&["push", "status", "--format", "json"]);
    assert_eq!(st.code, 0, "{st:?}");
    let j: Value = serde_json::from_str(&st.stdout).expect("json");
    assert_eq!(j["outcome"], "interrupted", "{j}");
    let rec = &j["switches"][0];
    assert_eq!(rec["phase"], "committing");
    assert!(
        rec["point"]
            .as_str()
            .is_some_and(|p| p.starts_with("flash:efl-push-")),
        "{rec}"
    );
    assert!(rec["deadline"].as_u64().is_some(), "{rec}");
    let rb = f.run(&["push", "rollback"]);
    assert_eq!(rb.code, 0, "{rb:?}");
    assert_eq!(f.phase("sw1"), "rolled-back");
    let mut st = f.eos("sw1");
    assert_eq!(st.running_config(), eos_initial("sw1"));
    assert!(st.sessions.is_empty(), "{:?}", st.sessions);
    assert_eq!(st.startup, eos_initial("sw1"), "the rollback is saved");
    drop(st);

    // The same kill, then `push confirm` keeps the commit.
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    kill_mid_commit(&f, "120s");
    let c = f.run(&["push", "confirm"]);
    assert_eq!(c.code, 0, "{c:?}");
    assert_eq!(f.phase("sw1"), "confirmed");
    let mut st = f.eos("sw1");
    assert!(st.sessions.is_empty());
    let running = st.running_config();
    assert_ne!(running, eos_initial("sw1"));
    assert_eq!(st.startup, running);
}

#[test]
fn the_watchdog_runs_before_the_commit_and_rolls_back_a_push_killed_mid_commit() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
    f.write_devices(|_| "native_timer = false".to_string());
    kill_mid_commit(&f, "3s");
    let start = std::time::Instant::now();
    while f.phase("sw1") != "rolled-back" {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the watchdog did not roll back"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(f.eos("sw1").running_config(), eos_initial("sw1"));
}

#[test]
fn a_hostile_device_is_refused_with_a_clear_message() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, |sw, w| {
        if sw == "sw2" {
            // A hostname that would drive the terminal.
            w.hostname = "sw9\u{1b}[2J\u{1b}]0;pwned\u{7}".into();
        }
    });
    // A redirect to another host over plain HTTP is not followed.
    f.nvue("sw1").hostile = Some(servers::Hostile::Redirect("http://192.0.2.99".into()));
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("HTTP 307 Temporary Redirect redirecting to http://192.0.2.99/nvue_v1/system?rev=operational; push follows no redirect"),
        "{}",
        r.stderr
    );
    assert_eq!(f.nvue("sw1").log.len(), 1, "{:?}", f.nvue("sw1").log);
    // An endless body is cut off.
    f.nvue("sw1").hostile = Some(servers::Hostile::Endless);
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("the answer is longer than 32 MiB; refused"),
        "{}",
        r.stderr
    );
    // Credentials a device echoes are blanked (`Fabric::run` checks that
    // the password shows nowhere; the basic token neither).
    f.nvue("sw1").hostile = Some(servers::Hostile::EchoAuth);
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    let token = "YWRtaW46czNjcjN0LVBhNTV3b3JkLW5ldmVyLXNob3du"; // admin:PASSWORD
    assert!(
        r.stderr
            .contains("cannot parse header Authorization: Basic ***"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains(token) && !r.stdout.contains(token),
        "{r:?}"
    );
    // Device strings print escaped.
    let r = f.push(&["--switch", "sw2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        !r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{7}'),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("the device says it is sw9\\u{1b}[2J"),
        "{}",
        r.stderr
    );
}

#[test]
fn nvue_5_15_spells_lldp_under_system_and_lists_routes_by_next_hop_group() {
    // Cumulus Linux 5.15: `system lldp`, the RIB's `route-entry` shape.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    for sw in f.nvue.keys() {
        f.nvue(sw).release = "5.15.0".into();
    }
    let r = f.push(&["--switch", "sw1", "--format", "json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let report: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(report["switches"][0]["phase"], "confirmed", "{report}");
    let mut st = f.nvue("sw1");
    let t = st.applied_tree();
    assert_eq!(t["system"]["lldp"], json!({"state": "enabled"}));
    assert!(t.pointer("/service/lldp").is_none(), "{t}");
    assert!(
        st.log
            .iter()
            .any(|l| l == "GET /nvue_v1/router/nexthop/rib?rev=operational"),
        "{:?}",
        st.log
    );
    // Only the subtrees verification needs, with 5.15's `include`.
    for read in [
        "GET /nvue_v1/interface?rev=operational&include=/*/link/state,/*/link/speed,/*/lldp/neighbor",
        "GET /nvue_v1/vrf?rev=operational&include=/*/router/rib/ipv4/route",
        // From 5.12 the neighbour object is a summary unless asked for
        // the detail.
        "GET /nvue_v1/vrf/Vrf100/router/bgp/neighbor?rev=operational&view=detail",
    ] {
        assert!(st.log.iter().any(|l| l == read), "{read}: {:?}", st.log);
    }
    assert!(
        !st.log
            .iter()
            .any(|l| l == "GET /nvue_v1/interface?rev=operational"),
        "a whole interface tree was read: {:?}",
        st.log
    );
    drop(st);
    // Verification compared the routes with the plan's next hops: the
    // plan routes every other sub-node's subnet (a route read "via
    // nothing" would have failed it).
    assert!(
        f.candidate("sw1").contains("router static"),
        "a routed plan"
    );
}

#[test]
fn nvue_confirm_exchange_in_nv_config_managers_reading() {
    // The revision waits in `ays` and is answered by a second apply
    // (NVIDIA/nv-config-manager); another waiting revision refuses an
    // apply with 409.
    let ays = |f: &Fabric| {
        for sw in f.nvue.keys() {
            f.nvue(sw).reading = servers::ConfirmReading::AysPrompt;
        }
    };
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    ays(&f);
    let r = f.push(&["--switch", "sw3"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        f.nvue("sw3").log,
        nvue_commit_sequence_in(servers::ConfirmReading::AysPrompt)
    );
    assert!(f.nvue("sw3").confirm.is_none());

    // A failed verification: the waiting revision is answered `ays_no`,
    // the device goes back at once, nothing of the rollback's own waits.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, |sw, w| {
        if sw == "sw1" {
            w.lldp.insert("swp2".into(), ("sw8".into(), "swp3".into()));
        }
    });
    ays(&f);
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    let mut st = f.nvue("sw1");
    assert_eq!(st.applied_tree(), nvue_initial("sw1"));
    assert!(
        !st.log.iter().any(|l| l.contains("confirm_no")),
        "{:?}",
        st.log
    );
    assert!(
        st.log.iter().any(|l| l
            == r#"PATCH /nvue_v1/revision/2 {"auto-prompt":{"ays":"ays_no"},"state":"apply"}"#),
        "{:?}",
        st.log
    );
    assert_eq!(st.revisions[&2].state, "ays_fail");
    assert!(st.confirm.is_none());
    assert_eq!(st.saved, Some(nvue_initial("sw1")));
    drop(st);

    // --no-confirm, then `push rollback` from another process: the
    // revision left waiting is answered before anything else.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    ays(&f);
    let r = f.push(&["--switch", "sw2", "--no-confirm"]);
    assert_eq!(r.code, 0, "{r:?}");
    f.nvue("sw2").log.clear();
    let rb = f.run(&["push", "rollback"]);
    assert_eq!(rb.code, 0, "{rb:?}");
    let mut st = f.nvue("sw2");
    assert_eq!(st.applied_tree(), nvue_initial("sw2"));
    assert_eq!(
        st.log[..2],
        [
            "GET /nvue_v1/revision".to_string(),
            r#"PATCH /nvue_v1/revision/2 {"auto-prompt":{"ays":"ays_no"},"state":"apply"}"#
                .to_string()
        ],
        "{:?}",
        st.log
    );
}

#[test]
fn a_rollback_answers_a_waiting_revision_first_and_leaves_none_of_its_own() {
    // gpncfg's reading: a later apply queues behind a waiting revision
    // (state `apply`) until that one is answered. `push rollback` after
    // `--no-confirm` cancels the waiting revision with `confirm_no`; the
    // device is back at once, long before its 600 s timer.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    let r = f.push_timer("600s", &["--switch", "sw1", "--no-confirm"]);
    assert_eq!(r.code, 0, "{r:?}");
    let start = std::time::Instant::now();
    let rb = f.run(&["push", "rollback"]);
    assert_eq!(rb.code, 0, "{rb:?}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "waited on the timer"
    );
    let mut st = f.nvue("sw1");
    assert_eq!(st.applied_tree(), nvue_initial("sw1"));
    assert!(st.confirm.is_none() && st.queued.is_none());
    assert!(
        st.revisions
            .values()
            .all(|r| !matches!(r.state.as_str(), "confirm" | "apply" | "ays")),
        "{:?}",
        st.revisions.values().map(|r| &r.state).collect::<Vec<_>>()
    );
    assert_eq!(st.saved, Some(nvue_initial("sw1")));
    drop(st);
    // A new push goes through at once: nothing holds it back.
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn a_certificate_issued_for_a_name_is_checked_against_tls_server_name() {
    // Every switch's certificate names `<switch>.mgmt.example` (one
    // certificate for all of them here), not the IP the devices file
    // connects to.
    let names: Vec<String> = (1..=8).map(|i| format!("sw{i}.mgmt.example")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let f = Fabric::with_tls(
        plan_file("bigraph-2x8.plan.json"),
        all_nvue,
        none,
        Tls::for_names(&refs),
    );
    // Without the name, the certificate does not fit 127.0.0.1.
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("certificate not valid for name \"127.0.0.1\""),
        "{}",
        r.stderr
    );
    assert!(f.nvue("sw1").log.is_empty(), "{:?}", f.nvue("sw1").log);
    // With it, the check passes; the connection still goes to the IP.
    f.write_devices(|sw| format!("tls_server_name = \"{sw}.mgmt.example\""));
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        f.nvue("sw1").log[0],
        "GET /nvue_v1/system?rev=operational",
        "{:?}",
        f.nvue("sw1").log
    );
    // Another switch's name is refused by the certificate check.
    f.write_devices(|_| "tls_server_name = \"sw9.mgmt.example\"".to_string());
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("certificate not valid for name \"sw9.mgmt.example\""),
        "{}",
        r.stderr
    );
    // A name that is no DNS name, or an address that is no IP, is bad
    // input naming the line.
    f.write_devices(|_| "tls_server_name = \"sw1 mgmt\"".to_string());
    let r = f.push(&["--dry-run", "--switch", "sw1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("tls_server_name `sw1 mgmt` is not a DNS name"),
        "{}",
        r.stderr
    );
}

#[test]
fn each_switchs_stage_shows_as_it_happens_and_a_dry_run_reports_every_unreachable_switch() {
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    // Table format: a line per stage on stderr, in order.
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let stages: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("push: sw1: "))
        .map(|l| l["push: sw1: ".len()..].split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(
        stages,
        [
            "connecting",
            "loaded",
            "committing",
            "verifying",
            "verified",
            "confirming",
            "confirmed"
        ],
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("push: batch 0 (canary): sw1"),
        "{}",
        r.stderr
    );
    // JSON: one object per line on stderr, the report alone on stdout.
    let r = f.push(&["--switch", "sw2", "--format", "json", "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    let _: Value = serde_json::from_str(&r.stdout).expect("stdout is the report");
    let events: Vec<Value> = r
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(
        events[0],
        json!({"event": "batch", "batch": 0, "switches": ["sw2"]})
    );
    let names: Vec<&str> = events[1..]
        .iter()
        .map(|e| e["stage"].as_str().expect("stage"))
        .collect();
    assert_eq!(names, ["connecting", "loaded", "loaded"], "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| e.get("seconds").is_some() || e["event"] == "batch")
    );
    // --quiet: nothing.
    let r = f.push(&["--switch", "sw2", "--dry-run", "--quiet"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stderr, "", "{r:?}");
    // A dry run goes on past unreachable switches and names each.
    let mut devices = std::fs::read_to_string(f.dir.path().join("devices.toml")).expect("devices");
    for sw in ["sw1", "sw6"] {
        let addr = f.addrs[sw].to_string();
        devices = devices.replace(&addr, "127.0.0.1:9");
    }
    std::fs::write(f.dir.path().join("devices.toml"), devices).expect("devices");
    let r = f.push(&["--dry-run", "--canary", "sw1"]);
    assert_ne!(r.code, 0, "{r:?}");
    let report = r.stdout.clone();
    for sw in ["sw1", "sw6"] {
        assert!(
            report.contains(&format!("{sw}: switch {sw}: cannot reach 127.0.0.1:9")),
            "{report}"
        );
    }
    assert!(report.contains("sw8     nvue"), "{report}");
    assert!(
        f.nvue("sw8")
            .log
            .iter()
            .any(|l| l.starts_with("POST /nvue_v1/revision"))
    );
}

#[test]
fn a_first_install_on_a_fresh_fabric_waits_for_ports_whose_peers_are_not_configured() {
    // Cumulus switches fresh from their installer: management only, every
    // swp port administratively down until configured, so a cable is up
    // only once both its ends run the plan.
    let f = Fabric::new("bigraph-2x8.plan.json", all_nvue, none);
    f.dark();
    let r = f.push(&["--format", "json", "--canary", "sw1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let report: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(report["outcome"], "done", "{report}");
    let canary = report["switches"]
        .as_array()
        .expect("switches")
        .iter()
        .find(|s| s["switch"] == "sw1")
        .expect("sw1")
        .clone();
    // The canary met only dark cables: none a mismatch, each waiting; it
    // was confirmed once the whole fabric was checked in full.
    assert_eq!(canary["waits_for_fabric"], true, "{canary}");
    assert_eq!(canary["mismatches"], json!([]), "{canary}");
    let verified: Vec<Value> = r
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["switch"] == "sw1" && e["stage"] == "verified")
        .collect();
    assert_eq!(verified.len(), 1, "{}", r.stderr);
    assert!(
        verified[0]["detail"]
            .as_str()
            .is_some_and(|d| d.ends_with("ports or sessions whose peers are not configured yet")),
        "{verified:?}"
    );
    for s in report["switches"].as_array().expect("switches") {
        assert_eq!(s["phase"], "confirmed", "{s}");
    }
    for sw in f.nvue.keys() {
        let want = nvue_tree_of(&f.checked, sw);
        let mut st = f.nvue(sw);
        let applied = st.applied_tree();
        assert_plan_and_management(&applied, &want, &nvue_initial(sw));
    }
    // The second push: nothing to do.
    let r = f.push(&[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("confirmed"), "{}", r.stdout);
}

/// The state of every BGP session of `sw`'s server, as (VRF, peer) ->
/// `established`/`idle` (whichever key the release spells it with).
fn sessions(f: &Fabric, sw: &str) -> BTreeMap<(String, String), String> {
    let st = f.nvue(sw);
    let mut out = BTreeMap::new();
    for (vrf, ns) in st.bgp_neighbours(true) {
        for (peer, n) in ns.as_object().expect("neighbours") {
            let state = n.get("session-state").or_else(|| n.get("state"));
            out.insert(
                (vrf.clone(), peer.clone()),
                state.and_then(Value::as_str).unwrap_or("").to_string(),
            );
        }
    }
    out
}

#[test]
fn a_plan_with_a_wrong_peer_as_is_named_as_an_as_mismatch_and_rolled_back() {
    // A running fabric of the BGP plan (every switch applied it), and a
    // plan whose ASNs are not the fabric's (asn_base moved by 1000):
    // pushed to sw1, its sessions go down because the peers refuse its
    // AS and it refuses theirs (the test servers' BGP, RFC 4271 6.2).
    for release in ["5.9.1", "5.12.1", "5.15.0"] {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", all_nvue, none);
        f.at_release(release);
        f.share_bgp();
        let running = f.run_plan(|_, _| false);
        let up = sessions(&f, "sw1");
        assert_eq!(up.len(), 4, "{release}: {up:?}");
        assert!(up.values().all(|s| s == "established"), "{release}: {up:?}");
        push_wrong_asn(&f, &["swp1", "swp2", "swp3", "swp4"], release);
        // The fabric is as it was: every switch's configuration, and
        // sw1's sessions established again.
        for (sw, was) in &running {
            assert_eq!(&f.running(sw), was, "{release}: {sw}");
        }
        f.nvue("sw1").publish();
        assert_eq!(sessions(&f, "sw1"), up, "{release}");
    }
}

/// Pushes the BGP plan with its ASNs moved by 1000 to sw1 alone; checks
/// that each of sw1's four sessions (on `ports`, in VRF Vrf100) is named
/// as an AS mismatch with the peer, both ASNs given, and that push rolled
/// sw1 back itself, not the device's 60 s timer.
fn push_wrong_asn(f: &Fabric, ports: &[&str], label: &str) {
    let wrong = wrong_asn_plan(f).display().to_string();
    let started = std::time::Instant::now();
    let r = f.run(&[
        "push",
        &wrong,
        "--devices",
        "devices.toml",
        "--confirm-timer",
        "60s",
        "--settle",
        "0s",
        "--switch",
        "sw1",
    ]);
    let took = started.elapsed();
    assert_eq!(r.code, 2, "{label}: {r:?}");
    for (port, (peer, n)) in ports
        .iter()
        .zip([("sw2", 1), ("sw4", 3), ("sw6", 5), ("sw8", 7)])
    {
        let line = format!(
            "mismatch: sw1 {port} (VRF Vrf100): AS mismatch with {peer} 10.255.0.{n}: the switch now expects remote AS {}, the peer ran this session as AS {} before the commit (the session is not established)",
            4_200_001_000u64 + n,
            4_200_000_000u64 + n
        );
        assert!(r.stdout.contains(&line), "{label}: {line}\n{}", r.stdout);
    }
    assert!(took < Duration::from_secs(20), "{label}: {took:?}");
    assert_eq!(f.phase("sw1"), "rolled-back", "{label}");
}

/// The fabric's plan with its ASNs moved by 1000 (`asn_base`), written
/// beside the devices file.
fn wrong_asn_plan(f: &Fabric) -> PathBuf {
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&f.plan).expect("plan")).expect("json");
    plan["routing"]["asn_base"] = json!(4_200_001_000u64);
    let wrong = f.dir.path().join("wrong-asn.plan.json");
    std::fs::write(&wrong, plan.to_string()).expect("plan");
    wrong
}

#[test]
fn a_peer_that_refuses_the_as_on_a_fresh_fabric_is_named_and_rolled_back() {
    // sw1 runs nothing yet; its peers run BGP with the ASNs of another
    // plan (moved by 1000), so no session of sw1 was ever up. The
    // sessions are refused with a NOTIFICATION (NVUE's
    // `last-reset-reason`, FRR's wording): not pending on a peer that is
    // not configured, but named as the AS mismatch it is.
    for release in ["5.9.1", "5.15.0"] {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", all_nvue, none);
        f.at_release(release);
        refused_on_a_fresh_fabric(
            &f,
            &["swp1", "swp2", "swp3", "swp4"],
            "BGP Notification send",
            release,
        );
    }
}

#[test]
fn eos_a_peer_that_refuses_the_as_on_a_fresh_fabric_is_named_and_rolled_back() {
    // As above, on EOS. EOS's JSON gives no reason for a down session;
    // its neighbour text does ("Peering failure hint: Open Message
    // Error/bad AS number", as recorded on EOS 4.33.1.1F), and the
    // client reads it.
    for version in ["4.31.2F", "4.32.1F"] {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", all_eos, none);
        f.at_release(version);
        refused_on_a_fresh_fabric(
            &f,
            &["Ethernet1/1", "Ethernet2/1", "Ethernet3/1", "Ethernet4/1"],
            "Open Message Error/bad AS number",
            version,
        );
    }
}

/// Runs the ASNs of another plan (moved by 1000) on every switch but
/// sw1, pushes the right plan to sw1 alone and checks that each of its
/// four sessions (on `ports`, in VRF Vrf100) is named as an AS mismatch
/// with the device's `reason`, nothing is pending, and sw1 was rolled
/// back by push within seconds.
fn refused_on_a_fresh_fabric(f: &Fabric, ports: &[&str], reason: &str, label: &str) {
    f.share_bgp();
    let path = wrong_asn_plan(f);
    let text = std::fs::read_to_string(&path).expect("plan");
    let other = CheckedPlan::load(&text, "wrong-asn.plan.json").expect("plan loads");
    f.run_plan_of(&other, |sw, _| sw == "sw1");
    let before = f.running("sw1");
    let started = std::time::Instant::now();
    let r = f.push(&["--switch", "sw1"]);
    assert_eq!(r.code, 2, "{label}: {r:?}");
    for (port, (peer, n)) in ports
        .iter()
        .zip([("sw2", 1), ("sw4", 3), ("sw6", 5), ("sw8", 7)])
    {
        let line = format!(
            "mismatch: sw1 {port} (VRF Vrf100): AS mismatch with {peer} 10.255.0.{n}, as far as the switch tells: the session was refused with a BGP NOTIFICATION (the switch reports: {reason}), which an AS that is not the configured one causes (RFC 4271 6.2, Bad Peer AS); the plan gives {peer} AS {} and sw1 AS 4200000000 in this VRF",
            4_200_000_000u64 + n
        );
        assert!(r.stdout.contains(&line), "{label}: {line}\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("pending:"), "{label}: {}", r.stdout);
    assert!(started.elapsed() < Duration::from_secs(20), "{label}");
    assert_eq!(f.phase("sw1"), "rolled-back", "{label}");
    assert_eq!(f.running("sw1"), before, "{label}");
}

/// The state of every BGP session of `sw`'s eAPI server, as (VRF, peer)
/// -> `peerState`.
fn eos_sessions(f: &Fabric, sw: &str) -> BTreeMap<(String, String), String> {
    let summary = f.eos(sw).bgp_summary();
    let mut out = BTreeMap::new();
    for (vrf, v) in summary["vrfs"].as_object().expect("vrfs") {
        for (peer, p) in v["peers"].as_object().expect("peers") {
            out.insert(
                (vrf.clone(), peer.clone()),
                p["peerState"].as_str().expect("state").to_string(),
            );
        }
    }
    out
}

#[test]
fn eos_a_plan_with_a_wrong_peer_as_is_named_as_an_as_mismatch_and_rolled_back() {
    for version in ["4.31.2F", "4.32.1F"] {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", all_eos, none);
        f.at_release(version);
        f.share_bgp();
        let running = f.run_plan(|_, _| false);
        let up = eos_sessions(&f, "sw1");
        assert_eq!(up.len(), 4, "{version}: {up:?}");
        assert!(up.values().all(|s| s == "Established"), "{version}: {up:?}");
        push_wrong_asn(
            &f,
            &["Ethernet1/1", "Ethernet2/1", "Ethernet3/1", "Ethernet4/1"],
            version,
        );
        for (sw, was) in &running {
            assert_eq!(&f.running(sw), was, "{version}: {sw}");
        }
        assert_eq!(eos_sessions(&f, "sw1"), up, "{version}");
    }
}

#[test]
fn eos_first_install_of_8_switches_on_dark_ports_in_the_4_31_and_4_32_shapes() {
    // EOS switches with their management only, every fabric cable dark
    // until both its ends are configured (the test world of a first
    // install: see `EosState::fabric`), in each session shape.
    for version in ["4.31.2F", "4.32.1F"] {
        let f = Fabric::new("bigraph-2x8.plan.json", all_eos, none);
        f.at_release(version);
        f.dark();
        for sw in f.eos.keys() {
            let links = f.eos(sw).links();
            assert!(links.values().all(|up| !up), "{version}: {sw} {links:?}");
        }
        let r = f.push(&["--format", "json", "--canary", "sw1"]);
        assert_eq!(r.code, 0, "{version}: {r:?}");
        let report: Value = serde_json::from_str(&r.stdout).expect("json");
        assert_eq!(report["outcome"], "done", "{version}: {report}");
        let switches = report["switches"].as_array().expect("switches");
        assert_eq!(switches.len(), 8);
        let canary = switches.iter().find(|s| s["switch"] == "sw1").expect("sw1");
        assert_eq!(canary["waits_for_fabric"], true, "{version}: {canary}");
        assert_eq!(canary["mismatches"], json!([]), "{version}: {canary}");
        for s in switches {
            assert_eq!(s["phase"], "confirmed", "{version}: {s}");
        }
        for sw in f.eos.keys() {
            let mut st = f.eos(sw);
            // No commit timer left running, every cable lit, management
            // kept line for line.
            assert!(st.sessions.is_empty(), "{version}: {sw} {:?}", st.sessions);
            assert!(st.links().values().all(|up| *up), "{version}: {sw}");
            let running = st.running_config();
            for l in eos_initial(sw) {
                assert!(running.contains(&l), "{version}: {sw} lost {l:?}");
            }
        }
        // The second push: nothing to do.
        let r = f.push(&[]);
        assert_eq!(r.code, 0, "{version}: {r:?}");
        assert!(!r.stdout.contains("confirmed"), "{version}: {}", r.stdout);
    }
}

#[test]
fn a_port_that_goes_down_in_a_running_fabric_is_named_and_rolled_back() {
    // Every switch runs the plan; sw1 runs it without its unused port 7's
    // lines, so the push has one change to commit, and sw1's cable to sw4
    // fails as the commit lands.
    for vendor in [all_nvue as fn(&str) -> Vendor, all_eos] {
        let f = Fabric::new("bigraph-2x8.plan.json", vendor, none);
        let nvue = f.vendors["sw1"].as_str() == "nvue";
        let (port, far) = if nvue {
            ("swp2", "sw4 swp1")
        } else {
            ("Ethernet2/1", "sw4 Ethernet1/1")
        };
        let before =
            f.run_plan(|sw, l| sw == "sw1" && (l.contains("swp7") || l.contains("Ethernet7/1")));
        if nvue {
            f.nvue("sw1").fail_on_commit = Some(port.into());
        } else {
            f.eos("sw1").fail_on_commit = Some(port.into());
        }
        let r = f.push(&["--switch", "sw1"]);
        assert_eq!(r.code, 2, "{r:?}");
        let line = format!("mismatch: sw1 {port}: down, the plan cables it to {far}");
        assert!(r.stdout.contains(&line), "{line}\n{}", r.stdout);
        assert_eq!(f.phase("sw1"), "rolled-back");
        assert_eq!(f.running("sw1"), before["sw1"]);
    }
}

/// Every switch's vendor.
type VendorOf = fn(&str) -> Vendor;

/// The releases the BGP tests run at, each with its vendor: NVUE before
/// and from 5.15 (route shapes, LLDP spelling), EOS before and from 4.32
/// (session shapes).
fn bgp_releases() -> [(VendorOf, &'static str); 4] {
    [
        (all_nvue, "5.9.1"),
        (all_nvue, "5.15.0"),
        (all_eos, "4.31.2F"),
        (all_eos, "4.32.1F"),
    ]
}

#[test]
fn a_bgp_fabric_of_8_switches_installs_confirms_and_a_second_push_changes_nothing() {
    // Switches with their management only, cables dark until both ends
    // are configured, BGP between the test servers: the plan's sessions
    // come up as the switches are configured, BFD with them, and each
    // switch learns the others' subnets over every equal path.
    for (vendor, release) in bgp_releases() {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", vendor, none);
        f.at_release(release);
        f.dark();
        f.share_bgp();
        let r = f.push(&["--format", "json", "--canary", "sw1"]);
        assert_eq!(r.code, 0, "{release}: {r:?}");
        let report: Value = serde_json::from_str(&r.stdout).expect("json");
        assert_eq!(report["outcome"], "done", "{release}: {report}");
        let switches = report["switches"].as_array().expect("switches");
        assert_eq!(switches.len(), 8, "{release}");
        for s in switches {
            assert_eq!(s["phase"], "confirmed", "{release}: {s}");
            assert_eq!(s["mismatches"], json!([]), "{release}: {s}");
        }
        let canary = switches.iter().find(|s| s["switch"] == "sw1").expect("sw1");
        assert_eq!(canary["waits_for_fabric"], true, "{release}: {canary}");
        // Every switch learned the 7 other subnets; a lower switch reaches
        // another lower one over all 4 upper ones.
        for sw in f.vendors.keys() {
            let routes = f.bgp_routes(sw);
            assert_eq!(routes.len(), 7, "{release}: {sw} {routes:?}");
        }
        let sw2 = f.bgp_routes("sw2");
        assert_eq!(
            sw2[&("Vrf100".to_string(), "10.0.3.0/24".to_string())],
            ["10.255.0.0", "10.255.0.16", "10.255.0.24", "10.255.0.8"],
            "{release}: {sw2:?}"
        );
        // The second push: nothing to do.
        let r = f.push(&[]);
        assert_eq!(r.code, 0, "{release}: {r:?}");
        assert!(!r.stdout.contains("confirmed"), "{release}: {}", r.stdout);
    }
}

#[test]
fn a_cable_that_fails_in_a_running_bgp_fabric_costs_routes_and_is_rolled_back() {
    // Every switch runs the BGP plan (sw1 without its port 7's lines, so
    // the push has a change to commit); sw1's cable to sw4 fails as the
    // commit lands: the session and BFD with sw4 go down, sw4's subnet is
    // reached the long way round and sw3's loses its leg through sw4.
    for (vendor, release) in bgp_releases() {
        let f = Fabric::new("bigraph-2x8-bgp.plan.json", vendor, none);
        f.at_release(release);
        f.share_bgp();
        let nvue = f.vendors["sw1"].as_str() == "nvue";
        let before =
            f.run_plan(|sw, l| sw == "sw1" && (l.contains("swp7") || l.contains("Ethernet7/1")));
        let port = if nvue { "swp2" } else { "Ethernet2/1" };
        if nvue {
            f.nvue("sw1").fail_on_commit = Some(port.into());
        } else {
            f.eos("sw1").fail_on_commit = Some(port.into());
        }
        let r = f.push(&["--switch", "sw1"]);
        assert_eq!(r.code, 2, "{release}: {r:?}");
        for line in [
            format!("mismatch: sw1 {port} (VRF Vrf100): BFD with sw4 10.255.0.3 is not up"),
            "mismatch: sw1 VRF Vrf100: 10.0.3.0/24 via 10.255.0.1, 10.255.0.5, 10.255.0.7, the plan says via 10.255.0.3".to_string(),
            "mismatch: sw1 VRF Vrf100: 10.0.2.0/24 via 10.255.0.1, 10.255.0.5, 10.255.0.7, the plan says via 10.255.0.1, 10.255.0.3, 10.255.0.5, 10.255.0.7".to_string(),
        ] {
            assert!(r.stdout.contains(&line), "{release}: {line}\n{}", r.stdout);
        }
        assert_eq!(f.phase("sw1"), "rolled-back", "{release}");
        assert_eq!(f.running("sw1"), before["sw1"], "{release}");
    }
}
