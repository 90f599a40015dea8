//! The push itself: candidates from the planner's render, the rollout in
//! batches (the switches of a batch at once, as tokio tasks), and per
//! switch identity, load, diff, commit with a confirm timer, verify,
//! confirm or roll back, each step journaled.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use planner::checked::CheckedPlan;
use planner::render::Vendor;
use planner::text::sha256_hex;
use serde::Serialize;

use super::device::{Candidate, same_host};
use super::devices::{self, Devices, Entry};
use super::error::{PushError, Result};
use super::journal::{self, Journal, Outcome, Phase, SwitchRecord};
use super::rollout::{self, Policy};
use super::verify;
use super::{Client, Device};

// Shared with `push confirm|rollback` and the watchdog (`ops`), and
// named here by the binary and the tests.
pub use super::connect::{CONFIRM_MARGIN, chain, connect, session_name};

/// What `push` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Stop after the diff.
    pub dry_run: bool,
    /// The confirm timer.
    pub timer: Duration,
    /// How long verification observes a switch that does not match yet
    /// (sessions coming up, routes being installed) before it fails.
    pub settle: Duration,
    /// Confirm after a passed verification (false: leave the timer
    /// running for `push confirm`).
    pub confirm: bool,
    /// The rollout's canary, batch size and share.
    pub policy: Policy,
    /// Switches to push (empty: all of the plan).
    pub switches: Vec<String>,
    /// The journal file.
    pub journal: PathBuf,
    /// This program, to start watchdogs (`push watchdog`).
    pub exe: PathBuf,
    /// The plan file (absolute; the watchdog reads it).
    pub plan_file: PathBuf,
    /// The devices file (absolute; the watchdog reads it).
    pub devices_file: PathBuf,
    /// Each switch's stage as it happens, on stderr.
    pub progress: Progress,
}

/// How a push shows each switch's stage as it happens (on stderr: stdout
/// carries only the final report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Nothing (`--quiet`).
    Off,
    /// One line per stage: `push: sw1: committing (rollback point 1)`.
    Text,
    /// One JSON object per line: `{"event":"stage","switch":"sw1",
    /// "stage":"committing","detail":"...","seconds":0.42}` (batches:
    /// `{"event":"batch","batch":0,"switches":["sw1"]}`).
    Json,
}

impl Progress {
    /// Shows that `switch` reached `stage` (`detail` says more) after
    /// `seconds`. Device strings in `detail` arrive escaped.
    pub fn stage(self, switch: &str, stage: &str, detail: &str, seconds: f64) {
        let switch = planner::names::escape(switch);
        match self {
            Progress::Off => {}
            Progress::Text if detail.is_empty() => eprintln!("push: {switch}: {stage}"),
            Progress::Text => eprintln!("push: {switch}: {stage} ({detail})"),
            Progress::Json => eprintln!(
                "{}",
                serde_json::json!({"event": "stage", "switch": switch, "stage": stage,
                    "detail": detail, "seconds": (seconds * 100.0).round() / 100.0})
            ),
        }
    }

    /// Shows that batch `i` of `switches` starts.
    pub fn batch(self, i: usize, switches: &[String]) {
        match self {
            Progress::Off => {}
            Progress::Text => eprintln!(
                "push: batch {i}{}: {}",
                if i == 0 { " (canary)" } else { "" },
                switches.join(", ")
            ),
            Progress::Json => eprintln!(
                "{}",
                serde_json::json!({"event": "batch", "batch": i, "switches": switches})
            ),
        }
    }
}

/// One switch in the report.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchReport {
    /// The physical switch.
    pub switch: String,
    /// Its vendor.
    pub vendor: String,
    /// Its batch (0 is the canary).
    pub batch: usize,
    /// Where it ended.
    pub phase: Phase,
    /// Removed and added lines of the diff.
    pub diff_lines: Option<usize>,
    /// The diff, `-` removed and `+` added lines.
    pub diff: String,
    /// Verification: `None` not run, empty passed, else mismatches.
    pub mismatches: Option<Vec<String>>,
    /// BGP sessions that waited on peers not configured yet when the
    /// switch was verified (a first install).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Verified in part of a fabric: confirmed only once every switch of
    /// the push passes the full check.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub waits_for_fabric: bool,
    /// The error that stopped it.
    pub error: Option<String>,
    /// Seconds it took.
    pub seconds: f64,
    /// True when the error is the device refusing the push as asked or
    /// bad input (exit code 2), false for a failure on the way.
    #[serde(skip)]
    pub bad_input: bool,
}

