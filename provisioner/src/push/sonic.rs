//! SONiC over SSH: the Generic Config Updater's checkpoint, replace and
//! rollback (`config checkpoint|replace|rollback`), driven command by
//! command on exec channels. BGP, BFD and routes come from FRR in SONiC's
//! `bgp` container (`vtysh ... json`), read by the FRR client's readers.
//!
//! The rendered candidate (`render --vendor sonic`) is a partial
//! `config_db.json`: the tables the plan owns. `load` turns it into a whole
//! CONFIG_DB to hand to `config replace`:
//! - a table the candidate does not carry is kept as it runs (management
//!   interface, users, syslog, ...);
//! - `PORT`, `DEVICE_METADATA` and `FEATURE` are hardware or system tables:
//!   each entry of the candidate is laid over the running entry field by
//!   field (lanes, aliases, MAC stay), and running entries the candidate
//!   does not name stay;
//! - every other table the candidate carries is the plan's: it becomes
//!   exactly the candidate's (stale VLANs, addresses and routes go),
//!   except the management VRF's static routes: `config route add prefix
//!   vrf mgmt ...` stores them in `STATIC_ROUTE` as `mgmt|<prefix>`
//!   (`management|<prefix>` in later releases), the VRF named by
//!   `MGMT_VRF_CONFIG` (sonic-utilities config/main.py,
//!   `cli_sroute_to_config` and `is_vrf_exists`); they stay as they run.
//! - `BREAKOUT_CFG` is compared, never written: a cage is broken out with
//!   SONiC's Dynamic Port Breakout (`config interface breakout`), which
//!   deletes the root port and makes the child ports with their lanes
//!   from the platform's `platform.json`; GCU only edits the table (the
//!   ports stay as they were until swss restarts, sonic-buildimage issue
//!   #23822), and a `PORT` entry without `lanes` is invalid
//!   (`sonic-port.yang`: `lanes` and `speed` are mandatory). So before
//!   anything is written, `load` refuses a candidate whose breakout modes
//!   differ from the switch's or that names a port the switch does not
//!   have ([`port_mismatch`]), with the command to run first.
//!
//! The diff is ours: running CONFIG_DB (`sonic-cfggen -d --print-data`)
//! against that target, one line per changed leaf as a JSON pointer
//! (RFC 6901, the paths of GCU's patches) with its value, `-` before and `+`
//! after. The device validates the target at load with `config replace
//! --dry-run` (YANG checks); its refusal is [`PushError::Rejected`] with its
//! own message.
//!
//! SONiC has no configuration lock and no commit-confirm timer. The lock is
//! ours: a directory `/tmp/efl-push.lock` made with `mkdir` (atomic), with
//! the holder in `owner`, removed by `discard`, `confirm` and `rollback`.
//! The timer is the caller's ([`Commit::native_timer`] is false): `commit`
//! takes checkpoint `efl-push-<unix seconds>` then replaces; the caller's
//! watchdog calls `rollback` at expiry. If the connection drops during the
//! replace, `commit` reconnects once and rolls back to the checkpoint before
//! it reports the loss.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::device::{
    Commit, Connect, Device, Identity, Interface, LldpNeighbour, Observed, Opening, Target,
    Transport,
};
use super::error::{PushError, Result, protocol};
use super::frr;
use super::ssh::{Locking, Output, Ssh, SshOptions, load_under_lock};

/// Our lock directory on the switch; the candidate is written inside it.
pub const LOCK_DIR: &str = "/tmp/efl-push.lock";
/// The whole CONFIG_DB `config replace` is given.
pub const CANDIDATE: &str = "/tmp/efl-push.lock/candidate.json";
/// Tables merged field by field instead of replaced.
pub const MERGED_TABLES: [&str; 3] = ["PORT", "DEVICE_METADATA", "FEATURE"];
/// Tables compared with the running ones and never written: the switch's
/// own breakout state (see the module comment).
pub const CHECKED_TABLES: [&str; 1] = ["BREAKOUT_CFG"];
/// The names the management VRF's static routes carry in `STATIC_ROUTE`
/// keys (`<vrf>|<prefix>`): `mgmt`, and `management` where sonic-utilities
/// accepts it too.
pub const MGMT_VRFS: [&str; 2] = ["mgmt", "management"];

