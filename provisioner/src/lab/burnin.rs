//! The burn-in: rounds of disjoint flows that together put one flow on every directed inter-switch link, each measured alone on its links, and the links whose flows fall below a share of their planned rate.
//!
//! Rounds are planned from the lab's description alone ([`plan_rounds`]):
//! for every directed inter-switch link not yet covered, the shortest
//! path of switches that starts at a switch with sub-nodes, crosses the
//! link and ends at another switch with sub-nodes (on a BiGraph, the
//! cable itself: both its ends have sub-nodes); flows join the first round
//! where none of their links, and neither of their hosts' NIC cables in
//! that direction, is taken. Each flow is pinned to its path at every
//! switch. A flow is measured by the receiver (bytes from the first to the
//! last received, [`receive`]), and compared with its planned rate: the
//! slowest planned cable on its path, NIC cables included.
//!
//! A link is named when every flow that crossed it was slow: on a BiGraph
//! each link is crossed by one flow and a slow flow names exactly its
//! cable; on a multi-hop path a slow flow names all the links it alone
//! crossed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use planner::network::{Lab, Pin};
use serde::Serialize;

use super::build;
use super::error::{Error, Result};
use super::state::State;
use super::sys::{self, Sys};

/// A directed inter-switch link: the switch it leaves and the port.
pub type DirLink = (usize, u32);

/// One flow of the burn-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// Source sub-node (index into the lab's hosts).
    pub src: usize,
    /// Destination sub-node.
    pub dst: usize,
    /// The directed inter-switch links it takes, in order.
    pub path: Vec<DirLink>,
}

/// Plans the rounds of at most `max_flows` flows each: every directed
/// inter-switch link is on the path of one flow (or of more, when a path
/// must cross covered links to reach one that is not).
pub fn plan_rounds(lab: &Lab, max_flows: usize) -> Result<Vec<Vec<Flow>>> {
    let max_flows = max_flows.max(1);
    let n = lab.switches.len();
    // Directed adjacency: (switch) -> [(port, neighbour)].
    let mut out: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
    for c in &lab.cables {
        out[c.a].push((c.a_port, c.b));
        out[c.b].push((c.b_port, c.a));
    }
    for o in &mut out {
        o.sort();
    }
    let mut hosts_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, h) in lab.hosts.iter().enumerate() {
        hosts_of[h.switch].push(i);
    }
    let mut links: Vec<(DirLink, usize)> = Vec::new();
    for (s, o) in out.iter().enumerate() {
        for &(p, to) in o {
            links.push(((s, p), to));
        }
    }
    let mut covered: BTreeSet<DirLink> = BTreeSet::new();
    let mut rounds: Vec<Vec<Flow>> = Vec::new();
    // What each round has taken: directed links, sending and receiving hosts.
    let mut taken: Vec<(BTreeSet<DirLink>, BTreeSet<usize>, BTreeSet<usize>)> = Vec::new();
    for &((x, port), y) in &links {
        if covered.contains(&(x, port)) {
            continue;
        }
        // Head: the nearest switch with hosts that reaches x (x itself
        // when it has hosts), by a path that avoids y.
        let head = nearest(&out, &hosts_of, x, y, true).ok_or_else(|| unreachable(lab, x, y))?;
        let tail = nearest(&out, &hosts_of, y, x, false).ok_or_else(|| unreachable(lab, x, y))?;
        let mut path = head.1.clone();
        path.push((x, port));
        path.extend(tail.1.iter().copied());
        let (hs, ts) = (head.0, tail.0);
        if hs == ts {
            return Err(unreachable(lab, x, y));
        }
        // The first round where the path and a host pair are free.
        let mut placed = false;
        for (r, t) in taken.iter_mut().enumerate() {
            if rounds[r].len() >= max_flows || path.iter().any(|l| t.0.contains(l)) {
                continue;
            }
            let src = hosts_of[hs].iter().copied().find(|h| !t.1.contains(h));
            let dst = hosts_of[ts].iter().copied().find(|h| !t.2.contains(h));
            if let (Some(src), Some(dst)) = (src, dst) {
                t.0.extend(path.iter().copied());
                t.1.insert(src);
                t.2.insert(dst);
                rounds[r].push(Flow {
                    src,
                    dst,
                    path: path.clone(),
                });
                placed = true;
                break;
            }
        }
        if !placed {
            let (src, dst) = (hosts_of[hs][0], hosts_of[ts][0]);
            taken.push((
                path.iter().copied().collect(),
                BTreeSet::from([src]),
                BTreeSet::from([dst]),
            ));
            rounds.push(vec![Flow {
                src,
                dst,
                path: path.clone(),
            }]);
        }
        covered.extend(path);
    }
    Ok(rounds)
}

