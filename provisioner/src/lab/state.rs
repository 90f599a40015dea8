//! The lab's state file: what a lab made (namespaces, cables and their rates, pins), written before anything is made so that `lab down` can remove it after a crash or a kill.
//!
//! One JSON file per lab, `<state dir>/<name>.json` (default state dir
//! `/run/eflops-lab`, a tmpfs that goes with the namespaces at a reboot).
//! Namespaces are named `efl-<name>-s<i>` for plan switch `i` (static
//! routing), `efl-<name>-p<j>` for physical switch `j` (BGP: both VLAN
//! halves of a split switch in one namespace, as one FRR instance) and
//! `efl-<name>-h<i>` for sub-node `i`; a lab never touches a namespace
//! (or FRR directory) that its state file does not list, and `lab down`
//! checks that what the file lists is the lab's ([`super::trust`]).

use std::path::{Path, PathBuf};

use planner::network::Lab;
use serde::{Deserialize, Serialize};

use super::error::{Error, Result};

/// The state file's format version.
pub const VERSION: u32 = 1;

/// The default state directory.
pub const DEFAULT_DIR: &str = "/run/eflops-lab";

/// Most characters of a lab name (namespace names stay short).
pub const MAX_NAME: usize = 12;

/// What a lab made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Format version.
    pub version: u32,
    /// The lab's name.
    pub name: String,
    /// `building` while `lab up` runs, then `up`.
    pub phase: String,
    /// The plan file it was built from, as the user named it.
    pub plan_file: String,
    /// The rate of the plan's fastest NIC cable, in kbit/s; every cable's
    /// rate is scaled from it by its plan speed.
    pub rate_kbit: u64,
    /// Every namespace the lab made (or is about to make).
    pub namespaces: Vec<String>,
    /// The plan as built.
    pub lab: Lab,
    /// Cables whose rate or state was changed (`lab degrade`, `lab cut`).
    #[serde(default)]
    pub changed: Vec<Changed>,
    /// Policy rules installed for the last run, per switch namespace.
    #[serde(default)]
    pub pins: Vec<(String, String)>,
    /// How the switches route: static ECMP routes, or FRR with BGP and
    /// BFD configured by `provisioner push`.
    #[serde(default)]
    pub routing: Routing,
    /// The FRR directories the lab made (`/etc/frr/<ns>`,
    /// `/var/run/frr/<ns>`), listed before they are made.
    #[serde(default)]
    pub frr_dirs: Vec<String>,
    /// The random id of the mark `lab up` puts on every namespace it makes
    /// (see [`super::trust`]); empty for a lab made before marks.
    #[serde(default)]
    pub mark: String,
}

/// How a lab's switches route.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    /// The route model's static ECMP routes, one namespace per plan switch.
    #[default]
    Static,
    /// One namespace per physical switch running FRR (zebra, bgpd, bfdd,
    /// staticd); no routes until `provisioner push` configures it.
    Bgp,
}

impl Routing {
    /// `static` or `bgp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Routing::Static => "static",
            Routing::Bgp => "bgp",
        }
    }
}

/// A cable changed by `lab degrade` or `lab cut`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changed {
    /// Index into the lab's cables.
    pub cable: usize,
    /// Its rate now, kbit/s (`None` when cut).
    pub rate_kbit: Option<u64>,
    /// Cut silently: up, every frame dropped.
    #[serde(default)]
    pub silent: bool,
}

impl State {
    /// The namespace of plan switch `i`: its own (static), or its
    /// physical switch's (BGP).
    pub fn switch_ns(&self, i: usize) -> String {
        match self.routing {
            Routing::Static => switch_ns(&self.name, i),
            Routing::Bgp => physical_ns(&self.name, self.physical_of(i)),
        }
    }

    /// The physical switches, in the order their first half appears in
    /// the plan.
    pub fn physicals(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for s in &self.lab.switches {
            if !seen.contains(&s.physical.as_str()) {
                seen.push(&s.physical);
            }
        }
        seen
    }

    /// The index (into [`State::physicals`]) of plan switch `i`'s
    /// physical switch.
    pub fn physical_of(&self, i: usize) -> usize {
        let name = &self.lab.switches[i].physical;
        self.physicals()
            .iter()
            .position(|p| p == name)
            .unwrap_or_default()
    }

    /// The plan switches (VLAN halves) of physical switch `j`.
    pub fn halves(&self, j: usize) -> Vec<usize> {
        let physicals = self.physicals();
        let name = physicals[j];
        (0..self.lab.switches.len())
            .filter(|&i| self.lab.switches[i].physical == name)
            .collect()
    }

    /// The switch namespaces, one per plan switch (static) or per
    /// physical switch (BGP), in order.
    pub fn switch_namespaces(&self) -> Vec<String> {
        match self.routing {
            Routing::Static => (0..self.lab.switches.len())
                .map(|i| switch_ns(&self.name, i))
                .collect(),
            Routing::Bgp => (0..self.physicals().len())
                .map(|j| physical_ns(&self.name, j))
                .collect(),
        }
    }

    /// The namespace of sub-node `i`.
    pub fn host_ns(&self, i: usize) -> String {
        host_ns(&self.name, i)
    }

    /// The rate of a cable of `gbps` in the lab, kbit/s, at least 8.
    pub fn scaled(&self, gbps: u32) -> u64 {
        scale(self.rate_kbit, gbps, self.fastest_nic())
    }