/// True when a running `table` entry `key` is management the plan never
/// owns: a static route of the management VRF.
fn is_management(table: &str, key: &str) -> bool {
    table == "STATIC_ROUTE"
        && key
            .split_once('|')
            .is_some_and(|(vrf, _)| MGMT_VRFS.contains(&vrf))
}

/// A SONiC switch reached over SSH.
#[derive(Debug)]
pub struct Sonic {
    /// The connection, made on first use.
    ssh: Option<Ssh>,
    target: Target,
    options: SshOptions,
    /// We hold [`LOCK_DIR`].
    locked: bool,
    /// [`CANDIDATE`] is written and validated.
    loaded: bool,
    /// The checkpoint of the commit in progress.
    point: Option<String>,
}

impl Connect for Sonic {
    const TRANSPORTS: &'static [Transport] = &[Transport::Ssh];
    fn connect(target: &Target, _opening: &Opening<'_>) -> Result<Sonic> {
        Ok(Sonic::new(target, SshOptions::default()))
    }
}

impl Sonic {
    /// A client of `target`; it connects on first use.
    pub fn new(target: &Target, options: SshOptions) -> Sonic {
        Sonic {
            ssh: None,
            target: target.clone(),
            options,
            locked: false,
            loaded: false,
            point: None,
        }
    }

    /// A client of `target`, connected and logged in.
    pub async fn connect(target: &Target, options: SshOptions) -> Result<Sonic> {
        let mut s = Sonic::new(target, options);
        s.ssh().await?;
        Ok(s)
    }

    /// The connection, made (host key checked, logged in) when there is
    /// none yet or it was lost.
    async fn ssh(&mut self) -> Result<&mut Ssh> {
        let Sonic {
            ssh,
            target,
            options,
            ..
        } = self;
        // A connection that dropped is made again (a rollback after a lost
        // commit needs one).
        if ssh.as_ref().is_none_or(Ssh::is_closed) {
            *ssh = Some(Ssh::connect(target, *options).await?);
        }
        ssh.as_mut()
            .ok_or_else(|| protocol("connecting", "no SSH session"))
    }

    /// Runs a command that must succeed; a failure is a protocol error with
    /// the device's message.
    async fn must(&mut self, command: &str) -> Result<Output> {
        let out = self.ssh().await?.exec(command).await?;
        if !out.success() {
            return Err(protocol(&format!("running `{command}`"), reason(&out)));
        }
        Ok(out)
    }

    async fn unlock(&mut self) -> Result<()> {
        if self.locked {
            self.must(&format!("rm -rf {LOCK_DIR}")).await?;
            self.locked = false;
        }
        self.loaded = false;
        Ok(())
    }

    async fn lock(&mut self) -> Result<()> {
        let out = self.ssh().await?.exec(&format!("mkdir {LOCK_DIR}")).await?;
        if !out.success() {
            let owner = self
                .ssh()
                .await?
                .exec(&format!("cat {LOCK_DIR}/owner"))
                .await?;
            let by = owner.stdout.trim();
            let by = if owner.success() && !by.is_empty() {
                by.to_string()
            } else {
                format!("another push ({LOCK_DIR} exists: {})", out.message())
            };
            return Err(PushError::Locked { by });
        }
        self.locked = true;
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let owner = format!(
            "provisioner push as {} since unix time {since}\n",
            self.target.user
        );
        let command = format!("cat > {LOCK_DIR}/owner");
        let out = self
            .ssh()
            .await?
            .exec_stdin(&command, owner.as_bytes())
            .await?;
        if !out.success() {
            return Err(protocol(&format!("running `{command}`"), out.message()));
        }
        Ok(())
    }

