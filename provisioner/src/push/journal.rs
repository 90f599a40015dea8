//! The journal of a push: one JSON state file per plan push, written
//! atomically (a temporary file in the same folder, fsynced, renamed over
//! the old one) under an exclusive lock (`<journal>.lock`, `flock`), so
//! the push, its watchdogs and `push status|confirm|rollback` never see a
//! half-written file or lose each other's updates.
//!
//! Per switch it records what was pushed (SHA-256 of the candidate), the
//! rollback point, the phase, the confirm deadline and the outcome. It
//! never holds a credential: [`super::Secret`] does not serialise.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::error::{PushError, Result};

/// The journal format's version.
pub const VERSION: u32 = 1;

/// Where a switch is in its push.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Not started (a later batch, or the rollout stopped before it).
    Pending,
    /// Candidate loaded and diffed (the end of a dry run).
    Loaded,
    /// No difference: nothing committed.
    Unchanged,
    /// The rollback point and the deadline are journaled and the commit
    /// request is on its way (or was, when the push died): the switch may
    /// run the candidate. `push rollback` goes back to the point; a
    /// commit that never happened makes that a no-op.
    Committing,
    /// Committed; the confirm timer runs.
    Committed,
    /// Committed and verified against the plan; the timer still runs
    /// (`--no-confirm` stops here).
    Verified,
    /// The push is confirming (the watchdog waits for it).
    Confirming,
    /// Confirmed and saved.
    Confirmed,
    /// Back on the configuration before the push.
    RolledBack,
    /// Failed before a commit (nothing changed), or a rollback failed.
    Failed,
}

impl Phase {
    /// The name in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "pending",
            Phase::Loaded => "loaded",
            Phase::Unchanged => "unchanged",
            Phase::Committing => "committing",
            Phase::Committed => "committed",
            Phase::Verified => "verified",
            Phase::Confirming => "confirming",
            Phase::Confirmed => "confirmed",
            Phase::RolledBack => "rolled-back",
            Phase::Failed => "failed",
        }
    }

    /// True while a commit waits on its confirm timer.
    pub fn awaits_confirm(self) -> bool {
        matches!(
            self,
            Phase::Committing | Phase::Committed | Phase::Verified | Phase::Confirming
        )
    }
}

/// One switch's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchRecord {
    /// The plan's physical switch.
    pub switch: String,
    /// Its vendor.
    pub vendor: String,
    /// The batch it is in (0 is the canary).
    pub batch: usize,
    /// SHA-256 of the rendered candidate, hex.
    pub candidate_sha256: String,
    /// Lines of the diff (removed + added), once loaded.
    pub diff_lines: Option<usize>,
    /// Where it is.
    pub phase: Phase,
    /// The rollback point, once committed.
    pub point: Option<String>,
    /// True when the device keeps the confirm timer.
    pub native_timer: Option<bool>,
    /// The confirm deadline, Unix seconds.
    pub deadline: Option<u64>,
    /// The watchdog process keeping the timer (own timer only).
    pub watchdog_pid: Option<u32>,
    /// Verification: `None` not run, empty list passed, else mismatches.
    pub mismatches: Option<Vec<String>>,
    /// The error that stopped it, when one did.
    pub error: Option<String>,
    /// Seconds spent on it.
    pub seconds: f64,
    /// Last change, Unix seconds.
    pub updated: u64,
}

/// The state of a whole push.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// [`VERSION`].
    pub version: u32,
    /// The plan file, absolute.
    pub plan: String,
    /// The devices file, absolute.
    pub devices: String,
    /// SHA-256 of the plan file.
    pub plan_sha256: String,
    /// Start, Unix seconds.
    pub started: u64,
    /// The process of the push (`push status` tells a push that still runs
    /// from one that died).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// A dry run (nothing committed).
    pub dry_run: bool,
    /// The confirm timer in seconds.
    pub timer_seconds: u64,
    /// Still running, finished, or stopped by a failure.
    pub outcome: Outcome,
    /// Per switch, in rollout order.
    pub switches: Vec<SwitchRecord>,
}

/// How a push ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Running (or, in a journal from before the pid was recorded,
    /// interrupted).
    Running,
    /// The journal says running but the push's process is gone (it was
    /// killed or the machine restarted): only `push status` says this.
    Interrupted,
    /// Every selected switch done.
    Done,
    /// A switch failed; the rollout stopped.
    Stopped,
}

impl SwitchRecord {
    /// A switch not started yet.
    pub fn pending(
        switch: &str,
        vendor: &str,
        batch: usize,
        candidate_sha256: &str,
    ) -> SwitchRecord {
        SwitchRecord {
            switch: switch.to_string(),
            vendor: vendor.to_string(),
            batch,
            candidate_sha256: candidate_sha256.to_string(),
            diff_lines: None,
            phase: Phase::Pending,
            point: None,
            native_timer: None,
            deadline: None,
            watchdog_pid: None,
            mismatches: None,
            error: None,
            seconds: 0.0,
            updated: now(),
        }
    }
}

impl Journal {
    /// The record of `switch`.
    pub fn get(&self, switch: &str) -> Option<&SwitchRecord> {
        self.switches.iter().find(|r| r.switch == switch)
    }

    /// The record of `switch`, to change.
    pub fn get_mut(&mut self, switch: &str) -> Option<&mut SwitchRecord> {
        self.switches.iter_mut().find(|r| r.switch == switch)
    }
}

