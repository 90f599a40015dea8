//! Foreign engines in the lab: any command inside a sub-node's namespace under the host name of its server (`lab exec`), the launch agent Open MPI's rsh launcher calls to start its daemons there, and per-link byte counters read around a marked interval of any engine's run beside what `verify-ranks` predicts for a rank table (`lab measure`).
//!
//! # Host names
//!
//! A sub-node's namespace answers to the name of its server when the
//! server has one sub-node in the lab (the Kubernetes Node name
//! `provisioner submit` writes into its rankfile and hostfile when no node
//! map renames servers), else to `<server>-<slot>` (`node1-sn0`: a host
//! name cannot hold the `/` of a sub-node id). [`resolve`] also takes the
//! sub-node id, the namespace's name and the NIC's address. Commands run
//! in a UTS namespace of their own whose host name is that name
//! ([`super::sys::Sys::exec_as_command`]), so `gethostname(2)` inside
//! answers as the server would: Open MPI's `mpirun` recognises its own
//! node in a hostfile by it, and every daemon reports it.
//!
//! # The launch agent
//!
//! `mpirun` (Open MPI 4.1, `plm/rsh`) starts a daemon (`orted`) on every
//! other host of its hostfile by running its agent as it would run ssh:
//! `AGENT [ssh options] HOST COMMAND WORDS...`, where the words are one
//! shell command line (mpirun(1), "--mca plm_rsh_agent"; the options come
//! from `plm_rsh_args`). [`ssh_call`] reads such a call the way ssh(1)
//! does (options before the host, `-p PORT`, `-o OPTION` and the other
//! option letters that take a value skipped), and the agent runs the words
//! with `sh -c` in the host's namespace under its host name. The daemons
//! reach `mpirun` and each other over the lab's fabric: nothing runs in
//! the machine's own namespace.
//!
//! # Marks
//!
//! `lab measure -- COMMAND` listens on a Unix socket whose path it gives
//! the command in `EFLOPS_LAB_MARK` (and prints). The engine's rank 0
//! connects and writes one line per mark; at each mark the lab reads the
//! byte counters of every switch namespace and answers `go`, and the
//! engine goes on. Two marks bound the measured interval: an engine marks,
//! waits in a barrier (so that no rank starts before the counters are
//! read), runs the collective, waits in a barrier again and marks. A path
//! names the socket, so processes in every namespace of the machine reach
//! it (a network namespace does not hide the file system).
//!
//! What crossed each directed inter-switch link in the interval is set
//! beside the prediction for a rank table: for every step of the table's
//! schedule, the flows `verify-ranks` routes over the link times the
//! step's payload per flow times TCP's wire factor
//! ([`super::run::wire_factor`]). Per-step counts need the engine to stop
//! between steps, which a foreign engine does not do; the interval's
//! per-link bytes are the sum over its steps, and they match the
//! prediction link by link only when every step's flows took the links the
//! prediction gives them.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use planner::checked::CheckedPlan;
use planner::ranks::engine::Engine;
use planner::ranks::{Algorithm, step_link_loads};
use serde::Serialize;

use super::build;
use super::error::{Error, Result};
use super::run::{self, Counters, Ecmp};
use super::state::State;
use super::sys::Sys;

/// The environment variable that names the mark socket.
pub const MARK_ENV: &str = "EFLOPS_LAB_MARK";

/// A sub-node of the lab as a foreign engine sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// Index into the lab's hosts (the plan's sub-node order).
    pub index: usize,
    /// The sub-node's id (`node1/sn0`).
    pub sub_node: String,
    /// Its host name (see the module documentation).
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// Its NIC's address.
    pub address: String,
}

/// The host name of sub-node `i`: its server's name when the server has
/// one sub-node in the lab, else `<server>-<slot>`.
pub fn host_name(st: &State, i: usize) -> String {
    let h = &st.lab.hosts[i];
    let alone = st.lab.hosts.iter().filter(|o| o.server == h.server).count() == 1;
    if alone && !h.server.is_empty() {
        h.server.clone()
    } else {
        h.id.replace('/', "-")
    }
}