    async fn load_locked(&mut self, candidate: &str) -> Result<String> {
        let candidate: Value = serde_json::from_str(candidate)
            .map_err(|e| protocol("reading the rendered config_db.json", e.to_string()))?;
        let candidate = candidate
            .as_object()
            .ok_or_else(|| protocol("reading the rendered config_db.json", "not a JSON object"))?;
        let out = self.must("sonic-cfggen -d --print-data").await?;
        let running: Value = serde_json::from_str(&out.stdout).map_err(|e| {
            protocol(
                "reading `sonic-cfggen -d --print-data`",
                format!("not JSON: {e}"),
            )
        })?;
        let running = running.as_object().ok_or_else(|| {
            protocol(
                "reading `sonic-cfggen -d --print-data`",
                "not a JSON object",
            )
        })?;
        let ports = port_mismatch(running, candidate);
        if !ports.is_empty() {
            return Err(PushError::Ports { lines: ports });
        }
        let target = replace_target(running, candidate);
        let cut = management_cut(running, &target);
        if !cut.is_empty() {
            return Err(PushError::Management {
                address: self.target.address.clone(),
                user: self.target.user.clone(),
                lines: cut,
            });
        }
        let diff = json_diff(running, &target);
        if diff.is_empty() {
            return Ok(diff);
        }
        let text = serde_json::to_string_pretty(&Value::Object(target))
            .map_err(|e| protocol("writing the candidate", e.to_string()))?;
        let command = format!("cat > {CANDIDATE}");
        let out = self
            .ssh()
            .await?
            .exec_stdin(&command, text.as_bytes())
            .await?;
        if !out.success() {
            return Err(protocol(&format!("running `{command}`"), out.message()));
        }
        let check = self
            .ssh()
            .await?
            .exec(&format!("sudo config replace --dry-run {CANDIDATE}"))
            .await?;
        if !check.success() {
            return Err(PushError::Rejected {
                message: reason(&check),
            });
        }
        self.loaded = true;
        Ok(diff)
    }

    /// After the connection dropped during `config replace`: reconnect once
    /// and go back to the checkpoint.
    async fn recover(&mut self, point: &str) -> bool {
        let Ok(ssh) = Ssh::connect(&self.target, self.options).await else {
            return false;
        };
        self.ssh = Some(ssh);
        self.locked = true;
        self.rollback(point).await.is_ok()
    }
}

impl Device for Sonic {
    async fn identity(&mut self) -> Result<Identity> {
        let out = self
            .must("sonic-cfggen -d -v DEVICE_METADATA.localhost.hostname")
            .await?;
        let hostname = out.stdout.trim().to_string();
        if hostname.is_empty() {
            return Err(protocol(
                "reading DEVICE_METADATA.localhost.hostname",
                "the switch has no hostname",
            ));
        }
        let summary = self.ssh().await?.exec("show platform summary").await?;
        let serial = summary
            .success()
            .then(|| platform_serial(&summary.stdout))
            .flatten();
        Ok(Identity { hostname, serial })
    }

    async fn load(&mut self, candidate: &str) -> Result<String> {
        load_under_lock(self, candidate).await
    }

    async fn discard(&mut self) -> Result<()> {
        self.unlock().await
    }

    /// Takes checkpoint `efl-push-<unix seconds>`, then `config replace`s
    /// the loaded candidate. `timer` is not used: SONiC has none, the caller
    /// runs it.
    async fn prepare(&mut self) -> Result<String> {
        if !self.loaded {
            return Err(protocol(
                "saving the rollback point",
                "no candidate is loaded",
            ));
        }
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let point = format!("efl-push-{seconds}");
        self.must(&format!("sudo config checkpoint {point}"))
            .await?;
        self.point = Some(point.clone());
        Ok(point)
    }

