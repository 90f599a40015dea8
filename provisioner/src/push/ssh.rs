//! The SSH transport of the switch clients driven over SSH (SONiC, Comware):
//! connect with a checked host key and a password, run a command and
//! capture its output and exit status, send a file on a command's standard
//! input, and drive an interactive CLI (a shell channel with a pty, read up
//! to a prompt).
//!
//! Built on `russh` (pure Rust, `ring` ciphers). The host key is checked
//! before the password is sent: against an OpenSSH known-hosts file (plain
//! and hashed `|1|` entries, `[host]:port`, `*`/`?` patterns, `!` negation,
//! `@revoked`), or against a pinned `SHA256:` fingerprint as `ssh-keygen -l`
//! prints it. Accepting any key happens only for [`HostKeyCheck::Off`],
//! which the devices file sets only on an explicit `host_key_check = false`
//! (and the push warns about it on every run).
//!
//! Every wait has a deadline: the connection (TCP, key exchange and login)
//! and each command. A connection that drops is reported as
//! [`PushError::Transport`] naming what was being done; keepalives detect a
//! peer that vanished without closing.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use russh::client::{self, Handle, KeyboardInteractiveAuthResponse};
use russh::keys::{HashAlg, PublicKey, PublicKeyOrCertificate};
use russh::{ChannelMsg, Disconnect};
use sha1::Sha1;

use super::device::{HostKeyCheck, Secret, Target};
use super::error::{BoxError, PushError, Result};

/// Deadlines of one SSH connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SshOptions {
    /// TCP connect, key exchange and login together.
    pub connect: Duration,
    /// One command, from sending it to its exit status (or prompt).
    pub command: Duration,
}

impl Default for SshOptions {
    /// 20 s to connect; 300 s per command: `config replace` on SONiC (the
    /// Generic Config Updater orders and applies the change table by table)
    /// and `configuration replace file` on Comware take minutes on a large
    /// configuration, and giving up while the device still applies would
    /// leave the caller guessing. A peer that is gone is found sooner, by
    /// the keepalives (15 s).
    fn default() -> SshOptions {
        SshOptions {
            connect: Duration::from_secs(20),
            command: Duration::from_secs(300),
        }
    }
}

/// What a command printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Its standard output (lossy UTF-8).
    pub stdout: String,
    /// Its standard error (lossy UTF-8).
    pub stderr: String,
    /// Its exit status; `None` when the server sent none (killed by a
    /// signal, or a server that does not report one).
    pub status: Option<u32>,
}

impl Output {
    /// True when the command exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// The device's own message for a failed command: standard error, else
    /// standard output, trimmed; the exit status when both are empty.
    pub fn message(&self) -> String {
        let err = self.stderr.trim();
        let out = self.stdout.trim();
        if !err.is_empty() {
            err.to_string()
        } else if !out.is_empty() {
            out.to_string()
        } else {
            match self.status {
                Some(s) => format!("exit status {s}"),
                None => "no exit status".to_string(),
            }
        }
    }
}

/// An authenticated SSH connection to one device.
pub struct Ssh {
    handle: Handle<Checker>,
    address: String,
    options: SshOptions,
}

impl fmt::Debug for Ssh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ssh")
            .field("address", &self.address)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The client side's handler: checks the host key and remembers why it
/// refused one (russh only learns "refused").
struct Checker {
    host: String,
    port: u16,
    address: String,
    policy: HostKeyCheck,
    refusal: Arc<Mutex<Option<String>>>,
}

impl client::Handler for Checker {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> std::result::Result<bool, Self::Error> {
        let key = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key,
            PublicKeyOrCertificate::Certificate(_) => {
                self.refuse(
                    "the server offered a host certificate; pin its plain host key instead"
                        .to_string(),
                );
                return Ok(false);
            }
        };
        match check_host_key(&self.policy, &self.host, self.port, key) {
            Ok(()) => Ok(true),
            Err(message) => {
                self.refuse(message);
                Ok(false)
            }
        }
    }
}

