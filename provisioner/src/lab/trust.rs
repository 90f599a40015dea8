//! What `lab down` checks before it removes anything: that every object its state file names is one this lab made. A state file is only a file: whoever can write it could name another namespace, a directory outside the lab's or a process of someone else.
//!
//! - A namespace must be one of the names the lab gives its namespaces
//!   (`efl-<name>-s<i>`, `-p<j>`, `-h<i>` for the lab's switches and
//!   sub-nodes) and, if it exists, carry the lab's mark: `lab up` sets the
//!   alias of the loopback interface of every namespace it makes to
//!   `eflops-lab:<name>:<random id>`, an id kept in the state file.
//! - A process is stopped only if it lives in one of those namespaces: its
//!   `/proc/<pid>/ns/net` is the namespace's own (device and inode), checked
//!   through a pidfd so that a pid reused meanwhile is not signalled.
//! - A path must be absolute, without `.` or `..`, under one of the lab's
//!   directories, and no symbolic link from there down to it; an FRR
//!   directory must be exactly the one the lab makes for one of its switch
//!   namespaces.
//!
//! A state file that names anything else is refused whole, naming the
//! object, before anything is removed.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::error::{Error, Result};
use super::frr;
use super::state::{self, State};
use super::sys::{self, Sys};

/// Most bytes a state file may have (a lab of 10,000 sub-nodes is far
/// below).
pub const MAX_STATE_BYTES: u64 = 64 << 20;

/// The mark `lab up` puts on every namespace of lab `st` (the alias of its
/// loopback interface), or `None` for a lab made before marks.
pub fn mark(st: &State) -> Option<String> {
    (!st.mark.is_empty()).then(|| format!("eflops-lab:{}:{}", st.name, st.mark))
}

/// A fresh random id for a lab's mark.
pub fn new_mark() -> Result<String> {
    crate::probe::auth::random::<8>()
        .map(|b| crate::probe::auth::hex(&b))
        .map_err(|e| Error::io("making the lab's mark", e))
}

/// The namespaces lab `st` makes.
pub fn own_namespaces(st: &State) -> BTreeSet<String> {
    st.switch_namespaces()
        .into_iter()
        .chain((0..st.lab.hosts.len()).map(|i| st.host_ns(i)))
        .collect()
}

fn foreign(file: &Path, object: String, why: impl Into<String>) -> Error {
    Error::Foreign {
        file: file.display().to_string(),
        object,
        why: why.into(),
    }
}

/// `path` confined under one of `bases`: absolute, no `.` or `..`, and no
/// symbolic link from the base down to it (the base itself may be one, as
/// `/var/run` is). Returns the path or why not.
pub fn confine(path: &str, bases: &[&Path]) -> std::result::Result<PathBuf, String> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err("it is not an absolute path".to_string());
    }
    if p.components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        || path.split('/').any(|c| c == "." || c == "..")
    {
        return Err("it has a `.` or `..` component".to_string());
    }
    let Some(base) = bases.iter().find(|b| p.starts_with(b) && p != **b) else {
        let names: Vec<String> = bases.iter().map(|b| b.display().to_string()).collect();
        return Err(format!("it is not under {}", names.join(" or ")));
    };
    let mut at = base.to_path_buf();
    for c in p
        .strip_prefix(base)
        .map_err(|e| e.to_string())?
        .components()
    {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!("{} is a symbolic link", at.display()));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(p.to_path_buf())
}

