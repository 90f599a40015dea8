//! A run in the lab: one collective engine (`provisioner probe`) per rank inside its sub-node's namespace, a timed run, and a counted run that reads every link's byte counters between steps and sets the flows it finds on each directed inter-switch link beside what `verify-ranks` predicts.
//!
//! # Counting flows from bytes
//!
//! In every step of ring and halving-doubling each flow carries the same
//! payload (the engine's own schedule says how much; see
//! [`crate::probe::schedule::actions`]). The counted run stops every rank
//! after every step (the engine's step barrier, [`crate::probe::stepsync`]),
//! reads the counters of every switch namespace, and divides the bytes
//! that left by each routed port by the bytes one flow put on the wire:
//! the step's payload per flow times the wire factor of TCP at the
//! lab's MTU ([`wire_factor`]: headers, and acknowledgements of a flow
//! the other way). The quotient is rounded to the nearest whole flow, so
//! retransmissions after drops (a few per cent of a congested link's
//! bytes) do not change the count while fewer than about ten flows share
//! a link. The hosts' own factor (what their NIC cables carried over what
//! they sent) is reported beside it; it exceeds the wire factor by what
//! was dropped and sent again.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use planner::checked::CheckedPlan;
use planner::network::{Lab, Network};
use planner::ranks::verify::flow_id;
use planner::ranks::{Algorithm, RankTable, Request, Schedule, plan_ranks, step_link_loads};
use serde::Serialize;

use super::build;
use super::error::{Error, Result};
use super::state::State;
use super::sys::{self, Sys};

/// How the lab's switches choose among equal-cost next hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ecmp {
    /// Every flow of the run is pinned where the route model's hash sends
    /// it, so the lab forwards as `verify-ranks` routes.
    Model,
    /// The kernel's own ECMP hash (5-tuple); where it differs from the
    /// model's, links differ from the prediction.
    Kernel,
}

/// What `lab run` was asked.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The algorithm (its rank table is made by the planner).
    pub algorithm: Algorithm,
    /// Ranks (default: every sub-node); any count the planner places,
    /// folded halving-doubling when it is not a power of two.
    pub ranks: Option<usize>,
    /// Sizes of the timed run, bytes per rank (empty: no timed run).
    pub sizes: Vec<u64>,
    /// Size of the counted run (`None`: no counted run).
    pub count_size: Option<u64>,
    /// Warm-up iterations of the timed run.
    pub warmup: usize,
    /// Timed iterations.
    pub iters: usize,
    /// Seed of the route model's ECMP choices.
    pub seed: u64,
    /// How switches choose among next hops.
    pub ecmp: Ecmp,
    /// The `provisioner` binary that runs the engine.
    pub exe: PathBuf,
    /// TCP port of every rank.
    pub port: u16,
    /// Seconds a rank may move no data, and to connect.
    pub timeout: u64,
}

/// One size of the timed run, from rank 0's report.
#[derive(Debug, Clone, Serialize)]
pub struct Timed {
    /// Bytes per rank.
    pub bytes: u64,
    /// Microseconds per allreduce.
    pub time_us: f64,
    /// Algorithm bandwidth, Gbps (the probe's JSON).
    pub algbw_gbps: f64,
    /// Bus bandwidth, Gbps.
    pub busbw_gbps: f64,
    /// Wrong elements found by the data check.
    pub wrong: Option<u64>,
}

/// One directed inter-switch link of a step.
#[derive(Debug, Clone, Serialize)]
pub struct LinkCount {
    /// `upper0->lower3`.
    pub link: String,
    /// Flows `verify-ranks` routes over it.
    pub predicted: u32,
    /// Flows counted from its bytes.
    pub measured: u32,
    /// Bytes that left by it in the step.
    pub bytes: u64,
}