impl SwitchReport {
    /// A switch with nothing to report yet.
    pub fn new(switch: &str, vendor: &str, batch: usize, phase: Phase) -> SwitchReport {
        SwitchReport {
            switch: switch.to_string(),
            vendor: vendor.to_string(),
            batch,
            phase,
            diff_lines: None,
            diff: String::new(),
            mismatches: None,
            pending: Vec::new(),
            waits_for_fabric: false,
            error: None,
            seconds: 0.0,
            bad_input: false,
        }
    }
}

/// The result of a push.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The plan file.
    pub plan: String,
    /// A dry run.
    pub dry_run: bool,
    /// How the rollout ended.
    pub outcome: Outcome,
    /// The journal.
    pub journal: String,
    /// Batches of the rollout, in order.
    pub batches: Vec<Vec<String>>,
    /// Per switch, in rollout order.
    pub switches: Vec<SwitchReport>,
    /// Seconds in all.
    pub seconds: f64,
}

impl Report {
    /// True when a switch failed (exit code 2 or 1).
    pub fn failed(&self) -> bool {
        self.outcome == Outcome::Stopped
    }
}

/// Each selected switch's candidate: the planner's render for its
/// device's vendor, in the form its client loads ([`rendered`]).
pub fn candidates(
    plan: &CheckedPlan,
    devices: &Devices,
    selected: &[String],
) -> Result<BTreeMap<String, String>> {
    let mut by_vendor: BTreeMap<Vendor, BTreeMap<String, String>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for s in selected {
        let e = devices.entry(s)?;
        let v = e.target.vendor;
        let files = match by_vendor.entry(v) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(rendered(plan, v).map_err(|e| PushError::Plan {
                    file: plan.source().to_string(),
                    source: Box::new(e),
                })?)
            }
        };
        let name = v.file_name(s);
        let text = files
            .get(&name)
            .cloned()
            .ok_or_else(|| PushError::Protocol {
                action: format!("rendering {s} for {v}"),
                message: format!("the render has no file {name}"),
            })?;
        out.insert(s.clone(), text);
    }
    Ok(out)
}

/// Every switch's candidate for vendor `v`, by the render's file name: the
/// rendered configuration text for the CLI clients, and for NVUE the JSON
/// tree its REST API takes, emitted from the same commands as the
/// rendered script ([`planner::render::nvue_trees`]): what the vendor's
/// client loads ([`super::Connect::CANDIDATE`]).
pub fn rendered(plan: &CheckedPlan, v: Vendor) -> planner::Result<BTreeMap<String, String>> {
    match super::Client::candidate(v) {
        Candidate::NvueTree => Ok(planner::render::nvue_trees(plan)?
            .into_iter()
            .map(|(switch, tree)| (v.file_name(&switch), tree.to_string()))
            .collect()),
        Candidate::Rendered => Ok(planner::render::render(plan, v)?.into_iter().collect()),
    }
}

