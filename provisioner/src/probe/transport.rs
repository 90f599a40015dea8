//! The TCP mesh between ranks: set up once (listen, connect with bounded retries, a handshake that refuses mismatched peers), then reused by every step, iteration and size; framed control messages to rank 0; timeouts so a dead peer is named, never waited for.
//!
//! Every connection starts with [`MAGIC`] and a [`Hello`]; rank 0 compares
//! each peer's [`Fingerprint`] with its own and refuses any difference,
//! naming the peer and both values. Data connections carry raw f32 in the
//! machines' native byte order (the hello refuses a peer of the other
//! order); control connections (every rank to rank 0) carry length-prefixed
//! JSON [`Control`] messages.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use super::exchange::{Duplex, receive};
use super::schedule::Combine;

/// First bytes of every connection.
pub const MAGIC: &[u8; 12] = b"EFLOPS-PROBE";

/// Version of the wire protocol; peers of other versions are refused.
pub const PROTOCOL_VERSION: u32 = 1;

/// Sends up to this many bytes before receiving, without a sender thread:
/// both peers' bytes fit in the kernel's socket buffers.
const INLINE_BYTES: usize = 32 * 1024;

/// Sends at least this many bytes from a second thread while receiving
/// (both blocking); smaller exchanges run in one thread on non-blocking
/// sockets ([`duplex`]): a thread costs milliseconds to start on a busy
/// machine, while spinning on the sockets costs throughput on large ones
/// (measured on loopback, docs/probe.md).
const THREAD_BYTES: usize = 4 << 20;

/// Largest control message accepted.
const MAX_FRAME: usize = 64 << 20;

/// What every rank of one run must agree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Ranks in the run.
    pub world: usize,
    /// `ring`, `hd`, `hdrm` (or another workload's name).
    pub algorithm: String,
    /// Message sizes in bytes.
    pub sizes: Vec<u64>,
    /// Warm-up iterations per size.
    pub warmup: usize,
    /// Timed iterations per size.
    pub iters: usize,
    /// True when the ranks stop at a barrier after every step.
    pub step_barrier: bool,
}

impl Fingerprint {
    /// What differs from `other`, in words (`runs algorithm ring (rank 2)
    /// but hd (rank 0)`).
    fn differences(&self, mine: &str, other: &Fingerprint, theirs: &str) -> Vec<String> {
        type Field = fn(&Fingerprint) -> String;
        let fields: [(&str, Field); 6] = [
            ("runs with world size", |f| f.world.to_string()),
            ("runs algorithm", |f| f.algorithm.clone()),
            ("runs sizes", |f| sizes_text(&f.sizes)),
            ("runs warm-up", |f| f.warmup.to_string()),
            ("runs iterations", |f| f.iters.to_string()),
            ("has step barrier", |f| f.step_barrier.to_string()),
        ];
        fields
            .iter()
            .filter_map(|(what, get)| {
                let (a, b) = (get(self), get(other));
                (a != b).then(|| format!("{what} {b} ({theirs}) but {a} ({mine})"))
            })
            .collect()
    }
}

fn sizes_text(sizes: &[u64]) -> String {
    let s: Vec<String> = sizes.iter().take(6).map(|b| format!("{b}B")).collect();
    if sizes.len() > 6 {
        format!("{}.. ({} sizes)", s.join(","), sizes.len())
    } else {
        s.join(",")
    }
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
}

/// Control messages between rank 0 and the others.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Control {
    /// The handshake.
    Hello(Hello),
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

/// One connection to a peer.
#[derive(Debug)]
pub struct Link {
    /// The peer's rank.
    pub rank: usize,
    /// The peer's address.
    pub addr: String,
    stream: TcpStream,
}

impl Link {
    /// The connection (the burn-in streams bytes over it).
    pub(crate) fn stream(&self) -> &TcpStream {
        &self.stream
    }
}

/// Timeouts of the mesh.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// Give up connecting to a peer (or waiting for peers to connect)
    /// after this long.
    pub connect: Duration,
    /// A connection that moves no byte for this long is dead.
    pub idle: Duration,
}

/// Where this rank finds the others.
#[derive(Debug, Clone)]
pub enum Peers {
    /// Rank 0 at `master` (`host:port`) collects every rank's address
    /// (torchrun's MASTER_ADDR and MASTER_PORT); the others listen on a
    /// free port of the address they reach rank 0 from.
    Master(String),
    /// Every rank's address, rank 0's first (a rank table or host file).
    Table(Vec<SocketAddr>),
}

