//! The provisioner's part of the fuzz harness of issue #13: property tests
//! that mutate the bundled job files, the EFLOPS plan and the rank table a
//! submission writes, and run `nodes`, `submit --dry-run --offline`
//! (placement and manifests) and `rank-check` through the library as the
//! binary does. Each case asserts: no panic, every refusal names the
//! mutated file, an accepted submission's YAML parses back, its `ranks.csv`
//! reads back and passes `rank-check` on every Node it names, and no two
//! ranks on one Node share a GPU. Issue 31 adds the lab state file (read
//! as `lab down` does, its paths confined) and probe control frames from a
//! hostile peer (answered by the deadline, never past the size limit),
//! and device answers to `provisioner push` (NVUE REST and eAPI JSON from
//! the documentation-based test servers, mutated or replaced, read by the
//! real clients; SONiC and Comware CLI text read by their parsers, and
//! the SONiC and Comware clients through a real SSH session whose answers
//! are spoiled; EOS's neighbour text and SONiC's failure text read by
//! their readers).
//! The mutations are the planner's ([`testkit::mutate`]); `FUZZ_CASES`
//! sets the cases per test.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use proptest::prelude::*;
use testkit::mutate;

use mutate::{Format, JOBS, Mutated, Rng, Scale, read};
use planner::checked::CheckedPlan;
use provisioner::jobs::job::JobSpec;
use provisioner::jobs::rank_check;
use provisioner::jobs::submit::{self, Submission};
use provisioner::jobs::view::ClusterView;
use provisioner::nodes;

const PLAN: &str = mutate::EFLOPS_PLAN;

pub(crate) fn config() -> ProptestConfig {
    ProptestConfig {
        cases: u32::try_from(mutate::env_number("FUZZ_CASES", 64)).unwrap_or(u32::MAX),
        max_shrink_iters: 0,
        failure_persistence: None,
        // The same cases on every run (`FUZZ_SEED` picks others), so a
        // failure in CI replays on any machine.
        rng_seed: proptest::test_runner::RngSeed::Fixed(mutate::env_number("FUZZ_SEED", 0)),
        ..ProptestConfig::default()
    }
}

/// A mutated input and the name errors must give it.
struct Input {
    source: String,
    file: String,
    mutated: Mutated,
}

impl Input {
    fn from_text(source: &str, original: &str, seed: u64) -> Input {
        let mut rng = Rng::new(seed);
        let name = Path::new(source).file_name().unwrap().to_string_lossy();
        Input {
            source: source.to_string(),
            file: format!("fuzz-{seed:016x}-{name}"),
            mutated: mutate::mutate(
                original,
                Format::of(Path::new(source)),
                Scale::Bounded,
                &mut rng,
            ),
        }
    }

    fn new(sources: &[&str], seed: u64) -> Input {
        let source = *Rng::new(seed ^ 0x10b5).pick(sources);
        Input::from_text(source, &read(source), seed)
    }

    fn report(&self, original: &str, seed: u64, problem: &str) -> String {
        format!(
            "seed {seed}: {problem}\ninput {} (from {}), mutations: {}\n{}",
            self.file,
            self.source,
            self.mutated.steps.join("; "),
            mutate::diff(original, &self.mutated.text)
        )
    }
}

/// Runs `f`, turning a panic into an error.
fn guarded(f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(format!("panic: {}", mutate::panic_message(&*payload))))
}

fn refused(what: &str, err: &dyn std::fmt::Display, file: &str) -> Result<(), String> {
    let text = err.to_string();
    if text.contains(file) {
        Ok(())
    } else {
        Err(format!("{what}: refusal does not name {file}: {text}"))
    }
}

fn config_file<'a>(sub: &'a Submission, key: &str) -> Result<&'a str, String> {
    sub.manifests
        .owned
        .iter()
        .find_map(|o| o["data"][key].as_str())
        .ok_or_else(|| format!("the ConfigMap has no {key}"))
}

/// What every accepted submission must hold.
fn submission_holds(sub: &Submission) -> Result<(), String> {
    let yaml = sub.to_yaml().map_err(|e| format!("YAML: {e}"))?;
    for doc in serde_norway::Deserializer::from_str(&yaml) {
        <serde_norway::Value as serde::Deserialize>::deserialize(doc)
            .map_err(|e| format!("the manifests' YAML does not parse back: {e}"))?;
    }
    let _ = sub.summary();
    let table = config_file(sub, "ranks.csv")?;
    let rows = rank_check::read_table(table, "ranks.csv")
        .map_err(|e| format!("ranks.csv does not read back: {e}"))?;
    for row in &rows {
        rank_check::check(&rows, "ranks.csv", &row.node, Some(row.rank), None).map_err(|e| {
            format!(
                "rank-check refuses rank {} on its own Node {:?}: {e}",
                row.rank, row.node
            )
        })?;
    }
    // rank-env.csv: rank,node,local_rank,slot,CUDA_VISIBLE_DEVICES,...
    let env = config_file(sub, "rank-env.csv")?;
    let mut gpus = BTreeSet::new();
    for l in env.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f.len() < 5 || !gpus.insert((f[1].to_string(), f[4].to_string())) {
            return Err(format!(
                "rank-env.csv: two ranks on one Node share CUDA_VISIBLE_DEVICES, or a row is cut: {l:?}"
            ));
        }
    }
    Ok(())
}

fn eflops_plan() -> CheckedPlan {
    CheckedPlan::load(&read(PLAN), PLAN).unwrap()
}

/// A mutated job file on the EFLOPS plan.
fn job_case(seed: u64) -> Result<(), String> {
    let input = Input::new(JOBS, seed);
    let plan = eflops_plan();
    let r = guarded(|| {
        let job = match JobSpec::from_toml(&input.mutated.text, &input.file) {
            Ok(j) => j,
            Err(e) => return refused("job file", &e, &input.file),
        };
        let bound = nodes::bind(&plan, None, PLAN).map_err(|e| e.to_string())?;
        match submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound)) {
            Ok(sub) => submission_holds(&sub),
            Err(e) => refused("submit", &e, &input.file),
        }
    });
    r.map_err(|p| input.report(&read(&input.source), seed, &p))
}

/// A mutated plan with each bundled job file: nodes, submit.
fn plan_case(seed: u64) -> Result<(), String> {
    let input = Input::new(&[PLAN], seed);
    let job_file = *Rng::new(seed).pick(JOBS);
    let job = JobSpec::from_toml(&read(job_file), job_file).unwrap();
    let r = guarded(|| {
        let plan = match CheckedPlan::load(&input.mutated.text, &input.file) {
            Ok(p) => p,
            Err(e) => return refused("plan", &e, &input.file),
        };
        let bound = match nodes::bind(&plan, None, &input.file) {
            Ok(b) => b,
            Err(e) => return refused("nodes", &e, &input.file),
        };
        match submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound)) {
            Ok(sub) => submission_holds(&sub),
            Err(e) => refused("submit", &e, &input.file),
        }
    });
    r.map_err(|p| input.report(&read(PLAN), seed, &p))
}

/// A mutated `ranks.csv` (as a submission writes it): rank-check on each
/// Node of the original table.
fn rank_table_case(seed: u64) -> Result<(), String> {
    let plan = eflops_plan();
    let job = JobSpec::from_toml(&read(JOBS[0]), JOBS[0]).unwrap();
    let bound = nodes::bind(&plan, None, PLAN).unwrap();
    let sub = submit::prepare(&plan, &bound, &job, &ClusterView::all_free(&bound)).unwrap();
    let original = config_file(&sub, "ranks.csv").unwrap().to_string();
    let input = Input::from_text("ranks.csv", &original, seed);
    let r = guarded(|| {
        let rows = match rank_check::read_table(&input.mutated.text, &input.file) {
            Ok(r) => r,
            Err(e) => return refused("rank table", &e, &input.file),
        };
        for node in ["node01", "node02", "node16", ""] {
            for rank in [None, Some(0), Some(31)] {
                // A refusal here is the check doing its job; only a panic
                // fails.
                let _ = rank_check::check(&rows, "ranks.csv", node, rank, Some(0));
            }
        }
        Ok(())
    });
    r.map_err(|p| input.report(&original, seed, &p))
}

/// A lab state file (issue 31): a state `lab up` would write for the EFLOPS
/// plan, mutated as JSON, read back as `lab down` and `lab run` do, with
/// its paths put through the confinement they get before anything is
/// removed. No panic; a refusal names the file; the FRR directories of an
/// accepted state resolve under the lab's own bases or are refused.
fn state_case(seed: u64) -> Result<(), String> {
    use provisioner::lab::state::{self, State};
    let plan = eflops_plan();
    let lab = planner::network::Lab::of(&plan, PLAN).map_err(|e| e.to_string())?;
    let st = State {
        version: state::VERSION,
        name: "fz".to_string(),
        phase: "up".to_string(),
        plan_file: PLAN.to_string(),
        rate_kbit: 100_000,
        namespaces: vec!["fz-s0".to_string(), "fz-h0".to_string()],
        lab,
        changed: Vec::new(),
        pins: vec![("fz-s0".to_string(), "rule".to_string())],
        routing: Default::default(),
        frr_dirs: vec![
            "/etc/frr/fz-s0".to_string(),
            "/var/run/frr/fz-s0".to_string(),
        ],
        mark: "0123456789abcdef".to_string(),
    };
    let original = serde_json::to_string_pretty(&st).map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed);
    let mutated = mutate::mutate(&original, Format::Json, mutate::Scale::Bounded, &mut rng);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = state::path(dir.path(), "fz");
    std::fs::write(&file, &mutated.text).map_err(|e| e.to_string())?;
    let name = file.display().to_string();
    let r = guarded(|| {
        match state::read(dir.path(), "fz") {
            Err(e) => refused("state", &e, &name)?,
            Ok(None) => return Err("the state file was written but not found".to_string()),
            Ok(Some(st)) => {
                let bases = [Path::new("/etc/frr"), Path::new("/var/run/frr")];
                for d in &st.frr_dirs {
                    if let Ok(p) = provisioner::lab::trust::confine(d, &bases)
                        && !bases.iter().any(|b| p.starts_with(b))
                    {
                        return Err(format!("{d} was confined to {}", p.display()));
                    }
                }
                let _ = provisioner::lab::trust::own_namespaces(&st);
            }
        }
        Ok(())
    });
    r.map_err(|p| {
        format!(
            "seed {seed}: {p}\nmutations: {}\n{}",
            mutated.steps.join("; "),
            mutate::diff(&original, &mutated.text)
        )
    })
}