impl Checker {
    fn refuse(&self, message: String) {
        if let Ok(mut slot) = self.refusal.lock() {
            *slot = Some(format!("{}: {message}", self.address));
        }
    }
}

/// Splits `host:port` (`[v6]:port` too); the port defaults to 22.
pub(crate) fn split_address(address: &str) -> Result<(String, u16)> {
    let bad = |why: &str| PushError::Parameter {
        parameter: "address".to_string(),
        message: format!("`{address}` {why}; write host:port, for example 192.0.2.10:22"),
    };
    if let Some(rest) = address.strip_prefix('[') {
        let (host, tail) = rest
            .split_once(']')
            .ok_or_else(|| bad("has no closing ]"))?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad("has a bad port"))?,
            None if tail.is_empty() => 22,
            None => return Err(bad("has text after ]")),
        };
        return Ok((host.to_string(), port));
    }
    match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => {
            let port = port.parse().map_err(|_| bad("has a bad port"))?;
            if host.is_empty() {
                return Err(bad("has no host"));
            }
            Ok((host.to_string(), port))
        }
        Some(_) => Ok((address.to_string(), 22)),
        None if address.is_empty() => Err(bad("is empty")),
        None => Ok((address.to_string(), 22)),
    }
}

fn boxed(e: impl std::error::Error + Send + Sync + 'static) -> BoxError {
    Box::new(e)
}

fn lost(action: &str, e: impl std::error::Error + Send + Sync + 'static) -> PushError {
    PushError::Transport {
        action: action.to_string(),
        source: boxed(e),
    }
}

/// The cause of a connection that ended before the command did.
#[derive(Debug, thiserror::Error)]
#[error("the connection closed before the command finished")]
struct Closed;