fn unreachable(lab: &Lab, x: usize, y: usize) -> Error {
    Error::Unknown {
        what: format!(
            "link {}->{}",
            lab.switches[x].name, lab.switches[y].name
        ),
        message: "no path from a switch with sub-nodes through it to another switch with sub-nodes; the burn-in cannot load it".to_string(),
    }
}

/// The nearest switch with hosts from `start` (breadth first, never
/// through `avoid`): backwards (a path from it to `start`) when
/// `backwards`, else forwards. Returns the switch and the directed links
/// of the path in travel order.
fn nearest(
    out: &[Vec<(u32, usize)>],
    hosts_of: &[Vec<usize>],
    start: usize,
    avoid: usize,
    backwards: bool,
) -> Option<(usize, Vec<DirLink>)> {
    if !hosts_of[start].is_empty() {
        return Some((start, Vec::new()));
    }
    // Cables are symmetric, so a path backwards is a path forwards with
    // each link read from its other end.
    let mut prev: BTreeMap<usize, (usize, u32)> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut seen = BTreeSet::from([start, avoid]);
    while let Some(s) = queue.pop_front() {
        for &(port, t) in &out[s] {
            if !seen.insert(t) {
                continue;
            }
            prev.insert(t, (s, port));
            if !hosts_of[t].is_empty() {
                // Walk back to start.
                let mut hops: Vec<(usize, u32, usize)> = Vec::new();
                let mut cur = t;
                while cur != start {
                    let (p, port) = prev[&cur];
                    hops.push((p, port, cur));
                    cur = p;
                }
                hops.reverse();
                let path = if backwards {
                    // Travel from t to start: each hop (p -> cur) taken as
                    // cur -> p, leaving cur by its port towards p.
                    hops.iter()
                        .rev()
                        .map(|&(p, _, cur)| (cur, port_to(out, cur, p)))
                        .collect()
                } else {
                    hops.iter().map(|&(p, port, _)| (p, port)).collect()
                };
                return Some((t, path));
            }
            queue.push_back(t);
        }
    }
    None
}

fn port_to(out: &[Vec<(u32, usize)>], from: usize, to: usize) -> u32 {
    out[from]
        .iter()
        .find(|&&(_, t)| t == to)
        .map_or(0, |&(p, _)| p)
}

/// What the burn-in found for one flow.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// Round, from 0.
    pub round: usize,
    /// Source sub-node id.
    pub src: String,
    /// Destination sub-node id.
    pub dst: String,
    /// The directed inter-switch links, `upper0->lower3`.
    pub links: Vec<String>,
    /// Planned rate of its path, kbit/s.
    pub expected_kbit: u64,
    /// Measured by the receiver, kbit/s.
    pub measured_kbit: u64,
    /// Measured over expected.
    pub ratio: f64,
    /// Below the threshold.
    pub slow: bool,
}

/// The burn-in's report.
#[derive(Debug, Clone, Serialize)]
pub struct BurnIn {
    /// The lab's name.
    pub lab: String,
    /// Seconds each flow ran.
    pub seconds: f64,
    /// Share of the planned rate below which a flow is slow.
    pub threshold: f64,
    /// Directed inter-switch links loaded.
    pub links: usize,
    /// Rounds.
    pub rounds: usize,
    /// Every flow.
    pub flows: Vec<Measured>,
    /// Cables with a slow direction that no fast flow crossed, as
    /// `A-B` with the slow directions.
    pub slow_cables: Vec<SlowCable>,
}

/// A cable the burn-in names.
#[derive(Debug, Clone, Serialize)]
pub struct SlowCable {
    /// `upper0-lower3`.
    pub cable: String,
    /// Its slow directions, `upper0->lower3`.
    pub directions: Vec<String>,
    /// The lowest ratio measured on it.
    pub worst_ratio: f64,
}

