//! An SSH server on loopback for the switch clients' tests (russh's server
//! side): password login, a generated ed25519 host key the test pins, exec
//! channels (with standard input for commands that read it) and an
//! interactive shell with echo. What the commands do is a [`Script`]: a
//! state machine written from a vendor's documentation. Every command and
//! shell line is logged in order, so tests assert the exact sequence.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::keys::ssh_key::private::{Ed25519Keypair, KeypairData};
use russh::keys::{HashAlg, PrivateKey};
use russh::server::{Auth, Msg, Session};
use russh::{Channel, ChannelId};
use tokio::net::TcpListener;

/// What a command or a shell line answers.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub stdout: String,
    pub stderr: String,
    pub status: u32,
    /// Drop the connection instead of answering (after the state changed).
    pub drop: bool,
}

impl Reply {
    pub fn ok(stdout: impl Into<String>) -> Reply {
        Reply {
            stdout: stdout.into(),
            ..Reply::default()
        }
    }
    pub fn fail(status: u32, stderr: impl Into<String>) -> Reply {
        Reply {
            stderr: stderr.into(),
            status,
            ..Reply::default()
        }
    }
    pub fn dropped() -> Reply {
        Reply {
            drop: true,
            ..Reply::default()
        }
    }
}

/// A device's behaviour.
pub trait Script: Send + 'static {
    /// True when `command` reads its standard input to the end before it
    /// runs (`cat > FILE`, `scp -t FILE`).
    fn reads_stdin(&self, command: &str) -> bool;
    /// Runs a command of an exec channel.
    fn exec(&mut self, command: &str, stdin: &[u8]) -> Reply;
    /// The text a new shell shows (banner and first prompt).
    fn shell_open(&mut self) -> String;
    /// One line typed in the shell: its output and the next prompt.
    fn shell_line(&mut self, line: &str) -> Reply;
}

/// A running server.
pub struct TestServer<S: Script> {
    pub address: String,
    pub state: Arc<Mutex<S>>,
    log: Arc<Mutex<Vec<String>>>,
    key: PrivateKey,
    task: tokio::task::JoinHandle<()>,
}

impl<S: Script> Drop for TestServer<S> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<S: Script> TestServer<S> {
    /// Listens on a free loopback port; logins need `user`/`password`.
    /// The host key is made from `seed` (different seeds, different keys).
    pub async fn start(script: S, user: &str, password: &str, seed: u8) -> TestServer<S> {
        let key = PrivateKey::new(
            KeypairData::Ed25519(Ed25519Keypair::from_seed(&[seed; 32])),
            "test host key",
        )
        .unwrap();
        let config = Arc::new(russh::server::Config {
            keys: vec![key.clone()],
            auth_rejection_time: Duration::from_millis(10),
            auth_rejection_time_initial: Some(Duration::from_millis(0)),
            inactivity_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address: SocketAddr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(script));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (s, l) = (state.clone(), log.clone());
        let (user, password) = (user.to_string(), password.to_string());
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let conn = Conn {
                    state: s.clone(),
                    log: l.clone(),
                    user: user.clone(),
                    password: password.clone(),
                    pending: HashMap::new(),
                    shells: HashMap::new(),
                };
                let config = config.clone();
                tokio::spawn(async move {
                    if let Ok(session) = russh::server::run_stream(config, socket, conn).await {
                        let _ = session.await;
                    }
                });
            }
        });
        TestServer {
            address: address.to_string(),
            state,
            log,
            key,
            task,
        }
    }

    /// Every command and shell line so far, in order.
    pub fn commands(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Forgets the log.
    pub fn clear(&self) {
        self.log.lock().unwrap().clear();
    }

    /// The host key's fingerprint, `SHA256:...`.
    pub fn fingerprint(&self) -> String {
        self.key
            .public_key()
            .fingerprint(HashAlg::Sha256)
            .to_string()
    }

    /// A known-hosts line for this server (`[127.0.0.1]:port ssh-ed25519 ...`).
    pub fn known_hosts_line(&self) -> String {
        let (host, port) = self.address.rsplit_once(':').unwrap();
        let key = self.key.public_key().to_openssh().unwrap();
        format!("[{host}]:{port} {key}")
    }
}