impl Ssh {
    /// Connects to `target.address`, checks the host key against
    /// `target.host_key`, and logs in as `target.user` with its password
    /// (the `password` method, else `keyboard-interactive` answering every
    /// prompt with the password, as Comware and many Linux images ask).
    pub async fn connect(target: &Target, options: SshOptions) -> Result<Ssh> {
        let password = target
            .password
            .as_ref()
            .ok_or_else(|| PushError::Credentials {
                switch: target.switch.clone(),
                message: "an SSH device needs a password (password_env or password_file)"
                    .to_string(),
            })?;
        let (host, port) = split_address(&target.address)?;
        let refusal = Arc::new(Mutex::new(None));
        let checker = Checker {
            host: host.clone(),
            port,
            address: target.address.clone(),
            policy: target.host_key.clone(),
            refusal: refusal.clone(),
        };
        let config = client::Config {
            inactivity_timeout: None,
            keepalive_interval: Some(Duration::from_secs(5)),
            keepalive_max: 3,
            ..Default::default()
        };
        let address = target.address.clone();
        let work = async {
            let mut handle = client::connect(Arc::new(config), (host.as_str(), port), checker)
                .await
                .map_err(|e| connect_error(&address, &refusal, e))?;
            login(&mut handle, &address, &target.user, password).await?;
            Ok::<_, PushError>(handle)
        };
        let handle = match tokio::time::timeout(options.connect, work).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(PushError::Unreachable {
                    address: target.address.clone(),
                    hint: format!(
                        "no SSH login within {} s; check the address and that SSH is enabled",
                        options.connect.as_secs()
                    ),
                    source: boxed(Closed),
                });
            }
        };
        Ok(Ssh {
            handle,
            address: target.address.clone(),
            options,
        })
    }

    /// True once the connection is gone (dropped by the peer, keepalives
    /// unanswered, or closed).
    pub(crate) fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// The address as the devices file gives it.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The deadlines in use.
    pub fn options(&self) -> SshOptions {
        self.options
    }

    /// Runs `command` on an exec channel and waits for its exit status.
    pub async fn exec(&mut self, command: &str) -> Result<Output> {
        self.run(command, None).await
    }

    /// Runs `command` with `stdin` on its standard input (then end of
    /// file): how files are written (`cat > FILE`, `scp -t FILE`).
    pub(crate) async fn exec_stdin(&mut self, command: &str, stdin: &[u8]) -> Result<Output> {
        self.run(command, Some(stdin)).await
    }

    async fn run(&mut self, command: &str, stdin: Option<&[u8]>) -> Result<Output> {
        let action = format!("running `{command}` on {}", self.address);
        let seconds = self.options.command.as_secs();
        let work = async {
            let mut channel = self
                .handle
                .channel_open_session()
                .await
                .map_err(|e| lost(&action, e))?;
            channel
                .exec(true, command)
                .await
                .map_err(|e| lost(&action, e))?;
            if let Some(data) = stdin {
                channel.data(data).await.map_err(|e| lost(&action, e))?;
                channel.eof().await.map_err(|e| lost(&action, e))?;
            }
            let mut out = Vec::new();
            let mut err = Vec::new();
            let mut status = None;
            let mut closed = false;
            while let Some(msg) = channel.wait().await {
                match msg {
                    ChannelMsg::Data { data } => out.extend_from_slice(&data),
                    ChannelMsg::ExtendedData { data, .. } => err.extend_from_slice(&data),
                    ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                    ChannelMsg::Close => {
                        closed = true;
                        break;
                    }
                    _ => {}
                }
            }
            if status.is_none() && (!closed || self.handle.is_closed()) {
                return Err(lost(&action, Closed));
            }
            Ok(Output {
                stdout: String::from_utf8_lossy(&out).into_owned(),
                stderr: String::from_utf8_lossy(&err).into_owned(),
                status,
            })
        };
        match tokio::time::timeout(self.options.command, work).await {
            Ok(r) => r,
            Err(_) => Err(PushError::Timeout { action, seconds }),
        }
    }

    /// Writes `data` to `path` on the device with the SCP sink protocol
    /// (`scp -t PATH`): one `C0644 <length> <name>` header, the bytes and a
    /// zero byte, sent in one go (a sink reads its input in order); each
    /// step is acknowledged by a zero byte, an error by 1 or 2 and a
    /// message, which this returns as [`PushError::Protocol`].
    pub(crate) async fn scp_upload(&mut self, path: &str, data: &[u8]) -> Result<()> {
        let name = path.rsplit(['/', ':']).next().unwrap_or(path);
        let mut stream = format!("C0644 {} {name}\n", data.len()).into_bytes();
        stream.extend_from_slice(data);
        stream.push(0);
        let command = format!("scp -t {path}");
        let out = self.exec_stdin(&command, &stream).await?;
        let acks = out.stdout.as_bytes();
        // One acknowledgement when the sink starts, one per header, one per
        // file body.
        if acks.len() >= 3 && acks[..3].iter().all(|&b| b == 0) {
            return Ok(());
        }
        let message = match acks.iter().position(|&b| b != 0) {
            Some(i) => String::from_utf8_lossy(&acks[i + 1..]).trim().to_string(),
            None => out.message(),
        };
        Err(PushError::Protocol {
            action: format!("writing {path} over SCP (the device needs `scp server enable`)"),
            message,
        })
    }

    /// Opens an interactive shell with a pty (the CLI of a switch OS).
    pub async fn shell(&mut self) -> Result<Shell> {
        let action = format!("opening a shell on {}", self.address);
        let channel = self
            .handle
            .channel_open_session()
            .await
            .map_err(|e| lost(&action, e))?;
        // Wide and without a page length: no wrapped lines, no pager.
        channel
            .request_pty(true, "vt100", 511, 0, 0, 0, &[])
            .await
            .map_err(|e| lost(&action, e))?;
        channel
            .request_shell(true)
            .await
            .map_err(|e| lost(&action, e))?;
        Ok(Shell {
            channel,
            buffer: Vec::new(),
            address: self.address.clone(),
            timeout: self.options.command,
        })
    }

    /// Says goodbye; errors are ignored (the session is over either way).
    pub async fn close(&self) {
        let _ = self
            .handle
            .disconnect(Disconnect::ByApplication, "done", "en")
            .await;
    }
}