/// Unix seconds now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn err(path: &Path, message: impl Into<String>, source: Option<super::BoxError>) -> PushError {
    PushError::Journal {
        file: path.display().to_string(),
        message: message.into(),
        source,
    }
}

/// An exclusive lock on a journal, released when dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes the journal's lock (waits for it).
pub fn lock(path: &Path) -> Result<Lock> {
    let lp = lock_path(path);
    let file = private(OpenOptions::new().create(true).truncate(false).write(true))
        .open(&lp)
        .map_err(|e| {
            err(
                path,
                format!("cannot open its lock file {}", lp.display()),
                Some(Box::new(e)),
            )
        })?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).map_err(|e| {
        err(
            path,
            "cannot lock it",
            Some(Box::new(std::io::Error::from(e))),
        )
    })?;
    Ok(Lock { _file: file })
}

/// `o` for a file only its owner reads and writes, opened without
/// following a symbolic link (a link planted at the name is refused).
pub fn private(o: &mut OpenOptions) -> &mut OpenOptions {
    use std::os::unix::fs::OpenOptionsExt as _;
    o.mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
}

fn lock_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Reads a journal.
pub fn read(path: &Path) -> Result<Journal> {
    let text = planner::input::read(path).map_err(|e| {
        err(
            path,
            "cannot read it; give the --journal of the push (default push-journal.json in the folder it ran in)",
            Some(e.into()),
        )
    })?;
    let j: Journal = serde_json::from_str(&text)
        .map_err(|e| err(path, "is not a push journal", Some(Box::new(e))))?;
    if j.version != VERSION {
        return Err(err(
            path,
            format!(
                "has version {}, this provisioner reads version {VERSION}",
                j.version
            ),
            None,
        ));
    }
    Ok(j)
}

/// Writes a journal atomically: temporary file, fsync, rename, fsync of
/// the folder. Call with the lock held.
pub fn write(path: &Path, j: &Journal) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "journal".to_string());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(j)
        .map_err(|e| err(path, "cannot encode it", Some(Box::new(e))))?;
    let result = (|| -> std::io::Result<()> {
        // Only its owner reads it (device strings, rollback points), and a
        // file or link planted at the temporary name is refused.
        let mut f = private(OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(&dir)?.sync_all()
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(path, "cannot write it", Some(Box::new(e)))
    })
}

/// Reads, changes and writes the journal under its lock.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Journal) -> T) -> Result<T> {
    let _lock = lock(path)?;
    let mut j = read(path)?;
    let out = change(&mut j);
    write(path, &j)?;
    Ok(out)
}

/// Changes one switch's record (and its `updated` time) under the lock.
pub fn update_switch(
    path: &Path,
    switch: &str,
    change: impl FnOnce(&mut SwitchRecord),
) -> Result<()> {
    update(path, |j| {
        if let Some(r) = j.get_mut(switch) {
            change(r);
            r.updated = now();
        }
    })
}

/// The journal as `push status` shows it: a push still marked running
/// whose process is gone is [`Outcome::Interrupted`].
pub fn status(path: &Path) -> Result<Journal> {
    let mut j = read(path)?;
    if j.outcome == Outcome::Running && j.pid.is_some_and(|p| !push_alive(p)) {
        j.outcome = Outcome::Interrupted;
    }
    Ok(j)
}

/// True when process `pid` runs and is a `provisioner push` (a pid reused
/// by another program does not count).
fn push_alive(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == b"push"))
}

/// The phase of `switch` in the journal at `path`, when it can be read.
pub fn j_phase(path: &Path, switch: &str) -> Option<Phase> {
    let _lock = lock(path).ok()?;
    read(path).ok()?.get(switch).map(|r| r.phase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal() -> Journal {
        Journal {
            version: VERSION,
            plan: "/p.json".into(),
            devices: "/d.toml".into(),
            plan_sha256: "ab".into(),
            started: 1,
            pid: None,
            dry_run: false,
            timer_seconds: 300,
            outcome: Outcome::Running,
            switches: vec![SwitchRecord::pending("sw01", "nvue", 0, "cd")],
        }
    }

    #[test]
    fn writes_replace_the_file_whole_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.json");
        write(&path, &journal()).expect("write");
        update_switch(&path, "sw01", |r| {
            r.phase = Phase::Committed;
            r.point = Some("7".into());
        })
        .expect("update");
        let j = read(&path).expect("read");
        assert_eq!(j.switches[0].phase, Phase::Committed);
        assert_eq!(j.switches[0].point.as_deref(), Some("7"));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["j.json", "j.json.lock"]);
    }

    #[test]
    fn journals_are_private_and_links_are_not_followed() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.json");
        write(&path, &journal()).expect("write");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A lock file planted as a link to someone else's file.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "x").expect("victim");
        let other = dir.path().join("k.json");
        std::os::unix::fs::symlink(&victim, dir.path().join("k.json.lock")).expect("link");
        assert!(lock(&other).is_err());
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "x");
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.json");
        write(&path, &journal()).expect("write");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let p = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        update_switch(&p, "sw01", |r| r.seconds += 1.0).expect("update");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(read(&path).expect("read").switches[0].seconds, 80.0);
    }

    #[test]
    fn foreign_files_are_refused_with_the_file_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, "{\"a\": 1}").expect("write");
        let e = read(&path).expect_err("not a journal").to_string();
        assert!(
            e.contains("x.json") && e.contains("not a push journal"),
            "{e}"
        );
    }
}
