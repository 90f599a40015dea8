//! The `frr` client: a Linux switch running FRRouting, driven with `vtysh` and `frr-reload.py` (package frr-pythontools), over transport `netns` (an FRR instance of the lab, `provisioner lab up --routing bgp`).
//!
//! - identity: the host name `show version` reports (the switch's system
//!   host name, or the configured `hostname`);
//! - load: keeps the candidate in the instance's run directory and returns
//!   what `frr-reload.py --test` would change, `-` lines removed and `+`
//!   lines added (each with its context lines, as frr-reload prints them):
//!   frr-reload compares FRR's own normalised form of both. FRR leaves
//!   lines at their default out of `show running-config` (with the
//!   datacenter profile: `no bgp ebgp-requires-policy`, BFD's 300 ms x 3),
//!   so frr-reload lists them as to add every time; the client records
//!   what frr-reload still lists right after a commit (the residue, beside
//!   the applied candidate) and reports no change when the same candidate
//!   meets the same residue;
//! - commit: saves `show running-config` as the rollback point (a file
//!   beside the candidate) and applies the candidate with
//!   `frr-reload.py --reload`, which removes what the candidate lacks
//!   (replace semantics). FRR has no confirm timer of its own
//!   (`native_timer = false`): the push's watchdog rolls back;
//! - observe: waits up to 15 s for the configured BGP sessions and BFD
//!   peers to come up (FRR applies asynchronously), then reads
//!   `show bgp vrf all summary json`, `show bfd peers json`,
//!   `show ip route vrf all json`, LLDP neighbours from `lldpctl -f json`
//!   (lldpd beside FRR), interface state from `ip -j link show`. A veth has
//!   no speed of its own, so speeds are not reported (not checked);
//! - confirm: `write memory` (the instance's `frr.conf`);
//! - rollback: `frr-reload.py --reload` of the rollback point.
//!
//! Transport `ssh` for FRR (a Linux switch elsewhere) is not offered: a
//! devices file with `vendor = "frr"` and `transport = "ssh"` is refused
//! with that message (docs/switch-push.md, "Limits of the FRR client").
//!
//! In the lab, commands run inside the switch's network namespace and in
//! the UTS namespace of its zebra (`nsenter --target <zebra pid> --net
//! --uts`), so that `vtysh` reports the switch's host name as the daemons
//! do.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::device::{
    BfdPeer, BgpSession, Commit, Connect, Device, Identity, Interface, LldpNeighbour, Observed,
    Opening, Route, Target, Transport,
};
use super::error::{PushError, Result};

/// Where frr-pythontools installs frr-reload.py.
const FRR_RELOAD: &str = "/usr/lib/frr/frr-reload.py";

/// Most time one command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A connected FRR switch.
#[derive(Debug)]
pub struct Frr {
    /// The plan's physical switch.
    switch: String,
    /// The namespace (and FRR instance) of a lab switch.
    netns: String,
    /// The loaded candidate's file, until commit or discard.
    candidate: Option<PathBuf>,
    /// The rollback point saved by `prepare`.
    prepared: Option<PathBuf>,
}

impl Connect for Frr {
    const TRANSPORTS: &'static [Transport] = &[Transport::Ssh, Transport::Netns];
    fn connect(target: &Target, _opening: &Opening<'_>) -> Result<Frr> {
        Frr::new(target)
    }
}

impl Frr {
    /// A client of `target`, which must use transport `netns`.
    pub fn new(target: &Target) -> Result<Frr> {
        match (target.transport, &target.netns) {
            (Transport::Netns, Some(ns)) if valid_instance(ns) => Ok(Frr {
                switch: target.switch.clone(),
                netns: ns.clone(),
                candidate: None,
                prepared: None,
            }),
            (Transport::Netns, Some(ns)) => Err(PushError::Parameter {
                parameter: "devices".to_string(),
                message: format!(
                    "switch {}: netns `{}` is not a lab namespace name (letters, digits and '-', as `lab devices` writes)",
                    target.switch,
                    ns.escape_debug()
                ),
            }),
            (Transport::Netns, None) => Err(PushError::Parameter {
                parameter: "devices".to_string(),
                message: format!(
                    "switch {}: transport netns needs netns = \"<namespace>\" (see `provisioner lab devices`)",
                    target.switch
                ),
            }),
            (other, _) => Err(PushError::Parameter {
                parameter: "devices".to_string(),
                message: format!(
                    "switch {}: vendor frr is reached over transport netns (the lab) only; transport {} is not supported for frr yet",
                    target.switch,
                    other.as_str()
                ),
            }),
        }
    }

