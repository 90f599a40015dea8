//! What runs from a journal after (or beside) a push: `push status`,
//! `push confirm`, `push rollback`, and the watchdog that keeps the
//! confirm timer of a device without one.

use std::path::Path;
use std::time::Duration;

use planner::checked::CheckedPlan;
use serde::Serialize;

use super::Device;
use super::connect::{CONFIRM_MARGIN, chain, connect, session_name};
use super::devices::{self, Devices};
use super::error::{PushError, Result};
use super::journal::{self, Journal, Phase};

/// How often the watchdog looks at the journal.
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// How long the watchdog lets a confirm in progress finish.
const CONFIRM_GRACE: Duration = Duration::from_secs(30);

/// The plan and devices a journal was written for (read again; the
/// devices file also gives the credentials).
pub fn context(j: &Journal, journal_file: &Path) -> Result<(CheckedPlan, Devices)> {
    let read = |p: &str, what: &str| {
        planner::input::read(std::path::Path::new(p)).map_err(|e| PushError::Journal {
            file: journal_file.display().to_string(),
            message: format!("cannot read its {what} {p}"),
            source: Some(e.into()),
        })
    };
    let plan_file =
        planner::plan_compact::read(Path::new(&j.plan)).map_err(|e| PushError::Journal {
            file: journal_file.display().to_string(),
            message: format!("cannot read its plan {}", j.plan),
            source: Some(e.into()),
        })?;
    let plan = planner::plan::Plan::from_file(&plan_file, &j.plan)
        .and_then(|p| p.check(&j.plan))
        .map_err(|e| PushError::Plan {
            file: j.plan.clone(),
            source: Box::new(e),
        })?;
    let dev_text = read(&j.devices, "devices file")?;
    let dir = Path::new(&j.devices).parent().unwrap_or(Path::new("."));
    let devices = devices::read(&dev_text, &j.devices, dir, &plan)?;
    Ok((plan, devices))
}

/// The switches of `j` named in `only` (all of them when it is empty).
fn selected<'a>(
    j: &'a Journal,
    only: &'a [String],
) -> impl Iterator<Item = &'a super::journal::SwitchRecord> {
    j.switches
        .iter()
        .filter(move |r| only.is_empty() || only.contains(&r.switch))
}

/// What one switch did in `push confirm` or `push rollback`.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    /// The switch.
    pub switch: String,
    /// Its phase afterwards.
    pub phase: Phase,
    /// The error, when it failed.
    pub error: Option<String>,
}

/// Confirms every switch of the journal (or of `only`) that waits on its
/// confirm timer.
pub async fn confirm(path: &Path, only: &[String]) -> Result<Vec<Action>> {
    let j = journal::read(path)?;
    let (_plan, devices) = context(&j, path)?;
    let mut out = Vec::new();
    for r in selected(&j, only) {
        if !r.phase.awaits_confirm() {
            continue;
        }
        let entry = devices.entry(&r.switch)?;
        let deadline = r.deadline.unwrap_or(0);
        let switch = r.switch.clone();
        let go = journal::update(path, |j| match j.get_mut(&switch) {
            Some(r) if r.phase.awaits_confirm() && journal::now() + CONFIRM_MARGIN < deadline => {
                r.phase = Phase::Confirming;
                true
            }
            _ => false,
        })?;
        if !go {
            out.push(Action {
                switch: r.switch.clone(),
                phase: journal::j_phase(path, &r.switch).unwrap_or(r.phase),
                error: Some("the confirm timer has run out (or runs out in a moment); the switch rolls back or has rolled back".to_string()),
            });
            continue;
        }
        let timer = Duration::from_secs(j.timer_seconds);
        let mut dev = connect(entry, &session_name(&r.candidate_sha256), true, timer)?;
        let (phase, error) = match dev.confirm().await {
            Ok(()) => (Phase::Confirmed, None),
            Err(e @ PushError::TimerExpired { .. }) => {
                (Phase::RolledBack, Some(chain(&e.on(&r.switch))))
            }
            Err(e) => (Phase::Verified, Some(chain(&e.on(&r.switch)))),
        };
        let err = error.clone();
        journal::update_switch(path, &r.switch, move |rec| {
            rec.phase = phase;
            if err.is_some() {
                rec.error = err;
            }
        })?;
        out.push(Action {
            switch: r.switch.clone(),
            phase,
            error,
        });
    }
    Ok(out)
}

