//! H3C Comware 7 over its SSH CLI: an interactive shell (prompt `<sysname>`
//! in user view, `[sysname]` in system view), files written over SCP, and
//! the device's own commit-delay timer.
//!
//! Comware has no candidate datastore on the CLI, so a careful operator's
//! steps are followed (H3C Fundamentals Configuration Guide, "Configuration
//! file management" and "Configuration rollback"):
//!
//! - **lock**: Comware's CLI has no configuration lock (NETCONF has one), so
//!   the lock is ours, as on SONiC: directory `flash:/efl-push` made with
//!   `mkdir` (fails when it exists), the holder in `owner.txt`.
//! - **load**: the rendered file configures only what the plan owns (no
//!   users, SSH server or management port), and `configuration replace
//!   file` would remove everything a file lacks; so the target file is the
//!   running configuration (`display current-configuration`) with the
//!   candidate laid over it section by section (sections are the blocks
//!   between `#` lines, named by their first line): a section the candidate
//!   has replaces the running one of the same name; new sections are added
//!   (interfaces last, VPN instances and VLANs before the first interface);
//!   top-level lines are merged, except that `sysname` is the candidate's
//!   and `ip route-static vpn-instance V ...` lines of a VPN instance the
//!   candidate defines are exactly the candidate's. The diff is ours, per
//!   section (the section's name as context, `-` and `+` lines). The target
//!   is written over SCP to `flash:/efl-push/candidate.cfg`. Comware checks
//!   a file only when it applies it, so a refusal shows at `commit`.
//! - **commit**: `save flash:/efl-rollback-<unix seconds>.cfg` (the rollback
//!   point; `save` to a named file does not change the startup file), then
//!   in system view `configuration commit delay <minutes>` and
//!   `configuration replace file flash:/efl-push/candidate.cfg`. The device
//!   rolls back by itself unless `configuration commit` comes in time
//!   ([`Commit::native_timer`] is true). A replace that prints errors is
//!   undone at once by replacing with the rollback file.
//! - **confirm**: `configuration commit` in system view, then `save force`
//!   (the startup file), then our files are deleted. After the deadline it
//!   is [`PushError::TimerExpired`] without sending anything that could keep
//!   a half state.
//! - **rollback**: `configuration replace file <rollback file>` in system
//!   view (the file stays on flash for the operator).
//! - `native_timer = false` in the devices file (firmware without commit
//!   delay): no `configuration commit delay` and no `configuration commit`;
//!   the push's watchdog calls `rollback` at expiry, and a connection lost
//!   mid-commit is rolled back after reconnecting once.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::device::{Commit, Connect, Device, Identity, Observed, Opening, Target, Transport};
use super::error::{PushError, Result};
use super::ssh::{Locking, Shell, Ssh, SshOptions, load_under_lock};

pub use super::comware_answers::{
    bfd_sessions, bgp_peers, full_interface, interface_brief, lldp_list, routing_table,
};
use super::error::protocol;

/// Our lock directory on the switch's flash.
pub const LOCK_DIR: &str = "flash:/efl-push";
/// The target configuration file `configuration replace file` is given.
pub const CANDIDATE: &str = "flash:/efl-push/candidate.cfg";
const OWNER: &str = "flash:/efl-push/owner.txt";

/// Options of the Comware client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComwareOptions {
    /// The SSH deadlines.
    pub ssh: SshOptions,
    /// The length of the minute `configuration commit delay` counts in:
    /// 60 s on a device; tests against a test server that runs its clock
    /// faster shorten it.
    pub minute: Duration,
}

impl Default for ComwareOptions {
    fn default() -> ComwareOptions {
        ComwareOptions {
            ssh: SshOptions::default(),
            minute: Duration::from_secs(60),
        }
    }
}

/// A Comware 7 switch reached over SSH.
#[derive(Debug)]
pub struct Comware {
    /// The connection and its CLI, made on first use.
    session: Option<Session>,
    target: Target,
    options: ComwareOptions,
    /// The name in the prompt.
    sysname: String,
    /// False when the devices file says `native_timer = false`: no commit
    /// delay, the push's watchdog keeps the time.
    native_timer: bool,
    locked: bool,
    /// `candidate.cfg` is on flash.
    uploaded: bool,
    loaded: bool,
    /// The rollback file and the deadline of the commit in progress.
    pending: Option<(String, Instant)>,
    /// The rollback file saved by `prepare`.
    prepared: Option<String>,
    /// VPN instances of the running configuration (read at load) whose BGP
    /// peers and routes `observe` reads.
    vrfs: Vec<String>,
}