    /// The instance's run directory (sockets, pid files, our files).
    fn run_dir(&self) -> PathBuf {
        PathBuf::from("/var/run/frr").join(&self.netns)
    }

    /// Runs `argv` in the switch (its namespace and its zebra's host name)
    /// and returns standard output; a failure is `Rejected` when
    /// `rejected` (the device refused what we gave it), else `Protocol`.
    async fn run(&self, action: &str, argv: Vec<String>, rejected: bool) -> Result<String> {
        let pid_file = self.run_dir().join("zebra.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
            .ok_or_else(|| PushError::Unreachable {
                address: format!("netns {}", self.netns),
                hint: format!(
                    "no FRR runs there ({} names no running zebra): is the lab up (`provisioner lab status`) with --routing bgp?",
                    pid_file.display()
                ),
                source: "zebra is not running".into(),
            })?;
        let action = action.to_string();
        let out = tokio::task::spawn_blocking(move || {
            let mut cmd = Command::new("nsenter");
            cmd.arg(format!("--target={pid}"))
                .args(["--net", "--uts", "--"])
                .args(&argv)
                .stdin(Stdio::null());
            run_with_timeout(cmd, COMMAND_TIMEOUT)
        })
        .await
        .map_err(|e| PushError::Io {
            action: action.clone(),
            source: std::io::Error::other(e),
        })?
        .map_err(|e| PushError::Io {
            action: format!("{action}: running nsenter"),
            source: e,
        })?;
        let Some(out) = out else {
            return Err(PushError::Timeout {
                action,
                seconds: COMMAND_TIMEOUT.as_secs(),
            });
        };
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let message = format!(
                "{}: {}",
                out.status,
                tail(&format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
            );
            return Err(if rejected {
                PushError::Rejected { message }
            } else {
                PushError::Protocol { action, message }
            });
        }
        Ok(stdout)
    }

    /// `vtysh -N <instance> -c <command>`.
    async fn vtysh(&self, command: &str) -> Result<String> {
        self.run(
            &format!("vtysh `{command}`"),
            vec![
                "vtysh".into(),
                "-N".into(),
                self.netns.clone(),
                "-c".into(),
                command.into(),
            ],
            false,
        )
        .await
    }

    /// `vtysh ... json`, parsed.
    async fn vtysh_json(&self, command: &str) -> Result<Value> {
        let text = self.vtysh(command).await?;
        serde_json::from_str(&text).map_err(|e| PushError::Protocol {
            action: format!("vtysh `{command}`"),
            message: format!("not JSON: {e}"),
        })
    }

    /// `frr-reload.py <mode> -N <instance> <file>`.
    async fn reload(&self, mode: &str, file: &std::path::Path, rejected: bool) -> Result<String> {
        self.run(
            &format!("frr-reload.py {mode}"),
            vec![
                FRR_RELOAD.into(),
                mode.into(),
                "--stdout".into(),
                "--log-level".into(),
                "error".into(),
                "-N".into(),
                self.netns.clone(),
                file.display().to_string(),
            ],
            rejected,
        )
        .await
    }
}

/// The last committed candidate, in the instance's run directory.
pub(crate) const APPLIED: &str = "applied.frr.conf";

/// What `frr-reload.py --test` still listed right after that commit.
pub(crate) const RESIDUE: &str = "applied.residue";

impl Frr {
    /// Forgets the applied candidate (a commit or rollback changes what
    /// runs).
    fn forget_applied(&self) {
        for f in [APPLIED, RESIDUE] {
            let _ = std::fs::remove_file(self.run_dir().join(f));
        }
    }
}

/// Lab namespace names only (`efl-<lab>-p<j>`): they become paths.
fn valid_instance(ns: &str) -> bool {
    !ns.is_empty()
        && ns.len() <= 64
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Runs `cmd`, killing it after `limit`; `None` when it was killed.
fn run_with_timeout(
    mut cmd: Command,
    limit: Duration,
) -> std::io::Result<Option<std::process::Output>> {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let r = child.wait_with_output();
        let _ = tx.send(());
        r
    });
    if rx.recv_timeout(limit).is_err() {
        // Only the child we started, by its id.
        let _ = Command::new("kill")
            .args(["-KILL", &id.to_string()])
            .status();
        let _ = waiter.join();
        return Ok(None);
    }
    waiter
        .join()
        .map_err(|_| std::io::Error::other("waiting for the command"))?
        .map(Some)
}

