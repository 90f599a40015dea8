//! Rank 0's side of the bootstrap: accepting every rank's control
//! connection by the deadline, checking its hello, refusing strangers
//! alone, and the address table every rank checks before it connects.

use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::time::Instant;

use super::{Fingerprint, Link, Peers, Timeouts, accept};
use crate::probe::auth::Secret;
use crate::probe::error::{Error, Result};
use crate::probe::wire::{self, Control, Hello, what, write_frame};

/// Accepts connections until one completes the handshake by `deadline`;
/// the others (strangers, peers that stall or speak another protocol) are
/// told why when they can be and recorded. `None` when the deadline
/// passed. Every handshake must end within the idle timeout, so a peer
/// that trickles bytes holds the listener no longer than that.
pub(super) fn next_peer(
    listener: &TcpListener,
    secret: Option<&Secret>,
    hello_limit: usize,
    deadline: Instant,
    t: Timeouts,
    refused: &mut Refusals,
) -> io::Result<Option<(Link, Hello, SocketAddr)>> {
    loop {
        let Some((s, from)) = accept(listener, deadline)? else {
            return Ok(None);
        };
        let Ok(link) = Link::new(usize::MAX, from.to_string(), s, t) else {
            continue;
        };
        let by = (Instant::now() + t.idle).min(deadline);
        match wire::accept(&link.stream, secret, hello_limit, by) {
            Ok(Ok(h)) => return Ok(Some((link, h, from))),
            Ok(Err(reason)) => refused.push(from, reason),
            Err(e) => refused.push(from, what(&e, t.idle)),
        }
    }
}

/// Rank 0's side of the bootstrap.
pub(super) struct Gather<'a> {
    pub(super) listener: &'a TcpListener,
    pub(super) mine: &'a str,
    pub(super) peers: &'a Peers,
    pub(super) fingerprint: &'a Fingerprint,
    pub(super) secret: Option<&'a Secret>,
    pub(super) hello_limit: usize,
    pub(super) t: Timeouts,
}

impl Gather<'_> {
    /// Accepts every other rank's control connection, checks its hello,
    /// and answers with the address table, or refuses them all, naming the
    /// first rank that runs with other settings. A connection that fails
    /// the handshake, claims a rank outside the world or one already
    /// taken is refused alone, and the run goes on without it.
    pub(super) fn gather(
        &self,
        control: &mut BTreeMap<usize, Link>,
        refused: &mut Refusals,
    ) -> Result<Vec<String>> {
        let (world, t) = (self.fingerprint.world, self.t);
        let mut addresses = vec![String::new(); world];
        addresses[0] = self.mine.to_string();
        let deadline = Instant::now() + t.connect;
        let mut problem: Option<Error> = None;
        let mut mismatched = 0;
        while control.len() + mismatched + 1 < world {
            let next = next_peer(
                self.listener,
                self.secret,
                self.hello_limit,
                deadline,
                t,
                refused,
            )
            .map_err(|source| Error::Listen {
                addr: self.mine.to_string(),
                source,
            })?;
            let Some((link, h, from)) = next else {
                break;
            };
            let alone = if !h.control {
                Some("opened a data connection to rank 0 during the bootstrap".to_string())
            } else if h.rank == 0 || h.rank >= world {
                Some(format!(
                    "claims rank {} of {} ranks, but rank 0 is this one and the run has ranks 0 to {}",
                    h.rank,
                    h.fingerprint.world,
                    world - 1
                ))
            } else if let Some(first) = control.get(&h.rank) {
                Some(format!(
                    "claims rank {}, which rank {} at {} has already",
                    h.rank, h.rank, first.addr
                ))
            } else {
                None
            };
            if let Some(reason) = alone {
                let _ = write_frame(&link.stream, &Control::Refused(reason.clone()));
                refused.push(from, reason);
                continue;
            }
            let peer = format!("rank {}", h.rank);
            let mut reasons = self
                .fingerprint
                .differences("rank 0", &h.fingerprint, &peer);
            if !is_host_port(&h.listen) {
                reasons.push(format!(
                    "gives the listening address `{}`, which is not host:port",
                    h.listen
                        .escape_debug()
                        .to_string()
                        .chars()
                        .take(80)
                        .collect::<String>()
                ));
            } else if let Peers::Table(a) = self.peers
                && a.get(h.rank).map(ToString::to_string).as_deref() != Some(&h.listen)
            {
                reasons.push(format!(
                    "listens on {} but rank 0's rank table gives it {}",
                    h.listen, a[h.rank]
                ));
            }
            let addr = if is_host_port(&h.listen) {
                h.listen.clone()
            } else {
                from.to_string()
            };
            if !reasons.is_empty() {
                let reason = reasons.join("; ");
                let _ = write_frame(&link.stream, &Control::Refused(reason.clone()));
                mismatched += 1;
                problem.get_or_insert(Error::Mismatch {
                    rank: h.rank.to_string(),
                    addr,
                    message: reason,
                });
                continue;
            }
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
            let reason = "the run is refused: not every rank connected".to_string();
            for l in control.values() {
                let _ = write_frame(&l.stream, &Control::Refused(reason.clone()));
            }
            return Err(Error::Missing {
                ranks: (1..world).filter(|r| !control.contains_key(r)).collect(),
                listen: self
                    .listener
                    .local_addr()
                    .map_or_else(|_| self.mine.to_string(), |a| a.to_string()),
                seconds: t.connect.as_secs(),
                refused: refused.list(),
            });
        }
        for l in control.values() {
            write_frame(&l.stream, &Control::Table(addresses.clone()))
                .map_err(|e| l.failed(e, "the bootstrap", t.idle))?;
        }
        Ok(addresses)
    }
}

