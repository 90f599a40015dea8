//! Arista EOS over eAPI (HTTPS `POST /command-api`, JSON-RPC 2.0
//! `runCmds`, basic auth), with a named configure session.
//!
//! Every call starts with `enable` (as pyeapi does). The steps:
//!
//! - load: `show configuration sessions detail` (another session waiting
//!   on a commit timer holds the configuration: [`PushError::Locked`]),
//!   then `configure session S`, `rollback clean-config` (replace
//!   semantics), the candidate's lines, `end`; the diff is `show
//!   session-config named S diffs` (text).
//! - commit: `copy running-config flash:S.cfg` (the rollback point), then
//!   `configure session S commit timer HH:MM:SS` (or plain `commit` when
//!   the push keeps the time itself).
//! - confirm: `show configuration sessions detail` (the session must
//!   still wait on its timer, else the device has rolled back:
//!   [`PushError::TimerExpired`]), `configure session S commit`, `write
//!   memory`.
//! - rollback: `configure session S abort` while the session waits on its
//!   timer, then `configure replace flash:S.cfg`.
//! - discard: `configure session S abort`.
//!
//! Field names of `show configuration sessions detail` changed in EOS
//! 4.32 (napalm issue #2166): the state is read from `state`, and a timer
//! is recognised by `pendingCommitTimer` or any state naming a commit
//! timer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use super::device::{
    BfdPeer, BgpSession, Commit, Connect, Device, Identity, Interface, LldpNeighbour, Observed,
    Opening, Route, Target, Transport,
};
use super::error::{PushError, Result};
use super::http::Http;
use super::keep;

static CALL: AtomicU64 = AtomicU64::new(1);

/// An EOS switch.
#[derive(Debug)]
pub struct Eos {
    http: Http,
    native: bool,
    session: String,
    loaded: bool,
    pending_timer: bool,
    /// The release `show version` reported (`4.32.1F`), once read.
    version: Option<String>,
    /// The rollback point is saved (`prepare`).
    prepared: bool,
}

impl Connect for Eos {
    const TRANSPORTS: &'static [Transport] = &[Transport::Https];
    fn connect(target: &Target, opening: &Opening<'_>) -> Result<Eos> {
        Eos::resumed(
            target,
            opening.session,
            opening.native_timer,
            opening.waiting,
        )
    }
}

impl Eos {
    /// The client of `target`. `session` names the configure session (the
    /// push gives `efl-push-<candidate hash>`); `native` false commits
    /// without the device's timer (the push's watchdog keeps the time).
    pub fn new(target: &Target, session: &str, native: bool) -> Result<Eos> {
        Ok(Eos {
            http: Http::new(target)?,
            native,
            session: session.to_string(),
            loaded: false,
            pending_timer: false,
            version: None,
            prepared: false,
        })
    }

    /// A client for a session committed by an earlier process (`push
    /// confirm`, `push rollback`, the watchdog): `waiting` when the session
    /// may still wait on the device's timer.
    pub fn resumed(target: &Target, session: &str, native: bool, waiting: bool) -> Result<Eos> {
        let mut e = Eos::new(target, session, native)?;
        e.pending_timer = native && waiting;
        Ok(e)
    }

    /// Runs commands (after `enable`) and returns their results, without
    /// `enable`'s. A JSON-RPC error is the device refusing a command.
    async fn run(&self, cmds: &[Value], format: &str, action: &str) -> Result<Vec<Value>> {
        let mut all = vec![json!("enable")];
        all.extend_from_slice(cmds);
        let id = CALL.fetch_add(1, Ordering::Relaxed);
        let body = json!({
            "jsonrpc": "2.0",
            "method": "runCmds",
            "params": {"version": 1, "cmds": all, "format": format},
            "id": format!("efl-{id}"),
        });
        let (status, v) = self
            .http
            .send(Method::POST, "/command-api", Some(&body), action)
            .await?;
        if let Some(e) = v.get("error") {
            return Err(refusal(e, action));
        }
        if !status.is_success() {
            return Err(PushError::Protocol {
                action: action.to_string(),
                message: format!("HTTP {status}: {v}"),
            });
        }
        match v.get("result") {
            Some(Value::Array(r)) if r.len() == all.len() => Ok(r[1..].to_vec()),
            _ => Err(PushError::Protocol {
                action: action.to_string(),
                message: format!("expected {} results, got {v}", all.len()),
            }),
        }
    }