struct Conn<S: Script> {
    state: Arc<Mutex<S>>,
    log: Arc<Mutex<Vec<String>>>,
    user: String,
    password: String,
    /// Exec channels waiting for the end of their standard input.
    pending: HashMap<ChannelId, (String, Vec<u8>)>,
    /// Shell channels and their partial line.
    shells: HashMap<ChannelId, Vec<u8>>,
}

impl<S: Script> Conn<S> {
    fn run(&mut self, command: &str, stdin: &[u8]) -> Reply {
        self.state.lock().unwrap().exec(command, stdin)
    }
}

fn answer(session: &mut Session, channel: ChannelId, reply: &Reply) -> Result<(), russh::Error> {
    if reply.drop {
        return Err(russh::Error::Disconnect);
    }
    if !reply.stdout.is_empty() {
        session.data(channel, reply.stdout.clone().into_bytes())?;
    }
    if !reply.stderr.is_empty() {
        session.extended_data(channel, 1, reply.stderr.clone().into_bytes())?;
    }
    session.exit_status_request(channel, reply.status)?;
    session.eof(channel)?;
    session.close(channel)
}

fn crlf(text: &str) -> Vec<u8> {
    text.replace('\n', "\r\n").into_bytes()
}

impl<S: Script> russh::server::Handler for Conn<S> {
    type Error = russh::Error;

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        if user == self.user && password == self.password {
            Ok(Auth::Accept)
        } else {
            Ok(Auth::reject())
        }
    }

    async fn channel_open_session(
        &mut self,
        _channel: Channel<Msg>,
        reply: russh::server::ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        reply.accept().await;
        Ok(())
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        _term: &str,
        _col_width: u32,
        _row_height: u32,
        _pix_width: u32,
        _pix_height: u32,
        _modes: &[(russh::Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)?;
        self.shells.insert(channel, Vec::new());
        let greeting = self.state.lock().unwrap().shell_open();
        session.data(channel, crlf(&greeting))
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)?;
        let command = String::from_utf8_lossy(data).into_owned();
        self.log.lock().unwrap().push(command.clone());
        if self.state.lock().unwrap().reads_stdin(&command) {
            self.pending.insert(channel, (command, Vec::new()));
            return Ok(());
        }
        let reply = self.run(&command, &[]);
        answer(session, channel, &reply)
    }

    async fn data(
        &mut self,
        channel: ChannelId,
        data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if let Some((_, stdin)) = self.pending.get_mut(&channel) {
            stdin.extend_from_slice(data);
            return Ok(());
        }
        let Some(partial) = self.shells.get_mut(&channel) else {
            return Ok(());
        };
        partial.extend_from_slice(data);
        let mut lines = Vec::new();
        while let Some(end) = partial.iter().position(|&b| b == b'\r' || b == b'\n') {
            let line: Vec<u8> = partial.drain(..=end).collect();
            lines.push(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
        }
        for line in lines {
            self.log.lock().unwrap().push(line.clone());
            let reply = self.state.lock().unwrap().shell_line(&line);
            if reply.drop {
                return Err(russh::Error::Disconnect);
            }
            // Echo, as a terminal does, then the answer and the prompt.
            let mut out = crlf(&format!("{line}\n"));
            out.extend(crlf(&reply.stdout));
            session.data(channel, out)?;
        }
        Ok(())
    }

    async fn channel_eof(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if let Some((command, stdin)) = self.pending.remove(&channel) {
            let reply = self.run(&command, &stdin);
            return answer(session, channel, &reply);
        }
        Ok(())
    }
}