/// What `lab run --burn-in` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `provisioner` binary that runs the streams.
    pub exe: std::path::PathBuf,
    /// Seconds each flow runs.
    pub seconds: f64,
    /// Share of the planned rate below which a flow is slow.
    pub threshold: f64,
    /// Most flows at once.
    pub max_flows: usize,
    /// TCP port of the streams.
    pub port: u16,
}

/// Runs the burn-in on a lab that is up.
pub fn run(sys: &Sys, dir: &Path, st: &mut State, o: &Options) -> Result<BurnIn> {
    let (exe, seconds, threshold, max_flows, port) =
        (o.exe.as_path(), o.seconds, o.threshold, o.max_flows, o.port);
    if !(seconds > 0.0 && seconds <= 600.0) {
        return Err(Error::parameter(
            "seconds",
            "give 0.1 to 600 seconds per round",
        ));
    }
    if !(threshold > 0.0 && threshold < 1.0) {
        return Err(Error::parameter(
            "threshold",
            "give a share between 0 and 1, such as 0.7",
        ));
    }
    let rounds = plan_rounds(&st.lab, max_flows)?;
    // Pin every flow to its path at every switch.
    let mut pins = Vec::new();
    for f in rounds.iter().flatten() {
        for &(s, p) in &f.path {
            let Some(rp) = st.lab.switches[s].routed_ports.iter().find(|r| r.port == p) else {
                continue;
            };
            pins.push(Pin {
                switch: s,
                source: st.lab.hosts[f.src].address.clone(),
                destination: st.lab.hosts[f.dst].address.clone(),
                port: p,
                via: rp.peer_address.clone(),
            });
        }
    }
    pins.sort();
    pins.dedup();
    build::install_pins(sys, dir, st, &pins)?;
    let label = |&(s, p): &DirLink| -> String {
        let peer = st.lab.switches[s]
            .routed_ports
            .iter()
            .find(|r| r.port == p)
            .map_or("?", |r| st.lab.switches[r.peer].name.as_str());
        format!("{}->{}", st.lab.switches[s].name, peer)
    };
    let planned = |s: usize, p: u32| -> u64 {
        st.lab
            .cables
            .iter()
            .find(|c| (c.a == s && c.a_port == p) || (c.b == s && c.b_port == p))
            .map_or(u64::MAX, |c| st.scaled(c.gbps))
    };
    let mut flows = Vec::new();
    for (r, round) in rounds.iter().enumerate() {
        let rates = measure_round(sys, st, exe, round, seconds, port)?;
        for (f, kbit) in round.iter().zip(rates) {
            let expected = f
                .path
                .iter()
                .map(|&(s, p)| planned(s, p))
                .chain([
                    st.scaled(st.lab.hosts[f.src].gbps),
                    st.scaled(st.lab.hosts[f.dst].gbps),
                ])
                .min()
                .unwrap_or(0);
            let ratio = if expected > 0 {
                kbit as f64 / expected as f64
            } else {
                0.0
            };
            flows.push(Measured {
                round: r,
                src: st.lab.hosts[f.src].id.clone(),
                dst: st.lab.hosts[f.dst].id.clone(),
                links: f.path.iter().map(label).collect(),
                expected_kbit: expected,
                measured_kbit: kbit,
                ratio,
                slow: ratio < threshold,
            });
        }
    }
    build::clear_pins(sys, dir, st)?;
    // A link is named when every flow over it was slow.
    let mut verdict: BTreeMap<String, (bool, f64)> = BTreeMap::new();
    for f in &flows {
        for l in &f.links {
            let e = verdict.entry(l.clone()).or_insert((true, f64::INFINITY));
            e.0 &= f.slow;
            e.1 = e.1.min(f.ratio);
        }
    }
    let mut by_cable: BTreeMap<String, SlowCable> = BTreeMap::new();
    for (c, cable) in st.lab.cables.iter().enumerate() {
        let (a, b) = (
            &st.lab.switches[cable.a].name,
            &st.lab.switches[cable.b].name,
        );
        for dirn in [format!("{a}->{b}"), format!("{b}->{a}")] {
            if let Some(&(true, ratio)) = verdict.get(&dirn) {
                let e = by_cable.entry(st.cable_name(c)).or_insert(SlowCable {
                    cable: st.cable_name(c),
                    directions: Vec::new(),
                    worst_ratio: f64::INFINITY,
                });
                e.directions.push(dirn);
                e.worst_ratio = e.worst_ratio.min(ratio);
            }
        }
    }
    Ok(BurnIn {
        lab: st.name.clone(),
        seconds,
        threshold,
        links: verdict.len(),
        rounds: rounds.len(),
        flows,
        slow_cables: by_cable.into_values().collect(),
    })
}