/// A probe control frame from a hostile peer (issue 31): a valid message
/// mutated as JSON behind a length prefix that is right, short, long or
/// huge, or raw bytes, written to a loopback socket whose writer then
/// closes or keeps the connection open and silent. Rank 0's frame reader
/// must answer (a message or an error) by its deadline, never panic, and
/// never accept more than its limit.
fn frame_case(seed: u64) -> Result<(), String> {
    use provisioner::probe::wire::{self, Control};
    use std::io::Write as _;
    let mut rng = Rng::new(seed);
    let messages = [
        Control::Table(vec!["127.0.0.1:29501".to_string(), "[::1]:2".to_string()]),
        Control::Local(vec![1, u64::MAX, 0]),
        Control::Global(Vec::new()),
        Control::Challenge {
            nonce: "ab".repeat(32),
            proof: "cd".repeat(32),
        },
        Control::StepDone(3),
        Control::Stop("rank 1 failed".to_string()),
    ];
    let message = rng.pick(&messages);
    let original = serde_json::to_string(message).map_err(|e| e.to_string())?;
    let body = if rng.chance(1, 8) {
        (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect()
    } else {
        mutate::mutate(&original, Format::Json, mutate::Scale::Bounded, &mut rng)
            .text
            .into_bytes()
    };
    let limit = wire::control_limit(4);
    let len = match rng.below(5) {
        0 => body.len().saturating_sub(1 + rng.below(4)),
        1 => body.len() + 1 + rng.below(4),
        2 => limit + 1,
        3 => u32::MAX as usize,
        _ => body.len(),
    };
    let keep_open = rng.chance(1, 4);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let mut peer = std::net::TcpStream::connect(listener.local_addr().map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let (sock, _) = listener.accept().map_err(|e| e.to_string())?;
    let mut frame = (len as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    let _ = peer.write_all(&frame);
    if !keep_open {
        let _ = peer.shutdown(std::net::Shutdown::Write);
    }
    let start = std::time::Instant::now();
    let window = std::time::Duration::from_millis(200);
    let r = guarded(|| {
        match wire::read_frame(&sock, limit, Some(start + window)) {
            Ok(_) if len > limit => {
                return Err(format!(
                    "a frame of {len} bytes passed the limit of {limit}"
                ));
            }
            Ok(_) | Err(_) => {}
        }
        let took = start.elapsed();
        if took > window + std::time::Duration::from_secs(2) {
            return Err(format!(
                "the reader took {took:?} past its deadline of {window:?}"
            ));
        }
        Ok(())
    });
    drop(peer);
    r.map_err(|p| {
        format!(
            "seed {seed}: {p}\nframe ({} bytes of body, prefix {len}): {:?}",
            body.len(),
            String::from_utf8_lossy(&body)
        )
    })
}

/// The switch and credentials of the device-answer target.
const SWITCH: &str = "sw1";
const USER: &str = "admin";
const PASSWORD: &str = "fuzz-Pa55";

/// How long a client may take over one call against a device that
/// answers at once (the clients' own limits are longer: this target's
/// answers all come from loopback).
const CALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One call of a push client: its value, or its error as push prints it,
/// which must say what failed, name the switch, carry no control character
/// of the device's and never the password.
fn judged<T>(
    step: &str,
    r: Result<Result<T, provisioner::push::PushError>, tokio::time::error::Elapsed>,
) -> Result<Option<T>, String> {
    match r {
        Err(_) => Err(format!("{step} took more than {CALL_LIMIT:?}")),
        Ok(Ok(v)) => Ok(Some(v)),
        Ok(Err(e)) => {
            let shown = provisioner::push::run::chain(&e.on(SWITCH));
            if !shown.starts_with(&format!("switch {SWITCH}: ")) || shown.len() <= SWITCH.len() + 9
            {
                return Err(format!(
                    "{step}: an error that does not say what failed: {shown:?}"
                ));
            }
            // Line breaks are the error's own (lists of lines); any
            // other control character came from the device unescaped.
            if let Some(c) = shown.chars().find(|c| c.is_control() && *c != '\n') {
                return Err(format!(
                    "{step}: control character {c:?} in the error: {shown:?}"
                ));
            }
            if shown.contains(PASSWORD) {
                return Err(format!("{step}: the password in the error: {shown:?}"));
            }
            Ok(None)
        }
    }
}

/// The calls push makes of a client, each [`judged`]: identity, load,
/// then discard (or, with `commit`, prepare, commit and roll back to the
/// point), and observe; what it observed, if it did.
async fn drive<D: provisioner::push::Device>(
    c: &mut D,
    candidate: &str,
    commit: bool,
) -> Result<Option<provisioner::push::device::Observed>, String> {
    use tokio::time::timeout;
    if judged("identity", timeout(CALL_LIMIT, c.identity()).await)?.is_none() {
        return Ok(None);
    }
    if judged("load", timeout(CALL_LIMIT, c.load(candidate)).await)?.is_some() {
        if commit {
            let point = judged("prepare", timeout(CALL_LIMIT, c.prepare()).await)?;
            let timer = std::time::Duration::from_secs(60);
            let done = judged("commit", timeout(CALL_LIMIT, c.commit(timer)).await)?;
            if let (Some(point), Some(_)) = (point, done) {
                judged("rollback", timeout(CALL_LIMIT, c.rollback(&point)).await)?;
            }
        } else {
            judged("discard", timeout(CALL_LIMIT, c.discard()).await)?;
        }
    }
    judged("observe", timeout(CALL_LIMIT, c.observe()).await)
}

/// The honest or hostile bytes of one answer: the JSON pretty-printed and
/// mutated (one entry per line, so the line operations drop, repeat and
/// reorder keys), or something no device should send.
pub(crate) fn hostile_answer(v: &serde_json::Value, rng: &mut Rng) -> Option<Vec<u8>> {
    if !rng.chance(1, 2) {
        return None;
    }
    let text = serde_json::to_string_pretty(v).ok()?;
    let out = match rng.below(8) {
        0 => rng
            .pick(&[
                "[]",
                "null",
                "42",
                "\"sw1\"",
                "{}",
                "",
                "{\"a\":",
                "\u{1b}[2J\u{7}",
            ])
            .to_string(),
        _ => mutate::mutate(&text, Format::Json, mutate::Scale::Bounded, rng).text,
    };
    Some(out.into_bytes())
}

/// Device answers to `provisioner push` (issue 31): an NVUE (5.9, 5.12 or
/// 5.15) or eAPI (4.31 or 4.32) test server running the BGP plan's sw1
/// answers each request honestly or, one time in two, with a mutated or
/// hostile body; the real client reads its identity, loads and diffs the
/// candidate, discards it and observes the switch, and verification
/// checks what it read. Every call must end within [`CALL_LIMIT`] with a
/// value or an error, never a panic; an error must say what was being
/// done and, as push prints it, name the switch; no device text may
/// reach an error unescaped (no control character but the error's own
/// line breaks). Bodies are small
/// here; the cap on large ones is push.rs's hostile-device test.
fn device_answer_case(seed: u64) -> Result<(), String> {
    use provisioner::push::device::{HostKeyCheck, Secret, Target, Tls, Transport};
    use provisioner::push::{eos::Eos, nvue::Nvue};
    use std::sync::{Arc, Mutex};

    use crate::push::servers;

    let mut rng = Rng::new(seed);
    let nvue = rng.chance(1, 2);
    let release = if nvue {
        *rng.pick(&["5.9.1", "5.12.1", "5.15.0"])
    } else {
        *rng.pick(&["4.31.2F", "4.32.1F"])
    };
    let plan_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/data/bigraph-2x8-bgp.plan.json");
    let text = std::fs::read_to_string(&plan_path).map_err(|e| e.to_string())?;
    let plan = CheckedPlan::load(&text, "bigraph-2x8-bgp.plan.json").map_err(|e| e.to_string())?;
    let vendor =
        planner::render::Vendor::named(if nvue { "nvue" } else { "eos" }).ok_or("no vendor")?;
    // What a push loads: the script for EOS, the REST tree for NVUE.
    let candidate = provisioner::push::run::rendered(&plan, vendor)
        .map_err(|e| e.to_string())?
        .remove(&vendor.file_name(SWITCH))
        .ok_or("no candidate")?;
    let mut world = servers::World {
        hostname: SWITCH.to_string(),
        ..servers::World::default()
    };
    for (i, peer) in ["sw2", "sw4", "sw6", "sw8"].iter().enumerate() {
        let port = if nvue {
            format!("swp{}", i + 1)
        } else {
            format!("Ethernet{}/1", i + 1)
        };
        world.interfaces.insert(port.clone(), (true, 100_000));
        world.lldp.insert(port.clone(), (peer.to_string(), port));
    }
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let answers = Arc::new(Mutex::new(Rng::new(seed ^ 0x5eed)));
    let log = seen.clone();
    let mutator = servers::Mutator(Arc::new(move |what: &str, v: &serde_json::Value| {
        let mut r = answers.lock().ok()?;
        let out = hostile_answer(v, &mut r)?;
        if let Ok(mut l) = log.lock() {
            let shown: String = String::from_utf8_lossy(&out).chars().take(400).collect();
            l.push(format!("{what} -> {shown:?}"));
        }
        Some(out)
    }));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let tls = servers::Tls::new();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &tls.ca_pem).map_err(|e| e.to_string())?;
    let addr = if nvue {
        let mut st = servers::NvueState::new(
            world,
            USER,
            PASSWORD,
            servers::nvue_management(SWITCH, USER, "127.0.0.1"),
        );
        st.release = release.to_string();
        st.mutate = Some(mutator);
        rt.block_on(servers::nvue(&tls, st)).0
    } else {
        let mut st = servers::EosState::new(
            world,
            USER,
            PASSWORD,
            servers::eos_management(SWITCH, USER, "127.0.0.1"),
        );
        st.version = release.to_string();
        st.mutate = Some(mutator);
        rt.block_on(servers::eos(&tls, st)).0
    };
    let target = Target {
        switch: SWITCH.to_string(),
        vendor,
        transport: Transport::Https,
        address: addr.to_string(),
        netns: None,
        user: USER.to_string(),
        password: Some(Secret::new(PASSWORD.to_string())),
        tls: Tls {
            ca_file: Some(ca),
            verify: true,
            server_name: None,
        },
        host_key: HostKeyCheck::Off,
    };
    let want =
        provisioner::push::verify::expected(&plan, SWITCH, vendor).map_err(|e| e.to_string())?;
    let outcome = guarded(|| {
        rt.block_on(async {
            let seen = if nvue {
                let c = Nvue::new(&target, true, CALL_LIMIT).map_err(|e| format!("client: {e}"))?;
                drive(
                    &mut c.with_poll(std::time::Duration::from_millis(10)),
                    &candidate,
                    false,
                )
                .await?
            } else {
                let mut c =
                    Eos::new(&target, "efl-push-fuzz", true).map_err(|e| format!("client: {e}"))?;
                drive(&mut c, &candidate, false).await?
            };
            if let Some(o) = seen {
                let v = provisioner::push::verify::check(&want, &o, &|_| None, None);
                let _ = v.complete();
            }
            Ok(())
        })
    });
    outcome.map_err(|p| {
        let answers = seen.lock().map(|l| l.join("\n")).unwrap_or_default();
        format!(
            "seed {seed}: {} {release}: {p}\nmutated answers:\n{answers}",
            vendor.as_str()
        )
    })
}

/// SONiC and Comware CLI text, mutated, read by the push clients' parsers
/// (the text of the SSH test servers, written from each vendor's
/// documentation): every parser returns, never panics, within a second.
fn cli_answer_case(seed: u64) -> Result<(), String> {
    use provisioner::push::{comware, sonic};
    let mut rng = Rng::new(seed);
    // The answers the SSH tests give their servers (push_ssh.rs
    // `sonic_observe_reads_the_documented_outputs` and the Comware observe
    // test), written from each vendor's documented output.
    let texts: [(&str, &str); 7] = [
        (
            "sonic show lldp table",
            "Capability codes: (R) Router, (B) Bridge, (O) Other\n\
LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n\
-----------  --------------  --------------  ------------  -----------------\n\
Ethernet0    sw05            Ethernet64      BR            to sw01-u Ethernet0\n\
--------------------------------------------------\nTotal entries displayed:  1\n",
        ),
        (
            "sonic show interfaces status",
            "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin                                             Type    Asym PFC\n\
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  -----------------------------------------------  ----------\n\
  Ethernet0          0,1,2,3     100G   9216     rs     etp1  routed      up       up  QSFP28 or later                                         N/A\n\
  Ethernet4          4,5,6,7     100G   9216     rs     etp2  routed    down       up  N/A                                                     N/A\n",
        ),
        (
            "comware display lldp neighbor-information list",
            "Chassis ID : * -- -- Nearest nontpmr bridge neighbor\n             # -- -- Nearest customer bridge neighbor\n             Default -- -- Nearest bridge neighbor\n\nSystem Name          Local Interface Chassis ID      Port ID\nsw05                 HGE1/0/1        0cda-411d-0005  HundredGigE1/0/17",
        ),
        (
            "comware display interface brief",
            "Brief information on interfaces in route mode:\nLink: ADM - administratively down; Stby - standby\nProtocol: (s) - spoofing\nInterface            Link Protocol Primary IP      Description\nHGE1/0/1             UP   UP       10.255.0.0      to sw01-l HundredGigE1/0/17",
        ),
        (
            "comware display bgp peer ipv4",
            "  Peer                    AS  MsgRcvd  MsgSent OutQ PrefRcv Up/Down  State\n\n  10.255.0.1           65101        7       10    0       4 00:05:19 Established",
        ),
        (
            // eos.rs's unit test: the EANTC 2025 captures' lines.
            "eos show ip bgp neighbors (text)",
            "BGP neighbor is 10.0.0.53, remote AS 64512, internal link\n  BGP version 4, remote router ID 0.0.0.0, VRF default\n  BGP state is Active\n  Peering failure hint: Open Message Error/bad AS number\n  Last sent notification:Open Message Error/bad AS number, Last time 00:00:04, First time 00:41:18, Repeats 495\n  Last rcvd notification:Cease/administrative reset, Last time 00:11:05\n",
        ),
        (
            // sonic.rs's unit test: a recorded `config replace` failure.
            "sonic config replace failure",
            "Failed to replace config\nUsage: config replace [OPTIONS] TARGET_FILE_PATH\nTry \"config replace -h\" for help.\n\nError: Given patch will produce invalid config. Error: Data Loading Failed\nValue \"public\" does not satisfy the constraint \"Vlan(409[0-5])\"\n",
        ),
    ];
    let (what, original) = *rng.pick(&texts);
    let text = if rng.chance(1, 8) {
        (0..rng.below(512))
            .map(|_| char::from(rng.below(128) as u8))
            .collect()
    } else {
        mutate::mutate(original, Format::Csv, mutate::Scale::Bounded, &mut rng).text
    };
    let start = std::time::Instant::now();
    guarded(|| {
        match what {
            "sonic show lldp table" => drop(sonic::lldp_table(&text)),
            "sonic show interfaces status" => drop(sonic::interfaces_status(&text)),
            "comware display lldp neighbor-information list" => drop(comware::lldp_list(&text)),
            "comware display interface brief" => drop(comware::interface_brief(&text)),
            "comware display bgp peer ipv4" => drop(comware::bgp_peers(&text, "default")),
            "eos show ip bgp neighbors (text)" => {
                if let Some(r) = provisioner::push::eos::refusal_reason(&text)
                    && (r.chars().count() > 200 || r.chars().any(char::is_control))
                {
                    return Err(format!("a reason not cleaned: {r:?}"));
                }
            }
            _ => drop(sonic::gcu_reason(&text)),
        }
        let took = start.elapsed();
        if took > std::time::Duration::from_secs(1) {
            return Err(format!("{what}: the parser took {took:?}"));
        }
        Ok(())
    })
    .map_err(|p| format!("seed {seed}: {what}: {p}\ntext: {text:?}"))
}

/// A device behind SSH whose answers are, one time in two, mutated or
/// replaced: the documentation-based test server (`support/`) answers,
/// then its output, error text, exit status or the connection itself is
/// spoiled. Comware's prompt is kept three times in four (without it the
/// client waits for its command timeout, which this target sets short).
struct Hostile<S> {
    inner: S,
    rng: Rng,
}

impl<S: crate::push_ssh::ssh_server::Script> crate::push_ssh::ssh_server::Script for Hostile<S> {
    fn reads_stdin(&self, command: &str) -> bool {
        self.inner.reads_stdin(command)
    }
    fn exec(&mut self, command: &str, stdin: &[u8]) -> crate::push_ssh::ssh_server::Reply {
        let r = self.inner.exec(command, stdin);
        self.spoil(r, false)
    }
    fn shell_open(&mut self) -> String {
        self.inner.shell_open()
    }
    fn shell_line(&mut self, line: &str) -> crate::push_ssh::ssh_server::Reply {
        let r = self.inner.shell_line(line);
        self.spoil(r, true)
    }
}

impl<S> Hostile<S> {
    fn text(&mut self, original: &str) -> String {
        match self.rng.below(6) {
            0 => self
                .rng
                .pick(&["", "\u{1b}[2J\u{7}", "%", "null", "[Y/N]:"])
                .to_string(),
            1 => (0..self.rng.below(512))
                .map(|_| char::from(self.rng.below(128) as u8))
                .collect(),
            _ => mutate::mutate(original, Format::Csv, Scale::Bounded, &mut self.rng).text,
        }
    }

    fn spoil(
        &mut self,
        mut r: crate::push_ssh::ssh_server::Reply,
        shell: bool,
    ) -> crate::push_ssh::ssh_server::Reply {
        if !self.rng.chance(1, 2) {
            return r;
        }
        match self.rng.below(8) {
            0 => r.drop = true,
            1 => r.status = *self.rng.pick(&[0, 1, 2, 127, 255]),
            2 => r.stderr = self.text(&r.stderr.clone()),
            _ if shell && self.rng.chance(3, 4) => {
                // The body spoiled, the prompt (the last line) kept.
                let (body, prompt) = r
                    .stdout
                    .rsplit_once('\n')
                    .map(|(b, p)| (b.to_string(), p.to_string()))
                    .unwrap_or_else(|| (String::new(), r.stdout.clone()));
                r.stdout = format!("{}\n{prompt}", self.text(&body));
            }
            _ => r.stdout = self.text(&r.stdout.clone()),
        }
        r
    }
}

/// `inner` behind [`Hostile`] on a loopback SSH server (host key from
/// `key_seed`, pinned), and the target a client of it uses.
async fn hostile_server<S: crate::push_ssh::ssh_server::Script>(
    inner: S,
    rng: Rng,
    vendor: planner::render::Vendor,
    key_seed: u8,
) -> (
    crate::push_ssh::ssh_server::TestServer<Hostile<S>>,
    provisioner::push::Target,
) {
    use crate::push_ssh as ssh;
    let server =
        ssh::ssh_server::TestServer::start(Hostile { inner, rng }, USER, PASSWORD, key_seed).await;
    let t = ssh::target(
        SWITCH,
        vendor,
        &server.address,
        PASSWORD,
        ssh::pinned(&server),
    );
    (server, t)
}

/// SONiC and Comware through a real SSH session (issue 31): the
/// documentation-based test server behind [`Hostile`] answers the real
/// client, which connects, reads the identity, loads and diffs the
/// candidate, then either discards it or commits it and rolls back to
/// its point, and observes the switch; verification reads what it saw.
/// Every call must end within [`CALL_LIMIT`], never panic, and an error
/// must pass [`judged`] (what failed, the switch named, no device control
/// character, no password).
fn ssh_answer_case(seed: u64) -> Result<(), String> {
    use crate::push_ssh as ssh;
    use planner::render::Vendor;
    use provisioner::push::comware::{Comware, ComwareOptions};
    use provisioner::push::sonic::Sonic;
    use provisioner::push::ssh::SshOptions;

    let mut rng = Rng::new(seed);
    let comware = rng.chance(1, 2);
    let commit = rng.chance(1, 2);
    let answers = Rng::new(seed ^ 0x55_4e11);
    let options = SshOptions {
        connect: std::time::Duration::from_secs(2),
        command: std::time::Duration::from_millis(500),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let outcome = guarded(|| {
        rt.block_on(async {
            if comware {
                let (_server, t) =
                    hostile_server(ssh::comware_with_outputs(), answers, Vendor::Comware, 3).await;
                let options = ComwareOptions {
                    ssh: options,
                    minute: ssh::MINUTE,
                };
                let connect = tokio::time::timeout(CALL_LIMIT, Comware::connect(&t, options));
                if let Some(mut c) = judged("connect", connect.await)? {
                    drive(&mut c, &ssh::comware_candidate(), commit).await?;
                }
            } else {
                let (_server, t) =
                    hostile_server(ssh::sonic_with_outputs(), answers, Vendor::Sonic, 1).await;
                let connect = tokio::time::timeout(CALL_LIMIT, Sonic::connect(&t, options));
                if let Some(mut c) = judged("connect", connect.await)? {
                    drive(&mut c, &ssh::candidate(), commit).await?;
                }
            }
            Ok(())
        })
    });
    outcome.map_err(|p| {
        format!(
            "seed {seed}: {}: {p}",
            if comware { "comware" } else { "sonic" }
        )
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_push_ssh_sessions(seed in any::<u64>()) {
        let r = ssh_answer_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_push_device_answers(seed in any::<u64>()) {
        let r = device_answer_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_push_cli_answers(seed in any::<u64>()) {
        let r = cli_answer_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_lab_state_files(seed in any::<u64>()) {
        let r = state_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_probe_frames_from_a_hostile_peer(seed in any::<u64>()) {
        let r = frame_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_job_files_submit_offline(seed in any::<u64>()) {
        let r = job_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_plan_nodes_submit_offline(seed in any::<u64>()) {
        let r = plan_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn fuzz_rank_table_rank_check(seed in any::<u64>()) {
        let r = rank_table_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// Every target over `FUZZ_CASES` seeds, each distinct failure once.
#[test]
#[ignore = "a survey for people: FUZZ_CASES=500 cargo test -p provisioner --test it fuzz -- --ignored"]
fn fuzz_survey() {
    let n = mutate::env_number("FUZZ_CASES", 64);
    type Case = fn(u64) -> Result<(), String>;
    let targets: [(&str, Case); 9] = [
        ("push-device-answer", device_answer_case),
        ("push-cli-answer", cli_answer_case),
        ("job", job_case),
        ("plan", plan_case),
        ("rank-table", rank_table_case),
        ("lab-state", state_case),
        ("probe-frame", frame_case),
        ("sot-answer", sot_answer_case),
        ("sot-nautobot-push", sot_nautobot_push_case),
    ];
    let mut seen = std::collections::BTreeMap::new();
    for (name, f) in targets {
        for seed in 0..n {
            if let Err(e) = f(seed) {
                // Group by what failed, not by the file or the numbers.
                let problem = e.lines().next().unwrap_or("").split_once(": ");
                let kind: String = problem
                    .map_or("", |x| x.1)
                    .split_whitespace()
                    .map(|w| if w.starts_with("fuzz-") { "FILE" } else { w })
                    .take(8)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .chars()
                    .filter(|c| !c.is_ascii_digit())
                    .collect();
                seen.entry(format!("[{name}] {kind}"))
                    .or_insert_with(|| (0, e.clone()))
                    .0 += 1;
            }
        }
    }
    println!("{} distinct failures", seen.len());
    for (k, (count, first)) in &seen {
        println!("\n=== {k} ({count} cases)\n{first}");
    }
}

/// Names with terminal escapes and line breaks a hostile server gives its
/// objects.
const EVIL_NAMES: [&str; 4] = [
    "sw01\u{1b}[2J\u{7}",
    "node01\r\nX-Evil: 1",
    "\u{9b}31m",
    "a\u{0}b",
];

/// What a hostile source of truth sends instead of an honest answer `v`
/// to `uri` (its absolute URL `url`), or nothing (one answer in four is
/// spoiled): the JSON mutated, a body of the wrong type or no JSON at
/// all, a huge `count`, a `next` link back to the same page (endless
/// pagination), a body over the client's limit, ids that point nowhere,
/// every object twice, device text with terminal escapes, or an error
/// status (4xx or 5xx) with such text. A list answer (a bulk write's)
/// given a `count` or a `next` becomes a page holding it.
fn hostile_sot_answer(v: &serde_json::Value, url: &str, rng: &mut Rng) -> Option<(u16, Vec<u8>)> {
    use serde_json::{Value, json};
    if !rng.chance(1, 4) {
        return None;
    }
    fn walk(v: &mut Value, f: &mut dyn FnMut(&str, &mut Value)) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    f(k, x);
                    walk(x, f);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    let mut v = v.clone();
    let text = match rng.below(10) {
        0 => {
            mutate::mutate(
                &serde_json::to_string_pretty(&v).ok()?,
                Format::Json,
                Scale::Bounded,
                rng,
            )
            .text
        }
        1 => rng
            .pick(&[
                "[]",
                "null",
                "42",
                "\"sw01\"",
                "{}",
                "",
                "{\"results\":",
                "<html><body>502 Bad Gateway</body></html>",
                "{\"count\": 1, \"results\": \"sw01\"}",
                "{\"count\": 1, \"results\": [42, null, \"x\"]}",
                "{\"data\": null, \"errors\": [{\"message\": \"\\u001b[2Jboom\"}]}",
            ])
            .to_string(),
        2 => {
            if !v.is_object() {
                v = json!({ "results": v });
            }
            v["count"] = json!(u64::MAX);
            v.to_string()
        }
        3 => {
            // Endless pages: `next` is this very page.
            if !v.is_object() {
                v = json!({ "results": v });
            }
            v["next"] = json!(url);
            v.to_string()
        }
        4 => {
            // Over the client's body limit (1 MiB here).
            format!(
                "{{\"count\": 0, \"results\": [], \"pad\": \"{}\"}}",
                "x".repeat(1_100_000)
            )
        }
        5 => {
            let n = rng.next_u64() % 1_000_000 + 100_000;
            walk(&mut v, &mut |k, x| {
                if (k == "id" || k.ends_with("_id")) && x.is_u64() {
                    *x = json!(n);
                } else if k == "id" && x.is_string() {
                    // Nautobot's UUIDs.
                    *x = json!(format!("00000000-0000-4000-8000-{n:012x}"));
                }
            });
            v.to_string()
        }
        6 => {
            if let Some(r) = v.get_mut("results").and_then(Value::as_array_mut) {
                let copy = r.clone();
                r.extend(copy);
            }
            v.to_string()
        }
        7 => {
            let evil = rng.pick(&EVIL_NAMES);
            walk(&mut v, &mut |k, x| {
                if matches!(k, "name" | "label" | "display" | "address" | "model") && x.is_string()
                {
                    *x = json!(evil);
                }
            });
            v.to_string()
        }
        8 => {
            let status = *rng.pick(&[400u16, 403, 404, 409, 412, 418, 500, 502, 503]);
            return Some((
                status,
                json!({"detail": "refused \u{1b}[31mred\u{7} text"})
                    .to_string()
                    .into_bytes(),
            ));
        }
        _ => {
            // Wrong types for known keys.
            walk(&mut v, &mut |k, x| {
                if matches!(
                    k,
                    "results"
                        | "tags"
                        | "a_terminations"
                        | "custom_fields"
                        | "device"
                        | "mode"
                        | "interfaces"
                        | "inventory_items"
                        | "ip_addresses"
                        | "_custom_field_data"
                        | "parent"
                        | "type"
                ) {
                    *x = json!("not what NetBox sends");
                }
            });
            v.to_string()
        }
    };
    Some((200, text.into_bytes()))
}

/// (method, path with query, status sent, spoiled) of one request.
pub(crate) type Answered = (String, String, u16, bool);

/// What a push's requests (`pushed`, in the order the server answered
/// them) must hold (issue #31); `shown` is the push's error when it failed,
/// `base` the server's URL, `concurrency` the client's requests in flight.
///
/// - A write answered with a 5xx may have been applied: with one request
///   in flight, no write may follow it (the request after an answer is the
///   client's next decision), neither the same write sent again nor the
///   next one.
/// - After the answer the push refused (the last spoiled or 4xx/5xx answer
///   to the URL its error names, ` <url>: `, else the last request to it),
///   no write is sent. With requests in flight
///   the server answers them in an order that is not the client's: only
///   the refused request's siblings may follow it, the same method and
///   path (the other requests of its bulk step, in flight when it was
///   refused). This is where the campaign's open case of the last session
///   came from: two VLAN POSTs in flight, one answered over the size limit,
///   its sibling answered after it (the client had sent it first).
fn push_log_holds(
    pushed: &[Answered],
    shown: Option<&str>,
    base: &str,
    concurrency: usize,
) -> Result<(), String> {
    // A GraphQL query is a POST that reads (Nautobot's GraphQL API).
    let write = |x: &Answered| x.0 != "GET" && !x.1.starts_with("/api/graphql/");
    if concurrency == 1
        && let Some(w) = pushed
            .windows(2)
            .find(|w| write(&w[0]) && w[0].2 >= 500 && write(&w[1]))
    {
        return Err(format!(
            "{} {} sent after the {} answer to the write {} {}",
            w[1].0, w[1].1, w[0].2, w[0].0, w[0].1
        ));
    }
    let Some(shown) = shown else {
        return Ok(());
    };
    // Refused on the read after a phase's writes (the phase's first
    // endpoint is named): no write may follow the last read.
    if shown.contains("reading back shows them missing or different") {
        let last = pushed.iter().rposition(|x| !write(x)).unwrap_or(0);
        return match pushed[last..].iter().find(|x| write(x)) {
            Some(w) => Err(format!(
                "{} {} sent after the read that refused the push ({shown})",
                w.0, w.1
            )),
            None => Ok(()),
        };
    }
    let named = |x: &Answered| shown.contains(&format!(" {base}{}: ", x.1));
    let Some(bad) = (pushed.iter())
        .rposition(|x| named(x) && (x.3 || x.2 >= 400))
        .or_else(|| pushed.iter().rposition(named))
    else {
        // A refusal of what the push read (a conflict, a read-back that
        // differs), named by object: no request to match.
        return Ok(());
    };
    let refused = &pushed[bad];
    let sibling = |x: &Answered| concurrency > 1 && x.0 == refused.0 && x.1 == refused.1;
    match pushed[bad + 1..].iter().find(|x| write(x) && !sibling(x)) {
        Some(w) => Err(format!(
            "{} {} sent after the refused answer to {} {} ({shown})",
            w.0, w.1, refused.0, refused.1
        )),
        None => Ok(()),
    }
}

/// The EFLOPS 4x16 objects loaded once, the inventory and its plan.
fn sot_fixture() -> &'static (
    crate::sot_netbox::netbox_server::Db,
    planner::plan::Plan,
    BTreeSet<String>,
) {
    static F: std::sync::OnceLock<(
        crate::sot_netbox::netbox_server::Db,
        planner::plan::Plan,
        BTreeSet<String>,
    )> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let (db, inv) = crate::sot_netbox::loaded_eflops();
        let plan = planner::design::design(&inv, &planner::design::DesignOptions::default())
            .expect("the EFLOPS inventory designs")
            .plan()
            .clone();
        let mut names: BTreeSet<String> = (plan.switch_list.iter())
            .map(|s| s.physical.to_string())
            .collect();
        names.extend(plan.sub_node_list.iter().map(|s| s.server.to_string()));
        (db, plan, names)
    })
}

/// What an error of a source-of-truth call must hold, as the binary prints
/// it (the whole chain, `{:#}`): it names the server (`host`), an object
/// of the plan (`names`, or the escaped name a hostile server gave it, or
/// says the server sent none), and carries no control character but its
/// own line breaks.
fn sot_error_holds(
    step: &str,
    e: &(dyn std::error::Error + 'static),
    host: &str,
    names: &BTreeSet<String>,
) -> Result<(), String> {
    let mut shown = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        shown.push_str(&format!(": {c}"));
        cause = c.source();
    }
    let mut evil = EVIL_NAMES.iter().map(|n| planner::names::escape(n));
    if !shown.contains(host)
        && !names.iter().any(|n| shown.contains(n.as_str()))
        && !evil.any(|n| shown.contains(&n))
        && !shown.contains("the server sent no")
    {
        return Err(format!(
            "{step}: an error naming neither the URL nor an object: {shown:?}"
        ));
    }
    if let Some(c) = shown.chars().find(|c| c.is_control() && *c != '\n') {
        return Err(format!(
            "{step}: control character {c:?} in the error: {shown:?}"
        ));
    }
    Ok(())
}

/// The NetBox test server of [`sot_served`], a client of it, and the log of
/// every answer it sent, in order.
pub(crate) struct Served {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) url: String,
    pub(crate) client: provisioner::sot::Client,
    pub(crate) log: std::sync::Arc<std::sync::Mutex<Vec<Answered>>>,
    pub(crate) nb: std::sync::Arc<std::sync::Mutex<crate::sot_netbox::netbox_server::NetBox>>,
    _dir: tempfile::TempDir,
}

/// The NetBox test server holding the EFLOPS 4x16 objects, answering
/// through `spoil` (given each request's method, absolute URL, status and
/// honest answer; `Some` is sent instead), and a client of it with the
/// campaign's small limits (20 pages, 1 MiB a body, 2 tries, a 5 s
/// timeout) and `concurrency` requests of a bulk step in flight, speaking
/// `flavor` (a Nautobot client is answered by `spoil` alone).
pub(crate) fn sot_served(
    spoil: impl Fn(&str, &str, u16, &serde_json::Value) -> Option<(u16, Vec<u8>)>
    + Send
    + Sync
    + 'static,
    concurrency: usize,
    flavor: provisioner::sot::Flavor,
) -> Result<Served, String> {
    use provisioner::sot::{Client, Limits, Settings, TokenSource};
    use std::sync::{Arc, Mutex};

    use crate::sot_netbox::{V1, netbox_server};

    let (db, _, _) = sot_fixture();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut nb = netbox_server::NetBox::new();
    nb.db = db.clone();
    nb.v1.push(V1.to_string());
    let log: Arc<Mutex<Vec<Answered>>> = Arc::default();
    let base = Arc::new(Mutex::new(String::new()));
    let (l, b) = (log.clone(), base.clone());
    nb.spoil = Some(Arc::new(
        move |method: &str, uri: &str, status: u16, v: &serde_json::Value| {
            let url = format!("{}{uri}", b.lock().ok()?.as_str());
            let out = spoil(method, &url, status, v);
            let shown = out.as_ref().map_or(status, |o| o.0);
            if let Ok(mut l) = l.lock() {
                l.push((method.to_string(), uri.to_string(), shown, out.is_some()));
            }
            out
        },
    ));
    let nb = Arc::new(Mutex::new(nb));
    let url = rt.block_on(netbox_server::serve(nb.clone()));
    *base.lock().map_err(|e| e.to_string())? = url.clone();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{V1}\n")).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| e.to_string())?;
    }
    let client = Client::new(&Settings {
        flavor,
        url: format!("{url}/api"),
        token: TokenSource::File(token),
        ca_file: None,
        limits: Limits {
            page_size: 100,
            max_pages: 20,
            max_body: 1 << 20,
            tries: 2,
            backoff: std::time::Duration::from_millis(5),
            timeout: std::time::Duration::from_secs(5),
            concurrency,
        },
    })
    .map_err(|e| format!("client: {e}"))?;
    Ok(Served {
        rt,
        url,
        client,
        log,
        nb,
        _dir: dir,
    })
}

/// Source-of-truth answers (issue 31): the NetBox test server holding the
/// EFLOPS 4x16 inventory answers each request honestly or, one time in
/// four, with a hostile answer ([`hostile_sot_answer`]); the real clients
/// of `sot import`, `sot cabling` and `sot push` run against it, with
/// small limits (20 pages, 1 MiB a body). Every call must end within
/// [`CALL_LIMIT`] with a value or an error, never a panic; an error must
/// name the server's URL or an object of the plan, and carry no control
/// character but its own line breaks; and after a push fails on a spoiled
/// or refused answer, it must not have sent any write.
fn sot_answer_case(seed: u64) -> Result<(), String> {
    use provisioner::sot::cabling::CablingOptions;
    use provisioner::sot::push::PushOptions;
    use std::sync::Mutex;

    use crate::sot_netbox::{SITE, import_opts};

    let (_, plan, names) = sot_fixture();
    // One case in three has requests in flight at once, as pushes run by
    // default; the others one at a time, where the server's log is the
    // order of the client's decisions ([`push_log_holds`]).
    let concurrency = if seed.is_multiple_of(3) { 3 } else { 1 };
    let answers = Mutex::new(Rng::new(seed ^ 0x50_7a));
    let Served {
        rt,
        url,
        client,
        log,
        ..
    } = sot_served(
        move |_: &str, url: &str, _: u16, v: &serde_json::Value| {
            answers
                .lock()
                .ok()
                .and_then(|mut r| hostile_sot_answer(v, url, &mut r))
        },
        concurrency,
        provisioner::sot::Flavor::Netbox,
    )?;
    let host = url.trim_start_matches("http://").to_string();
    // The error as the binary prints it: the whole chain (`{:#}`).
    let judge =
        |step: &str, e: &(dyn std::error::Error + 'static)| sot_error_holds(step, e, &host, names);
    let outcome = guarded(|| {
        rt.block_on(async {
            use tokio::time::timeout;
            let opts = import_opts();
            match timeout(CALL_LIMIT, provisioner::sot::import::fetch(&client, &opts)).await {
                Err(_) => return Err(format!("import took more than {CALL_LIMIT:?}")),
                Ok(Err(e)) => judge("import", &e)?,
                Ok(Ok(snap)) => {
                    if let Err(e) = provisioner::sot::import::inventory_toml(&snap, &opts, "netbox")
                    {
                        judge("import", &e)?;
                    }
                }
            }
            let copts = CablingOptions {
                status: Some("planned".to_string()),
                location: Some(SITE.to_string()),
            };
            match timeout(
                CALL_LIMIT,
                provisioner::sot::cabling::fetch(&client, &copts),
            )
            .await
            {
                Err(_) => return Err(format!("cabling took more than {CALL_LIMIT:?}")),
                Ok(Err(e)) => judge("cabling", &e)?,
                Ok(Ok(snap)) => {
                    let _ = provisioner::sot::cabling::observed(client.base(), &snap, "netbox");
                }
            }
            let popts = PushOptions {
                location: Some(SITE.to_string()),
                switch_role: "fabric-switch".to_string(),
                dry_run: false,
                batch: 100,
            };
            let from = log.lock().map_err(|e| e.to_string())?.len();
            let shown = match timeout(
                CALL_LIMIT,
                provisioner::sot::push::push(&client, plan, &popts, &mut |_| {}),
            )
            .await
            {
                Err(_) => return Err(format!("push took more than {CALL_LIMIT:?}")),
                Ok(Ok(_)) => None,
                Ok(Err(e)) => {
                    judge("push", &e)?;
                    Some(e.to_string())
                }
            };
            let l = log.lock().map_err(|e| e.to_string())?;
            push_log_holds(&l[from.min(l.len())..], shown.as_deref(), &url, concurrency)
                .map_err(|p| format!("push (concurrency {concurrency}): {p}"))
        })
    });
    outcome.map_err(|p| {
        let answers: Vec<String> = log
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|x| x.3)
                    .map(|x| format!("{} {} -> {}", x.0, x.1, x.2))
                    .collect()
            })
            .unwrap_or_default();
        format!("seed {seed}: {p}\nspoiled answers:\n{}", answers.join("\n"))
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_sot_answers(seed in any::<u64>()) {
        let r = sot_answer_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// A push against [`sot_served`] whose first answer to `POST
/// /api/ipam/vlans/` is `first` (the server applied the POST: the spoil
/// replaces only its answer), with `concurrency`; then a second push with
/// honest answers. Returns the first push's error, the requests the server
/// answered during it, and the VLANs the server holds after the second.
fn vlan_post_lost(
    first: (u16, Vec<u8>),
    concurrency: usize,
) -> (String, Vec<Answered>, Vec<String>, String) {
    use provisioner::sot::push::{PushOptions, push};
    use std::sync::Mutex;

    let once = Mutex::new(Some(first));
    let served = sot_served(
        move |method: &str, url: &str, _: u16, _: &serde_json::Value| {
            if method == "POST" && url.ends_with("/api/ipam/vlans/") {
                once.lock().ok()?.take()
            } else {
                None
            }
        },
        concurrency,
        provisioner::sot::Flavor::Netbox,
    )
    .unwrap();
    let (_, plan, _) = sot_fixture();
    let opts = PushOptions {
        location: Some(crate::sot_netbox::SITE.to_string()),
        switch_role: "fabric-switch".to_string(),
        dry_run: false,
        batch: 100,
    };
    let e = served
        .rt
        .block_on(push(&served.client, plan, &opts, &mut |_| {}))
        .expect_err("the lost answer stops the push");
    let pushed = served.log.lock().unwrap().clone();
    served
        .rt
        .block_on(push(&served.client, plan, &opts, &mut |_| {}))
        .expect("a second push reads what the first made and completes it");
    let vlans: Vec<String> = (served.nb.lock().unwrap().objects("ipam/vlans").iter())
        .filter_map(|v| v.get("name")?.as_str().map(str::to_string))
        .collect();
    (e.to_string(), pushed, vlans, served.url.clone())
}

/// The campaign's open case of the last session (issue #31, `FUZZ_CASES=1000`
/// at seed 0 found it again, as seed 6087473861421798827): with requests in
/// flight, the EFLOPS push's two VLAN POSTs went out together; the server
/// answered one over the client's size limit and the other after it. The
/// harness took the server's order for the client's and called the sibling
/// "a write after the refused answer". The client had sent nothing after
/// it; it only told the user to "ask for smaller pages", wrong for a write
/// the server had applied. Now: the error says the write may have been
/// applied and to push again, a second push creates only what is missing
/// (each VLAN once), and the harness allows the refused request's
/// in-flight siblings, nothing else.
#[test]
fn sot_push_vlan_post_answered_over_the_limit_is_not_sent_again_issue_31() {
    let big = format!(
        "{{\"count\": 0, \"results\": [], \"pad\": \"{}\"}}",
        "x".repeat(1_100_000)
    );
    let (e, pushed, vlans, base) = vlan_post_lost((200, big.into_bytes()), 2);
    assert!(
        e.contains(&format!(
            " {base}/api/ipam/vlans/: the answer is larger than 1048576 bytes"
        )) && e.contains("may have applied the write")
            && e.contains("run the push again"),
        "{e}"
    );
    // The sibling POST is in flight when the refused answer arrives only
    // if the client sent it first: on a loaded machine the refusal can
    // come before the client has sent it, and then it is never sent (a
    // fresh `.ci/run` saw 1). Either way nothing follows the refusal but
    // that sibling (`push_log_holds`), and the second push makes each VLAN
    // once.
    let posts = pushed
        .iter()
        .filter(|x| x.0 == "POST" && x.1 == "/api/ipam/vlans/")
        .count();
    assert!((1..=2).contains(&posts), "{pushed:?}");
    push_log_holds(&pushed, Some(&e), &base, 2).unwrap();
    let mut names = vlans.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), vlans.len(), "a VLAN made twice: {vlans:?}");
    assert_eq!(vlans.len(), 2, "{vlans:?}");
}

/// A POST answered 502 may have been applied (a proxy that lost the
/// backend's answer): the client does not send it again (it used to, as a
/// retry), stops the push saying so, and a second push completes it
/// without making anything twice.
#[test]
fn sot_push_vlan_post_answered_502_is_not_sent_again_issue_31() {
    let (e, pushed, vlans, base) = vlan_post_lost(
        (502, b"<html><body>502 Bad Gateway</body></html>".to_vec()),
        1,
    );
    assert!(
        e.contains(&format!(
            " {base}/api/ipam/vlans/: HTTP 502 Bad Gateway to a write, not sent again"
        )) && e.contains("may have applied the write"),
        "{e}"
    );
    let last = pushed.last().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1.as_str(), last.2),
        ("POST", "/api/ipam/vlans/", 502)
    );
    push_log_holds(&pushed, Some(&e), &base, 1).unwrap();
    let mut names = vlans.clone();
    names.sort();
    names.dedup();
    assert_eq!((names.len(), vlans.len()), (2, 2), "{vlans:?}");
}

/// The harness's rule ([`push_log_holds`]) on the logs it must tell apart.
#[test]
fn sot_push_log_rule_tells_siblings_from_writes_after_a_refusal_issue_31() {
    let base = "http://127.0.0.1:9";
    let at = |m: &str, p: &str, s: u16, spoiled: bool| (m.to_string(), p.to_string(), s, spoiled);
    let shown = format!("create vlan objects: {base}/api/ipam/vlans/: the answer is larger");
    let siblings = [
        at("GET", "/api/ipam/vlans/?limit=100", 200, false),
        at("POST", "/api/ipam/vlans/", 200, true),
        at("POST", "/api/ipam/vlans/", 201, false),
    ];
    assert!(push_log_holds(&siblings, Some(&shown), base, 2).is_ok());
    // One request at a time: the second POST was sent after the refusal.
    assert!(push_log_holds(&siblings, Some(&shown), base, 1).is_err());
    // Another step's write after the refused answer, whatever is in flight.
    let shown = format!("create vlan objects: {base}/api/ipam/vlans/: HTTP 400: no");
    let other = [
        at("POST", "/api/ipam/vlans/", 400, true),
        at("POST", "/api/ipam/prefixes/", 201, false),
    ];
    assert!(push_log_holds(&other, Some(&shown), base, 3).is_err());
    // A write after a write's 5xx, even when the push ends well.
    let resent = [
        at("POST", "/api/ipam/vlans/", 502, true),
        at("POST", "/api/ipam/vlans/", 201, false),
    ];
    assert!(push_log_holds(&resent, None, base, 1).is_err());
    // A GraphQL query is a read: sent again after a 503 (Nautobot).
    let query = [
        at("POST", "/api/graphql/", 503, true),
        at("POST", "/api/graphql/", 200, false),
    ];
    assert!(push_log_holds(&query, None, base, 1).is_ok());
    // A tolerated spoiled read, then writes, then a refusal elsewhere.
    let shown = format!("create vlan objects: {base}/api/ipam/vlans/: no answer");
    let tolerated = [
        at("GET", "/api/dcim/interfaces/?limit=100", 200, true),
        at("POST", "/api/ipam/prefixes/", 201, false),
        at("POST", "/api/ipam/vlans/", 200, false),
    ];
    assert!(push_log_holds(&tolerated, Some(&shown), base, 1).is_ok());
}

/// The EFLOPS objects of `snap` (NetBox's REST shapes, as `sot import`
/// reads them) as Nautobot's GraphQL API answers the import's query
/// (`DEVICE_FIELDS` in `sot/import.rs`): UUID ids; interface types as
/// graphene-django's enum names (`A_100GBASE_X_QSFP28`, read back by
/// `client::enum_value`); custom fields in `_custom_field_data`; each
/// device with its interfaces (their addresses under `ip_addresses`) and
/// its inventory items (`parent { id }`). These are the shapes the client
/// reads and the real-Nautobot round trip (`tests/it/sot.rs`, Nautobot
/// 3.2.7) holds it to; they were not recorded from a server.
pub(crate) fn nautobot_answer(snap: &provisioner::sot::import::Snapshot) -> serde_json::Value {
    use serde_json::{Value, json};
    let uuid = |v: &Value| match v {
        Value::Number(n) => json!(format!(
            "00000000-0000-4000-8000-{:012x}",
            n.as_u64().unwrap_or(0)
        )),
        _ => Value::Null,
    };
    let enum_name = |v: &Value| {
        let s = v.get("value").unwrap_or(v).as_str().unwrap_or("");
        let s = s.to_ascii_uppercase().replace('-', "_");
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            json!(format!("A_{s}"))
        } else {
            json!(s)
        }
    };
    let device = |d: &Value| {
        let interfaces: Vec<Value> = (snap.interfaces.iter())
            .filter(|i| i["device"]["id"] == d["id"])
            .map(|i| {
                let ips: Vec<Value> = (snap.ip_assignments.iter())
                    .filter(|a| a["interface"]["id"] == i["id"])
                    .map(|a| json!({"address": a["ip_address"]["address"]}))
                    .collect();
                json!({"id": uuid(&i["id"]), "name": i["name"], "type": enum_name(&i["type"]),
                       "speed": i["speed"], "mgmt_only": i["mgmt_only"],
                       "mac_address": i["mac_address"], "ip_addresses": ips})
            })
            .collect();
        let items: Vec<Value> = (snap.items.iter())
            .filter(|it| it["device"]["id"] == d["id"])
            .map(|it| {
                let parent = match &it["parent"] {
                    Value::Null => Value::Null,
                    // NetBox gives the parent's bare id.
                    p => json!({"id": uuid(p.get("id").unwrap_or(p))}),
                };
                json!({"id": uuid(&it["id"]), "name": it["name"], "part_id": it["part_id"],
                       "parent": parent, "_custom_field_data": it["custom_fields"]})
            })
            .collect();
        let rack = match &d["rack"] {
            Value::Null => Value::Null,
            r => json!({"name": r["name"]}),
        };
        json!({"id": uuid(&d["id"]), "name": d["name"],
               "device_type": {"model": d["device_type"]["model"]}, "rack": rack,
               "_custom_field_data": d["custom_fields"],
               "interfaces": interfaces, "inventory_items": items})
    };
    json!({"data": {
        "servers": snap.servers.iter().map(device).collect::<Vec<_>>(),
        "switches": snap.switches.iter().map(device).collect::<Vec<_>>(),
    }})
}

/// A server that answers `POST /api/graphql/` with `answer(url)` (bytes
/// and status) as Nautobot, and a Nautobot client of it.
fn nautobot_served(
    answer: impl Fn(&str) -> Option<(u16, Vec<u8>)> + Send + Sync + 'static,
) -> Result<Served, String> {
    sot_served(
        move |_: &str, url: &str, _: u16, _: &serde_json::Value| {
            if url.ends_with("/api/graphql/") {
                answer(url)
            } else {
                None
            }
        },
        1,
        provisioner::sot::Flavor::Nautobot,
    )
}

/// Nautobot-shaped answers (issue #31): `sot import` on Nautobot reads one
/// GraphQL answer ([`nautobot_answer`]), spoiled one time in four
/// ([`hostile_sot_answer`]: ids to other UUIDs, enum names, lists and
/// custom-field maps of the wrong type, escapes, over the size limit, no
/// JSON, a GraphQL `errors` list). The import must end within
/// [`CALL_LIMIT`], never panic, and refuse naming the URL or an object
/// ([`sot_error_holds`]).
fn sot_nautobot_case(seed: u64) -> Result<(), String> {
    use std::sync::Mutex;

    let (_, _, names) = sot_fixture();
    let honest = nautobot_answer(&crate::sot_import::snapshot());
    let answers = Mutex::new(Rng::new(seed ^ 0x4a_b0));
    let Served {
        rt, url, client, ..
    } = nautobot_served(move |url| {
        let mut r = answers.lock().ok()?;
        Some(
            hostile_sot_answer(&honest, url, &mut r)
                .unwrap_or_else(|| (200, honest.to_string().into_bytes())),
        )
    })?;
    let host = url.trim_start_matches("http://").to_string();
    let outcome = guarded(|| {
        rt.block_on(async {
            use tokio::time::timeout;
            let opts = crate::sot_netbox::import_opts();
            match timeout(CALL_LIMIT, provisioner::sot::import::fetch(&client, &opts)).await {
                Err(_) => Err(format!("import took more than {CALL_LIMIT:?}")),
                Ok(Err(e)) => sot_error_holds("import", &e, &host, names),
                Ok(Ok(snap)) => {
                    match provisioner::sot::import::inventory_toml(&snap, &opts, "nautobot") {
                        Err(e) => sot_error_holds("import", &e, &host, names),
                        Ok(_) => Ok(()),
                    }
                }
            }
        })
    });
    outcome.map_err(|p| format!("seed {seed}: {p}"))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_sot_nautobot_answers(seed in any::<u64>()) {
        let r = sot_nautobot_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// The honest Nautobot shapes of the campaign import as the NetBox ones
/// do: the same inventory, byte for byte (so the campaign starts from
/// answers the client reads right).
#[test]
fn sot_nautobot_shapes_import_the_same_inventory_issue_31() {
    let snap = crate::sot_import::snapshot();
    let honest = nautobot_answer(&snap).to_string().into_bytes();
    let served = nautobot_served(move |_| Some((200, honest.clone()))).unwrap();
    let opts = crate::sot_netbox::import_opts();
    let read = served
        .rt
        .block_on(provisioner::sot::import::fetch(&served.client, &opts))
        .unwrap();
    let toml = provisioner::sot::import::inventory_toml(&read, &opts, "a source").unwrap();
    let want = provisioner::sot::import::inventory_toml(&snap, &opts, "a source").unwrap();
    assert_eq!(toml, want);
    assert!(read.items.iter().all(|i| {
        i["url"]
            .as_str()
            .unwrap()
            .contains("/api/dcim/inventory-items/00000000-")
    }));
}

/// What a hostile Nautobot sends instead of its own recorded answer `v`
/// (one answer in three is spoiled): one time in two a spoiler of
/// Nautobot's shapes, else [`hostile_sot_answer`]'s. Nautobot's: an
/// object of a GraphQL list given twice; one object's UUID given to
/// another (a duplicate id, or an id of another kind); one UUID pointing
/// nowhere; cable terminations with a wrong end, connector or no
/// interface; a status, cable type or `_custom_field_data` of the wrong
/// shape.
fn hostile_nautobot_answer(
    v: &serde_json::Value,
    url: &str,
    rng: &mut Rng,
) -> Option<(u16, Vec<u8>)> {
    use serde_json::{Value, json};
    if !rng.chance(1, 3) {
        return None;
    }
    if rng.chance(1, 2) {
        let mut honest = Rng::new(rng.next_u64());
        // Spoiled for sure: `hostile_sot_answer` spoils one in four.
        for _ in 0..64 {
            if let Some(x) = hostile_sot_answer(v, url, &mut honest) {
                return Some(x);
            }
        }
        return None;
    }
    // Every id string and every list, as JSON pointers.
    fn places(v: &Value, at: String, ids: &mut Vec<String>, lists: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    if k == "id" && x.is_string() {
                        ids.push(p.clone());
                    }
                    places(x, p, ids, lists);
                }
            }
            Value::Array(a) => {
                if !a.is_empty() {
                    lists.push(at.clone());
                }
                for (i, x) in a.iter().enumerate() {
                    places(x, format!("{at}/{i}"), ids, lists);
                }
            }
            _ => {}
        }
    }
    let mut v = v.clone();
    let (mut ids, mut lists) = (Vec::new(), Vec::new());
    places(&v, String::new(), &mut ids, &mut lists);
    match rng.below(5) {
        0 if !lists.is_empty() => {
            let at = rng.pick(&lists).clone();
            if let Some(a) = v.pointer_mut(&at).and_then(Value::as_array_mut) {
                let i = rng.below(a.len());
                let copy = a[i].clone();
                a.insert(i, copy);
            }
        }
        1 if ids.len() > 1 => {
            let from = v
                .pointer(rng.pick(ids.as_slice()).as_str())
                .cloned()
                .unwrap_or(Value::Null);
            if let Some(x) = v.pointer_mut(rng.pick(ids.as_slice()).as_str()) {
                *x = from;
            }
        }
        2 if !ids.is_empty() => {
            let n = rng.next_u64() % 1_000_000;
            if let Some(x) = v.pointer_mut(rng.pick(ids.as_slice()).as_str()) {
                *x = json!(format!("5b0ff1ed-0000-4000-8000-{n:012x}"));
            }
        }
        3 => {
            let end = rng
                .pick(&[json!("a"), json!("C"), json!(""), json!(1)])
                .clone();
            let connector = rng
                .pick(&[json!(0), json!(u64::MAX), json!(-1), json!("1")])
                .clone();
            let none = rng.chance(1, 2);
            fn walk(v: &mut Value, f: &mut dyn FnMut(&str, &mut Value)) {
                match v {
                    Value::Object(m) => m.iter_mut().for_each(|(k, x)| {
                        f(k, x);
                        walk(x, f);
                    }),
                    Value::Array(a) => a.iter_mut().for_each(|x| walk(x, f)),
                    _ => {}
                }
            }
            walk(&mut v, &mut |k, x| match k {
                "cable_end" => *x = end.clone(),
                "connector" => *x = connector.clone(),
                "interface" if none => *x = Value::Null,
                _ => {}
            });
        }
        _ => {
            let shape = rng
                .pick(&[json!("Active"), json!({"id": null}), json!([]), json!(7)])
                .clone();
            fn walk(v: &mut Value, shape: &Value) {
                match v {
                    Value::Object(m) => m.iter_mut().for_each(|(k, x)| {
                        if matches!(
                            k.as_str(),
                            "status" | "cable_type" | "_custom_field_data" | "content_types"
                        ) {
                            *x = shape.clone();
                        } else {
                            walk(x, shape);
                        }
                    }),
                    Value::Array(a) => a.iter_mut().for_each(|x| walk(x, shape)),
                    _ => {}
                }
            }
            walk(&mut v, &shape);
        }
    }
    Some((200, v.to_string().into_bytes()))
}

/// Every id string of the honest recording's answers.
fn recorded_ids() -> &'static BTreeSet<String> {
    static IDS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        if k == "id"
                            && let Some(s) = x.as_str()
                        {
                            out.insert(s.to_string());
                        }
                        walk(x, out);
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut out = BTreeSet::new();
        for x in crate::sot_nautobot::recording() {
            walk(&x.answer, &mut out);
        }
        out
    })
}

/// The UUIDs (Nautobot's ids) in a request body.
fn uuids_in(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s)
            if s.len() == 36 && s.bytes().filter(|b| *b == b'-').count() == 4 =>
        {
            out.push(s.clone());
        }
        serde_json::Value::Object(m) => m.values().for_each(|x| uuids_in(x, out)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| uuids_in(x, out)),
        _ => {}
    }
}