/// Rolls back every switch of the journal (or of `only`) that has a
/// rollback point and is not rolled back yet: committed, verified or
/// confirmed.
pub async fn rollback(path: &Path, only: &[String]) -> Result<Vec<Action>> {
    let j = journal::read(path)?;
    let (_plan, devices) = context(&j, path)?;
    let mut out = Vec::new();
    for r in selected(&j, only) {
        let Some(point) = &r.point else { continue };
        if !(r.phase.awaits_confirm() || r.phase == Phase::Confirmed) {
            continue;
        }
        let entry = devices.entry(&r.switch)?;
        let _lock = journal::lock(path)?;
        let mut dev = connect(
            entry,
            &session_name(&r.candidate_sha256),
            r.phase.awaits_confirm(),
            Duration::from_secs(j.timer_seconds),
        )?;
        let (phase, error) = match dev.rollback(point).await {
            Ok(()) => (Phase::RolledBack, None),
            Err(e) => (r.phase, Some(chain(&e.on(&r.switch)))),
        };
        let mut j = journal::read(path)?;
        if let Some(rec) = j.get_mut(&r.switch) {
            rec.phase = phase;
            rec.updated = journal::now();
            if let Some(e) = &error {
                rec.error = Some(e.clone());
            }
        }
        journal::write(path, &j)?;
        out.push(Action {
            switch: r.switch.clone(),
            phase,
            error,
        });
    }
    Ok(out)
}

/// What the watchdog did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Watch {
    /// The push was confirmed (or otherwise ended) in time: nothing done.
    Released,
    /// The timer ran out: rolled back.
    RolledBack,
}

/// Keeps the confirm timer of `switch`: sleeps until its deadline
/// (looking at the journal meanwhile), then rolls the switch back unless
/// the journal says it was confirmed. Runs as the detached `provisioner
/// push watchdog`, so a push that dies still rolls back.
pub async fn watchdog(path: &Path, switch: &str) -> Result<Watch> {
    let j = journal::read(path)?;
    let r = j.get(switch).cloned().ok_or_else(|| PushError::Parameter {
        parameter: "switch".to_string(),
        message: format!("{switch} is not in the journal {}", path.display()),
    })?;
    let deadline = r.deadline.ok_or_else(|| PushError::Journal {
        file: path.display().to_string(),
        message: format!("{switch} has no confirm deadline"),
        source: None,
    })?;
    let point = r.point.clone().unwrap_or_default();
    let (_plan, devices) = context(&j, path)?;
    let entry = devices.entry(switch)?.clone();
    // Sleep until the deadline, unless the switch leaves the waiting
    // phases first.
    loop {
        match journal::j_phase(path, switch) {
            Some(p) if p.awaits_confirm() => {}
            _ => return Ok(Watch::Released),
        }
        if journal::now() >= deadline {
            break;
        }
        tokio::time::sleep(WATCH_EVERY).await;
    }
    // A confirm in progress gets a moment to finish.
    let grace = std::time::Instant::now();
    while journal::j_phase(path, switch) == Some(Phase::Confirming)
        && grace.elapsed() < CONFIRM_GRACE
    {
        tokio::time::sleep(WATCH_EVERY).await;
    }
    let _lock = journal::lock(path)?;
    let mut j = journal::read(path)?;
    match j.get(switch).map(|r| r.phase) {
        Some(p) if p.awaits_confirm() => {}
        _ => return Ok(Watch::Released),
    }
    let timer = Duration::from_secs(j.timer_seconds);
    let mut dev = connect(&entry, &session_name(&r.candidate_sha256), true, timer)?;
    let result = dev.rollback(&point).await;
    if let Some(rec) = j.get_mut(switch) {
        rec.updated = journal::now();
        match &result {
            Ok(()) => {
                rec.phase = Phase::RolledBack;
                rec.error = Some(format!(
                    "switch {switch}: the confirm timer ran out before the confirm; the watchdog rolled back to {point}"
                ));
            }
            Err(e) => {
                rec.phase = Phase::Failed;
                rec.error = Some(format!(
                    "switch {switch}: the confirm timer ran out and the watchdog's rollback to {point} failed: {}",
                    chain(e)
                ));
            }
        }
    }
    journal::write(path, &j)?;
    result.map(|()| Watch::RolledBack)
}
