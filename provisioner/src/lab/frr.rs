//! FRRouting and lldpd inside the lab's namespaces (`lab up --routing bgp`): one FRR instance per switch namespace, one lldpd per switch and sub-node namespace, nothing in the host's own namespace.
//!
//! An instance is FRR's own multi-instance mechanism, the path space
//! (`-N <instance>`): its configuration lives in `/etc/frr/<instance>/`, its
//! sockets and pid files in `/var/run/frr/<instance>/`, and `vtysh -N
//! <instance>` talks to it. The instance is named after its namespace
//! (`efl-<lab>-p<j>`), so a lab only ever makes, and `lab down` only ever
//! removes, directories named after namespaces its state file lists.
//!
//! The daemons (zebra, bgpd, bfdd, staticd) start inside the switch's
//! network namespace and in a UTS namespace of their own whose host name is
//! the physical switch's name, as on a switch whose host name is set before
//! its fabric configuration arrives: `show version` and LLDP then name the
//! switch, and `push` checks that identity. They run the `datacenter`
//! defaults profile (as Cumulus Linux does). A whole switch routes in the
//! default VRF (as the `frr` render writes it), the namespace's own table;
//! a split switch would need a Linux VRF device per half, which this
//! machine's kernel lacks (no CONFIG_NET_VRF), so a BGP lab takes plans
//! without split switches.
//!
//! A fresh instance runs a minimal configuration (the profile, nothing
//! routed); `provisioner push` with vendor `frr` brings the plan's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::{Error, Result};
use super::sys::Sys;

/// Where Debian's frr package keeps the daemons.
pub(crate) const FRR_LIB: &str = "/usr/lib/frr";

/// The daemons of a lab switch, in start order (zebra first: the others
/// connect to it).
pub(crate) const DAEMONS: [&str; 4] = ["zebra", "bgpd", "bfdd", "staticd"];

/// The configuration directory of FRR instance `inst`.
pub(crate) fn etc_dir(inst: &str) -> PathBuf {
    Path::new("/etc/frr").join(inst)
}

/// The run directory (sockets, pid files) of FRR instance `inst`.
pub(crate) fn run_dir(inst: &str) -> PathBuf {
    Path::new("/var/run/frr").join(inst)
}

/// The lldpd control socket of switch namespace `ns` (in its FRR run
/// directory, so that the `frr` push client finds it from the namespace
/// name alone).
pub(crate) fn lldpd_socket(ns: &str) -> PathBuf {
    run_dir(ns).join("lldpd.socket")
}

/// The configuration a fresh lab switch runs until `push` brings the
/// plan's: the defaults profile and the integrated configuration file.
pub(crate) const MINIMAL_CONFIG: &str =
    "frr defaults datacenter\nservice integrated-vtysh-config\n!\n";

/// Checks that FRR, frr-reload.py and lldpd are installed; the error says
/// how to get them.
pub fn check() -> Result<()> {
    let fix = "run .ci/install-deps, or `apt-get install --no-install-recommends frr frr-pythontools lldpd`";
    let mut need: Vec<PathBuf> = DAEMONS.iter().map(|d| Path::new(FRR_LIB).join(d)).collect();
    need.push(PathBuf::from("/usr/lib/frr/frr-reload.py"));
    need.push(PathBuf::from("/usr/bin/vtysh"));
    need.push(PathBuf::from("/usr/sbin/lldpd"));
    need.push(PathBuf::from("/usr/sbin/lldpctl"));
    if let Some(missing) = need.iter().find(|p| !p.is_file()) {
        return Err(Error::Missing {
            what: missing.display().to_string(),
            fix: fix.to_string(),
        });
    }
    if user_ids("frr").is_none() {
        return Err(Error::Missing {
            what: "the frr user (made by the frr package)".to_string(),
            fix: fix.to_string(),
        });
    }
    Ok(())
}

/// The uid and gid of a user, from /etc/passwd.
fn user_ids(user: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == user).then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