/// One step of the counted run.
#[derive(Debug, Clone, Serialize)]
pub struct StepCount {
    /// Index within the iteration, from 0.
    pub step: usize,
    /// `reduce-scatter 2`.
    pub name: String,
    /// Flows of the step.
    pub flows: usize,
    /// Payload of one flow, bytes.
    pub payload: u64,
    /// Wire bytes per payload byte of one flow ([`wire_factor`]).
    pub wire_factor: f64,
    /// What the hosts' NIC cables carried over the payload the ranks sent
    /// in the step: above the wire factor when packets were dropped and
    /// sent again.
    pub host_factor: f64,
    /// Most flows on one directed inter-switch link, predicted.
    pub predicted_max: u32,
    /// Most flows on one directed inter-switch link, counted.
    pub measured_max: u32,
    /// Links whose count differs from the prediction.
    pub mismatches: usize,
    /// Every link that carried or was predicted to carry a flow.
    pub links: Vec<LinkCount>,
}

/// What `lab run` found.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The lab's name.
    pub lab: String,
    /// `ring`, `hd` or `hdrm`.
    pub algorithm: String,
    /// Ranks.
    pub ranks: usize,
    /// Sub-node of every rank.
    pub sub_nodes: Vec<String>,
    /// How switches chose among next hops.
    pub ecmp: Ecmp,
    /// Pinned (flow, switch) choices.
    pub pins: usize,
    /// Rate of the fastest NIC cable, kbit/s.
    pub rate_kbit: u64,
    /// The timed run.
    pub timed: Vec<Timed>,
    /// Bytes per rank of the counted run.
    pub count_size: Option<u64>,
    /// The counted run, step by step.
    pub steps: Vec<StepCount>,
}

/// Runs the engine on every rank of the table `opts.algorithm` gives on
/// `plan` (the plan the lab was built from).
pub fn run(
    sys: &Sys,
    dir: &Path,
    st: &mut State,
    plan: &CheckedPlan,
    o: &RunOptions,
) -> Result<RunReport> {
    same_plan(st, plan)?;
    let table = lab_table(plan, o.algorithm, o.ranks, o.seed)?;
    let ranks = table.ranks.clone();
    let schedule = table
        .schedule()
        .map_err(|e| Error::planner("making the schedule", e))?;
    let net = plan
        .network()
        .map_err(|e| Error::planner("building the route model", e))?;
    let pins = match o.ecmp {
        Ecmp::Model => {
            let flows = schedule_flows(&ranks, &schedule);
            let pins = st
                .lab
                .pins(&net, &flows, o.seed)
                .map_err(|e| Error::planner("routing the run's flows", e))?;
            build::install_pins(sys, dir, st, &pins)?;
            pins.len()
        }
        Ecmp::Kernel => {
            build::clear_pins(sys, dir, st)?;
            0
        }
    };
    let work = dir.join(format!("{}.run", st.name));
    std::fs::create_dir_all(&work)
        .map_err(|e| Error::io(format!("creating {}", work.display()), e))?;
    let hosts = work.join("hosts.csv");
    let mut text = String::from("rank,address\n");
    for (r, &sn) in ranks.iter().enumerate() {
        text.push_str(&format!("{r},{}:{}\n", st.lab.hosts[sn].address, o.port));
    }
    std::fs::write(&hosts, text)
        .map_err(|e| Error::io(format!("writing {}", hosts.display()), e))?;

    let mut timed = Vec::new();
    if !o.sizes.is_empty() {
        let sizes = list(&o.sizes);
        let args = vec![
            "--size".to_string(),
            sizes,
            "--warmup".to_string(),
            o.warmup.to_string(),
            "--iters".to_string(),
            o.iters.max(1).to_string(),
            // Every iteration filled and checked: the fill ends in a
            // barrier, so every timed allreduce starts with all ranks
            // together, as the simulator's does (back to back, without
            // it, ranks drift apart and HDRM at 4 MiB measured 1.6 times
            // slower; docs/lab.md).
            "--check".to_string(),
            "every".to_string(),
        ];
        let out = launch(sys, st, &ranks, o, &hosts, &args)?;
        timed = parse_timed(&out)?;
    }
    let mut steps = Vec::new();
    if let Some(size) = o.count_size {
        steps = counted(sys, st, &net, &ranks, &schedule, o, &hosts, &work, size)?;
    }
    Ok(RunReport {
        lab: st.name.clone(),
        algorithm: o.algorithm.as_str().to_string(),
        ranks: ranks.len(),
        sub_nodes: ranks.iter().map(|&s| st.lab.hosts[s].id.clone()).collect(),
        ecmp: o.ecmp,
        pins,
        rate_kbit: st.rate_kbit,
        timed,
        count_size: o.count_size,
        steps,
    })
}