/// Runs one round: a receiver in every destination's namespace, then a
/// sender in every source's; returns each flow's rate (kbit/s) as its
/// receiver measured it.
fn measure_round(
    sys: &Sys,
    st: &State,
    exe: &Path,
    round: &[Flow],
    seconds: f64,
    port: u16,
) -> Result<Vec<u64>> {
    let exe = exe.display().to_string();
    let secs = format!("{seconds}");
    let wait = format!("{}", seconds + 20.0);
    let mut receivers = Vec::new();
    for f in round {
        let bind = format!("{}:{port}", st.lab.hosts[f.dst].address);
        let mut cmd = sys.exec_command(
            &st.host_ns(f.dst),
            &[&exe, "lab", "stream", "--listen", &bind, "--seconds", &wait],
        );
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        receivers.push(
            cmd.spawn().map_err(|e| {
                Error::io(format!("starting a receiver in {}", st.host_ns(f.dst)), e)
            })?,
        );
    }
    let mut senders = Vec::new();
    for f in round {
        let to = format!("{}:{port}", st.lab.hosts[f.dst].address);
        let mut cmd = sys.exec_command(
            &st.host_ns(f.src),
            &[&exe, "lab", "stream", "--connect", &to, "--seconds", &secs],
        );
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        senders
            .push(cmd.spawn().map_err(|e| {
                Error::io(format!("starting a sender in {}", st.host_ns(f.src)), e)
            })?);
    }
    for (f, s) in round.iter().zip(senders) {
        let out = s
            .wait_with_output()
            .map_err(|e| Error::io("waiting for a sender", e))?;
        if !out.status.success() {
            return Err(Error::Command {
                command: format!(
                    "lab stream from {} to {}",
                    st.lab.hosts[f.src].id, st.lab.hosts[f.dst].id
                ),
                message: sys::tail(&out),
            });
        }
    }
    let mut rates = Vec::new();
    for (f, r) in round.iter().zip(receivers) {
        let out = r
            .wait_with_output()
            .map_err(|e| Error::io("waiting for a receiver", e))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let kbit = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("kbit=").and_then(|v| v.parse::<u64>().ok()));
        match (out.status.success(), kbit) {
            (true, Some(k)) => rates.push(k),
            _ => {
                return Err(Error::Command {
                    command: format!(
                        "lab stream receiver of {} from {}",
                        st.lab.hosts[f.dst].id, st.lab.hosts[f.src].id
                    ),
                    message: sys::tail(&out),
                });
            }
        }
    }
    Ok(rates)
}

/// Sends zeros to `to` for `seconds`, then closes.
pub fn send(to: &str, seconds: f64) -> std::io::Result<u64> {
    let addr = to
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other(format!("{to}: no address")))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stream = loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    };
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let buf = vec![0u8; 64 * 1024];
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut sent = 0u64;
    while Instant::now() < end {
        stream.write_all(&buf)?;
        sent += buf.len() as u64;
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    // Wait for the receiver to close, so every byte is counted.
    let mut sink = [0u8; 64];
    let _ = stream.read(&mut sink);
    Ok(sent)
}

/// Accepts one connection on `bind` (giving up after `seconds`) and
/// returns the bytes received and the rate from the first to the last
/// byte, in kbit/s.
pub fn receive(bind: &str, seconds: f64) -> std::io::Result<(u64, u64)> {
    let listener = TcpListener::bind(bind)?;
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no sender connected to {bind} in {seconds} s"),
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    };
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs_f64(seconds)))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    let mut first: Option<(Instant, u64)> = None;
    let mut last = Instant::now();
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let now = Instant::now();
        if first.is_none() {
            // The first read's bytes arrived before the clock started.
            first = Some((now, n as u64));
        }
        total += n as u64;
        last = now;
    }
    let _ = stream.write_all(b"done");
    let (start, head) = first.unwrap_or((last, 0));
    let secs = last.duration_since(start).as_secs_f64();
    let kbit = if secs > 0.0 {
        ((total - head) as f64 * 8.0 / 1000.0 / secs) as u64
    } else {
        0
    };
    Ok((total, kbit))
}

