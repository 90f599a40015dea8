//! The probe's wire: length-prefixed JSON frames read within a size limit and a deadline for the whole frame (a peer that trickles bytes gains no time), and the handshake that opens every connection, authenticated with the job secret ([`super::auth`]).
//!
//! A connection opens with [`MAGIC`] and a [`Hello`] frame from the
//! connecting side. With a job secret the accepting side answers with a
//! [`Control::Challenge`] (its nonce and proof), and the connecting side,
//! once it has checked that proof, with a [`Control::Proof`]. Only then
//! does the accepting side look at what the hello claims.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::auth::{self, NONCE_BYTES, Secret};
use super::transport::Fingerprint;

/// First bytes of every connection.
pub const MAGIC: &[u8; 12] = b"EFLOPS-PROBE";

/// Version of the wire protocol; peers of other versions are refused.
/// Version 2 added the job secret's challenge.
pub const PROTOCOL_VERSION: u32 = 2;

/// Bytes a hello may have beyond twice this rank's own (a peer whose
/// settings are that much longer differs anyway).
const HELLO_SLACK: usize = 64 * 1024;

/// Bytes a control message may have beyond 64 per rank (the largest are
/// the address table and the burn-in's rates, one entry per rank).
const CONTROL_SLACK: usize = 64 * 1024;

/// The largest control message accepted in a run of `world` ranks.
pub fn control_limit(world: usize) -> usize {
    CONTROL_SLACK.saturating_add(world.saturating_mul(64))
}

/// The handshake every connection opens with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`].
    pub version: u32,
    /// `little` or `big`.
    pub endian: String,
    /// True for the control connection to rank 0.
    pub control: bool,
    /// The sender's rank.
    pub rank: usize,
    /// Where the sender listens for data connections.
    pub listen: String,
    /// For a data connection: 0 when the connecting rank sends on it, 1
    /// when it receives (every pair has one connection per direction, so
    /// a send never waits on a receive for the socket's lock).
    #[serde(default)]
    pub lane: u8,
    /// The run's settings as the sender sees them.
    pub fingerprint: Fingerprint,
    /// True when the sender holds a job secret and will prove it.
    #[serde(default)]
    pub auth: bool,
    /// The sender's challenge (hex), with a secret.
    #[serde(default)]
    pub nonce: String,
}

/// Control messages between rank 0 and the others.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Control {
    /// The handshake.
    Hello(Hello),
    /// The accepting side's nonce and proof of the secret (hex).
    Challenge {
        /// Its challenge.
        nonce: String,
        /// HMAC of the labels, both nonces and the hello.
        proof: String,
    },
    /// The connecting side's proof of the secret (hex).
    Proof(String),
    /// Rank 0 refuses the peer.
    Refused(String),
    /// Rank 0's answer: every rank's data address.
    Table(Vec<String>),
    /// A data connection is accepted.
    Welcome,
    /// A rank finished the step (the step barrier).
    StepDone(usize),
    /// Rank 0 releases the ranks from the step barrier.
    Go,
    /// Rank 0 stops the run, and says why.
    Stop(String),
    /// A rank's figures for one size, to rank 0 (f64 bits, so that every
    /// rank ends with the very same values).
    Local(Vec<u64>),
    /// Rank 0's answer: the figures over all ranks (f64 bits).
    Global(Vec<u64>),
}

impl Control {
    /// The message's name, for errors (never its content, which a hostile
    /// peer chooses).
    pub fn kind(&self) -> &'static str {
        match self {
            Control::Hello(_) => "a hello",
            Control::Challenge { .. } => "a challenge",
            Control::Proof(_) => "a proof",
            Control::Refused(_) => "a refusal",
            Control::Table(_) => "an address table",
            Control::Welcome => "a welcome",
            Control::StepDone(_) => "a step-done",
            Control::Go => "a go",
            Control::Stop(_) => "a stop",
            Control::Local(_) => "its figures",
            Control::Global(_) => "the figures over all ranks",
        }
    }
}

/// A whole message did not arrive by its deadline.
#[derive(Debug)]
pub struct Late(pub Duration);

impl fmt::Display for Late {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The window as the user gave it (`--timeout 5`), not to the
        // microsecond the reading started late.
        let s = self.0.as_secs_f64();
        if (s - s.round()).abs() < 0.05 {
            write!(f, "sent no whole message within {:.0} s", s.round())
        } else {
            write!(f, "sent no whole message within {s:.1} s")
        }
    }
}

impl std::error::Error for Late {}

/// `little` or `big`: this machine's byte order.
pub fn endian() -> &'static str {
    if cfg!(target_endian = "little") {
        "little"
    } else {
        "big"
    }
}