    /// The plan speed of the fastest NIC cable, Gbit/s.
    pub fn fastest_nic(&self) -> u32 {
        self.lab
            .hosts
            .iter()
            .map(|h| h.gbps)
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// `upper0-lower3`: a cable as people name it.
    pub fn cable_name(&self, c: usize) -> String {
        let cable = &self.lab.cables[c];
        format!(
            "{}-{}",
            self.lab.switches[cable.a].name, self.lab.switches[cable.b].name
        )
    }
}

/// The namespace of plan switch `i` of lab `name`.
pub fn switch_ns(name: &str, i: usize) -> String {
    format!("efl-{name}-s{i}")
}

/// The namespace of physical switch `j` of lab `name` (BGP).
pub fn physical_ns(name: &str, j: usize) -> String {
    format!("efl-{name}-p{j}")
}

/// The namespace of sub-node `i` of lab `name`.
pub fn host_ns(name: &str, i: usize) -> String {
    format!("efl-{name}-h{i}")
}

/// `rate` scaled by `gbps / fastest`, at least 8 kbit/s.
pub fn scale(rate_kbit: u64, gbps: u32, fastest: u32) -> u64 {
    let fastest = u64::from(fastest.max(1));
    (rate_kbit.saturating_mul(u64::from(gbps)) / fastest).max(8)
}

/// Checks a lab name: 1 to 12 characters of a-z and 0-9.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(Error::parameter(
            "name",
            format!(
                "`{}`: a lab name is 1 to {MAX_NAME} characters of a-z and 0-9 (it is part of every namespace name)",
                name.escape_debug()
            ),
        ))
    }
}

/// The state file of lab `name` in `dir`.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

/// Reads the state of lab `name`; `Ok(None)` when there is none.
pub fn read(dir: &Path, name: &str) -> Result<Option<State>> {
    let file = path(dir, name);
    match std::fs::symlink_metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    // The one bounded reader: a regular file, of bounded size and depth.
    let text = planner::input::read(&file).map_err(|message| Error::State {
        file: file.display().to_string(),
        message,
    })?;
    let state: State = serde_json::from_str(&text).map_err(|e| Error::State {
        file: file.display().to_string(),
        message: e.to_string(),
    })?;
    if state.version != VERSION || state.name != name {
        return Err(Error::State {
            file: file.display().to_string(),
            message: format!(
                "it is version {} of lab {}, expected version {VERSION} of lab {name}",
                state.version, state.name
            ),
        });
    }
    Ok(Some(state))
}

/// Reads the state of lab `name`, or says that no such lab is up.
pub fn require(dir: &Path, name: &str) -> Result<State> {
    read(dir, name)?.ok_or_else(|| Error::NotUp {
        name: name.to_string(),
        state: path(dir, name).display().to_string(),
    })
}

/// Reads the state of lab `name`, which must be up (not half-built by a
/// `lab up` that was killed).
pub fn require_up(dir: &Path, name: &str) -> Result<State> {
    let st = require(dir, name)?;
    if st.phase != "up" {
        return Err(Error::NotReady {
            name: name.to_string(),
        });
    }
    Ok(st)
}

/// Writes the state whole (a temporary file renamed over the old one).
pub fn write(dir: &Path, state: &State) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating the state directory {}", dir.display()), e))?;
    let file = path(dir, &state.name);
    let tmp = dir.join(format!(".{}.json.tmp", state.name));
    let text = serde_json::to_string_pretty(state).map_err(|e| {
        Error::io(
            format!("writing {}", file.display()),
            std::io::Error::other(e),
        )
    })?;
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, &file))
        .map_err(|e| Error::io(format!("writing {}", file.display()), e))
}

/// Removes the state file of lab `name`.
pub fn remove(dir: &Path, name: &str) -> Result<()> {
    let file = path(dir, name);
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("removing {}", file.display()), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: the state file goes through the one bounded reader: a
    /// FIFO in its place or a file nested 100,000 levels is refused at once,
    /// naming the file and the limit; a missing one is no lab.
    #[test]
    fn state_files_are_read_bounded() {
        let dir = std::env::temp_dir().join(format!("lab-state-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read(&dir, "none").unwrap().is_none());
        std::fs::write(path(&dir, "deep"), "[".repeat(100_000)).unwrap();
        let start = std::time::Instant::now();
        let e = read(&dir, "deep").unwrap_err().to_string();
        assert!(start.elapsed().as_secs() < 2);
        assert!(
            e.contains("deep.json: line 1 is nested more than 128 levels deep"),
            "{e}"
        );
        let fifo = path(&dir, "fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        let e = read(&dir, "fifo").unwrap_err().to_string();
        assert!(
            e.contains("it is a device, FIFO or socket, not a regular file"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_are_short_and_plain() {
        assert!(check_name("lab").is_ok());
        assert!(check_name("a1b2c3d4e5f6").is_ok());
        for bad in ["", "Lab", "a-b", "a b", "abcdefghijklm", "x;y", "é"] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn rates_scale_with_the_plan_speed() {
        assert_eq!(scale(100_000, 100, 100), 100_000);
        assert_eq!(scale(100_000, 25, 100), 25_000);
        assert_eq!(scale(100_000, 400, 100), 400_000);
        assert_eq!(scale(10, 1, 400), 8);
    }
}