/// The last lines of a command's output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}

/// The diff in frr-reload.py's `--test` output: its "Lines To Delete"
/// with `-`, its "Lines To Add" with `+`; empty when both are empty.
/// frr-reload prints every line with its context lines (`interface swp1`
/// before each of its lines); a context line the diff just printed at the
/// same depth is not printed again.
pub(crate) fn reload_diff(text: &str) -> String {
    let mut out = String::new();
    let mut sign = None;
    // The last line printed at each depth (leading spaces).
    let mut path: Vec<String> = Vec::new();
    for line in text.lines() {
        match line.trim() {
            "Lines To Delete" => {
                sign = Some('-');
                path.clear();
                continue;
            }
            "Lines To Add" => {
                sign = Some('+');
                path.clear();
                continue;
            }
            _ => {}
        }
        if line.chars().all(|c| c == '=') && !line.is_empty() {
            continue;
        }
        let Some(s) = sign else { continue };
        let body = line.trim_end();
        if body.trim().is_empty() {
            continue;
        }
        let depth = body.len() - body.trim_start().len();
        if path.get(depth).is_some_and(|p| p == body) {
            continue;
        }
        path.truncate(depth);
        path.resize(depth, String::new());
        path.push(body.to_string());
        out.push(s);
        out.push_str(body);
        out.push('\n');
    }
    out
}

/// The host name in `show version` (`FRRouting 8.4.4 (sw1) on Linux...`).
pub(crate) fn version_hostname(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("FRRouting"))?;
    let open = line.find('(')?;
    let close = line[open..].find(')')? + open;
    let name = line[open + 1..close].trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// The BGP sessions of `show bgp vrf all summary json`:
/// `{vrf: {ipv4Unicast: {peers: {addr: {remoteAs, state}}}}}`.
pub(crate) fn bgp_sessions(v: &Value) -> Vec<BgpSession> {
    let mut out = Vec::new();
    for (vrf, body) in v.as_object().into_iter().flatten() {
        for (peer, p) in body["ipv4Unicast"]["peers"]
            .as_object()
            .into_iter()
            .flatten()
        {
            out.push(BgpSession {
                vrf: vrf.clone(),
                peer: peer.clone(),
                remote_as: p["remoteAs"].as_u64().and_then(|a| u32::try_from(a).ok()),
                established: p["state"].as_str() == Some("Established"),
                last_reset: None,
            });
        }
    }
    out
}

/// The BFD peers of `show bfd peers json`: `[{peer, vrf, status}]`.
pub(crate) fn bfd_peers(v: &Value) -> Vec<BfdPeer> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some(BfdPeer {
                vrf: p["vrf"].as_str().unwrap_or("default").to_string(),
                peer: p["peer"].as_str()?.to_string(),
                up: p["status"].as_str() == Some("up"),
            })
        })
        .collect()
}

/// The installed routes of `show ip route vrf all json`: either
/// `{prefix: [entry]}` (FRR 8 with one VRF) or `{vrf: {prefix: [entry]}}`;
/// only selected entries in the FIB, with their FIB next hops.
pub fn routes(v: &Value) -> Vec<Route> {
    let mut out = Vec::new();
    let mut add = |vrf: &str, prefix: &str, entries: &Value| {
        for e in entries.as_array().into_iter().flatten() {
            if e["selected"].as_bool() != Some(true) || e["installed"].as_bool() != Some(true) {
                continue;
            }
            let next_hops: Vec<String> = e["nexthops"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|h| h["fib"].as_bool() == Some(true))
                .filter_map(|h| h["ip"].as_str().map(str::to_string))
                .collect();
            out.push(Route {
                vrf: e["vrfName"].as_str().unwrap_or(vrf).to_string(),
                prefix: prefix.to_string(),
                next_hops,
            });
        }
    };
    for (key, body) in v.as_object().into_iter().flatten() {
        if body.is_array() {
            add("default", key, body);
        } else if let Some(prefixes) = body.as_object() {
            for (prefix, entries) in prefixes {
                add(key, prefix, entries);
            }
        }
    }
    out
}