/// What the campaign's second pushes covered: cases, second pushes
/// checked (the spoiled push stopped where the recording has a state),
/// and cases with a spoiled answer sent while other requests were in
/// flight. Printed on stderr every 100 cases (`--nocapture`).
struct SecondPushes {
    cases: std::sync::atomic::AtomicUsize,
    checked: std::sync::atomic::AtomicUsize,
    overlapped: std::sync::atomic::AtomicUsize,
}

impl SecondPushes {
    fn note(&self, checked: bool, overlapped: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        let n = self.cases.fetch_add(1, Relaxed) + 1;
        let c = self.checked.fetch_add(usize::from(checked), Relaxed) + usize::from(checked);
        let o =
            self.overlapped.fetch_add(usize::from(overlapped), Relaxed) + usize::from(overlapped);
        if n.is_multiple_of(100) {
            eprintln!(
                "fuzz_sot_nautobot_cabling_push: {n} cases, {c} honest second pushes checked, {o} with a spoiled answer while other requests were in flight"
            );
        }
    }
}

static SECOND_PUSHES: SecondPushes = SecondPushes {
    cases: std::sync::atomic::AtomicUsize::new(0),
    checked: std::sync::atomic::AtomicUsize::new(0),
    overlapped: std::sync::atomic::AtomicUsize::new(0),
};