/// The position after a prompt that ends `text`, if it does: `<name>` or
/// `[name]` (views add `-suffix`, an uncommitted change adds `~` or `*`).
pub fn prompt_end(text: &str) -> Option<usize> {
    let last = text.rsplit('\n').next()?;
    prompt_name(last.trim_end()).map(|_| text.len())
}

/// The device name of a prompt line, `<sw01>` -> `sw01`, `[sw01-vlan10]`
/// -> `sw01-vlan10`.
fn prompt_name(line: &str) -> Option<&str> {
    let inner = line
        .strip_prefix('<')
        .and_then(|l| l.strip_suffix('>'))
        .or_else(|| line.strip_prefix('[').and_then(|l| l.strip_suffix(']')))?;
    let inner = inner.trim_start_matches(['~', '*']);
    (!inner.is_empty() && !inner.contains(char::is_whitespace)).then_some(inner)
}

/// The end of a `[Y/N]:` question that ends `text`.
fn question_end(text: &str) -> Option<usize> {
    text.trim_end().ends_with("[Y/N]:").then_some(text.len())
}

/// Comware's error lines start with `%` (`% Unrecognized command found at
/// '^' position.`).
fn errors(output: &str) -> Vec<&str> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('%'))
        .collect()
}

/// One SSH connection and the CLI shell on it.
#[derive(Debug)]
struct Session {
    ssh: Ssh,
    shell: Shell,
}

/// Sends `line` on the CLI, answers a `[Y/N]` question with `answer` (`N`
/// when there is none), and returns the output without the echo and the
/// prompt.
async fn cli_on(shell: &mut Shell, line: &str, answer: Option<&str>) -> Result<String> {
    shell.send(line).await?;
    let action = format!("running `{line}`");
    let mut text = String::new();
    loop {
        let part = shell
            .read_until(&action, |t| prompt_end(t).or_else(|| question_end(t)))
            .await?;
        let asked = question_end(&part).is_some() && prompt_end(&part).is_none();
        text.push_str(&part);
        if !asked {
            break;
        }
        match answer {
            Some(a) => shell.send(a).await?,
            None => {
                shell.send("N").await?;
                return Err(protocol(
                    &action,
                    format!("unexpected question: {}", part.trim()),
                ));
            }
        }
    }
    // Drop the echoed command line and the prompt line.
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.first().is_some_and(|l| l.trim_end().ends_with(line)) {
        lines.remove(0);
    }
    if lines
        .last()
        .is_some_and(|l| prompt_name(l.trim_end()).is_some())
    {
        lines.pop();
    }
    Ok(lines.join("\n"))
}

impl Connect for Comware {
    const TRANSPORTS: &'static [Transport] = &[Transport::Ssh];
    fn connect(target: &Target, opening: &Opening<'_>) -> Result<Comware> {
        Ok(Comware::new(
            target,
            ComwareOptions::default(),
            opening.native_timer,
        ))
    }
}

impl Comware {
    /// A client of `target`; it connects on first use. `native_timer`
    /// false: no commit delay (firmware without one), the caller times the
    /// confirm.
    pub fn new(target: &Target, options: ComwareOptions, native_timer: bool) -> Comware {
        Comware {
            session: None,
            target: target.clone(),
            options,
            sysname: String::new(),
            native_timer,
            locked: false,
            uploaded: false,
            loaded: false,
            pending: None,
            prepared: None,
            vrfs: Vec::new(),
        }
    }

    /// A client of `target`, connected, with the CLI open and paging off.
    pub async fn connect(target: &Target, options: ComwareOptions) -> Result<Comware> {
        let mut c = Comware::new(target, options, true);
        c.session().await?;
        Ok(c)
    }