/// Connections refused at the handshake that did not stop the run
/// (strangers, a second copy of a rank, a rank outside the world): kept to
/// explain a rank that never connected.
#[derive(Debug, Default)]
pub(super) struct Refusals {
    shown: Vec<String>,
    more: usize,
}

impl Refusals {
    /// Most refusals named in an error.
    const SHOWN: usize = 8;

    pub(super) fn push(&mut self, from: SocketAddr, reason: impl Into<String>) {
        if self.shown.len() < Self::SHOWN {
            self.shown.push(format!("{from}: {}", reason.into()));
        } else {
            self.more += 1;
        }
    }

    pub(super) fn list(&self) -> Vec<String> {
        let mut out = self.shown.clone();
        if self.more > 0 {
            out.push(format!("and {} more", self.more));
        }
        out
    }
}

/// Checks rank 0's address table: one `host:port` per rank, this rank's
/// the address it listens on.
pub(super) fn check_table(
    table: Vec<String>,
    world: usize,
    rank: usize,
    mine: &str,
) -> Result<Vec<String>, String> {
    if table.len() != world {
        return Err(format!(
            "sent an address table of {} ranks for a world of {world}",
            table.len()
        ));
    }
    if let Some((r, a)) = table.iter().enumerate().find(|(_, a)| !is_host_port(a)) {
        return Err(format!(
            "gave rank {r} the address `{}`, which is not host:port",
            a.escape_debug()
                .to_string()
                .chars()
                .take(80)
                .collect::<String>()
        ));
    }
    if rank != 0 && table[rank] != mine {
        return Err(format!(
            "gave this rank the address {}, but it listens on {mine}",
            table[rank]
        ));
    }
    Ok(table)
}

/// `host:port` or `[v6]:port` with a host of at most 255 characters.
fn is_host_port(a: &str) -> bool {
    a.len() <= 262
        && a.rsplit_once(':').is_some_and(|(h, p)| {
            !h.is_empty()
                && p.parse::<u16>().is_ok()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]%_".contains(&b))
        })
}