/// Nautobot's own answers (issue #31), spoiled: the recording of a real
/// Nautobot 3.2.7 (`sot_nautobot.rs`: the breakout-200g leaf-spine
/// routed with eBGP) replayed, one answer in three replaced
/// ([`hostile_nautobot_answer`]), to the real clients of `sot cabling`
/// and `sot push` (four requests in flight, the recording's: a spoiled
/// answer may come while others are in flight). Every call
/// must end within [`CALL_LIMIT`] (the client's timeout is 5 s), never
/// panic; an error must name the server's URL or an object of the plan
/// and carry no control character ([`sot_error_holds`]); no write may
/// follow a refused answer ([`push_log_holds`]); and no write may carry
/// an id that is none of Nautobot's (a UUID no honest answer gave): a
/// spoiled read must not steer a write. Then a second push with honest
/// answers, on the state the first left (the replay applies each
/// recorded write it gets): no recorded write may be sent twice (an
/// object made twice), and when the first push stopped where the
/// recording has a state (before a phase, not half-way through one), the
/// second must succeed, send only recorded writes and leave every
/// recorded write made.
///
/// What this relies on: a push stopped half-way through a phase (a
/// spoiled answer to one write of a phase of several requests, about
/// 11 % of the cases) leaves a state the recording never was in, so its
/// second push is checked here only for "no write sent twice" and "no
/// write with an id no honest answer gave". That such a second push
/// finishes the job, leaving what an honest push leaves, is shown against
/// the real Nautobot instead, by
/// `sot_nautobot::sot_push_nautobot_spoiled_write_then_second_push_issue_31`
/// (CI: two cases) and `..._every_position_issue_31` (ignored: every
/// phase of several writes at its first, middle and last write, the
/// write not sent or made with its answer lost).
fn sot_nautobot_push_case(seed: u64) -> Result<(), String> {
    use std::sync::{Arc, Mutex};

    use crate::sot_nautobot as rec;

    let plan = rec::recorded_plan();
    let mut names: BTreeSet<String> = (plan.switch_list.iter())
        .map(|s| s.physical.to_string())
        .collect();
    names.extend(plan.sub_node_list.iter().map(|s| s.server.to_string()));
    let answers = Mutex::new(Rng::new(seed ^ 0x4e_a0));
    let spoil: Arc<rec::nautobot_replay::Spoil> =
        Arc::new(move |_: &str, url: &str, _: u16, v: &serde_json::Value| {
            let mut r = answers.lock().ok()?;
            hostile_nautobot_answer(v, url, &mut r)
        });
    let r = rec::replayed(
        &["push", "cabling"],
        Some(spoil),
        std::time::Duration::from_secs(5),
    );
    let host = r.url.trim_start_matches("http://").to_string();
    let judge =
        |step: &str, e: &provisioner::sot::SotError| sot_error_holds(step, e, &host, &names);
    let outcome = guarded(|| {
        r.rt.block_on(async {
            use tokio::time::timeout;
            match timeout(
                CALL_LIMIT,
                provisioner::sot::cabling::fetch(&r.client, &rec::cabling_options()),
            )
            .await
            {
                Err(_) => return Err(format!("cabling took more than {CALL_LIMIT:?}")),
                Ok(Err(e)) => judge("cabling", &e)?,
                Ok(Ok(snap)) => {
                    let _ = provisioner::sot::cabling::observed(r.client.base(), &snap, "nautobot");
                }
            }
            let from = r.replay.lock().map_err(|e| e.to_string())?.log.len();
            let shown = match timeout(
                CALL_LIMIT,
                provisioner::sot::push::push(&r.client, plan, &rec::push_options(), &mut |_| {}),
            )
            .await
            {
                Err(_) => return Err(format!("push took more than {CALL_LIMIT:?}")),
                Ok(Ok(_)) => None,
                Ok(Err(e)) => {
                    judge("push", &e)?;
                    Some(e.to_string())
                }
            };
            let log = r.replay.lock().map_err(|e| e.to_string())?.log.clone();
            let pushed = &log[from.min(log.len())..];
            let answered: Vec<Answered> = (pushed.iter())
                .map(|x| (x.0.clone(), x.1.clone(), x.2, x.3))
                .collect();
            push_log_holds(&answered, shown.as_deref(), &r.url, r.client.concurrency())
                .map_err(|p| format!("push: {p}"))?;
            let (stopped_in_recorded_state, second_from) = {
                let mut rp = r.replay.lock().map_err(|e| e.to_string())?;
                rp.honest();
                (rp.unrecorded_state == 0, rp.log.len())
            };
            // The second, honest push finishes the job from wherever the
            // spoiled one stopped: every recorded write made once.
            let second = timeout(
                CALL_LIMIT,
                provisioner::sot::push::push(&r.client, plan, &rec::push_options(), &mut |_| {}),
            )
            .await;
            let rp = r.replay.lock().map_err(|e| e.to_string())?;
            let log = rp.log.clone();
            if !rp.again.is_empty() {
                return Err(format!(
                    "writes sent again after they were applied (objects made twice): {:?}",
                    rp.again
                ));
            }
            let second_checked = stopped_in_recorded_state && rp.unrecorded_state == 0;
            if second_checked {
                match second {
                    Err(_) => return Err(format!("the second push took more than {CALL_LIMIT:?}")),
                    Ok(Err(e)) => {
                        return Err(format!("the honest second push failed: {e:#}"));
                    }
                    Ok(Ok(_)) => {}
                }
                if rp.applied.len() != rp.recorded_writes() {
                    return Err(format!(
                        "after the honest second push {} of the {} recorded writes are made",
                        rp.applied.len(),
                        rp.recorded_writes()
                    ));
                }
            }
            drop(rp);
            SECOND_PUSHES.note(second_checked, log[from.min(log.len())..].iter().any(|x| x.3 && x.6 > 1));
            for (i, x) in (log.iter().enumerate())
                .skip(from)
                .filter(|(_, x)| rec::nautobot_replay::writes(&x.0, &x.1))
            {
                if second_checked && !x.4 && i >= second_from {
                    return Err(format!(
                        "{} {} is a write the recording does not hold: {}",
                        x.0, x.1, x.5
                    ));
                }
                let mut ids = Vec::new();
                uuids_in(&x.5, &mut ids);
                if let Some(id) = ids.iter().find(|id| !recorded_ids().contains(*id)) {
                    return Err(format!(
                        "push: {} {} carries {id}, an id no honest answer gave (steered by a spoiled read): {}",
                        x.0, x.1, x.5
                    ));
                }
            }
            Ok(())
        })
    });
    outcome.map_err(|p| {
        let spoiled: Vec<String> = r
            .replay
            .lock()
            .map(|l| {
                (l.log.iter())
                    .filter(|x| x.3)
                    .map(|x| format!("{} {} -> {}", x.0, x.1, x.2))
                    .collect()
            })
            .unwrap_or_default();
        format!("seed {seed}: {p}\nspoiled answers:\n{}", spoiled.join("\n"))
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_sot_nautobot_cabling_push(seed in any::<u64>()) {
        let r = sot_nautobot_push_case(seed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// The EFLOPS push against [`sot_served`] (NetBox, one request at a time)
/// whose interface lists (with `read_back`, the read-backs by id instead)
/// are changed by `spoil` (given each page's `results`): the push's error (`None` when it went through) and the
/// writes it sent, `METHOD path`.
fn push_on_spoiled_interfaces(
    read_back: bool,
    spoil: impl Fn(&mut Vec<serde_json::Value>) + Send + Sync + 'static,
) -> (Option<String>, Vec<String>) {
    use provisioner::sot::push::{PushOptions, push};

    let served = sot_served(
        move |method: &str, url: &str, _: u16, v: &serde_json::Value| {
            if method != "GET"
                || !url.contains("/api/dcim/interfaces/?")
                || url.contains("brief=true&id=") != read_back
            {
                return None;
            }
            let mut v = v.clone();
            let r = v.get_mut("results")?.as_array_mut()?;
            spoil(r);
            Some((200, v.to_string().into_bytes()))
        },
        1,
        provisioner::sot::Flavor::Netbox,
    )
    .unwrap();
    let (_, plan, _) = sot_fixture();
    let opts = PushOptions {
        location: Some(crate::sot_netbox::SITE.to_string()),
        switch_role: "fabric-switch".to_string(),
        dry_run: false,
        batch: 100,
    };
    let e = match served
        .rt
        .block_on(push(&served.client, plan, &opts, &mut |_| {}))
    {
        Err(e) => Some(e.to_string()),
        Ok(r) if !r.diff.conflicts.is_empty() => Some(format!("conflicts: {:?}", r.diff.conflicts)),
        Ok(_) => None,
    };
    let writes = (served.log.lock().unwrap().iter())
        .filter(|x| x.0 != "GET")
        .map(|x| format!("{} {}", x.0, x.1))
        .collect();
    (e, writes)
}

/// A spoiled read the client accepts must not steer a write (issue #31):
/// NetBox answers whose interfaces share ids (every second one given the
/// first's id and URL), carry an id that is not the one in their URL
/// (pointing nowhere), or a URL of another kind (a device's) stop the
/// push before any write that carries an interface id (port modes,
/// cables, addresses), naming the interface, its id and URL; so do
/// answers spoiled consistently (an id pointing nowhere with its URL to
/// match, two ports' ids and URLs swapped), which only the read-back by
/// `id` catches, and spoiled read-back answers (an id missing, an id not
/// asked for, another kind's URL), naming the URL asked. The honest
/// answers do write interfaces (the test can fail).
#[test]
fn sot_push_netbox_spoiled_interface_ids_steer_no_write_issue_31() {
    use serde_json::json;

    let carries_interfaces = |w: &String| {
        w.contains("/api/dcim/interfaces/")
            || w.contains("/api/dcim/cables/")
            || w.contains("/api/ipam/ip-addresses/")
            || w.contains("/api/dcim/mac-addresses/")
    };
    let (e, writes) = push_on_spoiled_interfaces(false, |_| {});
    assert_eq!(e, None);
    assert!(
        writes
            .iter()
            .any(|w| w.starts_with("PATCH /api/dcim/interfaces/")),
        "{writes:?}"
    );
    type Spoiler = fn(&mut Vec<serde_json::Value>);
    // Switch ports only: a server's NIC given a wrong id makes its address
    // look assigned elsewhere, a conflict that writes nothing.
    fn switch_ports(r: &[serde_json::Value]) -> Vec<usize> {
        let (_, plan, _) = sot_fixture();
        let switch = |i: &serde_json::Value| {
            let d = i["device"]["name"].as_str().unwrap_or("");
            plan.switch_list.iter().any(|s| s.physical == d)
        };
        (0..r.len()).filter(|k| switch(&r[*k])).collect()
    }
    let twins: Spoiler = |r| {
        for w in switch_ports(r).chunks(2).filter(|w| w.len() == 2) {
            let (id, url) = (r[w[0]]["id"].clone(), r[w[0]]["url"].clone());
            r[w[1]]["id"] = id;
            r[w[1]]["url"] = url;
        }
    };
    let nowhere: Spoiler = |r| {
        for k in switch_ports(r) {
            r[k]["id"] = json!(r[k]["id"].as_u64().unwrap_or(0) + 1_000_000);
        }
    };
    let other_kind: Spoiler = |r| {
        for k in switch_ports(r) {
            let u =
                (r[k]["url"].as_str().unwrap_or("")).replace("/dcim/interfaces/", "/dcim/devices/");
            r[k]["url"] = json!(u);
        }
    };
    let nowhere_with_url: Spoiler = |r| {
        for k in switch_ports(r) {
            let id = r[k]["id"].as_u64().unwrap_or(0);
            let u = (r[k]["url"].as_str().unwrap_or(""))
                .replace(&format!("/{id}/"), &format!("/{}/", id + 1_000_000));
            r[k]["id"] = json!(id + 1_000_000);
            r[k]["url"] = json!(u);
        }
    };
    let swapped: Spoiler = |r| {
        for w in switch_ports(r).chunks(2).filter(|w| w.len() == 2) {
            for f in ["id", "url"] {
                let a = r[w[0]][f].clone();
                r[w[0]][f] = r[w[1]][f].clone();
                r[w[1]][f] = a;
            }
        }
    };
    let missing: Spoiler = |r| {
        r.pop();
    };
    let extra: Spoiler = |r| {
        if let Some(mut x) = r.first().cloned() {
            x["id"] = json!(x["id"].as_u64().unwrap_or(0) + 1_000_000);
            r.push(x);
        }
    };
    let back_other_kind: Spoiler = |r| {
        if let Some(x) = r.first_mut() {
            let u =
                (x["url"].as_str().unwrap_or("")).replace("/dcim/interfaces/", "/dcim/devices/");
            x["url"] = json!(u);
        }
    };
    const CHECK: &str = "the ids the push would write with do not match what it read";
    const BACK: &str = "the objects the push would write with are not what it read";
    for (what, read_back, spoil, first, says) in [
        (
            "twins",
            false,
            twins,
            CHECK,
            "which the interface list gave to 2 objects: interface ",
        ),
        (
            "nowhere",
            false,
            nowhere,
            CHECK,
            ", not at its own URL .../api/dcim/interfaces/",
        ),
        (
            "other kind",
            false,
            other_kind,
            CHECK,
            ", not at its own URL .../api/dcim/interfaces/",
        ),
        (
            "nowhere, with its URL",
            false,
            nowhere_with_url,
            BACK,
            "NetBox has no interface with this id (the list gave it to ",
        ),
        ("swapped", false, swapped, BACK, ", but it is "),
        (
            "read back without an id",
            true,
            missing,
            BACK,
            "NetBox has no interface with this id",
        ),
        (
            "read back with an id not asked for",
            true,
            extra,
            BACK,
            "but the push did not ask for it",
        ),
        (
            "read back at another kind's URL",
            true,
            back_other_kind,
            BACK,
            ", not at its own URL .../api/dcim/interfaces/",
        ),
    ] {
        let (e, writes) = push_on_spoiled_interfaces(read_back, spoil);
        let e = e.unwrap_or_else(|| panic!("{what}: the push went through: {writes:?}"));
        assert!(
            e.contains(first) && e.contains(says) && e.contains("/api/dcim/interfaces/"),
            "{what}: {e}"
        );
        if first == BACK {
            assert!(
                e.contains("read back with http://") && e.contains("/api/dcim/interfaces/?"),
                "{what}: {e}"
            );
        }
        let steered: Vec<&String> = writes.iter().filter(|w| carries_interfaces(w)).collect();
        assert!(steered.is_empty(), "{what}: {steered:?}");
    }
}