/// Starts FRR instance `ns` inside namespace `ns`: writes its
/// configuration (`config`, or the minimal one), starts the daemons with
/// host name `hostname`, and loads the configuration.
pub fn start(sys: &Sys, ns: &str, hostname: &str, config: Option<&str>) -> Result<()> {
    let (uid, gid) = user_ids("frr").ok_or_else(|| Error::Missing {
        what: "the frr user".to_string(),
        fix: "install the frr package".to_string(),
    })?;
    for dir in [etc_dir(ns), run_dir(ns)] {
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::os::unix::fs::chown(&dir, Some(uid), Some(gid)))
            .map_err(|e| Error::io(format!("making {}", dir.display()), e))?;
    }
    let etc = etc_dir(ns);
    for (file, text) in [
        ("vtysh.conf", "service integrated-vtysh-config\n"),
        ("frr.conf", config.unwrap_or(MINIMAL_CONFIG)),
    ] {
        let path = etc.join(file);
        std::fs::write(&path, text)
            .and_then(|()| std::os::unix::fs::chown(&path, Some(uid), Some(gid)))
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    }
    // One shell in a new UTS namespace sets the host name and starts the
    // daemons; each daemonises once it is ready for the next.
    let script = r#"hostname "$1" || exit 1
for d in zebra bgpd bfdd staticd; do
  "$3/$d" -N "$2" -d -F datacenter -A 127.0.0.1 || { echo "$d did not start" >&2; exit 1; }
done"#;
    sys.exec(
        ns,
        &[
            "unshare", "--uts", "--", "/bin/sh", "-c", script, "sh", hostname, ns, FRR_LIB,
        ],
        false,
    )?;
    sys.exec(ns, &["vtysh", "-N", ns, "-b"], false)?;
    if let Some(config) = config {
        record_applied(sys, ns, config)?;
    }
    Ok(())
}

/// Records `config` as the applied candidate of instance `ns` as the
/// `frr` push client does after a commit (the candidate and what
/// frr-reload.py still lists once it runs: lines FRR keeps at their
/// default), so that a push of the same plan finds no change.
fn record_applied(sys: &Sys, ns: &str, config: &str) -> Result<()> {
    let run = run_dir(ns);
    let zebra = std::fs::read_to_string(run.join("zebra.pid"))
        .map_err(|e| Error::io(format!("reading {}", run.join("zebra.pid").display()), e))?;
    let file = etc_dir(ns).join("frr.conf").display().to_string();
    let out = sys.exec(
        ns,
        &[
            "nsenter",
            &format!("--target={}", zebra.trim()),
            "--uts",
            "--",
            "/usr/lib/frr/frr-reload.py",
            "--test",
            "--stdout",
            "--log-level",
            "error",
            "-N",
            ns,
            &file,
        ],
        false,
    )?;
    let residue = crate::push::frr::reload_diff(&String::from_utf8_lossy(&out.stdout));
    for (name, text) in [
        (crate::push::frr::APPLIED, config),
        (crate::push::frr::RESIDUE, residue.as_str()),
    ] {
        let path = run.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    }
    Ok(())
}

/// Starts lldpd in namespace `ns` with system name `name`, on the
/// interfaces matching `interfaces` (`swp*`, `eth0`), its control socket
/// at `socket`: ports are identified by interface name (or as `port_id`,
/// a sub-node's NIC name in the plan) and announced every 5 s. It runs in the foreground of its own process group (no pid file:
/// many run at once); `lab down` stops it with everything else in the
/// namespace.
pub(crate) fn start_lldpd(
    sys: &Sys,
    ns: &str,
    name: &str,
    interfaces: &str,
    port_id: Option<&str>,
    socket: &Path,
) -> Result<()> {
    let dir = socket
        .parent()
        .ok_or_else(|| Error::io("lldpd socket", std::io::Error::other("no directory")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("making {}", dir.display()), e))?;
    // lldpd's privilege-separated child chroots here; the package's tmpfiles
    // entry makes it at boot, a machine without systemd may lack it.
    std::fs::create_dir_all("/run/lldpd")
        .map_err(|e| Error::io("making /run/lldpd".to_string(), e))?;
    let conf = socket.with_extension("conf");
    let id = match port_id {
        Some(nic) => format!("configure lldp portidsubtype local {nic}\n"),
        None => "configure lldp portidsubtype ifname\n".to_string(),
    };
    std::fs::write(&conf, format!("{id}configure lldp tx-interval 5\n"))
        .map_err(|e| Error::io(format!("writing {}", conf.display()), e))?;
    let script = r#"hostname "$1" && exec lldpd -d -u "$2" -I "$3" -O "$4""#;
    let sock = socket.display().to_string();
    let conf = conf.display().to_string();
    let mut cmd: Command = sys.exec_command(
        ns,
        &[
            "unshare", "--uts", "--", "/bin/sh", "-c", script, "sh", name, &sock, interfaces, &conf,
        ],
    );
    use std::os::unix::process::CommandExt as _;
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io(format!("starting lldpd in {ns}"), e))?;
    Ok(())
}