/// Every sub-node of the lab, in plan order.
pub fn hosts(st: &State) -> Vec<Host> {
    (0..st.lab.hosts.len())
        .map(|i| Host {
            index: i,
            sub_node: st.lab.hosts[i].id.clone(),
            name: host_name(st, i),
            namespace: st.host_ns(i),
            address: st.lab.hosts[i].address.clone(),
        })
        .collect()
}

/// The sub-node `name` names: its host name, sub-node id, namespace or
/// address.
pub fn resolve(st: &State, name: &str) -> Result<Host> {
    let all = hosts(st);
    if let Some(h) = all
        .iter()
        .find(|h| h.name == name || h.sub_node == name || h.namespace == name || h.address == name)
    {
        return Ok(h.clone());
    }
    let server_of_many = st.lab.hosts.iter().any(|h| h.server == name);
    let some: Vec<&str> = all.iter().take(4).map(|h| h.name.as_str()).collect();
    Err(Error::Unknown {
        what: format!("host `{}`", name.escape_debug()),
        message: if server_of_many {
            format!(
                "server {name} has several sub-nodes, each a namespace of its own with its own NIC; name one ({name}-sn0, ...): the lab has no namespace with all of a server's NICs"
            )
        } else {
            format!(
                "lab {} has no such host; its hosts are {}{} (`lab hosts` lists them with their sub-nodes, namespaces and addresses)",
                st.name,
                some.join(", "),
                if all.len() > some.len() { ", ..." } else { "" }
            )
        },
    })
}

/// The environment variable of `provisioner submit`'s `rank-env.sh` that
/// names the directory with the `node` file a worker pod writes.
pub const RUN_ENV: &str = "EFLOPS_RUN";

/// The directory that stands for `host`'s worker pod's `/var/run/eflops`:
/// `<state dir>/<lab>.run/hosts/<host name>`.
pub fn pod_run_dir(dir: &Path, st: &State, host: &Host) -> PathBuf {
    dir.join(format!("{}.run", st.name))
        .join("hosts")
        .join(&host.name)
}

/// The lab's `/etc/hosts`: every host name at its NIC's address (and
/// `localhost`), so that names resolve inside the lab from the file and
/// never wait for a name server the namespaces cannot reach.
pub fn hosts_file(st: &State) -> String {
    let mut text = String::from("127.0.0.1\tlocalhost\n");
    for h in hosts(st) {
        text.push_str(&format!("{}\t{}\n", h.address, h.name));
    }
    text
}

/// Runs `argv` in `host`'s namespace under its host name, with the lab's
/// [`hosts_file`] as its `/etc/hosts` and this process's standard input,
/// output and error, and returns how it ended.
/// As the worker pod of `provisioner submit`'s MPIJob writes its Node
/// name to `/var/run/eflops/node`, the lab writes the host name to the
/// `node` file of [`pod_run_dir`] and names that directory in
/// `EFLOPS_RUN`, which `rank-env.sh` reads.
pub fn exec(sys: &Sys, dir: &Path, st: &State, host: &Host, argv: &[String]) -> Result<ExitStatus> {
    if argv.is_empty() {
        return Err(Error::parameter(
            "command",
            "give the command to run after `--`",
        ));
    }
    sys.check_host_tools()?;
    let run = pod_run_dir(dir, st, host);
    std::fs::create_dir_all(&run)
        .map_err(|e| Error::io(format!("creating {}", run.display()), e))?;
    write_whole(&run.join("node"), &format!("{}\n", host.name))?;
    let etc = dir.join(format!("{}.run", st.name)).join("etc-hosts");
    write_whole(&etc, &hosts_file(st))?;
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut cmd = sys.exec_as_command(&host.namespace, &host.name, &etc, &args);
    cmd.env(RUN_ENV, &run);
    cmd.status().map_err(|e| {
        Error::io(
            format!("running `{}` in {}", argv.join(" "), host.namespace),
            e,
        )
    })
}

/// Writes `text` to `file` whole (a temporary file of this process
/// renamed over it), unless it holds `text` already: the agents of one
/// mpirun start at once, and a file renamed over while another agent
/// bind-mounts it is gone from under that mount (ENOENT).
fn write_whole(file: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(file).is_ok_and(|t| t == text) {
        return Ok(());
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| Error::io(format!("writing {}", file.display()), e))
}