/// Writes one frame.
pub fn write_frame(mut w: &TcpStream, msg: &Control) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    write_body(w, &body).and_then(|()| w.flush())
}

fn write_body(mut w: &TcpStream, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::other(format!("a message of {} bytes", body.len())))?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(body);
    w.write_all(&frame)
}

/// Reads exactly `buf.len()` bytes by `deadline` (none: as long as it
/// takes), whatever the pace of the peer; the stream's read timeout is
/// left as it was.
pub fn read_by(r: &TcpStream, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<()> {
    read_part(r, buf, deadline, false)
}

/// [`read_by`] for a part of a message: `begun` when an earlier part came,
/// so that a deadline is a trickle ([`Late`]) even if this part has not
/// begun; a message that has not begun by its deadline is a silent peer
/// (a plain time-out).
fn read_part(
    r: &TcpStream,
    buf: &mut [u8],
    deadline: Option<Instant>,
    begun: bool,
) -> io::Result<()> {
    let before = r.read_timeout()?;
    let started = Instant::now();
    let got = read_loop(r, buf, deadline, started, begun);
    r.set_read_timeout(before)?;
    got
}

fn read_loop(
    mut r: &TcpStream,
    buf: &mut [u8],
    deadline: Option<Instant>,
    started: Instant,
    begun: bool,
) -> io::Result<()> {
    let mut got = 0;
    let late = |d: Instant, got: usize| {
        if got == 0 && !begun {
            io::Error::from(io::ErrorKind::TimedOut)
        } else {
            io::Error::new(io::ErrorKind::TimedOut, Late(d - started))
        }
    };
    while got < buf.len() {
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(late(d, got));
            }
            r.set_read_timeout(Some(left))?;
        } else {
            r.set_read_timeout(None)?;
        }
        match r.read(&mut buf[got..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return match deadline {
                    Some(d)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) =>
                    {
                        Err(late(d, got))
                    }
                    _ => Err(e),
                };
            }
        }
    }
    Ok(())
}

/// Reads one frame's body of at most `limit` bytes by `deadline`.
pub fn read_body(r: &TcpStream, limit: usize, deadline: Option<Instant>) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    read_by(r, &mut len, deadline)?;
    read_rest(r, len, limit, deadline)
}

/// The body of a frame whose length prefix is `len`.
fn read_rest(
    r: &TcpStream,
    len: [u8; 4],
    limit: usize,
    deadline: Option<Instant>,
) -> io::Result<Vec<u8>> {
    let len = u32::from_le_bytes(len) as usize;
    if len > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("sent a message of {len} bytes; at most {limit} are accepted"),
        ));
    }
    let mut body = vec![0u8; len];
    read_part(r, &mut body, deadline, true)?;
    Ok(body)
}

/// Reads one frame of at most `limit` bytes by `deadline`.
pub fn read_frame(r: &TcpStream, limit: usize, deadline: Option<Instant>) -> io::Result<Control> {
    let body = read_body(r, limit, deadline)?;
    parse(&body)
}

fn parse(body: &[u8]) -> io::Result<Control> {
    serde_json::from_slice(body).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("sent a message that is not the probe protocol ({e})"),
        )
    })
}

/// What a socket error means, in words.
pub fn what(e: &io::Error, idle: Duration) -> String {
    if let Some(late) = e.get_ref().and_then(|i| i.downcast_ref::<Late>()) {
        return late.to_string();
    }
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "closed the connection".to_string(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("moved no data for {} s", idle.as_secs_f64())
        }
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => "dropped the connection".to_string(),
        io::ErrorKind::InvalidData => e.get_ref().map_or(
            "sent something that is not the probe protocol".to_string(),
            |i| i.to_string(),
        ),
        _ => "failed".to_string(),
    }
}

/// The connecting side of the handshake: sends the magic and `hello`
/// (with a fresh nonce when there is a secret) and, with a secret, checks
/// the accepting side's proof and sends its own. `Ok(Err(reason))` when the
/// accepting side refused at once or could not prove the secret.
pub fn open(
    s: &TcpStream,
    mut hello: Hello,
    secret: Option<&Secret>,
    limit: usize,
    deadline: Instant,
) -> io::Result<Result<(), Opened>> {
    let nonce = match secret {
        Some(_) => auth::random::<NONCE_BYTES>()?.to_vec(),
        None => Vec::new(),
    };
    hello.auth = secret.is_some();
    hello.nonce = auth::hex(&nonce);
    let body = serde_json::to_vec(&Control::Hello(hello)).map_err(io::Error::other)?;
    (&*s).write_all(MAGIC)?;
    write_body(s, &body)?;
    let Some(secret) = secret else {
        return Ok(Ok(()));
    };
    match read_frame(s, limit, Some(deadline))? {
        Control::Challenge {
            nonce: theirs,
            proof,
        } => {
            let theirs = auth::unhex(&theirs).filter(|n| n.len() == NONCE_BYTES);
            let proof = auth::unhex(&proof);
            match (theirs, proof) {
                (Some(t), Some(p)) if secret.check_accept(&nonce, &t, &body, &p) => {
                    let mine = secret.connect_proof(&nonce, &t, &body);
                    write_frame(s, &Control::Proof(auth::hex(&mine)))?;
                    Ok(Ok(()))
                }
                _ => {
                    let _ = write_frame(
                        s,
                        &Control::Refused("could not prove it holds the job secret".to_string()),
                    );
                    Ok(Err(Opened::NotProven))
                }
            }
        }
        Control::Refused(reason) => Ok(Err(Opened::Refused(reason))),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("answered the hello with {}", other.kind()),
        )),
    }
}

