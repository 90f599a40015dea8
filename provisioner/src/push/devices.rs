//! The devices file: per physical switch of the plan, how to reach it and
//! where its credentials come from. Read into checked [`Target`]s; every
//! problem names the file and line.
//!
//! ```toml
//! [[device]]
//! switch = "sw01"                  # a physical switch of the plan
//! vendor = "nvue"                  # the render vendor table's names
//! transport = "https"              # https | ssh | netns
//! address = "192.0.2.10:8765"
//! user = "cumulus"
//! password_env = "SW01_PASSWORD"   # or password_file = "/path" (0600 or 0400, ours)
//! ca_file = "ca.pem"               # optional; TLS is verified by default
//! tls_server_name = "sw01.mgmt.example"  # optional: the name the certificate
//!                                  # is issued for, when address is an IP
//! ```
//!
//! Credentials are read here and kept only in [`Secret`]s; no message of
//! this module carries one.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use planner::checked::CheckedPlan;
use planner::render::Vendor;
use serde::Deserialize;
use toml::Spanned;

use super::device::{HostKeyCheck, Secret, Target, Tls, Transport};
use super::error::{PushError, Result};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    device: Vec<Spanned<RawDevice>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    switch: Spanned<String>,
    vendor: Spanned<String>,
    transport: Option<Spanned<String>>,
    address: Option<Spanned<String>>,
    netns: Option<Spanned<String>>,
    user: Option<Spanned<String>>,
    password_env: Option<Spanned<String>>,
    password_file: Option<Spanned<String>>,
    ca_file: Option<Spanned<String>>,
    tls_verify: Option<Spanned<bool>>,
    tls_server_name: Option<Spanned<String>>,
    known_hosts: Option<Spanned<String>>,
    host_key_sha256: Option<Spanned<String>>,
    host_key_check: Option<Spanned<bool>>,
    native_timer: Option<Spanned<bool>>,
}

/// True for a DNS name a certificate can be issued for: labels of
/// letters, digits and `-`, not starting or ending with `-`, joined by
/// dots; not an IP address.
fn is_dns_name(n: &str) -> bool {
    n.len() <= 253
        && n.parse::<std::net::IpAddr>().is_err()
        && n.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// One checked entry of the devices file.
#[derive(Debug, Clone)]
pub struct Entry {
    /// How to reach the switch, credentials resolved.
    pub target: Target,
    /// False when the file says `native_timer = false`: the push runs its
    /// own confirm timer (a watchdog process) even when the device has one
    /// (firmware without commit timers).
    pub native_timer: bool,
    /// The line of the entry in the file.
    pub line: usize,
}

/// A checked devices file: one entry per physical switch of the plan, in
/// the plan's order, and the warnings to show on every run.
#[derive(Debug, Clone)]
pub struct Devices {
    /// The file as the user named it.
    pub file: String,
    /// Per physical switch, in plan order.
    pub entries: Vec<Entry>,
    /// Checks turned off (`tls_verify = false`, `host_key_check =
    /// false`), one line each.
    pub warnings: Vec<String>,
}

impl Devices {
    /// The entry of physical switch `switch`.
    pub fn get(&self, switch: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.target.switch == switch)
    }

    /// The entry of physical switch `switch`, or an error naming the file.
    pub fn entry(&self, switch: &str) -> Result<&Entry> {
        self.get(switch).ok_or_else(|| PushError::Parameter {
            parameter: "switch".to_string(),
            message: format!("{switch} has no entry in {}", self.file),
        })
    }
}

/// The plan's physical switches in plan order.
pub fn physical_switches(plan: &CheckedPlan) -> Vec<String> {
    let mut seen = BTreeSet::new();
    plan.switch_list
        .iter()
        .filter(|s| seen.insert(s.physical.as_str()))
        .map(|s| s.physical.to_string())
        .collect()
}