/// The switches to push: `asked` checked against the plan, in plan order;
/// all of them when `asked` is empty.
pub fn select(plan: &CheckedPlan, asked: &[String]) -> Result<Vec<String>> {
    let all = devices::physical_switches(plan);
    for a in asked {
        if !all.contains(a) {
            return Err(PushError::Parameter {
                parameter: "switch".to_string(),
                message: format!(
                    "{a} is not a physical switch of {}; give one of {}",
                    plan.source(),
                    devices::short_list(&all)
                ),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|s| asked.is_empty() || asked.contains(s))
        .collect())
}

/// Refuses to start over a journal whose switches still wait on a confirm.
fn check_previous(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let j = journal::read(path)?;
    let waiting: Vec<&str> = j
        .switches
        .iter()
        .filter(|r| r.phase.awaits_confirm())
        .map(|r| r.switch.as_str())
        .collect();
    if waiting.is_empty() {
        return Ok(());
    }
    Err(PushError::Journal {
        file: path.display().to_string(),
        message: format!(
            "an earlier push left {} committed but not confirmed; run `provisioner push confirm --journal {}` to keep it or `provisioner push rollback --journal {}` to undo it, then push again",
            waiting.join(", "),
            path.display(),
            path.display()
        ),
        source: None,
    })
}

/// Pushes the plan to the devices as `options` say.
pub async fn push(
    plan: &CheckedPlan,
    plan_file: &[u8],
    devices: &Devices,
    options: &Options,
) -> Result<Report> {
    let start = Instant::now();
    let selected = select(plan, &options.switches)?;
    let candidates = candidates(plan, devices, &selected)?;
    let groups = rollout::groups(plan);
    let batches = rollout::plan_batches(&selected, &groups, &options.policy).map_err(|e| {
        PushError::Parameter {
            parameter: e.parameter.to_string(),
            message: e.message,
        }
    })?;
    check_previous(&options.journal)?;
    let vendor_of = |s: &str| devices.get(s).map(|e| e.target.vendor);
    let mut records = Vec::new();
    for (i, b) in batches.iter().enumerate() {
        for s in &b.switches {
            let vendor = vendor_of(s).map_or_else(String::new, |v| v.to_string());
            let sha = sha256_hex(candidates[s].as_bytes());
            records.push(SwitchRecord::pending(s, &vendor, i, &sha));
        }
    }
    let j = Journal {
        version: journal::VERSION,
        plan: options.plan_file.display().to_string(),
        devices: options.devices_file.display().to_string(),
        plan_sha256: sha256_hex(plan_file),
        started: journal::now(),
        pid: Some(std::process::id()),
        dry_run: options.dry_run,
        timer_seconds: options.timer.as_secs(),
        outcome: Outcome::Running,
        switches: records,
    };
    {
        let _lock = journal::lock(&options.journal)?;
        journal::write(&options.journal, &j)?;
    }
    let vendors: BTreeMap<String, Vendor> = devices
        .entries
        .iter()
        .map(|e| (e.target.switch.clone(), e.target.vendor))
        .collect();
    let mut reports: BTreeMap<String, SwitchReport> = BTreeMap::new();
    let mut outcome = Outcome::Done;
    // What runs the plan so far, and whether the push met an unconfigured
    // fabric (then switches wait for the whole fabric to confirm).
    let mut live = BTreeSet::new();
    let mut first_install = false;
    for (i, b) in batches.iter().enumerate() {
        options.progress.batch(i, &b.switches);
        let mut set = tokio::task::JoinSet::new();
        for s in &b.switches {
            let entry = devices.entry(s)?.clone();
            let want = if options.dry_run {
                None
            } else {
                Some(verify::expected(plan, s, entry.target.vendor)?)
            };
            let job = Job {
                entry,
                candidate: candidates[s].clone(),
                want,
                vendors: vendors.clone(),
                batch: i,
                options: options.clone(),
                partial: verify::Partial {
                    live: live.clone(),
                    before: BTreeSet::new(),
                    as_before: BTreeMap::new(),
                    ports_before: BTreeSet::new(),
                    first_install,
                },
            };
            set.spawn(job.run());
        }
        let mut done = Vec::new();
        while let Some(r) = set.join_next().await {
            let r = r.map_err(|e| PushError::Io {
                action: "running a switch's push".to_string(),
                source: std::io::Error::other(e.to_string()),
            })?;
            if !matches!(
                r.phase,
                Phase::Loaded | Phase::Unchanged | Phase::Confirmed | Phase::Verified
            ) {
                outcome = Outcome::Stopped;
            }
            if !committed(r.phase) {
                done.push(r.clone());
            }
            if matches!(
                r.phase,
                Phase::Unchanged | Phase::Confirmed | Phase::Verified
            ) {
                live.insert(r.switch.clone());
            }
            first_install |= r.waits_for_fabric;
            reports.insert(r.switch.clone(), r);
        }
        // The switches that committed nothing, in one write per batch.
        if !done.is_empty() {
            let jpath = options.journal.clone();
            blocking(move || {
                journal::update(&jpath, |j| {
                    for r in &done {
                        if let Some(rec) = j.get_mut(&r.switch) {
                            finish(rec, r);
                        }
                    }
                })
            })
            .await?;
        }
        // A dry run changes nothing: it goes on, so that it reports every
        // switch it cannot reach or load, not only the first.
        if outcome == Outcome::Stopped && !options.dry_run {
            break;
        }
    }
    let waiting: Vec<String> = reports
        .values()
        .filter(|r| r.waits_for_fabric && r.phase == Phase::Verified)
        .map(|r| r.switch.clone())
        .collect();
    if !waiting.is_empty() {
        outcome = fabric(
            plan,
            devices,
            options,
            &vendors,
            &waiting,
            outcome,
            &mut reports,
        )
        .await?;
    }
    let final_outcome = outcome;
    let jpath = options.journal.clone();
    blocking(move || journal::update(&jpath, |j| j.outcome = final_outcome)).await?;
    let j = journal::read(&options.journal)?;
    let switches = j
        .switches
        .iter()
        .map(|r| match reports.remove(&r.switch) {
            Some(rep) => rep,
            None => SwitchReport::new(&r.switch, &r.vendor, r.batch, r.phase),
        })
        .collect();
    Ok(Report {
        plan: plan.source().to_string(),
        dry_run: options.dry_run,
        outcome,
        journal: options.journal.display().to_string(),
        batches: batches.into_iter().map(|b| b.switches).collect(),
        switches,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Runs blocking journal I/O off the async workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| PushError::Io {
            action: "writing the journal".to_string(),
            source: std::io::Error::other(e.to_string()),
        })?
}

/// One switch's push.
struct Job {
    entry: Entry,
    candidate: String,
    /// What verification compares against (none on a dry run).
    want: Option<planner::expect::Expected>,
    /// Every physical switch's vendor (LLDP port names of peers).
    vendors: BTreeMap<String, Vendor>,
    batch: usize,
    options: Options,
    /// What the rest of the fabric runs (`before` filled in by `steps`).
    partial: verify::Partial,
}

impl Job {
    async fn record(&self, change: impl FnOnce(&mut SwitchRecord) + Send + 'static) -> Result<()> {
        let path = self.options.journal.clone();
        let switch = self.entry.target.switch.clone();
        blocking(move || journal::update_switch(&path, &switch, change)).await
    }

    async fn run(mut self) -> SwitchReport {
        let start = Instant::now();
        let mut rep = SwitchReport::new(
            &self.entry.target.switch,
            self.entry.target.vendor.as_str(),
            self.batch,
            Phase::Failed,
        );
        let progress = self.options.progress;
        if let Err(e) = self.steps(&mut rep, start).await {
            rep.bad_input = e.is_bad_input();
            let e = e.on(&rep.switch);
            rep.error = Some(chain(&e));
            progress.stage(
                &rep.switch,
                rep.phase.as_str(),
                &chain(&e),
                start.elapsed().as_secs_f64(),
            );
        } else if rep.waits_for_fabric {
            progress.stage(
                &rep.switch,
                "waits for the fabric",
                "confirmed once every switch of the push passes the full check",
                start.elapsed().as_secs_f64(),
            );
        } else if rep.phase != Phase::Verified {
            progress.stage(
                &rep.switch,
                rep.phase.as_str(),
                "",
                start.elapsed().as_secs_f64(),
            );
        }
        rep.seconds = start.elapsed().as_secs_f64();
        // A switch that got as far as a commit is journaled at once (its
        // watchdog reads the phase); the others with their batch.
        if committed(rep.phase) {
            let r = rep.clone();
            let _ = self.record(move |rec| finish(rec, &r)).await;
        }
        rep
    }

    /// The steps; `rep.phase` always says where the switch is.
    async fn steps(&mut self, rep: &mut SwitchReport, start: Instant) -> Result<()> {
        let switch = self.entry.target.switch.clone();
        let progress = self.options.progress;
        let stage = |s: &str, d: &str| progress.stage(&switch, s, d, start.elapsed().as_secs_f64());
        stage("connecting", &self.entry.target.address);
        let sha = sha256_hex(self.candidate.as_bytes());
        let mut dev = connect(&self.entry, &session_name(&sha), false, self.options.timer)?;
        let id = dev.identity().await?;
        if !same_host(&id.hostname, &switch) {
            let found = match &id.serial {
                Some(s) => format!("{} (serial {s})", id.hostname),
                None => id.hostname.clone(),
            };
            return Err(PushError::Identity {
                expected: switch,
                found,
            });
        }
        let diff = match dev.load(&self.candidate).await {
            Ok(d) => d,
            Err(e) => {
                let _ = dev.discard().await;
                return Err(e);
            }
        };
        let lines = diff
            .lines()
            .filter(|l| l.starts_with('+') || l.starts_with('-'))
            .count();
        rep.diff_lines = Some(lines);
        rep.diff = diff;
        stage("loaded", &format!("{lines} diff lines"));
        if lines == 0 || self.options.dry_run {
            dev.discard().await?;
            rep.phase = if lines == 0 {
                Phase::Unchanged
            } else {
                Phase::Loaded
            };
            return Ok(());
        }
        // The sessions and ports up before the commit must be up after
        // it (a fault pushed into a running fabric is caught; a fresh
        // fabric's dark ports and idle sessions may wait for their peers).
        if self.want.is_some() {
            match dev.observe().await {
                Ok(seen) => {
                    self.partial.before = verify::Partial::established(&seen);
                    self.partial.as_before = verify::Partial::as_established(&seen);
                    self.partial.ports_before = verify::Partial::up(&seen);
                }
                Err(e) => {
                    let _ = dev.discard().await;
                    return Err(e);
                }
            }
        }
        // The rollback point and the deadline are journaled durably, and
        // the watchdog of a device without a timer runs, before the commit
        // request goes out: a push killed at any moment from here leaves
        // a journal `push rollback` acts on.
        let native = dev.native_timer();
        let point = match dev.prepare().await {
            Ok(p) => p,
            Err(e) => {
                let _ = dev.discard().await;
                return Err(e);
            }
        };
        let deadline = journal::now() + self.options.timer.as_secs();
        rep.phase = Phase::Committing;
        stage("committing", &format!("rollback point {point}"));
        {
            let p = point.clone();
            self.record(move |r| {
                r.phase = Phase::Committing;
                r.point = Some(p);
                r.native_timer = Some(native);
                r.deadline = Some(deadline);
            })
            .await?;
        }
        if !native {
            let pid = spawn_watchdog(&self.options, &switch)?;
            self.record(move |r| r.watchdog_pid = Some(pid)).await?;
        }
        let commit = match dev.commit(self.options.timer).await {
            Ok(c) => c,
            Err(e @ (PushError::Locked { .. } | PushError::Rejected { .. })) => {
                // Refused before anything was applied: drop the candidate
                // (the watchdog stands down on the failed phase).
                let _ = dev.discard().await;
                rep.phase = Phase::Failed;
                self.record(|r| r.phase = Phase::Failed).await?;
                return Err(e);
            }
            Err(e) => {
                // A lost connection may have committed: the switch stays
                // `committing` in the journal, the device's own timer or
                // the watchdog takes it back, `push rollback` does now.
                return Err(e);
            }
        };
        rep.phase = Phase::Committed;
        stage("verifying", "");
        {
            let c = commit.clone();
            self.record(move |r| {
                r.phase = Phase::Committed;
                r.point = Some(c.point);
                r.native_timer = Some(c.native_timer);
            })
            .await?;
        }
        match self
            .after_commit(&mut dev, rep, &commit.point, deadline, start)
            .await
        {
            Ok(()) => Ok(()),
            Err(PushError::TimerExpired { point }) => {
                rep.phase = Phase::RolledBack;
                Err(PushError::TimerExpired { point })
            }
            Err(e) => {
                // Back to the previous configuration, whatever failed.
                stage("rolling back", &format!("to {}", commit.point));
                match dev.rollback(&commit.point).await {
                    Ok(()) => rep.phase = Phase::RolledBack,
                    Err(r) => {
                        rep.phase = Phase::Failed;
                        return Err(PushError::Rollback {
                            point: commit.point.clone(),
                            cause: chain(&e),
                            source: Box::new(r),
                        });
                    }
                }
                Err(e)
            }
        }
    }

    /// Verify, then confirm (unless --no-confirm).
    async fn after_commit(
        &self,
        dev: &mut Client,
        rep: &mut SwitchReport,
        point: &str,
        deadline: u64,
        start: Instant,
    ) -> Result<()> {
        let switch = self.entry.target.switch.clone();
        let progress = self.options.progress;
        let stage = |s: &str, d: &str| progress.stage(&switch, s, d, start.elapsed().as_secs_f64());
        let want = self.want.as_ref().ok_or_else(|| PushError::Protocol {
            action: "verifying".to_string(),
            message: "no expected state (a dry run commits nothing)".to_string(),
        })?;
        let verdict = verify::settle(
            settle_until(self.options.settle, deadline),
            dev,
            want,
            &self.vendors,
            Some(&self.partial),
        )
        .await?;
        rep.mismatches = Some(verdict.mismatches.clone());
        if !verdict.mismatches.is_empty() {
            return Err(PushError::Verify {
                mismatches: verdict.mismatches,
            });
        }
        rep.phase = Phase::Verified;
        stage(
            "verified",
            &if verdict.pending.is_empty() {
                String::new()
            } else {
                format!(
                    "waiting: {} ports or sessions whose peers are not configured yet",
                    verdict.pending.len()
                )
            },
        );
        rep.waits_for_fabric = !verdict.pending.is_empty() || self.partial.first_install;
        rep.pending = verdict.pending;
        self.record(|r| {
            r.phase = Phase::Verified;
            r.mismatches = Some(Vec::new());
        })
        .await?;
        if !self.options.confirm || rep.waits_for_fabric {
            return Ok(());
        }
        // Confirm only well before the deadline, and only if no watchdog
        // rolled the switch back meanwhile.
        let path = self.options.journal.clone();
        let switch = rep.switch.clone();
        let go = blocking(move || {
            journal::update(&path, |j| match j.get_mut(&switch) {
                Some(r)
                    if r.phase == Phase::Verified && journal::now() + CONFIRM_MARGIN < deadline =>
                {
                    r.phase = Phase::Confirming;
                    true
                }
                _ => false,
            })
        })
        .await?;
        if !go {
            let now = journal::j_phase(&self.options.journal, &rep.switch);
            if now == Some(Phase::RolledBack) {
                return Err(PushError::TimerExpired {
                    point: point.to_string(),
                });
            }
            return Err(PushError::Timeout {
                action: "confirming before the confirm timer runs out".to_string(),
                seconds: self.options.timer.as_secs(),
            });
        }
        rep.phase = Phase::Confirming;
        stage("confirming", "");
        dev.confirm().await?;
        rep.phase = Phase::Confirmed;
        Ok(())
    }
}

/// When verification stops observing: after `settle`, and never later
/// than the confirm margin before the timer's `deadline` (Unix seconds).
fn settle_until(settle: Duration, deadline: u64) -> Instant {
    let left = deadline.saturating_sub(journal::now() + CONFIRM_MARGIN);
    Instant::now() + settle.min(Duration::from_secs(left))
}

/// The end of a first install: the switches verified in part of a fabric
/// (`waiting`) are checked again, in full, now that every switch of the
/// push runs the plan; then all of them are confirmed, or, should one not
/// match (or the rollout have stopped), all of them are rolled back, so a
/// fabric is never left half installed. Returns the push's outcome.
async fn fabric(
    plan: &CheckedPlan,
    devices: &Devices,
    options: &Options,
    vendors: &BTreeMap<String, Vendor>,
    waiting: &[String],
    outcome: Outcome,
    reports: &mut BTreeMap<String, SwitchReport>,
) -> Result<Outcome> {
    let mut outcome = outcome;
    if outcome == Outcome::Done {
        let mut set = tokio::task::JoinSet::new();
        let mut outside: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for s in waiting {
            let entry = devices.entry(s)?.clone();
            let want = verify::expected(plan, s, entry.target.vendor)?;
            outside.insert(
                s.clone(),
                want.vrfs
                    .iter()
                    .flat_map(|v| &v.sessions)
                    .filter(|x| !reports.contains_key(&x.peer_device))
                    .map(|x| x.peer_device.clone())
                    .collect(),
            );
            let vendors = vendors.clone();
            let settle = options.settle;
            let journal = options.journal.clone();
            let timer = options.timer;
            set.spawn(async move {
                let sw = entry.target.switch.clone();
                let verdict = async {
                    let rec = journal::read(&journal)?;
                    let r = rec.get(&sw).cloned().ok_or_else(|| PushError::Journal {
                        file: journal.display().to_string(),
                        message: format!("{sw} is missing from it"),
                        source: None,
                    })?;
                    let mut dev = connect(&entry, &session_name(&r.candidate_sha256), true, timer)?;
                    // A new connection learns the release first: what the
                    // reads look like depends on it (NVUE's BGP neighbours
                    // need `view=detail` from 5.12; read without it, no
                    // session would show as established).
                    dev.identity().await?;
                    verify::settle(
                        settle_until(settle, r.deadline.unwrap_or(0)),
                        &mut dev,
                        &want,
                        &vendors,
                        None,
                    )
                    .await
                }
                .await;
                (sw, verdict)
            });
        }
        while let Some(r) = set.join_next().await {
            let (sw, verdict) = r.map_err(|e| PushError::Io {
                action: "checking the fabric".to_string(),
                source: std::io::Error::other(e.to_string()),
            })?;
            let Some(rep) = reports.get_mut(&sw) else {
                continue;
            };
            match verdict {
                Ok(v) if v.mismatches.is_empty() => rep.pending.clear(),
                Ok(v) => {
                    let mut error = chain(
                        &PushError::Verify {
                            mismatches: v.mismatches.clone(),
                        }
                        .on(&sw),
                    );
                    if let Some(peers) = outside.get(&sw).filter(|p| !p.is_empty()) {
                        error += &format!(
                            "\n(its peers {} were not part of this push; on a fabric that runs no BGP yet, push them together)",
                            peers.iter().cloned().collect::<Vec<_>>().join(", ")
                        );
                    }
                    rep.error = Some(error);
                    rep.bad_input = true;
                    rep.mismatches = Some(v.mismatches);
                    outcome = Outcome::Stopped;
                }
                Err(e) => {
                    rep.bad_input = e.is_bad_input();
                    rep.error = Some(chain(&e.on(&sw)));
                    outcome = Outcome::Stopped;
                }
            }
        }
    }
    let failed: Vec<SwitchReport> = waiting
        .iter()
        .filter_map(|s| reports.get(s))
        .filter(|r| r.error.is_some())
        .cloned()
        .collect();
    if !failed.is_empty() {
        let path = options.journal.clone();
        blocking(move || {
            journal::update(&path, |j| {
                for r in &failed {
                    if let Some(rec) = j.get_mut(&r.switch) {
                        rec.error.clone_from(&r.error);
                        rec.mismatches.clone_from(&r.mismatches);
                    }
                }
            })
        })
        .await?;
    }
    let settled = if outcome == Outcome::Done {
        if !options.confirm {
            return Ok(outcome);
        }
        super::ops::confirm(&options.journal, waiting).await?
    } else {
        super::ops::rollback(&options.journal, waiting).await?
    };
    for a in settled {
        if let Some(rep) = reports.get_mut(&a.switch) {
            rep.phase = a.phase;
            if a.error.is_some() {
                rep.error = a.error;
                outcome = Outcome::Stopped;
            }
        }
    }
    Ok(outcome)
}

/// True for the phases a switch reaches only through a commit.
fn committed(p: Phase) -> bool {
    matches!(
        p,
        Phase::Committing
            | Phase::Committed
            | Phase::Verified
            | Phase::Confirming
            | Phase::Confirmed
            | Phase::RolledBack
    )
}

/// A switch's final fields in its journal record.
fn finish(rec: &mut SwitchRecord, r: &SwitchReport) {
    rec.phase = r.phase;
    rec.error.clone_from(&r.error);
    rec.mismatches.clone_from(&r.mismatches);
    rec.seconds = r.seconds;
    rec.diff_lines = r.diff_lines;
    rec.updated = journal::now();
}

/// Starts the detached watchdog of `switch` (its own process group, so it
/// outlives this process); returns its pid.
fn spawn_watchdog(options: &Options, switch: &str) -> Result<u32> {
    use std::os::unix::process::CommandExt as _;
    let log = watchdog_log(&options.journal, switch);
    // Never through a link planted at the log's name.
    let err = journal::private(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .open(&log)
    .map_err(|e| PushError::Io {
        action: format!(
            "creating the watchdog log {} (a symbolic link there is refused)",
            log.display()
        ),
        source: e,
    })?;
    let child = std::process::Command::new(&options.exe)
        .arg("push")
        .arg("watchdog")
        .arg("--journal")
        .arg(&options.journal)
        .arg("--switch")
        .arg(switch)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| PushError::Io {
            action: format!(
                "starting the confirm-timer watchdog ({})",
                options.exe.display()
            ),
            source: e,
        })?;
    let pid = child.id();
    // Reap it should it end while this process still runs; it outlives
    // this process otherwise (then init reaps it).
    std::thread::spawn(move || {
        let mut child = child;
        let _ = child.wait();
    });
    Ok(pid)
}

/// The log file of a switch's watchdog, beside the journal.
pub fn watchdog_log(journal: &Path, switch: &str) -> PathBuf {
    let mut s = journal.as_os_str().to_owned();
    s.push(format!(
        ".{}.watchdog.log",
        planner::names::file_stem(switch)
    ));
    PathBuf::from(s)
}