/// The neighbours of `lldpctl -f json`: `{lldp: {interface: ...}}` where
/// `interface` is one object keyed by port (one neighbour) or a list of
/// such objects (several).
pub(crate) fn lldp_neighbours(v: &Value) -> Vec<LldpNeighbour> {
    let mut out = Vec::new();
    let ifaces = &v["lldp"]["interface"];
    let items: Vec<&serde_json::Map<String, Value>> = match ifaces {
        Value::Array(list) => list.iter().filter_map(Value::as_object).collect(),
        Value::Object(map) => vec![map],
        _ => Vec::new(),
    };
    for map in items {
        for (port, n) in map {
            let system = n["chassis"]
                .as_object()
                .and_then(|c| c.keys().next().cloned())
                .unwrap_or_default();
            let port_id = n["port"]["id"]["value"]
                .as_str()
                .or_else(|| n["port"]["descr"].as_str())
                .unwrap_or_default()
                .to_string();
            out.push(LldpNeighbour {
                port: port.clone(),
                system,
                port_id,
            });
        }
    }
    out
}

/// The interfaces of `ip -j link show`: the switch ports (`swp*`) with
/// their operational state; a veth has no speed of its own.
pub fn interfaces(v: &Value) -> Vec<Interface> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            let name = l["ifname"].as_str()?;
            name.starts_with("swp").then(|| Interface {
                name: name.to_string(),
                up: l["operstate"].as_str() == Some("UP"),
                speed_mbps: None,
            })
        })
        .collect()
}

impl Device for Frr {
    async fn identity(&mut self) -> Result<Identity> {
        let text = self.vtysh("show version").await?;
        let hostname = version_hostname(&text).ok_or_else(|| PushError::Protocol {
            action: "vtysh `show version`".to_string(),
            message: format!("no host name in {:?}", tail(&text)),
        })?;
        Ok(Identity {
            hostname,
            serial: None,
        })
    }

    async fn load(&mut self, candidate: &str) -> Result<String> {
        let file = self.run_dir().join("candidate.frr.conf");
        std::fs::write(&file, candidate).map_err(|e| PushError::Io {
            action: format!("writing the candidate {}", file.display()),
            source: e,
        })?;
        self.candidate = Some(file.clone());
        // frr-reload.py checks the candidate with `vtysh -C` first and
        // refuses a file FRR does not parse.
        let out = self.reload("--test", &file, true).await?;
        let diff = reload_diff(&out);
        let applied = std::fs::read_to_string(self.run_dir().join(APPLIED)).ok();
        let residue = std::fs::read_to_string(self.run_dir().join(RESIDUE)).ok();
        if applied.as_deref() == Some(candidate) && residue.as_deref() == Some(diff.as_str()) {
            return Ok(String::new());
        }
        Ok(diff)
    }

    async fn discard(&mut self) -> Result<()> {
        if let Some(file) = self.candidate.take() {
            let _ = std::fs::remove_file(file);
        }
        Ok(())
    }

    async fn prepare(&mut self) -> Result<String> {
        let running = self.vtysh("show running-config").await?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let point = self.run_dir().join(format!("rollback-{stamp}.frr.conf"));
        std::fs::write(&point, strip_running_header(&running)).map_err(|e| PushError::Io {
            action: format!("saving the rollback point {}", point.display()),
            source: e,
        })?;
        self.prepared = Some(point.clone());
        Ok(point.display().to_string())
    }

    fn native_timer(&self) -> bool {
        false
    }