/// The rank table of `algorithm` on `plan`, as `planner ranks` and
/// `provisioner submit` make it (one rank per NIC): EFLOPS Algorithm 1
/// or plan order where they apply, the planner's search for a rank count
/// that is not a power of two (its schedule then folds).
pub fn lab_table(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    seed: u64,
) -> Result<RankTable> {
    let request = Request {
        algorithm,
        ranks,
        seed,
        ..Request::default()
    };
    plan_ranks(plan, &request)
        .map(|o| o.table)
        .map_err(|e| Error::planner("making the rank table", e))
}

/// Refuses a plan that is not the one the lab was built from.
pub fn same_plan(st: &State, plan: &CheckedPlan) -> Result<()> {
    let lab = Lab::of(plan, plan.source()).map_err(|e| Error::Plan {
        file: plan.source().to_string(),
        source: Box::new(e),
    })?;
    if lab != st.lab {
        return Err(Error::parameter(
            "plan",
            format!(
                "{} is not the plan lab {} was built from ({}): run `provisioner lab down --name {}` and `lab up` again",
                plan.source(),
                st.name,
                st.plan_file,
                st.name
            ),
        ));
    }
    Ok(())
}

/// Every distinct flow of the schedule as (source sub-node, destination
/// sub-node, flow id).
fn schedule_flows(ranks: &[usize], schedule: &Schedule) -> Vec<(usize, usize, u64)> {
    let mut seen = std::collections::BTreeSet::new();
    for step in &schedule.steps {
        for (s, d) in step.flows() {
            seen.insert((s, d));
        }
    }
    seen.into_iter()
        .map(|(s, d)| (ranks[s], ranks[d], flow_id(s, d)))
        .collect()
}