/// ssh(1)'s option letters that take a value (OpenSSH 9.2, ssh(1)
/// SYNOPSIS): skipped with their value before the host.
const SSH_VALUE_OPTIONS: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Reads an ssh-style call `[OPTIONS] HOST WORDS...` as ssh(1) does: the
/// host and the command line (the words joined by spaces, for `sh -c`).
pub fn ssh_call(args: &[String]) -> Result<(String, String)> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) else {
            break;
        };
        i += 1;
        // `-p2222` carries its value; `-p 2222` takes the next word.
        let first = letters.chars().next().unwrap_or('-');
        if SSH_VALUE_OPTIONS.contains(first) && letters.len() == 1 {
            if args.get(i).is_none() {
                return Err(Error::parameter(
                    "ssh",
                    format!(
                        "option {a} has no value: the agent is called as ssh is, `[OPTIONS] HOST COMMAND...`"
                    ),
                ));
            }
            i += 1;
        }
    }
    let Some(host) = args.get(i) else {
        return Err(Error::parameter(
            "ssh",
            "no host: the agent is called as ssh is, `[OPTIONS] HOST COMMAND...`",
        ));
    };
    let words = &args[i + 1..];
    if words.is_empty() {
        return Err(Error::parameter(
            "ssh",
            format!("no command for host {host}: the agent runs a command, it opens no shell"),
        ));
    }
    Ok((host.clone(), words.join(" ")))
}

/// What the counters are set beside: a rank table, its algorithm and the
/// bytes every rank reduces.
#[derive(Debug, Clone)]
pub struct Expected {
    /// Rank -> index into the lab's hosts (the plan's sub-nodes).
    pub ranks: Vec<usize>,
    /// Its algorithm (the schedule `verify-ranks` routes).
    pub algorithm: Algorithm,
    /// The engine whose schedule of `algorithm` runs over the table (its
    /// fold, its ring order: `verify-ranks --engine`).
    pub engine: Engine,
    /// Bytes per rank of the measured allreduce.
    pub bytes: u64,
}

/// What `lab measure` was asked.
#[derive(Debug, Clone)]
pub struct MeasureOptions {
    /// The command, run in the machine's own namespace (usually `lab exec
    /// HOST -- mpirun ...`).
    pub command: Vec<String>,
    /// The prediction to set the counters beside.
    pub expected: Option<Expected>,
    /// Seed of the route model's ECMP choices.
    pub seed: u64,
    /// How switches choose among next hops (with `Model`, the flow between
    /// every two ranks of the expected table is pinned as the model routes
    /// it: [`all_pairs`]).
    pub ecmp: Ecmp,
    /// Seconds to wait for each mark, and for the command to end after
    /// the last one.
    pub timeout: u64,
    /// Share of a link's predicted bytes the measurement may differ by.
    pub tolerance: f64,
}

/// One directed inter-switch link over the measured interval.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredLink {
    /// `upper0->lower3`.
    pub link: String,
    /// Bytes that left by it between the two marks.
    pub bytes: u64,
    /// Bytes the prediction puts on it (wire bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_bytes: Option<u64>,
    /// Flows the prediction routes over it, step by step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predicted_flows: Vec<u32>,
    /// True when the bytes differ from the prediction by more than the
    /// tolerance.
    pub mismatch: bool,
}

/// What `lab measure` found.
#[derive(Debug, Clone, Serialize)]
pub struct MeasureReport {
    /// The lab's name.
    pub lab: String,
    /// The command as run.
    pub command: Vec<String>,
    /// Its exit code (`None` when a signal ended it).
    pub exit_code: Option<i32>,
    /// How switches chose among next hops.
    pub ecmp: Ecmp,
    /// Pinned (flow, switch) choices.
    pub pins: usize,
    /// Seconds between the two marks.
    pub seconds: f64,
    /// The expected table's algorithm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// The engine whose schedule of it was predicted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Engine>,
    /// Its ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
    /// Bytes per rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Wire bytes per payload byte of one flow.
    pub wire_factor: f64,
    /// Most flows the prediction puts on one directed inter-switch link in
    /// one step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_max_flows: Option<u32>,
    /// The tolerance used.
    pub tolerance: f64,
    /// Links whose bytes differ from the prediction.
    pub mismatches: usize,
    /// Every link that carried bytes or was predicted to.
    pub links: Vec<MeasuredLink>,
}