    async fn commit(&mut self, _timer: Duration) -> Result<Commit> {
        let file = self.candidate.clone().ok_or_else(|| PushError::Protocol {
            action: "commit".to_string(),
            message: "no candidate loaded".to_string(),
        })?;
        let point = match self.prepared.take() {
            Some(p) => p,
            None => PathBuf::from(self.prepare().await?),
        };
        self.prepared = None;
        self.forget_applied();
        self.reload("--reload", &file, true).await?;
        // What frr-reload still lists once the candidate runs: lines FRR
        // keeps at their default and does not show.
        let residue = reload_diff(&self.reload("--test", &file, false).await?);
        let run = self.run_dir();
        std::fs::write(run.join(RESIDUE), residue)
            .and_then(|()| std::fs::rename(&file, run.join(APPLIED)))
            .map_err(|e| PushError::Io {
                action: format!("recording the applied candidate in {}", run.display()),
                source: e,
            })?;
        self.candidate = None;
        Ok(Commit {
            point: point.display().to_string(),
            native_timer: false,
        })
    }

    async fn observe(&mut self) -> Result<Observed> {
        // One read: the push observes again until the switch settles.
        let bgp = bgp_sessions(&self.vtysh_json("show bgp vrf all summary json").await?);
        let bfd = bfd_peers(&self.vtysh_json("show bfd peers json").await?);
        let installed = routes(&self.vtysh_json("show ip route vrf all json").await?);
        let socket = self.run_dir().join("lldpd.socket");
        let lldp_text = self
            .run(
                "lldpctl -f json",
                vec![
                    "lldpctl".into(),
                    "-u".into(),
                    socket.display().to_string(),
                    "-f".into(),
                    "json".into(),
                ],
                false,
            )
            .await?;
        let lldp = lldp_neighbours(&parse(&lldp_text, "lldpctl -f json")?);
        let link_text = self
            .run(
                "ip -j link show",
                vec!["ip".into(), "-j".into(), "link".into(), "show".into()],
                false,
            )
            .await?;
        let interfaces = interfaces(&parse(&link_text, "ip -j link show")?);
        Ok(Observed {
            lldp,
            interfaces,
            bgp,
            bfd,
            routes: installed,
        })
    }