/// `8388608,16777216`.
fn list(sizes: &[u64]) -> String {
    sizes
        .iter()
        .map(|s| format!("{s}B"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Starts every rank with `extra` flags, waits for all (killing the others
/// when one fails) and returns rank 0's standard output.
fn launch(
    sys: &Sys,
    st: &State,
    ranks: &[usize],
    o: &RunOptions,
    hosts: &Path,
    extra: &[String],
) -> Result<String> {
    let exe = o.exe.display().to_string();
    let hosts = hosts.display().to_string();
    let mut children: Vec<Child> = Vec::with_capacity(ranks.len());
    // Every run its own job secret, handed to the ranks in their
    // environment (docs/probe.md, "Authentication").
    let secret = crate::probe::Secret::generate()
        .map_err(|e| Error::io("making the run's job secret".to_string(), e))?;
    let token = String::from_utf8_lossy(secret.expose()).into_owned();
    for (r, &sn) in ranks.iter().enumerate() {
        let rank = r.to_string();
        let port = o.port.to_string();
        let timeout = o.timeout.to_string();
        let mut argv: Vec<&str> = vec![
            &exe,
            "probe",
            "--rank",
            &rank,
            "--hosts",
            &hosts,
            "--port",
            &port,
            "--algorithm",
            o.algorithm.as_str(),
            "--format",
            "json",
            "--timeout",
            &timeout,
            "--connect-timeout",
            &timeout,
        ];
        argv.extend(extra.iter().map(String::as_str));
        let mut cmd = sys.exec_command(&st.host_ns(sn), &argv);
        cmd.env(crate::probe::auth::ENV, &token);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match cmd.spawn() {
            Ok(c) => children.push(c),
            Err(e) => {
                for mut c in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(Error::io(format!("starting rank {r}"), e));
            }
        }
    }
    // Each rank's output is read on its own thread, so no pipe fills.
    let readers: Vec<_> = children
        .iter_mut()
        .map(|c| {
            let (mut out, mut err) = (c.stdout.take(), c.stderr.take());
            std::thread::spawn(move || {
                let (mut o, mut e) = (Vec::new(), Vec::new());
                if let Some(p) = out.as_mut() {
                    let _ = std::io::Read::read_to_end(p, &mut o);
                }
                if let Some(p) = err.as_mut() {
                    let _ = std::io::Read::read_to_end(p, &mut e);
                }
                (o, e)
            })
        })
        .collect();
    // The first rank to fail is the one reported (the others fail
    // because of it); the rest get a moment to stop on their own, then are
    // stopped, so a run with a dead rank ends in bounded time.
    let mut status: Vec<Option<std::process::ExitStatus>> = vec![None; children.len()];
    let mut first_failure: Option<usize> = None;
    let mut deadline: Option<Instant> = None;
    while status.iter().any(Option::is_none) {
        for (r, c) in children.iter_mut().enumerate() {
            if status[r].is_none()
                && let Ok(Some(s)) = c.try_wait()
            {
                status[r] = Some(s);
                if !s.success() && first_failure.is_none() {
                    first_failure = Some(r);
                    deadline = Some(Instant::now() + Duration::from_secs(3));
                }
            }
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            for (r, c) in children.iter_mut().enumerate() {
                if status[r].is_none() {
                    let _ = c.kill();
                    status[r] = c.wait().ok();
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut outputs = Vec::with_capacity(readers.len());
    for (r, h) in readers.into_iter().enumerate() {
        let (stdout, stderr) = h.join().map_err(|_| {
            Error::io(
                "reading a rank's output",
                std::io::Error::other("thread panicked"),
            )
        })?;
        let status = status[r].ok_or_else(|| {
            Error::io(
                format!("waiting for rank {r}"),
                std::io::Error::other("no exit status"),
            )
        })?;
        outputs.push(std::process::Output {
            status,
            stdout,
            stderr,
        });
    }
    if let Some(r) = first_failure {
        let sn = ranks[r];
        return Err(Error::Rank {
            rank: r,
            sub_node: st.lab.hosts[sn].id.clone(),
            namespace: st.host_ns(sn),
            message: sys::tail(&outputs[r]),
        });
    }
    Ok(outputs
        .into_iter()
        .next()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default())
}

/// The sizes of rank 0's JSON report.
fn parse_timed(out: &str) -> Result<Vec<Timed>> {
    let bad = |m: String| Error::io("reading rank 0's report", std::io::Error::other(m));
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| {
        bad(format!(
            "{e}: {}",
            out.chars().take(200).collect::<String>()
        ))
    })?;
    let results = v["results"]
        .as_array()
        .ok_or_else(|| bad("no `results`".to_string()))?;
    Ok(results
        .iter()
        .map(|r| Timed {
            bytes: r["bytes"].as_u64().unwrap_or(0),
            time_us: r["time_us"].as_f64().unwrap_or(f64::NAN),
            algbw_gbps: r["algbw_gbps"].as_f64().unwrap_or(f64::NAN),
            busbw_gbps: r["busbw_gbps"].as_f64().unwrap_or(f64::NAN),
            wrong: r["wrong"].as_u64(),
        })
        .collect())
}

/// Byte counters of one switch namespace: tx of routed ports, rx of
/// access ports.
#[derive(Debug, Clone, Default)]
pub(super) struct Counters {
    /// (switch, port) -> bytes sent.
    pub(super) tx: BTreeMap<(usize, u32), u64>,
    /// Bytes received from hosts, all access ports of all switches.
    pub(super) from_hosts: u64,
}

impl Counters {
    /// Bytes that left by (switch, port) since `before`.
    pub(super) fn sent_since(&self, before: &Counters, key: &(usize, u32)) -> u64 {
        self.tx
            .get(key)
            .copied()
            .unwrap_or(0)
            .saturating_sub(before.tx.get(key).copied().unwrap_or(0))
    }
}

/// Every directed inter-switch link where its bytes are read: the
/// (switch, port) it leaves by -> (its link id in the route model,
/// `a->b`).
pub(super) fn link_names(st: &State) -> BTreeMap<(usize, u32), (usize, String)> {
    let mut names = BTreeMap::new();
    for c in &st.lab.cables {
        let (a, b) = (&st.lab.switches[c.a].name, &st.lab.switches[c.b].name);
        names.insert((c.a, c.a_port), (c.link_ab, format!("{a}->{b}")));
        names.insert((c.b, c.b_port), (c.link_ba, format!("{b}->{a}")));
    }
    names
}

/// The payload of one flow in every step of `algorithm` over `world`
/// ranks of `count` f32 elements each, and the bytes all ranks send in
/// the step, from the engine's own schedule
/// ([`crate::probe::schedule::actions`]).
pub(super) fn step_payloads(
    algorithm: Algorithm,
    world: usize,
    count: usize,
    steps: usize,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut sent: Vec<u64> = vec![0; steps];
    let mut per_flow: Vec<u64> = vec![0; steps];
    for r in 0..world {
        let actions = crate::probe::schedule::actions(algorithm, world, r, count).map_err(|e| {
            Error::io(
                "the engine's schedule",
                std::io::Error::other(e.to_string()),
            )
        })?;
        for (i, a) in actions.iter().enumerate().take(steps) {
            if let Some((_, range)) = &a.send {
                let b = (range.len() * 4) as u64;
                sent[i] += b;
                per_flow[i] = per_flow[i].max(b);
            }
        }
    }
    Ok((per_flow, sent))
}

pub(super) fn read_counters(sys: &Sys, st: &State) -> Result<Counters> {
    let mut c = Counters::default();
    for (s, sw) in st.lab.switches.iter().enumerate() {
        let raw = sys.link_stats(&st.switch_ns(s))?;
        let v: serde_json::Value = serde_json::from_slice(&raw).map_err(|e| {
            Error::io(
                format!("reading the counters of {}", st.switch_ns(s)),
                std::io::Error::other(e),
            )
        })?;
        for link in v.as_array().into_iter().flatten() {
            let Some(port) = link["ifname"].as_str().and_then(super::port_number) else {
                continue;
            };
            let stats = &link["stats64"];
            // A physical switch's namespace (BGP) holds the ports of both
            // of its VLAN halves: each half counts its own.
            if sw.access_ports.contains(&port) {
                c.from_hosts += stats["rx"]["bytes"].as_u64().unwrap_or(0);
            } else if sw.routed_ports.iter().any(|r| r.port == port) {
                c.tx.insert((s, port), stats["tx"]["bytes"].as_u64().unwrap_or(0));
            }
        }
    }
    Ok(c)
}

/// The counted run: one iteration of `size` with the step barrier.
#[allow(clippy::too_many_arguments)]
fn counted(
    sys: &Sys,
    st: &State,
    net: &Network<'_>,
    ranks: &[usize],
    schedule: &Schedule,
    o: &RunOptions,
    hosts: &Path,
    work: &Path,
    size: u64,
) -> Result<Vec<StepCount>> {
    let sock = work.join("step.sock");
    let _ = std::fs::remove_file(&sock);
    let listener = UnixListener::bind(&sock)
        .map_err(|e| Error::io(format!("listening on {}", sock.display()), e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("setting the step socket non-blocking", e))?;
    // Payload per rank per step, from the engine's own schedule.
    let (per_flow, sent) = step_payloads(
        o.algorithm,
        ranks.len(),
        (size / 4) as usize,
        schedule.steps.len(),
    )?;
    let factor = wire_factor(lab_mtu(st));
    // Where each directed link's bytes are read: the port it leaves by.
    let link_name = link_names(st);
    let extra = vec![
        "--size".to_string(),
        format!("{size}B"),
        "--warmup".to_string(),
        "1".to_string(),
        "--iters".to_string(),
        "1".to_string(),
        "--check".to_string(),
        "off".to_string(),
        "--step-sync".to_string(),
        sock.display().to_string(),
    ];
    let st_ref = st;
    let steps = std::thread::scope(|scope| -> Result<Vec<StepCount>> {
        let runner = scope.spawn(|| launch(sys, st_ref, ranks, o, hosts, &extra));
        let deadline = Instant::now() + Duration::from_secs(o.timeout + 10);
        let stream = loop {
            match listener.accept() {
                Ok((s, _)) => break Some(s),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if runner.is_finished() || Instant::now() > deadline {
                        break None;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(Error::io("accepting rank 0 on the step socket", e)),
            }
        };
        let Some(stream) = stream else {
            runner
                .join()
                .map_err(|_| Error::io("a run", std::io::Error::other("thread panicked")))??;
            return Err(Error::io(
                "the counted run",
                std::io::Error::other("rank 0 never connected to the step socket"),
            ));
        };
        stream
            .set_nonblocking(false)
            .map_err(|e| Error::io("the step socket", e))?;
        // The warm-up iteration sets up the connections and moves the
        // same flows once; its last step gives the baseline, and only the
        // second iteration's steps are counted (no handshake, no data
        // check in them: only the step barrier's few bytes).
        let last_warm = schedule.steps.len().saturating_sub(1);
        let mut before: Option<Counters> = None;
        let mut reader = BufReader::new(
            stream
                .try_clone()
                .map_err(|e| Error::io("the step socket", e))?,
        );
        let mut writer = stream;
        let mut out = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader
                .read_line(&mut line)
                .map_err(|e| Error::io("reading the step socket", e))?;
            if n == 0 {
                break;
            }
            let point: serde_json::Value = serde_json::from_str(line.trim())
                .map_err(|e| Error::io("a step message", std::io::Error::other(e)))?;
            let i = point["step"].as_u64().unwrap_or(0) as usize;
            let name = point["name"].as_str().unwrap_or("").to_string();
            let counted = point["iteration"].as_u64() == Some(1);
            if !counted && i != last_warm {
                writer
                    .write_all(b"go\n")
                    .map_err(|e| Error::io("answering rank 0", e))?;
                continue;
            }
            let after = read_counters(sys, st_ref)?;
            if let (true, Some(step), Some(before)) = (counted, schedule.steps.get(i), &before) {
                let predicted = step_link_loads(net, ranks, step, o.seed)
                    .map_err(|e| Error::planner("predicting the step's link loads", e))?;
                let host_bytes = after.from_hosts.saturating_sub(before.from_hosts);
                let unit = per_flow[i] as f64 * factor;
                let mut links = Vec::new();
                for (key, (id, label)) in &link_name {
                    let bytes = after.sent_since(before, key);
                    let measured = if unit > 0.0 {
                        (bytes as f64 / unit).round() as u32
                    } else {
                        0
                    };
                    let p = predicted.get(*id).copied().unwrap_or(0);
                    if p > 0 || measured > 0 {
                        links.push(LinkCount {
                            link: label.clone(),
                            predicted: p,
                            measured,
                            bytes,
                        });
                    }
                }
                out.push(StepCount {
                    step: i,
                    name,
                    flows: step.flow_count(),
                    payload: per_flow[i],
                    wire_factor: factor,
                    host_factor: if sent[i] > 0 {
                        host_bytes as f64 / sent[i] as f64
                    } else {
                        0.0
                    },
                    predicted_max: links.iter().map(|l| l.predicted).max().unwrap_or(0),
                    measured_max: links.iter().map(|l| l.measured).max().unwrap_or(0),
                    mismatches: links.iter().filter(|l| l.predicted != l.measured).count(),
                    links,
                });
            }
            // Every rank waits at the barrier: the next step's bytes are
            // counted from this read.
            before = Some(after);
            writer
                .write_all(b"go\n")
                .map_err(|e| Error::io("answering rank 0", e))?;
        }
        runner
            .join()
            .map_err(|_| Error::io("a run", std::io::Error::other("thread panicked")))??;
        Ok(out)
    });
    let _ = std::fs::remove_file(&sock);
    steps
}

/// The smallest MTU of the lab's switches: what every flow's segments
/// fit.
pub(super) fn lab_mtu(st: &State) -> u32 {
    st.lab.switches.iter().map(|s| s.mtu).min().unwrap_or(1500)
}

/// Bytes a TCP flow puts on a link per byte of payload at `mtu`: each
/// segment of MTU - 52 payload bytes (IPv4 and TCP headers with
/// timestamps) is MTU + 14 bytes on the wire (Ethernet header, as the
/// kernel counts), and the acknowledgements of a flow that shares the
/// cable in the other direction add about one 66-byte frame per two
/// segments.
pub fn wire_factor(mtu: u32) -> f64 {
    let mss = f64::from(mtu.max(576) - 52);
    (f64::from(mtu.max(576)) + 14.0 + 33.0) / mss
}

/// The run as people read it.
pub fn render(r: &RunReport) -> String {
    use std::fmt::Write as _;

    use planner::text::Table;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab {}: {} on {} ranks, ECMP {}, {} pinned choices, NIC cables at {} kbit/s",
        r.lab,
        r.algorithm,
        r.ranks,
        match r.ecmp {
            Ecmp::Model => "as the route model (pinned)",
            Ecmp::Kernel => "by the kernel's hash",
        },
        r.pins,
        r.rate_kbit
    );
    if !r.timed.is_empty() {
        let mut t = Table::new([
            "size (B)",
            "time (us)",
            "algbw (Gbps)",
            "busbw (Gbps)",
            "#wrong",
        ])
        .right(&[0, 1, 2, 3, 4]);
        for x in &r.timed {
            t.row([
                x.bytes.to_string(),
                format!("{:.1}", x.time_us),
                format!("{:.4}", x.algbw_gbps),
                format!("{:.4}", x.busbw_gbps),
                x.wrong.map_or("-".to_string(), |w| w.to_string()),
            ]);
        }
        let _ = write!(s, "\n{}", t.render());
    }
    if let Some(size) = r.count_size {
        let _ = writeln!(
            s,
            "\nflows per directed inter-switch link, counted from link bytes ({size} B per rank) beside verify-ranks:"
        );
        let mut t = Table::new([
            "step",
            "name",
            "flows",
            "predicted max/link",
            "measured max/link",
            "links used",
            "mismatches",
        ])
        .right(&[0, 2, 3, 4, 5, 6]);
        for st in &r.steps {
            t.row([
                st.step.to_string(),
                st.name.clone(),
                st.flows.to_string(),
                st.predicted_max.to_string(),
                st.measured_max.to_string(),
                st.links
                    .iter()
                    .filter(|l| l.measured > 0)
                    .count()
                    .to_string(),
                st.mismatches.to_string(),
            ]);
        }
        s.push_str(&t.render());
        let bad: usize = r.steps.iter().map(|s| s.mismatches).sum();
        let _ = writeln!(
            s,
            "{}",
            if bad == 0 {
                "every link carried the flows verify-ranks predicted".to_string()
            } else {
                format!(
                    "{bad} link counts differ from the prediction (see --format json for each link)"
                )
            }
        );
    }
    s
}
