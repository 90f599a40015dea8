//! The one interface every switch client implements ([`Device`]), the
//! plain types it exchanges, and what a client is given to connect
//! ([`Connect`], [`Target`], [`Secret`]).
//!
//! A client speaks one vendor's remote interface (NVUE REST, eAPI, SSH
//! CLI, vtysh); it knows nothing about plans, rollouts or journals. The
//! push (`super`) drives it through [`Device`] in this order: `identity`,
//! `load`, then `discard` (dry run, or no diff) or `commit`, `observe`,
//! then `confirm` or `rollback`.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::Result;

/// What a vendor client is before it connects: the transports its vendor
/// is reached over, what it loads as a candidate, and how it is made for
/// one switch. With [`Device`], all a new push client implements; its row
/// in [`super::Client`]'s list is its registration.
pub trait Connect: Sized {
    /// The transports the vendor is reached over, the first the default.
    const TRANSPORTS: &'static [Transport];
    /// What the client loads.
    const CANDIDATE: Candidate = Candidate::Rendered;
    /// The client of the switch at `target`.
    fn connect(target: &Target, opening: &Opening<'_>) -> Result<Self>;
}

/// A boxed client (an SSH session is large beside the other clients) is
/// made as the client is.
impl<T: Connect> Connect for Box<T> {
    const TRANSPORTS: &'static [Transport] = T::TRANSPORTS;
    const CANDIDATE: Candidate = T::CANDIDATE;
    fn connect(target: &Target, opening: &Opening<'_>) -> Result<Self> {
        Ok(Box::new(T::connect(target, opening)?))
    }
}

/// What a client loads as a switch's candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Candidate {
    /// The rendered configuration text (`planner::render::render`).
    Rendered,
    /// NVUE's JSON tree, emitted from the same commands as the rendered
    /// script (`planner::render::nvue_trees`).
    NvueTree,
}

/// What a client is made with besides its target (see
/// [`super::connect::connect`]).
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    /// The devices file's `native_timer`: the device's own confirm timer
    /// may be used.
    pub native_timer: bool,
    /// The name of the candidate's configure session.
    pub session: &'a str,
    /// An earlier process committed, and the commit may wait on its timer.
    pub waiting: bool,
    /// The push's confirm timer.
    pub timer: Duration,
}

/// A switch's remote interface, one implementation per vendor client.
///
/// The methods are async (reqwest and russh are); implementations write
/// them as plain `async fn`. The futures are `Send` so that the switches of
/// a batch run as tokio tasks. Dispatch is static, through
/// [`super::Client`].
pub trait Device {
    /// What the device says it is: its hostname, and its serial number when
    /// it reports one.
    fn identity(&mut self) -> impl Future<Output = Result<Identity>> + Send;

    /// Opens a session or takes the lock, loads `candidate` (the rendered
    /// configuration of this switch, full replace semantics: CLI text, or
    /// for NVUE the JSON tree its REST API takes) and returns
    /// the diff running -> candidate as unified text: lines starting with
    /// `-` are removed, `+` added; the empty string means no change.
    ///
    /// A lock held by someone else is [`super::PushError::Locked`]; a
    /// candidate the device refuses is [`super::PushError::Rejected`]
    /// with the device's own message.
    fn load(&mut self, candidate: &str) -> impl Future<Output = Result<String>> + Send;

    /// Drops the loaded candidate and releases the lock (dry run, no diff,
    /// or a failure before the commit).
    fn discard(&mut self) -> impl Future<Output = Result<()>> + Send;

    /// Saves (or names) the rollback point, the configuration that runs
    /// now, without changing it. The push calls it before
    /// [`Device::commit`] and journals the point durably before the commit
    /// request goes out (issue #30), so a push killed at any moment leaves
    /// a journal that `push rollback` can act on. `commit` prepares by
    /// itself when this was not called.
    fn prepare(&mut self) -> impl Future<Output = Result<String>> + Send;

    /// True when [`Device::commit`] uses the device's own confirm timer
    /// (else the push's watchdog keeps it, started before the commit).
    fn native_timer(&self) -> bool;

    /// Commits the loaded candidate so that it rolls back by itself unless
    /// confirmed within `timer`. Returns the rollback point and whether the
    /// timer is the device's own ([`Commit::native_timer`]); when it is not,
    /// the caller runs its own timer (a detached `provisioner push
    /// watchdog` process) that calls [`Device::rollback`] at expiry.
    fn commit(&mut self, timer: Duration) -> impl Future<Output = Result<Commit>> + Send;

    /// Reads what verification needs: LLDP neighbours, interfaces, BGP and
    /// BFD sessions and installed routes.
    fn observe(&mut self) -> impl Future<Output = Result<Observed>> + Send;

    /// Keeps the commit (stops the timer) and saves it to the startup
    /// configuration.
    fn confirm(&mut self) -> impl Future<Output = Result<()>> + Send;

    /// Goes back to `point` (a [`Commit::point`]) now. Also used after the
    /// timer expired on devices without a native one.
    fn rollback(&mut self, point: &str) -> impl Future<Output = Result<()>> + Send;
}