/// The connections of one rank: to every peer it exchanges data with, and
/// the control connections (rank 0: to every rank; others: to rank 0).
#[derive(Debug)]
pub struct Mesh {
    /// This rank.
    pub rank: usize,
    /// Ranks in the run.
    pub world: usize,
    /// Every rank's data address, as rank 0 announced them.
    pub addresses: Vec<String>,
    /// (peer, true when this rank sends on it) -> the connection.
    links: BTreeMap<(usize, bool), Link>,
    control: BTreeMap<usize, Link>,
    timeouts: Timeouts,
}

fn endian() -> &'static str {
    if cfg!(target_endian = "little") {
        "little"
    } else {
        "big"
    }
}

fn write_frame(mut w: &TcpStream, msg: &Control) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    w.write_all(&frame)
}

fn read_frame(mut r: &TcpStream) -> io::Result<Control> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a control message of {len} bytes"),
        ));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// What a socket error means, in words.
fn what(e: &io::Error, idle: Duration) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "closed the connection".to_string(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            format!("moved no data for {} s", idle.as_secs_f64())
        }
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => "dropped the connection".to_string(),
        io::ErrorKind::InvalidData => "sent something that is not the probe protocol".to_string(),
        _ => "failed".to_string(),
    }
}

impl Link {
    fn new(rank: usize, addr: String, stream: TcpStream, t: Timeouts) -> io::Result<Link> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(t.idle))?;
        stream.set_write_timeout(Some(t.idle))?;
        Ok(Link { rank, addr, stream })
    }

    /// The error for a failure of this link in `step`.
    pub fn failed(&self, e: io::Error, step: &str, idle: Duration) -> Error {
        Error::Peer {
            rank: self.rank,
            addr: self.addr.clone(),
            what: what(&e, idle),
            step: step.to_string(),
            source: e,
        }
    }
}

