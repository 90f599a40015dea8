//! The lab's burn-in (`lab run --burn-in`): the rounds of `planner::network::burnin` run in the lab's namespaces, each flow pinned to its path at every switch and measured by its receiver (bytes from the first to the last received, [`receive`]) against its planned rate, the slowest planned cable on its path, NIC cables included.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use planner::network::Pin;
use planner::network::burnin::{BurnIn, Flow, path_gbps, plan_rounds, report};

use super::build;
use super::error::{Error, Result};
use super::state::State;
use super::sys::{self, Sys};

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
    let rounds = plan_rounds(&st.lab, max_flows)
        .map_err(|e| Error::planner("planning the burn-in's rounds", e))?;
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
    let mut rates = Vec::new();
    for round in &rounds {
        let got = measure_round(sys, st, exe, round, seconds, port)?;
        rates.push(got.into_iter().map(Some).collect());
    }
    build::clear_pins(sys, dir, st)?;
    // The shaped rate of the path: the lab's rates are the plan's speeds
    // scaled by one factor, so the slowest planned cable is the slowest.
    let expected = |f: &Flow| -> u64 { st.scaled(path_gbps(&st.lab, f)) };
    let name = format!("lab {}", st.name);
    Ok(report(
        &st.lab, &name, &rounds, &rates, &expected, seconds, threshold,
    ))
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