    /// The reason EOS gives for each session that is not established, as
    /// [`BgpSession::last_reset`]: eAPI has no JSON field for it that
    /// any public recording shows, so the neighbour's text is read
    /// (`show ip bgp neighbors <peer> vrf <vrf>`, eAPI's `text` format),
    /// only for the sessions that are down, in one request.
    async fn refusals(&self, o: &mut Observed) -> Result<()> {
        let down: Vec<usize> = (0..o.bgp.len())
            .filter(|&i| !o.bgp[i].established)
            .collect();
        if down.is_empty() {
            return Ok(());
        }
        let cmds: Vec<Value> = down
            .iter()
            .map(|&i| {
                let b = &o.bgp[i];
                json!(format!("show ip bgp neighbors {} vrf {}", b.peer, b.vrf))
            })
            .collect();
        let r = self
            .run(&cmds, "text", "reading why BGP sessions are down")
            .await?;
        for (&i, answer) in down.iter().zip(&r) {
            let text = answer.get("output").and_then(Value::as_str).unwrap_or("");
            o.bgp[i].last_reset = refusal_reason(text);
        }
        Ok(())
    }

    fn point(&self) -> String {
        format!("flash:{}.cfg", self.session)
    }

    /// The sessions waiting on a commit timer, with what the device says
    /// of each ([`pending_timers`]).
    async fn sessions(&self) -> Result<Vec<(String, String)>> {
        let r = self
            .run(
                &[json!("show configuration sessions detail")],
                "json",
                "reading configure sessions",
            )
            .await?;
        Ok(pending_timers(&r[0]))
    }
}

/// The sessions of `show configuration sessions detail` that wait on a
/// commit timer, with what the device says of each. Both documented
/// shapes are read, whatever the release says it is:
///
/// - EOS 4.31 and earlier: the session's own `state` is
///   `pendingCommitTimer` (with `commitBy`);
/// - EOS 4.32 and later: every session reads `committed` at once, and the
///   pending timer is only the top-level `commitTimerSessionName` and
///   `commitTimerExpireTime`, present while a timer runs (napalm issue
///   #2166, its fix in napalm PR #2281; cnaas-nms issue #395).
pub fn pending_timers(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(name) = v
        .get("commitTimerSessionName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        let expires = match v.get("commitTimerExpireTime") {
            Some(t) if !t.is_null() => format!("commit timer expires at {t}"),
            _ => "commit timer running".to_string(),
        };
        out.push((name.to_string(), expires));
    }
    for (name, sess) in obj(v.get("sessions")) {
        let state = sess.get("state").and_then(Value::as_str).unwrap_or("");
        if waits_on_timer(state) && !out.iter().any(|(n, _)| n == name) {
            out.push((name.clone(), state.to_string()));
        }
    }
    out
}

/// True for a session state that waits on a commit timer.
fn waits_on_timer(state: &str) -> bool {
    let s = state.to_ascii_lowercase().replace(['-', '_', ' '], "");
    s.contains("pendingcommittimer") || s.contains("committimer")
}