/// The mark socket of lab `st` in state directory `dir`.
pub fn mark_socket(dir: &Path, st: &State) -> PathBuf {
    dir.join(format!("{}.run", st.name)).join("mark.sock")
}

/// Runs `o.command` with the mark socket, reads the counters at its two
/// marks and sets them beside `o.expected`'s prediction on `plan` (the
/// plan the lab was built from).
pub fn measure(
    sys: &Sys,
    dir: &Path,
    st: &mut State,
    plan: &CheckedPlan,
    o: &MeasureOptions,
) -> Result<MeasureReport> {
    if o.command.is_empty() {
        return Err(Error::parameter(
            "command",
            "give the command to measure after `--`",
        ));
    }
    run::same_plan(st, plan)?;
    let net = plan
        .network()
        .map_err(|e| Error::planner("building the route model", e))?;
    // The engine's schedule over the table's ranks in the order its ring
    // visits them (rank order but for NCCL).
    let schedule = o
        .expected
        .as_ref()
        .map(|e| {
            check_table(st, e)?;
            let schedule = e
                .engine
                .schedule(e.algorithm, e.ranks.len())
                .map_err(|err| Error::planner("making the table's schedule", err))?;
            let visit: Vec<usize> = e
                .engine
                .ring_order(plan, &e.ranks)
                .into_iter()
                .map(|r| e.ranks[r])
                .collect();
            Ok::<_, Error>((schedule, visit))
        })
        .transpose()?;
    let pins = match (o.ecmp, &o.expected) {
        (Ecmp::Model, Some(e)) => {
            let flows = all_pairs(&e.ranks);
            let pins = st
                .lab
                .pins(&net, &flows, o.seed)
                .map_err(|err| Error::planner("routing the table's flows", err))?;
            build::install_pins(sys, dir, st, &pins)?;
            pins.len()
        }
        _ => {
            build::clear_pins(sys, dir, st)?;
            0
        }
    };
    let sock = mark_socket(dir, st);
    if let Some(parent) = sock.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    }
    let _ = std::fs::remove_file(&sock);
    let listener = UnixListener::bind(&sock)
        .map_err(|e| Error::io(format!("listening on {}", sock.display()), e))?;
    let result = marked(sys, st, &listener, &sock, o);
    let _ = std::fs::remove_file(&sock);
    let (status, before, after, seconds) = result?;

    let factor = run::wire_factor(run::lab_mtu(st));
    let mut predicted: BTreeMap<usize, (u64, Vec<u32>)> = BTreeMap::new();
    if let (Some(e), Some((s, visit))) = (&o.expected, &schedule) {
        let count = (e.bytes / 4) as usize;
        for (i, step) in s.steps.iter().enumerate() {
            let per_flow = step.largest_message(count) as u64 * 4;
            let loads = step_link_loads(&net, visit, step, o.seed)
                .map_err(|err| Error::planner("predicting the step's link loads", err))?;
            for (link, &flows) in loads.iter().enumerate() {
                let entry = predicted
                    .entry(link)
                    .or_insert_with(|| (0, vec![0; s.steps.len()]));
                entry.1[i] = flows;
                entry.0 += (f64::from(flows) * per_flow as f64 * factor).round() as u64;
            }
        }
    }
    // Bytes no flow of the prediction explains, below which a link
    // counts as idle: 2 % of the largest flow of the run (barriers and
    // acknowledgements stay far below it).
    let largest = o
        .expected
        .as_ref()
        .map_or(0.0, |e| e.bytes as f64 / 2.0 * factor);
    let slack = 0.02 * largest;
    let mut links = Vec::new();
    for (key, (id, label)) in run::link_names(st) {
        let bytes = after.sent_since(&before, &key);
        let (predicted_bytes, flows) = match predicted.get(&id) {
            Some((b, f)) => (Some(*b), f.clone()),
            None if o.expected.is_some() => (Some(0), Vec::new()),
            None => (None, Vec::new()),
        };
        let mismatch = predicted_bytes
            .is_some_and(|p| (bytes as f64 - p as f64).abs() > o.tolerance * p as f64 + slack);
        if bytes > slack as u64 || predicted_bytes.unwrap_or(0) > 0 {
            links.push(MeasuredLink {
                link: label,
                bytes,
                predicted_bytes,
                predicted_flows: if flows.iter().any(|&f| f > 0) {
                    flows
                } else {
                    Vec::new()
                },
                mismatch,
            });
        }
    }
    Ok(MeasureReport {
        lab: st.name.clone(),
        command: o.command.clone(),
        exit_code: status.code(),
        ecmp: o.ecmp,
        pins,
        seconds,
        algorithm: o
            .expected
            .as_ref()
            .map(|e| e.algorithm.as_str().to_string()),
        engine: o.expected.as_ref().map(|e| e.engine),
        ranks: o.expected.as_ref().map(|e| e.ranks.len()),
        bytes: o.expected.as_ref().map(|e| e.bytes),
        wire_factor: factor,
        predicted_max_flows: o.expected.as_ref().map(|_| {
            predicted
                .values()
                .flat_map(|(_, f)| f.iter().copied())
                .max()
                .unwrap_or(0)
        }),
        tolerance: o.tolerance,
        mismatches: links.iter().filter(|l| l.mismatch).count(),
        links,
    })
}