fn connect_error(address: &str, refusal: &Mutex<Option<String>>, e: russh::Error) -> PushError {
    if let Some(message) = refusal.lock().ok().and_then(|mut s| s.take()) {
        let message = message
            .strip_prefix(&format!("{address}: "))
            .unwrap_or(&message)
            .to_string();
        return PushError::HostKey {
            address: address.to_string(),
            message,
        };
    }
    let hint = match &e {
        russh::Error::IO(_) => "check the address, the route and that SSH listens there",
        _ => "the SSH handshake failed; check that the address is the switch's SSH port",
    };
    PushError::Unreachable {
        address: address.to_string(),
        hint: hint.to_string(),
        source: boxed(e),
    }
}

async fn login(
    handle: &mut Handle<Checker>,
    address: &str,
    user: &str,
    password: &Secret,
) -> Result<()> {
    let action = format!("logging in to {address}");
    let refused = || PushError::Auth {
        address: address.to_string(),
        user: user.to_string(),
    };
    let first = handle
        .authenticate_password(user, password.expose())
        .await
        .map_err(|e| lost(&action, e))?;
    if first.success() {
        return Ok(());
    }
    let mut reply = handle
        .authenticate_keyboard_interactive_start(user, None)
        .await
        .map_err(|e| lost(&action, e))?;
    // A server asks a bounded number of rounds; more is a loop.
    for _ in 0..4 {
        match reply {
            KeyboardInteractiveAuthResponse::Success => return Ok(()),
            KeyboardInteractiveAuthResponse::Failure { .. } => return Err(refused()),
            KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                let answers = prompts
                    .iter()
                    .map(|_| password.expose().to_string())
                    .collect();
                reply = handle
                    .authenticate_keyboard_interactive_respond(answers)
                    .await
                    .map_err(|e| lost(&action, e))?;
            }
        }
    }
    Err(refused())
}

/// An interactive CLI session: send a line, read up to the next prompt.
pub struct Shell {
    channel: russh::Channel<client::Msg>,
    buffer: Vec<u8>,
    address: String,
    timeout: Duration,
}

impl fmt::Debug for Shell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shell")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Shell {
    /// Sends `line` and a carriage return.
    pub async fn send(&mut self, line: &str) -> Result<()> {
        let action = format!("sending `{line}` to {}", self.address);
        let mut data = line.as_bytes().to_vec();
        data.push(b'\r');
        self.channel
            .data(&data[..])
            .await
            .map_err(|e| lost(&action, e))
    }

    /// Reads until `done` finds its end in the text read so far (with
    /// carriage returns removed); returns the text up to that end and keeps
    /// the rest for the next read. `action` names the wait in errors.
    pub(crate) async fn read_until(
        &mut self,
        action: &str,
        done: impl Fn(&str) -> Option<usize>,
    ) -> Result<String> {
        let action = format!("{action} on {}", self.address);
        let seconds = self.timeout.as_secs();
        let work = async {
            loop {
                let text = String::from_utf8_lossy(&self.buffer).replace('\r', "");
                if let Some(end) = done(&text) {
                    let rest = text.as_bytes()[end..].to_vec();
                    let taken = text[..end].to_string();
                    self.buffer = rest;
                    return Ok(taken);
                }
                match self.channel.wait().await {
                    Some(ChannelMsg::Data { data }) => self.buffer.extend_from_slice(&data),
                    Some(ChannelMsg::ExtendedData { data, .. }) => {
                        self.buffer.extend_from_slice(&data)
                    }
                    Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                        return Err(lost(&action, Closed));
                    }
                    Some(_) => {}
                }
            }
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(PushError::Timeout { action, seconds }),
        }
    }
}