/// One device of a BGP lab, as `push` reads it from a devices file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LabDevice {
    /// The plan's physical switch.
    pub switch: String,
    /// Always `frr`.
    pub vendor: &'static str,
    /// Always `netns`.
    pub transport: &'static str,
    /// The switch's namespace (and FRR instance).
    pub netns: String,
}

/// The devices of a BGP lab: one per physical switch, vendor `frr` over
/// transport `netns`.
pub fn devices(st: &super::state::State) -> Vec<LabDevice> {
    st.physicals()
        .iter()
        .enumerate()
        .map(|(j, name)| LabDevice {
            switch: name.to_string(),
            vendor: "frr",
            transport: "netns",
            netns: super::state::physical_ns(&st.name, j),
        })
        .collect()
}

/// The devices file of a BGP lab (TOML, the format of `push --devices`).
pub fn devices_toml(st: &super::state::State) -> String {
    let mut t = format!(
        "# The switches of lab {} (plan {}): FRR in network namespaces of this\n# machine, reached with vtysh (written by `provisioner lab devices`).\n",
        st.name, st.plan_file
    );
    for d in devices(st) {
        t += &format!(
            "\n[[device]]\nswitch = {}\nvendor = \"{}\"\ntransport = \"{}\"\nnetns = \"{}\"\n",
            toml_string(&d.switch),
            d.vendor,
            d.transport,
            d.netns
        );
    }
    t
}

/// A TOML string (quoted and escaped by the toml crate).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Removes the FRR directories `dirs` (the state file's list) after the
/// daemons are gone.
pub(crate) fn remove_dirs(dirs: &[String]) -> Result<()> {
    for d in dirs {
        let path = Path::new(d);
        // Only directories of FRR instances named after a lab namespace.
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("efl-"))
            && (path.starts_with("/etc/frr") || path.starts_with("/var/run/frr"));
        if !ours {
            continue;
        }
        match std::fs::remove_dir_all(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("removing {}", path.display()), e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_paths_are_named_after_the_namespace() {
        assert_eq!(etc_dir("efl-lab-p0"), PathBuf::from("/etc/frr/efl-lab-p0"));
        assert_eq!(
            run_dir("efl-lab-p0"),
            PathBuf::from("/var/run/frr/efl-lab-p0")
        );
        assert_eq!(
            lldpd_socket("efl-lab-p3"),
            PathBuf::from("/var/run/frr/efl-lab-p3/lldpd.socket")
        );
    }

    #[test]
    fn switch_names_are_toml_strings() {
        assert_eq!(toml_string("sw1"), "\"sw1\"");
        let parsed: toml::Value =
            toml::from_str(&format!("x = {}", toml_string("a\"b\\c"))).unwrap();
        assert_eq!(parsed["x"].as_str(), Some("a\"b\\c"));
    }

    #[test]
    fn only_lab_instance_directories_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("efl-x-p0");
        std::fs::create_dir(&other).unwrap();
        // Not under /etc/frr or /var/run/frr: left alone.
        remove_dirs(&[other.display().to_string()]).unwrap();
        assert!(other.exists());
    }
}