/// The burn-in as people read it.
pub fn render(b: &BurnIn) -> String {
    use std::fmt::Write as _;

    use planner::text::Table;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab {}: burn-in of {} directed inter-switch links in {} rounds, {} s per flow, slow below {:.0} % of the planned rate",
        b.lab,
        b.links,
        b.rounds,
        b.seconds,
        b.threshold * 100.0
    );
    let mut t = Table::new([
        "round",
        "from",
        "to",
        "planned (kbit/s)",
        "measured (kbit/s)",
        "ratio",
        "links",
        "",
    ])
    .right(&[0, 3, 4, 5]);
    for f in &b.flows {
        t.row([
            f.round.to_string(),
            f.src.clone(),
            f.dst.clone(),
            f.expected_kbit.to_string(),
            f.measured_kbit.to_string(),
            format!("{:.2}", f.ratio),
            f.links.join(" "),
            if f.slow { "SLOW" } else { "" }.to_string(),
        ]);
    }
    let _ = write!(s, "\n{}", t.render());
    if b.slow_cables.is_empty() {
        let _ = writeln!(
            s,
            "\nevery link carried at least {:.0} % of its planned rate",
            b.threshold * 100.0
        );
    } else {
        let _ = writeln!(s, "\nslow cables:");
        for c in &b.slow_cables {
            let _ = writeln!(
                s,
                "  {} ({}; worst {:.0} % of planned)",
                c.cable,
                c.directions.join(", "),
                c.worst_ratio * 100.0
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use planner::design::design;
    use planner::design::shorthand::{Shorthand, bigraph, fat_tree};

    fn lab_of(which: &str) -> Lab {
        let (inv, opts) = match which {
            "bigraph" => bigraph(4, 16, &Shorthand::default()).unwrap(),
            "fat-tree-2" => {
                fat_tree("tiers=2,sub-nodes=16,ports=8", &Shorthand::default()).unwrap()
            }
            _ => fat_tree("tiers=3,ports=4", &Shorthand::default()).unwrap(),
        };
        let plan = design(&inv, &opts).unwrap();
        Lab::of(&plan, "p.json").unwrap()
    }

    #[test]
    fn rounds_load_every_directed_link_with_disjoint_flows() {
        for which in ["bigraph", "fat-tree-2", "fat-tree-3"] {
            let lab = lab_of(which);
            for max in [1, 4, 16, 1000] {
                let rounds = plan_rounds(&lab, max).unwrap();
                let mut covered = BTreeSet::new();
                for round in &rounds {
                    assert!(
                        !round.is_empty() && round.len() <= max,
                        "{which}: {}",
                        round.len()
                    );
                    let mut links = BTreeSet::new();
                    let (mut senders, mut receivers) = (BTreeSet::new(), BTreeSet::new());
                    for f in round {
                        assert!(
                            senders.insert(f.src),
                            "{which}: a host sends twice in a round"
                        );
                        assert!(receivers.insert(f.dst), "{which}: a host receives twice");
                        assert_eq!(lab.hosts[f.src].switch, f.path[0].0);
                        for &l in &f.path {
                            assert!(links.insert(l), "{which}: link {l:?} twice in a round");
                            covered.insert(l);
                        }
                        // The path is connected and ends at the destination.
                        let mut at = lab.hosts[f.src].switch;
                        for &(s, p) in &f.path {
                            assert_eq!(s, at);
                            at = lab.switches[s]
                                .routed_ports
                                .iter()
                                .find(|r| r.port == p)
                                .unwrap()
                                .peer;
                        }
                        assert_eq!(at, lab.hosts[f.dst].switch);
                    }
                }
                assert_eq!(
                    covered.len(),
                    2 * lab.cables.len(),
                    "{which}: a link is never loaded"
                );
            }
        }
    }

    #[test]
    fn a_bigraph_burn_in_crosses_each_cable_once_per_direction() {
        let lab = lab_of("bigraph");
        let rounds = plan_rounds(&lab, 16).unwrap();
        let flows: Vec<&Flow> = rounds.iter().flatten().collect();
        assert_eq!(flows.len(), 2 * lab.cables.len());
        assert!(flows.iter().all(|f| f.path.len() == 1));
        assert_eq!(rounds.len(), 8);
    }
}