    /// The connection and CLI, made when there is none yet or it was lost:
    /// log in, wait for the prompt, turn paging off.
    async fn session(&mut self) -> Result<&mut Session> {
        let Comware {
            session,
            target,
            options,
            sysname,
            ..
        } = self;
        if session.as_ref().is_none_or(|s| s.ssh.is_closed()) {
            let mut ssh = Ssh::connect(target, options.ssh).await?;
            let mut shell = ssh.shell().await?;
            let greeting = shell
                .read_until("waiting for the prompt", prompt_end)
                .await?;
            *sysname = greeting
                .rsplit('\n')
                .next()
                .and_then(|l| prompt_name(l.trim_end()))
                .unwrap_or_default()
                .to_string();
            let out = cli_on(&mut shell, "screen-length disable", None).await?;
            let errs = errors(&out);
            if !errs.is_empty() {
                return Err(protocol("running `screen-length disable`", errs.join(" ")));
            }
            *session = Some(Session { ssh, shell });
        }
        session
            .as_mut()
            .ok_or_else(|| protocol("connecting", "no SSH session"))
    }

    async fn cli(&mut self, line: &str, answer: Option<&str>) -> Result<String> {
        let session = self.session().await?;
        cli_on(&mut session.shell, line, answer).await
    }

    async fn scp_upload(&mut self, path: &str, data: &[u8]) -> Result<()> {
        self.session().await?.ssh.scp_upload(path, data).await
    }

    /// Runs a line that must not print an error.
    async fn ok(&mut self, line: &str) -> Result<String> {
        let out = self.cli(line, None).await?;
        let errs = errors(&out);
        if !errs.is_empty() {
            return Err(protocol(&format!("running `{line}`"), errs.join(" ")));
        }
        Ok(out)
    }

    /// Runs a line that asks `[Y/N]` and answers yes.
    async fn yes(&mut self, line: &str) -> Result<String> {
        let out = self.cli(line, Some("Y")).await?;
        let errs = errors(&out);
        if !errs.is_empty() {
            return Err(protocol(&format!("running `{line}`"), errs.join(" ")));
        }
        Ok(out)
    }

    async fn lock(&mut self) -> Result<()> {
        let out = self.cli(&format!("mkdir {LOCK_DIR}"), None).await?;
        let errs = errors(&out);
        if !errs.is_empty() {
            let message = errs.join(" ");
            // A lock another push holds has its owner file, whatever words
            // the release uses for an existing directory (the guides give
            // no example of that refusal).
            let owner = self.cli(&format!("more {OWNER}"), None).await?;
            if errors(&owner).is_empty() && !owner.trim().is_empty() {
                return Err(PushError::Locked {
                    by: owner.trim().to_string(),
                });
            }
            if message.to_lowercase().contains("exist") {
                return Err(PushError::Locked {
                    by: format!("another push ({LOCK_DIR} exists)"),
                });
            }
            return Err(protocol(&format!("running `mkdir {LOCK_DIR}`"), message));
        }
        self.locked = true;
        let since = unix_seconds();
        let owner = format!(
            "provisioner push as {} since unix time {since}\n",
            self.target.user
        );
        self.scp_upload(OWNER, owner.as_bytes()).await
    }

    /// Deletes our files and the lock directory.
    async fn unlock(&mut self) -> Result<()> {
        if self.uploaded {
            self.yes(&format!("delete /unreserved {CANDIDATE}")).await?;
            self.uploaded = false;
        }
        if self.locked {
            self.yes(&format!("delete /unreserved {OWNER}")).await?;
            self.yes(&format!("rmdir {LOCK_DIR}")).await?;
            self.locked = false;
        }
        self.loaded = false;
        Ok(())
    }

    async fn load_locked(&mut self, candidate: &str) -> Result<String> {
        let running = self.ok("display current-configuration").await?;
        let target = replace_target(&running, candidate);
        // The VPN instances that will run (the running ones and the plan's).
        self.vrfs = vpn_instances(&target);
        let diff = section_diff(&running, &target);
        if diff.is_empty() {
            return Ok(diff);
        }
        self.uploaded = true;
        self.scp_upload(CANDIDATE, target.as_bytes()).await?;
        self.loaded = true;
        Ok(diff)
    }