/// Why the connecting side's handshake did not go through.
#[derive(Debug)]
pub enum Opened {
    /// The accepting side refused, and said why.
    Refused(String),
    /// The accepting side could not prove it holds the job secret.
    NotProven,
}

/// The accepting side of the handshake: reads the magic and the hello
/// (at most `hello_limit` bytes, all by `deadline`), and with a secret
/// proves it and checks the peer's proof. `Ok(Err(reason))` for a peer
/// that is not one of this run's ranks (it has been told why); an I/O
/// error for one that closed, stalled or spoke another protocol.
pub fn accept(
    s: &TcpStream,
    secret: Option<&Secret>,
    hello_limit: usize,
    deadline: Instant,
) -> io::Result<Result<Hello, String>> {
    let mut magic = [0u8; MAGIC.len()];
    read_by(s, &mut magic, Some(deadline))?;
    if &magic != MAGIC {
        return Ok(Err("did not open with the probe's handshake".to_string()));
    }
    let mut len = [0u8; 4];
    read_part(s, &mut len, Some(deadline), true)?;
    let body = read_rest(s, len, hello_limit, Some(deadline))?;
    let hello = match parse(&body)? {
        Control::Hello(h) => h,
        other => {
            return Ok(Err(format!(
                "opened with {} instead of a hello",
                other.kind()
            )));
        }
    };
    let refuse = |reason: String| -> io::Result<Result<Hello, String>> {
        let _ = write_frame(s, &Control::Refused(reason.clone()));
        Ok(Err(reason))
    };
    if hello.version != PROTOCOL_VERSION || hello.endian != endian() {
        return refuse(format!(
            "speaks probe protocol {} ({} endian) but this rank speaks {PROTOCOL_VERSION} ({})",
            hello.version,
            hello.endian.chars().take(16).collect::<String>(),
            endian()
        ));
    }
    let Some(secret) = secret else {
        if hello.auth {
            return refuse(
                "has a job secret but this rank runs without one; give every rank the same secret"
                    .to_string(),
            );
        }
        return Ok(Ok(hello));
    };
    if !hello.auth {
        return refuse(
            "gave no job secret but this rank runs with one; give every rank the same secret (--token-file or PROBE_TOKEN)"
                .to_string(),
        );
    }
    let Some(theirs) = auth::unhex(&hello.nonce).filter(|n| n.len() == NONCE_BYTES) else {
        return refuse(format!(
            "sent a challenge of {} hex digits; the protocol's has {}",
            hello.nonce.len(),
            2 * NONCE_BYTES
        ));
    };
    let nonce = auth::random::<NONCE_BYTES>()?;
    let proof = secret.accept_proof(&theirs, &nonce, &body);
    write_frame(
        s,
        &Control::Challenge {
            nonce: auth::hex(&nonce),
            proof: auth::hex(&proof),
        },
    )?;
    let answer = read_frame(s, hello_limit, Some(deadline))?;
    let proven = match &answer {
        Control::Proof(p) => {
            auth::unhex(p).is_some_and(|p| secret.check_connect(&theirs, &nonce, &body, &p))
        }
        // The peer did not take this rank's proof.
        Control::Refused(_) => {
            return Ok(Err(
                "refused this rank's proof of the job secret".to_string()
            ));
        }
        other => return refuse(format!("answered the challenge with {}", other.kind())),
    };
    if !proven {
        return refuse("failed authentication: it does not hold this run's job secret".to_string());
    }
    Ok(Ok(hello))
}

/// The largest hello accepted by a rank whose own hello is `own`.
pub fn hello_limit(own: &Hello) -> usize {
    let len = serde_json::to_vec(own).map_or(0, |b| b.len());
    HELLO_SLACK.saturating_add(len.saturating_mul(2))
}