    fn native_timer(&self) -> bool {
        false
    }

    async fn commit(&mut self, _timer: Duration) -> Result<Commit> {
        if !self.loaded {
            return Err(protocol("committing", "no candidate is loaded"));
        }
        let point = match self.point.clone() {
            Some(p) => p,
            None => self.prepare().await?,
        };
        match self
            .ssh()
            .await?
            .exec(&format!("sudo config replace {CANDIDATE}"))
            .await
        {
            Ok(out) if out.success() => Ok(Commit {
                point,
                native_timer: false,
            }),
            Ok(out) => {
                // A failed replace may have applied part of the change.
                self.rollback(&point).await?;
                Err(PushError::Rejected {
                    message: reason(&out),
                })
            }
            Err(PushError::Transport { action, source }) => {
                let back = if self.recover(&point).await {
                    format!("; reconnected and rolled back to checkpoint {point}")
                } else {
                    format!(
                        "; could not reconnect: roll back with `sudo config rollback {point}` on the switch"
                    )
                };
                Err(PushError::Transport {
                    action: format!("{action}{back}"),
                    source,
                })
            }
            Err(PushError::Timeout { action, seconds }) => Err(PushError::Timeout {
                action: format!(
                    "{action} (the switch may still be applying it; when it is done, roll back with \
                     `sudo config rollback {point}` on the switch)"
                ),
                seconds,
            }),
            Err(e) => Err(e),
        }
    }

    async fn observe(&mut self) -> Result<Observed> {
        let lldp = self.must("show lldp table").await?;
        let interfaces = self.must("show interfaces status").await?;
        let bgp = self
            .must("sudo vtysh -c 'show bgp vrf all summary json'")
            .await?;
        let bfd = self.must("sudo vtysh -c 'show bfd peers json'").await?;
        let routes = self
            .must("sudo vtysh -c 'show ip route vrf all json'")
            .await?;
        Ok(Observed {
            lldp: lldp_table(&lldp.stdout)?,
            interfaces: interfaces_status(&interfaces.stdout)?,
            bgp: frr::bgp_sessions(&vtysh_json(&bgp.stdout, "show bgp vrf all summary json")?),
            bfd: frr::bfd_peers(&vtysh_json(&bfd.stdout, "show bfd peers json")?),
            routes: frr::routes(&vtysh_json(&routes.stdout, "show ip route vrf all json")?),
        })
    }

    async fn confirm(&mut self) -> Result<()> {
        self.must("sudo config save -y").await?;
        if let Some(point) = self.point.take() {
            self.must(&format!("sudo config delete-checkpoint {point}"))
                .await?;
        }
        self.locked = true;
        self.unlock().await
    }

    async fn rollback(&mut self, point: &str) -> Result<()> {
        if point.is_empty()
            || !point
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(PushError::Parameter {
                parameter: "point".to_string(),
                message: format!("`{point}` is not a checkpoint name this client makes"),
            });
        }
        self.must(&format!("sudo config rollback {point}")).await?;
        // Saved, so that a reboot does not bring back what was rolled
        // back (after a confirm, `config save -y` wrote the candidate to
        // /etc/sonic/config_db.json; sonic-utilities config/main.py).
        self.must("sudo config save -y").await?;
        self.must(&format!("sudo config delete-checkpoint {point}"))
            .await?;
        self.point = None;
        // The lock may be a previous process's (the watchdog reconnects).
        self.locked = true;
        self.unlock().await
    }
}