    async fn confirm(&mut self) -> Result<()> {
        self.vtysh("write memory").await?;
        // Older rollback points are of no further use once confirmed.
        if let Ok(dir) = std::fs::read_dir(self.run_dir()) {
            for e in dir.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("rollback-") && name.ends_with(".frr.conf") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    async fn rollback(&mut self, point: &str) -> Result<()> {
        let file = PathBuf::from(point);
        // Only a rollback point this client wrote, in this instance.
        if file.parent() != Some(self.run_dir().as_path()) || !file.is_file() {
            return Err(PushError::Protocol {
                action: "rollback".to_string(),
                message: format!(
                    "{point} is not a rollback point of switch {} (expected a file in {})",
                    self.switch,
                    self.run_dir().display()
                ),
            });
        }
        self.forget_applied();
        self.reload("--reload", &file, false).await?;
        Ok(())
    }
}

/// JSON from a command's output.
fn parse(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| PushError::Protocol {
        action: what.to_string(),
        message: format!("not JSON: {e}"),
    })
}

/// `show running-config` without vtysh's banner (`Building
/// configuration...`, `Current configuration:`), a file frr-reload.py
/// applies.
fn strip_running_header(text: &str) -> String {
    text.lines()
        .filter(|l| *l != "Building configuration..." && *l != "Current configuration:")
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_reload_test_output_becomes_a_diff() {
        let text = "\nLines To Delete\n===============\nno hostname vm\nrouter bgp 65000 vrf Vrf100\n neighbor 10.255.0.1 remote-as 65001\n\nLines To Add\n============\nrouter bgp 65000 vrf Vrf100\n neighbor 10.255.0.1 remote-as 65009\n";
        assert_eq!(
            reload_diff(text),
            "-no hostname vm\n-router bgp 65000 vrf Vrf100\n- neighbor 10.255.0.1 remote-as 65001\n+router bgp 65000 vrf Vrf100\n+ neighbor 10.255.0.1 remote-as 65009\n"
        );
        // Context lines once per run of lines under them.
        let repeated = "Lines To Add\n============\ninterface swp1\ninterface swp1\n description a\ninterface swp1\n ip address 10.0.0.0/31\ninterface swp2\n description b\nrouter bgp 1\n address-family ipv4 unicast\nrouter bgp 1\n address-family ipv4 unicast\n  network 10.0.0.0/24\n";
        assert_eq!(
            reload_diff(repeated),
            "+interface swp1\n+ description a\n+ ip address 10.0.0.0/31\n+interface swp2\n+ description b\n+router bgp 1\n+ address-family ipv4 unicast\n+  network 10.0.0.0/24\n"
        );
        assert_eq!(
            reload_diff("\nLines To Delete\n===============\n\nLines To Add\n============\n"),
            ""
        );
    }

    #[test]
    fn the_host_name_comes_from_show_version() {
        assert_eq!(
            version_hostname("FRRouting 8.4.4 (sw1) on Linux(6.18).\nCopyright"),
            Some("sw1".to_string())
        );
        assert_eq!(version_hostname("garbage"), None);
    }

    #[test]
    fn bgp_bfd_routes_and_lldp_parse_from_frr_and_lldpd_json() {
        let bgp = json!({"Vrf100": {"ipv4Unicast": {"peers": {
            "10.255.0.1": {"remoteAs": 65001, "state": "Established"},
            "10.255.0.3": {"remoteAs": 65003, "state": "Active"}}}}});
        let s = bgp_sessions(&bgp);
        assert_eq!(s.len(), 2);
        assert!(s[0].established && !s[1].established);
        assert_eq!(s[1].remote_as, Some(65003));
        assert_eq!(s[0].vrf, "Vrf100");

        let bfd = json!([{"peer": "10.255.0.1", "vrf": "Vrf100", "status": "up"},
                         {"peer": "10.255.0.3", "vrf": "Vrf100", "status": "down"}]);
        let b = bfd_peers(&bfd);
        assert!(b[0].up && !b[1].up);

        let flat = json!({"10.0.2.0/24": [{"vrfName": "Vrf100", "selected": true, "installed": true,
            "nexthops": [{"ip": "10.255.0.1", "fib": true}, {"ip": "10.255.0.3", "fib": true},
                         {"ip": "10.255.0.5", "fib": false}]}],
            "10.0.9.0/24": [{"vrfName": "Vrf100", "selected": false, "installed": false, "nexthops": []}]});
        let r = routes(&flat);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].next_hops, vec!["10.255.0.1", "10.255.0.3"]);
        assert_eq!(r[0].vrf, "Vrf100");
        let nested = json!({"Vrf101": {"10.0.2.0/24": [{"selected": true, "installed": true,
            "nexthops": [{"ip": "10.255.0.1", "fib": true}]}]}});
        assert_eq!(routes(&nested)[0].vrf, "Vrf101");

        let one = json!({"lldp": {"interface": {"swp1": {"chassis": {"sw2": {}},
            "port": {"id": {"type": "ifname", "value": "swp1"}}}}}});
        assert_eq!(
            lldp_neighbours(&one),
            vec![LldpNeighbour {
                port: "swp1".into(),
                system: "sw2".into(),
                port_id: "swp1".into()
            }]
        );
        let many = json!({"lldp": {"interface": [
            {"swp1": {"chassis": {"sw2": {}}, "port": {"id": {"value": "swp1"}}}},
            {"swp2": {"chassis": {"sw4": {}}, "port": {"id": {"value": "swp1"}}}}]}});
        assert_eq!(lldp_neighbours(&many)[1].system, "sw4");

        let links = json!([{"ifname": "lo", "operstate": "UNKNOWN"},
                           {"ifname": "swp1", "operstate": "UP"},
                           {"ifname": "swp2", "operstate": "DOWN"}]);
        let i = interfaces(&links);
        assert_eq!(i.len(), 2);
        assert!(i[0].up && !i[1].up && i[0].speed_mbps.is_none());
    }

    #[test]
    fn lab_instance_names_only() {
        assert!(valid_instance("efl-lab-p0"));
        for bad in ["", "../etc", "a b", "x/y"] {
            assert!(!valid_instance(bad), "{bad}");
        }
    }

    #[test]
    fn the_rollback_point_is_an_applicable_file() {
        assert_eq!(
            strip_running_header(
                "Building configuration...\n\nCurrent configuration:\n!\nhostname sw1\nend"
            ),
            "\n!\nhostname sw1\nend\n"
        );
    }
}