/// Reads and checks the devices file `text` (named `file`, relative paths
/// in it are taken from `dir`) against `plan`.
pub fn read(text: &str, file: &str, dir: &Path, plan: &CheckedPlan) -> Result<Devices> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (line, column) = planner::error::line_col(text, offset);
        PushError::DevicesSyntax {
            file: file.to_string(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    let line = |offset: usize| planner::error::line_col(text, offset).0;
    let physical = physical_switches(plan);
    let mut problems: Vec<(usize, String)> = Vec::new();
    let mut warnings = Vec::new();
    let mut by_switch: BTreeMap<String, Entry> = BTreeMap::new();
    let mut first_line: BTreeMap<String, usize> = BTreeMap::new();
    for d in &raw.device {
        let at = line(d.span().start);
        let d = d.get_ref();
        let switch = d.switch.get_ref().clone();
        let sl = line(d.switch.span().start);
        if !physical.contains(&switch) {
            let hint = match plan.switch_list.iter().find(|s| s.name == switch) {
                Some(s) => format!(
                    "; {switch} is a VLAN half of the physical switch {}: name that",
                    s.physical
                ),
                None => format!(
                    "; the plan's physical switches are {}",
                    short_list(&physical)
                ),
            };
            problems.push((sl, format!("switch {switch} is not in the plan{hint}")));
            continue;
        }
        if let Some(prev) = first_line.get(&switch) {
            problems.push((
                sl,
                format!("switch {switch} is already given on line {prev}; give each switch once"),
            ));
            continue;
        }
        first_line.insert(switch.clone(), sl);
        match check_entry(d, &switch, plan, dir, &line) {
            Ok((target, native_timer, mut w)) => {
                warnings.append(&mut w);
                by_switch.insert(
                    switch,
                    Entry {
                        target,
                        native_timer,
                        line: at,
                    },
                );
            }
            Err(mut p) => problems.append(&mut p),
        }
    }
    for s in &physical {
        if !first_line.contains_key(s) {
            problems.push((
                0,
                format!("switch {s} of the plan has no [[device]] entry; add one"),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(PushError::Devices {
            file: file.to_string(),
            problems,
        });
    }
    let entries = physical
        .iter()
        .filter_map(|s| by_switch.remove(s))
        .collect();
    Ok(Devices {
        file: file.to_string(),
        entries,
        warnings,
    })
}

pub(crate) fn short_list(names: &[String]) -> String {
    if names.len() <= 6 {
        names.join(", ")
    } else {
        format!("{}, ... ({} in all)", names[..6].join(", "), names.len())
    }
}

type Checked = (Target, bool, Vec<String>);

/// Checks one entry; every problem with its line.
fn check_entry(
    d: &RawDevice,
    switch: &str,
    plan: &CheckedPlan,
    dir: &Path,
    line: &dyn Fn(usize) -> usize,
) -> std::result::Result<Checked, Vec<(usize, String)>> {
    let mut problems = Vec::new();
    let at = |s: &Spanned<String>| line(s.span().start);
    let vendor = match Vendor::named(d.vendor.get_ref()) {
        Some(v) => Some(v),
        None => {
            problems.push((
                at(&d.vendor),
                format!(
                    "switch {switch}: vendor `{}` is unknown; give {}",
                    d.vendor.get_ref(),
                    Vendor::names()
                ),
            ));
            None
        }
    };
    if let Some(v) = vendor
        && let Some(m) = vendor_mismatch(plan, switch, v)
    {
        problems.push((at(&d.vendor), m));
    }
    let transport = match (&d.transport, vendor) {
        (Some(t), _) => {
            match t.get_ref().as_str() {
                "https" => Some(Transport::Https),
                "ssh" => Some(Transport::Ssh),
                "netns" => Some(Transport::Netns),
                other => {
                    problems.push((
                    at(t),
                    format!("switch {switch}: transport `{other}` is unknown; give https, ssh or netns"),
                ));
                    None
                }
            }
        }
        (None, Some(v)) => Some(default_transport(v)),
        (None, None) => None,
    };
    if let (Some(v), Some(t)) = (vendor, transport)
        && !allowed(v).contains(&t)
    {
        let l = d.transport.as_ref().map_or(at(&d.vendor), at);
        problems.push((
            l,
            format!(
                "switch {switch}: vendor {v} is not reached over {}; give transport = {}",
                t.as_str(),
                allowed(v)
                    .iter()
                    .map(|t| format!("\"{}\"", t.as_str()))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    let netns_only = transport == Some(Transport::Netns);
    let entry_line = at(&d.switch);
    // Fields that belong to other transports.
    let misplaced: [(&str, Option<usize>, bool); 8] = [
        ("netns", d.netns.as_ref().map(at), !netns_only),
        (
            "ca_file",
            d.ca_file.as_ref().map(at),
            transport != Some(Transport::Https),
        ),
        (
            "tls_verify",
            d.tls_verify.as_ref().map(|s| line(s.span().start)),
            transport != Some(Transport::Https),
        ),
        (
            "tls_server_name",
            d.tls_server_name.as_ref().map(at),
            transport != Some(Transport::Https),
        ),
        (
            "known_hosts",
            d.known_hosts.as_ref().map(at),
            transport != Some(Transport::Ssh),
        ),
        (
            "host_key_sha256",
            d.host_key_sha256.as_ref().map(at),
            transport != Some(Transport::Ssh),
        ),
        (
            "host_key_check",
            d.host_key_check.as_ref().map(|s| line(s.span().start)),
            transport != Some(Transport::Ssh),
        ),
        ("address", d.address.as_ref().map(at), netns_only),
    ];
    if let Some(t) = transport {
        for (key, l, wrong) in misplaced {
            if let (Some(l), true) = (l, wrong) {
                problems.push((
                    l,
                    format!(
                        "switch {switch}: `{key}` does not apply to transport {}; remove it",
                        t.as_str()
                    ),
                ));
            }
        }
    }
    let mut warnings = Vec::new();
    let mut address = String::new();
    let mut user = String::new();
    let mut password = None;
    let mut netns = None;
    if netns_only {
        match &d.netns {
            Some(n) => netns = Some(n.get_ref().clone()),
            None => problems.push((
                entry_line,
                format!("switch {switch}: transport netns needs `netns = \"<namespace>\"`"),
            )),
        }
        for (key, v) in [
            ("user", &d.user),
            ("password_env", &d.password_env),
            ("password_file", &d.password_file),
        ] {
            if let Some(v) = v {
                problems.push((
                    at(v),
                    format!(
                        "switch {switch}: `{key}` does not apply to transport netns; remove it"
                    ),
                ));
            }
        }
    } else if transport.is_some() {
        match &d.address {
            Some(a) if valid_address(a.get_ref()) => address = a.get_ref().clone(),
            Some(a) => problems.push((
                at(a),
                format!(
                    "switch {switch}: address `{}` is not host:port; give e.g. \"192.0.2.10:8765\"",
                    a.get_ref()
                ),
            )),
            None => problems.push((
                entry_line,
                format!("switch {switch}: no `address`; give \"host:port\""),
            )),
        }
        match &d.user {
            Some(u) if !u.get_ref().is_empty() => user = u.get_ref().clone(),
            Some(u) => problems.push((at(u), format!("switch {switch}: `user` is empty"))),
            None => problems.push((entry_line, format!("switch {switch}: no `user`"))),
        }
        match (&d.password_env, &d.password_file) {
            (Some(e), None) => match std::env::var(e.get_ref()) {
                Ok(v) if !v.is_empty() => password = Some(Secret::new(v)),
                _ => problems.push((
                    at(e),
                    format!(
                        "switch {switch}: the environment variable {} (password_env) is not set or empty; export it before the push",
                        e.get_ref()
                    ),
                )),
            },
            (None, Some(f)) => {
                let path = resolve(dir, f.get_ref());
                match read_password_file(&path) {
                    Ok(v) => password = Some(v),
                    Err(m) => problems.push((at(f), format!("switch {switch}: {m}"))),
                }
            }
            (Some(e), Some(_)) => problems.push((
                at(e),
                format!("switch {switch}: give password_env or password_file, not both"),
            )),
            (None, None) => problems.push((
                entry_line,
                format!(
                    "switch {switch}: no password source; give password_env = \"VAR\" or password_file = \"/path\" (credentials are never taken from the command line)"
                ),
            )),
        }
    }
    let tls = Tls {
        ca_file: d.ca_file.as_ref().map(|f| resolve(dir, f.get_ref())),
        verify: d.tls_verify.as_ref().is_none_or(|v| *v.get_ref()),
        server_name: d.tls_server_name.as_ref().map(|n| n.get_ref().clone()),
    };
    if let Some(n) = &d.tls_server_name
        && transport == Some(Transport::Https)
    {
        let name = n.get_ref();
        if !is_dns_name(name) {
            problems.push((
                at(n),
                format!(
                    "switch {switch}: tls_server_name `{}` is not a DNS name (letters, digits, `-` and `.`; the name the switch's certificate is issued for)",
                    planner::names::escape(name)
                ),
            ));
        } else if let Some(a) = &d.address
            && a.get_ref().parse::<std::net::SocketAddr>().is_err()
        {
            problems.push((
                at(a),
                format!(
                    "switch {switch}: with tls_server_name, address must be IP:port (the name is used for the certificate, the address to connect); `{}` is not",
                    planner::names::escape(a.get_ref())
                ),
            ));
        }
    }
    if let Some(f) = &tls.ca_file
        && transport == Some(Transport::Https)
        && !f.is_file()
    {
        let l = d.ca_file.as_ref().map_or(entry_line, at);
        problems.push((
            l,
            format!("switch {switch}: ca_file {} does not exist", f.display()),
        ));
    }
    if transport == Some(Transport::Https) && !tls.verify {
        warnings.push(format!(
            "switch {switch}: TLS certificate check is OFF (tls_verify = false in the devices file); anyone on the path can read its credentials"
        ));
    }
    let host_key = match (&d.known_hosts, &d.host_key_sha256, &d.host_key_check) {
        (Some(k), None, None) => HostKeyCheck::KnownHosts(resolve(dir, k.get_ref())),
        (None, Some(h), None) => HostKeyCheck::Sha256(h.get_ref().clone()),
        (None, None, Some(c)) if !*c.get_ref() => HostKeyCheck::Off,
        (None, None, None) if transport == Some(Transport::Ssh) => {
            problems.push((
                entry_line,
                format!(
                    "switch {switch}: no host key check; give known_hosts = \"file\" or host_key_sha256 = \"SHA256:...\" (or host_key_check = false to turn it off)"
                ),
            ));
            HostKeyCheck::Off
        }
        (None, None, _) => HostKeyCheck::Off,
        _ => {
            if transport == Some(Transport::Ssh) {
                problems.push((
                    entry_line,
                    format!(
                        "switch {switch}: give one of known_hosts, host_key_sha256 or host_key_check = false"
                    ),
                ));
            }
            HostKeyCheck::Off
        }
    };
    if transport == Some(Transport::Ssh)
        && host_key == HostKeyCheck::Off
        && d.host_key_check.is_some()
    {
        warnings.push(format!(
            "switch {switch}: SSH host key check is OFF (host_key_check = false in the devices file); anyone on the path can read its credentials"
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let (Some(vendor), Some(transport)) = (vendor, transport) else {
        return Err(problems);
    };
    Ok((
        Target {
            switch: switch.to_string(),
            vendor,
            transport,
            address,
            netns,
            user,
            password,
            tls,
            host_key,
        },
        d.native_timer.as_ref().is_none_or(|v| *v.get_ref()),
        warnings,
    ))
}

/// The transports a vendor is reached over, the first the default (its
/// client's [`super::Connect::TRANSPORTS`]).
fn allowed(v: Vendor) -> &'static [Transport] {
    super::Client::transports(v)
}

fn default_transport(v: Vendor) -> Transport {
    allowed(v)[0]
}

/// A message when the plan names the switch's ports in another vendor's
/// style (its `port_name` pattern), so `vendor`'s render would not fit the
/// device.
fn vendor_mismatch(plan: &CheckedPlan, switch: &str, vendor: Vendor) -> Option<String> {
    let s = plan
        .switch_list
        .iter()
        .find(|s| s.physical == switch && s.port_name.is_some())?;
    let pattern = s.port_name.as_deref()?;
    let port = s.ports.first().map_or(1, |p| p.port);
    let name = pattern.replace("{p}", &port.to_string());
    if vendor.accepts_interface(&name) {
        return None;
    }
    let fits: Vec<&str> = Vendor::ALL
        .iter()
        .filter(|v| v.accepts_interface(&name))
        .map(|v| v.as_str())
        .collect();
    if fits.is_empty() {
        return None;
    }
    Some(format!(
        "switch {switch}: vendor {vendor} does not match the plan, which names its ports `{pattern}` ({} style); give vendor = \"{}\" or design the plan with this vendor's port names",
        fits.join("/"),
        fits[0]
    ))
}

fn valid_address(a: &str) -> bool {
    match a.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty()
                && !host.contains(char::is_whitespace)
                && port.parse::<u16>().is_ok_and(|p| p > 0)
        }
        None => false,
    }
}

fn resolve(dir: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Reads a password file that only its owner (this user) may read.
fn read_password_file(path: &Path) -> std::result::Result<Secret, String> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read password_file {shown}: {e}"))?;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "password_file {shown} may be read by others (mode {mode:04o}); run `chmod 600 {shown}`"
        ));
    }
    let me = rustix::process::getuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "password_file {shown} belongs to user id {}, not to this user ({me}); keep credentials in a file you own",
            meta.uid()
        ));
    }
    let text = planner::input::read(path)
        .map_err(|e| format!("cannot read password_file {shown}: {e}"))?;
    let value = text.strip_suffix('\n').unwrap_or(&text);
    let value = value.strip_suffix('\r').unwrap_or(value);
    if value.is_empty() {
        return Err(format!("password_file {shown} is empty"));
    }
    Ok(Secret::new(value.to_string()))
}