/// The management a replace to `target` would remove or change, as
/// `TABLE|key` lines with their fields: every entry of `MGMT_INTERFACE`
/// (the management port's address and gateway, `config interface ip add
/// eth0 <ip/len> <gw>`), of `MGMT_VRF_CONFIG` (`config vrf add mgmt`) and
/// the management VRF's static routes in `STATIC_ROUTE` (sonic-utilities
/// config/main.py). The plan never renders them, so only a candidate that
/// carries those tables by hand gets here; push would lose the switch
/// it talks to over that address.
pub fn management_cut(running: &Map<String, Value>, target: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for table in ["MGMT_INTERFACE", "MGMT_VRF_CONFIG", "STATIC_ROUTE"] {
        let Some(entries) = running.get(table).and_then(Value::as_object) else {
            continue;
        };
        for (key, fields) in entries {
            if table == "STATIC_ROUTE" && !is_management(table, key) {
                continue;
            }
            let now = target.get(table).and_then(|t| t.get(key));
            if now != Some(fields) {
                out.push(format!(
                    "{table}|{key} {}",
                    serde_json::to_string(fields).unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// What the switch must change by its own commands before the candidate
/// can be loaded, one line each (device text, escaped when shown):
/// - a root port of the candidate's `BREAKOUT_CFG` that the switch's runs
///   in another mode, or that it does not list (when it has the table at
///   all: a platform without Dynamic Port Breakout has none, and its
///   ports are its `PORT` table). Modes compare without the bracketed
///   alternative speeds a platform's mode names carry (`2x200G[100G]`
///   is `2x200G`; sonic-net/SONiC `doc/dynamic-port-breakout`, the
///   breakout mode syntax);
/// - a `PORT` entry of the candidate that the running CONFIG_DB lacks:
///   the platform has no such port, or only once a cage is broken out.
pub fn port_mismatch(running: &Map<String, Value>, candidate: &Map<String, Value>) -> Vec<String> {
    let empty = Map::new();
    let table = |db: &'_ Map<String, Value>, name: &str| -> Map<String, Value> {
        db.get(name)
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .clone()
    };
    let mut out = Vec::new();
    if let Some(have) = running.get("BREAKOUT_CFG").and_then(Value::as_object) {
        for (root, fields) in table(candidate, "BREAKOUT_CFG") {
            let want = fields.get("brkout_mode").and_then(Value::as_str);
            let runs = have
                .get(&root)
                .and_then(|f| f.get("brkout_mode"))
                .and_then(Value::as_str);
            match (want, runs) {
                (Some(w), Some(r)) if mode_speeds(w) == mode_speeds(r) => {}
                (Some(w), Some(r)) => out.push(format!(
                    "BREAKOUT_CFG|{root}: the switch runs {r}, the plan needs {w}: run `sudo config interface breakout {root} <mode> -y` with the mode `show interfaces breakout` lists for {w}"
                )),
                (Some(w), None) => out.push(format!(
                    "BREAKOUT_CFG|{root}: not a root port of the switch (its BREAKOUT_CFG has no such entry), the plan breaks it out {w}"
                )),
                (None, _) => out.push(format!(
                    "BREAKOUT_CFG|{root}: the candidate gives no brkout_mode"
                )),
            }
        }
    }
    let ports = table(running, "PORT");
    for port in table(candidate, "PORT").keys() {
        if !ports.contains_key(port) {
            out.push(format!(
                "PORT|{port}: the switch has no such port (`show interfaces status`)"
            ));
        }
    }
    out
}

/// A breakout mode without its bracketed alternative speeds:
/// `2x200G[100G,50G]` -> `2x200G`.
fn mode_speeds(mode: &str) -> String {
    let mut out = String::with_capacity(mode.len());
    let mut depth = 0usize;
    for c in mode.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The target CONFIG_DB: the running one with the candidate's tables laid
/// over it (see the module comment for the rule).
pub fn replace_target(
    running: &Map<String, Value>,
    candidate: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = running.clone();
    for (table, entries) in candidate {
        if CHECKED_TABLES.contains(&table.as_str()) {
            continue;
        }
        let Some(entries) = entries.as_object() else {
            out.insert(table.clone(), entries.clone());
            continue;
        };
        let empty = Map::new();
        let current = running
            .get(table)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let merged = MERGED_TABLES.contains(&table.as_str());
        let mut result = if merged {
            current.clone()
        } else {
            current
                .iter()
                .filter(|(k, _)| is_management(table, k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        for (key, fields) in entries {
            let value = match (merged, current.get(key), fields.as_object()) {
                (true, Some(Value::Object(old)), Some(new)) => {
                    let mut m = old.clone();
                    for (f, v) in new {
                        m.insert(f.clone(), v.clone());
                    }
                    Value::Object(m)
                }
                _ => fields.clone(),
            };
            result.insert(key.clone(), value);
        }
        out.insert(table.clone(), Value::Object(result));
    }
    out
}

/// One line per changed leaf, in path order: `- /T/K/f: old`, `+ /T/K/f:
/// new`. Empty when nothing changes.
pub fn json_diff(before: &Map<String, Value>, after: &Map<String, Value>) -> String {
    let mut out = String::new();
    diff_maps("", before, after, &mut out);
    out
}

fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn diff_maps(path: &str, a: &Map<String, Value>, b: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let p = format!("{path}/{}", pointer_token(key));
        diff_values(&p, a.get(key), b.get(key), out);
    }
}

fn diff_values(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut String) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => diff_maps(path, x, y, out),
        (Some(Value::Object(x)), None) => diff_maps(path, x, &Map::new(), out),
        (None, Some(Value::Object(y))) => diff_maps(path, &Map::new(), y, out),
        (Some(x), Some(y)) if x == y => {}
        (x, y) => {
            for (sign, v) in [('-', x), ('+', y)] {
                if let Some(v) = v {
                    if let Value::Object(m) = v {
                        diff_maps(path, m, &Map::new(), out);
                    } else {
                        let _ = writeln!(out, "{sign} {path}: {v}");
                    }
                }
            }
        }
    }
}

/// The JSON of a `vtysh -c '... json'` answer (FRR in SONiC's bgp
/// container), read by the FRR client's readers (`super::frr`).
fn vtysh_json(text: &str, command: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        protocol(
            &format!("reading `vtysh -c '{command}'`"),
            format!("not the JSON FRR prints: {e}"),
        )
    })
}

/// Why a command failed, in the device's words: a Generic Config Updater
/// command's own reason ([`gcu_reason`]), else its output.
fn reason(out: &Output) -> String {
    gcu_reason(&out.stderr).unwrap_or_else(|| out.message())
}

/// The reason sonic-utilities' `config replace|rollback|checkpoint|
/// delete-checkpoint` gives for failing, without click's usage lines.
/// config/main.py prints `Failed to replace config` (or `... rollback
/// config`, ...) on stderr, then calls `ctx.fail(ex)`, which click prints
/// as a usage error:
///
/// ```text
/// Failed to replace config
/// Usage: config replace [OPTIONS] TARGET_FILE_PATH
/// Try "config replace -h" for help.
///
/// Error: Given patch will produce invalid config. Error: Data Loading Failed
/// Value "public" does not satisfy the constraint ...
/// ```
///
/// Read as `Failed to replace config: Given patch will produce invalid
/// config. ...` (every line of the exception kept). `None` when the text
/// has no `Error: ` line, so another failure keeps its whole message.
pub fn gcu_reason(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("Error: "))?;
    let head: Vec<&str> = lines[..at]
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.starts_with("Usage: "))
        .filter(|l| !l.is_empty())
        .collect();
    let mut error: Vec<&str> = vec![&lines[at]["Error: ".len()..]];
    error.extend(lines[at + 1..].iter().copied());
    let error = error.join("\n").trim().to_string();
    Some(if head.is_empty() {
        error
    } else {
        format!("{}: {error}", head.join(" "))
    })
}

/// `Serial Number: ...` of `show platform summary`.
fn platform_serial(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == "Serial Number")
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty() && v != "N/A")
}