    /// Replaces the running configuration with `file` in system view;
    /// returns the device's error lines (empty on success).
    async fn replace(&mut self, file: &str) -> Result<Vec<String>> {
        let out = self
            .cli(&format!("configuration replace file {file}"), Some("N"))
            .await?;
        Ok(errors(&out).into_iter().map(str::to_string).collect())
    }
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Device for Comware {
    async fn identity(&mut self) -> Result<Identity> {
        let out = self
            .ok("display current-configuration | include sysname")
            .await?;
        let hostname = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("sysname "))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| self.sysname.clone());
        if hostname.is_empty() {
            return Err(protocol("reading the sysname", "the device reports none"));
        }
        let manuinfo = self.cli("display device manuinfo", None).await?;
        let serial = manuinfo
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == "DEVICE_SERIAL_NUMBER")
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty() && v != "NONE");
        Ok(Identity { hostname, serial })
    }

    async fn load(&mut self, candidate: &str) -> Result<String> {
        load_under_lock(self, candidate).await
    }

    async fn discard(&mut self) -> Result<()> {
        self.unlock().await
    }

    async fn prepare(&mut self) -> Result<String> {
        if !self.loaded {
            return Err(protocol(
                "saving the rollback point",
                "no candidate is loaded",
            ));
        }
        let point = format!("flash:/efl-rollback-{}.cfg", unix_seconds());
        self.yes(&format!("save {point}")).await?;
        self.prepared = Some(point.clone());
        Ok(point)
    }

    fn native_timer(&self) -> bool {
        self.native_timer
    }

    async fn commit(&mut self, timer: Duration) -> Result<Commit> {
        if !self.loaded {
            return Err(protocol("committing", "no candidate is loaded"));
        }
        let minute = self.options.minute.as_nanos().max(1);
        let minutes = timer.as_nanos().div_ceil(minute).clamp(1, 65_535) as u32;
        let point = match self.prepared.take() {
            Some(p) => p,
            None => self.prepare().await?,
        };
        self.prepared = None;
        self.ok("system-view").await?;
        if self.native_timer {
            self.ok(&format!("configuration commit delay {minutes}"))
                .await?;
        }
        let deadline = Instant::now() + self.options.minute * minutes;
        self.pending = Some((point.clone(), deadline));
        let refused = match self.replace(CANDIDATE).await {
            Ok(refused) => refused,
            Err(PushError::Transport { action, source }) if self.native_timer => {
                return Err(PushError::Transport {
                    action: format!(
                        "{action}; the device's commit delay rolls the change back within {minutes} min \
                         (or replace with {point} on its console)"
                    ),
                    source,
                });
            }
            Err(PushError::Transport { action, source }) => {
                // No device timer: reconnect once and go back now.
                let back = match self.rollback(&point).await {
                    Ok(()) => format!("; reconnected and replaced the configuration with {point}"),
                    Err(_) => format!(
                        "; could not reconnect: replace the configuration with {point} on the switch's console"
                    ),
                };
                return Err(PushError::Transport {
                    action: format!("{action}{back}"),
                    source,
                });
            }
            Err(e) => return Err(e),
        };
        if !refused.is_empty() {
            // Part of the file may have been applied: go back now.
            let back = self.replace(&point).await?;
            self.ok("return").await?;
            if !back.is_empty() {
                return Err(protocol(
                    &format!("rolling back to {point} after a refused replace"),
                    back.join(" "),
                ));
            }
            return Err(PushError::Rejected {
                message: refused.join(" "),
            });
        }
        self.ok("return").await?;
        Ok(Commit {
            point,
            native_timer: self.native_timer,
        })
    }

    async fn observe(&mut self) -> Result<Observed> {
        let lldp = self.ok("display lldp neighbor-information list").await?;
        let brief = self.ok("display interface brief").await?;
        let mut bgp = Vec::new();
        let mut routes = Vec::new();
        let mut vrfs = vec![None];
        vrfs.extend(self.vrfs.clone().into_iter().map(Some));
        for vrf in vrfs {
            let suffix = vrf
                .as_ref()
                .map(|v| format!(" vpn-instance {v}"))
                .unwrap_or_default();
            let name = vrf.unwrap_or_else(|| "default".to_string());
            // A device without BGP answers with an error line: no sessions.
            let peers = self
                .cli(&format!("display bgp peer ipv4{suffix}"), None)
                .await?;
            if errors(&peers).is_empty() {
                bgp.extend(bgp_peers(&peers, &name));
            }
            let table = self
                .ok(&format!("display ip routing-table{suffix}"))
                .await?;
            routes.extend(routing_table(&table, &name));
        }
        let bfd = self.cli("display bfd session", None).await?;
        let bfd = if errors(&bfd).is_empty() {
            bfd_sessions(&bfd)
        } else {
            Vec::new()
        };
        Ok(Observed {
            lldp: lldp_list(&lldp)?,
            interfaces: interface_brief(&brief),
            bgp,
            bfd,
            routes,
        })
    }

    async fn confirm(&mut self) -> Result<()> {
        let point = self.pending.take();
        if let Some((point, deadline)) = &point
            && self.native_timer
            && Instant::now() >= *deadline
        {
            self.locked = true;
            self.uploaded = true;
            let _ = self.unlock().await;
            return Err(PushError::TimerExpired {
                point: point.clone(),
            });
        }
        let errs = if self.native_timer {
            self.ok("system-view").await?;
            let out = self.cli("configuration commit", None).await?;
            self.ok("return").await?;
            errors(&out).into_iter().map(str::to_string).collect()
        } else {
            Vec::new()
        };
        if !errs.is_empty() {
            // No commit in progress: the timer ran out (the device rolled
            // back), or the change was confirmed already.
            return Err(PushError::TimerExpired {
                point: point
                    .map(|p| p.0)
                    .unwrap_or_else(|| "the configuration before the commit".to_string()),
            });
        }
        self.yes("save force").await?;
        self.locked = true;
        self.uploaded = true;
        self.unlock().await?;
        if let Some((point, _)) = point {
            self.yes(&format!("delete /unreserved {point}")).await?;
        }
        Ok(())
    }

    async fn rollback(&mut self, point: &str) -> Result<()> {
        let valid = point
            .strip_prefix("flash:/efl-rollback-")
            .and_then(|p| p.strip_suffix(".cfg"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !valid {
            return Err(PushError::Parameter {
                parameter: "point".to_string(),
                message: format!("`{point}` is not a rollback file this client makes"),
            });
        }
        self.ok("system-view").await?;
        let refused = self.replace(point).await?;
        self.ok("return").await?;
        if !refused.is_empty() {
            return Err(protocol(
                &format!("replacing the configuration with {point}"),
                refused.join(" "),
            ));
        }
        // Saved, so that a reboot does not bring back what was rolled
        // back (after a confirm, `save force` wrote the candidate to the
        // next-startup file; Fundamentals Configuration Guide,
        // "Configuration file management").
        self.yes("save force").await?;
        self.pending = None;
        // Our files, whether this process or an earlier one (the push
        // before a watchdog) left them; a file already gone is no error.
        for file in [CANDIDATE, OWNER] {
            self.cli(&format!("delete /unreserved {file}"), Some("Y"))
                .await?;
        }
        self.cli(&format!("rmdir {LOCK_DIR}"), Some("Y")).await?;
        self.locked = false;
        self.uploaded = false;
        self.loaded = false;
        Ok(())
    }
}

// ------------------------------------------------------------ configuration

/// A configuration as `#`-separated sections (blank lines, `return` and
/// the `#` lines dropped).
fn sections(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if line == "#" || line == "return" {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        cur.push(line.to_string());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Top-level commands print indented in a section without a name.
fn is_global(section: &[String]) -> bool {
    section.first().is_some_and(|l| l.starts_with(' '))
}

fn vpn_instances(config: &str) -> Vec<String> {
    config
        .lines()
        .filter_map(|l| l.strip_prefix("ip vpn-instance "))
        .map(|v| v.trim().to_string())
        .collect()
}

/// `ip route-static vpn-instance V ...` -> `V`.
fn route_vrf(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("ip route-static vpn-instance ")?
        .split_whitespace()
        .next()
}

/// The configuration `configuration replace file` is given: the running
/// one with the candidate laid over it (see the module comment).
pub fn replace_target(running: &str, candidate: &str) -> String {
    let run = sections(running);
    let cand = sections(candidate);
    let named: Vec<&Vec<String>> = cand.iter().filter(|s| !is_global(s)).collect();
    let cand_global: Vec<&String> = cand.iter().filter(|s| is_global(s)).flatten().collect();
    let owned_vrfs = vpn_instances(candidate);
    let cand_sysname = cand_global
        .iter()
        .find(|l| l.trim().starts_with("sysname "));
    let keep_global = |line: &String| {
        let t = line.trim();
        if t.starts_with("sysname ") && cand_sysname.is_some() {
            return false;
        }
        !route_vrf(line).is_some_and(|v| owned_vrfs.iter().any(|o| o == v))
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut used = vec![false; named.len()];
    for section in &run {
        if is_global(section) {
            let mut kept: Vec<String> = Vec::new();
            for line in section {
                if line.trim().starts_with("sysname ")
                    && let Some(s) = cand_sysname
                {
                    kept.push((*s).clone());
                } else if keep_global(line) {
                    kept.push(line.clone());
                }
            }
            if !kept.is_empty() {
                out.push(kept);
            }
            continue;
        }
        match named.iter().position(|c| c[0] == section[0]) {
            Some(i) => {
                used[i] = true;
                out.push(named[i].clone());
            }
            None => out.push(section.clone()),
        }
    }
    // New named sections: interfaces at the end, the rest before the first
    // interface (VPN instances and VLANs come before what binds to them).
    let first_interface = out
        .iter()
        .position(|s| s[0].starts_with("interface "))
        .unwrap_or(out.len());
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (i, s) in named.iter().enumerate() {
        if used[i] {
            continue;
        }
        if s[0].starts_with("interface ") {
            after.push((*s).clone());
        } else {
            before.push((*s).clone());
        }
    }
    out.splice(first_interface..first_interface, before);
    out.extend(after);
    // Candidate top-level lines not yet present, as one block at the end.
    let present: std::collections::HashSet<&String> =
        out.iter().filter(|s| is_global(s)).flatten().collect();
    let extra: Vec<String> = cand_global
        .into_iter()
        .filter(|l| !present.contains(l))
        .cloned()
        .collect();
    if !extra.is_empty() {
        out.push(extra);
    }
    let mut text = String::new();
    for s in out {
        text.push_str("#\n");
        for l in s {
            text.push_str(&l);
            text.push('\n');
        }
    }
    text.push_str("#\nreturn\n");
    text
}

/// The diff running -> target, per section: a changed named section shows
/// its name as context (a leading space) and its removed (`-`) and added
/// (`+`) lines; top-level lines show alone. Empty when equal.
pub fn section_diff(running: &str, target: &str) -> String {
    let a = sections(running);
    let b = sections(target);
    let split = |s: &[Vec<String>]| {
        let globals: Vec<String> = s
            .iter()
            .filter(|x| is_global(x))
            .flatten()
            .cloned()
            .collect();
        let named: Vec<Vec<String>> = s.iter().filter(|x| !is_global(x)).cloned().collect();
        (globals, named)
    };
    let (ga, na) = split(&a);
    let (gb, nb) = split(&b);
    let mut out = String::new();
    for l in minus(&ga, &gb) {
        out.push_str(&format!("-{l}\n"));
    }
    for l in minus(&gb, &ga) {
        out.push_str(&format!("+{l}\n"));
    }
    let find = |n: &[Vec<String>], head: &str| n.iter().find(|s| s[0] == head).cloned();
    let mut heads: Vec<&String> = na.iter().map(|s| &s[0]).collect();
    for s in &nb {
        if !heads.contains(&&s[0]) {
            heads.push(&s[0]);
        }
    }
    for head in heads {
        match (find(&na, head), find(&nb, head)) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                out.push_str(&format!(" {head}\n"));
                for l in minus(&x[1..], &y[1..]) {
                    out.push_str(&format!("-{l}\n"));
                }
                for l in minus(&y[1..], &x[1..]) {
                    out.push_str(&format!("+{l}\n"));
                }
            }
            (Some(x), None) => x.iter().for_each(|l| out.push_str(&format!("-{l}\n"))),
            (None, Some(y)) => y.iter().for_each(|l| out.push_str(&format!("+{l}\n"))),
            (None, None) => {}
        }
    }
    out
}

/// The lines of `a` not in `b`, counting repeats, in `a`'s order.
fn minus(a: &[String], b: &[String]) -> Vec<String> {
    let mut rest: Vec<&String> = b.iter().collect();
    a.iter()
        .filter(|l| match rest.iter().position(|r| r == l) {
            Some(i) => {
                rest.swap_remove(i);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

impl Locking for Comware {
    fn lock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send {
        Comware::lock(self)
    }

    fn unlock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send {
        Comware::unlock(self)
    }

    fn load_locked(
        &mut self,
        candidate: &str,
    ) -> impl std::future::Future<Output = Result<String>> + Send {
        Comware::load_locked(self, candidate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts() {
        assert_eq!(prompt_name("<sw01>"), Some("sw01"));
        assert_eq!(prompt_name("[sw01]"), Some("sw01"));
        assert_eq!(prompt_name("[~sw01-vlan10]"), Some("sw01-vlan10"));
        assert_eq!(prompt_name("<sw 01>"), None);
        assert_eq!(prompt_name("[Y/N]:"), None);
        assert!(prompt_end("display x\n output\n<sw01>").is_some());
        assert!(prompt_end("display x\n output").is_none());
        assert!(question_end("Continue? [Y/N]:").is_some());
    }

    const RUNNING: &str = "#\n version 7.1.070, Release 6710\n#\n sysname sw01\n ip route-static vpn-instance Vrf101 10.9.0.0 16 10.255.0.9\n ip route-static vpn-instance mgmt 0.0.0.0 0 192.0.2.1\n#\nip vpn-instance mgmt\n#\nip vpn-instance Vrf101\n description old\n#\ninterface HundredGigE1/0/1\n port link-mode route\n ip binding vpn-instance Vrf101\n ip address 10.255.0.1 255.255.255.254\n#\ninterface M-GigabitEthernet0/0/0\n ip binding vpn-instance mgmt\n ip address 192.0.2.10 255.255.255.0\n#\n local-user admin class manage\n#\nreturn\n";

    const CANDIDATE: &str = "#\n sysname sw01\n#\n lldp global enable\n#\nip vpn-instance Vrf101\n description sw01-u\n#\nvlan 101\n name sw01-u\n#\ninterface HundredGigE1/0/1\n port link-mode route\n ip binding vpn-instance Vrf101\n ip address 10.255.0.1 255.255.255.254\n#\ninterface HundredGigE1/0/2\n shutdown\n#\n ip route-static vpn-instance Vrf101 10.100.16.0 24 10.255.0.80\n#\nreturn\n";

    #[test]
    fn target_keeps_what_the_plan_does_not_own() {
        let t = replace_target(RUNNING, CANDIDATE);
        assert_eq!(
            t,
            "#\n version 7.1.070, Release 6710\n#\n sysname sw01\n ip route-static vpn-instance mgmt 0.0.0.0 0 192.0.2.1\n\
#\nip vpn-instance mgmt\n#\nip vpn-instance Vrf101\n description sw01-u\n#\nvlan 101\n name sw01-u\n\
#\ninterface HundredGigE1/0/1\n port link-mode route\n ip binding vpn-instance Vrf101\n ip address 10.255.0.1 255.255.255.254\n\
#\ninterface M-GigabitEthernet0/0/0\n ip binding vpn-instance mgmt\n ip address 192.0.2.10 255.255.255.0\n\
#\n local-user admin class manage\n#\ninterface HundredGigE1/0/2\n shutdown\n\
#\n lldp global enable\n ip route-static vpn-instance Vrf101 10.100.16.0 24 10.255.0.80\n#\nreturn\n"
        );
        let d = section_diff(RUNNING, &t);
        assert_eq!(
            d,
            "- ip route-static vpn-instance Vrf101 10.9.0.0 16 10.255.0.9\n\
+ lldp global enable\n\
+ ip route-static vpn-instance Vrf101 10.100.16.0 24 10.255.0.80\n\
\x20ip vpn-instance Vrf101\n\
- description old\n\
+ description sw01-u\n\
+vlan 101\n\
+ name sw01-u\n\
+interface HundredGigE1/0/2\n\
+ shutdown\n"
        );
        // Pushing again: nothing to do.
        assert_eq!(section_diff(&t, &replace_target(&t, CANDIDATE)), "");
    }
}