/// Checks everything the state file of `st` (at `file`, in `dir`) names
/// before `lab down` removes it; the first object that is not the lab's
/// is refused, named.
pub fn check(sys: &Sys, st: &State, file: &Path, dir: &Path) -> Result<()> {
    let own = own_namespaces(st);
    let existing = sys::namespaces();
    let mark = mark(st);
    for ns in &st.namespaces {
        if !own.contains(ns) {
            return Err(foreign(
                file,
                format!("namespace {}", ns.escape_debug()),
                format!(
                    "it is not one of lab {}'s namespaces (efl-{}-s<i>, -p<j>, -h<i> of its {} switches and {} sub-nodes)",
                    st.name,
                    st.name,
                    st.lab.switches.len(),
                    st.lab.hosts.len()
                ),
            ));
        }
        if !existing.contains(ns) {
            continue;
        }
        let alias = sys.lo_alias(ns);
        if mark.is_none() || alias != mark {
            return Err(foreign(
                file,
                format!("namespace {ns}"),
                format!(
                    "it does not carry lab {}'s mark (the alias of its loopback interface is {}): something else made it, or an older provisioner or a `lab up` killed before it marked its namespaces; if it is yours and nothing uses it, remove it with `ip netns del {ns}`",
                    st.name,
                    alias.map_or("none".to_string(), |a| format!("`{}`", a.escape_debug()))
                ),
            ));
        }
    }
    let switch_ns: BTreeSet<String> = st.switch_namespaces().into_iter().collect();
    let frr_dirs: BTreeSet<PathBuf> = switch_ns
        .iter()
        .flat_map(|ns| [frr::etc_dir(ns), frr::run_dir(ns)])
        .collect();
    for d in &st.frr_dirs {
        let bases = [Path::new("/etc/frr"), Path::new("/var/run/frr")];
        let why = match confine(d, &bases) {
            Err(why) => Some(why),
            Ok(p) if !frr_dirs.contains(&p) => Some(format!(
                "it is not the FRR directory of one of lab {}'s switch namespaces",
                st.name
            )),
            Ok(_) => None,
        };
        if let Some(why) = why {
            return Err(foreign(
                file,
                format!("directory {}", d.escape_debug()),
                why,
            ));
        }
    }
    let work = dir.join(format!("{}.run", st.name));
    if std::fs::symlink_metadata(&work).is_ok_and(|m| !m.is_dir()) {
        return Err(foreign(
            file,
            format!("directory {}", work.display()),
            "it is not a directory (a symbolic link or a file), so the lab did not make it",
        ));
    }
    Ok(())
}

/// Reads the state file of lab `name` in `dir` for `lab down`: a regular
/// file of at most [`MAX_STATE_BYTES`].
pub fn check_file(dir: &Path, name: &str) -> Result<()> {
    let file = state::path(dir, name);
    match std::fs::symlink_metadata(&file) {
        Ok(m) if !m.is_file() => Err(Error::State {
            file: file.display().to_string(),
            message: "it is not a regular file".to_string(),
        }),
        Ok(m) if m.len() > MAX_STATE_BYTES => Err(Error::State {
            file: file.display().to_string(),
            message: format!(
                "it has {} bytes, more than the {MAX_STATE_BYTES} a lab's state file may have",
                m.len()
            ),
        }),
        _ => Ok(()),
    }
}

/// The device and inode of a namespace file, which name the namespace.
fn ns_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Stops (SIGKILL) the processes `pids` that live in namespace `ns`; a pid
/// whose process is in another namespace, or gone, is left alone. Returns
/// how many were signalled.
pub fn kill_in(ns: &str, pids: &[u32]) -> usize {
    use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
    let Some(want) = ns_id(&Path::new(sys::NETNS_DIR).join(ns)) else {
        return 0;
    };
    let mut killed = 0;
    for &p in pids {
        let Some(pid) = i32::try_from(p).ok().and_then(Pid::from_raw) else {
            continue;
        };
        // The pidfd names this very process: if it ends and its pid is
        // reused before the signal, the signal fails instead of reaching
        // the newcomer.
        let Ok(fd) = pidfd_open(pid, PidfdFlags::empty()) else {
            continue;
        };
        if ns_id(Path::new(&format!("/proc/{p}/ns/net"))) != Some(want) {
            continue;
        }
        if pidfd_send_signal(&fd, Signal::KILL).is_ok() {
            killed += 1;
        }
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_under_their_base() {
        let etc = Path::new("/etc/frr");
        assert_eq!(
            confine("/etc/frr/efl-a-s0", &[etc]).unwrap(),
            Path::new("/etc/frr/efl-a-s0")
        );
        for (bad, why) in [
            ("/etc/frr/../../tmp/efl-a-s0", "`.` or `..`"),
            ("/etc/frr/./efl-a-s0", "`.` or `..`"),
            ("etc/frr/efl-a-s0", "not an absolute path"),
            ("/etc/frrx/efl-a-s0", "not under /etc/frr"),
            ("/etc/frr", "not under /etc/frr"),
            ("/tmp/efl-a-s0", "not under /etc/frr"),
        ] {
            let e = confine(bad, &[etc]).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_symbolic_link_below_the_base_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("base");
        std::fs::create_dir(&base).unwrap();
        std::os::unix::fs::symlink("/tmp", base.join("link")).unwrap();
        let p = base.join("link/efl-a-s0").display().to_string();
        let e = confine(&p, &[base.as_path()]).unwrap_err();
        assert!(e.ends_with("link is a symbolic link"), "{e}");
        std::fs::create_dir(base.join("real")).unwrap();
        let ok = base.join("real/x").display().to_string();
        assert!(confine(&ok, &[base.as_path()]).is_ok());
    }
}