/// Reads `show lldp table` (sonic-utilities `scripts/lldpshow`, the SONiC
/// Command Reference's "show lldp table"):
///
/// ```text
/// Capability codes: (R) Router, (B) Bridge, (O) Other
/// LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr
/// -----------  --------------  --------------  ------------  -----------------
/// Ethernet0    up01            Ethernet4       BR            Ethernet4
/// --------------------------------------------------
/// Total entries displayed:  1
/// ```
pub fn lldp_table(text: &str) -> Result<Vec<LldpNeighbour>> {
    let mut lines = text.lines();
    if !lines.any(|l| l.trim_start().starts_with("LocalPort")) {
        return Err(protocol("reading `show lldp table`", "no LocalPort header"));
    }
    let mut out = Vec::new();
    for line in lines {
        let t = line.trim();
        if t.starts_with('-') {
            if out.is_empty() {
                continue;
            }
            break;
        }
        if t.is_empty() || t.starts_with("Total entries") {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() < 3 {
            return Err(protocol(
                "reading `show lldp table`",
                format!("short row `{t}`"),
            ));
        }
        out.push(LldpNeighbour {
            port: f[0].to_string(),
            system: f[1].to_string(),
            port_id: f[2].to_string(),
        });
    }
    Ok(out)
}

/// Reads `show interfaces status` (sonic-utilities `scripts/intfutil`):
/// columns separated by two or more spaces, found by the header's names.
///
/// ```text
///   Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin             Type    Asym PFC
/// -----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ---------------  ----------
///   Ethernet0  0,1,2,3,4,5,6,7     400G   9100     rs    etp1   routed      up       up  QSFP-DD Double Density 8X Pluggable Transceiver         N/A
/// ```
pub fn interfaces_status(text: &str) -> Result<Vec<Interface>> {
    const ACTION: &str = "reading `show interfaces status`";
    let split = |l: &str| -> Vec<String> {
        l.trim()
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut lines = text.lines();
    let header = lines
        .by_ref()
        .find(|l| l.contains("Interface") && l.contains("Oper"))
        .ok_or_else(|| protocol(ACTION, "no header with Interface and Oper"))?;
    let header = split(header);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| protocol(ACTION, format!("no {name} column")))
    };
    let (name, speed, oper) = (col("Interface")?, col("Speed")?, col("Oper")?);
    let mut out = Vec::new();
    for line in lines {
        let t = line.trim();
        if t.is_empty() || t.starts_with('-') {
            continue;
        }
        let f = split(t);
        let get = |i: usize| {
            f.get(i)
                .ok_or_else(|| protocol(ACTION, format!("short row `{t}`")))
        };
        out.push(Interface {
            name: get(name)?.clone(),
            up: get(oper)? == "up",
            speed_mbps: speed_mbps(get(speed)?),
        });
    }
    Ok(out)
}

/// `400G` -> 400000, `100M` -> 100; `N/A` -> None.
fn speed_mbps(text: &str) -> Option<u64> {
    // By the last character, not the last byte: a device's text may end in
    // any character (a campaign case ended in U+FEFF, which split_at at
    // `len - 1` cut in the middle of, and panicked).
    let (n, per) = if let Some(n) = text.strip_suffix('G') {
        (n, 1000)
    } else {
        (text.strip_suffix('M')?, 1)
    };
    n.parse::<u64>().ok()?.checked_mul(per)
}

impl Locking for Sonic {
    fn lock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send {
        Sonic::lock(self)
    }

    fn unlock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send {
        Sonic::unlock(self)
    }

    fn load_locked(
        &mut self,
        candidate: &str,
    ) -> impl std::future::Future<Output = Result<String>> + Send {
        Sonic::load_locked(self, candidate)
    }
}

#[cfg(test)]
#[path = "sonic_tests.rs"]
mod tests;