/// What a device says it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The configured hostname (compared with the plan's physical switch
    /// name).
    pub hostname: String,
    /// The serial number, when the device reports one.
    pub serial: Option<String>,
}

/// The result of [`Device::commit`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    /// Where [`Device::rollback`] goes back to: a revision id, a
    /// checkpoint name, a file name. Never a secret: it is journaled.
    pub point: String,
    /// True when the device rolls back by itself unless confirmed in time;
    /// false when the caller must run the timer.
    pub native_timer: bool,
}

/// What a device reports for verification. Every list is in the device's
/// order; verification does not depend on it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// LLDP neighbours seen on local ports.
    pub lldp: Vec<LldpNeighbour>,
    /// Interfaces with their operational state.
    pub interfaces: Vec<Interface>,
    /// BGP sessions (empty when the device runs no BGP).
    pub bgp: Vec<BgpSession>,
    /// BFD peers (empty when the device runs no BFD).
    pub bfd: Vec<BfdPeer>,
    /// Installed routes.
    pub routes: Vec<Route>,
}

/// One LLDP neighbour on a local port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LldpNeighbour {
    /// The local interface (`swp1`, `Ethernet1/1`).
    pub port: String,
    /// The neighbour's system name (its hostname).
    pub system: String,
    /// The neighbour's port id or description, as it sends it.
    pub port_id: String,
}

/// One interface's operational state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    /// The interface name.
    pub name: String,
    /// True when operationally up.
    pub up: bool,
    /// The negotiated speed in Mb/s, when the device reports one.
    pub speed_mbps: Option<u64>,
}

/// One BGP session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BgpSession {
    /// The VRF (`default` for the global table).
    pub vrf: String,
    /// The peer's address (or interface for unnumbered sessions).
    pub peer: String,
    /// The peer's AS number, when known.
    pub remote_as: Option<u32>,
    /// True when the session is Established.
    pub established: bool,
    /// Why the session last went down, as the device words it (NVUE's
    /// `last-reset-reason`), when it reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reset: Option<String>,
}

/// One BFD peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BfdPeer {
    /// The VRF (`default` for the global table).
    pub vrf: String,
    /// The peer's address.
    pub peer: String,
    /// True when the session is up.
    pub up: bool,
}

/// One installed route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The VRF (`default` for the global table).
    pub vrf: String,
    /// The prefix, `address/length`.
    pub prefix: String,
    /// The next-hop addresses (several for ECMP; empty for a connected
    /// route).
    pub next_hops: Vec<String>,
}

/// A password or other credential. Its `Debug` shows `***`; it has no
/// `Display` and no `Serialize`, so it cannot reach output, logs or the
/// journal by accident. Only a client reads it, with [`Secret::expose`],
/// to put it on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The credential, for the wire only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// How the client reaches the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// HTTPS (NVUE REST, eAPI).
    Https,
    /// SSH (SONiC, Comware, FRR on a Linux switch).
    Ssh,
    /// `vtysh` inside a network namespace of this machine (FRR in the
    /// lab).
    Netns,
}

impl Transport {
    /// The name in the devices file.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Https => "https",
            Transport::Ssh => "ssh",
            Transport::Netns => "netns",
        }
    }
}

/// TLS settings of an HTTPS device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// The CA certificates (PEM) that sign the device's certificate; when
    /// given, the only ones trusted (else the system's roots).
    pub ca_file: Option<PathBuf>,
    /// False only when the devices file says `tls_verify = false`
    /// (warned about on every run).
    pub verify: bool,
    /// The name the device's certificate is issued for, when the address
    /// is an IP (`tls_server_name`): sent as SNI and checked against the
    /// certificate; the connection still goes to the address.
    pub server_name: Option<String>,
}

/// How an SSH device's host key is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyCheck {
    /// Against an OpenSSH known-hosts file.
    KnownHosts(PathBuf),
    /// Against a pinned fingerprint, `SHA256:<base64>` as `ssh-keygen -l`
    /// prints it.
    Sha256(String),
    /// Not checked (`host_key_check = false`, warned about on every run).
    Off,
}

/// Everything a client needs to reach one switch: one checked entry of the
/// devices file, credentials resolved.
#[derive(Debug, Clone)]
pub struct Target {
    /// The plan's physical switch name (also the expected hostname).
    pub switch: String,
    /// The vendor (the render vendor table).
    pub vendor: planner::render::Vendor,
    /// How it is reached.
    pub transport: Transport,
    /// `host:port` (empty for `netns`).
    pub address: String,
    /// The network namespace (`netns` only).
    pub netns: Option<String>,
    /// The user name (empty for `netns`).
    pub user: String,
    /// The password (`None` for `netns`).
    pub password: Option<Secret>,
    /// TLS settings (`https` only).
    pub tls: Tls,
    /// Host key check (`ssh` only).
    pub host_key: HostKeyCheck,
}

/// True when a device's hostname names `switch` (also as the first label
/// of a fully qualified name).
pub fn same_host(hostname: &str, switch: &str) -> bool {
    hostname.eq_ignore_ascii_case(switch)
        || hostname
            .split('.')
            .next()
            .is_some_and(|h| h.eq_ignore_ascii_case(switch))
}