/// Connects to `addr` (resolved on every try), retrying until `deadline`.
fn connect(addr: &str, rank: usize, t: Timeouts) -> Result<TcpStream> {
    let deadline = Instant::now() + t.connect;
    let mut wait = Duration::from_millis(10);
    loop {
        let tried = addr.to_socket_addrs().and_then(|mut a| {
            let a = a.next().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "the name has no address")
            })?;
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(10));
            TcpStream::connect_timeout(&a, left)
        });
        match tried {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(Error::Unreachable {
                    rank,
                    addr: addr.to_string(),
                    seconds: t.connect.as_secs(),
                    source: e,
                });
            }
            Err(_) => {
                thread::sleep(wait.min(deadline.saturating_duration_since(Instant::now())));
                wait = (wait * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// Accepts one connection before `deadline`; `None` when none came.
fn accept(
    listener: &TcpListener,
    deadline: Instant,
) -> io::Result<Option<(TcpStream, SocketAddr)>> {
    loop {
        match listener.accept() {
            Ok((s, a)) => {
                s.set_nonblocking(false)?;
                return Ok(Some((s, a)));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                thread::sleep(Duration::from_millis(2));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Reads the magic and the hello of an accepted connection.
fn read_hello(s: &TcpStream) -> io::Result<Hello> {
    let mut magic = [0u8; MAGIC.len()];
    (&*s).read_exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "no probe handshake",
        ));
    }
    match read_frame(s)? {
        Control::Hello(h) => Ok(h),
        _ => Err(io::Error::new(io::ErrorKind::InvalidData, "no hello")),
    }
}

fn send_hello(s: &TcpStream, hello: Hello) -> io::Result<()> {
    (&*s).write_all(MAGIC)?;
    write_frame(s, &Control::Hello(hello))
}

fn listen(addr: SocketAddr) -> Result<TcpListener> {
    let l = TcpListener::bind(addr).map_err(|source| Error::Listen {
        addr: addr.to_string(),
        source,
    })?;
    l.set_nonblocking(true).map_err(|source| Error::Listen {
        addr: addr.to_string(),
        source,
    })?;
    Ok(l)
}

impl Mesh {
    /// Sets up the mesh of rank `rank`: the control connections through
    /// rank 0 (which checks every rank's settings against its own and
    /// sends the address table), then one data connection to every rank in
    /// `data_peers` (the higher rank of a pair connects to the lower).
    pub fn establish(
        rank: usize,
        peers: &Peers,
        fingerprint: &Fingerprint,
        data_peers: &BTreeSet<usize>,
        t: Timeouts,
    ) -> Result<Mesh> {
        let world = fingerprint.world;
        let boot = "the bootstrap";
        let hello = |control: bool, listen: &str, lane: u8| Hello {
            version: PROTOCOL_VERSION,
            endian: endian().to_string(),
            control,
            rank,
            listen: listen.to_string(),
            lane,
            fingerprint: fingerprint.clone(),
        };
        let mut control = BTreeMap::new();
        let (listener, addresses) = if rank == 0 {
            let bind = match peers {
                Peers::Table(a) => a[0],
                Peers::Master(m) => {
                    let port = m
                        .to_socket_addrs()
                        .ok()
                        .and_then(|mut a| a.next())
                        .map(|a| a.port())
                        .ok_or_else(|| {
                            Error::parameter(
                                "master-addr",
                                format!("`{m}` is not an address this rank can resolve"),
                            )
                        })?;
                    SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
                }
            };
            let listener = listen(bind)?;
            let mine = match peers {
                Peers::Table(a) => a[0].to_string(),
                Peers::Master(m) => m.clone(),
            };
            let addresses =
                Self::gather_hellos(&listener, &mine, peers, fingerprint, t, &mut control)?;
            (listener, addresses)
        } else {
            let master = match peers {
                Peers::Table(a) => a[0].to_string(),
                Peers::Master(m) => m.clone(),
            };
            let s = connect(&master, 0, t)?;
            let listener = match peers {
                Peers::Table(a) => listen(a[rank])?,
                Peers::Master(_) => {
                    let ip = s
                        .local_addr()
                        .map_err(|e| {
                            Error::Internal(format!("the local address of a socket: {e}"))
                        })?
                        .ip();
                    listen(SocketAddr::new(ip, 0))?
                }
            };
            let mine = listener
                .local_addr()
                .map_err(|e| Error::Internal(format!("the listening address: {e}")))?
                .to_string();
            let link = Link::new(0, master, s, t)
                .map_err(|e| Error::Internal(format!("socket options: {e}")))?;
            send_hello(&link.stream, hello(true, &mine, 0))
                .map_err(|e| link.failed(e, boot, t.idle))?;
            // Rank 0 answers when every rank has said hello: wait as long
            // as the others may take to connect.
            link.stream.set_read_timeout(Some(t.connect + t.idle)).ok();
            let answer = read_frame(&link.stream).map_err(|e| link.failed(e, boot, t.idle))?;
            link.stream.set_read_timeout(Some(t.idle)).ok();
            let addresses = match answer {
                Control::Table(a) if a.len() == world => a,
                Control::Refused(reason) => {
                    return Err(Error::Refused {
                        rank: 0,
                        addr: link.addr.clone(),
                        reason,
                    });
                }
                other => return Err(Error::Internal(format!("rank 0 answered {other:?}"))),
            };
            control.insert(0, link);
            (listener, addresses)
        };
        let mut mesh = Mesh {
            rank,
            world,
            addresses,
            links: BTreeMap::new(),
            control,
            timeouts: t,
        };
        // The higher rank of every pair opens both connections.
        let lanes = data_peers
            .iter()
            .filter(|&&p| p < rank)
            .flat_map(|&p| [(p, 0u8), (p, 1)]);
        for (p, lane) in lanes {
            let addr = mesh.addresses[p].clone();
            let s = connect(&addr, p, t)?;
            let link = Link::new(p, addr, s, t)
                .map_err(|e| Error::Internal(format!("socket options: {e}")))?;
            send_hello(&link.stream, hello(false, "", lane))
                .map_err(|e| link.failed(e, boot, t.idle))?;
            match read_frame(&link.stream).map_err(|e| link.failed(e, boot, t.idle))? {
                Control::Welcome => {}
                Control::Refused(reason) => {
                    return Err(Error::Refused {
                        rank: p,
                        addr: link.addr,
                        reason,
                    });
                }
                other => return Err(Error::Internal(format!("rank {p} answered {other:?}"))),
            }
            mesh.links.insert((p, lane == 0), link);
        }
        let mut waiting: BTreeSet<(usize, u8)> = data_peers
            .iter()
            .filter(|&&p| p > rank)
            .flat_map(|&p| [(p, 0u8), (p, 1)])
            .collect();
        let deadline = Instant::now() + t.connect;
        while !waiting.is_empty() {
            let accepted = accept(&listener, deadline).map_err(|source| Error::Listen {
                addr: mesh.addresses[rank].clone(),
                source,
            })?;
            let Some((s, from)) = accepted else {
                return Err(Error::Missing {
                    ranks: waiting
                        .iter()
                        .map(|w| w.0)
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                    listen: mesh.addresses[rank].clone(),
                    seconds: t.connect.as_secs(),
                });
            };
            let Ok(link) = Link::new(usize::MAX, from.to_string(), s, t) else {
                continue;
            };
            // A connection that says nothing sensible is dropped; the
            // peers that belong here keep being waited for.
            let Ok(h) = read_hello(&link.stream) else {
                continue;
            };
            let refusal = if h.control || h.version != PROTOCOL_VERSION || h.endian != endian() {
                Some(format!(
                    "protocol {} ({} endian) but this rank runs {PROTOCOL_VERSION} ({})",
                    h.version,
                    h.endian,
                    endian()
                ))
            } else if !waiting.contains(&(h.rank, h.lane)) {
                Some(format!(
                    "rank {} is not expected to connect to rank {rank}",
                    h.rank
                ))
            } else {
                let d = fingerprint.differences(
                    &format!("rank {rank}"),
                    &h.fingerprint,
                    &format!("rank {}", h.rank),
                );
                (!d.is_empty()).then(|| d.join("; "))
            };
            if let Some(reason) = refusal {
                let _ = write_frame(&link.stream, &Control::Refused(reason.clone()));
                return Err(Error::Mismatch {
                    rank: h.rank.to_string(),
                    addr: from.to_string(),
                    message: reason,
                });
            }
            write_frame(&link.stream, &Control::Welcome)
                .map_err(|e| link.failed(e, boot, t.idle))?;
            waiting.remove(&(h.rank, h.lane));
            let addr = mesh.addresses[h.rank].clone();
            mesh.links.insert(
                (h.rank, h.lane == 1),
                Link {
                    rank: h.rank,
                    addr,
                    stream: link.stream,
                },
            );
        }
        Ok(mesh)
    }

    /// Rank 0: accepts every other rank's control connection, checks its
    /// hello, and answers with the address table (or refuses them all,
    /// naming the first rank that differs).
    fn gather_hellos(
        listener: &TcpListener,
        mine: &str,
        peers: &Peers,
        fingerprint: &Fingerprint,
        t: Timeouts,
        control: &mut BTreeMap<usize, Link>,
    ) -> Result<Vec<String>> {
        let world = fingerprint.world;
        let mut addresses = vec![String::new(); world];
        addresses[0] = mine.to_string();
        let deadline = Instant::now() + t.connect;
        let mut problem: Option<Error> = None;
        let mut refused = 0;
        while control.len() + refused + 1 < world {
            let accepted = accept(listener, deadline).map_err(|source| Error::Listen {
                addr: mine.to_string(),
                source,
            })?;
            let Some((s, from)) = accepted else {
                break;
            };
            let Ok(link) = Link::new(usize::MAX, from.to_string(), s, t) else {
                continue;
            };
            let Ok(h) = read_hello(&link.stream) else {
                continue;
            };
            let peer = format!("rank {}", h.rank);
            let mut reasons = Vec::new();
            if h.version != PROTOCOL_VERSION || h.endian != endian() {
                reasons.push(format!(
                    "speaks protocol {} ({} endian) but rank 0 speaks {PROTOCOL_VERSION} ({})",
                    h.version,
                    h.endian,
                    endian()
                ));
            } else if !h.control {
                reasons.push("opened a data connection before the bootstrap ended".to_string());
            } else if h.rank == 0 || h.rank >= world {
                reasons.push(format!(
                    "claims rank {} but the world has ranks 0 to {}",
                    h.rank,
                    world - 1
                ));
            } else if control.contains_key(&h.rank) {
                reasons.push(format!(
                    "is started twice (also at {})",
                    control[&h.rank].addr
                ));
            } else {
                reasons.extend(fingerprint.differences("rank 0", &h.fingerprint, &peer));
                if let Peers::Table(a) = peers
                    && a[h.rank].to_string() != h.listen
                {
                    reasons.push(format!(
                        "listens on {} but rank 0's rank table gives it {}",
                        h.listen, a[h.rank]
                    ));
                }
            }
            if !reasons.is_empty() {
                let reason = reasons.join("; ");
                let _ = write_frame(&link.stream, &Control::Refused(reason.clone()));
                refused += 1;
                problem.get_or_insert(Error::Mismatch {
                    rank: h.rank.to_string(),
                    addr: if h.listen.is_empty() {
                        from.to_string()
                    } else {
                        h.listen.clone()
                    },
                    message: reason,
                });
                continue;
            }
            let addr = if h.listen.is_empty() {
                from.to_string()
            } else {
                h.listen.clone()
            };
            addresses[h.rank] = addr.clone();
            control.insert(
                h.rank,
                Link {
                    rank: h.rank,
                    addr,
                    stream: link.stream,
                },
            );
        }
        if let Some(e) = problem {
            let reason = format!("the run is refused: {e}");
            for l in control.values() {
                let _ = write_frame(&l.stream, &Control::Refused(reason.clone()));
            }
            return Err(e);
        }
        if control.len() + 1 < world {
            return Err(Error::Missing {
                ranks: (1..world).filter(|r| !control.contains_key(r)).collect(),
                listen: listener
                    .local_addr()
                    .map_or_else(|_| mine.to_string(), |a| a.to_string()),
                seconds: t.connect.as_secs(),
            });
        }
        for l in control.values() {
            write_frame(&l.stream, &Control::Table(addresses.clone()))
                .map_err(|e| l.failed(e, "the bootstrap", t.idle))?;
        }
        Ok(addresses)
    }

    /// The data connection this rank sends to `peer` on (`sending`) or
    /// receives from it on.
    pub fn link(&self, peer: usize, sending: bool) -> Result<&Link> {
        self.links.get(&(peer, sending)).ok_or_else(|| {
            Error::Internal(format!(
                "rank {} has no connection to rank {peer}",
                self.rank
            ))
        })
    }

    /// Sends `send` to one peer while receiving into `recv` from one peer
    /// (the same or another), concurrently so that neither side waits for
    /// the other; the received elements are added or copied in segments of
    /// `segment` elements (at least 1) as they arrive, so the additions
    /// overlap the transfer. `step` names the step in errors.
    pub fn exchange<'l>(
        &'l self,
        send: Option<(usize, &[f32])>,
        recv: Option<(usize, &mut [f32], Combine)>,
        scratch: &mut Vec<f32>,
        segment: usize,
        step: &dyn Fn() -> String,
    ) -> Result<()> {
        let idle = self.timeouts.idle;
        let out = match send {
            Some((p, data)) => Some((self.link(p, true)?, data)),
            None => None,
        };
        let inn = match recv {
            Some((p, data, c)) => Some((self.link(p, false)?, data, c)),
            None => None,
        };
        fn write<'a>((l, data): (&'a Link, &[f32])) -> Result<(), (&'a Link, io::Error)> {
            (&l.stream)
                .write_all(bytemuck::cast_slice(data))
                .map_err(|e| (l, e))
        }
        let read = |(l, data, c): (&'l Link, &mut [f32], Combine),
                    scratch: &mut Vec<f32>|
         -> Result<(), (&'l Link, io::Error)> {
            receive(&l.stream, data, c, scratch, segment).map_err(|e| (l, e))
        };
        let result = match (out, inn) {
            (None, None) => Ok(()),
            (Some(o), None) => write(o),
            (None, Some(i)) => read(i, scratch),
            (Some(o), Some(i)) if o.1.len() * 4 <= INLINE_BYTES => {
                write(o).and_then(|()| read(i, scratch))
            }
            (Some((ol, od)), Some((il, id, c))) if od.len() * 4 < THREAD_BYTES => Duplex {
                out: &ol.stream,
                src: bytemuck::cast_slice(od),
                inn: &il.stream,
                dst: id,
                combine: c,
                segment,
                idle,
            }
            .run(scratch)
            .map_err(|(sending, e)| (if sending { ol } else { il }, e)),
            (Some(o), Some(i)) => {
                let (ol, il) = (o.0, i.0);
                thread::scope(|s| {
                    let sender = s.spawn(move || write(o));
                    let got = read(i, scratch);
                    if got.is_err() {
                        // Unblock the sender: the run is over anyway.
                        let _ = ol.stream.shutdown(std::net::Shutdown::Both);
                    }
                    let sent = sender.join().unwrap_or_else(|_| {
                        Err((ol, io::Error::other("the sender thread panicked")))
                    });
                    if sent.is_err() {
                        let _ = il.stream.shutdown(std::net::Shutdown::Both);
                    }
                    got.and(sent)
                })
            }
        };
        result.map_err(|(l, e)| l.failed(e, &step(), idle))
    }

    /// Rank 0: tells every other rank why the run stops (best effort, so
    /// that they name the rank that failed rather than rank 0), and
    /// returns the reason.
    fn stop_all(&self, e: Error) -> Error {
        for l in self.control.values() {
            let _ = write_frame(&l.stream, &Control::Stop(e.to_string()));
        }
        e
    }

    /// Sends this rank's figures to rank 0 and returns rank 0's answer;
    /// on rank 0, gathers every rank's figures, combines them with
    /// `combine` (rank order) and sends the result to all.
    pub fn reduce_figures(
        &self,
        local: Vec<f64>,
        combine: &dyn Fn(&[Vec<f64>]) -> Vec<f64>,
        step: &str,
    ) -> Result<Vec<f64>> {
        let idle = self.timeouts.idle;
        if self.rank == 0 {
            let mut all = vec![local];
            for l in self.control.values() {
                let got =
                    read_frame(&l.stream).map_err(|e| self.stop_all(l.failed(e, step, idle)))?;
                match got {
                    Control::Local(v) => all.push(v.into_iter().map(f64::from_bits).collect()),
                    other => {
                        return Err(Error::Internal(format!(
                            "rank {} sent {other:?} in {step}",
                            l.rank
                        )));
                    }
                }
            }
            let global = combine(&all);
            for l in self.control.values() {
                let bits = global.iter().map(|x| x.to_bits()).collect();
                write_frame(&l.stream, &Control::Global(bits))
                    .map_err(|e| l.failed(e, step, idle))?;
            }
            Ok(global)
        } else {
            let l = &self.control[&0];
            let bits = local.iter().map(|x| x.to_bits()).collect();
            write_frame(&l.stream, &Control::Local(bits)).map_err(|e| l.failed(e, step, idle))?;
            match read_frame(&l.stream).map_err(|e| l.failed(e, step, idle))? {
                Control::Global(v) => Ok(v.into_iter().map(f64::from_bits).collect()),
                Control::Stop(reason) => Err(Error::Stopped {
                    addr: l.addr.clone(),
                    reason,
                }),
                other => Err(Error::Internal(format!("rank 0 sent {other:?} in {step}"))),
            }
        }
    }

    /// The step barrier: every rank reports step `index` done to rank 0;
    /// rank 0 waits for all, runs `between` (a controller reads counters
    /// here) and releases them.
    pub fn step_barrier(
        &self,
        index: usize,
        step: &str,
        between: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        let idle = self.timeouts.idle;
        if self.rank == 0 {
            for l in self.control.values() {
                let got =
                    read_frame(&l.stream).map_err(|e| self.stop_all(l.failed(e, step, idle)))?;
                match got {
                    Control::StepDone(i) if i == index => {}
                    other => {
                        return Err(Error::Internal(format!(
                            "rank {} sent {other:?} after {step}",
                            l.rank
                        )));
                    }
                }
            }
            between()?;
            for l in self.control.values() {
                write_frame(&l.stream, &Control::Go).map_err(|e| l.failed(e, step, idle))?;
            }
        } else {
            let l = &self.control[&0];
            write_frame(&l.stream, &Control::StepDone(index))
                .map_err(|e| l.failed(e, step, idle))?;
            // Rank 0's controller may take its time between steps.
            l.stream.set_read_timeout(None).ok();
            let answer = read_frame(&l.stream);
            l.stream.set_read_timeout(Some(idle)).ok();
            match answer.map_err(|e| l.failed(e, step, idle))? {
                Control::Go => between()?,
                Control::Stop(reason) => {
                    return Err(Error::Stopped {
                        addr: l.addr.clone(),
                        reason,
                    });
                }
                other => {
                    return Err(Error::Internal(format!(
                        "rank 0 sent {other:?} after {step}"
                    )));
                }
            }
        }
        Ok(())
    }
}