/// Checks a server's host key against the policy; the error says what was
/// expected, what was found and what to do.
pub(crate) fn check_host_key(
    policy: &HostKeyCheck,
    host: &str,
    port: u16,
    key: &PublicKey,
) -> std::result::Result<(), String> {
    let found = fingerprint(key);
    match policy {
        HostKeyCheck::Off => Ok(()),
        HostKeyCheck::Sha256(pinned) => {
            if same_fingerprint(pinned, &found) {
                Ok(())
            } else {
                Err(format!(
                    "host key mismatch: the server's key is {found}, the devices file pins {pinned}; \
                     if the switch's key changed on purpose, check it on the console \
                     (`ssh-keygen -l`) and update host_key_sha256"
                ))
            }
        }
        HostKeyCheck::KnownHosts(path) => known_hosts_check(path, host, port, key, &found),
    }
}

/// `SHA256:<base64 without padding>`, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

fn same_fingerprint(pinned: &str, found: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim();
        let s = s.strip_prefix("SHA256:").unwrap_or(s);
        s.trim_end_matches('=').to_string()
    };
    pinned.trim().starts_with("SHA256:") && norm(pinned) == norm(found)
}

fn known_hosts_check(
    path: &Path,
    host: &str,
    port: u16,
    key: &PublicKey,
    found: &str,
) -> std::result::Result<(), String> {
    let file = path.display();
    let text = planner::input::read(path)
        .map_err(|e| format!("cannot read the known-hosts file {file}: {e}"))?;
    let name = if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    };
    let mut other_keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let mut first = fields.next().unwrap_or_default();
        let marker = if first.starts_with('@') {
            let m = first;
            first = fields.next().unwrap_or_default();
            Some(m)
        } else {
            None
        };
        if marker == Some("@cert-authority") || !hosts_match(first, &name) {
            continue;
        }
        let (Some(_kind), Some(data)) = (fields.next(), fields.next()) else {
            return Err(format!(
                "{file}:{line_no}: a known-hosts line needs hosts, key type and key"
            ));
        };
        let recorded = russh::keys::parse_public_key_base64(data)
            .map_err(|e| format!("{file}:{line_no}: cannot read the key: {e}"))?;
        let same = recorded.key_data() == key.key_data();
        if marker == Some("@revoked") {
            if same {
                return Err(format!(
                    "the server's key {found} is marked @revoked in {file}:{line_no}"
                ));
            }
            continue;
        }
        if same {
            return Ok(());
        }
        other_keys.push(line_no);
    }
    if other_keys.is_empty() {
        Err(format!(
            "{name} is not in the known-hosts file {file} (the server's key is {found}); \
             check the fingerprint on the switch's console, then add it \
             (`ssh-keyscan -p {port} {host} >> {file}`) or pin it with host_key_sha256"
        ))
    } else {
        let lines: Vec<String> = other_keys.iter().map(|l| l.to_string()).collect();
        Err(format!(
            "host key mismatch: {file} line {} records another key for {name}, the server sent {found}; \
             someone may be intercepting the connection, or the switch was reinstalled: \
             check on its console before you update the file",
            lines.join(", ")
        ))
    }
}

/// True when the comma-separated OpenSSH host patterns accept `name`
/// (`host` or `[host]:port`): a negated match (`!pattern`) wins.
fn hosts_match(patterns: &str, name: &str) -> bool {
    let mut matched = false;
    for pattern in patterns.split(',') {
        if let Some(hashed) = pattern.strip_prefix("|1|") {
            if hashed_match(hashed, name) {
                matched = true;
            }
        } else if let Some(negated) = pattern.strip_prefix('!') {
            if glob(negated, name) {
                return false;
            }
        } else if glob(pattern, name) {
            matched = true;
        }
    }
    matched
}

/// `|1|salt|hash`: HMAC-SHA1 of the name keyed by the salt (base64 both).
fn hashed_match(hashed: &str, name: &str) -> bool {
    let Some((salt, hash)) = hashed.split_once('|') else {
        return false;
    };
    let (Some(salt), Some(hash)) = (base64_decode(salt), base64_decode(hash)) else {
        return false;
    };
    let Ok(mac) = Hmac::<Sha1>::new_from_slice(&salt) else {
        return false;
    };
    mac.chain_update(name.as_bytes())
        .verify_slice(&hash)
        .is_ok()
}

