//! Moving one step's bytes over the sockets: a receive that sums segment by segment as they arrive, and a send and a receive at once in one thread on non-blocking sockets.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use super::schedule::Combine;

/// Reads `data.len()` f32 from `stream`: straight into `data` for
/// [`Combine::Replace`], through `scratch` segment by segment for
/// [`Combine::Sum`].
pub(super) fn receive(
    mut stream: &TcpStream,
    data: &mut [f32],
    combine: Combine,
    scratch: &mut Vec<f32>,
    segment: usize,
) -> io::Result<()> {
    match combine {
        // Reading in segments keeps each copy out of the socket small
        // enough to stay in the cache (measured: faster than one large
        // read, docs/probe.md).
        Combine::Replace => {
            for part in data.chunks_mut(segment.max(1)) {
                stream.read_exact(bytemuck::cast_slice_mut(part))?;
            }
            Ok(())
        }
        Combine::Sum => {
            let segment = segment.max(1).min(data.len().max(1));
            if scratch.len() < segment {
                scratch.resize(segment, 0.0);
            }
            for part in data.chunks_mut(segment) {
                let buf = &mut scratch[..part.len()];
                stream.read_exact(bytemuck::cast_slice_mut(buf))?;
                for (x, y) in part.iter_mut().zip(buf.iter()) {
                    *x += *y;
                }
            }
            Ok(())
        }
    }
}

/// A send on `out` and a receive from `inn` at once, in one thread: both
/// sockets non-blocking, each turn writes what the kernel takes and reads
/// what has arrived (summing whole segments as they complete). When
/// neither moved it yields the core a few times, then waits in `poll(2)`
/// for either socket: spinning alone starves the kernel and the other
/// ranks when many ranks share few cores (the lab runs 64 on 2; measured
/// 2.5 times slower with spinning, docs/lab.md). A thread per step costs
/// milliseconds on a busy machine (measured), this loop does not.
#[derive(Debug)]
pub(super) struct Duplex<'a> {
    /// Where `src` goes.
    pub out: &'a TcpStream,
    /// The bytes to send.
    pub src: &'a [u8],
    /// Where `dst`'s elements come from.
    pub inn: &'a TcpStream,
    /// The elements received.
    pub dst: &'a mut [f32],
    /// Sum them in, or take them.
    pub combine: Combine,
    /// Elements summed at a time (at least 1).
    pub segment: usize,
    /// Give up after this long without a byte either way.
    pub idle: Duration,
}

impl Duplex<'_> {
    /// Runs both transfers to the end; on failure, says whether the
    /// sending side (true) or the receiving side failed, and how.
    pub(super) fn run(mut self, scratch: &mut Vec<f32>) -> Result<(), (bool, io::Error)> {
        let set = |on: bool| -> Result<(), (bool, io::Error)> {
            self.out.set_nonblocking(on).map_err(|e| (true, e))?;
            self.inn.set_nonblocking(on).map_err(|e| (false, e))
        };
        set(true)?;
        let result = self.pump(scratch);
        let (out, inn) = (self.out, self.inn);
        let restored = out
            .set_nonblocking(false)
            .map_err(|e| (true, e))
            .and_then(|()| inn.set_nonblocking(false).map_err(|e| (false, e)));
        result.and(restored)
    }

    fn pump(&mut self, scratch: &mut Vec<f32>) -> Result<(), (bool, io::Error)> {
        let segment = self.segment.max(1).min(self.dst.len().max(1));
        if scratch.len() < segment {
            scratch.resize(segment, 0.0);
        }
        let busy = |e: &io::Error| {
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            )
        };
        let mut sent = 0;
        // Received elements summed or placed, and bytes of the segment in
        // flight.
        let (mut done, mut partial) = (0, 0);
        let mut last = Instant::now();
        let mut idle_turns = 0u32;
        while sent < self.src.len() || done < self.dst.len() {
            let mut moved = false;
            if sent < self.src.len() {
                match self.out.write(&self.src[sent..]) {
                    Ok(n) => {
                        sent += n;
                        moved = true;
                    }
                    Err(e) if busy(&e) => {}
                    Err(e) => return Err((true, e)),
                }
            }
            if done < self.dst.len() {
                let len = segment.min(self.dst.len() - done);
                let target: &mut [u8] = match self.combine {
                    Combine::Sum => bytemuck::cast_slice_mut(&mut scratch[..len]),
                    Combine::Replace => bytemuck::cast_slice_mut(&mut self.dst[done..done + len]),
                };
                match self.inn.read(&mut target[partial..]) {
                    Ok(0) => return Err((false, io::ErrorKind::UnexpectedEof.into())),
                    Ok(n) => {
                        partial += n;
                        moved = true;
                        if partial == len * 4 {
                            if self.combine == Combine::Sum {
                                let part = &mut self.dst[done..done + len];
                                for (x, y) in part.iter_mut().zip(&scratch[..len]) {
                                    *x += *y;
                                }
                            }
                            done += len;
                            partial = 0;
                        }
                    }
                    Err(e) if busy(&e) => {}
                    Err(e) => return Err((false, e)),
                }
            }
            if moved {
                last = Instant::now();
                idle_turns = 0;
            } else if last.elapsed() > self.idle {
                return Err((done >= self.dst.len(), io::ErrorKind::TimedOut.into()));
            } else if idle_turns < SPIN_TURNS {
                idle_turns += 1;
                thread::yield_now();
            } else {
                self.wait(sent < self.src.len(), done < self.dst.len())
                    .map_err(|e| (false, e))?;
            }
        }
        Ok(())
    }

    /// Waits up to 50 ms until `out` can take bytes (when `sending`) or
    /// `inn` has some (when `receiving`).
    fn wait(&self, sending: bool, receiving: bool) -> io::Result<()> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = Vec::with_capacity(2);
        if sending {
            fds.push(PollFd::new(self.out, PollFlags::OUT));
        }
        if receiving {
            fds.push(PollFd::new(self.inn, PollFlags::IN));
        }
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        match poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Turns without progress spent yielding before waiting in `poll(2)`.
const SPIN_TURNS: u32 = 16;