/// Every ordered pair of ranks as (source sub-node, destination sub-node,
/// flow id): pinned, they make any engine's traffic between two ranks of
/// the table take the route `verify-ranks` gives the flow between them,
/// whichever pairs the engine's schedule joins.
pub fn all_pairs(ranks: &[usize]) -> Vec<(usize, usize, u64)> {
    let mut flows = Vec::with_capacity(ranks.len() * ranks.len());
    for (s, &a) in ranks.iter().enumerate() {
        for (d, &b) in ranks.iter().enumerate() {
            if s != d {
                flows.push((a, b, planner::ranks::verify::flow_id(s, d)));
            }
        }
    }
    flows
}

/// Refuses a table with a rank outside the lab or two ranks on one
/// sub-node.
fn check_table(st: &State, e: &Expected) -> Result<()> {
    let mut seen = vec![false; st.lab.hosts.len()];
    for (r, &h) in e.ranks.iter().enumerate() {
        match seen.get_mut(h) {
            None => {
                return Err(Error::parameter(
                    "table",
                    format!(
                        "rank {r} is on sub-node {h}, which lab {} does not have",
                        st.name
                    ),
                ));
            }
            Some(true) => {
                return Err(Error::parameter(
                    "table",
                    format!(
                        "rank {r} shares sub-node {} with another rank: the lab runs one rank per sub-node (NIC)",
                        st.lab.hosts[h].id
                    ),
                ));
            }
            Some(s) => *s = true,
        }
    }
    if e.bytes < 4 * e.ranks.len() as u64 {
        return Err(Error::parameter(
            "bytes",
            format!(
                "{} bytes per rank: give at least 4 per rank ({} for {} ranks), as the allreduce of f32 elements moves them",
                e.bytes,
                4 * e.ranks.len(),
                e.ranks.len()
            ),
        ));
    }
    Ok(())
}

