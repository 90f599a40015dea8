//! The TCP mesh between ranks: set up once (listen, connect with bounded retries, a handshake that refuses mismatched peers), then reused by every step, iteration and size; framed control messages to rank 0; timeouts so a dead peer is named, never waited for.
//!
//! Every connection starts with [`MAGIC`] and a [`Hello`]; rank 0 compares
//! each peer's [`Fingerprint`] with its own and refuses any difference,
//! naming the peer and both values. Data connections carry raw f32 in the
//! machines' native byte order (the hello refuses a peer of the other
//! order); control connections (every rank to rank 0) carry length-prefixed
//! JSON [`Control`] messages.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::auth::Secret;
use super::error::{Error, Result};
use super::exchange::{Duplex, receive};
use super::schedule::Combine;
use super::wire::{
    self, Control, Hello, Opened, control_limit, endian, read_frame, what, write_frame,
};
pub use super::wire::{MAGIC, PROTOCOL_VERSION};

mod gather;

use gather::{Gather, Refusals, check_table, next_peer};

/// Sends up to this many bytes before receiving, without a sender thread:
/// both peers' bytes fit in the kernel's socket buffers.
const INLINE_BYTES: usize = 32 * 1024;

/// Sends at least this many bytes from a second thread while receiving
/// (both blocking); smaller exchanges run in one thread on non-blocking
/// sockets ([`duplex`]): a thread costs milliseconds to start on a busy
/// machine, while spinning on the sockets costs throughput on large ones
/// (measured on loopback, docs/probe.md).
const THREAD_BYTES: usize = 4 << 20;

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

    /// The error for a message of this link's peer that breaks the
    /// protocol in `step`.
    pub fn protocol(&self, step: &str, message: impl Into<String>) -> Error {
        Error::Protocol {
            rank: self.rank,
            addr: self.addr.clone(),
            step: step.to_string(),
            message: message.into(),
        }
    }

    /// The connecting side's handshake ([`wire::open`]).
    fn open(
        &self,
        hello: Hello,
        secret: Option<&Secret>,
        limit: usize,
        deadline: Instant,
        step: &str,
        t: Timeouts,
    ) -> Result<()> {
        match wire::open(&self.stream, hello, secret, limit, deadline)
            .map_err(|e| self.failed(e, step, t.idle))?
        {
            Ok(()) => Ok(()),
            Err(Opened::Refused(reason)) => Err(Error::Refused {
                rank: self.rank,
                addr: self.addr.clone(),
                reason,
            }),
            Err(Opened::NotProven) => Err(Error::Unauthenticated {
                rank: self.rank,
                addr: self.addr.clone(),
                step: step.to_string(),
            }),
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
    /// With `secret`, every connection is authenticated both ways
    /// ([`super::auth`]); a connection that does not prove it, or that
    /// claims a rank the run cannot give it, is refused without stopping
    /// the run.
    pub fn establish(
        rank: usize,
        peers: &Peers,
        fingerprint: &Fingerprint,
        data_peers: &BTreeSet<usize>,
        secret: Option<&Secret>,
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
            auth: false,
            nonce: String::new(),
        };
        let hello_limit = wire::hello_limit(&hello(true, &"f".repeat(262), 0));
        let limit = control_limit(world);
        let no_rank = |r: usize| {
            Error::parameter(
                "world-size",
                format!("rank {r}, but the table has no address for it"),
            )
        };
        let mut refused = Refusals::default();
        let mut control = BTreeMap::new();
        let (listener, addresses) = if rank == 0 {
            let bind = match peers {
                Peers::Table(a) => *a.first().ok_or_else(|| no_rank(0))?,
                // Rank 0 listens on the address it was given, no other.
                Peers::Master(m) => m
                    .to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .ok_or_else(|| {
                        Error::parameter(
                            "master-addr",
                            format!("`{m}` is not an address this rank can resolve"),
                        )
                    })?,
            };
            let listener = listen(bind)?;
            let mine = match peers {
                Peers::Table(_) => bind.to_string(),
                Peers::Master(m) => m.clone(),
            };
            let ctx = Gather {
                listener: &listener,
                mine: &mine,
                peers,
                fingerprint,
                secret,
                hello_limit,
                t,
            };
            let addresses = ctx.gather(&mut control, &mut refused)?;
            (listener, addresses)
        } else {
            let master = match peers {
                Peers::Table(a) => a.first().ok_or_else(|| no_rank(0))?.to_string(),
                Peers::Master(m) => m.clone(),
            };
            let s = connect(&master, 0, t)?;
            let listener = match peers {
                Peers::Table(a) => listen(*a.get(rank).ok_or_else(|| no_rank(rank))?)?,
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
            // Rank 0 answers when every rank has said hello: wait as long
            // as the others may take to connect.
            let deadline = Instant::now() + t.connect + t.idle;
            link.open(hello(true, &mine, 0), secret, limit, deadline, boot, t)?;
            let answer = read_frame(&link.stream, limit, Some(deadline))
                .map_err(|e| link.failed(e, boot, t.idle))?;
            let addresses = match answer {
                Control::Table(a) => {
                    check_table(a, world, rank, &mine).map_err(|m| link.protocol(boot, m))?
                }
                Control::Refused(reason) => {
                    return Err(Error::Refused {
                        rank: 0,
                        addr: link.addr.clone(),
                        reason,
                    });
                }
                other => {
                    return Err(
                        link.protocol(boot, format!("answered the hello with {}", other.kind()))
                    );
                }
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
            let addr = mesh.addresses.get(p).ok_or_else(|| no_rank(p))?.clone();
            let s = connect(&addr, p, t)?;
            let link = Link::new(p, addr, s, t)
                .map_err(|e| Error::Internal(format!("socket options: {e}")))?;
            let deadline = Instant::now() + t.connect + t.idle;
            link.open(hello(false, "", lane), secret, limit, deadline, boot, t)?;
            match read_frame(&link.stream, limit, Some(deadline))
                .map_err(|e| link.failed(e, boot, t.idle))?
            {
                Control::Welcome => {}
                Control::Refused(reason) => {
                    return Err(Error::Refused {
                        rank: p,
                        addr: link.addr,
                        reason,
                    });
                }
                other => {
                    return Err(
                        link.protocol(boot, format!("answered the hello with {}", other.kind()))
                    );
                }
            }
            mesh.links.insert((p, lane == 0), link);
        }
        let mut waiting: BTreeSet<(usize, u8)> = data_peers
            .iter()
            .filter(|&&p| p > rank)
            .flat_map(|&p| [(p, 0u8), (p, 1)])
            .collect();
        let deadline = Instant::now() + t.connect;
        let here = mesh.addresses.get(rank).cloned().unwrap_or_default();
        while !waiting.is_empty() {
            let next = next_peer(&listener, secret, hello_limit, deadline, t, &mut refused)
                .map_err(|source| Error::Listen {
                    addr: here.clone(),
                    source,
                })?;
            let Some((link, h, from)) = next else {
                return Err(Error::Missing {
                    ranks: waiting
                        .iter()
                        .map(|w| w.0)
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                    listen: here,
                    seconds: t.connect.as_secs(),
                    refused: refused.list(),
                });
            };
            // A connection that cannot be one the run waits for is refused
            // alone; the peers that belong here keep being waited for.
            let alone = if h.control && rank == 0 {
                Some(format!("claims rank {} after the bootstrap ended", h.rank))
            } else if h.control {
                Some(format!(
                    "opened a control connection to rank {rank}; only rank 0 takes those"
                ))
            } else if h.rank >= world {
                Some(format!(
                    "claims rank {} but the world has ranks 0 to {}",
                    h.rank,
                    world - 1
                ))
            } else if h.rank <= rank || !data_peers.contains(&h.rank) {
                Some(format!(
                    "claims rank {}, which opens no data connection to rank {rank}",
                    h.rank
                ))
            } else if !waiting.contains(&(h.rank, h.lane)) {
                Some(format!(
                    "claims lane {} of rank {}, which is open already",
                    h.lane, h.rank
                ))
            } else {
                None
            };
            if let Some(reason) = alone {
                let _ = write_frame(&link.stream, &Control::Refused(reason.clone()));
                refused.push(from, format!("rank {}: {reason}", h.rank));
                continue;
            }
            let d = fingerprint.differences(
                &format!("rank {rank}"),
                &h.fingerprint,
                &format!("rank {}", h.rank),
            );
            if !d.is_empty() {
                let reason = d.join("; ");
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

    /// The control link to rank 0 (every rank but 0 has one).
    fn to_master(&self, step: &str) -> Result<&Link> {
        self.control.get(&0).ok_or_else(|| {
            Error::Internal(format!(
                "rank {} has no connection to rank 0 in {step}",
                self.rank
            ))
        })
    }

    /// Sends this rank's figures to rank 0 and returns rank 0's answer;
    /// on rank 0, gathers every rank's figures, combines them with
    /// `combine` (rank order) and sends the result to all. Every rank's
    /// figures must arrive whole within the idle timeout, as many as this
    /// rank's, each a finite number of 0 or more or -1 (none); anything else
    /// stops the run, naming the rank, so that no figure is reported that
    /// was not measured.
    pub fn reduce_figures(
        &self,
        local: Vec<f64>,
        combine: &dyn Fn(&[Vec<f64>]) -> Vec<f64>,
        step: &str,
    ) -> Result<Vec<f64>> {
        let idle = self.timeouts.idle;
        let limit = control_limit(self.world);
        let n = local.len();
        if self.rank == 0 {
            let mut all = vec![local];
            for l in self.control.values() {
                let got = read_frame(&l.stream, limit, Some(Instant::now() + idle))
                    .map_err(|e| self.stop_all(l.failed(e, step, idle)))?;
                match got {
                    Control::Local(v) => {
                        all.push(figures(v, n).map_err(|m| self.stop_all(l.protocol(step, m)))?)
                    }
                    other => {
                        return Err(self.stop_all(l.protocol(
                            step,
                            format!("sent {} instead of its figures", other.kind()),
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
            let l = self.to_master(step)?;
            let bits = local.iter().map(|x| x.to_bits()).collect();
            write_frame(&l.stream, &Control::Local(bits)).map_err(|e| l.failed(e, step, idle))?;
            match read_frame(&l.stream, limit, Some(Instant::now() + idle))
                .map_err(|e| l.failed(e, step, idle))?
            {
                Control::Global(v) => figures(v, n).map_err(|m| l.protocol(step, m)),
                Control::Stop(reason) => Err(Error::Stopped {
                    addr: l.addr.clone(),
                    reason,
                }),
                other => Err(l.protocol(
                    step,
                    format!(
                        "sent {} instead of the figures over all ranks",
                        other.kind()
                    ),
                )),
            }
        }
    }

    /// The step barrier: every rank reports step `index` done to rank 0;
    /// rank 0 waits for all (each within the idle timeout), runs `between`
    /// (a controller reads counters here) and releases them.
    pub fn step_barrier(
        &self,
        index: usize,
        step: &str,
        between: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        let idle = self.timeouts.idle;
        let limit = control_limit(self.world);
        if self.rank == 0 {
            for l in self.control.values() {
                let got = read_frame(&l.stream, limit, Some(Instant::now() + idle))
                    .map_err(|e| self.stop_all(l.failed(e, step, idle)))?;
                match got {
                    Control::StepDone(i) if i == index => {}
                    Control::StepDone(i) => {
                        return Err(self.stop_all(l.protocol(
                            step,
                            format!("reported step {i} done at the barrier of step {index}"),
                        )));
                    }
                    other => {
                        return Err(self.stop_all(l.protocol(
                            step,
                            format!("sent {} at the step barrier", other.kind()),
                        )));
                    }
                }
            }
            between()?;
            for l in self.control.values() {
                write_frame(&l.stream, &Control::Go).map_err(|e| l.failed(e, step, idle))?;
            }
        } else {
            let l = self.to_master(step)?;
            write_frame(&l.stream, &Control::StepDone(index))
                .map_err(|e| l.failed(e, step, idle))?;
            // Rank 0's controller may take its time between steps.
            match read_frame(&l.stream, limit, None).map_err(|e| l.failed(e, step, idle))? {
                Control::Go => between()?,
                Control::Stop(reason) => {
                    return Err(Error::Stopped {
                        addr: l.addr.clone(),
                        reason,
                    });
                }
                other => {
                    return Err(
                        l.protocol(step, format!("sent {} at the step barrier", other.kind()))
                    );
                }
            }
        }
        Ok(())
    }
}

/// Figures as they came over the wire (f64 bits): `n` of them, each
/// finite and 0 or more, or -1 for none.
fn figures(bits: Vec<u64>, n: usize) -> Result<Vec<f64>, String> {
    if bits.len() != n {
        return Err(format!("sent {} figures where {n} were due", bits.len()));
    }
    let v: Vec<f64> = bits.into_iter().map(f64::from_bits).collect();
    if let Some(x) = v
        .iter()
        .find(|x| !(x.is_finite() && (**x >= 0.0 || **x == -1.0)))
    {
        return Err(format!(
            "sent the figure {x}, which is no measurement (a finite number of 0 or more, or -1 for none)"
        ));
    }
    Ok(v)
}
