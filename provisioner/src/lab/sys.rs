//! The one place the lab runs system commands: `ip` and `tc` batches in the root namespace or in one of the lab's namespaces, commands inside a namespace, and the checks that the machine can run a lab.
//!
//! Every command the lab runs goes through [`Sys`], so what the lab may
//! touch is visible here: namespaces it names (always `efl-<lab>-...`,
//! see [`super::state`]) and the interfaces inside them. The root
//! namespace only ever sees `ip netns add|del` and `ip link add ... netns`
//! lines that create a veth pair directly inside two lab namespaces.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::error::{Error, Result};

/// Where the `ip` and `tc` tools are, for a user who can run them.
#[derive(Debug, Clone)]
pub struct Sys {
    ip: PathBuf,
    tc: PathBuf,
}

/// The directory where `ip netns` keeps its namespaces.
pub(crate) const NETNS_DIR: &str = "/run/netns";

impl Sys {
    /// Finds `ip` and `tc` and checks that the user is root; the error
    /// says what is missing and how to get it.
    pub fn find() -> Result<Sys> {
        if !is_root() {
            return Err(Error::Missing {
                what: "root".to_string(),
                fix: "a lab creates network namespaces, veth pairs and qdiscs, which needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run it as root or with sudo".to_string(),
            });
        }
        let ip = which("ip").ok_or_else(|| Error::Missing {
            what: "the `ip` command".to_string(),
            fix: "install iproute2 (`apt-get install iproute2`)".to_string(),
        })?;
        let tc = which("tc").ok_or_else(|| Error::Missing {
            what: "the `tc` command".to_string(),
            fix: "install iproute2 (`apt-get install iproute2`)".to_string(),
        })?;
        Ok(Sys { ip, tc })
    }

    /// Runs `ip [-n netns] [-force] -batch -` with `lines` on its standard
    /// input; with `force`, a failing line does not stop the others and
    /// the batch's failure is ignored.
    pub(crate) fn ip_batch(
        &self,
        netns: Option<&str>,
        lines: &[String],
        force: bool,
    ) -> Result<()> {
        self.batch(&self.ip, netns, lines, force)
    }

    /// Runs `tc [-n netns] -batch -` with `lines`.
    pub(crate) fn tc_batch(&self, netns: &str, lines: &[String], force: bool) -> Result<()> {
        self.batch(&self.tc, Some(netns), lines, force)
    }