/// Starts the command, answers its two marks after reading the counters
/// and waits for it to end: (its status, counters at the first mark and
/// at the second, seconds between them).
fn marked(
    sys: &Sys,
    st: &State,
    listener: &UnixListener,
    sock: &Path,
    o: &MeasureOptions,
) -> Result<(ExitStatus, Counters, Counters, f64)> {
    let line = o.command.join(" ");
    // The command's output goes to standard error: standard output keeps
    // the report (JSON with --format json).
    let out = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| Error::io("duplicating standard error", e))?;
    let mut child = Command::new(&o.command[0])
        .args(&o.command[1..])
        .env(MARK_ENV, sock)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .process_group(0)
        .spawn()
        .map_err(|e| Error::io(format!("starting `{line}`"), e))?;
    let pgid = child.id();
    let stop = |child: &mut std::process::Child| {
        if let Some(pid) = rustix::process::Pid::from_raw(pgid as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
        let _ = child.wait();
    };
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("setting the mark socket non-blocking", e))?;
    let timeout = Duration::from_secs(o.timeout);
    let deadline = Instant::now() + timeout;
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(Error::Command {
                        command: line,
                        message: format!(
                            "{status} before it marked: an engine marks twice on the socket in ${MARK_ENV} (see its output above)"
                        ),
                    });
                }
                if Instant::now() > deadline {
                    stop(&mut child);
                    return Err(Error::Command {
                        command: line,
                        message: format!(
                            "no mark on {} within {} s: its rank 0 must connect to the socket in ${MARK_ENV} and write a line before and after what is measured; stopped it",
                            sock.display(),
                            o.timeout
                        ),
                    });
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => {
                stop(&mut child);
                return Err(Error::io("accepting on the mark socket", e));
            }
        }
    };
    let answer = |stream: &std::os::unix::net::UnixStream| -> Result<(Vec<Counters>, f64)> {
        stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_read_timeout(Some(timeout)))
            .map_err(|e| Error::io("the mark socket", e))?;
        let mut reader = BufReader::new(
            stream
                .try_clone()
                .map_err(|e| Error::io("the mark socket", e))?,
        );
        let mut writer = stream;
        let mut marks = Vec::new();
        let mut first = None;
        let mut seconds = 0.0;
        let mut text = String::new();
        while marks.len() < 2 {
            text.clear();
            let n = reader.read_line(&mut text).map_err(|e| {
                Error::io(
                    format!("waiting for mark {} on {}", marks.len() + 1, sock.display()),
                    e,
                )
            })?;
            if n == 0 {
                return Err(Error::Command {
                    command: line.clone(),
                    message: format!(
                        "it closed the mark socket after {} mark(s); a measured run marks twice, before and after what is measured",
                        marks.len()
                    ),
                });
            }
            marks.push(run::read_counters(sys, st)?);
            match first {
                None => first = Some(Instant::now()),
                Some(t) => seconds = t.elapsed().as_secs_f64(),
            }
            writer
                .write_all(b"go\n")
                .map_err(|e| Error::io("answering the mark", e))?;
        }
        Ok((marks, seconds))
    };
    let (mut marks, seconds) = match answer(&stream) {
        Ok(m) => m,
        Err(e) => {
            stop(&mut child);
            return Err(e);
        }
    };
    let end = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() > end => {
                stop(&mut child);
                return Err(Error::Command {
                    command: line,
                    message: format!(
                        "still running {} s after its last mark; stopped it",
                        o.timeout
                    ),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Error::io(format!("waiting for `{line}`"), e)),
        }
    };
    let after = marks.pop().unwrap_or_default();
    let before = marks.pop().unwrap_or_default();
    Ok((status, before, after, seconds))
}