/// Standard base64 (what OpenSSH writes in hashed entries), its padding
/// optional as the hand-written reader before it allowed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT.decode(text).ok()
}

/// OpenSSH host pattern: `*` any run, `?` one character.
fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// A client over SSH that loads its candidate under a lock of its own
/// (SONiC's lock file, Comware's configuration lock): [`load_under_lock`]
/// and [`Locking::unlock`] are its `Device::load` and `Device::discard`.
pub(crate) trait Locking {
    /// Takes the lock (held by someone else: `PushError::Locked`).
    fn lock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send;
    /// Releases it.
    fn unlock(&mut self) -> impl std::future::Future<Output = Result<()>> + Send;
    /// Loads `candidate` with the lock held; returns the diff.
    fn load_locked(
        &mut self,
        candidate: &str,
    ) -> impl std::future::Future<Output = Result<String>> + Send;
}

/// Takes the lock and loads `candidate`. A load that fails releases the
/// lock again, unless the connection is gone (nothing more can be sent;
/// the device's own lock timeout or the next run's check clears it); the
/// load's error is the one returned.
pub(crate) async fn load_under_lock<T: Locking + Send>(
    dev: &mut T,
    candidate: &str,
) -> Result<String> {
    dev.lock().await?;
    match dev.load_locked(candidate).await {
        Ok(diff) => Ok(diff),
        Err(e) => {
            if !matches!(e, PushError::Transport { .. } | PushError::Timeout { .. }) {
                let _ = dev.unlock().await;
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split() {
        assert_eq!(
            split_address("192.0.2.1:2222").unwrap(),
            ("192.0.2.1".into(), 2222)
        );
        assert_eq!(split_address("sw01").unwrap(), ("sw01".into(), 22));
        assert_eq!(
            split_address("[2001:db8::1]:22").unwrap(),
            ("2001:db8::1".into(), 22)
        );
        assert_eq!(
            split_address("2001:db8::1").unwrap(),
            ("2001:db8::1".into(), 22)
        );
        assert!(split_address("sw01:x").is_err());
        assert!(split_address(":22").is_err());
        assert!(split_address("").is_err());
    }

    #[test]
    fn patterns() {
        assert!(hosts_match("sw01,sw02", "sw02"));
        assert!(hosts_match("sw*", "sw02"));
        assert!(hosts_match("[10.0.0.?]:2222", "[10.0.0.7]:2222"));
        assert!(!hosts_match("sw*,!sw02", "sw02"));
        assert!(!hosts_match("sw01", "sw011"));
        assert!(!hosts_match("10.0.0.7", "[10.0.0.7]:2222"));
    }

    #[test]
    fn hashed_entry_matches_its_host_only() {
        // Made with `ssh-keygen -H` semantics: HMAC-SHA1(salt, "sw01").
        let salt = [7u8; 20];
        let mac = Hmac::<Sha1>::new_from_slice(&salt)
            .unwrap()
            .chain_update(b"sw01")
            .finalize()
            .into_bytes();
        let entry = format!("{}|{}", b64(&salt), b64(&mac));
        assert!(hashed_match(&entry, "sw01"));
        assert!(!hashed_match(&entry, "sw02"));
        assert!(!hashed_match("garbage", "sw01"));
    }

    fn b64(bytes: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..10 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(base64_decode(&b64(&data)).unwrap(), data);
        }
        assert!(base64_decode("a$b").is_none());
        // OpenSSH pads; a hand-edited entry without padding still reads.
        assert_eq!(base64_decode("YWI").unwrap(), b"ab");
        assert_eq!(base64_decode("YWI=").unwrap(), b"ab");
    }

    #[test]
    fn fingerprints_compare_without_padding() {
        assert!(same_fingerprint("SHA256:abc=", "SHA256:abc"));
        assert!(!same_fingerprint("abc", "SHA256:abc"));
        assert!(!same_fingerprint("SHA256:abd", "SHA256:abc"));
    }
}