/// The device's refusal: its message and the per-command errors.
fn refusal(e: &Value, action: &str) -> PushError {
    let message = e.get("message").and_then(Value::as_str).unwrap_or("error");
    let mut details = Vec::new();
    if let Some(Value::Array(data)) = e.get("data") {
        for d in data {
            if let Some(Value::Array(errs)) = d.get("errors") {
                details.extend(errs.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
    }
    let text = if details.is_empty() {
        message.to_string()
    } else {
        format!("{message} ({})", details.join("; "))
    };
    if text.contains("locked") || text.contains("lock held") {
        return PushError::Locked { by: text };
    }
    match e.get("code").and_then(Value::as_i64) {
        // 1002: a command failed (invalid input); 1000: general error.
        Some(1002 | 1000) => PushError::Rejected { message: text },
        _ => PushError::Protocol {
            action: action.to_string(),
            message: text,
        },
    }
}

/// The candidate's configuration lines: comments (`!`), blank lines and
/// the final `end` left out.
fn candidate_lines(candidate: &str) -> Vec<String> {
    candidate
        .lines()
        .map(str::trim_end)
        .filter(|l| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with('!') && t != "end"
        })
        .map(str::to_string)
        .collect()
}

/// `HH:MM:SS` of a timer (at least one second, at most 23:59:59).
fn hms(d: Duration) -> String {
    let s = d.as_secs().clamp(1, 86_399);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

impl Device for Eos {
    async fn identity(&mut self) -> Result<Identity> {
        let r = self
            .run(
                &[json!("show hostname"), json!("show version")],
                "json",
                "reading the hostname",
            )
            .await?;
        let hostname = r[0]
            .get("hostname")
            .and_then(Value::as_str)
            .ok_or_else(|| PushError::Protocol {
                action: "reading the hostname".to_string(),
                message: "no `hostname` in `show hostname`".to_string(),
            })?;
        self.version = r[1]
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(Identity {
            hostname: hostname.to_string(),
            serial: r[1]
                .get("serialNumber")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        })
    }

    async fn load(&mut self, candidate: &str) -> Result<String> {
        for (name, state) in self.sessions().await? {
            if name != self.session {
                let release = self
                    .version
                    .as_deref()
                    .map_or_else(String::new, |v| format!(", EOS {v}"));
                return Err(PushError::Locked {
                    by: format!("configure session {name} ({state}{release})"),
                });
            }
        }
        // `rollback clean-config` starts from the factory default: the
        // candidate carries the device's management and everything else
        // the plan does not own.
        let r = self
            .run(
                &[json!("show running-config")],
                "text",
                "reading the running configuration",
            )
            .await?;
        let running = r[0].get("output").and_then(Value::as_str).unwrap_or("");
        let lines = keep::eos_candidate(running, &candidate_lines(candidate));
        let cut = keep::eos_cut(running, &lines, self.http.peer(), self.http.user());
        if !cut.is_empty() {
            return Err(PushError::Management {
                address: self.http.address().to_string(),
                user: self.http.user().to_string(),
                lines: cut,
            });
        }
        let s = &self.session;
        let mut cmds = vec![
            json!(format!("configure session {s}")),
            json!("rollback clean-config"),
        ];
        cmds.extend(lines.into_iter().map(Value::String));
        cmds.push(json!("end"));
        // The session exists from its first command on, even when a line
        // is refused: `discard` aborts it.
        self.loaded = true;
        self.run(&cmds, "json", "loading the candidate").await?;
        let r = self
            .run(
                &[json!(format!("show session-config named {s} diffs"))],
                "text",
                "reading the diff",
            )
            .await?;
        let text = r[0].get("output").and_then(Value::as_str).unwrap_or("");
        // Only the changed lines: `+`/`-` of the unified diff, no headers.
        let mut diff = String::new();
        for l in text.lines() {
            if (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
            {
                diff.push_str(l);
                diff.push('\n');
            }
        }
        Ok(diff)
    }

    async fn discard(&mut self) -> Result<()> {
        if self.loaded {
            let s = &self.session;
            self.run(
                &[json!(format!("configure session {s} abort"))],
                "json",
                "dropping the session",
            )
            .await?;
            self.loaded = false;
        }
        Ok(())
    }

    async fn prepare(&mut self) -> Result<String> {
        let point = self.point();
        self.run(
            &[json!(format!("copy running-config {point}"))],
            "json",
            "saving the rollback point",
        )
        .await?;
        self.prepared = true;
        Ok(point)
    }

    fn native_timer(&self) -> bool {
        self.native
    }

    async fn commit(&mut self, timer: Duration) -> Result<Commit> {
        let s = self.session.clone();
        let point = if self.prepared {
            self.point()
        } else {
            self.prepare().await?
        };
        self.prepared = false;
        let cmd = if self.native {
            format!("configure session {s} commit timer {}", hms(timer))
        } else {
            format!("configure session {s} commit")
        };
        self.run(&[json!(cmd)], "json", "committing").await?;
        self.pending_timer = self.native;
        self.loaded = false;
        Ok(Commit {
            point,
            native_timer: self.native,
        })
    }

    async fn observe(&mut self) -> Result<Observed> {
        let all = [
            json!("show lldp neighbors"),
            json!("show interfaces status"),
            json!("show ip bgp summary vrf all"),
            json!("show bfd peers"),
            json!("show ip route vrf all"),
        ];
        let mut o = match self.run(&all, "json", "reading the state").await {
            Ok(r) => observed(&r),
            // A switch that runs no BGP refuses the summary ("BGP
            // inactive"): no sessions, which is no fault for a static plan
            // (a BGP plan's sessions are then named as missing), and no
            // refused candidate either.
            Err(PushError::Rejected { message } | PushError::Protocol { message, .. })
                if message.contains("BGP inactive") =>
            {
                let mut r = self
                    .run(
                        &[
                            json!("show lldp neighbors"),
                            json!("show interfaces status"),
                            json!("show bfd peers"),
                            json!("show ip route vrf all"),
                        ],
                        "json",
                        "reading the state",
                    )
                    .await?;
                r.insert(2, json!({"vrfs": {}}));
                observed(&r)
            }
            Err(e) => return Err(e),
        };
        self.refusals(&mut o).await?;
        Ok(o)
    }

    async fn confirm(&mut self) -> Result<()> {
        let s = self.session.clone();
        if self.pending_timer {
            let waiting = self.sessions().await?.into_iter().any(|(n, _)| n == s);
            if !waiting {
                self.pending_timer = false;
                return Err(PushError::TimerExpired {
                    point: self.point(),
                });
            }
            self.run(
                &[json!(format!("configure session {s} commit"))],
                "json",
                "confirming",
            )
            .await?;
            self.pending_timer = false;
        }
        self.run(&[json!("write memory")], "json", "saving").await?;
        Ok(())
    }

    async fn rollback(&mut self, point: &str) -> Result<()> {
        let s = self.session.clone();
        let mut cmds = Vec::new();
        // A commit that still waits on its timer is aborted (the device
        // goes back by itself); the device says whether it does, in
        // either shape of its answer.
        if self.pending_timer && self.sessions().await?.iter().any(|(n, _)| *n == s) {
            cmds.push(json!(format!("configure session {s} abort")));
        }
        cmds.push(json!(format!("configure replace {point}")));
        // Saved, so that a reboot does not bring back what was rolled
        // back (napalm's rollback does the same).
        cmds.push(json!("write memory"));
        self.run(&cmds, "json", "rolling back").await?;
        self.pending_timer = false;
        Ok(())
    }
}

/// Why EOS says a neighbour is down, from its `show ip bgp neighbors`
/// text: the `Peering failure hint:` line when there is one, else the
/// NOTIFICATION of the last `Last sent notification:` or `Last rcvd
/// notification:` line (without its times), as the device words it. The
/// shape is that of real switches' output (napalm's EOS test data; the
/// EANTC 2025 captures of EOS 4.33.1.1F, where a refused AS reads
/// `Open Message Error/bad AS number` on both lines). Control characters
/// are dropped, and the text is capped: it comes from the device.
pub fn refusal_reason(text: &str) -> Option<String> {
    let clean = |s: &str| -> String {
        s.trim()
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect()
    };
    let mut notifications = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(hint) = l.strip_prefix("Peering failure hint:") {
            return Some(clean(hint)).filter(|h| !h.is_empty());
        }
        if let Some(rest) = l
            .strip_prefix("Last sent notification:")
            .or_else(|| l.strip_prefix("Last rcvd notification:"))
        {
            let what = rest.split(", Last time").next().unwrap_or(rest);
            notifications.push(clean(what));
        }
    }
    // A session that never came up was refused by an OPEN check, which
    // says more than an older Cease either way.
    let open = notifications
        .iter()
        .position(|n| n.to_ascii_lowercase().starts_with("open message error"));
    open.or((!notifications.is_empty()).then_some(0))
        .map(|i| notifications.swap_remove(i))
        .filter(|n| !n.is_empty())
}

fn obj(v: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    v.and_then(Value::as_object).into_iter().flatten()
}

/// The answers of the five `show` commands as [`Observed`].
fn observed(r: &[Value]) -> Observed {
    let mut o = Observed::default();
    if let Some(Value::Array(ns)) = r[0].get("lldpNeighbors") {
        for n in ns {
            let s = |k: &str| n.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            o.lldp.push(LldpNeighbour {
                port: s("port"),
                system: s("neighborDevice"),
                port_id: s("neighborPort"),
            });
        }
    }
    for (name, i) in obj(r[1].get("interfaceStatuses")) {
        o.interfaces.push(Interface {
            name: name.clone(),
            up: i.get("linkStatus").and_then(Value::as_str) == Some("connected"),
            speed_mbps: i
                .get("bandwidth")
                .and_then(Value::as_u64)
                .filter(|b| *b > 0)
                .map(|b| b / 1_000_000),
        });
    }
    for (vrf, v) in obj(r[2].get("vrfs")) {
        for (peer, p) in obj(v.get("peers")) {
            o.bgp.push(BgpSession {
                vrf: vrf.clone(),
                peer: peer.clone(),
                remote_as: match p.get("asn") {
                    Some(Value::String(s)) => s.parse().ok(),
                    Some(Value::Number(n)) => n.as_u64().and_then(|a| u32::try_from(a).ok()),
                    _ => None,
                },
                established: p.get("peerState").and_then(Value::as_str) == Some("Established"),
                last_reset: None,
            });
        }
    }
    for (vrf, v) in obj(r[3].get("vrfs")) {
        for (peer, p) in obj(v.get("ipv4Neighbors")) {
            let up = obj(p.get("peerStats"))
                .any(|(_, s)| s.get("status").and_then(Value::as_str) == Some("up"));
            o.bfd.push(BfdPeer {
                vrf: vrf.clone(),
                peer: peer.clone(),
                up,
            });
        }
    }
    for (vrf, v) in obj(r[4].get("vrfs")) {
        for (prefix, p) in obj(v.get("routes")) {
            let mut hops = Vec::new();
            if let Some(Value::Array(vias)) = p.get("vias") {
                for via in vias {
                    if let Some(a) = via.get("nexthopAddr").and_then(Value::as_str) {
                        hops.push(a.to_string());
                    }
                }
            }
            o.routes.push(Route {
                vrf: vrf.clone(),
                prefix: prefix.clone(),
                next_hops: hops,
            });
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_down_neighbour_reads_as_the_switch_words_it() {
        // Lines as real EOS prints them: the EANTC 2025 captures (EOS
        // 4.33.1.1F) and napalm's EOS test data.
        let refused = "BGP neighbor is 10.0.0.53, remote AS 64512, internal link\n  BGP version 4, remote router ID 0.0.0.0, VRF default\n  BGP state is Active\n  Peering failure hint: Open Message Error/bad AS number\n  Last sent notification:Open Message Error/bad AS number, Last time 00:00:04, First time 00:41:18, Repeats 495\n";
        assert_eq!(
            refusal_reason(refused).as_deref(),
            Some("Open Message Error/bad AS number")
        );
        let no_hint = "  BGP state is Active\n  Last sent notification:Cease/administrative reset, Last time 00:11:05\n  Last rcvd notification:Open Message Error/bad AS number, Last time 00:00:04\n";
        assert_eq!(
            refusal_reason(no_hint).as_deref(),
            Some("Open Message Error/bad AS number")
        );
        let cease = "  Last sent notification:Hold Timer Expired Error/Unspecified, Last time   12d15h, First time   59d08h, Repeats 1\n";
        assert_eq!(
            refusal_reason(cease).as_deref(),
            Some("Hold Timer Expired Error/Unspecified")
        );
        assert_eq!(refusal_reason("  BGP state is Active\n"), None);
        assert_eq!(refusal_reason(""), None);
        // A hostile device's text is cleaned and capped.
        let hostile = format!(
            "  Peering failure hint: \u{1b}[2Jbad{}\n",
            "x".repeat(10_000)
        );
        let r = refusal_reason(&hostile).expect("reason");
        assert!(!r.contains('\u{1b}') && r.chars().count() <= 200, "{r}");
    }

    #[test]
    fn timers_are_hh_mm_ss() {
        assert_eq!(hms(Duration::from_secs(300)), "00:05:00");
        assert_eq!(hms(Duration::from_secs(3725)), "01:02:05");
        assert_eq!(hms(Duration::ZERO), "00:00:01");
    }

    #[test]
    fn candidate_lines_skip_comments() {
        let got =
            candidate_lines("! a\nhostname sw01\n!\ninterface Ethernet1/1\n   mtu 9214\n\nend\n");
        assert_eq!(
            got,
            vec!["hostname sw01", "interface Ethernet1/1", "   mtu 9214"]
        );
    }

    #[test]
    fn refusals_keep_the_devices_words() {
        let e = json!({"code": 1002, "message": "CLI command 3 of 4 'mtu 99999' failed: invalid command",
                       "data": [{}, {}, {"errors": ["Invalid input (at token 1: '99999')"]}]});
        match refusal(&e, "x") {
            PushError::Rejected { message } => {
                assert!(
                    message.contains("'mtu 99999' failed") && message.contains("at token 1"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn both_shapes_of_pending_timers_are_read() {
        // EOS 4.31 (napalm issue #2166).
        let old = json!({"sessions": {"troubleshooting": {"state": "pendingCommitTimer",
            "completedTime": 1739832190.8418295, "commitBy": 1739835851.8256721,
            "commitUser": "adminuser", "description": "", "instances": {}}},
            "maxSavedSessions": 1, "maxOpenSessions": 5});
        assert_eq!(
            pending_timers(&old),
            [(
                "troubleshooting".to_string(),
                "pendingCommitTimer".to_string()
            )]
        );
        // EOS 4.32: the session reads committed; the timer is top-level.
        let new = json!({"sessions": {"troubleshooting": {"state": "committed",
            "completedTime": 1739832020.1816368, "commitUser": "adminuser",
            "description": "", "instances": {}}},
            "maxSavedSessions": 1, "maxOpenSessions": 5,
            "commitTimerSessionName": "troubleshooting", "commitTimerExpireTime": 1739835620.5});
        assert_eq!(
            pending_timers(&new),
            [(
                "troubleshooting".to_string(),
                "commit timer expires at 1739835620.5".to_string()
            )]
        );
        // 4.32 with nothing pending: no top-level keys.
        let none = json!({"sessions": {"a": {"state": "committed"}, "b": {"state": "pending"}}});
        assert!(pending_timers(&none).is_empty());
    }

    #[test]
    fn timer_states() {
        assert!(waits_on_timer("pendingCommitTimer"));
        assert!(waits_on_timer("pending commit timer"));
        assert!(!waits_on_timer("completed"));
        assert!(!waits_on_timer("pending"));
    }
}