    fn batch(&self, tool: &Path, netns: Option<&str>, lines: &[String], force: bool) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut cmd = Command::new(tool);
        if let Some(ns) = netns {
            cmd.arg("-n").arg(ns);
        }
        if force {
            cmd.arg("-force");
        }
        cmd.args(["-batch", "-"]);
        let line = describe(&cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(format!("starting `{line}`"), e))?;
        let mut text = lines.join("\n");
        text.push('\n');
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(text.as_bytes())
                .map_err(|e| Error::io(format!("writing to `{line}`"), e))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| Error::io(format!("waiting for `{line}`"), e))?;
        if out.status.success() || force {
            return Ok(());
        }
        // `ip -batch` names the failing line as `Command failed -:N`.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let failed = stderr
            .lines()
            .find_map(|l| l.split("Command failed -:").nth(1))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .and_then(|n| lines.get(n.saturating_sub(1)));
        Err(Error::Command {
            command: match failed {
                Some(l) => format!("{line}: {l}"),
                None => line,
            },
            message: tail(&out),
        })
    }

    /// Runs `ip netns exec netns program args...` and returns its output;
    /// a failure is an error unless `allow_failure`.
    pub fn exec(&self, netns: &str, argv: &[&str], allow_failure: bool) -> Result<Output> {
        let mut cmd = self.exec_command(netns, argv);
        let line = describe(&cmd);
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::io(format!("running `{line}`"), e))?;
        if !out.status.success() && !allow_failure {
            return Err(Error::Command {
                command: line,
                message: tail(&out),
            });
        }
        Ok(out)
    }

    /// The command `ip netns exec netns program args...`, to spawn.
    pub(crate) fn exec_command(&self, netns: &str, argv: &[&str]) -> Command {
        let mut cmd = Command::new(&self.ip);
        cmd.args(["netns", "exec", netns]).args(argv);
        cmd
    }

    /// The command that runs `argv` inside `netns` under the host name
    /// `hostname`, with `hosts` as its `/etc/hosts`: `ip netns exec NETNS
    /// unshare --uts --mount -- sh -c 'hostname "$1" && mount --bind "$2"
    /// /etc/hosts && shift 2 && exec "$@"' lab-exec HOSTNAME HOSTS
    /// ARGV...`. The UTS and mount namespaces are the command's own (the
    /// mount private, as `unshare` makes it), so neither the machine's host
    /// name nor its `/etc/hosts` changes; every process the command starts
    /// sees `hostname` (`gethostname(2)`) and resolves the names in `hosts`
    /// from that file, as on the server it stands for. `unshare`,
    /// `hostname` and `mount` must be on the path
    /// ([`Sys::check_host_tools`]).
    pub fn exec_as_command(
        &self,
        netns: &str,
        hostname: &str,
        hosts: &Path,
        argv: &[&str],
    ) -> Command {
        let mut cmd = Command::new(&self.ip);
        cmd.args(["netns", "exec", netns, "unshare", "--uts", "--mount", "--"])
            .args([
                "sh",
                "-c",
                "hostname \"$1\" && mount --bind \"$2\" /etc/hosts && shift 2 && exec \"$@\"",
                "lab-exec",
                hostname,
            ])
            .arg(hosts)
            .args(argv);
        cmd
    }

    /// Checks that `unshare`, `mount` (util-linux) and `hostname` are
    /// there, which [`Sys::exec_as_command`] runs.
    pub fn check_host_tools(&self) -> Result<()> {
        for (tool, package) in [
            ("unshare", "util-linux"),
            ("mount", "mount"),
            ("hostname", "hostname"),
        ] {
            if which(tool).is_none() {
                return Err(Error::Missing {
                    what: format!("the `{tool}` command"),
                    fix: format!(
                        "install {package} (`apt-get install {package}`): `lab exec` gives every command the host name of its sub-node and the lab's host names in namespaces of its own"
                    ),
                });
            }
        }
        Ok(())
    }

    /// `ip -s -j -n netns link show`: every interface's counters.
    pub(crate) fn link_stats(&self, netns: &str) -> Result<Vec<u8>> {
        let mut cmd = Command::new(&self.ip);
        cmd.args(["-s", "-j", "-n", netns, "link", "show"]);
        let line = describe(&cmd);
        let out = cmd
            .output()
            .map_err(|e| Error::io(format!("running `{line}`"), e))?;
        if !out.status.success() {
            return Err(Error::Command {
                command: line,
                message: tail(&out),
            });
        }
        Ok(out.stdout)
    }

    /// The alias of the loopback interface of namespace `netns` (the
    /// lab's mark, [`super::trust`]); `None` when it has none or cannot be
    /// read.
    pub fn lo_alias(&self, netns: &str) -> Option<String> {
        let out = Command::new(&self.ip)
            .args(["-n", netns, "-j", "link", "show", "dev", "lo"])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        v.get(0)?.get("ifalias")?.as_str().map(str::to_string)
    }

    /// The process ids in a namespace (`ip netns pids`).
    pub fn pids(&self, netns: &str) -> Vec<u32> {
        Command::new(&self.ip)
            .args(["netns", "pids", netns])
            .stderr(Stdio::null())
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Every namespace `ip netns` knows, by name.
pub fn namespaces() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// True when the effective user is root (from `/proc/self/status`).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// The path of `tool` on `PATH`, or in the system directories root's
/// `PATH` has and a user's may lack.
fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The command line as people read it.
fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The exit status and the last lines a command printed.
pub fn tail(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(6);
    format!("{}: {}", out.status, lines[start..].join(" | "))
}