/// The measurement as people read it.
pub fn render(r: &MeasureReport) -> String {
    use std::fmt::Write as _;

    use planner::text::Table;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab {}: `{}` exited {}, {:.3} s between its marks, {} pinned choices",
        r.lab,
        r.command.join(" "),
        r.exit_code
            .map_or("on a signal".to_string(), |c| format!("with {c}")),
        r.seconds,
        r.pins
    );
    if let (Some(a), Some(n), Some(b)) = (&r.algorithm, r.ranks, r.bytes) {
        let _ = writeln!(
            s,
            "beside verify-ranks for {a} on {n} ranks as {} runs it, {b} B per rank (most flows on one link in one step: {}; tolerance {:.0} %):",
            r.engine.unwrap_or_default(),
            r.predicted_max_flows.unwrap_or(0),
            r.tolerance * 100.0
        );
    }
    let mut t = Table::new([
        "link",
        "bytes",
        "predicted bytes",
        "flows per step",
        "differs",
    ])
    .right(&[1, 2]);
    for l in &r.links {
        t.row([
            l.link.clone(),
            l.bytes.to_string(),
            l.predicted_bytes.map_or("-".to_string(), |b| b.to_string()),
            if l.predicted_flows.is_empty() {
                "-".to_string()
            } else {
                l.predicted_flows
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            if l.mismatch { "yes" } else { "" }.to_string(),
        ]);
    }
    s.push_str(&t.render());
    if r.algorithm.is_some() {
        let _ = writeln!(
            s,
            "{}",
            if r.mismatches == 0 {
                "every link carried the bytes verify-ranks predicted".to_string()
            } else {
                format!(
                    "{} links differ from the prediction: the engine did not move what the table's schedule says",
                    r.mismatches
                )
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// The state of a lab of `plan` (a file of the workspace), as `lab up`
    /// writes it, without making anything.
    fn state(plan: &str) -> State {
        let file = format!("{}/../{plan}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&file).unwrap();
        let p = CheckedPlan::load(&text, plan).unwrap();
        State {
            version: super::super::state::VERSION,
            name: "t".to_string(),
            phase: "up".to_string(),
            plan_file: file,
            rate_kbit: 100_000,
            namespaces: Vec::new(),
            lab: planner::network::Lab::of(&p, plan).unwrap(),
            changed: Vec::new(),
            pins: Vec::new(),
            routing: Default::default(),
            frr_dirs: Vec::new(),
            mark: String::new(),
        }
    }

    #[test]
    fn hosts_answer_to_their_server_or_their_sub_node() {
        // One sub-node per server: the server's name, as submit's Nodes.
        let one = state("provisioner/tests/data/bigraph-2x8-1sn.plan.json");
        assert_eq!(host_name(&one, 0), "node01");
        for name in ["node01", "node01/sn0", "efl-t-h0", "10.0.0.5"] {
            assert_eq!(resolve(&one, name).unwrap().index, 0, "{name}");
        }
        let etc = hosts_file(&one);
        assert!(etc.starts_with("127.0.0.1\tlocalhost\n"), "{etc}");
        assert!(etc.contains("\n10.0.0.6\tnode02\n"), "{etc}");
        let e = resolve(&one, "node99").unwrap_err().to_string();
        assert!(
            e.contains("no such host") && e.contains("node01, node02"),
            "{e}"
        );

        // Two sub-nodes per server: each its own name; the server's name
        // alone says why it is not one host.
        let two = state("examples/data/bigraph-2x8.plan.json");
        assert_eq!(host_name(&two, 1), "node1-sn1");
        assert_eq!(resolve(&two, "node1-sn1").unwrap().sub_node, "node1/sn1");
        let e = resolve(&two, "node1").unwrap_err().to_string();
        assert!(e.contains("server node1 has several sub-nodes"), "{e}");
    }

    #[test]
    fn tables_with_a_rank_outside_the_lab_or_two_on_a_sub_node_are_refused() {
        let st = state("provisioner/tests/data/bigraph-2x8-1sn.plan.json");
        let table = |ranks: Vec<usize>, bytes| Expected {
            ranks,
            algorithm: Algorithm::Hdrm,
            engine: Engine::Probe,
            bytes,
        };
        assert!(check_table(&st, &table(vec![0, 1], 8)).is_ok());
        let e = check_table(&st, &table(vec![0, 16], 8))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 1 is on sub-node 16"), "{e}");
        let e = check_table(&st, &table(vec![3, 3], 8))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 1 shares sub-node node04/sn0"), "{e}");
        let e = check_table(&st, &table(vec![0, 1], 4))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 4 per rank"), "{e}");
    }

    #[test]
    fn ssh_calls_read_as_ssh_reads_them() {
        // What Open MPI 4.1's plm/rsh runs with the generated
        // plm_rsh_args "-p 2222 -o ConnectionAttempts=10".
        let (host, cmd) = ssh_call(&words(
            "-p 2222 -o ConnectionAttempts=10 node3 orted -mca ess \"env\" -mca ess_base_jobid \"123\"",
        ))
        .unwrap();
        assert_eq!(host, "node3");
        assert_eq!(cmd, "orted -mca ess \"env\" -mca ess_base_jobid \"123\"");
        let (host, cmd) = ssh_call(&words("-x -T -p2222 node4 true")).unwrap();
        assert_eq!((host.as_str(), cmd.as_str()), ("node4", "true"));
        for bad in ["", "-p", "-p 22", "node1", "-o X"] {
            assert!(ssh_call(&words(bad)).is_err(), "{bad:?}");
        }
    }
}
